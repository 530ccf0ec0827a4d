/* playbooks/lab_read.c: the playbook's sections that describe the lab: ssh, the domain (and its
 * other DCs, its secrets), users, the file server, the clients (listed or from an Ansible
 * inventory) and the controller, each read by one function over the typed getters of
 * schema.c. */
#include "playbooks/playbook_internal.h"

#include "playbooks/inventory.h"
#include "playbooks/names.h"
#include "playbooks/tree.h"
#include "util/buf.h"
#include "util/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_SSH_USER       "root"
#define DEFAULT_ADMIN	       "Administrator"
#define DEFAULT_USER_TEMPLATE  "{client}-u{n}"
#define DEFAULT_ALIAS_TEMPLATE "{server}u{n}"
#define DEFAULT_SHARE_TEMPLATE "fsroot{k}"
#define DEFAULT_SHARE_PATH     "/srv/provision"
#define DEFAULT_SERVICE	       "systemctl {action} {unit}"

static const char *const ssh_keys[] = {"user",	     "port",	"identity", "known_hosts",
				       "accept_new", "timeout", NULL};
static const char *const domain_keys[] = {"realm",
					  "netbios",
					  "dns_domain",
					  "base_dn",
					  "dc",
					  "dc_address",
					  "transport",
					  "ca_file",
					  "timeout",
					  "admin",
					  "admin_password",
					  "other_dcs",
					  "replication_timeout",
					  "ssh",
					  NULL};
static const char *const dc_ref_keys[] = {"name", "address", NULL};
static const char *const users_keys[] = {"per_client", "name_template", "ou", "password", NULL};
static const char *const server_keys[] = {
	"name",		  "address",	"ssh",	   "alias_template", "shares",
	"share_template", "share_path", "fileset", "service",	     "alias_spns",
	"smb_encrypt",	  "kind",	NULL};
const char *const pv_playbook_server_kinds[] = {"samba", "windows", "nas", NULL};
/* Samba's words for a share's "smb encrypt" (smb.conf(5), 4.17: "if_required" is its
 * default) */
static const char *const smb_encrypts[] = {"off", "if_required", "desired", "required", NULL};
static const char *const client_keys[] = {"name", "address", "os", "ssh", NULL};
static const char *const inventory_keys[] = {"inventory", "group", "hosts", NULL};
static const char *const override_keys[] = {"address", "os", "ssh", NULL};
static const char *const controller_keys[] = {"results", "host", NULL};
static const char *const chost_keys[] = {"name", "address", "ssh", NULL};
const char *const pb_secret_keys[] = {"file", "env", "stdin", "prompt", NULL};
static const char *const transports[] = {"ldaps", "starttls", "gssapi", NULL};
static const char *const oses[] = {"linux", "windows", NULL};

#define SECRET_FORMS "{file: PATH}, {env: NAME}, {stdin: true} or {prompt: true}"
#define NOT_A_NAME                                                                                 \
	"'%s' is not a variable name (not repeated here: it may be a password); expected a "       \
	"name of letters, digits and '_', not starting with a digit"

static void upcase(char *s)
{
	for (; *s; s++)
		*s = (char)toupper((unsigned char)*s);
}

