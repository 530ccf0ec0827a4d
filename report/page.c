/* report/page.c: report.html, the page of one run (see report.h): the answer first, the ramp,
 * the steps, the latency and mix per scenario kind, the time series of the whole run with the
 * steps marked (timeline.c), the bottleneck hint, the settings and versions and the errors
 * (settings.c). What a run did not record is said so, never guessed. */
#include "report/internal.h"

#include "load/answer.h"
#include "util/err.h"
#include "util/file.h"
#include "util/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.05

static void addh(struct pv_buf *b, const char *tag, const char *text)
{
	pv_buf_addf(b, "<%s>", tag);
	pv_escape_xml(b, text);
	pv_buf_addf(b, "</%s>\n", tag);
}

void pv_report_na(struct pv_buf *b, const char *what)
{
	pv_buf_addstr(b, "<p class=\"na\">");
	pv_escape_xml(b, what);
	pv_buf_addstr(b, "</p>\n");
}

/* ---- pieces of text ---- */

static void ms_cell(struct pv_buf *b, double secs, bool over)
{
	if (isnan(secs))
		pv_buf_addstr(b, "<td class=\"na\">-</td>");
	else
		pv_buf_addf(b, "<td%s>%.1f%s</td>", over ? " class=\"over\"" : "", secs * 1000,
			    over ? " !" : "");
}

static void num_cell(struct pv_buf *b, const char *fmt, double v)
{
	if (isnan(v))
		pv_buf_addstr(b, "<td class=\"na\">-</td>");
	else {
		pv_buf_addstr(b, "<td>");
		pv_buf_addf(b, fmt, v);
		pv_buf_addstr(b, "</td>");
	}
}

static double stat_mean(const struct pv_results_watch *w, const char *name, double *p95)
{
	double m, p, x;

	if (!w || !pv_results_watch_stat(w, name, &m, &p, &x)) {
		*p95 = NAN;
		return NAN;
	}
	*p95 = p;
	return m;
}

/* ---- sections ---- */

static void head(struct pv_buf *b, const struct pv_results_run *run)
{
	pv_buf_addstr(b, "<h1>Run ");
	pv_escape_xml(b, run->id[0] ? run->id : "(no id)");
	pv_buf_addstr(b, "</h1>\n<p class=\"meta\">driver <b>");
	pv_escape_xml(b, run->driver);
	pv_buf_addstr(b, "</b>, lab <b>");
	pv_escape_xml(b, run->lab);
	pv_buf_addstr(b, "</b>, started ");
	pv_escape_xml(b, run->started[0] ? run->started : "?");
	pv_buf_addstr(b, ", ended ");
	pv_escape_xml(b, run->ended[0] ? run->ended : "(not ended: cut short)");
	pv_buf_addf(b, "; %zu of %zu steps; status <b>", run->nsteps, run->planned);
	pv_escape_xml(b, run->status);
	pv_buf_addstr(b, "</b>");
	if (run->exit_code > 0)
		pv_buf_addf(b, " (exit %d, %s)", run->exit_code, pv_status_name(run->exit_code));
	pv_buf_addstr(b, ". Folder: <code>");
	pv_escape_xml(b, run->dir);
	pv_buf_addstr(b, "</code></p>\n<nav><p>");
	pv_buf_addstr(b, "<a href=\"#ramp\">ramp</a> · <a href=\"#steps\">steps</a> · "
			 "<a href=\"#latency\">latency</a> · <a href=\"#time\">over time</a> · "
			 "<a href=\"#hint\">bottleneck</a> · <a href=\"#settings\">settings</a> · "
			 "<a href=\"#errors\">errors</a></p></nav>\n");
}

/* The answer's words on the page: emphasis in bold, the tag as a tag, names escaped. */
static const struct pv_load_markup html = {"<b>", "</b>", "<b class=\"tag\">", "</b>",
					   pv_escape_xml};

