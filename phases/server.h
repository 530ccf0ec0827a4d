/* phases/server.h: the server phase: the shares fsroot1..K (Samba registry shares tagged with
 * the lab's comment), the cifs/ SPNs of every alias on the server's computer account (and in
 * its keytab when Samba uses one), and every user's home tree (phases/trees.h); its cleanup
 * (exactly those); and the server's status (membership, trust, shares, SPNs, trees). */
#ifndef PV_PHASES_SERVER_H
#define PV_PHASES_SERVER_H

#include "phases/phase.h"
#include "phases/trees.h"

struct pv_phases_server_result {
	unsigned shares_made, shares_present, shares_missing;
	size_t spns_added, spns_present, spns_missing, keytab_added;
	struct pv_phases_trees_stats trees;
	char dc[256];		/* the DC the server's winbindd uses ("" unknown) */
	unsigned long dc_users; /* when it is not domain.dc: the lab's users it held at last */
	double dc_wait;		/* seconds waited for it to catch up (0: it had them) */
	struct pv_env_plan plan;
	double seconds;
};
int pv_phases_server_prepare(const struct pv_env *env, const struct pv_phases_trees_opts *o,
			     struct pv_phases_server_result *res);
void pv_phases_server_result_release(struct pv_phases_server_result *res);

struct pv_phases_server_cleanup_result {
	unsigned shares_removed;
	size_t spns_removed, spns_left; /* left: alias SPNs this lab did not add */
	size_t keytab_removed;		/* keytab entries (principal, kvno, enctype) taken out */
	struct pv_env_plan plan;
	double seconds;
};
int pv_phases_server_cleanup(const struct pv_env *env, struct pv_phases_server_cleanup_result *res);
void pv_phases_server_cleanup_result_release(struct pv_phases_server_cleanup_result *res);

struct pv_phases_server_status {
	char account[80];    /* <NETBIOS>$ */
	bool joined;	     /* net ads testjoin (or winbindd's link to the DC) */
	bool trust;	     /* wbinfo -t */
	bool ours;	     /* the computer account carries this lab's join tag */
	bool smbd, winbindd; /* running */
	unsigned shares_planned, shares_present; /* ours, with their folder */
	size_t spns_planned, spns_present;	 /* alias SPNs on the account */
	char dc[256];			   /* the DC the server's winbindd uses ("" unknown) */
	unsigned long dc_users, dc_wanted; /* when that is not domain.dc: the users dc made that
					    * it holds, of those it should (0, 0: not asked) */
	bool dc_behind;			   /* it did not catch up within the timeout */
	char dc_msg[512];
	bool trees_skipped; /* no fileset */
	unsigned long trees_planned, trees_complete;
};
int pv_phases_server_status(const struct pv_env *env, struct pv_phases_server_status *st);

#endif
