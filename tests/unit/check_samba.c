/* tests/unit/check_samba.c: samba/ without a server: the probe's output parsed into typed facts,
 * and the line that says why a command failed (remote's, under samba's name). */
#include <check.h>

#include "tests/unit/unit.h"
#include <string.h>

#include "samba/samba.h"
#include "util/err.h"
#include "util/strset.h"

START_TEST(test_facts)
{
	const char *out = "netbios=srv\nrealm=LAB.TEST\nsecurity=ADS\nkmethod=dedicated keytab\n"
			  "ktfile=/var/lib/x/krb5.keytab\nsep=\\\njoined=1\ncores=2\n"
			  "share=fsroot1\037provision:lab\037/srv/p/fsroot1\0371\n"
			  "share=IPC$\037IPC Service\037/tmp\0370\n"
			  "share=broken\n"
			  "kt=host/SRV@LAB.TEST\nkt=cifs/srvu1@LAB.TEST\nktlisted=1\n"
			  "smbd=1\nwinbindd=0\ngarbage line\n";
	struct pv_samba_facts f;
	const struct pv_samba_share *s;

	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(pv_samba_parse_facts(out, &f), PV_OK);
	ck_assert_str_eq(f.netbios, "SRV"); /* upper-cased */
	ck_assert_str_eq(f.realm, "LAB.TEST");
	ck_assert_int_eq(f.kmethod, PV_KMETHOD_DEDICATED_KEYTAB);
	ck_assert(f.needs_keytab);
	ck_assert_str_eq(f.keytab, "/var/lib/x/krb5.keytab");
	ck_assert_str_eq(f.sep, "\\");
	ck_assert(f.joined && f.smbd_running && !f.winbindd_running);
	ck_assert_uint_eq(f.cores, 2);
	ck_assert_uint_eq(f.nshares, 2); /* the broken line is not a share */
	ck_assert_ptr_nonnull(s = pv_samba_share(&f, "FSROOT1")); /* names are case-insensitive */
	ck_assert_str_eq(s->comment, "provision:lab");
	ck_assert_str_eq(s->path, "/srv/p/fsroot1");
	ck_assert(s->dir_exists);
	ck_assert(!pv_samba_share(&f, "IPC$")->dir_exists);
	ck_assert_ptr_null(pv_samba_share(&f, "fsroot2"));
	ck_assert(f.keytab_listed);
	ck_assert(pv_strset_has(f.principals, "cifs/srvu1")); /* the realm is cut */
	ck_assert_uint_eq(pv_strset_count(f.principals), 2);
	pv_samba_facts_release(&f);

	/* the other kerberos methods; 'secrets only' needs no keytab, and a dedicated keytab
	 * file named while another method is in force is not the keytab in use */
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(pv_samba_parse_facts("kmethod=secrets and keytab\nktfile=/x\n", &f),
			 PV_OK);
	ck_assert_int_eq(f.kmethod, PV_KMETHOD_SECRETS_AND_KEYTAB);
	ck_assert(f.needs_keytab);
	ck_assert_str_eq(f.keytab, "");
	pv_samba_facts_release(&f);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(pv_samba_parse_facts("kmethod=secrets only\n", &f), PV_OK);
	ck_assert(!f.needs_keytab && !f.keytab_listed);
	pv_samba_facts_release(&f);
}
END_TEST

START_TEST(test_reason)
{
	char out[128];

	pv_samba_reason("line one\nline two\n\n", out, sizeof(out));
	ck_assert_str_eq(out, "line two");
	pv_samba_reason(
		"tar: a: Cannot write: No space left on device\ntar: b: x\ntar: Exiting with "
		"failure status\n",
		out, sizeof(out));
	ck_assert_str_eq(out, "tar: a: Cannot write: No space left on device");
	pv_samba_reason(NULL, out, sizeof(out));
	ck_assert_str_eq(out, "");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("samba");
	TCase *tc = tcase_create("samba");

	tcase_add_test(tc, test_facts);
	tcase_add_test(tc, test_reason);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
