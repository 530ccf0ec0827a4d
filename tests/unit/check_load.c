/* tests/unit/check_load.c: the pure parts of the built-in load driver (load/): the scenario
 * table and the users' schedules, the latency histograms, counting, steps and the answer, the
 * figures line (round trip and refusals), and the results: load.txt and the CSVs to the byte,
 * load.json read back, load.svg checked for well-formed XML with one marker per step and
 * series.
 *
 * PV_LOAD_SAMPLES=DIR build/unit/check_load writes the fixture's results into DIR, to look at
 * (load.svg opens in a browser) or to check with other tools (xmllint --noout DIR/load.svg). */
#include <check.h>

#include "tests/unit/alloc.h"
#include "tests/unit/unit.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"
#include "load/copy.h"
#include "load/line.h"
#include "load/model.h"
#include "load/proto.h"
#include "load/answer.h"
#include "load/report.h"
#include "load/summary.h"
#include "util/err.h"

/* ---- the model ---- */

START_TEST(table)
{
	struct pv_playbook_workload c;
	static const double weights[] = {15, 150, 40, 7, 15, 50, 15, 5, 15, 7, 7, 5, 0};
	static const double limits[] = {2, 1, 2, 3, 3, 1, 2, 1, 1, 1, 2, 5, 10};
	double sum = 0;

	pv_playbook_workload_defaults(&c);
	ck_assert_uint_eq(c.rate, 331);
	ck_assert(c.late == 1 && c.overload == 1 && c.interval == 1 && c.seed == 1);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		ck_assert(c.kind[k].weight == weights[k]);
		ck_assert(c.kind[k].limit == limits[k]);
		ck_assert_int_eq(pv_playbook_workload_kind_of(pv_playbook_workload_names[k]), k);
		sum += c.kind[k].weight;
	}
	ck_assert(sum == 331); /* FSCT's weights are per user-hour at its rate */
	ck_assert_ptr_null(pv_playbook_workload_names[PV_PLAYBOOK_WORKLOAD_KINDS]);
	ck_assert_str_eq(pv_playbook_workload_names[PV_PLAYBOOK_WORKLOAD_BROWSE], "browse");
	ck_assert_str_eq(pv_playbook_workload_names[PV_PLAYBOOK_WORKLOAD_READ_FOLDER],
			 "read_folder");
	ck_assert_int_eq(pv_playbook_workload_kind_of("Browse"), -1);
	ck_assert_int_eq(pv_playbook_workload_kind_of(""), -1);
}
END_TEST

/* The reference implementation's first outputs from the state {1, 2, 3, 4} (computed apart,
 * in Python, from the published algorithm). */
START_TEST(rng_vectors)
{
	struct pv_load_rng r = {{1, 2, 3, 4}};
	static const uint64_t want[] = {11520u,
					0u,
					1509978240u,
					1215971899390074240u,
					1216172134540287360u,
					607988272756665600u};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_uint_eq(pv_load_rng_next(&r), want[i]);
	for (int i = 0; i < 1000; i++) {
		double u = pv_load_rng_unit(&r);

		ck_assert(u >= 0 && u < 1);
	}
}
END_TEST

/* The seed is HMAC-SHA256 keyed with the seed (8 bytes, little-endian) of "<client>\0<user>"
 * (the expected state computed apart, in Python). */
START_TEST(sched_seed)
{
	struct pv_playbook_workload c;
	struct pv_load_sched s;

	pv_playbook_workload_defaults(&c);
	pv_load_sched_init(&s, &c, "cli1", 1);
	ck_assert_uint_eq(s.rng.s[0], 0x87e30bc64bf9dd78u);
	ck_assert_uint_eq(s.rng.s[1], 0x7a08af9b21f3fddau);
	ck_assert_uint_eq(s.rng.s[2], 0xd061f7d115e01d7du);
	ck_assert_uint_eq(s.rng.s[3], 0x79c10b2e10aafe67u);
	ck_assert(fabs(s.mean - 3600.0 / 331) < 1e-12);
}
END_TEST

/* 200,000 starts of one user with the default settings: the mean gap within 1% of 3600/331 s
 * and each kind's share within 5% (relative) of its weight's share. Exact for this seed: the
 * schedule is deterministic. */
START_TEST(sched_shares)
{
	enum { N = 200000 };
	struct pv_playbook_workload c;
	struct pv_load_sched s;
	unsigned long count[PV_PLAYBOOK_WORKLOAD_KINDS] = {0};
	double total = 0, gap;
	enum pv_playbook_workload_kind k;

	pv_playbook_workload_defaults(&c);
	pv_load_sched_init(&s, &c, "cli1", 1);
	for (int i = 0; i < N; i++) {
		pv_load_next(&s, &gap, &k);
		ck_assert(gap >= 0 && isfinite(gap));
		ck_assert_int_lt(k, PV_PLAYBOOK_WORKLOAD_KINDS);
		total += gap;
		count[k]++;
	}
	ck_assert_msg(fabs(total / N / (3600.0 / 331) - 1) < 0.01, "mean gap %.4f s", total / N);
	for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_KINDS; j++) {
		double want = c.kind[j].weight / 331 * N;

		if (!want) { /* learned: only with load.workload */
			ck_assert_uint_eq(count[j], 0);
			continue;
		}
		ck_assert_msg(fabs(count[j] / want - 1) < 0.05, "%s: %lu of %d, expected %.0f",
			      pv_playbook_workload_names[j], count[j], N, want);
	}
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The ops loop's batches: a loop of 16 users or more waits after a turn of fewer than 4
 * answers, 4 us a user from 100 to 250 us; not after none (a timeout) nor with fewer users
 * (they would idle the server) */
/* A learned size drawn to its bucket's mean: a bucket whose sizes were all 64 KiB gives 64 KiB
 * each time; without a mean, evenly within the bucket (its mean 1.5 times its bottom); a mean
 * between, kept; none over the most the caller takes. */
START_TEST(size_draw)
{
	double cum[PV_PLAYBOOK_WORKLOAD_SIZE_BINS] = {0},
	       mean[PV_PLAYBOOK_WORKLOAD_SIZE_BINS] = {0};
	struct pv_load_rng g;
	double sum;

	for (int k = 17; k < PV_PLAYBOOK_WORKLOAD_SIZE_BINS; k++)
		cum[k] = 100; /* every size in [64 KiB, 128 KiB) */
	for (int m = 0; m < 3; m++) {
		mean[17] = m == 0 ? 65536 : m == 1 ? 0 : 80000;
		g = (struct pv_load_rng){{1, 2, 3, 7}};
		sum = 0;
		for (int i = 0; i < 20000; i++) {
			uint32_t v = pv_load_size_draw(cum, mean, 1u << 20, &g);

			ck_assert(v >= 65536 && v < 131072);
			if (m == 0)
				ck_assert_uint_eq(v, 65536);
			sum += v;
		}
		ck_assert_double_eq_tol(sum / 20000, m == 1 ? 98304 : mean[17],
					(m == 1 ? 98304 : mean[17]) * 0.01);
	}
	g = (struct pv_load_rng){{1, 2, 3, 7}};
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_le(pv_load_size_draw(cum, NULL, 70000, &g), 70000);
}
END_TEST

START_TEST(ops_batch)
{
	ck_assert_uint_eq(pv_load_ops_batch_us(16, 3), 100);
	ck_assert_uint_eq(pv_load_ops_batch_us(40, 1), 160);
	ck_assert_uint_eq(pv_load_ops_batch_us(64, 1), 250);
	ck_assert_uint_eq(pv_load_ops_batch_us(5000, 2), 250);
	ck_assert_uint_eq(pv_load_ops_batch_us(16, 4), 0);
	ck_assert_uint_eq(pv_load_ops_batch_us(64, 0), 0);
	ck_assert_uint_eq(pv_load_ops_batch_us(15, 1), 0);
	ck_assert_uint_eq(pv_load_ops_batch_us(1, 1), 0);
}
END_TEST

/* q: n levels (percent) and their seconds. */
static void quantiles_set(struct pv_playbook_workload_quantiles *q, unsigned n, const double *level,
			  const double *v)
{
	q->n = n;
	for (unsigned i = 0; i < n; i++) {
		q->level[i] = level[i];
		q->q[i] = v[i];
	}
}

/* c: the defaults, the learned kind alone weighed (n kinds learned), at rate an hour. */
static void learned_only(struct pv_playbook_workload *c, unsigned rate, unsigned n)
{
	pv_playbook_workload_defaults(c);
	for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_KINDS; j++)
		c->kind[j].weight = 0;
	c->kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight = 100;
	c->rate = rate;
	c->learned.n = n;
}
/* A learned workload with its think times: after a learned kind, the gap is the kind's length
 * and a think time drawn from the quantiles, scaled so that the mean gap is 3600 / rate; the
 * think times' shape is the quantiles' (the median at the 50% level), drawn log-linearly
 * between two levels. Without them, or with a built-in kind weighed beside, the gaps are
 * exponential as ever (a p95 over 2.5 times the mean). */
START_TEST(sched_learned_pace)
{
	enum { N = 100000 };
	struct pv_playbook_workload c;
	struct pv_load_sched s;
	enum pv_playbook_workload_kind k;
	double total = 0, gap, *g = malloc(N * sizeof(*g)), think[N / 10];

	ck_assert_ptr_nonnull(g);
	learned_only(&c, 3600, 2); /* one a second */
	c.learned.kind[0].weight = 3;
	c.learned.kind[0].seconds = 0.2;
	c.learned.kind[1].weight = 1;
	c.learned.kind[1].seconds = 0.6;
	/* think times: 10 ms to 100 ms (half of them), 100 ms to 1 s, then a long tail to 100 s */
	quantiles_set(&c.learned.think, 4, (const double[]){0, 50, 99, 100},
		      (const double[]){0.01, 0.1, 1, 100});
	/* log-uniform stretches: 0.5 * 0.09 / ln 10 + 0.49 * 0.9 / ln 10 + 0.01 * 99 / ln 100 */
	ck_assert_double_eq_tol(pv_load_quantiles_mean(&c.learned.think),
				(0.5 * 0.09 + 0.49 * 0.9) / log(10) + 0.01 * 99 / log(100), 1e-12);
	ck_assert_double_eq_tol(pv_load_quantiles_draw(&c.learned.think, 0), 0.01, 1e-12);
	ck_assert_double_eq_tol(pv_load_quantiles_draw(&c.learned.think, 0.25), sqrt(0.001), 1e-12);
	ck_assert_double_eq_tol(pv_load_quantiles_draw(&c.learned.think, 0.5), 0.1, 1e-12);
	ck_assert_double_eq_tol(pv_load_quantiles_draw(&c.learned.think, 0.995), 10, 1e-9);
	pv_load_sched_init(&s, &c, "cli1", 1);
	/* the kinds' length on average 0.3 s, the think time's ~0.43 s: paced to 1 s */
	ck_assert_double_eq_tol(s.pace, 1 / (0.3 + pv_load_quantiles_mean(&c.learned.think)),
				1e-12);
	for (int i = 0; i < N; i++) {
		int lk = i % 4 == 3 ? 1 : 0; /* the kinds by their weights */

		pv_load_next_after(&s, lk, &gap, &k, NULL);
		ck_assert_int_eq(k, PV_PLAYBOOK_WORKLOAD_LEARNED);
		ck_assert(gap >= s.pace * (c.learned.kind[lk].seconds + 0.01) * (1 - 1e-12));
		ck_assert(gap <= s.pace * (c.learned.kind[lk].seconds + 100) * (1 + 1e-12));
		if (i < N / 10 * 4 && i % 4 == 0)
			think[i / 4] = gap / s.pace - 0.2;
		g[i] = gap;
		total += gap;
	}
	ck_assert_msg(fabs(total / N - 1) < 0.05, "mean gap %.4f s", total / N);
	qsort(think, N / 10, sizeof(double), cmp_double);
	ck_assert_msg(fabs(think[N / 20] / 0.1 - 1) < 0.05, "median think %.4f s", think[N / 20]);
	ck_assert_msg(think[N / 10 * 98 / 100] < 1, "p98 think %.4f s", think[N / 10 * 98 / 100]);
	/* a built-in kind weighed beside: exponential gaps, no pace */
	c.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight = 90;
	c.kind[0].weight = 10;
	pv_load_sched_init(&s, &c, "cli1", 1);
	ck_assert_double_eq(s.pace, 0);
	/* no think times learned: no pace */
	c.kind[0].weight = 0;
	c.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight = 100;
	c.learned.think.n = 0;
	pv_load_sched_init(&s, &c, "cli1", 1);
	ck_assert_double_eq(s.pace, 0);
	for (int i = 0; i < N; i++)
		pv_load_next_after(&s, 0, &g[i], &k, NULL);
	qsort(g, N, sizeof(double), cmp_double);
	ck_assert_msg(g[N * 95 / 100] > 2.5, "p95 gap %.3f s", g[N * 95 / 100]);
	free(g);
}
END_TEST

/* The gaps within a learned activity as a server faster than the capture's answers: the
 * capture's gaps G log-uniform from 100 us to 10 ms; this server's answers E log-uniform from
 * 50 us to 2 ms. The replay's gap max(G', E) has G's median and p90 once the table is made;
 * max(G, E) (the capture's gaps drawn as they are) would not: its median is 20% over G's. */
/* A learned activity's next start (pv_load_start_at): its think time after the activity's
 * last request, whatever the activity's length, while the user's lead or lag on its schedule
 * stays within the slack. Over many activities of lengths spread around their kind's mean,
 * the think times waited are the ones drawn, both ways, and the rate is the schedule's. */
START_TEST(start_at_think)
{
	enum { N = 20000 };
	const double slack = 0.5;
	struct pv_playbook_workload c;
	struct pv_load_sched s;
	struct pv_load_rng g = {{1, 2, 3, 4}};
	enum pv_playbook_workload_kind k;
	double planned = 0, due = 0, end = 0, start = 0, gap, think, lead = 0, lag = 0;
	int exact = 0;

	/* the rule itself: no think (a built-in kind's), ahead, behind, far either way */
	ck_assert_double_eq(pv_load_start_at(10, 9, -1, slack), 10);
	ck_assert_double_eq_tol(pv_load_start_at(10, 9.5, 0.2, slack), 9.7, 1e-12);
	ck_assert_double_eq_tol(pv_load_start_at(10, 9.5, 0.7, slack), 10.2, 1e-12);
	ck_assert_double_eq(pv_load_start_at(10, 5, 0.2, slack), 10 - slack);
	ck_assert_double_eq(pv_load_start_at(10, 12, 0.2, slack), 10 + slack);

	learned_only(&c, 360000, 1); /* a hundred a second */
	c.learned.kind[0].weight = 1;
	c.learned.kind[0].seconds = 0.003;
	/* a script's think times: 0.3 ms to 1 ms, half of them, up to 60 ms */
	quantiles_set(&c.learned.think, 3, (const double[]){0, 50, 100},
		      (const double[]){0.0003, 0.001, 0.06});
	pv_load_sched_init(&s, &c, "cli1", 1);
	ck_assert(s.pace > 0);
	for (int i = 0; i < N; i++) {
		start = due > end ? due : end;
		pv_load_next_after(&s, 0, &gap, &k, &think);
		ck_assert_double_eq_tol(gap - think, s.pace * 0.003, 1e-12);
		planned += gap;
		/* its length: the kind's mean, give or take 60% */
		end = start + s.pace * 0.003 * (0.4 + 1.2 * pv_load_rng_unit(&g));
		due = pv_load_start_at(planned, end, think, slack);
		ck_assert(due >= planned - slack && due <= planned + slack);
		/* the think time waited: from the end to the next start */
		exact += fabs((due > end ? due : end) - end - think) < 1e-9;
		lead = planned - due > lead ? planned - due : lead;
		lag = due - planned > lag ? due - planned : lag;
	}
	/* the think times drawn, waited */
	ck_assert_msg(exact > N * 99 / 100, "%d of %d think times as drawn", exact, N);
	/* the rate: the last start within the slack of the schedule's */
	ck_assert_msg(fabs(start - (planned - gap)) <= slack + 1e-9, "%.3f s against %.3f", start,
		      planned - gap);
	/* the user went ahead of its schedule and behind it, each within the slack */
	ck_assert(lead > 0 && lag > 0);
}
END_TEST

START_TEST(gaps_as_answered)
{
	enum { N = 40000 };
	struct pv_playbook_workload_quantiles g = {2, {0, 100}, {1e-4, 1e-2}};
	struct pv_load_gaps *s = calloc(1, sizeof(*s));
	struct pv_load_rng r = {{1, 2, 3, 4}};
	double *got = malloc(N * sizeof(double)), *plain = malloc(N * sizeof(double));

	ck_assert(s && got && plain);
	ck_assert_double_eq_tol(pv_load_quantiles_cdf(&g, 1e-3), 0.5, 1e-12);
	ck_assert_double_eq(pv_load_quantiles_cdf(&g, 5e-5), 0);
	ck_assert_double_eq(pv_load_quantiles_cdf(&g, 1), 1);
	/* before PV_LOAD_GAPS_MIN answers: the capture's own */
	ck_assert_double_eq_tol(pv_load_gaps_draw(s, &g, 0.5), 1e-3, 1e-12);
	for (int i = 0; i < N; i++) {
		double e = 5e-5 * pow(40, pv_load_rng_unit(&r));

		pv_load_gaps_add(s, &g, e);
		got[i] = fmax(pv_load_gaps_draw(s, &g, pv_load_rng_unit(&r)), e);
		plain[i] = fmax(pv_load_quantiles_draw(&g, pv_load_rng_unit(&r)), e);
	}
	ck_assert_uint_eq(s->n, N);
	qsort(got, N, sizeof(double), cmp_double);
	qsort(plain, N, sizeof(double), cmp_double);
	ck_assert_msg(fabs(got[N / 2] / 1e-3 - 1) < 0.05, "median %.0f us, 1000 wanted",
		      got[N / 2] * 1e6);
	ck_assert_msg(fabs(got[N * 9 / 10] / 6.31e-3 - 1) < 0.05, "p90 %.0f us, 6310 wanted",
		      got[N * 9 / 10] * 1e6);
	ck_assert_msg(plain[N / 2] / 1e-3 > 1.15, "max(G, E)'s median %.0f us", plain[N / 2] * 1e6);
	free(s);
	free(got);
	free(plain);
}
END_TEST

/* The same where a few of this server's answers are faster than most of the capture's gaps:
 * G log-uniform from 20 us to 2 ms (median 200 us); E log-uniform from 40 to 400 us, but one
 * answer in a hundred at 11 us. F_G / F_E is over 1 just above 11 us (F_E 0.01, F_G 0.02 at
 * 21 us); a table made to rise from below kept that, drew nearly every gap under 22 us,
 * and the replay's gaps were its answers' (median 126 us). The median and p90 are G's. */
START_TEST(gaps_thin_tail)
{
	enum { N = 40000 };
	struct pv_playbook_workload_quantiles g = {2, {0, 100}, {2e-5, 2e-3}};
	struct pv_load_gaps *s = calloc(1, sizeof(*s));
	struct pv_load_rng r = {{5, 6, 7, 8}};
	double *got = malloc(N * sizeof(double));

	ck_assert(s && got);
	for (int i = 0; i < N; i++) {
		double e =
			pv_load_rng_unit(&r) < 0.01 ? 1.1e-5 : 4e-5 * pow(10, pv_load_rng_unit(&r));

		pv_load_gaps_add(s, &g, e);
		got[i] = fmax(pv_load_gaps_draw(s, &g, pv_load_rng_unit(&r)), e);
	}
	qsort(got, N, sizeof(double), cmp_double);
	ck_assert_msg(fabs(got[N / 2] / 2e-4 - 1) < 0.05, "median %.0f us, 200 wanted",
		      got[N / 2] * 1e6);
	ck_assert_msg(fabs(got[N * 9 / 10] / 1.262e-3 - 1) < 0.05, "p90 %.0f us, 1262 wanted",
		      got[N * 9 / 10] * 1e6);
	free(s);
	free(got);
}
END_TEST

