/* run/copy.c: `provision copy` on the controller (see copy.h). */
#include "run/copy.h"

#include "env/target.h"
#include "json/json.h"
#include "playbooks/roster.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "run/install.h"
#include "run/sink.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char pv_run_copy_sh[];

#define TICKS_MAX (1u << 20) /* a day of ticks at 0.1 s */

/* What the agent's stream does meanwhile. */
struct stream {
	const struct pv_env *env;
	struct pv_run_copy_job *job;
	struct pv_remote *srv; /* the server's commands (smbstatus): NULL when not Samba */
	struct pv_progress prog;
	int bad; /* the first malformed line's code (its message kept) */
	char badmsg[512];
	double last_conns; /* when smbstatus was asked last */
};

static int keep_tick(struct pv_run_copy_job *j, const struct pv_load_copy_tick *t)
{
	if (j->nticks >= TICKS_MAX)
		return PV_OK; /* a day's worth: the rest is not kept */
	if ((j->nticks & (j->nticks - 1)) == 0 || j->nticks == 0) {
		size_t cap = j->nticks ? 2 * j->nticks : 64;
		struct pv_load_copy_tick *v = realloc(j->ticks, cap * sizeof(*v));

		if (!v)
			return pv_error(PV_EIO, "out of memory");
		j->ticks = v;
	}
	j->ticks[j->nticks++] = *t;
	return PV_OK;
}

/* The smbds serving the copy's connections, by their ports (smbstatus on the server). */
static void tie_conns(struct stream *S)
{
	struct pv_samba_conn *v = NULL;
	size_t n = 0;

	if (!S->srv || pv_samba_conns(S->srv, &v, &n) != PV_OK)
		return;
	for (unsigned c = 0; c < S->job->nconns; c++)
		for (size_t i = 0; i < n; i++)
			if (v[i].port && v[i].port == S->job->conns[c].port)
				S->job->conns[c].pid = v[i].pid;
	free(v);
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct stream *S = arg;
	struct pv_run_copy_job *j = S->job;
	struct pv_load_copy_line l;
	int r = pv_load_copy_line_parse(line, len, &l);

	if (r != PV_OK) {
		if (S->bad == PV_OK) {
			S->bad = r;
			snprintf(S->badmsg, sizeof(S->badmsg), "%s", pv_errmsg());
		}
		return r;
	}
	switch (l.kind) {
	case PV_LOAD_COPY_CONN:
		if (l.conn < PV_LOAD_COPY_CONNECTIONS_MAX) {
			j->conns[l.conn].port = l.port;
			snprintf(j->conns[l.conn].desc, sizeof(j->conns[0].desc), "%s", l.desc);
			if (l.conn + 1 > j->nconns)
				j->nconns = l.conn + 1;
			tie_conns(S);
		}
		break;
	case PV_LOAD_COPY_PLAN:
		j->plan = l.plan;
		j->planned = true;
		pv_progress_start(&S->prog, "copy", "files", l.plan.files);
		pv_log(PV_LOG_INFO,
		       "copy: %lu files (%.1f MB) to send, %lu folders to make, %lu extras; %lu "
		       "files "
		       "already there (listing %lu entries took %.1f s)",
		       l.plan.files, (double)l.plan.bytes / 1e6, l.plan.dirs, l.plan.extras,
		       l.plan.ok, l.plan.listed, l.plan.list_s);
		break;
	case PV_LOAD_COPY_TICK:
		pv_progress_bytes(&S->prog, l.tick.files, l.tick.bytes);
		r = keep_tick(j, &l.tick);
		break;
	case PV_LOAD_COPY_DONE:
		j->figs = l.done;
		j->done = true;
		break;
	}
	return r;
}

static bool should_stop(void *arg)
{
	struct stream *S = arg;

	return pv_env_stopped(S->env);
}

