/* playbooks/schema.c: the typed getters of playbooks/schema.h: messages naming the node
 * (file:line:col or the override that made it), the key check with its suggestions, and one
 * getter per kind of value (text, integer, number, boolean, one of a list, path, IP address,
 * DNS name, DN). The playbook, the fileset and the inventory's YAML all read through these. */
#include "playbooks/schema.h"

#include "playbooks/tree.h"
#include "util/err.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- messages ---------------------------------------------------------------------------- */

int pv_playbook_schema_oom(void)
{
	return pv_error(PV_EIO, "out of memory");
}

/* "command line: option 'K=V'", the value hidden when it may be a password. */
void pv_playbook_schema_option(const char *o, bool redact, char *buf, size_t sz)
{
	const char *eq = strchr(o, '=');
	size_t kl = eq ? (size_t)(eq - o) : strlen(o);

	if (eq && (redact || memmem(o, kl, "pass", 4) || memmem(o, kl, "secret", 6)))
		snprintf(buf, sz, "command line: option '%.*s=<hidden>'", (int)kl, o);
	else
		snprintf(buf, sz, "command line: option '%s'", o);
}

/* Where a node came from: "FILE:LINE:COL" or the override that made it. */
void pv_playbook_schema_where(const struct pv_playbook_schema *sc,
			      const struct pv_playbook_node *at, char *buf, size_t sz)
{
	if (!at)
		snprintf(buf, sz, "%s", sc->name);
	else if (at->origin < 0)
		snprintf(buf, sz, "%s:%d:%d", sc->name, at->line, at->col);
	else
		pv_playbook_schema_option(sc->ovr[at->origin], sc->redact, buf, sz);
}

int pv_playbook_schema_fail(struct pv_playbook_schema *sc, const struct pv_playbook_node *at,
			    const char *fmt, ...)
{
	char loc[512], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pv_playbook_schema_where(sc, at, loc, sizeof(loc));
	return pv_error(PV_ECONFIG, "%s: %s", loc, msg);
}

/* Put the location (and the key path, when given) in front of the message a helper
 * (names.c) just recorded, and a hint after it. */
int pv_playbook_schema_fail_recorded(struct pv_playbook_schema *sc,
				     const struct pv_playbook_node *at, const char *path,
				     const char *hint)
{
	char loc[512], msg[1024];

	pv_playbook_schema_where(sc, at, loc, sizeof(loc));
	snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	return pv_error(PV_ECONFIG, "%s: %s%s%s%s%s", loc, path ? "'" : "", path ? path : "",
			path ? "': " : "", msg, hint ? hint : "");
}

const char *pv_playbook_schema_kind(const struct pv_playbook_node *n)
{
	if (n->kind == PV_PLAYBOOK_NODE_MAPPING)
		return "a mapping";
	if (n->kind == PV_PLAYBOOK_NODE_SEQUENCE)
		return "a sequence";
	return pv_playbook_tree_is_null(n) ? "empty" : "a string";
}

/* Optimal string alignment distance (edits and adjacent swaps), capped for short keys. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[33][33];

	if (la > 32 || lb > 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1], v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/* " (did you mean 'x'?)" for the closest word within 2 edits, else "". */
void pv_playbook_schema_suggest(const char *word, const char *const *words, char *buf, size_t sz)
{
	size_t best = 3, d;
	const char *pick = NULL;

	for (size_t i = 0; words[i]; i++) {
		d = distance(word, words[i]);
		if (d < best) {
			best = d;
			pick = words[i];
		}
	}
	if (pick)
		snprintf(buf, sz, " (did you mean '%s'?)", pick);
	else
		buf[0] = '\0';
}

void pv_playbook_schema_join(const char *const *words, char *buf, size_t sz)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; words[i] && used < sz; i++) {
		int w = snprintf(buf + used, sz - used, "%s%s", i ? ", " : "", words[i]);

		if (w < 0)
			return;
		used += (size_t)w;
	}
}

void pv_playbook_schema_key_path(char *buf, size_t sz, const char *parent, const char *key)
{
	if (parent && *parent)
		snprintf(buf, sz, "%s.%s", parent, key);
	else
		snprintf(buf, sz, "%s", key);
}

/* ---- typed getters ------------------------------------------------------------------------ */

int pv_playbook_schema_unknown(struct pv_playbook_schema *sc, const struct pv_playbook_node *key,
			       const char *in, const char *const *keys)
{
	char list[256], hint[64];

	pv_playbook_schema_suggest(key->text, keys, hint, sizeof(hint));
	pv_playbook_schema_join(keys, list, sizeof(list));
	return pv_playbook_schema_fail(sc, key, "unknown key '%s' %s%s; expected one of: %s",
				       key->text, in, hint, list);
}

