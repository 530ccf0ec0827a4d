/* playbooks/inventory.c: Ansible inventories (INI, YAML) -> the hosts of one group, with the
 * variables provision uses merged as Ansible merges them (see inventory.h). This file holds the
 * model, the merging and the hosts asked for; inventory_read.c reads the two formats into it.
 *
 * Both formats fill the same model: hosts and groups numbered by util/strset (names exact, in
 * order of first appearance), each with the few variables we keep and the line that set each;
 * groups know their hosts, children and parents. Merging follows Ansible's rule: of the groups a
 * host is in (and their ancestors, and 'all'), the one with the greatest depth (then the greatest
 * name) gives a variable; the host's own value wins over all of them. Jinja and ansible_connection
 * are judged on the merged values of the hosts asked for, so a templated variable elsewhere in the
 * file does not stop us. */
#include "playbooks/inventory.h"

#include "playbooks/inventory_internal.h"
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

/* The spellings of the variables kept (the older ansible_ssh_* ones too). */
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

int inv_oom(void)
{
	return pv_error(PV_EIO, "out of memory");
}

int inv_fail(const struct inv *v, int line, int col, const char *fmt, ...)
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

bool inv_jinja(const char *s)
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
			return inv_oom();
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
		return inv_oom();
	memset((char *)p + *have * size, 0, (cap - *have) * size);
	*arr = p;
	*have = cap;
	return PV_OK;
}

int inv_group_of(struct inv *v, const char *name, int line, int col, size_t *out)
{
	int added, r;

	if (!*name || strlen(name) > NAME_MAX_LEN || strpbrk(name, " \t:[],"))
		return inv_fail(v, line, col,
				"'%.64s' is not a group name; expected letters, digits, "
				"'_', '-' or '.'",
				name);
	if (inv_jinja(name))
		return inv_fail(v, line, col,
				"group name '%.64s' uses Jinja; provision does not template: "
				"expected a plain name",
				name);
	if ((added = pv_strset_put(v->gt, name, out)) < 0)
		return inv_oom();
	if (added) {
		if (pv_strset_count(v->gt) > GROUPS_MAX)
			return inv_fail(v, line, col, "more than %d groups; expected fewer",
					GROUPS_MAX);
		if ((r = grow((void **)&v->g, &v->gcap, *out + 1, sizeof(*v->g))) != PV_OK)
			return r;
		v->g[*out].line = line;
		v->g[*out].depth = -1;
	}
	return PV_OK;
}

/* The host name into the hosts (and into group gi's hosts). */
int inv_host_of(struct inv *v, const char *name, size_t gi, int line, int col, size_t *out)
{
	int added, r;

	if (!*name || strlen(name) > NAME_MAX_LEN)
		return inv_fail(v, line, col,
				"'%.64s' is not a host name; expected 1 to %d characters", name,
				NAME_MAX_LEN);
	if (inv_jinja(name))
		return inv_fail(v, line, col,
				"host name '%.64s' uses Jinja; provision does not template: "
				"expected a plain name",
				name);
	if ((added = pv_strset_put(v->ht, name, out)) < 0)
		return inv_oom();
	if (added) {
		if (pv_strset_count(v->ht) > PV_PLAYBOOK_INVENTORY_HOSTS_MAX)
			return inv_fail(v, line, col, "more than %d hosts; expected fewer",
					PV_PLAYBOOK_INVENTORY_HOSTS_MAX);
		if ((r = grow((void **)&v->h, &v->hcap, *out + 1, sizeof(*v->h))) != PV_OK)
			return r;
		v->h[*out].line = line;
	}
	if (v->h[*out].last_group == gi + 1)
		return PV_OK;
	v->h[*out].last_group = gi + 1;
	return list_push(&v->g[gi].hosts, *out, false);
}

int inv_set_val(struct vals *x, const char *key, const char *val, int line, int col)
{
	for (size_t i = 0; i < sizeof(var_names) / sizeof(var_names[0]); i++) {
		int k = var_names[i].var;
		char *d;

		if (strcmp(key, var_names[i].name) != 0)
			continue;
		if (!(d = strdup(val)))
			return inv_oom();
		free(x->v[k]);
		x->v[k] = d;
		x->line[k] = line;
		x->col[k] = col;
	}
	return PV_OK;
}

bool inv_kept_var(const char *key)
{
	for (size_t i = 0; i < sizeof(var_names) / sizeof(var_names[0]); i++)
		if (!strcmp(key, var_names[i].name))
			return true;
	return false;
}

void inv_vals_free(struct vals *x)
{
	for (int k = 0; k < NV; k++)
		free(x->v[k]);
}

