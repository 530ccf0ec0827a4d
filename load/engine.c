/* load/engine.c: the built-in load driver on one client (see engine.h, docs/load.md): the
 * coordinator, and pv_load. The engine's files are listed in engine_internal.h.
 *
 * Threads: the caller's (the coordinator: steps, the caller's callbacks, the intervals' figures)
 * and one per event loop (a worker: its share of the users, their connections and scenarios).
 * A worker touches only its own users and loop; what the coordinator reads of it (its
 * figures, its users' counts, its logons, the phase it finished) is under its lock. The
 * coordinator says what to do by the engine's phase, under the engine's lock. */
#include "load/engine_internal.h"

#include "fileset/fileset.h"
#include "krb/krb.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/progress.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DRAIN_SECS  10.0 /* at the end, how long scenarios in flight may take to finish */
#define THREADS_MAX PV_PLAYBOOK_WORKLOAD_THREADS_MAX

/* ---- the coordinator ---- */

static void user_free(struct user *u)
{
	if (!u)
		return;
	pv_krb_sec_free(u->krb);
	files_free(&u->names);
	files_free(&u->dirs);
	files_free(&u->sfiles);
	free(u->by_size);
	files_free(&u->vfiles);
	files_free(&u->made);
	files_free(&u->todo);
	free((char *)u->info.name);
	free((char *)u->info.alias);
	free((char *)u->info.share);
	free(u);
}

/* The workers told to stop, joined; their loops (closing every connection) and users freed. */
static void engine_free(struct engine *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->lock);
	e->phase = PH_QUIT;
	e->gen++;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	for (unsigned i = 0; e->w && i < e->nw; i++) {
		struct worker *w = &e->w[i];

		if (w->started)
			pthread_join(w->t, NULL);
		/* the users first: closing the loop answers their requests, to client_done */
		for (size_t j = 0; j < w->n; j++)
			w->users[j]->st = U_OFF;
		pv_smb_loop_free(w->l);
		free(w->users);
		free(w->again);
		pthread_mutex_destroy(&w->lock);
	}
	for (size_t i = 0; i < e->n; i++)
		user_free(e->users[i]);
	free(e->users);
	free(e->w);
	replay_free(e->replay);
	pthread_mutex_destroy(&e->lock);
	pthread_cond_destroy(&e->cond);
	free(e);
}

/* How many loops: asked for, or one per core this process may run on. */
static unsigned threads_of(const struct pv_load_opts *o)
{
	unsigned n = o->threads ? o->threads : o->cfg->threads;
	cpu_set_t set;

	if (!n)
		n = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	return n < 1 ? 1 : n > THREADS_MAX ? THREADS_MAX : n;
}

/* The engine, its workers (their threads started, idle) and the bytes writes write. */
static int engine_new(const struct pv_load_opts *o, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	struct pv_load_rng fill;
	struct timespec ts;
	int r = PV_OK;

	if (!e)
		return pv_error(PV_EIO, "out of memory");
	e->o = o;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(e->run, sizeof(e->run), "%lx%04lx", (long)ts.tv_sec,
		 (long)(ts.tv_nsec / 100000) & 0xffff);
	e->run_id = pv_hash_fnv64(PV_HASH_FNV64_INIT, e->run, strlen(e->run));
	/* what writes write: bytes that do not compress, the same on every run */
	fill.s[0] = 0x9e3779b97f4a7c15ull;
	fill.s[1] = 0xbf58476d1ce4e5b9ull;
	fill.s[2] = 0x94d049bb133111ebull;
	fill.s[3] = 1;
	for (size_t i = 0; i < sizeof(e->data); i += 8) {
		uint64_t v = pv_load_rng_next(&fill);

		memcpy(e->data + i, &v, 8);
	}
	if ((r = replay_new(o->cfg, &e->replay)) != PV_OK) {
		free(e);
		return r;
	}
	e->nw = threads_of(o);
	if (!(e->w = calloc(e->nw, sizeof(*e->w)))) {
		replay_free(e->replay);
		free(e);
		return pv_error(PV_EIO, "out of memory");
	}
	for (unsigned i = 0; i < e->nw; i++) {
		pthread_mutex_init(&e->w[i].lock, NULL);
		e->w[i].e = e;
	}
	for (unsigned i = 0; i < e->nw && r == PV_OK; i++) {
		struct worker *w = &e->w[i];

		if ((r = pv_smb_loop_new(&w->l)) != PV_OK)
			break;
		if (pthread_create(&w->t, NULL, worker_main, w) != 0) {
			r = pv_error(PV_EIO, "cannot start a thread for the load");
			break;
		}
		w->started = true;
		if (pthread_getcpuclockid(w->t, &w->clock) != 0)
			w->clock = (clockid_t)-1;
	}
	if (r != PV_OK) {
		engine_free(e);
		return r;
	}
	*out = e;
	return PV_OK;
}