/* The same user gets the same schedule; another user, client or seed another one. */
/* A gap drawn under a bound (a replay holding no file open: under the activity gap): never
 * over it, and as the quantiles say under it (their share under 5 ms over that under 10 ms). */
START_TEST(gaps_under)
{
	enum { N = 20000 };
	struct pv_playbook_workload_quantiles g = {0};
	struct pv_load_gaps s = {0};
	struct pv_load_rng r = {{5, 6, 7, 8}};
	int under5 = 0, over = 0;

	quantiles_set(&g, 3, (const double[]){0, 50, 100}, (const double[]){0.001, 0.01, 1});
	for (int i = 0; i < N; i++) {
		double x = pv_load_gaps_draw_under(&s, &g, 0.01, &r);

		over += x > 0.01;
		under5 += x <= 0.005;
	}
	ck_assert_int_eq(over, 0);
	/* log-linear: half the draws under 10 ms, log(5)/log(10) of those under 5 ms */
	ck_assert_msg(fabs((double)under5 / N - log(5) / log(10)) < 0.02, "%d of %d under 5 ms",
		      under5, N);
	/* no bound: draws over it, about half */
	over = 0;
	for (int i = 0; i < N; i++)
		over += pv_load_gaps_draw_under(&s, &g, 0, &r) > 0.01;
	ck_assert_msg(fabs((double)over / N - 0.5) < 0.02, "%d of %d over 10 ms", over, N);
	/* a bound under every time: the bound itself */
	ck_assert_double_eq(pv_load_gaps_draw_under(&s, &g, 0.0001, &r), 0.0001);
}
END_TEST

START_TEST(sched_users)
{
	struct pv_playbook_workload c, c2;
	struct pv_load_sched a, b, d, e, f;
	int same_bd = 0, same_be = 0, same_bf = 0;

	pv_playbook_workload_defaults(&c);
	c2 = c;
	c2.seed = 2;
	pv_load_sched_init(&a, &c, "cli1", 7);
	pv_load_sched_init(&b, &c, "cli1", 7);
	pv_load_sched_init(&d, &c, "cli1", 8);
	pv_load_sched_init(&e, &c, "cli2", 7);
	pv_load_sched_init(&f, &c2, "cli1", 7);
	for (int i = 0; i < 100; i++) {
		double ga, gb, gd, ge, gf;
		enum pv_playbook_workload_kind ka, kb, kd, ke, kf;

		pv_load_next(&a, &ga, &ka);
		pv_load_next(&b, &gb, &kb);
		pv_load_next(&d, &gd, &kd);
		pv_load_next(&e, &ge, &ke);
		pv_load_next(&f, &gf, &kf);
		ck_assert(ga == gb && ka == kb);
		same_bd += gb == gd;
		same_be += gb == ge;
		same_bf += gb == gf;
	}
	ck_assert_int_eq(same_bd, 0);
	ck_assert_int_eq(same_be, 0);
	ck_assert_int_eq(same_bf, 0);
	/* "cli1" user 11 is not "cli11" user 1 */
	pv_load_sched_init(&a, &c, "cli1", 11);
	pv_load_sched_init(&b, &c, "cli11", 1);
	ck_assert(memcmp(&a.rng, &b.rng, sizeof(a.rng)) != 0);
}
END_TEST

/* Weights are relative and a weight of 0 never comes; the rate sets the mean gap. */
START_TEST(sched_weights)
{
	struct pv_playbook_workload c;
	struct pv_load_sched s;
	unsigned long count[PV_PLAYBOOK_WORKLOAD_KINDS] = {0};
	double gap, total = 0;
	enum pv_playbook_workload_kind k;

	pv_playbook_workload_defaults(&c);
	for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_KINDS; j++)
		c.kind[j].weight = 0;
	c.kind[PV_PLAYBOOK_WORKLOAD_MKDIR].weight = 1;
	c.kind[PV_PLAYBOOK_WORKLOAD_READ_FOLDER].weight =
		3; /* the last kind: x * total rounding up lands here */
	c.rate = 3600;
	pv_load_sched_init(&s, &c, "x", 0);
	for (int i = 0; i < 40000; i++) {
		pv_load_next(&s, &gap, &k);
		count[k]++;
		total += gap;
	}
	ck_assert_uint_eq(
		count[PV_PLAYBOOK_WORKLOAD_MKDIR] + count[PV_PLAYBOOK_WORKLOAD_READ_FOLDER], 40000);
	ck_assert(fabs(count[PV_PLAYBOOK_WORKLOAD_READ_FOLDER] / 30000.0 - 1) < 0.05);
	ck_assert(fabs(total / 40000 - 1) < 0.02);
}
END_TEST

/* ---- histograms ---- */

START_TEST(hist_buckets)
{
	ck_assert_uint_eq(PV_LOAD_BUCKETS, 170);
	ck_assert_uint_eq(pv_load_bucket(0), 0);
	ck_assert_uint_eq(pv_load_bucket(-1), 0);
	ck_assert_uint_eq(pv_load_bucket(NAN), 0);
	ck_assert_uint_eq(pv_load_bucket(0.99e-4), 0);
	ck_assert_uint_eq(pv_load_bucket(1e-4), 1);
	ck_assert_uint_eq(pv_load_bucket(999), 168);
	ck_assert_uint_eq(pv_load_bucket(1000.5), 169);
	ck_assert_uint_eq(pv_load_bucket(INFINITY), 169);
	ck_assert(pv_load_bucket_low(0) == 0 && pv_load_bucket_high(0) == pv_load_bucket_low(1));
	ck_assert(isinf(pv_load_bucket_high(169)));
	for (unsigned b = 1; b < 169; b++) {
		double lo = pv_load_bucket_low(b), hi = pv_load_bucket_high(b);

		/* every bucket 10.07% wide, and its inside maps to it */
		ck_assert(fabs(hi / lo - pow(10, 1.0 / 24)) < 1e-9);
		ck_assert_uint_eq(pv_load_bucket(lo * (1 + 1e-9)), b);
		ck_assert_uint_eq(pv_load_bucket(hi * (1 - 1e-9)), b);
	}
	ck_assert(fabs(pv_load_bucket_low(49) - 0.01) < 1e-12);
}
END_TEST

/* Quantiles within 4.92% of the true one; the maximum exact; merging is adding. */
START_TEST(hist_quantiles)
{
	struct pv_load_hist h = {0}, a = {0}, b = {0};
	double q;

	ck_assert(pv_load_hist_quantile(&h, 0.5) == 0);
	/* 1..1000 ms: median 500 ms, p95 950 ms */
	for (int i = 1; i <= 1000; i++) {
		pv_load_hist_add(&h, i / 1000.0);
		pv_load_hist_add(i % 2 ? &a : &b, i / 1000.0);
	}
	ck_assert_uint_eq(pv_load_hist_count(&h), 1000);
	ck_assert(h.max == 1.0);
	q = pv_load_hist_quantile(&h, 0.5);
	ck_assert_msg(fabs(q / 0.5 - 1) < 0.0492, "median %g", q);
	q = pv_load_hist_quantile(&h, 0.95);
	ck_assert_msg(fabs(q / 0.95 - 1) < 0.0492, "p95 %g", q);
	ck_assert(pv_load_hist_quantile(&h, 1) <= 1.0); /* never above the maximum */
	pv_load_hist_merge(&a, &b);
	ck_assert(memcmp(&a, &h, sizeof(h)) == 0);
	/* every value alone reads within 4.92% (10^(1/48) - 1: half a bucket's ratio) */
	for (double v = 1e-4; v < 1000; v *= 1.037) {
		struct pv_load_hist one = {0}, two = {0};

		pv_load_hist_add(&one, v);
		q = pv_load_hist_quantile(&one, 0.5);
		ck_assert(q <= v && q / v > 1 - 0.0492); /* the maximum caps it */
		pv_load_hist_add(&two, v);
		pv_load_hist_add(&two, 2000);
		q = pv_load_hist_quantile(&two, 0.5);
		ck_assert_msg(fabs(q / v - 1) < 0.0492, "%g reads %g", v, q);
	}
	/* out of range: below 100 us reads 100 us at most; 1000 s and up the maximum */
	memset(&h, 0, sizeof(h));
	pv_load_hist_add(&h, 5e-5);
	pv_load_hist_add(&h, 5000);
	ck_assert(pv_load_hist_quantile(&h, 0.5) == 1e-4);
	ck_assert(pv_load_hist_quantile(&h, 1) == 5000);
	pv_load_hist_add(&h, -3); /* a clock that went back counts as 0 */
	ck_assert_uint_eq(h.n[0], 2);
}
END_TEST

/* ---- counting, steps, the answer ---- */

START_TEST(counting)
{
	static struct pv_load_figs f;
	struct pv_playbook_workload c;
	const struct pv_load_counts *n = &f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE];
	bool late;

	pv_playbook_workload_defaults(&c);
	memset(&f, 0, sizeof(f));
	ck_assert(!pv_load_count_start(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE,
				       1.0)); /* 1 s is not late */
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, false, 1.0,
			  false); /* nor is 1 s over 1 s */
	late = pv_load_count_start(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, 1.01);
	ck_assert(late);
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, late, 1.5,
			  false); /* late and over: once */
	ck_assert(!pv_load_count_start(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, 0));
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, false, 1.2, false); /* over only */
	ck_assert(!pv_load_count_start(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, 0));
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, false, 9,
			  true); /* an error: no latency, over */
	/* late and in error: overloaded once, at its end */
	late = pv_load_count_start(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, 3);
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, late, 9, true);
	/* due while its user had no connection: started, unserved, overloaded */
	pv_load_count_unserved(&f, PV_PLAYBOOK_WORKLOAD_BROWSE);
	ck_assert_uint_eq(n->started, 6);
	ck_assert_uint_eq(pv_load_hist_count(&n->lat), 3);
	ck_assert_uint_eq(n->errors, 2);
	ck_assert_uint_eq(n->late, 2);
	ck_assert_uint_eq(n->over_limit, 2);
	ck_assert_uint_eq(n->unserved, 1);
	/* late+over, over, error, late+error, unserved */
	ck_assert_uint_eq(n->overloaded, 5);
	ck_assert(n->lat.max == 1.5);
	/* the limit is the kind's */
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_READ_FOLDER, false, 4.9, false);
	ck_assert_uint_eq(f.kind[PV_PLAYBOOK_WORKLOAD_READ_FOLDER].over_limit, 0);
}
END_TEST

/* n scenarios of kind k taking secs each, the first nlate of them late, into f. */
static void run(struct pv_load_figs *f, const struct pv_playbook_workload *c,
		enum pv_playbook_workload_kind k, unsigned n, unsigned nlate, double secs)
{
	for (unsigned i = 0; i < n; i++) {
		bool late = pv_load_count_start(f, c, k, i < nlate ? 2.0 : 0.1);
		uint64_t *ops = f->kind[k].ops;

		pv_load_count_end(f, c, k, late, secs, false);
		/* what the engine's scenarios of these kinds send */
		if (k == PV_PLAYBOOK_WORKLOAD_BROWSE) {
			ops[PV_LOAD_OP_CREATE] += 4;
			ops[PV_LOAD_OP_CLOSE] += 4;
			ops[PV_LOAD_OP_QUERY_DIRECTORY] += 2;
			ops[PV_LOAD_OP_QUERY_INFO] += 3;
		} else if (k == PV_PLAYBOOK_WORKLOAD_OPEN_READ) {
			ops[PV_LOAD_OP_CREATE]++;
			ops[PV_LOAD_OP_CLOSE]++;
			ops[PV_LOAD_OP_READ] += 2;
		}
	}
}

static void errors(struct pv_load_figs *f, const struct pv_playbook_workload *c,
		   enum pv_playbook_workload_kind k, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		pv_load_count_start(f, c, k, 0);
		pv_load_count_end(f, c, k, false, 0.2, true);
		f->kind[k].ops[PV_LOAD_OP_CREATE]++;
	}
}

/* The fixture: a ramp of 20, 40 and 60 users, each step two intervals of 50 s from two
 * clients; 40 users is the answer, 60 overloads (and has errors). The clients' own figures:
 * cli1 the busier (its loop at 10, 20, 30 % of a core), neither the limit; the logons: 20 then
 * 20 new users at 50 and 80 ms, at 60 users one failed after 2 retries. */
static struct pv_playbook_workload cfg;
static struct pv_load_summary sums[3];
static struct pv_load_client clients[3][2];

static void fixture(void)
{
	static struct pv_load_figs a, b;
	static struct pv_load_step st;
	static struct pv_load_client_acc acc[2];

	pv_playbook_workload_defaults(&cfg);
	for (int s = 0; s < 3; s++) {
		unsigned users = 20 * (s + 1);

		pv_load_step_init(&st, users);
		memset(acc, 0, sizeof(acc));
		for (unsigned u = 0; u < 20; u++)
			pv_load_hist_add(&st.logon.lat, s == 0 ? 0.05 : 0.08);
		if (s == 2) {
			st.logon.failed = 1;
			st.logon.retries = 2;
		}
		for (int i = 1; i <= 2; i++) {
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			a.seq = b.seq = (uint64_t)i;
			a.secs = 50;
			b.secs = 50.002;
			a.connected = b.connected = users / 2;
			a.threads = b.threads = 2;
			a.cpu = 15.0 * (s + 1);
			a.cpu_top = 10.0 * (s + 1);
			b.cpu = 6;
			b.cpu_top = 4;
			a.host_cpu = 40;
			b.host_cpu = -1;
			for (int l = 0; l < 19; l++) {
				pv_load_hist_add(&a.lag, 0.001);
				pv_load_hist_add(&b.lag, 0.0005);
			}
			pv_load_hist_add(&a.lag, 0.05);
			pv_load_hist_add(&b.lag, 0.002);
			if (s == 0) {
				run(&a, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 38, 0, 0.010);
				run(&b, &cfg, PV_PLAYBOOK_WORKLOAD_OPEN_READ, 8, 0, 0.030);
				run(&b, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 46, 0, 0.012);
			} else if (s == 1) {
				run(&a, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 75, i == 1, 0.012);
				run(&a, &cfg, PV_PLAYBOOK_WORKLOAD_OPEN_READ, 17, 0, 0.040);
				run(&b, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 75, 0, 0.020);
				run(&b, &cfg, PV_PLAYBOOK_WORKLOAD_OPEN_READ, 17, 0, 0.045);
			} else {
				run(&a, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 90, 0, 0.600);
				run(&a, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 10, 0, 1.500);
				run(&b, &cfg, PV_PLAYBOOK_WORKLOAD_OPEN_READ, 24, 0, 0.500);
				run(&b, &cfg, PV_PLAYBOOK_WORKLOAD_BROWSE, 100, i == 2 ? 10 : 0,
				    0.700);
				errors(&b, &cfg, PV_PLAYBOOK_WORKLOAD_UPLOAD, 1);
				if (i == 2) /* a user's connection was lost */
					b.connected--, b.failed++;
			}
			pv_load_client_add(&acc[0], &a);
			pv_load_client_add(&acc[1], &b);
			pv_load_figs_merge(&a, &b);
			ck_assert_uint_eq(a.seq, (uint64_t)i);
			ck_assert(a.secs == 50.002);
			ck_assert_uint_eq(a.threads, 4);
			ck_assert(a.cpu == 15.0 * (s + 1) + 6 && a.cpu_top == 10.0 * (s + 1));
			ck_assert(a.host_cpu == 40);
			pv_load_step_add(&st, &a);
		}
		if (s < 2) {
			st.cpu = 14.2 + 12.5 * s;
			st.dc_cpu = 5.5 + 3.5 * s;
			st.dc_samba = 2.5 + 2 * s;
		}
		pv_load_summarize(&st, &cfg, &sums[s]);
		pv_load_client_of(&acc[0], "cli1", &clients[s][0]);
		pv_load_client_of(&acc[1], "cli2", &clients[s][1]);
		pv_load_summary_clients(&sums[s], clients[s], 2);
	}
}

START_TEST(summary)
{
	unsigned users = 99;

	fixture();
	ck_assert_uint_eq(sums[0].users, 20);
	ck_assert_uint_eq(sums[0].connected, 20);
	ck_assert(fabs(sums[0].secs - 100.004) < 1e-9);
	ck_assert_uint_eq(sums[0].all.n.started, 184);
	ck_assert_uint_eq(sums[0].all.lat.n, 184);
	ck_assert(fabs(sums[0].rate - 184 / 100.004) < 1e-9);
	ck_assert(fabs(sums[0].expected - 20 * 331 / 3600.0) < 1e-12);
	ck_assert(sums[0].all.overload == 0);
	ck_assert_uint_eq(sums[0].kind[PV_PLAYBOOK_WORKLOAD_BROWSE].n.started, 168);
	ck_assert_uint_eq(sums[1].all.n.overloaded, 1);
	ck_assert(fabs(sums[1].all.overload - 100.0 / 368) < 1e-12);
	ck_assert(fabs(sums[1].kind[PV_PLAYBOOK_WORKLOAD_BROWSE].overload - 100.0 / 300) < 1e-12);
	ck_assert_uint_eq(sums[2].connected, 59); /* the fewest at any interval's end */
	ck_assert_uint_eq(sums[2].failed, 1);
	ck_assert_uint_eq(sums[2].all.n.errors, 2);
	ck_assert_uint_eq(sums[2].all.n.over_limit, 20);
	ck_assert_uint_eq(sums[2].all.n.overloaded, 32); /* 10 late, 20 over, 2 errors */
	ck_assert(isnan(sums[2].cpu) && isnan(sums[2].dc_cpu));
	ck_assert(sums[1].dc_cpu == 9);
	/* the throughput's interval: the exact Poisson one of 184 over 100.004 s */
	ck_assert(fabs(sums[0].rate_lo - 158.3732 / 100.004) < 1e-5);
	ck_assert(fabs(sums[0].rate_hi - 212.5925 / 100.004) < 1e-5);
	/* every quantile within its bucket's bounds */
	ck_assert(sums[2].all.lat.p95_lo <= 0.7 && 0.7 < sums[2].all.lat.p95_hi);
	ck_assert(sums[2].all.lat.p95_lo <= sums[2].all.lat.p95 &&
		  sums[2].all.lat.p95 <= sums[2].all.lat.p95_hi);
	ck_assert(fabs(sums[2].all.lat.p95_hi / sums[2].all.lat.p95_lo - pow(10, 1.0 / 24)) < 1e-9);
	/* the ops, all kinds: 2 intervals x (90 + 10 + 100 browse x 13, 24 open_read x 4, 1
	 * upload error x 1) */
	ck_assert_uint_eq(sums[2].all.n.ops[PV_LOAD_OP_CREATE], 2 * (200 * 4 + 24 + 1));
	ck_assert_uint_eq(sums[2].all.n.ops[PV_LOAD_OP_READ], 2 * 24 * 2);
	ck_assert_uint_eq(sums[2].kind[PV_PLAYBOOK_WORKLOAD_UPLOAD].n.ops[PV_LOAD_OP_CREATE], 2);
	/* the logons */
	ck_assert_uint_eq(sums[0].logon.n, 20);
	ck_assert(fabs(sums[0].logon.median / 0.05 - 1) < 0.0492);
	ck_assert_uint_eq(sums[2].logon_n.failed, 1);
	ck_assert_uint_eq(sums[2].logon_n.retries, 2);
	/* the clients: cli1's figures are its own intervals' means, none the limit */
	ck_assert_str_eq(clients[2][0].name, "cli1");
	ck_assert(clients[2][0].cpu == 45 && clients[2][0].cpu_top == 30);
	ck_assert(clients[2][0].host_cpu == 40 && isnan(clients[2][1].host_cpu));
	ck_assert_uint_eq(clients[2][0].threads, 2);
	ck_assert(fabs(clients[2][0].lag_p95 / 1.0 - 1) < 0.0492); /* 38 of 40 at 1 ms */
	ck_assert(clients[2][0].lag_max == 0.05 * 1000);
	ck_assert(!clients[2][0].bound && !sums[2].client_bound);
	ck_assert(fabs(sums[2].driver_cores - 0.51) < 1e-12);
	ck_assert(fabs(sums[2].lag.p95 / 0.001 - 1) < 0.0492);
	/* the latencies of all kinds (448: 48 at 500 ms, 180 at 600, 200 at 700, 20 at 1500):
	 * median 600 ms, p95 700 ms, max 1.5 s */
	ck_assert(fabs(sums[2].all.lat.median / 0.6 - 1) < 0.0492);
	ck_assert(fabs(sums[2].all.lat.p95 / 0.7 - 1) < 0.0492);
	ck_assert(sums[2].all.lat.max == 1.5);
	ck_assert(pv_load_carried(&sums[0], 1) && pv_load_carried(&sums[1], 1));
	ck_assert(!pv_load_carried(&sums[1], 0.25)); /* 0.27% */
	ck_assert(!pv_load_carried(&sums[2], 100));  /* errors */
	ck_assert_int_eq(pv_load_answer(sums, 3, 1, &users), 1);
	ck_assert_uint_eq(users, 40);
	ck_assert_int_eq(pv_load_answer(sums, 3, 0, &users), 0);
	ck_assert_uint_eq(users, 20);
	ck_assert_int_eq(pv_load_answer(sums + 2, 1, 1, &users), -1);
	ck_assert_uint_eq(users, 0);
	ck_assert_int_eq(pv_load_answer(sums, 0, 1, &users), -1);
}
END_TEST

