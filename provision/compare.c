/* provision/compare.c: `provision compare RUN_A RUN_B [RUN_C...] [--html FILE]`: runs read
 * (results/results.h), weighed (results/compare.h), and shown as text, JSON or a page
 * (report/report.h, whose words the text shares). */
#include "provision/provision.h"

#include "report/report.h"
#include "results/compare.h"
#include "util/err.h"
#include "util/file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_RUNS 64

struct compare_out {
	struct pv_results_run *runs[MAX_RUNS];
	size_t group[MAX_RUNS];
	size_t nruns;
	struct pv_results_cmp *c;
	char html[1100];
	size_t html_bytes;
};

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct compare_out *o = result;
	const struct pv_results_cmp *c = o->c;
	char buf[160];

	(void)ctx;
	(void)code;
	if (!c)
		return;
	for (size_t g = 0; g < c->ngroups; g++) {
		printf("%s:", c->groups[g].label);
		for (size_t i = 0; i < c->groups[g].nruns; i++)
			printf(" %s (%s)", c->groups[g].runs[i]->id, c->groups[g].runs[i]->dir);
		printf("\n");
	}
	if (c->ncompared)
		printf("noise: 95%% intervals; a difference is beyond the noise when its interval, "
		       "widened over the %zu steps compared (%.4g per step), leaves out 0\n",
		       c->ncompared, c->alpha);
	else
		printf("noise: 95%% intervals; no step is compared as the server's\n");
	if (c->ncompared < c->nsteps)
		printf("%zu step%s not compared: a run was client-bound there (its clients were "
		       "the "
		       "limit, not the server)\n",
		       c->nsteps - c->ncompared, c->nsteps - c->ncompared == 1 ? "" : "s");
	printf("\n");
	printf("%6s  %-10s", "users", "figure");
	for (size_t g = 0; g < c->ngroups; g++)
		printf("  %-24s", c->groups[g].label);
	for (size_t g = 1; g < c->ngroups; g++)
		printf("  %s-%s", c->groups[g].label, c->groups[0].label);
	printf("\n");
	for (size_t s = 0; s < c->nsteps; s++) {
		const struct pv_results_cmp_step *S = &c->steps[s];

		for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++) {
			if (f)
				printf("%6s  %-10s", "", pv_report_cmp_labels[f]);
			else
				printf("%6u  %-10s", S->users, pv_report_cmp_labels[f]);
			for (size_t g = 0; g < c->ngroups; g++) {
				/* rates and percents to 0.01, milliseconds to 0.1 */
				pv_report_cmp_fig(&S->fig[g * PV_RESULTS_CMP_FIGS + f],
						  f <= PV_RESULTS_CMP_OVERLOAD ? 2 : 1, buf,
						  sizeof(buf));
				printf("  %-24s", buf);
			}
			for (size_t g = 1; g < c->ngroups; g++) {
				pv_report_cmp_diff(S, g, (enum pv_results_cmp_figure)f, buf,
						   sizeof(buf));
				printf("  %s", buf);
			}
			printf("\n");
		}
		printf("%6s  %-10s", "", "carried");
		for (size_t g = 0; g < c->ngroups; g++)
			printf("  %-24s", S->client_bound[g] ? "no: client-bound"
					  : S->carried[g]    ? "yes"
							     : "no");
		printf("\n%6s  %-10s", "", "server CPU");
		for (size_t g = 0; g < c->ngroups; g++) {
			if (isnan(S->cpu[g]))
				snprintf(buf, sizeof(buf), "not watched");
			else
				snprintf(buf, sizeof(buf), "%.1f%%", S->cpu[g]);
			printf("  %-24s", buf);
		}
		printf("\n");
		if (!S->compared)
			printf("%6s  not compared as the server's: %s: the clients were the limit, "
			       "not the server\n",
			       "", S->note);
	}
	if (c->uncommon && c->uncommon[0])
		printf("\nsteps left out (not in every run):\n%s", c->uncommon);
	printf("\nanswers:\n");
	for (size_t g = 0; g < c->ngroups; g++) {
		pv_report_cmp_answer(c, g, buf, sizeof(buf));
		printf("  %s", buf);
		if (g)
			printf("; %+ld against %s: %s%s", c->groups[g].answer_diff,
			       c->groups[0].label,
			       c->groups[g].answer_diff || c->groups[g].answer_real
				       ? (c->groups[g].answer_real ? "real: " : "not shown real: ")
				       : "",
			       c->groups[g].answer_why);
		printf("\n");
	}
	printf("\nwhat differs between the runs:\n");
	if (!c->nsettings)
		printf("  nothing recorded differs\n");
	for (size_t i = 0; i < c->nsettings; i++) {
		printf("  %s:", c->settings[i].key);
		for (size_t r = 0; r < c->nruns; r++)
			printf("%s %s", r ? ";" : "",
			       c->settings[i].values[r][0] ? c->settings[i].values[r] : "-");
		printf("\n");
	}
	printf("\n");
	if (c->differ_rate)
		printf("throughput differs beyond the noise at %u step%s\n", c->differ_rate,
		       c->differ_rate == 1 ? "" : "s");
	else
		printf("no step's throughput differs beyond the noise\n");
	printf("%u difference%s beyond the noise in all (throughput, overload, median, p95)\n",
	       c->differ, c->differ == 1 ? "" : "s");
	if (o->html[0])
		printf("page: %s (%.0f KiB)\n", o->html, (double)o->html_bytes / 1024);
}

