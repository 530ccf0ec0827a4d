/* playbooks/playbook_internal.h: what the playbook's files share (internal to playbooks/):
 * the reading context over playbooks/schema.h, and the section readers of lab_read.c and
 * run_read.c that playbook.c calls in order. Every function returns 0 or the recorded
 * error (PV_ECONFIG naming the node, PV_EIO when out of memory). */
#ifndef PV_PLAYBOOKS_PLAYBOOK_INTERNAL_H
#define PV_PLAYBOOKS_PLAYBOOK_INTERNAL_H

#include "playbooks/playbook.h"
#include "playbooks/schema.h"

#include <stdbool.h>
#include <stddef.h>

struct pv_playbook_node;

struct ctx {
	struct pv_playbook_schema sc; /* the file's name, the overrides, the playbook's folder */
	struct pv_playbook *pb;
	struct pv_playbook_ssh ssh; /* top-level ssh: the defaults every host starts from */
	const struct pv_playbook_node *name_template, *alias_template, *share_template,
		*server_name;
	const struct pv_playbook_node **client_at; /* where each client is named (nclients) */
};

/* ---- lab_read.c: ssh, hosts, the domain, users, server, clients, controller ---- */
extern const char *const pb_secret_keys[];
void pb_ssh_release(struct pv_playbook_ssh *s);
int pb_ssh_defaults(struct pv_playbook_ssh *s);
int pb_parse_ssh(struct ctx *c, const struct pv_playbook_node *parent_map, const char *parent,
		 struct pv_playbook_ssh *s);
void pb_host_release(struct pv_playbook_host *h);
int pb_parse_domain(struct ctx *c, const struct pv_playbook_node *root);
int pb_parse_users(struct ctx *c, const struct pv_playbook_node *root);
int pb_parse_server(struct ctx *c, const struct pv_playbook_node *root);
int pb_parse_clients(struct ctx *c, const struct pv_playbook_node *root);
int pb_parse_controller(struct ctx *c, const struct pv_playbook_node *root);

/* ---- run_read.c: driver, drain, load ---- */
int pb_parse_driver(struct ctx *c, const struct pv_playbook_node *root);
int pb_parse_drain(struct ctx *c, const struct pv_playbook_node *root);
int pb_parse_load(struct ctx *c, const struct pv_playbook_node *root);

/* ---- playbook.c ---- */
/* The folder of path (absolute), the current one when path is NULL; NULL out of memory. */
char *pb_dir_of(const char *path);

#endif
