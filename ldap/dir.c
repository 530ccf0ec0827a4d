/* ldap/dir.c: LDAP connections to the DC: TCP probe, rootDSE, encrypted authenticated bind.
 *
 * libldap's own errors are translated once, in pv_ldap_fail(): a TLS verification failure and an
 * unreachable server both surface as LDAP_SERVER_DOWN/LDAP_CONNECT_ERROR, so we probe TCP
 * first and treat a failure after a successful TCP connect as a trust failure. */
#include "krb/krb.h"
#include "ldap/dir.h"

#include "ldap/internal.h"

#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <gssapi/gssapi_krb5.h>
#include <ldap.h>
#include <openldap.h> /* ldap_init_fd */
#include <netdb.h>
#include <poll.h>
#include <sasl/sasl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SSF_SEALED 56 /* minimum SASL security strength that means "encrypted" */

static int timeout_of(const struct pv_ldap_target *d)
{
	return d->timeout > 0 ? d->timeout : 10;
}

/* TCP connect with a timeout; returns 0 or an errno value. With keep, *keep is the connected
 * socket (blocking again) for the caller; else it is closed (a probe). */
static int tcp_try(const struct addrinfo *ai, int timeout, int *keep)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, n;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		goto out;
	if (errno != EINPROGRESS) {
		err = errno;
		goto out;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	n = poll(&pfd, 1, timeout * 1000);
	if (n == 0)
		err = ETIMEDOUT;
	else if (n < 0)
		err = errno;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
out:
	if (err == 0 && keep && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0) {
		*keep = fd;
		return 0;
	}
	close(fd);
	return err;
}

/* TCP to the DC's port: at domain.dc_address when the playbook gives one (a controller that
 * cannot resolve the DC's name, or should not), else at its name. fd as for tcp_try. */
static int dc_connect(const struct pv_ldap_target *d, int port, int *fd)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	const char *host = d->dc_address ? d->dc_address : d->dc_name;
	char service[16];
	int gai, err;

	snprintf(service, sizeof(service), "%d", port);
	if (d->dc_address)
		hints.ai_flags = AI_NUMERICHOST;
	gai = getaddrinfo(host, service, &hints, &res);
	if (gai != 0 && d->dc_address)
		return pv_error(PV_ECONFIG, "domain.dc_address '%s' is not an IP address: %s",
				d->dc_address, gai_strerror(gai));
	if (gai != 0)
		return pv_error(PV_EUNREACH,
				"cannot resolve DC name '%s': %s; check DNS or the hosts "
				"file, or set domain.dc_address",
				d->dc_name, gai_strerror(gai));
	err = ETIMEDOUT;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		err = tcp_try(ai, timeout_of(d), fd);
		if (err == 0)
			break;
	}
	freeaddrinfo(res);
	if (err == 0)
		return PV_OK;
	return pv_error(PV_EUNREACH, "cannot connect to DC '%s'%s%s%s port %d: %s%s", d->dc_name,
			d->dc_address ? " at " : "", d->dc_address ? d->dc_address : "",
			d->dc_address ? " (domain.dc_address)" : "", port, strerror(err),
			err == ETIMEDOUT ? " (no answer within domain.timeout)"
					 : "; is the DC running and the port open?");
}

int pv_ldap_probe(const struct pv_ldap_target *d, int port)
{
	return dc_connect(d, port, NULL);
}