static void fig_json(struct pv_json *o, const char *key, const struct pv_results_cmp_fig *f,
		     bool vs)
{
	struct pv_json *j = pv_json_object();

	pv_json_real(j, "value", f->have ? f->v : NAN);
	pv_json_real(j, "low", f->lo);
	pv_json_real(j, "high", f->hi);
	if (vs) {
		pv_json_real(j, "diff", f->d);
		pv_json_real(j, "diff_low", f->dlo);
		pv_json_real(j, "diff_high", f->dhi);
		pv_json_str(j, "verdict", pv_results_cmp_verdicts[f->verdict]);
	}
	pv_json_set(o, key, j);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct compare_out *out = result;
	const struct pv_results_cmp *c = out->c;
	struct pv_json *groups = pv_json_array(), *steps = pv_json_array(),
		       *settings = pv_json_array();

	(void)ctx;
	(void)code;
	if (!c) {
		pv_json_set(o, "groups", groups);
		pv_json_set(o, "steps", steps);
		pv_json_free(settings);
		return;
	}
	pv_json_real(o, "alpha", c->alpha);
	pv_json_int(o, "compared_steps", (long long)c->ncompared);
	for (size_t g = 0; g < c->ngroups; g++) {
		const struct pv_results_cmp_group *G = &c->groups[g];
		struct pv_json *j = pv_json_object(), *runs = pv_json_array(),
			       *a = pv_json_object();

		pv_json_str(j, "label", G->label);
		for (size_t i = 0; i < G->nruns; i++) {
			struct pv_json *r = pv_json_object();

			pv_json_str(r, "folder", G->runs[i]->dir);
			pv_json_str(r, "id", G->runs[i]->id);
			pv_json_str(r, "answer", G->runs[i]->answer);
			pv_json_append(runs, r);
		}
		pv_json_set(j, "runs", runs);
		pv_json_int(a, "users_low", G->answer_lo);
		pv_json_int(a, "users_high", G->answer_hi);
		pv_json_bool(a, "at_least", G->answer_at_least);
		if (g) {
			pv_json_int(a, "diff", G->answer_diff);
			pv_json_bool(a, "real", G->answer_real);
			pv_json_str(a, "why", G->answer_why);
		}
		pv_json_set(j, "answer", a);
		pv_json_append(groups, j);
	}
	pv_json_set(o, "groups", groups);
	for (size_t s = 0; s < c->nsteps; s++) {
		const struct pv_results_cmp_step *S = &c->steps[s];
		struct pv_json *j = pv_json_object(), *gs = pv_json_array();

		pv_json_int(j, "users", S->users);
		pv_json_bool(j, "compared", S->compared);
		pv_json_str(j, "note", S->compared ? NULL : S->note);
		for (size_t g = 0; g < c->ngroups; g++) {
			struct pv_json *x = pv_json_object();

			pv_json_str(x, "label", c->groups[g].label);
			pv_json_bool(x, "carried", S->carried[g]);
			pv_json_bool(x, "client_bound", S->client_bound[g]);
			pv_json_real(x, "server_cpu_pct", S->cpu[g]);
			for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++)
				fig_json(x, pv_results_cmp_names[f],
					 &S->fig[g * PV_RESULTS_CMP_FIGS + f], g > 0);
			pv_json_append(gs, x);
		}
		pv_json_set(j, "groups", gs);
		pv_json_append(steps, j);
	}
	pv_json_set(o, "steps", steps);
	pv_json_int(o, "differ", c->differ);
	pv_json_int(o, "differ_throughput", c->differ_rate);
	for (size_t i = 0; i < c->nsettings; i++) {
		struct pv_json *j = pv_json_object(), *v = pv_json_array();

		pv_json_str(j, "key", c->settings[i].key);
		for (size_t r = 0; r < c->nruns; r++)
			pv_json_append_str(v, c->settings[i].values[r]);
		pv_json_set(j, "values", v);
		pv_json_append(settings, j);
	}
	pv_json_set(o, "settings", settings);
	pv_json_str(o, "uncommon", c->uncommon && c->uncommon[0] ? c->uncommon : NULL);
	pv_json_str(o, "html", out->html[0] ? out->html : NULL);
}

