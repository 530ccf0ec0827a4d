/* load/report.c: load.txt, load.csv, load-kinds.csv, load.json and load.svg (see report.h). */
#include "load/report.h"

#include "json/json.h"
#include "load/line.h"
#include "util/err.h"
#include "util/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int done(struct pv_buf *out)
{
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

static double ms(double secs)
{
	return secs * 1000;
}

/* ---- load.txt ---- */

static void cell_ms(struct pv_buf *out, int width, const struct pv_load_lat *l, double v)
{
	if (l->n)
		pv_buf_addf(out, "%*.1f", width, ms(v));
	else
		pv_buf_addf(out, "%*s", width, "-");
}

static void cell_pct(struct pv_buf *out, int width, double v)
{
	if (isnan(v))
		pv_buf_addf(out, "%*s", width, "-");
	else
		pv_buf_addf(out, "%*.1f", width, v);
}

/* The DC's CPU and its samba processes': "12.5 (3.1)", or "-" */
static void cell_dc(struct pv_buf *out, int width, const struct pv_load_summary *s)
{
	char t[48];

	if (isnan(s->dc_cpu))
		snprintf(t, sizeof(t), "-");
	else if (isnan(s->dc_samba))
		snprintf(t, sizeof(t), "%.1f", s->dc_cpu);
	else
		snprintf(t, sizeof(t), "%.1f (%.1f)", s->dc_cpu, s->dc_samba);
	pv_buf_addf(out, "%*s", width, t);
}

/* "(1.58-2.12)" or "(107.6-118.5)" padded to width, left-aligned */
static void cell_range(struct pv_buf *out, int width, double lo, double hi, int digits)
{
	char t[64];

	snprintf(t, sizeof(t), "(%.*f-%.*f)", digits, lo, digits, hi);
	pv_buf_addf(out, " %-*s", width, t);
}

/* The busiest driver loop of the step's clients, % of a core; NAN when none said. */
static double top_loop(const struct pv_load_summary *s)
{
	double top = NAN;

	for (size_t i = 0; i < s->nclients; i++)
		if (isnan(top) || s->clients[i].cpu_top > top)
			top = s->clients[i].cpu_top;
	return top;
}

/* The commands the op-mix table shows apart (FSCT's published ones first), the rest as
 * "other". */
static const enum pv_load_op shown_ops[] = {
	PV_LOAD_OP_CREATE,	    PV_LOAD_OP_CLOSE, PV_LOAD_OP_READ,	   PV_LOAD_OP_QUERY_INFO,
	PV_LOAD_OP_QUERY_DIRECTORY, PV_LOAD_OP_WRITE, PV_LOAD_OP_SET_INFO, PV_LOAD_OP_IOCTL,
	PV_LOAD_OP_CHANGE_NOTIFY,   PV_LOAD_OP_LOCK,  PV_LOAD_OP_FLUSH,
};
#define NSHOWN (sizeof(shown_ops) / sizeof(shown_ops[0]))

static uint64_t ops_total(const uint64_t ops[PV_LOAD_OPS])
{
	uint64_t n = 0;

	for (int o = 0; o < PV_LOAD_OPS; o++)
		n += ops[o];
	return n;
}

static void op_mix(const struct pv_load_results *r, struct pv_buf *out)
{
	pv_buf_addstr(out, "\nSMB2 requests the scenarios sent, % of all (FSCT HomeFolders as the "
			   "server sees it, Nutanix TN-2117: create 22, close 19, read 14, "
			   "query_info 13, query_directory 10, write 7, other 15)\n");
	pv_buf_addstr(out, " step  users");
	for (size_t o = 0; o < NSHOWN; o++)
		pv_buf_addf(out, " %*s", (int)strlen(pv_load_op_names[shown_ops[o]]),
			    pv_load_op_names[shown_ops[o]]);
	pv_buf_addstr(out, "  other  requests/s\n");
	for (size_t i = 0; i < r->n; i++) {
		const uint64_t *ops = r->steps[i].all.n.ops;
		uint64_t total = ops_total(ops), rest = total;

		pv_buf_addf(out, "%5zu %6u", i + 1, r->steps[i].users);
		for (size_t o = 0; o < NSHOWN; o++) {
			int w = (int)strlen(pv_load_op_names[shown_ops[o]]);

			rest -= ops[shown_ops[o]];
			if (total)
				pv_buf_addf(out, " %*.1f", w,
					    100.0 * (double)ops[shown_ops[o]] / (double)total);
			else
				pv_buf_addf(out, " %*s", w, "-");
		}
		if (total)
			pv_buf_addf(out, " %6.1f", 100.0 * (double)rest / (double)total);
		else
			pv_buf_addf(out, " %6s", "-");
		pv_buf_addf(out, " %11.1f\n",
			    r->steps[i].secs > 0 ? (double)total / r->steps[i].secs : 0);
	}
}

int pv_load_report_txt(const struct pv_load_results *r, struct pv_buf *out)
{
	const struct pv_playbook_workload *c = r->cfg;

	pv_buf_addf(out,
		    "provision load: %u scenarios per user-hour; a scenario is overloaded when it "
		    "starts over %g s late, takes longer than its limit, ends in an error or is "
		    "due while its user has no connection; a step counts when its overload is at "
		    "most %g%% with no error, every user connected and no client the limit "
		    "(client-bound: a driver loop at %.0f%% of a core or a loop lag p95 of %.0f ms)"
		    "\n",
		    c->rate, c->late, c->overload, PV_LOAD_BOUND_CPU, ms(PV_LOAD_BOUND_LAG));
	if (r->title)
		pv_buf_addf(out, "%s\n", r->title);
	pv_buf_addstr(out,
		      "scen/s with its 95% interval (Poisson), p95 with the bucket it lies in; "
		      "logon p95 beside the DC's CPU (all its cores) and its samba processes' "
		      "(% of a core); driver: the busiest client loop, % of a core\n");
	pv_buf_addstr(out, "\n step  users  scen/s (95% interval)  expected  overload %  errors"
			   "  median ms  p95 ms (bucket)       logon p95 ms  DC CPU % (samba)"
			   "  server CPU %  driver %  lag p95 ms\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];
		size_t mark;

		pv_buf_addf(out, "%5zu %6u %7.2f", i + 1, s->users, s->rate);
		cell_range(out, 14, s->rate_lo, s->rate_hi, 2);
		pv_buf_addf(out, "%9.2f %11.2f %7llu", s->expected, s->all.overload,
			    (unsigned long long)s->all.n.errors);
		cell_ms(out, 11, &s->all.lat, s->all.lat.median);
		cell_ms(out, 8, &s->all.lat, s->all.lat.p95);
		if (s->all.lat.n)
			cell_range(out, 13, ms(s->all.lat.p95_lo), ms(s->all.lat.p95_hi), 1);
		else
			pv_buf_addf(out, " %-13s", "");
		cell_ms(out, 14, &s->logon, s->logon.p95);
		cell_dc(out, 18, s);
		cell_pct(out, 14, s->cpu);
		cell_pct(out, 10, top_loop(s));
		if (s->nclients)
			pv_buf_addf(out, "%12.1f", ms(s->lag.p95));
		else
			pv_buf_addf(out, "%12s", "-");
		/* notes: what else kept the step from counting, when anything did */
		mark = out->len;
		if (s->client_bound)
			pv_buf_addstr(out, "  client-bound");
		if (pv_load_unconnected(s))
			pv_buf_addf(out, "%s%u user%s not connected", out->len > mark ? ", " : "  ",
				    pv_load_unconnected(s), pv_load_unconnected(s) == 1 ? "" : "s");
		if (s->logon_n.failed)
			pv_buf_addf(out, "%s%llu logon%s failed", out->len > mark ? ", " : "  ",
				    (unsigned long long)s->logon_n.failed,
				    s->logon_n.failed == 1 ? "" : "s");
		if (s->lost)
			pv_buf_addf(out, "%s%u client%s lost", out->len > mark ? ", " : "  ",
				    s->lost, s->lost == 1 ? "" : "s");
		if (s->drops)
			pv_buf_addf(out, "%s%u connection%s dropped, %u logged on again",
				    out->len > mark ? ", " : "  ", s->drops,
				    s->drops == 1 ? "" : "s", s->reconnects);
		if (s->drops && s->reclaimed)
			pv_buf_addf(out, " (%u durable file%s claimed again)", s->reclaimed,
				    s->reclaimed == 1 ? "" : "s");
		pv_buf_addstr(out, "\n");
	}
	op_mix(r, out);
	pv_buf_addstr(out, "\n");
	pv_load_answer_line(r, out);
	pv_buf_addstr(out, "\n");
	return done(out);
}

/* ---- load.csv, load-kinds.csv ---- */

#define SUM_HEADER                                                                                 \
	"started,completed,errors,late,over_limit,unserved,overloaded,overload_pct,median_ms,"     \
	"median_lo_ms,median_hi_ms,p95_ms,p95_lo_ms,p95_hi_ms,max_ms"

static void csv_lat(struct pv_buf *out, const struct pv_load_lat *l, bool max)
{
	if (l->n) {
		pv_buf_addf(out, ",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f", ms(l->median), ms(l->median_lo),
			    ms(l->median_hi), ms(l->p95), ms(l->p95_lo), ms(l->p95_hi));
		if (max)
			pv_buf_addf(out, ",%.3f", ms(l->max));
	} else {
		pv_buf_addstr(out, max ? ",,,,,,," : ",,,,,,");
	}
}

static void csv_sum(struct pv_buf *out, const struct pv_load_kind_sum *k)
{
	pv_buf_addf(out, "%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.3f",
		    (unsigned long long)k->n.started, (unsigned long long)k->lat.n,
		    (unsigned long long)k->n.errors, (unsigned long long)k->n.late,
		    (unsigned long long)k->n.over_limit, (unsigned long long)k->n.unserved,
		    (unsigned long long)k->n.overloaded, k->overload);
	csv_lat(out, &k->lat, true);
}

static void csv_ops_header(struct pv_buf *out)
{
	for (int o = 0; o < PV_LOAD_OPS; o++)
		pv_buf_addf(out, ",ops_%s", pv_load_op_names[o]);
}

static void csv_ops(struct pv_buf *out, const uint64_t ops[PV_LOAD_OPS])
{
	for (int o = 0; o < PV_LOAD_OPS; o++)
		pv_buf_addf(out, ",%llu", (unsigned long long)ops[o]);
}

static void csv_pct(struct pv_buf *out, double v)
{
	if (!isnan(v))
		pv_buf_addf(out, "%.1f", v);
}

int pv_load_report_csv(const struct pv_load_results *r, struct pv_buf *out)
{
	pv_buf_addstr(
		out,
		"step,users,seconds,connected,not_connected,clients_lost,scen_per_s,"
		"scen_per_s_lo,scen_per_s_hi,expected_per_s,server_cpu_pct,dc_cpu_pct,dc_samba_pct,"
		"carried,client_bound,driver_cores,lag_p95_ms,logon_ok,logon_failed,"
		"logon_retries,logon_median_ms,logon_median_lo_ms,logon_median_hi_ms,"
		"logon_p95_ms,logon_p95_lo_ms,logon_p95_hi_ms," SUM_HEADER);
	csv_ops_header(out);
	pv_buf_addstr(out, "\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];

		pv_buf_addf(out, "%zu,%u,%.3f,%u,%u,%u,%.4f,%.4f,%.4f,%.4f,", i + 1, s->users,
			    s->secs, s->connected, s->failed, s->lost, s->rate, s->rate_lo,
			    s->rate_hi, s->expected);
		csv_pct(out, s->cpu);
		pv_buf_addstr(out, ",");
		csv_pct(out, s->dc_cpu);
		pv_buf_addstr(out, ",");
		csv_pct(out, s->dc_samba);
		pv_buf_addf(out, ",%d,%d,%.3f,", pv_load_carried(s, r->cfg->overload),
			    s->client_bound, s->driver_cores);
		if (s->nclients)
			pv_buf_addf(out, "%.3f", ms(s->lag.p95));
		pv_buf_addf(out, ",%llu,%llu,%llu", (unsigned long long)s->logon.n,
			    (unsigned long long)s->logon_n.failed,
			    (unsigned long long)s->logon_n.retries);
		csv_lat(out, &s->logon, false);
		pv_buf_addstr(out, ",");
		csv_sum(out, &s->all);
		csv_ops(out, s->all.n.ops);
		pv_buf_addstr(out, "\n");
	}
	return done(out);
}

int pv_load_report_kinds_csv(const struct pv_load_results *r, struct pv_buf *out)
{
	pv_buf_addstr(out, "step,users,kind,weight,limit_s," SUM_HEADER);
	csv_ops_header(out);
	pv_buf_addstr(out, "\n");
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
			pv_buf_addf(out, "%zu,%u,%s,%g,%g,", i + 1, r->steps[i].users,
				    pv_playbook_workload_names[k], r->cfg->kind[k].weight,
				    r->cfg->kind[k].limit);
			csv_sum(out, &r->steps[i].kind[k]);
			csv_ops(out, r->steps[i].kind[k].n.ops);
			pv_buf_addstr(out, "\n");
		}
	return done(out);
}

