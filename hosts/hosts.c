/* hosts/hosts.c: the hosts-file model: markers, rendering, merge and removal of this lab's
 * block, name scanning, and the POSIX cksum used to detect a concurrent change. No I/O.
 *
 * Markers are whole lines "# BEGIN provision <id>" / "# END provision <id>" (trailing blanks
 * and a CR allowed, so CRLF files parse the same). Anything else starting with '#' is a
 * comment and is never touched. */
#include "hosts/hosts.h"

#include "util/err.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define BEGIN_PREFIX "# BEGIN provision "
#define END_PREFIX   "# END provision "
#define NOTE_MANAGED "# managed by provision: edits between these markers are replaced"
#define NOTE_BREAK   "# provision ended the line above with a line break; cleanup removes it"

void pv_hosts_style_for(bool windows, struct pv_hosts_style *st)
{
	st->eol = windows ? PV_HOSTS_CRLF : PV_HOSTS_LF;
	st->max_names = windows ? PV_HOSTS_WINDOWS_NAMES : 0;
	st->max_width = PV_HOSTS_LINE_MAX;
}

static const char *eol_str(const struct pv_hosts_style *st)
{
	return st->eol == PV_HOSTS_CRLF ? "\r\n" : "\n";
}

/* One line: [start, stop) without its break; next is where the following line starts. */
struct line {
	const char *s;
	size_t len;
};

static size_t next_line(const char *text, size_t len, size_t pos, struct line *l)
{
	const char *nl = memchr(text + pos, '\n', len - pos);
	size_t stop = nl ? (size_t)(nl - text) : len;

	l->s = text + pos;
	l->len = stop - pos;
	return nl ? stop + 1 : len;
}

/* Trailing blanks and CR do not count. */
static size_t trimmed(const struct line *l)
{
	size_t n = l->len;

	while (n && (l->s[n - 1] == ' ' || l->s[n - 1] == '\t' || l->s[n - 1] == '\r'))
		n--;
	return n;
}

enum marker { M_NONE, M_BEGIN, M_END };

/* Is the line a marker? On yes, id/idlen point at the lab id. */
static enum marker marker(const struct line *l, const char **id, size_t *idlen)
{
	size_t n = trimmed(l), p;
	enum marker m;

	if (n > strlen(BEGIN_PREFIX) && memcmp(l->s, BEGIN_PREFIX, strlen(BEGIN_PREFIX)) == 0) {
		m = M_BEGIN;
		p = strlen(BEGIN_PREFIX);
	} else if (n > strlen(END_PREFIX) && memcmp(l->s, END_PREFIX, strlen(END_PREFIX)) == 0) {
		m = M_END;
		p = strlen(END_PREFIX);
	} else {
		return M_NONE;
	}
	for (size_t i = p; i < n; i++) {
		char c = l->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return M_NONE;
	}
	if (n - p > PV_HOSTS_LAB_MAX)
		return M_NONE;
	*id = l->s + p;
	*idlen = n - p;
	return m;
}

static bool is_lab(const char *id, size_t idlen, const char *lab)
{
	return strlen(lab) == idlen && memcmp(id, lab, idlen) == 0;
}

static bool is_line(const struct line *l, const char *what)
{
	return trimmed(l) == strlen(what) && memcmp(l->s, what, strlen(what)) == 0;
}

