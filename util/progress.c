/* util/progress.c: progress state, forwarded to the sink provision/ installed. */
#include "util/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pv_progress_sink sink;
static void *sink_ctx;

double pv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pv_progress_set_sink(pv_progress_sink s, void *ctx)
{
	sink = s;
	sink_ctx = ctx;
}

void pv_progress_start(struct pv_progress *p, const char *what, const char *unit,
		       unsigned long total)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->start = p->last = pv_now();
}

void pv_progress_update(struct pv_progress *p, unsigned long done)
{
	p->done = done;
	if (sink)
		sink(p, PV_PROGRESS_UPDATE, sink_ctx);
}

void pv_progress_bytes(struct pv_progress *p, unsigned long done, unsigned long long bytes)
{
	p->bytes = bytes;
	pv_progress_update(p, done);
}

void pv_progress_tick(struct pv_progress *p)
{
	p->one_request = true;
	if (sink)
		sink(p, PV_PROGRESS_UPDATE, sink_ctx);
}

void pv_progress_detail(struct pv_progress *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
	if (sink)
		sink(p, PV_PROGRESS_UPDATE, sink_ctx);
}

void pv_progress_end(struct pv_progress *p)
{
	if (sink)
		sink(p, PV_PROGRESS_END, sink_ctx);
}
