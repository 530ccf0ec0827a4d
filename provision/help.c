/* provision/help.c: --help, `provision help <command>`, and the exit-status table. */
#include "provision/provision.h"

#include "util/err.h"

#include <string.h>

static const int exit_codes[] = {
	PV_OK,	     PV_EFAIL,	     PV_EUSAGE,	  PV_ECONFIG,  PV_ECRED,    PV_ETRUST,
	PV_EUNREACH, PV_EDIR,	     PV_EREMOTE,  PV_EIO,      PV_EPARTIAL, PV_ECONFLICT,
	PV_ENOTIMPL, PV_EINCOMPLETE, PV_ETIMEOUT, PV_ESTOPPED, PV_EBUSY,    PV_EBUG};

/* The options of cmd, or the global ones (cmd NULL), in the option table's order. */
static void options(FILE *f, const struct pv_command *cmd)
{
	for (size_t i = 0; i < pv_noptions; i++) {
		const struct pv_option *o = &pv_options[i];
		char spec[64];

		if (cmd ? !pv_cli_takes(cmd, o->id) : !o->global)
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
		fprintf(f, "  %-11s %s\n", pv_commands[i].name, pv_commands[i].summary);
	fputs("\nGlobal options:\n", f);
	options(f, NULL);
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
	fprintf(f, "\n%s\n", cmd->details);
	if (cmd->options) {
		fputs("\nOptions:\n", f);
		options(f, cmd);
	}
	fputs("\nGlobal options:\n", f);
	options(f, NULL);
	exit_table(f);
}
