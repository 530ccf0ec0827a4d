/* report/internal.h: what the files of report.html share and nobody else uses. */
#ifndef PV_REPORT_INTERNAL_H
#define PV_REPORT_INTERNAL_H

#include "report/html.h"
#include "report/report.h"

#define NOT_RECORDED "not recorded in this run"

/* "<p class="na">what</p>": what the run did not record, said so. */
void pv_report_na(struct pv_buf *b, const char *what);

/* The page's sections that have a file of their own: the whole run over time
 * (timeline.c); the settings and versions, and the errors (settings.c). */
void pv_report_over_time(struct pv_buf *b, const struct pv_results_run *run);
void pv_report_settings(struct pv_buf *b, const struct pv_results_run *run);
void pv_report_errors(struct pv_buf *b, const struct pv_results_run *run);

#endif
