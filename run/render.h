/* run/render.h: what a run's load driver runs where, computed from the playbook: the ramp of
 * steps (and the steps that refine its answer) and each client's share of users, the `command`
 * driver's templates filled in, FSCT's own command lines. Pure: no I/O, unit-tested. */
#ifndef PV_RUN_RENDER_H
#define PV_RUN_RENDER_H

#include "load/summary.h"
#include "env/env.h"
#include "util/buf.h"

/* The steps of a ramp: user totals across the clients, min_users to max_users by step (the
 * last step is max_users even when step does not reach it exactly, as FSCT does). */
struct pv_run_ramp {
	unsigned *totals;
	size_t n;
};
/* PV_ECONFIG naming driver.* when the ramp is not given or impossible: a total beyond what the
 * playbook's users make (users.per_client on every client), or fewer users than clients. */
int pv_run_ramp_plan(const struct pv_playbook *pb, struct pv_run_ramp *out);
void pv_run_ramp_release(struct pv_run_ramp *r);
/* The builtin driver's --refine (driver.refine): after a ramp whose steps are given, the users
 * of the next step, bisecting between the last step carried and the first over it, or 0 when
 * they are at most resolution users apart or there is nothing to refine (no step over the
 * answer, or the step over it client-bound: the server's limit is not known to lie there). At
 * least minimum users. */
unsigned pv_run_refine_next(const struct pv_load_summary *steps, size_t n, double threshold,
			    unsigned resolution, unsigned minimum);
/* The builtin driver's --over-steps (driver.over_steps): whether the last k of the n steps run
 * so far (in the order they ran) were all over the answer: their load started, and the server
 * did not carry it, the clients not the limit (not client-bound). False when k is 0 or fewer
 * than k steps ran. */
bool pv_run_ramp_over(const struct pv_load_summary *steps, size_t n, double threshold, unsigned k);
/* Client i's share of total users over n clients: as even as can be, the first ones one more. */
unsigned pv_run_ramp_share(unsigned total, size_t n, size_t i);

/* What the command driver's templates may use, {name} in the text. */
struct pv_run_driver_vars {
	const char *client;	   /* {client}: this client's name ("" on the controller) */
	unsigned users;		   /* {users}: this client's users in the step */
	unsigned users_total;	   /* {users_total} */
	unsigned step, steps;	   /* {step} (from 1), {steps} */
	int duration, warmup;	   /* {duration}, {warmup}: seconds */
	const char *results;	   /* {results}: this step's folder on the host */
	const char *password_file; /* {password_file}: the users' password there, 0600 */
	const char *clients;	   /* {clients}: the clients, comma-separated */
};

/* Fill tmpl in: {client} {users} {users_total} {step} {steps} {duration} {warmup} {results}
 * {password_file} {clients}, and from the playbook {server} {server_address} {alias_template}
 * (the server's alias template, {n} left for the command) {user_template} ({n} left)
 * {first_user} {last_user} (this client's) {share} (the first share) {shares} {domain}
 * {realm} {dns_domain} {lab}. Values are names and paths as the playbook has them; a {word}
 * of lower-case letters and '_' that is none of these is PV_ECONFIG naming it; other braces
 * (the shell's ${X}, { a; }) are left as they are. *uses_password tells whether
 * {password_file} occurs. */
int pv_run_driver_render(const struct pv_playbook *pb, const char *tmpl,
			 const struct pv_run_driver_vars *v, struct pv_buf *out,
			 bool *uses_password);

/* Whether FSCT can run as the playbook says: a server, a controller host (FSCT's controller is
 * a Windows host its clients reach by name: never this machine, never 'localhost'), and
 * Windows clients. PV_ECONFIG naming what to set. */
int pv_run_fsct_check(const struct pv_playbook *pb);
/* FSCT's command lines for Windows hosts over OpenSSH for Windows, as PowerShell: the users'
 * password is read from the session's stdin (never on the SSH command line; FSCT itself takes
 * it only as /password on fsct.exe's command line, which is how FSCT works: anyone who can
 * list that Windows host's processes sees it). Not run here: unit-tested only. */
int pv_run_fsct_client(const struct pv_playbook *pb, const char *controller, struct pv_buf *out);
int pv_run_fsct_controller(const struct pv_playbook *pb, struct pv_buf *out);

#endif
