/* smb/ntlm.c: NTLMv2 logon messages in SPNEGO; see ntlm.h. Written from MS-NLMP and RFC 4178;
 * MD4 and HMAC-MD5 come from util/digest.h. */
#include "smb/ntlm.h"

#include "util/digest.h"
#include "util/utf16.h"

#include <string.h>

/* ---- little-endian fields ---- */

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

int pv_smb_ntowfv2(const char *password, size_t plen, const char *user, const char *domain,
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
/* Not NTLMSSP_NEGOTIATE_KEY_EXCH (0x40000000): with it the client would pick a random
 * ExportedSessionKey and send it RC4-encrypted under the KeyExchangeKey (MS-NLMP 3.1.5.1.2).
 * Without it the session key SMB2 signs with is SessionBaseKey, which NTLMv2 already makes
 * from the password and both challenges; Samba takes a logon without it (its own client
 * asks for it, and its server asks nothing when the client does not). A flag the client
 * did not ask for is never sent back in AUTHENTICATE (NEG_FLAGS & the server's flags). */
#define NEG_FLAGS                                                                                  \
	(NTLMSSP_NEGOTIATE_UNICODE | NTLMSSP_REQUEST_TARGET | NTLMSSP_NEGOTIATE_SIGN |             \
	 NTLMSSP_NEGOTIATE_NTLM | NTLMSSP_NEGOTIATE_ALWAYS_SIGN | NTLMSSP_NEGOTIATE_EXTENDED |     \
	 NTLMSSP_NEGOTIATE_TARGET_INFO | NTLMSSP_NEGOTIATE_128 | NTLMSSP_NEGOTIATE_56)
#define AV_EOL		    0
#define AV_FLAGS	    6
#define AV_TIMESTAMP	    7
#define AV_TARGET_NAME	    9
#define AV_CHANNEL_BINDINGS 10
#define AVFLAG_MIC	    0x2u /* MsvAvFlags: the AUTHENTICATE carries a MIC */

int pv_smb_ntlm_negotiate(struct pv_buf *out, uint8_t *msg_out, size_t *mlen)
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
	if (msg_out) {
		memcpy(msg_out, msg, sizeof(msg));
		*mlen = sizeof(msg);
	}
	return 0;
}

/* The OCTET STRING of field (0xa2 responseToken, 0xa3 mechListMIC) of a NegTokenResp ([1]
 * SEQUENCE { negState [0], supportedMech [1], responseToken [2], mechListMIC [3] }, each
 * optional): 0 and its bounds, 1 when the NegTokenResp has no such field, -1 when it is not
 * one. */
static int spnego_field(const uint8_t *tok, size_t len, uint8_t field, const uint8_t **out,
			size_t *olen)
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
		if (tag != field)
			continue;
		q = v;
		if (der_next(&q, v + l, &tag, out, olen) < 0 || tag != 0x04)
			return -1;
		return 0;
	}
	return 1;
}

/* The responseToken of a NegTokenResp. */
static int spnego_token(const uint8_t *tok, size_t len, const uint8_t **out, size_t *olen)
{
	return spnego_field(tok, len, 0xa2, out, olen) == 0 ? 0 : -1;
}

