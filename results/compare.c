/* results/compare.c: runs side by side, each difference weighed against the noise (see
 * compare.h). */
#include "results/compare.h"

#include "load/answer.h"

#include "util/stats.h"
#include "util/buf.h"
#include "util/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.05

const char *const pv_results_cmp_names[PV_RESULTS_CMP_FIGS] = {"throughput", "overload", "median",
							       "p95"};
const char *const pv_results_cmp_units[PV_RESULTS_CMP_FIGS] = {"scen/s", "%", "ms", "ms"};
const char *const pv_results_cmp_diff_units[PV_RESULTS_CMP_FIGS] = {"%", "pp", "ms", "ms"};
const char *const pv_results_cmp_verdicts[] = {"n/a", "same", "higher", "lower"};

/* run's first step of users with load figures, NULL when none: a binary search of ord, its
 * steps by users (pv_results_by_users), so that matching the runs' steps is n log n. */
static const struct pv_results_step *step_of(const struct pv_results_run *run, const size_t *ord,
					     unsigned users)
{
	size_t lo = 0, hi = run->nsteps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (run->steps[ord[mid]].users < users)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < run->nsteps && run->steps[ord[lo]].users == users; lo++)
		if (run->steps[ord[lo]].has_load)
			return &run->steps[ord[lo]];
	return NULL;
}

/* ---- one run's figure at one step ---- */

struct one {
	bool have;
	double v, lo, hi; /* at the alpha asked */
};

static struct one figure(const struct pv_results_step *st, enum pv_results_cmp_figure f,
			 double alpha)
{
	struct one o = {false, NAN, NAN, NAN};
	const struct pv_load_kind_sum *a = &st->load.all;

	switch (f) {
	case PV_RESULTS_CMP_RATE:
		if (!(st->load.secs > 0))
			break;
		o.have = true;
		o.v = (double)a->lat.n / st->load.secs;
		pv_stat_poisson_ci(a->lat.n, alpha, &o.lo, &o.hi);
		o.lo /= st->load.secs;
		o.hi /= st->load.secs;
		break;
	case PV_RESULTS_CMP_OVERLOAD:
		if (!pv_load_ended(a))
			break;
		o.have = true;
		o.v = 100.0 * (double)a->n.overloaded / (double)pv_load_ended(a);
		pv_stat_binom_ci(a->n.overloaded, pv_load_ended(a), alpha, &o.lo, &o.hi);
		o.lo *= 100;
		o.hi *= 100;
		break;
	case PV_RESULTS_CMP_MEDIAN:
	case PV_RESULTS_CMP_P95:
		if (!a->lat.n || isnan(f == PV_RESULTS_CMP_MEDIAN ? a->lat.median : a->lat.p95))
			break;
		o.have = true;
		o.v = 1000 * (f == PV_RESULTS_CMP_MEDIAN ? a->lat.median : a->lat.p95);
		if (st->has_hist) {
			pv_load_hist_ci(&a->n.lat, f == PV_RESULTS_CMP_MEDIAN ? 0.5 : 0.95, alpha,
					&o.lo, &o.hi);
			o.lo *= 1000;
			o.hi *= 1000;
		}
		break;
	default:
		break;
	}
	return o;
}

/* The variance a value has on its own, from its 95% interval (as if normal); 0 when
 * unknown. */
static double own_var(const struct one *o)
{
	double h;

	if (isnan(o->lo) || isinf(o->hi))
		return 0;
	h = (o->hi - o->lo) / (2 * 1.959963984540054);
	return h * h;
}

/* A group's estimate of a figure at a step: its runs' values with their spread. */
static bool group_est(const struct pv_results_step *const *sts, size_t k,
		      enum pv_results_cmp_figure f, struct pv_stat_est *e,
		      struct pv_results_cmp_fig *show)
{
	double x[64], floor = 0;
	size_t n = 0;