/* The overload is exactly the threshold: it counts. A step with nothing started does not. */
START_TEST(answer_edges)
{
	struct pv_load_summary s;
	unsigned users;

	memset(&s, 0, sizeof(s));
	s.users = s.connected = 10;
	s.all.n.started = 300;
	s.all.lat.n = 300; /* ended: the overload's population */
	s.all.n.overloaded = 3;
	ck_assert(pv_load_carried(&s, 1));
	s.all.n.overloaded = 4;
	ck_assert(!pv_load_carried(&s, 1));
	s.all.n.overloaded = 0;
	s.connected = 9; /* a user never connected */
	ck_assert(!pv_load_carried(&s, 1));
	s.connected = 10;
	s.lost = 1;
	ck_assert(!pv_load_carried(&s, 1));
	s.lost = 0;
	s.all.n.started = 0;
	ck_assert(!pv_load_carried(&s, 1));
	ck_assert_int_eq(pv_load_answer(&s, 1, 1, &users), -1);
}
END_TEST

/* ---- the figures line ---- */

START_TEST(line_round_trip)
{
	static struct pv_load_figs f, back;
	struct pv_playbook_workload c;
	struct pv_buf b = PV_BUF_INIT;

	pv_playbook_workload_defaults(&c);
	memset(&f, 0, sizeof(f));
	f.seq = 3;
	f.secs = 1.0625;
	f.connected = 50;
	f.failed = 2;
	f.drops = 3;
	f.reconnects = 1;
	f.relogons = 4;
	f.reclaimed = 6;
	f.threads = 2;
	f.cpu = 12.5;
	f.cpu_top = 7.25;
	f.host_cpu = -1; /* not known: null */
	pv_load_hist_add(&f.lag, 0.0125);
	run(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, 3, 1, 0.0071);
	run(&f, &c, PV_PLAYBOOK_WORKLOAD_BROWSE, 2, 0, 1.25);
	run(&f, &c, PV_PLAYBOOK_WORKLOAD_READ_FOLDER, 1, 0, 1500);
	run(&f, &c, PV_PLAYBOOK_WORKLOAD_MKDIR, 1, 0, 0);
	errors(&f, &c, PV_PLAYBOOK_WORKLOAD_UPLOAD, 2);
	pv_load_count_unserved(&f, PV_PLAYBOOK_WORKLOAD_UPLOAD);
	pv_load_count_end(&f, &c, PV_PLAYBOOK_WORKLOAD_RENAME, false, 0.5,
			  false); /* started before */
	ck_assert_int_eq(pv_load_line_encode(&f, &b), PV_OK);
	ck_assert_uint_eq(b.data[b.len - 1], '\n');
	ck_assert_ptr_null(memchr(b.data, '\n', b.len - 1));
	ck_assert_msg(strstr(b.data,
			     "{\"load\":6,\"i\":3,\"secs\":1.0625,\"users\":50,\"failed\":2,"
			     "\"drops\":3,\"reconnects\":1,\"relogons\":4,\"reclaimed\":6,"
			     "\"threads\":2,\"cpu\":12."
			     "5,\"cpu_top\":"
			     "7.25,\"host_cpu\":null,"
			     "\"lag\":{\"max\":0.0125,\"hist\":[[51,1]]},\"kinds\":{\"upload\":"
			     "{\"started\":3,\"errors\":2,\"late\":0,\"over_limit\":0,"
			     "\"unserved\":1,\"overloaded\":3,\"max\":0.0,\"hist\":[],\"ops\":"
			     "{\"create\":2}},") == b.data,
		      "%s", b.data);
	ck_assert(strstr(b.data, "\"mkdir\":{\"started\":1,\"errors\":0,\"late\":0,"
				 "\"over_limit\":0,\"unserved\":0,\"overloaded\":0,\"max\":0.0,"
				 "\"hist\":[[0,1]],\"ops\":{}}"));
	ck_assert(strstr(b.data, "\"read_folder\":{\"started\":1,\"errors\":0,\"late\":0,"
				 "\"over_limit\":1,\"unserved\":0,\"overloaded\":1,\"max\":1500.0,"
				 "\"hist\":[[169,1]],\"ops\":{}}"));
	ck_assert(strstr(b.data, "\"ops\":{\"create\":20,\"close\":20,\"query_directory\":10,"
				 "\"query_info\":15}"));
	ck_assert_ptr_null(strstr(b.data, "\"open_read\"")); /* nothing happened: left out */
	memset(&back, 0xa5, sizeof(back));
	ck_assert_int_eq(pv_load_line_decode(b.data, b.len, &back), PV_OK);
	ck_assert(memcmp(&f, &back, sizeof(f)) == 0);
	/* without the newline too */
	ck_assert_int_eq(pv_load_line_decode(b.data, b.len - 1, &back), PV_OK);
	ck_assert(memcmp(&f, &back, sizeof(f)) == 0);
	pv_buf_release(&b, 0);
}
END_TEST

#define KIND_OK                                                                                    \
	"\"started\":1,\"errors\":0,\"late\":0,\"over_limit\":0,\"unserved\":0,\"overloaded\":0"
#define OPS  ",\"ops\":{}"
#define TOP  "{\"load\":3,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"threads\":1,"
#define DRV  "\"cpu\":1,\"cpu_top\":1,\"host_cpu\":null,\"lag\":{\"max\":0,\"hist\":[]},"
#define HEAD TOP DRV "\"kinds\":"

static void refused(const char *line, const char *want)
{
	static struct pv_load_figs f;

	memset(&f, 0x5a, sizeof(f));
	ck_assert_int_eq(pv_load_line_decode(line, strlen(line), &f), PV_EREMOTE);
	ck_assert_msg(strstr(pv_errmsg(), want), "'%s': message '%s' lacks '%s'", line, pv_errmsg(),
		      want);
	ck_assert_msg(strstr(pv_errmsg(), "a load client printed a line that is not a figures "
					  "line"),
		      "%s", pv_errmsg());
	for (size_t i = 0; i < sizeof(f); i++) /* *out is set only on success */
		ck_assert_uint_eq(((unsigned char *)&f)[i], 0x5a);
}

START_TEST(ready_line)
{
	struct pv_buf b = PV_BUF_INIT;
	static struct pv_load_ready rd, back;

	memset(&rd, 0, sizeof(rd));
	rd.connected = 98;
	rd.failed = 2;
	snprintf(rd.first, sizeof(rd.first), "cli1-u3: refused (LOGON_FAILURE)");
	snprintf(rd.spoke, sizeof(rd.spoke), "SMB 3.1.1, encrypted (AES-128-GCM)");
	rd.logon.failed = 2;
	rd.logon.retries = 5;
	pv_load_hist_add(&rd.logon.lat, 0.0125);
	pv_load_hist_add(&rd.logon.lat, 0.25);
	ck_assert_int_eq(pv_load_ready_encode(&rd, &b), PV_OK);
	ck_assert_msg(!strcmp(b.data,
			      "ready {\"users\":100,\"connected\":98,\"failed\":2,\"error\":"
			      "\"cli1-u3: refused (LOGON_FAILURE)\",\"spoke\":\"SMB 3.1.1, "
			      "encrypted (AES-128-GCM)\",\"logon\":{\"failed\":2,"
			      "\"retries\":5,\"max\":0.25,\"hist\":[[51,1],[82,1]]}}\n"),
		      "%s", b.data);
	memset(&back, 0x5a, sizeof(back));
	ck_assert_int_eq(pv_load_ready_decode(b.data, b.len, &back), PV_OK);
	ck_assert(back.connected == 98 && back.failed == 2);
	ck_assert_str_eq(back.first, "cli1-u3: refused (LOGON_FAILURE)");
	ck_assert_str_eq(back.spoke, "SMB 3.1.1, encrypted (AES-128-GCM)");
	ck_assert(memcmp(&back.logon, &rd.logon, sizeof(rd.logon)) == 0);
	pv_buf_reset(&b);
	memset(&rd, 0, sizeof(rd));
	rd.connected = 3;
	ck_assert_int_eq(pv_load_ready_encode(&rd, &b), PV_OK);
	ck_assert_int_eq(pv_load_ready_decode(b.data, b.len, &back), PV_OK);
	ck_assert(back.connected == 3 && back.failed == 0 && back.first[0] == '\0' &&
		  back.spoke[0] == '\0');
	/* refused, and nothing set */
	memset(&back, 0x5a, sizeof(back));
#define LOGON0 "\"logon\":{\"failed\":0,\"retries\":0,\"max\":0,\"hist\":[]}"
#define RD_OK  "\"spoke\":null," LOGON0
	static const char *const bad[][2] = {
		{"ready {\"users\":0,\"connected\":-1,\"failed\":0,\"error\":null," RD_OK "}",
		 "\"connected\" is not an integer"},
		{"ready {\"connected\":1}", "unknown key \"connected\"" /* placeholder */},
		{"steady {}", "no 'ready ' at its start"},
		{"ready {\"users\":3,\"connected\":1,\"failed\":1,\"error\":null," RD_OK "}",
		 "\"users\" 3 is not connected + failed"},
		{"ready {\"users\":1,\"connected\":1,\"failed\":0,\"error\":7," RD_OK "}",
		 "\"error\" is not a string nor null"},
		{"ready "
		 "{\"users\":1,\"connected\":1,\"failed\":0,\"error\":null,\"spoke\":[]," LOGON0
		 "}",
		 "\"spoke\" is not a string nor null"},
		/* a line of another version (before "logon"): refused, as figures lines are */
		{"ready {\"users\":1,\"connected\":1,\"failed\":0,\"error\":null,\"spoke\":null}",
		 "no \"logon\""},
		{"ready {\"users\":1,\"connected\":1,\"failed\":0,\"error\":null,\"spoke\":null,"
		 "\"logon\":{\"failed\":0,\"retries\":0,\"max\":3,\"hist\":[]}}",
		 "\"logon\": \"max\" is 3 with an empty histogram"},
		{"ready {\"users\":1,\"connected\":1,\"failed\":0,\"error\":null}", "no \"spoke\""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(pv_load_ready_decode(bad[i][0], strlen(bad[i][0]), &back),
				 PV_EREMOTE);
		if (i != 1)
			ck_assert_msg(strstr(pv_errmsg(), bad[i][1]), "%s: %s", bad[i][0],
				      pv_errmsg());
		ck_assert(strstr(pv_errmsg(), "not a ready line"));
	}
	for (size_t i = 0; i < sizeof(back); i++)
		ck_assert_uint_eq(((unsigned char *)&back)[i], 0x5a);
	ck_assert(pv_load_is_done("done\n", 5) && pv_load_is_done("done", 4));
	ck_assert(!pv_load_is_done("done ", 5) && !pv_load_is_done("don", 3));
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(line_refused)
{
	char big[PV_LOAD_LINE_MAX + 10];
	static struct pv_load_figs f;

#define OK1 HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]]" OPS "}}}"
	ck_assert_int_eq(pv_load_line_decode(HEAD "{}}", strlen(HEAD "{}}"), &f), PV_OK);
	ck_assert_int_eq(pv_load_line_decode(OK1, strlen(OK1), &f), PV_OK);
	ck_assert(f.host_cpu == -1 && f.threads == 1);
	refused("", "'[' or '{' expected");
	refused("hello", "'[' or '{' expected near 'hello'");
	refused("[1,2]", "not an object");
	refused("{\"load\":3}", "no \"i\"");
	refused(HEAD "{}, \"x\":1}", "unknown key \"x\"");
	refused(HEAD "{}, \"load\":3}", "duplicate object key");
	refused("{\"load\":2,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"kinds\":{}}",
		"format 2, not 6: the client runs another version of provision");
	refused("{\"load\":2,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"threads\":1," DRV
		"\"kinds\":{}}",
		"format 2, not 6: the client runs another version of provision");
	/* format 3 (no drops, reconnects) is still read; 4 must have them, 3 must not */
	ck_assert_int_eq(pv_load_line_decode(OK1, strlen(OK1), &f), PV_OK);
	ck_assert(f.drops == 0 && f.reconnects == 0);
	refused("{\"load\":4,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"threads\":1," DRV
		"\"kinds\":{}}",
		"no \"drops\"");
	refused("{\"load\":3,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"drops\":1,"
		"\"reconnects\":0,\"threads\":1," DRV "\"kinds\":{}}",
		"unknown key \"drops\"");
	/* format 4 (no relogons) is still read; 5 must have them, 4 must not */
	ck_assert_int_eq(pv_load_line_decode("{\"load\":4,\"i\":1,\"secs\":1,\"users\":2,"
					     "\"failed\":0,\"drops\":1,\"reconnects\":1,"
					     "\"threads\":1," DRV "\"kinds\":{}}",
					     strlen("{\"load\":4,\"i\":1,\"secs\":1,\"users\":2,"
						    "\"failed\":0,\"drops\":1,\"reconnects\":1,"
						    "\"threads\":1," DRV "\"kinds\":{}}"),
					     &f),
			 PV_OK);
	ck_assert(f.drops == 1 && f.reconnects == 1 && f.relogons == 0);
	refused("{\"load\":5,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"drops\":0,"
		"\"reconnects\":0,\"threads\":1," DRV "\"kinds\":{}}",
		"no \"relogons\"");
	refused("{\"load\":4,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"drops\":0,"
		"\"reconnects\":0,\"relogons\":1,\"threads\":1," DRV "\"kinds\":{}}",
		"unknown key \"relogons\"");
	/* format 5 (no reclaimed) is still read; 6 must have them, 5 must not */
	ck_assert_int_eq(
		pv_load_line_decode("{\"load\":5,\"i\":1,\"secs\":1,\"users\":2,"
				    "\"failed\":0,\"drops\":1,\"reconnects\":1,"
				    "\"relogons\":2,\"threads\":1," DRV "\"kinds\":{}}",
				    strlen("{\"load\":5,\"i\":1,\"secs\":1,\"users\":2,"
					   "\"failed\":0,\"drops\":1,\"reconnects\":1,"
					   "\"relogons\":2,\"threads\":1," DRV "\"kinds\":{}}"),
				    &f),
		PV_OK);
	ck_assert(f.relogons == 2 && f.reclaimed == 0);
	refused("{\"load\":6,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"drops\":0,"
		"\"reconnects\":0,\"relogons\":0,\"threads\":1," DRV "\"kinds\":{}}",
		"no \"reclaimed\"");
	refused("{\"load\":5,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"drops\":0,"
		"\"reconnects\":0,\"relogons\":0,\"reclaimed\":1,\"threads\":1," DRV
		"\"kinds\":{}}",
		"unknown key \"reclaimed\"");
	refused("{\"load\":4,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"drops\":-1,"
		"\"reconnects\":0,\"threads\":1," DRV "\"kinds\":{}}",
		"\"drops\" is not an integer");
	refused("{\"load\":3,\"i\":0,\"secs\":1,\"users\":2,\"failed\":0,\"threads\":1," DRV
		"\"kinds\":{}}",
		"\"i\" is not an integer from 1 to");
	refused("{\"load\":3,\"i\":1,\"secs\":0,\"users\":2,\"failed\":0,\"threads\":1," DRV
		"\"kinds\":{}}",
		"\"secs\" is not a number");
	refused("{\"load\":3,\"i\":1,\"secs\":1,\"users\":-2,\"failed\":0,\"threads\":1," DRV
		"\"kinds\":{}}",
		"\"users\" is not an integer from 0 to 100000000");
	refused("{\"load\":3,\"i\":1,\"secs\":1,\"users\":2.0,\"failed\":0,\"threads\":1," DRV
		"\"kinds\":{}}",
		"\"users\" is not an integer");
	refused("{\"load\":3,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"threads\":0," DRV
		"\"kinds\":{}}",
		"\"threads\" is not an integer from 1 to 4096");
	refused(TOP "\"cpu\":-1,\"cpu_top\":1,\"host_cpu\":null,\"lag\":{\"max\":0,\"hist\":[]},"
		    "\"kinds\":{}}",
		"\"cpu\" is not a number from 0");
	refused(TOP "\"cpu\":1,\"cpu_top\":1,\"host_cpu\":101,\"lag\":{\"max\":0,\"hist\":[]},"
		    "\"kinds\":{}}",
		"\"host_cpu\" is not a number from 0 to 100, nor null");
	refused(TOP "\"cpu\":1,\"cpu_top\":1,\"host_cpu\":\"x\",\"lag\":{\"max\":0,\"hist\":[]},"
		    "\"kinds\":{}}",
		"\"host_cpu\" is not a number");
	refused(TOP
		"\"cpu\":1,\"cpu_top\":1,\"host_cpu\":1,\"lag\":{\"max\":0.5,\"hist\":[[49,1]]},"
		"\"kinds\":{}}",
		"\"lag\": \"max\" 0.5 is not in the histogram's top bucket 49");
	refused(TOP "\"cpu\":1,\"cpu_top\":1,\"host_cpu\":1,\"lag\":{\"hist\":[]},\"kinds\":{}}",
		"\"lag\": no \"max\"");
	refused(HEAD "[]}", "\"kinds\" is not an object");
	refused(HEAD "{\"browze\":{}}}", "unknown scenario kind \"browze\"");
	refused(HEAD "{\"browse\":{}}}", "kind 'browse': no \"started\"");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]],\"x\":0" OPS "}}}",
		"kind 'browse': unknown key \"x\"");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"completed\":1,\"max\":0.01,\"hist\":[[49,1]]" OPS
		     "}}}",
		"kind 'browse': unknown key \"completed\""); /* the histogram's count says it */
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]]}}}",
		"kind 'browse': no \"ops\"");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]],\"ops\":[]}}}",
		"\"ops\" is not an object");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]],\"ops\":"
		     "{\"opne\":1}}}}",
		"\"ops\" names \"opne\", not an SMB2 command");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]],\"ops\":"
		     "{\"create\":-1}}}}",
		"\"ops\" has a count for create that is not from 0");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1],[49,0]]" OPS "}}}",
		"\"hist\" item 1 is not [bucket, count] with buckets rising");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[170,1]]" OPS "}}}",
		"buckets rising from 0 to 169");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,0]]" OPS "}}}",
		"has a count that is not from 1");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":{}" OPS "}}}",
		"\"hist\" is not a list");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.5,\"hist\":[[49,1]]" OPS "}}}",
		"\"max\" 0.5 is not in the histogram's top bucket 49");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":-1,\"hist\":[[49,1]]" OPS "}}}",
		"\"max\" is not a number from 0");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":0,\"over_limit\":0,"
		     "\"unserved\":2,\"overloaded\":2,\"max\":0,\"hist\":[]" OPS "}}}",
		"more unserved (2) than started (1)");
	/* late counts where a scenario ends: at most those that ended, completed or not */
	refused(HEAD "{\"browse\":{\"started\":0,\"errors\":1,\"late\":3,\"over_limit\":0,"
		     "\"unserved\":0,\"overloaded\":3,\"max\":0.01,\"hist\":[[49,1]]" OPS "}}}",
		"more late (3) than ended, completed or in error (2)");
	ck_assert_int_eq(pv_load_line_decode(
				 HEAD "{\"browse\":{\"started\":0,\"errors\":1,"
				      "\"late\":2,\"over_limit\":0,\"unserved\":0,"
				      "\"overloaded\":2,\"max\":0.01,\"hist\":[[49,1]]" OPS "}}}",
				 strlen(HEAD "{\"browse\":{\"started\":0,\"errors\":1,"
					     "\"late\":2,\"over_limit\":0,\"unserved\":0,"
					     "\"overloaded\":2,\"max\":0.01,\"hist\":"
					     "[[49,1]]" OPS "}}}"),
				 &f),
			 PV_OK); /* two started in an earlier interval, both late, ended here */
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":0,\"over_limit\":1,"
		     "\"unserved\":0,\"overloaded\":1,\"max\":0,\"hist\":[]" OPS "}}}",
		"more over the limit (1) than completed (0)");
	refused(HEAD "{\"browse\":{\"started\":2,\"errors\":1,\"late\":1,\"over_limit\":0,"
		     "\"unserved\":1,\"overloaded\":1,\"max\":0,\"hist\":[]" OPS "}}}",
		"overloaded (1) is not from late + unserved (2) to late + over_limit + errors + "
		"unserved (3)");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":1,\"late\":0,\"over_limit\":0,"
		     "\"unserved\":0,\"overloaded\":2,\"max\":0,\"hist\":[]" OPS "}}}",
		"more overloaded (2) than ended (1)");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":1,\"over_limit\":1,"
		     "\"unserved\":0,\"overloaded\":2,\"max\":1.5,\"hist\":[[101,1]]" OPS "}}}",
		"more overloaded (2) than ended (1)"); /* one scenario late and over: once */
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":0,\"over_limit\":0,"
		     "\"unserved\":0,\"overloaded\":0,\"max\":3,\"hist\":[]" OPS "}}}",
		"\"max\" is 3 with an empty histogram");
	refused(HEAD "{}} {}", "end of file expected");
	/* the line is quoted shortened, control characters as '?' */
	refused("{\"load\":\x01\x7f\xff}", "'{\"load\":???}'");
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 2] = '}';
	big[sizeof(big) - 1] = '\0';
	refused(big, "longer than 65536 bytes");
	ck_assert(strstr(pv_errmsg(), "'{"
				      "                                        "));
	ck_assert(strstr(pv_errmsg(), "   '...;"));
}
END_TEST