static void downcase(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* A folder path as given for key (at v): normalized (playbooks/names.h), absolute when
 * absolute, and not the root folder. where ends the expected form ("on the server such as
 * /srv/provision"). */
static int check_folder(struct ctx *c, const struct pv_playbook_node *v, const char *key,
			const char *p, bool absolute, const char *where)
{
	char what[128], hint[192];

	snprintf(what, sizeof(what), "'%s'", key);
	snprintf(hint, sizeof(hint), "; expected %s normalized path %s",
		 absolute ? "an absolute," : "a", where);
	if (pv_playbook_names_check_path(what, p, absolute))
		return pv_playbook_schema_fail_recorded(&c->sc, v, NULL, hint);
	if (!strcmp(p, "/"))
		return pv_playbook_schema_fail(
			&c->sc, v, "'%s' is '/', the root folder; expected a folder below it%s",
			key, hint + 1);
	if (pv_playbook_names_check_safe(what, p, 1))
		return pv_playbook_schema_fail_recorded(&c->sc, v, NULL, NULL);
	return 0;
}

/* A template key: placeholders checked against allowed and required. */
static int get_template(struct ctx *c, const struct pv_playbook_node *map, const char *parent,
			const char *key, unsigned allowed, unsigned required, char **dst,
			const struct pv_playbook_node **at)
{
	const struct pv_playbook_node *v;
	const char *s;
	int r;

	if ((r = pv_playbook_schema_text(&c->sc, map, parent, key, "a name template", &s, &v)) ||
	    !s)
		return r;
	if (at)
		*at = v;
	if (pv_playbook_names_check_template(s, allowed, required)) {
		char path[256];

		pv_playbook_schema_key_path(path, sizeof(path), parent, key);
		return pv_playbook_schema_fail_recorded(&c->sc, v, path, NULL);
	}
	return pv_playbook_schema_set(dst, s);
}

void pb_ssh_release(struct pv_playbook_ssh *s)
{
	free(s->user);
	free(s->identity);
	free(s->known_hosts);
	memset(s, 0, sizeof(*s));
}

static int ssh_copy(struct pv_playbook_ssh *dst, const struct pv_playbook_ssh *src)
{
	*dst = *src;
	dst->user = dst->identity = dst->known_hosts = NULL;
	if ((src->user && !(dst->user = strdup(src->user))) ||
	    (src->identity && !(dst->identity = strdup(src->identity))) ||
	    (src->known_hosts && !(dst->known_hosts = strdup(src->known_hosts)))) {
		pb_ssh_release(dst);
		return pv_playbook_schema_oom();
	}
	return 0;
}

int pb_ssh_defaults(struct pv_playbook_ssh *s)
{
	memset(s, 0, sizeof(*s));
	s->port = 22;
	s->timeout = 10;
	s->user = strdup(DEFAULT_SSH_USER);
	if (asprintf(&s->known_hosts, "%s/.ssh/known_hosts", pv_playbook_schema_home()) < 0)
		s->known_hosts = NULL;
	if (!s->user || !s->known_hosts) {
		pb_ssh_release(s);
		return pv_playbook_schema_oom();
	}
	return 0;
}

/* Apply an ssh: mapping (at map[key]) over *s. */
int pb_parse_ssh(struct ctx *c, const struct pv_playbook_node *parent_map, const char *parent,
		 struct pv_playbook_ssh *s)
{
	const struct pv_playbook_node *m = pv_playbook_tree_get(parent_map, "ssh");
	char path[128];
	int r;

	if (!m)
		return 0;
	pv_playbook_schema_key_path(path, sizeof(path), parent, "ssh");
	if ((r = pv_playbook_schema_keys(&c->sc, m, path, ssh_keys,
					 "a mapping of ssh settings (user, port, ...)")) ||
	    (r = pv_playbook_schema_str(&c->sc, m, path, "user", "a login name", &s->user, NULL)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, path, "port", 1, 65535, &s->port)) ||
	    (r = pv_playbook_schema_path(&c->sc, m, path, "identity", &s->identity)) ||
	    (r = pv_playbook_schema_path(&c->sc, m, path, "known_hosts", &s->known_hosts)) ||
	    (r = pv_playbook_schema_bool(&c->sc, m, path, "accept_new", &s->accept_new)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, path, "timeout", 1, 3600, &s->timeout)))
		return r;
	return 0;
}

/* name, address, os and ssh of a host mapping already key-checked. */
static int parse_host(struct ctx *c, const struct pv_playbook_node *m, const char *path,
		      bool need_address, bool has_os, struct pv_playbook_host *h,
		      const struct pv_playbook_node **name_at)
{
	const char *expect = "a host name such as srv or srv.lab.test";
	int os = PV_PLAYBOOK_OS_LINUX, r;

	h->line = m->line;
	h->col = m->col;
	if ((r = pv_playbook_schema_require(&c->sc, m, path, "name", "HOST")) ||
	    (need_address &&
	     (r = pv_playbook_schema_require(&c->sc, m, path, "address", "IP-ADDRESS"))) ||
	    (r = pv_playbook_schema_dns(&c->sc, m, path, "name", true, expect, &h->name,
					name_at)) ||
	    (r = pv_playbook_schema_ip(&c->sc, m, path, "address", &h->address)) ||
	    (has_os && (r = pv_playbook_schema_enum(&c->sc, m, path, "os", oses, &os))) ||
	    (r = ssh_copy(&h->ssh, &c->ssh)) || (r = pb_parse_ssh(c, m, path, &h->ssh)))
		return r;
	h->os = (enum pv_playbook_os)os;
	return 0;
}

void pb_host_release(struct pv_playbook_host *h)
{
	free(h->name);
	free(h->address);
	pb_ssh_release(&h->ssh);
	memset(h, 0, sizeof(*h));
}

