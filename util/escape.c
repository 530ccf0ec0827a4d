/* util/escape.c: text made safe for a terminal (see escape.h). */
#include "util/escape.h"

#include <stdio.h>

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