#define near(a, b, tol)                                                                            \
	ck_assert_msg(fabs((a) - (b)) <= (tol), "%s = %.6f, not %.6f", #a, (double)(a), (double)(b))

/* ---- the noise of figures ---- */

/* The bounds of a quantile: its bucket, the top capped at the maximum. */
START_TEST(quantile_bounds)
{
	static struct pv_load_hist h;
	double lo, hi;

	memset(&h, 0, sizeof(h));
	pv_load_hist_bounds(&h, 0.5, &lo, &hi);
	ck_assert(lo == 0 && hi == 0);
	for (int i = 0; i < 99; i++)
		pv_load_hist_add(&h, 0.010);
	pv_load_hist_add(&h, 0.0105);
	pv_load_hist_bounds(&h, 0.5, &lo, &hi);
	ck_assert(lo <= 0.010 && 0.010 < hi && hi == 0.0105);
	pv_load_hist_add(&h, 2.0);
	pv_load_hist_bounds(&h, 0.5, &lo, &hi);
	ck_assert(fabs(hi / lo - pow(10, 1.0 / 24)) < 1e-9);
	pv_load_hist_bounds(&h, 1, &lo, &hi);
	ck_assert(lo <= 2.0 && hi == 2.0);
}
END_TEST

/* 50 values in bucket 10 and 50 in bucket 20: the median's interval is the 40th to the 61st
 * value, so from bucket 10's lower edge to bucket 20's upper one. */
START_TEST(quantile_intervals)
{
	struct pv_load_hist h;
	double lo, hi, v10 = sqrt(pv_load_bucket_low(10) * pv_load_bucket_high(10)),
		       v20 = sqrt(pv_load_bucket_low(20) * pv_load_bucket_high(20));

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 50; i++) {
		pv_load_hist_add(&h, v10);
		pv_load_hist_add(&h, v20);
	}
	pv_load_hist_ci(&h, 0.5, 0.05, &lo, &hi);
	near(lo, pv_load_bucket_low(10), 1e-15);
	near(hi, v20, 1e-15); /* bucket 20's upper edge, capped at the maximum: v20 */
	/* 62 in bucket 10, 38 in bucket 20: the 40th and the 61st are both in bucket 10 */
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 100; i++)
		pv_load_hist_add(&h, i < 62 ? v10 : v20);
	pv_load_hist_ci(&h, 0.5, 0.05, &lo, &hi);
	near(lo, pv_load_bucket_low(10), 1e-15);
	near(hi, pv_load_bucket_high(10), 1e-15);
	/* 61 in bucket 10: the 61st is still there, the 62nd would not be */
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 100; i++)
		pv_load_hist_add(&h, i < 60 ? v10 : v20);
	pv_load_hist_ci(&h, 0.5, 0.05, &lo, &hi);
	near(hi, v20, 1e-15); /* bucket 20's top, capped at the maximum seen */
	/* the p95 of 20 values: the 17th value to beyond the 20th (unbounded above) */
	memset(&h, 0, sizeof(h));
	for (int i = 1; i <= 20; i++)
		pv_load_hist_add(&h, 0.001 * i);
	pv_load_hist_ci(&h, 0.95, 0.05, &lo, &hi);
	near(lo, pv_load_bucket_low(pv_load_bucket(0.017)), 1e-15);
	ck_assert(isinf(hi));
	memset(&h, 0, sizeof(h));
	pv_load_hist_ci(&h, 0.5, 0.05, &lo, &hi);
	ck_assert(lo == 0 && isinf(hi));
	/* the truth inside, whatever the spread: 2000 values from 1 ms to 2 s */
	memset(&h, 0, sizeof(h));
	for (int i = 1; i <= 2000; i++)
		pv_load_hist_add(&h, 0.001 * i);
	pv_load_hist_ci(&h, 0.95, 0.05, &lo, &hi);
	ck_assert(lo <= 1.9 && hi >= 1.9 && hi < 2.0 && lo > 1.75);
}
END_TEST

/* The step over the answer, and a client the limit. */
START_TEST(first_over)
{
	static struct pv_load_summary st[4];
	static struct pv_load_client c[2];
	static struct pv_load_client_acc a;
	static struct pv_load_figs f;
	unsigned users;

	memset(st, 0, sizeof(st));
	for (int i = 0; i < 4; i++) {
		st[i].users = st[i].connected = 10 * (i + 1);
		st[i].all.n.started = st[i].all.lat.n = 1000;
		st[i].all.n.overloaded = i >= 2 ? 50 : 0;
	}
	/* steps given out of order (--refine appends): by users, not by place */
	st[3].users = st[3].connected = 25; /* carried, between 20 and 30 */
	st[3].all.n.overloaded = 0;
	ck_assert_int_eq(pv_load_answer(st, 4, 1, &users), 3);
	ck_assert_uint_eq(users, 25);
	ck_assert_int_eq(pv_load_first_over(st, 4, 1, 3), 2);
	ck_assert_int_eq(pv_load_first_over(st, 2, 1, 1), -1);
	ck_assert_int_eq(pv_load_first_over(st, 4, 1, -1), 2); /* the fewest not carried */
	/* a client whose busiest loop is at 90% of a core is the limit; 89% is not, nor a lag
	 * p95 under 100 ms; 100 ms is */
	memset(&f, 0, sizeof(f));
	f.secs = 1;
	f.cpu_top = 89.9;
	f.cpu = 150;
	f.host_cpu = -1;
	for (int i = 0; i < 100; i++)
		pv_load_hist_add(&f.lag, i < 95 ? 0.09 : 0.5);
	memset(&a, 0, sizeof(a));
	pv_load_client_add(&a, &f);
	pv_load_client_of(&a, "cli1", &c[0]);
	ck_assert(!c[0].bound && isnan(c[0].host_cpu));
	f.cpu_top = 90;
	memset(&a, 0, sizeof(a));
	pv_load_client_add(&a, &f);
	pv_load_client_of(&a, "cli1", &c[0]);
	ck_assert(c[0].bound);
	f.cpu_top = 10;
	memset(&f.lag, 0, sizeof(f.lag));
	for (int i = 0; i < 100; i++)
		pv_load_hist_add(&f.lag, i < 94 ? 0.001 : 0.1);
	memset(&a, 0, sizeof(a));
	pv_load_client_add(&a, &f);
	pv_load_client_of(&a, "cli2", &c[1]);
	ck_assert(c[1].bound && c[1].lag_p95 >= 1000 * PV_LOAD_BOUND_LAG);
	/* a client-bound step is never carried, whatever its overload */
	pv_load_summary_clients(&st[1], c, 2);
	ck_assert(st[1].client_bound && !pv_load_carried(&st[1], 1));
	ck_assert(fabs(st[1].driver_cores - 3) < 1e-12);
	ck_assert_int_eq(pv_load_answer(st, 3, 1, &users), 0); /* 10, 20 (bound), 30 */
	ck_assert_int_eq(pv_load_first_over(st, 3, 1, 0), 1);
}
END_TEST

/* ---- the setup lines ---- */

START_TEST(proto)
{
	struct pv_load_proto p;
	struct pv_playbook_workload c;
	struct pv_buf b = PV_BUF_INIT;
	char *line, *save = NULL;

	pv_playbook_workload_defaults(&c);
	c.keep_logged_on = true;
	c.threads = 4;
	c.seed = 7;
	ck_assert_int_eq(pv_load_proto_config(&c, &b), PV_OK);
	ck_assert(strstr(b.data, " keep=1 threads=4 "));
	ck_assert_int_eq(pv_load_proto_user("cli1-u1", "srvu1", "fsroot 1", 1, &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_user("cli1-u2", "srvu2", "fsroot2", 2, &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_start(1, &b), PV_OK);
	ck_assert(strstr(b.data, "user cli1-u1 srvu1 fsroot%201 1\nuser cli1-u2"));
	memset(&p, 0, sizeof(p));
	for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ck_assert_int_eq(pv_load_proto_parse(&p, line, strlen(line)), PV_OK);
	ck_assert(p.cfg.keep_logged_on && p.cfg.threads == 4 && p.cfg.seed == 7);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_str_eq(p.users[0].share, "fsroot 1");
	ck_assert_uint_eq(p.step, 1);
	ck_assert_uint_eq(p.steps, 1);
	/* a step under way takes no setup line */
	ck_assert_int_eq(pv_load_proto_parse(&p, "user a b c 3", 12), PV_EUSAGE);
	ck_assert(strstr(pv_errmsg(), "while a step is under way"));
	p.step = 0; /* taken: the next step's lines */
	ck_assert_int_eq(pv_load_proto_parse(&p, "user cli1-u3 srvu3 fsroot1 3", 28), PV_OK);
	ck_assert_int_eq(pv_load_proto_parse(&p, "start", 5), PV_OK);
	ck_assert_uint_eq(p.step, 3); /* all sent */
	p.step = 0;
	ck_assert_int_eq(pv_load_proto_parse(&p, "start 2", 7), PV_OK); /* fewer: users off */
	ck_assert_uint_eq(p.step, 2);
	p.step = 0;
	ck_assert_int_eq(pv_load_proto_parse(&p, "start 4", 7), PV_EUSAGE);
	ck_assert(strstr(pv_errmsg(), "'start 4': a step of 1 to 3 users"));
	ck_assert_int_eq(pv_load_proto_parse(&p, "start 0", 7), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "start x", 7), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "starts", 6), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "start 1 2", 9), PV_EUSAGE);
	/* the settings are the first step's: no config after it */
	ck_assert_int_eq(pv_load_proto_parse(&p, "config rate=1", 13), PV_EUSAGE);
	ck_assert_uint_eq(p.step, 0);
	/* "stop" between steps: the end (and no setup line at all before the first step) */
	ck_assert(!p.stop);
	ck_assert_int_eq(pv_load_proto_parse(&p, "stop", 4), PV_OK);
	ck_assert(p.stop);
	pv_load_proto_release(&p);
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "stop", 4), PV_EUSAGE);
	ck_assert(!p.stop);
	pv_load_proto_release(&p);
	/* the rate's bounds: 1 to PV_PLAYBOOK_WORKLOAD_RATE_MAX (a benchmark's, 10,000 a second) */
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "config rate=36000000", 20), PV_OK);
	ck_assert_uint_eq(p.cfg.rate, 36000000);
	pv_load_proto_release(&p);
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "config rate=36000001", 20), PV_EUSAGE);
	pv_load_proto_release(&p);
	/* a step's lines, as the controller writes them and the client reads them */
	{
		enum pv_load_proto_ctl ctl = 0;

		pv_buf_reset(&b);
		ck_assert_int_eq(pv_load_proto_control_line(PV_LOAD_PROTO_GO, &b), PV_OK);
		ck_assert_int_eq(pv_load_proto_control_line(PV_LOAD_PROTO_STOP, &b), PV_OK);
		ck_assert_str_eq(b.data, "go\nstop\n");
		ck_assert_int_eq(pv_load_proto_control("go", 2, &ctl), PV_OK);
		ck_assert_int_eq(ctl, PV_LOAD_PROTO_GO);
		ck_assert_int_eq(pv_load_proto_control("stop", 4, &ctl), PV_OK);
		ck_assert_int_eq(ctl, PV_LOAD_PROTO_STOP);
		ck_assert_int_eq(pv_load_proto_control("gone", 4, &ctl), PV_EUSAGE);
		ck_assert(strstr(pv_errmsg(), "expected 'go' or 'stop' on stdin, not 'gone'"));
		ck_assert_int_eq(pv_load_proto_control("user a b c 3", 12, &ctl), PV_EUSAGE);
	}
	/* refused settings */
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "config keep=2", 13), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "config threads=2000", 19), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "config threads=65", 17), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "start", 5), PV_EUSAGE);
	ck_assert(strstr(pv_errmsg(), "'start' before a config line and a user"));
	pv_load_proto_release(&p);
	/* the most loops a driver runs is a setting it takes */
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "config threads=64", 17), PV_OK);
	ck_assert_uint_eq(p.cfg.threads, PV_PLAYBOOK_WORKLOAD_THREADS_MAX);
	pv_load_proto_release(&p);
	pv_buf_release(&b, 1);
}
END_TEST

/* load.workload's kinds and sizes travel whole after the config line; a learned kind without
 * them, or a line that is not one, is refused. */
