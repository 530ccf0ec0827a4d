/* phases/server.c: the server phase (the fsrootN shares, the cifs/ SPNs of every alias, and
 * the per-user home trees), its cleanup (exactly those, and nothing else), and the server's
 * status.
 *
 * Shares are Samba registry shares (`net conf`), made in one SSH round trip and tagged with
 * the comment 'provision:<lab>'. SPNs go to the server's computer account in a few LDAP
 * modifies; with a keytab-based 'kerberos method' the alias principals also go into the
 * keytab, so Kerberos through an alias does not depend on how the acceptor matches keys.
 * Trees are built by trees.c. */
#include "env/target.h"
#include "phases/replica.h"
#include "phases/server.h"

#include "ldap/dir.h"
#include "samba/samba.h"
#include "util/progress.h"

#include "ldap/ops.h"
#include "playbooks/names.h"
#include "remote/remote.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/strset.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SPN_CHUNK 500 /* values per LDAP modify */
/* Values of non-linked multi-valued attributes one object can hold on Windows AD: about 1,200
 * in practice (an ESE record is at most 8,110 bytes; Microsoft's "How the Data Store Works"
 * and the TechNet article "Active Directory: Non-Linked Multi-Valued Attribute Size Limits":
 * past it, "The administrative limit for this request was exceeded"). */
#define SPN_MAX_WINDOWS 1200
/* On Samba (no record limit in ldb): what the lab verified one account takes, with no refusal
 * and a service ticket costing 53 ms against 26 at 2,000 (bench/spn-limit.sh, docs/scale.md) */
#define SPN_MAX_SAMBA 100000
#define KT_CHUNK      200 /* principals per 'net ads keytab add' */

extern const char pv_phases_samba_shares_sh[];
extern const char pv_phases_samba_unshare_sh[];
extern const char pv_phases_samba_keytab_list_sh[];
extern const char pv_phases_samba_keytab_remove_sh[];
extern const char pv_phases_samba_keytab_add_sh[];
extern const char pv_phases_samba_keytab_pl[];
extern const char pv_phases_samba_trust_sh[];
extern const char pv_phases_samba_keytab_net_sh[];
extern const char pv_phases_spn_record_sh[];

struct srv_run {
	const struct pv_env *env;
	const struct pv_playbook *pb;
	struct pv_remote *rem;
	struct pv_ldap *dir;
	const struct pv_secret *admin;
	struct pv_samba_facts f;
	char tag[PV_ENV_TAG_MAX];
	bool dry;
	struct pv_env_plan *plan;
	/* prepare */
	unsigned shares_made, shares_there, shares_missing;
	size_t spn_added, spn_there, spn_missing, kt_added;
	/* cleanup */
	size_t spn_removed, spn_left, kt_removed;
	/* the server's own DC, when it is not domain.dc */
	struct pv_phases_replica_wait repl;
};

/* ---- shares ---- */

/* Whether the probe saw every share made already: ours (the tag) and its folder there. */
static bool shares_all_there(struct srv_run *run)
{
	char name[PV_PLAYBOOK_NAME_MAX];

	for (unsigned k = 1; k <= run->pb->server.shares; k++) {
		const struct pv_samba_share *sh;

		if (pv_playbook_share_name(run->pb, k, name) != PV_OK ||
		    !(sh = pv_samba_share(&run->f, name)) || strcmp(sh->comment, run->tag) != 0 ||
		    !sh->dir_exists)
			return false;
	}
	return true;
}

/* One round trip: every share made when missing (directory first), or found ours. None when
 * the probe saw them all. */
