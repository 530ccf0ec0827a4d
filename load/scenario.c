/* load/scenario.c: the scenarios of docs/load.md's table, a user's at a time, each a table of
 * steps that one runner goes through: which file or folder it works on, the requests it makes
 * in order; its start (counted, late or not) and its end; the ops loop of the bench beside
 * smbtorture. */
#include "load/engine_internal.h"
#include "load/steps.h"

#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the scenario under way ends ---- */

void scenario_end(struct user *u, bool error)
{
	struct worker *w = u->w;
	double t = pv_now();

	/* files left open by a failure: closed, nobody waits for the answer */
	if (u->open1 && pv_smb_closefile(u->c, u->fid, NULL, NULL) == PV_OK)
		user_count_op(u, PV_LOAD_OP_CLOSE);
	if (u->open2 && pv_smb_closefile(u->c, u->fid2, NULL, NULL) == PV_OK)
		user_count_op(u, PV_LOAD_OP_CLOSE);
	u->open1 = u->open2 = false;
	if (!u->e->o->ops_loop) {
		pthread_mutex_lock(&w->lock);
		pv_load_count_end(&w->figs, u->e->o->cfg, u->kind, u->late, t - u->start, error);
		pthread_mutex_unlock(&w->lock);
	}
	if (u->st == U_BUSY)
		user_set_state(u, pv_smb_usable(u->c) ? U_IDLE : U_FAILED);
	u->idle_since = t;
	u->due = pv_load_start_at(u->planned, t - u->answered_in, u->think, u->e->o->cfg->late / 2);
	if (u->due < w->wake)
		w->wake = u->due;
	if (u->relogon_at < w->wake) /* a learned workload's logon, due between two activities */
		w->wake = u->relogon_at;
}

/* ---- steps ---- */

static const struct open_mode {
	uint32_t access, disposition, options, lease;
} modes[] = {
	[DIR_LIST] = {PV_SMB_LIST, PV_SMB_OPEN, PV_SMB_DIR, 0},
	[DIR_NEW] = {PV_SMB_READ | PV_SMB_DELETE, PV_SMB_CREATE, PV_SMB_DIR, 0},
	[DIR_DEL] = {PV_SMB_READ | PV_SMB_DELETE, PV_SMB_OPEN, PV_SMB_DIR, 0},
	[DOC_READ] = {PV_SMB_READ, PV_SMB_OPEN, PV_SMB_NONDIR, LEASE_RH},
	[DOC_EDIT] = {PV_SMB_WRITE, PV_SMB_OPEN, PV_SMB_NONDIR, LEASE_RWH},
	[DOC_OVER] = {PV_SMB_WRITE, PV_SMB_OVERWRITE, PV_SMB_NONDIR, LEASE_RWH},
	[DOC_NEW] = {PV_SMB_WRITE, PV_SMB_CREATE, PV_SMB_NONDIR, LEASE_RWH},
	[FILE_NEW] = {PV_SMB_WRITE, PV_SMB_CREATE, PV_SMB_NONDIR, 0},
	[FILE_TEMP] = {PV_SMB_WRITE | PV_SMB_DELETE, PV_SMB_OVERWRITE, PV_SMB_NONDIR, 0},
	[FILE_MADE] = {PV_SMB_WRITE | PV_SMB_DELETE, PV_SMB_CREATE, PV_SMB_NONDIR, 0},
	[FILE_DEL] = {PV_SMB_READ | PV_SMB_DELETE, PV_SMB_OPEN, PV_SMB_NONDIR, 0},
	[OWN] = {PV_SMB_WRITE | PV_SMB_DELETE, PV_SMB_OPEN_IF, PV_SMB_NONDIR, 0},
	[OWN_OVER] = {PV_SMB_WRITE | PV_SMB_DELETE, PV_SMB_OVERWRITE, PV_SMB_NONDIR, 0},
	[OWN_NEW] = {PV_SMB_WRITE | PV_SMB_DELETE, PV_SMB_CREATE, PV_SMB_NONDIR | PV_SMB_DELCLOSE,
		     0},
	[ATTRS] = {PV_SMB_ATTRS, PV_SMB_OPEN, 0, 0},
};

/* ---- the scenarios (docs/load.md), each its steps and what they do first ---- */

/* A name of this run's own in a part of the user's tree, pv-<pre><user>-<run>-<n><ext>: no
 * other run's, nor another user's. */
