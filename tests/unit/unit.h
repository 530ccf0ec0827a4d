/* tests/unit/unit.h: what every Check suite's main does: run the suite, report, and turn the
 * failure count into the exit status; and bytes as hex, for comparing with published vectors. */
#ifndef PV_TESTS_UNIT_H
#define PV_TESTS_UNIT_H

#include <check.h>
#include <ctype.h>
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

#endif
