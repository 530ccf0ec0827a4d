/* util/stats.c: intervals and the distributions under them (see stats.h). The incomplete
 * gamma and beta functions are the classic series and continued fractions (Press et al.,
 * Numerical Recipes, 6.2 and 6.4, Lentz's method); quantiles are found by bisection, which
 * is slow next to a closed form but exact to the last bits and never fails to converge: a
 * report computes a few thousand of them. */
#include "util/stats.h"

#include <float.h>
#include <math.h>

#define ITMAX 100000 /* the beta fraction needs about sqrt(a + b) turns */
#define EPS   1e-15
#define TINY  1e-300

/* ---- distributions ---- */

/* Lentz's method keeps its terms away from 0 */
static double nonzero(double v)
{
	return fabs(v) < TINY ? TINY : v;
}

static double gamma_series(double a, double x)
{
	double ap = a, sum = 1.0 / a, del = sum;

	for (int n = 0; n < ITMAX; n++) {
		ap += 1;
		del *= x / ap;
		sum += del;
		if (fabs(del) < fabs(sum) * EPS)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) = 1 - P(a, x) by its continued fraction (x >= a + 1) */
static double gamma_cf(double a, double x)
{
	double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d;

	for (int i = 1; i < ITMAX; i++) {
		double an = -i * (i - a), del;

		b += 2;
		d = 1 / nonzero(an * d + b);
		c = nonzero(b + an / c);
		del = d * c;
		h *= del;
		if (fabs(del - 1) < EPS)
			break;
	}
	return exp(-x + a * log(x) - lgamma(a)) * h;
}

double pv_stat_gamma_p(double a, double x)
{
	if (!(x > 0))
		return 0;
	if (isinf(x))
		return 1;
	return x < a + 1 ? gamma_series(a, x) : 1 - gamma_cf(a, x);
}

static double beta_cf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 / nonzero(1 - qab * x / qap),
	       h = d;

	for (int m = 1; m < ITMAX; m++) {
		int m2 = 2 * m;
		double aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;

		/* the even step, then the odd one */
		d = 1 / nonzero(1 + aa * d);
		c = nonzero(1 + aa / c);
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 / nonzero(1 + aa * d);
		c = nonzero(1 + aa / c);
		del = d * c;
		h *= del;
		if (fabs(del - 1) < EPS)
			break;
	}
	return h;
}

