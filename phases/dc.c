/* phases/dc.c: the dc phase (N users per client in the lab's OU), its cleanup (every user of
 * this lab, and the OU when this lab made it), and the directory's status.
 *
 * One LDAP add per user carries the password (unicodePwd) and userAccountControl, so a user
 * is either fully made or not at all: a run killed at any point is finished by the next one.
 * A re-run costs one paged search. Adds are pipelined on one connection (ldap/ops.h). */
#include "env/target.h"
#include "krb/krb.h"
#include "phases/dc.h"
#include "phases/replica.h"

#include "ldap/encode.h"
#include "ldap/ops.h"
#include "playbooks/names.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"
#include "util/strset.h"

#include <stdio.h>
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
#define PAGE	    1000
/* UF_NORMAL_ACCOUNT (0x200) | UF_DONT_EXPIRE_PASSWD (0x10000), MS-ADTS 2.2.16: enabled, and
 * the password never expires so long runs do not hit expiry. */
#define UAC "66048"

struct dc_run {
	const struct pv_env *env;
	const struct pv_phases_dc_opts *o;
	const struct pv_playbook *pb;
	const struct pv_playbook_host *const *clients;
	size_t nclients;
	unsigned long per_client;
	char tag[PV_ENV_TAG_MAX];
	struct pv_buf unipwd;
	struct pv_ldap *dir;
	struct pv_strset *ours; /* sAMAccountNames carrying this lab's tag */
	struct pv_phases_dc_result *res;
	int first_code;
	struct pv_progress prog;
};

/* PROVISION_LDAP_WINDOW overrides (bench/ldap-window.sh); else 1, or 2 when a round trip to
 * the DC (the best of three base reads of the naming context) exceeds RTT_FOR_TWO. */
static int window(struct pv_ldap *dir, const char *base)
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

		if (pv_ldap_read(dir, base, "objectClass", &found, &val) != PV_OK)
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
	run->res->failed++;
	if (run->first_code == PV_OK) {
		run->first_code = code;
		snprintf(run->res->first_failure, sizeof(run->res->first_failure), "%s", msg);
	}
	pv_log(PV_LOG_WARN, "%s", msg);
}

static int user_name(const struct dc_run *run, size_t client, unsigned long n,
		     char out[PV_PLAYBOOK_NAME_MAX])
{
	return pv_playbook_user_name(run->pb, run->clients[client], n, out);
}

