/* provision/run.c: `provision run`: options in, the run (run/run.h), a per-step table or
 * JSON out. */
#include "provision/provision.h"
#include "report/report.h"

#include "env/target.h"
#include "json/json.h"
#include "load/answer.h"
#include "results/results.h"
#include "run/run.h"
#include "run/sink.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "2 stopped, 1 lost" */
static void states(const struct pv_run_step *s, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (int st = PV_RUN_NOT_STARTED; st <= PV_RUN_LOST; st++) {
		unsigned n = 0;

		for (size_t i = 0; i < s->nhosts; i++)
			n += s->hosts[i].state == (enum pv_run_state)st;
		if (n && o < len)
			o += (size_t)snprintf(out + o, len - o, "%s%u %s", o ? ", " : "", n,
					      pv_run_state_name((enum pv_run_state)st));
	}
}

/* "12.5" or "-" */
static const char *pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		return "-";
	snprintf(buf, len, "%.1f", v);
	return buf;
}

/* The built-in driver's figures per step: throughput with its interval, overload, latency,
 * logons beside the DC's CPU, and whether the clients were the limit. */
static void load_table(const struct pv_run_result *r)
{
	printf("\nbuilt-in load (details in %s/load.txt, load.csv, load.json, load.svg):\n",
	       r->folder);
	printf("%4s %6s %8s %15s %9s %10s %7s %10s %8s %12s %8s %9s  %s\n", "step", "users",
	       "scen/s", "(95% interval)", "expected", "overload %", "errors", "median ms",
	       "p95 ms", "logon p95 ms", "DC CPU %", "logged on", "notes");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct pv_load_summary *l = &r->steps[i].load;
		char ci[40], lp[24], dc[16];

		if (!r->steps[i].has_load)
			continue;
		snprintf(ci, sizeof(ci), "(%.2f-%.2f)", l->rate_lo, l->rate_hi);
		if (l->logon.n)
			snprintf(lp, sizeof(lp), "%.1f", l->logon.p95 * 1000);
		else
			snprintf(lp, sizeof(lp), "-");
		printf("%4u %6u %8.2f %15s %9.2f %10.2f %7llu %10.1f %8.1f %12s %8s %9u  %s%s%s",
		       r->steps[i].n, l->users, l->rate, ci, l->expected, l->all.overload,
		       (unsigned long long)l->all.n.errors, l->all.lat.median * 1000,
		       l->all.lat.p95 * 1000, lp, pct(l->dc_cpu, dc, sizeof(dc)), l->connected,
		       l->client_bound ? "client-bound " : "", r->steps[i].refine ? "refine " : "",
		       l->logon_n.failed ? "logons failed " : "");
		if (l->drops)
			printf("%u connection%s dropped, %u logged on again", l->drops,
			       l->drops == 1 ? "" : "s", l->reconnects);
		printf("\n");
	}
	if (r->answer[0])
		printf("%s\n", r->answer);
}

/* The run's result, and its report.html written after it (docs/report.md). */
struct run_out {
	struct pv_run_result r;
	char report[1100];	 /* the page written, or empty */
	char report_error[1500]; /* why it was not */
	size_t report_bytes;
};

/* run --repeat N: every repeat's run, each one's answer, the folder naming them. */
#define REPEAT_MAX 50
struct repeats {
	struct run_out runs[REPEAT_MAX];
	size_t n, asked;
	double users[REPEAT_MAX]; /* each answer; NAN: not known */
	char id[64], folder[1100], note[256];
};

