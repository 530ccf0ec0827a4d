/* ldap/encode.c: DN/filter escaping and the unicodePwd encoding. */
#include "ldap/encode.h"

#include "ldap/caps.h"
#include "util/err.h"

#include "util/utf16.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int pv_ldap_dn_escape(struct pv_buf *b, const char *v)
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

int pv_ldap_filter_escape(struct pv_buf *b, const char *v)
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

int pv_ldap_unicodepwd(struct pv_buf *out, const char *utf8, size_t len)
{
	static const unsigned char quote[2] = {'"', 0};
	int r;

	if (pv_buf_add(out, quote, 2) < 0)
		return -1;
	if ((r = pv_utf16le(out, utf8, len, 0)) != 0)
		return r;
	return pv_buf_add(out, quote, 2);
}

/* A number of a range (digits only, at most PV_LDAP_RANGE_MAX) at p: its end, else NULL. */
static const char *range_number(const char *p, unsigned long *v)
{
	unsigned long n = 0;
	const char *s = p;

	for (; *p >= '0' && *p <= '9'; p++) {
		n = n * 10 + (unsigned long)(*p - '0');
		if (n > PV_LDAP_RANGE_MAX)
			return NULL;
	}
	*v = n;
	return p > s ? p : NULL;
}

int pv_ldap_range_take(struct pv_ldap_range *r, const char *name, const char *attr, size_t nvals)
{
	size_t len = strlen(attr);
	unsigned long lo = 0, hi = 0;
	bool last = false;
	const char *p = "";

	if (strncasecmp(name, attr, len) != 0 || (name[len] && name[len] != ';'))
		return 0;
	if (name[len] && strncasecmp(name + len, ";range=", 7) != 0)
		return 0; /* another option of the attribute */
	if (nvals > PV_LDAP_VALUES_MAX - r->values) {
		pv_error(PV_EDIR, "the DC answered more than %d values of '%s'; refused",
			 PV_LDAP_VALUES_MAX, attr);
		return -1;
	}
	if (!name[len]) {
		/* the whole attribute: only as the answer to the first request */
		if (r->next || r->done)
			p = NULL;
		last = true;
	} else {
		/* LO is where this request asked to start; HI is '*' (the last slice) or a
		 * number at least LO, and a slice that is not the last holds values: each request
		 * moves on */
		p = range_number(name + len + 7, &lo);
		if (!p || *p != '-')
			p = NULL;
		else if (!strcmp(p + 1, "*"))
			last = true;
		else if ((p = range_number(p + 1, &hi)) && *p)
			p = NULL;
		if (p && (lo != r->next || r->done || (!last && (hi < lo || nvals == 0))))
			p = NULL;
	}
	if (!p) {
		pv_error(PV_EDIR,
			 "the DC answered '%.80s' where values from %lu were asked; refused (a "
			 "slice must start there and move on)",
			 name, r->next);
		return -1;
	}
	r->took = true;
	r->values += nvals;
	if (last)
		r->done = true;
	else
		r->next = hi + 1;
	return 1;
}

void pv_ldap_range_answer(struct pv_ldap_range *r)
{
	r->took = false;
}

int pv_ldap_range_next(struct pv_ldap_range *r, const char *attr, char *want, size_t len)
{
	if (r->done)
		return 0;
	if (!r->took && r->next) { /* a slice that was not the last, then nothing */
		pv_error(PV_EDIR, "the DC answered no slice of '%s' from value %lu on; refused",
			 attr, r->next);
		return -1;
	}
	if (!r->took)
		return 0; /* the entry has no such attribute */
	snprintf(want, len, "%s;range=%lu-*", attr, r->next);
	return 1;
}
