/* ldap/encode.c: DN/filter escaping and the unicodePwd encoding. */
#include "ldap/encode.h"

#include "util/utf16.h"

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

int pv_unicodepwd(struct pv_buf *out, const char *utf8, size_t len)
{
	static const unsigned char quote[2] = {'"', 0};
	int r;

	if (pv_buf_add(out, quote, 2) < 0)
		return -1;
	if ((r = pv_utf16le(out, utf8, len, 0)) != 0)
		return r;
	return pv_buf_add(out, quote, 2);
}
