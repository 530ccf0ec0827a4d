/* tests/unit/check_remote.c: remote/quote: the POSIX quoting (read back by /bin/sh), the
 * cmd.exe quoting (what it refuses, and why each refusal is needed) and the PowerShell quoting
 * (every single-quote character doubled, control characters refused); and the two Windows
 * commands the client phase builds with them. remote/exec.c without a host: the line that
 * says why a script failed, and a script whose buffer ran out of memory refused before
 * anything is sent. */
#include "phases/client.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "tests/unit/alloc.h"
#include "util/err.h"

#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ck_assert_msg_has(s)                                                                       \
	ck_assert_msg(strstr(pv_errmsg(), (s)), "message '%s' lacks '%s'", pv_errmsg(), (s))

/* ---- POSIX sh ---- */

/* What /bin/sh makes of `printf %s <quoted>`. */
static void sh_reads_back(const char *s)
{
	struct pv_buf cmd = PV_BUF_INIT;
	char got[256] = "";
	size_t n;
	FILE *p;

	pv_buf_addstr(&cmd, "printf %s ");
	ck_assert_int_eq(pv_remote_quote(&cmd, s), 0);
	ck_assert_ptr_nonnull(p = popen(cmd.data, "r"));
	n = fread(got, 1, sizeof(got) - 1, p);
	got[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_str_eq(got, s);
	pv_buf_release(&cmd, 0);
}

START_TEST(posix_round_trip)
{
	sh_reads_back("plain");
	sh_reads_back("it's");
	sh_reads_back("''");
	sh_reads_back("$(id) `id` $HOME \\ \" ; & | < > * ? [a] ~ #");
	sh_reads_back("two\nlines");
	sh_reads_back("-n");
}
END_TEST

START_TEST(posix_text)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_remote_quote(&b, "a'b"), 0);
	ck_assert_str_eq(b.data, "'a'\\''b'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_remote_var(&b, "v", "x y"), 0);
	ck_assert_str_eq(b.data, "v='x y'\n");
	pv_buf_release(&b, 0);
}
END_TEST

/* ---- cmd.exe ---- */

START_TEST(cmd_quotes)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_buf_addstr(&b, "del /q ");
	ck_assert_int_eq(pv_remote_quote_cmd(&b, "C:\\Windows\\System32\\drivers\\etc\\hosts.orig"),
			 0);
	ck_assert_str_eq(b.data, "del /q \"C:\\Windows\\System32\\drivers\\etc\\hosts.orig\"");
	pv_buf_reset(&b);
	/* plain text inside double quotes */
	ck_assert_int_eq(pv_remote_quote_cmd(&b, "a & b | c < d > e ^ (f) 'g' $h"), 0);
	ck_assert_str_eq(b.data, "\"a & b | c < d > e ^ (f) 'g' $h\"");
	pv_buf_release(&b, 0);
}
END_TEST

/* Refused, with b left as it was. */
static void cmd_refused(const char *s, const char *why)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_buf_addstr(&b, "x ");
	ck_assert_msg(pv_remote_quote_cmd(&b, s) == PV_ECONFIG, "'%s' accepted", s);
	ck_assert_msg_has(why);
	ck_assert_str_eq(b.data, "x ");
	pv_buf_release(&b, 0);
}

START_TEST(cmd_refuses)
{
	cmd_refused("a\"b", "holds '\"'");
	cmd_refused("\" & calc & \"", "holds '\"'");
	cmd_refused("%PATH%", "holds '%'");
	cmd_refused("C:\\x%y", "holds '%'");
	cmd_refused("a!b!", "holds '!'");
	cmd_refused("a\nb", "control character 0x0a");
	cmd_refused("a\rb", "control character 0x0d");
	cmd_refused("a\tb", "control character 0x09");
	cmd_refused("a\x1a", "control character 0x1a");
	cmd_refused("a\x7f", "control character 0x7f");
	cmd_refused("C:\\dir\\", "ends with '\\'");
	cmd_refused("", "empty argument");
	/* U+FF02 (fullwidth quote): best-fit mapped to '"' by some code pages */
	cmd_refused("a\xef\xbc\x82 & calc", "non-ASCII byte (0xef)");
	cmd_refused("caf\xc3\xa9", "non-ASCII");
}
END_TEST

