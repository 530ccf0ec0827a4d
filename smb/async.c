/* smb/async.c: the SMB2 engine (see async.h): connections on one epoll loop, their requests,
 * compounds and credits, the logon and its keys, and the SMB 3 security of every frame that
 * goes or comes (smb/sec.c's signing and transform). Every message is encoded and decoded by
 * smb/smb2.c; this file keeps the transport and the state. */
#include "smb/async.h"

#include "smb/internal.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "util/err.h"
#include "util/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The largest answer taken: none we ask for holds more than 64 KiB of data (READ, a listing,
 * an IOCTL's output) with its header, or a 64 KiB security buffer (16-bit length), encrypted
 * or not. */
#define FRAME_MAX   (1u << 20)
#define IO_MAX	    65536u
#define LIST_BYTES  65536u /* a QUERY_DIRECTORY answer's buffer, at most */
#define CREDITS_ASK 32
#define SWEEP_SECS  0.05 /* deadlines are looked at every 50 ms at most */
#define CHAIN_MAX   8	 /* requests in one compound */

const uint8_t PV_SMBA_RELATED[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

enum cstate { CS_CONNECTING, CS_NEGOTIATE, CS_OPEN, CS_DEAD };

/* What an answer is for: a caller's request, or a step of the engine's own. */
enum kind { K_USER, K_NEGOTIATE, K_SESSION, K_TREE, K_LOGOFF };

struct req {
	uint64_t mid;
	uint16_t cmd;
	enum kind kind;
	pv_smba_cb cb;
	void *arg;
	double sent, due;
	struct pv_buf body; /* encoded, until it is framed */
	bool encrypted;	    /* it went encrypted: its answer must come so */
	unsigned group;	    /* waiting for credits: the messages of its compound (on the first) */
	struct req *next;
};

/* The logon under way (pv_smba_logon). */
struct signon {
	bool active;
	char *wg, *user;
	struct pv_secret *pw;
	pv_smba_auth_fn auth;
	void *auth_arg;
	bool auth_done;
	enum pv_smba_encrypt encrypt;
	pv_smba_cb cb;
	void *arg;
	int step;
	uint8_t skey[32]; /* the logon's session key, until the keys are made */
	size_t sklen;
};

struct pv_smba {
	struct pv_smba_loop *l;
	struct pv_smba *prev, *next; /* in the loop's list */
	int fd;
	enum cstate st;
	char *host, *server;
	double tmo; /* seconds */
	bool pipelined;
	double last_final; /* the last final answer (pipelined deadlines count from it) */
	/* the opening of pv_smba_open: a logon and a tree to make before ready */
	bool opening;
	double open_due;
	pv_smba_cb ready;
	void *ready_arg;
	struct signon want; /* the opening's logon, not yet started */
	char *open_share;
	enum pv_smba_encrypt open_encrypt;
	/* sending */
	uint64_t mid;
	int64_t credits;
	bool epout; /* EPOLLOUT asked for */
	uint8_t *out, *in;
	size_t olen, ocap, osent, ilen, icap;
	struct req *pend, *backlog, *backlog_tail; /* sent; waiting for credits */
	struct req *chain, *chain_tail;		   /* a compound being made */
	unsigned nchain;
	bool chaining;
	int chain_err;
	/* what NEGOTIATE settled */
	uint16_t offer_ciphers[4];
	size_t noffer_ciphers;
	uint8_t neg_hash[64]; /* SHA-512(0^64 || the NEGOTIATE request) */
	struct smb2_conn sec;
	bool negotiated;
	/* the session */
	uint64_t sid;
	bool keyed;
	struct smb2_keys keys;
	bool sess_encrypt, sess_sign;
	uint8_t sess_hash[64]; /* 3.1.1: the session's preauth hash */
	struct signon lg;
	/* the tree */
	uint32_t tid;
	bool tree_encrypt;
	char *share;
	char desc[96];
	char err[384];
	int code;
	bool freed; /* closed: freed at the end of the loop's turn */
	/* a callback yielded: frames wait in the input for the next turn (held) */
	bool yield, is_held;
	bool eof; /* the server closed (eof_err: how): said once what came before is taken */
	int eof_err;
};

struct pv_smba_loop {
	int ep;
	struct pv_smba *conns;
	size_t n;
	struct pv_smba *dead; /* closed during a turn: freed at its end */
	double sweep_at;      /* the next look at every connection's deadlines */
	size_t nheld;	      /* connections whose input holds frames a callback left */
};

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

static double now(void)
{
	return pv_now();
}

/* Whether c's input holds frames for the loop's next turn. */
static void held(struct pv_smba *c, bool on)
{
	if (on != c->is_held)
		c->l->nheld += on ? 1 : (size_t)-1;
	c->is_held = on;
}

void pv_smba_yield(struct pv_smba *c)
{
	if (c)
		c->yield = true;
}

/* A timeout for a message: "200 ms", "10 s". */
static const char *span(double secs, char *buf, size_t len)
{
	long long ms = (long long)(secs * 1000 + 0.5);

	if (ms % 1000 == 0)
		snprintf(buf, len, "%lld s", ms / 1000);
	else
		snprintf(buf, len, "%lld ms", ms);
	return buf;
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

/* ---- requests and failure ---- */

static void req_free(struct req *q)
{
	pv_buf_release(&q->body, 1);
	free(q);
}

static void complete(struct pv_smba *c, struct req *q, const struct pv_smba_done *d)
{
	if (q->cb)
		q->cb(c, q->arg, d);
	req_free(q);
}

static void logon_clear(struct signon *g)
{
	free(g->wg);
	free(g->user);
	pv_secret_free(g->pw);
	explicit_bzero(g, sizeof(*g));
}

/* The session ends, or never began: its keys go. */
static void session_end(struct pv_smba *c)
{
	c->sid = 0;
	c->keyed = false;
	smb2_keys_clear(&c->keys);
	c->sess_encrypt = c->sess_sign = false;
	c->tid = 0;
	c->tree_encrypt = false;
	explicit_bzero(c->sess_hash, sizeof(c->sess_hash));
}

static void epoll_update(struct pv_smba *c);

static void lose(struct pv_smba *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The connection is lost: every request completes with the failure, a logon under way and
 * ready too. */
static void vlose(struct pv_smba *c, int code, const char *fmt, va_list ap)
{
	struct pv_smba_done d;
	struct req *lists[2];

	if (c->st == CS_DEAD)
		return;
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	c->code = code;
	c->st = CS_DEAD;
	held(c, false);
	if (c->fd >= 0) {
		epoll_ctl(c->l->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
	memset(&d, 0, sizeof(d));
	d.code = code;
	d.msg = c->err;
	lists[0] = c->pend;
	lists[1] = c->backlog;
	c->pend = c->backlog = c->backlog_tail = NULL;
	/* a compound being made goes without its callbacks: pv_smba_send says it failed */
	while (c->chain) {
		struct req *q = c->chain;

		c->chain = q->next;
		req_free(q);
	}
	c->chain_tail = NULL;
	c->nchain = 0;
	if (c->chaining && c->chain_err == PV_OK)
		c->chain_err = code;
	for (int i = 0; i < 2; i++)
		while (lists[i]) {
			struct req *q = lists[i];

			lists[i] = q->next;
			/* the engine's own steps tell their callers below */
			if (q->kind == K_USER || q->kind == K_TREE || q->kind == K_LOGOFF)
				complete(c, q, &d);
			else
				req_free(q);
		}
	if (c->lg.active) {
		pv_smba_cb cb = c->lg.cb;
		void *arg = c->lg.arg;

		logon_clear(&c->lg);
		if (cb)
			cb(c, arg, &d);
	}
	logon_clear(&c->want);
	session_end(c);
	if (c->ready) {
		pv_smba_cb ready = c->ready;

		c->ready = NULL;
		c->opening = false;
		ready(c, c->ready_arg, &d);
	}
}

static void lose(struct pv_smba *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlose(c, code, fmt, ap);
	va_end(ap);
}

void pv_smba_abort(struct pv_smba *c, int code, const char *fmt, ...)
{
	va_list ap;

	if (!c || c->freed)
		return;
	va_start(ap, fmt);
	vlose(c, code, fmt, ap);
	va_end(ap);
}

/* ---- sending ---- */

static void epoll_update(struct pv_smba *c)
{
	bool want = c->st == CS_CONNECTING || c->osent < c->olen;
	struct epoll_event ev;

	if (c->fd < 0 || want == c->epout)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
	ev.data.ptr = c;
	if (epoll_ctl(c->l->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->epout = want;
}

/* Send what is queued. A failure loses the connection only when may_lose: when the loop
 * found the socket writable (or broken), after it read what came. Not from a request
 * function (pv_smba_read...), whose callers are told that callbacks come from the loop
 * only, nor after a read (a server that answered and closed: its close is what to say):
 * there the bytes stay queued, and the loop's next turn reads the close or fails the send. */
static void flush(struct pv_smba *c, bool may_lose)
{
	while (c->osent < c->olen && c->st != CS_CONNECTING && c->st != CS_DEAD) {
		ssize_t w = send(c->fd, c->out + c->osent, c->olen - c->osent, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0 && !may_lose)
			break;
		if (w <= 0) {
			lose(c, PV_EUNREACH, "SMB to '%s': sending failed: %s", c->host,
			     strerror(errno));
			return;
		}
		c->osent += (size_t)w;
	}
	if (c->osent == c->olen)
		c->osent = c->olen = 0;
	epoll_update(c);
}

/* Whether a request of cmd goes encrypted: every one of a session that encrypts, and those
 * on a share that requires it (MS-SMB2 3.2.4.1.8); never the logon's. */
static bool encrypts(const struct pv_smba *c, uint16_t cmd)
{
	if (!c->keyed || cmd == SMB2_NEGOTIATE || cmd == SMB2_SESSION_SETUP)
		return false;
	return c->sess_encrypt ||
	       (c->tree_encrypt && cmd != SMB2_TREE_CONNECT && cmd != SMB2_LOGOFF);
}

/* Whether a request of cmd that goes in clear is signed (MS-SMB2 3.2.4.1.1): after the logon
 * when the session signs, and 3.1.1's TREE_CONNECT always (3.3.5.7 has the server refuse it
 * otherwise). */
static bool signs(const struct pv_smba *c, uint16_t cmd)
{
	if (!c->keyed || cmd == SMB2_NEGOTIATE || cmd == SMB2_SESSION_SETUP)
		return false;
	return c->sess_sign || (c->sec.dialect == SMB2_311 && cmd == SMB2_TREE_CONNECT);
}

/* Frame the n requests from q on (a compound when n > 1: each message 8-byte aligned, its
 * NextCommand pointing at the next, each after the first related), sign or encrypt them, and
 * queue the frame to be sent; they go in flight. */
static void emit(struct pv_smba *c, struct req *q, unsigned n)
{
	bool enc = encrypts(c, q->cmd), sign = !enc && signs(c, q->cmd);
	size_t total = 0, tf = enc ? SMB2_TF : 0, at;
	struct req *p = q;
	uint8_t *f, *m;
	double t = now();

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
			lose(c, PV_EBUG, "SMB to '%s': a request of %zu bytes does not fit a frame",
			     c->host, tf + total);
		else
			lose(c, PV_EIO, "out of memory");
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
		h.credit_charge = c->sec.multi_credit ? 1 : 0;
		h.command = r->cmd;
		h.credits = CREDITS_ASK;
		h.flags = i ? SMB2_FLAGS_RELATED : 0;
		h.next = i + 1 < n ? (uint32_t)((len + 7) & ~(size_t)7) : 0;
		h.mid = r->mid = c->mid++;
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
		c->credits--;
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
static void unblock(struct pv_smba *c)
{
	while (c->backlog && c->credits >= c->backlog->group && c->st != CS_DEAD) {
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
	flush(c, false); /* after a read: a close that caused a failure here is read next */
}

/* Queue the n requests from q (linked) as one frame: now when credits allow and nothing waits
 * before them, else behind what waits (requests go in the order they were made, even when a
 * credit comes in the middle of a batch of answers whose callbacks make more). */
static void submit(struct pv_smba *c, struct req *q, unsigned n)
{
	struct req *last = q;

	for (unsigned i = 1; i < n; i++)
		last = last->next;
	last->next = NULL;
	if (c->credits < n || c->backlog) {
		q->group = n;
		if (c->backlog_tail)
			c->backlog_tail->next = q;
		else
			c->backlog = q;
		c->backlog_tail = last;
		return;
	}
	emit(c, q, n);
	flush(c, false);
}

static struct req *req_new(pv_smba_cb cb, void *arg, uint16_t cmd, enum kind kind)
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
static int send_req(struct pv_smba *c, struct req *q, int enc, const char *what)
{
	if (enc < 0 || pv_buf_failed(&q->body)) {
		req_free(q);
		return pv_error(PV_ECONFIG, "SMB: %s cannot be sent", what);
	}
	if (c->chaining) {
		if (c->nchain == CHAIN_MAX) {
			req_free(q);
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
	submit(c, q, 1);
	return PV_OK;
}

void pv_smba_chain(struct pv_smba *c)
{
	c->chaining = true;
	c->nchain = 0;
	c->chain_err = PV_OK;
}

int pv_smba_send(struct pv_smba *c)
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

			req_free(q);
			q = next;
		}
		return r;
	}
	submit(c, q, n);
	return PV_OK;
}

/* ---- describing ---- */

static void describe(struct pv_smba *c)
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
static const char *no_cipher(const struct pv_smba *c, char *buf, size_t len)
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

static void opened(struct pv_smba *c)
{
	struct pv_smba_done d;
	pv_smba_cb ready = c->ready;

	memset(&d, 0, sizeof(d));
	c->opening = false;
	c->ready = NULL;
	d.seconds = now() - (c->open_due - c->tmo);
	if (ready)
		ready(c, c->ready_arg, &d);
}

static void on_open_tree(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	char st[96];

	(void)arg;
	if (d->code != PV_OK) {
		lose(c, d->code, "%s", d->msg);
		return;
	}
	if (d->status != ST_OK) {
		lose(c, d->status == ST_ACCESS_DENIED ? PV_ECRED : PV_EREMOTE,
		     "SMB tree connect to //%s/%s as %s: %s", c->server, c->open_share,
		     c->want.user ? c->want.user : "", status_text(d->status, st, sizeof(st)));
		return;
	}
	opened(c);
}

static void on_open_logon(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	(void)arg;
	if (d->code != PV_OK) {
		lose(c, d->code, "%s", d->msg);
		return;
	}
	if (!c->open_share) {
		opened(c);
		return;
	}
	if (pv_smba_tree(c, c->open_share, on_open_tree, NULL) != PV_OK)
		lose(c, PV_EIO, "%s", pv_errmsg());
}

static int logon_start(struct pv_smba *c, struct signon *g);

/* NEGOTIATE answered and checked: the opening goes on with its logon, or ends. */
static void negotiated(struct pv_smba *c)
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
		lose(c, r, "%s", pv_errmsg());
}

/* What this client offers (MS-SMB2 3.2.4.2.2): every dialect, signing enabled (it signs when
 * the server requires it), multi-credit requests, encryption, and for 3.1.1 its ciphers (the
 * caller's one when a cipher was asked for) and signing algorithms. */
static void offer(const struct pv_smba *c, struct smb2_negotiate_req *q)
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

static void negotiate(struct pv_smba *c)
{
	struct smb2_negotiate_req q;
	struct req *r = req_new(NULL, NULL, SMB2_NEGOTIATE, K_NEGOTIATE);

	offer(c, &q);

	c->st = CS_NEGOTIATE;
	if (!r) {
		lose(c, PV_EIO, "out of memory");
		return;
	}
	if (random_bytes(q.guid, 16, 0x61) < 0 || random_bytes(q.salt, 32, 0x73) < 0) {
		req_free(r);
		lose(c, PV_EIO, "getrandom: %s", strerror(errno));
		return;
	}
	if (send_req(c, r, smb2_negotiate_enc(&r->body, &q), "NEGOTIATE") != PV_OK)
		lose(c, PV_EIO, "out of memory");
}

/* The NEGOTIATE answer m (a success's: checked, then what it settled taken). */
static void negotiate_answer(struct pv_smba *c, const struct smb2_hdr *h, struct smb2_rd *m)
{
	struct smb2_negotiate_req q;
	struct smb2_negotiate_rsp a;
	char why[256], st[96];

	if (h->status != ST_OK) {
		lose(c, PV_EREMOTE,
		     "SMB to '%s': the server accepts none of the dialects offered, SMB 2.0.2 to "
		     "3.1.1 (%s); look at its `server min protocol` and `server max protocol` "
		     "(Samba), or whether SMB 2 and 3 are enabled (Windows)",
		     c->host, status_text(h->status, st, sizeof(st)));
		return;
	}
	if (smb2_negotiate_dec(m, &a) < 0) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m->why);
		return;
	}
	offer(c, &q);
	if (smb2_negotiated(&q, &a, &c->sec, why, sizeof(why)) < 0) {
		lose(c, PV_EREMOTE, "SMB to '%s': %s", c->host, why);
		return;
	}
	/* MS-SMB2 3.2.5.2: the connection's hash takes the answer after the request */
	if (c->sec.dialect == SMB2_311) {
		memcpy(c->sec.preauth, c->neg_hash, 64);
		smb2_preauth(c->sec.preauth, m->p, m->len);
	}
	c->negotiated = true;
	c->st = CS_OPEN;
	describe(c);
}

/* ---- the logon ---- */

static void session_send(struct pv_smba *c, const struct pv_buf *tok)
{
	struct req *r = req_new(NULL, NULL, SMB2_SESSION_SETUP, K_SESSION);

	if (!r) {
		lose(c, PV_EIO, "out of memory");
		return;
	}
	pv_buf_secret(&r->body);
	if (send_req(c, r,
		     smb2_session_setup_enc(&r->body, SMB2_SIGNING_ENABLED, tok->data, tok->len),
		     "SESSION_SETUP") != PV_OK)
		lose(c, PV_EIO, "out of memory");
}

/* The logon ended: its caller told (code PV_OK, or the failure with msg), its secrets gone;
 * a failed one leaves no session. */
static void logon_done(struct pv_smba *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void logon_done(struct pv_smba *c, int code, const char *fmt, ...)
{
	struct pv_smba_done d;
	pv_smba_cb cb = c->lg.cb;
	void *arg = c->lg.arg;
	char msg[512] = "";

	if (fmt) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	logon_clear(&c->lg);
	if (code != PV_OK)
		session_end(c);
	describe(c);
	memset(&d, 0, sizeof(d));
	d.code = code;
	d.msg = msg;
	if (cb)
		cb(c, arg, &d);
}

/* The logon's name for messages: "LAB\u1", or "u1" with Kerberos. */
static const char *who(const struct pv_smba *c, char *buf, size_t len)
{
	if (c->lg.auth || !c->lg.wg)
		snprintf(buf, len, "%s", c->lg.user ? c->lg.user : "");
	else
		snprintf(buf, len, "%s\\%s", c->lg.wg, c->lg.user);
	return buf;
}

static int logon_start(struct pv_smba *c, struct signon *g)
{
	struct pv_buf tok = PV_BUF_INIT;
	char why[256], w[300];
	int r;

	if (c->st != CS_OPEN || c->lg.active || c->sid) {
		logon_clear(g);
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
	if (c->lg.encrypt != PV_SMBA_ENCRYPT_AUTO &&
	    (!c->sec.cipher || (c->lg.encrypt > PV_SMBA_ENCRYPT_ON &&
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
			w, c->host, c->lg.encrypt > PV_SMBA_ENCRYPT_ON ? " with " : "",
			c->lg.encrypt > PV_SMBA_ENCRYPT_ON
				? smb2_cipher_name((uint16_t)(c->lg.encrypt - 1))
				: "",
			why);
		logon_clear(&c->lg);
		return r;
	}
	memcpy(c->sess_hash, c->sec.preauth, 64);
	if (c->lg.auth) {
		bool done = false;

		if (c->lg.auth(c->lg.auth_arg, NULL, 0, &tok, &done, c->lg.skey, &c->lg.sklen) !=
		    PV_OK) {
			r = pv_error(PV_ECRED, "SMB logon as %s on '%s': %s", w, c->host,
				     pv_errmsg());
			logon_clear(&c->lg);
			pv_buf_release(&tok, 1);
			return r;
		}
		c->lg.auth_done = done;
	} else if (pv_ntlm_negotiate(&tok) < 0) {
		logon_clear(&c->lg);
		return pv_error(PV_EIO, "out of memory");
	}
	session_send(c, &tok);
	pv_buf_release(&tok, 1);
	return PV_OK;
}

int pv_smba_logon(struct pv_smba *c, const char *workgroup, const char *user,
		  const struct pv_secret *password, pv_smba_auth_fn auth, void *auth_arg,
		  enum pv_smba_encrypt encrypt, pv_smba_cb cb, void *arg)
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
		logon_clear(&g);
		return pv_error(PV_EIO, "out of memory");
	}
	return logon_start(c, &g);
}

/* The next step of an NTLM logon: the server's CHALLENGE (in tok) answered with the
 * AUTHENTICATE, whose session key is the session's. */
static void ntlm_step(struct pv_smba *c, const struct smb2_rd *tok)
{
	struct pv_buf out = PV_BUF_INIT;
	struct pv_ntlm_challenge ch;
	uint8_t cchal[8];
	uint64_t t = ((uint64_t)time(NULL) + 11644473600ull) * 10000000ull;
	char w[300];
	int nr;

	who(c, w, sizeof(w));
	if (tok->len == 0 || pv_ntlm_parse_challenge(tok->p, tok->len, &ch) < 0) {
		logon_done(c, PV_EREMOTE, "SMB logon as %s on '%s': the server did not offer NTLM",
			   w, c->host);
		return;
	}
	pv_buf_secret(&out);
	nr = random_bytes(cchal, 8, 0x5e) < 0
		     ? -3
		     : pv_ntlm_authenticate(&ch, c->lg.user, c->lg.wg, c->lg.pw->data,
					    c->lg.pw->len, t, cchal, &out, c->lg.skey);
	c->lg.sklen = 16;
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
		session_send(c, &out);
	}
	pv_buf_release(&out, 1);
}

/* What the server's refusal of a logon means, for the message: a protocol setting where the
 * status says one, else the status. */
static void refusal(struct pv_smba *c, uint32_t status, int *code, char *buf, size_t len)
{
	char st[96], nc[256];

	status_text(status, st, sizeof(st));
	*code = PV_ECRED;
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
			 "refuses "
			 "a client that cannot encrypt, and here %s",
			 st, no_cipher(c, nc, sizeof(nc)));
	else
		snprintf(buf, len,
			 "refused (%s), which is not a wrong password (NT_STATUS_LOGON_FAILURE): "
			 "look at the server's protocol settings (signing, encryption, `server min "
			 "protocol`) and the account's restrictions",
			 st);
}

/* A final SESSION_SETUP success is a logon only when this side's part of the authentication
 * is complete (MS-SMB2 3.2.5.3.1: "If the GSS protocol returns success, and the Status code
 * ... was STATUS_SUCCESS, authentication is complete"): NTLM's AUTHENTICATE sent (its session
 * key made from the password and the server's challenge), or the Kerberos exchange ended by
 * the mechanism with the server's own token (its AP-REP: mutual authentication) and a session
 * key. Anything else is a server claiming a logon that never happened: with no key, signing
 * and encryption would run under keys anyone can compute. -1 (the connection lost) then. */
static int unauthenticated(struct pv_smba *c, char *w, size_t wlen)
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
	lose(c, PV_EREMOTE,
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
static int session_pre(struct pv_smba *c, const struct smb2_hdr *h, struct smb2_rd *m,
		       struct smb2_session_setup_rsp *a)
{
	char w[300];

	if (h->status != ST_OK && h->status != ST_MORE_PROCESSING)
		return 0;
	if (smb2_session_setup_dec(m, a) < 0) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m->why);
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
			lose(c, PV_EREMOTE, "SMB logon as %s on '%s': %s", who(c, w, sizeof(w)),
			     c->host, pv_errmsg());
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
		lose(c, PV_EIO, "out of memory");
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
static void session_answer(struct pv_smba *c, const struct smb2_hdr *h,
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
			"SMB logon as %s on '%s': the server requires encryption of every "
			"session (Samba: `server smb encrypt = required`; Windows: EncryptData), "
			"but %s",
			w, c->host, no_cipher(c, nc, sizeof(nc)));
		return;
	}
	c->sess_encrypt = (a->flags & SMB2_SESSION_ENCRYPT) || c->lg.encrypt;
	logon_done(c, PV_OK, NULL);
}

/* ---- trees, logoff ---- */

int pv_smba_tree(struct pv_smba *c, const char *share, pv_smba_cb cb, void *arg)
{
	struct req *q;
	char *s;

	if (c->st != CS_OPEN || !c->keyed || c->lg.active)
		return pv_error(c->st == CS_DEAD ? (c->code ? c->code : PV_EUNREACH) : PV_EBUG,
				"%s",
				c->st == CS_DEAD ? c->err : "SMB: no session to connect with");
	if (!(q = req_new(cb, arg, SMB2_TREE_CONNECT, K_TREE)) || !(s = strdup(share))) {
		free(q);
		return pv_error(PV_EIO, "out of memory");
	}
	free(c->share);
	c->share = s;
	return send_req(c, q, smb2_tree_connect_enc(&q->body, c->server, share), "the share name");
}

/* A TREE_CONNECT answer (a success's decoded into a): the tree taken, or why it cannot be. */
static int tree_answer(struct pv_smba *c, const struct smb2_hdr *h,
		       const struct smb2_tree_connect_rsp *a, struct pv_smba_done *d)
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
	describe(c);
	return 0;
}

int pv_smba_logoff(struct pv_smba *c, pv_smba_cb cb, void *arg)
{
	struct req *q;

	if (c->st != CS_OPEN || !c->keyed || c->lg.active)
		return pv_error(c->st == CS_DEAD ? (c->code ? c->code : PV_EUNREACH) : PV_EBUG,
				"%s", c->st == CS_DEAD ? c->err : "SMB: no session to log off");
	if (!(q = req_new(cb, arg, SMB2_LOGOFF, K_LOGOFF)))
		return pv_error(PV_EIO, "out of memory");
	return send_req(c, q, smb2_logoff_enc(&q->body), "LOGOFF");
}

/* ---- receiving ---- */

/* The signing rules for the answer h (mlen bytes at msg), as MS-SMB2 3.2.5.1.3 and Samba's
 * client apply them: one that came encrypted was checked by its decryption; one that comes
 * signed is checked against our session's key, required or not; when the session signs,
 * every final answer from the logon's end on must come signed (a SESSION_SETUP that failed,
 * or made a guest's session, has no key to be signed with), and 3.1.1 signs the end of every
 * logon. A failure loses the connection: nothing after it could be trusted either. */
static int check_signature(struct pv_smba *c, const struct smb2_hdr *h, uint8_t *msg, size_t mlen,
			   bool decrypted, bool keyless_setup)
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
	lose(c, PV_EREMOTE,
	     "SMB answer from '%s' has a bad signature: %s (message %llu, %s) %s; the connection "
	     "is dropped (it was changed on the way, or signed with another key: look for "
	     "anything rewriting SMB between here and the server, or build with "
	     "PROVISION_SMB_CLIENT=libsmbclient)",
	     c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid,
	     st ? st : "an unknown status", why);
	return -1;
}

/* The answer of a user's request (a success's body, or a failure's error response) decoded
 * into d. -1 (m->why) when malformed. */
static int decode(uint16_t cmd, uint32_t status, struct smb2_rd *m, struct pv_smba_done *d)
{
	struct smb2_rd buf = {0};
	int r = 0;

	/* a failure's body is an error response; a success's is the command's (and a
	 * BUFFER_OVERFLOW's, which QUERY_INFO and IOCTL answer with part of their output) */
	if (status != ST_OK &&
	    !(status == ST_BUFFER_OVERFLOW && (cmd == SMB2_QUERY_INFO || cmd == SMB2_IOCTL)))
		return 0;
	switch (cmd) {
	case SMB2_CREATE: {
		struct smb2_create_rsp a;

		if ((r = smb2_create_dec(m, &a)) == 0) {
			memcpy(d->fid, a.fid, 16);
			d->size = a.eof;
		}
		break;
	}
	case SMB2_CLOSE:
		r = smb2_close_dec(m, &d->size);
		break;
	case SMB2_READ:
		r = smb2_read_dec(m, &buf);
		break;
	case SMB2_WRITE: {
		uint32_t n = 0;

		r = smb2_write_dec(m, &n);
		d->size = n;
		break;
	}
	case SMB2_QUERY_DIRECTORY:
		r = smb2_query_dir_dec(m, &buf);
		break;
	case SMB2_QUERY_INFO:
		r = smb2_query_info_dec(m, &buf);
		break;
	case SMB2_CHANGE_NOTIFY:
		r = smb2_notify_dec(m, &buf);
		break;
	case SMB2_IOCTL: {
		struct smb2_ioctl_rsp a;

		if ((r = smb2_ioctl_dec(m, &a)) == 0)
			buf = a.out;
		break;
	}
	default:
		r = smb2_empty_dec(m, cmd);
		break;
	}
	d->buf = buf.p ? buf.p : m->p + m->len; /* a pointer one may do arithmetic on */
	d->buflen = buf.len;
	return r;
}

/* One final answer: its request found by message id, checked (the command, encryption,
 * signature, the body), what it does to the connection done, its callback called. The
 * request stays in flight until its answer is found sound: a malformed one loses the
 * connection, and with it completes the request with the failure. */
static void answer(struct pv_smba *c, const struct smb2_hdr *h, uint8_t *msg, size_t mlen,
		   bool decrypted)
{
	struct req **pp = &c->pend, *q;
	struct pv_smba_done d;
	struct smb2_rd m;
	struct smb2_session_setup_rsp setup = {0};
	struct smb2_tree_connect_rsp tree = {0};

	while (*pp && (*pp)->mid != h->mid)
		pp = &(*pp)->next;
	if (!(q = *pp)) {
		lose(c, PV_EREMOTE,
		     "SMB to '%s': a malformed answer: %s for message %llu, which is not in flight "
		     "(never sent, or answered already)",
		     c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid);
		return;
	}
	if (h->command != q->cmd) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s answering %s", c->host,
		     smb2_cmd_name(h->command), smb2_cmd_name(q->cmd));
		return;
	}
	if (q->encrypted && !decrypted) {
		lose(c, PV_EREMOTE,
		     "SMB answer from '%s' came unencrypted: %s (message %llu) answers a request "
		     "that went encrypted, and the session requires encryption; the connection is "
		     "dropped (it was changed on the way)",
		     c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid);
		return;
	}
	smb2_rd_init(&m, msg, mlen);
	if (q->kind == K_SESSION && session_pre(c, h, &m, &setup) < 0)
		return;
	if (check_signature(c, h, msg, mlen, decrypted,
			    q->kind == K_SESSION &&
				    (h->status != ST_OK ||
				     (setup.flags & (SMB2_SESSION_GUEST | SMB2_SESSION_NULL)))) < 0)
		return;
	memset(&d, 0, sizeof(d));
	d.status = h->status;
	if (q->kind == K_NEGOTIATE) {
		*pp = q->next;
		req_free(q);
		negotiate_answer(c, h, &m);
		if (c->st == CS_OPEN)
			negotiated(c);
		return;
	}
	if (q->kind == K_TREE && h->status == ST_OK && smb2_tree_connect_dec(&m, &tree) < 0) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m.why);
		return;
	}
	if ((q->kind == K_USER || q->kind == K_LOGOFF) && decode(q->cmd, h->status, &m, &d) < 0) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, m.why);
		return;
	}
	*pp = q->next;
	d.seconds = now() - q->sent;
	switch (q->kind) {
	case K_SESSION:
		req_free(q);
		session_answer(c, h, &setup);
		return;
	case K_TREE:
		tree_answer(c, h, &tree, &d);
		break;
	case K_LOGOFF:
		session_end(c);
		describe(c);
		break;
	default:
		break;
	}
	complete(c, q, &d);
}