static int parse_secret(struct ctx *c, const struct pv_playbook_node *map, const char *parent,
			const char *key, struct pv_playbook_secret_ref *ref)
{
	const struct pv_playbook_node *m = pv_playbook_tree_get(map, key), *v;
	char path[256], sub[320];
	const char *s;
	bool yes;
	int r;

	if (!m)
		return 0;
	pv_playbook_schema_key_path(path, sizeof(path), parent, key);
	if (m->kind == PV_PLAYBOOK_NODE_SCALAR && !pv_playbook_tree_is_null(m)) {
		c->sc.redact = true; /* the value may be the password itself */
		r = pv_playbook_schema_fail(
			&c->sc, m,
			"plain string for '%s': secrets are not allowed in a playbook; "
			"use " SECRET_FORMS,
			path);
		c->sc.redact = false;
		return r;
	}
	/* an unknown key is not repeated: {Sup3r-Secret!} is a mapping whose key is a password */
	for (size_t i = 0; m->kind == PV_PLAYBOOK_NODE_MAPPING && i < m->n; i++) {
		bool known = false;
		char hint[64];

		for (size_t j = 0; pb_secret_keys[j] && !known; j++)
			known = !strcmp(pb_secret_keys[j], m->keys[i]->text);
		if (known)
			continue;
		pv_playbook_schema_suggest(m->keys[i]->text, pb_secret_keys, hint, sizeof(hint));
		return pv_playbook_schema_fail(
			&c->sc, m->keys[i],
			"unknown key in '%s'%s; expected one of: file, env, stdin, prompt (the "
			"key is not repeated here: it may be a password)",
			path, hint);
	}
	if ((r = pv_playbook_schema_keys(&c->sc, m, path, pb_secret_keys,
					 "a secret reference: " SECRET_FORMS)))
		return r;
	if (m->n != 1)
		return pv_playbook_schema_fail(
			&c->sc, m, "'%s' %s; expected exactly one of " SECRET_FORMS, path,
			m->n ? "names more than one source" : "is empty");
	ref->line = m->line;
	ref->col = m->col;
	v = m->items[0];
	pv_playbook_schema_key_path(sub, sizeof(sub), path, m->keys[0]->text);
	{
		char loc[512];

		c->sc.redact = true;
		pv_playbook_schema_where(&c->sc, v, loc, sizeof(loc));
		c->sc.redact = false;
		if ((r = pv_playbook_schema_set(&ref->where, loc)))
			return r;
	}
	if (!strcmp(m->keys[0]->text, "file")) {
		ref->source = PV_PLAYBOOK_SECRET_FILE;
		return pv_playbook_schema_path(&c->sc, m, path, "file", &ref->value);
	}
	if (!strcmp(m->keys[0]->text, "env")) {
		ref->source = PV_PLAYBOOK_SECRET_ENV;
		if ((r = pv_playbook_schema_text_at(&c->sc, v, sub, "an environment variable name",
						    &s)))
			return r;
		/* never repeated: a password written as {env: <password>} lands here */
		for (const char *p = s; *p; p++)
			if (!(isalnum((unsigned char)*p) || *p == '_') ||
			    isdigit((unsigned char)*s))
				return pv_playbook_schema_fail(&c->sc, v, NOT_A_NAME, sub);
		return pv_playbook_schema_set(&ref->value, s);
	}
	ref->source = !strcmp(m->keys[0]->text, "stdin") ? PV_PLAYBOOK_SECRET_STDIN
							 : PV_PLAYBOOK_SECRET_PROMPT;
	if ((r = pv_playbook_schema_text_at(&c->sc, v, sub, "true", &s)))
		return r;
	if (pv_playbook_schema_parse_bool(s, &yes) || !yes)
		return pv_playbook_schema_fail(
			&c->sc, v,
			"'%s' is not true (the value is not repeated here: it may be a "
			"password); expected true (leave the key out otherwise)",
			sub);
	return 0;
}

/* domain.other_dcs: [{name: DC2, address: IP}, ...], none of them the domain's dc; and
 * domain.replication_timeout. */
