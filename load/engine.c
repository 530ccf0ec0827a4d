/* load/engine.c: the built-in load driver on one client (see engine.h, docs/load.md).
 *
 * Threads: the caller's (the coordinator: steps, the caller's callbacks, the intervals' figures)
 * and one per event loop (a worker: its share of the users, their connections and scenarios).
 * A worker touches only its own users and loop; what the coordinator reads of it (its
 * figures, its users' counts, its logons, the phase it finished) is under its lock. The
 * coordinator says what to do by the engine's phase, under the engine's lock. */
#include "load/engine.h"

#include "fileset/fileset.h"
#include "krb/krb.h"
#include "smb/async.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PATH_MAX_LOAD 512
#define IO_CHUNK      65536u
#define DRAIN_SECS    10.0 /* at the end, how long scenarios in flight may take to finish */
#define LOGON_TRIES   3	   /* a logon the server was too slow for (or reset) is tried again */
#define RELOG_FIRST   0.5  /* seconds before a user whose connection broke logs on again */
#define RELOG_MAX     5.0  /* ... and at most between its tries */
#define TURN_MS	      50   /* a worker looks at its phase at least this often */
#define THREADS_MAX   64

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
typedef void (*step_fn)(struct user *u, const struct pv_smba_done *d);

struct engine;
struct worker;

struct user {
	struct engine *e;
	struct worker *w;
	struct pv_load_user info; /* its own copies of the strings */
	size_t index;		  /* its place in the caller's users */
	struct pv_smba *c;
	enum ustate st;
	bool active; /* in this step */
	struct pv_load_sched sched;
	struct pv_load_rng rng; /* picks files */
	double due;
	double idle_since; /* when its last scenario ended (or it logged on) */
	enum pv_load_kind next;
	/* the scenario (or the learning) under way */
	enum pv_load_kind kind;
	double start;
	bool late;
	step_fn k;     /* what the answer to the request in flight goes to */
	step_fn after; /* where a primitive (client_read_all, _write_all, _list_all) goes when done
			*/
	int step;
	bool probing;  /* the request in flight looks for what should not be there */
	uint64_t keep; /* a size kept across another's write */
	uint8_t fid[16], fid2[16];
	bool open1, open2;
	uint64_t off, size;
	size_t i;
	char path[PATH_MAX_LOAD], path2[PATH_MAX_LOAD];
	struct list names; /* what the listing under way found */
	int want;	   /* ... files (0), folders (1) or both (2: folders' sizes DIR) */
	/* the tree, learned at the logon: static/'s folders that hold files (dirs) and their
	 * files, volatile/'s files, ours in new/; todo: the folders still to list */
	struct list dirs, sfiles, vfiles, made, todo;
	size_t made_head;
	struct pv_krb_sec *krb; /* auth kerberos: the logon under way */
	unsigned tries;		/* this step's logon tries */
	/* its connection broke in the middle of a step (a server restarted): it logs on again,
	 * as a Windows client does, while its due scenarios go unserved */
	bool lost, relog; /* ... and the logon under way is that one */
	double retry_at;  /* the next try */
	unsigned relogs;  /* tries so far, for the backoff */
	double logon_t0;  /* its first try */
	unsigned seq;
	size_t learn;
};

enum phase { PH_IDLE, PH_LOGON, PH_RUN, PH_DRAIN, PH_CLOSE, PH_QUIT };

struct worker {
	struct engine *e;
	pthread_t t;
	bool started;
	clockid_t clock; /* its CPU time */
	struct pv_smba_loop *l;
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
	/* under lock: what the coordinator reads */
	pthread_mutex_t lock;
	struct pv_load_figs figs;   /* counts since the coordinator last took them */
	struct pv_load_logon logon; /* this step's logons */
	unsigned connected, failed; /* active users with a connection (learning or more), and
				     * without one (failed, or never opened) */
	char first_error[576];
	char spoke[128];   /* what its first user's connection speaks (pv_smba_describe) */
	unsigned done_gen; /* the phase generation it finished */
	int err;	   /* its loop failed (set once, by the worker), with errmsg */
	char errmsg[256];
};

struct engine {
	const struct pv_load_opts *o;
	const struct pv_fileset *fs; /* o->fileset's plan, or NULL */
	struct worker *w;
	unsigned nw;
	struct user **users; /* every user so far, in the caller's order */
	size_t n, cap;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum phase phase; /* under lock, with gen: what the workers are to do */
	unsigned gen;
	double t0;     /* PH_RUN: when the schedules start */
	size_t step_n; /* PH_LOGON: the step's users, the first of e->users */
	char run[24];  /* in the names of what this run makes: another run's never collide */
	uint8_t data[IO_CHUNK];
};

/* ---- small things ---- */

static int files_add(struct list *l, const char *path, uint64_t size)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct file *f = realloc(l->f, cap * sizeof(*f));

		if (!f)
			return -1;
		l->f = f;
		l->cap = cap;
	}
	if (!(l->f[l->n].path = strdup(path)))
		return -1;
	l->f[l->n++].size = size;
	return 0;
}

static void files_clear(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].path);
	l->n = 0;
}

static void files_free(struct list *l)
{
	files_clear(l);
	free(l->f);
	memset(l, 0, sizeof(*l));
}

static const struct file *files_pick(struct user *u, const struct list *l)
{
	return l->n ? &l->f[(size_t)(pv_load_rng_unit(&u->rng) * (double)l->n)] : NULL;
}

static bool worker_running(const struct worker *w);

/* A connection that worked broke while the step runs: counted, and the user logs on again
 * (run_turn) after RELOG_FIRST seconds, backing off. */
static void logon_lost(struct user *u)
{
	struct worker *w = u->w;

	if (u->lost || !u->active || !worker_running(w) || u->e->o->ops_loop)
		return;
	u->lost = true;
	u->relogs = 0;
	u->retry_at = pv_now() + RELOG_FIRST;
	if (u->retry_at < w->wake)
		w->wake = u->retry_at;
	pthread_mutex_lock(&w->lock);
	w->figs.drops++;
	pthread_mutex_unlock(&w->lock);
}

/* Every change of a user's state goes here: the worker's counts of its active users follow. */
static void user_set_state(struct user *u, enum ustate st)
{
	struct worker *w = u->w;
	bool was_conn = u->st >= U_LEARNING && u->st <= U_BUSY,
	     now_conn = st >= U_LEARNING && st <= U_BUSY;
	bool was_fail = u->st == U_FAILED || u->st == U_OFF,
	     now_fail = st == U_FAILED || st == U_OFF;

	if (u->active && (was_conn != now_conn || was_fail != now_fail)) {
		pthread_mutex_lock(&w->lock);
		w->connected = w->connected - was_conn + now_conn;
		w->failed = w->failed - was_fail + now_fail;
		pthread_mutex_unlock(&w->lock);
	}
	if (was_conn && st == U_FAILED)
		logon_lost(u);
	u->st = st;
}

/* A request of u's scenario went out: counted as its kind's. */
static void user_count_op(struct user *u, enum pv_load_op op)
{
	struct worker *w = u->w;

	if (u->st != U_BUSY || u->e->o->ops_loop)
		return;
	pthread_mutex_lock(&w->lock);
	w->figs.kind[u->kind].ops[op]++;
	pthread_mutex_unlock(&w->lock);
}

static void user_fail(struct user *u, const char *msg)
{
	struct worker *w = u->w;

	pthread_mutex_lock(&w->lock);
	if (!w->first_error[0])
		snprintf(w->first_error, sizeof(w->first_error), "%s: %s", u->info.name, msg);
	if (u->st == U_OPENING)
		w->logon.failed++;
	pthread_mutex_unlock(&w->lock);
	if (u->st == U_OPENING || u->st == U_LEARNING)
		w->pending--;
	user_set_state(u, U_FAILED);
	if (u->due < w->wake)
		w->wake = u->due;
	pv_log(PV_LOG_DEBUG, "load: %s: %s", u->info.name, msg);
}

/* ---- the scenario under way ends ---- */

static void scenario_end(struct user *u, bool error)
{
	struct worker *w = u->w;
	double t = pv_now();

	/* files left open by a failure: closed, nobody waits for the answer */
	if (u->open1 && pv_smba_closefile(u->c, u->fid, NULL, NULL) == PV_OK)
		user_count_op(u, PV_LOAD_OP_CLOSE);
	if (u->open2 && pv_smba_closefile(u->c, u->fid2, NULL, NULL) == PV_OK)
		user_count_op(u, PV_LOAD_OP_CLOSE);
	u->open1 = u->open2 = false;
	if (!u->e->o->ops_loop) {
		pthread_mutex_lock(&w->lock);
		pv_load_count_end(&w->figs, u->e->o->cfg, u->kind, u->late, t - u->start, error);
		pthread_mutex_unlock(&w->lock);
	}
	if (u->st == U_BUSY)
		user_set_state(u, pv_smba_usable(u->c) ? U_IDLE : U_FAILED);
	u->idle_since = t;
	if (u->due < w->wake)
		w->wake = u->due;
}

/* Every answer comes here first: a lost connection or a refusal ends the scenario. */
static void client_done(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct user *u = arg;

	(void)c;
	if (u->st == U_OFF) /* closed by us between steps: nothing waits for it */
		return;
	if (d->code != PV_OK) {
		if (u->st == U_BUSY)
			scenario_end(u, true);
		if (u->st != U_FAILED)
			user_fail(u, d->msg ? d->msg : "the connection was lost");
		return;
	}
	u->k(u, d);
}

