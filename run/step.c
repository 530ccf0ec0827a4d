/* run/step.c: one step of a run (see run.h): every host's command rendered by the driver and
 * started at once (the controller's once the clients' run), every client's "ready" awaited when
 * the driver has one, the step held for warmup + duration while the hosts are watched for
 * ending, failing or falling silent, then every command stopped, the watches' samples of
 * the step written (the server's, the DC's), and the driver's figures taken. */
#include "run/internal.h"

#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLICE_MS 200

const char *pv_run_state_name(enum pv_run_state s)
{
	static const char *const names[] = {"not started", "done", "failed", "stopped", "lost"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

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

double pv_run_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void pv_run_host_init(struct run *R, struct steprun *st, struct hostrun *x, size_t i)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_run_host *h = x->h;

	h->exit = -1;
	if (i < pb->nclients) {
		h->name = pb->clients[i].name;
		h->users = pv_run_ramp_share(st->step->users, pb->nclients, i);
		x->host = &pb->clients[i];
		x->rem = R->rems ? R->rems[i] : NULL;
	} else {
		h->name = "controller";
		h->controller = true;
		x->host = pb->controller.host.name ? &pb->controller.host : NULL;
		x->rem = R->ctl_rem;
	}
	pv_buf_secret(&x->input);
	snprintf(x->base, sizeof(x->base), "%s-%s", R->base, h->name);
	snprintf(x->dir, sizeof(x->dir), "%s/%s", x->base, st->rel);
}

/* The step's hosts: the clients, and the controller when the driver runs a command there. */
static int step_hosts(struct run *R, struct steprun *st)
{
	const struct pv_playbook *pb = R->pb;
	struct pv_run_step *step = st->step;
	size_t nh = pb->nclients +
		    (R->drv == &pv_run_driver_command && pb->driver.controller_command ? 1 : 0);
	int r;

	step->hosts = calloc(nh, sizeof(*step->hosts));
	st->hr = calloc(nh, sizeof(*st->hr));
	if (!step->hosts || !st->hr)
		return pv_error(PV_EIO, "out of memory");
	step->nhosts = st->n = nh;
	for (size_t i = 0; i < nh; i++) {
		struct hostrun *x = &st->hr[i];

		x->st = st;
		x->h = &step->hosts[i];
		pv_run_host_init(R, st, x, i);
		if ((r = R->drv->render(R, st, x)) != PV_OK)
			return r;
	}
	return pv_run_sink_mkdir(&R->sink, st->rel);
}

/* Clients first, all at once; the controller once they run. */
static void step_start(struct run *R, struct steprun *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct hostrun *x = &st->hr[i];

		if (x->h->controller) {
			bool waiting = true;

			pthread_mutex_lock(&st->lock);
			while (waiting) {
				waiting = false;
				for (size_t j = 0; j < st->n; j++)
					if (!st->hr[j].h->controller && !st->hr[j].running &&
					    !st->hr[j].ended)
						waiting = true;
				if (waiting)
					pthread_cond_wait(&st->cond, &st->lock);
			}
			pthread_mutex_unlock(&st->lock);
		}
		x->last_seen = pv_now();
		x->thread_ok = pthread_create(&x->thread, NULL, R->drv->host, x) == 0;
		if (!x->thread_ok)
			pv_run_host_fail(x->h, PV_RUN_NOT_STARTED, PV_EIO, "cannot start a thread");
	}
}

/* Every client logs its users on and says ready; then all go at once. */
static void step_ready(struct run *R, struct steprun *st)
{
	struct pv_run_step *step = st->step;
	struct pv_progress prog;

	pv_progress_start(&prog, "run", "users", step->users);
	pthread_mutex_lock(&st->lock);
	while (R->drv->ready && !R->drv->ready(st) && !pv_env_stopped(R->env) &&
	       !(R->deadline && pv_now() >= R->deadline)) {
		unsigned n = R->drv->logged_on ? R->drv->logged_on(st) : 0;
		struct timespec ts;

		pthread_mutex_unlock(&st->lock);
		pv_progress_detail(&prog, "step %u/%zu, %u users: %u logged on", step->n, R->ramp.n,
				   step->users, n);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SLICE_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&st->lock);
		pthread_cond_timedwait(&st->cond, &st->lock, &ts);
	}
	st->go = true;
	st->go_at = pv_now();
	pthread_mutex_unlock(&st->lock);
	pv_progress_end(&prog);
	pv_log(PV_LOG_INFO, "run: step %u: the load goes", step->n);
}

