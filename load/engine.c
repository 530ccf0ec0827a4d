/* load/engine.c: the built-in load driver on one client (see engine.h, docs/load.md). */
#include "load/engine.h"

#include "krb/krb.h"
#include "smb/async.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PATH_MAX_LOAD 512
#define IO_CHUNK      65536u
#define DRAIN_SECS    10.0 /* at the end, how long scenarios in flight may take to finish */
#define LOGON_TRIES   3	   /* a logon the server was too slow for (or reset) is tried again */

struct file {
	char *path;
	uint64_t size;
};

struct list {
	struct file *f;
	size_t n, cap;
};

enum ustate { U_OPENING, U_LEARNING, U_IDLE, U_BUSY, U_FAILED };

struct user;
typedef void (*step_fn)(struct user *u, const struct pv_smba_done *d);

struct engine;

struct user {
	struct engine *e;
	const struct pv_load_user *u;
	struct pv_smba *c;
	enum ustate st;
	struct pv_load_sched sched;
	struct pv_load_rng rng; /* picks files */
	double due;
	enum pv_load_kind next;
	/* the scenario (or the learning) under way */
	enum pv_load_kind kind;
	double start;
	bool late;
	step_fn k;     /* what the answer to the request in flight goes to */
	step_fn after; /* where a primitive (read_all, write_all, list_all) goes when done */
	int step;
	uint8_t fid[16], fid2[16];
	bool open1, open2;
	uint64_t off, size;
	size_t i;
	char path[PATH_MAX_LOAD], path2[PATH_MAX_LOAD];
	struct list names; /* what the listing under way found */
	bool want_dirs;	   /* ... folders (else files) */
	/* the tree, learned at the start */
	struct list dirs, sfiles, vfiles, made;
	size_t made_head;
	struct pv_krb_sec *krb; /* auth kerberos: the logon under way */
	unsigned tries;		/* logons tried */
	unsigned seq;
	size_t learn;
};

struct engine {
	const struct pv_load_opts *o;
	struct pv_smba_loop *l;
	struct user *users;
	size_t n;
	struct pv_load_figs figs;
	unsigned opening, pending; /* connections opening; users not yet ready or failed */
	struct user **again;	   /* users whose logon is to be tried again, nagain of them */
	size_t nagain;
	bool running;
	bool logging_on; /* the users' logons are under way (and may be tried again) */
	double wake;	 /* the earliest due of an idle or failed user: none is due before */
	char run[24];	 /* in the names of what this run makes: another run's never collide */
	char first_error[384];
	uint8_t data[IO_CHUNK];
};

/* ---- small things ---- */

static int list_add(struct list *l, const char *path, uint64_t size)
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

static void list_clear(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].path);
	l->n = 0;
}

static void list_free(struct list *l)
{
	list_clear(l);
	free(l->f);
	memset(l, 0, sizeof(*l));
}

static const struct file *pick(struct user *u, const struct list *l)
{
	return l->n ? &l->f[(size_t)(pv_load_rng_unit(&u->rng) * (double)l->n)] : NULL;
}

static void fail_user(struct user *u, const char *msg)
{
	struct engine *e = u->e;

	if (!e->first_error[0])
		snprintf(e->first_error, sizeof(e->first_error), "%s: %s", u->u->name, msg);
	if (u->st == U_OPENING || u->st == U_LEARNING)
		e->pending--;
	u->st = U_FAILED;
	if (u->due < e->wake)
		e->wake = u->due;
	pv_log(PV_LOG_DEBUG, "load: %s: %s", u->u->name, msg);
}

/* ---- the scenario under way ends ---- */

static void end(struct user *u, bool error)
{
	struct engine *e = u->e;

	/* files left open by a failure: closed, nobody waits for the answer */
	if (u->open1)
		pv_smba_closefile(u->c, u->fid, NULL, NULL);
	if (u->open2)
		pv_smba_closefile(u->c, u->fid2, NULL, NULL);
	u->open1 = u->open2 = false;
	if (!e->o->ops_loop)
		pv_load_count_end(&e->figs, e->o->cfg, u->kind, u->late, pv_now() - u->start,
				  error);
	if (u->st == U_BUSY)
		u->st = pv_smba_usable(u->c) ? U_IDLE : U_FAILED;
	if (u->due < e->wake)
		e->wake = u->due;
}

