/* tests/unit/check_fileset.c: fileset descriptions, their plans, sizes and content, the bound
 * checked before a plan is built, and golden values of the generator's output (a re-run decides
 * what to rewrite by size, so any change to the plan or the bytes would rewrite every tree).
 * Run from the repository root (the shipped playbooks/filesets/ files are loaded). */
#include "fileset/fileset.h"
#include "util/err.h"

#include <check.h>
#include <nettle/sha2.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ck_assert_msg_has(s)                                                                       \
	ck_assert_msg(strstr(pv_errmsg(), (s)), "message '%s' lacks '%s'", pv_errmsg(), (s))

static struct pv_fileset *parse(const char *text)
{
	struct pv_fileset *fs = NULL;

	ck_assert_msg(pv_fileset_parse("t.yaml", text, strlen(text), &fs) == 0, "%s", pv_errmsg());
	return fs;
}

static void refused(const char *text, const char *want)
{
	struct pv_fileset *fs = NULL;

	ck_assert_int_eq(pv_fileset_parse("t.yaml", text, strlen(text), &fs), PV_ECONFIG);
	ck_assert_ptr_null(fs);
	ck_assert_msg_has(want);
}

static const char basic[] = "name: basic\n"
			    "seed: 7\n"
			    "parts:\n"
			    "  static:\n"
			    "    folders: [2, 3]\n"
			    "    files: 4\n"
			    "    sizes:\n"
			    "      - {size: 1KiB, weight: 3}\n"
			    "      - {size: [10, 20]}\n"
			    "  new:\n"
			    "  volatile: {files: 2, sizes: [{size: 0}], extensions: [tmp]}\n";

START_TEST(plan_shape)
{
	struct pv_fileset *fs = parse(basic);
	size_t files = 0, dirs = 0;
	uint64_t bytes = 0;

	ck_assert_str_eq(fs->name, "basic");
	ck_assert_int_eq(fs->content, PV_FILESET_CONTENT_SHARED);
	/* static: 1 + 2 + 6 folders, 6 * 4 files; new: 1 folder; volatile: 1 folder, 2 files */
	ck_assert_uint_eq(fs->ndirs, 11);
	ck_assert_uint_eq(fs->nfiles, 26);
	ck_assert_uint_eq(fs->n, 37);
	ck_assert_str_eq(fs->entries[0].path, "static");
	ck_assert(fs->entries[0].dir);
	ck_assert_str_eq(fs->entries[1].path, "static/d01");
	ck_assert_str_eq(fs->entries[2].path, "static/d01/d01");
	ck_assert_str_eq(fs->entries[3].path, "static/d01/d01/f0001.dat");
	ck_assert(!fs->entries[3].dir);
	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *e = &fs->entries[i];

		if (e->dir) {
			dirs++;
			continue;
		}
		files++;
		bytes += e->size;
		/* a folder comes before what it holds */
		char parent[256];
		snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(e->path, '/') - e->path),
			 e->path);
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = fs->entries[j].dir && strcmp(fs->entries[j].path, parent) == 0;
		ck_assert_msg(seen, "%s comes before its folder", e->path);
		if (e->part == PV_FILESET_PART_STATIC)
			ck_assert_msg(e->size == 1024 || (e->size >= 10 && e->size <= 20),
				      "%s: %llu", e->path, (unsigned long long)e->size);
		else
			ck_assert_uint_eq(e->size, 0);
	}
	ck_assert_uint_eq(files, fs->nfiles);
	ck_assert_uint_eq(dirs, fs->ndirs);
	ck_assert_uint_eq(bytes, fs->bytes);
	ck_assert_str_eq(fs->entries[fs->n - 1].path, "volatile/f0002.tmp");
	ck_assert_str_eq(fs->entries[fs->n - 4].path, "new");
	pv_fileset_free(fs);
}
END_TEST

START_TEST(deterministic)
{
	struct pv_fileset *a = parse(basic), *b = parse(basic), *c;
	char *other = strdup(basic);
	bool differs = false;

	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		ck_assert_str_eq(a->entries[i].path, b->entries[i].path);
		ck_assert_uint_eq(a->entries[i].size, b->entries[i].size);
		ck_assert_uint_eq(a->entries[i].seed, b->entries[i].seed);
	}
	/* another seed: same shape, other sizes */
	memcpy(strstr(other, "seed: 7"), "seed: 8", 7);
	c = parse(other);
	ck_assert_uint_eq(c->n, a->n);
	for (size_t i = 0; i < a->n; i++)
		differs |= a->entries[i].size != c->entries[i].size;
	ck_assert(differs);
	pv_fileset_free(a);
	pv_fileset_free(b);
	pv_fileset_free(c);
	free(other);
}
END_TEST

