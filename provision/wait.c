/* provision/wait.c: `provision wait [--drain]`: the drain settings (the playbook's drain:
 * section with the command's options applied as overrides, provision/playbook.c), the wait
 * (run/drain.h), its result out as one text line or JSON. */
#include "provision/provision.h"

#include "run/drain.h"
#include "util/err.h"

#include "json/json.h"
#include <stdio.h>
#include <string.h>

struct wait_out {
	struct pv_run_drain_result r;
	/* the settings waited with (strings borrowed from the playbook) */
	struct pv_playbook_drain d;
	const char *server; /* NULL when the playbook has none */
	struct pv_env_plan plan;
};

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct wait_out *w = result;
	const struct pv_run_drain_result *r = &w->r;

	(void)ctx;
	if (w->plan.n) {
		pv_text_plan("wait", &w->plan);
		return;
	}
	if (r->polls == 0)
		return;
	if (code == PV_OK)
		printf("wait: %s drained to %ld (threshold %ld) in %.1f s, %u poll%s, peak %ld\n",
		       r->metric, r->last, w->d.threshold, r->seconds, r->polls,
		       r->polls == 1 ? "" : "s", r->peak);
	else if (code == PV_ETIMEOUT || code == PV_ESTOPPED)
		printf("wait: %s%s not drained: %ld (threshold %ld) after %.1f s, %u poll%s, peak "
		       "%ld\n",
		       code == PV_ESTOPPED ? "stopped: " : "", r->metric, r->last, w->d.threshold,
		       r->seconds, r->polls, r->polls == 1 ? "" : "s", r->peak);
}

static void depth(struct pv_json *o, const char *key, bool seen, long v)
{
	if (seen)
		pv_json_int(o, key, v);
	else
		pv_json_str(o, key, NULL);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *o)
{
	const struct wait_out *w = result;
	const struct pv_run_drain_result *r = &w->r;

	(void)ctx;
	(void)code;
	pv_json_str(o, "server", w->server);
	pv_json_str(o, "probe", pv_run_drain_probe_name(w->d.probe));
	pv_json_str(o, "metric", r->metric[0] ? r->metric : NULL);
	pv_json_int(o, "threshold", w->d.threshold);
	pv_json_int(o, "interval", w->d.interval);
	pv_json_int(o, "settle", w->d.settle);
	pv_json_int(o, "timeout", w->d.timeout);
	pv_json_bool(o, "drained", r->drained);
	depth(o, "first", r->polls > 0, r->first);
	depth(o, "last", r->polls > 0, r->last);
	depth(o, "peak", r->polls > 0, r->peak);
	pv_json_int(o, "polls", r->polls);
	pv_json_secs(o, "seconds", r->seconds);
	pv_json_plan(o, &w->plan);
}

static void release(void *result)
{
	struct wait_out *w = result;

	pv_env_plan_release(&w->plan);
}

int pv_cmd_wait(struct pv_ctx *ctx, struct pv_out *out)
{
	const struct pv_playbook *pb = ctx->pb;
	struct wait_out *w = pv_out_result(out, "wait", sizeof(*w), text, json, release);
	int r;

	if (!w)
		return PV_EIO;
	/* --drain is what wait does (the one kind of wait there is); it is taken, not needed */
	w->d = pb->drain;
	w->server = pb->has_server ? pb->server.host.name : NULL;
	r = pv_run_drain_wait(&ctx->env, &w->d, &w->r);
	if (r == PV_OK && ctx->env.dry_run) {
		pv_run_drain_plan(pb, &w->d, &w->plan);
		if (w->plan.n == 0)
			return pv_error(PV_EIO, "out of memory");
	}
	return r;
}
