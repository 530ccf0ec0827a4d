/* sweep/sweep.c: `provision sweep` (see sweep.h). */
#include "sweep/sweep.h"

#include "env/target.h"
#include "json/json.h"
#include "playbooks/names.h"
#include "playbooks/roster.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "results/copy.h"
#include "results/results.h"
#include "util/stats.h"
#include "run/run.h"
#include "run/sink.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char pv_sweep_remove_sh[];

#define CMD_SEP	   " ;; " /* "APPLY ;; REVERT" */
#define RECONNECTS 3

struct sweep {
	const struct pv_env *env;
	const struct pv_sweep_opts *o;
	struct pv_sweep_result *res;
	struct pv_remote *srv;
	struct pv_remote *ctl;
	struct pv_run_sink *sink;
	char user[600], home[256], share_path[1024]; /* LAB\u1, u1 (its folder), the share's */
};

/* ---- settings ---- */

static int parse(const struct pv_sweep_opts *o, struct pv_sweep_result *res)
{
	if (o->nsettings + o->ncommands == 0)
		return pv_error(PV_EUSAGE, "sweep needs at least one --setting PARAM=VALUE or "
					   "--setting-command 'APPLY ;; REVERT'");
	if (o->nsettings + o->ncommands > PV_SWEEP_SETTINGS)
		return pv_error(PV_EUSAGE, "sweep takes at most %d settings", PV_SWEEP_SETTINGS);
	for (size_t i = 0; i < o->nsettings; i++) {
		struct pv_sweep_setting *s = &res->settings[res->nsettings++];
		const char *eq = strchr(o->settings[i], '=');
		size_t pl;
		int r;

		if (!eq)
			return pv_error(PV_EUSAGE,
					"--setting '%s': expected PARAM=VALUE (a Samba "
					"parameter, as 'case sensitive=yes')",
					o->settings[i]);
		pl = (size_t)(eq - o->settings[i]);
		while (pl && o->settings[i][pl - 1] == ' ')
			pl--;
		if (pl >= sizeof(s->param))
			return pv_error(PV_EUSAGE, "--setting '%.60s...': the name is too long",
					o->settings[i]);
		snprintf(s->param, sizeof(s->param), "%.*s", (int)pl, o->settings[i]);
		for (eq++; *eq == ' '; eq++)
			;
		snprintf(s->value, sizeof(s->value), "%s", eq);
		{
			char label[sizeof(s->label)];

			snprintf(label, sizeof(label), "%s = %s", s->param, s->value);
			memcpy(s->label, label, sizeof(label));
		}
		if ((r = pv_samba_setting_valid(s->param, s->value)) != PV_OK)
			return r;
	}
	for (size_t i = 0; i < o->ncommands; i++) {
		struct pv_sweep_setting *s = &res->settings[res->nsettings++];
		const char *sep = strstr(o->commands[i], CMD_SEP);

		s->command = true;
		if (!sep || sep == o->commands[i] || !sep[strlen(CMD_SEP)] ||
		    (size_t)(sep - o->commands[i]) >= sizeof(s->apply) ||
		    strlen(sep + strlen(CMD_SEP)) >= sizeof(s->revert))
			return pv_error(
				PV_EUSAGE,
				"--setting-command '%.200s': expected 'APPLY ;; REVERT', two "
				"commands run on the server (each under 1024 bytes)",
				o->commands[i]);
		snprintf(s->apply, sizeof(s->apply), "%.*s", (int)(sep - o->commands[i]),
			 o->commands[i]);
		snprintf(s->revert, sizeof(s->revert), "%s", sep + strlen(CMD_SEP));
		memcpy(s->label, s->apply, sizeof(s->apply));
	}
	return PV_OK;
}

/* Every Samba setting checked by the server's testparm, its sections chosen (the lab's shares,
 * or global where [global] reads the registry), what they hold now kept. */
