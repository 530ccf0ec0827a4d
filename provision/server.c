/* provision/server.c: `provision server` and `provision cleanup server`: options in, the phase
 * (phases/server.h), summary lines or JSON out. */
#include "provision/provision.h"

#include "phases/lab.h"
#include "phases/server.h"
#include "util/err.h"

#include "json/json.h"
#include <stdlib.h>

#define PARALLEL_MAX 64

static void trees_text(const struct pv_phases_trees_stats *st)
{
	unsigned long written = st->files_made + st->files_fixed;

	if (st->skipped) {
		printf("server: no fileset in the playbook: no home trees\n");
		return;
	}
	if (!st->fileset[0])
		return;
	printf("server: trees of %lu users (fileset '%s', %lu files, %.1f MB each) over %s: %lu "
	       "files written (%lu fixed), %lu already right, %lu folders made, %.1f MB in %.1f s: "
	       "%.0f files/s, %.1f MB/s; %lu trees complete already\n",
	       st->users, st->fileset, st->files_per_user, (double)st->bytes_per_user / 1e6,
	       st->via, written, st->files_fixed, st->files_ok, st->dirs_made,
	       (double)st->bytes_written / 1e6, st->seconds,
	       st->seconds > 0 ? (double)written / st->seconds : 0,
	       st->seconds > 0 ? (double)st->bytes_written / 1e6 / st->seconds : 0, st->complete);
	if (st->replaced)
		printf("server: %lu users' trees held files of an earlier account of the same name "
		       "(another uid): removed and built anew\n",
		       st->replaced);
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_server_result *r = result;

	if (ctx->env.dry_run) {
		if (code != PV_OK)
			return;
		printf("server: would create %u shares (%u present) and add %zu alias SPNs (%zu "
		       "present)\n",
		       r->shares_missing, r->shares_present, r->spns_missing, r->spns_present);
		pv_text_plan("server", &r->plan);
		return;
	}
	if (code != PV_OK && !r->trees.seconds && !r->trees.files_made)
		return;
	if (r->dc_wait > 0)
		printf("server: waited %.1f s for %s (the DC %s uses) to replicate the users\n",
		       r->dc_wait, r->dc, ctx->pb->server.host.name);
	printf("server: shares %u created, %u present; alias SPNs %zu added, %zu present%s\n",
	       r->shares_made, r->shares_present, r->spns_added, r->spns_present,
	       r->keytab_added ? " (keytab updated)" : "");
	trees_text(&r->trees);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_server_result *r = result;
	const struct pv_phases_trees_stats *st = &r->trees;
	struct pv_json *t = pv_json_object();
	unsigned long written = st->files_made + st->files_fixed;

	(void)ctx;
	(void)code;
	pv_json_int(o, "shares_created", r->shares_made);
	pv_json_int(o, "shares_present", r->shares_present);
	pv_json_int(o, "shares_missing", r->shares_missing);
	pv_json_int(o, "spns_added", (long long)r->spns_added);
	pv_json_int(o, "spns_present", (long long)r->spns_present);
	pv_json_int(o, "spns_missing", (long long)r->spns_missing);
	pv_json_int(o, "keytab_added", (long long)r->keytab_added);
	pv_json_str(o, "dc", r->dc[0] ? r->dc : NULL);
	pv_json_secs(o, "dc_wait", r->dc_wait);
	pv_json_bool(t, "skipped", st->skipped);
	if (!st->skipped) {
		pv_json_str(t, "via", st->via);
		pv_json_str(t, "fileset", st->fileset[0] ? st->fileset : NULL);
		pv_json_int(t, "users", (long long)st->users);
		pv_json_int(t, "complete", (long long)st->complete);
		pv_json_int(t, "replaced", (long long)st->replaced);
		pv_json_int(t, "files_per_user", (long long)st->files_per_user);
		pv_json_int(t, "bytes_per_user", (long long)st->bytes_per_user);
		pv_json_int(t, "files_written", (long long)written);
		pv_json_int(t, "files_fixed", (long long)st->files_fixed);
		pv_json_int(t, "files_ok", (long long)st->files_ok);
		pv_json_int(t, "dirs_made", (long long)st->dirs_made);
		pv_json_int(t, "failed_users", (long long)st->failed_users);
		pv_json_int(t, "bytes_written", (long long)st->bytes_written);
		pv_json_secs(t, "seconds", st->seconds);
		pv_json_real(t, "files_per_second",
			     st->seconds > 0 ? (double)(long long)(10 * written / st->seconds) / 10
					     : 0);
	}
	pv_json_set(o, "trees", t);
	pv_json_secs(o, "seconds", r->seconds);
	pv_json_plan(o, &r->plan);
}

