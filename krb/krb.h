/* krb/krb.h: Kerberos (krb5 and GSSAPI), the only place either library is used: the process's
 * private profile, admin tickets in memory for LDAP's SASL GSSAPI and the phases' checks, and
 * SPNEGO tokens for SMB logons (krb/gss.c).
 * Errors are recorded with pv_error(): PV_ECRED when the KDC refuses, PV_EUNREACH when it
 * cannot be reached, PV_EIO otherwise. */
#ifndef PV_KRB_KRB_H
#define PV_KRB_KRB_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/secret.h"

/* The realm and its KDC: filled from the playbook in one place (env/target.c). */
struct pv_krb_target {
	const char *realm;	/* LAB.TEST */
	const char *kdc;	/* the KDC's address (domain.dc_address); NULL: the system's own
				 * Kerberos configuration finds it */
	const char *dns_domain; /* lab.test: its hosts are in the realm */
};

/* Prepare the process for the realm; call before any thread starts. With a kdc,
 * Kerberos gets a private profile: a krb5.conf in a private temporary folder (0700) naming the
 * realm's KDC at that address, and KRB5_CONFIG set to it, so a controller that knows nothing
 * of the domain (no DNS for it, no krb5.conf for the realm) still gets tickets, and the
 * system's krb5.conf is never read or changed. pv_krb_cleanup removes it. */
int pv_krb_setup(const struct pv_krb_target *t);
void pv_krb_cleanup(void);
/* The private profile in use, or NULL. */
const char *pv_krb_profile(void);

/* Kerberos: get a TGT for principal (realm appended when absent) with password into a fresh
 * MEMORY ccache. *ccache_name (caller frees) names it, e.g. "MEMORY:provision-1234-1". */
int pv_krb_kinit(const struct pv_krb_target *t, const char *principal,
		 const struct pv_secret *password, char **ccache_name);
/* Destroy a MEMORY ccache made by pv_krb_kinit (NULL is fine). */
void pv_krb_destroy(const char *ccache_name);

/* A Kerberos logon to a service through SPNEGO (GSSAPI, krb/gss.c), for SMB: the user's
 * initial ticket got with its password (kept in memory), then tokens for service
 * ("cifs@srvu1", a host-based name). pv_krb_sec_start asks the KDC for the initial ticket
 * (PV_ECRED when refused); each pv_krb_sec_step takes the server's token (NULL for the first)
 * and appends the next one to out (the first step asks the KDC for the service's ticket:
 * PV_ECRED with the KDC's words when it has no such name); *done when the exchange is
 * complete. pv_krb_sec_key: the session key, all of it (*len bytes, at most 32: SMB takes
 * the first 16 as Session.SessionKey and all of them for its AES-256 ciphers, MS-SMB2
 * 3.2.5.3.1). These block on the KDC. */
struct pv_krb_sec;
int pv_krb_sec_start(const char *principal, const struct pv_secret *password, const char *service,
		     struct pv_krb_sec **out);
int pv_krb_sec_step(struct pv_krb_sec *s, const void *in, size_t inlen, struct pv_buf *out,
		    bool *done);
int pv_krb_sec_key(struct pv_krb_sec *s, uint8_t key[32], size_t *len);
void pv_krb_sec_free(struct pv_krb_sec *s);

#endif
