/* tests/unit/fake_smb2.c: the fake SMB2 server of tests/unit/check_sync.c and
 * tests/unit/check_async.c (see fake_smb2.h). */
#include "tests/unit/fake_smb2.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "smb/smb2.h"
#include "util/digest.h"
#include "util/utf16.h"

static void put16(uint8_t *p, uint16_t v)
{
	smb2_put16(p, v);
}

static void put32(uint8_t *p, uint32_t v)
{
	smb2_put32(p, v);
}

void fake_send_raw(struct fake *f, const void *p, size_t n)
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
void fake_send_frame(struct fake *f, const void *p, size_t n)
{
	uint8_t h[4] = {0, (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};

	fake_send_raw(f, h, 4);
	fake_send_raw(f, p, n);
}

void fake_keepalive(struct fake *f)
{
	fake_send_raw(f, "\x85\0\0\0", 4);
}

/* An interim answer to mid: async, STATUS_PENDING (MS-SMB2 3.3.4.2); with flags
 * SMB2_FLAGS_SIGNED too, a signature field of 0xaa bytes (a server may flag an interim
 * answer to a signed request so; MS-SMB2 3.2.5.1.3 checks no interim answer). */
void fake_interim_flagged(struct fake *f, uint16_t cmd, uint64_t mid, uint32_t flags)
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
	fake_send_frame(f, m, sizeof(m));
}

void fake_interim(struct fake *f, uint16_t cmd, uint64_t mid)
{
	fake_interim_flagged(f, cmd, mid, 0);
}

/* Whether the client has closed its end, waiting up to ms for it; what it sends meanwhile
 * is read and dropped (it may still be sending compounds). */
bool fake_client_gone(struct fake *f, int ms)
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
void fake_stall(struct fake *f, uint16_t cmd, uint64_t mid)
{
	for (int i = 0; i < 500 && !fake_client_gone(f, 20); i++) {
		if (cmd)
			fake_interim(f, cmd, mid);
		else
			fake_keepalive(f);
	}
}

struct fake_node *fake_lookup(struct fake *f, const char *path)
{
	for (int i = 0; i < FAKE_NODES; i++)
		if (f->fs[i].path && strcmp(f->fs[i].path, path) == 0)
			return &f->fs[i];
	return NULL;
}

