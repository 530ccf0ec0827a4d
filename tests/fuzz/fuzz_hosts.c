/* tests/fuzz/fuzz_hosts.c: libFuzzer target for the hosts-file model (hosts/hosts.h): parse a
 * hosts file, merge this lab's block into it, take it out again, for Linux and Windows styles.
 * An input is a few directive lines, then the hosts file:
 *
 *     @lab ID                the lab whose block is merged (default "provision")
 *     @group ADDR NAME...    a group of the block (default: 198.18.0.20 with srv and
 *                            srvu1..srvu12, more names than a Windows line holds)
 *     ...                    the rest is the hosts file, byte for byte
 *
 * A directive that the playbook would never let through (a lab id or a name outside its
 * characters) is skipped: what is fuzzed is the file, not our own inputs. '@' starts no line
 * of a real hosts file. Invariants (hosts.h), each aborting when broken:
 *   - the merged text parses, holds this lab's block exactly as pv_hosts_render() writes it,
 *     keeps every byte outside it, the same other labs and the same (address, name) pairs;
 *   - merging the merged text again changes nothing;
 *   - removing the block from the merged text gives what removing it from the original gives,
 *     which is the original itself when it had no block of this lab (pv_hosts_remove takes
 *     away the line break the block notes it added);
 *   - the block's lines end with the style's line break and respect its limits. */
#include "hosts/hosts.h"
#include "util/err.h"
#include "util/strset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 4
#define MAX_NAMES  64
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-"
#define LAB_CHARS  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define ADDR_CHARS "0123456789abcdefABCDEF.:"

static const char *const DEFAULT_NAMES[] = {"srv",    "srvu1",	"srvu2", "srvu3", "srvu4",
					    "srvu5",  "srvu6",	"srvu7", "srvu8", "srvu9",
					    "srvu10", "srvu11", "srvu12"};

/* What the directives asked for; names point into store. */
struct setup {
	char lab[PV_HOSTS_LAB_MAX + 1];
	char store[MAX_GROUPS][1024];
	const char *names[MAX_GROUPS][MAX_NAMES];
	struct pv_hosts_group g[MAX_GROUPS];
	size_t ng;
};

static void broken(const char *what, const char *style)
{
	fprintf(stderr, "fuzz_hosts: broken promise: %s (%s style); message: '%s'\n", what, style,
		pv_errmsg());
	abort();
}

/* "@group ADDR NAME..." into the next group, when every word is one the playbook allows. */
static void add_group(struct setup *s, const char *line, size_t len)
{
	struct pv_hosts_group *g = &s->g[s->ng];
	char *buf = s->store[s->ng], *save = NULL, *w;
	size_t n = 0;

	if (s->ng == MAX_GROUPS || len >= sizeof(s->store[0]))
		return;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		size_t wl = strlen(w);

		if (!n && (wl > 45 || w[strspn(w, ADDR_CHARS)]))
			return; /* the playbook takes IP literals only */
		if (n && (wl > 63 || w[strspn(w, NAME_CHARS)] || n > MAX_NAMES))
			return;
		if (n)
			s->names[s->ng][n - 1] = w;
		else
			g->address = w;
		n++;
	}
	if (n < 2)
		return;
	g->names = s->names[s->ng];
	g->n = n - 1;
	s->ng++;
}

/* The line is not NUL-terminated (the last one ends the buffer): no str* function on it. */
static bool all_of(const char *p, size_t len, const char *chars)
{
	for (size_t i = 0; i < len; i++)
		if (!p[i] || !strchr(chars, p[i]))
			return false;
	return true;
}

