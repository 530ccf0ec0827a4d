/* playbooks/tree.h: the YAML node tree the playbook parser validates (internal to playbooks/).
 *
 * pv_playbook_tree_parse() turns one YAML document into scalars, mappings and sequences, each
 * carrying where it came from: a line and column (1-based) in the file, or the index of the
 * command-line override that made it. Anchors, aliases, tags and multiple documents are
 * refused, so every node is written exactly once in the text. */
#ifndef PV_PLAYBOOKS_TREE_H
#define PV_PLAYBOOKS_TREE_H

#include <stdbool.h>
#include <stddef.h>

enum pv_playbook_node_kind {
	PV_PLAYBOOK_NODE_SCALAR,
	PV_PLAYBOOK_NODE_MAPPING,
	PV_PLAYBOOK_NODE_SEQUENCE
};

struct pv_playbook_node {
	enum pv_playbook_node_kind kind;
	int line, col; /* 1-based position in the file; 0 when made by an override */
	int origin;    /* -1: from the file; else the index of the override that made it */
	char *text;    /* scalar: its value (never NULL) */
	bool plain;    /* scalar written without quotes: "", "~" and "null" then mean no value */
	size_t n, cap; /* mapping: pairs; sequence: items */
	/* mapping: n scalar keys, in document order, duplicates kept */
	struct pv_playbook_node **keys;
	struct pv_playbook_node **items; /* mapping: n values; sequence: n items */
};

/* Parse text (len bytes) as one YAML document whose name is used in messages. On success
 * *out is the root (free with pv_playbook_tree_free). PV_ECONFIG (recorded, "NAME:LINE:COL: ...")
 * for a syntax error, an empty stream or document, an anchor, alias or tag, a non-scalar mapping
 * key, a NUL character, nesting deeper than 64 or a second document. */
int pv_playbook_tree_parse(const char *name, const char *text, size_t len,
			   struct pv_playbook_node **out);
void pv_playbook_tree_free(struct pv_playbook_node *node);

/* A scalar that means "no value": plain "", "~", "null", "Null" or "NULL". */
bool pv_playbook_tree_is_null(const struct pv_playbook_node *node);

/* The first value for key in a mapping, NULL when absent or when map is not a mapping. */
struct pv_playbook_node *pv_playbook_tree_get(const struct pv_playbook_node *map, const char *key);

/* Set the scalar at a dotted path under root (a mapping), replacing what is there and creating
 * mappings on the way (a sequence when the next segment is a number). A numeric segment
 * indexes a sequence from 0; the index equal to its length appends. When clear_parent is true
 * the mapping holding the last segment is emptied first (to switch a secret's source). New
 * nodes carry origin. PV_ECONFIG (recorded, no location) for an empty segment, a path through
 * a scalar, or an index that is not a number or out of range. */
int pv_playbook_tree_set(struct pv_playbook_node *root, const char *path, const char *value,
			 int origin, bool clear_parent);

#endif