static void release(void *result)
{
	struct compare_out *o = result;

	pv_results_cmp_free(o->c);
	for (size_t i = 0; i < o->nruns; i++)
		pv_results_free(o->runs[i]);
}

/* One folder of a group: a run's, or a folder of repeats (`run --repeat`, its repeats.txt)
 * whose runs all join the group. */
static int read_runs(struct compare_out *o, const char *dir, size_t a, size_t *steps)
{
	char names[MAX_RUNS][64], one[1100];
	size_t n = 0;
	int r;
	bool repeats = false;

	{
		char probe[1100];
		struct stat sb;

		snprintf(probe, sizeof(probe), "%s/manifest.json", dir);
		if (lstat(probe, &sb) != 0 && pv_results_repeats(dir, names, MAX_RUNS, &n) == PV_OK)
			repeats = true;
	}
	for (size_t i = 0; i < (repeats ? n : 1); i++) {
		if (o->nruns == MAX_RUNS)
			return pv_error(PV_EUSAGE, "more than %d runs", MAX_RUNS);
		if (repeats) {
			size_t l = strlen(dir);
			const char *slash;

			while (l > 1 && dir[l - 1] == '/') /* "X/": X's parent holds the runs */
				l--;
			slash = memrchr(dir, '/', l);
			snprintf(one, sizeof(one), "%.*s%s", slash ? (int)(slash - dir + 1) : 0,
				 dir, names[i]);
		} else {
			snprintf(one, sizeof(one), "%s", dir);
		}
		if ((r = pv_results_read(one, &o->runs[o->nruns])) != PV_OK)
			return r;
		*steps += o->runs[o->nruns]->nsteps;
		if (*steps > PV_RESULTS_CMP_STEPS_MAX) {
			o->nruns++;
			return pv_error(
				PV_EUSAGE,
				"the runs up to '%s' hold %zu steps together, more than the "
				"%d compare reads; compare fewer runs",
				one, *steps, PV_RESULTS_CMP_STEPS_MAX);
		}
		o->group[o->nruns++] = a;
	}
	return PV_OK;
}

int pv_cmd_compare(struct pv_ctx *ctx, struct pv_out *out)
{
	struct compare_out *o = pv_out_result(out, "compare", sizeof(*o), text, json, release);
	size_t steps = 0;
	int r = PV_OK;

	if (!o)
		return PV_EIO;
	if (ctx->cli.nargs < 2)
		return pv_error(PV_EUSAGE, "compare needs two runs at least: provision compare "
					   "RUN_A RUN_B [RUN_C...] (a run's folder, or repeats of "
					   "one setting joined by commas: A1,A2)");
	for (size_t a = 0; a < ctx->cli.nargs && r == PV_OK; a++) {
		const char *p = ctx->cli.args[a];
		char dir[1024];

		while (r == PV_OK) {
			size_t len = strcspn(p, ",");

			if (!len || len >= sizeof(dir)) {
				r = pv_error(PV_EUSAGE,
					     "'%s': an empty or too long folder in a group",
					     ctx->cli.args[a]);
				break;
			}
			if (o->nruns == MAX_RUNS) {
				r = pv_error(PV_EUSAGE, "more than %d runs", MAX_RUNS);
				break;
			}
			snprintf(dir, sizeof(dir), "%.*s", (int)len, p);
			r = read_runs(o, dir, a, &steps);
			if (r != PV_OK)
				break;
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	if (r == PV_OK)
		r = pv_results_cmp_build((const struct pv_results_run *const *)o->runs, o->group,
					 o->nruns, &o->c);
	if (r == PV_OK && ctx->cli.opt[OPT_HTML]) {
		struct pv_buf b = PV_BUF_INIT;

		pv_report_compare_page(o->c, &b);
		r = pv_buf_failed(&b) ? pv_error(PV_EIO, "out of memory")
				      : pv_file_replace(ctx->cli.opt[OPT_HTML], b.data, b.len);
		if (r == PV_OK) {
			snprintf(o->html, sizeof(o->html), "%s", ctx->cli.opt[OPT_HTML]);
			o->html_bytes = b.len;
		}
		pv_buf_release(&b, 0);
	}
	return r;
}
