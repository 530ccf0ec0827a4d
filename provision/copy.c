/* provision/copy.c: `provision copy` (the job on the controller: run/copy.h) and `provision
 * copy-agent` (its part on a client: load/copy.h): options in; the copy as robocopy's users
 * read it, what bounds it, Samba's system calls; text, JSON, copy.txt and report.html out. */
#include "provision/copy.h"
#include "provision/provision.h"

#include "json/json.h"
#include "load/copy.h"
#include "load/stats.h"
#include "report/report.h"
#include "results/copy.h"
#include "run/copy.h"
#include "util/err.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- copy-agent ---- */

struct agent_io {
	const volatile sig_atomic_t *signal;
	bool eof;
};

static int agent_emit(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	if (fwrite(line, 1, len, stdout) != len || fflush(stdout) != 0)
		return pv_error(PV_EIO, "cannot write to stdout: %s", strerror(errno));
	return PV_OK;
}

/* The controller ends the copy by closing stdin (or the session goes). */
static bool agent_stop(void *ctx)
{
	struct agent_io *a = ctx;
	struct pollfd p = {STDIN_FILENO, POLLIN, 0};
	char c;

	if (a->signal && *a->signal)
		return true;
	while (!a->eof && poll(&p, 1, 0) > 0) {
		ssize_t n = read(STDIN_FILENO, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			a->eof = true;
		if (n <= 0 || p.revents & (POLLHUP | POLLERR))
			break;
	}
	return a->eof;
}

/* A line of stdin into buf (at most cap - 1 bytes, without its newline): its length, or -1 at
 * the end of stdin or for a line too long. */
static long read_line(char *buf, size_t cap)
{
	size_t n = 0;

	for (;;) {
		char c;
		ssize_t got = read(STDIN_FILENO, &c, 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		if (c == '\n')
			break;
		if (n + 1 >= cap)
			return -1;
		buf[n++] = c;
	}
	buf[n] = '\0';
	return (long)n;
}

static int read_exact(char *buf, size_t len)
{
	for (size_t o = 0; o < len;) {
		ssize_t got = read(STDIN_FILENO, buf + o, len - o);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return pv_error(PV_EUSAGE, "copy-agent: stdin ended inside the fileset");
		o += (size_t)got;
	}
	return PV_OK;
}

int pv_cmd_copy_agent(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_load_copy_config c;
	struct pv_secret *pw = NULL;
	struct agent_io io = {ctx->env.stop, false};
	struct pv_load_copy_io ops = {agent_emit, agent_stop, &io};
	struct pv_load_copy_done done;
	char line[4096];
	bool started = false;
	int r;

	(void)out;
	memset(&c, 0, sizeof(c));
	r = pv_read_password_line("copy-agent", &pw);
	while (r == PV_OK && !started) {
		long n = read_line(line, sizeof(line));
		size_t need = 0;

		if (n < 0) {
			r = pv_error(PV_EUSAGE,
				     "copy-agent: stdin ended before 'start', or a line "
				     "was longer than %zu bytes (see 'provision help "
				     "copy-agent')",
				     sizeof(line) - 1);
			break;
		}
		r = pv_load_copy_config_line(&c, line, (size_t)n, &need, &started);
		if (r == PV_OK && need) {
			char *text = malloc(need);

			if (!text)
				r = pv_error(PV_EIO, "out of memory");
			else if ((r = read_exact(text, need)) == PV_OK)
				r = pv_load_copy_config_text(&c, text, need);
			free(text);
		}
	}
	if (r == PV_OK)
		r = pv_load_copy_agent_run(&c, pw, &ops, &done);
	pv_load_copy_config_release(&c);
	pv_secret_free(pw);
	return r;
}

/* ---- copy ---- */

#define copy_out pv_copy_view

static double mb(uint64_t b)
{
	return (double)b / 1e6;
}

/* What the job gathered, as the verdict takes it. */
static void facts(struct copy_out *o)
{
	const struct pv_run_copy_job *j = &o->job;
	struct pv_results_copy_facts *f = &o->facts;
	double cpu = 0, io = 0;

	memset(f, 0, sizeof(*f));
	f->files = j->figs.files + j->figs.fixed;
	f->put_s = j->figs.put_s;
	f->connections = j->cfg.connections;
	f->client_top = j->figs.put_top;
	f->server_cpu = f->server_iowait = NAN;
	f->dgram_qlen = j->dgram_qlen;
	if (j->nsamples) {
		for (size_t i = 0; i < j->nsamples; i++) {
			cpu += j->samples[i].v[PV_RUN_W_CPU];
			io += j->samples[i].v[PV_RUN_W_IOWAIT];
		}
		f->server_cpu = cpu / (double)j->nsamples;
		f->server_iowait = io / (double)j->nsamples;
	}
	if (j->nsmbd) {
		const struct pv_run_copy_smbd *s = &j->smbd[0];

		f->smbd_known = true;
		f->smbd_pid = s->pid;
		f->smbd_ours = s->conn >= 0;
		f->smbd_cpu = s->cpu_mean;
		f->smbd_top = s->top_mean;
		f->smbd_threads = s->threads;
		f->smbd_quota = s->quota;
		for (size_t k = 0; k < j->nsmbd; k++) {
			f->smbd_busy += j->smbd[k].top_mean >= PV_RESULTS_COPY_AT_LIMIT;
			if (s->quota >= 0 && j->smbd[k].quota == s->quota)
				f->group_cpu += j->smbd[k].cpu_mean;
		}
	}
	o->bound = pv_results_copy_judge(f, o->verdict, sizeof(o->verdict));
}

static void rate(struct copy_out *o)
{
	const struct pv_run_copy_job *j = &o->job;
	double *t = malloc((j->nticks + 1) * sizeof(*t)), *c = malloc((j->nticks + 1) * sizeof(*c));

	o->rate = o->lo = o->hi = NAN;
	if (t && c) {
		for (size_t i = 0; i < j->nticks; i++) {
			t[i] = j->ticks[i].t;
			c[i] = (double)j->ticks[i].files;
		}
		pv_results_copy_rate(t, c, j->nticks, &o->rate, &o->lo, &o->hi);
	}
	/* too few ticks for a rate (a copy under a second): the whole writing's, as robocopy
	 * gives it, without an interval */
	if (!isfinite(o->rate) && j->done && j->figs.put_s > 0)
		o->rate = (double)(j->figs.files + j->figs.fixed) / j->figs.put_s;
	free(t);
	free(c);
}

static int by_time(const void *a, const void *b)
{
	const struct pv_samba_counter *x = a, *y = b;

	return (x->usec < y->usec) - (x->usec > y->usec);
}

/* The whole text (stdout and copy.txt). */
void pv_copy_text(const struct pv_copy_view *o, struct pv_buf *b)
{
	const struct pv_run_copy_job *j = &o->job;
	const struct pv_load_copy_done *d = &j->figs;
	const struct pv_load_copy_plan *p = &j->plan;
	double secs = d->put_s > 0 ? d->put_s : NAN;

	pv_buf_addf(b, "copy %s: %s -> %s, from %s as %s\n", j->id, j->source, j->target, j->client,
		    j->user);
	pv_buf_addf(b, "  %d request%s in flight on %u connection%s (/MT:%d), %s/COPY:DT%s, %s\n",
		    j->cfg.window, j->cfg.window == 1 ? "" : "s", j->cfg.connections,
		    j->cfg.connections == 1 ? "" : "s", j->cfg.window, j->cfg.mirror ? "/MIR " : "",
		    j->cfg.fft ? " /FFT" : "", d->speaks[0] ? d->speaks : "-");
	if (!j->planned) {
		pv_buf_addstr(b, "  the copy did not get as far as its plan\n");
		return;
	}
	pv_buf_addf(b, "%15s %10s %10s %10s %10s\n", "", "Total", "Copied", "Skipped", "Extras");
	pv_buf_addf(b, "%15s %10llu %10lu %10llu %10lu\n",
		    "Dirs :", (unsigned long long)p->source_dirs, d->dirs,
		    (unsigned long long)(p->source_dirs -
					 (d->dirs < p->source_dirs ? d->dirs : p->source_dirs)),
		    d->removed_dirs);
	pv_buf_addf(b, "%15s %10llu %10lu %10lu %10lu\n",
		    "Files :", (unsigned long long)p->source_files, d->files + d->fixed, d->ok,
		    d->removed_files);
	pv_buf_addf(
		b, "%15s %9.1fM %9.1fM %9.1fM\n", "Bytes :", mb(p->source_bytes), mb(d->bytes),
		mb(p->source_bytes - (p->bytes < p->source_bytes ? p->bytes : p->source_bytes)));
	pv_buf_addf(b,
		    "%15s listing %.2f s (%lu entries), folders and extras %.2f s, files %.2f s; "
		    "%.2f s in all\n",
		    "Times :", d->list_s, p->listed, d->prune_s, d->put_s, d->total_s);
	if (d->files + d->fixed && isfinite(o->lo))
		pv_buf_addf(b, "%15s %.0f files/s (%.0f-%.0f, 95%%), %.1f MB/s, %.0f MB/min\n",
			    "Speed :", o->rate, o->lo, o->hi, mb(d->bytes) / secs,
			    mb(d->bytes) / secs * 60);
	else if (d->files + d->fixed)
		pv_buf_addf(b,
			    "%15s %.0f files/s (too short for an interval), %.1f MB/s, %.0f "
			    "MB/min\n",
			    "Speed :", o->rate, mb(d->bytes) / secs, mb(d->bytes) / secs * 60);
	else
		pv_buf_addf(b,
			    "%15s no file was sent: the target had them all (%.2f s to see so)\n",
			    "Speed :", d->total_s);
	if (p->skipped)
		pv_buf_addf(b, "  %lu entr%s of the source not copied: %s, ...\n", p->skipped,
			    p->skipped == 1 ? "y" : "ies", p->first_skipped);
	if (d->files + d->fixed) {
		pv_buf_addstr(
			b, "latency per file (its compound sent to its last answer), by size:\n");
		for (int c = 0; c < PV_LOAD_COPY_CLASSES; c++)
			if (d->classes[c].files)
				pv_buf_addf(b,
					    "  %-16s %9lu files  median %7.2f ms  p95 %7.2f ms\n",
					    pv_load_copy_class_names[c], d->classes[c].files,
					    d->classes[c].p50 * 1000, d->classes[c].p95 * 1000);
	}
	pv_buf_addf(b,
		    "the client: the agent used %.0f%% of a core while it sent, its busiest "
		    "thread %.0f%%%s\n",
		    d->put_cpu, d->put_top,
		    d->put_top >= PV_LOAD_BOUND_CPU ? " (client-bound)" : "");
	if (j->nsamples)
		pv_buf_addf(b,
			    "the server: %.0f%% of its CPUs busy, %.0f%% waiting for I/O (%zu "
			    "samples)\n",
			    o->facts.server_cpu, o->facts.server_iowait, j->nsamples);
	for (size_t k = 0; k < j->nsmbd && k < 4; k++) {
		const struct pv_run_copy_smbd *s = &j->smbd[k];
		char q[64];

		if (s->quota >= 0)
			snprintf(q, sizeof(q), "a CPU quota of %.0f%%", s->quota);
		else
			snprintf(q, sizeof(q), "no CPU quota");
		if (s->cpu_max < 1 && k > 0)
			break;
		pv_buf_addf(b,
			    "  smbd %d%s: %.0f%% of a core (peak %.0f%%), busiest thread %.0f%% "
			    "(peak %.0f%%), %u thread%s, %s\n",
			    s->pid,
			    s->conn >= 0 ? (j->nconns > 1 ? " (a connection of the copy)"
							  : " (the copy's connection)")
					 : "",
			    s->cpu_mean, s->cpu_max, s->top_mean, s->top_max, s->threads,
			    s->threads == 1 ? "" : "s", q);
	}
	pv_buf_addf(b, "what bounds it: %s\n", o->verdict);
	if (j->profiled && j->counters.n) {
		struct pv_samba_counter *v = malloc(j->counters.n * sizeof(*v));
		size_t n = 0;

		if (v) {
			for (size_t i = 0; i < j->counters.n; i++)
				if (strncmp(j->counters.v[i].name, "smb2:", 5) != 0)
					v[n++] = j->counters.v[i];
			qsort(v, n, sizeof(*v), by_time);
			pv_buf_addf(b,
				    "smbd's system calls over the copy (Samba's profile), by "
				    "time:\n  %-14s %10s %10s %12s\n",
				    "call", "count", "ms", "us per call");
			for (size_t i = 0; i < n && i < 12; i++)
				pv_buf_addf(
					b, "  %-14s %10llu %10.1f %12.1f\n", v[i].name,
					(unsigned long long)v[i].count, (double)v[i].usec / 1000,
					v[i].count ? (double)v[i].usec / (double)v[i].count : 0);
			free(v);
		}
	} else {
		pv_buf_addf(b, "system calls: none taken: %s\n", j->profile_note);
	}
	pv_buf_addf(b, "results: %s (copy.json, ticks.csv, watch.csv, smbd.csv%s)\n", j->folder,
		    o->report[0] ? ", report.html" : "");
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct copy_out *o = result;
	struct pv_buf b = PV_BUF_INIT;

	(void)code;
	if (ctx->env.dry_run) {
		pv_text_plan("copy", &o->job.dry);
		return;
	}
	pv_copy_text(result, &b);
	if (b.len)
		fwrite(b.data, 1, b.len, stdout);
	pv_buf_release(&b, 0);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *obj)
{
	const struct copy_out *o = result;
	const struct pv_run_copy_job *j = &o->job;
	const struct pv_load_copy_done *d = &j->figs;
	struct pv_json *cl = pv_json_array(), *sm = pv_json_array(), *sc = pv_json_array();

	(void)code;
	pv_json_str(obj, "id", j->id);
	if (ctx->env.dry_run) {
		pv_json_plan(obj, &j->dry);
		pv_json_free(cl);
		pv_json_free(sm);
		pv_json_free(sc);
		return;
	}
	pv_json_str(obj, "folder", j->folder);
	pv_json_str(obj, "client", j->client);
	pv_json_str(obj, "source", j->source);
	pv_json_str(obj, "target", j->target);
	pv_json_int(obj, "window", j->cfg.window);
	pv_json_int(obj, "connections", j->cfg.connections);
	pv_json_bool(obj, "mirror", j->cfg.mirror);
	pv_json_bool(obj, "done", j->done);
	pv_json_int(obj, "source_files", (long long)j->plan.source_files);
	pv_json_int(obj, "source_bytes", (long long)j->plan.source_bytes);
	pv_json_int(obj, "files_copied", (long long)(d->files + d->fixed));
	pv_json_int(obj, "files_skipped", (long long)d->ok);
	pv_json_int(obj, "files_removed", (long long)d->removed_files);
	pv_json_int(obj, "dirs_made", (long long)d->dirs);
	pv_json_int(obj, "dirs_removed", (long long)d->removed_dirs);
	pv_json_int(obj, "bytes", (long long)d->bytes);
	pv_json_real(obj, "list_s", d->list_s);
	pv_json_real(obj, "put_s", d->put_s);
	pv_json_real(obj, "total_s", d->total_s);
	pv_json_real(obj, "files_per_s", o->rate);
	pv_json_real(obj, "files_per_s_lo", o->lo);
	pv_json_real(obj, "files_per_s_hi", o->hi);
	pv_json_real(obj, "mb_per_s", d->put_s > 0 ? mb(d->bytes) / d->put_s : NAN);
	pv_json_real(obj, "client_cpu", d->put_cpu);
	pv_json_real(obj, "client_top_thread", d->put_top);
	pv_json_bool(obj, "client_bound", d->put_top >= PV_LOAD_BOUND_CPU);
	for (int c = 0; c < PV_LOAD_COPY_CLASSES; c++) {
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "size", pv_load_copy_class_names[c]);
		pv_json_int(x, "files", (long long)d->classes[c].files);
		pv_json_real(x, "median_ms", d->classes[c].p50 * 1000);
		pv_json_real(x, "p95_ms", d->classes[c].p95 * 1000);
		pv_json_append(cl, x);
	}
	pv_json_set(obj, "latency", cl);
	for (size_t k = 0; k < j->nsmbd; k++) {
		struct pv_json *x = pv_json_object();

		pv_json_int(x, "pid", j->smbd[k].pid);
		pv_json_bool(x, "copy_connection", j->smbd[k].conn >= 0);
		pv_json_real(x, "cpu", j->smbd[k].cpu_mean);
		pv_json_real(x, "cpu_peak", j->smbd[k].cpu_max);
		pv_json_real(x, "busiest_thread", j->smbd[k].top_mean);
		pv_json_int(x, "threads", j->smbd[k].threads);
		pv_json_real(x, "quota", j->smbd[k].quota >= 0 ? j->smbd[k].quota : NAN);
		pv_json_append(sm, x);
	}
	pv_json_set(obj, "smbd", sm);
	pv_json_real(obj, "server_cpu", o->facts.server_cpu);
	pv_json_real(obj, "server_iowait", o->facts.server_iowait);
	if (j->dgram_qlen >= 0)
		pv_json_int(obj, "dgram_qlen", j->dgram_qlen);
	else
		pv_json_real(obj, "dgram_qlen", NAN); /* null: not Samba, or not readable */
	pv_json_str(obj, "bound", pv_results_copy_bound_names[o->bound]);
	pv_json_str(obj, "bound_text", o->verdict);
	pv_json_bool(obj, "profiled", j->profiled);
	pv_json_str(obj, "profile_note", j->profile_note);
	for (size_t i = 0; i < j->counters.n; i++) {
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "name", j->counters.v[i].name);
		pv_json_int(x, "count", (long long)j->counters.v[i].count);
		pv_json_int(x, "usec", (long long)j->counters.v[i].usec);
		pv_json_append(sc, x);
	}
	pv_json_set(obj, "samba_counters", sc);
	pv_json_str(obj, "report", o->report);
}

