/* playbooks/run_read.c: the playbook's sections that describe the run: the load driver and its
 * ramp, the drain between steps, and the built-in driver's workload (load:), each read by one
 * function over the typed getters of schema.c. */
#include "playbooks/playbook_internal.h"

#include "playbooks/names.h"
#include "playbooks/tree.h"
#include "util/err.h"
#include "util/file.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_DRIVER "command"
#define DEFAULT_METRIC "req_queue"

static const char *const driver_keys[] = {"name",
					  "client_command",
					  "controller_command",
					  "min_users",
					  "max_users",
					  "step",
					  "duration",
					  "warmup",
					  "timeout",
					  "watch",
					  "fsct",
					  "refine",
					  "over_steps",
					  NULL};
static const char *const fsct_keys[] = {"path", "workload", NULL};
static const char *const drivers[] = {"command", "fsct", "builtin", NULL};
static const char *const drain_keys[] = {"probe",     "command",       "metric",
					 "threshold", "interval",      "settle",
					 "timeout",   "between_steps", NULL};
static const char *const load_keys[] = {"rate",		  "scenarios", "late",	   "overload",
					"interval",	  "seed",      "auth",	   "encryption",
					"keep_logged_on", "threads",   "workload", NULL};
static const char *const load_auths[] = {"ntlm", "kerberos", NULL};
static const char *const scenario_keys[] = {"weight", "limit", NULL};
static const char *const probes[] = {"command", "writeback", "inflight", "smb", NULL};

/* A command driver's command: every {word} of lower-case letters and '_' in it must be one of
 * the placeholders (names.h), caught here rather than at the run, after every host was
 * reached. The place given is the command's own. */
static int get_command(struct ctx *c, const struct pv_playbook_node *m, const char *key, char **dst)
{
	const struct pv_playbook_node *v;
	size_t len;
	long at;
	int r;

	if ((r = pv_playbook_schema_str(&c->sc, m, "driver", key, "a command", dst, &v)) || !v)
		return r;
	if ((at = pv_playbook_placeholder_unknown(*dst, &len)) >= 0) {
		long line = 1, col = 1;
		char place[64] = "", known[512];

		for (long i = 0; i < at; i++, col++)
			if ((*dst)[i] == '\n')
				line++, col = 0;
		if (line > 1)
			snprintf(place, sizeof(place), "line %ld, ", line);
		pv_playbook_placeholder_list(known, sizeof(known));
		return pv_playbook_schema_fail(
			&c->sc, v,
			"'driver.%s' uses '%.*s' (%scharacter %ld of the command), which is not "
			"a placeholder; expected one of %s (other braces, such as the shell's "
			"${X}, are left alone)",
			key, (int)len, *dst + at, place, col, known);
	}
	return 0;
}

int pb_parse_driver(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_driver *d = &c->pb->driver;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "driver"), *f, *v;
	int kind = 0, r;

	d->watch = 2;
	if ((r = pv_playbook_schema_set(&d->name, DEFAULT_DRIVER)) ||
	    (r = pv_playbook_schema_set(&d->fsct_path, "fsct.exe")) ||
	    (r = pv_playbook_schema_set(&d->fsct_workload, "HomeFolders")))
		return r;
	if (!m)
		return 0;
	d->line = m->line;
	d->col = m->col;
	if ((r = pv_playbook_schema_keys(
		     &c->sc, m, "driver", driver_keys,
		     "a mapping of load driver settings (name, client_command, ...)")) ||
	    (r = pv_playbook_schema_enum(&c->sc, m, "driver", "name", drivers, &kind)) ||
	    (r = get_command(c, m, "client_command", &d->client_command)) ||
	    (r = get_command(c, m, "controller_command", &d->controller_command)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "driver", "min_users", 1, 10000000,
					 &d->min_users, NULL)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "driver", "max_users", 1, 10000000,
					 &d->max_users, NULL)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "driver", "step", 1, 10000000, &d->step,
					 NULL)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "driver", "duration", 1, 604800,
					&d->duration)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "driver", "warmup", 0, 86400, &d->warmup)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "driver", "timeout", 0, 604800, &d->timeout)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "driver", "watch", 0, 3600, &d->watch)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "driver", "refine", 0, 10000000, &d->refine,
					 NULL)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "driver", "over_steps", 0, 10000000,
					 &d->over_steps, NULL)))
		return r;
	d->kind = (enum pv_playbook_driver_kind)kind;
	if ((r = pv_playbook_schema_set(&d->name, drivers[kind])))
		return r;
	if (d->min_users && d->max_users && d->min_users > d->max_users)
		return pv_playbook_schema_fail(
			&c->sc, pv_playbook_tree_get(m, "min_users"),
			"'driver.min_users' (%u) is more than 'driver.max_users' (%u); expected "
			"a ramp from min_users up to max_users",
			d->min_users, d->max_users);
	if ((f = pv_playbook_tree_get(m, "fsct"))) {
		if ((r = pv_playbook_schema_keys(&c->sc, f, "driver.fsct", fsct_keys,
						 "a mapping of FSCT settings (path, workload)")) ||
		    (r = pv_playbook_schema_str(&c->sc, f, "driver.fsct", "path",
						"the path of fsct.exe", &d->fsct_path, NULL)) ||
		    (r = pv_playbook_schema_str(&c->sc, f, "driver.fsct", "workload",
						"an FSCT workload such as HomeFolders",
						&d->fsct_workload, NULL)))
			return r;
	}
	(void)v;
	return 0;
}

