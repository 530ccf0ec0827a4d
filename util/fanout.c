/* util/fanout.c: the fan-out (util/fanout.h): worker threads that take items one at a time
 * until none are left, and the outcome of all of them said once. */
#include "util/fanout.h"

#include "util/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FANOUT_MAX 16 /* default concurrency */

struct fanout {
	size_t n;
	size_t next; /* next host to take, under lock */
	pthread_mutex_t lock;
	pv_fanout_fn fn;
	void *ctx;
	struct pv_fanout_result *results;
};

/* A worker takes hosts one at a time until none are left. The error message is
 * thread-local, so it is cleared before and copied right after each call. */
static void *worker(void *arg)
{
	struct fanout *fo = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&fo->lock);
		i = fo->next < fo->n ? fo->next++ : fo->n;
		pthread_mutex_unlock(&fo->lock);
		if (i == fo->n)
			break;
		pv_error_clear();
		fo->results[i].code = fo->fn(i, fo->ctx);
		snprintf(fo->results[i].msg, sizeof(fo->results[i].msg), "%s", pv_errmsg());
	}
	return NULL;
}

int pv_fanout_run(size_t n, int max_parallel, pv_fanout_fn fn, void *ctx,
		  struct pv_fanout_result *results)
{
	struct fanout fo;
	pthread_t *tids = NULL;
	size_t nthreads, started = 0, failed = 0, first = n;
	int r = PV_EBUG;

	if (n == 0)
		return PV_OK;
	memset(&fo, 0, sizeof(fo));
	fo.n = n;
	fo.fn = fn;
	fo.ctx = ctx;
	fo.results = results;
	pthread_mutex_init(&fo.lock, NULL);
	for (size_t i = 0; i < n; i++) {
		results[i].code = PV_EBUG;
		results[i].msg[0] = '\0';
	}
	nthreads = max_parallel > 0 ? (size_t)max_parallel : FANOUT_MAX;
	if (nthreads > n)
		nthreads = n;
	if ((tids = calloc(nthreads, sizeof(*tids))) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (; started < nthreads; started++)
		if (pthread_create(&tids[started], NULL, worker, &fo) != 0)
			break;
	if (started == 0)
		worker(&fo); /* no threads to be had: do the work here, one host at a time */
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);

	for (size_t i = 0; i < n; i++) {
		if (results[i].code == PV_OK)
			continue;
		failed++;
		if (first == n)
			first = i;
	}
	if (failed == 0) {
		r = PV_OK;
	} else if (failed < n) {
		r = pv_error(PV_EPARTIAL, "%zu of %zu hosts failed, first: %s", failed, n,
			     results[first].msg);
	} else {
		/* every host failed: pass on the first failure's code */
		if (n == 1)
			r = pv_error(results[first].code, "%s", results[first].msg);
		else
			r = pv_error(results[first].code, "all %zu hosts failed, first: %s", n,
				     results[first].msg);
	}
out:
	free(tids);
	pthread_mutex_destroy(&fo.lock);
	return r;
}
