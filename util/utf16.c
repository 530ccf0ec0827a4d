/* util/utf16.c: UTF-8 <-> UTF-16LE; see utf16.h. */
#include "util/utf16.h"

#include <string.h>

static int put16(struct pv_buf *out, uint16_t u)
{
	unsigned char le[2] = {(unsigned char)(u & 0xff), (unsigned char)(u >> 8)};

	return pv_buf_add(out, le, 2);
}

/* Decode one UTF-8 sequence at s (len bytes left); returns its length or 0 when invalid. */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0; /* overlong, out of range, or a surrogate */
	*cp = c;
	return n;
}

int pv_utf16le(struct pv_buf *out, const char *s, size_t len, int upper)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = utf8_next(p + i, len - i, &cp);

		if (n == 0)
			return -2;
		i += n;
		if (upper && cp >= 'a' && cp <= 'z')
			cp -= 'a' - 'A';
		if (cp >= 0x10000) {
			cp -= 0x10000;
			if (put16(out, (uint16_t)(0xd800 | (cp >> 10))) < 0 ||
			    put16(out, (uint16_t)(0xdc00 | (cp & 0x3ff))) < 0)
				return -1;
		} else if (put16(out, (uint16_t)cp) < 0) {
			return -1;
		}
	}
	if (!out->data)
		return pv_buf_add(out, "", 0);
	return 0;
}

int pv_utf16le_to_utf8(const uint8_t *in, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	if (len % 2)
		return -1;
	for (size_t i = 0; i < len; i += 2) {
		uint32_t cp = (uint32_t)(in[i] | in[i + 1] << 8);
		unsigned char b[4];
		size_t k;

		if (cp >= 0xd800 && cp < 0xdc00) {
			uint32_t lo;

			if (i + 4 > len || (lo = (uint32_t)(in[i + 2] | in[i + 3] << 8)) < 0xdc00 ||
			    lo > 0xdfff)
				return -1;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i += 2;
		} else if (cp >= 0xdc00 && cp < 0xe000) {
			return -1;
		}
		if (cp < 0x80)
			b[0] = (unsigned char)cp, k = 1;
		else if (cp < 0x800)
			b[0] = (unsigned char)(0xc0 | cp >> 6),
			b[1] = (unsigned char)(0x80 | (cp & 0x3f)), k = 2;
		else if (cp < 0x10000)
			b[0] = (unsigned char)(0xe0 | cp >> 12),
			b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)),
			b[2] = (unsigned char)(0x80 | (cp & 0x3f)), k = 3;
		else
			b[0] = (unsigned char)(0xf0 | cp >> 18),
			b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f)),
			b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f)),
			b[3] = (unsigned char)(0x80 | (cp & 0x3f)), k = 4;
		if (cap - o <= k)
			return -1;
		memcpy(out + o, b, k);
		o += k;
	}
	out[o] = 0;
	return 0;
}
