/* run/run.c: `provision run` (see run.h). */
#include "run/run.h"
#include "run/internal.h"

#include "json/json.h"
#include "run/drain.h"
#include "run/render.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"
#include "util/tar.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const char pv_run_client_pl[];

#define GATHER_MAX  (256u << 20) /* bytes of results gathered from one host for one step */
#define SLICE_MS    200
#define STOP_GRACE  5 /* seconds between SIGTERM and SIGKILL (as run-client.pl) */
#define HEARTBEAT   2 /* run-client.pl's pv-alive period */

const char *pv_run_state_name(enum pv_run_state s)
{
	static const char *const names[] = {"not started", "done", "failed", "stopped", "lost"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* ---- where the results go: the controller, local or over SSH ---- */


/* Local: open rel's folder (made when mk) below the run's folder, every part without
 * following a link. */
static int local_dir(struct sink *k, const char *rel, bool mk, int *out)
{
	char part[1024];
	int fd = dup(k->fd);

	if (fd < 0)
		return pv_error(PV_EIO, "%s: %s", k->path, strerror(errno));
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		int next;

		snprintf(part, sizeof(part), "%.*s", (int)n, p);
		if (mk && mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			close(fd);
			return pv_error(PV_EIO, "cannot make %s/%s: %s", k->path, rel, strerror(errno));
		}
		next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return pv_error(PV_EIO, "%s/%s: %s", k->path, rel, strerror(errno));
		fd = next;
		p += n;
		while (*p == '/')
			p++;
	}
	*out = fd;
	return PV_OK;
}

static int local_write(int dir, const char *where, const char *name, const void *data, size_t len,
		       bool replace)
{
	char tmp[300];
	int fd, r = PV_OK;

	snprintf(tmp, sizeof(tmp), replace ? ".%s.new" : "%s", name);
	if (replace)
		unlinkat(dir, tmp, 0);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && r == PV_OK)
		r = pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
	if (r == PV_OK && replace && renameat(dir, tmp, dir, name) < 0)
		r = pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
	return r;
}

static int remote_cmd(struct sink *k, const char *what, const char *script, const void *in,
		      size_t inlen)
{
	struct pv_buf err = PV_BUF_INIT;
	int status = 0, r;

	r = pv_remote_exec(k->rem, script, in, inlen, NULL, &err, &status, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "%s on the controller '%s' failed (status %d): %s", what,
			     pv_remote_name(k->rem), status, err.len ? err.data : "no message");
	pv_buf_release(&err, 0);
	return r;
}

/* Make rel (a folder below the run's, its parent existing). */
int pv_run_sink_mkdir(struct sink *k, const char *rel)
{
	struct pv_buf sc = PV_BUF_INIT;
	int fd, r;

	if (!k->rem) {
		if ((r = local_dir(k, rel, true, &fd)) == PV_OK)
			close(fd);
		return r;
	}
	pv_remote_var(&sc, "d", k->path);
	pv_remote_var(&sc, "rel", rel);
	pv_buf_addstr(&sc, "mkdir -m 0755 -- \"$d/$rel\"\n");
	pthread_mutex_lock(&k->lock);
	r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
			       : remote_cmd(k, "making a results folder", sc.data, NULL, 0);
	pthread_mutex_unlock(&k->lock);
	pv_buf_release(&sc, 0);
	return r;
}

/* Write the file rel/name (replace: atomically over an older one). */
int pv_run_sink_write(struct sink *k, const char *rel, const char *name, const void *data,
		      size_t len, bool replace)
{
	char full[2048];
	int fd, r;

	snprintf(full, sizeof(full), "%s%s%s/%s", k->path, *rel ? "/" : "", rel, name);
	if (!k->rem) {
		if ((r = local_dir(k, rel, false, &fd)) != PV_OK)
			return r;
		r = local_write(fd, k->path, name, data, len, replace);
		close(fd);
		return r;
	}
	pthread_mutex_lock(&k->lock);
	r = pv_remote_write_file(k->rem, full, data, len, 0644);
	pthread_mutex_unlock(&k->lock);
	return r;
}

struct untar {
	struct sink *k;
	const char *rel;
	int top;
	unsigned long files;
	unsigned long long bytes;
};

static int untar_entry(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct untar *u = arg;
	const char *slash = strrchr(e->path, '/');
	char dir[1024];
	int fd = -1, r;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - e->path) : 0, e->path);
	if (e->dir) {
		struct sink sub = *u->k;

		sub.fd = u->top;
		if ((r = local_dir(&sub, e->path, true, &fd)) == PV_OK)
			close(fd);
		return r;
	}
	{
		struct sink sub = *u->k;

		sub.fd = u->top;
		if ((r = local_dir(&sub, dir, true, &fd)) != PV_OK)
			return r;
	}
	r = local_write(fd, u->k->path, slash ? slash + 1 : e->path, content, (size_t)e->size,
			false);
	close(fd);
	u->files++;
	u->bytes += e->size;
	return r;
}

static int untar_entry_count(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct untar *u = arg;

	(void)content;
	if (!e->dir) {
		u->files++;
		u->bytes += e->size;
	}
	return 0;
}

/* The files of a ustar stream into rel (made), which must not hold them yet. */
static int sink_tar(struct sink *k, const char *rel, const struct pv_buf *tar,
		    struct pv_run_host *h)
{
	struct untar u = {k, rel, -1, 0, 0};
	int r;

	if (!k->rem) {
		if ((r = local_dir(k, rel, true, &u.top)) != PV_OK)
			return r;
		r = pv_tar_each(tar->data, tar->len, untar_entry, &u, &h->skipped);
		close(u.top);
	} else {
		struct pv_buf sc = PV_BUF_INIT;

		/* checked first: only files and folders, clean paths, into a folder of ours */
		if ((r = pv_tar_each(tar->data, tar->len, untar_entry_count, &u, &h->skipped)) !=
		    PV_OK)
			return r;
		pv_remote_var(&sc, "d", k->path);
		pv_remote_var(&sc, "rel", rel);
		pv_buf_addstr(&sc, "mkdir -p -- \"$d/$rel\" && tar -x --no-same-owner "
				   "--no-same-permissions -C \"$d/$rel\" -f -\n");
		pthread_mutex_lock(&k->lock);
		r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
				       : remote_cmd(k, "writing results", sc.data, tar->data,
						    tar->len);
		pthread_mutex_unlock(&k->lock);
		pv_buf_release(&sc, 0);
	}
	h->files = u.files;
	h->bytes = u.bytes;
	return r;
}

/* ---- one step on one host ---- */

void pv_run_host_fail(struct pv_run_host *h, enum pv_run_state s, int code, const char *fmt, ...)
{
	va_list ap;

	h->state = s;
	if (h->code != PV_OK)
		return;
	h->code = code;
	va_start(ap, fmt);
	vsnprintf(h->msg, sizeof(h->msg), fmt, ap);
	va_end(ap);
}

