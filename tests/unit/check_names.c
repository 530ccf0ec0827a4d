/* tests/unit/check_names.c: name templates and the sAMAccountName / NetBIOS name rules. */
#include "playbooks/names.h"
#include "util/err.h"

#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ck_assert_msg_has(s)                                                                       \
	ck_assert_msg(strstr(pv_errmsg(), (s)), "message '%s' lacks '%s'", pv_errmsg(), (s))

START_TEST(expand_defaults)
{
	char out[64];

	ck_assert_int_eq(pv_names_expand("{client}-u{n}", "cli1", NULL, 7, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "cli1-u7");
	ck_assert_int_eq(pv_names_expand("{server}u{n}", NULL, "srv", 10, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "srvu10");
	ck_assert_int_eq(pv_names_expand("fsroot{k}", NULL, NULL, 0, 2, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "fsroot2");
}
END_TEST

START_TEST(expand_all_and_repeated)
{
	char out[64];

	ck_assert_int_eq(pv_names_expand("{server}-{client}-{n}-{k}-{n}}", "c", "s", 12, 3, out,
					 sizeof(out)),
			 0);
	ck_assert_str_eq(out, "s-c-12-3-12}");
	ck_assert_int_eq(pv_names_expand("plain", NULL, NULL, 1, 1, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "plain");
	ck_assert_int_eq(pv_names_expand("{n}", NULL, NULL, 4294967295ul, 0, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "4294967295");
}
END_TEST

START_TEST(expand_errors)
{
	char out[8];

	ck_assert_int_eq(pv_names_expand("{lab}-{n}", "c", "s", 1, 1, out, sizeof(out)),
			 PV_ECONFIG);
	ck_assert_msg_has("unknown placeholder '{lab}'");
	ck_assert_int_eq(pv_names_expand("u{n", "c", "s", 1, 1, out, sizeof(out)), PV_ECONFIG);
	ck_assert_msg_has("unterminated placeholder");
	ck_assert_int_eq(pv_names_expand("{client}{n}", NULL, "s", 1, 1, out, sizeof(out)),
			 PV_ECONFIG);
	ck_assert_msg_has("uses {client} but no client name");
	/* 7 characters fit in 8 bytes, 8 do not */
	ck_assert_int_eq(pv_names_expand("{client}", "abcdefg", NULL, 1, 1, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "abcdefg");
	ck_assert_int_eq(pv_names_expand("{client}", "abcdefgh", NULL, 1, 1, out, sizeof(out)),
			 PV_ECONFIG);
	ck_assert_msg_has("longer than 7 bytes");
	ck_assert_int_eq(pv_names_expand("x", NULL, NULL, 1, 1, out, 0), PV_ECONFIG);
}
END_TEST

START_TEST(placeholders_mask)
{
	unsigned mask = 99;

	ck_assert_int_eq(pv_names_placeholders("{client}-u{n}", &mask), 0);
	ck_assert_uint_eq(mask, PV_NAMES_CLIENT | PV_NAMES_N);
	ck_assert_int_eq(pv_names_placeholders("none", &mask), 0);
	ck_assert_uint_eq(mask, 0);
	mask = 99;
	ck_assert_int_eq(pv_names_placeholders("{N}", &mask), PV_ECONFIG);
	ck_assert_uint_eq(mask, 99);
}
END_TEST

START_TEST(template_check)
{
	unsigned user = PV_NAMES_CLIENT | PV_NAMES_SERVER | PV_NAMES_N;

	ck_assert_int_eq(pv_names_check_template("{client}-u{n}", user, PV_NAMES_N), 0);
	ck_assert_int_eq(pv_names_check_template("{client}-u", user, PV_NAMES_N), PV_ECONFIG);
	ck_assert_msg_has("template '{client}-u' has no {n}");
	ck_assert_int_eq(pv_names_check_template("{client}-u{n}-{k}", user, PV_NAMES_N),
			 PV_ECONFIG);
	ck_assert_msg_has("placeholder {k} cannot be used");
	ck_assert_msg_has("expected only {client}, {server}, {n}");
	ck_assert_int_eq(pv_names_check_template("", user, PV_NAMES_N), PV_ECONFIG);
	ck_assert_msg_has("template is empty");
	ck_assert_int_eq(pv_names_check_template("u{m}", user, PV_NAMES_N), PV_ECONFIG);
	ck_assert_msg_has("unknown placeholder '{m}'");
}
END_TEST

START_TEST(sam_limits)
{
	ck_assert_int_eq(pv_names_check_sam("user name", "abcdefghijklmnopqrst"), 0); /* 20 */
	ck_assert_int_eq(pv_names_check_sam("user name", "abcdefghijklmnopqrstu"), PV_ECONFIG);
	ck_assert_msg_has("user name 'abcdefghijklmnopqrstu' is 21 characters; sAMAccountName "
			  "allows at most 20");
	/* 20 characters in 40 bytes: AD counts characters */
	ck_assert_int_eq(pv_names_check_sam("user name", "éééééééééééééééééééé"), 0);
	ck_assert_uint_eq(pv_names_length("é-u1"), 4);
	ck_assert_int_eq(pv_names_check_sam("user name", ""), PV_ECONFIG);
	ck_assert_msg_has("user name is empty");
	ck_assert_int_eq(pv_names_check_sam("user name", "cli1.u1"), 0);
	ck_assert_int_eq(pv_names_check_sam("user name", "cli1-u1."), PV_ECONFIG);
	ck_assert_msg_has("ends with '.'");
}
END_TEST

START_TEST(sam_forbidden_characters)
{
	const char *bad = "\"/\\[]:;|=,+*?<>@";
	char name[8];

	for (const char *p = bad; *p; p++) {
		snprintf(name, sizeof(name), "a%cb", *p);
		ck_assert_msg(pv_names_check_sam("user name", name) == PV_ECONFIG, "'%s' accepted",
			      name);
		ck_assert_msg_has("sAMAccountName forbids");
	}
	ck_assert_int_eq(pv_names_check_sam("user name", "a\tb"), PV_ECONFIG);
	ck_assert_msg_has("control character 0x09");
	ck_assert_int_eq(pv_names_check_sam("user name", "a\x7f"), PV_ECONFIG);
	ck_assert_int_eq(pv_names_check_sam("user name", "a_b-c.d$e"), 0);
}
END_TEST

START_TEST(host_limits)
{
	ck_assert_int_eq(pv_names_check_host("alias", "srvu10"), 0);
	ck_assert_int_eq(pv_names_check_host("alias", "abcdefghijklmno"), 0); /* 15 */
	ck_assert_int_eq(pv_names_check_host("alias", "abcdefghijklmnop"), PV_ECONFIG);
	ck_assert_msg_has("alias 'abcdefghijklmnop' is 16 characters; NetBIOS names allow at most "
			  "15");
	ck_assert_int_eq(pv_names_check_host("alias", "-srv"), PV_ECONFIG);
	ck_assert_msg_has("starts with '-'");
	ck_assert_int_eq(pv_names_check_host("alias", "srv-"), PV_ECONFIG);
	ck_assert_msg_has("ends with '-'");
	ck_assert_int_eq(pv_names_check_host("alias", "s-r-v"), 0);
	ck_assert_int_eq(pv_names_check_host("alias", "srv.lab"), PV_ECONFIG);
	ck_assert_msg_has("contains '.'");
	ck_assert_int_eq(pv_names_check_host("alias", "srv_1"), PV_ECONFIG);
	ck_assert_int_eq(pv_names_check_host("alias", "sr\xc3\xa9"), PV_ECONFIG);
	ck_assert_msg_has("byte 0xc3");
	ck_assert_int_eq(pv_names_check_host("alias", ""), PV_ECONFIG);
	ck_assert_msg_has("alias is empty");
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
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pv_unit_run(names_suite());
}
