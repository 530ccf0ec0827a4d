/* playbooks/inventory.c: Ansible inventories (INI, YAML) -> the hosts of one group, with the
 * variables provision uses merged as Ansible merges them (see inventory.h).
 *
 * Both formats fill the same model: hosts and groups numbered by util/strset (names exact, in
 * order of first appearance), each with the few variables we keep and the line that set each;
 * groups know their hosts, children and parents. Merging follows Ansible's rule: of the groups a
 * host is in (and their ancestors, and 'all'), the one with the greatest depth (then the greatest
 * name) gives a variable; the host's own value wins over all of them. Jinja and ansible_connection
 * are judged on the merged values of the hosts asked for, so a templated variable elsewhere in the
 * file does not stop us. */
#include "playbooks/inventory.h"

#include "playbooks/tree.h"
#include "util/err.h"
#include "util/file.h"
#include "util/strset.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GROUPS_MAX   2000
#define NAME_MAX_LEN 255

/* The variables kept, and their spellings (the older ansible_ssh_* ones too). */
enum { V_HOST, V_PORT, V_USER, V_KEY, V_CONN, NV };
static const struct {
	const char *name;
	int var;
} var_names[] = {
	{"ansible_host", V_HOST},
	{"ansible_ssh_host", V_HOST},
	{"ansible_port", V_PORT},
	{"ansible_ssh_port", V_PORT},
	{"ansible_user", V_USER},
	{"ansible_ssh_user", V_USER},
	{"ansible_ssh_private_key_file", V_KEY},
	{"ansible_private_key_file", V_KEY},
	{"ansible_connection", V_CONN},
};

struct vals {
	char *v[NV];
	int line[NV];
	int col[NV];
};

struct idx_list {
	size_t *v;
	size_t n, cap;
};

struct ihost {
	struct vals vals;
	int line;
	size_t last_group; /* the group (+1) it was last added to: a line naming it again there
			    * adds nothing (a repeat further away only costs a duplicate) */
};

struct igroup {
	struct vals vals;
	struct idx_list hosts, kids, parents;
	int line;
	int depth;	 /* -1: not computed; -2: being computed (a cycle when met again) */
	size_t best[NV]; /* the group (+1) whose value of each variable this group's hosts get */
};

struct inv {
	const char *file;
	bool yaml;
	struct pv_strset *ht, *gt; /* host and group names: h[i] is host i's, g[i] group i's */
	struct ihost *h;
	struct igroup *g;
	size_t hcap, gcap; /* entries allocated in h and g */
	size_t all;
};

static int oom(void)
{
	return pv_error(PV_EIO, "out of memory");
}

static int fail(const struct inv *v, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(const struct inv *v, int line, int col, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (col > 0)
		return pv_error(PV_ECONFIG, "%s:%d:%d: %s", v->file, line, col, msg);
	return pv_error(PV_ECONFIG, "%s:%d: %s", v->file, line, msg);
}

static bool jinja(const char *s)
{
	return strstr(s, "{{") || strstr(s, "{%");
}

/* ---- hosts and groups ---------------------------------------------------------------------- */

/* Append x; once only when dedup (lists of groups are short; a group's hosts are not). */
static int list_push(struct idx_list *l, size_t x, bool dedup)
{
	for (size_t i = 0; dedup && i < l->n; i++)
		if (l->v[i] == x)
			return PV_OK;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		size_t *p = realloc(l->v, cap * sizeof(*p));

		if (!p)
			return oom();
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n++] = x;
	return PV_OK;
}

static int list_add(struct idx_list *l, size_t x)
{
	return list_push(l, x, true);
}

/* A host or group array grown (doubling) to hold want entries, new entries zeroed. */
static int grow(void **arr, size_t *have, size_t want, size_t size)
{
	size_t cap = *have ? *have : 16;
	void *p;

	if (want <= *have)
		return PV_OK;
	while (cap < want)
		cap *= 2;
	if (!(p = realloc(*arr, cap * size)))
		return oom();
	memset((char *)p + *have * size, 0, (cap - *have) * size);
	*arr = p;
	*have = cap;
	return PV_OK;
}

static int group_of(struct inv *v, const char *name, int line, int col, size_t *out)
{
	int added, r;

	if (!*name || strlen(name) > NAME_MAX_LEN || strpbrk(name, " \t:[],"))
		return fail(v, line, col,
			    "'%.64s' is not a group name; expected letters, digits, "
			    "'_', '-' or '.'",
			    name);
	if (jinja(name))
		return fail(v, line, col,
			    "group name '%.64s' uses Jinja; provision does not template: "
			    "expected a plain name",
			    name);
	if ((added = pv_strset_put(v->gt, name, out)) < 0)
		return oom();
	if (added) {
		if (pv_strset_count(v->gt) > GROUPS_MAX)
			return fail(v, line, col, "more than %d groups; expected fewer",
				    GROUPS_MAX);
		if ((r = grow((void **)&v->g, &v->gcap, *out + 1, sizeof(*v->g))) != PV_OK)
			return r;
		v->g[*out].line = line;
		v->g[*out].depth = -1;
	}
	return PV_OK;
}

