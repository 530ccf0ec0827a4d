/* results/hint.c: the bottleneck hint (see results.h): which resource was nearest its limit at
 * the first overloaded step, and what moved first on the way there. Only limits that are
 * known are judged (a CPU's 100%, the memory there is, the driver's one thread); the disks
 * and the network have no limit the run knows, so their levels are signals, not limits. A
 * scenario kind's p95 moved only when, with the clients' histograms, its interval is apart
 * from the first step's (a p95 of few scenarios jumps by chance). */
#include "results/results.h"
#include "results/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NEAR	  0.8	/* a resource at 80% of its limit or more is near it */
#define CPU_HIGH  80.0	/* percent: a CPU that high has moved */
#define IOWAIT	  20.0	/* percent of the CPU time waiting for the disk */
#define MEM_LOW	  0.10	/* available memory under 10% of the whole */
#define SLOWER	  2.0	/* a p95 twice the first step's ... */
#define SLOWER_MS 0.010 /* ... and 10 ms more at least */

struct level {
	double u; /* the share of its limit used */
	char text[200];
};

static void consider(struct level *best, double u, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void consider(struct level *best, double u, const char *fmt, ...)
{
	va_list ap;

	if (isnan(u) || u <= best->u)
		return;
	best->u = u;
	va_start(ap, fmt);
	vsnprintf(best->text, sizeof(best->text), fmt, ap);
	va_end(ap);
}

static bool stat_of(const struct pv_res_watch *w, const char *name, double *mean, double *p95)
{
	double max;

	return w && pv_res_watch_stat(w, name, mean, p95, &max);
}

/* The resource nearest its limit in step st; false when nothing with a limit was measured. */
static bool nearest(const struct pv_res_step *st, struct level *best)
{
	double m, p, used, avail;

	best->u = -1;
	best->text[0] = '\0';
	if (stat_of(st->srv, "cpu", &m, &p))
		consider(best, m / 100,
			 "the server's CPU: %.0f%% of all its cores on average "
			 "(p95 %.0f%%)",
			 m, p);
	if (stat_of(st->srv, "mem_used", &used, &p) && stat_of(st->srv, "mem_avail", &avail, &p) &&
	    used + avail > 0)
		consider(best, used / (used + avail), "the server's memory: %.0f%% in use",
			 100 * used / (used + avail));
	if (stat_of(st->dc, "cpu", &m, &p))
		consider(best, m / 100,
			 "the DC's CPU: %.0f%% of all its cores on average (p95 %.0f%%)", m, p);
	for (size_t i = 0; i < st->nclients; i++) {
		const struct pv_res_client *c = &st->clients[i];

		consider(best, c->cpu_driver / 100,
			 "client %s's load driver: %.0f%% of the one core it runs on", c->name,
			 c->cpu_driver);
		consider(best, c->cpu_host / 100, "client %s's CPU: %.0f%% of all its cores",
			 c->name, c->cpu_host);
	}
	return best->u >= 0;
}

struct event {
	size_t step;
	char text[200];
};

struct events {
	struct event e[64];
	size_t n;
};

static void moved(struct events *ev, size_t step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void moved(struct events *ev, size_t step, const char *fmt, ...)
{
	va_list ap;

	if (ev->n == sizeof(ev->e) / sizeof(ev->e[0]))
		return;
	ev->e[ev->n].step = step;
	va_start(ap, fmt);
	vsnprintf(ev->e[ev->n].text, sizeof(ev->e[0].text), fmt, ap);
	va_end(ap);
	ev->n++;
}

/* Each signal's first move over steps 0..last. */
static void first_moves(const struct pv_res_run *run, size_t last, struct events *ev)
{
	const struct pv_res_step *s0 = &run->steps[0];
	bool done[PV_LOAD_KINDS + 8] = {false};
	double m, p, base_inflight = NAN;

	if (stat_of(s0->srv, "inflight", &m, &p))
		base_inflight = p;
	for (size_t i = 0; i <= last; i++) {
		const struct pv_res_step *st = &run->steps[i];
		double used, avail;

		for (int k = 0; k < PV_LOAD_KINDS && st->has_load; k++) {
			double base = s0->kind[k].p95, now = st->kind[k].p95,
			       limit = run->cfg.kind[k].limit;

			if (done[k] || !st->kind[k].completed || isnan(now))
				continue;
			/* with the histograms, a rise must be beyond the noise: the two p95s'
			 * intervals apart */
			if (i && st->kind[k].has_hist && s0->kind[k].has_hist) {
				double lo, hi, blo, bhi;

				pv_stat_hist_ci(&st->kind[k].hist, 0.95, 0.05, &lo, &hi);
				pv_stat_hist_ci(&s0->kind[k].hist, 0.95, 0.05, &blo, &bhi);
				if (!(lo > bhi))
					continue;
			}
			if (now > limit) {
				moved(ev, i, "%s's p95 went over its %g s limit (%.0f ms)",
				      pv_load_names[k], limit, 1000 * now);
				done[k] = true;
			} else if (i && !isnan(base) && now > SLOWER * base &&
				   now > base + SLOWER_MS) {
				moved(ev, i, "%s's p95 rose from %.0f ms to %.0f ms",
				      pv_load_names[k], 1000 * base, 1000 * now);
				done[k] = true;
			}
		}
		if (!done[PV_LOAD_KINDS] && stat_of(st->srv, "cpu", &m, &p) && m >= CPU_HIGH) {
			moved(ev, i, "the server's CPU reached %.0f%%", m);
			done[PV_LOAD_KINDS] = true;
		}
		if (!done[PV_LOAD_KINDS + 1] && stat_of(st->srv, "iowait", &m, &p) && m >= IOWAIT) {
			moved(ev, i, "the server's iowait reached %.0f%% (the disk)", m);
			done[PV_LOAD_KINDS + 1] = true;
		}
		if (!done[PV_LOAD_KINDS + 2] && !isnan(base_inflight) &&
		    stat_of(st->srv, "inflight", &m, &p) && p >= 2 && p >= 2 * base_inflight) {
			moved(ev, i, "the server's I/O in flight rose from %.0f to %.0f (p95)",
			      base_inflight, p);
			done[PV_LOAD_KINDS + 2] = true;
		}
		if (!done[PV_LOAD_KINDS + 3] && stat_of(st->srv, "mem_used", &used, &p) &&
		    stat_of(st->srv, "mem_avail", &avail, &p) && used + avail > 0 &&
		    avail / (used + avail) < MEM_LOW) {
			moved(ev, i, "the server's available memory fell to %.0f MiB", avail);
			done[PV_LOAD_KINDS + 3] = true;
		}
		if (!done[PV_LOAD_KINDS + 4] && stat_of(st->dc, "cpu", &m, &p) && m >= CPU_HIGH) {
			moved(ev, i, "the DC's CPU reached %.0f%%", m);
			done[PV_LOAD_KINDS + 4] = true;
		}
		for (size_t c = 0; c < st->nclients && !done[PV_LOAD_KINDS + 5]; c++)
			if (st->clients[c].cpu_driver >= CPU_HIGH) {
				moved(ev, i, "client %s's load driver reached %.0f%% of its core",
				      st->clients[c].name, st->clients[c].cpu_driver);
				done[PV_LOAD_KINDS + 5] = true;
			}
	}
}

static size_t addf(char *out, size_t cap, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t addf(char *out, size_t cap, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (at >= cap)
		return at;
	va_start(ap, fmt);
	n = vsnprintf(out + at, cap - at, fmt, ap);
	va_end(ap);
	return n < 0 ? at : at + (size_t)n;
}

void pv_res_hint(const struct pv_res_run *run, struct pv_res_hint *out)
{
	const struct pv_res_step *st;
	struct level best;
	struct events ev;
	size_t at = 0, first = (size_t)-1;
	bool any_load = false, watched = false;

	memset(out, 0, sizeof(*out));
	out->step = -1;
	memset(&ev, 0, sizeof(ev));
	for (size_t i = 0; i < run->nsteps; i++) {
		any_load |= run->steps[i].has_load;
		watched |= run->steps[i].srv != NULL;
		if (out->step < 0 && run->steps[i].has_load && !run->steps[i].carried)
			out->step = (long)i;
	}
	if (!run->nsteps) {
		snprintf(out->nearest, sizeof(out->nearest), "No step ran: nothing to tell.");
		return;
	}
	if (!any_load) {
		/* command and fsct: no overload known; the highest level is still a fact */
		size_t top = 0;
		double topu = -1;

		for (size_t i = 0; i < run->nsteps; i++)
			if (nearest(&run->steps[i], &best) && best.u > topu) {
				topu = best.u;
				top = i;
			}
		if (topu < 0)
			snprintf(out->nearest, sizeof(out->nearest),
				 "Driver '%s' measures no overload, and no resource was watched: "
				 "the data cannot tell where a limit was.",
				 run->driver);
		else {
			nearest(&run->steps[top], &best);
			snprintf(out->nearest, sizeof(out->nearest),
				 "Driver '%s' measures no overload, so no step is known to be "
				 "overloaded. The highest level measured: %s, at %u users (step "
				 "%u).",
				 run->driver, best.text, run->steps[top].users, run->steps[top].n);
		}
		return;
	}
	st = out->step >= 0 ? &run->steps[out->step] : &run->steps[run->nsteps - 1];
	if (out->step < 0)
		at = addf(out->nearest, sizeof(out->nearest), at,
			  "No step was overloaded: the ramp stayed under the server's limit. ");
	else
		at = addf(out->nearest, sizeof(out->nearest), at,
			  "The first step that did not count is %u users (step %u: overload "
			  "%.2f%%%s). ",
			  st->users, st->n, st->all.overload,
			  st->all.errors || st->not_connected || st->clients_lost
				  ? ", with errors or users not connected"
				  : "");
	if (!nearest(st, &best))
		addf(out->nearest, sizeof(out->nearest), at,
		     "%s: which resource was nearest its limit cannot be told.",
		     watched ? "Nothing with a known limit was measured in that step"
			     : "The server was not watched in this run");
	else if (best.u >= NEAR)
		addf(out->nearest, sizeof(out->nearest), at,
		     "%s, the resource nearest its limit, was at %.0f%% of it: %s.",
		     out->step >= 0 ? "There" : "At the last step", 100 * best.u, best.text);
	else
		addf(out->nearest, sizeof(out->nearest), at,
		     "No measured resource was near its limit %s (the highest: %s): the limit "
		     "lies in something not measured here (the disk, the network, locks, one "
		     "busy smbd process).",
		     out->step >= 0 ? "there" : "at the last step", best.text);
	first_moves(run, out->step >= 0 ? (size_t)out->step : run->nsteps - 1, &ev);
	for (size_t i = 0; i < ev.n; i++)
		if (ev.e[i].step < first)
			first = ev.e[i].step;
	at = 0;
	if (!ev.n) {
		addf(out->first, sizeof(out->first), at, "Nothing measured moved before %s.",
		     out->step >= 0 ? "the overload" : "the end of the ramp");
		return;
	}
	at = addf(out->first, sizeof(out->first), at,
		  "What moved first, at %u users (step %u): ", run->steps[first].users,
		  run->steps[first].n);
	for (size_t i = 0, k = 0; i < ev.n; i++)
		if (ev.e[i].step == first)
			at = addf(out->first, sizeof(out->first), at, "%s%s", k++ ? "; " : "",
				  ev.e[i].text);
	at = addf(out->first, sizeof(out->first), at, ".");
	/* then the next moves, a sentence per step */
	for (size_t s = first + 1, k = 0; s < run->nsteps && k < 3; s++) {
		size_t here = 0;

		for (size_t i = 0; i < ev.n && k < 3; i++) {
			if (ev.e[i].step != s)
				continue;
			if (!here++)
				at = addf(out->first, sizeof(out->first), at,
					  " Then at %u users: %s", run->steps[s].users,
					  ev.e[i].text);
			else
				at = addf(out->first, sizeof(out->first), at, "; %s", ev.e[i].text);
			k++;
		}
		if (here)
			at = addf(out->first, sizeof(out->first), at, ".");
	}
}
