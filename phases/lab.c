/* phases/lab.c: prepare, cleanup and status over every phase (see lab.h). Independent work runs
 * in threads: errors are recorded per thread (util/err.h), so each phase's message is kept in
 * its step as soon as it returns. */
#include "phases/lab.h"

#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[PV_PHASES_LAB_PHASES] = {"dc", "join", "server", "client",
							"controller"};

/* Close a step: its code and message, and done / already / partial / failed. */
static void finish(struct pv_phases_lab_step *s, int code, bool changed, bool dry, double t0)
{
	s->code = code;
	s->seconds = pv_now() - t0;
	if (code != PV_OK)
		snprintf(s->msg, sizeof(s->msg), "%s", pv_errmsg());
	if (code == PV_EPARTIAL)
		s->state = "partial";
	else if (code != PV_OK)
		s->state = "failed";
	else if (!changed)
		s->state = "already";
	else
		s->state = dry ? "planned" : "done";
}

static void skip(struct pv_phases_lab_step *s, const char *why)
{
	s->state = "skipped";
	s->code = PV_OK;
	snprintf(s->msg, sizeof(s->msg), "%s", why);
}

int pv_phases_lab_server_phase(const struct pv_playbook *pb, const char *phase)
{
	if (!pb->has_server || pb->server.kind == PV_PLAYBOOK_SERVER_SAMBA)
		return PV_OK;
	return pv_error(PV_ECONFIG,
			"'%s' does not apply to this server: server.kind is %s, whose shares and "
			"home trees are made outside provision (%s); its phases are dc, client and "
			"controller (docs/your-servers.md)",
			phase, pv_playbook_server_kinds[pb->server.kind],
			pb->server.kind == PV_PLAYBOOK_SERVER_WINDOWS
				? "FSCT's 'prepare server' on Windows"
				: "the NAS's own tools");
}

/* A phase of the server's that does not apply to its kind: skipped, saying why. */
static bool not_ours(const struct pv_env *env, struct pv_phases_lab_step *s)
{
	const struct pv_playbook_server *srv = &env->pb->server;

	if (pv_phases_lab_server_phase(env->pb, s->name) == PV_OK)
		return false;
	snprintf(s->msg, sizeof(s->msg), "server.kind is %s: %s",
		 pv_playbook_server_kinds[srv->kind],
		 strcmp(s->name, "join") == 0
			 ? "provision does not join it"
			 : "its shares and home trees are made outside provision");
	s->state = "skipped";
	s->code = PV_OK;
	return true;
}

/* The outcome over the steps: the first that failed, else partial, else ok; the message names
 * each step that did not succeed. */
static int outcome(struct pv_phases_lab_step *steps, const char *what)
{
	char msg[4096] = "";
	int first = PV_OK;
	bool partial = false;
	size_t len = 0;

	for (int i = 0; i < PV_PHASES_LAB_PHASES; i++) {
		struct pv_phases_lab_step *s = &steps[i];

		if (s->code == PV_OK)
			continue;
		if (s->code == PV_EPARTIAL)
			partial = true;
		else if (first == PV_OK)
			first = s->code;
		len += (size_t)snprintf(msg + len, len < sizeof(msg) ? sizeof(msg) - len : 0,
					"%s%s %s: %s", len ? "; " : "", what, s->name, s->msg);
	}
	if (first == PV_OK && !partial)
		return PV_OK;
	return pv_error(first != PV_OK ? first : PV_EPARTIAL, "%s", msg);
}

/* ---- prepare ---- */

struct prep {
	const struct pv_env *env;
	const struct pv_phases_lab_prepare_opts *o;
	struct pv_phases_lab_prepare_result *res;
};

static bool dc_changed(const struct pv_phases_dc_result *r)
{
	return r->created || r->reset || r->ou_created || r->missing;
}

static bool server_changed(const struct pv_phases_server_result *r)
{
	const struct pv_phases_trees_stats *t = &r->trees;

	return r->shares_made || r->shares_missing || r->spns_added || r->spns_missing ||
	       r->keytab_added || t->files_made || t->files_fixed || t->dirs_made || r->plan.n;
}

