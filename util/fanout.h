/* util/fanout.h: one job per item (a host each, mostly) on a few threads at once: the
 * phases' and run's work over many hosts. */
#ifndef PV_UTIL_FANOUT_H
#define PV_UTIL_FANOUT_H

#include <stddef.h>

/* Call fn(i, ctx) for each i < n, at most max_parallel at a time (threads; 0: 16). fn records
 * errors with pv_error (thread-local; the message names the host) and returns a code; the
 * fan-out stores code and a copy of the message per item in results[i] (caller allocates n
 * entries). Returns PV_OK if all succeeded, PV_EPARTIAL if some failed and some succeeded,
 * else the first failure's code. Without threads to be had, the items run here, one after
 * another. */
struct pv_fanout_result {
	int code;
	char msg[1024];
};
typedef int (*pv_fanout_fn)(size_t index, void *ctx);
int pv_fanout_run(size_t n, int max_parallel, pv_fanout_fn fn, void *ctx,
		  struct pv_fanout_result *results);

#endif
