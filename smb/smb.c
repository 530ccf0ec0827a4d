/* smb/smb.c: libsmbclient contexts, one per logon; errno from libsmbclient is translated here.
 * Sessions (struct pv_smb) are made here; tree.c works on them. */
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

static int fail(int err, const char *server, const char *what)
{
	switch (err) {
	case ECONNREFUSED:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
		return pv_error(PV_EUNREACH, "SMB %s on '%s': %s; is smbd running there?", what,
				server, strerror(err));
	case EACCES:
	case EPERM:
		return pv_error(PV_ECRED, "SMB %s on '%s': logon refused (%s)", what, server,
				strerror(err));
	default:
		return pv_error(PV_EREMOTE, "SMB %s on '%s': %s", what, server, strerror(err));
	}
}

int pv_smb_list_shares(const char *server, const char *workgroup, const char *user,
		       const struct pv_secret *password, int timeout, unsigned *nshares)
{
	struct logon l = {workgroup, user, password};
	struct smbc_dirent *de;
	SMBCCTX *ctx = NULL;
	SMBCFILE *dir = NULL;
	char url[512];
	unsigned n = 0;
	int r;

	if ((r = pv_smbc_load()) != PV_OK)
		return r;
	ctx = SMBC(smbc_new_context)();
	if (!ctx)
		return pv_error(PV_EIO, "cannot create an SMB context: %s", strerror(errno));
	SMBC(smbc_setOptionUserData)(ctx, &l);
	SMBC(smbc_setFunctionAuthDataWithContext)(ctx, auth_fn);
	SMBC(smbc_setOptionNoAutoAnonymousLogin)(ctx, 1);
	SMBC(smbc_setOptionUseKerberos)(ctx, 0);
	SMBC(smbc_setTimeout)(ctx, (timeout > 0 ? timeout : 10) * 1000);
	SMBC(smbc_setDebug)(ctx, 0);
	if (!SMBC(smbc_init_context)(ctx)) {
		r = pv_error(PV_EIO, "cannot initialise libsmbclient (smb.conf?): %s",
			     strerror(errno));
		SMBC(smbc_free_context)(ctx, 1);
		return r;
	}
	SMBC(smbc_set_context)(ctx);
	snprintf(url, sizeof(url), "smb://%s/", server);
	dir = SMBC(smbc_getFunctionOpendir)(ctx)(ctx, url);
	if (!dir) {
		r = fail(errno, server, "share listing");
		goto out;
	}
	while ((de = SMBC(smbc_getFunctionReaddir)(ctx)(ctx, dir)) != NULL)
		if (de->smbc_type == SMBC_FILE_SHARE)
			n++;
	SMBC(smbc_getFunctionClosedir)(ctx)(ctx, dir);
	*nshares = n;
	r = PV_OK;
out:
	SMBC(smbc_free_context)(ctx, 1);
	return r;
}

int pv_smb_session(const char *server, const char *workgroup, const char *user,
		   const struct pv_secret *password, int timeout, struct pv_smb **out)
{
	struct pv_smb *s;
	int r;

	if ((r = pv_smbc_load()) != PV_OK)
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
	pv_smb_free(s);
	return r;
}

void pv_smb_free(struct pv_smb *s)
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
