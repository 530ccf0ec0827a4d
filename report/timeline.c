/* report/timeline.c: report.html's "over time": the whole run, the steps marked at their start,
 * the server's and the DC's watches and the clients' CPU, each a plot over the run's time. */
#include "report/internal.h"

#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the timeline: seconds since the first step's start ---- */

struct timeline {
	double t0;   /* the first step's start (epoch) */
	double *off; /* [step]: its start, in seconds from t0 */
	double *len; /* [step]: its length */
};

static int timeline_of(const struct pv_results_run *run, struct timeline *tl)
{
	double at = 0;

	tl->t0 = run->nsteps ? run->steps[0].start : NAN;
	tl->off = calloc(run->nsteps ? run->nsteps : 1, sizeof(*tl->off));
	tl->len = calloc(run->nsteps ? run->nsteps : 1, sizeof(*tl->len));
	if (!tl->off || !tl->len)
		return PV_EIO;
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_step *st = &run->steps[i];
		double len = st->end - st->start;

		if (!isnan(len) && len < 0)
			len = NAN;
		if (isnan(len))
			len = st->srv && st->srv->n ? st->srv->t[st->srv->n - 1]
						    : run->duration + run->warmup;
		/* from the wall clock when known, else one after the other */
		tl->off[i] = !isnan(st->start) && !isnan(tl->t0) ? st->start - tl->t0 : at;
		tl->len[i] = len;
		at = tl->off[i] + len;
	}
	return PV_OK;
}

static void timeline_free(struct timeline *tl)
{
	free(tl->off);
	free(tl->len);
}

/* One column of every step's watch (the server's, or the DC's) as one series over the run,
 * a gap between steps. */
struct series_buf {
	double *x, *y;
	size_t n;
};

static bool column(const struct pv_results_run *run, const struct timeline *tl, bool dc,
		   const char *name, struct series_buf *sb)
{
	size_t cap = 0;
	bool any = false;

	memset(sb, 0, sizeof(*sb));
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_watch *w = dc ? run->steps[i].dc : run->steps[i].srv;

		cap += (w ? w->n : 0) + 1;
	}
	if (!cap || !(sb->x = calloc(cap, sizeof(double))) ||
	    !(sb->y = calloc(cap, sizeof(double))))
		return false;
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_watch *w = dc ? run->steps[i].dc : run->steps[i].srv;
		long c = pv_results_watch_col(w, name);

		if (c < 0)
			continue;
		for (size_t j = 0; j < w->n; j++) {
			sb->x[sb->n] = tl->off[i] + w->t[j];
			sb->y[sb->n++] = w->v[j * w->ncols + (size_t)c];
			any |= !isnan(w->v[j * w->ncols + (size_t)c]);
		}
		sb->x[sb->n] = tl->off[i] + (w->n ? w->t[w->n - 1] : 0);
		sb->y[sb->n++] = NAN;
	}
	return any;
}

static void series_free(struct series_buf *sb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(sb[i].x);
		free(sb[i].y);
	}
}

struct col {
	const char *name, *label;
	int axis;
	char mark;
	int dash;
};

/* A plot of some watch columns over the whole run; false when none was recorded. */
static bool watch_plot(struct pv_buf *b, const struct pv_results_run *run,
		       const struct timeline *tl, const struct pv_plot_mark *marks, bool dc,
		       const char *id, const char *title, const char *desc, const char *ylabel,
		       const char *y2label, double ymax, const struct col *cols, size_t ncols)
{
	struct series_buf sb[8];
	struct pv_plot_series s[8];
	struct pv_plot p;
	size_t n = 0;

	memset(s, 0, sizeof(s));
	for (size_t k = 0; k < ncols && k < 8; k++) {
		if (!column(run, tl, dc, cols[k].name, &sb[n])) {
			free(sb[n].x);
			free(sb[n].y);
			continue;
		}
		s[n].name = cols[k].label;
		s[n].x = sb[n].x;
		s[n].y = sb[n].y;
		s[n].n = sb[n].n;
		s[n].axis = cols[k].axis;
		s[n].dash = cols[k].dash;
		s[n].color = (int)k;
		s[n].line = true;
		n++;
	}
	if (!n)
		return false;
	pv_plot_init(&p);
	p.id = id;
	p.title = title;
	p.desc = desc;
	p.xlabel = "time since the first step started (m:ss or h:mm); dotted lines: steps";
	p.ylabel = ylabel;
	p.y2label = y2label;
	p.xkind = PV_PLOT_X_TIME;
	p.xmin = 0;
	p.ymax = ymax;
	p.s = s;
	p.ns = n;
	p.marks = marks;
	p.nmarks = run->nsteps;
	pv_plot_svg(b, &p);
	series_free(sb, n);
	return true;
}

