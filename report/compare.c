/* report/compare.c: compare --html's page, and the words of a comparison its text shares with
 * it (see report.h). */
#include "report/html.h"
#include "report/report.h"

#include "load/answer.h"
#include "results/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *dash_if_nan(double v, char *buf, size_t cap, const char *fmt)
{
	if (isnan(v))
		return "-";
	if (isinf(v))
		return v > 0 ? "inf" : "-inf";
	snprintf(buf, cap, fmt, v);
	return buf;
}

void pv_report_cmp_fig(const struct pv_results_cmp_fig *f, int prec, char *out, size_t cap)
{
	char a[32];

	if (!f->have) {
		snprintf(out, cap, "-");
		return;
	}
	if (isnan(f->lo))
		snprintf(out, cap, "%.*f", prec, f->v);
	else
		snprintf(out, cap, "%.*f [%.*f-%s]", prec, f->v, prec, f->lo,
			 dash_if_nan(f->hi, a, sizeof(a), prec == 1 ? "%.1f" : "%.2f"));
}

void pv_report_cmp_diff(const struct pv_results_cmp_step *S, size_t g, enum pv_results_cmp_figure k,
			char *out, size_t cap)
{
	const struct pv_results_cmp_fig *f = &S->fig[g * PV_RESULTS_CMP_FIGS + k];
	char a[32], b[32];

	if (!pv_results_cmp_weighed(S, g)) {
		snprintf(out, cap, "not compared (client-bound)");
		return;
	}
	if (isnan(f->d)) {
		snprintf(out, cap, "-");
		return;
	}
	snprintf(out, cap, "%+.*f %s [%s, %s] %s", k == PV_RESULTS_CMP_OVERLOAD ? 2 : 1, f->d,
		 pv_results_cmp_diff_units[k], dash_if_nan(f->dlo, a, sizeof(a), "%+.1f"),
		 dash_if_nan(f->dhi, b, sizeof(b), "%+.1f"), pv_results_cmp_verdicts[f->verdict]);
}

const char *const pv_report_cmp_labels[PV_RESULTS_CMP_FIGS] = {"scen/s", "overload %", "median ms",
							       "p95 ms"};

void pv_report_cmp_answer(const struct pv_results_cmp *c, size_t g, char *out, size_t cap)
{
	const struct pv_results_cmp_group *G = &c->groups[g];
	struct pv_buf b = PV_BUF_INIT;

	pv_load_answer_range(&b, G->label, G->answer_lo, G->answer_hi, G->nruns,
			     G->answer_at_least);
	snprintf(out, cap, "%s", b.data ? b.data : "");
	pv_buf_release(&b, 0);
}

