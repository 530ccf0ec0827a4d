/* run/builtin.c: the built-in driver's part of a run (docs/load.md): provision's binary
 * on every client, `provision load` started there for each step with its users on stdin, every
 * client's "ready" awaited before all are told "go" at once, their lines of figures merged per
 * interval and per step, and the results (load.txt, .csv, .json, .svg) written at the end. */
#include "run/internal.h"

#include "load/line.h"
#include "load/report.h"
#include "json/json.h"
#include "load/proto.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

	in->code = pv_install_self(R->rems[in->i], &R->self, R->bin[in->i], sizeof(R->bin[0]),
				   &in->copied);
	if (in->code != PV_OK)
		snprintf(in->msg, sizeof(in->msg), "%s", pv_errmsg());
	return NULL;
}

int pv_run_builtin_prepare(struct run *R)
{
	const struct pv_playbook *pb = R->pb;
	struct install *in;
	int r = PV_OK;

	for (size_t i = 0; i < pb->nclients; i++)
		if (pb->clients[i].os != PV_OS_LINUX)
			return pv_error(PV_ECONFIG, "driver 'builtin' runs on Linux clients; '%s' is "
						    "os: windows (use driver 'fsct' there)",
					pb->clients[i].name);
	if (pb->has_load)
		R->cfg = pb->load;
	else
		pv_load_defaults(&R->cfg);
	if (!(R->bin = calloc(pb->nclients, sizeof(*R->bin))) ||
	    !(R->sums = calloc(R->ramp.n, sizeof(*R->sums))) ||
	    !(in = calloc(pb->nclients, sizeof(*in))))
		return pv_error(PV_EIO, "out of memory");
	if ((r = pv_self_read(&R->self)) != PV_OK) {
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
			       R->bin[i]);
	}
	free(in);
	return r;
}

int pv_run_builtin_render(struct run *R, struct hostrun *x, struct pv_buf *in)
{
	const struct pv_playbook *pb = R->pb;
	const struct pv_host *client = x->host;
	size_t ci = (size_t)(client - pb->clients);
	char name[PV_NAME_MAX], alias[PV_NAME_MAX], share[PV_NAME_MAX];
	double secs = R->pb->driver.warmup + R->pb->driver.duration;
	int timeout = client->ssh.timeout > 0 ? client->ssh.timeout : 10, r;

	pv_remote_var(&x->cmd, "bin", R->bin[ci]);
	pv_remote_var(&x->cmd, "client", client->name);
	pv_remote_var(&x->cmd, "wg", pb->domain.netbios);
	pv_buf_addf(&x->cmd,
		    "exec \"$bin\" load --client \"$client\" --workgroup \"$wg\" --duration %.0f "
		    "--timeout %d\n",
		    ceil(secs), timeout);
	pv_buf_add(in, R->password->data, R->password->len);
	pv_buf_addstr(in, "\n");
	if ((r = pv_loadproto_config(&R->cfg, in)) != PV_OK)
		return r;
	if (R->cfg.auth == PV_LOAD_KERBEROS &&
	    (r = pv_loadproto_kerberos(pb->domain.realm,
				       pb->domain.dc_address ? pb->domain.dc_address : pb->domain.dc_name,
				       pb->domain.dns_domain, in)) != PV_OK)
		return r;
	for (unsigned n = 1; n <= x->h->users; n++) {
		/* user n of client ci is user ci * per_client + n of the lab: its tree is in share
		 * (that index mod shares) + 1, as `server` built it (phases/trees.c) */
		unsigned long i = (unsigned long)ci * pb->users.per_client + (n - 1);

		if ((r = pv_user_name(pb, client, n, name)) != PV_OK ||
		    (r = pv_alias_name(pb, n, alias)) != PV_OK ||
		    (r = pv_share_name(pb, (unsigned)(i % pb->server.shares) + 1, share)) != PV_OK ||
		    (r = pv_loadproto_user(name, alias, share, n, in)) != PV_OK)
			return r;
	}
	pv_buf_addstr(in, "start\n");
	return pv_buf_failed(&x->cmd) || pv_buf_failed(in) ? pv_error(PV_EIO, "out of memory")
							    : PV_OK;
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct hostrun *x = arg;
	struct steprun *st = x->st;
	struct pv_load_figs f;
	int r = 0;

	pthread_mutex_lock(&st->lock);
	x->last_seen = pv_now();
	pv_buf_add(&x->lines, line, len);
	pv_buf_add(&x->lines, "\n", 1);
	if (len > 6 && !strncmp(line, "ready ", 6)) {
		struct pv_json *o = pv_json_parse(line + 6, len - 6, NULL, 0);
		const struct pv_json *c = o ? pv_json_get(o, "connected") : NULL,
				     *fl = o ? pv_json_get(o, "failed") : NULL,
				     *e = o ? pv_json_get(o, "error") : NULL;
		long long vc = 0, vf = 0;

		if (!c || !fl || !pv_json_integer(c, &vc) || !pv_json_integer(fl, &vf)) {
			pv_run_host_fail(x->h, PV_RUN_FAILED, PV_EREMOTE,
					 "provision load said '%.80s', not what it should", line);
			r = -1;
		} else {
			x->ready = x->running = true;
			x->connected = (unsigned)vc;
			x->failed = (unsigned)vf;
			if (e && pv_json_text(e))
				snprintf(x->ready_error, sizeof(x->ready_error), "%s",
					 pv_json_text(e));
		}
		pv_json_free(o);
		pthread_cond_broadcast(&st->cond);
	} else if (pv_load_line_decode(line, len, &f) == PV_OK) {
		if (f.seq >= 1 && f.seq <= 1000000) {
			if (f.seq > x->niv) {
				struct pv_load_figs *iv = realloc(x->iv, f.seq * sizeof(*iv));

				if (iv) {
					memset(iv + x->niv, 0, (f.seq - x->niv) * sizeof(*iv));
					x->iv = iv;
					x->niv = f.seq;
				}
			}
			if (f.seq <= x->niv)
				x->iv[f.seq - 1] = f;
		}
	} else {
		pv_run_host_fail(x->h, PV_RUN_FAILED, PV_EREMOTE, "provision load printed a line "
								  "that is not figures: %s",
				 pv_errmsg());
		r = -1;
	}
	pthread_mutex_unlock(&st->lock);
	return r;
}

