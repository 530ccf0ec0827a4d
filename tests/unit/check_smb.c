/* tests/unit/check_smb.c: the pure parts of smb/: NTLMv2 (MS-NLMP 4.2.4 test vectors) and its
 * session key, the NTLMSSP messages in their SPNEGO wrappers, the SMB2 request encodings, and
 * SMB2 signing (Microsoft's published keys and signatures, and OpenSSL's where none is). The
 * digests NTLM uses are tested with util/digest (check_util.c). */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdlib.h>
#include <string.h>

#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "util/digest.h"
#include "util/utf16.h"

/* MS-NLMP 4.2.1 and 4.2.4: User, Domain, Password; server challenge 0123456789abcdef, client
 * challenge aa x 8, time 0, target info NbDomainName "Domain", NbComputerName "Server". */
static const uint8_t INFO[] = {2,  0, 12,  0, 'D', 0, 'o', 0, 'm', 0, 'a', 0, 'i', 0, 'n', 0, 1, 0,
			       12, 0, 'S', 0, 'e', 0, 'r', 0, 'v', 0, 'e', 0, 'r', 0, 0,   0, 0, 0};
static const uint8_t SCHAL[8] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
static const uint8_t CCHAL[8] = {0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};

/* The AUTHENTICATE of User/Domain/Password for c, as the engine makes it: after our own
 * NEGOTIATE (*nego, *nlen), for the service spn. The bare message's start in *m. */
static uint8_t NEGO[PV_SMB_NTLM_NEGOTIATE_MAX];
static size_t NEGO_LEN;

static int authenticate(const struct pv_smb_ntlm_challenge *c, const char *spn, struct pv_buf *b,
			uint8_t skey[16], const uint8_t **m)
{
	struct pv_buf t = PV_BUF_INIT;
	struct pv_smb_ntlm_logon l = {"User", "Domain", "Password", 8, spn, NEGO, 0, 0, CCHAL};
	int r;

	ck_assert_int_eq(pv_smb_ntlm_negotiate(&t, NEGO, &NEGO_LEN), 0);
	pv_buf_release(&t, 0);
	l.neglen = NEGO_LEN;
	r = pv_smb_ntlm_authenticate(c, &l, b, skey);
	if (r == 0 && m)
		ck_assert_ptr_nonnull(*m = memmem(b->data, b->len, "NTLMSSP", 8));
	return r;
}

/* The AV pair id of the pairs at p (n bytes, up to MsvAvEOL): its value and length; NULL when
 * absent. How many pairs of that id in *count. */
static const uint8_t *av_pair(const uint8_t *p, size_t n, uint16_t id, size_t *len, unsigned *count)
{
	const uint8_t *found = NULL;

	*count = 0;
	for (size_t i = 0; i + 4 <= n;) {
		uint16_t t = smb2_get16(p + i);
		size_t l = smb2_get16(p + i + 2);

		ck_assert_uint_le(i + 4 + l, n);
		if (t == id) {
			(*count)++;
			found = p + i + 4;
			*len = l;
		}
		if (t == 0)
			break;
		i += 4 + l;
	}
	return found;
}

START_TEST(test_ntlmv2_vectors)
{
	struct pv_buf b = PV_BUF_INIT;
	uint8_t nt[16], key[16];

	ck_assert_int_eq(pv_utf16le(&b, "Password", 8, 0), 0);
	pv_md4(b.data, b.len, nt);
	ck_assert_str_eq(pv_unit_hex(nt, 16), "a4f49c406510bdcab6824ee7c30fd852");
	ck_assert_int_eq(pv_smb_ntowfv2("Password", 8, "User", "Domain", key), 0);
	ck_assert_str_eq(pv_unit_hex(key, 16), "0c868a403bfd7a93a3001ef22ef02e3f");
	/* the user name is upper-cased, the domain is not */
	ck_assert_int_eq(pv_smb_ntowfv2("Password", 8, "user", "Domain", nt), 0);
	ck_assert_mem_eq(nt, key, 16);
	ck_assert_int_eq(pv_smb_ntowfv2("Password", 8, "User", "DOMAIN", nt), 0);
	ck_assert(memcmp(nt, key, 16) != 0);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_smb_ntlmv2_response(key, SCHAL, 0, CCHAL, INFO, sizeof(INFO), &b), 0);
	ck_assert_str_eq(pv_unit_hex((uint8_t *)b.data, 16), "68cd0ab851e51c96aabc927bebef6a1c");
	ck_assert_uint_eq(b.len, 16 + 28 + sizeof(INFO) + 4);
	ck_assert_int_eq(pv_smb_ntowfv2("Pass\xff", 5, "User", "Domain", nt), -1);
	pv_buf_release(&b, 0);
}
END_TEST

/* The AV pairs of a Windows client's AUTHENTICATE, as its NTLMv2 response carries them (and
 * Windows' 4 bytes of padding after MsvAvEOL): the appendix of Microsoft's "SMB 2 and SMB 3
 * security in Windows 10: the anatomy of signing and cryptographic keys" (2017). */
static const char BLOG_INFO[] =
	"02000c0053005500540033003100310001000c0053005500540033003100310004000c00530055"
	"00540033003100310003000c0053005500540033003100310007000800a1a1f5adcbaed0010600"
	"0400020000000800300030000000000000000000000000300000b61fefcaa857ea57bf1edcebf8"
	"974b8e0eba5a6dfd9d07a31d11b548f8c9d0cc0a00100000000000000000000000000000000000"
	"0900160063006900660073002f005300550054003300310031000000000000000000";

/* The session key SMB2 signs with: MS-NLMP 3.3.2's SessionBaseKey, HMAC_MD5(ResponseKeyNT,
 * NTProofStr), which is the ExportedSessionKey when NTLMSSP_NEGOTIATE_KEY_EXCH is not
 * negotiated (3.1.5.1.2, 3.4.5.1). Two published examples: MS-NLMP 4.2.4 (4.2.4.1.2 gives
 * the SessionBaseKey), and the NTLMv2 example in the appendix of Microsoft's "SMB 2 and SMB
 * 3 security in Windows 10: the anatomy of signing and cryptographic keys" (a Windows
 * client's AUTHENTICATE as administrator of SUT311, password Password01!: its NTOWFv2,
 * NTProofStr and KeyExchangeKey; the blog's AV pairs, time and challenges are the inputs). */
START_TEST(test_ntlm_session_key)
{
	struct pv_buf b = PV_BUF_INIT;
	struct pv_smb_ntlm_challenge c = {0};
	uint8_t key[16], skey[16], info[256], schal[8], cchal[8];
	size_t ilen;
	const uint8_t *m;

	/* MS-NLMP 4.2.4: ResponseKeyNT and NTProofStr as in test_ntlmv2_vectors */
	ck_assert_int_eq(pv_smb_ntowfv2("Password", 8, "User", "Domain", key), 0);
	ck_assert_int_eq(pv_smb_ntlmv2_response(key, SCHAL, 0, CCHAL, INFO, sizeof(INFO), &b), 0);
	pv_smb_ntlmv2_session_key(key, (const uint8_t *)b.data, skey);
	ck_assert_str_eq(pv_unit_hex(skey, 16), "8de40ccadbc14a82f15cb0ad0de95ca3");
	/* the same out of the AUTHENTICATE made for 4.2.4's challenge (no timestamp: time 0),
	 * whose flags offer KEY_EXCH: not taken, EncryptedRandomSessionKey stays empty */
	memcpy(c.challenge, SCHAL, 8);
	c.flags = 0xe28a8233u; /* 4.2.4's CHALLENGE flags, KEY_EXCH (0x40000000) among them */
	c.target_info = INFO;
	c.target_info_len = sizeof(INFO);
	memset(skey, 0, 16);
	ck_assert_int_eq(authenticate(&c, "cifs/Server", &b, skey, &m), 0);
	/* its NTLMv2 response is over the client's AV pairs (the target name, the channel
	 * bindings added): SessionBaseKey of its own NTProofStr, HMAC_MD5 spelled out here */
	{
		uint8_t want[16];

		pv_hmac_md5(key, 16, m + smb2_get32(m + 24), 16, want);
		ck_assert_mem_eq(skey, want, 16);
	}
	ck_assert_uint_eq(m[52] | m[53] << 8, 0);		/* EncryptedRandomSessionKey */
	ck_assert_uint_eq(smb2_get32(m + 60) & 0x40000000u, 0); /* no KEY_EXCH */
	ck_assert_uint_eq(smb2_get32(m + 60) & 0x10u, 0x10u);	/* SIGN */

	/* the blog's Windows logon */
	ck_assert_int_eq(pv_smb_ntowfv2("Password01!", 11, "administrator", "SUT311", key), 0);
	ck_assert_str_eq(pv_unit_hex(key, 16), "aee3959b44a815f1eb28c9511b4f533b");
	ck_assert_uint_eq(pv_unit_unhex("0D1D8BA31179D008", schal, 8), 8);
	ck_assert_uint_eq(pv_unit_unhex("BC4AD05F223CC90F", cchal, 8), 8);
	ck_assert_uint_ne(ilen = pv_unit_unhex(BLOG_INFO, info, sizeof(info)), 0);
	pv_buf_reset(&b);
	ck_assert_int_eq(
		pv_smb_ntlmv2_response(key, schal, 0x01d0aecbadf5a1a1ull, cchal, info, ilen, &b),
		0);
	ck_assert_uint_eq(b.len, 238); /* the NtChallengeResponse's length on the wire */
	ck_assert_str_eq(pv_unit_hex((const uint8_t *)b.data, 16),
			 "63078eb639fe03e20a231c3ae3bf2308");
	pv_smb_ntlmv2_session_key(key, (const uint8_t *)b.data, skey);
	ck_assert_str_eq(pv_unit_hex(skey, 16), "b4cf22566926b1c069acd80e4d73c814");
	pv_buf_release(&b, 0);
}
END_TEST

