/* load/logon.c: the users' logons: their connections opened a few at a time (a session with
 * NTLMv2, or Kerberos through SPNEGO, and a tree), tried again when the server was too slow,
 * and a connection that broke in the middle of a step made again with a backoff, as a Windows
 * client does. */
#include "load/engine_internal.h"

#include "krb/krb.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LOGON_TRIES 3	/* a logon the server was too slow for (or reset) is tried again */
#define RELOG_FIRST 0.5 /* seconds before a user whose connection broke logs on again */
#define RELOG_MAX   5.0 /* ... and at most between its tries */

/* u's connection is lost (it broke, or the logon of its learned rate failed): counted, and
 * it logs on again (run_turn) after RELOG_FIRST seconds, backing off. */
static void lost_logon(struct user *u)
{
	struct worker *w = u->w;

	u->lost = true;
	u->relogs = 0;
	u->retry_at = pv_now() + RELOG_FIRST;
	if (u->retry_at < w->wake)
		w->wake = u->retry_at;
	pthread_mutex_lock(&w->lock);
	w->figs.drops++;
	pthread_mutex_unlock(&w->lock);
}

/* A connection that worked broke while the step runs (lost_logon). */
void logon_lost(struct user *u)
{
	if (u->lost || !u->active || !worker_running(u->w) || u->e->o->ops_loop)
		return;
	lost_logon(u);
}

/* When u next logs off and on again after t, at its learned workload's rate
 * (pv_playbook_workload_logons: exponential times, as independent users' logons come);
 * HUGE_VAL when the workload has none. */
double logon_next(struct user *u, double t)
{
	double rate = pv_playbook_workload_logons(u->e->o->cfg);

	if (!(rate > 0))
		return HUGE_VAL;
	return t - log(1 - pv_load_rng_unit(&u->lrng)) * 3600 / rate;
}

static void open_again(struct worker *w, struct user *u);

static void logged_off(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct user *u = arg;

	(void)c;
	(void)d; /* refused or lost, the user logs on anew all the same */
	if (u->st != U_OPENING || !u->relogon) /* closed by us meanwhile */
		return;
	open_again(u->w, u);
}

/* u, idle, logs off (LOGOFF, then its connection closed) and on again on a new connection
 * (on_ready goes on from there), as the users of the capture its learned workload came from
 * did; the scenarios that fall due meanwhile wait for it. */
void logon_again(struct worker *w, struct user *u)
{
	user_set_state(u, U_OPENING);
	u->relog = u->relogon = true;
	if (pv_smb_logoff(u->c, logged_off, u) != PV_OK)
		open_again(w, u);
}

/* ---- Kerberos logons ---- */

/* smb/async's SPNEGO callback: the user's initial ticket and a ticket for cifs@<alias> from
 * the KDC (so the alias's SPN that `server` added is what makes this work), then the tokens. */
static int kerberos(void *arg, const uint8_t *in, size_t inlen, struct pv_buf *out, bool *done,
		    uint8_t key[32], size_t *keylen)
{
	struct user *u = arg;
	const struct pv_load_opts *o = u->e->o;
	int r;

	if (!u->krb) {
		char principal[512], service[300];

		snprintf(principal, sizeof(principal), "%s@%s", u->info.name, o->realm);
		snprintf(service, sizeof(service), "cifs@%s", u->info.alias);
		if ((r = pv_krb_sec_start(principal, o->password, service, &u->krb)) != PV_OK)
			return r;
	}
	if ((r = pv_krb_sec_step(u->krb, in, inlen, out, done)) != PV_OK)
		return r;
	if (*done) {
		r = pv_krb_sec_key(u->krb, key, keylen);
		pv_krb_sec_free(u->krb);
		u->krb = NULL;
	}
	return r;
}

/* ---- logons ---- */

/* The playbook's load.encryption as the SMB engine takes it (the same list, in order). */
static enum pv_smb_encrypt encrypt(const struct pv_playbook_workload *c)
{
	switch (c->encryption) {
	case PV_PLAYBOOK_WORKLOAD_ENCRYPT_ON:
		return PV_SMB_ENCRYPT_ON;
	case PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES128_CCM:
		return PV_SMB_ENCRYPT_AES128_CCM;
	case PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES128_GCM:
		return PV_SMB_ENCRYPT_AES128_GCM;
	case PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_CCM:
		return PV_SMB_ENCRYPT_AES256_CCM;
	case PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_GCM:
		return PV_SMB_ENCRYPT_AES256_GCM;
	default:
		return PV_SMB_ENCRYPT_AUTO;
	}
}

