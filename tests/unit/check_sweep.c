/* tests/unit/check_sweep.c: sweep/ without a server: the verdict per condition
 * (pv_sweep_judge) from jobs filled by hand. The expected figures were computed apart from the
 * code under test (python3's statistics module, Student's t from mpmath's incomplete beta),
 * and each derivation is written next to its case. */
#include <check.h>

#include "tests/unit/unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep.h"
#include "util/err.h"

/* the 97.5% quantiles used below: Student's t with 2 and 3 degrees of freedom (a t table:
 * 4.303, 3.182) and the normal's (1.960) */
#define T2 4.302652729749462
#define T3 3.182446305284263
#define Z  1.959963984540054

/* a within a millionth of b (relative; absolute near 0) */
#define near(a, b) near_at(#a, (a), (b))

static void near_at(const char *what, double a, double b)
{
	ck_assert_msg(fabs(a - b) <= 1e-6 * fmax(1, fabs(b)), "%s = %.12g, expected %.12g", what, a,
		      b);
}

static struct pv_sweep_result *result(const char *const *labels, size_t nsettings)
{
	struct pv_sweep_result *res = calloc(1, sizeof(*res));

	ck_assert_ptr_nonnull(res);
	ck_assert_ptr_nonnull(res->jobs = calloc(64, sizeof(*res->jobs)));
	for (size_t i = 0; i < nsettings; i++)
		snprintf(res->settings[i].label, sizeof(res->settings[i].label), "%s", labels[i]);
	res->nsettings = nsettings;
	return res;
}

static void job(struct pv_sweep_result *res, unsigned cond, unsigned round, int code, double value,
		double noise, double cpu)
{
	struct pv_sweep_job *j;

	ck_assert_uint_lt(res->njobs, 64);
	j = &res->jobs[res->njobs++];
	j->cond = cond;
	j->round = round;
	j->code = code;
	j->value = value;
	j->noise = noise;
	j->cpu_per_file = cpu;
	snprintf(j->id, sizeof(j->id), "s-%u-%u", cond, round);
}

static void release(struct pv_sweep_result *res)
{
	pv_sweep_release(res);
	free(res);
}

/* Four settings against the baseline, interleaved round after round as pv_sweep runs them:
 *
 * baseline  100, 110, 120 (noise 1, none, 1); and two jobs left out: one that failed (its
 *           value 1000, its CPU 100) and one with no value (NAN)
 *           n 3, median 110, mean 110; the repeats' variance s^2 = (100 + 0 + 100) / 2 = 100
 *           is above the floor (the mean of the noises' squares: 1), so var = 100 / 3 and
 *           the t with 2 df: 110 -+ 4.302653 * sqrt(100 / 3) = [85.158623, 134.841377];
 *           CPU 5, 9, 7: median 7 (8 if the failed job's 100 counted)
 * c1        150, 160, 170, 200, no noise: n 4, median (160 + 170) / 2 = 165, mean 170,
 *           s^2 = (400 + 100 + 0 + 900) / 3 = 466.67, var 116.67, t with 3 df:
 *           170 -+ 3.182446 * sqrt(116.67) = [135.625651, 204.374349]; CPU 1, 4, 2, 3 (and
 *           a NAN): median 2.5. Against the baseline (Welch): d = 60, v = 33.33 + 116.67 =
 *           150, df = 150^2 / (33.33^2 / 2 + 116.67^2 / 3) = 4.418182, t = 2.675814:
 *           [27.228106, 92.771894], beyond
 * c2        111, 112, 113 with noise 6, 8, none: the floor is (36 + 64) / 2 = 50 (the mean
 *           over the jobs that have a noise), above s^2 = 1, so var = 50 / 3 and the normal:
 *           112 -+ 1.959964 * sqrt(50 / 3) = [103.998481, 120.001519]. Against the baseline:
 *           d = 2, v = 33.33 + 16.67 = 50, df from the baseline alone (the floor's is
 *           infinite) = 50^2 / (33.33^2 / 2) = 4.5, t = 2.658912: [-16.801350, 20.801350],
 *           not beyond
 * c3        1, 2, 30, no noise: median 2, mean 11, s^2 = (100 + 81 + 361) / 2 = 271, var
 *           90.33, t with 2 df: 11 - 4.302653 * 9.504 < 0, so lo is 0, hi 51.894068.
 *           Against the baseline: d = -99, v = 123.67, df = 123.67^2 / (33.33^2 / 2 +
 *           90.33^2 / 2) = 3.299122, t = 3.025278: [-132.642763, -65.357237], beyond (below)
 * c4        no value: one job failed, one gave NAN: n 0, every figure NAN, not beyond */
