/* load/model.h: the built-in load driver's schedules (docs/load.md): from the workload's
 * settings (playbooks/workload.h: the scenario kinds, weights, limits, rate), each user's
 * schedule: scenario starts at exponentially distributed gaps (a learned workload's at its
 * capture's), the kind drawn by weight, from a seeded generator so that a run can be repeated
 * and users differ.
 *
 * Pure: no I/O, no clock, no global state. */
#ifndef PV_LOAD_MODEL_H
#define PV_LOAD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "playbooks/workload.h"

/* xoshiro256** 1.0 (Blackman and Vigna, 2018): a small, fast generator with a 2^256 - 1
 * period; not for secrets. */
struct pv_load_rng {
	uint64_t s[4]; /* never all zero */
};

uint64_t pv_load_rng_next(struct pv_load_rng *r);
/* A double in [0, 1), from the top 53 bits of the next output. */
double pv_load_rng_unit(struct pv_load_rng *r);

/* One user's schedule. */
struct pv_load_sched {
	struct pv_load_rng rng;
	double mean;				/* seconds between starts on average: 3600 / rate */
	double cum[PV_PLAYBOOK_WORKLOAD_KINDS]; /* cumulative weights */
	/* a learned workload's pace (pv_load_next_after): the scale of the learned time from a
	 * start to the next (the kind's length and a think time) that makes its mean 3600 /
	 * rate; 0: exponential gaps */
	double pace;
	const struct pv_playbook_workload_learned *learned;
};

/* The schedule of user number user of client: its generator is seeded with HMAC-SHA256 (keyed
 * with c->seed) of the client's name and the user number, so the same (seed, client, user)
 * gives the same schedule on every run and host, and any two users differ. c must have
 * rate >= 1 and a weight above 0 (the playbook checks both). */
void pv_load_sched_init(struct pv_load_sched *s, const struct pv_playbook_workload *c,
			const char *client, unsigned user);
/* The next scenario: *gap seconds after the previous start (exponential, mean 3600 / rate),
 * of kind *kind (drawn by weight; a kind of weight 0 never comes). */
void pv_load_next(struct pv_load_sched *s, double *gap, enum pv_playbook_workload_kind *kind);
/* The same after the learned kind lk (of s's workload; -1: none) was started: with the
 * think times learned (activity.think's quantiles) and only the learned kind weighed, *gap
 * is the capture's: lk's length and a think time drawn from the quantiles, both scaled by
 * s->pace, so that a script's activities follow each other as closely as in the capture and
 * a person's have its pauses, at the rate on average, and *think (when not NULL) is that
 * think time, scaled; else as pv_load_next, *think -1. */
void pv_load_next_after(struct pv_load_sched *s, int lk, double *gap,
			enum pv_playbook_workload_kind *kind, double *think);
/* When the next activity may start, of a learned activity whose last request was sent at end,
 * with the think time think after it (pv_load_next_after; -1: none; learn measures it from
 * that request to the next), the schedule's next start planned: end + think, the capture's
 * think time itself, while that is within slack seconds of planned (the workload's late / 2:
 * never late by itself), else planned - slack or planned + slack. An activity longer or
 * shorter than its kind's mean then moves the user on its schedule, not the think time after
 * it; the user's lead or lag, a random walk of those differences, stays within slack, so the
 * rate holds and a start late by more than `late` is the server's. Started at planned (or at
 * once when behind it), each think time was widened or cut by how far the activity's length
 * was from its kind's mean: a script's 0.6 ms think times, p50, replayed as 1.9 ms, and its
 * 50 ms pauses cut to 3 to 40 ms. With think -1: planned. */
double pv_load_start_at(double planned, double end, double think, double slack);
/* A time drawn from learned quantiles for u in [0, 1): log-linear between two levels (linear
 * from 0 s); and their mean, in seconds (0 with none learned). */
double pv_load_quantiles_draw(const struct pv_playbook_workload_quantiles *l, double u);

