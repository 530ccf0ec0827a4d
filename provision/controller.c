/* provision/controller.c: `provision controller` and `provision cleanup controller`: options in,
 * the phase (phases/controller.h), its result out as text or JSON. */
#include "provision/provision.h"

#include "phases/controller.h"
#include "util/err.h"

#include "json/json.h"
#include <stdlib.h>
#include <string.h>

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_controller_result *c = result;
	const char *cmd = ctx->cli.cmd->id == CMD_CLEANUP ? "cleanup controller" : "controller";
	const char *st = c->state, *where = c->host;

	if (code != PV_OK || !st)
		return;
	if (strcmp(st, "moved") == 0)
		printf("%s: moved %s:%s (%lu entries) to %s and made it anew, empty\n", cmd, where,
		       c->results, c->entries, c->backup);
	else if (strcmp(st, "would move") == 0)
		printf("%s: would move %s:%s (%lu entries) to %s and make it anew, empty\n", cmd,
		       where, c->results, c->entries, c->backup);
	else if (strcmp(st, "created") == 0)
		printf("%s: created %s:%s, empty\n", cmd, where, c->results);
	else if (strcmp(st, "would create") == 0)
		printf("%s: would create %s:%s\n", cmd, where, c->results);
	else if (strcmp(st, "empty") == 0)
		printf("%s: nothing to do: %s:%s is empty already\n", cmd, where, c->results);
	else
		printf("%s: nothing to do: %s:%s does not exist\n", cmd, where, c->results);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_controller_result *c = result;

	(void)ctx;
	(void)code;
	pv_json_str(o, "host", c->host);
	pv_json_str(o, "results", c->results[0] ? c->results : NULL);
	pv_json_str(o, "state", c->state);
	pv_json_int(o, "entries", (long long)c->entries);
	pv_json_str(o, "backup", c->backup[0] ? c->backup : NULL);
	pv_json_secs(o, "seconds", c->seconds);
	pv_json_plan(o, &c->plan);
}

static void release(void *result)
{
	pv_phases_controller_result_release(result);
}

static int run(struct pv_ctx *ctx, struct pv_out *out, bool cleanup)
{
	struct pv_phases_controller_opts o = {cleanup, ctx->cli.opt[OPT_BACKUP]};
	struct pv_phases_controller_result *res =
		pv_out_result(out, cleanup ? "cleanup controller" : "controller", sizeof(*res),
			      text, json, release);

	if (!res)
		return PV_EIO;
	if (ctx->cli.opt[OPT_CLIENTS])
		return pv_error(PV_EUSAGE, "--clients does not apply to '%s'", out->command);
	if (cleanup && ctx->cli.opt[OPT_LEAVE])
		return pv_error(PV_EUSAGE, "--leave belongs to 'cleanup join'");
	return pv_phases_controller_reset(&ctx->env, &o, res);
}

int pv_cmd_controller(struct pv_ctx *ctx, struct pv_out *out)
{
	return run(ctx, out, false);
}

int pv_cmd_cleanup_controller(struct pv_ctx *ctx, struct pv_out *out)
{
	return run(ctx, out, true);
}

const struct pv_render pv_render_controller = {text, json};