int inv_child_of(struct inv *v, size_t parent, size_t kid)
{
	int r = list_add(&v->g[parent].kids, kid);

	return r ? r : list_add(&v->g[kid].parents, parent);
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
		return inv_fail(v, g->line, 0,
				"group '%s' is a child of itself (through its children)",
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
		     struct pv_playbook_inventory_host *out)
{
	const char *val[NV];
	int line[NV] = {0}, col[NV] = {0};

	out->line = v->h[hi].line;
	if (!(out->name = strdup(pv_strset_at(v->ht, hi))))
		return inv_oom();
	for (int k = 0; k < NV; k++) {
		val[k] = value(v, hi, direct, nd, k, &line[k], &col[k]);
		if (val[k] && inv_jinja(val[k]))
			return inv_fail(
				v, line[k], col[k],
				"host '%s': a value uses Jinja ('%.64s'); provision does not "
				"template: expected a plain value",
				pv_strset_at(v->ht, hi), val[k]);
	}
	if (val[V_CONN] && strcmp(val[V_CONN], "ssh") && strcmp(val[V_CONN], "smart") &&
	    strcmp(val[V_CONN], "paramiko") && strcmp(val[V_CONN], "paramiko_ssh"))
		return inv_fail(
			v, line[V_CONN], col[V_CONN],
			"host '%s': ansible_connection is '%.32s'; provision reaches clients "
			"over SSH only (OpenSSH on Windows too): expected ssh",
			pv_strset_at(v->ht, hi), val[V_CONN]);
	if (val[V_PORT]) {
		const char *p = val[V_PORT];

		if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atoi(p) < 1 ||
		    atoi(p) > 65535)
			return inv_fail(v, line[V_PORT], col[V_PORT],
					"host '%s': ansible_port is '%.32s'; expected a number "
					"from 1 to 65535",
					pv_strset_at(v->ht, hi), p);
		out->port = atoi(p);
	}
	if ((val[V_HOST] && !(out->address = strdup(val[V_HOST]))) ||
	    (val[V_USER] && !(out->user = strdup(val[V_USER]))) ||
	    (val[V_KEY] && !(out->identity = strdup(val[V_KEY]))))
		return inv_oom();
	return PV_OK;
}

static int select_hosts(struct inv *v, const char *group, struct pv_playbook_inventory *inv)
{
	bool *seen_g = calloc(pv_strset_count(v->gt), sizeof(bool)),
	     *want = calloc(pv_strset_count(v->ht) + 1, sizeof(bool));
	struct idx_list *direct = calloc(pv_strset_count(v->ht) + 1, sizeof(*direct));
	size_t gi, n = 0;
	int r = PV_OK;

	if (!seen_g || !want || !direct) {
		r = inv_oom();
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
		r = inv_oom();
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
		inv_vals_free(&v->h[i].vals);
	for (size_t i = 0; i < v->gcap; i++) {
		inv_vals_free(&v->g[i].vals);
		free(v->g[i].hosts.v);
		free(v->g[i].kids.v);
		free(v->g[i].parents.v);
	}
	free(v->h);
	free(v->g);
	pv_strset_free(v->ht);
	pv_strset_free(v->gt);
}

int pv_playbook_inventory_parse(const char *name, const char *text, size_t len, const char *group,
				struct pv_playbook_inventory **out)
{
	struct inv v;
	struct pv_playbook_inventory *inv = calloc(1, sizeof(*inv));
	int r;

	memset(&v, 0, sizeof(v));
	v.file = name ? name : "inventory";
	v.yaml = ends_with(v.file, ".yml") || ends_with(v.file, ".yaml") ||
		 ends_with(v.file, ".json");
	if (!inv)
		return inv_oom();
	inv->format = v.yaml ? "YAML" : "INI";
	if (!(v.ht = pv_strset_new_exact()) || !(v.gt = pv_strset_new_exact()))
		r = inv_oom();
	else
		r = inv_group_of(&v, "all", 1, 0, &v.all);
	if (r == PV_OK)
		r = v.yaml ? inv_parse_yaml(&v, text, len) : inv_parse_ini(&v, text, len);
	if (r == PV_OK)
		r = resolve_groups(&v);
	if (r == PV_OK)
		r = select_hosts(&v, group ? group : "all", inv);
	inv_release(&v);
	if (r != PV_OK) {
		pv_playbook_inventory_free(inv);
		return r;
	}
	*out = inv;
	return PV_OK;
}

int pv_playbook_inventory_read(const char *path, const char *group,
			       struct pv_playbook_inventory **out)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int r = pv_file_read(path, "inventory", PV_PLAYBOOK_INVENTORY_BYTES_MAX, &text, &len, &st);

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
		r = pv_playbook_inventory_parse(path, text, len, group, out);
	free(text);
	return r;
}

void pv_playbook_inventory_free(struct pv_playbook_inventory *inv)
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
