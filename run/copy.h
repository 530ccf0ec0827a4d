/* run/copy.h: `provision copy` on the controller (docs/copy.md): the copy agent (load/copy.h)
 * started on one client over SSH, provision's binary copied there first (run/install.h); the
 * server watched meanwhile with each busy smbd's CPU, threads and quota (run/watch.h), the
 * client's connections tied to the smbds that serve them (smbstatus), and, on a Samba server,
 * Samba's own counters of system calls and SMB2 commands over the copy (its profiling level
 * set on the running smbd for the copy and put back after it, whatever the outcome: no
 * configuration is touched). What it gathered goes to <controller.results>/<id>/: copy.json,
 * ticks.csv, watch.csv, smbd.csv; the face adds copy.txt and report.html.
 *
 * Ctrl-C (env->stop): the agent is told to stop (its stdin ends), the profiling level is put
 * back, what was gathered is kept; PV_ESTOPPED. */
#ifndef PV_RUN_COPY_H
#define PV_RUN_COPY_H

#include <stdbool.h>
#include <stddef.h>

#include "load/copy.h"
#include "env/env.h"
#include "run/watch.h"
#include "samba/samba.h"

struct pv_run_sink;
struct pv_remote;

struct pv_run_copy_opts {
	const char *client;   /* a client's name; NULL: the playbook's first */
	const char *from;     /* the source: a folder on the client ... */
	const char *fileset;  /* ... or a fileset file here (the same tree and bytes anywhere) */
	const char *share;    /* the target share; NULL: the user's home share (the lab's) */
	const char *folder;   /* the target folder below it; NULL: <user>/copy */
	unsigned user;	      /* which of the client's users copies; 0: the first */
	unsigned window;      /* requests in flight per connection (robocopy /MT:n); 0: 8 */
	unsigned connections; /* 0: 1 */
	bool mirror;	      /* extras at the target removed (/MIR) */
	unsigned fft;	      /* seconds of /FFT (2) */
	bool no_profile;      /* leave Samba's counters alone */
	const char *id;	      /* the results folder's name; NULL: copy-<date>-<time> */
	int interval;	      /* seconds between the server's samples (1) */
};

/* One smbd that served the copy, over it. */
struct pv_run_copy_smbd {
	int pid;
	int conn; /* the copy's connection it serves (-1: none of them) */
	double cpu_mean, cpu_max, top_mean, top_max; /* % of a core */
	unsigned threads;			     /* the most seen */
	double quota;				     /* % of a core; < 0: none */
};

struct pv_run_copy_job {
	char id[64], folder[1100]; /* the results folder */
	char client[256], server[256], share[256], target[1600], user[300], source[1400];
	char samba[128]; /* the server's Samba version ("" when not Samba) */
	int dgram_qlen;	 /* its net.unix.max_dgram_qlen when Samba; -1: not read */
	struct pv_load_copy_config cfg;
	bool planned, done; /* the agent said its plan, its figures */
	struct pv_load_copy_plan plan;
	struct pv_load_copy_done figs;
	struct pv_load_copy_tick *ticks;
	size_t nticks;
	double start, end; /* pv_now() of the agent's start and end */
	/* connections: their ports and the smbd serving each */
	struct {
		int port, pid;
		char desc[96];
	} conns[PV_LOAD_COPY_CONNECTIONS_MAX];
	unsigned nconns;
	/* the server watch over the copy */
	struct pv_run_watch_sample *samples;
	size_t nsamples;
	int interval;
	struct pv_run_copy_smbd smbd[PV_RUN_WATCH_PROCS];
	size_t nsmbd;
	/* Samba's counters over the copy (the system calls and SMB2 commands that moved) */
	bool profiled;
	char profile_note[256]; /* why there are none, or what was put back */
	struct pv_samba_counters counters;
	char err[1024];		  /* the agent's stderr, its last line */
	struct pv_env_plan dry;	  /* a dry run: what it would do */
	struct pv_run_sink *sink; /* the results folder, for pv_run_copy_write */
	struct pv_remote *ctl;	  /* and the controller's host it is on (NULL: here) */
};

int pv_run_copy_run(const struct pv_env *env, const struct pv_run_copy_opts *o,
		    struct pv_run_copy_job *job);
/* A file more into the job's results folder (the face's copy.txt, report.html). */
int pv_run_copy_write(const struct pv_env *env, const struct pv_run_copy_job *job, const char *name,
		      const void *data, size_t len);
void pv_run_copy_job_release(struct pv_run_copy_job *job);

#endif
