/* run/run.c: `provision run` (see run.h): the run's checks, its hosts connected, its folder,
 * the watch, the steps one after the other with the drain between them, the manifest after
 * each, the driver's report at the end, and everything it started stopped and removed. The
 * steps themselves are run/step.c; what runs on the hosts is the driver's (internal.h). */
#include "env/target.h"
#include "run/run.h"
#include "run/internal.h"

#include "remote/quote.h"
#include "run/drain.h"
#include "samba/samba.h"
#include "util/digest.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const char pv_run_client_facts_sh[], pv_run_cleanup_sh[];

#define HEARTBEAT 2 /* run-client.pl's pv-alive period */

static const struct pv_run_driver *driver_of(enum pv_playbook_driver_kind k)
{
	switch (k) {
	case PV_PLAYBOOK_DRIVER_FSCT:
		return &pv_run_driver_fsct;
	case PV_PLAYBOOK_DRIVER_BUILTIN:
		return &pv_run_driver_builtin;
	default:
		return &pv_run_driver_command;
	}
}

/* After step si: wait until the server's queue has drained (drain:, between_steps), within
 * what is left of the run's timeout. */
static int drain_between(struct run *R, size_t si)
{
	struct pv_run_step *step = &R->res->steps[si];
	struct pv_playbook_drain d = R->pb->drain;
	struct pv_run_drain_result dr;
	int r;

	if (R->deadline) {
		double left = R->deadline - pv_now();

		if (left < 1)
			left = 1;
		if (left < d.timeout)
			d.timeout = (int)left;
	}
	pv_log(PV_LOG_INFO, "run: waiting for the server to drain after step %u (%s probe)",
	       step->n, pv_run_drain_probe_name(d.probe));
	memset(&dr, 0, sizeof(dr));
	r = pv_run_drain_wait(R->env, &d, &dr);
	step->drained = dr.polls > 0;
	step->drain_seconds = dr.seconds;
	step->drain_first = dr.first;
	step->drain_peak = dr.peak;
	if (r != PV_OK)
		r = pv_error_prefix(r,
				    "after step %u, waiting for the server to drain (the results "
				    "so far are in %s)",
				    step->n, R->sink.path);
	return r;
}

static int check_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 63 || id[0] == '.' || id[0] == '-' ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		return pv_error(PV_EUSAGE,
				"run id '%s' cannot name a folder: use 1 to 63 letters, "
				"digits, '.', '_' or '-', not starting with '.' or '-'",
				id);
	return PV_OK;
}

struct connect_ctx {
	struct run *R;
};

static int connect_client(size_t i, void *arg)
{
	struct run *R = ((struct connect_ctx *)arg)->R;
	const struct pv_playbook_host *host = &R->pb->clients[i];
	struct pv_buf out = PV_BUF_INIT;
	int status = 0, r;

	if ((r = pv_env_host_connect(host, &R->rems[i])) != PV_OK)
		return r;
	/* the client's system for the manifest, and perl for the run's wrapper */
	r = pv_remote_exec(R->rems[i], pv_run_client_facts_sh, NULL, 0, &out, NULL, &status, 0);
	if (r == PV_OK && out.data && strstr(out.data, "no-perl"))
		r = pv_error(PV_EREMOTE,
			     "'%s' has no perl, which the run's wrapper needs: install "
			     "it (Debian: perl-base)",
			     host->name);
	if (r == PV_OK && out.data)
		snprintf(R->system[i], sizeof(R->system[i]), "%.*s", (int)strcspn(out.data, "\n"),
			 out.data);
	pv_buf_release(&out, 0);
	return r;
}

/* Clients that could not be reached, every one named (with its cause), before anything starts:
 * a step's users are shared over every client, so a run does not go on without one. */
