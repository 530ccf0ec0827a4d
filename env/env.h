/* env/env.h: the run's environment, shared by the phases, run and sweep: the loaded playbook,
 * credentials on demand, dry run and the stop flag (struct pv_env), a dry run's plan and the tags
 * the lab puts on what it makes. Below phases/ and run/ so that run/ needs nothing of phases/. */
#ifndef PV_ENV_ENV_H
#define PV_ENV_ENV_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "playbooks/playbook.h"
#include "util/secret.h"

/* Secrets a phase may need; asked for on first use only (a run that needs no password never
 * reads one, and a prompt comes at most once; only the variables of {env: NAME} are taken out
 * of the environment at start, so that no child inherits them). */
enum pv_env_cred { PV_ENV_CRED_ADMIN, PV_ENV_CRED_USERS };
/* Provide the secret (owned by the provider, valid for the whole run) or fail with a message
 * recorded. Called from any thread. */
typedef int (*pv_env_cred_fn)(void *ctx, enum pv_env_cred which, const struct pv_secret **out);

struct pv_env {
	const struct pv_playbook *pb;
	bool dry_run; /* look, plan, change nothing */
	pv_env_cred_fn cred;
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

int pv_env_secret(const struct pv_env *env, enum pv_env_cred which, const struct pv_secret **out);

/* A dry run's plan: what would be done, one item each ("create OU 'OU=...'"). */
struct pv_env_plan {
	char **items;
	size_t n, cap;
};
/* Add an item (printf format); an item that cannot be allocated is left out. */
void pv_env_plan_add(struct pv_env_plan *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pv_env_plan_release(struct pv_env_plan *p);

/* The tags this lab puts on what it makes: 'provision:<lab>' (users, OU, shares) and
 * 'provision:<lab>:join' (the computer account join tags: a computer is objectClass=user too,
 * so it must not carry the users' tag). */
#define PV_ENV_TAG_MAX 64
void pv_env_tag_lab(const struct pv_playbook *pb, char out[PV_ENV_TAG_MAX]);
void pv_env_tag_join(const struct pv_playbook *pb, char out[PV_ENV_TAG_MAX]);

#endif
