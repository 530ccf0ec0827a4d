/* load/worker.c: a worker, a thread with its own event loop and its share of the users: the
 * phases the coordinator tells it (log on, run, drain, close), and its users' state and counts,
 * which the coordinator reads under the worker's lock. */
#include "load/engine_internal.h"

#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>

/* Every change of a user's state goes here: the worker's counts of its active users follow. */
void user_set_state(struct user *u, enum ustate st)
{
	struct worker *w = u->w;
	bool was_conn = u->st >= U_LEARNING && u->st <= U_BUSY,
	     now_conn = st >= U_LEARNING && st <= U_BUSY;
	bool was_fail = u->st == U_FAILED || u->st == U_OFF,
	     now_fail = st == U_FAILED || st == U_OFF;

	if (u->active && (was_conn != now_conn || was_fail != now_fail)) {
		pthread_mutex_lock(&w->lock);
		w->connected = w->connected - was_conn + now_conn;
		w->failed = w->failed - was_fail + now_fail;
		pthread_mutex_unlock(&w->lock);
	}
	if (was_conn && st == U_FAILED)
		logon_lost(u);
	u->st = st;
}

/* A request of u's scenario went out: counted as its kind's. */
void user_count_op(struct user *u, enum pv_load_op op)
{
	struct worker *w = u->w;

	if (u->st != U_BUSY || u->e->o->ops_loop)
		return;
	pthread_mutex_lock(&w->lock);
	w->figs.kind[u->kind].ops[op]++;
	pthread_mutex_unlock(&w->lock);
}

void user_fail(struct user *u, const char *msg)
{
	struct worker *w = u->w;

	pthread_mutex_lock(&w->lock);
	if (!w->first_error[0])
		snprintf(w->first_error, sizeof(w->first_error), "%s: %s", u->info.name, msg);
	if (u->st == U_OPENING)
		w->logon.failed++;
	pthread_mutex_unlock(&w->lock);
	if (u->st == U_OPENING || u->st == U_LEARNING)
		w->pending--;
	user_set_state(u, U_FAILED);
	if (u->due < w->wake)
		w->wake = u->due;
	pv_log(PV_LOG_DEBUG, "load: %s: %s", u->info.name, msg);
}

/* The worker's loop for up to ms: whether it went well (else w->err, w->errmsg say why). */
bool worker_turn(struct worker *w, int ms)
{
	return worker_wait(w, ms / 1000.0);
}

/* ... for up to seconds, to the microsecond (a learned client time's wait). */
bool worker_wait(struct worker *w, double seconds)
{
	int r = pv_smb_loop_wait(w->l, seconds);

	if (r == PV_OK)
		return true;
	pthread_mutex_lock(&w->lock);
	snprintf(w->errmsg, sizeof(w->errmsg), "%s", pv_errmsg());
	w->err = r;
	pthread_mutex_unlock(&w->lock);
	return false;
}

/* ---- a worker's phases ---- */

bool worker_running(const struct worker *w)
{
	return w->phase == PH_RUN; /* as the worker saw it at its turn's start */
}

/* PH_RUN begins: every active user's schedule from its start (a step is the same whatever
 * steps came before it: a run can be repeated and steps compared), the first due after t0. */
static void run_begin(struct worker *w, double t0)
{
	const struct pv_load_opts *o = w->e->o;

	w->t0 = t0;
	w->wake = t0;
	for (size_t i = 0; i < w->n; i++) {
		struct user *u = w->users[i];
		double gap;

		if (!u->active)
			continue;
		pv_load_sched_init(&u->sched, o->cfg, o->client, u->info.number);
		u->rng = u->sched.rng;
		u->rng.s[3] ^= 0x5bd1e995u; /* picks: another stream than the schedule's */
		pv_load_next(&u->sched, &gap, &u->next);
		u->due = u->planned = t0 + gap;
		u->think = -1;
		u->lrng = u->sched.rng;
		u->lrng.s[2] ^= 0x27d4eb2fu; /* logons: a third stream */
		u->crng = u->sched.rng;
		u->crng.s[1] ^= 0x85ebca6bu; /* learned client times: a fourth */
		u->relogon_at = logon_next(u, t0);
		if (o->ops_loop && u->st == U_IDLE)
			ops_start(u, t0);
	}
}

/* One turn of PH_RUN: the users due started (the users are looked at only when one is due:
 * scenario_end() and user_fail() bring w->wake forward; with thousands of users, not at every
 * answer), then the loop until the next is due. */