static bool should_stop(void *arg)
{
	struct hostrun *x = arg;
	bool stop;

	pthread_mutex_lock(&x->st->lock);
	stop = x->st->over;
	/* silence counts once the load runs: a line comes every interval */
	if (!stop && x->st->go && pv_now() - x->last_seen > x->st->run->lost_after +
								   x->st->run->cfg.interval) {
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

	pthread_mutex_lock(&x->st->lock);
	if (x->st->go && !x->go_sent) {
		pv_buf_addstr(in, "go\n");
		x->go_sent = true;
		x->last_seen = pv_now();
	}
	pthread_mutex_unlock(&x->st->lock);
	return 0;
}

void *pv_run_builtin_host(void *arg)
{
	struct hostrun *x = arg;
	struct run *R = x->st->run;
	struct pv_remote_stream_ops ops = {on_line, should_stop, x, more_input};
	struct pv_buf err = PV_BUF_INIT;
	char rel[128];
	int status = -1, r;

	r = pv_remote_stream(x->rem, x->cmd.data, x->input.data, x->input.len, &ops, &err, &status,
			     0);
	pv_buf_release(&x->input, 1);
	pthread_mutex_lock(&x->st->lock);
	if (x->silent) {
		pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH,
				 "no figures from '%s' for %.0f s during the step: lost",
				 x->h->name, R->lost_after);
	} else if (x->h->code == PV_OK) {
		if (r != PV_OK)
			pv_run_host_fail(x->h, x->running ? PV_RUN_LOST : PV_RUN_NOT_STARTED,
					 r == PV_EREMOTE ? PV_EUNREACH : r, "%s%s",
					 x->running ? "lost: " : "", pv_errmsg());
		else if (status == 0)
			x->h->state = x->st->over && !x->ready ? PV_RUN_STOPPED : PV_RUN_DONE;
		else if (status == 15 || (x->st->over && status == -1))
			x->h->state = PV_RUN_STOPPED;
		else
			pv_run_host_fail(x->h, x->ready ? PV_RUN_FAILED : PV_RUN_NOT_STARTED,
					 PV_EREMOTE, "provision load ended with status %d: %.300s",
					 status, err.len ? err.data : "no message");
		x->h->exit = status;
	}
	x->ended = true;
	pthread_cond_broadcast(&x->st->cond);
	pthread_mutex_unlock(&x->st->lock);
	/* what it printed, kept beside the step's other results */
	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	if (x->lines.len || err.len) {
		struct pv_buf both = PV_BUF_INIT;

		pv_buf_add(&both, x->lines.data ? x->lines.data : "", x->lines.len);
		if (!pv_buf_failed(&both) && pv_run_sink_mkdir(&R->sink, rel) == PV_OK) {
			pv_run_sink_write(&R->sink, rel, "load.jsonl", both.data ? both.data : "",
					  both.len, false);
			if (err.len)
				pv_run_sink_write(&R->sink, rel, "stderr", err.data, err.len, false);
		}
		pv_buf_release(&both, 0);
	}
	pv_buf_release(&err, 0);
	return NULL;
}

