/* provision/commands.c: which function handles each command, and each phase of prepare and
 * cleanup. A command missing here parses its options, then exits PV_ENOTIMPL; help marks it. */
#include "provision/provision.h"

#include <string.h>

static const struct {
	enum pv_cmd_id id;
	const char *sub; /* NULL: the command without a phase */
	pv_handler fn;
} handlers[] = {
	{CMD_CHECK, NULL, pv_cmd_check},
	{CMD_PREPARE, NULL, pv_cmd_prepare},
	{CMD_DC, NULL, pv_cmd_dc},
	{CMD_JOIN, NULL, pv_cmd_join},
	{CMD_SERVER, NULL, pv_cmd_server},
	{CMD_CLIENT, NULL, pv_cmd_client},
	{CMD_CONTROLLER, NULL, pv_cmd_controller},
	{CMD_CLEANUP, NULL, pv_cmd_cleanup},
	{CMD_CLEANUP, "dc", pv_cmd_cleanup_dc},
	{CMD_CLEANUP, "join", pv_cmd_cleanup_join},
	{CMD_CLEANUP, "server", pv_cmd_cleanup_server},
	{CMD_CLEANUP, "client", pv_cmd_cleanup_client},
	{CMD_CLEANUP, "controller", pv_cmd_cleanup_controller},
	{CMD_STATUS, NULL, pv_cmd_status},
	{CMD_RUN, NULL, pv_cmd_run},
	{CMD_LOAD, NULL, pv_cmd_load},
	{CMD_WAIT, NULL, pv_cmd_wait},
	{CMD_REPORT, NULL, pv_cmd_report},
	{CMD_COMPARE, NULL, pv_cmd_compare},
};

pv_handler pv_handler_for(enum pv_cmd_id id, const char *sub)
{
	/* 'prepare dc' is 'dc' */
	if (id == CMD_PREPARE && sub)
		return pv_handler_for(pv_cli_phase(sub), NULL);
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].id == id &&
		    (handlers[i].sub ? sub && strcmp(handlers[i].sub, sub) == 0 : !sub))
			return handlers[i].fn;
	return NULL;
}

bool pv_cmd_built(enum pv_cmd_id id, const char *sub)
{
	if (id == CMD_HELP)
		return true;
	return pv_handler_for(id, sub) != NULL;
}