static void release(void *result)
{
	struct copy_out *o = result;

	pv_run_copy_job_release(&o->job);
}

static int count_opt(struct pv_ctx *ctx, enum pv_opt_id id, const char *name, unsigned long max,
		     unsigned *out)
{
	unsigned long v;
	int r;

	if (!ctx->cli.opt[id])
		return PV_OK;
	if ((r = pv_cli_count(name, ctx->cli.opt[id], max, &v)) != PV_OK)
		return r;
	if (v == 0)
		return pv_error(PV_EUSAGE, "%s is 1 to %lu", name, max);
	*out = (unsigned)v;
	return PV_OK;
}

int pv_copy_options(struct pv_ctx *ctx, struct pv_run_copy_opts *o)
{
	unsigned interval = 1;
	int r;

	memset(o, 0, sizeof(*o));
	o->client = ctx->cli.opt[OPT_CLIENT];
	o->from = ctx->cli.opt[OPT_FROM];
	o->fileset = ctx->cli.opt[OPT_FILESET];
	o->share = ctx->cli.opt[OPT_SHARE];
	o->folder = ctx->cli.opt[OPT_TO];
	o->mirror = ctx->cli.opt[OPT_MIRROR] != NULL;
	o->fft = 2;
	o->no_profile = ctx->cli.opt[OPT_NO_PROFILE] != NULL;
	o->id = ctx->cli.opt[OPT_ID];
	if ((r = count_opt(ctx, OPT_MT, "--mt", PV_LOAD_COPY_WINDOW_MAX, &o->window)) != PV_OK ||
	    (r = count_opt(ctx, OPT_CONNECTIONS, "--connections", PV_LOAD_COPY_CONNECTIONS_MAX,
			   &o->connections)) != PV_OK ||
	    (r = count_opt(ctx, OPT_INTERVAL, "--interval", 60, &interval)) != PV_OK)
		return r;
	o->interval = (int)interval;
	if (o->id && (!*o->id || strlen(o->id) > 60 || strchr(o->id, '/') || o->id[0] == '.'))
		return pv_error(PV_EUSAGE, "--id '%s': a folder name of 1 to 60 characters, no '/'",
				o->id);
	return PV_OK;
}