static void answer(struct pv_buf *b, const struct pv_results_run *run)
{
	pv_buf_addstr(b, "<div class=\"answer\" id=\"answer\">");
	if (!run->has_load) {
		pv_buf_addstr(b, "Driver <b>");
		pv_escape_xml(b, run->driver);
		pv_buf_addstr(b, "</b> measures no scenarios here, so this run gives no capacity "
				 "answer: its steps, the server watch and the hosts' states "
				 "follow.");
		if (!strcmp(run->driver, "builtin"))
			pv_buf_addstr(b, " (The built-in driver's figures, load.json, are missing: "
					 "the run ended before its results were written.)");
	} else {
		const struct pv_results_step *best =
			run->answer_step >= 0 ? &run->steps[run->answer_step] : NULL;
		const struct pv_results_step *over =
			run->first_over >= 0 ? &run->steps[run->first_over] : NULL;
		struct pv_load_outcome o = {
			run->cfg.overload,    best ? &best->load : NULL, over ? &over->load : NULL,
			best ? best->n : 0,   over ? over->n : 0,	 best && best->refine,
			over && over->refine, run->answer_at_least,	 run->client_cores_needed};

		pv_load_answer_prose(&o, &html, b);
	}
	if (run->has_load && run->answer[0]) {
		pv_buf_addstr(b, "<br><span class=\"line\">The run's answer line: ");
		pv_escape_xml(b, run->answer);
		pv_buf_addstr(b, "</span>");
	}
	if (run->error[0]) {
		pv_buf_addstr(b, "<br>The run ended early: ");
		pv_escape_xml(b, run->error);
	}
	pv_buf_addstr(b, "</div>\n");
}

static void ramp(struct pv_buf *b, const struct pv_results_run *run, const size_t *ord)
{
	size_t n = run->nsteps;
	double *x = calloc(6 * (n ? n : 1) + 2, sizeof(double)), *ys, *lo, *hi, *yo, *yb, *yc,
	       ex[2], ey[2], m, p95;
	char **tips = calloc(3 * (n ? n : 1), sizeof(char *));
	struct pv_plot_series s[5];
	struct pv_plot p;
	bool any_bound = false;
	size_t ns = 0;
	unsigned umax = 0;
	bool any_cpu = false;

	pv_buf_addstr(b, "<h2 id=\"ramp\">The ramp</h2>\n");
	if (!x || !tips || !n) {
		pv_report_na(b, "No step ran.");
		free(x);
		free(tips);
		return;
	}
	ys = x + n;
	lo = ys + n;
	hi = lo + n;
	yo = hi + n;
	yb = yo + n;
	yc = calloc(n, sizeof(double));
	memset(s, 0, sizeof(s));
	for (size_t i = 0; i < n; i++) {
		const struct pv_results_step *st = &run->steps[ord[i]];
		const char *tag = st->load.client_bound ? " (client-bound: the clients' limit)"
				  : st->refine		? " (refine)"
							: "";
		char t[240];

		x[i] = st->users;
		umax = st->users > umax ? st->users : umax;
		ys[i] = st->has_load ? st->load.rate : NAN;
		lo[i] = hi[i] = NAN;
		if (st->has_load && st->load.secs > 0) {
			lo[i] = st->load.rate_lo;
			hi[i] = st->load.rate_hi;
		}
		yo[i] = st->has_load ? st->load.all.overload : NAN;
		/* a client-bound step marked apart: it measured the clients */
		yb[i] = st->load.client_bound ? ys[i] : NAN;
		any_bound |= st->load.client_bound;
		m = stat_mean(st->srv, "cpu", &p95);
		if (yc)
			yc[i] = m;
		snprintf(t, sizeof(t),
			 "%u users%s: %.2f scenarios/s (95%%: %.2f-%.2f), expected %.2f", st->users,
			 tag, ys[i], lo[i], hi[i], st->load.expected);
		tips[i] = strdup(t);
		snprintf(t, sizeof(t), "%u users%s: overload %.2f%%", st->users, tag, yo[i]);
		tips[n + i] = strdup(t);
		snprintf(t, sizeof(t), "%u users: server CPU %.1f%% (mean)", st->users, m);
		tips[2 * n + i] = strdup(t);
	}
	if (run->has_load) {
		s[ns++] = (struct pv_plot_series){"scenarios/s (95% interval)",
						  x,
						  ys,
						  lo,
						  hi,
						  (const char *const *)tips,
						  n,
						  0,
						  'o',
						  0,
						  0,
						  true};
		ex[0] = 0;
		ex[1] = umax;
		ey[0] = 0;
		ey[1] = umax * (double)run->cfg.rate / 3600;
		s[ns++] = (struct pv_plot_series){
			"expected (users x rate)", ex, ey, NULL, NULL, NULL, 2, 0, 0, 1, 5, true};
		s[ns++] = (struct pv_plot_series){"overload % (threshold dotted)",
						  x,
						  yo,
						  NULL,
						  NULL,
						  (const char *const *)tips + n,
						  n,
						  1,
						  's',
						  0,
						  1,
						  true};
	}
	if (any_bound)
		s[ns++] = (struct pv_plot_series){
			"client-bound: the clients' limit, not the server's",
			x,
			yb,
			NULL,
			NULL,
			(const char *const *)tips,
			n,
			0,
			'x',
			0,
			4,
			false};
	for (size_t i = 0; yc && i < n && !any_cpu; i++)
		any_cpu = !isnan(yc[i]);
	if (any_cpu)
		s[ns++] = (struct pv_plot_series){"server CPU % (mean)",
						  x,
						  yc,
						  NULL,
						  NULL,
						  (const char *const *)tips + 2 * n,
						  n,
						  1,
						  't',
						  3,
						  2,
						  true};
	pv_plot_init(&p);
	p.id = "plot-ramp";
	p.title = run->has_load ? "Users against throughput, overload and the server's CPU"
				: "Users against the server's CPU";
	p.desc = "One point per step: users on the horizontal axis; scenarios per second on the "
		 "left with their 95% intervals and the expected throughput dashed; overload and "
		 "the server's CPU in percent on the right.";
	p.xlabel = "users (all clients)";
	p.ylabel = run->has_load ? "scenarios/s" : "";
	p.y2label = "overload %, server CPU %";
	p.xmin = 0;
	p.ymin = 0;
	p.y2min = 0;
	p.y2max = 100;
	p.hline2 = run->has_load ? run->cfg.overload : NAN;
	p.vline = run->answer_step >= 0 ? run->answer_users : NAN;
	p.vlabel = "carried";
	p.s = s;
	p.ns = ns;
	if (ns)
		pv_plot_svg(b, &p);
	else
		pv_report_na(
			b, "No scenarios and no server watch: nothing to plot against the users.");
	for (size_t i = 0; i < 3 * n; i++)
		free(tips[i]);
	free(tips);
	free(yc);
	free(x);
}

