/* phases/trees.h: the per-user home trees of the server phase: every user's folder
 * <share_path>/<share>/<user> (the user at position i, counting across clients, lives in share
 * i mod K + 1) filled with the playbook's fileset, over SMB as each user (trees_smb.c) or on the
 * server's disk over SSH (trees_ssh.c). First one listing over SSH surveys what every folder
 * holds: complete trees are left alone, and only what is missing or of the wrong size is
 * written. */
#ifndef PV_PHASES_TREES_H
#define PV_PHASES_TREES_H

#include "phases/phase.h"

struct pv_remote;
struct pv_samba_facts;

struct pv_phases_trees_stats {
	bool skipped;	 /* no fileset in the playbook */
	const char *via; /* "smb" or "ssh" */
	char fileset[64];
	unsigned long users, files_per_user;
	unsigned long long bytes_per_user;
	unsigned long complete; /* users whose tree was complete already (not touched) */
	unsigned long replaced; /* users whose tree was an earlier account's: removed, built anew */
	unsigned long files_made, files_fixed, files_ok, dirs_made, failed_users;
	unsigned long long bytes_written;
	double seconds;
};

struct pv_phases_trees_opts {
	const char *via;   /* "smb" (NULL) or "ssh" */
	unsigned parallel; /* SMB connections at once; 0: one per server core, at least 2 */
};

struct pv_phases_trees;
/* Check what can be checked before anything is made: the options, the fileset, and every user
 * in the domain (through the server's winbind; the users' password is asked for over SMB).
 * *out is freed with pv_phases_trees_free (NULL is fine); st->skipped when there is no fileset. */
int pv_phases_trees_prepare(const struct pv_env *env, struct pv_remote *rem,
			    const struct pv_samba_facts *f, const struct pv_phases_trees_opts *o,
			    struct pv_phases_trees_stats *st, struct pv_phases_trees **out);
/* The users' folders and trees (the shares must exist); the stats are filled. A dry run plans
 * and changes nothing. */
int pv_phases_trees_build(struct pv_phases_trees *t, struct pv_env_plan *plan);
void pv_phases_trees_free(struct pv_phases_trees *t);

/* status: of the users the playbook plans, how many have a complete tree (one listing). */
int pv_phases_trees_status(const struct pv_env *env, struct pv_remote *rem,
			   const struct pv_samba_facts *f, bool *skipped, unsigned long *planned,
			   unsigned long *complete);

#endif
