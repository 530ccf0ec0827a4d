/* ldap/dir.h: connections to the domain's directory (libldap) and Kerberos credentials
 * (krb5), the only place either library is used.
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

#include "playbooks/playbook.h"
#include "util/buf.h"
#include "util/secret.h"

struct pv_dir; /* a bound LDAP connection */

/* Try a TCP connection to the DC's port within the domain timeout: at domain.dc_address when
 * the playbook gives one, else at the DC's name. */
int pv_dir_probe(const struct pv_domain *d, int port);

/* Prepare the process for the domain; call before any thread starts. With domain.dc_address,
 * Kerberos gets a private profile: a krb5.conf in a private temporary folder (0700) naming the
 * realm's KDC at that address, and KRB5_CONFIG set to it, so a controller that knows nothing
 * of the domain (no DNS for it, no krb5.conf for the realm) still gets tickets, and the
 * system's krb5.conf is never read or changed. pv_dir_cleanup removes it. */
int pv_dir_setup(const struct pv_domain *d);
void pv_dir_cleanup(void);
/* The private profile in use, or NULL. */
const char *pv_krb_profile(void);

/* Anonymous read of the rootDSE over plain ldap:// (no credentials are sent). On success
 * *naming_context (caller frees) is the defaultNamingContext. */
int pv_dir_rootdse(const struct pv_domain *d, char **naming_context);

/* Connect and bind as the domain admin with the playbook's transport.
 * admin_password: used for the simple bind (LDAPS/StartTLS) or for the kinit (GSSAPI).
 * transport overrides d->transport when >= 0. */
int pv_dir_connect(const struct pv_domain *d, int transport, const struct pv_secret *admin_password,
		   struct pv_dir **out);
void pv_dir_free(struct pv_dir *dir);
/* Description of the connection's protection, e.g. "LDAPS (TLS1.3)" or "GSSAPI sealed (SSF 256)". */
const char *pv_dir_security(const struct pv_dir *dir);
/* Whether a password may be written over this connection (encrypted, verified). */
bool pv_dir_encrypted(const struct pv_dir *dir);

/* Kerberos: get a TGT for principal (realm appended when absent) with password into a fresh
 * MEMORY ccache. *ccache_name (caller frees) names it, e.g. "MEMORY:provision-1234-1". */
int pv_krb_kinit(const struct pv_domain *d, const char *principal, const struct pv_secret *password,
		 char **ccache_name);
/* Destroy a MEMORY ccache made by pv_krb_kinit (NULL is fine). */
void pv_krb_destroy(const char *ccache_name);

/* A Kerberos logon to a service through SPNEGO (GSSAPI, ldap/gss.c), for SMB: the user's
 * initial ticket got with its password (kept in memory), then tokens for service
 * ("cifs@srvu1", a host-based name). pv_krb_sec_start asks the KDC for the initial ticket
 * (PV_ECRED when refused); each pv_krb_sec_step takes the server's token (NULL for the first)
 * and appends the next one to out (the first step asks the KDC for the service's ticket:
 * PV_ECRED with the KDC's words when it has no such name); *done when the exchange is
 * complete. pv_krb_sec_key: the session key, its first 16 bytes (MS-SMB2 3.2.5.3.1). These
 * block on the KDC. */
struct pv_krb_sec;
int pv_krb_sec_start(const char *principal, const struct pv_secret *password, const char *service,
		     struct pv_krb_sec **out);
int pv_krb_sec_step(struct pv_krb_sec *s, const void *in, size_t inlen, struct pv_buf *out,
		    bool *done);
int pv_krb_sec_key(struct pv_krb_sec *s, uint8_t key[16]);
void pv_krb_sec_free(struct pv_krb_sec *s);

#endif
