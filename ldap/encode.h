/* ldap/encode.h: pure encodings for LDAP and AD: DN and filter escaping, the unicodePwd
 * value. No I/O; unit-tested in tests/unit/check_ldap.c. */
#ifndef PV_LDAP_ENCODE_H
#define PV_LDAP_ENCODE_H

#include <stddef.h>

#include "util/buf.h"

/* Append value escaped as an RDN attribute value (RFC 4514 section 2.4) to b.
 * Returns 0, or -1 on allocation failure. */
int pv_dn_escape(struct pv_buf *b, const char *value);
/* Append value escaped for an LDAP search filter (RFC 4515 section 3) to b. */
int pv_filter_escape(struct pv_buf *b, const char *value);
/* AD's unicodePwd: the password in double quotes, encoded UTF-16LE (MS-ADTS 3.1.1.3.1.5.1).
 * utf8 must be valid UTF-8; out receives the bytes (wipe it: it is a secret).
 * Returns 0, -1 on allocation failure, -2 on invalid UTF-8. */
int pv_unicodepwd(struct pv_buf *out, const char *utf8, size_t len);

#endif
