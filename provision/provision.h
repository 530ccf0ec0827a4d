/* provision/provision.h: what the CLI's files share. provision/ is the only part of the tool
 * that prints or exits: it parses the command line, loads the playbook (when the command's
 * table entry says so), calls the phase, and renders the phase's typed result as text or as
 * one JSON document (docs/json.md). */
#ifndef PV_PROVISION_PROVISION_H
#define PV_PROVISION_PROVISION_H

#include <stdbool.h>
#include <stdio.h>

#include "phases/phase.h"
#include "playbooks/playbook.h"
#include "provision/cli.h"
#include "util/secret.h"
#include "json/json.h"

struct pv_json;
struct pv_creds;

struct pv_ctx {
	struct pv_cli cli;
	struct pv_playbook *pb; /* loaded by the dispatcher for commands that need it */
	int load_code;		/* PV_CMD_PLAYBOOK_SOFT: why the playbook did not load */
	char load_msg[1024];
	struct pv_env env; /* pb, --dry-run, the credentials provider */
	struct pv_creds *creds;
	bool json;
	bool progress; /* live progress allowed: stderr is a terminal in the foreground */
};

/* What a command hands the reporter: its typed result and how to render it. text prints the
 * result on stdout (also after a failure, for what was done); json adds the result's fields
 * to the document's object; release frees what the result holds (main frees the result
 * itself). Any may be NULL. */
struct pv_out {
	const char *command; /* as the JSON names it: "dc", "cleanup dc", "prepare" */
	void *result;
	void (*text)(const struct pv_ctx *ctx, const void *result, int code);
	void (*json)(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *obj);
	void (*release)(void *result);
};

/* output.c: a zeroed result of size bytes, handed to out with how to render and release it;
 * NULL (PV_EIO recorded) when out of memory. */
void *pv_out_result(struct pv_out *out, const char *command, size_t size,
		    void (*text)(const struct pv_ctx *, const void *, int),
		    void (*json)(const struct pv_ctx *, const void *, int, struct pv_json *),
		    void (*release)(void *));

/* How a phase's result is rendered: the same pair its command uses, for prepare, cleanup
 * and status to nest. */
struct pv_render {
	void (*text)(const struct pv_ctx *ctx, const void *result, int code);
	void (*json)(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *obj);
};
extern const struct pv_render pv_render_dc, pv_render_cleanup_dc, pv_render_join,
	pv_render_cleanup_join, pv_render_server, pv_render_cleanup_server, pv_render_client,
	pv_render_controller;

/* load.c: the playbook named by -p (or $PROVISION_PLAYBOOK, or ./provision.yaml) with --set and
 * the command options that stand for playbook values; and the clients of --clients. */
int pv_ctx_read(struct pv_ctx *ctx);
/* Those of --clients A,B in that order without repeats (PV_ECONFIG naming an unknown one),
 * else all. *out points into ctx->pb; the caller frees the array only. */
int pv_ctx_clients(struct pv_ctx *ctx, const struct pv_playbook_host ***out, size_t *n);

/* lock.c: lab (its id) locked for this process on this controller: PV_OK; PV_EBUSY naming the
 * holder's pid when another provision holds it; PV_EIO when the lock file cannot be used. */
int pv_lab_lock(const char *lab);

/* secrets.c: the credentials provider behind ctx->env (file, environment, stdin once, or a
 * prompt on the terminal), resolved on first use and kept for the run; the variables of the
 * playbook's {env: NAME} references are taken out of the environment by pv_creds_init, before
 * any thread or child exists. Messages name where a reference was given, never its value. */
int pv_creds_init(struct pv_ctx *ctx);
/* Before anything else: no core file (RLIMIT_CORE 0) and not dumpable (PR_SET_DUMPABLE 0,
 * which also stops ptrace attach by processes of the same user that are not root, for the
 * forked workers too). PV_EIO (recorded) when either cannot be set. */
int pv_creds_harden(void);
void pv_creds_free(struct pv_creds *c);

/* output.c: the log and progress sinks (stderr), the error line, and the JSON document. */
void pv_out_init(struct pv_ctx *ctx);
/* "provision: error: <msg>" on stderr. */
void pv_out_error(int code, const char *msg);
/* Write the result: text, or the one JSON document. Returns code, or PV_EIO when stdout
 * cannot be written (a full disk, a closed pipe). */
int pv_out_report(struct pv_ctx *ctx, const struct pv_out *out, int code, const char *msg);
/* JSON: the plan as "plan": [...] (json/json.h builds the rest). */
void pv_json_plan(struct pv_json *o, const struct pv_env_plan *p);
/* Text: the dry run's plan as "<cmd>: would <item>" lines. */
void pv_text_plan(const char *cmd, const struct pv_env_plan *p);

/* load.c: the first line of stdin, byte by byte (what follows stays for the caller), as the
 * secret the agents on clients (load, copy-agent: who) are given. */
int pv_read_password_line(const char *who, struct pv_secret **out);

/* help.c */
void pv_help_main(FILE *f);
void pv_help_command(FILE *f, const struct pv_command *cmd);

/* commands, one file each; what each renders is beside it */
int pv_cmd_check(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_dc(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_cleanup_dc(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_client(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_cleanup_client(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_controller(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_cleanup_controller(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_join(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_cleanup_join(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_server(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_cleanup_server(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_prepare(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_cleanup(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_status(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_run(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_load(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_copy(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_copy_agent(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_sweep_copy(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_sweep_run(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_wait(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_report(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_learn(struct pv_ctx *ctx, struct pv_out *out);
int pv_cmd_compare(struct pv_ctx *ctx, struct pv_out *out);

#endif