/* Every answer comes here first: a lost connection or a refusal ends the scenario. */
static void on_done(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct user *u = arg;

	(void)c;
	if (d->code != PV_OK) {
		if (u->st == U_BUSY)
			end(u, true);
		if (u->st != U_FAILED)
			fail_user(u, d->msg ? d->msg : "the connection was lost");
		return;
	}
	u->k(u, d);
}

static bool refused(struct user *u, const struct pv_smba_done *d, uint32_t ok2)
{
	if (d->status == 0 || d->status == ok2)
		return false;
	if (u->st == U_BUSY)
		end(u, true);
	else if (u->st == U_LEARNING)
		fail_user(u, "its home tree could not be listed");
	return true;
}

/* Issue a request; a refusal to queue it ends the scenario. */
#define ISSUE(u, next, call)                                                                       \
	do {                                                                                       \
		(u)->k = (next);                                                                   \
		if ((call) != PV_OK) {                                                             \
			if ((u)->st == U_BUSY)                                                     \
				end((u), true);                                                    \
			else                                                                       \
				fail_user((u), pv_errmsg());                                       \
		}                                                                                  \
	} while (0)

/* ---- primitives: read a whole file, write one, list a folder ---- */

static void read_more(struct user *u, const struct pv_smba_done *d)
{
	if (d && refused(u, d, 0))
		return;
	if (d)
		u->off += d->buflen;
	if (u->off >= u->size || (d && d->buflen == 0)) {
		u->after(u, NULL);
		return;
	}
	ISSUE(u, read_more,
	      pv_smba_read(u->c, u->fid, u->off,
			   (uint32_t)(u->size - u->off < IO_CHUNK ? u->size - u->off : IO_CHUNK),
			   on_done, u));
}

static void read_all(struct user *u, step_fn after)
{
	u->after = after;
	u->off = 0;
	read_more(u, NULL);
}

/* Writes go to fid2 when u->i is 2, else fid. */
static void write_more(struct user *u, const struct pv_smba_done *d)
{
	uint32_t n;

	if (d && refused(u, d, 0))
		return;
	if (u->off >= u->size) {
		u->after(u, NULL);
		return;
	}
	n = (uint32_t)(u->size - u->off < IO_CHUNK ? u->size - u->off : IO_CHUNK);
	ISSUE(u, write_more,
	      pv_smba_write(u->c, u->i == 2 ? u->fid2 : u->fid, u->off, u->e->data, n, on_done, u));
	u->off += n;
}

static void write_all(struct user *u, uint64_t size, int which, step_fn after)
{
	u->after = after;
	u->off = 0;
	u->size = size;
	u->i = (size_t)which;
	write_more(u, NULL);
}

static int entry(void *arg, const char *name, bool dir, uint64_t size)
{
	struct user *u = arg;
	char path[PATH_MAX_LOAD];

	if (dir != u->want_dirs)
		return 0;
	if (snprintf(path, sizeof(path), "%s/%s", u->path, name) >= (int)sizeof(path))
		return pv_error(PV_EREMOTE, "a path in %s is too long", u->path);
	return list_add(&u->names, path, size) < 0 ? pv_error(PV_EIO, "out of memory") : 0;
}

static void list_more(struct user *u, const struct pv_smba_done *d)
{
	if (d->status == 0x80000006u) { /* STATUS_NO_MORE_FILES */
		u->after(u, NULL);
		return;
	}
	if (refused(u, d, 0))
		return;
	if (pv_smba_entries(d->buf, d->buflen, entry, u) != PV_OK) {
		if (u->st == U_BUSY)
			end(u, true);
		else
			fail_user(u, pv_errmsg());
		return;
	}
	ISSUE(u, list_more, pv_smba_list(u->c, u->fid, false, on_done, u));
}

/* List the open folder u->fid (u->path), folders or files into u->names. */
static void list_all(struct user *u, bool dirs, step_fn after)
{
	u->after = after;
	u->want_dirs = dirs;
	list_clear(&u->names);
	ISSUE(u, list_more, pv_smba_list(u->c, u->fid, true, on_done, u));
}

/* Open u->path into fid (or fid2 when second). */
static void open_path(struct user *u, const char *path, uint32_t access, uint32_t disp,
		      uint32_t opts, step_fn next)
{
	ISSUE(u, next, pv_smba_create(u->c, path, access, disp, opts, on_done, u));
}