static void host_states(struct pv_buf *b, const struct pv_results_step *st)
{
	static const char *const states[] = {"done", "stopped", "failed", "lost", "not started"};
	bool first = true;

	for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
		unsigned n = 0;

		for (size_t i = 0; i < st->nhosts; i++)
			n += strcmp(st->hosts[i].state, states[k]) == 0;
		if (n) {
			pv_buf_addf(b, "%s%u %s", first ? "" : ", ", n, states[k]);
			first = false;
		}
	}
}

/* The DC's mean CPU in st: its watch's, else load.json's; NAN when not watched. */
static double dc_mean(const struct pv_results_step *st, double *samba)
{
	double p, m = stat_mean(st->dc, "cpu", &p);

	*samba = stat_mean(st->dc, "samba", &p);
	if (isnan(m)) {
		m = st->load.dc_cpu;
		*samba = st->load.dc_samba;
	}
	return m;
}

/* The logon p95 (ms) with its bucket, and the logons that failed or were tried again. */
static void logon_cell(struct pv_buf *b, const struct pv_results_step *st)
{
	const struct pv_load_lat *l = &st->load.logon;
	const struct pv_load_logon *n = &st->load.logon_n;

	if (!st->has_load || !st->has_logon) {
		pv_buf_addstr(b, "<td class=\"na\">-</td>");
		return;
	}
	pv_buf_addf(b, "<td%s>", n->failed ? " class=\"over\"" : "");
	if (isnan(l->p95))
		pv_buf_addstr(b, "-");
	else
		pv_buf_addf(b, "%.1f", 1000 * l->p95);
	if (!isnan(l->p95_lo) && !isnan(l->p95_hi))
		pv_buf_addf(b, "<br><span class=\"ci\">%.1f-%.1f</span>", 1000 * l->p95_lo,
			    1000 * l->p95_hi);
	if (n->failed || n->retries)
		pv_buf_addf(b, "<br>%llu failed%s, %llu retried", (unsigned long long)n->failed,
			    n->failed ? " !" : "", (unsigned long long)n->retries);
	pv_buf_addstr(b, "</td>");
}

