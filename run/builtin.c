/* run/builtin.c: the built-in driver's part of a run (docs/load.md): provision's binary on
 * every client, one `provision load` per client for the whole run (a session: its SSH channel
 * and process live from the first step to the last), told each step's users on its stdin,
 * every client's "ready" awaited before all are told "go" at once, their lines of figures
 * merged per interval and per step (each client's own figures kept: was it the limit?), the
 * steps --refine adds, and the results (load.txt, .csv, .json, .svg) written at the end.
 *
 * Locks: a session's lock, then (never the other way) the step's lock of the host it reports
 * to. */
#include "run/internal.h"

#include "run/caps.h"
#include "run/lines.h"

#include "load/engine.h"
#include "load/line.h"
#include "load/proto.h"
#include "load/report.h"
#include "playbooks/roster.h"
#include "remote/quote.h"
#include "run/install.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_END_SECS 15 /* a session told to end gets this long (provision load's drain) */

/* A client's `provision load`, over the run. */
struct session {
	struct run *R;
	size_t ci;
	pthread_t t;
	bool started; /* its thread runs (or ran: ended says so) */
	pthread_mutex_t lock;
	/* under lock */
	bool ended, closing;
	struct pv_buf input; /* stdin still to send (secret: the first carries the password) */
	struct hostrun *cur; /* the step's host it reports to; NULL between steps */
	unsigned sent;	     /* users sent so far */
	int code, status;    /* how the stream ended */
	struct pv_buf err;   /* its stderr so far */
	size_t err_kept;     /* how much of it a step kept */
	char cmd_msg[64];
};

/* The driver's state for the whole run (R->drv_state). */
struct builtin {
	struct pv_run_self self;
	char (*bin)[128]; /* per client: provision's path there */
	struct pv_playbook_workload cfg;
	struct session *sess;	      /* per client */
	struct pv_load_summary *sums; /* per step run (their clients borrowed from the steps) */
	size_t nsums;
	/* every step's users that logged on, and the first refusal: a run where nobody could
	 * log on is a failed one, and says why */
	unsigned long connected;
	char first_refusal[704];
	bool said; /* what the users' connections speak (under the step's lock) */
	/* server.fileset's description, sent to every client: the users' static/ is known
	 * from its plan, not listed at logon (as a Windows client does not) */
	char *fileset, fileset_name[64];
	size_t fileset_len;
};

/* A client's in a step (x->drv), under st->lock: what it sent (run/lines.h). */
struct bhost {
	struct pv_run_client c;
	bool go_sent;
	/* by when it must say ready (pv_now()), and whether it did not: a client that says
	 * nothing while it logs its users on is not waited for forever */
	double ready_by, ready_wait;
	bool mute;
	bool jsonl; /* its load.jsonl is started in the step's folder: the rest goes at its end */
};

/* A client's lines go to its load.jsonl once this many are held (and at the step's end), so a
 * step of hours holds no more of them than one of a minute. */
#define LINES_HELD (256 * 1024)

/* How long a client may take to log on n users before it says ready: its logons go 64 at
 * once (provision load's --parallel), each up to 3 tries of the request timeout, and its tree
 * listing after; lost_after on top. Generous: a real client is far quicker. */
static double ready_budget(const struct run *R, unsigned n, int timeout)
{
	return R->lost_after + 2.0 * 3.0 * timeout * ceil(n / 64.0);
}

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

	in->code = pv_run_install_self(R->rems[in->i], &B->self, B->bin[in->i], sizeof(B->bin[0]),
				       &in->copied);
	if (in->code != PV_OK)
		snprintf(in->msg, sizeof(in->msg), "%s", pv_errmsg());
	return NULL;
}

