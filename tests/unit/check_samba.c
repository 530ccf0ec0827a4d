/* tests/unit/check_samba.c: samba/ without a server: the probe's output parsed into typed facts,
 * a script whose buffer ran out of memory refused before anything is sent, and what may be
 * sent as a sweep's setting and what the server's testparm said of it. */
#include <check.h>

#include "tests/unit/unit.h"
#include <string.h>

#include "samba/samba.h"
#include "tests/unit/alloc.h"
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

/* A script cut short by a failed allocation is never sent (no host is needed to see it: the
 * refusal comes before the session is touched). */
START_TEST(test_failed_script_not_sent)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_buf_addstr(&b, "echo start\n");
	pv_test_alloc_fail_at(1);
	pv_buf_add(&b, "x", 4096);
	pv_test_alloc_ok();
	ck_assert(pv_buf_failed(&b));
	ck_assert_int_eq(pv_samba_run(NULL, "a test", &b, NULL, 0, NULL, NULL, 1), PV_EIO);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "nothing was sent"));
	pv_buf_release(&b, 0);
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

/* ---- a Samba parameter for sweep (samba/settings.c) ---- */

/* What may be sent to the server at all: a name that cannot break out of its line or its
 * section, a value on one line (a tab is fine: values hold them). */
START_TEST(test_setting_valid)
{
	static const char *const bad_names[] = {
		"",	      "case=sensitive", "[global", "global]", "oplocks#x", "oplocks;x",
		"oplocks\\x", "oplocks\x01",	"a\nb",	   "a\tb",    "a\x1b[2J",  "a\x7f",
	};
	static const char *const bad_values[] = {"yes\nno", "a\r", "a\x1b]0;t\x07", "a\x7f"};
	char name[102], value[1002];

	ck_assert_int_eq(pv_samba_setting_valid("case sensitive", "yes"), PV_OK);
	ck_assert_int_eq(pv_samba_setting_valid("socket options", "TCP_NODELAY\tIPTOS_LOWDELAY"),
			 PV_OK);
	ck_assert_int_eq(pv_samba_setting_valid("comment", ""), PV_OK);
	for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		ck_assert_msg(pv_samba_setting_valid(bad_names[i], "yes") == PV_EUSAGE,
			      "name %zu taken", i);
		ck_assert_msg(strstr(pv_errmsg(), i ? "a name holding" : "an empty name"),
			      "%zu: %s", i, pv_errmsg());
	}
	for (size_t i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		ck_assert_msg(pv_samba_setting_valid("comment", bad_values[i]) == PV_EUSAGE,
			      "value %zu taken", i);
		ck_assert_msg(strstr(pv_errmsg(), "a value holding"), "%zu: %s", i, pv_errmsg());
	}
	/* 100 bytes of name and 1000 of value are the most */
	memset(name, 'n', 100);
	name[100] = '\0';
	memset(value, 'v', 1000);
	value[1000] = '\0';
	ck_assert_int_eq(pv_samba_setting_valid(name, value), PV_OK);
	strcat(name, "n");
	ck_assert_int_eq(pv_samba_setting_valid(name, "yes"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "a name over 100 bytes"));
	name[100] = '\0';
	strcat(value, "v");
	ck_assert_int_eq(pv_samba_setting_valid(name, value), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "a value over 1000"));
}
END_TEST

/* What testparm -s of Samba 4.17 (4.17.12-Debian) printed on stderr for a file holding
 * "[global]\n[pv-check]\n\tpath = /tmp\n\tPARAM = VALUE\n" (samba/scripts/setting.sh, its
 * "Load smb config files from" line taken out), with its exit status; for a global
 * parameter, followed by what it printed for "[global]\n\tPARAM = VALUE\n". */
#define TP_OK                                                                                      \
	"Loaded services file OK.\n"                                                               \
	"Weak crypto is allowed by GnuTLS (e.g. NTLM as a compatibility fallback)\n"               \
	"\nServer role: ROLE_STANDALONE\n\n"

/* A refusal names the parameter and quotes testparm's one line that says why, never the
 * whole text; *scope is left as it was. */
