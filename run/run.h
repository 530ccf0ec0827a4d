/* run/run.h: `provision run`, the load driver's phases across the hosts.
 *
 * For every step of the ramp (run/render.h): the client command starts on every client at
 * once, each in a process group of its own under a wrapper (run/scripts/run-client.pl)
 * that stops the whole group when its SSH session says so or goes away; then the controller's
 * command runs; the step lasts warmup + duration, or until every command has ended. Then every
 * host's output and files are gathered into <controller.results>/<run-id>/step-NN/<host>/,
 * with the server watch's samples of the step (watch.csv, watch.json; the DC's, when the
 * playbook gives it SSH, in watch-dc.csv, watch-dc.json), and manifest.json is
 * written anew (the playbook's SHA-256, versions, every step's times and every host's status),
 * so that a run cut short still leaves a manifest of what it did. Between steps, when the
 * playbook says drain: {between_steps: true}, the server's queue is waited for.
 *
 * A host lost in the middle of a step (its SSH session gone, or no word from it for longer
 * than its ssh.timeout) is reported, the others are stopped cleanly, what was gathered is kept,
 * and the run ends PV_EPARTIAL. Ctrl-C or SIGTERM (env->stop): every command is stopped, the
 * step's results are gathered, PV_ESTOPPED. driver.timeout passed: the same, PV_ETIMEOUT. */
#ifndef PV_RUN_RUN_H
#define PV_RUN_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "load/summary.h"
#include "env/env.h"
#include "run/watch.h"
#include "util/digest.h"

enum pv_run_state {
	PV_RUN_NOT_STARTED, /* the command did not start (see code, msg) */
	PV_RUN_DONE,	    /* it ended on its own with status 0 */
	PV_RUN_FAILED,	    /* it ended on its own with another status, or its host refused */
	PV_RUN_STOPPED,	    /* it was running when the step ended and was stopped: normal */
	PV_RUN_LOST	    /* its host went away during the step */
};

const char *pv_run_state_name(enum pv_run_state s);

struct pv_run_host {
	const char *name; /* the client's name, or "controller" */
	bool controller;
	unsigned users; /* clients: their users in this step */
	enum pv_run_state state;
	int exit;      /* the command's exit status (128+N: signal N), -1 when none */
	int code;      /* a failure's code, PV_OK otherwise */
	char msg[384]; /* and its message */
	unsigned long files, skipped; /* gathered: files, entries not gathered (links...) */
	unsigned long long bytes;
};

struct pv_run_step {
	unsigned n;	   /* from 1 */
	unsigned users;	   /* all clients together */
	double start, end; /* wall clock, seconds since the epoch */
	const char *ended; /* why it ended: "duration", "commands ended", "command failed",
			    * "host lost", "stopped", "timeout" */
	struct pv_run_host *hosts;
	size_t nhosts;
	size_t samples; /* the server watch's samples measured (after the warm-up) */
	struct pv_run_watch_stat watch[PV_RUN_W_COUNT];
	size_t dc_samples; /* the DC watch's (domain.ssh), the same way */
	struct pv_run_watch_stat dc_watch[PV_RUN_W_COUNT];
	bool refine;			/* a step --refine added after the ramp */
	bool has_load;			/* driver builtin: the step's figures */
	struct pv_load_summary load;	/* load.clients points at clients below */
	struct pv_load_client *clients; /* one per client, owned here */
	bool drained;			/* the queue was waited for after this step */
	double drain_seconds;
	long drain_first, drain_peak;
};

struct pv_run_result {
	char id[64];
	char folder[1024];	/* <controller.results>/<id> on the controller */
	const char *controller; /* "local" or the controller's host */
	const char *driver;
	char digest[PV_SHA256_HEX]; /* the playbook file's SHA-256 */
	struct pv_run_step *steps;
	size_t nsteps, planned;
	/* --over-steps ended the ramp: the steps of the ramp not run, from skipped_from users
	 * to skipped_to (0 when every step of the ramp ran) */
	size_t skipped;
	unsigned skipped_from, skipped_to;
	double seconds;
	char watch_error[384];	  /* the watch failed (the run went on without it) */
	char dc_watch_error[384]; /* the DC's watch failed, the same way */
	char answer[512];	  /* driver builtin: the most users carried, in one line */
	struct pv_env_plan plan;  /* dry run: every command that would run */
};

struct pv_run_opts {
	const char *id; /* the run's id (its folder's name); NULL: the UTC time, 20261130-121500 */
};

/* PV_OK when every step ran and every command ended well; else the first failure's code
 * (see above). res is filled as far as the run went either way. */
int pv_run(const struct pv_env *env, const struct pv_run_opts *o, struct pv_run_result *res);
void pv_run_release(struct pv_run_result *res);

/* A step as JSON, as in manifest.json and `run --json` (docs/json.md). */
struct pv_json;
struct pv_json *pv_run_step_json(const struct pv_run_step *s);
/* "skipped" in o: the steps of the ramp --over-steps left out, {steps, from_users, to_users},
 * or null (manifest.json's driver and `run --json`). */
void pv_run_skipped_json(struct pv_json *o, const struct pv_run_result *res);

#endif