/* The host name into the hosts (and into group gi's hosts). */
static int host_of(struct inv *v, const char *name, size_t gi, int line, int col, size_t *out)
{
	int added, r;

	if (!*name || strlen(name) > NAME_MAX_LEN)
		return fail(v, line, col, "'%.64s' is not a host name; expected 1 to %d characters",
			    name, NAME_MAX_LEN);
	if (jinja(name))
		return fail(v, line, col,
			    "host name '%.64s' uses Jinja; provision does not template: expected "
			    "a plain name",
			    name);
	if ((added = pv_strset_put(v->ht, name, out)) < 0)
		return oom();
	if (added) {
		if (pv_strset_count(v->ht) > PV_INVENTORY_HOSTS_MAX)
			return fail(v, line, col, "more than %d hosts; expected fewer",
				    PV_INVENTORY_HOSTS_MAX);
		if ((r = grow((void **)&v->h, &v->hcap, *out + 1, sizeof(*v->h))) != PV_OK)
			return r;
		v->h[*out].line = line;
	}
	if (v->h[*out].last_group == gi + 1)
		return PV_OK;
	v->h[*out].last_group = gi + 1;
	return list_push(&v->g[gi].hosts, *out, false);
}

static int set_val(struct vals *x, const char *key, const char *val, int line, int col)
{
	for (size_t i = 0; i < sizeof(var_names) / sizeof(var_names[0]); i++) {
		int k = var_names[i].var;
		char *d;

		if (strcmp(key, var_names[i].name) != 0)
			continue;
		if (!(d = strdup(val)))
			return oom();
		free(x->v[k]);
		x->v[k] = d;
		x->line[k] = line;
		x->col[k] = col;
	}
	return PV_OK;
}

static void vals_free(struct vals *x)
{
	for (int k = 0; k < NV; k++)
		free(x->v[k]);
}

static int child_of(struct inv *v, size_t parent, size_t kid)
{
	int r = list_add(&v->g[parent].kids, kid);

	return r ? r : list_add(&v->g[kid].parents, parent);
}

/* ---- host patterns: NAME[:PORT] with ranges [a:b] or [a:b:step] ----------------------------- */

/* Split off ":PORT" (outside brackets); *port 0 when none. */
static int split_port(struct inv *v, char *pat, int line, int *port)
{
	char *colon = NULL;
	int depth = 0, colons = 0;

	*port = 0;
	for (char *p = pat; *p; p++) {
		if (*p == '[')
			depth++;
		else if (*p == ']')
			depth--;
		else if (*p == ':' && depth == 0) {
			colon = p;
			colons++;
		}
	}
	if (colons != 1) /* none, or an IPv6 address */
		return PV_OK;
	if (!colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) > 5 || atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
		return fail(v, line, 0, "'%.64s' has a port that is not a number from 1 to 65535",
			    pat);
	*port = atoi(colon + 1);
	*colon = '\0';
	return PV_OK;
}

static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

struct range {
	bool alpha;
	unsigned long beg, end, step;
	int width;	   /* zero-padded width, 0: none */
	size_t head, tail; /* lengths before '[' and the offset after ']' */
};

static bool number(const char *s, size_t len, unsigned long *out)
{
	if (!len || len > 9 || strspn(s, "0123456789") < len)
		return false;
	*out = strtoul(s, NULL, 10);
	return true;
}