int pb_parse_drain(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_drain *d = &c->pb->drain;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "drain");
	static const char *const metrics[] = {"req_queue", "dirty+writeback kB", "I/O in flight",
					      "SMB opens and sessions"};
	int probe = -1, r;

	d->interval = 2;
	d->settle = 4;
	d->timeout = 600;
	if (!m)
		return 0;
	c->pb->has_drain = true;
	if ((r = pv_playbook_schema_keys(
		     &c->sc, m, "drain", drain_keys,
		     "a mapping of drain settings (probe, command, threshold, ...)")) ||
	    (r = pv_playbook_schema_enum(&c->sc, m, "drain", "probe", probes, &probe)) ||
	    (r = pv_playbook_schema_str(&c->sc, m, "drain", "command",
					"a command printing the queue depth", &d->command, NULL)))
		return r;
	if (probe < 0)
		probe = d->command ? PV_PLAYBOOK_PROBE_COMMAND : -1;
	if (probe < 0)
		return pv_playbook_schema_fail(
			&c->sc, m,
			"'drain' names no probe; expected 'probe: writeback', 'inflight' or "
			"'smb', or a 'command' printing the queue depth (a NAS's req_queue)");
	if (probe == PV_PLAYBOOK_PROBE_COMMAND && !d->command)
		return pv_playbook_schema_require(
			&c->sc, m, "drain", "command",
			"a command printing the queue depth (wait --probe-command CMD)");
	d->probe = (enum pv_playbook_probe_kind)probe;
	if ((r = pv_playbook_schema_set(&d->metric, metrics[probe])) ||
	    (r = pv_playbook_schema_str(&c->sc, m, "drain", "metric",
					"a metric name such as req_queue", &d->metric, NULL)) ||
	    (r = pv_playbook_schema_long(&c->sc, m, "drain", "threshold", 0, LONG_MAX,
					 &d->threshold, NULL)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "drain", "interval", 1, 3600, &d->interval)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "drain", "settle", 0, 86400, &d->settle)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "drain", "timeout", 1, 604800, &d->timeout)) ||
	    (r = pv_playbook_schema_bool(&c->sc, m, "drain", "between_steps", &d->between_steps)))
		return r;
	return 0;
}

static int parse_scenarios(struct ctx *c, const struct pv_playbook_node *m)
{
	struct pv_playbook_workload *l = &c->pb->load;
	double total = 0;
	int r;

	if ((r = pv_playbook_schema_keys(
		     &c->sc, m, "load.scenarios", pv_playbook_workload_names,
		     "a mapping of scenario names to {weight: N, limit: SECONDS}")))
		return r;
	for (size_t i = 0; i < m->n; i++) {
		struct pv_playbook_workload_scenario *k =
			&l->kind[pv_playbook_workload_kind_of(m->keys[i]->text)];
		char path[64];

		snprintf(path, sizeof(path), "load.scenarios.%s", m->keys[i]->text);
		if ((r = pv_playbook_schema_keys(&c->sc, m->items[i], path, scenario_keys,
						 "a mapping {weight: N, limit: SECONDS}")) ||
		    (r = pv_playbook_schema_number(&c->sc, m->items[i], path, "weight", 0, 36000,
						   &k->weight)) ||
		    (r = pv_playbook_schema_number(&c->sc, m->items[i], path, "limit", 0.001, 3600,
						   &k->limit)))
			return r;
	}
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		total += l->kind[k].weight;
	if (total <= 0)
		return pv_playbook_schema_fail(
			&c->sc, m,
			"every scenario's weight in 'load.scenarios' is 0; expected at least one "
			"weight above 0 (the defaults are FSCT's: browse 150, open_close 50, ...)");
	return 0;
}