/* Translate a libldap failure: the one place LDAP result codes become our outcomes. */
int pv_ldap_fail(LDAP *ld, int rc, const char *what, const struct pv_ldap_target *d)
{
	char *diag = NULL;
	int code;

	if (ld)
		ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
	switch (rc) {
	case LDAP_INVALID_CREDENTIALS:
		code = PV_ECRED;
		break;
	case LDAP_SERVER_DOWN:
	case LDAP_CONNECT_ERROR:
		/* TCP was probed just before, so this is the TLS layer refusing the peer. */
		code = PV_ETRUST;
		break;
	case LDAP_TIMEOUT:
		code = PV_EUNREACH;
		break;
	case LDAP_STRONG_AUTH_REQUIRED:
	case LDAP_CONFIDENTIALITY_REQUIRED:
	case LDAP_INAPPROPRIATE_AUTH:
		code = PV_ECONFIG;
		break;
	case LDAP_LOCAL_ERROR:
	case LDAP_AUTH_UNKNOWN:
	case LDAP_PARAM_ERROR:
	case LDAP_NOT_SUPPORTED:
		code = PV_ECRED;
		break;
	default:
		code = PV_EDIR;
	}
	if (code == PV_ETRUST)
		pv_error(code,
			 "%s: TLS with DC '%s' failed: %s%s%s; check that ca_file '%s' is the CA "
			 "that "
			 "signed the DC's certificate and that domain.dc matches its name",
			 what, d->dc_name, ldap_err2string(rc), diag && *diag ? ": " : "",
			 diag ? diag : "", d->ca_file ? d->ca_file : "(none)");
	else if (code == PV_ECRED && rc == LDAP_INVALID_CREDENTIALS)
		pv_error(code,
			 "%s: the DC refused the credentials of '%s' (%s%s%s); check domain.admin "
			 "and its password",
			 what, d->admin, ldap_err2string(rc), diag && *diag ? ": " : "",
			 diag ? diag : "");
	else
		pv_error(code, "%s: %s%s%s", what, ldap_err2string(rc), diag && *diag ? ": " : "",
			 diag ? diag : "");
	ldap_memfree(diag);
	return code;
}

/* The playbook's CA is the only trust, and TLS 1.2 is the least: a handle starts from libldap's
 * global options, which ldap.conf, ~/.ldaprc and LDAPTLS_* fill (TLS_CACERTDIR, a cipher
 * suite, a protocol minimum), so each of them is set here for the handle and none can widen
 * what is trusted or accepted. */
static int tls_options(LDAP *ld, const char *ca_file)
{
	int min = LDAP_OPT_X_TLS_PROTOCOL_TLS1_2, rc;
	char *pkg = NULL;
	const char *suite = "HIGH:!aNULL:!MD5:!RC4"; /* OpenSSL's syntax */

	if ((rc = ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTFILE, ca_file)) != LDAP_SUCCESS ||
	    (rc = ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTDIR, NULL)) != LDAP_SUCCESS ||
	    (rc = ldap_set_option(ld, LDAP_OPT_X_TLS_PROTOCOL_MIN, &min)) != LDAP_SUCCESS)
		return rc;
	/* GnuTLS (Debian's libldap) takes a priority string instead */
	if (ldap_get_option(ld, LDAP_OPT_X_TLS_PACKAGE, &pkg) == LDAP_SUCCESS && pkg &&
	    strcmp(pkg, "GnuTLS") == 0)
		suite = "NORMAL:-VERS-SSL3.0:-VERS-TLS1.0:-VERS-TLS1.1:-ARCFOUR-128:-3DES-CBC";
	ldap_memfree(pkg);
	return ldap_set_option(ld, LDAP_OPT_X_TLS_CIPHER_SUITE, suite);
}

/* A new handle for scheme://<DC name>:port with our timeouts and, when tls, a per-handle TLS
 * context that demands a certificate verified against ca_file (and matching the DC's name).
 * With domain.dc_address the TCP connection is ours, to that address, handed to libldap with
 * the name's URL: TLS and SASL still check and name the DC by its name (ldaps then needs
 * ldap_install_tls before the bind, see pv_ldap_connect). */
static int handle_new(const struct pv_ldap_target *d, const char *scheme, int port, bool tls,
		      LDAP **out)
{
	struct timeval tv = {.tv_sec = timeout_of(d)};
	int version = LDAP_VERSION3, demand = LDAP_OPT_X_TLS_DEMAND, zero = 0, fd = -1, r, rc;
	char uri[512];
	LDAP *ld = NULL;

	snprintf(uri, sizeof(uri), "%s://%s:%d", scheme, d->dc_name, port);
	if (d->dc_address) {
		if ((r = dc_connect(d, port, &fd)) != PV_OK)
			return r;
		rc = ldap_init_fd(fd, LDAP_PROTO_TCP, uri, &ld);
		if (rc != LDAP_SUCCESS)
			close(fd);
	} else {
		rc = ldap_initialize(&ld, uri);
	}
	if (rc != LDAP_SUCCESS)
		return pv_error(PV_ECONFIG, "bad LDAP URI '%s': %s", uri, ldap_err2string(rc));
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version);
	ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
	ldap_set_option(ld, LDAP_OPT_TIMEOUT, &tv);
	/* AD SPNs are not canonicalised through reverse DNS (see lab-notes pitfall 11). */
	ldap_set_option(ld, LDAP_OPT_X_SASL_NOCANON, LDAP_OPT_ON);
	if (tls) {
		if (!d->ca_file || access(d->ca_file, R_OK) != 0) {
			ldap_unbind_ext_s(ld, NULL, NULL);
			return pv_error(PV_ECONFIG,
					"cannot read CA file '%s': %s; set domain.ca_file "
					"to the CA that signed the DC's certificate",
					d->ca_file ? d->ca_file : "(unset)", strerror(errno));
		}
		rc = tls_options(ld, d->ca_file);
		if (rc == LDAP_SUCCESS)
			rc = ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &demand);
		if (rc == LDAP_SUCCESS)
			rc = ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &zero);
		if (rc != LDAP_SUCCESS) {
			ldap_unbind_ext_s(ld, NULL, NULL);
			return pv_error(PV_ECONFIG,
					"cannot load CA file '%s' into a TLS context: %s",
					d->ca_file, ldap_err2string(rc));
		}
	}
	*out = ld;
	return PV_OK;
}

