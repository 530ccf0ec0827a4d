/* phases/replica.h: the domain's other DCs (domain.other_dcs, or the one a host says it uses):
 * connecting to one, and waiting for one to catch up with domain.dc on this lab's users
 * (replication after dc) or to hold none of them any more (after cleanup dc). dc writes to
 * domain.dc only; server and status wait here for the server's own DC, so that a user made a
 * moment ago is not "no such user" there; cleanup waits for every other DC. */
#ifndef PV_PHASES_REPLICA_H
#define PV_PHASES_REPLICA_H

#include "ldap/dir.h"
#include "phases/phase.h"
#include "util/strset.h"

/* Seconds between two looks at a DC that is behind. */
#define PV_PHASES_REPLICA_POLL 2

/* Whether name is domain.dc: the same name (any case), or its first label. */
bool pv_phases_replica_is_main(const struct pv_playbook_domain *d, const char *name);
/* The playbook's address for the DC called name (domain.dc or one of domain.other_dcs,
 * matched as above); NULL when it gives none (the name is resolved). */
const char *pv_phases_replica_address(const struct pv_playbook_domain *d, const char *name);
/* The DC called name as the playbook spells it (a short name from a host becomes the name of
 * domain.dc or of domain.other_dcs it matches); name itself when the playbook has none. */
const char *pv_phases_replica_name(const struct pv_playbook_domain *d, const char *name);

/* Connect as the admin to the DC called name, over domain.transport, TLS checked against that
 * name with domain.ca_file (which must hold its CA too). */
int pv_phases_replica_connect(const struct pv_env *env, const char *name, struct pv_ldap **out);

/* This lab's users at dir: with set non-NULL their names are added to it; *n the count. */
int pv_phases_replica_users(struct pv_ldap *dir, const struct pv_playbook *pb,
			    struct pv_strset *set, unsigned long *n);

struct pv_phases_replica_wait {
	unsigned long want;  /* users it must hold (wait_users), 0 (wait_gone) */
	unsigned long there; /* of those (wait_users), or of the lab's (wait_gone), at the last
			      * look */
	bool behind;	     /* it was behind at the first look */
	double seconds;	     /* waited */
};

/* Wait until the DC name holds every user named in want (nwant of them), looking every
 * PV_PHASES_REPLICA_POLL seconds, with a progress line called what; PV_ETIMEOUT after
 * domain.replication_timeout (0: one look), the message giving the counts and what to do. */
int pv_phases_replica_wait_users(const struct pv_env *env, const char *name,
				 const struct pv_strset *want, unsigned long nwant,
				 const char *what, struct pv_phases_replica_wait *w);
/* Wait until the DC name holds none of this lab's users: as above. */
int pv_phases_replica_wait_gone(const struct pv_env *env, const char *name, const char *what,
				struct pv_phases_replica_wait *w);

#endif
