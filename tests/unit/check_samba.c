/* tests/unit/check_samba.c: samba/ without a server: the probe's output parsed into typed facts,
 * the line that says why a command failed (remote's, under samba's name), what may be sent as
 * a sweep's setting and what the server's testparm said of it, and what the copy job reads of
 * Samba's own tools (smbcontrol's profiling level, smbstatus --profile's counters and their
 * difference, smbstatus --processes --json's sessions); the service command's script, run by
 * /bin/sh with a stand-in systemctl that knows the units of one distribution or another. */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdlib.h>
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
	ck_assert_int_eq(f.kmethod, PV_SAMBA_KMETHOD_DEDICATED_KEYTAB);
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
	ck_assert_int_eq(f.kmethod, PV_SAMBA_KMETHOD_SECRETS_AND_KEYTAB);
	ck_assert(f.needs_keytab);
	ck_assert_str_eq(f.keytab, "");
	pv_samba_facts_release(&f);
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(pv_samba_parse_facts("kmethod=secrets only\n", &f), PV_OK);
	ck_assert(!f.needs_keytab && !f.keytab_listed);
	pv_samba_facts_release(&f);
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

/* ---- Samba's own counters (samba/profile.c) ---- */

/* What smbcontrol smbd profilelevel prints (source3/utils/smbcontrol.c, profilelevel_cb:
 * "Profiling %s on pid %u"), each level; anything else quoted back. */
START_TEST(profile_level)
{
	static const struct {
		const char *text;
		enum pv_samba_profile level;
	} ok[] = {
		{"Profiling off on pid 123\n", PV_SAMBA_PROFILE_OFF},
		{"Profiling count only on pid 123\n", PV_SAMBA_PROFILE_COUNT},
		{"Profiling time only on pid 123\n", PV_SAMBA_PROFILE_ON},
		{"Profiling count and time on pid 123\n", PV_SAMBA_PROFILE_ON},
		{"Profiling count and time on pid 123", PV_SAMBA_PROFILE_ON},
	};
	static const char *const bad[] = {
		"",
		"Profiling not enabled on pid 123\n", /* smbd built without profiling */
		"Profiling BOGUS on pid 123\n",
		"Can't find pid for destination 'smbd'\n",
		"profiling off on pid 123\n",
	};
	enum pv_samba_profile level;
	char big[400];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		level = (enum pv_samba_profile)77;
		ck_assert_int_eq(pv_samba_profile_parse_level(ok[i].text, &level), PV_OK);
		ck_assert_msg(level == ok[i].level, "'%s': level %d", ok[i].text, (int)level);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		level = (enum pv_samba_profile)77;
		ck_assert_int_eq(pv_samba_profile_parse_level(bad[i], &level), PV_EREMOTE);
		ck_assert_int_eq((int)level, 77); /* set only on success */
		ck_assert(strstr(pv_errmsg(), "the server's smbcontrol did not say its profiling "
					      "level: '"));
		ck_assert_msg(strstr(pv_errmsg(), bad[i]), "%s", pv_errmsg());
	}
	/* the quote is cut at 120 bytes */
	memset(big, 'g', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(pv_samba_profile_parse_level(big, &level), PV_EREMOTE);
	ck_assert_uint_eq(strspn(strstr(pv_errmsg(), ": '") + 3, "g"), 120);
}
END_TEST

/* smbstatus --profile of Samba 4.17 (source3/utils/status_profile.c: a section line
 * "**** \"title\" ****..." then "%-59s%20ju" per field), with fields of each kind */
