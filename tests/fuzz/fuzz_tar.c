/* tests/fuzz/fuzz_tar.c: libFuzzer target for the ustar reader (util/tar.h), which takes apart
 * what `run` gathers from every client: an input is a whole stream, as it came off the wire.
 * Invariants, each aborting when broken:
 *   - a refusal is PV_EREMOTE with a message;
 *   - every entry passed has a clean path (not empty, not absolute, no empty, '.' or '..'
 *     part, no trailing '/', at most 255 bytes), and a file's content lies inside the input;
 *   - the entries written again with the writer (pv_tar_add, when it can store the path) and
 *     read back are the same entries, in the same order, with the same content. */
#include "util/buf.h"
#include "util/err.h"
#include "util/tar.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES 64

struct seen {
	const uint8_t *base;
	size_t len;
	size_t n;
	struct pv_tar_entry e[MAX_ENTRIES];
	char path[MAX_ENTRIES][300];
	const char *content[MAX_ENTRIES];
};

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_tar: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

static int take(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct seen *s = arg;
	size_t l = strlen(e->path);

	if (!l || l > 255 || e->path[0] == '/' || e->path[l - 1] == '/')
		broken("a path empty, absolute, too long or ending with '/'");
	for (const char *c = e->path; *c;) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			broken("a path with an empty, '.' or '..' part");
		c += n + (c[n] == '/');
	}
	if (e->dir != !content)
		broken("a folder with content, or a file without");
	if (content && (content < (const char *)s->base ||
			e->size > s->len - (size_t)(content - (const char *)s->base)))
		broken("a file's content outside the stream");
	if (s->n < MAX_ENTRIES) {
		s->e[s->n] = *e;
		snprintf(s->path[s->n], sizeof(s->path[0]), "%s", e->path);
		s->e[s->n].path = s->path[s->n];
		s->content[s->n] = content;
		s->n++;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct seen a, b;
	struct pv_buf w = PV_BUF_INIT;
	unsigned long skipped;
	int r;

	memset(&a, 0, sizeof(a));
	a.base = data;
	a.len = size;
	r = pv_tar_each(data, size, take, &a, &skipped);
	if (r != PV_OK) {
		if (r != PV_EREMOTE || !pv_errmsg()[0])
			broken("a refusal that is not PV_EREMOTE with a message");
		pv_error_clear();
		return 0;
	}
	/* written again and read back: the same entries */
	for (size_t i = 0; i < a.n; i++) {
		char *p = NULL;

		r = pv_tar_add(&w, &a.e[i], a.e[i].dir ? NULL : &p);
		if (r == PV_ECONFIG) { /* a path the writer cannot store: no round trip */
			pv_buf_release(&w, 0);
			pv_error_clear();
			return 0;
		}
		if (r != PV_OK)
			broken("the writer failed");
		if (p && a.e[i].size)
			memcpy(p, a.content[i], a.e[i].size);
	}
	if (pv_tar_end(&w) != PV_OK)
		broken("the writer cannot end the stream");
	memset(&b, 0, sizeof(b));
	b.base = (const uint8_t *)w.data;
	b.len = w.len;
	if (pv_tar_each(w.data, w.len, take, &b, &skipped) != PV_OK || skipped)
		broken("what the writer wrote does not read back");
	if (b.n != a.n)
		broken("a different number of entries read back");
	for (size_t i = 0; i < a.n; i++)
		if (strcmp(a.path[i], b.path[i]) || a.e[i].dir != b.e[i].dir ||
		    a.e[i].size != b.e[i].size ||
		    (a.e[i].size && memcmp(a.content[i], b.content[i], a.e[i].size)))
			broken("an entry changed on the way through the writer");
	pv_buf_release(&w, 0);
	pv_error_clear();
	return 0;
}