START_TEST(cmd_out_of_memory)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_test_alloc_fail_at(1);
	ck_assert_int_eq(pv_remote_quote_cmd(&b, "abc"), PV_EIO);
	pv_test_alloc_ok();
	ck_assert(pv_buf_failed(&b));
	pv_buf_release(&b, 0);
}
END_TEST

/* ---- PowerShell ---- */

START_TEST(ps_quotes)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_remote_quote_ps(&b, "srvu1"), 0);
	ck_assert_str_eq(b.data, "'srvu1'");
	pv_buf_reset(&b);
	/* nothing expands inside single quotes: $, `, ", (, ; stay as they are */
	ck_assert_int_eq(pv_remote_quote_ps(&b, "$(calc) `n \"x\"; ls"), 0);
	ck_assert_str_eq(b.data, "'$(calc) `n \"x\"; ls'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_remote_quote_ps(&b, "it's"), 0);
	ck_assert_str_eq(b.data, "'it''s'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_remote_quote_ps(&b, "'"), 0);
	ck_assert_str_eq(b.data, "''''");
	pv_buf_reset(&b);
	/* PowerShell also ends a single-quoted string at U+2018..U+201B: each is doubled */
	ck_assert_int_eq(pv_remote_quote_ps(&b, "a\xe2\x80\x98"
						"b\xe2\x80\x99"
						"c\xe2\x80\x9a"
						"d\xe2\x80\x9b"
						"e"),
			 0);
	ck_assert_str_eq(b.data, "'a\xe2\x80\x98\xe2\x80\x98"
				 "b\xe2\x80\x99\xe2\x80\x99"
				 "c\xe2\x80\x9a\xe2\x80\x9a"
				 "d\xe2\x80\x9b\xe2\x80\x9b"
				 "e'");
	pv_buf_reset(&b);
	/* other non-ASCII text is kept */
	ck_assert_int_eq(pv_remote_quote_ps(&b, "caf\xc3\xa9 \xe2\x80\x9c"), 0);
	ck_assert_str_eq(b.data, "'caf\xc3\xa9 \xe2\x80\x9c'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_remote_quote_ps(&b, ""), 0);
	ck_assert_str_eq(b.data, "''");
	pv_buf_release(&b, 0);
}
END_TEST

static void ps_refused(const char *s, const char *why)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_buf_addstr(&b, "x ");
	ck_assert_msg(pv_remote_quote_ps(&b, s) == PV_ECONFIG, "'%s' accepted", s);
	ck_assert_msg_has(why);
	ck_assert_str_eq(b.data, "x ");
	pv_buf_release(&b, 0);
}

START_TEST(ps_refuses)
{
	ps_refused("a\nb", "control character U+000A");
	ps_refused("a\r", "control character U+000D");
	ps_refused("\x1b[31m", "control character U+001B");
	ps_refused("a\x7f", "control character U+007F");
	ps_refused("a\xc2\x85", "control character U+0085"); /* NEL */
	ps_refused("a\xff", "not valid UTF-8 (byte 0xff)");
	ps_refused("a\xc3", "not valid UTF-8");
	ps_refused("\xc0\xa7", "not valid UTF-8");     /* overlong ' */
	ps_refused("\xed\xa0\x80", "not valid UTF-8"); /* a surrogate */
}
END_TEST

/* ---- the Windows commands of the client phase ---- */

START_TEST(windows_commands)
{
	struct pv_buf cmd = PV_BUF_INIT;

	ck_assert_int_eq(
		pv_phases_client_win_del("C:/Windows/System32/drivers/etc/hosts.provision-lab-c1"
					 ".orig",
					 &cmd),
		0);
	ck_assert_str_eq(cmd.data, "del /q \"C:\\Windows\\System32\\drivers\\etc\\hosts.provision-"
				   "lab-c1.orig\"");
	ck_assert_int_eq(pv_phases_client_win_del("C:/x/hosts.provision-%PATH%-c1.orig", &cmd),
			 PV_ECONFIG);
	ck_assert_msg_has("holds '%'");

	ck_assert_int_eq(pv_phases_client_win_resolve("srvu1", "srvu10", &cmd), 0);
	ck_assert_str_eq(cmd.data,
			 "powershell -NoProfile -NonInteractive -Command \"$names = "
			 "'srvu1','srvu10'; foreach ($n in $names) { "
			 "[System.Net.Dns]::GetHostAddresses($n) | ForEach-Object { 'pv-host ' + "
			 "$_.IPAddressToString } }\"");
	/* a quote in a name stays inside its PowerShell string */
	ck_assert_int_eq(pv_phases_client_win_resolve("a'); calc; ('", "b", &cmd), 0);
	ck_assert_ptr_nonnull(strstr(cmd.data, "'a''); calc; (''','b'"));
	/* what cmd.exe would expand is refused before anything is sent */
	ck_assert_int_eq(pv_phases_client_win_resolve("a%COMSPEC%", "b", &cmd), PV_ECONFIG);
	ck_assert_msg_has("holds '%'");
	ck_assert_int_eq(pv_phases_client_win_resolve("a", "b\"&calc&\"", &cmd), PV_ECONFIG);
	ck_assert_int_eq(pv_phases_client_win_resolve("a", "b\n", &cmd), PV_ECONFIG);
	pv_buf_release(&cmd, 0);
}
END_TEST

/* ---- pv_remote_sh ---- */

/* A script cut short by a failed allocation is never sent (no host is needed to see it: the
 * refusal comes before the session is touched). */
START_TEST(sh_failed_script_not_sent)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_buf_addstr(&b, "echo start\n");
	pv_test_alloc_fail_at(1);
	pv_buf_add(&b, "x", 4096);
	pv_test_alloc_ok();
	ck_assert(pv_buf_failed(&b));
	ck_assert_int_eq(pv_remote_sh(NULL, "a test", &b, NULL, 0, NULL, NULL, 1), PV_EIO);
	ck_assert_msg_has("building the script for a test; nothing was sent");
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(sh_reason)
{
	char out[128], small[8];

	pv_remote_reason("line one\nline two\n\n", out, sizeof(out));
	ck_assert_str_eq(out, "line two");
	pv_remote_reason("alone", out, sizeof(out));
	ck_assert_str_eq(out, "alone");
	pv_remote_reason(" \n\n", out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* a full disk said where it was, not the generic last line after it */
	pv_remote_reason("tar: a: Cannot write: No space left on device\ntar: b: x\ntar: Exiting "
			 "with failure status\n",
			 out, sizeof(out));
	ck_assert_str_eq(out, "tar: a: Cannot write: No space left on device");
	pv_remote_reason("x\nmv: No space left on device", out, sizeof(out));
	ck_assert_str_eq(out, "mv: No space left on device");
	pv_remote_reason("one\ntwo three four", small, sizeof(small));
	ck_assert_str_eq(small, "two thr");
	pv_remote_reason(NULL, out, sizeof(out));
	ck_assert_str_eq(out, "");
}
END_TEST

static Suite *remote_suite(void)
{
	Suite *s = suite_create("remote");
	TCase *tc = tcase_create("quote");

	tcase_add_test(tc, posix_round_trip);
	tcase_add_test(tc, posix_text);
	tcase_add_test(tc, cmd_quotes);
	tcase_add_test(tc, cmd_refuses);
	tcase_add_test(tc, cmd_out_of_memory);
	tcase_add_test(tc, ps_quotes);
	tcase_add_test(tc, ps_refuses);
	tcase_add_test(tc, windows_commands);
	tcase_add_test(tc, sh_failed_script_not_sent);
	tcase_add_test(tc, sh_reason);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pv_unit_run(remote_suite());
}
