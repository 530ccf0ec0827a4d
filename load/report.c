/* load/report.c: load.txt, load.csv, load-kinds.csv, load.json and load.svg (see report.h). */
#include "load/report.h"

#include "json/json.h"
#include "load/line.h"
#include "util/err.h"

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

/* ---- the answer ---- */

/* Users of the step without a connection at some point: those the clients said failed, or
 * those missing from the count of connected ones, whichever is more. */
static unsigned unconnected(const struct pv_load_summary *s)
{
	unsigned missing = s->connected < s->users ? s->users - s->connected : 0;

	return s->failed > missing ? s->failed : missing;
}

/* "7.9%", then what else kept the step from counting: ", 3 errors", ... */
static void verdict(const struct pv_load_summary *s, struct pv_buf *out)
{
	pv_buf_addf(out, "%.1f%%", s->all.overload);
	if (s->all.n.errors)
		pv_buf_addf(out, ", %llu error%s", (unsigned long long)s->all.n.errors,
			    s->all.n.errors == 1 ? "" : "s");
	if (unconnected(s))
		pv_buf_addf(out, ", %u of %u users not connected", unconnected(s), s->users);
	if (s->lost)
		pv_buf_addf(out, ", %u client%s lost", s->lost, s->lost == 1 ? "" : "s");
	if (!s->all.n.started)
		pv_buf_addstr(out, ", no scenario started");
}

int pv_load_answer_line(const struct pv_load_results *r, struct pv_buf *out)
{
	unsigned users;
	long best = pv_load_answer(r->steps, r->n, r->cfg->overload, &users);
	const struct pv_load_summary *next = NULL, *first = NULL;

	if (!r->n) {
		pv_buf_addstr(out, "no step was measured");
		return done(out);
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];

		if (!first || s->users < first->users)
			first = s;
		if (best >= 0 && s->users > users && (!next || s->users < next->users))
			next = s;
	}
	if (best < 0) {
		pv_buf_addf(out, "the server carried no step without overload (overload ");
		verdict(first, out);
		pv_buf_addf(out, " at %u, the fewest users tried)", first->users);
		return done(out);
	}
	pv_buf_addf(out, "the server carried %u users without overload", users);
	pv_buf_addstr(out, next ? " (overload " : ", the most the ramp tried (overload ");
	verdict(&r->steps[best], out);
	pv_buf_addf(out, " at %u", users);
	if (next) {
		pv_buf_addstr(out, "; ");
		verdict(next, out);
		pv_buf_addf(out, " at %u", next->users);
	}
	pv_buf_addstr(out, ")");
	return done(out);
}

/* ---- load.txt ---- */

static void cell_ms(struct pv_buf *out, int width, const struct pv_load_lat *l, double v)
{
	if (l->n)
		pv_buf_addf(out, "%*.1f", width, ms(v));
	else
		pv_buf_addf(out, "%*s", width, "-");
}

int pv_load_report_txt(const struct pv_load_results *r, struct pv_buf *out)
{
	const struct pv_load_config *c = r->cfg;

	pv_buf_addf(out,
		    "provision load: %u scenarios per user-hour; a scenario is overloaded when it "
		    "starts over %g s late or takes longer than its limit; a step counts when its "
		    "overload is at most %g%% with no error and every user connected\n",
		    c->rate, c->late, c->overload);
	if (r->title)
		pv_buf_addf(out, "%s\n", r->title);
	pv_buf_addstr(out, "\n users  scen/s  expected  overload %  errors  median ms    p95 ms"
			   "  server CPU %\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];
		size_t mark;

		pv_buf_addf(out, "%6u %7.2f %9.2f %11.2f %7llu", s->users, s->rate, s->expected,
			    s->all.overload, (unsigned long long)s->all.n.errors);
		cell_ms(out, 11, &s->all.lat, s->all.lat.median);
		cell_ms(out, 10, &s->all.lat, s->all.lat.p95);
		if (isnan(s->cpu))
			pv_buf_addf(out, "%14s", "-");
		else
			pv_buf_addf(out, "%14.1f", s->cpu);
		/* notes: what else kept the step from counting, when anything did */
		mark = out->len;
		if (unconnected(s))
			pv_buf_addf(out, "%s%u user%s not connected", out->len > mark ? ", " : "  ",
				    unconnected(s), unconnected(s) == 1 ? "" : "s");
		if (s->lost)
			pv_buf_addf(out, "%s%u client%s lost", out->len > mark ? ", " : "  ",
				    s->lost, s->lost == 1 ? "" : "s");
		pv_buf_addstr(out, "\n");
	}
	pv_buf_addstr(out, "\n");
	pv_load_answer_line(r, out);
	pv_buf_addstr(out, "\n");
	return done(out);
}