struct fake_node *fake_mknode(struct fake *f, const char *path, bool dir, uint64_t size)
{
	for (int i = 0; i < FAKE_NODES; i++)
		if (!f->fs[i].path) {
			f->fs[i] = (struct fake_node){strdup(path), dir, size};
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

/* One DER element at *p (below end): its tag and its value's bounds; *p moves past it. */
static bool der_take(const uint8_t **p, const uint8_t *end, uint8_t *tag, const uint8_t **v,
		     size_t *l)
{
	const uint8_t *q = *p;
	size_t n;

	if (end - q < 2)
		return false;
	*tag = *q++;
	n = *q++;
	if (n & 0x80) {
		int k = (int)(n & 0x7f);

		if (k < 1 || k > 3 || end - q < k)
			return false;
		for (n = 0; k-- > 0;)
			n = n << 8 | *q++;
	}
	if ((size_t)(end - q) < n)
		return false;
	*v = q;
	*l = n;
	*p = q + n;
	return true;
}

/* A field of a SPNEGO token (RFC 4178 4.2), read as a server reads it: of a NegTokenInit
 * (APPLICATION 0 { OID, [0] SEQUENCE { mechTypes [0], mechToken [2], ... } }) or a
 * NegTokenResp ([1] SEQUENCE { negState [0], ..., responseToken [2], mechListMIC [3] }): the
 * value of the one element inside field (*vl bytes), and that element whole, its tag and
 * length with it (*el bytes at *elem: mechTypes' DER, which a mechListMIC covers). NULL when
 * absent or malformed. */
static const uint8_t *spnego_get(const uint8_t *tok, size_t len, uint8_t field, size_t *vl,
				 const uint8_t **elem, size_t *el)
{
	const uint8_t *p = tok, *end = tok + len, *v, *q, *v2;
	size_t l, l2;
	uint8_t t;

	if (!tok || !der_take(&p, end, &t, &v, &l))
		return NULL;
	if (t == 0x60) {
		p = v;
		end = v + l;
		if (!der_take(&p, end, &t, &v, &l) || t != 0x06 || !der_take(&p, end, &t, &v, &l) ||
		    t != 0xa0)
			return NULL;
	} else if (t != 0xa1) {
		return NULL;
	}
	p = v;
	end = v + l;
	if (!der_take(&p, end, &t, &v, &l) || t != 0x30)
		return NULL;
	p = v;
	end = v + l;
	while (p < end) {
		if (!der_take(&p, end, &t, &v, &l))
			return NULL;
		if (t != field)
			continue;
		q = v;
		if (!der_take(&q, v + l, &t, &v2, &l2))
			return NULL;
		*elem = v;
		*el = (size_t)(q - v);
		*vl = l2;
		return v2;
	}
	return NULL;
}

/* An NTLMSSP signature with extended session security (MS-NLMP 3.4.4.2, spelled out): Version
 * 1, HMAC_MD5(SIGNKEY, SeqNum 0 || msg)'s first 8 bytes (no KEY_EXCH: no RC4), SeqNum 0;
 * SIGNKEY = MD5(session key || the magic constant of the direction, its NUL with it). */
static void ntlm_sig(const uint8_t key[16], bool server, const uint8_t *msg, size_t len,
		     uint8_t sig[16])
{
	const char *magic = server ? "session key to server-to-client signing key magic constant"
				   : "session key to client-to-server signing key magic constant";
	struct pv_buf t = PV_BUF_INIT;
	uint8_t sk[16], mac[16];

	pv_buf_add(&t, key, 16);
	pv_buf_add(&t, magic, strlen(magic) + 1);
	pv_md5(t.data, t.len, sk);
	pv_buf_reset(&t);
	pv_buf_add(&t, "\0\0\0\0", 4);
	pv_buf_add(&t, msg, len);
	ck_assert(!pv_buf_failed(&t));
	pv_hmac_md5(sk, 16, t.data, t.len, mac);
	pv_buf_release(&t, 1);
	memset(sig, 0, 16);
	sig[0] = 1;
	memcpy(sig + 4, mac, 8);
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
	pv_buf_reset(&f->chal); /* for the MIC */
	pv_buf_add(&f->chal, m.data, m.len);
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

/* SP800-108's KDF in counter mode as MS-SMB2 3.1.4.2 uses it, spelled out here:
 * HMAC-SHA256(key, [i]_32 || label || 0x00 || context || [L]_32), i = 1 and 2 for 32 bytes;
 * the label and the context carry their NUL (llen and clen count it). */
static void kdf(const uint8_t *key, size_t klen, const char *label, size_t llen, const uint8_t *ctx,
		size_t clen, uint8_t *out, size_t olen)
{
	uint8_t in[128], h[32];

	for (uint32_t i = 1; olen > 0; i++) {
		size_t n = 0, take = olen < 32 ? olen : 32;

		in[n++] = 0, in[n++] = 0, in[n++] = 0, in[n++] = (uint8_t)i;
		memcpy(in + n, label, llen), n += llen;
		in[n++] = 0;
		memcpy(in + n, ctx, clen), n += clen;
		in[n++] = 0, in[n++] = 0;
		in[n++] = (uint8_t)(olen * 8 >> 8), in[n++] = (uint8_t)(olen * 8);
		pv_hmac_sha256(key, klen, in, n, h);
		memcpy(out, h, take);
		out += take;
		olen -= take;
	}
}

static bool aes256(uint16_t cipher)
{
	return cipher == 3 || cipher == 4;
}

static bool gcm(uint16_t cipher)
{
	return cipher == 2 || cipher == 4;
}

static enum pv_aead_alg alg_of(uint16_t cipher)
{
	return cipher == 1   ? PV_AES128_CCM
	       : cipher == 2 ? PV_AES128_GCM
	       : cipher == 3 ? PV_AES256_CCM
			     : PV_AES256_GCM;
}

static void fake_unkey(struct fake *f)
{
	pv_aead_free(f->gmac);
	pv_aead_free(f->c2s);
	pv_aead_free(f->s2c);
	f->gmac = f->c2s = f->s2c = NULL;
	f->keyed = false;
}

/* The fake's keys from the session key (MS-SMB2 3.2.5.3.1 as written): 2.x signs with the key
 * itself; 3.0 and 3.0.2 derive with fixed labels and contexts; 3.1.1 with its own labels and
 * the session's preauth hash as context (and a 256-bit output for the AES-256 ciphers). */
static void fake_key(struct fake *f, const uint8_t session_key[16])
{
	uint8_t c2s[32], s2c[32];
	size_t kl = aes256(f->cipher) ? 32 : 16;

	fake_unkey(f);
	if (dialect_of(f) == 0x0311) {
		kdf(session_key, 16, "SMBSigningKey", 14, f->preauth, 64, f->key, 16);
		kdf(session_key, 16, "SMBC2SCipherKey", 16, f->preauth, 64, c2s, kl);
		kdf(session_key, 16, "SMBS2CCipherKey", 16, f->preauth, 64, s2c, kl);
	} else if (dialect_of(f) >= 0x0300) {
		kdf(session_key, 16, "SMB2AESCMAC", 12, (const uint8_t *)"SmbSign", 8, f->key, 16);
		kdf(session_key, 16, "SMB2AESCCM", 11, (const uint8_t *)"ServerIn ", 10, c2s, 16);
		kdf(session_key, 16, "SMB2AESCCM", 11, (const uint8_t *)"ServerOut", 10, s2c, 16);
	} else {
		memcpy(f->key, session_key, 16);
	}
	if (dialect_of(f) == 0x0311 && f->sign_alg == 2)
		ck_assert_ptr_nonnull(f->gmac = pv_aead_new(PV_AES128_GCM, f->key));
	if (dialect_of(f) >= 0x0300 && f->cipher) {
		ck_assert_ptr_nonnull(f->c2s = pv_aead_new(alg_of(f->cipher), c2s));
		ck_assert_ptr_nonnull(f->s2c = pv_aead_new(alg_of(f->cipher), s2c));
	}
	f->keyed = true;
}

/* The signature of the message m (n bytes) under the fake's key, its signature field taken
 * as zero (MS-SMB2 3.1.4.1; AES-GMAC's nonce: MessageId, then 4 bytes whose bit 0 says an
 * answer). */
static void fake_mac(const struct fake *f, const uint8_t *m, size_t n, uint8_t sig[16])
{
	uint8_t *z = malloc(n), h[32], nonce[12];

	ck_assert_ptr_nonnull(z);
	memcpy(z, m, n);
	memset(z + 48, 0, 16);
	if (f->gmac) {
		memcpy(nonce, m + 24, 8);
		put32(nonce + 8, smb2_get32(m + 16) & 1);
		pv_aead_seal(f->gmac, nonce, 12, z, n, NULL, 0, sig);
	} else if (dialect_of(f) >= 0x0300) {
		pv_aes_cmac128(f->key, z, n, sig);
	} else {
		pv_hmac_sha256(f->key, 16, z, n, h);
		memcpy(sig, h, 16);
	}
	free(z);
}

/* NTOWFv2 (MS-NLMP 3.3.2) of LAB\u1 and FAKE_PASSWORD, spelled out: HMAC_MD5(MD4(UTF-16LE
 * (password)), UTF-16LE(UPPER(user) || domain)). */
static void fake_ntowfv2(uint8_t key[16])
{
	struct pv_buf pw = PV_BUF_INIT, ud = PV_BUF_INIT;
	uint8_t nt[16];

	ck_assert_int_eq(pv_utf16le(&pw, FAKE_PASSWORD, strlen(FAKE_PASSWORD), 0), 0);
	ck_assert_int_eq(pv_utf16le(&ud, "U1LAB", 5, 0), 0);
	pv_md4(pw.data, pw.len, nt);
	pv_hmac_md5(nt, 16, ud.data, ud.len, key);
	pv_buf_release(&pw, 1);
	pv_buf_release(&ud, 0);
}

/* The AV pair id (its value, *vlen bytes) in the pairs at p (n bytes) up to MsvAvEOL; NULL
 * when absent. *eol: whether MsvAvEOL ends them inside the n bytes. */
static const uint8_t *av_find(const uint8_t *p, size_t n, uint16_t id, size_t *vlen, bool *eol)
{
	*eol = false;
	for (size_t i = 0; n - i >= 4;) {
		uint16_t t = smb2_get16(p + i);
		size_t l = smb2_get16(p + i + 2);

		if (n - i - 4 < l)
			return NULL;
		if (t == 0) {
			*eol = true;
			return NULL;
		}
		if (t == id) {
			*vlen = l;
			return p + i + 4;
		}
		i += 4 + l;
	}
	return NULL;
}

/* The client's AV pairs (the n bytes at p) as a server checks them: every pair of the
 * fake's CHALLENGE (its target info at 48) back with its value, MsvAvFlags with a MIC
 * (0x2), MsvAvChannelBindings all zero (no channel bindings), MsvAvTargetName "cifs/..."
 * (kept). */
static bool av_pairs_ok(struct fake *f, const uint8_t *p, size_t n)
{
	const uint8_t *ti = (const uint8_t *)f->chal.data + 48, *v, *mine;
	size_t tl = smb2_get16((const uint8_t *)f->chal.data + 40), vl = 0, ml = 0;
	bool eol;
	static const uint8_t zero[16];

	for (size_t i = 0; i + 4 <= tl && smb2_get16(ti + i); i += 4 + smb2_get16(ti + i + 2)) {
		mine = ti + i + 4;
		ml = smb2_get16(ti + i + 2);
		v = av_find(p, n, smb2_get16(ti + i), &vl, &eol);
		if (!v || vl != ml || memcmp(v, mine, ml) != 0)
			return false;
	}
	av_find(p, n, 0xffff, &vl, &eol);
	if (!eol)
		return false;
	if (!(v = av_find(p, n, 6, &vl, &eol)) || vl != 4 || !(smb2_get32(v) & 0x2))
		return false;
	if (!(v = av_find(p, n, 10, &vl, &eol)) || vl != 16 || memcmp(v, zero, 16) != 0)
		return false;
	if (!(v = av_find(p, n, 9, &vl, &eol)) ||
	    pv_utf16le_to_utf8(v, vl, f->target_name, sizeof(f->target_name)) < 0)
		return false;
	return strncmp(f->target_name, "cifs/", 5) == 0 && f->target_name[5];
}

/* Check an AUTHENTICATE (MS-NLMP 2.2.1.3) as a server would: every field inside the
 * message, the NTLMv2 proof right for LAB\u1 and the plan's password (MS-NLMP 3.3.2), else
 * STATUS_LOGON_FAILURE; its AV pairs, then its MIC at 72 (MS-NLMP 3.1.5.1.2: HMAC_MD5 keyed
 * with ExportedSessionKey over NEGOTIATE || CHALLENGE || AUTHENTICATE, its MIC field zero),
 * else STATUS_INVALID_PARAMETER. A right one gives the session its key in base:
 * SessionBaseKey = HMAC_MD5(ResponseKeyNT, NTProofStr), the key (and ExportedSessionKey)
 * without KEY_EXCH. */
static uint32_t authenticate(struct fake *f, const uint8_t *m, size_t n, uint8_t base[16])
{
	uint8_t key[16], proof[16], mic[16];
	size_t off[6], len[6];
	struct pv_buf t = PV_BUF_INIT;
	bool ok;

	if (n < 88 || smb2_get32(m + 8) != 3)
		return ST_LOGON_FAILURE;
	for (int i = 0; i < 6; i++) {
		len[i] = smb2_get16(m + 12 + 8 * i);
		off[i] = smb2_get32(m + 16 + 8 * i);
		if (off[i] > n || len[i] > n - off[i])
			return ST_LOGON_FAILURE;
	}
	if (len[1] < 16 + 28 + 4)
		return ST_LOGON_FAILURE;
	fake_ntowfv2(key);
	pv_buf_add(&t, f->schal, 8);
	pv_buf_add(&t, m + off[1] + 16, len[1] - 16);
	pv_hmac_md5(key, 16, t.data, t.len, proof);
	ok = memcmp(proof, m + off[1], 16) == 0;
	pv_buf_release(&t, 0);
	if (!ok)
		return ST_LOGON_FAILURE;
	/* the blob: 1 1 Z(6) time(8) cchal(8) Z(4), the AV pairs, Z(4) */
	if (!av_pairs_ok(f, m + off[1] + 16 + 28, len[1] - 16 - 28 - 4)) {
		f->av_bad++;
		return ST_INVALID_PARAMETER;
	}
	if (len[5] != 0 || (smb2_get32(m + 60) & 0x40000000u))
		return ST_LOGON_FAILURE; /* KEY_EXCH: a key the fake does not take */
	pv_hmac_md5(key, 16, proof, 16, base);
	pv_buf_add(&t, f->nego.data, f->nego.len);
	pv_buf_add(&t, f->chal.data, f->chal.len);
	pv_buf_add(&t, m, 72);
	pv_buf_add(&t, (const uint8_t[16]){0}, 16);
	pv_buf_add(&t, m + 88, n - 88);
	ck_assert(!pv_buf_failed(&t));
	pv_hmac_md5(base, 16, t.data, t.len, mic);
	pv_buf_release(&t, 0);
	if (memcmp(mic, m + 72, 16) != 0) {
		f->mic_bad++;
		return ST_INVALID_PARAMETER;
	}
	f->mic_ok++;
	return ST_OK;
}

static void session_setup(struct fake *f, const uint8_t *q, size_t qlen, uint64_t mid,
			  struct pv_buf *out)
{
	size_t off = qlen >= SMB2_HDR + 24 ? smb2_get16(q + SMB2_HDR + 12) : 0;
	size_t len = qlen >= SMB2_HDR + 24 ? smb2_get16(q + SMB2_HDR + 14) : 0;
	const uint8_t *tok = off <= qlen && len <= qlen - off ? q + off : NULL;
	bool krb = tok && len >= 8 && memcmp(tok, FAKE_KRB_TICKET, 8) == 0;
	const uint8_t *ntlm, *types = NULL, *list = NULL, *e;
	size_t nlen = 0, tlen = 0, llen = 0, el;
	uint8_t base[16], sig[16], *b;
	uint32_t st;

	/* the NTLM message in the SPNEGO token: NegTokenInit's mechToken and its mechTypes, or
	 * NegTokenResp's responseToken and its mechListMIC */
	ntlm = krb ? NULL : spnego_get(tok, len, 0xa2, &nlen, &e, &el);
	if (ntlm && (nlen < 12 || memcmp(ntlm, "NTLMSSP", 8) != 0))
		ntlm = NULL;
	if (ntlm && ntlm[8] == 1) /* mechTypes' DER, whole: types, tlen bytes */
		spnego_get(tok, len, 0xa0, &el, &types, &tlen);
	if (ntlm && ntlm[8] == 3)
		list = spnego_get(tok, len, 0xa3, &llen, &e, &el);
	/* 3.1.1's preauth hash: the session's starts from the connection's at a logon's first
	 * request, and takes every request, and every answer but the last (MS-SMB2 3.3.5.5) */
	if (dialect_of(f) == 0x0311) {
		if (krb || (ntlm && ntlm[8] == 1))
			memcpy(f->preauth, f->conn_preauth, 64);
		pv_sha512_2(f->preauth, 64, q, qlen, f->preauth);
	}
	if (krb) {
		/* a logon in one round trip, as Kerberos makes it: the ticket in, the server's
		 * token (its AP-REP) out in the final answer, the session key known to both */
		f->logons_ok++;
		fake_key(f, (const uint8_t *)FAKE_KRB_KEY);
		msg(out, SMB2_SESSION_SETUP, mid, ST_OK, 0);
		b = grow(out, 8);
		put16(b, 9);
		put16(b + 2, f->encrypt_session ? 4 : 0);
		put16(b + 4, SMB2_HDR + 8);
		put16(b + 6, 8);
		pv_buf_add(out, FAKE_KRB_REPLY, 8);
		return;
	}
	if (ntlm && ntlm[8] == 1) {
		struct pv_buf c = PV_BUF_INIT;
		size_t at;

		f->keyed = false; /* a new logon */
		/* the NEGOTIATE message and the mechTypes offered, for the MICs */
		pv_buf_reset(&f->nego);
		pv_buf_add(&f->nego, ntlm, nlen);
		pv_buf_reset(&f->mech_types);
		if (types)
			pv_buf_add(&f->mech_types, types, tlen);
		challenge(f, &c);
		at = msg(out, SMB2_SESSION_SETUP, mid, ST_MORE_PROCESSING, 0);
		f->hash_at = at;
		f->hash_pending = dialect_of(f) == 0x0311;
		b = grow(out, 8);
		put16(b, 9);
		put16(b + 4, SMB2_HDR + 8);
		put16(b + 6, (uint16_t)c.len);
		pv_buf_add(out, c.data, c.len);
		pv_buf_release(&c, 0);
		return;
	}
	st = ntlm ? authenticate(f, ntlm, nlen, base) : ST_LOGON_FAILURE;
	/* Samba's SPNEGO: an AUTHENTICATE with a MIC (the fake asks one) and NTLM signing with
	 * extended session security wants the client's mechListMIC over the mechTypes; without
	 * one it asks a third leg (MORE_PROCESSING_REQUIRED with its own), and a wrong one is
	 * refused with ACCESS_DENIED (NTLMSSP's check of a signature) */
	if (st == ST_OK && (smb2_get32(ntlm + 60) & 0x80010u) == 0x80010u) {
		ntlm_sig(base, true, (const uint8_t *)f->mech_types.data, f->mech_types.len, sig);
		if (!list) {
			f->mech_mic_missing++;
			msg(out, SMB2_SESSION_SETUP, mid, ST_MORE_PROCESSING, 0);
			b = grow(out, 8);
			put16(b, 9);
			put16(b + 4, SMB2_HDR + 8);
			put16(b + 6, 2 + 2 + 5 + 2 + 2 + 16);
			pv_buf_add(out, "\xa1\x1b\x30\x19\xa0\x03\x0a\x01\x01\xa3\x12\x04\x10", 13);
			pv_buf_add(out, sig, 16);
			return;
		}
		ntlm_sig(base, false, (const uint8_t *)f->mech_types.data, f->mech_types.len, sig);
		if (llen != 16 || memcmp(list, sig, 16) != 0) {
			f->mech_mic_bad++;
			f->logons_bad++;
			msg(out, SMB2_SESSION_SETUP, mid, ST_ACCESS_DENIED, 0);
			error_body(out);
			return;
		}
		f->mech_mic_ok++;
		ntlm_sig(base, true, (const uint8_t *)f->mech_types.data, f->mech_types.len, sig);
	} else {
		list = NULL;
	}
	if (st == ST_OK) {
		f->logons_ok++;
		fake_key(f, base);
		msg(out, SMB2_SESSION_SETUP, mid, ST_OK, 0);
		b = grow(out, 8);
		put16(b, 9);
		put16(b + 2, f->encrypt_session ? 4 : 0);
		if (!list) {
			grow(out, 1);
			return;
		}
		/* NegTokenResp { negState accept-completed, mechListMIC: the server's } */
		put16(b + 4, SMB2_HDR + 8);
		put16(b + 6, 2 + 2 + 5 + 2 + 2 + 16);
		pv_buf_add(out, "\xa1\x1b\x30\x19\xa0\x03\x0a\x01\x00\xa3\x12\x04\x10", 13);
		pv_buf_add(out, sig, 16);
		return;
	}
	f->logons_bad++;
	msg(out, SMB2_SESSION_SETUP, mid, st, 0);
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

static int open_handle(struct fake *f, struct fake_node *n, bool doc)
{
	for (int i = 0; i < FAKE_HANDLES; i++)
		if (f->h[i].node < 0) {
			f->h[i] = (struct fake_handle){(int)(n - f->fs), false, doc, -2};
			return i;
		}
	return -1;
}

static struct fake_handle *handle_of(struct fake *f, const uint8_t fid[16], int related)
{
	uint64_t id = smb2_get64(fid);
	int i = id == UINT64_MAX ? related : (int)id - 1;

	return i >= 0 && i < FAKE_HANDLES && f->h[i].node >= 0 ? &f->h[i] : NULL;
}

/* A lease asked for in a CREATE (MS-SMB2 2.2.13: RequestedOplockLevel 0xff, its create
 * contexts at CreateContextsOffset; 2.2.13.2: Next, NameOffset, NameLength, DataOffset,
 * DataLength): an "RqLs" context's key and state noted. */
static void lease_asked(struct fake *f, const uint8_t *q, size_t qlen)
{
	size_t at = smb2_get32(q + SMB2_HDR + 48), len = smb2_get32(q + SMB2_HDR + 52);

	if (q[SMB2_HDR + 3] != 0xff || !len)
		return;
	ck_assert_msg(at <= qlen && len <= qlen - at, "create contexts outside the CREATE");
	for (size_t c = at;;) {
		uint32_t next = smb2_get32(q + c);
		size_t no = smb2_get16(q + c + 4), nl = smb2_get16(q + c + 6);
		size_t dof = smb2_get16(q + c + 10), dl = smb2_get32(q + c + 12);

		ck_assert_msg(c + 16 <= at + len && c + no + nl <= at + len &&
				      c + dof + dl <= at + len,
			      "a create context outside the contexts");
		if (nl == 4 && memcmp(q + c + no, "DH2Q", 4) == 0) {
			ck_assert_uint_eq(dl, 32);
			f->durables++;
			f->dh_now = true;
			memcpy(f->durable_guid, q + c + dof + 16, 16);
		}
		if (nl == 4 && memcmp(q + c + no, "DH2C", 4) == 0) {
			ck_assert_uint_eq(dl, 36);
			f->reclaims++;
			memcpy(f->reclaim_fid, q + c + dof, 16);
			memcpy(f->reclaim_guid, q + c + dof + 16, 16);
		}
		if (nl == 4 && memcmp(q + c + no, "RqLs", 4) == 0) {
			ck_assert_msg(dl == 32 || dl == 52, "a lease context of %zu bytes", dl);
			f->leases++;
			f->lease_len = dl;
			memcpy(f->lease_key, q + c + dof, 16);
			f->lease_state = smb2_get32(q + c + dof + 16);
		}
		if (!next)
			break;
		c += next;
	}
}

static uint32_t create(struct fake *f, const uint8_t *q, size_t qlen, int *hid)
{
	char path[2048], parent[2048], *slash;
	uint32_t disp = smb2_get32(q + SMB2_HDR + 36), opts = smb2_get32(q + SMB2_HDR + 40);
	bool want_dir = opts & 0x1, want_file = opts & 0x40;
	struct fake_node *n, *p;

	if (!create_path(q, qlen, path, sizeof(path)))
		return 0xC0000033u; /* OBJECT_NAME_INVALID */
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash) {
		*slash = 0;
		if (!(p = fake_lookup(f, parent)) || !p->dir)
			return 0xC000003Au; /* OBJECT_PATH_NOT_FOUND */
	}
	n = *path ? fake_lookup(f, path) : NULL;
	if (n && disp == 2)
		return ST_OBJECT_NAME_COLLISION;
	if (!n && *path && disp == 1)
		return 0xC0000034u; /* OBJECT_NAME_NOT_FOUND */
	if (n && n->dir && want_file)
		return 0xC00000BAu; /* FILE_IS_A_DIRECTORY */
	if (n && !n->dir && want_dir)
		return 0xC0000103u;		 /* NOT_A_DIRECTORY */
	if (!*path && !(n = fake_lookup(f, ""))) /* the share's root */
		n = fake_mknode(f, "", true, 0);
	if (!n && !(n = fake_mknode(f, path, want_dir, 0)))
		return 0xC000009Au; /* INSUFFICIENT_RESOURCES */
	if (disp == 5) {
		n->mtime = 0;
		n->size = 0;
		free(n->data);
		n->data = NULL;
	}
	if ((*hid = open_handle(f, n, opts & 0x1000)) < 0)
		return 0xC000009Au;
	lease_asked(f, q, qlen);
	return ST_OK;
}

/* FileDirectoryInformation entries (MS-FSCC 2.4.10) of what folder n holds, from the
 * handle's cursor on, f->page of them at most (0: all); the cursor moves past them. How many. */
static unsigned entries(struct fake *f, struct fake_handle *hd, struct pv_buf *out)
{
	const struct fake_node *n = &f->fs[hd->node];
	size_t pl = strlen(n->path), last = SIZE_MAX;
	const char *dots[2] = {".", ".."};
	unsigned listed = 0;
	int i;

	for (i = hd->cursor; i < FAKE_NODES && (!f->page || listed < f->page); i++) {
		const char *name;
		struct pv_buf u = PV_BUF_INIT;
		bool dir = true;
		uint64_t size = 0, mtime = 0;
		uint8_t *e;

		if (i < 0) {
			name = dots[i + 2];
		} else {
			const struct fake_node *c = &f->fs[i];

			if (!c->path || !*c->path ||
			    (pl && (strncmp(c->path, n->path, pl) != 0 || c->path[pl] != '/')))
				continue;
			name = c->path + (pl ? pl + 1 : 0);
			if (strchr(name, '/'))
				continue;
			dir = c->dir;
			size = c->size;
			mtime = c->mtime;
		}
		pv_utf16le(&u, name, strlen(name), 0);
		while (out->len % 8)
			pv_buf_add(out, "", 1);
		if (last != SIZE_MAX)
			put32((uint8_t *)out->data + last, (uint32_t)(out->len - last));
		last = out->len;
		e = grow(out, 64);
		smb2_put64(e + 24, mtime);
		smb2_put64(e + 40, size);
		smb2_put64(e + 48, size);
		put32(e + 56, dir ? 0x10 : 0x80);
		put32(e + 60, (uint32_t)u.len);
		pv_buf_add(out, u.data, u.len);
		pv_buf_release(&u, 0);
		listed++;
	}
	hd->cursor = i;
	return listed;
}

uint8_t fake_byte(uint64_t off)
{
	return (uint8_t)('A' + off % 23);
}

/* A WRITE's bytes (len at off, from the request q of qlen bytes) into node n. */
static void keep(struct fake *f, struct fake_node *n, const uint8_t *q, size_t qlen, uint64_t off,
		 uint32_t len)
{
	size_t at = smb2_get16(q + SMB2_HDR + 2), end = (size_t)(off + len);
	uint8_t *d;

	(void)f;
	ck_assert_msg(at <= qlen && len <= qlen - at, "a WRITE whose data is not in it");
	ck_assert_uint_le(off + len, 1u << 24); /* the tests write little */
	if (!n->data || end > n->size) {
		ck_assert_ptr_nonnull(d = realloc(n->data, end > n->size ? end : n->size));
		for (uint64_t i = n->data ? n->size : 0; i < (end > n->size ? end : n->size); i++)
			d[i] = fake_byte(i);
		n->data = d;
	}
	memcpy(n->data + off, q + at, len);
	if (end > n->size)
		n->size = end;
}

static void bad_handle(struct pv_buf *out, uint16_t cmd, uint64_t mid)
{
	msg(out, cmd, mid, 0xC0000008u, 7); /* INVALID_HANDLE */
	error_body(out);
}

/* READ (MS-SMB2 2.2.19, 2.2.20): the bytes kept, fake_byte() where none were written. */
static void read_file(struct fake *f, const uint8_t *q, size_t qlen, uint64_t mid, int related,
		      struct pv_buf *out)
{
	struct fake_handle *hd =
		qlen >= SMB2_HDR + 48 ? handle_of(f, q + SMB2_HDR + 16, related) : NULL;
	uint32_t len = hd ? smb2_get32(q + SMB2_HDR + 4) : 0;
	uint64_t off = hd ? smb2_get64(q + SMB2_HDR + 8) : 0;
	struct fake_node *n = hd ? &f->fs[hd->node] : NULL;
	uint64_t got;
	uint8_t *b;

	if (!hd)
		return bad_handle(out, SMB2_READ, mid);
	if (n->dir || off >= n->size) {
		msg(out, SMB2_READ, mid, n->dir ? 0xC0000010u : 0xC0000011u, 7); /* END_OF_FILE */
		error_body(out);
		return;
	}
	got = n->size - off < len ? n->size - off : len;
	msg(out, SMB2_READ, mid, ST_OK, 7);
	b = grow(out, 16 + got);
	put16(b, 17);
	b[2] = SMB2_HDR + 16;
	put32(b + 4, (uint32_t)got);
	for (uint64_t i = 0; i < got; i++)
		b[16 + i] = n->data ? n->data[off + i] : fake_byte(off + i);
}

/* QUERY_INFO (MS-SMB2 2.2.37): FileNetworkOpenInformation (MS-FSCC 2.4.29) only. */
static void query_info(struct fake *f, const uint8_t *q, uint64_t mid, int related,
		       struct pv_buf *out)
{
	struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 24, related);
	const struct fake_node *n;
	uint8_t *b;

	if (!hd)
		return bad_handle(out, SMB2_QUERY_INFO, mid);
	if (q[SMB2_HDR + 2] != 1 || q[SMB2_HDR + 3] != 0x22) {
		msg(out, SMB2_QUERY_INFO, mid, 0xC0000003u, 7); /* INVALID_INFO_CLASS */
		error_body(out);
		return;
	}
	n = &f->fs[hd->node];
	msg(out, SMB2_QUERY_INFO, mid, ST_OK, 7);
	b = grow(out, 8 + 56);
	put16(b, 9);
	put16(b + 2, SMB2_HDR + 8);
	put32(b + 4, 56);
	smb2_put64(b + 8 + 32, (n->size + 4095) / 4096 * 4096);
	smb2_put64(b + 8 + 40, n->size);
	put32(b + 8 + 48, n->dir ? 0x10 : 0x80);
}

/* SET_INFO of FileBasicInformation (MS-FSCC 2.4.7, 40 bytes: taken, nothing kept),
 * FileDispositionInformation (2.4.11: DeletePending, the file goes at its last close) or
 * FileEndOfFileInformation (2.4.13: the file's size). */
static void set_file(struct fake *f, struct fake_handle *hd, const uint8_t *q, size_t qlen,
		     uint64_t mid, struct pv_buf *out)
{
	size_t at = smb2_get16(q + SMB2_HDR + 8), len = smb2_get32(q + SMB2_HDR + 4);
	uint8_t cls = q[SMB2_HDR + 3];
	struct fake_node *n = &f->fs[hd->node];

	(void)f;
	if (at > qlen || len > qlen - at || len < (cls == 4 ? 40u : cls == 20 ? 8u : 1u)) {
		msg(out, SMB2_SET_INFO, mid, 0xC0000004u, 7); /* INFO_LENGTH_MISMATCH */
		error_body(out);
		return;
	}
	if (cls == 13) {
		hd->delete_on_close = q[at] & 1;
	} else if (cls == 4) {
		if (smb2_get64(q + at + 16)) /* LastWriteTime; 0: left as it is (MS-FSCC 2.4.7) */
			n->mtime = smb2_get64(q + at + 16);
	} else if (cls == 20) {
		uint64_t size = smb2_get64(q + at);

		ck_assert_uint_le(size, 1u << 24);
		if (n->data && size > n->size) {
			uint8_t *d;

			ck_assert_ptr_nonnull(d = realloc(n->data, size));
			for (uint64_t i = n->size; i < size; i++)
				d[i] = fake_byte(i);
			n->data = d;
		}
		n->size = size;
	}
	msg(out, SMB2_SET_INFO, mid, ST_OK, 7);
	put16(grow(out, 2), 2);
}

/* SET_INFO (MS-SMB2 2.2.39): FileRenameInformation (MS-FSCC 2.4.37), a folder's contents
 * moving with it; the classes of set_file. */
static void set_info(struct fake *f, const uint8_t *q, size_t qlen, uint64_t mid, int related,
		     struct pv_buf *out)
{
	struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 16, related);
	size_t at = smb2_get16(q + SMB2_HDR + 8), len = smb2_get32(q + SMB2_HDR + 4);
	char to[2048], *from;
	struct fake_node *n, *there = NULL;
	uint32_t st = ST_OK;
	size_t fl;

	if (!hd)
		return bad_handle(out, SMB2_SET_INFO, mid);
	n = &f->fs[hd->node];
	if (q[SMB2_HDR + 2] == 1 && q[SMB2_HDR + 3] < 64)
		f->setinfo[q[SMB2_HDR + 3]]++;
	if (q[SMB2_HDR + 2] == 1 &&
	    (q[SMB2_HDR + 3] == 4 || q[SMB2_HDR + 3] == 13 || q[SMB2_HDR + 3] == 20))
		return set_file(f, hd, q, qlen, mid, out);
	if (q[SMB2_HDR + 2] != 1 || q[SMB2_HDR + 3] != 10)
		st = 0xC0000003u;
	else if (at > qlen || len > qlen - at || len < 20 || smb2_get32(q + at + 16) > len - 20 ||
		 pv_utf16le_to_utf8(q + at + 20, smb2_get32(q + at + 16), to, sizeof(to)) < 0)
		st = 0xC000000Du; /* INVALID_PARAMETER */
	if (st == ST_OK) {
		for (char *p = to; *p; p++)
			if (*p == '\\')
				*p = '/';
		there = fake_lookup(f, to);
		if (there && there != n && !(q[at] & 1))
			st = ST_OBJECT_NAME_COLLISION;
		else if (there && there != n && there->dir)
			st = ST_ACCESS_DENIED;
	}
	if (st != ST_OK) {
		msg(out, SMB2_SET_INFO, mid, st, 7);
		error_body(out);
		return;
	}
	if (there && there != n) {
		free(there->path);
		free(there->data);
		*there = (struct fake_node){0};
	}
	ck_assert_ptr_nonnull(from = strdup(n->path));
	fl = strlen(from);
	for (int i = 0; i < FAKE_NODES; i++) { /* the node and what is below it */
		struct fake_node *c = &f->fs[i];
		char *np;

		if (!c->path || strncmp(c->path, from, fl) != 0 ||
		    (c->path[fl] && c->path[fl] != '/'))
			continue;
		ck_assert_int_ge(asprintf(&np, "%s%s", to, c->path + fl), 0);
		free(c->path);
		c->path = np;
	}
	free(from);
	msg(out, SMB2_SET_INFO, mid, ST_OK, 7);
	put16(grow(out, 2), 2);
}

/* What the client's NEGOTIATE says (MS-SMB2 2.2.3), kept for VALIDATE_NEGOTIATE: its
 * capabilities, ClientGuid, SecurityMode and dialects. */
static void client_said(struct fake *f, const uint8_t *q, size_t qlen)
{
	unsigned n = smb2_get16(q + SMB2_HDR + 2);

	ck_assert_uint_le(n, 16);
	ck_assert_uint_ge(qlen, SMB2_HDR + 36 + 2 * n);
	f->client_mode = smb2_get16(q + SMB2_HDR + 4);
	f->client_caps = smb2_get32(q + SMB2_HDR + 8);
	memcpy(f->client_guid, q + SMB2_HDR + 12, 16);
	f->nclient_dialects = n;
	for (unsigned i = 0; i < n; i++)
		f->client_dialects[i] = smb2_get16(q + SMB2_HDR + 36 + 2 * i);
}

/* What the client's 3.1.1 NEGOTIATE offers (MS-SMB2 2.2.3.1), read by the fake on its own:
 * the first hash algorithm, the ciphers, the signing algorithms. */
static void offered(struct fake *f, const uint8_t *q, size_t qlen)
{
	size_t at = smb2_get32(q + SMB2_HDR + 28);
	unsigned n = smb2_get16(q + SMB2_HDR + 32);

	for (unsigned i = 0; i < n; i++) {
		uint16_t type, len;
		const uint8_t *d;

		at = (at + 7) & ~(size_t)7;
		ck_assert_msg(at + 8 <= qlen, "a negotiate context outside the request");
		type = smb2_get16(q + at);
		len = smb2_get16(q + at + 2);
		d = q + at + 8;
		ck_assert_msg(at + 8 + len <= qlen, "a negotiate context's data outside");
		if (type == 1) {
			ck_assert_uint_eq(smb2_get16(d), 1);	  /* one hash */
			ck_assert_uint_eq(smb2_get16(d + 2), 32); /* 32 bytes of salt */
			f->client_hash = smb2_get16(d + 4);
		} else if (type == 2 || type == 8) {
			uint16_t *v = type == 2 ? f->client_ciphers : f->client_signs;
			unsigned *nv = type == 2 ? &f->nclient_ciphers : &f->nclient_signs;

			*nv = smb2_get16(d);
			ck_assert_uint_le(*nv, 8);
			for (unsigned k = 0; k < *nv; k++)
				v[k] = smb2_get16(d + 2 + 2 * k);
		}
		at += 8 + len;
	}
}

static bool has(const uint16_t *v, unsigned n, uint16_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A negotiate context of type with data (len bytes) appended to out, 8-byte aligned. */
static void context(struct pv_buf *out, uint16_t type, const void *data, size_t len)
{
	uint8_t *c;

	while (out->len % 8)
		pv_buf_add(out, "", 1);
	c = grow(out, 8 + len);
	put16(c, type);
	put16(c + 2, (uint16_t)len);
	memcpy(c + 8, data, len);
}

/* NEGOTIATE (MS-SMB2 2.2.4): the fake's dialect; for 3.1.1 its contexts (the preauth hash
 * SHA-512 with a salt, its cipher when it has one the client offered, else 0; its signing
 * algorithm when the client sent the context), and the preauth hash of both messages. */
static void negotiate(struct fake *f, const uint8_t *q, size_t qlen, uint64_t mid,
		      struct pv_buf *out)
{
	size_t at = msg(out, SMB2_NEGOTIATE, mid, ST_OK, 0), body;
	bool v311 = dialect_of(f) == 0x0311;
	uint8_t *b;

	client_said(f, q, qlen);
	if (v311) {
		memset(f->conn_preauth, 0, 64);
		pv_sha512_2(f->conn_preauth, 64, q, qlen, f->conn_preauth);
		offered(f, q, qlen);
	}
	body = out->len;
	b = grow(out, 64);
	put16(b, 65);
	f->server_mode = f->signing == SIGN_REQUIRED ? 3 : 1; /* signing enabled, required */
	put16(b + 2, f->server_mode);
	put16(b + 4, dialect_of(f));
	memcpy(b + 8, FAKE_SERVER_GUID, 16);
	/* large MTU (multi-credit); encryption for 3.0.x when it has a cipher */
	f->server_caps = 0x4 | (!v311 && dialect_of(f) >= 0x0300 && f->cipher ? 0x40 : 0);
	put32(b + 24, f->server_caps);
	put32(b + 28, 1 << 23);
	put32(b + 32, 1 << 23);
	put32(b + 36, 1 << 23);
	if (v311 && !f->no_context) {
		uint8_t pre[38] = {1, 0, 32, 0, 1, 0}, enc[4] = {1, 0}, sig[4] = {1, 0};
		uint16_t n = 1;

		memset(pre + 6, 0x5a, 32);
		put32((uint8_t *)out->data + body + 60, (uint32_t)(out->len - at));
		context(out, 1, pre, sizeof(pre));
		if (f->nclient_ciphers) {
			put16(enc + 2, has(f->client_ciphers, f->nclient_ciphers, f->cipher)
					       ? f->cipher
					       : 0);
			context(out, 2, enc, sizeof(enc));
			n++;
		}
		if (f->nclient_signs) {
			put16(sig + 2, f->sign_alg == 2 && has(f->client_signs, f->nclient_signs, 2)
					       ? 2
					       : 1);
			context(out, 8, sig, sizeof(sig));
			n++;
		}
		put16((uint8_t *)out->data + body + 6, n);
		if (!has(f->client_ciphers, f->nclient_ciphers, f->cipher))
			f->cipher = 0; /* none in common */
		if (!(f->sign_alg == 2 && has(f->client_signs, f->nclient_signs, 2)))
			f->sign_alg = 0;
	}
	if (v311) { /* the answer into the hash once whole: credit() sets its credits */
		f->hash_at = at;
		f->hash_pending = true;
	}
}

/* FLUSH (MS-SMB2 2.2.17), and LOCK (2.2.26) of one range: a lock overlapping another
 * handle's is refused (LOCK_NOT_GRANTED, as FAIL_IMMEDIATELY asks), an unlock frees it. */
static void lock_or_flush(struct fake *f, const struct smb2_hdr *h, const uint8_t *q, size_t qlen,
			  int related, struct pv_buf *out)
{
	struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 8, related);
	uint32_t st = ST_OK;

	if (!hd)
		return bad_handle(out, h->command, h->mid);
	if (h->command == SMB2_LOCK) {
		uint64_t off, len;
		uint32_t flags;
		int me = (int)(hd - f->h);

		ck_assert_uint_ge(qlen, SMB2_HDR + 48);
		ck_assert_uint_eq(smb2_get16(q + SMB2_HDR + 2), 1); /* one range */
		off = smb2_get64(q + SMB2_HDR + 24);
		len = smb2_get64(q + SMB2_HDR + 32);
		flags = smb2_get32(q + SMB2_HDR + 40);
		if (flags & 4) {	  /* unlock */
			st = 0xC000007Eu; /* RANGE_NOT_LOCKED */
			for (unsigned i = 0; i < f->nlocks; i++)
				if (f->locks[i].h == me && f->locks[i].off == off &&
				    f->locks[i].len == len) {
					f->locks[i] = f->locks[--f->nlocks];
					st = ST_OK;
					break;
				}
		} else {
			for (unsigned i = 0; i < f->nlocks; i++)
				if (f->locks[i].h != me &&
				    off < f->locks[i].off + f->locks[i].len &&
				    f->locks[i].off < off + len)
					st = 0xC0000055u; /* LOCK_NOT_GRANTED */
			if (st == ST_OK && f->nlocks < 16) {
				f->locks[f->nlocks].h = me;
				f->locks[f->nlocks].off = off;
				f->locks[f->nlocks++].len = len;
			}
		}
	}
	msg(out, h->command, h->mid, st, 7);
	if (st != ST_OK)
		error_body(out);
	else
		put16(grow(out, 4), 4);
}

/* A VALIDATE_NEGOTIATE_INFO request (MS-SMB2 2.2.31.4, in of inlen bytes) as a 3.x server
 * holds it (3.3.5.15.12): the output room for an answer, and what the client's NEGOTIATE
 * said, said again. */
static bool validate_request_ok(const struct fake *f, const uint8_t *in, size_t inlen,
				uint32_t max_out)
{
	unsigned n;

	if (max_out < 24 || inlen < 24)
		return false;
	n = smb2_get16(in + 22);
	if (inlen != 24 + 2 * (size_t)n || n != f->nclient_dialects)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (smb2_get16(in + 24 + 2 * i) != f->client_dialects[i])
			return false;
	return smb2_get32(in) == f->client_caps && memcmp(in + 4, f->client_guid, 16) == 0 &&
	       smb2_get16(in + 20) == f->client_mode;
}

/* IOCTL (MS-SMB2 2.2.31): FSCTL_VALIDATE_NEGOTIATE_INFO answered with what the fake
 * negotiated (2.2.32.6), or the connection ended where a server ends it; FSCTL_CREATE_OR_GET_
 * OBJECT_ID (MS-FSCC 2.3.8: 64 bytes of object ids); anything else NOT_SUPPORTED. */
static void ioctl(struct fake *f, const struct smb2_hdr *h, const uint8_t *q, size_t qlen,
		  struct pv_buf *out)
{
	uint32_t ctl, ioff, ilen;
	uint8_t *b;

