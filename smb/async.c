/* smb/async.c: the event-driven SMB2 client (see async.h). One frame per request (no
 * compounds), requests of at most 64 KiB (a credit charge of 1), NTLMv2 logon; signing as
 * smb/wire.c does it (smb2.h): every request signed when the server requires it, every signed
 * answer checked, and every answer from the final SESSION_SETUP on required to be signed then. */
#include "smb/async.h"

#include "smb/internal.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/utf16.h"

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

#define FRAME_MAX   (1u << 20) /* the largest answer taken (a READ of 64 KiB and its header) */
#define IO_MAX	    65536u
#define LIST_BYTES  65536u /* a QUERY_DIRECTORY answer's buffer, at most */
#define CREDITS_ASK 32
#define SWEEP_SECS  0.05 /* deadlines are looked at every 50 ms at most */

enum cstate { CS_CONNECTING, CS_NEGOTIATE, CS_SESSION, CS_TREE, CS_READY, CS_DEAD };

struct req {
	uint64_t mid;
	uint16_t cmd;
	pv_smba_cb cb;
	void *arg;
	double sent, due;
	uint8_t *held; /* the body, while the request waits for credits */
	size_t held_len;
	struct req *next;
};

struct pv_smba {
	struct pv_smba_loop *l;
	struct pv_smba *prev, *next; /* in the loop's list */
	int fd;
	enum cstate st;
	char *host, *server, *share, *wg, *user;
	struct pv_secret *pw; /* until the logon is done */
	double tmo;	      /* seconds */
	double open_due;
	pv_smba_cb ready;
	void *ready_arg;
	uint64_t mid, sid;
	uint32_t tid;
	int64_t credits;
	bool epout; /* EPOLLOUT asked for */
	uint8_t *out, *in;
	size_t olen, ocap, osent, ilen, icap;
	struct req *pend, *backlog, *backlog_tail; /* sent; waiting for credits */
	int session_step;
	int (*auth)(void *, const uint8_t *, size_t, struct pv_buf *, bool *, uint8_t[16]);
	void *auth_arg;
	bool auth_done;
	uint16_t dialect;
	bool sign;	     /* the server requires signing */
	bool have_key;	     /* the logon gave the signing key */
	uint8_t skey[16];    /* the session key, until the logon is done */
	uint8_t signkey[16]; /* Session.SigningKey */
	bool fixed_cchal;    /* the tests' NTLM client challenge (smba_test_cchal) */
	uint8_t cchal[8];
	char err[384];
	int code;
	bool freed; /* closed: freed at the end of the loop's turn */
};

struct pv_smba_loop {
	int ep;
	struct pv_smba *conns;
	size_t n;
	struct pv_smba *dead; /* closed during a turn: freed at its end */
	double sweep_at;      /* the next look at every connection's deadlines */
};

