/* smb/frame.c: the SMB2 engine's frames (see async.h): requests framed, signed or sealed
 * (smb/sec.c) and sent as credits allow, compounds; frames that come opened, their messages
 * checked (signature, encryption, the request they answer) and handed to the logon (logon.c)
 * or the caller. Every message is encoded and decoded by smb/smb2.c. */
#include "smb/async.h"

#include "smb/engine.h"
#include "util/err.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CREDITS_ASK 32
#define CHAIN_MAX   8 /* requests in one compound */

/* ---- requests ---- */

void smba_req_free(struct req *q)
{
	pv_buf_release(&q->body, 1);
	free(q);
}

void smba_complete(struct pv_smb_conn *c, struct req *q, const struct pv_smb_done *d)
{
	if (q->cb)
		q->cb(c, q->arg, d);
	smba_req_free(q);
}

/* ---- frames out ---- */

/* Whether a request of cmd goes encrypted: every one of a session that encrypts, and those
 * on a share that requires it (MS-SMB2 3.2.4.1.8); never the logon's. */
static bool encrypts(const struct pv_smb_conn *c, uint16_t cmd)
{
	if (!c->keyed || cmd == SMB2_NEGOTIATE || cmd == SMB2_SESSION_SETUP)
		return false;
	return c->sess_encrypt ||
	       (c->tree_encrypt && cmd != SMB2_TREE_CONNECT && cmd != SMB2_LOGOFF);
}

/* Whether a request of cmd that goes in clear is signed (MS-SMB2 3.2.4.1.1): after the logon
 * when the session signs, and 3.1.1's TREE_CONNECT always (3.3.5.7 has the server refuse it
 * otherwise). */
static bool signs(const struct pv_smb_conn *c, uint16_t cmd)
{
	if (!c->keyed || cmd == SMB2_NEGOTIATE || cmd == SMB2_SESSION_SETUP)
		return false;
	return c->sess_sign || (c->sec.dialect == SMB2_311 && cmd == SMB2_TREE_CONNECT);
}

/* The credits a request takes (a large READ more than one). */
static unsigned charge_of(const struct req *q)
{
	return q->charge ? q->charge : 1;
}

unsigned smba_charges(const struct req *q, unsigned n)
{
	unsigned sum = 0;

	for (unsigned i = 0; i < n && q; i++, q = q->next)
		sum += charge_of(q);
	return sum;
}

/* Frame the n requests from q on (a compound when n > 1: each message 8-byte aligned, its
 * NextCommand pointing at the next, each after the first related), sign or encrypt them, and
 * queue the frame to be sent; they go in flight. */
