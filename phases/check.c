/* phases/check.c: the preflight (see check.h). */
#include "env/target.h"
#include "krb/krb.h"
#include "phases/check.h"
#include "phases/needs.h"
#include "phases/phase.h"

#include "ldap/dir.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "smb/smb.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fanout.h"
#include "util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define checks pv_phases_check_result

void pv_phases_check_add(struct pv_phases_check_result *c, const char *check, const char *target,
			 const char *status, int code, const char *fmt, ...)
{
	static struct pv_phases_check_item oom = {"check", "", "fail", PV_EIO, "out of memory"};
	struct pv_phases_check_item *r;
	va_list ap;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		struct pv_phases_check_item *n = realloc(c->items, cap * sizeof(*n));

		if (!n) {
			if (c->on_item)
				c->on_item(&oom, c->arg);
			c->first_fail = c->first_fail ? c->first_fail : PV_EIO;
			return;
		}
		c->items = n;
		c->cap = cap;
	}
	r = &c->items[c->n++];
	r->check = check;
	r->target = target;
	r->status = status;
	r->code = code;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	if (strcmp(status, "fail") == 0) {
		c->failed++;
		if (c->first_fail == PV_OK)
			c->first_fail = code;
	}
	if (c->on_item)
		c->on_item(r, c->arg);
}

#define add pv_phases_check_add

static void failed(struct checks *c, const char *check, const char *target, int code)
{
	add(c, check, target, "fail", code, "%s", pv_errmsg());
}

/* Resolve name; returns 0 and the first address as text, or the getaddrinfo error. */
static int resolve(const char *name, char *addr, size_t len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	int gai = getaddrinfo(name, NULL, &hints, &res);

	if (gai != 0)
		return gai;
	if (getnameinfo(res->ai_addr, res->ai_addrlen, addr, (socklen_t)len, NULL, 0,
			NI_NUMERICHOST) != 0)
		snprintf(addr, len, "?");
	freeaddrinfo(res);
	return 0;
}

static void check_dns(struct checks *c, const struct pv_playbook *pb)
{
	char addr[64];
	int gai;

	gai = resolve(pb->domain.dc_name, addr, sizeof(addr));
	if (gai != 0 && pb->domain.dc_address)
		add(c, "dns", pb->domain.dc_name, "ok", PV_OK,
		    "does not resolve here (%s): LDAP and Kerberos use domain.dc_address %s, and "
		    "TLS "
		    "is still checked against %s",
		    gai_strerror(gai), pb->domain.dc_address, pb->domain.dc_name);
	else if (gai != 0)
		add(c, "dns", pb->domain.dc_name, "fail", PV_EUNREACH,
		    "DC name '%s' does not resolve: %s; LDAPS and Kerberos need it (fix DNS or the "
		    "hosts file)",
		    pb->domain.dc_name, gai_strerror(gai));
	else if (pb->domain.dc_address && strcmp(addr, pb->domain.dc_address) != 0)
		add(c, "dns", pb->domain.dc_name, "warn", PV_OK,
		    "resolves to %s, but domain.dc_address is %s", addr, pb->domain.dc_address);
	else
		add(c, "dns", pb->domain.dc_name, "ok", PV_OK, "%s", addr);

	for (size_t i = 0; i < pb->nclients + 1; i++) {
		const struct pv_playbook_host *h = i == 0 ? &pb->server.host : &pb->clients[i - 1];

		if (i == 0 && !pb->has_server)
			continue;
		gai = resolve(h->name, addr, sizeof(addr));
		if (gai != 0)
			add(c, "dns", h->name, "warn", PV_OK,
			    "name does not resolve here (%s); SSH uses the address %s",
			    gai_strerror(gai), h->address);
		else if (h->address && strcmp(addr, h->address) != 0 &&
			 strspn(h->address, "0123456789.:abcdefABCDEF") == strlen(h->address))
			add(c, "dns", h->name, "warn", PV_OK,
			    "resolves to %s, but the playbook says %s", addr, h->address);
		else
			add(c, "dns", h->name, "ok", PV_OK, "%s", addr);
	}
}

