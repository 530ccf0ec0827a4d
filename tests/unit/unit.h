/* tests/unit/unit.h: what every Check suite's main does: run the suite, report, and turn the
 * failure count into the exit status; bytes as hex, for comparing with published vectors; and
 * the files of a fuzz target's corpus, for the suites that replay one. */
#ifndef PV_TESTS_UNIT_H
#define PV_TESTS_UNIT_H

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline int pv_unit_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* The first 500 bytes of p as lower-case hex, in a buffer the next call overwrites. */
static inline const char *pv_unit_hex(const uint8_t *p, size_t n)
{
	static char s[1024];

	for (size_t i = 0; i < n && i < 500; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	s[2 * (n < 500 ? n : 500)] = 0;
	return s;
}

/* hex (upper or lower case, no separators) into out, at most cap bytes; the byte count, or
 * 0 when hex is odd, holds a non-hex character, or does not fit. For vectors copied from
 * documents as hex. */
static inline size_t pv_unit_unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; hex[0] && hex[1]; hex += 2) {
		unsigned v;

		if (n == cap || sscanf(hex, "%2x", &v) != 1 || !isxdigit((unsigned char)hex[0]) ||
		    !isxdigit((unsigned char)hex[1]))
			return 0;
		out[n++] = (uint8_t)v;
	}
	return *hex ? 0 : n;
}

/* Every file of dir (dot files apart), its first max bytes, to fn with its name: how many;
 * -1 when dir cannot be opened. */
static inline int
pv_unit_inputs(const char *dir, size_t max,
	       void (*fn)(void *arg, const char *name, const uint8_t *data, size_t len), void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int files = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[512];
		uint8_t *data;
		FILE *fp;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || !(fp = fopen(path, "rb")))
			continue;
		ck_assert_ptr_nonnull(data = malloc(max ? max : 1));
		fn(arg, e->d_name, data, fread(data, 1, max, fp));
		fclose(fp);
		free(data);
		files++;
	}
	closedir(d);
	return files;
}

#endif