static size_t directives(struct setup *s, const char *text, size_t size)
{
	size_t pos = 0;

	snprintf(s->lab, sizeof(s->lab), "provision");
	s->ng = 0;
	while (pos < size && text[pos] == '@') {
		const char *line = text + pos, *nl = memchr(line, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - line) : size - pos;

		if (len > 5 && !memcmp(line, "@lab ", 5) && len - 5 <= PV_HOSTS_LAB_MAX &&
		    all_of(line + 5, len - 5, LAB_CHARS)) {
			memcpy(s->lab, line + 5, len - 5);
			s->lab[len - 5] = '\0';
		} else if (len > 7 && !memcmp(line, "@group ", 7)) {
			add_group(s, line + 7, len - 7);
		}
		pos += nl ? len + 1 : len;
	}
	if (!s->ng) {
		s->g[0] = (struct pv_hosts_group){"198.18.0.20", DEFAULT_NAMES, 1};
		s->g[1] = (struct pv_hosts_group){"198.18.0.20", DEFAULT_NAMES + 1,
						  sizeof(DEFAULT_NAMES) / sizeof(DEFAULT_NAMES[0]) -
							  1};
		s->ng = 2;
	}
	return pos;
}

static int record_pair(const char *addr, size_t alen, const char *name, size_t nlen, size_t line,
		       void *arg)
{
	struct pv_buf *b = arg;

	(void)line;
	pv_buf_add(b, &alen, sizeof(alen));
	pv_buf_add(b, addr, alen);
	pv_buf_add(b, &nlen, sizeof(nlen));
	pv_buf_add(b, name, nlen);
	return 0;
}

static bool same(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (!alen || !memcmp(a, b, alen));
}

/* The (address, name) pairs outside the block, in order. */
static void pairs(const char *text, size_t len, const struct pv_hosts_layout *lay,
		  struct pv_buf *out)
{
	pv_buf_reset(out);
	pv_buf_add(out, "", 0);
	if (pv_hosts_foreach(text, len, lay, record_pair, out) != PV_OK || pv_buf_failed(out))
		abort();
}

/* The block's lines: every one ends with the style's break and keeps to its limits. */
static void check_lines(const char *b, size_t len, const struct pv_hosts_style *st, const char *sn)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(b + pos, '\n', len - pos);
		size_t stop, width, names = 0;
		bool crlf;

		if (!nl)
			broken("a block line without a line break", sn);
		stop = (size_t)(nl - b);
		crlf = stop > pos && b[stop - 1] == '\r';
		if (crlf != (st->eol == PV_HOSTS_CRLF))
			broken("a block line whose break is not the style's", sn);
		width = stop - pos - crlf;
		if (st->max_width && width > st->max_width)
			broken("a block line wider than the style allows", sn);
		if (b[pos] != '#')
			for (size_t i = pos; i < pos + width; i++)
				names += b[i] == ' ';
		if (st->max_names && names > st->max_names)
			broken("more names on a line than the style allows", sn);
		pos = stop + 1;
	}
}

