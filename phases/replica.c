/* phases/replica.c: the domain's other DCs: which is which, a connection to one, and waiting
 * for one to catch up with domain.dc (see replica.h).
 *
 * Waiting is one paged search of this lab's users on that DC per look (about 1 s for 20,000
 * users on the lab's DC), every PV_PHASES_REPLICA_POLL seconds, so a DC replicating 20,000 users is
 * asked a few dozen times, not once per user. */
#include "env/target.h"
#include "phases/replica.h"

#include "ldap/ops.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define PAGE 1000

/* name is dc, or dc's first label (a host may report the DC by its short name). */
static bool same_dc(const char *dc, const char *name)
{
	size_t l = strcspn(dc, ".");

	return !strcasecmp(dc, name) || (strlen(name) == l && !strncasecmp(dc, name, l));
}

bool pv_phases_replica_is_main(const struct pv_playbook_domain *d, const char *name)
{
	return name && same_dc(d->dc_name, name);
}

static const struct pv_playbook_dc_ref *other(const struct pv_playbook_domain *d, const char *name)
{
	for (size_t i = 0; name && i < d->nother_dcs; i++)
		if (same_dc(d->other_dcs[i].name, name))
			return &d->other_dcs[i];
	return NULL;
}

const char *pv_phases_replica_address(const struct pv_playbook_domain *d, const char *name)
{
	const struct pv_playbook_dc_ref *o = other(d, name);

	if (pv_phases_replica_is_main(d, name))
		return d->dc_address;
	return o ? o->address : NULL;
}

const char *pv_phases_replica_name(const struct pv_playbook_domain *d, const char *name)
{
	const struct pv_playbook_dc_ref *o = other(d, name);

	if (pv_phases_replica_is_main(d, name))
		return d->dc_name;
	return o ? o->name : name;
}

int pv_phases_replica_connect(const struct pv_env *env, const char *name, struct pv_ldap **out)
{
	struct pv_playbook_domain d = env->pb->domain;
	const struct pv_secret *admin;
	int r;

	d.dc_name = (char *)pv_phases_replica_name(&env->pb->domain, name);
	d.dc_address = (char *)pv_phases_replica_address(&env->pb->domain, name);
	if ((r = pv_env_secret(env, PV_ENV_CRED_ADMIN, &admin)) != PV_OK)
		return r;
	return pv_env_domain_connect(&d, -1, admin, out);
}

struct collect {
	struct pv_strset *set;
	const struct pv_strset *want;
	unsigned long n;
};

static int collect(const char *dn, const char *const *vals, void *arg)
{
	struct collect *c = arg;

	(void)dn;
	if (!vals[0])
		return PV_OK;
	if (c->want && !pv_strset_has(c->want, vals[0]))
		return PV_OK;
	c->n++;
	if (c->set && pv_strset_add(c->set, vals[0]) < 0)
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

static int count(struct pv_ldap *dir, const struct pv_playbook *pb, struct collect *c)
{
	const char *attrs[] = {"sAMAccountName", NULL};
	struct pv_buf filter = PV_BUF_INIT;
	char tag[PV_ENV_TAG_MAX];
	int r;

	pv_env_tag_lab(pb, tag);
	if ((r = pv_phases_users_filter(&filter, tag)) == PV_OK)
		r = pv_ldap_search(dir, pb->domain.base_dn, filter.data, attrs, PAGE, collect, c);
	pv_buf_release(&filter, 0);
	return r;
}

int pv_phases_replica_users(struct pv_ldap *dir, const struct pv_playbook *pb,
			    struct pv_strset *set, unsigned long *n)
{
	struct collect c = {set, NULL, 0};
	int r = count(dir, pb, &c);

	*n = c.n;
	return r;
}

/* Look at the DC until done(): want users there (gone false) or none of the lab's (gone
 * true); every look reconnects, so a DC restarted meanwhile is no failure. */
static int wait_for(const struct pv_env *env, const char *name, const struct pv_strset *want,
		    bool gone, const char *what, struct pv_phases_replica_wait *w)
{
	int limit = env->pb->domain.replication_timeout, r;
	double t0 = pv_now();
	struct pv_progress prog;
	bool started = false;

	for (;;) {
		struct collect c = {NULL, want, 0};
		struct pv_ldap *dir = NULL;

		if ((r = pv_phases_replica_connect(env, name, &dir)) == PV_OK)
			r = count(dir, env->pb, &c);
		pv_ldap_free(dir);
		if (r != PV_OK)
			break;
		w->there = c.n;
		if (gone ? c.n == 0 : c.n >= w->want)
			break;
		if (!started) {
			w->behind = true;
			if (gone)
				pv_log(PV_LOG_INFO,
				       "%s: %s still holds %lu of this lab's users: waiting for "
				       "replication (up to %d s)",
				       what, name, c.n, limit);
			else
				pv_log(PV_LOG_INFO,
				       "%s: %s holds %lu of the %lu users made on %s: waiting for "
				       "replication (up to %d s)",
				       what, name, c.n, w->want, env->pb->domain.dc_name, limit);
			pv_progress_start(&prog, what, "users", gone ? 0 : w->want);
			started = true;
		}
		if (pv_now() - t0 >= limit || pv_env_stopped(env)) {
			r = pv_env_stopped(env) ? PV_ESTOPPED : PV_ETIMEOUT;
			break;
		}
		if (gone)
			pv_progress_detail(&prog, "%s: %lu of this lab's users left, %.0f of %d s",
					   name, c.n, pv_now() - t0, limit);
		else
			pv_progress_detail(&prog, "%s: %lu of %lu users there, %.0f of %d s", name,
					   c.n, w->want, pv_now() - t0, limit);
		sleep(PV_PHASES_REPLICA_POLL);
	}
	if (started)
		pv_progress_end(&prog);
	w->seconds = pv_now() - t0;
	if (r == PV_ETIMEOUT && gone)
		return pv_error(
			r,
			"%s still holds %lu of this lab's users %d s after they were deleted "
			"on %s: replication to it is behind or stopped (samba-tool drs "
			"showrepl there); raise domain.replication_timeout to wait longer",
			name, w->there, limit, env->pb->domain.dc_name);
	if (r == PV_ETIMEOUT)
		return pv_error(r,
				"%s holds %lu of the %lu users made on %s, %d s on: replication to "
				"it is behind or stopped (samba-tool drs showrepl there); raise "
				"domain.replication_timeout to wait longer",
				name, w->there, w->want, env->pb->domain.dc_name, limit);
	return r;
}

int pv_phases_replica_wait_users(const struct pv_env *env, const char *name,
				 const struct pv_strset *want, unsigned long nwant,
				 const char *what, struct pv_phases_replica_wait *w)
{
	memset(w, 0, sizeof(*w));
	w->want = nwant;
	return wait_for(env, name, want, false, what, w);
}

int pv_phases_replica_wait_gone(const struct pv_env *env, const char *name, const char *what,
				struct pv_phases_replica_wait *w)
{
	memset(w, 0, sizeof(*w));
	return wait_for(env, name, NULL, true, what, w);
}