static double now(void)
{
	return pv_now();
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

/* ---- failure ---- */

static void complete(struct pv_smba *c, struct req *q, const struct pv_smba_done *d)
{
	if (q->cb)
		q->cb(c, q->arg, d);
	free(q->held);
	free(q);
}

static void epoll_update(struct pv_smba *c);

/* The connection is lost: every request completes with the failure, ready too if pending. */
static void lose(struct pv_smba *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void lose(struct pv_smba *c, int code, const char *fmt, ...)
{
	struct pv_smba_done d;
	va_list ap;

	if (c->st == CS_DEAD)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->code = code;
	c->st = CS_DEAD;
	if (c->fd >= 0) {
		epoll_ctl(c->l->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
	if (c->pw) {
		pv_secret_free(c->pw);
		c->pw = NULL;
	}
	memset(&d, 0, sizeof(d));
	d.code = code;
	d.msg = c->err;
	for (struct req *lists[2] = {c->pend, c->backlog}, **lp = lists; lp < lists + 2; lp++)
		while (*lp) {
			struct req *q = *lp;

			*lp = q->next;
			complete(c, q, &d);
		}
	c->pend = c->backlog = c->backlog_tail = NULL;
	if (c->ready) {
		pv_smba_cb ready = c->ready;

		c->ready = NULL;
		ready(c, c->ready_arg, &d);
	}
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
	while (c->osent < c->olen && c->st != CS_CONNECTING) {
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

/* Frame the request q (header and body of blen bytes, already at out + olen + 4) and queue it
 * to be sent. */
static void emit(struct pv_smba *c, struct req *q, uint16_t cmd, size_t blen)
{
	uint8_t *f = c->out + c->olen;
	struct smb2_hdr h;
	size_t len = SMB2_HDR + blen;

	memset(&h, 0, sizeof(h));
	h.command = cmd;
	h.credit_charge = 1;
	h.credits = CREDITS_ASK;
	h.mid = q->mid = c->mid++;
	h.session = c->sid;
	h.tree = cmd == SMB2_NEGOTIATE || cmd == SMB2_SESSION_SETUP ? 0 : c->tid;
	f[0] = 0;
	f[1] = (uint8_t)(len >> 16);
	f[2] = (uint8_t)(len >> 8);
	f[3] = (uint8_t)len;
	smb2_hdr_put(f + 4, &h);
	if (c->sign && c->have_key && cmd != SMB2_SESSION_SETUP)
		smb2_sign(f + 4, len, c->dialect, c->signkey);
	c->olen += 4 + len;
	q->cmd = cmd;
	q->sent = now();
	q->due = q->sent + c->tmo;
	q->next = c->pend;
	c->pend = q;
	c->credits--;
}

/* Room for a request with a body of blen bytes at the end of out; the body's address. */
static uint8_t *room(struct pv_smba *c, size_t blen)
{
	if (smb2_ensure(&c->out, &c->ocap, c->olen + 4 + SMB2_HDR + blen, 4096) < 0)
		return NULL;
	memset(c->out + c->olen, 0, 4 + SMB2_HDR + blen);
	return c->out + c->olen + 4 + SMB2_HDR;
}

static int send_req(struct pv_smba *c, uint16_t cmd, const uint8_t *body, size_t blen,
		    pv_smba_cb cb, void *arg)
{
	struct req *q;
	uint8_t *b;

	if (c->st == CS_DEAD)
		return pv_error(c->code ? c->code : PV_EUNREACH, "%s", c->err);
	if (!(q = calloc(1, sizeof(*q))))
		return pv_error(PV_EIO, "out of memory");
	q->cb = cb;
	q->arg = arg;
	if (c->credits < 1 || c->backlog) {
		/* held until an answer grants credits, with its body; behind what waits already:
		 * requests go in the order they were made, even when a credit comes in the middle
		 * of a batch of answers whose callbacks make more */
		if (!(q->held = malloc(blen ? blen : 1))) {
			free(q);
			return pv_error(PV_EIO, "out of memory");
		}
		memcpy(q->held, body, blen);
		q->held_len = blen;
		q->cmd = cmd;
		if (c->backlog_tail)
			c->backlog_tail->next = q;
		else
			c->backlog = q;
		c->backlog_tail = q;
		return PV_OK;
	}
	if (!(b = room(c, blen))) {
		free(q);
		return pv_error(PV_EIO, "out of memory");
	}
	memcpy(b, body, blen);
	emit(c, q, cmd, blen);
	flush(c, false);
	return PV_OK;
}

/* Send what waited for credits, in order, while credits allow. */
static void unblock(struct pv_smba *c)
{
	while (c->backlog && c->credits >= 1 && c->st != CS_DEAD) {
		struct req *q = c->backlog;
		uint8_t *b;

		c->backlog = q->next;
		if (!c->backlog)
			c->backlog_tail = NULL;
		if (!(b = room(c, q->held_len))) {
			struct pv_smba_done d = {PV_EIO, "out of memory"};

			complete(c, q, &d);
			continue;
		}
		memcpy(b, q->held, q->held_len);
		free(q->held);
		q->held = NULL;
		emit(c, q, q->cmd, q->held_len);
	}
	flush(c, false); /* after a read: a close that caused a failure here is read next */
}

/* ---- the opening ---- */

static void opened(struct pv_smba *c)
{
	struct pv_smba_done d;
	pv_smba_cb ready = c->ready;

	memset(&d, 0, sizeof(d));
	c->st = CS_READY;
	c->ready = NULL;
	if (c->pw) {
		pv_secret_free(c->pw);
		c->pw = NULL;
	}
	d.seconds = now() - (c->open_due - c->tmo);
	if (ready)
		ready(c, c->ready_arg, &d);
}

static void on_tree(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	(void)arg;
	if (d->code != PV_OK)
		return; /* lost: ready was told */
	if (d->status != ST_OK) {
		const char *n = smb2_status_name(d->status);

		lose(c, d->status == ST_ACCESS_DENIED ? PV_ECRED : PV_EREMOTE,
		     "SMB tree connect to //%s/%s as %s: %s", c->server, c->share, c->user,
		     n ? n : "refused");
		return;
	}
	if (d->blen < 16) {
		lose(c, PV_EREMOTE, "SMB to '%s': a malformed TREE_CONNECT answer", c->host);
		return;
	}
	if (smb2_get32(d->body + 4) & 0x8000) {
		lose(c, PV_EREMOTE, "SMB to '%s': the share %s requires encryption", c->host,
		     c->share);
		return;
	}
	opened(c);
}

static void tree_connect(struct pv_smba *c)
{
	struct pv_buf unc = PV_BUF_INIT, path = PV_BUF_INIT, body = PV_BUF_INIT;
	uint8_t fixed[8] = {0};

	c->st = CS_TREE;
	pv_buf_addf(&unc, "\\\\%s\\%s", c->server, c->share);
	if (pv_buf_failed(&unc) || smb2_name(unc.data, &path) < 0 || path.len > 0xFFFF) {
		lose(c, PV_ECONFIG, "SMB: the share name '%s' cannot be sent", c->share);
		goto out;
	}
	smb2_put16(fixed, 9);
	smb2_put16(fixed + 4, SMB2_HDR + 8);
	smb2_put16(fixed + 6, (uint16_t)path.len);
	pv_buf_add(&body, fixed, sizeof(fixed));
	pv_buf_add(&body, path.data, path.len);
	if (pv_buf_failed(&body) ||
	    send_req(c, SMB2_TREE_CONNECT, (uint8_t *)body.data, body.len, on_tree, NULL) != PV_OK)
		lose(c, PV_EIO, "out of memory");
out:
	pv_buf_release(&unc, 0);
	pv_buf_release(&path, 0);
	pv_buf_release(&body, 0);
}

static void session_send(struct pv_smba *c, const struct pv_buf *tok);

static void on_session(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct pv_buf tok = PV_BUF_INIT;
	const char *n = smb2_status_name(d->status);

	(void)arg;
	if (d->code != PV_OK)
		return;
	if (c->auth && d->status == ST_MORE_PROCESSING) {
		bool done = false;

		if (c->auth(c->auth_arg, d->buf, d->buflen, &tok, &done, c->skey) != PV_OK) {
			lose(c, PV_ECRED, "SMB logon as %s on '%s': %s", c->user, c->host,
			     pv_errmsg());
			pv_buf_release(&tok, 1);
			return;
		}
		session_send(c, &tok);
		pv_buf_release(&tok, 1);
		return;
	}
	if (!c->auth && c->session_step == 1) {
		struct pv_ntlm_challenge ch;
		uint8_t cchal[8];
		uint64_t t = ((uint64_t)time(NULL) + 11644473600ull) * 10000000ull;
		int nr;

		if (d->status != ST_MORE_PROCESSING || d->buflen == 0 ||
		    pv_ntlm_parse_challenge(d->buf, d->buflen, &ch) < 0) {
			lose(c, PV_EREMOTE, "SMB logon as %s\\%s on '%s': the server did not offer "
					    "NTLM (%s)",
			     c->wg, c->user, c->host, n ? n : "a malformed answer");
			return;
		}
		pv_buf_secret(&tok);
		if (c->fixed_cchal)
			memcpy(cchal, c->cchal, 8);
		nr = !c->fixed_cchal && getrandom(cchal, 8, 0) != 8
			     ? -1
			     : pv_ntlm_authenticate(&ch, c->user, c->wg, c->pw->data, c->pw->len, t,
						    cchal, &tok, c->skey);
		if (nr < 0 || tok.len > 0xFFFF) {
			lose(c, nr == -1 ? PV_ECONFIG : PV_EREMOTE,
			     "SMB logon as %s\\%s on '%s': %s", c->wg, c->user, c->host,
			     nr == -1 ? "the name or the password is not valid UTF-8"
				      : "the server's NTLM target info is too long to answer");
			pv_buf_release(&tok, 1);
			return;
		}
		c->session_step = 2;
		session_send(c, &tok);
		pv_buf_release(&tok, 1);
		return;
	}
	if (d->status != ST_OK) {
		lose(c, d->status == ST_ACCESS_DENIED ? PV_EREMOTE : PV_ECRED,
		     "SMB logon as %s\\%s on '%s' refused (%s)", c->wg, c->user, c->host,
		     n ? n : "an unknown status");
		return;
	}
	if (d->blen < 8 || (smb2_get16(d->body + 2) & 0x3)) {
		lose(c, PV_ECRED, "SMB logon as %s\\%s on '%s': taken as a guest or anonymous "
				  "logon; check the user and its password",
		     c->wg, c->user, c->host);
		return;
	}
	if (smb2_get16(d->body + 2) & 0x4) {
		lose(c, PV_EREMOTE, "SMB to '%s': the server requires encryption", c->host);
		return;
	}
	pv_secret_free(c->pw);
	c->pw = NULL;
	tree_connect(c);
}

static void session_send(struct pv_smba *c, const struct pv_buf *tok)
{
	struct pv_buf body = PV_BUF_INIT;
	uint8_t fixed[24] = {0};

	smb2_put16(fixed, 25);
	fixed[3] = 1; /* signing enabled */
	smb2_put16(fixed + 12, SMB2_HDR + 24);
	smb2_put16(fixed + 14, (uint16_t)tok->len);
	pv_buf_secret(&body);
	pv_buf_add(&body, fixed, sizeof(fixed));
	pv_buf_add(&body, tok->data, tok->len);
	if (pv_buf_failed(&body) ||
	    send_req(c, SMB2_SESSION_SETUP, (uint8_t *)body.data, body.len, on_session, NULL) !=
		    PV_OK)
		lose(c, PV_EIO, "out of memory");
	pv_buf_release(&body, 1);
}

static void on_negotiate(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct pv_buf tok = PV_BUF_INIT;
	uint16_t dialect;

	(void)arg;
	if (d->code != PV_OK)
		return;
	if (d->status != ST_OK || d->blen < 64) {
		lose(c, PV_EREMOTE, "SMB to '%s': no SMB 2.0.2-3.0.2 dialect in common", c->host);
		return;
	}
	dialect = smb2_get16(d->body + 4);
	if (!smb2_dialect_offered(dialect)) {
		lose(c, PV_EREMOTE, "SMB to '%s': the server chose dialect 0x%04x, not one offered",
		     c->host, dialect);
		return;
	}
	c->dialect = dialect;
	c->sign = (smb2_get16(d->body + 2) & 0x2) != 0;
	c->st = CS_SESSION;
	c->session_step = 1;
	if (c->auth) {
		bool done = false;

		if (c->auth(c->auth_arg, NULL, 0, &tok, &done, c->skey) != PV_OK) {
			lose(c, PV_ECRED, "SMB logon as %s on '%s': %s", c->user, c->host,
			     pv_errmsg());
			pv_buf_release(&tok, 1);
			return;
		}
	} else if (pv_ntlm_negotiate(&tok) < 0) {
		lose(c, PV_EIO, "out of memory");
		return;
	}
	session_send(c, &tok);
	pv_buf_release(&tok, 1);
}

static void negotiate(struct pv_smba *c)
{
	uint8_t b[SMB2_NEGOTIATE_BODY];

	c->st = CS_NEGOTIATE;
	if (smb2_negotiate_body(b) < 0) {
		lose(c, PV_EIO, "getrandom: %s", strerror(errno));
		return;
	}
	if (send_req(c, SMB2_NEGOTIATE, b, sizeof(b), on_negotiate, NULL) != PV_OK)
		lose(c, PV_EIO, "out of memory");
}

/* ---- receiving ---- */

/* Where an answer's variable part is: an offset (from the header) and a length in its body;
 * what names it in the message ("READ's data"). An empty one may say any offset. */
static int span_of(struct pv_smba *c, struct pv_smba_done *d, const uint8_t *msg, size_t mlen,
		   size_t off, size_t len, const char *what)
{
	if (len == 0) {
		d->buf = msg + mlen; /* a pointer callers may do arithmetic on, never NULL */
		return 0;
	}
	if (off < SMB2_HDR || off > mlen || len > mlen - off) {
		lose(c, PV_EREMOTE,
		     "SMB to '%s': a malformed answer: %s (%zu bytes at %zu) is not inside its %zu "
		     "bytes",
		     c->host, what, len, off, mlen);
		return -1;
	}
	d->buf = msg + off;
	d->buflen = len;
	return 0;
}

/* One answer (not interim): its request found by message id, checked, completed. The
 * request stays in flight until its answer is found sound: a malformed one loses the
 * connection, and with it completes the request with the failure. */
static void answer(struct pv_smba *c, const struct smb2_hdr *h, const uint8_t *msg, size_t mlen)
{
	struct req **pp = &c->pend, *q;
	struct pv_smba_done d;
	static const size_t min_body[] = {
		[SMB2_NEGOTIATE] = 64, [SMB2_SESSION_SETUP] = 8, [SMB2_TREE_CONNECT] = 16,
		[SMB2_CREATE] = 88,    [SMB2_CLOSE] = 60,	 [SMB2_READ] = 16,
		[SMB2_WRITE] = 16,     [SMB2_QUERY_DIRECTORY] = 8, [SMB2_QUERY_INFO] = 8,
		[SMB2_SET_INFO] = 2};

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
	memset(&d, 0, sizeof(d));
	d.status = h->status;
	d.body = msg + SMB2_HDR;
	d.blen = mlen - SMB2_HDR;
	/* a failure's body is an error response; a success's is the command's */
	if (h->status == ST_OK || (h->command == SMB2_SESSION_SETUP &&
				   h->status == ST_MORE_PROCESSING)) {
		size_t need = h->command < sizeof(min_body) / sizeof(min_body[0])
				      ? min_body[h->command]
				      : 0;

		if (d.blen < need) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: %s with a body of %zu bytes, %zu "
			     "expected",
			     c->host, smb2_cmd_name(h->command), d.blen, need);
			return;
		}
		switch (h->command) {
		case SMB2_SESSION_SETUP:
			if (span_of(c, &d, msg, mlen, smb2_get16(d.body + 4),
				    smb2_get16(d.body + 6), "SESSION_SETUP's security buffer") < 0)
				return;
			break;
		case SMB2_CREATE:
			memcpy(d.fid, d.body + 64, 16);
			d.size = smb2_get64(d.body + 48);
			break;
		case SMB2_READ:
			if (span_of(c, &d, msg, mlen, d.body[2], smb2_get32(d.body + 4),
				    "READ's data") < 0)
				return;
			break;
		case SMB2_QUERY_DIRECTORY:
		case SMB2_QUERY_INFO:
			if (span_of(c, &d, msg, mlen, smb2_get16(d.body + 2),
				    smb2_get32(d.body + 4),
				    h->command == SMB2_QUERY_INFO ? "QUERY_INFO's buffer"
								  : "QUERY_DIRECTORY's buffer") < 0)
				return;
			break;
		default:
			break;
		}
	}
	*pp = q->next;
	d.seconds = now() - q->sent;
	if (h->command == SMB2_TREE_CONNECT && h->status == ST_OK)
		c->tid = h->tree;
	complete(c, q, &d);
}

/* The signing key once the final SESSION_SETUP answer is here (its signature is checked with
 * it); then every signed answer is checked, and when the server requires signing every answer
 * must be signed (a failed logon's excepted, and a guest or anonymous one's, which logon
 * refuses itself: there is no key for them). As smb/wire.c does it, with its words. */
static int check_signature(struct pv_smba *c, const struct smb2_hdr *h, uint8_t *msg,
			   size_t mlen)
{
	bool final_logon = h->command == SMB2_SESSION_SETUP && h->status == ST_OK;
	const char *why, *st;
	char other[96];

	/* Kerberos: the server's last token (its AP-REP) completes the exchange and may change
	 * the session key; taken here, before the answer's signature is checked with it */
	if (final_logon && c->auth && !c->auth_done && mlen >= SMB2_HDR + 8) {
		size_t off = smb2_get16(msg + SMB2_HDR + 4), len = smb2_get16(msg + SMB2_HDR + 6);
		struct pv_buf none = PV_BUF_INIT;
		bool done = false;
		int r = PV_OK;

		if (len && (off < SMB2_HDR || off > mlen || len > mlen - off)) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: SESSION_SETUP's security buffer "
			     "(%zu bytes at %zu) is not inside its %zu bytes",
			     c->host, len, off, mlen);
			return -1;
		}
		if (len)
			r = c->auth(c->auth_arg, msg + off, len, &none, &done, c->skey);
		pv_buf_release(&none, 1);
		if (r != PV_OK) {
			lose(c, PV_EREMOTE, "SMB logon as %s on '%s': %s", c->user, c->host,
			     pv_errmsg());
			return -1;
		}
		c->auth_done = true;
	}

	/* the session's id comes with its first SESSION_SETUP answer, which is also the final
	 * (and signed) one when the logon takes one round trip, as Kerberos's does */
	if (h->command == SMB2_SESSION_SETUP && !c->sid)
		c->sid = h->session;
	if (final_logon && !c->have_key) {
		smb2_signing_key(c->dialect, c->skey, c->signkey);
		explicit_bzero(c->skey, sizeof(c->skey));
		c->have_key = true;
	}
	if (h->flags & SMB2_FLAGS_SIGNED) {
		why = other;
		if (!c->have_key)
			why = "came signed before there was a session key";
		else if (h->session != c->sid)
			snprintf(other, sizeof(other),
				 "came signed for session 0x%llx, not ours (0x%llx)",
				 (unsigned long long)h->session, (unsigned long long)c->sid);
		else if (smb2_verify(msg, mlen, c->dialect, c->signkey) == 0)
			return 0;
		else
			snprintf(other, sizeof(other), "does not match its %s signature",
				 smb2_sign_alg(c->dialect));
	} else if (c->sign && c->have_key && (h->status == ST_OK || c->st == CS_READY) &&
		   !(final_logon && mlen >= SMB2_HDR + 4 &&
		     (smb2_get16(msg + SMB2_HDR + 2) & 0x3))) {
		why = "came unsigned, and the server requires signing";
	} else {
		return 0;
	}
	st = smb2_status_name(h->status);
	lose(c, PV_EREMOTE,
	     "SMB answer from '%s' has a bad signature: %s (message %llu, %s) %s; the connection "
	     "is dropped (it was changed on the way, or signed with another key)",
	     c->host, smb2_cmd_name(h->command), (unsigned long long)h->mid,
	     st ? st : "an unknown status", why);
	return -1;
}

static void frame(struct pv_smba *c, const uint8_t *f, size_t len)
{
	for (size_t off = 0; c->st != CS_DEAD;) {
		struct smb2_hdr h;
		size_t left = len - off, mlen;

		if (smb2_hdr_get(f + off, left, &h) < 0) {
			lose(c, PV_EREMOTE, "SMB to '%s': a malformed answer: no SMB2 header at "
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
		/* interim answers (the request went async) and break notifications: no answer */
		if (!(h.status == ST_PENDING && (h.flags & SMB2_FLAGS_ASYNC)) &&
		    h.mid != UINT64_MAX) {
			if (check_signature(c, &h, (uint8_t *)f + off, mlen) < 0)
				return;
			answer(c, &h, f + off, mlen);
		}
		if (!h.next)
			break;
		off += h.next;
	}
}

/* One read, then the whole frames it completed (MS-SMB2 2.1 Direct TCP: a zero byte and a
 * 24-bit length; session keep-alives, type 0x85, skipped), then the close if the server
 * closed: the answers that came before it are taken. One read a turn: epoll wakes the loop
 * again for what is left, so a server that sends without pause neither holds the loop (and
 * its deadlines) nor grows the buffer past a frame. */
static void readable(struct pv_smba *c)
{
	ssize_t got;
	size_t at = 0;
	int err = 0;

	if (smb2_ensure(&c->in, &c->icap, c->ilen + 65536, 4096) < 0) {
		lose(c, PV_EIO, "out of memory");
		return;
	}
	do
		got = recv(c->fd, c->in + c->ilen, c->icap - c->ilen, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (got < 0)
		err = errno;
	else
		c->ilen += (size_t)got;
	while (c->st != CS_DEAD && c->ilen - at >= 4) {
		const uint8_t *p = c->in + at;
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
			return;
		}
		if (len < SMB2_HDR) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: a frame of %zu bytes, shorter than "
			     "an SMB2 header (%d bytes)",
			     c->host, len, SMB2_HDR);
			return;
		}
		if (len > FRAME_MAX) {
			lose(c, PV_EREMOTE,
			     "SMB to '%s': a malformed answer: a frame of %zu bytes, more than the "
			     "%u this client takes",
			     c->host, len, FRAME_MAX);
			return;
		}
		if (c->ilen - at - 4 < len)
			break;
		frame(c, p + 4, len);
		at += 4 + len;
		if (c->st != CS_DEAD && !c->freed)
			unblock(c); /* the credits it granted, used before the next frame */
	}
	if (c->st == CS_DEAD || c->freed)
		return;
	memmove(c->in, c->in + at, c->ilen - at);
	c->ilen -= at;
	if (got <= 0) {
		lose(c, PV_EUNREACH, "SMB to '%s': the connection was closed%s%s%s", c->host,
		     c->ilen ? " in the middle of an answer" : "", err ? ": " : "",
		     err ? strerror(err) : "");
		return;
	}
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
	explicit_bzero(c->skey, sizeof(c->skey));
	explicit_bzero(c->signkey, sizeof(c->signkey));
	free(c->host);
	free(c->server);
	free(c->share);
	free(c->wg);
	free(c->user);
	pv_secret_free(c->pw);
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

int pv_smba_loop_run(struct pv_smba_loop *l, int timeout_ms)
{
	struct epoll_event ev[64];
	int n = epoll_wait(l->ep, ev, 64, timeout_ms);
	double t;

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
	/* deadlines: the opening, and every request's answer; and requests that wait for
	 * credits with none in flight to bring any: MS-SMB2 3.3.1.2 has the server never leave
	 * the client without a credit, and one that does would keep them waiting for ever */
	t = now();
	/* every connection and request is looked at, so not at every turn: with thousands of
	 * connections the look cost more than the turn's work (a deadline is seconds) */
	for (struct pv_smba *c = t >= l->sweep_at ? l->conns : NULL, *next; c; c = next) {
		char a[32];
		unsigned waiting = 0;
		struct req *late = NULL;

		/* taken first: a callback of lose() may close c (load/engine.c logs a user on
		 * again so), which moves it to the dead list */
		next = c->next;
		if (c->st == CS_DEAD)
			continue;
		if (c->st != CS_READY && t > c->open_due) {
			lose(c, PV_EUNREACH, "SMB to '%s': not open within %s", c->host,
			     span(c->tmo, a, sizeof(a)));
			continue;
		}
		/* the request that waited longest is named (pend is newest first) */
		for (struct req *q = c->pend; q; q = q->next)
			if (t > q->due && (!late || q->due <= late->due))
				late = q;
		if (late) {
			lose(c, PV_EUNREACH,
			     "SMB to '%s': no final answer to %s in %s (keep-alives and interim "
			     "answers do not extend a request)",
			     c->host, smb2_cmd_name(late->cmd), span(c->tmo, a, sizeof(a)));
			continue;
		}
		if (c->pend || c->credits >= 1 || !c->backlog)
			continue;
		for (struct req *q = c->backlog; q; q = q->next)
			waiting++;
		lose(c, PV_EREMOTE,
		     "SMB to '%s': the server granted no credits: %u request%s cannot be sent",
		     c->host, waiting, waiting == 1 ? "" : "s");
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
	c->share = strdup(o->share);
	c->wg = strdup(o->workgroup);
	c->user = strdup(o->user);
	c->pw = o->auth ? pv_secret_new("", 0)
			: pv_secret_new(o->password->data, o->password->len);
	c->tmo = (o->timeout_ms > 0 ? o->timeout_ms : 10000) / 1000.0;
	c->open_due = now() + c->tmo;
	c->ready = ready;
	c->ready_arg = arg;
	c->auth = o->auth;
	c->auth_arg = o->auth_arg;
	c->credits = 1;
	if (!c->host || !c->server || !c->share || !c->wg || !c->user || !c->pw) {
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
		return pv_error(PV_EUNREACH, "SMB to '%s': connect: %s", o->host, strerror(e));
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

void smba_test_cchal(struct pv_smba *c, const uint8_t cchal[8])
{
	memcpy(c->cchal, cchal, 8);
	c->fixed_cchal = true;
}

bool pv_smba_usable(const struct pv_smba *c)
{
	return c && c->st == CS_READY;
}

const char *pv_smba_error(const struct pv_smba *c)
{
	return c ? c->err : "";
}

/* ---- requests ---- */

static int ready_for(struct pv_smba *c)
{
	if (c->st != CS_READY)
		return pv_error(c->code ? c->code : PV_EUNREACH, "%s",
				c->err[0] ? c->err : "SMB: the connection is not open");
	return PV_OK;
}

static int with_name(struct pv_smba *c, const char *path, struct pv_buf *name)
{
	if (smb2_name(path, name) < 0 || name->len > 0xFFFF)
		return pv_error(PV_ECONFIG, "SMB: the path '%s' cannot be sent", path);
	(void)c;
	return PV_OK;
}

int pv_smba_create(struct pv_smba *c, const char *path, uint32_t access, uint32_t disposition,
		   uint32_t options, pv_smba_cb cb, void *arg)
{
	struct pv_buf name = PV_BUF_INIT, body = PV_BUF_INIT;
	uint8_t f[56] = {0};
	int r;

	if ((r = ready_for(c)) != PV_OK || (r = with_name(c, path, &name)) != PV_OK)
		goto out;
	smb2_put16(f, 57);
	smb2_put32(f + 4, 2); /* impersonation */
	smb2_put32(f + 24, access);
	smb2_put32(f + 32, 7); /* share read, write, delete */
	smb2_put32(f + 36, disposition);
	smb2_put32(f + 40, options);
	smb2_put16(f + 44, SMB2_HDR + 56);
	smb2_put16(f + 46, (uint16_t)name.len);
	pv_buf_add(&body, f, sizeof(f));
	if (name.len)
		pv_buf_add(&body, name.data, name.len);
	else
		pv_buf_add(&body, "", 1); /* the Buffer's byte of StructureSize 57 */
	r = pv_buf_failed(&body) ? pv_error(PV_EIO, "out of memory")
				 : send_req(c, SMB2_CREATE, (uint8_t *)body.data, body.len, cb, arg);
out:
	pv_buf_release(&name, 0);
	pv_buf_release(&body, 0);
	return r;
}

int pv_smba_closefile(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg)
{
	uint8_t b[24] = {0};
	int r;

	if ((r = ready_for(c)) != PV_OK)
		return r;
	smb2_put16(b, 24);
	memcpy(b + 8, fid, 16);
	return send_req(c, SMB2_CLOSE, b, sizeof(b), cb, arg);
}

int pv_smba_read(struct pv_smba *c, const uint8_t fid[16], uint64_t off, uint32_t len,
		 pv_smba_cb cb, void *arg)
{
	uint8_t b[49] = {0};
	int r;

	if ((r = ready_for(c)) != PV_OK)
		return r;
	if (len > IO_MAX)
		return pv_error(PV_EBUG, "SMB: a READ of %u bytes (at most %u)", len, IO_MAX);
	smb2_put16(b, 49);
	b[2] = SMB2_HDR + 16; /* where the data should start in the answer */
	smb2_put32(b + 4, len);
	smb2_put64(b + 8, off);
	memcpy(b + 16, fid, 16);
	return send_req(c, SMB2_READ, b, sizeof(b), cb, arg);
}

int pv_smba_write(struct pv_smba *c, const uint8_t fid[16], uint64_t off, const void *data,
		  uint32_t len, pv_smba_cb cb, void *arg)
{
	uint8_t *b;
	int r;

	if ((r = ready_for(c)) != PV_OK)
		return r;
	if (len > IO_MAX)
		return pv_error(PV_EBUG, "SMB: a WRITE of %u bytes (at most %u)", len, IO_MAX);
	if (!(b = calloc(1, 48 + (size_t)len)))
		return pv_error(PV_EIO, "out of memory");
	smb2_put16(b, 49);
	smb2_put16(b + 2, SMB2_HDR + 48);
	smb2_put32(b + 4, len);
	smb2_put64(b + 8, off);
	memcpy(b + 16, fid, 16);
	memcpy(b + 48, data, len);
	r = send_req(c, SMB2_WRITE, b, 48 + (size_t)len, cb, arg);
	free(b);
	return r;
}

int pv_smba_list(struct pv_smba *c, const uint8_t fid[16], bool restart, pv_smba_cb cb, void *arg)
{
	uint8_t b[32 + 2] = {0};
	int r;

	if ((r = ready_for(c)) != PV_OK)
		return r;
	smb2_put16(b, 33);
	b[2] = 1; /* FileDirectoryInformation */
	b[3] = restart ? 1 : 0;
	memcpy(b + 8, fid, 16);
	smb2_put16(b + 24, SMB2_HDR + 32);
	smb2_put16(b + 26, 2);
	smb2_put32(b + 28, LIST_BYTES);
	b[32] = '*'; /* "*" in UTF-16LE */
	return send_req(c, SMB2_QUERY_DIRECTORY, b, sizeof(b), cb, arg);
}

int pv_smba_stat(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg)
{
	uint8_t b[41] = {0};
	int r;

	if ((r = ready_for(c)) != PV_OK)
		return r;
	smb2_put16(b, 41);
	b[2] = 1;    /* SMB2_0_INFO_FILE */
	b[3] = 0x22; /* FileNetworkOpenInformation */
	smb2_put32(b + 4, 4096);
	memcpy(b + 24, fid, 16);
	return send_req(c, SMB2_QUERY_INFO, b, sizeof(b), cb, arg);
}

int pv_smba_rename(struct pv_smba *c, const uint8_t fid[16], const char *path, bool replace,
		   pv_smba_cb cb, void *arg)
{
	struct pv_buf name = PV_BUF_INIT, body = PV_BUF_INIT;
	uint8_t f[32] = {0}, info[20] = {0};
	int r;

	if ((r = ready_for(c)) != PV_OK || (r = with_name(c, path, &name)) != PV_OK)
		goto out;
	/* FILE_RENAME_INFORMATION_TYPE_2 (MS-FSCC 2.4.37.2) */
	info[0] = replace ? 1 : 0;
	smb2_put32(info + 16, (uint32_t)name.len);
	smb2_put16(f, 33);
	f[2] = 1;  /* SMB2_0_INFO_FILE */
	f[3] = 10; /* FileRenameInformation */
	smb2_put32(f + 4, (uint32_t)(sizeof(info) + name.len));
	smb2_put16(f + 8, SMB2_HDR + 32);
	memcpy(f + 16, fid, 16);
	pv_buf_add(&body, f, sizeof(f));
	pv_buf_add(&body, info, sizeof(info));
	pv_buf_add(&body, name.data, name.len);
	r = pv_buf_failed(&body) ? pv_error(PV_EIO, "out of memory")
				 : send_req(c, SMB2_SET_INFO, (uint8_t *)body.data, body.len, cb, arg);
out:
	pv_buf_release(&name, 0);
	pv_buf_release(&body, 0);
	return r;
}

int pv_smba_entries(const uint8_t *buf, size_t len,
		    int (*fn)(void *arg, const char *name, bool dir, uint64_t size), void *arg)
{
	const uint8_t *e = buf, *end;

	if (!len)
		return PV_OK; /* buf may be NULL then */
	end = buf + len;
	for (;;) {
		uint32_t next, nl;
		char name[768];
		int r;

		/* an entry (MS-FSCC 2.4.10) where the buffer or the last NextEntryOffset says */
		if (end - e < 64)
			return pv_error(
				PV_EREMOTE,
				"a malformed listing: an entry of %zu bytes, shorter than its "
				"64 fixed ones",
				(size_t)(end - e));
		next = smb2_get32(e);
		nl = smb2_get32(e + 60);
		/* MS-FSCC 2.1.5.2: a name is at most 255 characters */
		if (nl > (size_t)(end - e) - 64 || nl > 510 || (next && next < 64 + nl) ||
		    next > (size_t)(end - e))
			return pv_error(PV_EREMOTE,
					"a malformed listing: an entry whose name (%u bytes) or "
					"NextEntryOffset (%u) does not fit the %zu bytes left",
					nl, next, (size_t)(end - e));
		if (pv_utf16le_to_utf8(e + 64, nl, name, sizeof(name)) < 0)
			return pv_error(PV_EREMOTE, "a malformed listing: a name that is not UTF-16");
		/* as listing_entry (smb/listing.c) refuses them: a name that is empty, holds a
		 * separator or a NUL (cut short) would name another file than the one listed */
		if (!*name || strlen(name) * 2 < nl || strpbrk(name, "/\\"))
			return pv_error(PV_EREMOTE,
					"a malformed listing: the server listed a bad name "
					"'%.200s'",
					name);
		if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
		    (r = fn(arg, name, (smb2_get32(e + 56) & 0x10) != 0, smb2_get64(e + 40))) != 0)
			return r;
		if (!next)
			break;
		e += next;
	}
	return PV_OK;
}