/* The DC's CA on the controller, said plainly before a TLS handshake fails on it: there, and
 * holding PEM certificates (a bundle when other DCs have other CAs). */
static void check_ca(struct checks *c, const struct pv_playbook *pb)
{
	const char *f = pb->domain.ca_file;
	unsigned certs = 0;
	char line[512];
	FILE *fp;

	if (!f)
		return;
	if (!(fp = fopen(f, "r"))) {
		add(c, "needs", "controller", "fail", PV_ECONFIG,
		    "domain.ca_file '%s' cannot be read: %s; put there the CA certificate (PEM) "
		    "that "
		    "signed the DC's LDAPS certificate (a Samba DC: private/tls/ca.pem of its own; "
		    "Windows: the AD CS root CA's certificate)",
		    f, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), fp))
		certs += strncmp(line, "-----BEGIN CERTIFICATE-----", 27) == 0;
	fclose(fp);
	if (!certs)
		add(c, "needs", "controller", "fail", PV_ECONFIG,
		    "domain.ca_file '%s' holds no PEM certificate (no '-----BEGIN "
		    "CERTIFICATE-----' "
		    "line); convert a DER one with 'openssl x509 -inform der -in CA.cer -out "
		    "CA.pem'",
		    f);
	else
		add(c, "needs", "controller", "ok", PV_OK,
		    "domain.ca_file %s: %u PEM certificate%s", f, certs, certs == 1 ? "" : "s");
}

static void check_directory(struct checks *c, const struct pv_playbook *pb,
			    const struct pv_secret *admin)
{
	const struct pv_playbook_domain *d = &pb->domain;
	struct pv_ldap_target t;
	struct pv_ldap *dir = NULL;
	char *nc = NULL, *cc = NULL;
	int r;

	pv_env_target_dir(d, &t);
	r = pv_ldap_rootdse(&t, &nc);
	if (r != PV_OK)
		failed(c, "ldap", d->dc_name, r);
	else if (strcasecmp(nc, d->base_dn) != 0)
		add(c, "ldap", d->dc_name, "fail", PV_ECONFIG,
		    "the DC's naming context is '%s' but the playbook's base DN is '%s'; fix "
		    "domain.base_dn or domain.realm",
		    nc, d->base_dn);
	else
		add(c, "ldap", d->dc_name, "ok", PV_OK, "rootDSE over ldap://, naming context %s",
		    nc);
	free(nc);

	/* LDAPS with the CA whenever a CA is given; the configured transport when it differs. */
	if (d->ca_file) {
		r = admin ? pv_ldap_connect(&t, PV_LDAP_LDAPS, admin, &dir) : PV_ECONFIG;
		if (r == PV_OK)
			add(c, "ldaps", d->dc_name, "ok", PV_OK, "bound as %s (%s)", d->admin,
			    pv_ldap_security(dir));
		else if (admin)
			failed(c, "ldaps", d->dc_name, r);
		pv_ldap_free(dir);
		dir = NULL;
	}
	if (d->transport != PV_PLAYBOOK_LDAP_LDAPS && admin) {
		const char *name =
			d->transport == PV_PLAYBOOK_LDAP_STARTTLS ? "starttls" : "gssapi";

		r = pv_ldap_connect(&t, -1, admin, &dir);
		if (r == PV_OK)
			add(c, name, d->dc_name, "ok", PV_OK, "bound as %s (%s)", d->admin,
			    pv_ldap_security(dir));
		else
			failed(c, name, d->dc_name, r);
		pv_ldap_free(dir);
		dir = NULL;
	}
	if (admin) {
		r = pv_krb_kinit(&t.krb, d->admin, admin, &cc);
		if (r == PV_OK)
			add(c, "kerberos", d->realm, "ok", PV_OK, "ticket for %s@%s%s%s%s",
			    d->admin, d->realm, pv_krb_profile() ? " (KDC at " : "",
			    pv_krb_profile() ? d->dc_address : "",
			    pv_krb_profile() ? ": domain.dc_address, in a private profile)" : "");
		else
			failed(c, "kerberos", d->realm, r);
		pv_krb_destroy(cc);
		free(cc);
	}
}