static int own_name(struct user *u, char *dst, const char *part, const char *pre, const char *ext)
{
	snprintf(dst, PATH_MAX_LOAD, "%s/%s/pv-%s%s-%s-%u%s", u->info.name, part, pre, u->info.name,
		 u->e->run, ++u->seq, ext);
	return GO;
}

/* A file in the folder u->path into u->path2 (browse's desktop.ini, mkdir's file); FAIL when
 * the name would be too long. */
static int in_dir(struct user *u, const char *leaf)
{
	int n = snprintf(u->path2, sizeof(u->path2), "%s/%s", u->path, leaf);

	return n >= (int)sizeof(u->path2) ? FAIL : GO;
}

/* upload and copy_in: the file they make in new/ */
static int new_name(struct user *u)
{
	return own_name(u, u->path2, "new", "", ".dat");
}

/* The size of an uploaded document: 64 KiB to 2 MiB, log-uniform (office documents and
 * presentations saved from a desktop). */
static int upload_size(struct user *u)
{
	u->size = (uint64_t)(65536.0 * exp(pv_load_rng_unit(&u->rng) * log(32.0)));
	return GO;
}

/* The file made, for delete_new. */
static int made(struct user *u)
{
	return files_add(&u->made, u->path2, u->size) < 0 ? FAIL : GO;
}

/* upload: is it there? create it (a lease), size it, write it, flush, set its time, close */
static const struct step upload[] = {
	{PROBE, .path = P2, .before = new_name},
	{OPEN, F2, DOC_NEW, P2},
	{SETINFO, F2, INFO_EOF, .before = upload_size},
	{WRITE, F2},
	{FLUSH, F2},
	{SETINFO, F2, INFO_BASIC},
	{CLOSE, F2},
	{END, .before = made},
};

static int desktop_ini(struct user *u)
{
	return in_dir(u, "desktop.ini");
}

/* One of the files listed, to look at; none: on to the folder's close (this open skipped, and
 * the file's stat and close after it). */
static int pick_listed(struct user *u)
{
	const struct file *f = files_pick(u, &u->names);

	if (!f)
		return 3;
	snprintf(u->path2, sizeof(u->path2), "%s", f->path);
	return GO;
}

/* browse: open a folder, look at it, watch it, list it, look for its desktop.ini, look at one
 * of its files (open, its attributes, close), close the folder */
static const struct step browse[] = {
	{OPEN, F1, DIR_LIST, P1, FOLDER},
	{STAT, F1},
	{NOTIFY, F1},
	{LIST, F1},
	{PROBE, .path = P2, .before = desktop_ini},
	{OPEN, F2, DOC_READ, P2, .before = pick_listed},
	{STAT, F2},
	{CLOSE, F2},
	{CLOSE, F1},
	{END},
};

/* The next file listed, until none is left. */
static int next_listed(struct user *u)
{
	if (u->i >= u->names.n)
		return DONE;
	snprintf(u->path2, sizeof(u->path2), "%s", u->names.f[u->i++].path);
	return GO;
}

/* read_folder: open a folder, list it, close it, then read every file of it whole */
static const struct step read_folder[] = {
	{OPEN, F1, DIR_LIST, P1, FOLDER},
	{LIST, F1},
	{CLOSE, F1},
	{OPEN, F1, DOC_READ, P2, .before = next_listed}, /* 3 */
	{READ, F1},
	{CLOSE, F1},
	{AGAIN, .arg = 3},
};

/* open_read: a static/ document opened to read (a lease, its attributes, its object id), read
 * whole, closed */
static const struct step open_read[] = {
	{OPEN, F1, DOC_READ, P1, STATIC}, {STAT, F1}, {OBJECT, F1}, {READ, F1}, {CLOSE, F1}, {END},
};

/* open_close: a document opened, its attributes and object id read, closed */
static const struct step open_close[] = {
	{OPEN, F1, DOC_READ, P1, EITHER}, {STAT, F1}, {OBJECT, F1}, {CLOSE, F1}, {END},
};

/* copy_in: a static/ file read whole and written as a new file in new/ (is the target there?
 * create it, size it, write it, set its time) */
