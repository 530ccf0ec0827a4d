/* playbooks/roster.c: the lab's roster (see roster.h). */
#include "playbooks/roster.h"

#include "playbooks/names.h"
#include "util/err.h"

#include <string.h>

static const char *server_name(const struct pv_playbook *pb)
{
	return pb->has_server ? pb->server.host.name : NULL;
}

int pv_playbook_user_name(const struct pv_playbook *pb, const struct pv_playbook_host *client,
			  unsigned long n, char out[PV_PLAYBOOK_NAME_MAX])
{
	return pv_playbook_names_expand(pb->users.name_template, client->name, server_name(pb), n,
					0, out, PV_PLAYBOOK_NAME_MAX);
}

int pv_playbook_alias_name(const struct pv_playbook *pb, unsigned long n,
			   char out[PV_PLAYBOOK_NAME_MAX])
{
	int r = pv_playbook_names_expand(pb->server.alias_template, NULL, server_name(pb), n, 0,
					 out, PV_PLAYBOOK_NAME_MAX);

	if (r != PV_OK)
		return pv_error_prefix(r, "server.alias_template");
	if ((r = pv_playbook_names_check_host("alias", out)) != PV_OK)
		return pv_error_prefix(r, "server.alias_template '%s'", pb->server.alias_template);
	return PV_OK;
}

int pv_playbook_share_name(const struct pv_playbook *pb, unsigned k, char out[PV_PLAYBOOK_NAME_MAX])
{
	return pv_playbook_names_expand(pb->server.share_template, NULL, server_name(pb), 0, k, out,
					PV_PLAYBOOK_NAME_MAX);
}

unsigned long pv_playbook_users_planned(const struct pv_playbook *pb)
{
	return (unsigned long)pb->users.per_client * pb->nclients;
}

int pv_playbook_roster_user(const struct pv_playbook *pb, size_t c, unsigned long n,
			    struct pv_playbook_roster_user *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	out->client = c;
	out->n = n;
	out->index = (unsigned long)c * pb->users.per_client + (n - 1);
	if ((r = pv_playbook_user_name(pb, &pb->clients[c], n, out->name)) != PV_OK)
		return r;
	if (!pb->has_server)
		return PV_OK;
	out->share = (unsigned)(out->index % (pb->server.shares ? pb->server.shares : 1)) + 1;
	if ((r = pv_playbook_alias_name(pb, n, out->alias)) != PV_OK)
		return r;
	return pv_playbook_share_name(pb, out->share, out->share_name);
}