	ck_assert_uint_ge(qlen, SMB2_HDR + 56);
	ctl = smb2_get32(q + SMB2_HDR + 4);
	ioff = smb2_get32(q + SMB2_HDR + 24);
	ilen = smb2_get32(q + SMB2_HDR + 28);
	ck_assert_msg(!ilen || (ioff <= qlen && ilen <= qlen - ioff), "IOCTL input outside");
	if (ctl == 0x000900c0u) {
		msg(out, SMB2_IOCTL, h->mid, ST_OK, 7);
		b = grow(out, 48 + 64);
		put16(b, 49);
		put32(b + 4, ctl);
		memcpy(b + 8, q + SMB2_HDR + 8, 16);
		put32(b + 32, SMB2_HDR + 48);
		put32(b + 36, 64);
		memset(b + 48, 0x0b, 64);
		return;
	}
	if (ctl != SMB2_FSCTL_VALIDATE_NEGOTIATE) {
		msg(out, SMB2_IOCTL, h->mid, ST_NOT_SUPPORTED, 7);
		error_body(out);
		return;
	}
	if (dialect_of(f) == 0x0311 ||
	    !validate_request_ok(f, q + ioff, ilen, smb2_get32(q + SMB2_HDR + 44))) {
		f->validate_bad++;
		f->hangup = true;
		return;
	}
	if (f->validate_status) {
		msg(out, SMB2_IOCTL, h->mid, f->validate_status, 7);
		error_body(out);
		return;
	}
	f->validated++;
	msg(out, SMB2_IOCTL, h->mid, ST_OK, 7);
	b = grow(out, 48 + 24);
	put16(b, 49);
	put32(b + 4, SMB2_FSCTL_VALIDATE_NEGOTIATE);
	memset(b + 8, 0xff, 16);
	put32(b + 32, SMB2_HDR + 48);
	put32(b + 36, 24);
	put32(b + 48, f->server_caps);
	memcpy(b + 52, FAKE_SERVER_GUID, 16);
	put16(b + 68, f->server_mode);
	put16(b + 70, dialect_of(f));
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
	if (h.command < 32)
		f->cmds[h.command]++;
	/* MS-SMB2 3.3.5.2.3: a message id is used once, and a request takes as many as its
	 * CreditCharge (one at least); 3.3.5.12: a READ charged one per 64 KiB it asks */
	if (h.command != SMB2_CANCEL) {
		uint16_t charge = h.credit_charge ? h.credit_charge : 1;
		uint32_t len = h.command == SMB2_READ && qlen >= SMB2_HDR + 8
				       ? smb2_get32(q + SMB2_HDR + 4)
				       : 0;
		bool reused = h.mid < f->next_mid;

		if (!reused)
			f->next_mid = h.mid + charge;
		if (reused || len > 65536u * charge) {
			f->bad_mids += reused;
			f->bad_charge += !reused;
			msg(out, h.command, h.mid, 0xC000000Du, 7); /* INVALID_PARAMETER */
			error_body(out);
			return;
		}
		f->large_reads += len > 65536u;
	}
	if (rel && *rstatus != ST_OK) {
		msg(out, h.command, h.mid, *rstatus, 7);
		error_body(out);
		return;
	}
	switch (h.command) {
	case SMB2_NEGOTIATE:
		negotiate(f, q, qlen, h.mid, out);
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
		put32(b + 4, f->encrypt_share ? 0x8000 : 0);
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
		b = grow(out, f->dh_now && f->grant_durable ? 88 + 32 : 88 + 1);
		put16(b, 89);
		if (f->dh_now && f->grant_durable) { /* a DH2Q answered (2.2.14.2.12): granted */
			put32(b + 80, SMB2_HDR + 88);
			put32(b + 84, 32);
			put16(b + 88 + 4, 16); /* NameOffset */
			put16(b + 88 + 6, 4);
			memcpy(b + 88 + 16, "DH2Q", 4);
			put16(b + 88 + 10, 24); /* DataOffset */
			put32(b + 88 + 12, 8);
			put32(b + 88 + 24, 60000); /* Timeout */
		}
		f->dh_now = false;
		smb2_put64(b + 48, f->fs[f->h[hid].node].size);
		put32(b + 56, f->fs[f->h[hid].node].dir ? 0x10 : 0x80);
		smb2_put64(b + 64, (uint64_t)hid + 1);
		smb2_put64(b + 72, 0xabcdef);
		(void)at;
		return;
	}
	case SMB2_WRITE: {
		struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 16, *related);
		uint32_t len = smb2_get32(q + SMB2_HDR + 4);
		uint64_t off = smb2_get64(q + SMB2_HDR + 8);

