/* provision/playbook.c: loading the playbook a command runs on, with the command line's
 * overrides (--set, then the command options that stand for playbook values). */
#include "provision/provision.h"

#include "util/buf.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Command options that stand for playbook values: applied as overrides after --set. */
static const struct {
	enum pv_opt_id opt;
	const char *key;
	int cmd; /* only for this command; CMD_COUNT: for every command taking the option */
} option_keys[] = {
	{OPT_CA_FILE, "domain.ca_file", CMD_COUNT},
	{OPT_OU, "users.ou", CMD_COUNT},
	{OPT_NAME_TEMPLATE, "users.name_template", CMD_COUNT},
	{OPT_USERS, "users.per_client", CMD_COUNT},
	{OPT_MIN_USERS, "driver.min_users", CMD_COUNT},
	{OPT_MAX_USERS, "driver.max_users", CMD_COUNT},
	{OPT_STEP, "driver.step", CMD_COUNT},
	{OPT_REFINE, "driver.refine", CMD_COUNT},
	{OPT_OVER_STEPS, "driver.over_steps", CMD_COUNT},
	{OPT_DURATION, "driver.duration", CMD_COUNT},
	{OPT_WARMUP, "driver.warmup", CMD_COUNT},
	{OPT_WATCH, "driver.watch", CMD_COUNT},
	{OPT_TIMEOUT, "driver.timeout", CMD_RUN},
	{OPT_PROBE, "drain.probe", CMD_COUNT},
	{OPT_PROBE_COMMAND, "drain.command", CMD_COUNT},
	{OPT_THRESHOLD, "drain.threshold", CMD_COUNT},
	{OPT_INTERVAL, "drain.interval", CMD_COUNT},
	{OPT_SETTLE, "drain.settle", CMD_COUNT},
	{OPT_TIMEOUT, "drain.timeout", CMD_WAIT},
};
#define NKEYS (sizeof(option_keys) / sizeof(option_keys[0]))

int pv_ctx_read(struct pv_ctx *ctx)
{
	const char *path = ctx->cli.opt[OPT_PLAYBOOK];
	char *owned[NKEYS] = {NULL};
	const char **sets = NULL;
	size_t n = 0;
	int r;

	if (!path)
		path = getenv("PROVISION_PLAYBOOK");
	if (!path) {
		if (access("provision.yaml", F_OK) != 0)
			return pv_error(PV_EUSAGE,
					"no playbook: pass -p FILE (the embedded lab's is "
					"playbooks/lab.yaml) or create ./provision.yaml");
		path = "provision.yaml";
	}
	if (ctx->cli.opt[OPT_USERS]) {
		bool force = ctx->cli.opt[OPT_FORCE] != NULL;
		unsigned long count;

		/* A clear usage error naming --users, before the playbook's own range check. */
		r = pv_cli_count("--users", ctx->cli.opt[OPT_USERS],
				 force ? 100000000UL : 1000000UL, &count);
		if (r != PV_OK) {
			char msg[1024];

			snprintf(msg, sizeof(msg), "%s", pv_errmsg());
			if (!force && strstr(msg, "larger than"))
				return pv_error(r, "%s; pass --force if you mean it", msg);
			return r;
		}
	}
	sets = calloc(ctx->cli.nsets + NKEYS + 2, sizeof(*sets));
	if (!sets)
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < ctx->cli.nsets; i++)
		sets[n++] = ctx->cli.sets[i];
	for (size_t i = 0; i < NKEYS; i++) {
		const char *v = ctx->cli.opt[option_keys[i].opt];

		if (!v || (option_keys[i].cmd != CMD_COUNT &&
			   (int)ctx->cli.cmd->id != option_keys[i].cmd))
			continue;
		if (asprintf(&owned[i], "%s=%s", option_keys[i].key, v) < 0) {
			owned[i] = NULL;
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		sets[n++] = owned[i];
	}
	/* wait --probe-command CMD alone means the command probe, whatever drain.probe says */
	if (ctx->cli.cmd->id == CMD_WAIT && ctx->cli.opt[OPT_PROBE_COMMAND] &&
	    !ctx->cli.opt[OPT_PROBE])
		sets[n++] = "drain.probe=command";
	r = pv_playbook_read(path, sets, &ctx->pb);
	if (r == PV_OK && ctx->cli.opt[OPT_ADMIN_PASSWORD_FILE]) {
		/* A secret reference is replaced whole, not merged key by key. */
		struct pv_playbook_secret_ref *ref = &ctx->pb->domain.admin_password;
		char *v = strdup(ctx->cli.opt[OPT_ADMIN_PASSWORD_FILE]);
		char *w = strdup("--admin-password-file"); /* what messages name, not the path */

		if (!v || !w) {
			free(v);
			free(w);
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		free(ref->value);
		free(ref->where);
		ref->value = v;
		ref->where = w;
		ref->source = PV_PLAYBOOK_SECRET_FILE;
		ref->line = ref->col = 0;
	}
out:
	for (size_t i = 0; i < NKEYS; i++)
		free(owned[i]);
	free(sets);
	return r;
}

int pv_ctx_clients(struct pv_ctx *ctx, const struct pv_playbook_host ***out, size_t *n)
{
	const struct pv_playbook *pb = ctx->pb;
	const char *list = ctx->cli.opt[OPT_CLIENTS];
	const struct pv_playbook_host **sel = NULL;
	char *copy = NULL, *save = NULL;
	size_t k = 0;
	int r = PV_OK;

	if (pb->nclients == 0)
		return pv_error(PV_ECONFIG, "the playbook has no clients (add a clients: list)");
	if (!(sel = calloc(pb->nclients, sizeof(*sel))))
		return pv_error(PV_EIO, "out of memory");
	if (!list) {
		for (size_t i = 0; i < pb->nclients; i++)
			sel[k++] = &pb->clients[i];
		goto out;
	}
	if (!(copy = strdup(list))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct pv_playbook_host *h = pv_playbook_client(pb, t);
		bool dup = false;

		if (!h) {
			struct pv_buf names = PV_BUF_INIT;

			for (size_t i = 0; i < pb->nclients; i++)
				pv_buf_addf(&names, "%s%s", i ? ", " : "", pb->clients[i].name);
			r = pv_error(PV_ECONFIG,
				     "unknown client '%s' in --clients; the playbook's "
				     "clients are: %s",
				     t, names.data ? names.data : "");
			pv_buf_release(&names, 0);
			goto out;
		}
		for (size_t i = 0; i < k; i++)
			dup |= sel[i] == h;
		if (!dup)
			sel[k++] = h;
	}
	if (k == 0)
		r = pv_error(PV_EUSAGE, "--clients names no client");
out:
	free(copy);
	if (r != PV_OK) {
		free(sel);
		return r;
	}
	*out = sel;
	*n = k;
	return PV_OK;
}
