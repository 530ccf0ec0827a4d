/* provision/lab.c: `provision prepare`, `provision cleanup` (no phase) and `provision status`:
 * options in, the whole lab (phases/lab.h), one line per phase (or per part of the status) and
 * a verdict out, or one JSON document with each phase's own result nested in it. */
#include "provision/provision.h"

#include "phases/lab.h"
#include "util/err.h"

#include "json/json.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PARALLEL_MAX 64

/* ---- one line per phase ---- */

static void step_line(const char *cmd, const struct pv_phases_lab_step *s, const char *what)
{
	if (!s->state)
		return;
	printf("%s: %-11s%-8s %s%s%s (%.1f s)\n", cmd, s->name, s->state,
	       s->code != PV_OK || strcmp(s->state, "skipped") == 0 ? s->msg : what,
	       s->code != PV_OK && what[0] ? "; " : "", s->code != PV_OK ? what : "", s->seconds);
}

static void prepare_text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_lab_prepare_result *r = result;
	const struct pv_phases_trees_stats *t = &r->server.trees;
	char w[PV_PHASES_LAB_PHASES][2 * PATH_MAX + 64];

	(void)code;
	snprintf(w[PV_PHASES_LAB_DC], sizeof(w[0]), "%lu users: %lu created, %lu present%s%s",
		 r->dc.planned, r->dc.created, r->dc.present, r->dc.failed ? ", failed " : "",
		 r->dc.failed ? "some" : "");
	if (ctx->env.dry_run)
		snprintf(w[PV_PHASES_LAB_DC], sizeof(w[0]),
			 "%lu users: %lu present, %lu would be created", r->dc.planned,
			 r->dc.present, r->dc.missing);
	snprintf(w[PV_PHASES_LAB_JOIN], sizeof(w[0]), "%s %s (%s), trust %s", r->join.server,
		 r->join.state ? r->join.state : "?", r->join.account,
		 r->join.trust_verified ? "verified" : "not checked");
	snprintf(w[PV_PHASES_LAB_SERVER], sizeof(w[0]),
		 "shares %u made, %u present; alias SPNs %zu added, %zu present; trees: %lu of %lu "
		 "complete before, %lu files written",
		 r->server.shares_made, r->server.shares_present, r->server.spns_added,
		 r->server.spns_present, t->complete, t->users, t->files_made + t->files_fixed);
	if (t->replaced)
		snprintf(w[PV_PHASES_LAB_SERVER] + strlen(w[PV_PHASES_LAB_SERVER]),
			 sizeof(w[0]) - strlen(w[PV_PHASES_LAB_SERVER]),
			 "; %lu trees of earlier accounts of the same names built anew",
			 t->replaced);
	if (r->server.dc_wait > 0)
		snprintf(w[PV_PHASES_LAB_SERVER] + strlen(w[PV_PHASES_LAB_SERVER]),
			 sizeof(w[0]) - strlen(w[PV_PHASES_LAB_SERVER]),
			 "; waited %.1f s for %s (its DC) to replicate the users",
			 r->server.dc_wait, r->server.dc);
	snprintf(w[PV_PHASES_LAB_CLIENT], sizeof(w[0]),
		 "%zu clients: %zu written, %zu unchanged, %zu failed", r->client.n,
		 r->client.changed, r->client.unchanged, r->client.failed);
	snprintf(w[PV_PHASES_LAB_CONTROLLER], sizeof(w[0]), "%s:%s %s", r->controller.host,
		 r->controller.results, r->controller.state ? r->controller.state : "?");
	for (int i = 0; i < PV_PHASES_LAB_PHASES; i++)
		step_line("prepare", &r->steps[i], w[i]);
	if (ctx->env.dry_run) {
		pv_text_plan("prepare", &r->dc.plan);
		pv_text_plan("prepare", &r->join.plan);
		pv_text_plan("prepare", &r->server.plan);
		pv_text_plan("prepare", &r->client.plan);
		pv_text_plan("prepare", &r->controller.plan);
	}
	printf("prepare: %s in %.1f s\n", code == PV_OK ? "the lab is prepared" : "not complete",
	       r->seconds);
}