START_TEST(content_modes)
{
	struct pv_fileset *s = parse(basic);
	char *u_text = malloc(sizeof(basic) + 32);
	struct pv_fileset *u;
	const struct pv_fileset_entry *e = &s->entries[3];

	snprintf(u_text, sizeof(basic) + 32, "content: unique\n%s", basic);
	u = parse(u_text);
	ck_assert_int_eq(u->content, PV_FILESET_CONTENT_UNIQUE);
	ck_assert_uint_eq(pv_fileset_seed(s, e, "cli1-u1"), pv_fileset_seed(s, e, "cli2-u9"));
	ck_assert_uint_eq(pv_fileset_seed(s, e, "cli1-u1"), e->seed);
	ck_assert_uint_ne(pv_fileset_seed(u, e, "cli1-u1"), pv_fileset_seed(u, e, "cli2-u9"));
	ck_assert_uint_eq(pv_fileset_seed(u, e, "cli1-u1"), pv_fileset_seed(u, e, "cli1-u1"));
	pv_fileset_free(s);
	pv_fileset_free(u);
	free(u_text);
}
END_TEST

START_TEST(fill_any_chunking)
{
	unsigned char whole[1000], part[1000];

	pv_fileset_fill(42, 0, whole, sizeof(whole));
	/* pieces of odd sizes at odd offsets give the same bytes */
	for (size_t off = 0; off < sizeof(part);) {
		size_t n = (off * 7 + 3) % 61 + 1;

		if (n > sizeof(part) - off)
			n = sizeof(part) - off;
		pv_fileset_fill(42, off, part + off, n);
		off += n;
	}
	ck_assert_mem_eq(whole, part, sizeof(whole));
	pv_fileset_fill(43, 0, part, sizeof(part));
	ck_assert(memcmp(whole, part, sizeof(whole)) != 0);
	/* fixed bytes: content is stable across hosts and versions */
	pv_fileset_fill(1, 0, part, 8);
	pv_fileset_fill(1, 3, part + 100, 2);
	ck_assert_mem_eq(part + 3, part + 100, 2);
}
END_TEST

