/* fileset/fileset.c: fileset descriptions -> tree plans, sizes and content (docs/fileset.md).
 *
 * Everything random here comes from splitmix64 (Steele, Lea, Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014) applied to a counter, so each value depends
 * only on (seed, position): the same description gives the same tree on every machine and in
 * every run, and any byte of a file can be produced without the bytes before it. */
#include "fileset/fileset.h"

#include "playbooks/tree.h"
#include "util/buf.h"
#include "util/err.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GOLDEN	       0x9E3779B97F4A7C15ULL
#define MAX_BUCKETS    64
#define MAX_EXTS       64
#define FILE_MAX_BYTES (1 << 20)

static const char *const part_names[PV_PART_COUNT] = {"static", "new", "volatile"};

static uint64_t mix(uint64_t z)
{
	z += GOLDEN;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* ---- sizes ---- */

int pv_fileset_size(const char *text, uint64_t *out)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {{"", 1},
		     {"B", 1},
		     {"KiB", 1024.0},
		     {"MiB", 1048576.0},
		     {"GiB", 1073741824.0},
		     {"KB", 1e3},
		     {"MB", 1e6},
		     {"GB", 1e9},
		     {"K", 1024.0},
		     {"M", 1048576.0},
		     {"G", 1073741824.0}};
	const char *p = text;
	char *end;
	double v;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtod(p, &end);
	if (errno || end == p)
		return -1;
	while (isspace((unsigned char)*end))
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		v *= units[i].mult;
		if (v > (double)PV_FILESET_FILE_MAX || v != v)
			return -1;
		if (units[i].mult == 1 && v != (double)(uint64_t)v)
			return -1; /* a fraction of a byte */
		*out = (uint64_t)(v + 0.5);
		return 0;
	}
	return -1;
}

/* ---- the description ---- */

struct bucket {
	uint64_t min, max;
	unsigned long weight;
};

struct part_desc {
	bool present;
	unsigned levels;
	unsigned fanout[PV_FILESET_LEVELS];
	unsigned long files; /* per leaf folder */
	struct bucket buckets[MAX_BUCKETS];
	size_t nbuckets;
	unsigned long total_weight;
	char *exts[MAX_EXTS];
	size_t nexts;
};

struct parser {
	const char *name;
	struct pv_fileset *fs;
	struct part_desc parts[PV_PART_COUNT];
	uint64_t ordinal; /* files so far, across parts */
};