bool pv_playbook_schema_known(const char *key, const char *const *keys)
{
	for (size_t j = 0; keys[j]; j++)
		if (!strcmp(keys[j], key))
			return true;
	return false;
}

int pv_playbook_schema_keys(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *path, const char *const *keys, const char *expect)
{
	char in[160];

	if (map->kind != PV_PLAYBOOK_NODE_MAPPING) {
		if (!*path)
			return pv_playbook_schema_fail(
				sc, map, "%s is %s; expected a mapping of settings",
				sc->doc ? sc->doc : "the document", pv_playbook_schema_kind(map));
		return pv_playbook_schema_fail(sc, map, "'%s' is %s; expected %s", path,
					       pv_playbook_schema_kind(map), expect);
	}
	if (*path)
		snprintf(in, sizeof(in), "in '%s'", path);
	else
		snprintf(in, sizeof(in), "at top level");
	for (size_t i = 0; i < map->n; i++) {
		const struct pv_playbook_node *k = map->keys[i];

		if (!pv_playbook_schema_known(k->text, keys))
			return pv_playbook_schema_unknown(sc, k, in, keys);
		for (size_t j = 0; j < i; j++) {
			if (strcmp(map->keys[j]->text, k->text))
				continue;
			if (map->keys[j]->origin < 0)
				return pv_playbook_schema_fail(
					sc, k,
					"duplicate key '%s' %s (first at line %d); "
					"expected each key once",
					k->text, in, map->keys[j]->line);
			return pv_playbook_schema_fail(
				sc, k, "duplicate key '%s' %s; expected each key once", k->text,
				in);
		}
	}
	return 0;
}

/* The text of a scalar with a value; anything else is an error naming path and expect. */
int pv_playbook_schema_text_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
			       const char *path, const char *expect, const char **out)
{
	if (v->kind != PV_PLAYBOOK_NODE_SCALAR)
		return pv_playbook_schema_fail(sc, v, "'%s' is %s; expected %s", path,
					       pv_playbook_schema_kind(v), expect);
	if (pv_playbook_tree_is_null(v))
		return pv_playbook_schema_fail(sc, v, "'%s' has no value; expected %s", path,
					       expect);
	if (!v->text[0])
		return pv_playbook_schema_fail(sc, v, "'%s' is empty; expected %s", path, expect);
	*out = v->text;
	return 0;
}

/* A present key as text: *out NULL when absent. */
int pv_playbook_schema_text(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, const char *expect,
			    const char **out, const struct pv_playbook_node **at)
{
	const struct pv_playbook_node *v = pv_playbook_tree_get(map, key);
	char path[256];

	*out = NULL;
	if (at)
		*at = v;
	if (!v)
		return 0;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	return pv_playbook_schema_text_at(sc, v, path, expect, out);
}

int pv_playbook_schema_set(char **dst, const char *s)
{
	char *d = strdup(s);

	if (!d)
		return pv_playbook_schema_oom();
	free(*dst);
	*dst = d;
	return 0;
}

/* A string key: *dst replaced when present, kept (a default or NULL) when absent. */
int pv_playbook_schema_str(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			   const char *parent, const char *key, const char *expect, char **dst,
			   const struct pv_playbook_node **at)
{
	const char *s;
	int r;

	if ((r = pv_playbook_schema_text(sc, map, parent, key, expect, &s, at)) || !s)
		return r;
	return pv_playbook_schema_set(dst, s);
}

int pv_playbook_schema_long_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
			       const char *path, long lo, long hi, long *dst)
{
	char expect[64], *end;
	const char *s;
	long val;
	int r;

	snprintf(expect, sizeof(expect), "an integer from %ld to %ld", lo, hi);
	if ((r = pv_playbook_schema_text_at(sc, v, path, expect, &s)))
		return r;
	errno = 0;
	val = strtol(s, &end, 10);
	if (*end || end == s || isspace((unsigned char)*s))
		return pv_playbook_schema_fail(
			sc, v, "'%s' is '%.64s', not an integer; expected %s", path, s, expect);
	if (errno == ERANGE || val < lo || val > hi)
		return pv_playbook_schema_fail(sc, v, "'%s' is %.64s, out of range; expected %s",
					       path, s, expect);
	*dst = val;
	return 0;
}

int pv_playbook_schema_long(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, long lo, long hi, long *dst,
			    const struct pv_playbook_node **at)
{
	const struct pv_playbook_node *v = pv_playbook_tree_get(map, key);
	char path[256];

	if (!v)
		return 0;
	if (at)
		*at = v;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	return pv_playbook_schema_long_at(sc, v, path, lo, hi, dst);
}

