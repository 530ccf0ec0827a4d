/* playbooks/playbook_internal.h: what the playbook's files share (internal to playbooks/):
 * the reading context, the typed getters of schema.c, and the section readers of lab_read.c
 * and run_read.c that playbook.c calls in order. Every function returns 0 or the recorded
 * error (PV_ECONFIG naming the node, PV_EIO when out of memory). */
#ifndef PV_PLAYBOOKS_PLAYBOOK_INTERNAL_H
#define PV_PLAYBOOKS_PLAYBOOK_INTERNAL_H

#include "playbooks/playbook.h"

#include <stdbool.h>
#include <stddef.h>

struct pv_node;

struct ctx {
	const char *name;	/* file name in messages */
	const char *const *ovr; /* overrides, for messages about nodes they made */
	bool redact;		/* hide the override's value in the next message */
	struct pv_playbook *pb;
	struct pv_ssh ssh; /* top-level ssh: the defaults every host starts from */
	const struct pv_node *name_template, *alias_template, *share_template, *server_name;
	const struct pv_node **client_at; /* where each client is named (nclients) */
};

/* ---- schema.c: messages ---- */
int oom(void);
void option_name(const char *o, bool redact, char *buf, size_t sz);
void where(const struct ctx *c, const struct pv_node *at, char *buf, size_t sz);
int fail(struct ctx *c, const struct pv_node *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int fail_recorded(struct ctx *c, const struct pv_node *at, const char *path, const char *hint);
const char *kind_name(const struct pv_node *n);
size_t distance(const char *a, const char *b);
void suggest(const char *word, const char *const *words, char *buf, size_t sz);
void join_words(const char *const *words, char *buf, size_t sz);
void key_path(char *buf, size_t sz, const char *parent, const char *key);

/* ---- schema.c: typed getters ---- */
int check_map(struct ctx *c, const struct pv_node *map, const char *path, const char *const *keys,
	      const char *expect);
int text_of(struct ctx *c, const struct pv_node *v, const char *path, const char *expect,
	    const char **out);
int get_text(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     const char *expect, const char **out, const struct pv_node **at);
int set_str(char **dst, const char *s);
int get_str(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	    const char *expect, char **dst, const struct pv_node **at);
int get_long(struct ctx *c, const struct pv_node *map, const char *parent, const char *key, long lo,
	     long hi, long *dst, const struct pv_node **at);
int get_int(struct ctx *c, const struct pv_node *map, const char *parent, const char *key, int lo,
	    int hi, int *dst);
int get_uint(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     unsigned lo, unsigned hi, unsigned *dst, const struct pv_node **at);
int get_number(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	       double lo, double hi, double *dst);
int parse_bool(const char *s, bool *out);
int get_bool(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     bool *dst);
int get_enum(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     const char *const *names, int *dst);
int require(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	    const char *form);

/* ---- schema.c: paths and value checks ---- */
const char *home(void);
char *resolve(const char *dir, const char *p);
int get_path(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	     char **dst);
bool is_ip(const char *s);
int get_ip(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	   char **dst);
const char *bad_dns(const char *s, bool underscore);
int get_dns(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	    bool underscore, const char *expect, char **dst, const struct pv_node **at);
void upcase(char *s);
void downcase(char *s);
int get_dn(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
	   char **dst);
int check_folder(struct ctx *c, const struct pv_node *v, const char *key, const char *p,
		 bool absolute, const char *where);
int get_template(struct ctx *c, const struct pv_node *map, const char *parent, const char *key,
		 unsigned allowed, unsigned required, char **dst, const struct pv_node **at);

/* ---- lab_read.c: ssh, hosts, the domain, users, server, clients, controller ---- */
extern const char *const secret_keys[];
void ssh_release(struct pv_ssh *s);
int ssh_defaults(struct pv_ssh *s);
int parse_ssh(struct ctx *c, const struct pv_node *parent_map, const char *parent,
	      struct pv_ssh *s);
void host_release(struct pv_host *h);
int parse_domain(struct ctx *c, const struct pv_node *root);
int parse_users(struct ctx *c, const struct pv_node *root);
int parse_server(struct ctx *c, const struct pv_node *root);
int parse_clients(struct ctx *c, const struct pv_node *root);
int parse_controller(struct ctx *c, const struct pv_node *root);

/* ---- run_read.c: driver, drain, load ---- */
int parse_driver(struct ctx *c, const struct pv_node *root);
int parse_drain(struct ctx *c, const struct pv_node *root);
int parse_load(struct ctx *c, const struct pv_node *root);

/* ---- playbook.c ---- */
/* The folder of path (absolute), the current one when path is NULL; NULL out of memory. */
char *dir_of(const char *path);

#endif