/* ---- load.json ---- */

/* {"lo": lo, "hi": hi} (null where not finite) */
static struct pv_json *pair_json(double lo, double hi)
{
	struct pv_json *o = pv_json_object();

	pv_json_real(o, "lo", lo);
	pv_json_real(o, "hi", hi);
	return o;
}

static struct pv_json *lat_json(const struct pv_load_lat *l)
{
	struct pv_json *o = pv_json_object();

	pv_json_int(o, "n", (long long)l->n);
	pv_json_real(o, "median_ms", l->n ? ms(l->median) : NAN);
	pv_json_real(o, "p95_ms", l->n ? ms(l->p95) : NAN);
	pv_json_real(o, "max_ms", l->n ? ms(l->max) : NAN);
	pv_json_set(o, "median_ms_bucket",
		    pair_json(l->n ? ms(l->median_lo) : NAN, l->n ? ms(l->median_hi) : NAN));
	pv_json_set(o, "p95_ms_bucket",
		    pair_json(l->n ? ms(l->p95_lo) : NAN, l->n ? ms(l->p95_hi) : NAN));
	return o;
}

static struct pv_json *sum_json(const struct pv_load_kind_sum *k)
{
	struct pv_json *o = pv_json_object();

	pv_load_counts_json(&k->n, true, o);
	pv_json_real(o, "overload_pct", k->overload);
	pv_json_set(o, "latency", lat_json(&k->lat));
	pv_json_set(o, "ops", pv_load_ops_json(k->n.ops, true));
	return o;
}