static int parse_other_dcs(struct ctx *c, const struct pv_playbook_node *m)
{
	struct pv_playbook_domain *d = &c->pb->domain;
	const struct pv_playbook_node *seq = pv_playbook_tree_get(m, "other_dcs"), *at;
	const char *expect = "the DC's host name as in its certificate, such as dc2.lab.test";
	char path[48];
	int r;

	d->replication_timeout = 600;
	if ((r = pv_playbook_schema_int(&c->sc, m, "domain", "replication_timeout", 0, 86400,
					&d->replication_timeout)) ||
	    !seq)
		return r;
	if (seq->kind != PV_PLAYBOOK_NODE_SEQUENCE || !seq->n)
		return pv_playbook_schema_fail(
			&c->sc, seq,
			"'domain.other_dcs' is %s; expected a sequence of DCs ('- {name: "
			"dc2.lab.test, address: IP}')",
			seq->kind == PV_PLAYBOOK_NODE_SEQUENCE ? "empty"
							       : pv_playbook_schema_kind(seq));
	if (!(d->other_dcs = calloc(seq->n, sizeof(*d->other_dcs))))
		return pv_playbook_schema_oom();
	for (size_t i = 0; i < seq->n; i++) {
		snprintf(path, sizeof(path), "domain.other_dcs.%zu", i);
		d->nother_dcs = i + 1;
		if ((r = pv_playbook_schema_keys(&c->sc, seq->items[i], path, dc_ref_keys,
						 "a mapping {name: DC, address: IP}")) ||
		    (r = pv_playbook_schema_require(&c->sc, seq->items[i], path, "name",
						    "DC-HOST-NAME")) ||
		    (r = pv_playbook_schema_dns(&c->sc, seq->items[i], path, "name", true, expect,
						&d->other_dcs[i].name, &at)) ||
		    (r = pv_playbook_schema_ip(&c->sc, seq->items[i], path, "address",
					       &d->other_dcs[i].address)))
			return r;
		if (!strcasecmp(d->other_dcs[i].name, d->dc_name))
			return pv_playbook_schema_fail(
				&c->sc, at,
				"'%s' is domain.dc itself; expected the domain's other DCs "
				"(dc is the one provision writes to)",
				d->other_dcs[i].name);
		for (size_t j = 0; j < i; j++)
			if (!strcasecmp(d->other_dcs[j].name, d->other_dcs[i].name))
				return pv_playbook_schema_fail(
					&c->sc, at, "DC '%s' is named twice; expected each DC once",
					d->other_dcs[i].name);
	}
	return 0;
}

