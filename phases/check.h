/* phases/check.h: the preflight. Reaches every host the way the later phases will and records
 * one item per check (ok, warn or fail, what, where, and what to do). Changes nothing. */
#ifndef PV_PHASES_CHECK_H
#define PV_PHASES_CHECK_H

#include "phases/phase.h"

struct pv_phases_check_item {
	const char *check; /* "playbook", "secret", "dns", "ldap", "ldaps", "kerberos", "ssh" ... */
	const char *target; /* e.g. "dc.lab.test" */
	const char *status; /* "ok", "warn", "fail" */
	int code;	    /* the outcome of a failure */
	char msg[1024];
};

struct pv_phases_check_result {
	struct pv_phases_check_item *items;
	size_t n, cap;
	int first_fail; /* PV_OK when nothing failed */
	size_t failed;
	/* called as each item is recorded (the CLI prints it then), may be NULL */
	void (*on_item)(const struct pv_phases_check_item *it, void *arg);
	void *arg;
};

/* Record one item (for the playbook's own check, made before env exists). */
void pv_phases_check_add(struct pv_phases_check_result *res, const char *check, const char *target,
			 const char *status, int code, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* Every check after the playbook's; returns res->first_fail. */
int pv_phases_check_run(const struct pv_env *env, const char *playbook_path,
			struct pv_phases_check_result *res);
void pv_phases_check_result_release(struct pv_phases_check_result *res);

#endif
