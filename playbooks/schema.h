/* playbooks/schema.h: typed getters for the values of a YAML document read into a node tree
 * (playbooks/tree.h), shared by the playbook, the fileset (fileset/) and the inventory's YAML,
 * so that all three refuse the same things in the same words: "FILE:LINE:COL: 'PATH' is ...;
 * expected ...", with "(did you mean 'x'?)" for an unknown key or value close to a known one.
 *
 * Pure but for paths (getcwd, $HOME). Each function that can fail records one message and
 * returns its code: PV_ECONFIG naming the node, PV_EIO out of memory; 0 otherwise. A getter
 * for KEY of MAP names "PARENT.KEY" in its messages ("KEY" when PARENT is ""), and does
 * nothing when the key is absent, so *dst keeps its default. A string it stores is malloc'd
 * and replaces (frees) the one *dst held: the caller frees the last. *at, when asked for, is
 * the value's node (left alone when the key is absent). */
#ifndef PV_PLAYBOOKS_SCHEMA_H
#define PV_PLAYBOOKS_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

struct pv_playbook_node;

struct pv_playbook_schema {
	const char *name; /* the document's name in messages: its file */
	const char *doc;  /* what it is, for a root that is no mapping: "the playbook" */
	const char *const
		*ovr;	 /* the command line's "key.path=value" overrides, NULL-ended, when
			  * nodes were made by them (pv_playbook_tree_set's origin); else NULL */
	const char *dir; /* the folder a relative path is resolved against */
	bool redact;	 /* hide the override's value in the next message (a secret's) */
};

/* ---- messages ---- */

/* pv_error(PV_EIO, "out of memory"). */
int pv_playbook_schema_oom(void);
/* "command line: option 'K=V'", the value hidden when redact or K names a password. */
void pv_playbook_schema_option(const char *o, bool redact, char *buf, size_t sz);
/* Where a node came from: "FILE:LINE:COL", the override that made it, or "FILE" for NULL. */
void pv_playbook_schema_where(const struct pv_playbook_schema *sc,
			      const struct pv_playbook_node *at, char *buf, size_t sz);
/* PV_ECONFIG, recorded as "WHERE: message". */
int pv_playbook_schema_fail(struct pv_playbook_schema *sc, const struct pv_playbook_node *at,
			    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* PV_ECONFIG: the message a helper just recorded (playbooks/names.h's checks), with where in
 * front, "'path': " after it when path is given, and hint (or nothing) at the end. */
int pv_playbook_schema_fail_recorded(struct pv_playbook_schema *sc,
				     const struct pv_playbook_node *at, const char *path,
				     const char *hint);
/* "a mapping", "a sequence", "empty" (a null scalar) or "a string". */
const char *pv_playbook_schema_kind(const struct pv_playbook_node *n);
/* " (did you mean 'x'?)" for the word of words (NULL-ended) closest to word within 2 edits
 * (adjacent swaps count one), else "". */
void pv_playbook_schema_suggest(const char *word, const char *const *words, char *buf, size_t sz);
/* words joined by ", ". */
void pv_playbook_schema_join(const char *const *words, char *buf, size_t sz);
/* "parent.key", or "key" when parent is NULL or "". */
void pv_playbook_schema_key_path(char *buf, size_t sz, const char *parent, const char *key);

/* ---- keys ---- */

/* map is a mapping (else "'path' is a string; expected <expect>") whose keys are all in keys
 * (NULL-ended), each once. path "" is the root: "at top level" in messages. */
int pv_playbook_schema_keys(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *path, const char *const *keys, const char *expect);
/* Whether key is one of keys. */
bool pv_playbook_schema_known(const char *key, const char *const *keys);
/* PV_ECONFIG: "unknown key 'K' <in> (did you mean ...); expected one of: <keys>"; in is where
 * the key is, such as "in 'server'" or "in group 'web'". */
int pv_playbook_schema_unknown(struct pv_playbook_schema *sc, const struct pv_playbook_node *key,
			       const char *in, const char *const *keys);
/* PV_ECONFIG unless map has key: "missing required key 'K' in 'parent'; expected K: form". */
int pv_playbook_schema_require(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			       const char *parent, const char *key, const char *form);

/* ---- values: the node-level forms (a sequence's items; path is what messages name) ---- */

/* *out the text of a scalar with a value: not a mapping or sequence, not null ("", "~", null
 * unquoted), not "" quoted. *out points into the node. */
int pv_playbook_schema_text_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
			       const char *path, const char *expect, const char **out);
/* A decimal integer from lo to hi (strtol's: a sign allowed, no spaces, no hex). */
int pv_playbook_schema_long_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
			       const char *path, long lo, long hi, long *dst);
/* One of names (NULL-ended): *dst its index. expect NULL says "one of: a, b, c". */
int pv_playbook_schema_enum_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
			       const char *path, const char *const *names, const char *expect,
			       int *dst);

/* ---- values of a mapping's keys ---- */

/* *out the key's text (into the node), NULL when absent. */
int pv_playbook_schema_text(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, const char *expect,
			    const char **out, const struct pv_playbook_node **at);
/* *dst = strdup(s), the old one freed. */
int pv_playbook_schema_set(char **dst, const char *s);
int pv_playbook_schema_str(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			   const char *parent, const char *key, const char *expect, char **dst,
			   const struct pv_playbook_node **at);
int pv_playbook_schema_long(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, long lo, long hi, long *dst,
			    const struct pv_playbook_node **at);
int pv_playbook_schema_int(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			   const char *parent, const char *key, int lo, int hi, int *dst);
int pv_playbook_schema_uint(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, unsigned lo, unsigned hi,
			    unsigned *dst, const struct pv_playbook_node **at);
/* Decimal digits with at most one '.' (0.5, 2, 1.25; no sign, exponent or hex). */
int pv_playbook_schema_number(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			      const char *parent, const char *key, double lo, double hi,
			      double *dst);
/* true/yes or false/no, any case: 0, else -1. */
int pv_playbook_schema_parse_bool(const char *s, bool *out);
int pv_playbook_schema_bool(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, bool *dst);
int pv_playbook_schema_enum(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, const char *const *names,
			    int *dst);

/* ---- paths, addresses, names ---- */

/* $HOME, else the password database's, else "/". */
const char *pv_playbook_schema_home(void);
/* p made absolute (malloc'd, NULL out of memory): "~/x" under $HOME, a relative path under
 * dir. */
char *pv_playbook_schema_resolve(const char *dir, const char *p);
/* A file path, resolved against sc->dir; one an override gave against the current folder
 * (it means what it meant in the shell it was typed in). */
int pv_playbook_schema_path(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			    const char *parent, const char *key, char **dst);
bool pv_playbook_schema_is_ip(const char *s);
/* An IPv4 or IPv6 literal. */
int pv_playbook_schema_ip(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			  const char *parent, const char *key, char **dst);
/* NULL when s is a DNS-style name (dot-separated labels of letters, digits, '-' and, when
 * underscore, '_'), else what is wrong with it ("has an empty label"). */
const char *pv_playbook_schema_bad_dns(const char *s, bool underscore);
int pv_playbook_schema_dns(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			   const char *parent, const char *key, bool underscore, const char *expect,
			   char **dst, const struct pv_playbook_node **at);
/* A distinguished name, checked loosely: every comma-separated part is ATTR=VALUE, no control
 * characters, no value starting with '-'. */
int pv_playbook_schema_dn(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
			  const char *parent, const char *key, char **dst);

#endif