START_TEST(proto_learned)
{
	struct pv_load_proto p;
	struct pv_playbook_workload c;
	struct pv_buf b = PV_BUF_INIT;
	char *line, *save = NULL;

	pv_playbook_workload_defaults(&c);
	c.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight = 1;
	c.learned.n = 2;
	c.learned.kind[0] = (struct pv_playbook_workload_learned_kind){
		{5, 8 | PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT, 6}, 3, 62.5, 9.25, {1, 7.25, 1}};
	c.learned.kind[1] =
		(struct pv_playbook_workload_learned_kind){{16}, 1, 0.125, 1, {0}, 40.5, 0.25};
	c.learned.kind[0].depth[0] = PV_PLAYBOOK_WORKLOAD_OUT; /* its CREATE's: the share's root */
	c.learned.kind[0].depths = true;
	c.learned.think.n = 3;
	c.learned.think.level[1] = 50;
	c.learned.think.level[2] = 100;
	c.learned.think.q[0] = 0.001;
	c.learned.think.q[1] = 0.5;
	c.learned.think.q[2] = 2;
	c.learned.client_q.n = 2;
	c.learned.client_q.level[1] = 100;
	c.learned.client_q.q[0] = 0.0001;
	c.learned.client_q.q[1] = 0.25;
	c.learned.within.n = 2;
	c.learned.within.level[1] = 100;
	c.learned.within.q[0] = 0.0005;
	c.learned.within.q[1] = 0.5;
	c.learned.gap = 0.25;
	c.learned.within_after[6].n = 2; /* after a CLOSE */
	c.learned.within_after[6].level[1] = 100;
	c.learned.within_after[6].q[0] = 0.00025;
	c.learned.within_after[6].q[1] = 0.001;
	c.learned.within_after[14].n = 3; /* after a QUERY_DIRECTORY */
	c.learned.within_after[14].level[1] = 50;
	c.learned.within_after[14].level[2] = 100;
	c.learned.within_after[14].q[0] = 0.0005;
	c.learned.within_after[14].q[1] = 0.25;
	c.learned.within_after[14].q[2] = 1.5;
	c.learned.read[12] = 70;
	c.learned.read[0] = 30;
	c.learned.read_mean[12] = 3000.5;
	c.learned.write_mean[33] = 5e9;
	c.learned.write[33] = 1e-9;
	c.learned.relogons_per_user_hour = 89.25;
	c.learned.unleased = 37.5;
	c.learned.client[0] = 0.00048828125; /* 2^-11, 2^-9: printed as they are */
	c.learned.client[1] = 0.001953125;
	ck_assert_int_eq(pv_load_proto_config(&c, &b), PV_OK);
	ck_assert(strstr(
		b.data,
		"\nlearned 62.5 9.25 5,136,6 1,7.25,1 0 0 -1,0,0\nlearned 0.125 1 16 0 40.5 "
		"0.25\nthink 0:0.001,50:0.5,100:2\nclient-times 0:0.0001,100:0.25\nwithin-times "
		"0:0.00050000000000000001,100:0.5\nwithin-after-times 6 "
		"0:0.00025000000000000001,100:0.001\nwithin-after-times 14 "
		"0:0.00050000000000000001,50:0.25,100:1.5\nactivity-gap 0.25\nlogons "
		"89.25\nunleased 37.5\nclient 0.00048828125 0.001953125\nsizes read 30,"));
	ck_assert_int_eq(pv_load_proto_user("cli1-u1", "srvu1", "fsroot1", 1, &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_start(1, &b), PV_OK);
	memset(&p, 0, sizeof(p));
	for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ck_assert_msg(pv_load_proto_parse(&p, line, strlen(line)) == PV_OK, "%s: %s", line,
			      pv_errmsg());
	ck_assert_mem_eq(&p.cfg.learned, &c.learned, sizeof(c.learned));
	ck_assert_double_eq(p.cfg.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight, 1);
	pv_load_proto_release(&p);

	/* the longest kind learn keeps, its codes and counts at their widest: one line, within
	 * what the load reads of a line, read back whole */
	{
		struct pv_playbook_workload_learned_kind *k = &c.learned.kind[2];
		size_t longest = 0;

		*k = (struct pv_playbook_workload_learned_kind){.weight = 1.0 / 3,
								.requests = 1e9 / 7};
		for (unsigned i = 0; i < PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS; i++) {
			k->step[k->n++] = i % 2 ? 6 | PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT
						: 5 | PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF |
							  PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT;
			k->count[i] = 1e8 / 3 + i;
			k->depth[i] = i % 2 ? 0 : PV_PLAYBOOK_WORKLOAD_OUT; /* the widest */
		}
		k->depths = true;
		k->rest = 1e9 / 3;
		k->seconds = 1e4 / 3;
		c.learned.n = 3;
		pv_buf_reset(&b);
		ck_assert_int_eq(pv_load_proto_config(&c, &b), PV_OK);
		ck_assert_int_eq(pv_load_proto_user("cli1-u1", "srvu1", "fsroot1", 1, &b), PV_OK);
		ck_assert_int_eq(pv_load_proto_start(1, &b), PV_OK);
		memset(&p, 0, sizeof(p));
		save = NULL;
		for (line = strtok_r(b.data, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			longest = strlen(line) > longest ? strlen(line) : longest;
			ck_assert_msg(pv_load_proto_parse(&p, line, strlen(line)) == PV_OK,
				      "%s: %s", line, pv_errmsg());
		}
		ck_assert_uint_gt(longest, PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS * 20);
		ck_assert_uint_lt(longest + 1, PV_LOAD_PROTO_LINE_MAX);
		ck_assert_mem_eq(&p.cfg.learned, &c.learned, sizeof(c.learned));
		pv_load_proto_release(&p);
		c.learned.n = 2;
	}

	/* the logons: at most PV_PLAYBOOK_WORKLOAD_LOGONS_MAX; none when the kind is not weighed */
	c.learned.relogons_per_user_hour = 120000;
	ck_assert_double_eq(pv_playbook_workload_logons(&c), PV_PLAYBOOK_WORKLOAD_LOGONS_MAX);
	c.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight = 0;
	ck_assert_double_eq(pv_playbook_workload_logons(&c), 0);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_proto_config(&c, &b), PV_OK);
	ck_assert_ptr_null(strstr(b.data, "logons "));
	c.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight = 1;

	/* the kind weighed, its kinds not sent */
	memset(&p, 0, sizeof(p));
	pv_buf_reset(&b);
	c.learned.n = 0;
	ck_assert_int_eq(pv_load_proto_config(&c, &b), PV_OK);
	ck_assert_ptr_null(strstr(b.data, "learned "));
	ck_assert_ptr_null(strstr(b.data, "sizes "));
	ck_assert_int_eq(pv_load_proto_user("cli1-u1", "srvu1", "fsroot1", 1, &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_start(1, &b), PV_OK);
	save = NULL;
	for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strcmp(line, "start 1"))
			ck_assert_int_eq(pv_load_proto_parse(&p, line, strlen(line)), PV_OK);
	ck_assert_int_eq(pv_load_proto_parse(&p, "start 1", 7), PV_EUSAGE);
	ck_assert(strstr(pv_errmsg(), "kind 'learned' weighed without a 'learned' line"));
	/* lines that are not one */
	{
		static const char *const bad[] = {
			"learned 1 2",			 /* no commands */
			"learned 1 2 5 1 0",		 /* no length */
			"learned 0 2 5 1 0 0",		 /* no weight */
			"learned 1 2 5,,6 1,1,1 0 0",	 /* an empty code */
			"learned 1 2 5,3 1,1 0 0",	 /* TREE_CONNECT: the driver's own */
			"learned 1 2 5,21 1,1 0 0",	 /* past the commands (20: CREATE(STAT)) */
			"learned 1 2 5,40 1,1 0 0",	 /* a disposition on another than CREATE */
			"learned 1 2 5,6 1,1 0 7 1",	 /* a word more */
			"learned 1 2 5,6 1 0 0",	 /* a count short */
			"learned 1 2 5,6 1,1 0 0 1",	 /* a depth short */
			"learned 1 2 5,6 1,1 0 0 1,0,0", /* a depth more */
			"learned 1 2 5,6 1,1 0 0 8,0",	 /* deeper than PV_PLAYBOOK_WORKLOAD_DEEP */
			"learned 1 2 5,6 1,1 0 0 -2,0",	 /* above PV_PLAYBOOK_WORKLOAD_OUT */
			"learned 1 2 5,6 1,1 0 0 1,x",	 /* not a number */
			"learned x 2 5 1 0 0",		 /* not a number */
			"learned 1 2 5 1 -3 0",		 /* a rest below 0 */
			"learned 1 2 5 1 0 -1",		 /* a length below 0 */
			"learned 1 2 5 1 0 1e5",	 /* over 10^4 s */
			"sizes reed 1",			 /* neither */
			"sizes read 1,2",		 /* too few */
			"logons 0",			 /* none: the line is left out */
			"logons 36001",			 /* over PV_PLAYBOOK_WORKLOAD_LOGONS_MAX */
			"logons 5 6",			 /* a word more */
			"unleased 0",			 /* none: the line is left out */
			"unleased 100.5",		 /* over 100% */
			"unleased 5 6",			 /* a word more */
			"client 0 1",			 /* none: the line is left out */
			"client 61 61",			 /* over a minute */
			"client 0.5 0.25",		 /* a p95 under the median */
			"client 0.5",			 /* a word short */
			"client 0.5 1 2",		 /* a word more */
			"think 0:0.1",			 /* one level */
			"think 0:0.1,90:0.2",		 /* not to 100 */
			"think 5:0.1,100:0.2",		 /* not from 0 */
			"think 0:0.1,50:0.2,50:0.3,100:1",     /* a level not over the last */
			"think 0:0.3,100:0.2",		       /* fewer seconds */
			"think 0:0,100:0",		       /* no time */
			"think 0:0.1,100:2e4",		       /* over 10^4 s */
			"think 0:0.1;100:2",		       /* not a list */
			"think 0:0.1,100:2 x",		       /* a word more */
			"client-times 0:0.1",		       /* one level */
			"client-times 0:0.2,100:0.1",	       /* fewer seconds */
			"within-times 0:0.1",		       /* one level */
			"within-after-times 6 0:0.1",	       /* one level */
			"within-after-times 19 0:0.1,100:0.2", /* no command */
			"within-after-times 13 0:0.1,100:0.2", /* ECHO: not replayed */
			"within-after-times x 0:0.1,100:0.2",  /* not a number */
			"within-after-times 6",		       /* no quantiles */
			"activity-gap 0",		       /* none */
			"activity-gap 2e4",		       /* over 10^4 s */
			"activity-gap 0.5 1",		       /* a word more */
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			ck_assert_msg(pv_load_proto_parse(&p, bad[i], strlen(bad[i])) == PV_EUSAGE,
				      "%s", bad[i]);
	}
	pv_load_proto_release(&p);
	/* none before the config line */
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "learned 1 2 5 1 0 0", 19), PV_EUSAGE);
	pv_load_proto_release(&p);
	pv_buf_release(&b, 1);
}
END_TEST

/* The fileset lines: a description of several pieces, with every byte a YAML file holds,
 * joined again to the same text; refused where they would mix two or come too late. */
START_TEST(proto_fileset)
{
	struct pv_load_proto p;
	struct pv_playbook_workload c;
	struct pv_buf b = PV_BUF_INIT, big = PV_BUF_INIT;
	char *line, *save = NULL;
	char text[2 * PV_LOAD_PROTO_PIECE + 300];
	size_t lines = 0;

	for (size_t i = 0; i < sizeof(text) - 1; i++)
		text[i] = "name: x\n  - {size: [1KiB, 16%]} # \"a\" 'b'\t"[i % 40];
	text[sizeof(text) - 1] = '\0';
	pv_playbook_workload_defaults(&c);
	ck_assert_int_eq(pv_load_proto_config(&c, &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_fileset("home folders.yaml", text, strlen(text), &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_user("cli1-u1", "srvu1", "fsroot1", 1, &b), PV_OK);
	ck_assert_int_eq(pv_load_proto_start(1, &b), PV_OK);
	memset(&p, 0, sizeof(p));
	for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ck_assert_uint_lt(strlen(line), 4096); /* provision load reads lines of 4 KiB */
		lines += strncmp(line, "fileset ", 8) == 0;
		ck_assert_int_eq(pv_load_proto_parse(&p, line, strlen(line)), PV_OK);
	}
	ck_assert_uint_eq(lines, 3);
	ck_assert_str_eq(p.fileset_name, "home folders.yaml");
	ck_assert_uint_eq(p.fileset_len, strlen(text));
	ck_assert_str_eq(p.fileset, text);
	/* no fileset after the first step */
	p.step = 0;
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset x a", 11), PV_EUSAGE);
	pv_load_proto_release(&p);
	/* a second name's pieces are refused, not joined to the first's */
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset a x", 11), PV_OK);
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset b y", 11), PV_EUSAGE);
	ck_assert(strstr(pv_errmsg(), "a second fileset ('b' after 'a')"));
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset a", 9), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset a x y", 13), PV_EUSAGE);
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset a %00", 13), PV_EUSAGE);
	ck_assert_str_eq(p.fileset, "x");
	pv_load_proto_release(&p);
	/* nor past 1 MiB, as pieces that are each fine */
	memset(&p, 0, sizeof(p));
	pv_buf_addstr(&big, "fileset a ");
	for (int i = 0; i < PV_LOAD_PROTO_PIECE; i++)
		pv_buf_addstr(&big, "x");
	for (size_t i = 0; i < PV_LOAD_PROTO_FILESET_MAX / PV_LOAD_PROTO_PIECE; i++)
		ck_assert_int_eq(pv_load_proto_parse(&p, big.data, big.len), PV_OK);
	ck_assert_uint_eq(p.fileset_len, PV_LOAD_PROTO_FILESET_MAX);
	ck_assert_int_eq(pv_load_proto_parse(&p, "fileset a x", 11), PV_EUSAGE);
	ck_assert(strstr(pv_errmsg(), "more than 1048576 bytes"));
	pv_load_proto_release(&p);
	/* the sender refuses what the reader would */
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_proto_fileset("a", "", 0, &b), PV_ECONFIG);
	ck_assert_int_eq(pv_load_proto_fileset("", "x", 1, &b), PV_ECONFIG);
	ck_assert_int_eq(pv_load_proto_fileset("a", "x\0y", 3, &b), PV_ECONFIG);
	pv_buf_release(&b, 1);
	pv_buf_release(&big, 0);
}
END_TEST

/* ---- the results ---- */

static struct pv_load_results results(void)
{
	fixture();
	return (struct pv_load_results){&cfg, sums, 3, "srv, run 20261130-121500"};
}

START_TEST(report_txt)
{
	struct pv_load_results r = results();
	struct pv_buf b = PV_BUF_INIT;
	static const char want[] =
		"provision load: 331 scenarios per user-hour; a scenario is overloaded when it st"
		"arts over 1 s late, takes longer than its limit, ends in an error or is due whil"
		"e its user has no connection; a step counts when its overload is at most 1% with"
		" no error, every user connected and no client the limit (client-bound: a driver "
		"loop at 90% of a core or a loop lag p95 of 100 ms)\n"
		"srv, run 20261130-121500\n"
		"scen/s with its 95% interval (Poisson), p95 with the bucket it lies in; logon p9"
		"5 beside the DC's CPU (all its cores) and its samba processes' (% of a core); dr"
		"iver: the busiest client loop, % of a core\n"
		"\n"
		" step  users  scen/s (95% interval)  expected  overload %  errors  median ms  p9"
		"5 ms (bucket)       logon p95 ms  DC CPU % (samba)  server CPU %  driver %  lag "
		"p95 ms\n"
		"    1     20    1.84 (1.58-2.13)        1.84        0.00       0       11.5    3"
		"0.0 (28.7-30.0)            48.7         5.5 (2.5)          14.2      10.0       "
		"  1.0\n"
		"    2     40    3.68 (3.31-4.08)        3.68        0.27       0       20.5    4"
		"4.2 (42.2-45.0)            78.7         9.0 (4.5)          26.7      20.0       "
		"  1.0\n"
		"    3     60    4.48 (4.07-4.91)        5.52        7.11       2      590.0   71"
		"4.8 (681.3-749.9)          78.7                 -             -      30.0       "
		"  1.0  1 user not connected, 1 logon failed\n"
		"\n"
		"SMB2 requests the scenarios sent, % of all (FSCT HomeFolders as the server sees "
		"it, Nutanix TN-2117: create 22, close 19, read 14, query_info 13, query_director"
		"y 10, write 7, other 15)\n"
		" step  users create close read query_info query_directory write set_info ioctl c"
		"hange_notify lock flush  other  requests/s\n"
		"    1     20   30.6  30.6  1.4       22.4            14.9   0.0      0.0   0.0  "
		"         0.0  0.0   0.0    0.0        22.5\n"
		"    2     40   30.4  30.4  3.3       21.6            14.4   0.0      0.0   0.0  "
		"         0.0  0.0   0.0    0.0        41.7\n"
		"    3     60   30.6  30.6  1.8       22.2            14.8   0.0      0.0   0.0  "
		"         0.0  0.0   0.0    0.0        53.9\n"
		"\n"
		"the server carried 40 users without overload (step 2, 40 users: overload 0.3%; t"
		"he first step over it, step 3, 60 users: overload 7.1%, 2 errors, 1 of 60 users "
		"not connected)\n";

	ck_assert_int_eq(pv_load_report_txt(&r, &b), PV_OK);
	ck_assert_msg(!strcmp(b.data, want), "got:\n%s", b.data);
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(answer_lines)
{
	struct pv_load_results r = results();
	struct pv_buf b = PV_BUF_INIT;

	r.n = 2; /* the ramp stopped short of overload */
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "the server carried 40 users without overload (step 2, 40 users: "
				 "overload 0.3%; the most the ramp tried)");
	pv_buf_reset(&b);
	r.steps = sums + 2;
	r.n = 1;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "the server carried no step without overload (the fewest users, "
				 "step 1, 60 users: overload 7.1%, 2 errors, 1 of 60 users not "
				 "connected)");
	pv_buf_reset(&b);
	r.n = 0;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "no step was measured");
	pv_buf_reset(&b);
	r = results();
	sums[1].lost = 1;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "the server carried 20 users without overload (step 1, 20 users: "
				 "overload 0.0%; the first step over it, step 2, 40 users: "
				 "overload 0.3%, 1 client lost)");
	pv_buf_reset(&b);
	/* the step over the answer was client-bound: never the server's, and the cores it
	 * needs from the last step that was not (20 users, 0.21 cores: 0.0105 a user) */
	r = results();
	clients[2][1].cpu_top = 97;
	clients[2][1].lag_p95 = 340;
	clients[2][1].bound = true;
	pv_load_summary_clients(&sums[2], clients[2], 2);
	ck_assert(sums[2].client_bound && !pv_load_carried(&sums[2], 100));
	ck_assert(fabs(pv_load_cores_for(sums, 3, 60) - 0.36 / 40 * 60 / 0.7) < 1e-12);
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data,
			 "the server carried at least 40 users without overload (step 2, "
			 "40 users: overload 0.3%; the first step over it, step 3, 60 users: "
			 "overload 7.1%, 2 errors, 1 of 60 users not connected, "
			 "client-bound): the clients were the limit there, not the server "
			 "(cli2: busiest loop at 97% of a core, loop lag p95 340 ms); 60 "
			 "users need about 1 client cores (one loop each; the drivers used "
			 "0.5)");
	pv_buf_reset(&b);
	/* a loop late though it had little CPU: its host did not give it any */
	clients[2][1].cpu_top = 8;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert(strstr(b.data,
			 "(cli2: busiest loop at 8% of a core, loop lag p95 340 ms: its host "
			 "did not give the driver the CPU it needed)"));
	pv_buf_release(&b, 0);
}
END_TEST

/* The page's paragraph, the answer of runs together and over repeats: the same words whoever
 * found the answer (here the run, as load.json records it). */
