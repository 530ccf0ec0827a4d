/* run/manifest.c: manifest.json, the run's record (docs/json.md): the playbook's digest,
 * versions, the ramp, every host, every step's times, hosts' states, watch and figures. Written
 * anew after every step, so that a run cut short still leaves one. */
#include "run/internal.h"

#include "json/json.h"
#include "load/report.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void iso(double t, char out[40])
{
	time_t s = (time_t)t;
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 40 - n, ".%03dZ", (int)((t - (double)s) * 1000));
}

static void time_field(struct pv_json *o, const char *key, double t)
{
	char s[40];

	if (t <= 0) {
		pv_json_str(o, key, NULL);
		return;
	}
	iso(t, s);
	pv_json_str(o, key, s);
}

/* A watch's summary of a step: {samples} and, with samples, {mean, p95, max} per metric. */
static struct pv_json *watch_json(size_t samples,
				  const struct pv_run_watch_stat stat[PV_RUN_W_COUNT])
{
	struct pv_json *w = pv_json_object();

	pv_json_int(w, "samples", (long long)samples);
	for (int k = 0; k < PV_RUN_W_COUNT && samples; k++) {
		struct pv_json *o = pv_json_object();

		pv_json_real(o, "mean", stat[k].mean);
		pv_json_real(o, "p95", stat[k].p95);
		pv_json_real(o, "max", stat[k].max);
		pv_json_set(w, pv_run_watch_names[k], o);
	}
	return w;
}

static struct pv_json *load_json(const struct pv_load_summary *l)
{
	struct pv_json *o = pv_json_object(), *cl = pv_json_array();

	pv_json_real(o, "scenarios_per_second", l->rate);
	pv_json_real(o, "scenarios_per_second_lo", l->rate_lo);
	pv_json_real(o, "scenarios_per_second_hi", l->rate_hi);
	pv_json_real(o, "expected", l->expected);
	pv_json_int(o, "started", (long long)l->all.n.started);
	pv_json_int(o, "completed", (long long)l->all.lat.n);
	pv_json_int(o, "errors", (long long)l->all.n.errors);
	pv_json_int(o, "unserved", (long long)l->all.n.unserved);
	pv_json_real(o, "overload", l->all.overload);
	pv_json_real(o, "median", l->all.lat.median);
	pv_json_real(o, "p95", l->all.lat.p95);
	pv_json_real(o, "max", l->all.lat.max);
	pv_json_int(o, "connected", l->connected);
	pv_json_int(o, "failed", l->failed);
	pv_json_int(o, "clients_lost", l->lost);
	pv_json_int(o, "connections_dropped", l->drops);
	pv_json_int(o, "reconnected", l->reconnects);
	pv_json_int(o, "logons_again", l->relogons);
	pv_json_int(o, "durable_reclaimed", l->reclaimed);
	pv_json_int(o, "logon_ok", (long long)l->logon.n);
	pv_json_int(o, "logon_failed", (long long)l->logon_n.failed);
	pv_json_int(o, "logon_retries", (long long)l->logon_n.retries);
	pv_json_real(o, "logon_median", l->logon.n ? l->logon.median : NAN);
	pv_json_real(o, "logon_p95", l->logon.n ? l->logon.p95 : NAN);
	pv_json_real(o, "dc_cpu", l->dc_cpu);
	pv_json_real(o, "dc_samba", l->dc_samba);
	pv_json_bool(o, "client_bound", l->client_bound);
	for (size_t i = 0; i < l->nclients; i++)
		pv_json_append(cl, pv_load_client_json(&l->clients[i]));
	pv_json_set(o, "clients", cl);
	return o;
}

void pv_run_skipped_json(struct pv_json *o, const struct pv_run_result *res)
{
	struct pv_json *n;

	if (!res->skipped) {
		pv_json_str(o, "skipped", NULL);
		return;
	}
	n = pv_json_object();
	pv_json_int(n, "steps", (long long)res->skipped);
	pv_json_int(n, "from_users", res->skipped_from);
	pv_json_int(n, "to_users", res->skipped_to);
	pv_json_set(o, "skipped", n);
}

struct pv_json *pv_run_step_json(const struct pv_run_step *s)
{
	struct pv_json *st = pv_json_object(), *hs = pv_json_array(), *o;

	pv_json_int(st, "step", s->n);
	pv_json_int(st, "users", s->users);
	pv_json_bool(st, "refine", s->refine);
	time_field(st, "start", s->start);
	time_field(st, "end", s->end);
	pv_json_real(st, "seconds", s->end - s->start);
	pv_json_str(st, "ended", s->ended);
	for (size_t j = 0; j < s->nhosts; j++) {
		const struct pv_run_host *h = &s->hosts[j];

		o = pv_json_object();
		pv_json_str(o, "name", h->name);
		pv_json_str(o, "role", h->controller ? "controller" : "client");
		if (!h->controller)
			pv_json_int(o, "users", h->users);
		pv_json_str(o, "state", pv_run_state_name(h->state));
		if (h->exit >= 0)
			pv_json_int(o, "exit", h->exit);
		else
			pv_json_str(o, "exit", NULL);
		pv_json_str(o, "error", h->code != PV_OK ? h->msg : NULL);
		pv_json_int(o, "files", (long long)h->files);
		pv_json_int(o, "bytes", (long long)h->bytes);
		pv_json_append(hs, o);
	}
	pv_json_set(st, "hosts", hs);
	pv_json_set(st, "watch", watch_json(s->samples, s->watch));
	pv_json_set(st, "watch_dc", watch_json(s->dc_samples, s->dc_watch));
	if (s->has_load)
		pv_json_set(st, "load", load_json(&s->load));
	if (s->drained) {
		o = pv_json_object();
		pv_json_real(o, "seconds", s->drain_seconds);
		pv_json_int(o, "first", s->drain_first);
		pv_json_int(o, "peak", s->drain_peak);
		pv_json_set(st, "drain", o);
	} else {
		pv_json_str(st, "drain", NULL);
	}
	return st;
}

