/* smb/logon.c: the SMB2 engine's sessions (see async.h): the opening's steps, NEGOTIATE and
 * what it settles, the logon (SESSION_SETUP with NTLMv2 or a SPNEGO callback, the server's
 * proofs, the session's keys), TREE_CONNECT, LOGOFF, and VALIDATE_NEGOTIATE on 3.0 and 3.0.2.
 * The answers come here from frame.c, their signatures checked there. */
#include "smb/async.h"

#include "smb/engine.h"
#include "smb/internal.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "util/err.h"
#include "util/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* The tests' and fuzz targets' fixed randomness (smba_test_fixed): GUID, salt, NTLM client
 * challenge and nonces, so that a recorded conversation's keys hold when it is replayed. */
static bool fixed_random;

void smba_test_fixed(bool on)
{
	fixed_random = on;
}

static int random_bytes(void *p, size_t n, uint8_t fill)
{
	if (fixed_random) {
		memset(p, fill, n);
		return 0;
	}
	return getrandom(p, n, 0) == (ssize_t)n ? 0 : -1;
}

static const char *status_text(uint32_t st, char *buf, size_t len)
{
	const char *n = smb2_status_name(st);

	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "NT status 0x%08x", st);
	return buf;
}

void smba_logon_clear(struct signon *g)
{
	free(g->wg);
	free(g->user);
	pv_secret_free(g->pw);
	explicit_bzero(g, sizeof(*g));
}

/* The session ends, or never began: its keys go. */
void smba_session_end(struct pv_smb_conn *c)
{
	c->sid = 0;
	c->keyed = false;
	smb2_keys_clear(&c->keys);
	c->sess_encrypt = c->sess_sign = false;
	c->tid = 0;
	c->tree_encrypt = false;
	c->validating = c->validated = false;
	explicit_bzero(c->sess_hash, sizeof(c->sess_hash));
}

/* ---- describing ---- */

void smba_describe(struct pv_smb_conn *c)
{
	const char *d = smb2_dialect_name(c->sec.dialect);

	if (!c->negotiated)
		c->desc[0] = 0;
	else if (c->keyed && (c->sess_encrypt || c->tree_encrypt))
		snprintf(c->desc, sizeof(c->desc), "SMB %s, encrypted (%s)%s", d,
			 smb2_cipher_name(c->sec.cipher), c->sess_encrypt ? "" : " on this share");
	else if (c->keyed && c->sess_sign)
		snprintf(c->desc, sizeof(c->desc), "SMB %s, signed (%s)", d,
			 smb2_sign_name(c->sec.sign_alg));
	else
		snprintf(c->desc, sizeof(c->desc), "SMB %s", d);
}

/* Why this connection cannot encrypt, for a message: "SMB 2.1 cannot encrypt", "the server
 * accepts none of the ciphers offered (...)". */
static const char *no_cipher(const struct pv_smb_conn *c, char *buf, size_t len)
{
	if (c->sec.dialect < SMB2_300)
		snprintf(buf, len,
			 "SMB %s, the dialect negotiated, cannot encrypt (the server's `server max "
			 "protocol` is below SMB3?)",
			 smb2_dialect_name(c->sec.dialect));
	else if (c->sec.dialect < SMB2_311)
		snprintf(buf, len, "the server did not offer encryption with SMB %s",
			 smb2_dialect_name(c->sec.dialect));
	else
		snprintf(buf, len,
			 "the server accepts none of the ciphers offered (%s%s%s; Samba: `server "
			 "smb encryption algorithms`)",
			 smb2_cipher_name(c->offer_ciphers[0]),
			 c->noffer_ciphers > 1 ? ", ..." : "", "");
	return buf;
}

/* ---- the opening ---- */

static void opened(struct pv_smb_conn *c)
{
	struct pv_smb_done d;
	pv_smb_cb ready = c->ready;

	memset(&d, 0, sizeof(d));
	c->opening = false;
	c->ready = NULL;
	d.seconds = pv_now() - c->open_t0;
	if (ready)
		ready(c, c->ready_arg, &d);
}

static void on_open_tree(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	char st[96];

	(void)arg;
	if (d->code != PV_OK) {
		smba_lose(c, d->code, "%s", d->msg);
		return;
	}
	if (d->status != ST_OK) {
		smba_lose(c, d->status == ST_ACCESS_DENIED ? PV_ECRED : PV_EREMOTE,
			  "SMB tree connect to //%s/%s as %s: %s", c->server, c->open_share,
			  c->want.user ? c->want.user : "", status_text(d->status, st, sizeof(st)));
		return;
	}
	opened(c);
}

