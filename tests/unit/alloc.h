/* tests/unit/alloc.h: allocation failures on demand. Every unit binary is linked with
 * -Wl,--wrap=realloc and tests/unit/alloc.c, so a test can make the n-th realloc() from now
 * fail (pv_buf grows with realloc) and see what the code under test does then. */
#ifndef PV_TESTS_UNIT_ALLOC_H
#define PV_TESTS_UNIT_ALLOC_H

/* Make the n-th realloc() from now (1 = the next one) and every later one fail, until
 * pv_test_alloc_ok(). */
void pv_test_alloc_fail_at(long n);
void pv_test_alloc_ok(void);
/* reallocs seen since the last pv_test_alloc_fail_at / pv_test_alloc_ok */
long pv_test_alloc_count(void);
/* reallocs made to fail since the last pv_test_alloc_fail_at; pv_test_alloc_ok keeps it, so
 * a test can restore allocation first and then ask whether its failure point was reached (0:
 * the code under test never asked for that allocation, so it had all the memory it wanted). */
long pv_test_alloc_refused(void);

#endif
