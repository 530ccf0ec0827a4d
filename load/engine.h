/* load/engine.h: the built-in load driver on one client (`provision load`; docs/load.md).
 *
 * Every user gets its own SMB connection to its own alias (smb/async.h: one thread, one epoll
 * set, no thread or process per user), logs on as itself, learns its home tree (one listing of
 * static/, its folders, volatile/ and new/) and then, once told to go, runs its schedule
 * (load/model.h) for the duration: a scenario at a time, each a short sequence of SMB requests
 * in its own tree only. The figures of every interval (load/stats.h) go to a callback; the
 * caller prints them. Never prints, never exits. */
#ifndef PV_LOAD_ENGINE_H
#define PV_LOAD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "load/model.h"
#include "load/stats.h"
#include "util/secret.h"

struct pv_load_user {
	const char *name;  /* the domain user: cli1-u3 */
	const char *alias; /* what it connects to: srvu3 */
	const char *share; /* the share its tree is in: fsroot2 */
	unsigned number;   /* n of its name: its schedule's seed */
};

struct pv_load_opts {
	const struct pv_load_config *cfg;
	const char *client;	/* this client's name (schedules' seeds) */
	const char *workgroup;	/* the users' domain (NetBIOS) */
	const char *realm;	/* cfg->auth kerberos: the users' realm (LAB.TEST) */
	const char *kdc;	/* and its KDC's address: a private Kerberos profile names it (the
				 * client's own krb5.conf is neither needed nor read); NULL: none */
	const char *dns_domain; /* the realm's DNS domain (lab.test) */
	const struct pv_secret *password;
	const struct pv_load_user *users;
	size_t nusers;
	double duration;   /* seconds of load once told to go */
	int timeout_ms;	   /* per SMB request and per opening; 0: 10 s */
	unsigned parallel; /* connections opening at once; 0: 64 */
	/* not the schedules (a bench beside smbtorture's): every user, one request after the
	 * other as fast as the server answers, for the duration, either opens, writes 4 KiB to
	 * and closes its own file in new/ (pv-bench-<user>.dat), or opens and closes its share's
	 * root folder (one path shared by every user of the share, as smbtorture's
	 * path-contention-shared does); *ops counts the requests answered */
	enum { PV_LOAD_SCHEDULES = 0, PV_LOAD_OPS_WRITE, PV_LOAD_OPS_OPEN } ops_loop;
	uint64_t *ops;
	/* the caller's side, asked from the loop */
	void *arg;
	bool (*stop)(void *arg); /* stop now (stdin ended, a signal): the figures so far end it */
	bool (*go)(void *arg);	 /* start the schedules (asked once every user is ready) */
	/* every user opened or failed: how many of each, the first failure's message */
	int (*ready)(void *arg, unsigned connected, unsigned failed, const char *first_error);
	int (*emit)(void *arg, const struct pv_load_figs *f); /* each interval, and the last */
};

/* Open, learn, wait for go, run, close. PV_OK when the duration ran (users that failed are in
 * the figures); PV_ESTOPPED when stop() said so; PV_EIO and the like when the loop itself
 * failed; a callback's non-zero return is returned. */
int pv_load(const struct pv_load_opts *o);

#endif
