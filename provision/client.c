/* provision/client.c: `provision client` and `provision cleanup client`: options in, the phase
 * (phases/client.h), one line per client and a summary out, or JSON. */
#include "provision/provision.h"

#include "phases/client.h"
#include "util/err.h"

#include "json/json.h"
#include <stdlib.h>
#include <string.h>

static const char *method_text(const char *m)
{
	if (!m)
		return "";
	if (strcmp(m, "rename") == 0)
		return " (atomic rename)";
	if (strcmp(m, "in-place") == 0)
		return " (in place: the file is a mount point)";
	return " (sftp)";
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_client_result *res = result;
	bool cleanup = ctx->cli.cmd->id == CMD_CLEANUP, dry = ctx->env.dry_run;
	const char *lab = ctx->pb->lab;

	(void)code;
	if (!res->n)
		return;
	for (size_t i = 0; i < res->n; i++) {
		const struct pv_phases_client_host *j = &res->hosts[i];

		if (j->code != PV_OK) {
			printf("%s: FAILED (%s, %d): %s\n", j->name, pv_status_name(j->code),
			       j->code, j->msg);
			continue;
		}
		if (cleanup) {
			if (strcmp(j->state, "absent") == 0)
				printf("%s: nothing to remove: no block of lab '%s'", j->name, lab);
			else
				printf("%s: %s the block of lab '%s'%s", j->name,
				       dry ? "would remove" : "removed", lab,
				       method_text(j->method));
		} else {
			printf("%s: %s, %s + %zu aliases%s", j->name, j->state,
			       ctx->pb->server.host.name, res->names - 1, method_text(j->method));
		}
		if (j->backup)
			printf(", backup %s %s", j->backup_path, j->backup);
		if (j->verified)
			printf(", getent ok");
		printf(", %.2f s\n", j->seconds);
	}
	printf("%s: %zu client%s: %zu %s, %zu unchanged, %zu failed, in %.2f s\n",
	       cleanup ? "cleanup client" : "client", res->n, res->n == 1 ? "" : "s", res->changed,
	       dry ? (cleanup ? "to clean (dry run)" : "to write (dry run)")
		   : (cleanup ? "cleaned" : "written"),
	       res->unchanged, res->failed, res->seconds);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_client_result *res = result;
	struct pv_json *a = pv_json_array();

	(void)code;
	pv_json_str(o, "lab", ctx->pb->lab);
	if (ctx->cli.cmd->id != CMD_CLEANUP)
		pv_json_int(o, "names", (long long)res->names);
	pv_json_int(o, "changed", (long long)res->changed);
	pv_json_int(o, "unchanged", (long long)res->unchanged);
	pv_json_int(o, "failed", (long long)res->failed);
	pv_json_secs(o, "seconds", res->seconds);
	for (size_t i = 0; i < res->n; i++) {
		const struct pv_phases_client_host *j = &res->hosts[i];
		struct pv_json *h = pv_json_object();

		pv_json_str(h, "name", j->name);
		pv_json_bool(h, "ok", j->code == PV_OK);
		pv_json_secs(h, "seconds", j->seconds);
		if (j->code != PV_OK) {
			pv_json_int(h, "code", j->code);
			pv_json_str(h, "outcome", pv_status_name(j->code));
			pv_json_str(h, "error", j->msg);
		} else {
			pv_json_str(h, "state", j->state);
			pv_json_str(h, "method", j->method);
			pv_json_str(h, "backup", j->backup);
			pv_json_str(h, "backup_path", j->backup_path);
			pv_json_bool(h, "verified", j->verified);
			pv_json_int(h, "other_labs", (long long)j->other_labs);
		}
		pv_json_append(a, h);
	}
	pv_json_set(o, "clients", a);
	pv_json_plan(o, &res->plan);
}

static void release(void *result)
{
	pv_phases_client_result_release(result);
}

static int run(struct pv_ctx *ctx, struct pv_out *out, bool cleanup)
{
	struct pv_phases_client_opts o = {cleanup, NULL, 0};
	struct pv_phases_client_result *res = pv_out_result(
		out, cleanup ? "cleanup client" : "client", sizeof(*res), text, json, release);
	const struct pv_playbook_host **sel = NULL;
	int r;

	if (!res)
		return PV_EIO;
	if (cleanup && ctx->cli.opt[OPT_BACKUP])
		return pv_error(PV_EUSAGE,
				"--backup belongs to 'cleanup controller'; 'cleanup client' "
				"removes the block and keeps no other copy");
	if (cleanup && ctx->cli.opt[OPT_LEAVE])
		return pv_error(PV_EUSAGE, "--leave belongs to 'cleanup join'");
	if ((r = pv_ctx_clients(ctx, &sel, &o.nclients)) != PV_OK)
		return r;
	o.clients = sel;
	r = pv_phases_client_apply(&ctx->env, &o, res);
	free(sel);
	return r;
}

int pv_cmd_client(struct pv_ctx *ctx, struct pv_out *out)
{
	return run(ctx, out, false);
}

int pv_cmd_cleanup_client(struct pv_ctx *ctx, struct pv_out *out)
{
	return run(ctx, out, true);
}

const struct pv_render pv_render_client = {text, json};
