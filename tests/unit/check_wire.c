/* tests/unit/check_wire.c: smb/wire.c, our SMB2 client, against a fake server: a thread on
 * the other end of a socketpair(2) that reads the client's requests and answers them from a
 * small file system of its own (MS-SMB2 answers, an NTLMv2 check of the logon), unless a
 * test's hook changes, cuts, delays or replaces the answer. The valid flows build and list
 * trees; the malformed ones (short frames, bad NetBIOS lengths, offsets outside the frame,
 * cut compounds, endless keep-alives and STATUS_PENDING, a 64 KiB NTLM target info, paths
 * over the limit) must each end in a clear error, never a crash (ASan, UBSan).
 *
 * The fake can require signing (as Samba's `server signing = mandatory`): it computes the
 * session key from the AUTHENTICATE and the password it knows, checks the signature of every
 * request after the logon with its own code (the KDF input spelled out, the MACs of
 * util/digest, not smb/smb2.c's signing), refuses a request that is not signed right, and
 * signs its answers; hooks then change what it signed.
 *
 * With PV_SMB2_CORPUS=<folder> set, the plan of tests/fuzz/smb2_plan.h is run against the
 * fake server, as is and under each fault, and what the server sent is written there: the
 * seed corpus of tests/fuzz/fuzz_smb2.c. */
#include <check.h>

#include "tests/unit/unit.h"
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "smb/internal.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "tests/fuzz/smb2_plan.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/err.h"
#include "util/secret.h"
#include "util/utf16.h"

#define T_MS 200 /* the client's timeout in these tests: deadlines of 600 ms (3T) */

/* ---- the fake server ---- */

#define NODES	256
#define HANDLES 64

struct node {
	char *path; /* share-relative, '/'-separated; NULL: a free slot */
	bool dir;
	uint64_t size;
};

struct handle {
	int node; /* -1: free */
	bool listed, delete_on_close;
};

/* What the fake does about signing: nothing (as before signing was written: these answers
 * are the seed corpus's), sign the final SESSION_SETUP answer of a logon and nothing more
 * (Samba when signing is not required: it signs that answer for every logon that is not a
 * guest's), or require signing (SecurityMode SIGNING_REQUIRED; every request after the logon
 * must be signed right, and every answer is signed). */
enum { SIGN_NONE, SIGN_SETUP, SIGN_REQUIRED };

/* The request a frame starts with, for hooks to choose on. */
struct req {
	uint16_t cmd;
	uint64_t mid;
};

struct fake;
/* Called with each answer frame before it goes (reply: the SMB2 messages, no NetBIOS
 * header): change it and return SEND, or send what you like with the helpers and return
 * DONE, or HANGUP to close the connection. */
enum act { SEND, DONE, HANGUP };
typedef enum act (*hook_fn)(struct fake *f, const struct req *q, struct pv_buf *reply);

struct fake {
	int fd;
	pthread_t thread;
	hook_fn hook;
	long arg;	    /* for the hook */
	unsigned hooked;    /* frames the hook has seen */
	unsigned done;	    /* for hooks that act once */
	size_t target_info; /* bytes of NTLM target info in the challenge (0: a small one) */
	uint16_t dialect;   /* chosen in NEGOTIATE (0: 3.0.2) */
	int signing;	    /* SIGN_NONE, SIGN_SETUP or SIGN_REQUIRED (below) */
	bool keyed;	    /* key is the signing key of the session logged on */
	uint8_t key[16];
	unsigned signed_ok, sig_bad, unsigned_reqs; /* requests after the logon, when required */
	uint8_t schal[8];
	struct node fs[NODES];
	struct handle h[HANDLES];
	unsigned cmds[16]; /* requests seen, by command */
	unsigned logons_ok, logons_bad;
	FILE *capture; /* every byte sent, for the corpus */
};

static void put16(uint8_t *p, uint16_t v)
{
	smb2_put16(p, v);
}

static void put32(uint8_t *p, uint32_t v)
{
	smb2_put32(p, v);
}

