/* tests/unit/check_smb.c: the pure parts of smb/: NTLMv2 (MS-NLMP 4.2.4 test vectors), the
 * NTLMSSP messages in their SPNEGO wrappers, and the SMB2 request encodings. The digests NTLM
 * uses are tested with util/digest (check_util.c). */
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

START_TEST(test_ntlmv2_vectors)
{
	struct pv_buf b = PV_BUF_INIT;
	uint8_t nt[16], key[16];

	ck_assert_int_eq(pv_utf16le(&b, "Password", 8, 0), 0);
	pv_md4(b.data, b.len, nt);
	ck_assert_str_eq(pv_unit_hex(nt, 16), "a4f49c406510bdcab6824ee7c30fd852");
	ck_assert_int_eq(pv_ntowfv2("Password", 8, "User", "Domain", key), 0);
	ck_assert_str_eq(pv_unit_hex(key, 16), "0c868a403bfd7a93a3001ef22ef02e3f");
	/* the user name is upper-cased, the domain is not */
	ck_assert_int_eq(pv_ntowfv2("Password", 8, "user", "Domain", nt), 0);
	ck_assert_mem_eq(nt, key, 16);
	ck_assert_int_eq(pv_ntowfv2("Password", 8, "User", "DOMAIN", nt), 0);
	ck_assert(memcmp(nt, key, 16) != 0);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_ntlmv2_response(key, SCHAL, 0, CCHAL, INFO, sizeof(INFO), &b), 0);
	ck_assert_str_eq(pv_unit_hex((uint8_t *)b.data, 16), "68cd0ab851e51c96aabc927bebef6a1c");
	ck_assert_uint_eq(b.len, 16 + 28 + sizeof(INFO) + 4);
	ck_assert_int_eq(pv_ntowfv2("Pass\xff", 5, "User", "Domain", nt), -1);
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
	struct pv_buf b = PV_BUF_INIT;
	struct pv_ntlm_challenge c;
	uint8_t tok[256];
	size_t n;
	const char *ntlm;

	ck_assert_int_eq(pv_ntlm_negotiate(&b), 0);
	ck_assert_uint_eq((uint8_t)b.data[0], 0x60);
	ck_assert_uint_eq((uint8_t)b.data[1], b.len - 2);
	ntlm = memmem(b.data, b.len, "NTLMSSP", 8);
	ck_assert_ptr_nonnull(ntlm);
	ck_assert_uint_eq((size_t)(b.data + b.len - ntlm), 32);
	ck_assert_uint_eq((uint8_t)ntlm[8], 1);

	for (int spnego = 0; spnego <= 1; spnego++) {
		n = challenge_token(tok, spnego);
		ck_assert_int_eq(pv_ntlm_parse_challenge(tok, n, &c), 0);
		ck_assert_mem_eq(c.challenge, SCHAL, 8);
		ck_assert_int_eq(c.has_timestamp, 1);
		ck_assert_uint_eq(c.timestamp, 0x0807060504030201ull);
		ck_assert_uint_eq(c.flags, 0xe2898215u);
		/* cut anywhere: refused, never read past the end */
		for (size_t cut = 0; cut < n; cut++)
			ck_assert_int_eq(pv_ntlm_parse_challenge(tok, cut, &c), -1);
	}
	n = challenge_token(tok, 1);
	tok[n - 14] ^= 0xff; /* the timestamp pair's length now runs past the end */
	ck_assert_int_eq(pv_ntlm_parse_challenge(tok, n, &c), -1);

	n = challenge_token(tok, 1);
	ck_assert_int_eq(pv_ntlm_parse_challenge(tok, n, &c), 0);
	ck_assert_int_eq(pv_ntlm_authenticate(&c, "User", "Domain", "Password", 8, 0, CCHAL, &b),
			 0);
	ck_assert_uint_eq((uint8_t)b.data[0], 0xa1);
	ntlm = memmem(b.data, b.len, "NTLMSSP", 8);
	ck_assert_ptr_nonnull(ntlm);
	ck_assert_uint_eq((uint8_t)ntlm[8], 3);
	{
		const uint8_t *m = (const uint8_t *)ntlm;
		size_t lm_len = m[12], nt_len = m[20], nt_off = m[24] | m[25] << 8;
		size_t user_len = m[36], user_off = m[40] | m[41] << 8;

		ck_assert_uint_eq(lm_len, 24);
		for (size_t i = 0; i < 24; i++) /* Z(24) with a timestamp */
			ck_assert_uint_eq(m[m[16] + i], 0);
		ck_assert_uint_eq(nt_len, 16 + 28 + c.target_info_len + 4);
		/* the response's time is the server's */
		ck_assert_mem_eq(m + nt_off + 16 + 8, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
		ck_assert_uint_eq(user_len, 8);
		ck_assert_mem_eq(m + user_off, "U\0s\0e\0r\0", 8);
		ck_assert_uint_eq((size_t)(b.data + b.len - ntlm), 64 + 24 + nt_len + 12 + 8);
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

/* The NTLMv2 response is the target info plus 48 bytes, in a field with a 16-bit length
 * (MS-NLMP 2.2.2.10): a target info over 65487 bytes cannot be answered. It was answered with
 * the length cut to its low 16 bits (found by tests/fuzz/fuzz_ntlm.c's invariants; the
 * reproducer is tests/fuzz/crashes/ntlm/long-target-info). */
START_TEST(test_ntlm_long_target_info)
{
	struct pv_buf b = PV_BUF_INIT;
	struct pv_ntlm_challenge c;
	size_t n;
	uint8_t *m = long_challenge(0xffff - 48, &n);
	const uint8_t *a;

	ck_assert_int_eq(pv_ntlm_parse_challenge(m, n, &c), 0);
	ck_assert_uint_eq(c.target_info_len, 0xffff - 48);
	ck_assert_int_eq(pv_ntlm_authenticate(&c, "User", "Domain", "Password", 8, 0, CCHAL, &b),
			 0);
	a = memmem(b.data, b.len, "NTLMSSP", 8);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a[20] | a[21] << 8, 0xffff); /* NtChallengeResponse: just fits */
	free(m);
	m = long_challenge(0xffff - 47, &n);
	ck_assert_int_eq(pv_ntlm_parse_challenge(m, n, &c), 0);
	ck_assert_int_eq(pv_ntlm_authenticate(&c, "User", "Domain", "Password", 8, 0, CCHAL, &b),
			 -2); /* refused, not sent with its length cut */
	free(m);
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

int main(void)
{
	Suite *s = suite_create("smb");
	TCase *tc = tcase_create("ntlm");

	tcase_add_test(tc, test_ntlmv2_vectors);
	tcase_add_test(tc, test_ntlm_messages);
	tcase_add_test(tc, test_ntlm_long_target_info);
	suite_add_tcase(s, tc);
	tc = tcase_create("smb2");
	tcase_add_test(tc, test_smb2_header);
	tcase_add_test(tc, test_smb2_names);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
