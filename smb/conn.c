/* smb/conn.c: the SMB2 engine's connections (see async.h): the epoll loop and its turns, each
 * connection's socket (opened, connected, read and written), its input cut into frames,
 * deadlines, and losing a connection with every request on it. What a frame holds is
 * frame.c's; the logon is logon.c's; the requests are ops.c's. */
#include "smb/async.h"

#include "smb/engine.h"
#include "smb/internal.h"
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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The largest answer taken: a READ of PV_SMB_READ_MAX with its headers (none of the others
 * holds more than 64 KiB: a listing, an IOCTL's output, a security buffer), encrypted or
 * not. */
#define FRAME_MAX  (PV_SMB_READ_MAX + 4096u)
#define SWEEP_SECS 0.05 /* deadlines are looked at every 50 ms at most */

/* Whether c's input holds frames for the loop's next turn. */
static void held(struct pv_smb_conn *c, bool on)
{
	if (on != c->is_held)
		c->l->nheld += on ? 1 : (size_t)-1;
	c->is_held = on;
}

void pv_smb_yield(struct pv_smb_conn *c)
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

/* ---- failure ---- */

static void epoll_update(struct pv_smb_conn *c);

/* The connection is lost: every request completes with the failure, a logon under way and
 * ready too. */
static void vlose(struct pv_smb_conn *c, int code, const char *fmt, va_list ap)
{
	struct pv_smb_done d;
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
	/* a compound being made goes without its callbacks: pv_smb_send says it failed */
	while (c->chain) {
		struct req *q = c->chain;

		c->chain = q->next;
		smba_req_free(q);
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
			if (q->kind == K_USER || q->kind == K_TREE || q->kind == K_LOGOFF ||
			    q->kind == K_VALIDATE)
				smba_complete(c, q, &d);
			else
				smba_req_free(q);
		}
	if (c->lg.active) {
		pv_smb_cb cb = c->lg.cb;
		void *arg = c->lg.arg;

		smba_logon_clear(&c->lg);
		if (cb)
			cb(c, arg, &d);
	}
	smba_logon_clear(&c->want);
	smba_session_end(c);
	if (c->ready) {
		pv_smb_cb ready = c->ready;

		c->ready = NULL;
		c->opening = false;
		ready(c, c->ready_arg, &d);
	}
}

void smba_lose(struct pv_smb_conn *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlose(c, code, fmt, ap);
	va_end(ap);
}

void pv_smb_abort(struct pv_smb_conn *c, int code, const char *fmt, ...)
{
	va_list ap;

	if (!c || c->freed)
		return;
	va_start(ap, fmt);
	vlose(c, code, fmt, ap);
	va_end(ap);
}

/* ---- the socket ---- */

static void epoll_update(struct pv_smb_conn *c)
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
 * function (pv_smb_read...), whose callers are told that callbacks come from the loop
 * only, nor after a read (a server that answered and closed: its close is what to say):
 * there the bytes stay queued, and the loop's next turn reads the close or fails the send. */
void smba_flush(struct pv_smb_conn *c, bool may_lose)
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
			smba_lose(c, PV_EUNREACH, "SMB to '%s': sending failed: %s", c->host,
				  strerror(errno));
			return;
		}
		c->osent += (size_t)w;
	}
	if (c->osent == c->olen)
		c->osent = c->olen = 0;
	epoll_update(c);
}

/* The whole frames in c's input (MS-SMB2 2.1 Direct TCP: a zero byte and a 24-bit length;
 * session keep-alives, type 0x85, skipped), answer after answer, until a callback yields
 * (pv_smb_yield): the rest then waits in the buffer for the loop's next turn. Then the
 * close, when the server closed and every answer that came before it was taken. */
static void take(struct pv_smb_conn *c)
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
			smba_lose(c, PV_EREMOTE,
				  "SMB to '%s': not an SMB2 answer (a NetBIOS message of type "
				  "0x%02x, %zu bytes)",
				  c->host, p[0], len);
			break;
		}
		if (len < SMB2_HDR) {
			smba_lose(c, PV_EREMOTE,
				  "SMB to '%s': a malformed answer: a frame of %zu bytes, shorter "
				  "than an SMB2 header (%d bytes)",
				  c->host, len, SMB2_HDR);
			break;
		}
		if (len > FRAME_MAX) {
			smba_lose(
				c, PV_EREMOTE,
				"SMB to '%s': a malformed answer: a frame of %zu bytes, more than "
				"the %u this client takes",
				c->host, len, FRAME_MAX);
			break;
		}
		if (c->ilen - at - 4 < len)
			break;
		smba_frame(c, p + 4, len);
		at += 4 + len;
		if (c->st != CS_DEAD && !c->freed)
			smba_unblock(c); /* the credits it granted, used before the next frame */
	}
	if (c->st == CS_DEAD || c->freed) {
		held(c, false);
		return;
	}
	memmove(c->in, c->in + at, c->ilen - at);
	c->ilen -= at;
	held(c, c->yield && (c->ilen >= 4 || c->eof));
	if (c->eof && !c->yield)
		smba_lose(c, PV_EUNREACH, "SMB to '%s': the connection was closed%s%s%s", c->host,
			  c->ilen ? " in the middle of an answer" : "", c->eof_err ? ": " : "",
			  c->eof_err ? strerror(c->eof_err) : "");
}

