/* tests/fuzz/fuzz_ntlm.c: libFuzzer target for the NTLM CHALLENGE parser of smb/ntlm.c. The
 * input is the server's token, as the SESSION_SETUP response carries it: a SPNEGO NegTokenResp
 * holding the NTLMSSP CHALLENGE, or the bare CHALLENGE.
 *
 * pv_smb_ntlm_parse_challenge() must refuse with -1 or describe a CHALLENGE that lies inside the
 * token; what it accepts, pv_smb_ntlm_authenticate() must turn into a well-formed AUTHENTICATE
 * (MS-NLMP 2.2.1.3, with Version and MIC) in a well-formed NegTokenResp: every DER length and
 * security buffer consistent; the client's AV pairs the server's, as they came, with
 * MsvAvFlags' MIC bit when the server sent a timestamp, zero channel bindings, the target name
 * and MsvAvEOL (MS-NLMP 3.1.5.1.2); the NTLMv2 response the one MS-NLMP 3.3.2 defines for
 * that challenge, those pairs and time; no KEY_EXCH; the session key SessionBaseKey; and the
 * MIC HMAC_MD5 of it over NEGOTIATE, CHALLENGE and AUTHENTICATE. A refusal only where the
 * response would not fit its 16-bit length. A bare CHALLENGE wrapped in SPNEGO here must read
 * the same. A broken promise aborts, which libFuzzer reports as a crash with the input that
 * did it. */
#include "smb/ntlm.h"
#include "util/digest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The flags our NEGOTIATE offers (smb/ntlm.c NEG_FLAGS); AUTHENTICATE may hold no others. */
#define OFFERED 0xA0888215u
#define UNICODE 0x00000001u