static void text_one(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct run_out *out = result;
	const struct pv_run_result *r = &out->r;

	(void)code;
	if (ctx->env.dry_run) {
		pv_text_plan("run", &r->plan);
		return;
	}
	if (!r->folder[0])
		return;
	printf("run %s: driver %s, %zu of %zu steps, results in %s:%s\n", r->id, r->driver,
	       r->nsteps, r->planned, r->controller, r->folder);
	if (!r->nsteps)
		return;
	printf("%4s %6s %-22s %7s %-15s %-26s %-40s %s\n", "step", "users", "users per client",
	       "seconds", "ended", "hosts", "server CPU % mean/p95/max, smbd %, MiB used",
	       "DC CPU % mean/max, samba %");
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct pv_run_step *s = &r->steps[i];
		char per[128] = "", hosts[128], cpu[96] = "not watched", dc[64] = "not watched";
		size_t o = 0;

		for (size_t j = 0; j < s->nhosts && o < sizeof(per); j++)
			if (!s->hosts[j].controller)
				o += (size_t)snprintf(per + o, sizeof(per) - o, "%s%s %u",
						      o ? ", " : "", s->hosts[j].name,
						      s->hosts[j].users);
		states(s, hosts, sizeof(hosts));
		if (s->samples)
			snprintf(cpu, sizeof(cpu), "%.1f/%.1f/%.1f, %.1f, %.0f",
				 s->watch[PV_RUN_W_CPU].mean, s->watch[PV_RUN_W_CPU].p95,
				 s->watch[PV_RUN_W_CPU].max, s->watch[PV_RUN_W_SMBD].mean,
				 s->watch[PV_RUN_W_MEM_USED].mean);
		if (s->dc_samples)
			snprintf(dc, sizeof(dc), "%.1f/%.1f, %.1f", s->dc_watch[PV_RUN_W_CPU].mean,
				 s->dc_watch[PV_RUN_W_CPU].max, s->dc_watch[PV_RUN_W_SAMBA].mean);
		printf("%4u %6u %-22s %7.1f %-15s %-26s %-40s %s\n", s->n, s->users, per,
		       s->end - s->start, s->ended ? s->ended : "-", hosts, cpu, dc);
		if (s->drained)
			printf("%4s drained in %.1f s (depth %ld, peak %ld)\n", "",
			       s->drain_seconds, s->drain_first, s->drain_peak);
		for (size_t j = 0; j < s->nhosts; j++)
			if (s->hosts[j].code != PV_OK)
				printf("%4s %s: %s\n", "", s->hosts[j].name, s->hosts[j].msg);
	}
	if (r->steps[0].has_load)
		load_table(r);
	if (r->watch_error[0])
		printf("server watch: %s\n", r->watch_error);
	if (r->dc_watch_error[0])
		printf("DC watch: %s\n", r->dc_watch_error);
	if (r->skipped)
		printf("run: the ramp ended over the answer (--over-steps): its %zu step%s of "
		       "%u..%u users not run\n",
		       r->skipped, r->skipped == 1 ? "" : "s", r->skipped_from, r->skipped_to);
	printf("run: %zu step%s in %.1f s; manifest: %s/manifest.json\n", r->nsteps,
	       r->nsteps == 1 ? "" : "s", r->seconds, r->folder);
	if (out->report[0])
		printf("report: %s\n", out->report);
	else if (out->report_error[0])
		printf("report: not written: %s\n", out->report_error);
}

static void json_one(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct run_out *out = result;
	const struct pv_run_result *r = &out->r;
	struct pv_json *a = pv_json_array();

	(void)ctx;
	(void)code;
	pv_json_str(o, "id", r->id[0] ? r->id : NULL);
	pv_json_str(o, "driver", r->driver);
	pv_json_str(o, "controller", r->controller);
	pv_json_str(o, "folder", r->folder[0] ? r->folder : NULL);
	pv_json_str(o, "playbook_sha256", r->digest[0] ? r->digest : NULL);
	pv_json_int(o, "planned", (long long)r->planned);
	pv_run_skipped_json(o, r);
	for (size_t i = 0; i < r->nsteps; i++)
		pv_json_append(a, pv_run_step_json(&r->steps[i]));
	pv_json_set(o, "steps", a);
	pv_json_str(o, "watch_error", r->watch_error[0] ? r->watch_error : NULL);
	pv_json_str(o, "dc_watch_error", r->dc_watch_error[0] ? r->dc_watch_error : NULL);
	pv_json_str(o, "answer", r->answer[0] ? r->answer : NULL);
	pv_json_secs(o, "seconds", r->seconds);
	pv_json_plan(o, &r->plan);
	pv_json_str(o, "report", out->report[0] ? out->report : NULL);
	pv_json_str(o, "report_error", out->report_error[0] ? out->report_error : NULL);
}

