/* playbooks/inventory_read.c: the two formats of an Ansible inventory read into the model of
 * inventory.c (inventory_internal.h): host patterns (NAME[:PORT] with ranges), INI (its
 * sections, host lines and key=value words) and YAML (all/children/hosts/vars, through
 * playbooks/tree.h), each refusal naming the file, the line and the column. */
#include "playbooks/inventory.h"

#include "playbooks/inventory_internal.h"
#include "playbooks/schema.h"
#include "playbooks/tree.h"
#include "util/err.h"
#include "util/strset.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		return inv_fail(v, line, 0,
				"'%.64s' has a port that is not a number from 1 to 65535", pat);
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
		return inv_fail(v, line, 0,
				"'%.64s' has a '[' that is no range; expected NAME[BEGIN:END] "
				"such as cli[01:32]",
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
		return inv_fail(v, line, 0, "'%.64s': the range's step is not a number above 0",
				pat);
	if (lb1 == 1 && lb2 == 1 && strchr(letters, lb[1]) && strchr(letters, c1[1])) {
		rg->alpha = true;
		rg->beg = (unsigned long)(strchr(letters, lb[1]) - letters);
		rg->end = (unsigned long)(strchr(letters, c1[1]) - letters);
	} else {
		if (lb1 == 0)
			rg->beg = 0;
		else if (!number(lb + 1, lb1, &rg->beg))
			return inv_fail(v, line, 0,
					"'%.64s': a range is numbers or single letters; expected "
					"[01:32] or [a:f]",
					pat);
		if (!number(c1 + 1, lb2, &rg->end))
			return inv_fail(
				v, line, 0,
				"'%.64s': a range is numbers or single letters with an end; "
				"expected [01:32] or [a:f]",
				pat);
		if (lb1 > 1 && lb[1] == '0') {
			if (lb1 != lb2)
				return inv_fail(
					v, line, 0,
					"'%.64s': a zero-padded range needs a begin and an end of "
					"the same length, as [01:32]",
					pat);
			rg->width = (int)lb1;
		}
	}
	if (rg->beg > rg->end)
		return inv_fail(v, line, 0, "'%.64s': the range begins after it ends", pat);
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
		if (total > PV_PLAYBOOK_INVENTORY_HOSTS_MAX)
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

	if ((r = inv_host_of(v, name, hl->group, hl->line, hl->col, &hi)) != PV_OK)
		return r;
	if (hl->port) {
		char p[8];

		snprintf(p, sizeof(p), "%d", hl->port);
		if ((r = inv_set_val(&v->h[hi].vals, "ansible_port", p, hl->line, hl->col)))
			return r;
	}
	for (size_t i = 0; i < hl->nkv; i++)
		if ((r = inv_set_val(&v->h[hi].vals, hl->keys[i], hl->vals[i], hl->line, hl->col)))
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
		return inv_oom();
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
	if (n > PV_PLAYBOOK_INVENTORY_HOSTS_MAX - pv_strset_count(v->ht))
		return inv_fail(v, hl->line, hl->col,
				"'%.64s' gives %lu hosts; expected at most %d in all", pat, n,
				PV_PLAYBOOK_INVENTORY_HOSTS_MAX);
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
					r = inv_oom();
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
				r = inv_oom();
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
				r = inv_fail(v, line, 0, "a quote (%c) is not closed on this line",
					     c);
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
		r = inv_oom();
		goto out;
	}
	for (size_t i = 1; i < n; i++) {
		char *eq = strchr(w[i], '=');

		if (!eq || eq == w[i]) {
			r = inv_fail(v, line, 0,
				     "'%.64s' after the host name is not KEY=VALUE; expected 'HOST "
				     "[KEY=VALUE ...]'",
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
		return inv_fail(v, line, 0,
				"a section header has no ']'; expected [GROUP], "
				"[GROUP:vars] or [GROUP:children]");
	*end = '\0';
	rest = trim(end + 1);
	if (*rest && *rest != '#' && *rest != ';')
		return inv_fail(v, line, 0,
				"'%.64s' follows a section header; expected nothing or a comment",
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
			return inv_fail(
				v, line, 0,
				"section '[%.64s:%.32s]' is not one of [GROUP], [GROUP:vars], "
				"[GROUP:children]",
				s, kind);
	}
	return inv_group_of(v, s, line, 0, group);
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
		if ((r = inv_group_of(v, s, line, 0, &kid)) != PV_OK)
			return r;
		if (kid == v->all)
			return inv_fail(v, line, 0, "'all' cannot be a child group");
		return inv_child_of(v, *group, kid);
	default:
		if (!(eq = strchr(s, '=')) || eq == s)
			return inv_fail(v, line, 0,
					"'%.64s' in a [GROUP:vars] section is not KEY=VALUE", s);
		*eq = '\0';
		strip_quotes(eq + 1 + (trim(eq + 1) - (eq + 1)));
		return inv_set_val(&v->g[*group].vals, trim(s), trim(eq + 1), line, 0);
	}
}

int inv_parse_ini(struct inv *v, const char *text, size_t len)
{
	enum ini_state st = IN_HOSTS;
	size_t group;
	int line = 0, r;

	if ((r = inv_group_of(v, "ungrouped", 1, 0, &group)) != PV_OK ||
	    (r = inv_child_of(v, v->all, group)) != PV_OK)
		return r;
	for (size_t at = 0; at < len; line++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - text - at) : len - at;
		char *s;

		if (memchr(text + at, '\0', l))
			return inv_fail(v, line + 1, 0, "the line holds a NUL byte; expected text");
		if (line == 0 && l >= 2 && !memcmp(text, "#!", 2))
			return inv_fail(
				v, 1, 0,
				"starts with '#!': a dynamic inventory script; provision reads "
				"static inventories only: save its output with 'ansible-inventory "
				"-i FILE --list -y > clients.yml' and name that file");
		if (!(s = strndup(text + at, l)))
			return inv_oom();
		r = ini_line(v, s, line + 1, &group, &st);
		free(s);
		if (r != PV_OK)
			return r;
		at += l + 1;
	}
	return PV_OK;
}