static const char profile_text[] =
	"**** \"SMBD loop\" **************************************************************\n"
	"connect_count:                                                                1\n"
	"disconnect_count:                                                             0\n"
	"idle_count:                                                                  12\n"
	"idle_time:                                                              5234567\n"
	"cpu_user_time:                                                            12000\n"
	"request_count:                                                              300\n"
	"**** \"System Calls\" ***********************************************************\n"
	"syscall_opendir_count:                                                        4\n"
	"syscall_opendir_time:                                                       120\n"
	"syscall_pread_count:                                                          2\n"
	"syscall_pread_time:                                                          80\n"
	"syscall_pread_idle:                                                           7\n"
	"syscall_pread_bytes:                                                       8192\n"
	"syscall_lstat_count:                                                         12\n"
	"syscall_lstat_time:                                                         345\n"
	"syscall_get_real_filename_at_count:                                           5\n"
	"syscall_get_real_filename_at_time:                                           61\n"
	"**** \"ACL Calls\" **************************************************************\n"
	"get_nt_acl_count:                                                             9\n"
	"get_nt_acl_time:                                                            900\n"
	"**** System Calls ****\n"
	"**** \"SMB2 Calls\" *************************************************************\n"
	"smb2_create_count:                                                            3\n"
	"smb2_create_time:                                                           950\n"
	"smb2_create_idle:                                                             0\n"
	"smb2_create_inbytes:                                                        720\n"
	"smb2_create_outbytes:                                                       264\n"
	"smb2_query_directory_count:                                                   1\n"
	"smb2_query_directory_time:                                                   77\n";

