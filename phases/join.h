/* phases/join.h: the join phase: the file server made a member of the domain over SSH with
 * Samba's own tools (kinit, net ads, wbinfo), its computer account tagged 'provision:<lab>:join';
 * its cleanup (services stopped, and with leave the membership and the account gone, only when
 * this lab joined it). The membership's status is part of the server's (phases/server.h). The admin
 * password only ever travels on the stdin of the remote kinit. */
#ifndef PV_PHASES_JOIN_H
#define PV_PHASES_JOIN_H

#include "phases/phase.h"

struct pv_phases_join_result {
	const char *server;
	char account[80]; /* <NETBIOS>$ */
	/* "joined", "repaired" (keytab made anew), "present" (nothing changed), "started" (a
	 * member whose smbd or winbindd was stopped), "would join"; NULL when it failed first */
	const char *state;
	bool trust_verified;
	struct pv_env_plan plan;
	double seconds;
};
int pv_phases_join_prepare(const struct pv_env *env, struct pv_phases_join_result *res);

struct pv_phases_join_cleanup_result {
	const char *server;
	char account[80];
	bool ours; /* this lab joined the server */
	bool was_joined;
	bool nothing; /* nothing of this lab's */
	bool stopped, left, account_deleted;
	struct pv_env_plan plan;
	double seconds;
};
int pv_phases_join_cleanup(const struct pv_env *env, bool leave,
			   struct pv_phases_join_cleanup_result *res);
void pv_phases_join_result_release(struct pv_phases_join_result *res);
void pv_phases_join_cleanup_result_release(struct pv_phases_join_cleanup_result *res);

#endif
