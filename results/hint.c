/* results/hint.c: the bottleneck hint (see results.h): which resource was nearest its limit at
 * the first overloaded step, and what moved first on the way there. Only limits that are
 * known are judged (a CPU's 100%, the memory there is, the driver's one thread); the disks
 * and the network have no limit the run knows, so their levels are signals, not limits. A
 * scenario kind's p95 moved only when, with the clients' histograms, its interval is apart
 * from the first step's (a p95 of few scenarios jumps by chance).
 *
 * The step looked at is the first over the answer (load.json's answer.first_over). When the
 * clients were the limit there (client-bound), the hint says so, names the client and its
 * loop's CPU and lag, and judges nothing of the server; when logons failed there, it says how
 * many, their p95 and the DC's CPU. Steps are taken users rising (--refine's among the
 * ramp's). */
#include "results/results.h"
#include "util/stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

static bool stat_of(const struct pv_results_watch *w, const char *name, double *mean, double *p95)
{
	double max;

	return w && pv_results_watch_stat(w, name, mean, p95, &max);
}

/* The DC's mean CPU in step st, and its p95: from its watch, else from load.json's figure
 * (p95 NAN then); false when the DC was not watched. */
static bool dc_cpu(const struct pv_results_step *st, double *mean, double *p95)
{
	if (stat_of(st->dc, "cpu", mean, p95))
		return true;
	*mean = st->load.dc_cpu;
	*p95 = NAN;
	return !isnan(st->load.dc_cpu);
}

/* The resource nearest its limit in step st; false when nothing with a limit was measured.
 * With clients false, the server's and the DC's only. */
static bool nearest(const struct pv_results_step *st, bool clients, struct level *best)
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
	if (dc_cpu(st, &m, &p)) {
		if (isnan(p))
			consider(best, m / 100, "the DC's CPU: %.0f%% of all its cores on average",
				 m);
		else
			consider(best, m / 100,
				 "the DC's CPU: %.0f%% of all its cores on average (p95 %.0f%%)", m,
				 p);
	}
	for (size_t i = 0; clients && i < st->load.nclients; i++) {
		const struct pv_load_client *c = &st->load.clients[i];

		consider(best, pv_load_loop_cpu(c) / 100,
			 "client %s's load driver: its busiest loop at %.0f%% of the one core it "
			 "runs on",
			 c->name, pv_load_loop_cpu(c));
		consider(best, c->host_cpu / 100, "client %s's CPU: %.0f%% of all its cores",
			 c->name, c->host_cpu);
	}
	return best->u >= 0;
}

struct event {
	size_t rank; /* the step's place, users rising */
	char text[200];
};

struct events {
	struct event e[64];
	size_t n;
};

