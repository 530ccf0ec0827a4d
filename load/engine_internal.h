/* load/engine_internal.h: what the files of the load engine share (load/engine.h is its face,
 * docs/load.md the why): the engine, its workers (a thread and an event loop each) and their
 * users, and what each file gives the others:
 *   engine.c    the coordinator: the steps, the phases, the intervals' figures; pv_load
 *   worker.c    a worker's thread: its loop and phases, its users' state and counts
 *   logon.c     logons (NTLMv2 or Kerberos), tried again, and made again when one breaks
 *   learn.c     what a user knows of its home tree, and how it learns it at its logon
 *   client.c    the requests, as a Windows client makes them
 *   scenario.c  the scenarios, their start and their end
 *   replay.c    load.workload's learned kinds, made into scenarios
 * Only load/engine*.c and the files above include it. */
#ifndef PV_LOAD_ENGINE_INTERNAL_H
#define PV_LOAD_ENGINE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "load/engine.h"
#include "smb/async.h"

struct pv_fileset;
struct pv_krb_sec;

#define PATH_MAX_LOAD 512
#define IO_CHUNK      65536u
#define TURN_MS	      50 /* a worker looks at its phase at least this often */

struct file {
	char *path;
	uint64_t size;
};

struct list {
	struct file *f;
	size_t n, cap;
};

/* U_OFF: no connection, none asked for (between steps, or not in this step); U_FAILED: the
 * connection failed or was lost in this step */
enum ustate { U_OFF, U_OPENING, U_LEARNING, U_IDLE, U_BUSY, U_FAILED };

struct user;
struct step;
struct replay;
typedef void (*step_fn)(struct user *u, const struct pv_smb_done *d);

struct engine;
struct worker;

struct user {
	struct engine *e;
	struct worker *w;
	struct pv_load_user info; /* its own copies of the strings */
	size_t index;		  /* its place in the caller's users */
	struct pv_smb_conn *c;
	enum ustate st;
	bool active; /* in this step */
	struct pv_load_sched sched;
	struct pv_load_rng rng; /* picks files */
	/* when its next scenario may start (due) and when the schedule has it (planned: the
	 * rate's, from which a start is late; due is planned, or near it after a learned
	 * activity: pv_load_start_at), the think time after the learned activity under way
	 * (-1: none), and the seconds the last answer took (a learned gap and think time are
	 * from the last request, as learn measures them) */
	double due, planned, think, answered_in;
	enum pv_load_op last_op; /* the command of its last request (a learned gap's: paused) */
	double idle_since;	 /* when its last scenario ended (or it logged on) */
	enum pv_playbook_workload_kind next;
	/* the scenario (or the learning) under way */
	enum pv_playbook_workload_kind kind;
	const struct step *steps; /* ... its steps (load/steps.h) */
	double start;
	bool late;
	step_fn k;     /* what the answer to the request in flight goes to */
	step_fn after; /* where a whole read, write or listing goes when done */
	int step;
	uint8_t fid[16], fid2[16];
	bool open1, open2;
	uint64_t off, size; /* where the read or write under way is; the file's size */
	uint64_t to;	    /* ... where it stops */
	bool on2;	    /* ... whether it is on fid2 */
	uint32_t chunk;	    /* ... its requests' size: IO_CHUNK, or a learned read's one */
	uint64_t listed;    /* the size of the file picked, as its listing said */
	uint64_t fsize[2];  /* the open files' sizes (F1, F2), as their CREATE said */
	uint64_t at[2];	    /* ... where a learned kind's next read or write goes */
	size_t i;
	char path[PATH_MAX_LOAD], path2[PATH_MAX_LOAD];
	struct list names;  /* what the listing under way found */
	int want;	    /* ... files (0), folders (1) or both (2: folders' sizes DIR) */
	bool list_page;	    /* ... one answer's entries alone (client_list's LIST_PAGE) */
	uint8_t list_match; /* ... of part of it, or of one name (LIST_PATTERN, LIST_NAME) */
	/* the tree, learned at the logon: static/'s folders that hold files (dirs) and their
	 * files, volatile/'s files, ours in new/; todo: the folders still to list */
	struct list dirs, sfiles, vfiles, made, todo;
	size_t dir_file; /* the folder picked from dirs (a dir's size): its first file's place in
			  * sfiles, from 1 (0: none known) */
	/* a learned listing of a folder above the one picked from dirs (load/replay.c's
	 * folder_at): the name under it on the way there, for a pattern or a name ("" none) */
	char child[256];
	/* sfiles' places in order of size, for a learned workload's reads (files_pick_min); the
	 * built-in scenarios pick from sfiles in its own order */
	uint32_t *by_size;
	size_t made_head;
	struct pv_krb_sec *krb; /* auth kerberos: the logon under way */
	unsigned tries;		/* this step's logon tries */
	/* its connection broke in the middle of a step (a server restarted): it logs on again,
	 * as a Windows client does, while its due scenarios go unserved */
	bool lost, relog; /* ... and the logon under way is that one */
	/* durable handles (SMB 3): each open file's lease and CreateGuid (dh[F1], dh[F2]: a
	 * guid of zeros when the server did not make it durable) and the path it was opened by;
	 * resume: its connection broke in a scenario whose open files are all durable, which
	 * waits for the logon again, claims them again and asks its step's request again, as a
	 * Windows client goes on (scenario_resume); reclaim: the next file to claim */
	struct pv_smb_lease dh[2];
	char dh_path[2][PATH_MAX_LOAD];
	uint32_t dh_seq;
	uint64_t prev_sid; /* the session of the connection that broke (PreviousSessionId) */
	/* a learned activity's client time (activity.client) being waited before its next
	 * request: until pause_at (0: none); resumed: the wait is over, the step goes */
	double pause_at;
	bool resumed;
	struct pv_load_rng crng; /* ... the draws of its times (a stream of their own) */
	/* a learned kind's static/ file opened to read (F1, F2): its reads' sizes, drawn from
	 * rsz[f] (a stream begun at its open, whose draws also chose a file that holds them
	 * all); ahead[f] whether they are */
	struct pv_load_rng rsz[2];
	bool ahead[2];
	bool resume;
	int reclaim;
	double retry_at; /* the next try */
	unsigned relogs; /* tries so far, for the backoff */
	double logon_t0; /* its first try */
	/* a learned workload's logons (pv_playbook_workload_logons): when it next logs off and on
	 * again on a new connection (HUGE_VAL: never), whether the logon under way is that one
	 * (its due scenarios wait for it), and the draws of its times */
	double relogon_at;
	bool relogon;
	struct pv_load_rng lrng;
	/* a learned workload's opens made without a lease, owed (replay_leased) */
	double unleased;
	unsigned seq;
	size_t learn;
};