void pv_report_compare_page(const struct pv_results_cmp *c, struct pv_buf *b)
{
	size_t n = c->nsteps, ng = c->ngroups;
	double *buf = calloc(5 * n * ng + 1, sizeof(double));
	struct pv_plot_series *s = calloc(2 * ng + 1, sizeof(*s));
	char(*names)[64] = calloc(2 * ng + 1, sizeof(*names));
	static const char marks[] = "ostdx";
	struct pv_plot p;
	char t[160];

	pv_report_begin(b, "provision compare");
	pv_buf_addstr(b, "<h1>Runs compared</h1>\n<div class=\"tw\"><table>\n<caption>The runs "
			 "(the first is the "
			 "base)</caption>\n<thead><tr><th scope=\"col\">label</th><th "
			 "scope=\"col\" class=\"l\">runs</th><th scope=\"col\" "
			 "class=\"l\">answer</th></tr></thead>\n<tbody>\n");
	for (size_t g = 0; g < ng; g++) {
		const struct pv_results_cmp_group *G = &c->groups[g];

		pv_buf_addf(b, "<tr><th scope=\"row\">%s</th><td class=\"l\">", G->label);
		for (size_t i = 0; i < G->nruns; i++) {
			pv_buf_addstr(b, i ? "<br>" : "");
			pv_escape_xml(b, G->runs[i]->id);
			pv_buf_addstr(b, " (<code>");
			pv_escape_xml(b, G->runs[i]->dir);
			pv_buf_addstr(b, "</code>)");
		}
		pv_buf_addstr(b, "</td><td class=\"l\">");
		pv_report_cmp_answer(c, g, t, sizeof(t));
		pv_escape_xml(b, t);
		if (g) {
			pv_buf_addf(b, "; %+ld against %s: <b>%s</b>", G->answer_diff,
				    c->groups[0].label,
				    G->answer_real   ? "real"
				    : G->answer_diff ? "not shown real"
						     : "");
			pv_buf_addstr(b, " ");
			pv_escape_xml(b, G->answer_why);
		}
		pv_buf_addstr(b, "</td></tr>\n");
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	pv_buf_addf(b,
		    "<p>%s. Each figure with its 95%% interval; a difference from %s is beyond the "
		    "noise when its interval, widened over the %zu steps compared, leaves out "
		    "0.</p>\n",
		    c->differ_rate ? "Throughput differs beyond the noise at some step"
				   : "No step's throughput differs beyond the noise",
		    c->groups[0].label, c->ncompared);
	if (c->ncompared < n)
		pv_buf_addf(b,
			    "<p>%zu step%s <b>not compared</b>: a run was <b "
			    "class=\"tag\">client-bound</b> there (its clients were the limit, not "
			    "the server), so its figures say nothing of the server.</p>\n",
			    n - c->ncompared, n - c->ncompared == 1 ? "" : "s");
	/* the overlay: throughput (left, markers and whiskers) and overload (right, dashed) */
	if (buf && s && names) {
		double *x = buf;

		for (size_t i = 0; i < n; i++)
			x[i] = c->steps[i].users;
		for (size_t g = 0; g < ng; g++) {
			double *y = buf + n * (1 + 4 * g), *lo = y + n, *hi = lo + n, *ov = hi + n;

			for (size_t i = 0; i < n; i++) {
				const struct pv_results_cmp_fig *r =
					&c->steps[i].fig[g * PV_RESULTS_CMP_FIGS];

				y[i] = r[PV_RESULTS_CMP_RATE].have ? r[PV_RESULTS_CMP_RATE].v : NAN;
				lo[i] = r[PV_RESULTS_CMP_RATE].lo;
				hi[i] = r[PV_RESULTS_CMP_RATE].hi;
				ov[i] = r[PV_RESULTS_CMP_OVERLOAD].have
						? r[PV_RESULTS_CMP_OVERLOAD].v
						: NAN;
			}
			snprintf(names[2 * g], sizeof(names[0]), "%s: scenarios/s",
				 c->groups[g].label);
			snprintf(names[2 * g + 1], sizeof(names[0]), "%s: overload %%",
				 c->groups[g].label);
			s[2 * g] = (struct pv_plot_series){names[2 * g], x,   y, lo,	       hi,
							   NULL,	 n,   0, marks[g % 5], 0,
							   (int)(g % 8), true};
			s[2 * g + 1] = (struct pv_plot_series){
				names[2 * g + 1], x, ov,	   NULL, NULL, NULL, n, 1,
				marks[g % 5],	  1, (int)(g % 8), true};
		}
		pv_plot_init(&p);
		p.id = "plot-compare";
		p.title = "Throughput and overload per step, run against run";
		p.desc =
			"Users on the horizontal axis; each run's scenarios per second on the left "
			"with 95% intervals (solid), its overload percent on the right (dashed); "
			"each run has its own marker.";
		p.xlabel = "users (all clients)";
		p.ylabel = "scenarios/s";
		p.y2label = "overload %";
		p.xmin = 0;
		p.ymin = 0;
		p.y2min = 0;
		p.s = s;
		p.ns = 2 * ng;
		pv_plot_svg(b, &p);
	}
	free(buf);
	free(s);
	free(names);
	/* the table */
	pv_buf_addstr(b, "<h2>Per step</h2>\n<div class=\"tw\"><table>\n<caption>Each figure: "
			 "value [95% interval]; "
			 "differences against the base: value [widened interval] and the "
			 "verdict</caption>\n<thead><tr><th scope=\"col\">users</th><th "
			 "scope=\"col\" class=\"l\">figure</th>");
	for (size_t g = 0; g < ng; g++)
		pv_buf_addf(b, "<th scope=\"col\">%s</th>", c->groups[g].label);
	for (size_t g = 1; g < ng; g++)
		pv_buf_addf(b, "<th scope=\"col\">%s - %s</th>", c->groups[g].label,
			    c->groups[0].label);
	pv_buf_addstr(b, "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		const struct pv_results_cmp_step *S = &c->steps[i];

		for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++) {
			pv_buf_addstr(b, "<tr>");
			if (!f)
				pv_buf_addf(b, "<th scope=\"row\" rowspan=\"%d\">%u</th>",
					    PV_RESULTS_CMP_FIGS, S->users);
			pv_buf_addf(b, "<td class=\"l\">%s</td>", pv_report_cmp_labels[f]);
			for (size_t g = 0; g < ng; g++) {
				pv_report_cmp_fig(&S->fig[g * PV_RESULTS_CMP_FIGS + f],
						  f <= PV_RESULTS_CMP_OVERLOAD ? 2 : 1, t,
						  sizeof(t));
				pv_buf_addstr(b, "<td>");
				pv_escape_xml(b, t);
				pv_buf_addstr(b, "</td>");
			}
			for (size_t g = 1; g < ng; g++) {
				const struct pv_results_cmp_fig *F =
					&S->fig[g * PV_RESULTS_CMP_FIGS + f];
				bool beyond = F->verdict == PV_RESULTS_CMP_HIGHER ||
					      F->verdict == PV_RESULTS_CMP_LOWER;

				pv_report_cmp_diff(S, g, (enum pv_results_cmp_figure)f, t,
						   sizeof(t));
				pv_buf_addf(b, "<td%s>", beyond ? " class=\"over\"" : "");
				pv_escape_xml(b, t);
				pv_buf_addstr(b, "</td>");
			}
			pv_buf_addstr(b, "</tr>\n");
		}
		if (!S->compared) {
			pv_buf_addf(b,
				    "<tr class=\"cb\"><td class=\"l\" colspan=\"%zu\"><b "
				    "class=\"tag\">client-bound</b> not compared as the server's: ",
				    2 * ng + 1);
			pv_escape_xml(b, S->note);
			pv_buf_addstr(b,
				      ": the clients were the limit, not the server.</td></tr>\n");
		}
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	if (c->uncommon && c->uncommon[0]) {
		pv_buf_addstr(b, "<h3>Steps left out (not in every run)</h3>\n<pre>");
		pv_escape_xml(b, c->uncommon);
		pv_buf_addstr(b, "</pre>\n");
	}
	pv_buf_addstr(b, "<h2>What differs between the runs</h2>\n");
	if (!c->nsettings) {
		pv_buf_addstr(b, "<p>Nothing recorded differs.</p>\n");
	} else {
		pv_buf_addstr(b, "<div class=\"tw\"><table>\n<thead><tr><th scope=\"col\" "
				 "class=\"l\">setting</th>");
		for (size_t r = 0; r < c->nruns; r++) {
			pv_buf_addstr(b, "<th scope=\"col\" class=\"l\">");
			pv_escape_xml(b, c->runs[r]->id);
			pv_buf_addstr(b, "</th>");
		}
		pv_buf_addstr(b, "</tr></thead>\n<tbody>\n");
		for (size_t i = 0; i < c->nsettings; i++) {
			pv_buf_addstr(b, "<tr><th scope=\"row\">");
			pv_escape_xml(b, c->settings[i].key);
			pv_buf_addstr(b, "</th>");
			for (size_t r = 0; r < c->nruns; r++) {
				pv_buf_addstr(b, "<td class=\"l\">");
				pv_escape_xml(b, c->settings[i].values[r]);
				pv_buf_addstr(b, "</td>");
			}
			pv_buf_addstr(b, "</tr>\n");
		}
		pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	}
	pv_buf_addstr(b, "<p class=\"meta\">Written by provision " PV_VERSION
			 " compare; this page fetches nothing.</p>\n");
	pv_report_end(b);
}
