/* samba/samba.h: a Samba file server as provision drives it over SSH: scripts run through
 * `sh -c`, the playbook's service command, the facts one probe gathers (typed here, once), and
 * scripts that need the domain admin's ticket there. Shared by the join and server phases and
 * by status; below them, above remote/ and ldap/.
 *
 * Errors are recorded with pv_error(); a script that cannot run is PV_EREMOTE naming the host
 * and what was being done, with the last line of its stderr. */
#ifndef PV_SAMBA_SAMBA_H
#define PV_SAMBA_SAMBA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/secret.h"

struct pv_remote;
struct pv_ldap;
struct pv_strset;

/* smb.conf's 'kerberos method' (Samba's smb.conf(5)). */
enum pv_samba_kmethod {
	PV_SAMBA_KMETHOD_SECRETS_ONLY = 0,
	PV_SAMBA_KMETHOD_SYSTEM_KEYTAB,
	PV_SAMBA_KMETHOD_DEDICATED_KEYTAB,
	PV_SAMBA_KMETHOD_SECRETS_AND_KEYTAB,
};

struct pv_samba_share {
	char *name, *comment, *path;
	bool dir_exists; /* the folder path names exists */
};

struct pv_samba_facts {
	char netbios[64]; /* upper-case, from smb.conf */
	char realm[128], security[32];
	enum pv_samba_kmethod kmethod;
	bool needs_keytab; /* the kerberos method uses a keytab */
	char keytab[512];  /* the dedicated keytab file ('dedicated keytab'), else "" */
	char sep[8];	   /* winbind separator */
	bool joined;	   /* 'net ads testjoin' (PV_SAMBA_PROBE_QUICK: or 'wbinfo -P') succeeds */
	char dc[256]; /* PV_SAMBA_PROBE_QUICK: the DC winbindd talks to ('wbinfo -P'), else "" */
	bool smbd_running, winbindd_running; /* by their pid files */
	unsigned cores;			     /* online CPUs; 0 when unknown */
	char state_dir[512];		     /* Samba's state directory */
	/* a join of this lab's was started there and its account may be untagged yet: the mark
	 * <state_dir>/.provision-join.<lab> (samba/scripts/join.sh) is present */
	bool join_mark;
	/* PV_SAMBA_PROBE_CLOCK */
	bool has_offset; /* the DC answered 'net ads info' */
	long offset;	 /* the DC's clock minus the server's, seconds */
	char info[256];	 /* last line of 'net ads info' (its error when the DC is unreachable) */
	/* not PV_SAMBA_PROBE_QUICK */
	long keytab_entries;
	/* PV_SAMBA_PROBE_QUICK: Samba's shares, and the keytab's principals (without the realm)
	 * when the kerberos method uses a keytab (keytab_listed) */
	struct pv_samba_share *shares;
	size_t nshares;
	bool keytab_listed;
	struct pv_strset *principals;
};

/* How much pv_samba_probe asks: PV_SAMBA_PROBE_CLOCK also the clock offset to the DC ('net ads
 * info'); PV_SAMBA_PROBE_QUICK takes winbindd's link to the DC ('wbinfo -P') as proof of membership
 * before 'net ads testjoin', does not count keytab entries, and lists the shares and the
 * keytab's principals. */
enum pv_samba_probe_how { PV_SAMBA_PROBE_PLAIN, PV_SAMBA_PROBE_CLOCK, PV_SAMBA_PROBE_QUICK };

/* One round trip: Samba's view of the server (PV_EREMOTE when Samba is missing). f is safe
 * to release after any outcome. */
int pv_samba_probe(struct pv_remote *rem, enum pv_samba_probe_how how, const char *lab,
		   struct pv_samba_facts *f);
void pv_samba_facts_release(struct pv_samba_facts *f);
/* The share named name (case-insensitive, as Samba's names are), or NULL. */
const struct pv_samba_share *pv_samba_share(const struct pv_samba_facts *f, const char *name);
/* Parse the probe's output into f (pure; exposed for the unit tests). */
int pv_samba_parse_facts(const char *text, struct pv_samba_facts *f);

/* Scripts run on the server with pv_remote_sh (remote/remote.h); this is it for a fixed
 * script. */
int pv_samba_run_text(struct pv_remote *rem, const char *what, const char *script, const void *in,
		      size_t inlen, struct pv_buf *out, int *status, int timeout);

/* Run body with a ticket of admin (a principal: Administrator@LAB.TEST; samba/scripts/as-admin.sh
 * before it; the password goes on stdin to kinit alone). status as for pv_remote_sh; a failed
 * kinit is status 4. */
int pv_samba_as_admin(struct pv_remote *rem, const char *principal, const struct pv_secret *admin,
		      const char *what, const struct pv_buf *body, int *status, int timeout);

/* The service-control command template (server.service, default "systemctl {action} {unit}")
 * with {action} and {service} (smbd, winbindd) filled in, run on the server. {unit} is the
 * service's systemd unit, the first of its names the server's systemctl knows (smbd, smb;
 * winbind, winbindd), found by the script before the command; none: it fails saying so.
 * pv_samba_service_script renders that script onto out. */
int pv_samba_service_script(const char *tmpl, const char *action, const char *service,
			    struct pv_buf *out);
int pv_samba_service(struct pv_remote *rem, const char *tmpl, const char *action,
		     const char *service);

/* The server's Samba version and system, "Version 4.17.12-Debian;Linux 6.1.0", into out
 * ("" when it cannot say: for the manifest only). */