int pv_smb_ntlm_parse_challenge(const uint8_t *tok, size_t len, struct pv_smb_ntlm_challenge *c)
{
	const uint8_t *m = tok;
	size_t n = len;
	uint32_t ilen, ioff;

	memset(c, 0, sizeof(*c));
	if ((n < 8 || memcmp(m, "NTLMSSP", 8) != 0) && spnego_token(tok, len, &m, &n) < 0)
		return -1;
	if (n < 48 || memcmp(m, "NTLMSSP", 8) != 0 || le32(m + 8) != 2)
		return -1;
	c->msg = m;
	c->msg_len = n;
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

int pv_smb_ntlmv2_response(const uint8_t key[16], const uint8_t schal[8], uint64_t time,
			   const uint8_t cchal[8], const uint8_t *info, size_t ilen,
			   struct pv_buf *out)
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

void pv_smb_ntlmv2_session_key(const uint8_t key[16], const uint8_t proof[16], uint8_t out[16])
{
	pv_hmac_md5(key, 16, proof, 16, out);
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

bool pv_smb_ntlm_signs(const struct pv_smb_ntlm_challenge *c)
{
	uint32_t both = NTLMSSP_NEGOTIATE_SIGN | NTLMSSP_NEGOTIATE_EXTENDED;

	return c->has_timestamp && (NEG_FLAGS & c->flags & both) == both;
}

void pv_smb_ntlm_mech_list_mic(const uint8_t session_key[16], bool server, uint8_t out[16])
{
	/* MS-NLMP 3.4.5.2: the magic constants, their NUL included */
	static const char cli[] = "session key to client-to-server signing key magic constant";
	static const char srv[] = "session key to server-to-client signing key magic constant";
	/* the DER of the mechTypes our NegTokenInit offered: SEQUENCE { NTLMSSP } */
	uint8_t in[16 + sizeof(srv)], key[16], mac[16], seq_types[4 + 2 + sizeof(OID_NTLMSSP)];

	memcpy(in, session_key, 16);
	memcpy(in + 16, server ? srv : cli, sizeof(srv));
	pv_md5(in, sizeof(in), key);
	memset(seq_types, 0, 4); /* SeqNum 0: the first message signed either way */
	seq_types[4] = 0x30;
	seq_types[5] = sizeof(OID_NTLMSSP);
	memcpy(seq_types + 6, OID_NTLMSSP, sizeof(OID_NTLMSSP));
	pv_hmac_md5(key, 16, seq_types, sizeof(seq_types), mac);
	/* NTLMSSP_MESSAGE_SIGNATURE with extended session security (2.2.2.9.2): Version 1, the
	 * HMAC's first 8 bytes (no RC4 over them without KEY_EXCH, 3.4.4.2), SeqNum */
	memset(out, 0, 16);
	out[0] = 1;
	memcpy(out + 4, mac, 8);
	explicit_bzero(in, sizeof(in));
	explicit_bzero(key, sizeof(key));
}

int pv_smb_ntlm_final_mic(const uint8_t *tok, size_t len, const uint8_t want[16])
{
	const uint8_t *mic;
	size_t ml;
	unsigned d = 0;
	int r;

	if (len == 0)
		return 0;
	if ((r = spnego_field(tok, len, 0xa3, &mic, &ml)) != 0)
		return r > 0 ? 0 : -2;
	if (ml != 16)
		return -1;
	for (int i = 0; i < 16; i++) /* in constant time */
		d |= (unsigned)(mic[i] ^ want[i]);
	return d ? -1 : 0;
}

/* An AV pair (MS-NLMP 2.2.2.1) appended to b. */
static int av_add(struct pv_buf *b, uint16_t id, const void *v, size_t len)
{
	uint8_t h[4] = {(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)len, (uint8_t)(len >> 8)};

	if (len > 0xFFFF || pv_buf_add(b, h, 4) < 0 || (len && pv_buf_add(b, v, len) < 0))
		return -1;
	return 0;
}

int pv_smb_ntlm_target_info(const struct pv_smb_ntlm_challenge *c, const char *spn,
			    struct pv_buf *out)
{
	static const uint8_t no_bindings[16]; /* MS-NLMP 2.2.2.1: all zero, none */
	struct pv_buf name = PV_BUF_INIT;
	const uint8_t *ti = c->target_info;
	size_t ilen = c->target_info_len;
	int flags_sent = 0, r = -1;

	if (pv_utf16le(&name, spn, strlen(spn), 0) < 0)
		goto out;
	if (name.len > 0xFFFF) {
		r = -2;
		goto out;
	}
	/* the server's pairs up to MsvAvEOL (pv_smb_ntlm_parse_challenge found it inside), as they
	 * came: the server compares its own with them (Samba does, pair by pair) */
	for (size_t i = 0; ilen - i >= 4;) {
		uint16_t id = (uint16_t)(ti[i] | ti[i + 1] << 8);
		size_t al = (size_t)(ti[i + 2] | ti[i + 3] << 8);

		if (id == AV_EOL || ilen - i - 4 < al)
			break;
		if (id == AV_FLAGS && al == 4) {
			uint8_t v[4];

			memcpy(v, ti + i + 4, 4);
			if (c->has_timestamp)
				v[0] |= AVFLAG_MIC;
			flags_sent = 1;
			if (av_add(out, id, v, 4) < 0)
				goto out;
		} else if (id != AV_TARGET_NAME && id != AV_CHANNEL_BINDINGS &&
			   pv_buf_add(out, ti + i, 4 + al) < 0) {
			goto out;
		}
		i += 4 + al;
	}
	/* MS-NLMP 3.1.5.1.2: a MIC when the server sent a timestamp (a server without one, older
	 * than Vista, has no MIC to check); then channel bindings and the target name, in the
	 * order a Windows client sends them (its MsvAvSingleHost, which Samba's client sends too,
	 * no server needs) */
	if ((c->has_timestamp && !flags_sent &&
	     av_add(out, AV_FLAGS, (const uint8_t[4]){AVFLAG_MIC}, 4) < 0) ||
	    av_add(out, AV_CHANNEL_BINDINGS, no_bindings, sizeof(no_bindings)) < 0 ||
	    av_add(out, AV_TARGET_NAME, name.data, name.len) < 0 ||
	    av_add(out, AV_EOL, NULL, 0) < 0)
		goto out;
	r = 0;
out:
	pv_buf_release(&name, 0);
	return r;
}

int pv_smb_ntlm_authenticate(const struct pv_smb_ntlm_challenge *c,
			     const struct pv_smb_ntlm_logon *l, struct pv_buf *out,
			     uint8_t session_key[16])
{
	struct pv_buf lm = PV_BUF_INIT, nt = PV_BUF_INIT, dom = PV_BUF_INIT, usr = PV_BUF_INIT;
	struct pv_buf msg = PV_BUF_INIT, info = PV_BUF_INIT, all = PV_BUF_INIT;
	/* the fixed fields (64 bytes), Version (8, all zero: NTLMSSP_NEGOTIATE_VERSION is not
	 * asked for) and the MIC (16, zero until it is computed over the whole message) */
	uint8_t key[16], skey[16], mic[16], list_mic[16];
	uint8_t head[88] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 3};
	int r = -1, ti;

	if (pv_smb_ntowfv2(l->password, l->plen, l->user, l->domain, key) < 0)
		goto out;
	if ((ti = pv_smb_ntlm_target_info(c, l->spn, &info)) < 0) {
		r = ti;
		goto out;
	}
	if (pv_smb_ntlmv2_response(key, c->challenge, c->has_timestamp ? c->timestamp : l->now,
				   l->cchal, (const uint8_t *)info.data, info.len, &nt) < 0)
		goto out;
	/* nt starts with NTProofStr; without KEY_EXCH (NEG_FLAGS lacks it, and the flags sent
	 * below are NEG_FLAGS and the server's) ExportedSessionKey = KeyExchangeKey =
	 * SessionBaseKey for NTLMv2 (MS-NLMP 3.1.5.1.2, 3.4.5.1) */
	pv_smb_ntlmv2_session_key(key, (const uint8_t *)nt.data, skey);
	if (c->has_timestamp) { /* MS-NLMP 3.1.5.1.2: then LmChallengeResponse is Z(24) */
		static const uint8_t z[24];

		if (pv_buf_add(&lm, z, 24) < 0)
			goto out;
	} else {
		uint8_t both[16], mac[16];

		memcpy(both, c->challenge, 8);
		memcpy(both + 8, l->cchal, 8);
		pv_hmac_md5(key, 16, both, 16, mac);
		if (pv_buf_add(&lm, mac, 16) < 0 || pv_buf_add(&lm, l->cchal, 8) < 0)
			goto out;
	}
	if (pv_utf16le(&dom, l->domain, strlen(l->domain), 0) < 0 ||
	    pv_utf16le(&usr, l->user, strlen(l->user), 0) < 0)
		goto out;
	{
		/* LmChallengeResponse, NtChallengeResponse, DomainName, UserName, Workstation
		 * (empty), EncryptedRandomSessionKey (empty): fields 8 bytes apart from offset 12,
		 * their data after the MIC. NtChallengeResponse is 48 bytes longer than the AV
		 * pairs, so a long target info cannot be answered. */
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
	/* the MIC (MS-NLMP 3.1.5.1.2), keyed with ExportedSessionKey: the NEGOTIATE sent, the
	 * CHALLENGE taken and this message, whose MIC field is still zero */
	if ((l->neglen && pv_buf_add(&all, l->negotiate, l->neglen) < 0) ||
	    (c->msg_len && pv_buf_add(&all, c->msg, c->msg_len) < 0) ||
	    pv_buf_add(&all, msg.data, msg.len) < 0)
		goto out;
	pv_hmac_md5(skey, 16, all.data, all.len, mic);
	memcpy(msg.data + PV_SMB_NTLM_MIC_AT, mic, 16);
	/* NegTokenResp ::= [1] SEQUENCE { responseToken [2] OCTET STRING, mechListMIC [3]
	 * OCTET STRING }: the mechListMIC when the MIC says a MIC is there, for the server's
	 * SPNEGO then wants one (RFC 4178 5; Samba answers a third leg otherwise) */
	{
		bool sig = pv_smb_ntlm_signs(c);
		size_t resp = der_size(der_size(msg.len)), list = sig ? der_size(der_size(16)) : 0;

		if (sig)
			pv_smb_ntlm_mech_list_mic(skey, false, list_mic);
		pv_buf_reset(out);
		if (der_head(out, 0xa1, der_size(resp + list)) < 0 ||
		    der_head(out, 0x30, resp + list) < 0 ||
		    der_head(out, 0xa2, der_size(msg.len)) < 0 ||
		    der_head(out, 0x04, msg.len) < 0 || pv_buf_add(out, msg.data, msg.len) < 0 ||
		    (sig && (der_head(out, 0xa3, der_size(16)) < 0 || der_head(out, 0x04, 16) < 0 ||
			     pv_buf_add(out, list_mic, 16) < 0)))
			goto out;
	}
	memcpy(session_key, skey, 16);
	r = 0;
out:
	explicit_bzero(key, sizeof(key));
	explicit_bzero(skey, sizeof(skey));
	pv_buf_release(&lm, 0);
	pv_buf_release(&nt, 0);
	pv_buf_release(&dom, 0);
	pv_buf_release(&usr, 0);
	pv_buf_release(&msg, 0);
	pv_buf_release(&info, 0);
	pv_buf_release(&all, 0);
	return r;
}
