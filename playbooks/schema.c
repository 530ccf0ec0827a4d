/* playbooks/schema.c: the playbook's typed getters: messages naming the node (file:line:col or
 * the override that made it), key checks with suggestions, and one getter per kind of value
 * (text, integer, number, boolean, one of a list, path, IP address, DNS name, DN, template).
 * Moved as it was from playbook.c; playbook_internal.h declares what the readers use. */
#include "playbooks/playbook_internal.h"

#include "playbooks/names.h"
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

int oom(void)
{
	return pv_error(PV_EIO, "out of memory");
}

/* "command line: option 'K=V'", the value hidden when it may be a password. */
void option_name(const char *o, bool redact, char *buf, size_t sz)
{
	const char *eq = strchr(o, '=');
	size_t kl = eq ? (size_t)(eq - o) : strlen(o);

	if (eq && (redact || memmem(o, kl, "pass", 4) || memmem(o, kl, "secret", 6)))
		snprintf(buf, sz, "command line: option '%.*s=<hidden>'", (int)kl, o);
	else
		snprintf(buf, sz, "command line: option '%s'", o);
}

/* Where a node came from: "FILE:LINE:COL" or the override that made it. */
void where(const struct ctx *c, const struct pv_node *at, char *buf, size_t sz)
{
	if (!at)
		snprintf(buf, sz, "%s", c->name);
	else if (at->origin < 0)
		snprintf(buf, sz, "%s:%d:%d", c->name, at->line, at->col);
	else
		option_name(c->ovr[at->origin], c->redact, buf, sz);
}

int fail(struct ctx *c, const struct pv_node *at, const char *fmt, ...)
{
	char loc[512], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	where(c, at, loc, sizeof(loc));
	return pv_error(PV_ECONFIG, "%s: %s", loc, msg);
}

/* Put the location (and the key path, when given) in front of the message a helper
 * (names.c) just recorded, and a hint after it. */
int fail_recorded(struct ctx *c, const struct pv_node *at, const char *path, const char *hint)
{
	char loc[512], msg[1024];

	where(c, at, loc, sizeof(loc));
	snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	return pv_error(PV_ECONFIG, "%s: %s%s%s%s%s", loc, path ? "'" : "", path ? path : "",
			path ? "': " : "", msg, hint ? hint : "");
}

const char *kind_name(const struct pv_node *n)
{
	if (n->kind == PV_NODE_MAPPING)
		return "a mapping";
	if (n->kind == PV_NODE_SEQUENCE)
		return "a sequence";
	return pv_tree_is_null(n) ? "empty" : "a string";
}

/* Optimal string alignment distance (edits and adjacent swaps), capped for short keys. */
size_t distance(const char *a, const char *b)
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
void suggest(const char *word, const char *const *words, char *buf, size_t sz)
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

void join_words(const char *const *words, char *buf, size_t sz)
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

void key_path(char *buf, size_t sz, const char *parent, const char *key)
{
	if (parent && *parent)
		snprintf(buf, sz, "%s.%s", parent, key);
	else
		snprintf(buf, sz, "%s", key);
}

/* ---- typed getters ------------------------------------------------------------------------ */

/* map is a mapping whose keys are all in keys[], each once. path "" is the top level. */
int check_map(struct ctx *c, const struct pv_node *map, const char *path, const char *const *keys,
	      const char *expect)
{
	char list[256], hint[64], in[160];

	if (map->kind != PV_NODE_MAPPING) {
		if (!*path)
			return fail(c, map, "the playbook is %s; expected a mapping of settings",
				    kind_name(map));
		return fail(c, map, "'%s' is %s; expected %s", path, kind_name(map), expect);
	}
	if (*path)
		snprintf(in, sizeof(in), "in '%s'", path);
	else
		snprintf(in, sizeof(in), "at top level");
	for (size_t i = 0; i < map->n; i++) {
		const struct pv_node *k = map->keys[i];
		bool known = false;

		for (size_t j = 0; keys[j] && !known; j++)
			known = !strcmp(keys[j], k->text);
		if (!known) {
			suggest(k->text, keys, hint, sizeof(hint));
			join_words(keys, list, sizeof(list));
			return fail(c, k, "unknown key '%s' %s%s; expected one of: %s", k->text, in,
				    hint, list);
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(map->keys[j]->text, k->text))
				continue;
			if (map->keys[j]->origin < 0)
				return fail(c, k,
					    "duplicate key '%s' %s (first at line %d); "
					    "expected each key once",
					    k->text, in, map->keys[j]->line);
			return fail(c, k, "duplicate key '%s' %s; expected each key once", k->text,
				    in);
		}
	}
	return 0;
}

/* The text of a scalar with a value; anything else is an error naming path and expect. */
int text_of(struct ctx *c, const struct pv_node *v, const char *path, const char *expect,
	    const char **out)
{
	if (v->kind != PV_NODE_SCALAR)
		return fail(c, v, "'%s' is %s; expected %s", path, kind_name(v), expect);
	if (pv_tree_is_null(v))
		return fail(c, v, "'%s' has no value; expected %s", path, expect);
	if (!v->text[0])
		return fail(c, v, "'%s' is empty; expected %s", path, expect);
	*out = v->text;
	return 0;
}

