/* tests/unit/check_names.c: name templates and the sAMAccountName / NetBIOS name rules, and
 * the client names a run's step folders leave free (checked by the playbook too). */
#include "playbooks/names.h"
#include "playbooks/playbook.h"
#include "util/err.h"

#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ck_assert_msg_has(s)                                                                       \
	ck_assert_msg(strstr(pv_errmsg(), (s)), "message '%s' lacks '%s'", pv_errmsg(), (s))

START_TEST(expand_defaults)
{
	char out[64];

	ck_assert_int_eq(
		pv_playbook_names_expand("{client}-u{n}", "cli1", NULL, 7, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "cli1-u7");
	ck_assert_int_eq(
		pv_playbook_names_expand("{server}u{n}", NULL, "srv", 10, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "srvu10");
	ck_assert_int_eq(pv_playbook_names_expand("fsroot{k}", NULL, NULL, 0, 2, out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "fsroot2");
}
END_TEST

START_TEST(expand_all_and_repeated)
{
	char out[64];

	ck_assert_int_eq(pv_playbook_names_expand("{server}-{client}-{n}-{k}-{n}}", "c", "s", 12, 3,
						  out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "s-c-12-3-12}");
	ck_assert_int_eq(pv_playbook_names_expand("plain", NULL, NULL, 1, 1, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "plain");
	ck_assert_int_eq(
		pv_playbook_names_expand("{n}", NULL, NULL, 4294967295ul, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "4294967295");
}
END_TEST

START_TEST(expand_errors)
{
	char out[8];

	ck_assert_int_eq(pv_playbook_names_expand("{lab}-{n}", "c", "s", 1, 1, out, sizeof(out)),
			 PV_ECONFIG);
	ck_assert_msg_has("unknown placeholder '{lab}'");
	ck_assert_int_eq(pv_playbook_names_expand("u{n", "c", "s", 1, 1, out, sizeof(out)),
			 PV_ECONFIG);
	ck_assert_msg_has("unterminated placeholder");
	ck_assert_int_eq(pv_playbook_names_expand("{client}{n}", NULL, "s", 1, 1, out, sizeof(out)),
			 PV_ECONFIG);
	ck_assert_msg_has("uses {client} but no client name");
	/* 7 characters fit in 8 bytes, 8 do not */
	ck_assert_int_eq(
		pv_playbook_names_expand("{client}", "abcdefg", NULL, 1, 1, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "abcdefg");
	ck_assert_int_eq(
		pv_playbook_names_expand("{client}", "abcdefgh", NULL, 1, 1, out, sizeof(out)),
		PV_ECONFIG);
	ck_assert_msg_has("longer than 7 bytes");
	ck_assert_int_eq(pv_playbook_names_expand("x", NULL, NULL, 1, 1, out, 0), PV_ECONFIG);
}
END_TEST

START_TEST(placeholders_mask)
{
	unsigned mask = 99;

	ck_assert_int_eq(pv_playbook_names_placeholders("{client}-u{n}", &mask), 0);
	ck_assert_uint_eq(mask, PV_PLAYBOOK_NAMES_CLIENT | PV_PLAYBOOK_NAMES_N);
	ck_assert_int_eq(pv_playbook_names_placeholders("none", &mask), 0);
	ck_assert_uint_eq(mask, 0);
	mask = 99;
	ck_assert_int_eq(pv_playbook_names_placeholders("{N}", &mask), PV_ECONFIG);
	ck_assert_uint_eq(mask, 99);
}
END_TEST

START_TEST(template_check)
{
	unsigned user = PV_PLAYBOOK_NAMES_CLIENT | PV_PLAYBOOK_NAMES_SERVER | PV_PLAYBOOK_NAMES_N;

	ck_assert_int_eq(
		pv_playbook_names_check_template("{client}-u{n}", user, PV_PLAYBOOK_NAMES_N), 0);
	ck_assert_int_eq(pv_playbook_names_check_template("{client}-u", user, PV_PLAYBOOK_NAMES_N),
			 PV_ECONFIG);
	ck_assert_msg_has("template '{client}-u' has no {n}");
	ck_assert_int_eq(
		pv_playbook_names_check_template("{client}-u{n}-{k}", user, PV_PLAYBOOK_NAMES_N),
		PV_ECONFIG);
	ck_assert_msg_has("placeholder {k} cannot be used");
	ck_assert_msg_has("expected only {client}, {server}, {n}");
	ck_assert_int_eq(pv_playbook_names_check_template("", user, PV_PLAYBOOK_NAMES_N),
			 PV_ECONFIG);
	ck_assert_msg_has("template is empty");
	ck_assert_int_eq(pv_playbook_names_check_template("u{m}", user, PV_PLAYBOOK_NAMES_N),
			 PV_ECONFIG);
	ck_assert_msg_has("unknown placeholder '{m}'");
}
END_TEST

START_TEST(sam_limits)
{
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "abcdefghijklmnopqrst"),
			 0); /* 20 */
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "abcdefghijklmnopqrstu"),
			 PV_ECONFIG);
	ck_assert_msg_has("user name 'abcdefghijklmnopqrstu' is 21 characters; sAMAccountName "
			  "allows at most 20");
	/* 20 characters in 40 bytes: AD counts characters */
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "éééééééééééééééééééé"), 0);
	ck_assert_uint_eq(pv_playbook_names_length("é-u1"), 4);
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", ""), PV_ECONFIG);
	ck_assert_msg_has("user name is empty");
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "cli1.u1"), 0);
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "cli1-u1."), PV_ECONFIG);
	ck_assert_msg_has("ends with '.'");
}
END_TEST