static void cleanup_text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_lab_cleanup_result *r = result;
	char w[PV_PHASES_LAB_PHASES][2 * PATH_MAX + 64];
	static const int order[] = {PV_PHASES_LAB_CONTROLLER, PV_PHASES_LAB_CLIENT,
				    PV_PHASES_LAB_SERVER, PV_PHASES_LAB_JOIN, PV_PHASES_LAB_DC};

	(void)ctx;
	snprintf(w[PV_PHASES_LAB_DC], sizeof(w[0]), "%lu users deleted%s", r->dc.deleted,
		 r->dc.ou_deleted ? " and the OU" : "");
	snprintf(w[PV_PHASES_LAB_JOIN], sizeof(w[0]), "%s%s%s",
		 r->join.nothing   ? "nothing of this lab's"
		 : r->join.stopped ? "smbd and winbindd stopped"
				   : "",
		 r->join.left ? ", left the domain" : "",
		 r->join.account_deleted ? ", account deleted" : "");
	snprintf(w[PV_PHASES_LAB_SERVER], sizeof(w[0]),
		 "%u shares (with their trees) and %zu alias SPNs "
		 "removed",
		 r->server.shares_removed, r->server.spns_removed);
	snprintf(w[PV_PHASES_LAB_CLIENT], sizeof(w[0]),
		 "%zu clients: %zu cleaned, %zu had none, %zu failed", r->client.n,
		 r->client.changed, r->client.unchanged, r->client.failed);
	snprintf(w[PV_PHASES_LAB_CONTROLLER], sizeof(w[0]), "%s:%s %s%s%s", r->controller.host,
		 r->controller.results, r->controller.state ? r->controller.state : "?",
		 r->controller.backup[0] ? ", kept in " : "", r->controller.backup);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		step_line("cleanup", &r->steps[order[i]], w[order[i]]);
	if (ctx->env.dry_run) {
		pv_text_plan("cleanup", &r->controller.plan);
		pv_text_plan("cleanup", &r->client.plan);
		pv_text_plan("cleanup", &r->server.plan);
		pv_text_plan("cleanup", &r->join.plan);
		pv_text_plan("cleanup", &r->dc.plan);
	}
	printf("cleanup: %s in %.1f s\n", code == PV_OK ? "done" : "not complete", r->seconds);
}

/* {"phase": .., "state": .., "ok": .., "exit": .., "outcome": .., "message": .., "seconds": ..,
 *  "result": {the phase's own fields}} */
static struct pv_json *step_json(const struct pv_ctx *ctx, const struct pv_phases_lab_step *s,
				 const struct pv_render *rd, const void *result)
{
	struct pv_json *o = pv_json_object(), *in = pv_json_object();

	pv_json_str(o, "phase", s->name);
	pv_json_str(o, "state", s->state);
	pv_json_bool(o, "ok", s->code == PV_OK);
	pv_json_int(o, "exit", s->code);
	pv_json_str(o, "outcome", pv_status_name(s->code));
	pv_json_str(o, "message", s->msg[0] ? s->msg : NULL);
	pv_json_secs(o, "seconds", s->seconds);
	if (s->state && strcmp(s->state, "skipped") != 0)
		rd->json(ctx, result, s->code, in);
	pv_json_set(o, "result", in);
	return o;
}

static void prepare_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_lab_prepare_result *r = result;
	struct pv_json *a = pv_json_array();
	const void *res[PV_PHASES_LAB_PHASES] = {&r->dc, &r->join, &r->server, &r->client,
						 &r->controller};
	/* prepare's subcommands are the phases in this order, with their renderers */
	const struct pv_sub *rd = pv_commands[CMD_PREPARE].subs;

	(void)code;
	for (int i = 0; i < PV_PHASES_LAB_PHASES; i++)
		pv_json_append(a, step_json(ctx, &r->steps[i], rd[i].render, res[i]));
	pv_json_set(o, "phases", a);
	pv_json_secs(o, "seconds", r->seconds);
}

