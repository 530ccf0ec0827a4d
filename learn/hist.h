/* learn/hist.h: the distributions provision learn keeps, in fixed memory whatever the
 * capture's length: times on a log scale (20 bins a decade, each 12% wide, from 1 us to 10^4
 * s: far finer than Samba traffic_replay's buckets, about 2.7x wide) and sizes by powers of
 * two. Quantiles are read back from the bins (the bin's geometric middle), and a threshold
 * between the two modes of a time distribution (the gaps within an activity and those between
 * activities) is found by Otsu's method on the log scale. Pure logic.
 * It is not load/stats.h's latency histogram, on purpose: that one's buckets (24 a decade from
 * 100 us to 1000 s) are a format, written in the figures lines the clients send and in
 * load.json, which report/ and results/ read back; these reach down to 1 us (the gaps between
 * a pipelining client's requests) and up to 10^4 s (think times), and are never sent. */
#ifndef PV_LEARN_HIST_H
#define PV_LEARN_HIST_H

#include <stddef.h>
#include <stdint.h>

#define PV_LEARN_HIST_PER_DECADE 20
#define PV_LEARN_HIST_DECADES	 10 /* 1e-6 .. 1e4 s */
#define PV_LEARN_HIST_BINS	 (PV_LEARN_HIST_PER_DECADE * PV_LEARN_HIST_DECADES)

struct pv_learn_hist {
	uint64_t n;
	uint64_t under, over; /* below 1 us, above 10^4 s */
	uint32_t b[PV_LEARN_HIST_BINS];
};

void pv_learn_hist_add(struct pv_learn_hist *h, double seconds);
/* A hole of a time histogram: a run of empty bins between two that hold times; share is the
 * part of the histogram at or under the bin below it (0 to 1), lo and hi the middles of the
 * bins below and above it, seconds (as pv_learn_hist_quantile reads a bin), bins the empty
 * bins it spans. */
struct pv_learn_hole {
	double share, lo, hi;
	int bins;
};
/* h's holes of min_bins empty bins or more, the widest first (of two as wide, the lower), at
 * most max of them into out; how many. */
size_t pv_learn_hist_holes(const struct pv_learn_hist *h, int min_bins, struct pv_learn_hole *out,
			   size_t max);
/* What src holds added to dst. */
void pv_learn_hist_merge(struct pv_learn_hist *dst, const struct pv_learn_hist *src);
/* The q-quantile (0..1) of what was added, in seconds; 0 when nothing was. */
double pv_learn_hist_quantile(const struct pv_learn_hist *h, double q);
/* How many of what was added are above t seconds (by bins: those whose bin starts at t or
 * above). */
uint64_t pv_learn_hist_above(const struct pv_learn_hist *h, double t);
/* The threshold that best splits what was added into two groups on the log scale (Otsu's
 * method: the split of the largest between-group variance), in seconds at a bin's edge; 0
 * when fewer than 2 values were added. */
double pv_learn_hist_split(const struct pv_learn_hist *h);
/* The Kolmogorov-Smirnov distance between two distributions, by bins: the largest difference
 * of their cumulative shares at a bin's edge (0 to 1; 1 when only one holds anything). */
double pv_learn_hist_ks(const struct pv_learn_hist *a, const struct pv_learn_hist *b);

/* Sizes in bytes by powers of two: bin 0 holds 0, bin k holds [2^(k-1), 2^k). */
#define PV_LEARN_SIZES_BINS 34
struct pv_learn_sizes {
	uint64_t n, total;
	uint64_t b[PV_LEARN_SIZES_BINS];
	uint64_t bytes[PV_LEARN_SIZES_BINS]; /* each bucket's, summed: its mean */
};
void pv_learn_sizes_add(struct pv_learn_sizes *s, uint64_t bytes);
/* The q-quantile's bin as its upper bound in bytes (2^k), 0 for nothing or zeros. */
uint64_t pv_learn_sizes_quantile(const struct pv_learn_sizes *s, double q);
/* The q-quantile in bytes, within its bin as a replay draws from it: the bin's share at its
 * low edge that its mean calls for, the rest spread evenly (pv_stat_octave_low_share). Unlike
 * the bin's bound, it moves little when a share crosses a bin's edge (0 for nothing). */
double pv_learn_sizes_value(const struct pv_learn_sizes *s, double q);

#endif