static int ready_for(struct pv_smba *c, uint16_t cmd, pv_smba_cb cb, void *arg, struct req **q);
static int send_req(struct pv_smba *c, struct req *q, int enc, const char *what);

/* A lease break notification (MS-SMB2 3.2.5.19.2): when the server waits for it, the break is
 * acknowledged at once with the state it breaks to (this client keeps no cached data a break
 * would have it write back first), so no open of another waits for the lease's timeout. An
 * oplock break (24 bytes: no oplock is ever asked) or a malformed one is left alone. */
static void lease_break(struct pv_smba *c, uint8_t *msg, size_t mlen)
{
	struct smb2_lease_break lb;
	struct smb2_rd m;
	struct req *q;

	smb2_rd_init(&m, msg, mlen);
	if (mlen < SMB2_HDR + 44 || smb2_lease_break_dec(&m, &lb) < 0 || !lb.ack)
		return;
	if (ready_for(c, SMB2_OPLOCK_BREAK, NULL, NULL, &q) == PV_OK)
		send_req(c, q, smb2_lease_break_ack_enc(&q->body, lb.key, lb.state),
			 "LEASE_BREAK_ACK");
}

/* An encrypted frame (MS-SMB2 3.2.5.1.1): its transform header checked, for our session,
 * opened in place under the session's key. The messages inside, or NULL when the
 * connection was lost. */
