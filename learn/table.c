/* learn/table.c: a bounded table of 64-bit keys (see learn/table.h). */
#include "learn/table.h"

#include <stdlib.h>
#include <string.h>

static size_t slot(uint64_t key, size_t mask)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

void pv_learn_table_init(struct pv_learn_table *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

static bool grow(struct pv_learn_table *t)
{
	size_t ncap = t->slots ? t->slots * 2 : 16;
	struct pv_learn_table_entry *n = calloc(ncap, sizeof(*n));

	if (!n)
		return false;
	for (size_t i = 0; i < t->slots; i++) {
		size_t j;

		if (!t->e[i].used)
			continue;
		for (j = slot(t->e[i].key, ncap - 1); n[j].used; j = (j + 1) & (ncap - 1))
			;
		n[j] = t->e[i];
	}
	free(t->e);
	t->e = n;
	t->slots = ncap;
	return true;
}

struct pv_learn_table_entry *pv_learn_table_get(const struct pv_learn_table *t, uint64_t key)
{
	size_t i;

	if (!t->slots)
		return NULL;
	for (i = slot(key, t->slots - 1); t->e[i].used; i = (i + 1) & (t->slots - 1))
		if (t->e[i].key == key)
			return &t->e[i];
	return NULL;
}

struct pv_learn_table_entry *pv_learn_table_put(struct pv_learn_table *t, uint64_t key, double time,
						uint32_t v)
{
	struct pv_learn_table_entry *e = pv_learn_table_get(t, key);
	size_t i;

	if (e) {
		e->t = time;
		e->v = v;
		e->w = 0;
		return e;
	}
	if (t->n >= t->max || ((t->n + 1) * 2 > t->slots && !grow(t)))
		return NULL;
	for (i = slot(key, t->slots - 1); t->e[i].used; i = (i + 1) & (t->slots - 1))
		;
	t->e[i] = (struct pv_learn_table_entry){.key = key, .t = time, .v = v, .used = true};
	t->n++;
	return &t->e[i];
}

bool pv_learn_table_take(struct pv_learn_table *t, uint64_t key, struct pv_learn_table_entry *out)
{
	struct pv_learn_table_entry *e = pv_learn_table_get(t, key);
	size_t mask = t->slots - 1, i, j;

	if (!e)
		return false;
	if (out)
		*out = *e;
	i = (size_t)(e - t->e);
	/* the entries after it that would not be found past the empty slot move back */
	for (j = i;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!t->e[j].used)
			break;
		k = slot(t->e[j].key, mask);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			t->e[i] = t->e[j];
			i = j;
		}
	}
	t->e[i].used = false;
	t->n--;
	return true;
}

void pv_learn_table_release(struct pv_learn_table *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}