/* The busiest client loop (% of a core) and its loop lag p95 (ms), the client named. */
static void clients_cell(struct pv_buf *b, const struct pv_results_step *st)
{
	const struct pv_load_client *top = pv_load_bound_client(&st->load, NULL);

	/* the client bound, else the busiest */
	if (!top)
		for (size_t i = 0; i < st->load.nclients; i++)
			if (!top || pv_load_loop_cpu(&st->load.clients[i]) > pv_load_loop_cpu(top))
				top = &st->load.clients[i];
	if (!top) {
		pv_buf_addstr(b, "<td class=\"na\">-</td>");
		return;
	}
	pv_buf_addf(b, "<td%s>", top->bound ? " class=\"over\"" : "");
	if (isnan(pv_load_loop_cpu(top)))
		pv_buf_addstr(b, "-");
	else
		pv_buf_addf(b, "%.0f", pv_load_loop_cpu(top));
	if (isnan(top->lag_p95))
		pv_buf_addstr(b, " / -");
	else
		pv_buf_addf(b, " / %.0f", top->lag_p95);
	pv_buf_addstr(b, "<br><span class=\"ci\">");
	pv_escape_xml(b, top->name);
	pv_buf_addf(b, "%s</span></td>", top->bound ? " bound !" : "");
}