static void emit(struct pv_smb_conn *c, struct req *q, unsigned n)
{
	bool enc = encrypts(c, q->cmd), sign = !enc && (signs(c, q->cmd) || q->sign);
	size_t total = 0, tf = enc ? SMB2_TF : 0, at;
	struct req *p = q;
	uint8_t *f, *m;
	double t = pv_now();

	for (unsigned i = 0; i < n; i++, p = p->next) {
		size_t len = SMB2_HDR + p->body.len;

		total += i + 1 < n ? (len + 7) & ~(size_t)7 : len;
	}
	if (tf + total > 0xFFFFFF ||
	    smb2_ensure(&c->out, &c->ocap, c->olen + 4 + tf + total, 4096) < 0) {
		/* in flight, so that losing the connection completes them */
		for (unsigned i = 0; i < n; i++) {
			struct req *r = q;

			q = q->next;
			r->next = c->pend;
			c->pend = r;
		}
		if (tf + total > 0xFFFFFF)
			smba_lose(c, PV_EBUG,
				  "SMB to '%s': a request of %zu bytes does not fit a frame",
				  c->host, tf + total);
		else
			smba_lose(c, PV_EIO, "out of memory");
		return;
	}
	f = c->out + c->olen;
	memset(f, 0, 4 + tf + total);
	f[1] = (uint8_t)((tf + total) >> 16);
	f[2] = (uint8_t)((tf + total) >> 8);
	f[3] = (uint8_t)(tf + total);
	at = 4 + tf;
	for (unsigned i = 0; i < n; i++) {
		struct req *r = q;
		struct smb2_hdr h = {0};
		size_t len;

		for (unsigned k = 0; k < i; k++)
			r = r->next;
		len = SMB2_HDR + r->body.len;
		m = f + at;
		h.credit_charge = c->sec.multi_credit ? charge_of(r) : 0;
		h.command = r->cmd;
		h.credits = CREDITS_ASK;
		h.flags = i ? SMB2_FLAGS_RELATED : 0;
		h.next = i + 1 < n ? (uint32_t)((len + 7) & ~(size_t)7) : 0;
		h.mid = r->mid = c->mid;
		c->mid += charge_of(r);
		h.session = r->cmd == SMB2_NEGOTIATE ? 0 : c->sid;
		h.tree = r->cmd == SMB2_NEGOTIATE || r->cmd == SMB2_SESSION_SETUP ||
					 r->cmd == SMB2_TREE_CONNECT
				 ? 0
				 : c->tid;
		smb2_hdr_put(m, &h);
		memcpy(m + SMB2_HDR, r->body.data, r->body.len);
		/* the preauth integrity hash takes the messages as they go (MS-SMB2 3.2.5.2,
		 * 3.2.4.2.3): NEGOTIATE's before any dialect is known, every SESSION_SETUP's */
		if (r->cmd == SMB2_NEGOTIATE) {
			memset(c->neg_hash, 0, sizeof(c->neg_hash));
			smb2_preauth(c->neg_hash, m, len);
		} else if (r->cmd == SMB2_SESSION_SETUP && c->sec.dialect == SMB2_311) {
			smb2_preauth(c->sess_hash, m, len);
		}
		if (sign)
			smb2_sign(m, h.next ? h.next : len, &c->keys);
		at += h.next ? h.next : len;
		pv_buf_release(&r->body, 1);
		r->encrypted = enc;
		r->sent = t;
		r->due = t + c->tmo;
		c->credits -= charge_of(r);
	}
	if (enc) {
		uint8_t nonce[16];

		smb2_nonce(&c->keys, nonce);
		smb2_seal(&c->keys, c->sid, nonce, f + 4, total);
	}
	c->olen += 4 + tf + total;
	/* in flight: pend is newest first */
	for (unsigned i = 0; i < n; i++) {
		struct req *r = q;

		q = q->next;
		r->next = c->pend;
		c->pend = r;
	}
}

/* Send what waited for credits, in order, while credits allow. */
void smba_unblock(struct pv_smb_conn *c)
{
	while (c->backlog && c->credits >= smba_charges(c->backlog, c->backlog->group) &&
	       c->st != CS_DEAD) {
		struct req *q = c->backlog, *last = q;
		unsigned n = q->group;

		for (unsigned i = 1; i < n; i++)
			last = last->next;
		c->backlog = last->next;
		if (!c->backlog)
			c->backlog_tail = NULL;
		last->next = NULL;
		q->group = 0;
		emit(c, q, n);
	}
	smba_flush(c, false); /* after a read: a close that caused a failure here is read next */
}

/* Queue the n requests from q (linked) as one frame: now when credits allow and nothing waits
 * before them, else behind what waits (requests go in the order they were made, even when a
 * credit comes in the middle of a batch of answers whose callbacks make more). */
void smba_submit(struct pv_smb_conn *c, struct req *q, unsigned n)
{
	struct req *last = q;

	for (unsigned i = 1; i < n; i++)
		last = last->next;
	last->next = NULL;
	if (c->credits < smba_charges(q, n) || c->backlog) {
		q->group = n;
		if (c->backlog_tail)
			c->backlog_tail->next = q;
		else
			c->backlog = q;
		c->backlog_tail = last;
		return;
	}
	emit(c, q, n);
	smba_flush(c, false);
}

struct req *smba_req_new(pv_smb_cb cb, void *arg, uint16_t cmd, enum kind kind)
{
	struct req *q = calloc(1, sizeof(*q));

	if (q) {
		q->cmd = cmd;
		q->kind = kind;
		q->cb = cb;
		q->arg = arg;
	}
	return q;
}