static void check_style(const char *text, size_t len, const struct pv_hosts_layout *lay,
			const struct setup *s, bool windows)
{
	const char *sn = windows ? "windows" : "linux";
	struct pv_hosts_style st;
	struct pv_hosts_layout lay1, lay2;
	struct pv_buf m1 = PV_BUF_INIT, m2 = PV_BUF_INIT, r0 = PV_BUF_INIT, r1 = PV_BUF_INIT;
	struct pv_buf block = PV_BUF_INIT, p0 = PV_BUF_INIT, p1 = PV_BUF_INIT;
	bool added = !lay->found && len > 0 && text[len - 1] != '\n';
	size_t keep = lay->found ? lay->begin : len, eol;

	pv_hosts_style_for(windows, &st);
	eol = st.eol == PV_HOSTS_CRLF ? 2 : 1;
	if (pv_hosts_merge(text, len, lay, s->lab, &st, s->g, s->ng, &m1) != PV_OK)
		broken("merge failed", sn);
	if (pv_hosts_parse(m1.data, m1.len, s->lab, &lay1) != PV_OK)
		broken("the merged text does not parse", sn);
	if (!lay1.found)
		broken("the merged text has no block of this lab", sn);
	if (lay1.others != lay->others || strcmp(lay1.other, lay->other))
		broken("other labs' blocks changed", sn);
	if (lay1.added_break != (lay->found ? lay->added_break : added))
		broken("the block's note on an added line break is wrong", sn);
	/* every byte outside the block is kept; a break is added only where the note says */
	if (lay1.begin != keep + (added ? eol : 0) || memcmp(m1.data, text, keep) ||
	    (added && memcmp(m1.data + keep, windows ? "\r\n" : "\n", eol)))
		broken("bytes before the block changed", sn);
	if (!same(m1.data + lay1.end, m1.len - lay1.end, text + (lay->found ? lay->end : len),
		  len - (lay->found ? lay->end : len)))
		broken("bytes after the block changed", sn);
	if (pv_hosts_render(&block, s->lab, &st, s->g, s->ng, lay1.added_break) != PV_OK)
		abort();
	if (!same(m1.data + lay1.begin, lay1.end - lay1.begin, block.data, block.len))
		broken("the block is not what render writes", sn);
	check_lines(block.data, block.len, &st, sn);
	pairs(text, len, lay, &p0);
	pairs(m1.data, m1.len, &lay1, &p1);
	if (!same(p0.data, p0.len, p1.data, p1.len))
		broken("the names outside the block changed", sn);

	/* a second merge changes nothing */
	if (pv_hosts_merge(m1.data, m1.len, &lay1, s->lab, &st, s->g, s->ng, &m2) != PV_OK ||
	    !same(m1.data, m1.len, m2.data, m2.len))
		broken("merging twice changed the text", sn);

	/* removing it from the merged text is removing it from the original */
	if (pv_hosts_remove(text, len, lay, &st, &r0) != PV_OK ||
	    pv_hosts_remove(m1.data, m1.len, &lay1, &st, &r1) != PV_OK)
		broken("remove failed", sn);
	if (!same(r0.data, r0.len, r1.data, r1.len))
		broken("remove after merge differs from remove", sn);
	if (!lay->found && !same(r1.data, r1.len, text, len))
		broken("remove after merge does not give the original bytes back", sn);
	if (pv_hosts_parse(r1.data, r1.len, s->lab, &lay2) != PV_OK || lay2.found ||
	    lay2.others != lay->others)
		broken("the text without the block is not a file without it", sn);

	/* a name clash is judged the same with and without the block */
	for (size_t i = 0; i < s->ng; i++) {
		struct pv_strset *names = pv_strset_new();
		int c0, c1;

		if (!names)
			abort();
		for (size_t j = 0; j < s->g[i].n; j++)
			if (pv_strset_add(names, s->g[i].names[j]) < 0)
				abort();
		c0 = pv_hosts_check_names(text, len, lay, s->g[i].address, names);
		c1 = pv_hosts_check_names(m1.data, m1.len, &lay1, s->g[i].address, names);
		if (c0 != c1 || (c0 != PV_OK && c0 != PV_ECONFLICT))
			broken("the name check differs with the block merged", sn);
		pv_strset_free(names);
	}
	if (pv_hosts_cksum(m1.data, m1.len) != pv_hosts_cksum(m2.data, m2.len))
		broken("cksum of the same bytes differs", sn);
	pv_buf_release(&m1, 0);
	pv_buf_release(&m2, 0);
	pv_buf_release(&r0, 0);
	pv_buf_release(&r1, 0);
	pv_buf_release(&block, 0);
	pv_buf_release(&p0, 0);
	pv_buf_release(&p1, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct setup s; /* 4 KiB of names: not on the stack of every run */
	const char *text = (const char *)data;
	struct pv_hosts_layout lay;
	size_t skip = directives(&s, text, size);
	int r;

	/* the file is the tail of libFuzzer's buffer, which ends exactly there: any read past
	 * its length is caught by ASan */
	text += skip;
	size -= skip;
	r = pv_hosts_parse(text, size, s.lab, &lay);
	if (r != PV_OK) {
		if (r != PV_ECONFLICT || !pv_errmsg()[0])
			broken("a refusal that is not a conflict with a message", "any");
		pv_error_clear();
		return 0;
	}
	if (lay.found && (lay.begin > lay.end || lay.end > size || lay.begin_line > lay.end_line ||
			  lay.end_line > lay.lines))
		broken("a layout outside the text", "any");
	check_style(text, size, &lay, &s, false);
	check_style(text, size, &lay, &s, true);
	pv_error_clear();
	return 0;
}