static const struct step copy_in[] = {
	{OPEN, F1, DOC_READ, P1, STATIC},
	{STAT, F1},
	{READ, F1},
	{PROBE, .path = P2, .before = new_name},
	{OPEN, F2, FILE_NEW, P2},
	{SETINFO, F2, INFO_EOF},
	{WRITE, F2},
	{SETINFO, F2, INFO_BASIC},
	{CLOSE, F2},
	{CLOSE, F1},
	{END, .before = made},
};

/* The owner file Office makes beside a document it edits: ~$ and the document's name. */
static int owner_name(struct user *u)
{
	const char *slash = strrchr(u->path, '/');
	int dir = slash ? (int)(slash - u->path) : 0;

	if (snprintf(u->path2, sizeof(u->path2), "%.*s/~$%.200s", dir, u->path,
		     slash ? slash + 1 : u->path) < 0)
		u->path2[0] = '\0';
	return GO;
}

/* The temporary file Word saves into, beside the document; as big as the document (4096
 * bytes when that was empty). */
static int temp_name(struct user *u)
{
	const char *slash = strrchr(u->path, '/');
	int dir = slash ? (int)(slash - u->path) : 0;

	snprintf(u->path2, sizeof(u->path2), "%.*s/~WRL%04u.tmp", dir, u->path, ++u->seq % 10000);
	if (!u->size)
		u->size = 4096;
	return GO;
}

/* edit_save: a volatile/ document opened to edit as an editor does (a read-write-handle lease,
 * its attributes, its object id, a range lock, read whole), its owner file made (~$name: is it
 * there? create, write, close), saved (a temporary file sized, written, flushed, closed; the
 * lock released, the document closed, the temporary file renamed over it) and the owner file
 * deleted */
static const struct step edit_save[] = {
	{OPEN, F1, DOC_EDIT, P1, VOLATILE},
	{STAT, F1},
	{OBJECT, F1},
	{LOCK, F1},
	{READ, F1},
	{PROBE, .path = P2, .before = owner_name},
	{OPEN, F2, FILE_TEMP, P2},
	{WRITE, F2, 162},
	{CLOSE, F2},
	{OPEN, F2, FILE_TEMP, P2, .before = temp_name},
	{SETINFO, F2, INFO_EOF},
	{WRITE, F2},
	{FLUSH, F2},
	{CLOSE, F2},
	{UNLOCK, F1},
	{CLOSE, F1},
	{OPEN, F1, FILE_DEL, P2},
	{RENAME, F1, true, P1},
	{CLOSE, F1},
	{OPEN, F2, FILE_DEL, P2, .before = owner_name},
	{SETINFO, F2, INFO_DISPOSITION},
	{CLOSE, F2},
	{END},
};

/* The size it had (opening over it emptied it; 4096 bytes when it was empty). */
static int size_listed(struct user *u)
{
	u->size = u->listed ? u->listed : 4096;
	return GO;
}

/* rewrite: a volatile/ file rewritten in place (opened over, a range lock, sized, written,
 * flushed, the lock released, closed) */
static const struct step rewrite[] = {
	{OPEN, F1, DOC_OVER, P1, VOLATILE},
	{LOCK, F1, .before = size_listed},
	{SETINFO, F1, INFO_EOF},
	{WRITE, F1},
	{FLUSH, F1},
	{UNLOCK, F1},
	{CLOSE, F1},
	{END},
};

/* The oldest file this user made (nothing made yet: nothing to delete). */
static int pick_oldest(struct user *u)
{
	struct file *f;

	if (u->made_head >= u->made.n)
		return DONE;
	f = &u->made.f[u->made_head++];
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	free(f->path);
	f->path = NULL;
	if (u->made_head == u->made.n) /* all deleted: the list starts again */
		u->made.n = u->made_head = 0;
	return GO;
}

/* delete_new: the oldest file this user made in new/ (opened to delete, marked, closed) */
static const struct step delete_new[] = {
	{OPEN, F1, FILE_DEL, P1, .before = pick_oldest},
	{SETINFO, F1, INFO_DISPOSITION},
	{CLOSE, F1},
	{END},
};

static int new_folder(struct user *u)
{
	snprintf(u->path, sizeof(u->path), "%s/new", u->info.name);
	return GO;
}

/* list_new: new/ opened, looked at, watched, listed, closed */
static const struct step list_new[] = {
	{OPEN, F1, DIR_LIST, P1, .before = new_folder},
	{STAT, F1},
	{NOTIFY, F1},
	{LIST, F1},
	{CLOSE, F1},
	{END},
};

