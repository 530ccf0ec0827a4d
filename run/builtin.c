/* run/builtin.c: the built-in driver's part of a run (docs/load.md): provision's binary
 * on every client, `provision load` started there for each step with its users on stdin, every
 * client's "ready" awaited before all are told "go" at once, their lines of figures merged per
 * interval and per step, and the results (load.txt, .csv, .json, .svg) written at the end. */
#include "run/internal.h"

#include "run/caps.h"
#include "run/lines.h"

#include "load/line.h"
#include "run/install.h"
#include "load/report.h"
#include "load/proto.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver's state for the whole run (R->drv_state). */
struct builtin {
	struct pv_self self;
	char (*bin)[128]; /* per client: provision's path there */
	struct pv_load_config cfg;
	struct pv_load_summary *sums; /* per step run */
};

/* A client's in a step (x->drv), under st->lock: what it sent (run/lines.h). */
struct bhost {
	struct pv_run_client c;
	bool go_sent;
};

static struct builtin *state(struct run *R)
{
	return R->drv_state;
}

extern const char pv_run_load_sh[];

struct install {
	struct run *R;
	size_t i;
	pthread_t t;
	int code;
	char msg[512];
	bool copied;
};

static void *install_one(void *arg)
{
	struct install *in = arg;
	struct run *R = in->R;

	struct builtin *B = state(R);

	in->code = pv_install_self(R->rems[in->i], &B->self, B->bin[in->i], sizeof(B->bin[0]),
				   &in->copied);
	if (in->code != PV_OK)
		snprintf(in->msg, sizeof(in->msg), "%s", pv_errmsg());
	return NULL;
}

static int check(struct run *R)
{
	const struct pv_playbook *pb = R->pb;

	if (!pb->has_server)
		return pv_error(PV_ECONFIG, "driver 'builtin' loads the playbook's server: add a "
					    "'server:' section");
	for (size_t i = 0; i < pb->nclients; i++)
		if (pb->clients[i].os != PV_OS_LINUX)
			return pv_error(PV_ECONFIG,
					"driver 'builtin' runs on Linux clients; '%s' is "
					"os: windows (use driver 'fsct' there)",
					pb->clients[i].name);
	return PV_OK;
}

/* Before the first step: provision's binary on every client, the load settings. */
static int prepare(struct run *R)
{
	const struct pv_playbook *pb = R->pb;
	struct builtin *B;
	struct install *in;
	int r = PV_OK;

	if (!(B = calloc(1, sizeof(*B))))
		return pv_error(PV_EIO, "out of memory");
	R->drv_state = B;
	B->cfg = pb->load;
	if (!(B->bin = calloc(pb->nclients, sizeof(*B->bin))) ||
	    !(B->sums = calloc(R->ramp.n, sizeof(*B->sums))) ||
	    !(in = calloc(pb->nclients, sizeof(*in))))
		return pv_error(PV_EIO, "out of memory");
	if ((r = pv_self_read(&B->self)) != PV_OK) {
		free(in);
		return r;
	}
	for (size_t i = 0; i < pb->nclients; i++) {
		in[i].R = R;
		in[i].i = i;
		if (pthread_create(&in[i].t, NULL, install_one, &in[i]) != 0) {
			in[i].code = pv_error(PV_EIO, "cannot start a thread");
			snprintf(in[i].msg, sizeof(in[i].msg), "%s", pv_errmsg());
			in[i].t = 0;
		}
	}
	for (size_t i = 0; i < pb->nclients; i++) {
		if (in[i].t)
			pthread_join(in[i].t, NULL);
		if (in[i].code != PV_OK && r == PV_OK)
			r = pv_error(in[i].code, "%s; nothing was started", in[i].msg);
		else if (in[i].copied)
			pv_log(PV_LOG_INFO, "run: provision copied to %s:%s", pb->clients[i].name,
			       B->bin[i]);
	}
	free(in);
	return r;
}

