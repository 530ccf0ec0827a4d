/* load/summary.c: a step as every result shows it, and the answer of a ramp (see summary.h). */
#include "load/summary.h"

#include "util/stats.h"

#include <math.h>
#include <string.h>

void pv_load_client_of(const struct pv_load_client_acc *a, const char *name,
		       struct pv_load_client *out)
{
	memset(out, 0, sizeof(*out));
	out->name = name;
	out->threads = a->threads;
	out->cpu = a->secs > 0 ? a->cpu / a->secs : 0;
	out->cpu_top = a->secs > 0 ? a->cpu_top / a->secs : 0;
	out->host_cpu = a->host_secs > 0 ? a->host_cpu / a->host_secs : NAN;
	/* the bound judged on the seconds, the figures kept in ms as every result shows them */
	out->lag_p95 = pv_load_hist_quantile(&a->lag, 0.95);
	out->bound = out->cpu_top >= PV_LOAD_BOUND_CPU || out->lag_p95 >= PV_LOAD_BOUND_LAG;
	out->lag_p95 *= 1000;
	out->lag_max = a->lag.max * 1000;
}

double pv_load_loop_cpu(const struct pv_load_client *c)
{
	return !isnan(c->cpu_top) ? c->cpu_top : c->threads <= 1 ? c->cpu : NAN;
}

void pv_load_summary_clients(struct pv_load_summary *s, const struct pv_load_client *clients,
			     size_t n)
{
	s->clients = clients;
	s->nclients = n;
	s->client_bound = false;
	s->driver_cores = 0;
	for (size_t i = 0; i < n; i++) {
		s->client_bound |= clients[i].bound;
		s->driver_cores += clients[i].cpu / 100;
	}
}

/* ---- summaries ---- */

static void lat_of(const struct pv_load_hist *h, struct pv_load_lat *out)
{
	out->n = pv_load_hist_count(h);
	out->median = pv_load_hist_quantile(h, 0.5);
	out->p95 = pv_load_hist_quantile(h, 0.95);
	out->max = h->max;
	pv_load_hist_bounds(h, 0.5, &out->median_lo, &out->median_hi);
	pv_load_hist_bounds(h, 0.95, &out->p95_lo, &out->p95_hi);
}

uint64_t pv_load_ended(const struct pv_load_kind_sum *k)
{
	return k->lat.n + k->n.errors + k->n.unserved;
}

unsigned pv_load_unconnected(const struct pv_load_summary *s)
{
	unsigned missing = s->connected < s->users ? s->users - s->connected : 0;

	return s->failed > missing ? s->failed : missing;
}

const struct pv_load_client *pv_load_bound_client(const struct pv_load_summary *s, unsigned *others)
{
	const struct pv_load_client *b = NULL;
	unsigned more = 0;

	for (size_t i = 0; i < s->nclients; i++) {
		const struct pv_load_client *c = &s->clients[i];
		double u = pv_load_loop_cpu(c);

		if (!c->bound)
			continue;
		if (b)
			more++;
		if (!b || u > pv_load_loop_cpu(b) || (isnan(pv_load_loop_cpu(b)) && !isnan(u)))
			b = c;
	}
	if (others)
		*others = more;
	return b;
}

static void sum_of(const struct pv_load_counts *n, struct pv_load_kind_sum *out)
{
	uint64_t ended = pv_load_hist_count(&n->lat) + n->errors + n->unserved;

	out->n = *n;
	out->overload = ended ? 100.0 * (double)n->overloaded / (double)ended : 0;
	lat_of(&n->lat, &out->lat);
}

void pv_load_summarize(const struct pv_load_step *s, const struct pv_playbook_workload *c,
		       struct pv_load_summary *out)
{
	struct pv_load_counts all;

	memset(out, 0, sizeof(*out));
	memset(&all, 0, sizeof(all));
	out->users = s->users;
	out->connected = s->connected;
	out->failed = s->failed;
	out->lost = s->lost;
	out->drops = s->drops;
	out->reconnects = s->reconnects;
	out->relogons = s->relogons;
	out->reclaimed = s->reclaimed;
	out->secs = s->secs;
	out->cpu = s->cpu;
	out->dc_cpu = s->dc_cpu;
	out->dc_samba = s->dc_samba;
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		sum_of(&s->kind[k], &out->kind[k]);
		pv_load_counts_merge(&all, &s->kind[k]);
	}
	sum_of(&all, &out->all);
	out->rate = s->secs > 0 ? (double)out->all.lat.n / s->secs : 0;
	if (s->secs > 0) {
		pv_stat_poisson_ci(out->all.lat.n, 0.05, &out->rate_lo, &out->rate_hi);
		out->rate_lo /= s->secs;
		out->rate_hi /= s->secs;
	}
	out->expected = (double)s->users * c->rate / 3600.0;
	out->logon_n = s->logon;
	lat_of(&s->logon.lat, &out->logon);
	lat_of(&s->lag, &out->lag);
}

/* ---- the answer ---- */

bool pv_load_carried(const struct pv_load_summary *s, double threshold)
{
	uint64_t ended = s->all.lat.n + s->all.n.errors + s->all.n.unserved;

	/* compared without a division: overloaded / ended <= threshold / 100 */
	return s->all.n.started > 0 && ended > 0 &&
	       100.0 * (double)s->all.n.overloaded <= threshold * (double)ended &&
	       !s->all.n.errors && !s->failed && !s->lost && s->connected >= s->users &&
	       !s->client_bound;
}

long pv_load_answer(const struct pv_load_summary *steps, size_t n, double threshold,
		    unsigned *users)
{
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if (pv_load_carried(&steps[i], threshold) &&
		    (best < 0 || steps[i].users > steps[best].users))
			best = (long)i;
	*users = best < 0 ? 0 : steps[best].users;
	return best;
}

long pv_load_first_over(const struct pv_load_summary *steps, size_t n, double threshold, long best)
{
	long over = -1;

	for (size_t i = 0; i < n; i++)
		if ((best < 0 || steps[i].users > steps[best].users) &&
		    !pv_load_carried(&steps[i], threshold) &&
		    (over < 0 || steps[i].users < steps[over].users))
			over = (long)i;
	return over;
}

double pv_load_cores_for(const struct pv_load_summary *steps, size_t n, unsigned users)
{
	long at = -1, fewest = -1;

	for (size_t i = 0; i < n; i++) {
		if (!steps[i].nclients || !steps[i].users)
			continue;
		if (!steps[i].client_bound && (at < 0 || steps[i].users > steps[at].users))
			at = (long)i;
		if (fewest < 0 || steps[i].users < steps[fewest].users)
			fewest = (long)i;
	}
	if (at < 0)
		at = fewest;
	if (at < 0 || !(steps[at].driver_cores > 0))
		return 0;
	return steps[at].driver_cores / steps[at].users * users / PV_LOAD_CORE_TARGET;
}