	for (size_t i = 0; i < k && n < 64; i++) {
		struct one o = figure(sts[i], f, ALPHA);

		if (!o.have)
			continue;
		x[n++] = o.v;
		floor += own_var(&o);
		if (k == 1) {
			show->v = o.v;
			show->lo = o.lo;
			show->hi = o.hi;
		}
	}
	if (!n)
		return false;
	floor /= (double)n;
	*e = pv_stat_repeats(x, n, floor);
	show->have = true;
	if (k > 1) {
		double t = pv_stat_t_q(1 - ALPHA / 2, e->df);

		show->v = e->mean;
		show->lo = e->var > 0 ? e->mean - t * sqrt(e->var) : NAN;
		show->hi = e->var > 0 ? e->mean + t * sqrt(e->var) : NAN;
	}
	return true;
}

static enum pv_results_cmp_verdict verdict_of(double lo, double hi)
{
	if (isnan(lo) || isnan(hi))
		return PV_RESULTS_CMP_NA;
	return lo > 0 ? PV_RESULTS_CMP_HIGHER : hi < 0 ? PV_RESULTS_CMP_LOWER : PV_RESULTS_CMP_SAME;
}

/* Group g (sts, k runs) against group 0 (s0, k0 runs) for figure f at the widened alpha. */
static void against(const struct pv_results_step *const *s0, size_t k0,
		    const struct pv_results_step *const *sg, size_t kg,
		    enum pv_results_cmp_figure f, double alpha,
		    const struct pv_results_cmp_fig *base, struct pv_results_cmp_fig *out)
{
	out->verdict = PV_RESULTS_CMP_NA;
	out->d = out->dlo = out->dhi = NAN;
	if (!base->have || !out->have)
		return;
	if (k0 == 1 && kg == 1) {
		const struct pv_load_kind_sum *a = &s0[0]->load.all, *b = &sg[0]->load.all;
		struct one oa, ob;
		double r, lo, hi;

		switch (f) {
		case PV_RESULTS_CMP_RATE:
			pv_stat_rate_ratio(b->lat.n, sg[0]->load.secs, a->lat.n, s0[0]->load.secs,
					   alpha, &r, &lo, &hi);
			if (isnan(r))
				return;
			out->d = 100 * (r - 1);
			out->dlo = 100 * (lo - 1);
			out->dhi = isinf(hi) ? INFINITY : 100 * (hi - 1);
			break;
		case PV_RESULTS_CMP_OVERLOAD:
			pv_stat_prop_diff(b->n.overloaded, pv_load_ended(b), a->n.overloaded,
					  pv_load_ended(a), alpha, &r, &lo, &hi);
			out->d = 100 * r;
			out->dlo = 100 * lo;
			out->dhi = 100 * hi;
			break;
		default:
			oa = figure(s0[0], f, alpha);
			ob = figure(sg[0], f, alpha);
			out->d = ob.v - oa.v;
			if (isnan(oa.lo) || isnan(ob.lo))
				return;
			/* the two intervals apart: different */
			out->dlo = ob.lo - oa.hi;
			out->dhi = ob.hi - oa.lo;
			break;
		}
	} else {
		struct pv_stat_est ea, eb;
		struct pv_results_cmp_fig tmp;

		if (!group_est(s0, k0, f, &ea, &tmp) || !group_est(sg, kg, f, &eb, &tmp))
			return;
		pv_stat_diff(eb, ea, alpha, &out->d, &out->dlo, &out->dhi);
		if (f == PV_RESULTS_CMP_RATE) {
			if (!(ea.mean > 0))
				return;
			out->d *= 100 / ea.mean;
			out->dlo *= 100 / ea.mean;
			out->dhi *= 100 / ea.mean;
		}
	}
	out->verdict = verdict_of(out->dlo, out->dhi);
}

bool pv_results_cmp_weighed(const struct pv_results_cmp_step *S, size_t g)
{
	return !S->client_bound[0] && !S->client_bound[g];
}