/* A present key as text: *out NULL when absent. */
int get_text(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     const char *expect, const char **out, const struct pv_node **at)
{
	const struct pv_node *v = pv_tree_get(map, key);
	char path[256];

	*out = NULL;
	if (at)
		*at = v;
	if (!v)
		return 0;
	key_path(path, sizeof(path), parent, key);
	return text_of(c, v, path, expect, out);
}

int set_str(char **dst, const char *s)
{
	char *d = strdup(s);

	if (!d)
		return oom();
	free(*dst);
	*dst = d;
	return 0;
}

/* A string key: *dst replaced when present, kept (a default or NULL) when absent. */
int get_str(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	    const char *expect, char **dst, const struct pv_node **at)
{
	const char *s;
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, at)) || !s)
		return r;
	return set_str(dst, s);
}

int get_long(struct ctx *c, const struct pv_node *map, const char *parent, const char *key, long lo,
	     long hi, long *dst, const struct pv_node **at)
{
	const struct pv_node *v;
	char expect[64], path[256], *end;
	const char *s;
	long val;
	int r;

	snprintf(expect, sizeof(expect), "an integer from %ld to %ld", lo, hi);
	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	key_path(path, sizeof(path), parent, key);
	errno = 0;
	val = strtol(s, &end, 10);
	if (*end || end == s || isspace((unsigned char)*s))
		return fail(c, v, "'%s' is '%.64s', not an integer; expected %s", path, s, expect);
	if (errno == ERANGE || val < lo || val > hi)
		return fail(c, v, "'%s' is %.64s, out of range; expected %s", path, s, expect);
	*dst = val;
	return 0;
}

int get_int(struct ctx *c, const struct pv_node *map, const char *parent, const char *key, int lo,
	    int hi, int *dst)
{
	long v = *dst;
	int r = get_long(c, map, parent, key, lo, hi, &v, NULL);

	if (!r)
		*dst = (int)v;
	return r;
}

int get_uint(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     unsigned lo, unsigned hi, unsigned *dst, const struct pv_node **at)
{
	long v = *dst;
	int r = get_long(c, map, parent, key, lo, hi, &v, at);

	if (!r)
		*dst = (unsigned)v;
	return r;
}

/* A number: decimal digits with at most one '.' (0.5, 2, 1.25; no sign, exponent or hex). */
int get_number(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	       double lo, double hi, double *dst)
{
	const struct pv_node *v;
	char expect[96], path[256];
	const char *s;
	size_t digits, dots;
	double val;
	int r;

	snprintf(expect, sizeof(expect), "a number from %g to %g such as 1.5", lo, hi);
	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	digits = strspn(s, "0123456789.");
	dots = 0;
	for (const char *p = s; *p; p++)
		dots += *p == '.';
	if (s[digits] || dots > 1 || !strpbrk(s, "0123456789"))
		return fail(c, v, "'%s' is '%.64s', not a number; expected %s", path, s, expect);
	val = strtod(s, NULL);
	if (!(val >= lo && val <= hi))
		return fail(c, v, "'%s' is %.64s, out of range; expected %s", path, s, expect);
	*dst = val;
	return 0;
}

int parse_bool(const char *s, bool *out)
{
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes"))
		*out = true;
	else if (!strcasecmp(s, "false") || !strcasecmp(s, "no"))
		*out = false;
	else
		return -1;
	return 0;
}

int get_bool(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     bool *dst)
{
	const struct pv_node *v;
	const char *expect = "true or false (yes or no)", *s;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	if (parse_bool(s, dst))
		return fail(c, v, "'%s' is '%.64s'; expected %s", path, s, expect);
	return 0;
}

int get_enum(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     const char *const *names, int *dst)
{
	const struct pv_node *v;
	char expect[128], path[256], hint[64];
	const char *s;
	int r;

	snprintf(expect, sizeof(expect), "one of: ");
	join_words(names, expect + strlen(expect), sizeof(expect) - strlen(expect));
	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	for (int i = 0; names[i]; i++) {
		if (!strcmp(names[i], s)) {
			*dst = i;
			return 0;
		}
	}
	key_path(path, sizeof(path), parent, key);
	suggest(s, names, hint, sizeof(hint));
	return fail(c, v, "'%s' is '%.64s'%s; expected %s", path, s, hint, expect);
}

int require(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	    const char *form)
{
	if (pv_tree_get(map, key))
		return 0;
	if (*parent)
		return fail(c, map, "missing required key '%s' in '%s'; expected %s: %s", key,
			    parent, key, form);
	return fail(c, map, "missing required key '%s' at top level; expected %s: %s", key, key,
		    form);
}

/* ---- paths -------------------------------------------------------------------------------- */