static int host_line(void *arg, const char *line, size_t len)
{
	struct hostrun *x = arg;
	struct pv_run_host *h = x->h;

	(void)len;
	pthread_mutex_lock(&x->st->lock);
	x->last_seen = pv_now();
	if (!strncmp(line, "pv-started ", 11)) {
		x->running = true;
		pthread_cond_broadcast(&x->st->cond);
	} else if (!strncmp(line, "pv-exit ", 8) && !x->final) {
		x->final = true;
		h->exit = atoi(line + 8);
		if (h->exit == 0)
			h->state = PV_RUN_DONE;
		else
			pv_run_host_fail(h, PV_RUN_FAILED, PV_EREMOTE,
				  "the command ended with status %d before the step's end (see "
				  "%s/%s/stderr)",
				  h->exit, x->st->rel, h->name);
	} else if (!strncmp(line, "pv-stopped ", 11) && !x->final) {
		x->final = true;
		h->exit = atoi(line + 11);
		h->state = PV_RUN_STOPPED;
	} else if (!strncmp(line, "pv-error ", 9) && !x->final) {
		x->final = true;
		pv_run_host_fail(h, PV_RUN_NOT_STARTED, PV_EREMOTE, "%s", line + 9);
		pthread_cond_broadcast(&x->st->cond);
	} else if (strcmp(line, "pv-alive") != 0) {
		pv_log(PV_LOG_DEBUG, "run: %s: %s", h->name, line);
	}
	pthread_mutex_unlock(&x->st->lock);
	return 0;
}

static bool host_stop(void *arg)
{
	struct hostrun *x = arg;
	bool stop;

	pthread_mutex_lock(&x->st->lock);
	stop = x->st->over;
	if (!stop && x->running && !x->final &&
	    pv_now() - x->last_seen > x->st->run->lost_after) {
		x->silent = true;
		stop = true;
		pthread_cond_broadcast(&x->st->cond);
	}
	pthread_mutex_unlock(&x->st->lock);
	return stop;
}

/* The step's folder on the host, into <run>/<step>/<host>/ on the controller. */
static void gather(struct hostrun *x)
{
	struct run *R = x->st->run;
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT, err = PV_BUF_INIT;
	char rel[128];
	int status = 0, r;

	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	pv_remote_var(&sc, "d", x->dir);
	pv_buf_addf(&sc, "cd -- \"$d\" && tar --format=ustar -cf - . | head -c %u\n", GATHER_MAX);
	r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
			       : pv_remote_exec(x->rem, sc.data, NULL, 0, &out, &err, &status, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "status %d: %s", status, err.len ? err.data : "no message");
	if (r == PV_OK && out.len >= GATHER_MAX)
		r = pv_error(PV_EREMOTE, "more than %u MiB of results in %s", GATHER_MAX >> 20,
			     x->dir);
	if (r == PV_OK)
		r = sink_tar(&R->sink, rel, &out, x->h);
	if (r != PV_OK && x->h->code == PV_OK) {
		x->h->code = r;
		snprintf(x->h->msg, sizeof(x->h->msg), "its results were not gathered: %s",
			 pv_errmsg());
	}
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	pv_buf_release(&err, 0);
}

static void *remote_host(void *arg)
{
	struct hostrun *x = arg;
	struct run *R = x->st->run;
	struct pv_remote_stream_ops ops = {host_line, host_stop, x};
	struct pv_buf sc = PV_BUF_INIT, in = PV_BUF_INIT, err = PV_BUF_INIT;
	char label[160];
	int status = -1, r;

	pv_buf_secret(&in);
	snprintf(label, sizeof(label), "%s %s %s", R->pb->lab, R->res->id, x->st->rel);
	pv_remote_var(&sc, "prog", pv_run_client_pl);
	pv_remote_var(&sc, "base", x->base);
	pv_remote_var(&sc, "step", x->st->rel);
	pv_remote_var(&sc, "label", label);
	pv_remote_var(&sc, "cmd", x->cmd.data);
	pv_buf_addf(&sc, "exec perl -e \"$prog\" -- \"$base\" \"$step\" %d \"$label\" \"$cmd\"\n",
		    x->password ? 1 : 0);
	if (x->password) {
		pv_buf_add(&in, R->password->data, R->password->len);
		pv_buf_add(&in, "\n", 1);
	}
	if (pv_buf_failed(&sc) || pv_buf_failed(&in))
		r = pv_error(PV_EIO, "out of memory");
	else
		r = pv_remote_stream(x->rem, sc.data, in.data, in.len, &ops, &err, &status, 0);
	pthread_mutex_lock(&x->st->lock);
	if (x->silent) {
		pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH,
			  "no word from '%s' for %.0f s during the step: lost", x->h->name,
			  R->lost_after);
	} else if (!x->final) {
		/* no end reported: the session went away (a command that could not start says
		 * so with pv-error), unless the stream itself could not start */
		if (r == PV_OK)
			r = pv_error(PV_EUNREACH,
				     "its session ended without the command's end (status %d)%s%.200s",
				     status, err.len ? ": " : "", err.len ? err.data : "");
		if (x->running || r == PV_EUNREACH)
			pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH, "lost: %s", pv_errmsg());
		else
			pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, r, "%s", pv_errmsg());
	}
	x->ended = true;
	pthread_cond_broadcast(&x->st->cond);
	pthread_mutex_unlock(&x->st->lock);
	if (x->running && x->h->state != PV_RUN_LOST)
		gather(x);
	pv_buf_release(&sc, 0);
	pv_buf_release(&in, 1);
	pv_buf_release(&err, 0);
	return NULL;
}