int pb_parse_domain(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_domain *d = &c->pb->domain;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "domain"), *v;
	int transport = PV_PLAYBOOK_LDAP_LDAPS, r;
	const char *s;

	if ((r = pv_playbook_schema_require(&c->sc, root, "", "domain",
					    "{realm: ..., netbios: ..., dc: ..., ...}")) ||
	    (r = pv_playbook_schema_keys(&c->sc, m, "domain", domain_keys,
					 "a mapping of domain settings (realm, ...)")) ||
	    (r = pv_playbook_schema_require(&c->sc, m, "domain", "realm",
					    "REALM such as LAB.TEST")) ||
	    (r = pv_playbook_schema_require(&c->sc, m, "domain", "netbios",
					    "NETBIOS-NAME such as LAB")) ||
	    (r = pv_playbook_schema_require(&c->sc, m, "domain", "dc",
					    "DC-HOST-NAME such as dc.lab.test")) ||
	    (r = pv_playbook_schema_require(&c->sc, m, "domain", "admin_password", SECRET_FORMS)))
		return r;

	if ((r = pv_playbook_schema_dns(&c->sc, m, "domain", "realm", false,
					"a realm of letters, digits, '.' and '-' "
					"such as LAB.TEST",
					&d->realm, NULL)))
		return r;
	upcase(d->realm);
	if ((r = pv_playbook_schema_text(&c->sc, m, "domain", "netbios",
					 "a NetBIOS domain name such as LAB", &s, &v)))
		return r;
	if (pv_playbook_names_check_host("NetBIOS domain name", s))
		return pv_playbook_schema_fail_recorded(&c->sc, v, NULL, NULL);
	if ((r = pv_playbook_schema_set(&d->netbios, s)))
		return r;
	upcase(d->netbios);

	if ((r = pv_playbook_schema_set(&d->dns_domain, d->realm)))
		return r;
	if ((r = pv_playbook_schema_dns(&c->sc, m, "domain", "dns_domain", false,
					"a DNS domain such as lab.test", &d->dns_domain, NULL)))
		return r;
	downcase(d->dns_domain);
	if ((r = pv_playbook_schema_dn(&c->sc, m, "domain", "base_dn", &d->base_dn)))
		return r;
	if (!d->base_dn) {
		/* DC=<label> for each DNS label (RFC 2247) */
		struct pv_buf b = PV_BUF_INIT;

		for (const char *p = d->dns_domain; *p;) {
			size_t len = strcspn(p, ".");

			if (pv_buf_addf(&b, "%sDC=%.*s", b.len ? "," : "", (int)len, p) < 0) {
				pv_buf_release(&b, 0);
				return pv_playbook_schema_oom();
			}
			p += len;
			if (*p)
				p++;
		}
		if (!(d->base_dn = pv_buf_detach(&b)))
			return pv_playbook_schema_oom();
	}
	if ((r = pv_playbook_schema_dns(&c->sc, m, "domain", "dc", true,
					"the DC's host name as in its certificate, "
					"such as dc.lab.test",
					&d->dc_name, NULL)) ||
	    (r = pv_playbook_schema_ip(&c->sc, m, "domain", "dc_address", &d->dc_address)) ||
	    (r = pv_playbook_schema_enum(&c->sc, m, "domain", "transport", transports, &transport)))
		return r;
	d->transport = (enum pv_playbook_ldap_transport)transport;
	if (d->transport != PV_PLAYBOOK_LDAP_GSSAPI &&
	    (r = pv_playbook_schema_require(
		     &c->sc, m, "domain", "ca_file",
		     "PATH (the CA that signed the DC's certificate; needed unless transport "
		     "is gssapi)")))
		return r;
	d->timeout = 10;
	if ((r = pv_playbook_schema_path(&c->sc, m, "domain", "ca_file", &d->ca_file)) ||
	    (r = pv_playbook_schema_int(&c->sc, m, "domain", "timeout", 1, 3600, &d->timeout)) ||
	    (r = pv_playbook_schema_set(&d->admin, DEFAULT_ADMIN)) ||
	    (r = pv_playbook_schema_str(&c->sc, m, "domain", "admin",
					"an account name such as Administrator", &d->admin, &v)))
		return r;
	if (v && pv_playbook_names_check_account("'domain.admin'", d->admin))
		return pv_playbook_schema_fail_recorded(
			&c->sc, v, NULL, "; expected an account name such as Administrator");
	/* ssh: the DC is a host run can reach (its watch): by its address, else its name */
	if (pv_playbook_tree_get(m, "ssh")) {
		d->has_host = true;
		if ((r = pv_playbook_schema_set(&d->host.name, d->dc_name)) ||
		    (d->dc_address &&
		     (r = pv_playbook_schema_set(&d->host.address, d->dc_address))) ||
		    (r = ssh_copy(&d->host.ssh, &c->ssh)) ||
		    (r = pb_parse_ssh(c, m, "domain", &d->host.ssh)))
			return r;
	}
	if ((r = parse_other_dcs(c, m)))
		return r;
	return parse_secret(c, m, "domain", "admin_password", &d->admin_password);
}

int pb_parse_users(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_users *u = &c->pb->users;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "users");
	int r;

	u->per_client = 1;
	if ((r = pv_playbook_schema_set(&u->name_template, DEFAULT_USER_TEMPLATE)))
		return r;
	if (m) {
		if ((r = pv_playbook_schema_keys(&c->sc, m, "users", users_keys,
						 "a mapping of user settings (per_client, ...)")) ||
		    (r = pv_playbook_schema_uint(&c->sc, m, "users", "per_client", 1, 100000000,
						 &u->per_client, NULL)) ||
		    (r = get_template(c, m, "users", "name_template",
				      PV_PLAYBOOK_NAMES_CLIENT | PV_PLAYBOOK_NAMES_SERVER |
					      PV_PLAYBOOK_NAMES_N,
				      PV_PLAYBOOK_NAMES_N, &u->name_template, &c->name_template)) ||
		    (r = pv_playbook_schema_dn(&c->sc, m, "users", "ou", &u->ou)) ||
		    (r = parse_secret(c, m, "users", "password", &u->password)))
			return r;
	}
	if (!u->ou && asprintf(&u->ou, "OU=%s,%s", c->pb->lab, c->pb->domain.base_dn) < 0) {
		u->ou = NULL;
		return pv_playbook_schema_oom();
	}
	return 0;
}