static int check(struct sweep *S)
{
	const struct pv_playbook *pb = S->env->pb;
	struct pv_sweep_result *res = S->res;
	char how[128] = "";
	bool asked_global = false;
	int r;

	for (size_t i = 0; i < res->nsettings; i++) {
		struct pv_sweep_setting *s = &res->settings[i];

		if (s->command)
			continue;
		if ((r = pv_samba_setting_check(S->srv, s->param, s->value, &s->scope)) != PV_OK)
			return r;
		if (s->scope == PV_SAMBA_GLOBAL) {
			if (!asked_global &&
			    (r = pv_samba_registry_global(S->srv, how, sizeof(how))) != PV_OK)
				return r;
			asked_global = true;
			if (!how[0])
				return pv_error(PV_ECONFIG,
						"'%s' is a global parameter, and the server's "
						"[global] does "
						"not read the registry, so it cannot be set and "
						"put back safely "
						"here: add 'include = registry' as the last line "
						"of [global] in "
						"its smb.conf (then net conf holds what the sweep "
						"changes), or "
						"sweep it with --setting-command 'APPLY ;; REVERT'",
						s->param);
			snprintf(s->prev[0].section, sizeof(s->prev[0].section), "global");
			s->nsec = 1;
		} else {
			for (unsigned k = 1; k <= pb->server.shares && s->nsec < PV_SWEEP_SECTIONS;
			     k++) {
				char share[128];

				if ((r = pv_playbook_names_expand(pb->server.share_template, NULL,
								  pb->server.host.name, 0, k, share,
								  sizeof(share))) != PV_OK)
					return r;
				snprintf(s->prev[s->nsec++].section, sizeof(s->prev[0].section),
					 "%s", share);
			}
		}
		for (size_t k = 0; k < s->nsec; k++) {
			bool had;
			char path[16];

			/* a share the lab made lives in the registry: its path is there */
			if (s->scope == PV_SAMBA_SHARE &&
			    ((r = pv_samba_setting_get(S->srv, s->prev[k].section, "path", &had,
						       path, sizeof(path))) != PV_OK ||
			     !had) &&
			    r != PV_EREMOTE)
				return pv_error(PV_ECONFIG,
						"the share '%s' is not in the server's registry "
						"configuration: sweep sets share parameters on the "
						"shares 'provision server' made (run it first)",
						s->prev[k].section);
			if ((r = pv_samba_setting_get(S->srv, s->prev[k].section, s->param,
						      &s->prev[k].had, s->prev[k].value,
						      sizeof(s->prev[k].value))) != PV_OK)
				return r;
		}
	}
	return PV_OK;
}

static int run_command(struct pv_remote *rem, const char *what, const char *cmd)
{
	struct pv_buf err = PV_BUF_INIT;
	int status = 0, r = pv_remote_exec(rem, cmd, NULL, 0, NULL, &err, &status, 120);
	char why[256];

	pv_remote_reason(err.len ? err.data : "", why, sizeof(why));
	pv_buf_release(&err, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "the %s command on the server failed (exit %d): %s", what,
			     status, why[0] ? why : "no message");
	return r;
}

static int apply(struct sweep *S, struct pv_sweep_setting *s)
{
	int r = PV_OK;

	s->applied = true; /* from the first change on, it is to be put back */
	if (s->command)
		return run_command(S->srv, "apply", s->apply);
	for (size_t k = 0; k < s->nsec && r == PV_OK; k++)
		r = pv_samba_setting_put(S->srv, s->prev[k].section, s->param, s->value);
	if (r == PV_OK && s->scope == PV_SAMBA_GLOBAL)
		r = pv_samba_reload(S->srv);
	return r;
}

static int revert_on(struct pv_remote *rem, struct pv_sweep_setting *s)
{
	int r = PV_OK;

	if (s->command)
		r = run_command(rem, "revert", s->revert);
	for (size_t k = 0; !s->command && k < s->nsec && r == PV_OK; k++)
		r = pv_samba_setting_put(rem, s->prev[k].section, s->param,
					 s->prev[k].had ? s->prev[k].value : NULL);
	if (r == PV_OK && !s->command && s->scope == PV_SAMBA_GLOBAL)
		r = pv_samba_reload(rem);
	if (r == PV_OK)
		s->applied = false;
	return r;
}