static int user_dn(const struct dc_run *run, const char *name, struct pv_buf *dn)
{
	pv_buf_reset(dn);
	if (pv_buf_addstr(dn, "CN=") < 0 || pv_ldap_dn_escape(dn, name) < 0 ||
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
	const char *oc[] = {"top", "organizationalUnit"}, *desc[] = {run->tag};
	struct pv_ldap_attr attrs[] = {{"objectClass", oc, NULL, 2},
				       {"description", desc, NULL, 1}};
	enum pv_ldap_result res;
	char *value = NULL;
	int found = 0, r;

	if ((r = pv_ldap_read(run->dir, run->pb->users.ou, "description", &found, &value)) != PV_OK)
		return r;
	free(value);
	if (found)
		return PV_OK;
	run->res->ou_created = true;
	if (run->env->dry_run) {
		pv_env_plan_add(&run->res->plan, "create OU '%s'", run->pb->users.ou);
		return PV_OK;
	}
	r = pv_ldap_add(run->dir, run->pb->users.ou, attrs, 2, &res);
	if (r != PV_OK)
		return r;
	if (res == PV_LDAP_REJECTED)
		return pv_error_prefix(PV_EDIR, "cannot create the lab's OU (check users.ou)");
	if (res == PV_LDAP_DONE)
		pv_log(PV_LOG_INFO, "created OU '%s'", run->pb->users.ou);
	else
		run->res->ou_created = false; /* made meanwhile by another run */
	return PV_OK;
}

struct user_attrs {
	const char *oc[4], *cn[1], *upn[1], *desc[1], *uac[1], *pwd[1];
	size_t pwdlen[1];
	char upnbuf[300];
	struct pv_ldap_attr a[8];
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
	u->a[0] = (struct pv_ldap_attr){"objectClass", u->oc, NULL, 4};
	u->a[1] = (struct pv_ldap_attr){"cn", u->cn, NULL, 1};
	u->a[2] = (struct pv_ldap_attr){"sAMAccountName", u->cn, NULL, 1};
	u->a[3] = (struct pv_ldap_attr){"userPrincipalName", u->upn, NULL, 1};
	u->a[4] = (struct pv_ldap_attr){"displayName", u->cn, NULL, 1};
	u->a[5] = (struct pv_ldap_attr){"description", u->desc, NULL, 1};
	u->a[6] = (struct pv_ldap_attr){"userAccountControl", u->uac, NULL, 1};
	u->a[7] = (struct pv_ldap_attr){"unicodePwd", u->pwd, u->pwdlen, 1};
}

/* Pipeline callback; tag is the operation kind (0 add, 1 password reset). */
static int user_done(void *tag, enum pv_ldap_result result, const char *msg, void *arg)
{
	struct dc_run *run = arg;
	bool reset = tag != NULL;

	switch (result) {
	case PV_LDAP_DONE:
		if (reset)
			run->res->reset++;
		else
			run->res->created++;
		break;
	case PV_LDAP_EXISTS:
		/* not in our tagged set, so someone else's object holds the name */
		record_failure(run, PV_ECONFLICT, msg);
		break;
	case PV_LDAP_FATAL:
		record_failure(run, PV_EDIR, msg);
		return 1;
	default:
		record_failure(run, PV_EDIR, msg);
	}
	pv_progress_update(&run->prog, run->res->created + run->res->present + run->res->failed);
	return 0;
}

/* The first add goes alone: a password the domain's policy refuses, or any other problem
 * common to every user, stops the run after one attempt instead of N. */
static int first_add(struct dc_run *run, const char *dn, struct user_attrs *u)
{
	enum pv_ldap_result res;
	int r;

	r = pv_ldap_add(run->dir, dn, u->a, 8, &res);
	if (r != PV_OK)
		return r;
	switch (res) {
	case PV_LDAP_DONE:
		run->res->created++;
		return PV_OK;
	case PV_LDAP_EXISTS:
		record_failure(run, PV_ECONFLICT, pv_errmsg());
		return PV_OK;
	default:
		if (strstr(pv_errmsg(), "onstraint") || strstr(pv_errmsg(), "assword"))
			return pv_error_prefix(
				PV_ECONFIG, "the DC refused the first user, so no other was tried "
					    "(if the password policy is the cause, pick a password "
					    "that meets it)");
		return pv_error_prefix(PV_EDIR,
				       "the DC refused the first user, so no other was tried");
	}
}

static int create_users(struct dc_run *run, unsigned long *missing)
{
	struct pv_ldap_pipe *pipe = NULL;
	struct pv_buf dn = PV_BUF_INIT;
	struct user_attrs u;
	const struct pv_ldap_attr *pwd_attr = &u.a[7];
	bool dry = run->env->dry_run;
	bool reset = run->o->reset_passwords;
	bool first = true;
	char name[PV_PLAYBOOK_NAME_MAX];
	int r = PV_OK;

	*missing = 0;
	if (!dry && (r = pv_ldap_pipe_new(run->dir, window(run->dir, run->pb->domain.base_dn),
					  user_done, run, &pipe)) != PV_OK)
		return r;
	for (size_t c = 0; c < run->nclients && r == PV_OK; c++) {
		for (unsigned long n = 1; n <= run->per_client && r == PV_OK; n++) {
			if ((r = user_name(run, c, n, name)) != PV_OK)
				break;
			bool have = pv_strset_has(run->ours, name);

			if (have)
				run->res->present++;
			else
				(*missing)++;
			if (dry || (have && !reset))
				continue;
			if ((r = user_dn(run, name, &dn)) != PV_OK)
				break;
			fill_attrs(&u, run, name);
			if (have)
				r = pv_ldap_pipe_replace(pipe, dn.data, pwd_attr, 1, (void *)1);
			else if (first)
				r = first_add(run, dn.data, &u);
			else
				r = pv_ldap_pipe_add(pipe, dn.data, u.a, 8, NULL);
			first = first && have;
			pv_progress_update(&run->prog, run->res->created + run->res->present +
							       run->res->failed);
		}
	}
	if (pipe) {
		int d = pv_ldap_pipe_drain(pipe);

		if (r == PV_OK)
			r = d;
	}
	pv_ldap_pipe_free(pipe);
	pv_buf_release(&dn, 0);
	/* a stop requested by the callback carries the first failure */
	if (r == PV_EFAIL || (r != PV_OK && run->first_code != PV_OK && r == run->first_code))
		r = pv_error(run->first_code, "%s", run->res->first_failure);
	return r;
}

/* kinit as the first, the last and a random user with the shared password. */
static int verify(struct dc_run *run, const struct pv_secret *pw)
{
	unsigned long total = run->per_client * run->nclients, pick[3];
	char name[PV_PLAYBOOK_NAME_MAX];
	int r;

	srand((unsigned)time(NULL));
	pick[0] = 0;
	pick[1] = total - 1;
	pick[2] = (unsigned long)rand() % total;
	for (int i = 0; i < 3; i++) {
		char *cc = NULL;

		if ((r = user_name(run, pick[i] / run->per_client, pick[i] % run->per_client + 1,
				   name)) != PV_OK)
			return r;
		r = pv_env_domain_kinit(&run->pb->domain, name, pw, &cc);
		pv_krb_destroy(cc);
		free(cc);
		if (r != PV_OK)
			return pv_error_prefix(r, "verify");
		pv_log(PV_LOG_INFO, "verified: kinit %s@%s with the shared password", name,
		       run->pb->domain.realm);
	}
	return PV_OK;
}

/* Connect as the admin, over a connection a password may be written on when pw is true. */
static int connect_dc(const struct pv_env *env, bool pw, struct pv_ldap **dir)
{
	const struct pv_secret *admin;
	int r;

	if ((r = pv_env_secret(env, PV_ENV_CRED_ADMIN, &admin)) != PV_OK ||
	    (r = pv_env_domain_connect(&env->pb->domain, -1, admin, dir)) != PV_OK)
		return r;
	/* Refuse before anything is sent: Samba would accept a password over a plain
	 * connection when so configured; we never count on the server to catch it. */
	if (pw && !pv_ldap_encrypted(*dir))
		return pv_error(PV_ECONFIG,
				"the LDAP connection to '%s' is not encrypted; passwords "
				"are only sent over LDAPS, StartTLS or sealed GSSAPI",
				env->pb->domain.dc_name);
	pv_log(PV_LOG_DEBUG, "LDAP: %s", pv_ldap_security(*dir));
	return PV_OK;
}

int pv_phases_dc_prepare(const struct pv_env *env, const struct pv_phases_dc_opts *o,
			 struct pv_phases_dc_result *res)
{
	struct dc_run run = {.env = env, .o = o, .pb = env->pb, .unipwd = PV_BUF_INIT, .res = res};
	const struct pv_secret *pw = NULL;
	const struct pv_playbook_host **all = NULL;
	struct pv_buf filter = PV_BUF_INIT;
	const char *attrs[] = {"sAMAccountName", NULL};
	double t0;
	int r;

	run.per_client = env->pb->users.per_client;
	run.clients = o->clients;
	run.nclients = o->clients ? o->nclients : env->pb->nclients;
	res->planned = run.per_client * run.nclients;
	if (run.per_client > PV_PHASES_DC_USERS_MAX && !o->force)
		return pv_error(PV_EUSAGE,
				"%lu users per client is more than %lu; pass --force if "
				"you mean it",
				run.per_client, PV_PHASES_DC_USERS_MAX);
	if (run.nclients == 0)
		return pv_error(PV_ECONFIG,
				"the playbook has no clients (add a clients: list): users "
				"are made per client");
	/* all clients: the playbook's, in its order */
	if (!o->clients) {
		if (!(all = calloc(run.nclients, sizeof(*all))))
			return pv_error(PV_EIO, "out of memory");
		for (size_t i = 0; i < run.nclients; i++)
			all[i] = &env->pb->clients[i];
		run.clients = all;
	}
	pv_env_tag_lab(env->pb, run.tag);
	pv_buf_secret(&run.unipwd); /* the password in UTF-16: no copy left behind as it grows */
	if ((r = pv_env_secret(env, PV_ENV_CRED_USERS, &pw)) != PV_OK)
		goto out;
	switch (pv_ldap_unicodepwd(&run.unipwd, pw->data, pw->len)) {
	case 0:
		break;
	case -2:
		r = pv_error(PV_ECONFIG, "the users' password is not valid UTF-8");
		goto out;
	default:
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = connect_dc(env, true, &run.dir)) != PV_OK)
		goto out;
	t0 = pv_now();
	if ((r = ensure_ou(&run)) != PV_OK)
		goto out;
	if (!(run.ours = pv_strset_new())) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_phases_users_filter(&filter, run.tag)) != PV_OK)
		goto out;
	r = pv_ldap_search(run.dir, env->pb->domain.base_dn, filter.data, attrs, PAGE, collect_ours,
			   &run);
	if (r != PV_OK)
		goto out;
	pv_log(PV_LOG_DEBUG, "%zu users of lab '%s' found", pv_strset_count(run.ours),
	       env->pb->lab);
	pv_progress_start(&run.prog, "dc", "users", res->planned);
	r = create_users(&run, &res->missing);
	pv_progress_end(&run.prog);
	res->seconds = pv_now() - t0;
	if (env->dry_run && res->missing)
		pv_env_plan_add(&res->plan, "create %lu users in %s (%lu present)", res->missing,
				env->pb->users.ou, res->present);
	if (r == PV_OK && res->failed)
		r = res->created ? pv_error(PV_EPARTIAL, "%lu of %lu users failed; first: %s",
					    res->failed, res->missing, res->first_failure)
				 : pv_error(run.first_code, "%s", res->first_failure);
	if (r == PV_OK && o->verify && !env->dry_run) {
		if ((r = verify(&run, pw)) == PV_OK)
			res->verified = true;
	}