/* The controller's command on this machine: in a session of its own, in the step's folder. */
static int spawn_local(struct hostrun *x, const char *pwpath, pid_t *pid)
{
	struct run *R = x->st->run;
	char rel[128];
	int dir, out = -1, err = -1, r;

	(void)pwpath;
	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	if ((r = local_dir(&R->sink, rel, true, &dir)) != PV_OK)
		return r;
	out = openat(dir, "stdout", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	err = openat(dir, "stderr", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0 || err < 0) {
		r = pv_error(PV_EIO, "%s/%s: %s", R->sink.path, rel, strerror(errno));
	} else if ((*pid = fork()) < 0) {
		r = pv_error(PV_EIO, "fork: %s", strerror(errno));
	} else if (*pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		/* only async-signal-safe calls between fork and exec */
		setsid();
		if (null < 0 || fchdir(dir) < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
		    dup2(err, 2) < 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", x->cmd.data, (char *)NULL);
		_exit(127);
	}
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	close(dir);
	return r;
}

/* TERM to the group, KILL after grace seconds; reaps pid (its status in *st when still
 * unreaped). */
static void stop_group(pid_t pid, int grace, bool *reaped, int *st)
{
	double until = pv_now() + grace;

	kill(-pid, SIGTERM);
	while (pv_now() < until) {
		if (!*reaped && waitpid(pid, st, WNOHANG) == pid)
			*reaped = true;
		if (kill(-pid, 0) < 0)
			break;
		usleep(100000);
	}
	kill(-pid, SIGKILL);
	if (!*reaped && waitpid(pid, st, 0) == pid)
		*reaped = true;
}

static void *local_host(void *arg)
{
	struct hostrun *x = arg;
	struct steprun *st = x->st;
	pid_t pid = -1;
	bool reaped = false, over = false;
	int status = 0, r;

	r = spawn_local(x, NULL, &pid);
	pthread_mutex_lock(&st->lock);
	if (r != PV_OK)
		pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, r, "%s", pv_errmsg());
	else
		x->running = true;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	while (r == PV_OK && !reaped && !over) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			reaped = true;
		pthread_mutex_lock(&st->lock);
		over = st->over;
		pthread_mutex_unlock(&st->lock);
		if (!reaped && !over)
			usleep(SLICE_MS * 1000);
	}
	if (r == PV_OK)
		stop_group(pid, reaped ? 2 : STOP_GRACE, &reaped, &status);
	pthread_mutex_lock(&st->lock);
	if (r == PV_OK) {
		x->h->exit = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		if (over)
			x->h->state = PV_RUN_STOPPED;
		else if (x->h->exit == 0)
			x->h->state = PV_RUN_DONE;
		else
			pv_run_host_fail(x->h, PV_RUN_FAILED, PV_EREMOTE,
				  "the command ended with status %d before the step's end (see "
				  "%s/%s/stderr)",
				  x->h->exit, st->rel, x->h->name);
	}
	x->final = x->ended = true;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

/* ---- a step ---- */

/* Render the host's command for the step. */
static int render(struct run *R, struct steprun *st, struct hostrun *x, unsigned users_total)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_buf clients = PV_BUF_INIT;
	char results[1100], pwfile[1100];
	struct pv_driver_vars v;
	int r;

	for (size_t i = 0; i < pb->nclients; i++)
		pv_buf_addf(&clients, "%s%s", i ? "," : "", pb->clients[i].name);
	snprintf(x->base, sizeof(x->base), "%s-%s", R->base, x->h->name);
	snprintf(x->dir, sizeof(x->dir), "%s/%s", x->base, st->rel);
	if (x->host)
		snprintf(results, sizeof(results), "%s", x->dir);
	else
		snprintf(results, sizeof(results), "%s/%s/%s", R->sink.path, st->rel, x->h->name);
	snprintf(pwfile, sizeof(pwfile), "%s/password", x->host ? x->base : R->local_pw);
	memset(&v, 0, sizeof(v));
	v.client = x->h->controller ? "" : x->h->name;
	v.users = x->h->users;
	v.users_total = users_total;
	v.step = st->step->n;
	v.steps = (unsigned)R->ramp.n;
	v.duration = pb->driver.duration;
	v.warmup = pb->driver.warmup;
	v.results = results;
	v.password_file = pwfile;
	v.clients = clients.data ? clients.data : "";
	r = pv_buf_failed(&clients) ? pv_error(PV_EIO, "out of memory")
	    : pv_driver_render(pb,
			       x->h->controller ? pb->driver.controller_command
						: pb->driver.client_command,
			       &v, &x->cmd, &x->password);
	if (r == PV_OK && pv_buf_failed(&x->cmd))
		r = pv_error(PV_EIO, "out of memory");
	pv_buf_release(&clients, 0);
	return r;
}

/* The users' password where the local controller's command reads it: a private folder. */
static int local_password(struct run *R)
{
	char path[128];
	int fd, r = PV_OK;

	if (R->local_pw_written)
		return PV_OK;
	snprintf(path, sizeof(path), "%s/password", R->local_pw);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, R->password->data, R->password->len) != (ssize_t)R->password->len ||
	    write(fd, "\n", 1) != 1)
		r = pv_error(PV_EIO, "cannot write %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	R->local_pw_written = r == PV_OK;
	return r;
}

