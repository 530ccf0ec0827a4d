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

int listing_add(struct listing *l, const char *path, bool dir, uint64_t size, uint64_t mtime)
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
	l->v[l->n].used = false;
	l->v[l->n].size = size;
	l->v[l->n].mtime = mtime;
	l->n++;
	return PV_OK;
}

int listing_entry(struct listing *l, const char *where, const char *base, const char *rel,
		  const char *name, bool dir, uint64_t size, uint64_t mtime)
{
	size_t rl = strlen(rel), nl = strlen(name);
	size_t len = rl + (rl ? 1 : 0) + nl,
	       full = strlen(base) + 1 + len; /* as name_of makes it */
	char *path;
	int r;

	if (++l->seen > LIST_MAX)
		return pv_error(
			PV_EREMOTE,
			"SMB listing %s: more than %u entries; is the server listing the same "
			"folder again and again?",
			where, LIST_MAX);
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return PV_OK;
	/* a separator in a name would make one entry look like a path of several (MS-FSCC
	 * 2.1.5: a name component holds none) */
	if (!*name || strpbrk(name, "/\\"))
		return pv_error(PV_EREMOTE,
				"SMB listing %s%s%s: the server listed a bad name '%.200s'", where,
				*rel ? "/" : "", rel, name);
	if (!(path = malloc(len + 1)))
		return pv_error(PV_EIO, "out of memory");
	sprintf(path, "%s%s%s", rel, rl ? "/" : "", name);
	if (full > PATH_LIMIT) /* the message has room for 1 KiB: the middle of a long path goes */
		r = pv_error(
			PV_EREMOTE,
			"SMB listing %s: the path '%.*s%s%s' below it is %zu bytes with the base, "
			"more than %d; refused rather than cut",
			where, len > 600 ? 300 : (int)len, path, len > 600 ? "..." : "",
			len > 600 ? path + len - 300 : "", full, PATH_LIMIT);
	else
		r = listing_add(l, path, dir, size, mtime);
	free(path);
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path);
}

struct found *listing_lookup(const struct listing *l, const char *path)
{
	struct found key = {.path = (char *)path};

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

enum plan listing_plan(const struct listing *l, const struct pv_smb_item *it, unsigned fft,
		       const char *server, const char *share, const char *base)
{
	struct found *f = listing_lookup(l, it->path);
	uint64_t d;

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
	f->used = true;
	if (it->dir)
		return PLAN_KEEP;
	if (f->size != it->size)
		return PLAN_FIX;
	if (!it->mtime)
		return PLAN_KEEP;
	d = f->mtime > it->mtime ? f->mtime - it->mtime : it->mtime - f->mtime;
	return d <= (uint64_t)fft * 10000000u ? PLAN_KEEP : PLAN_FIX;
}
