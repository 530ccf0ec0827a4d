/* smb/ntlm.c: NTLMv2 logon messages in SPNEGO; see ntlm.h. Written from RFC 1320/1321/2104,
 * MS-NLMP and RFC 4178. */
#include "smb/ntlm.h"

#include "util/utf16.h"

#include <string.h>

/* ---- MD4 and MD5: the same Merkle-Damgard frame, little-endian ---- */

static uint32_t rol(uint32_t x, unsigned s)
{
	return (x << s) | (x >> (32 - s));
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void md4_block(uint32_t h[4], const uint8_t *blk)
{
	static const unsigned s1[4] = {3, 7, 11, 19}, s2[4] = {3, 5, 9, 13}, s3[4] = {3, 9, 11, 15};
	static const unsigned k3[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
	uint32_t x[16], a = h[0], b = h[1], c = h[2], d = h[3], t;

	for (int i = 0; i < 16; i++)
		x[i] = le32(blk + 4 * i);
	for (int i = 0; i < 16; i++) {
		t = rol(a + ((b & c) | (~b & d)) + x[i], s1[i & 3]);
		a = d, d = c, c = b, b = t;
	}
	for (int i = 0; i < 16; i++) {
		t = rol(a + ((b & c) | (b & d) | (c & d)) + x[(i & 3) * 4 + (i >> 2)] + 0x5A827999u,
			s2[i & 3]);
		a = d, d = c, c = b, b = t;
	}
	for (int i = 0; i < 16; i++) {
		t = rol(a + (b ^ c ^ d) + x[k3[i]] + 0x6ED9EBA1u, s3[i & 3]);
		a = d, d = c, c = b, b = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d;
}

static void md5_block(uint32_t h[4], const uint8_t *blk)
{
	static const uint32_t k[64] = {
		0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
		0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
		0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
		0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
		0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
		0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
		0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
		0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
		0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
		0xeb86d391};
	static const unsigned s[4][4] = {
		{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
	uint32_t x[16], a = h[0], b = h[1], c = h[2], d = h[3];

	for (int i = 0; i < 16; i++)
		x[i] = le32(blk + 4 * i);
	for (int i = 0; i < 64; i++) {
		uint32_t f, t;
		int g, r = i >> 4;

		switch (r) {
		case 0:
			f = (b & c) | (~b & d), g = i;
			break;
		case 1:
			f = (d & b) | (~d & c), g = (5 * i + 1) & 15;
			break;
		case 2:
			f = b ^ c ^ d, g = (3 * i + 5) & 15;
			break;
		default:
			f = c ^ (b | ~d), g = (7 * i) & 15;
			break;
		}
		t = d;
		d = c;
		c = b;
		b = b + rol(a + f + k[i] + x[g], s[r][i & 3]);
		a = t;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d;
}

/* Digest of the concatenation of two pieces (HMAC needs exactly that). */
static void md_digest(void (*block)(uint32_t *, const uint8_t *), const void *p1, size_t l1,
		      const void *p2, size_t l2, uint8_t out[16])
{
	uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
	uint8_t blk[64];
	size_t fill = 0;
	uint64_t bits = (uint64_t)(l1 + l2) * 8;
	const uint8_t *parts[2] = {p1, p2};
	size_t lens[2] = {l1, l2};

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < lens[k]; i++) {
			blk[fill++] = parts[k][i];
			if (fill == 64) {
				block(h, blk);
				fill = 0;
			}
		}
	blk[fill++] = 0x80;
	if (fill > 56) {
		memset(blk + fill, 0, 64 - fill);
		block(h, blk);
		fill = 0;
	}
	memset(blk + fill, 0, 56 - fill);
	for (int i = 0; i < 8; i++)
		blk[56 + i] = (uint8_t)(bits >> (8 * i));
	block(h, blk);
	for (int i = 0; i < 4; i++)
		put32(out + 4 * i, h[i]);
	/* the block held the input (a password for MD4, a key pad for HMAC) */
	explicit_bzero(blk, sizeof(blk));
	explicit_bzero(h, sizeof(h));
}

void pv_md4(const void *data, size_t len, uint8_t out[16])
{
	md_digest(md4_block, data, len, NULL, 0, out);
}

void pv_md5(const void *data, size_t len, uint8_t out[16])
{
	md_digest(md5_block, data, len, NULL, 0, out);
}

void pv_hmac_md5(const void *key, size_t klen, const void *data, size_t len, uint8_t out[16])
{
	uint8_t k[64] = {0}, pad[64], inner[16];

	if (klen > 64)
		pv_md5(key, klen, k);
	else
		memcpy(k, key, klen);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	md_digest(md5_block, pad, 64, data, len, inner);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	md_digest(md5_block, pad, 64, inner, 16, out);
	/* the key is an NT hash or NTOWFv2 here */
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
	explicit_bzero(inner, sizeof(inner));
}

int pv_ntowfv2(const char *password, size_t plen, const char *user, const char *domain,
	       uint8_t out[16])
{
	struct pv_buf pw = PV_BUF_INIT, ud = PV_BUF_INIT;
	uint8_t nt[16];
	int r = -1;

	pv_buf_secret(&pw);
	if (pv_utf16le(&pw, password, plen, 0) == 0 &&
	    pv_utf16le(&ud, user, strlen(user), 1) == 0 &&
	    pv_utf16le(&ud, domain, strlen(domain), 0) == 0) {
		pv_md4(pw.data ? pw.data : "", pw.len, nt);
		pv_hmac_md5(nt, 16, ud.data ? ud.data : "", ud.len, out);
		explicit_bzero(nt, sizeof(nt));
		r = 0;
	}
	pv_buf_release(&pw, 1);
	pv_buf_release(&ud, 0);
	return r;
}

/* ---- DER, just enough for SPNEGO ---- */

/* Append tag and length of a value of len bytes; -1 beyond the 3 length bytes we write and
 * read (16 MiB, far above any SMB2 security buffer): refused, never cut. */
static int der_head(struct pv_buf *b, uint8_t tag, size_t len)
{
	uint8_t h[6];
	size_t n = 0;

	if (len > 0xFFFFFF)
		return -1;
	h[n++] = tag;
	if (len < 0x80)
		h[n++] = (uint8_t)len;
	else if (len < 0x100)
		h[n++] = 0x81, h[n++] = (uint8_t)len;
	else if (len < 0x10000)
		h[n++] = 0x82, h[n++] = (uint8_t)(len >> 8), h[n++] = (uint8_t)len;
	else
		h[n++] = 0x83, h[n++] = (uint8_t)(len >> 16), h[n++] = (uint8_t)(len >> 8),
		h[n++] = (uint8_t)len;
	return pv_buf_add(b, h, n);
}

static size_t der_size(size_t len)
{
	return 1 + (len < 0x80 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : 4) + len;
}

/* Read one element at *p (below end): its tag, and its value's bounds. */
static int der_next(const uint8_t **p, const uint8_t *end, uint8_t *tag, const uint8_t **val,
		    size_t *len)
{
	const uint8_t *q = *p;
	size_t l;

	if (end - q < 2)
		return -1;
	*tag = *q++;
	l = *q++;
	if (l & 0x80) {
		int n = (int)(l & 0x7f);

		if (n < 1 || n > 3 || end - q < n)
			return -1;
		for (l = 0; n-- > 0;)
			l = l << 8 | *q++;
	}
	if ((size_t)(end - q) < l)
		return -1;
	*val = q;
	*len = l;
	*p = q + l;
	return 0;
}

static const uint8_t OID_SPNEGO[] = {0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02};
static const uint8_t OID_NTLMSSP[] = {0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04,
				      0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};

/* ---- NTLMSSP ---- */

#define NTLMSSP_NEGOTIATE_UNICODE     0x00000001u
#define NTLMSSP_REQUEST_TARGET	      0x00000004u
#define NTLMSSP_NEGOTIATE_SIGN	      0x00000010u
#define NTLMSSP_NEGOTIATE_NTLM	      0x00000200u
#define NTLMSSP_NEGOTIATE_ALWAYS_SIGN 0x00008000u
#define NTLMSSP_NEGOTIATE_EXTENDED    0x00080000u
#define NTLMSSP_NEGOTIATE_TARGET_INFO 0x00800000u
#define NTLMSSP_NEGOTIATE_128	      0x20000000u
#define NTLMSSP_NEGOTIATE_56	      0x80000000u
#define NEG_FLAGS                                                                                  \
	(NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |             \
	 NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN | NTLMSSP_NEGOTIATE_EXTENDED |     \
	 NTLMSSP_NEGOTIATE_TARGET_INFO | NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_56)
#define AV_EOL	     0
#define AV_TIMESTAMP 7

int pv_ntlm_negotiate(struct pv_buf *out)
{
	uint8_t msg[32] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 1};
	size_t mech = sizeof(OID_NTLMSSP), tok = sizeof(msg);
	/* NegTokenInit ::= SEQUENCE { mechTypes [0] SEQUENCE OF OID, mechToken [2] OCTET STRING }
	 */
	size_t types = der_size(der_size(mech)), token = der_size(der_size(tok));
	size_t seq = der_size(types + token), init = der_size(seq);

	put32(msg + 12, NEG_FLAGS);
	/* domain and workstation fields empty, pointing at the end of the message */
	put32(msg + 20, 32);
	put32(msg + 28, 32);
	pv_buf_reset(out);
	if (der_head(out, 0x60, sizeof(OID_SPNEGO) + init) < 0 ||
	    pv_buf_add(out, OID_SPNEGO, sizeof(OID_SPNEGO)) < 0 || der_head(out, 0xa0, seq) < 0 ||
	    der_head(out, 0x30, types + token) < 0 || der_head(out, 0xa0, der_size(mech)) < 0 ||
	    der_head(out, 0x30, mech) < 0 || pv_buf_add(out, OID_NTLMSSP, mech) < 0 ||
	    der_head(out, 0xa2, der_size(tok)) < 0 || der_head(out, 0x04, tok) < 0 ||
	    pv_buf_add(out, msg, tok) < 0)
		return -1;
	return 0;
}

/* The responseToken of a NegTokenResp ([1] SEQUENCE { ..., [2] OCTET STRING, ... }). */
static int spnego_token(const uint8_t *tok, size_t len, const uint8_t **out, size_t *olen)
{
	const uint8_t *p = tok, *v, *q, *end = tok + len;
	uint8_t tag;
	size_t l;

	if (der_next(&p, end, &tag, &v, &l) < 0 || tag != 0xa1)
		return -1;
	p = v;
	end = v + l;
	if (der_next(&p, end, &tag, &v, &l) < 0 || tag != 0x30)
		return -1;
	p = v;
	end = v + l;
	while (p < end) {
		if (der_next(&p, end, &tag, &v, &l) < 0)
			return -1;
		if (tag != 0xa2)
			continue;
		q = v;
		if (der_next(&q, v + l, &tag, out, olen) < 0 || tag != 0x04)
			return -1;
		return 0;
	}
	return -1;
}

int pv_ntlm_parse_challenge(const uint8_t *tok, size_t len, struct pv_ntlm_challenge *c)
{
	const uint8_t *m = tok;
	size_t n = len;
	uint32_t ilen, ioff;

	memset(c, 0, sizeof(*c));
	if ((n < 8 || memcmp(m, "NTLMSSP", 8) != 0) && spnego_token(tok, len, &m, &n) < 0)
		return -1;
	if (n < 48 || memcmp(m, "NTLMSSP", 8) != 0 || le32(m + 8) != 2)
		return -1;
	c->flags = le32(m + 20);
	memcpy(c->challenge, m + 24, 8);
	ilen = (uint32_t)m[40] | (uint32_t)m[41] << 8;
	ioff = le32(m + 44);
	if (ioff > n || ilen > n - ioff)
		return -1;
	c->target_info = m + ioff;
	c->target_info_len = ilen;
	/* walk the AV pairs: they must end with MsvAvEOL inside the field */
	for (size_t i = 0;;) {
		uint16_t id, al;

		if (ilen - i < 4)
			return -1;
		id = (uint16_t)(c->target_info[i] | c->target_info[i + 1] << 8);
		al = (uint16_t)(c->target_info[i + 2] | c->target_info[i + 3] << 8);
		i += 4;
		if (ilen - i < al)
			return -1;
		if (id == AV_EOL)
			break;
		if (id == AV_TIMESTAMP && al == 8) {
			c->has_timestamp = 1;
			c->timestamp = (uint64_t)le32(c->target_info + i) |
				       (uint64_t)le32(c->target_info + i + 4) << 32;
		}
		i += al;
	}
	return 0;
}

int pv_ntlmv2_response(const uint8_t key[16], const uint8_t schal[8], uint64_t time,
		       const uint8_t cchal[8], const uint8_t *info, size_t ilen, struct pv_buf *out)
{
	struct pv_buf t = PV_BUF_INIT;
	uint8_t head[28] = {1, 1}, proof[16];
	int r = -1;

	for (int i = 0; i < 8; i++)
		head[8 + i] = (uint8_t)(time >> (8 * i));
	memcpy(head + 16, cchal, 8);
	/* temp = 1 1 Z(6) time cchal Z(4) info Z(4), after the server challenge for the proof */
	if (pv_buf_add(&t, schal, 8) == 0 && pv_buf_add(&t, head, sizeof(head)) == 0 &&
	    (ilen == 0 || pv_buf_add(&t, info, ilen) == 0) && pv_buf_add(&t, "\0\0\0", 4) == 0) {
		pv_hmac_md5(key, 16, t.data, t.len, proof);
		if (pv_buf_add(out, proof, 16) == 0 && pv_buf_add(out, t.data + 8, t.len - 8) == 0)
			r = 0;
	}
	pv_buf_release(&t, 0);
	return r;
}

/* Write a security buffer field (len, maxlen, offset) for data placed at off. MS-NLMP 2.2.1.3
 * gives Len and MaxLen 16 bits and BufferOffset 32: -1 when len or off does not fit, so a long
 * field is refused rather than sent with its length cut (the server would read garbage). */
static int field(uint8_t *p, size_t len, size_t off)
{
	if (len > 0xFFFF || off > 0xFFFFFFFFu)
		return -1;
	p[0] = p[2] = (uint8_t)len;
	p[1] = p[3] = (uint8_t)(len >> 8);
	put32(p + 4, (uint32_t)off);
	return 0;
}

int pv_ntlm_authenticate(const struct pv_ntlm_challenge *c, const char *user, const char *domain,
			 const char *password, size_t plen, uint64_t now, const uint8_t cchal[8],
			 struct pv_buf *out)
{
	struct pv_buf lm = PV_BUF_INIT, nt = PV_BUF_INIT, dom = PV_BUF_INIT, usr = PV_BUF_INIT;
	struct pv_buf msg = PV_BUF_INIT;
	uint8_t key[16], head[64] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 3};
	int r = -1;

	if (pv_ntowfv2(password, plen, user, domain, key) < 0)
		goto out;
	if (pv_ntlmv2_response(key, c->challenge, c->has_timestamp ? c->timestamp : now, cchal,
			       c->target_info, c->target_info_len, &nt) < 0)
		goto out;
	if (c->has_timestamp) { /* MS-NLMP 3.1.5.1.2: then LmChallengeResponse is Z(24) */
		static const uint8_t z[24];

		if (pv_buf_add(&lm, z, 24) < 0)
			goto out;
	} else {
		uint8_t both[16], mac[16];

		memcpy(both, c->challenge, 8);
		memcpy(both + 8, cchal, 8);
		pv_hmac_md5(key, 16, both, 16, mac);
		if (pv_buf_add(&lm, mac, 16) < 0 || pv_buf_add(&lm, cchal, 8) < 0)
			goto out;
	}
	if (pv_utf16le(&dom, domain, strlen(domain), 0) < 0 ||
	    pv_utf16le(&usr, user, strlen(user), 0) < 0)
		goto out;
	{
		/* LmChallengeResponse, NtChallengeResponse, DomainName, UserName, Workstation
		 * (empty), EncryptedRandomSessionKey (empty): fields 8 bytes apart from offset 12.
		 * NtChallengeResponse is 48 bytes longer than the server's target info, so a
		 * target info of more than 65487 bytes cannot be answered. */
		const size_t lens[6] = {lm.len, nt.len, dom.len, usr.len, 0, 0};
		size_t off = sizeof(head);

		for (int i = 0; i < 6; off += lens[i], i++)
			if (field(head + 12 + 8 * i, lens[i], off) < 0) {
				r = -2;
				goto out;
			}
		put32(head + 60, NEG_FLAGS & (c->flags | NTLMSSP_NEGOTIATE_UNICODE));
	}
	if (pv_buf_add(&msg, head, sizeof(head)) < 0 || pv_buf_add(&msg, lm.data, lm.len) < 0 ||
	    pv_buf_add(&msg, nt.data, nt.len) < 0 ||
	    (dom.len && pv_buf_add(&msg, dom.data, dom.len) < 0) ||
	    pv_buf_add(&msg, usr.data, usr.len) < 0)
		goto out;
	/* NegTokenResp ::= [1] SEQUENCE { responseToken [2] OCTET STRING } */
	pv_buf_reset(out);
	if (der_head(out, 0xa1, der_size(der_size(der_size(msg.len)))) < 0 ||
	    der_head(out, 0x30, der_size(der_size(msg.len))) < 0 ||
	    der_head(out, 0xa2, der_size(msg.len)) < 0 || der_head(out, 0x04, msg.len) < 0 ||
	    pv_buf_add(out, msg.data, msg.len) < 0)
		goto out;
	r = 0;
out:
	explicit_bzero(key, sizeof(key));
	pv_buf_release(&lm, 0);
	pv_buf_release(&nt, 0);
	pv_buf_release(&dom, 0);
	pv_buf_release(&usr, 0);
	pv_buf_release(&msg, 0);
	return r;
}