static void steps_table(struct pv_buf *b, const struct pv_results_run *run, const size_t *ord)
{
	bool dc = false, logons = false, clients = false, refine = false;

	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_step *st = &run->steps[i];

		dc |= st->dc != NULL || !isnan(st->load.dc_cpu);
		logons |= st->has_logon;
		clients |= st->load.nclients > 0;
		refine |= st->refine;
	}
	pv_buf_addstr(b, "<h2 id=\"steps\">The steps</h2>\n<p>");
	pv_buf_addstr(b, run->has_load ? "The built-in driver's figures, each with its 95% "
					 "interval below it (from the counts and the latency "
					 "histograms), "
				       : "");
	pv_buf_addstr(
		b, "the server's CPU and the hosts' states, users rising. Underlined and "
		   "marked ! : over the threshold.</p>\n<div class=\"tw\"><table>\n<caption>Every "
		   "step</caption>\n<thead><tr><th scope=\"col\">step</th>"
		   "<th scope=\"col\">users</th>");
	if (run->has_load)
		pv_buf_addstr(b,
			      "<th scope=\"col\">scen/s<br>(95%)</th><th scope=\"col\">expected"
			      "</th><th scope=\"col\">overload %<br>(95%)</th><th scope=\"col\">"
			      "errors</th><th scope=\"col\">median ms</th><th scope=\"col\">p95 "
			      "ms<br>(95%)</th><th scope=\"col\">logged on</th><th scope=\"col\">"
			      "counts</th>");
	pv_buf_addstr(b, "<th scope=\"col\">server CPU %<br>mean / p95</th>"
			 "<th scope=\"col\">smbd %<br>of a core</th>");
	if (dc)
		pv_buf_addstr(b, "<th scope=\"col\">DC CPU %<br>(samba % of a core)</th>");
	if (logons)
		pv_buf_addstr(b, "<th scope=\"col\">logon p95 ms<br>(its bucket)</th>");
	if (clients)
		pv_buf_addstr(b, "<th scope=\"col\">busiest client loop %<br>/ lag p95 ms</th>");
	pv_buf_addstr(b, "<th scope=\"col\" class=\"l\">hosts (how the step "
			 "ended)</th></tr></thead>\n<tbody>\n");
	for (size_t j = 0; j < run->nsteps; j++) {
		const struct pv_results_step *st = &run->steps[ord[j]];
		double m, p, lo, hi, samba;

		pv_buf_addf(b, "<tr%s><th scope=\"row\">%u%s</th><td>%u</td>",
			    st->load.client_bound ? " class=\"cb\"" : "", st->n,
			    st->refine ? " <span class=\"tag\">refine</span>" : "", st->users);
		if (run->has_load && st->has_load) {
			bool over = st->load.all.overload > run->cfg.overload;

			pv_buf_addf(b, "<td>%.2f", st->load.rate);
			if (st->load.secs > 0)
				pv_buf_addf(b, "<br><span class=\"ci\">%.2f-%.2f</span>",
					    st->load.rate_lo, st->load.rate_hi);
			pv_buf_addstr(b, "</td>");
			num_cell(b, "%.2f", st->load.expected);
			pv_buf_addf(b, "<td%s>%.2f%s", over ? " class=\"over\"" : "",
				    st->load.all.overload, over ? " !" : "");
			if (pv_load_ended(&st->load.all)) {
				pv_stat_binom_ci(st->load.all.n.overloaded,
						 pv_load_ended(&st->load.all), ALPHA, &lo, &hi);
				pv_buf_addf(b, "<br><span class=\"ci\">%.2f-%.2f</span>", 100 * lo,
					    100 * hi);
			}
			pv_buf_addstr(b, "</td>");
			pv_buf_addf(b, "<td%s>%llu</td>",
				    st->load.all.n.errors ? " class=\"over\"" : "",
				    (unsigned long long)st->load.all.n.errors);
			ms_cell(b, st->load.all.lat.median, false);
			if (isnan(st->load.all.lat.p95)) {
				pv_buf_addstr(b, "<td class=\"na\">-</td>");
			} else {
				pv_buf_addf(b, "<td>%.1f", st->load.all.lat.p95 * 1000);
				if (st->has_hist) {
					pv_load_hist_ci(&st->load.all.n.lat, 0.95, ALPHA, &lo, &hi);
					pv_buf_addf(b, "<br><span class=\"ci\">%.1f-", lo * 1000);
					if (isinf(hi))
						pv_buf_addstr(b, "?</span>");
					else
						pv_buf_addf(b, "%.1f</span>", hi * 1000);
				}
				pv_buf_addstr(b, "</td>");
			}
			pv_buf_addf(b, "<td%s>%u of %u%s</td>",
				    st->load.connected < st->users ? " class=\"over\"" : "",
				    st->load.connected, st->users,
				    st->load.lost ? ", client lost" : "");
			/* a client-bound step is never shown carried: it says nothing of the
			 * server */
			if (st->load.client_bound)
				pv_buf_addstr(b, "<td><b>no: client-bound</b></td>");
			else
				pv_buf_addf(b, "<td>%s</td>", st->carried ? "yes" : "<b>no</b>");
		} else if (run->has_load) {
			pv_buf_addstr(b, "<td class=\"na\" colspan=\"8\">no figures</td>");
		}
		m = stat_mean(st->srv, "cpu", &p);
		if (isnan(m))
			pv_buf_addstr(b, "<td class=\"na\">not watched</td>");
		else
			pv_buf_addf(b, "<td>%.1f / %.1f</td>", m, p);
		num_cell(b, "%.1f", stat_mean(st->srv, "smbd", &p));
		if (dc) {
			m = dc_mean(st, &samba);
			if (isnan(m))
				pv_buf_addstr(b, "<td class=\"na\">-</td>");
			else if (isnan(samba))
				pv_buf_addf(b, "<td>%.1f</td>", m);
			else
				pv_buf_addf(b, "<td>%.1f (%.1f)</td>", m, samba);
		}
		if (logons)
			logon_cell(b, st);
		if (clients)
			clients_cell(b, st);
		pv_buf_addstr(b, "<td class=\"l\">");
		host_states(b, st);
		pv_buf_addstr(b, " (");
		pv_escape_xml(b, st->ended[0] ? st->ended : "?");
		pv_buf_addstr(b, ")</td></tr>\n");
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	if (!dc)
		pv_report_na(b, "The DC's CPU: " NOT_RECORDED ".");
	if (run->has_load && !logons)
		pv_report_na(b, "The logons (their time, failures and tries again): " NOT_RECORDED
				".");
	if (run->has_load)
		pv_buf_addstr(
			b, "<p>\"counts\": whether the step counts for the answer (overload at "
			   "most the threshold, no error, every user logged on, no client "
			   "lost, no client the limit). <b>no: client-bound</b>: a client was the "
			   "limit (its busiest event loop at 90% of a core or more, or its loop "
			   "lag p95 at 100 ms or more), so the step measured the clients, not the "
			   "server, and never counts. Logon p95: the time from a user's first "
			   "try to a session and a tree; every logon passes through the DC, so a "
			   "slow DC shows there, beside its CPU.");
	if (refine)
		pv_buf_addstr(b, " <span class=\"tag\">refine</span>: a step --refine added "
				 "between the last step carried and the first over it.");
	if (run->has_load)
		pv_buf_addstr(b, "</p>\n");
}