static void release(void *result)
{
	pv_phases_server_result_release(result);
}

int pv_cmd_server(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_trees_opts o = {ctx->cli.opt[OPT_VIA], 0};
	struct pv_phases_server_result *res =
		pv_out_result(out, "server", sizeof(*res), text, json, release);
	unsigned long n;
	int r;

	if (!res)
		return PV_EIO;
	if ((r = pv_phases_lab_server_phase(ctx->pb, "server")) != PV_OK)
		return r;
	if (ctx->cli.opt[OPT_PARALLEL]) {
		if ((r = pv_cli_count("--parallel", ctx->cli.opt[OPT_PARALLEL], PARALLEL_MAX, &n)))
			return r;
		o.parallel = (unsigned)n;
	}
	return pv_phases_server_prepare(&ctx->env, &o, res);
}

static void cleanup_text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_server_cleanup_result *r = result;

	if (ctx->env.dry_run) {
		if (code == PV_OK && r->plan.n == 0)
			printf("cleanup server: nothing to do: no share or alias SPN of lab '%s' "
			       "on "
			       "'%s'\n",
			       ctx->pb->lab, ctx->pb->server.host.name);
		pv_text_plan("cleanup server", &r->plan);
		return;
	}
	if (code == PV_OK && r->shares_removed == 0 && r->spns_removed == 0)
		printf("cleanup server: nothing to do: no share or alias SPN of lab '%s' on '%s'\n",
		       ctx->pb->lab, ctx->pb->server.host.name);
	else if (r->shares_removed || r->spns_removed)
		printf("cleanup server: removed %u shares (with their trees) and %zu alias SPNs%s "
		       "in "
		       "%.1f s\n",
		       r->shares_removed, r->spns_removed,
		       r->keytab_removed ? " (and from the keytab)" : "", r->seconds);
}

static void cleanup_json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_server_cleanup_result *r = result;

	(void)ctx;
	(void)code;
	pv_json_int(o, "shares_removed", r->shares_removed);
	pv_json_int(o, "spns_removed", (long long)r->spns_removed);
	pv_json_int(o, "spns_left", (long long)r->spns_left);
	pv_json_int(o, "keytab_removed", (long long)r->keytab_removed);
	pv_json_secs(o, "seconds", r->seconds);
	pv_json_plan(o, &r->plan);
}

static void cleanup_release(void *result)
{
	pv_phases_server_cleanup_result_release(result);
}

int pv_cmd_cleanup_server(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_server_cleanup_result *res = pv_out_result(
		out, "cleanup server", sizeof(*res), cleanup_text, cleanup_json, cleanup_release);
	int r;

	if (!res)
		return PV_EIO;
	if ((r = pv_phases_lab_server_phase(ctx->pb, "cleanup server")) != PV_OK)
		return r;
	if (ctx->cli.opt[OPT_BACKUP] || ctx->cli.opt[OPT_CLIENTS] || ctx->cli.opt[OPT_LEAVE])
		return pv_error(PV_EUSAGE, "--%s does not apply to 'cleanup server'",
				ctx->cli.opt[OPT_BACKUP]    ? "backup"
				: ctx->cli.opt[OPT_CLIENTS] ? "clients"
							    : "leave");
	return pv_phases_server_cleanup(&ctx->env, res);
}

const struct pv_render pv_render_server = {text, json};
const struct pv_render pv_render_cleanup_server = {cleanup_text, cleanup_json};
