/* provision/sweep.c: `provision sweep copy|run` (sweep/sweep.h): options in; per condition the
 * median of its repeats, the difference against the baseline and whether it is beyond the
 * noise; text, JSON, sweep.txt and a report.html with a bar chart out. */
#include "provision/copy.h"
#include "provision/provision.h"

#include "json/json.h"
#include "report/report.h"
#include "sweep/sweep.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sweep_out {
	struct pv_sweep_result res;
	struct pv_ctx *ctx;
	char report[1200];
};

static const char *unit(const struct pv_sweep_result *r)
{
	return r->run ? "users carried" : "files/s";
}

static void table(const struct pv_sweep_result *r, struct pv_buf *b)
{
	pv_buf_addf(b, "%-32s %3s %26s %32s %7s %9s\n", "condition", "n", unit(r),
		    "against the baseline (95%)", "beyond", r->run ? "" : "smbd ms");
	pv_buf_addf(b, "%-32s %3s %26s %32s %7s %9s\n", "", "", "median (mean's 95%)", "", "noise",
		    r->run ? "" : "per file");
	for (size_t c = 0; c < r->nconds; c++) {
		const struct pv_sweep_cond *k = &r->conds[c];
		char v[64], d[64], cpu[16] = "-";

		if (k->n)
			snprintf(v, sizeof(v), "%.0f (%.0f-%.0f)", k->median, k->lo, k->hi);
		else
			snprintf(v, sizeof(v), "no value");
		if (c == 0 || !isfinite(k->diff))
			snprintf(d, sizeof(d), "-");
		else
			snprintf(d, sizeof(d), "%+.0f (%+.0f..%+.0f), %+.1f%%", k->diff, k->dlo,
				 k->dhi,
				 r->conds[0].median > 0 ? 100 * k->diff / r->conds[0].median : NAN);
		if (isfinite(k->cpu_per_file))
			snprintf(cpu, sizeof(cpu), "%.2f", k->cpu_per_file);
		pv_buf_addf(b, "%-32.32s %3u %26s %32s %7s %9s\n", k->label, k->n, v, d,
			    c == 0	? "-"
			    : k->beyond ? "yes"
					: "no",
			    r->run ? "" : cpu);
	}
}

static void whole_text(const struct sweep_out *o, struct pv_buf *b)
{
	const struct pv_sweep_result *r = &o->res;
	size_t done = 0;

	for (size_t i = 0; i < r->njobs; i++)
		done += r->jobs[i].code == PV_OK;
	pv_buf_addf(b, "sweep %s: %s, %zu condition%s x %zu round%s: %zu of %zu jobs done\n", r->id,
		    r->run ? "run" : "copy", r->nconds, r->nconds == 1 ? "" : "s",
		    r->nconds ? r->planned / r->nconds : 0,
		    r->nconds && r->planned / r->nconds == 1 ? "" : "s", done, r->planned);
	table(r, b);
	for (size_t c = 1; c < r->nconds; c++)
		if (r->conds[c].beyond)
			pv_buf_addf(b, "'%s' changed the %s beyond the noise (%+.1f%%)\n",
				    r->conds[c].label, unit(r),
				    100 * r->conds[c].diff / r->conds[0].median);
	pv_buf_addf(b, "applying a setting took at most %.2f s, putting it back %.2f s\n",
		    r->apply_max, r->revert_max);
	if (r->put_back[0])
		pv_buf_addf(b, "cut short: %s\n", r->put_back);
	if (r->checked_config)
		pv_buf_addf(b, "the server's configuration (testparm -s): %s%s\n",
			    r->config_same ? "the same before and after the sweep"
					   : "NOT as it was before the sweep: ",
			    r->config_same ? "" : r->config_diff);
	pv_buf_addf(b, "results: %s (sweep.txt, sweep.json, revert.txt%s); each job's in %s-*\n",
		    r->folder, o->report[0] ? ", report.html" : "", r->folder);
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct sweep_out *o = result;
	struct pv_buf b = PV_BUF_INIT;

	(void)code;
	if (ctx->env.dry_run) {
		pv_text_plan("sweep", &o->res.dry);
		return;
	}
	if (!o->res.folder[0])
		return;
	whole_text(o, &b);
	if (b.len)
		fwrite(b.data, 1, b.len, stdout);
	pv_buf_release(&b, 0);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *obj)
{
	const struct sweep_out *o = result;
	const struct pv_sweep_result *r = &o->res;
	struct pv_json *jobs;

	(void)code;
	pv_json_str(obj, "id", r->id);
	pv_json_str(obj, "job", r->run ? "run" : "copy");
	if (ctx->env.dry_run) {
		pv_json_plan(obj, &r->dry);
		return;
	}
	jobs = pv_json_array();
	pv_json_str(obj, "folder", r->folder);
	pv_json_str(obj, "unit", unit(r));
	pv_json_set(obj, "conditions", pv_sweep_conditions_json(r));
	for (size_t i = 0; i < r->njobs; i++) {
		const struct pv_sweep_job *j = &r->jobs[i];
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "id", j->id);
		pv_json_int(x, "condition", j->cond);
		pv_json_int(x, "round", j->round);
		pv_json_int(x, "exit", j->code < 0 ? -1 : j->code);
		pv_json_real(x, "value", j->value);
		pv_json_real(x, "apply_s", j->apply_s);
		pv_json_real(x, "revert_s", j->revert_s);
		pv_json_append(jobs, x);
	}
	pv_json_set(obj, "jobs", jobs);
	pv_json_real(obj, "apply_max_s", r->apply_max);
	pv_json_real(obj, "revert_max_s", r->revert_max);
	pv_json_bool(obj, "config_same", r->config_same);
	pv_json_str(obj, "config_diff", r->config_diff);
	pv_json_str(obj, "put_back", r->put_back);
	pv_json_str(obj, "report", o->report);
}