/* The domain's other DCs: reachable, and bound to as the admin (their CA must be in the
 * CA file too); and which DC the controller itself uses. */
static void check_other_dcs(struct checks *c, const struct pv_playbook *pb,
			    const struct pv_secret *admin)
{
	const struct pv_playbook_domain *d = &pb->domain;

	add(c, "dc", "controller", "ok", PV_OK,
	    "writes to %s%s%s%s (domain.dc); %zu other DC%s named (domain.other_dcs)", d->dc_name,
	    d->dc_address ? " at " : "", d->dc_address ? d->dc_address : "", "", d->nother_dcs,
	    d->nother_dcs == 1 ? "" : "s");
	for (size_t i = 0; i < d->nother_dcs; i++) {
		struct pv_playbook_domain o = *d;
		struct pv_ldap_target t;
		struct pv_ldap *dir = NULL;
		int r;

		o.dc_name = d->other_dcs[i].name;
		o.dc_address = d->other_dcs[i].address;
		pv_env_target_dir(&o, &t);
		r = admin ? pv_ldap_connect(&t, -1, admin, &dir) : PV_ECONFIG;
		if (r == PV_OK)
			add(c, "ldap", o.dc_name, "ok", PV_OK, "another DC: bound as %s (%s)",
			    d->admin, pv_ldap_security(dir));
		else if (admin)
			failed(c, "ldap", o.dc_name, r);
		pv_ldap_free(dir);
	}
}

/* How check reaches a host over SSH, and what it asks there. */
enum probe_kind {
	PROBE_LINUX,   /* uname and which DC (which-dc.sh), and the prerequisites (needs.sh) */
	PROBE_WINDOWS, /* cmd /c ver */
	PROBE_CONNECT, /* the connection alone (a NAS: no shell to assume) */
};

struct probe {
	struct pv_playbook_host host;
	enum probe_kind kind;
	bool needs; /* needs.sh as role */
	enum pv_phases_needs_role role;
};

struct ssh_probe {
	const struct pv_playbook *pb;
	const struct probe *probes;
	char (*info)[256];
	char **facts; /* what the host printed after its first line: which DC, prerequisites */
};

extern const char pv_phases_which_dc_sh[];

static int probe_host(size_t i, void *arg)
{
	struct ssh_probe *p = arg;
	const struct probe *pr = &p->probes[i];
	const struct pv_playbook_host *h = &pr->host;
	struct pv_remote *rem = NULL;
	struct pv_buf out = PV_BUF_INIT, err = PV_BUF_INIT;
	struct pv_buf script = PV_BUF_INIT;
	const char *cmd = "cmd /c ver", *first = "";
	int status = 0, r;

	if (pr->kind == PROBE_LINUX) {
		/* which-dc.sh in a subshell (it ends with exit), then the prerequisites */
		pv_remote_var(&script, "realm", p->pb->domain.realm);
		pv_buf_addstr(&script, "(\n");
		pv_buf_addstr(&script, pv_phases_which_dc_sh);
		pv_buf_addstr(&script, "\n)\n");
		if (pr->needs)
			pv_phases_needs_script(p->pb, pr->role, &script);
		if (pv_buf_failed(&script)) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		cmd = script.data;
	}
	if ((r = pv_env_host_connect(h, &rem)) != PV_OK)
		goto out;
	if (pr->kind != PROBE_CONNECT) {
		if ((r = pv_remote_exec(rem, cmd, NULL, 0, &out, &err, &status, 0)) != PV_OK)
			goto out;
		if (status != 0) {
			r = pv_error(PV_EREMOTE, "'%s' on '%s' exited with status %d: %s",
				     pr->kind == PROBE_WINDOWS ? cmd : "uname -sn", h->name, status,
				     err.data ? err.data : "");
			goto out;
		}
	}
	if (out.data) {
		size_t n = strcspn(out.data, "\r\n");

		if (out.data[n] && !(p->facts[i] = strdup(out.data + n + 1))) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
		out.data[n] = '\0';
		first = out.data;
	}
	snprintf(p->info[i], sizeof(p->info[i]), "%s@%s:%d, host key verified%s%s", h->ssh.user,
		 h->address ? h->address : h->name, h->ssh.port,
		 pr->kind == PROBE_CONNECT ? " (no command run: server.kind nas)" : ": ", first);
out:
	pv_buf_release(&script, 0);
	pv_buf_release(&out, 0);
	pv_buf_release(&err, 0);
	pv_remote_free(rem);
	return r;
}

