/* tests/unit/unit.h: what every Check suite's main does: run the suite, report, and turn the
 * failure count into the exit status; and bytes as hex, for comparing with published vectors. */
#ifndef PV_TESTS_UNIT_H
#define PV_TESTS_UNIT_H

#include <check.h>
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

#endif
