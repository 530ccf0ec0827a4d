/* provision/server.c: `provision server` (the fsrootN shares, the cifs/ SPNs of every alias,
 * and the per-user home trees) and `provision cleanup server` (exactly those, and nothing
 * else).
 *
 * Shares are Samba registry shares (`net conf`), made in one SSH round trip and tagged with
 * the comment 'provision:<lab>'. SPNs go to the server's computer account in a few LDAP
 * modifies; with a keytab-based 'kerberos method' the alias principals also go into the
 * keytab, so Kerberos through an alias does not depend on how the acceptor matches keys.
 * Trees are built by tree.c. */
#include "provision/provision.h"

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
#define KT_CHUNK  200 /* principals per 'net ads keytab add' */

struct srv_run {
	struct pv_ctx *ctx;
	const struct pv_playbook *pb;
	struct pv_remote *rem;
	struct pv_dir *dir;
	struct pv_secret *admin;
	struct pv_srv_facts f;
	char tag[64];
	bool dry;
	unsigned shares_made, shares_there, shares_missing;
	size_t spn_added, spn_there, spn_missing, kt_added, spn_removed;
	bool kt_rebuilt;
};

static int share_name(const struct pv_playbook *pb, unsigned k, char *out, size_t len)
{
	return pv_names_expand(pb->server.share_template, NULL, pb->server.host.name, 0, k, out,
			       len);
}

static int alias_name(const struct pv_playbook *pb, unsigned long n, char *out, size_t len)
{
	int r = pv_names_expand(pb->server.alias_template, NULL, pb->server.host.name, n, 0, out,
				len);

	return r ? r : pv_names_check_host("alias", out);
}

/* ---- shares ---- */