static void refused(const char *param, const char *text, int status, const char *quote)
{
	enum pv_samba_scope scope = (enum pv_samba_scope)42;
	const char *m;
	char named[160];

	ck_assert_int_eq(pv_samba_setting_judge(param, text, status, &scope), PV_ECONFIG);
	ck_assert_int_eq(scope, 42);
	m = pv_errmsg();
	snprintf(named, sizeof(named), "'%s'", param);
	ck_assert_msg(strstr(m, named), "the parameter not named: %s", m);
	ck_assert_msg(strstr(m, quote), "testparm's line not quoted: %s", m);
	ck_assert_msg(!strchr(m, '\n'), "more than a line: %s", m);
	ck_assert_msg(!strstr(m, "Loaded services") && !strstr(m, "Error loading") &&
			      !strstr(m, "Weak crypto") && !strstr(m, "Server role"),
		      "the whole text: %s", m);
}

START_TEST(test_setting_judge)
{
	enum pv_samba_scope scope;

	/* an unknown name: testparm ignores it and exits 0 */
	refused("case sensitivity",
		"Unknown parameter encountered: \"case sensitivity\"\nIgnoring unknown parameter "
		"\"case sensitivity\"\n" TP_OK,
		0, "Unknown parameter encountered: \"case sensitivity\"");
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "does not know the parameter"));
	/* values refused, each in its own words */
	refused("strict sync",
		"set_variable_helper(maybe): value is not boolean!\nError loading services.\n", 1,
		"set_variable_helper(maybe): value is not boolean!");
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "refuses the value of 'strict sync'"));
	refused("case sensitive",
		"WARNING: Ignoring invalid value 'maybe' for parameter 'case sensitive'\nError "
		"loading services.\n",
		1, "WARNING: Ignoring invalid value 'maybe' for parameter 'case sensitive'");
	refused("create mask", "Invalid octal number create mask\nError loading services.\n", 1,
		"Invalid octal number create mask");
	refused("aio read size",
		"set_variable_helper(abc): value is not a valid size specifier!\nError loading "
		"services.\n",
		1, "value is not a valid size specifier!");
	/* a failure that says nothing */
	refused("oplocks", "", 1, "it failed");

	/* a global parameter in a share's section, as testparm names it */
	scope = PV_SAMBA_SHARE;
	ck_assert_int_eq(
		pv_samba_setting_judge(
			"socket options",
			"Global parameter socket options found in service section!\n" TP_OK, 0,
			&scope),
		PV_OK);
	ck_assert_int_eq(scope, PV_SAMBA_GLOBAL);
	scope = PV_SAMBA_SHARE;
	ck_assert_int_eq(
		pv_samba_setting_judge(
			"Socket Options",
			"Global parameter Socket Options found in service section!\n" TP_OK, 0,
			&scope),
		PV_OK);
	ck_assert_int_eq(scope, PV_SAMBA_GLOBAL);
	/* a global parameter's value is read only in [global], so the check reads it there
	 * too, after the first test (setting.sh): a value refused there is refused */
	refused("max xmit",
		"Global parameter max xmit found in service section!\n" TP_OK
		"set_variable_helper(abc): value is not a valid size specifier!\nError loading "
		"services.\n",
		1, "set_variable_helper(abc): value is not a valid size specifier!");
	refused("server signing",
		"Global parameter server signing found in service section!\n" TP_OK
		"WARNING: Ignoring invalid value 'bogus' for parameter 'server signing'\nError "
		"loading services.\n",
		1, "WARNING: Ignoring invalid value 'bogus' for parameter 'server signing'");
	scope = PV_SAMBA_SHARE;
	ck_assert_int_eq(
		pv_samba_setting_judge(
			"socket options",
			"Global parameter socket options found in service section!\n" TP_OK TP_OK,
			0, &scope),
		PV_OK);
	ck_assert_int_eq(scope, PV_SAMBA_GLOBAL);
	/* a share parameter: a clean output; and one whose name begins another's */
	scope = PV_SAMBA_GLOBAL;
	ck_assert_int_eq(pv_samba_setting_judge("strict sync", TP_OK, 0, &scope), PV_OK);
	ck_assert_int_eq(scope, PV_SAMBA_SHARE);
	scope = PV_SAMBA_GLOBAL;
	ck_assert_int_eq(
		pv_samba_setting_judge(
			"socket",
			"Global parameter socket options found in service section!\n" TP_OK, 0,
			&scope),
		PV_OK);
	ck_assert_int_eq(scope, PV_SAMBA_SHARE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("samba");
	TCase *tc = tcase_create("samba");

	tcase_add_test(tc, test_facts);
	tcase_add_test(tc, test_failed_script_not_sent);
	tcase_add_test(tc, test_reason);
	tcase_add_test(tc, test_setting_valid);
	tcase_add_test(tc, test_setting_judge);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
