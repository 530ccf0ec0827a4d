/* learn/table.h: a table of 64-bit keys, each with a time and a small value, that grows to a
 * bound and no further (linear probing, deletion by backward shift): the requests awaiting
 * their answer by message id, the files open by file id, the sessions by id. Pure logic. */
#ifndef PV_LEARN_TABLE_H
#define PV_LEARN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pv_learn_table_entry {
	uint64_t key;
	double t;
	uint32_t v;
	uint32_t w; /* a second value, set by the caller (0 when put) */
	bool used;
};

struct pv_learn_table {
	struct pv_learn_table_entry *e;
	size_t n, slots, max; /* entries, slots (a power of 2, or 0), the bound on entries */
};

void pv_learn_table_init(struct pv_learn_table *t, size_t max);
/* key's entry set to (t, v, w 0), added when not there: the entry (valid until the next put or
 * take), or NULL when the table is at its bound or out of memory (nothing added). */
struct pv_learn_table_entry *pv_learn_table_put(struct pv_learn_table *t, uint64_t key, double time,
						uint32_t v);
/* key's entry, or NULL. */
struct pv_learn_table_entry *pv_learn_table_get(const struct pv_learn_table *t, uint64_t key);
/* key's entry removed, *out (when not NULL) a copy of it: false when it was not there. */
bool pv_learn_table_take(struct pv_learn_table *t, uint64_t key, struct pv_learn_table_entry *out);
void pv_learn_table_release(struct pv_learn_table *t);

#endif
