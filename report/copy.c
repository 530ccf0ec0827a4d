/* report/copy.c: a copy job's report.html (see report.h): the robocopy summary, files/s and
 * the busiest smbd's share of a core over the copy, latency per size class, what bounds it,
 * smbd's system calls. A page that stands alone (report/html.h). */
#include "report/html.h"
#include "report/report.h"

#include "run/copy.h"

#include "load/stats.h"

#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void row(struct pv_buf *b, const char *k, const char *v)
{
	pv_buf_addstr(b, "<tr><th>");
	pv_escape_xml(b, k);
	pv_buf_addstr(b, "</th><td>");
	pv_escape_xml(b, v);
	pv_buf_addstr(b, "</td></tr>\n");
}

/* files/s per interval between ticks, and the busiest smbd's share of a core (with its
 * busiest thread, and its quota as a line) over the same time. */
static void plots(struct pv_buf *b, const struct pv_run_copy_job *j)
{
	size_t n = j->nticks, m = j->nsamples;
	double *tx = calloc(n + 1, sizeof(double)), *ty = calloc(n + 1, sizeof(double));
	double *sx = calloc(m + 1, sizeof(double)), *sc = calloc(m + 1, sizeof(double)),
	       *st = calloc(m + 1, sizeof(double)), *sall = calloc(m + 1, sizeof(double));
	int pid = j->nsmbd ? j->smbd[0].pid : 0;
	double quota = j->nsmbd ? j->smbd[0].quota : -1;

	if (!tx || !ty || !sx || !sc || !st || !sall)
		goto out;
	for (size_t i = 0; i < n; i++) {
		double dt = i ? j->ticks[i].t - j->ticks[i - 1].t : j->ticks[i].t;

		tx[i] = j->ticks[i].t;
		ty[i] = dt > 0 ? (double)(j->ticks[i].files - (i ? j->ticks[i - 1].files : 0)) / dt
			       : NAN;
	}
	for (size_t i = 0; i < m; i++) {
		sx[i] = j->samples[i].t - j->start;
		sc[i] = st[i] = NAN;
		sall[i] = j->samples[i].v[PV_RUN_W_SMBD];
		for (unsigned p = 0; p < j->samples[i].nprocs; p++)
			if (j->samples[i].procs[p].pid == pid) {
				sc[i] = j->samples[i].procs[p].cpu;
				st[i] = j->samples[i].procs[p].top;
			}
	}
	if (n) {
		struct pv_plot p;
		struct pv_plot_series s = {"files/s", tx, ty,  NULL, NULL, NULL,
					   n,	      0,  'o', 0,    0,	   true};

		pv_plot_init(&p);
		p.id = "rate";
		p.title = "Files per second over the copy";
		p.desc = "Files written per second in each interval of the copy's writing";
		p.xlabel = "time since the writing started";
		p.ylabel = "files/s";
		p.xkind = PV_PLOT_X_TIME;
		p.s = &s;
		p.ns = 1;
		pv_plot_svg(b, &p);
	}
	if (m) {
		struct pv_plot p;
		char name[64];
		struct pv_plot_series s[3] = {
			{name, sx, sc, NULL, NULL, NULL, m, 0, 's', 0, 1, true},
			{"its busiest thread", sx, st, NULL, NULL, NULL, m, 0, 't', 1, 2, true},
			{"every smbd", sx, sall, NULL, NULL, NULL, m, 0, 0, 2, 3, true},
		};

		snprintf(name, sizeof(name), "smbd %d", pid);
		pv_plot_init(&p);
		p.id = "smbd";
		p.title = "The busiest smbd's share of a core";
		p.desc =
			"CPU of the busiest smbd process, of its busiest thread, and of every smbd "
			"together, in percent of one core, over the copy";
		p.xlabel = "time since the copy started";
		p.ylabel = "% of one core";
		p.xkind = PV_PLOT_X_TIME;
		p.s = s;
		p.ns = pid ? 3 : 1;
		if (!pid)
			p.s = &s[2];
		if (quota >= 0) {
			p.y2label = "quota";
			p.hline2 = quota;
			p.y2min = p.ymin = 0;
			p.y2max = p.ymax = fmax(quota, 100) * 1.1;
		}
		pv_plot_svg(b, &p);
	}
out:
	free(tx);
	free(ty);
	free(sx);
	free(sc);
	free(st);
	free(sall);
}

static int by_time(const void *a, const void *b)
{
	const struct pv_samba_counter *x = a, *y = b;

	return (x->usec < y->usec) - (x->usec > y->usec);
}

