/* report/settings.c: report.html's settings and versions (the run's, the hosts', the server's
 * configuration as testparm gave it, the scenarios') and its errors. */
#include "report/internal.h"

#include <stdio.h>
#include <string.h>

/* "4.17.12-Debian" from what the server said ("Version 4.17.12-Debian;Linux 6.1.0"), and
 * the kernel. */
static void versions(const char *said, char *samba, size_t scap, char *kernel, size_t kcap)
{
	const char *v = strstr(said, "Version "), *semi = strchr(said, ';');

	snprintf(samba, scap, "%s", NOT_RECORDED);
	snprintf(kernel, kcap, "%s", NOT_RECORDED);
	if (v)
		snprintf(samba, scap, "%.*s", (int)strcspn(v + 8, ";"), v + 8);
	if (semi)
		snprintf(kernel, kcap, "%s", semi + 1);
	else if (said[0] && !v)
		snprintf(kernel, kcap, "%s", said);
}

/* A [global] setting of the server's configuration as testparm gave it (the last one
 * named key, its case aside). */
static void config_value(const char *conf, const char *key, char *out, size_t cap)
{
	struct pv_results_setting s = {"global", NULL, NULL, 6, 0, 0};
	size_t pos = 0, klen = strlen(key);

	if (!conf) {
		snprintf(out, cap, "%s", NOT_RECORDED);
		return;
	}
	snprintf(out, cap, "not set: Samba's default");
	while (pv_results_config_next(conf, &pos, &s))
		if (s.nsection == 6 && !strncmp(s.section, "global", 6) && (size_t)s.nkey == klen &&
		    !strncasecmp(s.key, key, klen))
			snprintf(out, cap, "%.*s", s.nvalue, s.value);
}

static void row(struct pv_buf *b, const char *key, const char *value)
{
	pv_buf_addstr(b, "<tr><th scope=\"row\">");
	pv_escape_xml(b, key);
	pv_buf_addstr(b, "</th><td class=\"l\">");
	pv_escape_xml(b, value && value[0] ? value : NOT_RECORDED);
	pv_buf_addstr(b, "</td></tr>\n");
}

