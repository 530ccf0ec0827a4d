/* load/stats.h: the load driver's figures: latency histograms, the counts of one interval (what
 * a client prints each second, load/line.h), a step's figures merged over its intervals and
 * clients, the step's summary, and the answer of a ramp (docs/load.md).
 *
 * Histograms have fixed log-scale buckets so that those of many clients and intervals merge
 * exactly: 24 buckets per decade from 100 us to 1000 s (each 10.07% wide), one below 100 us and
 * one from 1000 s up. A quantile is read as the geometric middle of its bucket (never above the
 * maximum), so it is within 4.92% (10^(1/48) - 1) of the true value between 100 us and 1000 s;
 * below 100 us it reads 100 us at most, from 1000 s up it reads the maximum. The maximum is kept
 * exactly.
 *
 * Pure: no I/O, no clock. */
#ifndef PV_LOAD_STATS_H
#define PV_LOAD_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/model.h"

#define PV_LOAD_HIST_LOW	1e-4 /* seconds: where bucket 1 starts */
#define PV_LOAD_HIST_PER_DECADE 24
#define PV_LOAD_HIST_DECADES	7 /* up to 1000 s */
/* bucket 0: below 100 us; 1..168: the log-scale ones; 169: 1000 s and more */
#define PV_LOAD_BUCKETS (PV_LOAD_HIST_PER_DECADE * PV_LOAD_HIST_DECADES + 2)

struct pv_load_hist {
	double max; /* seconds, exact; 0 when empty */
	uint64_t n[PV_LOAD_BUCKETS];
};

/* The bucket of a latency in seconds (a negative or NaN one counts as 0). */
unsigned pv_load_bucket(double secs);
/* Where bucket b starts and ends, in seconds (bucket 0 starts at 0; the last ends at
 * INFINITY). */
double pv_load_bucket_low(unsigned b);
double pv_load_bucket_high(unsigned b);

void pv_load_hist_add(struct pv_load_hist *h, double secs);
/* How many it holds: the sum of n[]. */
uint64_t pv_load_hist_count(const struct pv_load_hist *h);
void pv_load_hist_merge(struct pv_load_hist *dst, const struct pv_load_hist *src);
/* The q-quantile (0 < q <= 1) by nearest rank, read as said above; 0 for an empty one. */
double pv_load_hist_quantile(const struct pv_load_hist *h, double q);

/* One kind's counts over an interval (or many merged): primary counts only. How many ended
 * well (completed) is lat's count. */
struct pv_load_counts {
	uint64_t started;	 /* scenarios started */
	uint64_t errors;	 /* ended in an error (not in lat) */
	uint64_t late;		 /* started more than config.late seconds after their time */
	uint64_t over_limit;	 /* completed, but took longer than the kind's limit */
	uint64_t overloaded;	 /* late or over the limit, each scenario counted once: at its start
				  * when late, else at its end when over the limit */
	struct pv_load_hist lat; /* the latencies of those that ended well */
};

/* What one client prints for one interval (load/line.h), or the same interval of many
 * clients merged. */
struct pv_load_figs {
	uint64_t seq;	    /* the interval, from 1 */
	double secs;	    /* its length as measured by the client */
	unsigned connected; /* users with a working connection at the interval's end */
	unsigned failed;    /* users without one then: their connection failed or was lost */
	struct pv_load_counts kind[PV_LOAD_KINDS];
};

/* Counting, as the driver goes. A scenario of kind k started delay seconds after its time:
 * returns whether it is late (keep it for pv_load_count_end). */
bool pv_load_count_start(struct pv_load_figs *f, const struct pv_load_config *c,
			 enum pv_load_kind k, double delay);
/* It ended, secs after its start, in an error or not; late as pv_load_count_start said. */
void pv_load_count_end(struct pv_load_figs *f, const struct pv_load_config *c, enum pv_load_kind k,
		       bool late, double secs, bool error);

void pv_load_counts_merge(struct pv_load_counts *dst, const struct pv_load_counts *src);
/* The same interval of another client into dst: counts and users add up, secs is the longer
 * one, seq stays dst's. */
void pv_load_figs_merge(struct pv_load_figs *dst, const struct pv_load_figs *src);

/* A step: its measured intervals (each already merged across clients) added one by one. */
struct pv_load_step {
	unsigned users;	    /* the step's users, all clients together (the ramp's figure) */
	unsigned lost;	    /* clients lost during the step (the caller counts them) */
	double cpu;	    /* the server's mean CPU % over the step; NAN when not measured */
	unsigned intervals; /* intervals added */
	double secs;	    /* their lengths added */
	unsigned connected; /* the fewest users connected at the end of any interval */
	unsigned failed;    /* the most users without a connection at the end of any interval */
	struct pv_load_counts kind[PV_LOAD_KINDS];
};

void pv_load_step_init(struct pv_load_step *s, unsigned users);
void pv_load_step_add(struct pv_load_step *s, const struct pv_load_figs *f);

/* Latencies of one kind (or all) in a step, in seconds. */
struct pv_load_lat {
	uint64_t n; /* scenarios completed */
	double median, p95, max;
};

/* One kind's figures in a step: its counts, and what is read from them. */
struct pv_load_kind_sum {
	struct pv_load_counts n; /* as counted */
	double overload;	 /* percent: n.overloaded / n.started (0 when none started) */
	struct pv_load_lat lat;	 /* n.lat read: completed (lat.n), median, p95, max */
};

/* A step's figures, as the results show them. */
struct pv_load_summary {
	unsigned users, connected, failed, lost; /* as in struct pv_load_step */
	double secs;
	double rate;		     /* scenarios completed per second */
	double expected;	     /* users x config.rate / 3600 */
	double cpu;		     /* the server's mean CPU %; NAN when not measured */
	struct pv_load_kind_sum all; /* every kind together */
	struct pv_load_kind_sum kind[PV_LOAD_KINDS];
};

void pv_load_summarize(const struct pv_load_step *s, const struct pv_load_config *c,
		       struct pv_load_summary *out);

/* Whether a step counts for the answer: scenarios started, overload <= threshold (percent), no
 * error, every user connected throughout and no client lost. */
bool pv_load_carried(const struct pv_load_summary *s, double threshold);
/* The answer of a ramp: the index of the step with the most users that counts (its users in
 * *users), or -1 when none does (*users 0). */
long pv_load_answer(const struct pv_load_summary *steps, size_t n, double threshold,
		    unsigned *users);

#endif