static uint8_t *decrypt(struct pv_smba *c, uint8_t *f, size_t *len)
{
	struct smb2_rd r;
	struct smb2_tf t;

	smb2_rd_init(&r, f, *len);
	if (smb2_tf_dec(&r, &t) < 0) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: %s", c->host, r.why);
		return NULL;
	}
	if (!c->keyed || !c->keys.dec) {
		lose(c, PV_EREMOTE,
		     "SMB answer from '%s' failed decryption: it came encrypted (for session "
		     "0x%llx) before the session had a key to open it; the connection is dropped",
		     c->host, (unsigned long long)t.session);
		return NULL;
	}
	if (t.session != c->sid) {
		lose(c, PV_EREMOTE,
		     "SMB answer from '%s' failed decryption: its transform header names session "
		     "0x%llx, not ours (0x%llx); the connection is dropped",
		     c->host, (unsigned long long)t.session, (unsigned long long)c->sid);
		return NULL;
	}
	if (smb2_unseal(&c->keys, f, t.size) < 0) {
		lose(c, PV_EREMOTE,
		     "SMB answer from '%s' failed decryption: it does not open under the session's "
		     "%s key (its tag does not match: it was changed on the way, or encrypted "
		     "with another key or nonce); the connection is dropped",
		     c->host, smb2_cipher_name(c->keys.cipher));
		return NULL;
	}
	*len = t.size;
	return f + SMB2_TF;
}