/* Put s back, connecting to the server again when the connection went. */
static int revert(struct sweep *S, struct pv_sweep_setting *s)
{
	int r = PV_EREMOTE;

	for (int i = 0; i <= RECONNECTS && s->applied; i++) {
		if (i > 0) {
			pv_log(PV_LOG_WARN,
			       "sweep: the server's connection failed (%s); connecting "
			       "again to put '%s' back",
			       pv_errmsg(), s->label);
			pv_remote_free(S->srv);
			S->srv = NULL;
			if ((r = pv_env_host_connect(&S->env->pb->server.host, &S->srv)) != PV_OK)
				continue;
		}
		r = revert_on(S->srv, s);
	}
	return s->applied ? r : PV_OK;
}

/* What the sweep would put back, for revert.txt and messages. */
static void undo_text(const struct pv_sweep_setting *s, struct pv_buf *b)
{
	if (s->command) {
		pv_buf_addf(b, "%s\n", s->revert);
		return;
	}
	for (size_t k = 0; k < s->nsec; k++) {
		pv_buf_addstr(b, "net conf ");
		pv_buf_addstr(b, s->prev[k].had ? "setparm " : "delparm ");
		pv_remote_quote(b, s->prev[k].section);
		pv_buf_addstr(b, " ");
		pv_remote_quote(b, s->param);
		if (s->prev[k].had) {
			pv_buf_addstr(b, " ");
			pv_remote_quote(b, s->prev[k].value);
		}
		pv_buf_addstr(b, "\n");
	}
	if (s->scope == PV_SAMBA_GLOBAL)
		pv_buf_addstr(b, "smbcontrol smbd reload-config\n");
}

/* ---- a job ---- */

/* The copy's target folder removed as its user (never as root through the user's folder). */
static int remove_target(struct sweep *S, const char *folder)
{
	struct pv_buf script = PV_BUF_INIT, err = PV_BUF_INIT;
	char path[2048], why[256];
	int status = 0, r;

	snprintf(path, sizeof(path), "%s/%s", S->share_path, folder);
	pv_remote_var(&script, "user", S->user);
	pv_remote_var(&script, "path", path);
	pv_buf_addstr(&script, pv_sweep_remove_sh);
	r = pv_buf_failed(&script)
		    ? pv_error(PV_EIO, "out of memory")
		    : pv_remote_exec(S->srv, script.data, NULL, 0, NULL, &err, &status, 600);
	pv_remote_reason(err.len ? err.data : "", why, sizeof(why));
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "removing the copy's folder %s on the server as %s: %s",
			     path, S->user, why[0] ? why : "failed");
	pv_buf_release(&script, 0);
	pv_buf_release(&err, 0);
	return r;
}