static void step_watch(struct run *R, struct steprun *st, double t0, double t1)
{
	const struct pv_driver *d = &R->pb->driver;
	struct pv_watch_sample *s = NULL;
	struct pv_buf csv = PV_BUF_INIT;
	struct pv_json *o, *m;
	size_t n = 0, from = 0;
	char *text;
	int r;

	if (!R->watch)
		return;
	r = pv_watch_window(R->watch, t0, t1, &s, &n);
	if (r != PV_OK && !R->res->watch_error[0])
		snprintf(R->res->watch_error, sizeof(R->res->watch_error), "%s", pv_errmsg());
	while (from < n && s[from].t < t0 + d->warmup)
		from++;
	st->step->samples = n - from;
	pv_watch_summarize(s + from, n - from, st->step->watch);
	if (pv_watch_csv(s, n, t0, t0 + d->warmup, &csv) == PV_OK)
		r = pv_run_sink_write(&R->sink, st->rel, "watch.csv", csv.data, csv.len, false);
	o = pv_json_object();
	pv_json_int(o, "samples", (long long)(n - from));
	pv_json_int(o, "interval", d->watch);
	for (int i = 0; i < PV_W_COUNT; i++) {
		m = pv_json_object();
		pv_json_real(m, "mean", st->step->watch[i].mean);
		pv_json_real(m, "p95", st->step->watch[i].p95);
		pv_json_real(m, "max", st->step->watch[i].max);
		pv_json_set(o, pv_watch_names[i], m);
	}
	/* each interface: mean and max over the measured samples that have it */
	m = pv_json_object();
	for (size_t i = from; i < n; i++)
		for (unsigned j = 0; j < s[i].nifs; j++) {
			const char *name = s[i].ifs[j].name;
			double rx = 0, tx = 0, rxm = 0, txm = 0;
			size_t k = 0, seen = 0;

			for (size_t i2 = from; i2 < i && !seen; i2++) /* done already */
				for (unsigned j2 = 0; j2 < s[i2].nifs; j2++)
					seen += strcmp(s[i2].ifs[j2].name, name) == 0;
			if (seen)
				continue;
			for (size_t i2 = i; i2 < n; i2++)
				for (unsigned j2 = 0; j2 < s[i2].nifs; j2++)
					if (strcmp(s[i2].ifs[j2].name, name) == 0) {
						const struct pv_watch_if *f = &s[i2].ifs[j2];

						rx += f->rx;
						tx += f->tx;
						rxm = f->rx > rxm ? f->rx : rxm;
						txm = f->tx > txm ? f->tx : txm;
						k++;
					}
			{
				struct pv_json *f = pv_json_object();

				pv_json_real(f, "rx_mean", rx / (double)k);
				pv_json_real(f, "rx_max", rxm);
				pv_json_real(f, "tx_mean", tx / (double)k);
				pv_json_real(f, "tx_max", txm);
				pv_json_set(m, name, f);
			}
		}
	pv_json_set(o, "interfaces", m);
	if ((text = pv_json_pretty(o)) != NULL)
		pv_run_sink_write(&R->sink, st->rel, "watch.json", text, strlen(text), false);
	free(text);
	pv_json_free(o);
	pv_buf_release(&csv, 0);
	free(s);
}

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_step(struct run *R, size_t si)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_run_step *step = &R->res->steps[si];
	struct steprun st;
	struct pv_progress prog;
	size_t nh = pb->nclients + (pb->driver.controller_command ? 1 : 0);
	double t0, end, cpu_at = 0, cpu = -1;
	int r = PV_OK, code = PV_OK;
	size_t failed = 0, lost = 0;

	memset(&st, 0, sizeof(st));
	st.run = R;
	st.step = step;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	step->n = (unsigned)si + 1;
	step->users = R->ramp.totals[si];
	snprintf(st.rel, sizeof(st.rel), "step-%02u", step->n);
	step->hosts = calloc(nh, sizeof(*step->hosts));
	st.hr = calloc(nh, sizeof(*st.hr));
	if (!step->hosts || !st.hr) {
		free(st.hr);
		return pv_error(PV_EIO, "out of memory");
	}
	step->nhosts = st.n = nh;
	for (size_t i = 0; i < nh; i++) {
		struct hostrun *x = &st.hr[i];
		struct pv_run_host *h = &step->hosts[i];

		x->st = &st;
		x->h = h;
		h->exit = -1;
		if (i < pb->nclients) {
			h->name = pb->clients[i].name;
			h->users = pv_ramp_share(step->users, pb->nclients, i);
			x->host = &pb->clients[i];
			x->rem = R->rems[i];
		} else {
			h->name = "controller";
			h->controller = true;
			x->host = pb->controller.host.name ? &pb->controller.host : NULL;
			x->rem = R->ctl_rem;
		}
		if (R->builtin && !h->controller) {
			snprintf(x->base, sizeof(x->base), "%s-%s", R->base, h->name);
			r = pv_run_builtin_render(R, x, &x->input);
		} else {
			r = render(R, &st, x, step->users);
		}
		if (r != PV_OK)
			goto out;
		if (x->password && !x->host && (r = local_password(R)) != PV_OK)
			goto out;
	}
	if ((r = pv_run_sink_mkdir(&R->sink, st.rel)) != PV_OK)
		goto out;
	pv_log(PV_LOG_INFO, "run: step %u/%zu: %u users on %zu clients", step->n, R->ramp.n,
	       step->users, pb->nclients);
	/* clients first, all at once; the controller once they run */
	step->start = wall();
	for (size_t i = 0; i < nh; i++) {
		struct hostrun *x = &st.hr[i];

		if (x->h->controller) {
			bool waiting = true;

			pthread_mutex_lock(&st.lock);
			while (waiting) {
				waiting = false;
				for (size_t j = 0; j < pb->nclients; j++)
					if (!st.hr[j].running && !st.hr[j].ended)
						waiting = true;
				if (waiting)
					pthread_cond_wait(&st.cond, &st.lock);
			}
			pthread_mutex_unlock(&st.lock);
		}
		x->last_seen = pv_now();
		x->thread_ok =
			pthread_create(&x->thread, NULL,
				       R->builtin && !x->h->controller ? pv_run_builtin_host
				       : x->host			  ? remote_host
									  : local_host,
				       x) == 0;
		if (!x->thread_ok)
			pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, PV_EIO, "cannot start a thread");
	}
	if (R->builtin) {
		/* every client logs its users on and says ready; then all go at once */
		pv_progress_start(&prog, "run", "users", step->users);
		pthread_mutex_lock(&st.lock);
		while (!pv_run_builtin_all_ready(&st) && !pv_env_stopped(R->env) &&
		       !(R->deadline && pv_now() >= R->deadline)) {
			struct timespec ts;
			unsigned ready = 0;

			for (size_t i = 0; i < nh; i++)
				ready += st.hr[i].ready ? st.hr[i].connected + st.hr[i].failed : 0;
			pthread_mutex_unlock(&st.lock);
			pv_progress_detail(&prog, "step %u/%zu, %u users: %u logged on", step->n,
					   R->ramp.n, step->users, ready);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += SLICE_MS * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_mutex_lock(&st.lock);
			pthread_cond_timedwait(&st.cond, &st.lock, &ts);
		}
		st.go = true;
		st.go_at = pv_now();
		for (size_t i = 0; i < nh; i++)
			if (st.hr[i].ready && st.hr[i].failed)
				pv_log(PV_LOG_WARN, "run: step %u: %s: %u of its users could not log on "
						    "(%s)",
				       step->n, st.hr[i].h->name, st.hr[i].failed, st.hr[i].ready_error);
		pthread_mutex_unlock(&st.lock);
		pv_progress_end(&prog);
		step->start = wall();
	}
	t0 = pv_now();
	end = t0 + pb->driver.warmup + pb->driver.duration + (R->builtin ? 10 : 0);
	pv_progress_start(&prog, "run", "s", (unsigned long)(end - t0));
	for (;;) {
		double now = pv_now();
		bool all_ended = true, any_lost = false, any_failed = false;

		pthread_mutex_lock(&st.lock);
		for (size_t i = 0; i < nh; i++) {
			all_ended &= st.hr[i].ended || !st.hr[i].thread_ok;
			any_lost |= st.hr[i].silent || st.hr[i].h->state == PV_RUN_LOST;
			any_failed |= st.hr[i].h->state == PV_RUN_FAILED ||
				      (st.hr[i].ended && st.hr[i].h->state == PV_RUN_NOT_STARTED);
		}
		if (pv_env_stopped(R->env)) {
			step->ended = "stopped";
			code = PV_ESTOPPED;
		} else if (R->deadline && now >= R->deadline) {
			step->ended = "timeout";
			code = PV_ETIMEOUT;
		} else if (any_lost) {
			step->ended = "host lost";
		} else if (any_failed) {
			step->ended = "command failed";
		} else if (all_ended) {
			step->ended = "commands ended";
		} else if (now >= end) {
			step->ended = "duration";
		}
		if (step->ended)
			st.over = true;
		pthread_mutex_unlock(&st.lock);
		if (step->ended)
			break;
		if (R->watch && now - cpu_at >= 1) {
			struct pv_watch_sample *s = NULL;
			size_t n = 0;

			pv_watch_window(R->watch, now - 3.0 * pb->driver.watch, now, &s, &n);
			cpu = n ? s[n - 1].v[PV_W_CPU] : -1;
			cpu_at = now;
			free(s);
		}
		if (cpu >= 0)
			pv_progress_detail(&prog, "step %u/%zu, %u users: %.0f/%.0f s, server CPU %.0f%%",
					   step->n, R->ramp.n, step->users, now - t0, end - t0, cpu);
		else
			pv_progress_detail(&prog, "step %u/%zu, %u users: %.0f/%.0f s", step->n,
					   R->ramp.n, step->users, now - t0, end - t0);
		usleep(SLICE_MS * 1000);
	}
	pv_log(PV_LOG_INFO, "run: step %u ends (%s): stopping the commands and gathering results",
	       step->n, step->ended);
	for (size_t i = 0; i < nh; i++)
		if (st.hr[i].thread_ok)
			pthread_join(st.hr[i].thread, NULL);
	pv_progress_end(&prog);
	step->end = wall();
	step_watch(R, &st, t0, pv_now());
	if (R->builtin)
		pv_run_builtin_step_end(R, &st);
	for (size_t i = 0; i < nh; i++) {
		struct pv_run_host *h = &step->hosts[i];

		lost += h->state == PV_RUN_LOST;
		failed += h->state == PV_RUN_FAILED || h->state == PV_RUN_NOT_STARTED;
		if (h->code != PV_OK)
			pv_log(PV_LOG_WARN, "run: step %u: %s: %s", step->n, h->name, h->msg);
	}
	if (code == PV_OK && lost)
		code = PV_EPARTIAL;
	if (code == PV_OK && failed)
		code = failed == nh ? PV_EREMOTE : PV_EPARTIAL;
	if (code == PV_OK) {
		for (size_t i = 0; i < nh; i++)
			if (step->hosts[i].code != PV_OK) /* results not gathered */
				code = step->hosts[i].code;
	}
	r = code;
	if (r == PV_ESTOPPED)
		r = pv_error(r, "run stopped (Ctrl-C or SIGTERM) during step %u: every command was "
				"stopped; the results so far are in %s",
			     step->n, R->sink.path);
	else if (r == PV_ETIMEOUT)
		r = pv_error(r, "the run's timeout (driver.timeout, --timeout: %d s) passed during "
				"step %u: every command was stopped; the results so far are in %s",
			     pb->driver.timeout, step->n, R->sink.path);
	else if (r != PV_OK) {
		for (size_t i = 0; i < nh; i++)
			if (step->hosts[i].code != PV_OK) {
				r = pv_error(r, "step %u: %s: %s%s; the results so far are in %s",
					     step->n, step->hosts[i].name, step->hosts[i].msg,
					     lost ? " (the other hosts were stopped)" : "",
					     R->sink.path);
				break;
			}
	}