/* The first range of pat at or after from (which has a '['). */
static int range_of(struct inv *v, const char *pat, const char *from, int line, struct range *rg)
{
	const char *lb = strchr(from, '['), *rb = lb ? strchr(lb, ']') : NULL, *c1, *c2;
	size_t lb1, lb2, lb3 = 0;
	const char *step = NULL;

	memset(rg, 0, sizeof(*rg));
	if (!lb || !rb || !(c1 = memchr(lb, ':', (size_t)(rb - lb))))
		return fail(v, line, 0,
			    "'%.64s' has a '[' that is no range; expected NAME[BEGIN:END] such as "
			    "cli[01:32]",
			    pat);
	rg->head = (size_t)(lb - pat);
	rg->tail = (size_t)(rb - pat) + 1;
	lb1 = (size_t)(c1 - lb - 1);
	c2 = memchr(c1 + 1, ':', (size_t)(rb - c1 - 1));
	lb2 = (size_t)((c2 ? c2 : rb) - c1 - 1);
	if (c2) {
		step = c2 + 1;
		lb3 = (size_t)(rb - c2 - 1);
	}
	rg->step = 1;
	if (step && (!number(step, lb3, &rg->step) || rg->step == 0))
		return fail(v, line, 0, "'%.64s': the range's step is not a number above 0", pat);
	if (lb1 == 1 && lb2 == 1 && strchr(letters, lb[1]) && strchr(letters, c1[1])) {
		rg->alpha = true;
		rg->beg = (unsigned long)(strchr(letters, lb[1]) - letters);
		rg->end = (unsigned long)(strchr(letters, c1[1]) - letters);
	} else {
		if (lb1 == 0)
			rg->beg = 0;
		else if (!number(lb + 1, lb1, &rg->beg))
			return fail(v, line, 0,
				    "'%.64s': a range is numbers or single letters; expected "
				    "[01:32] or [a:f]",
				    pat);
		if (!number(c1 + 1, lb2, &rg->end))
			return fail(v, line, 0,
				    "'%.64s': a range is numbers or single letters with an end; "
				    "expected [01:32] or [a:f]",
				    pat);
		if (lb1 > 1 && lb[1] == '0') {
			if (lb1 != lb2)
				return fail(v, line, 0,
					    "'%.64s': a zero-padded range needs a begin and an end "
					    "of the same length, as [01:32]",
					    pat);
			rg->width = (int)lb1;
		}
	}
	if (rg->beg > rg->end)
		return fail(v, line, 0, "'%.64s': the range begins after it ends", pat);
	return PV_OK;
}

/* Hosts a pattern expands to (ranges multiply), or more than the cap. */
static unsigned long pattern_count(struct inv *v, const char *pat, int line, int *r)
{
	unsigned long total = 1;
	const char *from = pat;
	struct range rg;

	*r = PV_OK;
	while ((from = strchr(from, '['))) {
		if ((*r = range_of(v, pat, from, line, &rg)) != PV_OK)
			return 0;
		total *= (rg.end - rg.beg) / rg.step + 1;
		if (total > PV_INVENTORY_HOSTS_MAX)
			return total;
		from = pat + rg.tail;
	}
	return total;
}

struct host_line {
	size_t group;
	int line, col, port;
	char **keys, **vals; /* the line's KEY=VALUE pairs */
	size_t nkv;
};

static int add_host(struct inv *v, const char *name, const struct host_line *hl)
{
	size_t hi;
	int r;

	if ((r = host_of(v, name, hl->group, hl->line, hl->col, &hi)) != PV_OK)
		return r;
	if (hl->port) {
		char p[8];

		snprintf(p, sizeof(p), "%d", hl->port);
		if ((r = set_val(&v->h[hi].vals, "ansible_port", p, hl->line, hl->col)))
			return r;
	}
	for (size_t i = 0; i < hl->nkv; i++)
		if ((r = set_val(&v->h[hi].vals, hl->keys[i], hl->vals[i], hl->line, hl->col)))
			return r;
	return PV_OK;
}

/* Every name pat expands to, added with the line's variables. */
static int expand(struct inv *v, const char *pat, const struct host_line *hl)
{
	struct range rg;
	char *name;
	int r;

	if (!strchr(pat, '['))
		return add_host(v, pat, hl);
	if ((r = range_of(v, pat, pat, hl->line, &rg)) != PV_OK)
		return r;
	if (!(name = malloc(strlen(pat) + 16)))
		return oom();
	for (unsigned long i = rg.beg; i <= rg.end && r == PV_OK; i += rg.step) {
		if (rg.alpha)
			sprintf(name, "%.*s%c%s", (int)rg.head, pat, letters[i], pat + rg.tail);
		else
			sprintf(name, "%.*s%0*lu%s", (int)rg.head, pat, rg.width, i, pat + rg.tail);
		r = expand(v, name, hl);
	}
	free(name);
	return r;
}

static int host_pattern(struct inv *v, char *pat, struct host_line *hl)
{
	unsigned long n;
	int r;

	if ((r = split_port(v, pat, hl->line, &hl->port)) != PV_OK)
		return r;
	n = pattern_count(v, pat, hl->line, &r);
	if (r != PV_OK)
		return r;
	if (n > PV_INVENTORY_HOSTS_MAX - pv_strset_count(v->ht))
		return fail(v, hl->line, hl->col,
			    "'%.64s' gives %lu hosts; expected at most %d in all", pat, n,
			    PV_INVENTORY_HOSTS_MAX);
	return expand(v, pat, hl);
}

/* ---- INI --------------------------------------------------------------------------------- */

/* The shell-like words of a host line: quotes ('...', "..." with \" and \\), a backslash
 * escaping the next character, '#' at a word's start beginning a comment (Ansible's shlex). */