static bool client_refused(struct user *u, const struct pv_smba_done *d, uint32_t ok2)
{
	if (d->status == 0 || d->status == ok2)
		return false;
	if (u->st == U_BUSY)
		scenario_end(u, true);
	else if (u->st == U_LEARNING)
		user_fail(u, "its home tree could not be listed");
	return true;
}

/* Issue a request (counted as op when it went out); a refusal to queue it ends the scenario. */
#define ISSUE(u, next, op, call)                                                                   \
	do {                                                                                       \
		(u)->k = (next);                                                                   \
		if ((call) != PV_OK) {                                                             \
			if ((u)->st == U_BUSY)                                                     \
				scenario_end((u), true);                                           \
			else                                                                       \
				user_fail((u), pv_errmsg());                                       \
		} else {                                                                           \
			user_count_op((u), (op));                                                  \
		}                                                                                  \
	} while (0)

/* ---- primitives: read a whole file, write one, list a folder ---- */

static void read_more(struct user *u, const struct pv_smba_done *d)
{
	if (d && client_refused(u, d, 0))
		return;
	if (d)
		u->off += d->buflen;
	if (u->off >= u->size || (d && d->buflen == 0)) {
		u->after(u, NULL);
		return;
	}
	ISSUE(u, read_more, PV_LOAD_OP_READ,
	      pv_smba_read(u->c, u->fid, u->off,
			   (uint32_t)(u->size - u->off < IO_CHUNK ? u->size - u->off : IO_CHUNK),
			   client_done, u));
}

static void client_read_all(struct user *u, step_fn after)
{
	u->after = after;
	u->off = 0;
	read_more(u, NULL);
}

/* Writes go to fid2 when u->i is 2, else fid. */
static void write_more(struct user *u, const struct pv_smba_done *d)
{
	uint32_t n;

	if (d && client_refused(u, d, 0))
		return;
	if (u->off >= u->size) {
		u->after(u, NULL);
		return;
	}
	n = (uint32_t)(u->size - u->off < IO_CHUNK ? u->size - u->off : IO_CHUNK);
	ISSUE(u, write_more, PV_LOAD_OP_WRITE,
	      pv_smba_write(u->c, u->i == 2 ? u->fid2 : u->fid, u->off, u->e->data, n, client_done,
			    u));
	u->off += n;
}

static void client_write_all(struct user *u, uint64_t size, int which, step_fn after)
{
	u->after = after;
	u->off = 0;
	u->size = size;
	u->i = (size_t)which;
	write_more(u, NULL);
}

#define DIR UINT64_MAX /* the size a listing of both gives a folder */

static int entry(void *arg, const char *name, bool dir, uint64_t size)
{
	struct user *u = arg;
	char path[PATH_MAX_LOAD];

	if (u->want != 2 && dir != (u->want == 1))
		return 0;
	if (dir)
		size = u->want == 2 ? DIR : size;
	if (snprintf(path, sizeof(path), "%s/%s", u->path, name) >= (int)sizeof(path))
		return pv_error(PV_EREMOTE, "a path in %s is too long", u->path);
	return files_add(&u->names, path, size) < 0 ? pv_error(PV_EIO, "out of memory") : 0;
}

static void list_more(struct user *u, const struct pv_smba_done *d)
{
	if (d->status == 0x80000006u) { /* STATUS_NO_MORE_FILES */
		u->after(u, NULL);
		return;
	}
	if (client_refused(u, d, 0))
		return;
	if (pv_smba_entries(d->buf, d->buflen, entry, u) != PV_OK) {
		if (u->st == U_BUSY)
			scenario_end(u, true);
		else
			user_fail(u, pv_errmsg());
		return;
	}
	ISSUE(u, list_more, PV_LOAD_OP_QUERY_DIRECTORY,
	      pv_smba_list(u->c, u->fid, false, client_done, u));
}

/* List the open folder u->fid (u->path): files (want 0), folders (1) or both (2) into
 * u->names. */
static void client_list_all(struct user *u, int want, step_fn after)
{
	u->after = after;
	u->want = want;
	files_clear(&u->names);
	ISSUE(u, list_more, PV_LOAD_OP_QUERY_DIRECTORY,
	      pv_smba_list(u->c, u->fid, true, client_done, u));
}

/* Open u->path into fid (or fid2 when second). */
static void client_open(struct user *u, const char *path, uint32_t access, uint32_t disp,
			uint32_t opts, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_CREATE,
	      pv_smba_create(u->c, path, access, disp, opts, client_done, u));
}

static bool client_opened(struct user *u, const struct pv_smba_done *d, bool second)
{
	if (client_refused(u, d, 0))
		return false;
	if (second) {
		memcpy(u->fid2, d->fid, 16);
		u->open2 = true;
	} else {
		memcpy(u->fid, d->fid, 16);
		u->open1 = true;
		u->size = d->size;
	}
	return true;
}

static void client_close(struct user *u, bool second, step_fn next)
{
	if (second)
		u->open2 = false;
	else
		u->open1 = false;
	ISSUE(u, next, PV_LOAD_OP_CLOSE,
	      pv_smba_closefile(u->c, second ? u->fid2 : u->fid, client_done, u));
}

/* ---- learning the tree: static/, volatile/, new/ ---- */

/* The folders of a part are listed down to LEARN_DEPTH below it, LEARN_FOLDERS at most in
 * all: enough for the filesets' nesting (homefolders: static/<6>/<4>/18 files). */
#define LEARN_DEPTH   4
#define LEARN_FOLDERS 4096
enum part { P_STATIC, P_VOLATILE, P_NEW };

static void learn_next(struct user *u, const struct pv_smba_done *d);

static void learned(struct user *u)
{
	files_clear(&u->names);
	files_clear(&u->todo);
	user_set_state(u, U_IDLE);
	u->idle_since = pv_now();
	u->w->pending--;
}

/* A folder to list: its part and depth in the size. */
static int learn_add(struct user *u, const char *path, enum part part, unsigned depth)
{
	return files_add(&u->todo, path, (uint64_t)part | (uint64_t)depth << 8);
}

static void learn_listed(struct user *u, const struct pv_smba_done *d)
{
	uint64_t at = u->todo.f[u->i - 1].size;
	enum part part = (enum part)(at & 0xff);
	unsigned depth = (unsigned)(at >> 8);
	bool files = false;

	(void)d;
	/* files go where their part says, folders to the list of those to list */
	for (size_t i = 0; i < u->names.n; i++) {
		const struct file *f = &u->names.f[i];
		int r = 0;

		if (f->size == DIR) {
			if (part != P_NEW && depth < LEARN_DEPTH && u->todo.n < LEARN_FOLDERS)
				r = learn_add(u, f->path, part, depth + 1);
		} else if (part == P_STATIC) {
			r = files_add(&u->sfiles, f->path, f->size);
			files = true;
		} else if (part == P_VOLATILE) {
			r = files_add(&u->vfiles, f->path, f->size);
		} else if (strstr(f->path, "/new/pv-")) {
			r = files_add(&u->made, f->path, f->size);
		}
		if (r < 0) {
			user_fail(u, "out of memory");
			return;
		}
	}
	if (files && files_add(&u->dirs, u->path, 0) < 0) { /* a folder browse can show */
		user_fail(u, "out of memory");
		return;
	}
	client_close(u, false, learn_next);
}

static void learn_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!client_opened(u, d, false))
		return;
	client_list_all(u, 2, learn_listed);
}

/* The next folder to list, until none is left. */
static void learn_next(struct user *u, const struct pv_smba_done *d)
{
	if (d && client_refused(u, d, 0))
		return;
	if (u->i >= u->todo.n) {
		learned(u);
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", u->todo.f[u->i++].path);
	client_open(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, learn_opened);
}

/* static/ from the plan its tree was built from: the files and the folders holding them that
 * a listing down to LEARN_DEPTH would find, without a request. The plan holds a leaf folder's
 * files right after it. -1: out of memory. */
static int learn_plan(struct user *u, const struct pv_fileset *fs)
{
	char path[PATH_MAX_LOAD], dir[PATH_MAX_LOAD] = "";
	size_t folders = 0;

	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *x = &fs->entries[i];
		unsigned depth = 0;

		if (x->part != PV_PART_STATIC)
			continue;
		for (const char *c = x->path; *c; c++)
			depth += *c == '/';
		if (x->dir) { /* static is depth 0: listed down to LEARN_DEPTH */
			if (depth <= LEARN_DEPTH)
				folders++;
			continue;
		}
		if (depth - 1 > LEARN_DEPTH || folders > LEARN_FOLDERS)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", u->info.name, x->path) >=
		    (int)sizeof(path))
			continue; /* a path the engine could not open either */
		if (files_add(&u->sfiles, path, x->size) < 0)
			return -1;
		*strrchr(path, '/') = '\0';
		if (strcmp(path, dir) != 0) { /* a folder browse can show */
			snprintf(dir, sizeof(dir), "%s", path);
			if (files_add(&u->dirs, dir, 0) < 0)
				return -1;
		}
	}
	return 0;
}

