/* phases/needs.h: what a host must have before the phases and `run` work there, judged from what
 * phases/scripts/needs.sh printed on it (check runs it over SSH): one check item per missing
 * prerequisite, naming it and its fix, or one ok item saying what was found. The list is
 * docs/your-servers.md's. Pure: unit-tested (tests/unit/check_phases.c). */
#ifndef PV_PHASES_NEEDS_H
#define PV_PHASES_NEEDS_H

#include "phases/check.h"
#include "util/buf.h"

enum pv_phases_needs_role {
	PV_PHASES_NEEDS_SERVER, /* a Samba server provision joins and fills (server.kind samba) */
	PV_PHASES_NEEDS_CLIENT, /* a Linux client */
	PV_PHASES_NEEDS_CONTROLLER, /* a remote controller (controller.host) running
				     * driver.controller_command */
};

/* The script for a host of that role: its variables, then needs.sh, appended to out. */
void pv_phases_needs_script(const struct pv_playbook *pb, enum pv_phases_needs_role role,
			    struct pv_buf *out);
/* Items into c for host, from facts (the script's "n_KEY=VALUE" lines, anywhere in the text). */
void pv_phases_needs_judge(struct pv_phases_check_result *c, const struct pv_playbook *pb,
			   const char *host, enum pv_phases_needs_role role, const char *facts);
/* The value of "key=" in text ("" when absent), into out. */
void pv_phases_needs_fact(const char *text, const char *key, char *out, size_t len);

#endif