static void send_raw(struct fake *f, const void *p, size_t n)
{
	const uint8_t *b = p;

	if (f->capture)
		fwrite(p, 1, n, f->capture);
	while (n > 0) {
		ssize_t w = send(f->fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the client is gone */
		b += w;
		n -= (size_t)w;
	}
}

/* A frame: NetBIOS session message header (type 0, 24-bit length) and the messages. */
static void send_frame(struct fake *f, const void *p, size_t n)
{
	uint8_t h[4] = {0, (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};

	send_raw(f, h, 4);
	send_raw(f, p, n);
}

static void keepalive(struct fake *f)
{
	send_raw(f, "\x85\0\0\0", 4);
}

/* An interim answer to mid: async, STATUS_PENDING (MS-SMB2 3.3.4.2); with flags
 * SMB2_FLAGS_SIGNED too, a signature field of 0xaa bytes (a server may flag an interim
 * answer to a signed request so; MS-SMB2 3.2.5.1.3 checks no interim answer). */
static void interim_flagged(struct fake *f, uint16_t cmd, uint64_t mid, uint32_t flags)
{
	uint8_t m[SMB2_HDR + 9] = {0};
	struct smb2_hdr h = {0, cmd, 1,	  ST_PENDING, SMB2_FLAGS_RESPONSE | SMB2_FLAGS_ASYNC,
			     0, 0,   mid, 0x1122};

	h.flags |= flags;
	smb2_hdr_put(m, &h);
	smb2_put64(m + 32, 0x77); /* AsyncId */
	if (flags & SMB2_FLAGS_SIGNED)
		memset(m + 48, 0xaa, 16);
	put16(m + SMB2_HDR, 9);
	send_frame(f, m, sizeof(m));
}

static void interim(struct fake *f, uint16_t cmd, uint64_t mid)
{
	interim_flagged(f, cmd, mid, 0);
}

/* Whether the client has closed its end, waiting up to ms for it; what it sends meanwhile
 * is read and dropped (it may still be sending compounds). */
static bool client_gone(struct fake *f, int ms)
{
	for (int waited = 0; waited <= ms; waited += 10) {
		struct pollfd p = {f->fd, POLLIN, 0};
		uint8_t junk[4096];
		ssize_t n;

		if (poll(&p, 1, 10) < 0)
			return true;
		while ((n = recv(f->fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
			;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return true;
	}
	return false;
}

/* Hold a request: keep-alives (or interim answers to mid when cmd is set) every 20 ms until
 * the client gives up and closes, 10 s at most. */
static void stall(struct fake *f, uint16_t cmd, uint64_t mid)
{
	for (int i = 0; i < 500 && !client_gone(f, 20); i++) {
		if (cmd)
			interim(f, cmd, mid);
		else
			keepalive(f);
	}
}

static struct node *lookup(struct fake *f, const char *path)
{
	for (int i = 0; i < NODES; i++)
		if (f->fs[i].path && strcmp(f->fs[i].path, path) == 0)
			return &f->fs[i];
	return NULL;
}

static struct node *mknode(struct fake *f, const char *path, bool dir, uint64_t size)
{
	for (int i = 0; i < NODES; i++)
		if (!f->fs[i].path) {
			f->fs[i] = (struct node){strdup(path), dir, size};
			return &f->fs[i];
		}
	return NULL;
}

/* Start a message in out: a response header for (cmd, mid); returns its offset. */
static size_t msg(struct pv_buf *out, uint16_t cmd, uint64_t mid, uint32_t status, uint32_t tree)
{
	struct smb2_hdr h = {0, cmd, 64, status, SMB2_FLAGS_RESPONSE, 0, tree, mid, 0x1122};
	size_t at;

	while (out->len % 8) /* a compound's messages start 8-byte aligned (MS-SMB2 3.3.4.1.3) */
		pv_buf_add(out, "", 1);
	at = out->len;
	pv_buf_reserve(out, SMB2_HDR);
	smb2_hdr_put((uint8_t *)out->data + at, &h);
	out->len += SMB2_HDR;
	return at;
}

static uint8_t *grow(struct pv_buf *out, size_t n)
{
	size_t at = out->len;

	pv_buf_reserve(out, n);
	memset(out->data + at, 0, n);
	out->len += n;
	return (uint8_t *)out->data + at;
}

/* The error response (MS-SMB2 2.2.2): StructureSize 9, no data. */
static void error_body(struct pv_buf *out)
{
	put16(grow(out, 9), 9);
}

/* DER tag and length. */
static void der(struct pv_buf *b, uint8_t tag, size_t len)
{
	uint8_t h[5] = {tag};
	size_t n = 1;

	if (len < 0x80)
		h[n++] = (uint8_t)len;
	else if (len < 0x100)
		h[n++] = 0x81, h[n++] = (uint8_t)len;
	else
		h[n++] = 0x82, h[n++] = (uint8_t)(len >> 8), h[n++] = (uint8_t)len;
	pv_buf_add(b, h, n);
}

static size_t dersz(size_t len)
{
	return 1 + (len < 0x80 ? 1 : len < 0x100 ? 2 : 3) + len;
}

/* The NTLM CHALLENGE (MS-NLMP 2.2.1.2) in a SPNEGO NegTokenResp, with a target info of
 * NbDomainName LAB, a timestamp and, to reach f->target_info bytes, a pair of an id nobody
 * knows. */
static void challenge(struct fake *f, struct pv_buf *out)
{
	struct pv_buf m = PV_BUF_INIT, ti = PV_BUF_INIT;
	uint8_t head[48] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2};
	static const uint8_t dom[] = {2, 0, 6, 0, 'L', 0, 'A', 0, 'B', 0};
	static const uint8_t ts[] = {7, 0, 8, 0, 0, 0x80, 0x3e, 0xd5, 0xde, 0xb1, 0x9d, 0x01};
	size_t inner;

	pv_buf_add(&ti, dom, sizeof(dom));
	pv_buf_add(&ti, ts, sizeof(ts));
	if (f->target_info > ti.len + 8) {
		size_t pad = f->target_info - ti.len - 8;
		uint8_t h[4] = {0x55, 0, (uint8_t)pad, (uint8_t)(pad >> 8)};

		pv_buf_add(&ti, h, 4);
		memset(grow(&ti, pad), 'x', pad);
	}
	pv_buf_add(&ti, "\0\0\0\0", 4); /* MsvAvEOL */
	put32(head + 12 + 4, 48);	/* TargetName: empty */
	put32(head + 20, 0xe2898215u);
	memcpy(head + 24, f->schal, 8);
	put16(head + 40, (uint16_t)ti.len);
	put16(head + 42, (uint16_t)ti.len);
	put32(head + 44, 48);
	pv_buf_add(&m, head, sizeof(head));
	pv_buf_add(&m, ti.data, ti.len);
	/* [1] SEQUENCE { negState [0] ENUMERATED accept-incomplete, responseToken [2] } */
	inner = 5 + dersz(dersz(m.len));
	der(out, 0xa1, dersz(inner));
	der(out, 0x30, inner);
	pv_buf_add(out, "\xa0\x03\x0a\x01\x01", 5);
	der(out, 0xa2, dersz(m.len));
	der(out, 0x04, m.len);
	pv_buf_add(out, m.data, m.len);
	pv_buf_release(&m, 0);
	pv_buf_release(&ti, 0);
}

static uint16_t dialect_of(const struct fake *f)
{
	return f->dialect ? f->dialect : 0x0302;
}

/* The fake's signing key from the session key (MS-SMB2 3.1.4.2 as written: for 3.x,
 * HMAC-SHA256(key, [1]_32 "SMB2AESCMAC\0" 0x00 "SmbSign\0" [128]_32), its first 16 bytes). */
static void fake_key(struct fake *f, const uint8_t session_key[16])
{
	/* [i]_32, "SMB2AESCMAC\0", the 0x00 separator, "SmbSign\0", [L]_32 */
	static const uint8_t in[] = "\0\0\0\1"
				    "SMB2AESCMAC\0"
				    "\0"
				    "SmbSign\0"
				    "\0\0\0\x80";
	uint8_t h[32];

	if (dialect_of(f) >= 0x0300) {
		pv_hmac_sha256(session_key, 16, in, sizeof(in) - 1, h); /* not the literal's NUL */
		memcpy(f->key, h, 16);
	} else {
		memcpy(f->key, session_key, 16);
	}
	f->keyed = true;
}

/* The signature of the message m (n bytes) under the fake's key, its signature field taken
 * as zero (MS-SMB2 3.1.4.1). */
static void fake_mac(const struct fake *f, const uint8_t *m, size_t n, uint8_t sig[16])
{
	uint8_t *z = malloc(n), h[32];

	ck_assert_ptr_nonnull(z);
	memcpy(z, m, n);
	memset(z + 48, 0, 16);
	if (dialect_of(f) >= 0x0300) {
		pv_aes_cmac128(f->key, z, n, sig);
	} else {
		pv_hmac_sha256(f->key, 16, z, n, h);
		memcpy(sig, h, 16);
	}
	free(z);
}

/* Check an AUTHENTICATE (MS-NLMP 2.2.1.3) as a server would: every field inside the
 * message, the NTLMv2 proof right for LAB\u1 and the plan's password (MS-NLMP 3.3.2). A
 * right one gives the session its key: SessionBaseKey = HMAC_MD5(ResponseKeyNT, NTProofStr),
 * the key without KEY_EXCH. */
static bool authenticate_ok(struct fake *f, const uint8_t *m, size_t n)
{
	uint8_t key[16], proof[16], base[16];
	size_t off[6], len[6];
	struct pv_buf t = PV_BUF_INIT;
	bool ok;

	if (n < 64 || smb2_get32(m + 8) != 3)
		return false;
	for (int i = 0; i < 6; i++) {
		len[i] = smb2_get16(m + 12 + 8 * i);
		off[i] = smb2_get32(m + 16 + 8 * i);
		if (off[i] > n || len[i] > n - off[i])
			return false;
	}
	if (len[1] < 16 + 28 ||
	    pv_ntowfv2(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD), "u1", "LAB", key) < 0)
		return false;
	pv_buf_add(&t, f->schal, 8);
	pv_buf_add(&t, m + off[1] + 16, len[1] - 16);
	pv_hmac_md5(key, 16, t.data, t.len, proof);
	ok = memcmp(proof, m + off[1], 16) == 0;
	pv_buf_release(&t, 0);
	if (ok && len[5] == 0 && !(smb2_get32(m + 60) & 0x40000000u)) {
		pv_hmac_md5(key, 16, proof, 16, base);
		fake_key(f, base);
	}
	return ok;
}

static void session_setup(struct fake *f, const uint8_t *q, size_t qlen, uint64_t mid,
			  struct pv_buf *out)
{
	size_t off = qlen >= SMB2_HDR + 24 ? smb2_get16(q + SMB2_HDR + 12) : 0;
	size_t len = qlen >= SMB2_HDR + 24 ? smb2_get16(q + SMB2_HDR + 14) : 0;
	const uint8_t *tok = off <= qlen && len <= qlen - off ? q + off : NULL;
	const uint8_t *ntlm = tok ? memmem(tok, len, "NTLMSSP", 8) : NULL;
	size_t at;

	if (ntlm && ntlm[8] == 1) {
		struct pv_buf c = PV_BUF_INIT;

		f->keyed = false; /* a new logon */
		uint8_t *b;

		challenge(f, &c);
		at = msg(out, SMB2_SESSION_SETUP, mid, ST_MORE_PROCESSING, 0);
		b = grow(out, 8);
		put16(b, 9);
		put16(b + 4, SMB2_HDR + 8);
		put16(b + 6, (uint16_t)c.len);
		pv_buf_add(out, c.data, c.len);
		pv_buf_release(&c, 0);
		(void)at;
		return;
	}
	if (ntlm && authenticate_ok(f, ntlm, len - (size_t)(ntlm - tok))) {
		f->logons_ok++;
		msg(out, SMB2_SESSION_SETUP, mid, ST_OK, 0);
		put16(grow(out, 9), 9);
		return;
	}
	f->logons_bad++;
	msg(out, SMB2_SESSION_SETUP, mid, ST_LOGON_FAILURE, 0);
	error_body(out);
}

/* The UTF-8 path a CREATE names (backslashes to slashes). */
static bool create_path(const uint8_t *q, size_t qlen, char *path, size_t cap)
{
	size_t off = smb2_get16(q + SMB2_HDR + 44), len = smb2_get16(q + SMB2_HDR + 46);

	if (off > qlen || len > qlen - off || pv_utf16le_to_utf8(q + off, len, path, cap) < 0)
		return false;
	for (char *p = path; *p; p++)
		if (*p == '\\')
			*p = '/';
	return true;
}

static int open_handle(struct fake *f, struct node *n, bool doc)
{
	for (int i = 0; i < HANDLES; i++)
		if (f->h[i].node < 0) {
			f->h[i] = (struct handle){(int)(n - f->fs), false, doc};
			return i;
		}
	return -1;
}

static struct handle *handle_of(struct fake *f, const uint8_t fid[16], int related)
{
	uint64_t id = smb2_get64(fid);
	int i = id == UINT64_MAX ? related : (int)id - 1;

	return i >= 0 && i < HANDLES && f->h[i].node >= 0 ? &f->h[i] : NULL;
}

static uint32_t create(struct fake *f, const uint8_t *q, size_t qlen, int *hid)
{
	char path[2048], parent[2048], *slash;
	uint32_t disp = smb2_get32(q + SMB2_HDR + 36), opts = smb2_get32(q + SMB2_HDR + 40);
	bool want_dir = opts & 0x1, want_file = opts & 0x40;
	struct node *n, *p;

	if (!create_path(q, qlen, path, sizeof(path)))
		return 0xC0000033u; /* OBJECT_NAME_INVALID */
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = 0;
		if (!(p = lookup(f, parent)) || !p->dir)
			return 0xC000003Au; /* OBJECT_PATH_NOT_FOUND */
	}
	n = *path ? lookup(f, path) : NULL;
	if (n && disp == 2)
		return ST_OBJECT_NAME_COLLISION;
	if (!n && *path && disp == 1)
		return 0xC0000034u; /* OBJECT_NAME_NOT_FOUND */
	if (n && n->dir && want_file)
		return 0xC00000BAu; /* FILE_IS_A_DIRECTORY */
	if (n && !n->dir && want_dir)
		return 0xC0000103u;	    /* NOT_A_DIRECTORY */
	if (!*path && !(n = lookup(f, ""))) /* the share's root */
		n = mknode(f, "", true, 0);
	if (!n && !(n = mknode(f, path, want_dir, 0)))
		return 0xC000009Au; /* INSUFFICIENT_RESOURCES */
	if (disp == 5)
		n->size = 0;
	if ((*hid = open_handle(f, n, opts & 0x1000)) < 0)
		return 0xC000009Au;
	return ST_OK;
}

/* FileDirectoryInformation entries (MS-FSCC 2.4.10) of what folder n holds. */
static void entries(struct fake *f, const struct node *n, struct pv_buf *out)
{
	size_t pl = strlen(n->path), last = SIZE_MAX;
	const char *dots[2] = {".", ".."};

	for (int i = -2; i < NODES; i++) {
		const char *name;
		struct pv_buf u = PV_BUF_INIT;
		bool dir = true;
		uint64_t size = 0;
		uint8_t *e;

		if (i < 0) {
			name = dots[i + 2];
		} else {
			const struct node *c = &f->fs[i];

			if (!c->path || !*c->path ||
			    (pl && (strncmp(c->path, n->path, pl) != 0 || c->path[pl] != '/')))
				continue;
			name = c->path + (pl ? pl + 1 : 0);
			if (strchr(name, '/'))
				continue;
			dir = c->dir;
			size = c->size;
		}
		pv_utf16le(&u, name, strlen(name), 0);
		while (out->len % 8)
			pv_buf_add(out, "", 1);
		if (last != SIZE_MAX)
			put32((uint8_t *)out->data + last, (uint32_t)(out->len - last));
		last = out->len;
		e = grow(out, 64);
		smb2_put64(e + 40, size);
		smb2_put64(e + 48, size);
		put32(e + 56, dir ? 0x10 : 0x80);
		put32(e + 60, (uint32_t)u.len);
		pv_buf_add(out, u.data, u.len);
		pv_buf_release(&u, 0);
	}
}

/* One request message: its answer appended to out. related: the handle a related request
 * means; rstatus: the status of the previous message of the compound, which a related one
 * fails with (MS-SMB2 3.3.5.2.7.2). */
static void answer(struct fake *f, const uint8_t *q, size_t qlen, int *related, uint32_t *rstatus,
		   struct pv_buf *out)
{
	struct smb2_hdr h;
	bool rel;
	uint8_t *b;
	size_t at;

	smb2_hdr_get(q, qlen, &h); /* a request: the same layout */
	h.mid = smb2_get64(q + 24);
	rel = h.flags & SMB2_FLAGS_RELATED;
	if (h.command < 16)
		f->cmds[h.command]++;
	if (rel && *rstatus != ST_OK) {
		msg(out, h.command, h.mid, *rstatus, 7);
		error_body(out);
		return;
	}
	switch (h.command) {
	case SMB2_NEGOTIATE:
		msg(out, SMB2_NEGOTIATE, h.mid, ST_OK, 0);
		b = grow(out, 64 + 8);
		put16(b, 65);
		put16(b + 2, f->signing == SIGN_REQUIRED ? 3 : 1); /* signing enabled, required */
		put16(b + 4, dialect_of(f));
		put32(b + 24, 0x4); /* large MTU: multi-credit */
		put32(b + 28, 1 << 23);
		put32(b + 32, 1 << 23);
		put32(b + 36, 1 << 23);
		return;
	case SMB2_SESSION_SETUP:
		session_setup(f, q, qlen, h.mid, out);
		return;
	case SMB2_LOGOFF:
		msg(out, SMB2_LOGOFF, h.mid, ST_OK, 0);
		put16(grow(out, 4), 4);
		return;
	case SMB2_TREE_CONNECT:
		msg(out, SMB2_TREE_CONNECT, h.mid, ST_OK, 7);
		b = grow(out, 16);
		put16(b, 16);
		b[2] = 1; /* disk */
		put32(b + 12, 0x1f01ff);
		return;
	case SMB2_CREATE: {
		int hid = -1;
		uint32_t st = create(f, q, qlen, &hid);

		*rstatus = st;
		at = msg(out, SMB2_CREATE, h.mid, st, 7);
		if (st != ST_OK) {
			error_body(out);
			return;
		}
		*related = hid;
		b = grow(out, 88 + 1);
		put16(b, 89);
		smb2_put64(b + 48, f->fs[f->h[hid].node].size);
		put32(b + 56, f->fs[f->h[hid].node].dir ? 0x10 : 0x80);
		smb2_put64(b + 64, (uint64_t)hid + 1);
		smb2_put64(b + 72, 0xabcdef);
		(void)at;
		return;
	}
	case SMB2_WRITE: {
		struct handle *hd = handle_of(f, q + SMB2_HDR + 16, *related);
		uint32_t len = smb2_get32(q + SMB2_HDR + 4);
		uint64_t off = smb2_get64(q + SMB2_HDR + 8);

		if (!hd) {
			*rstatus = 0xC0000008u; /* INVALID_HANDLE */
			msg(out, SMB2_WRITE, h.mid, *rstatus, 7);
			error_body(out);
			return;
		}
		if (off + len > f->fs[hd->node].size)
			f->fs[hd->node].size = off + len;
		msg(out, SMB2_WRITE, h.mid, ST_OK, 7);
		b = grow(out, 17);
		put16(b, 17);
		put32(b + 4, len);
		return;
	}
	case SMB2_CLOSE: {
		struct handle *hd = handle_of(f, q + SMB2_HDR + 8, *related);

		if (!hd) {
			msg(out, SMB2_CLOSE, h.mid, 0xC0000008u, 7);
			error_body(out);
			return;
		}
		if (hd->delete_on_close) {
			free(f->fs[hd->node].path);
			f->fs[hd->node].path = NULL;
		}
		hd->node = -1;
		msg(out, SMB2_CLOSE, h.mid, ST_OK, 7);
		put16(grow(out, 60), 60);
		return;
	}
	case SMB2_QUERY_DIRECTORY: {
		struct handle *hd = handle_of(f, q + SMB2_HDR + 8, *related);
		size_t start;

		if (!hd || (hd->listed && !(q[SMB2_HDR + 3] & 1))) {
			msg(out, SMB2_QUERY_DIRECTORY, h.mid, hd ? ST_NO_MORE_FILES : 0xC0000008u,
			    7);
			error_body(out);
			return;
		}
		hd->listed = true;
		at = msg(out, SMB2_QUERY_DIRECTORY, h.mid, ST_OK, 7);
		grow(out, 8);
		start = out->len;
		entries(f, &f->fs[hd->node], out);
		b = (uint8_t *)out->data + at + SMB2_HDR;
		put16(b, 9);
		put16(b + 2, SMB2_HDR + 8);
		put32(b + 4, (uint32_t)(out->len - start));
		return;
	}
	default:
		msg(out, h.command, h.mid, 0xC00000BBu, 0); /* NOT_SUPPORTED */
		error_body(out);
	}
}

static bool read_all(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t got;

		if (poll(&pfd, 1, 10000) <= 0) /* a test never waits longer */
			return false;
		got = recv(fd, p, n, 0);
		if (got <= 0)
			return false;
		p += got;
		n -= (size_t)got;
	}
	return true;
}

/* When signing is required, a request after the logon (NEGOTIATE and SESSION_SETUP are not
 * signed) is counted as signed right, signed wrong or unsigned, and refused unless signed
 * right (true: answer STATUS_ACCESS_DENIED, as Samba does). *sign: sign its answer. */
static bool refused(struct fake *f, const uint8_t *m, size_t n, bool *sign)
{
	uint16_t cmd = smb2_get16(m + 12);
	uint8_t sig[16];

	*sign = false;
	if (f->signing != SIGN_REQUIRED || !f->keyed || cmd == SMB2_NEGOTIATE ||
	    cmd == SMB2_SESSION_SETUP)
		return false;
	if (!(smb2_get32(m + 16) & SMB2_FLAGS_SIGNED)) {
		f->unsigned_reqs++;
		return true;
	}
	fake_mac(f, m, n, sig);
	if (memcmp(sig, m + 48, 16) != 0) {
		f->sig_bad++;
		return true;
	}
	f->signed_ok++;
	*sign = true;
	return false;
}

/* Sign the messages of the answer frame out that sign[] (one per message, n of them) asks
 * for: each over its own bytes, to the next message (padding included) or the end. */
static void sign_answers(const struct fake *f, struct pv_buf *out, const bool *sign, unsigned n)
{
	for (size_t o = 0, i = 0;; i++) {
		uint8_t *m = (uint8_t *)out->data + o;
		uint32_t next = smb2_get32(m + 20);

		if (i < n && sign[i]) {
			put32(m + 16, smb2_get32(m + 16) | SMB2_FLAGS_SIGNED);
			fake_mac(f, m, next ? next : out->len - o, m + 48);
		}
		if (!next)
			break;
		o += next;
	}
}

static void *serve(void *arg)
{
	struct fake *f = arg;
	uint8_t *in = malloc(1 << 21);

	for (;;) {
		uint8_t nb[4];
		size_t len, off = 0;
		struct pv_buf out = PV_BUF_INIT;
		struct req q = {0};
		int related = -1;
		uint32_t rstatus = ST_OK;
		size_t last = SIZE_MAX;
		enum act a = SEND;
		bool sign[64];
		unsigned nmsg = 0;

		if (!in || !read_all(f->fd, nb, 4))
			break;
		len = (size_t)nb[1] << 16 | (size_t)nb[2] << 8 | nb[3];
		if (len < SMB2_HDR || len > (1 << 21) || !read_all(f->fd, in, len))
			break;
		q.cmd = smb2_get16(in + 12);
		q.mid = smb2_get64(in + 24);
		for (;;) { /* each message of the compound */
			uint32_t next = smb2_get32(in + off + 20);
			size_t mlen = next ? next : len - off;

			while (out.len % 8)
				pv_buf_add(&out, "", 1);
			if (last != SIZE_MAX)
				put32((uint8_t *)out.data + last + 20, (uint32_t)(out.len - last));
			last = out.len;
			{
				uint16_t cmd = smb2_get16(in + off + 12);
				unsigned ok_before = f->logons_ok;
				bool sign_it;

				if (refused(f, in + off, mlen, &sign_it)) {
					rstatus = ST_ACCESS_DENIED;
					msg(&out, cmd, smb2_get64(in + off + 24), rstatus, 0);
					error_body(&out);
				} else {
					answer(f, in + off, mlen, &related, &rstatus, &out);
				}
				/* the end of a logon: signed unless the fake signs nothing */
				if (cmd == SMB2_SESSION_SETUP && f->logons_ok > ok_before &&
				    f->keyed && f->signing != SIGN_NONE)
					sign_it = true;
				if (nmsg < 64)
					sign[nmsg++] = sign_it;
			}
			if (!next || next > len - off - SMB2_HDR)
				break;
			off += next;
		}
		sign_answers(f, &out, sign, nmsg);
		if (f->hook) {
			a = f->hook(f, &q, &out);
			f->hooked++;
		}
		if (a == SEND)
			send_frame(f, out.data, out.len);
		pv_buf_release(&out, 0);
		if (a == HANGUP)
			break;
	}
	free(in);
	shutdown(f->fd, SHUT_RDWR);
	return NULL;
}

/* A fake server holding the folder u1 of share fsroot1; returns the client's fd. */
static int fake_start(struct fake *f, hook_fn hook, long arg)
{
	int sv[2];

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < HANDLES; i++)
		f->h[i].node = -1;
	f->hook = hook;
	f->arg = arg;
	memcpy(f->schal, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8);
	mknode(f, "u1", true, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->fd = sv[1];
	return sv[0];
}

static void fake_run(struct fake *f)
{
	ck_assert_int_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

/* After the client is freed (its end closed). */
static void fake_stop(struct fake *f)
{
	pthread_join(f->thread, NULL);
	close(f->fd);
	for (int i = 0; i < NODES; i++)
		free(f->fs[i].path);
	if (f->capture)
		fclose(f->capture);
}

/* ---- the client's side ---- */

static void fill(void *ctx, size_t item, uint64_t offset, void *buf, size_t len)
{
	(void)ctx;
	memset(buf, (int)('a' + (item + offset) % 26), len);
}

struct run {
	int r;
	char msg[1024];
	bool lost, unsupported;
	struct pv_smb_tree_result res;
};

/* Connect over fd, build items under u1 (fresh or listed first) as LAB\u1, free. */
static struct run build(int fd, const struct pv_smb_item *items, size_t n, bool fresh)
{
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
	struct pv_smb2 *c = NULL;
	struct run out = {0};

	pv_error_clear();
	out.r = smb2_connect_fd(fd, "fake", T_MS, &c);
	if (out.r == PV_OK)
		out.r = pv_smb2_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", items, n, fresh,
					   fill, NULL, NULL, NULL, &out.res);
	snprintf(out.msg, sizeof(out.msg), "%s", pv_errmsg());
	out.lost = pv_smb2_lost(c);
	out.unsupported = pv_smb2_unsupported(c);
	pv_smb2_free(c);
	pv_secret_free(pw);
	return out;
}

static const struct pv_smb_item ITEMS[] = {
	{"d", true, 0},		{"d/a", false, 100},
	{"b", false, 70000},	/* two WRITEs in the compound */
	{"big", false, 300000}, /* more than one compound: CREATE, chunks, CLOSE */
	{"e", false, 0},
};
#define NITEMS (sizeof(ITEMS) / sizeof(ITEMS[0]))

/* Run ITEMS against a fake server with hook; the outcome. */
static struct run with(hook_fn hook, long arg, bool fresh, struct fake *f)
{
	int fd = fake_start(f, hook, arg);
	struct run out;

	fake_run(f);
	out = build(fd, ITEMS, NITEMS, fresh);
	fake_stop(f);
	return out;
}

#define ck_assert_failed(run, code, words)                                                         \
	do {                                                                                       \
		ck_assert_msg((run).r == (code), "code %d, not %d: '%s'", (run).r, (code),         \
			      (run).msg);                                                          \
		ck_assert_msg(strstr((run).msg, (words)) != NULL, "message '%s' lacks '%s'",       \
			      (run).msg, (words));                                                 \
	} while (0)

/* ---- valid flows ---- */

START_TEST(test_build_and_list)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct run a, b, c;
	struct pv_smb2 *conn = NULL;
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));

	fake_run(&f);
	/* three builds over one connection: fresh, listed (all there), listed (one fixed) */
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
	a.r = pv_smb2_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS, true, fill,
				 NULL, NULL, NULL, &a.res);
	ck_assert_msg(a.r == PV_OK, "%s", pv_errmsg());
	ck_assert_uint_eq(a.res.dirs_made, 1);
	ck_assert_uint_eq(a.res.files_made, 4);
	ck_assert_uint_eq(a.res.bytes, 100 + 70000 + 300000);
	ck_assert_ptr_nonnull(lookup(&f, "u1/d"));
	ck_assert_uint_eq(lookup(&f, "u1/d/a")->size, 100);
	ck_assert_uint_eq(lookup(&f, "u1/b")->size, 70000);
	ck_assert_uint_eq(lookup(&f, "u1/big")->size, 300000);
	ck_assert_uint_eq(lookup(&f, "u1/e")->size, 0);
	b.r = pv_smb2_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS, false, fill,
				 NULL, NULL, NULL, &b.res);
	ck_assert_msg(b.r == PV_OK, "%s", pv_errmsg());
	ck_assert_uint_eq(b.res.files_ok, 4);
	ck_assert_uint_eq(b.res.files_made + b.res.dirs_made, 0);
	ck_assert_uint_eq(f.cmds[SMB2_QUERY_DIRECTORY], 4); /* u1 and u1/d, each to the end */
	lookup(&f, "u1/b")->size = 5;
	c.r = pv_smb2_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS, false, fill,
				 NULL, NULL, NULL, &c.res);
	ck_assert_msg(c.r == PV_OK, "%s", pv_errmsg());
	ck_assert_uint_eq(c.res.files_fixed, 1);
	ck_assert_uint_eq(lookup(&f, "u1/b")->size, 70000);
	ck_assert_uint_eq(f.logons_ok, 3);
	ck_assert_uint_eq(f.cmds[SMB2_LOGOFF], 3);
	ck_assert(!pv_smb2_lost(conn));
	pv_smb2_free(conn);
	pv_secret_free(pw);
	fake_stop(&f);
}
END_TEST

