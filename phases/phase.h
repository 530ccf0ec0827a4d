/* phases/phase.h: what every phase shares. A phase is a library call: it takes the run's
 * environment (env/env.h: the loaded playbook, credentials on demand, dry run) and typed
 * options, does its work on the hosts, fills a typed result and returns an outcome code
 * (util/err.h) with one message recorded when it is not PV_OK. A phase never prints and never
 * exits: it describes what it does through util/log.h and util/progress.h, and provision/
 * renders the result.
 *
 * The lab's names (users, aliases, shares) are derived here, once, for every phase; its tags are
 * env/env.h's. */
#ifndef PV_PHASES_PHASE_H
#define PV_PHASES_PHASE_H

#include "env/env.h"
#include "playbooks/playbook.h"
#include "playbooks/roster.h"

/* The LDAP filter of this lab's users into f: its tag on a user that is not a computer (a
 * computer is a user too, MS-ADSC; join tags the server's account with another tag). */
struct pv_buf;
int pv_phases_users_filter(struct pv_buf *f, const char *tag);

#endif