/* The source and target as the agent gets them. */
static int config(const struct pv_env *env, const struct pv_run_copy_opts *o,
		  const struct pv_playbook_roster_user *u, struct pv_run_copy_job *j)
{
	const struct pv_playbook *pb = env->pb;
	struct pv_load_copy_config *c = &j->cfg;

	snprintf(c->server, sizeof(c->server), "%s",
		 pb->server.host.address ? pb->server.host.address : pb->server.host.name);
	snprintf(c->share, sizeof(c->share), "%s", o->share ? o->share : u->share_name);
	if (o->folder)
		snprintf(c->base, sizeof(c->base), "%s", o->folder);
	else
		snprintf(c->base, sizeof(c->base), "%s/copy", u->name);
	snprintf(c->workgroup, sizeof(c->workgroup), "%s", pb->domain.netbios);
	snprintf(c->user, sizeof(c->user), "%s", u->name);
	c->window = o->window ? o->window : 8;
	c->connections = o->connections ? o->connections : 1;
	c->mirror = o->mirror;
	c->fft = o->fft;
	c->timeout = pb->server.host.ssh.timeout > 0 ? pb->server.host.ssh.timeout : 10;
	/* the copy's own ticks; --interval is the server's samples */
	c->interval = PV_LOAD_COPY_TICK_SECS;
	if (c->window > PV_LOAD_COPY_WINDOW_MAX || c->connections > PV_LOAD_COPY_CONNECTIONS_MAX)
		return pv_error(PV_EUSAGE,
				"--mt is 1 to %d requests in flight, --connections 1 to %d",
				PV_LOAD_COPY_WINDOW_MAX, PV_LOAD_COPY_CONNECTIONS_MAX);
	if (c->base[0] == '/' || strstr(c->base, "..") || strchr(c->base, '\\') ||
	    c->base[strlen(c->base) - 1] == '/')
		return pv_error(PV_EUSAGE,
				"--to '%s': a folder of the share, its parts separated by '/' (as "
				"cli1-u1/copy), without '..'",
				c->base);
	snprintf(j->share, sizeof(j->share), "%s", c->share);
	snprintf(j->target, sizeof(j->target), "//%s/%s/%s", pb->server.host.name, c->share,
		 c->base);
	snprintf(j->user, sizeof(j->user), "%s\\%s", pb->domain.netbios, u->name);
	if (!!o->from == !!o->fileset)
		return pv_error(
			PV_EUSAGE,
			"copy needs one source: --from FOLDER (a folder on the client) or "
			"--fileset FILE (a fileset, such as playbooks/filesets/srctree.yaml)");
	if (o->from) {
		if (o->from[0] != '/' || strlen(o->from) >= sizeof(c->dir))
			return pv_error(PV_EUSAGE, "--from '%s': an absolute folder on the client",
					o->from);
		snprintf(c->dir, sizeof(c->dir), "%s", o->from);
		snprintf(j->source, sizeof(j->source), "%s:%s", j->client, o->from);
	} else {
		struct pv_buf t = PV_BUF_INIT;
		FILE *f = fopen(o->fileset, "rb");
		char chunk[8192];
		size_t n;
		const char *slash = strrchr(o->fileset, '/');

		if (!f)
			return pv_error(PV_ECONFIG, "--fileset '%s': cannot read it", o->fileset);
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 &&
		       t.len + n <= PV_LOAD_COPY_FILESET_MAX)
			pv_buf_add(&t, chunk, n);
		fclose(f);
		if (n > 0 || !t.len || pv_buf_failed(&t)) {
			pv_buf_release(&t, 0);
			return pv_error(PV_ECONFIG, "--fileset '%s': empty, or more than 1 MiB",
					o->fileset);
		}
		c->fileset = t.data;
		c->fileset_len = t.len;
		snprintf(c->fileset_name, sizeof(c->fileset_name), "%s",
			 slash ? slash + 1 : o->fileset);
		snprintf(j->source, sizeof(j->source), "fileset %s", o->fileset);
	}
	return PV_OK;
}