static struct pv_json *config_json(const struct pv_playbook_workload *c)
{
	struct pv_json *o = pv_json_object(), *sc = pv_json_object();

	pv_json_int(o, "rate", c->rate);
	pv_json_real(o, "late", c->late);
	pv_json_real(o, "overload", c->overload);
	pv_json_int(o, "interval", c->interval);
	pv_json_int(o, "seed", (long long)c->seed);
	pv_json_bool(o, "keep_logged_on", c->keep_logged_on);
	pv_json_int(o, "threads", c->threads);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		struct pv_json *s = pv_json_object();

		pv_json_real(s, "weight", c->kind[k].weight);
		pv_json_real(s, "limit", c->kind[k].limit);
		pv_json_set(sc, pv_playbook_workload_names[k], s);
	}
	pv_json_set(o, "scenarios", sc);
	return o;
}

struct pv_json *pv_load_client_json(const struct pv_load_client *c)
{
	struct pv_json *o = pv_json_object();

	pv_json_str(o, "name", c->name);
	pv_json_int(o, "threads", c->threads);
	pv_json_real(o, "cpu_driver", c->cpu);
	pv_json_real(o, "cpu_top_loop", c->cpu_top);
	pv_json_real(o, "cpu_host", c->host_cpu);
	pv_json_real(o, "lag_ms_p95", c->lag_p95);
	pv_json_real(o, "lag_ms_max", c->lag_max);
	pv_json_bool(o, "bound", c->bound);
	return o;
}