int pb_parse_server(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_server *s = &c->pb->server;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "server"), *v;
	int r;

	if (!m)
		return 0;
	c->pb->has_server = true;
	s->shares = 1;
	if ((r = pv_playbook_schema_keys(
		     &c->sc, m, "server", server_keys,
		     "a mapping of file server settings (name, address, ...)")) ||
	    (r = parse_host(c, m, "server", true, false, &s->host, &c->server_name)) ||
	    (r = pv_playbook_schema_set(&s->alias_template, DEFAULT_ALIAS_TEMPLATE)) ||
	    (r = get_template(c, m, "server", "alias_template",
			      PV_PLAYBOOK_NAMES_SERVER | PV_PLAYBOOK_NAMES_N, PV_PLAYBOOK_NAMES_N,
			      &s->alias_template, &c->alias_template)) ||
	    (r = pv_playbook_schema_uint(&c->sc, m, "server", "shares", 1, 64, &s->shares, NULL)) ||
	    (r = pv_playbook_schema_set(&s->share_template, DEFAULT_SHARE_TEMPLATE)) ||
	    (r = get_template(c, m, "server", "share_template",
			      PV_PLAYBOOK_NAMES_SERVER | PV_PLAYBOOK_NAMES_K, PV_PLAYBOOK_NAMES_K,
			      &s->share_template, &c->share_template)) ||
	    (r = pv_playbook_schema_set(&s->share_path, DEFAULT_SHARE_PATH)) ||
	    (r = pv_playbook_schema_str(&c->sc, m, "server", "share_path",
					"an absolute path on the server", &s->share_path, &v)))
		return r;
	if (v && (r = check_folder(c, v, "server.share_path", s->share_path, true,
				   "on the server such as /srv/provision")))
		return r;
	if ((r = pv_playbook_schema_path(&c->sc, m, "server", "fileset", &s->fileset)) ||
	    (r = pv_playbook_schema_set(&s->service, DEFAULT_SERVICE)) ||
	    (r = pv_playbook_schema_str(&c->sc, m, "server", "service",
					"a command containing {action}", &s->service, &v)))
		return r;
	if (v && !strstr(s->service, "{action}"))
		return pv_playbook_schema_fail(
			&c->sc, v,
			"'server.service' has no {action}; expected a command such as "
			"'systemctl {action} {unit}'");
	if (pv_playbook_tree_get(m, "smb_encrypt")) {
		int e = -1;

		if ((r = pv_playbook_schema_enum(&c->sc, m, "server", "smb_encrypt", smb_encrypts,
						 &e)))
			return r;
		if ((r = pv_playbook_schema_set(&s->smb_encrypt, smb_encrypts[e])))
			return r;
	}
	if (pv_playbook_tree_get(m, "kind")) {
		int k = -1;

		if ((r = pv_playbook_schema_enum(&c->sc, m, "server", "kind",
						 pv_playbook_server_kinds, &k)))
			return r;
		s->kind = (enum pv_playbook_server_kind)k;
	}
	s->alias_spns = true;
	return pv_playbook_schema_bool(&c->sc, m, "server", "alias_spns", &s->alias_spns);
}

/* A client name not given twice: the first one named, with its line when it has one. */
static int unique_client(struct ctx *c, size_t i, const struct pv_playbook_node *name_at)
{
	struct pv_playbook *pb = c->pb;

	for (size_t j = 0; j < i; j++) {
		if (strcmp(pb->clients[j].name, pb->clients[i].name))
			continue;
		if (pb->clients[j].line)
			return pv_playbook_schema_fail(
				&c->sc, name_at,
				"duplicate client name '%s' (first at line %d); expected "
				"unique names",
				pb->clients[i].name, pb->clients[j].line);
		return pv_playbook_schema_fail(&c->sc, name_at,
					       "duplicate client name '%s'; expected unique names",
					       pb->clients[i].name);
	}
	return 0;
}

/* One inventory host as a client: the playbook's ssh defaults, then the inventory's
 * ansible_* values (an identity relative to the inventory's folder). */
