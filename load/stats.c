/* load/stats.c: histograms, counts, steps, summaries and the answer (see stats.h). */
#include "load/stats.h"

#include <math.h>
#include <string.h>

#define TOP (PV_LOAD_BUCKETS - 1) /* 1000 s and more */

/* ---- histograms ---- */

unsigned pv_load_bucket(double secs)
{
	double b;

	if (!(secs >= PV_LOAD_HIST_LOW)) /* NaN too */
		return 0;
	b = floor(PV_LOAD_HIST_PER_DECADE * log10(secs / PV_LOAD_HIST_LOW)) + 1;
	return b >= TOP ? TOP : (unsigned)b;
}

double pv_load_bucket_low(unsigned b)
{
	if (b == 0)
		return 0;
	if (b > TOP)
		b = TOP;
	return PV_LOAD_HIST_LOW * pow(10, (double)(b - 1) / PV_LOAD_HIST_PER_DECADE);
}

double pv_load_bucket_high(unsigned b)
{
	return b >= TOP ? INFINITY : pv_load_bucket_low(b + 1);
}

void pv_load_hist_add(struct pv_load_hist *h, double secs)
{
	if (!(secs >= 0))
		secs = 0;
	h->n[pv_load_bucket(secs)]++;
	if (secs > h->max)
		h->max = secs;
}

void pv_load_hist_merge(struct pv_load_hist *dst, const struct pv_load_hist *src)
{
	for (unsigned b = 0; b < PV_LOAD_BUCKETS; b++)
		dst->n[b] += src->n[b];
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t pv_load_hist_count(const struct pv_load_hist *h)
{
	uint64_t n = 0;

	for (unsigned b = 0; b < PV_LOAD_BUCKETS; b++)
		n += h->n[b];
	return n;
}

double pv_load_hist_quantile(const struct pv_load_hist *h, double q)
{
	uint64_t rank, seen = 0, count = pv_load_hist_count(h);
	double v;
	unsigned b;

	if (!count)
		return 0;
	rank = (uint64_t)ceil(q * (double)count);
	if (rank < 1)
		rank = 1;
	for (b = 0; b < TOP; b++) {
		seen += h->n[b];
		if (seen >= rank)
			break;
	}
	if (b == TOP)
		return h->max;
	/* the geometric middle: at most half a bucket's ratio from any value in it */
	v = b == 0 ? PV_LOAD_HIST_LOW : sqrt(pv_load_bucket_low(b) * pv_load_bucket_high(b));
	return v < h->max ? v : h->max;
}

/* ---- counting ---- */

bool pv_load_count_start(struct pv_load_figs *f, const struct pv_load_config *c,
			 enum pv_load_kind k, double delay)
{
	struct pv_load_counts *n = &f->kind[k];
	bool late = delay > c->late;

	n->started++;
	if (late) {
		n->late++;
		n->overloaded++;
	}
	return late;
}

void pv_load_count_end(struct pv_load_figs *f, const struct pv_load_config *c, enum pv_load_kind k,
		       bool late, double secs, bool error)
{
	struct pv_load_counts *n = &f->kind[k];

	if (error) {
		n->errors++;
		return;
	}
	pv_load_hist_add(&n->lat, secs);
	if (secs > c->kind[k].limit) {
		n->over_limit++;
		if (!late) /* a late one counted at its start */
			n->overloaded++;
	}
}

void pv_load_counts_merge(struct pv_load_counts *dst, const struct pv_load_counts *src)
{
	dst->started += src->started;
	dst->errors += src->errors;
	dst->late += src->late;
	dst->over_limit += src->over_limit;
	dst->overloaded += src->overloaded;
	pv_load_hist_merge(&dst->lat, &src->lat);
}

void pv_load_figs_merge(struct pv_load_figs *dst, const struct pv_load_figs *src)
{
	if (src->secs > dst->secs)
		dst->secs = src->secs;
	dst->connected += src->connected;
	dst->failed += src->failed;
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		pv_load_counts_merge(&dst->kind[k], &src->kind[k]);
}

/* ---- steps ---- */

void pv_load_step_init(struct pv_load_step *s, unsigned users)
{
	memset(s, 0, sizeof(*s));
	s->users = users;
	s->cpu = NAN;
}

void pv_load_step_add(struct pv_load_step *s, const struct pv_load_figs *f)
{
	if (!s->intervals || f->connected < s->connected)
		s->connected = f->connected;
	if (!s->intervals || f->failed > s->failed)
		s->failed = f->failed;
	s->intervals++;
	s->secs += f->secs;
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		pv_load_counts_merge(&s->kind[k], &f->kind[k]);
}

static void lat_of(const struct pv_load_hist *h, struct pv_load_lat *out)
{
	out->n = pv_load_hist_count(h);
	out->median = pv_load_hist_quantile(h, 0.5);
	out->p95 = pv_load_hist_quantile(h, 0.95);
	out->max = h->max;
}

static void sum_of(const struct pv_load_counts *n, struct pv_load_kind_sum *out)
{
	out->n = *n;
	out->overload = n->started ? 100.0 * (double)n->overloaded / (double)n->started : 0;
	lat_of(&n->lat, &out->lat);
}

void pv_load_summarize(const struct pv_load_step *s, const struct pv_load_config *c,
		       struct pv_load_summary *out)
{
	struct pv_load_counts all;

	memset(out, 0, sizeof(*out));
	memset(&all, 0, sizeof(all));
	out->users = s->users;
	out->connected = s->connected;
	out->failed = s->failed;
	out->lost = s->lost;
	out->secs = s->secs;
	out->cpu = s->cpu;
	for (int k = 0; k < PV_LOAD_KINDS; k++) {
		sum_of(&s->kind[k], &out->kind[k]);
		pv_load_counts_merge(&all, &s->kind[k]);
	}
	sum_of(&all, &out->all);
	out->rate = s->secs > 0 ? (double)out->all.lat.n / s->secs : 0;
	out->expected = (double)s->users * c->rate / 3600.0;
}

/* ---- the answer ---- */

bool pv_load_carried(const struct pv_load_summary *s, double threshold)
{
	/* compared without a division: overloaded / started <= threshold / 100 */
	return s->all.n.started > 0 &&
	       100.0 * (double)s->all.n.overloaded <= threshold * (double)s->all.n.started &&
	       !s->all.n.errors && !s->failed && !s->lost && s->connected >= s->users;
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
