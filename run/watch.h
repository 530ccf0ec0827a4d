/* run/watch.h: the watches of `provision run`: the file server's, and the DC's when the
 * playbook gives it SSH (domain.ssh). One long-lived sampler on the host (run/scripts/watch.pl
 * over one SSH channel, no process started per sample) prints a line of rates every interval;
 * a thread here keeps them with the time they arrived, and each step of the run takes its
 * window of samples: a CSV, and a summary (mean, p95, max per metric).
 *
 * The parsing, the summary and the CSV are pure and unit-tested; the thread does the I/O. */
#ifndef PV_RUN_WATCH_H
#define PV_RUN_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "env/env.h"
#include "util/buf.h"

enum pv_run_watch_metric {
	PV_RUN_W_CPU,	    /* % of all cores busy */
	PV_RUN_W_USR,	    /* % user time (nice included) */
	PV_RUN_W_SYS,	    /* % system time (irq, softirq included) */
	PV_RUN_W_IOWAIT,    /* % waiting for I/O */
	PV_RUN_W_SMBD,	    /* % of one core: every smbd process */
	PV_RUN_W_WINBINDD,  /* % of one core: every winbindd */
	PV_RUN_W_SAMBA,	    /* % of one core: every samba (AD DC) process */
	PV_RUN_W_SELF,	    /* % of one core: the sampler itself */
	PV_RUN_W_MEM_USED,  /* MiB: MemTotal - MemAvailable */
	PV_RUN_W_MEM_AVAIL, /* MiB */
	PV_RUN_W_DIRTY,	    /* MiB: Dirty + Writeback */
	PV_RUN_W_RD,	    /* kB/s read from whole disks */
	PV_RUN_W_WR,	    /* kB/s written */
	PV_RUN_W_INFLIGHT,  /* I/O requests in flight */
	PV_RUN_W_NET_RX,    /* kB/s received, every interface but lo */
	PV_RUN_W_NET_TX,    /* kB/s sent */
	PV_RUN_W_COUNT
};

/* Column names, as in the CSV and the JSON ("cpu", "smbd", "mem_used", "net_rx", ...). */
extern const char *const pv_run_watch_names[PV_RUN_W_COUNT];

#define PV_RUN_WATCH_IFS 8 /* interfaces kept apart per sample (the rest count in the totals) */

struct pv_run_watch_if {
	char name[16];
	double rx, tx; /* kB/s */
};

/* With procs (pv_run_watch_start): a smbd process over the interval, the busiest first. */
#define PV_RUN_WATCH_PROCS 8
struct pv_run_watch_proc {
	int pid;
	double cpu; /* % of one core: its threads together */
	unsigned threads;
	double top;   /* % of one core: its busiest thread */
	double quota; /* % of one core the CPU controller allows its group; < 0: no quota */
};

struct pv_run_watch_sample {
	double t; /* when it arrived (pv_now()) */
	double v[PV_RUN_W_COUNT];
	struct pv_run_watch_if ifs[PV_RUN_WATCH_IFS];
	unsigned nifs;
	struct pv_run_watch_proc procs[PV_RUN_WATCH_PROCS];
	unsigned nprocs;
};

/* One line of the sampler: PV_OK with *s filled (s->t left alone; procs when the line has
 * them); 1 for a line that is not a sample (the start line); PV_EREMOTE, quoting the line, when
 * it is malformed. */
int pv_run_watch_parse(const char *line, size_t len, struct pv_run_watch_sample *s);

struct pv_run_watch_stat {
	double mean, p95, max;
};
/* Over n samples (n may be 0: all zero). p95 by nearest rank. PV_EIO when out of memory. */
int pv_run_watch_summarize(const struct pv_run_watch_sample *s, size_t n,
			   struct pv_run_watch_stat out[PV_RUN_W_COUNT]);

/* The CSV of a step: a header, then one row per sample: seconds since t0, "warmup" or
 * "measure" (before or after measure_from), the metrics, then rx_<if> and tx_<if> for every
 * interface seen in the window (in the order first seen). */
int pv_run_watch_csv(const struct pv_run_watch_sample *s, size_t n, double t0, double measure_from,
		     struct pv_buf *out);

/* A step's watch.json: the samples measured, the interval, each metric's mean, p95 and max
 * (stat, over s), and each interface's mean and max rates over the samples that have it.
 * *out is the text (free() it). */
int pv_run_watch_json(const struct pv_run_watch_sample *s, size_t n, int interval,
		      const struct pv_run_watch_stat stat[PV_RUN_W_COUNT], char **out);

/* The running watch. */
struct pv_run_watch;
struct pv_remote;

/* Start the sampler (every interval seconds) on host in a thread of its own, over rem (a
 * connection to host, which the watch takes and frees, whatever the outcome) or, when rem is
 * NULL, a connection of its own; what names it in messages ("server", "DC"); procs: each
 * sample says how the busiest smbd processes used their CPU (`copy`). PV_OK once the sampler
 * has said it started; else the code and message of what went wrong (no thread left
 * behind). */
int pv_run_watch_start(const struct pv_playbook_host *host, struct pv_remote *rem, const char *what,
		       int interval, bool procs, struct pv_run_watch **out);
/* A copy of the samples that arrived in [from, to] (pv_now() times), in order; *s is NULL
 * when none (free() it). When the watch has failed since it started, its code is returned and
 * its message recorded, with the samples until then. */
int pv_run_watch_window(struct pv_run_watch *w, double from, double to,
			struct pv_run_watch_sample **s, size_t *n);
/* Stop the sampler (its stdin ends), join the thread, free. The code of a failure of the watch
 * while it ran (PV_OK otherwise). NULL is allowed. */
int pv_run_watch_stop(struct pv_run_watch *w);

#endif