/* The name it is renamed to, in volatile/. */
static int ren_name(struct user *u)
{
	return own_name(u, u->path2, "volatile", "", ".ren");
}

/* rename: a volatile/ file renamed and back (each: opened to delete, renamed, closed) */
static const struct step rename_back[] = {
	{OPEN, F1, FILE_DEL, P1, VOLATILE, ren_name},
	{RENAME, F1, false, P2},
	{CLOSE, F1},
	{OPEN, F1, FILE_DEL, P2},
	{RENAME, F1, false, P1},
	{CLOSE, F1},
	{END},
};

static int mkdir_name(struct user *u)
{
	return own_name(u, u->path, "new", "d-", "");
}

static int mkdir_file(struct user *u)
{
	return in_dir(u, "f.dat");
}

/* mkdir: a folder made in new/, a file in it, then both deleted (each opened to delete,
 * marked, closed) */
static const struct step mkdir_del[] = {
	{OPEN, F1, DIR_NEW, P1, .before = mkdir_name},
	{CLOSE, F1},
	{OPEN, F2, FILE_MADE, P2, .before = mkdir_file},
	{WRITE, F2, 4096},
	{CLOSE, F2},
	{OPEN, F1, FILE_DEL, P2},
	{SETINFO, F1, INFO_DISPOSITION},
	{CLOSE, F1},
	{OPEN, F1, DIR_DEL, P1},
	{SETINFO, F1, INFO_DISPOSITION},
	{CLOSE, F1},
	{END},
};

static const struct step *const scenarios[PV_PLAYBOOK_WORKLOAD_KINDS] = {
	[PV_PLAYBOOK_WORKLOAD_UPLOAD] = upload,
	[PV_PLAYBOOK_WORKLOAD_BROWSE] = browse,
	[PV_PLAYBOOK_WORKLOAD_OPEN_READ] = open_read,
	[PV_PLAYBOOK_WORKLOAD_COPY_IN] = copy_in,
	[PV_PLAYBOOK_WORKLOAD_EDIT_SAVE] = edit_save,
	[PV_PLAYBOOK_WORKLOAD_OPEN_CLOSE] = open_close,
	[PV_PLAYBOOK_WORKLOAD_REWRITE] = rewrite,
	[PV_PLAYBOOK_WORKLOAD_DELETE_NEW] = delete_new,
	[PV_PLAYBOOK_WORKLOAD_LIST_NEW] = list_new,
	[PV_PLAYBOOK_WORKLOAD_RENAME] = rename_back,
	[PV_PLAYBOOK_WORKLOAD_MKDIR] = mkdir_del,
	[PV_PLAYBOOK_WORKLOAD_READ_FOLDER] = read_folder,
};

/* ---- the runner ---- */

/* The file or folder a scenario works on (what: enum pick) into u->path: false when its user
 * knows of none. */
static bool picked(struct user *u, int what)
{
	const struct list *l = what == FOLDER ? &u->dirs : &u->sfiles;
	const struct file *f;

	/* open_close: a volatile/ document half the time (when there is one) */
	if (what == VOLATILE || (what == EITHER && pv_load_rng_unit(&u->rng) < 0.5 && u->vfiles.n))
		l = &u->vfiles;
	if (!(f = files_pick(u, l)))
		return false;
	snprintf(u->path, sizeof(u->path), "%s", f->path);
	u->listed = what == FOLDER ? 0 : f->size;
	u->dir_file = what == FOLDER ? (size_t)f->size : 0;
	u->child[0] = '\0';
	return true;
}

static void run(struct user *u, const struct pv_smb_done *d);

/* What a learned activity waits before its next request, as the capture's user did: a gap from
 * its last request (activity.within's quantiles, or within_after's of that request's command,
 * drawn as this server answers: model.h's pv_load_gaps) less what its answer took
 * (u->answered_in: of the step's last request, when it made several: a whole READ, WRITE or
 * listing; drawing the whole gap after it, as before 2026-12-05, doubled the answer's time in
 * it: the gaps after a READ were 422 us at the median against the capture's 237), or else
 * the client's time after the answer (activity.client: drawn from its quantiles, else a log-normal
 * draw of its median and p95). Whether u now waits (scenario_go_on goes on); none below
 * PV_PLAYBOOK_WORKLOAD_CLIENT_MIN: a loop's turn. */