		if (!hd) {
			*rstatus = 0xC0000008u; /* INVALID_HANDLE */
			msg(out, SMB2_WRITE, h.mid, *rstatus, 7);
			error_body(out);
			return;
		}
		if (f->nwrites < sizeof(f->writes) / sizeof(f->writes[0]))
			f->writes[f->nwrites++] = off;
		keep(f, &f->fs[hd->node], q, qlen, off, len);
		msg(out, SMB2_WRITE, h.mid, ST_OK, 7);
		b = grow(out, 17);
		put16(b, 17);
		put32(b + 4, len);
		return;
	}
	case SMB2_CLOSE: {
		struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 8, *related);

		if (!hd) {
			msg(out, SMB2_CLOSE, h.mid, 0xC0000008u, 7);
			error_body(out);
			return;
		}
		if (hd->delete_on_close && f->fs[hd->node].dir) {
			/* a folder goes only when empty (STATUS_DIRECTORY_NOT_EMPTY, as NTFS) */
			const char *dp = f->fs[hd->node].path;
			size_t dl = strlen(dp);

			for (int i = 0; i < FAKE_NODES; i++)
				if (f->fs[i].path && strncmp(f->fs[i].path, dp, dl) == 0 &&
				    f->fs[i].path[dl] == '/') {
					hd->node = -1;
					msg(out, SMB2_CLOSE, h.mid, 0xC0000101u, 7);
					error_body(out);
					return;
				}
		}
		if (hd->delete_on_close) {
			free(f->fs[hd->node].path);
			free(f->fs[hd->node].data);
			f->fs[hd->node] = (struct fake_node){0};
		}
		hd->node = -1;
		msg(out, SMB2_CLOSE, h.mid, ST_OK, 7);
		put16(grow(out, 60), 60);
		return;
	}
	case SMB2_QUERY_DIRECTORY: {
		struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 8, *related);
		size_t start;

		if (hd && (q[SMB2_HDR + 3] & 1)) /* SMB2_RESTART_SCANS */
			hd->cursor = -2;
		if (!hd || (hd->listed && hd->cursor >= FAKE_NODES)) {
			msg(out, SMB2_QUERY_DIRECTORY, h.mid, hd ? ST_NO_MORE_FILES : 0xC0000008u,
			    7);
			error_body(out);
			return;
		}
		hd->listed = true;
		at = msg(out, SMB2_QUERY_DIRECTORY, h.mid, ST_OK, 7);
		grow(out, 8);
		start = out->len;
		if (!entries(f, hd, out)) {
			out->len = at;
			msg(out, SMB2_QUERY_DIRECTORY, h.mid, ST_NO_MORE_FILES, 7);
			error_body(out);
			return;
		}
		b = (uint8_t *)out->data + at + SMB2_HDR;
		put16(b, 9);
		put16(b + 2, SMB2_HDR + 8);
		put32(b + 4, (uint32_t)(out->len - start));
		return;
	}
	case SMB2_READ:
		read_file(f, q, qlen, h.mid, *related, out);
		return;
	case SMB2_FLUSH:
	case SMB2_LOCK:
		lock_or_flush(f, &h, q, qlen, *related, out);
		return;
	case SMB2_IOCTL:
		ioctl(f, &h, q, qlen, out);
		return;
	case SMB2_CHANGE_NOTIFY: {
		struct fake_handle *hd = handle_of(f, q + SMB2_HDR + 8, *related);
		struct pv_buf u = PV_BUF_INIT;

		if (!hd)
			return bad_handle(out, SMB2_CHANGE_NOTIFY, h.mid);
		/* it goes async at once, as a server's does, then something changed: "x" added
		 * (FILE_NOTIFY_INFORMATION, MS-FSCC 2.7.1) */
		fake_interim(f, SMB2_CHANGE_NOTIFY, h.mid);
		msg(out, SMB2_CHANGE_NOTIFY, h.mid, ST_OK, 7);
		pv_utf16le(&u, "x", 1, 0);
		b = grow(out, 8 + 12 + u.len);
		put16(b, 9);
		put16(b + 2, SMB2_HDR + 8);
		put32(b + 4, (uint32_t)(12 + u.len));
		put32(b + 8 + 4, 1); /* FILE_ACTION_ADDED */
		put32(b + 8 + 8, (uint32_t)u.len);
		memcpy(b + 8 + 12, u.data, u.len);
		pv_buf_release(&u, 0);
		return;
	}
	case SMB2_QUERY_INFO:
		query_info(f, q, h.mid, *related, out);
		return;
	case SMB2_SET_INFO:
		set_info(f, q, qlen, h.mid, *related, out);
		return;
	case SMB2_OPLOCK_BREAK: /* a LEASE_BREAK_ACK (2.2.24.2), answered (2.2.25.2) */
		ck_assert_msg(qlen >= SMB2_HDR + 36 && smb2_get16(q + SMB2_HDR) == 36,
			      "a LEASE_BREAK_ACK of %zu bytes", qlen - SMB2_HDR);
		f->lease_acks++;
		memcpy(f->ack_key, q + SMB2_HDR + 8, 16);
		f->ack_state = smb2_get32(q + SMB2_HDR + 24);
		msg(out, SMB2_OPLOCK_BREAK, h.mid, ST_OK, 7);
		b = grow(out, 36);
		put16(b, 36);
		memcpy(b + 8, f->ack_key, 16);
		put32(b + 24, f->ack_state);
		return;
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

