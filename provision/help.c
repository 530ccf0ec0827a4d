/* provision/help.c: --help, `provision help <command>`, and the exit-status table. */
#include "provision/provision.h"

#include "util/err.h"

#include <string.h>

static const int exit_codes[] = {
	PV_OK,	     PV_EFAIL,	     PV_EUSAGE,	  PV_ECONFIG,  PV_ECRED,    PV_ETRUST,
	PV_EUNREACH, PV_EDIR,	     PV_EREMOTE,  PV_EIO,      PV_EPARTIAL, PV_ECONFLICT,
	PV_ENOTIMPL, PV_EINCOMPLETE, PV_ETIMEOUT, PV_ESTOPPED, PV_EBUSY,    PV_EBUG};

static void options(FILE *f, unsigned mask)
{
	for (size_t i = 0; i < pv_noptions; i++) {
		const struct pv_option *o = &pv_options[i];
		char spec[64];

		if (mask ? !(o->commands & mask) : o->commands != 0)
			continue;
		if (o->shrt)
			snprintf(spec, sizeof(spec), "-%c, --%s%s%s", o->shrt, o->lng,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(spec, sizeof(spec), "    --%s%s%s", o->lng, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		fprintf(f, "  %-30s %s\n", spec, o->help);
	}
}

static void exit_table(FILE *f)
{
	fputs("\nExit status:\n", f);
	for (size_t i = 0; i < sizeof(exit_codes) / sizeof(exit_codes[0]); i++)
		fprintf(f, "  %-3d %-16s %s\n", exit_codes[i], pv_status_name(exit_codes[i]),
			pv_status_help(exit_codes[i]));
}

void pv_help_main(FILE *f)
{
	fputs("usage: provision [global options] <command> [options]\n\n"
	      "Prepares, drives and tears down the Active Directory lab of a file-server capacity\n"
	      "test (FSCT-style) from a YAML playbook.\n\nCommands:\n",
	      f);
	for (size_t i = 0; i < CMD_COUNT; i++)
		fprintf(f, "  %-11s %s%s\n", pv_commands[i].name, pv_commands[i].summary,
			pv_cmd_built(pv_commands[i].id, NULL) ? "" : " (not built yet)");
	fputs("\nGlobal options:\n", f);
	options(f, 0);
	fputs("\nSecrets never go on the command line: the playbook names a file, an environment\n"
	      "variable, stdin or a terminal prompt. See docs/playbook.md.\n"
	      "Example: provision -p playbooks/lab.yaml check\n"
	      "'provision help <command>' shows a command's options.\n",
	      f);
	exit_table(f);
}

void pv_help_command(FILE *f, const struct pv_command *cmd)
{
	fprintf(f, "usage: provision [global options] %s\n\n%s.\n", cmd->usage, cmd->summary);
	if (!pv_cmd_built(cmd->id, NULL))
		fputs("This command is not built yet: it exits with status 12.\n", f);
	fprintf(f, "\n%s\n", cmd->details);
	if (cmd->id != CMD_HELP) {
		bool any = false;

		for (size_t i = 0; i < pv_noptions; i++)
			any |= (pv_options[i].commands & (1u << cmd->id)) != 0;
		if (any) {
			fputs("\nOptions:\n", f);
			options(f, 1u << cmd->id);
		}
	}
	fputs("\nGlobal options:\n", f);
	options(f, 0);
	exit_table(f);
}
