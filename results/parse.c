/* results/parse.c: a run's files, text in, structs out (see results.h). Pure. */
#include "results/internal.h"

#include "json/json.h"
#include "load/line.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small readers of JSON members ---- */

/* How many values the JSON text holds, about (its commas and brackets outside strings, and
 * one), without parsing it: what parsing it would cost is known first (PV_RESULTS_JSON_MAX). */
static size_t json_values(const char *text, size_t len)
{
	size_t n = 1;
	bool in = false;

	for (size_t i = 0; i < len; i++) {
		if (in) {
			if (text[i] == '\\')
				i++;
			else if (text[i] == '"')
				in = false;
		} else {
			in = text[i] == '"';
			n += text[i] == ',' || text[i] == '[' || text[i] == '{';
		}
	}
	return n;
}

/* text parsed as JSON, when it holds at most PV_RESULTS_JSON_MAX values: NULL with the reason
 * recorded (PV_ECONFIG) when not. what names the file. */
static struct pv_json *parse_json(const char *what, const char *text, size_t len)
{
	char err[160];
	struct pv_json *j;
	size_t n = json_values(text, len);

	if (n > PV_RESULTS_JSON_MAX) {
		pv_error(PV_ECONFIG, "%s holds %zu values, more than the %d read", what, n,
			 PV_RESULTS_JSON_MAX);
		return NULL;
	}
	if (!(j = pv_json_parse(text, len, err, sizeof(err))))
		pv_error(PV_ECONFIG, "%s is not JSON: %s", what, err);
	return j;
}

/* v, a number, as a whole number from lo to hi in *out: its integer, or a real that is one and
 * in range; false for anything else. Never a cast out of range (a real beyond a long long's is
 * undefined behaviour to convert): reals past 2^53 are refused. */
static bool whole(const struct pv_json *v, long long lo, long long hi, long long *out)
{
	double d;

	if (pv_json_integer(v, out))
		return *out >= lo && *out <= hi;
	if (!pv_json_number(v, &d) || !(fabs(d) <= 9007199254740992.0) || d != floor(d) ||
	    d < (double)lo || d > (double)hi)
		return false;
	*out = (long long)d;
	return true;
}

static void str_of(const struct pv_json *o, const char *key, char *out, size_t cap)
{
	const char *s = o ? pv_json_text(pv_json_get(o, key)) : NULL;

	snprintf(out, cap, "%s", s ? s : "");
}

static double num_of(const struct pv_json *o, const char *key)
{
	double v;

	return o && pv_json_number(pv_json_get(o, key), &v) ? v : NAN;
}

static uint64_t count_of(const struct pv_json *o, const char *key)
{
	long long v;

	return o && pv_json_integer(pv_json_get(o, key), &v) && v > 0 ? (uint64_t)v : 0;
}

/* An exit status: an int, -1 when not said or none. */
static int exit_of(const struct pv_json *o, const char *key)
{
	long long v;

	return o && whole(pv_json_get(o, key), INT_MIN, INT_MAX, &v) ? (int)v : -1;
}

static unsigned uint_of(const struct pv_json *o, const char *key)
{
	long long v;

	return o && pv_json_integer(pv_json_get(o, key), &v) && v > 0 && v <= 0xffffffffLL
		       ? (unsigned)v
		       : 0;
}

double pv_results_time(const char *iso)
{
	struct tm tm;
	int y, mo, d, h, mi, n = 0;
	double s;

	if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 ||
	    iso[n] != 'Z' || iso[n + 1] || s < 0 || s >= 61)
		return NAN;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	return (double)timegm(&tm) + s;
}

struct pv_results_run *pv_results_new(void)
{
	struct pv_results_run *run = calloc(1, sizeof(*run));

	if (run) {
		run->answer_step = -1;
		run->first_over = -1;
		run->client_cores_needed = NAN;
		run->exit_code = -1;
	}
	return run;
}