/* S's note: group label's run st was client-bound there, and by which client. */
static void bound_note(struct pv_results_cmp_step *S, const char *label,
		       const struct pv_results_step *st)
{
	const struct pv_load_client *cl = pv_load_bound_client(&st->load, NULL);
	size_t at = strlen(S->note);
	struct pv_buf b = PV_BUF_INIT;

	if (at >= sizeof(S->note) - 1)
		return;
	if (cl)
		pv_load_client_words(&b, cl, true, &pv_load_plain);
	snprintf(S->note + at, sizeof(S->note) - at, "%s%s was client-bound%s%s%s", at ? "; " : "",
		 label, b.data ? " (" : "", b.data ? b.data : "", b.data ? ")" : "");
	pv_buf_release(&b, 0);
}

/* ---- the answer ---- */

static void why(struct pv_results_cmp_group *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void why(struct pv_results_cmp_group *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->answer_why, sizeof(g->answer_why), fmt, ap);
	va_end(ap);
}

/* A group's runs at a step: their errors, measured seconds, users not logged on and clients
 * lost. */
struct tally {
	uint64_t errors, unconnected;
	double secs;
};

static struct tally tally_of(const struct pv_results_step *const *s, size_t k)
{
	struct tally t = {0, 0, 0};

	for (size_t i = 0; i < k; i++) {
		t.errors += s[i]->load.all.n.errors;
		t.secs += s[i]->load.secs;
		t.unconnected += s[i]->load.failed + s[i]->load.lost;
	}
	return t;
}

/* Whether group g's answer is really not the first's: at a step between the two that one
 * carried and the other (the failing one, f; o the other) did not, the failing one's overload
 * or errors are beyond the noise, or it alone had users not logged on. */
static void weigh(struct pv_results_cmp *c, size_t g, const struct pv_results_step ***sts,
		  const size_t *kk)
{
	struct pv_results_cmp_group *G = &c->groups[g], *A = &c->groups[0];
	unsigned lo = A->answer_lo < G->answer_lo ? A->answer_lo : G->answer_lo,
		 hi = A->answer_hi > G->answer_hi ? A->answer_hi : G->answer_hi;
	bool judged = false;
	const struct pv_results_cmp_step *bound = NULL;

	for (size_t s = 0; s < c->nsteps && !G->answer_real; s++) {
		const struct pv_results_cmp_step *S = &c->steps[s];
		bool fail_g = !S->carried[g];
		size_t f = fail_g ? g : 0, o = fail_g ? 0 : g;
		const char *fl = c->groups[f].label, *ol = c->groups[o].label;
		struct tally tf, to;
		double ovf, ovo, r, elo, ehi;

		if (S->users <= lo || S->users > hi || S->carried[0] == S->carried[g])
			continue;
		/* the clients' limit there, not the server's: it tells nothing */
		if (!pv_results_cmp_weighed(S, g)) {
			if (!bound)
				bound = S;
			continue;
		}
		judged = true;
		ovf = S->fig[f * PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_OVERLOAD].v;
		ovo = S->fig[o * PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_OVERLOAD].v;
		tf = tally_of(sts[s * c->ngroups + f], kk[s * c->ngroups + f]);
		to = tally_of(sts[s * c->ngroups + o], kk[s * c->ngroups + o]);
		pv_stat_rate_ratio(tf.errors, tf.secs, to.errors, to.secs, c->alpha, &r, &elo,
				   &ehi);
		G->answer_real = true;
		/* group g against the first: higher when g is the failing one */
		if (S->fig[g * PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_OVERLOAD].verdict ==
		    (fail_g ? PV_RESULTS_CMP_HIGHER : PV_RESULTS_CMP_LOWER))
			why(G,
			    "at %u users the overload is %.2f%% in %s against %.2f%% in %s, "
			    "beyond the noise",
			    S->users, ovf, fl, ovo, ol);
		else if (tf.errors && elo > 1)
			why(G,
			    "at %u users %s had %llu errors against %llu in %s, beyond the noise",
			    S->users, fl, (unsigned long long)tf.errors,
			    (unsigned long long)to.errors, ol);
		else if (tf.unconnected && !to.unconnected)
			why(G,
			    "at %u users %s had users that did not log on or clients lost, %s none",
			    S->users, fl, ol);
		else {
			G->answer_real = false;
			why(G,
			    "within the noise: at %u users the overload is %.2f%% in %s against "
			    "%.2f%% in %s, and the errors %llu against %llu: neither beyond the "
			    "noise",
			    S->users, ovf, fl, ovo, ol, (unsigned long long)tf.errors,
			    (unsigned long long)to.errors);
		}
	}
	if (!judged && bound)
		why(G,
		    "cannot be weighed: at %u users %s: the clients were the limit there, not the "
		    "server, and no other step between the two answers tells them apart",
		    bound->users, bound->note);
	else if (!judged)
		why(G, "cannot be weighed: no step between the two answers was run by both");
}