static void frame(struct pv_smba *c, uint8_t *f, size_t len)
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
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: no SMB2 header at "
			     "byte %zu of its frame",
			     c->host, off);
			return;
		}
		/* MS-SMB2 2.2.1: NextCommand must leave a whole header inside the frame */
		if (h.next && (h.next < SMB2_HDR || h.next > left - SMB2_HDR)) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed compound answer: NextCommand %u at byte %zu "
			     "points outside its frame of %zu bytes",
			     c->host, h.next, off, len);
			return;
		}
		mlen = h.next ? h.next : left;
		c->credits += h.credits;
		if (!(h.flags & SMB2_FLAGS_RESPONSE)) {
			lose(c, PV_EREMOTE, "SMB to '%s': a request where an answer was due",
			     c->host);
			return;
		}
		/* interim answers (the request went async) and break notifications: no answer; a
		 * lease break the server waits for is acknowledged */
		if (h.mid == UINT64_MAX && h.command == SMB2_OPLOCK_BREAK)
			lease_break(c, f + off, mlen);
		else if (!(h.status == ST_PENDING && (h.flags & SMB2_FLAGS_ASYNC)) &&
			 h.mid != UINT64_MAX) {
			c->last_final = now();
			answer(c, &h, f + off, mlen, decrypted);
		}
		if (!h.next)
			break;
		off += h.next;
	}
}