/* A CHALLENGE as Samba sends it, in a NegTokenResp, with a timestamp. */
static size_t challenge_token(uint8_t *out, int spnego)
{
	uint8_t m[48 + 64] = {'N', 'T', 'L', 'M', 'S', 'S', 'P', 0, 2};
	static const uint8_t ts[] = {7, 0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8};
	size_t ilen = sizeof(INFO) - 4 + sizeof(ts) + 4, n = 48 + ilen, o = 0;

	m[20] = 0x15, m[21] = 0x82, m[22] = 0x89, m[23] = 0xe2;
	memcpy(m + 24, SCHAL, 8);
	m[40] = m[42] = (uint8_t)ilen;
	m[44] = 48;
	memcpy(m + 48, INFO, sizeof(INFO) - 4);
	memcpy(m + 48 + sizeof(INFO) - 4, ts, sizeof(ts));
	memset(m + n - 4, 0, 4);
	if (spnego) {
		static const uint8_t head[] = {0xa1, 0, 0x30, 0, 0xa0, 3, 0x0a,
					       1,    1, 0xa2, 0, 0x04, 0};

		memcpy(out, head, sizeof(head));
		out[1] = (uint8_t)(sizeof(head) - 2 + n);
		out[3] = (uint8_t)(sizeof(head) - 4 + n);
		out[10] = (uint8_t)(n + 2);
		out[12] = (uint8_t)n;
		o = sizeof(head);
	}
	memcpy(out + o, m, n);
	return o + n;
}

START_TEST(test_ntlm_messages)
{
	uint8_t skey[16];
	struct pv_buf b = PV_BUF_INIT;
	struct pv_smb_ntlm_challenge c;
	uint8_t tok[256];
	size_t n;
	const char *ntlm;

	ck_assert_int_eq(pv_smb_ntlm_negotiate(&b, NEGO, &NEGO_LEN), 0);
	ck_assert_uint_eq((uint8_t)b.data[0], 0x60);
	ck_assert_uint_eq((uint8_t)b.data[1], b.len - 2);
	ntlm = memmem(b.data, b.len, "NTLMSSP", 8);
	ck_assert_ptr_nonnull(ntlm);
	ck_assert_uint_eq((size_t)(b.data + b.len - ntlm), 32);
	ck_assert_uint_eq((uint8_t)ntlm[8], 1);
	/* the message itself, for the MIC: the token's last 32 bytes */
	ck_assert_uint_eq(NEGO_LEN, 32);
	ck_assert_mem_eq(NEGO, ntlm, 32);
	ck_assert_int_eq(pv_smb_ntlm_negotiate(&b, NULL, NULL), 0);

	for (int spnego = 0; spnego <= 1; spnego++) {
		n = challenge_token(tok, spnego);
		ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, n, &c), 0);
		ck_assert_mem_eq(c.challenge, SCHAL, 8);
		ck_assert_int_eq(c.has_timestamp, 1);
		ck_assert_uint_eq(c.timestamp, 0x0807060504030201ull);
		ck_assert_uint_eq(c.flags, 0xe2898215u);
		/* the message itself (the MIC covers it): the token's end */
		ck_assert_uint_eq(c.msg_len, 48 + sizeof(INFO) - 4 + 12 + 4);
		ck_assert_ptr_eq(c.msg, tok + n - c.msg_len);
		/* cut anywhere: refused, never read past the end */
		for (size_t cut = 0; cut < n; cut++)
			ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, cut, &c), -1);
	}
	n = challenge_token(tok, 1);
	tok[n - 14] ^= 0xff; /* the timestamp pair's length now runs past the end */
	ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, n, &c), -1);

	n = challenge_token(tok, 1);
	ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, n, &c), 0);
	ck_assert_int_eq(authenticate(&c, "cifs/srvu1", &b, skey, NULL), 0);
	ck_assert_uint_eq((uint8_t)b.data[0], 0xa1);
	ntlm = memmem(b.data, b.len, "NTLMSSP", 8);
	ck_assert_ptr_nonnull(ntlm);
	ck_assert_uint_eq((uint8_t)ntlm[8], 3);
	{
		const uint8_t *m = (const uint8_t *)ntlm;
		size_t lm_len = m[12], nt_len = m[20], nt_off = m[24] | m[25] << 8;
		size_t user_len = m[36], user_off = m[40] | m[41] << 8;
		/* the server's pairs less its MsvAvEOL, then MsvAvFlags (8), the channel
		 * bindings (20), "cifs/srvu1" (4 + 20) and MsvAvEOL (4) */
		size_t info = c.target_info_len - 4 + 8 + 20 + 24 + 4;

		ck_assert_uint_eq(lm_len, 24);
		ck_assert_uint_eq(m[16], 88);	/* after Version and MIC */
		for (size_t i = 0; i < 24; i++) /* Z(24) with a timestamp */
			ck_assert_uint_eq(m[m[16] + i], 0);
		ck_assert_uint_eq(nt_len, 16 + 28 + info + 4);
		/* the response's time is the server's */
		ck_assert_mem_eq(m + nt_off + 16 + 8, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
		ck_assert_uint_eq(user_len, 8);
		ck_assert_mem_eq(m + user_off, "U\0s\0e\0r\0", 8);
		/* then the token's mechListMIC: [3] { OCTET STRING of 16 } */
		ck_assert_uint_eq((size_t)(b.data + b.len - ntlm), 88 + 24 + nt_len + 12 + 8 + 20);
		ck_assert_mem_eq(m + 64, "\0\0\0\0\0\0\0\0", 8); /* Version: not asked for */
	}
	pv_buf_release(&b, 0);
}
END_TEST

/* A bare CHALLENGE whose target info is one AV pair of ilen - 8 bytes and MsvAvEOL. */
static uint8_t *long_challenge(size_t ilen, size_t *n)
{
	uint8_t *m = calloc(1, 48 + ilen);
	size_t al = ilen - 8;

	memcpy(m, "NTLMSSP\0\2", 9);
	memcpy(m + 24, SCHAL, 8);
	m[40] = m[42] = (uint8_t)ilen;
	m[41] = m[43] = (uint8_t)(ilen >> 8);
	m[44] = 48;
	m[48] = 2; /* MsvAvNbDomainName */
	m[50] = (uint8_t)al;
	m[51] = (uint8_t)(al >> 8);
	memset(m + 52, 'L', al); /* then MsvAvEOL, zeros from calloc */
	*n = 48 + ilen;
	return m;
}

/* The NTLMv2 response is the client's AV pairs plus 48 bytes, in a field with a 16-bit length
 * (MS-NLMP 2.2.2.10): the server's target info with the pairs the client adds (here, with no
 * timestamp: the channel bindings, 20 bytes, and "cifs/Server", 26) over 65487 bytes cannot
 * be answered. It was answered with the length cut to its low 16 bits (found by
 * tests/fuzz/fuzz_ntlm.c's invariants; the reproducer is tests/fuzz/crashes/ntlm/long-target-
 * info). */
START_TEST(test_ntlm_long_target_info)
{
	enum { ADDED = 20 + 4 + 22 };
	uint8_t skey[16];
	struct pv_buf b = PV_BUF_INIT;
	struct pv_smb_ntlm_challenge c;
	size_t n;
	uint8_t *m = long_challenge(0xffff - 48 - ADDED, &n);
	const uint8_t *a;

	ck_assert_int_eq(pv_smb_ntlm_parse_challenge(m, n, &c), 0);
	ck_assert_uint_eq(c.target_info_len, 0xffff - 48 - ADDED);
	ck_assert_int_eq(authenticate(&c, "cifs/Server", &b, skey, &a), 0);
	ck_assert_uint_eq(a[20] | a[21] << 8, 0xffff); /* NtChallengeResponse: just fits */
	free(m);
	m = long_challenge(0xffff - 47 - ADDED, &n);
	ck_assert_int_eq(pv_smb_ntlm_parse_challenge(m, n, &c), 0);
	ck_assert_int_eq(authenticate(&c, "cifs/Server", &b, skey, NULL),
			 -2); /* refused, not sent with its length cut */
	free(m);
	pv_buf_release(&b, 0);
}
END_TEST