static bool paused(struct user *u)
{
	const struct pv_playbook_workload_learned *l = &u->e->o->cfg->learned;
	const double *c = l->client;
	double sigma, z, g;

	if (u->kind != PV_PLAYBOOK_WORKLOAD_LEARNED ||
	    !(c[0] > 0 || l->client_q.n >= 2 || l->within.n >= 2))
		return false;
	if (l->within.n >= 2) {
		const struct pv_playbook_workload_quantiles *q = &l->within;
		struct pv_load_gaps *gs = &u->w->gaps[PV_LOAD_OPS];

		if (u->last_op < PV_LOAD_OPS && l->within_after[u->last_op].n >= 2) {
			q = &l->within_after[u->last_op];
			gs = &u->w->gaps[u->last_op];
		}
		pv_load_gaps_add(gs, q, u->answered_in);
		/* nothing open: under the activity gap, as in the capture */
		g = pv_load_gaps_draw_under(gs, q, u->open1 || u->open2 ? 0 : l->gap, &u->crng) -
		    u->answered_in;
	} else if (l->client_q.n >= 2) {
		g = pv_load_quantiles_draw(&l->client_q, pv_load_rng_unit(&u->crng));
	} else {
		sigma = c[1] > c[0] ? log(c[1] / c[0]) / 1.6448536 : 0;
		z = sqrt(-2 * log(1 - pv_load_rng_unit(&u->crng))) *
		    cos(2 * M_PI * pv_load_rng_unit(&u->crng)); /* Box-Muller */
		g = c[0] * exp(sigma * z);
	}
	if (g < PV_PLAYBOOK_WORKLOAD_CLIENT_MIN)
		return false;
	u->pause_at = pv_now() + g;
	if (u->pause_at < u->w->wake)
		u->w->wake = u->pause_at;
	return true;
}

/* u's learned client time waited (paused): at t past it, its scenario goes on. */
void scenario_go_on(struct user *u, double t)
{
	if (u->pause_at > t) {
		if (u->pause_at < u->w->wake)
			u->w->wake = u->pause_at;
		return;
	}
	u->pause_at = 0;
	u->resumed = true;
	run(u, NULL);
}

/* The answer to the request of the step before, as that step takes it: false when it ended
 * the scenario (a refusal). d NULL: nothing to take (the start, a whole READ, WRITE or LIST
 * done). */
static bool took(struct user *u, const struct pv_smb_done *d)
{
	const struct step *s;

	if (!d)
		return true;
	s = &u->steps[u->step - 1];
	if (s->req == PROBE)
		return client_probed(u, d);
	if (s->req == OPEN)
		return client_opened(u, d, s->file == F2);
	if (s->req == FSCTL) /* refused in the capture too, as the server may */
		return true;
	return !client_refused(u, d, 0);
}

/* The requests on an open file that ask nothing more. */
static void (*const on_file[])(struct user *u, bool second, step_fn next) = {
	[STAT] = client_stat,	[OBJECT] = client_object_id, [READ] = client_read_all,
	[FLUSH] = client_flush, [CLOSE] = client_close,
};

/* A learned read or write (LREAD, LWRITE) on file f: where the last one ended, from 0 again
 * past the file's end (a read) or past 1 MiB (a write); false when there is nothing to read. */
static bool learned_io(struct user *u, const struct step *s)
{
	bool f2 = s->file == F2, write = s->req == LWRITE;
	uint64_t size = u->fsize[f2], *at = &u->at[f2];
	uint32_t n = replay_io_size(u, f2, write);

	if (!write) {
		/* asked as the capture's client asked: the file was picked to hold its reads
		 * (replay.c's reads_ahead); the largest, when none did, read from its start again
		 * once at its end */
		if (!size)
			return false;
		if (*at >= size)
			*at = 0;
		client_read_at(u, f2, *at, n, run);
	} else {
		if (*at + n > (1u << 20))
			*at = 0;
		client_write_at(u, f2, *at, n, run);
		if (*at + n > size)
			u->fsize[f2] = *at + n;
	}
	*at += n;
	return true;
}

