/* load/stats.c: histograms, counts, steps and clients as the driver counts them (see stats.h). */
#include "load/stats.h"

#include "util/stats.h"

#include <math.h>
#include <string.h>

const char *const pv_load_op_names[PV_LOAD_OPS + 1] = {
	"negotiate",	 "session_setup", "logoff",   "tree_connect", "tree_disconnect",
	"create",	 "close",	  "flush",    "read",	      "write",
	"lock",		 "ioctl",	  "cancel",   "echo",	      "query_directory",
	"change_notify", "query_info",	  "set_info", "oplock_break", NULL,
};

int pv_load_op_of(const char *name)
{
	for (int k = 0; k < PV_LOAD_OPS; k++)
		if (!strcmp(pv_load_op_names[k], name))
			return k;
	return -1;
}

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

/* The bucket holding the value of rank r (from 1): TOP when it is the top one, or past the
 * count. */
static unsigned bucket_of(const struct pv_load_hist *h, uint64_t r)
{
	uint64_t seen = 0;
	unsigned b;

	for (b = 0; b < TOP; b++) {
		seen += h->n[b];
		if (seen >= r)
			break;
	}
	return b;
}

/* The bucket of the q-quantile by nearest rank (h not empty). */
static unsigned rank_bucket(const struct pv_load_hist *h, double q)
{
	double r = ceil(q * (double)pv_load_hist_count(h));
	uint64_t rank = 1;

	/* a count near 2^64 (counts merged from anyone's run) would make a rank no uint64_t
	 * holds: converting that is undefined, so it is held first */
	if (r >= 18446744073709551615.0)
		rank = UINT64_MAX;
	else if (r >= 1)
		rank = (uint64_t)r;
	return bucket_of(h, rank);
}

double pv_load_hist_quantile(const struct pv_load_hist *h, double q)
{
	double v;
	unsigned b;

	if (!pv_load_hist_count(h))
		return 0;
	if ((b = rank_bucket(h, q)) == TOP)
		return h->max;
	/* the geometric middle: at most half a bucket's ratio from any value in it */
	v = b == 0 ? PV_LOAD_HIST_LOW : sqrt(pv_load_bucket_low(b) * pv_load_bucket_high(b));
	return v < h->max ? v : h->max;
}

void pv_load_hist_bounds(const struct pv_load_hist *h, double q, double *lo, double *hi)
{
	unsigned b;

	*lo = *hi = 0;
	if (!pv_load_hist_count(h))
		return;
	b = rank_bucket(h, q);
	*lo = pv_load_bucket_low(b);
	*hi = pv_load_bucket_high(b);
	if (*hi > h->max)
		*hi = h->max;
	if (*lo > *hi) /* a maximum printed short of its bucket's start (line.h's slack) */
		*lo = *hi;
}

void pv_load_hist_ci(const struct pv_load_hist *h, double q, double alpha, double *lo, double *hi)
{
	uint64_t n = pv_load_hist_count(h), l, u;

	*lo = 0;
	*hi = INFINITY;
	if (!n)
		return;
	pv_stat_rank_ci(n, q, alpha, &l, &u);
	if (l >= 1)
		*lo = pv_load_bucket_low(bucket_of(h, l));
	if (u <= n)
		*hi = fmin(pv_load_bucket_high(bucket_of(h, u)), h->max);
}

/* ---- counting ---- */

bool pv_load_count_start(struct pv_load_figs *f, const struct pv_playbook_workload *c,
			 enum pv_playbook_workload_kind k, double delay)
{
	f->kind[k].started++;
	return delay > c->late;
}

void pv_load_count_end(struct pv_load_figs *f, const struct pv_playbook_workload *c,
		       enum pv_playbook_workload_kind k, bool late, double secs, bool error)
{
	struct pv_load_counts *n = &f->kind[k];
	bool over = false;

	if (error) {
		n->errors++;
	} else {
		pv_load_hist_add(&n->lat, secs);
		if (secs > c->kind[k].limit) {
			n->over_limit++;
			over = true;
		}
	}
	if (late)
		n->late++;
	if (late || over || error)
		n->overloaded++;
}

void pv_load_count_unserved(struct pv_load_figs *f, enum pv_playbook_workload_kind k)
{
	struct pv_load_counts *n = &f->kind[k];

	n->started++;
	n->unserved++;
	n->overloaded++;
}

void pv_load_counts_merge(struct pv_load_counts *dst, const struct pv_load_counts *src)
{
	dst->started += src->started;
	dst->errors += src->errors;
	dst->late += src->late;
	dst->over_limit += src->over_limit;
	dst->unserved += src->unserved;
	dst->overloaded += src->overloaded;
	for (int o = 0; o < PV_LOAD_OPS; o++)
		dst->ops[o] += src->ops[o];
	pv_load_hist_merge(&dst->lat, &src->lat);
}

void pv_load_figs_merge(struct pv_load_figs *dst, const struct pv_load_figs *src)
{
	if (src->secs > dst->secs)
		dst->secs = src->secs;
	dst->connected += src->connected;
	dst->failed += src->failed;
	dst->drops += src->drops;
	dst->reconnects += src->reconnects;
	dst->relogons += src->relogons;
	dst->reclaimed += src->reclaimed;
	dst->threads += src->threads;
	dst->cpu += src->cpu;
	if (src->cpu_top > dst->cpu_top)
		dst->cpu_top = src->cpu_top;
	if (src->host_cpu > dst->host_cpu)
		dst->host_cpu = src->host_cpu;
	pv_load_hist_merge(&dst->lag, &src->lag);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		pv_load_counts_merge(&dst->kind[k], &src->kind[k]);
}

void pv_load_logon_merge(struct pv_load_logon *dst, const struct pv_load_logon *src)
{
	dst->failed += src->failed;
	dst->retries += src->retries;
	pv_load_hist_merge(&dst->lat, &src->lat);
}

/* ---- steps ---- */

void pv_load_step_init(struct pv_load_step *s, unsigned users)
{
	memset(s, 0, sizeof(*s));
	s->users = users;
	s->cpu = s->dc_cpu = s->dc_samba = NAN;
}

void pv_load_step_add(struct pv_load_step *s, const struct pv_load_figs *f)
{
	if (!s->intervals || f->connected < s->connected)
		s->connected = f->connected;
	if (!s->intervals || f->failed > s->failed)
		s->failed = f->failed;
	s->intervals++;
	s->secs += f->secs;
	s->drops += f->drops;
	s->reconnects += f->reconnects;
	s->relogons += f->relogons;
	s->reclaimed += f->reclaimed;
	pv_load_hist_merge(&s->lag, &f->lag);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		pv_load_counts_merge(&s->kind[k], &f->kind[k]);
}

/* ---- the clients ---- */

void pv_load_client_add(struct pv_load_client_acc *a, const struct pv_load_figs *f)
{
	a->secs += f->secs;
	a->cpu += f->cpu * f->secs;
	a->cpu_top += f->cpu_top * f->secs;
	if (f->host_cpu >= 0) {
		a->host_cpu += f->host_cpu * f->secs;
		a->host_secs += f->secs;
	}
	if (f->threads > a->threads)
		a->threads = f->threads;
	pv_load_hist_merge(&a->lag, &f->lag);
}