/* The client's AV pairs (MS-NLMP 3.1.5.1.2) against a Windows client's, the AUTHENTICATE of
 * the appendix of "SMB 2 and SMB 3 security in Windows 10: the anatomy of signing and
 * cryptographic keys" (test_ntlm_session_key): from the server's pairs (NbDomainName,
 * NbComputerName, DnsDomainName, DnsComputerName, Timestamp), Windows sent MsvAvFlags 2 (a
 * MIC), MsvAvSingleHost, MsvAvChannelBindings of zeros, MsvAvTargetName "cifs/SUT311" and
 * MsvAvEOL. Ours are the same bytes in the same order, but MsvAvSingleHost (random bytes no
 * server needs). Then what varies: no timestamp (no MsvAvFlags: no MIC asked), a server's
 * own MsvAvFlags (the MIC bit set in it, not a second pair), a server's own target name or
 * channel bindings (replaced, never sent twice). */
START_TEST(test_ntlm_av_pairs)
{
	uint8_t win[256], server[256], want[256];
	size_t wl, sl = 0, vl;
	struct pv_smb_ntlm_challenge c = {0};
	struct pv_buf b = PV_BUF_INIT;
	const uint8_t *v;
	unsigned count;

	ck_assert_uint_eq(wl = pv_unit_unhex(BLOG_INFO, win, sizeof(win)), 190);
	/* the server's: Windows' first five pairs (4 x 16 + 12 bytes), MsvAvEOL */
	memcpy(server, win, sl = 4 * 16 + 12);
	memset(server + sl, 0, 4);
	sl += 4;
	/* what Windows sent up to its MsvAvEOL, MsvAvSingleHost (52 bytes at 84) taken out */
	memcpy(want, win, 84);
	memcpy(want + 84, win + 84 + 52, 186 - 84 - 52);
	c.target_info = server;
	c.target_info_len = sl;
	c.has_timestamp = 1;
	ck_assert_int_eq(pv_smb_ntlm_target_info(&c, "cifs/SUT311", &b), 0);
	ck_assert_uint_eq(b.len, 186 - 52);
	ck_assert_mem_eq(b.data, want, b.len);

	/* no timestamp: no MsvAvFlags, the rest as before */
	c.has_timestamp = 0;
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_smb_ntlm_target_info(&c, "cifs/SUT311", &b), 0);
	ck_assert_ptr_null(av_pair((uint8_t *)b.data, b.len, 6, &vl, &count));
	ck_assert_ptr_nonnull(v = av_pair((uint8_t *)b.data, b.len, 10, &vl, &count));
	ck_assert_uint_eq(vl, 16);
	ck_assert_ptr_nonnull(v = av_pair((uint8_t *)b.data, b.len, 9, &vl, &count));
	ck_assert_uint_eq(vl, 22);
	ck_assert_mem_eq(v, "c\0i\0f\0s\0/\0S\0U\0T\0003\0001\0001\0", 22);

	/* the server's own MsvAvFlags (1: constrained authentication), target name and channel
	 * bindings, before its MsvAvEOL */
	memcpy(server + sl - 4,
	       "\x06\0\x04\0\x01\0\0\0"
	       "\x09\0\x04\0x\0y\0"
	       "\x0a\0\x10\0AAAAAAAAAAAAAAAA"
	       "\0\0\0\0",
	       8 + 8 + 20 + 4);
	c.target_info_len = sl + 8 + 8 + 20;
	c.has_timestamp = 1;
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_smb_ntlm_target_info(&c, "cifs/SUT311", &b), 0);
	ck_assert_ptr_nonnull(v = av_pair((uint8_t *)b.data, b.len, 6, &vl, &count));
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(smb2_get32(v), 3);
	ck_assert_ptr_nonnull(v = av_pair((uint8_t *)b.data, b.len, 9, &vl, &count));
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(vl, 22);
	ck_assert_ptr_nonnull(v = av_pair((uint8_t *)b.data, b.len, 10, &vl, &count));
	ck_assert_uint_eq(count, 1);
	ck_assert_mem_eq(v, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	/* the server's other pairs first, as they came; MsvAvEOL last */
	ck_assert_mem_eq(b.data, server, 4 * 16 + 12);
	ck_assert_mem_eq(b.data + b.len - 4, "\0\0\0\0", 4);
	pv_buf_release(&b, 0);
}
END_TEST

/* The AUTHENTICATE's MIC (MS-NLMP 3.1.5.1.2), recomputed here with util/digest's HMAC-MD5:
 * keyed with the session key (ExportedSessionKey: SessionBaseKey, no KEY_EXCH), over the
 * NEGOTIATE sent, the CHALLENGE as it came and the AUTHENTICATE with its MIC field zero; any
 * of the three changed gives another MIC. The AV pairs of the response the MIC covers say a
 * MIC is there. */
START_TEST(test_ntlm_mic)
{
	uint8_t tok[256], skey[16], mic[16], other[16];
	struct pv_buf b = PV_BUF_INIT, all = PV_BUF_INIT;
	struct pv_smb_ntlm_challenge c;
	const uint8_t *m, *v;
	size_t n = challenge_token(tok, 1), mlen, vl;
	unsigned count;

	ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, n, &c), 0);
	ck_assert_int_eq(authenticate(&c, "cifs/srvu1", &b, skey, &m), 0);
	mlen = smb2_get32(m + 40) + smb2_get16(m + 36); /* UserName, the last buffer, ends it */
	ck_assert_ptr_nonnull(v = av_pair(m + smb2_get32(m + 24) + 16 + 28,
					  smb2_get16(m + 20) - 16 - 28, 6, &vl, &count));
	ck_assert_uint_eq(smb2_get32(v), 2);
	pv_buf_add(&all, NEGO, NEGO_LEN);
	pv_buf_add(&all, c.msg, c.msg_len);
	pv_buf_add(&all, m, mlen);
	memset(all.data + NEGO_LEN + c.msg_len + PV_SMB_NTLM_MIC_AT, 0, 16);
	pv_hmac_md5(skey, 16, all.data, all.len, mic);
	ck_assert_mem_eq(m + PV_SMB_NTLM_MIC_AT, mic, 16);
	/* a byte of each message changed: another MIC */
	for (size_t at = 0; at < all.len; at += all.len / 7) {
		if (at >= NEGO_LEN + c.msg_len + PV_SMB_NTLM_MIC_AT &&
		    at < NEGO_LEN + c.msg_len + PV_SMB_NTLM_MIC_AT + 16)
			continue;
		all.data[at] ^= 1;
		pv_hmac_md5(skey, 16, all.data, all.len, other);
		ck_assert(memcmp(other, mic, 16) != 0);
		all.data[at] ^= 1;
	}
	pv_buf_release(&b, 0);
	pv_buf_release(&all, 0);
}
END_TEST

/* The SPNEGO mechListMIC of an AUTHENTICATE with a MIC (RFC 4178 5; Samba's server wants it
 * once NTLM signs and has a MIC): NTLMSSP's signature with extended session security and no
 * KEY_EXCH, recomputed here with util/digest (MS-NLMP 3.4.4.2, 3.4.5.2: SIGNKEY = MD5(key ||
 * magic constant || NUL); Version 1, HMAC_MD5(SIGNKEY, SeqNum 0 || mechTypes)[0..7], SeqNum 0)
 * over the DER of the mechTypes our NegTokenInit offered, in the NegTokenResp after the
 * AUTHENTICATE; none without a timestamp (no MIC) or NTLM signing. The server's is checked
 * in its final token. */
static void signature(const uint8_t key[16], const char *magic, uint8_t sig[16])
{
	static const uint8_t types[] = {0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01,
					0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a};
	uint8_t in[128], sk[16], mac[16];
	size_t ml = strlen(magic) + 1;

	memcpy(in, key, 16);
	memcpy(in + 16, magic, ml);
	pv_md5(in, 16 + ml, sk);
	memset(in, 0, 4);
	memcpy(in + 4, types, sizeof(types));
	pv_hmac_md5(sk, 16, in, 4 + sizeof(types), mac);
	memset(sig, 0, 16);
	sig[0] = 1;
	memcpy(sig + 4, mac, 8);
}

