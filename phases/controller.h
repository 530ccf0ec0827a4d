/* phases/controller.h: the controller phase: the results folder (controller.results, on
 * controller.host over SSH when the playbook names one, else here) moved to a timestamped
 * backup and made anew, empty; results are never deleted. */
#ifndef PV_PHASES_CONTROLLER_H
#define PV_PHASES_CONTROLLER_H

#include <limits.h>

#include "phases/phase.h"

struct pv_phases_controller_opts {
	bool cleanup;		/* cleanup controller: never makes a missing folder */
	const char *backup_dir; /* --backup DIR, or NULL: beside the results folder */
};

struct pv_phases_controller_result {
	const char *host; /* "local" or the controller host's name */
	char results[PATH_MAX];
	/* "moved", "created", "empty", "absent", "would move", "would create"; NULL until known */
	const char *state;
	char backup[PATH_MAX]; /* where the results went ("" when nothing moved) */
	unsigned long entries; /* entries the results folder held */
	struct pv_env_plan plan;
	double seconds;
};

int pv_phases_controller_reset(const struct pv_env *env, const struct pv_phases_controller_opts *o,
			       struct pv_phases_controller_result *res);
void pv_phases_controller_result_release(struct pv_phases_controller_result *res);

struct pv_phases_controller_status {
	const char *host;
	char results[PATH_MAX];
	const char *kind;      /* "absent", "folder", "other" (a file or symbolic link) */
	unsigned long entries; /* in the folder */
	unsigned long backups; /* <results>.<stamp>... folders beside it */
};
int pv_phases_controller_status(const struct pv_env *env, struct pv_phases_controller_status *st);

/* controller_parse.c, pure: the remote scripts' stdout. The reset script's one
 * "pv-ctl STATE [N BACKUP]" line into res (state, entries, backup); the status script's
 * "pv-ctl-status KIND N N" into st (kind, entries, backups). Either line must start a line
 * of out and be one the script prints (counts in digits, BACKUP an absolute path that fits):
 * PV_EREMOTE otherwise, and res or st is left as it was. */
int pv_phases_controller_parse_reset(const char *out, struct pv_phases_controller_result *res);
int pv_phases_controller_parse_status(const char *out, struct pv_phases_controller_status *st);

#endif