/* A table's heading cells of the steps, users rising (span columns each), and the head's end. */
/* Whether kind k has a row: weighed, or started in some step (a run with load.workload draws
 * only 'learned'; a run without it never does). */
static bool kind_shown(const struct pv_results_run *run, int k)
{
	if (run->cfg.kind[k].weight > 0)
		return true;
	for (size_t i = 0; i < run->nsteps; i++)
		if (run->steps[i].has_load && run->steps[i].load.kind[k].n.started)
			return true;
	return false;
}

static void step_heads(struct pv_buf *b, const struct pv_results_run *run, const size_t *ord,
		       int span)
{
	for (size_t i = 0; i < run->nsteps; i++) {
		pv_buf_addstr(b, "<th scope=\"col\"");
		if (span > 1)
			pv_buf_addf(b, " colspan=\"%d\"", span);
		pv_buf_addf(b, ">%u users</th>", run->steps[ord[i]].users);
	}
	pv_buf_addstr(b, "</tr></thead>\n<tbody>\n");
}

/* FSCT HomeFolders' SMB2 mix as the server sees it (Nutanix TN-2117, "Nutanix Files
 * Performance", its FSCT section; docs/load.md), % of the requests */
static const struct {
	const char *name;
	double pct;
} fsct_mix[] = {{"create", 22},	    {"close", 19},	     {"read", 14},
		{"query_info", 13}, {"query_directory", 10}, {"write", 7}};
#define NFSCT (sizeof(fsct_mix) / sizeof(fsct_mix[0]))

/* The requests step st sent, of every command (saturated, as their counts are). */
static uint64_t ops_all(const struct pv_results_step *st)
{
	uint64_t all = st->ops_other;

	for (int o = 0; o < PV_LOAD_OPS; o++)
		all = all > UINT64_MAX - st->load.all.n.ops[o] ? UINT64_MAX
							       : all + st->load.all.n.ops[o];
	return all;
}

/* One command's row (o: a pv_load_op; -1: the commands this provision does not know): FSCT's
 * share when it gives one, then each step's; nothing when no step sent it and FSCT names
 * none. One pass over the steps: the table is linear in them, whatever load.json names. */
static void op_row(struct pv_buf *b, const struct pv_results_run *run, const size_t *ord, int o,
		   double fsct)
{
	bool any = false;

	for (size_t i = 0; i < run->nsteps && !any; i++)
		any = (o < 0 ? run->steps[i].ops_other : run->steps[i].load.all.n.ops[o]) > 0;
	if (!any && isnan(fsct))
		return;
	pv_buf_addf(b, "<tr><th scope=\"row\">%s</th>", o < 0 ? "other" : pv_load_op_names[o]);
	num_cell(b, "%.0f", fsct);
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_step *st = &run->steps[ord[i]];
		uint64_t all = ops_all(st), n = o < 0 ? st->ops_other : st->load.all.n.ops[o];

		if (!st->has_ops)
			pv_buf_addstr(b, "<td class=\"na\">-</td>");
		else
			pv_buf_addf(b, "<td>%.1f</td>", all ? 100.0 * (double)n / (double)all : 0);
	}
	pv_buf_addstr(b, "</tr>\n");
}