static void release(void *result)
{
	pv_run_release(&((struct run_out *)result)->r);
}

/* report.html in the run's folder, from what the run left there, whatever its outcome: a
 * page that could not be written is said, and the run's exit status stays the run's. */
static void report(struct run_out *o)
{
	const struct pv_run_result *r = &o->r;
	int code;

	if (!r->folder[0])
		return;
	if (strcmp(r->controller, "local") != 0) {
		snprintf(o->report_error, sizeof(o->report_error),
			 "the results are on the controller '%s'; there: provision report %s",
			 r->controller, r->folder);
		return;
	}
	code = pv_report_write(r->folder, NULL, o->report, sizeof(o->report), &o->report_bytes,
			       NULL);
	if (code != PV_OK) {
		o->report[0] = '\0';
		snprintf(o->report_error, sizeof(o->report_error), "%s", pv_errmsg());
	}
}

/* ---- run --repeat N ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The answers' median and range over the repeats that gave one; how many did. */
static size_t answers(const struct repeats *R, double *median, double *lo, double *hi)
{
	double v[REPEAT_MAX];
	size_t n = 0;

	for (size_t i = 0; i < R->n; i++)
		if (isfinite(R->users[i]))
			v[n++] = R->users[i];
	*median = *lo = *hi = NAN;
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*lo = v[0];
	*hi = v[n - 1];
	return n;
}

static void text_repeats(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct repeats *R = result;
	double m, lo, hi;
	size_t n = answers(R, &m, &lo, &hi);

	for (size_t i = 0; i < R->n; i++) {
		printf("%s--- repeat %zu of %zu\n", i ? "\n" : "", i + 1, R->asked);
		text_one(ctx, &R->runs[i], code);
	}
	if (ctx->env.dry_run || !R->n)
		return;
	if (n) {
		struct pv_buf b = PV_BUF_INIT;

		pv_load_answer_repeats(&b, m, lo, hi, n);
		printf("\n%s\n", b.data ? b.data : "");
		pv_buf_release(&b, 0);
	}
	if (R->folder[0])
		printf("repeats: %s (compare them as one: provision compare %s OTHER)\n", R->folder,
		       R->folder);
	else if (R->note[0])
		printf("repeats: %s\n", R->note);
}

static void json_repeats(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct repeats *R = result;
	struct pv_json *a = pv_json_array();
	double m, lo, hi;
	size_t n = answers(R, &m, &lo, &hi);

	for (size_t i = 0; i < R->n; i++) {
		struct pv_json *x = pv_json_object();

		json_one(ctx, &R->runs[i], code, x);
		pv_json_real(x, "answer_users", R->users[i]);
		pv_json_append(a, x);
	}
	pv_json_str(o, "id", R->id);
	pv_json_int(o, "repeat", (long long)R->asked);
	pv_json_set(o, "repeats", a);
	pv_json_int(o, "answers", (long long)n);
	pv_json_real(o, "answer_users", m);
	pv_json_real(o, "answer_lo", lo);
	pv_json_real(o, "answer_hi", hi);
	pv_json_str(o, "folder", R->folder[0] ? R->folder : NULL);
}

static void release_repeats(void *result)
{
	struct repeats *R = result;

	for (size_t i = 0; i < R->n; i++)
		pv_run_release(&R->runs[i].r);
}

