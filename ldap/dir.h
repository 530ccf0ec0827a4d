/* ldap/dir.h: connections to the domain's directory (libldap, the only place it is used;
 * Kerberos tickets come from krb/krb.h).
 *
 * A connection is always authenticated and, by default, encrypted: LDAPS or StartTLS with the
 * CA file checked against the DC's name, or SASL GSSAPI with a sealing layer (SSF >= 56).
 * Errors are recorded with pv_error() and mapped once, here:
 *   PV_EUNREACH  name does not resolve, TCP connect refused or timed out
 *   PV_ETRUST    TLS handshake failed: the DC's certificate does not verify against ca_file
 *   PV_ECRED     bind or kinit refused the credentials
 *   PV_EDIR      the server refused an operation (with its diagnostic message)
 *   PV_ECONFIG   the connection would not be encrypted, or the CA file is unreadable */
#ifndef PV_LDAP_DIR_H
#define PV_LDAP_DIR_H

#include <stdbool.h>
#include <stdint.h>

#include "krb/krb.h"
#include "util/buf.h"
#include "util/secret.h"

struct pv_ldap; /* a bound LDAP connection */

enum pv_ldap_transport {
	PV_LDAP_LDAPS = 0, /* ldaps://, CA checked against the DC name (default) */
	PV_LDAP_STARTTLS,  /* ldap:// + StartTLS, CA checked */
	PV_LDAP_GSSAPI,	   /* ldap:// + SASL GSSAPI, sealed (SSF >= 56) */
};

/* The DC and how to bind to it: filled from the playbook in one place (env/target.c). The
 * strings must outlive every connection made with it (the connection keeps a copy of this). */
struct pv_ldap_target {
	const char *dc_name;	/* as in the DC's certificate: dc.lab.test */
	const char *dc_address; /* NULL: dc_name resolved; else TCP to it, TLS checked by name */
	enum pv_ldap_transport transport;
	const char *ca_file;	  /* the CA bundle (LDAPS, StartTLS) */
	int timeout;		  /* seconds for connect and each operation; 0: 10 */
	const char *admin;	  /* whom to bind as: Administrator, admin@REALM or a DN */
	struct pv_krb_target krb; /* the realm (GSSAPI, and admin's realm when it has none) */
};

/* Try a TCP connection to the DC's port within the domain timeout: at domain.dc_address when
 * the playbook gives one, else at the DC's name. */
int pv_ldap_probe(const struct pv_ldap_target *d, int port);

/* Anonymous read of the rootDSE over plain ldap:// (no credentials are sent). On success
 * *naming_context (caller frees) is the defaultNamingContext. */
int pv_ldap_rootdse(const struct pv_ldap_target *d, char **naming_context);

/* Connect and bind as d->admin with d->transport.
 * admin_password: used for the simple bind (LDAPS/StartTLS) or for the kinit (GSSAPI).
 * transport overrides d->transport when >= 0. */
int pv_ldap_connect(const struct pv_ldap_target *d, int transport,
		    const struct pv_secret *admin_password, struct pv_ldap **out);
void pv_ldap_free(struct pv_ldap *dir);
/* Description of the connection's protection, e.g. "LDAPS (TLS1.3)" or "GSSAPI sealed (SSF 256)".
 */
const char *pv_ldap_security(const struct pv_ldap *dir);
/* Whether a password may be written over this connection (encrypted, verified). */
bool pv_ldap_encrypted(const struct pv_ldap *dir);

#endif