/* Answers to CREATE compounds go async first: an interim STATUS_PENDING, then the final. */
static enum act pending_once(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd == SMB2_CREATE || q->cmd == SMB2_SESSION_SETUP)
		interim(f, q->cmd, q->mid);
	return SEND;
}

/* Each message of a compound answer in a frame of its own (MS-SMB2 3.3.4.1.3 allows it),
 * and keep-alives between them. */
static enum act split(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	size_t off = 0;

	(void)q;
	for (;;) {
		uint32_t next = smb2_get32((uint8_t *)reply->data + off + 20);
		size_t n = next ? next : reply->len - off;

		put32((uint8_t *)reply->data + off + 20, 0);
		keepalive(f);
		send_frame(f, reply->data + off, n);
		if (!next)
			break;
		off += next;
	}
	return DONE;
}

START_TEST(test_interim_and_split)
{
	struct fake f;
	struct run r = with(pending_once, 0, true, &f);

	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(r.res.files_made, 4);
	r = with(split, 0, true, &f);
	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(r.res.files_made, 4);
	ck_assert_uint_eq(r.res.dirs_made, 1);
}
END_TEST

/* A wrong password: NT_STATUS_LOGON_FAILURE is a credentials error, the connection lives. */
START_TEST(test_logon_refused)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct pv_secret *pw = pv_secret_new("wrong", 5);
	struct pv_smb2 *c = NULL;
	struct pv_smb_tree_result res;

	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &c), PV_OK);
	ck_assert_int_eq(pv_smb2_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS,
					    true, fill, NULL, NULL, NULL, &res),
			 PV_ECRED);
	ck_assert_str_eq(pv_errmsg(), "SMB logon as LAB\\u1 on 'fake' refused "
				      "(NT_STATUS_LOGON_FAILURE)");
	ck_assert(!pv_smb2_lost(c));
	ck_assert_uint_eq(f.logons_bad, 1);
	pv_smb2_free(c);
	pv_secret_free(pw);
	fake_stop(&f);
}
END_TEST

