/* load/learn.c: what a user knows of its home tree (the lists of its files and folders) and
 * how it learns it at its logon: static/ from the fileset's plan, or listed like volatile/ and
 * new/, whose content the load changes. */
#include "load/engine_internal.h"

#include "fileset/fileset.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int files_add(struct list *l, const char *path, uint64_t size)
{
	if (engine_grow(&l->f, &l->cap, l->n + 1, sizeof(*l->f)) ||
	    !(l->f[l->n].path = strdup(path)))
		return -1;
	l->f[l->n++].size = size;
	return 0;
}

void files_clear(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].path);
	l->n = 0;
}

void files_free(struct list *l)
{
	files_clear(l);
	free(l->f);
	memset(l, 0, sizeof(*l));
}

const struct file *files_pick(struct user *u, const struct list *l)
{
	return l->n ? &l->f[(size_t)(pv_load_rng_unit(&u->rng) * (double)l->n)] : NULL;
}

const struct file *files_pick_min(struct user *u, uint64_t need)
{
	const struct list *l = &u->sfiles;
	size_t lo = 0, hi = l->n;

	if (!l->n || !u->by_size)
		return files_pick(u, l);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->f[u->by_size[mid]].size < need)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == l->n)
		return &l->f[u->by_size[l->n - 1]];
	return &l->f[u->by_size[lo + (size_t)(pv_load_rng_unit(&u->rng) * (double)(l->n - lo))]];
}

static int by_size(const void *a, const void *b, void *arg)
{
	const struct list *l = arg;
	const struct file *x = &l->f[*(const uint32_t *)a], *y = &l->f[*(const uint32_t *)b];

	return x->size < y->size ? -1 : x->size > y->size ? 1 : strcmp(x->path, y->path);
}

/* sfiles' places in order of size into u->by_size (none when out of memory: a read then picks
 * any file, as the built-in scenarios do) */
static void order_by_size(struct user *u)
{
	free(u->by_size);
	u->by_size = NULL;
	if (!u->sfiles.n || !(u->by_size = malloc(u->sfiles.n * sizeof(*u->by_size))))
		return;
	for (uint32_t i = 0; i < u->sfiles.n; i++)
		u->by_size[i] = i;
	qsort_r(u->by_size, u->sfiles.n, sizeof(*u->by_size), by_size, &u->sfiles);
}

/* ---- learning the tree: static/, volatile/, new/ ---- */

/* The folders of a part are listed down to LEARN_DEPTH below it, LEARN_FOLDERS at most in
 * all: enough for the filesets' nesting (homefolders: static/<6>/<4>/18 files). */
#define LEARN_DEPTH   4
#define LEARN_FOLDERS 4096
enum part { P_STATIC, P_VOLATILE, P_NEW };

static void learn_next(struct user *u, const struct pv_smb_done *d);

static void learned(struct user *u)
{
	/* static/ in order of size: a learned read picks a file that holds it (files_pick_min) */
	if (u->e->replay)
		order_by_size(u);
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

static void learn_listed(struct user *u, const struct pv_smb_done *d)
{
	uint64_t at = u->todo.f[u->i - 1].size;
	enum part part = (enum part)(at & 0xff);
	unsigned depth = (unsigned)(at >> 8);
	bool files = false;
	size_t first = u->sfiles.n + 1; /* its first file's place in sfiles, from 1 */

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
	if (files && files_add(&u->dirs, u->path, first) < 0) { /* a folder browse can show */
		user_fail(u, "out of memory");
		return;
	}
	client_close(u, false, learn_next);
}

static void learn_opened(struct user *u, const struct pv_smb_done *d)
{
	if (!client_opened(u, d, false))
		return;
	client_list(u, 2, 0, learn_listed);
}

/* The next folder to list, until none is left. */
static void learn_next(struct user *u, const struct pv_smb_done *d)
{
	if (d && client_refused(u, d, 0))
		return;
	if (u->i >= u->todo.n) {
		learned(u);
		return;
	}
	snprintf(u->path, sizeof(u->path), "%s", u->todo.f[u->i++].path);
	client_open(u, u->path, PV_SMB_READ, PV_SMB_OPEN, PV_SMB_DIR, learn_opened);
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

		if (x->part != PV_FILESET_PART_STATIC)
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
		if (strcmp(path, dir) != 0) { /* a folder browse can show, its first file */
			snprintf(dir, sizeof(dir), "%s", path);
			if (files_add(&u->dirs, dir, u->sfiles.n) < 0)
				return -1;
		}
	}
	return 0;
}

void learn_tree(struct user *u)
{
	const struct pv_fileset *fs = u->e->fs;
	char path[PATH_MAX_LOAD];

	/* what an earlier logon learnt may have changed since */
	files_clear(&u->dirs);
	files_clear(&u->sfiles);
	free(u->by_size);
	u->by_size = NULL;
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
