/* smb/wire.c: our own lean SMB2 client, for building trees as many users over few
 * connections.
 *
 * Why not libsmbclient here: smbd forks a process per TCP connection, and that fork (page
 * tables of a big parent, then dlopen and talloc in the child) costs it 45-85 ms of CPU on the
 * lab, which libsmbclient pays once per user because it makes a connection per logon. SMB2
 * lets one connection carry the sessions of many users one after another (MS-SMB2 3.3.5.5),
 * so a worker here keeps one connection and logs each of its users on and off over it. And
 * each file is ONE compound request (CREATE + WRITE + CLOSE, related, MS-SMB2 3.2.4.1.4),
 * with several such compounds in flight: smbd reads one frame per file and serves the write
 * synchronously (it keeps aio for writes that are not part of a compound).
 *
 * Signing (MS-SMB2 3.1.4, 3.2.4.1.1, 3.2.5.1.3): when the server's NEGOTIATE answer says
 * SIGNING_REQUIRED, every request after the logon is signed (each message of a compound on
 * its own, its padding included) with the session's signing key: the NTLMv2 session key
 * itself for 2.0.2 and 2.1 (HMAC-SHA256), its SP800-108 derivation for 3.0 and 3.0.2
 * (AES-128-CMAC); and every answer from the logon's final SESSION_SETUP on must come signed
 * with it. Whether required or not, an answer that comes signed is checked (Samba signs the
 * final SESSION_SETUP answer of every logon that is not a guest's). Interim answers and
 * break notifications are never checked (MS-SMB2 3.2.5.1.3 skips them; Samba's client too,
 * since servers set the flag on interim answers without a valid signature). A server that
 * does not require signing gets unsigned requests: signing costs both sides CPU on every
 * byte written, and the tree builder is meant to leave the server as the only limit.
 *
 * What it does not do, and then the caller uses libsmbclient (pv_smb2_unsupported):
 * encryption (a server or share that requires it), SMB 3.1.1 only servers (3.1.1 would need
 * preauth integrity), Kerberos. Nor FSCTL_VALIDATE_NEGOTIATE_INFO (MS-SMB2 3.2.5.5, a client
 * option that no server requires): a NEGOTIATE answer changed on the way to drop
 * SIGNING_REQUIRED gets our requests refused by the server, and one that lowers the dialect
 * still gets them signed. Logon is NTLMv2 in SPNEGO (smb/ntlm.c).
 *
 * What it does not take from a server (issue 13): every length and offset in an answer is
 * checked against the frame it came in before anything is read through it; a frame shorter
 * than an SMB2 header, a NetBIOS type other than a session message or a keep-alive, a
 * NextCommand outside the frame, a body shorter than its command's, two answers to one
 * request or an answer to none end the connection with "a malformed answer"-like words. And
 * deadlines (smb.h) that keep-alives and interim answers do not move. */
#include "smb/smb.h"

#include "smb/internal.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "util/err.h"
#include "util/utf16.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WINDOW	      16	      /* compounds in flight on a connection */
#define WRITE_MAX     65536u	      /* bytes per WRITE (one credit) */
#define COMPOUND_DATA (4 * WRITE_MAX) /* files up to this size are one compound */
#define CREDITS_ASK   64
#define LIST_BUF      65536u
/* The largest answer taken: none we ask for holds more than LIST_BUF (QUERY_DIRECTORY's
 * OutputBufferLength) plus headers, or a 64 KiB security buffer (16-bit length). */
#define FRAME_MAX (1u << 20)
/* Deadlines, in units of the timeout T (smb.h says the rule): a final answer within ANSWER_T,
 * a tree build within T times (BUILD_T + items + MiB written). */
#define ANSWER_T 3
#define BUILD_T	 8
#define MIB	 (1u << 20)

/* CREATE fields (MS-SMB2 2.2.13) */
#define FILE_LIST_DIRECTORY	0x00000001u
#define FILE_WRITE_DATA		0x00000002u
#define FILE_READ_ATTRIBUTES	0x00000080u
#define DELETE_ACCESS		0x00010000u
#define SYNCHRONIZE		0x00100000u
#define SHARE_ALL		0x00000007u
#define FILE_OPEN		1u
#define FILE_CREATE		2u
#define FILE_OVERWRITE_IF	5u
#define FILE_DIRECTORY_FILE	0x00000001u
#define FILE_NON_DIRECTORY_FILE 0x00000040u
#define FILE_DELETE_ON_CLOSE	0x00001000u
#define ATTR_DIRECTORY		0x00000010u

enum kind { P_FILE, P_DIR, P_CHUNK };

struct pend {
	uint64_t mid0;
	unsigned n, got;
	uint32_t seen; /* messages answered (bit i: mid0 + i); n is at most 2 + 4 WRITEs */
	enum kind kind;
	size_t item;
	uint32_t status;   /* the first failure in the compound */
	uint16_t fail_cmd; /* and the command that failed */
	bool created, closed;
	bool fix; /* the file was there with another size */
	uint8_t fid[16];
};

/* A file a failure left behind (created, maybe open): removed before returning. */
struct cut {
	size_t item;
	bool open;
	uint8_t fid[16];
};

struct pv_smb2 {
	int fd;
	char *server;
	int64_t tmo;	    /* T, the timeout: ms a read waits for the next bytes */
	int64_t due;	    /* a final answer must come by then (CLOCK_MONOTONIC ms); 0: none */
	int64_t build_due;  /* the tree build must end by then; 0: no build */
	int64_t build_ms;   /* how long that build was given */
	uint16_t waiting;   /* the command rpc() waits on (messages) */
	int add_err;	    /* the code add() recorded when it last returned 0 */
	bool multi_credit;  /* 2.1 or later and the server does multi-credit: CreditCharge 1 */
	bool broken;	    /* the connection is unusable: no more requests */
	bool unsupported;   /* the server wants what this client does not do */
	bool sign_required; /* the NEGOTIATE answer's SecurityMode has SIGNING_REQUIRED */
	bool keyed;	    /* key is the signing key of session sid (from the AUTHENTICATE on) */
	bool forged;	    /* an answer failed its signature check (the connection is broken) */
	bool fixed_cchal;   /* the tests' client challenge (smb2_test_cchal), not random bytes */
	uint16_t dialect;
	uint8_t key[16]; /* Session.SigningKey; wiped when the session ends (forget_key) */
	uint8_t cchal[8];
	char signing[48]; /* pv_smb2_signing's words */
	uint64_t mid;
	int64_t credits;
	uint64_t sid;
	uint32_t tid;
	uint8_t *out, *in;
	size_t olen, ocap, ilen, icap, last; /* last: offset of the last message in out */
	struct pend pend[WINDOW];
	unsigned npend;
	/* the tree being built */
	const char *user, *share, *base;
	const struct pv_smb_item *items;
	struct pv_smb_tree_result *res;
	pv_smb_tick_fn tick;
	void *tick_ctx;
	int err;		 /* the first failure (recorded with pv_error) */
	struct cut cuts[WINDOW]; /* at most one per compound in flight */
	unsigned ncuts;
};

bool pv_smb2_unsupported(const struct pv_smb2 *c)
{
	return c && c->unsupported;
}

bool pv_smb2_lost(const struct pv_smb2 *c)
{
	return !c || c->broken;
}