/* Why the step should end now, or NULL; *code for a stop or a timeout. Under st->lock. */
static const char *step_over(struct run *R, struct steprun *st, double end, int *code)
{
	bool all_ended = true, any_lost = false, any_failed = false;
	size_t gone = 0;
	double now = pv_now();

	for (size_t i = 0; i < st->n; i++) {
		const struct hostrun *x = &st->hr[i];
		bool lost = x->silent || x->h->state == PV_RUN_LOST,
		     failed = x->h->state == PV_RUN_FAILED ||
			      (x->ended && x->h->state == PV_RUN_NOT_STARTED);

		all_ended &= x->ended || !x->thread_ok;
		any_lost |= lost;
		any_failed |= failed;
		gone += lost || failed;
	}
	/* a driver that goes on without a lost client: the step ends when every one is gone */
	if (R->drv->goes_on && gone < st->n)
		any_lost = any_failed = false;
	if (pv_env_stopped(R->env)) {
		*code = PV_ESTOPPED;
		return "stopped";
	}
	if (R->deadline && now >= R->deadline) {
		*code = PV_ETIMEOUT;
		return "timeout";
	}
	if (any_lost)
		return "host lost";
	if (any_failed)
		return "command failed";
	if (all_ended)
		return "commands ended";
	return now >= end ? "duration" : NULL;
}

/* The server's CPU now, for the progress line: -1 when unknown. */
static double server_cpu(struct run *R, double now)
{
	struct pv_run_watch_sample *s = NULL;
	size_t n = 0;
	double cpu;

	pv_run_watch_window(R->watch, now - 3.0 * R->pb->driver.watch, now, &s, &n);
	cpu = n ? s[n - 1].v[PV_RUN_W_CPU] : -1;
	free(s);
	return cpu;
}

/* Hold the step until it is over (step->ended says why); the code of a stop or a timeout. */
static int step_follow(struct run *R, struct steprun *st, double t0)
{
	const struct pv_playbook_driver *d = &R->pb->driver;
	struct pv_run_step *step = st->step;
	double end = t0 + d->warmup + d->duration + R->drv->grace, cpu_at = 0, cpu = -1;
	struct pv_progress prog;
	int code = PV_OK;

	pv_progress_start(&prog, "run", "s", (unsigned long)(end - t0));
	for (;;) {
		double now = pv_now();

		pthread_mutex_lock(&st->lock);
		step->ended = step_over(R, st, end, &code);
		st->over = step->ended != NULL;
		pthread_mutex_unlock(&st->lock);
		if (step->ended)
			break;
		if (R->watch && now - cpu_at >= 1) {
			cpu = server_cpu(R, now);
			cpu_at = now;
		}
		if (cpu >= 0)
			pv_progress_detail(
				&prog, "step %u/%zu, %u users: %.0f/%.0f s, server CPU %.0f%%",
				step->n, R->ramp.n, step->users, now - t0, end - t0, cpu);
		else
			pv_progress_detail(&prog, "step %u/%zu, %u users: %.0f/%.0f s", step->n,
					   R->ramp.n, step->users, now - t0, end - t0);
		usleep(SLICE_MS * 1000);
	}
	pv_log(PV_LOG_INFO, "run: step %u ends (%s): stopping the commands and gathering results",
	       step->n, step->ended);
	for (size_t i = 0; i < st->n; i++)
		if (st->hr[i].thread_ok)
			pthread_join(st->hr[i].thread, NULL);
	pv_progress_end(&prog);
	return code;
}

/* A watch's samples of the step: its summary (*samples, stat), <name>.csv and <name>.json;
 * error keeps the first failure of the watch. */
static void one_watch(struct run *R, struct steprun *st, struct pv_run_watch *w, const char *name,
		      double t0, double t1, size_t *samples,
		      struct pv_run_watch_stat stat[PV_RUN_W_COUNT], char *error, size_t errlen)
{
	const struct pv_playbook_driver *d = &R->pb->driver;
	struct pv_run_watch_sample *s = NULL;
	struct pv_buf csv = PV_BUF_INIT;
	size_t n = 0, from = 0;
	char *json = NULL, file[32];
	int r;

	if (!w)
		return;
	r = pv_run_watch_window(w, t0, t1, &s, &n);
	if (r != PV_OK && !error[0])
		snprintf(error, errlen, "%s", pv_errmsg());
	while (from < n && s[from].t < t0 + d->warmup)
		from++;
	*samples = n - from;
	pv_run_watch_summarize(s + from, n - from, stat);
	snprintf(file, sizeof(file), "%s.csv", name);
	if (pv_run_watch_csv(s, n, t0, t0 + d->warmup, &csv) == PV_OK)
		pv_run_sink_write(&R->sink, st->rel, file, csv.data, csv.len, false);
	snprintf(file, sizeof(file), "%s.json", name);
	if (pv_run_watch_json(s + from, n - from, d->watch, stat, &json) == PV_OK)
		pv_run_sink_write(&R->sink, st->rel, file, json, strlen(json), false);
	free(json);
	pv_buf_release(&csv, 0);
	free(s);
}