/* The request of step s, its answer to come to run(): false when there is none to make. */
static bool issue(struct user *u, const struct step *s)
{
	const char *path = s->path == P2 ? u->path2 : u->path;
	bool f2 = s->file == F2;

	switch (s->req) {
	case OPEN: {
		const struct open_mode *m = &modes[s->arg];

		if (m->lease && replay_leased(u))
			client_open_lease(u, f2, path, m->access, m->disposition, m->options,
					  m->lease, run);
		else
			client_open(u, path, m->access, m->disposition, m->options, run);
		break;
	}
	case PROBE:
		client_probe(u, path, run);
		break;
	case LOCK:
	case UNLOCK:
		client_lock(u, f2, s->req == UNLOCK, run);
		break;
	case WRITE:
		client_write_all(u, s->arg ? s->arg : u->size, f2, run);
		break;
	case LIST:
		client_list(u, 0, s->arg, run);
		break;
	case SETINFO:
		client_set_info(u, f2, (uint8_t)s->arg, run);
		break;
	case RENAME:
		client_rename(u, f2, path, s->arg, run);
		break;
	case FSCTL:
		client_fsctl(u, f2, s->arg, run);
		break;
	case LREAD:
	case LWRITE:
		return learned_io(u, s);
	default:
		on_file[s->req](u, f2, run);
	}
	return true;
}

/* The scenario's steps from u->step on, each answer coming back here: what the last asked
 * taken, then the next steps until one makes a request that is answered later (or the
 * scenario ends). */
static void run(struct user *u, const struct pv_smb_done *d)
{
	if (!took(u, d) || (u->step > 0 && !u->resumed && paused(u)))
		return;
	u->resumed = false;
	for (;;) {
		const struct step *s = &u->steps[u->step++];
		int r;

		if (s->chance && (pv_load_rng_next(&u->rng) & 0xffff) >= s->chance)
			continue;
		r = s->pick && !picked(u, s->pick) ? FAIL : s->before ? s->before(u) : GO;

		if (r == DONE || r == FAIL) {
			scenario_end(u, r == FAIL);
			return;
		}
		if (r > 0) {
			u->step += r - 1;
			continue;
		}
		if (s->req == END) {
			scenario_end(u, false);
			return;
		}
		if (s->req == AGAIN) {
			u->step = (int)s->arg;
		} else if (s->req == NOTIFY) {
			client_watch(u, s->file == F2);
		} else if (issue(u, s)) {
			return;
		}
	}
}

/* ---- the ops loop (opts.ops_loop): open, write 4 KiB, close, again ---- */

static void ops_next(struct user *u, const struct pv_smb_done *d);

static void ops_written(struct user *u, const struct pv_smb_done *d)
{
	(void)d;
	client_close(u, true, ops_next);
}

static void ops_opened(struct user *u, const struct pv_smb_done *d)
{
	if (!client_opened(u, d, true))
		return;
	u->w->ops++;
	client_write_all(u, 4096, true, ops_written);
}

static void ops_dir(struct user *u, const struct pv_smb_done *d)
{
	if (!client_opened(u, d, true))
		return;
	u->w->ops++;
	client_close(u, true, ops_next);
}

static void ops_next(struct user *u, const struct pv_smb_done *d)
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
		client_open(u, u->path2, PV_SMB_WRITE, PV_SMB_OVERWRITE, PV_SMB_NONDIR, ops_opened);
	else /* smbtorture's open (bench/load.sh): attributes only, a link not followed, so that
	      * the server does the same work for both */
		client_open(u, u->path, PV_SMB_ATTRS, PV_SMB_OPEN, PV_SMB_REPARSE, ops_dir);
}

void ops_start(struct user *u, double t)
{
	u->kind = PV_PLAYBOOK_WORKLOAD_REWRITE;
	u->start = t;
	u->late = false;
	user_set_state(u, U_BUSY);
	snprintf(u->path2, sizeof(u->path2), "%s/new/pv-bench-%s.dat", u->info.name, u->info.name);
	u->path[0] = '\0'; /* open-close: the share's root, one path for every user of the share */
	ops_next(u, NULL);
}

/* ---- a scenario's start ---- */