int pv_hosts_parse(const char *text, size_t len, const char *lab, struct pv_hosts_layout *out)
{
	struct pv_hosts_layout lay;
	/* another lab's block being read: its id and BEGIN line */
	char open_other[PV_HOSTS_LAB_MAX + 1] = "";
	bool in_ours = false;
	size_t pos = 0, lineno = 0;

	memset(&lay, 0, sizeof(lay));
	while (pos < len) {
		struct line l;
		size_t start = pos, idlen = 0;
		const char *id = NULL;
		enum marker m;

		pos = next_line(text, len, pos, &l);
		lineno++;
		m = marker(&l, &id, &idlen);
		if (in_ours) {
			if (m == M_END && is_lab(id, idlen, lab)) {
				in_ours = false;
				lay.end = pos;
				lay.end_line = lineno;
			} else if (m != M_NONE) {
				return pv_error(
					PV_ECONFLICT,
					"line %zu: '%.*s' lies inside the block of lab '%s' "
					"(line %zu) before its END marker; fix the file by "
					"hand so that every BEGIN has its END",
					lineno, (int)trimmed(&l), l.s, lab, lay.begin_line);
			} else if (is_line(&l, NOTE_BREAK)) {
				lay.added_break = true;
			}
			continue;
		}
		if (m == M_NONE)
			continue;
		if (is_lab(id, idlen, lab)) {
			if (m == M_END)
				return pv_error(
					PV_ECONFLICT,
					"line %zu: '# END provision %s' without a BEGIN before "
					"it; fix the file by hand (remove the stray marker)",
					lineno, lab);
			if (lay.found)
				return pv_error(
					PV_ECONFLICT,
					"line %zu: a second block of lab '%s' (the first starts "
					"at line %zu); fix the file by hand so that there is "
					"one",
					lineno, lab, lay.begin_line);
			lay.found = true;
			in_ours = true;
			lay.begin = start;
			lay.begin_line = lineno;
			continue;
		}
		/* another lab's marker: count its well-formed blocks, never judge them */
		if (m == M_BEGIN) {
			snprintf(open_other, sizeof(open_other), "%.*s", (int)idlen, id);
		} else if (open_other[0] && strlen(open_other) == idlen &&
			   memcmp(open_other, id, idlen) == 0) {
			if (lay.others++ == 0)
				snprintf(lay.other, sizeof(lay.other), "%s", open_other);
			open_other[0] = '\0';
		}
	}
	if (in_ours)
		return pv_error(
			PV_ECONFLICT,
			"line %zu: '# BEGIN provision %s' has no '# END provision %s' after "
			"it; fix the file by hand (add the END line after the block's last "
			"line, or remove the block)",
			lay.begin_line, lab, lab);
	lay.lines = lineno;
	*out = lay;
	return PV_OK;
}

/* Append the groups' lines, wrapping by the style's limits. */
static int render_lines(struct pv_buf *out, const struct pv_hosts_style *st,
			const struct pv_hosts_group *g)
{
	const char *eol = eol_str(st);
	size_t alen = strlen(g->address), width = 0, count = 0;

	for (size_t i = 0; i < g->n; i++) {
		size_t nlen = strlen(g->names[i]);

		if (count && ((st->max_names && count >= st->max_names) ||
			      (st->max_width && width + 1 + nlen > st->max_width))) {
			if (pv_buf_addstr(out, eol) < 0)
				return -1;
			count = 0;
		}
		if (count == 0) {
			if (pv_buf_add(out, g->address, alen) < 0)
				return -1;
			width = alen;
		}
		if (pv_buf_addstr(out, " ") < 0 || pv_buf_add(out, g->names[i], nlen) < 0)
			return -1;
		width += 1 + nlen;
		count++;
	}
	if (count && pv_buf_addstr(out, eol) < 0)
		return -1;
	return 0;
}

int pv_hosts_render(struct pv_buf *out, const char *lab, const struct pv_hosts_style *st,
		    const struct pv_hosts_group *g, size_t ng, bool added_break)
{
	const char *eol = eol_str(st);
	size_t start = out->len;

	if (pv_buf_addf(out, "%s%s%s%s%s", BEGIN_PREFIX, lab, eol, NOTE_MANAGED, eol) < 0 ||
	    (added_break && pv_buf_addf(out, "%s%s", NOTE_BREAK, eol) < 0))
		goto oom;
	for (size_t i = 0; i < ng; i++)
		if (render_lines(out, st, &g[i]) < 0)
			goto oom;
	if (pv_buf_addf(out, "%s%s%s", END_PREFIX, lab, eol) < 0)
		goto oom;
	return PV_OK;
oom:
	if (out->data) {
		out->len = start;
		out->data[start] = '\0';
	}
	return pv_error(PV_EIO, "out of memory");
}