/* ---- YAML: through the playbook's getters (schema.h), so refusals read as the playbook's --- */

static int y_group(struct inv *v, size_t gi, const struct pv_playbook_node *body, int depth);

/* vars of a host or a group: the ones we keep must be plain values. */
static int y_vars(struct inv *v, struct vals *x, const struct pv_playbook_node *m)
{
	int r;

	if (m->kind != PV_PLAYBOOK_NODE_MAPPING) {
		if (m->kind == PV_PLAYBOOK_NODE_SCALAR && pv_playbook_tree_is_null(m))
			return PV_OK;
		return pv_playbook_schema_fail(
			&v->sc, m, "variables are %s; expected a mapping of NAME: VALUE",
			pv_playbook_schema_kind(m));
	}
	for (size_t i = 0; i < m->n; i++) {
		const struct pv_playbook_node *val = m->items[i];

		if (!inv_kept_var(m->keys[i]->text))
			continue;
		if (val->kind != PV_PLAYBOOK_NODE_SCALAR || pv_playbook_tree_is_null(val))
			return pv_playbook_schema_fail(
				&v->sc, val, "'%s' has no plain value; expected a string or number",
				m->keys[i]->text);
		if ((r = inv_set_val(x, m->keys[i]->text, val->text, val->line, val->col)))
			return r;
	}
	return PV_OK;
}

static int y_hosts(struct inv *v, size_t gi, const struct pv_playbook_node *m)
{
	static const char *const canon[NV] = {"ansible_host", "ansible_port", "ansible_user",
					      "ansible_ssh_private_key_file", "ansible_connection"};
	int r = PV_OK;

	if (m->kind == PV_PLAYBOOK_NODE_SCALAR && pv_playbook_tree_is_null(m))
		return PV_OK;
	if (m->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(&v->sc, m,
					       "'hosts' is %s; expected HOST: {VARIABLES} lines",
					       pv_playbook_schema_kind(m));
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
			r = inv_oom();
		else if (r == PV_OK) {
			r = host_pattern(v, pat, &hl);
			free(pat);
		}
		inv_vals_free(&x);
	}
	return r;
}