const char *pv_smb2_signing(const struct pv_smb2 *c)
{
	return c && c->sign_required && c->dialect ? c->signing : NULL;
}

void smb2_test_cchal(struct pv_smb2 *c, const uint8_t cchal[8])
{
	memcpy(c->cchal, cchal, 8);
	c->fixed_cchal = true;
}

/* The session ends, or never began: its key goes. */
static void forget_key(struct pv_smb2 *c)
{
	explicit_bzero(c->key, sizeof(c->key));
	c->keyed = false;
}

/* ---- transport ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A span for a message: "30 s", or "750 ms" when not whole seconds (tests use short ones). */
static const char *span(int64_t ms, char *buf, size_t len)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%lld s", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%lld ms", (long long)ms);
	return buf;
}

/* The connection cannot carry more: record "SMB to 'server': <why>" and return code. */
static int broken(struct pv_smb2 *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int broken(struct pv_smb2 *c, int code, const char *fmt, ...)
{
	char why[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	c->broken = true;
	return pv_error(code, "SMB to '%s': %s", c->server, why);
}

/* A deadline passed: the build's, or the one for the next final answer. The connection
 * goes too: answers may still be on their way, and nothing could tell them from new ones. */
static int late(struct pv_smb2 *c)
{
	char a[32], b[32];

	if (c->build_due && now_ms() >= c->build_due)
		return broken(
			c, PV_EUNREACH,
			"the tree build as %s passed its deadline of %s (the timeout %s times "
			"%d + items + MiB written)",
			c->user, span(c->build_ms, a, sizeof(a)), span(c->tmo, b, sizeof(b)),
			BUILD_T);
	if (c->npend)
		return broken(c, PV_EUNREACH,
			      "no final answer to any of the %u requests in flight for %s "
			      "(keep-alives and interim answers do not extend a request)",
			      c->npend, span(ANSWER_T * c->tmo, a, sizeof(a)));
	return broken(
		c, PV_EUNREACH,
		"no final answer to %s in %s (keep-alives and interim answers do not extend a "
		"request)",
		smb2_cmd_name(c->waiting), span(ANSWER_T * c->tmo, a, sizeof(a)));
}

static int ensure(uint8_t **buf, size_t *cap, size_t need)
{
	return smb2_ensure(buf, cap, need, 65536) < 0 ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* Sign every message of what begin/add built, when the server requires signing and a
 * session key exists: each message of a compound over its own bytes, from its header to the
 * next one (padding included) or to the end (MS-SMB2 3.1.4.1, 3.2.4.1.4). SESSION_SETUP is
 * not signed (MS-SMB2 3.2.4.1.1 signs it only to bind a channel, which this client never
 * does); NEGOTIATE comes before any key. */
static void sign_requests(struct pv_smb2 *c)
{
	if (!c->keyed || !c->sign_required)
		return;
	for (size_t off = 4;;) {
		uint8_t *m = c->out + off;
		uint32_t next = smb2_get32(m + 20);

		if (smb2_get16(m + 12) != SMB2_SESSION_SETUP)
			smb2_sign(m, next ? next : c->olen - off, c->dialect, c->key);
		if (!next)
			break;
		off += next;
	}
}

static int send_all(struct pv_smb2 *c)
{
	size_t off = 0, len = c->olen - 4;

	/* the 24-bit length of MS-SMB2 2.1: our largest request (a file's compound) is ~260 KiB */
	if (len > 0xFFFFFF)
		return broken(c, PV_EBUG, "a request of %zu bytes does not fit a frame", len);
	c->out[0] = 0;
	c->out[1] = (uint8_t)(len >> 16);
	c->out[2] = (uint8_t)(len >> 8);
	c->out[3] = (uint8_t)len;
	sign_requests(c);
	while (off < c->olen) {
		ssize_t w = send(c->fd, c->out + off, c->olen - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return broken(c, PV_EUNREACH, "sending failed: %s", strerror(errno));
		off += (size_t)w;
	}
	return PV_OK;
}

/* n bytes, each wait at most T and none past a deadline: what arrives (keep-alives, interim
 * answers) resets the wait for the next bytes, never a deadline. */
static int read_n(struct pv_smb2 *c, uint8_t *p, size_t n)
{
	while (n > 0) {
		struct pollfd pfd = {c->fd, POLLIN, 0};
		int64_t wait = c->tmo, now = now_ms();
		int pr;
		ssize_t got;

		for (int k = 0; k < 2; k++) {
			int64_t due = k ? c->build_due : c->due;

			if (due && due - now <= 0)
				return late(c);
			if (due && due - now < wait)
				wait = due - now;
		}
		pr = poll(&pfd, 1, (int)(wait < INT32_MAX ? wait : INT32_MAX));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return broken(c, PV_EUNREACH, "poll: %s", strerror(errno));
		if (pr == 0) {
			char a[32];

			if (wait < c->tmo)
				continue; /* a deadline is due: the check above says which */
			return broken(c, PV_EUNREACH, "no answer in %s",
				      span(c->tmo, a, sizeof(a)));
		}
		got = recv(c->fd, p, n, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return broken(c, PV_EUNREACH, "the connection was closed%s%s",
				      got == 0 ? "" : ": ", got == 0 ? "" : strerror(errno));
		p += got;
		n -= (size_t)got;
	}
	return PV_OK;
}

/* One frame into c->in: MS-SMB2 2.1 Direct TCP, a zero byte then a 24-bit length (RFC 1002
 * 4.3.1's session message); session keep-alives (type 0x85, RFC 1002 4.3.7) between frames
 * are skipped. A frame holds at least one SMB2 header: nothing shorter is ever read. */
static int read_frame(struct pv_smb2 *c)
{
	uint8_t h[4];
	size_t len;
	int r;

	do {
		if ((r = read_n(c, h, 4)) != PV_OK)
			return r;
		len = (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
	} while (h[0] == 0x85 && len == 0);
	if (h[0] != 0)
		return broken(c, PV_EREMOTE,
			      "not an SMB2 answer (a NetBIOS message of type 0x%02x, %zu bytes)",
			      h[0], len);
	if (len < SMB2_HDR)
		return broken(
			c, PV_EREMOTE,
			"a malformed answer: a frame of %zu bytes, shorter than an SMB2 header "
			"(%d bytes)",
			len, SMB2_HDR);
	if (len > FRAME_MAX)
		return broken(
			c, PV_EREMOTE,
			"a malformed answer: a frame of %zu bytes, more than the %u this client "
			"takes",
			len, FRAME_MAX);
	if ((r = ensure(&c->in, &c->icap, len)) != PV_OK)
		return r;
	c->ilen = len;
	return read_n(c, c->in, len);
}

/* An interim answer: the request went async, its final answer follows (MS-SMB2 3.3.4.2,
 * 3.2.5.1.5). It is no answer for a deadline. */
static bool interim(const struct smb2_hdr *h)
{
	return h->status == ST_PENDING && (h->flags & SMB2_FLAGS_ASYNC);
}

static const char *status_text(uint32_t st, char *buf, size_t len)
{
	const char *n = smb2_status_name(st);

	if (st == ST_DISK_FULL || st == ST_QUOTA_EXCEEDED)
		snprintf(buf, len, "No space left on device (%s)", n);
	else if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "NT status 0x%08x", st);
	return buf;
}

/* Whether the answer h at off (mlen bytes) ends a logon with no key to sign it with: a
 * SESSION_SETUP that failed, or that made a guest or anonymous session (SessionFlags,
 * MS-SMB2 2.2.6; signing cannot be required of those, and logon() refuses them itself). */
static bool unkeyed_setup(const struct pv_smb2 *c, size_t off, const struct smb2_hdr *h,
			  size_t mlen)
{
	if (h->command != SMB2_SESSION_SETUP)
		return false;
	return h->status != ST_OK ||
	       (mlen >= SMB2_HDR + 4 && (smb2_get16(c->in + off + SMB2_HDR + 2) & 0x3));
}

/* The signing rules for the answer h at off in the frame, mlen bytes (MS-SMB2 3.2.5.1.3, as
 * Samba's client applies them): answers with STATUS_PENDING (interim ones) and break
 * notifications (message id all ones) are passed over, signed or not;
 * one that comes signed is checked, required or not, against the key of our session; when
 * the server requires signing, every other answer from the logon's final SESSION_SETUP on
 * must come signed (a SESSION_SETUP that fails has no key to be signed with). A failure
 * loses the connection: nothing after it could be trusted either. */
static int check_signature(struct pv_smb2 *c, size_t off, const struct smb2_hdr *h, size_t mlen)
{
	char why[128], st[96];

	if (h->status == ST_PENDING || h->mid == UINT64_MAX)
		return PV_OK;
	if (h->flags & SMB2_FLAGS_SIGNED) {
		if (!c->keyed)
			snprintf(why, sizeof(why), "came signed before there was a session key");
		else if (h->session != c->sid)
			snprintf(why, sizeof(why),
				 "came signed for session 0x%llx, not ours (0x%llx)",
				 (unsigned long long)h->session, (unsigned long long)c->sid);
		else if (smb2_verify(c->in + off, mlen, c->dialect, c->key) == 0)
			return PV_OK;
		else
			snprintf(why, sizeof(why), "does not match its %s signature",
				 smb2_sign_alg(c->dialect));
	} else if (c->keyed && c->sign_required && !unkeyed_setup(c, off, h, mlen)) {
		snprintf(why, sizeof(why), "came unsigned, and the server requires signing");
	} else {
		return PV_OK;
	}
	c->broken = true;
	c->forged = true;
	return pv_error(PV_EREMOTE,
			"SMB answer from '%s' has a bad signature: %s (message %llu, %s) %s; the "
			"connection is dropped (it was changed on the way, or signed with another "
			"key: look for anything rewriting SMB between here and the server, or "
			"build with PROVISION_SMB_CLIENT=libsmbclient)",
			c->server, smb2_cmd_name(h->command), (unsigned long long)h->mid,
			status_text(h->status, st, sizeof(st)), why);
}

/* The message at off in the frame: its header into h, its length (to the next message of a
 * compound, or the frame's end) into *mlen. MS-SMB2 2.2.1: NextCommand is the offset of the
 * next header from this one, so it must leave a whole header inside the frame. off is 0 or
 * came from a NextCommand checked here, so a header's worth of bytes is there. */
static int message(struct pv_smb2 *c, size_t off, struct smb2_hdr *h, size_t *mlen)
{
	size_t left = c->ilen - off;

	if (smb2_hdr_get(c->in + off, left, h) < 0)
		return broken(c, PV_EREMOTE,
			      "a malformed answer: no SMB2 header at byte %zu of its frame", off);
	if (h->next && (h->next < SMB2_HDR || h->next > left - SMB2_HDR))
		return broken(
			c, PV_EREMOTE,
			"a malformed compound answer: NextCommand %u at byte %zu points outside "
			"its frame of %zu bytes",
			h->next, off, c->ilen);
	*mlen = h->next ? h->next : left;
	c->credits += h->credits;
	return check_signature(c, off, h, *mlen);
}

/* The body of the answer rsp (rlen bytes from its header) into *b, when it holds min bytes;
 * else the answer is malformed. */
static int body(struct pv_smb2 *c, const struct smb2_hdr *h, const uint8_t *rsp, size_t rlen,
		size_t min, const uint8_t **b)
{
	if (rlen < SMB2_HDR + min)
		return broken(c, PV_EREMOTE,
			      "a malformed answer: %s with a body of %zu bytes, %zu expected",
			      smb2_cmd_name(h->command), rlen - SMB2_HDR, min);
	*b = rsp + SMB2_HDR;
	return PV_OK;
}

/* ---- building requests ---- */

static void begin(struct pv_smb2 *c)
{
	c->olen = 4;
	c->last = 0;
}

/* Append a message with a body of blen bytes (zeroed) and return the body's offset in c->out,
 * or 0 when out of memory (recorded; c->add_err holds the code). related: part of the
 * compound begun by the previous message. */
static size_t add(struct pv_smb2 *c, uint16_t cmd, size_t blen, bool related)
{
	struct smb2_hdr h = {0};
	size_t at = c->olen;

	if (c->last) { /* the previous message is padded to 8 bytes and points here */
		at = c->last + ((c->olen - c->last + 7) & ~(size_t)7);
		smb2_put32(c->out + c->last + 20, (uint32_t)(at - c->last));
	}
	if ((c->add_err = ensure(&c->out, &c->ocap, at + SMB2_HDR + blen)) != PV_OK)
		return 0;
	memset(c->out + c->olen, 0, at + SMB2_HDR + blen - c->olen);
	h.credit_charge = c->multi_credit ? 1 : 0;
	h.command = cmd;
	h.credits = CREDITS_ASK;
	h.flags = related ? SMB2_FLAGS_RELATED : 0;
	h.mid = c->mid++;
	h.tree = c->tid;
	h.session = c->sid;
	smb2_hdr_put(c->out + at, &h);
	c->credits--;
	c->last = at;
	c->olen = at + SMB2_HDR + blen;
	return at + SMB2_HDR;
}

/* A message whose body is a fixed part of `fixed` bytes (StructureSize fixed + 1) and then
 * len bytes of data, whose offset and length go in the 16-bit fields at `at` of the body
 * (SESSION_SETUP, TREE_CONNECT, CREATE, QUERY_DIRECTORY). Returns the body's offset, or 0 as
 * add() does, and when len does not fit those 16 bits: callers check their lengths first, so
 * that is a bug, but a length is never cut. */
static size_t add_buffer(struct pv_smb2 *c, uint16_t cmd, size_t fixed, size_t at, const void *data,
			 size_t len, bool related)
{
	size_t b;

	if (len > UINT16_MAX) {
		c->add_err = pv_error(PV_EBUG,
				      "an SMB2 %s buffer of %zu bytes does not fit its "
				      "16-bit length",
				      smb2_cmd_name(cmd), len);
		return 0;
	}
	b = add(c, cmd, fixed + (len ? len : 1), related);

	if (b) {
		smb2_put16(c->out + b, (uint16_t)(fixed + 1));
		smb2_put16(c->out + b + at, (uint16_t)(SMB2_HDR + fixed));
		smb2_put16(c->out + b + at + 2, (uint16_t)len);
		if (len)
			memcpy(c->out + b + fixed, data, len);
	}
	return b;
}

/* A CREATE of name (UTF-16LE, made by smb2_name) as the next message. */
static size_t add_create(struct pv_smb2 *c, const struct pv_buf *name, uint32_t access,
			 uint32_t disposition, uint32_t options, bool related)
{
	size_t b = add_buffer(c, SMB2_CREATE, 56, 44, name->data, name->len, related);

	if (b) {
		uint8_t *p = c->out + b;

		smb2_put32(p + 4, 2); /* impersonation */
		smb2_put32(p + 24, access | SYNCHRONIZE);
		smb2_put32(p + 32, SHARE_ALL);
		smb2_put32(p + 36, disposition);
		smb2_put32(p + 40, options);
	}
	return b;
}

static const uint8_t RELATED_FID[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static size_t add_close(struct pv_smb2 *c, const uint8_t fid[16], bool related)
{
	size_t b = add(c, SMB2_CLOSE, 24, related);

	if (b) {
		smb2_put16(c->out + b, 24);
		memcpy(c->out + b + 8, fid, 16);
	}
	return b;
}

/* A WRITE of len bytes at off; the data is left for the caller at the returned offset + 48. */
static size_t add_write(struct pv_smb2 *c, const uint8_t fid[16], uint64_t off, size_t len,
			bool related)
{
	size_t b = add(c, SMB2_WRITE, 48 + (len ? len : 1), related);

	if (b) {
		uint8_t *p = c->out + b;

		smb2_put16(p, 49);
		smb2_put16(p + 2, SMB2_HDR + 48);
		smb2_put32(p + 4, (uint32_t)len);
		smb2_put64(p + 8, off);
		memcpy(p + 16, fid, 16);
	}
	return b;
}

/* ---- one request at a time (logon, tree connect, listing) ---- */

/* Send what begin/add built and wait for the final answer to its last message: *rsp points
 * at its header in c->in, *rlen is its length. h, rsp and rlen may be NULL when the answer
 * does not matter (closing, logging off). Answers to other messages (the CREATE before the
 * CLOSE waited for, break notifications) are passed over; all of them count for nothing
 * against the deadline of ANSWER_T timeouts. */
static int rpc(struct pv_smb2 *c, struct smb2_hdr *h, const uint8_t **rsp, size_t *rlen)
{
	uint64_t want = c->mid - 1;
	struct smb2_hdr ignored;
	int r;

	if (!h)
		h = &ignored;
	if (c->broken)
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", c->server);
	c->waiting = smb2_get16(c->out + c->last + 12);
	if ((r = send_all(c)) != PV_OK)
		return r;
	c->due = now_ms() + ANSWER_T * c->tmo;
	for (;;) {
		if ((r = read_frame(c)) != PV_OK)
			return r;
		for (size_t off = 0, mlen;; off += h->next) {
			if ((r = message(c, off, h, &mlen)) != PV_OK)
				return r;
			if (h->mid == want && !interim(h)) {
				if (h->command != c->waiting)
					return broken(c, PV_EREMOTE,
						      "a malformed answer: %s answering %s",
						      smb2_cmd_name(h->command),
						      smb2_cmd_name(c->waiting));
				c->due = 0;
				if (rsp)
					*rsp = c->in + off;
				if (rlen)
					*rlen = mlen;
				return PV_OK;
			}
			if (!h->next)
				break;
		}
	}
}

/* ---- connection ---- */

static int dial(const char *server, int timeout, int *out)
{
	struct addrinfo hints = {0}, *ai = NULL, *a;
	int gr, fd = -1, err = 0;

	hints.ai_socktype = SOCK_STREAM;
	if ((gr = getaddrinfo(server, "445", &hints, &ai)) != 0)
		return pv_error(PV_EUNREACH, "SMB to '%s': %s", server, gai_strerror(gr));
	for (a = ai; a; a = a->ai_next) {
		struct pollfd pfd;
		socklen_t sl = sizeof(err);
		int one = 1;

		if ((fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
				 a->ai_protocol)) < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			err = 0;
		else if (errno != EINPROGRESS)
			err = errno;
		else {
			pfd = (struct pollfd){fd, POLLOUT, 0};
			if (poll(&pfd, 1, (timeout > 0 ? timeout : 10) * 1000) <= 0)
				err = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
				err = errno;
		}
		if (err == 0) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return pv_error(PV_EUNREACH, "SMB to '%s': %s; is smbd running there?", server,
				strerror(err ? err : EHOSTUNREACH));
	*out = fd;
	return PV_OK;
}

/* A connection, not yet open; *out is set even on failure (pv_smb2_connect's contract). */
static int new_conn(const char *server, int64_t timeout_ms, struct pv_smb2 **out)
{
	struct pv_smb2 *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c)
		return pv_error(PV_EIO, "out of memory");
	c->fd = -1;
	c->broken = true; /* until negotiated */
	c->tmo = timeout_ms > 0 ? timeout_ms : 10000;
	c->credits = 1;
	if (!(c->server = strdup(server)))
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

static int negotiate(struct pv_smb2 *c)
{
	size_t rlen, at;
	struct smb2_hdr h;
	const uint8_t *rsp = NULL, *b = NULL;
	uint16_t dialect;
	int r;

	c->broken = false;
	begin(c);
	if (!(at = add(c, SMB2_NEGOTIATE, SMB2_NEGOTIATE_BODY, false)))
		return c->add_err;
	if (smb2_negotiate_body(c->out + at) < 0)
		return pv_error(PV_EIO, "getrandom: %s", strerror(errno));
	if ((r = rpc(c, &h, &rsp, &rlen)) != PV_OK)
		return r;
	if (h.status != ST_OK) {
		char st[96];

		c->unsupported = true;
		return pv_error(PV_EREMOTE,
				"SMB to '%s': no SMB 2.0.2-3.0.2 dialect in common (%s)", c->server,
				status_text(h.status, st, sizeof(st)));
	}
	if ((r = body(c, &h, rsp, rlen, 64, &b)) != PV_OK)
		return r;
	dialect = smb2_get16(b + 4);
	if (!smb2_dialect_offered(dialect)) {
		c->unsupported = true;
		return pv_error(PV_EREMOTE,
				"SMB to '%s': the server chose dialect 0x%04x, not one offered",
				c->server, dialect);
	}
	c->multi_credit = dialect >= 0x0210 && (smb2_get32(b + 24) & 0x4);
	c->dialect = dialect;
	/* MS-SMB2 3.2.5.2 (Connection.RequireSigning) and 3.2.5.3.1: every session on this
	 * connection then signs (a guest session could not, and is refused at logon anyway) */
	c->sign_required = (smb2_get16(b + 2) & SMB2_SIGNING_REQUIRED) != 0;
	snprintf(c->signing, sizeof(c->signing), "SMB %s, %s",
		 dialect == 0x0202   ? "2.0.2"
		 : dialect == 0x0210 ? "2.1"
		 : dialect == 0x0300 ? "3.0"
				     : "3.0.2",
		 smb2_sign_alg(dialect));
	return PV_OK;
}

int pv_smb2_connect(const char *server, int timeout, struct pv_smb2 **out)
{
	int r;

	if ((r = new_conn(server, (int64_t)(timeout > 0 ? timeout : 10) * 1000, out)) != PV_OK ||
	    (r = dial(server, timeout, &(*out)->fd)) != PV_OK)
		return r;
	return negotiate(*out);
}

int smb2_connect_fd(int fd, const char *server, int timeout_ms, struct pv_smb2 **out)
{
	int r;

	if ((r = new_conn(server, timeout_ms, out)) != PV_OK) {
		close(fd);
		return r;
	}
	(*out)->fd = fd;
	return negotiate(*out);
}

void pv_smb2_free(struct pv_smb2 *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	forget_key(c);
	free(c->server);
	free(c->out);
	free(c->in);
	free(c);
}

/* ---- logon ---- */

static int logon(struct pv_smb2 *c, const char *wg, const char *user, const struct pv_secret *pw)
{
	struct pv_buf tok = PV_BUF_INIT;
	struct pv_ntlm_challenge ch = {0};
	struct smb2_hdr h;
	const uint8_t *rsp = NULL, *b = NULL;
	size_t rlen, at;
	uint8_t cchal[8], skey[16] = {0};
	uint64_t now = ((uint64_t)time(NULL) + 11644473600ull) * 10000000ull;
	char st[96];
	int r;

	c->sid = 0;
	c->tid = 0;
	forget_key(c);
	if (c->fixed_cchal)
		memcpy(cchal, c->cchal, 8);
	else if (getrandom(cchal, 8, 0) != 8)
		return pv_error(PV_EIO, "getrandom: %s", strerror(errno));
	for (int step = 0; step < 2; step++) {
		int nr = step == 0 ? pv_ntlm_negotiate(&tok)
				   : pv_ntlm_authenticate(&ch, user, wg, pw->data, pw->len, now,
							  cchal, &tok, skey);

		/* -2, or a token past SESSION_SETUP's 16-bit SecurityBufferLength (MS-SMB2
		 * 2.2.5): the server's target info is too long to answer; refused, not cut */
		if (nr == -2 || (nr == 0 && tok.len > UINT16_MAX)) {
			r = pv_error(
				PV_EREMOTE,
				"SMB logon as %s\\%s on '%s': the server's NTLM target info of "
				"%zu bytes would not fit the AUTHENTICATE message's 16-bit "
				"lengths (MS-NLMP 2.2.1.3, MS-SMB2 2.2.5); refused rather than cut",
				wg, user, c->server, ch.target_info_len);
			goto out;
		}
		if (nr < 0) {
			r = pv_error(PV_ECONFIG,
				     "SMB logon as %s\\%s: the name or the password is not "
				     "valid UTF-8",
				     wg, user);
			goto out;
		}
		if (step == 1) {
			/* the key is there before the answer: the final SESSION_SETUP answer is
			 * the first one signed with it (MS-SMB2 3.3.5.5.3; checked in message()) */
			smb2_signing_key(c->dialect, skey, c->key);
			explicit_bzero(skey, sizeof(skey));
			c->keyed = true;
		}
		begin(c);
		if (!(at = add_buffer(c, SMB2_SESSION_SETUP, 24, 12, tok.data, tok.len, false))) {
			r = c->add_err;
			goto out;
		}
		c->out[at + 3] = SMB2_SIGNING_ENABLED;
		pv_buf_release(&tok, 1);
		if ((r = rpc(c, &h, &rsp, &rlen)) != PV_OK ||
		    (r = body(c, &h, rsp, rlen, 8, &b)) != PV_OK)
			goto out;
		if (step == 0) {
			size_t off = smb2_get16(b + 4), len = smb2_get16(b + 6);

			c->sid = h.session;
			/* the security buffer follows the 8 fixed bytes, inside this answer */
			if (h.status == ST_MORE_PROCESSING &&
			    (len == 0 || off < SMB2_HDR + 8 || off > rlen || len > rlen - off)) {
				r = broken(c, PV_EREMOTE,
					   "a malformed answer: SESSION_SETUP's security buffer "
					   "(%zu bytes at %zu) is not inside its %zu bytes",
					   len, off, rlen);
				goto out;
			}
			if (h.status != ST_MORE_PROCESSING ||
			    pv_ntlm_parse_challenge(rsp + off, len, &ch) < 0) {
				r = pv_error(PV_EREMOTE,
					     "SMB logon as %s\\%s on '%s': the server did not "
					     "offer NTLM (%s)",
					     wg, user, c->server,
					     status_text(h.status, st, sizeof(st)));
				c->unsupported = true;
				goto out;
			}
			/* ch points into c->in, which the next request does not touch until its
			 * answer: the AUTHENTICATE is made before that */
			continue;
		}
		if (h.status == ST_ACCESS_DENIED) {
			/* not a wrong password (that is NT_STATUS_LOGON_FAILURE): Samba answers so
			 * when it requires encryption, which this client does not do */
			c->unsupported = true;
			r = pv_error(PV_EREMOTE,
				     "SMB logon as %s\\%s on '%s' refused with %s (does "
				     "it require encryption?)",
				     wg, user, c->server, status_text(h.status, st, sizeof(st)));
			goto out;
		}
		if (h.status != ST_OK) {
			r = pv_error(PV_ECRED, "SMB logon as %s\\%s on '%s' refused (%s)", wg, user,
				     c->server, status_text(h.status, st, sizeof(st)));
			goto out;
		}
		if (smb2_get16(b + 2) & 0x3) {
			r = pv_error(PV_ECRED,
				     "SMB logon as %s\\%s on '%s': the server took it as a "
				     "guest logon; check the user and its password",
				     wg, user, c->server);
			goto out;
		}
		if (smb2_get16(b + 2) & 0x4) {
			c->unsupported = true;
			r = pv_error(PV_EREMOTE, "SMB to '%s': the server requires encryption",
				     c->server);
			goto out;
		}
	}
	r = PV_OK;
out:
	if (r != PV_OK)
		forget_key(c);
	explicit_bzero(skey, sizeof(skey));
	pv_buf_release(&tok, 1);
	return r;
}

/* The LOGOFF's answer is signed with the session's key like any other: the key goes after it. */
static void logoff(struct pv_smb2 *c)
{
	size_t at;

	if (c->sid && !c->broken) {
		begin(c);
		if ((at = add(c, SMB2_LOGOFF, 4, false)) != 0) {
			smb2_put16(c->out + at, 4);
			rpc(c, NULL, NULL, NULL);
		}
	}
	c->sid = 0;
	c->tid = 0;
	forget_key(c);
}

static int tree_connect(struct pv_smb2 *c, const char *share)
{
	struct pv_buf unc = PV_BUF_INIT, path = PV_BUF_INIT;
	struct smb2_hdr h;
	const uint8_t *rsp = NULL, *b = NULL;
	size_t rlen;
	char st[96];
	int r;

	/* the path's length is checked by add_buffer (16 bits): a share name is short */
	if (pv_buf_addf(&unc, "\\\\%s\\%s", c->server, share) < 0) {
		pv_buf_release(&unc, 0);
		return pv_error(PV_EIO, "out of memory");
	}
	r = smb2_name(unc.data, &path);
	pv_buf_release(&unc, 0);
	if (r < 0) {
		pv_buf_release(&path, 0);
		return pv_error(PV_ECONFIG, "share name '%s' is not valid UTF-8", share);
	}
	begin(c);
	r = add_buffer(c, SMB2_TREE_CONNECT, 8, 4, path.data, path.len, false)
		    ? rpc(c, &h, &rsp, &rlen)
		    : c->add_err;
	pv_buf_release(&path, 0);
	if (r != PV_OK)
		return r;
	if (h.status != ST_OK)
		return pv_error(h.status == ST_ACCESS_DENIED ? PV_ECRED : PV_EREMOTE,
				"SMB tree connect to //%s/%s as %s: %s", c->server, share, c->user,
				status_text(h.status, st, sizeof(st)));
	if ((r = body(c, &h, rsp, rlen, 16, &b)) != PV_OK)
		return r;
	if (smb2_get32(b + 4) & 0x8000) {
		c->unsupported = true; /* SMB2_SHAREFLAG_ENCRYPT_DATA */
		return pv_error(PV_EREMOTE, "SMB to '%s': the share %s requires encryption",
				c->server, share);
	}
	c->tid = h.tree;
	return PV_OK;
}

/* ---- failures on a path ---- */

static int path_fail(struct pv_smb2 *c, uint32_t status, const char *what, const char *rel)
{
	char st[96], path[1024];

	snprintf(path, sizeof(path), "%s%s%s", c->base, rel && *rel ? "/" : "", rel ? rel : "");
	status_text(status, st, sizeof(st));
	if (status == ST_DISK_FULL || status == ST_QUOTA_EXCEEDED)
		return pv_error(PV_EREMOTE,
				"the disk of '%s' is full: SMB %s //%s/%s/%s failed (%s)",
				c->server, what, c->server, c->share, path, st);
	return pv_error(PV_EREMOTE, "SMB %s //%s/%s/%s as %s: %s", what, c->server, c->share, path,
			c->user, st);
}

/* The share-relative name of base/rel ("" rel: base itself), UTF-16LE, into name (reset).
 * rel comes from the fileset or from a listing, which keeps to PATH_LIMIT already. */
static int name_of(const struct pv_smb2 *c, const char *rel, struct pv_buf *name)
{
	size_t bl = strlen(c->base), rl = strlen(rel), len = bl + (rl ? 1 + rl : 0);
	char full[PATH_LIMIT + 1];

	if (len > PATH_LIMIT)
		return pv_error(PV_ECONFIG,
				"SMB //%s/%s: the path '%s/%.*s%s%s' is %zu bytes, more than %d; "
				"shorten the fileset's names",
				c->server, c->share, c->base, rl > 600 ? 300 : (int)rl, rel,
				rl > 600 ? "..." : "", rl > 600 ? rel + rl - 300 : "", len,
				PATH_LIMIT);
	snprintf(full, sizeof(full), "%s%s%s", c->base, rl ? "/" : "", rel); /* fits: checked */
	pv_buf_reset(name);
	if (smb2_name(full, name) < 0)
		return pv_error(PV_ECONFIG, "'%s' is not valid UTF-8", full);
	return PV_OK;
}

/* Open base/rel with one CREATE and wait for its id; a refusal is reported as `what` failed. */
static int open_wait(struct pv_smb2 *c, const char *rel, uint32_t access, uint32_t disposition,
		     uint32_t options, const char *what, uint8_t fid[16])
{
	struct pv_buf name = PV_BUF_INIT;
	struct smb2_hdr h;
	const uint8_t *rsp = NULL, *b = NULL;
	size_t rlen;
	int r;

	if ((r = name_of(c, rel, &name)) == PV_OK) {
		begin(c);
		r = add_create(c, &name, access, disposition, options, false)
			    ? rpc(c, &h, &rsp, &rlen)
			    : c->add_err;
	}
	pv_buf_release(&name, 0);
	if (r != PV_OK)
		return r;
	if (h.status != ST_OK)
		return path_fail(c, h.status, what, rel);
	if ((r = body(c, &h, rsp, rlen, 88, &b)) != PV_OK)
		return r;
	memcpy(fid, b + 64, 16); /* MS-SMB2 2.2.14: FileId */
	return PV_OK;
}

/* ---- listing ---- */

/* The entries of one QUERY_DIRECTORY answer (FileDirectoryInformation, MS-FSCC 2.4.10) at e,
 * len bytes, listed in folder rel: every offset and length is checked against the answer. */
static int entries(struct pv_smb2 *c, const char *rel, const uint8_t *e, size_t len,
		   struct listing *l)
{
	const uint8_t *end = e + len;
	char where[600];
	int r = PV_OK;

	snprintf(where, sizeof(where), "//%s/%s/%s", c->server, c->share, c->base);
	while (r == PV_OK) {
		uint32_t next, nl;
		char name[768]; /* 255 UTF-16 units: at most 765 bytes of UTF-8 */

		if (end - e < 64)
			return broken(
				c, PV_EREMOTE,
				"a malformed listing of %s%s%s: an entry of %zu bytes, shorter "
				"than its 64 fixed ones",
				where, *rel ? "/" : "", rel, (size_t)(end - e));
		next = smb2_get32(e);
		nl = smb2_get32(e + 60);
		/* MS-FSCC 2.1.5.2: a name is at most 255 characters */
		if (nl > (size_t)(end - e) - 64 || nl > 510 || (next && next < 64 + nl) ||
		    next > (size_t)(end - e))
			return broken(
				c, PV_EREMOTE,
				"a malformed listing of %s%s%s: an entry whose name (%u bytes) or "
				"NextEntryOffset (%u) does not fit the %zu bytes left",
				where, *rel ? "/" : "", rel, nl, next, (size_t)(end - e));
		if (pv_utf16le_to_utf8(e + 64, nl, name, sizeof(name)) < 0)
			return broken(c, PV_EREMOTE,
				      "a malformed listing of %s%s%s: a name that is not UTF-16",
				      where, *rel ? "/" : "", rel);
		r = listing_entry(l, where, c->base, rel, name,
				  (smb2_get32(e + 56) & ATTR_DIRECTORY) != 0, smb2_get64(e + 40));
		if (!next)
			break;
		e += next;
	}
	return r;
}

/* What base/rel holds, into l (paths relative to base). */
static int list_dir(void *arg, const char *rel, struct listing *l)
{
	struct pv_smb2 *c = arg;
	uint8_t fid[16] = {0};
	int r;

	if ((r = open_wait(c, rel, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES, FILE_OPEN,
			   FILE_DIRECTORY_FILE, "listing", fid)) != PV_OK)
		return r;
	for (bool restart = true; r == PV_OK; restart = false) {
		struct smb2_hdr h;
		const uint8_t *rsp = NULL, *b = NULL;
		size_t rlen, at, off, len;

		begin(c);
		if (!(at = add_buffer(c, SMB2_QUERY_DIRECTORY, 32, 24, "*\0", 2, false))) {
			r = c->add_err;
			break;
		}
		c->out[at + 2] = 1; /* FileDirectoryInformation */
		c->out[at + 3] = restart ? 1 : 0;
		memcpy(c->out + at + 8, fid, 16);
		smb2_put32(c->out + at + 28, LIST_BUF);
		if ((r = rpc(c, &h, &rsp, &rlen)) != PV_OK)
			break;
		if (h.status == ST_NO_MORE_FILES)
			break;
		if (h.status != ST_OK) {
			r = path_fail(c, h.status, "listing", rel);
			break;
		}
		if ((r = body(c, &h, rsp, rlen, 8, &b)) != PV_OK)
			break;
		/* MS-SMB2 2.2.34: the buffer follows the 8 fixed bytes, inside the answer, and
		 * holds an entry at least (the end is STATUS_NO_MORE_FILES, 3.3.5.18) */
		off = smb2_get16(b + 2);
		len = smb2_get32(b + 4);
		if (off < SMB2_HDR + 8 || off > rlen || len > rlen - off || len == 0) {
			r = broken(c, PV_EREMOTE,
				   "a malformed answer: QUERY_DIRECTORY's buffer (%zu bytes at "
				   "%zu) is "
				   "not inside its %zu bytes",
				   len, off, rlen);
			break;
		}
		r = entries(c, rel, rsp + off, len, l);
	}
	begin(c);
	if (add_close(c, fid, false) && !c->broken)
		rpc(c, NULL, NULL, NULL);
	return r;
}

/* ---- the pipeline: compounds in flight, answers matched by message id ---- */

/* A whole file is on the server: count it and tell the caller (who may ask to stop). */
static void written(struct pv_smb2 *c, size_t item, bool fix)
{
	uint64_t size = c->items[item].size;

	if (fix)
		c->res->files_fixed++;
	else
		c->res->files_made++;
	c->res->bytes += size;
	if (c->tick && c->tick(c->tick_ctx, 1, size) != 0 && c->err == PV_OK)
		c->err = pv_error(PV_EFAIL, "stopped");
}

static void complete(struct pv_smb2 *c, struct pend *p)
{
	const struct pv_smb_item *it = &c->items[p->item];

	if (p->kind == P_DIR) {
		if (p->status == ST_OK)
			c->res->dirs_made++;
		else if (p->status != ST_OBJECT_NAME_COLLISION && c->err == PV_OK)
			c->err = path_fail(c, p->status, "making folder", it->path);
		return;
	}
	if (p->status != ST_OK) {
		if (c->err == PV_OK)
			c->err = path_fail(c, p->status,
					   p->fail_cmd == SMB2_CREATE  ? "creating"
					   : p->fail_cmd == SMB2_WRITE ? "writing"
								       : "closing",
					   it->path);
		if (p->kind == P_FILE && p->created && c->ncuts < WINDOW) {
			struct cut *cut = &c->cuts[c->ncuts++];

			cut->item = p->item;
			cut->open = !p->closed;
			memcpy(cut->fid, p->fid, 16);
		}
		return;
	}
	if (p->kind != P_CHUNK)
		written(c, p->item, p->fix);
}

/* The command answering message k of compound p: CREATE, WRITEs, CLOSE (a file or folder),
 * or only WRITEs (a chunk of a big file). */
static uint16_t expected(const struct pend *p, unsigned k)
{
	if (p->kind == P_CHUNK)
		return SMB2_WRITE;
	return k == 0 ? SMB2_CREATE : k == p->n - 1 ? SMB2_CLOSE : SMB2_WRITE;
}

/* Read one frame and account every answer in it. A final answer to any request in flight
 * moves the deadline for the next one (ANSWER_T timeouts from now). */
static int pump(struct pv_smb2 *c)
{
	struct smb2_hdr h;
	int r;

	if ((r = read_frame(c)) != PV_OK)
		return r;
	for (size_t off = 0, mlen;; off += h.next) {
		const uint8_t *rsp = c->in + off, *b = NULL;
		struct pend *p;
		unsigned i, k;

		if ((r = message(c, off, &h, &mlen)) != PV_OK)
			return r;
		/* skipped: interim answers of requests gone async (the final one follows), and
		 * break notifications (message id all ones; we ask for no oplock or lease) */
		if (interim(&h) || h.mid == UINT64_MAX) {
			if (!h.next)
				break;
			continue;
		}
		for (i = 0; i < c->npend; i++)
			if (h.mid >= c->pend[i].mid0 && h.mid - c->pend[i].mid0 < c->pend[i].n)
				break;
		if (i == c->npend)
			return broken(
				c, PV_EREMOTE,
				"a malformed answer: %s for message %llu, which is not in flight",
				smb2_cmd_name(h.command), (unsigned long long)h.mid);
		p = &c->pend[i];
		k = (unsigned)(h.mid - p->mid0);
		if (p->seen & (1u << k))
			return broken(c, PV_EREMOTE,
				      "a malformed answer: a second one to message %llu",
				      (unsigned long long)h.mid);
		if (h.command != expected(p, k))
			return broken(c, PV_EREMOTE, "a malformed answer: %s answering %s",
				      smb2_cmd_name(h.command), smb2_cmd_name(expected(p, k)));
		p->seen |= 1u << k;
		c->due = now_ms() + ANSWER_T * c->tmo;
		if (h.status != ST_OK && p->status == ST_OK) {
			p->status = h.status;
			p->fail_cmd = h.command;
		}
		if (h.command == SMB2_CREATE && h.status == ST_OK) {
			if ((r = body(c, &h, rsp, mlen, 80, &b)) != PV_OK)
				return r;
			p->created = true;
			memcpy(p->fid, b + 64, 16);
		}
		if (h.command == SMB2_CLOSE && h.status == ST_OK)
			p->closed = true;
		if (++p->got == p->n) {
			complete(c, p);
			c->pend[i] = c->pend[--c->npend];
		}
		if (!h.next)
			break;
	}
	if (c->npend == 0)
		c->due = 0;
	return PV_OK;
}

/* Wait until a compound of n messages can go. */
static int room(struct pv_smb2 *c, unsigned n)
{
	int r;

	while (c->npend == WINDOW || (c->npend > 0 && c->credits < n))
		if ((r = pump(c)) != PV_OK)
			return r;
	if (c->credits < n)
		return broken(c, PV_EREMOTE, "the server grants no credits");
	return PV_OK;
}

static int drain(struct pv_smb2 *c)
{
	int r = PV_OK;

	while (c->npend > 0 && r == PV_OK)
		r = pump(c);
	return r;
}

/* Send the compound built since begin() as one entry of the pipeline. */
static int submit(struct pv_smb2 *c, enum kind kind, size_t item, bool fix, uint64_t mid0)
{
	int r = send_all(c);

	if (r == PV_OK && c->npend == 0)
		c->due = now_ms() + ANSWER_T * c->tmo;
	if (r == PV_OK)
		c->pend[c->npend++] = (struct pend){.mid0 = mid0,
						    .n = (unsigned)(c->mid - mid0),
						    .kind = kind,
						    .item = item,
						    .fix = fix};
	return r;
}

static int fill_writes(struct pv_smb2 *c, const uint8_t fid[16], uint64_t from, uint64_t to,
		       bool related, size_t item, pv_smb_fill_fn fill, void *fill_ctx)
{
	for (uint64_t off = from; off < to;) {
		size_t n = to - off < WRITE_MAX ? (size_t)(to - off) : WRITE_MAX;
		size_t b = add_write(c, fid, off, n, related);

		if (!b)
			return c->add_err;
		fill(fill_ctx, item, off, c->out + b + 48, n);
		off += n;
	}
	return PV_OK;
}

/* A file larger than one compound: CREATE, then WRITEs in flight with its id, then CLOSE. */
static int big_file(struct pv_smb2 *c, size_t item, bool fix, pv_smb_fill_fn fill, void *fill_ctx)
{
	const struct pv_smb_item *it = &c->items[item];
	struct smb2_hdr h;
	uint8_t fid[16];
	int r;

	if ((r = drain(c)) != PV_OK || c->err != PV_OK)
		return r != PV_OK ? r : c->err;
	if ((r = open_wait(c, it->path, FILE_WRITE_DATA | FILE_READ_ATTRIBUTES, FILE_OVERWRITE_IF,
			   FILE_NON_DIRECTORY_FILE, "creating", fid)) != PV_OK)
		return c->err = r;
	for (uint64_t off = 0; off < it->size && c->err == PV_OK;) {
		uint64_t to = it->size - off < COMPOUND_DATA ? it->size : off + COMPOUND_DATA;
		uint64_t mid0 = c->mid;

		if ((r = room(c, (unsigned)((to - off + WRITE_MAX - 1) / WRITE_MAX))) != PV_OK)
			return r;
		begin(c);
		if ((r = fill_writes(c, fid, off, to, false, item, fill, fill_ctx)) != PV_OK ||
		    (r = submit(c, P_CHUNK, item, fix, mid0)) != PV_OK)
			return r;
		off = to;
	}
	if ((r = drain(c)) != PV_OK)
		return r;
	begin(c);
	if (!add_close(c, fid, false))
		return c->add_err;
	if ((r = rpc(c, &h, NULL, NULL)) != PV_OK)
		return r;
	if (c->err == PV_OK && h.status != ST_OK)
		c->err = path_fail(c, h.status, "closing", it->path);
	if (c->err != PV_OK) {
		if (c->ncuts < WINDOW)
			c->cuts[c->ncuts++] = (struct cut){item, false, {0}};
		return c->err;
	}
	written(c, item, fix);
	return c->err;
}

/* Remove the files a failure cut short: close what is still open, delete on close. */
static void remove_cuts(struct pv_smb2 *c)
{
	struct pv_buf name = PV_BUF_INIT;

	for (unsigned i = 0; i < c->ncuts && !c->broken; i++) {
		if (c->cuts[i].open) {
			begin(c);
			if (add_close(c, c->cuts[i].fid, false))
				rpc(c, NULL, NULL, NULL);
		}
		if (name_of(c, c->items[c->cuts[i].item].path, &name) != PV_OK)
			continue;
		begin(c);
		if (add_create(c, &name, DELETE_ACCESS | FILE_READ_ATTRIBUTES, FILE_OPEN,
			       FILE_NON_DIRECTORY_FILE | FILE_DELETE_ON_CLOSE, false) &&
		    add_close(c, RELATED_FID, true))
			rpc(c, NULL, NULL, NULL); /* waits for the CLOSE's answer */
	}
	pv_buf_release(&name, 0);
	c->ncuts = 0;
}

/* How long a build of items may take (smb.h): T x (BUILD_T + items + MiB written), kept far
 * from overflowing (a day's worth per item would not be reached by any fileset). */
static int64_t build_budget(int64_t tmo, const struct pv_smb_item *items, size_t n)
{
	const int64_t cap = INT64_MAX / 4;
	int64_t units = BUILD_T;

	for (size_t i = 0; i < n && units < cap / tmo; i++)
		units += 1 + (int64_t)(items[i].dir ? 0 : (items[i].size + MIB - 1) / MIB);
	return units < cap / tmo ? units * tmo : cap;
}

int pv_smb2_tree_build(struct pv_smb2 *c, const char *workgroup, const char *user,
		       const struct pv_secret *password, const char *share, const char *base,
		       const struct pv_smb_item *items, size_t n, bool fresh, pv_smb_fill_fn fill,
		       void *fill_ctx, pv_smb_tick_fn tick, void *tick_ctx,
		       struct pv_smb_tree_result *res)
{
	struct listing l = {0};
	struct pv_buf name = PV_BUF_INIT;
	char keep[1024] = "";
	int r;

	memset(res, 0, sizeof(*res));
	if (c->broken)
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", c->server);
	c->build_ms = build_budget(c->tmo, items, n);
	c->build_due = now_ms() + c->build_ms;
	c->user = user;
	c->share = share;
	c->base = base;
	c->items = items;
	c->res = res;
	c->tick = tick;
	c->tick_ctx = tick_ctx;
	c->err = PV_OK;
	c->ncuts = 0;
	if ((r = logon(c, workgroup, user, password)) != PV_OK ||
	    (r = tree_connect(c, share)) != PV_OK)
		goto out;
	if (!fresh) {
		if ((r = listing_walk(&l, list_dir, c)) != PV_OK)
			goto out;
	}
	for (size_t i = 0; i < n && r == PV_OK && c->err == PV_OK; i++) {
		const struct pv_smb_item *it = &items[i];
		enum plan p = listing_plan(&l, it, c->server, share, base);
		unsigned writes;
		uint64_t mid0;

		if (p == PLAN_MISMATCH) {
			c->err = PV_EREMOTE;
			break;
		}
		if (p == PLAN_KEEP) {
			if (!it->dir)
				res->files_ok++;
			continue;
		}
		if (!it->dir && it->size > COMPOUND_DATA) {
			r = big_file(c, i, p == PLAN_FIX, fill, fill_ctx);
			continue;
		}
		if ((r = name_of(c, it->path, &name)) != PV_OK)
			break;
		writes = it->dir ? 0 : (unsigned)((it->size + WRITE_MAX - 1) / WRITE_MAX);
		if ((r = room(c, writes + 2)) != PV_OK)
			break;
		mid0 = c->mid;
		begin(c);
		if (!(it->dir ? add_create(c, &name, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES,
					   FILE_CREATE, FILE_DIRECTORY_FILE, false)
			      : add_create(c, &name, FILE_WRITE_DATA | FILE_READ_ATTRIBUTES,
					   FILE_OVERWRITE_IF, FILE_NON_DIRECTORY_FILE, false)) ||
		    (!it->dir && (r = fill_writes(c, RELATED_FID, 0, it->size, true, i, fill,
						  fill_ctx)) != PV_OK) ||
		    !add_close(c, RELATED_FID, true)) {
			r = r != PV_OK ? r : c->add_err;
			break;
		}
		r = submit(c, it->dir ? P_DIR : P_FILE, i, p == PLAN_FIX, mid0);
	}
	if (r != PV_OK || (r = drain(c)) != PV_OK || (r = c->err) != PV_OK)
		snprintf(keep, sizeof(keep), "%s", pv_errmsg()); /* the first failure's words */
	drain(c);
	remove_cuts(c);
out:
	if (r != PV_OK && !*keep)
		snprintf(keep, sizeof(keep), "%s", pv_errmsg());
	logoff(c);
	if (r == PV_OK && c->forged) { /* the LOGOFF's answer failed its signature check */
		r = PV_EREMOTE;
		snprintf(keep, sizeof(keep), "%s", pv_errmsg());
	}
	if (r != PV_OK) /* what the clean-up above recorded must not replace the message */
		pv_error(r, "%s", keep);
	c->build_due = 0;
	listing_release(&l);
	pv_buf_release(&name, 0);
	return r;
}
