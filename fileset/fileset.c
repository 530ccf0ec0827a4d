/* fileset/fileset.c: fileset descriptions -> tree plans, sizes and content (docs/fileset.md).
 *
 * Everything random here comes from splitmix64 (Steele, Lea, Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014) applied to a counter, so each value depends
 * only on (seed, position): the same description gives the same tree on every machine and in
 * every run, and any byte of a file can be produced without the bytes before it. */
#include "fileset/fileset.h"

#include "playbooks/schema.h"
#include "playbooks/tree.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/hash.h"

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

static const char *const part_names[PV_FILESET_PART_COUNT] = {"static", "new", "volatile"};

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
	/* the file's name: messages are the playbook's (playbooks/schema.h) */
	struct pv_playbook_schema sc;
	struct pv_fileset *fs;
	struct part_desc parts[PV_FILESET_PART_COUNT];
	uint64_t ordinal; /* files so far, across parts */
};

/* A whole number from lo to hi, through the playbook's integer getter. */
static int whole(struct parser *p, const struct pv_playbook_node *v, const char *path,
		 unsigned long lo, unsigned long hi, unsigned long *out)
{
	long val;
	int r;

	if ((r = pv_playbook_schema_long_at(&p->sc, v, path, (long)lo, (long)hi, &val)) != PV_OK)
		return r;
	*out = (unsigned long)val;
	return PV_OK;
}

static int size_of(struct parser *p, const struct pv_playbook_node *v, const char *what,
		   uint64_t *out)
{
	const char *expect = "a size such as 4096, 10KiB or 1.5MiB (at most 4GiB)", *s;
	int r;

	if ((r = pv_playbook_schema_text_at(&p->sc, v, what, expect, &s)) != PV_OK)
		return r;
	if (pv_fileset_size(s, out) != 0)
		return pv_playbook_schema_fail(
			&p->sc, v, "'%s' is '%.64s', not a size; expected %s", what, s, expect);
	return PV_OK;
}