int pv_playbook_schema_int(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			   const char *parent, const char *key, int lo, int hi, int *dst)
{
	long v = *dst;
	int r = pv_playbook_schema_long(sc, map, parent, key, lo, hi, &v, NULL);

	if (!r)
		*dst = (int)v;
	return r;
}

int pv_playbook_schema_uint(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, unsigned lo, unsigned hi,
			    unsigned *dst, const struct pv_playbook_node **at)
{
	long v = *dst;
	int r = pv_playbook_schema_long(sc, map, parent, key, lo, hi, &v, at);

	if (!r)
		*dst = (unsigned)v;
	return r;
}

/* A number: decimal digits with at most one '.' (0.5, 2, 1.25; no sign, exponent or hex). */
int pv_playbook_schema_number(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			      const char *parent, const char *key, double lo, double hi,
			      double *dst)
{
	const struct pv_playbook_node *v;
	char expect[96], path[256];
	const char *s;
	size_t digits, dots;
	double val;
	int r;

	snprintf(expect, sizeof(expect), "a number from %g to %g such as 1.5", lo, hi);
	if ((r = pv_playbook_schema_text(sc, map, parent, key, expect, &s, &v)) || !s)
		return r;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	digits = strspn(s, "0123456789.");
	dots = 0;
	for (const char *p = s; *p; p++)
		dots += *p == '.';
	if (s[digits] || dots > 1 || !strpbrk(s, "0123456789"))
		return pv_playbook_schema_fail(sc, v, "'%s' is '%.64s', not a number; expected %s",
					       path, s, expect);
	val = strtod(s, NULL);
	if (!(val >= lo && val <= hi))
		return pv_playbook_schema_fail(sc, v, "'%s' is %.64s, out of range; expected %s",
					       path, s, expect);
	*dst = val;
	return 0;
}

int pv_playbook_schema_parse_bool(const char *s, bool *out)
{
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes"))
		*out = true;
	else if (!strcasecmp(s, "false") || !strcasecmp(s, "no"))
		*out = false;
	else
		return -1;
	return 0;
}

int pv_playbook_schema_bool(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, bool *dst)
{
	const struct pv_playbook_node *v;
	const char *expect = "true or false (yes or no)", *s;
	char path[256];
	int r;

	if ((r = pv_playbook_schema_text(sc, map, parent, key, expect, &s, &v)) || !s)
		return r;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	if (pv_playbook_schema_parse_bool(s, dst))
		return pv_playbook_schema_fail(sc, v, "'%s' is '%.64s'; expected %s", path, s,
					       expect);
	return 0;
}

int pv_playbook_schema_enum_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
			       const char *path, const char *const *names, const char *expect,
			       int *dst)
{
	char list[128], hint[64];
	const char *s;
	int r;

	if (!expect) {
		snprintf(list, sizeof(list), "one of: ");
		pv_playbook_schema_join(names, list + strlen(list), sizeof(list) - strlen(list));
		expect = list;
	}
	if ((r = pv_playbook_schema_text_at(sc, v, path, expect, &s)))
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(names[i], s)) {
			*dst = i;
			return 0;
		}
	}
	pv_playbook_schema_suggest(s, names, hint, sizeof(hint));
	return pv_playbook_schema_fail(sc, v, "'%s' is '%.64s'%s; expected %s", path, s, hint,
				       expect);
}

int pv_playbook_schema_enum(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, const char *const *names, int *dst)
{
	const struct pv_playbook_node *v = pv_playbook_tree_get(map, key);
	char path[256];

	if (!v)
		return 0;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	return pv_playbook_schema_enum_at(sc, v, path, names, NULL, dst);
}

int pv_playbook_schema_require(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			       const char *parent, const char *key, const char *form)
{
	if (pv_playbook_tree_get(map, key))
		return 0;
	if (*parent)
		return pv_playbook_schema_fail(sc, map,
					       "missing required key '%s' in '%s'; expected %s: %s",
					       key, parent, key, form);
	return pv_playbook_schema_fail(
		sc, map, "missing required key '%s' at top level; expected %s: %s", key, key, form);
}

/* ---- paths -------------------------------------------------------------------------------- */

