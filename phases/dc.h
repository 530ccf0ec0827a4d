/* phases/dc.h: the dc phase: users.per_client users for every client in the lab's OU, each made
 * whole in one LDAP add that carries its password; its cleanup (every user of this lab, and
 * the OU when this lab made it); and the directory's status. */
#ifndef PV_PHASES_DC_H
#define PV_PHASES_DC_H

#include "phases/phase.h"

struct pv_phases_dc_opts {
	const struct pv_playbook_host *const *clients; /* whose users; all clients when NULL */
	size_t nclients;
	bool reset_passwords; /* also set the password of users already present */
	bool verify;	      /* kinit as the first, the last and a random user afterwards */
	bool force;	      /* allow more than PV_PHASES_DC_USERS_MAX users per client */
};

#define PV_PHASES_DC_USERS_MAX 1000000UL

struct pv_phases_dc_result {
	unsigned long planned, present, missing, created, reset, failed;
	bool ou_created; /* or, in a dry run, would be */
	bool verified;	 /* --verify: the three kinits succeeded */
	char first_failure[1024];
	struct pv_env_plan plan;
	double seconds; /* the users' part: from the first search to the last add */
};

int pv_phases_dc_prepare(const struct pv_env *env, const struct pv_phases_dc_opts *o,
			 struct pv_phases_dc_result *res);

/* Another DC after the cleanup on domain.dc. */
struct pv_phases_dc_other {
	char name[256];
	double waited;		     /* seconds replication took to bring it the deletes */
	unsigned long deleted_there; /* users it still held when the wait ran out, deleted there */
};

struct pv_phases_dc_cleanup_result {
	bool nothing; /* no user and no OU of this lab */
	unsigned long found, deleted, gone, failed;
	bool tree_delete; /* the OU and its users went in one request */
	bool ou_ours, ou_deleted;
	char first_failure[1024];
	struct pv_env_plan plan;
	double seconds; /* on domain.dc */
	/* domain.other_dcs, in order, as far as they were done */
	struct pv_phases_dc_other *others;
	size_t nothers;
};

int pv_phases_dc_cleanup(const struct pv_env *env, struct pv_phases_dc_cleanup_result *res);
void pv_phases_dc_result_release(struct pv_phases_dc_result *res);
void pv_phases_dc_cleanup_result_release(struct pv_phases_dc_cleanup_result *res);

struct pv_phases_dc_status {
	unsigned long planned; /* users the playbook asks for */
	unsigned long present; /* of those, in the directory tagged this lab's */
	unsigned long tagged;  /* every user carrying this lab's tag */
	bool ou_exists, ou_ours;
};
int pv_phases_dc_status(const struct pv_env *env, struct pv_phases_dc_status *st);

#endif