static void moved(struct events *ev, size_t rank, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void moved(struct events *ev, size_t rank, const char *fmt, ...)
{
	va_list ap;

	if (ev->n == sizeof(ev->e) / sizeof(ev->e[0]))
		return;
	ev->e[ev->n].rank = rank;
	va_start(ap, fmt);
	vsnprintf(ev->e[ev->n].text, sizeof(ev->e[0].text), fmt, ap);
	va_end(ap);
	ev->n++;
}

enum {
	EV_CPU = PV_PLAYBOOK_WORKLOAD_KINDS,
	EV_IOWAIT,
	EV_INFLIGHT,
	EV_MEM,
	EV_DC,
	EV_CLIENT,
	EV_LOGON_SLOW,
	EV_LOGON_FAILED,
	EV_N
};

/* The logon p95 of step st moved from base's: twice it and 10 ms more. */
static bool logon_slower(const struct pv_results_step *base, const struct pv_results_step *st)
{
	double b = base->load.logon.p95, now = st->load.logon.p95;

	return base->has_logon && st->has_logon && !isnan(b) && !isnan(now) && now > SLOWER * b &&
	       now > b + SLOWER_MS;
}

/* Each signal's first move over the steps ord[0..last], users rising. */
static void first_moves(const struct pv_results_run *run, const size_t *ord, size_t last,
			struct events *ev)
{
	const struct pv_results_step *s0 = &run->steps[ord[0]];
	bool done[EV_N] = {false};
	double m, p, base_inflight = NAN;

	if (stat_of(s0->srv, "inflight", &m, &p))
		base_inflight = p;
	for (size_t i = 0; i <= last; i++) {
		const struct pv_results_step *st = &run->steps[ord[i]];
		double used, avail;

		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS && st->has_load; k++) {
			double base = s0->load.kind[k].lat.p95, now = st->load.kind[k].lat.p95,
			       limit = run->cfg.kind[k].limit;

			if (done[k] || !st->load.kind[k].lat.n || isnan(now))
				continue;
			/* with the histograms, a rise must be beyond the noise: the two p95s'
			 * intervals apart */
			if (i && st->has_hist && s0->has_hist) {
				double lo, hi, blo, bhi;

				pv_load_hist_ci(&st->load.kind[k].n.lat, 0.95, 0.05, &lo, &hi);
				pv_load_hist_ci(&s0->load.kind[k].n.lat, 0.95, 0.05, &blo, &bhi);
				if (!(lo > bhi))
					continue;
			}
			if (now > limit) {
				moved(ev, i, "%s's p95 went over its %g s limit (%.0f ms)",
				      pv_playbook_workload_names[k], limit, 1000 * now);
				done[k] = true;
			} else if (i && !isnan(base) && now > SLOWER * base &&
				   now > base + SLOWER_MS) {
				moved(ev, i, "%s's p95 rose from %.0f ms to %.0f ms",
				      pv_playbook_workload_names[k], 1000 * base, 1000 * now);
				done[k] = true;
			}
		}
		if (!done[EV_CPU] && stat_of(st->srv, "cpu", &m, &p) && m >= CPU_HIGH) {
			moved(ev, i, "the server's CPU reached %.0f%%", m);
			done[EV_CPU] = true;
		}
		if (!done[EV_IOWAIT] && stat_of(st->srv, "iowait", &m, &p) && m >= IOWAIT) {
			moved(ev, i, "the server's iowait reached %.0f%% (the disk)", m);
			done[EV_IOWAIT] = true;
		}
		if (!done[EV_INFLIGHT] && !isnan(base_inflight) &&
		    stat_of(st->srv, "inflight", &m, &p) && p >= 2 && p >= 2 * base_inflight) {
			moved(ev, i, "the server's I/O in flight rose from %.0f to %.0f (p95)",
			      base_inflight, p);
			done[EV_INFLIGHT] = true;
		}
		if (!done[EV_MEM] && stat_of(st->srv, "mem_used", &used, &p) &&
		    stat_of(st->srv, "mem_avail", &avail, &p) && used + avail > 0 &&
		    avail / (used + avail) < MEM_LOW) {
			moved(ev, i, "the server's available memory fell to %.0f MiB", avail);
			done[EV_MEM] = true;
		}
		if (!done[EV_DC] && dc_cpu(st, &m, &p) && m >= CPU_HIGH) {
			moved(ev, i, "the DC's CPU reached %.0f%%", m);
			done[EV_DC] = true;
		}
		if (!done[EV_LOGON_FAILED] && st->load.logon_n.failed) {
			moved(ev, i, "%llu of %u users could not log on",
			      (unsigned long long)st->load.logon_n.failed, st->users);
			done[EV_LOGON_FAILED] = true;
		}
		if (!done[EV_LOGON_SLOW] && i && logon_slower(s0, st)) {
			moved(ev, i, "the logon p95 rose from %.0f ms to %.0f ms",
			      1000 * s0->load.logon.p95, 1000 * st->load.logon.p95);
			done[EV_LOGON_SLOW] = true;
		}
		for (size_t c = 0; c < st->load.nclients && !done[EV_CLIENT]; c++) {
			const struct pv_load_client *cl = &st->load.clients[c];

			if (cl->bound)
				moved(ev, i,
				      "client %s was the limit (its busiest loop at %.0f%% of a "
				      "core, "
				      "loop lag p95 %.0f ms: client-bound)",
				      cl->name, pv_load_loop_cpu(cl), cl->lag_p95);
			else if (pv_load_loop_cpu(cl) >= CPU_HIGH)
				moved(ev, i, "client %s's load driver reached %.0f%% of its core",
				      cl->name, pv_load_loop_cpu(cl));
			else
				continue;
			done[EV_CLIENT] = true;
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

/* The clients were the limit at st: which, how, and what that leaves known of the server. */
static size_t client_bound_text(const struct pv_results_run *run, const struct pv_results_step *st,
				char *out, size_t cap, size_t at)
{
	unsigned others;
	const struct pv_load_client *c = pv_load_bound_client(&st->load, &others);
	struct level best;

	if (run->answer_step >= 0)
		at = addf(out, cap, at,
			  "The first step over the answer, %u users (step %u), was client-bound: "
			  "the clients were the limit there, not the server. ",
			  st->users, st->n);
	else
		at = addf(out, cap, at,
			  "No step counted; the fewest users tried, %u (step %u), were "
			  "client-bound: the clients were the limit there, not the server. ",
			  st->users, st->n);
	if (c)
		at = addf(out, cap, at,
			  "Client %s's busiest event loop ran at %.0f%% of a core (the limit: "
			  "%.0f%%) and its loop lag p95 was %.0f ms (the limit: %.0f ms)%s%s. ",
			  c->name, pv_load_loop_cpu(c), PV_LOAD_BOUND_CPU, c->lag_p95,
			  1000 * PV_LOAD_BOUND_LAG,
			  pv_load_loop_cpu(c) < PV_LOAD_BOUND_CPU / 2
				  ? ": its loop was late, not busy, so its host did not give the "
				    "driver the CPU it needed"
				  : "",
			  others ? "; other clients were the limit too" : "");
	if (run->answer_step >= 0)
		at = addf(out, cap, at,
			  "The server carried at least %u users; how many more it carries, this "
			  "run cannot tell",
			  run->answer_users);
	else
		at = addf(out, cap, at, "What the server carries, this run cannot tell");
	if (run->client_cores_needed > 0)
		at = addf(out, cap, at, " (about %.0f client cores would run %u users)",
			  run->client_cores_needed, st->users);
	at = addf(out, cap, at, ".");
	if (nearest(st, false, &best))
		at = addf(out, cap, at, " Of the server and the DC there, the busiest: %s.",
			  best.text);
	return at;
}

/* Logons that failed at st, from the data: how many, the logon p95 against the first step's,
 * the scenarios they left unserved, the DC's CPU. */
static size_t logon_text(const struct pv_results_step *s0, const struct pv_results_step *st,
			 char *out, size_t cap, size_t at)
{
	double m, p;

	if (!st->load.logon_n.failed && !st->load.failed)
		return at;
	if (st->load.logon_n.failed)
		at = addf(out, cap, at, "Logons failed there: %llu of %u users could not log on",
			  (unsigned long long)st->load.logon_n.failed, st->users);
	else
		at = addf(out, cap, at, "Users were without a connection there: %u of %u",
			  st->load.failed, st->users);
	if (st->load.logon_n.retries)
		at = addf(out, cap, at, ", after %llu tries made again",
			  (unsigned long long)st->load.logon_n.retries);
	if (st->has_logon && !isnan(st->load.logon.p95)) {
		at = addf(out, cap, at, "; the logon p95 was %.0f ms", 1000 * st->load.logon.p95);
		if (s0 != st && s0->has_logon && !isnan(s0->load.logon.p95))
			at = addf(out, cap, at, " (%.0f ms at %u users)", 1000 * s0->load.logon.p95,
				  s0->users);
	}
	if (st->load.all.n.unserved)
		at = addf(out, cap, at,
			  ". %llu scenarios were due to users without a connection (unserved), "
			  "%.0f%% of the %llu overloaded",
			  (unsigned long long)st->load.all.n.unserved,
			  st->load.all.n.overloaded ? 100.0 * (double)st->load.all.n.unserved /
							      (double)st->load.all.n.overloaded
						    : 0,
			  (unsigned long long)st->load.all.n.overloaded);
	if (dc_cpu(st, &m, &p))
		at = addf(out, cap, at, ". Every logon passes through the DC: its CPU was %.0f%%",
			  m);
	return addf(out, cap, at, ". ");
}

void pv_results_hint(const struct pv_results_run *run, struct pv_results_hint *out)
{
	const struct pv_results_step *st;
	struct level best;
	struct events ev;
	size_t at = 0, first = (size_t)-1, last, *ord;
	bool any_load = false, watched = false;

	memset(out, 0, sizeof(*out));
	out->step = -1;
	memset(&ev, 0, sizeof(ev));
	if (!run->nsteps) {
		snprintf(out->nearest, sizeof(out->nearest), "No step ran: nothing to tell.");
		return;
	}
	for (size_t i = 0; i < run->nsteps; i++) {
		any_load |= run->steps[i].has_load;
		watched |= run->steps[i].srv != NULL;
	}
	if (!any_load) {
		/* command and fsct: no overload known; the highest level is still a fact */
		size_t top = 0;
		double topu = -1;

		for (size_t i = 0; i < run->nsteps; i++)
			if (nearest(&run->steps[i], true, &best) && best.u > topu) {
				topu = best.u;
				top = i;
			}
		if (topu < 0)
			snprintf(out->nearest, sizeof(out->nearest),
				 "Driver '%s' measures no overload, and no resource was watched: "
				 "the data cannot tell where a limit was.",
				 run->driver);
		else {
			nearest(&run->steps[top], true, &best);
			snprintf(out->nearest, sizeof(out->nearest),
				 "Driver '%s' measures no overload, so no step is known to be "
				 "overloaded. The highest level measured: %s, at %u users (step "
				 "%u).",
				 run->driver, best.text, run->steps[top].users, run->steps[top].n);
		}
		return;
	}
	if (!(ord = calloc(run->nsteps, sizeof(*ord)))) {
		snprintf(out->nearest, sizeof(out->nearest), "Out of memory: no hint.");
		return;
	}
	pv_results_by_users(run, ord);
	/* the first step over the answer (run->first_over); the last step when none */
	out->step = run->first_over;
	last = run->nsteps - 1; /* its place, users rising */
	for (size_t i = 0; out->step >= 0 && i < run->nsteps; i++)
		if (ord[i] == (size_t)out->step)
			last = i;
	st = &run->steps[ord[last]];
	if (out->step >= 0 && st->load.client_bound) {
		client_bound_text(run, st, out->nearest, sizeof(out->nearest), 0);
	} else {
		if (out->step < 0)
			at = addf(out->nearest, sizeof(out->nearest), at,
				  "No step was over the answer: the ramp stayed under the server's "
				  "limit. ");
		else
			at = addf(out->nearest, sizeof(out->nearest), at,
				  "%s %u users (step %u: overload %.2f%%%s). ",
				  run->answer_step >= 0 ? "The first step over the answer is"
							: "No step counted; the fewest tried were",
				  st->users, st->n, st->load.all.overload,
				  st->load.all.n.errors || st->load.failed || st->load.lost
					  ? ", with errors or users not connected"
					  : "");
		if (out->step >= 0)
			at = logon_text(&run->steps[ord[0]], st, out->nearest, sizeof(out->nearest),
					at);
		if (!nearest(st, true, &best))
			addf(out->nearest, sizeof(out->nearest), at,
			     "%s: which resource was nearest its limit cannot be told.",
			     watched ? "Nothing with a known limit was measured in that step"
				     : "The server was not watched in this run");
		else if (best.u >= NEAR)
			addf(out->nearest, sizeof(out->nearest), at,
			     "The resource nearest its limit %s was %s: %.0f%% of that limit.",
			     out->step >= 0 ? "there" : "at the last step", best.text,
			     100 * best.u);
		else
			addf(out->nearest, sizeof(out->nearest), at,
			     "No measured resource was near its limit %s (the highest: %s): the "
			     "limit lies in something not measured here (the disk, the network, "
			     "locks, one busy smbd process).",
			     out->step >= 0 ? "there" : "at the last step", best.text);
	}
	first_moves(run, ord, last, &ev);
	for (size_t i = 0; i < ev.n; i++)
		if (ev.e[i].rank < first)
			first = ev.e[i].rank;
	at = 0;
	if (!ev.n) {
		addf(out->first, sizeof(out->first), at, "Nothing measured moved before %s.",
		     out->step >= 0 ? "the step over the answer" : "the end of the ramp");
		free(ord);
		return;
	}
	at = addf(out->first, sizeof(out->first), at,
		  "What moved first, at %u users (step %u): ", run->steps[ord[first]].users,
		  run->steps[ord[first]].n);
	for (size_t i = 0, k = 0; i < ev.n; i++)
		if (ev.e[i].rank == first)
			at = addf(out->first, sizeof(out->first), at, "%s%s", k++ ? "; " : "",
				  ev.e[i].text);
	at = addf(out->first, sizeof(out->first), at, ".");
	/* then the next moves, a sentence per step */
	for (size_t s = first + 1, k = 0; s <= last && k < 3; s++) {
		size_t here = 0;

		for (size_t i = 0; i < ev.n && k < 3; i++) {
			if (ev.e[i].rank != s)
				continue;
			if (!here++)
				at = addf(out->first, sizeof(out->first), at,
					  " Then at %u users: %s", run->steps[ord[s]].users,
					  ev.e[i].text);
			else
				at = addf(out->first, sizeof(out->first), at, "; %s", ev.e[i].text);
			k++;
		}
		if (here)
			at = addf(out->first, sizeof(out->first), at, ".");
	}
	free(ord);
}