static int inventory_client(struct ctx *c, const struct pv_playbook_inventory_host *ih,
			    const char *file, const char *idir, struct pv_playbook_host *h)
{
	const char *why;

	if ((why = pv_playbook_schema_bad_dns(ih->name, true)))
		return pv_error(PV_ECONFIG,
				"%s:%d: host name '%.64s' %s; expected a host name such as cli1 "
				"(provision names its users after it)",
				file, ih->line, ih->name, why);
	if (ih->address && !pv_playbook_schema_is_ip(ih->address) &&
	    (why = pv_playbook_schema_bad_dns(ih->address, true)))
		return pv_error(PV_ECONFIG,
				"%s:%d: host '%s': ansible_host '%.64s' %s; expected an IP address "
				"or a host name",
				file, ih->line, ih->name, ih->address, why);
	h->line = 0;
	if ((h->name = strdup(ih->name)) == NULL ||
	    (ih->address && !(h->address = strdup(ih->address))))
		return pv_playbook_schema_oom();
	if (ssh_copy(&h->ssh, &c->ssh))
		return PV_EIO;
	if (ih->port)
		h->ssh.port = ih->port;
	if (ih->user && pv_playbook_schema_set(&h->ssh.user, ih->user))
		return PV_EIO;
	if (ih->identity) {
		char *abs = pv_playbook_schema_resolve(idir, ih->identity);

		if (!abs)
			return pv_playbook_schema_oom();
		free(h->ssh.identity);
		h->ssh.identity = abs;
	}
	return 0;
}

/* clients.hosts.NAME: what the playbook says of one inventory host, over the inventory. */
static int client_override(struct ctx *c, const struct pv_playbook_node *key,
			   const struct pv_playbook_node *m)
{
	struct pv_playbook *pb = c->pb;
	char path[320];
	int os, r;

	snprintf(path, sizeof(path), "clients.hosts.%s", key->text);
	for (size_t i = 0; i < pb->nclients; i++) {
		struct pv_playbook_host *h = &pb->clients[i];

		if (strcmp(h->name, key->text) != 0)
			continue;
		os = h->os;
		if ((r = pv_playbook_schema_keys(
			     &c->sc, m, path, override_keys,
			     "a mapping of host settings (address, os, ssh)")) ||
		    (r = pv_playbook_schema_ip(&c->sc, m, path, "address", &h->address)) ||
		    (r = pv_playbook_schema_enum(&c->sc, m, path, "os", oses, &os)) ||
		    (r = pb_parse_ssh(c, m, path, &h->ssh)))
			return r;
		h->os = (enum pv_playbook_os)os;
		c->client_at[i] = key;
		return 0;
	}
	return pv_playbook_schema_fail(
		&c->sc, key,
		"'clients.hosts' names '%s', which is not a host of group '%s' in %s; expected "
		"one of the inventory's hosts",
		key->text, pb->inventory_group, pb->inventory);
}

/* clients: {inventory: FILE, group: NAME, hosts: {NAME: {address, os, ssh}}} */
static int parse_inventory(struct ctx *c, const struct pv_playbook_node *m)
{
	struct pv_playbook *pb = c->pb;
	const struct pv_playbook_node *at, *gat, *over;
	struct pv_playbook_inventory *inv = NULL;
	char *idir = NULL;
	int r;

	if ((r = pv_playbook_schema_keys(
		     &c->sc, m, "clients", inventory_keys,
		     "a sequence of hosts, or {inventory: FILE, group: NAME}")) ||
	    (r = pv_playbook_schema_require(&c->sc, m, "clients", "inventory",
					    "PATH (an Ansible inventory, INI or YAML)")) ||
	    (r = pv_playbook_schema_path(&c->sc, m, "clients", "inventory", &pb->inventory)) ||
	    (r = pv_playbook_schema_set(&pb->inventory_group, "all")) ||
	    (r = pv_playbook_schema_str(&c->sc, m, "clients", "group", "a group of the inventory",
					&pb->inventory_group, &gat)))
		return r;
	at = pv_playbook_tree_get(m, "inventory");
	if ((r = pv_playbook_inventory_read(pb->inventory, pb->inventory_group, &inv)) != PV_OK) {
		r = pv_playbook_schema_fail_recorded(
			&c->sc, gat && strstr(pv_errmsg(), "no group") ? gat : at, NULL, NULL);
		goto out;
	}
	pb->inventory_format = inv->format;
	if (!(idir = pb_dir_of(pb->inventory)) ||
	    !(pb->clients = calloc(inv->n, sizeof(*pb->clients))) ||
	    !(c->client_at = calloc(inv->n, sizeof(*c->client_at)))) {
		r = pv_playbook_schema_oom();
		goto out;
	}
	for (size_t i = 0; i < inv->n; i++) {
		pb->nclients = i + 1;
		c->client_at[i] = at;
		if ((r = inventory_client(c, &inv->hosts[i], pb->inventory, idir, &pb->clients[i])))
			goto out;
	}
	if ((over = pv_playbook_tree_get(m, "hosts"))) {
		if (over->kind != PV_PLAYBOOK_NODE_MAPPING) {
			r = pv_playbook_schema_fail(
				&c->sc, over,
				"'clients.hosts' is %s; expected a mapping of host names "
				"to their settings",
				pv_playbook_schema_kind(over));
			goto out;
		}
		for (size_t i = 0; i < over->n && !r; i++)
			r = client_override(c, over->keys[i], over->items[i]);
	}
out:
	free(idir);
	pv_playbook_inventory_free(inv);
	return r;
}

