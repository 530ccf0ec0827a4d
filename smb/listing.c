/* smb/listing.c: what a tree on the server holds (paths sorted, for lookups), and what to do
 * with each item of a fileset given that: the same for both SMB clients of the module. */
#include "smb/internal.h"

#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int listing_add(struct listing *l, const char *path, bool dir, uint64_t size)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct found *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return pv_error(PV_EIO, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n].path = strdup(path)))
		return pv_error(PV_EIO, "out of memory");
	l->v[l->n].dir = dir;
	l->v[l->n].size = size;
	l->n++;
	return PV_OK;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path);
}

const struct found *listing_lookup(const struct listing *l, const char *path)
{
	struct found key = {(char *)path, false, 0};

	return l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), by_path) : NULL;
}

static void listing_sort(struct listing *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_path);
}

int listing_walk(struct listing *l, int (*list_dir)(void *ctx, const char *rel, struct listing *l),
		 void *ctx)
{
	int r = list_dir(ctx, "", l);

	/* l grows while it is walked: each folder found is listed in turn, breadth first */
	for (size_t i = 0; i < l->n && r == PV_OK; i++) {
		char *rel;

		if (!l->v[i].dir)
			continue;
		if (!(rel = strdup(l->v[i].path))) /* list_dir may move l->v */
			return pv_error(PV_EIO, "out of memory");
		r = list_dir(ctx, rel, l);
		free(rel);
	}
	if (r == PV_OK)
		listing_sort(l);
	return r;
}

enum plan listing_plan(const struct listing *l, const struct pv_smb_item *it, const char *server,
		       const char *share, const char *base)
{
	const struct found *f = listing_lookup(l, it->path);

	if (f && f->dir != it->dir) {
		pv_error(
			PV_EREMOTE,
			"//%s/%s/%s/%s is a %s where the fileset has a %s; remove it and run again",
			server, share, base, it->path, f->dir ? "folder" : "file",
			it->dir ? "folder" : "file");
		return PLAN_MISMATCH;
	}
	if (!f)
		return PLAN_MAKE;
	if (it->dir || f->size == it->size)
		return PLAN_KEEP;
	return PLAN_FIX;
}