static void answers(struct pv_results_cmp *c, const struct pv_results_step ***sts, const size_t *kk)
{
	for (size_t g = 0; g < c->ngroups; g++) {
		struct pv_results_cmp_group *G = &c->groups[g];

		for (size_t i = 0; i < G->nruns; i++) {
			unsigned a = G->runs[i]->answer_step >= 0 ? G->runs[i]->answer_users : 0;

			if (!i || a < G->answer_lo)
				G->answer_lo = a;
			if (!i || a > G->answer_hi)
				G->answer_hi = a;
			G->answer_at_least |= G->runs[i]->answer_at_least;
		}
	}
	for (size_t g = 1; g < c->ngroups; g++) {
		struct pv_results_cmp_group *G = &c->groups[g], *A = &c->groups[0];

		G->answer_diff = (long)G->answer_lo - (long)A->answer_lo;
		if (G->answer_lo == A->answer_lo && G->answer_hi == A->answer_hi)
			why(G, "the same answer");
		else
			weigh(c, g, sts, kk);
	}
}

/* ---- what differs ---- */

struct kv {
	char key[128];
	char val[256];
};

/* A run's settings in the order found, and sorted by key (stable: a key's first place
 * first) for the lookups, so that comparing them stays n log n whatever a run holds. */
struct kvs {
	struct kv *v;
	size_t n, cap;
	size_t *by_key;
	size_t nconf; /* settings of the server's configuration taken, PV_RESULTS_ENTRIES_MAX at
			 most */
};

