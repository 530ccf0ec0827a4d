/* util/strset.c: open-addressing hash set of strings (util/hash.h's FNV-1a), ASCII
 * case-insensitive or exact; the strings kept in the order they were added, so each has its
 * number. */
#include "util/strset.h"

#include "util/hash.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pv_strset {
	char **names;	    /* in the order they were added */
	size_t count, ncap; /* names used, allocated */
	size_t *slots;	    /* index into names + 1; 0: empty */
	size_t cap;	    /* slots: a power of two, at most 3/4 used */
	bool exact;	    /* compare byte for byte, not ASCII case-insensitively */
};

/* Case-folded either way: an exact set only finds more names in a slot's chain to compare. */
static uint64_t hash(const char *s)
{
	return pv_hash_fnv64_lower(PV_HASH_FNV64_INIT, s, strlen(s));
}

static struct pv_strset *make(bool exact)
{
	struct pv_strset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->exact = exact;
	s->cap = 64;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	return s;
}

struct pv_strset *pv_strset_new(void)
{
	return make(false);
}

struct pv_strset *pv_strset_new_exact(void)
{
	return make(true);
}

void pv_strset_free(struct pv_strset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		free(s->names[i]);
	free(s->names);
	free(s->slots);
	free(s);
}

static bool same(const struct pv_strset *s, const char *a, const char *b)
{
	return s->exact ? strcmp(a, b) == 0 : strcasecmp(a, b) == 0;
}

/* The slot of str in slots (cap of them): where it is, or the empty one where it would go. */
static size_t find(const struct pv_strset *s, const size_t *slots, size_t cap, const char *str)
{
	size_t i = (size_t)hash(str) & (cap - 1);

	while (slots[i] && !same(s, s->names[slots[i] - 1], str))
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(struct pv_strset *s)
{
	size_t cap = s->cap * 2;
	size_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			slots[find(s, slots, cap, s->names[s->slots[i] - 1])] = s->slots[i];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int pv_strset_put(struct pv_strset *s, const char *str, size_t *idx)
{
	size_t i;

	if ((s->count + 1) * 4 > s->cap * 3 && grow(s) < 0)
		return -1;
	i = find(s, s->slots, s->cap, str);
	if (s->slots[i]) {
		if (idx)
			*idx = s->slots[i] - 1;
		return 0;
	}
	if (s->count == s->ncap) {
		size_t ncap = s->ncap ? s->ncap * 2 : 16;
		char **names = realloc(s->names, ncap * sizeof(*names));

		if (!names)
			return -1;
		s->names = names;
		s->ncap = ncap;
	}
	if (!(s->names[s->count] = strdup(str)))
		return -1;
	s->slots[i] = ++s->count;
	if (idx)
		*idx = s->count - 1;
	return 1;
}

int pv_strset_add(struct pv_strset *s, const char *str)
{
	return pv_strset_put(s, str, NULL);
}

bool pv_strset_find(const struct pv_strset *s, const char *str, size_t *idx)
{
	size_t i = find(s, s->slots, s->cap, str);

	if (!s->slots[i])
		return false;
	if (idx)
		*idx = s->slots[i] - 1;
	return true;
}

bool pv_strset_has(const struct pv_strset *s, const char *str)
{
	return pv_strset_find(s, str, NULL);
}

const char *pv_strset_at(const struct pv_strset *s, size_t i)
{
	return i < s->count ? s->names[i] : NULL;
}

size_t pv_strset_count(const struct pv_strset *s)
{
	return s->count;
}
