/* run/render.c: the ramp, the command driver's templates, FSCT's command lines (see
 * render.h). */
#include "run/render.h"

#include "playbooks/names.h"
#include "remote/quote.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned pv_ramp_share(unsigned total, size_t n, size_t i)
{
	return n ? (unsigned)(total / n + (i < total % n ? 1 : 0)) : 0;
}

int pv_ramp_plan(const struct pv_playbook *pb, struct pv_ramp *out)
{
	const struct pv_driver *d = &pb->driver;
	unsigned long most = (unsigned long)pb->users.per_client * pb->nclients;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (!d->min_users || !d->max_users || !d->step || !d->duration)
		return pv_error(PV_ECONFIG, "the run has no ramp: set driver.min_users, "
					    "driver.max_users, driver.step and driver.duration (or "
					    "--min-users, --max-users, --step, --duration)");
	if (d->min_users > d->max_users)
		return pv_error(PV_ECONFIG,
				"driver.min_users (%u) is more than driver.max_users (%u)",
				d->min_users, d->max_users);
	if (pb->nclients == 0)
		return pv_error(PV_ECONFIG, "the playbook has no clients to run the load on");
	if (d->max_users > most)
		return pv_error(PV_ECONFIG,
				"driver.max_users is %u, but prepare makes %lu users (%u per "
				"client on %zu clients); lower max_users or raise "
				"users.per_client and prepare again",
				d->max_users, most, pb->users.per_client, pb->nclients);
	if (d->min_users < pb->nclients)
		return pv_error(PV_ECONFIG,
				"driver.min_users is %u, fewer than the %zu clients: every "
				"client carries at least one user",
				d->min_users, pb->nclients);
	for (unsigned long u = d->min_users; u < d->max_users; u += d->step)
		n++;
	n++; /* max_users itself */
	if (!(out->totals = calloc(n, sizeof(*out->totals))))
		return pv_error(PV_EIO, "out of memory");
	n = 0;
	for (unsigned long u = d->min_users; u < d->max_users; u += d->step)
		out->totals[n++] = (unsigned)u;
	out->totals[n++] = d->max_users;
	out->n = n;
	return PV_OK;
}

void pv_ramp_release(struct pv_ramp *r)
{
	free(r->totals);
	r->totals = NULL;
	r->n = 0;
}

/* A template with {n} left in it: {server} (and {client}) filled, {n} kept for the command. */
static int keep_n(const struct pv_playbook *pb, const char *tmpl, const char *client, char *out,
		  size_t len)
{
	size_t o = 0;

	for (const char *p = tmpl; *p; p++) {
		const char *v = NULL;
		size_t skip = 0;

		if (!strncmp(p, "{server}", 8)) {
			v = pb->has_server ? pb->server.host.name : "";
			skip = 8;
		} else if (!strncmp(p, "{client}", 8)) {
			v = client ? client : "";
			skip = 8;
		}
		if (v) {
			size_t l = strlen(v);

			if (o + l >= len)
				return -1;
			memcpy(out + o, v, l);
			o += l;
			p += skip - 1;
		} else {
			if (o + 1 >= len)
				return -1;
			out[o++] = *p;
		}
	}
	out[o] = '\0';
	return 0;
}

int pv_driver_render(const struct pv_playbook *pb, const char *tmpl, const struct pv_driver_vars *v,
		     struct pv_buf *out, bool *uses_password)
{
	char num[32], a[PV_NAME_MAX], u[PV_NAME_MAX],
		first[PV_NAME_MAX] = "", last[PV_NAME_MAX] = "", share[PV_NAME_MAX] = "";
	const struct pv_host *client =
		v->client && *v->client ? pv_playbook_client(pb, v->client) : NULL;