static int one_copy(struct sweep *S, struct pv_sweep_job *jb)
{
	struct pv_run_copy_opts co = S->o->copy;
	struct pv_run_copy_job *cj = calloc(1, sizeof(*cj));
	char folder[512];
	int r, rr;

	if (!cj)
		return pv_error(PV_EIO, "out of memory");
	snprintf(folder, sizeof(folder), "%s/%s", S->home, jb->id);
	co.folder = folder;
	co.id = jb->id;
	co.mirror = false;
	r = pv_run_copy_run(S->env, &co, cj);
	if (r == PV_OK) {
		double smbd = 0;
		unsigned long files = cj->figs.files + cj->figs.fixed;

		jb->value = cj->figs.put_s > 0 ? (double)files / cj->figs.put_s : NAN;
		jb->noise = NAN;
		if (cj->nticks >= 4) {
			double lo = NAN, hi = NAN, rate = NAN;
			double *t = malloc(cj->nticks * sizeof(*t)),
			       *c = malloc(cj->nticks * sizeof(*c));

			if (t && c) {
				for (size_t i = 0; i < cj->nticks; i++) {
					t[i] = cj->ticks[i].t;
					c[i] = (double)cj->ticks[i].files;
				}
				pv_results_copy_rate(t, c, cj->nticks, &rate, &lo, &hi);
				if (isfinite(lo))
					jb->noise = (hi - lo) / (2 * 1.96);
			}
			free(t);
			free(c);
		}
		for (size_t i = 0; i < cj->nsamples; i++)
			smbd += cj->samples[i].v[PV_RUN_W_SMBD] / 100 * cj->interval;
		jb->cpu_per_file = files && cj->nsamples ? 1000 * smbd / (double)files : NAN;
	}
	if (r != PV_OK)
		snprintf(jb->msg, sizeof(jb->msg), "%s", pv_errmsg());
	if (S->o->copy_done)
		S->o->copy_done(S->o->ctx, cj, r);
	pv_run_copy_job_release(cj);
	free(cj);
	rr = remove_target(S, folder);
	if (r != PV_OK) /* the words of the copy's failure, not of what came after it */
		return pv_error(r, "%s", jb->msg);
	return rr;
}

static int one_run(struct sweep *S, struct pv_sweep_job *jb)
{
	struct pv_run_opts ro = {jb->id};
	struct pv_run_result *rr = calloc(1, sizeof(*rr));
	struct pv_results_run *run = NULL;
	int r;

	if (!rr)
		return pv_error(PV_EIO, "out of memory");
	r = pv_run(S->env, &ro, rr);
	if (r == PV_OK && (r = pv_results_read(rr->folder, &run)) == PV_OK) {
		jb->value = run->answer_step >= 0 ? (double)run->answer_users : 0;
		jb->noise = NAN;
		jb->cpu_per_file = NAN;
	}
	pv_results_free(run);
	pv_run_release(rr);
	free(rr);
	return r;
}

/* ---- the verdict ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The values of condition c, their own noise (the mean of their variances), their CPU. */
static struct pv_stat_est estimate(const struct pv_sweep_result *res, unsigned c,
				   struct pv_sweep_cond *k)
{
	double v[PV_SWEEP_REPEAT_MAX], cpu[PV_SWEEP_REPEAT_MAX], floor = 0;
	size_t n = 0, nf = 0, nc = 0;

	for (size_t i = 0; i < res->njobs; i++) {
		const struct pv_sweep_job *j = &res->jobs[i];

		if (j->cond != c || j->code != PV_OK || !isfinite(j->value) ||
		    n == PV_SWEEP_REPEAT_MAX)
			continue;
		v[n++] = j->value;
		if (isfinite(j->noise)) {
			floor += j->noise * j->noise;
			nf++;
		}
		if (isfinite(j->cpu_per_file))
			cpu[nc++] = j->cpu_per_file;
	}
	k->n = (unsigned)n;
	k->cpu_per_file = median(cpu, nc);
	if (!n) {
		k->median = k->lo = k->hi = NAN;
		return (struct pv_stat_est){NAN, NAN, NAN};
	}
	{
		struct pv_stat_est e = pv_stat_repeats(v, n, nf ? floor / (double)nf : 0);
		double h = isfinite(e.df) ? pv_stat_t_q(0.975, e.df) : pv_stat_norm_q(0.975);

		k->median = median(v, n);
		k->lo = fmax(0, e.mean - h * sqrt(e.var)); /* a rate or a count: never below 0 */
		k->hi = e.mean + h * sqrt(e.var);
		return e;
	}
}

