/* learn/hist.c: log-scale time histograms and power-of-two size histograms (see
 * learn/hist.h). */
#include "learn/hist.h"
#include "util/stats.h"

#include <math.h>

/* bin i covers [10^(-6 + i/20), 10^(-6 + (i+1)/20)) seconds */
static double edge(int i)
{
	return pow(10.0, -6.0 + (double)i / PV_LEARN_HIST_PER_DECADE);
}

void pv_learn_hist_add(struct pv_learn_hist *h, double s)
{
	double x;
	int i;

	h->n++;
	if (!(s >= 1e-6)) { /* NaN too */
		h->under++;
		return;
	}
	x = (log10(s) + 6.0) * PV_LEARN_HIST_PER_DECADE;
	if (x >= PV_LEARN_HIST_BINS) {
		h->over++;
		return;
	}
	i = (int)x;
	if (i < 0)
		i = 0;
	h->b[i]++;
}

size_t pv_learn_hist_holes(const struct pv_learn_hist *h, int min_bins, struct pv_learn_hole *out,
			   size_t max)
{
	uint64_t seen = h->under;
	size_t k = 0;
	int last = -1; /* the last bin that holds times */

	for (int i = 0; i < PV_LEARN_HIST_BINS; i++) {
		int w = i - last - 1;
		size_t at = k;

		if (!h->b[i])
			continue;
		if (last >= 0 && w >= min_bins) {
			/* kept the widest first (insertion: max is small); one no wider than the
			 * narrowest of max kept is not */
			for (; at > 0 && out[at - 1].bins < w; at--)
				if (at < max)
					out[at] = out[at - 1];
			if (at < max) {
				out[at] = (struct pv_learn_hole){(double)seen / (double)h->n,
								 sqrt(edge(last) * edge(last + 1)),
								 sqrt(edge(i) * edge(i + 1)), w};
				k += k < max;
			}
		}
		seen += h->b[i];
		last = i;
	}
	return k;
}

void pv_learn_hist_merge(struct pv_learn_hist *dst, const struct pv_learn_hist *src)
{
	dst->n += src->n;
	dst->under += src->under;
	dst->over += src->over;
	for (int i = 0; i < PV_LEARN_HIST_BINS; i++)
		dst->b[i] += src->b[i];
}

double pv_learn_hist_quantile(const struct pv_learn_hist *h, double q)
{
	uint64_t want, seen;

	if (!h->n)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* the rank of the q-quantile, 1-based: the ceiling of q n, at least 1 */
	want = (uint64_t)ceil(q * (double)h->n);
	if (want < 1)
		want = 1;
	seen = h->under;
	if (seen >= want)
		return 0;
	for (int i = 0; i < PV_LEARN_HIST_BINS; i++) {
		seen += h->b[i];
		if (seen >= want)
			return sqrt(edge(i) * edge(i + 1));
	}
	return edge(PV_LEARN_HIST_BINS);
}

uint64_t pv_learn_hist_above(const struct pv_learn_hist *h, double t)
{
	uint64_t n = h->over;

	for (int i = PV_LEARN_HIST_BINS - 1; i >= 0 && edge(i) >= t * (1 - 1e-9); i--)
		n += h->b[i];
	if (t < 1e-6)
		n = h->n - h->under;
	return n;
}

double pv_learn_hist_split(const struct pv_learn_hist *h)
{
	double total = 0, sum = 0, w0 = 0, sum0 = 0, best = -1;
	int cut = -1;

	/* the values under and over the range join the first and the last bin */
	for (int i = 0; i < PV_LEARN_HIST_BINS; i++) {
		double c = h->b[i] + (i == 0 ? (double)h->under : 0) +
			   (i == PV_LEARN_HIST_BINS - 1 ? (double)h->over : 0);

		total += c;
		sum += c * i;
	}
	if (total < 2)
		return 0;
	for (int i = 0; i < PV_LEARN_HIST_BINS - 1; i++) {
		double c = h->b[i] + (i == 0 ? (double)h->under : 0), w1, m0, m1, between;

		w0 += c;
		sum0 += c * i;
		w1 = total - w0;
		if (w0 == 0 || w1 == 0)
			continue;
		m0 = sum0 / w0;
		m1 = (sum - sum0) / w1;
		between = w0 * w1 * (m0 - m1) * (m0 - m1);
		if (between > best) {
			best = between;
			cut = i;
		}
	}
	return cut < 0 ? 0 : edge(cut + 1);
}

void pv_learn_sizes_add(struct pv_learn_sizes *s, uint64_t bytes)
{
	int k = 0;

	s->n++;
	s->total += bytes;
	while (k < PV_LEARN_SIZES_BINS - 1 && bytes >= ((uint64_t)1 << k))
		k++;
	s->b[k]++;
	s->bytes[k] += bytes;
}

uint64_t pv_learn_sizes_quantile(const struct pv_learn_sizes *s, double q)
{
	uint64_t want, seen = 0;

	if (!s->n)
		return 0;
	want = (uint64_t)ceil(q * (double)s->n);
	if (want < 1)
		want = 1;
	for (int k = 0; k < PV_LEARN_SIZES_BINS; k++) {
		seen += s->b[k];
		if (seen >= want)
			return k ? (uint64_t)1 << k : 0;
	}
	return (uint64_t)1 << (PV_LEARN_SIZES_BINS - 1);
}

double pv_learn_sizes_value(const struct pv_learn_sizes *s, double q)
{
	double want = q * (double)s->n, seen = 0, f, p, lo;
	int k = 0;

	if (!s->n)
		return 0;
	while (k < PV_LEARN_SIZES_BINS - 1 && (!s->b[k] || seen + (double)s->b[k] < want))
		seen += (double)s->b[k++];
	if (!k || !s->b[k])
		return k ? (double)((uint64_t)1 << (k - 1)) : 0;
	f = (want - seen) / (double)s->b[k];
	f = f < 0 ? 0 : f > 1 ? 1 : f;
	lo = (double)((uint64_t)1 << (k - 1));
	p = pv_stat_octave_low_share((double)s->bytes[k] / (double)s->b[k], lo);
	return f <= p ? lo : lo + lo * (f - p) / (1 - p);
}

double pv_learn_hist_ks(const struct pv_learn_hist *a, const struct pv_learn_hist *b)
{
	double ca, cb, d;

	if (!a->n || !b->n)
		return a->n || b->n ? 1 : 0;
	ca = (double)a->under / (double)a->n;
	cb = (double)b->under / (double)b->n;
	d = fabs(ca - cb);
	for (int i = 0; i < PV_LEARN_HIST_BINS; i++) {
		ca += (double)a->b[i] / (double)a->n;
		cb += (double)b->b[i] / (double)b->n;
		if (fabs(ca - cb) > d)
			d = fabs(ca - cb);
	}
	return d;
}