static int words(struct inv *v, const char *s, size_t len, int line, char ***out, size_t *n)
{
	char **w = NULL, *cur = NULL;
	size_t nw = 0, cl = 0;
	int r = PV_OK;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i <= len && r == PV_OK;) {
		char c = i < len ? s[i] : '\0';

		if (c == ' ' || c == '\t' || c == '\0' || (c == '#' && !cur)) {
			if (cur) {
				char **p = realloc(w, (nw + 1) * sizeof(*p));

				if (!p) {
					r = oom();
					break;
				}
				w = p;
				cur[cl] = '\0';
				w[nw++] = cur;
				cur = NULL;
			}
			if (c == '#' || c == '\0')
				break;
			i++;
			continue;
		}
		if (!cur) {
			if (!(cur = malloc(len + 1))) {
				r = oom();
				break;
			}
			cl = 0;
		}
		if (c == '\'' || c == '"') {
			size_t j = i + 1;

			for (; j < len && s[j] != c; j++) {
				if (c == '"' && s[j] == '\\' && j + 1 < len &&
				    (s[j + 1] == '"' || s[j + 1] == '\\'))
					j++;
				cur[cl++] = s[j];
			}
			if (j >= len)
				r = fail(v, line, 0, "a quote (%c) is not closed on this line", c);
			i = j + 1;
		} else if (c == '\\' && i + 1 < len) {
			cur[cl++] = s[i + 1];
			i += 2;
		} else {
			cur[cl++] = c;
			i++;
		}
	}
	free(cur);
	if (r != PV_OK) {
		for (size_t i = 0; i < nw; i++)
			free(w[i]);
		free(w);
		return r;
	}
	*out = w;
	*n = nw;
	return PV_OK;
}

static void words_free(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

static int ini_host_line(struct inv *v, size_t group, const char *s, size_t len, int line)
{
	struct host_line hl = {.group = group, .line = line};
	char **w = NULL, **keys = NULL, **vals = NULL;
	size_t n = 0;
	int r;

	if ((r = words(v, s, len, line, &w, &n)) != PV_OK || n == 0)
		return r;
	if (!(keys = calloc(n, sizeof(*keys))) || !(vals = calloc(n, sizeof(*vals)))) {
		r = oom();
		goto out;
	}
	for (size_t i = 1; i < n; i++) {
		char *eq = strchr(w[i], '=');

		if (!eq || eq == w[i]) {
			r = fail(v, line, 0,
				 "'%.64s' after the host name is not KEY=VALUE; expected "
				 "'HOST [KEY=VALUE ...]'",
				 w[i]);
			goto out;
		}
		*eq = '\0';
		keys[hl.nkv] = w[i];
		vals[hl.nkv++] = eq + 1;
	}
	hl.keys = keys;
	hl.vals = vals;
	r = host_pattern(v, w[0], &hl);
out:
	free(keys);
	free(vals);
	words_free(w, n);
	return r;
}

static void strip_quotes(char *s)
{
	size_t l = strlen(s);

	if (l >= 2 && (s[0] == '"' || s[0] == '\'') && s[l - 1] == s[0]) {
		memmove(s, s + 1, l - 2);
		s[l - 2] = '\0';
	}
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

enum ini_state { IN_HOSTS, IN_VARS, IN_CHILDREN };

/* "[name]", "[name:vars]" or "[name:children]", a comment allowed after it. */
static int ini_header(struct inv *v, char *s, int line, size_t *group, enum ini_state *st)
{
	char *end = strchr(s, ']'), *rest, *kind;

	if (!end)
		return fail(v, line, 0,
			    "a section header has no ']'; expected [GROUP], "
			    "[GROUP:vars] or [GROUP:children]");
	*end = '\0';
	rest = trim(end + 1);
	if (*rest && *rest != '#' && *rest != ';')
		return fail(v, line, 0,
			    "'%.64s' follows a section header; expected nothing or a "
			    "comment",
			    rest);
	s++;
	*st = IN_HOSTS;
	if ((kind = strchr(s, ':'))) {
		*kind++ = '\0';
		if (!strcmp(kind, "vars"))
			*st = IN_VARS;
		else if (!strcmp(kind, "children"))
			*st = IN_CHILDREN;
		else
			return fail(v, line, 0,
				    "section '[%.64s:%.32s]' is not one of [GROUP], [GROUP:vars], "
				    "[GROUP:children]",
				    s, kind);
	}
	return group_of(v, s, line, 0, group);
}

static int ini_line(struct inv *v, char *s, int line, size_t *group, enum ini_state *st)
{
	char *eq;
	size_t kid;
	int r;

	s = trim(s);
	if (!*s || *s == '#' || *s == ';')
		return PV_OK;
	if (*s == '[')
		return ini_header(v, s, line, group, st);
	switch (*st) {
	case IN_HOSTS:
		return ini_host_line(v, *group, s, strlen(s), line);
	case IN_CHILDREN:
		if ((r = group_of(v, s, line, 0, &kid)) != PV_OK)
			return r;
		if (kid == v->all)
			return fail(v, line, 0, "'all' cannot be a child group");
		return child_of(v, *group, kid);
	default:
		if (!(eq = strchr(s, '=')) || eq == s)
			return fail(v, line, 0,
				    "'%.64s' in a [GROUP:vars] section is not KEY=VALUE", s);
		*eq = '\0';
		strip_quotes(eq + 1 + (trim(eq + 1) - (eq + 1)));
		return set_val(&v->g[*group].vals, trim(s), trim(eq + 1), line, 0);
	}
}

static int parse_ini(struct inv *v, const char *text, size_t len)
{
	enum ini_state st = IN_HOSTS;
	size_t group;
	int line = 0, r;

	if ((r = group_of(v, "ungrouped", 1, 0, &group)) != PV_OK ||
	    (r = child_of(v, v->all, group)) != PV_OK)
		return r;
	for (size_t at = 0; at < len; line++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - text - at) : len - at;
		char *s;

		if (memchr(text + at, '\0', l))
			return fail(v, line + 1, 0, "the line holds a NUL byte; expected text");
		if (line == 0 && l >= 2 && !memcmp(text, "#!", 2))
			return fail(
				v, 1, 0,
				"starts with '#!': a dynamic inventory script; provision reads "
				"static inventories only: save its output with 'ansible-inventory "
				"-i FILE --list -y > clients.yml' and name that file");
		if (!(s = strndup(text + at, l)))
			return oom();
		r = ini_line(v, s, line + 1, &group, &st);
		free(s);
		if (r != PV_OK)
			return r;
		at += l + 1;
	}
	return PV_OK;
}

/* ---- YAML -------------------------------------------------------------------------------- */

static int y_fail(struct inv *v, const struct pv_node *n, const char *fmt, const char *a,
		  const char *b)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	return fail(v, n->line, n->col, "%s", msg);
}