/* The whole frames in c's input (MS-SMB2 2.1 Direct TCP: a zero byte and a 24-bit length;
 * session keep-alives, type 0x85, skipped), answer after answer, until a callback yields
 * (pv_smba_yield): the rest then waits in the buffer for the loop's next turn. Then the
 * close, when the server closed and every answer that came before it was taken. */
static void take(struct pv_smba *c)
{
	size_t at = 0;

	c->yield = false;
	while (c->st != CS_DEAD && !c->freed && !c->yield && c->ilen - at >= 4) {
		uint8_t *p = c->in + at;
		size_t len = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];

		if (p[0] == 0x85 && len == 0) {
			at += 4;
			continue;
		}
		if (p[0] != 0) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': not an SMB2 answer (a NetBIOS message of type 0x%02x, "
			     "%zu bytes)",
			     c->host, p[0], len);
			break;
		}
		if (len < SMB2_HDR) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: a frame of %zu bytes, shorter than "
			     "an SMB2 header (%d bytes)",
			     c->host, len, SMB2_HDR);
			break;
		}
		if (len > FRAME_MAX) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: a frame of %zu bytes, more than the "
			     "%u this client takes",
			     c->host, len, FRAME_MAX);
			break;
		}
		if (c->ilen - at - 4 < len)
			break;
		frame(c, p + 4, len);
		at += 4 + len;
		if (c->st != CS_DEAD && !c->freed)
			unblock(c); /* the credits it granted, used before the next frame */
	}
	if (c->st == CS_DEAD || c->freed) {
		held(c, false);
		return;
	}
	memmove(c->in, c->in + at, c->ilen - at);
	c->ilen -= at;
	held(c, c->yield && (c->ilen >= 4 || c->eof));
	if (c->eof && !c->yield)
		lose(c, PV_EUNREACH, "SMB to '%s': the connection was closed%s%s%s", c->host,
		     c->ilen ? " in the middle of an answer" : "", c->eof_err ? ": " : "",
		     c->eof_err ? strerror(c->eof_err) : "");
}

