/* playbooks/playbook.h: the playbook, a YAML file describing one lab, as plain C structs.
 *
 * pv_playbook_read() parses with libyaml into a node tree (every node keeps its line and
 * column), applies command-line overrides ("key.path=value"), validates the tree against the
 * schema (docs/playbook.md) and fills these structs. Every error names file:line:column and
 * the expected form. Nothing here touches the network; secrets are only referenced, never
 * stored in the playbook (see struct pv_playbook_secret_ref). */
#ifndef PV_PLAYBOOKS_PLAYBOOK_H
#define PV_PLAYBOOKS_PLAYBOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "playbooks/workload.h"

/* Where a secret comes from. A playbook holding a plain secret string is an error. */
enum pv_playbook_secret_source {
	PV_PLAYBOOK_SECRET_UNSET = 0,
	PV_PLAYBOOK_SECRET_FILE,   /* {file: PATH}: whole file, one trailing newline dropped */
	PV_PLAYBOOK_SECRET_ENV,	   /* {env: NAME} */
	PV_PLAYBOOK_SECRET_STDIN,  /* {stdin: true}: first line of standard input */
	PV_PLAYBOOK_SECRET_PROMPT, /* {prompt: true}: asked on the terminal, no echo */
};

struct pv_playbook_secret_ref {
	enum pv_playbook_secret_source source;
	char *value;   /* PATH (resolved against the playbook's folder) or NAME; NULL otherwise */
	int line, col; /* where it was given, 0 when defaulted */
	char *where;   /* "FILE:LINE:COL" of the value, or the option that set it: errors name
			* this place, never the value (a NAME or PATH may be a password written
			* in the wrong place); NULL when unset */
};

enum pv_playbook_ldap_transport {
	PV_PLAYBOOK_LDAP_LDAPS = 0, /* ldaps://, CA checked against the DC name (default) */
	PV_PLAYBOOK_LDAP_STARTTLS,  /* ldap:// + StartTLS, CA checked */
	PV_PLAYBOOK_LDAP_GSSAPI,    /* ldap:// + SASL GSSAPI, sealed (SSF >= 56) */
};

enum pv_playbook_os { PV_PLAYBOOK_OS_LINUX = 0, PV_PLAYBOOK_OS_WINDOWS };

struct pv_playbook_ssh {
	char *user;	   /* default "root" */
	int port;	   /* default 22 */
	char *identity;	   /* private key file; NULL = ssh-agent / default keys */
	char *known_hosts; /* default ~/.ssh/known_hosts */
	bool accept_new;   /* accept (and record) unknown host keys; default false */
	int timeout;	   /* seconds, default 10 */
};

struct pv_playbook_host {
	char *name;    /* host name as used for SSH and in templates ({client}, {server}) */
	char *address; /* IPv4/IPv6 literal; required for server and clients */
	enum pv_playbook_os os; /* clients: linux (default) or windows */
	/* the playbook's top-level ssh: merged with the host's own ssh: */
	struct pv_playbook_ssh ssh;
	int line, col;
};

/* A DC of the domain other than domain.dc (domain.other_dcs). */
struct pv_playbook_dc_ref {
	char *name;    /* as in its TLS certificate: dc2.lab.test */
	char *address; /* IP; NULL: the name is resolved */
};

struct pv_playbook_domain {
	char *realm;	  /* required, upper-cased: LAB.TEST */
	char *netbios;	  /* required, at most 15 chars: LAB */
	char *dns_domain; /* default: realm lower-cased */
	char *base_dn;	  /* default: DC=<label>,... from dns_domain */
	char *dc_name;	  /* required: DC host name as in its certificate (dc.lab.test) */
	char *dc_address; /* optional: IP of the DC (used when the name does not resolve) */
	enum pv_playbook_ldap_transport transport; /* default ldaps */
	char *ca_file; /* CA bundle for LDAPS/StartTLS; required unless transport gssapi */
	int timeout;   /* seconds for connect and each operation, default 10 */
	char *admin;   /* admin principal, default "Administrator" (realm appended if absent) */
	struct pv_playbook_secret_ref admin_password; /* required */
	bool has_host; /* domain.ssh given: run reaches the DC over SSH (its watch) */
	/* then: name dc, address dc_address (or none: the name), ssh */
	struct pv_playbook_host host;
	struct pv_playbook_dc_ref *other_dcs; /* the domain's other DCs: dc writes to dc_name only;
					       * server, status and cleanup look at these too */
	size_t nother_dcs;
	int replication_timeout; /* seconds to wait for another DC to catch up, default 600;
				  * 0: do not wait */
};

struct pv_playbook_users {
	unsigned per_client;			/* default 1 */
	char *name_template;			/* default "{client}-u{n}" */
	char *ou;				/* default "OU=<lab>,<base_dn>" */
	struct pv_playbook_secret_ref password; /* required for dc */
};

/* What kind of file server the playbook's is, which says which phases apply to it: a Samba
 * server provision joins and fills (join and server), or one whose shares and home trees are
 * made another way (FSCT's prepare server on Windows, a NAS's own tools): then only dc, client
 * and controller, and SSH to it only for a drain command. */
enum pv_playbook_server_kind {
	PV_PLAYBOOK_SERVER_SAMBA = 0,
	PV_PLAYBOOK_SERVER_WINDOWS,
	PV_PLAYBOOK_SERVER_NAS
};
/* "samba", "windows", "nas", then NULL */
extern const char *const pv_playbook_server_kinds[];

