/* run/command.c: the `command` driver (docs/run.md): the playbook's client_command on every
 * client, each in a process group of its own under a wrapper (run/scripts/run-client.pl) that
 * stops the whole group when its SSH session says so or goes away, and the controller_command
 * on the controller (over SSH, or here in a session of its own); each host's step folder is
 * gathered into the results afterwards. Also the `fsct` driver, which is only rendered. */
#include "run/internal.h"

#include "run/caps.h"
#include "run/lines.h"

#include "playbooks/roster.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char pv_run_client_pl[], pv_run_client_sh[], pv_run_gather_sh[];

#define SLICE_MS   200
#define STOP_GRACE 5 /* seconds between SIGTERM and SIGKILL (as run-client.pl) */

static int check(struct run *R)
{
	if (!R->pb->driver.client_command)
		return pv_error(PV_ECONFIG, "driver.client_command is not set: the command driver "
					    "needs the command each client runs (see "
					    "docs/playbook.md)");
	return PV_OK;
}

/* ---- a client's (or a remote controller's) command over SSH ---- */

static int host_line(void *arg, const char *line, size_t len)
{
	struct hostrun *x = arg;
	struct pv_run_host *h = x->h;
	struct pv_run_wrap_line w;

	pv_run_wrap_line(line, len, &w);
	pthread_mutex_lock(&x->st->lock);
	x->last_seen = pv_now();
	if (w.kind == PV_RUN_WRAP_STARTED) {
		x->running = true;
		pthread_cond_broadcast(&x->st->cond);
	} else if (w.kind == PV_RUN_WRAP_EXIT && !x->final) {
		x->final = true;
		h->exit = w.status;
		if (h->exit == 0)
			h->state = PV_RUN_DONE;
		else
			pv_run_host_fail(h, PV_RUN_FAILED, PV_EREMOTE,
					 "the command ended with status %d before the step's end "
					 "(see %s/%s/stderr)",
					 h->exit, x->st->rel, h->name);
	} else if (w.kind == PV_RUN_WRAP_STOPPED && !x->final) {
		x->final = true;
		h->exit = w.status;
		h->state = PV_RUN_STOPPED;
	} else if (w.kind == PV_RUN_WRAP_ERROR && !x->final) {
		x->final = true;
		pv_run_host_fail(h, PV_RUN_NOT_STARTED, PV_EREMOTE, "%.*s", (int)w.textlen, w.text);
		pthread_cond_broadcast(&x->st->cond);
	} else if (w.kind == PV_RUN_WRAP_OTHER) {
		pv_log(PV_LOG_DEBUG, "run: %s: %.200s", h->name, line);
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
	if (!stop && x->running && !x->final && pv_now() - x->last_seen > x->st->run->lost_after) {
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
	char rel[128], max[16];
	int status = 0, r;

	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	/* the host cuts its stream at the cap, and the controller stops reading one byte past it
	 * (a host that does not cut is refused, not read on) */
	snprintf(max, sizeof(max), "%u", PV_RUN_GATHER_MAX + 1);
	pv_remote_var(&sc, "d", x->dir);
	pv_remote_var(&sc, "max", max);
	pv_buf_addstr(&sc, pv_run_gather_sh);
	r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
			       : pv_remote_exec_max(x->rem, sc.data, &out, PV_RUN_GATHER_MAX + 1,
						    &err, &status, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "status %d: %s", status,
			     err.len ? err.data : "no message");
	if (r == PV_OK && out.len > PV_RUN_GATHER_MAX)
		r = pv_error(PV_EREMOTE, "more than %u MiB of results in %s",
			     PV_RUN_GATHER_MAX >> 20, x->dir);
	if (r == PV_OK)
		r = pv_run_sink_tar(&R->sink, rel, &out, &x->h->files, &x->h->bytes,
				    &x->h->skipped);
	if (r != PV_OK && x->h->code == PV_OK) {
		x->h->code = r;
		snprintf(x->h->msg, sizeof(x->h->msg), "its results were not gathered: %s",
			 pv_errmsg());
	}
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	pv_buf_release(&err, 0);
}

/* The session ended: what it means for the host. Under st->lock. */
static void remote_ended(struct hostrun *x, int r, int status, const struct pv_buf *err)
{
	if (x->silent) {
		pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH,
				 "no word from '%s' for %.0f s during the step: lost", x->h->name,
				 x->st->run->lost_after);
		return;
	}
	if (x->final)
		return;
	/* no end reported: the session went away (a command that could not start says so with
	 * pv-error), unless the stream itself could not start */
	if (r == PV_OK)
		r = pv_error(PV_EUNREACH,
			     "its session ended without the command's end (status %d)%s%.200s",
			     status, err->len ? ": " : "", err->len ? err->data : "");
	if (x->running || r == PV_EUNREACH)
		pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH, "lost: %s", pv_errmsg());
	else
		pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, r, "%s", pv_errmsg());
}