static int y_group(struct inv *v, size_t gi, const struct pv_node *body, int depth);

/* vars of a host or a group: the ones we keep must be plain values. */
static int y_vars(struct inv *v, struct vals *x, const struct pv_node *m)
{
	int r;

	if (m->kind != PV_NODE_MAPPING) {
		if (m->kind == PV_NODE_SCALAR && pv_tree_is_null(m))
			return PV_OK;
		return y_fail(v, m, "variables are %s%s; expected a mapping of NAME: VALUE",
			      m->kind == PV_NODE_SEQUENCE ? "a sequence" : "a string", "");
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct pv_node *val = m->items[i];
		bool ours = false;

		for (size_t k = 0; k < sizeof(var_names) / sizeof(var_names[0]); k++)
			ours |= !strcmp(m->keys[i]->text, var_names[k].name);
		if (!ours)
			continue;
		if (val->kind != PV_NODE_SCALAR || pv_tree_is_null(val))
			return y_fail(v, val,
				      "'%s' has no plain value%s; expected a string or number",
				      m->keys[i]->text, "");
		if ((r = set_val(x, m->keys[i]->text, val->text, val->line, val->col)))
			return r;
	}
	return PV_OK;
}

static int y_hosts(struct inv *v, size_t gi, const struct pv_node *m)
{
	static const char *const canon[NV] = {"ansible_host", "ansible_port", "ansible_user",
					      "ansible_ssh_private_key_file", "ansible_connection"};
	int r = PV_OK;

	if (m->kind == PV_NODE_SCALAR && pv_tree_is_null(m))
		return PV_OK;
	if (m->kind != PV_NODE_MAPPING)
		return y_fail(v, m,
			      "'hosts' is not a mapping%s%s; expected HOST: {VARIABLES} lines", "",
			      "");
	for (size_t i = 0; i < m->n && r == PV_OK; i++) {
		struct host_line hl = {
			.group = gi, .line = m->keys[i]->line, .col = m->keys[i]->col};
		char *keys[NV], *vals[NV], *pat;
		struct vals x;

		memset(&x, 0, sizeof(x));
		/* the host's variables go to every name its pattern gives */
		r = y_vars(v, &x, m->items[i]);
		for (int k = 0; k < NV; k++)
			if (x.v[k]) {
				keys[hl.nkv] = (char *)canon[k];
				vals[hl.nkv++] = x.v[k];
			}
		hl.keys = keys;
		hl.vals = vals;
		if (r == PV_OK && !(pat = strdup(m->keys[i]->text)))
			r = oom();
		else if (r == PV_OK) {
			r = host_pattern(v, pat, &hl);
			free(pat);
		}
		vals_free(&x);
	}
	return r;
}