static const struct pv_samba_counter *counter_of(const struct pv_samba_counters *c,
						 const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

/* c holds name with count and usec */
static void has_counter(const struct pv_samba_counters *c, const char *name, uint64_t count,
			uint64_t usec)
{
	const struct pv_samba_counter *v = counter_of(c, name);

	ck_assert_msg(v != NULL, "no counter '%s'", name);
	ck_assert_msg(v->count == count && v->usec == usec, "'%s': %llu calls, %llu us", name,
		      (unsigned long long)v->count, (unsigned long long)v->usec);
}

/* the real text's counters: the system calls' and SMB2 commands' counts and times, nothing
 * of the other fields (_idle, _bytes, _inbytes, _outbytes) or sections */
static void profile_counters(const struct pv_samba_counters *c)
{
	ck_assert_uint_eq(c->n, 6);
	has_counter(c, "opendir", 4, 120);
	has_counter(c, "pread", 2, 80);
	has_counter(c, "lstat", 12, 345);
	has_counter(c, "get_real_filename_at", 5, 61);
	has_counter(c, "smb2:create", 3, 950);
	has_counter(c, "smb2:query_directory", 1, 77);
}

START_TEST(counters_parse)
{
	struct pv_samba_counters c;
	char text[sizeof(profile_text) * 2], *o = text;

	ck_assert_int_eq(pv_samba_counters_parse(profile_text, sizeof(profile_text) - 1, &c),
			 PV_OK);
	profile_counters(&c);
	pv_samba_counters_release(&c);
	ck_assert(c.v == NULL && c.n == 0);
	/* CRLF, and no newline after the last line */
	for (const char *p = profile_text; *p; p++) {
		if (*p == '\n')
			*o++ = '\r';
		*o++ = *p;
	}
	ck_assert_int_eq(pv_samba_counters_parse(text, (size_t)(o - text) - 2, &c), PV_OK);
	profile_counters(&c);
	pv_samba_counters_release(&c);
	/* only len bytes are read: the last line cut after its colon is no counter */
	ck_assert_int_eq(pv_samba_counters_parse(profile_text, sizeof(profile_text) - 4, &c),
			 PV_OK);
	has_counter(&c, "smb2:query_directory", 1, 0);
	pv_samba_counters_release(&c);
	ck_assert_int_eq(pv_samba_counters_parse("", 0, &c), PV_OK);
	ck_assert_uint_eq(c.n, 0);
	pv_samba_counters_release(&c);

	/* values that are not a count: left; a later line for the same field wins */
	{
		static const char odd[] =
			"syscall_stat_count: x12\n"
			"syscall_stat_count: -3\n"
			"syscall_stat_count: 12x\n"
			"syscall_stat_count: 1 2\n"
			"syscall_stat_count: 0x10\n"
			"syscall_stat_count:\n"
			"syscall_stat_count: \n"
			"syscall_stat_time: +5\n"
			"syscall_stat_count: 18446744073709551616\n" /* over 64 bits */
			"syscall_stat_time: 99999999999999999999999\n"
			"syscall_fstat_count: 7\n"
			"syscall_fstat_count: 8\t\r\n"
			"syscall_fstat_time:\t9\n"
			"syscall_unlink_count 3\n"  /* no colon */
			"syscall_unlink_total: 3\n" /* not a count or a time */
			"syscall__count: 3\n"	    /* no name */
			"syscall_count: 3\n"
			"smb2_: 3\n"
			"Syscall_close_count: 3\n"
			" syscall_close_count: 3\n"
			"smb2_read_count: 18446744073709551615\n";
		ck_assert_int_eq(pv_samba_counters_parse(odd, sizeof(odd) - 1, &c), PV_OK);
		ck_assert_uint_eq(c.n, 2);
		has_counter(&c, "fstat", 8, 9);
		has_counter(&c, "smb2:read", UINT64_MAX, 0);
		pv_samba_counters_release(&c);
	}
	/* lines of up to 159 bytes are read, longer ones left; names of up to 47 bytes kept */
	{
		char line[400];
		int n;

		n = snprintf(line, sizeof(line), "syscall_lstat_count:%*s\n", 139, "7");
		ck_assert_int_eq(n, 160); /* 159 and its newline */
		ck_assert_int_eq(pv_samba_counters_parse(line, (size_t)n, &c), PV_OK);
		has_counter(&c, "lstat", 7, 0);
		pv_samba_counters_release(&c);
		n = snprintf(line, sizeof(line), "syscall_lstat_count:%*s\n", 140, "7");
		ck_assert_int_eq(pv_samba_counters_parse(line, (size_t)n, &c), PV_OK);
		ck_assert_uint_eq(c.n, 0);
		pv_samba_counters_release(&c);
		n = snprintf(line, sizeof(line),
			     "syscall_%0200d_count: 5\nsyscall_lstat_count: 6\n", 0);
		ck_assert_int_eq(pv_samba_counters_parse(line, (size_t)n, &c), PV_OK);
		ck_assert_uint_eq(c.n, 1);
		has_counter(&c, "lstat", 6, 0);
		pv_samba_counters_release(&c);
		n = snprintf(line, sizeof(line), "syscall_%047d_count: 5\nsmb2_%042d_time: 6\n", 0,
			     0);
		ck_assert_int_eq(pv_samba_counters_parse(line, (size_t)n, &c), PV_OK);
		ck_assert_uint_eq(c.n, 2);
		ck_assert_uint_eq(strlen(c.v[0].name), 47);
		ck_assert_uint_eq(strlen(c.v[1].name), 47);
		ck_assert(!strncmp(c.v[1].name, "smb2:000", 8));
		pv_samba_counters_release(&c);
		n = snprintf(line, sizeof(line), "syscall_%048d_count: 5\nsmb2_%043d_time: 6\n", 0,
			     0);
		ck_assert_int_eq(pv_samba_counters_parse(line, (size_t)n, &c), PV_OK);
		ck_assert_uint_eq(c.n, 0);
		pv_samba_counters_release(&c);
	}
	/* at most PV_SAMBA_COUNTERS_MAX names: the first ones kept and still updated */
	{
		struct pv_buf b = PV_BUF_INIT;

		for (int i = 0; i < PV_SAMBA_COUNTERS_MAX + 88; i++)
			pv_buf_addf(&b, "syscall_n%d_count: %d\n", i, i + 1);
		pv_buf_addf(&b, "syscall_n0_time: 99\nsyscall_n%d_time: 5\n",
			    PV_SAMBA_COUNTERS_MAX + 1);
		ck_assert_int_eq(pv_samba_counters_parse(b.data, b.len, &c), PV_OK);
		ck_assert_uint_eq(c.n, PV_SAMBA_COUNTERS_MAX);
		has_counter(&c, "n0", 1, 99);
		has_counter(&c, "n511", 512, 0);
		ck_assert_ptr_null(counter_of(&c, "n512"));
		ck_assert_ptr_null(counter_of(&c, "n513"));
		pv_samba_counters_release(&c);
		pv_buf_release(&b, 0);
	}
	/* out of memory, at the first allocation or when the array grows: PV_EIO, nothing kept */
	for (long at = 1; at <= 2; at++) {
		struct pv_buf b = PV_BUF_INIT;

		for (int i = 0; i < 100; i++)
			pv_buf_addf(&b, "syscall_n%d_count: %d\n", i, i + 1);
		pv_test_alloc_fail_at(at);
		ck_assert_int_eq(pv_samba_counters_parse(b.data, b.len, &c), PV_EIO);
		pv_test_alloc_ok();
		ck_assert_int_gt(pv_test_alloc_refused(), 0);
		ck_assert(c.v == NULL && c.n == 0 && c.cap == 0);
		ck_assert(strstr(pv_errmsg(), "out of memory"));
		pv_buf_release(&b, 0);
	}
}
END_TEST

/* text into c, which must parse */
static void counters(const char *text, struct pv_samba_counters *c)
{
	ck_assert_int_eq(pv_samba_counters_parse(text, strlen(text), c), PV_OK);
}

START_TEST(counters_diff)
{
	struct pv_samba_counters a, b, d;

	counters("syscall_lstat_count: 10\nsyscall_lstat_time: 100\n"
		 "smb2_create_count: 5\nsmb2_create_time: 50\n"
		 "syscall_open_count: 3\nsyscall_open_time: 30\n"
		 "syscall_stat_count: 4\nsyscall_stat_time: 40\n"
		 "syscall_fstat_count: 6\nsyscall_fstat_time: 60\n"
		 "syscall_close_count: 1\nsyscall_close_time: 1\n"
		 "syscall_chdir_count: 5\nsyscall_chdir_time: 10\n",
		 &a);
	counters("syscall_lstat_count: 15\nsyscall_lstat_time: 160\n" /* moved */
		 "smb2_create_count: 5\nsmb2_create_time: 50\n"	      /* did not */
		 "syscall_open_count: 1\nsyscall_open_time: 10\n"     /* went back */
		 "syscall_stat_count: 4\nsyscall_stat_time: 39\n"     /* its time went back */
		 "syscall_fstat_count: 6\nsyscall_fstat_time: 61\n"   /* only its time moved */
		 "smb2_read_count: 2\nsmb2_read_time: 20\n"	      /* new */
		 "syscall_chdir_count: 2\nsyscall_chdir_time: 50\n",  /* its count went back */
		 &b);
	memset(&d, 0x5a, sizeof(d));
	ck_assert_int_eq(pv_samba_counters_diff(&a, &b, &d), PV_OK);
	ck_assert_uint_eq(d.n, 6);
	has_counter(&d, "lstat", 5, 60);
	has_counter(&d, "chdir", 2, 50);
	ck_assert_ptr_null(counter_of(&d, "smb2:create"));
	has_counter(&d, "open", 1, 10);
	has_counter(&d, "stat", 4, 39);
	has_counter(&d, "fstat", 0, 1);
	has_counter(&d, "smb2:read", 2, 20);
	ck_assert_ptr_null(counter_of(&d, "close")); /* gone from after: not there */
	pv_samba_counters_release(&d);
	/* nothing moved: nothing */
	ck_assert_int_eq(pv_samba_counters_diff(&a, &a, &d), PV_OK);
	ck_assert(d.n == 0 && d.v == NULL);
	pv_samba_counters_release(&d);
	/* from nothing: all of after */
	memset(&d, 0, sizeof(d));
	{
		struct pv_samba_counters none = {0};

		ck_assert_int_eq(pv_samba_counters_diff(&none, &b, &d), PV_OK);
		ck_assert_uint_eq(d.n, 7);
		has_counter(&d, "smb2:create", 5, 50);
		pv_samba_counters_release(&d);
	}
	/* out of memory: PV_EIO, nothing kept */
	pv_test_alloc_fail_at(1);
	ck_assert_int_eq(pv_samba_counters_diff(&a, &b, &d), PV_EIO);
	pv_test_alloc_ok();
	ck_assert(d.v == NULL && d.n == 0);
	pv_samba_counters_release(&a);
	pv_samba_counters_release(&b);
}
END_TEST

/* smbstatus --processes --json of Samba 4.17 (source3/utils/status_json.c), one session of
 * it onto b: pid, machine and host are JSON values as given (4.17 writes the pid as a
 * string) */
static void session(struct pv_buf *b, const char *id, const char *pid, const char *machine,
		    const char *host)
{
	pv_buf_addf(
		b,
		"%s\"%s\": {\"session_id\": \"%s\", \"server_id\": {\"pid\": %s, \"task_id\": "
		"\"0\", \"vnn\": \"4294967295\", \"unique_id\": \"6212330254911574893\"}, "
		"\"uid\": 13156, \"gid\": 10513, \"username\": \"LAB\\\\cli1-u1\", "
		"\"groupname\": \"LAB\\\\domain users\", \"creation_time\": "
		"\"2024-05-02T10:11:12.123456+00:00\", \"expiration_time\": "
		"\"30828-09-14T02:48:05.477581+00:00\", \"auth_time\": "
		"\"2024-05-02T10:11:12.123456+00:00\", \"remote_machine\": %s, \"hostname\": %s, "
		"\"session_dialect\": \"SMB3_11\", \"encryption\": {\"cipher\": \"-\", "
		"\"degree\": \"none\"}, \"signing\": {\"cipher\": \"AES-128-GMAC\", "
		"\"degree\": \"partial\"}}",
		b->len && b->data[b->len - 1] != '{' ? ", " : "", id, id, pid, machine, host);
}

#define STATUS_HEAD                                                                                \
	"{\"timestamp\": \"2024-05-02T10:11:13.000000+0000\", \"version\": \"4.17.12-Debian\", "   \
	"\"smb_conf\": \"/etc/samba/smb.conf\", \"sessions\": {"

static const struct pv_samba_conn *conn_of(const struct pv_samba_conn *v, size_t n, int pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return &v[i];
	return NULL;
}

static void conns_refused(const char *text)
{
	struct pv_samba_conn *v = (struct pv_samba_conn *)1;
	size_t n = 9;

	ck_assert_msg(pv_samba_conns_parse(text, strlen(text), &v, &n) == PV_EREMOTE, "'%s' taken",
		      text);
	ck_assert(strstr(pv_errmsg(), "the server's smbstatus --processes --json is not its JSON"));
	ck_assert(v == NULL && n == 0);
}

START_TEST(conns_parse)
{
	static const char *const sessions[][4] = {
		{"3791574117", "\"18743\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:50212\""},
		{"1", "18801", "\"fd00::1\"", "\"ipv6:fd00::1:50213\""}, /* Samba's IPv6 form */
		{"2", "\"18802\"", "\"fd00::1\"", "\"ipv6:[fd00::1]:50214\""},
		{"3", "\"0\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:1\""},
		{"4", "\"-5\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:2\""},
		{"5", "\"x\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:3\""},
		{"6", "4194305", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:4\""},
		{"7", "null", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:5\""},
		{"8", "4194304", "\"198.18.0.32\"", "null"},
		{"9", "\"18809\"", "\"fd00::7\"", "null"},
		{"10", "\"18810\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:0\""},
		{"11", "\"18811\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:65536\""},
		{"12", "\"18812\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:65535\""},
		{"13", "\"18813\"", "\"198.18.0.31\"", "\"ipv4:198.18.0.31:445x\""},
	};
	struct pv_buf text = PV_BUF_INIT;
	struct pv_samba_conn *v;
	const struct pv_samba_conn *c;
	size_t n;

	pv_buf_addstr(&text, STATUS_HEAD);
	for (size_t i = 0; i < sizeof(sessions) / sizeof(sessions[0]); i++)
		session(&text, sessions[i][0], sessions[i][1], sessions[i][2], sessions[i][3]);
	pv_buf_addstr(&text, ", \"14\": {\"remote_machine\": \"198.18.0.31\"}, \"15\": 7}}");
	ck_assert(!pv_buf_failed(&text));
	ck_assert_int_eq(pv_samba_conns_parse(text.data, text.len, &v, &n), PV_OK);
	ck_assert_uint_eq(n, 9); /* pids 1 to 4194304 */
	ck_assert_ptr_nonnull(c = conn_of(v, n, 18743));
	ck_assert_int_eq(c->port, 50212);
	ck_assert_str_eq(c->machine, "ipv4:198.18.0.31:50212");
	ck_assert_ptr_nonnull(c = conn_of(v, n, 18801)); /* a number; Samba's IPv6 form */
	ck_assert_int_eq(c->port, 50213);
	ck_assert_str_eq(c->machine, "ipv6:fd00::1:50213");
	ck_assert_ptr_nonnull(c = conn_of(v, n, 18802)); /* with brackets */
	ck_assert_int_eq(c->port, 50214);
	ck_assert_ptr_nonnull(c = conn_of(v, n, 4194304)); /* no hostname: the machine, no port */
	ck_assert_int_eq(c->port, 0);
	ck_assert_str_eq(c->machine, "198.18.0.32");
	ck_assert_ptr_nonnull(c = conn_of(v, n, 18810));
	ck_assert_int_eq(c->port, 0);
	ck_assert_int_eq(conn_of(v, n, 18811)->port, 0);
	ck_assert_int_eq(conn_of(v, n, 18812)->port, 65535);
	ck_assert_int_eq(conn_of(v, n, 18813)->port, 0);
	/* remote_machine is an address without a port: an IPv6 one's last group is no port */
	ck_assert_ptr_nonnull(c = conn_of(v, n, 18809));
	ck_assert_int_eq(c->port, 0);
	ck_assert_str_eq(c->machine, "fd00::7");
	for (size_t i = 0; i < n; i++)
		ck_assert(v[i].pid > 0 && v[i].pid <= 4194304 && v[i].port >= 0 &&
			  v[i].port <= 65535);
	free(v);

	/* no session */
	ck_assert_int_eq(pv_samba_conns_parse(STATUS_HEAD "}}", strlen(STATUS_HEAD "}}"), &v, &n),
			 PV_OK);
	ck_assert(n == 0 && v == NULL);
	/* not smbstatus's JSON */
	conns_refused("");
	conns_refused("{");
	conns_refused("[]");
	conns_refused("{}");
	conns_refused("{\"sessions\": []}");
	conns_refused("{\"sessions\": 3}");
	conns_refused("{\"sessions\": {}} x");
	conns_refused("No locked files\n");
	/* a long hostname is cut to fit */
	{
		char t[1024], host[300];

		memset(host, 'h', sizeof(host) - 1);
		host[sizeof(host) - 1] = '\0';
		snprintf(t, sizeof(t),
			 "{\"sessions\": {\"1\": {\"server_id\": {\"pid\": 9}, "
			 "\"hostname\": \"ipv4:%s:445\"}}}",
			 host);
		ck_assert_int_eq(pv_samba_conns_parse(t, strlen(t), &v, &n), PV_OK);
		ck_assert_uint_eq(n, 1);
		ck_assert_int_eq(v[0].port, 445);
		ck_assert_uint_eq(strlen(v[0].machine), sizeof(v[0].machine) - 1);
		free(v);
	}
	/* at most PV_SAMBA_CONNS_MAX sessions */
	{
		struct pv_buf b = PV_BUF_INIT;

		pv_buf_addstr(&b, "{\"sessions\": {");
		for (int i = 0; i < PV_SAMBA_CONNS_MAX + 10; i++)
			pv_buf_addf(&b, "%s\"%d\": {\"server_id\": {\"pid\": \"%d\"}}",
				    i ? ", " : "", i, i + 100);
		pv_buf_addstr(&b, "}}");
		ck_assert_int_eq(pv_samba_conns_parse(b.data, b.len, &v, &n), PV_OK);
		ck_assert_uint_eq(n, PV_SAMBA_CONNS_MAX);
		free(v);
		pv_buf_release(&b, 0);
	}
	/* out of memory: PV_EIO, nothing out */
	pv_test_alloc_fail_at(1);
	ck_assert_int_eq(pv_samba_conns_parse(text.data, text.len, &v, &n), PV_EIO);
	pv_test_alloc_ok();
	ck_assert_int_gt(pv_test_alloc_refused(), 0);
	ck_assert(v == NULL && n == 0);
	pv_buf_release(&text, 0);
}
END_TEST

/* The script server.service renders, run by /bin/sh with PATH holding a stand-in systemctl that
 * knows the units given ("smbd winbind" as Debian, "smb winbind" as RHEL) and logs what it is
 * asked to do; the log (or the script's stderr) comes back in out. The script's status. */
static int run_service(const char *tmpl, const char *action, const char *service, const char *units,
		       char *out, size_t len)
{
	char dir[] = "/tmp/pv-unit-svc.XXXXXX", path[256], cmd[1024];
	struct pv_buf b = PV_BUF_INIT;
	FILE *f;
	size_t n;
	int st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/systemctl", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f,
		"#!/bin/sh\n"
		"if [ \"$1\" = cat ]; then\n"
		"\tfor k in %s; do [ \"$2\" = \"$k.service\" ] && exit 0; done\n"
		"\texit 1\n"
		"fi\n"
		"echo \"$*\" >>%s/log\n",
		units, dir);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0755), 0);
	ck_assert_int_eq(pv_samba_service_script(tmpl, action, service, &b), PV_OK);
	snprintf(path, sizeof(path), "%s/script", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fwrite(b.data, 1, b.len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "PATH=%s:/usr/bin:/bin sh %s/script 2>%s/log", dir, dir, dir);
	st = system(cmd);
	snprintf(path, sizeof(path), "%s/log", dir);
	out[0] = '\0';
	if ((f = fopen(path, "r"))) {
		n = fread(out, 1, len - 1, f);
		out[n] = '\0';
		fclose(f);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	pv_buf_release(&b, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(service_units)
{
	char out[512];

	/* Debian's names, RHEL's: the unit each knows */
	ck_assert_int_eq(run_service("systemctl {action} {unit}", "start", "winbindd",
				     "smbd winbind", out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "start winbind\n");
	ck_assert_int_eq(run_service("systemctl {action} {unit}", "stop", "smbd", "smbd winbind",
				     out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "stop smbd\n");
	ck_assert_int_eq(run_service("systemctl {action} {unit}", "start", "smbd", "smb winbind",
				     out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "start smb\n");
	/* none known: it fails saying what it tried and what to set */
	ck_assert_int_eq(run_service("systemctl {action} {unit}", "start", "winbindd", "smbd", out,
				     sizeof(out)),
			 1);
	ck_assert(strstr(out, "no systemd unit for winbindd here (tried: winbind winbindd): set "
			      "server.service"));
	/* a template without {unit} looks nothing up: {service} as it is */
	ck_assert_int_eq(run_service("systemctl {action} {service}", "restart", "winbindd", "", out,
				     sizeof(out)),
			 0);
	ck_assert_str_eq(out, "restart winbindd\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("samba");
	TCase *tc = tcase_create("samba");

	tcase_add_test(tc, test_facts);
	tcase_add_test(tc, test_setting_valid);
	tcase_add_test(tc, test_setting_judge);
	tcase_add_test(tc, profile_level);
	tcase_add_test(tc, counters_parse);
	tcase_add_test(tc, counters_diff);
	tcase_add_test(tc, conns_parse);
	tcase_add_test(tc, service_units);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