void pv_sweep_judge(struct pv_sweep_result *res)
{
	struct pv_stat_est base;

	res->nconds = res->nsettings + 1;
	snprintf(res->conds[0].label, sizeof(res->conds[0].label), "baseline");
	for (size_t c = 1; c < res->nconds; c++)
		snprintf(res->conds[c].label, sizeof(res->conds[c].label), "%s",
			 res->settings[c - 1].label);
	base = estimate(res, 0, &res->conds[0]);
	res->conds[0].diff = res->conds[0].dlo = res->conds[0].dhi = NAN;
	res->conds[0].beyond = false;
	for (size_t c = 1; c < res->nconds; c++) {
		struct pv_sweep_cond *k = &res->conds[c];
		struct pv_stat_est e = estimate(res, (unsigned)c, k);

		k->diff = k->dlo = k->dhi = NAN;
		k->beyond = false;
		/* a single repeat each: a verdict only on the noise either one knows of its own */
		if (!k->n || !res->conds[0].n ||
		    (k->n < 2 && res->conds[0].n < 2 && !(e.var > 0) && !(base.var > 0)))
			continue;
		pv_stat_diff(e, base, 0.05, &k->diff, &k->dlo, &k->dhi);
		k->beyond = isfinite(k->dlo) && (k->dlo > 0 || k->dhi < 0);
	}
}

/* ---- the files ---- */

struct pv_json *pv_sweep_conditions_json(const struct pv_sweep_result *res)
{
	struct pv_json *conds = pv_json_array();

	for (size_t c = 0; c < res->nconds; c++) {
		const struct pv_sweep_cond *k = &res->conds[c];
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "label", k->label);
		pv_json_int(x, "n", k->n);
		pv_json_real(x, "median", k->median);
		pv_json_real(x, "lo", k->lo);
		pv_json_real(x, "hi", k->hi);
		pv_json_real(x, "diff", k->diff);
		pv_json_real(x, "diff_lo", k->dlo);
		pv_json_real(x, "diff_hi", k->dhi);
		pv_json_bool(x, "beyond_noise", k->beyond);
		pv_json_real(x, "cpu_ms_per_file", k->cpu_per_file);
		pv_json_append(conds, x);
	}
	return conds;
}

static int write_json(struct sweep *S)
{
	const struct pv_sweep_result *res = S->res;
	struct pv_json *o = pv_json_object(), *jobs = pv_json_array();
	char *text;
	int r;

	pv_json_str(o, "id", res->id);
	pv_json_str(o, "job", res->run ? "run" : "copy");
	pv_json_bool(o, "config_same", res->config_same);
	pv_json_str(o, "config_diff", res->config_diff);
	pv_json_str(o, "put_back", res->put_back);
	for (size_t i = 0; i < res->njobs; i++) {
		const struct pv_sweep_job *j = &res->jobs[i];
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "id", j->id);
		pv_json_str(x, "condition", res->conds[j->cond].label);
		pv_json_int(x, "round", j->round);
		pv_json_int(x, "exit", j->code);
		pv_json_real(x, "value", j->value);
		pv_json_real(x, "cpu_ms_per_file", j->cpu_per_file);
		pv_json_real(x, "apply_s", j->apply_s);
		pv_json_real(x, "revert_s", j->revert_s);
		pv_json_append(jobs, x);
	}
	pv_json_set(o, "jobs", jobs);
	pv_json_set(o, "conditions", pv_sweep_conditions_json(res));
	if (!(text = pv_json_pretty(o)))
		r = pv_error(PV_EIO, "out of memory");
	else
		r = pv_run_sink_write(S->sink, "", "sweep.json", text, strlen(text), true);
	free(text);
	pv_json_free(o);
	return r;
}

int pv_sweep_write(const struct pv_env *env, const struct pv_sweep_result *res, const char *name,
		   const void *data, size_t len)
{
	(void)env;
	if (!res->sink)
		return pv_error(PV_EBUG, "sweep: no results folder to write %s into", name);
	return pv_run_sink_write(res->sink, "", name, data, len, true);
}

/* ---- the sweep ---- */

