/* phases/phase.h: what every phase shares. A phase is a library call: it takes the run's
 * environment (the loaded playbook, credentials on demand, dry run) and typed options, does its
 * work on the hosts, fills a typed result and returns an outcome code (util/err.h) with one
 * message recorded when it is not PV_OK. A phase never prints and never exits: it describes
 * what it does through util/log.h and util/progress.h, and provision/ renders the result.
 *
 * The lab's names (users, aliases, shares) and tags are derived here, once, for every phase. */
#ifndef PV_PHASES_PHASE_H
#define PV_PHASES_PHASE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "playbooks/playbook.h"
#include "playbooks/roster.h"
#include "util/secret.h"

/* Secrets a phase may need; asked for on first use only (a run that needs no password never
 * reads one, and a prompt comes at most once; only the variables of {env: NAME} are taken out
 * of the environment at start, so that no child inherits them). */
enum pv_cred { PV_CRED_ADMIN, PV_CRED_USERS };
/* Provide the secret (owned by the provider, valid for the whole run) or fail with a message
 * recorded. Called from any thread. */
typedef int (*pv_cred_fn)(void *ctx, enum pv_cred which, const struct pv_secret **out);

struct pv_env {
	const struct pv_playbook *pb;
	bool dry_run; /* look, plan, change nothing */
	pv_cred_fn cred;
	void *cred_ctx;
	/* set (non-zero) by provision/ on Ctrl-C or SIGTERM: long work (run, wait) stops what it
	 * started and returns PV_ESTOPPED; NULL when the command cannot be interrupted so */
	const volatile sig_atomic_t *stop;
};

/* The process made ready for the playbook's domain before any thread starts (a private
 * Kerberos profile naming the KDC when domain.dc_address is given); undone by
 * pv_env_cleanup. */
int pv_env_setup(const struct pv_playbook *pb);
void pv_env_cleanup(void);

/* Whether the run was asked to stop. */
bool pv_env_stopped(const struct pv_env *env);

int pv_env_secret(const struct pv_env *env, enum pv_cred which, const struct pv_secret **out);

/* A dry run's plan: what would be done, one item each ("create OU 'OU=...'"). */
struct pv_plan {
	char **items;
	size_t n, cap;
};
/* Add an item (printf format); allocation failures are recorded in failed. */
void pv_plan_add(struct pv_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pv_plan_release(struct pv_plan *p);

/* The tags this lab puts on what it makes: 'provision:<lab>' (users, OU, shares) and
 * 'provision:<lab>:join' (the computer account join tags: a computer is objectClass=user too,
 * so it must not carry the users' tag). */
#define PV_TAG_MAX 64
void pv_tag_lab(const struct pv_playbook *pb, char out[PV_TAG_MAX]);
void pv_tag_join(const struct pv_playbook *pb, char out[PV_TAG_MAX]);

/* The LDAP filter of this lab's users into f: its tag on a user that is not a computer (a
 * computer is a user too, MS-ADSC; join tags the server's account with another tag). */
struct pv_buf;
int pv_users_filter(struct pv_buf *f, const char *tag);

#endif
