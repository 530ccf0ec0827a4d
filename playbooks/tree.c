/* playbooks/tree.c: libyaml events -> our node tree, and command-line overrides on that tree.
 *
 * The event API (not libyaml's document API) is used so that anchors, aliases and tags can be
 * refused where they appear, with their position, and so that nesting depth is bounded before
 * recursion can exhaust the stack on hostile input. */
#include "playbooks/tree.h"

#include "util/err.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64

struct builder {
	yaml_parser_t parser;
	const char *name;
	const char *text;
	size_t len;
	int depth;
};

static int oom(void)
{
	return pv_error(PV_EIO, "out of memory");
}

static int at(struct builder *b, yaml_mark_t mark, const char *fmt, const char *arg)
{
	char msg[512];

	/* fmt holds one %s for arg (an anchor or a tag as written) */
	snprintf(msg, sizeof(msg), fmt, arg);
	return pv_error(PV_ECONFIG, "%s:%zu:%zu: %s", b->name, mark.line + 1, mark.column + 1, msg);
}

/* Line and column (1-based) of a byte offset, for reader errors that carry no mark. */
static void offset_mark(const struct builder *b, size_t off, size_t *line, size_t *col)
{
	size_t l = 1, c = 1;

	for (size_t i = 0; i < off && i < b->len; i++) {
		if (b->text[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)b->text[i] & 0xc0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static int syntax(struct builder *b)
{
	const yaml_parser_t *p = &b->parser;
	const char *problem = p->problem ? p->problem : "unknown problem";
	size_t line, col;

	if (p->error == YAML_MEMORY_ERROR)
		return oom();
	if (p->error == YAML_READER_ERROR) {
		offset_mark(b, p->problem_offset, &line, &col);
		return pv_error(PV_ECONFIG,
				"%s:%zu:%zu: YAML syntax error: %s; expected UTF-8 text", b->name,
				line, col, problem);
	}
	line = p->problem_mark.line + 1;
	col = p->problem_mark.column + 1;
	if (p->context)
		return pv_error(
			PV_ECONFIG,
			"%s:%zu:%zu: YAML syntax error: %s (%s at %zu:%zu); "
			"expected well-formed YAML: 'key: value' lines indented with spaces",
			b->name, line, col, problem, p->context, p->context_mark.line + 1,
			p->context_mark.column + 1);
	return pv_error(PV_ECONFIG,
			"%s:%zu:%zu: YAML syntax error: %s; expected well-formed "
			"YAML: 'key: value' lines indented with spaces",
			b->name, line, col, problem);
}

static int next(struct builder *b, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&b->parser, ev))
		return syntax(b);
	return 0;
}

static struct pv_playbook_node *node_new(enum pv_playbook_node_kind kind, int line, int col,
					 int origin)
{
	struct pv_playbook_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->kind = kind;
	n->line = line;
	n->col = col;
	n->origin = origin;
	return n;
}

static struct pv_playbook_node *scalar_new(const char *text, size_t len, bool plain, int line,
					   int col, int origin)
{
	struct pv_playbook_node *n = node_new(PV_PLAYBOOK_NODE_SCALAR, line, col, origin);

	if (!n)
		return NULL;
	n->text = malloc(len + 1);
	if (!n->text) {
		free(n);
		return NULL;
	}
	memcpy(n->text, text, len);
	n->text[len] = '\0';
	n->plain = plain;
	return n;
}

void pv_playbook_tree_free(struct pv_playbook_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->n; i++) {
		if (node->keys)
			pv_playbook_tree_free(node->keys[i]);
		pv_playbook_tree_free(node->items[i]);
	}
	free(node->keys);
	free(node->items);
	free(node->text);
	free(node);
}

/* Append key (NULL for a sequence) and value; on failure nothing is taken. */
static int append(struct pv_playbook_node *parent, struct pv_playbook_node *key,
		  struct pv_playbook_node *value)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct pv_playbook_node **items = realloc(parent->items, cap * sizeof(*items));

		if (!items)
			return oom();
		parent->items = items;
		if (parent->kind == PV_PLAYBOOK_NODE_MAPPING) {
			struct pv_playbook_node **keys = realloc(parent->keys, cap * sizeof(*keys));

			if (!keys)
				return oom();
			parent->keys = keys;
		}
		parent->cap = cap;
	}
	if (parent->kind == PV_PLAYBOOK_NODE_MAPPING)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = value;
	return 0;
}

static int build(struct builder *b, yaml_event_t *ev, struct pv_playbook_node **out);