static struct pv_json *step_json(const struct pv_load_summary *s, size_t i, double threshold)
{
	struct pv_json *o = pv_json_object(), *kinds = pv_json_object(), *cl = pv_json_array(),
		       *lo = pv_json_object();

	pv_json_int(o, "step", (long long)i + 1);
	pv_json_int(o, "users", s->users);
	pv_json_real(o, "seconds", s->secs);
	pv_json_int(o, "connected", s->connected);
	pv_json_int(o, "not_connected", s->failed);
	pv_json_int(o, "clients_lost", s->lost);
	pv_json_int(o, "connections_dropped", s->drops);
	pv_json_int(o, "reconnected", s->reconnects);
	pv_json_int(o, "logons_again", s->relogons);
	pv_json_int(o, "durable_reclaimed", s->reclaimed);
	pv_json_real(o, "scen_per_s", s->rate);
	pv_json_set(o, "scen_per_s_interval", pair_json(s->rate_lo, s->rate_hi));
	pv_json_real(o, "expected_per_s", s->expected);
	pv_json_real(o, "server_cpu_pct", s->cpu); /* null when not measured */
	pv_json_real(o, "dc_cpu_pct", s->dc_cpu);
	pv_json_real(o, "dc_samba_pct", s->dc_samba);
	pv_json_bool(o, "carried", pv_load_carried(s, threshold));
	pv_json_bool(o, "client_bound", s->client_bound);
	pv_json_real(o, "driver_cores", s->driver_cores);
	pv_json_real(o, "lag_ms_p95", s->nclients ? ms(s->lag.p95) : NAN);
	for (size_t c = 0; c < s->nclients; c++)
		pv_json_append(cl, pv_load_client_json(&s->clients[c]));
	pv_json_set(o, "clients", cl);
	pv_json_int(lo, "ok", (long long)s->logon.n);
	pv_json_int(lo, "failed", (long long)s->logon_n.failed);
	pv_json_int(lo, "retries", (long long)s->logon_n.retries);
	pv_json_set(lo, "latency", lat_json(&s->logon));
	pv_json_set(o, "logon", lo);
	pv_json_set(o, "ops", pv_load_ops_json(s->all.n.ops, true));
	pv_json_set(o, "all", sum_json(&s->all));
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		pv_json_set(kinds, pv_playbook_workload_names[k], sum_json(&s->kind[k]));
	pv_json_set(o, "kinds", kinds);
	return o;
}