static void *prepare_dc(void *arg)
{
	struct prep *p = arg;
	double t0 = pv_now();
	int r = pv_phases_dc_prepare(p->env, &p->o->dc, &p->res->dc);

	finish(&p->res->steps[PV_PHASES_LAB_DC], r, dc_changed(&p->res->dc), p->env->dry_run, t0);
	return NULL;
}

static void *prepare_join(void *arg)
{
	struct prep *p = arg;
	struct pv_phases_lab_prepare_result *res = p->res;
	double t0 = pv_now();
	int r;

	if (not_ours(p->env, &res->steps[PV_PHASES_LAB_JOIN]))
		return NULL;
	r = pv_phases_join_prepare(p->env, &res->join);
	finish(&res->steps[PV_PHASES_LAB_JOIN], r,
	       res->join.state && strcmp(res->join.state, "present") != 0, p->env->dry_run, t0);
	return NULL;
}

/* server, once dc and join are through: its trees need the users, and the membership */
static void prepare_server(struct prep *p)
{
	struct pv_phases_lab_prepare_result *res = p->res;
	bool dry = p->env->dry_run;
	double t0;
	int r;

	if (not_ours(p->env, &res->steps[PV_PHASES_LAB_SERVER]))
		return;
	if (res->steps[PV_PHASES_LAB_DC].code != PV_OK &&
	    res->steps[PV_PHASES_LAB_DC].code != PV_EPARTIAL)
		skip(&res->steps[PV_PHASES_LAB_SERVER],
		     "dc failed: its users are needed for the trees");
	else if (res->steps[PV_PHASES_LAB_JOIN].code != PV_OK)
		skip(&res->steps[PV_PHASES_LAB_SERVER], "join failed: the server must be a member");
	else if (dry && res->join.state && strcmp(res->join.state, "present") != 0)
		skip(&res->steps[PV_PHASES_LAB_SERVER], "the server is not a member yet (dry run)");
	else {
		t0 = pv_now();
		r = pv_phases_server_prepare(p->env, &p->o->trees, &res->server);
		finish(&res->steps[PV_PHASES_LAB_SERVER], r, server_changed(&res->server), dry, t0);
	}
}

/* client -> controller */
static void *prepare_host_line(void *arg)
{
	struct prep *p = arg;
	struct pv_phases_lab_prepare_result *res = p->res;
	struct pv_phases_client_opts co = {false, NULL, 0};
	bool dry = p->env->dry_run;
	double t0 = pv_now();
	int r;

	r = pv_phases_client_apply(p->env, &co, &res->client);
	finish(&res->steps[PV_PHASES_LAB_CLIENT], r, res->client.changed > 0, dry, t0);
	t0 = pv_now();
	r = pv_phases_controller_reset(p->env, &p->o->controller, &res->controller);
	finish(&res->steps[PV_PHASES_LAB_CONTROLLER], r,
	       res->controller.state && strcmp(res->controller.state, "empty") != 0, dry, t0);
	return NULL;
}

/* Run fn in a thread (or here, when no thread can be made); *started says which. */
static void spawn(pthread_t *th, bool *started, void *(*fn)(void *), void *arg)
{
	*started = pthread_create(th, NULL, fn, arg) == 0;
	if (!*started)
		fn(arg);
}

int pv_phases_lab_prepare(const struct pv_env *env, const struct pv_phases_lab_prepare_opts *o,
			  struct pv_phases_lab_prepare_result *res)
{
	struct prep p = {env, o, res};
	double t0 = pv_now();
	pthread_t hosts, join;
	bool hosts_on, join_on;

	for (int i = 0; i < PV_PHASES_LAB_PHASES; i++)
		res->steps[i].name = names[i];
	/* the clients' blocks and the controller's folder, and the join (the DC's part of it is
	 * small), while dc makes the users; the server once both dc and join are through */
	spawn(&hosts, &hosts_on, prepare_host_line, &p);
	spawn(&join, &join_on, prepare_join, &p);
	prepare_dc(&p);
	if (join_on)
		pthread_join(join, NULL);
	prepare_server(&p);
	if (hosts_on)
		pthread_join(hosts, NULL);
	res->seconds = pv_now() - t0;
	return outcome(res->steps, "prepare");
}

