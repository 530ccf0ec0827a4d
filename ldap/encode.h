/* ldap/encode.h: pure encodings for LDAP and AD: DN and filter escaping, the unicodePwd
 * value. No I/O; unit-tested in tests/unit/check_ldap.c. */
#ifndef PV_LDAP_ENCODE_H
#define PV_LDAP_ENCODE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

/* Append value escaped as an RDN attribute value (RFC 4514 section 2.4) to b.
 * Returns 0, or -1 on allocation failure. */
int pv_ldap_dn_escape(struct pv_buf *b, const char *value);
/* Append value escaped for an LDAP search filter (RFC 4515 section 3) to b. */
int pv_ldap_filter_escape(struct pv_buf *b, const char *value);
/* AD's unicodePwd: the password in double quotes, encoded UTF-16LE (MS-ADTS 3.1.1.3.1.5.1).
 * utf8 must be valid UTF-8; out receives the bytes (wipe it: it is a secret).
 * Returns 0, -1 on allocation failure, -2 on invalid UTF-8. */
int pv_ldap_unicodepwd(struct pv_buf *out, const char *utf8, size_t len);

/* AD's ranged retrieval of a multi-valued attribute (MS-ADTS 3.1.1.3.1.3.3): a DC answers at
 * most MaxValRange values at a time, named "attr;range=LO-HI" (HI is '*' on the last slice),
 * and the next request asks for "attr;range=HI+1-*". */
struct pv_ldap_range {
	unsigned long next; /* the first value the next request asks for */
	size_t values;	    /* values taken so far */
	bool done;	    /* the last slice (or the whole attribute) was taken */
	bool took;	    /* a slice was taken from the answer being read */
};
/* A DC that answers otherwise could keep a reader asking forever (";range=0-0" to every
 * request) or fill its memory: a slice must start where asked (LO is the request's), end at
 * a number no smaller than LO and hold values unless it is the last; at most
 * PV_LDAP_VALUES_MAX values in all (ldap/caps.h). Anything else is refused (PV_EDIR,
 * recorded, naming what the DC answered). */
/* Before the attributes of an answer are looked at. */
void pv_ldap_range_answer(struct pv_ldap_range *r);
/* One attribute name of an answer (with nvals values): 1 when it holds attr's values (attr
 * itself, or a slice of it), to take; 0 when it is another attribute; -1 (recorded) when
 * it is a slice that breaks the rules above or one value too many. */
int pv_ldap_range_take(struct pv_ldap_range *r, const char *name, const char *attr, size_t nvals);
/* After an answer: 1 when another request is needed (want, len bytes, is the name to ask
 * for), 0 when every value was taken, -1 (recorded) when the answer held no slice though
 * the last one was not taken yet. */
int pv_ldap_range_next(struct pv_ldap_range *r, const char *attr, char *want, size_t len);

#endif
