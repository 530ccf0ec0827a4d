/* phases/join.c: the file server's membership of the domain (see join.h). */
#include "env/target.h"
#include "phases/join.h"

#include "ldap/dir.h"
#include "ldap/ops.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "samba/samba.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SKEW_WARN 60  /* seconds */
#define SKEW_MAX  300 /* Kerberos' default tolerance (krb5.conf clockskew, MS-KILE 3.1.1) */

extern const char pv_phases_samba_verify_join_sh[];
extern const char pv_phases_samba_leave_sh[];
extern const char pv_phases_samba_join_sh[];

/* Map the failure of a script run as the admin (samba/scripts/as-admin.sh). */
static int admin_failed(const char *host, const char *what, const char *tail, int status)
{
	if (status == 4)
		return pv_error(PV_ECRED,
				"kinit as the admin on '%s' failed; check domain.admin, its "
				"password and the server's krb5.conf",
				host);
	if (strstr(tail, "skew") || strstr(tail, "Clock"))
		return pv_error(PV_EREMOTE,
				"%s on '%s': %s; the server's clock differs from the "
				"DC's by more than Kerberos allows",
				what, host, tail);
	return pv_error(PV_EREMOTE, "%s on '%s' failed (status %d)%s%s", what, host, status,
			tail[0] ? ": " : "", tail);
}

static int check_skew(const struct pv_samba_facts *f, const char *host, const char *realm)
{
	long off = f->offset < 0 ? -f->offset : f->offset;

	if (!f->has_offset)
		return pv_error(PV_EUNREACH,
				"'%s' cannot reach a DC of %s ('net ads info': %s); check "
				"its DNS, krb5.conf and smb.conf (realm, workgroup)",
				host, realm, f->info[0] ? f->info : "no answer");
	if (off > SKEW_MAX)
		return pv_error(PV_EREMOTE,
				"the clock of '%s' differs from the DC's by %ld s, more "
				"than Kerberos allows (%d s); fix the time on the server "
				"(NTP) and run join again",
				host, f->offset, SKEW_MAX);
	if (off > SKEW_WARN)
		pv_log(PV_LOG_WARN, "the clock of '%s' differs from the DC's by %ld s", host,
		       f->offset);
	else
		pv_log(PV_LOG_DEBUG, "clock offset of '%s' to the DC: %ld s", host, f->offset);
	return PV_OK;
}

/* kinit, net ads join, and the keytab when smb.conf's kerberos method uses one. */
static int do_join(struct pv_remote *rem, const struct pv_playbook_domain *d,
		   const struct pv_samba_facts *f, const struct pv_secret *admin, bool join,
		   const char *mark)
{
	struct pv_buf s = PV_BUF_INIT;
	const char *what = join ? "net ads join" : "net ads keytab create";
	char tail[1024], princ[512];
	int st = 0, r;

	pv_remote_var(&s, "join", join ? "1" : "0");
	pv_remote_var(&s, "stale", f->keytab[0] == '/' ? f->keytab : "");
	pv_remote_var(&s, "keytab", f->needs_keytab ? "1" : "0");
	pv_remote_var(&s, "mark", mark);
	pv_buf_addstr(&s, pv_phases_samba_join_sh);
	pv_env_admin_principal(d, princ);
	r = pv_samba_as_admin(rem, princ, admin, what, &s, &st, 120);
	snprintf(tail, sizeof(tail), "%s", pv_errmsg());
	pv_buf_release(&s, 0);
	if (r != PV_OK)
		return r;
	if (st != 0)
		return admin_failed(pv_remote_name(rem), what, tail, st);
	return PV_OK;
}

static int start_services(struct pv_remote *rem, const struct pv_playbook_server *s,
			  const char *action)
{
	int r;

	if ((r = pv_samba_service(rem, s->service, action, "winbindd")) != PV_OK)
		return r;
	return pv_samba_service(rem, s->service, action, "smbd");
}

