/* remote/quote.c: quoting for POSIX sh, cmd.exe and PowerShell (see quote.h for each one's
 * rules and why cmd.exe refuses what it cannot quote). */
#include "remote/quote.h"

#include "util/err.h"

#include <stdint.h>
#include <string.h>

int pv_remote_quote(struct pv_buf *b, const char *s)
{
	pv_buf_addstr(b, "'");
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "'");

		pv_buf_add(b, p, n);
		p += n;
		if (*p == '\'') {
			pv_buf_addstr(b, "'\\''");
			p++;
		}
	}
	return pv_buf_addstr(b, "'");
}

int pv_remote_var(struct pv_buf *b, const char *name, const char *value)
{
	pv_buf_addf(b, "%s=", name);
	pv_remote_quote(b, value);
	return pv_buf_addstr(b, "\n");
}

/* ---- cmd.exe ---- */

int pv_remote_quote_cmd(struct pv_buf *b, const char *s)
{
	size_t len = strlen(s);

	if (!len)
		return pv_error(PV_ECONFIG, "an empty argument cannot be passed to cmd.exe");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return pv_error(PV_ECONFIG,
					"a value holding the control character 0x%02x cannot be "
					"passed to cmd.exe safely",
					*p);
		if (*p > 0x7f)
			return pv_error(PV_ECONFIG,
					"'%.64s' holds a non-ASCII byte (0x%02x); expected ASCII "
					"only in a value passed to cmd.exe (the console code page "
					"may turn such a character into a quote)",
					s, *p);
		if (*p == '"' || *p == '%' || *p == '!')
			return pv_error(PV_ECONFIG,
					"'%.64s' holds '%c', which cmd.exe expands or takes as the "
					"end of a quoted argument even inside double quotes; "
					"expected none of \", %% and !",
					s, *p);
	}
	if (s[len - 1] == '\\')
		return pv_error(PV_ECONFIG,
				"'%.64s' ends with '\\', which a Windows program reads as escaping "
				"the closing quote; expected no trailing '\\'",
				s);
	pv_buf_addstr(b, "\"");
	pv_buf_add(b, s, len);
	if (pv_buf_addstr(b, "\"") < 0)
		return pv_error(PV_EIO, "out of memory");
	return 0;
}

/* ---- PowerShell ---- */

/* The code point of the UTF-8 sequence at p and its length in *n; -1 when invalid (overlong,
 * surrogate, beyond U+10FFFF or cut short). */
static int32_t utf8_at(const unsigned char *p, size_t *n)
{
	uint32_t cp;
	size_t len;

	if (p[0] < 0x80) {
		*n = 1;
		return p[0];
	}
	if ((p[0] & 0xe0) == 0xc0)
		cp = p[0] & 0x1f, len = 2;
	else if ((p[0] & 0xf0) == 0xe0)
		cp = p[0] & 0x0f, len = 3;
	else if ((p[0] & 0xf8) == 0xf0)
		cp = p[0] & 0x07, len = 4;
	else
		return -1;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return -1;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	*n = len;
	return (int32_t)cp;
}

/* The characters PowerShell's tokenizer takes as a single quote (its CharExtensions
 * IsSingleQuote): ' and the four typographic ones. */
static int ps_single_quote(int32_t cp)
{
	return cp == '\'' || (cp >= 0x2018 && cp <= 0x201b);
}

int pv_remote_quote_ps(struct pv_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	/* check the whole string first: b is left as it was when s is refused */
	for (size_t i = 0; p[i]; i += n) {
		int32_t cp = utf8_at(p + i, &n);

		if (cp < 0)
			return pv_error(PV_ECONFIG,
					"a value that is not valid UTF-8 (byte 0x%02x) cannot be "
					"passed to PowerShell safely",
					p[i]);
		if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
			return pv_error(PV_ECONFIG,
					"a value holding the control character U+%04X cannot be "
					"passed to PowerShell safely",
					(unsigned)cp);
	}
	pv_buf_addstr(b, "'");
	for (size_t i = 0; p[i]; i += n) {
		int32_t cp = utf8_at(p + i, &n);

		pv_buf_add(b, p + i, n);
		if (ps_single_quote(cp))
			pv_buf_add(b, p + i, n);
	}
	if (pv_buf_addstr(b, "'") < 0)
		return pv_error(PV_EIO, "out of memory");
	return 0;
}