static void on_open_logon(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	(void)arg;
	if (d->code != PV_OK) {
		smba_lose(c, d->code, "%s", d->msg);
		return;
	}
	if (!c->open_share) {
		opened(c);
		return;
	}
	if (pv_smb_tree(c, c->open_share, on_open_tree, NULL) != PV_OK)
		smba_lose(c, PV_EIO, "%s", pv_errmsg());
}

static int logon_start(struct pv_smb_conn *c, struct signon *g);

/* NEGOTIATE answered and checked: the opening goes on with its logon, or ends. */
void smba_negotiated(struct pv_smb_conn *c)
{
	struct signon g;
	int r;

	if (!c->opening)
		return;
	if (!c->want.user) {
		opened(c);
		return;
	}
	g = c->want;
	memset(&c->want, 0, sizeof(c->want));
	g.cb = on_open_logon;
	g.arg = NULL;
	if ((r = logon_start(c, &g)) != PV_OK)
		smba_lose(c, r, "%s", pv_errmsg());
}

/* What this client offers (MS-SMB2 3.2.4.2.2): every dialect, signing enabled (it signs when
 * the server requires it), multi-credit requests, encryption, and for 3.1.1 its ciphers (the
 * caller's one when a cipher was asked for) and signing algorithms. */
static void offer(const struct pv_smb_conn *c, struct smb2_negotiate_req *q)
{
	memset(q, 0, sizeof(*q));
	q->dialects = smb2_dialects;
	q->ndialects = sizeof(smb2_dialects) / sizeof(smb2_dialects[0]);
	q->security_mode = SMB2_SIGNING_ENABLED;
	q->caps = SMB2_CAP_LARGE_MTU | SMB2_CAP_ENCRYPTION;
	q->ciphers = c->offer_ciphers;
	q->nciphers = c->noffer_ciphers;
	q->signs = smb2_signs;
	q->nsigns = sizeof(smb2_signs) / sizeof(smb2_signs[0]);
}

void smba_negotiate(struct pv_smb_conn *c)
{
	struct smb2_negotiate_req q;
	struct req *r = smba_req_new(NULL, NULL, SMB2_NEGOTIATE, K_NEGOTIATE);

	offer(c, &q);

	c->st = CS_NEGOTIATE;
	if (!r) {
		smba_lose(c, PV_EIO, "out of memory");
		return;
	}
	if (c->fixed_guid)
		memcpy(q.guid, c->client_guid, 16);
	if ((!c->fixed_guid && random_bytes(q.guid, 16, 0x61) < 0) ||
	    random_bytes(q.salt, 32, 0x73) < 0) {
		smba_req_free(r);
		smba_lose(c, PV_EIO, "getrandom: %s", strerror(errno));
		return;
	}
	memcpy(c->client_guid, q.guid, 16); /* VALIDATE_NEGOTIATE says it again */
	if (smba_send_req(c, r, smb2_negotiate_enc(&r->body, &q), "NEGOTIATE") != PV_OK)
		smba_lose(c, PV_EIO, "out of memory");
}

/* The NEGOTIATE answer m (a success's: checked, then what it settled taken). */
void smba_negotiate_answer(struct pv_smb_conn *c, const struct smb2_hdr *h, struct smb2_rd *m)
{
	struct smb2_negotiate_req q;
	struct smb2_negotiate_rsp a;
	char why[256], st[96];

	if (h->status != ST_OK) {
		smba_lose(c, PV_EREMOTE,
			  "SMB to '%s': the server accepts none of the dialects offered, SMB 2.0.2 "
			  "to 3.1.1 (%s); look at its `server min protocol` and `server max "
			  "protocol` (Samba), or whether SMB 2 and 3 are enabled (Windows)",
			  c->host, status_text(h->status, st, sizeof(st)));
		return;
	}
	if (smb2_negotiate_dec(m, &a) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m->why);
		return;
	}
	offer(c, &q);
	if (smb2_negotiated(&q, &a, &c->sec, why, sizeof(why)) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': %s", c->host, why);
		return;
	}
	/* MS-SMB2 3.2.5.2: the connection's hash takes the answer after the request */
	if (c->sec.dialect == SMB2_311) {
		memcpy(c->sec.preauth, c->neg_hash, 64);
		smb2_preauth(c->sec.preauth, m->p, m->len);
	}
	c->negotiated = true;
	c->st = CS_OPEN;
	smba_describe(c);
}

