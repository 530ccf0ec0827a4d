/* phases/needs.c: a host's prerequisites, judged (see needs.h). Every message names what is
 * missing, what needs it, and the fix; docs/your-servers.md has the same list. */
#include "phases/needs.h"

#include "remote/quote.h"
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

extern const char pv_phases_needs_sh[];

void pv_phases_needs_fact(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	out[0] = '\0';
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			snprintf(out, len, "%.*s", (int)strcspn(p + kl + 1, "\r\n"), p + kl + 1);
			return;
		}
}

void pv_phases_needs_script(const struct pv_playbook *pb, enum pv_phases_needs_role role,
			    struct pv_buf *out)
{
	static const char *const roles[] = {"server", "client", "controller"};
	char svc[256] = "";

	if (role == PV_PHASES_NEEDS_SERVER && pb->server.service)
		snprintf(svc, sizeof(svc), "%.*s", (int)strcspn(pb->server.service, " \t"),
			 pb->server.service);
	pv_remote_var(out, "role", roles[role]);
	pv_remote_var(out, "wg", pb->domain.netbios);
	pv_remote_var(out, "svc", svc);
	pv_buf_addstr(out, pv_phases_needs_sh);
}

/* One fact, by its key without the "n_" */
#define FACT(name, buf) pv_phases_needs_fact(facts, "n_" name, buf, sizeof(buf))

static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += wl)
		if ((p == list || strchr(" \t", p[-1])) && (!p[wl] || strchr(" \t[", p[wl])))
			return true;
	return false;
}

struct judge {
	struct pv_phases_check_result *c;
	const char *host;
	unsigned missing;
};

static void need(struct judge *j, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void need(struct judge *j, const char *status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pv_phases_check_add(j->c, "needs", j->host, status,
			    strcmp(status, "fail") ? PV_OK : PV_ECONFIG, "%s", msg);
	j->missing++;
}

static void root(struct judge *j, const char *facts, const char *why)
{
	char uid[32];

	FACT("uid", uid);
	if (uid[0] && strcmp(uid, "0") != 0)
		need(j, "fail",
		     "root: the SSH user has uid %s; %s as root: set ssh.user: root for this host "
		     "(key-based root logins: PermitRootLogin prohibit-password in its "
		     "sshd_config)",
		     uid, why);
}

/* Samba's side of a member server: the tools, smb.conf, the idmap, NSS, the service command. */
static void samba(struct judge *j, const struct pv_playbook *pb, const char *facts)
{
	static const char *const tools[] = {"net", "testparm", "wbinfo", "smbd", "winbindd"};
	char v[256], missing[128] = "", wg[64];
	size_t o = 0;

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char key[32];

		snprintf(key, sizeof(key), "n_%s", tools[i]);
		pv_phases_needs_fact(facts, key, v, sizeof(v));
		if (!v[0] && o < sizeof(missing))
			o += (size_t)snprintf(missing + o, sizeof(missing) - o, "%s%s",
					      o ? ", " : "", tools[i]);
	}
	if (missing[0])
		need(j, "fail",
		     "Samba: %s not found (PATH, /usr/sbin, /sbin): join and server run Samba's "
		     "tools there; install them (Debian: samba winbind libnss-winbind krb5-user), "
		     "or, for a server whose shares and trees are made another way, set "
		     "server.kind: windows or nas",
		     missing);
	FACT("svc", v);
	if (pb->server.service && !v[0])
		need(j, "fail",
		     "server.service: its command '%.*s' is not on the server: set "
		     "server.service to what starts and stops smbd and winbindd there (default: "
		     "systemctl {action} {unit})",
		     (int)strcspn(pb->server.service, " \t"), pb->server.service);
	FACT("nss_passwd", v);
	{
		char g[256];

		FACT("nss_group", g);
		if (!has_word(v, "winbind") || !has_word(g, "winbind"))
			need(j, "fail",
			     "nsswitch.conf: passwd: '%s', group: '%s', without winbind: "
			     "the server cannot see the domain's users (getent passwd), and "
			     "their home trees cannot be theirs; add winbind to both lines "
			     "(Debian: libnss-winbind)",
			     v, g);
	}
	FACT("testparm_failed", v);
	if (v[0]) {
		need(j, "fail",
		     "smb.conf: 'testparm -sv' printed nothing, so it does not load: run testparm "
		     "on the server and fix what it says");
		return;
	}
	FACT("security", v);
	if (!facts || !strstr(facts, "n_security="))
		return; /* no testparm: said above */
	if (strcasecmp(v, "ads") != 0)
		need(j, "fail",
		     "smb.conf: security = %s: a member server needs 'security = ads' in [global]",
		     v[0] ? v : "(unset)");
	FACT("realm", v);
	if (strcasecmp(v, pb->domain.realm) != 0)
		need(j, "fail", "smb.conf: realm = %s: set 'realm = %s' in [global]",
		     v[0] ? v : "(unset)", pb->domain.realm);
	{
		char shares[16], backend[32], inc[8];

		FACT("registry_shares", shares);
		FACT("config_backend", backend);
		FACT("include_registry", inc);
		if (strcasecmp(shares, "yes") != 0 && strcasecmp(backend, "registry") != 0 &&
		    !inc[0])
			need(j, "fail",
			     "smb.conf: registry shares = %s: server makes the lab's shares with "
			     "'net conf addshare', which smbd serves only with 'registry shares = "
			     "yes' (or 'include = registry') in [global]",
			     shares[0] ? shares : "no");
	}
	{
		char sb[64], sr[64], db[64], dr[64];

		FACT("idmap_star_backend", sb);
		FACT("idmap_star_range", sr);
		FACT("idmap_dom_backend", db);
		FACT("idmap_dom_range", dr);
		snprintf(wg, sizeof(wg), "%s", pb->domain.netbios);
		if (!sr[0] && !dr[0])
			need(j, "fail",
			     "smb.conf: no idmap range: winbindd gives the domain's users no "
			     "uid, so their home trees cannot be theirs; set 'idmap config * : "
			     "backend = tdb', 'idmap config * : range = 3000-7999', 'idmap "
			     "config %s : backend = rid' and 'idmap config %s : range = "
			     "10000-999999' in [global]",
			     wg, wg);
		else if (db[0] && !dr[0])
			need(j, "fail",
			     "smb.conf: 'idmap config %s : backend = %s' has no range: set 'idmap "
			     "config %s : range' (10000-999999, say) in [global]",
			     wg, db, wg);
		if (!strcasecmp(db, "ad") || (!db[0] && !strcasecmp(sb, "ad")))
			need(j, "fail",
			     "smb.conf: idmap backend ad maps only users with a uidNumber, and the "
			     "users dc makes have none: use 'idmap config %s : backend = rid' (or "
			     "'idmap config * : backend = autorid')",
			     wg);
	}
}