/* The SMB operations, when the run counted them: FSCT's named commands first, then the other
 * SMB2 commands any step sent, then those of names this provision does not know. */
static void ops_table(struct pv_buf *b, const struct pv_results_run *run, const size_t *ord)
{
	bool any = false;

	for (size_t i = 0; i < run->nsteps; i++)
		any |= run->steps[i].has_ops;
	pv_buf_addstr(b, "<h3>SMB operation mix</h3>\n");
	if (!any) {
		pv_report_na(b, "SMB operations per command: " NOT_RECORDED ".");
		return;
	}
	pv_buf_addstr(b, "<p>Each SMB command's share of the step's requests, in % (the counts in "
			 "the last row), beside FSCT HomeFolders' as the server sees it (Nutanix "
			 "TN-2117; about 15% other commands). Commands no step sent are left "
			 "out.</p>\n<div class=\"tw\"><table>\n<caption>SMB operation "
			 "mix</caption>\n<thead><tr><th scope=\"col\" class=\"l\">command</th>"
			 "<th scope=\"col\">FSCT %</th>");
	step_heads(b, run, ord, 1);
	for (size_t f = 0; f < NFSCT; f++)
		op_row(b, run, ord, pv_load_op_of(fsct_mix[f].name), fsct_mix[f].pct);
	for (int o = 0; o < PV_LOAD_OPS; o++) {
		bool fsct = false;

		for (size_t f = 0; f < NFSCT; f++)
			fsct |= !strcmp(fsct_mix[f].name, pv_load_op_names[o]);
		if (!fsct)
			op_row(b, run, ord, o, NAN);
	}
	op_row(b, run, ord, -1, NAN);
	pv_buf_addstr(b, "<tr><th scope=\"row\">requests</th><td class=\"na\">-</td>");
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_step *st = &run->steps[ord[i]];

		if (st->has_ops)
			pv_buf_addf(b, "<td>%llu</td>", (unsigned long long)ops_all(st));
		else
			pv_buf_addstr(b, "<td class=\"na\">-</td>");
	}
	pv_buf_addstr(b, "</tr>\n</tbody>\n</table></div>\n");
}

static void kinds_tables(struct pv_buf *b, const struct pv_results_run *run, const size_t *ord)
{
	pv_buf_addstr(b, "<h2 id=\"latency\">Latency and mix per scenario kind</h2>\n");
	if (!run->has_load) {
		pv_report_na(b, "The driver measures no scenarios: " NOT_RECORDED ".");
		return;
	}
	pv_buf_addstr(
		b, "<p>Median and p95 latency in ms, per kind and step; a p95 over its kind's "
		   "limit is "
		   "underlined and marked !.</p>\n<div class=\"tw\"><table>\n<caption>Latency per "
		   "scenario kind</caption>\n<thead><tr>"
		   "<th scope=\"col\" class=\"l\">kind</th><th scope=\"col\">limit s</th>");
	step_heads(b, run, ord, 2);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		if (!kind_shown(run, k))
			continue;
		pv_buf_addf(b, "<tr><th scope=\"row\">%s</th><td>%g</td>",
			    pv_playbook_workload_names[k], run->cfg.kind[k].limit);
		for (size_t i = 0; i < run->nsteps; i++) {
			const struct pv_load_kind_sum *kd = &run->steps[ord[i]].load.kind[k];

			if (!run->steps[ord[i]].has_load || !kd->lat.n) {
				pv_buf_addstr(b, "<td class=\"na\" colspan=\"2\">-</td>");
				continue;
			}
			ms_cell(b, kd->lat.median, false);
			ms_cell(b, kd->lat.p95, kd->lat.p95 > run->cfg.kind[k].limit);
		}
		pv_buf_addstr(b, "</tr>\n");
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	/* the scenario mix */
	pv_buf_addstr(b,
		      "<p>Each kind's share of the scenarios started, in % (its weight's share in "
		      "the second column; the counts in the last row).</p>\n<div "
		      "class=\"tw\"><table>\n<caption>Scenario mix</caption>\n"
		      "<thead><tr><th scope=\"col\" class=\"l\">kind</th>"
		      "<th scope=\"col\">weight %</th>");
	step_heads(b, run, ord, 1);
	{
		double wsum = 0;

		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			wsum += run->cfg.kind[k].weight;
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
			if (!kind_shown(run, k))
				continue;
			pv_buf_addf(b, "<tr><th scope=\"row\">%s</th><td>%.1f</td>",
				    pv_playbook_workload_names[k],
				    wsum > 0 ? 100 * run->cfg.kind[k].weight / wsum : 0);
			for (size_t i = 0; i < run->nsteps; i++) {
				const struct pv_results_step *st = &run->steps[ord[i]];

				if (!st->has_load || !st->load.all.n.started)
					pv_buf_addstr(b, "<td class=\"na\">-</td>");
				else
					pv_buf_addf(b, "<td>%.1f</td>",
						    100.0 * (double)st->load.kind[k].n.started /
							    (double)st->load.all.n.started);
			}
			pv_buf_addstr(b, "</tr>\n");
		}
		pv_buf_addstr(b, "<tr><th scope=\"row\">started</th><td>100</td>");
		for (size_t i = 0; i < run->nsteps; i++)
			pv_buf_addf(b, "<td>%llu</td>",
				    (unsigned long long)run->steps[ord[i]].load.all.n.started);
		pv_buf_addstr(b, "</tr>\n");
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	ops_table(b, run, ord);
}