START_TEST(test_judge)
{
	static const char *const labels[] = {"case sensitive=yes", "socket options=TCP_NODELAY",
					     "strict sync=no", "aio read size=1"};
	static const double base[] = {100, 110, 120}, c1[] = {150, 160, 170, 200},
			    c2[] = {111, 112, 113}, c3[] = {1, 2, 30};
	static const double bnoise[] = {1, NAN, 1}, c2noise[] = {6, 8, NAN}, bcpu[] = {5, 9, 7},
			    c1cpu[] = {1, 4, 2, 3};
	struct pv_sweep_result *res = result(labels, 4);
	const struct pv_sweep_cond *k = res->conds;

	for (unsigned r = 0; r < 4; r++) {
		if (r < 3)
			job(res, 0, r + 1, PV_OK, base[r], bnoise[r], bcpu[r]);
		job(res, 1, r + 1, PV_OK, c1[r], NAN, c1cpu[r]);
		if (r < 3) {
			job(res, 2, r + 1, PV_OK, c2[r], c2noise[r], NAN);
			job(res, 3, r + 1, PV_OK, c3[r], NAN, NAN);
		}
	}
	job(res, 0, 4, PV_EREMOTE, 1000, 1, 100); /* failed: left out, value and CPU */
	job(res, 0, 5, PV_OK, NAN, 1, 3);	  /* no value: left out */
	job(res, 1, 5, PV_OK, NAN, NAN, NAN);
	job(res, 4, 1, PV_EFAIL, 5, 1, 1);
	job(res, 4, 2, PV_OK, NAN, NAN, NAN);

	pv_sweep_judge(res);
	ck_assert_uint_eq(res->nconds, 5);
	ck_assert_str_eq(k[0].label, "baseline");
	for (size_t c = 1; c < 5; c++)
		ck_assert_str_eq(k[c].label, labels[c - 1]);

	/* the baseline: t with 2 df; no difference with itself */
	ck_assert_uint_eq(k[0].n, 3);
	near(k[0].median, 110);
	near(k[0].lo, 110 - T2 * sqrt(100.0 / 3)); /* 85.158623 */
	near(k[0].hi, 134.841377117503);
	near(k[0].cpu_per_file, 7);
	ck_assert(isnan(k[0].diff) && isnan(k[0].dlo) && isnan(k[0].dhi));
	ck_assert(!k[0].beyond);

	/* c1: an even count, t with 3 df, beyond */
	ck_assert_uint_eq(k[1].n, 4);
	near(k[1].median, 165);
	near(k[1].lo, 170 - T3 * sqrt(1400.0 / 3 / 4)); /* 135.625651 */
	near(k[1].hi, 204.374348818583);
	near(k[1].cpu_per_file, 2.5);
	near(k[1].diff, 60);
	near(k[1].dlo, 27.2281060766043);
	near(k[1].dhi, 92.7718939233957);
	ck_assert(k[1].beyond);

	/* c2: the floor of the jobs' own noise, the normal; its difference straddles 0 */
	ck_assert_uint_eq(k[2].n, 3);
	near(k[2].median, 112);
	near(k[2].lo, 112 - Z * sqrt(50.0 / 3)); /* 103.998481 */
	near(k[2].hi, 120.001519460592);
	ck_assert(isnan(k[2].cpu_per_file));
	near(k[2].diff, 2);
	near(k[2].dlo, -16.8013495128887);
	near(k[2].dhi, 20.8013495128887);
	ck_assert(!k[2].beyond);

	/* c3: lo held at 0; beyond, below the baseline */
	ck_assert_uint_eq(k[3].n, 3);
	near(k[3].median, 2);
	ck_assert(k[3].lo == 0);
	near(k[3].hi, 11 + T2 * sqrt(271.0 / 3)); /* 51.894068 */
	near(k[3].diff, -99);
	near(k[3].dlo, -132.642762782583);
	near(k[3].dhi, -65.3572372174170);
	ck_assert(k[3].beyond);

	/* c4: nothing to judge */
	ck_assert_uint_eq(k[4].n, 0);
	ck_assert(isnan(k[4].median) && isnan(k[4].lo) && isnan(k[4].hi));
	ck_assert(isnan(k[4].diff) && isnan(k[4].dlo) && isnan(k[4].dhi));
	ck_assert(isnan(k[4].cpu_per_file));
	ck_assert(!k[4].beyond);

	/* judged again (pv_sweep calls it once, a reader may again): the same figures */
	pv_sweep_judge(res);
	ck_assert_uint_eq(res->nconds, 5);
	near(k[1].dlo, 27.2281060766043);
	ck_assert(k[1].beyond && !k[2].beyond && k[3].beyond && !k[4].beyond);
	release(res);
}
END_TEST