/* ---- the logon ---- */

static void session_send(struct pv_smb_conn *c, const struct pv_buf *tok)
{
	struct req *r = smba_req_new(NULL, NULL, SMB2_SESSION_SETUP, K_SESSION);

	if (!r) {
		smba_lose(c, PV_EIO, "out of memory");
		return;
	}
	pv_buf_secret(&r->body);
	if (smba_send_req(c, r,
			  smb2_session_setup_enc(&r->body, SMB2_SIGNING_ENABLED, tok->data,
						 tok->len, c->prev_sid),
			  "SESSION_SETUP") != PV_OK)
		smba_lose(c, PV_EIO, "out of memory");
}

/* The logon ended: its caller told (code PV_OK, or the failure with msg), its secrets gone;
 * a failed one leaves no session. */
static void logon_done(struct pv_smb_conn *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void logon_done(struct pv_smb_conn *c, int code, const char *fmt, ...)
{
	struct pv_smb_done d;
	pv_smb_cb cb = c->lg.cb;
	void *arg = c->lg.arg;
	char msg[512] = "";

	if (fmt) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	smba_logon_clear(&c->lg);
	if (code != PV_OK)
		smba_session_end(c);
	smba_describe(c);
	memset(&d, 0, sizeof(d));
	d.code = code;
	d.msg = msg;
	if (cb)
		cb(c, arg, &d);
}

/* The logon's name for messages: "LAB\u1", or "u1" with Kerberos. */
static const char *who(const struct pv_smb_conn *c, char *buf, size_t len)
{
	if (c->lg.auth || !c->lg.wg)
		snprintf(buf, len, "%s", c->lg.user ? c->lg.user : "");
	else
		snprintf(buf, len, "%s\\%s", c->lg.wg, c->lg.user);
	return buf;
}

static int logon_start(struct pv_smb_conn *c, struct signon *g)
{
	struct pv_buf tok = PV_BUF_INIT;
	char why[256], w[300];
	int r;

	if (c->st != CS_OPEN || c->lg.active || c->sid) {
		smba_logon_clear(g);
		return pv_error(c->st == CS_DEAD ? (c->code ? c->code : PV_EUNREACH) : PV_EBUG,
				"%s",
				c->st == CS_DEAD   ? c->err
				: c->st != CS_OPEN ? "SMB: the connection is not open"
						   : "SMB: a session is open already");
	}
	c->lg = *g;
	memset(g, 0, sizeof(*g));
	c->lg.active = true;
	c->lg.step = 1;
	who(c, w, sizeof(w));
	/* encryption asked for by the caller: this connection must be able to */
	if (c->lg.encrypt != PV_SMB_ENCRYPT_AUTO &&
	    (!c->sec.cipher || (c->lg.encrypt > PV_SMB_ENCRYPT_ON &&
				c->sec.cipher != (uint16_t)(c->lg.encrypt - 1)))) {
		if (c->sec.cipher)
			snprintf(why, sizeof(why), "the server chose %s",
				 smb2_cipher_name(c->sec.cipher));
		else
			no_cipher(c, why, sizeof(why));
		r = pv_error(
			PV_EREMOTE,
			"SMB logon as %s on '%s': encryption%s%s was asked for (the playbook's "
			"load.encryption), but %s",
			w, c->host, c->lg.encrypt > PV_SMB_ENCRYPT_ON ? " with " : "",
			c->lg.encrypt > PV_SMB_ENCRYPT_ON
				? smb2_cipher_name((uint16_t)(c->lg.encrypt - 1))
				: "",
			why);
		smba_logon_clear(&c->lg);
		return r;
	}
	memcpy(c->sess_hash, c->sec.preauth, 64);
	if (c->lg.auth) {
		bool done = false;

		if (c->lg.auth(c->lg.auth_arg, NULL, 0, &tok, &done, c->lg.skey, &c->lg.sklen) !=
		    PV_OK) {
			r = pv_error(PV_ECRED, "SMB logon as %s on '%s': %s", w, c->host,
				     pv_errmsg());
			smba_logon_clear(&c->lg);
			pv_buf_release(&tok, 1);
			return r;
		}
		c->lg.auth_done = done;
	} else if (pv_smb_ntlm_negotiate(&tok, c->lg.ntlm_neg, &c->lg.ntlm_neglen) < 0) {
		smba_logon_clear(&c->lg);
		return pv_error(PV_EIO, "out of memory");
	}
	session_send(c, &tok);
	pv_buf_release(&tok, 1);
	return PV_OK;
}

int pv_smb_logon(struct pv_smb_conn *c, const char *workgroup, const char *user,
		 const struct pv_secret *password, pv_smb_auth_fn auth, void *auth_arg,
		 enum pv_smb_encrypt encrypt, pv_smb_cb cb, void *arg)
{
	struct signon g = {0};

	g.wg = strdup(workgroup ? workgroup : "");
	g.user = strdup(user);
	g.pw = auth || !password ? pv_secret_new("", 0)
				 : pv_secret_new(password->data, password->len);
	g.auth = auth;
	g.auth_arg = auth_arg;
	g.encrypt = encrypt;
	g.cb = cb;
	g.arg = arg;
	if (!g.wg || !g.user || !g.pw) {
		smba_logon_clear(&g);
		return pv_error(PV_EIO, "out of memory");
	}
	return logon_start(c, &g);
}

/* The next step of an NTLM logon: the server's CHALLENGE (in tok) answered with the
 * AUTHENTICATE, whose session key is the session's. Its MsvAvTargetName names the server as
 * the caller addressed it (the alias), and its MIC covers the NEGOTIATE kept since the logon
 * began and the CHALLENGE as it came, so a server that got other messages refuses it. */
static void ntlm_step(struct pv_smb_conn *c, const struct smb2_rd *tok)
{
	struct pv_buf out = PV_BUF_INIT, spn = PV_BUF_INIT;
	struct pv_smb_ntlm_challenge ch;
	struct pv_smb_ntlm_logon nl;
	uint8_t cchal[8];
	uint64_t t = ((uint64_t)time(NULL) + 11644473600ull) * 10000000ull;
	char w[300];
	int nr;

	who(c, w, sizeof(w));
	if (tok->len == 0 || pv_smb_ntlm_parse_challenge(tok->p, tok->len, &ch) < 0) {
		logon_done(c, PV_EREMOTE, "SMB logon as %s on '%s': the server did not offer NTLM",
			   w, c->host);
		return;
	}
	pv_buf_secret(&out);
	memset(&nl, 0, sizeof(nl));
	nl.user = c->lg.user;
	nl.domain = c->lg.wg;
	nl.password = c->lg.pw->data;
	nl.plen = c->lg.pw->len;
	nl.negotiate = c->lg.ntlm_neg;
	nl.neglen = c->lg.ntlm_neglen;
	nl.now = t;
	nl.cchal = cchal;
	nl.spn = pv_buf_addf(&spn, "cifs/%s", c->server) < 0 ? NULL : spn.data;
	nr = !nl.spn ? -1
	     : random_bytes(cchal, 8, 0x5e) < 0
		     ? -3
		     : pv_smb_ntlm_authenticate(&ch, &nl, &out, c->lg.skey);
	c->lg.sklen = 16;
	explicit_bzero(c->lg.ntlm_neg, sizeof(c->lg.ntlm_neg));
	c->lg.ntlm_neglen = 0;
	/* -2, or a token past SESSION_SETUP's 16-bit SecurityBufferLength (MS-SMB2 2.2.5): the
	 * server's target info is too long to answer; refused, not cut */
	if (nr == -2 || (nr == 0 && out.len > UINT16_MAX))
		logon_done(c, PV_EREMOTE,
			   "SMB logon as %s on '%s': the server's NTLM target info of %zu bytes "
			   "would not fit the AUTHENTICATE message's 16-bit lengths (MS-NLMP "
			   "2.2.1.3, MS-SMB2 2.2.5); refused rather than cut",
			   w, c->host, ch.target_info_len);
	else if (nr == -3)
		logon_done(c, PV_EIO, "getrandom: %s", strerror(errno));
	else if (nr < 0)
		logon_done(c, PV_ECONFIG,
			   "SMB logon as %s: the name or the password is not valid UTF-8", w);
	else {
		c->lg.step = 2;
		if ((c->lg.ntlm_srv_mic_due = pv_smb_ntlm_signs(&ch)))
			pv_smb_ntlm_mech_list_mic(c->lg.skey, true, c->lg.ntlm_srv_mic);
		session_send(c, &out);
	}
	pv_buf_release(&out, 1);
	pv_buf_release(&spn, 0);
}

/* The final answer of an NTLM logon whose AUTHENTICATE carried a mechListMIC: the server's,
 * when its token has one, must be the one its key makes (RFC 4178 5). -1 when the connection
 * was lost over it. A server that sends none is taken: the session key it proves by SMB
 * signing is the same. */
int smba_ntlm_final(struct pv_smb_conn *c, const struct smb2_rd *tok)
{
	char w[300];
	int r = pv_smb_ntlm_final_mic(tok->p, tok->len, c->lg.ntlm_srv_mic);

	if (r == 0)
		return 0;
	who(c, w, sizeof(w));
	if (r == -2)
		smba_lose(c, PV_EREMOTE,
			  "SMB logon as %s on '%s': a malformed answer: its final token is not a "
			  "SPNEGO NegTokenResp",
			  w, c->host);
	else
		smba_lose(c, PV_EREMOTE,
			  "SMB logon as %s on '%s': the server's SPNEGO mechListMIC does not match "
			  "the session key (the logon's messages were changed on the way, or it is "
			  "not the server that checked the password); the connection is dropped",
			  w, c->host);
	return -1;
}

/* What the server's refusal of a logon means, for the message: a protocol setting where the
 * status says one, else the status. */
static void refusal(struct pv_smb_conn *c, uint32_t status, int *code, char *buf, size_t len)
{
	char st[96], nc[256];

	status_text(status, st, sizeof(st));
	*code = PV_ECRED;
	if (status == ST_INVALID_PARAMETER && !c->lg.auth && c->lg.step == 2) {
		/* not a wrong password either: Samba checks the password first, then the
		 * AUTHENTICATE's AV pairs and MIC (MS-NLMP 3.2.5.1.2) and answers so when they do
		 * not match what it sent and got */
		*code = PV_EREMOTE;
		snprintf(buf, len,
			 "refused (%s): the server did not take the NTLM AUTHENTICATE message; its "
			 "MIC covers the NEGOTIATE and CHALLENGE messages as this client sent and "
			 "got them, so something between here and the server may have changed them "
			 "(a relay or a tampered logon)",
			 st);
		return;
	}
	if (status != ST_ACCESS_DENIED) {
		snprintf(buf, len, "refused (%s)", st);
		return;
	}
	/* not a wrong password (that is NT_STATUS_LOGON_FAILURE): Samba answers so to a client
	 * that cannot do what it requires of every session */
	*code = PV_EREMOTE;
	if (!c->sec.cipher)
		snprintf(buf, len,
			 "refused (%s): a server that requires encryption (Samba: `server smb "
			 "encrypt = required`; Windows: EncryptData, RejectUnencryptedAccess) "
			 "refuses a client that cannot encrypt, and here %s",
			 st, no_cipher(c, nc, sizeof(nc)));
	else
		snprintf(buf, len,
			 "refused (%s), which is not a wrong password (NT_STATUS_LOGON_FAILURE): "
			 "look at the server's protocol settings (signing, encryption, `server min "
			 "protocol`) and the account's restrictions",
			 st);
	/* Samba's answer to a SPNEGO mechListMIC that does not verify, too */
	if (!c->lg.auth && c->lg.ntlm_srv_mic_due && strlen(buf) + 1 < len)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 "; or it did not take the SPNEGO mechListMIC that went with the NTLM "
			 "AUTHENTICATE (changed on the way?)");
}

