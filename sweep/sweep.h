/* sweep/sweep.h: `provision sweep` (docs/copy.md): one job (a copy, or a run) under several
 * server settings, with repeats, and a verdict per setting. The baseline and the settings are
 * interleaved round after round (A B1 B2 A B1 B2 ...), never in blocks, so that drift of the
 * machine falls on every condition alike.
 *
 * A setting is a Samba parameter (PARAM=VALUE), set through the registry configuration (net
 * conf) on every share the lab made, or in [global] where the server's [global] reads the
 * registry (refused otherwise, saying how to allow it); or any server's own pair of commands
 * ("APPLY ;; REVERT"). Every Samba setting is checked by the server's testparm before anything
 * runs: one it refuses is refused here, the parameter named. A setting is applied just before
 * its job and put back just after it (the registry's value as it was, or none), and every
 * applied setting is put back on every way out: a failed job, Ctrl-C, a lost SSH connection
 * (connected again for it). The server's configuration in effect (testparm -s) is compared
 * byte for byte before the first job and after the last: a difference fails the sweep.
 *
 * Results: each job's own folder (<id>-<condition>-<round>), and <id>/ with sweep.json,
 * sweep.txt and (the face's) report.html, and revert.txt: what the sweep would put back,
 * written before the first setting is applied. */
#ifndef PV_SWEEP_SWEEP_H
#define PV_SWEEP_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "env/env.h"
#include "run/copy.h"
#include "samba/samba.h"

struct pv_run_sink;
struct pv_remote;

#define PV_SWEEP_SETTINGS   16
#define PV_SWEEP_REPEAT_MAX 50
#define PV_SWEEP_SECTIONS   64 /* shares a Samba setting is set on */

struct pv_sweep_setting {
	char label[1100]; /* "case sensitive=yes", or the apply command */
	bool command;	  /* a pair of commands; else a Samba parameter */
	char param[128], value[1024];
	enum pv_samba_scope scope;
	char apply[1024], revert[1024];
	/* a Samba parameter: what the registry held before, in each section it is set in */
	size_t nsec;
	struct {
		char section[128];
		bool had;
		char value[1024];
	} prev[PV_SWEEP_SECTIONS];
	bool applied;
};

/* One job of the sweep. */
struct pv_sweep_job {
	unsigned cond;	/* 0: the baseline; n: setting n */
	unsigned round; /* from 1 */
	char id[64];
	int code;
	char msg[512];
	double value;		  /* copy: files/s; run: users carried */
	double noise;		  /* its own standard error (copy: from its ticks), NAN: none */
	double cpu_per_file;	  /* copy: ms of the server's smbd CPU per file sent */
	double apply_s, revert_s; /* how long its setting took to apply and to put back */
};

/* One condition over its repeats. */
struct pv_sweep_cond {
	char label[1100];
	unsigned n;	       /* jobs that gave a value */
	double median, lo, hi; /* of its values; the interval of their mean */
	double diff, dlo, dhi; /* against the baseline (Welch), NAN for the baseline */
	bool beyond;	       /* the difference's interval leaves out 0 */
	double cpu_per_file;   /* median */
};

struct pv_sweep_result {
	char id[64], folder[1100];
	bool run; /* the job: a run; else a copy */
	struct pv_sweep_setting settings[PV_SWEEP_SETTINGS];
	size_t nsettings;
	struct pv_sweep_job *jobs;
	size_t njobs, planned;
	struct pv_sweep_cond conds[PV_SWEEP_SETTINGS + 1];
	size_t nconds;
	bool checked_config; /* testparm -s read before and after */
	bool config_same;
	char config_diff[512];	      /* the first line that differs */
	char put_back[2048];	      /* what was put back when the sweep was cut short */
	double apply_max, revert_max; /* seconds, the slowest */
	struct pv_env_plan dry;	      /* a dry run: what it would do */
	struct pv_run_sink *sink;     /* the sweep's folder, for pv_sweep_write */
	struct pv_remote *ctl;	      /* and the controller's host it is on (NULL: here) */
};

struct pv_sweep_opts {
	bool run;		      /* sweep run; else sweep copy */
	struct pv_run_copy_opts copy; /* the copy's options (client, source, ...) */
	const char *const *settings;  /* "PARAM=VALUE" */
	size_t nsettings;
	const char *const *commands; /* "APPLY ;; REVERT" */
	size_t ncommands;
	unsigned repeat; /* rounds; 0: 3 */
	const char *id;	 /* NULL: sweep-<UTC time> */
	/* after each copy job, its outcome (the face writes its pages) */
	void (*copy_done)(void *ctx, struct pv_run_copy_job *job, int code);
	void *ctx;
};

int pv_sweep(const struct pv_env *env, const struct pv_sweep_opts *o, struct pv_sweep_result *res);
/* A file more into the sweep's folder (the face's report.html). */
/* The conditions' figures (label, n, median and interval, the difference from the base and
 * its interval, beyond_noise, cpu_ms_per_file) as a JSON array: sweep.json's and --json's. */
struct pv_json *pv_sweep_conditions_json(const struct pv_sweep_result *res);
int pv_sweep_write(const struct pv_env *env, const struct pv_sweep_result *res, const char *name,
		   const void *data, size_t len);
void pv_sweep_release(struct pv_sweep_result *res);

/* The conditions' figures from the jobs (pure; pv_sweep calls it). */
void pv_sweep_judge(struct pv_sweep_result *res);

#endif