/* ---- signing ---- */

/* Interim answers before final ones: unsigned for SESSION_SETUP, flagged as signed with a
 * signature that is none for the others (neither is checked). */
static enum act pending_signed(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd == SMB2_SESSION_SETUP)
		interim(f, q->cmd, q->mid);
	else if (q->cmd == SMB2_CREATE || q->cmd == SMB2_TREE_CONNECT ||
		 q->cmd == SMB2_QUERY_DIRECTORY)
		interim_flagged(f, q->cmd, q->mid, SMB2_FLAGS_SIGNED);
	return SEND;
}

/* Requests the fake saw after logons: all but NEGOTIATE and SESSION_SETUP. */
static unsigned after_logon(const struct fake *f)
{
	unsigned n = 0;

	for (int i = 2; i < 16; i++)
		n += f->cmds[i];
	return n;
}

/* Over every dialect offered, with signing required: three builds on one connection (fresh,
 * listed, one file fixed), each request signed right (the fake checks each one, each
 * message of a compound on its own), every answer signed and checked, interim answers
 * passed over (flagged or not). */
START_TEST(test_signed_builds)
{
	static const struct {
		uint16_t dialect;
		const char *how;
	} d[] = {
		{0x0202, "SMB 2.0.2, HMAC-SHA256"},
		{0x0210, "SMB 2.1, HMAC-SHA256"},
		{0x0300, "SMB 3.0, AES-128-CMAC"},
		{0x0302, "SMB 3.0.2, AES-128-CMAC"},
	};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct fake f;
		int fd = fake_start(&f, i % 2 ? pending_signed : NULL, 0);
		struct pv_secret *pw =
			pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
		struct pv_smb2 *conn = NULL;
		struct pv_smb_tree_result res[3];

		f.signing = SIGN_REQUIRED;
		f.dialect = d[i].dialect;
		fake_run(&f);
		ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
		ck_assert_str_eq(pv_smb2_signing(conn), d[i].how);
		for (int k = 0; k < 3; k++) { /* fresh, listed, listed with b of another size */
			if (k == 2)
				lookup(&f, "u1/b")->size = 5;
			ck_assert_msg(pv_smb2_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1",
							 ITEMS, NITEMS, k == 0, fill, NULL, NULL,
							 NULL, &res[k]) == PV_OK,
				      "%s, build %d: %s", d[i].how, k, pv_errmsg());
		}
		ck_assert_uint_eq(res[0].files_made, 4);
		ck_assert_uint_eq(res[1].files_ok, 4);
		ck_assert_uint_eq(res[2].files_fixed, 1);
		ck_assert_uint_eq(lookup(&f, "u1/big")->size, 300000);
		ck_assert_uint_eq(f.logons_ok, 3);
		ck_assert_uint_eq(f.cmds[SMB2_LOGOFF], 3);
		ck_assert_uint_eq(f.sig_bad + f.unsigned_reqs, 0);
		ck_assert_uint_eq(f.signed_ok, after_logon(&f));
		ck_assert_uint_gt(f.signed_ok, 20);
		ck_assert(!pv_smb2_lost(conn));
		pv_smb2_free(conn);
		pv_secret_free(pw);
		fake_stop(&f);
	}
}
END_TEST