/* A request after the logon (NEGOTIATE and SESSION_SETUP are never signed or encrypted) that
 * came in clear where encryption is required (of the session, or on the share: not its
 * TREE_CONNECT) is counted and refused (true: answer STATUS_ACCESS_DENIED, as Samba does).
 * One that came signed, or any when signing is required, is counted as signed right, signed
 * wrong or unsigned, and refused unless signed right. *sign: sign its answer (MS-SMB2
 * 3.3.4.1.1: the answer to a signed request is signed). */
static bool refused(struct fake *f, const uint8_t *m, size_t n, bool enc, bool *sign)
{
	uint16_t cmd = smb2_get16(m + 12);
	uint8_t sig[16];

	*sign = false;
	if (!f->keyed || cmd == SMB2_NEGOTIATE || cmd == SMB2_SESSION_SETUP || enc)
		return false;
	if (f->encrypt_session || (f->encrypt_share && cmd != SMB2_TREE_CONNECT &&
				   cmd != SMB2_LOGOFF && smb2_get32(m + 36) == 7)) {
		f->clear_refused++;
		return true;
	}
	if (!(smb2_get32(m + 16) & SMB2_FLAGS_SIGNED)) {
		if (f->signing != SIGN_REQUIRED)
			return false;
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

/* The transform header's nonce: 12 bytes for GCM, 11 for CCM (MS-SMB2 2.2.41). */
static size_t nonce_len(const struct fake *f)
{
	return gcm(f->cipher) ? 12 : 11;
}

/* An encrypted request (len bytes from its transform header), opened in place: whether it
 * opens (its Flags, its session, its size and its tag right). */
static bool open_request(struct fake *f, uint8_t *p, size_t len)
{
	uint32_t size = smb2_get32(p + 36);

	if (!f->c2s || smb2_get16(p + 42) != 1 || smb2_get64(p + 44) != 0x1122 || size != len - 52)
		return false;
	return pv_aead_open(f->c2s, p + 20, nonce_len(f), p + 20, 32, p + 52, size, p + 4) == 0;
}

/* The answer frame out encrypted into a transform (MS-SMB2 3.1.4.3): a nonce of the fake's
 * counter, the AAD from the nonce on. */
static void seal_answer(struct fake *f, struct pv_buf *out)
{
	struct pv_buf t = PV_BUF_INIT;
	uint8_t *h;

	h = grow(&t, 52);
	memcpy(h, "\xfdSMB", 4);
	smb2_put64(h + 20, ++f->nonce);
	put32(h + 36, (uint32_t)out->len);
	put16(h + 42, 1);
	smb2_put64(h + 44, 0x1122);
	pv_buf_add(&t, out->data, out->len);
	h = (uint8_t *)t.data;
	pv_aead_seal(f->s2c, h + 20, nonce_len(f), h + 20, 32, h + 52, out->len, h + 4);
	pv_buf_release(out, 0);
	*out = t;
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

/* The credits the answer a (to the request q) grants: 64 (f->credits 0), none (below 0), or
 * as a stingy server grants them (f->credits k above 0): k in the first answer, then one
 * when the client would otherwise be left with none, else none (MS-SMB2 3.3.1.2 asks no
 * more than that). A request the client had no credit for is counted in f->overdrawn. */
static void credit(struct fake *f, const uint8_t *q, uint8_t *a)
{
	uint16_t charge = smb2_get16(q + 6), g = 64;

	if (!f->credits)
		return;
	if (!f->balance_set) {
		f->balance = 1;
		f->balance_set = true;
	}
	charge = charge ? charge : 1;
	if (f->balance < charge)
		f->overdrawn++;
	f->balance -= charge;
	if (f->credits < 0)
		g = 0;
	else if (!f->granted)
		g = (uint16_t)f->credits;
	else
		g = f->balance < 1 ? 1 : 0;
	f->granted += g;
	f->balance += g;
	put16(a + 14, g);
}

static void *serve(void *arg)
{
	struct fake *f = arg;
	uint8_t *buf = malloc(1 << 21);

	for (;;) {
		uint8_t nb[4], *in = buf;
		size_t len, off = 0;
		struct pv_buf out = PV_BUF_INIT;
		struct fake_req q = {0};
		int related = -1;
		uint32_t rstatus = ST_OK;
		size_t last = SIZE_MAX;
		enum fake_act a = FAKE_SEND;
		bool sign[64], enc = false;
		unsigned nmsg = 0;

		if (!buf || !read_all(f->fd, nb, 4))
			break;
		len = (size_t)nb[1] << 16 | (size_t)nb[2] << 8 | nb[3];
		if (len < SMB2_HDR || len > (1 << 21) || !read_all(f->fd, in, len))
			break;
		if (memcmp(in, "\xfdSMB", 4) == 0) {
			/* an encrypted request that does not open: Samba drops the connection */
			if (len < 52 + SMB2_HDR || !open_request(f, in, len)) {
				f->enc_bad++;
				break;
			}
			f->enc_ok++;
			enc = true;
			in += 52;
			len -= 52;
		}
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

				if (f->in_hook)
					f->in_hook(f, in + off, mlen);
				if (refused(f, in + off, mlen, enc, &sign_it)) {
					rstatus = ST_ACCESS_DENIED;
					msg(&out, cmd, smb2_get64(in + off + 24), rstatus, 0);
					error_body(&out);
				} else {
					answer(f, in + off, mlen, &related, &rstatus, &out);
				}
				if (f->hangup) /* nothing more is answered */
					break;
				/* the end of a logon: signed unless the fake signs nothing (3.1.1
				 * always signs it) */
				if (cmd == SMB2_SESSION_SETUP && f->logons_ok > ok_before &&
				    f->keyed &&
				    (f->signing != SIGN_NONE || dialect_of(f) == 0x0311))
					sign_it = true;
				if (nmsg < 64)
					sign[nmsg++] = sign_it && !enc;
				credit(f, in + off, (uint8_t *)out.data + last);
				if (f->hash_pending) { /* 3.1.1: an answer into the preauth hash */
					uint8_t *h = cmd == SMB2_NEGOTIATE ? f->conn_preauth
									   : f->preauth;

					pv_sha512_2(h, 64, out.data + f->hash_at,
						    out.len - f->hash_at, h);
					f->hash_pending = false;
				}
			}
			if (!next || next > len - off - SMB2_HDR)
				break;
			off += next;
		}
		if (f->hangup) { /* a server that ends the connection answers nothing */
			pv_buf_release(&out, 0);
			break;
		}
		sign_answers(f, &out, sign, nmsg);
		/* the answer to an encrypted request goes encrypted (MS-SMB2 3.3.4.1.4) */
		if (enc && f->s2c) {
			if (f->plain_cmd && f->plain_cmd == q.cmd)
				f->plain_cmd = 0; /* the fault, once: this one in clear */
			else
				seal_answer(f, &out);
		}
		if (f->hook) {
			a = f->hook(f, &q, &out);
			f->hooked++;
		}
		if (a == FAKE_SEND)
			fake_send_frame(f, out.data, out.len);
		pv_buf_release(&out, 0);
		if (a == FAKE_HANGUP)
			break;
	}
	free(buf);
	shutdown(f->fd, SHUT_RDWR);
	return NULL;
}

/* A fake server holding the folder u1 of share fsroot1; returns the client's fd. */
int fake_start(struct fake *f, fake_hook hook, long arg)
{
	int sv[2];

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < FAKE_HANDLES; i++)
		f->h[i].node = -1;
	f->hook = hook;
	f->arg = arg;
	memcpy(f->schal, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8);
	fake_mknode(f, "u1", true, 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	f->fd = sv[1];
	return sv[0];
}

void fake_run(struct fake *f)
{
	ck_assert_int_eq(pthread_create(&f->thread, NULL, serve, f), 0);
}

void fake_join(struct fake *f)
{
	if (f->joined)
		return;
	pthread_join(f->thread, NULL);
	close(f->fd);
	f->joined = true;
}

void fake_stop(struct fake *f)
{
	fake_join(f);
	fake_unkey(f);
	pv_buf_release(&f->nego, 0);
	pv_buf_release(&f->chal, 0);
	pv_buf_release(&f->mech_types, 0);
	for (int i = 0; i < FAKE_NODES; i++) {
		free(f->fs[i].path);
		free(f->fs[i].data);
	}
	if (f->capture)
		fclose(f->capture);
}

/* ---- hooks both suites use ---- */

enum fake_act fake_tamper(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
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
	return FAKE_SEND;
}

void fake_flip_mic(struct fake *f, uint8_t *m, size_t len)
{
	uint8_t *a = len > SMB2_HDR ? memmem(m + SMB2_HDR, len - SMB2_HDR, "NTLMSSP\0\3", 9) : NULL;

	if (f->done || smb2_get16(m + 12) != SMB2_SESSION_SETUP || !a || (size_t)(m + len - a) < 88)
		return;
	a[72 + 5] ^= 0x01;
	f->done++;
}

enum fake_act fake_validate_tamper(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t *m = (uint8_t *)reply->data, *o = m + SMB2_HDR + 48;

	if (f->done || q->cmd != SMB2_IOCTL || reply->len < SMB2_HDR + 48 + 24 ||
	    smb2_get32(m + SMB2_HDR + 4) != SMB2_FSCTL_VALIDATE_NEGOTIATE || smb2_get32(m + 8))
		return FAKE_SEND;
	f->done++;
	if (f->arg == 0)
		put32(o, smb2_get32(o) ^ 0x40);
	else if (f->arg == 1)
		o[4] ^= 0x01;
	else if (f->arg == 2)
		put16(o + 20, smb2_get16(o + 20) ^ 0x2);
	else
		put16(o + 22, smb2_get16(o + 22) == 0x0302 ? 0x0300 : 0x0302);
	if (smb2_get32(m + 16) & SMB2_FLAGS_SIGNED)
		fake_mac(f, m, reply->len, m + 48);
	return FAKE_SEND;
}

/* The request named by arg (a command) is held: keep-alives (f->arg2 0) or interim answers. */
enum fake_act fake_hold_keepalive(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd != f->arg)
		return FAKE_SEND;
	fake_stall(f, 0, 0);
	return FAKE_HANGUP;
}