static void clients_plot(struct pv_buf *b, const struct pv_results_run *run,
			 const struct timeline *tl, const struct pv_plot_mark *marks)
{
	char names[8][64];
	size_t nn = 0, n = 3 * run->nsteps;
	double *buf;
	struct pv_plot_series s[8];
	struct pv_plot p;
	char label[8][96];

	for (size_t i = 0; i < run->nsteps; i++)
		for (size_t c = 0; c < run->steps[i].load.nclients; c++) {
			size_t k = 0;

			while (k < nn && strcmp(names[k], run->steps[i].load.clients[c].name))
				k++;
			if (k == nn && nn < 4)
				snprintf(names[nn++], sizeof(names[0]), "%s",
					 run->steps[i].load.clients[c].name);
		}
	pv_buf_addstr(b, "<h3>The clients</h3>\n");
	if (!nn) {
		pv_report_na(b, "The clients' CPU: " NOT_RECORDED ".");
		return;
	}
	if (!(buf = calloc(2 * nn * (n + 1) + n + 1, sizeof(double))))
		return;
	memset(s, 0, sizeof(s));
	/* per client: its driver's core and its host's CPU, held over each step */
	for (size_t k = 0; k < 2 * nn; k++) {
		double *y = buf + k * (n + 1), *x = buf + 2 * nn * (n + 1);

		for (size_t i = 0; i < run->nsteps; i++) {
			double v = NAN;

			for (size_t c = 0; c < run->steps[i].load.nclients; c++)
				if (!strcmp(run->steps[i].load.clients[c].name, names[k / 2]))
					v = k % 2 ? run->steps[i].load.clients[c].host_cpu
						  : pv_load_loop_cpu(
							    &run->steps[i].load.clients[c]);
			x[3 * i] = tl->off[i];
			x[3 * i + 1] = tl->off[i] + tl->len[i];
			x[3 * i + 2] = tl->off[i] + tl->len[i];
			y[3 * i] = y[3 * i + 1] = v;
			y[3 * i + 2] = NAN;
		}
		snprintf(label[k], sizeof(label[0]), "%s: %s", names[k / 2],
			 k % 2 ? "CPU % of all cores" : "busiest loop % of a core");
		s[k] = (struct pv_plot_series){label[k],
					       x,
					       y,
					       NULL,
					       NULL,
					       NULL,
					       n,
					       0,
					       0,
					       k % 2 ? 1 : 0,
					       (int)(k / 2) * 2 + (int)(k % 2),
					       true};
	}
	pv_plot_init(&p);
	p.id = "plot-clients";
	p.title = "The clients' CPU per step";
	p.desc = "For each client, the load driver's busiest event loop (percent of the one core "
		 "it runs on: a client is the limit at 90) and the client's CPU share, each held "
		 "over its step.";
	p.xlabel = "time since the first step started; dotted lines: steps";
	p.ylabel = "% (loop: of one core; CPU: of all)";
	p.xkind = PV_PLOT_X_TIME;
	p.xmin = 0;
	p.ymin = 0;
	p.ymax = 100;
	p.s = s;
	p.ns = 2 * nn;
	p.marks = marks;
	p.nmarks = run->nsteps;
	pv_plot_svg(b, &p);
	free(buf);
}