static void *remote_host(void *arg)
{
	struct hostrun *x = arg;
	struct run *R = x->st->run;
	struct pv_remote_stream_ops ops = {host_line, host_stop, x, NULL};
	struct pv_buf sc = PV_BUF_INIT, err = PV_BUF_INIT;
	char label[160];
	int status = -1, r;

	snprintf(label, sizeof(label), "%s %s %s", R->pb->lab, R->res->id, x->st->rel);
	pv_remote_var(&sc, "prog", pv_run_client_pl);
	pv_remote_var(&sc, "base", x->base);
	pv_remote_var(&sc, "step", x->st->rel);
	pv_remote_var(&sc, "label", label);
	pv_remote_var(&sc, "cmd", x->cmd.data);
	pv_remote_var(&sc, "pw", x->password ? "1" : "0");
	pv_buf_addstr(&sc, pv_run_client_sh);
	if (pv_buf_failed(&sc) || pv_buf_failed(&x->input))
		r = pv_error(PV_EIO, "out of memory");
	else
		r = pv_remote_stream(x->rem, sc.data, x->input.data, x->input.len, &ops, &err,
				     &status, 0);
	pthread_mutex_lock(&x->st->lock);
	remote_ended(x, r, status, &err);
	x->ended = true;
	pthread_cond_broadcast(&x->st->cond);
	pthread_mutex_unlock(&x->st->lock);
	if (x->running && x->h->state != PV_RUN_LOST)
		gather(x);
	pv_buf_release(&sc, 0);
	pv_buf_release(&err, 0);
	return NULL;
}

/* ---- the controller's command on this machine ---- */

/* In a session of its own, in the step's folder, its output into files there. */
static int spawn_local(struct hostrun *x, pid_t *pid)
{
	struct run *R = x->st->run;
	char rel[128];
	int dir, out = -1, err = -1, r;

	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	if ((r = pv_run_sink_dir(&R->sink, rel, true, &dir)) != PV_OK)
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

/* Until it ends or the step is over; *over tells which. */
static void local_follow(struct hostrun *x, pid_t pid, int *status, bool *reaped, bool *over)
{
	while (!*reaped && !*over) {
		if (waitpid(pid, status, WNOHANG) == pid)
			*reaped = true;
		pthread_mutex_lock(&x->st->lock);
		*over = x->st->over;
		pthread_mutex_unlock(&x->st->lock);
		if (!*reaped && !*over)
			usleep(SLICE_MS * 1000);
	}
	stop_group(pid, *reaped ? 2 : STOP_GRACE, reaped, status);
}

static void *local_host(void *arg)
{
	struct hostrun *x = arg;
	struct steprun *st = x->st;
	pid_t pid = -1;
	bool reaped = false, over = false;
	int status = 0, r;

	r = spawn_local(x, &pid);
	pthread_mutex_lock(&st->lock);
	if (r != PV_OK)
		pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, r, "%s", pv_errmsg());
	else
		x->running = true;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	if (r == PV_OK)
		local_follow(x, pid, &status, &reaped, &over);
	pthread_mutex_lock(&st->lock);
	if (r == PV_OK) {
		x->h->exit = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
		if (over)
			x->h->state = PV_RUN_STOPPED;
		else if (x->h->exit == 0)
			x->h->state = PV_RUN_DONE;
		else
			pv_run_host_fail(x->h, PV_RUN_FAILED, PV_EREMOTE,
					 "the command ended with status %d before the step's end "
					 "(see %s/%s/stderr)",
					 x->h->exit, st->rel, x->h->name);
	}
	x->final = x->ended = true;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

static void *host(void *arg)
{
	struct hostrun *x = arg;

	return x->host ? remote_host(arg) : local_host(arg);
}

/* ---- what a host runs ---- */

/* The users' password where the local controller's command reads it: a private folder, for
 * the step only (step_end removes it). */
static int local_password(struct run *R)
{
	char path[128];
	int fd, r = PV_OK;

	snprintf(path, sizeof(path), "%s/password", R->local_pw);
	unlink(path); /* a step that failed before its end left it (our private folder) */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, R->password->data, R->password->len) != (ssize_t)R->password->len ||
	    write(fd, "\n", 1) != 1)
		r = pv_error(PV_EIO, "cannot write %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return r;
}

