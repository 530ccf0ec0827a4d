/* provision/commands.c: which function runs each command (and each cleanup phase). A command
 * or phase missing here parses its options, then exits PV_ENOTIMPL; help marks it. */
#include "provision/provision.h"

#include "util/err.h"

#include <string.h>

#ifndef PV_VERSION
#define PV_VERSION "0.0.0"
#endif

static const struct {
	enum pv_cmd_id id;
	const char *sub; /* NULL: any */
	int (*fn)(struct pv_ctx *ctx);
} handlers[] = {
	{ CMD_CHECK, NULL, pv_cmd_check },
	{ CMD_DC, NULL, pv_cmd_dc },
	{ CMD_CLEANUP, "dc", pv_cmd_cleanup_dc },
	{ CMD_CLIENT, NULL, pv_cmd_client },
	{ CMD_CLEANUP, "client", pv_cmd_cleanup_client },
	{ CMD_CONTROLLER, NULL, pv_cmd_controller },
	{ CMD_CLEANUP, "controller", pv_cmd_cleanup_controller },
	{ CMD_JOIN, NULL, pv_cmd_join },
	{ CMD_CLEANUP, "join", pv_cmd_cleanup_join },
	{ CMD_SERVER, NULL, pv_cmd_server },
	{ CMD_CLEANUP, "server", pv_cmd_cleanup_server },
};

static int (*find(enum pv_cmd_id id, const char *sub))(struct pv_ctx *)
{
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].id == id &&
		    (!handlers[i].sub || (sub && strcmp(handlers[i].sub, sub) == 0)))
			return handlers[i].fn;
	return NULL;
}

bool pv_cmd_built(enum pv_cmd_id id, const char *sub)
{
	if (id == CMD_HELP)
		return true;
	if (sub)
		return find(id, sub) != NULL;
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].id == id)
			return true;
	return false;
}

int pv_dispatch(struct pv_ctx *ctx)
{
	int (*fn)(struct pv_ctx *) = find(ctx->cli.cmd->id, ctx->cli.sub);
	int r;

	if (fn)
		return fn(ctx);
	r = pv_error(PV_ENOTIMPL, "'%s%s%s' is not built yet in provision %s; see 'provision help %s' "
				  "for what it will do",
		     ctx->cli.cmd->name, ctx->cli.sub ? " " : "", ctx->cli.sub ? ctx->cli.sub : "",
		     PV_VERSION, ctx->cli.cmd->name);
	return pv_out_fail(r);
}