/* The watches' samples of the step: the server's (watch.csv, watch.json) and the DC's
 * (watch-dc.csv, watch-dc.json), with the same columns and keys. */
static void step_watch(struct run *R, struct steprun *st, double t0, double t1)
{
	struct pv_run_step *step = st->step;

	one_watch(R, st, R->watch, "watch", t0, t1, &step->samples, step->watch,
		  R->res->watch_error, sizeof(R->res->watch_error));
	one_watch(R, st, R->dc_watch, "watch-dc", t0, t1, &step->dc_samples, step->dc_watch,
		  R->res->dc_watch_error, sizeof(R->res->dc_watch_error));
}

/* The step's outcome from its hosts' states: its code, its message recorded. */
static int step_outcome(struct run *R, struct steprun *st, int code)
{
	struct pv_run_step *step = st->step;
	size_t failed = 0, lost = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct pv_run_host *h = &step->hosts[i];

		lost += h->state == PV_RUN_LOST;
		failed += h->state == PV_RUN_FAILED || h->state == PV_RUN_NOT_STARTED;
		if (h->code != PV_OK)
			pv_log(PV_LOG_WARN, "run: step %u: %s: %s", step->n, h->name, h->msg);
	}
	if (code == PV_OK && lost)
		code = PV_EPARTIAL;
	if (code == PV_OK && failed)
		code = failed == st->n ? PV_EREMOTE : PV_EPARTIAL;
	for (size_t i = 0; i < st->n && code == PV_OK; i++)
		code = step->hosts[i].code; /* results not gathered */
	if (code == PV_ESTOPPED)
		return pv_error(code,
				"run stopped (Ctrl-C or SIGTERM) during step %u: every command "
				"was stopped; the results so far are in %s",
				step->n, R->sink.path);
	if (code == PV_ETIMEOUT)
		return pv_error(code,
				"the run's timeout (driver.timeout, --timeout: %d s) passed "
				"during step %u: every command was stopped; the results so far "
				"are in %s",
				R->pb->driver.timeout, step->n, R->sink.path);
	for (size_t i = 0; i < st->n && code != PV_OK; i++)
		if (step->hosts[i].code != PV_OK)
			return pv_error(code, "step %u: %s: %s%s; the results so far are in %s",
					step->n, step->hosts[i].name, step->hosts[i].msg,
					lost ? " (the other hosts were stopped)" : "",
					R->sink.path);
	return code;
}

int pv_run_step_run(struct run *R, size_t si)
{
	struct pv_run_step *step = &R->res->steps[si];
	struct steprun st;
	double t0;
	int r;

	memset(&st, 0, sizeof(st));
	st.run = R;
	st.step = step;
	pthread_mutex_init(&st.lock, NULL);
	pthread_cond_init(&st.cond, NULL);
	step->n = (unsigned)si + 1;
	step->users = R->ramp.totals[si];
	snprintf(st.rel, sizeof(st.rel), "step-%02u", step->n);
	if ((r = step_hosts(R, &st)) == PV_OK) {
		pv_log(PV_LOG_INFO, "run: step %u/%zu: %u users on %zu clients", step->n, R->ramp.n,
		       step->users, R->pb->nclients);
		step->start = pv_run_wall();
		step_start(R, &st);
		if (R->drv->ready) {
			step_ready(R, &st);
			step->start = pv_run_wall();
		}
		t0 = pv_now();
		r = step_follow(R, &st, t0);
		step->end = pv_run_wall();
		step_watch(R, &st, t0, pv_now());
	}
	if (R->drv->step_end)
		R->drv->step_end(R, &st);
	if (step->start > 0)
		r = step_outcome(R, &st, r);
	/* results that could not be kept (the controller's disk full): the run stops here,
	 * what it has is left as it is */
	if (R->sink.failed && r != PV_ESTOPPED)
		r = pv_error(PV_EIO,
			     "the run's results could not be written on the controller (%s): the "
			     "run stopped after step %u; what it gathered is in %s (provision "
			     "report reads it)",
			     R->sink.fail, step->n, R->sink.path);
	for (size_t i = 0; i < st.n; i++) {
		pv_buf_release(&st.hr[i].cmd, 0);
		pv_buf_release(&st.hr[i].input, 1);
	}
	free(st.hr);
	pthread_mutex_destroy(&st.lock);
	pthread_cond_destroy(&st.cond);
	return r;
}