/* <controller.results>/<id>/repeats.txt: the repeats' folders, for compare. */
static void repeats_folder(struct pv_ctx *ctx, struct repeats *R)
{
	const struct pv_playbook *pb = ctx->pb;
	struct pv_remote *ctl = NULL;
	struct pv_run_sink k = {0};
	struct pv_buf t = PV_BUF_INIT;
	char name[64];

	for (size_t i = 0; i < R->n; i++)
		pv_buf_addf(&t, "%s\n", R->runs[i].r.id);
	if (pv_buf_failed(&t) || !t.len ||
	    (pb->controller.host.name &&
	     pv_env_host_connect(&pb->controller.host, &ctl) != PV_OK) ||
	    pv_run_sink_open(&k, ctl, pb->controller.results, R->id, true, name) != PV_OK ||
	    pv_run_sink_write(&k, "", "repeats.txt", t.data, t.len, false) != PV_OK)
		snprintf(R->note, sizeof(R->note), "no folder naming them: %s", pv_errmsg());
	else
		snprintf(R->folder, sizeof(R->folder), "%s", k.path);
	pv_run_sink_close(&k);
	pv_remote_free(ctl);
	pv_buf_release(&t, 0);
}

static int run_repeats(struct pv_ctx *ctx, struct pv_out *out, unsigned long n)
{
	struct repeats *R =
		pv_out_result(out, "run", sizeof(*R), text_repeats, json_repeats, release_repeats);
	char why[1024] = "";
	int r = PV_OK;

	if (!R)
		return PV_EIO;
	R->asked = n;
	if (ctx->cli.opt[OPT_ID]) {
		snprintf(R->id, sizeof(R->id), "%.56s", ctx->cli.opt[OPT_ID]);
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(R->id, sizeof(R->id), "%Y%m%d-%H%M%S", &tm);
	}
	for (size_t i = 0; i < n && r == PV_OK; i++) {
		struct run_out *o = &R->runs[R->n++];
		char id[96];
		struct pv_run_opts opts = {id};
		struct pv_results_run *run = NULL;

		snprintf(id, sizeof(id), "%s-r%zu", R->id, i + 1);
		R->users[i] = NAN;
		r = pv_run(&ctx->env, &opts, &o->r);
		if (r != PV_OK)
			snprintf(why, sizeof(why), "repeat %zu of %lu: %s", i + 1, n, pv_errmsg());
		if (ctx->env.dry_run)
			break; /* one plan says it: the others are the same */
		report(o);
		if (r == PV_OK && !strcmp(o->r.controller, "local") &&
		    pv_results_read(o->r.folder, &run) == PV_OK)
			R->users[i] = run->answer_step >= 0 ? (double)run->answer_users : 0;
		pv_results_free(run);
	}
	if (!ctx->env.dry_run && R->n)
		repeats_folder(ctx, R);
	if (r != PV_OK)
		pv_error(r, "%s", why);
	return r;
}

int pv_cmd_run(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_run_opts opts = {ctx->cli.opt[OPT_ID]};
	struct run_out *o;
	unsigned long repeat = 1;
	int r;

	if (ctx->cli.opt[OPT_REPEAT] && ((r = pv_cli_count("--repeat", ctx->cli.opt[OPT_REPEAT],
							   REPEAT_MAX, &repeat)) != PV_OK ||
					 repeat == 0))
		return r != PV_OK ? r : pv_error(PV_EUSAGE, "--repeat is 1 to %d", REPEAT_MAX);
	if (repeat > 1)
		return run_repeats(ctx, out, repeat);
	if (!(o = pv_out_result(out, "run", sizeof(*o), text_one, json_one, release)))
		return PV_EIO;
	r = pv_run(&ctx->env, &opts, &o->r);
	if (!ctx->env.dry_run) {
		/* the run's own error is what the run says, whatever writing the page met */
		char *why = r != PV_OK ? strdup(pv_errmsg()) : NULL;

		report(o);
		if (why)
			pv_error(r, "%s", why);
		free(why);
	}
	return r;
}