static void cleanup_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_lab_cleanup_result *r = result;
	struct pv_json *a = pv_json_array();
	const void *res[PV_PHASES_LAB_PHASES] = {&r->dc, &r->join, &r->server, &r->client,
						 &r->controller};
	const struct pv_sub *rd = pv_commands[CMD_CLEANUP].subs;

	(void)code;
	for (int i = PV_PHASES_LAB_PHASES - 1; i >= 0; i--)
		pv_json_append(a, step_json(ctx, &r->steps[i], rd[i].render, res[i]));
	pv_json_set(o, "phases", a);
	pv_json_secs(o, "seconds", r->seconds);
}

static void prepare_release(void *result)
{
	pv_phases_lab_prepare_result_release(result);
}

static void cleanup_release(void *result)
{
	pv_phases_lab_cleanup_result_release(result);
}

int pv_cmd_prepare(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_lab_prepare_opts o;
	struct pv_phases_lab_prepare_result *res = pv_out_result(
		out, "prepare", sizeof(*res), prepare_text, prepare_json, prepare_release);
	unsigned long n;
	int r;

	if (!res)
		return PV_EIO;
	memset(&o, 0, sizeof(o));
	o.dc.reset_passwords = ctx->cli.opt[OPT_RESET_PASSWORDS] != NULL;
	o.dc.verify = ctx->cli.opt[OPT_VERIFY] != NULL;
	o.dc.force = ctx->cli.opt[OPT_FORCE] != NULL;
	o.trees.via = ctx->cli.opt[OPT_VIA];
	o.controller.backup_dir = ctx->cli.opt[OPT_BACKUP];
	if (ctx->cli.opt[OPT_PARALLEL]) {
		if ((r = pv_cli_count("--parallel", ctx->cli.opt[OPT_PARALLEL], PARALLEL_MAX, &n)))
			return r;
		o.trees.parallel = (unsigned)n;
	}
	return pv_phases_lab_prepare(&ctx->env, &o, res);
}

int pv_cmd_cleanup(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_lab_cleanup_result *res = pv_out_result(
		out, "cleanup", sizeof(*res), cleanup_text, cleanup_json, cleanup_release);

	if (!res)
		return PV_EIO;
	if (ctx->cli.opt[OPT_CLIENTS])
		return pv_error(PV_EUSAGE, "cleanup of the whole lab takes every client; --clients "
					   "belongs to 'cleanup client'");
	return pv_phases_lab_cleanup(&ctx->env, ctx->cli.opt[OPT_LEAVE] != NULL,
				     ctx->cli.opt[OPT_BACKUP], res);
}

/* ---- status ---- */

static const char *mark(bool ok)
{
	return ok ? "ok" : "MISSING";
}