out:
	for (size_t i = 0; i < nh; i++) {
		pv_buf_release(&st.hr[i].cmd, 0);
		pv_buf_release(&st.hr[i].input, 1);
		pv_buf_release(&st.hr[i].lines, 0);
		free(st.hr[i].iv);
	}
	free(st.hr);
	pthread_mutex_destroy(&st.lock);
	pthread_cond_destroy(&st.cond);
	return r;
}

/* ---- the manifest ---- */

static void iso(double t, char out[40])
{
	time_t s = (time_t)t;
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 40 - n, ".%03dZ", (int)((t - (double)s) * 1000));
}

static void time_field(struct pv_json *o, const char *key, double t)
{
	char s[40];

	if (t <= 0) {
		pv_json_str(o, key, NULL);
		return;
	}
	iso(t, s);
	pv_json_str(o, key, s);
}

struct pv_json *pv_run_step_json(const struct pv_run_step *s)
{
	struct pv_json *st = pv_json_object(), *hs = pv_json_array(), *w = pv_json_object(), *o;

	pv_json_int(st, "step", s->n);
	pv_json_int(st, "users", s->users);
	time_field(st, "start", s->start);
	time_field(st, "end", s->end);
	pv_json_real(st, "seconds", s->end - s->start);
	pv_json_str(st, "ended", s->ended);
	for (size_t j = 0; j < s->nhosts; j++) {
		const struct pv_run_host *h = &s->hosts[j];

		o = pv_json_object();
		pv_json_str(o, "name", h->name);
		pv_json_str(o, "role", h->controller ? "controller" : "client");
		if (!h->controller)
			pv_json_int(o, "users", h->users);
		pv_json_str(o, "state", pv_run_state_name(h->state));
		if (h->exit >= 0)
			pv_json_int(o, "exit", h->exit);
		else
			pv_json_str(o, "exit", NULL);
		pv_json_str(o, "error", h->code != PV_OK ? h->msg : NULL);
		pv_json_int(o, "files", (long long)h->files);
		pv_json_int(o, "bytes", (long long)h->bytes);
		pv_json_append(hs, o);
	}
	pv_json_set(st, "hosts", hs);
	pv_json_int(w, "samples", (long long)s->samples);
	for (int k = 0; k < PV_W_COUNT && s->samples; k++) {
		o = pv_json_object();
		pv_json_real(o, "mean", s->watch[k].mean);
		pv_json_real(o, "p95", s->watch[k].p95);
		pv_json_real(o, "max", s->watch[k].max);
		pv_json_set(w, pv_watch_names[k], o);
	}
	pv_json_set(st, "watch", w);
	if (s->has_load) {
		const struct pv_load_summary *l = &s->load;

		o = pv_json_object();
		pv_json_real(o, "scenarios_per_second", l->rate);
		pv_json_real(o, "expected", l->expected);
		pv_json_int(o, "started", (long long)l->all.started);
		pv_json_int(o, "completed", (long long)l->all.completed);
		pv_json_int(o, "errors", (long long)l->all.errors);
		pv_json_real(o, "overload", l->all.overload);
		pv_json_real(o, "median", l->all.lat.median);
		pv_json_real(o, "p95", l->all.lat.p95);
		pv_json_real(o, "max", l->all.lat.max);
		pv_json_int(o, "connected", l->connected);
		pv_json_int(o, "failed", l->failed);
		pv_json_int(o, "clients_lost", l->lost);
		pv_json_set(st, "load", o);
	}
	if (s->drained) {
		o = pv_json_object();
		pv_json_real(o, "seconds", s->drain_seconds);
		pv_json_int(o, "first", s->drain_first);
		pv_json_int(o, "peak", s->drain_peak);
		pv_json_set(st, "drain", o);
	} else {
		pv_json_str(st, "drain", NULL);
	}
	return st;
}

static struct pv_json *manifest(struct run *R, const char *status, int code, const char *msg)
{
	const struct pv_playbook *pb = R->pb;
	const struct pv_run_result *res = R->res;
	struct pv_json *m = pv_json_object(), *o, *a;

	pv_json_int(m, "manifest_version", 1);
	pv_json_str(m, "provision", PV_VERSION);
	pv_json_str(m, "run_id", res->id);
	pv_json_str(m, "lab", pb->lab);
	o = pv_json_object();
	pv_json_str(o, "path", pb->path);
	pv_json_str(o, "sha256", res->digest[0] ? res->digest : NULL);
	pv_json_set(m, "playbook", o);
	pv_json_str(m, "status", status);
	pv_json_int(m, "exit_code", code);
	pv_json_str(m, "error", code != PV_OK ? msg : NULL);
	time_field(m, "started", R->wall0);
	time_field(m, "ended", strcmp(status, "running") ? wall() : 0);
	o = pv_json_object();
	pv_json_str(o, "name", res->driver);
	pv_json_int(o, "min_users", pb->driver.min_users);
	pv_json_int(o, "max_users", pb->driver.max_users);
	pv_json_int(o, "step", pb->driver.step);
	pv_json_int(o, "duration", pb->driver.duration);
	pv_json_int(o, "warmup", pb->driver.warmup);
	pv_json_int(o, "timeout", pb->driver.timeout);
	pv_json_str(o, "client_command", pb->driver.client_command);
	pv_json_str(o, "controller_command", pb->driver.controller_command);
	a = pv_json_array();
	for (size_t i = 0; i < R->ramp.n; i++) {
		struct pv_json *n = pv_json_object();

		pv_json_int(n, "users", R->ramp.totals[i]);
		pv_json_append(a, n);
	}
	pv_json_set(o, "steps", a);
	pv_json_set(m, "driver", o);
	a = pv_json_array();
	if (pb->has_server) {
		o = pv_json_object();
		pv_json_str(o, "name", pb->server.host.name);
		pv_json_str(o, "role", "server");
		pv_json_str(o, "address", pb->server.host.address);
		pv_json_str(o, "version", R->server_system[0] ? R->server_system : NULL);
		pv_json_append(a, o);
	}
	for (size_t i = 0; i < pb->nclients; i++) {
		o = pv_json_object();
		pv_json_str(o, "name", pb->clients[i].name);
		pv_json_str(o, "role", "client");
		pv_json_str(o, "address", pb->clients[i].address);
		pv_json_str(o, "version", R->system && R->system[i][0] ? R->system[i] : NULL);
		pv_json_append(a, o);
	}
	o = pv_json_object();
	pv_json_str(o, "name", pb->controller.host.name ? pb->controller.host.name : "local");
	pv_json_str(o, "role", "controller");
	pv_json_str(o, "results", res->folder);
	pv_json_append(a, o);
	pv_json_set(m, "hosts", a);
	o = pv_json_object();
	pv_json_int(o, "interval", R->watch || res->watch_error[0] ? pb->driver.watch : 0);
	pv_json_str(o, "error", res->watch_error[0] ? res->watch_error : NULL);
	pv_json_set(m, "watch", o);
	a = pv_json_array();
	for (size_t i = 0; i < res->nsteps; i++)
		pv_json_append(a, pv_run_step_json(&res->steps[i]));
	pv_json_set(m, "steps", a);
	return m;
}