/* ---- load.csv, load-kinds.csv ---- */

#define SUM_HEADER                                                                                 \
	"started,completed,errors,late,over_limit,overloaded,overload_pct,median_ms,p95_ms,max_ms"

static void csv_sum(struct pv_buf *out, const struct pv_load_kind_sum *k)
{
	pv_buf_addf(out, "%llu,%llu,%llu,%llu,%llu,%llu,%.3f", (unsigned long long)k->n.started,
		    (unsigned long long)k->lat.n, (unsigned long long)k->n.errors,
		    (unsigned long long)k->n.late, (unsigned long long)k->n.over_limit,
		    (unsigned long long)k->n.overloaded, k->overload);
	if (k->lat.n)
		pv_buf_addf(out, ",%.3f,%.3f,%.3f", ms(k->lat.median), ms(k->lat.p95),
			    ms(k->lat.max));
	else
		pv_buf_addstr(out, ",,,");
}

int pv_load_report_csv(const struct pv_load_results *r, struct pv_buf *out)
{
	pv_buf_addstr(out, "users,seconds,connected,not_connected,clients_lost,scen_per_s,"
			   "expected_per_s,server_cpu_pct,carried," SUM_HEADER "\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];

		pv_buf_addf(out, "%u,%.3f,%u,%u,%u,%.4f,%.4f,", s->users, s->secs, s->connected,
			    s->failed, s->lost, s->rate, s->expected);
		if (!isnan(s->cpu))
			pv_buf_addf(out, "%.1f", s->cpu);
		pv_buf_addf(out, ",%d,", pv_load_carried(s, r->cfg->overload));
		csv_sum(out, &s->all);
		pv_buf_addstr(out, "\n");
	}
	return done(out);
}

int pv_load_report_kinds_csv(const struct pv_load_results *r, struct pv_buf *out)
{
	pv_buf_addstr(out, "users,kind,weight,limit_s," SUM_HEADER "\n");
	for (size_t i = 0; i < r->n; i++)
		for (int k = 0; k < PV_LOAD_KINDS; k++) {
			pv_buf_addf(out, "%u,%s,%g,%g,", r->steps[i].users, pv_load_names[k],
				    r->cfg->kind[k].weight, r->cfg->kind[k].limit);
			csv_sum(out, &r->steps[i].kind[k]);
			pv_buf_addstr(out, "\n");
		}
	return done(out);
}

/* ---- load.json ---- */

static struct pv_json *lat_json(const struct pv_load_lat *l)
{
	struct pv_json *o = pv_json_object();

	pv_json_int(o, "n", (long long)l->n);
	pv_json_real(o, "median_ms", l->n ? ms(l->median) : NAN);
	pv_json_real(o, "p95_ms", l->n ? ms(l->p95) : NAN);
	pv_json_real(o, "max_ms", l->n ? ms(l->max) : NAN);
	return o;
}

static struct pv_json *sum_json(const struct pv_load_kind_sum *k)
{
	struct pv_json *o = pv_json_object();

	pv_load_counts_json(&k->n, true, o);
	pv_json_real(o, "overload_pct", k->overload);
	pv_json_set(o, "latency", lat_json(&k->lat));
	return o;
}

static struct pv_json *config_json(const struct pv_load_config *c)
{
	struct pv_json *o = pv_json_object(), *sc = pv_json_object();

	pv_json_int(o, "rate", c->rate);
	pv_json_real(o, "late", c->late);
	pv_json_real(o, "overload", c->overload);
	pv_json_int(o, "interval", c->interval);
	pv_json_int(o, "seed", (long long)c->seed);
	for (int k = 0; k < PV_LOAD_KINDS; k++) {
		struct pv_json *s = pv_json_object();

		pv_json_real(s, "weight", c->kind[k].weight);
		pv_json_real(s, "limit", c->kind[k].limit);
		pv_json_set(sc, pv_load_names[k], s);
	}
	pv_json_set(o, "scenarios", sc);
	return o;
}

static struct pv_json *step_json(const struct pv_load_summary *s, double threshold)
{
	struct pv_json *o = pv_json_object(), *kinds = pv_json_object();