START_TEST(sizes)
{
	uint64_t v;

	ck_assert_int_eq(pv_fileset_size("512", &v), 0);
	ck_assert_uint_eq(v, 512);
	ck_assert_int_eq(pv_fileset_size("10KiB", &v), 0);
	ck_assert_uint_eq(v, 10240);
	ck_assert_int_eq(pv_fileset_size("1.5 MiB", &v), 0);
	ck_assert_uint_eq(v, 1572864);
	ck_assert_int_eq(pv_fileset_size("4KB", &v), 0);
	ck_assert_uint_eq(v, 4000);
	ck_assert_int_eq(pv_fileset_size("4GiB", &v), 0);
	ck_assert_uint_eq(v, 4294967296ULL);
	ck_assert_int_eq(pv_fileset_size("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(pv_fileset_size("5GiB", &v), -1);
	ck_assert_int_eq(pv_fileset_size("-1", &v), -1);
	ck_assert_int_eq(pv_fileset_size("1.5", &v), -1);
	ck_assert_int_eq(pv_fileset_size("12 parsecs", &v), -1);
	ck_assert_int_eq(pv_fileset_size("KiB", &v), -1);
	ck_assert_int_eq(pv_fileset_size("", &v), -1);
}
END_TEST

START_TEST(errors)
{
	refused("parts: {static: {files: 1, sizes: [{size: 1}]}}\nbogus: 1\n",
		"t.yaml:2:1: unknown key 'bogus'");
	refused("name: x\n", "no 'parts'");
	refused("parts: {}\n", "'parts' is empty");
	refused("parts:\n  stale: {files: 1}\n", "t.yaml:2:3: unknown key 'stale' in 'parts'");
	refused("parts:\n  static: {files: 3}\n", "has files but no 'sizes'");
	refused("parts:\n  static: {files: x, sizes: [{size: 1}]}\n",
		"t.yaml:2:19: 'parts.static.files' "
		"is 'x', not an integer; expected an integer from 0 to 1000000");
	refused("parts:\n  static: {files: 1, sizes: [{size: 3 parsecs}]}\n", "not a size");
	refused("parts:\n  static: {files: 1, sizes: [{size: [9, 3]}]}\n", "down to");
	refused("parts:\n  static: {files: 1, sizes: [{size: [1, 2, 3]}]}\n", "has 3 values");
	refused("parts:\n  static: {files: 1, sizes: [{size: 1, weight: 0}]}\n",
		"'parts.static.sizes.0.weight' is 0, out of range");
	/* the playbook's getters: suggestions, the item's path, "" refused */
	refused("parts:\n  statik: {files: 1}\n",
		"unknown key 'statik' in 'parts' (did you mean 'static'?)");
	refused("content: uniqe\nparts: {new: }\n",
		"'content' is 'uniqe' (did you mean 'unique'?); expected shared (the same bytes");
	refused("parts:\n  static: {files: 1, sizes: [{size: 1}, {size: [1, x]}]}\n",
		"'parts.static.sizes.1.size.1' is 'x', not a size");
	refused("parts:\n  static: {files: 1, sizes: [{size: 1}], extensions: ['']}\n",
		"'parts.static.extensions' is empty");
	refused("parts:\n  static: {folders: [0]}\n", "out of range");
	refused("parts:\n  static: {folders: 3}\n", "is not a list");
	refused("parts:\n  static: {folders: [1,1,1,1,1,1,1,1,1]}\n", "at most 8");
	refused("parts:\n  static: {folders: [1000, 1000], files: 2, sizes: [{size: 1}]}\n",
		"more than 1000000 entries");
	refused("parts:\n  static: {files: 1, sizes: [{size: 1}], extensions: [a/b]}\n",
		"extension 'a/b'");
	refused("content: dedup\nparts: {new: }\n", "t.yaml:1:10: 'content' is 'dedup'");
	refused("parts: [static]\n", "'parts' is not a mapping");
	refused("parts:\n  static: {files: 1\n", "YAML syntax error");
	refused("seed: 1\nseed: 2\nparts: {new: }\n",
		"t.yaml:2:1: duplicate key 'seed' at top level (first at line 1)");
}
END_TEST

static void shipped(const char *path, double mb_lo, double mb_hi, size_t files_lo, size_t files_hi)
{
	struct pv_fileset *fs = NULL;
	double mb;

	ck_assert_msg(pv_fileset_read(path, &fs) == 0, "%s", pv_errmsg());
	mb = (double)fs->bytes / 1e6;
	ck_assert_msg(mb >= mb_lo && mb <= mb_hi, "%s: %.2f MB per user", path, mb);
	ck_assert_msg(fs->nfiles >= files_lo && fs->nfiles <= files_hi, "%s: %zu files", path,
		      fs->nfiles);
	pv_fileset_free(fs);
}

START_TEST(shipped_filesets)
{
	struct pv_fileset *fs = NULL;

	shipped("playbooks/filesets/small.yaml", 0.8, 1.3, 60, 100);
	shipped("playbooks/filesets/homefolders.yaml", 75, 90, 400, 600);
	ck_assert_int_eq(pv_fileset_read("playbooks/filesets/none.yaml", &fs), PV_EIO);
	ck_assert_msg_has("cannot read fileset 'playbooks/filesets/none.yaml'");
}
END_TEST

/* The up-front bound counts every entry, and stops before anything wraps. 8 levels of 256
 * folders are 2^64 leaf folders: a product over the levels wrapped to 0 and passed the check,
 * and the plan was built to a million entries before push() refused it. Intermediate levels
 * and earlier parts count too, so every refusal comes from the bound, before building. */
START_TEST(bound_before_building)
{
	const char *at_limit =
		"parts: {static: {folders: [999], files: 1000, sizes: [{size: 0}]}}\n";
	struct pv_fileset *fs = NULL;

	refused("parts:\n  static: {folders: [256, 256, 256, 256, 256, 256, 256, 256]}\n",
		"part 'static' brings the fileset to more than 1000000 entries");
	refused("parts:\n  static: {folders: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],"
		" files: 1000000, sizes: [{size: 1}]}\n",
		"part 'static' brings the fileset to more than 1000000 entries");
	/* 1 + 1000 + 1000000 folders: the leaves alone fit, the levels above them do not */
	refused("parts:\n  new:\n    folders: [1000, 1000]\n",
		"part 'new' brings the fileset to more than 1000000 entries");
	/* each part fits, the three together do not */
	refused("parts:\n  static: {folders: [1000], files: 500, sizes: [{size: 0}]}\n"
		"  volatile: {folders: [1000], files: 499, sizes: [{size: 0}]}\n",
		"part 'volatile' brings the fileset to more than 1000000 entries");
	/* exactly the limit: 1 + 999 folders, 999 * 1000 files */
	ck_assert_int_eq(pv_fileset_parse("t.yaml", at_limit, strlen(at_limit), &fs), PV_OK);
	ck_assert_uint_eq(fs->n, PV_FILESET_ENTRIES);
	pv_fileset_free(fs);
}
END_TEST

/* SHA-256 over every file of the plan, in build order: its path, a NUL, then its content as
 * the tree builders write it (pv_fileset_fill from pv_fileset_seed for that user). */
static void digest(const struct pv_fileset *fs, const char *user, char hex[65])
{
	static unsigned char chunk[1 << 16];
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *e = &fs->entries[i];
		uint64_t seed = pv_fileset_seed(fs, e, user);

		if (e->dir)
			continue;
		sha256_update(&ctx, strlen(e->path) + 1, (const uint8_t *)e->path);
		for (uint64_t off = 0; off < e->size; off += sizeof(chunk)) {
			size_t n = e->size - off < sizeof(chunk) ? (size_t)(e->size - off)
								 : sizeof(chunk);

			pv_fileset_fill(seed, off, chunk, n);
			sha256_update(&ctx, n, chunk);
		}
	}
	sha256_digest(&ctx, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* Golden values of playbooks/filesets/small.yaml, computed once from the generator as it was
 * when they were written (and the same with content 'unique', where the user's name is mixed
 * in). If this fails, the generator changed: every lab's trees would be rewritten by the next
 * run. Change them only on purpose, and say so in the commit. */
#define SMALL_ENTRIES	    78
#define SMALL_FILES	    70
#define SMALL_DIRS	    8
#define SMALL_BYTES	    953657ULL
#define SMALL_SHA256	    "1994ba31f0114c9046a3713dde54082592e72f2823807efdc5f20c516d981924"
#define SMALL_UNIQUE_SHA256 "fdb83c2acfa9386024f608162d08c2b6cc8e3c66532a7d9cf5618318fe1f3ac4"

START_TEST(golden_small)
{
	struct pv_fileset *fs = NULL, *u = NULL;
	FILE *f = fopen("playbooks/filesets/small.yaml", "rb");
	static char text[1 << 16];
	char hex[65], *shared;
	size_t len;

	ck_assert_ptr_nonnull(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	ck_assert_int_eq(pv_fileset_parse("small.yaml", text, len, &fs), PV_OK);
	ck_assert_uint_eq(fs->n, SMALL_ENTRIES);
	ck_assert_uint_eq(fs->nfiles, SMALL_FILES);
	ck_assert_uint_eq(fs->ndirs, SMALL_DIRS);
	ck_assert_uint_eq(fs->bytes, SMALL_BYTES);
	digest(fs, "cli1-u1", hex);
	ck_assert_str_eq(hex, SMALL_SHA256);
	/* the same tree with content 'unique' */
	ck_assert_ptr_nonnull(shared = strstr(text, "content: shared"));
	memcpy(shared, "content: unique", 15);
	ck_assert_int_eq(pv_fileset_parse("small.yaml", text, len, &u), PV_OK);
	ck_assert_uint_eq(u->bytes, SMALL_BYTES);
	digest(u, "cli1-u1", hex);
	ck_assert_str_eq(hex, SMALL_UNIQUE_SHA256);
	pv_fileset_free(fs);
	pv_fileset_free(u);
}
END_TEST

static Suite *fileset_suite(void)
{
	Suite *s = suite_create("fileset");
	TCase *tc = tcase_create("fileset");

	tcase_add_test(tc, plan_shape);
	tcase_add_test(tc, deterministic);
	tcase_add_test(tc, content_modes);
	tcase_add_test(tc, fill_any_chunking);
	tcase_add_test(tc, sizes);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, shipped_filesets);
	tcase_add_test(tc, bound_before_building);
	tcase_add_test(tc, golden_small);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pv_unit_run(fileset_suite());
}