static void ids(struct pv_sweep_result *res, const char *id, unsigned rounds)
{
	for (unsigned r = 1; r <= rounds; r++)
		for (unsigned c = 0; c <= res->nsettings; c++) {
			struct pv_sweep_job *j = &res->jobs[res->njobs++];

			j->cond = c;
			j->round = r;
			j->value = j->noise = j->cpu_per_file = NAN;
			j->code = -1; /* not run */
			snprintf(j->id, sizeof(j->id), "%.40s-%s%u-r%u", id, c ? "s" : "base", c,
				 r);
			if (!c)
				snprintf(j->id, sizeof(j->id), "%.40s-base-r%u", id, r);
		}
}

static int plan(struct sweep *S, unsigned rounds)
{
	struct pv_sweep_result *res = S->res;

	for (size_t i = 0; i < res->nsettings; i++) {
		const struct pv_sweep_setting *s = &res->settings[i];

		if (s->command)
			pv_env_plan_add(&res->dry,
					"setting %zu: run '%s' on the server before its jobs, "
					"'%s' after each",
					i + 1, s->apply, s->revert);
		else
			pv_env_plan_add(&res->dry,
					"setting %zu: '%s = %s' (a %s parameter, checked by "
					"the server's testparm) set with net conf on %s%s, "
					"put back after each of its jobs",
					i + 1, s->param, s->value,
					s->scope == PV_SAMBA_GLOBAL ? "global" : "share",
					s->nsec == 1 ? "" : "the lab's shares from ",
					s->prev[0].section);
	}
	pv_env_plan_add(&res->dry,
			"%u rounds, each the baseline then every setting in turn: %zu %s "
			"jobs, their results in %s/%s-*",
			rounds, res->planned, res->run ? "run" : "copy",
			S->env->pb->controller.results, res->id);
	pv_env_plan_add(&res->dry,
			"the server's testparm -s compared byte for byte before and after");
	return PV_OK;
}

/* Every setting still applied put back; what was said into res->put_back. */
static int put_back_all(struct sweep *S, bool said)
{
	struct pv_sweep_result *res = S->res;
	int r = PV_OK;

	for (size_t i = 0; i < res->nsettings; i++) {
		struct pv_sweep_setting *s = &res->settings[i];
		size_t o = strlen(res->put_back);
		int rr;

		if (!s->applied)
			continue;
		rr = revert(S, s);
		if (said && o < sizeof(res->put_back) - 1)
			snprintf(res->put_back + o, sizeof(res->put_back) - o, "%s'%s' %s",
				 o ? "; " : "", s->label,
				 rr == PV_OK ? "put back" : "NOT put back");
		if (rr != PV_OK && r == PV_OK)
			r = rr;
	}
	return r;
}

static void first_diff(const struct pv_buf *a, const struct pv_buf *b, char *out, size_t len)
{
	size_t i = 0, start = 0;

	while (i < a->len && i < b->len && a->data[i] == b->data[i]) {
		if (a->data[i] == '\n')
			start = i + 1;
		i++;
	}
	{
		const char *e = memchr(b->data + start, '\n', b->len - start);

		snprintf(out, len, "now: '%.*s'",
			 (int)(e ? e - (b->data + start) : (long)(b->len - start)),
			 b->data + start);
	}
}

