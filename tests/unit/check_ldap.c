/* tests/unit/check_ldap.c: the pure encodings of ldap/ (DN, filter, unicodePwd). */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdlib.h>
#include <string.h>

#include "ldap/caps.h"
#include "ldap/encode.h"
#include "util/err.h"

static char *dn(const char *v)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_ldap_dn_escape(&b, v), 0);
	return pv_buf_detach(&b);
}

static char *filt(const char *v)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_ldap_filter_escape(&b, v), 0);
	return pv_buf_detach(&b);
}

#define ASSERT_ESC(fn, in, want)                                                                   \
	do {                                                                                       \
		char *got = fn(in);                                                                \
		ck_assert_str_eq(got, want);                                                       \
		free(got);                                                                         \
	} while (0)

/* A DC answering slices, as the reader in ldap/ops.c asks: the names it answers, one per
 * request (values each), for as long as the reader asks; how many requests the reader made
 * (at most max) and how it ended (pv_ldap_range_next's last answer). */
static int ranged(const char *const *answers, size_t n, size_t values, size_t max, size_t *requests,
		  struct pv_ldap_range *rg)
{
	char want[64];
	int r = 0;

	*rg = (struct pv_ldap_range){0, 0, false, false};
	for (*requests = 1; *requests <= max; (*requests)++) {
		const char *name = answers[*requests - 1 < n ? *requests - 1 : n - 1];

		pv_ldap_range_answer(rg);
		if ((r = pv_ldap_range_take(rg, name, "member", values)) < 0)
			return r;
		if ((r = pv_ldap_range_next(rg, "member", want, sizeof(want))) <= 0)
			return r;
	}
	return 1;
}

START_TEST(test_range)
{
	const char *const good[] = {"member;range=0-1499", "member;range=1500-2999",
				    "member;range=3000-*"};
	const char *const stuck[] = {"member;range=0-0"};
	const char *const back[] = {"member;range=0-9", "member;range=5-14"};
	const char *const other[] = {"member;range=0-9", "description"};
	struct pv_ldap_range rg;
	size_t req;

	/* the whole attribute at once; slices to the last one */
	ck_assert_int_eq(ranged((const char *const[]){"Member"}, 1, 7, 10, &req, &rg), 0);
	ck_assert_uint_eq(req, 1);
	ck_assert_uint_eq(rg.values, 7);
	ck_assert_int_eq(ranged(good, 3, 1500, 10, &req, &rg), 0);
	ck_assert_uint_eq(req, 3);
	ck_assert_uint_eq(rg.values, 4500);
	/* a DC that answers ";range=0-0" whatever is asked: refused, not asked forever */
	ck_assert_int_eq(ranged(stuck, 1, 1, 100000, &req, &rg), -1);
	ck_assert_uint_eq(req, 2);
	ck_assert_ptr_nonnull(
		strstr(pv_errmsg(), "'member;range=0-0' where values from 1 were asked"));
	/* a slice that starts before the one asked for */
	ck_assert_int_eq(ranged(back, 2, 10, 100, &req, &rg), -1);
	ck_assert_uint_eq(req, 2);
	/* an answer with no slice after a slice that was not the last */
	ck_assert_int_eq(ranged(other, 2, 10, 100, &req, &rg), -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "no slice of 'member'"));
	/* a slice with no value, HI before LO, no number, a number past the cap */
	ck_assert_int_eq(ranged((const char *const[]){"member;range=0-9"}, 1, 0, 10, &req, &rg),
			 -1);
	ck_assert_int_eq(ranged((const char *const[]){"member;range=0-x"}, 1, 1, 10, &req, &rg),
			 -1);
	ck_assert_int_eq(ranged((const char *const[]){"member;range=x-*"}, 1, 1, 10, &req, &rg),
			 -1);
	ck_assert_int_eq(ranged((const char *const[]){"member;range=0-18446744073709551615"}, 1, 1,
				10, &req, &rg),
			 -1);
	/* more values than a reader keeps of one attribute */
	ck_assert_int_eq(
		ranged((const char *const[]){"member"}, 1, PV_LDAP_VALUES_MAX + 1, 10, &req, &rg),
		-1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "more than"));
}
END_TEST

START_TEST(test_dn_escape)
{
	ASSERT_ESC(dn, "cli1-u7", "cli1-u7");
	ASSERT_ESC(dn, "a,b", "a\\,b");
	ASSERT_ESC(dn, "a+b=c", "a\\+b\\=c");
	ASSERT_ESC(dn, "q\"<x>;\\", "q\\\"\\<x\\>\\;\\\\");
	ASSERT_ESC(dn, "#lead", "\\#lead");
	ASSERT_ESC(dn, "mid#dle", "mid#dle");
	ASSERT_ESC(dn, " both ", "\\ both\\ ");
	ASSERT_ESC(dn, "in side", "in side");
	ASSERT_ESC(dn, "tab\there", "tab\\09here");
	ASSERT_ESC(dn, "", "");
	ASSERT_ESC(dn, "Jürgen", "Jürgen"); /* UTF-8 passes through (RFC 4514 allows it) */
}
END_TEST

START_TEST(test_filter_escape)
{
	ASSERT_ESC(filt, "plain", "plain");
	ASSERT_ESC(filt, "a*b", "a\\2ab");
	ASSERT_ESC(filt, "(x)", "\\28x\\29");
	ASSERT_ESC(filt, "back\\slash", "back\\5cslash");
	ASSERT_ESC(filt, "", "");
}
END_TEST

START_TEST(test_unicodepwd_ascii)
{
	struct pv_buf b = PV_BUF_INIT;
	const unsigned char want[] = {'"', 0, 'p', 0, 'w', 0, '"', 0};

	ck_assert_int_eq(pv_ldap_unicodepwd(&b, "pw", 2), 0);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert_int_eq(memcmp(b.data, want, sizeof(want)), 0);
	pv_buf_release(&b, 1);
}
END_TEST

START_TEST(test_unicodepwd_non_ascii)
{
	struct pv_buf b = PV_BUF_INIT;
	/* é (U+00E9), € (U+20AC), 😀 (U+1F600 -> D83D DE00) */
	const char *pw = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	const unsigned char want[] = {'"',  0,	  0xe9, 0x00, 0xac, 0x20,
				      0x3d, 0xd8, 0x00, 0xde, '"',  0};

	ck_assert_int_eq(pv_ldap_unicodepwd(&b, pw, strlen(pw)), 0);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert_int_eq(memcmp(b.data, want, sizeof(want)), 0);
	pv_buf_release(&b, 1);
}
END_TEST

START_TEST(test_unicodepwd_invalid)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_ldap_unicodepwd(&b, "\xc3", 1), -2); /* truncated */
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_ldap_unicodepwd(&b, "\xc0\xaf", 2), -2); /* overlong '/' */
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_ldap_unicodepwd(&b, "\xed\xa0\x80", 3), -2); /* surrogate */
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_ldap_unicodepwd(&b, "\xff", 1), -2);
	pv_buf_release(&b, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ldap");
	TCase *tc = tcase_create("encode");

	tcase_add_test(tc, test_dn_escape);
	tcase_add_test(tc, test_range);
	tcase_add_test(tc, test_filter_escape);
	tcase_add_test(tc, test_unicodepwd_ascii);
	tcase_add_test(tc, test_unicodepwd_non_ascii);
	tcase_add_test(tc, test_unicodepwd_invalid);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
