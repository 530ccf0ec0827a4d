/* phases/trees_parse.c: what the trees read from the server, taken apart: getent's
 * "name:uid:gid" lines and list-trees.sh's records. Pure (no I/O), so the unit tests and the
 * fuzz targets (tests/fuzz/fuzz_getent.c, fuzz_listing.c) reach them without a server. */
#include "phases/trees_internal.h"

#include "util/err.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A uid or gid as getent prints it: plain digits, at most 4294967294 ((uid_t)-1 is no id). */
static const char *id_of(const char *p, unsigned long *v)
{
	unsigned long n = 0;
	const char *s = p;

	for (; *p >= '0' && *p <= '9'; p++)
		if ((n = n * 10 + (unsigned long)(*p - '0')) > 4294967294UL)
			return NULL;
	*v = n;
	return p > s ? p : NULL;
}

int pv_phases_trees_getent_line(const char *line, const char *domain, char *name, size_t len,
				unsigned long *uid, unsigned long *gid)
{
	size_t dlen = strlen(domain), nlen = strcspn(line, ":");
	const char *p = line + nlen;
	unsigned long u, g;

	/* "LAB\name" (any separator: a character no user name of ours holds), or just "name"
	 * with winbind's default domain */
	bool prefixed = nlen > dlen && !strncasecmp(line, domain, dlen) &&
			!isalnum((unsigned char)line[dlen]) && !strchr("-_.", line[dlen]);

	/* a name (not only a domain and its separator) and two ids */
	if (!nlen || nlen >= len || (prefixed && nlen == dlen + 1) || *p != ':' ||
	    !(p = id_of(p + 1, &u)) || *p != ':' || !(p = id_of(p + 1, &g)) || *p)
		return 0;
	/* root, a system account or a system group: trees.pl works on the server as the uid and
	 * gid given here, so a server (or a domain) that maps a load user to one of them would
	 * have provision write as that account */
	if (u < PV_PHASES_TREES_ID_MIN || g < PV_PHASES_TREES_ID_MIN) {
		pv_error(PV_EREMOTE,
			 "getent gives '%.*s' as uid %lu, group %lu: provision never works as root "
			 "or a system account or group (ids below %d); check the server's idmap "
			 "ranges",
			 (int)nlen, line, u, g, PV_PHASES_TREES_ID_MIN);
		return -1;
	}
	if (prefixed) {
		line += dlen + 1;
		nlen -= dlen + 1;
	}
	memcpy(name, line, nlen);
	name[nlen] = '\0';
	*uid = u;
	*gid = g;
	return 1;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct have *)a)->path, ((const struct have *)b)->path);
}

struct have *pv_phases_trees_find(struct have *hv, size_t nh, const char *path)
{
	struct have key = {(char *)path, false, false, 0, 0};

	return nh ? bsearch(&key, hv, nh, sizeof(*hv), by_path) : NULL;
}

int pv_phases_trees_parse_listing(struct pv_buf *out, struct have **hv, size_t *nh)
{
	size_t n = 0, cap = 0;
	int r = PV_OK;

	*hv = NULL;
	*nh = 0;
	for (size_t at = 0; out->data && at < out->len;) {
		char *rec = out->data + at, type, *sp;
		size_t len = strnlen(rec, out->len - at);
		unsigned long long size;
		unsigned long uid;

		at += len + 1;
		if (sscanf(rec, "%c %llu %lu", &type, &size, &uid) != 3 ||
		    !(sp = strchr(rec + 2, ' ')) || !(sp = strchr(sp + 1, ' ')))
			continue;
		if (sp[1] == '.' && sp[2] == '/') /* list-trees.sh gives find ./FOLDER */
			sp += 2;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct have *p = realloc(*hv, nc * sizeof(*p));

			if (!p) {
				r = pv_error(PV_EIO, "out of memory");
				break;
			}
			*hv = p;
			cap = nc;
		}
		(*hv)[n++] = (struct have){sp + 1, type == 'd', type != 'd' && type != 'f',
					   type == 'f' ? size : 0, uid};
	}
	if (n)
		qsort(*hv, n, sizeof(**hv), by_path);
	*nh = n;
	return r;
}