/* A request whose body was encoded into q->body (enc is the encoder's result): into the
 * compound being made, or queued. PV_OK, or the failure (q freed, no callback). */
int smba_send_req(struct pv_smb_conn *c, struct req *q, int enc, const char *what)
{
	if (enc < 0 || pv_buf_failed(&q->body)) {
		smba_req_free(q);
		return pv_error(PV_ECONFIG, "SMB: %s cannot be sent", what);
	}
	if (c->chaining) {
		if (c->nchain == CHAIN_MAX) {
			smba_req_free(q);
			return pv_error(PV_EBUG, "SMB: a compound of more than %d requests",
					CHAIN_MAX);
		}
		if (c->chain_tail)
			c->chain_tail->next = q;
		else
			c->chain = q;
		c->chain_tail = q;
		c->nchain++;
		return PV_OK;
	}
	smba_submit(c, q, 1);
	return PV_OK;
}

void pv_smb_chain(struct pv_smb_conn *c)
{
	c->chaining = true;
	c->nchain = 0;
	c->chain_err = PV_OK;
}

int pv_smb_send(struct pv_smb_conn *c)
{
	struct req *q = c->chain;
	unsigned n = c->nchain;
	int r = c->chain_err;

	c->chaining = false;
	c->chain = c->chain_tail = NULL;
	c->nchain = 0;
	if (c->st == CS_DEAD) /* lost while it was being made: that is why */
		r = pv_error(c->code ? c->code : PV_EUNREACH, "%s", c->err);
	if (r != PV_OK || !q) {
		while (q) {
			struct req *next = q->next;

			smba_req_free(q);
			q = next;
		}
		return r;
	}
	smba_submit(c, q, n);
	return PV_OK;
}

/* ---- frames in ---- */

/* The signing rules for the answer h (mlen bytes at msg), as MS-SMB2 3.2.5.1.3 and Samba's
 * client apply them: one that came encrypted was checked by its decryption; one that comes
 * signed is checked against our session's key, required or not; when the session signs,
 * every final answer from the logon's end on must come signed (a SESSION_SETUP that failed,
 * or made a guest's session, has no key to be signed with), and 3.1.1 signs the end of every
 * logon. A failure loses the connection: nothing after it could be trusted either. */
static int check_signature(struct pv_smb_conn *c, const struct smb2_hdr *h, uint8_t *msg,
			   size_t mlen, bool decrypted, bool keyless_setup)
{
	bool final_logon = h->command == SMB2_SESSION_SETUP && h->status == ST_OK;
	const char *why, *st;
	char other[128];

	if (decrypted)
		return 0;
	if (h->flags & SMB2_FLAGS_SIGNED) {
		why = other;
		if (!c->keyed)
			why = "came signed before there was a session key";
		else if (h->session != c->sid)
			snprintf(other, sizeof(other),
				 "came signed for session 0x%llx, not ours (0x%llx)",
				 (unsigned long long)h->session, (unsigned long long)c->sid);
		else if (smb2_verify(msg, mlen, &c->keys) == 0)
			return 0;
		else
			snprintf(other, sizeof(other), "does not match its %s signature",
				 smb2_sign_name(c->keys.sign_alg));
	} else if (c->keyed && c->sess_sign && !keyless_setup &&
		   (h->command != SMB2_SESSION_SETUP || final_logon)) {
		why = "came unsigned, and the server requires signing";
	} else if (c->keyed && final_logon && c->sec.dialect == SMB2_311 && !keyless_setup) {
		why = "came unsigned, and SMB 3.1.1 signs the end of every logon (MS-SMB2 "
		      "3.3.5.5.3: the preauth integrity hash is checked so)";
	} else {
		return 0;
	}
	st = smb2_status_name(h->status);
	smba_lose(c, PV_EREMOTE,
		  "SMB answer from '%s' has a bad signature: %s (message %llu, %s) %s; the "
		  "connection is dropped (it was changed on the way, or signed with another key: "
		  "look for anything rewriting SMB between here and the server, or build with "
		  "PROVISION_SMB_CLIENT=libsmbclient)",
		  c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid,
		  st ? st : "an unknown status", why);
	return -1;
}