static int y_children(struct inv *v, size_t gi, const struct pv_node *m, int depth)
{
	size_t kid;
	int r;

	if (m->kind == PV_NODE_SCALAR && pv_tree_is_null(m))
		return PV_OK;
	if (m->kind != PV_NODE_MAPPING)
		return y_fail(v, m, "'children' is not a mapping%s%s; expected GROUP: {hosts: ...}",
			      "", "");
	for (size_t i = 0; i < m->n; i++) {
		if ((r = group_of(v, m->keys[i]->text, m->keys[i]->line, m->keys[i]->col, &kid)))
			return r;
		if (kid == v->all)
			return y_fail(v, m->keys[i], "'all' cannot be a child group%s%s", "", "");
		if ((r = child_of(v, gi, kid)) != PV_OK ||
		    (r = y_group(v, kid, m->items[i], depth + 1)) != PV_OK)
			return r;
	}
	return PV_OK;
}

static int y_group(struct inv *v, size_t gi, const struct pv_node *body, int depth)
{
	static const char *const keys[] = {"hosts", "vars", "children"};
	int r;

	if (body->kind == PV_NODE_SCALAR && pv_tree_is_null(body))
		return PV_OK;
	if (body->kind != PV_NODE_MAPPING)
		return y_fail(v, body,
			      "group '%s' is not a mapping%s; expected hosts:, vars: or "
			      "children:",
			      pv_strset_at(v->gt, gi), "");
	for (size_t i = 0; i < body->n; i++) {
		const struct pv_node *k = body->keys[i], *val = body->items[i];

		if (!strcmp(k->text, keys[0]))
			r = y_hosts(v, gi, val);
		else if (!strcmp(k->text, keys[1]))
			r = y_vars(v, &v->g[gi].vals, val);
		else if (!strcmp(k->text, keys[2]))
			r = y_children(v, gi, val, depth);
		else
			r = y_fail(
				v, k,
				"unknown key '%s' in group '%s'; expected hosts, vars or children",
				k->text, pv_strset_at(v->gt, gi));
		if (r != PV_OK)
			return r;
	}
	return PV_OK;
}

static int parse_yaml(struct inv *v, const char *text, size_t len)
{
	struct pv_node *root = NULL;
	size_t gi;
	int r;

	if ((r = pv_tree_parse(v->file, text, len, &root)) != PV_OK)
		return r;
	if (root->kind != PV_NODE_MAPPING) {
		r = y_fail(v, root,
			   "the inventory is not a mapping%s%s; expected groups such as "
			   "'all: {children: ...}'",
			   "", "");
		goto out;
	}
	if (pv_tree_get(root, "plugin")) {
		r = y_fail(v, pv_tree_get(root, "plugin"),
			   "names an inventory plugin ('%s'): a dynamic inventory%s; provision "
			   "reads static inventories only: save its hosts with 'ansible-inventory "
			   "-i FILE --list -y > clients.yml' and name that file",
			   pv_tree_get(root, "plugin")->text ? pv_tree_get(root, "plugin")->text
							     : "",
			   "");
		goto out;
	}
	for (size_t i = 0; i < root->n && r == PV_OK; i++) {
		if ((r = group_of(v, root->keys[i]->text, root->keys[i]->line, root->keys[i]->col,
				  &gi)) != PV_OK)
			break;
		r = y_group(v, gi, root->items[i], 0);
	}
out:
	pv_tree_free(root);
	return r;
}

/* ---- merging ----------------------------------------------------------------------------- */

static int depth_of(struct inv *v, size_t gi, int *out)
{
	struct igroup *g = &v->g[gi];
	int d = 0, r;

	if (g->depth >= 0) {
		*out = g->depth;
		return PV_OK;
	}
	if (g->depth == -2)
		return fail(v, g->line, 0, "group '%s' is a child of itself (through its children)",
			    pv_strset_at(v->gt, gi));
	g->depth = -2;
	for (size_t i = 0; i < g->parents.n; i++) {
		int pd;

		if ((r = depth_of(v, g->parents.v[i], &pd)) != PV_OK)
			return r;
		if (pd + 1 > d)
			d = pd + 1;
	}
	if (gi != v->all && d == 0)
		d = 1; /* a group without parents is a child of 'all' */
	g->depth = d;
	*out = d;
	return PV_OK;
}

/* Which of two groups (+1, 0: none) gives a variable: the deeper, then the greater name. */
static size_t winner(const struct inv *v, size_t a, size_t b)
{
	int c;

	if (!a || !b)
		return a ? a : b;
	if (v->g[a - 1].depth != v->g[b - 1].depth)
		return v->g[a - 1].depth > v->g[b - 1].depth ? a : b;
	c = strcmp(pv_strset_at(v->gt, a - 1), pv_strset_at(v->gt, b - 1));
	return c >= 0 ? a : b;
}

/* best[k] of every group: its own value of variable k, else its ancestors' winner; in depth
 * order, so parents are done before their children. */