/* One read, then the frames it completed (take). One read a turn: epoll wakes the loop again
 * for what is left, so a server that sends without pause neither holds the loop (and its
 * deadlines) nor grows the buffer past a frame. */
static void readable(struct pv_smba *c)
{
	ssize_t got;

	if (smb2_ensure(&c->in, &c->icap, c->ilen + 65536, 4096) < 0) {
		lose(c, PV_EIO, "out of memory");
		return;
	}
	do
		got = recv(c->fd, c->in + c->ilen, c->icap - c->ilen, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (got <= 0) {
		c->eof = true;
		c->eof_err = got < 0 ? errno : 0;
		/* no more reads: the loop takes what is held, then says the close */
		if (c->fd >= 0) {
			epoll_ctl(c->l->ep, EPOLL_CTL_DEL, c->fd, NULL);
			c->epout = false;
		}
	} else {
		c->ilen += (size_t)got;
	}
	if (!c->is_held) /* a callback yielded this turn: the next one takes it all */
		take(c);
}

static void writable(struct pv_smba *c)
{
	if (c->st == CS_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			lose(c, PV_EUNREACH, "SMB to '%s': connect: %s", c->host, strerror(err));
			return;
		}
		negotiate(c);
		flush(c, true);
		return;
	}
	flush(c, true);
}

/* ---- the loop ---- */

int pv_smba_loop_new(struct pv_smba_loop **out)
{
	struct pv_smba_loop *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return pv_error(PV_EIO, "out of memory");
	if ((l->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		free(l);
		return pv_error(PV_EIO, "epoll_create1: %s", strerror(errno));
	}
	*out = l;
	return PV_OK;
}

static void release(struct pv_smba *c)
{
	session_end(c);
	logon_clear(&c->lg);
	logon_clear(&c->want);
	free(c->host);
	free(c->server);
	free(c->open_share);
	free(c->share);
	free(c->out);
	free(c->in);
	free(c);
}

static void reap(struct pv_smba_loop *l)
{
	while (l->dead) {
		struct pv_smba *c = l->dead;

		l->dead = c->next;
		release(c);
	}
}

void pv_smba_close_conn(struct pv_smba *c)
{
	struct pv_smba_loop *l;

	if (!c || c->freed)
		return;
	l = c->l;
	lose(c, PV_EUNREACH, "SMB to '%s': closed", c->host);
	c->freed = true;
	if (c->prev)
		c->prev->next = c->next;
	else
		l->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	l->n--;
	c->next = l->dead;
	l->dead = c;
}

void pv_smba_loop_free(struct pv_smba_loop *l)
{
	if (!l)
		return;
	while (l->conns)
		pv_smba_close_conn(l->conns);
	reap(l);
	close(l->ep);
	free(l);
}

size_t pv_smba_loop_count(const struct pv_smba_loop *l)
{
	return l->n;
}

/* The deadlines of c at t: the opening's, every request's answer, and requests that wait for
 * credits with none in flight to bring any: MS-SMB2 3.3.1.2 has the server never leave the
 * client without a credit, and one that does would keep them waiting for ever. */
static void deadlines(struct pv_smba *c, double t)
{
	char a[32];
	unsigned waiting = 0;
	struct req *late = NULL;

	if (c->opening && t > c->open_due) {
		lose(c, PV_EUNREACH, "SMB to '%s': not open within %s", c->host,
		     span(c->tmo, a, sizeof(a)));
		return;
	}
	/* the request that waited longest is named (pend is newest first) */
	for (struct req *q = c->pend; q; q = q->next) {
		double due =
			c->pipelined && c->last_final > q->sent ? c->last_final + c->tmo : q->due;

		if (t > due && (!late || q->due <= late->due))
			late = q;
	}
	if (late) {
		lose(c, PV_EUNREACH,
		     "SMB to '%s': no final answer to %s in %s (keep-alives and interim answers do "
		     "not extend a request)",
		     c->host, smb2_cmd_name(late->cmd), span(c->tmo, a, sizeof(a)));
		return;
	}
	if (c->pend || !c->backlog || c->credits >= c->backlog->group || c->st != CS_OPEN)
		return;
	for (struct req *q = c->backlog; q; q = q->next)
		waiting++;
	lose(c, PV_EREMOTE,
	     "SMB to '%s': the server granted no credits: %u request%s cannot be sent", c->host,
	     waiting, waiting == 1 ? "" : "s");
}

int pv_smba_loop_run(struct pv_smba_loop *l, int timeout_ms)
{
	struct epoll_event ev[64];
	int n;
	double t;

	/* what callbacks left in the input comes first, and then nothing is waited for */
	if (l->nheld) {
		for (struct pv_smba *c = l->conns, *next; c; c = next) {
			next = c->next;
			if (c->is_held && c->st != CS_DEAD)
				take(c);
		}
		timeout_ms = 0;
	}
	n = epoll_wait(l->ep, ev, 64, timeout_ms);

	if (n < 0 && errno != EINTR)
		return pv_error(PV_EIO, "epoll_wait: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		struct pv_smba *c = ev[i].data.ptr;
		bool rd = ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP),
		     wr = ev[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP);

		if (c->freed || c->st == CS_DEAD)
			continue;
		if (c->st == CS_CONNECTING) {
			if (wr)
				writable(c); /* the connect's outcome */
			continue;
		}
		/* reading first: the answers that came before a close are taken, and the close
		 * is what is said, not the failed send it causes */
		if (rd)
			readable(c);
		if (wr && !c->freed && c->st != CS_DEAD)
			writable(c);
	}
	/* every connection and request is looked at, so not at every turn: with thousands of
	 * connections the look cost more than the turn's work (a deadline is seconds) */
	t = now();
	for (struct pv_smba *c = t >= l->sweep_at ? l->conns : NULL, *next; c; c = next) {
		/* taken first: a callback of lose() may close c (load/engine.c logs a user on
		 * again so), which moves it to the dead list */
		next = c->next;
		if (c->st != CS_DEAD)
			deadlines(c, t);
	}
	if (t >= l->sweep_at)
		l->sweep_at = t + SWEEP_SECS;
	reap(l);
	return PV_OK;
}