const char *home(void)
{
	const char *h = getenv("HOME");
	const struct passwd *pw;

	if (h && *h)
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* p made absolute: "~/x" under $HOME, a relative path under the playbook's folder. */
char *resolve(const char *dir, const char *p)
{
	char *out;

	if (p[0] == '/')
		return strdup(p);
	if (p[0] == '~' && (p[1] == '/' || !p[1]))
		return asprintf(&out, "%s%s", home(), p + 1) < 0 ? NULL : out;
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	return asprintf(&out, "%s/%s", dir, p) < 0 ? NULL : out;
}

int get_path(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     char **dst)
{
	const struct pv_node *v;
	const char *s;
	char *abs, cwd[PATH_MAX] = "";
	int r;

	if ((r = get_text(c, map, parent, key, "a file path", &s, &v)) || !s)
		return r;
	/* a path typed on the command line means what it means in the shell it was typed in */
	if (v->origin >= 0 && s[0] != '/' && s[0] != '~' && !getcwd(cwd, sizeof(cwd)))
		return pv_error(PV_EIO, "cannot find the current folder: %s", strerror(errno));
	if (!(abs = resolve(v->origin >= 0 ? cwd : c->pb->dir, s)))
		return oom();
	free(*dst);
	*dst = abs;
	return 0;
}

/* ---- value checks ------------------------------------------------------------------------- */

bool is_ip(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

int get_ip(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	   char **dst)
{
	const char *expect = "an IPv4 or IPv6 address such as 198.18.0.20", *s;
	const struct pv_node *v;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	if (!is_ip(s))
		return fail(c, v, "'%s' is '%.64s', not an IP address; expected %s", path, s,
			    expect);
	return set_str(dst, s);
}

/* DNS-style name: dot-separated labels of letters, digits, '-' and (for hosts) '_'.
 * Returns NULL when fine, else what is wrong. */
const char *bad_dns(const char *s, bool underscore)
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

int get_dns(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	    bool underscore, const char *expect, char **dst, const struct pv_node **at)
{
	const struct pv_node *v;
	const char *s, *why;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	key_path(path, sizeof(path), parent, key);
	if ((why = bad_dns(s, underscore)))
		return fail(c, v, "'%s' value '%.64s' %s; expected %s", path, s, why, expect);
	return set_str(dst, s);
}

void upcase(char *s)
{
	for (; *s; s++)
		*s = (char)toupper((unsigned char)*s);
}

void downcase(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* A distinguished name, checked loosely: every comma-separated part is ATTR=VALUE. */
int get_dn(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	   char **dst)
{
	const char *expect = "a DN such as OU=provision,DC=lab,DC=test", *s;
	const struct pv_node *v;
	char path[256];
	int r;

	if ((r = get_text(c, map, parent, key, expect, &s, &v)) || !s)
		return r;
	key_path(path, sizeof(path), parent, key);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return fail(c, v, "'%s' contains the control character 0x%02x; expected %s",
				    path, *p, expect);
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);

		if (!eq || eq == p || eq == p + len - 1)
			return fail(c, v, "'%s' is '%.64s', not a DN; expected %s", path, s,
				    expect);
		/* the OU's name reaches the hosts in the lab's tags and messages */
		if (eq[1] == '-')
			return fail(c, v,
				    "'%s' is '%.64s', in which '%.*s' starts with '-'; expected "
				    "names starting with a letter or digit",
				    path, s, (int)(p + len - eq - 1), eq + 1);
		p += len;
		if (*p == ',' && !*++p)
			return fail(c, v, "'%s' ends with ','; expected %s", path, expect);
	}
	return set_str(dst, s);
}

/* A folder path as given for key (at v): normalized (playbooks/names.h), absolute when
 * absolute, and not the root folder. where ends the expected form ("on the server such as
 * /srv/provision"). */
int check_folder(struct ctx *c, const struct pv_node *v, const char *key, const char *p,
		 bool absolute, const char *where)
{
	char what[128], hint[192];

	snprintf(what, sizeof(what), "'%s'", key);
	snprintf(hint, sizeof(hint), "; expected %s normalized path %s",
		 absolute ? "an absolute," : "a", where);
	if (pv_names_check_path(what, p, absolute))
		return fail_recorded(c, v, NULL, hint);
	if (!strcmp(p, "/"))
		return fail(c, v, "'%s' is '/', the root folder; expected a folder below it%s", key,
			    hint + 1);
	if (pv_names_check_safe(what, p, 1))
		return fail_recorded(c, v, NULL, NULL);
	return 0;
}

/* A template key: placeholders checked against allowed and required. */
int get_template(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		 unsigned allowed, unsigned required, char **dst, const struct pv_node **at)
{
	const struct pv_node *v;
	const char *s;
	int r;

	if ((r = get_text(c, map, parent, key, "a name template", &s, &v)) || !s)
		return r;
	if (at)
		*at = v;
	if (pv_names_check_template(s, allowed, required)) {
		char path[256];

		key_path(path, sizeof(path), parent, key);
		return fail_recorded(c, v, path, NULL);
	}
	return set_str(dst, s);
}