enum fake_act fake_hold_pending(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd != f->arg)
		return FAKE_SEND;
	fake_stall(f, q->cmd, q->mid);
	return FAKE_HANGUP;
}

/* arg selects the fault, applied to the answer of the command f->... (see each test). */
enum fake_act fake_short_frame(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)q;
	(void)reply;
	fake_send_frame(f, "\xfeSMB@\0\0\0\0\0", (size_t)f->arg); /* 10 bytes at most */
	return FAKE_DONE;
}

/* NetBIOS headers that are not a session message of a size we take (f->arg picks). */
enum fake_act fake_bad_netbios(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	static const uint8_t heads[][4] = {
		{0x82, 0, 0, 0},	  /* positive session response: not on a session */
		{0x85, 0, 0, 4},	  /* a keep-alive with a length */
		{0x00, 0x10, 0x10, 1},	  /* 1 MiB + 4 KiB + 1: a READ of 1 MiB's frame + 1 */
		{0x00, 0xff, 0xff, 0xff}, /* 16 MiB - 1 */
	};

	(void)q;
	fake_send_raw(f, heads[f->arg], 4);
	fake_send_raw(f, reply->data, reply->len);
	return FAKE_DONE;
}

/* The frame of the answer to command f->arg cut: its NetBIOS length says more than comes,
 * then the server closes (or, with the command negated, waits). */