static void status_text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_lab_status *st = result;
	const struct pv_phases_dc_status *d = &st->dc.st;
	const struct pv_phases_server_status *s = &st->server.st;
	const struct pv_phases_controller_status *k = &st->controller.st;
	const struct pv_playbook *pb = ctx->pb;

	printf("lab '%s' (realm %s), as the hosts say:\n", pb->lab, pb->domain.realm);
	if (st->dc.code != PV_OK)
		printf("  %-11s FAILED    %s\n", "users", st->dc.msg);
	else
		printf("  %-11s %-9s %lu of %lu planned in %s (%s)%s\n", "users",
		       mark(d->present == d->planned && d->ou_exists), d->present, d->planned,
		       pb->users.ou,
		       d->ou_ours     ? "made by this lab"
		       : d->ou_exists ? "not made by this lab"
				      : "the OU is absent",
		       d->tagged > d->present ? ", and more of this lab's not planned" : "");
	if (st->server.not_ours) {
		printf("  %-11s %-9s %s: server.kind is %s: its shares and home trees are not "
		       "provision's, not asked\n",
		       "server", "-", pb->server.host.name,
		       pv_playbook_server_kinds[pb->server.kind]);
	} else if (st->server.code != PV_OK) {
		printf("  %-11s FAILED    %s\n", "server", st->server.msg);
	} else {
		printf("  %-11s %-9s %s: %s%s, trust %s, smbd %s, winbindd %s\n", "join",
		       mark(s->joined && s->trust && s->smbd && s->winbindd), pb->server.host.name,
		       s->joined ? "member" : "not a member",
		       s->joined ? (s->ours ? " (joined by this lab)" : " (not joined by this lab)")
				 : "",
		       s->trust ? "ok" : "failing", s->smbd ? "running" : "stopped",
		       s->winbindd ? "running" : "stopped");
		if (s->dc_wanted || s->dc_behind)
			printf("  %-11s %-9s %s (the DC %s uses) holds %lu of the %lu users made "
			       "on "
			       "%s%s%s\n",
			       "own DC", mark(!s->dc_behind), s->dc, pb->server.host.name,
			       s->dc_users, s->dc_wanted, pb->domain.dc_name,
			       s->dc_behind ? ": " : "", s->dc_behind ? s->dc_msg : "");
		else if (s->dc[0])
			printf("  %-11s %-9s %s uses %s\n", "own DC", "ok", pb->server.host.name,
			       s->dc);
		printf("  %-11s %-9s %u of %u\n", "shares",
		       mark(s->shares_present == s->shares_planned), s->shares_present,
		       s->shares_planned);
		printf("  %-11s %-9s %zu of %zu on %s\n", "alias SPNs",
		       mark(s->spns_present == s->spns_planned), s->spns_present, s->spns_planned,
		       s->account);
		if (s->trees_skipped)
			printf("  %-11s %-9s no fileset in the playbook\n", "trees", "ok");
		else
			printf("  %-11s %-9s %lu of %lu users have a complete tree\n", "trees",
			       mark(s->trees_complete == s->trees_planned), s->trees_complete,
			       s->trees_planned);
	}
	if (st->clients.code != PV_OK)
		printf("  %-11s FAILED    %s\n", "clients", st->clients.msg);
	for (size_t i = 0; i < st->clients.st.n; i++) {
		const struct pv_phases_client_status_host *h = &st->clients.st.hosts[i];

		if (h->code != PV_OK)
			printf("  %-11s FAILED    %s\n", "client", h->msg);
		else
			printf("  %-11s %-9s %s: hosts block %s\n", "client",
			       mark(strcmp(h->block, "in place") == 0), h->name, h->block);
	}
	if (st->controller.code != PV_OK)
		printf("  %-11s FAILED    %s\n", "controller", st->controller.msg);
	else
		printf("  %-11s %-9s %s:%s: %s, %lu entries, %lu backups beside it\n", "controller",
		       mark(strcmp(k->kind, "folder") == 0), k->host, k->results,
		       strcmp(k->kind, "folder") == 0 ? "folder" : k->kind, k->entries, k->backups);
	if (code == PV_OK)
		printf("status: the lab is complete (%.1f s)\n", st->seconds);
	else if (st->empty)
		printf("status: the lab holds nothing%s (%.1f s)\n",
		       s->joined && s->ours ? " (the server is still a member: cleanup --leave)"
					    : "",
		       st->seconds);
	else if (code == PV_EINCOMPLETE)
		printf("status: the lab is incomplete: see MISSING above (%.1f s)\n", st->seconds);
}