enum phase { PH_IDLE, PH_LOGON, PH_RUN, PH_DRAIN, PH_CLOSE, PH_QUIT };

struct worker {
	struct engine *e;
	pthread_t t;
	bool started;
	clockid_t clock; /* its CPU time */
	struct pv_smb_loop *l;
	struct user **users; /* owned by the engine */
	size_t n, cap;
	/* the worker's own */
	struct user **again; /* users whose logon is to be tried again, nagain of them */
	size_t nagain, next_open;
	unsigned opening, pending; /* connections opening; users not yet ready or failed */
	double wake;		   /* the earliest due of an idle or failed user */
	double t0;		   /* PH_RUN: when the schedules start */
	uint64_t ops;		   /* the ops loop's answers */
	enum phase phase;	   /* the engine's, as the worker saw it last */
	/* a learned workload's answers' times: its gaps (model.h), by the answer's command
	 * (activity.within_after's), and of all the others ([PV_LOAD_OPS]: activity.within) */
	struct pv_load_gaps gaps[PV_LOAD_OPS + 1];
	/* under lock: what the coordinator reads */
	pthread_mutex_t lock;
	struct pv_load_figs figs;   /* counts since the coordinator last took them */
	struct pv_load_logon logon; /* this step's logons */
	unsigned connected, failed; /* active users with a connection (learning or more), and
				     * without one (failed, or never opened) */
	char first_error[576];
	char spoke[128];   /* what its first user's connection speaks (pv_smb_describe) */
	unsigned done_gen; /* the phase generation it finished */
	int err;	   /* its loop failed (set once, by the worker), with errmsg */
	char errmsg[256];
};

struct engine {
	const struct pv_load_opts *o;
	const struct pv_fileset *fs; /* o->fileset's plan, or NULL */
	struct replay *replay;	     /* load.workload's kinds made into scenarios, or NULL */
	struct worker *w;
	unsigned nw;
	struct user **users; /* every user so far, in the caller's order */
	size_t n, cap;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum phase phase; /* under lock, with gen: what the workers are to do */
	unsigned gen;
	double t0;	 /* PH_RUN: when the schedules start */
	size_t step_n;	 /* PH_LOGON: the step's users, the first of e->users */
	char run[24];	 /* in the names of what this run makes: another run's never collide */
	uint64_t run_id; /* ... hashed, in the GUIDs it makes (a user's ClientGuid, a CreateGuid) */
	uint8_t data[IO_CHUNK];
};

#define DIR UINT64_MAX /* the size a listing of both gives a folder */

#define LEASE_RH	 3u /* the lease to read a document: SMB2_LEASE_READ | HANDLE */
#define LEASE_RWH	 7u /* ... to edit one: READ | WRITE | HANDLE */
#define INFO_BASIC	 4  /* FileBasicInformation */
#define INFO_DISPOSITION 13 /* FileDispositionInformation */
#define INFO_EOF	 20 /* FileEndOfFileInformation */

/* ---- engine.c ---- */

int engine_grow(void *arrp, size_t *cap, size_t need, size_t size);

/* ---- worker.c ---- */

