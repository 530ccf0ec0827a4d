/* results/compare.h: runs of the built-in driver side by side (`provision compare`,
 * docs/report.md). Runs are given in groups: a group is one setting, run once or repeated.
 * Steps are matched by their users; for every step all groups have, and every figure
 * (throughput, overload, latency median and p95), each group's estimate with its 95%
 * interval, and against the first group the difference, its interval and whether it is
 * larger than the noise:
 *
 * - one run each: throughput as two Poisson counts over their measured seconds (the exact
 *   interval on the ratio of the rates), overload as two proportions of the scenarios
 *   started (Newcombe's interval on the difference), a latency quantile from each run's
 *   histograms (the distribution-free interval of each; different when they do not overlap);
 * - repeats: the spread across the repeats (Welch's interval on the difference of the
 *   means), never taken below what a single run's own noise is.
 *
 * A step where a run was client-bound (its clients were the limit, load.json's client_bound)
 * measured the clients, not the server: its figures are shown, but no difference there is
 * weighed as the server's, and it does not decide whether the answers differ.
 *
 * The difference's interval is widened for the number of steps compared (Bonferroni: alpha
 * 0.05 / steps), so that across all the steps of two runs of one setting a difference is
 * called by chance at most 5% of the time. Then each group's answer (the most users carried)
 * and whether its difference from the first group's is real: at a step one carried and the
 * other did not, the overload or the errors differ beyond the noise, or users did not log on.
 * And what differs between the runs: settings, server configuration, versions.
 *
 * Pure: runs in (read with pv_results_read), a comparison out. */
#ifndef PV_RESULTS_COMPARE_H
#define PV_RESULTS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "results/results.h"

/* The steps of all the runs compared together, at most: a step read costs about 20 KiB (its
 * histograms), so the runs compare reads cost 400 MiB at most. */
#define PV_RESULTS_CMP_STEPS_MAX 20000

enum pv_results_cmp_figure {
	PV_RESULTS_CMP_RATE,
	PV_RESULTS_CMP_OVERLOAD,
	PV_RESULTS_CMP_MEDIAN,
	PV_RESULTS_CMP_P95,
	PV_RESULTS_CMP_FIGS
};

/* "throughput", "overload", "median", "p95" */
extern const char *const pv_results_cmp_names[PV_RESULTS_CMP_FIGS];
/* the unit of a figure ("scen/s", "%", "ms") and of its difference ("%", "pp", "ms") */
extern const char *const pv_results_cmp_units[PV_RESULTS_CMP_FIGS];
extern const char *const pv_results_cmp_diff_units[PV_RESULTS_CMP_FIGS];

enum pv_results_cmp_verdict {
	PV_RESULTS_CMP_NA,     /* no interval to judge by (no histogram, nothing started) */
	PV_RESULTS_CMP_SAME,   /* within the noise */
	PV_RESULTS_CMP_HIGHER, /* this group's is higher, beyond the noise */
	PV_RESULTS_CMP_LOWER
};
extern const char *const pv_results_cmp_verdicts[]; /* "n/a", "same", "higher", "lower" */

struct pv_results_cmp_fig {
	bool have;	  /* the group has this figure at this step */
	double v, lo, hi; /* the estimate and its 95% interval (lo, hi NAN when unknown) */
	/* against the first group (groups after it) */
	double d, dlo, dhi; /* the difference (diff_units) and its widened interval */
	enum pv_results_cmp_verdict verdict;
};

struct pv_results_cmp_step {
	unsigned users;
	struct pv_results_cmp_fig *fig; /* [group * PV_RESULTS_CMP_FIGS + figure] */
	double *cpu;			/* [group]: the server's mean CPU %, NAN when not watched */
	bool *carried;			/* [group]: every run of the group carried the step */
	bool *client_bound;		/* [group]: a run of the group was client-bound there */
	/* no group client-bound there; else note says who was the limit ("B was
	 * client-bound (cli2: its busiest loop at 95% of a core, loop lag p95 150 ms)"), each
	 * group's figures are shown, and a group's difference from the first is weighed only
	 * where neither was (pv_results_cmp_weighed; verdicts n/a otherwise) */
	bool compared;
	char note[256];
};

/* Whether group g's difference from the first is weighed at S: neither was client-bound. */
bool pv_results_cmp_weighed(const struct pv_results_cmp_step *S, size_t g);

struct pv_results_cmp_group {
	char label[8]; /* "A", "B", ... */
	const struct pv_results_run **runs;
	size_t nruns;
	unsigned answer_lo, answer_hi; /* the answers of its runs (users; 0: carried none) */
	bool answer_at_least; /* a run's step over its answer was client-bound: a lower bound */
	/* against the first group (groups after it) */
	long answer_diff;     /* users: this group's (lowest) answer minus the first's */
	bool answer_real;     /* the difference is beyond the noise */
	char answer_why[512]; /* what says so, or why not */
};

/* A setting whose value differs between the runs: values[run] in the order given. */
struct pv_results_cmp_setting {
	char key[128];
	char **values; /* "" when the run does not say; "not recorded in this run" */
};

struct pv_results_cmp {
	struct pv_results_cmp_group *groups;
	size_t ngroups;
	const struct pv_results_run **runs; /* all, in the order given */
	size_t nruns;
	double alpha;	  /* per step compared, after the widening */
	size_t ncompared; /* steps where a difference is weighed (pv_results_cmp_weighed) */
	struct pv_results_cmp_step *steps; /* users rising */
	size_t nsteps;
	char *uncommon; /* steps some group lacks, one line each ("A has 40 users, B not") */
	struct pv_results_cmp_setting *settings;
	size_t nsettings;
	/* how many (step, figure, group) differences are beyond the noise; of throughput */
	unsigned differ, differ_rate;
};

/* Compare runs[0..nruns) grouped by group[i] (0, 1, ... in order of first appearance; at
 * least two groups). PV_ECONFIG, the reason recorded, when they cannot be compared: a run
 * of another driver than builtin or without load figures, drivers that differ, no step
 * (users) that every group has; PV_EUSAGE for more than PV_RESULTS_CMP_STEPS_MAX steps in all. Its
 * work is n log n in the steps and the settings, whatever the runs hold. */
int pv_results_cmp_build(const struct pv_results_run *const *runs, const size_t *group,
			 size_t nruns, struct pv_results_cmp **out);
void pv_results_cmp_free(struct pv_results_cmp *c);

#endif