/* {"step": N, "users": U, "client_bound": B} of step s, number n, or null */
static void step_ref(struct pv_json *o, const char *key, const struct pv_load_summary *s,
		     unsigned n)
{
	struct pv_json *j;

	if (!s) {
		pv_json_str(o, key, NULL);
		return;
	}
	j = pv_json_object();
	pv_json_int(j, "step", n);
	pv_json_int(j, "users", s->users);
	pv_json_bool(j, "client_bound", s->client_bound);
	pv_json_set(o, key, j);
}

int pv_load_report_json(const struct pv_load_results *r, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object(), *steps = pv_json_array(), *ans = pv_json_object();
	struct pv_buf line = PV_BUF_INIT;
	struct pv_load_outcome a;
	char *text;
	int rc;

	pv_json_int(o, "version", 2);
	pv_json_str(o, "title", r->title);
	pv_json_set(o, "config", config_json(r->cfg));
	for (size_t i = 0; i < r->n; i++)
		pv_json_append(steps, step_json(&r->steps[i], i, r->cfg->overload));
	pv_json_set(o, "steps", steps);
	rc = pv_load_answer_line(r, &line);
	pv_load_outcome_of(r, &a);
	if (a.best) {
		pv_json_int(ans, "users", a.best->users);
		pv_json_int(ans, "step", a.best_n);
	} else {
		pv_json_str(ans, "users", NULL);
		pv_json_str(ans, "step", NULL);
	}
	step_ref(ans, "last_carried", a.best, a.best_n);
	step_ref(ans, "first_over", a.over, a.over_n);
	pv_json_bool(ans, "client_bound", a.at_least);
	if (a.at_least)
		pv_json_real(ans, "client_cores_needed", ceil(a.cores));
	else
		pv_json_str(ans, "client_cores_needed", NULL);
	pv_json_str(ans, "line", line.data);
	pv_json_set(o, "answer", ans);
	text = rc == PV_OK ? pv_json_pretty(o) : NULL;
	pv_json_free(o);
	pv_buf_release(&line, 0);
	if (!text)
		return pv_error(PV_EIO, "out of memory");
	pv_buf_addstr(out, text);
	free(text);
	return done(out);
}

/* ---- load.svg ---- */

/* The tooltips of step i's markers (throughput, overload, CPU), at t[3 * i ...]. */
static void svg_tips(const struct pv_load_summary *s, char (*t)[200])
{
	snprintf(t[0], sizeof(t[0]),
		 "%u users: %.2f scenarios/s (95%% interval %.2f-%.2f; expected %.2f)%s", s->users,
		 s->rate, s->rate_lo, s->rate_hi, s->expected,
		 s->client_bound ? "; client-bound" : "");
	snprintf(t[1], sizeof(t[1]), "%u users: overload %.2f%%", s->users, s->all.overload);
	snprintf(t[2], sizeof(t[2]), "%u users: server CPU %.1f%%", s->users, s->cpu);
}

/* load.svg's frame: a document of its own, 800 x 500 with the legend's two rows; the answer
 * (users, NAN: none) as a dashed vertical line labelled vlabel. */