START_TEST(answer_prose)
{
	struct pv_load_results r = results();
	struct pv_load_outcome o;
	struct pv_buf b = PV_BUF_INIT;

	pv_load_outcome_of(&r, &o);
	ck_assert(o.best == &sums[1] && o.over == &sums[2] && o.best_n == 2 && o.over_n == 3);
	pv_load_answer_prose(&o, &pv_load_plain, &b);
	ck_assert_str_eq(b.data,
			 "The server carried 40 users without overload (step 2). Margin: "
			 "overload 0.27% against the 1% threshold, 0.73 points to spare; 0 "
			 "errors; 3.68 scenarios/s of 3.68 expected. The first step over it, "
			 "60 users (step 3), had overload 7.11% (the threshold: 1%), 2 "
			 "errors, 1 of 60 users could not log on (2 logons tried again).");
	pv_buf_reset(&b);
	/* the step over it client-bound, a step --refine added */
	clients[2][1].cpu_top = 30;
	clients[2][1].lag_p95 = 340;
	clients[2][1].bound = true;
	pv_load_summary_clients(&sums[2], clients[2], 2);
	pv_load_outcome_of(&r, &o);
	o.best_refine = true;
	ck_assert(o.at_least && o.cores > 0);
	pv_load_answer_prose(&o, &pv_load_plain, &b);
	ck_assert_msg(strstr(b.data, "The server carried at least 40 users without overload (step "
				     "2, a step --refine added)."),
		      "%s", b.data);
	ck_assert_msg(strstr(b.data,
			     " The first step over it, 60 users (step 3), was client-bound: "
			     "the clients were the limit there, not the server (cli2: its "
			     "busiest loop at 30% of a core, loop lag p95 340 ms: its host "
			     "did not give the driver the CPU it needed): how many more "
			     "than 40 users the server carries, this run cannot tell (about "),
		      "%s", b.data);
	pv_buf_reset(&b);
	/* no step carried: the fewest users were client-bound */
	r.steps = sums + 2;
	r.n = 1;
	pv_load_outcome_of(&r, &o);
	pv_load_answer_prose(&o, &pv_load_plain, &b);
	ck_assert_str_eq(b.data,
			 "The server carried no step without overload. The fewest users "
			 "tried, 60 (step 1), were client-bound: the clients were the limit "
			 "there, not the server (cli2: its busiest loop at 30% of a core, "
			 "loop lag p95 340 ms: its host did not give the driver the CPU it "
			 "needed): this run tells nothing of the server.");
	pv_buf_reset(&b);
	/* the ramp stopped short of overload */
	r = results();
	r.n = 2;
	pv_load_outcome_of(&r, &o);
	pv_load_answer_prose(&o, &pv_load_plain, &b);
	ck_assert_msg(
		strstr(b.data, " That is the most users the ramp tried: the limit is higher."),
		"%s", b.data);
	pv_buf_reset(&b);
	pv_load_answer_range(&b, "B", 40, 40, 1, true);
	ck_assert_str_eq(b.data,
			 "B carried at least 40 users (the clients were the limit above it)");
	pv_buf_reset(&b);
	pv_load_answer_range(&b, "A", 40, 60, 3, false);
	ck_assert_str_eq(b.data, "A carried 40 to 60 users (across its 3 repeats)");
	pv_buf_reset(&b);
	pv_load_answer_repeats(&b, 90, 80, 90, 3);
	ck_assert_str_eq(b.data, "the server carried 90 users (80-90 over 3 repeats)");
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(report_csv)
{
	struct pv_load_results r = results();
	struct pv_buf b = PV_BUF_INIT;
	static const char want[] =
		"step,users,seconds,connected,not_connected,clients_lost,scen_per_s,scen_per_s_lo,"
		"sce"
		"n_per_s_hi,expected_per_s,server_cpu_pct,dc_cpu_pct,dc_samba_pct,carried,client_"
		"boun"
		"d,driver_cores,lag_p95_ms,logon_ok,logon_failed,logon_retries,logon_median_ms,"
		"logon_"
		"median_lo_ms,logon_median_hi_ms,logon_p95_ms,logon_p95_lo_ms,logon_p95_hi_ms,"
		"started"
		",completed,errors,late,over_limit,unserved,overloaded,overload_pct,median_ms,"
		"median_"
		"lo_ms,median_hi_ms,p95_ms,p95_lo_ms,p95_hi_ms,max_ms,ops_negotiate,ops_session_"
		"setup"
		",ops_logoff,ops_tree_connect,ops_tree_disconnect,ops_create,ops_close,ops_flush,"
		"ops_"
		"read,ops_write,ops_lock,ops_ioctl,ops_cancel,ops_echo,ops_query_directory,ops_"
		"change"
		"_notify,ops_query_info,ops_set_info,ops_oplock_break\n"
		"1,20,100.004,20,0,0,1.8399,1.5837,2.1258,1.8389,14.2,5.5,2.5,1,0,0.210,1.049,20,0,"
		"0,"
		"48.697,46.416,50.000,48.697,46.416,50.000,184,184,0,0,0,0,0,0.000,11.548,11.007,"
		"12.1"
		"15,30.000,28.730,30.000,30.000,0,0,0,0,0,688,688,0,32,0,0,0,0,0,336,0,504,0,0\n"
		"2,40,100.004,40,0,0,3.6799,3.3134,4.0757,3.6778,26.7,9.0,4.5,1,0,0.360,1.049,20,0,"
		"0,"
		"78.674,74.989,80.000,78.674,74.989,80.000,368,368,0,1,0,0,1,0.272,20.535,19.573,"
		"21.5"
		"44,44.242,42.170,45.000,45.000,0,0,0,0,0,1268,1268,0,136,0,0,0,0,0,600,0,900,0,0\n"
		"3,60,100.004,59,1,0,4.4798,4.0745,4.9145,5.5167,,,,0,0,0.510,1.049,20,1,2,78.674,"
		"74."
		"989,80.000,78.674,74.989,80.000,450,448,2,10,20,0,32,7.111,589.975,562.341,618."
		"966,7"
		"14.771,681.292,749.894,1500.000,0,0,0,0,0,1650,1648,0,96,0,0,0,0,0,800,0,1200,0,"
		"0\n";

	ck_assert_int_eq(pv_load_report_csv(&r, &b), PV_OK);
	ck_assert_msg(!strcmp(b.data, want), "got:\n%s", b.data);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_report_kinds_csv(&r, &b), PV_OK);
	ck_assert_msg(
		!strncmp(b.data,
			 "step,users,kind,weight,limit_s,started,completed,errors,late,"
			 "over_limit,unserved,overloaded,overload_pct,median_ms,median_lo_ms,"
			 "median_hi_ms,p95_ms,p95_lo_ms,p95_hi_ms,max_ms,ops_negotiate,"
			 "ops_session_setup,ops_logoff,ops_tree_connect,ops_tree_disconnect,"
			 "ops_create,ops_close,ops_flush,ops_read,ops_write,ops_lock,ops_ioctl,"
			 "ops_cancel,ops_echo,ops_query_directory,ops_change_notify,"
			 "ops_query_info,ops_set_info,ops_oplock_break\n"
			 "1,20,upload,15,2,0,0,0,0,0,0,0,0.000,,,,,,,,0,0,0,0,0,0,0,0,0,0,0,0,"
			 "0,0,0,0,0,0,0\n",
			 449),
		"got:\n%s", b.data);
	/* the browse bucket's upper bound is the maximum (12 ms): the true median is below */
	ck_assert(strstr(b.data, "\n1,20,browse,150,1,168,168,0,0,0,0,0,0.000,11.548,11.007,"
				 "12.000,11.548,11.007,12.000,12.000,0,0,0,0,0,672,672,0,0,0,0,0,0,"
				 "0,336,0,504,0,0\n"));
	ck_assert(strstr(b.data, "\n3,60,upload,15,2,2,0,2,0,0,0,2,100.000,,,,,,,,0,0,0,0,0,2,0,"));
	ck_assert(strstr(b.data, "\n3,60,read_folder,5,5,0,0,0,0,0,0,0,0.000,,,,,,,,0,"));
	{
		size_t lines = 0;

		for (size_t i = 0; i < b.len; i++)
			lines += b.data[i] == '\n';
		ck_assert_uint_eq(lines, 1 + 3 * PV_PLAYBOOK_WORKLOAD_KINDS);
	}
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(report_json)
{
	struct pv_load_results r = results();
	struct pv_buf b = PV_BUF_INIT;
	struct pv_json *o;
	const struct pv_json *steps, *s, *a;
	long long v;
	double d;
	char err[160];

	ck_assert_int_eq(pv_load_report_json(&r, &b), PV_OK);
	ck_assert_msg((o = pv_json_parse(b.data, b.len, err, sizeof(err))) != NULL, "%s", err);
	ck_assert(pv_json_integer(pv_json_get(o, "version"), &v) && v == 2);
	ck_assert_str_eq(pv_json_text(pv_json_get(o, "title")), "srv, run 20261130-121500");
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(o, "config"), "rate"), &v) && v == 331);
	ck_assert(pv_json_number(pv_json_get(pv_json_get(pv_json_get(pv_json_get(o, "config"),
								     "scenarios"),
							 "read_folder"),
					     "limit"),
				 &d) &&
		  d == 5);
	steps = pv_json_get(o, "steps");
	ck_assert_uint_eq(pv_json_size(steps), 3);
	s = pv_json_at(steps, 2);
	ck_assert(pv_json_integer(pv_json_get(s, "users"), &v) && v == 60);
	ck_assert(!pv_json_number(pv_json_get(s, "server_cpu_pct"), &d)); /* null */
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(s, "all"), "errors"), &v) && v == 2);
	ck_assert(
		pv_json_number(pv_json_get(pv_json_get(pv_json_get(s, "all"), "latency"), "max_ms"),
			       &d) &&
		d == 1500);
	ck_assert(pv_json_integer(
			  pv_json_get(pv_json_get(pv_json_get(s, "kinds"), "upload"), "errors"),
			  &v) &&
		  v == 2);
	/* what the report helper reads (docs/json.md): clients, ops, logons, intervals */
	ck_assert(pv_json_integer(pv_json_get(s, "step"), &v) && v == 3);
	ck_assert(pv_json_size(pv_json_get(s, "clients")) == 2);
	{
		const struct pv_json *c = pv_json_at(pv_json_get(s, "clients"), 0);

		ck_assert_str_eq(pv_json_text(pv_json_get(c, "name")), "cli1");
		ck_assert(pv_json_number(pv_json_get(c, "cpu_driver"), &d) && d == 45);
		ck_assert(pv_json_number(pv_json_get(c, "cpu_host"), &d) && d == 40);
		ck_assert(pv_json_number(pv_json_get(c, "lag_ms_p95"), &d) &&
			  fabs(d - 1.0491) < 1e-3);
		c = pv_json_at(pv_json_get(s, "clients"), 1);
		ck_assert(!pv_json_number(pv_json_get(c, "cpu_host"), &d)); /* null: not known */
	}
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(s, "ops"), "create"), &v) && v == 1650);
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(s, "ops"), "flush"), &v) && v == 0);
	ck_assert(pv_json_is_object(pv_json_get(s, "ops")));
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(s, "logon"), "failed"), &v) && v == 1);
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(s, "logon"), "ok"), &v) && v == 20);
	ck_assert(pv_json_number(pv_json_get(pv_json_get(s, "scen_per_s_interval"), "lo"), &d) &&
		  fabs(d - 4.0745) < 1e-4);
	ck_assert(pv_json_number(
			  pv_json_get(pv_json_get(pv_json_get(pv_json_get(s, "all"), "latency"),
						  "p95_ms_bucket"),
				      "hi"),
			  &d) &&
		  fabs(d - 749.894) < 1e-3);
	ck_assert(pv_json_integer(
			  pv_json_get(pv_json_get(pv_json_get(pv_json_get(s, "kinds"), "open_read"),
						  "ops"),
				      "read"),
			  &v) &&
		  v == 96);
	ck_assert(pv_json_get(s, "client_bound") && pv_json_get(s, "dc_cpu_pct"));
	a = pv_json_get(o, "answer");
	ck_assert(pv_json_integer(pv_json_get(a, "users"), &v) && v == 40);
	ck_assert(pv_json_integer(pv_json_get(a, "step"), &v) && v == 2);
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(a, "last_carried"), "step"), &v) &&
		  v == 2);
	ck_assert(pv_json_integer(pv_json_get(pv_json_get(a, "first_over"), "users"), &v) &&
		  v == 60);
	ck_assert_ptr_nonnull(strstr(pv_json_text(pv_json_get(a, "line")), "carried 40 users"));
	pv_json_free(o);
	pv_buf_release(&b, 0);
}
END_TEST

/* A small check of well-formed XML: one root element, tags nested and closed, attribute
 * values quoted without '<', '&' only in the five named entities or character references.
 * NULL when fine, else what is wrong; *elements counts the elements. */
static bool entity(const char *s)
{
	static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};

	for (size_t i = 0; i < 5; i++)
		if (!strncmp(s, named[i], strlen(named[i])))
			return true;
	return s[1] == '#' && strspn(s + 2, "0123456789") > 0 &&
	       s[2 + strspn(s + 2, "0123456789")] == ';';
}