void pv_report_over_time(struct pv_buf *b, const struct pv_results_run *run)
{
	static const struct col cpu[] = {{"cpu", "CPU busy", 0, 0, 0},
					 {"usr", "user", 0, 0, 1},
					 {"sys", "system", 0, 0, 2},
					 {"iowait", "iowait", 0, 0, 3}};
	static const struct col procs[] = {{"smbd", "smbd", 0, 0, 0},
					   {"winbindd", "winbindd", 0, 0, 1},
					   {"samba", "samba (AD DC)", 0, 0, 2}};
	static const struct col mem[] = {{"mem_used", "used", 0, 0, 0},
					 {"mem_avail", "available", 0, 0, 1},
					 {"dirty", "dirty + writeback", 1, 0, 2}};
	static const struct col disk[] = {{"rd", "read kB/s", 0, 0, 0},
					  {"wr", "written kB/s", 0, 0, 1},
					  {"inflight", "I/O in flight", 1, 0, 2}};
	static const struct col net[] = {{"net_rx", "received kB/s", 0, 0, 0},
					 {"net_tx", "sent kB/s", 0, 0, 1}};
	static const struct col dccpu[] = {{"cpu", "CPU busy", 0, 0, 0},
					   {"samba", "samba % of a core", 1, 0, 1},
					   {"iowait", "iowait", 0, 0, 3}};
	struct timeline tl;
	struct pv_plot_mark *marks;
	char(*labels)[48];
	bool any;

	pv_buf_addstr(b, "<h2 id=\"time\">Over time</h2>\n");
	if (!run->nsteps || timeline_of(run, &tl) != PV_OK) {
		pv_report_na(b, "No step ran.");
		return;
	}
	marks = calloc(run->nsteps, sizeof(*marks));
	labels = calloc(run->nsteps, sizeof(*labels));
	if (!marks || !labels) {
		free(marks);
		free(labels);
		timeline_free(&tl);
		return;
	}
	for (size_t i = 0; i < run->nsteps; i++) {
		snprintf(labels[i], sizeof(labels[0]), "%u: %u", run->steps[i].n,
			 run->steps[i].users);
		marks[i].x = tl.off[i];
		marks[i].label = labels[i];
	}
	pv_buf_addstr(b, "<p>The whole run, the steps marked at their start (step: users). Each "
			 "step starts with its warm-up; the figures of the tables are from after "
			 "it.</p>\n<h3>The server</h3>\n");
	any = watch_plot(b, run, &tl, marks, false, "plot-srv-cpu", "The server's CPU",
			 "The server's CPU over the run, percent of all its cores: busy, user, "
			 "system, iowait.",
			 "% of all cores", NULL, 100, cpu, 4);
	if (!any) {
		pv_report_na(b, run->watch_error[0]
					? "The server's watch failed; its samples: " NOT_RECORDED
					: "The server was not watched: " NOT_RECORDED ".");
	} else {
		watch_plot(b, run, &tl, marks, false, "plot-srv-procs",
			   "The server's Samba processes",
			   "CPU of the server's smbd, winbindd and samba processes, percent of one "
			   "core (more than 100 when several cores work).",
			   "% of one core", NULL, NAN, procs, 3);
		watch_plot(b, run, &tl, marks, false, "plot-srv-mem", "The server's memory",
			   "Memory used and available (left, MiB) and dirty pages waiting to be "
			   "written (right, MiB).",
			   "MiB", "MiB dirty", NAN, mem, 3);
		watch_plot(b, run, &tl, marks, false, "plot-srv-disk", "The server's disks",
			   "Disk throughput read and written (left, kB/s) and the I/O requests in "
			   "flight (right).",
			   "kB/s", "in flight", NAN, disk, 3);
		watch_plot(b, run, &tl, marks, false, "plot-srv-net", "The server's network",
			   "Bytes received and sent by the server, kB/s, every interface but lo.",
			   "kB/s", NULL, NAN, net, 2);
	}
	pv_buf_addstr(b, "<h3>The DC</h3>\n");
	if (!watch_plot(b, run, &tl, marks, true, "plot-dc-cpu", "The DC's CPU",
			"The DC's CPU over the run, percent of all its cores, and its samba "
			"processes' share of one core (right).",
			"% of all cores", "% of one core", 100, dccpu, 3))
		pv_report_na(b, "The DC's watch: " NOT_RECORDED ".");
	else
		watch_plot(b, run, &tl, marks, true, "plot-dc-mem", "The DC's memory",
			   "The DC's memory used and available (MiB).", "MiB", "MiB dirty", NAN,
			   mem, 3);
	clients_plot(b, run, &tl, marks);
	free(marks);
	free(labels);
	timeline_free(&tl);
}