static struct pv_json *manifest(struct run *R, const char *status, int code, const char *msg)
{
	const struct pv_playbook *pb = R->pb;
	const struct pv_run_result *res = R->res;
	struct pv_json *m = pv_json_object(), *o, *a;

	pv_json_int(m, "manifest_version", 1);
	pv_json_str(m, "provision", PV_VERSION);
	pv_json_str(m, "run_id", res->id);
	pv_json_str(m, "lab", pb->lab);
	o = pv_json_object();
	pv_json_str(o, "path", pb->path);
	pv_json_str(o, "sha256", res->digest[0] ? res->digest : NULL);
	pv_json_set(m, "playbook", o);
	pv_json_str(m, "status", status);
	pv_json_int(m, "exit_code", code);
	pv_json_str(m, "error", code != PV_OK ? msg : NULL);
	time_field(m, "started", R->wall0);
	time_field(m, "ended", strcmp(status, "running") ? pv_run_wall() : 0);
	o = pv_json_object();
	pv_json_str(o, "name", res->driver);
	pv_json_int(o, "min_users", pb->driver.min_users);
	pv_json_int(o, "max_users", pb->driver.max_users);
	pv_json_int(o, "step", pb->driver.step);
	pv_json_int(o, "duration", pb->driver.duration);
	pv_json_int(o, "warmup", pb->driver.warmup);
	pv_json_int(o, "timeout", pb->driver.timeout);
	pv_json_str(o, "client_command", pb->driver.client_command);
	pv_json_str(o, "controller_command", pb->driver.controller_command);
	a = pv_json_array();
	for (size_t i = 0; i < R->ramp.n; i++) {
		struct pv_json *n = pv_json_object();

		pv_json_int(n, "users", R->ramp.totals[i]);
		pv_json_bool(n, "refine", i < res->nsteps && res->steps[i].refine);
		pv_json_append(a, n);
	}
	pv_json_set(o, "steps", a);
	pv_json_int(o, "over_steps", pb->driver.over_steps);
	pv_run_skipped_json(o, res);
	pv_json_set(m, "driver", o);
	a = pv_json_array();
	if (pb->has_server) {
		o = pv_json_object();
		pv_json_str(o, "name", pb->server.host.name);
		pv_json_str(o, "role", "server");
		pv_json_str(o, "address", pb->server.host.address);
		pv_json_str(o, "version", R->server_system[0] ? R->server_system : NULL);
		pv_json_append(a, o);
	}
	for (size_t i = 0; i < pb->nclients; i++) {
		o = pv_json_object();
		pv_json_str(o, "name", pb->clients[i].name);
		pv_json_str(o, "role", "client");
		pv_json_str(o, "address", pb->clients[i].address);
		pv_json_str(o, "version", R->system && R->system[i][0] ? R->system[i] : NULL);
		pv_json_append(a, o);
	}
	o = pv_json_object();
	pv_json_str(o, "name", pb->controller.host.name ? pb->controller.host.name : "local");
	pv_json_str(o, "role", "controller");
	pv_json_str(o, "results", res->folder);
	pv_json_append(a, o);
	pv_json_set(m, "hosts", a);
	/* what compare weighs between runs: the server's settings at run time */
	pv_json_str(m, "server_config", R->server_config);
	o = pv_json_object();
	pv_json_int(o, "interval", R->watch || res->watch_error[0] ? pb->driver.watch : 0);
	pv_json_str(o, "error", res->watch_error[0] ? res->watch_error : NULL);
	pv_json_set(m, "watch", o);
	o = pv_json_object();
	pv_json_str(o, "host", pb->domain.has_host ? pb->domain.host.name : NULL);
	pv_json_int(o, "interval", R->dc_watch || res->dc_watch_error[0] ? pb->driver.watch : 0);
	pv_json_str(o, "error", res->dc_watch_error[0] ? res->dc_watch_error : NULL);
	pv_json_set(m, "watch_dc", o);
	a = pv_json_array();
	for (size_t i = 0; i < res->nsteps; i++)
		pv_json_append(a, pv_run_step_json(&res->steps[i]));
	pv_json_set(m, "steps", a);
	return m;
}

int pv_run_manifest_write(struct run *R, const char *status, int code, const char *msg)
{
	struct pv_json *m = manifest(R, status, code, msg);
	char *text = pv_json_pretty(m);
	int r;

	r = text ? pv_run_sink_write(&R->sink, "", "manifest.json", text, strlen(text), true)
		 : pv_error(PV_EIO, "out of memory");
	free(text);
	pv_json_free(m);
	return r;
}