static const uint8_t CCHAL[8] = {0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
static const uint64_t NOW = 0x01d9000000000000ull;
static const char SPN[] = "cifs/srv"; /* MsvAvTargetName: 16 bytes of UTF-16 */
static uint8_t NEGO[PV_SMB_NTLM_NEGOTIATE_MAX];
static size_t NEGO_LEN;

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_ntlm: broken promise: %s\n", what);
	abort();
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static size_t le16(const uint8_t *p)
{
	return (size_t)(p[0] | p[1] << 8);
}

/* The client's AV pairs at p (n bytes) checked against the server's in c, pair by pair;
 * with p NULL, only how long they must be. */
static size_t client_pairs(const struct pv_smb_ntlm_challenge *c, const uint8_t *p, size_t n)
{
	const uint8_t *s = c->target_info;
	size_t at = 0, sl = c->target_info_len;
	int flags = 0;

	for (size_t i = 0; sl - i >= 4 && le16(s + i);) {
		size_t id = le16(s + i), l = le16(s + i + 2);

		if (sl - i - 4 < l)
			broken("parse: an AV pair past the target info");
		if (id != 9 && id != 10) {
			if (p) {
				if (n - at < 4 + l || le16(p + at) != id || le16(p + at + 2) != l)
					broken("AUTHENTICATE: a server's AV pair not back in "
					       "place");
				if (id == 6 && l == 4 &&
				    le32(p + at + 4) !=
					    (le32(s + i + 4) | (c->has_timestamp ? 2 : 0)))
					broken("AUTHENTICATE: MsvAvFlags without the MIC bit");
				else if (!(id == 6 && l == 4) && memcmp(p + at + 4, s + i + 4, l))
					broken("AUTHENTICATE: a server's AV pair changed");
			}
			flags |= id == 6 && l == 4;
			at += 4 + l;
		}
		i += 4 + l;
	}
	if (c->has_timestamp && !flags) {
		if (p && (n - at < 8 || memcmp(p + at, "\x06\0\x04\0\x02\0\0\0", 8)))
			broken("AUTHENTICATE: no MsvAvFlags saying a MIC is there");
		at += 8;
	}
	if (p && (n - at < 20 || memcmp(p + at, "\x0a\0\x10\0", 4) ||
		  memcmp(p + at + 4, (uint8_t[16]){0}, 16)))
		broken("AUTHENTICATE: no zero MsvAvChannelBindings");
	at += 20;
	if (p && (n - at < 4 + 16 || memcmp(p + at, "\x09\0\x10\0c\0i\0f\0s\0/\0s\0r\0v\0", 20)))
		broken("AUTHENTICATE: MsvAvTargetName not the service given");
	at += 4 + 16;
	if (p && (n - at != 4 || memcmp(p + at, "\0\0\0\0", 4)))
		broken("AUTHENTICATE: MsvAvEOL not last");
	return at + 4;
}

/* One DER element that must fill [*p, end) exactly, with tag; its value's bounds out. */
static void der_whole(const uint8_t *p, const uint8_t *end, uint8_t tag, const uint8_t **val,
		      size_t *len)
{
	size_t l, n;

	if (end - p < 2 || p[0] != tag)
		broken("AUTHENTICATE token: wrong DER tag");
	l = p[1];
	p += 2;
	if (l & 0x80) {
		n = l & 0x7f;
		if (n < 1 || n > 3 || (size_t)(end - p) < n)
			broken("AUTHENTICATE token: bad DER length");
		for (l = 0; n--;)
			l = l << 8 | *p++;
	}
	if ((size_t)(end - p) != l)
		broken("AUTHENTICATE token: a DER length that does not fill its parent");
	*val = p;
	*len = l;
}

/* One DER element at *p (below end) with tag: its value's bounds; *p moves past it. */
static void der_one(const uint8_t **p, const uint8_t *end, uint8_t tag, const uint8_t **val,
		    size_t *len)
{
	const uint8_t *q = *p;
	size_t l, n;

	if (end - q < 2 || q[0] != tag)
		broken("AUTHENTICATE token: wrong DER tag");
	l = q[1];
	q += 2;
	if (l & 0x80) {
		n = l & 0x7f;
		if (n < 1 || n > 3 || (size_t)(end - q) < n)
			broken("AUTHENTICATE token: bad DER length");
		for (l = 0; n--;)
			l = l << 8 | *q++;
	}
	if ((size_t)(end - q) < l)
		broken("AUTHENTICATE token: a DER length past its parent");
	*val = q;
	*len = l;
	*p = q + l;
}

/* The SPNEGO mechListMIC of an AUTHENTICATE keyed with key (MS-NLMP 3.4.4.2, 3.4.5.2, spelled
 * out): Version 1, HMAC_MD5(MD5(key || client magic || NUL), 0^4 || mechTypes)[0..7], 0^4. */
static void mech_list_mic(const uint8_t key[16], uint8_t sig[16])
{
	static const char magic[] = "session key to client-to-server signing key magic constant";
	static const uint8_t types[] = {0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01,
					0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
	uint8_t in[16 + sizeof(magic)], sk[16], mac[16], st[4 + sizeof(types)] = {0};

	memcpy(in, key, 16);
	memcpy(in + 16, magic, sizeof(magic));
	pv_md5(in, sizeof(in), sk);
	memcpy(st + 4, types, sizeof(types));
	pv_hmac_md5(sk, 16, st, sizeof(st), mac);
	memset(sig, 0, 16);
	sig[0] = 1;
	memcpy(sig + 4, mac, 8);
}

/* A security buffer (MS-NLMP 2.2.2.10): length and maximum length equal, inside the message,
 * at the offset expected (the buffers follow each other). */
static const uint8_t *buffer(const uint8_t *m, size_t mlen, size_t at, size_t *off, size_t *len)
{
	size_t l = (size_t)(m[at] | m[at + 1] << 8), max = (size_t)(m[at + 2] | m[at + 3] << 8);
	size_t o = le32(m + at + 4);

	if (l != max || o != *off || o > mlen || l > mlen - o)
		broken("AUTHENTICATE: a security buffer out of place");
	*off += l;
	*len = l;
	return m + o;
}

static void check_authenticate(const struct pv_smb_ntlm_challenge *c, const struct pv_buf *tok,
			       const uint8_t skey[16])
{
	const uint8_t *p = (const uint8_t *)tok->data, *end = p + tok->len, *m, *lm, *nt, *dom,
		      *usr, *v, *seq, *list = NULL;
	size_t l, mlen, lml, ntl, doml, usrl, wsl, keyl, off = 88, vl, ll = 0;
	uint8_t key[16], base[16], mic[16];
	struct pv_buf want = PV_BUF_INIT, all = PV_BUF_INIT;
	uint32_t flags;

	/* NegTokenResp ::= [1] SEQUENCE { responseToken [2] OCTET STRING, mechListMIC [3]
	 * OCTET STRING OPTIONAL } */
	der_whole(p, end, 0xa1, &p, &l);
	der_whole(p, p + l, 0x30, &p, &l);
	seq = p + l;
	der_one(&p, seq, 0xa2, &v, &vl);
	der_whole(v, v + vl, 0x04, &m, &mlen);
	if (p < seq) {
		der_one(&p, seq, 0xa3, &v, &vl);
		der_whole(v, v + vl, 0x04, &list, &ll);
		if (p != seq)
			broken("AUTHENTICATE token: more than the response and its mechListMIC");
	}
	if (mlen < 88 || memcmp(m, "NTLMSSP", 8) || le32(m + 8) != 3)
		broken("AUTHENTICATE: not an NTLMSSP AUTHENTICATE message");
	lm = buffer(m, mlen, 12, &off, &lml);
	nt = buffer(m, mlen, 20, &off, &ntl);
	dom = buffer(m, mlen, 28, &off, &doml);
	usr = buffer(m, mlen, 36, &off, &usrl);
	buffer(m, mlen, 44, &off, &wsl);
	buffer(m, mlen, 52, &off, &keyl);
	if (off != mlen || wsl || keyl)
		broken("AUTHENTICATE: bytes outside its buffers, or a workstation or session key");
	if (memcmp(m + 64, (uint8_t[8]){0}, 8))
		broken("AUTHENTICATE: a Version without NTLMSSP_NEGOTIATE_VERSION");
	flags = le32(m + 60);
	if ((flags & ~OFFERED) || !(flags & UNICODE) || (flags & ~c->flags & ~UNICODE))
		broken("AUTHENTICATE: flags neither offered nor granted");
	if (doml != 12 || memcmp(dom, "D\0o\0m\0a\0i\0n\0", 12) || usrl != 8 ||
	    memcmp(usr, "U\0s\0e\0r\0", 8))
		broken("AUTHENTICATE: domain or user not as given");
	/* the client's AV pairs, then the NTLMv2 response recomputed from its definition over
	 * them, with the server's time if sent */
	if (ntl < 48 + 4 || memcmp(nt + ntl - 4, "\0\0\0\0", 4))
		broken("AUTHENTICATE: an NTLMv2 response too short for its blob");
	client_pairs(c, nt + 44, ntl - 48);
	if (pv_smb_ntowfv2("Password", 8, "User", "Domain", key) < 0 ||
	    pv_smb_ntlmv2_response(key, c->challenge, c->has_timestamp ? c->timestamp : NOW, CCHAL,
				   nt + 44, ntl - 48, &want) < 0)
		abort();
	if (ntl != want.len || memcmp(nt, want.data, ntl))
		broken("AUTHENTICATE: the NTLMv2 response is not MS-NLMP's for this challenge");
	if (le64(nt + 24) != (c->has_timestamp ? c->timestamp : NOW) || memcmp(nt + 32, CCHAL, 8))
		broken("AUTHENTICATE: the response's time or client challenge");
	if (lml != 24 || (c->has_timestamp ? memcmp(lm, (uint8_t[24]){0}, 24) != 0
					   : memcmp(lm + 16, CCHAL, 8) != 0))
		broken("AUTHENTICATE: the LM response (Z(24) when the server sent a time)");
	/* no KEY_EXCH: the session key is SessionBaseKey (MS-NLMP 3.3.2, 3.1.5.1.2) */
	pv_smb_ntlmv2_session_key(key, (const uint8_t *)want.data, base);
	if (memcmp(skey, base, 16) || (flags & 0x40000000u))
		broken("AUTHENTICATE: the session key is not SessionBaseKey, or KEY_EXCH was sent");
	/* the MIC: HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE || AUTHENTICATE, its MIC
	 * field zero) */
	if (pv_buf_add(&all, NEGO, NEGO_LEN) < 0 || pv_buf_add(&all, c->msg, c->msg_len) < 0 ||
	    pv_buf_add(&all, m, mlen) < 0)
		abort();
	memset(all.data + NEGO_LEN + c->msg_len + 72, 0, 16);
	pv_hmac_md5(base, 16, all.data, all.len, mic);
	if (memcmp(mic, m + 72, 16))
		broken("AUTHENTICATE: the MIC is not HMAC_MD5 of the three messages");
	/* SPNEGO's mechListMIC: there exactly when the MIC is and NTLM signs with extended
	 * session security (SIGN 0x10, 0x80000) */
	if (c->has_timestamp && (flags & 0x80010u) == 0x80010u) {
		mech_list_mic(base, mic);
		if (!list || ll != 16 || memcmp(list, mic, 16))
			broken("AUTHENTICATE: no mechListMIC, or not the signature of the "
			       "mechTypes");
	} else if (list) {
		broken("AUTHENTICATE: a mechListMIC without a MIC or NTLM signing");
	}
	pv_buf_release(&want, 0);
	pv_buf_release(&all, 0);
}

/* The bare CHALLENGE in a NegTokenResp with long-form lengths, as a server may send it. */
static size_t wrap(const uint8_t *m, size_t n, uint8_t *out)
{
	size_t o = 0, l4 = n, l3 = 4 + l4, l2 = 4 + l3, l1 = 4 + l2;
	const uint8_t tags[4] = {0xa1, 0x30, 0xa2, 0x04};
	const size_t lens[4] = {l1, l2, l3, l4};

	for (int i = 0; i < 4; i++) {
		out[o++] = tags[i];
		out[o++] = 0x82;
		out[o++] = (uint8_t)(lens[i] >> 8);
		out[o++] = (uint8_t)lens[i];
	}
	memcpy(out + o, m, n);
	return o + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_smb_ntlm_challenge c, w;
	struct pv_buf out = PV_BUF_INIT;
	struct pv_smb_ntlm_logon l = {"User", "Domain", "Password", 8, SPN, NEGO, 0, NOW, CCHAL};
	uint8_t skey[16];
	int r = pv_smb_ntlm_parse_challenge(data, size, &c);

	if (r != 0) {
		if (r != -1)
			broken("parse: a result other than 0 or -1");
		return 0;
	}
	if (c.target_info < data || c.target_info_len > 0xffff ||
	    c.target_info_len > (size_t)(data + size - c.target_info))
		broken("parse: target info outside the token");
	if (c.msg < data || c.msg_len < 48 || c.msg_len > (size_t)(data + size - c.msg) ||
	    c.target_info < c.msg ||
	    c.target_info_len > (size_t)(c.msg + c.msg_len - c.target_info))
		broken("parse: the CHALLENGE message outside the token, or its target info outside "
		       "it");
	if (!NEGO_LEN && pv_smb_ntlm_negotiate(&out, NEGO, &NEGO_LEN) < 0)
		abort();
	l.neglen = NEGO_LEN;
	if (pv_smb_ntlm_authenticate(&c, &l, &out, skey) == 0)
		check_authenticate(&c, &out, skey);
	else if (client_pairs(&c, NULL, 0) + 48 <= 0xffff)
		broken("authenticate refused a challenge it can answer");
	pv_buf_release(&out, 0);
	if (size >= 8 && !memcmp(data, "NTLMSSP", 8) && size <= 0xffff - 16) {
		uint8_t *t = malloc(size + 16);

		if (!t)
			abort();
		if (pv_smb_ntlm_parse_challenge(t, wrap(data, size, t), &w) != 0 ||
		    w.flags != c.flags || memcmp(w.challenge, c.challenge, 8) ||
		    w.target_info_len != c.target_info_len ||
		    memcmp(w.target_info, c.target_info, c.target_info_len) ||
		    w.has_timestamp != c.has_timestamp || w.timestamp != c.timestamp)
			broken("a bare CHALLENGE reads differently in SPNEGO");
		free(t);
	}
	return 0;
}