	if (uses_password)
		*uses_password = false;
	if (keep_n(pb, pb->server.alias_template ? pb->server.alias_template : "", NULL, a,
		   sizeof(a)) < 0 ||
	    keep_n(pb, pb->users.name_template, v->client, u, sizeof(u)) < 0)
		return pv_error(PV_ECONFIG, "a name template is too long");
	if (client && v->users) {
		if (pv_user_name(pb, client, 1, first) != PV_OK ||
		    pv_user_name(pb, client, v->users, last) != PV_OK)
			return PV_ECONFIG;
	}
	if (pb->has_server && pb->server.shares && pv_share_name(pb, 1, share) != PV_OK)
		return PV_ECONFIG;
	for (const char *p = tmpl; *p;) {
		const char *close, *val = NULL;
		size_t len;

		/* {word} of [a-z_] is a placeholder; any other brace is the shell's: ${X}, { a; }
		 */
		len = *p == '{' ? strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_") : 0;
		close = len ? p + 1 + len : NULL;
		if (!close || *close != '}') {
			pv_buf_add(out, p, 1);
			p++;
			continue;
		}
#define IS(w)  (len == strlen(w) && !strncmp(p + 1, w, len))
#define NUM(x) (snprintf(num, sizeof(num), "%lld", (long long)(x)), num)
		if (IS("client"))
			val = v->client ? v->client : "";
		else if (IS("users"))
			val = NUM(v->users);
		else if (IS("users_total"))
			val = NUM(v->users_total);
		else if (IS("step"))
			val = NUM(v->step);
		else if (IS("steps"))
			val = NUM(v->steps);
		else if (IS("duration"))
			val = NUM(v->duration);
		else if (IS("warmup"))
			val = NUM(v->warmup);
		else if (IS("results"))
			val = v->results ? v->results : "";
		else if (IS("password_file")) {
			val = v->password_file ? v->password_file : "";
			if (uses_password)
				*uses_password = true;
		} else if (IS("clients"))
			val = v->clients ? v->clients : "";
		else if (IS("server"))
			val = pb->has_server ? pb->server.host.name : "";
		else if (IS("server_address"))
			val = pb->has_server && pb->server.host.address ? pb->server.host.address
									: "";
		else if (IS("alias_template"))
			val = a;
		else if (IS("user_template"))
			val = u;
		else if (IS("first_user"))
			val = first;
		else if (IS("last_user"))
			val = last;
		else if (IS("share"))
			val = share;
		else if (IS("shares"))
			val = NUM(pb->has_server ? pb->server.shares : 0);
		else if (IS("domain"))
			val = pb->domain.netbios;
		else if (IS("realm"))
			val = pb->domain.realm;
		else if (IS("dns_domain"))
			val = pb->domain.dns_domain;
		else if (IS("lab"))
			val = pb->lab;
		else if (IS("n")) /* a user number for the command's own loop: left as it is */
			val = "{n}";
#undef IS
#undef NUM
		if (!val)
			return pv_error(PV_ECONFIG,
					"driver template '%s': '{%.*s}' is not a placeholder; "
					"known: {client} {users} {users_total} {step} "
					"{steps} {duration} {warmup} {results} "
					"{password_file} {clients} {server} "
					"{server_address} {alias_template} {user_template} "
					"{first_user} {last_user} {share} {shares} {domain} "
					"{realm} {dns_domain} {lab}",
					tmpl, (int)len, p + 1);
		pv_buf_addstr(out, val);
		p = close + 1;
	}
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* "& 'PATH' run ..." with the password read from the session's stdin first */
static int fsct_start(const struct pv_playbook *pb, struct pv_buf *out, const char *role)
{
	int r;

	pv_buf_addstr(out, "$pw = [Console]::In.ReadLine(); & ");
	if ((r = pv_remote_quote_ps(out, pb->driver.fsct_path)) != PV_OK)
		return pv_error_prefix(r, "driver.fsct.path");
	pv_buf_addf(out, " run %s", role);
	return PV_OK;
}

static int ps_arg(struct pv_buf *out, const char *flag, const char *value)
{
	int r;

	pv_buf_addf(out, " /%s ", flag);
	if ((r = pv_remote_quote_ps(out, value)) != PV_OK)
		return pv_error_prefix(r, "/%s", flag);
	return PV_OK;
}

int pv_fsct_client(const struct pv_playbook *pb, const char *controller, struct pv_buf *out)
{
	int r;

	if ((r = fsct_start(pb, out, "client")) || (r = ps_arg(out, "controller", controller)) ||
	    (r = ps_arg(out, "server", pb->server.host.name)))
		return r;
	pv_buf_addstr(out, " /password $pw");
	if ((r = ps_arg(out, "domain", pb->domain.dns_domain)))
		return r;
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_fsct_controller(const struct pv_playbook *pb, struct pv_buf *out)
{
	const struct pv_driver *d = &pb->driver;
	struct pv_buf list = PV_BUF_INIT, vol = PV_BUF_INIT;
	char share[PV_NAME_MAX];
	int r;

	for (size_t i = 0; i < pb->nclients; i++)
		pv_buf_addf(&list, "%s%s", i ? "," : "", pb->clients[i].name);
	if ((r = pv_share_name(pb, 1, share)) != PV_OK)
		goto out;
	/* a third-party server's volume is its share, in UNC form (FSCT's /volumes) */
	pv_buf_addf(&vol, "\\\\%s\\%s", pb->server.host.name, share);
	if ((r = fsct_start(pb, out, "controller")) ||
	    (r = ps_arg(out, "server", pb->server.host.name)))
		goto out;
	pv_buf_addstr(out, " /password $pw");
	if ((r = ps_arg(out, "volumes", vol.data ? vol.data : "")) ||
	    (r = ps_arg(out, "clients", list.data ? list.data : "")))
		goto out;
	pv_buf_addf(out, " /min_users %u /max_users %u /step %u /duration %d", d->min_users,
		    d->max_users, d->step, d->duration);
	r = ps_arg(out, "workload", d->fsct_workload);
	if (r == PV_OK && pv_buf_failed(out))
		r = pv_error(PV_EIO, "out of memory");
out:
	pv_buf_release(&list, 0);
	pv_buf_release(&vol, 0);
	return r;
}
