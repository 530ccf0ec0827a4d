/* tests/unit/unit.h: what every Check suite's main does: run the suite, report, and turn the
 * failure count into the exit status. */
#ifndef PV_TESTS_UNIT_H
#define PV_TESTS_UNIT_H

#include <check.h>
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

#endif