/* The client's command and its stdin: the password, the settings, its users, "start". */
static int render(struct run *R, struct steprun *st, struct hostrun *x)
{
	const struct pv_playbook *pb = R->pb;
	struct builtin *B = state(R);
	struct pv_buf *in = &x->input;
	const struct pv_host *client = x->host;
	size_t ci = (size_t)(client - pb->clients);
	double secs = R->pb->driver.warmup + R->pb->driver.duration;
	int timeout = client->ssh.timeout > 0 ? client->ssh.timeout : 10, r;
	char num[32];

	struct bhost *b;

	(void)st;
	if (!(x->drv = b = calloc(1, sizeof(struct bhost))))
		return pv_error(PV_EIO, "out of memory");
	/* the intervals the step lasts (with the driver's grace), and a few more */
	b->c.max_iv = (size_t)ceil((secs + pv_run_driver_builtin.grace) /
				   (B->cfg.interval ? B->cfg.interval : 1)) +
		      PV_RUN_INTERVALS_SLACK;
	pv_remote_var(&x->cmd, "bin", B->bin[ci]);
	pv_remote_var(&x->cmd, "client", client->name);
	pv_remote_var(&x->cmd, "wg", pb->domain.netbios);
	snprintf(num, sizeof(num), "%.0f", ceil(secs));
	pv_remote_var(&x->cmd, "secs", num);
	snprintf(num, sizeof(num), "%d", timeout);
	pv_remote_var(&x->cmd, "timeout", num);
	pv_buf_addstr(&x->cmd, pv_run_load_sh);
	pv_buf_add(in, R->password->data, R->password->len);
	pv_buf_addstr(in, "\n");
	if ((r = pv_loadproto_config(&B->cfg, in)) != PV_OK)
		return r;
	if (B->cfg.auth == PV_LOAD_KERBEROS &&
	    (r = pv_loadproto_kerberos(pb->domain.realm,
				       pb->domain.dc_address ? pb->domain.dc_address
							     : pb->domain.dc_name,
				       pb->domain.dns_domain, in)) != PV_OK)
		return r;
	for (unsigned n = 1; n <= x->h->users; n++) {
		struct pv_roster_user u; /* where `server` built its tree */

		if ((r = pv_roster_user(pb, ci, n, &u)) != PV_OK ||
		    (r = pv_loadproto_user(u.name, u.alias, u.share_name, n, in)) != PV_OK)
			return r;
	}
	pv_buf_addstr(in, "start\n");
	return pv_buf_failed(&x->cmd) || pv_buf_failed(in) ? pv_error(PV_EIO, "out of memory")
							   : PV_OK;
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct hostrun *x = arg;
	struct bhost *b = x->drv;
	struct steprun *st = x->st;
	int r;

	pthread_mutex_lock(&st->lock);
	x->last_seen = pv_now();
	if ((r = pv_run_client_line(&b->c, line, len)) < 0) {
		pv_run_host_fail(x->h, PV_RUN_FAILED, PV_EREMOTE, "%s", pv_errmsg());
	} else if (r == 1) {
		x->ready = x->running = true;
		pthread_cond_broadcast(&st->cond);
	}
	pthread_mutex_unlock(&st->lock);
	return r < 0 ? -1 : 0;
}

static bool should_stop(void *arg)
{
	struct hostrun *x = arg;
	struct run *R = x->st->run;
	bool stop;

	pthread_mutex_lock(&x->st->lock);
	stop = x->st->over;
	/* silence counts once the load runs: a line comes every interval */
	if (!stop && x->st->go &&
	    pv_now() - x->last_seen > R->lost_after + state(R)->cfg.interval) {
		x->silent = true;
		stop = true;
		pthread_cond_broadcast(&x->st->cond);
	}
	pthread_mutex_unlock(&x->st->lock);
	return stop;
}

static int more_input(void *arg, struct pv_buf *in)
{
	struct hostrun *x = arg;
	struct bhost *b = x->drv;

	pthread_mutex_lock(&x->st->lock);
	if (x->st->go && !b->go_sent) {
		pv_buf_addstr(in, "go\n");
		b->go_sent = true;
		x->last_seen = pv_now();
	}
	pthread_mutex_unlock(&x->st->lock);
	return 0;
}