/* Tag the computer account as this lab's (only when it carries no other description). */
static int tag_account(struct pv_ldap *dir, const struct pv_playbook_domain *d, const char *netbios,
		       const char *tag)
{
	const char *vals[] = {tag};
	enum pv_ldap_result res;
	char *dn = NULL, *desc = NULL;
	int r;

	if ((r = pv_samba_account(dir, d->base_dn, netbios, &dn, &desc)) != PV_OK)
		goto out;
	if (!dn) {
		r = pv_error(PV_EDIR,
			     "the computer account %s$ is not in the directory after the join",
			     netbios);
		goto out;
	}
	if (desc && strcmp(desc, tag) != 0) {
		pv_log(PV_LOG_WARN,
		       "computer account '%s' has the description '%s'; not tagging it "
		       "as this lab's, so cleanup join will not remove it",
		       dn, desc);
		goto out;
	}
	if (!desc) {
		r = pv_ldap_modify_values(dir, dn, "description", PV_LDAP_MOD_REPLACE, vals, 1,
					  &res);
		if (r == PV_OK && res != PV_LDAP_DONE)
			r = pv_error_prefix(PV_EDIR, "tagging the computer account");
	}
out:
	free(dn);
	free(desc);
	return r;
}

/* What join and cleanup join start with: the admin secret, one SSH session to the server and
 * its facts (PV_SAMBA_PROBE_CLOCK: also its clock). */
static int open_server(const struct pv_env *env, enum pv_samba_probe_how how,
		       const struct pv_secret **admin, struct pv_remote **rem,
		       struct pv_samba_facts *f)
{
	int r;

	if (!env->pb->has_server)
		return pv_error(PV_ECONFIG, "the playbook has no server: section");
	if ((r = pv_env_secret(env, PV_ENV_CRED_ADMIN, admin)) != PV_OK)
		return r;
	if ((r = pv_env_host_connect(&env->pb->server.host, rem)) != PV_OK)
		return r;
	return pv_samba_probe(*rem, how, env->pb->lab, f);
}

/* What joining one server needs as it goes. */
struct joining {
	const struct pv_env *env;
	const struct pv_playbook *pb;
	struct pv_phases_join_result *res;
	const struct pv_secret *admin;
	struct pv_remote *rem;
	struct pv_ldap *dir;
	struct pv_samba_facts f;
	const char *host;
	char tag[PV_ENV_TAG_MAX], mark[600];
};

/* A member already: make sure the services run ("start" on a running one is a no-op). */
static int keep_member(struct joining *j)
{
	const struct pv_playbook *pb = j->pb;
	int r;

	j->res->state = "present";
	/* a join of ours that was stopped before its account was tagged (the mark is still
	 * there): tag it now, or cleanup would not know the membership is ours */
	if (j->f.join_mark && !j->env->dry_run) {
		if ((r = pv_env_domain_connect(&pb->domain, -1, j->admin, &j->dir)) != PV_OK ||
		    (r = tag_account(j->dir, &pb->domain, j->f.netbios, j->tag)) != PV_OK)
			return r;
		pv_log(PV_LOG_INFO,
		       "the computer account %s$ of a join this lab started is tagged now",
		       j->f.netbios);
	}
	if (j->f.smbd_running && j->f.winbindd_running)
		return PV_OK;
	j->res->state = "started";
	if (j->env->dry_run) {
		pv_env_plan_add(&j->res->plan, "start smbd and winbindd on '%s'", j->host);
		return PV_OK;
	}
	return start_services(j->rem, &pb->server, "start");
}

/* Join (or make the missing keytab of a member), tag the account, (re)start the services. */
static int join_now(struct joining *j)
{
	const struct pv_playbook *pb = j->pb;
	const struct pv_samba_facts *f = &j->f;
	int r;

	j->res->state = f->joined ? "repaired" : "joined";
	pv_log(PV_LOG_INFO, "%s '%s' to %s", f->joined ? "making the keytab of" : "joining",
	       j->host, pb->domain.realm);
	if ((r = do_join(j->rem, &pb->domain, f, j->admin, !f->joined, j->mark)) != PV_OK)
		return r;
	if ((r = pv_env_domain_connect(&pb->domain, -1, j->admin, &j->dir)) != PV_OK ||
	    ((!f->joined || f->join_mark) &&
	     (r = tag_account(j->dir, &pb->domain, f->netbios, j->tag)) != PV_OK))
		return r;
	/* restart: a daemon that ran before the join holds the old identity */
	return start_services(j->rem, &pb->server, f->smbd_running ? "restart" : "start");
}