static int ensure_shares(struct srv_run *run)
{
	const struct pv_playbook_server *s = &run->pb->server;
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT;
	char name[PV_PLAYBOOK_NAME_MAX];
	int r = PV_OK;

	/* server.smb_encrypt: each share's value is looked at by the script, every time */
	if (shares_all_there(run) && !s->smb_encrypt) {
		run->shares_there = s->shares;
		return PV_OK;
	}

	pv_remote_var(&sc, "tag", run->tag);
	pv_remote_var(&sc, "encrypt", s->smb_encrypt ? s->smb_encrypt : "");
	pv_remote_var(&sc, "dry", run->dry ? "1" : "0");
	pv_remote_var(&sc, "base", s->share_path);
	pv_buf_addstr(&sc, "set --");
	for (unsigned k = 1; k <= s->shares; k++) {
		if ((r = pv_playbook_share_name(run->pb, k, name)) != PV_OK)
			goto out;
		pv_buf_addstr(&sc, " ");
		pv_remote_quote(&sc, name);
	}
	pv_buf_addstr(&sc, "\n");
	pv_buf_addstr(&sc, pv_phases_samba_shares_sh);
	if ((r = pv_remote_sh(run->rem, "making the shares", &sc, NULL, 0, &out, NULL, 120)) !=
	    PV_OK)
		goto out;
	for (char *line = out.data, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char word[16] = "", sh[256] = "";

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		sscanf(line, "%15s %255s", word, sh);
		if (strcmp(word, "created") == 0) {
			run->shares_made++;
			pv_log(PV_LOG_INFO, "created share '%s' (%s/%s)", sh, s->share_path, sh);
		} else if (strcmp(word, "present") == 0) {
			run->shares_there++;
		} else if (strcmp(word, "encrypt") == 0) {
			pv_log(PV_LOG_INFO, "share '%s': smb encrypt = %s (server.smb_encrypt)", sh,
			       s->smb_encrypt);
		} else if (strcmp(word, "reencrypt") == 0) {
			pv_env_plan_add(run->plan, "set 'smb encrypt = %s' on share '%s'",
					s->smb_encrypt, sh);
		} else if (strcmp(word, "missing") == 0) {
			run->shares_missing++;
			pv_env_plan_add(run->plan, "create share '%s' (%s/%s)", sh, s->share_path,
					sh);
		} else if (strcmp(word, "conflict") == 0) {
			r = pv_error(PV_ECONFLICT,
				     "share '%s' exists on '%s' but is not lab '%s''s (its "
				     "comment is not '%s'); pick another server.share_template "
				     "or remove it",
				     sh, s->host.name, run->pb->lab, run->tag);
			goto out;
		} else if (strcmp(word, "nodir") == 0) {
			r = pv_error(PV_EREMOTE,
				     "cannot make the folder '%s/%s' on '%s' (disk full or "
				     "read-only?)",
				     s->share_path, sh, s->host.name);
			goto out;
		} else if (strcmp(word, "refused") == 0) {
			r = pv_error(PV_ECONFIG,
				     "Samba on '%s' refused the share '%s' (from "
				     "server.share_template '%s'): %s",
				     s->host.name, sh, s->share_template,
				     line + strlen(word) + strlen(sh) + 2);
			goto out;
		}
	}
out:
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* ---- SPNs ---- */

struct spn_list {
	char **v;
	size_t n, cap;
};

static int spn_push(struct spn_list *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **p = realloc(l->v, cap * sizeof(*p));

		if (!p)
			return pv_error(PV_EIO, "out of memory");
		l->v = p;
		l->cap = cap;
	}
	if (!(l->v[l->n] = strdup(s)))
		return pv_error(PV_EIO, "out of memory");
	l->n++;
	return PV_OK;
}

static void spn_release(struct spn_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* The SPNs this lab's aliases need: cifs/<alias> and cifs/<alias>.<dns domain>. A Kerberos
 * client asks for the name as typed (MIT with dns_canonicalize_hostname = false), so both. */
static int wanted_spns(const struct srv_run *run, struct spn_list *l)
{
	char alias[PV_PLAYBOOK_NAME_MAX], spn[600];
	int r;

	for (unsigned long n = 1; n <= run->pb->users.per_client; n++) {
		if ((r = pv_playbook_alias_name(run->pb, n, alias)) != PV_OK)
			return r;
		snprintf(spn, sizeof(spn), "cifs/%s", alias);
		if ((r = spn_push(l, spn)) != PV_OK)
			return r;
		snprintf(spn, sizeof(spn), "cifs/%s.%s", alias, run->pb->domain.dns_domain);
		if ((r = spn_push(l, spn)) != PV_OK)
			return r;
	}
	return PV_OK;
}

static int account_dn(struct srv_run *run, char **dn)
{
	char *desc = NULL;
	int r = pv_samba_account(run->dir, run->pb->domain.base_dn, run->f.netbios, dn, &desc);

	free(desc);
	if (r == PV_OK && !*dn)
		r = pv_error(PV_EDIR,
			     "the computer account %s$ of '%s' is not in the directory; run "
			     "provision join first",
			     run->f.netbios, run->pb->server.host.name);
	return r;
}

/* The SPNs on the computer account dn, as a set. */
static int account_spns(struct srv_run *run, const char *dn, struct pv_strset **out)
{
	char **vals = NULL;
	size_t n = 0;
	int found = 0, r;

	if ((r = pv_ldap_read_values(run->dir, dn, "servicePrincipalName", &found, &vals, &n)))
		return r;
	if (!(*out = pv_strset_new()))
		r = pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; r == PV_OK && i < n; i++)
		if (pv_strset_add(*out, vals[i]) < 0)
			r = pv_error(PV_EIO, "out of memory");
	pv_ldap_values_free(vals, n);
	return r;
}

/* Modify in chunks; a DC refusing one (e.g. an SPN another account holds: SPNs are unique in
 * a forest, MS-ADTS 3.1.1.5.3.1.1.4) stops with its message. */