int pv_hosts_merge(const char *text, size_t len, const struct pv_hosts_layout *lay, const char *lab,
		   const struct pv_hosts_style *st, const struct pv_hosts_group *g, size_t ng,
		   struct pv_buf *out)
{
	bool add_break;
	int r;

	pv_buf_reset(out);
	if (lay->found) {
		if (pv_buf_add(out, text, lay->begin) < 0)
			goto oom;
		if ((r = pv_hosts_render(out, lab, st, g, ng, lay->added_break)) != PV_OK)
			return r;
		if (pv_buf_add(out, text + lay->end, len - lay->end) < 0)
			goto oom;
		return PV_OK;
	}
	add_break = len > 0 && text[len - 1] != '\n';
	if (pv_buf_add(out, text, len) < 0 || (add_break && pv_buf_addstr(out, eol_str(st)) < 0))
		goto oom;
	return pv_hosts_render(out, lab, st, g, ng, add_break);
oom:
	return pv_error(PV_EIO, "out of memory");
}

int pv_hosts_remove(const char *text, size_t len, const struct pv_hosts_layout *lay,
		    const struct pv_hosts_style *st, struct pv_buf *out)
{
	size_t keep = lay->begin;

	pv_buf_reset(out);
	if (!lay->found) {
		if (pv_buf_add(out, text, len) < 0)
			return pv_error(PV_EIO, "out of memory");
		return PV_OK;
	}
	/* Only while the block is last: with lines after it, that break ends a line we keep. */
	if (lay->added_break && lay->end == len) {
		const char *eol = eol_str(st);
		size_t el = strlen(eol);

		if (keep >= el && memcmp(text + keep - el, eol, el) == 0)
			keep -= el;
	}
	if (pv_buf_add(out, text, keep) < 0 || pv_buf_add(out, text + lay->end, len - lay->end) < 0)
		return pv_error(PV_EIO, "out of memory");
	if (!out->data && pv_buf_add(out, "", 0) < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

int pv_hosts_foreach(const char *text, size_t len, const struct pv_hosts_layout *lay,
		     pv_hosts_entry_fn fn, void *arg)
{
	size_t pos = 0, lineno = 0;

	while (pos < len) {
		struct line l;
		const char *p, *e, *addr;
		size_t alen;
		int r;

		if (lay->found && pos == lay->begin) {
			/* skip our block's lines, counting them */
			for (; pos < lay->end; pos++)
				lineno += text[pos] == '\n';
			continue;
		}
		pos = next_line(text, len, pos, &l);
		lineno++;
		p = l.s;
		e = l.s + l.len;
		/* a '#' anywhere starts a comment */
		{
			const char *hash = memchr(p, '#', l.len);

			if (hash)
				e = hash;
		}
		while (p < e && blank(*p))
			p++;
		addr = p;
		while (p < e && !blank(*p))
			p++;
		alen = (size_t)(p - addr);
		if (alen == 0)
			continue;
		for (;;) {
			const char *name;

			while (p < e && blank(*p))
				p++;
			if (p == e)
				break;
			name = p;
			while (p < e && !blank(*p))
				p++;
			if ((r = fn(addr, alen, name, (size_t)(p - name), lineno, arg)) != 0)
				return r;
		}
	}
	return PV_OK;
}

bool pv_hosts_same_address(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned char x[16], y[16];
	char sa[64], sb[64];

	if (alen >= sizeof(sa) || blen >= sizeof(sb))
		return alen == blen && memcmp(a, b, alen) == 0;
	memcpy(sa, a, alen);
	sa[alen] = '\0';
	memcpy(sb, b, blen);
	sb[blen] = '\0';
	if (inet_pton(AF_INET, sa, x) == 1)
		return inet_pton(AF_INET, sb, y) == 1 && memcmp(x, y, 4) == 0;
	if (inet_pton(AF_INET6, sa, x) == 1)
		return inet_pton(AF_INET6, sb, y) == 1 && memcmp(x, y, 16) == 0;
	return alen == blen && strncasecmp(sa, sb, alen) == 0;
}

struct check_names {
	const char *text;
	size_t len;
	const char *address;
	const struct pv_strset *names;
};

/* The lab whose block holds line lineno, if any (for the message). */
static void block_of(const char *text, size_t len, size_t lineno, char *id, size_t idsz)
{
	size_t pos = 0, n = 0;
	char open[PV_HOSTS_LAB_MAX + 1] = "";

	id[0] = '\0';
	while (pos < len && n < lineno) {
		struct line l;
		const char *mid;
		size_t midlen;
		enum marker m;

		pos = next_line(text, len, pos, &l);
		n++;
		m = marker(&l, &mid, &midlen);
		if (m == M_BEGIN)
			snprintf(open, sizeof(open), "%.*s", (int)midlen, mid);
		else if (m == M_END)
			open[0] = '\0';
	}
	snprintf(id, idsz, "%s", open);
}

static int check_one(const char *addr, size_t alen, const char *name, size_t nlen, size_t line,
		     void *arg)
{
	struct check_names *c = arg;
	char nm[256], other[PV_HOSTS_LAB_MAX + 1];

	if (nlen >= sizeof(nm))
		return 0;
	memcpy(nm, name, nlen);
	nm[nlen] = '\0';
	if (!pv_strset_has(c->names, nm) ||
	    pv_hosts_same_address(addr, alen, c->address, strlen(c->address)))
		return 0;
	block_of(c->text, c->len, line, other, sizeof(other));
	if (other[0])
		return pv_error(PV_ECONFLICT,
				"line %zu, in the block of lab '%s', maps '%s' to %.*s, not to the "
				"server's %s; the labs clash: clean up lab '%s' or change "
				"server.alias_template",
				line, other, nm, (int)alen, addr, c->address, other);
	return pv_error(PV_ECONFLICT,
			"line %zu maps '%s' to %.*s, not to the server's %s; remove that line or "
			"change server.alias_template",
			line, nm, (int)alen, addr, c->address);
}

int pv_hosts_check_names(const char *text, size_t len, const struct pv_hosts_layout *lay,
			 const char *address, const struct pv_strset *names)
{
	struct check_names c = {text, len, address, names};

	return pv_hosts_foreach(text, len, lay, check_one, &c);
}

/* POSIX cksum: CRC-32 with polynomial 0x04C11DB7, most significant bit first, over the data and
 * then the length in as few bytes as it takes (least significant first), complemented. */
uint32_t pv_hosts_cksum(const void *data, size_t len)
{
	uint32_t table[256]; /* 2,048 steps to build: cheaper than sharing it between threads */
	const unsigned char *p = data;
	uint32_t crc = 0;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i << 24;

		for (int k = 0; k < 8; k++)
			c = c & 0x80000000u ? (c << 1) ^ 0x04C11DB7u : c << 1;
		table[i] = c;
	}
	for (size_t i = 0; i < len; i++)
		crc = (crc << 8) ^ table[((crc >> 24) ^ p[i]) & 0xff];
	for (size_t n = len; n; n >>= 8)
		crc = (crc << 8) ^ table[((crc >> 24) ^ n) & 0xff];
	return ~crc;
}

void pv_hosts_cksum_str(const void *data, size_t len, char out[32])
{
	snprintf(out, 32, "%lu %zu", (unsigned long)pv_hosts_cksum(data, len), len);
}