	pv_json_int(o, "users", s->users);
	pv_json_real(o, "seconds", s->secs);
	pv_json_int(o, "connected", s->connected);
	pv_json_int(o, "not_connected", s->failed);
	pv_json_int(o, "clients_lost", s->lost);
	pv_json_real(o, "scen_per_s", s->rate);
	pv_json_real(o, "expected_per_s", s->expected);
	pv_json_real(o, "server_cpu_pct", s->cpu); /* null when not measured */
	pv_json_bool(o, "carried", pv_load_carried(s, threshold));
	pv_json_set(o, "all", sum_json(&s->all));
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		pv_json_set(kinds, pv_load_names[k], sum_json(&s->kind[k]));
	pv_json_set(o, "kinds", kinds);
	return o;
}

int pv_load_report_json(const struct pv_load_results *r, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object(), *steps = pv_json_array(), *ans = pv_json_object();
	struct pv_buf line = PV_BUF_INIT;
	unsigned users;
	long best = pv_load_answer(r->steps, r->n, r->cfg->overload, &users);
	char *text;
	int rc;

	pv_json_int(o, "version", 1);
	pv_json_str(o, "title", r->title);
	pv_json_set(o, "config", config_json(r->cfg));
	for (size_t i = 0; i < r->n; i++)
		pv_json_append(steps, step_json(&r->steps[i], r->cfg->overload));
	pv_json_set(o, "steps", steps);
	rc = pv_load_answer_line(r, &line);
	if (best >= 0) {
		pv_json_int(ans, "users", users);
		pv_json_int(ans, "step", best + 1);
	} else {
		pv_json_str(ans, "users", NULL);
		pv_json_str(ans, "step", NULL);
	}
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

#define W  800
#define H  500
#define X0 80.0	 /* the plot's left edge */
#define X1 720.0 /* right */
#define Y0 70.0	 /* top */
#define Y1 390.0 /* bottom */

#define C_SCEN	   "#1f77b4"
#define C_EXPECTED "#7f7f7f"
#define C_OVERLOAD "#d62728"
#define C_CPU	   "#2ca02c"

/* An axis from 0 to top in ticks of step: about 5 ticks of 1, 2 or 5 times a power of 10. */
static void scale(double max, double *top, double *step)
{
	double raw, mag, f;

	if (!(max > 0))
		max = 1;
	raw = max / 5;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	*step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
	*top = ceil(max / *step - 1e-9) * *step;
}

/* Text for XML: the five special characters as entities, a control character XML 1.0 does not
 * allow (all but tab, LF and CR) as '?'. */
static void esc(struct pv_buf *out, const char *s)
{
	for (; *s; s++) {
		const char *e = *s == '&'    ? "&amp;"
				: *s == '<'  ? "&lt;"
				: *s == '>'  ? "&gt;"
				: *s == '"'  ? "&quot;"
				: *s == '\'' ? "&apos;"
					     : NULL;

		if (e)
			pv_buf_addstr(out, e);
		else if ((unsigned char)*s < 0x20 && !strchr("\t\n\r", *s))
			pv_buf_addstr(out, "?");
		else
			pv_buf_add(out, s, 1);
	}
}

struct plot {
	double xtop, xstep, ltop, lstep;
};

static double px(const struct plot *p, double users)
{
	return X0 + (X1 - X0) * users / p->xtop;
}

static double py_left(const struct plot *p, double v)
{
	return Y1 - (Y1 - Y0) * v / p->ltop;
}

static double py_right(double pct)
{
	return Y1 - (Y1 - Y0) * (pct < 0 ? 0 : pct > 100 ? 100 : pct) / 100;
}

static void axes(struct pv_buf *out, const struct plot *p)
{
	pv_buf_addstr(out, "<g class=\"grid\" stroke=\"#e5e5e5\">\n");
	for (double v = p->lstep; v <= p->ltop * (1 + 1e-9); v += p->lstep)
		pv_buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", X0,
			    py_left(p, v), X1, py_left(p, v));
	pv_buf_addstr(out, "</g>\n<g class=\"axes\" stroke=\"#333\" fill=\"none\">\n");
	pv_buf_addf(out, "<path d=\"M%.1f,%.1f V%.1f H%.1f V%.1f\"/>\n", X0, Y0, Y1, X1, Y0);
	for (double v = 0; v <= p->xtop * (1 + 1e-9); v += p->xstep)
		pv_buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    px(p, v), Y1, px(p, v), Y1 + 5);
	for (double v = 0; v <= p->ltop * (1 + 1e-9); v += p->lstep)
		pv_buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			    X0 - 5, py_left(p, v), X0, py_left(p, v));
	for (int v = 0; v <= 100; v += 20)
		pv_buf_addf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", X1,
			    py_right(v), X1 + 5, py_right(v));
	pv_buf_addstr(out, "</g>\n<g class=\"ticks\" fill=\"#333\">\n");
	for (double v = 0; v <= p->xtop * (1 + 1e-9); v += p->xstep)
		pv_buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
			    px(p, v), Y1 + 20, v);
	for (double v = 0; v <= p->ltop * (1 + 1e-9); v += p->lstep)
		pv_buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			    X0 - 8, py_left(p, v) + 4, v);
	for (int v = 0; v <= 100; v += 20)
		pv_buf_addf(out, "<text x=\"%.1f\" y=\"%.1f\">%d</text>\n", X1 + 8, py_right(v) + 4,
			    v);
	pv_buf_addstr(out, "</g>\n<g class=\"labels\" fill=\"#333\" font-size=\"13\">\n");
	pv_buf_addf(out,
		    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">users (all "
		    "clients)</text>\n",
		    (X0 + X1) / 2, Y1 + 42);
	pv_buf_addf(out,
		    "<text transform=\"translate(24,%.1f) rotate(-90)\" text-anchor=\"middle\" "
		    "fill=\"" C_SCEN "\">scenarios/s</text>\n",
		    (Y0 + Y1) / 2);
	pv_buf_addf(out,
		    "<text transform=\"translate(%d,%.1f) rotate(90)\" text-anchor=\"middle\">"
		    "overload %%, server CPU %%</text>\n</g>\n",
		    W - 24, (Y0 + Y1) / 2);
}