/* Children of a mapping or sequence up to its end event. */
static int build_children(struct builder *b, struct pv_playbook_node *parent, yaml_event_type_t end)
{
	yaml_event_t ev;
	struct pv_playbook_node *key = NULL, *value = NULL;
	int r;

	for (;;) {
		if ((r = next(b, &ev)))
			return r;
		if (ev.type == end) {
			yaml_event_delete(&ev);
			return 0;
		}
		r = build(b, &ev, parent->kind == PV_PLAYBOOK_NODE_MAPPING ? &key : &value);
		if (!r && parent->kind == PV_PLAYBOOK_NODE_MAPPING &&
		    key->kind != PV_PLAYBOOK_NODE_SCALAR)
			r = pv_error(PV_ECONFIG,
				     "%s:%d:%d: a %s is used as a mapping key; expected a "
				     "plain key name",
				     b->name, key->line, key->col,
				     key->kind == PV_PLAYBOOK_NODE_MAPPING ? "mapping"
									   : "sequence");
		yaml_event_delete(&ev);
		if (!r && parent->kind == PV_PLAYBOOK_NODE_MAPPING) {
			if (!(r = next(b, &ev))) {
				r = build(b, &ev, &value);
				yaml_event_delete(&ev);
			}
		}
		if (!r)
			r = append(parent, key, value);
		if (r) {
			pv_playbook_tree_free(key);
			pv_playbook_tree_free(value);
			return r;
		}
		key = value = NULL;
	}
}

static int build(struct builder *b, yaml_event_t *ev, struct pv_playbook_node **out)
{
	const yaml_char_t *anchor = NULL, *tag = NULL;
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	struct pv_playbook_node *n;
	int r;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return at(b, ev->start_mark,
			  "alias '*%s': YAML aliases are not supported; expected "
			  "the value written out in full",
			  (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	default:
		return pv_error(PV_EBUG, "%s:%d:%d: unexpected YAML event %d", b->name, line, col,
				(int)ev->type);
	}
	if (anchor)
		return at(b, ev->start_mark,
			  "anchor '&%s': YAML aliases are not supported; "
			  "expected the value written out in full",
			  (const char *)anchor);
	if (tag)
		return at(b, ev->start_mark,
			  "tag '%s': YAML tags are not supported; expected a "
			  "plain value",
			  (const char *)tag);

	if (ev->type == YAML_SCALAR_EVENT) {
		const char *v = (const char *)ev->data.scalar.value;
		size_t len = ev->data.scalar.length;

		if (memchr(v, '\0', len))
			return pv_error(PV_ECONFIG,
					"%s:%d:%d: value holds a NUL character; expected "
					"text",
					b->name, line, col);
		n = scalar_new(v, len, ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE, line, col,
			       -1);
		if (!n)
			return oom();
		*out = n;
		return 0;
	}
	if (b->depth >= MAX_DEPTH)
		return pv_error(PV_ECONFIG,
				"%s:%d:%d: nesting deeper than %d levels; expected a "
				"shallower document",
				b->name, line, col, MAX_DEPTH);
	n = node_new(ev->type == YAML_MAPPING_START_EVENT ? PV_PLAYBOOK_NODE_MAPPING
							  : PV_PLAYBOOK_NODE_SEQUENCE,
		     line, col, -1);
	if (!n)
		return oom();
	b->depth++;
	r = build_children(b, n,
			   ev->type == YAML_MAPPING_START_EVENT ? YAML_MAPPING_END_EVENT
								: YAML_SEQUENCE_END_EVENT);
	b->depth--;
	if (r) {
		pv_playbook_tree_free(n);
		return r;
	}
	*out = n;
	return 0;
}

static int empty(struct builder *b, yaml_mark_t mark)
{
	return pv_error(PV_ECONFIG,
			"%s:%zu:%zu: the document is empty; expected a mapping of "
			"settings (see docs/playbook.md)",
			b->name, mark.line + 1, mark.column + 1);
}

int pv_playbook_tree_parse(const char *name, const char *text, size_t len,
			   struct pv_playbook_node **out)
{
	struct builder b = {.name = name, .text = text, .len = len};
	struct pv_playbook_node *root = NULL;
	yaml_event_t ev;
	int r;

	if (!yaml_parser_initialize(&b.parser))
		return oom();
	yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);

	if ((r = next(&b, &ev))) /* stream start */
		goto out;
	yaml_event_delete(&ev);
	if ((r = next(&b, &ev)))
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		r = empty(&b, ev.start_mark);
		yaml_event_delete(&ev);
		goto out;
	}
	yaml_event_delete(&ev); /* document start */
	if ((r = next(&b, &ev)))
		goto out;
	r = build(&b, &ev, &root);
	if (!r && pv_playbook_tree_is_null(root))
		r = empty(&b, ev.start_mark);
	yaml_event_delete(&ev);
	if (r)
		goto out;
	if ((r = next(&b, &ev))) /* document end */
		goto out;
	yaml_event_delete(&ev);
	if ((r = next(&b, &ev)))
		goto out;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		r = pv_error(PV_ECONFIG,
			     "%s:%zu:%zu: a second YAML document starts here; expected "
			     "one document per playbook",
			     name, ev.start_mark.line + 1, ev.start_mark.column + 1);
	yaml_event_delete(&ev);
