/* results/copy.h: the copy job's figures and what bounds it, in words (docs/copy.md): the
 * files/s with its interval from the agent's ticks, and the verdict from the server's smbds
 * (each one's share of a core, its busiest thread, a CPU quota), the client's CPU and the
 * disk. Pure: the face fills the facts from what `copy` gathered. */
#ifndef PV_RESULTS_COPY_H
#define PV_RESULTS_COPY_H

#include <stdbool.h>
#include <stddef.h>

/* The mean rate over n ticks (t seconds since the start, count so far) and its 95% interval:
 * the rates of the intervals between ticks as samples of it (Student's t on their mean); NAN
 * bounds with fewer than three intervals. */
void pv_results_copy_rate(const double *t, const double *count, size_t n, double *rate, double *lo,
			  double *hi);

/* A thread or process at this share of what it may use is at its limit. */
#define PV_RESULTS_COPY_AT_LIMIT 85.0

struct pv_results_copy_facts {
	unsigned long files; /* sent */
	double put_s;	     /* the writing's seconds */
	unsigned connections;
	/* the smbd busiest over the copy (known: the server was watched and one served it) */
	bool smbd_known;
	int smbd_pid;
	bool smbd_ours;		   /* it serves one of the copy's connections (smbstatus said so) */
	double smbd_cpu, smbd_top; /* % of a core: the process, its busiest thread (means) */
	unsigned smbd_threads;
	double smbd_quota;  /* % of a core its group may use; < 0: none */
	double group_cpu;   /* % of a core: it and the other smbds under the same quota (means) */
	unsigned smbd_busy; /* smbds at their limit (for more than one connection) */
	/* the client (the agent): its busiest thread, % of a core */
	double client_top;
	/* the server's whole CPU and I/O wait, % of all its cores (means; NAN: not watched) */
	double server_cpu, server_iowait;
	/* its net.unix.max_dgram_qlen (< 0: not known): below PV_RESULTS_COPY_QLEN, smbd's
	 * change-notify messages back up inside smbd, and the verdict says so */
	int dgram_qlen;
};

/* systemd's net.unix.max_dgram_qlen (sysctl.d/50-default.conf), which the lab runs with */
#define PV_RESULTS_COPY_QLEN 512

enum pv_results_copy_bound {
	PV_RESULTS_COPY_BOUND_QUOTA,   /* a CPU quota holds the smbd */
	PV_RESULTS_COPY_BOUND_CORE,    /* one smbd's thread at a full core */
	PV_RESULTS_COPY_BOUND_CPUS,    /* the server's CPUs all busy, no smbd at a core */
	PV_RESULTS_COPY_BOUND_CLIENT,  /* the agent's thread at a full core */
	PV_RESULTS_COPY_BOUND_DISK,    /* the server waited for its disk */
	PV_RESULTS_COPY_BOUND_UNKNOWN, /* nothing at its limit, or nothing known */
};
extern const char *const pv_results_copy_bound_names[6]; /* "quota", "smbd core", ... */

/* What bounds the copy and why, a paragraph into text; a small dgram_qlen is named after it,
 * whatever the bound, as a cost of smbd's that a setting of the server's removes. */
enum pv_results_copy_bound pv_results_copy_judge(const struct pv_results_copy_facts *f, char *text,
						 size_t len);

#endif
