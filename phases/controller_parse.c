/* phases/controller_parse.c: the remote controller's scripts' answers taken apart
 * (phases/scripts/ctl-reset.sh, ctl-status.sh): pure, so that the unit tests and the fuzz
 * target (tests/fuzz/fuzz_ctlout.c) reach them without a host (see controller.h). */
#include "phases/controller.h"

#include "util/err.h"

#include <stdio.h>
#include <string.h>

/* The line of out that starts with word (at the start of a line), NUL-free up to its end:
 * its text after word, its length in *len; NULL when there is none. */
static const char *line_of(const char *out, const char *word, size_t *len)
{
	size_t wl = strlen(word);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, wl)) {
			*len = strcspn(p + wl, "\n");
			return p + wl;
		}
	return NULL;
}

/* A count: digits only, no more than ULONG_MAX would hold (then NULL), at p; its end. */
static const char *count(const char *p, unsigned long *v)
{
	unsigned long n = 0;
	const char *s = p;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (~0UL - 9) / 10)
			return NULL;
		n = n * 10 + (unsigned long)(*p - '0');
	}
	*v = n;
	return p > s ? p : NULL;
}

static int unclear(const char *what)
{
	return pv_error(PV_EREMOTE, "the %s script's answer is not one it gives", what);
}

int pv_phases_controller_parse_reset(const char *out, struct pv_phases_controller_result *res)
{
	static const struct {
		const char *word, *state;
	} plain[] = {
		{"created", "created"},
		{"would-create", "would create"},
		{"empty", "empty"},
		{"absent", "absent"},
	};
	size_t len;
	const char *l = out ? line_of(out, "pv-ctl ", &len) : NULL, *p;
	unsigned long n;

	if (!l)
		return pv_error(PV_EREMOTE, "the reset command said nothing");
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (len == strlen(plain[i].word) && !strncmp(l, plain[i].word, len)) {
			res->state = plain[i].state;
			return PV_OK;
		}
	/* "moved N BACKUP" or "would-move N BACKUP": BACKUP an absolute path */
	if (!strncmp(l, "moved ", 6))
		p = l + 6;
	else if (!strncmp(l, "would-move ", 11))
		p = l + 11;
	else
		return unclear("reset");
	if (!(p = count(p, &n)) || *p != ' ' || p[1] != '/' ||
	    (size_t)(l + len - p - 1) >= sizeof(res->backup))
		return unclear("reset");
	res->state = l[0] == 'm' ? "moved" : "would move";
	res->entries = n;
	memcpy(res->backup, p + 1, (size_t)(l + len - p - 1));
	res->backup[l + len - p - 1] = '\0';
	return PV_OK;
}

int pv_phases_controller_parse_status(const char *out, struct pv_phases_controller_status *st)
{
	static const struct {
		const char *word, *kind;
	} kinds[] = {{"dir ", "folder"}, {"absent ", "absent"}, {"other ", "other"}};
	size_t len, i;
	const char *l = out ? line_of(out, "pv-ctl-status ", &len) : NULL, *p = NULL;
	unsigned long e, b;

	for (i = 0; l && i < sizeof(kinds) / sizeof(kinds[0]) && !p; i++)
		if (!strncmp(l, kinds[i].word, strlen(kinds[i].word)))
			p = l + strlen(kinds[i].word);
	if (!p || !(p = count(p, &e)) || *p != ' ' || !(p = count(p + 1, &b)) || p != l + len)
		return unclear("status");
	st->kind = kinds[i - 1].kind;
	st->entries = e;
	st->backups = b;
	return PV_OK;
}