out:
	pv_buf_release(&filter, 0);
	pv_buf_release(&run.unipwd, 1);
	pv_strset_free(run.ours);
	pv_ldap_free(run.dir);
	free(all);
	return r;
}

void pv_phases_dc_result_release(struct pv_phases_dc_result *res)
{
	pv_env_plan_release(&res->plan);
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

static int del_done(void *tag, enum pv_ldap_result result, const char *msg, void *arg)
{
	struct del_run *d = arg;

	(void)tag;
	if (result == PV_LDAP_DONE)
		d->deleted++;
	else if (result == PV_LDAP_NOSUCH)
		d->gone++;
	else {
		if (!d->failed++)
			snprintf(d->first, sizeof(d->first), "%s", msg);
		pv_log(PV_LOG_WARN, "%s", msg);
	}
	pv_progress_update(&d->prog, d->deleted + d->gone + d->failed);
	return result == PV_LDAP_FATAL;
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

/* Users below the OU at most this many go in one tree delete; more, one by one. Samba runs a
 * tree delete as one ldb transaction over the whole subtree (subtree_delete.c deletes every
 * child inside the request's transaction), and its cost grows with the square of the users in
 * it; one delete per request, pipelined like dc's adds, grows too but three times more slowly.
 * Measured on the lab (bench/cleanup-dc.sh, docs/scale.md): 2,000 users 4.9 s by tree delete
 * against 10.2 s one by one; 10,000 users 165.6 s against 99.3 s; they cross near 4,300. */
#define TREE_MAX 4000

/* May the lab's OU (ours) go in one tree delete? Only when everything below it is a user this
 * lab made (one subtree search for anything else) and there are at most TREE_MAX of them.
 * PROVISION_TREE_DELETE=0 never, =1 at any size (for bench/cleanup-dc.sh). What someone adds
 * to our OU between this search and the delete (milliseconds) would go with it. */
static int only_ours(struct pv_ldap *dir, const char *ou, const char *tag, unsigned long inside,
		     bool *tree)
{
	const char *attrs[] = {"objectClass", NULL}, *env = getenv("PROVISION_TREE_DELETE");
	struct foreign f = {.ou = ou};
	struct pv_buf filter = PV_BUF_INIT;
	int r;

	*tree = false;
	if ((env && !strcmp(env, "0")) || (inside > TREE_MAX && !(env && !strcmp(env, "1"))))
		return PV_OK;
	if (pv_buf_addstr(&filter, "(!(&(objectClass=user)(!(objectClass=computer))(description=") <
		    0 ||
	    pv_ldap_filter_escape(&filter, tag) < 0 || pv_buf_addstr(&filter, ")))") < 0)
		return pv_error(PV_EIO, "out of memory");
	r = pv_ldap_search(dir, ou, filter.data, attrs, PAGE, count_foreign, &f);
	pv_buf_release(&filter, 0);
	if (r != PV_OK)
		return r;
	*tree = f.n == 0;
	if (f.n)
		pv_log(PV_LOG_INFO,
		       "OU '%s' holds objects this lab did not make (%lu, first: %s): "
		       "deleting the lab's users one by one",
		       ou, f.n, f.first);
	return PV_OK;
}

/* Seconds a tree delete of n users may take: this DC needs about 5 ms each; allow ten times
 * that above the usual wait. */
static int tree_budget(const struct pv_playbook *pb, unsigned long n)
{
	int t = pb->domain.timeout > 0 ? pb->domain.timeout : 10;

	return 6 * t + (int)(n / 20);
}

static void tick(void *arg)
{
	pv_progress_tick(arg);
}

/* Delete l's entries below ou (below == true) or all the others, pipelined, and wait. Newest
 * first, as ldapdelete of a creation-ordered list would: the paged search returns entries in
 * creation order. */
static int delete_each(struct pv_ldap_pipe *pipe, const struct dn_list *l, const char *ou,
		       bool inside)
{
	int r = PV_OK;

	for (size_t i = l->n; i > 0 && r == PV_OK; i--)
		if (below(l->dns[i - 1], ou) == inside)
			r = pv_ldap_pipe_delete(pipe, l->dns[i - 1], NULL);
	return r == PV_OK ? pv_ldap_pipe_drain(pipe) : r;
}

/* One cleanup of this lab's users on one DC. */
struct cleanup {
	const struct pv_env *env;
	struct pv_ldap *dir;
	struct dn_list l;
	struct del_run d;
	char tag[PV_ENV_TAG_MAX];
	bool ou_ours, ou_deleted, tree;
};

static void cleanup_release(struct cleanup *c)
{
	for (size_t i = 0; i < c->l.n; i++)
		free(c->l.dns[i]);
	free(c->l.dns);
	pv_ldap_free(c->dir);
}

/* The lab's users on c->dir, and whether the OU is ours. */
static int cleanup_find(struct cleanup *c)
{
	const struct pv_playbook *pb = c->env->pb;
	const char *attrs[] = {"sAMAccountName", NULL};
	struct pv_buf filter = PV_BUF_INIT;
	char *desc = NULL;
	int found = 0, r;

	pv_env_tag_lab(pb, c->tag);
	if ((r = pv_phases_users_filter(&filter, c->tag)) == PV_OK &&
	    (r = pv_ldap_search(c->dir, pb->domain.base_dn, filter.data, attrs, PAGE, collect_dn,
				&c->l)) == PV_OK)
		r = pv_ldap_read(c->dir, pb->users.ou, "description", &found, &desc);
	c->ou_ours = r == PV_OK && found && desc && strcmp(desc, c->tag) == 0;
	free(desc);
	pv_buf_release(&filter, 0);
	return r;
}

/* The OU and its users in one tree delete; false in *done when the DC cannot (one by one). */
static int tree_delete(struct cleanup *c, unsigned long inside, bool *done)
{
	const char *ou = c->env->pb->users.ou;
	enum pv_ldap_result dres;
	int r;

	pv_log(PV_LOG_INFO, "deleting OU '%s' and its %lu users in one request (tree delete)", ou,
	       inside);
	pv_progress_end(&c->d.prog);
	pv_progress_start(&c->d.prog, "cleanup dc", "users", inside);
	r = pv_ldap_delete_tree(c->dir, ou, tree_budget(c->env->pb, inside), tick, &c->d.prog,
				&dres);
	*done = r == PV_OK && (dres == PV_LDAP_DONE || dres == PV_LDAP_NOSUCH);
	if (*done) {
		c->d.deleted += inside;
		c->ou_deleted = true;
	} else if (r == PV_OK) {
		pv_log(PV_LOG_INFO, "%s; deleting one by one", pv_errmsg());
	}
	return r;
}

/* Every user found: those outside the OU one by one; those in it by tree delete when c->tree
 * and the DC can, else one by one too. */
static int cleanup_users(struct cleanup *c)
{
	const char *ou = c->env->pb->users.ou;
	struct pv_ldap_pipe *pipe = NULL;
	unsigned long inside = 0;
	bool done = false;
	int r;

	for (size_t i = 0; i < c->l.n; i++)
		inside += below(c->l.dns[i], ou);
	pv_progress_start(&c->d.prog, "cleanup dc", "users", c->l.n);
	r = pv_ldap_pipe_new(c->dir, window(c->dir, c->env->pb->domain.base_dn), del_done, &c->d,
			     &pipe);
	if (r == PV_OK)
		r = delete_each(pipe, &c->l, ou, false);
	if (r == PV_OK && c->tree)
		r = tree_delete(c, inside, &done);
	if (r == PV_OK && !done)
		r = delete_each(pipe, &c->l, ou, true);
	pv_progress_end(&c->d.prog);
	pv_ldap_pipe_free(pipe);
	return r;
}

/* The OU, when it is ours and not gone yet: left (and said) when it holds another's objects. */
static int cleanup_ou(struct cleanup *c)
{
	const char *ou = c->env->pb->users.ou;
	enum pv_ldap_result dres;
	int r;

	if (!c->ou_ours || c->ou_deleted)
		return PV_OK;
	if ((r = pv_ldap_delete(c->dir, ou, &dres)) != PV_OK)
		return r;
	c->ou_deleted = dres == PV_LDAP_DONE || dres == PV_LDAP_NOSUCH;
	if (!c->ou_deleted)
		pv_log(PV_LOG_WARN,
		       "OU '%s' left in place: it holds objects this lab did not make (%s)", ou,
		       pv_errmsg());
	else
		pv_log(PV_LOG_INFO, "deleted OU '%s'", ou);
	return PV_OK;
}

/* Another DC: nothing of the lab's once replication has brought it the deletes; what is left
 * when it does not catch up in time is deleted there, so the cleanup is exact on every DC. */
static int cleanup_other(const struct pv_env *env, const char *name, struct pv_phases_dc_other *o)
{
	struct cleanup c = {.env = env};
	struct pv_phases_replica_wait w;
	int r;

	snprintf(o->name, sizeof(o->name), "%s", name);
	r = pv_phases_replica_wait_gone(env, name, "cleanup dc", &w);
	o->waited = w.behind ? w.seconds : 0;
	if (r != PV_ETIMEOUT)
		return r;
	pv_log(PV_LOG_INFO, "%s: deleting there the %lu users replication has not (yet)", name,
	       w.there);
	if ((r = pv_phases_replica_connect(env, name, &c.dir)) == PV_OK &&
	    (r = cleanup_find(&c)) == PV_OK && (r = cleanup_users(&c)) == PV_OK)
		r = cleanup_ou(&c);
	o->deleted_there = c.d.deleted;
	if (r == PV_OK && c.d.failed)
		r = pv_error(PV_EPARTIAL, "%s: %lu users could not be deleted there; first: %s",
			     name, c.d.failed, c.d.first);
	cleanup_release(&c);
	return r;
}

static int cleanup_others(const struct pv_env *env, struct pv_phases_dc_cleanup_result *res)
{
	const struct pv_playbook_domain *d = &env->pb->domain;
	int r = PV_OK;

	if (!d->nother_dcs || env->dry_run)
		return PV_OK;
	if (!(res->others = calloc(d->nother_dcs, sizeof(*res->others))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < d->nother_dcs && r == PV_OK; i++, res->nothers++)
		r = cleanup_other(env, d->other_dcs[i].name, &res->others[i]);
	return r;
}

static void cleanup_plan(const struct cleanup *c, struct pv_phases_dc_cleanup_result *res)
{
	const struct pv_playbook *pb = c->env->pb;

	res->tree_delete = c->tree;
	if (c->l.n)
		pv_env_plan_add(&res->plan, "delete %zu users of lab '%s'", c->l.n, pb->lab);
	if (c->ou_ours)
		pv_env_plan_add(&res->plan, "%s",
				c->tree ? "delete the lab's OU and its users in one tree delete"
					: "delete the lab's OU if it is then empty");
	for (size_t i = 0; i < pb->domain.nother_dcs; i++)
		pv_env_plan_add(&res->plan, "wait until %s holds none of them (replication)",
				pb->domain.other_dcs[i].name);
}

int pv_phases_dc_cleanup(const struct pv_env *env, struct pv_phases_dc_cleanup_result *res)
{
	struct cleanup c = {.env = env};
	double t0;
	int r;

	if ((r = connect_dc(env, false, &c.dir)) != PV_OK)
		goto out;
	t0 = pv_now();
	if ((r = cleanup_find(&c)) != PV_OK)
		goto out;
	res->found = c.l.n;
	res->ou_ours = c.ou_ours;
	res->nothing = c.l.n == 0 && !c.ou_ours;
	if (c.ou_ours && (r = only_ours(c.dir, env->pb->users.ou, c.tag, c.l.n, &c.tree)))
		goto out;
	if (env->dry_run && !res->nothing)
		cleanup_plan(&c, res);
	if (env->dry_run || (res->nothing && !env->pb->domain.nother_dcs))
		goto out;
	if ((r = cleanup_users(&c)) != PV_OK || (r = cleanup_ou(&c)) != PV_OK)
		goto out;
	res->seconds = pv_now() - t0;
	if (c.d.failed)
		r = pv_error(c.d.deleted ? PV_EPARTIAL : PV_EDIR,
			     "%lu users could not be deleted; first: %s", c.d.failed, c.d.first);
	else
		r = cleanup_others(env, res);
out:
	res->deleted = c.d.deleted;
	res->gone = c.d.gone;
	res->failed = c.d.failed;
	res->ou_deleted = c.ou_deleted;
	res->tree_delete = res->tree_delete || (c.tree && c.ou_deleted);
	snprintf(res->first_failure, sizeof(res->first_failure), "%s", c.d.first);
	cleanup_release(&c);
	return r;
}

void pv_phases_dc_cleanup_result_release(struct pv_phases_dc_cleanup_result *res)
{
	free(res->others);
	res->others = NULL;
	pv_env_plan_release(&res->plan);
}

/* ---- status ---- */

struct count_ours {
	struct pv_strset *planned;
	unsigned long present, tagged;
};

static int count_one(const char *dn, const char *const *vals, void *arg)
{
	struct count_ours *c = arg;

	(void)dn;
	c->tagged++;
	c->present += vals[0] && pv_strset_has(c->planned, vals[0]);
	return PV_OK;
}

int pv_phases_dc_status(const struct pv_env *env, struct pv_phases_dc_status *st)
{
	const struct pv_playbook *pb = env->pb;
	struct count_ours c = {NULL, 0, 0};
	struct pv_ldap *dir = NULL;
	struct pv_buf filter = PV_BUF_INIT;
	const char *attrs[] = {"sAMAccountName", NULL};
	char tag[PV_ENV_TAG_MAX], name[PV_PLAYBOOK_NAME_MAX], *desc = NULL;
	int found = 0, r;

	memset(st, 0, sizeof(*st));
	st->planned = pv_playbook_users_planned(pb);
	pv_env_tag_lab(pb, tag);
	if (!(c.planned = pv_strset_new()))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < pb->nclients; i++)
		for (unsigned long n = 1; n <= pb->users.per_client; n++) {
			if ((r = pv_playbook_user_name(pb, &pb->clients[i], n, name)) != PV_OK)
				goto out;
			if (pv_strset_add(c.planned, name) < 0) {
				r = pv_error(PV_EIO, "out of memory");
				goto out;
			}
		}
	if ((r = connect_dc(env, false, &dir)) != PV_OK ||
	    (r = pv_phases_users_filter(&filter, tag)) != PV_OK ||
	    (r = pv_ldap_search(dir, pb->domain.base_dn, filter.data, attrs, PAGE, count_one,
				&c)) != PV_OK ||
	    (r = pv_ldap_read(dir, pb->users.ou, "description", &found, &desc)) != PV_OK)
		goto out;
	st->present = c.present;
	st->tagged = c.tagged;
	st->ou_exists = found;
	st->ou_ours = found && desc && strcmp(desc, tag) == 0;
out:
	free(desc);
	pv_buf_release(&filter, 0);
	pv_strset_free(c.planned);
	pv_ldap_free(dir);
	return r;
}