/* A final SESSION_SETUP success is a logon only when this side's part of the authentication
 * is complete (MS-SMB2 3.2.5.3.1: "If the GSS protocol returns success, and the Status code
 * ... was STATUS_SUCCESS, authentication is complete"): NTLM's AUTHENTICATE sent (its session
 * key made from the password and the server's challenge), or the Kerberos exchange ended by
 * the mechanism with the server's own token (its AP-REP: mutual authentication) and a session
 * key. Anything else is a server claiming a logon that never happened: with no key, signing
 * and encryption would run under keys anyone can compute. -1 (the connection lost) then. */
static int unauthenticated(struct pv_smb_conn *c, char *w, size_t wlen)
{
	const char *why = NULL;
	bool zero = true;

	for (size_t i = 0; i < c->lg.sklen && i < sizeof(c->lg.skey); i++)
		zero = zero && c->lg.skey[i] == 0;
	if (!c->lg.auth && c->lg.step != 2)
		why = "it answered success to the NTLM NEGOTIATE, before this client had sent its "
		      "AUTHENTICATE (the password was never used)";
	else if (c->lg.auth && !c->lg.auth_done)
		why = "its final answer did not complete the Kerberos exchange (no token, or one "
		      "that leaves it unfinished), so the server never proved that it holds the "
		      "service's key (mutual authentication)";
	else if (c->lg.sklen == 0 || zero)
		why = "the authentication gave no session key";
	if (!why)
		return 0;
	smba_lose(
		c, PV_EREMOTE,
		"SMB logon as %s on '%s': the server claimed a logon that never authenticated: %s; "
		"refused, as anything answering on port 445 under this name could do the same "
		"(check that '%s' is the file server, and what answers there)",
		who(c, w, wlen), c->host, why, c->host);
	return -1;
}