static int resolve_groups(struct inv *v)
{
	int maxd = 0, d, r;

	for (size_t i = 0; i < pv_strset_count(v->gt); i++) {
		if ((r = depth_of(v, i, &d)) != PV_OK)
			return r;
		if (d > maxd)
			maxd = d;
	}
	for (int level = 0; level <= maxd; level++)
		for (size_t i = 0; i < pv_strset_count(v->gt); i++) {
			struct igroup *g = &v->g[i];

			if (g->depth != level)
				continue;
			for (int k = 0; k < NV; k++) {
				size_t b = g->vals.v[k] ? i + 1 : 0;

				if (i != v->all)
					b = winner(v, b, v->g[v->all].best[k]);
				for (size_t p = 0; p < g->parents.n; p++)
					b = winner(v, b, v->g[g->parents.v[p]].best[k]);
				g->best[k] = b;
			}
		}
	return PV_OK;
}

/* ---- the hosts asked for ---------------------------------------------------------------- */

static int mark(struct inv *v, size_t gi, bool *seen_g, bool *want)
{
	if (seen_g[gi])
		return PV_OK;
	seen_g[gi] = true;
	for (size_t i = 0; i < v->g[gi].hosts.n; i++)
		want[v->g[gi].hosts.v[i]] = true;
	for (size_t i = 0; i < v->g[gi].kids.n; i++)
		mark(v, v->g[gi].kids.v[i], seen_g, want);
	return PV_OK;
}

static int no_group(struct inv *v, const char *group)
{
	char list[512] = "";
	size_t len = 0;

	for (size_t i = 0; i < pv_strset_count(v->gt) && len < sizeof(list) - 64; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					pv_strset_at(v->gt, i));
	return pv_error(PV_ECONFIG, "%s: no group '%.64s' in the inventory; its groups: %s",
			v->file, group, list);
}

/* One host's merged value of variable k, with where it was set. */
static const char *value(const struct inv *v, size_t hi, const size_t *direct, size_t ndirect,
			 int k, int *line, int *col)
{
	size_t b = v->g[v->all].best[k];

	if (v->h[hi].vals.v[k]) {
		*line = v->h[hi].vals.line[k];
		*col = v->h[hi].vals.col[k];
		return v->h[hi].vals.v[k];
	}
	for (size_t i = 0; i < ndirect; i++)
		b = winner(v, b, v->g[direct[i]].best[k]);
	if (!b)
		return NULL;
	*line = v->g[b - 1].vals.line[k];
	*col = v->g[b - 1].vals.col[k];
	return v->g[b - 1].vals.v[k];
}

static int fill_host(struct inv *v, size_t hi, const size_t *direct, size_t nd,
		     struct pv_inventory_host *out)
{
	const char *val[NV];
	int line[NV] = {0}, col[NV] = {0};

	out->line = v->h[hi].line;
	if (!(out->name = strdup(pv_strset_at(v->ht, hi))))
		return oom();
	for (int k = 0; k < NV; k++) {
		val[k] = value(v, hi, direct, nd, k, &line[k], &col[k]);
		if (val[k] && jinja(val[k]))
			return fail(v, line[k], col[k],
				    "host '%s': a value uses Jinja ('%.64s'); provision does not "
				    "template: expected a plain value",
				    pv_strset_at(v->ht, hi), val[k]);
	}
	if (val[V_CONN] && strcmp(val[V_CONN], "ssh") && strcmp(val[V_CONN], "smart") &&
	    strcmp(val[V_CONN], "paramiko") && strcmp(val[V_CONN], "paramiko_ssh"))
		return fail(v, line[V_CONN], col[V_CONN],
			    "host '%s': ansible_connection is '%.32s'; provision reaches clients "
			    "over SSH only (OpenSSH on Windows too): expected ssh",
			    pv_strset_at(v->ht, hi), val[V_CONN]);
	if (val[V_PORT]) {
		const char *p = val[V_PORT];

		if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atoi(p) < 1 ||
		    atoi(p) > 65535)
			return fail(v, line[V_PORT], col[V_PORT],
				    "host '%s': ansible_port is '%.32s'; expected a number from 1 "
				    "to 65535",
				    pv_strset_at(v->ht, hi), p);
		out->port = atoi(p);
	}
	if ((val[V_HOST] && !(out->address = strdup(val[V_HOST]))) ||
	    (val[V_USER] && !(out->user = strdup(val[V_USER]))) ||
	    (val[V_KEY] && !(out->identity = strdup(val[V_KEY]))))
		return oom();
	return PV_OK;
}

