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
#include "load/line.h"
#include "load/model.h"
#include "load/report.h"
#include "load/stats.h"
#include "util/err.h"

/* ---- the model ---- */

START_TEST(table)
{
	struct pv_load_config c;
	static const double weights[] = {15, 150, 40, 7, 15, 50, 15, 5, 15, 7, 7, 5};
	static const double limits[] = {2, 1, 2, 3, 3, 1, 2, 1, 1, 1, 2, 5};
	double sum = 0;

	pv_load_defaults(&c);
	ck_assert_uint_eq(c.rate, 331);
	ck_assert(c.late == 1 && c.overload == 1 && c.interval == 1 && c.seed == 1);
	for (int k = 0; k < PV_LOAD_KINDS; k++) {
		ck_assert(c.kind[k].weight == weights[k]);
		ck_assert(c.kind[k].limit == limits[k]);
		ck_assert_int_eq(pv_load_kind_of(pv_load_names[k]), k);
		sum += c.kind[k].weight;
	}
	ck_assert(sum == 331); /* FSCT's weights are per user-hour at its rate */
	ck_assert_ptr_null(pv_load_names[PV_LOAD_KINDS]);
	ck_assert_str_eq(pv_load_names[PV_LOAD_BROWSE], "browse");
	ck_assert_str_eq(pv_load_names[PV_LOAD_READ_FOLDER], "read_folder");
	ck_assert_int_eq(pv_load_kind_of("Browse"), -1);
	ck_assert_int_eq(pv_load_kind_of(""), -1);
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
	struct pv_load_config c;
	struct pv_load_sched s;

	pv_load_defaults(&c);
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
	struct pv_load_config c;
	struct pv_load_sched s;
	unsigned long count[PV_LOAD_KINDS] = {0};
	double total = 0, gap;
	enum pv_load_kind k;

	pv_load_defaults(&c);
	pv_load_sched_init(&s, &c, "cli1", 1);
	for (int i = 0; i < N; i++) {
		pv_load_next(&s, &gap, &k);
		ck_assert(gap >= 0 && isfinite(gap));
		ck_assert_int_lt(k, PV_LOAD_KINDS);
		total += gap;
		count[k]++;
	}
	ck_assert_msg(fabs(total / N / (3600.0 / 331) - 1) < 0.01, "mean gap %.4f s", total / N);
	for (int j = 0; j < PV_LOAD_KINDS; j++) {
		double want = c.kind[j].weight / 331 * N;

		ck_assert_msg(fabs(count[j] / want - 1) < 0.05, "%s: %lu of %d, expected %.0f",
			      pv_load_names[j], count[j], N, want);
	}
}
END_TEST

