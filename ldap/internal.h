/* ldap/internal.h: what the files of ldap/ share; not for use outside the module. */
#ifndef PV_LDAP_INTERNAL_H
#define PV_LDAP_INTERNAL_H

#include <ldap.h>
#include <stdbool.h>

#include "ldap/dir.h"

struct pv_ldap {
	LDAP *ld;
	struct pv_ldap_target target; /* a copy of the caller's (its strings outlive us) */
	bool encrypted;
	char security[96];
	char *ccache; /* MEMORY ccache made for GSSAPI, destroyed with the connection */
};

/* Translate a libldap failure into our outcome and record the message (dir.c). */
int pv_ldap_fail(LDAP *ld, int rc, const char *what, const struct pv_ldap_target *d);

#endif
