/* util/strset.c: open-addressing hash set of strings, ASCII case-insensitive (FNV-1a). */
#include "util/strset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pv_strset {
	char **slots;
	size_t cap, count; /* cap is a power of two */
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		h = (h ^ c) * 1099511628211ull;
	}
	return h;
}

struct pv_strset *pv_strset_new(void)
{
	struct pv_strset *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cap = 64;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return NULL;
	}
	return s;
}

void pv_strset_free(struct pv_strset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i]);
	free(s->slots);
	free(s);
}

static size_t find(char *const *slots, size_t cap, const char *str)
{
	size_t i = (size_t)hash(str) & (cap - 1);

	while (slots[i] && strcasecmp(slots[i], str) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(struct pv_strset *s)
{
	size_t cap = s->cap * 2;
	char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i])
			slots[find(slots, cap, s->slots[i])] = s->slots[i];
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	return 0;
}

int pv_strset_add(struct pv_strset *s, const char *str)
{
	size_t i;

	if ((s->count + 1) * 4 > s->cap * 3 && grow(s) < 0)
		return -1;
	i = find(s->slots, s->cap, str);
	if (s->slots[i])
		return 0;
	if (!(s->slots[i] = strdup(str)))
		return -1;
	s->count++;
	return 1;
}

bool pv_strset_has(const struct pv_strset *s, const char *str)
{
	return s->slots[find(s->slots, s->cap, str)] != NULL;
}

size_t pv_strset_count(const struct pv_strset *s)
{
	return s->count;
}
