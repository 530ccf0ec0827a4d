/* provision/provision.h: what the CLI's files share: the run context handed to every command,
 * output helpers (the only code that prints), and secret resolution. */
#ifndef PV_PROVISION_PROVISION_H
#define PV_PROVISION_PROVISION_H

#include <stdbool.h>
#include <stdio.h>

#include "playbooks/playbook.h"
#include "provision/cli.h"
#include "util/secret.h"

struct pv_ctx {
	struct pv_cli cli;
	struct pv_playbook *pb; /* loaded for commands that need it */
	bool json;
	bool progress; /* live progress allowed: stderr is a terminal in the foreground */
	bool stdin_taken; /* a secret was already read from stdin */
};

/* main.c: load the playbook named by -p (or $PROVISION_PLAYBOOK, or ./provision.yaml) with
 * --set and command-option overrides into ctx->pb. */
int pv_ctx_load(struct pv_ctx *ctx);
/* The clients a command runs on (after pv_ctx_load): those of --clients A,B in that order
 * without repeats (PV_ECONFIG naming an unknown one), else all. *out points into ctx->pb;
 * the caller frees the array only. */
int pv_ctx_clients(struct pv_ctx *ctx, const struct pv_host ***out, size_t *n);
/* The users' shared password: --password-file, --stdin-password, else users.password;
 * unset_hint (may be NULL) is added to the message when none is given. */
int pv_ctx_users_password(struct pv_ctx *ctx, const char *unset_hint, struct pv_secret **out);

/* output.c */
void pv_out_init(struct pv_ctx *ctx);
/* Print "provision: error: <msg>" (and nothing more) on stderr; returns code. */
int pv_out_fail(int code);
/* Write s as a JSON string (with quotes) to f. */
void pv_out_json_str(FILE *f, const char *s);

/* One line of a check-style report: status "ok", "warn" or "FAIL". */
struct pv_report {
	const char *check;  /* e.g. "ldaps" */
	const char *target; /* e.g. "dc.lab.test" */
	const char *status; /* "ok", "warn", "fail" */
	int code;           /* outcome code for failures */
	char msg[1024];
};
void pv_report_print(const struct pv_ctx *ctx, const struct pv_report *r);
void pv_report_json(FILE *f, const struct pv_report *rs, size_t n, int exit_code);

/* progress.c: a live line on a terminal, a plain line every 10 s otherwise. */
struct pv_progress {
	bool live, quiet, drawn;
	const char *what, *unit;
	unsigned long total, done;
	double start, last;
};
double pv_now(void); /* monotonic seconds */
void pv_progress_start(struct pv_progress *p, const struct pv_ctx *ctx, const char *what,
		       const char *unit, unsigned long total);
void pv_progress_update(struct pv_progress *p, unsigned long done);
void pv_progress_tick(struct pv_progress *p); /* one long request: time spent, no count */
void pv_progress_end(struct pv_progress *p);

/* secrets.c: resolve a playbook secret reference; what names the secret in messages. */
int pv_resolve_secret(struct pv_ctx *ctx, const struct pv_secret_ref *ref, const char *what,
		      struct pv_secret **out);

/* help.c */
void pv_help_main(FILE *f);
void pv_help_command(FILE *f, const struct pv_command *cmd);

/* commands.c: the handler table. pv_cmd_built: whether the command (and, when sub is given,
 * that subcommand) has a handler. pv_dispatch runs the handler, or fails PV_ENOTIMPL. */
bool pv_cmd_built(enum pv_cmd_id id, const char *sub);
int pv_dispatch(struct pv_ctx *ctx);

/* join.c: what join.c and server.c share about the file server. */
struct pv_remote;
struct pv_dir;
struct pv_buf;
/* Run script with `sh -c` on the server; in/inlen (a secret, data, or NULL) go to its stdin.
 * With status non-NULL the exit status is returned there (and the last line of stderr
 * recorded as the message); with status NULL a non-zero status fails PV_EREMOTE naming what. */
int pv_srv_run(struct pv_remote *rem, const char *what, const char *script, const void *in,
	       size_t inlen, struct pv_buf *out, int *status, int timeout);
/* The playbook's service command with {action} and {service} filled in, run on the server. */
int pv_srv_service(struct pv_remote *rem, const struct pv_server *s, const char *action,
		   const char *service);