START_TEST(test_ntlm_mech_list_mic)
{
	static const char cli[] = "session key to client-to-server signing key magic constant";
	static const char srv[] = "session key to server-to-client signing key magic constant";
	uint8_t tok[256], skey[16], want[16], got[16], fin[29];
	struct pv_buf b = PV_BUF_INIT;
	struct pv_smb_ntlm_challenge c;
	size_t n = challenge_token(tok, 1);

	/* the mechTypes signed are those our NegTokenInit offers */
	ck_assert_int_eq(pv_smb_ntlm_negotiate(&b, NULL, NULL), 0);
	ck_assert_ptr_nonnull(memmem(
		b.data, b.len, "\x30\x0c\x06\x0a\x2b\x06\x01\x04\x01\x82\x37\x02\x02\x0a", 14));
	ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, n, &c), 0);
	ck_assert(pv_smb_ntlm_signs(&c));
	ck_assert_int_eq(authenticate(&c, "cifs/srvu1", &b, skey, NULL), 0);
	signature(skey, cli, want);
	ck_assert_uint_ge(b.len, 20);
	ck_assert_mem_eq(b.data + b.len - 20, "\xa3\x12\x04\x10", 4);
	ck_assert_mem_eq(b.data + b.len - 16, want, 16);
	pv_smb_ntlm_mech_list_mic(skey, false, got);
	ck_assert_mem_eq(got, want, 16);
	/* the server's, in its final NegTokenResp { accept-completed, mechListMIC } */
	signature(skey, srv, want);
	pv_smb_ntlm_mech_list_mic(skey, true, got);
	ck_assert_mem_eq(got, want, 16);
	memcpy(fin, "\xa1\x1b\x30\x19\xa0\x03\x0a\x01\x00\xa3\x12\x04\x10", 13);
	memcpy(fin + 13, want, 16);
	ck_assert_int_eq(pv_smb_ntlm_final_mic(fin, sizeof(fin), want), 0);
	fin[28] ^= 1;
	ck_assert_int_eq(pv_smb_ntlm_final_mic(fin, sizeof(fin), want), -1);
	ck_assert_int_eq(pv_smb_ntlm_final_mic(fin, 0, want), 0);  /* none */
	ck_assert_int_eq(pv_smb_ntlm_final_mic(fin, 9, want), -2); /* cut */
	ck_assert_int_eq(pv_smb_ntlm_final_mic(
				 (const uint8_t *)"\xa1\x07\x30\x05\xa0\x03\x0a\x01\x00", 9, want),
			 0);
	ck_assert_int_eq(pv_smb_ntlm_final_mic((const uint8_t *)"\x05\x00", 2, want), -2);

	/* no timestamp, or no NTLM signing: no MIC, no mechListMIC */
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(pv_smb_ntlm_parse_challenge(tok, n, &c), 0);
		if (k == 0)
			c.has_timestamp = 0;
		else
			c.flags &= ~0x10u;
		ck_assert(!pv_smb_ntlm_signs(&c));
		ck_assert_int_eq(authenticate(&c, "cifs/srvu1", &b, skey, NULL), 0);
		ck_assert_int_eq(pv_smb_ntlm_final_mic((const uint8_t *)b.data, b.len, want), 0);
		ck_assert_ptr_null(memmem(b.data, b.len, "\xa3\x12\x04\x10", 4));
	}
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(test_smb2_header)
{
	struct smb2_hdr h = {1, SMB2_CREATE,	    64,
			     0, SMB2_FLAGS_RELATED, 96,
			     7, 0x1122334455ull,    0xabcdef0123456789ull},
			g;
	uint8_t p[SMB2_HDR];

	smb2_hdr_put(p, &h);
	ck_assert_mem_eq(p, "\xfeSMB\x40\x00", 6);
	ck_assert_uint_eq(smb2_get16(p + 12), SMB2_CREATE);
	ck_assert_uint_eq(smb2_get64(p + 24), 0x1122334455ull);
	ck_assert_int_eq(smb2_hdr_get(p, sizeof(p), &g), 0);
	ck_assert_uint_eq(g.command, h.command);
	ck_assert_uint_eq(g.credits, 64);
	ck_assert_uint_eq(g.next, 96);
	ck_assert_uint_eq(g.tree, 7);
	ck_assert_uint_eq(g.mid, h.mid);
	ck_assert_uint_eq(g.session, h.session);
	/* async: the tree id's place holds the AsyncId */
	smb2_put32(p + 16, SMB2_FLAGS_ASYNC | SMB2_FLAGS_RESPONSE);
	ck_assert_int_eq(smb2_hdr_get(p, sizeof(p), &g), 0);
	ck_assert_uint_eq(g.tree, 0);
	ck_assert_int_eq(smb2_hdr_get(p, SMB2_HDR - 1, &g), -1);
	p[0] = 0xff; /* SMB1 */
	ck_assert_int_eq(smb2_hdr_get(p, sizeof(p), &g), -1);
}
END_TEST

/* A CREATE answer's contexts (2.2.14.2) searched by name: found in the chain, missing, and
 * each way a context can fall outside; DH2Q's and DH2C's data as MS-SMB2 lays them out. */
START_TEST(test_smb2_create_ctx)
{
	uint8_t b[64] = {0}, guid[16], fid[16], out[SMB2_RECONNECT_CTX_LEN];
	struct smb2_rd r, d;

	/* "MxAc" with 8 bytes of data, then "DH2Q" with 8 (Timeout 60000, Flags 0) */
	smb2_put32(b, 32);
	smb2_put16(b + 4, 16), smb2_put16(b + 6, 4), memcpy(b + 16, "MxAc", 4);
	smb2_put16(b + 10, 24), smb2_put32(b + 12, 8);
	smb2_put16(b + 32 + 4, 16), smb2_put16(b + 32 + 6, 4), memcpy(b + 48, "DH2Q", 4);
	smb2_put16(b + 32 + 10, 24), smb2_put32(b + 32 + 12, 8), smb2_put32(b + 56, 60000);
	smb2_rd_init(&r, b, 64);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), 1);
	ck_assert_uint_eq(d.len, 8);
	ck_assert_uint_eq(smb2_rd_u32(&d), 60000);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "MxAc", &d), 1);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "RqLs", &d), 0);
	smb2_rd_init(&r, b, 0); /* no contexts */
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), 0);
	smb2_put32(b, 8); /* a Next that does not move past the header */
	smb2_rd_init(&r, b, 64);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), -1);
	ck_assert_msg(strstr(r.why, "Next of 8"), "%s", r.why);
	smb2_put32(b, 64); /* a Next past the end */
	smb2_rd_init(&r, b, 64);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), -1);
	smb2_put32(b, 32);
	smb2_put32(b + 32 + 12, 9); /* data past the end */
	smb2_rd_init(&r, b, 64);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), -1);
	smb2_put32(b + 32 + 12, 8);
	smb2_put16(b + 32 + 4, 60); /* a name past the end */
	smb2_rd_init(&r, b, 64);
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), -1);
	smb2_rd_init(&r, b, 40); /* the second context's header cut */
	ck_assert_int_eq(smb2_create_ctx_find(&r, "DH2Q", &d), -1);

	for (int i = 0; i < 16; i++)
		guid[i] = (uint8_t)(0xa0 + i), fid[i] = (uint8_t)i;
	ck_assert_int_eq(smb2_durable_ctx(out, guid), 32);
	ck_assert_mem_eq(out, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	ck_assert_mem_eq(out + 16, guid, 16);
	ck_assert_int_eq(smb2_reconnect_ctx(out, fid, guid), 36);
	ck_assert_mem_eq(out, fid, 16);
	ck_assert_mem_eq(out + 16, guid, 16);
	ck_assert_uint_eq(smb2_get32(out + 32), 0);
}
END_TEST