static void hint(struct pv_buf *b, const struct pv_results_run *run)
{
	struct pv_results_hint h;

	pv_results_hint(run, &h);
	pv_buf_addstr(b, "<h2 id=\"hint\">Bottleneck hint</h2>\n<div class=\"hint\">\n");
	addh(b, "p", h.nearest);
	if (h.first[0])
		addh(b, "p", h.first);
	pv_buf_addstr(b,
		      "</div>\n<p>From the data above only: a resource is near its limit at "
		      "80% of it; CPU limits are 100% of the cores (a client's load driver: its "
		      "busiest event loop, of the one core it runs on), memory's is all of it. A "
		      "client is the limit (its step client-bound) at 90% of a core or a loop "
		      "lag p95 of 100 ms. Disks and the network have no limit the run knows; "
		      "their levels are shown, not judged.</p>\n");
}

int pv_report_page(const struct pv_results_run *run, struct pv_buf *b)
{
	char title[160];
	size_t *ord = calloc(run->nsteps ? run->nsteps : 1, sizeof(*ord));

	if (!ord)
		return pv_error(PV_EIO, "out of memory");
	pv_results_by_users(run, ord);
	snprintf(title, sizeof(title), "provision run %s (%s)", run->id, run->driver);
	pv_report_begin(b, title);
	head(b, run);
	answer(b, run);
	ramp(b, run, ord);
	steps_table(b, run, ord);
	kinds_tables(b, run, ord);
	pv_report_over_time(b, run);
	hint(b, run);
	pv_report_settings(b, run);
	pv_report_errors(b, run);
	pv_buf_addstr(b, "<p class=\"meta\">Written by provision " PV_VERSION
			 " from the files of this run's folder (manifest.json, load.json, "
			 "step-NN/watch.csv, the clients' load.jsonl); this page fetches "
			 "nothing.</p>\n");
	pv_report_end(b);
	free(ord);
	return pv_buf_failed(b) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* ---- writing ---- */

int pv_report_write(const char *dir, const char *path, char *written, size_t cap, size_t *bytes,
		    struct pv_results_run **out)
{
	struct pv_results_run *run = NULL;
	struct pv_buf b = PV_BUF_INIT;
	int r;

	if ((r = pv_results_read(dir, &run)) != PV_OK)
		return r;
	if (path)
		snprintf(written, cap, "%s", path);
	else
		snprintf(written, cap, "%s/report.html", dir);
	if ((r = pv_report_page(run, &b)) == PV_OK)
		r = pv_file_replace(written, b.data, b.len);
	*bytes = b.len;
	pv_buf_release(&b, 0);
	if (r == PV_OK && out)
		*out = run;
	else
		pv_results_free(run);
	return r;
}
