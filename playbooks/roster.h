/* playbooks/roster.h: the lab's roster, from the playbook: every user's name, client, alias,
 * share and home tree, and the names of aliases and shares. The one place that says which
 * user is where: dc makes the users by it, server builds their trees by it, client writes
 * their aliases by it, status counts by it, and run's built-in driver loads by it. Pure. */
#ifndef PV_PLAYBOOKS_ROSTER_H
#define PV_PLAYBOOKS_ROSTER_H

#include "playbooks/playbook.h"

/* Names, from the playbook's templates. */
#define PV_PLAYBOOK_NAME_MAX 256
/* User n (from 1) of client c. */
int pv_playbook_user_name(const struct pv_playbook *pb, const struct pv_playbook_host *client,
			  unsigned long n, char out[PV_PLAYBOOK_NAME_MAX]);
/* Alias n (from 1) of the server, checked against the NetBIOS rules. */
int pv_playbook_alias_name(const struct pv_playbook *pb, unsigned long n,
			   char out[PV_PLAYBOOK_NAME_MAX]);
/* Share k (from 1). */
int pv_playbook_share_name(const struct pv_playbook *pb, unsigned k,
			   char out[PV_PLAYBOOK_NAME_MAX]);
/* Every user the playbook plans, in order (client by client, n from 1): per_client * nclients. */
unsigned long pv_playbook_users_planned(const struct pv_playbook *pb);

/* One user of the lab. */
struct pv_playbook_roster_user {
	size_t client;	     /* its client's index in the playbook */
	unsigned long n;     /* its number on that client, from 1 */
	unsigned long index; /* its place in the lab, from 0: client * per_client + n - 1 */
	char name[PV_PLAYBOOK_NAME_MAX];  /* the domain user: cli1-u3 */
	char alias[PV_PLAYBOOK_NAME_MAX]; /* the server's name it connects to: srvu3 */
	unsigned share; /* the share holding its home tree, from 1: index mod shares + 1 */
	char share_name[PV_PLAYBOOK_NAME_MAX]; /* fsroot2 */
};
/* User n (from 1) of client c (an index into pb->clients). The alias and share are filled only
 * when the playbook has a server. */
int pv_playbook_roster_user(const struct pv_playbook *pb, size_t c, unsigned long n,
			    struct pv_playbook_roster_user *out);

#endif