START_TEST(sam_forbidden_characters)
{
	const char *bad = "\"/\\[]:;|=,+*?<>@";
	char name[8];

	for (const char *p = bad; *p; p++) {
		snprintf(name, sizeof(name), "a%cb", *p);
		ck_assert_msg(pv_playbook_names_check_sam("user name", name) == PV_ECONFIG,
			      "'%s' accepted", name);
		ck_assert_msg_has("sAMAccountName forbids");
	}
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "a\tb"), PV_ECONFIG);
	ck_assert_msg_has("control character 0x09");
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "a\x7f"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "a_b-c.d$e"), 0);
}
END_TEST

START_TEST(host_limits)
{
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "srvu10"), 0);
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "abcdefghijklmno"), 0); /* 15 */
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "abcdefghijklmnop"), PV_ECONFIG);
	ck_assert_msg_has("alias 'abcdefghijklmnop' is 16 characters; NetBIOS names allow at most "
			  "15");
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "-srv"), PV_ECONFIG);
	ck_assert_msg_has("starts with '-'");
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "srv-"), PV_ECONFIG);
	ck_assert_msg_has("ends with '-'");
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "s-r-v"), 0);
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "srv.lab"), PV_ECONFIG);
	ck_assert_msg_has("contains '.'");
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "srv_1"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_host("alias", "sr\xc3\xa9"), PV_ECONFIG);
	ck_assert_msg_has("byte 0xc3");
	ck_assert_int_eq(pv_playbook_names_check_host("alias", ""), PV_ECONFIG);
	ck_assert_msg_has("alias is empty");
}
END_TEST

/* sAMAccountName allows a leading '-'; we do not: user names reach getent, chown and the
 * users' folders on the server. */
START_TEST(sam_leading_dash)
{
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "-cli1-u1"), PV_ECONFIG);
	ck_assert_msg_has("user name '-cli1-u1' starts with '-'");
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "--help"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "cli1-u1-"), 0);
	ck_assert_int_eq(pv_playbook_names_check_sam("user name", "_x"), 0);
}
END_TEST

