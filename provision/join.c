/* provision/join.c: `provision join` and `provision cleanup join`: the phase (phases/join.h),
 * a summary line or JSON out. */
#include "provision/provision.h"

#include "phases/join.h"
#include "phases/lab.h"
#include "util/err.h"

#include "json/json.h"
#include <stdlib.h>
#include <string.h>

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_join_result *j = result;
	const char *realm = ctx->pb->domain.realm, *st = j->state;

	if (code != PV_OK || !st)
		return;
	if (ctx->env.dry_run) {
		if (strcmp(st, "present") == 0)
			printf("join: '%s' is already a member of %s (account %s); nothing to do\n",
			       j->server, realm, j->account);
		else
			pv_text_plan("join", &j->plan);
	} else if (strcmp(st, "present") == 0)
		printf("join: '%s' is already a member of %s (account %s), trust verified; nothing "
		       "changed\n",
		       j->server, realm, j->account);
	else if (strcmp(st, "started") == 0)
		printf("join: '%s' is already a member of %s (account %s); smbd and winbindd "
		       "started, "
		       "trust verified\n",
		       j->server, realm, j->account);
	else
		printf("join: '%s' %s %s (account %s), smbd and winbindd started, trust verified, "
		       "in "
		       "%.1f s\n",
		       j->server,
		       strcmp(st, "joined") == 0 ? "joined" : "repaired its membership of", realm,
		       j->account, j->seconds);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_join_result *j = result;

	(void)code;
	pv_json_str(o, "server", j->server);
	pv_json_str(o, "account", j->account[0] ? j->account : NULL);
	pv_json_str(o, "realm", ctx->pb->domain.realm);
	pv_json_str(o, "state", j->state);
	pv_json_bool(o, "trust_verified", j->trust_verified);
	pv_json_secs(o, "seconds", j->seconds);
	pv_json_plan(o, &j->plan);
}

static void release(void *result)
{
	pv_phases_join_result_release(result);
}

int pv_cmd_join(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_join_result *res =
		pv_out_result(out, "join", sizeof(*res), text, json, release);
	int r;

	if (!res)
		return PV_EIO;
	if ((r = pv_phases_lab_server_phase(ctx->pb, "join")) != PV_OK)
		return r;
	return pv_phases_join_prepare(&ctx->env, res);
}

static void cleanup_text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_join_cleanup_result *j = result;
	const char *realm = ctx->pb->domain.realm;

	if (code != PV_OK)
		return;
	if (j->nothing)
		printf("cleanup join: nothing to do: %s\n",
		       j->was_joined ? "the server is a member, but not one this lab joined"
				     : "the server is not joined by this lab");
	else if (ctx->env.dry_run)
		pv_text_plan("cleanup join", &j->plan);
	else if (j->account_deleted)
		printf("cleanup join: '%s' left %s; computer account %s deleted; smbd and winbindd "
		       "stopped\n",
		       j->server, realm, j->account);
	else
		printf("cleanup join: smbd and winbindd stopped on '%s'; still a member of %s "
		       "(pass "
		       "--leave to leave the domain and delete the computer account)\n",
		       j->server, realm);
}

static void cleanup_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_join_cleanup_result *j = result;

	(void)ctx;
	(void)code;
	pv_json_str(o, "server", j->server);
	pv_json_str(o, "account", j->account[0] ? j->account : NULL);
	pv_json_bool(o, "nothing_to_do", j->nothing);
	pv_json_bool(o, "ours", j->ours);
	pv_json_bool(o, "joined", j->was_joined);
	pv_json_bool(o, "stopped", j->stopped);
	pv_json_bool(o, "left", j->left);
	pv_json_bool(o, "account_deleted", j->account_deleted);
	pv_json_secs(o, "seconds", j->seconds);
	pv_json_plan(o, &j->plan);
}

static void cleanup_release(void *result)
{
	pv_phases_join_cleanup_result_release(result);
}

int pv_cmd_cleanup_join(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_join_cleanup_result *res = pv_out_result(
		out, "cleanup join", sizeof(*res), cleanup_text, cleanup_json, cleanup_release);
	int r;

	if (!res)
		return PV_EIO;
	if ((r = pv_phases_lab_server_phase(ctx->pb, "cleanup join")) != PV_OK)
		return r;
	if (ctx->cli.opt[OPT_BACKUP] || ctx->cli.opt[OPT_CLIENTS])
		return pv_error(PV_EUSAGE, "--%s does not apply to 'cleanup join'",
				ctx->cli.opt[OPT_BACKUP] ? "backup" : "clients");
	return pv_phases_join_cleanup(&ctx->env, ctx->cli.opt[OPT_LEAVE] != NULL, res);
}

const struct pv_render pv_render_join = {text, json};
const struct pv_render pv_render_cleanup_join = {cleanup_text, cleanup_json};