/* The smbds over the copy: each one's mean and peak, its busiest thread, its quota; the
 * copy's connection it serves. The busiest first. */
static void smbds(struct pv_run_copy_job *j)
{
	for (size_t s = 0; s < j->nsamples; s++)
		for (unsigned p = 0; p < j->samples[s].nprocs; p++) {
			const struct pv_run_watch_proc *w = &j->samples[s].procs[p];
			size_t k;

			for (k = 0; k < j->nsmbd && j->smbd[k].pid != w->pid; k++)
				;
			if (k == j->nsmbd) {
				if (j->nsmbd == PV_RUN_WATCH_PROCS)
					continue;
				j->smbd[j->nsmbd++] = (struct pv_run_copy_smbd){w->pid, -1};
			}
			j->smbd[k].cpu_mean += w->cpu / (double)j->nsamples;
			j->smbd[k].top_mean += w->top / (double)j->nsamples;
			j->smbd[k].cpu_max = fmax(j->smbd[k].cpu_max, w->cpu);
			j->smbd[k].top_max = fmax(j->smbd[k].top_max, w->top);
			if (w->threads > j->smbd[k].threads)
				j->smbd[k].threads = w->threads;
			j->smbd[k].quota = w->quota;
		}
	for (size_t k = 0; k < j->nsmbd; k++)
		for (unsigned c = 0; c < j->nconns; c++)
			if (j->conns[c].pid == j->smbd[k].pid)
				j->smbd[k].conn = (int)c;
	for (size_t a = 1; a < j->nsmbd; a++)
		for (size_t b = a; b > 0 && j->smbd[b].cpu_mean > j->smbd[b - 1].cpu_mean; b--) {
			struct pv_run_copy_smbd t = j->smbd[b];

			j->smbd[b] = j->smbd[b - 1];
			j->smbd[b - 1] = t;
		}
}

/* ---- the files ---- */

static char *job_json(const struct pv_run_copy_job *j)
{
	struct pv_json *o = pv_json_object(), *a = pv_json_array(), *s = pv_json_array(),
		       *c = pv_json_array();
	char *text;

	pv_json_str(o, "id", j->id);
	pv_json_str(o, "client", j->client);
	pv_json_str(o, "server", j->server);
	pv_json_str(o, "user", j->user);
	pv_json_str(o, "source", j->source);
	pv_json_str(o, "target", j->target);
	pv_json_str(o, "samba", j->samba);
	if (j->dgram_qlen >= 0)
		pv_json_int(o, "dgram_qlen", j->dgram_qlen);
	pv_json_int(o, "window", j->cfg.window);
	pv_json_int(o, "connections", j->cfg.connections);
	pv_json_bool(o, "mirror", j->cfg.mirror);
	pv_json_int(o, "fft", j->cfg.fft);
	pv_json_bool(o, "planned", j->planned);
	pv_json_bool(o, "done", j->done);
	pv_json_int(o, "plan_files", (long long)j->plan.files);
	pv_json_int(o, "plan_bytes", (long long)j->plan.bytes);
	pv_json_int(o, "files", (long long)(j->figs.files + j->figs.fixed));
	pv_json_int(o, "bytes", (long long)j->figs.bytes);
	pv_json_real(o, "put_s", j->figs.put_s);
	pv_json_real(o, "total_s", j->figs.total_s);
	for (unsigned i = 0; i < j->nconns; i++) {
		struct pv_json *x = pv_json_object();

		pv_json_int(x, "port", j->conns[i].port);
		pv_json_int(x, "smbd_pid", j->conns[i].pid);
		pv_json_str(x, "speaks", j->conns[i].desc);
		pv_json_append(a, x);
	}
	pv_json_set(o, "connections_seen", a);
	for (size_t i = 0; i < j->nsmbd; i++) {
		struct pv_json *x = pv_json_object();

		pv_json_int(x, "pid", j->smbd[i].pid);
		pv_json_int(x, "connection", j->smbd[i].conn);
		pv_json_real(x, "cpu_mean", j->smbd[i].cpu_mean);
		pv_json_real(x, "cpu_max", j->smbd[i].cpu_max);
		pv_json_real(x, "top_thread_mean", j->smbd[i].top_mean);
		pv_json_real(x, "top_thread_max", j->smbd[i].top_max);
		pv_json_int(x, "threads", j->smbd[i].threads);
		if (j->smbd[i].quota >= 0)
			pv_json_real(x, "quota", j->smbd[i].quota);
		pv_json_append(s, x);
	}
	pv_json_set(o, "smbd", s);
	for (size_t i = 0; i < j->counters.n; i++) {
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "name", j->counters.v[i].name);
		pv_json_int(x, "count", (long long)j->counters.v[i].count);
		pv_json_int(x, "usec", (long long)j->counters.v[i].usec);
		pv_json_append(c, x);
	}
	pv_json_set(o, "samba_counters", c);
	pv_json_str(o, "profile_note", j->profile_note);
	text = pv_json_pretty(o);
	pv_json_free(o);
	return text;
}