void user_set_state(struct user *u, enum ustate st);
void user_count_op(struct user *u, enum pv_load_op op);
void user_fail(struct user *u, const char *msg);
bool worker_turn(struct worker *w, int ms);
bool worker_wait(struct worker *w, double seconds);
bool worker_running(const struct worker *w);
void *worker_main(void *arg);

/* ---- logon.c ---- */

void logon_lost(struct user *u);
void logon_disconnect(struct user *u);
void logon_begin(struct worker *w, size_t step_n);
void logon_relog(struct worker *w, struct user *u);
double logon_next(struct user *u, double t);
void logon_again(struct worker *w, struct user *u);
bool logon_turn(struct worker *w);

/* ---- learn.c ---- */

int files_add(struct list *l, const char *path, uint64_t size);
void files_clear(struct list *l);
void files_free(struct list *l);
const struct file *files_pick(struct user *u, const struct list *l);
/* A static/ file at random among those of need bytes or more (u->by_size); the largest when
 * none is; NULL when there is none. */
const struct file *files_pick_min(struct user *u, uint64_t need);
void learn_tree(struct user *u);

/* ---- client.c ---- */

void client_done(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d);
bool client_refused(struct user *u, const struct pv_smb_done *d, uint32_t ok2);
void client_read_all(struct user *u, bool second, step_fn after);
void client_write_all(struct user *u, uint64_t size, bool second, step_fn after);
/* List the open folder u->fid as how says (steps.h's LIST takes it as its arg), its files
 * (want 0), folders (1) or both (2) into u->names: 0 the whole folder from its start; LIST_PAGE one
 * answer's entries alone (a later listing of the open goes on); LIST_GO_ON from where the last one
 * ended, not from the start (both: one answer, going on). LIST_PATTERN lists part of the
 * folder, the names that share its first file's but for their last letter before the
 * extension ("f000*" for f0001.txt), LIST_NAME the first file's name alone, as a learned
 * listing of a pattern or of a name asked (the folder picked by FOLDER: u->dir_file). */
enum { LIST_PAGE = 1, LIST_GO_ON = 2, LIST_PATTERN = 4, LIST_NAME = 8 };
void client_list(struct user *u, int want, unsigned how, step_fn after);
void client_open(struct user *u, const char *path, uint32_t access, uint32_t disp, uint32_t opts,
		 step_fn next);
bool client_opened(struct user *u, const struct pv_smb_done *d, bool second);
void client_close(struct user *u, bool second, step_fn next);
void client_open_lease(struct user *u, bool second, const char *path, uint32_t access,
		       uint32_t disp, uint32_t opts, uint32_t lease, step_fn next);
void client_reopen(struct user *u, bool second, step_fn next);
void client_probe(struct user *u, const char *path, step_fn next);
bool client_probed(struct user *u, const struct pv_smb_done *d);
void client_set_info(struct user *u, bool second, uint8_t cls, step_fn next);
void client_flush(struct user *u, bool second, step_fn next);
void client_lock(struct user *u, bool second, bool unlock, step_fn next);
void client_object_id(struct user *u, bool second, step_fn next);
/* An IOCTL of the control code ctl on the file (second: fid2), or on none for
 * FSCTL_DFS_GET_REFERRALS: the referral of u's share (\\alias\\share). */
void client_fsctl(struct user *u, bool second, uint32_t ctl, step_fn next);
void client_watch(struct user *u, bool second);
void client_rename(struct user *u, bool second, const char *path, bool replace, step_fn next);
void client_stat(struct user *u, bool second, step_fn next);
void client_read_at(struct user *u, bool second, uint64_t off, uint32_t n, step_fn after);
void client_write_at(struct user *u, bool second, uint64_t off, uint32_t n, step_fn after);

/* ---- scenario.c ---- */

void scenario_end(struct user *u, bool error);
void ops_start(struct user *u, double t);
void scenario_start(struct user *u, double t);
void scenario_unserved(struct user *u);
bool scenario_held(struct user *u);
void scenario_resume(struct user *u);
void scenario_drop(struct user *u);
void scenario_go_on(struct user *u, double t);

/* ---- replay.c ---- */

/* c's learned kinds made into scenarios (*out NULL when it has none): PV_OK, or PV_EIO. */
int replay_new(const struct pv_playbook_workload *c, struct replay **out);
void replay_free(struct replay *r);
/* The steps of a learned kind drawn by weight for u's next scenario, its index in *kind (-1:
 * none, no workload). */
const struct step *replay_pick(struct user *u, int *kind);
/* A learned read's or write's size on file f (F1, F2), drawn from the learned sizes: a write
 * 1 byte to IO_CHUNK; a read as the connection takes it, from the stream its open began when
 * it was opened to read (replay.c's reads_ahead), else drawn anew. */
uint32_t replay_io_size(struct user *u, int f, bool write);
/* Whether u's open of a file to read or to edit in place asks the lease its mode has: in a
 * learned run, the workload's unleased share of them (pv_playbook_workload_learned.unleased)
 * asks none, one in every 100 / unleased, evenly. */
bool replay_leased(struct user *u);

#endif
