/* provision/report.c: `provision report RUN_DIR`: the run's folder read and its page written
 * (report/report.h), what was written shown as text or JSON. */
#include "provision/provision.h"

#include "report/report.h"
#include "util/err.h"

#include <stdio.h>
#include <string.h>

struct report_out {
	char dir[1024];
	char path[1100];
	size_t bytes;
	struct pv_results_run *run;
};

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct report_out *o = result;

	(void)ctx;
	if (code != PV_OK || !o->run)
		return;
	printf("report: %s (%.0f KiB; run %s, driver %s, %zu step%s)\n", o->path,
	       (double)o->bytes / 1024, o->run->id, o->run->driver, o->run->nsteps,
	       o->run->nsteps == 1 ? "" : "s");
	if (o->run->answer[0])
		printf("%s\n", o->run->answer);
	if (o->run->notes)
		printf("could not read:\n%s", o->run->notes);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *j)
{
	const struct report_out *o = result;

	(void)ctx;
	pv_json_str(j, "folder", o->dir[0] ? o->dir : NULL);
	pv_json_str(j, "report", code == PV_OK ? o->path : NULL);
	pv_json_int(j, "bytes", code == PV_OK ? (long long)o->bytes : 0);
	pv_json_str(j, "run_id", o->run ? o->run->id : NULL);
	pv_json_str(j, "driver", o->run ? o->run->driver : NULL);
	pv_json_int(j, "steps", o->run ? (long long)o->run->nsteps : 0);
	pv_json_str(j, "answer", o->run && o->run->answer[0] ? o->run->answer : NULL);
	pv_json_str(j, "notes", o->run ? o->run->notes : NULL);
}

static void release(void *result)
{
	pv_results_free(((struct report_out *)result)->run);
}

int pv_cmd_report(struct pv_ctx *ctx, struct pv_out *out)
{
	struct report_out *o = pv_out_result(out, "report", sizeof(*o), text, json, release);

	if (!o)
		return PV_EIO;
	if (ctx->cli.nargs != 1)
		return pv_error(PV_EUSAGE, "report needs one run folder: provision report RUN_DIR "
					   "(<controller.results>/<run-id>)");
	snprintf(o->dir, sizeof(o->dir), "%s", ctx->cli.args[0]);
	return pv_report_write(o->dir, ctx->cli.opt[OPT_HTML], o->path, sizeof(o->path), &o->bytes,
			       &o->run);
}