static void release(void *result)
{
	struct sweep_out *o = result;

	pv_sweep_release(&o->res);
}

/* After each copy job: its copy.txt and report.html, as `copy` writes them. */
static void copy_done(void *ctx, struct pv_run_copy_job *job, int code)
{
	struct sweep_out *o = ctx;
	struct pv_copy_view *v = calloc(1, sizeof(*v));

	if (!v)
		return;
	v->job = *job; /* borrowed: the job is released by the sweep */
	pv_copy_finish(o->ctx, v, code);
	free(v);
}

static int page(const struct sweep_out *o, struct pv_buf *b)
{
	const struct pv_sweep_result *r = &o->res;
	char title[128];
	struct pv_buf t = PV_BUF_INIT;
	const char **labels = calloc(r->nconds + 1, sizeof(*labels));
	double *v = calloc(r->nconds + 1, sizeof(*v)), *lo = calloc(r->nconds + 1, sizeof(*lo)),
	       *hi = calloc(r->nconds + 1, sizeof(*hi));
	bool *mark = calloc(r->nconds + 1, sizeof(*mark));

	if (!labels || !v || !lo || !hi || !mark) {
		free(labels), free(v), free(lo), free(hi), free(mark);
		return pv_error(PV_EIO, "out of memory");
	}
	snprintf(title, sizeof(title), "provision sweep %s", r->id);
	for (size_t c = 0; c < r->nconds; c++) {
		labels[c] = r->conds[c].label;
		v[c] = r->conds[c].median;
		lo[c] = r->conds[c].lo;
		hi[c] = r->conds[c].hi;
		mark[c] = r->conds[c].beyond;
	}
	whole_text(o, &t);
	pv_report_sweep_page(
		b, title,
		r->run ? "Users carried, per condition" : "Files per second, per condition",
		unit(r), labels, v, lo, hi, mark, r->nconds, t.data ? t.data : "", t.len);
	pv_buf_release(&t, 0);
	free(labels), free(v), free(lo), free(hi), free(mark);
	return pv_buf_failed(b) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

static int sweep(struct pv_ctx *ctx, struct pv_out *out, bool run)
{
	struct sweep_out *o;
	struct pv_sweep_opts so;
	unsigned long repeat = 3;
	int r;

	memset(&so, 0, sizeof(so));
	so.run = run;
	if ((r = pv_copy_options(ctx, &so.copy)) != PV_OK)
		return r;
	if (run && (ctx->cli.opt[OPT_FROM] || ctx->cli.opt[OPT_FILESET]))
		return pv_error(PV_EUSAGE, "sweep run takes run's options, not copy's --from or "
					   "--fileset");
	if (!run && !ctx->cli.opt[OPT_FROM] && !ctx->cli.opt[OPT_FILESET])
		return pv_error(PV_EUSAGE, "sweep copy needs the copy's source: --from FOLDER or "
					   "--fileset FILE");
	if (ctx->cli.opt[OPT_REPEAT] &&
	    ((r = pv_cli_count("--repeat", ctx->cli.opt[OPT_REPEAT], PV_SWEEP_REPEAT_MAX,
			       &repeat)) != PV_OK ||
	     repeat == 0))
		return r != PV_OK ? r
				  : pv_error(PV_EUSAGE, "--repeat is 1 to %d", PV_SWEEP_REPEAT_MAX);
	so.repeat = (unsigned)repeat;
	so.settings = ctx->cli.settings;
	so.nsettings = ctx->cli.nsettings;
	so.commands = ctx->cli.setting_commands;
	so.ncommands = ctx->cli.nsetting_commands;
	so.id = ctx->cli.opt[OPT_ID];
	so.copy.id = NULL;
	if (!(o = pv_out_result(out, run ? "sweep run" : "sweep copy", sizeof(*o), text, json,
				release)))
		return PV_EIO;
	o->ctx = ctx;
	so.copy_done = copy_done;
	so.ctx = o;
	r = pv_sweep(&ctx->env, &so, &o->res);
	if (!ctx->env.dry_run && o->res.folder[0]) {
		struct pv_buf b = PV_BUF_INIT, t = PV_BUF_INIT;

		if (page(o, &b) == PV_OK &&
		    pv_sweep_write(&ctx->env, &o->res, "report.html", b.data, b.len) == PV_OK)
			snprintf(o->report, sizeof(o->report), "%s/report.html", o->res.folder);
		whole_text(o, &t);
		if (!pv_buf_failed(&t))
			pv_sweep_write(&ctx->env, &o->res, "sweep.txt", t.data, t.len);
		pv_buf_release(&b, 0);
		pv_buf_release(&t, 0);
	}
	return r;
}

int pv_cmd_sweep_copy(struct pv_ctx *ctx, struct pv_out *out)
{
	return sweep(ctx, out, false);
}

int pv_cmd_sweep_run(struct pv_ctx *ctx, struct pv_out *out)
{
	return sweep(ctx, out, true);
}