static int select_hosts(struct inv *v, const char *group, struct pv_inventory *inv)
{
	bool *seen_g = calloc(pv_strset_count(v->gt), sizeof(bool)),
	     *want = calloc(pv_strset_count(v->ht) + 1, sizeof(bool));
	struct idx_list *direct = calloc(pv_strset_count(v->ht) + 1, sizeof(*direct));
	size_t gi, n = 0;
	int r = PV_OK;

	if (!seen_g || !want || !direct) {
		r = oom();
		goto out;
	}
	if (!pv_strset_find(v->gt, group, &gi)) {
		r = no_group(v, group);
		goto out;
	}
	if (gi == v->all)
		memset(want, 1, pv_strset_count(v->ht) * sizeof(bool));
	else
		mark(v, gi, seen_g, want);
	for (size_t g = 0; g < pv_strset_count(v->gt) && r == PV_OK; g++)
		for (size_t i = 0; i < v->g[g].hosts.n && r == PV_OK; i++)
			r = list_add(&direct[v->g[g].hosts.v[i]], g);
	for (size_t i = 0; i < pv_strset_count(v->ht); i++)
		n += want[i];
	if (r == PV_OK && n == 0)
		r = pv_error(PV_ECONFIG, "%s: group '%.64s' has no hosts; expected at least one",
			     v->file, group);
	if (r == PV_OK && !(inv->hosts = calloc(n, sizeof(*inv->hosts))))
		r = oom();
	for (size_t i = 0; i < pv_strset_count(v->ht) && r == PV_OK; i++) {
		if (!want[i])
			continue;
		r = fill_host(v, i, direct[i].v, direct[i].n, &inv->hosts[inv->n]);
		inv->n++;
	}
out:
	for (size_t i = 0; direct && i < pv_strset_count(v->ht); i++)
		free(direct[i].v);
	free(direct);
	free(seen_g);
	free(want);
	return r;
}

/* ---- public ------------------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), m = strlen(suffix);

	return l >= m && !strcmp(s + l - m, suffix);
}

/* Every entry allocated, named or not (a name added whose entry could not be made has none;
 * the entries past the last name are zero). */
static void inv_release(struct inv *v)
{
	for (size_t i = 0; i < v->hcap; i++)
		vals_free(&v->h[i].vals);
	for (size_t i = 0; i < v->gcap; i++) {
		vals_free(&v->g[i].vals);
		free(v->g[i].hosts.v);
		free(v->g[i].kids.v);
		free(v->g[i].parents.v);
	}
	free(v->h);
	free(v->g);
	pv_strset_free(v->ht);
	pv_strset_free(v->gt);
}

int pv_inventory_parse(const char *name, const char *text, size_t len, const char *group,
		       struct pv_inventory **out)
{
	struct inv v;
	struct pv_inventory *inv = calloc(1, sizeof(*inv));
	int r;

	memset(&v, 0, sizeof(v));
	v.file = name ? name : "inventory";
	v.yaml = ends_with(v.file, ".yml") || ends_with(v.file, ".yaml") ||
		 ends_with(v.file, ".json");
	if (!inv)
		return oom();
	inv->format = v.yaml ? "YAML" : "INI";
	if (!(v.ht = pv_strset_new_exact()) || !(v.gt = pv_strset_new_exact()))
		r = oom();
	else
		r = group_of(&v, "all", 1, 0, &v.all);
	if (r == PV_OK)
		r = v.yaml ? parse_yaml(&v, text, len) : parse_ini(&v, text, len);
	if (r == PV_OK)
		r = resolve_groups(&v);
	if (r == PV_OK)
		r = select_hosts(&v, group ? group : "all", inv);
	inv_release(&v);
	if (r != PV_OK) {
		pv_inventory_free(inv);
		return r;
	}
	*out = inv;
	return PV_OK;
}

int pv_inventory_load(const char *path, const char *group, struct pv_inventory **out)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int r = pv_file_read(path, "inventory", PV_INVENTORY_BYTES_MAX, &text, &len, &st);

	if (S_ISDIR(st.st_mode))
		return pv_error(
			PV_ECONFIG,
			"inventory '%s' is a folder: Ansible reads the files and scripts in "
			"it; provision reads one static inventory file: name the file",
			path);
	if (r == PV_OK && (st.st_mode & 0111))
		r = pv_error(PV_ECONFIG,
			     "inventory '%s' is executable: Ansible runs such a file as a dynamic "
			     "inventory script; provision reads static inventories only: save its "
			     "output with 'ansible-inventory -i %s --list -y > clients.yml' and "
			     "name that file (or chmod -x it if it is a static file)",
			     path, path);
	if (r == PV_OK)
		r = pv_inventory_parse(path, text, len, group, out);
	free(text);
	return r;
}

void pv_inventory_free(struct pv_inventory *inv)
{
	if (!inv)
		return;
	for (size_t i = 0; i < inv->n; i++) {
		free(inv->hosts[i].name);
		free(inv->hosts[i].address);
		free(inv->hosts[i].user);
		free(inv->hosts[i].identity);
	}
	free(inv->hosts);
	free(inv);
}
