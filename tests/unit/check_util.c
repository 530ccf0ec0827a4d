/* tests/unit/check_util.c: util/ (errors, buffers, secrets). */
#include <check.h>

#include "tests/unit/unit.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/secret.h"
#include "util/strset.h"
#include "util/utf16.h"

static char tmpdir[] = "/tmp/pv-unit-XXXXXX";

static const char *write_tmp(const char *name, const void *data, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

START_TEST(test_error_record)
{
	ck_assert_int_eq(pv_error(PV_ECRED, "bad %s", "password"), PV_ECRED);
	ck_assert_str_eq(pv_errmsg(), "bad password");
	ck_assert_int_eq(pv_error_prefix(PV_EDIR, "bind to '%s'", "dc"), PV_EDIR);
	ck_assert_str_eq(pv_errmsg(), "bind to 'dc': bad password");
	pv_error_clear();
	ck_assert_str_eq(pv_errmsg(), "");
	ck_assert_int_eq(pv_error_prefix(PV_EDIR, "alone"), PV_EDIR);
	ck_assert_str_eq(pv_errmsg(), "alone");
	/* the message itself as an argument (wrapping the last error) */
	pv_error(PV_EREMOTE, "disk full");
	ck_assert_int_eq(pv_error(PV_EREMOTE, "on 'srv': %s (%d)", pv_errmsg(), 28), PV_EREMOTE);
	ck_assert_str_eq(pv_errmsg(), "on 'srv': disk full (28)");
}
END_TEST

START_TEST(test_error_truncates)
{
	char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pv_error(PV_EIO, "%s", big);
	ck_assert_uint_eq(strlen(pv_errmsg()), 1023);
	pv_error_prefix(PV_EIO, "ctx");
	ck_assert_uint_eq(strlen(pv_errmsg()), 1023);
	ck_assert(strncmp(pv_errmsg(), "ctx: xxx", 8) == 0);
}
END_TEST

START_TEST(test_status_names)
{
	ck_assert_str_eq(pv_status_name(PV_OK), "ok");
	ck_assert_str_eq(pv_status_name(PV_EUNREACH), "unreachable");
	ck_assert_str_eq(pv_status_name(PV_ETRUST), "trust");
	ck_assert_str_eq(pv_status_name(12345), "unknown");
	/* every code has a distinct name */
	int codes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 70 };
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		for (size_t j = i + 1; j < sizeof(codes) / sizeof(codes[0]); j++)
			ck_assert_str_ne(pv_status_name(codes[i]), pv_status_name(codes[j]));
}
END_TEST

START_TEST(test_buf)
{
	struct pv_buf b = PV_BUF_INIT;
	char *s;

	ck_assert_int_eq(pv_buf_addstr(&b, "abc"), 0);
	ck_assert_int_eq(pv_buf_addf(&b, "-%d-", 42), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(pv_buf_add(&b, "z", 1), 0);
	ck_assert_uint_eq(b.len, 3 + 4 + 1000);
	ck_assert(strncmp(b.data, "abc-42-zz", 9) == 0);
	ck_assert_int_eq(b.data[b.len], '\0');
	pv_buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	pv_buf_addstr(&b, "kept");
	s = pv_buf_detach(&b);
	ck_assert_str_eq(s, "kept");
	ck_assert_ptr_null(b.data);
	free(s);
	s = pv_buf_detach(&b); /* empty buffer still gives a string */
	ck_assert_str_eq(s, "");
	free(s);
	pv_buf_addstr(&b, "secret");
	pv_buf_release(&b, 1);
	ck_assert_ptr_null(b.data);
}
END_TEST

START_TEST(test_secret_file_newline)
{
	struct pv_secret *s = NULL;

	ck_assert_int_eq(pv_secret_from_file(write_tmp("a", "pw\n", 3), &s), PV_OK);
	ck_assert_str_eq(s->data, "pw");
	ck_assert_uint_eq(s->len, 2);
	pv_secret_free(s);
	ck_assert_int_eq(pv_secret_from_file(write_tmp("b", "pw", 2), &s), PV_OK);
	ck_assert_str_eq(s->data, "pw");
	pv_secret_free(s);
	ck_assert_int_eq(pv_secret_from_file(write_tmp("c", "pw\r\n", 4), &s), PV_OK);
	ck_assert_str_eq(s->data, "pw");
	pv_secret_free(s);
	/* only ONE trailing newline is dropped: the rest is part of the secret */
	ck_assert_int_eq(pv_secret_from_file(write_tmp("d", "pw\n\n", 4), &s), PV_OK);
	ck_assert_str_eq(s->data, "pw\n");
	pv_secret_free(s);
	ck_assert_int_eq(pv_secret_from_file(write_tmp("e", " sp ace \n", 9), &s), PV_OK);
	ck_assert_str_eq(s->data, " sp ace ");
	pv_secret_free(s);
}
END_TEST

START_TEST(test_secret_file_errors)
{
	struct pv_secret *s = NULL;
	char path[300];

	ck_assert_int_eq(pv_secret_from_file(write_tmp("empty", "\n", 1), &s), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "is empty"));
	ck_assert_int_eq(pv_secret_from_file(write_tmp("nul", "a\0b", 3), &s), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "NUL"));
	snprintf(path, sizeof(path), "%s/none", tmpdir);
	ck_assert_int_eq(pv_secret_from_file(path, &s), PV_EIO);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "cannot open secret file"));
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_secret_env)
{
	struct pv_secret *s = NULL;

	setenv("PV_TEST_SECRET", "envpw", 1);
	ck_assert_int_eq(pv_secret_from_env("PV_TEST_SECRET", &s), PV_OK);
	ck_assert_str_eq(s->data, "envpw");
	pv_secret_free(s);
	unsetenv("PV_TEST_SECRET");
	ck_assert_int_eq(pv_secret_from_env("PV_TEST_SECRET", &s), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "PV_TEST_SECRET"));
	pv_secret_free(NULL);
}
END_TEST

