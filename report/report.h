/* report/report.h: the pages of results (docs/report.md), each a file that stands alone
 * (report/html.h): report.html, the page of one run, written at the end of `run` and by
 * `provision report RUN_DIR`; a copy job's report.html; compare --html's page, and the words
 * of a comparison that compare's text shares with its page; sweep's page. The answer's words are
 * load/answer.h's, the plots util/plot.h's, the figures the one model of a step's (load/summary.h)
 * as results/ reads them. Pure but pv_report_write: no printing, no exit. */
#ifndef PV_REPORT_REPORT_H
#define PV_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "results/compare.h"
#include "results/results.h"
#include "util/buf.h"

/* The whole page of run into out. PV_OK, or PV_EIO when out of memory. */
int pv_report_page(const struct pv_results_run *run, struct pv_buf *out);

/* Read the run folder dir and write its page to path (NULL: dir/report.html) whole
 * (util/file.h). The path written goes into written (cap bytes), its size into *bytes; *run,
 * when not NULL, gets the run read (the caller frees it). Errors: those of pv_results_read, PV_EIO
 * when the page cannot be written. */
int pv_report_write(const char *dir, const char *path, char *written, size_t cap, size_t *bytes,
		    struct pv_results_run **run);

/* A copy job's report.html (run/copy.h): what bounds it (verdict, the face's words) and its
 * files/s with their interval beside its figures. PV_EIO when out of memory. */
struct pv_run_copy_job;
int pv_report_copy_page(const struct pv_run_copy_job *j, const char *verdict, double rate,
			double lo, double hi, struct pv_buf *out);

/* sweep's report.html: a bar per condition (labels, v, whiskers lo to hi, filled: beyond the
 * noise against the first; util/plot.h's pv_plot_bars) under chart's title in unit, then the
 * sweep's text (len bytes) as it is. A failure is out's, sticky. */
void pv_report_sweep_page(struct pv_buf *out, const char *title, const char *chart,
			  const char *unit, const char *const *labels, const double *v,
			  const double *lo, const double *hi, const bool *filled, size_t n,
			  const char *text, size_t len);

/* compare --html's page of the comparison c into out (a failure is out's, sticky). */
void pv_report_compare_page(const struct pv_results_cmp *c, struct pv_buf *out);

/* A comparison's words, for its text and its page. A figure with its interval, prec digits:
 * "3.68 [3.41-3.96]" ("-" when the group has none). */
void pv_report_cmp_fig(const struct pv_results_cmp_fig *f, int prec, char *out, size_t cap);
/* Group g's difference from the first for figure k at S: "+0.5 % [-9.8, +11.9] same", or "not
 * compared (client-bound)". */
void pv_report_cmp_diff(const struct pv_results_cmp_step *S, size_t g, enum pv_results_cmp_figure k,
			char *out, size_t cap);
/* Group g's answer: "B carried 40 to 60 users (across its 3 repeats)" (load/answer.h). */
void pv_report_cmp_answer(const struct pv_results_cmp *c, size_t g, char *out, size_t cap);
/* The figures' labels in a table: "scen/s", "overload %", "median ms", "p95 ms". */
extern const char *const pv_report_cmp_labels[PV_RESULTS_CMP_FIGS];

#endif
