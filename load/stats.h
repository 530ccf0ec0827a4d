/* load/stats.h: the load driver's figures as it counts them: latency histograms, the counts of
 * one interval (what a client prints each second, load/line.h), a step's figures merged over
 * its intervals and clients, the clients' own figures (were they the limit?). What is read
 * from them, the step as every result shows it, is load/summary.h (docs/load.md).
 *
 * Histograms have fixed log-scale buckets so that those of many clients and intervals merge
 * exactly: 24 buckets per decade from 100 us to 1000 s (each 10.07% wide), one below 100 us and
 * one from 1000 s up. A quantile is read as the geometric middle of its bucket (never above the
 * maximum), so it is within 4.92% (10^(1/48) - 1) of the true value between 100 us and 1000 s;
 * below 100 us it reads 100 us at most, from 1000 s up it reads the maximum. The maximum is kept
 * exactly. The bucket's own bounds travel with every quantile shown (the true value lies in
 * them).
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
/* Where the true q-quantile lies: its bucket's bounds, the upper one capped at the maximum
 * (both 0 for an empty histogram). */
void pv_load_hist_bounds(const struct pv_load_hist *h, double q, double *lo, double *hi);
/* The interval on the q-quantile of what h counted (util/stats.h: the order statistics whose
 * ranks hold it with chance 1 - alpha), read as the lower edge of the lower one's bucket and
 * the upper edge of the upper one's (never above the exact maximum). *lo is 0 and *hi
 * INFINITY where the ranks fall outside the counts (too few values to bound it). An empty
 * histogram: [0, INFINITY]. */
void pv_load_hist_ci(const struct pv_load_hist *h, double q, double alpha, double *lo, double *hi);

/* The SMB2 commands (MS-SMB2 2.2.1), indexed by their command code: what the driver counts as
 * its scenarios send them. */
enum pv_load_op {
	PV_LOAD_OP_NEGOTIATE,
	PV_LOAD_OP_SESSION_SETUP,
	PV_LOAD_OP_LOGOFF,
	PV_LOAD_OP_TREE_CONNECT,
	PV_LOAD_OP_TREE_DISCONNECT,
	PV_LOAD_OP_CREATE,
	PV_LOAD_OP_CLOSE,
	PV_LOAD_OP_FLUSH,
	PV_LOAD_OP_READ,
	PV_LOAD_OP_WRITE,
	PV_LOAD_OP_LOCK,
	PV_LOAD_OP_IOCTL,
	PV_LOAD_OP_CANCEL,
	PV_LOAD_OP_ECHO,
	PV_LOAD_OP_QUERY_DIRECTORY,
	PV_LOAD_OP_CHANGE_NOTIFY,
	PV_LOAD_OP_QUERY_INFO,
	PV_LOAD_OP_SET_INFO,
	PV_LOAD_OP_OPLOCK_BREAK,
	PV_LOAD_OPS
};
/* "negotiate", "session_setup", ..., "query_info", "set_info", "oplock_break", then NULL. */
extern const char *const pv_load_op_names[PV_LOAD_OPS + 1];
/* The command named name, or -1. */
int pv_load_op_of(const char *name);

/* One kind's counts over an interval (or many merged): primary counts only. How many ended
 * well (completed) is lat's count.
 *
 * A scenario is overloaded, and counted so once, when it started late, took longer than its
 * kind's limit or ended in an error (all counted when it ends, in the interval it ends in), or
 * when its user had no connection when it was due (unserved: counted started, unserved and
 * overloaded at once; no request goes out, so it is not an error). The overload % is the
 * overloaded share of the scenarios that ended (completed, in error or unserved): of one
 * population, so it is never over 100% however long scenarios take across intervals. It says
 * what the users lived through: a user who could not log on, or lost its connection, overloads
 * every scenario it had due. */
struct pv_load_counts {
	uint64_t started;	   /* scenarios started, unserved ones too (when they start) */
	uint64_t errors;	   /* ended in an error (not in lat) */
	uint64_t late;		   /* ended, having started over config.late s after their time */
	uint64_t over_limit;	   /* completed, but took longer than the kind's limit */
	uint64_t unserved;	   /* due while their user had no connection */
	uint64_t overloaded;	   /* late, over the limit, in error or unserved: once each */
	uint64_t ops[PV_LOAD_OPS]; /* SMB2 requests these scenarios sent, per command */
	struct pv_load_hist lat;   /* the latencies of those that ended well */
};

/* What one client prints for one interval (load/line.h), or the same interval of many
 * clients merged. */