static void learn_tree(struct user *u)
{
	const struct pv_fileset *fs = u->e->fs;
	char path[PATH_MAX_LOAD];

	/* what an earlier logon learnt may have changed since */
	files_clear(&u->dirs);
	files_clear(&u->sfiles);
	files_clear(&u->vfiles);
	files_clear(&u->made);
	files_clear(&u->todo);
	u->made_head = 0;
	u->i = 0;
	user_set_state(u, U_LEARNING);
	snprintf(path, sizeof(path), "%s/static", u->info.name);
	if ((fs ? learn_plan(u, fs) : learn_add(u, path, P_STATIC, 0)) < 0 ||
	    (snprintf(path, sizeof(path), "%s/volatile", u->info.name),
	     learn_add(u, path, P_VOLATILE, 0) < 0) ||
	    (snprintf(path, sizeof(path), "%s/new", u->info.name),
	     learn_add(u, path, P_NEW, 0) < 0)) {
		user_fail(u, "out of memory");
		return;
	}
	learn_next(u, NULL);
}

/* ---- the requests of a Windows client around the scenarios ---- */

#define ST_NOT_FOUND	  0xC0000034u /* STATUS_OBJECT_NAME_NOT_FOUND */
#define ST_PATH_NOT_FOUND 0xC000003Au
#define FSCTL_OBJECT_ID	  0x000900C0u /* FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSCC 2.3.7) */
#define NOTIFY_FILTER	  0x0000017Fu /* FILE_NOTIFY_CHANGE_*: what Explorer watches */
#define LOCK_AT		  0x7FFFFF00u /* an Office-style range lock, past the end of the file */
#define INFO_BASIC	  4	      /* FileBasicInformation */
#define INFO_DISPOSITION  13	      /* FileDispositionInformation */
#define INFO_EOF	  20	      /* FileEndOfFileInformation */

/* The lease key of a file for this user: the same for every open of the path (FNV-1a, twice:
 * only which opens share a lease matters, not the key's value). */
static void lease_key(const char *path, uint8_t key[16])
{
	uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};

	for (int k = 0; k < 2; k++) {
		for (const unsigned char *p = (const unsigned char *)path; *p; p++)
			h[k] = (h[k] ^ *p) * 0x100000001b3ull;
		memcpy(key + 8 * k, &h[k], 8);
	}
}

/* CREATE with a lease, as an SMB 3 client opens a document: read-handle caching to read it,
 * read-write-handle to edit it. */
static void client_open_lease(struct user *u, const char *path, uint32_t access, uint32_t disp,
			      uint32_t opts, bool edit, step_fn next)
{
	uint8_t key[16];

	lease_key(path, key);
	ISSUE(u, next, PV_LOAD_OP_CREATE,
	      pv_smba_create_lease(u->c, path, access, disp, opts, key, edit ? 7u : 3u, client_done,
				   u));
}

/* A CREATE of what is not there (Explorer's desktop.ini, Office's owner file, a copy's
 * target): the answer it expects is "not found"; next gets it through u->probing. */
static void client_probe(struct user *u, const char *path, step_fn next)
{
	u->probing = true;
	client_open(u, path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, next);
}

static void nothing(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	(void)c;
	(void)arg;
	(void)d;
}

/* The answer to the request before, as a scenario's step takes it: false when it ended the
 * scenario (a refusal; a probe's "not found" is the answer it wanted, and what it found
 * after all is closed). */
static bool client_answered(struct user *u, const struct pv_smba_done *d)
{
	if (!d)
		return true;
	if (u->probing) {
		u->probing = false;
		if (d->status == ST_NOT_FOUND || d->status == ST_PATH_NOT_FOUND)
			return true;
		if (d->status == 0) {
			if (pv_smba_closefile(u->c, d->fid, NULL, NULL) == PV_OK)
				user_count_op(u, PV_LOAD_OP_CLOSE);
			return true;
		}
	}
	return !client_refused(u, d, 0);
}

static uint8_t *fid_of(struct user *u, bool second)
{
	return second ? u->fid2 : u->fid;
}

static void client_set_info(struct user *u, bool second, uint8_t cls, step_fn next)
{
	uint8_t info[40] = {0};
	uint32_t len = 8;

	if (cls == INFO_EOF) {
		for (int b = 0; b < 8; b++)
			info[b] = (uint8_t)(u->size >> (8 * b));
	} else if (cls == INFO_DISPOSITION) {
		info[0] = 1; /* DeletePending */
		len = 1;
	} else { /* basic: LastWriteTime now (NT time), every other field left as it is */
		uint64_t nt = (uint64_t)(pv_now() * 1e7) + 116444736000000000ull;

		for (int b = 0; b < 8; b++)
			info[16 + b] = (uint8_t)(nt >> (8 * b));
		len = 40;
	}
	ISSUE(u, next, PV_LOAD_OP_SET_INFO,
	      pv_smba_setinfo(u->c, fid_of(u, second), cls, info, len, client_done, u));
}

static void client_flush(struct user *u, bool second, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_FLUSH, pv_smba_flush(u->c, fid_of(u, second), client_done, u));
}

static void client_lock(struct user *u, bool unlock, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_LOCK,
	      pv_smba_lock(u->c, u->fid, LOCK_AT, 1, true, unlock, client_done, u));
}

static void client_object_id(struct user *u, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_IOCTL,
	      pv_smba_fsctl(u->c, FSCTL_OBJECT_ID, u->fid, NULL, 0, 64, client_done, u));
}

/* CHANGE_NOTIFY on the open folder, as Explorer watches the folder it shows: its answer comes
 * when the folder is closed (or something in it changes), and nothing waits for it. */
static void client_watch(struct user *u)
{
	if (pv_smba_notify(u->c, u->fid, NOTIFY_FILTER, nothing, NULL) == PV_OK)
		user_count_op(u, PV_LOAD_OP_CHANGE_NOTIFY);
}

static void client_stat(struct user *u, bool second, step_fn next)
{
	ISSUE(u, next, PV_LOAD_OP_QUERY_INFO,
	      pv_smba_stat(u->c, fid_of(u, second), client_done, u));
}

/* ---- the scenarios (docs/load.md) ---- */

/* Each is a function of its steps: u->step says which request comes next; every answer comes
 * back to it (d NULL at the start and after a client_read_all, _write_all or _list_all). */

/* upload and copy_in: a name for a new file in new/ */
static void new_name(struct user *u)
{
	snprintf(u->path2, sizeof(u->path2), "%s/new/pv-%s-%s-%u.dat", u->info.name, u->info.name,
		 u->e->run, ++u->seq);
}

/* The size of an uploaded document: 64 KiB to 2 MiB, log-uniform (office documents and
 * presentations saved from a desktop). */
static uint64_t upload_size(struct user *u)
{
	return (uint64_t)(65536.0 * exp(pv_load_rng_unit(&u->rng) * log(32.0)));
}

static void made(struct user *u)
{
	if (files_add(&u->made, u->path2, u->size) < 0)
		scenario_end(u, true);
	else
		scenario_end(u, false);
}

/* upload: "is it there?", then create it, size it, write it, flush, set its time, close */
static void sc_upload_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		new_name(u);
		client_probe(u, u->path2, sc_upload_step);
		break;
	case 1:
		client_open_lease(u, u->path2, PV_SMBA_WRITE, PV_SMBA_CREATE, PV_SMBA_NONDIR, true,
				  sc_upload_step);
		break;
	case 2:
		if (!client_opened(u, d, true))
			return;
		u->size = upload_size(u);
		client_set_info(u, true, INFO_EOF, sc_upload_step);
		break;
	case 3:
		client_write_all(u, u->size, 2, sc_upload_step);
		break;
	case 4:
		client_flush(u, true, sc_upload_step);
		break;
	case 5:
		client_set_info(u, true, INFO_BASIC, sc_upload_step);
		break;
	case 6:
		client_close(u, true, sc_upload_step);
		break;
	default:
		made(u);
	}
}

/* browse: open a folder, look at it, watch it, list it, look for its desktop.ini, look at one
 * of its files (open, its attributes, close), close the folder */
static void sc_browse_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open(u, u->path, PV_SMBA_LIST, PV_SMBA_OPEN, PV_SMBA_DIR, sc_browse_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_browse_step);
		break;
	case 2:
		client_watch(u);
		client_list_all(u, 0, sc_browse_step);
		break;
	case 3:
		if (snprintf(u->path2, sizeof(u->path2), "%s/desktop.ini", u->path) >=
		    (int)sizeof(u->path2)) {
			scenario_end(u, true);
			return;
		}
		client_probe(u, u->path2, sc_browse_step);
		break;
	case 4:
		if (!u->names.n) { /* nothing to look at: the folder closes */
			u->step = 8;
			client_close(u, false, sc_browse_step);
			return;
		}
		snprintf(u->path2, sizeof(u->path2), "%s",
			 u->names.f[(size_t)(pv_load_rng_unit(&u->rng) * (double)u->names.n)].path);
		client_open_lease(u, u->path2, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, false,
				  sc_browse_step);
		break;
	case 5:
		if (!client_opened(u, d, true))
			return;
		client_stat(u, true, sc_browse_step);
		break;
	case 6:
		client_close(u, true, sc_browse_step);
		break;
	case 7:
		client_close(u, false, sc_browse_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* read_folder: open a folder, list it, close it, then read every file of it whole */
static void sc_read_folder_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open(u, u->path, PV_SMBA_LIST, PV_SMBA_OPEN, PV_SMBA_DIR,
			    sc_read_folder_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_list_all(u, 0, sc_read_folder_step);
		break;
	case 2:
		u->i = 0;
		client_close(u, false, sc_read_folder_step);
		break;
	case 3: /* the next file */
		if (u->i >= u->names.n) {
			scenario_end(u, false);
			return;
		}
		snprintf(u->path2, sizeof(u->path2), "%s", u->names.f[u->i++].path);
		client_open_lease(u, u->path2, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, false,
				  sc_read_folder_step);
		break;
	case 4:
		if (!client_opened(u, d, false))
			return;
		client_read_all(u, sc_read_folder_step);
		break;
	default:
		u->step = 3;
		client_close(u, false, sc_read_folder_step);
	}
}