/* The session ended: what it means for the client. Under st->lock. */
static void ended(struct hostrun *x, int r, int status, const struct pv_buf *err)
{
	if (x->silent) {
		pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH,
				 "no figures from '%s' for %.0f s during the step: lost",
				 x->h->name, x->st->run->lost_after);
		return;
	}
	if (x->h->code != PV_OK)
		return;
	if (r != PV_OK)
		pv_run_host_fail(x->h, x->running ? PV_RUN_LOST : PV_RUN_NOT_STARTED,
				 r == PV_EREMOTE ? PV_EUNREACH : r, "%s%s",
				 x->running ? "lost: " : "", pv_errmsg());
	else if (status == 0)
		x->h->state = x->st->over && !x->ready ? PV_RUN_STOPPED : PV_RUN_DONE;
	else if (status == 15 || (x->st->over && status == -1))
		x->h->state = PV_RUN_STOPPED;
	else
		pv_run_host_fail(x->h, x->ready ? PV_RUN_FAILED : PV_RUN_NOT_STARTED, PV_EREMOTE,
				 "provision load ended with status %d: %.300s", status,
				 err->len ? err->data : "no message");
	x->h->exit = status;
}

/* What it printed, kept beside the step's other results. */
static void keep_lines(struct hostrun *x, const struct pv_buf *err)
{
	struct run *R = x->st->run;
	struct bhost *b = x->drv;
	char rel[128];

	if (!b->c.lines.len && !err->len)
		return;
	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	if (pv_buf_failed(&b->c.lines) || pv_sink_mkdir(&R->sink, rel) != PV_OK)
		return;
	pv_sink_write(&R->sink, rel, "load.jsonl", b->c.lines.data ? b->c.lines.data : "",
		      b->c.lines.len, false);
	if (err->len)
		pv_sink_write(&R->sink, rel, "stderr", err->data, err->len, false);
}

/* The thread of a client's `provision load`. */
static void *host(void *arg)
{
	struct hostrun *x = arg;
	struct pv_remote_stream_ops ops = {on_line, should_stop, x, more_input};
	struct pv_buf err = PV_BUF_INIT;
	int status = -1, r;

	r = pv_remote_stream(x->rem, x->cmd.data, x->input.data, x->input.len, &ops, &err, &status,
			     0);
	pv_buf_release(&x->input, 1);
	pthread_mutex_lock(&x->st->lock);
	ended(x, r, status, &err);
	x->ended = true;
	pthread_cond_broadcast(&x->st->cond);
	pthread_mutex_unlock(&x->st->lock);
	keep_lines(x, &err);
	pv_buf_release(&err, 0);
	return NULL;
}

/* Every client ready (or gone): they go at once. Under st->lock. */
static bool ready(struct steprun *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (!st->hr[i].h->controller && !st->hr[i].ready && !st->hr[i].ended)
			return false;
	for (size_t i = 0; i < st->n; i++) {
		struct bhost *b = st->hr[i].drv;

		if (b && st->hr[i].ready && b->c.failed)
			pv_log(PV_LOG_WARN,
			       "run: step %u: %s: %u of its users could not log on (%s)",
			       st->step->n, st->hr[i].h->name, b->c.failed, b->c.ready_error);
	}
	return true;
}

static unsigned logged_on(struct steprun *st)
{
	unsigned n = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct bhost *b = st->hr[i].drv;

		n += b && st->hr[i].ready ? b->c.connected + b->c.failed : 0;
	}
	return n;
}

/* The clients' intervals after the warm-up, merged, into ls. */
static void merge(struct run *R, struct steprun *st, struct pv_load_step *ls)
{
	const struct pv_run_client **c = calloc(st->n ? st->n : 1, sizeof(*c));
	unsigned interval = state(R)->cfg.interval;

	for (size_t i = 0; i < st->n; i++) {
		const struct bhost *b = st->hr[i].drv;

		if (c && b)
			c[i] = &b->c;
		/* a client gone in the step (its session, or its provision load killed) */
		if (b && (st->hr[i].h->state == PV_RUN_LOST ||
			  (st->hr[i].h->state == PV_RUN_FAILED && st->hr[i].ready)))
			ls->lost++;
	}
	if (c)
		pv_run_clients_merge(
			c, st->n,
			(size_t)ceil((double)R->pb->driver.warmup / (interval ? interval : 1)), ls);
	free(c);
}