static int bad(const struct parser *p, const struct pv_node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(const struct parser *p, const struct pv_node *at, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (at && at->line)
		return pv_error(PV_ECONFIG, "%s:%d:%d: %s", p->name, at->line, at->col, msg);
	return pv_error(PV_ECONFIG, "%s: %s", p->name, msg);
}

/* Every key of map is one of allowed (NULL-terminated). */
static int keys_only(const struct parser *p, const struct pv_node *map, const char *where,
		     const char *const *allowed, const char *expect)
{
	for (size_t i = 0; i < map->n; i++) {
		bool ok = false;

		for (size_t j = 0; allowed[j] && !ok; j++)
			ok = strcmp(map->keys[i]->text, allowed[j]) == 0;
		if (!ok)
			return bad(p, map->keys[i], "unknown key '%s' in %s; expected %s",
				   map->keys[i]->text, where, expect);
		for (size_t j = 0; j < i; j++)
			if (strcmp(map->keys[i]->text, map->keys[j]->text) == 0)
				return bad(p, map->keys[i], "key '%s' given twice in %s",
					   map->keys[i]->text, where);
	}
	return PV_OK;
}

static int scalar(const struct parser *p, const struct pv_node *v, const char *what,
		  const char *expect)
{
	if (v->kind != PV_NODE_SCALAR || pv_tree_is_null(v))
		return bad(p, v, "'%s' %s; expected %s", what,
			   v->kind == PV_NODE_SCALAR ? "has no value" : "is not a single value",
			   expect);
	return PV_OK;
}

static int number(const struct parser *p, const struct pv_node *v, const char *what,
		  unsigned long lo, unsigned long hi, unsigned long *out)
{
	char expect[96], *end;
	unsigned long val;
	int r;

	snprintf(expect, sizeof(expect), "a whole number from %lu to %lu", lo, hi);
	if ((r = scalar(p, v, what, expect)) != PV_OK)
		return r;
	errno = 0;
	val = strtoul(v->text, &end, 10);
	if (!isdigit((unsigned char)v->text[0]) || *end)
		return bad(p, v, "'%s' is '%.64s', not a number; expected %s", what, v->text,
			   expect);
	if (errno == ERANGE || val < lo || val > hi)
		return bad(p, v, "'%s' is %.64s, out of range; expected %s", what, v->text, expect);
	*out = val;
	return PV_OK;
}

static int size_of(const struct parser *p, const struct pv_node *v, const char *what, uint64_t *out)
{
	const char *expect = "a size such as 4096, 10KiB or 1.5MiB (at most 4GiB)";
	int r;

	if ((r = scalar(p, v, what, expect)) != PV_OK)
		return r;
	if (pv_fileset_size(v->text, out) != 0)
		return bad(p, v, "'%s' is '%.64s', not a size; expected %s", what, v->text, expect);
	return PV_OK;
}

static int parse_bucket(struct parser *p, struct part_desc *d, const struct pv_node *b,
			const char *part)
{
	static const char *const keys[] = {"size", "weight", NULL};
	const struct pv_node *sz = pv_tree_get(b, "size"), *w = pv_tree_get(b, "weight");
	struct bucket *k = &d->buckets[d->nbuckets];
	char what[64];
	int r;

	snprintf(what, sizeof(what), "parts.%s.sizes", part);
	if (b->kind != PV_NODE_MAPPING)
		return bad(p, b,
			   "an item of '%s' is not a mapping; expected {size: 4KiB, weight: 10}"
			   " or {size: [8KiB, 64KiB], weight: 10}",
			   what);
	if ((r = keys_only(p, b, what, keys, "size and weight")) != PV_OK)
		return r;
	if (d->nbuckets >= MAX_BUCKETS)
		return bad(p, b, "'%s' has more than %d items", what, MAX_BUCKETS);
	if (!sz)
		return bad(p, b, "an item of '%s' has no 'size'; expected {size: 4KiB, weight: 10}",
			   what);
	if (sz->kind == PV_NODE_SEQUENCE) {
		if (sz->n != 2)
			return bad(p, sz,
				   "a size range in '%s' has %zu values; expected two: [MIN, MAX]",
				   what, sz->n);
		if ((r = size_of(p, sz->items[0], what, &k->min)) != PV_OK ||
		    (r = size_of(p, sz->items[1], what, &k->max)) != PV_OK)
			return r;
		if (k->min > k->max)
			return bad(p, sz,
				   "the size range in '%s' runs from %s down to %s; expected "
				   "[MIN, MAX] with MIN <= MAX",
				   what, sz->items[0]->text, sz->items[1]->text);
	} else {
		if ((r = size_of(p, sz, what, &k->min)) != PV_OK)
			return r;
		k->max = k->min;
	}
	k->weight = 1;
	if (w && (r = number(p, w, "weight", 1, 1000000, &k->weight)) != PV_OK)
		return r;
	d->total_weight += k->weight;
	d->nbuckets++;
	return PV_OK;
}

static int parse_part(struct parser *p, enum pv_fileset_part part, const struct pv_node *m)
{
	static const char *const keys[] = {"folders", "files", "sizes", "extensions", NULL};
	struct part_desc *d = &p->parts[part];
	const char *pn = part_names[part];
	const struct pv_node *v;
	char what[64];
	int r;

	d->present = true;
	if (pv_tree_is_null(m))
		return PV_OK; /* "new:" alone: just the part's folder */
	if (m->kind != PV_NODE_MAPPING)
		return bad(p, m,
			   "'parts.%s' is not a mapping; expected folders, files, sizes and "
			   "extensions",
			   pn);
	if ((r = keys_only(p, m, pn, keys, "folders, files, sizes or extensions")) != PV_OK)
		return r;
	if ((v = pv_tree_get(m, "folders")) && !pv_tree_is_null(v)) {
		if (v->kind != PV_NODE_SEQUENCE)
			return bad(p, v,
				   "'parts.%s.folders' is not a list; expected the number of "
				   "folders at each level, e.g. [4, 3]",
				   pn);
		if (v->n > PV_FILESET_LEVELS)
			return bad(p, v, "'parts.%s.folders' has %zu levels; at most %d", pn, v->n,
				   PV_FILESET_LEVELS);
		for (size_t i = 0; i < v->n; i++) {
			unsigned long f;

			snprintf(what, sizeof(what), "parts.%s.folders", pn);
			if ((r = number(p, v->items[i], what, 1, 1000, &f)) != PV_OK)
				return r;
			d->fanout[d->levels++] = (unsigned)f;
		}
	}
	if ((v = pv_tree_get(m, "files"))) {
		snprintf(what, sizeof(what), "parts.%s.files", pn);
		if ((r = number(p, v, what, 0, PV_FILESET_ENTRIES, &d->files)) != PV_OK)
			return r;
	}
	if ((v = pv_tree_get(m, "sizes")) && !pv_tree_is_null(v)) {
		if (v->kind != PV_NODE_SEQUENCE || v->n == 0)
			return bad(p, v,
				   "'parts.%s.sizes' is not a list of sizes; expected e.g. "
				   "[{size: 4KiB, weight: 60}, {size: [8KiB, 1MiB], weight: 40}]",
				   pn);
		for (size_t i = 0; i < v->n; i++)
			if ((r = parse_bucket(p, d, v->items[i], pn)) != PV_OK)
				return r;
	}
	if (d->files > 0 && d->nbuckets == 0)
		return bad(p, m,
			   "'parts.%s' has files but no 'sizes'; expected e.g. sizes: "
			   "[{size: 4KiB, weight: 1}]",
			   pn);
	if ((v = pv_tree_get(m, "extensions")) && !pv_tree_is_null(v)) {
		if (v->kind != PV_NODE_SEQUENCE || v->n == 0 || v->n > MAX_EXTS)
			return bad(p, v,
				   "'parts.%s.extensions' is not a list of 1 to %d extensions; "
				   "expected e.g. [docx, xlsx, pdf]",
				   pn, MAX_EXTS);
		for (size_t i = 0; i < v->n; i++) {
			const struct pv_node *e = v->items[i];

			snprintf(what, sizeof(what), "parts.%s.extensions", pn);
			if ((r = scalar(p, e, what, "an extension such as docx")) != PV_OK)
				return r;
			if (strlen(e->text) > 16 ||
			    e->text[strspn(e->text, "abcdefghijklmnopqrstuvwxyz"
						    "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
						    "0123456789_-")])
				return bad(p, e,
					   "extension '%.64s' in '%s' is not 1 to 16 letters, "
					   "digits, '_' or '-'",
					   e->text, what);
			if (!(d->exts[d->nexts++] = strdup(e->text)))
				return pv_error(PV_EIO, "out of memory");
		}
	}
	return PV_OK;
}

/* ---- the plan ---- */

static int push(struct parser *p, size_t *cap, const char *path, bool dir,
		enum pv_fileset_part part)
{
	struct pv_fileset *fs = p->fs;
	struct pv_fileset_entry *e;

	/* bound() counted every entry before anything was built: never reached */
	if (fs->n >= PV_FILESET_ENTRIES)
		return pv_error(PV_EBUG, "%s: the plan outgrew its bound of %d entries", p->name,
				PV_FILESET_ENTRIES);
	if (fs->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct pv_fileset_entry *ne = realloc(fs->entries, nc * sizeof(*ne));

		if (!ne)
			return pv_error(PV_EIO, "out of memory");
		fs->entries = ne;
		*cap = nc;
	}
	e = &fs->entries[fs->n];
	memset(e, 0, sizeof(*e));
	if (!(e->path = strdup(path)))
		return pv_error(PV_EIO, "out of memory");
	e->dir = dir;
	e->part = part;
	fs->n++;
	if (dir)
		fs->ndirs++;
	return PV_OK;
}

static int add_files(struct parser *p, size_t *cap, const struct part_desc *d,
		     enum pv_fileset_part part, const char *dir)
{
	struct pv_fileset *fs = p->fs;
	char path[512];
	int r;

	for (unsigned long i = 1; i <= d->files; i++) {
		uint64_t g = p->ordinal++, h = mix(fs->seed ^ mix(g)), pick;
		const struct bucket *b = &d->buckets[0];
		struct pv_fileset_entry *e;
		const char *ext = d->nexts ? d->exts[mix(h ^ 0x5EED) % d->nexts] : "dat";

		pick = h % d->total_weight;
		for (size_t k = 0; k < d->nbuckets; k++) {
			if (pick < d->buckets[k].weight) {
				b = &d->buckets[k];
				break;
			}
			pick -= d->buckets[k].weight;
		}
		snprintf(path, sizeof(path), "%s/f%04lu.%s", dir, i, ext);
		if ((r = push(p, cap, path, false, part)) != PV_OK)
			return r;
		e = &fs->entries[fs->n - 1];
		e->size = b->min + (b->max > b->min ? mix(h) % (b->max - b->min + 1) : 0);
		e->seed = mix(h ^ GOLDEN);
		fs->nfiles++;
		fs->bytes += e->size;
		if (e->size > fs->max_size)
			fs->max_size = e->size;
	}
	return PV_OK;
}

/* The folder at dir and, below it, the levels from level on; files in the last level. */
static int add_tree(struct parser *p, size_t *cap, const struct part_desc *d,
		    enum pv_fileset_part part, const char *dir, unsigned level)
{
	char sub[512];
	int r;

	if ((r = push(p, cap, dir, true, part)) != PV_OK)
		return r;
	if (level == d->levels)
		return add_files(p, cap, d, part, dir);
	for (unsigned i = 1; i <= d->fanout[level]; i++) {
		snprintf(sub, sizeof(sub), "%s/d%02u", dir, i);
		if ((r = add_tree(p, cap, d, part, sub, level + 1)) != PV_OK)
			return r;
	}
	return PV_OK;
}

/* Count the plan's entries exactly (each part's folder, the folders of each level, the files
 * of the leaf folders) before anything is built, so that a description of a few bytes is
 * refused without first costing up to a million allocations. The count stops as soon as it
 * passes the limit, so nothing can wrap: the folders of a level are at most the limit before
 * they are multiplied by a fan-out of at most 1000, and the leaf folders at most the limit
 * when multiplied by files (at most the limit too). A product over every level taken first
 * does wrap: 8 levels of 256 folders are 2^64 leaf folders, 0 in 64 bits. */
static int bound(const struct parser *p)
{
	unsigned long long total = 0;

	for (int part = 0; part < PV_PART_COUNT; part++) {
		const struct part_desc *d = &p->parts[part];
		unsigned long long folders = 1; /* at the level being counted */

		if (!d->present)
			continue;
		total += 1;
		for (unsigned l = 0; l < d->levels && total <= PV_FILESET_ENTRIES; l++) {
			folders *= d->fanout[l];
			total += folders;
		}
		if (total <= PV_FILESET_ENTRIES)
			total += folders * d->files;
		if (total > PV_FILESET_ENTRIES)
			return bad(p, NULL,
				   "part '%s' brings the fileset to more than %d entries (folders "
				   "and files) per user; lower folders or files",
				   part_names[part], PV_FILESET_ENTRIES);
	}
	return PV_OK;
}

static int build(struct parser *p)
{
	size_t cap = 0;
	int r;

	if ((r = bound(p)) != PV_OK)
		return r;
	for (int part = 0; part < PV_PART_COUNT; part++) {
		const struct part_desc *d = &p->parts[part];

		if (!d->present)
			continue;
		if ((r = add_tree(p, &cap, d, (enum pv_fileset_part)part, part_names[part], 0)))
			return r;
	}
	return PV_OK;
}

int pv_fileset_parse(const char *name, const char *text, size_t len, struct pv_fileset **out)
{
	static const char *const top_keys[] = {"name",	  "description", "seed",
					       "content", "parts",	 NULL};
	static const char *const part_keys[] = {"static", "new", "volatile", NULL};
	struct parser p;
	struct pv_node *root = NULL;
	const struct pv_node *v, *parts;
	unsigned long seed = 1;
	bool any = false;
	int r;

	memset(&p, 0, sizeof(p));
	p.name = name;
	if ((r = pv_tree_parse(name, text, len, &root)) != PV_OK)
		return r;
	if (!(p.fs = calloc(1, sizeof(*p.fs)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if (root->kind != PV_NODE_MAPPING) {
		r = bad(&p, root, "a fileset is a mapping; expected name, seed, content and parts");
		goto out;
	}
	if ((r = keys_only(&p, root, "the fileset", top_keys,
			   "name, description, seed, content or parts")) != PV_OK)
		goto out;
	if ((v = pv_tree_get(root, "name"))) {
		if ((r = scalar(&p, v, "name", "a short name")) != PV_OK)
			goto out;
		p.fs->name = strdup(v->text);
	} else {
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

		p.fs->name = strndup(base, strcspn(base, "."));
	}
	if (!p.fs->name) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((v = pv_tree_get(root, "seed")) &&
	    (r = number(&p, v, "seed", 0, 4294967295UL, &seed)) != PV_OK)
		goto out;
	p.fs->seed = mix((uint64_t)seed);
	if ((v = pv_tree_get(root, "content"))) {
		if ((r = scalar(&p, v, "content", "shared or unique")) != PV_OK)
			goto out;
		if (strcmp(v->text, "shared") == 0)
			p.fs->content = PV_CONTENT_SHARED;
		else if (strcmp(v->text, "unique") == 0)
			p.fs->content = PV_CONTENT_UNIQUE;
		else {
			r = bad(&p, v,
				"'content' is '%.64s'; expected shared (the same bytes for every "
				"user) or unique (different bytes per user)",
				v->text);
			goto out;
		}
	}
	parts = pv_tree_get(root, "parts");
	if (!parts || parts->kind != PV_NODE_MAPPING) {
		r = bad(&p, parts ? parts : root,
			"%s; expected a mapping with static, new and/or "
			"volatile",
			parts ? "'parts' is not a mapping" : "no 'parts'");
		goto out;
	}
	if ((r = keys_only(&p, parts, "parts", part_keys, "static, new or volatile")) != PV_OK)
		goto out;
	for (int i = 0; i < PV_PART_COUNT; i++) {
		if (!(v = pv_tree_get(parts, part_names[i])))
			continue;
		any = true;
		if ((r = parse_part(&p, (enum pv_fileset_part)i, v)) != PV_OK)
			goto out;
	}
	if (!any) {
		r = bad(&p, parts, "'parts' is empty; expected static, new and/or volatile");
		goto out;
	}
	if ((r = build(&p)) != PV_OK)
		goto out;
	*out = p.fs;
	p.fs = NULL;
out:
	for (int i = 0; i < PV_PART_COUNT; i++)
		for (size_t j = 0; j < p.parts[i].nexts; j++)
			free(p.parts[i].exts[j]);
	pv_fileset_free(p.fs);
	pv_tree_free(root);
	return r;
}

int pv_fileset_load(const char *path, struct pv_fileset **out)
{
	struct pv_buf b = PV_BUF_INIT;
	char chunk[8192];
	size_t n;
	FILE *f = fopen(path, "rb");
	int r;

	if (!f)
		return pv_error(PV_EIO, "cannot read fileset '%s': %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (b.len + n > FILE_MAX_BYTES) {
			fclose(f);
			pv_buf_release(&b, 0);
			return pv_error(PV_ECONFIG, "fileset '%s' is larger than 1 MiB", path);
		}
		if (pv_buf_add(&b, chunk, n) < 0) {
			fclose(f);
			pv_buf_release(&b, 0);
			return pv_error(PV_EIO, "out of memory");
		}
	}
	if (ferror(f))
		r = pv_error(PV_EIO, "cannot read fileset '%s': %s", path, strerror(errno));
	else
		r = pv_fileset_parse(path, b.data ? b.data : "", b.len, out);
	fclose(f);
	pv_buf_release(&b, 0);
	return r;
}

void pv_fileset_free(struct pv_fileset *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		free(fs->entries[i].path);
	free(fs->entries);
	free(fs->name);
	free(fs);
}

/* ---- content ---- */

uint64_t pv_fileset_seed(const struct pv_fileset *fs, const struct pv_fileset_entry *e,
			 const char *user)
{
	uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a 64 */

	if (fs->content == PV_CONTENT_SHARED || !user)
		return e->seed;
	for (const unsigned char *c = (const unsigned char *)user; *c; c++)
		h = (h ^ *c) * 0x100000001B3ULL;
	return mix(e->seed ^ h);
}

void pv_fileset_fill(uint64_t seed, uint64_t offset, void *buf, size_t len)
{
	unsigned char *out = buf;
	uint64_t w = offset / 8;
	size_t skip = (size_t)(offset % 8);

	while (len > 0) {
		uint64_t v = mix(seed + w * GOLDEN);
		unsigned char word[8];
		size_t n = 8 - skip < len ? 8 - skip : len;

		/* little-endian byte order whatever the host's, so files match everywhere */
		for (int i = 0; i < 8; i++)
			word[i] = (unsigned char)(v >> (8 * i));
		memcpy(out, word + skip, n);
		out += n;
		len -= n;
		skip = 0;
		w++;
	}
}
