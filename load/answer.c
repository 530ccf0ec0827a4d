/* load/answer.c: the answer of a ramp in words (see answer.h). Every wording of the answer is
 * here, the line's and the page's side by side: a word changed in one is seen beside the
 * other. */
#include "load/answer.h"

#include "util/err.h"

#include <math.h>
#include <stdio.h>

static void plain_text(struct pv_buf *out, const char *s)
{
	pv_buf_addstr(out, s);
}

const struct pv_load_markup pv_load_plain = {"", "", "", "", plain_text};

void pv_load_outcome_of(const struct pv_load_results *r, struct pv_load_outcome *out)
{
	unsigned users;
	long best = pv_load_answer(r->steps, r->n, r->cfg->overload, &users),
	     over = pv_load_first_over(r->steps, r->n, r->cfg->overload, best);

	out->threshold = r->cfg->overload;
	out->best = best >= 0 ? &r->steps[best] : NULL;
	out->over = over >= 0 ? &r->steps[over] : NULL;
	out->best_n = (unsigned)(best + 1);
	out->over_n = (unsigned)(over + 1);
	out->best_refine = out->over_refine = false;
	out->at_least = out->over && out->over->client_bound;
	out->cores = out->over ? pv_load_cores_for(r->steps, r->n, out->over->users) : 0;
}

/* ", 3 errors" */
static void errors(struct pv_buf *out, uint64_t n)
{
	if (n)
		pv_buf_addf(out, ", %llu error%s", (unsigned long long)n, n == 1 ? "" : "s");
}

/* ", 1 client lost" */
static void lost(struct pv_buf *out, unsigned n)
{
	if (n)
		pv_buf_addf(out, ", %u client%s lost", n, n == 1 ? "" : "s");
}

void pv_load_client_words(struct pv_buf *out, const struct pv_load_client *c, bool its,
			  const struct pv_load_markup *m)
{
	m->text(out, c->name ? c->name : "a client");
	pv_buf_addf(out, ": %sbusiest loop at %.0f%% of a core, loop lag p95 %.0f ms",
		    its ? "its " : "", pv_load_loop_cpu(c), c->lag_p95);
}

/* A client the limit whose loop was late rather than busy: its host's doing. */
static void host_words(struct pv_buf *out, const struct pv_load_client *c)
{
	if (pv_load_loop_cpu(c) < PV_LOAD_BOUND_CPU / 2)
		pv_buf_addstr(out, ": its host did not give the driver the CPU it needed");
}

/* ---- the line ---- */

/* "overload 7.9%", then what else kept the step from counting: ", 3 errors", ... */
static void verdict(const struct pv_load_summary *s, struct pv_buf *out)
{
	pv_buf_addf(out, "overload %.1f%%", s->all.overload);
	errors(out, s->all.n.errors);
	if (pv_load_unconnected(s))
		pv_buf_addf(out, ", %u of %u users not connected", pv_load_unconnected(s),
			    s->users);
	lost(out, s->lost);
	if (!s->all.n.started)
		pv_buf_addstr(out, ", no scenario started");
	if (s->client_bound)
		pv_buf_addstr(out, ", client-bound");
}

/* "step 3, 60 users: overload 7.9%, ..." */
static void step_verdict(const struct pv_load_summary *s, unsigned n, struct pv_buf *out)
{
	pv_buf_addf(out, "step %u, %u users: ", n, s->users);
	verdict(s, out);
}

/* Why a client-bound step says nothing of the server, and what would carry it. */
static void client_limit(const struct pv_load_outcome *o, struct pv_buf *out)
{
	const struct pv_load_summary *s = o->over;
	const struct pv_load_client *c = pv_load_bound_client(s, NULL);

	if (!c)
		return;
	pv_buf_addstr(out, ": the clients were the limit there, not the server (");
	pv_load_client_words(out, c, false, &pv_load_plain);
	host_words(out, c);
	pv_buf_addstr(out, ")");
	if (o->cores > 0)
		pv_buf_addf(out,
			    "; %u users need about %.0f client cores (one loop each; the "
			    "drivers used %.1f)",
			    s->users, ceil(o->cores), s->driver_cores);
}