/* What a SESSION_SETUP answer does to the session before its signature is checked (MS-SMB2
 * 3.2.5.3): the session id from the first; a MORE_PROCESSING one into the preauth hash; the
 * final one's keys made (the Kerberos token it carries taken first: it may change the key),
 * since that answer is the first signed with them. -1 when the connection was lost. */
int smba_session_pre(struct pv_smb_conn *c, const struct smb2_hdr *h, struct smb2_rd *m,
		     struct smb2_session_setup_rsp *a)
{
	char w[300];

	if (h->status != ST_OK && h->status != ST_MORE_PROCESSING)
		return 0;
	if (smb2_session_setup_dec(m, a) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m->why);
		return -1;
	}
	if (!c->sid)
		c->sid = h->session;
	if (h->status == ST_MORE_PROCESSING) {
		if (c->sec.dialect == SMB2_311)
			smb2_preauth(c->sess_hash, m->p, m->len);
		return 0;
	}
	if (c->lg.auth && !c->lg.auth_done && a->token.len) {
		struct pv_buf none = PV_BUF_INIT;
		bool done = false;
		int r = c->lg.auth(c->lg.auth_arg, a->token.p, a->token.len, &none, &done,
				   c->lg.skey, &c->lg.sklen);

		pv_buf_release(&none, 1);
		if (r != PV_OK) {
			smba_lose(c, PV_EREMOTE, "SMB logon as %s on '%s': %s",
				  who(c, w, sizeof(w)), c->host, pv_errmsg());
			return -1;
		}
		/* the mechanism says whether this token ended the exchange: a final answer
		 * whose token leaves it wanting more is no logon */
		c->lg.auth_done = done;
	}
	if (a->flags & (SMB2_SESSION_GUEST | SMB2_SESSION_NULL))
		return 0; /* no key: refused below */
	if (unauthenticated(c, w, sizeof(w)) < 0)
		return -1;
	if (smb2_keys_make(&c->keys, &c->sec, c->lg.skey, c->lg.sklen, c->sess_hash,
			   fixed_random ? (const uint8_t *)"\x6e\x6f\x6e\x63" : NULL) < 0) {
		smba_lose(c, PV_EIO, "out of memory");
		return -1;
	}
	explicit_bzero(c->lg.skey, sizeof(c->lg.skey));
	c->keyed = true;
	/* MS-SMB2 3.2.5.3.1: every request is signed when the server requires it of the
	 * connection (a 3.x server says so for the session too: it requires no more) */
	c->sess_sign = c->sec.sign_required;
	return 0;
}