/* After a step: the clients' intervals merged, the step's summary. */
static void step_end(struct run *R, struct steprun *st)
{
	struct builtin *B = state(R);
	struct pv_run_step *step = st->step;
	struct pv_load_step ls;

	if (step->start > 0) { /* it ran */
		pv_load_step_init(&ls, step->users);
		merge(R, st, &ls);
		ls.cpu = step->samples ? step->watch[PV_W_CPU].mean : NAN;
		pv_load_summarize(&ls, &B->cfg, &step->load);
		step->has_load = true;
		B->sums[step->n - 1] = step->load;
	}
	for (size_t i = 0; i < st->n; i++) {
		struct bhost *b = st->hr[i].drv;

		if (!b)
			continue;
		pv_run_client_release(&b->c);
		free(b);
		st->hr[i].drv = NULL;
	}
}

/* After the last step: load.txt, .csv, .json, .svg in the run's folder; the answer. */
static int report(struct run *R)
{
	struct builtin *B = state(R);
	struct pv_load_results res = {&B->cfg, B->sums, R->res->nsteps, NULL};
	struct pv_buf b = PV_BUF_INIT;
	char title[256];
	static const struct {
		const char *name;
		int (*fn)(const struct pv_load_results *, struct pv_buf *);
	} files[] = {{"load.txt", pv_load_report_txt},
		     {"load.csv", pv_load_report_csv},
		     {"load-kinds.csv", pv_load_report_kinds_csv},
		     {"load.json", pv_load_report_json},
		     {"load.svg", pv_load_report_svg}};
	int r = PV_OK;

	if (!B || !B->sums || !R->res->nsteps)
		return PV_OK;
	snprintf(title, sizeof(title), "%s, run %s", R->pb->server.host.name, R->res->id);
	res.title = title;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && r == PV_OK; i++) {
		pv_buf_reset(&b);
		if ((r = files[i].fn(&res, &b)) == PV_OK)
			r = pv_sink_write(&R->sink, "", files[i].name, b.data ? b.data : "", b.len,
					  true);
	}
	pv_buf_reset(&b);
	if (pv_load_answer_line(&res, &b) == PV_OK && b.data)
		snprintf(R->res->answer, sizeof(R->res->answer), "%s", b.data);
	pv_buf_release(&b, 0);
	return r;
}

static void release(struct run *R)
{
	struct builtin *B = state(R);

	if (!B)
		return;
	pv_self_release(&B->self);
	free(B->bin);
	free(B->sums);
	free(B);
	R->drv_state = NULL;
}

/* The dry run: the copies, then every client's users in every step. */
static void plan(struct run *R)
{
	const struct pv_playbook *pb = R->pb;

	for (size_t i = 0; i < pb->nclients; i++)
		pv_plan_add(&R->res->plan,
			    "copy provision to %s:/var/tmp/provision-<its digest>/provision unless "
			    "that build is there",
			    pb->clients[i].name);
	for (size_t si = 0; si < R->ramp.n; si++)
		for (size_t i = 0; i < pb->nclients; i++) {
			unsigned n = pv_ramp_share(R->ramp.totals[si], pb->nclients, i);
			char first[PV_NAME_MAX] = "", last[PV_NAME_MAX] = "";

			pv_user_name(pb, &pb->clients[i], 1, first);
			pv_user_name(pb, &pb->clients[i], n, last);
			pv_plan_add(
				&R->res->plan,
				"run provision load on %s in step %zu/%zu (%u users): %s..%s, each "
				"through its own alias, for %d + %d s",
				pb->clients[i].name, si + 1, R->ramp.n, n, first, last,
				pb->driver.warmup, pb->driver.duration);
		}
}

const struct pv_run_driver pv_run_driver_builtin = {
	.name = "builtin",
	.grace = 10, /* provision load's own start and end */
	.check = check,
	.plan = plan,
	.prepare = prepare,
	.render = render,
	.host = host,
	.ready = ready,
	.logged_on = logged_on,
	.step_end = step_end,
	.report = report,
	.release = release,
};