/* Which DC a host uses: its winbindd's (a member server), and the KDCs its krb5.conf names. */
static void check_uses(struct checks *c, const struct pv_playbook *pb,
		       const struct pv_playbook_host *h, const char *text)
{
	char kdc[256], wb[256];

	pv_phases_needs_fact(text, "kdc", kdc, sizeof(kdc));
	pv_phases_needs_fact(text, "winbind", wb, sizeof(wb));
	add(c, "dc", h->name, "ok", PV_OK, "%s%s%s%s%s", wb[0] ? "winbindd talks to " : "", wb,
	    wb[0] ? "; " : "",
	    kdc[0] ? "Kerberos KDC (krb5.conf): "
		   : "no KDC named in krb5.conf "
		     "for ",
	    kdc[0] ? kdc : pb->domain.realm);
}

/* The server's part in the probes: a Samba server is asked everything; a Windows server or a
 * NAS only when a drain command runs there (its SSH is then needed), and the watch, which reads
 * /proc over SSH, is said not to work there. */
static bool server_probe(struct checks *c, const struct pv_playbook *pb, struct probe *pr)
{
	const struct pv_playbook_server *s = &pb->server;

	memset(pr, 0, sizeof(*pr));
	pr->host = s->host;
	if (s->kind == PV_PLAYBOOK_SERVER_SAMBA) {
		pr->kind = PROBE_LINUX;
		pr->needs = true;
		pr->role = PV_PHASES_NEEDS_SERVER;
		return true;
	}
	if (pb->driver.watch > 0)
		add(c, "needs", s->host.name, "warn", PV_OK,
		    "driver.watch is %d, but server.kind is %s: the watch reads /proc and runs "
		    "perl "
		    "over SSH on the server, %s; set driver.watch: 0 to say so (run goes on "
		    "unwatched either way)",
		    pb->driver.watch, pv_playbook_server_kinds[s->kind],
		    s->kind == PV_PLAYBOOK_SERVER_WINDOWS ? "which a Windows server has not"
							  : "which a NAS may not have");
	if (!pb->has_drain)
		return false; /* nothing of provision's runs there */
	pr->kind = s->kind == PV_PLAYBOOK_SERVER_WINDOWS ? PROBE_WINDOWS : PROBE_CONNECT;
	pr->host.os = s->kind == PV_PLAYBOOK_SERVER_WINDOWS ? PV_PLAYBOOK_OS_WINDOWS
							    : PV_PLAYBOOK_OS_LINUX;
	return true;
}