/* One final answer: its request found by message id, checked (the command, encryption,
 * signature, the body), what it does to the connection done, its callback called. The
 * request stays in flight until its answer is found sound: a malformed one loses the
 * connection, and with it completes the request with the failure. */
static void answer(struct pv_smb_conn *c, const struct smb2_hdr *h, uint8_t *msg, size_t mlen,
		   bool decrypted)
{
	struct req **pp = &c->pend, *q;
	struct pv_smb_done d;
	struct smb2_rd m;
	struct smb2_session_setup_rsp setup = {0};
	struct smb2_tree_connect_rsp tree = {0};

	while (*pp && (*pp)->mid != h->mid)
		pp = &(*pp)->next;
	if (!(q = *pp)) {
		smba_lose(c, PV_EREMOTE,
			  "SMB to '%s': a malformed answer: %s for message %llu, which is not in "
			  "flight (never sent, or answered already)",
			  c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid);
		return;
	}
	if (h->command != q->cmd) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s answering %s",
			  c->host, smb2_cmd_name(h->command), smb2_cmd_name(q->cmd));
		return;
	}
	if (q->encrypted && !decrypted) {
		smba_lose(c, PV_EREMOTE,
			  "SMB answer from '%s' came unencrypted: %s (message %llu) answers a "
			  "request that went encrypted, and the session requires encryption; the "
			  "connection is dropped (it was changed on the way)",
			  c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid);
		return;
	}
	smb2_rd_init(&m, msg, mlen);
	if (q->kind == K_SESSION && smba_session_pre(c, h, &m, &setup) < 0)
		return;
	if (check_signature(c, h, msg, mlen, decrypted,
			    q->kind == K_SESSION &&
				    (h->status != ST_OK ||
				     (setup.flags & (SMB2_SESSION_GUEST | SMB2_SESSION_NULL)))) < 0)
		return;
	memset(&d, 0, sizeof(d));
	d.status = h->status;
	if (q->kind == K_VALIDATE) {
		if (smba_validate_answer(c, h, &m, decrypted) < 0)
			return;
		*pp = q->next;
		c->validating = false;
		c->validated = true;
		d.status = ST_OK; /* the tree connect's */
		d.seconds = pv_now() - q->since;
		smba_complete(c, q, &d);
		return;
	}
	if (q->kind == K_NEGOTIATE) {
		*pp = q->next;
		smba_req_free(q);
		smba_negotiate_answer(c, h, &m);
		if (c->st == CS_OPEN)
			smba_negotiated(c);
		return;
	}
	if (q->kind == K_TREE && h->status == ST_OK && smb2_tree_connect_dec(&m, &tree) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m.why);
		return;
	}
	if ((q->kind == K_USER || q->kind == K_LOGOFF) &&
	    smba_decode(q->cmd, h->status, &m, &d) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m.why);
		return;
	}
	*pp = q->next;
	d.seconds = pv_now() - q->sent;
	switch (q->kind) {
	case K_SESSION:
		smba_req_free(q);
		if (h->status == ST_OK && !c->lg.auth && c->lg.ntlm_srv_mic_due &&
		    smba_ntlm_final(c, &setup.token) < 0)
			return;
		smba_session_answer(c, h, &setup);
		return;
	case K_TREE:
		smba_tree_answer(c, h, &tree, &d);
		if (d.code == PV_OK && h->status == ST_OK && smb2_validates(c->sec.dialect) &&
		    !c->validated) {
			smba_validate_start(c, q); /* the tree's callback comes after it */
			return;
		}
		break;
	case K_LOGOFF:
		smba_session_end(c);
		smba_describe(c);
		break;
	default:
		break;
	}
	smba_complete(c, q, &d);
}

/* A lease break notification (MS-SMB2 3.2.5.19.2): when the server waits for it, the break is
 * acknowledged at once with the state it breaks to (this client keeps no cached data a break
 * would have it write back first), so no open of another waits for the lease's timeout. An
 * oplock break (24 bytes: no oplock is ever asked) or a malformed one is left alone. */