static bool opened(struct user *u, const struct pv_smba_done *d, bool second)
{
	if (refused(u, d, 0))
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

static void close_fid(struct user *u, bool second, step_fn next)
{
	if (second)
		u->open2 = false;
	else
		u->open1 = false;
	ISSUE(u, next, pv_smba_closefile(u->c, second ? u->fid2 : u->fid, on_done, u));
}

static void done_ok(struct user *u, const struct pv_smba_done *d)
{
	if (d && refused(u, d, 0))
		return;
	end(u, false);
}

/* ---- learning the tree: static/ and its folders, volatile/, new/ ---- */

static void learn_next(struct user *u, const struct pv_smba_done *d);

static void learned(struct user *u)
{
	struct engine *e = u->e;

	list_clear(&u->names);
	u->st = U_IDLE;
	e->pending--;
}

static void learn_listed(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	/* what the listing found goes where the stage says */
	for (size_t i = 0; i < u->names.n; i++) {
		const struct file *f = &u->names.f[i];
		struct list *to = u->learn == 0	  ? &u->dirs
				  : u->learn == 1 ? &u->sfiles
				  : u->learn == 2 ? &u->vfiles
						  : &u->made;

		if (u->learn == 3 && !strstr(f->path, "/new/pv-"))
			continue;
		if (list_add(to, f->path, f->size) < 0) {
			fail_user(u, "out of memory");
			return;
		}
	}
	close_fid(u, false, learn_next);
}

static void learn_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	list_all(u, u->learn == 0, learn_listed);
}

/* Stages: 0 static/ (its folders), 1 each of them (files), 2 volatile/, 3 new/ (files of ours);
 * learn_listed files what a stage's listing found by the stage. */
static void learn_next(struct user *u, const struct pv_smba_done *d)
{
	if (d && refused(u, d, 0))
		return;
	switch (u->learn) {
	case 0:
		u->learn = 1;
		u->i = 0;
		/* fall through */
	case 1:
		if (u->i < u->dirs.n) {
			snprintf(u->path, sizeof(u->path), "%s", u->dirs.f[u->i++].path);
			break;
		}
		u->learn = 2;
		snprintf(u->path, sizeof(u->path), "%s/volatile", u->u->name);
		break;
	case 2:
		u->learn = 3;
		snprintf(u->path, sizeof(u->path), "%s/new", u->u->name);
		break;
	default:
		learned(u);
		return;
	}
	open_path(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, learn_opened);
}

static void learn(struct user *u)
{
	u->st = U_LEARNING;
	u->learn = 0;
	snprintf(u->path, sizeof(u->path), "%s/static", u->u->name);
	open_path(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, learn_opened);
}

/* ---- the scenarios (docs/load.md) ---- */

/* upload, copy_in: a new file in new/ */
static void new_name(struct user *u)
{
	snprintf(u->path2, sizeof(u->path2), "%s/new/pv-%s-%s-%u.dat", u->u->name, u->u->name,
		 u->e->run, ++u->seq);
}

static void made_closed(struct user *u, const struct pv_smba_done *d)
{
	if (refused(u, d, 0))
		return;
	if (list_add(&u->made, u->path2, u->size) < 0) {
		end(u, true);
		return;
	}
	end(u, false);
}

static void upload_written(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, true, made_closed);
}

static void upload_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, true))
		return;
	write_all(u, 4096 + (uint64_t)(pv_load_rng_unit(&u->rng) * 61440.0), 2, upload_written);
}

static void sc_upload(struct user *u)
{
	new_name(u);
	open_path(u, u->path2, PV_SMBA_WRITE, PV_SMBA_CREATE, PV_SMBA_NONDIR, upload_opened);
}

/* browse and read_folder: open a static/ folder, list it, close it, then open each chosen file
 * of it, look at it (browse: three files, their attributes) or read it whole (read_folder:
 * every file), and close it */
static void walk_file(struct user *u, const struct pv_smba_done *d);

static void walk_looked(struct user *u, const struct pv_smba_done *d)
{
	if (u->kind == PV_LOAD_BROWSE && refused(u, d, 0))
		return;
	close_fid(u, false, walk_file);
}

static void walk_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	if (u->kind == PV_LOAD_BROWSE)
		ISSUE(u, walk_looked, pv_smba_stat(u->c, u->fid, on_done, u));
	else
		read_all(u, walk_looked);
}