double pv_stat_beta_i(double a, double b, double x)
{
	double front;

	if (!(x > 0))
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	/* the continued fraction converges fast for x < (a + 1) / (a + b + 2) */
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

static double norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* The x in [lo, hi] where the increasing f(x, arg) crosses p. */
static double solve(double (*f)(double, const double *), const double *arg, double p, double lo,
		    double hi)
{
	for (int i = 0; i < 200 && hi - lo > fabs(lo) * 1e-15 + 1e-300; i++) {
		double mid = lo + (hi - lo) / 2;

		if (f(mid, arg) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

static double norm_f(double x, const double *arg)
{
	(void)arg;
	return norm_cdf(x);
}

double pv_stat_norm_q(double p)
{
	if (!(p > 0))
		return -INFINITY;
	if (!(p < 1))
		return INFINITY;
	return solve(norm_f, NULL, p, -40, 40);
}

static double t_cdf(double t, const double *df)
{
	double tail = 0.5 * pv_stat_beta_i(*df / 2, 0.5, *df / (*df + t * t));

	return t >= 0 ? 1 - tail : tail;
}

double pv_stat_t_q(double p, double df)
{
	double hi = 1;

	if (isinf(df) || df > 1e7)
		return pv_stat_norm_q(p);
	if (!(p > 0))
		return -INFINITY;
	if (!(p < 1))
		return INFINITY;
	if (p < 0.5)
		return -pv_stat_t_q(1 - p, df);
	while (t_cdf(hi, &df) < p && hi < 1e300)
		hi *= 2;
	return solve(t_cdf, &df, p, 0, hi);
}

double pv_stat_binom_cdf(uint64_t k, uint64_t n, double q)
{
	if (k >= n)
		return 1;
	if (q <= 0)
		return 1;
	if (q >= 1)
		return 0;
	return pv_stat_beta_i((double)(n - k), (double)k + 1, 1 - q);
}

/* ---- intervals ---- */

static double gamma_f(double x, const double *a)
{
	return pv_stat_gamma_p(*a, x);
}

static double gamma_q(double p, double a)
{
	double hi = a + 10;

	while (pv_stat_gamma_p(a, hi) < p)
		hi *= 2;
	return solve(gamma_f, &a, p, 0, hi);
}

void pv_stat_poisson_ci(uint64_t k, double alpha, double *lo, double *hi)
{
	*lo = k ? gamma_q(alpha / 2, (double)k) : 0;
	*hi = gamma_q(1 - alpha / 2, (double)k + 1);
}

static double beta_f(double x, const double *ab)
{
	return pv_stat_beta_i(ab[0], ab[1], x);
}

static double beta_q(double p, double a, double b)
{
	double ab[2] = {a, b};

	return solve(beta_f, ab, p, 0, 1);
}

void pv_stat_binom_ci(uint64_t k, uint64_t n, double alpha, double *lo, double *hi)
{
	if (!n || k > n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	*lo = k ? beta_q(alpha / 2, (double)k, (double)(n - k) + 1) : 0;
	*hi = k < n ? beta_q(1 - alpha / 2, (double)k + 1, (double)(n - k)) : 1;
}

void pv_stat_wilson(uint64_t k, uint64_t n, double alpha, double *lo, double *hi)
{
	double z = pv_stat_norm_q(1 - alpha / 2), p, nn = (double)n, den, mid, half;

	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / nn;
	den = 1 + z * z / nn;
	mid = (p + z * z / (2 * nn)) / den;
	half = z * sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / den;
	*lo = fmax(0, mid - half);
	*hi = fmin(1, mid + half);
}

void pv_stat_prop_diff(uint64_t k1, uint64_t n1, uint64_t k2, uint64_t n2, double alpha, double *d,
		       double *lo, double *hi)
{
	double p1, p2, l1, u1, l2, u2;

	if (!n1 || !n2) {
		*d = NAN;
		*lo = -1;
		*hi = 1;
		return;
	}
	p1 = (double)k1 / (double)n1;
	p2 = (double)k2 / (double)n2;
	pv_stat_wilson(k1, n1, alpha, &l1, &u1);
	pv_stat_wilson(k2, n2, alpha, &l2, &u2);
	*d = p1 - p2;
	*lo = *d - sqrt((p1 - l1) * (p1 - l1) + (u2 - p2) * (u2 - p2));
	*hi = *d + sqrt((u1 - p1) * (u1 - p1) + (p2 - l2) * (p2 - l2));
}

void pv_stat_rate_ratio(uint64_t c1, double t1, uint64_t c2, double t2, double alpha, double *ratio,
			double *lo, double *hi)
{
	double pl, pu;

	if (!(c1 + c2) || !(t1 > 0) || !(t2 > 0)) {
		*ratio = NAN;
		*lo = 0;
		*hi = INFINITY;
		return;
	}
	*ratio = c2 ? ((double)c1 / t1) / ((double)c2 / t2) : INFINITY;
	pv_stat_binom_ci(c1, c1 + c2, alpha, &pl, &pu);
	*lo = pl / (1 - pl) * t2 / t1;
	*hi = pu < 1 ? pu / (1 - pu) * t2 / t1 : INFINITY;
}

void pv_stat_rank_ci(uint64_t n, double q, double alpha, uint64_t *lo, uint64_t *hi)
{
	uint64_t a, b;

	/* lo: the largest rank with P(X <= lo - 1) <= alpha / 2, X ~ binomial(n, q): the lo-th
	 * smallest value is at or below the quantile with chance at least 1 - alpha / 2 */
	for (a = 0, b = n + 1; a + 1 < b;) {
		uint64_t m = a + (b - a) / 2;

		if (pv_stat_binom_cdf(m - 1, n, q) <= alpha / 2)
			a = m;
		else
			b = m;
	}
	*lo = a;
	/* hi: the smallest rank with P(X <= hi - 1) >= 1 - alpha / 2 */
	for (a = 0, b = n + 1; a + 1 < b;) {
		uint64_t m = a + (b - a) / 2;

		if (pv_stat_binom_cdf(m - 1, n, q) >= 1 - alpha / 2)
			b = m;
		else
			a = m;
	}
	*hi = b; /* n + 1 when no rank is high enough */
}

/* ---- spreads ---- */

struct pv_stat_est pv_stat_repeats(const double *x, size_t k, double floor)
{
	struct pv_stat_est e = {NAN, NAN, INFINITY};
	double s2 = 0;

	if (!k)
		return e;
	e.mean = 0;
	for (size_t i = 0; i < k; i++)
		e.mean += x[i];
	e.mean /= (double)k;
	for (size_t i = 0; i < k; i++)
		s2 += (x[i] - e.mean) * (x[i] - e.mean);
	if (k > 1 && s2 / (double)(k - 1) > floor) {
		e.var = s2 / (double)(k - 1) / (double)k;
		e.df = (double)(k - 1);
	} else {
		e.var = floor / (double)k;
	}
	return e;
}

void pv_stat_diff(struct pv_stat_est a, struct pv_stat_est b, double alpha, double *d, double *lo,
		  double *hi)
{
	double v = a.var + b.var, den = 0, df, t;

	*d = a.mean - b.mean;
	if (!(v > 0)) {
		*lo = *hi = *d;
		return;
	}
	if (!isinf(a.df))
		den += a.var * a.var / a.df;
	if (!isinf(b.df))
		den += b.var * b.var / b.df;
	df = den > 0 ? v * v / den : INFINITY;
	t = pv_stat_t_q(1 - alpha / 2, df);
	*lo = *d - t * sqrt(v);
	*hi = *d + t * sqrt(v);
}

double pv_stat_octave_low_share(double mean, double lo)
{
	double p = lo > 0 && mean > 0 ? 3 - 2 * mean / lo : 0;

	return p < 0 ? 0 : p > 1 ? 1 : p;
}