static void lease_break(struct pv_smb_conn *c, uint8_t *msg, size_t mlen)
{
	struct smb2_lease_break lb;
	struct smb2_rd m;
	struct req *q;

	smb2_rd_init(&m, msg, mlen);
	if (mlen < SMB2_HDR + 44 || smb2_lease_break_dec(&m, &lb) < 0 || !lb.ack)
		return;
	if (smba_ready_for(c, SMB2_OPLOCK_BREAK, NULL, NULL, &q) == PV_OK)
		smba_send_req(c, q, smb2_lease_break_ack_enc(&q->body, lb.key, lb.state),
			      "LEASE_BREAK_ACK");
}

/* An encrypted frame (MS-SMB2 3.2.5.1.1): its transform header checked, for our session,
 * opened in place under the session's key. The messages inside, or NULL when the
 * connection was lost. */
static uint8_t *decrypt(struct pv_smb_conn *c, uint8_t *f, size_t *len)
{
	struct smb2_rd r;
	struct smb2_tf t;

	smb2_rd_init(&r, f, *len);
	if (smb2_tf_dec(&r, &t) < 0) {
		smba_lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, r.why);
		return NULL;
	}
	if (!c->keyed || !c->keys.dec) {
		smba_lose(c, PV_EREMOTE,
			  "SMB answer from '%s' failed decryption: it came encrypted (for session "
			  "0x%llx) before the session had a key to open it; the connection is "
			  "dropped",
			  c->host, (unsigned long long)t.session);
		return NULL;
	}
	if (t.session != c->sid) {
		smba_lose(c, PV_EREMOTE,
			  "SMB answer from '%s' failed decryption: its transform header names "
			  "session 0x%llx, not ours (0x%llx); the connection is dropped",
			  c->host, (unsigned long long)t.session, (unsigned long long)c->sid);
		return NULL;
	}
	if (smb2_unseal(&c->keys, f, t.size) < 0) {
		smba_lose(c, PV_EREMOTE,
			  "SMB answer from '%s' failed decryption: it does not open under the "
			  "session's %s key (its tag does not match: it was changed on the way, or "
			  "encrypted with another key or nonce); the connection is dropped",
			  c->host, smb2_cipher_name(c->keys.cipher));
		return NULL;
	}
	*len = t.size;
	return f + SMB2_TF;
}

void smba_frame(struct pv_smb_conn *c, uint8_t *f, size_t len)
{
	bool decrypted = false;

	if (smb2_is_tf(f, len)) {
		if (!(f = decrypt(c, f, &len)))
			return;
		decrypted = true;
	}
	for (size_t off = 0; c->st != CS_DEAD && !c->freed;) {
		struct smb2_hdr h;
		size_t left = len - off, mlen;

		if (smb2_hdr_get(f + off, left, &h) < 0) {
			smba_lose(c, PV_EREMOTE,
				  "SMB to '%s': a malformed answer: no SMB2 header at "
				  "byte %zu of its frame",
				  c->host, off);
			return;
		}
		/* MS-SMB2 2.2.1: NextCommand must leave a whole header inside the frame */
		if (h.next && (h.next < SMB2_HDR || h.next > left - SMB2_HDR)) {
			smba_lose(
				c, PV_EREMOTE,
				"SMB to '%s': a malformed compound answer: NextCommand %u at byte "
				"%zu points outside its frame of %zu bytes",
				c->host, h.next, off, len);
			return;
		}
		mlen = h.next ? h.next : left;
		c->credits += h.credits;
		if (!(h.flags & SMB2_FLAGS_RESPONSE)) {
			smba_lose(c, PV_EREMOTE, "SMB to '%s': a request where an answer was due",
				  c->host);
			return;
		}
		/* interim answers (the request went async) and break notifications: no answer; a
		 * lease break the server waits for is acknowledged */
		if (h.mid == UINT64_MAX && h.command == SMB2_OPLOCK_BREAK)
			lease_break(c, f + off, mlen);
		else if (!(h.status == ST_PENDING && (h.flags & SMB2_FLAGS_ASYNC)) &&
			 h.mid != UINT64_MAX) {
			c->last_final = pv_now();
			answer(c, &h, f + off, mlen, decrypted);
		}
		if (!h.next)
			break;
		off += h.next;
	}
}