/* One repeat each and no noise of their own: nothing says how much of a difference is noise,
 * so there is no verdict (not "beyond" on a difference of 20 with no interval). With its own
 * noise (4: var 16, the baseline's 0, df infinite both), a single repeat is judged on it:
 * 20 -+ 1.959964 * 4 = [12.160144, 27.839856], beyond; and so on the baseline's noise. */
START_TEST(test_judge_single)
{
	static const char *const labels[] = {"strict locking=no", "oplocks=no"};
	struct pv_sweep_result *res = result(labels, 2);
	const struct pv_sweep_cond *k = res->conds;

	job(res, 0, 1, PV_OK, 100, NAN, NAN);
	job(res, 1, 1, PV_OK, 120, NAN, NAN);
	job(res, 2, 1, PV_OK, 120, 4, NAN);
	pv_sweep_judge(res);
	ck_assert_uint_eq(res->nconds, 3);
	ck_assert_uint_eq(k[0].n, 1);
	near(k[0].median, 100);
	near(k[0].lo, 100); /* no noise: the interval is the value */
	near(k[0].hi, 100);
	ck_assert_uint_eq(k[1].n, 1);
	near(k[1].median, 120);
	ck_assert(isnan(k[1].diff) && isnan(k[1].dlo) && isnan(k[1].dhi));
	ck_assert(!k[1].beyond);
	near(k[2].lo, 120 - Z * 4);
	near(k[2].hi, 120 + Z * 4);
	near(k[2].diff, 20);
	near(k[2].dlo, 20 - Z * 4);
	near(k[2].dhi, 20 + Z * 4);
	ck_assert(k[2].beyond);
	release(res);

	/* the other way round: the baseline's own noise (4) judges a setting that has none */
	res = result(labels, 1);
	k = res->conds;
	job(res, 0, 1, PV_OK, 100, 4, NAN);
	job(res, 1, 1, PV_OK, 120, NAN, NAN);
	pv_sweep_judge(res);
	near(k[0].lo, 100 - Z * 4);
	near(k[1].lo, 120); /* its own interval: none */
	near(k[1].hi, 120);
	near(k[1].diff, 20);
	near(k[1].dlo, 20 - Z * 4);
	near(k[1].dhi, 20 + Z * 4);
	ck_assert(k[1].beyond);
	release(res);
}
END_TEST

/* No baseline value at all (every baseline job failed): a setting's own figures stand, with
 * no difference. */
START_TEST(test_judge_no_baseline)
{
	static const char *const labels[] = {"oplocks=no"};
	struct pv_sweep_result *res = result(labels, 1);
	const struct pv_sweep_cond *k = res->conds;

	for (unsigned r = 1; r <= 2; r++) {
		job(res, 0, r, PV_EREMOTE, 50, 1, 1);
		job(res, 1, r, PV_OK, 10 * r, NAN, NAN);
	}
	pv_sweep_judge(res);
	ck_assert_uint_eq(k[0].n, 0);
	ck_assert(isnan(k[0].median));
	ck_assert_uint_eq(k[1].n, 2);
	near(k[1].median, 15);
	ck_assert(isnan(k[1].diff) && !k[1].beyond);
	release(res);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, test_judge);
	tcase_add_test(tc, test_judge_single);
	tcase_add_test(tc, test_judge_no_baseline);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
