/* provision/join.c: `provision join` and `provision cleanup join`: the file server's membership
 * of the domain, driven over SSH with Samba's own tools (kinit, net ads, wbinfo), and the
 * server-side helpers server.c shares (shell quoting, scripts run through `sh -c`, the
 * playbook's service command, the facts a probe gathers, the computer account in LDAP).
 *
 * The admin password only ever travels on the stdin of the remote kinit, which writes the
 * ticket into a private ccache (mktemp, removed on exit), so no password reaches a command
 * line or a shared ccache. The computer account this lab joins is tagged 'provision:<lab>' in
 * its description; cleanup leaves only a domain it finds tagged so. */
#include "provision/provision.h"

#include "ldap/encode.h"
#include "ldap/ops.h"
#include "remote/remote.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SKEW_WARN 60  /* seconds */
#define SKEW_MAX  300 /* Kerberos' default tolerance (krb5.conf clockskew, MS-KILE 3.1.1) */

/* The line of text that says why a command failed: the last one, unless a line reports a
 * full disk (tar, for one, names each file it could not write, then ends with a generic
 * "Exiting with failure status"): then the first such line. */
static void last_line(const char *text, char *out, size_t len)
{
	const char *end, *start, *full;

	out[0] = '\0';
	if (!text)
		return;
	if ((full = strstr(text, "No space left on device"))) {
		for (start = full; start > text && start[-1] != '\n'; start--)
			;
		end = strchr(full, '\n');
		snprintf(out, len, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
		return;
	}
	end = text + strlen(text);
	while (end > text && isspace((unsigned char)end[-1]))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

int pv_srv_run(struct pv_remote *rem, const char *what, const char *script, const void *in,
	       size_t inlen, struct pv_buf *out, int *status, int timeout)
{
	struct pv_buf cmd = PV_BUF_INIT, err = PV_BUF_INIT;
	char tail[512];
	int st = -1, r;

	if (pv_buf_addstr(&cmd, "sh -c ") < 0 || pv_remote_quote(&cmd, script) < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	r = pv_remote_exec(rem, cmd.data, in, inlen, out, &err, &st, timeout);
	if (r != PV_OK)
		goto out;
	if (err.data && err.len)
		pv_log(PV_LOG_DEBUG, "%s: %s: stderr: %s", pv_remote_name(rem), what, err.data);
	if (status) {
		*status = st;
		/* callers that look at the status may want the reason too */
		last_line(err.data, tail, sizeof(tail));
		pv_error(PV_OK, "%s", tail);
	} else if (st != 0) {
		last_line(err.data, tail, sizeof(tail));
		if (!tail[0] && out)
			last_line(out->data, tail, sizeof(tail));
		r = pv_error(PV_EREMOTE, "%s on '%s' failed (status %d)%s%s", what,
			     pv_remote_name(rem), st, tail[0] ? ": " : "", tail);
	}
out:
	pv_buf_release(&cmd, 0);
	pv_buf_release(&err, 0);
	return r;
}

int pv_srv_service(struct pv_remote *rem, const struct pv_server *s, const char *action,
		   const char *service)
{
	struct pv_buf cmd = PV_BUF_INIT, out = PV_BUF_INIT;
	char what[128];
	int r;

	for (const char *p = s->service; *p;) {
		if (strncmp(p, "{action}", 8) == 0) {
			pv_buf_addstr(&cmd, action);
			p += 8;
		} else if (strncmp(p, "{service}", 9) == 0) {
			pv_buf_addstr(&cmd, service);
			p += 9;
		} else {
			pv_buf_add(&cmd, p++, 1);
		}
	}
	if (!cmd.data)
		return pv_error(PV_EIO, "out of memory");
	snprintf(what, sizeof(what), "'%s %s' (server.service)", action, service);
	r = pv_srv_run(rem, what, cmd.data, NULL, 0, &out, NULL, 120);
	if (r == PV_OK) {
		last_line(out.data, what, sizeof(what));
		pv_log(PV_LOG_DEBUG, "%s: %s %s: %s", pv_remote_name(rem), action, service, what);
	}
	pv_buf_release(&cmd, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* What one round trip learns about the server: its NetBIOS name, whether it is a member, the
 * clock offset to the DC (only when $full is 1: 'net ads info' asks the DC), and whether
 * Kerberos needs (and, unless $quick is 1, has) a keytab. One 'testparm -sv' gives every
 * parameter. */
static const char probe_script[] =
	"command -v net >/dev/null || { echo 'net (Samba) is not installed' >&2; exit 3; }\n"
	"conf=$(testparm -sv 2>/dev/null)\n"
	"tp() { printf '%s\\n' \"$conf\" | sed -n \"s/^[[:space:]]*$1 = //p\" | head -n 1; }\n"
	"echo \"netbios=$(tp 'netbios name')\"\n"
	"echo \"realm=$(tp realm)\"\n"
	"echo \"security=$(tp security)\"\n"
	"echo \"kmethod=$(tp 'kerberos method')\"\n"
	"echo \"ktfile=$(tp 'dedicated keytab file' | sed 's/^FILE://')\"\n"
	"if [ \"$full\" = 1 ]; then\n"
	"  info=$(net ads info 2>&1 </dev/null)\n"
	"  echo \"offset=$(printf '%s\\n' \"$info\" | sed -n 's/^Server time offset: *//p')\"\n"
	"  echo \"info=$(printf '%s\\n' \"$info\" | tail -n 1)\"\n"
	"fi\n"
	"printf 'sep=%s\\n' \"$(tp 'winbind separator')\"\n"
	/* quick (server, cleanup server): winbindd's netlogon link to the DC, which needs the
	 * machine account, is what SMB logons use, and 'wbinfo -P' costs 45 ms where 'net ads
	 * testjoin' costs 250 (lab); testjoin still decides when it fails */
	"if [ \"$quick\" = 1 ] && wbinfo -P </dev/null >/dev/null 2>&1; then echo joined=1\n"
	"elif net ads testjoin </dev/null >/dev/null 2>&1; then echo joined=1; else echo joined=0; "
	"fi\n"
	"[ \"$quick\" = 1 ] || "
	"echo \"keytab=$(net ads keytab list </dev/null 2>/dev/null | grep -c '/')\"\n"
	"echo \"cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)\"\n"
	/* quick (server): the shares as Samba sees them (name, comment, whether the folder
	 * exists) and the keytab's principals, so that a re-run needs no 'net conf list' and no
	 * 'net ads keytab list' (klist reads a dedicated keytab in ~10 ms, net takes ~65) */
	"if [ \"$quick\" = 1 ]; then\n"
	"  us=$(printf '\\037')\n"
	"  printf '%s\\n' \"$conf\" | awk -v us=\"$us\" '\n"
	"    /^\\[/ { s = substr($0, 2, length($0) - 2); if (tolower(s) != \"global\") n[++k] = s; "
	"next }\n"
	"    k && $1 == \"comment\" { sub(/^[^=]*= ?/, \"\"); cm[k] = $0 }\n"
	"    k && $1 == \"path\" { sub(/^[^=]*= ?/, \"\"); pa[k] = $0 }\n"
	"    END { for (i = 1; i <= k; i++) print n[i] us cm[i] us pa[i] }' |\n"
	"  while IFS=\"$us\" read -r n c p; do\n"
	"    d=0; [ -n \"$p\" ] && [ -d \"$p\" ] && d=1\n"
	"    printf 'share=%s%s%s%s%s\\n' \"$n\" \"$us\" \"$c\" \"$us\" \"$d\"\n"
	"  done\n"
	"  case $(tp 'kerberos method') in *keytab*)\n"
	"    kf=$(tp 'dedicated keytab file')\n"
	"    if [ -n \"$kf\" ] && command -v klist >/dev/null 2>&1; then\n"
	"      klist -k \"$kf\" 2>/dev/null | awk 'NR > 3 { print \"kt=\" $2 }'\n"
	"    else\n"
	"      net ads keytab list </dev/null 2>/dev/null | awk 'NR > 1 { print \"kt=\" $3 }'\n"
	"    fi | sort -u\n"
	"    echo ktlisted=1;;\n"
	"  esac\n"
	"fi\n"
	/* by their pid files: on a host shared with other Samba instances pidof would lie */
	"piddir=$(tp 'pid directory')\n"
	"for d in smbd winbindd; do\n"
	"  pid=$(cat \"$piddir/$d.pid\" 2>/dev/null)\n"
	"  if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then echo $d=1; else echo $d=0; fi\n"
	"done\n";

static void fact(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);

	out[0] = '\0';
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(out, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
			return;
		}
		p = nl ? nl + 1 : NULL;
	}
}

int pv_srv_probe(struct pv_remote *rem, enum pv_probe how, struct pv_srv_facts *f)
{
	struct pv_buf out = PV_BUF_INIT, sc = PV_BUF_INIT;
	char v[512];
	int r;

	memset(f, 0, sizeof(*f));
	if (pv_buf_addf(&sc, "full=%d\nquick=%d\n%s", how == PV_PROBE_CLOCK, how == PV_PROBE_QUICK,
			probe_script) < 0)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(rem, "probing Samba", sc.data, NULL, 0, &out, NULL, 60);
	pv_buf_release(&sc, 0);
	if (r != PV_OK)
		goto out;
	fact(out.data, "netbios", f->netbios, sizeof(f->netbios));
	fact(out.data, "realm", f->realm, sizeof(f->realm));
	fact(out.data, "security", f->security, sizeof(f->security));
	fact(out.data, "info", f->info, sizeof(f->info));
	fact(out.data, "kmethod", v, sizeof(v));
	f->needs_keytab = strstr(v, "keytab") != NULL;
	if (strcmp(v, "dedicated keytab") == 0)
		fact(out.data, "ktfile", f->dedicated_keytab, sizeof(f->dedicated_keytab));
	fact(out.data, "offset", v, sizeof(v));
	f->has_offset = v[0] != '\0';
	f->offset = strtol(v, NULL, 10);
	fact(out.data, "joined", v, sizeof(v));
	f->joined = strcmp(v, "1") == 0;
	fact(out.data, "sep", f->sep, sizeof(f->sep));
	fact(out.data, "keytab", v, sizeof(v));
	f->keytab_entries = strtol(v, NULL, 10);
	fact(out.data, "cores", v, sizeof(v));
	f->cores = (unsigned)strtoul(v, NULL, 10);
	fact(out.data, "smbd", v, sizeof(v));
	f->smbd_running = strcmp(v, "1") == 0;
	fact(out.data, "winbindd", v, sizeof(v));
	f->winbindd_running = strcmp(v, "1") == 0;
	if (how == PV_PROBE_QUICK) { /* the share= and kt= lines, for server.c */
		if (!(f->lists = pv_buf_detach(&out)))
			r = pv_error(PV_EIO, "out of memory");
	}
	for (char *p = f->netbios; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	if (!f->netbios[0])
		r = pv_error(PV_EREMOTE,
			     "'%s' has no usable smb.conf ('testparm' found no netbios "
			     "name)",
			     pv_remote_name(rem));
out:
	pv_buf_release(&out, 0);
	return r;
}

void pv_srv_facts_release(struct pv_srv_facts *f)
{
	free(f->lists);
	f->lists = NULL;
}

struct account_find {
	char *dn, *desc;
};

static int take_account(const char *dn, const char *const *vals, void *arg)
{
	struct account_find *a = arg;

	if (a->dn)
		return PV_OK;
	a->dn = strdup(dn);
	a->desc = vals[0] ? strdup(vals[0]) : NULL;
	if (!a->dn || (vals[0] && !a->desc))
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

int pv_srv_account(struct pv_dir *dir, const struct pv_playbook *pb, const char *netbios, char **dn,
		   char **desc)
{
	struct pv_buf filter = PV_BUF_INIT, sam = PV_BUF_INIT;
	struct account_find a = {NULL, NULL};
	const char *attrs[] = {"description", NULL};
	int r;

	*dn = *desc = NULL;
	if (pv_buf_addf(&sam, "%s$", netbios) < 0 ||
	    pv_buf_addstr(&filter, "(&(objectClass=computer)(sAMAccountName=") < 0 ||
	    pv_filter_escape(&filter, sam.data) < 0 || pv_buf_addstr(&filter, "))") < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	r = pv_dir_search(dir, pb->domain.base_dn, filter.data, attrs, 100, take_account, &a);
	if (r == PV_OK) {
		*dn = a.dn;
		*desc = a.desc;
		a.dn = a.desc = NULL;
	}
out:
	free(a.dn);
	free(a.desc);
	pv_buf_release(&filter, 0);
	pv_buf_release(&sam, 0);
	return r;
}

void pv_srv_tag(char *out, size_t len, const struct pv_playbook *pb)
{
	/* Not the users' 'provision:<lab>': a computer is objectClass=user too (MS-ADSC), so a
	 * cleanup of the lab's users matching that tag would delete the server's account. */
	snprintf(out, len, "provision:%s:join", pb->lab);
}

/* The principal as kinit takes it: the admin with the realm appended when absent. */
static void admin_principal(const struct pv_domain *d, char *out, size_t len)
{
	if (strchr(d->admin, '@'))
		snprintf(out, len, "%s", d->admin);
	else
		snprintf(out, len, "%s@%s", d->admin, d->realm);
}

/* A script's prologue that gets a ticket for the admin into a private ccache; the password
 * comes on stdin and is read by kinit alone. */
static int kinit_prologue(struct pv_buf *s, const struct pv_domain *d)
{
	char princ[512];

	admin_principal(d, princ, sizeof(princ));
	pv_buf_addstr(s, "set -e\numask 077\n"
			 "cc=$(mktemp \"${TMPDIR:-/tmp}/provision-krb5cc.XXXXXX\")\n"
			 "trap 'rm -f \"$cc\"' EXIT\n"
			 "export KRB5CCNAME=\"FILE:$cc\"\n"
			 "if ! kinit ");
	pv_remote_quote(s, princ);
	return pv_buf_addstr(s, " >/dev/null; then echo 'kinit-failed' >&2; exit 4; fi\n");
}

/* Map the failure of a script that starts with kinit_prologue. */
static int kinit_failed(const char *host, const char *what, const char *tail, int status)
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

static int check_skew(const struct pv_srv_facts *f, const char *host, const char *realm)
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
static int do_join(struct pv_remote *rem, const struct pv_domain *d, const struct pv_srv_facts *f,
		   const struct pv_secret *admin, bool join)
{
	struct pv_buf s = PV_BUF_INIT;
	char tail[1024];
	int st = 0, r;

	kinit_prologue(&s, d);
	/* A keytab left by an earlier membership holds keys of an account that is gone (same
	 * kvno, other keys); 'keytab create' would keep them and Kerberos would fail. */
	if (join && f->dedicated_keytab[0] == '/') {
		pv_buf_addstr(&s, "rm -f -- ");
		pv_remote_quote(&s, f->dedicated_keytab);
		pv_buf_addstr(&s, "\n");
	}
	if (join)
		pv_buf_addstr(&s,
			      "net ads join --use-kerberos=required -N --no-dns-updates </dev/null "
			      ">&2\n");
	/* With 'kerberos method = dedicated keytab' the join writes no keytab, and Kerberos SMB
	 * then fails with NT_STATUS_INVALID_PARAMETER: make it. */
	if (f->needs_keytab)
		pv_buf_addstr(&s, "net ads keytab create --use-kerberos=required -N </dev/null "
				  ">&2\n");
	if (!s.data)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(rem, join ? "net ads join" : "net ads keytab create", s.data, admin->data,
		       admin->len, NULL, &st, 120);
	snprintf(tail, sizeof(tail), "%s", pv_errmsg());
	pv_buf_release(&s, 0);
	if (r != PV_OK)
		return r;
	if (st != 0)
		return kinit_failed(pv_remote_name(rem),
				    join ? "net ads join" : "net ads keytab create", tail, st);
	return PV_OK;
}

static const char verify_script[] =
	"i=0\n"
	"until wbinfo -t >/dev/null 2>&1; do\n"
	"  i=$((i + 1)); [ $i -lt 60 ] || { wbinfo -t >&2; exit 1; }; sleep 0.25\n"
	"done\n"
	"net ads testjoin </dev/null >&2 || exit 2\n";

static int start_services(struct pv_remote *rem, const struct pv_server *s, const char *action)
{
	int r;

	if ((r = pv_srv_service(rem, s, action, "winbindd")) != PV_OK)
		return r;
	return pv_srv_service(rem, s, action, "smbd");
}

static void join_summary(const struct pv_ctx *ctx, const char *state, const char *host,
			 const char *netbios, int code, double secs)
{
	if (ctx->json) {
		printf("{\"ok\":%s,\"exit\":%d,\"server\":", code == PV_OK ? "true" : "false",
		       code);
		pv_out_json_str(stdout, host);
		printf(",\"account\":\"%s$\",\"realm\":", netbios);
		pv_out_json_str(stdout, ctx->pb->domain.realm);
		printf(",\"state\":\"%s\",\"seconds\":%.3f}\n", state, secs);
		return;
	}
	if (code != PV_OK)
		return;
	if (strcmp(state, "present") == 0)
		printf("join: '%s' is already a member of %s (account %s$), trust verified; "
		       "nothing "
		       "changed\n",
		       host, ctx->pb->domain.realm, netbios);
	else if (strcmp(state, "started") == 0)
		printf("join: '%s' is already a member of %s (account %s$); smbd and winbindd "
		       "started, "
		       "trust verified\n",
		       host, ctx->pb->domain.realm, netbios);
	else if (strcmp(state, "dry-run") == 0)
		printf("join: would join '%s' to %s\n", host, ctx->pb->domain.realm);
	else
		printf("join: '%s' %s %s (account %s$), smbd and winbindd started, trust verified, "
		       "in "
		       "%.1f s\n",
		       host, strcmp(state, "joined") == 0 ? "joined" : "repaired its membership of",
		       ctx->pb->domain.realm, netbios, secs);
}

/* Tag the computer account as this lab's (only when it carries no other description). */
static int tag_account(struct pv_dir *dir, const struct pv_playbook *pb, const char *netbios,
		       const char *tag)
{
	const char *vals[] = {tag};
	enum pv_dir_result res;
	char *dn = NULL, *desc = NULL;
	int r;

	if ((r = pv_srv_account(dir, pb, netbios, &dn, &desc)) != PV_OK)
		goto out;
	if (!dn) {
		r = pv_error(PV_EDIR,
			     "the computer account %s$ is not in the directory after the join",
			     netbios);
		goto out;
	}
	if (desc && strcmp(desc, tag) != 0) {
		pv_log(PV_LOG_WARN,
		       "computer account '%s' has the description '%s'; not tagging it as "
		       "lab's, so cleanup join will not remove it",
		       dn, desc);
		goto out;
	}
	if (!desc) {
		r = pv_dir_modify_values(dir, dn, "description", PV_DIR_MOD_REPLACE, vals, 1, &res);
		if (r == PV_OK && res != PV_DIR_DONE)
			r = pv_error_prefix(PV_EDIR, "tagging the computer account");
	}
out:
	free(dn);
	free(desc);
	return r;
}

/* What join and cleanup join start with: the playbook, the server's tag, the admin secret,
 * one SSH session to the server and its facts (PV_PROBE_CLOCK: also read its clock). */
static int open_server(struct pv_ctx *ctx, enum pv_probe how, char *tag, size_t taglen,
		       struct pv_secret **admin, struct pv_remote **rem, struct pv_srv_facts *f)
{
	int r;

	if ((r = pv_ctx_load(ctx)) != PV_OK)
		return r;
	if (!ctx->pb->has_server)
		return pv_error(PV_ECONFIG, "the playbook has no server: section");
	pv_srv_tag(tag, taglen, ctx->pb);
	if ((r = pv_resolve_secret(ctx, &ctx->pb->domain.admin_password, "admin password",
				   admin)) != PV_OK)
		return r;
	if ((r = pv_remote_connect(&ctx->pb->server.host, rem)) != PV_OK)
		return r;
	return pv_srv_probe(*rem, how, f);
}

int pv_cmd_join(struct pv_ctx *ctx)
{
	struct pv_secret *admin = NULL;
	struct pv_remote *rem = NULL;
	struct pv_dir *dir = NULL;
	struct pv_srv_facts f;
	const char *state = "present", *host = "";
	char tag[64];
	double t0 = pv_now();
	int r;

	memset(&f, 0, sizeof(f));
	r = open_server(ctx, PV_PROBE_CLOCK, tag, sizeof(tag), &admin, &rem, &f);
	if (ctx->pb && ctx->pb->has_server)
		host = ctx->pb->server.host.name;
	if (r != PV_OK)
		goto out;
	if (strcasecmp(f.security, "ads") != 0 || strcasecmp(f.realm, ctx->pb->domain.realm) != 0) {
		r = pv_error(PV_ECONFIG,
			     "smb.conf on '%s' has security = %s, realm = %s; a member of %s "
			     "needs 'security = ads' and 'realm = %s'",
			     host, f.security[0] ? f.security : "(unset)",
			     f.realm[0] ? f.realm : "(unset)", ctx->pb->domain.realm,
			     ctx->pb->domain.realm);
		goto out;
	}
	if ((r = check_skew(&f, host, ctx->pb->domain.realm)) != PV_OK)
		goto out;
	if (f.joined && (!f.needs_keytab || f.keytab_entries > 0)) {
		/* a member already: make sure the services run ("start" on a running one is a
		 * no-op) and that the trust works */
		if (!f.smbd_running || !f.winbindd_running) {
			state = "started";
			if (!ctx->cli.opt[OPT_DRY_RUN] &&
			    (r = start_services(rem, &ctx->pb->server, "start")) != PV_OK)
				goto out;
		}
	} else if (ctx->cli.opt[OPT_DRY_RUN]) {
		state = "dry-run";
		goto done;
	} else {
		state = f.joined ? "repaired" : "joined";
		pv_log(PV_LOG_INFO, "%s '%s' to %s", f.joined ? "making the keytab of" : "joining",
		       host, ctx->pb->domain.realm);
		if ((r = do_join(rem, &ctx->pb->domain, &f, admin, !f.joined)) != PV_OK)
			goto out;
		if ((r = pv_dir_connect(&ctx->pb->domain, -1, admin, &dir)) != PV_OK ||
		    (!f.joined && (r = tag_account(dir, ctx->pb, f.netbios, tag)) != PV_OK))
			goto out;
		/* restart: a daemon that ran before the join holds the old identity */
		if ((r = start_services(rem, &ctx->pb->server,
					f.smbd_running ? "restart" : "start")))
			goto out;
	}
	if (!ctx->cli.opt[OPT_DRY_RUN]) {
		int st = 0;

		if ((r = pv_srv_run(rem, "wbinfo -t", verify_script, NULL, 0, NULL, &st, 60)) !=
		    PV_OK)
			goto out;
		if (st != 0) {
			r = pv_error(PV_EREMOTE, "'%s' is joined but %s fails: %s", host,
				     st == 1 ? "'wbinfo -t' (winbindd's trust)"
					     : "'net ads testjoin'",
				     pv_errmsg());
			goto out;
		}
	}
done:
	join_summary(ctx, state, host, f.netbios, r, pv_now() - t0);
out:
	if (r != PV_OK) {
		if (ctx->json && ctx->pb)
			join_summary(ctx, "failed", host, f.netbios, r, pv_now() - t0);
		pv_out_fail(r);
	}
	pv_dir_free(dir);
	pv_remote_free(rem);
	pv_secret_free(admin);
	return r;
}

/* ---- cleanup join ---- */

static int leave(struct pv_remote *rem, const struct pv_domain *d, const struct pv_srv_facts *f,
		 const struct pv_secret *admin)
{
	struct pv_buf s = PV_BUF_INIT;
	char tail[1024];
	int st = 0, r;

	kinit_prologue(&s, d);
	if (f->needs_keytab)
		/* flush the keytab, then remove the file when nothing is left in it */
		pv_buf_addstr(
			&s, "net ads keytab flush --use-kerberos=required -N </dev/null "
			    ">/dev/null || true\n"
			    "kt=$(testparm -s --parameter-name='dedicated keytab file' 2>/dev/null "
			    "| sed 's/^FILE://')\n"
			    "if [ -n \"$kt\" ] && [ -f \"$kt\" ] && ! klist -k \"$kt\" 2>/dev/null "
			    "| grep -q '@'; then rm -f \"$kt\"; fi\n");
	pv_buf_addstr(&s, "net ads leave -U ");
	pv_remote_quote(&s, d->admin);
	pv_buf_addstr(&s, " --use-kerberos=required -N </dev/null >&2\n");
	if (!s.data)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(rem, "net ads leave", s.data, admin->data, admin->len, NULL, &st, 120);
	snprintf(tail, sizeof(tail), "%s", pv_errmsg());
	pv_buf_release(&s, 0);
	if (r == PV_OK && st != 0)
		r = kinit_failed(pv_remote_name(rem), "net ads leave", tail, st);
	return r;
}

int pv_cmd_cleanup_join(struct pv_ctx *ctx)
{
	struct pv_secret *admin = NULL;
	struct pv_remote *rem = NULL;
	struct pv_dir *dir = NULL;
	struct pv_srv_facts f;
	char tag[64], *dn = NULL, *desc = NULL;
	bool want_leave = ctx->cli.opt[OPT_LEAVE] != NULL, ours, left = false, deleted = false;
	const char *host = "";
	double t0 = pv_now();
	int r;

	r = open_server(ctx, PV_PROBE_PLAIN, tag, sizeof(tag), &admin, &rem, &f);
	if (ctx->pb && ctx->pb->has_server)
		host = ctx->pb->server.host.name;
	if (r != PV_OK)
		goto out;
	if ((r = pv_dir_connect(&ctx->pb->domain, -1, admin, &dir)) != PV_OK)
		goto out;
	if ((r = pv_srv_account(dir, ctx->pb, f.netbios, &dn, &desc)) != PV_OK)
		goto out;
	ours = dn && desc && strcmp(desc, tag) == 0;
	if (!ours) {
		if (f.joined && want_leave) {
			r = pv_error(PV_ECONFLICT,
				     "'%s' is a member of %s, but lab '%s' did not join it "
				     "(its computer account %s$ is not tagged '%s'); "
				     "leave it yourself with 'net ads leave'",
				     host, ctx->pb->domain.realm, ctx->pb->lab, f.netbios, tag);
			goto out;
		}
		if (ctx->json)
			printf("{\"ok\":true,\"exit\":0,\"nothing_to_do\":true,\"joined\":%s}\n",
			       f.joined ? "true" : "false");
		else
			printf("cleanup join: nothing to do: %s\n",
			       f.joined ? "the server is a member, but not one this lab joined"
					: "the server is not joined by this lab");
		goto out;
	}
	if (ctx->cli.opt[OPT_DRY_RUN]) {
		printf("cleanup join: would stop smbd and winbindd on '%s'%s\n", host,
		       want_leave ? ", leave the domain and delete the computer account" : "");
		goto out;
	}
	if ((r = pv_srv_service(rem, &ctx->pb->server, "stop", "smbd")) != PV_OK ||
	    (r = pv_srv_service(rem, &ctx->pb->server, "stop", "winbindd")) != PV_OK)
		goto out;
	if (want_leave) {
		if (f.joined) {
			if ((r = leave(rem, &ctx->pb->domain, &f, admin)) != PV_OK)
				goto out;
			left = true;
		}
		/* net ads leave deletes the account; a server that lost its secrets cannot, so
		 * what is left (tagged ours) goes by LDAP */
		free(dn);
		free(desc);
		if ((r = pv_srv_account(dir, ctx->pb, f.netbios, &dn, &desc)) != PV_OK)
			goto out;
		if (dn && desc && strcmp(desc, tag) == 0) {
			enum pv_dir_result res;

			if ((r = pv_dir_delete(dir, dn, &res)) != PV_OK)
				goto out;
			if (res != PV_DIR_DONE && res != PV_DIR_NOSUCH) {
				r = pv_error_prefix(PV_EDIR, "deleting the computer account");
				goto out;
			}
		}
		deleted = true;
	}
	if (ctx->json)
		printf("{\"ok\":true,\"exit\":0,\"stopped\":true,\"left\":%s,\"account_deleted\":%"
		       "s,"
		       "\"seconds\":%.3f}\n",
		       left ? "true" : "false", deleted ? "true" : "false", pv_now() - t0);
	else if (want_leave)
		printf("cleanup join: '%s' left %s; computer account %s$ deleted; smbd and "
		       "winbindd "
		       "stopped\n",
		       host, ctx->pb->domain.realm, f.netbios);
	else
		printf("cleanup join: smbd and winbindd stopped on '%s'; still a member of %s "
		       "(pass "
		       "--leave to leave the domain and delete the computer account)\n",
		       host, ctx->pb->domain.realm);
out:
	if (r != PV_OK)
		pv_out_fail(r);
	free(dn);
	free(desc);
	pv_dir_free(dir);
	pv_remote_free(rem);
	pv_secret_free(admin);
	return r;
}
