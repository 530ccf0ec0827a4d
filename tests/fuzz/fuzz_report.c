/* tests/fuzz/fuzz_report.c: libFuzzer target for what `provision report` and `compare --html`
 * draw from a run's folder (report/ and util/plot.c over results/): the folder
 * is anyone's (issue 31). An input is the folder's files, each after a line naming it:
 *
 *     === manifest.json
 *     {...}
 *     === step-01/watch.csv
 *     seconds,phase,cpu
 *     ...
 *
 * (an input that does not start so is manifest.json whole). The run is read through the same
 * walker and parsers as pv_results_read (pv_results_parse_files over the files in memory), its page
 * drawn, and, when it has load figures, compared with itself and that page drawn. Invariants, each
 * aborting when broken:
 *   - a folder refused is PV_ECONFIG or PV_EIO with a message; one read draws a page, PV_OK;
 *   - a page starts as one, holds its Content-Security-Policy and no script, and is valid
 *     UTF-8 without a control character (tab and newline apart), a noncharacter U+FFFE or
 *     U+FFFF, or a bidirectional control: every text of the folder went through the escaper;
 *   - an axis draws at most 50 ticks. */
#include "report/report.h"
#include "results/compare.h"
#include "results/results.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILES 32

struct files {
	const char *rel[FILES];
	char name[FILES][128];
	const char *text[FILES];
	size_t len[FILES], n;
};

static void broken(const char *what, const char *page)
{
	fprintf(stderr, "fuzz_report: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	if (page)
		fprintf(stderr, "%.2000s\n", page);
	abort();
}

static int get(void *arg, const char *rel, size_t max, char **text, size_t *len)
{
	const struct files *f = arg;

	for (size_t i = 0; i < f->n; i++) {
		if (strcmp(f->rel[i], rel))
			continue;
		if (f->len[i] > max)
			return pv_error(PV_EIO, "%zu bytes, more than %zu", f->len[i], max);
		if (!(*text = malloc(f->len[i] + 1)))
			return -1;
		memcpy(*text, f->text[i], f->len[i]);
		(*text)[f->len[i]] = '\0';
		*len = f->len[i];
		return PV_OK;
	}
	return 1;
}

/* The input's files: "=== NAME\n" lines start each. */
static void split(const char *in, size_t size, struct files *f)
{
	const char *p = in, *end = in + size;

	f->n = 0;
	if (size < 4 || memcmp(in, "=== ", 4)) {
		f->rel[0] = "manifest.json";
		f->text[0] = in;
		f->len[0] = size;
		f->n = 1;
		return;
	}
	while (p < end && f->n < FILES) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *next;
		size_t k = f->n;

		if (!nl || (size_t)(nl - p) < 4)
			break;
		snprintf(f->name[k], sizeof(f->name[k]), "%.*s", (int)(nl - p - 4), p + 4);
		f->rel[k] = f->name[k];
		f->text[k] = nl + 1;
		for (next = nl + 1; next < end; next++)
			if (next[-1] == '\n' && end - next >= 4 && !memcmp(next, "=== ", 4))
				break;
		f->len[k] = (size_t)(next - f->text[k]);
		if (f->len[k] && next < end)
			f->len[k]--; /* the '\n' before the next name is the separator's */
		f->n++;
		p = next;
	}
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* The page's promises (see the file's head). */
static void check_page(const struct pv_buf *b)
{
	const unsigned char *p = (const unsigned char *)b->data;
	size_t n = b->len;

	if (pv_buf_failed(b) || !b->data || strncmp(b->data, "<!DOCTYPE html>", 15))
		broken("a page that is not one", b->data);
	if (!strstr(b->data, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
			     "'none';") ||
	    strstr(b->data, "<script"))
		broken("a page without its policy, or with a script", b->data);
	if (count(b->data, "<line class=\"axis\"") > 50 * count(b->data, "<figure>"))
		broken("an axis of more than 50 ticks", NULL);
	for (size_t i = 0; i < n;) {
		unsigned cp;
		int len;

		if (p[i] < 0x80) {
			if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n') || p[i] == 0x7f)
				broken("a control character on the page", b->data + i);
			i++;
			continue;
		}
		len = p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : p[i] >= 0xc2 ? 2 : 0;
		if (!len || i + (size_t)len > n)
			broken("a page that is not UTF-8", b->data + i);
		cp = p[i] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
		for (int k = 1; k < len; k++) {
			if ((p[i + (size_t)k] & 0xc0) != 0x80)
				broken("a page that is not UTF-8", b->data + i);
			cp = cp << 6 | (p[i + (size_t)k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			broken("a page that is not UTF-8", b->data + i);
		if (cp < 0xa0 || cp == 0xfffe || cp == 0xffff)
			broken("a control character or a noncharacter on the page", b->data + i);
		if (cp == 0x061c || cp == 0x200e || cp == 0x200f ||
		    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
			broken("a bidirectional control on the page", b->data + i);
		i += (size_t)len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct files f;
	struct pv_results_files files = {get, &f};
	struct pv_results_run *run = NULL;
	struct pv_buf b = PV_BUF_INIT;
	int r;

	split((const char *)data, size, &f);
	r = pv_results_parse_files(&files, "fuzz", &run);
	if (r != PV_OK) {
		if ((r != PV_ECONFIG && r != PV_EIO) || !pv_errmsg()[0])
			broken("a refusal that is not PV_ECONFIG or PV_EIO with a message", NULL);
		pv_error_clear();
		return 0;
	}
	if (pv_report_page(run, &b) != PV_OK)
		broken("a run read whose page was not drawn", NULL);
	check_page(&b);
	pv_buf_release(&b, 0);
	if (run->has_load && !strcmp(run->driver, "builtin")) {
		const struct pv_results_run *both[2] = {run, run};
		const size_t group[2] = {0, 1};
		struct pv_results_cmp *c = NULL;

		if (pv_results_cmp_build(both, group, 2, &c) == PV_OK) {
			pv_report_compare_page(c, &b);
			check_page(&b);
			pv_buf_release(&b, 0);
			pv_results_cmp_free(c);
		} else {
			pv_error_clear();
		}
	}
	pv_results_free(run);
	return 0;
}
