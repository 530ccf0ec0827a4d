/* run/internal.h: what run/run.c and run/builtin.c (the built-in driver's
 * part of a run) share. Not for use outside phases/run*.c. */
#ifndef PV_RUN_INTERNAL_H
#define PV_RUN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "load/model.h"
#include "load/stats.h"
#include "run/render.h"
#include "run/install.h"
#include "run/run.h"
#include "remote/remote.h"
#include "util/buf.h"

/* ---- where the results go: the controller, local or over SSH ---- */

struct sink {
	struct pv_remote *rem; /* a controller host; NULL: this machine */
	int fd;		       /* local: the run's folder */
	char path[1024];       /* the run's folder */
	pthread_mutex_t lock;  /* one SSH session for every thread */
};

struct run;
struct steprun;

struct hostrun {
	struct steprun *st;
	struct pv_run_host *h;
	const struct pv_host *host; /* NULL: the local controller */
	struct pv_remote *rem;
	struct pv_buf cmd; /* the command as rendered */
	char base[256];	   /* the run's folder on the host: <run base>-<host> */
	char dir[300];	   /* the step's folder there: <base>/step-01 */
	bool password;
	pthread_t thread;
	bool thread_ok;
	/* under st->lock */
	bool running, ended, silent, final;
	double last_seen;
	/* driver builtin: what `provision load` said */
	struct pv_buf input; /* its stdin: the password, the setup lines */
	struct pv_buf lines; /* every line it printed, kept as load.jsonl */
	bool ready, go_sent;
	unsigned connected, failed;
	char ready_error[256];
	struct pv_load_figs *iv; /* its intervals, [seq - 1] */
	size_t niv;
};

struct steprun {
	struct run *run;
	struct pv_run_step *step;
	char rel[32];	    /* "step-01" below the run's folder */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool over;	    /* the step is over: every command stops */
	bool go;	    /* builtin: every client is ready, the load starts */
	double go_at;
	struct hostrun *hr;
	size_t n;
};

struct run {
	const struct pv_env *env;
	const struct pv_playbook *pb;
	struct pv_run_result *res;
	struct pv_ramp ramp;
	struct sink sink;
	struct pv_remote **rems;   /* one per client */
	struct pv_remote *ctl_rem; /* the controller's host, when it has one and a command */
	char (*system)[128];	   /* per client: uname -sr */
	char server_system[256];
	const struct pv_secret *password;
	char base[200];		   /* on the hosts: /tmp/provision-run-<lab>-<id>, then -<host>
				    * (hosts may share a file system, as the lab's do) */
	char local_pw[64];	   /* a private folder for the local controller's password file */
	bool local_pw_written;
	struct pv_watch *watch;
	double lost_after, deadline;
	double wall0;
	/* driver builtin */
	bool builtin;
	struct pv_self self;
	char (*bin)[128]; /* per client: provision's path there */
	struct pv_load_config cfg;
	struct pv_load_summary *sums; /* per step run */
};

/* Mark a host's outcome: the state, and the first failure's code and message. */
void pv_run_host_fail(struct pv_run_host *h, enum pv_run_state s, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Make the folder rel below the run's folder (its parent there). */
int pv_run_sink_mkdir(struct sink *k, const char *rel);
/* Write the file rel/name below the run's folder (replace: atomically over an older one). */
int pv_run_sink_write(struct sink *k, const char *rel, const char *name, const void *data,
		      size_t len, bool replace);

/* ---- run_builtin.c: the built-in driver ---- */

/* Before the first step: provision's binary on every client, the load settings. */
int pv_run_builtin_prepare(struct run *R);
/* The client's command and its stdin for a step: into x->cmd and in. */
int pv_run_builtin_render(struct run *R, struct hostrun *x, struct pv_buf *in);
/* The thread of a client's `provision load`. */
void *pv_run_builtin_host(void *arg);
/* Once every client is ready (or gone): go. Called with st->lock held; true when the step may
 * start. */
bool pv_run_builtin_all_ready(struct steprun *st);
/* After a step: the clients' intervals merged, the step's summary. */
void pv_run_builtin_step_end(struct run *R, struct steprun *st);
/* After the last step: load.txt, .csv, .json, .svg in the run's folder; the answer. */
int pv_run_builtin_report(struct run *R);
void pv_run_builtin_release(struct run *R);

#endif
