/* load/scenario.c: the scenarios of docs/load.md's table, a user's at a time: which file or
 * folder each works on, the requests it makes in order, its start (counted, late or not) and its
 * end; the ops loop of the bench beside smbtorture. */
#include "load/engine_internal.h"

#include "util/err.h"
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
		client_open_lease(u, u->path2, PV_SMBA_WRITE, PV_SMBA_CREATE, PV_SMBA_NONDIR,
				  LEASE_RWH, sc_upload_step);
		break;
	case 2:
		if (!client_opened(u, d, true))
			return;
		u->size = upload_size(u);
		client_set_info(u, true, INFO_EOF, sc_upload_step);
		break;
	case 3:
		client_write_all(u, u->size, true, sc_upload_step);
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
		client_watch(u, false);
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
		client_open_lease(u, u->path2, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, LEASE_RH,
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
		client_open_lease(u, u->path2, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, LEASE_RH,
				  sc_read_folder_step);
		break;
	case 4:
		if (!client_opened(u, d, false))
			return;
		client_read_all(u, false, sc_read_folder_step);
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
		client_open_lease(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, LEASE_RH,
				  sc_open_read_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_open_read_step);
		break;
	case 2:
		client_object_id(u, false, sc_open_read_step);
		break;
	case 3:
		client_read_all(u, false, sc_open_read_step);
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
		client_open_lease(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, LEASE_RH,
				  sc_open_close_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_open_close_step);
		break;
	case 2:
		client_object_id(u, false, sc_open_close_step);
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
		client_open_lease(u, u->path, PV_SMBA_READ, PV_SMBA_OPEN, PV_SMBA_NONDIR, LEASE_RH,
				  sc_copy_in_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_copy_in_step);
		break;
	case 2:
		client_read_all(u, false, sc_copy_in_step);
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
		client_write_all(u, u->size, true, sc_copy_in_step);
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
		client_open_lease(u, u->path, PV_SMBA_WRITE, PV_SMBA_OPEN, PV_SMBA_NONDIR,
				  LEASE_RWH, sc_edit_save_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		client_stat(u, false, sc_edit_save_step);
		break;
	case 2:
		client_object_id(u, false, sc_edit_save_step);
		break;
	case 3:
		client_lock(u, false, false, sc_edit_save_step);
		break;
	case 4:
		client_read_all(u, false, sc_edit_save_step);
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
		client_write_all(u, 162, true, sc_edit_save_step);
		break;
	case 8:
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
		client_write_all(u, u->size, true, sc_edit_save_step);
		break;
	case 12:
		client_flush(u, true, sc_edit_save_step);
		break;
	case 13:
		client_close(u, true, sc_edit_save_step);
		break;
	case 14:
		client_lock(u, false, true, sc_edit_save_step);
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
		client_rename(u, false, u->path, true, sc_edit_save_step);
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
				  LEASE_RWH, sc_rewrite_step);
		break;
	case 1:
		if (!client_opened(u, d, false))
			return;
		u->size = u->listed; /* the size it had (opening over it emptied it) */
		client_lock(u, false, false, sc_rewrite_step);
		break;
	case 2:
		client_set_info(u, false, INFO_EOF, sc_rewrite_step);
		break;
	case 3:
		client_write_all(u, u->size, false, sc_rewrite_step);
		break;
	case 4:
		client_flush(u, false, sc_rewrite_step);
		break;
	case 5:
		client_lock(u, false, true, sc_rewrite_step);
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
		client_watch(u, false);
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
		client_rename(u, false, u->step == 2 ? u->path2 : u->path, false, sc_rename_step);
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
		client_write_all(u, 4096, true, sc_mkdir_step);
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
	u->listed = f->size;
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
		if (!u->listed)
			u->listed = 4096;
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
	client_write_all(u, 4096, true, ops_written);
}

static void ops_dir(struct user *u, const struct pv_smba_done *d)
{
	if (!client_opened(u, d, true))
		return;
	u->w->ops++;
	client_close(u, true, ops_next);
}

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

void ops_start(struct user *u, double t)
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

void scenario_start(struct user *u, double t)
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
void scenario_unserved(struct user *u)
{
	struct worker *w = u->w;
	double gap;

	pthread_mutex_lock(&w->lock);
	pv_load_count_unserved(&w->figs, u->next);
	pthread_mutex_unlock(&w->lock);
	pv_load_next(&u->sched, &gap, &u->next);
	u->due += gap;
}