/* ---- opening ---- */

/* A connection for o, not yet in the loop: the strings copied, the deadline of its opening
 * set. NULL when out of memory. */
static struct pv_smba *conn_new(struct pv_smba_loop *l, const struct pv_smba_opts *o,
				pv_smba_cb ready, void *arg)
{
	struct pv_smba *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->l = l;
	c->fd = -1;
	c->host = strdup(o->host);
	c->server = strdup(o->server ? o->server : o->host);
	c->tmo = (o->timeout_ms > 0 ? o->timeout_ms : 10000) / 1000.0;
	c->open_due = now() + c->tmo;
	c->opening = true;
	c->ready = ready;
	c->ready_arg = arg;
	c->pipelined = o->pipelined;
	c->credits = 1;
	if (o->encrypt > PV_SMBA_ENCRYPT_ON) { /* that cipher alone */
		c->offer_ciphers[0] = (uint16_t)(o->encrypt - 1);
		c->noffer_ciphers = 1;
	} else {
		memcpy(c->offer_ciphers, smb2_ciphers, sizeof(smb2_ciphers));
		c->noffer_ciphers = sizeof(smb2_ciphers) / sizeof(smb2_ciphers[0]);
	}
	if (o->user) {
		c->want.wg = strdup(o->workgroup ? o->workgroup : "");
		c->want.user = strdup(o->user);
		c->want.pw = o->auth || !o->password
				     ? pv_secret_new("", 0)
				     : pv_secret_new(o->password->data, o->password->len);
		c->want.auth = o->auth;
		c->want.auth_arg = o->auth_arg;
		c->want.encrypt = o->encrypt;
		if (o->share)
			c->open_share = strdup(o->share);
	}
	if (!c->host || !c->server || (o->user && (!c->want.wg || !c->want.user || !c->want.pw)) ||
	    (o->user && o->share && !c->open_share)) {
		release(c);
		return NULL;
	}
	return c;
}

/* Put c, with its socket fd (connecting or connected: the opening starts when it is
 * writable), into the loop. On failure c is released, fd closed. */
static int conn_add(struct pv_smba *c, int fd, struct pv_smba **out)
{
	struct pv_smba_loop *l = c->l;
	struct epoll_event ev;

	c->fd = fd;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.ptr = c;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		release(c);
		return pv_error(PV_EIO, "epoll_ctl: %s", strerror(e));
	}
	c->epout = true;
	c->next = l->conns;
	if (l->conns)
		l->conns->prev = c;
	l->conns = c;
	l->n++;
	*out = c;
	return PV_OK;
}

int pv_smba_open(struct pv_smba_loop *l, const struct pv_smba_opts *o, pv_smba_cb ready, void *arg,
		 struct pv_smba **out)
{
	struct addrinfo hints, *ai = NULL;
	struct pv_smba *c;
	int gr, fd, one = 1;

	*out = NULL;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((gr = getaddrinfo(o->host, "445", &hints, &ai)) != 0)
		return pv_error(PV_EUNREACH, "SMB: cannot resolve '%s': %s", o->host,
				gai_strerror(gr));
	if (!(c = conn_new(l, o, ready, arg))) {
		freeaddrinfo(ai);
		return pv_error(PV_EIO, "out of memory");
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		release(c);
		return pv_error(PV_EUNREACH, "SMB to '%s': connect: %s; is smbd running there?",
				o->host, strerror(e));
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return conn_add(c, fd, out);
}

int smba_open_fd(struct pv_smba_loop *l, int fd, const struct pv_smba_opts *o, pv_smba_cb ready,
		 void *arg, struct pv_smba **out)
{
	struct pv_smba *c;
	int fl;

	*out = NULL;
	if (!(c = conn_new(l, o, ready, arg))) {
		close(fd);
		return pv_error(PV_EIO, "out of memory");
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		release(c);
		return pv_error(PV_EIO, "fcntl: %s", strerror(e));
	}
	return conn_add(c, fd, out);
}

bool pv_smba_usable(const struct pv_smba *c)
{
	return c && c->st == CS_OPEN && !c->opening && c->keyed && c->tid && !c->lg.active;
}

bool pv_smba_lost(const struct pv_smba *c)
{
	return !c || c->st == CS_DEAD;
}

const char *pv_smba_error(const struct pv_smba *c)
{
	return c ? c->err : "";
}

const char *pv_smba_describe(const struct pv_smba *c)
{
	return c ? c->desc : "";
}

int pv_smba_local_port(const struct pv_smba *c)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	if (!c || c->fd < 0 || getsockname(c->fd, (struct sockaddr *)&a, &len) != 0)
		return 0;
	if (a.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&a)->sin_port);
	if (a.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
	return 0;
}

uint16_t pv_smba_dialect(const struct pv_smba *c)
{
	return c && c->negotiated ? c->sec.dialect : 0;
}

bool pv_smba_encrypting(const struct pv_smba *c)
{
	return c && c->keyed && (c->sess_encrypt || c->tree_encrypt);
}

bool pv_smba_signing(const struct pv_smba *c)
{
	return c && c->keyed && c->sess_sign;
}

/* ---- requests ---- */

/* A request of the caller's: the connection must be open with a session and a tree. */
static int ready_for(struct pv_smba *c, uint16_t cmd, pv_smba_cb cb, void *arg, struct req **q)
{
	*q = NULL;
	if (c->st == CS_DEAD)
		return pv_error(c->code ? c->code : PV_EUNREACH, "%s",
				c->err[0] ? c->err : "SMB: the connection is not open");
	if (c->st != CS_OPEN || c->opening || !c->keyed || !c->tid || c->lg.active)
		return pv_error(PV_EUNREACH, "SMB: the connection is not open");
	if (!(*q = req_new(cb, arg, cmd, K_USER)))
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

/* The end of a request function inside a compound: a refused request breaks it. */
static int chained(struct pv_smba *c, int r)
{
	if (r != PV_OK && c->chaining && c->chain_err == PV_OK)
		c->chain_err = r;
	return r;
}

/* A CREATE of cr, named by its path in what goes wrong. */
static int send_create(struct pv_smba *c, const struct smb2_create_req *cr, pv_smba_cb cb,
		       void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_CREATE, cb, arg, &q);

	if (r == PV_OK) {
		char what[600];

		snprintf(what, sizeof(what), "the path '%.500s'", cr->path);
		r = send_req(c, q, smb2_create_enc(&q->body, cr), what);
	}
	return chained(c, r);
}

int pv_smba_create(struct pv_smba *c, const char *path, uint32_t access, uint32_t disposition,
		   uint32_t options, pv_smba_cb cb, void *arg)
{
	struct smb2_create_req cr = {
		path, access, 0, 7 /* share read, write, delete */, disposition, options,
		0,    NULL,   0};

	return send_create(c, &cr, cb, arg);
}