/* The same user gets the same schedule; another user, client or seed another one. */
START_TEST(sched_users)
{
	struct pv_load_config c, c2;
	struct pv_load_sched a, b, d, e, f;
	int same_bd = 0, same_be = 0, same_bf = 0;

	pv_load_defaults(&c);
	c2 = c;
	c2.seed = 2;
	pv_load_sched_init(&a, &c, "cli1", 7);
	pv_load_sched_init(&b, &c, "cli1", 7);
	pv_load_sched_init(&d, &c, "cli1", 8);
	pv_load_sched_init(&e, &c, "cli2", 7);
	pv_load_sched_init(&f, &c2, "cli1", 7);
	for (int i = 0; i < 100; i++) {
		double ga, gb, gd, ge, gf;
		enum pv_load_kind ka, kb, kd, ke, kf;

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
	struct pv_load_config c;
	struct pv_load_sched s;
	unsigned long count[PV_LOAD_KINDS] = {0};
	double gap, total = 0;
	enum pv_load_kind k;

	pv_load_defaults(&c);
	for (int j = 0; j < PV_LOAD_KINDS; j++)
		c.kind[j].weight = 0;
	c.kind[PV_LOAD_MKDIR].weight = 1;
	c.kind[PV_LOAD_READ_FOLDER].weight =
		3; /* the last kind: x * total rounding up lands here */
	c.rate = 3600;
	pv_load_sched_init(&s, &c, "x", 0);
	for (int i = 0; i < 40000; i++) {
		pv_load_next(&s, &gap, &k);
		count[k]++;
		total += gap;
	}
	ck_assert_uint_eq(count[PV_LOAD_MKDIR] + count[PV_LOAD_READ_FOLDER], 40000);
	ck_assert(fabs(count[PV_LOAD_READ_FOLDER] / 30000.0 - 1) < 0.05);
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
	struct pv_load_config c;
	const struct pv_load_counts *n = &f.kind[PV_LOAD_BROWSE];
	bool late;

	pv_load_defaults(&c);
	memset(&f, 0, sizeof(f));
	ck_assert(!pv_load_count_start(&f, &c, PV_LOAD_BROWSE, 1.0)); /* 1 s is not late */
	pv_load_count_end(&f, &c, PV_LOAD_BROWSE, false, 1.0, false); /* nor is 1 s over 1 s */
	late = pv_load_count_start(&f, &c, PV_LOAD_BROWSE, 1.01);
	ck_assert(late);
	pv_load_count_end(&f, &c, PV_LOAD_BROWSE, late, 1.5, false); /* late and over: once */
	ck_assert(!pv_load_count_start(&f, &c, PV_LOAD_BROWSE, 0));
	pv_load_count_end(&f, &c, PV_LOAD_BROWSE, false, 1.2, false); /* over only */
	ck_assert(!pv_load_count_start(&f, &c, PV_LOAD_BROWSE, 0));
	pv_load_count_end(&f, &c, PV_LOAD_BROWSE, false, 9, true); /* an error: no latency */
	ck_assert_uint_eq(n->started, 4);
	ck_assert_uint_eq(pv_load_hist_count(&n->lat), 3);
	ck_assert_uint_eq(n->errors, 1);
	ck_assert_uint_eq(n->late, 1);
	ck_assert_uint_eq(n->over_limit, 2);
	ck_assert_uint_eq(n->overloaded, 2);
	ck_assert_uint_eq(pv_load_hist_count(&n->lat), 3);
	ck_assert(n->lat.max == 1.5);
	/* the limit is the kind's */
	pv_load_count_end(&f, &c, PV_LOAD_READ_FOLDER, false, 4.9, false);
	ck_assert_uint_eq(f.kind[PV_LOAD_READ_FOLDER].over_limit, 0);
}
END_TEST

/* n scenarios of kind k taking secs each, the first nlate of them late, into f. */
static void run(struct pv_load_figs *f, const struct pv_load_config *c, enum pv_load_kind k,
		unsigned n, unsigned nlate, double secs)
{
	for (unsigned i = 0; i < n; i++) {
		bool late = pv_load_count_start(f, c, k, i < nlate ? 2.0 : 0.1);

		pv_load_count_end(f, c, k, late, secs, false);
	}
}

static void errors(struct pv_load_figs *f, const struct pv_load_config *c, enum pv_load_kind k,
		   unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		pv_load_count_start(f, c, k, 0);
		pv_load_count_end(f, c, k, false, 0.2, true);
	}
}

/* The fixture: a ramp of 20, 40 and 60 users, each step two intervals of 50 s from two
 * clients; 40 users is the answer, 60 overloads (and has errors). */
static struct pv_load_config cfg;
static struct pv_load_summary sums[3];