/* A SESSION_SETUP answer, checked: the logon's next step, or its end. */
void smba_session_answer(struct pv_smb_conn *c, const struct smb2_hdr *h,
			 const struct smb2_session_setup_rsp *a)
{
	struct pv_buf tok = PV_BUF_INIT;
	char w[300], why[600], nc[256];
	int code;

	who(c, w, sizeof(w));
	if (h->status == ST_MORE_PROCESSING) {
		bool done = false;

		if (!c->lg.auth) {
			if (c->lg.step != 1) {
				logon_done(c, PV_EREMOTE,
					   "SMB logon as %s on '%s': the server asked for a third "
					   "NTLM step",
					   w, c->host);
				return;
			}
			ntlm_step(c, &a->token);
			return;
		}
		if (c->lg.auth(c->lg.auth_arg, a->token.p, a->token.len, &tok, &done, c->lg.skey,
			       &c->lg.sklen) != PV_OK) {
			logon_done(c, PV_ECRED, "SMB logon as %s on '%s': %s", w, c->host,
				   pv_errmsg());
			pv_buf_release(&tok, 1);
			return;
		}
		c->lg.auth_done = done;
		session_send(c, &tok);
		pv_buf_release(&tok, 1);
		return;
	}
	if (h->status != ST_OK) {
		refusal(c, h->status, &code, why, sizeof(why));
		logon_done(c, code, "SMB logon as %s on '%s' %s", w, c->host, why);
		return;
	}
	if (a->flags & (SMB2_SESSION_GUEST | SMB2_SESSION_NULL)) {
		logon_done(
			c, PV_ECRED,
			"SMB logon as %s on '%s': taken as a guest or anonymous logon; check the "
			"user and its password",
			w, c->host);
		return;
	}
	if ((a->flags & SMB2_SESSION_ENCRYPT) && !c->sec.cipher) {
		logon_done(
			c, PV_EREMOTE,
			"SMB logon as %s on '%s': the server requires encryption of every session "
			"(Samba: `server smb encrypt = required`; Windows: EncryptData), but %s",
			w, c->host, no_cipher(c, nc, sizeof(nc)));
		return;
	}
	c->sess_encrypt = (a->flags & SMB2_SESSION_ENCRYPT) || c->lg.encrypt;
	logon_done(c, PV_OK, NULL);
}

