/* krb/krb.c: Kerberos initial credentials into a process-private MEMORY ccache (krb5 API),
 * so no password is handed to a kinit process and no ticket lands on disk. */
#include "krb/krb.h"

#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <krb5.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_uint ccache_seq;
static char profile_dir[64], profile[96];

const char *pv_krb_profile(void)
{
	return profile[0] ? profile : NULL;
}

void pv_krb_cleanup(void)
{
	if (profile[0])
		unlink(profile);
	if (profile_dir[0])
		rmdir(profile_dir);
	profile[0] = profile_dir[0] = '\0';
}

int pv_krb_setup(const struct pv_krb_target *t)
{
	const char *tmp = getenv("TMPDIR");
	FILE *f;
	int fd;

	if (!t->kdc || profile[0])
		return PV_OK;
	snprintf(profile_dir, sizeof(profile_dir), "%s/provision-krb5.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(profile_dir)) {
		profile_dir[0] = '\0';
		return pv_error(PV_EIO, "cannot make a private folder for the Kerberos profile: %s",
				strerror(errno));
	}
	snprintf(profile, sizeof(profile), "%s/krb5.conf", profile_dir);
	fd = open(profile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		pv_krb_cleanup();
		return pv_error(PV_EIO, "cannot write the private Kerberos profile: %s",
				strerror(e));
	}
	/* an IPv6 address needs brackets where a port may follow */
	fprintf(f,
		"# provision: a private profile for realm %s, KDC at domain.dc_address\n"
		"[libdefaults]\n\tdefault_realm = %s\n\tdns_lookup_kdc = false\n"
		"\tdns_lookup_realm = false\n\trdns = false\n\tdns_canonicalize_hostname = false\n"
		"[realms]\n\t%s = {\n\t\tkdc = %s%s%s\n\t}\n"
		"[domain_realm]\n\t.%s = %s\n\t%s = %s\n",
		t->realm, t->realm, t->realm, strchr(t->kdc, ':') ? "[" : "", t->kdc,
		strchr(t->kdc, ':') ? "]" : "", t->dns_domain, t->realm, t->dns_domain, t->realm);
	if (fclose(f) != 0) {
		pv_krb_cleanup();
		return pv_error(PV_EIO, "cannot write the private Kerberos profile: %s",
				strerror(errno));
	}
	if (setenv("KRB5_CONFIG", profile, 1) != 0) {
		pv_krb_cleanup();
		return pv_error(PV_EIO, "cannot use the private Kerberos profile: %s",
				strerror(errno));
	}
	pv_log(PV_LOG_DEBUG, "Kerberos: private profile %s (KDC %s)", profile, t->kdc);
	return PV_OK;
}

/* Translate a krb5 failure: the one place krb5 codes become our outcomes. */
static int fail(krb5_context ctx, krb5_error_code kr, const char *what, const char *principal)
{
	const char *msg = krb5_get_error_message(ctx, kr);
	int code;

	switch (kr) {
	case KRB5KDC_ERR_PREAUTH_FAILED:
	case KRB5KRB_AP_ERR_BAD_INTEGRITY:
	case KRB5KDC_ERR_C_PRINCIPAL_UNKNOWN:
	case KRB5KDC_ERR_CLIENT_REVOKED:
	case KRB5KDC_ERR_KEY_EXP:
		code = pv_error(PV_ECRED,
				"%s for '%s' refused: %s; check domain.admin and its password",
				what, principal, msg);
		break;
	case KRB5_KDC_UNREACH:
	case KRB5_REALM_CANT_RESOLVE:
		code = pv_error(PV_EUNREACH,
				"%s for '%s': %s; is the KDC up and listed for the realm "
				"in krb5.conf (or in DNS)?",
				what, principal, msg);
		break;
	case KRB5_REALM_UNKNOWN:
	case KRB5_CONFIG_NODEFREALM:
		code = pv_error(PV_ECONFIG, "%s for '%s': %s; add the realm to krb5.conf", what,
				principal, msg);
		break;
	case KRB5KRB_AP_ERR_SKEW:
		code = pv_error(PV_EDIR,
				"%s for '%s': %s; the clocks of this host and the DC differ "
				"by more than Kerberos allows (5 minutes)",
				what, principal, msg);
		break;
	default:
		code = pv_error(PV_EDIR, "%s for '%s': %s", what, principal, msg);
	}
	krb5_free_error_message(ctx, msg);
	return code;
}

int pv_krb_kinit(const struct pv_krb_target *t, const char *principal,
		 const struct pv_secret *password, char **ccache_name)
{
	krb5_context ctx = NULL;
	krb5_principal princ = NULL;
	krb5_get_init_creds_opt *opt = NULL;
	krb5_ccache cc = NULL;
	krb5_creds creds;
	bool have_creds = false;
	char name[512], ccname[128];
	krb5_error_code kr;
	int r;

	memset(&creds, 0, sizeof(creds));
	kr = krb5_init_context(&ctx);
	if (kr)
		return pv_error(PV_ECONFIG, "cannot initialise Kerberos (krb5.conf): error %d",
				(int)kr);
	if (strchr(principal, '@'))
		snprintf(name, sizeof(name), "%s", principal);
	else
		snprintf(name, sizeof(name), "%s@%s", principal, t->realm);
	if ((kr = krb5_parse_name(ctx, name, &princ))) {
		r = fail(ctx, kr, "parsing principal", name);
		goto out;
	}
	if ((kr = krb5_get_init_creds_opt_alloc(ctx, &opt))) {
		r = fail(ctx, kr, "kinit", name);
		goto out;
	}
	kr = krb5_get_init_creds_password(ctx, &creds, princ, password->data, NULL, NULL, 0, NULL,
					  opt);
	if (kr) {
		r = fail(ctx, kr, "kinit", name);
		goto out;
	}
	have_creds = true;
	snprintf(ccname, sizeof(ccname), "MEMORY:provision-%ld-%u", (long)getpid(),
		 atomic_fetch_add(&ccache_seq, 1));
	if ((kr = krb5_cc_resolve(ctx, ccname, &cc)) || (kr = krb5_cc_initialize(ctx, cc, princ)) ||
	    (kr = krb5_cc_store_cred(ctx, cc, &creds))) {
		r = fail(ctx, kr, "storing the ticket", name);
		goto out;
	}
	*ccache_name = strdup(ccname);
	r = *ccache_name ? PV_OK : pv_error(PV_EIO, "out of memory");
	pv_log(PV_LOG_DEBUG, "kinit %s into %s", name, ccname);
out:
	if (cc)
		krb5_cc_close(ctx, cc); /* a MEMORY ccache lives on until destroyed */
	if (have_creds)
		krb5_free_cred_contents(ctx, &creds);
	if (opt)
		krb5_get_init_creds_opt_free(ctx, opt);
	krb5_free_principal(ctx, princ);
	krb5_free_context(ctx);
	return r;
}

void pv_krb_destroy(const char *ccache_name)
{
	krb5_context ctx = NULL;
	krb5_ccache cc = NULL;

	if (!ccache_name || krb5_init_context(&ctx))
		return;
	if (krb5_cc_resolve(ctx, ccache_name, &cc) == 0)
		krb5_cc_destroy(ctx, cc);
	krb5_free_context(ctx);
}
