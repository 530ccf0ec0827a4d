/* phases/lab.h: the whole lab at once: prepare (every phase, in order, independent work at the
 * same time), cleanup (every cleanup, in reverse), and status (what the hosts hold now). */
#ifndef PV_PHASES_LAB_H
#define PV_PHASES_LAB_H

#include "phases/client.h"
#include "phases/controller.h"
#include "phases/dc.h"
#include "phases/join.h"
#include "phases/phase.h"
#include "phases/server.h"

enum pv_phases_lab_phase {
	PV_PHASES_LAB_DC,
	PV_PHASES_LAB_JOIN,
	PV_PHASES_LAB_SERVER,
	PV_PHASES_LAB_CLIENT,
	PV_PHASES_LAB_CONTROLLER,
	PV_PHASES_LAB_PHASES
};

/* How one phase of prepare or cleanup went. */
struct pv_phases_lab_step {
	const char *name; /* "dc", "join", "server", "client", "controller" */
	/* "done" (something made or removed), "already" (nothing to do), "partial", "failed",
	 * "skipped" (a phase it needs failed), "planned" (dry run) */
	const char *state;
	int code;
	char msg[1024];
	double seconds;
};

struct pv_phases_lab_prepare_opts {
	struct pv_phases_dc_opts dc;
	struct pv_phases_trees_opts trees;
	struct pv_phases_controller_opts controller;
};

struct pv_phases_lab_prepare_result {
	struct pv_phases_lab_step steps[PV_PHASES_LAB_PHASES]; /* in enum order */
	struct pv_phases_dc_result dc;
	struct pv_phases_join_result join;
	struct pv_phases_server_result server;
	struct pv_phases_client_result client;
	struct pv_phases_controller_result controller;
	double seconds;
};

/* dc, join, server, client and controller: dc, join, and client -> controller at the same time,
 * then server once dc and join are through (it is skipped when either failed). Returns
 * the code of the first phase (in order) that failed, else PV_EPARTIAL when one was partly
 * done, else PV_OK; the message names every phase that did not succeed. */
int pv_phases_lab_prepare(const struct pv_env *env, const struct pv_phases_lab_prepare_opts *o,
			  struct pv_phases_lab_prepare_result *res);
void pv_phases_lab_prepare_result_release(struct pv_phases_lab_prepare_result *res);

struct pv_phases_lab_cleanup_result {
	struct pv_phases_lab_step steps[PV_PHASES_LAB_PHASES]; /* in enum order; run in reverse */
	struct pv_phases_dc_cleanup_result dc;
	struct pv_phases_join_cleanup_result join;
	struct pv_phases_server_cleanup_result server;
	struct pv_phases_client_result client;
	struct pv_phases_controller_result controller;
	double seconds;
};

/* controller -> client, dc, and server -> join, at the same time. A failing cleanup stops none
 * of the others (nothing depends on another's success); the outcome is as for prepare. */
int pv_phases_lab_cleanup(const struct pv_env *env, bool leave, const char *backup_dir,
			  struct pv_phases_lab_cleanup_result *res);
void pv_phases_lab_cleanup_result_release(struct pv_phases_lab_cleanup_result *res);

/* One part of the status: what could be asked, or why not. */
struct pv_phases_lab_status {
	struct {
		int code;
		char msg[1024];
		struct pv_phases_dc_status st;
	} dc;
	struct {
		int code;
		char msg[1024];
		struct pv_phases_server_status st;
		bool not_ours; /* server.kind is not samba: its shares and trees are not asked */
	} server;
	struct {
		int code;
		char msg[1024];
		struct pv_phases_client_status st;
	} clients;
	struct {
		int code;
		char msg[1024];
		struct pv_phases_controller_status st;
	} controller;
	bool complete; /* everything the playbook asks for is in place */
	bool empty;    /* nothing of the lab's is left (a membership without --leave aside) */
	double seconds;
};

/* PV_OK when the join and server phases apply to the playbook's server (server.kind samba),
 * else PV_ECONFIG saying that phase (named) does not apply to that kind and what does. */
int pv_phases_lab_server_phase(const struct pv_playbook *pb, const char *phase);

/* Every host asked at once, read-only. PV_OK when every part could be asked (complete and
 * empty say what was found); else the code of the first part that could not. */
int pv_phases_lab_status(const struct pv_env *env, struct pv_phases_lab_status *st);
void pv_phases_lab_status_release(struct pv_phases_lab_status *st);

#endif