static void on_ready(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct user *u = arg;
	struct worker *w = u->w;

	w->opening--;
	if (u->st != U_OPENING) /* closed by us meanwhile */
		return;
	if (u->relog) { /* a connection that broke, or a learned rate's logon: no tree to learn */
		bool planned = u->relogon;

		u->relog = u->relogon = false;
		if (d->code != PV_OK && planned) { /* as a connection lost */
			pv_log(PV_LOG_DEBUG,
			       "load: %s: logging on again (the workload's rate) "
			       "failed (%s)",
			       u->info.name, d->msg ? d->msg : "");
			pv_smb_close_conn(c);
			u->c = NULL;
			pv_krb_sec_free(u->krb);
			u->krb = NULL;
			user_set_state(u, U_FAILED);
			lost_logon(u);
			return;
		}
		if (d->code != PV_OK) {
			double wait = RELOG_FIRST * (double)(1u << (u->relogs < 4 ? u->relogs : 4));

			pv_log(PV_LOG_DEBUG,
			       "load: %s: logging on again failed (%s); next try in %.1f s",
			       u->info.name, d->msg ? d->msg : "",
			       wait < RELOG_MAX ? wait : RELOG_MAX);
			pv_smb_close_conn(c);
			u->c = NULL;
			pv_krb_sec_free(u->krb);
			u->krb = NULL;
			user_set_state(u, U_FAILED);
			u->retry_at = pv_now() + (wait < RELOG_MAX ? wait : RELOG_MAX);
			if (u->retry_at < w->wake)
				w->wake = u->retry_at;
			return;
		}
		u->lost = false;
		pthread_mutex_lock(&w->lock);
		if (planned)
			w->figs.relogons++;
		else
			w->figs.reconnects++;
		pthread_mutex_unlock(&w->lock);
		if (u->resume && worker_running(w)) { /* its scenario held goes on */
			scenario_resume(u);
			return;
		}
		scenario_drop(u);
		user_set_state(u, U_IDLE);
		u->idle_since = pv_now();
		if (u->due < w->wake)
			w->wake = u->due;
		if (planned) {
			/* from when this one was due, not from now: one that waited for an
			 * activity to end (or took long) does not slow the rate down */
			u->relogon_at = logon_next(u, u->relogon_at);
			if (u->relogon_at < w->wake)
				w->wake = u->relogon_at;
		} else
			pv_log(PV_LOG_DEBUG, "load: %s: logged on again after %u tr%s",
			       u->info.name, u->relogs, u->relogs == 1 ? "y" : "ies");
		return;
	}
	if (d->code == PV_EUNREACH && u->tries < LOGON_TRIES) {
		/* the server too slow to log everyone on at once (a logon storm on its DC) or a
		 * reset: this user tries again once the others have had their turn */
		pv_log(PV_LOG_DEBUG, "load: %s: %s; logging on again (try %u of %u)", u->info.name,
		       d->msg ? d->msg : "the connection failed", u->tries + 1, LOGON_TRIES);
		pv_smb_close_conn(c);
		u->c = NULL;
		pv_krb_sec_free(u->krb);
		u->krb = NULL;
		w->again[w->nagain++] = u;
		return;
	}
	if (d->code != PV_OK) {
		user_fail(u, d->msg ? d->msg : "the connection failed");
		return;
	}
	pthread_mutex_lock(&w->lock);
	pv_load_hist_add(&w->logon.lat, pv_now() - u->logon_t0);
	if (!w->spoke[0])
		snprintf(w->spoke, sizeof(w->spoke), "%s", pv_smb_describe(c));
	pthread_mutex_unlock(&w->lock);
	learn_tree(u);
}

/* The user's connection, if any, closed: nothing of it is waited for. */
void logon_disconnect(struct user *u)
{
	struct pv_smb_conn *c = u->c;

	user_set_state(u, U_OFF);
	u->c = NULL;
	if (!u->resume) /* (a scenario held keeps its durable files: scenario_resume) */
		u->open1 = u->open2 = false;
	pv_smb_close_conn(c); /* its pending answers come to client_done, which drops them */
	pv_krb_sec_free(u->krb);
	u->krb = NULL;
}

/* Whether the user counts as connected, or as failed, among its worker's active users. */
static void set_active(struct user *u, bool active)
{
	struct worker *w = u->w;
	bool conn = u->st >= U_LEARNING && u->st <= U_BUSY,
	     fail = u->st == U_FAILED || u->st == U_OFF;

	if (u->active == active)
		return;
	pthread_mutex_lock(&w->lock);
	if (active) {
		w->connected += conn;
		w->failed += fail;
	} else {
		w->connected -= conn;
		w->failed -= fail;
	}
	pthread_mutex_unlock(&w->lock);
	u->active = active;
}

/* PH_LOGON begins: the step's users are the first step_n of the caller's; those of the
 * worker's without a connection are to log on, the others not in the step are logged off. */
