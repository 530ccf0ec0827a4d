/* ldap/encode.c: DN/filter escaping and the unicodePwd encoding. */
#include "ldap/encode.h"

#include <stdint.h>
#include <string.h>

int pv_dn_escape(struct pv_buf *b, const char *v)
{
	size_t n = strlen(v);

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];
		int r;

		/* RFC 4514 2.4: escape ,+"\<>; anywhere, '#' and ' ' in front, ' ' at the end,
		 * and NUL as a hex pair. '=' is escaped too, as AD itself does. */
		if (c == '\0' || c < 0x20 || c == 0x7f)
			r = pv_buf_addf(b, "\\%02x", c);
		else if (strchr(",+\"\\<>;=", c) || (i == 0 && (c == '#' || c == ' ')) ||
			 (i == n - 1 && c == ' '))
			r = pv_buf_addf(b, "\\%c", c);
		else
			r = pv_buf_add(b, &v[i], 1);
		if (r < 0)
			return -1;
	}
	if (!b->data)
		return pv_buf_add(b, "", 0);
	return 0;
}

int pv_filter_escape(struct pv_buf *b, const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		int r;

		if (*p == '*' || *p == '(' || *p == ')' || *p == '\\' || *p < 0x20)
			r = pv_buf_addf(b, "\\%02x", *p);
		else
			r = pv_buf_add(b, p, 1);
		if (r < 0)
			return -1;
	}
	if (!b->data)
		return pv_buf_add(b, "", 0);
	return 0;
}

static int put16(struct pv_buf *out, uint16_t u)
{
	unsigned char le[2] = { (unsigned char)(u & 0xff), (unsigned char)(u >> 8) };

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

int pv_unicodepwd(struct pv_buf *out, const char *utf8, size_t len)
{
	const unsigned char *s = (const unsigned char *)utf8;
	size_t i = 0;

	if (put16(out, '"') < 0)
		return -1;
	while (i < len) {
		uint32_t cp;
		size_t n = utf8_next(s + i, len - i, &cp);

		if (n == 0)
			return -2;
		i += n;
		if (cp >= 0x10000) {
			cp -= 0x10000;
			if (put16(out, (uint16_t)(0xd800 | (cp >> 10))) < 0 ||
			    put16(out, (uint16_t)(0xdc00 | (cp & 0x3ff))) < 0)
				return -1;
		} else if (put16(out, (uint16_t)cp) < 0) {
			return -1;
		}
	}
	return put16(out, '"');
}