int pb_parse_clients(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook *pb = c->pb;
	const struct pv_playbook_node *seq = pv_playbook_tree_get(root, "clients"), *name_at;
	char path[32];
	int r;

	if (!seq)
		return 0;
	if (seq->kind == PV_PLAYBOOK_NODE_MAPPING && !pv_playbook_tree_get(seq, "inventory") &&
	    (pv_playbook_tree_get(seq, "name") || pv_playbook_tree_get(seq, "address")))
		return pv_playbook_schema_fail(
			&c->sc, seq,
			"'clients' is a mapping; expected a sequence of hosts ('- name: ...') "
			"or {inventory: FILE, group: NAME}");
	if (seq->kind == PV_PLAYBOOK_NODE_MAPPING)
		return parse_inventory(c, seq);
	if (seq->kind != PV_PLAYBOOK_NODE_SEQUENCE)
		return pv_playbook_schema_fail(
			&c->sc, seq,
			"'clients' is %s; expected a sequence of hosts ('- name: ...') or "
			"{inventory: FILE, group: NAME}",
			pv_playbook_schema_kind(seq));
	if (!seq->n)
		return pv_playbook_schema_fail(
			&c->sc, seq,
			"'clients' is an empty sequence; expected at least one client "
			"(or no 'clients' key)");
	pb->clients = calloc(seq->n, sizeof(*pb->clients));
	c->client_at = calloc(seq->n, sizeof(*c->client_at));
	if (!pb->clients || !c->client_at)
		return pv_playbook_schema_oom();
	for (size_t i = 0; i < seq->n; i++) {
		const struct pv_playbook_node *m = seq->items[i];

		snprintf(path, sizeof(path), "clients.%zu", i);
		pb->nclients = i + 1; /* so pv_playbook_free releases this one too */
		if ((r = pv_playbook_schema_keys(
			     &c->sc, m, path, client_keys,
			     "a mapping of client settings (name, address, os, ssh)")) ||
		    (r = parse_host(c, m, path, true, true, &pb->clients[i], &name_at)))
			return r;
		c->client_at[i] = name_at;
		if ((r = unique_client(c, i, name_at)))
			return r;
	}
	return 0;
}

int pb_parse_controller(struct ctx *c, const struct pv_playbook_node *root)
{
	struct pv_playbook_controller *ct = &c->pb->controller;
	const struct pv_playbook_node *m = pv_playbook_tree_get(root, "controller"), *h, *v;
	const char *s;
	int r;

	if (!m)
		return 0;
	c->pb->has_controller = true;
	if ((r = pv_playbook_schema_keys(&c->sc, m, "controller", controller_keys,
					 "a mapping of controller settings (results, host)")) ||
	    (r = pv_playbook_schema_require(&c->sc, m, "controller", "results",
					    "PATH (the results folder)")))
		return r;
	if ((h = pv_playbook_tree_get(m, "host"))) {
		if ((r = pv_playbook_schema_keys(
			     &c->sc, h, "controller.host", chost_keys,
			     "a mapping of host settings (name, address, ssh)")) ||
		    (r = parse_host(c, h, "controller.host", false, false, &ct->host, NULL)))
			return r;
	}
	/* a local folder is resolved like any file (a relative one under the playbook's folder);
	 * a remote one is used as given, so it must be absolute */
	if ((r = pv_playbook_schema_text(&c->sc, m, "controller", "results", "a folder path", &s,
					 &v)))
		return r;
	if (!h) {
		const char *rel = s;

		if (rel[0] == '~' && (rel[1] == '/' || !rel[1]))
			rel += rel[1] ? 2 : 1;
		if (*rel && (r = check_folder(c, v, "controller.results", rel, false,
					      "such as /var/lib/fsct/results")))
			return r;
		return pv_playbook_schema_path(&c->sc, m, "controller", "results", &ct->results);
	}
	if ((r = check_folder(c, v, "controller.results", s, true,
			      "on the controller host such as /var/lib/fsct/results")))
		return r;
	return pv_playbook_schema_set(&ct->results, s);
}