void pv_samba_version(struct pv_remote *rem, char *out, size_t len);
/* The host's net.unix.max_dgram_qlen (/proc/sys/net/unix/max_dgram_qlen): how many datagrams
 * a Unix socket made now may queue. smbd tells smbd-notifyd of every change over such a
 * socket; with the kernel's default of 10 (a network namespace's, a container's) the messages
 * back up inside smbd at a cost per file (docs/copy.md). -1 when it cannot be read. */
int pv_samba_dgram_qlen(struct pv_remote *rem);
/* The server's Samba configuration in effect (testparm -s), at most PV_SAMBA_CONFIG_MAX
 * bytes of it, for the run's manifest (docs/report.md); NULL when it cannot say (free it). */
#define PV_SAMBA_CONFIG_MAX (256u << 10)
char *pv_samba_config(struct pv_remote *rem);

/* Samba's own counters (`smbd profiling level`) during a job: the level of the running smbd
 * read and set with smbcontrol (which sets the running smbd and those it forks, and changes
 * no configuration), the counters read (smbstatus --profile) and differenced. */
enum pv_samba_profile { PV_SAMBA_PROFILE_OFF, PV_SAMBA_PROFILE_COUNT, PV_SAMBA_PROFILE_ON };
int pv_samba_profile_level(struct pv_remote *rem, enum pv_samba_profile *out);
int pv_samba_profile_set(struct pv_remote *rem, enum pv_samba_profile level);
/* What smbcontrol's profilelevel printed: PV_EREMOTE quoting it when it says no level. */
int pv_samba_profile_parse_level(const char *text, enum pv_samba_profile *out);

#define PV_SAMBA_COUNTERS_MAX 512
struct pv_samba_counter {
	char name[48];	/* a system call ("lstat") or an SMB2 command ("smb2:create") */
	uint64_t count; /* calls */
	uint64_t usec;	/* microseconds in them */
};
struct pv_samba_counters {
	struct pv_samba_counter *v;
	size_t n, cap;
};
int pv_samba_counters_read(struct pv_remote *rem, struct pv_samba_counters *out);
/* What smbstatus --profile printed, into out (pure). */
int pv_samba_counters_parse(const char *text, size_t len, struct pv_samba_counters *out);
/* after - before, the counters that moved (one that went back counts from zero). */
int pv_samba_counters_diff(const struct pv_samba_counters *before,
			   const struct pv_samba_counters *after, struct pv_samba_counters *out);
void pv_samba_counters_release(struct pv_samba_counters *c);

/* Which smbd serves which client connection (smbstatus --processes --json): pid, and the
 * client's address and port ("ipv4:198.18.0.31:50212"). */
#define PV_SAMBA_CONNS_MAX 4096
struct pv_samba_conn {
	int pid, port;
	char machine[128];
};
int pv_samba_conns(struct pv_remote *rem, struct pv_samba_conn **out, size_t *n);
int pv_samba_conns_parse(const char *text, size_t len, struct pv_samba_conn **out, size_t *n);

/* One Samba parameter for `sweep` (samba/settings.c). A setting is checked by the server's own
 * testparm first (on a file holding it alone): an unknown name or a value it refuses is
 * PV_ECONFIG naming the parameter and quoting testparm; *scope says whether it is a global
 * parameter. Settings go into the registry configuration (net conf) of a section (a share, or
 * "global" where [global] reads the registry: pv_samba_registry_global says how, or leaves
 * how empty), and come back out: get (set false: not in the registry), put (value NULL:
 * delparm). */
enum pv_samba_scope { PV_SAMBA_SHARE, PV_SAMBA_GLOBAL };
int pv_samba_setting_valid(const char *param, const char *value);
int pv_samba_setting_check(struct pv_remote *rem, const char *param, const char *value,
			   enum pv_samba_scope *scope);
/* What testparm's stderr (text) and status say of param (pure). */
int pv_samba_setting_judge(const char *param, const char *text, int status,
			   enum pv_samba_scope *scope);
int pv_samba_setting_get(struct pv_remote *rem, const char *section, const char *param, bool *set,
			 char *value, size_t len);
int pv_samba_setting_put(struct pv_remote *rem, const char *section, const char *param,
			 const char *value);
int pv_samba_registry_global(struct pv_remote *rem, char *how, size_t len);
int pv_samba_reload(struct pv_remote *rem);
/* The configuration in effect (testparm -s, at most 256 KiB) into out. */
int pv_samba_effective(struct pv_remote *rem, struct pv_buf *out);

/* What `smbstatus --json` printed (text, len): *n the sessions and open files (each open
 * counts) of the users for whom mine(arg, user) says yes. PV_SAMBA_STATUS_OK; NOT_JSON when
 * it is no JSON; NOT_STATUS when it lacks 'sessions' (an object) or has 'open_files' that is
 * not one. Records no error: the caller quotes the text. */
enum { PV_SAMBA_STATUS_OK = 0, PV_SAMBA_STATUS_NOT_JSON, PV_SAMBA_STATUS_NOT_STATUS };
int pv_samba_status_count(const char *text, size_t len, bool (*mine)(void *arg, const char *user),
			  void *arg, long *n);

/* The computer account <netbios>$ in the directory: *dn (NULL when absent) and *desc (NULL
 * when none); the caller frees both. */
int pv_samba_account(struct pv_ldap *dir, const char *base_dn, const char *netbios, char **dn,
		     char **desc);

#endif
