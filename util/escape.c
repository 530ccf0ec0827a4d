/* util/escape.c: text made safe for a terminal, and for HTML and XML (see escape.h). */
#include "util/escape.h"

#include <stdio.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p (at most n bytes there), 0 when it is not one,
 * or -1 when the n bytes are a valid beginning cut short. RFC 3629: no overlong form, no
 * surrogate, nothing above U+10FFFF. */
static int utf8_len(const unsigned char *p, size_t n)
{
	int need;
	unsigned char lo = 0x80, hi = 0xbf;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		need = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		need = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		need = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	for (int i = 1; i < need; i++) {
		if ((size_t)i >= n)
			return -1;
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return need;
}

/* The code point of the valid UTF-8 sequence of n bytes (2 to 4) at p. */
static unsigned code_point(const unsigned char *p, int n)
{
	unsigned cp = p[0] & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);

	for (int i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* The Unicode bidirectional controls (UAX #9, its explicit formatting characters and the
 * implicit marks): ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI. */
static bool bidi(unsigned cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

static int visible(struct pv_buf *out, unsigned cp)
{
	return pv_buf_addf(out, "\\u%04x", cp);
}

long pv_escape_text(struct pv_buf *out, const char *in, size_t len, bool final)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i = 0, start = 0;
	char hex[8];

	while (i < len) {
		int n = 1;

		if (p[i] >= 0x20 && p[i] < 0x7f) {
			i++;
			continue;
		}
		if (p[i] == '\n' || p[i] == '\t') {
			i++;
			continue;
		}
		if (p[i] >= 0x80) {
			n = utf8_len(p + i, len - i);
			if (n < 0 && !final)
				break; /* the rest comes with the next piece */
			if (n > 0 && bidi(code_point(p + i, n))) {
				if (pv_buf_add(out, in + start, i - start) < 0 ||
				    visible(out, code_point(p + i, n)) < 0)
					return -1;
				i += (size_t)n;
				start = i;
				continue;
			}
			/* U+0080..U+009F (C2 80..C2 9F): C1 controls */
			if (n > 0 && !(p[i] == 0xc2 && p[i + 1] < 0xa0)) {
				i += (size_t)n;
				continue;
			}
			n = 1;
			if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] < 0xa0)
				n = 2;
		}
		if (pv_buf_add(out, in + start, i - start) < 0)
			return -1;
		for (int k = 0; k < n; k++) {
			snprintf(hex, sizeof(hex), "\\x%02x", p[i + (size_t)k]);
			if (pv_buf_addstr(out, hex) < 0)
				return -1;
		}
		i += (size_t)n;
		start = i;
	}
	if (pv_buf_add(out, in + start, i - start) < 0)
		return -1;
	return (long)i;
}

#define FFFD "\xef\xbf\xbd"

void pv_escape_xmln(struct pv_buf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;

	while (i < n) {
		const char *e = NULL;
		int len = 1;
		unsigned cp = p[i];

		switch (p[i]) {
		case '&':
			e = "&amp;";
			break;
		case '<':
			e = "&lt;";
			break;
		case '>':
			e = "&gt;";
			break;
		case '"':
			e = "&quot;";
			break;
		case '\'':
			e = "&#39;";
			break;
		default:
			if (p[i] >= 0x80) {
				len = utf8_len(p + i, n - i);
				if (len <= 0) {
					len = 1; /* not UTF-8: this byte alone */
					e = FFFD;
					break;
				}
				cp = code_point(p + i, len);
			}
			if ((cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7f && cp < 0xa0) ||
			    cp == 0xfffe || cp == 0xffff)
				e = FFFD;
			break;
		}
		if (!e && !bidi(cp)) {
			i += (size_t)len;
			continue;
		}
		pv_buf_add(out, s + start, i - start);
		if (e)
			pv_buf_addstr(out, e);
		else
			visible(out, cp);
		i += (size_t)len;
		start = i;
	}
	pv_buf_add(out, s + start, i - start);
}

void pv_escape_xml(struct pv_buf *out, const char *s)
{
	if (s)
		pv_escape_xmln(out, s, strlen(s));
}