static void kv_add(struct kvs *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void kv_add(struct kvs *l, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct kv *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	snprintf(l->v[l->n].key, sizeof(l->v[0].key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(l->v[l->n].val, sizeof(l->v[0].val), fmt, ap);
	va_end(ap);
	l->n++;
}

/* The server's configuration (testparm's output), each setting as "server [section] key"
 * (the first PV_RESULTS_ENTRIES_MAX settings, and one saying when there were more). */
static void config_kvs(struct kvs *l, const char *text)
{
	struct pv_results_setting s = {"global", NULL, NULL, 6, 0, 0};
	char section[64], key[128];
	size_t pos = 0;

	while (pv_results_config_next(text, &pos, &s)) {
		if (l->nconf++ == PV_RESULTS_ENTRIES_MAX) {
			kv_add(l, "server configuration",
			       "more than %d settings: the rest not compared",
			       PV_RESULTS_ENTRIES_MAX);
			return;
		}
		snprintf(section, sizeof(section), "%.*s", s.nsection, s.section);
		snprintf(key, sizeof(key), "server [%s] %.*s", section, s.nkey, s.key);
		kv_add(l, key, "%.*s", s.nvalue, s.value);
	}
}

static void run_kvs(const struct pv_results_run *r, struct kvs *l)
{
	char key[128];

	kv_add(l, "provision version", "%s", r->provision);
	kv_add(l, "playbook sha256", "%s", r->sha256);
	kv_add(l, "driver", "%s", r->driver);
	kv_add(l, "driver.duration", "%u", r->duration);
	kv_add(l, "driver.warmup", "%u", r->warmup);
	if (r->has_load) {
		kv_add(l, "load.rate", "%u", r->cfg.rate);
		kv_add(l, "load.late", "%g", r->cfg.late);
		kv_add(l, "load.overload", "%g", r->cfg.overload);
		kv_add(l, "load.interval", "%u", r->cfg.interval);
		kv_add(l, "load.seed", "%llu", (unsigned long long)r->cfg.seed);
		kv_add(l, "load.keep_logged_on", "%s", r->cfg.keep_logged_on ? "true" : "false");
		kv_add(l, "load.threads", "%u", r->cfg.threads);
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
			snprintf(key, sizeof(key), "load.scenarios.%s",
				 pv_playbook_workload_names[k]);
			kv_add(l, key, "weight %g, limit %g s", r->cfg.kind[k].weight,
			       r->cfg.kind[k].limit);
		}
	}
	for (size_t i = 0; i < r->nhosts; i++) {
		snprintf(key, sizeof(key), "%s %s", r->hosts[i].role, r->hosts[i].name);
		kv_add(l, key, "%s", r->hosts[i].version);
	}
	if (r->server_config)
		config_kvs(l, r->server_config);
}

static int by_key(const void *a, const void *b, void *arg)
{
	const struct kv *v = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int d = strcmp(v[x].key, v[y].key);

	return d ? d : (x > y) - (x < y);
}

/* l sorted by key into l->by_key: -1 when out of memory */
static int kv_sort(struct kvs *l)
{
	if (!(l->by_key = calloc(l->n ? l->n : 1, sizeof(*l->by_key))))
		return -1;
	for (size_t i = 0; i < l->n; i++)
		l->by_key[i] = i;
	qsort_r(l->by_key, l->n, sizeof(*l->by_key), by_key, l->v);
	return 0;
}

/* Where key is first in l (its index in l->v), or -1. */
static long kv_at(const struct kvs *l, const char *key)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(l->v[l->by_key[mid]].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && !strcmp(l->v[l->by_key[lo]].key, key) ? (long)l->by_key[lo] : -1;
}

static const char *kv_get(const struct kvs *l, const char *key)
{
	long at = kv_at(l, key);

	return at < 0 ? NULL : l->v[at].val;
}

static int settings(struct pv_results_cmp *c)
{
	struct kvs *l = calloc(c->nruns, sizeof(*l));
	bool some_config = false, all_config = true;
	size_t cap = 0;
	int r = PV_OK;

	if (!l)
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < c->nruns && r == PV_OK; i++) {
		run_kvs(c->runs[i], &l[i]);
		if (kv_sort(&l[i]) < 0)
			r = pv_error(PV_EIO, "out of memory");
		some_config |= c->runs[i]->server_config != NULL;
		all_config &= c->runs[i]->server_config != NULL;
	}
	for (size_t i = 0; i < c->nruns && r == PV_OK; i++)
		for (size_t j = 0;
		     j < l[i].n + (i == 0 && some_config && !all_config) && r == PV_OK; j++) {
			bool summary = j == l[i].n, differs = false, seen = false, is_conf;
			const char *key =
				summary ? "server configuration (testparm -s)" : l[i].v[j].key;
			struct pv_results_cmp_setting *s;

			/* a key once: where it is first, in the first run that has it */
			seen = !summary && kv_at(&l[i], key) != (long)j;
			for (size_t k = 0; k < i && !seen; k++)
				seen |= kv_get(&l[k], key) != NULL;
			if (seen)
				continue;
			is_conf = strncmp(key, "server [", 8) == 0;
			for (size_t k = 0; k < c->nruns && !summary; k++) {
				const char *a = kv_get(&l[i], key), *b = kv_get(&l[k], key);

				if (is_conf && !c->runs[k]->server_config)
					continue;
				differs |= strcmp(a, b ? b : "") != 0;
			}
			if (!differs && !summary)
				continue;
			if (c->nsettings == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				struct pv_results_cmp_setting *ns =
					realloc(c->settings, ncap * sizeof(*ns));

				if (!ns) {
					r = pv_error(PV_EIO, "out of memory");
					break;
				}
				c->settings = ns;
				cap = ncap;
			}
			s = &c->settings[c->nsettings];
			snprintf(s->key, sizeof(s->key), "%s", key);
			if (!(s->values = calloc(c->nruns, sizeof(*s->values)))) {
				r = pv_error(PV_EIO, "out of memory");
				break;
			}
			c->nsettings++;
			for (size_t k = 0; k < c->nruns; k++) {
				const char *v = kv_get(&l[k], key);

				if (summary)
					v = c->runs[k]->server_config ? "recorded"
								      : "not recorded in this run";
				else if (is_conf && !c->runs[k]->server_config)
					v = "not recorded in this run";
				else if (!v)
					v = is_conf ? "(not set: the default)" : "";
				if (!(s->values[k] = strdup(v)))
					r = pv_error(PV_EIO, "out of memory");
			}
		}
	for (size_t i = 0; i < c->nruns; i++) {
		free(l[i].v);
		free(l[i].by_key);
	}
	free(l);
	return r;
}

/* ---- the whole ---- */

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static int check_runs(const struct pv_results_run *const *runs, size_t nruns)
{
	size_t steps = 0;

	for (size_t i = 0; i < nruns; i++)
		steps += runs[i]->nsteps;
	if (steps > PV_RESULTS_CMP_STEPS_MAX)
		return pv_error(PV_EUSAGE,
				"the runs hold %zu steps together, more than the %d compare reads; "
				"compare fewer runs",
				steps, PV_RESULTS_CMP_STEPS_MAX);
	for (size_t i = 0; i < nruns; i++) {
		if (strcmp(runs[i]->driver, "builtin") != 0)
			return pv_error(PV_ECONFIG,
					"run '%s' is of driver '%s': compare weighs the built-in "
					"driver's figures (scenarios, overload, latency); runs of "
					"driver 'command' or 'fsct' have none to compare",
					runs[i]->dir, runs[i]->driver);
		if (!runs[i]->has_load)
			return pv_error(
				PV_ECONFIG,
				"run '%s' has no load figures (no readable load.json: the run "
				"ended before its results were written)",
				runs[i]->dir);
	}
	return PV_OK;
}

int pv_results_cmp_build(const struct pv_results_run *const *runs, const size_t *group,
			 size_t nruns, struct pv_results_cmp **out)
{
	struct pv_results_cmp *c = calloc(1, sizeof(*c));
	const struct pv_results_step **sts = NULL;
	unsigned *users = NULL;
	size_t nusers = 0, *kk = NULL, **ord = NULL, *pos = NULL, *off = NULL;
	struct pv_buf un = PV_BUF_INIT;
	int r;

	if (!c)
		return pv_error(PV_EIO, "out of memory");
	if ((r = check_runs(runs, nruns)) != PV_OK)
		goto out;
	for (size_t i = 0; i < nruns; i++)
		if (group[i] + 1 > c->ngroups)
			c->ngroups = group[i] + 1;
	if (c->ngroups < 2) {
		r = pv_error(PV_EUSAGE, "compare needs two runs (or groups of repeats) at least");
		goto out;
	}
	c->nruns = nruns;
	if (!(c->runs = calloc(nruns, sizeof(*c->runs))) ||
	    !(c->groups = calloc(c->ngroups, sizeof(*c->groups)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (size_t g = 0; g < c->ngroups; g++) {
		struct pv_results_cmp_group *G = &c->groups[g];

		snprintf(G->label, sizeof(G->label), "%c%s", 'A' + (int)(g % 26),
			 g >= 26 ? "+" : "");
		if (!(G->runs = calloc(nruns, sizeof(*G->runs)))) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < nruns; i++) {
		c->runs[i] = runs[i];
		c->groups[group[i]].runs[c->groups[group[i]].nruns++] = runs[i];
	}
	for (size_t g = 0; g < c->ngroups; g++)
		if (!c->groups[g].nruns) {
			r = pv_error(PV_EUSAGE, "group %zu has no run", g + 1);
			goto out;
		}
	/* each run's steps by users, for the lookups; every users of a step with figures, once */
	if (!(ord = calloc(nruns, sizeof(*ord))) || !(pos = calloc(nruns, sizeof(*pos))) ||
	    !(off = calloc(c->ngroups, sizeof(*off)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nruns; i++)
		nusers += runs[i]->nsteps;
	if (!(users = calloc(nusers ? nusers : 1, sizeof(*users)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	nusers = 0;
	for (size_t i = 0; i < nruns; i++) {
		if (!(ord[i] = calloc(runs[i]->nsteps ? runs[i]->nsteps : 1, sizeof(**ord)))) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		pv_results_by_users(runs[i], ord[i]);
		for (size_t s = 0; s < runs[i]->nsteps; s++)
			if (runs[i]->steps[s].has_load)
				users[nusers++] = runs[i]->steps[s].users;
		pos[i] = off[group[i]]++; /* its place in its group; off: the groups' sizes */
	}
	for (size_t g = 0, at = 0; g < c->ngroups; g++) {
		size_t n = off[g];

		off[g] = at; /* where the group's runs start in a step's row of sts */
		at += n;
	}
	qsort(users, nusers, sizeof(*users), cmp_uint);
	{
		size_t k = 0;

		for (size_t u = 0; u < nusers; u++)
			if (!k || users[u] != users[k - 1])
				users[k++] = users[u];
		nusers = k;
	}
	/* the steps every run has: each run's step of those users in sts[step][the run's place
	 * in its group's row]; the others named, the first 64 */
	if (!(c->steps = calloc(nusers ? nusers : 1, sizeof(*c->steps))) ||
	    !(sts = calloc((nusers ? nusers : 1) * nruns, sizeof(*sts)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (size_t u = 0, left_out = 0; u < nusers; u++) {
		size_t s = c->nsteps;
		bool all = true, named = false;

		for (size_t i = 0; i < nruns; i++) {
			const struct pv_results_step *st = step_of(runs[i], ord[i], users[u]);

			sts[s * nruns + off[group[i]] + pos[i]] = st;
			all &= st != NULL;
			if (!st && !named && left_out < 64)
				pv_buf_addf(&un, "%u users: not in every run of %s\n", users[u],
					    c->groups[group[i]].label);
			named |= !st;
		}
		left_out += !all;
		if (left_out == 65 && !all)
			pv_buf_addstr(&un, "(and more steps not in every run)\n");
		if (all)
			c->steps[c->nsteps++].users = users[u];
	}
	if (!(kk = calloc((c->nsteps ? c->nsteps : 1) * c->ngroups, sizeof(*kk)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if (!c->nsteps) {
		r = pv_error(PV_ECONFIG,
			     "the runs have no step in common (steps are matched by their users): "
			     "run them with the same --min-users, --max-users and --step");
		goto out;
	}
	{
		/* sts as [step][group] -> the runs' steps */
		const struct pv_results_step ***idx = calloc(c->nsteps * c->ngroups, sizeof(*idx));

		if (!idx) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		for (size_t s = 0; s < c->nsteps; s++) {
			struct pv_results_cmp_step *S = &c->steps[s];

			if (!(S->fig = calloc(c->ngroups * PV_RESULTS_CMP_FIGS, sizeof(*S->fig))) ||
			    !(S->cpu = calloc(c->ngroups, sizeof(*S->cpu))) ||
			    !(S->carried = calloc(c->ngroups, sizeof(*S->carried))) ||
			    !(S->client_bound = calloc(c->ngroups, sizeof(*S->client_bound)))) {
				free(idx);
				r = pv_error(PV_EIO, "out of memory");
				goto out;
			}
			for (size_t g = 0; g < c->ngroups; g++) {
				idx[s * c->ngroups + g] = sts + s * nruns + off[g];
				kk[s * c->ngroups + g] = c->groups[g].nruns;
			}
		}
		for (size_t s = 0; s < c->nsteps; s++) {
			struct pv_results_cmp_step *S = &c->steps[s];
			bool any = false;

			for (size_t g = 0; g < c->ngroups; g++) {
				const struct pv_results_step *const *sg = idx[s * c->ngroups + g];
				size_t k = kk[s * c->ngroups + g];
				double cpu = 0;
				size_t ncpu = 0;

				S->carried[g] = true;
				for (size_t i = 0; i < k; i++) {
					double mean, p95, max;

					S->carried[g] &=
						sg[i]->carried && !sg[i]->load.client_bound;
					if (sg[i]->load.client_bound && !S->client_bound[g])
						bound_note(S, c->groups[g].label, sg[i]);
					S->client_bound[g] |= sg[i]->load.client_bound;
					if (pv_results_watch_stat(sg[i]->srv, "cpu", &mean, &p95,
								  &max)) {
						cpu += mean;
						ncpu++;
					}
				}
				S->cpu[g] = ncpu ? cpu / (double)ncpu : NAN;
				for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++) {
					struct pv_results_cmp_fig *F =
						&S->fig[g * PV_RESULTS_CMP_FIGS + f];
					struct pv_stat_est e;

					F->lo = F->hi = F->d = F->dlo = F->dhi = NAN;
					group_est(sg, k, (enum pv_results_cmp_figure)f, &e, F);
				}
			}
			S->compared = true;
			for (size_t g = 0; g < c->ngroups; g++)
				S->compared &= !S->client_bound[g];
			for (size_t g = 1; g < c->ngroups && !any; g++)
				any = pv_results_cmp_weighed(S, g);
			c->ncompared += any;
		}
		/* the widening: over the steps where a difference is weighed */
		c->alpha = ALPHA / (double)(c->ncompared ? c->ncompared : 1);
		for (size_t s = 0; s < c->nsteps; s++) {
			struct pv_results_cmp_step *S = &c->steps[s];

			for (size_t g = 1; g < c->ngroups; g++)
				for (int f = 0;
				     f < PV_RESULTS_CMP_FIGS && pv_results_cmp_weighed(S, g); f++) {
					struct pv_results_cmp_fig *F =
						&S->fig[g * PV_RESULTS_CMP_FIGS + f];

					against(idx[s * c->ngroups], kk[s * c->ngroups],
						idx[s * c->ngroups + g], kk[s * c->ngroups + g],
						(enum pv_results_cmp_figure)f, c->alpha, &S->fig[f],
						F);
					if (F->verdict == PV_RESULTS_CMP_HIGHER ||
					    F->verdict == PV_RESULTS_CMP_LOWER) {
						c->differ++;
						c->differ_rate += f == PV_RESULTS_CMP_RATE;
					}
				}
		}
		answers(c, idx, kk);
		free(idx);
	}
	if (pv_buf_failed(&un)) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	c->uncommon = pv_buf_detach(&un);
	r = settings(c);
out:
	pv_buf_release(&un, 0);
	for (size_t i = 0; ord && i < nruns; i++)
		free(ord[i]);
	free(ord);
	free(pos);
	free(off);
	free(users);
	free(sts);
	free(kk);
	if (r != PV_OK) {
		pv_results_cmp_free(c);
		return r;
	}
	*out = c;
	return PV_OK;
}

void pv_results_cmp_free(struct pv_results_cmp *c)
{
	if (!c)
		return;
	for (size_t s = 0; s < c->nsteps; s++) {
		free(c->steps[s].fig);
		free(c->steps[s].cpu);
		free(c->steps[s].carried);
		free(c->steps[s].client_bound);
	}
	free(c->steps);
	for (size_t g = 0; c->groups && g < c->ngroups; g++)
		free(c->groups[g].runs);
	free(c->groups);
	for (size_t i = 0; i < c->nsettings; i++) {
		for (size_t k = 0; k < c->nruns; k++)
			free(c->settings[i].values[k]);
		free(c->settings[i].values);
	}
	free(c->settings);
	free(c->runs);
	free(c->uncommon);
	free(c);
}