struct pv_srv_facts {
	char netbios[64];   /* upper-case, from smb.conf */
	char realm[128], security[32];
	char info[256];     /* last line of 'net ads info' (its error when the DC is unreachable) */
	bool has_offset;    /* the DC answered 'net ads info' */
	long offset;        /* the DC's clock minus the server's, seconds */
	bool joined;        /* 'net ads testjoin' (or with PV_PROBE_QUICK 'wbinfo -P') succeeds */
	bool needs_keytab;  /* smb.conf's kerberos method uses a keytab */
	char dedicated_keytab[512]; /* its file with 'kerberos method = dedicated keytab' */
	long keytab_entries; /* not counted by PV_PROBE_QUICK */
	char sep[8];         /* winbind separator */
	char *lists;         /* PV_PROBE_QUICK: the probe's "share=NAME\037COMMENT\037DIR(0|1)"
			      * lines, and "kt=PRINCIPAL" lines then "ktlisted=1" when the
			      * kerberos method uses a keytab; freed by pv_srv_facts_release */
	bool smbd_running, winbindd_running; /* by their pid files */
	unsigned cores;     /* online CPUs (nproc); 0 when unknown */
};
/* The description join gives the computer account it joins: 'provision:<lab>:join'. */
void pv_srv_tag(char *out, size_t len, const struct pv_playbook *pb);
/* How much pv_srv_probe asks: PV_PROBE_CLOCK also the clock offset to the DC ('net ads info');
 * PV_PROBE_QUICK takes winbindd's link to the DC ('wbinfo -P') as proof of membership before
 * 'net ads testjoin', and does not count keytab entries. */
enum pv_probe { PV_PROBE_PLAIN, PV_PROBE_CLOCK, PV_PROBE_QUICK };
/* One round trip: Samba's view of the server (PV_EREMOTE when Samba is missing). */
int pv_srv_probe(struct pv_remote *rem, enum pv_probe how, struct pv_srv_facts *f);
void pv_srv_facts_release(struct pv_srv_facts *f);
/* The computer account <netbios>$: *dn (NULL when absent) and *desc (NULL when none); the
 * caller frees both. */
int pv_srv_account(struct pv_dir *dir, const struct pv_playbook *pb, const char *netbios,
		   char **dn, char **desc);

/* trees.c: the per-user home trees of `provision server`, built from the playbook's fileset
 * over SMB as each user (default) or on the server's disk over SSH (--via ssh). */
struct pv_tree_stats {
	bool skipped;            /* no fileset in the playbook */
	const char *via;         /* "smb" or "ssh" */
	char fileset[64];
	unsigned long users, files_per_user;
	unsigned long long bytes_per_user;
	unsigned long files_made, files_fixed, files_ok, dirs_made, failed_users;
	unsigned long long bytes_written;
	double seconds;
};
struct pv_trees;
/* Check what can be checked before anything is made: options, the fileset, the users' password
 * and every user in the domain (through the server's winbind). *out is NULL-free-safe with
 * pv_trees_free; st->skipped when the playbook has no fileset. */
int pv_trees_prepare(struct pv_ctx *ctx, struct pv_remote *rem, const struct pv_srv_facts *f,
		     struct pv_tree_stats *st,
		     struct pv_trees **out);
/* The users' folders and trees (the shares must exist); st is filled. */
int pv_trees_build(struct pv_trees *t);
void pv_trees_free(struct pv_trees *t);
void pv_tree_stats_print(FILE *f, const struct pv_tree_stats *st);
void pv_tree_stats_json(FILE *f, const struct pv_tree_stats *st); /* "trees":{...} */

/* commands, one file each */
int pv_cmd_check(struct pv_ctx *ctx);
int pv_cmd_dc(struct pv_ctx *ctx);
int pv_cmd_cleanup_dc(struct pv_ctx *ctx);
int pv_cmd_client(struct pv_ctx *ctx);
int pv_cmd_cleanup_client(struct pv_ctx *ctx);
int pv_cmd_controller(struct pv_ctx *ctx);
int pv_cmd_cleanup_controller(struct pv_ctx *ctx);
int pv_cmd_join(struct pv_ctx *ctx);
int pv_cmd_cleanup_join(struct pv_ctx *ctx);
int pv_cmd_server(struct pv_ctx *ctx);
int pv_cmd_cleanup_server(struct pv_ctx *ctx);

#endif
