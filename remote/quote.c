/* remote/quote.c: POSIX shell quoting (see quote.h). */
#include "remote/quote.h"

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