START_TEST(test_smb2_names)
{
	struct pv_buf b = PV_BUF_INIT;
	char out[16];

	ck_assert_int_eq(smb2_name("u1/static/d\xc3\xa9", &b), 0);
	ck_assert_uint_eq(b.len, 2 * 12);
	ck_assert_mem_eq(b.data, "u\0001\000\\\0s\0", 8);
	ck_assert_mem_eq(b.data + 20, "d\0\xe9\0", 4);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)b.data, b.len, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "u1\\static\\d\xc3\xa9");
	/* too long for the buffer, a lone surrogate, an odd length: refused */
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)b.data, b.len, out, 13), -1);
	ck_assert_int_eq(
		pv_utf16le_to_utf8((const uint8_t *)"\x00\xd8\x41\x00", 4, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"\x00\xdc", 2, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a", 1, out, sizeof(out)), -1);
	ck_assert_int_eq(
		pv_utf16le_to_utf8((const uint8_t *)"\x3d\xd8\x00\xde", 4, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "\xf0\x9f\x98\x80");
	pv_buf_reset(&b);
	ck_assert_int_eq(smb2_name("bad\xff", &b), -1);
	ck_assert_str_eq(smb2_status_name(ST_DISK_FULL), "NT_STATUS_DISK_FULL");
	ck_assert_ptr_null(smb2_status_name(0xC0FFEE00u));
	ck_assert_str_eq(smb2_cmd_name(SMB2_QUERY_DIRECTORY), "QUERY_DIRECTORY");
	ck_assert_str_eq(smb2_cmd_name(SMB2_NEGOTIATE), "NEGOTIATE");
	ck_assert_str_eq(smb2_cmd_name(0xffff), "an unknown command");
	pv_buf_release(&b, 0);
}
END_TEST

/* The blog's final SESSION_SETUP answer of its SMB 3.1.1 example ("the anatomy of signing
 * and cryptographic keys", appendix: "SessionId 0x100000000019 COMPLETED"), as it went on the
 * wire, signed with AES-128-CMAC under SigningKey 73FE7A9A77BEF0BDE49C650D8CCB5F76; and the
 * second channel's, signed under C962BCA1A9DD1697B030644199705431. 3.1.1 signs with the same
 * AES-128-CMAC as 3.0 when no signing algorithm is negotiated, so these are published
 * signatures of the 3.x algorithm (smb2_sign_alg(0x0311) is AES-128-CMAC). */
static const char SETUP_1[] =
	"FE534D4240000100000000000100800009000000000000000300000000000000FFFE000000000000"
	"1900000000100000EBE146DA120BA25FC3376A49DFE31BC10900000048001D00A11B3019A0030A01"
	"00A3120410010000003B453CDC3524164200000000";
static const char SETUP_2[] =
	"FE534D4240000100000000000100800009000000000000000300000000000000FFFE000000000000"
	"19000000001000008D604217FFBACF40635BF9D8729921500900000048001D00A11B3019A0030A01"
	"00A312041001000000CFB046FC5D368E2200000000";

/* Signing keys as smb2_keys_make would set them for dialect d, from the signing key itself. */
static void signing(struct smb2_keys *k, uint16_t d, const uint8_t key[16])
{
	ck_assert_int_eq(smb2_keys_signing(k, d < SMB2_300 ? SMB2_HMAC_SHA256 : SMB2_AES_CMAC, key),
			 0);
}

START_TEST(test_smb2_signing)
{
	uint8_t m[128], k[16], saved[128];
	struct smb2_keys keys = {0};
	struct smb2_conn c = {0};
	size_t n;

	/* the published signatures verify; the message is left as it came */
	ck_assert_uint_eq(n = pv_unit_unhex(SETUP_1, m, sizeof(m)), 101);
	memcpy(saved, m, n);
	pv_unit_unhex("73FE7A9A77BEF0BDE49C650D8CCB5F76", k, 16);
	signing(&keys, SMB2_311, k);
	ck_assert_int_eq(smb2_verify(m, n, &keys), 0);
	ck_assert_mem_eq(m, saved, n);
	/* any byte changed, the signature's or the message's, or another key: refused */
	for (size_t i = 0; i < n; i += 7) {
		m[i] ^= 0x20;
		ck_assert_msg(smb2_verify(m, n, &keys) == -1, "byte %zu flipped", i);
		m[i] ^= 0x20;
	}
	ck_assert_int_eq(smb2_verify(m, n - 1, &keys), -1);
	signing(&keys, SMB2_210, k); /* HMAC-SHA256 is not it */
	ck_assert_int_eq(smb2_verify(m, n, &keys), -1);
	/* signed anew: the same bytes */
	signing(&keys, SMB2_311, k);
	memset(m + SMB2_SIG_AT, 0, SMB2_SIG_LEN);
	smb2_put32(m + 16, SMB2_FLAGS_RESPONSE);
	smb2_sign(m, n, &keys);
	ck_assert_mem_eq(m, saved, n);
	ck_assert_uint_eq(pv_unit_unhex(SETUP_2, m, sizeof(m)), 101);
	pv_unit_unhex("C962BCA1A9DD1697B030644199705431", k, 16);
	signing(&keys, SMB2_302, k);
	ck_assert_int_eq(smb2_verify(m, n, &keys), 0);

	/* the signing keys: SMB 3.0 and 3.0.2 derive (the blog's 3.0 example), 2.x take the
	 * session key as it is */
	pv_unit_unhex("7CD451825D0450D235424E44BA6E78CC", k, 16);
	for (uint16_t d = SMB2_300; d; d = d == SMB2_300 ? SMB2_302 : 0) {
		c.dialect = d;
		c.sign_alg = SMB2_AES_CMAC;
		ck_assert_int_eq(smb2_keys_make(&keys, &c, k, 16, NULL, NULL), 0);
		ck_assert_str_eq(pv_unit_hex(keys.sign, 16), "0b7e9c5cac36c0f6ea9ab275298cedce");
		ck_assert_ptr_null(keys.enc); /* no cipher negotiated: no encryption keys */
	}
	c.dialect = SMB2_210;
	c.sign_alg = SMB2_HMAC_SHA256;
	ck_assert_int_eq(smb2_keys_make(&keys, &c, k, 16, NULL, NULL), 0);
	ck_assert_mem_eq(keys.sign, k, 16);
	ck_assert_str_eq(smb2_sign_name(SMB2_HMAC_SHA256), "HMAC-SHA256");
	ck_assert_str_eq(smb2_sign_name(SMB2_AES_CMAC), "AES-128-CMAC");
	ck_assert_str_eq(smb2_sign_name(SMB2_AES_GMAC), "AES-128-GMAC");

	/* no published HMAC-SHA256 signature exists for 2.x: the blog's message, signature
	 * zeroed, under MS-NLMP 4.2.4's session key, was signed by OpenSSL 3.0.19 and Python's
	 * hmac (the first 16 bytes of the HMAC):
	 *   openssl mac -digest SHA256 -macopt hexkey:8de40ccadbc14a82f15cb0ad0de95ca3 \
	 *     -in msg.bin HMAC
	 * and for 3.0.2 under the key derived from it (openssl kdf ... KBKDF as in check_util's
	 * test_kdf_hmac_sha256: da4ac0beee007ec22a4890178c927c14), by
	 *   openssl mac -cipher AES-128-CBC -macopt hexkey:da4ac0beee007ec22a4890178c927c14 \
	 *     -in msg.bin CMAC
	 * and Python's cryptography (CMAC) */
	pv_unit_unhex(SETUP_1, m, sizeof(m));
	pv_unit_unhex("8de40ccadbc14a82f15cb0ad0de95ca3", k, 16);
	signing(&keys, SMB2_210, k);
	smb2_sign(m, n, &keys);
	ck_assert_str_eq(pv_unit_hex(m + SMB2_SIG_AT, 16), "60ac46c03d2d180886d30fc9e7be5daf");
	ck_assert_int_eq(smb2_verify(m, n, &keys), 0);
	c.dialect = SMB2_302;
	c.sign_alg = SMB2_AES_CMAC;
	ck_assert_int_eq(smb2_keys_make(&keys, &c, k, 16, NULL, NULL), 0);
	ck_assert_str_eq(pv_unit_hex(keys.sign, 16), "da4ac0beee007ec22a4890178c927c14");
	smb2_sign(m, n, &keys);
	ck_assert_str_eq(pv_unit_hex(m + SMB2_SIG_AT, 16), "c09aadb80f4306e2efd969c1457f7284");
	ck_assert_int_eq(smb2_verify(m, n, &keys), 0);
	/* a request gets the flag set by signing */
	smb2_put32(m + 16, 0);
	smb2_sign(m, n, &keys);
	ck_assert_uint_eq(smb2_get32(m + 16), SMB2_FLAGS_SIGNED);
	smb2_keys_clear(&keys);
	smb2_keys_clear(&keys); /* twice is fine */
}
END_TEST

/* AES-128-GMAC signing (MS-SMB2 3.1.4.1, SMB 3.1.1 with the signing capabilities context):
 * no signature of it is published, so the expected ones were computed with OpenSSL's GMAC, an
 * implementation independent of ours (nettle, through util/digest): the key is the blog's
 * SigningKey; the message is SETUP_1 as signed (Command at bytes 12-13: 1, or 12 for the
 * CANCEL; Flags at 16-19 with SIGNED, 0x8, and RESPONSE, 0x1, for the answer; the signature,
 * bytes 48-63, zero) and the nonce is the one the spec describes (MessageId, 3, then a 32-bit
 * word with bit 0 for an answer and bit 1 for a CANCEL, both little-endian):
 *   python3 -c 'import sys, struct; m = bytearray(bytes.fromhex(SETUP_1));
 *     m[12:14] = struct.pack("<H", CMD); m[16:20] = struct.pack("<I", FLAGS);
 *     m[48:64] = bytes(16); sys.stdout.buffer.write(m)' > msg
 *   openssl mac -cipher AES-128-GCM -macopt hexkey:73FE7A9A77BEF0BDE49C650D8CCB5F76 \
 *     -macopt hexiv:03000000000000000N000000 -in msg GMAC
 * with CMD, FLAGS, N = 1, 0x8, 0 (a request), 1, 0x9, 1 (an answer), 12, 0x8, 2 (a CANCEL);
 * OpenSSL 3.0.19 printed the three below, and python3's cryptography (AESGCM(key).encrypt(
 * nonce, b"", msg), the tag) the same. smb2_sign must make each, and smb2_verify take it and
 * refuse it with a bit changed. */
START_TEST(test_smb2_gmac)
{
	static const char *const want[] = {"2547509958dbdf8c9d1a2fffc2d92333",
					   "75d05bac99ff7fcc52a44c354381d559",
					   "6ca1cfa270156aec1a6e50334aede82c"};
	uint8_t m[101], key[16];
	struct smb2_keys k = {0};

	pv_unit_unhex(SETUP_1, m, sizeof(m));
	pv_unit_unhex("73FE7A9A77BEF0BDE49C650D8CCB5F76", key, 16);
	ck_assert_int_eq(smb2_keys_signing(&k, SMB2_AES_GMAC, key), 0);
	for (int kind = 0; kind < 3; kind++) {
		smb2_put16(m + 12, kind == 2 ? SMB2_CANCEL : SMB2_SESSION_SETUP);
		smb2_put32(m + 16, kind == 1 ? SMB2_FLAGS_RESPONSE : 0);
		memset(m + SMB2_SIG_AT, 0xee, 16); /* whatever is there is replaced */
		smb2_sign(m, sizeof(m), &k);
		ck_assert_str_eq(pv_unit_hex(m + SMB2_SIG_AT, 16), want[kind]);
		ck_assert_uint_eq(smb2_get32(m + 16),
				  (kind == 1 ? SMB2_FLAGS_RESPONSE : 0) | SMB2_FLAGS_SIGNED);
		ck_assert_int_eq(smb2_verify(m, sizeof(m), &k), 0);
		m[60] ^= 1;
		ck_assert_int_eq(smb2_verify(m, sizeof(m), &k), -1);
		m[60] ^= 1;
	}
	/* the role bit is in the nonce: an answer's signature is not a request's */
	smb2_put16(m + 12, SMB2_SESSION_SETUP);
	smb2_put32(m + 16, 0);
	smb2_sign(m, sizeof(m), &k);
	smb2_put32(m + 16, SMB2_FLAGS_RESPONSE | SMB2_FLAGS_SIGNED);
	ck_assert_int_eq(smb2_verify(m, sizeof(m), &k), -1);
	smb2_keys_clear(&k);
}
END_TEST

/* Microsoft's SMB 3.1.1 example ("SMB 2 and SMB 3 security in Windows 10: the anatomy of
 * signing and cryptographic keys", Open Specifications blog, 2017, appendix "Key derivation
 * example for SMB 3.1.1 multichannel", master session; the same messages and hashes are in
 * "SMB 3.1.1 Pre-authentication integrity in Windows 10", 2015): the NEGOTIATE request our
 * encoder makes from the same inputs, the preauth integrity hash after each of the five
 * messages, the NEGOTIATE answer decoded and checked, and the session's keys from
 * SessionKey 270E1BA896585EEB7AF3472D3B4C75A7 and the final hash: the blog's SigningKey
 * 73FE7A9A77BEF0BDE49C650D8CCB5F76, EncryptionKey 629BCBC54422A0F572B97F45989B6073 and
 * DecryptionKey E2AF0DCEFAC68DA71A0DFBD0D1350D74 (CipherId 2, AES-128-GCM). */
static const char NEG_REQ[] =
	"FE534D4240000100000000000000800000000000000000000100000000000000FFFE000000000000"
	"00000000000000000000000000000000000000000000000024000500000000003F000000ECD86F32"
	"6276024F9F7752B89BB33F3A70000000020000000202100200030203110300000100260000000000"
	"010020000100FA49E6578F1F3A9F4CD3E9CC14A67AA884B3D05844E0E5A118225C15887F32FF0000"
	"0200060000000000020002000100";
static const char NEG_RSP[] =
	"FE534D4240000100000000000000010001000000000000000100000000000000FFFE000000000000"
	"000000000000000000000000000000000000000000000000410001001103020039CBCAF329714942"
	"BDCE5D60F09AB3FB2F000000000080000000800000008000D8DAE5ADCBAED00109094AB095AED001"
	"80004001C00100006082013C06062B0601050502A08201303082012CA01A3018060A2B0601040182"
	"3702021E060A2B06010401823702020AA282010C048201084E45474F455854530100000000000000"
	"60000000700000007C7CC0FD06D6362D02DDE1CF343BFE292900F49750B4AA97934D9C4296B26E51"
	"FD370471B235E15A50DAE15BD5489C87000000000000000060000000010000000000000000000000"
	"5C33530DEAF90D4DB2EC4AE3786EC3084E45474F4558545303000000010000004000000098000000"
	"7C7CC0FD06D6362D02DDE1CF343BFE295C33530DEAF90D4DB2EC4AE3786EC3084000000058000000"
	"3056A05430523027802530233121301F06035504031318546F6B656E205369676E696E6720507562"
	"6C6963204B65793027802530233121301F06035504031318546F6B656E205369676E696E67205075"
	"626C6963204B6579010026000000000001002000010060A3C3B95C3C7CCD51EC536648D9B3AC74C4"
	"83CA5B65385A251117BEB30712E50000020004000000000001000200";
static const char SETUP_REQ1[] =
	"FE534D4240000100000000000100800000000000000000000200000000000000FFFE000000000000"
	"00000000000000000000000000000000000000000000000019000001010000000000000058004A00"
	"0000000000000000604806062B0601050502A03E303CA00E300C060A2B06010401823702020AA22A"
	"04284E544C4D5353500001000000978208E200000000000000000000000000000000060380250000"
	"000F";
static const char SETUP_RSP1[] =
	"FE534D4240000100160000C00100010001000000000000000200000000000000FFFE000000000000"
	"190000000010000000000000000000000000000000000000090000004800B300A181B03081ADA003"
	"0A0101A10C060A2B06010401823702020AA281970481944E544C4D53535000020000000C000C0038"
	"00000015828AE20D1D8BA31179D008000000000000000050005000440000000A0092270000000F53"
	"005500540033003100310002000C0053005500540033003100310001000C00530055005400330031"
	"00310004000C0053005500540033003100310003000C0053005500540033003100310007000800A1"
	"A1F5ADCBAED00100000000";
static const char SETUP_REQ2[] =
	"FE534D4240000100000000000100800000000000000000000300000000000000FFFE000000000000"
	"1900000000100000000000000000000000000000000000001900000101000000000000005800CF01"
	"0000000000000000A18201CB308201C7A0030A0101A28201AA048201A64E544C4D53535000030000"
	"001800180090000000EE00EE00A80000000C000C00580000001A001A0064000000120012007E0000"
	"001000100096010000158288E2060380250000000FECAC77A5F385A8BF9C38C706EEEDDCD3530055"
	"005400330031003100610064006D0069006E006900730074007200610074006F0072004400520049"
	"0056004500520033003100310000000000000000000000000000000000000000000000000063078E"
	"B639FE03E20A231C3AE3BF23080101000000000000A1A1F5ADCBAED001BC4AD05F223CC90F000000"
	"0002000C0053005500540033003100310001000C0053005500540033003100310004000C00530055"
	"00540033003100310003000C0053005500540033003100310007000800A1A1F5ADCBAED001060004"
	"00020000000800300030000000000000000000000000300000B61FEFCAA857EA57BF1EDCEBF8974B"
	"8E0EBA5A6DFD9D07A31D11B548F8C9D0CC0A00100000000000000000000000000000000000090016"
	"0063006900660073002F005300550054003300310031000000000000000000000000003B9BDFF38F"
	"5EE8F9663F11A0F4C03A78A31204100100000063775A9A5FD97F0600000000";

/* What AES-128-GCM context a does: the same 32 bytes sealed under the same nonce, ciphertext
 * and tag into out. The key inside a context cannot be read, so a key is known through this:
 * two contexts give the same 48 bytes when their keys are the same, and different keys give
 * the same 48 bytes with a probability of about 2^-384. */
static void gcm_out(struct pv_aead *a, uint8_t out[48])
{
	static const uint8_t nonce[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	memset(out, 0x5a, 32);
	pv_aead_seal(a, nonce, sizeof(nonce), "aad", 3, out, 32, out + 32);
}

/* gcm_out of a context made from key */
static void gcm_out_key(const uint8_t key[16], uint8_t out[48])
{
	struct pv_aead *g;

	ck_assert_ptr_nonnull(g = pv_aead_new(PV_AES128_GCM, key));
	gcm_out(g, out);
	pv_aead_free(g);
}

/* gcm_out of a context made from the 16-byte key written in hex */
static void gcm_out_of(const char *hexkey, uint8_t out[48])
{
	uint8_t key[16];

	ck_assert_uint_eq(pv_unit_unhex(hexkey, key, sizeof(key)), 16);
	gcm_out_key(key, out);
}

START_TEST(test_smb311_preauth)
{
	static const char *const msgs[] = {NEG_REQ, NEG_RSP, SETUP_REQ1, SETUP_RSP1, SETUP_REQ2};
	static const char *const hashes[] = {
		"dd94efc5321bb618a2e208ba8920d2f422992526947a409b5037de1e0fe8c736"
		"2b8c47122594cde0ce26aa9dfc8bcdbde0621957672623351a7540f1e54a0426",
		"324bfa92a4f3a190e466ebea08d9c110dc88bfed758d9846ecc6f541cc1d02ae"
		"3c94a79f36011e997e13f841b91b50957ad07b19c8e2539c0b23fdae09d2c513",
		"ac0b0f2b9986257700365e416d142a6edc96df03594a19e52a15f6bd0d041cd5"
		"d432f8ed42c55e33197a50c9ec00f1462b50c592211b1471a04b56088fdfd5f9",
		"2729e3440dfddd839e37193f6e8f20c20cefb3469e453a70cd980eec06b88357"
		"40a73760085633364c8989895ece81bf102deeb14d4b7d48afa76901a7a38387",
		"0dd13628cc3ed218ef9df9772d436d0887ab9814bfae63a80aa845f36909db79"
		"28622dddad522d9751640a459762c5a9d6bb084cbb3ce6bdadef5d5bce3c6c01",
	};
	static const uint16_t dialects[] = {SMB2_202, SMB2_210, SMB2_300, SMB2_302, SMB2_311};
	static const uint16_t ciphers[] = {SMB2_AES128_GCM, SMB2_AES128_CCM};
	struct smb2_negotiate_req q = {dialects, 5, 0, 0x3f, {0}, {0}, ciphers, 2, NULL, 0};
	struct smb2_negotiate_rsp a;
	struct smb2_conn c = {0};
	struct smb2_keys k = {0};
	struct smb2_rd rd;
	struct pv_buf b = PV_BUF_INIT;
	uint8_t m[1024], h[64] = {0}, sk[16], enc[48], dec[48], want[48];
	size_t n;
	char why[200];

	/* the request: our encoder, the blog's inputs (GUID, salt, capabilities 0x3f, security
	 * mode 0, GCM then CCM), byte for byte the blog's body */
	n = pv_unit_unhex(NEG_REQ, m, sizeof(m));
	memcpy(q.guid, m + SMB2_HDR + 12, 16);
	pv_unit_unhex("FA49E6578F1F3A9F4CD3E9CC14A67AA884B3D05844E0E5A118225C15887F32FF", q.salt,
		      32);
	ck_assert_int_eq(smb2_negotiate_enc(&b, &q), 0);
	ck_assert_uint_eq(b.len, n - SMB2_HDR);
	ck_assert_mem_eq(b.data, m + SMB2_HDR, b.len);
	pv_buf_release(&b, 0);
	/* the hash, message after message */
	for (size_t i = 0; i < 5; i++) {
		n = pv_unit_unhex(msgs[i], m, sizeof(m));
		ck_assert_uint_gt(n, SMB2_HDR);
		smb2_preauth(h, m, n);
		ck_assert_str_eq(pv_unit_hex(h, 64), hashes[i]);
		if (i == 1) { /* the answer: 3.1.1, SHA-512, AES-128-GCM, no signing context */
			smb2_rd_init(&rd, m, n);
			ck_assert_int_eq(smb2_negotiate_dec(&rd, &a), 0);
			ck_assert_uint_eq(a.dialect, SMB2_311);
			ck_assert(a.has_preauth && a.has_cipher && !a.has_sign);
			ck_assert_uint_eq(a.cipher, SMB2_AES128_GCM);
			ck_assert_uint_eq(a.secbuf.len, 0x140);
			ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), 0);
			ck_assert_uint_eq(c.dialect, SMB2_311);
			ck_assert_uint_eq(c.cipher, SMB2_AES128_GCM);
			ck_assert_uint_eq(c.sign_alg, SMB2_AES_CMAC);
		}
	}
	/* the keys from the final hash */
	pv_unit_unhex("270E1BA896585EEB7AF3472D3B4C75A7", sk, 16);
	ck_assert_int_eq(smb2_keys_make(&k, &c, sk, 16, h, NULL), 0);
	ck_assert_str_eq(pv_unit_hex(k.sign, 16), "73fe7a9a77bef0bde49c650d8ccb5f76");
	/* the encryption keys are known through what they do (gcm_out): the blog's, so they
	 * differ from each other and from the signing key; and the final SESSION_SETUP answer
	 * must verify */
	ck_assert_ptr_nonnull(k.enc);
	ck_assert_ptr_nonnull(k.dec);
	gcm_out(k.enc, enc);
	gcm_out(k.dec, dec);
	ck_assert(memcmp(enc, dec, sizeof(enc)) != 0);
	gcm_out_key(k.sign, want);
	ck_assert(memcmp(enc, want, sizeof(enc)) != 0);
	ck_assert(memcmp(dec, want, sizeof(dec)) != 0);
	gcm_out_of("629BCBC54422A0F572B97F45989B6073", want);
	ck_assert_mem_eq(enc, want, sizeof(enc));
	gcm_out_of("E2AF0DCEFAC68DA71A0DFBD0D1350D74", want);
	ck_assert_mem_eq(dec, want, sizeof(dec));
	n = pv_unit_unhex(SETUP_1, m, sizeof(m));
	ck_assert_int_eq(smb2_verify(m, n, &k), 0);
	smb2_keys_clear(&k);
}
END_TEST

/* What smb2_negotiated refuses: a dialect not offered, 3.1.1 without its preauth context or
 * with another hash, a cipher or signing algorithm not offered, several chosen. */
START_TEST(test_smb2_negotiated)
{
	static const uint16_t dialects[] = {SMB2_210, SMB2_302, SMB2_311};
	static const uint16_t ciphers[] = {SMB2_AES128_GCM, SMB2_AES128_CCM};
	static const uint16_t signs[] = {SMB2_AES_GMAC, SMB2_AES_CMAC};
	struct smb2_negotiate_req q = {dialects, 3,	1, SMB2_CAP_ENCRYPTION, {0}, {0}, ciphers,
				       2,	 signs, 2};
	struct smb2_negotiate_rsp ok = {0}, a;
	struct smb2_conn c;
	char why[200];

	ok.dialect = SMB2_311;
	ok.security_mode = SMB2_SIGNING_REQUIRED;
	ok.caps = SMB2_CAP_LARGE_MTU;
	ok.has_preauth = ok.has_cipher = ok.has_sign = true;
	ok.hash_count = ok.cipher_count = ok.sign_count = 1;
	ok.hash = SMB2_HASH_SHA512;
	ok.cipher = SMB2_AES128_CCM;
	ok.sign = SMB2_AES_GMAC;
	ck_assert_int_eq(smb2_negotiated(&q, &ok, &c, why, sizeof(why)), 0);
	ck_assert(c.sign_required && c.multi_credit);
	ck_assert_uint_eq(c.cipher, SMB2_AES128_CCM);
	ck_assert_uint_eq(c.sign_alg, SMB2_AES_GMAC);
	a = ok;
	a.cipher = 0; /* none in common: fine, the connection cannot encrypt */
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c.cipher, SMB2_NO_CIPHER);
	a = ok;
	a.dialect = SMB2_300;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "the server chose dialect 0x0300, not one offered");
	a = ok;
	a.has_preauth = false;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "its SMB 3.1.1 NEGOTIATE answer has no preauth integrity context");
	a = ok;
	a.hash = 2;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), -1);
	ck_assert(strstr(why, "the first 0x0002, where SHA-512 (1) alone was offered"));
	a = ok;
	a.cipher = SMB2_AES256_GCM;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), -1);
	ck_assert(strstr(why, "chose 1 ciphers, the first 0x0004, not one offered"));
	a = ok;
	a.cipher_count = 2;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), -1);
	a = ok;
	a.sign = SMB2_HMAC_SHA256;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), -1);
	ck_assert(strstr(why, "signing algorithms, the first 0x0000, not one offered"));
	/* 3.0.2: AES-128-CCM when both said SMB2_GLOBAL_CAP_ENCRYPTION, else none */
	a = ok;
	a.dialect = SMB2_302;
	a.caps = SMB2_CAP_ENCRYPTION;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c.cipher, SMB2_AES128_CCM);
	ck_assert_uint_eq(c.sign_alg, SMB2_AES_CMAC);
	a.caps = 0;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c.cipher, SMB2_NO_CIPHER);
	a.dialect = SMB2_210;
	a.caps = SMB2_CAP_ENCRYPTION;
	ck_assert_int_eq(smb2_negotiated(&q, &a, &c, why, sizeof(why)), 0);
	ck_assert_uint_eq(c.cipher, SMB2_NO_CIPHER);
	ck_assert_uint_eq(c.sign_alg, SMB2_HMAC_SHA256);
}
END_TEST