int pv_results_note(struct pv_results_run *run, const char *fmt, ...)
{
	struct pv_buf b = PV_BUF_INIT;
	va_list ap;
	char *notes;

	/* a folder of many broken files makes as many notes: the first ones, and how many */
	if (++run->nnotes > PV_RESULTS_NOTES_MAX + 1)
		return 0;
	if (run->notes)
		pv_buf_addstr(&b, run->notes);
	if (run->nnotes > PV_RESULTS_NOTES_MAX) {
		pv_buf_addf(&b, "(the notes after the first %d are left out)",
			    PV_RESULTS_NOTES_MAX);
	} else {
		va_start(ap, fmt);
		pv_buf_vaddf(&b, fmt, ap);
		va_end(ap);
	}
	pv_buf_addstr(&b, "\n");
	notes = pv_buf_detach(&b);
	pv_buf_release(&b, 0);
	if (!notes)
		return -1;
	free(run->notes);
	run->notes = notes;
	return 0;
}

/* ---- manifest.json ---- */

static int parse_hosts(struct pv_results_run *run, const struct pv_json *a)
{
	size_t n = pv_json_size(a);

	if (!n)
		return PV_OK;
	if (n > PV_RESULTS_ENTRIES_MAX)
		return pv_error(PV_ECONFIG, "manifest.json names %zu hosts, more than %d", n,
				PV_RESULTS_ENTRIES_MAX);
	if (!(run->hosts = calloc(n, sizeof(*run->hosts))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct pv_json *h = pv_json_at(a, i);
		struct pv_results_host_info *o = &run->hosts[run->nhosts];

		if (!pv_json_is_object(h))
			continue;
		str_of(h, "name", o->name, sizeof(o->name));
		str_of(h, "role", o->role, sizeof(o->role));
		str_of(h, "address", o->address, sizeof(o->address));
		str_of(h, "version", o->version, sizeof(o->version));
		run->nhosts++;
	}
	return PV_OK;
}

/* st's figures as a run that recorded none: no clients, the figures NAN and the counts 0. */
static void not_recorded(struct pv_results_step *st)
{
	struct pv_load_summary *l = &st->load;

	free((void *)l->clients);
	free(st->client_names);
	st->client_names = NULL;
	memset(l, 0, sizeof(*l));
	l->cpu = l->dc_cpu = l->dc_samba = l->driver_cores = NAN;
	for (struct pv_load_lat *t = &l->logon; t <= &l->lag; t++)
		t->median = t->p95 = t->max = t->median_lo = t->median_hi = t->p95_lo = t->p95_hi =
			NAN;
	st->has_load = st->carried = st->has_logon = st->has_ops = false;
	st->ops_other = 0;
}

static int parse_step(struct pv_results_step *st, const struct pv_json *s)
{
	const struct pv_json *hs = pv_json_get(s, "hosts");
	char t[40];

	st->n = uint_of(s, "step");
	st->users = uint_of(s, "users");
	st->refine = pv_json_is_true(pv_json_get(s, "refine"));
	not_recorded(st); /* until load.json says */
	str_of(s, "start", t, sizeof(t));
	st->start = pv_results_time(t);
	str_of(s, "end", t, sizeof(t));
	st->end = pv_results_time(t);
	str_of(s, "ended", st->ended, sizeof(st->ended));
	if (pv_json_size(hs) > PV_RESULTS_ENTRIES_MAX)
		return pv_error(PV_ECONFIG, "manifest.json's step %u names %zu hosts, more than %d",
				st->n, pv_json_size(hs), PV_RESULTS_ENTRIES_MAX);
	if (pv_json_size(hs) && !(st->hosts = calloc(pv_json_size(hs), sizeof(*st->hosts))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t j = 0; j < pv_json_size(hs); j++) {
		const struct pv_json *h = pv_json_at(hs, j);
		struct pv_results_host *o = &st->hosts[st->nhosts];

		if (!pv_json_is_object(h))
			continue;
		str_of(h, "name", o->name, sizeof(o->name));
		str_of(h, "role", o->role, sizeof(o->role));
		o->users = uint_of(h, "users");
		str_of(h, "state", o->state, sizeof(o->state));
		o->exit = exit_of(h, "exit");
		str_of(h, "error", o->error, sizeof(o->error));
		st->nhosts++;
	}
	return PV_OK;
}

int pv_results_parse_manifest(struct pv_results_run *run, const char *text, size_t len)
{
	struct pv_json *m = parse_json("manifest.json", text, len);
	const struct pv_json *o, *steps;
	long long v;
	int r = PV_OK;

	if (!m)
		return PV_ECONFIG;
	if (!pv_json_is_object(m) || !pv_json_integer(pv_json_get(m, "manifest_version"), &v)) {
		pv_json_free(m);
		return pv_error(PV_ECONFIG, "manifest.json is not a run's manifest (no "
					    "manifest_version)");
	}
	if (v != 1) {
		pv_json_free(m);
		return pv_error(PV_ECONFIG,
				"manifest.json is of version %lld; this provision reads "
				"version 1",
				v);
	}
	str_of(m, "run_id", run->id, sizeof(run->id));
	str_of(m, "lab", run->lab, sizeof(run->lab));
	str_of(m, "status", run->status, sizeof(run->status));
	str_of(m, "provision", run->provision, sizeof(run->provision));
	str_of(m, "started", run->started, sizeof(run->started));
	str_of(m, "ended", run->ended, sizeof(run->ended));
	str_of(m, "error", run->error, sizeof(run->error));
	run->exit_code = exit_of(m, "exit_code");
	o = pv_json_get(m, "playbook");
	str_of(o, "path", run->playbook, sizeof(run->playbook));
	str_of(o, "sha256", run->sha256, sizeof(run->sha256));
	o = pv_json_get(m, "driver");
	str_of(o, "name", run->driver, sizeof(run->driver));
	run->min_users = uint_of(o, "min_users");
	run->max_users = uint_of(o, "max_users");
	run->step_users = uint_of(o, "step");
	run->duration = uint_of(o, "duration");
	run->warmup = uint_of(o, "warmup");
	run->timeout = uint_of(o, "timeout");
	str_of(o, "client_command", run->client_command, sizeof(run->client_command));
	str_of(o, "controller_command", run->controller_command, sizeof(run->controller_command));
	run->planned = pv_json_size(o ? pv_json_get(o, "steps") : NULL);
	o = pv_json_get(m, "watch");
	run->watch_interval = uint_of(o, "interval");
	str_of(o, "error", run->watch_error, sizeof(run->watch_error));
	o = pv_json_get(m, "server_config");
	if (pv_json_text(o) &&
	    !(run->server_config = strndup(pv_json_text(o), PV_RESULTS_CONFIG_MAX)))
		r = pv_error(PV_EIO, "out of memory");
	if (r == PV_OK && run->server_config && strlen(pv_json_text(o)) > PV_RESULTS_CONFIG_MAX)
		pv_results_note(run, "manifest.json: the server's configuration is cut at %u bytes",
				PV_RESULTS_CONFIG_MAX);
	if (r == PV_OK)
		r = parse_hosts(run, pv_json_get(m, "hosts"));
	steps = pv_json_get(m, "steps");
	if (r == PV_OK && pv_json_size(steps) > PV_RESULTS_STEPS_MAX)
		r = pv_error(PV_ECONFIG, "manifest.json has %zu steps, more than %d",
			     pv_json_size(steps), PV_RESULTS_STEPS_MAX);
	if (r == PV_OK && pv_json_size(steps) &&
	    !(run->steps = calloc(pv_json_size(steps), sizeof(*run->steps))))
		r = pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; r == PV_OK && i < pv_json_size(steps); i++) {
		const struct pv_json *s = pv_json_at(steps, i);

		if (!pv_json_is_object(s))
			continue;
		r = parse_step(&run->steps[run->nsteps], s);
		if (r == PV_OK && run->steps[run->nsteps].n) {
			run->nsteps++;
		} else {
			free(run->steps[run->nsteps].hosts);
			memset(&run->steps[run->nsteps], 0, sizeof(run->steps[0]));
		}
	}
	if (r == PV_OK && !run->driver[0])
		r = pv_error(PV_ECONFIG, "manifest.json names no driver");
	pv_json_free(m);
	return r;
}

/* ---- load.json ---- */

/* A count that cannot be, named: PV_ECONFIG. */
static int nope(const char *what, unsigned step, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int nope(const char *what, unsigned step, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return pv_error(PV_ECONFIG, "load.json's step %u%s%s: %s", step, what[0] ? ", " : "", what,
			msg);
}

/* One kind's counts (or every kind's) of step n, checked as the figures line's reader checks
 * an interval's (load/line.c): sums of intervals keep those bounds. */
/* A latency's "{lo, hi}" bucket in ms into seconds (NAN where not said). */
static void bucket_of(const struct pv_json *b, double *lo, double *hi)
{
	*lo = num_of(b, "lo") / 1000;
	*hi = num_of(b, "hi") / 1000;
}

/* {n?, median_ms, p95_ms, max_ms, median_ms_bucket, p95_ms_bucket} into seconds (NAN where
 * not said); its count is the caller's. */
static void lat_of(const struct pv_json *lat, struct pv_load_lat *o)
{
	o->median = num_of(lat, "median_ms") / 1000;
	o->p95 = num_of(lat, "p95_ms") / 1000;
	o->max = num_of(lat, "max_ms") / 1000;
	bucket_of(pv_json_get(lat, "median_ms_bucket"), &o->median_lo, &o->median_hi);
	bucket_of(pv_json_get(lat, "p95_ms_bucket"), &o->p95_lo, &o->p95_hi);
}

static int kind_of(const struct pv_json *k, struct pv_load_kind_sum *o, unsigned n,
		   const char *what)
{
	unsigned long long ended;

	o->n.started = count_of(k, "started");
	o->lat.n = count_of(k, "completed");
	o->n.errors = count_of(k, "errors");
	o->n.late = count_of(k, "late");
	o->n.over_limit = count_of(k, "over_limit");
	o->n.unserved = count_of(k, "unserved");
	o->n.overloaded = count_of(k, "overloaded");
	ended = pv_load_ended(o);
	o->overload = num_of(k, "overload_pct");
	if (isnan(o->overload))
		o->overload = ended ? 100.0 * (double)o->n.overloaded / (double)ended : 0;
	lat_of(pv_json_get(k, "latency"), &o->lat);
	/* no run counts that many: the figures line's own bound, so that what is computed of
	 * them (the intervals) stays within its bounds too */
	if (o->n.started > PV_LOAD_COUNT_MAX || o->lat.n > PV_LOAD_COUNT_MAX ||
	    o->n.errors > PV_LOAD_COUNT_MAX || o->n.unserved > PV_LOAD_COUNT_MAX)
		return nope(what, n,
			    "more than %lld scenarios started, completed, in error or "
			    "unserved",
			    PV_LOAD_COUNT_MAX);
	if (o->n.unserved > o->n.started)
		return nope(what, n, "more unserved (%llu) than started (%llu)",
			    (unsigned long long)o->n.unserved, (unsigned long long)o->n.started);
	if (o->n.over_limit > o->lat.n)
		return nope(what, n, "more over the limit (%llu) than completed (%llu)",
			    (unsigned long long)o->n.over_limit, (unsigned long long)o->lat.n);
	if (o->n.overloaded > ended)
		return nope(what, n, "more overloaded (%llu) than ended (%llu)",
			    (unsigned long long)o->n.overloaded, ended);
	if (o->n.overloaded < o->n.late + o->n.unserved)
		return nope(what, n, "fewer overloaded (%llu) than late and unserved (%llu)",
			    (unsigned long long)o->n.overloaded,
			    (unsigned long long)(o->n.late + o->n.unserved));
	return PV_OK;
}

static int clients_of(struct pv_results_step *st, const struct pv_json *a)
{
	size_t n = pv_json_size(a);
	struct pv_load_client *cl;

	if (!pv_json_is_array(a))
		return PV_OK;
	if (n > PV_RESULTS_ENTRIES_MAX)
		return nope("", st->n, "%zu clients, more than %d", n, PV_RESULTS_ENTRIES_MAX);
	if (!(cl = calloc(n ? n : 1, sizeof(*cl))))
		return pv_error(PV_EIO, "out of memory");
	st->load.clients = cl;
	if (!(st->client_names = calloc(n ? n : 1, sizeof(*st->client_names))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct pv_json *c = pv_json_at(a, i), *b = pv_json_get(c, "bound");
		struct pv_load_client *o = &cl[st->load.nclients];
		char *name = st->client_names[st->load.nclients];

		if (!pv_json_is_object(c))
			continue;
		str_of(c, "name", name, sizeof(st->client_names[0]));
		o->name = name;
		o->threads = uint_of(c, "threads");
		o->cpu = num_of(c, "cpu_driver");
		o->cpu_top = num_of(c, "cpu_top_loop");
		o->host_cpu = num_of(c, "cpu_host");
		o->lag_p95 = num_of(c, "lag_ms_p95");
		o->lag_max = num_of(c, "lag_ms_max");
		if (b && !pv_json_is_bool(b))
			return nope("", st->n, "client %s's \"bound\" is not true or false", name);
		o->bound = pv_json_is_true(b);
		st->load.nclients++;
	}
	return PV_OK;
}

/* "logon": {ok, failed, retries, latency} (version 2) */
static int logon_of(struct pv_results_step *st, const struct pv_json *o)
{
	struct pv_load_summary *l = &st->load;

	if (!pv_json_is_object(o))
		return PV_OK;
	st->has_logon = true;
	l->logon.n = count_of(o, "ok");
	l->logon_n.failed = count_of(o, "failed");
	l->logon_n.retries = count_of(o, "retries");
	lat_of(pv_json_get(o, "latency"), &l->logon);
	if (l->logon.n > st->users || l->logon_n.failed > st->users - l->logon.n)
		return nope("", st->n, "%llu users logged on and %llu could not, of %u",
			    (unsigned long long)l->logon.n, (unsigned long long)l->logon_n.failed,
			    st->users);
	return PV_OK;
}

/* One command's count into its place (an unknown command's into other), the sums saturated:
 * an array of a command per SMB2 command, whatever the file names, keeps the table linear. */
static int op_of(const char *key, const struct pv_json *v, void *arg)
{
	struct pv_results_step *st = arg;
	int k = pv_load_op_of(key);
	uint64_t *at = k < 0 ? &st->ops_other : &st->load.all.n.ops[k];
	long long n;

	if (pv_json_integer(v, &n) && n > 0)
		*at = *at > UINT64_MAX - (uint64_t)n ? UINT64_MAX : *at + (uint64_t)n;
	return 0;
}

static void ops_of(struct pv_results_step *st, const struct pv_json *o)
{
	if (!pv_json_is_object(o))
		return;
	st->has_ops = true;
	pv_json_each(o, op_of, st);
}

/* A whole setting of config from lo to hi into *out; absent: *out untouched. */
static int setting(const struct pv_json *c, const char *key, long long lo, long long hi,
		   long long *out)
{
	const struct pv_json *v = pv_json_get(c, key);

	if (!v || whole(v, lo, hi, out))
		return PV_OK;
	return pv_error(PV_ECONFIG, "load.json's config.%s is not a whole number from %lld to %lld",
			key, lo, hi);
}

/* The settings (the driver's own bounds, load/proto.c: rate 1..PV_PLAYBOOK_WORKLOAD_RATE_MAX a
 * user-hour, figures every 1..3600 s; the seed as the writer casts it, a long long) */
static int config_of(const struct pv_json *c, struct pv_playbook_workload *cfg)
{
	const struct pv_json *sc = pv_json_get(c, "scenarios");
	long long rate, interval, seed;
	double v;
	int r;

	pv_playbook_workload_defaults(cfg);
	if (!c)
		return PV_OK;
	rate = cfg->rate;
	interval = cfg->interval;
	seed = (long long)cfg->seed;
	if ((r = setting(c, "rate", 1, PV_PLAYBOOK_WORKLOAD_RATE_MAX, &rate)) != PV_OK ||
	    (r = setting(c, "interval", 1, 3600, &interval)) != PV_OK ||
	    (r = setting(c, "seed", LLONG_MIN, LLONG_MAX, &seed)) != PV_OK)
		return r;
	cfg->rate = (unsigned)rate;
	cfg->interval = (unsigned)interval;
	cfg->seed = (uint64_t)seed;
	if (!isnan(v = num_of(c, "late")))
		cfg->late = v;
	if (!isnan(v = num_of(c, "overload")))
		cfg->overload = v;
	cfg->keep_logged_on = pv_json_is_true(pv_json_get(c, "keep_logged_on"));
	cfg->threads = uint_of(c, "threads");
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		const struct pv_json *s = pv_json_get(sc, pv_playbook_workload_names[k]);

		if (!isnan(v = num_of(s, "weight")))
			cfg->kind[k].weight = v;
		if (!isnan(v = num_of(s, "limit")))
			cfg->kind[k].limit = v;
	}
	return PV_OK;
}

static int step_of(struct pv_results_step *st, const struct pv_json *s, int version)
{
	const struct pv_json *kinds = pv_json_get(s, "kinds"), *cb = pv_json_get(s, "client_bound");
	struct pv_load_summary *l = &st->load;
	bool any_bound = false;
	int r;

	st->has_load = true;
	l->users = st->users;
	l->secs = num_of(s, "seconds");
	l->rate = num_of(s, "scen_per_s");
	l->expected = num_of(s, "expected_per_s");
	l->connected = uint_of(s, "connected");
	l->failed = uint_of(s, "not_connected");
	l->lost = uint_of(s, "clients_lost");
	l->drops = uint_of(s, "connections_dropped");
	l->reconnects = uint_of(s, "reconnected");
	l->relogons = uint_of(s, "logons_again");
	l->reclaimed = uint_of(s, "durable_reclaimed");
	st->carried = pv_json_is_true(pv_json_get(s, "carried"));
	l->driver_cores = num_of(s, "driver_cores");
	l->cpu = num_of(s, "server_cpu_pct");
	l->dc_cpu = num_of(s, "dc_cpu_pct");
	l->dc_samba = num_of(s, "dc_samba_pct");
	l->lag.p95 = num_of(s, "lag_ms_p95") / 1000;
	if ((r = kind_of(pv_json_get(s, "all"), &l->all, st->n, "")) != PV_OK)
		return r;
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		if ((r = kind_of(pv_json_get(kinds, pv_playbook_workload_names[k]), &l->kind[k],
				 st->n, pv_playbook_workload_names[k])) != PV_OK)
			return r;
	if (l->secs > 0) {
		/* the throughput's interval as the run computes it (load/summary.c) */
		pv_stat_poisson_ci(l->all.lat.n, 0.05, &l->rate_lo, &l->rate_hi);
		l->rate_lo /= l->secs;
		l->rate_hi /= l->secs;
	}
	ops_of(st, pv_json_get(s, "ops"));
	if ((r = clients_of(st, pv_json_get(s, "clients"))) != PV_OK ||
	    (r = logon_of(st, pv_json_get(s, "logon"))) != PV_OK)
		return r;
	if (version < 2)
		return PV_OK;
	if (!pv_json_is_bool(cb))
		return nope("", st->n, "\"client_bound\" is not true or false");
	l->client_bound = pv_json_is_true(cb);
	for (size_t c = 0; c < l->nclients; c++)
		any_bound |= l->clients[c].bound;
	if (st->carried && l->client_bound)
		return nope("", st->n,
			    "carried and client-bound (a step the clients were the limit of is "
			    "never carried)");
	if (l->nclients && any_bound != l->client_bound)
		return nope("", st->n, "%s, but %s of its clients was the limit",
			    l->client_bound ? "client-bound" : "not client-bound",
			    any_bound ? "one" : "none");
	return PV_OK;
}

/* answer.last_carried or answer.first_over: {step, users, client_bound} or null, into *at
 * (-1: null) when it names a step of the run as it is. */
static int step_ref(const struct pv_results_run *run, const struct pv_json *ans, const char *key,
		    bool carried, long *at)
{
	const struct pv_json *o = pv_json_get(ans, key);
	long long v;

	*at = -1;
	if (!o || pv_json_is_null(o))
		return PV_OK;
	if (!pv_json_integer(pv_json_get(o, "step"), &v) || v < 1 || (size_t)v > run->nsteps)
		return pv_error(PV_ECONFIG, "load.json's answer.%s names no step of the run", key);
	*at = (long)v - 1;
	if (!run->steps[*at].has_load || uint_of(o, "users") != run->steps[*at].users ||
	    run->steps[*at].carried != carried ||
	    pv_json_is_true(pv_json_get(o, "client_bound")) != run->steps[*at].load.client_bound)
		return pv_error(PV_ECONFIG,
				"load.json's answer.%s (step %lld, %u users) is not that step "
				"(%u users, %s, %s)",
				key, v, uint_of(o, "users"), run->steps[*at].users,
				run->steps[*at].carried ? "carried" : "not carried",
				run->steps[*at].load.client_bound ? "client-bound"
								  : "not client-bound");
	return PV_OK;
}

/* The answer: its step (carried), and the step over it (stated in version 2, else the fewest
 * users over it that did not count). */
static int answer_of(struct pv_results_run *run, const struct pv_json *ans, int version)
{
	long long v;
	long last = -1;
	int r;

	if (pv_json_integer(pv_json_get(ans, "step"), &v)) {
		if (v < 1 || (size_t)v > run->nsteps || !run->steps[v - 1].carried ||
		    uint_of(ans, "users") != run->steps[v - 1].users)
			return pv_error(PV_ECONFIG,
					"load.json's answer (step %lld, %u users) is not a step "
					"carried",
					v, uint_of(ans, "users"));
		run->answer_step = (long)v - 1;
		run->answer_users = run->steps[v - 1].users;
	}
	str_of(ans, "line", run->answer, sizeof(run->answer));
	if (version < 2) {
		run->first_over = pv_results_first_over(run);
		return PV_OK;
	}
	if ((r = step_ref(run, ans, "last_carried", true, &last)) != PV_OK ||
	    (r = step_ref(run, ans, "first_over", false, &run->first_over)) != PV_OK)
		return r;
	if (last != run->answer_step)
		return pv_error(PV_ECONFIG, "load.json's answer.last_carried is not its step");
	run->answer_at_least =
		run->first_over >= 0 && run->steps[run->first_over].load.client_bound;
	if (pv_json_is_true(pv_json_get(ans, "client_bound")) != run->answer_at_least)
		return pv_error(PV_ECONFIG, "load.json's answer.client_bound is not its "
					    "first_over's");
	run->client_cores_needed = num_of(ans, "client_cores_needed");
	return PV_OK;
}

/* The load's figures taken out again (load.json refused). */
static void unload(struct pv_results_run *run)
{
	for (size_t i = 0; i < run->nsteps; i++)
		not_recorded(&run->steps[i]);
	run->answer_step = run->first_over = -1;
	run->answer_users = 0;
	run->answer_at_least = false;
	run->client_cores_needed = NAN;
	run->answer[0] = '\0';
	run->has_load = false;
}

int pv_results_parse_load(struct pv_results_run *run, const char *text, size_t len)
{
	struct pv_json *j = parse_json("load.json", text, len);
	const struct pv_json *steps = j ? pv_json_get(j, "steps") : NULL;
	long long v;
	int r = PV_OK;

	if (!j)
		return PV_ECONFIG;
	/* version 1 before the capacity figures (issue 19), 2 with them (checked: step_of,
	 * answer_of) */
	if (!pv_json_integer(pv_json_get(j, "version"), &v) || v < 1 || v > 2 ||
	    !pv_json_is_array(steps)) {
		pv_json_free(j);
		return pv_error(PV_ECONFIG, "load.json is not the built-in driver's results "
					    "(version 1 or 2 with steps)");
	}
	for (size_t i = 0; i < pv_json_size(steps) && i < run->nsteps; i++)
		if (uint_of(pv_json_at(steps, i), "users") != run->steps[i].users) {
			r = pv_error(PV_ECONFIG,
				     "load.json's step %zu has %u users, the manifest's %u", i + 1,
				     uint_of(pv_json_at(steps, i), "users"), run->steps[i].users);
			pv_json_free(j);
			return r;
		}
	if ((r = config_of(pv_json_get(j, "config"), &run->cfg)) != PV_OK) {
		pv_json_free(j);
		return r;
	}
	for (size_t i = 0; i < pv_json_size(steps) && i < run->nsteps && r == PV_OK; i++)
		r = step_of(&run->steps[i], pv_json_at(steps, i), (int)v);
	run->answer_step = run->first_over = -1;
	run->answer_users = 0;
	if (r == PV_OK)
		r = answer_of(run, pv_json_get(j, "answer"), (int)v);
	if (r == PV_OK)
		run->has_load = true;
	else
		unload(run);
	pv_json_free(j);
	return r;
}

long pv_results_first_over(const struct pv_results_run *run)
{
	long over = -1;

	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_step *st = &run->steps[i];

		if (st->has_load && !st->carried &&
		    (run->answer_step < 0 || st->users > run->answer_users) &&
		    (over < 0 || st->users < run->steps[over].users))
			over = (long)i;
	}
	return over;
}

static int by_users(const void *a, const void *b, void *arg)
{
	const struct pv_results_run *run = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	unsigned ux = run->steps[x].users, uy = run->steps[y].users;

	return ux != uy ? (ux < uy ? -1 : 1) : (x > y) - (x < y);
}

void pv_results_by_users(const struct pv_results_run *run, size_t *idx)
{
	for (size_t i = 0; i < run->nsteps; i++)
		idx[i] = i;
	qsort_r(idx, run->nsteps, sizeof(*idx), by_users, (void *)run);
}

/* ---- load.jsonl ---- */

int pv_results_parse_jsonl(struct pv_results_step *st, const char *text, size_t len, unsigned skip)
{
	struct pv_load_hist *h = calloc(PV_PLAYBOOK_WORKLOAD_KINDS, sizeof(*h));
	struct pv_load_figs *f = malloc(sizeof(*f));
	char ready[PV_RESULTS_TEXT] = "";
	const char *line;
	size_t n, pos = 0, lineno = 0;
	unsigned intervals = 0;
	int r = PV_OK;

	if (!h || !f) {
		free(h);
		free(f);
		return pv_error(PV_EIO, "out of memory");
	}
	while (r == PV_OK && pv_results_next_line(text, len, &pos, &line, &n)) {
		lineno++;
		if (n > 6 && !memcmp(line, "ready ", 6)) {
			struct pv_load_ready rd;

			if (!ready[0] && pv_load_ready_decode(line, n, &rd) == PV_OK)
				snprintf(ready, sizeof(ready), "%.*s", (int)sizeof(ready) - 1,
					 rd.first);
			continue;
		}
		if (!n || line[0] != '{')
			continue; /* another kind of line ("ops {...}") */
		if ((r = pv_load_line_decode(line, n, f)) != PV_OK) {
			r = pv_error_prefix(PV_ECONFIG, "line %zu", lineno);
			break;
		}
		if (f->seq <= skip)
			continue;
		intervals++;
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			pv_load_hist_merge(&h[k], &f->kind[k].lat);
	}
	if (r == PV_OK) {
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
			pv_load_hist_merge(&st->load.kind[k].n.lat, &h[k]);
			pv_load_hist_merge(&st->load.all.n.lat, &h[k]);
		}
		st->has_hist = true;
		if (intervals > st->intervals)
			st->intervals = intervals;
		if (ready[0] && !st->ready_error[0])
			snprintf(st->ready_error, sizeof(st->ready_error), "%s", ready);
	}
	free(h);
	free(f);
	return r;
}
