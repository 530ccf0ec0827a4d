/* phases/trees_internal.h: what the files of the trees share. trees_base.c (a user's path, a
 * listing, the progress, a full disk) is below both builders, trees_ssh.c (tar streams, the
 * template copy) and trees_smb.c (the SMB workers and the choice of SMB client); trees.c (users,
 * folders, the survey, the entry points) is above them and picks one. Not for other phases. */
#ifndef PV_PHASES_TREES_INTERNAL_H
#define PV_PHASES_TREES_INTERNAL_H

#include "fileset/fileset.h"
#include "phases/trees.h"
#include "smb/smb.h"
#include "util/buf.h"
#include "util/progress.h"

struct tuser {
	char name[PV_PLAYBOOK_NAME_MAX];
	unsigned share; /* 1..K */
	unsigned long uid, gid;
	bool nonempty; /* its folder holds something already */
	bool complete; /* and everything the fileset has, at the right sizes, owned by it */
	bool foreign;  /* something in its folder is another uid's: an earlier account's */
	bool done;     /* built by the template copy */
};

/* One entry of a listing over SSH ("type size uid path" records of find). */
struct have {
	char *path; /* into the listing's buffer */
	bool dir;
	bool other; /* neither a folder nor a file: a link, say (never what the fileset has) */
	unsigned long long size;
	unsigned long uid; /* its owner */
};

struct pv_phases_trees {
	const struct pv_env *env;
	const struct pv_playbook *pb;
	struct pv_remote *rem;
	struct pv_fileset *fs;
	struct pv_smb_item *items;
	struct tuser *users;
	size_t nusers;
	char (*shares)[PV_PLAYBOOK_NAME_MAX];
	struct pv_phases_trees_stats *st;
	const struct pv_secret *pw; /* the users' password, for SMB */
	const char *sep;	    /* winbind separator from the probe ("" when unknown) */
	unsigned workers;
	bool ssh;
	bool mapped; /* users[].uid and gid are the server's (map_users) */
	struct pv_progress prog;
};

/* <share>/<user>[/<rel>] relative to share_path. */
int pv_phases_trees_user_path(const struct pv_phases_trees *t, const struct tuser *u,
			      const char *rel, char *out, size_t len);
/* List what the folders of users[b..e) hold (only the non-empty ones unless all), sorted by
 * path: *hv points into out; the caller frees *hv and releases out. */
int pv_phases_trees_listing(struct pv_phases_trees *t, size_t b, size_t e, bool all,
			    struct pv_buf *out, struct have **hv, size_t *nh);
/* The lowest uid and gid a load user may have on the server: below are root and the system
 * accounts and groups (Debian's SYS_UID_MAX is 999; winbind's idmap ranges start far above). */
#define PV_PHASES_TREES_ID_MIN 1000

/* trees_parse.c: one line of getent.sh ("name:uid:gid"): 1 with the name (without any
 * "DOMAIN<sep>" before it; len bytes at name), uid and gid set; 0 when the line is no such
 * line (not plain digits, a field too many); -1 (recorded, PV_EREMOTE) when the uid or the
 * gid is below PV_PHASES_TREES_ID_MIN. */
int pv_phases_trees_getent_line(const char *line, const char *domain, char *name, size_t len,
				unsigned long *uid, unsigned long *gid);
/* trees_parse.c: the records of list-trees.sh in out (NUL-ended "TYPE SIZE ./PATH"), sorted
 * by path: *hv points into out; the caller frees *hv. */
int pv_phases_trees_parse_listing(struct pv_buf *out, struct have **hv, size_t *nh);
/* The entry at path in a sorted listing, or NULL. */
struct have *pv_phases_trees_find(struct have *hv, size_t nh, const char *path);
/* r from a command on the server: when it failed for want of space, say so and where. */
int pv_phases_trees_disk_full(const struct pv_phases_trees *t, int r);
/* Report progress from the stats. */
void pv_phases_trees_progress(struct pv_phases_trees *t);

/* Write what b holds (a tar stream of users' folders and trees, ended here) on the server:
 * phases/scripts/trees.pl, as the users, never as root inside their folders. folders: the
 * stream holds only the users' own folders (tar may make those where there is no perl). */
int pv_phases_trees_extract(struct pv_phases_trees *t, struct pv_buf *b, const char *what,
			    bool folders);
int pv_phases_trees_build_ssh(struct pv_phases_trees *t);
int pv_phases_trees_build_smb(struct pv_phases_trees *t);
/* Whether PROVISION_SMB_CLIENT=libsmbclient asks for libsmbclient (a connection per user). */
bool pv_phases_trees_want_libsmbclient(void);

#endif
