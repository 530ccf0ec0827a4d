/* provision/main.c: entry point. Parse the command line, prepare what the command's table entry
 * asks for (the playbook, the credentials), run its handler, report its result (text or one
 * JSON document) and map the outcome to the exit status. The only place that exits. */
#include "provision/provision.h"

#include "util/err.h"
#include "util/log.h"

#include "json/json.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PV_VERSION
#define PV_VERSION "0.0.0"
#endif

/* --json as given, even when parsing failed before reaching it (the error is still JSON). */
static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			return true;
	return false;
}

static void help_text(const struct pv_ctx *ctx, const void *result, int code)
{
	(void)ctx;
	(void)code;
	fputs(result, stdout);
}

static void help_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	(void)ctx;
	(void)code;
	pv_json_str(o, "text", result);
}

/* --help, 'help', --version and no command: the text, or in JSON {"text": ...}. */
static int help(struct pv_ctx *ctx, struct pv_out *out)
{
	const struct pv_command *c = ctx->cli.cmd;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return pv_error(PV_EIO, "out of memory");
	if (ctx->cli.opt[OPT_VERSION])
		fprintf(f, "provision %s\n", PV_VERSION);
	else if (c && c->id == CMD_HELP && ctx->cli.sub)
		pv_help_command(f, pv_cli_command(ctx->cli.sub));
	else if (c && c->id != CMD_HELP)
		pv_help_command(f, c);
	else
		pv_help_main(f);
	fclose(f);
	out->command = ctx->cli.opt[OPT_VERSION] ? "version" : "help";
	out->result = text;
	out->text = help_text;
	out->json = help_json;
	return PV_OK;
}

/* What the table entry asks for before the handler runs. */
static int setup(struct pv_ctx *ctx)
{
	unsigned flags = ctx->cli.cmd->flags;
	int r;

	if (!(flags & (PV_CMD_PLAYBOOK | PV_CMD_PLAYBOOK_SOFT)))
		return PV_OK;
	r = pv_ctx_read(ctx);
	if (r != PV_OK && (flags & PV_CMD_PLAYBOOK_SOFT)) {
		ctx->load_code = r;
		snprintf(ctx->load_msg, sizeof(ctx->load_msg), "%s", pv_errmsg());
		r = PV_OK;
	}
	/* before a password is asked for or anything is touched */
	if (r == PV_OK && ctx->pb && (flags & PV_CMD_LOCKED) && !ctx->cli.opt[OPT_DRY_RUN])
		r = pv_lab_lock(ctx->pb->lab);
	if (r == PV_OK && ctx->pb)
		r = pv_env_setup(ctx->pb); /* before any thread: it may set KRB5_CONFIG */
	if (r == PV_OK)
		r = pv_creds_init(ctx);
	ctx->env.pb = ctx->pb;
	ctx->env.dry_run = ctx->cli.opt[OPT_DRY_RUN] != NULL;
	return r;
}

static volatile sig_atomic_t stop_asked;

/* The first Ctrl-C or SIGTERM asks long work to stop what it started; a second one ends the
 * process at once (the remote side then stops on its own: its SSH session ends). */
static void on_stop(int sig)
{
	stop_asked = 1;
	signal(sig, SIG_DFL);
}

static void stoppable(struct pv_ctx *ctx)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ctx->env.stop = &stop_asked;
}

int main(int argc, char **argv)
{
	struct pv_ctx ctx;
	struct pv_out out;
	char msg[1024] = "";
	int r;

	/* A closed pipe (stdout, or a peer's socket) is an error to report, not a silent death */
	signal(SIGPIPE, SIG_IGN);
	memset(&ctx, 0, sizeof(ctx));
	memset(&out, 0, sizeof(out));
	/* before any secret is read: no core file, not dumpable */
	r = pv_creds_harden();
	if (r == PV_OK)
		r = pv_cli_parse(argc, argv, &ctx.cli);
	pv_out_init(&ctx);
	if (r != PV_OK) {
		ctx.json = wants_json(argc, argv);
		goto report;
	}
	if (!ctx.cli.cmd && !ctx.cli.opt[OPT_HELP] && !ctx.cli.opt[OPT_VERSION]) {
		pv_help_main(stderr);
		r = pv_error(PV_EUSAGE, "no command given");
		goto report;
	}
	if (!ctx.cli.cmd || ctx.cli.opt[OPT_HELP] || ctx.cli.opt[OPT_VERSION] ||
	    ctx.cli.cmd->id == CMD_HELP) {
		r = help(&ctx, &out);
		goto report;
	}
	out.command = ctx.cli.cmd->name;
	if ((r = setup(&ctx)) == PV_OK) {
		pv_handler fn = pv_cli_handler(&ctx.cli);

		if (ctx.cli.cmd->flags & PV_CMD_STOPPABLE)
			stoppable(&ctx);

		if (fn)
			r = fn(&ctx, &out);
		else
			r = pv_error(PV_ENOTIMPL,
				     "'%s%s%s' is not built yet in provision %s; see "
				     "'provision help %s' for what it will do",
				     ctx.cli.cmd->name, ctx.cli.sub ? " " : "",
				     ctx.cli.sub ? ctx.cli.sub : "", PV_VERSION, ctx.cli.cmd->name);
	}
report:
	if (r != PV_OK)
		snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	r = pv_out_report(&ctx, &out, r, msg);
	if (out.release && out.result)
		out.release(out.result);
	free(out.result);
	pv_env_cleanup();
	pv_creds_free(ctx.creds);
	pv_playbook_free(ctx.pb);
	pv_cli_release(&ctx.cli);
	return r;
}
