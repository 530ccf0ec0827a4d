/* provision/run.c: `provision run`: options in, the run (run/run.h), a per-step table or
 * JSON out. */
#include "provision/provision.h"
#include "provision/report.h"

#include "json/json.h"
#include "run/run.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		printf("%4u %6u %8.2f %15s %9.2f %10.2f %7llu %10.1f %8.1f %12s %8s %9u  %s%s%s\n",
		       r->steps[i].n, l->users, l->rate, ci, l->expected, l->all.overload,
		       (unsigned long long)l->all.n.errors, l->all.lat.median * 1000,
		       l->all.lat.p95 * 1000, lp, pct(l->dc_cpu, dc, sizeof(dc)), l->connected,
		       l->client_bound ? "client-bound " : "", r->steps[i].refine ? "refine " : "",
		       l->logon_n.failed ? "logons failed" : "");
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

static void text(const struct pv_ctx *ctx, const void *result, int code)
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
				 s->watch[PV_W_CPU].mean, s->watch[PV_W_CPU].p95,
				 s->watch[PV_W_CPU].max, s->watch[PV_W_SMBD].mean,
				 s->watch[PV_W_MEM_USED].mean);
		if (s->dc_samples)
			snprintf(dc, sizeof(dc), "%.1f/%.1f, %.1f", s->dc_watch[PV_W_CPU].mean,
				 s->dc_watch[PV_W_CPU].max, s->dc_watch[PV_W_SAMBA].mean);
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
	printf("run: %zu step%s in %.1f s; manifest: %s/manifest.json\n", r->nsteps,
	       r->nsteps == 1 ? "" : "s", r->seconds, r->folder);
	if (out->report[0])
		printf("report: %s\n", out->report);
	else if (out->report_error[0])
		printf("report: not written: %s\n", out->report_error);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
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

int pv_cmd_run(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_run_opts opts = {ctx->cli.opt[OPT_ID]};
	struct run_out *o = pv_out_result(out, "run", sizeof(*o), text, json, release);
	int r;

	if (!o)
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