static void walk(struct user *u)
{
	const struct file *f = files_pick(u, &u->dirs);

	if (!f) {
		scenario_end(u, true);
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	if (u->kind == PV_LOAD_BROWSE)
		sc_browse_step(u, NULL);
	else
		sc_read_folder_step(u, NULL);
}

/* open_read: a static/ document opened to read (a lease, its attributes, its object id as the
 * shell's link tracking asks), read whole, closed */
static void sc_open_read_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open_lease(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, false,
				  sc_open_read_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_open_read_step);
		break;
	case 2:
		client_object_id(u, sc_open_read_step);
		break;
	case 3:
		client_read_all(u, sc_open_read_step);
		break;
	case 4:
		client_close(u, false, sc_open_read_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* open_close: a document opened, its attributes and object id read, closed */
static void sc_open_close_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open_lease(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, false,
				  sc_open_close_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_open_close_step);
		break;
	case 2:
		client_object_id(u, sc_open_close_step);
		break;
	case 3:
		client_close(u, false, sc_open_close_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* copy_in: a static/ file read whole and written as a new file in new/ (is the target there?
 * create it, size it, write it, set its time) */
static void sc_copy_in_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open_lease(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, false,
				  sc_copy_in_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_copy_in_step);
		break;
	case 2:
		client_read_all(u, sc_copy_in_step);
		break;
	case 3:
		new_name(u);
		client_probe(u, u->path2, sc_copy_in_step);
		break;
	case 4:
		client_open(u, u->path2, PV_SMBA_WRITE, PV_SMBA_CREATE, PV_SMBA_NONDIR,
			    sc_copy_in_step);
		break;
	case 5:
		if (!client_opened(u, d, true))
			return;
		client_set_info(u, true, INFO_EOF, sc_copy_in_step);
		break;
	case 6:
		client_write_all(u, u->size, 2, sc_copy_in_step);
		break;
	case 7:
		client_set_info(u, true, INFO_BASIC, sc_copy_in_step);
		break;
	case 8:
		client_close(u, true, sc_copy_in_step);
		break;
	case 9:
		client_close(u, false, sc_copy_in_step);
		break;
	default:
		made(u);
	}
}

/* The owner file Office makes beside a document it edits: ~$ and the document's name. */
static void owner_name(struct user *u)
{
	const char *slash = strrchr(u->path, '/');
	int dir = slash ? (int)(slash - u->path) : 0;

	if (snprintf(u->path2, sizeof(u->path2), "%.*s/~$%.200s", dir, u->path,
		     slash ? slash + 1 : u->path) < 0)
		u->path2[0] = '\0';
}

/* edit_save: a volatile/ document opened to edit as an editor does (a read-write-handle lease,
 * its attributes, its object id, a range lock, read whole), its owner file made (~$name: is it
 * there? create, write, close), saved (a temporary file written, sized, flushed, closed; the
 * lock released, the document closed, the temporary file renamed over it) and the owner file
 * deleted */
static void sc_edit_save_step(struct user *u, const struct pv_smba_done *d)
{
	const char *slash = strrchr(u->path, '/');
	int dir = slash ? (int)(slash - u->path) : 0;

	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open_lease(u, u->path, PV_SMBA_WRITE, PV_SMBA_OPEN, PV_SMBA_NONDIR, true,
				  sc_edit_save_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_edit_save_step);
		break;
	case 2:
		client_object_id(u, sc_edit_save_step);
		break;
	case 3:
		client_lock(u, false, sc_edit_save_step);
		break;
	case 4:
		client_read_all(u, sc_edit_save_step);
		break;
	case 5: /* the owner file */
		owner_name(u);
		client_probe(u, u->path2, sc_edit_save_step);
		break;
	case 6:
		client_open(u, u->path2, PV_SMBA_WRITE | PV_SMBA_DELETE, PV_SMBA_OVERWRITE,
			    PV_SMBA_NONDIR, sc_edit_save_step);
		break;
	case 7:
		if (!client_opened(u, d, true))
			return;
		u->keep = u->size; /* the document's size, kept across the owner's write */
		client_write_all(u, 162, 2, sc_edit_save_step);
		break;
	case 8:
		u->size = u->keep;
		client_close(u, true, sc_edit_save_step);
		break;
	case 9: /* the save: a temporary file beside the document */
		snprintf(u->path2, sizeof(u->path2), "%.*s/~WRL%04u.tmp", dir, u->path,
			 ++u->seq % 10000);
		client_open(u, u->path2, PV_SMBA_WRITE | PV_SMBA_DELETE, PV_SMBA_OVERWRITE,
			    PV_SMBA_NONDIR, sc_edit_save_step);
		break;
	case 10:
		if (!client_opened(u, d, true))
			return;
		if (!u->size)
			u->size = 4096;
		client_set_info(u, true, INFO_EOF, sc_edit_save_step);
		break;
	case 11:
		client_write_all(u, u->size, 2, sc_edit_save_step);
		break;
	case 12:
		client_flush(u, true, sc_edit_save_step);
		break;
	case 13:
		client_close(u, true, sc_edit_save_step);
		break;
	case 14:
		client_lock(u, true, sc_edit_save_step);
		break;
	case 15:
		client_close(u, false, sc_edit_save_step);
		break;
	case 16: /* the temporary file over the document */
		client_open(u, u->path2, PV_SMBA_READ | PV_SMBA_DELETE, PV_SMBA_OPEN,
			    PV_SMBA_NONDIR, sc_edit_save_step);
		break;
	case 17:
		if (!client_opened(u, d, false))
			return;
		ISSUE(u, sc_edit_save_step, PV_LOAD_OP_SET_INFO,
		      pv_smba_rename(u->c, u->fid, u->path, true, client_done, u));
		break;
	case 18:
		client_close(u, false, sc_edit_save_step);
		break;
	case 19: /* the owner file goes */
		owner_name(u);
		client_open(u, u->path2, PV_SMBA_DELETE | PV_SMBA_READ, PV_SMBA_OPEN,
			    PV_SMBA_NONDIR, sc_edit_save_step);
		break;
	case 20:
		if (!client_opened(u, d, true))
			return;
		client_set_info(u, true, INFO_DISPOSITION, sc_edit_save_step);
		break;
	case 21:
		client_close(u, true, sc_edit_save_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* rewrite: a volatile/ file rewritten in place (opened over, a range lock, sized, written,
 * flushed, the lock released, closed) */
static void sc_rewrite_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open_lease(u, u->path, PV_SMBA_WRITE, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR,
				  true, sc_rewrite_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		u->size = u->off; /* the size it had (opening over it emptied it) */
		client_lock(u, false, sc_rewrite_step);
		break;
	case 2:
		client_set_info(u, false, INFO_EOF, sc_rewrite_step);
		break;
	case 3:
		client_write_all(u, u->size, 1, sc_rewrite_step);
		break;
	case 4:
		client_flush(u, false, sc_rewrite_step);
		break;
	case 5:
		client_lock(u, true, sc_rewrite_step);
		break;
	case 6:
		client_close(u, false, sc_rewrite_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* delete_new: the oldest file this user made in new/ (opened to delete, marked, closed) */
static void sc_delete_new_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open(u, u->path, PV_SMBA_DELETE | PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR,
			    sc_delete_new_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_set_info(u, false, INFO_DISPOSITION, sc_delete_new_step);
		break;
	case 2:
		client_close(u, false, sc_delete_new_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* list_new: new/ opened, looked at, watched, listed, closed */
static void sc_list_new_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open(u, u->path, PV_SMBA_LIST, PV_SMBA_OPEN, PV_SMBA_DIR, sc_list_new_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_list_new_step);
		break;
	case 2:
		client_watch(u);
		client_list_all(u, 0, sc_list_new_step);
		break;
	case 3:
		client_close(u, false, sc_list_new_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* rename: a volatile/ file renamed and back (each: opened to delete, renamed, closed) */
static void sc_rename_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
	case 3:
		client_open(u, u->step == 1 ? u->path : u->path2, PV_SMBA_READ | PV_SMBA_DELETE,
			    PV_SMBA_OPEN, PV_SMBA_NONDIR, sc_rename_step);
		break;
	case 1:
	case 4:
		if (!client_opened(u, d, false))
			return;
		ISSUE(u, sc_rename_step, PV_LOAD_OP_SET_INFO,
		      pv_smba_rename(u->c, u->fid, u->step == 2 ? u->path2 : u->path, false,
				     client_done, u));
		break;
	case 2:
	case 5:
		client_close(u, false, sc_rename_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* mkdir: a folder made in new/, a file in it, then both deleted (each opened to delete,
 * marked, closed) */
static void sc_mkdir_step(struct user *u, const struct pv_smba_done *d)
{
	if (!client_answered(u, d))
		return;
	switch (u->step++) {
	case 0:
		client_open(u, u->path, PV_SMBA_READ | PV_SMBA_DELETE, PV_SMBA_CREATE, PV_SMBA_DIR,
			    sc_mkdir_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_close(u, false, sc_mkdir_step);
		break;
	case 2:
		if (snprintf(u->path2, sizeof(u->path2), "%s/f.dat", u->path) >=
		    (int)sizeof(u->path2)) {
			scenario_end(u, true);
			return;
		}
		client_open(u, u->path2, PV_SMBA_WRITE | PV_SMBA_DELETE, PV_SMBA_CREATE,
			    PV_SMBA_NONDIR, sc_mkdir_step);
		break;
	case 3:
		if (!client_opened(u, d, true))
			return;
		client_write_all(u, 4096, 2, sc_mkdir_step);
		break;
	case 4:
		client_close(u, true, sc_mkdir_step);
		break;
	case 5:
	case 8:
		client_open(u, u->step == 6 ? u->path2 : u->path, PV_SMBA_DELETE | PV_SMBA_READ,
			    PV_SMBA_OPEN, u->step == 6 ? PV_SMBA_NONDIR : PV_SMBA_DIR,
			    sc_mkdir_step);
		break;
	case 6:
	case 9:
		if (!client_opened(u, d, false))
			return;
		client_set_info(u, false, INFO_DISPOSITION, sc_mkdir_step);
		break;
	case 7:
	case 10:
		client_close(u, false, sc_mkdir_step);
		break;
	default:
		scenario_end(u, false);
	}
}

/* The scenarios' starts: which file or folder, then the first step. */
static void sc_upload(struct user *u)
{
	sc_upload_step(u, NULL);
}

/* A file of the list into u->path, or the scenario ends in an error (nothing to work on). */
static bool pick_into(struct user *u, const struct list *l)
{
	const struct file *f = files_pick(u, l);

	if (!f) {
		scenario_end(u, true);
		return false;
	}
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	u->off = f->size;
	return true;
}

static void sc_open_read(struct user *u)
{
	if (pick_into(u, &u->sfiles))
		sc_open_read_step(u, NULL);
}

static void sc_copy_in(struct user *u)
{
	if (pick_into(u, &u->sfiles))
		sc_copy_in_step(u, NULL);
}

static void sc_edit_save(struct user *u)
{
	if (pick_into(u, &u->vfiles))
		sc_edit_save_step(u, NULL);
}

static void sc_open_close(struct user *u)
{
	if (pick_into(u, pv_load_rng_unit(&u->rng) < 0.5 && u->vfiles.n ? &u->vfiles : &u->sfiles))
		sc_open_close_step(u, NULL);
}

static void sc_rewrite(struct user *u)
{
	if (pick_into(u, &u->vfiles)) {
		if (!u->off)
			u->off = 4096;
		sc_rewrite_step(u, NULL);
	}
}

static void sc_delete_new(struct user *u)
{
	if (u->made_head >= u->made.n) {
		scenario_end(u, false); /* nothing made yet: nothing to delete */
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", u->made.f[u->made_head].path);
	free(u->made.f[u->made_head].path);
	u->made.f[u->made_head++].path = NULL;
	if (u->made_head == u->made.n)
		u->made.n = u->made_head = 0;
	sc_delete_new_step(u, NULL);
}

static void sc_list_new(struct user *u)
{
	snprintf(u->path, sizeof(u->path), "%s/new", u->info.name);
	sc_list_new_step(u, NULL);
}

static void sc_rename(struct user *u)
{
	if (!pick_into(u, &u->vfiles))
		return;
	snprintf(u->path2, sizeof(u->path2), "%s/volatile/pv-%s-%s-%u.ren", u->info.name,
		 u->info.name, u->e->run, ++u->seq);
	sc_rename_step(u, NULL);
}

static void sc_mkdir(struct user *u)
{
	snprintf(u->path, sizeof(u->path), "%s/new/pv-d-%s-%s-%u", u->info.name, u->info.name,
		 u->e->run, ++u->seq);
	sc_mkdir_step(u, NULL);
}

/* the ops loop (opts.ops_loop): open, write 4 KiB, close, again */
static void ops_next(struct user *u, const struct pv_smba_done *d);

static void ops_written(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	client_close(u, true, ops_next);
}

static void ops_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!client_opened(u, d, true))
		return;
	u->w->ops++;
	client_write_all(u, 4096, 2, ops_written);
}

static void ops_dir(struct user *u, const struct pv_smba_done *d)
{
	if (!client_opened(u, d, true))
		return;
	u->w->ops++;
	client_close(u, true, ops_next);
}

static bool worker_running(const struct worker *w);

static void ops_next(struct user *u, const struct pv_smba_done *d)
{
	bool write = u->e->o->ops_loop == PV_LOAD_OPS_WRITE;

	if (d) {
		if (client_refused(u, d, 0))
			return;
		u->w->ops += write ? 2 : 1; /* the WRITE and the CLOSE, or the CLOSE */
	}
	if (!worker_running(u->w)) {
		scenario_end(u, false);
		return;
	}
	if (write)
		client_open(u, u->path2, PV_SMBA_WRITE, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR,
			    ops_opened);
	else
		client_open(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, ops_dir);
}

static void ops_start(struct user *u, double t)
{
	u->kind = PV_LOAD_REWRITE;
	u->start = t;
	u->late = false;
	user_set_state(u, U_BUSY);
	snprintf(u->path2, sizeof(u->path2), "%s/new/pv-bench-%s.dat", u->info.name, u->info.name);
	u->path[0] = '\0'; /* open-close: the share's root, one path for every user of the share */
	ops_next(u, NULL);
}

static void (*const scenario[PV_LOAD_KINDS])(struct user *u) = {
	[PV_LOAD_UPLOAD] = sc_upload,	    [PV_LOAD_BROWSE] = walk,
	[PV_LOAD_OPEN_READ] = sc_open_read, [PV_LOAD_COPY_IN] = sc_copy_in,
	[PV_LOAD_EDIT_SAVE] = sc_edit_save, [PV_LOAD_OPEN_CLOSE] = sc_open_close,
	[PV_LOAD_REWRITE] = sc_rewrite,	    [PV_LOAD_DELETE_NEW] = sc_delete_new,
	[PV_LOAD_LIST_NEW] = sc_list_new,   [PV_LOAD_RENAME] = sc_rename,
	[PV_LOAD_MKDIR] = sc_mkdir,	    [PV_LOAD_READ_FOLDER] = walk,
};

static void scenario_start(struct user *u, double t)
{
	struct worker *w = u->w;
	double gap;

	u->kind = u->next;
	u->start = t;
	pthread_mutex_lock(&w->lock);
	u->late = pv_load_count_start(&w->figs, u->e->o->cfg, u->kind, t - u->due);
	/* the loop's lag: how late it started a scenario whose user was idle when it was due
	 * (a user still busy then is late because of the server, not of the loop) */
	if (u->idle_since <= u->due)
		pv_load_hist_add(&w->figs.lag, t - u->due);
	pthread_mutex_unlock(&w->lock);
	pv_load_next(&u->sched, &gap, &u->next);
	u->due += gap;
	user_set_state(u, U_BUSY);
	u->open1 = u->open2 = u->probing = false;
	u->step = 0;
	u->i = 0;
	scenario[u->kind](u);
}

/* A user without a connection still has scenarios due: each counts as started, unserved and
 * overloaded, so the figures show it. */
static void scenario_unserved(struct user *u)
{
	struct worker *w = u->w;
	double gap;

	pthread_mutex_lock(&w->lock);
	pv_load_count_unserved(&w->figs, u->next);
	pthread_mutex_unlock(&w->lock);
	pv_load_next(&u->sched, &gap, &u->next);
	u->due += gap;
}

/* ---- Kerberos logons ---- */

/* smb/async's SPNEGO callback: the user's initial ticket and a ticket for cifs@<alias> from
 * the KDC (so the alias's SPN that `server` added is what makes this work), then the tokens. */
static int kerberos(void *arg, const uint8_t *in, size_t inlen, struct pv_buf *out, bool *done,
		    uint8_t key[32], size_t *keylen)
{
	struct user *u = arg;
	const struct pv_load_opts *o = u->e->o;
	int r;

	if (!u->krb) {
		char principal[512], service[300];

		snprintf(principal, sizeof(principal), "%s@%s", u->info.name, o->realm);
		snprintf(service, sizeof(service), "cifs@%s", u->info.alias);
		if ((r = pv_krb_sec_start(principal, o->password, service, &u->krb)) != PV_OK)
			return r;
	}
	if ((r = pv_krb_sec_step(u->krb, in, inlen, out, done)) != PV_OK)
		return r;
	if (*done) {
		r = pv_krb_sec_key(u->krb, key, keylen);
		pv_krb_sec_free(u->krb);
		u->krb = NULL;
	}
	return r;
}

/* ---- logons ---- */

/* The worker's loop for up to ms: whether it went well (else w->err, w->errmsg say why). */
static bool worker_turn(struct worker *w, int ms)
{
	int r = pv_smba_loop_run(w->l, ms);

	if (r == PV_OK)
		return true;
	pthread_mutex_lock(&w->lock);
	snprintf(w->errmsg, sizeof(w->errmsg), "%s", pv_errmsg());
	w->err = r;
	pthread_mutex_unlock(&w->lock);
	return false;
}

/* The playbook's load.encryption as the SMB engine takes it (the same list, in order). */
static enum pv_smba_encrypt encrypt(const struct pv_load_config *c)
{
	switch (c->encryption) {
	case PV_LOAD_ENCRYPT_ON:
		return PV_SMBA_ENCRYPT_ON;
	case PV_LOAD_ENCRYPT_AES128_CCM:
		return PV_SMBA_ENCRYPT_AES128_CCM;
	case PV_LOAD_ENCRYPT_AES128_GCM:
		return PV_SMBA_ENCRYPT_AES128_GCM;
	case PV_LOAD_ENCRYPT_AES256_CCM:
		return PV_SMBA_ENCRYPT_AES256_CCM;
	case PV_LOAD_ENCRYPT_AES256_GCM:
		return PV_SMBA_ENCRYPT_AES256_GCM;
	default:
		return PV_SMBA_ENCRYPT_AUTO;
	}
}

static void on_ready(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct user *u = arg;
	struct worker *w = u->w;

	w->opening--;
	if (u->st != U_OPENING) /* closed by us meanwhile */
		return;
	if (u->relog) { /* a connection that broke, made again: no tree to learn */
		u->relog = false;
		if (d->code != PV_OK) {
			double wait = RELOG_FIRST * (double)(1u << (u->relogs < 4 ? u->relogs : 4));

			pv_log(PV_LOG_DEBUG,
			       "load: %s: logging on again failed (%s); next try in %.1f s",
			       u->info.name, d->msg ? d->msg : "",
			       wait < RELOG_MAX ? wait : RELOG_MAX);
			pv_smba_close_conn(c);
			u->c = NULL;
			pv_krb_sec_free(u->krb);
			u->krb = NULL;
			user_set_state(u, U_FAILED);
			u->retry_at = pv_now() + (wait < RELOG_MAX ? wait : RELOG_MAX);
			if (u->retry_at < w->wake)
				w->wake = u->retry_at;
			return;
		}
		u->lost = false;
		user_set_state(u, U_IDLE);
		u->idle_since = pv_now();
		if (u->due < w->wake)
			w->wake = u->due;
		pthread_mutex_lock(&w->lock);
		w->figs.reconnects++;
		pthread_mutex_unlock(&w->lock);
		pv_log(PV_LOG_DEBUG, "load: %s: logged on again after %u tr%s", u->info.name,
		       u->relogs, u->relogs == 1 ? "y" : "ies");
		return;
	}
	if (d->code == PV_EUNREACH && u->tries < LOGON_TRIES) {
		/* the server too slow to log everyone on at once (a logon storm on its DC) or a
		 * reset: this user tries again once the others have had their turn */
		pv_log(PV_LOG_DEBUG, "load: %s: %s; logging on again (try %u of %u)", u->info.name,
		       d->msg ? d->msg : "the connection failed", u->tries + 1, LOGON_TRIES);
		pv_smba_close_conn(c);
		u->c = NULL;
		pv_krb_sec_free(u->krb);
		u->krb = NULL;
		w->again[w->nagain++] = u;
		return;
	}
	if (d->code != PV_OK) {
		user_fail(u, d->msg ? d->msg : "the connection failed");
		return;
	}
	pthread_mutex_lock(&w->lock);
	pv_load_hist_add(&w->logon.lat, pv_now() - u->logon_t0);
	if (!w->spoke[0])
		snprintf(w->spoke, sizeof(w->spoke), "%s", pv_smba_describe(c));
	pthread_mutex_unlock(&w->lock);
	learn_tree(u);
}

/* The user's connection, if any, closed: nothing of it is waited for. */
static void logon_disconnect(struct user *u)
{
	struct pv_smba *c = u->c;

	user_set_state(u, U_OFF);
	u->c = NULL;
	u->open1 = u->open2 = false;
	pv_smba_close_conn(c); /* its pending answers come to client_done, which drops them */
	pv_krb_sec_free(u->krb);
	u->krb = NULL;
}

/* Whether the user counts as connected, or as failed, among its worker's active users. */
static void set_active(struct user *u, bool active)
{
	struct worker *w = u->w;
	bool conn = u->st >= U_LEARNING && u->st <= U_BUSY,
	     fail = u->st == U_FAILED || u->st == U_OFF;

	if (u->active == active)
		return;
	pthread_mutex_lock(&w->lock);
	if (active) {
		w->connected += conn;
		w->failed += fail;
	} else {
		w->connected -= conn;
		w->failed -= fail;
	}
	pthread_mutex_unlock(&w->lock);
	u->active = active;
}

/* PH_LOGON begins: the step's users are the first step_n of the caller's; those of the
 * worker's without a connection are to log on, the others not in the step are logged off. */
static void logon_begin(struct worker *w, size_t step_n)
{
	w->next_open = w->nagain = 0;
	w->pending = 0;
	pthread_mutex_lock(&w->lock);
	memset(&w->logon, 0, sizeof(w->logon));
	w->first_error[0] = '\0';
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < w->n; i++) {
		struct user *u = w->users[i];

		set_active(u, u->index < step_n);
		u->tries = 0;
		u->lost = false; /* a new step: a broken connection is made again at its logon */
		u->relogs = 0;
		if (!u->active) {
			if (u->st != U_OFF)
				logon_disconnect(u);
		} else if (u->st == U_FAILED || u->st == U_OFF ||
			   (u->st == U_OPENING && u->relog) ||
			   (u->st == U_IDLE && !pv_smba_usable(u->c))) {
			/* no connection, or one lost between the steps (kept logged on), or one
			 * being made again since it broke in the last step */
			logon_disconnect(u);
			u->relog = false;
			user_set_state(u, U_OPENING);
			w->pending++;
		}
	}
}

/* u's connection opened (its logon and tree: on_ready goes on from there). */
static int open_user(struct worker *w, struct user *u)
{
	const struct pv_load_opts *o = w->e->o;
	struct pv_smba_opts so = {u->info.alias, u->info.alias,	 u->info.share, o->workgroup,
				  u->info.name,	 o->password,	 o->timeout_ms, NULL,
				  NULL,		 encrypt(o->cfg)};

	if (o->cfg->auth == PV_LOAD_KERBEROS) {
		so.auth = kerberos;
		so.auth_arg = u;
	}
	if (pv_smba_open(w->l, &so, on_ready, u, &u->c) != PV_OK) {
		u->c = NULL;
		return PV_EUNREACH;
	}
	w->opening++;
	return PV_OK;
}

/* A user whose connection broke in the step logs on again (its tree is still what it
 * learnt: no listing). */
static void logon_relog(struct worker *w, struct user *u)
{
	logon_disconnect(u);
	user_set_state(u, U_OPENING);
	u->relog = true;
	u->relogs++;
	if (open_user(w, u) != PV_OK) {
		double wait = RELOG_FIRST * (double)(1u << (u->relogs < 4 ? u->relogs : 4));

		u->relog = false;
		user_set_state(u, U_FAILED);
		u->retry_at = pv_now() + (wait < RELOG_MAX ? wait : RELOG_MAX);
	}
}

/* One turn of PH_LOGON: connections opened, parallel at a time (again after the others' turn
 * when the server was too slow). Whether every user is done (logged on and learnt, or failed). */
static bool logon_turn(struct worker *w)
{
	const struct pv_load_opts *o = w->e->o;
	unsigned parallel = (o->parallel ? o->parallel : 64) / w->e->nw;

	if (parallel < 1)
		parallel = 1;
	while ((w->next_open < w->n || w->nagain) && w->opening < parallel) {
		struct user *u;

		if (w->next_open < w->n) {
			u = w->users[w->next_open++];
			if (u->st != U_OPENING || u->tries)
				continue;
			u->logon_t0 = pv_now();
		} else {
			u = w->again[--w->nagain];
			pthread_mutex_lock(&w->lock);
			w->logon.retries++;
			pthread_mutex_unlock(&w->lock);
		}
		u->tries++;
		if (open_user(w, u) != PV_OK) {
			user_fail(u, pv_errmsg());
			continue;
		}
	}
	if (!w->pending)
		return true;
	return !worker_turn(w, TURN_MS) || !w->pending;
}

/* ---- a worker's phases ---- */

static bool worker_running(const struct worker *w)
{
	return w->phase == PH_RUN; /* as the worker saw it at its turn's start */
}

/* PH_RUN begins: every active user's schedule from its start (a step is the same whatever
 * steps came before it: a run can be repeated and steps compared), the first due after t0. */
static void run_begin(struct worker *w, double t0)
{
	const struct pv_load_opts *o = w->e->o;

	w->t0 = t0;
	w->wake = t0;
	for (size_t i = 0; i < w->n; i++) {
		struct user *u = w->users[i];
		double gap;

		if (!u->active)
			continue;
		pv_load_sched_init(&u->sched, o->cfg, o->client, u->info.number);
		u->rng = u->sched.rng;
		u->rng.s[3] ^= 0x5bd1e995u; /* picks: another stream than the schedule's */
		pv_load_next(&u->sched, &gap, &u->next);
		u->due = t0 + gap;
		if (o->ops_loop && u->st == U_IDLE)
			ops_start(u, t0);
	}
}

/* One turn of PH_RUN: the users due started (the users are looked at only when one is due:
 * scenario_end() and user_fail() bring w->wake forward; with thousands of users, not at every
 * answer), then the loop until the next is due. */
static void run_turn(struct worker *w)
{
	double t = pv_now(), wait;

	if (!w->e->o->ops_loop && t >= w->wake) {
		w->wake = HUGE_VAL;
		for (size_t i = 0; i < w->n; i++) {
			struct user *u = w->users[i];

			if (!u->active)
				continue;
			if (u->due <= t && u->st == U_IDLE)
				scenario_start(u, t);
			else
				while (u->due <= t && (u->st == U_FAILED || u->st == U_OFF ||
						       (u->st == U_OPENING && u->relog)))
					scenario_unserved(u);
			if (u->st == U_FAILED && u->lost && u->retry_at <= t)
				logon_relog(w, u);
			if (u->st != U_BUSY && u->due < w->wake)
				w->wake = u->due;
			if (u->st == U_FAILED && u->lost && u->retry_at < w->wake)
				w->wake = u->retry_at;
		}
	}
	t = pv_now();
	wait = w->wake - t;
	worker_turn(w, wait <= 0 ? 0 : wait * 1000 >= TURN_MS ? TURN_MS : (int)(wait * 1000) + 1);
}

/* One turn of PH_DRAIN: no new scenario; whether none is under way any more. */
static bool drain_turn(struct worker *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->users[i]->st == U_BUSY) {
			worker_turn(w, TURN_MS);
			return false;
		}
	return true;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct engine *e = w->e;
	unsigned seen = 0;
	bool done = true;

	for (;;) {
		enum phase ph;
		unsigned gen;
		double t0;
		size_t step_n;

		pthread_mutex_lock(&e->lock);
		ph = e->phase;
		gen = e->gen;
		t0 = e->t0;
		step_n = e->step_n;
		pthread_mutex_unlock(&e->lock);
		w->phase = ph;
		if (ph == PH_QUIT)
			break;
		if (gen != seen) {
			seen = gen;
			done = false;
			if (ph == PH_LOGON)
				logon_begin(w, step_n);
			else if (ph == PH_RUN)
				run_begin(w, t0);
		}
		if (w->err == PV_OK && !done) {
			switch (ph) {
			case PH_LOGON:
				done = logon_turn(w);
				break;
			case PH_RUN:
				run_turn(w); /* the coordinator ends it */
				break;
			case PH_DRAIN:
				done = drain_turn(w);
				break;
			case PH_CLOSE:
				for (size_t i = 0; i < w->n; i++)
					if (w->users[i]->st != U_OFF)
						logon_disconnect(w->users[i]);
				done = true;
				break;
			default:
				done = true;
			}
			if (done) {
				pthread_mutex_lock(&w->lock);
				w->done_gen = gen;
				pthread_mutex_unlock(&w->lock);
				pthread_mutex_lock(&e->lock);
				pthread_cond_broadcast(&e->cond);
				pthread_mutex_unlock(&e->lock);
			}
			continue;
		}
		/* done, or its loop failed: its connections still served, until the next phase */
		if (w->err != PV_OK) {
			pthread_mutex_lock(&w->lock);
			w->done_gen = gen;
			pthread_mutex_unlock(&w->lock);
			pthread_mutex_lock(&e->lock);
			pthread_cond_broadcast(&e->cond);
			while (e->gen == gen && e->phase != PH_QUIT)
				pthread_cond_wait(&e->cond, &e->lock);
			pthread_mutex_unlock(&e->lock);
			continue;
		}
		worker_turn(w, TURN_MS);
	}
	return NULL;
}

/* ---- the coordinator ---- */

static void user_free(struct user *u)
{
	if (!u)
		return;
	pv_krb_sec_free(u->krb);
	files_free(&u->names);
	files_free(&u->dirs);
	files_free(&u->sfiles);
	files_free(&u->vfiles);
	files_free(&u->made);
	files_free(&u->todo);
	free((char *)u->info.name);
	free((char *)u->info.alias);
	free((char *)u->info.share);
	free(u);
}

/* The workers told to stop, joined; their loops (closing every connection) and users freed. */
static void engine_free(struct engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->phase = PH_QUIT;
	e->gen++;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	for (unsigned i = 0; e->w && i < e->nw; i++) {
		struct worker *w = &e->w[i];

		if (w->started)
			pthread_join(w->t, NULL);
		/* the users first: closing the loop answers their requests, to client_done */
		for (size_t j = 0; j < w->n; j++)
			w->users[j]->st = U_OFF;
		pv_smba_loop_free(w->l);
		free(w->users);
		free(w->again);
		pthread_mutex_destroy(&w->lock);
	}
	for (size_t i = 0; i < e->n; i++)
		user_free(e->users[i]);
	free(e->users);
	free(e->w);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	free(e);
}

/* How many loops: asked for, or one per core this process may run on. */
static unsigned threads_of(const struct pv_load_opts *o)
{
	unsigned n = o->threads ? o->threads : o->cfg->threads;
	cpu_set_t set;

	if (!n)
		n = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	return n < 1 ? 1 : n > THREADS_MAX ? THREADS_MAX : n;
}

/* The engine, its workers (their threads started, idle) and the bytes writes write. */
static int engine_new(const struct pv_load_opts *o, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct pv_load_rng fill;
	struct timespec ts;
	int r = PV_OK;

	if (!e)
		return pv_error(PV_EIO, "out of memory");
	e->o = o;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(e->run, sizeof(e->run), "%lx%04lx", (long)ts.tv_sec,
		 (long)(ts.tv_nsec / 100000) & 0xffff);
	/* what writes write: bytes that do not compress, the same on every run */
	fill.s[0] = 0x9e3779b97f4a7c15ull;
	fill.s[1] = 0xbf58476d1ce4e5b9ull;
	fill.s[2] = 0x94d049bb133111ebull;
	fill.s[3] = 1;
	for (size_t i = 0; i < sizeof(e->data); i += 8) {
		uint64_t v = pv_load_rng_next(&fill);

		memcpy(e->data + i, &v, 8);
	}
	e->nw = threads_of(o);
	if (!(e->w = calloc(e->nw, sizeof(*e->w)))) {
		free(e);
		return pv_error(PV_EIO, "out of memory");
	}
	for (unsigned i = 0; i < e->nw; i++) {
		pthread_mutex_init(&e->w[i].lock, NULL);
		e->w[i].e = e;
	}
	for (unsigned i = 0; i < e->nw && r == PV_OK; i++) {
		struct worker *w = &e->w[i];

		if ((r = pv_smba_loop_new(&w->l)) != PV_OK)
			break;
		if (pthread_create(&w->t, NULL, worker_main, w) != 0) {
			r = pv_error(PV_EIO, "cannot start a thread for the load");
			break;
		}
		w->started = true;
		if (pthread_getcpuclockid(w->t, &w->clock) != 0)
			w->clock = (clockid_t)-1;
	}
	if (r != PV_OK) {
		engine_free(e);
		return r;
	}
	*out = e;
	return PV_OK;
}

static int grow(void *arrp, size_t *cap, size_t need, size_t size)
{
	void **arr = arrp, *p;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(p = realloc(*arr, c * size)))
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

/* The caller's users from e->n on: each a copy, given to the loops in turn. */
static int add_users(struct engine *e, const struct pv_load_user *users, size_t total)
{
	for (size_t i = e->n; i < total; i++) {
		struct worker *w = &e->w[i % e->nw];
		struct user *u;
		size_t wcap = w->cap;

		if (grow(&e->users, &e->cap, e->n + 1, sizeof(*e->users)) ||
		    !(u = calloc(1, sizeof(*u))))
			return pv_error(PV_EIO, "out of memory");
		e->users[e->n++] = u;
		u->e = e;
		u->w = w;
		u->index = i;
		u->st = U_OFF;
		u->info.number = users[i].number;
		if (!(u->info.name = strdup(users[i].name)) ||
		    !(u->info.alias = strdup(users[i].alias)) ||
		    !(u->info.share = strdup(users[i].share)))
			return pv_error(PV_EIO, "out of memory");
		pthread_mutex_lock(&w->lock);
		if (grow(&w->users, &w->cap, w->n + 1, sizeof(*w->users)) ||
		    grow(&w->again, &wcap, w->n + 1, sizeof(*w->again))) {
			pthread_mutex_unlock(&w->lock);
			return pv_error(PV_EIO, "out of memory");
		}
		w->users[w->n++] = u;
		pthread_mutex_unlock(&w->lock);
	}
	return PV_OK;
}

/* Every worker told to do ph; with wait, until all are done with it. PV_OK then; PV_ESTOPPED
 * when stop() says so first (when asked: stoppable), PV_ETIMEOUT at the deadline (0: none), a
 * loop's failure with its message. */
static int phase_all(struct engine *e, enum phase ph, bool wait, bool stoppable, double deadline)
{
	const struct pv_load_opts *o = e->o;
	unsigned gen;

	pthread_mutex_lock(&e->lock);
	e->phase = ph;
	gen = ++e->gen;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	while (wait) {
		bool all = true;
		struct timespec ts;

		for (unsigned i = 0; i < e->nw; i++) {
			struct worker *w = &e->w[i];

			pthread_mutex_lock(&w->lock);
			all &= w->done_gen == gen;
			if (w->err != PV_OK) {
				int err = w->err;

				pthread_mutex_unlock(&w->lock);
				return pv_error(err, "a load loop failed: %s", w->errmsg);
			}
			pthread_mutex_unlock(&w->lock);
		}
		if (all)
			break;
		if (stoppable && o->stop && o->stop(o->arg))
			return PV_ESTOPPED;
		if (deadline > 0 && pv_now() >= deadline)
			return PV_ETIMEOUT;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TURN_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&e->lock);
		pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		pthread_mutex_unlock(&e->lock);
	}
	return PV_OK;
}

bool pv_load_host_ticks(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return false;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4]; /* idle and iowait: not busy */
	return true;
}

/* What the driver has cost so far: the process's CPU, each loop's, the host's. */
struct meter {
	double t, proc, loop[THREADS_MAX];
	uint64_t busy, total;
	bool host;
};

static double cpu_secs(clockid_t c)
{
	struct timespec ts;

	if (c == (clockid_t)-1 || clock_gettime(c, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void meter_read(const struct engine *e, struct meter *m)
{
	m->t = pv_now();
	m->proc = cpu_secs(CLOCK_PROCESS_CPUTIME_ID);
	for (unsigned i = 0; i < e->nw; i++)
		m->loop[i] = cpu_secs(e->w[i].clock);
	m->host = pv_load_host_ticks(&m->busy, &m->total);
}

/* The loops' counts since the last take into f (interval seq), with the users' state now and
 * what the driver cost since *m (which becomes now). */
static void take(struct engine *e, struct meter *m, uint64_t seq, struct pv_load_figs *f)
{
	struct meter now;
	double secs;

	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < e->nw; i++) {
		struct worker *w = &e->w[i];

		pthread_mutex_lock(&w->lock);
		pv_load_figs_merge(f, &w->figs);
		f->connected += w->connected;
		f->failed += w->failed;
		memset(&w->figs, 0, sizeof(w->figs));
		pthread_mutex_unlock(&w->lock);
	}
	meter_read(e, &now);
	secs = now.t - m->t > 1e-6 ? now.t - m->t : 1e-6;
	f->seq = seq;
	f->secs = secs;
	f->threads = e->nw;
	f->cpu = (now.proc - m->proc) / secs * 100;
	f->cpu_top = 0;
	for (unsigned i = 0; i < e->nw; i++) {
		double c = (now.loop[i] - m->loop[i]) / secs * 100;

		if (c > f->cpu_top)
			f->cpu_top = c;
	}
	f->host_cpu =
		m->host && now.host && now.total > m->total
			? 100.0 * (double)(now.busy - m->busy) / (double)(now.total - m->total)
			: -1;
	if (f->cpu < 0)
		f->cpu = 0;
	if (f->host_cpu > 100)
		f->host_cpu = 100;
	*m = now;
}

/* The step's users logged on (or failed): what the ready line says. */
static int step_ready(struct engine *e)
{
	struct pv_load_ready *rd = calloc(1, sizeof(*rd));
	int r;

	if (!rd)
		return pv_error(PV_EIO, "out of memory");
	for (unsigned i = 0; i < e->nw; i++) {
		struct worker *w = &e->w[i];

		pthread_mutex_lock(&w->lock);
		rd->connected += w->connected;
		rd->failed += w->failed;
		pv_load_logon_merge(&rd->logon, &w->logon);
		if (!rd->first[0] && w->first_error[0])
			snprintf(rd->first, sizeof(rd->first), "%s", w->first_error);
		if (!rd->spoke[0] && w->spoke[0])
			snprintf(rd->spoke, sizeof(rd->spoke), "%s", w->spoke);
		pthread_mutex_unlock(&w->lock);
	}
	r = e->o->ready ? e->o->ready(e->o->arg, rd) : PV_OK;
	free(rd);
	return r;
}

/* A loop's failure, or PV_OK. */
static int loop_failed(struct engine *e)
{
	for (unsigned i = 0; i < e->nw; i++) {
		struct worker *w = &e->w[i];
		int r;

		pthread_mutex_lock(&w->lock);
		r = w->err != PV_OK ? pv_error(w->err, "a load loop failed: %s", w->errmsg) : PV_OK;
		pthread_mutex_unlock(&w->lock);
		if (r != PV_OK)
			return r;
	}
	return PV_OK;
}

static void nap(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The schedules for the duration, the figures every interval; then no new scenario, those
 * under way finish (DRAIN_SECS at most), the last figures. Whether stop() cut it short in
 * *stopped. */
static int step_run(struct engine *e, struct pv_load_figs *f, bool *stopped)
{
	const struct pv_load_opts *o = e->o;
	double interval = o->cfg->interval ? o->cfg->interval : 1, t0, next, t;
	struct meter m;
	uint64_t seq = 0;
	int r = PV_OK;

	t0 = pv_now();
	pthread_mutex_lock(&e->lock);
	e->t0 = t0;
	pthread_mutex_unlock(&e->lock);
	meter_read(e, &m);
	phase_all(e, PH_RUN, false, false, 0);
	next = t0 + interval;
	while ((t = pv_now()) - t0 < o->duration) {
		double wait;

		if (o->stop && o->stop(o->arg)) {
			*stopped = true;
			break;
		}
		if ((r = loop_failed(e)) != PV_OK)
			return r;
		if (t >= next) {
			take(e, &m, ++seq, f);
			if ((r = o->emit(o->arg, f)) != PV_OK)
				return r;
			while (next <= t) /* boundaries stay on t0's grid */
				next += interval;
		}
		wait = fmin(next, t0 + o->duration) - pv_now();
		nap(wait <= 0 ? 0 : wait * 1000 > TURN_MS ? TURN_MS : (int)(wait * 1000) + 1);
	}
	r = phase_all(e, PH_DRAIN, true, false, pv_now() + DRAIN_SECS);
	if (r != PV_OK && r != PV_ETIMEOUT)
		return r;
	take(e, &m, ++seq, f);
	if ((r = o->emit(o->arg, f)) != PV_OK)
		return r;
	if (*stopped)
		return pv_error(PV_ESTOPPED, "the load was stopped after %.1f s", pv_now() - t0);
	return PV_OK;
}

/* One step of n users: logons, ready, go, the load, done; then its users logged off unless
 * they stay for the next. */
static int step(struct engine *e, size_t n)
{
	const struct pv_load_opts *o = e->o;
	struct pv_load_figs *f;
	bool stopped = false;
	int r;

	pthread_mutex_lock(&e->lock);
	e->step_n = n;
	pthread_mutex_unlock(&e->lock);
	r = phase_all(e, PH_LOGON, true, true, 0);
	if (r == PV_ESTOPPED)
		return pv_error(r, "stopped while the users logged on");
	if (r != PV_OK || (r = step_ready(e)) != PV_OK)
		return r;
	while (o->go && !o->go(o->arg)) {
		if (o->stop && o->stop(o->arg))
			return pv_error(PV_ESTOPPED, "stopped before the load started");
		nap(TURN_MS);
	}
	if (!(f = malloc(sizeof(*f))))
		return pv_error(PV_EIO, "out of memory");
	r = step_run(e, f, &stopped);
	free(f);
	if (r == PV_OK && o->done)
		r = o->done(o->arg);
	if (r == PV_OK && !o->cfg->keep_logged_on)
		r = phase_all(e, PH_CLOSE, true, false, 0);
	else if (r == PV_OK)
		r = phase_all(e, PH_IDLE, false, false, 0);
	return r;
}

int pv_load(const struct pv_load_opts *o)
{
	struct engine *e = NULL;
	struct pv_fileset *fs = NULL;
	int r;

	if (o->fileset && (r = pv_fileset_parse(o->fileset_name ? o->fileset_name : "fileset",
						o->fileset, o->fileset_len, &fs)) != PV_OK)
		return r;
	if (o->cfg->auth == PV_LOAD_KERBEROS) {
		struct pv_krb_target t = {o->realm, o->kdc, o->dns_domain};

		if ((r = pv_krb_setup(&t)) != PV_OK) {
			pv_fileset_free(fs);
			return r;
		}
	}
	if ((r = engine_new(o, &e)) == PV_OK) {
		e->fs = fs;
		for (;;) {
			const struct pv_load_user *users = NULL;
			size_t total = 0, n = 0;

			if ((r = o->next(o->arg, &users, &total, &n)) != PV_OK || !n)
				break;
			if (n > total)
				n = total;
			if ((r = add_users(e, users, total)) != PV_OK || (r = step(e, n)) != PV_OK)
				break;
		}
		if (o->ops) {
			*o->ops = 0;
			for (unsigned i = 0; i < e->nw; i++)
				*o->ops += e->w[i].ops;
		}
	}
	engine_free(e);
	pv_fileset_free(fs);
	pv_krb_cleanup();
	return r;
}
