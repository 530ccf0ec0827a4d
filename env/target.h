/* env/target.h: the one place where the playbook's hosts and domain become the transports'
 * own targets (remote/, ldap/, krb/ never see the playbook). */
#ifndef PV_ENV_TARGET_H
#define PV_ENV_TARGET_H

#include "krb/krb.h"
#include "ldap/dir.h"
#include "playbooks/playbook.h"
#include "remote/remote.h"

/* SSH to host (its address, its ssh: settings merged with the playbook's). */
void pv_env_target_ssh(const struct pv_playbook_host *host, struct pv_remote_target *t);
/* pv_remote_connect to host. */
int pv_env_host_connect(const struct pv_playbook_host *host, struct pv_remote **out);

/* The domain's realm and KDC (domain.dc_address, when given). */
void pv_env_target_krb(const struct pv_playbook_domain *d, struct pv_krb_target *t);
/* The domain's DC, bound to as domain.admin with domain.transport. */
void pv_env_target_dir(const struct pv_playbook_domain *d, struct pv_ldap_target *t);
/* pv_ldap_connect to the domain's DC (transport -1: domain.transport). */
int pv_env_domain_connect(const struct pv_playbook_domain *d, int transport,
			  const struct pv_secret *admin, struct pv_ldap **out);
/* pv_krb_kinit in the domain's realm. */
int pv_env_domain_kinit(const struct pv_playbook_domain *d, const char *principal,
			const struct pv_secret *password, char **ccache_name);
/* The admin's principal with the realm appended when it has none: Administrator@LAB.TEST. */
void pv_env_admin_principal(const struct pv_playbook_domain *d, char out[512]);

#endif