void scenario_start(struct user *u, double t)
{
	struct worker *w = u->w;
	double gap;
	int lk = -1;

	u->kind = u->next;
	u->steps =
		u->kind == PV_PLAYBOOK_WORKLOAD_LEARNED ? replay_pick(u, &lk) : scenarios[u->kind];
	u->ahead[F1] = u->ahead[F2] = false;
	u->start = t;
	pthread_mutex_lock(&w->lock);
	u->late = pv_load_count_start(&w->figs, u->e->o->cfg, u->kind, t - u->planned);
	/* the loop's lag: how late it started a scenario whose user was idle when it was due
	 * (a user still busy then is late because of the server, not of the loop) */
	if (u->idle_since <= u->due)
		pv_load_hist_add(&w->figs.lag, t - u->due);
	pthread_mutex_unlock(&w->lock);
	/* a learned kind's: its pace */
	pv_load_next_after(&u->sched, lk, &gap, &u->next, &u->think);
	u->due = u->planned += gap;
	user_set_state(u, U_BUSY);
	u->open1 = u->open2 = false;
	u->pause_at = 0;
	u->answered_in = 0;
	u->resumed = false;
	u->step = 0;
	u->i = 0;
	if (!u->steps) { /* a learned kind without a workload: the protocol refuses it */
		scenario_end(u, true);
		return;
	}
	run(u, NULL);
}

/* A user without a connection still has scenarios due: each counts as started, unserved and
 * overloaded, so the figures show it. */
void scenario_unserved(struct user *u)
{
	struct worker *w = u->w;
	double gap;

	pthread_mutex_lock(&w->lock);
	pv_load_count_unserved(&w->figs, u->next);
	pthread_mutex_unlock(&w->lock);
	pv_load_next(&u->sched, &gap, &u->next);
	u->due = u->planned += gap;
	u->think = -1;
}

/* ---- a scenario through a broken connection ---- */

/* u's connection broke under its scenario (client_done): whether the scenario is held to go on
 * once u has logged on again, as a Windows client goes on with its durable handles: when each
 * file it has open is durable, and the step is running (it logs on again: logon_lost). Else
 * the scenario ends in an error, as before durable handles. */
bool scenario_held(struct user *u)
{
	static const uint8_t none[16];
	const struct step *s;

	if (u->e->o->ops_loop || !u->steps) /* (the ops loop has no steps) */
		return false;
	s = &u->steps[u->step - 1];
	if (s->req == CLOSE) /* its answer lost: the file is open still, for all u knows */
		*(s->file == F2 ? &u->open2 : &u->open1) = true;
	if (!u->active || !worker_running(u->w) || pv_smb_usable(u->c) ||
	    (u->open1 && !memcmp(u->dh[0].guid, none, 16)) ||
	    (u->open2 && !memcmp(u->dh[1].guid, none, 16)))
		return false;
	u->resume = true;
	user_set_state(u, U_FAILED); /* it logs on again: logon_lost */
	return true;
}

/* The answer to a claim of a durable file (none: the first), then the next file claimed, then
 * the step's request asked again (from its start: a whole read or listing anew). */
static void reclaimed(struct user *u, const struct pv_smb_done *d)
{
	if (d && d->status) { /* the server no longer has it (a restart: its state is gone) */
		pv_log(PV_LOG_DEBUG,
		       "load: %s: the durable open of %s was not claimed again (0x%08x)",
		       u->info.name, u->dh_path[u->reclaim - 1], d->status);
		if (u->reclaim <= 1) /* neither is open on this connection */
			u->open1 = false;
		u->open2 = false;
		client_refused(u, d, 0);
		return;
	}
	if (d) {
		memcpy(u->reclaim == 1 ? u->fid : u->fid2, d->fid, 16);
		pthread_mutex_lock(&u->w->lock);
		u->w->figs.reclaimed++;
		pthread_mutex_unlock(&u->w->lock);
	}
	while (u->reclaim < 2) {
		bool second = u->reclaim++ == 1;

		if (second ? u->open2 : u->open1) {
			client_reopen(u, second, reclaimed);
			return;
		}
	}
	if (!issue(u, &u->steps[u->step - 1]))
		run(u, NULL);
}

/* u logged on again with its scenario held (scenario_held): it goes on. */
void scenario_resume(struct user *u)
{
	u->resume = false;
	user_set_state(u, U_BUSY);
	u->reclaim = 0;
	pv_log(PV_LOG_DEBUG, "load: %s: its scenario goes on after its logon again", u->info.name);
	reclaimed(u, NULL);
}

/* A scenario held that will not go on (the step drains, or a new one begins): it ends in an
 * error. */
void scenario_drop(struct user *u)
{
	if (!u->resume)
		return;
	u->resume = false;
	u->open1 = u->open2 = false; /* with the connection they were on */
	scenario_end(u, true);
}