static int write_manifest(struct run *R, const char *status, int code, const char *msg)
{
	struct pv_json *m = manifest(R, status, code, msg);
	char *text = pv_json_pretty(m);
	int r;

	r = text ? pv_run_sink_write(&R->sink, "", "manifest.json", text, strlen(text), true)
		 : pv_error(PV_EIO, "out of memory");
	free(text);
	pv_json_free(m);
	return r;
}

/* ---- the run ---- */

/* After step si: wait until the server's queue has drained (drain:, between_steps), within
 * what is left of the run's timeout. */
static int drain_between(struct run *R, size_t si)
{
	struct pv_run_step *step = &R->res->steps[si];
	struct pv_drain d = R->pb->drain;
	struct pv_drain_result dr;
	int r;

	if (R->deadline) {
		double left = R->deadline - pv_now();

		if (left < 1)
			left = 1;
		if (left < d.timeout)
			d.timeout = (int)left;
	}
	pv_log(PV_LOG_INFO, "run: waiting for the server to drain after step %u (%s probe)",
	       step->n, pv_drain_probe_name(d.probe));
	memset(&dr, 0, sizeof(dr));
	r = pv_drain_wait(R->env, &d, &dr);
	step->drained = dr.polls > 0;
	step->drain_seconds = dr.seconds;
	step->drain_first = dr.first;
	step->drain_peak = dr.peak;
	if (r != PV_OK)
		r = pv_error_prefix(r, "after step %u, waiting for the server to drain (the results "
				       "so far are in %s)",
				    step->n, R->sink.path);
	return r;
}

static int check_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 63 || id[0] == '.' || id[0] == '-' ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		return pv_error(PV_EUSAGE, "run id '%s' cannot name a folder: use 1 to 63 letters, "
					   "digits, '.', '_' or '-', not starting with '.' or '-'",
				id);
	return PV_OK;
}

/* The run's folder, new, below controller.results. */
static int open_sink(struct run *R, const char *id, bool given)
{
	const struct pv_playbook *pb = R->pb;
	struct sink *k = &R->sink;
	const char *results = pb->controller.results;
	int r;

	pthread_mutex_init(&k->lock, NULL);
	k->fd = -1;
	for (int attempt = 1; attempt <= 9; attempt++) {
		char name[64];

		snprintf(name, sizeof(name), attempt > 1 ? "%s-%d" : "%s", id, attempt);
		snprintf(k->path, sizeof(k->path), "%s/%s", results, name);
		if (!k->rem) {
			int top = open(results, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			if (top < 0)
				return pv_error(errno == ENOENT ? PV_EIO : PV_EIO,
						"the controller's results folder %s: %s; make it with "
						"'provision prepare controller'",
						results, strerror(errno));
			r = mkdirat(top, name, 0755) == 0 ? PV_OK : -errno;
			if (r == PV_OK)
				k->fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(top);
			if (r == -EEXIST && !given)
				continue;
			if (r != PV_OK)
				return pv_error(PV_EIO, "cannot make %s: %s%s", k->path, strerror(-r),
						r == -EEXIST ? " (choose another --id)" : "");
			if (k->fd < 0)
				return pv_error(PV_EIO, "%s: %s", k->path, strerror(errno));
		} else {
			struct pv_buf sc = PV_BUF_INIT, err = PV_BUF_INIT;
			int status = 0;

			pv_remote_var(&sc, "d", results);
			pv_remote_var(&sc, "n", name);
			pv_buf_addstr(&sc, "[ -d \"$d\" ] || { echo \"no folder $d\" >&2; exit 2; }\n"
					   "mkdir -m 0755 -- \"$d/$n\" 2>/dev/null || exit 17\n");
			r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
					       : pv_remote_exec(k->rem, sc.data, NULL, 0, NULL, &err,
								&status, 0);
			pv_buf_release(&sc, 0);
			if (r == PV_OK && status == 17 && !given) {
				pv_buf_release(&err, 0);
				continue;
			}
			if (r == PV_OK && status != 0)
				r = pv_error(PV_EREMOTE, "cannot make %s on the controller '%s': %s",
					     k->path, pv_remote_name(k->rem),
					     status == 17 ? "it exists (choose another --id)"
							  : err.len ? err.data : "failed");
			pv_buf_release(&err, 0);
			if (r != PV_OK)
				return r;
		}
		snprintf(R->res->id, sizeof(R->res->id), "%s", name);
		snprintf(R->res->folder, sizeof(R->res->folder), "%s", k->path);
		return PV_OK;
	}
	return pv_error(PV_EIO, "%s/%s already exists, and so do the next 8 names", results, id);
}

struct connect_ctx {
	struct run *R;
};

static int connect_client(const struct pv_host *host, size_t i, void *arg)
{
	struct run *R = ((struct connect_ctx *)arg)->R;
	struct pv_buf out = PV_BUF_INIT;
	int status = 0, r;

	if ((r = pv_remote_connect(host, &R->rems[i])) != PV_OK)
		return r;
	/* the client's system for the manifest, and perl for the run's wrapper */
	r = pv_remote_exec(R->rems[i], "uname -sr; command -v perl >/dev/null || echo no-perl",
			   NULL, 0, &out, NULL, &status, 0);
	if (r == PV_OK && out.data && strstr(out.data, "no-perl"))
		r = pv_error(PV_EREMOTE, "'%s' has no perl, which the run's wrapper needs: install "
					 "it (Debian: perl-base)",
			     host->name);
	if (r == PV_OK && out.data)
		snprintf(R->system[i], sizeof(R->system[i]), "%.*s", (int)strcspn(out.data, "\n"),
			 out.data);
	pv_buf_release(&out, 0);
	return r;
}

static int connect_all(struct run *R)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_fanout_result *fr = calloc(pb->nclients, sizeof(*fr));
	struct connect_ctx c = {R};
	int r;

	R->rems = calloc(pb->nclients, sizeof(*R->rems));
	R->system = calloc(pb->nclients, sizeof(*R->system));
	if (!fr || !R->rems || !R->system) {
		free(fr);
		return pv_error(PV_EIO, "out of memory");
	}
	r = pv_remote_fanout(pb->clients, pb->nclients, 0, connect_client, &c, fr);
	for (size_t i = 0; i < pb->nclients && r != PV_OK; i++)
		if (fr[i].code != PV_OK) {
			r = pv_error(fr[i].code, "%s; nothing was started", fr[i].msg);
			break;
		}
	free(fr);
	if (r == PV_OK && pb->has_server) {
		struct pv_remote *srv = NULL;
		struct pv_buf out = PV_BUF_INIT;
		int status = 0;

		/* only for the manifest: a server that cannot say is not an error here */
		if (pv_remote_connect(&pb->server.host, &srv) == PV_OK &&
		    pv_remote_exec(srv, "smbd --version 2>/dev/null; uname -sr", NULL, 0, &out, NULL,
				   &status, 0) == PV_OK &&
		    out.data) {
			for (char *c2 = out.data; *c2; c2++)
				if (*c2 == '\n' && c2[1])
					*c2 = ';';
			snprintf(R->server_system, sizeof(R->server_system), "%.*s",
				 (int)strcspn(out.data, "\n"), out.data);
		}
		pv_remote_free(srv);
		pv_buf_release(&out, 0);
	}
	return r;
}

