/* provision/report.h: report.html, the page of one run (docs/report.md), written at the end of
 * `run` and by `provision report RUN_DIR`; and compare's page. */
#ifndef PV_PROVISION_REPORT_H
#define PV_PROVISION_REPORT_H

#include <stddef.h>

#include "results/results.h"
#include "util/buf.h"

/* The whole page of run into out. PV_OK, or PV_EIO when out of memory. */
int pv_report_page(const struct pv_res_run *run, struct pv_buf *out);

/* compare --html's page of the comparison c into out (a failure is out's, sticky). */
struct pv_cmp;
void pv_compare_page(const struct pv_cmp *c, struct pv_buf *out);

/* Read the run folder dir and write its page to path (NULL: dir/report.html). The path
 * written goes into written (cap bytes), its size into *bytes; *run, when not NULL, gets the
 * run read (the caller frees it). Errors: those of pv_res_read, PV_EIO when the page cannot
 * be written. */
int pv_report_write(const char *dir, const char *path, char *written, size_t cap, size_t *bytes,
		    struct pv_res_run **run);

#endif