static int spn_modify(struct srv_run *run, const char *dn, enum pv_ldap_mod op, char **v, size_t n)
{
	for (size_t i = 0; i < n; i += SPN_CHUNK) {
		size_t m = n - i < SPN_CHUNK ? n - i : SPN_CHUNK;
		enum pv_ldap_result res;
		int r = pv_ldap_modify_values(run->dir, dn, "servicePrincipalName", op,
					      (const char *const *)v + i, m, &res);

		if (r != PV_OK)
			return r;
		if (res != PV_LDAP_DONE)
			return pv_error_prefix(op == PV_LDAP_MOD_ADD ? PV_ECONFLICT : PV_EDIR,
					       "%s the alias SPNs",
					       op == PV_LDAP_MOD_ADD ? "adding" : "removing");
	}
	return PV_OK;
}

/* Principals (without the realm) in the server's keytab, into set and, when given, list. */
static int keytab_principals(struct srv_run *run, struct pv_strset *set, struct spn_list *list)
{
	struct pv_buf out = PV_BUF_INIT;
	int r;

	r = pv_samba_run_text(run->rem, "listing the keytab", pv_phases_samba_keytab_list_sh, NULL,
			      0, &out, NULL, 60);
	for (char *line = out.data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		char *at;

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if ((at = strrchr(line, '@')))
			*at = '\0';
		if (*line && pv_strset_add(set, line) < 0)
			r = pv_error(PV_EIO, "out of memory");
		else if (*line && list)
			r = spn_push(list, line);
	}
	pv_buf_release(&out, 0);
	return r;
}

/* body with the admin's ticket on the server (samba/samba.h). */
static int run_as_admin(struct srv_run *run, const char *what, const struct pv_buf *body)
{
	char princ[512];
	int st = 0, r;

	pv_env_admin_principal(&run->pb->domain, princ);
	r = pv_samba_as_admin(run->rem, princ, run->admin, what, body, &st, 300);
	if (r == PV_OK && st != 0) {
		char tail[1024];

		snprintf(tail, sizeof(tail), "%s", pv_errmsg());
		r = pv_error(st == 4 ? PV_ECRED : PV_EREMOTE, "%s on '%s' failed (status %d)%s%s",
			     what, run->pb->server.host.name, st, tail[0] ? ": " : "", tail);
	}
	return r;
}

/* Which alias SPNs this lab added is recorded on the server, in <share_path>/.provision-spns.
 * <lab> (one per line, written before the LDAP modify), so that cleanup removes exactly those:
 * not one that was there before, nor one another lab added (SPNs carry no tag of their own).
 * phases/scripts/spn-record.sh: action add (in appended), read (into out) or remove. */
static int spn_record(struct srv_run *run, const char *action, const struct pv_buf *in,
		      struct pv_buf *out)
{
	struct pv_buf sc = PV_BUF_INIT;
	char what[64];
	int r;

	snprintf(what, sizeof(what), "%s the alias SPN record",
		 !strcmp(action, "add")	   ? "writing"
		 : !strcmp(action, "read") ? "reading"
					   : "removing");
	pv_remote_var(&sc, "base", run->pb->server.share_path);
	pv_remote_var(&sc, "lab", run->pb->lab);
	pv_remote_var(&sc, "action", action);
	pv_buf_addstr(&sc, pv_phases_spn_record_sh);
	r = in && pv_buf_failed(in) ? pv_error(PV_EIO, "out of memory")
				    : pv_remote_sh(run->rem, what, &sc, in ? in->data : NULL,
						   in ? in->len : 0, out, NULL, 60);
	pv_buf_release(&sc, 0);
	return r;
}

static int record_spns(struct srv_run *run, const struct spn_list *add)
{
	struct pv_buf in = PV_BUF_INIT;
	int r;

	for (size_t i = 0; i < add->n; i++)
		pv_buf_addf(&in, "%s\n", add->v[i]);
	r = spn_record(run, "add", &in, NULL);
	pv_buf_release(&in, 0);
	return r;
}

/* The record as a set (empty when there is none). */
static int recorded_spns(struct srv_run *run, struct pv_strset *rec)
{
	struct pv_buf out = PV_BUF_INIT;
	int r;

	r = spn_record(run, "read", NULL, &out);
	for (char *line = out.data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (*line && pv_strset_add(rec, line) < 0)
			r = pv_error(PV_EIO, "out of memory");
	}
	pv_buf_release(&out, 0);
	return r;
}

/* The principals in names (lines) into the keytab Samba uses, with the keys of the account's
 * host/ entries, on the server as root, no ticket needed (samba/scripts/keytab.pl):
 * PV_OK; PV_ENOTIMPL when that cannot be done there (the caller uses 'net ads keytab add');
 * else the failure (the keytab is unchanged). */
