/* provision/dc.c: `provision dc` (N users per client in the lab's OU) and `provision cleanup
 * dc` (every user of this lab, and the OU when this lab made it).
 *
 * One LDAP add per user carries the password (unicodePwd) and userAccountControl, so a user
 * is either fully made or not at all: a run killed at any point is finished by the next one.
 * A re-run costs one paged search. Adds are pipelined on one connection (ldap/ops.h). */
#include "provision/provision.h"

#include "ldap/encode.h"
#include "ldap/ops.h"
#include "playbooks/names.h"
#include "util/err.h"
#include "util/log.h"
#include "util/strset.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* LDAP operations in flight. One keeps a Samba 4.17 DC cheapest: with a second add queued it
 * spends 13-15% more CPU per add (bench/ldap-window.sh, interleaved, two runs: 38.5 vs 33.5 and
 * 59.2 vs 51.6 ms per user; at one, as ldapadd: 34.9 and 51.5), and more at 8 or 32. A second
 * one only pays when the round trip is a real part of the DC's time per add (20-40 ms with a
 * password), i.e. when the DC would otherwise wait for us: beyond RTT_FOR_TWO. */
#define RTT_FOR_TWO 0.002 /* seconds */
#define PAGE 1000
#define USERS_MAX 1000000UL /* more needs --force */
/* UF_NORMAL_ACCOUNT (0x200) | UF_DONT_EXPIRE_PASSWD (0x10000), MS-ADTS 2.2.16: enabled, and
 * the password never expires so long runs do not hit expiry. */
#define UAC "66048"

struct dc_run {
	struct pv_ctx *ctx;
	const struct pv_playbook *pb;
	const struct pv_host **clients;
	size_t nclients;
	unsigned long per_client;
	char tag[64];
	struct pv_buf unipwd;
	struct pv_dir *dir;
	struct pv_strset *ours; /* sAMAccountNames carrying this lab's tag */
	unsigned long created, present, reset, failed;
	int first_code;
	char first_msg[1024];
	struct pv_progress prog;
};

/* PROVISION_LDAP_WINDOW overrides (bench/ldap-window.sh); else 1, or 2 when a round trip to
 * the DC (the best of three base reads of the naming context) exceeds RTT_FOR_TWO. */
static int window(struct pv_dir *dir, const char *base)
{
	const char *v = getenv("PROVISION_LDAP_WINDOW");
	double rtt = 1e9;
	int w = v ? atoi(v) : 0;

	if (w >= 1 && w <= 1024)
		return w;
	for (int i = 0; i < 3; i++) {
		double t0 = pv_now();
		char *val = NULL;
		int found = 0;

		if (pv_dir_read(dir, base, "objectClass", &found, &val) != PV_OK)
			return 1;
		free(val);
		if (pv_now() - t0 < rtt)
			rtt = pv_now() - t0;
	}
	w = rtt > RTT_FOR_TWO ? 2 : 1;
	pv_log(PV_LOG_DEBUG, "LDAP round trip %.2f ms: %d operation%s in flight", rtt * 1000, w,
	       w > 1 ? "s" : "");
	return w;
}

static void record_failure(struct dc_run *run, int code, const char *msg)
{
	run->failed++;
	if (run->first_code == PV_OK) {
		run->first_code = code;
		snprintf(run->first_msg, sizeof(run->first_msg), "%s", msg);
	}
	pv_log(PV_LOG_WARN, "%s", msg);
}

static int user_name(const struct dc_run *run, size_t client, unsigned long n, char *out,
		     size_t len)
{
	return pv_names_expand(run->pb->users.name_template, run->clients[client]->name,
			       run->pb->has_server ? run->pb->server.host.name : NULL, n, 0, out, len);
}