/* The array at *arrp (of *cap elements of size bytes) grown to hold need, doubling from 16;
 * -1 when out of memory (the array as it was). */
int engine_grow(void *arrp, size_t *cap, size_t need, size_t size)
{
	void **arr = arrp, *p;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(p = realloc(*arr, c * size)))
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

/* The caller's users from e->n on: each a copy, given to the loops in turn. */
static int add_users(struct engine *e, const struct pv_load_user *users, size_t total)
{
	for (size_t i = e->n; i < total; i++) {
		struct worker *w = &e->w[i % e->nw];
		struct user *u;
		size_t wcap = w->cap;

		if (engine_grow(&e->users, &e->cap, e->n + 1, sizeof(*e->users)) ||
		    !(u = calloc(1, sizeof(*u))))
			return pv_error(PV_EIO, "out of memory");
		e->users[e->n++] = u;
		u->e = e;
		u->w = w;
		u->index = i;
		u->st = U_OFF;
		u->info.number = users[i].number;
		if (!(u->info.name = strdup(users[i].name)) ||
		    !(u->info.alias = strdup(users[i].alias)) ||
		    !(u->info.share = strdup(users[i].share)))
			return pv_error(PV_EIO, "out of memory");
		pthread_mutex_lock(&w->lock);
		if (engine_grow(&w->users, &w->cap, w->n + 1, sizeof(*w->users)) ||
		    engine_grow(&w->again, &wcap, w->n + 1, sizeof(*w->again))) {
			pthread_mutex_unlock(&w->lock);
			return pv_error(PV_EIO, "out of memory");
		}
		w->users[w->n++] = u;
		pthread_mutex_unlock(&w->lock);
	}
	return PV_OK;
}

/* Every worker told to do ph; with wait, until all are done with it. PV_OK then; PV_ESTOPPED
 * when stop() says so first (when asked: stoppable), PV_ETIMEOUT at the deadline (0: none), a
 * loop's failure with its message. */
static int phase_all(struct engine *e, enum phase ph, bool wait, bool stoppable, double deadline)
{
	const struct pv_load_opts *o = e->o;
	unsigned gen;

	pthread_mutex_lock(&e->lock);
	e->phase = ph;
	gen = ++e->gen;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	while (wait) {
		bool all = true;
		struct timespec ts;

		for (unsigned i = 0; i < e->nw; i++) {
			struct worker *w = &e->w[i];

			pthread_mutex_lock(&w->lock);
			all &= w->done_gen == gen;
			if (w->err != PV_OK) {
				int err = w->err;

				pthread_mutex_unlock(&w->lock);
				return pv_error(err, "a load loop failed: %s", w->errmsg);
			}
			pthread_mutex_unlock(&w->lock);
		}
		if (all)
			break;
		if (stoppable && o->stop && o->stop(o->arg))
			return PV_ESTOPPED;
		if (deadline > 0 && pv_now() >= deadline)
			return PV_ETIMEOUT;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += TURN_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&e->lock);
		pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		pthread_mutex_unlock(&e->lock);
	}
	return PV_OK;
}

bool pv_load_host_ticks(uint64_t *busy, uint64_t *total)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return false;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4]; /* idle and iowait: not busy */
	return true;
}