int pv_report_copy_page(const struct pv_run_copy_job *j, const char *verdict, double rate,
			double lo, double hi, struct pv_buf *b)
{
	const struct pv_load_copy_done *d = &j->figs;
	char t[1200], title[160];

	snprintf(title, sizeof(title), "provision copy %s", j->id);
	pv_report_begin(b, title);
	pv_buf_addstr(b, "<h1>");
	pv_escape_xml(b, title);
	pv_buf_addstr(b, "</h1>\n<p class=\"answer\">");
	if (j->done && d->files + d->fixed)
		snprintf(t, sizeof(t),
			 "%lu files (%.1f MB) in %.2f s: %.0f files/s (%.0f-%.0f), "
			 "%.1f MB/s, %.0f MB/min",
			 d->files + d->fixed, (double)d->bytes / 1e6, d->put_s, rate, lo, hi,
			 (double)d->bytes / 1e6 / d->put_s, (double)d->bytes / 1e6 / d->put_s * 60);
	else if (j->done)
		snprintf(t, sizeof(t),
			 "nothing to send: the target held the whole tree (%.2f s to "
			 "see so)",
			 d->total_s);
	else
		snprintf(t, sizeof(t), "the copy did not finish");
	pv_escape_xml(b, t);
	pv_buf_addstr(b, "</p>\n<h2>What bounds it</h2>\n<p>");
	pv_escape_xml(b, verdict);
	pv_buf_addstr(b, "</p>\n<h2>The copy</h2>\n<table>\n");
	row(b, "source", j->source);
	row(b, "target", j->target);
	snprintf(t, sizeof(t), "%s as %s", j->client, j->user);
	row(b, "from", t);
	snprintf(t, sizeof(t), "%u in flight on %u connection%s%s%s", j->cfg.window,
		 j->cfg.connections, j->cfg.connections == 1 ? "" : "s",
		 j->cfg.mirror ? ", /MIR" : "", j->cfg.fft ? ", /FFT" : "");
	row(b, "requests", t);
	row(b, "speaks", d->speaks[0] ? d->speaks : "-");
	snprintf(t, sizeof(t), "%llu in the source, %lu made, %lu removed",
		 (unsigned long long)j->plan.source_dirs, d->dirs, d->removed_dirs);
	row(b, "folders", t);
	snprintf(t, sizeof(t), "%llu in the source, %lu copied, %lu already there, %lu removed",
		 (unsigned long long)j->plan.source_files, d->files + d->fixed, d->ok,
		 d->removed_files);
	row(b, "files", t);
	snprintf(t, sizeof(t),
		 "listing %.2f s, folders and extras %.2f s, files %.2f s, %.2f s in "
		 "all",
		 d->list_s, d->prune_s, d->put_s, d->total_s);
	row(b, "times", t);
	snprintf(t, sizeof(t), "the agent %.0f%% of a core, its busiest thread %.0f%%%s",
		 d->put_cpu, d->put_top, d->put_top >= PV_LOAD_BOUND_CPU ? ": client-bound" : "");
	row(b, "client CPU", t);
	if (j->samba[0])
		row(b, "server", j->samba);
	pv_buf_addstr(b, "</table>\n");
	plots(b, j);
	pv_buf_addstr(b,
		      "<h2>Latency per file, by size</h2>\n<table><tr><th>size</th><th>files</th>"
		      "<th>median ms</th><th>p95 ms</th></tr>\n");
	for (int c = 0; c < PV_LOAD_COPY_CLASSES; c++) {
		if (!d->classes[c].files)
			continue;
		snprintf(t, sizeof(t),
			 "<tr><td>%s</td><td>%lu</td><td>%.2f</td><td>%.2f</td></tr>\n",
			 pv_load_copy_class_names[c], d->classes[c].files, d->classes[c].p50 * 1000,
			 d->classes[c].p95 * 1000);
		pv_buf_addstr(b, t);
	}
	pv_buf_addstr(b, "</table>\n<h2>The server's smbd processes</h2>\n<table><tr><th>pid</th>"
			 "<th>serves</th><th>CPU %</th><th>peak %</th><th>busiest thread %</th>"
			 "<th>threads</th><th>quota %</th></tr>\n");
	for (size_t k = 0; k < j->nsmbd; k++) {
		const struct pv_run_copy_smbd *s = &j->smbd[k];
		char q[32] = "none";

		if (s->quota >= 0)
			snprintf(q, sizeof(q), "%.0f", s->quota);
		snprintf(t, sizeof(t),
			 "<tr><td>%d</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%u</"
			 "td>"
			 "<td>%s</td></tr>\n",
			 s->pid, s->conn >= 0 ? "the copy" : "other", s->cpu_mean, s->cpu_max,
			 s->top_mean, s->threads, q);
		pv_buf_addstr(b, t);
	}
	pv_buf_addstr(b, "</table>\n<h2>smbd's system calls (Samba's profile)</h2>\n");
	if (j->profiled && j->counters.n) {
		struct pv_samba_counter *c = malloc(j->counters.n * sizeof(*c));
		size_t n = 0;

		if (c) {
			for (size_t i = 0; i < j->counters.n; i++)
				if (strncmp(j->counters.v[i].name, "smb2:", 5) != 0)
					c[n++] = j->counters.v[i];
			qsort(c, n, sizeof(*c), by_time);
			pv_buf_addstr(b, "<table><tr><th>call</th><th>count</th><th>ms</th>"
					 "<th>us per call</th></tr>\n");
			for (size_t i = 0; i < n && i < 20; i++) {
				pv_buf_addstr(b, "<tr><td>");
				pv_escape_xml(b, c[i].name);
				snprintf(t, sizeof(t),
					 "</td><td>%llu</td><td>%.1f</td><td>%.1f</td></tr>\n",
					 (unsigned long long)c[i].count, (double)c[i].usec / 1000,
					 c[i].count ? (double)c[i].usec / (double)c[i].count : 0);
				pv_buf_addstr(b, t);
			}
			pv_buf_addstr(b, "</table>\n");
			free(c);
		}
	} else {
		pv_buf_addstr(b, "<p>");
		pv_escape_xml(b, j->profile_note[0] ? j->profile_note : "none taken");
		pv_buf_addstr(b, "</p>\n");
	}
	pv_report_end(b);
	return pv_buf_failed(b) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}
