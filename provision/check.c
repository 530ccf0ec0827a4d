/* provision/check.c: `provision check`: each check's line as it is done (text), or the list in
 * the JSON document, and a closing verdict. */
#include "provision/provision.h"

#include "phases/check.h"
#include "util/err.h"
#include "util/log.h"

#include "json/json.h"
#include <stdlib.h>
#include <string.h>

static void print_item(const struct pv_phases_check_item *it, void *arg)
{
	const struct pv_ctx *ctx = arg;
	const char *st = strcmp(it->status, "fail") == 0 ? "FAIL" : it->status;

	if (ctx->json || (ctx->cli.verbosity < 0 && strcmp(it->status, "ok") == 0))
		return;
	printf("%-4s  %-9s %-14s %s\n", st, it->check, it->target, it->msg);
	fflush(stdout);
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct pv_phases_check_result *c = result;

	(void)code;
	if (ctx->cli.verbosity >= 0 || c->failed)
		printf("check: %s (%zu checks, %zu failed)\n",
		       c->failed ? "the lab is NOT usable" : "the lab is usable", c->n, c->failed);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct pv_phases_check_result *c = result;
	struct pv_json *a = pv_json_array();

	(void)ctx;
	(void)code;
	for (size_t i = 0; i < c->n; i++) {
		const struct pv_phases_check_item *it = &c->items[i];
		struct pv_json *e = pv_json_object();

		pv_json_str(e, "check", it->check);
		pv_json_str(e, "target", it->target);
		pv_json_str(e, "status", it->status);
		if (strcmp(it->status, "fail") == 0) {
			pv_json_int(e, "code", it->code);
			pv_json_str(e, "outcome", pv_status_name(it->code));
		}
		pv_json_str(e, "message", it->msg);
		pv_json_append(a, e);
	}
	pv_json_set(o, "checks", a);
	pv_json_int(o, "failed", (long long)c->failed);
}

static void release(void *result)
{
	pv_phases_check_result_release(result);
}

int pv_cmd_check(struct pv_ctx *ctx, struct pv_out *out)
{
	struct pv_phases_check_result *c =
		pv_out_result(out, "check", sizeof(*c), text, json, release);
	const char *path = ctx->cli.opt[OPT_PLAYBOOK] ? ctx->cli.opt[OPT_PLAYBOOK] : "playbook";
	int r;

	if (!c)
		return PV_EIO;
	c->on_item = print_item;
	c->arg = ctx;
	if (ctx->load_code != PV_OK) {
		pv_phases_check_add(c, "playbook", path, "fail", ctx->load_code, "%s",
				    ctx->load_msg);
		r = ctx->load_code;
	} else {
		r = pv_phases_check_run(&ctx->env, path, c);
	}
	if (r != PV_OK)
		return pv_error(r, "check failed with status %d (%s): see the FAIL lines above", r,
				pv_status_name(r));
	return PV_OK;
}