bool pv_run_builtin_all_ready(struct steprun *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (!st->hr[i].h->controller && !st->hr[i].ready && !st->hr[i].ended)
			return false;
	return true;
}

void pv_run_builtin_step_end(struct run *R, struct steprun *st)
{
	struct pv_run_step *step = st->step;
	struct pv_load_step ls;
	size_t most = 0, skip;

	pv_load_step_init(&ls, step->users);
	for (size_t i = 0; i < st->n; i++) {
		if (st->hr[i].h->controller)
			continue;
		if (st->hr[i].niv > most)
			most = st->hr[i].niv;
		/* a client gone in the step (its session, or its provision load killed) */
		if (st->hr[i].h->state == PV_RUN_LOST ||
		    (st->hr[i].h->state == PV_RUN_FAILED && st->hr[i].ready))
			ls.lost++;
	}
	/* the warm-up's intervals are not measured */
	skip = (size_t)ceil((double)R->pb->driver.warmup / (R->cfg.interval ? R->cfg.interval : 1));
	for (size_t seq = skip + 1; seq <= most; seq++) {
		struct pv_load_figs m;
		bool any = false;

		memset(&m, 0, sizeof(m));
		for (size_t i = 0; i < st->n; i++) {
			const struct hostrun *x = &st->hr[i];

			if (x->h->controller || seq > x->niv || x->iv[seq - 1].seq != seq)
				continue;
			if (!any) {
				m = x->iv[seq - 1];
				any = true;
			} else {
				pv_load_figs_merge(&m, &x->iv[seq - 1]);
			}
		}
		if (any)
			pv_load_step_add(&ls, &m);
	}
	ls.cpu = step->samples ? step->watch[PV_W_CPU].mean : NAN;
	pv_load_summarize(&ls, &R->cfg, &step->load);
	step->has_load = true;
	R->sums[step->n - 1] = step->load;
	for (size_t i = 0; i < st->n; i++) {
		free(st->hr[i].iv);
		st->hr[i].iv = NULL;
		pv_buf_release(&st->hr[i].lines, 0);
	}
}

int pv_run_builtin_report(struct run *R)
{
	struct pv_load_results res = {&R->cfg, R->sums, R->res->nsteps, NULL};
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

	if (!R->sums || !R->res->nsteps)
		return PV_OK;
	snprintf(title, sizeof(title), "%s, run %s", R->pb->server.host.name, R->res->id);
	res.title = title;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && r == PV_OK; i++) {
		pv_buf_reset(&b);
		if ((r = files[i].fn(&res, &b)) == PV_OK)
			r = pv_run_sink_write(&R->sink, "", files[i].name, b.data ? b.data : "",
					      b.len, true);
	}
	pv_buf_reset(&b);
	if (pv_load_answer_line(&res, &b) == PV_OK && b.data)
		snprintf(R->res->answer, sizeof(R->res->answer), "%s", b.data);
	pv_buf_release(&b, 0);
	return r;
}

void pv_run_builtin_release(struct run *R)
{
	pv_self_release(&R->self);
	free(R->bin);
	free(R->sums);
	R->bin = NULL;
	R->sums = NULL;
}
