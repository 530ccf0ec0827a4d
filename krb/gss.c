/* krb/gss.c: a Kerberos SPNEGO initiator through GSSAPI, for the load driver's SMB logons
 * (see krb/krb.h): the user's initial ticket from its password (gss_acquire_cred_with_password,
 * in memory), a ticket for the service asked of the KDC, the tokens, the session key. */
#include "krb/krb.h"

#include "util/err.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pv_krb_sec {
	gss_cred_id_t cred;
	gss_ctx_id_t ctx;
	gss_name_t target;
	char who[256]; /* for messages: user -> service */
};

static gss_OID_desc spnego_oid = {6, (void *)"\x2b\x06\x01\x05\x05\x02"};

/* GSSAPI's words for a failure, major then minor. */
static int fail(int code, OM_uint32 maj, OM_uint32 min, const char *what, const char *who)
{
	char text[512] = "";
	size_t o = 0;

	for (int kind = 0; kind < 2; kind++) {
		OM_uint32 ctx = 0, m;
		gss_buffer_desc b;

		do {
			if (gss_display_status(&m, kind ? min : maj,
					       kind ? GSS_C_MECH_CODE : GSS_C_GSS_CODE,
					       GSS_C_NO_OID, &ctx, &b) != GSS_S_COMPLETE)
				break;
			if (b.length && o < sizeof(text) - 3)
				o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%.*s",
						      o ? ": " : "", (int)b.length,
						      (const char *)b.value);
			gss_release_buffer(&m, &b);
		} while (ctx);
		if (kind == 0 && !min)
			break;
	}
	return pv_error(code, "Kerberos %s (%s): %s", what, who, text[0] ? text : "failed");
}

int pv_krb_sec_start(const char *principal, const struct pv_secret *password, const char *service,
		     struct pv_krb_sec **out)
{
	struct pv_krb_sec *s = calloc(1, sizeof(*s));
	gss_buffer_desc nb, pb;
	gss_name_t user = GSS_C_NO_NAME;
	/* SPNEGO's own credential (MIT's SPNEGO takes a password too), with Kerberos under it */
	gss_OID_set_desc mechs = {1, &spnego_oid};
	OM_uint32 maj, min;
	int r = PV_OK;

	*out = NULL;
	if (!s)
		return pv_error(PV_EIO, "out of memory");
	snprintf(s->who, sizeof(s->who), "%s for %s", principal, service);
	nb.value = (void *)principal;
	nb.length = strlen(principal);
	maj = gss_import_name(&min, &nb, GSS_C_NT_USER_NAME, &user);
	if (GSS_ERROR(maj)) {
		r = fail(PV_ECONFIG, maj, min, "user name", s->who);
		goto out;
	}
	pb.value = password->data;
	pb.length = password->len;
	maj = gss_acquire_cred_with_password(&min, user, &pb, GSS_C_INDEFINITE, &mechs,
					     GSS_C_INITIATE, &s->cred, NULL, NULL);
	if (GSS_ERROR(maj)) {
		r = fail(PV_ECRED, maj, min, "initial ticket", s->who);
		goto out;
	}
	nb.value = (void *)service;
	nb.length = strlen(service);
	maj = gss_import_name(&min, &nb, GSS_C_NT_HOSTBASED_SERVICE, &s->target);
	if (GSS_ERROR(maj))
		r = fail(PV_ECONFIG, maj, min, "service name", s->who);
out:
	if (user != GSS_C_NO_NAME)
		gss_release_name(&min, &user);
	if (r != PV_OK)
		pv_krb_sec_free(s);
	else
		*out = s;
	return r;
}

int pv_krb_sec_step(struct pv_krb_sec *s, const void *in, size_t inlen, struct pv_buf *out,
		    bool *done)
{
	gss_buffer_desc ib = {inlen, (void *)in}, ob = {0, NULL};
	OM_uint32 maj, min, flags = 0;
	int r = PV_OK;

	maj = gss_init_sec_context(&min, s->cred, &s->ctx, s->target, &spnego_oid,
				   GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG, 0,
				   GSS_C_NO_CHANNEL_BINDINGS, in ? &ib : GSS_C_NO_BUFFER, NULL, &ob,
				   &flags, NULL);
	if (GSS_ERROR(maj))
		r = fail(in ? PV_EREMOTE : PV_ECRED, maj, min,
			 in ? "the server's answer" : "service ticket", s->who);
	else if (ob.length && pv_buf_add(out, ob.value, ob.length) < 0)
		r = pv_error(PV_EIO, "out of memory");
	*done = maj == GSS_S_COMPLETE;
	/* asked for, so required: a context that completed without the server's AP-REP proves
	 * nothing about the server (RFC 4121 4.1, MS-SMB2 3.2.4.2.3: MutualAuth) */
	if (r == PV_OK && *done && !(flags & GSS_C_MUTUAL_FLAG)) {
		*done = false;
		r = pv_error(PV_EREMOTE,
			     "Kerberos (%s): the exchange ended without mutual authentication: the "
			     "server never proved that it holds the service's key",
			     s->who);
	}
	gss_release_buffer(&min, &ob);
	return r;
}

int pv_krb_sec_key(struct pv_krb_sec *s, uint8_t key[32], size_t *len)
{
	gss_buffer_set_t set = GSS_C_NO_BUFFER_SET;
	OM_uint32 maj, min;
	size_t n;

	maj = gss_inquire_sec_context_by_oid(&min, s->ctx, GSS_C_INQ_SSPI_SESSION_KEY, &set);
	if (GSS_ERROR(maj) || !set || set->count < 1)
		return fail(PV_EREMOTE, maj, min, "session key", s->who);
	/* an AES-256 key is 32 bytes, AES-128's 16: SMB pads a shorter one (MS-SMB2 3.2.5.3.1) */
	memset(key, 0, 32);
	n = set->elements[0].length < 32 ? set->elements[0].length : 32;
	memcpy(key, set->elements[0].value, n);
	*len = n;
	explicit_bzero(set->elements[0].value, set->elements[0].length);
	gss_release_buffer_set(&min, &set);
	return PV_OK;
}

void pv_krb_sec_free(struct pv_krb_sec *s)
{
	OM_uint32 min;

	if (!s)
		return;
	if (s->ctx != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&min, &s->ctx, GSS_C_NO_BUFFER);
	if (s->cred != GSS_C_NO_CREDENTIAL)
		gss_release_cred(&min, &s->cred);
	if (s->target != GSS_C_NO_NAME)
		gss_release_name(&min, &s->target);
	free(s);
}