void pv_phases_lab_prepare_result_release(struct pv_phases_lab_prepare_result *res)
{
	pv_phases_dc_result_release(&res->dc);
	pv_phases_join_result_release(&res->join);
	pv_phases_server_result_release(&res->server);
	pv_phases_client_result_release(&res->client);
	pv_phases_controller_result_release(&res->controller);
}

/* ---- cleanup ---- */

struct clean {
	const struct pv_env *env;
	bool leave;
	const char *backup_dir;
	struct pv_phases_lab_cleanup_result *res;
};

/* server -> join */
static void *cleanup_server_line(void *arg)
{
	struct clean *c = arg;
	struct pv_phases_lab_cleanup_result *res = c->res;
	bool dry = c->env->dry_run;
	double t0 = pv_now();
	int r;

	if (not_ours(c->env, &res->steps[PV_PHASES_LAB_SERVER])) {
		not_ours(c->env, &res->steps[PV_PHASES_LAB_JOIN]);
		return NULL;
	}
	r = pv_phases_server_cleanup(c->env, &res->server);
	finish(&res->steps[PV_PHASES_LAB_SERVER], r,
	       res->server.shares_removed || res->server.spns_removed || res->server.plan.n, dry,
	       t0);
	t0 = pv_now();
	r = pv_phases_join_cleanup(c->env, c->leave, &res->join);
	finish(&res->steps[PV_PHASES_LAB_JOIN], r, !res->join.nothing, dry, t0);
	return NULL;
}

static void *cleanup_dc(void *arg)
{
	struct clean *c = arg;
	double t0 = pv_now();
	int r = pv_phases_dc_cleanup(c->env, &c->res->dc);

	finish(&c->res->steps[PV_PHASES_LAB_DC], r, !c->res->dc.nothing, c->env->dry_run, t0);
	return NULL;
}

/* controller -> client */
static void *cleanup_host_line(void *arg)
{
	struct clean *c = arg;
	struct pv_phases_lab_cleanup_result *res = c->res;
	struct pv_phases_controller_opts ctl = {true, c->backup_dir};
	struct pv_phases_client_opts co = {true, NULL, 0};
	bool dry = c->env->dry_run;
	double t0 = pv_now();
	int r;

	r = pv_phases_controller_reset(c->env, &ctl, &res->controller);
	finish(&res->steps[PV_PHASES_LAB_CONTROLLER], r,
	       res->controller.state && strcmp(res->controller.state, "empty") != 0 &&
		       strcmp(res->controller.state, "absent") != 0,
	       dry, t0);
	t0 = pv_now();
	r = pv_phases_client_apply(c->env, &co, &res->client);
	finish(&res->steps[PV_PHASES_LAB_CLIENT], r, res->client.changed > 0, dry, t0);
	return NULL;
}

int pv_phases_lab_cleanup(const struct pv_env *env, bool leave, const char *backup_dir,
			  struct pv_phases_lab_cleanup_result *res)
{
	struct clean c = {env, leave, backup_dir, res};
	double t0 = pv_now();
	pthread_t hosts, dc;
	bool hosts_on, dc_on;

	for (int i = 0; i < PV_PHASES_LAB_PHASES; i++)
		res->steps[i].name = names[i];
	/* nothing waits for another's success: the controller and the clients, the users, and
	 * the server's shares then its membership, all at once */
	spawn(&hosts, &hosts_on, cleanup_host_line, &c);
	spawn(&dc, &dc_on, cleanup_dc, &c);
	cleanup_server_line(&c);
	if (dc_on)
		pthread_join(dc, NULL);
	if (hosts_on)
		pthread_join(hosts, NULL);
	res->seconds = pv_now() - t0;
	return outcome(res->steps, "cleanup");
}

void pv_phases_lab_cleanup_result_release(struct pv_phases_lab_cleanup_result *res)
{
	pv_phases_dc_cleanup_result_release(&res->dc);
	pv_phases_join_cleanup_result_release(&res->join);
	pv_phases_server_cleanup_result_release(&res->server);
	pv_phases_client_result_release(&res->client);
	pv_phases_controller_result_release(&res->controller);
}