static int unreached(const struct pv_playbook *pb, const struct pv_fanout_result *fr)
{
	struct pv_buf msg = PV_BUF_INIT;
	size_t failed = 0;
	int code = PV_OK, r;

	for (size_t i = 0; i < pb->nclients; i++) {
		if (fr[i].code == PV_OK)
			continue;
		if (!failed++)
			code = fr[i].code;
		pv_buf_addf(&msg, "; %s (%s): %s", pb->clients[i].name, pv_status_name(fr[i].code),
			    fr[i].msg);
	}
	r = pv_error(code, "%zu of %zu clients cannot be reached, so nothing was started%s", failed,
		     pb->nclients, msg.data ? msg.data : "");
	pv_buf_release(&msg, 0);
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
	r = pv_fanout_run(pb->nclients, pb->fanout, connect_client, &c, fr);
	if (r != PV_OK)
		r = unreached(pb, fr);
	free(fr);
	/* a server provision did not set up (server.kind windows or nas) has no Samba to ask */
	if (r == PV_OK && pb->has_server && pb->server.kind == PV_PLAYBOOK_SERVER_SAMBA) {
		struct pv_remote *srv = NULL;

		/* only for the manifest: a server that cannot say is not an error here. Tried
		 * twice: a busy server's sshd may take its whole timeout to let us in (its NSS
		 * asks winbindd, which a loaded Samba serves last) */
		int sc = pv_env_host_connect(&pb->server.host, &srv);

		if (sc != PV_OK && sc != PV_ECRED && sc != PV_ETRUST && !pv_env_stopped(R->env))
			sc = pv_env_host_connect(&pb->server.host, &srv);
		if (sc == PV_OK) {
			pv_samba_version(srv, R->server_system, sizeof(R->server_system));
			R->server_config = pv_samba_config(srv);
			if (pb->driver.watch > 0) { /* the watch goes on over it */
				R->srv_rem = srv;
				srv = NULL;
			}
		} else {
			pv_log(PV_LOG_INFO,
			       "run: the server's version and configuration are not "
			       "recorded: %s",
			       pv_errmsg());
		}
		pv_remote_free(srv);
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
	pv_buf_addstr(&sc, pv_run_cleanup_sh);
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

/* The dry run: the run's folder, the drain between steps, then what the driver would run. */
static void dry_run(struct run *R)
{
	const struct pv_playbook *pb = R->pb;

	snprintf(R->base, sizeof(R->base), "/tmp/provision-run-%s-%s", pb->lab, R->res->id);
	snprintf(R->sink.path, sizeof(R->sink.path), "%s/%s", pb->controller.results, R->res->id);
	snprintf(R->local_pw, sizeof(R->local_pw), "/tmp/provision-pw.XXXXXX");
	snprintf(R->res->folder, sizeof(R->res->folder), "%s", R->sink.path);
	pv_env_plan_add(&R->res->plan, "make the run's folder %s on the controller (%s)",
			R->sink.path, R->res->controller);
	if (pb->has_drain && pb->drain.between_steps && R->ramp.n > 1) {
		struct pv_env_plan d;

		memset(&d, 0, sizeof(d));
		pv_run_drain_plan(pb, &pb->drain, &d);
		for (size_t i = 0; i < d.n; i++)
			pv_env_plan_add(&R->res->plan, "%s (between steps)", d.items[i]);
		pv_env_plan_release(&d);
	}
	R->drv->plan(R);
}

/* What is checked before anything starts. */
static int check(struct run *R, const struct pv_run_opts *o, char id[64])
{
	const struct pv_playbook *pb = R->pb;
	int r;

	if ((r = pv_run_ramp_plan(pb, &R->ramp)) != PV_OK)
		return r;
	R->res->planned = R->ramp.n;
	/* before the driver's own checks: what this version cannot run is said first, and the
	 * dry run that shows its commands then says what they need */
	if (!R->drv->host && !R->env->dry_run)
		return pv_error(
			PV_ENOTIMPL,
			"driver '%s' is rendered, not run, by provision %s: see the commands "
			"with --dry-run and run them on the Windows hosts",
			R->drv->name, PV_VERSION);
	if (R->drv->check && (r = R->drv->check(R)) != PV_OK)
		return r;
	if (pb->has_drain && pb->drain.between_steps &&
	    (r = pv_run_drain_check(pb, &pb->drain)) != PV_OK)
		return pv_error_prefix(r, "drain.between_steps is set, but");
	if (!pb->has_controller || !pb->controller.results)
		return pv_error(PV_ECONFIG,
				"a run gathers its results into controller.results: add "
				"a 'controller:' section with results: FOLDER");
	if (o && o->id) {
		if ((r = check_id(o->id)) != PV_OK)
			return r;
		snprintf(id, 64, "%s", o->id);
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(id, 64, "%Y%m%d-%H%M%S", &tm);
	}
	snprintf(R->res->id, sizeof(R->res->id), "%s", id);
	return PV_OK;
}

/* The playbook file's SHA-256, for the manifest ("" when it cannot be read). */
static void digest(const struct pv_playbook *pb, char out[PV_SHA256_HEX])
{
	struct pv_buf f = PV_BUF_INIT;
	FILE *fp = pb->path && *pb->path ? fopen(pb->path, "rb") : NULL;
	char chunk[8192];
	size_t n;

	out[0] = '\0';
	if (!fp)
		return;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		pv_buf_add(&f, chunk, n);
	if (!ferror(fp) && !pv_buf_failed(&f))
		pv_sha256_hex(f.data ? f.data : "", f.len, out);
	fclose(fp);
	pv_buf_release(&f, 0);
}

/* Whether a command of the run reads the users' password. */
static bool wants_password(const struct run *R)
{
	const struct pv_playbook_driver *d = &R->pb->driver;

	return R->drv == &pv_run_driver_builtin ||
	       (d->client_command && strstr(d->client_command, "{password_file}")) ||
	       (d->controller_command && strstr(d->controller_command, "{password_file}"));
}

/* Everything up to the first step: the password, the hosts, the driver's preparation, the
 * run's folder, the watch, the first manifest. */
static int start(struct run *R, const struct pv_run_opts *o, const char *id)
{
	const struct pv_playbook *pb = R->pb;
	const struct pv_playbook_driver *d = &pb->driver;
	char name[64];
	int r;

	if (!(R->res->steps = calloc(R->ramp.n, sizeof(*R->res->steps))))
		return pv_error(PV_EIO, "out of memory");
	digest(pb, R->res->digest);
	if (wants_password(R) &&
	    (r = pv_env_secret(R->env, PV_ENV_CRED_USERS, &R->password)) != PV_OK)
		return r;
	if ((r = connect_all(R)) != PV_OK)
		return r;
	if (R->drv->prepare && (r = R->drv->prepare(R)) != PV_OK)
		return r;
	if (pb->controller.host.name &&
	    (r = pv_env_host_connect(&pb->controller.host, &R->ctl_rem)) != PV_OK)
		return r;
	if ((r = pv_run_sink_open(&R->sink, R->ctl_rem, pb->controller.results, id, o && o->id,
				  name)) != PV_OK)
		return r;
	snprintf(R->res->id, sizeof(R->res->id), "%s", name);
	snprintf(R->res->folder, sizeof(R->res->folder), "%s", R->sink.path);
	snprintf(R->base, sizeof(R->base), "/tmp/provision-run-%s-%s", pb->lab, R->res->id);
	if (d->controller_command && !pb->controller.host.name) {
		snprintf(R->local_pw, sizeof(R->local_pw), "/tmp/provision-pw.XXXXXX");
		if (!mkdtemp(R->local_pw)) {
			R->local_pw[0] = '\0';
			return pv_error(PV_EIO, "cannot make a private folder in /tmp: %s",
					strerror(errno));
		}
	}
	R->wall0 = pv_run_wall();
	if (d->watch > 0 && pb->has_server && pb->server.kind == PV_PLAYBOOK_SERVER_WINDOWS) {
		snprintf(R->res->watch_error, sizeof(R->res->watch_error),
			 "server.kind is windows: the watch reads /proc over SSH, which a Windows "
			 "server has not (driver.watch: 0 says so up front)");
		pv_log(PV_LOG_WARN, "run: the server is not watched: %s", R->res->watch_error);
	} else if (d->watch > 0 && pb->has_server) {
		/* over the connection that asked the server its configuration, when there is one */
		struct pv_remote *srv = R->srv_rem;

		R->srv_rem = NULL;
		if (pv_run_watch_start(&pb->server.host, srv, "server", d->watch, false,
				       &R->watch) != PV_OK) {
			snprintf(R->res->watch_error, sizeof(R->res->watch_error), "%s",
				 pv_errmsg());
			pv_log(PV_LOG_WARN, "run: the server is not watched: %s",
			       R->res->watch_error);
		}
	}
	/* the DC too, when it can be reached: a slow DC must not look like a slow server */
	if (d->watch > 0 && pb->domain.has_host &&
	    pv_run_watch_start(&pb->domain.host, NULL, "DC", d->watch, false, &R->dc_watch) !=
		    PV_OK) {
		snprintf(R->res->dc_watch_error, sizeof(R->res->dc_watch_error), "%s", pv_errmsg());
		pv_log(PV_LOG_WARN, "run: the DC is not watched: %s", R->res->dc_watch_error);
	}
	R->lost_after = pb->clients[0].ssh.timeout > 0 ? pb->clients[0].ssh.timeout : 10;
	if (R->lost_after < 3 * HEARTBEAT)
		R->lost_after = 3 * HEARTBEAT;
	return pv_run_manifest_write(R, "running", PV_OK, NULL);
}

/* One more step of users after the ramp (--refine): in the ramp and the steps. */
static int add_step(struct run *R, unsigned users)
{
	unsigned *t = realloc(R->ramp.totals, (R->ramp.n + 1) * sizeof(*t));
	struct pv_run_step *s;

	if (!t)
		return pv_error(PV_EIO, "out of memory");
	R->ramp.totals = t;
	if (!(s = realloc(R->res->steps, (R->ramp.n + 1) * sizeof(*s))))
		return pv_error(PV_EIO, "out of memory");
	R->res->steps = s;
	memset(&s[R->ramp.n], 0, sizeof(*s));
	s[R->ramp.n].refine = true;
	t[R->ramp.n++] = users;
	R->res->planned = R->ramp.n;
	pv_log(PV_LOG_INFO, "run: refining the answer: a step of %u users", users);
	return PV_OK;
}

/* --over-steps: after step si of the ramp, the driver says the ramp ends; the steps left are
 * not run (said, and kept in the manifest). */
static void ramp_end(struct run *R, size_t si)
{
	struct pv_run_result *res = R->res;

	res->skipped = R->ramp.n - (si + 1);
	res->skipped_from = R->ramp.totals[si + 1];
	res->skipped_to = R->ramp.totals[R->ramp.n - 1];
	pv_log(PV_LOG_INFO,
	       "run: %u step%s in a row over the answer, up to step %zu: the ramp ends there "
	       "(driver.over_steps), its %zu step%s of %u..%u users not run",
	       R->pb->driver.over_steps, R->pb->driver.over_steps == 1 ? "" : "s", si + 1,
	       res->skipped, res->skipped == 1 ? "" : "s", res->skipped_from, res->skipped_to);
	R->ramp.n = si + 1;
	res->planned = R->ramp.n;
}

/* The steps, one after the other (the ramp's, then those the driver adds to refine the
 * answer), the drain between them, the manifest after each. */
static int steps(struct run *R, char *msg, size_t msglen)
{
	const struct pv_playbook *pb = R->pb;
	char partial[512] = "";
	int r = PV_OK, wr;

	for (size_t si = 0; si < R->ramp.n && r == PV_OK; si++) {
		unsigned more;

		r = pv_run_step_run(R, si);
		R->res->nsteps = si + 1;
		/* a client lost in a step: a driver that goes on runs the next steps without
		 * counting that one; the run ends partial, saying where */
		if (r == PV_EPARTIAL && R->drv->goes_on && !pv_env_stopped(R->env) &&
		    si + 1 < R->ramp.n) {
			if (!partial[0])
				snprintf(partial, sizeof(partial), "%s", pv_errmsg());
			pv_log(PV_LOG_WARN, "run: %s; the run goes on with step %zu", pv_errmsg(),
			       si + 2);
			r = PV_OK;
		}
		if (r == PV_OK && si + 1 < R->ramp.n && !R->res->steps[si].refine &&
		    R->drv->ramp_over && R->drv->ramp_over(R))
			ramp_end(R, si);
		if (r == PV_OK && si + 1 == R->ramp.n && R->drv->next_users &&
		    (more = R->drv->next_users(R)) > 0)
			r = add_step(R, more);
		if (r == PV_OK && si + 1 < R->ramp.n && pb->has_drain && pb->drain.between_steps)
			r = drain_between(R, si);
		if (r != PV_OK)
			snprintf(msg, msglen, "%s", pv_errmsg());
		if (r == PV_OK && si + 1 < R->ramp.n && pv_env_stopped(R->env))
			r = pv_error(PV_ESTOPPED,
				     "run stopped (Ctrl-C or SIGTERM) after step %zu; "
				     "the results so far are in %s",
				     si + 1, R->sink.path);
		wr = pv_run_manifest_write(R, "running", PV_OK, NULL);
		if (r == PV_OK)
			r = wr;
	}
	if (R->drv->report) {
		int br = R->drv->report(R);

		if (r == PV_OK)
			r = br;
	}
	if (r == PV_OK && partial[0]) {
		r = pv_error(PV_EPARTIAL,
			     "%s (the run went on: the later steps started every client again)",
			     partial);
		snprintf(msg, msglen, "%s", pv_errmsg());
	}
	return r;
}

/* The watch stopped, the hosts' folders removed, the last manifest. */
static int finish(struct run *R, int r, char *msg, size_t msglen)
{
	static const char *const status[] = {[PV_OK] = "done",
					     [PV_EPARTIAL] = "partial",
					     [PV_ETIMEOUT] = "timeout",
					     [PV_ESTOPPED] = "stopped"};
	int wr;

	if (R->watch) {
		int w = pv_run_watch_stop(R->watch);

		if (w != PV_OK && !R->res->watch_error[0])
			snprintf(R->res->watch_error, sizeof(R->res->watch_error), "%s",
				 pv_errmsg());
		R->watch = NULL;
	}
	if (R->dc_watch) {
		int w = pv_run_watch_stop(R->dc_watch);

		if (w != PV_OK && !R->res->dc_watch_error[0])
			snprintf(R->res->dc_watch_error, sizeof(R->res->dc_watch_error), "%s",
				 pv_errmsg());
		R->dc_watch = NULL;
	}
	if (R->env->dry_run)
		return r;
	cleanup_hosts(R);
	if (R->sink.path[0] && R->res->folder[0]) {
		const char *s = (size_t)r < sizeof(status) / sizeof(status[0]) && status[r]
					? status[r]
					: "failed";

		if (!msg[0] && r != PV_OK)
			snprintf(msg, msglen, "%s", pv_errmsg());
		wr = pv_run_manifest_write(R, s, r, msg);
		if (r == PV_OK)
			r = wr;
	}
	return r;
}

int pv_run(const struct pv_env *env, const struct pv_run_opts *o, struct pv_run_result *res)
{
	const struct pv_playbook *pb = env->pb;
	struct run R;
	char id[64], msg[1024] = "";
	double t0 = pv_now();
	int r;

	memset(res, 0, sizeof(*res));
	memset(&R, 0, sizeof(R));
	R.env = env;
	R.pb = pb;
	R.res = res;
	R.sink.fd = -1;
	R.drv = driver_of(pb->driver.kind);
	res->driver = R.drv->name;
	res->controller = pb->controller.host.name ? pb->controller.host.name : "local";
	R.deadline = pb->driver.timeout > 0 ? t0 + pb->driver.timeout : 0;
	if ((r = check(&R, o, id)) == PV_OK) {
		if (env->dry_run)
			dry_run(&R);
		else if ((r = start(&R, o, id)) == PV_OK)
			r = steps(&R, msg, sizeof(msg));
	}
	if (r != PV_OK && !msg[0])
		snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	r = finish(&R, r, msg, sizeof(msg));
	if (r != PV_OK && msg[0])
		pv_error(r, "%s", msg);
	for (size_t i = 0; R.rems && i < pb->nclients; i++)
		pv_remote_free(R.rems[i]);
	free(R.rems);
	free(R.system);
	free(R.server_config);
	pv_remote_free(R.ctl_rem);
	pv_remote_free(R.srv_rem);
	pv_run_sink_close(&R.sink);
	pv_run_ramp_release(&R.ramp);
	if (R.drv->release)
		R.drv->release(&R);
	res->seconds = pv_now() - t0;
	return r;
}

void pv_run_release(struct pv_run_result *res)
{
	for (size_t i = 0; i < res->nsteps; i++) {
		free(res->steps[i].hosts);
		free(res->steps[i].clients);
	}
	free(res->steps);
	pv_env_plan_release(&res->plan);
	memset(res, 0, sizeof(*res));
}