static void fixture(void)
{
	static struct pv_load_figs a, b;
	struct pv_load_step st;

	pv_load_defaults(&cfg);
	for (int s = 0; s < 3; s++) {
		unsigned users = 20 * (s + 1);

		pv_load_step_init(&st, users);
		for (int i = 1; i <= 2; i++) {
			memset(&a, 0, sizeof(a));
			memset(&b, 0, sizeof(b));
			a.seq = b.seq = (uint64_t)i;
			a.secs = 50;
			b.secs = 50.002;
			a.connected = b.connected = users / 2;
			if (s == 0) {
				run(&a, &cfg, PV_LOAD_BROWSE, 38, 0, 0.010);
				run(&b, &cfg, PV_LOAD_OPEN_READ, 8, 0, 0.030);
				run(&b, &cfg, PV_LOAD_BROWSE, 46, 0, 0.012);
			} else if (s == 1) {
				run(&a, &cfg, PV_LOAD_BROWSE, 75, i == 1, 0.012);
				run(&a, &cfg, PV_LOAD_OPEN_READ, 17, 0, 0.040);
				run(&b, &cfg, PV_LOAD_BROWSE, 75, 0, 0.020);
				run(&b, &cfg, PV_LOAD_OPEN_READ, 17, 0, 0.045);
			} else {
				run(&a, &cfg, PV_LOAD_BROWSE, 90, 0, 0.600);
				run(&a, &cfg, PV_LOAD_BROWSE, 10, 0, 1.500);
				run(&b, &cfg, PV_LOAD_OPEN_READ, 24, 0, 0.500);
				run(&b, &cfg, PV_LOAD_BROWSE, 100, i == 2 ? 10 : 0, 0.700);
				errors(&b, &cfg, PV_LOAD_UPLOAD, 1);
				if (i == 2) /* a user's connection was lost */
					b.connected--, b.failed++;
			}
			pv_load_figs_merge(&a, &b);
			ck_assert_uint_eq(a.seq, (uint64_t)i);
			ck_assert(a.secs == 50.002);
			pv_load_step_add(&st, &a);
		}
		if (s < 2)
			st.cpu = 14.2 + 12.5 * s;
		pv_load_summarize(&st, &cfg, &sums[s]);
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
	ck_assert_uint_eq(sums[0].kind[PV_LOAD_BROWSE].n.started, 168);
	ck_assert_uint_eq(sums[1].all.n.overloaded, 1);
	ck_assert(fabs(sums[1].all.overload - 100.0 / 368) < 1e-12);
	ck_assert(fabs(sums[1].kind[PV_LOAD_BROWSE].overload - 100.0 / 300) < 1e-12);
	ck_assert_uint_eq(sums[2].connected, 59); /* the fewest at any interval's end */
	ck_assert_uint_eq(sums[2].failed, 1);
	ck_assert_uint_eq(sums[2].all.n.errors, 2);
	ck_assert_uint_eq(sums[2].all.n.over_limit, 20);
	ck_assert_uint_eq(sums[2].all.n.overloaded, 30);
	ck_assert(isnan(sums[2].cpu));
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
	struct pv_load_config c;
	struct pv_buf b = PV_BUF_INIT;

	pv_load_defaults(&c);
	memset(&f, 0, sizeof(f));
	f.seq = 3;
	f.secs = 1.0625;
	f.connected = 50;
	f.failed = 2;
	run(&f, &c, PV_LOAD_BROWSE, 3, 1, 0.0071);
	run(&f, &c, PV_LOAD_BROWSE, 2, 0, 1.25);
	run(&f, &c, PV_LOAD_READ_FOLDER, 1, 0, 1500);
	run(&f, &c, PV_LOAD_MKDIR, 1, 0, 0);
	errors(&f, &c, PV_LOAD_UPLOAD, 2);
	pv_load_count_end(&f, &c, PV_LOAD_RENAME, false, 0.5, false); /* started before */
	ck_assert_int_eq(pv_load_line_encode(&f, &b), PV_OK);
	ck_assert_uint_eq(b.data[b.len - 1], '\n');
	ck_assert_ptr_null(memchr(b.data, '\n', b.len - 1));
	ck_assert_msg(!strncmp(b.data,
			       "{\"load\":2,\"i\":3,\"secs\":1.0625,\"users\":50,\"failed\":2,"
			       "\"kinds\":{\"upload\":{\"started\":2,\"errors\":2,",
			       93),
		      "%s", b.data);
	ck_assert(strstr(b.data,
			 "\"mkdir\":{\"started\":1,\"errors\":0,\"late\":0,"
			 "\"over_limit\":0,\"overloaded\":0,\"max\":0.0,\"hist\":[[0,1]]}"));
	ck_assert(strstr(b.data, "\"read_folder\":{\"started\":1,\"errors\":0,"
				 "\"late\":0,\"over_limit\":1,\"overloaded\":1,\"max\":1500.0,"
				 "\"hist\":[[169,1]]}"));
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

#define KIND_OK "\"started\":1,\"errors\":0,\"late\":0,\"over_limit\":0,\"overloaded\":0"
#define HEAD	"{\"load\":2,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"kinds\":"

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

#define R1 "ready {\"connected\":-1,\"failed\":0}"
#define R2 "ready {\"connected\":1}"

START_TEST(ready_line)
{
	struct pv_buf b = PV_BUF_INIT;
	unsigned c = 7, f = 7;
	char first[64] = "x";

	ck_assert_int_eq(pv_load_ready_encode(98, 2, "cli1-u3: refused (LOGON_FAILURE)", &b),
			 PV_OK);
	ck_assert_str_eq(b.data, "ready {\"users\":100,\"connected\":98,\"failed\":2,\"error\":"
				 "\"cli1-u3: refused (LOGON_FAILURE)\"}\n");
	ck_assert_int_eq(pv_load_ready_decode(b.data, b.len, &c, &f, first, sizeof(first)), PV_OK);
	ck_assert_uint_eq(c, 98);
	ck_assert_uint_eq(f, 2);
	ck_assert_str_eq(first, "cli1-u3: refused (LOGON_FAILURE)");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_ready_encode(3, 0, NULL, &b), PV_OK);
	ck_assert_int_eq(pv_load_ready_decode(b.data, b.len, &c, &f, first, sizeof(first)), PV_OK);
	ck_assert(c == 3 && f == 0 && first[0] == '\0');
	/* refused, and nothing set */
	c = f = 7;
	ck_assert_int_eq(pv_load_ready_decode(R1, strlen(R1), &c, &f, first, sizeof(first)),
			 PV_EREMOTE);
	ck_assert_int_eq(pv_load_ready_decode(R2, strlen(R2), &c, &f, first, sizeof(first)),
			 PV_EREMOTE);
	ck_assert_int_eq(pv_load_ready_decode("steady {}", 9, &c, &f, first, sizeof(first)),
			 PV_EREMOTE);
	ck_assert(c == 7 && f == 7);
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(line_refused)
{
	char big[PV_LOAD_LINE_MAX + 10];
	static struct pv_load_figs f;

	ck_assert_int_eq(pv_load_line_decode(HEAD "{}}", strlen(HEAD "{}}"), &f), PV_OK);
	ck_assert_int_eq(pv_load_line_decode(HEAD "{\"browse\":{" KIND_OK
						  ",\"max\":0.01,\"hist\":[[49,1]]}}}",
					     strlen(HEAD "{\"browse\":{" KIND_OK
							 ",\"max\":0.01,\"hist\":[[49,1]]}}}"),
					     &f),
			 PV_OK);
	refused("", "'[' or '{' expected");
	refused("hello", "'[' or '{' expected near 'hello'");
	refused("[1,2]", "not an object");
	refused("{\"load\":2}", "no \"i\"");
	refused(HEAD "{}, \"x\":1}", "unknown key \"x\"");
	refused(HEAD "{}, \"load\":2}", "duplicate object key");
	refused("{\"load\":1,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"kinds\":{}}",
		"format 1, not 2: the client runs another version of provision");
	refused("{\"load\":2,\"i\":0,\"secs\":1,\"users\":2,\"failed\":0,\"kinds\":{}}",
		"\"i\" is not an integer from 1 to");
	refused("{\"load\":2,\"i\":1,\"secs\":0,\"users\":2,\"failed\":0,\"kinds\":{}}",
		"\"secs\" is not a number");
	refused("{\"load\":2,\"i\":1,\"secs\":1,\"users\":-2,\"failed\":0,\"kinds\":{}}",
		"\"users\" is not an integer from 0 to 100000000");
	refused("{\"load\":2,\"i\":1,\"secs\":1,\"users\":2.0,\"failed\":0,\"kinds\":{}}",
		"\"users\" is not an integer");
	refused(HEAD "[]}", "\"kinds\" is not an object");
	refused(HEAD "{\"browze\":{}}}", "unknown scenario kind \"browze\"");
	refused(HEAD "{\"browse\":{}}}", "kind 'browse': no \"started\"");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1]],\"x\":0}}}",
		"kind 'browse': unknown key \"x\"");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"completed\":1,\"max\":0.01,\"hist\":[[49,1]]}}}",
		"kind 'browse': unknown key \"completed\""); /* the histogram's count says it */
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,1],[49,0]]}}}",
		"\"hist\" item 1 is not [bucket, count] with buckets rising");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[170,1]]}}}",
		"buckets rising from 0 to 169");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":[[49,0]]}}}",
		"has a count that is not from 1");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.01,\"hist\":{}}}}",
		"\"hist\" is not a list");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":0.5,\"hist\":[[49,1]]}}}",
		"\"max\" 0.5 is not in the histogram's top bucket 49");
	refused(HEAD "{\"browse\":{" KIND_OK ",\"max\":-1,\"hist\":[[49,1]]}}}",
		"\"max\" is not a number from 0");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":2,"
		     "\"over_limit\":0,\"overloaded\":2,\"max\":0,\"hist\":[]}}}",
		"more late (2) than started (1)");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":0,"
		     "\"over_limit\":1,\"overloaded\":1,\"max\":0,\"hist\":[]}}}",
		"more over the limit (1) than completed (0)");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":1,"
		     "\"over_limit\":0,\"overloaded\":0,\"max\":0,\"hist\":[]}}}",
		"overloaded (0) is not from late (1) to late + over_limit");
	refused(HEAD "{\"browse\":{\"started\":1,\"errors\":0,\"late\":0,"
		     "\"over_limit\":0,\"overloaded\":0,\"max\":3,\"hist\":[]}}}",
		"\"max\" is 3 with nothing completed");
	refused("{\"load\":2,\"i\":1,\"secs\":1,\"users\":2,\"failed\":0,\"kinds\":{}} {}",
		"end of file expected");
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
		"provision load: 331 scenarios per user-hour; a scenario is overloaded when it "
		"starts over 1 s late or takes longer than its limit; a step counts when its "
		"overload is at most 1% with no error and every user connected\n"
		"srv, run 20261130-121500\n"
		"\n"
		" users  scen/s  expected  overload %  errors  median ms    p95 ms  server CPU %\n"
		"    20    1.84      1.84        0.00       0       11.5      30.0          14.2\n"
		"    40    3.68      3.68        0.27       0       20.5      44.2          26.7\n"
		"    60    4.48      5.52        6.67       2      590.0     714.8             -  "
		"1 user not connected\n"
		"\n"
		"the server carried 40 users without overload (overload 0.3% at 40; 6.7%, 2 "
		"errors, "
		"1 of 60 users not connected at 60)\n";

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
	ck_assert_str_eq(b.data, "the server carried 40 users without overload, the most the ramp "
				 "tried (overload 0.3% at 40)");
	pv_buf_reset(&b);
	r.steps = sums + 2;
	r.n = 1;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "the server carried no step without overload (overload 6.7%, 2 "
				 "errors, 1 of 60 users not connected at 60, the fewest users "
				 "tried)");
	pv_buf_reset(&b);
	r.n = 0;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "no step was measured");
	pv_buf_reset(&b);
	r = results();
	sums[1].lost = 1;
	ck_assert_int_eq(pv_load_answer_line(&r, &b), PV_OK);
	ck_assert_str_eq(b.data, "the server carried 20 users without overload (overload 0.0% at "
				 "20; 0.3%, 1 client lost at 40)");
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(report_csv)
{
	struct pv_load_results r = results();
	struct pv_buf b = PV_BUF_INIT;
	static const char want[] =
		"users,seconds,connected,not_connected,clients_lost,scen_per_s,expected_per_s,"
		"server_cpu_pct,carried,started,completed,errors,late,over_limit,overloaded,"
		"overload_pct,median_ms,p95_ms,max_ms\n"
		"20,100.004,20,0,0,1.8399,1.8389,14.2,1,184,184,0,0,0,0,0.000,11.548,30.000,30."
		"000\n"
		"40,100.004,40,0,0,3.6799,3.6778,26.7,1,368,368,0,1,0,1,0.272,20.535,44.242,45."
		"000\n"
		"60,100.004,59,1,0,4.4798,5.5167,,0,450,448,2,10,20,30,6.667,589.975,714.771,"
		"1500.000\n";

	ck_assert_int_eq(pv_load_report_csv(&r, &b), PV_OK);
	ck_assert_msg(!strcmp(b.data, want), "got:\n%s", b.data);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_load_report_kinds_csv(&r, &b), PV_OK);
	ck_assert(!strncmp(b.data,
			   "users,kind,weight,limit_s,started,completed,errors,late,over_limit,"
			   "overloaded,overload_pct,median_ms,p95_ms,max_ms\n"
			   "20,upload,15,2,0,0,0,0,0,0,0.000,,,\n"
			   "20,browse,150,1,168,168,0,0,0,0,0.000,11.548,11.548,12.000\n",
			   200));
	ck_assert(strstr(b.data, "\n60,upload,15,2,2,0,2,0,0,0,0.000,,,\n"));
	ck_assert(strstr(b.data, "\n60,read_folder,5,5,0,0,0,0,0,0,0.000,,,\n"));
	{
		size_t lines = 0;

		for (size_t i = 0; i < b.len; i++)
			lines += b.data[i] == '\n';
		ck_assert_uint_eq(lines, 1 + 3 * PV_LOAD_KINDS);
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
	ck_assert(pv_json_integer(pv_json_get(o, "version"), &v) && v == 1);
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
	a = pv_json_get(o, "answer");
	ck_assert(pv_json_integer(pv_json_get(a, "users"), &v) && v == 40);
	ck_assert(pv_json_integer(pv_json_get(a, "step"), &v) && v == 2);
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
	ck_assert(!strncmp(b.data,
			   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://"
			   "www.w3.org/2000/svg\" width=\"800\" height=\"500\"",
			   94));
	/* one marker per step per series; the server's CPU only where it was measured */
	ck_assert_int_eq(count_of(b.data, "class=\"pt scen\""), 3);
	ck_assert_int_eq(count_of(b.data, "class=\"pt overload\""), 3);
	ck_assert_int_eq(count_of(b.data, "class=\"pt cpu\""), 2);
	ck_assert_int_eq(count_of(b.data, "<polyline class=\"expected\""), 1);
	ck_assert_int_eq(count_of(b.data, "class=\"threshold\""), 1);
	ck_assert_int_eq(count_of(b.data, "class=\"answer\""), 1);
	ck_assert(strstr(b.data, ">carried 40 users</text>"));
	ck_assert(strstr(b.data, ">srv &lt;&amp;&gt; &quot;run&quot; &apos;A&apos;?</text>"));
	ck_assert(strstr(b.data, "<title>60 users: overload 6.67%</title>"));
	ck_assert(strstr(b.data, ">users (all clients)</text>"));
	ck_assert(strstr(b.data, ">scenarios/s</text>"));
	/* x from 0 to 60 users in steps of 20 (ticks 0, 20, 40, 60); y to 6 scenarios/s */
	ck_assert(strstr(b.data, "text-anchor=\"middle\">60</text>"));
	ck_assert(strstr(b.data, "text-anchor=\"end\">6</text>"));
	ck_assert_int_eq(count_of(b.data, "</svg>"), 1);
	pv_buf_reset(&b);
	/* no step and no CPU: still a well-formed plot, without markers */
	r.n = 0;
	r.title = NULL;
	ck_assert_int_eq(pv_load_report_svg(&r, &b), PV_OK);
	ck_assert_ptr_null(xml_check(b.data, &elements));
	ck_assert_int_eq(count_of(b.data, "class=\"pt "), 0);
	ck_assert(strstr(b.data, "server CPU % (not measured)"));
	pv_buf_release(&b, 0);
}
END_TEST