/* What tamper() does to the first answer to command (f->arg & 0xffff) (for SESSION_SETUP the
 * final one: the first is not signed), after the fake signed it: */
enum {
	FLIP,	   /* flip the last bit of the message (padding of a compound's message) */
	UNSIGN,	   /* clear SMB2_FLAGS_SIGNED and the signature */
	WRONG,	   /* flip a bit of the signature */
	FLAG,	   /* set SMB2_FLAGS_SIGNED with a signature of 0xaa bytes */
	OTHER_SID, /* put another session's id in the header */
};
#define TAMPER(cmd, kind) ((long)(cmd) | (long)(kind) << 16)

static enum act tamper(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	uint16_t cmd = (uint16_t)(f->arg & 0xffff);
	int kind = (int)(f->arg >> 16);

	(void)q;
	for (size_t o = 0; !f->done;) {
		uint8_t *m = (uint8_t *)reply->data + o;
		uint32_t next = smb2_get32(m + 20);
		size_t n = next ? next : reply->len - o;

		if (smb2_get16(m + 12) == cmd &&
		    (cmd != SMB2_SESSION_SETUP || smb2_get32(m + 8) == ST_OK)) {
			if (kind == FLIP)
				m[n - 1] ^= 1;
			else if (kind == UNSIGN || kind == FLAG)
				put32(m + 16, kind == FLAG
						      ? smb2_get32(m + 16) | SMB2_FLAGS_SIGNED
						      : smb2_get32(m + 16) & ~SMB2_FLAGS_SIGNED);
			if (kind == UNSIGN || kind == FLAG)
				memset(m + 48, kind == FLAG ? 0xaa : 0, 16);
			if (kind == WRONG)
				m[48] ^= 0x80;
			if (kind == OTHER_SID)
				smb2_put64(m + 40, 0x9999);
			f->done++;
		}
		if (!next)
			break;
		o += next;
	}
	return SEND;
}

/* The plan of ITEMS against a fake with this signing and dialect (0: 3.0.2) and hook. */
static struct run with_signing(hook_fn hook, long arg, bool fresh, int signing, uint16_t dialect,
			       struct fake *f)
{
	int fd = fake_start(f, hook, arg);
	struct run out;

	f->signing = signing;
	f->dialect = dialect;
	fake_run(f);
	out = build(fd, ITEMS, NITEMS, fresh);
	fake_stop(f);
	return out;
}

/* Every way an answer can fail signing ends the build with the clear error and loses the
 * connection: a changed byte (in a compound, the padding before the next message, which
 * the signature covers too), a missing signature where signing is required, a wrong one, a
 * signed answer before any key, one signed for another session; on the rpc path (logon,
 * tree connect, listing, logoff) and in the pipeline (a file's compound). */
START_TEST(test_bad_signatures)
{
	static const char BAD[] = "SMB answer from 'fake' has a bad signature: ";
	static const struct {
		long arg;
		int signing;
		uint16_t dialect;
		bool fresh;
		const char *want;
	} cases[] = {
		{TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_REQUIRED, 0, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) does not match its AES-128-CMAC "
		 "signature; the connection is dropped"},
		{TAMPER(SMB2_SESSION_SETUP, UNSIGN), SIGN_REQUIRED, 0x0210, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) came unsigned, and the server requires "
		 "signing"},
		{TAMPER(SMB2_TREE_CONNECT, WRONG), SIGN_REQUIRED, 0x0210, true,
		 "TREE_CONNECT (message 3, NT_STATUS_OK) does not match its HMAC-SHA256 signature"},
		{TAMPER(SMB2_CREATE, FLIP), SIGN_REQUIRED, 0, true,
		 "CREATE (message 4, NT_STATUS_OK) does not match its AES-128-CMAC signature"},
		{TAMPER(SMB2_CLOSE, UNSIGN), SIGN_REQUIRED, 0x0300, true,
		 "CLOSE (message 5, NT_STATUS_OK) came unsigned, and the server requires signing"},
		{TAMPER(SMB2_WRITE, WRONG), SIGN_REQUIRED, 0, true,
		 "WRITE (message 7, NT_STATUS_OK) does not match its AES-128-CMAC signature"},
		{TAMPER(SMB2_QUERY_DIRECTORY, UNSIGN), SIGN_REQUIRED, 0x0202, false,
		 "QUERY_DIRECTORY (message 5, NT_STATUS_OK) came unsigned, and the server requires "
		 "signing"},
		{TAMPER(SMB2_LOGOFF, FLIP), SIGN_REQUIRED, 0, true, "LOGOFF (message "},
		{TAMPER(SMB2_NEGOTIATE, FLAG), SIGN_REQUIRED, 0, true,
		 "NEGOTIATE (message 0, NT_STATUS_OK) came signed before there was a session key"},
		{TAMPER(SMB2_TREE_CONNECT, OTHER_SID), SIGN_REQUIRED, 0, true,
		 "TREE_CONNECT (message 3, NT_STATUS_OK) came signed for session 0x9999, not ours "
		 "(0x1122)"},
		/* not required: a signed answer is still checked */
		{TAMPER(SMB2_SESSION_SETUP, WRONG), SIGN_SETUP, 0, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) does not match its AES-128-CMAC "
		 "signature"},
		{TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_SETUP, 0x0210, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) does not match its HMAC-SHA256 "
		 "signature"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f;
		struct run r = with_signing(tamper, cases[i].arg, cases[i].fresh, cases[i].signing,
					    cases[i].dialect, &f);

		ck_assert_msg(f.done == 1, "case %zu: the answer to tamper with never came", i);
		ck_assert_msg(r.r == PV_EREMOTE && strncmp(r.msg, BAD, strlen(BAD)) == 0 &&
				      strstr(r.msg, cases[i].want),
			      "case %zu: %d '%s' lacks '%s'", i, r.r, r.msg, cases[i].want);
		ck_assert_msg(strstr(r.msg, "PROVISION_SMB_CLIENT=libsmbclient") != NULL,
			      "case %zu: no way out named: %s", i, r.msg);
		ck_assert_msg(r.lost, "case %zu: the connection should be lost", i);
		ck_assert_msg(!r.unsupported, "case %zu: not a reason for libsmbclient", i);
		ck_assert_uint_eq(f.sig_bad + f.unsigned_reqs, 0); /* the client did it right */
	}
}
END_TEST

/* A server that does not require signing: nothing is signed (signing costs both sides CPU),
 * and the end of each logon, which such a server may sign (Samba does), is checked when
 * signed and taken when not. */
