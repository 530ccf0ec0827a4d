/* load/summary.h: a step of a ramp as every result shows it: the one model of a step's
 * outcome. The run makes it from the clients' figures (load/stats.h, pv_load_summarize) for
 * its table, load.txt, load.csv, load.json and manifest.json (load/report.h); results/ reads it
 * back from load.json (results/results.h) for report.html and compare. Then the answer of a
 * ramp: which step counts, the most users carried, the step over it, and the client cores a
 * client-bound step would need; its words are load/answer.h.
 *
 * A figure a run read back did not record is NAN (a latency, a CPU, a client's figure), or 0
 * for a count. Pure: no I/O. */
#ifndef PV_LOAD_SUMMARY_H
#define PV_LOAD_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/model.h"
#include "load/stats.h"

struct pv_load_client {
	const char *name;
	unsigned threads;
	double cpu;		 /* the driver process, mean % of one core (all its loops) */
	double cpu_top;		 /* its busiest loop, mean % of one core */
	double host_cpu;	 /* the host, mean % of all cores busy; NAN when not known */
	double lag_p95, lag_max; /* its loop lag, ms */
	bool bound;		 /* this client was the limit (load/stats.h: PV_LOAD_BOUND_CPU,
				  * PV_LOAD_BOUND_LAG) */
};
void pv_load_client_of(const struct pv_load_client_acc *a, const char *name,
		       struct pv_load_client *out);
/* A client's busiest event loop, % of one core: the loop's own figure, or the driver's when it
 * runs one loop (load.json version 1 has only that); NAN when not said. */
double pv_load_loop_cpu(const struct pv_load_client *c);

/* Latencies of one kind (or all) in a step, in seconds. */
struct pv_load_lat {
	uint64_t n; /* scenarios completed */
	double median, p95, max;
	double median_lo, median_hi, p95_lo, p95_hi; /* the quantiles' buckets */
};

/* One kind's figures in a step: its counts, and what is read from them. */
struct pv_load_kind_sum {
	struct pv_load_counts n; /* as counted */
	double overload; /* percent: n.overloaded / ended (completed + errors + unserved); 0: none
			  */
	struct pv_load_lat lat; /* n.lat read: completed (lat.n), median, p95, max */
};

/* A step's figures, as the results show them. */
struct pv_load_summary {
	unsigned users, connected, failed, lost; /* as in struct pv_load_step */
	unsigned drops, reconnects;		 /* connections broken, users logged on again */
	unsigned relogons;  /* logons made again at a learned workload's rate */
	unsigned reclaimed; /* durable open files claimed again on a new connection */
	double secs;
	double rate;		 /* scenarios completed per second */
	double rate_lo, rate_hi; /* its 95% interval: the count's (Poisson, exact, util/stats.h)
				  * over secs */
	double expected;	 /* users x config.rate / 3600 */
	double cpu;		 /* the server's mean CPU %; NAN when not measured */
	double dc_cpu;		 /* the DC's; NAN when not watched */
	double dc_samba;	 /* the DC's samba processes, % of one core; NAN: not watched */
	struct pv_load_logon logon_n; /* the step's logons as counted */
	struct pv_load_lat logon;     /* their times (logon.n: users logged on) */
	struct pv_load_lat lag;	      /* every client's loop lag */
	/* the clients, one each (set by the caller, pv_load_summarize leaves them alone; owned
	 * by whoever holds the summary, see run/run.h); client_bound: any of them was the
	 * limit */
	const struct pv_load_client *clients;
	size_t nclients;
	bool client_bound;
	double driver_cores;	     /* the drivers' CPU, all clients, in cores */
	struct pv_load_kind_sum all; /* every kind together */
	struct pv_load_kind_sum kind[PV_PLAYBOOK_WORKLOAD_KINDS];
};

void pv_load_summarize(const struct pv_load_step *s, const struct pv_playbook_workload *c,
		       struct pv_load_summary *out);
/* The scenarios of k that ended: completed, in error or unserved (overload's denominator). */
uint64_t pv_load_ended(const struct pv_load_kind_sum *k);
/* Users of s without a connection at some point: those the clients said failed, or those
 * missing from the count of connected ones, whichever is more. */
unsigned pv_load_unconnected(const struct pv_load_summary *s);
/* The client that was most the limit in s (the busiest loop of those bound), NULL when none;
 * *others (when not NULL): how many more were bound. */
const struct pv_load_client *pv_load_bound_client(const struct pv_load_summary *s,
						  unsigned *others);
/* The clients' figures into s: clients, nclients (kept as given), client_bound,
 * driver_cores. */
void pv_load_summary_clients(struct pv_load_summary *s, const struct pv_load_client *clients,
			     size_t n);

/* A ramp's steps and its settings: what load.txt, load.csv, load.json, load.svg and the answer
 * are made of. */
struct pv_load_results {
	const struct pv_playbook_workload *cfg;
	const struct pv_load_summary *steps; /* in the ramp's order, users rising */
	size_t n;
	const char *title; /* what was measured, e.g. "srv, run 20261130-121500"; NULL: none */
};

/* Whether a step counts for the answer: scenarios started and ended, overload <= threshold
 * (percent), no error, every user connected throughout, no client lost and no client the
 * limit. */
bool pv_load_carried(const struct pv_load_summary *s, double threshold);
/* The answer of a ramp: the index of the step with the most users that counts (its users in
 * *users), or -1 when none does (*users 0). */
long pv_load_answer(const struct pv_load_summary *steps, size_t n, double threshold,
		    unsigned *users);
/* The step that bounds the answer from above: of the steps with more users than step best
 * (every step when best is -1), the one with the fewest that does not count; -1 when none. */
long pv_load_first_over(const struct pv_load_summary *steps, size_t n, double threshold, long best);
/* Client cores a step of users would need: the drivers' CPU per user at the step with the most
 * users that was not client-bound (else at the fewest users), times users, over
 * PV_LOAD_CORE_TARGET; 0 when nothing was measured. */
double pv_load_cores_for(const struct pv_load_summary *steps, size_t n, unsigned users);

#endif
