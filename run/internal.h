/* run/internal.h: what the files of run/ share: a run, its steps and hosts, and the interface
 * every driver (command, fsct, builtin) implements. Not for use outside run/. */
#ifndef PV_RUN_INTERNAL_H
#define PV_RUN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "remote/remote.h"
#include "run/render.h"
#include "run/run.h"
#include "run/sink.h"
#include "util/buf.h"

struct run;
struct steprun;
struct hostrun;

/* A driver: what runs on the hosts in each step, and what its results are. run.c and step.c
 * know steps, hosts, the sink, the watch, the drain and the manifest, and reach a driver only
 * through this. Every member may be NULL but plan. */
struct pv_run_driver {
	const char *name;
	/* more seconds a step may take than warmup + duration (the driver's own start-up) */
	double grace;
	/* a client lost or failed in a step does not end it: the others go on to its end, the
	 * step counts for nothing, and the run goes on to the next step (which starts that
	 * client's command again); the run ends partial */
	bool goes_on;
	/* the run's settings checked before anything starts (PV_ECONFIG naming the setting) */
	int (*check)(struct run *R);
	/* the dry run: every command it would run, into R->res->plan */
	void (*plan)(struct run *R);
	/* after the hosts are connected, before the first step (e.g. a binary on the clients);
	 * sets R->drv_state. NULL host below: the driver cannot run here (PV_ENOTIMPL) */
	int (*prepare)(struct run *R);
	/* a host's command for the step: x->cmd, x->input (its stdin), x->password */
	int (*render)(struct run *R, struct steprun *st, struct hostrun *x);
	/* the thread of a host in a step: start its command, follow it until st->over, mark its
	 * state, gather its results, set x->ended (all under st->lock where shared) */
	void *(*host)(void *hostrun);
	/* under st->lock: every client is ready for the load to start at once (NULL: at once) */
	bool (*ready)(struct steprun *st);
	/* under st->lock: how many users the clients have logged on, for the progress line */
	unsigned (*logged_on)(struct steprun *st);
	/* after a step's hosts have ended and its watch is summed: the step's own figures */
	void (*step_end)(struct run *R, struct steprun *st);
	/* after a step of the ramp: whether the ramp ends there (--over-steps) */
	bool (*ramp_over)(struct run *R);
	/* after the ramp: the users of another step (--refine), 0 for none */
	unsigned (*next_users)(struct run *R);
	/* after the last step: the driver's result files, R->res->answer */
	int (*report)(struct run *R);
	void (*release)(struct run *R);
};

extern const struct pv_run_driver pv_run_driver_command, pv_run_driver_fsct, pv_run_driver_builtin;

struct hostrun {
	struct steprun *st;
	struct pv_run_host *h;
	const struct pv_playbook_host *host; /* NULL: the local controller */
	struct pv_remote *rem;
	struct pv_buf cmd;   /* the command as rendered */
	struct pv_buf input; /* its stdin (secret: it may carry the password) */
	char base[256];	     /* the run's folder on the host: <run base>-<host> */
	char dir[300];	     /* the step's folder there: <base>/step-01 */
	bool password;	     /* the command reads the users' password */
	pthread_t thread;
	bool thread_ok;
	/* under st->lock */
	bool running, ended, silent, final, ready;
	double last_seen;
	void *drv; /* the driver's state of this host in this step, freed by its step_end */
};

struct steprun {
	struct run *run;
	struct pv_run_step *step;
	char rel[32]; /* "step-01" below the run's folder */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool over; /* the step is over: every command stops */
	bool go;   /* every client is ready, the load starts */
	double go_at;
	struct hostrun *hr;
	size_t n;
};

struct run {
	const struct pv_env *env;
	const struct pv_playbook *pb;
	const struct pv_run_driver *drv;
	void *drv_state; /* the driver's, for the whole run */
	struct pv_run_result *res;
	struct pv_run_ramp ramp;
	struct pv_run_sink sink;
	struct pv_remote **rems;   /* one per client */
	struct pv_remote *ctl_rem; /* the controller's host, when it has one */
	struct pv_remote *srv_rem; /* the server's, from connect_all until its watch takes it */
	char (*system)[128];	   /* per client: uname -sr */
	char server_system[256];
	char *server_config; /* testparm -s on the server when the run started; NULL: unknown */
	const struct pv_secret *password;
	char base[200];	   /* on the hosts: /tmp/provision-run-<lab>-<id>, then -<host> (hosts may
			    * share a file system, as the lab's do) */
	char local_pw[64]; /* a private folder for the local controller's password file */
	struct pv_run_watch *watch, *dc_watch;
	double lost_after, deadline;
	double wall0;
};

/* run/step.c */
/* Mark a host's outcome: the state, and the first failure's code and message. */
void pv_run_host_fail(struct pv_run_host *h, enum pv_run_state s, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Host i of a step (i < nclients: client i, else the controller): x->h's name, users, x's
 * host, session, base and dir. */
void pv_run_host_init(struct run *R, struct steprun *st, struct hostrun *x, size_t i);
/* Step si of the ramp, whole: its hosts' commands, the wait for ready, the load, the stop,
 * the watch's files, the driver's figures. */
int pv_run_step_run(struct run *R, size_t si);
/* Wall clock, seconds since the epoch. */
double pv_run_wall(void);

/* run/manifest.c */
int pv_run_manifest_write(struct run *R, const char *status, int code, const char *msg);

#endif