static void svg_frame(const struct pv_load_results *r, double users, const char *vlabel,
		      struct pv_plot *p)
{
	pv_plot_init(p);
	p->standalone = true;
	p->id = "load";
	p->title = "Users against throughput and overload";
	p->subtitle = r->title;
	p->desc = "provision load: one point per step, users on the horizontal axis; scenarios "
		  "per second on the left with their 95% intervals and the expected throughput "
		  "dashed; overload and the server's CPU in percent on the right, the overload "
		  "threshold dotted; the answer as a dashed vertical line.";
	p->xlabel = "users (all clients)";
	p->ylabel = "scenarios/s";
	p->y2label = "overload %, server CPU %";
	p->xmin = p->ymin = p->y2min = 0;
	p->y2max = 100;
	p->hline2 = r->cfg->overload;
	p->vline = users;
	p->vlabel = vlabel;
	p->width = 800;
	p->height = 458;
}

int pv_load_report_svg(const struct pv_load_results *r, struct pv_buf *out)
{
	size_t n = r->n;
	double *v = calloc(7 * n + 2, sizeof(*v)), *x, *ys, *lo, *hi, *yo, *yb, *yc, ex[2] = {0, 0},
	       ey[2] = {0, 0};
	char(*t)[200] = calloc(3 * n + 1, sizeof(*t)), vlabel[64], threshold[96];
	const char **tip = calloc(3 * n + 1, sizeof(*tip));
	struct pv_plot_series s[5];
	struct pv_load_outcome a;
	struct pv_plot p;
	size_t ns = 0;
	bool cpu = false, bound = false;

	if (!v || !t || !tip) {
		free(v), free(t), free(tip);
		return pv_error(PV_EIO, "out of memory");
	}
	x = v, ys = x + n, lo = ys + n, hi = lo + n, yo = hi + n, yb = yo + n, yc = yb + n;
	for (size_t i = 0; i < n; i++) {
		const struct pv_load_summary *st = &r->steps[i];

		x[i] = st->users;
		ys[i] = st->rate;
		lo[i] = st->rate_lo;
		hi[i] = st->rate_hi;
		yo[i] = st->all.overload;
		yb[i] = st->client_bound ? st->rate : NAN;
		yc[i] = st->cpu;
		cpu |= !isnan(st->cpu);
		bound |= st->client_bound;
		ex[1] = fmax(ex[1], st->users);
		svg_tips(st, t + 3 * i);
		for (size_t k = 0; k < 3; k++)
			tip[n * k + i] = t[3 * i + k];
	}
	/* the expected throughput: a line through 0 to the most users */
	ey[1] = ex[1] * r->cfg->rate / 3600;
	snprintf(threshold, sizeof(threshold), "overload %% (threshold %g%%, dotted)",
		 r->cfg->overload);
	memset(s, 0, sizeof(s));
	s[ns++] = (struct pv_plot_series){.name = "scenarios/s (95% interval)",
					  .x = x,
					  .y = ys,
					  .lo = lo,
					  .hi = hi,
					  .tip = tip,
					  .n = n,
					  .mark = 'o',
					  .line = true,
					  .cls = "pt scen"};
	s[ns++] = (struct pv_plot_series){.name = "expected (users x rate)",
					  .x = ex,
					  .y = ey,
					  .n = 2,
					  .dash = 1,
					  .color = 5,
					  .line = true};
	s[ns++] = (struct pv_plot_series){.name = threshold,
					  .x = x,
					  .y = yo,
					  .tip = tip + n,
					  .n = n,
					  .axis = 1,
					  .mark = 's',
					  .color = 1,
					  .line = true,
					  .cls = "pt overload"};
	if (bound)
		s[ns++] = (struct pv_plot_series){
			.name = "client-bound: the clients' limit, not the server's",
			.x = x,
			.y = yb,
			.tip = tip,
			.n = n,
			.mark = 'x',
			.color = 4,
			.cls = "pt bound"};
	s[ns++] = (struct pv_plot_series){.name = cpu ? "server CPU %"
						      : "server CPU % (not measured)",
					  .x = x,
					  .y = yc,
					  .tip = tip + 2 * n,
					  .n = cpu ? n : 0,
					  .axis = 1,
					  .mark = 't',
					  .dash = 3,
					  .color = 2,
					  .line = true,
					  .cls = "pt cpu"};
	pv_load_outcome_of(r, &a);
	snprintf(vlabel, sizeof(vlabel), "carried %u users", a.best ? a.best->users : 0);
	svg_frame(r, a.best ? a.best->users : NAN, vlabel, &p);
	p.s = s;
	p.ns = ns;
	pv_plot_svg(out, &p);
	free(v), free(t), free(tip);
	return done(out);
}