const char *pv_playbook_schema_home(void)
{
	const char *h = getenv("HOME");
	const struct passwd *pw;

	if (h && *h)
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* p made absolute: "~/x" under $HOME, a relative path under the playbook's folder. */
char *pv_playbook_schema_resolve(const char *dir, const char *p)
{
	char *out;

	if (p[0] == '/')
		return strdup(p);
	if (p[0] == '~' && (p[1] == '/' || !p[1]))
		return asprintf(&out, "%s%s", pv_playbook_schema_home(), p + 1) < 0 ? NULL : out;
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return asprintf(&out, "%s/%s", dir, p) < 0 ? NULL : out;
}

int pv_playbook_schema_path(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, char **dst)
{
	const struct pv_playbook_node *v;
	const char *s;
	char *abs, cwd[PATH_MAX] = "";
	int r;

	if ((r = pv_playbook_schema_text(sc, map, parent, key, "a file path", &s, &v)) || !s)
		return r;
	/* a path typed on the command line means what it means in the shell it was typed in */
	if (v->origin >= 0 && s[0] != '/' && s[0] != '~' && !getcwd(cwd, sizeof(cwd)))
		return pv_error(PV_EIO, "cannot find the current folder: %s", strerror(errno));
	if (!(abs = pv_playbook_schema_resolve(v->origin >= 0 ? cwd : sc->dir, s)))
		return pv_playbook_schema_oom();
	free(*dst);
	*dst = abs;
	return 0;
}

/* ---- value checks ------------------------------------------------------------------------- */

bool pv_playbook_schema_is_ip(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

int pv_playbook_schema_ip(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			  const char *parent, const char *key, char **dst)
{
	const char *expect = "an IPv4 or IPv6 address such as 198.18.0.20", *s;
	const struct pv_playbook_node *v;
	char path[256];
	int r;

	if ((r = pv_playbook_schema_text(sc, map, parent, key, expect, &s, &v)) || !s)
		return r;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	if (!pv_playbook_schema_is_ip(s))
		return pv_playbook_schema_fail(
			sc, v, "'%s' is '%.64s', not an IP address; expected %s", path, s, expect);
	return pv_playbook_schema_set(dst, s);
}

/* DNS-style name: dot-separated labels of letters, digits, '-' and (for hosts) '_'.
 * Returns NULL when fine, else what is wrong. */
const char *pv_playbook_schema_bad_dns(const char *s, bool underscore)
{
	size_t label = 0;

	if (strlen(s) > 253)
		return "is longer than 253 characters";
	for (const char *p = s;; p++) {
		if (*p == '.' || !*p) {
			if (!label)
				return "has an empty label";
			if (p[-1] == '-')
				return "has a label ending with '-'";
			if (label > 63)
				return "has a label longer than 63 characters";
			if (!*p)
				return NULL;
			label = 0;
			continue;
		}
		if (!isalnum((unsigned char)*p) && *p != '-' && !(underscore && *p == '_'))
			return "contains a character other than letters, digits, '-' and '.'";
		if (!label && *p == '-')
			return "has a label starting with '-'";
		label++;
	}
}

int pv_playbook_schema_dns(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			   const char *parent, const char *key, bool underscore, const char *expect,
			   char **dst, const struct pv_playbook_node **at)
{
	const struct pv_playbook_node *v;
	const char *s, *why;
	char path[256];
	int r;

	if ((r = pv_playbook_schema_text(sc, map, parent, key, expect, &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	if ((why = pv_playbook_schema_bad_dns(s, underscore)))
		return pv_playbook_schema_fail(sc, v, "'%s' value '%.64s' %s; expected %s", path, s,
					       why, expect);
	return pv_playbook_schema_set(dst, s);
}

/* A distinguished name, checked loosely: every comma-separated part is ATTR=VALUE. */
int pv_playbook_schema_dn(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			  const char *parent, const char *key, char **dst)
{
	const char *expect = "a DN such as OU=provision,DC=lab,DC=test", *s;
	const struct pv_playbook_node *v;
	char path[256];
	int r;

	if ((r = pv_playbook_schema_text(sc, map, parent, key, expect, &s, &v)) || !s)
		return r;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return pv_playbook_schema_fail(
				sc, v, "'%s' contains the control character 0x%02x; expected %s",
				path, *p, expect);
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);

		if (!eq || eq == p || eq == p + len - 1)
			return pv_playbook_schema_fail(
				sc, v, "'%s' is '%.64s', not a DN; expected %s", path, s, expect);
		/* the OU's name reaches the hosts in the lab's tags and messages */
		if (eq[1] == '-')
			return pv_playbook_schema_fail(
				sc, v,
				"'%s' is '%.64s', in which '%.*s' starts with '-'; expected "
				"names starting with a letter or digit",
				path, s, (int)(p + len - eq - 1), eq + 1);
		p += len;
		if (*p == ',' && !*++p)
			return pv_playbook_schema_fail(sc, v, "'%s' ends with ','; expected %s",
						       path, expect);
	}
	return pv_playbook_schema_set(dst, s);
}