START_TEST(share_names)
{
	char name[100];

	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fsroot1"), 0);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "srv-data_1.x$"), 0);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "caf\xc3\xa9 1"), 0);
	/* path separators: the name is a folder under share_path too */
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "../../etc/x1"), PV_ECONFIG);
	ck_assert_msg_has("share name '../../etc/x1' contains '/', a path separator");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "a\\b"), PV_ECONFIG);
	ck_assert_msg_has("contains '\\', a path separator");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "."), PV_ECONFIG);
	ck_assert_msg_has("share name is '.'");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", ".."), PV_ECONFIG);
	ck_assert_msg_has("share name is '..'");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "..1"), 0);
	/* an option to net and the file tools */
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "-fsroot1"), PV_ECONFIG);
	ck_assert_msg_has("share name '-fsroot1' starts with '-'");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fs-root1-"), 0);
	/* control characters, newlines first */
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fs\nroot1"), PV_ECONFIG);
	ck_assert_msg_has("share name contains the control character 0x0a");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fs\x1froot1"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fsroot1\x7f"), PV_ECONFIG);
	ck_assert_msg_has("control character 0x7f");
	/* Samba's INVALID_SHARENAME_CHARS and the smb.conf brackets */
	for (const char *p = "%<>*?|+=;:\",[]"; *p; p++) {
		snprintf(name, sizeof(name), "a%cb", *p);
		ck_assert_msg(pv_playbook_names_check_share("share name", name) == PV_ECONFIG,
			      "'%s' accepted", name);
		ck_assert_msg_has("share names cannot hold any of");
	}
	/* spaces: inside yes, at either end no (smb.conf trims them) */
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fs root"), 0);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", " fsroot"), PV_ECONFIG);
	ck_assert_msg_has("starts with a space");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "fsroot "), PV_ECONFIG);
	ck_assert_msg_has("ends with a space");
	/* smb.conf's special sections and IPC$, any case */
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "global"), PV_ECONFIG);
	ck_assert_msg_has("'global' is reserved");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "HOMES"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "Printers"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "IPC$"), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_share("share name", "globals"), 0);
	/* length in characters: 80 fit, 81 do not */
	memset(name, 'x', 80);
	name[80] = '\0';
	ck_assert_int_eq(pv_playbook_names_check_share("share name", name), 0);
	name[80] = 'y';
	name[81] = '\0';
	ck_assert_int_eq(pv_playbook_names_check_share("share name", name), PV_ECONFIG);
	ck_assert_msg_has("is 81 characters; share names allow at most 80");
	ck_assert_int_eq(pv_playbook_names_check_share("share name", ""), PV_ECONFIG);
	ck_assert_msg_has("share name is empty");
}
END_TEST

START_TEST(paths)
{
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv/provision", 1), 0);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/", 1), 0);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/a/.b/..c/d../e.f", 1), 0);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "srv", 1), PV_ECONFIG);
	ck_assert_msg_has("'p' is 'srv', a relative path");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "-rf", 1), PV_ECONFIG);
	ck_assert_msg_has("a relative path");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "srv/x", 0), 0);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "//srv", 1), PV_ECONFIG);
	ck_assert_msg_has("'p' is '//srv', which has an empty component ('//')");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv//x", 1), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv/", 1), PV_ECONFIG);
	ck_assert_msg_has("'p' is '/srv/', which ends with '/'");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv/..", 1), PV_ECONFIG);
	ck_assert_msg_has("which has a '..' component");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/../etc", 1), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv/./x", 1), PV_ECONFIG);
	ck_assert_msg_has("which has a '.' component");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "./x", 0), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "x/.", 0), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "..", 0), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv/a\nb", 1), PV_ECONFIG);
	ck_assert_msg_has("'p' contains the control character 0x0a");
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "/srv/a\x7f", 1), PV_ECONFIG);
	ck_assert_int_eq(pv_playbook_names_check_path("'p'", "", 0), PV_ECONFIG);
	ck_assert_msg_has("'p' is empty");
}
END_TEST