static int setup(struct sweep *S, unsigned *rounds)
{
	const struct pv_playbook *pb = S->env->pb;
	const struct pv_sweep_opts *o = S->o;
	struct pv_sweep_result *res = S->res;
	struct pv_playbook_roster_user u;
	size_t ci = 0;
	int r;

	*rounds = o->repeat ? o->repeat : 3;
	if (*rounds > PV_SWEEP_REPEAT_MAX)
		return pv_error(PV_EUSAGE, "--repeat is 1 to %d", PV_SWEEP_REPEAT_MAX);
	if (!pb->has_server || !pb->nclients || !pb->has_controller || !pb->controller.results)
		return pv_error(PV_ECONFIG, "sweep needs the playbook's server, a client and "
					    "controller.results");
	if ((r = parse(o, res)) != PV_OK)
		return r;
	res->run = o->run;
	res->planned = (size_t)*rounds * (res->nsettings + 1);
	if (o->run && pb->controller.host.name)
		return pv_error(PV_ECONFIG,
				"sweep run reads each run's folder back here: it needs "
				"the controller to be this machine (no controller.host)");
	for (ci = 0; o->copy.client && ci < pb->nclients; ci++)
		if (!strcmp(pb->clients[ci].name, o->copy.client))
			break;
	if (ci == pb->nclients)
		return pv_error(PV_ECONFIG, "--client '%s' is not one of the playbook's clients",
				o->copy.client);
	if ((r = pv_playbook_roster_user(pb, ci, o->copy.user ? o->copy.user : 1, &u)) != PV_OK)
		return r;
	snprintf(S->user, sizeof(S->user), "%s\\%s", pb->domain.netbios, u.name);
	snprintf(S->home, sizeof(S->home), "%s", u.name);
	if (!(res->jobs = calloc(res->planned, sizeof(*res->jobs))))
		return pv_error(PV_EIO, "out of memory");
	if (o->id) {
		snprintf(res->id, sizeof(res->id), "%s", o->id);
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(res->id, sizeof(res->id), "sweep-%Y%m%d-%H%M%S", &tm);
	}
	ids(res, res->id, *rounds);
	if ((r = pv_env_host_connect(&pb->server.host, &S->srv)) != PV_OK)
		return r;
	if ((r = check(S)) != PV_OK)
		return r;
	if (!o->run) {
		bool had;
		const char *share = o->copy.share ? o->copy.share : u.share_name;

		if ((r = pv_samba_setting_get(S->srv, share, "path", &had, S->share_path,
					      sizeof(S->share_path))) != PV_OK)
			return r;
		if (!had)
			return pv_error(PV_ECONFIG,
					"the share '%s' is not in the server's registry "
					"configuration: sweep copies into a share "
					"'provision server' made",
					share);
	}
	return PV_OK;
}

