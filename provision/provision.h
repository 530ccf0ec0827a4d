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

/* commands, one file each */
int pv_cmd_check(struct pv_ctx *ctx);
int pv_cmd_dc(struct pv_ctx *ctx);
int pv_cmd_cleanup_dc(struct pv_ctx *ctx);

#endif