int pv_load_answer_line(const struct pv_load_results *r, struct pv_buf *out)
{
	struct pv_load_outcome o;

	pv_load_outcome_of(r, &o);
	if (!r->n) {
		pv_buf_addstr(out, "no step was measured");
	} else if (!o.best) {
		pv_buf_addstr(out,
			      "the server carried no step without overload (the fewest users, ");
		step_verdict(o.over, o.over_n, out);
		pv_buf_addstr(out, ")");
		if (o.at_least)
			client_limit(&o, out);
	} else {
		pv_buf_addf(out, "the server carried %s%u users without overload (",
			    o.at_least ? "at least " : "", o.best->users);
		step_verdict(o.best, o.best_n, out);
		pv_buf_addstr(out,
			      o.over ? "; the first step over it, " : "; the most the ramp tried)");
		if (o.over) {
			step_verdict(o.over, o.over_n, out);
			pv_buf_addstr(out, ")");
			if (o.at_least)
				client_limit(&o, out);
		}
	}
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* ---- the page's paragraph ---- */

/* What kept step s from counting, from its figures: "overload 2.51% (the threshold: 1%), 3
 * errors, 3 of 60 users could not log on (4 logons tried again), 1 client lost". */
static void why_not(struct pv_buf *b, const struct pv_load_summary *s, double threshold)
{
	pv_buf_addf(b, "overload %.2f%% (the threshold: %g%%)", s->all.overload, threshold);
	errors(b, s->all.n.errors);
	if (s->logon_n.failed)
		pv_buf_addf(b, ", %llu of %u users could not log on",
			    (unsigned long long)s->logon_n.failed, s->users);
	else if (pv_load_unconnected(s))
		pv_buf_addf(b, ", %u of %u users not logged on", pv_load_unconnected(s), s->users);
	if (s->logon_n.retries)
		pv_buf_addf(b, " (%llu logon%s tried again)",
			    (unsigned long long)s->logon_n.retries,
			    s->logon_n.retries == 1 ? "" : "s");
	if (s->all.n.unserved)
		pv_buf_addf(b, ", %llu scenarios unserved", (unsigned long long)s->all.n.unserved);
	lost(b, s->lost);
}

/* "client-bound: the clients were the limit there, not the server (cli2: its busiest loop at
 * 95% of a core, loop lag p95 150 ms)" */
static void bound_words(struct pv_buf *b, const struct pv_load_summary *s,
			const struct pv_load_markup *m)
{
	unsigned others;
	const struct pv_load_client *c = pv_load_bound_client(s, &others);

	pv_buf_addf(b, "%sclient-bound%s: the clients were the limit there, not the server", m->tag,
		    m->tag_end);
	if (!c)
		return;
	pv_buf_addstr(b, " (");
	pv_load_client_words(b, c, true, m);
	host_words(b, c);
	pv_buf_addf(b, "%s)", others ? "; other clients too" : "");
}

/* ", a step --refine added" */
static const char *refined(bool refine)
{
	return refine ? ", a step --refine added" : "";
}

void pv_load_answer_prose(const struct pv_load_outcome *o, const struct pv_load_markup *m,
			  struct pv_buf *b)
{
	const struct pv_load_summary *over = o->over, *st = o->best;

	if (st) {
		pv_buf_addf(b, "%sThe server carried %s%u users%s without overload (step %u%s).",
			    m->strong, o->at_least ? "at least " : "", st->users, m->strong_end,
			    o->best_n, refined(o->best_refine));
		pv_buf_addf(b,
			    " Margin: overload %.2f%% against the %g%% threshold, %.2f points "
			    "to spare; %llu errors; %.2f scenarios/s of %.2f expected.",
			    st->all.overload, o->threshold, o->threshold - st->all.overload,
			    (unsigned long long)st->all.n.errors, st->rate, st->expected);
		if (over && over->client_bound) {
			pv_buf_addf(b, " The first step over it, %u users (step %u%s), was ",
				    over->users, o->over_n, refined(o->over_refine));
			bound_words(b, over, m);
			pv_buf_addf(b,
				    ": how many more than %u users the server carries, this run "
				    "cannot tell",
				    st->users);
			if (o->cores > 0)
				pv_buf_addf(b, " (about %.0f client cores would run %u users)",
					    o->cores, over->users);
			pv_buf_addstr(b, ".");
		} else if (over) {
			pv_buf_addf(b, " The first step over it, %u users (step %u%s), had ",
				    over->users, o->over_n, refined(o->over_refine));
			why_not(b, over, o->threshold);
			pv_buf_addstr(b, ".");
		} else {
			pv_buf_addstr(
				b, " That is the most users the ramp tried: the limit is higher.");
		}
		return;
	}
	pv_buf_addf(b, "%sThe server carried no step%s without overload.", m->strong,
		    m->strong_end);
	if (over && over->client_bound) {
		pv_buf_addf(b, " The fewest users tried, %u (step %u), were ", over->users,
			    o->over_n);
		bound_words(b, over, m);
		pv_buf_addstr(b, ": this run tells nothing of the server.");
	} else if (over) {
		pv_buf_addf(b, " Even the fewest users tried, %u (step %u), had ", over->users,
			    o->over_n);
		why_not(b, over, o->threshold);
		pv_buf_addstr(b, ".");
	}
}

/* ---- runs together ---- */

void pv_load_answer_range(struct pv_buf *out, const char *who, unsigned lo, unsigned hi,
			  size_t runs, bool at_least)
{
	const char *least = at_least ? "at least " : "",
		   *why = at_least ? " (the clients were the limit above it)" : "";

	if (lo == hi)
		pv_buf_addf(out, "%s carried %s%u users%s", who, least, lo, why);
	else
		pv_buf_addf(out, "%s carried %s%u to %u users (across its %zu repeats)%s", who,
			    least, lo, hi, runs, why);
}

void pv_load_answer_repeats(struct pv_buf *out, double median, double lo, double hi, size_t n)
{
	pv_buf_addf(out, "the server carried %.0f users (%.0f-%.0f over %zu repeat%s)", median, lo,
		    hi, n, n == 1 ? "" : "s");
}