/* The run's folder on a host, gone (a folder of ours, not a link). */
static void cleanup_host(struct run *R, struct pv_remote *rem, const char *name)
{
	struct pv_buf sc = PV_BUF_INIT;
	char base[256];

	snprintf(base, sizeof(base), "%s-%s", R->base, name);
	pv_remote_var(&sc, "b", base);
	pv_buf_addstr(&sc, "[ -d \"$b\" ] && [ ! -L \"$b\" ] && rm -rf -- \"$b\"; exit 0\n");
	if (rem && !pv_buf_failed(&sc))
		pv_remote_exec(rem, sc.data, NULL, 0, NULL, NULL, NULL, 30);
	pv_buf_release(&sc, 0);
}

static void cleanup_hosts(struct run *R)
{
	for (size_t i = 0; R->base[0] && R->rems && i < R->pb->nclients; i++)
		cleanup_host(R, R->rems[i], R->pb->clients[i].name);
	if (R->base[0] && R->ctl_rem)
		cleanup_host(R, R->ctl_rem, "controller");
	if (R->local_pw[0]) {
		char path[128];

		snprintf(path, sizeof(path), "%s/password", R->local_pw);
		unlink(path);
		rmdir(R->local_pw);
	}
}

static void dry_run(struct run *R)
{
	const struct pv_playbook *pb = R->pb;

	snprintf(R->base, sizeof(R->base), "/tmp/provision-run-%s-%s", pb->lab, R->res->id);
	snprintf(R->sink.path, sizeof(R->sink.path), "%s/%s", pb->controller.results, R->res->id);
	snprintf(R->local_pw, sizeof(R->local_pw), "/tmp/provision-pw.XXXXXX");
	snprintf(R->res->folder, sizeof(R->res->folder), "%s", R->sink.path);
	pv_plan_add(&R->res->plan, "make the run's folder %s on the controller (%s)", R->sink.path,
		    R->res->controller);
	if (pb->driver.kind == PV_DRIVER_BUILTIN) {
		for (size_t i = 0; i < pb->nclients; i++)
			pv_plan_add(&R->res->plan,
				    "copy provision to %s:/var/tmp/provision-<its digest>/provision "
				    "unless that build is there",
				    pb->clients[i].name);
		for (size_t si = 0; si < R->ramp.n; si++)
			for (size_t i = 0; i < pb->nclients; i++) {
				unsigned n = pv_ramp_share(R->ramp.totals[si], pb->nclients, i);
				char first[PV_NAME_MAX] = "", last[PV_NAME_MAX] = "";

				pv_user_name(pb, &pb->clients[i], 1, first);
				pv_user_name(pb, &pb->clients[i], n, last);
				pv_plan_add(&R->res->plan,
					    "run provision load on %s in step %zu/%zu (%u users): %s..%s, "
					    "each through its own alias, for %d + %d s",
					    pb->clients[i].name, si + 1, R->ramp.n, n, first, last,
					    pb->driver.warmup, pb->driver.duration);
			}
		return;
	}
	if (pb->driver.kind == PV_DRIVER_FSCT) {
		struct pv_buf ps = PV_BUF_INIT;
		const char *ctl = pb->controller.host.name ? pb->controller.host.name : "localhost";

		/* FSCT runs the whole ramp itself: its clients wait for its controller */
		for (size_t i = 0; i < pb->nclients; i++) {
			pv_buf_reset(&ps);
			if (pv_fsct_client(pb, ctl, &ps) == PV_OK)
				pv_plan_add(&R->res->plan,
					    "run on %s (Windows, OpenSSH; the password on stdin): %s",
					    pb->clients[i].name, ps.data);
			else
				pv_plan_add(&R->res->plan, "on %s: cannot render: %s",
					    pb->clients[i].name, pv_errmsg());
		}
		pv_buf_reset(&ps);
		if (pv_fsct_controller(pb, &ps) == PV_OK)
			pv_plan_add(&R->res->plan,
				    "then run on the controller %s (the password on stdin): %s", ctl,
				    ps.data);
		else
			pv_plan_add(&R->res->plan, "on the controller: cannot render: %s",
				    pv_errmsg());
		pv_buf_release(&ps, 0);
		return;
	}
	if (pb->has_drain && pb->drain.between_steps) {
		struct pv_plan d;

		memset(&d, 0, sizeof(d));
		pv_drain_plan(pb, &pb->drain, &d);
		for (size_t i = 0; i < d.n; i++)
			pv_plan_add(&R->res->plan, "%s (between steps)", d.items[i]);
		pv_plan_release(&d);
	}
	for (size_t si = 0; si < R->ramp.n; si++) {
		struct pv_run_step step;
		struct steprun st;

		memset(&step, 0, sizeof(step));
		memset(&st, 0, sizeof(st));
		step.n = (unsigned)si + 1;
		step.users = R->ramp.totals[si];
		st.run = R;
		st.step = &step;
		snprintf(st.rel, sizeof(st.rel), "step-%02u", step.n);
			for (size_t i = 0; i <= pb->nclients; i++) {
			struct pv_run_host h;
			struct hostrun x;
			char who[PV_NAME_MAX + 32];

			if (i == pb->nclients && !pb->driver.controller_command)
				break;
			memset(&h, 0, sizeof(h));
			memset(&x, 0, sizeof(x));
			x.st = &st;
			x.h = &h;
			if (i < pb->nclients) {
				h.name = pb->clients[i].name;
				h.users = pv_ramp_share(step.users, pb->nclients, i);
				x.host = &pb->clients[i];
			} else {
				h.name = "controller";
				h.controller = true;
				x.host = pb->controller.host.name ? &pb->controller.host : NULL;
			}
			snprintf(who, sizeof(who), h.controller ? "%s" : "%s (%u users)", h.name,
				 h.users);
			if (render(R, &st, &x, step.users) == PV_OK)
				pv_plan_add(&R->res->plan, "run on %s in step %u/%zu (%u users): %s",
					    who, step.n, R->ramp.n, step.users, x.cmd.data);
			else
				pv_plan_add(&R->res->plan, "step %u on %s: cannot render: %s", step.n,
					    h.name, pv_errmsg());
			pv_buf_release(&x.cmd, 0);
		}
	}
}

