/* tests/unit/alloc.c: the realloc() wrapper behind alloc.h. */
#include "tests/unit/alloc.h"

#include <stddef.h>

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

static long fail_at = -1, count, refused;

void pv_test_alloc_fail_at(long n)
{
	fail_at = n;
	count = 0;
	refused = 0;
}

void pv_test_alloc_ok(void)
{
	fail_at = -1;
	count = 0;
}

long pv_test_alloc_count(void)
{
	return count;
}

long pv_test_alloc_refused(void)
{
	return refused;
}

void *__wrap_realloc(void *p, size_t n)
{
	if (++count >= fail_at && fail_at > 0) {
		refused++;
		return NULL;
	}
	return __real_realloc(p, n);
}