static int user_dn(const struct dc_run *run, const char *name, struct pv_buf *dn)
{
	pv_buf_reset(dn);
	if (pv_buf_addstr(dn, "CN=") < 0 || pv_dn_escape(dn, name) < 0 ||
	    pv_buf_addf(dn, ",%s", run->pb->users.ou) < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

static int collect_ours(const char *dn, const char *const *vals, void *arg)
{
	struct dc_run *run = arg;

	(void)dn;
	if (vals[0] && pv_strset_add(run->ours, vals[0]) < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

/* Make the lab's OU when it is missing, tagged so cleanup knows it is ours. */
static int ensure_ou(struct dc_run *run)
{
	const char *oc[] = { "top", "organizationalUnit" }, *desc[] = { run->tag };
	struct pv_attr attrs[] = { { "objectClass", oc, NULL, 2 }, { "description", desc, NULL, 1 } };
	enum pv_dir_result res;
	char *value = NULL;
	int found = 0, r;

	if ((r = pv_dir_read(run->dir, run->pb->users.ou, "description", &found, &value)) != PV_OK)
		return r;
	free(value);
	if (found)
		return PV_OK;
	if (run->ctx->cli.opt[OPT_DRY_RUN]) {
		pv_log(PV_LOG_INFO, "would create OU '%s'", run->pb->users.ou);
		return PV_OK;
	}
	r = pv_dir_add(run->dir, run->pb->users.ou, attrs, 2, &res);
	if (r != PV_OK)
		return r;
	if (res == PV_DIR_REJECTED)
		return pv_error_prefix(PV_EDIR, "cannot create the lab's OU (check users.ou)");
	if (res == PV_DIR_DONE)
		pv_log(PV_LOG_INFO, "created OU '%s'", run->pb->users.ou);
	return PV_OK;
}

struct user_attrs {
	const char *oc[4], *cn[1], *upn[1], *desc[1], *uac[1], *pwd[1];
	size_t pwdlen[1];
	char upnbuf[300];
	struct pv_attr a[8];
};

static void fill_attrs(struct user_attrs *u, const struct dc_run *run, const char *name)
{
	u->oc[0] = "top";
	u->oc[1] = "person";
	u->oc[2] = "organizationalPerson";
	u->oc[3] = "user";
	u->cn[0] = name;
	snprintf(u->upnbuf, sizeof(u->upnbuf), "%s@%s", name, run->pb->domain.realm);
	u->upn[0] = u->upnbuf;
	u->desc[0] = run->tag;
	u->uac[0] = UAC;
	u->pwd[0] = run->unipwd.data;
	u->pwdlen[0] = run->unipwd.len;
	u->a[0] = (struct pv_attr){ "objectClass", u->oc, NULL, 4 };
	u->a[1] = (struct pv_attr){ "cn", u->cn, NULL, 1 };
	u->a[2] = (struct pv_attr){ "sAMAccountName", u->cn, NULL, 1 };
	u->a[3] = (struct pv_attr){ "userPrincipalName", u->upn, NULL, 1 };
	u->a[4] = (struct pv_attr){ "displayName", u->cn, NULL, 1 };
	u->a[5] = (struct pv_attr){ "description", u->desc, NULL, 1 };
	u->a[6] = (struct pv_attr){ "userAccountControl", u->uac, NULL, 1 };
	u->a[7] = (struct pv_attr){ "unicodePwd", u->pwd, u->pwdlen, 1 };
}

/* Pipeline callback; tag is the operation kind (0 add, 1 password reset). */
static int user_done(void *tag, enum pv_dir_result result, const char *msg, void *arg)
{
	struct dc_run *run = arg;
	bool reset = tag != NULL;

	switch (result) {
	case PV_DIR_DONE:
		if (reset)
			run->reset++;
		else
			run->created++;
		break;
	case PV_DIR_EXISTS:
		/* not in our tagged set, so someone else's object holds the name */
		record_failure(run, PV_ECONFLICT, msg);
		break;
	case PV_DIR_FATAL:
		record_failure(run, PV_EDIR, msg);
		return 1;
	default:
		record_failure(run, PV_EDIR, msg);
	}
	pv_progress_update(&run->prog, run->created + run->present + run->failed);
	return 0;
}

/* The first add goes alone: a password the domain's policy refuses, or any other problem
 * common to every user, stops the run after one attempt instead of N. */
static int first_add(struct dc_run *run, const char *dn, struct user_attrs *u)
{
	enum pv_dir_result res;
	int r;

	r = pv_dir_add(run->dir, dn, u->a, 8, &res);
	if (r != PV_OK)
		return r;
	switch (res) {
	case PV_DIR_DONE:
		run->created++;
		return PV_OK;
	case PV_DIR_EXISTS:
		record_failure(run, PV_ECONFLICT, pv_errmsg());
		return PV_OK;
	default:
		if (strstr(pv_errmsg(), "onstraint") || strstr(pv_errmsg(), "assword"))
			return pv_error_prefix(PV_ECONFIG,
					       "the DC refused the first user, so no other was tried "
					       "(if the password policy is the cause, pick a password "
					       "that meets it)");
		return pv_error_prefix(PV_EDIR, "the DC refused the first user, so no other was tried");
	}
}

static int create_users(struct dc_run *run, unsigned long *missing)
{
	struct pv_dir_pipe *pipe = NULL;
	struct pv_buf dn = PV_BUF_INIT;
	struct user_attrs u;
	const struct pv_attr *pwd_attr = &u.a[7];
	bool dry = run->ctx->cli.opt[OPT_DRY_RUN] != NULL;
	bool reset = run->ctx->cli.opt[OPT_RESET_PASSWORDS] != NULL;
	bool first = true;
	char name[256];
	int r = PV_OK;

	*missing = 0;
	if (!dry && (r = pv_dir_pipe_new(run->dir, window(run->dir, run->pb->domain.base_dn),
					 user_done, run, &pipe)) != PV_OK)
		return r;
	for (size_t c = 0; c < run->nclients && r == PV_OK; c++) {
		for (unsigned long n = 1; n <= run->per_client && r == PV_OK; n++) {
			if ((r = user_name(run, c, n, name, sizeof(name))) != PV_OK)
				break;
			bool have = pv_strset_has(run->ours, name);

			if (have)
				run->present++;
			else
				(*missing)++;
			if (dry || (have && !reset))
				continue;
			if ((r = user_dn(run, name, &dn)) != PV_OK)
				break;
			fill_attrs(&u, run, name);
			if (have)
				r = pv_dir_pipe_replace(pipe, dn.data, pwd_attr, 1, (void *)1);
			else if (first)
				r = first_add(run, dn.data, &u);
			else
				r = pv_dir_pipe_add(pipe, dn.data, u.a, 8, NULL);
			first = first && have;
			pv_progress_update(&run->prog, run->created + run->present + run->failed);
		}
	}
	if (pipe) {
		int d = pv_dir_pipe_drain(pipe);

		if (r == PV_OK)
			r = d;
	}
	pv_dir_pipe_free(pipe);
	pv_buf_release(&dn, 0);
	/* a stop requested by the callback carries the first failure */
	if (r == PV_EFAIL || (r != PV_OK && run->first_code != PV_OK && r == run->first_code))
		r = pv_error(run->first_code, "%s", run->first_msg);
	return r;
}

/* kinit as the first, the last and a random user with the shared password. */
static int verify(struct dc_run *run, const struct pv_secret *pw)
{
	unsigned long total = run->per_client * run->nclients, pick[3];
	char name[256];
	int r;

	srand((unsigned)time(NULL));
	pick[0] = 0;
	pick[1] = total - 1;
	pick[2] = (unsigned long)rand() % total;
	for (int i = 0; i < 3; i++) {
		char *cc = NULL;

		if ((r = user_name(run, pick[i] / run->per_client, pick[i] % run->per_client + 1, name,
				   sizeof(name))) != PV_OK)
			return r;
		r = pv_krb_kinit(&run->pb->domain, name, pw, &cc);
		pv_krb_destroy(cc);
		free(cc);
		if (r != PV_OK)
			return pv_error_prefix(r, "verify");
		pv_log(PV_LOG_INFO, "verified: kinit %s@%s with the shared password", name,
		       run->pb->domain.realm);
	}
	return PV_OK;
}

static void summary(const struct dc_run *run, unsigned long missing, double secs, int code)
{
	unsigned long total = run->per_client * run->nclients;
	double rate = secs > 0 ? (double)run->created / secs : 0;
	bool dry = run->ctx->cli.opt[OPT_DRY_RUN] != NULL;

	if (run->ctx->json) {
		printf("{\"ok\":%s,\"exit\":%d,\"dry_run\":%s,\"planned\":%lu,\"created\":%lu,"
		       "\"present\":%lu,\"missing\":%lu,\"reset\":%lu,\"failed\":%lu,\"seconds\":%.3f,"
		       "\"users_per_second\":%.1f,\"ou\":",
		       code == PV_OK ? "true" : "false", code, dry ? "true" : "false", total,
		       run->created, run->present, missing, run->reset, run->failed, secs, rate);
		pv_out_json_str(stdout, run->pb->users.ou);
		printf("}\n");
		return;
	}
	if (dry)
		printf("dc: %lu users planned in %s: %lu already present, %lu would be created\n",
		       total, run->pb->users.ou, run->present, missing);
	else
		printf("dc: created %lu, already present %lu%s, failed %lu (of %lu) in %.1f s, %.1f "
		       "users/s\n",
		       run->created, run->present, run->reset ? " (passwords reset)" : "", run->failed,
		       total, secs, rate);
}

int pv_cmd_dc(struct pv_ctx *ctx)
{
	struct dc_run run = { .ctx = ctx, .unipwd = PV_BUF_INIT };
	struct pv_secret *admin = NULL, *pw = NULL;
	unsigned long missing = 0;
	struct pv_buf filter = PV_BUF_INIT;
	const char *attrs[] = { "sAMAccountName", NULL };
	double t0;
	int r;

	if ((r = pv_ctx_load(ctx)) != PV_OK)
		goto out;
	run.pb = ctx->pb;
	run.per_client = ctx->pb->users.per_client;
	if (run.per_client > USERS_MAX && !ctx->cli.opt[OPT_FORCE]) {
		r = pv_error(PV_EUSAGE, "%lu users per client is more than %lu; pass --force if you "
					"mean it",
			     run.per_client, USERS_MAX);
		goto out;
	}
	if ((r = pv_ctx_clients(ctx, &run.clients, &run.nclients)) != PV_OK)
		goto out;
	snprintf(run.tag, sizeof(run.tag), "provision:%s", ctx->pb->lab);
	if ((r = pv_ctx_users_password(ctx, NULL, &pw)) != PV_OK)
		goto out;
	switch (pv_unicodepwd(&run.unipwd, pw->data, pw->len)) {
	case 0:
		break;
	case -2:
		r = pv_error(PV_ECONFIG, "the users' password is not valid UTF-8");
		goto out;
	default:
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_resolve_secret(ctx, &ctx->pb->domain.admin_password, "admin password",
				   &admin)) != PV_OK)
		goto out;
	if ((r = pv_dir_connect(&ctx->pb->domain, -1, admin, &run.dir)) != PV_OK)
		goto out;
	/* Refuse before anything is sent: Samba would accept a password over a plain
	 * connection when so configured; we never count on the server to catch it. */
	if (!pv_dir_encrypted(run.dir)) {
		r = pv_error(PV_ECONFIG, "the LDAP connection to '%s' is not encrypted; passwords are "
					 "only sent over LDAPS, StartTLS or sealed GSSAPI",
			     ctx->pb->domain.dc_name);
		goto out;
	}
	pv_log(PV_LOG_DEBUG, "LDAP: %s", pv_dir_security(run.dir));
	t0 = pv_now();
	if ((r = ensure_ou(&run)) != PV_OK)
		goto out;
	if (!(run.ours = pv_strset_new())) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if (pv_buf_addstr(&filter, "(&(objectClass=user)(!(objectClass=computer))(description=") < 0 ||
	    pv_filter_escape(&filter, run.tag) < 0 || pv_buf_addstr(&filter, "))") < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	r = pv_dir_search(run.dir, ctx->pb->domain.base_dn, filter.data, attrs, PAGE, collect_ours,
			  &run);
	if (r != PV_OK)
		goto out;
	pv_log(PV_LOG_DEBUG, "%zu users of lab '%s' found", pv_strset_count(run.ours), ctx->pb->lab);
	pv_progress_start(&run.prog, ctx, "dc", "users", run.per_client * run.nclients);
	r = create_users(&run, &missing);
	pv_progress_end(&run.prog);
	if (r == PV_OK && run.failed)
		r = run.created ? pv_error(PV_EPARTIAL, "%lu of %lu users failed; first: %s",
					   run.failed, missing, run.first_msg)
				: pv_error(run.first_code, "%s", run.first_msg);
	summary(&run, missing, pv_now() - t0, r);
	if (r == PV_OK && ctx->cli.opt[OPT_VERIFY] && !ctx->cli.opt[OPT_DRY_RUN])
		r = verify(&run, pw);
out:
	if (r != PV_OK)
		pv_out_fail(r);
	pv_buf_release(&filter, 0);
	pv_buf_release(&run.unipwd, 1);
	pv_strset_free(run.ours);
	pv_dir_free(run.dir);
	pv_secret_free(admin);
	pv_secret_free(pw);
	free(run.clients);
	return r;
}

/* ---- cleanup dc ---- */

struct dn_list {
	char **dns;
	size_t n, cap;
};

static int collect_dn(const char *dn, const char *const *vals, void *arg)
{
	struct dn_list *l = arg;

	(void)vals;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char **p = realloc(l->dns, cap * sizeof(*p));

		if (!p)
			return pv_error(PV_EIO, "out of memory");
		l->dns = p;
		l->cap = cap;
	}
	if (!(l->dns[l->n] = strdup(dn)))
		return pv_error(PV_EIO, "out of memory");
	l->n++;
	return PV_OK;
}

struct del_run {
	struct pv_progress prog;
	unsigned long deleted, gone, failed;
	char first[1024];
};

static int del_done(void *tag, enum pv_dir_result result, const char *msg, void *arg)
{
	struct del_run *d = arg;

	(void)tag;
	if (result == PV_DIR_DONE)
		d->deleted++;
	else if (result == PV_DIR_NOSUCH)
		d->gone++;
	else {
		if (!d->failed++)
			snprintf(d->first, sizeof(d->first), "%s", msg);
		pv_log(PV_LOG_WARN, "%s", msg);
	}
	pv_progress_update(&d->prog, d->deleted + d->gone + d->failed);
	return result == PV_DIR_FATAL;
}

/* Is dn an entry below the DN ou? (Case-insensitive, as the DC returns DNs in its own case; a
 * spelling that differs in spacing only means the slower, one-by-one path.) */
static bool below(const char *dn, const char *ou)
{
	size_t n = strlen(dn), m = strlen(ou);

	return n > m + 1 && dn[n - m - 1] == ',' && strcasecmp(dn + n - m, ou) == 0;
}

struct foreign {
	const char *ou;
	unsigned long n;
	char first[512];
};

static int count_foreign(const char *dn, const char *const *vals, void *arg)
{
	struct foreign *f = arg;

	(void)vals;
	if (strcasecmp(dn, f->ou) != 0 && !f->n++)
		snprintf(f->first, sizeof(f->first), "%s", dn);
	return PV_OK;
}

/* May the lab's OU (ours) go in one tree delete? Only when everything below it is a user this
 * lab made: one subtree search for anything else. PROVISION_TREE_DELETE=0 turns it off (to
 * compare both ways in bench/users.sh). What someone adds to our OU between this search and
 * the delete (milliseconds) would go with it. */
static int only_ours(struct pv_dir *dir, const char *ou, const char *tag, bool *tree)
{
	const char *attrs[] = { "objectClass", NULL }, *env = getenv("PROVISION_TREE_DELETE");
	struct foreign f = { .ou = ou };
	struct pv_buf filter = PV_BUF_INIT;
	int r;

	*tree = false;
	if (env && strcmp(env, "0") == 0)
		return PV_OK;
	if (pv_buf_addstr(&filter, "(!(&(objectClass=user)(!(objectClass=computer))(description=") <
		    0 ||
	    pv_filter_escape(&filter, tag) < 0 || pv_buf_addstr(&filter, ")))") < 0)
		return pv_error(PV_EIO, "out of memory");
	r = pv_dir_search(dir, ou, filter.data, attrs, PAGE, count_foreign, &f);
	pv_buf_release(&filter, 0);
	if (r != PV_OK)
		return r;
	*tree = f.n == 0;
	if (f.n)
		pv_log(PV_LOG_INFO, "OU '%s' holds objects this lab did not make (%lu, first: %s): "
				    "deleting the lab's users one by one",
		       ou, f.n, f.first);
	return PV_OK;
}

/* Seconds a tree delete of n users may take: this DC needs about 5 ms each; allow ten times
 * that above the usual wait. */
static int tree_budget(const struct pv_ctx *ctx, unsigned long n)
{
	int t = ctx->pb->domain.timeout > 0 ? ctx->pb->domain.timeout : 10;

	return 6 * t + (int)(n / 20);
}

static void tick(void *arg)
{
	pv_progress_tick(arg);
}

/* Delete l's entries below ou (below == true) or all the others, pipelined, and wait. Newest
 * first, as ldapdelete of a creation-ordered list would: the paged search returns entries in
 * creation order. */
static int delete_each(struct pv_dir_pipe *pipe, const struct dn_list *l, const char *ou,
		       bool inside)
{
	int r = PV_OK;

	for (size_t i = l->n; i > 0 && r == PV_OK; i--)
		if (below(l->dns[i - 1], ou) == inside)
			r = pv_dir_pipe_delete(pipe, l->dns[i - 1], NULL);
	return r == PV_OK ? pv_dir_pipe_drain(pipe) : r;
}

int pv_cmd_cleanup_dc(struct pv_ctx *ctx)
{
	struct pv_secret *admin = NULL;
	struct pv_dir *dir = NULL;
	struct pv_dir_pipe *pipe = NULL;
	struct dn_list l = { NULL, 0, 0 };
	struct del_run d;
	struct pv_buf filter = PV_BUF_INIT;
	const char *attrs[] = { "sAMAccountName", NULL };
	char tag[64], *ou_desc = NULL;
	int ou_found = 0, r;
	bool ou_ours = false, ou_deleted = false, tree = false;
	double t0;

	memset(&d, 0, sizeof(d));
	if ((r = pv_ctx_load(ctx)) != PV_OK)
		goto out;
	if (ctx->cli.opt[OPT_CLIENTS]) {
		r = pv_error(PV_EUSAGE, "cleanup dc removes every user of lab '%s'; --clients does not "
					"apply to it",
			     ctx->pb->lab);
		goto out;
	}
	snprintf(tag, sizeof(tag), "provision:%s", ctx->pb->lab);
	if ((r = pv_resolve_secret(ctx, &ctx->pb->domain.admin_password, "admin password",
				   &admin)) != PV_OK)
		goto out;
	if ((r = pv_dir_connect(&ctx->pb->domain, -1, admin, &dir)) != PV_OK)
		goto out;
	t0 = pv_now();
	if (pv_buf_addstr(&filter, "(&(objectClass=user)(!(objectClass=computer))(description=") < 0 ||
	    pv_filter_escape(&filter, tag) < 0 || pv_buf_addstr(&filter, "))") < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_dir_search(dir, ctx->pb->domain.base_dn, filter.data, attrs, PAGE, collect_dn,
			       &l)) != PV_OK)
		goto out;
	if ((r = pv_dir_read(dir, ctx->pb->users.ou, "description", &ou_found, &ou_desc)) != PV_OK)
		goto out;
	ou_ours = ou_found && ou_desc && strcmp(ou_desc, tag) == 0;
	if (l.n == 0 && !ou_ours) {
		if (ctx->json)
			printf("{\"ok\":true,\"exit\":0,\"deleted\":0,\"ou_deleted\":false,"
			       "\"nothing_to_do\":true}\n");
		else
			printf("cleanup dc: nothing to do: no user or OU of lab '%s' under %s\n",
			       ctx->pb->lab, ctx->pb->domain.base_dn);
		goto out;
	}
	if (ou_ours && (r = only_ours(dir, ctx->pb->users.ou, tag, &tree)) != PV_OK)
		goto out;
	if (ctx->cli.opt[OPT_DRY_RUN]) {
		printf("cleanup dc: would delete %zu users%s\n", l.n,
		       ou_ours ? (tree ? " and the lab's OU (in one tree delete)"
				       : " and the lab's OU if it is then empty")
			       : "");
		goto out;
	}
	pv_progress_start(&d.prog, ctx, "cleanup dc", "users", l.n);
	if ((r = pv_dir_pipe_new(dir, window(dir, ctx->pb->domain.base_dn), del_done, &d,
				 &pipe)) != PV_OK)
		goto out;
	/* Our users outside the OU one by one; then the OU whole, or those in it one by one */
	r = delete_each(pipe, &l, ctx->pb->users.ou, false);
	if (r == PV_OK && tree) {
		enum pv_dir_result res;
		unsigned long inside = 0;

		for (size_t i = 0; i < l.n; i++)
			inside += below(l.dns[i], ctx->pb->users.ou);
		pv_log(PV_LOG_INFO, "deleting OU '%s' and its %lu users in one request (tree delete)",
		       ctx->pb->users.ou, inside);
		pv_progress_end(&d.prog);
		pv_progress_start(&d.prog, ctx, "cleanup dc", "users", inside);
		r = pv_dir_delete_tree(dir, ctx->pb->users.ou, tree_budget(ctx, inside), tick, &d.prog,
				       &res);
		if (r == PV_OK && (res == PV_DIR_DONE || res == PV_DIR_NOSUCH)) {
			d.deleted += inside;
			ou_deleted = true;
		} else if (r == PV_OK) { /* the DC cannot: one by one after all */
			pv_log(PV_LOG_INFO, "%s; deleting one by one", pv_errmsg());
			tree = false;
		}
	}
	if (r == PV_OK && !tree)
		r = delete_each(pipe, &l, ctx->pb->users.ou, true);
	pv_progress_end(&d.prog);
	if (r != PV_OK)
		goto out;
	if (ou_ours && !ou_deleted) {
		enum pv_dir_result res;

		if ((r = pv_dir_delete(dir, ctx->pb->users.ou, &res)) != PV_OK)
			goto out;
		ou_deleted = res == PV_DIR_DONE || res == PV_DIR_NOSUCH;
		if (!ou_deleted)
			pv_log(PV_LOG_WARN, "OU '%s' left in place: it holds objects this lab did not "
					    "make (%s)",
			       ctx->pb->users.ou, pv_errmsg());
		else
			pv_log(PV_LOG_INFO, "deleted OU '%s'", ctx->pb->users.ou);
	}
	double secs = pv_now() - t0;
	if (d.failed)
		r = pv_error(d.deleted ? PV_EPARTIAL : PV_EDIR, "%lu users could not be deleted; "
								"first: %s",
			     d.failed, d.first);
	if (ctx->json)
		printf("{\"ok\":%s,\"exit\":%d,\"deleted\":%lu,\"already_gone\":%lu,\"failed\":%lu,"
		       "\"ou_deleted\":%s,\"seconds\":%.3f}\n",
		       r == PV_OK ? "true" : "false", r, d.deleted, d.gone, d.failed,
		       ou_deleted ? "true" : "false", secs);
	else
		printf("cleanup dc: deleted %lu users%s, failed %lu, in %.1f s (%.1f users/s)\n",
		       d.deleted, ou_deleted ? " and the lab's OU" : "", d.failed, secs,
		       secs > 0 ? (double)d.deleted / secs : 0);
out:
	if (r != PV_OK)
		pv_out_fail(r);
	pv_dir_pipe_free(pipe);
	for (size_t i = 0; i < l.n; i++)
		free(l.dns[i]);
	free(l.dns);
	free(ou_desc);
	pv_buf_release(&filter, 0);
	pv_dir_free(dir);
	pv_secret_free(admin);
	return r;
}