static int render(struct run *R, struct steprun *st, struct hostrun *x)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_buf clients = PV_BUF_INIT;
	char results[1100], pwfile[1100];
	struct pv_run_driver_vars v;
	int r;

	for (size_t i = 0; i < pb->nclients; i++)
		pv_buf_addf(&clients, "%s%s", i ? "," : "", pb->clients[i].name);
	if (x->host)
		snprintf(results, sizeof(results), "%s", x->dir);
	else
		snprintf(results, sizeof(results), "%s/%s/%s", R->sink.path, st->rel, x->h->name);
	snprintf(pwfile, sizeof(pwfile), "%s/password", x->host ? x->base : R->local_pw);
	memset(&v, 0, sizeof(v));
	v.client = x->h->controller ? "" : x->h->name;
	v.users = x->h->users;
	v.users_total = st->step->users;
	v.step = st->step->n;
	v.steps = (unsigned)R->ramp.n;
	v.duration = pb->driver.duration;
	v.warmup = pb->driver.warmup;
	v.results = results;
	v.password_file = pwfile;
	v.clients = clients.data ? clients.data : "";
	r = pv_buf_failed(&clients)
		    ? pv_error(PV_EIO, "out of memory")
		    : pv_run_driver_render(pb,
					   x->h->controller ? pb->driver.controller_command
							    : pb->driver.client_command,
					   &v, &x->cmd, &x->password);
	if (r == PV_OK && pv_buf_failed(&x->cmd))
		r = pv_error(PV_EIO, "out of memory");
	pv_buf_release(&clients, 0);
	if (r != PV_OK || !x->password || R->env->dry_run)
		return r;
	if (!x->host)
		return local_password(R);
	/* run-client.pl reads the password first, into {password_file} */
	pv_buf_add(&x->input, R->password->data, R->password->len);
	pv_buf_add(&x->input, "\n", 1);
	return pv_buf_failed(&x->input) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

static void step_end(struct run *R, struct steprun *st)
{
	char path[128];

	(void)st;
	if (!R->local_pw[0])
		return;
	snprintf(path, sizeof(path), "%s/password", R->local_pw);
	unlink(path);
}

/* The dry run: every host's command in every step. */
static void plan(struct run *R)
{
	const struct pv_playbook *pb = R->pb;

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
			char who[PV_PLAYBOOK_NAME_MAX + 32];

			if (i == pb->nclients && !pb->driver.controller_command)
				break;
			memset(&h, 0, sizeof(h));
			memset(&x, 0, sizeof(x));
			x.st = &st;
			x.h = &h;
			pv_run_host_init(R, &st, &x, i);
			snprintf(who, sizeof(who), h.controller ? "%s" : "%s (%u users)", h.name,
				 h.users);
			if (render(R, &st, &x) == PV_OK)
				pv_env_plan_add(&R->res->plan,
						"run on %s in step %u/%zu (%u users): %s", who,
						step.n, R->ramp.n, step.users, x.cmd.data);
			else
				pv_env_plan_add(&R->res->plan, "step %u on %s: cannot render: %s",
						step.n, h.name, pv_errmsg());
			pv_buf_release(&x.cmd, 0);
			pv_buf_release(&x.input, 1);
		}
	}
}

const struct pv_run_driver pv_run_driver_command = {
	.name = "command",
	.check = check,
	.plan = plan,
	.render = render,
	.host = host,
	.step_end = step_end,
};

/* ---- fsct: rendered, not run here ---- */

static int fsct_check(struct run *R)
{
	return pv_run_fsct_check(R->pb);
}

/* FSCT runs the whole ramp itself: its clients wait for its controller (fsct_check made sure
 * there is a controller host to name). */
static void fsct_plan(struct run *R)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_buf ps = PV_BUF_INIT;
	const char *ctl = pb->controller.host.name;

	for (size_t i = 0; i < pb->nclients; i++) {
		pv_buf_reset(&ps);
		if (pv_run_fsct_client(pb, ctl, &ps) == PV_OK)
			pv_env_plan_add(&R->res->plan,
					"run on %s (Windows, OpenSSH; the password on stdin): %s",
					pb->clients[i].name, ps.data);
		else
			pv_env_plan_add(&R->res->plan, "on %s: cannot render: %s",
					pb->clients[i].name, pv_errmsg());
	}
	pv_buf_reset(&ps);
	if (pv_run_fsct_controller(pb, &ps) == PV_OK)
		pv_env_plan_add(&R->res->plan,
				"then run on the controller %s (the password on stdin): %s", ctl,
				ps.data);
	else
		pv_env_plan_add(&R->res->plan, "on the controller: cannot render: %s", pv_errmsg());
	pv_buf_release(&ps, 0);
}

const struct pv_run_driver pv_run_driver_fsct = {
	.name = "fsct",
	.check = fsct_check,
	.plan = fsct_plan,
};