static const char *xml_check(const char *s, int *elements)
{
	static char why[160];
	const char *stack[64];
	size_t stack_len[64], depth = 0;
	int roots = 0;

	*elements = 0;
	if (!strncmp(s, "<?xml ", 6)) {
		if (!(s = strstr(s, "?>")))
			return "unclosed XML declaration";
		s += 2;
	}
	for (;;) {
		/* text up to the next tag */
		for (; *s && *s != '<'; s++) {
			if (*s == '&' && !entity(s))
				return "a '&' that is not an entity";
			if (!depth && !strchr(" \t\r\n", *s))
				return "text outside the root element";
		}
		if (!*s)
			break;
		if (!strncmp(s, "<!--", 4)) {
			if (!(s = strstr(s + 4, "-->")))
				return "unclosed comment";
			s += 3;
			continue;
		}
		if (s[1] == '/') {
			size_t n =
				strspn(s + 2, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789-_:.");

			if (!depth || n != stack_len[depth - 1] ||
			    strncmp(s + 2, stack[depth - 1], n) || s[2 + n] != '>') {
				snprintf(why, sizeof(why), "a mismatched end tag at '%.20s'", s);
				return why;
			}
			depth--;
			s += 3 + n;
			continue;
		}
		{
			const char *name = s + 1;
			size_t n =
				strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789-_:.");
			const char *attrs[32];
			size_t nattrs = 0;

			if (!n || strchr("-.0123456789", name[0]))
				return "a tag without a name";
			if (!depth && roots++)
				return "a second root element";
			(*elements)++;
			s = name + n;
			for (;;) {
				size_t an;

				s += strspn(s, " \t\r\n");
				if (!strncmp(s, "/>", 2)) {
					s += 2;
					break;
				}
				if (*s == '>') {
					if (depth == 64)
						return "too deep";
					stack[depth] = name;
					stack_len[depth++] = n;
					s++;
					break;
				}
				an = strspn(s,
					    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					    "0123456789-_:.");
				if (!an || s[an] != '=' || s[an + 1] != '"')
					return "an attribute that is not name=\"value\"";
				for (size_t i = 0; i < nattrs; i++)
					if (!strncmp(attrs[i], s, an) && attrs[i][an] == '=')
						return "an attribute given twice";
				if (nattrs < 32)
					attrs[nattrs++] = s;
				s += an + 2;
				for (; *s && *s != '"'; s++) {
					if (*s == '<')
						return "a '<' in an attribute value";
					if (*s == '&' && !entity(s))
						return "a '&' that is not an entity in an "
						       "attribute";
				}
				if (!*s)
					return "an unclosed attribute value";
				s++;
			}
		}
	}
	if (depth)
		return "an element left open";
	return roots == 1 ? NULL : "no root element";
}

static int count_of(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

START_TEST(xml_checker)
{
	int n;

	/* the checker itself catches what it is for */
	ck_assert_ptr_null(
		xml_check("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>&amp;<c>t</c></a>\n", &n));
	ck_assert_int_eq(n, 3);
	ck_assert_ptr_nonnull(xml_check("<a><b></a></b>", &n));
	ck_assert_ptr_nonnull(xml_check("<a>", &n));
	ck_assert_ptr_nonnull(xml_check("<a/><b/>", &n));
	ck_assert_ptr_nonnull(xml_check("<a>x & y</a>", &n));
	ck_assert_ptr_nonnull(xml_check("<a x=\"<\"/>", &n));
	ck_assert_ptr_nonnull(xml_check("<a x=\"1\" x=\"2\"/>", &n));
	ck_assert_ptr_nonnull(xml_check("<a x=1/>", &n));
	ck_assert_ptr_nonnull(xml_check("<a/>b", &n));
}
END_TEST

START_TEST(report_svg)
{
	struct pv_load_results r = results();
	struct pv_buf b = PV_BUF_INIT;
	const char *why;
	int elements;

	r.title = "srv <&> \"run\" 'A'\x01";
	ck_assert_int_eq(pv_load_report_svg(&r, &b), PV_OK);
	why = xml_check(b.data, &elements);
	ck_assert_msg(why == NULL, "%s in:\n%s", why, b.data);
	ck_assert_int_gt(elements, 50);
	/* a document of its own, drawn by the one plotter (util/plot.h) */
	ck_assert(!strncmp(b.data,
			   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://"
			   "www.w3.org/2000/svg\" id=\"load\" class=\"plot\" viewBox=\"0 0 800 "
			   "500\" width=\"800\" height=\"500\"",
			   143));
	ck_assert(strstr(b.data, "<style>\n") && !strstr(b.data, "<figure>"));
	/* one marker per step per series; the server's CPU only where it was measured */
	ck_assert_int_eq(count_of(b.data, " pt scen\""), 3);
	ck_assert_int_eq(count_of(b.data, " pt overload\""), 3);
	ck_assert_int_eq(count_of(b.data, " pt cpu\""), 2);
	ck_assert_int_eq(count_of(b.data, "data-name=\"expected (users x rate)\""), 1);
	ck_assert_int_eq(count_of(b.data, "<line class=\"hl\""), 1); /* the threshold */
	ck_assert_int_eq(count_of(b.data, "<line class=\"vl\""), 1); /* the answer */
	ck_assert(strstr(b.data, ">carried 40 users</text>"));
	ck_assert(strstr(b.data, ">srv &lt;&amp;&gt; &quot;run&quot; &#39;A&#39;\xef\xbf\xbd<"));
	ck_assert(strstr(b.data, "<title>60 users: overload 7.11%</title>"));
	ck_assert(strstr(b.data, "<title>20 users: 1.84 scenarios/s (95% interval 1.58-2.13; "
				 "expected 1.84)</title>"));
	ck_assert_int_eq(count_of(b.data, "<path class=\"wh c0\""), 3); /* the intervals */
	ck_assert_int_eq(count_of(b.data, " pt bound\""), 0);
	ck_assert(strstr(b.data, ">users (all clients)</text>"));
	ck_assert(strstr(b.data, ">scenarios/s</text>"));
	/* x from 0 to 60 users (ticks 0, 10, ..., 60); y to 6 scenarios/s */
	ck_assert(strstr(b.data, "text-anchor=\"middle\">60</text>"));
	ck_assert(strstr(b.data, "text-anchor=\"end\">6</text>"));
	ck_assert_int_eq(count_of(b.data, "</svg>"), 1);
	pv_buf_reset(&b);
	/* a client-bound step: marked apart */
	sums[2].client_bound = true;
	ck_assert_int_eq(pv_load_report_svg(&r, &b), PV_OK);
	ck_assert_int_eq(count_of(b.data, " pt bound\""), 1);
	ck_assert(strstr(b.data, "expected 5.52); client-bound</title>"));
	sums[2].client_bound = false;
	pv_buf_reset(&b);
	/* no step and no CPU: still a well-formed plot, without markers */
	r.n = 0;
	r.title = NULL;
	ck_assert_int_eq(pv_load_report_svg(&r, &b), PV_OK);
	ck_assert_ptr_null(xml_check(b.data, &elements));
	ck_assert_int_eq(count_of(b.data, " pt "), 0);
	ck_assert(strstr(b.data, "server CPU % (not measured)"));
	pv_buf_release(&b, 0);
}
END_TEST

/* Out of memory at each realloc() a builder makes, one point at a time (that one and every
 * later realloc refused): where the point was reached, PV_EIO saying "out of memory" (what is
 * in the buffer then is not promised: the caller writes nothing); where it was not (the builder
 * asked for fewer), the very bytes built with all the memory. Every point up to the count taken
 * with all the memory is reached, so each point of each builder fails once; nothing leaks
 * (ASan). */
START_TEST(report_oom)
{
	struct pv_load_results r = results();
	int (*builders[])(const struct pv_load_results *, struct pv_buf *) = {
		pv_load_report_txt, pv_load_report_csv, pv_load_report_kinds_csv,
		pv_load_report_svg, pv_load_report_json};

	for (size_t i = 0; i < sizeof(builders) / sizeof(builders[0]); i++) {
		struct pv_buf ref = PV_BUF_INIT;
		long allocs, hit = 0;

		pv_test_alloc_fail_at(-1);
		ck_assert_int_eq(builders[i](&r, &ref), PV_OK);
		allocs = pv_test_alloc_count();
		pv_test_alloc_ok();
		ck_assert_int_gt(allocs, 0);
		for (long at = 1; at <= allocs + 1; at++) {
			struct pv_buf b = PV_BUF_INIT;
			int rc;

			pv_test_alloc_fail_at(at);
			rc = builders[i](&r, &b);
			pv_test_alloc_ok();
			if (pv_test_alloc_refused()) {
				hit++;
				ck_assert_msg(rc == PV_EIO && strstr(pv_errmsg(), "out of memory"),
					      "builder %zu, realloc %ld refused: %d %s", i, at, rc,
					      pv_errmsg());
			} else {
				ck_assert_msg(rc == PV_OK,
					      "builder %zu, nothing refused at %ld: %d", i, at, rc);
				ck_assert(!pv_buf_failed(&b));
				ck_assert_uint_eq(b.len, ref.len);
				ck_assert(!memcmp(b.data, ref.data, ref.len));
			}
			pv_buf_release(&b, 0);
		}
		ck_assert_int_eq(hit, allocs);
		pv_buf_release(&ref, 0);
	}
}
END_TEST

/* ---- the copy job's lines (load/copy.h) ---- */

/* The controller's lines as the agent reads them (provision/copy.c): each line without its
 * newline to pv_load_copy_config_line, and the fileset's bytes a "fileset" line asks for to
 * pv_load_copy_config_text, until "start". The first refusal's code, or PV_OK; c is left for the
 * caller to release. */
static int copy_feed(struct pv_load_copy_config *c, const char *text, bool *started)
{
	const char *p = text, *end = text + strlen(text);

	memset(c, 0, sizeof(*c));
	*started = false;
	while (p < end && !*started) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t need = 99;
		int r;

		if (!nl)
			nl = end;
		r = pv_load_copy_config_line(c, p, (size_t)(nl - p), &need, started);
		if (r != PV_OK)
			return r;
		p = nl < end ? nl + 1 : end;
		if (need) {
			ck_assert_uint_le(need, (size_t)(end - p));
			if ((r = pv_load_copy_config_text(c, p, need)) != PV_OK)
				return r;
			p += need;
		}
	}
	return PV_OK;
}

/* text is refused with PV_EUSAGE, a message holding want, and no start */
static void copy_refused(const char *text, const char *want)
{
	struct pv_load_copy_config c;
	bool started = true;

	ck_assert_msg(copy_feed(&c, text, &started) == PV_EUSAGE, "'%s' not refused", text);
	ck_assert_msg(strstr(pv_errmsg(), want), "'%s': message '%s' lacks '%s'", text, pv_errmsg(),
		      want);
	ck_assert(strstr(pv_errmsg(), "copy-agent: "));
	ck_assert(!started);
	pv_load_copy_config_release(&c);
}

/* text is taken and starts; the config into *c (the caller releases it) */
static void copy_taken(const char *text, struct pv_load_copy_config *c)
{
	bool started = false;

	ck_assert_msg(copy_feed(c, text, &started) == PV_OK, "'%s' refused: %s", text, pv_errmsg());
	ck_assert_msg(started, "'%s' did not start", text);
}

#define COPY0 "copy server=srv share=fs base=a/b user=u"

/* The setup lines written and read back: every field as it was, names with spaces, '%', '='
 * and UTF-8 percent-encoded (the bytes of load/proto.h's encoding worked out by hand), a
 * fileset's text holding lines of its own ("start" among them) taken as text. */
START_TEST(copy_config_round_trip)
{
	struct pv_load_copy_config a, b;
	struct pv_buf out = PV_BUF_INIT;
	char want[128];
	static const char yaml[] = "name: small\nstart\nfiles: 10 % =\n\xc3\xa9t\xc3\xa9\n";

	memset(&a, 0, sizeof(a));
	snprintf(a.server, sizeof(a.server), "srv u1%%=\xc3\xa9");
	snprintf(a.share, sizeof(a.share), "fs root 100%%");
	snprintf(a.base, sizeof(a.base), "cli1 u1/a=b/%%41/\xe2\x82\xac");
	snprintf(a.workgroup, sizeof(a.workgroup), "LAB");
	snprintf(a.user, sizeof(a.user), "cli1-u1 x");
	snprintf(a.dir, sizeof(a.dir), "/data/my src/%%20=/\xc3\xa9");
	a.window = 64;
	a.connections = 16;
	a.mirror = true;
	a.fft = 3600;
	a.timeout = 3600;
	a.interval = 0.25;
	ck_assert_int_eq(pv_load_copy_config_put(&a, &out), PV_OK);
	ck_assert_msg(!strcmp(out.data, "copy server=srv%20u1%25%3D%C3%A9 share=fs%20root%20100%25 "
					"base=cli1%20u1%2Fa%3Db%2F%2541%2F%E2%82%AC "
					"workgroup=LAB user=cli1-u1%20x window=64 connections=16 "
					"mirror=1 fft=3600 timeout=3600 interval=0.25 "
					"dir=%2Fdata%2Fmy%20src%2F%2520%3D%2F%C3%A9\nstart\n"),
		      "%s", out.data);
	copy_taken(out.data, &b);
	ck_assert_str_eq(b.server, a.server);
	ck_assert_str_eq(b.share, a.share);
	ck_assert_str_eq(b.base, a.base);
	ck_assert_str_eq(b.workgroup, a.workgroup);
	ck_assert_str_eq(b.user, a.user);
	ck_assert_str_eq(b.dir, a.dir);
	ck_assert(b.window == 64 && b.connections == 16 && b.mirror && b.fft == 3600 &&
		  b.timeout == 3600 && b.interval == 0.25);
	ck_assert_ptr_null(b.fileset);
	pv_load_copy_config_release(&b);

	/* the other ends of the ranges, no workgroup, and a fileset for the source */
	pv_buf_reset(&out);
	a.dir[0] = '\0';
	a.workgroup[0] = '\0';
	a.window = a.connections = 1;
	a.mirror = false;
	a.fft = 0;
	a.timeout = 1;
	a.interval = 60;
	snprintf(a.fileset_name, sizeof(a.fileset_name), "small set %%");
	a.fileset = (char *)yaml;
	a.fileset_len = sizeof(yaml) - 1;
	ck_assert_int_eq(pv_load_copy_config_put(&a, &out), PV_OK);
	ck_assert(strstr(out.data, " workgroup= user="));
	snprintf(want, sizeof(want), "interval=60\nfileset small%%20set%%20%%25 %zu\nname: small\n",
		 sizeof(yaml) - 1);
	ck_assert_msg(strstr(out.data, want), "%s", out.data);
	ck_assert_ptr_null(strstr(out.data, " dir="));
	copy_taken(out.data, &b);
	ck_assert_str_eq(b.server, a.server);
	ck_assert_str_eq(b.base, a.base);
	ck_assert_str_eq(b.workgroup, "");
	ck_assert_str_eq(b.dir, "");
	ck_assert(b.window == 1 && b.connections == 1 && !b.mirror && b.fft == 0 &&
		  b.timeout == 1 && b.interval == 60);
	ck_assert_str_eq(b.fileset_name, "small set %");
	ck_assert_uint_eq(b.fileset_len, sizeof(yaml) - 1);
	ck_assert(!memcmp(b.fileset, yaml, sizeof(yaml) - 1));
	pv_load_copy_config_release(&b);
	ck_assert_ptr_null(b.fileset);
	ck_assert_uint_eq(b.fileset_len, 0);

	/* a fileset without a name goes as "fileset" */
	pv_buf_reset(&out);
	a.fileset_name[0] = '\0';
	ck_assert_int_eq(pv_load_copy_config_put(&a, &out), PV_OK);
	snprintf(want, sizeof(want), "\nfileset fileset %zu\n", sizeof(yaml) - 1);
	ck_assert(strstr(out.data, want));
	pv_buf_release(&out, 0);

	/* an interval of any digits comes back the very same double */
	pv_buf_reset(&out);
	a.interval = 1.0 / 3;
	ck_assert_int_eq(pv_load_copy_config_put(&a, &out), PV_OK);
	copy_taken(out.data, &b);
	ck_assert_msg(b.interval == 1.0 / 3, "%.17g from '%s'", b.interval, out.data);
	pv_load_copy_config_release(&b);
	pv_buf_release(&out, 0);

	/* what the agent takes when the controller leaves a key out: the defaults */
	copy_taken(COPY0 " dir=/x\nstart", &b);
	ck_assert(b.window == 8 && b.connections == 1 && !b.mirror && b.fft == 2 &&
		  b.timeout == 10 && b.interval == 1 && b.workgroup[0] == '\0');
	pv_load_copy_config_release(&b);
	/* the longest values that fit */
	{
		char line[4096], base[1024];

		memset(base, 'b', sizeof(base) - 1);
		base[sizeof(base) - 1] = '\0';
		snprintf(line, sizeof(line), "copy server=s share=f base=%s user=u dir=/x\nstart",
			 base);
		copy_taken(line, &b);
		ck_assert_uint_eq(strlen(b.base), sizeof(b.base) - 1);
		pv_load_copy_config_release(&b);
		snprintf(line, sizeof(line), "copy server=s share=f base=%sb user=u dir=/x\nstart",
			 base);
		copy_refused(line, "a value too long for base");
	}
}
END_TEST

/* Each way the setup lines are refused, each naming its fault; the edges of every range are
 * taken (so a refusal just past them is the range's, not something else's). */
START_TEST(copy_config_refused)
{
	struct pv_load_copy_config c;
	char line[2048];
	static const struct {
		const char *kv;
		bool ok;
	} edges[] = {
		{"window=1", true},	   {"window=64", true},
		{"window=0", false},	   {"window=65", false},
		{"window=-1", false},	   {"window=8x", false},
		{"window=", false},	   {"connections=1", true},
		{"connections=16", true},  {"connections=0", false},
		{"connections=17", false}, {"fft=0", true},
		{"fft=3600", true},	   {"fft=3601", false},
		{"fft=-1", false},	   {"fft=1.5", false},
		{"timeout=1", true},	   {"timeout=3600", true},
		{"timeout=0", false},	   {"timeout=3601", false},
		{"mirror=0", true},	   {"mirror=1", true},
		{"mirror=2", false},	   {"mirror=yes", false},
		{"interval=0.05", true},   {"interval=60", true},
		{"interval=0.5", true},	   {"interval=0.04", false},
		{"interval=60.5", false},  {"interval=0", false},
		{"interval=-1", false},	   {"interval=nan", false},
		{"interval=inf", false},   {"interval=1s", false},
		{"interval=", false},	   {"colour=red", false},
		{"Server=x", false},	   {"window=99999999999999999999", false},
	};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		snprintf(line, sizeof(line), COPY0 " %s dir=/x\nstart", edges[i].kv);
		if (edges[i].ok) {
			copy_taken(line, &c);
			pv_load_copy_config_release(&c);
		} else {
			copy_refused(line, "an unknown key or a value out of range");
		}
	}
	/* the base: share-relative, no empty part, no backslash */
	copy_taken(COPY0 " dir=/x\nstart", &c);
	pv_load_copy_config_release(&c);
	copy_taken("copy server=s share=f base=top user=u dir=/x\nstart", &c);
	pv_load_copy_config_release(&c);
	copy_refused("copy server=s share=f base=/a user=u dir=/x", "a base that is not a share-");
	copy_refused("copy server=s share=f base=%2Fa user=u dir=/x", "a base that is not");
	copy_refused("copy server=s share=f base=a%5Cb user=u dir=/x", "a base that is not");
	copy_refused("copy server=s share=f base=a\\b user=u dir=/x", "a base that is not");
	copy_refused("copy server=s share=f base=a//b user=u dir=/x", "a base that is not");
	copy_refused("copy server=s share=f base=a/ user=u dir=/x", "a base that is not");
	copy_refused("copy server=s share=f base=/ user=u dir=/x", "a base that is not");
	/* what must be there */
	copy_refused("copy share=f base=a user=u dir=/x", "no server, share, base or user");
	copy_refused("copy server=s base=a user=u dir=/x", "no server, share, base or user");
	copy_refused("copy server=s share=f user=u dir=/x", "no server, share, base or user");
	copy_refused("copy server=s share=f base=a dir=/x", "no server, share, base or user");
	copy_refused("copy server= share=f base=a user=u dir=/x", "no server, share, base or user");
	/* words: KEY=VALUE, percent escapes whole and not NUL */
	copy_refused(COPY0 " mirror", "a word that is not KEY=VALUE");
	copy_refused(COPY0 " dir=%2", "a word that is not KEY=VALUE");
	copy_refused(COPY0 " dir=%zz", "a word that is not KEY=VALUE");
	copy_refused(COPY0 " dir=a%00b", "a word that is not KEY=VALUE");
	/* the source: one folder or one fileset */
	copy_refused(COPY0 "\nstart", "a source that is neither one folder nor one fileset");
	copy_refused(COPY0 " dir=/x\nfileset f 3\nab\nstart",
		     "a source that is neither one folder nor one fileset");
	copy_taken(COPY0 "\nfileset f 3\nab\nstart", &c);
	ck_assert_uint_eq(c.fileset_len, 3);
	pv_load_copy_config_release(&c);
	copy_refused(COPY0 "\nfileset f 3\nab\nfileset g 3\ncd\nstart", "a second fileset");
	copy_refused(COPY0 " dir=/x\ncopy server=t share=g base=c user=v dir=/y\nstart",
		     "a second 'copy' line");
	copy_refused(COPY0 " window=4 dir=/x\ncopy mirror=1\nstart", "a second 'copy' line");
	copy_taken("fileset f 3\nab\n" COPY0 "\nstart", &c); /* the fileset first: one of each */
	ck_assert(c.fileset_len == 3 && !strcmp(c.server, "srv"));
	pv_load_copy_config_release(&c);
	copy_taken(COPY0 "\nfileset f 2\nabstart", &c); /* text need not end a line */
	ck_assert(c.fileset_len == 2 && !memcmp(c.fileset, "ab", 2));
	pv_load_copy_config_release(&c);
	/* a fileset's length: 1 byte to 1 MiB */
	copy_refused(COPY0 "\nfileset f 0\nstart", "a fileset's length that is not 1 to 1 MiB");
	copy_refused(COPY0 "\nfileset f 1048577\n", "a fileset's length that is not 1 to 1 MiB");
	copy_refused(COPY0 "\nfileset f -1\n", "a fileset's length that is not 1 to 1 MiB");
	copy_refused(COPY0 "\nfileset f 1k\n", "a fileset's length that is not 1 to 1 MiB");
	copy_refused(COPY0 "\nfileset f 18446744073709551617\n",
		     "a fileset's length that is not 1 to 1 MiB");
	{
		size_t need = 0;
		bool started = false;

		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(
			pv_load_copy_config_line(&c, "fileset f 1048576", 17, &need, &started),
			PV_OK);
		ck_assert_uint_eq(need, PV_LOAD_COPY_FILESET_MAX);
		ck_assert_str_eq(c.fileset_name, "f");
		ck_assert(!started);
		/* and a refused line asks for no text */
		need = 7;
		ck_assert_int_eq(pv_load_copy_config_line(&c, "fileset f 0", 11, &need, &started),
				 PV_EUSAGE);
		ck_assert_uint_eq(need, 0);
	}
	copy_refused(COPY0 "\nfileset f\n", "not 'fileset NAME LENGTH'");
	copy_refused(COPY0 "\nfileset f 2 x\n", "not 'fileset NAME LENGTH'");
	copy_refused(COPY0 "\nfileset f 2 \n", "not 'fileset NAME LENGTH'");
	copy_refused(COPY0 "\nfileset %zz 2\n", "not 'fileset NAME LENGTH'");
	/* the order and the words of lines */
	copy_refused("start", "'start' before the 'copy' line");
	copy_refused("fileset f 3\nab\nstart", "'start' before the 'copy' line");
	copy_refused(COPY0 " dir=/x\nbegin", "an unknown line");
	copy_refused(COPY0 " dir=/x\nstart now", "an unknown line");
	copy_refused(COPY0 " dir=/x\nSTART", "an unknown line");
	copy_refused("copy", "an unknown line");
	{
		size_t need = 7;
		bool started = false;

		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(pv_load_copy_config_line(&c, "", 0, &need, &started), PV_EUSAGE);
		ck_assert(strstr(pv_errmsg(), "an unknown line in the line ''"));
		ck_assert(need == 0 && !started);
	}
	/* a NUL byte, in a value or after the line's words */
	{
		static const char *const nul[] = {
			COPY0 " dir=/x\0y",
			COPY0 " dir=/x \0",
			"fileset f\0 3",
			"start\0",
		};
		size_t need = 7;
		bool started = false;

		memset(&c, 0, sizeof(c));
		ck_assert_int_eq(pv_load_copy_config_line(&c, COPY0 " dir=/x",
							  strlen(COPY0 " dir=/x"), &need, &started),
				 PV_OK);
		for (size_t i = 0; i < sizeof(nul) / sizeof(nul[0]); i++) {
			size_t len = strlen(nul[i]) + 1 + strlen(nul[i] + strlen(nul[i]) + 1);

			ck_assert_msg(pv_load_copy_config_line(&c, nul[i], len, &need, &started) ==
					      PV_EUSAGE,
				      "'%s' with its NUL taken", nul[i]);
			ck_assert(strstr(pv_errmsg(), "copy-agent: a NUL byte in the line"));
			ck_assert(need == 0 && !started);
		}
		ck_assert_str_eq(c.dir, "/x");
	}
	/* the message quotes the line, cut at 80 bytes */
	{
		char want[128];

		memset(line, 'x', sizeof(line));
		memcpy(line, COPY0 " colour=", strlen(COPY0 " colour="));
		line[300] = '\0';
		snprintf(want, sizeof(want), "in the line '%.80s...'", line);
		copy_refused(line, want);
		line[80] = '\0';
		snprintf(want, sizeof(want), "in the line '%.80s'", line);
		copy_refused(line, want);
	}
}
END_TEST

/* The agent's lines written and read back, each field as it was (the encoders' precision:
 * ticks to the millisecond and the tenth of a percent, JSON reals to 12 digits). */
START_TEST(copy_agent_round_trip)
{
	struct pv_buf b = PV_BUF_INIT;
	struct pv_load_copy_line l;
	struct pv_load_copy_plan p = {7,
				      3,
				      2,
				      11,
				      14,
				      1,
				      1000000000000000ull,
				      20,
				      123456789,
				      4,
				      0.125,
				      "a \"b\"\\c \xc3\xa9\n\x01"};
	struct pv_load_copy_done d;
	struct pv_load_copy_tick t = {12.345, 1000, 123456789012ull, 95.5, 88.5};

	ck_assert_int_eq(
		pv_load_copy_line_conn(15, 65535, "SMB 3.1.1, encrypted (AES-128-GCM)", &b), PV_OK);
	ck_assert_str_eq(b.data,
			 "copy-conn 15 65535 SMB%203.1.1%2C%20encrypted%20%28AES-128-GCM%29\n");
	ck_assert_int_eq(pv_load_copy_line_parse(b.data, b.len - 1, &l), PV_OK);
	ck_assert_int_eq(l.kind, PV_LOAD_COPY_CONN);
	ck_assert(l.conn == 15 && l.port == 65535);
	ck_assert_str_eq(l.desc, "SMB 3.1.1, encrypted (AES-128-GCM)");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_copy_line_conn(0, 0, "", &b), PV_OK);
	ck_assert_str_eq(b.data, "copy-conn 0 0 -\n");
	ck_assert_int_eq(pv_load_copy_line_parse(b.data, b.len - 1, &l), PV_OK);
	ck_assert(l.kind == PV_LOAD_COPY_CONN && l.conn == 0 && l.port == 0);
	ck_assert_str_eq(l.desc, "-");

	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_copy_line_tick(&t, &b), PV_OK);
	ck_assert_str_eq(b.data, "copy-tick 12.345 1000 123456789012 95.5 88.5\n");
	ck_assert_int_eq(pv_load_copy_line_parse(b.data, b.len - 1, &l), PV_OK);
	ck_assert_int_eq(l.kind, PV_LOAD_COPY_TICK);
	ck_assert(l.tick.t == 12.345 && l.tick.files == 1000 && l.tick.bytes == 123456789012ull &&
		  l.tick.cpu == 95.5 && l.tick.top == 88.5);

	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_copy_line_plan(&p, &b), PV_OK);
	ck_assert(b.len && b.data[b.len - 1] == '\n' && !memchr(b.data, '\n', b.len - 1));
	ck_assert(!strncmp(b.data, "copy-plan {\"files\":7,\"bytes\":1000000000000000,", 46));
	ck_assert_int_eq(pv_load_copy_line_parse(b.data, b.len - 1, &l), PV_OK);
	ck_assert_int_eq(l.kind, PV_LOAD_COPY_PLAN);
	ck_assert(l.plan.files == 7 && l.plan.dirs == 3 && l.plan.extras == 2 && l.plan.ok == 11 &&
		  l.plan.listed == 14 && l.plan.skipped == 1 &&
		  l.plan.bytes == 1000000000000000ull && l.plan.source_files == 20 &&
		  l.plan.source_bytes == 123456789 && l.plan.source_dirs == 4 &&
		  l.plan.list_s == 0.125);
	ck_assert_str_eq(l.plan.first_skipped, p.first_skipped);

	memset(&d, 0, sizeof(d));
	d.files = 100;
	d.fixed = 2;
	d.dirs = 9;
	d.removed_files = 3;
	d.removed_dirs = 1;
	d.ok = 40;
	d.bytes = 987654321;
	d.list_s = 0.5;
	d.prune_s = 0.25;
	d.put_s = 12.75;
	d.total_s = 86400;
	d.cpu_s = 3.5;
	d.put_cpu = 102400;
	d.put_top = NAN; /* not measured: null on the line */
	snprintf(d.speaks, sizeof(d.speaks), "SMB 3.1.1, encrypted (AES-128-GCM)");
	for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++) {
		d.classes[i].files = 10 * (unsigned long)i + 1;
		d.classes[i].p50 = 0.001 * (i + 1);
		d.classes[i].p95 = 0.002 * (i + 1);
	}
	d.classes[4].p95 = NAN;
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_copy_line_done(&d, &b), PV_OK);
	ck_assert(b.len && b.data[b.len - 1] == '\n' && !memchr(b.data, '\n', b.len - 1));
	ck_assert(strstr(b.data, "\"put_top\":null"));
	ck_assert_int_eq(pv_load_copy_line_parse(b.data, b.len - 1, &l), PV_OK);
	ck_assert_int_eq(l.kind, PV_LOAD_COPY_DONE);
	ck_assert(l.done.files == 100 && l.done.fixed == 2 && l.done.dirs == 9 &&
		  l.done.removed_files == 3 && l.done.removed_dirs == 1 && l.done.ok == 40 &&
		  l.done.bytes == 987654321);
	ck_assert(l.done.list_s == 0.5 && l.done.prune_s == 0.25 && l.done.put_s == 12.75 &&
		  l.done.total_s == 86400 && l.done.cpu_s == 3.5 && l.done.put_cpu == 102400);
	ck_assert(isnan(l.done.put_top));
	ck_assert_str_eq(l.done.speaks, d.speaks);
	for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++) {
		ck_assert_uint_eq(l.done.classes[i].files, d.classes[i].files);
		ck_assert(l.done.classes[i].p50 == d.classes[i].p50);
		ck_assert(i == 4 ? isnan(l.done.classes[i].p95)
				 : l.done.classes[i].p95 == d.classes[i].p95);
	}
	ck_assert_str_eq(pv_load_copy_class_names[0], "under 4 KiB");
	ck_assert_str_eq(pv_load_copy_class_names[4], "1 MiB and over");
	pv_buf_release(&b, 0);
}
END_TEST

