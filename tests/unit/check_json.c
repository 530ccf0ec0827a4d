/* tests/unit/check_json.c: json/ as the rest of the tree uses it: building a line and reading
 * back objects, integers, numbers, strings and arrays. */
#include <check.h>

#include "tests/unit/unit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json/json.h"

START_TEST(compact_round_trip)
{
	struct pv_json *o = pv_json_object(), *a = pv_json_array(), *back;
	const struct pv_json *arr;
	char *text, err[160];
	long long v;
	double d;

	pv_json_int(o, "n", 42);
	pv_json_real(o, "x", 0.0071);
	pv_json_real(o, "bad", NAN);
	pv_json_str(o, "s", "caf\xc3\xa9");
	pv_json_append_int(a, 7);
	pv_json_append_int(a, -1);
	pv_json_set(o, "a", a);
	text = pv_json_compact(o);
	ck_assert_ptr_nonnull(text);
	/* one line, ASCII, no newline */
	ck_assert_str_eq(text,
			 "{\"n\":42,\"x\":0.0071,\"bad\":null,\"s\":\"caf\\u00E9\",\"a\":[7,-1]}");
	back = pv_json_parse(text, strlen(text), err, sizeof(err));
	ck_assert_ptr_nonnull(back);
	ck_assert(pv_json_integer(pv_json_get(back, "n"), &v) && v == 42);
	ck_assert(pv_json_number(pv_json_get(back, "n"), &d) && d == 42);
	ck_assert(pv_json_number(pv_json_get(back, "x"), &d) && d == 0.0071);
	v = 5;
	ck_assert(!pv_json_integer(pv_json_get(back, "x"), &v) && v == 5); /* a real is not */
	ck_assert(!pv_json_number(pv_json_get(back, "bad"), &d));
	ck_assert(!pv_json_number(pv_json_get(back, "s"), &d));
	ck_assert(!pv_json_integer(NULL, &v));
	arr = pv_json_get(back, "a");
	ck_assert(pv_json_is_array(arr) && !pv_json_is_array(back));
	ck_assert_uint_eq(pv_json_size(arr), 2);
	ck_assert_uint_eq(pv_json_size(back), 0); /* not an array */
	ck_assert(pv_json_integer(pv_json_at(arr, 1), &v) && v == -1);
	ck_assert_ptr_null(pv_json_at(arr, 2));
	ck_assert_ptr_null(pv_json_at(back, 0));
	ck_assert_str_eq(pv_json_text(pv_json_get(back, "s")), "caf\xc3\xa9");
	ck_assert_ptr_null(pv_json_compact(NULL));
	free(text);
	pv_json_free(back);
	pv_json_free(o);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, compact_round_trip);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