static int write_files(struct pv_run_sink *k, const struct pv_run_copy_job *j)
{
	struct pv_buf t = PV_BUF_INIT, w = PV_BUF_INIT, p = PV_BUF_INIT;
	char *json = job_json(j);
	int r;

	pv_buf_addstr(&t, "seconds,files,bytes,agent_cpu,busiest_thread_cpu\n");
	for (size_t i = 0; i < j->nticks; i++)
		pv_buf_addf(&t, "%.3f,%lu,%llu,%.1f,%.1f\n", j->ticks[i].t, j->ticks[i].files,
			    (unsigned long long)j->ticks[i].bytes, j->ticks[i].cpu,
			    j->ticks[i].top);
	pv_run_watch_csv(j->samples, j->nsamples, j->start, j->start, &w);
	pv_buf_addstr(&p, "seconds,pid,cpu,threads,busiest_thread,quota\n");
	for (size_t i = 0; i < j->nsamples; i++)
		for (unsigned q = 0; q < j->samples[i].nprocs; q++) {
			const struct pv_run_watch_proc *x = &j->samples[i].procs[q];

			pv_buf_addf(&p, "%.1f,%d,%.1f,%u,%.1f,", j->samples[i].t - j->start, x->pid,
				    x->cpu, x->threads, x->top);
			if (x->quota >= 0)
				pv_buf_addf(&p, "%.1f", x->quota);
			pv_buf_addstr(&p, "\n");
		}
	if (!json || pv_buf_failed(&t) || pv_buf_failed(&w) || pv_buf_failed(&p))
		r = pv_error(PV_EIO, "out of memory");
	else if ((r = pv_run_sink_write(k, "", "copy.json", json, strlen(json), true)) == PV_OK &&
		 (r = pv_run_sink_write(k, "", "ticks.csv", t.data, t.len, true)) == PV_OK &&
		 (r = pv_run_sink_write(k, "", "watch.csv", w.data, w.len, true)) == PV_OK)
		r = pv_run_sink_write(k, "", "smbd.csv", p.data, p.len, true);
	free(json);
	pv_buf_release(&t, 0);
	pv_buf_release(&w, 0);
	pv_buf_release(&p, 0);
	return r;
}

/* ---- the job ---- */

struct hosts {
	struct pv_remote *cli, *srv, *ctl;
	struct pv_run_watch *watch;
	struct pv_run_sink *sink;    /* handed to the job at the end */
	enum pv_samba_profile level; /* the server's before the copy */
	bool level_set;		     /* changed: to be put back */
};

