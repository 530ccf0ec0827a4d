/* util/strset.h: a set of strings (open addressing), case-insensitive for ASCII as AD's
 * sAMAccountName comparison is. Used to remember which users exist already. */
#ifndef PV_UTIL_STRSET_H
#define PV_UTIL_STRSET_H

#include <stdbool.h>
#include <stddef.h>

struct pv_strset;

struct pv_strset *pv_strset_new(void);
void pv_strset_free(struct pv_strset *s);
/* Add a copy of str; returns 1 if added, 0 if it was there, -1 on allocation failure. */
int pv_strset_add(struct pv_strset *s, const char *str);
bool pv_strset_has(const struct pv_strset *s, const char *str);
size_t pv_strset_count(const struct pv_strset *s);

#endif
