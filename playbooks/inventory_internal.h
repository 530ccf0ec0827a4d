/* playbooks/inventory_internal.h: the model an Ansible inventory is read into, shared by
 * inventory.c (the model, merging, the hosts asked for) and inventory_read.c (INI and YAML);
 * not for use outside them. */
#ifndef PV_PLAYBOOKS_INVENTORY_INTERNAL_H
#define PV_PLAYBOOKS_INVENTORY_INTERNAL_H

#include "playbooks/schema.h"

#include <stdbool.h>
#include <stddef.h>

struct pv_strset;

/* The variables kept, and their spellings (the older ansible_ssh_* ones too). */
enum { V_HOST, V_PORT, V_USER, V_KEY, V_CONN, NV };

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
	struct pv_playbook_schema sc; /* YAML: the file, for the playbook's messages (schema.h) */
};

/* inventory.c: the model. Each failure is recorded and returned (PV_ECONFIG naming the file,
 * the line and, when col > 0, the column; PV_EIO when out of memory). */
int inv_oom(void);
int inv_fail(const struct inv *v, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Whether s uses Jinja ({{ or {%): provision does not template. */
bool inv_jinja(const char *s);
/* The group name into the groups (added once, in order of first appearance): *out its number. */
int inv_group_of(struct inv *v, const char *name, int line, int col, size_t *out);
/* The host name into the hosts (and into group gi's hosts): *out its number. */
int inv_host_of(struct inv *v, const char *name, size_t gi, int line, int col, size_t *out);
/* key=val into x when key is a variable kept (any of its spellings); others are ignored. */
int inv_set_val(struct vals *x, const char *key, const char *val, int line, int col);
/* Whether key is a variable kept. */
bool inv_kept_var(const char *key);
void inv_vals_free(struct vals *x);
/* kid a child of parent (and parent a parent of kid), once. */
int inv_child_of(struct inv *v, size_t parent, size_t kid);

/* inventory_read.c: text (len bytes) read into v, whose group 'all' exists already. */
int inv_parse_ini(struct inv *v, const char *text, size_t len);
int inv_parse_yaml(struct inv *v, const char *text, size_t len);

#endif