enum fake_act fake_cut_frame(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t h[4] = {0, 0, 0x10, 0}; /* 4 KiB announced */

	if (q->cmd != labs(f->arg))
		return FAKE_SEND;
	fake_send_raw(f, h, 4);
	fake_send_raw(f, reply->data, reply->len < 100 ? reply->len : 100);
	if (f->arg < 0)
		fake_client_gone(f, 5000);
	return FAKE_HANGUP;
}

/* The offset in reply of the first message answering cmd (a compound's too), or -1. */
static long message_of(const struct pv_buf *reply, uint16_t cmd)
{
	for (size_t o = 0; o + SMB2_HDR <= reply->len && reply->data[0] == (char)0xfe;) {
		const uint8_t *m = (const uint8_t *)reply->data + o;
		uint32_t next = smb2_get32(m + 20);

		if (smb2_get16(m + 12) == cmd)
			return (long)o;
		if (!next)
			break;
		o += next;
	}
	return -1;
}

enum fake_act fake_poke(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	size_t at = (size_t)(f->arg >> 16 & 0xffff);
	long m = message_of(reply, (uint16_t)(f->arg & 0xffff));

	(void)q;
	if (m < 0 || (size_t)m + at + 4 > reply->len)
		return FAKE_SEND;
	put32((uint8_t *)reply->data + m + at, (uint32_t)((unsigned long)f->arg >> 32));
	return FAKE_SEND;
}