static void walk_file(struct user *u, const struct pv_smba_done *d)
{
	bool browse = u->kind == PV_LOAD_BROWSE;
	size_t n = u->names.n, k;

	if (d && refused(u, d, 0))
		return;
	if (u->i >= (browse && n > 3 ? 3 : n)) {
		end(u, false);
		return;
	}
	k = browse ? (u->i * 7 + u->seq) % n : u->i;
	u->i++;
	snprintf(u->path2, sizeof(u->path2), "%s", u->names.f[k].path);
	open_path(u, u->path2, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, walk_opened);
}

static void walk_listed(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	u->i = 0;
	close_fid(u, false, walk_file);
}

static void walk_dir(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	list_all(u, false, walk_listed);
}

static void walk(struct user *u)
{
	const struct file *f = pick(u, &u->dirs);

	if (!f) {
		end(u, true);
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	u->seq++; /* browse: which three files */
	open_path(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, walk_dir);
}

/* open_read: a static/ document read whole */
static void read_done(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, false, done_ok);
}

static void read_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	read_all(u, read_done);
}

static void sc_open_read(struct user *u)
{
	const struct file *f = pick(u, &u->sfiles);

	if (!f) {
		end(u, true);
		return;
	}
	open_path(u, f->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, read_opened);
}

/* copy_in: a static/ file read whole and written as a new file in new/ */
static void copy_closed_src(struct user *u, const struct pv_smba_done *d)
{
	if (refused(u, d, 0))
		return;
	close_fid(u, true, made_closed);
}

static void copy_written(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, false, copy_closed_src);
}

static void copy_read(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	write_all(u, u->size, 2, copy_written);
}

static void copy_dst(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, true))
		return;
	read_all(u, copy_read);
}

static void copy_src(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	new_name(u);
	open_path(u, u->path2, PV_SMBA_WRITE, PV_SMBA_CREATE, PV_SMBA_NONDIR, copy_dst);
}

static void sc_copy_in(struct user *u)
{
	const struct file *f = pick(u, &u->sfiles);

	if (!f) {
		end(u, true);
		return;
	}
	open_path(u, f->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, copy_src);
}

/* edit_save: read a volatile/ document, write ~$<name>.tmp, rename it over the original */
static void edit_renamed(struct user *u, const struct pv_smba_done *d)
{
	if (refused(u, d, 0))
		return;
	close_fid(u, true, done_ok);
}

static void edit_written(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	ISSUE(u, edit_renamed, pv_smba_rename(u->c, u->fid2, u->path, true, on_done, u));
}

static void edit_tmp(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, true))
		return;
	write_all(u, u->size ? u->size : 4096, 2, edit_written);
}

static void edit_read_closed(struct user *u, const struct pv_smba_done *d)
{
	const char *slash = strrchr(u->path, '/');

	if (refused(u, d, 0))
		return;
	snprintf(u->path2, sizeof(u->path2), "%.*s/~$%s.tmp", (int)(slash - u->path), u->path,
		 slash + 1);
	open_path(u, u->path2, PV_SMBA_WRITE | PV_SMBA_DELETE, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR,
		  edit_tmp);
}

static void edit_read(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, false, edit_read_closed);
}

static void edit_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	read_all(u, edit_read);
}

static void sc_edit_save(struct user *u)
{
	const struct file *f = pick(u, &u->vfiles);

	if (!f) {
		end(u, true);
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	open_path(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, edit_opened);
}

/* open_close: a document's attributes */
static void oc_stat(struct user *u, const struct pv_smba_done *d)
{
	if (refused(u, d, 0))
		return;
	close_fid(u, false, done_ok);
}

static void oc_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	ISSUE(u, oc_stat, pv_smba_stat(u->c, u->fid, on_done, u));
}

static void sc_open_close(struct user *u)
{
	const struct file *f = pick(u, pv_load_rng_unit(&u->rng) < 0.5 ? &u->sfiles : &u->vfiles);

	if (!f)
		f = pick(u, &u->sfiles);
	if (!f) {
		end(u, true);
		return;
	}
	open_path(u, f->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, oc_opened);
}

/* rewrite: a volatile/ file rewritten in place */
static void rewrite_written(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, true, done_ok);
}

static void rewrite_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, true))
		return;
	write_all(u, u->size, 2, rewrite_written);
}

static void sc_rewrite(struct user *u)
{
	const struct file *f = pick(u, &u->vfiles);

	if (!f) {
		end(u, true);
		return;
	}
	u->size = f->size ? f->size : 4096;
	open_path(u, f->path, PV_SMBA_WRITE, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR, rewrite_opened);
}