static void status_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_lab_status *st = result;
	const struct pv_phases_dc_status *d = &st->dc.st;
	const struct pv_phases_server_status *s = &st->server.st;
	const struct pv_phases_controller_status *k = &st->controller.st;
	struct pv_json *dc = pv_json_object(), *srv = pv_json_object(), *cl = pv_json_array(),
		       *ctl = pv_json_object();

	(void)code;
	pv_json_bool(o, "complete", st->complete);
	pv_json_bool(o, "empty", st->empty);
	pv_json_str(o, "lab", ctx->pb->lab);
	pv_json_secs(o, "seconds", st->seconds);
	pv_json_bool(dc, "ok", st->dc.code == PV_OK);
	pv_json_str(dc, "error", st->dc.code == PV_OK ? NULL : st->dc.msg);
	pv_json_str(dc, "ou", ctx->pb->users.ou);
	pv_json_bool(dc, "ou_exists", d->ou_exists);
	pv_json_bool(dc, "ou_ours", d->ou_ours);
	pv_json_int(dc, "users_planned", (long long)d->planned);
	pv_json_int(dc, "users_present", (long long)d->present);
	pv_json_int(dc, "users_tagged", (long long)d->tagged);
	pv_json_set(o, "dc", dc);
	pv_json_bool(srv, "ok", st->server.code == PV_OK);
	pv_json_str(srv, "error", st->server.code == PV_OK ? NULL : st->server.msg);
	pv_json_str(srv, "name", ctx->pb->has_server ? ctx->pb->server.host.name : NULL);
	pv_json_str(srv, "kind",
		    ctx->pb->has_server ? pv_playbook_server_kinds[ctx->pb->server.kind] : NULL);
	pv_json_bool(srv, "asked", !st->server.not_ours);
	pv_json_str(srv, "account", s->account[0] ? s->account : NULL);
	pv_json_bool(srv, "joined", s->joined);
	pv_json_bool(srv, "joined_by_lab", s->ours);
	pv_json_bool(srv, "trust", s->trust);
	pv_json_str(srv, "dc", s->dc[0] ? s->dc : NULL);
	pv_json_int(srv, "dc_users", (long long)s->dc_users);
	pv_json_int(srv, "dc_users_wanted", (long long)s->dc_wanted);
	pv_json_bool(srv, "dc_behind", s->dc_behind);
	pv_json_bool(srv, "smbd", s->smbd);
	pv_json_bool(srv, "winbindd", s->winbindd);
	pv_json_int(srv, "shares_planned", s->shares_planned);
	pv_json_int(srv, "shares_present", s->shares_present);
	pv_json_int(srv, "spns_planned", (long long)s->spns_planned);
	pv_json_int(srv, "spns_present", (long long)s->spns_present);
	pv_json_bool(srv, "trees_skipped", s->trees_skipped);
	pv_json_int(srv, "trees_planned", (long long)s->trees_planned);
	pv_json_int(srv, "trees_complete", (long long)s->trees_complete);
	pv_json_set(o, "server", srv);
	for (size_t i = 0; i < st->clients.st.n; i++) {
		const struct pv_phases_client_status_host *h = &st->clients.st.hosts[i];
		struct pv_json *e = pv_json_object();

		pv_json_str(e, "name", h->name);
		pv_json_bool(e, "ok", h->code == PV_OK);
		pv_json_str(e, "error", h->code == PV_OK ? NULL : h->msg);
		pv_json_str(e, "block", h->code == PV_OK ? h->block : NULL);
		pv_json_append(cl, e);
	}
	pv_json_set(o, "clients", cl);
	pv_json_bool(ctl, "ok", st->controller.code == PV_OK);
	pv_json_str(ctl, "error", st->controller.code == PV_OK ? NULL : st->controller.msg);
	pv_json_str(ctl, "host", k->host);
	pv_json_str(ctl, "results", k->results[0] ? k->results : NULL);
	pv_json_str(ctl, "kind", k->kind);
	pv_json_int(ctl, "entries", (long long)k->entries);
	pv_json_int(ctl, "backups", (long long)k->backups);
	pv_json_set(o, "controller", ctl);
}

static void status_release(void *result)
{
	pv_phases_lab_status_release(result);
}

int pv_cmd_status(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_lab_status *st =
		pv_out_result(out, "status", sizeof(*st), status_text, status_json, status_release);
	int r;

	if (!st)
		return PV_EIO;
	if ((r = pv_phases_lab_status(&ctx->env, st)) != PV_OK)
		return r;
	if (st->complete)
		return PV_OK;
	return pv_error(PV_EINCOMPLETE, st->empty
						? "the lab holds nothing"
						: "the lab lacks something the playbook asks for");
}
