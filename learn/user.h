/* learn/user.h: the users of a capture, as provision learn tells them apart: an account, by
 * the name an NTLM logon carries in the clear (kept only as a hash: "ntlm:" and 12 hex digits
 * of the SHA-256 of DOMAIN\user in lower case); where no name is seen (Kerberos), the client's
 * address ("addr:198.18.0.31"); a session whose logon the capture does not hold, by its id and
 * address ("session:ID@ADDRESS"). Each with what it did. Pure logic. */
#ifndef PV_LEARN_USER_H
#define PV_LEARN_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "learn/hist.h"
#include "learn/kind.h"
#include "learn/table.h"

/* At most this many users told apart (more: counted, not followed). */
#define PV_LEARN_USERS_MAX 65536u

enum pv_learn_user_kind { PV_LEARN_USER_NTLM, PV_LEARN_USER_ADDR, PV_LEARN_USER_SESSION };

struct pv_learn_user {
	char id[80];
	enum pv_learn_user_kind kind;
	uint64_t requests, logons, trees, opens, listings, notifies;
	double first, last;		/* its first and last request's time */
	double logon_first, logon_last; /* its first and last logon's time */
	struct pv_learn_hist gaps;	/* between its requests */
	/* its activity under way, when the activity gap is known: its shape, requests, start */
	struct pv_learn_kind_shape cur;
	uint64_t cur_requests;
	double cur_start;
	/* the files it holds open now: its CREATEs less its CLOSEs and the CREATEs refused (an
	 * activity does not end while one is open, unless idle for PV_LEARN_HOLD times the
	 * activity gap, and at least PV_LEARN_HOLD_MIN seconds) */
	uint32_t open;
	/* the command of its last request (UINT8_MAX: none yet, or not one SMB2 has) */
	uint8_t last_cmd;
	/* its requests not answered yet, and when its last answer came: the client's own time is
	 * from an answer to its next request, when it waited for nothing else */
	uint32_t waiting;
	double answered;
	/* its home in the namespace (learn/namespace.h): the node's place + 1, 0 none yet */
	uint32_t home;
};

/* A user idle this long ends its activity even with files open (a folder watched all day). */
#define PV_LEARN_HOLD	  10
#define PV_LEARN_HOLD_MIN 1.0

struct pv_learn_users {
	struct pv_learn_user *u;
	size_t n, cap;
	struct pv_learn_table index; /* the id's hash -> its place in u */
	uint64_t refused;	     /* users past PV_LEARN_USERS_MAX */
};

void pv_learn_users_init(struct pv_learn_users *t);
/* The user of id (added when new): its place, or -1 when there is no room. */
long pv_learn_users_get(struct pv_learn_users *t, const char *id, enum pv_learn_user_kind kind);
void pv_learn_users_release(struct pv_learn_users *t);
/* A request of user i at time t (seconds): counted, its gap since the user's last one kept. */
void pv_learn_user_request(struct pv_learn_user *u, double t);
/* A logon of u at time t: counted, its time kept as the first or the last. */
void pv_learn_user_logon(struct pv_learn_user *u, double t);
/* The rate of each user's logons again, an hour: (logons - 1) over its time at work (from its
 * first logon or request to its last: two logons a moment apart at the start of a long
 * session are one again in all that time, not one a moment), of the users with two or more
 * and a time at work, into v (room for t->n); how many. */
size_t pv_learn_users_relogon_rates(const struct pv_learn_users *t, double *v);
/* The users' logons again all together: how many, and their hours at work into *hours (of
 * the users that logged on and were at work longer than a moment). */
uint64_t pv_learn_users_relogons(const struct pv_learn_users *t, double *hours);

/* The account an NTLM AUTHENTICATE message names (MS-NLMP 2.2.1.3), found in a SESSION_SETUP's
 * security buffer (bare, or inside SPNEGO's DER: the NTLMSSP signature is looked for): 1 and
 * id set to its hashed form ("ntlm:..."; with keep, the name itself: "ntlm:domain\user" in
 * lower case), 0 when the buffer holds no AUTHENTICATE or an anonymous one, -1 when it holds
 * one whose fields point outside it. */
int pv_learn_ntlm_user(const uint8_t *sec, size_t len, bool keep, char *id, size_t idlen);

#endif