static int y_children(struct inv *v, size_t gi, const struct pv_playbook_node *m, int depth)
{
	size_t kid;
	int r;

	if (m->kind == PV_PLAYBOOK_NODE_SCALAR && pv_playbook_tree_is_null(m))
		return PV_OK;
	if (m->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(&v->sc, m,
					       "'children' is %s; expected GROUP: {hosts: ...}",
					       pv_playbook_schema_kind(m));
	for (size_t i = 0; i < m->n; i++) {
		if ((r = inv_group_of(v, m->keys[i]->text, m->keys[i]->line, m->keys[i]->col,
				      &kid)))
			return r;
		if (kid == v->all)
			return pv_playbook_schema_fail(&v->sc, m->keys[i],
						       "'all' cannot be a child group");
		if ((r = inv_child_of(v, gi, kid)) != PV_OK ||
		    (r = y_group(v, kid, m->items[i], depth + 1)) != PV_OK)
			return r;
	}
	return PV_OK;
}

static int y_group(struct inv *v, size_t gi, const struct pv_playbook_node *body, int depth)
{
	static const char *const keys[] = {"hosts", "vars", "children", NULL};
	char in[320];
	int r;

	if (body->kind == PV_PLAYBOOK_NODE_SCALAR && pv_playbook_tree_is_null(body))
		return PV_OK;
	if (body->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(
			&v->sc, body,
			"group '%s' is %s; expected a mapping of hosts:, vars: or "
			"children:",
			pv_strset_at(v->gt, gi), pv_playbook_schema_kind(body));
	for (size_t i = 0; i < body->n; i++) {
		const struct pv_playbook_node *k = body->keys[i], *val = body->items[i];

		if (!strcmp(k->text, keys[0]))
			r = y_hosts(v, gi, val);
		else if (!strcmp(k->text, keys[1]))
			r = y_vars(v, &v->g[gi].vals, val);
		else if (!strcmp(k->text, keys[2]))
			r = y_children(v, gi, val, depth);
		else {
			snprintf(in, sizeof(in), "in group '%.256s'", pv_strset_at(v->gt, gi));
			r = pv_playbook_schema_unknown(&v->sc, k, in, keys);
		}
		if (r != PV_OK)
			return r;
	}
	return PV_OK;
}

int inv_parse_yaml(struct inv *v, const char *text, size_t len)
{
	const struct pv_playbook_node *plugin;
	struct pv_playbook_node *root = NULL;
	size_t gi;
	int r;

	v->sc = (struct pv_playbook_schema){.name = v->file, .doc = "the inventory"};
	if ((r = pv_playbook_tree_parse(v->file, text, len, &root)) != PV_OK)
		return r;
	if (root->kind != PV_PLAYBOOK_NODE_MAPPING) {
		r = pv_playbook_schema_fail(
			&v->sc, root,
			"the inventory is not a mapping; expected groups such as "
			"'all: {children: ...}'");
		goto out;
	}
	if ((plugin = pv_playbook_tree_get(root, "plugin"))) {
		r = pv_playbook_schema_fail(
			&v->sc, plugin,
			"names an inventory plugin ('%.64s'): a dynamic inventory; "
			"provision reads static inventories only: save its hosts with "
			"'ansible-inventory -i FILE --list -y > clients.yml' and name that "
			"file",
			plugin->text ? plugin->text : "");
		goto out;
	}
	for (size_t i = 0; i < root->n && r == PV_OK; i++) {
		if ((r = inv_group_of(v, root->keys[i]->text, root->keys[i]->line,
				      root->keys[i]->col, &gi)) != PV_OK)
			break;
		r = y_group(v, gi, root->items[i], 0);
	}
out:
	pv_playbook_tree_free(root);
	return r;
}