static int parse_bucket(struct parser *p, struct part_desc *d, const struct pv_playbook_node *b,
			const char *part)
{
	static const char *const keys[] = {"size", "weight", NULL};
	const struct pv_playbook_node *sz = pv_playbook_tree_get(b, "size"),
				      *w = pv_playbook_tree_get(b, "weight");
	struct bucket *k = &d->buckets[d->nbuckets];
	char what[64], item[80], sub[96];
	int r;

	snprintf(what, sizeof(what), "parts.%s.sizes", part);
	snprintf(item, sizeof(item), "%s.%zu", what, d->nbuckets); /* the item's index */
	if (b->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(
			&p->sc, b,
			"an item of '%s' is not a mapping; expected {size: 4KiB, weight: 10}"
			" or {size: [8KiB, 64KiB], weight: 10}",
			what);
	if ((r = pv_playbook_schema_keys(&p->sc, b, item, keys, "size and weight")) != PV_OK)
		return r;
	if (d->nbuckets >= MAX_BUCKETS)
		return pv_playbook_schema_fail(&p->sc, b, "'%s' has more than %d items", what,
					       MAX_BUCKETS);
	if (!sz)
		return pv_playbook_schema_fail(
			&p->sc, b,
			"an item of '%s' has no 'size'; expected {size: 4KiB, weight: 10}", what);
	if (sz->kind == PV_PLAYBOOK_NODE_SEQUENCE) {
		if (sz->n != 2)
			return pv_playbook_schema_fail(
				&p->sc, sz,
				"a size range in '%s' has %zu values; expected two: [MIN, MAX]",
				what, sz->n);
		snprintf(sub, sizeof(sub), "%s.size.0", item);
		if ((r = size_of(p, sz->items[0], sub, &k->min)) != PV_OK)
			return r;
		snprintf(sub, sizeof(sub), "%s.size.1", item);
		if ((r = size_of(p, sz->items[1], sub, &k->max)) != PV_OK)
			return r;
		if (k->min > k->max)
			return pv_playbook_schema_fail(
				&p->sc, sz,
				"the size range in '%s' runs from %s down to %s; expected "
				"[MIN, MAX] with MIN <= MAX",
				what, sz->items[0]->text, sz->items[1]->text);
	} else {
		snprintf(sub, sizeof(sub), "%s.size", item);
		if ((r = size_of(p, sz, sub, &k->min)) != PV_OK)
			return r;
		k->max = k->min;
	}
	k->weight = 1;
	snprintf(sub, sizeof(sub), "%s.weight", item);
	if (w && (r = whole(p, w, sub, 1, 1000000, &k->weight)) != PV_OK)
		return r;
	d->total_weight += k->weight;
	d->nbuckets++;
	return PV_OK;
}

static int parse_part(struct parser *p, enum pv_fileset_part part, const struct pv_playbook_node *m)
{
	static const char *const keys[] = {"folders", "files", "sizes", "extensions", NULL};
	struct part_desc *d = &p->parts[part];
	const char *pn = part_names[part];
	const struct pv_playbook_node *v;
	char what[64];
	int r;

	d->present = true;
	if (pv_playbook_tree_is_null(m))
		return PV_OK; /* "new:" alone: just the part's folder */
	if (m->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(
			&p->sc, m,
			"'parts.%s' is not a mapping; expected folders, files, sizes and "
			"extensions",
			pn);
	snprintf(what, sizeof(what), "parts.%s", pn);
	if ((r = pv_playbook_schema_keys(&p->sc, m, what, keys,
					 "folders, files, sizes or extensions")) != PV_OK)
		return r;
	if ((v = pv_playbook_tree_get(m, "folders")) && !pv_playbook_tree_is_null(v)) {
		if (v->kind != PV_PLAYBOOK_NODE_SEQUENCE)
			return pv_playbook_schema_fail(
				&p->sc, v,
				"'parts.%s.folders' is not a list; expected the number of "
				"folders at each level, e.g. [4, 3]",
				pn);
		if (v->n > PV_FILESET_LEVELS)
			return pv_playbook_schema_fail(
				&p->sc, v, "'parts.%s.folders' has %zu levels; at most %d", pn,
				v->n, PV_FILESET_LEVELS);
		for (size_t i = 0; i < v->n; i++) {
			unsigned long f;

			snprintf(what, sizeof(what), "parts.%s.folders.%zu", pn, i);
			if ((r = whole(p, v->items[i], what, 1, PV_FILESET_FANOUT, &f)) != PV_OK)
				return r;
			d->fanout[d->levels++] = (unsigned)f;
		}
	}
	if ((v = pv_playbook_tree_get(m, "files"))) {
		snprintf(what, sizeof(what), "parts.%s.files", pn);
		if ((r = whole(p, v, what, 0, PV_FILESET_ENTRIES, &d->files)) != PV_OK)
			return r;
	}
	if ((v = pv_playbook_tree_get(m, "sizes")) && !pv_playbook_tree_is_null(v)) {
		if (v->kind != PV_PLAYBOOK_NODE_SEQUENCE || v->n == 0)
			return pv_playbook_schema_fail(
				&p->sc, v,
				"'parts.%s.sizes' is not a list of sizes; expected e.g. "
				"[{size: 4KiB, weight: 60}, {size: [8KiB, 1MiB], weight: 40}]",
				pn);
		for (size_t i = 0; i < v->n; i++)
			if ((r = parse_bucket(p, d, v->items[i], pn)) != PV_OK)
				return r;
	}
	if (d->files > 0 && d->nbuckets == 0)
		return pv_playbook_schema_fail(
			&p->sc, m,
			"'parts.%s' has files but no 'sizes'; expected e.g. sizes: "
			"[{size: 4KiB, weight: 1}]",
			pn);
	if ((v = pv_playbook_tree_get(m, "extensions")) && !pv_playbook_tree_is_null(v)) {
		if (v->kind != PV_PLAYBOOK_NODE_SEQUENCE || v->n == 0 || v->n > MAX_EXTS)
			return pv_playbook_schema_fail(
				&p->sc, v,
				"'parts.%s.extensions' is not a list of 1 to %d extensions; "
				"expected e.g. [docx, xlsx, pdf]",
				pn, MAX_EXTS);
		for (size_t i = 0; i < v->n; i++) {
			const struct pv_playbook_node *e = v->items[i];
			const char *s;

			snprintf(what, sizeof(what), "parts.%s.extensions", pn);
			if ((r = pv_playbook_schema_text_at(
				     &p->sc, e, what, "an extension such as docx", &s)) != PV_OK)
				return r;
			if (strlen(s) > 16 || s[strspn(s, "abcdefghijklmnopqrstuvwxyz"
							  "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
							  "0123456789_-")])
				return pv_playbook_schema_fail(
					&p->sc, e,
					"extension '%.64s' in '%s' is not 1 to 16 letters, "
					"digits, '_' or '-'",
					s, what);
			if (!(d->exts[d->nexts++] = strdup(s)))
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
		return pv_error(PV_EBUG, "%s: the plan outgrew its bound of %d entries", p->sc.name,
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
static int bound(struct parser *p)
{
	unsigned long long total = 0;

	for (int part = 0; part < PV_FILESET_PART_COUNT; part++) {
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
			return pv_playbook_schema_fail(
				&p->sc, NULL,
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
	for (int part = 0; part < PV_FILESET_PART_COUNT; part++) {
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
	static const char *const contents[] = {"shared", "unique", NULL}; /* enum's order */
	struct parser p;
	struct pv_playbook_node *root = NULL;
	const struct pv_playbook_node *v, *parts, *top;
	unsigned long seed = 1;
	bool any = false;
	const char *s;
	int content, r;

	memset(&p, 0, sizeof(p));
	p.sc.name = name;
	p.sc.doc = "the fileset";
	if ((r = pv_playbook_tree_parse(name, text, len, &root)) != PV_OK)
		return r;
	if (!(p.fs = calloc(1, sizeof(*p.fs)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	top = root;
	/* a learned workload (provision learn -o): its fileset: section */
	if (root->kind == PV_PLAYBOOK_NODE_MAPPING && pv_playbook_tree_get(root, "kinds")) {
		if (!(top = pv_playbook_tree_get(root, "fileset"))) {
			r = pv_playbook_schema_fail(
				&p.sc, root,
				"this learned workload has no fileset: (the capture's answers "
				"showed no file in a user's home); name a fileset such as "
				"playbooks/filesets/small.yaml in server.fileset");
			goto out;
		}
		p.sc.doc = "the learned workload's fileset";
	}
	if (top->kind != PV_PLAYBOOK_NODE_MAPPING) {
		r = pv_playbook_schema_fail(
			&p.sc, top,
			"a fileset is a mapping; expected name, seed, content and parts");
		goto out;
	}
	if ((r = pv_playbook_schema_keys(&p.sc, top, "", top_keys, NULL)) != PV_OK)
		goto out;
	if ((v = pv_playbook_tree_get(top, "name"))) {
		if ((r = pv_playbook_schema_text_at(&p.sc, v, "name", "a short name", &s)) != PV_OK)
			goto out;
		p.fs->name = strdup(s);
	} else {
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

		p.fs->name = strndup(base, strcspn(base, "."));
	}
	if (!p.fs->name) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((v = pv_playbook_tree_get(top, "seed")) &&
	    (r = whole(&p, v, "seed", 0, 4294967295UL, &seed)) != PV_OK)
		goto out;
	p.fs->seed = mix((uint64_t)seed);
	if ((v = pv_playbook_tree_get(top, "content"))) {
		if ((r = pv_playbook_schema_enum_at(
			     &p.sc, v, "content", contents,
			     "shared (the same bytes for every user) or unique "
			     "(different bytes per user)",
			     &content)) != PV_OK)
			goto out;
		p.fs->content = (enum pv_fileset_content)content;
	}
	parts = pv_playbook_tree_get(top, "parts");
	if (!parts || parts->kind != PV_PLAYBOOK_NODE_MAPPING) {
		r = pv_playbook_schema_fail(&p.sc, parts ? parts : top,
					    "%s; expected a mapping with static, new and/or "
					    "volatile",
					    parts ? "'parts' is not a mapping" : "no 'parts'");
		goto out;
	}
	if ((r = pv_playbook_schema_keys(&p.sc, parts, "parts", part_keys,
					 "static, new or volatile")) != PV_OK)
		goto out;
	for (int i = 0; i < PV_FILESET_PART_COUNT; i++) {
		if (!(v = pv_playbook_tree_get(parts, part_names[i])))
			continue;
		any = true;
		if ((r = parse_part(&p, (enum pv_fileset_part)i, v)) != PV_OK)
			goto out;
	}
	if (!any) {
		r = pv_playbook_schema_fail(
			&p.sc, parts, "'parts' is empty; expected static, new and/or volatile");
		goto out;
	}
	if ((r = build(&p)) != PV_OK)
		goto out;
	*out = p.fs;
	p.fs = NULL;
out:
	for (int i = 0; i < PV_FILESET_PART_COUNT; i++)
		for (size_t j = 0; j < p.parts[i].nexts; j++)
			free(p.parts[i].exts[j]);
	pv_fileset_free(p.fs);
	pv_playbook_tree_free(root);
	return r;
}

int pv_fileset_read(const char *path, struct pv_fileset **out)
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
	if (fs->content == PV_FILESET_CONTENT_SHARED || !user)
		return e->seed;
	return mix(e->seed ^ pv_hash_fnv64(PV_HASH_FNV64_INIT, user, strlen(user)));
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
