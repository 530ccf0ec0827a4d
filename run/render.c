/* run/render.c: the ramp, the command driver's templates, FSCT's command lines (see
 * render.h). */
#include "run/render.h"

#include "playbooks/names.h"
#include "playbooks/roster.h"
#include "remote/quote.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned pv_run_ramp_share(unsigned total, size_t n, size_t i)
{
	return n ? (unsigned)(total / n + (i < total % n ? 1 : 0)) : 0;
}

int pv_run_ramp_plan(const struct pv_playbook *pb, struct pv_run_ramp *out)
{
	const struct pv_playbook_driver *d = &pb->driver;
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

void pv_run_ramp_release(struct pv_run_ramp *r)
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

/* ---- filling the command driver's templates in ---- */

/* How sh reads the template at a point: the quoting there, inside any number of $( ), ` `
 * and ( ) (each starts unquoted again). Enough of sh's grammar to know where a placeholder
 * lands: quotes, backslashes, command substitution, subshells and comments. */
enum quoting { Q_NONE, Q_SINGLE, Q_DOUBLE };
enum frame_kind { F_TOP, F_DOLLAR, F_BACKTICK };
#define FRAMES_MAX 32

struct shell {
	struct {
		enum quoting q;
		enum frame_kind kind;
		unsigned parens; /* ( ) open inside this frame, unquoted */
	} f[FRAMES_MAX];
	int depth; /* f[depth] is the innermost frame */
};

static void frame_push(struct shell *sh, enum frame_kind kind)
{
	if (sh->depth + 1 < FRAMES_MAX) {
		sh->depth++;
		sh->f[sh->depth].q = Q_NONE;
		sh->f[sh->depth].kind = kind;
		sh->f[sh->depth].parens = 0;
	}
}

/* Read the template from p (not a placeholder) up to the next character to look at. */
static const char *shell_step(struct shell *sh, const char *p, const char *start)
{
	enum quoting *q = &sh->f[sh->depth].q;
	char c = *p;

	if (*q == Q_SINGLE) {
		if (c == '\'')
			*q = Q_NONE;
		return p + 1;
	}
	/* a backslash takes the next character as it is (in double quotes, only $ ` " \ and a
	 * line break): so \{word} stays text, as the shell would read it */
	if (c == '\\' && p[1] && (*q == Q_NONE || strchr("$`\"\\\n", p[1])))
		return p + 2;
	if (c == '$' && p[1] == '(') {
		frame_push(sh, F_DOLLAR);
		return p + 2;
	}
	if (c == '`') {
		if (sh->f[sh->depth].kind == F_BACKTICK && sh->depth > 0)
			sh->depth--;
		else
			frame_push(sh, F_BACKTICK);
		return p + 1;
	}
	if (*q == Q_DOUBLE) {
		if (c == '"')
			*q = Q_NONE;
		return p + 1;
	}
	switch (c) {
	case '\'':
		*q = Q_SINGLE;
		break;
	case '"':
		*q = Q_DOUBLE;
		break;
	case '(':
		sh->f[sh->depth].parens++;
		break;
	case ')':
		if (sh->f[sh->depth].parens)
			sh->f[sh->depth].parens--;
		else if (sh->f[sh->depth].kind == F_DOLLAR && sh->depth > 0)
			sh->depth--;
		break;
	case '#': /* a comment, where a word starts: to the end of the line */
		if (p == start || strchr(" \t\n;&|(", p[-1]))
			return p + strcspn(p, "\n");
		break;
	}
	return p + 1;
}

/* val quoted for q: unquoted, it is single-quoted ('\'' for a quote in it); in double quotes,
 * $ ` " \ get a backslash; in single quotes, a quote in it closes them, is escaped and opens
 * them again. */
static void quote_for(struct pv_buf *out, enum quoting q, const char *val)
{
	if (q == Q_NONE) {
		pv_remote_quote(out, val);
		return;
	}
	for (const char *v = val; *v; v++) {
		if (q == Q_DOUBLE && strchr("$`\"\\", *v))
			pv_buf_add(out, "\\", 1);
		if (q == Q_SINGLE && *v == '\'')
			pv_buf_addstr(out, "'\\''");
		else
			pv_buf_add(out, v, 1);
	}
}

/* val into out so that the shell reads it back as exactly val where the template put it:
 * quoted for the innermost frame, then, for each ` ` around it (innermost first), with a
 * backslash before every \ ` and $ (which is how sh reads the text between backquotes). */
static void put_quoted(struct pv_buf *out, const struct shell *sh, const char *val)
{
	struct pv_buf a = PV_BUF_INIT, b = PV_BUF_INIT;

	quote_for(&a, sh->f[sh->depth].q, val);
	for (int d = sh->depth; d > 0 && a.data; d--) {
		if (sh->f[d].kind != F_BACKTICK)
			continue;
		pv_buf_reset(&b);
		for (size_t i = 0; i < a.len; i++) {
			if (strchr("\\`$", a.data[i]))
				pv_buf_add(&b, "\\", 1);
			pv_buf_add(&b, a.data + i, 1);
		}
		pv_buf_reset(&a);
		pv_buf_add(&a, b.data ? b.data : "", b.len);
		if (pv_buf_failed(&b))
			a.failed = true;
	}
	if (pv_buf_failed(&a))
		out->failed = true;
	else
		pv_buf_add(out, a.data ? a.data : "", a.len);
	pv_buf_release(&a, 0);
	pv_buf_release(&b, 0);
}

/* What the template's names stand for, worked out once per rendering. */
struct names {
	const struct pv_playbook *pb;
	const struct pv_run_driver_vars *v;
	char a[PV_PLAYBOOK_NAME_MAX], u[PV_PLAYBOOK_NAME_MAX], first[PV_PLAYBOOK_NAME_MAX],
		last[PV_PLAYBOOK_NAME_MAX], share[PV_PLAYBOOK_NAME_MAX];
};

static int names_init(struct names *nm, const struct pv_playbook *pb,
		      const struct pv_run_driver_vars *v)
{
	const struct pv_playbook_host *client =
		v->client && *v->client ? pv_playbook_client(pb, v->client) : NULL;

	memset(nm, 0, sizeof(*nm));
	nm->pb = pb;
	nm->v = v;
	if (keep_n(pb, pb->server.alias_template ? pb->server.alias_template : "", NULL, nm->a,
		   sizeof(nm->a)) < 0 ||
	    keep_n(pb, pb->users.name_template, v->client, nm->u, sizeof(nm->u)) < 0)
		return pv_error(PV_ECONFIG, "a name template is too long");
	if (client && v->users &&
	    (pv_playbook_user_name(pb, client, 1, nm->first) != PV_OK ||
	     pv_playbook_user_name(pb, client, v->users, nm->last) != PV_OK))
		return PV_ECONFIG;
	if (pb->has_server && pb->server.shares &&
	    pv_playbook_share_name(pb, 1, nm->share) != PV_OK)
		return PV_ECONFIG;
	return PV_OK;
}

/* A number, as text in num. */
static const char *number_of(long long x, char num[32])
{
	snprintf(num, 32, "%lld", x);
	return num;
}

/* The text placeholder ph stands for, or NULL when it is a number (num_of) or not one. */
static const char *text_of(const struct names *nm, int ph)
{
	const struct pv_playbook *pb = nm->pb;
	const struct pv_run_driver_vars *v = nm->v;

	switch (ph) {
	case PV_PLAYBOOK_PH_CLIENT:
		return v->client ? v->client : "";
	case PV_PLAYBOOK_PH_RESULTS:
		return v->results ? v->results : "";
	case PV_PLAYBOOK_PH_PASSWORD_FILE:
		return v->password_file ? v->password_file : "";
	case PV_PLAYBOOK_PH_CLIENTS:
		return v->clients ? v->clients : "";
	case PV_PLAYBOOK_PH_SERVER:
		return pb->has_server ? pb->server.host.name : "";
	case PV_PLAYBOOK_PH_SERVER_ADDRESS:
		return pb->has_server && pb->server.host.address ? pb->server.host.address : "";
	case PV_PLAYBOOK_PH_ALIAS_TEMPLATE:
		return nm->a;
	case PV_PLAYBOOK_PH_USER_TEMPLATE:
		return nm->u;
	case PV_PLAYBOOK_PH_FIRST_USER:
		return nm->first;
	case PV_PLAYBOOK_PH_LAST_USER:
		return nm->last;
	case PV_PLAYBOOK_PH_SHARE:
		return nm->share;
	case PV_PLAYBOOK_PH_DOMAIN:
		return pb->domain.netbios;
	case PV_PLAYBOOK_PH_REALM:
		return pb->domain.realm;
	case PV_PLAYBOOK_PH_DNS_DOMAIN:
		return pb->domain.dns_domain;
	case PV_PLAYBOOK_PH_LAB:
		return pb->lab;
	default:
		return NULL;
	}
}

/* The number placeholder ph stands for, into num; NULL when it is no number. {n} is left as it
 * is: a user number for the command's own loop. */
static const char *num_of(const struct names *nm, int ph, char num[32])
{
	const struct pv_run_driver_vars *v = nm->v;

	switch (ph) {
	case PV_PLAYBOOK_PH_USERS:
		return number_of(v->users, num);
	case PV_PLAYBOOK_PH_USERS_TOTAL:
		return number_of(v->users_total, num);
	case PV_PLAYBOOK_PH_STEP:
		return number_of(v->step, num);
	case PV_PLAYBOOK_PH_STEPS:
		return number_of(v->steps, num);
	case PV_PLAYBOOK_PH_DURATION:
		return number_of(v->duration, num);
	case PV_PLAYBOOK_PH_WARMUP:
		return number_of(v->warmup, num);
	case PV_PLAYBOOK_PH_SHARES:
		return number_of(nm->pb->has_server ? nm->pb->server.shares : 0, num);
	case PV_PLAYBOOK_PH_N:
		return "{n}";
	default:
		return NULL;
	}
}

int pv_run_driver_render(const struct pv_playbook *pb, const char *tmpl,
			 const struct pv_run_driver_vars *v, struct pv_buf *out,
			 bool *uses_password)
{
	struct shell sh = {.depth = 0};
	struct names nm;
	char num[32];
	int r;

	if (uses_password)
		*uses_password = false;
	if ((r = names_init(&nm, pb, v)) != PV_OK)
		return r;
	for (const char *p = tmpl; *p;) {
		size_t len = pv_playbook_placeholder_len(p);
		const char *val, *next;
		int ph;

		if (!len) {
			next = shell_step(&sh, p, tmpl);
			pv_buf_add(out, p, (size_t)(next - p));
			p = next;
			continue;
		}
		ph = pv_playbook_placeholder_of(p, len);
		if (ph == PV_PLAYBOOK_PH_PASSWORD_FILE && uses_password)
			*uses_password = true;
		if ((val = num_of(&nm, ph, num)) != NULL) {
			pv_buf_addstr(out, val);
		} else if ((val = text_of(&nm, ph)) != NULL) {
			put_quoted(out, &sh, val);
		} else { /* the playbook check refuses these: a playbook made another way */
			char known[512];

			pv_playbook_placeholder_list(known, sizeof(known));
			return pv_error(
				PV_ECONFIG,
				"driver template '%s': '%.*s' is not a placeholder; known: %s",
				tmpl, (int)len, p, known);
		}
		p += len;
	}
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_run_fsct_check(const struct pv_playbook *pb)
{
	if (!pb->has_server)
		return pv_error(PV_ECONFIG, "driver 'fsct' runs FSCT against the playbook's server "
					    "(its /server): add a 'server:' section");
	/* FSCT's controller is a Windows program its clients reach by name: the machine
	 * provision runs on (Linux) cannot be it, and 'localhost' on a client is the client */
	if (!pb->has_controller || !pb->controller.host.name)
		return pv_error(
			PV_ECONFIG,
			"driver 'fsct' needs FSCT's controller, a Windows host every client "
			"reaches by name ('fsct run client /controller NAME'), where 'fsct "
			"run controller' runs: set controller.host.name to that host's name "
			"(as the clients resolve it), with controller.host.address and "
			"controller.host.ssh for its OpenSSH for Windows");
	for (size_t i = 0; i < pb->nclients; i++)
		if (pb->clients[i].os != PV_PLAYBOOK_OS_WINDOWS)
			return pv_error(PV_ECONFIG,
					"driver 'fsct' runs FSCT's client, a Windows program, on "
					"every client; '%s' is os: linux: set its os: windows "
					"(OpenSSH for Windows), or use driver 'builtin' on Linux "
					"clients",
					pb->clients[i].name);
	return PV_OK;
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

int pv_run_fsct_client(const struct pv_playbook *pb, const char *controller, struct pv_buf *out)
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

int pv_run_fsct_controller(const struct pv_playbook *pb, struct pv_buf *out)
{
	const struct pv_playbook_driver *d = &pb->driver;
	struct pv_buf list = PV_BUF_INIT, vol = PV_BUF_INIT;
	char share[PV_PLAYBOOK_NAME_MAX];
	int r;

	for (size_t i = 0; i < pb->nclients; i++)
		pv_buf_addf(&list, "%s%s", i ? "," : "", pb->clients[i].name);
	if ((r = pv_playbook_share_name(pb, 1, share)) != PV_OK)
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

bool pv_run_ramp_over(const struct pv_load_summary *steps, size_t n, double threshold, unsigned k)
{
	if (!k || n < k)
		return false;
	for (size_t i = n - k; i < n; i++)
		if (!steps[i].users || !steps[i].all.n.started ||
		    pv_load_carried(&steps[i], threshold) || steps[i].client_bound)
			return false;
	return true;
}

unsigned pv_run_refine_next(const struct pv_load_summary *steps, size_t n, double threshold,
			    unsigned resolution, unsigned minimum)
{
	unsigned users, lo, hi, mid;
	long best = pv_load_answer(steps, n, threshold, &users);
	long over = pv_load_first_over(steps, n, threshold, best);

	/* nothing over the answer, or a step over it the clients could not carry: the server's
	 * limit is not known to lie between them */
	if (!resolution || over < 0 || steps[over].client_bound)
		return 0;
	lo = best >= 0 ? steps[best].users : 0;
	hi = steps[over].users;
	if (hi - lo <= resolution)
		return 0;
	mid = lo + (hi - lo) / 2;
	if (mid < minimum)
		mid = minimum;
	if (mid <= lo || mid >= hi)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (steps[i].users == mid) /* measured already: the answer will not move */
			return 0;
	return mid;
}