/* ---- trees, logoff ---- */

int pv_smb_tree(struct pv_smb_conn *c, const char *share, pv_smb_cb cb, void *arg)
{
	struct req *q;
	char *s;

	if (c->st != CS_OPEN || !c->keyed || c->lg.active)
		return pv_error(c->st == CS_DEAD ? (c->code ? c->code : PV_EUNREACH) : PV_EBUG,
				"%s",
				c->st == CS_DEAD ? c->err : "SMB: no session to connect with");
	if (!(q = smba_req_new(cb, arg, SMB2_TREE_CONNECT, K_TREE)) || !(s = strdup(share))) {
		free(q);
		return pv_error(PV_EIO, "out of memory");
	}
	free(c->share);
	c->share = s;
	return smba_send_req(c, q, smb2_tree_connect_enc(&q->body, c->server, share),
			     "the share name");
}

/* A TREE_CONNECT answer (a success's decoded into a): the tree taken, or why it cannot be. */
int smba_tree_answer(struct pv_smb_conn *c, const struct smb2_hdr *h,
		     const struct smb2_tree_connect_rsp *a, struct pv_smb_done *d)
{
	static char msg[512];
	char nc[256];

	if (h->status != ST_OK)
		return 0;
	if ((a->flags & SMB2_SHARE_ENCRYPT) && !c->sec.cipher) {
		snprintf(msg, sizeof(msg),
			 "SMB to '%s': the share %s requires encryption (Samba: `smb encrypt = "
			 "required` on it; Windows: the share's EncryptData), but %s",
			 c->host, c->share, no_cipher(c, nc, sizeof(nc)));
		d->code = PV_EREMOTE;
		d->msg = msg;
		return 0;
	}
	c->tid = h->tree;
	c->tree_encrypt = (a->flags & SMB2_SHARE_ENCRYPT) != 0;
	smba_describe(c);
	return 0;
}

int pv_smb_logoff(struct pv_smb_conn *c, pv_smb_cb cb, void *arg)
{
	struct req *q;

	if (c->st != CS_OPEN || !c->keyed || c->lg.active)
		return pv_error(c->st == CS_DEAD ? (c->code ? c->code : PV_EUNREACH) : PV_EBUG,
				"%s", c->st == CS_DEAD ? c->err : "SMB: no session to log off");
	if (!(q = smba_req_new(cb, arg, SMB2_LOGOFF, K_LOGOFF)))
		return pv_error(PV_EIO, "out of memory");
	return smba_send_req(c, q, smb2_logoff_enc(&q->body), "LOGOFF");
}

/* ---- VALIDATE_NEGOTIATE (MS-SMB2 3.2.5.5, 3.2.5.14.12) ----
 *
 * SMB 3.0 and 3.0.2 sign nothing of NEGOTIATE: a man in the middle could change the answer
 * (an older dialect, no encryption, signing not required) unseen. So after a logon's first
 * TREE_CONNECT the client says again, signed, what it offered, and the server answers,
 * signed, what it chose; the client holds that against the NEGOTIATE answer it took. 3.1.1's
 * preauth integrity hash does this for every logon instead. */