enum fake_act fake_lease_break(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	struct smb2_hdr h = {0, SMB2_OPLOCK_BREAK, 0, ST_OK, SMB2_FLAGS_RESPONSE, 0,
			     0, UINT64_MAX,	   0};
	uint8_t m[SMB2_HDR + 44] = {0}, *b = m + SMB2_HDR;

	if (q->cmd != SMB2_CREATE || !f->leases || f->done)
		return FAKE_SEND;
	f->done++;
	fake_send_frame(f, reply->data, reply->len);
	smb2_hdr_put(m, &h);
	put16(b, 44);
	put16(b + 2, 1); /* NewEpoch */
	put32(b + 4, 1); /* ACK_REQUIRED */
	memcpy(b + 8, f->lease_key, 16);
	put32(b + 24, f->lease_state);
	put32(b + 28, (uint32_t)f->arg); /* NewLeaseState */
	fake_send_frame(f, m, sizeof(m));
	return FAKE_DONE;
}

/* The answer to command f->arg cut to its header and f->arg >> 16 bytes of body. */
enum fake_act fake_cut_body(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	long m = message_of(reply, (uint16_t)(f->arg & 0xffff));

	(void)q;
	if (m < 0)
		return FAKE_SEND;
	put32((uint8_t *)reply->data + m + 20, 0); /* no next message */
	reply->len = (size_t)m + SMB2_HDR + (size_t)(f->arg >> 16);
	return FAKE_SEND;
}

enum fake_act fake_tf_tamper(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t *p = (uint8_t *)reply->data;
	int kind = (int)(f->arg >> 16);

	if (f->done || q->cmd != (f->arg & 0xffff) || reply->len < 52 ||
	    memcmp(p, "\xfdSMB", 4) != 0)
		return FAKE_SEND;
	f->done++;
	switch (kind) {
	case TF_FLIP:
		p[reply->len - 1] ^= 0x40;
		break;
	case TF_NONCE:
		p[20] ^= 0x01;
		break;
	case TF_SID:
		smb2_put64(p + 44, 0x9999);
		break;
	case TF_SHORT:
		put32(p + 36, smb2_get32(p + 36) + 10);
		break;
	case TF_TAG:
		p[4] ^= 0x01;
		break;
	case TF_FLAGS:
		put16(p + 42, 0);
		break;
	}
	return FAKE_SEND;
}

enum fake_act fake_forge_logon(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	static const uint8_t zero[16];
	uint8_t *m = (uint8_t *)reply->data;

	if (q->cmd != SMB2_SESSION_SETUP || f->done || reply->len < SMB2_HDR + 8)
		return FAKE_SEND;
	f->done++;
	/* the answer: STATUS_SUCCESS, no session flags, no token (StructureSize 9: one byte of
	 * buffer) */
	reply->len = SMB2_HDR + 9;
	m = (uint8_t *)reply->data;
	put32(m + 8, ST_OK);
	put32(m + 16, smb2_get32(m + 16) & ~SMB2_FLAGS_SIGNED);
	memset(m + 48, 0, 16);
	memset(m + SMB2_HDR, 0, 9);
	put16(m + SMB2_HDR, 9);
	put16(m + SMB2_HDR + 4, SMB2_HDR + 8);
	if (f->arg == FORGE_ZERO_KEY) {
		fake_key(f, zero);
		put32(m + 16, smb2_get32(m + 16) | SMB2_FLAGS_SIGNED);
		fake_mac(f, m, reply->len, m + 48);
	}
	return FAKE_SEND;
}
