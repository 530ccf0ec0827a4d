/* provision/cli.h: the command table and command-line parsing (pure logic, unit-tested).
 *
 * provision [global options] <command> [subcommand] [options]
 * Global options are accepted anywhere; a command's own options only after the command. */
#ifndef PV_PROVISION_CLI_H
#define PV_PROVISION_CLI_H

#include <stdbool.h>
#include <stddef.h>

enum pv_cmd_id {
	CMD_CHECK,
	CMD_PREPARE,
	CMD_DC,
	CMD_JOIN,
	CMD_SERVER,
	CMD_CLIENT,
	CMD_CONTROLLER,
	CMD_RUN,
	CMD_WAIT,
	CMD_CLEANUP,
	CMD_STATUS,
	CMD_LOAD,
	CMD_REPORT,
	CMD_COMPARE,
	CMD_COPY,
	CMD_COPY_AGENT,
	CMD_SWEEP,
	CMD_LEARN,
	CMD_HELP,
	CMD_COUNT
};

/* Option ids: index into struct pv_cli.opt. */
enum pv_opt_id {
	/* global */
	OPT_PLAYBOOK,
	OPT_VERBOSE,
	OPT_QUIET,
	OPT_JSON,
	OPT_DRY_RUN,
	OPT_NO_PROGRESS,
	OPT_VERSION,
	OPT_HELP,
	OPT_SET,
	/* command options */
	OPT_CA_FILE,
	OPT_ADMIN_PASSWORD_FILE,
	OPT_USERS,
	OPT_CLIENTS,
	OPT_OU,
	OPT_NAME_TEMPLATE,
	OPT_PASSWORD_FILE,
	OPT_STDIN_PASSWORD,
	OPT_FORCE,
	OPT_VERIFY,
	OPT_RESET_PASSWORDS,
	OPT_VIA,
	OPT_LEAVE,
	OPT_BACKUP,
	OPT_TIMEOUT,
	OPT_PARALLEL,
	OPT_MIN_USERS,
	OPT_MAX_USERS,
	OPT_STEP,
	OPT_REFINE,
	OPT_OVER_STEPS,
	OPT_DURATION,
	OPT_WARMUP,
	OPT_WATCH,
	OPT_ID,
	OPT_DRAIN,
	OPT_PROBE,
	OPT_PROBE_COMMAND,
	OPT_THRESHOLD,
	OPT_INTERVAL,
	OPT_SETTLE,
	OPT_CLIENT,
	OPT_WORKGROUP,
	OPT_OPS,
	OPT_HTML,
	OPT_PORT,
	OPT_GAP,
	OPT_KEEP_NAMES,
	OPT_OUTPUT,
	OPT_CHECK_REPLAY,
	OPT_FROM,
	OPT_FILESET,
	OPT_SHARE,
	OPT_TO,
	OPT_MT,
	OPT_CONNECTIONS,
	OPT_MIRROR,
	OPT_NO_PROFILE,
	OPT_SETTING,
	OPT_SETTING_COMMAND,
	OPT_REPEAT,
	OPT_COUNT
};

/* What the dispatcher prepares before a command's handler runs (as git's RUN_SETUP). */
enum pv_cmd_flags {
	PV_CMD_PLAYBOOK = 1u << 0,	/* load the playbook; a failure ends the command */
	PV_CMD_PLAYBOOK_SOFT = 1u << 1, /* load it, and let the handler report a failure (check) */
	PV_CMD_STOPPABLE = 1u << 2,	/* Ctrl-C and SIGTERM ask the work to stop (run, wait) */
	PV_CMD_LOCKED = 1u << 3,	/* changes the lab: one such command at a time per lab */
	PV_CMD_OPERANDS = 1u << 4,	/* takes operands (report RUN_DIR): in pv_cli.args */
};

struct pv_ctx;
struct pv_out;
struct pv_render;
/* A command's handler: it fills out with its typed result and how to render it. */
typedef int (*pv_handler)(struct pv_ctx *ctx, struct pv_out *out);

/* A subcommand: prepare's and cleanup's phases. */
struct pv_sub {
	const char *name;
	pv_handler run;
	const struct pv_render *render; /* how its result nests in prepare, cleanup, status */
};

/* One command, whole: what the dispatcher prepares, its handler, how its result renders, its
 * subcommands, its options and its help (as git's git.c keeps its commands). */
struct pv_command {
	enum pv_cmd_id id;
	const char *name;
	pv_handler run;			/* NULL: help, answered by the dispatcher */
	const struct pv_render *render; /* phases: how the result nests in prepare and status */
	const struct pv_sub *subs;	/* NULL-named end; NULL when none */
	bool sub_required;
	const enum pv_opt_id *options; /* its own, OPT_COUNT at the end; NULL when none */
	unsigned flags;		       /* enum pv_cmd_flags */
	const char *usage;	       /* after "provision [global options] " */
	const char *summary;	       /* one line */
	const char *details;	       /* paragraph(s) for `provision help <command>` */
};

struct pv_option {
	enum pv_opt_id id;
	const char *lng;
	char shrt;
	const char *arg; /* argument name, NULL for a flag */
	bool global;	 /* accepted anywhere; else by the commands listing it */
	const char *help;
};

struct pv_cli {
	const struct pv_command *cmd; /* NULL when none given */
	const char *sub;	      /* subcommand or help topic, NULL when none */
	const char *opt[OPT_COUNT];   /* option values; flags hold "1"; last one wins */
	int verbosity;		      /* -q: -1, default 0, each -v adds 1 */
	const char **sets;	      /* --set KEY=VALUE values, NULL-terminated (never NULL) */
	size_t nsets;
	const char **args; /* the operands of a PV_CMD_OPERANDS command, in order (or NULL) */
	size_t nargs;
	/* sweep's --setting and --setting-command values, in order (NULL when none) */
	const char **settings, **setting_commands;
	size_t nsettings, nsetting_commands;
};

extern const struct pv_command pv_commands[CMD_COUNT];
extern const struct pv_option pv_options[];
extern const size_t pv_noptions;

const struct pv_command *pv_cli_command(const char *name);
/* The phase command a subcommand of prepare or cleanup names ("dc" -> CMD_DC), or CMD_COUNT. */
enum pv_cmd_id pv_cli_phase(const char *sub);
/* cmd's subcommand named name, or NULL. */
const struct pv_sub *pv_cli_sub(const struct pv_command *cmd, const char *name);
/* Whether cmd lists option id among its own. */
bool pv_cli_takes(const struct pv_command *cmd, enum pv_opt_id id);
/* The handler the parsed command line names (a subcommand's when one is given); NULL: help. */
pv_handler pv_cli_handler(const struct pv_cli *cli);
/* Parse argv (argv[0] is the program). On PV_EUSAGE a message is recorded naming the
 * problem and what to do. cli is always safe to release. */
int pv_cli_parse(int argc, char **argv, struct pv_cli *cli);
void pv_cli_release(struct pv_cli *cli);
/* Parse a non-negative decimal count with an upper bound; PV_EUSAGE with a message naming
 * option on failure. */
int pv_cli_count(const char *option, const char *text, unsigned long max, unsigned long *out);

#endif
