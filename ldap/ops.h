/* ldap/ops.h: directory operations over a bound connection (struct pv_ldap): base reads, paged
 * subtree searches, synchronous adds, and a pipeline that keeps many asynchronous adds or
 * deletes in flight on one connection so the DC never waits for us.
 *
 * Attribute values are byte strings (a value may be binary, e.g. unicodePwd). */
#ifndef PV_LDAP_OPS_H
#define PV_LDAP_OPS_H

#include <stddef.h>

#include "ldap/dir.h"

struct pv_ldap_attr {
	const char *name;
	const char *const *vals; /* n values */
	const size_t *lens;	 /* lengths; NULL: every value is a C string */
	size_t n;
};

/* Per-operation outcome reported by the pipeline and by pv_ldap_add. */
enum pv_ldap_result {
	PV_LDAP_DONE = 0,
	PV_LDAP_EXISTS,	  /* add: the entry exists already (LDAP 68) */
	PV_LDAP_NOSUCH,	  /* delete: the entry is gone already (LDAP 32) */
	PV_LDAP_REJECTED, /* the server refused this one entry (constraint, policy...) */
	PV_LDAP_FATAL,	  /* the connection or the credentials failed: stop */
};

/* Read one entry's attribute (first value) by DN. *value is NULL when the entry exists but
 * lacks the attribute. Returns PV_OK, or PV_EDIR with "no such entry" recorded when absent
 * (*found = 0 then, and no error), other codes on failure. */
int pv_ldap_read(struct pv_ldap *dir, const char *dn, const char *attr, int *found, char **value);

/* Paged subtree search (RFC 2696 simple paged results, pages of page_size): fn is called for
 * each entry with its DN and the first value of each of attrs (NULL when absent).
 * A non-zero return from fn stops the search and is returned. */
typedef int (*pv_ldap_entry_fn)(const char *dn, const char *const *values, void *ctx);
int pv_ldap_search(struct pv_ldap *dir, const char *base, const char *filter,
		   const char *const *attrs, int page_size, pv_ldap_entry_fn fn, void *ctx);

/* Add one entry and wait; *result tells what happened (message recorded unless DONE). */
int pv_ldap_add(struct pv_ldap *dir, const char *dn, const struct pv_ldap_attr *attrs,
		size_t nattrs, enum pv_ldap_result *result);
/* Delete one entry and wait. */
int pv_ldap_delete(struct pv_ldap *dir, const char *dn, enum pv_ldap_result *result);
/* Delete dn and everything below it in one request, with AD's tree-delete control
 * (1.2.840.113556.1.4.805, MS-ADTS 3.1.1.3.4.1.3): the DC removes the subtree itself, far
 * cheaper than one request per entry. Waits up to budget seconds, calling tick(arg) about
 * once a second meanwhile. A DC that stops part way (AD's adminLimitExceeded) is asked again.
 * *result: DONE; NOSUCH (already gone); REJECTED with a message recorded when the DC does not
 * support the control or refuses this subtree (the caller deletes entry by entry instead);
 * FATAL with PV_EDIR returned. */
int pv_ldap_delete_tree(struct pv_ldap *dir, const char *dn, int budget, void (*tick)(void *),
			void *arg, enum pv_ldap_result *result);

/* Every value of attr in the entry dn (C strings; a value holding NUL is cut there). Follows
 * AD's ranged retrieval ("attr;range=0-1499", MS-ADTS 3.1.1.3.1.3.3) when the DC answers so.
 * *found is 0 when the entry does not exist (*values NULL, *n 0, PV_OK). On success the
 * caller frees *values with pv_ldap_values_free. */
int pv_ldap_read_values(struct pv_ldap *dir, const char *dn, const char *attr, int *found,
			char ***values, size_t *n);
void pv_ldap_values_free(char **values, size_t n);

/* Change the values of one attribute of one entry and wait (RFC 4511 4.6). ADD adds values
 * (one already present fails the whole modify with "type or value exists": pass only missing
 * ones), DELETE removes the given values (one absent fails it: "no such attribute"), REPLACE
 * sets exactly these values (n == 0 removes the attribute). The values go in one request.
 * *result: DONE, REJECTED (message recorded: a constraint such as a duplicate SPN, or a value
 * present / absent), NOSUCH (the entry is gone), or FATAL with PV_EDIR returned. */
enum pv_ldap_mod { PV_LDAP_MOD_ADD, PV_LDAP_MOD_DELETE, PV_LDAP_MOD_REPLACE };
int pv_ldap_modify_values(struct pv_ldap *dir, const char *dn, const char *attr,
			  enum pv_ldap_mod op, const char *const *values, size_t n,
			  enum pv_ldap_result *result);

/* The pipeline: at most window operations outstanding; done() is called once per operation,
 * in completion order, with the tag given at submission and, for anything but DONE, a
 * message. A done() returning non-zero stops the pipeline (later submissions fail). */
struct pv_ldap_pipe;
typedef int (*pv_ldap_done_fn)(void *tag, enum pv_ldap_result result, const char *msg, void *ctx);
int pv_ldap_pipe_new(struct pv_ldap *dir, int window, pv_ldap_done_fn done, void *ctx,
		     struct pv_ldap_pipe **out);
/* Submit; blocks collecting results while the window is full. The DN and values are copied
 * into the request by libldap before this returns. Returns PV_OK, or the code that stopped
 * the pipeline. */
int pv_ldap_pipe_add(struct pv_ldap_pipe *p, const char *dn, const struct pv_ldap_attr *attrs,
		     size_t nattrs, void *tag);
int pv_ldap_pipe_delete(struct pv_ldap_pipe *p, const char *dn, void *tag);
/* Modify: replace each attribute's values with the given ones. */
int pv_ldap_pipe_replace(struct pv_ldap_pipe *p, const char *dn, const struct pv_ldap_attr *attrs,
			 size_t nattrs, void *tag);
/* Wait for everything outstanding. */
int pv_ldap_pipe_drain(struct pv_ldap_pipe *p);
/* Abandons anything still outstanding; NULL is fine. */
void pv_ldap_pipe_free(struct pv_ldap_pipe *p);

#endif