/* The probe's "share=NAME\037COMMENT\037DIR" line for name (case-insensitive), or NULL. */
static const char *probed_share(const char *lists, const char *name, size_t *len)
{
	size_t nl = strlen(name);

	for (const char *p = lists; p && *p;) {
		const char *end = strchr(p, '\n');

		*len = end ? (size_t)(end - p) : strlen(p);
		if (strncmp(p, "share=", 6) == 0 && *len > 6 + nl && p[6 + nl] == '\037' &&
		    strncasecmp(p + 6, name, nl) == 0)
			return p + 7 + nl;
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* Whether the probe saw every share made already: ours (the tag) and its folder there. */
static bool shares_all_there(struct srv_run *run)
{
	char name[256];
	size_t len, tl = strlen(run->tag);

	if (!run->f.lists)
		return false;
	for (unsigned k = 1; k <= run->pb->server.shares; k++) {
		const char *rest;

		if (share_name(run->pb, k, name, sizeof(name)) != PV_OK ||
		    !(rest = probed_share(run->f.lists, name, &len)))
			return false;
		len -= 7 + strlen(name); /* "COMMENT\037DIR" */
		if (len != tl + 2 || strncmp(rest, run->tag, tl) != 0 || rest[tl] != '\037' ||
		    rest[tl + 1] != '1')
			return false;
	}
	return true;
}

/* One round trip: every share made when missing (directory first), or found ours. None when
 * the probe saw them all. */
static int ensure_shares(struct srv_run *run)
{
	const struct pv_server *s = &run->pb->server;
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT;
	char name[256];
	int r = PV_OK;

	if (shares_all_there(run)) {
		run->shares_there = s->shares;
		return PV_OK;
	}

	pv_buf_addstr(&sc, "tag=");
	pv_remote_quote(&sc, run->tag);
	pv_buf_addf(&sc, "\ndry=%d\nbase=", run->dry);
	pv_remote_quote(&sc, s->share_path);
	pv_buf_addstr(
		&sc,
		"\n[ \"$dry\" = 1 ] || mkdir -p \"$base\" || exit 9\n"
		/* one 'net conf list' (each net run costs ~0.1 s): the comment of share $1 from it,
		 * '-' when there is no such share (share names are case-insensitive) */
		"conf=$(net conf list 2>/dev/null)\n"
		"comment() { printf '%s\\n' \"$conf\" | awk -v s=\"$1\" 'BEGIN { s = \"[\" tolower(s) \"]\" }\n"
		"  /^\\[/ { f = (tolower($0) == s); if (f) found = 1; next }\n"
		"  f && $1 == \"comment\" { sub(/^[^=]*= ?/, \"\"); c = $0 }\n"
		"  END { if (!found) print \"-\"; else print c }'; }\n"
		"share() {\n"
		"  c=$(comment \"$1\")\n"
		"  if [ \"$c\" != - ]; then\n"
		"    if [ \"$c\" != \"$tag\" ]; then echo \"conflict $1\"; return 1; fi\n"
		"    [ \"$dry\" = 1 ] || mkdir -p \"$2\" || { echo \"nodir $1\"; return 1; }\n"
		"    echo \"present $1\"\n"
		"  elif [ \"$dry\" = 1 ]; then echo \"missing $1\"\n"
		"  else\n"
		"    made=0; [ -d \"$2\" ] || made=1\n"
		"    mkdir -p \"$2\" && chmod 0755 \"$2\" || { echo \"nodir $1\"; return 1; }\n"
		"    if o=$(net conf addshare \"$1\" \"$2\" writeable=y guest_ok=n \"$tag\" 2>&1); "
		"then\n"
		"      echo \"created $1\"\n"
		"    else\n"
		"      [ $made = 0 ] || rmdir -- \"$2\" 2>/dev/null\n"
		"      echo \"refused $1 $(printf '%s' \"$o\" | tr '\\n' ' ')\"\n"
		"      return 1\n"
		"    fi\n"
		"  fi\n"
		"}\n");
	for (unsigned k = 1; k <= s->shares; k++) {
		if ((r = share_name(run->pb, k, name, sizeof(name))) != PV_OK)
			goto out;
		pv_buf_addstr(&sc, "share ");
		pv_remote_quote(&sc, name);
		pv_buf_addf(&sc, " \"$base\"/");
		pv_remote_quote(&sc, name);
		pv_buf_addstr(&sc, " || { rmdir -- \"$base\" 2>/dev/null; exit 0; }\n");
	}
	if (!sc.data) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_srv_run(run->rem, "making the shares", sc.data, NULL, 0, &out, NULL, 120)) !=
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
		} else if (strcmp(word, "missing") == 0) {
			run->shares_missing++;
			pv_log(PV_LOG_INFO, "would create share '%s'", sh);
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
	char alias[256], spn[600];
	int r;

	for (unsigned long n = 1; n <= run->pb->users.per_client; n++) {
		if ((r = alias_name(run->pb, n, alias, sizeof(alias))) != PV_OK)
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
	int r = pv_srv_account(run->dir, run->pb, run->f.netbios, dn, &desc);

	free(desc);
	if (r == PV_OK && !*dn)
		r = pv_error(PV_EDIR,
			     "the computer account %s$ of '%s' is not in the directory; run "
			     "provision join first",
			     run->f.netbios, run->pb->server.host.name);
	return r;
}

/* Modify in chunks; a DC refusing one (e.g. an SPN another account holds: SPNs are unique in
 * a forest, MS-ADTS 3.1.1.5.3.1.1.4) stops with its message. */
static int spn_modify(struct srv_run *run, const char *dn, enum pv_dir_mod op, char **v, size_t n)
{
	for (size_t i = 0; i < n; i += SPN_CHUNK) {
		size_t m = n - i < SPN_CHUNK ? n - i : SPN_CHUNK;
		enum pv_dir_result res;
		int r = pv_dir_modify_values(run->dir, dn, "servicePrincipalName", op,
					     (const char *const *)v + i, m, &res);

		if (r != PV_OK)
			return r;
		if (res != PV_DIR_DONE)
			return pv_error_prefix(op == PV_DIR_MOD_ADD ? PV_ECONFLICT : PV_EDIR,
					       "%s the alias SPNs",
					       op == PV_DIR_MOD_ADD ? "adding" : "removing");
	}
	return PV_OK;
}

/* Principals (without the realm) in the server's keytab, into set and, when given, list.
 * from_probe: as the probe listed them, when it did (no round trip). */
static int keytab_principals(struct srv_run *run, bool from_probe, struct pv_strset *set,
			     struct spn_list *list)
{
	struct pv_buf out = PV_BUF_INIT;
	bool probed = from_probe && run->f.lists && strstr(run->f.lists, "\nktlisted=1\n");
	int r = PV_OK;

	if (probed) {
		if (pv_buf_addstr(&out, run->f.lists) < 0)
			r = pv_error(PV_EIO, "out of memory");
	} else {
		r = pv_srv_run(run->rem, "listing the keytab",
			       "net ads keytab list </dev/null 2>/dev/null | awk 'NR > 1 { print $3 "
			       "}' | sort -u",
			       NULL, 0, &out, NULL, 60);
	}
	for (char *line = out.data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		char *at;

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (probed) {
			if (strncmp(line, "kt=", 3) != 0)
				continue;
			line += 3;
		}
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

/* The kinit prologue of join.c, then commands; the admin password on stdin. */
static int run_as_admin(struct srv_run *run, const char *what, const char *body)
{
	struct pv_buf s = PV_BUF_INIT;
	char princ[512];
	int st = 0, r;

	if (strchr(run->pb->domain.admin, '@'))
		snprintf(princ, sizeof(princ), "%s", run->pb->domain.admin);
	else
		snprintf(princ, sizeof(princ), "%s@%s", run->pb->domain.admin,
			 run->pb->domain.realm);
	pv_buf_addstr(&s, "set -e\numask 077\n"
			  "cc=$(mktemp \"${TMPDIR:-/tmp}/provision-krb5cc.XXXXXX\")\n"
			  "trap 'rm -f \"$cc\"' EXIT\nexport KRB5CCNAME=\"FILE:$cc\"\n"
			  "if ! kinit ");
	pv_remote_quote(&s, princ);
	pv_buf_addstr(&s, " >/dev/null; then echo 'kinit as the admin failed' >&2; exit 4; fi\n");
	pv_buf_addstr(&s, body);
	if (!s.data)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(run->rem, what, s.data, run->admin->data, run->admin->len, NULL, &st, 300);
	pv_buf_release(&s, 0);
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
 * not one that was there before, nor one another lab added (SPNs carry no tag of their own). */
static int record_path(const struct srv_run *run, struct pv_buf *b)
{
	pv_buf_reset(b);
	pv_remote_quote(b, run->pb->server.share_path);
	pv_buf_addstr(b, "/");
	pv_remote_quote(b, ".provision-spns.");
	pv_remote_quote(b, run->pb->lab);
	return b->data ? PV_OK : pv_error(PV_EIO, "out of memory");
}

static int record_spns(struct srv_run *run, const struct spn_list *add)
{
	struct pv_buf sc = PV_BUF_INIT, path = PV_BUF_INIT, in = PV_BUF_INIT;
	int r;

	if ((r = record_path(run, &path)) != PV_OK)
		return r;
	pv_buf_addstr(&sc, "mkdir -p ");
	pv_remote_quote(&sc, run->pb->server.share_path);
	pv_buf_addf(&sc, " && cat >> %s", path.data);
	for (size_t i = 0; i < add->n; i++)
		pv_buf_addf(&in, "%s\n", add->v[i]);
	r = sc.data && in.data ? pv_srv_run(run->rem, "recording the alias SPNs", sc.data, in.data,
					    in.len, NULL, NULL, 60)
			       : pv_error(PV_EIO, "out of memory");
	pv_buf_release(&sc, 0);
	pv_buf_release(&path, 0);
	pv_buf_release(&in, 0);
	return r;
}

/* The record as a set (empty when there is none). */
static int recorded_spns(struct srv_run *run, struct pv_strset *rec)
{
	struct pv_buf sc = PV_BUF_INIT, path = PV_BUF_INIT, out = PV_BUF_INIT;
	int r;

	if ((r = record_path(run, &path)) != PV_OK)
		return r;
	pv_buf_addf(&sc, "cat %s 2>/dev/null || true", path.data);
	r = sc.data ? pv_srv_run(run->rem, "reading the alias SPN record", sc.data, NULL, 0, &out,
				 NULL, 60)
		    : pv_error(PV_EIO, "out of memory");
	for (char *line = out.data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (*line && pv_strset_add(rec, line) < 0)
			r = pv_error(PV_EIO, "out of memory");
	}
	pv_buf_release(&sc, 0);
	pv_buf_release(&path, 0);
	pv_buf_release(&out, 0);
	return r;
}

static int ensure_spns(struct srv_run *run)
{
	struct spn_list want = {0}, add = {0};
	struct pv_strset *have = NULL, *kt = NULL;
	struct pv_buf body = PV_BUF_INIT;
	char **vals = NULL, *dn = NULL;
	size_t nvals = 0, nkt = 0;
	int found = 0, r;

	if ((r = wanted_spns(run, &want)) != PV_OK || (r = account_dn(run, &dn)) != PV_OK)
		goto out;
	if ((r = pv_dir_read_values(run->dir, dn, "servicePrincipalName", &found, &vals, &nvals)))
		goto out;
	if (!(have = pv_strset_new()) || !(kt = pv_strset_new())) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nvals; i++)
		if (pv_strset_add(have, vals[i]) < 0) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
	for (size_t i = 0; i < want.n; i++) {
		if (pv_strset_has(have, want.v[i]))
			run->spn_there++;
		else if ((r = spn_push(&add, want.v[i])) != PV_OK)
			goto out;
	}
	if (run->dry) {
		run->spn_missing = add.n;
		if (add.n)
			pv_log(PV_LOG_INFO, "would add %zu SPNs to %s", add.n, dn);
		goto out;
	}
	if (add.n && (r = record_spns(run, &add)) != PV_OK)
		goto out;
	if ((r = spn_modify(run, dn, PV_DIR_MOD_ADD, add.v, add.n)) != PV_OK)
		goto out;
	run->spn_added = add.n;
	if (add.n)
		pv_log(PV_LOG_INFO, "added %zu alias SPNs (%s, ...) to %s", add.n, add.v[0], dn);
	if (!run->f.needs_keytab)
		goto out;
	/* the keytab: one 'net ads keytab add' per chunk of missing principals */
	if ((r = keytab_principals(run, true, kt, NULL)) != PV_OK)
		goto out;
	for (size_t i = 0; i < want.n; i++) {
		if (pv_strset_has(kt, want.v[i]))
			continue;
		if (nkt % KT_CHUNK == 0)
			pv_buf_addstr(&body, nkt ? " --use-kerberos=required -N </dev/null >&2\n"
						   "net ads keytab add"
						 : "net ads keytab add");
		pv_buf_addstr(&body, " ");
		pv_remote_quote(&body, want.v[i]);
		nkt++;
	}
	if (nkt) {
		pv_buf_addstr(&body, " --use-kerberos=required -N </dev/null >&2\n");
		if (!body.data) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		if ((r = run_as_admin(run, "net ads keytab add", body.data)) != PV_OK)
			goto out;
		run->kt_added = nkt;
		pv_log(PV_LOG_INFO, "added %zu alias principals to the keytab of '%s'", nkt,
		       run->pb->server.host.name);
	}
out:
	pv_buf_release(&body, 0);
	pv_strset_free(have);
	pv_strset_free(kt);
	pv_dir_values_free(vals, nvals);
	spn_release(&want);
	spn_release(&add);
	free(dn);
	return r;
}

/* ---- the command ---- */

static int connect_all(struct srv_run *run, bool need_joined)
{
	double t0;
	int r;

	if (!run->pb->has_server)
		return pv_error(PV_ECONFIG, "the playbook has no server: section");
	if ((r = pv_resolve_secret(run->ctx, &run->pb->domain.admin_password, "admin password",
				   &run->admin)) != PV_OK)
		return r;
	if ((r = pv_remote_connect(&run->pb->server.host, &run->rem)) != PV_OK)
		return r;
	t0 = pv_now();
	if ((r = pv_srv_probe(run->rem, PV_PROBE_QUICK, &run->f)) != PV_OK)
		return r;
	pv_log(PV_LOG_DEBUG, "srv: probed in %.3f s", pv_now() - t0);
	if (need_joined && !run->f.joined)
		return pv_error(PV_EFAIL,
				"'%s' is not joined to %s (net ads testjoin fails); run "
				"provision join first",
				run->pb->server.host.name, run->pb->domain.realm);
	t0 = pv_now();
	r = pv_dir_connect(&run->pb->domain, -1, run->admin, &run->dir);
	pv_log(PV_LOG_DEBUG, "dc: connected in %.3f s", pv_now() - t0);
	return r;
}

static void release(struct srv_run *run)
{
	pv_srv_facts_release(&run->f);
	pv_dir_free(run->dir);
	pv_remote_free(run->rem);
	pv_secret_free(run->admin);
}

int pv_cmd_server(struct pv_ctx *ctx)
{
	struct srv_run run = {.ctx = ctx};
	struct pv_tree_stats ts;
	struct pv_trees *trees = NULL;
	double t0 = pv_now();
	int r;

	memset(&ts, 0, sizeof(ts));
	if ((r = pv_ctx_load(ctx)) != PV_OK)
		goto out;
	run.pb = ctx->pb;
	run.dry = ctx->cli.opt[OPT_DRY_RUN] != NULL;
	snprintf(run.tag, sizeof(run.tag), "provision:%s", ctx->pb->lab);
	if ((r = connect_all(&run, true)) != PV_OK)
		goto out;
	if ((r = pv_trees_prepare(ctx, run.rem, &run.f, &ts, &trees)) != PV_OK)
		goto out;
	if ((r = ensure_shares(&run)) != PV_OK)
		goto out;
	if ((r = ensure_spns(&run)) != PV_OK)
		goto out;
	if ((r = pv_trees_build(trees)) != PV_OK)
		goto out;
	if (ctx->json) {
		printf("{\"ok\":true,\"exit\":0,\"dry_run\":%s,\"shares_created\":%u,"
		       "\"shares_present\":%u,\"spns_added\":%zu,\"spns_present\":%zu,"
		       "\"keytab_added\":%zu,",
		       run.dry ? "true" : "false", run.shares_made, run.shares_there, run.spn_added,
		       run.spn_there, run.kt_added);
		pv_tree_stats_json(stdout, &ts);
		printf(",\"seconds\":%.3f}\n", pv_now() - t0);
	} else if (run.dry) {
		printf("server: would create %u shares (%u present) and add %zu alias SPNs (%zu "
		       "present)\n",
		       run.shares_missing, run.shares_there, run.spn_missing, run.spn_there);
		pv_tree_stats_print(stdout, &ts);
	} else {
		printf("server: shares %u created, %u present; alias SPNs %zu added, %zu "
		       "present%s\n",
		       run.shares_made, run.shares_there, run.spn_added, run.spn_there,
		       run.kt_added ? " (keytab updated)" : "");
		pv_tree_stats_print(stdout, &ts);
	}
out:
	if (r != PV_OK)
		pv_out_fail(r);
	pv_trees_free(trees);
	release(&run);
	return r;
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
	if (pv_names_expand(pb->server.alias_template, NULL, pb->server.host.name, 1, 0, a1,
			    sizeof(a1)) ||
	    pv_names_expand(pb->server.alias_template, NULL, pb->server.host.name, 22, 0, a2,
			    sizeof(a2)))
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

static int remove_spns(struct srv_run *run)
{
	struct spn_list del = {0}, ktl = {0};
	struct pv_strset *kt = NULL, *rec = pv_strset_new();
	struct pv_buf sc = PV_BUF_INIT;
	char **vals = NULL, *dn = NULL, *desc = NULL;
	size_t nvals = 0;
	int found = 0, r;
	bool kt_alias = false;

	if (!rec)
		return pv_error(PV_EIO, "out of memory");
	if ((r = recorded_spns(run, rec)) != PV_OK)
		goto out;
	if ((r = pv_srv_account(run->dir, run->pb, run->f.netbios, &dn, &desc)) != PV_OK || !dn)
		goto out;
	if ((r = pv_dir_read_values(run->dir, dn, "servicePrincipalName", &found, &vals, &nvals)))
		goto out;
	for (size_t i = 0; i < nvals; i++)
		if (pv_strset_has(rec, vals[i]) && (r = spn_push(&del, vals[i])) != PV_OK)
			goto out;
	for (size_t i = 0; i < nvals && !run->dry; i++)
		if (!pv_strset_has(rec, vals[i]) && alias_spn(run->pb, vals[i]))
			pv_log(PV_LOG_INFO, "alias SPN '%s' left on %s: lab '%s' did not add it",
			       vals[i], dn, run->pb->lab);
	if (run->dry) {
		if (del.n)
			printf("cleanup server: would remove %zu alias SPNs from %s\n", del.n, dn);
		goto out;
	}
	if ((r = spn_modify(run, dn, PV_DIR_MOD_DELETE, del.v, del.n)) != PV_OK)
		goto out;
	run->spn_removed = del.n;
	if (!run->f.needs_keytab || !run->f.joined)
		goto out;
	/* Samba 4.17 has no 'net ads keytab delete', and 'flush' also clears every SPN of the
	 * account (ads_keytab_flush), host/ ones included: so the keytab is made anew beside
	 * the old one, which comes back if that fails. */
	if (!(kt = pv_strset_new())) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = keytab_principals(run, false, kt, &ktl)) != PV_OK)
		goto out;
	for (size_t i = 0; i < ktl.n && !kt_alias; i++)
		kt_alias = pv_strset_has(rec, ktl.v[i]);
	if (kt_alias) {
		r = run_as_admin(
			run, "rebuilding the keytab",
			"kt=$(testparm -s --parameter-name='dedicated keytab file' 2>/dev/null | "
			"sed 's/^FILE://')\n"
			"[ -n \"$kt\" ] && [ -f \"$kt\" ] || { echo \"no dedicated keytab file\" "
			">&2; exit 3; }\n"
			"mv -f -- \"$kt\" \"$kt.provision-old\"\n"
			"if net ads keytab create --use-kerberos=required -N </dev/null >&2; then\n"
			"  rm -f -- \"$kt.provision-old\"\n"
			"else mv -f -- \"$kt.provision-old\" \"$kt\"; exit 1; fi\n");
		run->kt_rebuilt = r == PV_OK;
	}
out:
	/* everything recorded is gone now (or was gone already) */
	if (r == PV_OK && !run->dry && record_path(run, &sc) == PV_OK) {
		struct pv_buf rm = PV_BUF_INIT;

		pv_buf_addf(&rm, "rm -f %s", sc.data);
		r = rm.data ? pv_srv_run(run->rem, "removing the alias SPN record", rm.data, NULL, 0,
					 NULL, NULL, 60)
			    : pv_error(PV_EIO, "out of memory");
		pv_buf_release(&rm, 0);
	}
	pv_buf_release(&sc, 0);
	pv_strset_free(rec);
	pv_strset_free(kt);
	pv_dir_values_free(vals, nvals);
	spn_release(&del);
	spn_release(&ktl);
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
	pv_buf_addstr(&sc, "tag=");
	pv_remote_quote(&sc, run->tag);
	pv_buf_addf(&sc, "\ndry=%d\nbase=", run->dry);
	pv_remote_quote(&sc, run->pb->server.share_path);
	pv_buf_addstr(
		&sc,
		"\nnet conf listshares 2>/dev/null | while IFS= read -r s; do\n"
		"  [ \"$(net conf getparm \"$s\" comment 2>/dev/null)\" = \"$tag\" ] || continue\n"
		"  p=$(net conf getparm \"$s\" path 2>/dev/null)\n"
		"  if [ \"$dry\" = 1 ]; then echo \"would $s\"; continue; fi\n"
		"  net conf delshare \"$s\" >&2 || { echo \"failed $s\"; continue; }\n"
		/* only a folder we would have made: <share_path>/<name> */
		"  if [ \"$p\" = \"$base/$s\" ] && [ -d \"$p\" ]; then rm -rf -- \"$p\"; fi\n"
		"  echo \"removed $s\"\n"
		"done\n"
		/* a template folder left by a killed --via ssh run */
		"[ \"$dry\" = 1 ] || rm -rf -- \"$base\"/.provision-tpl.*\n"
		"[ \"$dry\" = 1 ] || rmdir -- \"$base\" 2>/dev/null || true\n");
	if (!sc.data)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(run->rem, "removing the shares", sc.data, NULL, 0, &out, NULL, 3600);
	for (char *line = out.data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (strncmp(line, "removed ", 8) == 0) {
			(*removed)++;
			pv_log(PV_LOG_INFO, "removed share '%s' and its folder", line + 8);
		} else if (strncmp(line, "would ", 6) == 0) {
			(*removed)++;
			printf("cleanup server: would remove share '%s' and its folder\n",
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

int pv_cmd_cleanup_server(struct pv_ctx *ctx)
{
	struct srv_run run = {.ctx = ctx};
	unsigned removed = 0;
	double t0 = pv_now();
	int r;

	if ((r = pv_ctx_load(ctx)) != PV_OK)
		goto out;
	run.pb = ctx->pb;
	run.dry = ctx->cli.opt[OPT_DRY_RUN] != NULL;
	snprintf(run.tag, sizeof(run.tag), "provision:%s", ctx->pb->lab);
	if ((r = connect_all(&run, false)) != PV_OK)
		goto out;
	/* SPNs first: their record lives in share_path, which remove_shares removes */
	if ((r = remove_spns(&run)) != PV_OK)
		goto out;
	if ((r = remove_shares(&run, &removed)) != PV_OK)
		goto out;
	if (run.dry)
		goto out;
	if (ctx->json)
		printf("{\"ok\":true,\"exit\":0,\"shares_removed\":%u,\"spns_removed\":%zu,"
		       "\"keytab_rebuilt\":%s,\"seconds\":%.3f}\n",
		       removed, run.spn_removed, run.kt_rebuilt ? "true" : "false", pv_now() - t0);
	else if (removed == 0 && run.spn_removed == 0)
		printf("cleanup server: nothing to do: no share or alias SPN of lab '%s' on '%s'\n",
		       ctx->pb->lab, ctx->pb->server.host.name);
	else
		printf("cleanup server: removed %u shares (with their trees) and %zu alias SPNs%s "
		       "in "
		       "%.1f s\n",
		       removed, run.spn_removed, run.kt_rebuilt ? "; keytab rebuilt" : "",
		       pv_now() - t0);
out:
	if (r != PV_OK)
		pv_out_fail(r);
	release(&run);
	return r;
}