/* The tree connect tq was answered and taken: its FSCTL_VALIDATE_NEGOTIATE_INFO goes, with
 * tq's callback, which comes once the answer is checked (tq is freed). */
void smba_validate_start(struct pv_smb_conn *c, struct req *tq)
{
	static const uint8_t none[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct smb2_negotiate_req nq;
	struct pv_buf in = PV_BUF_INIT;
	struct req *v = smba_req_new(tq->cb, tq->arg, SMB2_IOCTL, K_VALIDATE);

	offer(c, &nq);
	memcpy(nq.guid, c->client_guid, 16);
	/* MS-SMB2 3.2.5.5: FileId all ones, the output a VALIDATE_NEGOTIATE_INFO answer */
	if (!v || smb2_validate_neg_info(&in, &nq) < 0 ||
	    smb2_ioctl_enc(&v->body, SMB2_FSCTL_VALIDATE_NEGOTIATE, none, in.data, (uint32_t)in.len,
			   24, true) < 0 ||
	    pv_buf_failed(&v->body)) {
		if (v)
			smba_req_free(v);
		tq->next = c->pend; /* in flight: losing the connection tells its caller */
		c->pend = tq;
		smba_lose(c, PV_EIO, "out of memory");
		pv_buf_release(&in, 0);
		return;
	}
	pv_buf_release(&in, 0);
	v->sign = true; /* MS-SMB2 3.2.5.5: signed, whether the session signs or not */
	v->since = tq->sent;
	smba_req_free(tq);
	c->validating = true;
	smba_submit(c, v, 1);
}

/* The answer to VALIDATE_NEGOTIATE (m, its signature checked if it came signed): 0 when it
 * holds, else -1 and the connection lost saying why (MS-SMB2 3.2.5.14.12). A server that does
 * not do the check says so signed (NOT_SUPPORTED; older Windows and Samba FILE_CLOSED, Samba's
 * NTVFS server INVALID_DEVICE_REQUEST or FS_DRIVER_REQUIRED): taken, as Windows and Samba's
 * client take it. */
int smba_validate_answer(struct pv_smb_conn *c, const struct smb2_hdr *h, struct smb2_rd *m,
			 bool decrypted)
{
	struct smb2_ioctl_rsp a;
	char st[96], why[200];

	status_text(h->status, st, sizeof(st));
	if (!decrypted && !(h->flags & SMB2_FLAGS_SIGNED)) {
		smba_lose(
			c, PV_EREMOTE,
			"SMB answer from '%s' to VALIDATE_NEGOTIATE (%s) came unsigned: an SMB %s "
			"client ends a connection whose negotiation its server does not confirm "
			"signed (MS-SMB2 3.2.5.14.12), as a downgrade or a tampered negotiation "
			"cannot be ruled out; the connection is dropped",
			c->host, st, smb2_dialect_name(c->sec.dialect));
		return -1;
	}
	if (h->status == ST_NOT_SUPPORTED || h->status == ST_FILE_CLOSED ||
	    h->status == ST_INVALID_DEVICE_REQ || h->status == ST_FS_DRIVER_REQUIRED)
		return 0;
	if (h->status != ST_OK) {
		smba_lose(c, PV_EREMOTE,
			  "SMB to '%s': the server refused VALIDATE_NEGOTIATE (%s)%s; the "
			  "connection is dropped",
			  c->host, st,
			  h->status == ST_ACCESS_DENIED
				  ? ": it got another negotiation than this client sent: a "
				    "downgrade or a tampered negotiation was detected (MS-SMB2 "
				    "3.3.5.15.12)"
				  : "");
		return -1;
	}
	if (smb2_ioctl_dec(m, &a) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m->why);
		return -1;
	}
	if (smb2_validated(&c->sec, &a.out, why, sizeof(why)) < 0) {
		smba_lose(c, PV_EREMOTE,
			  "SMB to '%s': a downgrade or a tampered negotiation was detected: the "
			  "server's signed VALIDATE_NEGOTIATE answer differs from the NEGOTIATE "
			  "answer taken (%s; MS-SMB2 3.2.5.14.12); the connection is dropped",
			  c->host, why);
		return -1;
	}
	return 0;
}