/* What the driver has cost so far: the process's CPU, each loop's, the host's. */
struct meter {
	double t, proc, loop[THREADS_MAX];
	uint64_t busy, total;
	bool host;
};

static double cpu_secs(clockid_t c)
{
	struct timespec ts;

	if (c == (clockid_t)-1 || clock_gettime(c, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void meter_read(const struct engine *e, struct meter *m)
{
	m->t = pv_now();
	m->proc = cpu_secs(CLOCK_PROCESS_CPUTIME_ID);
	for (unsigned i = 0; i < e->nw; i++)
		m->loop[i] = cpu_secs(e->w[i].clock);
	m->host = pv_load_host_ticks(&m->busy, &m->total);
}

/* The loops' counts since the last take into f (interval seq), with the users' state now and
 * what the driver cost since *m (which becomes now). */
static void take(struct engine *e, struct meter *m, uint64_t seq, struct pv_load_figs *f)
{
	struct meter now;
	double secs;

	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < e->nw; i++) {
		struct worker *w = &e->w[i];

		pthread_mutex_lock(&w->lock);
		pv_load_figs_merge(f, &w->figs);
		f->connected += w->connected;
		f->failed += w->failed;
		memset(&w->figs, 0, sizeof(w->figs));
		pthread_mutex_unlock(&w->lock);
	}
	meter_read(e, &now);
	secs = now.t - m->t > 1e-6 ? now.t - m->t : 1e-6;
	f->seq = seq;
	f->secs = secs;
	f->threads = e->nw;
	f->cpu = (now.proc - m->proc) / secs * 100;
	f->cpu_top = 0;
	for (unsigned i = 0; i < e->nw; i++) {
		double c = (now.loop[i] - m->loop[i]) / secs * 100;

		if (c > f->cpu_top)
			f->cpu_top = c;
	}
	f->host_cpu =
		m->host && now.host && now.total > m->total
			? 100.0 * (double)(now.busy - m->busy) / (double)(now.total - m->total)
			: -1;
	if (f->cpu < 0)
		f->cpu = 0;
	if (f->host_cpu > 100)
		f->host_cpu = 100;
	*m = now;
}

/* The step's users logged on (or failed): what the ready line says. */
static int step_ready(struct engine *e)
{
	struct pv_load_ready *rd = calloc(1, sizeof(*rd));
	int r;

	if (!rd)
		return pv_error(PV_EIO, "out of memory");
	for (unsigned i = 0; i < e->nw; i++) {
		struct worker *w = &e->w[i];

		pthread_mutex_lock(&w->lock);
		rd->connected += w->connected;
		rd->failed += w->failed;
		pv_load_logon_merge(&rd->logon, &w->logon);
		if (!rd->first[0] && w->first_error[0])
			snprintf(rd->first, sizeof(rd->first), "%s", w->first_error);
		if (!rd->spoke[0] && w->spoke[0])
			snprintf(rd->spoke, sizeof(rd->spoke), "%s", w->spoke);
		pthread_mutex_unlock(&w->lock);
	}
	r = e->o->ready ? e->o->ready(e->o->arg, rd) : PV_OK;
	free(rd);
	return r;
}

/* A loop's failure, or PV_OK. */
static int loop_failed(struct engine *e)
{
	for (unsigned i = 0; i < e->nw; i++) {
		struct worker *w = &e->w[i];
		int r;

		pthread_mutex_lock(&w->lock);
		r = w->err != PV_OK ? pv_error(w->err, "a load loop failed: %s", w->errmsg) : PV_OK;
		pthread_mutex_unlock(&w->lock);
		if (r != PV_OK)
			return r;
	}
	return PV_OK;
}

static void nap(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The schedules for the duration, the figures every interval; then no new scenario, those
 * under way finish (DRAIN_SECS at most), the last figures. Whether stop() cut it short in
 * *stopped. */
static int step_run(struct engine *e, struct pv_load_figs *f, bool *stopped)
{
	const struct pv_load_opts *o = e->o;
	double interval = o->cfg->interval ? o->cfg->interval : 1, t0, next, t;
	struct meter m;
	uint64_t seq = 0;
	int r = PV_OK;

	t0 = pv_now();
	pthread_mutex_lock(&e->lock);
	e->t0 = t0;
	pthread_mutex_unlock(&e->lock);
	meter_read(e, &m);
	phase_all(e, PH_RUN, false, false, 0);
	next = t0 + interval;
	while ((t = pv_now()) - t0 < o->duration) {
		double wait;

		if (o->stop && o->stop(o->arg)) {
			*stopped = true;
			break;
		}
		if ((r = loop_failed(e)) != PV_OK)
			return r;
		if (t >= next) {
			take(e, &m, ++seq, f);
			if ((r = o->emit(o->arg, f)) != PV_OK)
				return r;
			while (next <= t) /* boundaries stay on t0's grid */
				next += interval;
		}
		wait = fmin(next, t0 + o->duration) - pv_now();
		nap(wait <= 0 ? 0 : wait * 1000 > TURN_MS ? TURN_MS : (int)(wait * 1000) + 1);
	}
	r = phase_all(e, PH_DRAIN, true, false, pv_now() + DRAIN_SECS);
	if (r != PV_OK && r != PV_ETIMEOUT)
		return r;
	take(e, &m, ++seq, f);
	if ((r = o->emit(o->arg, f)) != PV_OK)
		return r;
	if (*stopped)
		return pv_error(PV_ESTOPPED, "the load was stopped after %.1f s", pv_now() - t0);
	return PV_OK;
}

/* One step of n users: logons, ready, go, the load, done; then its users logged off unless
 * they stay for the next. */
static int step(struct engine *e, size_t n)
{
	const struct pv_load_opts *o = e->o;
	struct pv_load_figs *f;
	bool stopped = false;
	int r;

	pthread_mutex_lock(&e->lock);
	e->step_n = n;
	pthread_mutex_unlock(&e->lock);
	r = phase_all(e, PH_LOGON, true, true, 0);
	if (r == PV_ESTOPPED)
		return pv_error(r, "stopped while the users logged on");
	if (r != PV_OK || (r = step_ready(e)) != PV_OK)
		return r;
	while (o->go && !o->go(o->arg)) {
		if (o->stop && o->stop(o->arg))
			return pv_error(PV_ESTOPPED, "stopped before the load started");
		nap(TURN_MS);
	}
	if (!(f = malloc(sizeof(*f))))
		return pv_error(PV_EIO, "out of memory");
	r = step_run(e, f, &stopped);
	free(f);
	if (r == PV_OK && o->done)
		r = o->done(o->arg);
	if (r == PV_OK && !o->cfg->keep_logged_on)
		r = phase_all(e, PH_CLOSE, true, false, 0);
	else if (r == PV_OK)
		r = phase_all(e, PH_IDLE, false, false, 0);
	return r;
}

int pv_load(const struct pv_load_opts *o)
{
	struct engine *e = NULL;
	struct pv_fileset *fs = NULL;
	int r;

	if (o->fileset && (r = pv_fileset_parse(o->fileset_name ? o->fileset_name : "fileset",
						o->fileset, o->fileset_len, &fs)) != PV_OK)
		return r;
	if (o->cfg->auth == PV_PLAYBOOK_WORKLOAD_KERBEROS) {
		struct pv_krb_target t = {o->realm, o->kdc, o->dns_domain};

		if ((r = pv_krb_setup(&t)) != PV_OK) {
			pv_fileset_free(fs);
			return r;
		}
	}
	if ((r = engine_new(o, &e)) == PV_OK) {
		e->fs = fs;
		for (;;) {
			const struct pv_load_user *users = NULL;
			size_t total = 0, n = 0;

			if ((r = o->next(o->arg, &users, &total, &n)) != PV_OK || !n)
				break;
			if (n > total)
				n = total;
			if ((r = add_users(e, users, total)) != PV_OK || (r = step(e, n)) != PV_OK)
				break;
		}
		if (o->ops) {
			*o->ops = 0;
			for (unsigned i = 0; i < e->nw; i++)
				*o->ops += e->w[i].ops;
		}
	}
	engine_free(e);
	pv_fileset_free(fs);
	pv_krb_cleanup();
	return r;
}