/* Microsoft's encryption examples, through the transform header byte for byte:
 *   - SMB 3.0, AES-128-CCM: "Encryption in SMB 3.0: A protocol perspective" (Open
 *     Specifications blog, 2012): SessionKey B4546771B515F766A86735532DD6C4F0, session
 *     0x8e40014000011, a WRITE of "Smb3 encryption testing" and its answer;
 *   - SMB 3.1.1, AES-128-GCM: "SMB 3.1.1 Encryption in Windows 10" (2015): SessionKey
 *     419FDDF34C1E001909D362AE7FB6AF79 and its preauth hash, session 0x100000000025.
 * The keys are derived (their published values checked through what they encrypt), the
 * request sealed with the published nonce must give the published transformed message, and
 * the published answer must open to the published SMB2 message; one byte changed anywhere
 * after the protocol id, and it must not. */
static const struct {
	uint16_t dialect, cipher;
	const char *session_key, *preauth, *nonce;
	uint64_t sid;
	const char *plain, *sealed, *answer, *opened;
} SEALS[] = {
	{SMB2_300, SMB2_AES128_CCM, "B4546771B515F766A86735532DD6C4F0", NULL,
	 "66E69A111892584FB5ED524A744DA3EE", 0x8e40014000011ull,
	 "FE534D4240000100000000000900400008000000000000000400000000000000"
	 "FFFE0000010000001100001400E4080000000000000000000000000000000000"
	 "3100700017000000000000000000000015010000390000020100000039020000"
	 "00000000000000007000000000000000536D623320656E6372797074696F6E20"
	 "74657374696E67",
	 "FD534D4281A286535415445DAE393921E44FA42E66E69A111892584FB5ED524A"
	 "744DA3EE87000000000001001100001400E4080025C8FEE16605A437832D1CD5"
	 "2DA9F4645333482A175FE5384563F45FCDAFAEF38BC62BA4D5C62897996625A4"
	 "4C29BE5658DE2E6117585779E7B59FFD971278D08580D7FA899E410E910EABF5"
	 "AA1DB43050B33B49182637759AC15D84BFCDF5B6B238993C0F4CF4D6012023F6"
	 "C627297075D84B7803912D0A9639634453595EF3E33FFE4E7AC2AB",
	 "FD534D42A6015530A18F6D9AFFE22AFAE8E66484860000000000000011000014"
	 "00E4080050000000000001001100001400E40800DBF46435C5F14169293CE079"
	 "E344479BF670227E49873F458672C3098DAC467DD5809F369D67409166515787"
	 "1483E01F7BECD02064EAC3E235F913668BBC2F097980D4B378F1993EFF6E60D1"
	 "77309E5B",
	 "FE534D4240000100000000000900210009000000000000000400000000000000"
	 "FFFE0000010000001100001400E4080000000000000000000000000000000000"
	 "11000000170000000000000000000000"},
	{SMB2_311, SMB2_AES128_GCM, "419FDDF34C1E001909D362AE7FB6AF79",
	 "B23F3CBFD69487D9832B79B1594A367CDD950909B774C3A4C412B4FCEA9EDDDB"
	 "A7DB256BA2EA30E977F11F9B113247578E0E915C6D2A513B8F2FCA5707DC8770",
	 "C7D6822D269CAF48904C664C00000000", 0x100000000025ull,
	 "FE534D4240000100000000000900010008000000000000000500000000000000FFFE000001000000"
	 "25000000001000000000000000000000000000000000000031007000170000000000000000000000"
	 "0600000004000000010000000400000000000000000000007000000000000000536D623320656E63"
	 "72797074696F6E2074657374696E67",
	 "FD534D42BD73D97D2BC9001BCAFAC0FDFF5FEEBCC7D6822D269CAF48904C664C0000000087000000"
	 "0000010025000000001000006ECDD2A7AFC7B47763057A041B8FD4DAFFE990B70C9E09D36C084E02"
	 "D14EF247F8BDE38ACF6256F8B1D3B56F77FBDEB312FEA5E92CBCC1ED8FB2EBBFAA75E49A4A394BB4"
	 "4576545567C24D4C014D47C9FBDFDAFD2C4F9B72F8D256452620A299F48E29E53D6B61D1C13A19E9"
	 "1AF013F00D17E3ABC2FC3D36C8C1B6B93973253852DBD442E46EE8",
	 "FD534D42ACBE1CB7ED343ADF1725EF144D90D4B0E06831DD2E8EB7B4000000000000000050000000"
	 "00000100250000000010000026BBBF949983A6C1C796559D0F2C510CB651D1F7B6AC8DED32A2A0B8"
	 "F2D793A815C6F6B848D69767A215841A42D400AE6DDB5F0B44173A014973321FDD7950DA6179159B"
	 "82E03C9E18A050FF0EA1C967",
	 "FE534D4240000100000000000900010001000000000000000500000000000000FFFE000001000000"
	 "25000000001000000000000000000000000000000000000011000000170000000000000000000000"},
};