START_TEST(test_signing_not_required)
{
	struct fake f;
	struct run r;
	int fd = fake_start(&f, NULL, 0);
	struct pv_smb2 *conn = NULL;

	f.signing = SIGN_SETUP;
	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
	ck_assert_ptr_null(pv_smb2_signing(conn));
	pv_smb2_free(conn);
	fake_stop(&f);
	for (uint16_t dialect = 0x0202; dialect; dialect = dialect == 0x0202 ? 0x0302 : 0) {
		r = with_signing(NULL, 0, true, SIGN_SETUP, dialect, &f);
		ck_assert_msg(r.r == PV_OK, "%s", r.msg);
		ck_assert_uint_eq(r.res.files_made, 4);
		ck_assert_uint_eq(f.signed_ok + f.sig_bad + f.unsigned_reqs, 0);
	}
	/* the final SESSION_SETUP answer unsigned: taken, as signing is not required */
	r = with_signing(tamper, TAMPER(SMB2_SESSION_SETUP, UNSIGN), true, SIGN_SETUP, 0, &f);
	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(f.done, 1);
}
END_TEST

/* ---- deadlines ---- */

/* The request named by arg (a command) is held: keep-alives (f->arg2 0) or interim answers. */
static enum act hold_keepalive(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd != f->arg)
		return SEND;
	stall(f, 0, 0);
	return HANGUP;
}

static enum act hold_pending(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd != f->arg)
		return SEND;
	stall(f, q->cmd, q->mid);
	return HANGUP;
}

START_TEST(test_endless_keepalives)
{
	struct fake f;
	struct run r = with(hold_keepalive, SMB2_TREE_CONNECT, true, &f);

	ck_assert_failed(
		r, PV_EUNREACH,
		"SMB to 'fake': no final answer to TREE_CONNECT in 600 ms (keep-alives and "
		"interim answers do not extend a request)");
	ck_assert(r.lost);
	ck_assert_uint_eq(f.hooked, 4); /* negotiate, 2 session setups, tree connect */
}
END_TEST

START_TEST(test_endless_pending)
{
	struct fake f;
	struct run r = with(hold_pending, SMB2_SESSION_SETUP, true, &f);

	ck_assert_failed(r, PV_EUNREACH, "no final answer to SESSION_SETUP in 600 ms");
	ck_assert(r.lost);
	/* in the pipeline: the CREATE compounds in flight never answered */
	r = with(hold_pending, SMB2_CREATE, true, &f);
	ck_assert_failed(r, PV_EUNREACH, "no final answer to any of the ");
	ck_assert_failed(r, PV_EUNREACH, "requests in flight for 600 ms");
	ck_assert(r.lost);
}
END_TEST

/* Every answer comes, late: 400 ms after its request (within 3T), with keep-alives. */
static enum act slow(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	(void)q;
	(void)reply;
	if (q->cmd != SMB2_NEGOTIATE)
		for (int i = 0; i < 8; i++) {
			struct timespec ts = {0, 50 * 1000000L};

			nanosleep(&ts, NULL);
			keepalive(f);
		}
	return SEND;
}

START_TEST(test_build_deadline)
{
	static const struct pv_smb_item one[] = {{"d", true, 0}};
	struct fake f;
	int fd = fake_start(&f, slow, 0);
	struct run r;

	fake_run(&f);
	/* T x (8 + 1 item) = 1.8 s; logon, tree connect and the listing of u1 (CREATE, two
	 * QUERY_DIRECTORY, CLOSE) take 7 x 400 ms before the folder is even asked for */
	r = build(fd, one, 1, false);
	fake_stop(&f);
	ck_assert_failed(r, PV_EUNREACH,
			 "SMB to 'fake': the tree build as u1 passed its deadline of 1800 ms (the "
			 "timeout 200 ms times 8 + items + MiB written)");
	ck_assert(r.lost);
}
END_TEST

/* ---- malformed frames ---- */

/* arg selects the fault, applied to the answer of the command f->... (see each test). */
static enum act short_frame(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	(void)q;
	(void)reply;
	send_frame(f, "\xfeSMB@\0\0\0\0\0", (size_t)f->arg); /* 10 bytes at most */
	return DONE;
}

START_TEST(test_short_frames)
{
	for (long n = 0; n <= 10; n += 10) {
		struct fake f;
		struct run r = with(short_frame, n, true, &f);
		char want[128];

		snprintf(want, sizeof(want),
			 "SMB to 'fake': a malformed answer: a frame of %ld bytes, shorter than an "
			 "SMB2 header (64 bytes)",
			 n);
		ck_assert_failed(r, PV_EREMOTE, want);
		ck_assert(r.lost);
	}
}
END_TEST

/* NetBIOS headers that are not a session message of a size we take (f->arg picks). */
static enum act bad_netbios(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	static const uint8_t heads[][4] = {
		{0x82, 0, 0, 0},	  /* positive session response: not on a session */
		{0x85, 0, 0, 4},	  /* a keep-alive with a length */
		{0x00, 0x10, 0, 1},	  /* 1 MiB + 1 */
		{0x00, 0xff, 0xff, 0xff}, /* 16 MiB - 1 */
	};

	(void)q;
	send_raw(f, heads[f->arg], 4);
	send_raw(f, reply->data, reply->len);
	return DONE;
}

START_TEST(test_bad_netbios)
{
	static const char *want[] = {
		"not an SMB2 answer (a NetBIOS message of type 0x82, 0 bytes)",
		"not an SMB2 answer (a NetBIOS message of type 0x85, 4 bytes)",
		"a frame of 1048577 bytes, more than the 1048576 this client takes",
		"a frame of 16777215 bytes, more than the 1048576 this client takes",
	};

	for (long i = 0; i < 4; i++) {
		struct fake f;
		struct run r = with(bad_netbios, i, true, &f);

		ck_assert_failed(r, PV_EREMOTE, want[i]);
		ck_assert(r.lost);
	}
}
END_TEST

/* The frame of the answer to command f->arg cut: its NetBIOS length says more than comes,
 * then the server closes (or, with the command negated, waits). */
static enum act cut_frame(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	uint8_t h[4] = {0, 0, 0x10, 0}; /* 4 KiB announced */

	if (q->cmd != labs(f->arg))
		return SEND;
	send_raw(f, h, 4);
	send_raw(f, reply->data, reply->len < 100 ? reply->len : 100);
	if (f->arg < 0)
		client_gone(f, 5000);
	return HANGUP;
}

START_TEST(test_truncated_frame)
{
	struct fake f;
	struct run r = with(cut_frame, SMB2_SESSION_SETUP, true, &f);

	ck_assert_failed(r, PV_EUNREACH, "SMB to 'fake': the connection was closed");
	ck_assert(r.lost);
	r = with(cut_frame, -SMB2_TREE_CONNECT, true, &f);
	ck_assert_failed(r, PV_EUNREACH, "SMB to 'fake': no answer in 200 ms");
	ck_assert(r.lost);
}
END_TEST

/* A field of the first message of the answer to command (f->arg & 0xffff) set: at byte
 * (f->arg >> 16 & 0xffff) of the message, the 32-bit value f->arg >> 32. */
#define POKE(cmd, at, v)                                                                           \
	((long)((unsigned long)(cmd) | (unsigned long)(at) << 16 | (unsigned long)(v) << 32))

static enum act poke(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	size_t at = (size_t)(f->arg >> 16 & 0xffff);

	if (q->cmd != (f->arg & 0xffff) || at + 4 > reply->len)
		return SEND;
	put32((uint8_t *)reply->data + at, (uint32_t)((unsigned long)f->arg >> 32));
	return SEND;
}

/* The answer to command f->arg cut to its header and f->arg >> 16 bytes of body. */
static enum act cut_body(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	if (q->cmd != (f->arg & 0xffff))
		return SEND;
	put32((uint8_t *)reply->data + 20, 0); /* no next message */
	reply->len = SMB2_HDR + (size_t)(f->arg >> 16);
	return SEND;
}