/* line (a C string) from a hostile agent: PV_EREMOTE, naming why and quoting the line */
static void agent_refused(const char *line, size_t len, const char *why)
{
	struct pv_load_copy_line l;

	ck_assert_msg(pv_load_copy_line_parse(line, len, &l) == PV_EREMOTE, "'%.*s' taken",
		      (int)len, line);
	ck_assert_msg(strstr(pv_errmsg(), why), "'%.*s': message '%s' lacks '%s'", (int)len, line,
		      pv_errmsg(), why);
	ck_assert(strstr(pv_errmsg(), "the copy agent printed a line that is not one of its own"));
}
#define AGENT_REFUSED(line, why) agent_refused(line, strlen(line), why)

static void agent_taken(const char *line, struct pv_load_copy_line *l)
{
	ck_assert_msg(pv_load_copy_line_parse(line, strlen(line), l) == PV_OK, "'%s' refused: %s",
		      line, pv_errmsg());
}

/* s with its first from replaced by to (from must be there), in a static buffer */
static const char *subst(const char *s, const char *from, const char *to)
{
	static char out[4096];
	const char *at = strstr(s, from);

	ck_assert_msg(at != NULL, "'%s' not in '%s'", from, s);
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
	return out;
}

/* What a hostile or broken agent may print, each refused, and the edges of each range taken. */
START_TEST(copy_agent_refused)
{
	struct pv_load_copy_line l;
	struct pv_buf pb = PV_BUF_INIT, db = PV_BUF_INIT;
	struct pv_load_copy_plan p = {7, 3, 2, 11, 14, 1, 4096, 20, 8192, 4, 0.125, ""};
	struct pv_load_copy_done d;
	char plan[1024], done[2048], big[512];

	/* ticks: T FILES BYTES CPU TOP */
	agent_taken("copy-tick 0 0 0 0 0", &l);
	agent_taken("copy-tick 86400 1000000000000000 1000000000000000 102400 102400", &l);
	ck_assert(l.tick.t == 86400 && l.tick.files == 1000000000000000ul &&
		  l.tick.bytes == 1000000000000000ull && l.tick.cpu == 102400);
	agent_taken("copy-tick 1 1e3 2 3 4", &l); /* a whole number written otherwise */
	ck_assert_uint_eq(l.tick.files, 1000);
	AGENT_REFUSED("copy-tick -1 2 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 -2 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 -3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 -4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 -5", "its tick");
	AGENT_REFUSED("copy-tick 86400.5 2 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 1000000000000001 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 1000000000000001 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 102400.1 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 102400.1", "its tick");
	AGENT_REFUSED("copy-tick 1 2.5 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3.5 4 5", "its tick");
	AGENT_REFUSED("copy-tick nan 2 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 nan 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 NAN 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 nan 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 nan", "its tick");
	AGENT_REFUSED("copy-tick inf 2 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 inf 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 infinity 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 -inf 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 1e999", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4", "its tick");
	AGENT_REFUSED("copy-tick 1", "its tick");
	AGENT_REFUSED("copy-tick x 2 3 4 5", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 5 6", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 5x", "its tick");
	AGENT_REFUSED("copy-tick 1 2 3 4 5 x", "its tick");
	memset(big, '0', sizeof(big));
	memcpy(big, "copy-tick ", 10);
	memcpy(big + 190, "1 2 3 4 5", 10); /* 199 bytes: the longest taken */
	agent_taken(big, &l);
	ck_assert(l.tick.t == 1 && l.tick.top == 5);
	memcpy(big + 190, "01 2 3 4 5", 11);
	AGENT_REFUSED(big, "too long");

	/* connections: N below 16, a port of 16 bits, one word of description */
	agent_taken("copy-conn 15 65535 x", &l);
	ck_assert(l.conn == 15 && l.port == 65535);
	AGENT_REFUSED("copy-conn 16 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn 99 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn 1 65536 x", "its connection or port");
	AGENT_REFUSED("copy-conn -1 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn 1 -445 x", "its connection or port");
	AGENT_REFUSED("copy-conn %2D1 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn -0 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn 1 -0 x", "its connection or port");
	AGENT_REFUSED("copy-conn 1.5 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn x 445 x", "its connection or port");
	AGENT_REFUSED("copy-conn 1 445x x", "its connection or port");
	AGENT_REFUSED("copy-conn 99999999999999999999 445 x", "not 'copy-conn N PORT DESC'");
	AGENT_REFUSED("copy-conn 1 445", "not 'copy-conn N PORT DESC'");
	AGENT_REFUSED("copy-conn 1 445 x y", "not 'copy-conn N PORT DESC'");
	AGENT_REFUSED("copy-conn 1 445 x%0", "not 'copy-conn N PORT DESC'");
	AGENT_REFUSED("copy-conn 1 445 %00", "not 'copy-conn N PORT DESC'");
	memset(big, 'd', sizeof(big));
	memcpy(big, "copy-conn 1 445 ", 16);
	big[16 + 95] = '\0'; /* a description of 95 bytes: the longest */
	agent_taken(big, &l);
	ck_assert_uint_eq(strlen(l.desc), 95);
	big[16 + 95] = 'd';
	big[16 + 96] = '\0';
	AGENT_REFUSED(big, "not 'copy-conn N PORT DESC'");

	/* the plan and the figures: JSON objects with every key, counts whole from 0 to 1e15,
	 * times from 0 to a day (or null), text that fits */
	ck_assert_int_eq(pv_load_copy_line_plan(&p, &pb), PV_OK);
	snprintf(plan, sizeof(plan), "%.*s", (int)pb.len - 1, pb.data);
	agent_taken(plan, &l);
	ck_assert(strstr(plan, "\"files\":7,"));
	ck_assert(strstr(plan, "\"list_s\":0.125,"));
	agent_taken(subst(plan, "\"files\":7", "\"files\":1000000000000000"), &l);
	agent_taken(subst(plan, "\"list_s\":0.125", "\"list_s\":null"), &l);
	ck_assert(isnan(l.plan.list_s));
	agent_taken(subst(plan, "\"list_s\":0.125", "\"list_s\":86400"), &l);
	agent_taken(subst(plan, "{", "{\"later\":1,"), &l); /* a newer agent's key: left */
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":-1"), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":1000000000000001"), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":1e16"), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":7.5"), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":7.0"), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":\"7\""), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7", "\"files\":null"), "its plan");
	AGENT_REFUSED(subst(plan, "\"files\":7,", ""), "its plan");
	AGENT_REFUSED(subst(plan, "\"bytes\":4096", "\"bytes\":-4096"), "its plan");
	AGENT_REFUSED(subst(plan, "\"source_dirs\":4", "\"source_dirs\":1e300"), "its plan");
	AGENT_REFUSED(subst(plan, "\"list_s\":0.125", "\"list_s\":86400.5"), "its plan");
	AGENT_REFUSED(subst(plan, "\"list_s\":0.125", "\"list_s\":-0.5"), "its plan");
	AGENT_REFUSED(subst(plan, "\"list_s\":0.125", "\"list_s\":NaN"), "its plan");
	AGENT_REFUSED(subst(plan, "\"list_s\":0.125", "\"list_s\":Infinity"), "its plan");
	AGENT_REFUSED(subst(plan, "\"list_s\":0.125", "\"list_s\":1e999"), "its plan");
	AGENT_REFUSED(subst(plan, "\"list_s\":0.125", "\"list_s\":\"0.1\""), "its plan");
	AGENT_REFUSED(subst(plan, "\"first_skipped\":\"\"", "\"first_skipped\":null"), "its plan");
	memset(big, 'f', 256);
	big[256] = '\0'; /* 256 bytes: one too many */
	{
		char with[300];

		snprintf(with, sizeof(with), "\"first_skipped\":\"%.256s\"", big);
		AGENT_REFUSED(subst(plan, "\"first_skipped\":\"\"", with), "its plan");
		big[255] = '\0';
		snprintf(with, sizeof(with), "\"first_skipped\":\"%.255s\"", big);
		agent_taken(subst(plan, "\"first_skipped\":\"\"", with), &l);
		ck_assert_uint_eq(strlen(l.plan.first_skipped), 255);
	}
	AGENT_REFUSED(subst(plan, "}", "} x"), "its plan");
	AGENT_REFUSED(subst(plan, "}", "}{}"), "its plan");
	AGENT_REFUSED(subst(plan, "}", ""), "its plan");
	AGENT_REFUSED(subst(plan, "{", "{\"files\":8,"), "its plan"); /* a key twice */
	AGENT_REFUSED("copy-plan []", "its plan");
	AGENT_REFUSED("copy-plan 7", "its plan");
	AGENT_REFUSED("copy-plan x", "its plan");

	memset(&d, 0, sizeof(d));
	d.files = 5;
	d.put_s = 2;
	d.put_cpu = 50;
	d.put_top = 40;
	snprintf(d.speaks, sizeof(d.speaks), "SMB 3.1.1");
	for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++)
		d.classes[i].p50 = d.classes[i].p95 = 0.5;
	ck_assert_int_eq(pv_load_copy_line_done(&d, &db), PV_OK);
	snprintf(done, sizeof(done), "%.*s", (int)db.len - 1, db.data);
	agent_taken(done, &l);
	ck_assert(strstr(done, "\"put_cpu\":50.0,"));
	ck_assert(strstr(done, "\"p50\":0.5,"));
	agent_taken(subst(done, "\"put_cpu\":50.0", "\"put_cpu\":102400"), &l);
	AGENT_REFUSED(subst(done, "\"put_cpu\":50.0", "\"put_cpu\":102400.5"), "its figures");
	AGENT_REFUSED(subst(done, "\"put_top\":40.0", "\"put_top\":-1"), "its figures");
	AGENT_REFUSED(subst(done, "\"put_top\":40.0", "\"put_top\":102400.5"), "its figures");
	AGENT_REFUSED(subst(done, "\"put_s\":2.0", "\"put_s\":86401"), "its figures");
	AGENT_REFUSED(subst(done, "\"files\":5", "\"files\":-5"), "its figures");
	AGENT_REFUSED(subst(done, "\"files\":5", "\"files\":5.5"), "its figures");
	AGENT_REFUSED(subst(done, "\"removed_dirs\":0,", ""), "its figures");
	AGENT_REFUSED(subst(done, "\"speaks\":\"SMB 3.1.1\"", "\"speaks\":7"), "its figures");
	AGENT_REFUSED(subst(done, "\"p50\":0.5", "\"p50\":86400.5"), "its figures");
	AGENT_REFUSED(subst(done, "\"p95\":0.5", "\"p95\":-0.5"), "its figures");
	AGENT_REFUSED(subst(done, "\"files\":0,\"p50\"", "\"files\":-1,\"p50\""), "its figures");
	AGENT_REFUSED(subst(done, "\"files\":0,\"p50\":0.5,\"p95\":0.5}]",
			    "\"files\":0,\"p50\":0.5,\"p95\":0.5},{}]"),
		      "its figures"); /* six classes */
	AGENT_REFUSED(subst(done, ",{\"files\":0,\"p50\":0.5,\"p95\":0.5}]", "]"),
		      "its figures"); /* four */
	AGENT_REFUSED(subst(done, "\"classes\":[", "\"classes\":7,\"x\":["), "its figures");
	AGENT_REFUSED(
		subst(done, "[{\"files\":0,\"p50\":0.5,\"p95\":0.5}", "[{\"files\":0,\"p50\":0.5}"),
		"its figures"); /* a class without its p95 */
	AGENT_REFUSED(subst(done, "[{\"files\":0,\"p50\":0.5,\"p95\":0.5}", "[7"), "its figures");
	AGENT_REFUSED(subst(done, "}]}", "}]} x"), "its figures");
	memset(big, 's', 96);
	big[96] = '\0';
	{
		char with[200];

		snprintf(with, sizeof(with), "\"speaks\":\"%.96s\"", big);
		AGENT_REFUSED(subst(done, "\"speaks\":\"SMB 3.1.1\"", with), "its figures");
	}

	/* a NUL byte: whatever follows it is text of the line too, not its end */
	agent_refused("copy-tick 1 2 3 4 5\0 6", 21, "a NUL byte");
	agent_refused("copy-conn 1\0x 445 d", 20, "a NUL byte");
	agent_refused("copy-conn 0 445 \0\0d", 19, "a NUL byte");
	agent_refused("copy-conn 0 445 d\0", 18, "a NUL byte");
	{
		char with[2048];
		size_t n = (size_t)snprintf(with, sizeof(with), "%s", plan);

		with[n - 1] = '\0'; /* its closing brace */
		agent_refused(with, n, "a NUL byte");
	}

	/* none of the agent's words, or a word alone */
	AGENT_REFUSED("copy-tick ", "no copy- word at its start");
	AGENT_REFUSED("copy-plan ", "no copy- word at its start");
	AGENT_REFUSED("copy-tick", "no copy- word at its start");
	AGENT_REFUSED("copy-tock 1 2 3 4 5", "no copy- word at its start");
	AGENT_REFUSED("COPY-TICK 1 2 3 4 5", "no copy- word at its start");
	AGENT_REFUSED("", "no copy- word at its start");
	AGENT_REFUSED("Segmentation fault (core dumped)", "'Segmentation fault (core dumped)'");
	/* what is quoted: printable bytes, at most 119 of them */
	agent_refused("copy-x \x01\x7f\xc3\xa9\n", 12,
		      "): 'copy-x ?"
		      "?"
		      "?"
		      "?"
		      "?'");
	memset(big, 'q', sizeof(big));
	{
		char want[160];

		snprintf(want, sizeof(want), "): '%.119s...'", big);
		agent_refused(big, sizeof(big), want);
		snprintf(want, sizeof(want), "): '%.119s'", big);
		agent_refused(big, 119, want);
	}
	pv_buf_release(&pb, 0);
	pv_buf_release(&db, 0);
}
END_TEST

/* Out of memory while writing a line: PV_EIO, at each realloc the writer makes. */
START_TEST(copy_oom)
{
	struct pv_load_copy_config c;
	struct pv_load_copy_done d;
	struct pv_load_copy_tick t = {1, 2, 3, 4, 5};

	memset(&c, 0, sizeof(c));
	snprintf(c.server, sizeof(c.server), "srv");
	snprintf(c.dir, sizeof(c.dir), "/x");
	memset(&d, 0, sizeof(d));
	for (int w = 0; w < 4; w++) {
		struct pv_buf b = PV_BUF_INIT;
		int rc;

		pv_test_alloc_fail_at(1);
		rc = w == 0   ? pv_load_copy_config_put(&c, &b)
		     : w == 1 ? pv_load_copy_line_conn(1, 445, "x", &b)
		     : w == 2 ? pv_load_copy_line_tick(&t, &b)
			      : pv_load_copy_line_done(&d, &b);
		pv_test_alloc_ok();
		ck_assert_int_gt(pv_test_alloc_refused(), 0);
		ck_assert_msg(rc == PV_EIO && strstr(pv_errmsg(), "out of memory"),
			      "writer %d: %d %s", w, rc, pv_errmsg());
		pv_buf_release(&b, 0);
	}
}
END_TEST

/* PV_LOAD_SAMPLES=DIR: the fixture's results into DIR (see the file's header). */
START_TEST(samples)
{
	const char *dir = getenv("PV_LOAD_SAMPLES");
	struct pv_load_results r = results();
	static const struct {
		const char *name;
		int (*build)(const struct pv_load_results *, struct pv_buf *);
	} files[] = {{"load.txt", pv_load_report_txt},
		     {"load.csv", pv_load_report_csv},
		     {"load-kinds.csv", pv_load_report_kinds_csv},
		     {"load.json", pv_load_report_json},
		     {"load.svg", pv_load_report_svg}};

	if (!dir)
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct pv_buf b = PV_BUF_INIT;
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		ck_assert_int_eq(files[i].build(&r, &b), PV_OK);
		ck_assert_msg((f = fopen(path, "w")) != NULL, "cannot write %s", path);
		ck_assert_uint_eq(fwrite(b.data, 1, b.len, f), b.len);
		ck_assert_int_eq(fclose(f), 0);
		pv_buf_release(&b, 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("load");
	TCase *tc = tcase_create("load");

	tcase_add_test(tc, table);
	tcase_add_test(tc, rng_vectors);
	tcase_add_test(tc, sched_seed);
	tcase_add_test(tc, sched_shares);
	tcase_add_test(tc, ops_batch);
	tcase_add_test(tc, size_draw);
	tcase_add_test(tc, sched_learned_pace);
	tcase_add_test(tc, start_at_think);
	tcase_add_test(tc, gaps_as_answered);
	tcase_add_test(tc, gaps_thin_tail);
	tcase_add_test(tc, gaps_under);
	tcase_add_test(tc, sched_users);
	tcase_add_test(tc, sched_weights);
	tcase_add_test(tc, hist_buckets);
	tcase_add_test(tc, hist_quantiles);
	tcase_add_test(tc, counting);
	tcase_add_test(tc, summary);
	tcase_add_test(tc, answer_edges);
	tcase_add_test(tc, line_round_trip);
	tcase_add_test(tc, line_refused);
	tcase_add_test(tc, ready_line);
	tcase_add_test(tc, quantile_bounds);
	tcase_add_test(tc, quantile_intervals);
	tcase_add_test(tc, first_over);
	tcase_add_test(tc, proto);
	tcase_add_test(tc, proto_fileset);
	tcase_add_test(tc, proto_learned);
	tcase_add_test(tc, report_txt);
	tcase_add_test(tc, answer_lines);
	tcase_add_test(tc, answer_prose);
	tcase_add_test(tc, report_csv);
	tcase_add_test(tc, report_json);
	tcase_add_test(tc, xml_checker);
	tcase_add_test(tc, report_svg);
	tcase_add_test(tc, report_oom);
	tcase_add_test(tc, copy_config_round_trip);
	tcase_add_test(tc, copy_config_refused);
	tcase_add_test(tc, copy_agent_round_trip);
	tcase_add_test(tc, copy_agent_refused);
	tcase_add_test(tc, copy_oom);
	tcase_add_test(tc, samples);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