/* One read, then the frames it completed (take). One read a turn: epoll wakes the loop again
 * for what is left, so a server that sends without pause neither holds the loop (and its
 * deadlines) nor grows the buffer past a frame. */
static void readable(struct pv_smb_conn *c)
{
	ssize_t got;

	if (smb2_ensure(&c->in, &c->icap, c->ilen + 65536, 4096) < 0) {
		smba_lose(c, PV_EIO, "out of memory");
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

static void writable(struct pv_smb_conn *c)
{
	if (c->st == CS_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			smba_lose(c, PV_EUNREACH, "SMB to '%s': connect: %s", c->host,
				  strerror(err));
			return;
		}
		smba_negotiate(c);
		smba_flush(c, true);
		return;
	}
	smba_flush(c, true);
}

/* ---- the loop ---- */

int pv_smb_loop_new(struct pv_smb_loop **out)
{
	struct pv_smb_loop *l = calloc(1, sizeof(*l));

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

static void release(struct pv_smb_conn *c)
{
	smba_session_end(c);
	smba_logon_clear(&c->lg);
	smba_logon_clear(&c->want);
	free(c->host);
	free(c->server);
	free(c->open_share);
	free(c->share);
	free(c->out);
	free(c->in);
	free(c);
}

static void reap(struct pv_smb_loop *l)
{
	while (l->dead) {
		struct pv_smb_conn *c = l->dead;

		l->dead = c->next;
		release(c);
	}
}

void pv_smb_close_conn(struct pv_smb_conn *c)
{
	struct pv_smb_loop *l;

	if (!c || c->freed)
		return;
	l = c->l;
	smba_lose(c, PV_EUNREACH, "SMB to '%s': closed", c->host);
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

void pv_smb_loop_free(struct pv_smb_loop *l)
{
	if (!l)
		return;
	while (l->conns)
		pv_smb_close_conn(l->conns);
	reap(l);
	close(l->ep);
	free(l);
}

size_t pv_smb_loop_count(const struct pv_smb_loop *l)
{
	return l->n;
}

size_t pv_smb_loop_ready(const struct pv_smb_loop *l)
{
	return l->ready;
}

/* The deadlines of c at t: the opening's, every request's answer, and requests that wait for
 * credits with none in flight to bring any: MS-SMB2 3.3.1.2 has the server never leave the
 * client without a credit, and one that does would keep them waiting for ever. */
static void deadlines(struct pv_smb_conn *c, double t)
{
	char a[32];
	unsigned waiting = 0;
	struct req *late = NULL;

	if (c->opening && t > (c->last_final > c->open_t0 ? c->last_final : c->open_t0) + c->tmo) {
		smba_lose(c, PV_EUNREACH, "SMB to '%s': not open: no answer within %s", c->host,
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
		smba_lose(c, PV_EUNREACH,
			  "SMB to '%s': no final answer to %s in %s (keep-alives and interim "
			  "answers do not extend a request)",
			  c->host, smb2_cmd_name(late->cmd), span(c->tmo, a, sizeof(a)));
		return;
	}
	if (c->pend || !c->backlog || c->credits >= smba_charges(c->backlog, c->backlog->group) ||
	    c->st != CS_OPEN)
		return;
	for (struct req *q = c->backlog; q; q = q->next)
		waiting++;
	smba_lose(c, PV_EREMOTE,
		  "SMB to '%s': the server granted no credits: %u request%s cannot be sent",
		  c->host, waiting, waiting == 1 ? "" : "s");
}

/* epoll_wait for up to seconds (negative: without end), to the microsecond: epoll_pwait2 where
 * the kernel has it (5.11 on), else whole milliseconds, rounded up. */
static int wait_events(struct pv_smb_loop *l, struct epoll_event *ev, int max, double seconds)
{
	static bool no_pwait2;
	struct timespec ts;
	int n;

	if (seconds < 0)
		return epoll_wait(l->ep, ev, max, -1);
	if (!no_pwait2) {
		ts.tv_sec = (time_t)seconds;
		ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
		if ((n = epoll_pwait2(l->ep, ev, max, &ts, NULL)) >= 0 || errno != ENOSYS)
			return n;
		no_pwait2 = true;
	}
	return epoll_wait(l->ep, ev, max, (int)(seconds * 1000 + 0.999));
}

int pv_smb_loop_run(struct pv_smb_loop *l, int timeout_ms)
{
	return pv_smb_loop_wait(l, timeout_ms < 0 ? -1.0 : timeout_ms / 1000.0);
}

int pv_smb_loop_wait(struct pv_smb_loop *l, double seconds)
{
	struct epoll_event ev[64];
	int n;
	double t;

	/* what callbacks left in the input comes first, and then nothing is waited for */
	if (l->nheld) {
		for (struct pv_smb_conn *c = l->conns, *next; c; c = next) {
			next = c->next;
			if (c->is_held && c->st != CS_DEAD)
				take(c);
		}
		seconds = 0;
	}
	n = wait_events(l, ev, 64, seconds);
	l->ready = n > 0 ? (size_t)n : 0;
	if (n < 0 && errno != EINTR)
		return pv_error(PV_EIO, "epoll_wait: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		struct pv_smb_conn *c = ev[i].data.ptr;
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
	t = pv_now();
	for (struct pv_smb_conn *c = t >= l->sweep_at ? l->conns : NULL, *next; c; c = next) {
		/* taken first: a callback of smba_lose() may close c (load/logon.c logs a user on
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
static struct pv_smb_conn *conn_new(struct pv_smb_loop *l, const struct pv_smb_open_opts *o,
				    pv_smb_cb ready, void *arg)
{
	struct pv_smb_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->l = l;
	c->fd = -1;
	c->host = strdup(o->host);
	c->server = strdup(o->server ? o->server : o->host);
	c->tmo = (o->timeout_ms > 0 ? o->timeout_ms : 10000) / 1000.0;
	c->open_t0 = pv_now();
	c->opening = true;
	c->ready = ready;
	c->ready_arg = arg;
	c->pipelined = o->pipelined;
	if ((c->fixed_guid = o->client_guid != NULL))
		memcpy(c->client_guid, o->client_guid, 16);
	c->prev_sid = o->prev_session;
	c->credits = 1;
	if (o->encrypt > PV_SMB_ENCRYPT_ON) { /* that cipher alone */
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
static int conn_add(struct pv_smb_conn *c, int fd, struct pv_smb_conn **out)
{
	struct pv_smb_loop *l = c->l;
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

int pv_smb_open(struct pv_smb_loop *l, const struct pv_smb_open_opts *o, pv_smb_cb ready, void *arg,
		struct pv_smb_conn **out)
{
	struct addrinfo hints, *ai = NULL;
	struct pv_smb_conn *c;
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

int smba_open_fd(struct pv_smb_loop *l, int fd, const struct pv_smb_open_opts *o, pv_smb_cb ready,
		 void *arg, struct pv_smb_conn **out)
{
	struct pv_smb_conn *c;
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

bool pv_smb_usable(const struct pv_smb_conn *c)
{
	return c && c->st == CS_OPEN && !c->opening && c->keyed && c->tid && !c->lg.active &&
	       !c->validating;
}

uint64_t pv_smb_session(const struct pv_smb_conn *c)
{
	return c ? c->sid : 0;
}

bool pv_smb_lost(const struct pv_smb_conn *c)
{
	return !c || c->st == CS_DEAD;
}

const char *pv_smb_error(const struct pv_smb_conn *c)
{
	return c ? c->err : "";
}

const char *pv_smb_describe(const struct pv_smb_conn *c)
{
	return c ? c->desc : "";
}

int pv_smb_local_port(const struct pv_smb_conn *c)
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

uint16_t pv_smb_dialect(const struct pv_smb_conn *c)
{
	return c && c->negotiated ? c->sec.dialect : 0;
}

uint32_t pv_smb_max_read(const struct pv_smb_conn *c)
{
	if (!c || !c->negotiated)
		return 0;
	if (!c->sec.multi_credit || c->sec.max_read <= 65536u)
		return 65536u;
	return c->sec.max_read < PV_SMB_READ_MAX ? c->sec.max_read : PV_SMB_READ_MAX;
}

bool pv_smb_encrypting(const struct pv_smb_conn *c)
{
	return c && c->keyed && (c->sess_encrypt || c->tree_encrypt);
}

bool pv_smb_signing(const struct pv_smb_conn *c)
{
	return c && c->keyed && c->sess_sign;
}