int pv_copy_finish(struct pv_ctx *ctx, struct pv_copy_view *o, int r)
{
	struct pv_buf page = PV_BUF_INIT, txt = PV_BUF_INIT;
	rate(o);
	facts(o);
	if (o->job.folder[0]) {
		if (pv_report_copy_page(&o->job, o->verdict, o->rate, o->lo, o->hi, &page) ==
			    PV_OK &&
		    pv_run_copy_write(&ctx->env, &o->job, "report.html", page.data, page.len) ==
			    PV_OK)
			snprintf(o->report, sizeof(o->report), "%s/report.html", o->job.folder);
		pv_copy_text(o, &txt);
		if (!pv_buf_failed(&txt))
			pv_run_copy_write(&ctx->env, &o->job, "copy.txt", txt.data, txt.len);
	}
	pv_buf_release(&page, 0);
	pv_buf_release(&txt, 0);
	return r;
}

int pv_cmd_copy(struct pv_ctx *ctx, struct pv_out *out)
{
	struct copy_out *o;
	struct pv_run_copy_opts opts;
	int r;

	if ((r = pv_copy_options(ctx, &opts)) != PV_OK)
		return r;
	if (!(o = pv_out_result(out, "copy", sizeof(*o), text, json, release)))
		return PV_EIO;
	r = pv_run_copy_run(&ctx->env, &opts, &o->job);
	if (ctx->env.dry_run)
		return r;
	return pv_copy_finish(ctx, o, r);
}