void pv_report_settings(struct pv_buf *b, const struct pv_results_run *run)
{
	char v[512], samba[400], kernel[400];
	const struct pv_results_host_info *srv = NULL;

	for (size_t i = 0; i < run->nhosts; i++)
		if (!strcmp(run->hosts[i].role, "server"))
			srv = &run->hosts[i];
	versions(srv ? srv->version : "", samba, sizeof(samba), kernel, sizeof(kernel));
	pv_buf_addstr(b,
		      "<h2 id=\"settings\">Settings and versions</h2>\n<div class=\"tw\"><table>\n"
		      "<caption>The run</caption>\n<tbody>\n");
	row(b, "run id", run->id);
	row(b, "provision", run->provision);
	row(b, "playbook", run->playbook);
	row(b, "playbook SHA-256", run->sha256);
	snprintf(v, sizeof(v), "%s: %u to %u users by %u, %u s per step after %u s of warm-up",
		 run->driver, run->min_users, run->max_users, run->step_users, run->duration,
		 run->warmup);
	row(b, "driver", v);
	if (run->client_command[0])
		row(b, "client command", run->client_command);
	if (run->controller_command[0])
		row(b, "controller command", run->controller_command);
	if (run->watch_interval)
		snprintf(v, sizeof(v), "every %u s%s%s", run->watch_interval,
			 run->watch_error[0] ? "; failed: " : "", run->watch_error);
	else
		snprintf(v, sizeof(v), "not watched");
	row(b, "server watch", v);
	row(b, "Samba version (server)", samba);
	row(b, "kernel (server)", kernel);
	config_value(run->server_config, "server max protocol", v, sizeof(v));
	row(b, "dialect: server max protocol", v);
	config_value(run->server_config, "server min protocol", v, sizeof(v));
	row(b, "dialect: server min protocol", v);
	config_value(run->server_config, "server signing", v, sizeof(v));
	row(b, "signing: server signing", v);
	config_value(run->server_config, "server smb encrypt", v, sizeof(v));
	if (strstr(v, "default") && run->server_config)
		config_value(run->server_config, "smb encrypt", v, sizeof(v));
	row(b, "encryption: server smb encrypt", v);
	if (run->has_load) {
		snprintf(v, sizeof(v),
			 "%u scenarios per user-hour; late after %g s; a step counts at overload "
			 "<= %g%%; figures every %u s; seed %llu; %s; event loops per client: %s",
			 run->cfg.rate, run->cfg.late, run->cfg.overload, run->cfg.interval,
			 (unsigned long long)run->cfg.seed,
			 run->cfg.keep_logged_on ? "users stay logged on into the next step"
						 : "every step logs its users on anew",
			 run->cfg.threads ? "" : "one per core");
		if (run->cfg.threads)
			snprintf(v + strlen(v), sizeof(v) - strlen(v), "%u", run->cfg.threads);
		row(b, "load", v);
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	pv_buf_addstr(b, "<div class=\"tw\"><table>\n<caption>The hosts</caption>\n<thead><tr><th "
			 "scope=\"col\" "
			 "class=\"l\">name</th><th scope=\"col\" class=\"l\">role</th>"
			 "<th scope=\"col\" class=\"l\">address</th><th scope=\"col\" "
			 "class=\"l\">system (as it said)</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < run->nhosts; i++) {
		const struct pv_results_host_info *h = &run->hosts[i];

		pv_buf_addstr(b, "<tr><th scope=\"row\">");
		pv_escape_xml(b, h->name);
		pv_buf_addstr(b, "</th><td class=\"l\">");
		pv_escape_xml(b, h->role);
		pv_buf_addstr(b, "</td><td class=\"l\">");
		pv_escape_xml(b, h->address[0] ? h->address : "-");
		pv_buf_addstr(b, "</td><td class=\"l\">");
		pv_escape_xml(b, h->version[0] ? h->version : NOT_RECORDED);
		pv_buf_addstr(b, "</td></tr>\n");
	}
	pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	if (run->has_load) {
		pv_buf_addstr(
			b,
			"<div class=\"tw\"><table>\n<caption>Scenarios</caption>\n<thead><tr><th "
			"scope=\"col\" class=\"l\">kind</th><th scope=\"col\">weight</th>"
			"<th scope=\"col\">limit s</th></tr></thead>\n<tbody>\n");
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			pv_buf_addf(b, "<tr><th scope=\"row\">%s</th><td>%g</td><td>%g</td></tr>\n",
				    pv_playbook_workload_names[k], run->cfg.kind[k].weight,
				    run->cfg.kind[k].limit);
		pv_buf_addstr(b, "</tbody>\n</table></div>\n");
	}
	pv_buf_addstr(b, "<h3>The server's configuration at run time (testparm -s)</h3>\n");
	if (run->server_config) {
		pv_buf_addstr(b, "<details><summary>show</summary>\n<pre>");
		pv_escape_xml(b, run->server_config);
		pv_buf_addstr(b, "</pre></details>\n");
	} else {
		pv_report_na(b, "The server's configuration: " NOT_RECORDED ".");
	}
}

void pv_report_errors(struct pv_buf *b, const struct pv_results_run *run)
{
	unsigned shown = 0, total = 0;

	pv_buf_addstr(b, "<h2 id=\"errors\">Errors</h2>\n");
	if (run->has_load) {
		bool any = false;

		for (size_t i = 0; i < run->nsteps; i++)
			any |= run->steps[i].load.all.n.errors || run->steps[i].load.failed ||
			       run->steps[i].load.lost || run->steps[i].load.logon_n.failed ||
			       run->steps[i].load.all.n.unserved;
		if (any) {
			pv_buf_addstr(
				b,
				"<div class=\"tw\"><table>\n<caption>Scenarios that ended in "
				"an error, users "
				"not logged on (their logons, their scenarios unserved), clients "
				"lost</caption>\n<thead><tr><th "
				"scope=\"col\">users</th><th scope=\"col\">errors</th>"
				"<th scope=\"col\" class=\"l\">by kind</th><th "
				"scope=\"col\">not logged on</th><th scope=\"col\">logons "
				"failed (tried again)</th><th scope=\"col\">unserved</th><th "
				"scope=\"col\">clients lost</th></tr></thead>\n<tbody>\n");
			for (size_t i = 0; i < run->nsteps; i++) {
				const struct pv_results_step *st = &run->steps[i];
				bool first = true;

				if (!st->load.all.n.errors && !st->load.failed && !st->load.lost &&
				    !st->load.logon_n.failed && !st->load.all.n.unserved)
					continue;
				pv_buf_addf(b,
					    "<tr><th scope=\"row\">%u</th><td>%llu</td><td "
					    "class=\"l\">",
					    st->users, (unsigned long long)st->load.all.n.errors);
				for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
					if (st->load.kind[k].n.errors) {
						pv_buf_addf(b, "%s%s %llu", first ? "" : ", ",
							    pv_playbook_workload_names[k],
							    (unsigned long long)st->load.kind[k]
								    .n.errors);
						first = false;
					}
				pv_buf_addf(b,
					    "</td><td>%u</td><td>%llu "
					    "(%llu)</td><td>%llu</td><td>%u</td></tr>\n",
					    st->load.failed,
					    (unsigned long long)st->load.logon_n.failed,
					    (unsigned long long)st->load.logon_n.retries,
					    (unsigned long long)st->load.all.n.unserved,
					    st->load.lost);
			}
			pv_buf_addstr(b, "</tbody>\n</table></div>\n");
		}
	}
	pv_buf_addstr(b, "<ul>\n");
	if (run->error[0]) {
		pv_buf_addstr(b, "<li>the run: ");
		pv_escape_xml(b, run->error);
		pv_buf_addstr(b, "</li>\n");
		shown++;
	}
	if (run->watch_error[0]) {
		pv_buf_addstr(b, "<li>the server watch: ");
		pv_escape_xml(b, run->watch_error);
		pv_buf_addstr(b, "</li>\n");
		shown++;
	}
	for (size_t i = 0; i < run->nsteps; i++) {
		const struct pv_results_step *st = &run->steps[i];

		if (st->ready_error[0]) {
			total++;
			if (shown < 12) {
				pv_buf_addf(b, "<li>step %u, a logon: ", st->n);
				pv_escape_xml(b, st->ready_error);
				pv_buf_addstr(b, "</li>\n");
				shown++;
			}
		}
		for (size_t j = 0; j < st->nhosts; j++) {
			const struct pv_results_host *h = &st->hosts[j];

			if (!h->error[0] && (!h->said[0] || !strcmp(h->state, "done")))
				continue;
			total++;
			if (shown >= 12)
				continue;
			pv_buf_addf(b, "<li>step %u, ", st->n);
			pv_escape_xml(b, h->name);
			pv_buf_addstr(b, " (");
			pv_escape_xml(b, h->state);
			pv_buf_addstr(b, "): ");
			pv_escape_xml(b, h->error[0] ? h->error : h->said);
			if (h->error[0] && h->said[0]) {
				pv_buf_addstr(b, "; its stderr began: ");
				pv_escape_xml(b, h->said);
			}
			pv_buf_addstr(b, "</li>\n");
			shown++;
		}
	}
	if (!shown)
		pv_buf_addstr(b, "<li>No error was recorded.</li>\n");
	pv_buf_addstr(b, "</ul>\n");
	if (total > 12)
		pv_buf_addf(b,
			    "<p>The first 12 of %u messages; the others are in the steps' "
			    "folders (step-NN/&lt;host&gt;/stderr) and manifest.json.</p>\n",
			    total);
	if (run->notes) {
		pv_buf_addstr(b, "<h3>What this page could not read</h3>\n<pre>");
		pv_escape_xml(b, run->notes);
		pv_buf_addstr(b, "</pre>\n");
	}
}