/* Out of memory at any point of a builder: PV_EIO, nothing leaked (ASan). */
START_TEST(report_oom)
{
	struct pv_load_results r = results();
	int (*builders[])(const struct pv_load_results *, struct pv_buf *) = {
		pv_load_report_txt, pv_load_report_csv, pv_load_report_kinds_csv,
		pv_load_report_svg, pv_load_report_json};

	for (size_t i = 0; i < sizeof(builders) / sizeof(builders[0]); i++)
		for (long at = 1; at < 12; at++) {
			struct pv_buf b = PV_BUF_INIT;
			int rc;

			pv_test_alloc_fail_at(at);
			rc = builders[i](&r, &b);
			pv_test_alloc_ok();
			ck_assert_msg(rc == PV_EIO || rc == PV_OK, "builder %zu at %ld: %d", i, at,
				      rc);
			if (rc == PV_OK)
				ck_assert(!pv_buf_failed(&b));
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
	tcase_add_test(tc, report_txt);
	tcase_add_test(tc, answer_lines);
	tcase_add_test(tc, report_csv);
	tcase_add_test(tc, report_json);
	tcase_add_test(tc, xml_checker);
	tcase_add_test(tc, report_svg);
	tcase_add_test(tc, report_oom);
	tcase_add_test(tc, samples);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