void logon_begin(struct worker *w, size_t step_n)
{
	w->next_open = w->nagain = 0;
	w->pending = 0;
	pthread_mutex_lock(&w->lock);
	memset(&w->logon, 0, sizeof(w->logon));
	w->first_error[0] = '\0';
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < w->n; i++) {
		struct user *u = w->users[i];

		scenario_drop(u); /* held through the last step's end */
		set_active(u, u->index < step_n);
		u->tries = 0;
		u->lost = false; /* a new step: a broken connection is made again at its logon */
		u->relogs = 0;
		if (!u->active) {
			if (u->st != U_OFF)
				logon_disconnect(u);
		} else if (u->st == U_FAILED || u->st == U_OFF ||
			   (u->st == U_OPENING && u->relog) ||
			   (u->st == U_IDLE && !pv_smb_usable(u->c))) {
			/* no connection, or one lost between the steps (kept logged on), or one
			 * being made again since it broke in the last step */
			logon_disconnect(u);
			u->relog = u->relogon = false;
			user_set_state(u, U_OPENING);
			w->pending++;
		}
	}
}

/* u's connection opened (its logon and tree: on_ready goes on from there). */
static int open_user(struct worker *w, struct user *u)
{
	const struct pv_load_opts *o = w->e->o;
	struct pv_smb_open_opts so = {u->info.alias, u->info.alias,  u->info.share, o->workgroup,
				      u->info.name,  o->password,    o->timeout_ms, NULL,
				      NULL,	     encrypt(o->cfg)};
	/* one ClientGuid for the user's every connection (the run's name, the user), which a
	 * durable open's claim again needs; the session a broken connection had */
	uint64_t who = (uint64_t)u->index ^ 0x434c4e5400000000ull; /* "CLNT" */
	uint8_t guid[16];

	memcpy(guid, &w->e->run_id, 8);
	memcpy(guid + 8, &who, 8);
	so.client_guid = guid;
	so.prev_session = u->relog && !u->relogon ? u->prev_sid : 0;
	if (o->cfg->auth == PV_PLAYBOOK_WORKLOAD_KERBEROS) {
		so.auth = kerberos;
		so.auth_arg = u;
	}
	if (pv_smb_open(w->l, &so, on_ready, u, &u->c) != PV_OK) {
		u->c = NULL;
		return PV_EUNREACH;
	}
	w->opening++;
	return PV_OK;
}

/* The logon of a learned workload's rate (logon_again): on a new connection; one that cannot
 * be opened is a connection lost, tried again as such. */
static void open_again(struct worker *w, struct user *u)
{
	logon_disconnect(u);
	user_set_state(u, U_OPENING);
	u->relog = u->relogon = true;
	if (open_user(w, u) != PV_OK) {
		u->relog = u->relogon = false;
		user_set_state(u, U_FAILED);
		lost_logon(u);
	}
}

/* A user whose connection broke in the step logs on again (its tree is still what it
 * learnt: no listing). */
void logon_relog(struct worker *w, struct user *u)
{
	if (pv_smb_session(u->c)) /* (none when its last try failed: the one before stays) */
		u->prev_sid = pv_smb_session(u->c);
	logon_disconnect(u);
	user_set_state(u, U_OPENING);
	u->relog = true;
	u->relogs++;
	if (open_user(w, u) != PV_OK) {
		double wait = RELOG_FIRST * (double)(1u << (u->relogs < 4 ? u->relogs : 4));

		u->relog = false;
		user_set_state(u, U_FAILED);
		u->retry_at = pv_now() + (wait < RELOG_MAX ? wait : RELOG_MAX);
	}
}

/* One turn of PH_LOGON: connections opened, parallel at a time (again after the others' turn
 * when the server was too slow). Whether every user is done (logged on and learnt, or failed). */
bool logon_turn(struct worker *w)
{
	const struct pv_load_opts *o = w->e->o;
	unsigned parallel = (o->parallel ? o->parallel : 64) / w->e->nw;

	if (parallel < 1)
		parallel = 1;
	while ((w->next_open < w->n || w->nagain) && w->opening < parallel) {
		struct user *u;

		if (w->next_open < w->n) {
			u = w->users[w->next_open++];
			if (u->st != U_OPENING || u->tries)
				continue;
			u->logon_t0 = pv_now();
		} else {
			u = w->again[--w->nagain];
			pthread_mutex_lock(&w->lock);
			w->logon.retries++;
			pthread_mutex_unlock(&w->lock);
		}
		u->tries++;
		if (open_user(w, u) != PV_OK) {
			user_fail(u, pv_errmsg());
			continue;
		}
	}
	if (!w->pending)
		return true;
	return !worker_turn(w, TURN_MS) || !w->pending;
}
