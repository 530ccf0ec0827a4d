/* provision/copy.h: what `copy` shows of a copy job (run/copy.h), shared with `sweep`: its
 * text (stdout and copy.txt); its page (report.html) is report/report.h's. */
#ifndef PV_PROVISION_COPY_H
#define PV_PROVISION_COPY_H

#include "results/copy.h"
#include "run/copy.h"
#include "util/buf.h"

struct pv_ctx;

struct pv_copy_view {
	struct pv_run_copy_job job;
	struct pv_results_copy_facts facts;
	enum pv_results_copy_bound bound;
	char verdict[1024];
	double rate, lo, hi; /* files/s and its interval */
	char report[1200];   /* report.html, where it went ("" when not written) */
};

/* The options of `copy` (and of `sweep copy`) into o. */
int pv_copy_options(struct pv_ctx *ctx, struct pv_run_copy_opts *o);
/* After the job (its outcome r): the figures and verdict, copy.txt and report.html written
 * into its folder; r again. */
int pv_copy_finish(struct pv_ctx *ctx, struct pv_copy_view *v, int r);
void pv_copy_text(const struct pv_copy_view *v, struct pv_buf *out);

#endif