START_TEST(test_secret_fd_first_line)
{
	struct pv_secret *s = NULL;
	int p[2];
	char rest[16] = { 0 };

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "line1\nline2\n", 12), 12);
	close(p[1]);
	ck_assert_int_eq(pv_secret_from_fd(p[0], "stdin", &s), PV_OK);
	ck_assert_str_eq(s->data, "line1");
	/* only the first line was consumed */
	ck_assert_int_eq(read(p[0], rest, sizeof(rest) - 1), 6);
	ck_assert_str_eq(rest, "line2\n");
	close(p[0]);
	pv_secret_free(s);
}
END_TEST

START_TEST(test_strset)
{
	struct pv_strset *s = pv_strset_new();
	char name[32];

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pv_strset_add(s, "cli1-u1"), 1);
	ck_assert_int_eq(pv_strset_add(s, "CLI1-U1"), 0); /* AD compares names case-insensitively */
	ck_assert(pv_strset_has(s, "Cli1-u1"));
	ck_assert(!pv_strset_has(s, "cli1-u2"));
	for (int i = 0; i < 5000; i++) { /* forces several grows */
		snprintf(name, sizeof(name), "u%d", i);
		ck_assert_int_eq(pv_strset_add(s, name), 1);
	}
	ck_assert_uint_eq(pv_strset_count(s), 5001);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "U%d", i);
		ck_assert(pv_strset_has(s, name));
	}
	ck_assert(!pv_strset_has(s, "u5000"));
	pv_strset_free(s);
	pv_strset_free(NULL);
}
END_TEST

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6);
}

START_TEST(test_utf16le)
{
	struct pv_buf b = PV_BUF_INIT;
	char out[16];

	/* ASCII (upper-cased on request), 2-byte, and a non-BMP character as a surrogate pair */
	ck_assert_int_eq(pv_utf16le(&b, "a\xc3\xa9\xf0\x9f\x98\x80", 7, 1), 0);
	ck_assert_uint_eq(b.len, 8);
	ck_assert_mem_eq(b.data, "A\0\xe9\0\x3d\xd8\x00\xde", 8);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)b.data, b.len, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "A\xc3\xa9\xf0\x9f\x98\x80");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_utf16le(&b, "", 0, 0), 0);
	ck_assert_ptr_nonnull(b.data);
	/* cut short, a bad continuation, overlong, a surrogate, beyond U+10FFFF */
	ck_assert_int_eq(pv_utf16le(&b, "\xc3", 1, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xc3\x41", 2, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xc0\xaf", 2, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xed\xa0\x80", 3, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xf4\x90\x80\x80", 4, 0), -2);
	/* back: odd length, lone surrogates, no room */
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a", 1, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"\x00\xd8\x41\x00", 4, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"\x00\xdc", 2, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a\0b\0", 4, out, 2), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a\0b\0", 4, out, 3), 0);
	ck_assert_str_eq(out, "ab");
	pv_buf_release(&b, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_error_record);
	tcase_add_test(tc, test_error_truncates);
	tcase_add_test(tc, test_status_names);
	tcase_add_test(tc, test_buf);
	tcase_add_test(tc, test_secret_file_newline);
	tcase_add_test(tc, test_secret_file_errors);
	tcase_add_test(tc, test_secret_env);
	tcase_add_test(tc, test_secret_fd_first_line);
	tcase_add_test(tc, test_strset);
	tcase_add_test(tc, test_utf16le);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
