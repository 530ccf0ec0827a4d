/* smb/lib_session.c: libsmbclient contexts, one per logon (PROVISION_SMB_CLIENT=libsmbclient, and
 * the benchmarks' reference). Sessions (struct pv_smb_lib) are made here; lib_tree.c works on them
 * and translates libsmbclient's errno. */
#include "smb/smb.h"

#include "smb/internal.h"
#include "util/err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void auth_fn(SMBCCTX *ctx, const char *srv, const char *shr, char *wg, int wglen, char *un,
		    int unlen, char *pw, int pwlen)
{
	const struct logon *l = SMBC(smbc_getOptionUserData)(ctx);

	(void)srv;
	(void)shr;
	snprintf(wg, (size_t)wglen, "%s", l->workgroup);
	snprintf(un, (size_t)unlen, "%s", l->user);
	snprintf(pw, (size_t)pwlen, "%s", l->password ? l->password->data : "");
}

int pv_smb_lib_session(const char *server, const char *workgroup, const char *user,
		       const struct pv_secret *password, int timeout, struct pv_smb_lib **out)
{
	struct pv_smb_lib *s;
	int r;

	if ((r = pv_smb_lib_open()) != PV_OK)
		return r;
	if (!(s = calloc(1, sizeof(*s))))
		return pv_error(PV_EIO, "out of memory");
	s->server = strdup(server);
	s->workgroup = strdup(workgroup);
	s->user = strdup(user);
	if (password)
		s->password = pv_secret_new(password->data, password->len);
	if (!s->server || !s->workgroup || !s->user || (password && !s->password)) {
		r = pv_error(PV_EIO, "out of memory");
		goto fail;
	}
	s->l.workgroup = s->workgroup;
	s->l.user = s->user;
	s->l.password = s->password;
	if (!(s->ctx = SMBC(smbc_new_context)())) {
		r = pv_error(PV_EIO, "cannot create an SMB context: %s", strerror(errno));
		goto fail;
	}
	SMBC(smbc_setOptionUserData)(s->ctx, &s->l);
	SMBC(smbc_setFunctionAuthDataWithContext)(s->ctx, auth_fn);
	SMBC(smbc_setOptionNoAutoAnonymousLogin)(s->ctx, 1);
	if (password) {
		SMBC(smbc_setOptionUseKerberos)(s->ctx, 0);
	} else {
		/* Kerberos: the user's name, an empty password and the ccache (lab-notes pitfall 8)
		 */
		SMBC(smbc_setOptionUseKerberos)(s->ctx, 1);
		SMBC(smbc_setOptionFallbackAfterKerberos)(s->ctx, 0);
		SMBC(smbc_setOptionUseCCache)(s->ctx, 1);
	}
	SMBC(smbc_setTimeout)(s->ctx, (timeout > 0 ? timeout : 10) * 1000);
	SMBC(smbc_setDebug)(s->ctx, 0);
	if (!SMBC(smbc_init_context)(s->ctx)) {
		r = pv_error(PV_EIO, "cannot initialise libsmbclient (smb.conf?): %s",
			     strerror(errno));
		SMBC(smbc_free_context)(s->ctx, 1);
		s->ctx = NULL;
		goto fail;
	}
	*out = s;
	return PV_OK;
fail:
	pv_smb_lib_free(s);
	return r;
}

void pv_smb_lib_free(struct pv_smb_lib *s)
{
	if (!s)
		return;
	if (s->ctx)
		SMBC(smbc_free_context)(s->ctx, 1);
	free(s->buf);
	free(s->server);
	free(s->workgroup);
	free(s->user);
	pv_secret_free(s->password);
	free(s);
}