int pv_sweep(const struct pv_env *env, const struct pv_sweep_opts *o, struct pv_sweep_result *res)
{
	struct sweep S = {env, o, res};
	struct pv_buf before = PV_BUF_INIT, after = PV_BUF_INIT, undo = PV_BUF_INIT;
	struct pv_progress prog;
	unsigned rounds = 0;
	char name[64], why[1024] = "";
	int r, r2;

	memset(res, 0, sizeof(*res));
	if ((r = setup(&S, &rounds)) != PV_OK)
		goto out;
	if (env->dry_run) {
		r = plan(&S, rounds);
		goto out;
	}
	/* the configuration in effect, and what would undo every setting, before any change */
	if ((r = pv_samba_effective(S.srv, &before)) != PV_OK)
		goto out;
	res->checked_config = true;
	if (env->pb->controller.host.name &&
	    (r = pv_env_host_connect(&env->pb->controller.host, &S.ctl)) != PV_OK)
		goto out;
	if (!(S.sink = calloc(1, sizeof(*S.sink)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_run_sink_open(S.sink, S.ctl, env->pb->controller.results, res->id,
				  o->id != NULL, name)) != PV_OK) {
		free(S.sink);
		S.sink = NULL;
		goto out;
	}
	snprintf(res->id, sizeof(res->id), "%s", name);
	snprintf(res->folder, sizeof(res->folder), "%s", S.sink->path);
	pv_buf_addstr(&undo, "# what `provision sweep` would put back on the server, should it be "
			     "cut short without doing so\n");
	for (size_t i = 0; i < res->nsettings; i++)
		undo_text(&res->settings[i], &undo);
	if (pv_buf_failed(&undo) ||
	    (r = pv_run_sink_write(S.sink, "", "revert.txt", undo.data, undo.len, true)) != PV_OK) {
		r = r != PV_OK ? r : pv_error(PV_EIO, "out of memory");
		goto out;
	}
	pv_progress_start(&prog, "sweep", "jobs", res->njobs);
	for (size_t i = 0; i < res->njobs && r == PV_OK; i++) {
		struct pv_sweep_job *j = &res->jobs[i];
		struct pv_sweep_setting *s = j->cond ? &res->settings[j->cond - 1] : NULL;
		double t = pv_now();

		pv_log(PV_LOG_INFO, "sweep: round %u, %s (job %zu of %zu)", j->round,
		       s ? s->label : "baseline", i + 1, res->njobs);
		if (s && (r = apply(&S, s)) != PV_OK)
			break;
		j->apply_s = s ? pv_now() - t : 0;
		j->code = o->run ? one_run(&S, j) : one_copy(&S, j);
		if (j->code != PV_OK)
			snprintf(j->msg, sizeof(j->msg), "%s", pv_errmsg());
		t = pv_now();
		if (s && (r = revert(&S, s)) != PV_OK)
			break;
		j->revert_s = s ? pv_now() - t : 0;
		if (s && (j->code != PV_OK || pv_env_stopped(env))) /* cut short: say so */
			snprintf(res->put_back, sizeof(res->put_back), "'%s' put back", s->label);
		res->apply_max = fmax(res->apply_max, j->apply_s);
		res->revert_max = fmax(res->revert_max, j->revert_s);
		pv_progress_update(&prog, i + 1);
		if (j->code != PV_OK) {
			r = pv_error(j->code, "sweep: job %s (%s, round %u): %s", j->id,
				     s ? s->label : "baseline", j->round, j->msg);
			break;
		}
		if (pv_env_stopped(env))
			r = pv_error(PV_ESTOPPED, "sweep: stopped after job %zu of %zu", i + 1,
				     res->njobs);
	}
	pv_progress_end(&prog);
out:
	snprintf(why, sizeof(why), "%s", r != PV_OK ? pv_errmsg() : "");
	if (S.srv || res->nsettings) {
		bool cut = r != PV_OK;

		for (size_t i = 0; i < res->nsettings && !S.srv; i++)
			if (res->settings[i].applied)
				pv_env_host_connect(&env->pb->server.host, &S.srv);
		if ((r2 = put_back_all(&S, cut)) != PV_OK && r == PV_OK) {
			r = r2;
			snprintf(why, sizeof(why), "%s", pv_errmsg());
		}
	}
	if (res->checked_config && S.srv) {
		if ((r2 = pv_samba_effective(S.srv, &after)) == PV_OK) {
			res->config_same = before.len == after.len &&
					   !memcmp(before.data, after.data, before.len);
			if (!res->config_same) {
				first_diff(&before, &after, res->config_diff,
					   sizeof(res->config_diff));
				if (r == PV_OK) {
					r = pv_error(
						PV_EREMOTE,
						"sweep: the server's configuration (testparm -s) "
						"is not as it was before the sweep (%s); see "
						"%s/revert.txt",
						res->config_diff, res->folder);
					snprintf(why, sizeof(why), "%s", pv_errmsg());
				}
			}
		} else if (r == PV_OK) {
			r = r2;
			snprintf(why, sizeof(why), "%s", pv_errmsg());
		}
	}
	pv_sweep_judge(res);
	if (S.sink) {
		write_json(&S);
		res->sink = S.sink; /* kept for pv_sweep_write, with its connection */
		res->ctl = S.ctl;
		S.ctl = NULL;
	}
	pv_remote_free(S.srv);
	pv_remote_free(S.ctl);
	pv_buf_release(&before, 0);
	pv_buf_release(&after, 0);
	pv_buf_release(&undo, 0);
	if (r != PV_OK && why[0])
		return pv_error(r, "%s", why);
	return r;
}

void pv_sweep_release(struct pv_sweep_result *res)
{
	if (res->sink) {
		pv_run_sink_close(res->sink);
		free(res->sink);
	}
	pv_remote_free(res->ctl);
	free(res->jobs);
	pv_env_plan_release(&res->dry);
	memset(res, 0, sizeof(*res));
}