static void put_back(struct hosts *h, struct pv_run_copy_job *j)
{
	if (!h->level_set)
		return;
	if (pv_samba_profile_set(h->srv, h->level) == PV_OK) {
		h->level_set = false;
		if (h->level == PV_SAMBA_PROFILE_OFF)
			snprintf(j->profile_note, sizeof(j->profile_note),
				 "Samba's profiling was turned on for the copy and off again");
	} else {
		snprintf(j->profile_note, sizeof(j->profile_note),
			 "Samba's profiling level could not be put back (%s): run 'smbcontrol smbd "
			 "profile off' on the server",
			 pv_errmsg());
		pv_log(PV_LOG_WARN, "copy: %s", j->profile_note);
	}
}

static int agent(const struct pv_env *env, struct hosts *h, const char *bin,
		 struct pv_run_copy_job *j)
{
	const struct pv_secret *pw = NULL;
	struct pv_buf cmd = PV_BUF_INIT, in = PV_BUF_INIT, err = PV_BUF_INIT;
	struct stream S = {env, j, h->level_set || j->samba[0] ? h->srv : NULL};
	struct pv_remote_stream_ops ops = {on_line, should_stop, &S, NULL};
	int status = 0, r;

	if ((r = pv_env_secret(env, PV_ENV_CRED_USERS, &pw)) != PV_OK)
		return r;
	pv_buf_secret(&in);
	pv_buf_add(&in, pw->data, pw->len);
	pv_buf_addstr(&in, "\n");
	if ((r = pv_load_copy_config_put(&j->cfg, &in)) != PV_OK) {
		pv_buf_release(&in, 1);
		return r;
	}
	pv_remote_var(&cmd, "bin", bin);
	pv_buf_addstr(&cmd, pv_run_copy_sh);
	j->start = pv_now();
	r = pv_buf_failed(&cmd)
		    ? pv_error(PV_EIO, "out of memory")
		    : pv_remote_stream(h->cli, cmd.data, in.data, in.len, &ops, &err, &status, 0);
	j->end = pv_now();
	if (j->planned)
		pv_progress_end(&S.prog);
	pv_remote_reason(err.len ? err.data : "", j->err, sizeof(j->err));
	if (!strncmp(j->err, "provision: error: ", 18)) /* the agent's own words, its prefix off */
		memmove(j->err, j->err + 18, strlen(j->err + 18) + 1);
	if (pv_env_stopped(env))
		r = pv_error(PV_ESTOPPED, "copy on '%s': stopped (%lu of %lu files sent)",
			     j->client, j->nticks ? j->ticks[j->nticks - 1].files : 0,
			     j->plan.files);
	else if (r == PV_OK && S.bad != PV_OK)
		r = pv_error(S.bad, "%s", S.badmsg);
	else if (r == PV_OK && (status != 0 || !j->done))
		r = pv_error(status == 15		 ? PV_ESTOPPED
			     : status > 0 && status < 20 ? status
							 : PV_EREMOTE,
			     "copy on '%s': %s", j->client,
			     j->err[0] ? j->err : "the agent ended without its figures");
	pv_buf_release(&cmd, 0);
	pv_buf_release(&in, 1);
	pv_buf_release(&err, 0);
	return r;
}

int pv_run_copy_run(const struct pv_env *env, const struct pv_run_copy_opts *o,
		    struct pv_run_copy_job *j)
{
	const struct pv_playbook *pb = env->pb;
	const struct pv_playbook_host *client = NULL;
	struct hosts h = {0};
	struct pv_playbook_roster_user u;
	struct pv_run_self self = {0};
	char bin[128], name[64], id[64], why[1024];
	bool copied = false;
	size_t ci = 0;
	int r, r2;