/* delete_new: the oldest file this user made in new/ */
static void del_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	close_fid(u, false, done_ok);
}

static void sc_delete_new(struct user *u)
{
	if (u->made_head >= u->made.n) {
		end(u, false); /* nothing made yet: nothing to delete */
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", u->made.f[u->made_head].path);
	free(u->made.f[u->made_head].path);
	u->made.f[u->made_head++].path = NULL;
	if (u->made_head == u->made.n) {
		u->made.n = u->made_head = 0;
	}
	open_path(u, u->path, PV_SMBA_DELETE | PV_SMBA_READ, PV_SMBA_OPEN,
		  PV_SMBA_NONDIR | PV_SMBA_DELCLOSE, del_opened);
}

/* list_new */
static void ln_listed(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, false, done_ok);
}

static void ln_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	list_all(u, false, ln_listed);
}

static void sc_list_new(struct user *u)
{
	snprintf(u->path, sizeof(u->path), "%s/new", u->u->name);
	open_path(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, ln_opened);
}

/* rename: a volatile/ file and back */
static void ren_back(struct user *u, const struct pv_smba_done *d)
{
	if (refused(u, d, 0))
		return;
	close_fid(u, false, done_ok);
}

static void ren_away(struct user *u, const struct pv_smba_done *d)
{
	if (refused(u, d, 0))
		return;
	ISSUE(u, ren_back, pv_smba_rename(u->c, u->fid, u->path, false, on_done, u));
}

static void ren_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, false))
		return;
	snprintf(u->path2, sizeof(u->path2), "%s/volatile/pv-%s-%s-%u.ren", u->u->name, u->u->name,
		 u->e->run, ++u->seq);
	ISSUE(u, ren_away, pv_smba_rename(u->c, u->fid, u->path2, false, on_done, u));
}

static void sc_rename(struct user *u)
{
	const struct file *f = pick(u, &u->vfiles);

	if (!f) {
		end(u, true);
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	open_path(u, u->path, PV_SMBA_READ | PV_SMBA_DELETE, PV_SMBA_OPEN, PV_SMBA_NONDIR,
		  ren_opened);
}

/* mkdir: a folder in new/, a file in it, both deleted */
static void mk_step(struct user *u, const struct pv_smba_done *d)
{
	if (d && refused(u, d, 0))
		return;
	switch (u->step++) {
	case 0: /* the folder made */
		if (!opened(u, d, false))
			return;
		if (snprintf(u->path2, sizeof(u->path2), "%s/f.dat", u->path) >=
		    (int)sizeof(u->path2)) {
			end(u, true);
			return;
		}
		open_path(u, u->path2, PV_SMBA_WRITE | PV_SMBA_DELETE, PV_SMBA_CREATE,
			  PV_SMBA_NONDIR | PV_SMBA_DELCLOSE, mk_step);
		break;
	case 1: /* the file made, deleted on close */
		if (!opened(u, d, true))
			return;
		write_all(u, 4096, 2, mk_step);
		break;
	case 2:
		close_fid(u, true, mk_step);
		break;
	case 3: /* the folder: deleted on close */
		close_fid(u, false, mk_step);
		break;
	case 4:
		open_path(u, u->path, PV_SMBA_DELETE | PV_SMBA_READ, PV_SMBA_OPEN,
			  PV_SMBA_DIR | PV_SMBA_DELCLOSE, mk_step);
		break;
	case 5:
		if (!opened(u, d, false))
			return;
		close_fid(u, false, done_ok);
		break;
	}
}

static void sc_mkdir(struct user *u)
{
	snprintf(u->path, sizeof(u->path), "%s/new/pv-d-%s-%s-%u", u->u->name, u->u->name,
		 u->e->run, ++u->seq);
	u->step = 0;
	open_path(u, u->path, PV_SMBA_READ | PV_SMBA_DELETE, PV_SMBA_CREATE, PV_SMBA_DIR, mk_step);
}

/* the ops loop (opts.ops_loop): open, write 4 KiB, close, again */
static void ops_next(struct user *u, const struct pv_smba_done *d);

static void ops_written(struct user *u, const struct pv_smba_done *d)
{
	(void)d;
	close_fid(u, true, ops_next);
}

static void ops_opened(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, true))
		return;
	(*u->e->o->ops)++;
	write_all(u, 4096, 2, ops_written);
}

