/* provision/trees.c: the per-user home trees (stub until the fileset lands). */
#include "provision/provision.h"

#include "util/err.h"

int pv_tree_build(struct pv_ctx *ctx, struct pv_remote *rem, struct pv_tree_stats *st)
{
	(void)ctx;
	(void)rem;
	st->skipped = true;
	return PV_OK;
}

void pv_tree_stats_print(FILE *f, const struct pv_tree_stats *st)
{
	if (st->skipped)
		fputs("server: no fileset: no home trees built\n", f);
}

void pv_tree_stats_json(FILE *f, const struct pv_tree_stats *st)
{
	fprintf(f, "\"trees\":{\"skipped\":%s}", st->skipped ? "true" : "false");
}