static void check_ssh(struct checks *c, const struct pv_playbook *pb)
{
	size_t n = pb->nclients + 2, k = 0;
	struct probe *probes = calloc(n, sizeof(*probes));
	struct pv_fanout_result *res = calloc(n, sizeof(*res));
	struct ssh_probe p = {pb, probes, calloc(n, sizeof(*p.info)), calloc(n, sizeof(char *))};

	if (!probes || !res || !p.info || !p.facts) {
		add(c, "ssh", "", "fail", PV_EIO, "out of memory");
		goto out;
	}
	if (pb->has_server && server_probe(c, pb, &probes[k]))
		k++;
	for (size_t i = 0; i < pb->nclients; i++, k++) {
		probes[k].host = pb->clients[i];
		probes[k].kind =
			pb->clients[i].os == PV_PLAYBOOK_OS_WINDOWS ? PROBE_WINDOWS : PROBE_LINUX;
		probes[k].needs = true;
		probes[k].role = PV_PHASES_NEEDS_CLIENT;
	}
	if (pb->has_controller && pb->controller.host.name) {
		probes[k].host = pb->controller.host;
		/* FSCT's controller is a Windows host */
		probes[k].kind =
			pb->driver.kind == PV_PLAYBOOK_DRIVER_FSCT ? PROBE_WINDOWS : PROBE_LINUX;
		probes[k].host.os = pb->driver.kind == PV_PLAYBOOK_DRIVER_FSCT
					    ? PV_PLAYBOOK_OS_WINDOWS
					    : PV_PLAYBOOK_OS_LINUX;
		probes[k].needs = pb->driver.kind == PV_PLAYBOOK_DRIVER_COMMAND &&
				  pb->driver.controller_command;
		probes[k].role = PV_PHASES_NEEDS_CONTROLLER;
		k++;
	}
	if (k == 0)
		goto out;
	pv_fanout_run(k, pb->fanout, probe_host, &p, res);
	for (size_t i = 0; i < k; i++) {
		if (res[i].code == PV_OK)
			add(c, "ssh", probes[i].host.name, "ok", PV_OK, "%s", p.info[i]);
		else
			add(c, "ssh", probes[i].host.name, "fail", res[i].code, "%s", res[i].msg);
	}
	for (size_t i = 0; i < k; i++)
		if (res[i].code == PV_OK && probes[i].kind == PROBE_LINUX)
			check_uses(c, pb, &probes[i].host, p.facts[i]);
	for (size_t i = 0; i < k; i++)
		if (res[i].code == PV_OK && probes[i].needs && probes[i].kind == PROBE_LINUX)
			pv_phases_needs_judge(c, pb, probes[i].host.name, probes[i].role,
					      p.facts[i] ? p.facts[i] : "");
out:
	for (size_t i = 0; p.facts && i < n; i++)
		free(p.facts[i]);
	free(p.facts);
	free(p.info);
	free(res);
	free(probes);
}

/* The server through our own SMB2 client, as the tree builder will use it: connect, log on as
 * the admin, and connect to each share the playbook expects (before `prepare` made them,
 * NT_STATUS_BAD_NETWORK_NAME: said, not a failure), saying what the connection speaks (the
 * dialect, and what signing or encryption the server or the share requires). */