int pv_ldap_rootdse(const struct pv_ldap_target *d, char **naming_context)
{
	char *attrs[] = {"defaultNamingContext", NULL};
	struct timeval tv = {.tv_sec = timeout_of(d)};
	struct berval **vals = NULL;
	LDAPMessage *res = NULL, *e;
	LDAP *ld = NULL;
	int r, rc;

	if ((r = pv_ldap_probe(d, 389)) != PV_OK)
		return r;
	if ((r = handle_new(d, "ldap", 389, false, &ld)) != PV_OK)
		return r;
	rc = ldap_search_ext_s(ld, "", LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, NULL, NULL,
			       &tv, 1, &res);
	if (rc != LDAP_SUCCESS) {
		r = pv_ldap_fail(ld, rc, "rootDSE search", d);
		if (r == PV_ETRUST) /* no TLS here: the server dropped us */
			r = pv_error(PV_EDIR, "rootDSE search on '%s': %s", d->dc_name,
				     ldap_err2string(rc));
		goto out;
	}
	e = ldap_first_entry(ld, res);
	vals = e ? ldap_get_values_len(ld, e, "defaultNamingContext") : NULL;
	if (!vals || !vals[0]) {
		r = pv_error(PV_EDIR,
			     "'%s' answers LDAP but has no defaultNamingContext: is it an "
			     "Active Directory DC?",
			     d->dc_name);
		goto out;
	}
	*naming_context = strndup(vals[0]->bv_val, vals[0]->bv_len);
	r = *naming_context ? PV_OK : pv_error(PV_EIO, "out of memory");
out:
	ldap_value_free_len(vals);
	ldap_msgfree(res);
	ldap_unbind_ext_s(ld, NULL, NULL);
	return r;
}

static int sasl_interact(LDAP *ld, unsigned flags, void *defaults, void *in)
{
	sasl_interact_t *it = in;

	(void)ld;
	(void)flags;
	(void)defaults;
	for (; it->id != SASL_CB_LIST_END; it++) {
		it->result = it->defresult ? it->defresult : "";
		it->len = (unsigned)strlen(it->result);
	}
	return LDAP_SUCCESS;
}

