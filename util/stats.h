/* util/stats.h: how much of a figure is noise (docs/report.md), the one place that computes
 * it: the load driver's step figures (load/), the reports, compare, copy and sweep. Intervals
 * on counts (Poisson, exact), on proportions (Clopper-Pearson, Wilson, Newcombe's difference),
 * on quantiles (the ranks of the order statistics that hold them, distribution-free: load/
 * reads them in its histograms, pv_load_hist_ci), on the ratio of two rates, and on the
 * difference of two means with their own spreads (Welch); the distribution functions they
 * stand on.
 *
 * alpha is the chance, when nothing differs, that an interval misses the truth (0.05 for 95%
 * intervals). Pure: no I/O; every function is checked against published values in
 * tests/unit/check_util.c. */
#ifndef PV_UTIL_STATS_H
#define PV_UTIL_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Regularized lower incomplete gamma P(a, x), a > 0, x >= 0. */
double pv_stat_gamma_p(double a, double x);
/* Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1. */
double pv_stat_beta_i(double a, double b, double x);
/* Quantiles: of the standard normal, of Student's t with df degrees of freedom (df may be
 * INFINITY: the normal's), 0 < p < 1. */
double pv_stat_norm_q(double p);
double pv_stat_t_q(double p, double df);
/* P(X <= k) for X binomial (n, q). */
double pv_stat_binom_cdf(uint64_t k, uint64_t n, double q);

/* The exact (Garwood) interval on the mean of a Poisson count k. */
void pv_stat_poisson_ci(uint64_t k, double alpha, double *lo, double *hi);
/* The exact (Clopper-Pearson) interval on a proportion k of n (n 0: [0, 1]). */
void pv_stat_binom_ci(uint64_t k, uint64_t n, double alpha, double *lo, double *hi);
/* Wilson's score interval on k of n. */
void pv_stat_wilson(uint64_t k, uint64_t n, double alpha, double *lo, double *hi);
/* The difference of two proportions k1/n1 - k2/n2 and its interval (Newcombe 1998, method
 * 10: from the Wilson intervals). n1 or n2 0: *d NAN, the interval [-1, 1]. */
void pv_stat_prop_diff(uint64_t k1, uint64_t n1, uint64_t k2, uint64_t n2, double alpha, double *d,
		       double *lo, double *hi);
/* The ratio of two Poisson rates c1/t1 over c2/t2 and its exact interval (conditional on
 * c1 + c2: Clopper-Pearson on c1 of c1 + c2). No count: *ratio NAN, [0, INFINITY]. */
void pv_stat_rate_ratio(uint64_t c1, double t1, uint64_t c2, double t2, double alpha, double *ratio,
			double *lo, double *hi);
/* The ranks (from 1, the smallest first) of the order statistics of n values that hold their
 * q-quantile with chance 1 - alpha (binomial, distribution-free): *lo the largest with
 * P(X <= lo - 1) <= alpha / 2, *hi the smallest with P(X <= hi - 1) >= 1 - alpha / 2, X binomial
 * (n, q). *lo is 0 and *hi n + 1 where no rank is low or high enough (too few values to bound
 * the quantile). */
void pv_stat_rank_ci(uint64_t n, double q, double alpha, uint64_t *lo, uint64_t *hi);

/* An estimate with its noise: a variance and its degrees of freedom (INFINITY when the
 * variance is known, as from a count). */
struct pv_stat_est {
	double mean, var, df;
};
/* Of k repeated values: their mean, the variance of the mean (s^2 / k, never below floor,
 * the variance each value has on its own, divided by k), df k - 1 (INFINITY when the floor
 * was taken). k 1: var = floor, df INFINITY. */
struct pv_stat_est pv_stat_repeats(const double *x, size_t k, double floor);
/* The difference a - b and its interval (Welch-Satterthwaite degrees of freedom). */
void pv_stat_diff(struct pv_stat_est a, struct pv_stat_est b, double alpha, double *d, double *lo,
		  double *hi);

/* A power-of-two bucket [lo, 2 lo) known only by its mean, as learn keeps a size and a replay
 * draws one: the share of its values at lo, the rest spread evenly over the bucket (the one
 * shape of those two parts with that mean: 3 - 2 mean / lo, within [0, 1]). */
double pv_stat_octave_low_share(double mean, double lo);

#endif