int pv_smba_closefile(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_CLOSE, cb, arg, &q);

	if (r == PV_OK)
		r = send_req(c, q, smb2_close_enc(&q->body, fid, 0), "CLOSE");
	return chained(c, r);
}

int pv_smba_read(struct pv_smba *c, const uint8_t fid[16], uint64_t off, uint32_t len,
		 pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r;

	if (len > IO_MAX)
		return chained(
			c, pv_error(PV_EBUG, "SMB: a READ of %u bytes (at most %u)", len, IO_MAX));
	if ((r = ready_for(c, SMB2_READ, cb, arg, &q)) == PV_OK)
		r = send_req(c, q, smb2_read_enc(&q->body, fid, off, len), "READ");
	return chained(c, r);
}

int pv_smba_write(struct pv_smba *c, const uint8_t fid[16], uint64_t off, const void *data,
		  uint32_t len, pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r;

	if (len > IO_MAX)
		return chained(
			c, pv_error(PV_EBUG, "SMB: a WRITE of %u bytes (at most %u)", len, IO_MAX));
	if ((r = ready_for(c, SMB2_WRITE, cb, arg, &q)) == PV_OK)
		r = send_req(c, q, smb2_write_enc(&q->body, fid, off, data, len), "WRITE");
	return chained(c, r);
}

int pv_smba_list(struct pv_smba *c, const uint8_t fid[16], bool restart, pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_QUERY_DIRECTORY, cb, arg, &q);

	/* FileDirectoryInformation, SMB2_RESTART_SCANS for the first */
	if (r == PV_OK)
		r = send_req(c, q,
			     smb2_query_dir_enc(&q->body, fid, 1, restart ? 1 : 0, "*", LIST_BYTES),
			     "QUERY_DIRECTORY");
	return chained(c, r);
}

int pv_smba_stat(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_QUERY_INFO, cb, arg, &q);

	/* SMB2_0_INFO_FILE, FileNetworkOpenInformation */
	if (r == PV_OK)
		r = send_req(c, q, smb2_query_info_enc(&q->body, 1, 0x22, fid, 4096, 0),
			     "QUERY_INFO");
	return chained(c, r);
}

int pv_smba_rename(struct pv_smba *c, const uint8_t fid[16], const char *path, bool replace,
		   pv_smba_cb cb, void *arg)
{
	struct pv_buf info = PV_BUF_INIT;
	struct req *q;
	int r = ready_for(c, SMB2_SET_INFO, cb, arg, &q);

	if (r == PV_OK) {
		int e = smb2_rename_info(&info, path, replace);
		char what[600];

		snprintf(what, sizeof(what), "the path '%.500s'", path);
		if (e == 0 && info.len > UINT32_MAX)
			e = -1;
		/* SMB2_0_INFO_FILE, FileRenameInformation */
		r = send_req(c, q,
			     e < 0 ? -1
				   : smb2_set_info_enc(&q->body, 1, 10, fid, info.data,
						       (uint32_t)info.len),
			     what);
	}
	pv_buf_release(&info, 0);
	return chained(c, r);
}

int pv_smba_setinfo(struct pv_smba *c, const uint8_t fid[16], uint8_t info_class, const void *data,
		    uint32_t len, pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_SET_INFO, cb, arg, &q);

	if (r == PV_OK) /* SMB2_0_INFO_FILE */
		r = send_req(c, q, smb2_set_info_enc(&q->body, 1, info_class, fid, data, len),
			     "SET_INFO");
	return chained(c, r);
}

int pv_smba_create_lease(struct pv_smba *c, const char *path, uint32_t access, uint32_t disposition,
			 uint32_t options, const uint8_t key[16], uint32_t state, pv_smba_cb cb,
			 void *arg)
{
	uint8_t lease[52];
	struct smb2_cctx ctx = {"RqLs", lease, 0};
	struct smb2_create_req cr = {
		path, access, 0, 7 /* share read, write, delete */, disposition, options,
		0,    &ctx,   1};
	uint16_t dialect = pv_smba_dialect(c);

	/* leases from 2.1 on, the v2 context from 3.0 (MS-SMB2 3.2.4.3.8) */
	if (dialect < SMB2_210)
		return pv_smba_create(c, path, access, disposition, options, cb, arg);
	ctx.len = (size_t)smb2_lease_ctx(lease, sizeof(lease), key, state, dialect >= SMB2_300);
	cr.oplock = SMB2_OPLOCK_LEASE;
	return send_create(c, &cr, cb, arg);
}

int pv_smba_flush(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_FLUSH, cb, arg, &q);

	if (r == PV_OK)
		r = send_req(c, q, smb2_flush_enc(&q->body, fid), "FLUSH");
	return chained(c, r);
}

int pv_smba_lock(struct pv_smba *c, const uint8_t fid[16], uint64_t off, uint64_t len, bool excl,
		 bool unlock, pv_smba_cb cb, void *arg)
{
	/* SMB2_LOCKFLAG_SHARED_LOCK 1, EXCLUSIVE_LOCK 2, UNLOCK 4, FAIL_IMMEDIATELY 0x10 */
	struct smb2_lock lk = {off, len, unlock ? 4u : (excl ? 2u : 1u) | 0x10u};
	struct req *q;
	int r = ready_for(c, SMB2_LOCK, cb, arg, &q);

	if (r == PV_OK)
		r = send_req(c, q, smb2_lock_enc(&q->body, fid, &lk, 1), "LOCK");
	return chained(c, r);
}

int pv_smba_fsctl(struct pv_smba *c, uint32_t ctl, const uint8_t fid[16], const void *in,
		  uint32_t inlen, uint32_t max_out, pv_smba_cb cb, void *arg)
{
	struct req *q;
	int r;

	if (inlen > IO_MAX || max_out > IO_MAX)
		return chained(c, pv_error(PV_EBUG, "SMB: an IOCTL over %u bytes", IO_MAX));
	if ((r = ready_for(c, SMB2_IOCTL, cb, arg, &q)) == PV_OK)
		r = send_req(c, q, smb2_ioctl_enc(&q->body, ctl, fid, in, inlen, max_out, true),
			     "IOCTL");
	return chained(c, r);
}

int pv_smba_notify(struct pv_smba *c, const uint8_t fid[16], uint32_t filter, pv_smba_cb cb,
		   void *arg)
{
	struct req *q;
	int r = ready_for(c, SMB2_CHANGE_NOTIFY, cb, arg, &q);

	if (r == PV_OK)
		r = send_req(c, q, smb2_notify_enc(&q->body, fid, 0, filter, 4096),
			     "CHANGE_NOTIFY");
	return chained(c, r);
}

int pv_smba_entries(const uint8_t *buf, size_t len,
		    int (*fn)(void *arg, const char *name, bool dir, uint64_t size), void *arg)
{
	struct smb2_rd r;
	struct smb2_dir_it it;
	struct smb2_dirent e;
	int k;

	smb2_rd_init(&r, buf, len);
	smb2_dir_init(&it, &r);
	while ((k = smb2_dir_next(&it, &e)) == 1) {
		int x;

		if (strcmp(e.name, ".") != 0 && strcmp(e.name, "..") != 0 &&
		    (x = fn(arg, e.name, e.dir, e.size)) != 0)
			return x;
	}
	return k < 0 ? pv_error(PV_EREMOTE, "a malformed listing: %s", it.r.why) : PV_OK;
}