static int check(struct run *R)
{
	const struct pv_playbook *pb = R->pb;
	int r;

	/* what load.workload's kinds open, against the fileset the users' trees are built from */
	if (pb->workload && pb->server.fileset &&
	    (r = pv_load_replay_check(&pb->load, pb->workload, pb->server.fileset)) != PV_OK)
		return r;
	if (!pb->has_server)
		return pv_error(PV_ECONFIG, "driver 'builtin' loads the playbook's server: add a "
					    "'server:' section");
	for (size_t i = 0; i < pb->nclients; i++)
		if (pb->clients[i].os != PV_PLAYBOOK_OS_LINUX)
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
	    !(B->sess = calloc(pb->nclients, sizeof(*B->sess))) ||
	    !(in = calloc(pb->nclients, sizeof(*in))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < pb->nclients; i++) {
		B->sess[i].R = R;
		B->sess[i].ci = i;
		pthread_mutex_init(&B->sess[i].lock, NULL);
	}
	if ((r = pv_run_self_read(&B->self)) != PV_OK) {
		free(in);
		return r;
	}
	if (pb->server.fileset) {
		const char *slash = strrchr(pb->server.fileset, '/');
		struct stat st;

		if ((r = pv_file_read(pb->server.fileset, "fileset", PV_LOAD_PROTO_FILESET_MAX,
				      &B->fileset, &B->fileset_len, &st)) != PV_OK) {
			free(in);
			return r;
		}
		snprintf(B->fileset_name, sizeof(B->fileset_name), "%s",
			 slash ? slash + 1 : pb->server.fileset);
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

/* The intervals of the warm-up: a step's figures count from the next one. */
static size_t warmup_intervals(const struct run *R)
{
	unsigned interval = state((struct run *)R)->cfg.interval;

	return (size_t)ceil((double)R->pb->driver.warmup / (interval ? interval : 1));
}

/* The client's command (its session's, when one starts in this step). */
static int render(struct run *R, struct steprun *st, struct hostrun *x)
{
	const struct pv_playbook *pb = R->pb;
	struct builtin *B = state(R);
	const struct pv_playbook_host *client = x->host;
	size_t ci = (size_t)(client - pb->clients);
	double secs = R->pb->driver.warmup + R->pb->driver.duration;
	int timeout = client->ssh.timeout > 0 ? client->ssh.timeout : 10;
	char num[32];

	struct bhost *b;

	(void)st;
	if (!(x->drv = b = calloc(1, sizeof(struct bhost))))
		return pv_error(PV_EIO, "out of memory");
	/* the intervals the step lasts (with the driver's grace), and a few more */
	b->c.max_iv = (size_t)ceil((secs + pv_run_driver_builtin.grace) /
				   (B->cfg.interval ? B->cfg.interval : 1)) +
		      PV_RUN_INTERVALS_SLACK;
	b->c.skip = warmup_intervals(R);
	pv_remote_var(&x->cmd, "bin", B->bin[ci]);
	pv_remote_var(&x->cmd, "client", client->name);
	pv_remote_var(&x->cmd, "wg", pb->domain.netbios);
	snprintf(num, sizeof(num), "%.0f", ceil(secs));
	pv_remote_var(&x->cmd, "secs", num);
	snprintf(num, sizeof(num), "%d", timeout);
	pv_remote_var(&x->cmd, "timeout", num);
	pv_buf_addstr(&x->cmd, pv_run_load_sh);
	return pv_buf_failed(&x->cmd) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* What the session's stdin gets for this step: the password and the settings when it starts,
 * the users it does not have yet, "start N". Under s->lock. */
static int step_input(struct run *R, struct session *s, unsigned users, bool fresh)
{
	const struct pv_playbook *pb = R->pb;
	struct builtin *B = state(R);
	struct pv_buf *in = &s->input;
	int r;

	if (fresh) {
		pv_buf_add(in, R->password->data, R->password->len);
		pv_buf_addstr(in, "\n");
		if ((r = pv_load_proto_config(&B->cfg, in)) != PV_OK)
			return r;
		if (B->cfg.auth == PV_PLAYBOOK_WORKLOAD_KERBEROS &&
		    (r = pv_load_proto_kerberos(pb->domain.realm,
						pb->domain.dc_address ? pb->domain.dc_address
								      : pb->domain.dc_name,
						pb->domain.dns_domain, in)) != PV_OK)
			return r;
		if (B->fileset_len && (r = pv_load_proto_fileset(B->fileset_name, B->fileset,
								 B->fileset_len, in)) != PV_OK)
			return r;
	}
	for (unsigned n = s->sent + 1; n <= users; n++) {
		struct pv_playbook_roster_user u; /* where `server` built its tree */

		if ((r = pv_playbook_roster_user(pb, s->ci, n, &u)) != PV_OK ||
		    (r = pv_load_proto_user(u.name, u.alias, u.share_name, n, in)) != PV_OK)
			return r;
	}
	if (users > s->sent)
		s->sent = users;
	return pv_load_proto_start(users, in);
}

/* ---- what a client prints ---- */

/* The lines held so far onto the client's load.jsonl (started, or appended to), the folder
 * made first; then they are not held. rel: the client's folder in the step's. */
static int flush_lines(struct hostrun *x, const char *rel)
{
	struct run *R = x->st->run;
	struct bhost *b = x->drv;
	int r;

	if (pv_buf_failed(&b->c.lines))
		return pv_error(PV_EIO, "out of memory");
	if (!b->jsonl && (r = pv_run_sink_mkdir(&R->sink, rel)) != PV_OK)
		return r;
	r = b->jsonl ? pv_run_sink_append(&R->sink, rel, "load.jsonl", b->c.lines.data,
					  b->c.lines.len)
		     : pv_run_sink_write(&R->sink, rel, "load.jsonl",
					 b->c.lines.data ? b->c.lines.data : "", b->c.lines.len,
					 false);
	b->jsonl = true;
	pv_buf_reset(&b->c.lines);
	return r;
}

/* A line for the step's host x (under s->lock and st->lock): read by run/lines.h. */
static int host_line(struct hostrun *x, const char *line, size_t len)
{
	struct bhost *b = x->drv;
	int r;

	x->last_seen = pv_now();
	if ((r = pv_run_client_line(&b->c, line, len)) < 0) {
		pv_run_host_fail(x->h, PV_RUN_FAILED, PV_EREMOTE, "%s", pv_errmsg());
	} else if (b->c.lines.len >= LINES_HELD) {
		char rel[128];

		snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
		flush_lines(x, rel); /* a failure is the sink's to remember: the run stops on it */
	}
	if (r == 1) { /* ready: every user of the step logged on or failed */
		x->ready = x->running = true;
		/* what the users' connections speak, said once a run (the dialect, and whether the
		 * sessions encrypt or sign, and with what: a cost of the load) */
		if (b->c.spoke[0] && !state(x->st->run)->said) {
			pv_log(PV_LOG_INFO, "run: %s's users speak %s to the server", x->h->name,
			       b->c.spoke);
			state(x->st->run)->said = true;
		}
	} else if (r == 3) { /* done: the step's part of it is over, it waits for the next */
		x->ended = true;
		x->h->state = PV_RUN_DONE;
		x->h->exit = 0;
	}
	pthread_cond_broadcast(&x->st->cond);
	return r < 0 ? -1 : 0;
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct session *s = arg;
	struct hostrun *x;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	if ((x = s->cur) != NULL) {
		pthread_mutex_lock(&x->st->lock);
		r = host_line(x, line, len);
		pthread_mutex_unlock(&x->st->lock);
	} else {
		/* between steps it has nothing to say */
		pv_log(PV_LOG_WARN, "run: %s printed '%.*s' between steps",
		       s->R->pb->clients[s->ci].name, (int)(len < 80 ? len : 80), line);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

static bool should_stop(void *arg)
{
	struct session *s = arg;
	struct run *R = s->R;
	struct hostrun *x;
	bool stop;

	pthread_mutex_lock(&s->lock);
	stop = s->closing;
	if (!stop && (x = s->cur) != NULL) {
		struct bhost *b = x->drv;

		pthread_mutex_lock(&x->st->lock);
		/* a step over before this client said done: cut short */
		stop = x->st->over && !b->c.done;
		/* before, every user logged on or failed within its budget */
		if (!stop && !x->ready && b->ready_by && pv_now() > b->ready_by) {
			b->mute = true;
			stop = true;
			pthread_cond_broadcast(&x->st->cond);
		}
		/* silence counts once this client was told to go (which restarts its clock: it
		 * may have been ready long before, waiting for a slower client): a line comes
		 * every interval */
		if (!stop && x->st->go && b->go_sent && !b->c.done &&
		    pv_now() - x->last_seen > R->lost_after + state(R)->cfg.interval) {
			x->silent = true;
			stop = true;
			pthread_cond_broadcast(&x->st->cond);
		}
		pthread_mutex_unlock(&x->st->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return stop;
}

static int more_input(void *arg, struct pv_buf *in)
{
	struct session *s = arg;
	struct hostrun *x;

	pthread_mutex_lock(&s->lock);
	if (s->input.len) {
		pv_buf_add(in, s->input.data, s->input.len);
		pv_buf_reset(&s->input);
	}
	if ((x = s->cur) != NULL) {
		struct bhost *b = x->drv;

		pthread_mutex_lock(&x->st->lock);
		if (x->st->go && !b->go_sent && x->ready) {
			pv_load_proto_control_line(PV_LOAD_PROTO_GO, in);
			b->go_sent = true;
			x->last_seen = pv_now();
		}
		pthread_mutex_unlock(&x->st->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The session ended during host x's step: what it means for the client. Under st->lock. */
static void ended(struct hostrun *x, int r, int status, const struct pv_buf *err)
{
	struct bhost *b = x->drv;

	if (b->mute && x->h->code == PV_OK) {
		pv_run_host_fail(x->h, PV_RUN_LOST, PV_EUNREACH,
				 "'%s' did not say ready within %.0f s of being given %u user%s "
				 "(their logons, 64 at once, 3 tries each): lost",
				 x->h->name, b->ready_wait, x->h->users,
				 x->h->users == 1 ? "" : "s");
		return;
	}
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

/* The thread of a client's session: its `provision load` from its start to its end. */
static void *session_main(void *arg)
{
	struct session *s = arg;
	struct run *R = s->R;
	struct pv_remote_stream_ops ops = {on_line, should_stop, s, more_input};
	struct pv_buf err = PV_BUF_INIT, cmd = PV_BUF_INIT;
	struct hostrun *x;
	int status = -1, r;

	pthread_mutex_lock(&s->lock);
	pv_buf_add(&cmd, s->cur->cmd.data, s->cur->cmd.len);
	pthread_mutex_unlock(&s->lock);
	r = pv_buf_failed(&cmd)
		    ? pv_error(PV_EIO, "out of memory")
		    : pv_remote_stream(R->rems[s->ci], cmd.data, NULL, 0, &ops, &err, &status, 0);
	pthread_mutex_lock(&s->lock);
	s->ended = true;
	s->code = r;
	s->status = status;
	pv_buf_add(&s->err, err.data ? err.data : "", err.len);
	if ((x = s->cur) != NULL) {
		pthread_mutex_lock(&x->st->lock);
		if (!x->ended) {
			ended(x, r, status, &err);
			x->ended = true;
		}
		pthread_cond_broadcast(&x->st->cond);
		pthread_mutex_unlock(&x->st->lock);
	}
	pthread_mutex_unlock(&s->lock);
	pv_buf_release(&err, 0);
	pv_buf_release(&cmd, 0);
	return NULL;
}

/* The session told to end (its stdin closes: provision load ends), and joined. */
static void session_end(struct session *s)
{
	pthread_mutex_lock(&s->lock);
	s->closing = true;
	pthread_mutex_unlock(&s->lock);
	if (s->started)
		pthread_join(s->t, NULL);
	pthread_mutex_lock(&s->lock);
	s->started = s->ended = s->closing = false;
	s->sent = 0;
	pv_buf_release(&s->input, 1);
	pthread_mutex_unlock(&s->lock);
}

/* What it printed, kept beside the step's other results. */
static void keep_lines(struct hostrun *x, struct session *s)
{
	struct run *R = x->st->run;
	struct bhost *b = x->drv;
	char rel[128];
	size_t from;

	pthread_mutex_lock(&s->lock);
	from = s->err_kept < s->err.len ? s->err_kept : s->err.len;
	snprintf(rel, sizeof(rel), "%s/%s", x->st->rel, x->h->name);
	if ((b->c.lines.len || b->jsonl || s->err.len > from) && flush_lines(x, rel) == PV_OK) {
		if (s->err.len > from)
			pv_run_sink_write(&R->sink, rel, "stderr", s->err.data + from,
					  s->err.len - from, false);
	}
	s->err_kept = s->err.len;
	pthread_mutex_unlock(&s->lock);
}

/* The thread of a client in a step: its session given the step's users (started when it has
 * none), followed until the client says the step is done, or the step is over, or the session
 * ends. A step cut short ends the session: the next starts another. */
static void *host(void *arg)
{
	struct hostrun *x = arg;
	struct run *R = x->st->run;
	struct builtin *B = state(R);
	size_t ci = (size_t)(x->host - R->pb->clients);
	struct session *s = &B->sess[ci];
	struct bhost *b = x->drv;
	bool fresh, done;
	int r;

	pthread_mutex_lock(&s->lock);
	fresh = !s->started || s->ended;
	pthread_mutex_unlock(&s->lock);
	if (fresh)
		session_end(s); /* the one that ended, joined */
	pthread_mutex_lock(&s->lock);
	pv_buf_secret(&s->input);
	r = step_input(R, s, x->h->users, fresh);
	b->ready_wait =
		ready_budget(R, x->h->users, x->host->ssh.timeout > 0 ? x->host->ssh.timeout : 10);
	b->ready_by = pv_now() + b->ready_wait;
	s->cur = x;
	pthread_mutex_unlock(&s->lock);
	if (r == PV_OK && fresh) {
		s->started = pthread_create(&s->t, NULL, session_main, s) == 0;
		if (!s->started)
			r = pv_error(PV_EIO, "cannot start a thread");
	}
	pthread_mutex_lock(&x->st->lock);
	if (r != PV_OK) {
		pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, r, "%s", pv_errmsg());
		x->ended = true;
		pthread_cond_broadcast(&x->st->cond);
	}
	while (!x->ended && !x->st->over)
		pthread_cond_wait(&x->st->cond, &x->st->lock);
	done = b->c.done;
	pthread_mutex_unlock(&x->st->lock);
	if (!done && s->started) {
		/* cut short (or it ended on its own): the session goes, its end marks the host */
		session_end(s);
	}
	pthread_mutex_lock(&s->lock);
	s->cur = NULL;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&x->st->lock);
	x->ended = true;
	pthread_cond_broadcast(&x->st->cond);
	pthread_mutex_unlock(&x->st->lock);
	keep_lines(x, s);
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

/* The clients' intervals after the warm-up, merged, into ls; each client's own figures into
 * clients[], its logons into ls. */
static void merge(struct steprun *st, struct pv_load_step *ls, struct pv_load_client *clients)
{
	const struct pv_run_client **c = calloc(st->n ? st->n : 1, sizeof(*c));
	size_t k = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct bhost *b = st->hr[i].drv;

		if (st->hr[i].h->controller)
			continue;
		if (c && b)
			c[i] = &b->c;
		/* a client gone in the step (its session, or its provision load killed) */
		if (b && (st->hr[i].h->state == PV_RUN_LOST ||
			  (st->hr[i].h->state == PV_RUN_FAILED && st->hr[i].ready)))
			ls->lost++;
		if (b && b->c.ready)
			pv_load_logon_merge(&ls->logon, &b->c.logon);
		if (b)
			pv_run_client_figures(&b->c, st->hr[i].h->name, &clients[k]);
		else
			clients[k].name = st->hr[i].h->name;
		k++;
	}
	if (c)
		pv_run_clients_merge(c, st->n, ls);
	free(c);
}

/* After a step: the clients' intervals merged, the step's summary. */
static void step_end(struct run *R, struct steprun *st)
{
	struct builtin *B = state(R);
	struct pv_run_step *step = st->step;

	if (step->start > 0) { /* it ran */
		struct pv_load_step *ls = calloc(1, sizeof(*ls));
		struct pv_load_summary *sums;

		step->clients =
			calloc(R->pb->nclients ? R->pb->nclients : 1, sizeof(*step->clients));
		sums = realloc(B->sums, (step->n > B->nsums ? step->n : B->nsums) * sizeof(*sums));
		if (ls && step->clients && sums) {
			B->sums = sums;
			if (step->n > B->nsums) {
				memset(sums + B->nsums, 0, (step->n - B->nsums) * sizeof(*sums));
				B->nsums = step->n;
			}
			pv_load_step_init(ls, step->users);
			merge(st, ls, step->clients);
			ls->cpu = step->samples ? step->watch[PV_RUN_W_CPU].mean : NAN;
			ls->dc_cpu = step->dc_samples ? step->dc_watch[PV_RUN_W_CPU].mean : NAN;
			ls->dc_samba = step->dc_samples ? step->dc_watch[PV_RUN_W_SAMBA].mean : NAN;
			pv_load_summarize(ls, &B->cfg, &step->load);
			pv_load_summary_clients(&step->load, step->clients, R->pb->nclients);
			step->has_load = true;
			B->sums[step->n - 1] = step->load;
		}
		free(ls);
	}
	for (size_t i = 0; i < st->n; i++) {
		struct bhost *b = st->hr[i].drv;

		if (!b)
			continue;
		B->connected += b->c.connected;
		if (b->c.failed && b->c.ready_error[0] && !B->first_refusal[0])
			snprintf(B->first_refusal, sizeof(B->first_refusal), "%s: %s",
				 st->hr[i].h->name, b->c.ready_error);
		pv_run_client_release(&b->c);
		free(b);
		st->hr[i].drv = NULL;
	}
}

/* --over-steps: the last driver.over_steps steps were all over the answer. */
static bool ramp_over(struct run *R)
{
	struct builtin *B = state(R);

	return B && R->res->nsteps == B->nsums &&
	       pv_run_ramp_over(B->sums, B->nsums, B->cfg.overload, R->pb->driver.over_steps);
}

/* --refine: the next step's users, bisecting between the last step carried and the first over
 * it, until they are at most driver.refine users apart. */
static unsigned next_users(struct run *R)
{
	struct builtin *B = state(R);

	if (!B || !R->pb->driver.refine || R->res->nsteps != B->nsums)
		return 0;
	return pv_run_refine_next(B->sums, B->nsums, B->cfg.overload, R->pb->driver.refine,
				  (unsigned)R->pb->nclients);
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

	/* the sessions end first: nothing more comes from the clients */
	for (size_t i = 0; B && B->sess && i < R->pb->nclients; i++)
		session_end(&B->sess[i]);
	if (!B || !B->sums || !R->res->nsteps)
		return PV_OK;
	if (res.n > B->nsums)
		res.n = B->nsums;
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
	/* no user of any step logged on: nothing was measured, whatever the answer line says */
	if (r == PV_OK && !B->connected && B->first_refusal[0])
		r = pv_error(PV_EREMOTE,
			     "no user of any of the %zu step%s could log on; the first refusal: %s",
			     R->res->nsteps, R->res->nsteps == 1 ? "" : "s", B->first_refusal);
	return r;
}

static void release(struct run *R)
{
	struct builtin *B = state(R);

	if (!B)
		return;
	for (size_t i = 0; B->sess && i < R->pb->nclients; i++) {
		session_end(&B->sess[i]);
		pv_buf_release(&B->sess[i].err, 0);
		pthread_mutex_destroy(&B->sess[i].lock);
	}
	pv_run_self_release(&B->self);
	free(B->fileset);
	free(B->sess);
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
		pv_env_plan_add(
			&R->res->plan,
			"copy provision to %s:/var/tmp/provision-<its digest>/provision unless "
			"that build is there",
			pb->clients[i].name);
	for (size_t i = 0; i < pb->nclients; i++)
		pv_env_plan_add(&R->res->plan,
				"run provision load on %s for the whole run (its users %s between "
				"steps)",
				pb->clients[i].name,
				pb->load.keep_logged_on ? "stay logged on" : "logged off");
	if (pb->workload) {
		double again = pv_playbook_workload_logons(&pb->load);
		char logons[80] = "";

		if (again > 0)
			snprintf(logons, sizeof(logons),
				 ", each user logging off and on again %.6g times an hour", again);
		pv_env_plan_add(&R->res->plan,
				"replay the %u kinds of %s (load.workload) as the scenario "
				"'learned', %u activities a user-hour%s",
				pb->load.learned.n, pb->workload, pb->load.rate, logons);
		if (pb->load.learned.unleased > 0)
			pv_env_plan_add(&R->res->plan,
					"open %.3g%% of the documents it reads or edits without a "
					"lease, as the capture's client did (files.opens)",
					pb->load.learned.unleased);
		if (pv_playbook_workload_paced(&pb->load))
			pv_env_plan_add(
				&R->res->plan,
				"pace the learned activities as the capture's: each due "
				"its kind's length and a think time (from %.3g s to %.3g "
				"s, the capture's) after the last began, scaled to the rate",
				pb->load.learned.think.q[0],
				pb->load.learned.think.q[pb->load.learned.think.n - 1]);
	}
	for (size_t si = 0; si < R->ramp.n; si++)
		for (size_t i = 0; i < pb->nclients; i++) {
			unsigned n = pv_run_ramp_share(R->ramp.totals[si], pb->nclients, i);
			char first[PV_PLAYBOOK_NAME_MAX] = "", last[PV_PLAYBOOK_NAME_MAX] = "";

			pv_playbook_user_name(pb, &pb->clients[i], 1, first);
			pv_playbook_user_name(pb, &pb->clients[i], n, last);
			pv_env_plan_add(
				&R->res->plan,
				"step %zu/%zu on %s (%u users): %s..%s, each through its own "
				"alias, for %d + %d s",
				si + 1, R->ramp.n, pb->clients[i].name, n, first, last,
				pb->driver.warmup, pb->driver.duration);
		}
	if (pb->driver.over_steps)
		pv_env_plan_add(&R->res->plan,
				"the ramp ends once %u step%s in a row %s over the answer "
				"(driver.over_steps)",
				pb->driver.over_steps, pb->driver.over_steps == 1 ? "" : "s",
				pb->driver.over_steps == 1 ? "is" : "are");
	if (pb->driver.refine)
		pv_env_plan_add(
			&R->res->plan,
			"then steps between the last carried and the first over it, halving "
			"the gap until it is at most %u users (driver.refine)",
			pb->driver.refine);
}

const struct pv_run_driver pv_run_driver_builtin = {
	.name = "builtin",
	.grace = 10, /* provision load's own start and end */
	.goes_on = true,
	.check = check,
	.plan = plan,
	.prepare = prepare,
	.render = render,
	.host = host,
	.ready = ready,
	.logged_on = logged_on,
	.step_end = step_end,
	.ramp_over = ramp_over,
	.next_users = next_users,
	.report = report,
	.release = release,
};