static void ops_dir(struct user *u, const struct pv_smba_done *d)
{
	if (!opened(u, d, true))
		return;
	(*u->e->o->ops)++;
	close_fid(u, true, ops_next);
}

static void ops_next(struct user *u, const struct pv_smba_done *d)
{
	bool write = u->e->o->ops_loop == PV_LOAD_OPS_WRITE;

	if (d) {
		if (refused(u, d, 0))
			return;
		*u->e->o->ops += write ? 2 : 1; /* the WRITE and the CLOSE, or the CLOSE */
	}
	if (!u->e->running) {
		end(u, false);
		return;
	}
	if (write)
		open_path(u, u->path2, PV_SMBA_WRITE, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR,
			  ops_opened);
	else
		open_path(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_DIR, ops_dir);
}

static void start_ops(struct user *u, double t)
{
	u->kind = PV_LOAD_REWRITE;
	u->start = t;
	u->late = false;
	u->st = U_BUSY;
	snprintf(u->path2, sizeof(u->path2), "%s/new/pv-bench-%s.dat", u->u->name, u->u->name);
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

static void start(struct user *u, double t)
{
	struct engine *e = u->e;
	double gap;

	u->kind = u->next;
	u->start = t;
	u->late = pv_load_count_start(&e->figs, e->o->cfg, u->kind, t - u->due);
	pv_load_next(&u->sched, &gap, &u->next);
	u->due += gap;
	u->st = U_BUSY;
	u->open1 = u->open2 = false;
	scenario[u->kind](u);
}

/* A user whose connection failed still has scenarios due: each counts as started and failed,
 * so the figures show it. */
static void start_failed(struct user *u, double t)
{
	struct engine *e = u->e;
	double gap;
	bool late = pv_load_count_start(&e->figs, e->o->cfg, u->next, t - u->due);

	pv_load_count_end(&e->figs, e->o->cfg, u->next, late, 0, true);
	pv_load_next(&u->sched, &gap, &u->next);
	u->due += gap;
}

/* ---- Kerberos logons ---- */

/* smb/async's SPNEGO callback: the user's initial ticket and a ticket for cifs@<alias> from
 * the KDC (so the alias's SPN that `server` added is what makes this work), then the tokens. */
static int kerberos(void *arg, const uint8_t *in, size_t inlen, struct pv_buf *out, bool *done,
		    uint8_t key[16])
{
	struct user *u = arg;
	const struct pv_load_opts *o = u->e->o;
	int r;

	if (!u->krb) {
		char principal[512], service[300];

		snprintf(principal, sizeof(principal), "%s@%s", u->u->name, o->realm);
		snprintf(service, sizeof(service), "cifs@%s", u->u->alias);
		if ((r = pv_krb_sec_start(principal, o->password, service, &u->krb)) != PV_OK)
			return r;
	}
	if ((r = pv_krb_sec_step(u->krb, in, inlen, out, done)) != PV_OK)
		return r;
	if (*done) {
		r = pv_krb_sec_key(u->krb, key);
		pv_krb_sec_free(u->krb);
		u->krb = NULL;
	}
	return r;
}

/* ---- the loop ---- */

static void on_ready(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct user *u = arg;

	u->e->opening--;
	if (d->code == PV_EUNREACH && u->tries < LOGON_TRIES && u->e->logging_on) {
		/* the server too slow to log everyone on at once (a logon storm on its DC) or a
		 * reset: this user tries again once the others have had their turn */
		pv_log(PV_LOG_DEBUG, "load: %s: %s; logging on again (try %u of %u)", u->u->name,
		       d->msg ? d->msg : "the connection failed", u->tries + 1, LOGON_TRIES);
		pv_smba_close_conn(c);
		u->c = NULL;
		pv_krb_sec_free(u->krb);
		u->krb = NULL;
		u->e->again[u->e->nagain++] = u;
		return;
	}
	if (d->code != PV_OK) {
		fail_user(u, d->msg ? d->msg : "the connection failed");
		return;
	}
	learn(u);
}

static void user_free(struct user *u)
{
	pv_krb_sec_free(u->krb);
	list_free(&u->names);
	list_free(&u->dirs);
	list_free(&u->sfiles);
	list_free(&u->vfiles);
	list_free(&u->made);
}

static void counts(struct engine *e, unsigned *ok, unsigned *bad)
{
	*ok = *bad = 0;
	for (size_t i = 0; i < e->n; i++) {
		if (e->users[i].st == U_FAILED)
			(*bad)++;
		else
			(*ok)++;
	}
}

static int emit(struct engine *e, double *last)
{
	double t = pv_now();
	unsigned ok, bad;
	int r;

	counts(e, &ok, &bad);
	e->figs.seq++;
	e->figs.secs = t - *last;
	e->figs.connected = ok;
	e->figs.failed = bad;
	r = e->o->emit(e->o->arg, &e->figs);
	*last = t;
	{
		uint64_t seq = e->figs.seq;

		memset(&e->figs, 0, sizeof(e->figs));
		e->figs.seq = seq;
	}
	return r;
}

static void engine_free(struct engine *e)
{
	if (!e)
		return;
	pv_smba_loop_free(e->l);
	for (size_t i = 0; e->users && i < e->n; i++)
		user_free(&e->users[i]);
	free(e->users);
	free(e->again);
	free(e);
}

/* The engine, its users (each with its schedule) and the bytes writes write. */
static int engine_new(const struct pv_load_opts *o, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct pv_load_rng fill;
	struct timespec ts;
	int r;

	if (!e)
		return pv_error(PV_EIO, "out of memory");
	e->o = o;
	e->n = o->nusers;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(e->run, sizeof(e->run), "%lx%04lx", (long)ts.tv_sec,
		 (long)(ts.tv_nsec / 100000) & 0xffff);
	if (!(e->users = calloc(e->n ? e->n : 1, sizeof(*e->users))) ||
	    !(e->again = calloc(e->n ? e->n : 1, sizeof(*e->again)))) {
		engine_free(e);
		return pv_error(PV_EIO, "out of memory");
	}
	if ((r = pv_smba_loop_new(&e->l)) != PV_OK) {
		engine_free(e);
		return r;
	}
	/* what writes write: bytes that do not compress, the same on every run */
	fill.s[0] = 0x9e3779b97f4a7c15ull;
	fill.s[1] = 0xbf58476d1ce4e5b9ull;
	fill.s[2] = 0x94d049bb133111ebull;
	fill.s[3] = 1;
	for (size_t i = 0; i < sizeof(e->data); i += 8) {
		uint64_t v = pv_load_rng_next(&fill);

		memcpy(e->data + i, &v, 8);
	}
	for (size_t i = 0; i < e->n; i++) {
		struct user *u = &e->users[i];

		u->e = e;
		u->u = &o->users[i];
		u->st = U_OPENING;
		pv_load_sched_init(&u->sched, o->cfg, o->client, u->u->number);
		u->rng = u->sched.rng;
		u->rng.s[3] ^= 0x5bd1e995u; /* picks: another stream than the schedule's */
	}
	*out = e;
	return PV_OK;
}

/* Every user's connection opened, parallel at a time (again after the others' turn when the
 * server was too slow), and its tree learnt; then ready() is told. */
static int logon_all(struct engine *e)
{
	const struct pv_load_opts *o = e->o;
	unsigned parallel = o->parallel ? o->parallel : 64, ok, bad;
	size_t next_open = 0;
	int r = PV_OK;

	e->pending = (unsigned)e->n;
	e->logging_on = true;
	while (e->pending && r == PV_OK) {
		while ((next_open < e->n || e->nagain) && e->opening < parallel) {
			struct user *u =
				next_open < e->n ? &e->users[next_open++] : e->again[--e->nagain];
			struct pv_smba_opts so = {u->u->alias,	 u->u->alias, u->u->share,
						  o->workgroup,	 u->u->name,  o->password,
						  o->timeout_ms, NULL,	      NULL};

			if (o->cfg->auth == PV_LOAD_KERBEROS) {
				so.auth = kerberos;
				so.auth_arg = u;
			}
			u->tries++;
			if (pv_smba_open(e->l, &so, on_ready, u, &u->c) != PV_OK) {
				fail_user(u, pv_errmsg());
				continue;
			}
			e->opening++;
		}
		if (o->stop && o->stop(o->arg))
			return pv_error(PV_ESTOPPED, "stopped while the users logged on");
		r = pv_smba_loop_run(e->l, 50);
	}
	e->logging_on = false; /* from here a connection lost is the user's end */
	if (r != PV_OK)
		return r;
	counts(e, &ok, &bad);
	return o->ready ? o->ready(o->arg, ok, bad, e->first_error) : PV_OK;
}

/* Until go() says so; then every schedule starts at *t0. */
static int wait_go(struct engine *e, double *t0)
{
	const struct pv_load_opts *o = e->o;
	int r = PV_OK;

	while (r == PV_OK && o->go && !o->go(o->arg)) {
		if (o->stop && o->stop(o->arg))
			return pv_error(PV_ESTOPPED, "stopped before the load started");
		r = pv_smba_loop_run(e->l, 50);
	}
	*t0 = pv_now();
	for (size_t i = 0; r == PV_OK && i < e->n; i++) {
		double gap;

		pv_load_next(&e->users[i].sched, &gap, &e->users[i].next);
		e->users[i].due = *t0 + gap;
	}
	return r;
}

/* The bench's loop (ops_loop): every user one request after the other for the duration. */
static int run_ops(struct engine *e, double t0)
{
	const struct pv_load_opts *o = e->o;
	int r = PV_OK;

	for (size_t i = 0; i < e->n; i++)
		if (e->users[i].st == U_IDLE)
			start_ops(&e->users[i], t0);
	while (r == PV_OK && pv_now() - t0 < o->duration) {
		if (o->stop && o->stop(o->arg))
			return PV_ESTOPPED;
		r = pv_smba_loop_run(e->l, 100);
	}
	return r;
}

/* Every user's schedule for the duration, the figures every interval (*last: when the last
 * were emitted). */
static int run_schedules(struct engine *e, double t0, double *last)
{
	const struct pv_load_opts *o = e->o;
	double interval = o->cfg->interval ? o->cfg->interval : 1;
	int r = PV_OK;

	e->wake = t0; /* the first turn looks at every user */
	while (r == PV_OK) {
		double t = pv_now(), wake;

		if (t - t0 >= o->duration)
			break;
		if (o->stop && o->stop(o->arg))
			return PV_ESTOPPED;
		/* the users are looked at only when one is due (end() and fail_user() bring
		 * e->wake forward): with thousands of users, not at every answer */
		if (t >= e->wake) {
			e->wake = HUGE_VAL;
			for (size_t i = 0; i < e->n; i++) {
				struct user *u = &e->users[i];

				if (u->due <= t && u->st == U_IDLE)
					start(u, t);
				else if (u->due <= t && u->st == U_FAILED)
					start_failed(u, t);
				if ((u->st == U_IDLE || u->st == U_FAILED) && u->due < e->wake)
					e->wake = u->due;
			}
		}
		wake = e->wake < *last + interval ? e->wake : *last + interval;
		if (t >= *last + interval && (r = emit(e, last)) != PV_OK)
			break;
		t = pv_now();
		r = pv_smba_loop_run(e->l, wake > t ? (int)((wake - t) * 1000) + 1 : 0);
	}
	return r;
}

/* The end: no new scenario; those under way may finish, for DRAIN_SECS at most. */
static void drain(struct engine *e)
{
	double until = pv_now() + DRAIN_SECS;
	bool busy = true;

	while (busy && pv_now() < until) {
		busy = false;
		for (size_t i = 0; i < e->n; i++)
			busy |= e->users[i].st == U_BUSY;
		if (busy && pv_smba_loop_run(e->l, 50) != PV_OK)
			break;
	}
}

int pv_load(const struct pv_load_opts *o)
{
	struct engine *e = NULL;
	double t0 = 0, last = 0;
	int r;

	if (o->cfg->auth == PV_LOAD_KERBEROS) {
		struct pv_krb_target t = {o->realm, o->kdc, o->dns_domain};

		if ((r = pv_krb_setup(&t)) != PV_OK)
			return r;
	}
	if ((r = engine_new(o, &e)) == PV_OK && (r = logon_all(e)) == PV_OK &&
	    (r = wait_go(e, &t0)) == PV_OK) {
		last = t0;
		e->running = true;
		r = o->ops_loop ? run_ops(e, t0) : run_schedules(e, t0, &last);
		e->running = false;
		if (r == PV_OK || r == PV_ESTOPPED)
			drain(e);
		if (r == PV_OK || r == PV_ESTOPPED) {
			int er = emit(e, &last);

			if (r == PV_OK)
				r = er;
			if (r == PV_ESTOPPED)
				r = pv_error(PV_ESTOPPED, "the load was stopped after %.1f s",
					     pv_now() - t0);
		}
	}
	engine_free(e);
	pv_krb_cleanup();
	return r;
}
