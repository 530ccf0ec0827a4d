/* env/target.c: the playbook's hosts and domain as the transports' targets (see target.h). */
#include "env/target.h"

#include <stdio.h>
#include <string.h>

void pv_env_target_ssh(const struct pv_playbook_host *host, struct pv_remote_target *t)
{
	memset(t, 0, sizeof(*t));
	t->name = host->name;
	t->address = host->address;
	t->port = host->ssh.port;
	t->user = host->ssh.user;
	t->identity = host->ssh.identity;
	t->known_hosts = host->ssh.known_hosts;
	t->accept_new = host->ssh.accept_new;
	t->timeout = host->ssh.timeout;
}

int pv_env_host_connect(const struct pv_playbook_host *host, struct pv_remote **out)
{
	struct pv_remote_target t;

	pv_env_target_ssh(host, &t);
	return pv_remote_connect(&t, out);
}

void pv_env_target_krb(const struct pv_playbook_domain *d, struct pv_krb_target *t)
{
	memset(t, 0, sizeof(*t));
	t->realm = d->realm;
	t->kdc = d->dc_address;
	t->dns_domain = d->dns_domain;
}

void pv_env_target_dir(const struct pv_playbook_domain *d, struct pv_ldap_target *t)
{
	static const enum pv_ldap_transport transport[] = {
		[PV_PLAYBOOK_LDAP_LDAPS] = PV_LDAP_LDAPS,
		[PV_PLAYBOOK_LDAP_STARTTLS] = PV_LDAP_STARTTLS,
		[PV_PLAYBOOK_LDAP_GSSAPI] = PV_LDAP_GSSAPI,
	};

	memset(t, 0, sizeof(*t));
	t->dc_name = d->dc_name;
	t->dc_address = d->dc_address;
	t->transport = transport[d->transport];
	t->ca_file = d->ca_file;
	t->timeout = d->timeout;
	t->admin = d->admin;
	pv_env_target_krb(d, &t->krb);
}

int pv_env_domain_connect(const struct pv_playbook_domain *d, int transport,
			  const struct pv_secret *admin, struct pv_ldap **out)
{
	struct pv_ldap_target t;

	pv_env_target_dir(d, &t);
	return pv_ldap_connect(&t, transport, admin, out);
}

int pv_env_domain_kinit(const struct pv_playbook_domain *d, const char *principal,
			const struct pv_secret *password, char **ccache_name)
{
	struct pv_krb_target t;

	pv_env_target_krb(d, &t);
	return pv_krb_kinit(&t, principal, password, ccache_name);
}

void pv_env_admin_principal(const struct pv_playbook_domain *d, char out[512])
{
	if (strchr(d->admin, '@'))
		snprintf(out, 512, "%s", d->admin);
	else
		snprintf(out, 512, "%s@%s", d->admin, d->realm);
}