static int bind_simple(struct pv_ldap *dir, const struct pv_ldap_target *d,
		       const struct pv_secret *pw)
{
	struct berval cred = {.bv_val = pw->data, .bv_len = pw->len};
	char who[512];
	int rc;

	/* AD accepts a UPN as the simple bind name (MS-ADTS 5.1.1.1.1). */
	if (strchr(d->admin, '@') || strchr(d->admin, '='))
		snprintf(who, sizeof(who), "%s", d->admin);
	else
		snprintf(who, sizeof(who), "%s@%s", d->admin, d->krb.realm);
	rc = ldap_sasl_bind_s(dir->ld, who, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
	if (rc != LDAP_SUCCESS)
		return pv_ldap_fail(dir->ld, rc, "LDAP bind", d);
	return PV_OK;
}

static int bind_gssapi(struct pv_ldap *dir, const struct pv_ldap_target *d,
		       const struct pv_secret *pw)
{
	OM_uint32 minor;
	ber_len_t ssf = 0;
	int r, rc;

	if ((r = pv_krb_kinit(&d->krb, d->admin, pw, &dir->ccache)) != PV_OK)
		return r;
	/* Cyrus SASL's GSSAPI plugin runs in this thread: point it at our memory ccache. */
	gss_krb5_ccache_name(&minor, dir->ccache, NULL);
	/* Refuse anything below sealing before any data flows (RFC 4752 security layers). */
	ldap_set_option(dir->ld, LDAP_OPT_X_SASL_SECPROPS, "minssf=56");
	rc = ldap_sasl_interactive_bind_s(dir->ld, NULL, "GSSAPI", NULL, NULL, LDAP_SASL_QUIET,
					  sasl_interact, NULL);
	if (rc != LDAP_SUCCESS) {
		r = pv_ldap_fail(dir->ld, rc, "LDAP SASL/GSSAPI bind", d);
		return r == PV_ETRUST ? PV_EDIR : r;
	}
	ldap_get_option(dir->ld, LDAP_OPT_X_SASL_SSF, &ssf);
	if (ssf < SSF_SEALED)
		return pv_error(PV_ECONFIG,
				"SASL/GSSAPI to '%s' negotiated SSF %lu, below sealing (%d)",
				d->dc_name, (unsigned long)ssf, SSF_SEALED);
	snprintf(dir->security, sizeof(dir->security), "SASL/GSSAPI sealed (SSF %lu)",
		 (unsigned long)ssf);
	dir->encrypted = true;
	return PV_OK;
}

int pv_ldap_connect(const struct pv_ldap_target *d, int transport,
		    const struct pv_secret *admin_password, struct pv_ldap **out)
{
	struct pv_ldap *dir = NULL;
	int t = transport >= 0 ? transport : (int)d->transport;
	int port = t == PV_LDAP_LDAPS ? 636 : 389;
	int r, rc;

	/* without dc_address libldap connects itself: a TCP probe first tells an unreachable DC
	 * from a TLS failure (both are LDAP_SERVER_DOWN to libldap) */
	if (!d->dc_address && (r = pv_ldap_probe(d, port)) != PV_OK)
		return r;
	dir = calloc(1, sizeof(*dir));
	if (!dir)
		return pv_error(PV_EIO, "out of memory");
	dir->target = *d;
	if ((r = handle_new(d, t == PV_LDAP_LDAPS ? "ldaps" : "ldap", port, t != PV_LDAP_GSSAPI,
			    &dir->ld)) != PV_OK)
		goto out;
	switch (t) {
	case PV_LDAP_LDAPS:
		/* our own socket (dc_address): TLS on it now, checked against the DC's name */
		if (d->dc_address && (rc = ldap_install_tls(dir->ld)) != LDAP_SUCCESS) {
			r = pv_ldap_fail(dir->ld, rc, "LDAPS", d);
			goto out;
		}
		if ((r = bind_simple(dir, d, admin_password)) != PV_OK)
			goto out;
		snprintf(dir->security, sizeof(dir->security), "LDAPS, CA verified");
		dir->encrypted = true;
		break;
	case PV_LDAP_STARTTLS:
		rc = ldap_start_tls_s(dir->ld, NULL, NULL);
		if (rc != LDAP_SUCCESS) {
			r = pv_ldap_fail(dir->ld, rc, "StartTLS", d);
			goto out;
		}
		if ((r = bind_simple(dir, d, admin_password)) != PV_OK)
			goto out;
		snprintf(dir->security, sizeof(dir->security), "StartTLS, CA verified");
		dir->encrypted = true;
		break;
	case PV_LDAP_GSSAPI:
		if ((r = bind_gssapi(dir, d, admin_password)) != PV_OK)
			goto out;
		break;
	default:
		r = pv_error(PV_EBUG, "unknown LDAP transport %d", t);
		goto out;
	}
	if (d->dc_address) {
		size_t l = strlen(dir->security);

		snprintf(dir->security + l, sizeof(dir->security) - l, ", by address %s",
			 d->dc_address);
	}
	pv_log(PV_LOG_DEBUG, "bound to %s as %s (%s)", d->dc_name, d->admin, dir->security);
	*out = dir;
	dir = NULL;
	r = PV_OK;
out:
	pv_ldap_free(dir);
	return r;
}

void pv_ldap_free(struct pv_ldap *dir)
{
	if (!dir)
		return;
	if (dir->ld)
		ldap_unbind_ext_s(dir->ld, NULL, NULL);
	pv_krb_destroy(dir->ccache);
	free(dir->ccache);
	free(dir);
}

const char *pv_ldap_security(const struct pv_ldap *dir)
{
	return dir->security;
}

bool pv_ldap_encrypted(const struct pv_ldap *dir)
{
	return dir->encrypted;
}
