/* env/env.c: the run's environment, plans and tags (see env.h). */
#include "env/env.h"
#include "env/target.h"

#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int pv_env_secret(const struct pv_env *env, enum pv_env_cred which, const struct pv_secret **out)
{
	if (!env->cred)
		return pv_error(PV_EBUG, "no credentials provider");
	return env->cred(env->cred_ctx, which, out);
}

void pv_env_plan_add(struct pv_env_plan *p, const char *fmt, ...)
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

void pv_env_plan_release(struct pv_env_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->items[i]);
	free(p->items);
	p->items = NULL;
	p->n = p->cap = 0;
}

void pv_env_tag_lab(const struct pv_playbook *pb, char out[PV_ENV_TAG_MAX])
{
	snprintf(out, PV_ENV_TAG_MAX, "provision:%s", pb->lab);
}

void pv_env_tag_join(const struct pv_playbook *pb, char out[PV_ENV_TAG_MAX])
{
	snprintf(out, PV_ENV_TAG_MAX, "provision:%s:join", pb->lab);
}

bool pv_env_stopped(const struct pv_env *env)
{
	return env && env->stop && *env->stop;
}

int pv_env_setup(const struct pv_playbook *pb)
{
	struct pv_krb_target t;

	pv_env_target_krb(&pb->domain, &t);
	return pv_krb_setup(&t);
}

void pv_env_cleanup(void)
{
	pv_krb_cleanup();
}
