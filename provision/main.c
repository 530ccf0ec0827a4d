/* provision/main.c: entry point: parse the command line, load the playbook, dispatch, and map
 * the outcome to the exit status. The only place that exits. */
#include "provision/provision.h"

#include "util/err.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PV_VERSION
#define PV_VERSION "0.0.0"
#endif

int main(int argc, char **argv)
{
	struct pv_ctx ctx;
	int r;

	memset(&ctx, 0, sizeof(ctx));
	r = pv_cli_parse(argc, argv, &ctx.cli);
	pv_out_init(&ctx);
	if (r != PV_OK) {
		pv_out_fail(r);
		goto out;
	}
	if (ctx.cli.opt[OPT_VERSION]) {
		printf("provision %s\n", PV_VERSION);
		goto out;
	}
	if (!ctx.cli.cmd) {
		pv_help_main(ctx.cli.opt[OPT_HELP] ? stdout : stderr);
		r = ctx.cli.opt[OPT_HELP] ? PV_OK : PV_EUSAGE;
		goto out;
	}
	if (ctx.cli.opt[OPT_HELP] || ctx.cli.cmd->id == CMD_HELP) {
		const struct pv_command *c = ctx.cli.cmd;

		if (c->id == CMD_HELP)
			c = ctx.cli.sub ? pv_cli_command(ctx.cli.sub) : NULL;
		if (c)
			pv_help_command(stdout, c);
		else
			pv_help_main(stdout);
		goto out;
	}
	r = pv_dispatch(&ctx);
out:
	pv_playbook_free(ctx.pb);
	pv_cli_release(&ctx.cli);
	fflush(stdout);
	return r;
}