START_TEST(test_smb3_transform)
{
	for (size_t i = 0; i < sizeof(SEALS) / sizeof(SEALS[0]); i++) {
		struct smb2_conn c = {SEALS[i].dialect, SEALS[i].cipher, SMB2_AES_CMAC, false,
				      true};
		struct smb2_keys k = {0};
		uint8_t sk[16], pre[64] = {0}, nonce[16], f[512], want[512], plain[512];
		size_t pl, n;
		struct smb2_rd rd;
		struct smb2_tf t;

		pv_unit_unhex(SEALS[i].session_key, sk, 16);
		if (SEALS[i].preauth)
			pv_unit_unhex(SEALS[i].preauth, pre, 64);
		ck_assert_int_eq(smb2_keys_make(&k, &c, sk, 16, pre, NULL), 0);
		pv_unit_unhex(SEALS[i].nonce, nonce, 16);
		pl = pv_unit_unhex(SEALS[i].plain, f + SMB2_TF, sizeof(f) - SMB2_TF);
		smb2_seal(&k, SEALS[i].sid, nonce, f, pl);
		n = pv_unit_unhex(SEALS[i].sealed, want, sizeof(want));
		ck_assert_uint_eq(n, SMB2_TF + pl);
		ck_assert_msg(memcmp(f, want, n) == 0, "%s: sealed %s", smb2_cipher_name(c.cipher),
			      pv_unit_hex(f, n));
		/* the answer */
		n = pv_unit_unhex(SEALS[i].answer, f, sizeof(f));
		smb2_rd_init(&rd, f, n);
		ck_assert(smb2_is_tf(f, n));
		ck_assert_int_eq(smb2_tf_dec(&rd, &t), 0);
		ck_assert_uint_eq(t.session, SEALS[i].sid);
		ck_assert_uint_eq(t.size, n - SMB2_TF);
		memcpy(want, f, n);
		ck_assert_int_eq(smb2_unseal(&k, f, t.size), 0);
		pv_unit_unhex(SEALS[i].opened, plain, sizeof(plain));
		ck_assert_mem_eq(f + SMB2_TF, plain, t.size);
		/* one byte changed, from the signature on (the protocol id is no input), and
		 * it no longer opens */
		for (size_t at = 4; at < n; at++) {
			memcpy(f, want, n);
			f[at] ^= 0x01;
			ck_assert_msg(smb2_unseal(&k, f, t.size) == -1, "%s: byte %zu changed",
				      smb2_cipher_name(c.cipher), at);
		}
		/* the header checked: Flags, and OriginalMessageSize against what follows */
		memcpy(f, want, n);
		smb2_rd_init(&rd, f, n - 1);
		ck_assert_int_eq(smb2_tf_dec(&rd, &t), -1);
		snprintf((char *)plain, sizeof(plain),
			 "a transform header whose OriginalMessageSize (%zu) is not the %zu bytes "
			 "that follow it",
			 n - SMB2_TF, n - SMB2_TF - 1);
		ck_assert_str_eq(rd.why, (char *)plain);
		smb2_put16(f + 42, 2);
		smb2_rd_init(&rd, f, n);
		ck_assert_int_eq(smb2_tf_dec(&rd, &t), -1);
		ck_assert_str_eq(rd.why,
				 "a transform header with Flags 0x0002, not 0x0001 (encrypted)");
		smb2_rd_init(&rd, f, 51);
		ck_assert_int_eq(smb2_tf_dec(&rd, &t), -1);
		ck_assert_str_eq(rd.why,
				 "a transform header in a frame of 51 bytes, shorter than its 52");
		smb2_keys_clear(&k);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("smb");
	TCase *tc = tcase_create("ntlm");

	tcase_add_test(tc, test_ntlmv2_vectors);
	tcase_add_test(tc, test_ntlm_messages);
	tcase_add_test(tc, test_ntlm_long_target_info);
	tcase_add_test(tc, test_ntlm_session_key);
	tcase_add_test(tc, test_ntlm_av_pairs);
	tcase_add_test(tc, test_ntlm_mic);
	tcase_add_test(tc, test_ntlm_mech_list_mic);
	suite_add_tcase(s, tc);
	tc = tcase_create("smb2");
	tcase_add_test(tc, test_smb2_header);
	tcase_add_test(tc, test_smb2_names);
	tcase_add_test(tc, test_smb2_create_ctx);
	tcase_add_test(tc, test_smb2_signing);
	tcase_add_test(tc, test_smb2_gmac);
	tcase_add_test(tc, test_smb311_preauth);
	tcase_add_test(tc, test_smb2_negotiated);
	tcase_add_test(tc, test_smb3_transform);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