/* The trust works: 'wbinfo -t' and 'net ads testjoin' (samba/scripts/verify-join.sh, which
 * also removes the join's mark once it is done). */
static int verify(struct joining *j)
{
	struct pv_buf v = PV_BUF_INIT;
	int st = 0, r;

	pv_remote_var(&v, "mark",
		      j->f.join_mark || strcmp(j->res->state, "joined") == 0 ? j->mark : "");
	pv_buf_addstr(&v, pv_phases_samba_verify_join_sh);
	r = pv_remote_sh(j->rem, "wbinfo -t", &v, NULL, 0, NULL, &st, 60);
	pv_buf_release(&v, 0);
	if (r != PV_OK)
		return r;
	if (st != 0)
		return pv_error(PV_EREMOTE, "'%s' is joined but %s fails: %s", j->host,
				st == 1 ? "'wbinfo -t' (winbindd's trust)" : "'net ads testjoin'",
				pv_errmsg());
	j->res->trust_verified = true;
	return PV_OK;
}

int pv_phases_join_prepare(const struct pv_env *env, struct pv_phases_join_result *res)
{
	const struct pv_playbook *pb = env->pb;
	struct joining j = {.env = env, .pb = pb, .res = res};
	struct pv_samba_facts *f = &j.f;
	double t0 = pv_now();
	int r;

	res->server = j.host = pb->has_server ? pb->server.host.name : "";
	pv_env_tag_join(pb, j.tag);
	if ((r = open_server(env, PV_SAMBA_PROBE_CLOCK, &j.admin, &j.rem, f)) != PV_OK)
		goto out;
	snprintf(res->account, sizeof(res->account), "%s$", f->netbios);
	snprintf(j.mark, sizeof(j.mark), "%s/.provision-join.%s", f->state_dir, pb->lab);
	if (strcasecmp(f->security, "ads") != 0 || strcasecmp(f->realm, pb->domain.realm) != 0) {
		r = pv_error(PV_ECONFIG,
			     "smb.conf on '%s' has security = %s, realm = %s; a member of "
			     "%s needs 'security = ads' and 'realm = %s'",
			     j.host, f->security[0] ? f->security : "(unset)",
			     f->realm[0] ? f->realm : "(unset)", pb->domain.realm,
			     pb->domain.realm);
		goto out;
	}
	if ((r = check_skew(f, j.host, pb->domain.realm)) != PV_OK)
		goto out;
	if (f->joined && (!f->needs_keytab || f->keytab_entries > 0)) {
		r = keep_member(&j);
	} else if (env->dry_run) {
		res->state = "would join";
		pv_env_plan_add(&res->plan, "%s '%s' to %s",
				f->joined ? "make the keytab of" : "join", j.host,
				pb->domain.realm);
	} else {
		r = join_now(&j);
	}
	if (r == PV_OK && !env->dry_run)
		r = verify(&j);
out:
	res->seconds = pv_now() - t0;
	pv_samba_facts_release(f);
	pv_ldap_free(j.dir);
	pv_remote_free(j.rem);
	return r;
}

/* ---- cleanup join ---- */

static int leave(struct pv_remote *rem, const struct pv_playbook_domain *d,
		 const struct pv_samba_facts *f, const struct pv_secret *admin, const char *lab)
{
	struct pv_buf s = PV_BUF_INIT, mark = PV_BUF_INIT;
	char tail[1024], princ[512];
	int st = 0, r;

	pv_buf_addf(&mark, "%s/.provision-join.%s", f->state_dir, lab);
	pv_remote_var(&s, "mark", mark.data ? mark.data : "");
	pv_buf_release(&mark, 0);
	pv_remote_var(&s, "admin", d->admin);
	pv_remote_var(&s, "flush", f->needs_keytab ? "1" : "0");
	pv_buf_addstr(&s, pv_phases_samba_leave_sh);
	pv_env_admin_principal(d, princ);
	r = pv_samba_as_admin(rem, princ, admin, "net ads leave", &s, &st, 120);
	snprintf(tail, sizeof(tail), "%s", pv_errmsg());
	pv_buf_release(&s, 0);
	if (r == PV_OK && st != 0)
		r = admin_failed(pv_remote_name(rem), "net ads leave", tail, st);
	return r;
}