int pv_run(const struct pv_env *env, const struct pv_run_opts *o, struct pv_run_result *res)
{
	const struct pv_playbook *pb = env->pb;
	const struct pv_driver *d = &pb->driver;
	struct run R;
	char id[64], msg[1024] = "";
	double t0 = pv_now();
	int r, wr;

	memset(res, 0, sizeof(*res));
	memset(&R, 0, sizeof(R));
	R.env = env;
	R.pb = pb;
	R.res = res;
	R.sink.fd = -1;
	res->driver = d->name ? d->name : "command";
	res->controller = pb->controller.host.name ? pb->controller.host.name : "local";
	if ((r = pv_ramp_plan(pb, &R.ramp)) != PV_OK)
		return r;
	res->planned = R.ramp.n;
	R.builtin = d->kind == PV_DRIVER_BUILTIN;
	if (R.builtin && !pb->has_server) {
		r = pv_error(PV_ECONFIG, "driver 'builtin' loads the playbook's server: add a "
					 "'server:' section");
		goto out;
	}
	if (d->kind == PV_DRIVER_FSCT && !env->dry_run) {
		r = pv_error(PV_ENOTIMPL,
			     "driver 'fsct' is rendered, not run, by provision %s: see the commands "
			     "with --dry-run and run them on the Windows hosts",
			     PV_VERSION);
		goto out;
	}
	if (d->kind == PV_DRIVER_COMMAND && !d->client_command) {
		r = pv_error(PV_ECONFIG, "driver.client_command is not set: the command driver "
					 "needs the command each client runs (see docs/playbook.md)");
		goto out;
	}
	if (pb->has_drain && pb->drain.between_steps &&
	    (r = pv_drain_check(pb, &pb->drain)) != PV_OK) {
		r = pv_error_prefix(r, "drain.between_steps is set, but");
		goto out;
	}
	if (!pb->has_controller || !pb->controller.results) {
		r = pv_error(PV_ECONFIG, "a run gathers its results into controller.results: add a "
					 "'controller:' section with results: FOLDER");
		goto out;
	}
	if (o && o->id) {
		if ((r = check_id(o->id)) != PV_OK)
			goto out;
		snprintf(id, sizeof(id), "%s", o->id);
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(id, sizeof(id), "%Y%m%d-%H%M%S", &tm);
	}
	snprintf(res->id, sizeof(res->id), "%s", id);
	if (env->dry_run) {
		dry_run(&R);
		r = PV_OK;
		goto out;
	}
	if ((res->steps = calloc(R.ramp.n, sizeof(*res->steps))) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if (pb->path && *pb->path) {
		struct pv_buf f = PV_BUF_INIT;
		FILE *fp = fopen(pb->path, "rb");
		char chunk[8192];
		size_t n;

		if (fp) {
			while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
				pv_buf_add(&f, chunk, n);
			if (!ferror(fp) && !pv_buf_failed(&f))
				pv_sha256_hex(f.data ? f.data : "", f.len, res->digest);
			fclose(fp);
		}
		pv_buf_release(&f, 0);
	}
	if (R.builtin || (d->client_command && strstr(d->client_command, "{password_file}")) ||
	    (d->controller_command && strstr(d->controller_command, "{password_file}"))) {
		if ((r = pv_env_secret(env, PV_CRED_USERS, &R.password)) != PV_OK)
			goto out;
	}
	if ((r = connect_all(&R)) != PV_OK)
		goto out;
	if (R.builtin && (r = pv_run_builtin_prepare(&R)) != PV_OK)
		goto out;
	if (pb->controller.host.name &&
	    (r = pv_remote_connect(&pb->controller.host, &R.ctl_rem)) != PV_OK)
		goto out;
	R.sink.rem = R.ctl_rem;
	if ((r = open_sink(&R, id, o && o->id)) != PV_OK)
		goto out;
	snprintf(R.base, sizeof(R.base), "/tmp/provision-run-%s-%s", pb->lab, res->id);
	if (d->controller_command && !pb->controller.host.name) {
		snprintf(R.local_pw, sizeof(R.local_pw), "/tmp/provision-pw.XXXXXX");
		if (!mkdtemp(R.local_pw)) {
			R.local_pw[0] = '\0';
			r = pv_error(PV_EIO, "cannot make a private folder in /tmp: %s",
				     strerror(errno));
			goto out;
		}
	}
	R.wall0 = wall();
	if (d->watch > 0 && pb->has_server && pv_watch_start(env, d->watch, &R.watch) != PV_OK) {
		snprintf(res->watch_error, sizeof(res->watch_error), "%s", pv_errmsg());
		pv_log(PV_LOG_WARN, "run: the server is not watched: %s", res->watch_error);
	}
	R.lost_after = pb->clients[0].ssh.timeout > 0 ? pb->clients[0].ssh.timeout : 10;
	if (R.lost_after < 3 * HEARTBEAT)
		R.lost_after = 3 * HEARTBEAT;
	R.deadline = d->timeout > 0 ? t0 + d->timeout : 0;
	if ((r = write_manifest(&R, "running", PV_OK, NULL)) != PV_OK)
		goto out;
	for (size_t si = 0; si < R.ramp.n && r == PV_OK; si++) {
		r = run_step(&R, si);
		res->nsteps = si + 1;
		if (r == PV_OK && si + 1 < R.ramp.n && pb->has_drain && pb->drain.between_steps)
			r = drain_between(&R, si);
		if (r != PV_OK)
			snprintf(msg, sizeof(msg), "%s", pv_errmsg());
		if (r == PV_OK && si + 1 < R.ramp.n && pv_env_stopped(env))
			r = pv_error(PV_ESTOPPED, "run stopped (Ctrl-C or SIGTERM) after step %zu; "
						  "the results so far are in %s",
				     si + 1, R.sink.path);
		wr = write_manifest(&R, "running", PV_OK, NULL);
		if (r == PV_OK)
			r = wr;
	}
	if (R.builtin) {
		int br = pv_run_builtin_report(&R);

		if (r == PV_OK)
			r = br;
	}
	if (r != PV_OK && !msg[0])
		snprintf(msg, sizeof(msg), "%s", pv_errmsg());
out:
	if (R.watch) {
		int w = pv_watch_stop(R.watch);

		if (w != PV_OK && !res->watch_error[0])
			snprintf(res->watch_error, sizeof(res->watch_error), "%s", pv_errmsg());
	}
	if (!env->dry_run)
		cleanup_hosts(&R);
	if (R.sink.path[0] && res->folder[0] && !env->dry_run) {
		static const char *const status[] = {
			[PV_OK] = "done", [PV_EPARTIAL] = "partial", [PV_ETIMEOUT] = "timeout",
			[PV_ESTOPPED] = "stopped"};
		const char *s = (size_t)r < sizeof(status) / sizeof(status[0]) && status[r]
					? status[r]
					: "failed";

		if (!msg[0] && r != PV_OK)
			snprintf(msg, sizeof(msg), "%s", pv_errmsg());
		wr = write_manifest(&R, s, r, msg);
		if (r == PV_OK)
			r = wr;
	}
	if (r != PV_OK && msg[0])
		pv_error(r, "%s", msg);
	for (size_t i = 0; R.rems && i < pb->nclients; i++)
		pv_remote_free(R.rems[i]);
	free(R.rems);
	free(R.system);
	pv_remote_free(R.ctl_rem);
	if (R.sink.fd >= 0)
		close(R.sink.fd);
	pv_ramp_release(&R.ramp);
	pv_run_builtin_release(&R);
	res->seconds = pv_now() - t0;
	return r;
}

void pv_run_release(struct pv_run_result *res)
{
	for (size_t i = 0; i < res->nsteps; i++)
		free(res->steps[i].hosts);
	free(res->steps);
	pv_plan_release(&res->plan);
	memset(res, 0, sizeof(*res));
}
