/* provision/dc.c: `provision dc` and `provision cleanup dc`: options in, the phase
 * (phases/dc.h), a summary line or JSON out. */
#include "provision/provision.h"

#include "phases/dc.h"
#include "util/err.h"

#include "json/json.h"
#include <stdlib.h>

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_dc_result *r = result;
	double rate = r->seconds > 0 ? (double)r->created / r->seconds : 0;

	if (code != PV_OK && code != PV_EPARTIAL && !r->created)
		return;
	if (ctx->env.dry_run)
		printf("dc: %lu users planned in %s: %lu already present, %lu would be created%s\n",
		       r->planned, ctx->pb->users.ou, r->present, r->missing,
		       r->ou_created ? " (and the OU)" : "");
	else
		printf("dc: created %lu, already present %lu%s, failed %lu (of %lu) in %.1f s, "
		       "%.1f "
		       "users/s%s\n",
		       r->created, r->present, r->reset ? " (passwords reset)" : "", r->failed,
		       r->planned, r->seconds, rate, r->verified ? ", 3 verified by kinit" : "");
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_dc_result *r = result;

	(void)code;
	pv_json_str(o, "ou", ctx->pb->users.ou);
	pv_json_int(o, "planned", (long long)r->planned);
	pv_json_int(o, "created", (long long)r->created);
	pv_json_int(o, "present", (long long)r->present);
	pv_json_int(o, "missing", (long long)r->missing);
	pv_json_int(o, "reset", (long long)r->reset);
	pv_json_int(o, "failed", (long long)r->failed);
	pv_json_bool(o, "ou_created", r->ou_created);
	pv_json_bool(o, "verified", r->verified);
	pv_json_str(o, "first_failure", r->first_failure[0] ? r->first_failure : NULL);
	pv_json_secs(o, "seconds", r->seconds);
	pv_json_real(o, "users_per_second",
		     r->seconds > 0 ? (double)(long long)(10 * r->created / r->seconds) / 10 : 0);
	pv_json_plan(o, &r->plan);
}

static void release(void *result)
{
	pv_phases_dc_result_release(result);
}

int pv_cmd_dc(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_dc_opts o = {NULL, 0, ctx->cli.opt[OPT_RESET_PASSWORDS] != NULL,
				      ctx->cli.opt[OPT_VERIFY] != NULL,
				      ctx->cli.opt[OPT_FORCE] != NULL};
	struct pv_phases_dc_result *res =
		pv_out_result(out, "dc", sizeof(*res), text, json, release);
	const struct pv_playbook_host **sel = NULL;
	int r;

	if (!res)
		return PV_EIO;
	if ((r = pv_ctx_clients(ctx, &sel, &o.nclients)) != PV_OK)
		return r;
	o.clients = sel;
	r = pv_phases_dc_prepare(&ctx->env, &o, res);
	free(sel);
	return r;
}

static void cleanup_text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_dc_cleanup_result *r = result;

	if (r->nothing) {
		printf("cleanup dc: nothing to do: no user or OU of lab '%s' under %s\n",
		       ctx->pb->lab, ctx->pb->domain.base_dn);
		return;
	}
	if (ctx->env.dry_run) {
		if (code == PV_OK)
			printf("cleanup dc: would delete %lu users%s\n", r->found,
			       r->ou_ours
				       ? (r->tree_delete ? " and the lab's OU (in one tree delete)"
							 : " and the lab's OU if it is then empty")
				       : "");
		return;
	}
	if (code == PV_OK || r->deleted)
		printf("cleanup dc: deleted %lu users%s, failed %lu, in %.1f s (%.1f users/s)\n",
		       r->deleted, r->ou_deleted ? " and the lab's OU" : "", r->failed, r->seconds,
		       r->seconds > 0 ? (double)r->deleted / r->seconds : 0);
	for (size_t i = 0; i < r->nothers; i++) {
		const struct pv_phases_dc_other *o = &r->others[i];

		if (o->deleted_there)
			printf("cleanup dc: %s: replication was behind: %lu users deleted there\n",
			       o->name, o->deleted_there);
		else
			printf("cleanup dc: %s holds none of them (replicated in %.1f s)\n",
			       o->name, o->waited);
	}
}

static void cleanup_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_dc_cleanup_result *r = result;

	(void)ctx;
	(void)code;
	pv_json_bool(o, "nothing_to_do", r->nothing);
	pv_json_int(o, "found", (long long)r->found);
	pv_json_int(o, "deleted", (long long)r->deleted);
	pv_json_int(o, "already_gone", (long long)r->gone);
	pv_json_int(o, "failed", (long long)r->failed);
	pv_json_bool(o, "tree_delete", r->tree_delete);
	{
		struct pv_json *a = pv_json_array();

		for (size_t i = 0; i < r->nothers; i++) {
			struct pv_json *e = pv_json_object();

			pv_json_str(e, "name", r->others[i].name);
			pv_json_secs(e, "waited", r->others[i].waited);
			pv_json_int(e, "deleted_there", (long long)r->others[i].deleted_there);
			pv_json_append(a, e);
		}
		pv_json_set(o, "other_dcs", a);
	}
	pv_json_bool(o, "ou_ours", r->ou_ours);
	pv_json_bool(o, "ou_deleted", r->ou_deleted);
	pv_json_str(o, "first_failure", r->first_failure[0] ? r->first_failure : NULL);
	pv_json_secs(o, "seconds", r->seconds);
	pv_json_plan(o, &r->plan);
}

static void cleanup_release(void *result)
{
	pv_phases_dc_cleanup_result_release(result);
}

int pv_cmd_cleanup_dc(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_dc_cleanup_result *res = pv_out_result(
		out, "cleanup dc", sizeof(*res), cleanup_text, cleanup_json, cleanup_release);

	if (!res)
		return PV_EIO;
	if (ctx->cli.opt[OPT_CLIENTS])
		return pv_error(PV_EUSAGE,
				"cleanup dc removes every user of lab '%s'; --clients does "
				"not apply to it",
				ctx->pb->lab);
	if (ctx->cli.opt[OPT_BACKUP] || ctx->cli.opt[OPT_LEAVE])
		return pv_error(PV_EUSAGE, "--%s belongs to 'cleanup %s'",
				ctx->cli.opt[OPT_BACKUP] ? "backup" : "leave",
				ctx->cli.opt[OPT_BACKUP] ? "controller" : "join");
	return pv_phases_dc_cleanup(&ctx->env, res);
}

const struct pv_render pv_render_dc = {text, json};
const struct pv_render pv_render_cleanup_dc = {cleanup_text, cleanup_json};