	memset(j, 0, sizeof(*j));
	j->dgram_qlen = -1;
	why[0] = '\0';
	if (!pb->has_server || pb->nclients == 0)
		return pv_error(PV_ECONFIG, "copy needs the playbook's server and a client");
	if (!pb->has_controller || !pb->controller.results)
		return pv_error(PV_ECONFIG, "copy keeps its results in controller.results: add a "
					    "'controller:' section with results: FOLDER");
	for (ci = 0; o->client && ci < pb->nclients; ci++)
		if (!strcmp(pb->clients[ci].name, o->client))
			break;
	if (ci == pb->nclients)
		return pv_error(PV_ECONFIG, "--client '%s' is not one of the playbook's clients",
				o->client);
	client = &pb->clients[ci];
	if (client->os == PV_PLAYBOOK_OS_WINDOWS)
		return pv_error(PV_ECONFIG,
				"--client '%s' is a Windows client: the copy agent "
				"runs on Linux clients (robocopy is Windows' own)",
				client->name);
	snprintf(j->client, sizeof(j->client), "%s", client->name);
	snprintf(j->server, sizeof(j->server), "%s", pb->server.host.name);
	if ((r = pv_playbook_roster_user(pb, ci, o->user ? o->user : 1, &u)) != PV_OK ||
	    (r = config(env, o, &u, j)) != PV_OK)
		return r;
	j->interval = o->interval > 0 ? o->interval : 1;
	if (o->id) {
		snprintf(id, sizeof(id), "%s", o->id);
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(id, sizeof(id), "copy-%Y%m%d-%H%M%S", &tm);
	}
	if (env->dry_run) {
		snprintf(j->id, sizeof(j->id), "%s", id);
		pv_env_plan_add(&j->dry,
				"copy %s to %s from '%s' as %s, %u request%s in flight on %u "
				"connection%s%s",
				j->source, j->target, j->client, j->user, j->cfg.window,
				j->cfg.window == 1 ? "" : "s", j->cfg.connections,
				j->cfg.connections == 1 ? "" : "s",
				j->cfg.mirror ? ", removing what the source does not hold (/MIR)"
					      : "");
		pv_env_plan_add(&j->dry, "copy provision to '%s' when it lacks this build",
				j->client);
		pv_env_plan_add(&j->dry,
				"watch '%s' every %d s: its CPU and each busy smbd's, with its "
				"threads and CPU quota",
				j->server, j->interval);
		if (!o->no_profile)
			pv_env_plan_add(&j->dry,
					"turn Samba's profiling on for the copy on '%s' "
					"(smbcontrol) and put its level back after it",
					j->server);
		pv_env_plan_add(&j->dry, "keep the results in %s/%s on the controller",
				pb->controller.results, id);
		return PV_OK;
	}
	/* the hosts: the client (its binary), the server (commands, and the watch's own) */
	if ((r = pv_run_self_read(&self)) != PV_OK ||
	    (r = pv_env_host_connect(client, &h.cli)) != PV_OK ||
	    (r = pv_run_install_self(h.cli, &self, bin, sizeof(bin), &copied)) != PV_OK ||
	    (r = pv_env_host_connect(&pb->server.host, &h.srv)) != PV_OK)
		goto out;
	if (copied)
		pv_log(PV_LOG_INFO, "copy: provision copied to '%s' (%s)", client->name, bin);
	pv_samba_version(h.srv, j->samba, sizeof(j->samba));
	if (strncmp(j->samba, "Version", 7) != 0)
		j->samba[0] = '\0';
	else
		j->dgram_qlen = pv_samba_dgram_qlen(h.srv);
	if (pb->controller.host.name &&
	    (r = pv_env_host_connect(&pb->controller.host, &h.ctl)) != PV_OK)
		goto out;
	if (!(h.sink = calloc(1, sizeof(*h.sink)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_run_sink_open(h.sink, h.ctl, pb->controller.results, id, o->id != NULL,
				  name)) != PV_OK) {
		free(h.sink);
		h.sink = NULL;
		goto out;
	}
	snprintf(j->id, sizeof(j->id), "%s", name);
	snprintf(j->folder, sizeof(j->folder), "%s", h.sink->path);
	/* Samba's counters, its level put back at the end */
	if (o->no_profile) {
		snprintf(j->profile_note, sizeof(j->profile_note), "not asked for (--no-profile)");
	} else if (!j->samba[0]) {
		snprintf(j->profile_note, sizeof(j->profile_note),
			 "the server is not a Samba server: no system calls were taken");
	} else if (pv_samba_profile_level(h.srv, &h.level) != PV_OK) {
		snprintf(j->profile_note, sizeof(j->profile_note),
			 "Samba's profiling level could not be read (%s): no system calls were "
			 "taken",
			 pv_errmsg());
	} else if (h.level != PV_SAMBA_PROFILE_ON &&
		   pv_samba_profile_set(h.srv, PV_SAMBA_PROFILE_ON) != PV_OK) {
		snprintf(
			j->profile_note, sizeof(j->profile_note),
			"Samba's profiling could not be turned on (%s): no system calls were taken",
			pv_errmsg());
	} else {
		h.level_set = h.level != PV_SAMBA_PROFILE_ON;
		j->profiled = true;
		snprintf(j->profile_note, sizeof(j->profile_note),
			 "Samba's profiling was on already, and is left on");
	}
	{
		struct pv_remote *wr = NULL;

		if ((r = pv_env_host_connect(&pb->server.host, &wr)) != PV_OK ||
		    (r = pv_run_watch_start(&pb->server.host, wr, "server", j->interval, true,
					    &h.watch)) != PV_OK)
			goto out;
	}
	{
		struct pv_samba_counters before = {0}, after = {0};

		if (j->profiled && pv_samba_counters_read(h.srv, &before) != PV_OK)
			j->profiled = false;
		r = agent(env, &h, bin, j);
		if (r !=
		    PV_OK) /* reading the counters below must not replace the failure's words */
			snprintf(why, sizeof(why), "%s", pv_errmsg());
		if (j->profiled && pv_samba_counters_read(h.srv, &after) == PV_OK)
			pv_samba_counters_diff(&before, &after, &j->counters);
		pv_samba_counters_release(&before);
		pv_samba_counters_release(&after);
	}
out:
	/* what the clean-up below records must not replace the failure's words */
	if (r != PV_OK && !why[0])
		snprintf(why, sizeof(why), "%s", pv_errmsg());
	if (h.srv)
		put_back(&h, j);
	if (h.watch) {
		r2 = pv_run_watch_window(h.watch, j->start, j->end + 0.5, &j->samples,
					 &j->nsamples);
		if (r == PV_OK && r2 != PV_OK)
			r = r2;
		pv_run_watch_stop(h.watch);
		smbds(j);
	}
	if (h.sink) {
		r2 = write_files(h.sink, j);
		if (r == PV_OK && r2 != PV_OK)
			r = r2;
		j->sink = h.sink; /* kept for pv_run_copy_write, with its connection */
		j->ctl = h.ctl;
		h.ctl = NULL;
	}
	pv_remote_free(h.cli);
	pv_remote_free(h.srv);
	pv_remote_free(h.ctl);
	pv_run_self_release(&self);
	if (r != PV_OK && why[0])
		return pv_error(r, "%s", why);
	return r;
}

int pv_run_copy_write(const struct pv_env *env, const struct pv_run_copy_job *j, const char *name,
		      const void *data, size_t len)
{
	(void)env;
	if (!j->sink)
		return pv_error(PV_EBUG, "copy: no results folder to write %s into", name);
	return pv_run_sink_write(j->sink, "", name, data, len, true);
}

void pv_run_copy_job_release(struct pv_run_copy_job *j)
{
	if (j->sink) {
		pv_run_sink_close(j->sink);
		free(j->sink);
	}
	pv_remote_free(j->ctl);
	free(j->ticks);
	free(j->samples);
	pv_samba_counters_release(&j->counters);
	pv_load_copy_config_release(&j->cfg);
	pv_env_plan_release(&j->dry);
	memset(j, 0, sizeof(*j));
}