START_TEST(test_bad_offsets)
{
	struct {
		hook_fn hook;
		long arg;
		bool fresh;
		const char *want;
	} cases[] = {
		/* NextCommand shorter than a header, and past the frame */
		{poke, POKE(SMB2_CREATE, 20, 8), true,
		 "a malformed compound answer: NextCommand 8 at byte 0 points outside its frame"},
		{poke, POKE(SMB2_CREATE, 20, 4096), true,
		 "a malformed compound answer: NextCommand 4096 at byte 0 points outside"},
		{poke, POKE(SMB2_NEGOTIATE, 20, 80), true,
		 "a malformed compound answer: NextCommand 80 at byte 0 points outside its frame "
		 "of 136 bytes"},
		/* NextCommand inside the frame: the answer ends there */
		{poke, POKE(SMB2_NEGOTIATE, 20, 64), true,
		 "a malformed answer: NEGOTIATE with a body of 0 bytes, 64 expected"},
		/* SESSION_SETUP's security buffer: offset past the answer, length past it */
		{poke, POKE(SMB2_SESSION_SETUP, 68, 0x0010fff0), true,
		 "a malformed answer: SESSION_SETUP's security buffer (16 bytes at 65520) is not "
		 "inside"},
		{poke, POKE(SMB2_SESSION_SETUP, 68, 0xfff00048), true,
		 "a malformed answer: SESSION_SETUP's security buffer (65520 bytes at 72) is not "
		 "inside"},
		/* QUERY_DIRECTORY's buffer, and an entry's name length and next offset */
		{poke, POKE(SMB2_QUERY_DIRECTORY, 68, 0x7fffffff), false,
		 "a malformed answer: QUERY_DIRECTORY's buffer (2147483647 bytes at 72) is not "
		 "inside"},
		{poke, POKE(SMB2_QUERY_DIRECTORY, 66, 0x00000008), false,
		 "a malformed answer: QUERY_DIRECTORY's buffer"},
		{poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 0x10000), false,
		 "a malformed listing of //fake/fsroot1/u1: an entry whose name (65536 bytes)"},
		{poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 600), false,
		 "an entry whose name (600 bytes)"},
		{poke, POKE(SMB2_QUERY_DIRECTORY, 72, 0x100000), false,
		 "NextEntryOffset (1048576) does not fit"},
		{poke, POKE(SMB2_QUERY_DIRECTORY, 72, 8), false,
		 "NextEntryOffset (8) does not fit"},
		/* the protocol id, and a message id nobody asked, a command answering another */
		{poke, POKE(SMB2_TREE_CONNECT, 0, 0x424d53ff), true,
		 "a malformed answer: no SMB2 header at byte 0 of its frame"},
		{poke, POKE(SMB2_CREATE, 24, 999), true,
		 "a malformed answer: CREATE for message 999, which is not in flight"},
		{poke, POKE(SMB2_TREE_CONNECT, 12, SMB2_CREATE), true,
		 "a malformed answer: CREATE answering TREE_CONNECT"},
		{poke, POKE(SMB2_CREATE, 12, SMB2_CLOSE), true,
		 "a malformed answer: CLOSE answering CREATE"},
		/* bodies shorter than their command's */
		{cut_body, SMB2_NEGOTIATE | 40 << 16, true,
		 "a malformed answer: NEGOTIATE with a body of 40 bytes, 64 expected"},
		{cut_body, SMB2_TREE_CONNECT | 8 << 16, true,
		 "a malformed answer: TREE_CONNECT with a body of 8 bytes, 16 expected"},
		{cut_body, SMB2_SESSION_SETUP | 4 << 16, true,
		 "a malformed answer: SESSION_SETUP with a body of 4 bytes, 8 expected"},
		{cut_body, SMB2_CREATE | 70 << 16, false,
		 "a malformed answer: CREATE with a body of 70 bytes, 88 expected"},
		{cut_body, SMB2_CREATE | 70 << 16, true,
		 "a malformed answer: CREATE with a body of 70 bytes, 80 expected"},
		{cut_body, SMB2_QUERY_DIRECTORY | 6 << 16, false,
		 "a malformed answer: QUERY_DIRECTORY with a body of 6 bytes, 8 expected"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f;
		struct run r = with(cases[i].hook, cases[i].arg, cases[i].fresh, &f);

		ck_assert_msg(r.r == PV_EREMOTE && strstr(r.msg, cases[i].want),
			      "case %zu: %d '%s' lacks '%s'", i, r.r, r.msg, cases[i].want);
		ck_assert_msg(r.lost, "case %zu: the connection should be lost", i);
	}
}
END_TEST

/* The answer to the first CREATE compound (a folder's CREATE + CLOSE, or a file's) without
 * its last message, which never comes (f->arg 1); or its first message twice (2). */
static enum act compound_fault(struct fake *f, const struct req *q, struct pv_buf *reply)
{
	uint8_t *m = (uint8_t *)reply->data;
	uint32_t next = reply->len >= SMB2_HDR ? smb2_get32(m + 20) : 0;
	size_t off = 0, prev = 0;

	if (q->cmd != SMB2_CREATE || !next || f->done++)
		return SEND;
	if (f->arg == 2) {
		put32(m + 20, 0);
		send_frame(f, m, next);
		send_frame(f, m, next);
		client_gone(f, 5000); /* it may still be sending compounds */
		return HANGUP;
	}
	while (smb2_get32(m + off + 20)) {
		prev = off;
		off += smb2_get32(m + off + 20);
	}
	put32(m + prev + 20, 0);
	send_frame(f, m, off);
	stall(f, 0, 0);
	return HANGUP;
}

START_TEST(test_truncated_compound)
{
	struct fake f;
	struct run r = with(compound_fault, 1, true, &f);

	/* the folder's CREATE + CLOSE answered without the CLOSE: the pipeline waits, in vain */
	ck_assert_failed(r, PV_EUNREACH, "no final answer to any of the ");
	ck_assert(r.lost);
	r = with(compound_fault, 2, true, &f);
	ck_assert_failed(r, PV_EREMOTE, "a malformed answer: a second one to message ");
	ck_assert(r.lost);
}
END_TEST

START_TEST(test_dialect_not_offered)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct run r;

	f.dialect = 0x0311;
	fake_run(&f);
	r = build(fd, ITEMS, NITEMS, true);
	fake_stop(&f);
	ck_assert_failed(r, PV_EREMOTE,
			 "SMB to 'fake': the server chose dialect 0x0311, not one offered");
	ck_assert(r.unsupported);
}
END_TEST

/* ---- security buffers ---- */

START_TEST(test_target_info_64k)
{
	/* 65400 and 65460 bytes fit the challenge (SMB2's security buffer holds 65535 with the
	 * NTLM and SPNEGO headers); the AUTHENTICATE carrying them would not (it was sent with
	 * its length cut to 16 bits): refused, nothing is sent */
	static const size_t sizes[] = {65400, 65460};

	for (size_t i = 0; i < 2; i++) {
		struct fake f;
		int fd = fake_start(&f, NULL, 0);
		struct run r;
		char want[256];

		f.target_info = sizes[i];
		fake_run(&f);
		r = build(fd, ITEMS, NITEMS, true);
		fake_stop(&f);
		snprintf(want, sizeof(want),
			 "SMB logon as LAB\\u1 on 'fake': the server's NTLM target info of %zu "
			 "bytes "
			 "would not fit the AUTHENTICATE message's 16-bit lengths",
			 sizes[i]);
		ck_assert_failed(r, PV_EREMOTE, want);
		ck_assert_uint_eq(f.cmds[SMB2_SESSION_SETUP], 1);
		ck_assert_uint_eq(f.logons_ok + f.logons_bad, 0);
	}
	{ /* the largest that fits is answered, and the server can check it */
		struct fake f;
		int fd = fake_start(&f, NULL, 0);
		struct run r;

		f.target_info = 65000;
		fake_run(&f);
		r = build(fd, ITEMS, NITEMS, true);
		fake_stop(&f);
		ck_assert_msg(r.r == PV_OK, "%s", r.msg);
		ck_assert_uint_eq(f.logons_ok, 1);
	}
}
END_TEST

/* pv_ntlm_authenticate itself: fields over 16 bits are refused (-2), not cut. */
START_TEST(test_ntlm_field_limits)
{
	static uint8_t info[65535];
	uint8_t skey[16];
	struct pv_ntlm_challenge c = {0};
	struct pv_buf b = PV_BUF_INIT;

	c.target_info = info;
	c.target_info_len = 65487; /* NtChallengeResponse: 65535 */
	ck_assert_int_eq(
		pv_ntlm_authenticate(&c, "u1", "LAB", "pw", 2, 0, (uint8_t *)"12345678", &b, skey),
		0);
	c.target_info_len = 65488;
	ck_assert_int_eq(
		pv_ntlm_authenticate(&c, "u1", "LAB", "pw", 2, 0, (uint8_t *)"12345678", &b, skey),
		-2);
	c.target_info_len = 65535;
	ck_assert_int_eq(
		pv_ntlm_authenticate(&c, "u1", "LAB", "pw", 2, 0, (uint8_t *)"12345678", &b, skey),
		-2);
	pv_buf_release(&b, 0);
}
END_TEST

/* ---- paths ---- */

START_TEST(test_path_limit)
{
	struct fake f;
	char deep[1200] = "u1";
	int fd = fake_start(&f, NULL, 0);
	struct run r;
	struct pv_smb_item long_item = {NULL, false, 1};
	char name[1100];

	/* the server holds u1/d{100}/d{100}/... 11 deep: the 11th passes 1023 bytes (1113) */
	for (size_t l; (l = strlen(deep)) + 101 < sizeof(deep);) {
		deep[l] = '/';
		memset(deep + l + 1, 'd', 100);
		deep[l + 101] = 0;
		mknode(&f, deep, true, 0);
	}
	fake_run(&f);
	r = build(fd, ITEMS, NITEMS, false);
	fake_stop(&f);
	ck_assert_failed(r, PV_EREMOTE, "SMB listing //fake/fsroot1/u1: the path 'dddd");
	ck_assert_failed(r, PV_EREMOTE,
			 "' below it is 1113 bytes with the base, more than 1023; refused rather "
			 "than cut");
	/* u1 and 9 folders listed to the end (2 queries each), the 10th refused: none twice */
	ck_assert_uint_eq(f.cmds[SMB2_QUERY_DIRECTORY], 2 * 10 + 1);
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 11);

	/* a fileset path over the limit: refused before anything is made for it */
	memset(name, 'f', 1021);
	name[1021] = 0;
	long_item.path = name;
	fd = fake_start(&f, NULL, 0);
	fake_run(&f);
	r = build(fd, &long_item, 1, true);
	fake_stop(&f);
	ck_assert_failed(r, PV_ECONFIG, "SMB //fake/fsroot1: the path 'u1/ffff");
	ck_assert_failed(r, PV_ECONFIG,
			 "' is 1024 bytes, more than 1023; shorten the fileset's "
			 "names");
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 0);
	ck_assert(!r.lost);
	/* 1023 exactly is fine */
	name[1020] = 0;
	fd = fake_start(&f, NULL, 0);
	fake_run(&f);
	r = build(fd, &long_item, 1, true);
	fake_stop(&f);
	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 1);
}
END_TEST