void pv_phases_needs_judge(struct pv_phases_check_result *c, const struct pv_playbook *pb,
			   const char *host, enum pv_phases_needs_role role, const char *facts)
{
	struct judge j = {c, host, 0};
	char perl[256];

	FACT("perl", perl);
	switch (role) {
	case PV_PHASES_NEEDS_SERVER:
		root(&j, facts,
		     "join and server run net, change Samba's registry and give the users "
		     "their folders");
		if (!perl[0])
			need(&j, "warn",
			     "perl is not installed: run cannot watch the server (its CPU, memory, "
			     "disks), 'server --via ssh' cannot build trees, and the alias "
			     "principals go into the keytab through the slow 'net ads keytab add'; "
			     "install perl (Debian: perl-base)");
		samba(&j, pb, facts);
		break;
	case PV_PHASES_NEEDS_CLIENT:
		root(&j, facts, "client writes the aliases into /etc/hosts");
		if (!perl[0])
			need(&j, "fail",
			     "perl is not installed: run starts every driver's work on a client "
			     "under its wrapper (run/scripts/run-client.pl), and refuses a client "
			     "without perl; install perl (Debian: perl-base)");
		break;
	case PV_PHASES_NEEDS_CONTROLLER: /* asked only when it runs driver.controller_command */
		if (!perl[0])
			need(&j, "fail",
			     "perl is not installed: run starts driver.controller_command there "
			     "under its wrapper (run/scripts/run-client.pl); install perl (Debian: "
			     "perl-base)");
		break;
	}
	if (!j.missing)
		pv_phases_check_add(
			c, "needs", host, "ok", PV_OK, "%s",
			role == PV_PHASES_NEEDS_SERVER
				? "root, perl, Samba's tools, server.service's command, "
				  "winbind in nsswitch.conf; smb.conf: security = ads, the "
				  "realm, registry shares, an idmap range"
			: role == PV_PHASES_NEEDS_CLIENT ? "root, perl"
							 : "perl (driver.controller_command)");
}
