/* load/engine.h: the built-in load driver on one client (`provision load`; docs/load.md).
 *
 * Every user gets its own SMB connection to its own alias (smb/async.h: no thread or process
 * per user), logs on as itself, learns its home tree (one listing of static/, its folders,
 * volatile/ and new/) and then, once told to go, runs its schedule (load/model.h) for the
 * duration: a scenario at a time, each a short sequence of SMB requests in its own tree only.
 *
 * The users are shared out over several event loops, a thread each (one per core by default),
 * so that a client with many cores is not held to one. The calling thread coordinates them: it
 * runs the steps one after the other as the caller gives them (each step its users, the first
 * n of those given so far), and every interval it takes the loops' counts, merged, with what
 * the driver cost (its CPU, its busiest loop's, the host's, the loops' lag), to a callback.
 * Between steps the users are logged off, or, with keep_logged_on, stay logged on: a step then
 * logs on only the users that have no connection. Never prints, never exits. */
#ifndef PV_LOAD_ENGINE_H
#define PV_LOAD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/line.h"
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
	const struct pv_playbook_workload *cfg;
	const char *client;	/* this client's name (schedules' seeds) */
	const char *workgroup;	/* the users' domain (NetBIOS) */
	const char *realm;	/* cfg->auth kerberos: the users' realm (LAB.TEST) */
	const char *kdc;	/* and its KDC's address: a private Kerberos profile names it (the
				 * client's own krb5.conf is neither needed nor read); NULL: none */
	const char *dns_domain; /* the realm's DNS domain (lab.test) */
	const struct pv_secret *password;
	/* the description the users' trees were built from (`server`, fileset/fileset.h), its
	 * name and fileset_len bytes: static/'s files and folders are taken from its plan, as a
	 * Windows client knows a tree without listing it at logon; NULL: static/ is listed like
	 * volatile/ and new/, whose content the load itself changes */
	const char *fileset, *fileset_name;
	size_t fileset_len;
	double duration;   /* seconds of load in each step once told to go */
	int timeout_ms;	   /* per SMB request and per opening; 0: 10 s */
	unsigned parallel; /* connections opening at once, all loops together; 0: 64 */
	unsigned threads;  /* event loops; 0: cfg->threads, and when that is 0 one per core this
			    * process may run on (at most 64) */
	/* not the schedules (a bench beside smbtorture's): every user, one request after the
	 * other as fast as the server answers, for the duration, either opens, writes 4 KiB to
	 * and closes its own file in new/ (pv-bench-<user>.dat), or opens and closes its share's
	 * root folder (one path shared by every user of the share, as smbtorture's
	 * path-contention-shared does); *ops counts the requests answered */
	enum { PV_LOAD_SCHEDULES = 0, PV_LOAD_OPS_WRITE, PV_LOAD_OPS_OPEN } ops_loop;
	uint64_t *ops;
	/* the caller's side, asked from the calling thread only */
	void *arg;
	/* The next step: the users so far (the array may have moved and grown: users are only
	 * added at its end) and how many of the first of them the step has. *n 0: no more
	 * steps. Blocks until the caller knows; PV_ESTOPPED when stopped meanwhile. */
	int (*next)(void *arg, const struct pv_load_user **users, size_t *total, size_t *n);
	bool (*stop)(void *arg); /* stop now (stdin ended, a signal): the figures so far end it */
	bool (*go)(void *arg);	 /* start the schedules (asked once every user is ready) */
	/* the step's users logged on or failed: how many of each, the logons */
	int (*ready)(void *arg, const struct pv_load_ready *r);
	int (*emit)(void *arg, const struct pv_load_figs *f); /* each interval, and the last */
	int (*done)(void *arg);				      /* after a step's last interval */
};

/* Run the steps as next() gives them: each one opens (or keeps) its users' connections, learns
 * their trees, waits for go, runs, closes. PV_OK when next() said there were no more steps;
 * PV_ESTOPPED when stop() said so; PV_EIO and the like when a loop itself failed; a callback's
 * non-zero return is returned. */
int pv_load(const struct pv_load_opts *o);

/* What load.workload's learned kinds open of a user's tree (those of a weight above 0), as
 * the replay makes them: files of static/ to read, its folders to list, volatile/ documents
 * written in place (PV_LOAD_NEEDS_*); 0 for none, or no workload. */
#define PV_LOAD_NEEDS_STATIC   1u
#define PV_LOAD_NEEDS_FOLDER   2u
#define PV_LOAD_NEEDS_VOLATILE 4u
unsigned pv_load_replay_needs(const struct pv_playbook_workload *c);
/* ... against the fileset (a file: fileset/'s description, or a learned workload with a
 * fileset:) the users' trees are built from: PV_OK when it has what they open; PV_ECONFIG
 * naming what it lacks and the fix (workload: the workload's file, for the message). */
int pv_load_replay_check(const struct pv_playbook_workload *c, const char *workload,
			 const char *fileset);

/* The host's CPU counters from /proc/stat: busy and all ticks since boot (false when they
 * cannot be read). */
bool pv_load_host_ticks(uint64_t *busy, uint64_t *total);

#endif