/* A polyline through a series (steps where it has no value left out). */
static void polyline(struct pv_buf *out, const char *cls, const char *color, const char *dash,
		     const double *x, const double *y, size_t n)
{
	pv_buf_addf(out,
		    "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s%s%s "
		    "points=\"",
		    cls, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
		    dash ? "\"" : "");
	for (size_t i = 0, k = 0; i < n; i++)
		if (!isnan(y[i]))
			pv_buf_addf(out, "%s%.1f,%.1f", k++ ? " " : "", x[i], y[i]);
	pv_buf_addstr(out, "\"/>\n");
}

/* One marker: a circle, a square or a triangle, with its tooltip. */
static void marker(struct pv_buf *out, const char *cls, char shape, double x, double y,
		   const char *tip)
{
	if (shape == 'o')
		pv_buf_addf(out, "<circle class=\"pt %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\">", cls,
			    x, y);
	else if (shape == 's')
		pv_buf_addf(out,
			    "<rect class=\"pt %s\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\">",
			    cls, x - 4, y - 4);
	else
		pv_buf_addf(out, "<path class=\"pt %s\" d=\"M%.1f,%.1f l5,9 h-10 z\">", cls, x,
			    y - 6);
	pv_buf_addstr(out, "<title>");
	esc(out, tip);
	pv_buf_addstr(out, shape == 'o'	  ? "</title></circle>\n"
			   : shape == 's' ? "</title></rect>\n"
					  : "</title></path>\n");
}

static void legend(struct pv_buf *out, bool cpu, double threshold)
{
	double x = X0, y = H - 40;

	pv_buf_addstr(out, "<g class=\"legend\" font-size=\"12\">\n");
	pv_buf_addf(out,
		    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"" C_SCEN "\"/>"
		    "<text x=\"%.1f\" y=\"%.1f\">scenarios/s</text>\n",
		    x, y, x + 10, y + 4);
	x += 105;
	pv_buf_addf(out,
		    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" C_EXPECTED
		    "\" stroke-width=\"2\" stroke-dasharray=\"6,4\"/>"
		    "<text x=\"%.1f\" y=\"%.1f\">expected</text>\n",
		    x - 6, y, x + 14, y, x + 20, y + 4);
	x += 95;
	pv_buf_addf(out,
		    "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"" C_OVERLOAD "\"/>"
		    "<text x=\"%.1f\" y=\"%.1f\">overload %% (threshold %g%%, dotted)</text>\n",
		    x - 4, y - 4, x + 10, y + 4, threshold);
	x += 230;
	pv_buf_addf(out,
		    "<path d=\"M%.1f,%.1f l5,9 h-10 z\" fill=\"" C_CPU "\"/>"
		    "<text x=\"%.1f\" y=\"%.1f\">server CPU %%%s</text>\n</g>\n",
		    x, y - 6, x + 10, y + 4, cpu ? "" : " (not measured)");
}