struct pv_playbook_server {
	struct pv_playbook_host host;	   /* required */
	enum pv_playbook_server_kind kind; /* default samba */
	char *alias_template;		   /* default "{server}u{n}" */
	unsigned shares;		   /* number of fsrootN shares, default 1 */
	char *share_template;		   /* default "fsroot{k}" */
	char *share_path;  /* folder holding the share directories, default /srv/provision */
	char *fileset;	   /* fileset description file, resolved; NULL = none */
	char *service;	   /* service-control command template, "{action}" and "{service}"
			    * replaced, default "systemctl {action} {service}" */
	char *smb_encrypt; /* Samba's "smb encrypt" set on the lab's shares (off,
			    * if_required, desired, required); NULL: left as it is */
	bool alias_spns;   /* cifs/ SPNs for every alias (Kerberos through them), default
			    * true; false: the aliases work with NTLM only */
};

struct pv_playbook_controller {
	char *results;		      /* results folder, required for controller */
	struct pv_playbook_host host; /* host.name NULL = local */
};

enum pv_playbook_driver_kind {
	PV_PLAYBOOK_DRIVER_COMMAND = 0,
	PV_PLAYBOOK_DRIVER_FSCT,
	PV_PLAYBOOK_DRIVER_BUILTIN
};

struct pv_playbook_driver {
	char *name; /* "command" (default), "fsct" or "builtin" */
	enum pv_playbook_driver_kind kind;
	char *client_command;	  /* template run on each client; NULL when unset */
	char *controller_command; /* template run on the controller; NULL when unset */
	/* the ramp, FSCT's: user counts are totals across the clients; 0 when not given */
	unsigned min_users, max_users, step;
	int duration;	     /* seconds each step is held, 0 when not given */
	int warmup;	     /* seconds of each step before its measurement, default 0 */
	int timeout;	     /* seconds for the whole run, default 0 = none */
	int watch;	     /* seconds between samples of the server, default 2; 0 = no watch */
	unsigned refine;     /* builtin: after the ramp, bisect between the last step carried and
			      * the first over it until they are at most this many users apart;
			      * 0 (default): no */
	unsigned over_steps; /* builtin: the ramp ends after this many steps in a row over the
			      * answer (overloaded, not client-bound); 0 (default): every step */
	char *fsct_path;     /* driver fsct: fsct.exe on the Windows hosts, default "fsct.exe" */
	char *fsct_workload; /* default "HomeFolders" */
	int line, col;	     /* where the section is (0 when absent), for messages */
};

enum pv_playbook_probe_kind {
	PV_PLAYBOOK_PROBE_COMMAND = 0,
	PV_PLAYBOOK_PROBE_WRITEBACK,
	PV_PLAYBOOK_PROBE_INFLIGHT,
	PV_PLAYBOOK_PROBE_SMB
};

struct pv_playbook_drain {
	enum pv_playbook_probe_kind probe; /* default command when command is given */
	char *command;	/* probe command: run on the server, prints the queue depth */
	char *metric;	/* name shown in progress, default per probe ("req_queue" for command) */
	long threshold; /* drained when depth <= threshold, default 0 */
	int interval;	/* seconds between polls, default 2 (backs off up to 8 times that) */
	int settle;	/* seconds the depth must stay at or below the threshold, default 4 */
	int timeout;	/* seconds, default 600 */
	bool between_steps; /* run waits for it between the steps of a ramp */
};

struct pv_playbook {
	char *path; /* as given; "" for none */
	char *dir;  /* folder relative paths are resolved against */
	char *lab;  /* lab id tagging every object, default "provision"; [A-Za-z0-9_-]{1,32} */
	struct pv_playbook_domain domain;
	struct pv_playbook_users users;
	bool has_server;
	struct pv_playbook_server server;
	struct pv_playbook_host *clients; /* nclients entries, names unique */
	size_t nclients;
	char *inventory;       /* clients: {inventory: FILE}: the file (resolved), else NULL */
	char *inventory_group; /* its group, default "all" */
	const char *inventory_format; /* "INI" or "YAML" */
	int fanout;		      /* hosts worked on at once over SSH (1..256), default 16 */
	bool has_controller;
	struct pv_playbook_controller controller;
	struct pv_playbook_driver driver;
	bool has_drain;
	struct pv_playbook_drain drain;
	bool has_load; /* the section is there (load always holds the settings) */
	struct pv_playbook_workload load; /* the built-in driver's workload; defaults when absent */
	char *workload;			  /* load.workload: the learned workload's file, resolved
					   * (its kinds are in load.learned); NULL = none */
};

/* Parse and validate. overrides: NULL or a NULL-terminated array of "dotted.key=value"
 * strings applied on top of the file (e.g. "users.per_client=20", "domain.ca_file=x.pem");
 * a value is a YAML scalar. On success *out is set (free with pv_playbook_free).
 * Errors (recorded, "FILE:LINE:COL: message; expected ..."): PV_EIO file unreadable,
 * PV_ECONFIG syntax, unknown key, duplicate key, wrong type, missing key, bad value. */
int pv_playbook_read(const char *path, const char *const *overrides, struct pv_playbook **out);
/* Same from a string (for tests); name is used in messages. */
int pv_playbook_parse(const char *name, const char *text, size_t len, const char *const *overrides,
		      struct pv_playbook **out);
void pv_playbook_free(struct pv_playbook *pb);

/* Look up a client by name; NULL when absent. */
const struct pv_playbook_host *pv_playbook_client(const struct pv_playbook *pb, const char *name);

#endif
