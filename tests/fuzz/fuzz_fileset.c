/* tests/fuzz/fuzz_fileset.c: libFuzzer target for the fileset parser, pv_fileset_parse(). The
 * input is a fileset description (YAML, docs/fileset.md).
 *
 * A plan that is accepted is checked against fileset.h: counts and bytes add up, a folder
 * comes before what it holds, paths are clean relative paths, the plan is deterministic, and
 * content does not depend on how it is chunked. A description that is refused must be refused
 * before its plan is built: that is what the up-front bound in build() is for (a plan is up to
 * a million entries, and a description of a few bytes must not cost that just to be refused).
 * Every allocation made while parsing is counted through the sanitizer's malloc hook; a refusal
 * that allocated far more than the text could explain aborts. A broken promise aborts, which
 * libFuzzer reports as a crash with the input that did it. */
#include "fileset/fileset.h"
#include "util/err.h"

#include <sanitizer/allocator_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a refused parse may allocate in all: libyaml's buffers and the node tree grow with the
 * text; a built plan of entries grows with the description's numbers instead. */
#define REFUSAL_BYTES(len) (((size_t)4 << 20) + (size_t)(len)*1024)

static size_t counted;
static bool counting;

static void on_malloc(const volatile void *p, size_t size)
{
	(void)p;
	if (counting)
		counted += size;
}

static void on_free(const volatile void *p)
{
	(void)p;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free))
		abort();
	return 0;
}

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_fileset: broken promise: %s (%s); message: '%s'\n", what,
		detail ? detail : "", pv_errmsg());
	abort();
}

static const char *const part_names[PV_FILESET_PART_COUNT] = {"static", "new", "volatile"};

static void check_path(const struct pv_fileset_entry *e)
{
	const char *p = e->path, *part = part_names[e->part];
	size_t plen = strlen(part), len = strlen(p);

	if (e->part >= PV_FILESET_PART_COUNT || strncmp(p, part, plen) ||
	    (p[plen] && p[plen] != '/'))
		broken("an entry outside its part's folder", p);
	if (len >= 512 || strstr(p, "//") || p[len - 1] == '/' || strstr(p, "/..") ||
	    p[strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/")])
		broken("a path that is not a clean relative path", p);
}

/* Entries come depth first: the folders open around an entry are a stack, and an entry's
 * parent must be on top of it once the folders it is not in are closed. */
static void check_order(const struct pv_fileset *fs)
{
	size_t *open = malloc((fs->n + 1) * sizeof(*open)), depth = 0;

	if (!open)
		abort();
	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *e = &fs->entries[i];
		const char *slash = strrchr(e->path, '/');
		size_t plen = slash ? (size_t)(slash - e->path) : 0;

		while (depth) {
			const char *top = fs->entries[open[depth - 1]].path;

			if (strlen(top) == plen && !strncmp(top, e->path, plen))
				break;
			depth--;
		}
		if (slash && !depth)
			broken("an entry before its folder", e->path);
		if (!slash && (!e->dir || depth))
			broken("a part that is not a top folder", e->path);
		if (e->dir)
			open[depth++] = i;
	}
	free(open);
}

static void check_plan(const struct pv_fileset *fs, const uint8_t *data, size_t size)
{
	size_t files = 0, dirs = 0;
	uint64_t bytes = 0, max = 0;
	const struct pv_fileset_entry *first = NULL;

	if (!fs->name || fs->n != fs->nfiles + fs->ndirs || fs->n > PV_FILESET_ENTRIES ||
	    (fs->n && !fs->entries) || fs->content > PV_FILESET_CONTENT_UNIQUE)
		broken("plan counts", fs->name);
	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *e = &fs->entries[i];

		check_path(e);
		if (e->dir) {
			dirs++;
			if (e->size || e->seed)
				broken("a folder with a size or a seed", e->path);
			continue;
		}
		files++;
		if (e->size > PV_FILESET_FILE_MAX)
			broken("a file over the size limit", e->path);
		bytes += e->size;
		max = e->size > max ? e->size : max;
		if (!first)
			first = e;
	}
	if (files != fs->nfiles || dirs != fs->ndirs || bytes != fs->bytes || max != fs->max_size)
		broken("counts or bytes do not add up", fs->name);
	check_order(fs);
	if (first) {
		/* the same bytes whatever the chunking, split where the input says */
		uint8_t whole[64], parts[64];
		uint64_t seed = pv_fileset_seed(fs, first, "cli1-u1");
		size_t cut = size ? data[0] % sizeof(whole) : 0;
		uint64_t off = size > 1 ? data[1] : 0;

		if (fs->content == PV_FILESET_CONTENT_SHARED && seed != first->seed)
			broken("shared content depends on the user", first->path);
		if (seed != pv_fileset_seed(fs, first, "cli1-u1"))
			broken("a content seed that changes between calls", first->path);
		pv_fileset_fill(seed, off, whole, sizeof(whole));
		pv_fileset_fill(seed, off, parts, cut);
		pv_fileset_fill(seed, off + cut, parts + cut, sizeof(parts) - cut);
		if (memcmp(whole, parts, sizeof(whole)))
			broken("content depends on the chunking", first->path);
	}
}

/* The same text gives the same plan (names, sizes, seeds): re-runs rely on it. */
static void check_again(const struct pv_fileset *fs, const uint8_t *data, size_t size)
{
	struct pv_fileset *again = NULL;

	if (pv_fileset_parse("fuzz.yaml", (const char *)data, size, &again) != PV_OK)
		broken("a description accepted once and refused the next time", fs->name);
	if (again->n != fs->n || again->seed != fs->seed || again->bytes != fs->bytes)
		broken("a plan that differs between two parses", fs->name);
	for (size_t i = 0; i < fs->n; i++) {
		const struct pv_fileset_entry *a = &fs->entries[i], *b = &again->entries[i];

		if (strcmp(a->path, b->path) || a->size != b->size || a->seed != b->seed ||
		    a->dir != b->dir || a->part != b->part)
			broken("a plan that differs between two parses", a->path);
	}
	pv_fileset_free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_fileset *fs = NULL;
	int r;

	counted = 0;
	counting = true;
	r = pv_fileset_parse("fuzz.yaml", (const char *)data, size, &fs);
	counting = false;
	if (r == PV_OK) {
		if (!fs)
			broken("success without a plan", NULL);
		check_plan(fs, data, size);
		if (fs->n <= 2000)
			check_again(fs, data, size);
	} else {
		char detail[64];

		snprintf(detail, sizeof(detail), "%zu bytes allocated for %zu bytes of text",
			 counted, size);
		if (fs)
			broken("failure but *out was set", NULL);
		if (r != PV_ECONFIG)
			broken("a code other than config", pv_status_name(r));
		if (!pv_errmsg()[0])
			broken("a failure without a message", NULL);
		if (counted > REFUSAL_BYTES(size))
			broken("a refusal that came after building the plan", detail);
	}
	pv_fileset_free(fs);
	pv_error_clear();
	return 0;
}