out:
	yaml_parser_delete(&b.parser);
	if (r) {
		pv_playbook_tree_free(root);
		return r;
	}
	*out = root;
	return 0;
}

bool pv_playbook_tree_is_null(const struct pv_playbook_node *node)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};

	if (!node || node->kind != PV_PLAYBOOK_NODE_SCALAR || !node->plain)
		return false;
	for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
		if (!strcmp(node->text, nulls[i]))
			return true;
	return false;
}

struct pv_playbook_node *pv_playbook_tree_get(const struct pv_playbook_node *map, const char *key)
{
	if (!map || map->kind != PV_PLAYBOOK_NODE_MAPPING)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->text, key))
			return map->items[i];
	return NULL;
}

/* A sequence index: decimal digits only. */
static bool index_of(const char *seg, size_t len, size_t *idx)
{
	size_t v = 0;

	if (!len || len > 9)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (seg[i] < '0' || seg[i] > '9')
			return false;
		v = v * 10 + (size_t)(seg[i] - '0');
	}
	*idx = v;
	return true;
}

/* The node that goes at a new place: the scalar when last, else an empty container. */
static struct pv_playbook_node *fresh(const char *after, const char *value, int origin)
{
	size_t idx;

	if (!after)
		return scalar_new(value, strlen(value), true, 0, 0, origin);
	return node_new(index_of(after, strcspn(after, "."), &idx) ? PV_PLAYBOOK_NODE_SEQUENCE
								   : PV_PLAYBOOK_NODE_MAPPING,
			0, 0, origin);
}

static void clear(struct pv_playbook_node *map)
{
	for (size_t i = 0; i < map->n; i++) {
		pv_playbook_tree_free(map->keys[i]);
		pv_playbook_tree_free(map->items[i]);
	}
	map->n = 0;
}

int pv_playbook_tree_set(struct pv_playbook_node *root, const char *path, const char *value,
			 int origin, bool clear_parent)
{
	struct pv_playbook_node *cur = root, **slot, *made, *key;
	const char *seg = path, *dot, *after;
	size_t len, idx;

	for (;;) {
		dot = strchr(seg, '.');
		len = dot ? (size_t)(dot - seg) : strlen(seg);
		after = dot ? dot + 1 : NULL;
		if (!len)
			return pv_error(PV_ECONFIG, "empty key in '%s'; expected KEY.KEY...=VALUE",
					path);
		slot = NULL;
		if (cur->kind == PV_PLAYBOOK_NODE_MAPPING) {
			if (!after && clear_parent)
				clear(cur);
			for (size_t i = 0; i < cur->n && !slot; i++)
				if (strlen(cur->keys[i]->text) == len &&
				    !strncmp(cur->keys[i]->text, seg, len))
					slot = &cur->items[i];
			if (!slot) {
				key = scalar_new(seg, len, true, 0, 0, origin);
				made = fresh(after, value, origin);
				if (!key || !made || append(cur, key, made)) {
					pv_playbook_tree_free(key);
					pv_playbook_tree_free(made);
					return oom();
				}
				slot = &cur->items[cur->n - 1];
				if (!after)
					return 0;
			}
		} else if (cur->kind == PV_PLAYBOOK_NODE_SEQUENCE) {
			if (!index_of(seg, len, &idx))
				return pv_error(PV_ECONFIG,
						"'%.*s' in '%s' is not a list index; "
						"expected a number from 0 to %zu",
						(int)len, seg, path, cur->n);
			if (idx > cur->n)
				return pv_error(PV_ECONFIG,
						"index %zu in '%s' is out of range; "
						"expected a number from 0 to %zu",
						idx, path, cur->n);
			if (idx == cur->n) {
				made = fresh(after, value, origin);
				if (!made || append(cur, NULL, made)) {
					pv_playbook_tree_free(made);
					return oom();
				}
				if (!after)
					return 0;
			}
			slot = &cur->items[idx];
		}
		if (!after) {
			/* replace whatever is there by the scalar */
			made = fresh(NULL, value, origin);
			if (!made)
				return oom();
			pv_playbook_tree_free(*slot);
			*slot = made;
			return 0;
		}
		if ((*slot)->kind == PV_PLAYBOOK_NODE_SCALAR) {
			if (!pv_playbook_tree_is_null(*slot))
				return pv_error(PV_ECONFIG,
						"'%.*s' is a value, not a section; "
						"expected a path to a setting",
						(int)(seg + len - path), path);
			/* an empty "key:" becomes the container the path needs */
			made = fresh(after, value, origin);
			if (!made)
				return oom();
			pv_playbook_tree_free(*slot);
			*slot = made;
		}
		cur = *slot;
		seg = after;
	}
}