static void check_smb(struct checks *c, const struct pv_playbook *pb, const struct pv_secret *admin)
{
	const struct pv_playbook_host *h = &pb->server.host;
	struct pv_smb_sync *s = NULL;
	struct pv_buf there = PV_BUF_INIT, missing = PV_BUF_INIT;
	char spoke[128] = "";
	int r;

	r = pv_smb_sync_connect(h->address ? h->address : h->name, pb->domain.timeout, &s);
	if (r == PV_OK)
		r = pv_smb_sync_logon(s, pb->domain.netbios, pb->domain.admin, admin);
	for (unsigned k = 1; r == PV_OK && k <= pb->server.shares; k++) {
		char share[PV_PLAYBOOK_NAME_MAX];
		int tr;

		if ((r = pv_playbook_share_name(pb, k, share)) != PV_OK)
			break;
		tr = pv_smb_sync_tree(s, share);
		if (tr == PV_OK) {
			pv_buf_addf(&there, "%s%s", there.len ? ", " : "", share);
			snprintf(spoke, sizeof(spoke), "%s", pv_smb_sync_describe(s));
		} else if (tr == PV_ECONFIG) {
			pv_buf_addf(&missing, "%s%s", missing.len ? ", " : "", share);
		} else {
			r = tr;
		}
	}
	if (r == PV_OK && !spoke[0])
		snprintf(spoke, sizeof(spoke), "%s", pv_smb_sync_describe(s));
	if (r == PV_OK)
		pv_smb_sync_logoff(s);
	if (r == PV_OK && (pv_buf_failed(&there) || pv_buf_failed(&missing)))
		r = pv_error(PV_EIO, "out of memory");
	if (r == PV_OK && missing.len && pb->server.kind != PV_PLAYBOOK_SERVER_SAMBA)
		/* nothing of provision's makes them: they must be there before anything runs */
		add(c, "smb", h->name, "fail", PV_ECONFIG,
		    "logged on as %s\\%s (%s), but the shares %s are not there: server.kind is %s, "
		    "so provision does not make them; make them on the server, or set "
		    "server.shares and server.share_template to the shares it has",
		    pb->domain.netbios, pb->domain.admin, spoke, missing.data,
		    pv_playbook_server_kinds[pb->server.kind]);
	else if (r == PV_OK)
		add(c, "smb", h->name, "ok", PV_OK,
		    "logged on as %s\\%s with our SMB2 client (%s); %s%s%s%s%s", pb->domain.netbios,
		    pb->domain.admin, spoke, there.len ? "shares " : "",
		    there.len ? there.data : "", there.len && missing.len ? "; " : "",
		    missing.len ? "not there yet (prepare makes them): " : "",
		    missing.len ? missing.data : "");
	else if (r == PV_EUNREACH && pb->server.kind == PV_PLAYBOOK_SERVER_SAMBA)
		/* Before `provision join` starts smbd this is expected, so it is not a failure. */
		add(c, "smb", h->name, "warn", PV_OK,
		    "%s (expected before 'provision join' starts smbd)", pv_errmsg());
	else
		failed(c, "smb", h->name, r);
	pv_smb_sync_free(s);
	pv_buf_release(&there, 0);
	pv_buf_release(&missing, 0);
}

int pv_phases_check_run(const struct pv_env *env, const char *path,
			struct pv_phases_check_result *c)
{
	const struct pv_playbook *pb = env->pb;
	const struct pv_secret *admin = NULL, *users = NULL;
	int r;

	add(c, "playbook", path, "ok", PV_OK, "lab '%s', realm %s, %s%s, %zu client%s%s%s%s%s%s",
	    pb->lab, pb->domain.realm, pb->has_server ? "server " : "no server",
	    pb->has_server ? pb->server.host.name : "", pb->nclients, pb->nclients == 1 ? "" : "s",
	    pb->inventory ? " (group " : "", pb->inventory ? pb->inventory_group : "",
	    pb->inventory ? " of the inventory " : "", pb->inventory ? pb->inventory : "",
	    pb->inventory ? ")" : "");
	r = pv_env_secret(env, PV_ENV_CRED_ADMIN, &admin);
	if (r != PV_OK) {
		failed(c, "secret", "admin", r);
		admin = NULL;
	} else {
		add(c, "secret", "admin", "ok", PV_OK, "admin password read (%zu bytes)",
		    admin->len);
	}
	/* the users' password only when reading it asks nobody anything */
	if (pb->users.password.source == PV_PLAYBOOK_SECRET_FILE ||
	    pb->users.password.source == PV_PLAYBOOK_SECRET_ENV) {
		r = pv_env_secret(env, PV_ENV_CRED_USERS, &users);
		if (r != PV_OK)
			failed(c, "secret", "users", r);
		else
			add(c, "secret", "users", "ok", PV_OK, "users' password read (%zu bytes)",
			    users->len);
	}
	check_dns(c, pb);
	check_ca(c, pb);
	check_directory(c, pb, admin);
	check_other_dcs(c, pb, admin);
	check_ssh(c, pb);
	if (pb->has_server && admin)
		check_smb(c, pb, admin);
	return c->first_fail;
}

void pv_phases_check_result_release(struct pv_phases_check_result *c)
{
	free(c->items);
	c->items = NULL;
	c->n = c->cap = 0;
}