/* load.workload: the learned workload read, its kinds the only ones drawn (the built-in ones
 * at weight 0 unless load.scenarios names them), at the capture's rate unless load.rate says
 * another. */
static int parse_workload(struct ctx *c, const struct pv_playbook_node *m)
{
	struct pv_playbook_workload *l = &c->pb->load;
	char *text = NULL;
	struct stat st;
	size_t len;
	int r;

	if ((r = pv_playbook_schema_path(&c->sc, m, "load", "workload", &c->pb->workload)) ||
	    !c->pb->workload)
		return r;
	if ((r = pv_file_read(c->pb->workload, "learned workload", 1u << 20, &text, &len, &st)) ||
	    (r = pv_playbook_workload_learned_parse(c->pb->workload, text, len, &l->learned))) {
		free(text);
		return pv_error_prefix(PV_ECONFIG,
				       "load.workload (write one with `provision learn CAPTURE "
				       "-o FILE`)");
	}
	free(text);
	/* the learned namespace is the tree `prepare` builds, unless the playbook names another */
	if (l->learned.fileset && !c->pb->server.fileset &&
	    !(c->pb->server.fileset = strdup(c->pb->workload)))
		return pv_playbook_schema_oom();
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		l->kind[k].weight = k == PV_PLAYBOOK_WORKLOAD_LEARNED;
	if (!pv_playbook_tree_get(m, "rate")) {
		double rate = l->learned.per_user_hour + 0.5;

		l->rate = rate < 1				 ? 1
			  : rate > PV_PLAYBOOK_WORKLOAD_RATE_MAX ? PV_PLAYBOOK_WORKLOAD_RATE_MAX
								 : (unsigned)rate;
	}
	return 0;
}

int pb_parse_load(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_workload *l = &c->pb->load;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "load"), *sc;
	long seed;
	int r;

	pv_playbook_workload_defaults(l);
	if (!m)
		return 0;
	c->pb->has_load = true;
	seed = (long)l->seed;
	if ((r = pv_playbook_schema_keys(
		     &c->sc, m, "load", load_keys,
		     "a mapping of load settings (rate, scenarios, late, ...)")) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "load", "rate", 1,
					 PV_PLAYBOOK_WORKLOAD_RATE_MAX, &l->rate, NULL)) ||
	    (r = pv_playbook_schema_number(&c->sc, m, "load", "late", 0, 3600, &l->late)) ||
	    (r = pv_playbook_schema_number(&c->sc, m, "load", "overload", 0, 100, &l->overload)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "load", "interval", 1, 3600, &l->interval,
					 NULL)) ||
	    (r = pv_playbook_schema_long(&c->sc, m, "load", "seed", 0, LONG_MAX, &seed, NULL)) ||
	    (r = pv_playbook_schema_bool(&c->sc, m, "load", "keep_logged_on",
					 &l->keep_logged_on)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "load", "threads", 0,
					 PV_PLAYBOOK_WORKLOAD_THREADS_MAX, &l->threads, NULL)))
		return r;
	{
		int auth = (int)l->auth;

		int enc = (int)l->encryption;

		if ((r = pv_playbook_schema_enum(&c->sc, m, "load", "auth", load_auths, &auth)) ||
		    (r = pv_playbook_schema_enum(&c->sc, m, "load", "encryption",
						 pv_playbook_workload_encryptions, &enc)))
			return r;
		l->auth = (enum pv_playbook_workload_auth)auth;
		l->encryption = (enum pv_playbook_workload_encryption)enc;
	}
	l->seed = (uint64_t)seed;
	if ((r = parse_workload(c, m)))
		return r;
	sc = pv_playbook_tree_get(m, "scenarios");
	if (sc && (r = parse_scenarios(c, sc)))
		return r;
	if (l->kind[PV_PLAYBOOK_WORKLOAD_LEARNED].weight > 0 && !l->learned.n)
		return pv_playbook_schema_fail(
			&c->sc, sc,
			"'load.scenarios.learned' has a weight, but there is no "
			"load.workload; expected load.workload: FILE, a workload "
			"that `provision learn CAPTURE -o FILE` wrote");
	return 0;
}