static int clone_keys(struct srv_run *run, const struct pv_buf *names)
{
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT;
	int st = 0, r;

	pv_remote_var(&sc, "kt", run->f.keytab);
	pv_remote_var(&sc, "prog", pv_phases_samba_keytab_pl);
	pv_buf_addstr(&sc, pv_phases_samba_keytab_add_sh);
	r = pv_buf_failed(names)
		    ? pv_error(PV_EIO, "out of memory")
		    : pv_remote_sh(run->rem, "adding the alias principals to the keytab", &sc,
				   names->data, names->len, &out, &st, 300);
	if (r == PV_OK && st == 3) {
		pv_log(PV_LOG_DEBUG,
		       "keytab: the host/ keys cannot be copied on '%s' (%s): using "
		       "net ads keytab add",
		       run->pb->server.host.name, pv_errmsg());
		r = PV_ENOTIMPL;
	} else if (r == PV_OK && (st != 0 || !out.data || !strstr(out.data, "pv-kt added "))) {
		char tail[512];

		snprintf(tail, sizeof(tail), "%s", pv_errmsg());
		r = pv_error(PV_EREMOTE,
			     "adding the alias principals to the keytab of '%s' failed "
			     "(status %d)%s%s; the keytab is unchanged",
			     run->pb->server.host.name, st, tail[0] ? ": " : "", tail);
	}
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* Whether the DC is Samba (its rootDSE names the vendor; Windows AD's does not). */
static bool samba_dc(struct srv_run *run)
{
	char *vendor = NULL;
	int found = 0;
	bool samba;

	if (pv_ldap_read(run->dir, "", "vendorName", &found, &vendor) != PV_OK)
		return false;
	samba = vendor && strstr(vendor, "Samba");
	free(vendor);
	return samba;
}

/* Before any SPN is written: the account would hold have + adding values; above what the DC
 * can take, nothing is written and the message says so, with the numbers and the ways out. */
static int spn_room(struct srv_run *run, const char *dn, size_t have, size_t adding)
{
	size_t total = have + adding, max = SPN_MAX_WINDOWS;
	const char *env = getenv("PROVISION_SPN_MAX");
	bool samba = false;

	/* what any DC takes needs no question; past it, which DC this is. PROVISION_SPN_MAX
	 * sets the limit instead (a DC known to take more or less; the tests) */
	if (env && *env)
		max = strtoul(env, NULL, 10);
	else if (total > max && (samba = samba_dc(run)))
		max = SPN_MAX_SAMBA;
	if (!adding || total <= max)
		return PV_OK;
	return pv_error(
		PV_ECONFIG,
		"the alias SPNs would not fit: %s would hold %zu SPNs (%zu now, %zu to add: "
		"2 per alias, %lu aliases), more than the %zu %s; nothing was written. Use "
		"NTLM-only aliases (server.alias_spns: false: no SPN, the load logs on with "
		"NTLM), fewer aliases (at most %zu with users.per_client), or several "
		"servers (computer accounts), each with its share of the aliases",
		dn, total, have, adding, (unsigned long)run->pb->users.per_client, max,
		env && *env ? "PROVISION_SPN_MAX allows"
		: samba	    ? "this lab measured a Samba DC carrying (docs/scale.md)"
			    : "values Windows AD keeps on one object (its 8,110-byte record: "
			      "Microsoft's practical limit for non-linked multi-valued "
			      "attributes)",
		(max > have ? max - have : 0) / 2);
}

static int ensure_spns(struct srv_run *run)
{
	struct spn_list want = {0}, add = {0};
	struct pv_strset *have = NULL, *kt = NULL;
	struct pv_buf body = PV_BUF_INIT, names = PV_BUF_INIT;
	char *dn = NULL;
	size_t nkt = 0;
	int r;

	if ((r = wanted_spns(run, &want)) != PV_OK || (r = account_dn(run, &dn)) != PV_OK)
		goto out;
	if ((r = account_spns(run, dn, &have)) != PV_OK)
		goto out;
	if (!(kt = pv_strset_new())) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < want.n; i++) {
		if (pv_strset_has(have, want.v[i]))
			run->spn_there++;
		else if ((r = spn_push(&add, want.v[i])) != PV_OK)
			goto out;
	}
	if ((r = spn_room(run, dn, pv_strset_count(have), add.n)) != PV_OK)
		goto out;
	if (run->dry) {
		run->spn_missing = add.n;
		if (add.n)
			pv_env_plan_add(run->plan, "add %zu alias SPNs to %s", add.n, dn);
		goto out;
	}
	if (add.n && (r = record_spns(run, &add)) != PV_OK)
		goto out;
	if ((r = spn_modify(run, dn, PV_LDAP_MOD_ADD, add.v, add.n)) != PV_OK)
		goto out;
	run->spn_added = add.n;
	if (add.n)
		pv_log(PV_LOG_INFO, "added %zu alias SPNs (%s, ...) to %s", add.n, add.v[0], dn);
	if (!run->f.needs_keytab)
		goto out;
	/* the keytab: the missing principals (as the probe listed them, when it did: no round
	 * trip) get the keys of the account's host/ entries; else one 'net ads keytab add' per
	 * chunk of them */
	if (!run->f.keytab_listed && (r = keytab_principals(run, kt, NULL)) != PV_OK)
		goto out;
	for (size_t i = 0; i < want.n; i++) {
		if (pv_strset_has(run->f.keytab_listed ? run->f.principals : kt, want.v[i]))
			continue;
		pv_buf_addf(&names, "%s\n", want.v[i]);
		pv_buf_addstr(&body, nkt ? " " : "set -- ");
		pv_remote_quote(&body, want.v[i]);
		nkt++;
	}
	if (nkt) {
		const char *how = "copying the host/ keys";
		char chunk[16];

		if ((r = clone_keys(run, &names)) == PV_ENOTIMPL) {
			how = "net ads keytab add";
			snprintf(chunk, sizeof(chunk), "%d", KT_CHUNK);
			pv_buf_addstr(&body, "\n");
			pv_remote_var(&body, "chunk", chunk);
			pv_buf_addstr(&body, pv_phases_samba_keytab_net_sh);
			r = run_as_admin(run, "net ads keytab add", &body);
		}
		if (r != PV_OK)
			goto out;
		run->kt_added = nkt;
		pv_log(PV_LOG_INFO, "added %zu alias principals to the keytab of '%s' (%s)", nkt,
		       run->pb->server.host.name, how);
	}
out:
	pv_buf_release(&body, 0);
	pv_buf_release(&names, 0);
	pv_strset_free(have);
	pv_strset_free(kt);
	spn_release(&want);
	spn_release(&add);
	free(dn);
	return r;
}

/* ---- the server's own DC ---- */

/* The users of the plan that domain.dc holds, by name: one search there, then the plan's
 * names kept when found. */
static int made_users(struct srv_run *run, struct pv_strset *made, unsigned long *n)
{
	struct pv_strset *there = pv_strset_new();
	const struct pv_playbook *pb = run->pb;
	char name[PV_PLAYBOOK_NAME_MAX];
	unsigned long found = 0;
	int r = there ? pv_phases_replica_users(run->dir, pb, there, &found)
		      : pv_error(PV_EIO, "out of memory");

	*n = 0;
	for (size_t c = 0; r == PV_OK && c < pb->nclients; c++)
		for (unsigned long u = 1; r == PV_OK && u <= pb->users.per_client; u++) {
			if ((r = pv_playbook_user_name(pb, &pb->clients[c], u, name)) != PV_OK ||
			    !pv_strset_has(there, name))
				continue;
			if (pv_strset_add(made, name) < 0)
				r = pv_error(PV_EIO, "out of memory");
			(*n)++;
		}
	pv_strset_free(there);
	return r;
}

/* When the server's winbindd talks to another DC than domain.dc, the users dc made there
 * may not have reached it yet: its trees would meet "no such user". Wait for them. */
static int wait_own_dc(struct srv_run *run, const char *what)
{
	struct pv_strset *made;
	unsigned long n = 0;
	int r;

	if (!run->f.dc[0] || pv_phases_replica_is_main(&run->pb->domain, run->f.dc) ||
	    run->env->dry_run)
		return PV_OK;
	if (!(made = pv_strset_new()))
		return pv_error(PV_EIO, "out of memory");
	if ((r = made_users(run, made, &n)) == PV_OK && n)
		r = pv_phases_replica_wait_users(
			run->env, pv_phases_replica_name(&run->pb->domain, run->f.dc), made, n,
			what, &run->repl);
	pv_strset_free(made);
	if (r != PV_OK)
		return pv_error_prefix(r, "'%s' uses the DC %s", run->pb->server.host.name,
				       run->f.dc);
	return PV_OK;
}

/* ---- the phase ---- */

/* The admin secret, one SSH session to the server and its facts, and LDAP. */
static int connect_all(struct srv_run *run, bool need_joined)
{
	double t0;
	int r;

	if (!run->pb->has_server)
		return pv_error(PV_ECONFIG, "the playbook has no server: section");
	if ((r = pv_env_secret(run->env, PV_ENV_CRED_ADMIN, &run->admin)) != PV_OK)
		return r;
	if ((r = pv_env_host_connect(&run->pb->server.host, &run->rem)) != PV_OK)
		return r;
	t0 = pv_now();
	if ((r = pv_samba_probe(run->rem, PV_SAMBA_PROBE_QUICK, run->pb->lab, &run->f)) != PV_OK)
		return r;
	pv_log(PV_LOG_DEBUG, "srv: probed in %.3f s", pv_now() - t0);
	if (need_joined && !run->f.joined)
		return pv_error(PV_EFAIL,
				"'%s' is not joined to %s (net ads testjoin fails); run "
				"provision join first",
				run->pb->server.host.name, run->pb->domain.realm);
	t0 = pv_now();
	r = pv_env_domain_connect(&run->pb->domain, -1, run->admin, &run->dir);
	pv_log(PV_LOG_DEBUG, "dc: connected in %.3f s", pv_now() - t0);
	return r;
}

static void release(struct srv_run *run)
{
	pv_samba_facts_release(&run->f);
	pv_ldap_free(run->dir);
	pv_remote_free(run->rem);
}

int pv_phases_server_prepare(const struct pv_env *env, const struct pv_phases_trees_opts *o,
			     struct pv_phases_server_result *res)
{
	struct srv_run run = {.env = env, .pb = env->pb, .dry = env->dry_run, .plan = &res->plan};
	struct pv_phases_trees *trees = NULL;
	double t0 = pv_now();
	int r;

	pv_env_tag_lab(env->pb, run.tag);
	if ((r = connect_all(&run, true)) != PV_OK)
		goto out;
	if ((r = wait_own_dc(&run, "server")) != PV_OK)
		goto out;
	if ((r = pv_phases_trees_prepare(env, run.rem, &run.f, o, &res->trees, &trees)) != PV_OK)
		goto out;
	if ((r = ensure_shares(&run)) != PV_OK)
		goto out;
	if (env->pb->server.alias_spns && (r = ensure_spns(&run)) != PV_OK)
		goto out;
	r = pv_phases_trees_build(trees, &res->plan);
out:
	res->shares_made = run.shares_made;
	res->shares_present = run.shares_there;
	res->shares_missing = run.shares_missing;
	res->spns_added = run.spn_added;
	res->spns_present = run.spn_there;
	res->spns_missing = run.spn_missing;
	res->keytab_added = run.kt_added;
	snprintf(res->dc, sizeof(res->dc), "%s", run.f.dc);
	res->dc_users = run.repl.there;
	res->dc_wait = run.repl.behind ? run.repl.seconds : 0;
	res->seconds = pv_now() - t0;
	pv_phases_trees_free(trees);
	release(&run);
	return r;
}

void pv_phases_server_result_release(struct pv_phases_server_result *res)
{
	pv_env_plan_release(&res->plan);
}

/* ---- cleanup server ---- */

/* Whether spn is cifs/<alias> or cifs/<alias>.<dns domain> for an alias the template makes
 * with any n: the template's text around {n} with digits in place of {n}. */
static bool alias_spn(const struct pv_playbook *pb, const char *spn)
{
	char a1[256], a2[256], host[512];
	size_t pre = 0, suf = 0, l1, l2, hl, dl = strlen(pb->domain.dns_domain);

	if (strncasecmp(spn, "cifs/", 5) != 0)
		return false;
	snprintf(host, sizeof(host), "%s", spn + 5);
	hl = strlen(host);
	if (hl > dl + 1 && host[hl - dl - 1] == '.' &&
	    strcasecmp(host + hl - dl, pb->domain.dns_domain) == 0)
		host[hl -= dl + 1] = '\0';
	if (pv_playbook_names_expand(pb->server.alias_template, NULL, pb->server.host.name, 1, 0,
				     a1, sizeof(a1)) ||
	    pv_playbook_names_expand(pb->server.alias_template, NULL, pb->server.host.name, 22, 0,
				     a2, sizeof(a2)))
		return false;
	l1 = strlen(a1);
	l2 = strlen(a2);
	while (pre < l1 && a1[pre] == a2[pre])
		pre++;
	while (suf < l1 - pre && a1[l1 - 1 - suf] == a2[l2 - 1 - suf])
		suf++;
	if (strcmp(a1, a2) == 0) /* no {n}: the one alias */
		return strcasecmp(host, a1) == 0;
	if (hl < pre + suf + 1 || strncasecmp(host, a1, pre) != 0 ||
	    strcasecmp(host + hl - suf, a1 + l1 - suf) != 0)
		return false;
	if (host[pre] == '0')
		return false;
	for (size_t i = pre; i < hl - suf; i++)
		if (!isdigit((unsigned char)host[i]))
			return false;
	return true;
}

/* The recorded principals out of the keytab Samba uses, whichever it is (the dedicated file,
 * or the system keytab for 'system keytab' and 'secrets and keytab'); nothing with 'secrets
 * only'. Local to the server: no ticket is needed (samba/scripts/keytab-remove.sh). */
static int remove_keytab_entries(struct srv_run *run, const struct pv_strset *rec)
{
	struct spn_list ktl = {0}, gone = {0};
	struct pv_strset *kt = pv_strset_new();
	struct pv_buf sc = PV_BUF_INIT, in = PV_BUF_INIT, out = PV_BUF_INIT;
	const char *line;
	int r;

	if (!kt)
		return pv_error(PV_EIO, "out of memory");
	if ((r = keytab_principals(run, kt, &ktl)) != PV_OK)
		goto out;
	for (size_t i = 0; i < ktl.n; i++)
		if (pv_strset_has(rec, ktl.v[i]))
			pv_buf_addf(&in, "%s\n", ktl.v[i]);
	if (!in.len)
		goto out;
	if (run->dry) {
		pv_env_plan_add(run->plan, "take the alias principals out of the keytab of '%s'",
				run->pb->server.host.name);
		goto out;
	}
	pv_remote_var(&sc, "kt", run->f.keytab);
	pv_remote_var(&sc, "prog", pv_phases_samba_keytab_pl);
	pv_buf_addstr(&sc, pv_phases_samba_keytab_remove_sh);
	r = pv_buf_failed(&in)
		    ? pv_error(PV_EIO, "out of memory")
		    : pv_remote_sh(run->rem, "taking the alias principals out of the keytab", &sc,
				   in.data, in.len, &out, NULL, 120);
	/* only the script's own word that it is done counts: without it the record stays */
	if (r == PV_OK && (line = out.data ? strstr(out.data, "pv-kt removed ") : NULL))
		run->kt_removed = strtoul(line + 14, NULL, 10);
	else if (r == PV_OK && !(out.data && strstr(out.data, "pv-kt none")))
		r = pv_error(PV_EREMOTE,
			     "taking the alias principals out of the keytab of '%s' "
			     "did not say it was done; their record is kept",
			     run->pb->server.host.name);
out:
	pv_buf_release(&sc, 0);
	pv_buf_release(&in, 0);
	pv_buf_release(&out, 0);
	pv_strset_free(kt);
	spn_release(&ktl);
	spn_release(&gone);
	return r;
}

/* The alias SPNs this lab added (its record) off the computer account, and their principals
 * out of the keytab: one failing does not stop the other; the record goes once both are done. */
static int remove_spns(struct srv_run *run)
{
	struct spn_list del = {0};
	struct pv_strset *rec = pv_strset_new();
	char **vals = NULL, *dn = NULL, *desc = NULL, first[1024] = "";
	size_t nvals = 0;
	int found = 0, r, r2 = PV_OK;

	if (!rec)
		return pv_error(PV_EIO, "out of memory");
	if ((r = recorded_spns(run, rec)) != PV_OK)
		goto out;
	if (pv_strset_count(rec) == 0)
		goto out; /* nothing of this lab's */
	if ((r = pv_samba_account(run->dir, run->pb->domain.base_dn, run->f.netbios, &dn, &desc)) !=
	    PV_OK)
		goto keytab;
	if (dn && (r = pv_ldap_read_values(run->dir, dn, "servicePrincipalName", &found, &vals,
					   &nvals)) != PV_OK)
		goto keytab;
	for (size_t i = 0; i < nvals; i++)
		if (pv_strset_has(rec, vals[i]) && (r = spn_push(&del, vals[i])) != PV_OK)
			goto out;
	for (size_t i = 0; i < nvals; i++)
		if (!pv_strset_has(rec, vals[i]) && alias_spn(run->pb, vals[i])) {
			run->spn_left++;
			if (!run->dry)
				pv_log(PV_LOG_INFO,
				       "alias SPN '%s' left on %s: lab '%s' did not add it",
				       vals[i], dn, run->pb->lab);
		}
	if (run->dry) {
		if (del.n)
			pv_env_plan_add(run->plan, "remove %zu alias SPNs from %s", del.n, dn);
	} else if ((r = spn_modify(run, dn, PV_LDAP_MOD_DELETE, del.v, del.n)) == PV_OK) {
		run->spn_removed = del.n;
	}
keytab:
	if (r != PV_OK)
		snprintf(first, sizeof(first), "%s", pv_errmsg());
	if (run->f.needs_keytab)
		r2 = remove_keytab_entries(run, rec);
	if (r != PV_OK && r2 != PV_OK)
		r = pv_error(r, "%s; and the keytab: %s", first, pv_errmsg());
	else if (r != PV_OK)
		r = pv_error(r, "%s", first);
	else
		r = r2;
out:
	/* everything recorded is gone now (or was gone already) */
	if (r == PV_OK && !run->dry && pv_strset_count(rec))
		r = spn_record(run, "remove", NULL, NULL);
	pv_strset_free(rec);
	pv_ldap_values_free(vals, nvals);
	spn_release(&del);
	free(dn);
	free(desc);
	return r;
}

/* Delete the shares tagged ours and their folders (trees included), then share_path when it
 * is left empty. Only a share whose comment is the tag is touched. */
static int remove_shares(struct srv_run *run, unsigned *removed)
{
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT;
	int r;

	*removed = 0;
	pv_remote_var(&sc, "tag", run->tag);
	pv_remote_var(&sc, "dry", run->dry ? "1" : "0");
	pv_remote_var(&sc, "base", run->pb->server.share_path);
	pv_buf_addstr(&sc, pv_phases_samba_unshare_sh);
	r = pv_remote_sh(run->rem, "removing the shares", &sc, NULL, 0, &out, NULL, 3600);
	for (char *line = out.data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (strncmp(line, "removed ", 8) == 0) {
			(*removed)++;
			pv_log(PV_LOG_INFO, "removed share '%s' and its folder", line + 8);
		} else if (strncmp(line, "would ", 6) == 0) {
			(*removed)++;
			pv_env_plan_add(run->plan,
					"remove share '%s' and its folder (the trees in it)",
					line + 6);
		} else if (strncmp(line, "failed ", 7) == 0) {
			r = pv_error(PV_EREMOTE, "cannot delete share '%s' on '%s'", line + 7,
				     run->pb->server.host.name);
		}
	}
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

int pv_phases_server_cleanup(const struct pv_env *env, struct pv_phases_server_cleanup_result *res)
{
	struct srv_run run = {.env = env, .pb = env->pb, .dry = env->dry_run, .plan = &res->plan};
	char first[1024] = "";
	double t0 = pv_now();
	int r, r2;

	pv_env_tag_lab(env->pb, run.tag);
	if ((r = connect_all(&run, false)) != PV_OK)
		goto out;
	/* SPNs first: their record lives in share_path, which remove_shares removes (unless the
	 * record is left, when the SPNs could not go: a re-run finds both). A failure of one does
	 * not stop the other. */
	if ((r = remove_spns(&run)) != PV_OK)
		snprintf(first, sizeof(first), "%s", pv_errmsg());
	r2 = remove_shares(&run, &res->shares_removed);
	if (r == PV_OK)
		r = r2;
	else if (r2 == PV_OK)
		r = pv_error(res->shares_removed ? PV_EPARTIAL : r,
			     "the shares are removed, but not the alias SPNs: %s", first);
	else
		r = pv_error(r, "%s; and the shares: %s", first, pv_errmsg());
out:
	res->spns_removed = run.spn_removed;
	res->spns_left = run.spn_left;
	res->keytab_removed = run.kt_removed;
	res->seconds = pv_now() - t0;
	release(&run);
	return r;
}

void pv_phases_server_cleanup_result_release(struct pv_phases_server_cleanup_result *res)
{
	pv_env_plan_release(&res->plan);
}

/* ---- status ---- */

int pv_phases_server_status(const struct pv_env *env, struct pv_phases_server_status *st)
{
	struct srv_run run = {.env = env, .pb = env->pb, .dry = true};
	struct spn_list want = {0};
	struct pv_strset *have = NULL;
	char *dn = NULL, *desc = NULL, name[PV_PLAYBOOK_NAME_MAX], tag[PV_ENV_TAG_MAX];
	int st_trust = 1, r;

	memset(st, 0, sizeof(*st));
	pv_env_tag_lab(env->pb, run.tag);
	pv_env_tag_join(env->pb, tag);
	if ((r = connect_all(&run, false)) != PV_OK)
		goto out;
	snprintf(st->account, sizeof(st->account), "%s$", run.f.netbios);
	snprintf(st->dc, sizeof(st->dc), "%s", run.f.dc);
	/* what the server's own DC holds, once it has caught up (or the wait ran out) */
	if (run.f.joined && (r = wait_own_dc(&run, "status")) != PV_OK) {
		st->dc_behind = true;
		snprintf(st->dc_msg, sizeof(st->dc_msg), "%s", pv_errmsg());
	}
	st->dc_users = run.repl.there;
	st->dc_wanted = run.repl.want;
	st->joined = run.f.joined;
	st->smbd = run.f.smbd_running;
	st->winbindd = run.f.winbindd_running;
	if (st->joined && st->winbindd &&
	    (r = pv_samba_run_text(run.rem, "wbinfo -t", pv_phases_samba_trust_sh, NULL, 0, NULL,
				   &st_trust, 60)) != PV_OK)
		goto out;
	st->trust = st_trust == 0;
	st->shares_planned = env->pb->server.shares;
	for (unsigned k = 1; k <= env->pb->server.shares; k++) {
		const struct pv_samba_share *sh;

		if ((r = pv_playbook_share_name(env->pb, k, name)) != PV_OK)
			goto out;
		sh = pv_samba_share(&run.f, name);
		st->shares_present += sh && strcmp(sh->comment, run.tag) == 0 && sh->dir_exists;
	}
	if (env->pb->server.alias_spns && (r = wanted_spns(&run, &want)) != PV_OK)
		goto out;
	st->spns_planned = want.n;
	if ((r = pv_samba_account(run.dir, env->pb->domain.base_dn, run.f.netbios, &dn, &desc)) !=
	    PV_OK)
		goto out;
	st->ours = dn && desc && strcmp(desc, tag) == 0;
	if (dn) {
		if ((r = account_spns(&run, dn, &have)) != PV_OK)
			goto out;
		for (size_t i = 0; i < want.n; i++)
			st->spns_present += pv_strset_has(have, want.v[i]);
	}
	r = pv_phases_trees_status(env, run.rem, &run.f, &st->trees_skipped, &st->trees_planned,
				   &st->trees_complete);
out:
	pv_strset_free(have);
	spn_release(&want);
	free(dn);
	free(desc);
	release(&run);
	return r;
}