int pv_phases_join_cleanup(const struct pv_env *env, bool want_leave,
			   struct pv_phases_join_cleanup_result *res)
{
	const struct pv_playbook *pb = env->pb;
	const struct pv_secret *admin = NULL;
	struct pv_remote *rem = NULL;
	struct pv_ldap *dir = NULL;
	struct pv_samba_facts f;
	char tag[PV_ENV_TAG_MAX], *dn = NULL, *desc = NULL;
	const char *host;
	double t0 = pv_now();
	int r;

	memset(&f, 0, sizeof(f));
	res->server = host = pb->has_server ? pb->server.host.name : "";
	pv_env_tag_join(pb, tag);
	if ((r = open_server(env, PV_SAMBA_PROBE_PLAIN, &admin, &rem, &f)) != PV_OK)
		goto out;
	snprintf(res->account, sizeof(res->account), "%s$", f.netbios);
	res->was_joined = f.joined;
	if ((r = pv_env_domain_connect(&pb->domain, -1, admin, &dir)) != PV_OK ||
	    (r = pv_samba_account(dir, pb->domain.base_dn, f.netbios, &dn, &desc)) != PV_OK)
		goto out;
	/* ours: tagged so, or untagged with the mark of a join of ours that stopped before
	 * tagging it */
	res->ours = dn && ((desc && strcmp(desc, tag) == 0) || (!desc && f.join_mark));
	if (!res->ours) {
		if (f.joined && want_leave) {
			r = pv_error(PV_ECONFLICT,
				     "'%s' is a member of %s, but lab '%s' did not join "
				     "it (its computer account %s$ is not tagged '%s'); "
				     "leave it yourself with 'net ads leave'",
				     host, pb->domain.realm, pb->lab, f.netbios, tag);
			goto out;
		}
		res->nothing = true;
		goto out;
	}
	if (env->dry_run) {
		pv_env_plan_add(&res->plan, "stop smbd and winbindd on '%s'", host);
		if (want_leave)
			pv_env_plan_add(&res->plan, "leave %s and delete the computer account %s$",
					pb->domain.realm, f.netbios);
		goto out;
	}
	if ((r = pv_samba_service(rem, pb->server.service, "stop", "smbd")) != PV_OK ||
	    (r = pv_samba_service(rem, pb->server.service, "stop", "winbindd")) != PV_OK)
		goto out;
	res->stopped = true;
	if (want_leave) {
		if (f.joined) {
			if ((r = leave(rem, &pb->domain, &f, admin, pb->lab)) != PV_OK)
				goto out;
			res->left = true;
		}
		/* net ads leave deletes the account; a server that lost its secrets cannot, so
		 * what is left (tagged ours) goes by LDAP */
		free(dn);
		free(desc);
		if ((r = pv_samba_account(dir, pb->domain.base_dn, f.netbios, &dn, &desc)) != PV_OK)
			goto out;
		if (dn && desc && strcmp(desc, tag) == 0) {
			enum pv_ldap_result dres;

			if ((r = pv_ldap_delete(dir, dn, &dres)) != PV_OK)
				goto out;
			if (dres != PV_LDAP_DONE && dres != PV_LDAP_NOSUCH) {
				r = pv_error_prefix(PV_EDIR, "deleting the computer account");
				goto out;
			}
		}
		res->account_deleted = true;
	}
out:
	res->seconds = pv_now() - t0;
	free(dn);
	free(desc);
	pv_samba_facts_release(&f);
	pv_ldap_free(dir);
	pv_remote_free(rem);
	return r;
}

void pv_phases_join_result_release(struct pv_phases_join_result *res)
{
	pv_env_plan_release(&res->plan);
}

void pv_phases_join_cleanup_result_release(struct pv_phases_join_cleanup_result *res)
{
	pv_env_plan_release(&res->plan);
}