START_TEST(accounts)
{
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", "Administrator"), 0);
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", "admin@LAB.TEST"), 0);
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", "lab-admin"), 0);
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", "-V"), PV_ECONFIG);
	ck_assert_msg_has("'a' is '-V', which starts with '-'");
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", "admin%secret"), PV_ECONFIG);
	ck_assert_msg_has("contains '%'");
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", "ad\tmin"), PV_ECONFIG);
	ck_assert_msg_has("control character 0x09");
	ck_assert_int_eq(pv_playbook_names_check_account("'a'", ""), PV_ECONFIG);
}
END_TEST

/* A client's results go in step-NN/<client>/, beside the step's own entries: a client named
 * as one of them is refused, by the rule and where the playbook and the inventory are read. */
START_TEST(client_names)
{
	static const char *const clash[] = {"controller", "watch.csv",	   "watch-dc.csv",
					    "watch.json", "WATCH-DC.JSON", "Controller"};
	static const char base[] = "domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, "
				   "ca_file: /etc/ca.pem, admin_password: {file: /etc/a}}\n";
	char text[512], inv[] = "/tmp/pv-names-XXXXXX";
	struct pv_playbook *pb = NULL;
	int fd;

	ck_assert_int_eq(pv_playbook_names_check_client("client name", "cli1"), 0);
	ck_assert_int_eq(pv_playbook_names_check_client("client name", "watch"), 0);
	ck_assert_int_eq(pv_playbook_names_check_client("client name", "controller1"), 0);
	for (size_t i = 0; i < sizeof(clash) / sizeof(clash[0]); i++) {
		ck_assert_int_eq(pv_playbook_names_check_client("client name", clash[i]),
				 PV_ECONFIG);
		ck_assert_msg_has("in each step's folder of a run (step-NN/");
		ck_assert_msg_has("expected another name for this client");
		snprintf(text, sizeof(text), "%sclients:\n  - {name: %s, address: 10.0.0.31}\n",
			 base, clash[i]);
		ck_assert_int_eq(pv_playbook_parse("t.yaml", text, strlen(text), NULL, &pb),
				 PV_ECONFIG);
		ck_assert_msg(!strncmp(pv_errmsg(), "t.yaml:3:12: client name '", 26), "%s",
			      pv_errmsg());
		ck_assert_ptr_null(pb);
	}
	ck_assert_msg_has("'Controller' is the name of the controller's results");
	/* a host of an Ansible inventory: the same rule */
	ck_assert_int_ge(fd = mkstemp(inv), 0);
	ck_assert_int_eq(write(fd, "cli1 ansible_host=10.0.0.31\nwatch.csv\n", 38), 38);
	close(fd);
	snprintf(text, sizeof(text), "%sclients: {inventory: %s}\n", base, inv);
	ck_assert_int_eq(pv_playbook_parse("t.yaml", text, strlen(text), NULL, &pb), PV_ECONFIG);
	ck_assert_msg_has(
		"t.yaml:2:22: client name 'watch.csv' is the name of the watch's samples");
	unlink(inv);
	snprintf(text, sizeof(text), "%sclients:\n  - {name: cli1, address: 10.0.0.31}\n", base);
	ck_assert_msg(!pv_playbook_parse("t.yaml", text, strlen(text), NULL, &pb), "%s",
		      pv_errmsg());
	pv_playbook_free(pb);
}
END_TEST

static Suite *names_suite(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, expand_defaults);
	tcase_add_test(tc, expand_all_and_repeated);
	tcase_add_test(tc, expand_errors);
	tcase_add_test(tc, placeholders_mask);
	tcase_add_test(tc, template_check);
	tcase_add_test(tc, sam_limits);
	tcase_add_test(tc, sam_forbidden_characters);
	tcase_add_test(tc, host_limits);
	tcase_add_test(tc, sam_leading_dash);
	tcase_add_test(tc, share_names);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, accounts);
	tcase_add_test(tc, client_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pv_unit_run(names_suite());
}
