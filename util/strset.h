/* util/strset.h: a set of strings (open addressing), each numbered in the order it was first
 * added. Case-insensitive for ASCII as AD's sAMAccountName comparison is (pv_strset_new:
 * which users exist already), or exact, byte for byte (pv_strset_new_exact: Ansible's host
 * and group names, playbooks/inventory.c). */
#ifndef PV_UTIL_STRSET_H
#define PV_UTIL_STRSET_H

#include <stdbool.h>
#include <stddef.h>

struct pv_strset;

/* NULL when out of memory; free with pv_strset_free (NULL is fine). */
struct pv_strset *pv_strset_new(void);
struct pv_strset *pv_strset_new_exact(void);
void pv_strset_free(struct pv_strset *s);
/* Add a copy of str; returns 1 if added, 0 if it was there, -1 on allocation failure (the set
 * as it was). */
int pv_strset_add(struct pv_strset *s, const char *str);
/* pv_strset_add, and *idx (when non-NULL) the string's number, 0 for the first added, whether
 * it was added now or before (not set on failure). */
int pv_strset_put(struct pv_strset *s, const char *str, size_t *idx);
bool pv_strset_has(const struct pv_strset *s, const char *str);
/* Whether str is there, and then its number in *idx (when non-NULL). */
bool pv_strset_find(const struct pv_strset *s, const char *str, size_t *idx);
/* The string numbered i (i < pv_strset_count), as it was first added; it lives as long as the
 * set. */
const char *pv_strset_at(const struct pv_strset *s, size_t i);
size_t pv_strset_count(const struct pv_strset *s);

#endif