struct pv_load_figs {
	uint64_t seq;	     /* the interval, from 1 */
	double secs;	     /* its length as measured by the client */
	unsigned connected;  /* users with a working connection at the interval's end */
	unsigned failed;     /* users without one then: their connection failed or was lost */
	unsigned drops;	     /* connections that broke during the interval (a server restart) */
	unsigned reconnects; /* users who logged on again during it, as a Windows client does */
	unsigned relogons;   /* users who logged off and on again, at a learned workload's rate */
	unsigned reclaimed;  /* durable open files claimed again after their connection broke */
	/* the driver itself (load/engine.h): was it the limit? */
	unsigned threads;	 /* its event loops, a thread each */
	double cpu;		 /* the driver process's CPU over the interval, % of one core */
	double cpu_top;		 /* its busiest loop's, % of one core */
	double host_cpu;	 /* the host's, % of all its cores busy; < 0: not known */
	struct pv_load_hist lag; /* loop lag: how late each scenario of an idle user started */
	struct pv_load_counts kind[PV_PLAYBOOK_WORKLOAD_KINDS];
};

/* Counting, as the driver goes. A scenario of kind k started delay seconds after its time
 * (counted started): returns whether it is late (keep it for pv_load_count_end). */
bool pv_load_count_start(struct pv_load_figs *f, const struct pv_playbook_workload *c,
			 enum pv_playbook_workload_kind k, double delay);
/* It ended, secs after its start, in an error or not; late as pv_load_count_start said. */
void pv_load_count_end(struct pv_load_figs *f, const struct pv_playbook_workload *c,
		       enum pv_playbook_workload_kind k, bool late, double secs, bool error);
/* A scenario of kind k was due while its user had no connection. */
void pv_load_count_unserved(struct pv_load_figs *f, enum pv_playbook_workload_kind k);

void pv_load_counts_merge(struct pv_load_counts *dst, const struct pv_load_counts *src);
/* The same interval of another client into dst: counts, users, threads and CPU add up (the
 * busiest loop is the busier one; the host's CPU is the higher known one: a host per client
 * is not an average), lags merge, secs is the longer one, seq stays dst's. */
void pv_load_figs_merge(struct pv_load_figs *dst, const struct pv_load_figs *src);

/* The logons of a step on one client (the "ready" line, load/line.h), or of many merged. How
 * many logged on is lat's count. */
struct pv_load_logon {
	uint64_t failed;	 /* users who could not log on (every try failed) */
	uint64_t retries;	 /* tries after a first one that failed (load's LOGON_TRIES) */
	struct pv_load_hist lat; /* each user's time to log on: from its first try to a session
				  * and a tree */
};

void pv_load_logon_merge(struct pv_load_logon *dst, const struct pv_load_logon *src);

/* A step: its measured intervals (each already merged across clients) added one by one. */
struct pv_load_step {
	unsigned users;	    /* the step's users, all clients together (the ramp's figure) */
	unsigned lost;	    /* clients lost during the step (the caller counts them) */
	double cpu;	    /* the server's mean CPU % over the step; NAN when not measured */
	double dc_cpu;	    /* the DC's; NAN when not watched */
	double dc_samba;    /* the DC's samba processes, mean % of one core; NAN: not watched */
	unsigned intervals; /* intervals added */
	double secs;	    /* their lengths added */
	unsigned connected; /* the fewest users connected at the end of any interval */
	unsigned failed;    /* the most users without a connection at the end of any interval */
	unsigned drops, reconnects, relogons, reclaimed; /* the intervals' added */
	struct pv_load_logon logon; /* the step's logons (the caller merges them in) */
	struct pv_load_hist lag;    /* every client's loop lag */
	struct pv_load_counts kind[PV_PLAYBOOK_WORKLOAD_KINDS];
};

void pv_load_step_init(struct pv_load_step *s, unsigned users);
void pv_load_step_add(struct pv_load_step *s, const struct pv_load_figs *f);

/* A client is the limit (its step "client-bound") when its busiest event loop was busy for
 * PV_LOAD_BOUND_CPU % of a core or more over the step (a loop cannot do more than one core's
 * work), or when its loop lag p95 reached PV_LOAD_BOUND_LAG seconds: a due scenario of an idle
 * user started that late because the driver (or its host) had no time for it, whatever the
 * server did. docs/load.md gives the measurements these come from. */
#define PV_LOAD_BOUND_CPU 90.0
#define PV_LOAD_BOUND_LAG 0.1
/* A driver kept at or under this share of its cores stays on time: what the estimate of the
 * cores a client-bound step needs assumes. */
#define PV_LOAD_CORE_TARGET 0.7

/* A client's own figures over a step: its intervals (its own, after the warm-up) added. */
struct pv_load_client_acc {
	double secs, cpu, cpu_top, host_cpu, host_secs; /* sums of value x seconds */
	unsigned threads;
	struct pv_load_hist lag;
};
void pv_load_client_add(struct pv_load_client_acc *a, const struct pv_load_figs *f);

#endif
