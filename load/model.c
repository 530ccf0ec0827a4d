/* load/model.c: the scenario table and each user's schedule (see model.h). */
#include "load/model.h"

#include "util/digest.h"
#include "util/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- xoshiro256** 1.0, as published at https://prng.di.unimi.it/xoshiro256starstar.c ---- */

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t pv_load_rng_next(struct pv_load_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double pv_load_rng_unit(struct pv_load_rng *r)
{
	return (double)(pv_load_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- schedules ---- */

void pv_load_sched_init(struct pv_load_sched *s, const struct pv_playbook_workload *c,
			const char *client, unsigned user)
{
	uint8_t key[8], mac[32];
	char msg[320];
	int len;
	double sum = 0;

	/* the seed as the key, "<client>\0<user>" as the message: a keyed hash of the user's
	 * name gives states far apart for names that differ by a character */
	for (int i = 0; i < 8; i++)
		key[i] = (uint8_t)(c->seed >> (8 * i));
	len = snprintf(msg, sizeof(msg), "%.255s%c%u", client ? client : "", '\0', user);
	pv_hmac_sha256(key, sizeof(key), msg, (size_t)len, mac);
	memset(s, 0, sizeof(*s));
	for (int w = 0; w < 4; w++)
		for (int i = 0; i < 8; i++)
			s->rng.s[w] |= (uint64_t)mac[8 * w + i] << (8 * i);
	if (!(s->rng.s[0] | s->rng.s[1] | s->rng.s[2] | s->rng.s[3]))
		s->rng.s[0] = 1; /* the one state xoshiro cannot leave */
	s->mean = 3600.0 / (c->rate ? c->rate : PV_PLAYBOOK_WORKLOAD_RATE);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		sum += c->kind[k].weight > 0 ? c->kind[k].weight : 0;
		s->cum[k] = sum;
	}
	s->learned = &c->learned;
	if (pv_playbook_workload_paced(c)) {
		double w = 0, secs = 0, mean;

		for (unsigned k = 0; k < c->learned.n; k++) {
			w += c->learned.kind[k].weight;
			secs += c->learned.kind[k].weight * c->learned.kind[k].seconds;
		}
		mean = (w > 0 ? secs / w : 0) + pv_load_quantiles_mean(&c->learned.think);
		if (mean > 0)
			s->pace = s->mean / mean;
	}
}

double pv_load_quantiles_draw(const struct pv_playbook_workload_quantiles *l, double u)
{
	double p = u * 100, a, b, t;
	unsigned i = 0;

	if (l->n < 2)
		return 0;
	while (i + 2 < l->n && !(p < l->level[i + 1]))
		i++;
	a = l->q[i];
	b = l->q[i + 1];
	t = (p - l->level[i]) / (l->level[i + 1] - l->level[i]);
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return a > 0 && b > a ? a * pow(b / a, t) : a + (b - a) * t;
}

double pv_load_quantiles_mean(const struct pv_playbook_workload_quantiles *l)
{
	double m = 0;

	for (unsigned i = 0; i + 1 < l->n; i++) {
		double a = l->q[i], b = l->q[i + 1], p = (l->level[i + 1] - l->level[i]) / 100;

		/* a log-uniform stretch's mean: (b - a) / ln(b / a); a linear one's the middle */
		m += p * (a > 0 && b > a * (1 + 1e-9) ? (b - a) / log(b / a) : (a + b) / 2);
	}
	return m;
}

double pv_load_quantiles_cdf(const struct pv_playbook_workload_quantiles *g, double x)
{
	unsigned i = 0;
	double a, b, t;

	if (g->n < 2 || x < g->q[0])
		return 0;
	if (x >= g->q[g->n - 1])
		return 1;
	while (i + 2 < g->n && !(x < g->q[i + 1]))
		i++;
	a = g->q[i];
	b = g->q[i + 1];
	if (!(b > a))
		return g->level[i + 1] / 100;
	t = a > 0 ? log(x / a) / log(b / a) : (x - a) / (b - a);
	return (g->level[i] + t * (g->level[i + 1] - g->level[i])) / 100;
}

static double gaps_edge(int i) /* bin i's lower edge: 10 us * 10^(i / 16) */
{
	return 1e-5 * pow(10, i / 16.0);
}

/* F_G' = F_G / F_E at each edge, at most 1, made a CDF by a weighted isotonic regression (pool
 * adjacent violators, weights F_E^2): the rising F_G' nearest the ratio in what the replay's
 * gaps F_G' F_E would miss F_G by, squared. A ratio where F_E is tiny is noise, or (a capture's
 * gaps shorter than this server answers) past reach, and weighs next to nothing: made to rise
 * by a running greatest from below, one such (a capture's gaps of 22 us against this server's
 * one answer in a hundred that fast) had most gaps drawn at that edge, under every answer, and
 * the replay's gaps were its answers' (smbclient's capture: 119 us against 237 at the median). */
static void gaps_table(struct pv_load_gaps *s, const struct pv_playbook_workload_quantiles *g)
{
	double wy[PV_LOAD_GAPS_BINS + 1], w[PV_LOAD_GAPS_BINS + 1];
	int len[PV_LOAD_GAPS_BINS + 1], nb = 0, at = 0;
	uint64_t seen = s->b[0];

	for (int i = 0; i <= PV_LOAD_GAPS_BINS; i++) {
		double fe = (double)seen / (double)s->n,
		       fg = pv_load_quantiles_cdf(g, gaps_edge(i)), r = fe > 0 ? fg / fe : 0;

		if (i < PV_LOAD_GAPS_BINS)
			seen += s->b[i + 1];
		w[nb] = fe * fe + 1e-12;
		wy[nb] = w[nb] * (r > 1 ? 1 : r);
		len[nb++] = 1;
		/* a block over the next one pooled with it */
		while (nb > 1 && wy[nb - 2] / w[nb - 2] > wy[nb - 1] / w[nb - 1]) {
			wy[nb - 2] += wy[nb - 1];
			w[nb - 2] += w[nb - 1];
			len[nb - 2] += len[nb - 1];
			nb--;
		}
	}
	for (int k = 0; k < nb; k++)
		for (int j = 0; j < len[k]; j++)
			s->r[at++] = wy[k] / w[k];
	s->at = s->n;
}

void pv_load_gaps_add(struct pv_load_gaps *s, const struct pv_playbook_workload_quantiles *g,
		      double seconds)
{
	int i = seconds < 1e-5	? 0
		: seconds >= 10 ? PV_LOAD_GAPS_BINS + 1
				: 1 + (int)(16 * log10(seconds / 1e-5));

	s->b[i]++;
	s->n++;
	if (s->n >= PV_LOAD_GAPS_MIN && s->n - s->at >= (s->at ? PV_LOAD_GAPS_EVERY : 0))
		gaps_table(s, g);
}

double pv_load_gaps_draw(const struct pv_load_gaps *s,
			 const struct pv_playbook_workload_quantiles *g, double u)
{
	int i = 0;
	double lo, t;

	if (!s->at || g->n < 2)
		return pv_load_quantiles_draw(g, u);
	while (i <= PV_LOAD_GAPS_BINS && s->r[i] <= u)
		i++;
	if (i > PV_LOAD_GAPS_BINS) /* past 10 s: the capture's own tail */
		return pv_load_quantiles_draw(g, u);
	if (i == 0)
		return gaps_edge(0) * u / (s->r[0] > 0 ? s->r[0] : 1);
	lo = s->r[i - 1];
	t = s->r[i] > lo ? (u - lo) / (s->r[i] - lo) : 0;
	return gaps_edge(i - 1) * pow(10, t / 16.0);
}

double pv_load_gaps_draw_under(const struct pv_load_gaps *s,
			       const struct pv_playbook_workload_quantiles *g, double max,
			       struct pv_load_rng *r)
{
	double x = pv_load_gaps_draw(s, g, pv_load_rng_unit(r));

	for (int i = 0; max > 0 && x > max; i++)
		x = i < PV_LOAD_GAP_TRIES ? pv_load_gaps_draw(s, g, pv_load_rng_unit(r)) : max;
	return x;
}

void pv_load_next(struct pv_load_sched *s, double *gap, enum pv_playbook_workload_kind *kind)
{
	pv_load_next_after(s, -1, gap, kind, NULL);
}

void pv_load_next_after(struct pv_load_sched *s, int lk, double *gap,
			enum pv_playbook_workload_kind *kind, double *think)
{
	double x, th = -1;
	int k;

	if (s->pace > 0 && lk >= 0 && (unsigned)lk < s->learned->n) {
		th = s->pace *
		     pv_load_quantiles_draw(&s->learned->think, pv_load_rng_unit(&s->rng));
		*gap = s->pace * s->learned->kind[lk].seconds + th;
	} else { /* inversion: 1 - u is in (0, 1], so the logarithm is finite and the gap >= 0 */
		*gap = -s->mean * log1p(-pv_load_rng_unit(&s->rng));
	}
	if (think)
		*think = th;
	x = pv_load_rng_unit(&s->rng) * s->cum[PV_PLAYBOOK_WORKLOAD_KINDS - 1];
	for (k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS && !(x < s->cum[k]); k++)
		;
	/* x * total rounded up to total: the last kind with a weight */
	while (k == PV_PLAYBOOK_WORKLOAD_KINDS || (k > 0 && s->cum[k] == s->cum[k - 1]))
		k--;
	*kind = (enum pv_playbook_workload_kind)k;
}

double pv_load_start_at(double planned, double end, double think, double slack)
{
	double at = end + think;

	if (!(think >= 0))
		return planned;
	return at < planned - slack ? planned - slack : at > planned + slack ? planned + slack : at;
}

uint32_t pv_load_size_draw(const double *cum, const double *mean, uint32_t max,
			   struct pv_load_rng *g)
{
	double x = pv_load_rng_unit(g) * cum[PV_PLAYBOOK_WORKLOAD_SIZE_BINS - 1], lo, v, p = 0;
	int k = 0;

	while (k < PV_PLAYBOOK_WORKLOAD_SIZE_BINS - 1 && !(x < cum[k]))
		k++;
	if (!k)
		return 1; /* the empty ones, made 1 byte */
	lo = (double)(1ull << (k - 1));
	if (mean)
		p = pv_stat_octave_low_share(mean[k], lo);
	v = p > 0 && pv_load_rng_unit(g) < p ? lo : lo + pv_load_rng_unit(g) * lo;
	if (v > max)
		return max;
	return v < 1 ? 1 : (uint32_t)v;
}

unsigned pv_load_ops_batch_us(size_t users, size_t ready)
{
	size_t us = users * PV_LOAD_OPS_BATCH_US_USER;

	if (users < PV_LOAD_OPS_BATCH_USERS || !ready || ready >= PV_LOAD_OPS_BATCH)
		return 0;
	return us < PV_LOAD_OPS_BATCH_US_MIN   ? PV_LOAD_OPS_BATCH_US_MIN
	       : us > PV_LOAD_OPS_BATCH_US_MAX ? PV_LOAD_OPS_BATCH_US_MAX
					       : (unsigned)us;
}