/* A listed name holding a separator would pass for a path of several names. */
START_TEST(test_listed_bad_name)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct run r;

	mknode(&f, "u1/a\\b", false, 3); /* the fake lists it as is */
	fake_run(&f);
	r = build(fd, ITEMS, NITEMS, false);
	fake_stop(&f);
	ck_assert_failed(r, PV_EREMOTE,
			 "SMB listing //fake/fsroot1/u1: the server listed a bad name 'a\\b'");
}
END_TEST

/* ---- the fuzz target's seed corpus ---- */

/* The faults the corpus holds besides the valid conversation, as (hook, arg). */
static const struct {
	const char *name;
	hook_fn hook;
	long arg;
	size_t target_info;
	int signing; /* with signing required, the plan's fixed client challenge makes the
		      * signatures hold when the fuzz target replays the answers */
	uint16_t dialect;
} SEEDS[] = {
	{"valid", NULL, 0, 0},
	{"target-info-64k", NULL, 0, 65460},
	{"interim", pending_once, 0},
	{"split", split, 0},
	{"short-frame", short_frame, 10},
	{"netbios-type", bad_netbios, 0},
	{"netbios-huge", bad_netbios, 2},
	{"cut-frame", cut_frame, SMB2_SESSION_SETUP},
	{"next-short", poke, POKE(SMB2_CREATE, 20, 8)},
	{"secbuf-outside", poke, POKE(SMB2_SESSION_SETUP, 68, 0x0010fff0)},
	{"listing-outside", poke, POKE(SMB2_QUERY_DIRECTORY, 68, 0x7fffffff)},
	{"entry-name", poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 0x10000)},
	{"cut-body", cut_body, SMB2_CREATE | 70 << 16},
	{"compound-cut", compound_fault, 1},
	{"compound-twice", compound_fault, 2},
	{"keepalives", hold_keepalive, SMB2_TREE_CONNECT},
	{"pending", hold_pending, SMB2_CREATE},
	{"signed-302", NULL, 0, 0, SIGN_REQUIRED, 0x0302},
	{"signed-210-interim", pending_signed, 0, 0, SIGN_REQUIRED, 0x0210},
	{"signed-flipped", tamper, TAMPER(SMB2_WRITE, FLIP), 0, SIGN_REQUIRED, 0x0302},
	{"signed-missing", tamper, TAMPER(SMB2_QUERY_DIRECTORY, UNSIGN), 0, SIGN_REQUIRED, 0x0202},
};

/* The plan against the fake server under each fault: never a crash, a clear error for each
 * fault; with PV_SMB2_CORPUS set, what the server sent goes to a file per seed there. */
START_TEST(test_plan_and_corpus)
{
	const char *dir = getenv("PV_SMB2_CORPUS");

	for (size_t i = 0; i < sizeof(SEEDS) / sizeof(SEEDS[0]); i++) {
		struct fake f;
		struct pv_smb_tree_result res;
		int fd = fake_start(&f, SEEDS[i].hook, SEEDS[i].arg), r;

		f.target_info = SEEDS[i].target_info;
		f.signing = SEEDS[i].signing;
		f.dialect = SEEDS[i].dialect;
		mknode(&f, "u1/d", true, 0); /* the plan finds d, and b of another size */
		mknode(&f, "u1/b", false, 5);
		if (dir) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", dir, SEEDS[i].name);
			ck_assert_ptr_nonnull(f.capture = fopen(path, "wb"));
		}
		fake_run(&f);
		r = smb2_plan_run(fd, T_MS, &res);
		fake_stop(&f);
		if (!SEEDS[i].hook && !SEEDS[i].target_info) {
			ck_assert_msg(r == PV_OK, "%s", pv_errmsg());
			ck_assert_uint_eq(res.files_made, 3);
			ck_assert_uint_eq(res.files_fixed, 1);
			ck_assert_uint_eq(f.signed_ok, SEEDS[i].signing ? after_logon(&f) : 0);
		} else if (SEEDS[i].hook == pending_once || SEEDS[i].hook == split ||
			   SEEDS[i].hook == pending_signed) {
			ck_assert_msg(r == PV_OK, "%s: %s", SEEDS[i].name, pv_errmsg());
		} else if (SEEDS[i].hook == tamper) {
			ck_assert_msg(r == PV_EREMOTE && strstr(pv_errmsg(), "has a bad signature"),
				      "%s: %d %s", SEEDS[i].name, r, pv_errmsg());
		} else {
			ck_assert_msg(r != PV_OK && strncmp(pv_errmsg(), "SMB ", 4) == 0,
				      "%s: %d %s", SEEDS[i].name, r, pv_errmsg());
		}
	}
}
END_TEST

/* The fuzz target itself (LLVMFuzzerTestOneInput) over every seed and every crash it
 * found, under ASan and UBSan here too: those inputs stay harmless. */
#include "tests/fuzz/fuzz_smb2.c"

START_TEST(test_fuzz_replay)
{
	static const char *dirs[] = {"tests/fuzz/corpus/smb2", "tests/fuzz/crashes/smb2"};
	unsigned files = 0;

	for (int d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;

		ck_assert_msg(dir != NULL, "%s: %s (run from the top of the tree)", dirs[d],
			      strerror(errno));
		while ((e = readdir(dir)) != NULL) {
			char path[512];
			uint8_t *data = malloc(INPUT_MAX);
			FILE *fp;
			size_t n;

			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			if (e->d_name[0] == '.' || !(fp = fopen(path, "rb"))) {
				free(data);
				continue;
			}
			ck_assert_ptr_nonnull(data);
			n = fread(data, 1, INPUT_MAX, fp);
			fclose(fp);
			ck_assert_int_eq(LLVMFuzzerTestOneInput(data, n), 0);
			free(data);
			files++;
		}
		closedir(dir);
	}
	ck_assert_uint_ge(files, 23);
}
END_TEST

/* The signed seeds, replayed as the fuzz target does (the recorded answers streamed at
 * once, the plan run against them): the fixed client challenge gives the same session key
 * as when they were recorded, so the valid ones build the tree, signatures and all, and the
 * faulty ones fail on the signature, not on anything before it. */
START_TEST(test_signed_seeds_replay)
{
	static const struct {
		const char *name, *want;
	} seeds[] = {
		{"signed-302", NULL},
		{"signed-210-interim", NULL},
		{"signed-flipped", "WRITE (message "},
		{"signed-missing", "QUERY_DIRECTORY (message "},
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[256];
		uint8_t *data = malloc(INPUT_MAX);
		FILE *fp;
		struct server srv = {-1, data, 0};
		struct pv_smb_tree_result res;
		pthread_t th;
		int sv[2], r;

		snprintf(path, sizeof(path), "tests/fuzz/corpus/smb2/%s", seeds[i].name);
		ck_assert_ptr_nonnull(data);
		ck_assert_msg((fp = fopen(path, "rb")) != NULL, "%s: %s", path, strerror(errno));
		srv.len = fread(data, 1, INPUT_MAX, fp);
		fclose(fp);
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		srv.fd = sv[1];
		ck_assert_int_eq(pthread_create(&th, NULL, stream, &srv), 0);
		pv_error_clear();
		r = smb2_plan_run(sv[0], 60000, &res);
		pthread_join(th, NULL);
		close(sv[1]);
		free(data);
		if (!seeds[i].want) {
			ck_assert_msg(r == PV_OK, "%s: %s", seeds[i].name, pv_errmsg());
			ck_assert_uint_eq(res.files_made, 3);
		} else {
			ck_assert_msg(r == PV_EREMOTE &&
					      strstr(pv_errmsg(), "has a bad signature") &&
					      strstr(pv_errmsg(), seeds[i].want),
				      "%s: %d %s", seeds[i].name, r, pv_errmsg());
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wire");
	TCase *tc = tcase_create("valid");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_build_and_list);
	tcase_add_test(tc, test_interim_and_split);
	tcase_add_test(tc, test_logon_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("signing");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_signed_builds);
	tcase_add_test(tc, test_bad_signatures);
	tcase_add_test(tc, test_signing_not_required);
	suite_add_tcase(s, tc);
	tc = tcase_create("deadlines");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_endless_keepalives);
	tcase_add_test(tc, test_endless_pending);
	tcase_add_test(tc, test_build_deadline);
	suite_add_tcase(s, tc);
	tc = tcase_create("malformed");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_short_frames);
	tcase_add_test(tc, test_bad_netbios);
	tcase_add_test(tc, test_truncated_frame);
	tcase_add_test(tc, test_bad_offsets);
	tcase_add_test(tc, test_truncated_compound);
	tcase_add_test(tc, test_dialect_not_offered);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_target_info_64k);
	tcase_add_test(tc, test_ntlm_field_limits);
	tcase_add_test(tc, test_path_limit);
	tcase_add_test(tc, test_listed_bad_name);
	suite_add_tcase(s, tc);
	tc = tcase_create("fuzz-plan");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_plan_and_corpus);
	tcase_add_test(tc, test_fuzz_replay);
	tcase_add_test(tc, test_signed_seeds_replay);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