int pv_load_report_svg(const struct pv_load_results *r, struct pv_buf *out)
{
	struct plot p;
	double lmax = 0, umax = 0, *x = NULL, *ys = NULL, *yo = NULL, *yc = NULL, ex[2], ey[2];
	bool cpu = false;
	unsigned users;
	long best = pv_load_answer(r->steps, r->n, r->cfg->overload, &users);
	char tip[200];

	if (r->n && !(x = calloc(4 * r->n, sizeof(*x))))
		return pv_error(PV_EIO, "out of memory");
	ys = x + r->n;
	yo = ys + r->n;
	yc = yo + r->n;
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];

		umax = fmax(umax, s->users);
		lmax = fmax(lmax, s->rate);
		cpu |= !isnan(s->cpu);
	}
	/* the expected throughput is a line through 0 across the whole plot */
	scale(umax, &p.xtop, &p.xstep);
	scale(fmax(lmax, p.xtop * r->cfg->rate / 3600), &p.ltop, &p.lstep);
	ex[0] = px(&p, 0);
	ey[0] = py_left(&p, 0);
	ex[1] = px(&p, p.xtop);
	ey[1] = py_left(&p, p.xtop * r->cfg->rate / 3600);
	for (size_t i = 0; i < r->n; i++) {
		x[i] = px(&p, r->steps[i].users);
		ys[i] = py_left(&p, r->steps[i].rate);
		yo[i] = py_right(r->steps[i].all.overload);
		yc[i] = isnan(r->steps[i].cpu) ? NAN : py_right(r->steps[i].cpu);
	}

	pv_buf_addf(out,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		    W, H, W, H);
	pv_buf_addstr(out, "<title>provision load: users against throughput and overload");
	if (r->title) {
		pv_buf_addstr(out, " (");
		esc(out, r->title);
		pv_buf_addstr(out, ")");
	}
	pv_buf_addf(out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	pv_buf_addf(out,
		    "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" font-size=\"17\" "
		    "font-weight=\"bold\">Users against throughput and overload</text>\n",
		    W / 2);
	if (r->title) {
		pv_buf_addf(out, "<text x=\"%d\" y=\"48\" text-anchor=\"middle\" fill=\"#555\">",
			    W / 2);
		esc(out, r->title);
		pv_buf_addstr(out, "</text>\n");
	}
	axes(out, &p);
	/* the threshold on the right axis; the answer as a vertical line */
	pv_buf_addf(out,
		    "<line class=\"threshold\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		    "stroke=\"" C_OVERLOAD "\" stroke-dasharray=\"2,3\"/>\n",
		    X0, py_right(r->cfg->overload), X1, py_right(r->cfg->overload));
	if (best >= 0)
		pv_buf_addf(
			out,
			"<line class=\"answer\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#333\" stroke-dasharray=\"4,4\"/>\n"
			"<text x=\"%.1f\" y=\"%.1f\" fill=\"#333\">carried %u users</text>\n",
			px(&p, users), Y0, px(&p, users), Y1, px(&p, users) + 4, Y0 + 12, users);
	polyline(out, "line scen", C_SCEN, NULL, x, ys, r->n);
	polyline(out, "line overload", C_OVERLOAD, NULL, x, yo, r->n);
	if (cpu)
		polyline(out, "line cpu", C_CPU, NULL, x, yc, r->n);
	polyline(out, "expected", C_EXPECTED, "6,4", ex, ey, 2); /* over the measured one */
	pv_buf_addstr(out, "<g class=\"points\" fill=\"" C_SCEN "\">\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct pv_load_summary *s = &r->steps[i];

		snprintf(tip, sizeof(tip), "%u users: %.2f scenarios/s (expected %.2f)", s->users,
			 s->rate, s->expected);
		marker(out, "scen", 'o', x[i], ys[i], tip);
	}
	pv_buf_addstr(out, "</g>\n<g class=\"points\" fill=\"" C_OVERLOAD "\">\n");
	for (size_t i = 0; i < r->n; i++) {
		snprintf(tip, sizeof(tip), "%u users: overload %.2f%%", r->steps[i].users,
			 r->steps[i].all.overload);
		marker(out, "overload", 's', x[i], yo[i], tip);
	}
	pv_buf_addstr(out, "</g>\n<g class=\"points\" fill=\"" C_CPU "\">\n");
	for (size_t i = 0; i < r->n; i++) {
		if (isnan(yc[i]))
			continue;
		snprintf(tip, sizeof(tip), "%u users: server CPU %.1f%%", r->steps[i].users,
			 r->steps[i].cpu);
		marker(out, "cpu", 't', x[i], yc[i], tip);
	}
	pv_buf_addstr(out, "</g>\n");
	legend(out, cpu, r->cfg->overload);
	pv_buf_addstr(out, "</svg>\n");
	free(x);
	return done(out);
}