static void run_turn(struct worker *w)
{
	double t = pv_now(), wait;

	if (w->e->o->ops_loop) {
		/* each user goes on from its answers: the loop sleeps until one comes. Polling
		 * instead (a 0 ms wait) looked cheaper only with the server on the same CPUs, where
		 * a sleep hands the CPU to the smbd just woken; with the server on a CPU of its
		 * own, as on machines of their own, the polling burned the client's CPU: 35.6 us a
		 * request against smbtorture's 17.9 (bench/load.sh PIN, 2026-12-03).
		 * Its answers are taken in batches (pv_load_ops_batch_us): the ops loop measures
		 * operations, not their latency. */
		unsigned us = pv_load_ops_batch_us(w->n, pv_smb_loop_ready(w->l));

		if (us) {
			struct timespec ts = {0, (long)us * 1000L};

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			worker_wait(w, 0);
			return;
		}
		worker_turn(w, TURN_MS);
		return;
	}
	if (t >= w->wake) {
		w->wake = HUGE_VAL;
		for (size_t i = 0; i < w->n; i++) {
			struct user *u = w->users[i];

			if (!u->active)
				continue;
			if (u->st == U_BUSY && u->pause_at > 0) /* a learned client time */
				scenario_go_on(u, t);
			/* a learned workload's logon comes first: the activity due waits for it */
			if (u->st == U_IDLE && u->relogon_at <= t)
				logon_again(w, u);
			if (u->due <= t && u->st == U_IDLE)
				scenario_start(u, t);
			else
				/* a connection lost: what falls due goes unserved (the logon of a
				 * learned workload's rate is waited for: those start late) */
				while (u->due <= t &&
				       (u->st == U_FAILED || u->st == U_OFF ||
					(u->st == U_OPENING && u->relog && !u->relogon)))
					scenario_unserved(u);
			if (u->st == U_FAILED && u->lost && u->retry_at <= t)
				logon_relog(w, u);
			/* (one logging on at the workload's rate: on_ready wakes the loop) */
			if (u->st != U_BUSY && !u->relogon && u->due < w->wake)
				w->wake = u->due;
			if (u->st == U_IDLE && u->relogon_at < w->wake)
				w->wake = u->relogon_at;
			if (u->st == U_FAILED && u->lost && u->retry_at < w->wake)
				w->wake = u->retry_at;
		}
	}
	t = pv_now();
	wait = w->wake - t;
	worker_wait(w, wait <= 0 ? 0 : wait < TURN_MS / 1000.0 ? wait : TURN_MS / 1000.0);
}

/* One turn of PH_DRAIN: no new scenario; whether none is under way any more. */
static bool drain_turn(struct worker *w)
{
	double t = pv_now();

	for (size_t i = 0; i < w->n; i++) {
		scenario_drop(w->users[i]); /* held for a logon again: not to go on now */
		if (w->users[i]->st == U_BUSY && w->users[i]->pause_at > 0)
			scenario_go_on(w->users[i], t); /* a learned client time's wait over */
	}
	for (size_t i = 0; i < w->n; i++)
		if (w->users[i]->st == U_BUSY) {
			worker_turn(w, TURN_MS);
			return false;
		}
	return true;
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct engine *e = w->e;
	unsigned seen = 0;
	bool done = true;

	/* a learned workload's waits (its gaps, to the microsecond) wake when they are due, not
	 * up to the 50 us a thread's timers may otherwise slip to be merged with others */
	if (e->o->cfg->learned.n)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	for (;;) {
		enum phase ph;
		unsigned gen;
		double t0;
		size_t step_n;

		pthread_mutex_lock(&e->lock);
		ph = e->phase;
		gen = e->gen;
		t0 = e->t0;
		step_n = e->step_n;
		pthread_mutex_unlock(&e->lock);
		w->phase = ph;
		if (ph == PH_QUIT)
			break;
		if (gen != seen) {
			seen = gen;
			done = false;
			if (ph == PH_LOGON)
				logon_begin(w, step_n);
			else if (ph == PH_RUN)
				run_begin(w, t0);
		}
		if (w->err == PV_OK && !done) {
			switch (ph) {
			case PH_LOGON:
				done = logon_turn(w);
				break;
			case PH_RUN:
				run_turn(w); /* the coordinator ends it */
				break;
			case PH_DRAIN:
				done = drain_turn(w);
				break;
			case PH_CLOSE:
				for (size_t i = 0; i < w->n; i++)
					if (w->users[i]->st != U_OFF)
						logon_disconnect(w->users[i]);
				done = true;
				break;
			default:
				done = true;
			}
			if (done) {
				pthread_mutex_lock(&w->lock);
				w->done_gen = gen;
				pthread_mutex_unlock(&w->lock);
				pthread_mutex_lock(&e->lock);
				pthread_cond_broadcast(&e->cond);
				pthread_mutex_unlock(&e->lock);
			}
			continue;
		}
		/* done, or its loop failed: its connections still served, until the next phase */
		if (w->err != PV_OK) {
			pthread_mutex_lock(&w->lock);
			w->done_gen = gen;
			pthread_mutex_unlock(&w->lock);
			pthread_mutex_lock(&e->lock);
			pthread_cond_broadcast(&e->cond);
			while (e->gen == gen && e->phase != PH_QUIT)
				pthread_cond_wait(&e->cond, &e->lock);
			pthread_mutex_unlock(&e->lock);
			continue;
		}
		worker_turn(w, TURN_MS);
	}
	return NULL;
}
