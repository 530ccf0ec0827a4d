/* provision/progress.c: progress of long work. On a terminal (foreground, not -q, no
 * --no-progress) a live line with count, rate and ETA, redrawn at most 10 times a second;
 * otherwise a plain line every 10 seconds, so logs show that work goes on. --no-progress
 * (and -q) silence both. */
#include "provision/provision.h"

#include <stdio.h>
#include <time.h>

double pv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pv_progress_start(struct pv_progress *p, const struct pv_ctx *ctx, const char *what,
		       const char *unit, unsigned long total)
{
	p->live = ctx->progress;
	p->quiet = ctx->cli.verbosity < 0 || ctx->cli.opt[OPT_NO_PROGRESS] != NULL;
	p->what = what;
	p->unit = unit;
	p->total = total;
	p->done = 0;
	p->start = p->last = pv_now();
	p->drawn = false;
}

static void draw(struct pv_progress *p, double now)
{
	double el = now - p->start, rate = el > 0 ? (double)p->done / el : 0;
	unsigned pct = p->total ? (unsigned)(100.0 * (double)p->done / (double)p->total) : 100;
	long eta = rate > 0 ? (long)((double)(p->total - p->done) / rate) : -1;
	char etas[32] = "--:--";

	if (eta >= 0)
		snprintf(etas, sizeof(etas), "%ld:%02ld", eta / 60, eta % 60);
	if (p->live)
		fprintf(stderr, "\r\033[K%s: %lu/%lu %s %3u%% %.1f/s ETA %s", p->what, p->done, p->total,
			p->unit, pct, rate, etas);
	else
		fprintf(stderr, "provision: %s: %lu/%lu %s (%u%%, %.1f/s, ETA %s)\n", p->what, p->done,
			p->total, p->unit, pct, rate, etas);
	p->drawn = true;
}

void pv_progress_update(struct pv_progress *p, unsigned long done)
{
	double now;

	p->done = done;
	if (p->quiet)
		return;
	now = pv_now();
	if (now - p->last < (p->live ? 0.1 : 10.0))
		return;
	p->last = now;
	draw(p, now);
}

/* Work done in one request, whose progress cannot be seen: the same line with the time spent
 * instead of a count (the total is what the request covers). */
void pv_progress_tick(struct pv_progress *p)
{
	double now;

	if (p->quiet)
		return;
	now = pv_now();
	if (now - p->last < (p->live ? 0.5 : 10.0))
		return;
	p->last = now;
	if (p->live)
		fprintf(stderr, "\r\033[K%s: %lu %s in one request, %.0f s", p->what, p->total, p->unit,
			now - p->start);
	else
		fprintf(stderr, "provision: %s: %lu %s in one request, %.0f s\n", p->what, p->total,
			p->unit, now - p->start);
	p->drawn = true;
}

void pv_progress_end(struct pv_progress *p)
{
	if (p->live && p->drawn && !p->quiet)
		fputs("\r\033[K", stderr);
}