/* A learned read's or write's size from g, at most max: its power-of-two bucket k drawn by the
 * buckets' cumulated shares cum (PV_PLAYBOOK_WORKLOAD_SIZE_BINS of them, the last > 0), then
 * within it (from lo = 2^(k-1) up to below 2^k; 1 byte for the empty ones) to the bucket's
 * mean (mean[k]; 0: not learned, drawn evenly): lo itself with the chance p, else evenly, p
 * making the mean (3 - 2 mean / lo, 0 to 1), as a client's reads of 64 KiB exactly sit at
 * the bottom of their bucket. */
uint32_t pv_load_size_draw(const double *cum, const double *mean, uint32_t max,
			   struct pv_load_rng *g);
double pv_load_quantiles_mean(const struct pv_playbook_workload_quantiles *l);

/* The gaps within a learned activity as this replay's server answers (pv_load_gaps_*): a
 * gap of the capture is its server's time and its client's; the replay waits a gap drawn from
 * them from each request, or at least until its answer came, so with its answers' times E the
 * replay's gap is max(G', E). G' is drawn so that the gap follows the capture's distribution G
 * wherever this server answers faster than the capture's gaps (F_G' = F_G / F_E, made a CDF
 * by a weighted isotonic fit: model.c's gaps_table), not max(G, E), longer than G. The answers'
 * times are kept on a log scale (16 bins a decade, 10 us to 10 s) and the table is made again every
 * PV_LOAD_GAPS_EVERY answers. */
#define PV_LOAD_GAPS_BINS  96
#define PV_LOAD_GAPS_EVERY 256
#define PV_LOAD_GAPS_MIN   64 /* answers before the table is used: the capture's gaps alone */
struct pv_load_gaps {
	uint64_t n, at;			   /* answers kept; n when the table was made */
	uint32_t b[PV_LOAD_GAPS_BINS + 2]; /* below 10 us, the bins, 10 s and more */
	double r[PV_LOAD_GAPS_BINS + 1];   /* at each bin's lower edge and the last's upper: F_G' */
};
/* An answer that took seconds, kept (the table made again when due, of g). */
void pv_load_gaps_add(struct pv_load_gaps *s, const struct pv_playbook_workload_quantiles *g,
		      double seconds);
/* A gap G' for u in [0, 1): of the table once PV_LOAD_GAPS_MIN answers were kept, else of g's
 * quantiles (pv_load_quantiles_draw). */
double pv_load_gaps_draw(const struct pv_load_gaps *s,
			 const struct pv_playbook_workload_quantiles *g, double u);
/* The same, drawn with r, and under max when max > 0: drawn again up to PV_LOAD_GAP_TRIES
 * times, then max (a replay holding no file open: a capture's activity ended at a gap over
 * activity.gap with none open, so its gaps within one never were; drawn from all of them, a
 * pause after the last CLOSE ended the activity on the wire: smbclient's 16.9 requests an
 * activity were 11.6). */
#define PV_LOAD_GAP_TRIES 16
double pv_load_gaps_draw_under(const struct pv_load_gaps *s,
			       const struct pv_playbook_workload_quantiles *g, double max,
			       struct pv_load_rng *r);
/* The learned quantiles' share at or under x seconds (0 to 1; log-linear between two levels). */
double pv_load_quantiles_cdf(const struct pv_playbook_workload_quantiles *g, double x);

/* The ops loop's batches (`provision load --ops`): after a turn that found ready connections
 * fewer than PV_LOAD_OPS_BATCH, a loop of PV_LOAD_OPS_BATCH_USERS users or more lets the
 * microseconds returned pass before it looks again, so that its next turn takes several
 * answers; 0: it sleeps until one comes. The wait is PV_LOAD_OPS_BATCH_US_USER a user, from
 * PV_LOAD_OPS_BATCH_US_MIN to _MAX: a small part of a round trip, which each user's request
 * in the server's queue stretches. A wake for each answer was most of the client's CPU, and
 * an interrupt sent from the server's CPU (costly in a VM: taken from the server); with fewer
 * users the wait idles the server (8 users: 19% fewer operations, the same CPU each). */
#define PV_LOAD_OPS_BATCH	  4
#define PV_LOAD_OPS_BATCH_USERS	  16
#define PV_LOAD_OPS_BATCH_US_USER 4
#define PV_LOAD_OPS_BATCH_US_MIN  100
#define PV_LOAD_OPS_BATCH_US_MAX  250
unsigned pv_load_ops_batch_us(size_t users, size_t ready);

#endif
