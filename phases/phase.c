/* phases/phase.c: the environment, plans, tags and names every phase shares. */
#include "phases/phase.h"
#include "phases/target.h"

#include "playbooks/names.h"
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int pv_env_secret(const struct pv_env *env, enum pv_cred which, const struct pv_secret **out)
{
	if (!env->cred)
		return pv_error(PV_EBUG, "no credentials provider");
	return env->cred(env->cred_ctx, which, out);
}

void pv_plan_add(struct pv_plan *p, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		char **n = realloc(p->items, cap * sizeof(*n));

		if (!n)
			return;
		p->items = n;
		p->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		p->items[p->n++] = s;
	va_end(ap);
}

void pv_plan_release(struct pv_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->items[i]);
	free(p->items);
	p->items = NULL;
	p->n = p->cap = 0;
}

void pv_tag_lab(const struct pv_playbook *pb, char out[PV_TAG_MAX])
{
	snprintf(out, PV_TAG_MAX, "provision:%s", pb->lab);
}

void pv_tag_join(const struct pv_playbook *pb, char out[PV_TAG_MAX])
{
	snprintf(out, PV_TAG_MAX, "provision:%s:join", pb->lab);
}

static const char *server_name(const struct pv_playbook *pb)
{
	return pb->has_server ? pb->server.host.name : NULL;
}

int pv_user_name(const struct pv_playbook *pb, const struct pv_host *client, unsigned long n,
		 char out[PV_NAME_MAX])
{
	return pv_names_expand(pb->users.name_template, client->name, server_name(pb), n, 0, out,
			       PV_NAME_MAX);
}

int pv_alias_name(const struct pv_playbook *pb, unsigned long n, char out[PV_NAME_MAX])
{
	int r = pv_names_expand(pb->server.alias_template, NULL, server_name(pb), n, 0, out,
				PV_NAME_MAX);

	if (r != PV_OK)
		return pv_error_prefix(r, "server.alias_template");
	if ((r = pv_names_check_host("alias", out)) != PV_OK)
		return pv_error_prefix(r, "server.alias_template '%s'", pb->server.alias_template);
	return PV_OK;
}

int pv_share_name(const struct pv_playbook *pb, unsigned k, char out[PV_NAME_MAX])
{
	return pv_names_expand(pb->server.share_template, NULL, server_name(pb), 0, k, out,
			       PV_NAME_MAX);
}

unsigned long pv_users_planned(const struct pv_playbook *pb)
{
	return (unsigned long)pb->users.per_client * pb->nclients;
}

bool pv_env_stopped(const struct pv_env *env)
{
	return env && env->stop && *env->stop;
}

int pv_env_setup(const struct pv_playbook *pb)
{
	struct pv_krb_target t;

	pv_target_krb(&pb->domain, &t);
	return pv_krb_setup(&t);
}

void pv_env_cleanup(void)
{
	pv_krb_cleanup();
}
