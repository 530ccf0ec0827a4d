/* ldap/ops.h: directory operations over a bound connection (struct pv_dir): base reads, paged
 * subtree searches, synchronous adds, and a pipeline that keeps many asynchronous adds or
 * deletes in flight on one connection so the DC never waits for us.
 *
 * Attribute values are byte strings (a value may be binary, e.g. unicodePwd). */
#ifndef PV_LDAP_OPS_H
#define PV_LDAP_OPS_H

#include <stddef.h>

#include "ldap/dir.h"

struct pv_attr {
	const char *name;
	const char *const *vals; /* n values */
	const size_t *lens;      /* lengths; NULL: every value is a C string */
	size_t n;
};

/* Per-operation outcome reported by the pipeline and by pv_dir_add. */
enum pv_dir_result {
	PV_DIR_DONE = 0,
	PV_DIR_EXISTS,   /* add: the entry exists already (LDAP 68) */
	PV_DIR_NOSUCH,   /* delete: the entry is gone already (LDAP 32) */
	PV_DIR_REJECTED, /* the server refused this one entry (constraint, policy...) */
	PV_DIR_FATAL,    /* the connection or the credentials failed: stop */
};

/* Read one entry's attribute (first value) by DN. *value is NULL when the entry exists but
 * lacks the attribute. Returns PV_OK, or PV_EDIR with "no such entry" recorded when absent
 * (*found = 0 then, and no error), other codes on failure. */
int pv_dir_read(struct pv_dir *dir, const char *dn, const char *attr, int *found, char **value);

/* Paged subtree search (RFC 2696 simple paged results, pages of page_size): fn is called for
 * each entry with its DN and the first value of each of attrs (NULL when absent).
 * A non-zero return from fn stops the search and is returned. */
typedef int (*pv_dir_entry_fn)(const char *dn, const char *const *values, void *ctx);
int pv_dir_search(struct pv_dir *dir, const char *base, const char *filter,
		  const char *const *attrs, int page_size, pv_dir_entry_fn fn, void *ctx);

/* Add one entry and wait; *result tells what happened (message recorded unless DONE). */
int pv_dir_add(struct pv_dir *dir, const char *dn, const struct pv_attr *attrs, size_t nattrs,
	       enum pv_dir_result *result);
/* Delete one entry and wait. */
int pv_dir_delete(struct pv_dir *dir, const char *dn, enum pv_dir_result *result);

/* The pipeline: at most window operations outstanding; done() is called once per operation,
 * in completion order, with the tag given at submission and, for anything but DONE, a
 * message. A done() returning non-zero stops the pipeline (later submissions fail). */
struct pv_dir_pipe;
typedef int (*pv_dir_done_fn)(void *tag, enum pv_dir_result result, const char *msg, void *ctx);
int pv_dir_pipe_new(struct pv_dir *dir, int window, pv_dir_done_fn done, void *ctx,
		    struct pv_dir_pipe **out);
/* Submit; blocks collecting results while the window is full. The DN and values are copied
 * into the request by libldap before this returns. Returns PV_OK, or the code that stopped
 * the pipeline. */
int pv_dir_pipe_add(struct pv_dir_pipe *p, const char *dn, const struct pv_attr *attrs,
		    size_t nattrs, void *tag);
int pv_dir_pipe_delete(struct pv_dir_pipe *p, const char *dn, void *tag);
/* Modify: replace each attribute's values with the given ones. */
int pv_dir_pipe_replace(struct pv_dir_pipe *p, const char *dn, const struct pv_attr *attrs,
			size_t nattrs, void *tag);
/* Wait for everything outstanding. */
int pv_dir_pipe_drain(struct pv_dir_pipe *p);
/* Abandons anything still outstanding; NULL is fine. */
void pv_dir_pipe_free(struct pv_dir_pipe *p);

#endif