/* ---- status ---- */

struct stat_job {
	const struct pv_env *env;
	struct pv_phases_lab_status *st;
	int part;
};

static void keep(int code, int *out, char *msg, size_t len)
{
	*out = code;
	if (code != PV_OK)
		snprintf(msg, len, "%s", pv_errmsg());
}

static void *status_part(void *arg)
{
	struct stat_job *j = arg;
	struct pv_phases_lab_status *st = j->st;

	switch (j->part) {
	case 0:
		keep(pv_phases_dc_status(j->env, &st->dc.st), &st->dc.code, st->dc.msg,
		     sizeof(st->dc.msg));
		break;
	case 1:
		/* a server whose shares and trees are not provision's: nothing of the lab's there
		 */
		if (pv_phases_lab_server_phase(j->env->pb, "status") != PV_OK)
			st->server.not_ours = true;
		else
			keep(pv_phases_server_status(j->env, &st->server.st), &st->server.code,
			     st->server.msg, sizeof(st->server.msg));
		break;
	case 2:
		keep(pv_phases_client_status(j->env, &st->clients.st), &st->clients.code,
		     st->clients.msg, sizeof(st->clients.msg));
		break;
	default:
		keep(pv_phases_controller_status(j->env, &st->controller.st), &st->controller.code,
		     st->controller.msg, sizeof(st->controller.msg));
	}
	return NULL;
}

int pv_phases_lab_status(const struct pv_env *env, struct pv_phases_lab_status *st)
{
	struct stat_job jobs[4];
	pthread_t th[4];
	bool started[4] = {false};
	double t0 = pv_now();
	const struct pv_phases_dc_status *d = &st->dc.st;
	const struct pv_phases_server_status *s = &st->server.st;
	const struct pv_phases_client_status *c = &st->clients.st;
	const struct pv_phases_controller_status *k = &st->controller.st;
	bool clients_in = true, clients_out = true, server_in, server_out;

	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct stat_job){env, st, i};
		spawn(&th[i], &started[i], status_part, &jobs[i]);
	}
	for (int i = 0; i < 4; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	st->seconds = pv_now() - t0;
	for (size_t i = 0; i < c->n; i++) {
		clients_in &=
			c->hosts[i].code == PV_OK && strcmp(c->hosts[i].block, "in place") == 0;
		clients_out &=
			c->hosts[i].code == PV_OK && strcmp(c->hosts[i].block, "absent") == 0;
	}
	server_in = st->server.not_ours ||
		    (st->server.code == PV_OK && s->joined && s->trust && s->smbd &&
		     !s->dc_behind && s->winbindd && s->shares_present == s->shares_planned &&
		     s->spns_present == s->spns_planned &&
		     (s->trees_skipped || s->trees_complete == s->trees_planned));
	server_out = st->server.not_ours || (st->server.code == PV_OK && s->shares_present == 0 &&
					     s->spns_present == 0 && s->trees_complete == 0);
	st->complete = st->dc.code == PV_OK && d->present == d->planned && d->ou_exists &&
		       server_in && st->clients.code == PV_OK && clients_in &&
		       st->controller.code == PV_OK && strcmp(k->kind, "folder") == 0;
	st->empty = st->dc.code == PV_OK && d->tagged == 0 && !d->ou_ours && server_out &&
		    st->clients.code == PV_OK && clients_out && st->controller.code == PV_OK &&
		    k->entries == 0;
	if (st->dc.code != PV_OK)
		return pv_error(st->dc.code, "dc: %s", st->dc.msg);
	if (st->server.code != PV_OK)
		return pv_error(st->server.code, "server: %s", st->server.msg);
	if (st->clients.code != PV_OK)
		return pv_error(st->clients.code, "clients: %s", st->clients.msg);
	if (st->controller.code != PV_OK)
		return pv_error(st->controller.code, "controller: %s", st->controller.msg);
	return PV_OK;
}

void pv_phases_lab_status_release(struct pv_phases_lab_status *st)
{
	pv_phases_client_status_release(&st->clients.st);
}
