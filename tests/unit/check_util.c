/* tests/unit/check_util.c: util/ (errors, buffers, secrets, digests, files written whole, the
 * statistics, the hash). */
#include <check.h>

#include "tests/unit/unit.h"
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/alloc.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/err.h"
#include "util/escape.h"
#include "util/fanout.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/secret.h"
#include "util/stats.h"
#include "util/strset.h"
#include "util/tar.h"
#include "util/utf16.h"

static char tmpdir[] = "/tmp/pv-unit-XXXXXX";

static const char *write_tmp(const char *name, const void *data, size_t len)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

START_TEST(test_error_record)
{
	ck_assert_int_eq(pv_error(PV_ECRED, "bad %s", "password"), PV_ECRED);
	ck_assert_str_eq(pv_errmsg(), "bad password");
	ck_assert_int_eq(pv_error_prefix(PV_EDIR, "bind to '%s'", "dc"), PV_EDIR);
	ck_assert_str_eq(pv_errmsg(), "bind to 'dc': bad password");
	pv_error_clear();
	ck_assert_str_eq(pv_errmsg(), "");
	ck_assert_int_eq(pv_error_prefix(PV_EDIR, "alone"), PV_EDIR);
	ck_assert_str_eq(pv_errmsg(), "alone");
	/* the message itself as an argument (wrapping the last error) */
	pv_error(PV_EREMOTE, "disk full");
	ck_assert_int_eq(pv_error(PV_EREMOTE, "on 'srv': %s (%d)", pv_errmsg(), 28), PV_EREMOTE);
	ck_assert_str_eq(pv_errmsg(), "on 'srv': disk full (28)");
}
END_TEST

START_TEST(test_error_truncates)
{
	char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pv_error(PV_EIO, "%s", big);
	ck_assert_uint_eq(strlen(pv_errmsg()), 1023);
	pv_error_prefix(PV_EIO, "ctx");
	ck_assert_uint_eq(strlen(pv_errmsg()), 1023);
	ck_assert(strncmp(pv_errmsg(), "ctx: xxx", 8) == 0);
}
END_TEST

START_TEST(test_status_names)
{
	ck_assert_str_eq(pv_status_name(PV_OK), "ok");
	ck_assert_str_eq(pv_status_name(PV_EUNREACH), "unreachable");
	ck_assert_str_eq(pv_status_name(PV_ETRUST), "trust");
	ck_assert_str_eq(pv_status_name(12345), "unknown");
	/* every code has a distinct name */
	int codes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 70};
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		for (size_t j = i + 1; j < sizeof(codes) / sizeof(codes[0]); j++)
			ck_assert_str_ne(pv_status_name(codes[i]), pv_status_name(codes[j]));
}
END_TEST

START_TEST(test_buf)
{
	struct pv_buf b = PV_BUF_INIT;
	char *s;

	ck_assert_int_eq(pv_buf_addstr(&b, "abc"), 0);
	ck_assert_int_eq(pv_buf_addf(&b, "-%d-", 42), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(pv_buf_add(&b, "z", 1), 0);
	ck_assert_uint_eq(b.len, 3 + 4 + 1000);
	ck_assert(strncmp(b.data, "abc-42-zz", 9) == 0);
	ck_assert_int_eq(b.data[b.len], '\0');
	pv_buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	pv_buf_addstr(&b, "kept");
	s = pv_buf_detach(&b);
	ck_assert_str_eq(s, "kept");
	ck_assert_ptr_null(b.data);
	free(s);
	s = pv_buf_detach(&b); /* empty buffer still gives a string */
	ck_assert_str_eq(s, "");
	free(s);
	pv_buf_addstr(&b, "secret");
	pv_buf_release(&b, 1);
	ck_assert_ptr_null(b.data);
}
END_TEST

/* An append that runs out of memory marks the buffer failed; every later append fails too
 * and the contents stay what they were, so a builder need only look once at the end. */
START_TEST(test_buf_sticky_failure)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_buf_addstr(&b, "head "), 0);
	ck_assert(!pv_buf_failed(&b));
	pv_test_alloc_fail_at(1);
	ck_assert_int_eq(pv_buf_add(&b, "x", 100), -1); /* 64 bytes are not enough: grows */
	pv_test_alloc_ok();
	ck_assert(pv_buf_failed(&b));
	/* memory is back, but the buffer stays failed: no append lands after a lost one */
	ck_assert_int_eq(pv_buf_addstr(&b, "tail"), -1);
	ck_assert_int_eq(pv_buf_addf(&b, "%d", 1), -1);
	ck_assert_int_eq(pv_buf_reserve(&b, 1), -1);
	ck_assert_str_eq(b.data, "head ");
	ck_assert_ptr_null(pv_buf_detach(&b)); /* and it cannot be handed on */
	ck_assert_ptr_null(b.data);
	ck_assert(!pv_buf_failed(&b));
	/* reset clears the mark */
	pv_buf_addstr(&b, "a");
	pv_test_alloc_fail_at(1);
	pv_buf_add(&b, "y", 500);
	pv_test_alloc_ok();
	ck_assert(pv_buf_failed(&b));
	pv_buf_reset(&b);
	ck_assert(!pv_buf_failed(&b));
	ck_assert_int_eq(pv_buf_addstr(&b, "ok"), 0);
	ck_assert_str_eq(b.data, "ok");
	pv_buf_release(&b, 0);
}
END_TEST

/* The value of an octal field of a ustar header. */
static unsigned long long field(const char *h, size_t off, size_t len)
{
	unsigned long long v = 0;

	for (size_t i = 0; i < len && h[off + i] >= '0' && h[off + i] <= '7'; i++)
		v = v * 8 + (unsigned long long)(h[off + i] - '0');
	return v;
}

static unsigned header_sum(const char *h)
{
	unsigned sum = 0;

	for (size_t i = 0; i < PV_TAR_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : (unsigned char)h[i];
	return sum;
}

struct seen {
	char paths[8][64];
	size_t sizes[8];
	char first[16];
	int n, dirs;
};

static int collect(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct seen *s = arg;

	if (s->n >= 8)
		return 99;
	snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", e->path);
	s->sizes[s->n] = (size_t)e->size;
	if (content && s->n == 0)
		snprintf(s->first, sizeof(s->first), "%.*s", (int)e->size, content);
	s->dirs += e->dir;
	s->n++;
	return 0;
}

static void add(struct pv_buf *b, const char *path, bool dir, const char *content)
{
	struct pv_tar_entry e = {path, dir, content ? strlen(content) : 0, 0, 0, 0644, 0};
	char *data;

	ck_assert_int_eq(pv_tar_add(b, &e, &data), PV_OK);
	if (content)
		memcpy(data, content, strlen(content));
}

START_TEST(test_tar_read)
{
	struct pv_buf b = PV_BUF_INIT;
	struct seen s;
	unsigned long skipped = 9;
	char tmpl[] = "/tmp/pv-tar.XXXXXX", cmd[256];
	FILE *p;
	static const char *const refused[] = {"../x", "/etc/passwd", "a/../../b", "a//b", "a/./b"};

	/* ours, read back */
	add(&b, "./step-1", true, NULL);
	add(&b, "./step-1/out.txt", false, "hello");
	pv_tar_end(&b);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_tar_each(b.data, b.len, collect, &s, &skipped), PV_OK);
	ck_assert_int_eq(s.n, 2);
	ck_assert_str_eq(s.paths[0], "step-1");
	ck_assert_str_eq(s.paths[1], "step-1/out.txt");
	ck_assert_uint_eq(s.sizes[1], 5);
	ck_assert_uint_eq(skipped, 0);
	/* cut short: in the content, and at an entry's end (no end of archive) */
	ck_assert_int_eq(pv_tar_each(b.data, 512 + 512 + 100, collect, &s, NULL), PV_EREMOTE);
	ck_assert_int_eq(pv_tar_each(b.data, 512 + 1024, collect, &s, NULL), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "cut short"));
	/* a header changed after its checksum */
	b.data[600] ^= 1;
	ck_assert_int_eq(pv_tar_each(b.data, b.len, collect, &s, NULL), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "checksum"));
	/* paths that would leave the folder they are written into */
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		pv_buf_reset(&b);
		add(&b, refused[i], false, "x");
		pv_tar_end(&b);
		ck_assert_int_eq(pv_tar_each(b.data, b.len, collect, &s, NULL), PV_EREMOTE);
		ck_assert(strstr(pv_errmsg(), refused[i]));
	}
	/* GNU tar's own ustar output: a file, a folder, a link (skipped, not followed) */
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir d && printf abc > d/f && ln -s /etc/passwd link && "
		 "tar --format=ustar -cf - .",
		 tmpl);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	pv_buf_reset(&b);
	for (char chunk[4096];;) {
		size_t n = fread(chunk, 1, sizeof(chunk), p);

		if (n == 0)
			break;
		pv_buf_add(&b, chunk, n);
	}
	ck_assert_int_eq(pclose(p), 0);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_tar_each(b.data, b.len, collect, &s, &skipped), PV_OK);
	ck_assert_int_eq(s.n, 2);
	ck_assert_int_eq(s.dirs, 1);
	ck_assert_uint_eq(skipped, 1);
	ck_assert(strcmp(s.paths[0], "d/f") == 0 || strcmp(s.paths[1], "d/f") == 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpl);
	ck_assert_int_eq(system(cmd), 0);
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(test_sha256)
{
	char hex[PV_SHA256_HEX];

	/* FIPS 180-2, appendix B.1 and the empty message */
	pv_sha256_hex("abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	pv_sha256_hex("", 0, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

/* RFC 1320 and RFC 1321, appendix A.5 */
START_TEST(test_md4_md5)
{
	uint8_t d[16];
	const char *a80 =
		"12345678901234567890123456789012345678901234567890123456789012345678901234567890";

	pv_md4("", 0, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "31d6cfe0d16ae931b73c59d7e0c089c0");
	pv_md4("abc", 3, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "a448017aaf21d8525fc10ae87aa6729d");
	pv_md4(a80, 80, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "e33b4ddc9c38f2199c3e7b164fcc0536");
	pv_md5("", 0, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "d41d8cd98f00b204e9800998ecf8427e");
	pv_md5("abc", 3, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "900150983cd24fb0d6963f7d28e17f72");
	pv_md5(a80, 80, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "57edf4a22be3c955ac49da2e2107b67a");
	/* 56 bytes: the length no longer fits the first block */
	pv_md5("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "8215ef0796a20bcaaae116d3876c664a");
}
END_TEST

/* RFC 2104 (and RFC 2202 for a long key) */
START_TEST(test_hmac_md5)
{
	uint8_t k[16], d[16], big[80];

	memset(k, 0x0b, 16);
	pv_hmac_md5(k, 16, "Hi There", 8, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "9294727a3638bb1c13f48ef8158bfc9d");
	pv_hmac_md5("Jefe", 4, "what do ya want for nothing?", 28, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "750c783e6ab0b503eaa86e310a5db738");
	memset(big, 0xaa, sizeof(big)); /* RFC 2202 case 6: a key longer than a block */
	pv_hmac_md5(big, 80, "Test Using Larger Than Block-Size Key - Hash Key First", 54, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd");
}
END_TEST

/* RFC 4231, test cases 1, 2 and 6 (a key longer than a block) */
START_TEST(test_hmac_sha256)
{
	uint8_t k[131], d[32];

	memset(k, 0x0b, 20);
	pv_hmac_sha256(k, 20, "Hi There", 8, d);
	ck_assert_str_eq(pv_unit_hex(d, 32),
			 "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	pv_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
	ck_assert_str_eq(pv_unit_hex(d, 32),
			 "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(k, 0xaa, sizeof(k));
	pv_hmac_sha256(k, sizeof(k), "Test Using Larger Than Block-Size Key - Hash Key First", 54,
		       d);
	ck_assert_str_eq(pv_unit_hex(d, 32),
			 "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}
END_TEST

/* RFC 4493, section 4: examples 1 to 4 (0, 16, 40 and 64 bytes of the same message) */
START_TEST(test_aes_cmac128)
{
	static const uint8_t k[16] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
				      0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
	static const uint8_t m[64] = {
		0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73,
		0x93, 0x17, 0x2a, 0xae, 0x2d, 0x8a, 0x57, 0x1e, 0x03, 0xac, 0x9c, 0x9e, 0xb7,
		0x6f, 0xac, 0x45, 0xaf, 0x8e, 0x51, 0x30, 0xc8, 0x1c, 0x46, 0xa3, 0x5c, 0xe4,
		0x11, 0xe5, 0xfb, 0xc1, 0x19, 0x1a, 0x0a, 0x52, 0xef, 0xf6, 0x9f, 0x24, 0x45,
		0xdf, 0x4f, 0x9b, 0x17, 0xad, 0x2b, 0x41, 0x7b, 0xe6, 0x6c, 0x37, 0x10};
	uint8_t d[16];

	pv_aes_cmac128(k, "", 0, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "bb1d6929e95937287fa37d129b756746");
	pv_aes_cmac128(k, m, 16, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "070a16b46b4d4144f79bdd9dd04a287c");
	pv_aes_cmac128(k, m, 40, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "dfa66747de9ae63030ca32611497c827");
	pv_aes_cmac128(k, m, 64, d);
	ck_assert_str_eq(pv_unit_hex(d, 16), "51f0bebf7e3b9d92fc49741779363cfe");
}
END_TEST

/* The SP800-108 counter-mode KDF with HMAC-SHA256 (r = 32) against the key derivation
 * examples Microsoft published in "SMB 2 and SMB 3 security in Windows 10: the anatomy of
 * signing and cryptographic keys" (Open Specifications blog, E. Olougouna, 2017, appendix):
 * SMB 3.0's SigningKey of both channels (label "SMB2AESCMAC\0", context "SmbSign\0"), and
 * SMB 3.1.1's (label "SMBSigningKey\0", the 64-byte preauth hash as context), which takes
 * the same function with other inputs. The same values come out of an independent
 * implementation: OpenSSL 3.0.19's KBKDF,
 *   openssl kdf -keylen 16 -kdfopt mac:HMAC -kdfopt digest:SHA256 \
 *     -kdfopt hexkey:7CD451825D0450D235424E44BA6E78CC \
 *     -kdfopt hexsalt:534d4232414553434d414300 -kdfopt hexinfo:536d625369676e00 KBKDF
 * (salt is the label, info the context), and Python's hmac module. Longer outputs (two
 * blocks) were checked against the same openssl command with -keylen 40. */
START_TEST(test_kdf_hmac_sha256)
{
	static const struct {
		const char *key, *label, *context, *out;
		size_t llen;
	} v[] = {
		{"7CD451825D0450D235424E44BA6E78CC", "SMB2AESCMAC", "536d625369676e00",
		 "0b7e9c5cac36c0f6ea9ab275298cedce", 12},
		{"4E01A2B313BCF660CC250BEF021AEDE6", "SMB2AESCMAC", "536d625369676e00",
		 "ba1a17dbbfec349bca105563d598952f", 12},
		{"270E1BA896585EEB7AF3472D3B4C75A7", "SMBSigningKey",
		 "0DD13628CC3ED218EF9DF9772D436D0887AB9814BFAE63A80AA845F36909DB79"
		 "28622DDDAD522D9751640A459762C5A9D6BB084CBB3CE6BDADEF5D5BCE3C6C01",
		 "73fe7a9a77bef0bde49c650d8ccb5f76", 14},
		{"84B9DBB730116A8FA6E9889555C265F9", "SMBSigningKey",
		 "EA3BF912B11CBFEC5B1889E8209614218687F82FA5294521AD3063425E49E88A"
		 "10BD022124CE25123BC9111F52D9566BA88BF46344E6063DC5E3FF0389026F6C",
		 "c962bca1a9dd1697b030644199705431", 14},
	};
	uint8_t key[16], ctx[64], out[40];
	size_t clen;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ck_assert_uint_eq(pv_unit_unhex(v[i].key, key, sizeof(key)), 16);
		ck_assert_uint_ne(clen = pv_unit_unhex(v[i].context, ctx, sizeof(ctx)), 0);
		pv_kdf_hmac_sha256(key, 16, v[i].label, v[i].llen, ctx, clen, out, 16);
		ck_assert_str_eq(pv_unit_hex(out, 16), v[i].out);
	}
	/* L is part of the input: 40 bytes are not the 16 above followed by more (OpenSSL,
	 * -keylen 40, same key, salt and info as the first vector) */
	pv_unit_unhex(v[0].key, key, 16);
	pv_unit_unhex(v[0].context, ctx, 8);
	pv_kdf_hmac_sha256(key, 16, "SMB2AESCMAC", 12, ctx, 8, out, 40);
	ck_assert_str_eq(pv_unit_hex(out, 40), "1c4418e11bb1e38dcb2dc57e30d29ea9922bd0cd3ffc9742"
					       "28514e11762b2546692ae2ea79d5916d");
}
END_TEST

/* FIPS 180-2, appendix C.1 ("abc"), split across the two parts in every way, and the empty
 * message; SMB 3.1.1's preauth hash chains it as H = SHA-512(H || message) (check_smb has the
 * published chain). */
START_TEST(test_sha512)
{
	uint8_t d[64];

	for (size_t cut = 0; cut <= 3; cut++) {
		pv_sha512_2("abc", cut, "abc" + cut, 3 - cut, d);
		ck_assert_str_eq(
			pv_unit_hex(d, 64),
			"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
			"2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	}
	pv_sha512_2("", 0, "", 0, d);
	ck_assert_str_eq(pv_unit_hex(d, 64),
			 "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
			 "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
}
END_TEST

/* The AEAD ciphers against published vectors (the SMB vectors, Microsoft's, are in
 * check_smb: AES-128-CCM and AES-128-GCM through the transform header):
 *   - AES-128-GCM and AES-256-GCM: "The Galois/Counter Mode of Operation" (McGrew, Viega,
 *     2005), test cases 4 and 16 (60 bytes, 20 bytes of AAD);
 *   - AES-256-CCM: IEEE P1619.1/D22, annex D.2.5 (CCM-128-AES-256 test vector 5);
 *   - GMAC (AES-128-GCM over no plaintext): NIST CAVS gcmEncryptExtIV128, [PTlen = 0,
 *     AADlen = 128, Taglen = 128] Count 0.
 * Each also opened again, and refused with one bit of the text, the tag, the AAD or the nonce
 * changed. */
START_TEST(test_aead)
{
	static const struct {
		enum pv_aead_alg alg;
		const char *key, *nonce, *aad, *plain, *cipher, *tag;
	} v[] = {
		{PV_AES128_GCM, "feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
		 "feedfacedeadbeeffeedfacedeadbeefabaddad2",
		 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532"
		 "f"
		 "cf0e2449a6b525b16aedf5aa0de657ba637b39",
		 "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7"
		 "d"
		 "8f6a5aac84aa051ba30b396a0aac973d58e091",
		 "5bc94fbc3221a5db94fae95ae7121a47"},
		{PV_AES256_GCM, "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
		 "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
		 "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532"
		 "f"
		 "cf0e2449a6b525b16aedf5aa0de657ba637b39",
		 "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da"
		 "7"
		 "b08b1056828838c5f61e6393ba7a0abcc9f662",
		 "76fc6ece0f4e1768cddf8853bb2d551b"},
		{PV_AES256_CCM, "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f",
		 "101112131415161718191a1b", "000102030405060708090a0b0c0d0e0f10111213",
		 "202122232425262728292a2b2c2d2e2f3031323334353637",
		 "04f883aeb3bd0730eaf50bb6de4fa2212034e4e41b0e75e5",
		 "9bba3f3a107f3239bd63902923f80371"},
		{PV_AES128_GCM, "77be63708971c4e240d1cb79e8d77feb", "e0e00f19fed7ba0136a797f3",
		 "7a43ec1d9c0a5a78a0b16533a6213cab", "", "", "209fcc8d3675ed938e9c7166709dd946"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t key[32], nonce[16], aad[32], buf[64], tag[16], want[16];
		size_t nl = pv_unit_unhex(v[i].nonce, nonce, sizeof(nonce)),
		       al = pv_unit_unhex(v[i].aad, aad, sizeof(aad)),
		       pl = pv_unit_unhex(v[i].plain, buf, sizeof(buf));
		struct pv_aead *a;

		ck_assert_uint_eq(pv_unit_unhex(v[i].key, key, sizeof(key)),
				  v[i].alg == PV_AES256_GCM || v[i].alg == PV_AES256_CCM ? 32 : 16);
		ck_assert_ptr_nonnull(a = pv_aead_new(v[i].alg, key));
		pv_aead_seal(a, nonce, nl, aad, al, buf, pl, tag);
		ck_assert_str_eq(pv_unit_hex(buf, pl), v[i].cipher);
		ck_assert_str_eq(pv_unit_hex(tag, 16), v[i].tag);
		memcpy(want, tag, 16);
		ck_assert_int_eq(pv_aead_open(a, nonce, nl, aad, al, buf, pl, tag), 0);
		ck_assert_str_eq(pv_unit_hex(buf, pl), v[i].plain);
		pv_aead_seal(a, nonce, nl, aad, al, buf, pl, tag); /* the context is reused */
		ck_assert_mem_eq(tag, want, 16);
		if (pl) {
			buf[pl - 1] ^= 1;
			ck_assert_int_eq(pv_aead_open(a, nonce, nl, aad, al, buf, pl, tag), -1);
			pv_unit_unhex(v[i].plain, buf, sizeof(buf));
			pv_aead_seal(a, nonce, nl, aad, al, buf, pl, tag);
		}
		tag[15] ^= 1;
		ck_assert_int_eq(pv_aead_open(a, nonce, nl, aad, al, buf, pl, tag), -1);
		pv_unit_unhex(v[i].plain, buf, sizeof(buf));
		pv_aead_seal(a, nonce, nl, aad, al, buf, pl, tag);
		aad[0] ^= 1;
		ck_assert_int_eq(pv_aead_open(a, nonce, nl, aad, al, buf, pl, tag), -1);
		aad[0] ^= 1;
		pv_unit_unhex(v[i].plain, buf, sizeof(buf));
		pv_aead_seal(a, nonce, nl, aad, al, buf, pl, tag);
		nonce[0] ^= 1;
		ck_assert_int_eq(pv_aead_open(a, nonce, nl, aad, al, buf, pl, tag), -1);
		pv_aead_free(a);
	}
	pv_aead_free(NULL);
}
END_TEST

START_TEST(test_tar_headers)
{
	struct pv_buf b = PV_BUF_INIT;
	struct pv_tar_entry e = {"home/u1/a.txt", false, 5, 13156, 10513, 0644, 1700000000};
	char *data = NULL, longp[300];
	const char *h;

	ck_assert_int_eq(pv_tar_add(&b, &e, &data), PV_OK);
	ck_assert_uint_eq(b.len, 1024); /* header + one padded block */
	ck_assert_ptr_eq(data, b.data + 512);
	memcpy(data, "hello", 5);
	h = b.data;
	ck_assert_str_eq(h, "home/u1/a.txt");
	ck_assert_uint_eq(field(h, 100, 8), 0644);
	ck_assert_uint_eq(field(h, 108, 8), 13156);
	ck_assert_uint_eq(field(h, 116, 8), 10513);
	ck_assert_uint_eq(field(h, 124, 12), 5);
	ck_assert_uint_eq(field(h, 136, 12), 1700000000);
	ck_assert_int_eq(h[156], '0');
	ck_assert_mem_eq(h + 257,
			 "ustar\0"
			 "00",
			 8);
	ck_assert_uint_eq(field(h, 148, 8), header_sum(h));
	ck_assert_int_eq(h[155], ' ');
	for (size_t i = 517; i < 1024; i++) /* the rest of the block is zero */
		ck_assert_int_eq(b.data[i], 0);
	/* a folder: trailing '/', type '5', no data */
	pv_buf_reset(&b);
	e = (struct pv_tar_entry){"home/u1", true, 99, 0, 0, 0700, 0};
	ck_assert_int_eq(pv_tar_add(&b, &e, &data), PV_OK);
	ck_assert_uint_eq(b.len, 512);
	ck_assert_str_eq(b.data, "home/u1/");
	ck_assert_int_eq(b.data[156], '5');
	ck_assert_uint_eq(field(b.data, 124, 12), 0);
	/* a long path is split at a '/' into prefix (345) and name */
	pv_buf_reset(&b);
	memset(longp, 'p', 150);
	longp[60] = '/';
	snprintf(longp + 150, sizeof(longp) - 150, "/%s", "file.dat");
	e = (struct pv_tar_entry){longp, false, 0, 1, 1, 0644, 0};
	ck_assert_int_eq(pv_tar_add(&b, &e, NULL), PV_OK);
	ck_assert_str_eq(b.data, "file.dat");
	ck_assert_int_eq(strncmp(b.data + 345, longp, 150), 0);
	ck_assert_uint_eq(field(b.data, 148, 8), header_sum(b.data));
	/* refused: too long, a last part over 100 bytes, ids that do not fit */
	memset(longp, 'q', 299);
	longp[299] = '\0';
	longp[100] = '/';
	e.path = longp;
	ck_assert_int_eq(pv_tar_add(&b, &e, NULL), PV_ECONFIG);
	longp[120] = '\0'; /* "qqq.../" + 19: fits, but one with a 110-byte name does not */
	memset(longp, 'r', 120);
	longp[5] = '/';
	ck_assert_int_eq(pv_tar_add(&b, &e, NULL), PV_ECONFIG);
	ck_assert(strstr(pv_errmsg(), "cannot be stored"));
	e = (struct pv_tar_entry){"a", false, 0, 0x1000000UL, 0, 0644, 0};
	ck_assert_int_eq(pv_tar_add(&b, &e, NULL), PV_ECONFIG);
	pv_buf_release(&b, 0);
}
END_TEST

/* What we write, GNU tar reads: names, types, sizes, numeric owners and the content. */
START_TEST(test_tar_read_by_tar)
{
	struct pv_buf b = PV_BUF_INIT;
	struct pv_tar_entry d = {"t", true, 0, 1234, 567, 0755, 1700000000};
	struct pv_tar_entry f1 = {"t/one", false, 3, 1234, 567, 0640, 1700000000};
	struct pv_tar_entry f2 = {"t/empty", false, 0, 1234, 567, 0644, 1700000000};
	char *data, cmd[512], line[512], got[2048] = "";
	const char *path;
	FILE *p;

	ck_assert_int_eq(pv_tar_add(&b, &d, NULL), PV_OK);
	ck_assert_int_eq(pv_tar_add(&b, &f1, &data), PV_OK);
	memcpy(data, "abc", 3);
	ck_assert_int_eq(pv_tar_add(&b, &f2, NULL), PV_OK);
	ck_assert_int_eq(pv_tar_end(&b), PV_OK);
	ck_assert_uint_eq(b.len % 512, 0);
	path = write_tmp("t.tar", b.data, b.len);
	snprintf(cmd, sizeof(cmd),
		 "tar --numeric-owner -tvf %s 2>&1 | awk '{print $1, $2, $3, $6}'", path);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	while (fgets(line, sizeof(line), p))
		strncat(got, line, sizeof(got) - strlen(got) - 1);
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_str_eq(got, "drwxr-xr-x 1234/567 0 t/\n"
			      "-rw-r----- 1234/567 3 t/one\n"
			      "-rw-r--r-- 1234/567 0 t/empty\n");
	snprintf(cmd, sizeof(cmd), "tar -xOf %s t/one", path);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_str_eq(line, "abc");
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(test_secret_file_newline)
{
	struct pv_secret *s = NULL;

	ck_assert_int_eq(pv_secret_from_file(write_tmp("a", "pw\n", 3), "the file", &s), PV_OK);
	ck_assert_str_eq(s->data, "pw");
	ck_assert_uint_eq(s->len, 2);
	pv_secret_free(s);
	ck_assert_int_eq(pv_secret_from_file(write_tmp("b", "pw", 2), "the file", &s), PV_OK);
	ck_assert_str_eq(s->data, "pw");
	pv_secret_free(s);
	ck_assert_int_eq(pv_secret_from_file(write_tmp("c", "pw\r\n", 4), "the file", &s), PV_OK);
	ck_assert_str_eq(s->data, "pw");
	pv_secret_free(s);
	/* only ONE trailing newline is dropped: the rest is part of the secret */
	ck_assert_int_eq(pv_secret_from_file(write_tmp("d", "pw\n\n", 4), "the file", &s), PV_OK);
	ck_assert_str_eq(s->data, "pw\n");
	pv_secret_free(s);
	ck_assert_int_eq(pv_secret_from_file(write_tmp("e", " sp ace \n", 9), "the file", &s),
			 PV_OK);
	ck_assert_str_eq(s->data, " sp ace ");
	pv_secret_free(s);
}
END_TEST

START_TEST(test_secret_file_errors)
{
	struct pv_secret *s = NULL;
	char path[300];

	ck_assert_int_eq(pv_secret_from_file(write_tmp("empty", "\n", 1), "the file", &s),
			 PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "is empty"));
	ck_assert_int_eq(pv_secret_from_file(write_tmp("nul", "a\0b", 3), "the file", &s),
			 PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "NUL"));
	/* the path is never in the message (it may be a password typed as {file: ...}) */
	snprintf(path, sizeof(path), "%s/Sup3r-Secret!", tmpdir);
	ck_assert_int_eq(pv_secret_from_file(path, "the file given at t.yaml:6:25", &s), PV_EIO);
	ck_assert_str_eq(pv_errmsg(),
			 "cannot open the file given at t.yaml:6:25: No such file or directory");
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_secret_env)
{
	struct pv_secret *s = NULL;
	char *was;
	FILE *p;
	char line[64] = "";

	setenv("PV_TEST_SECRET", "envpw", 1);
	was = getenv("PV_TEST_SECRET");
	ck_assert_int_eq(pv_secret_from_env("PV_TEST_SECRET", "the variable", &s), PV_OK);
	ck_assert_str_eq(s->data, "envpw");
	pv_secret_free(s);
	s = NULL;
	/* taken out of the environment: gone for getenv and for every child */
	ck_assert_ptr_null(getenv("PV_TEST_SECRET"));
	ck_assert_ptr_nonnull(p = popen("echo \"${PV_TEST_SECRET-unset}\"", "r"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_str_eq(line, "unset\n");
	/* and wiped where it was (glibc keeps what setenv made) */
	ck_assert_int_eq(memcmp(was, "\0\0\0\0\0", 5), 0);
	/* unset, then empty: the message names the source as the caller described it, never
	 * the variable's name (a password may sit where the name goes) */
	ck_assert_int_eq(
		pv_secret_from_env("PV_TEST_SECRET", "the variable given at t.yaml:6:25", &s),
		PV_ECONFIG);
	ck_assert_str_eq(pv_errmsg(), "the variable given at t.yaml:6:25 is unset: export it in "
				      "the shell that runs provision, or give the secret as {file: "
				      "F}, {stdin: true} or {prompt: true}");
	setenv("PV_TEST_SECRET", "", 1);
	ck_assert_int_eq(pv_secret_from_env("PV_TEST_SECRET", "the variable", &s), PV_ECONFIG);
	ck_assert_str_eq(pv_errmsg(), "the variable is empty");
	ck_assert_ptr_null(getenv("PV_TEST_SECRET"));
	ck_assert_ptr_null(s);
	pv_secret_free(NULL);
}
END_TEST

/* A secret buffer leaves no copy behind when it grows (realloc would) and is wiped. */
START_TEST(test_buf_secret)
{
	struct pv_buf b = PV_BUF_INIT;
	char chunk[40];

	memset(chunk, 'k', sizeof(chunk));
	pv_buf_secret(&b);
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(pv_buf_add(&b, chunk, sizeof(chunk)), 0);
	ck_assert_uint_eq(b.len, 4000);
	ck_assert(b.data[0] == 'k' && b.data[3999] == 'k' && b.data[4000] == '\0');
	pv_buf_reset(&b);
	ck_assert_uint_eq(b.len, 0);
	for (size_t i = 0; i < b.cap; i++)
		ck_assert_msg(b.data[i] == '\0', "byte %zu not wiped by reset", i);
	ck_assert_int_eq(pv_buf_addstr(&b, "x"), 0);
	/* a failure stays sticky and leaves the contents as they were */
	pv_test_alloc_fail_at(1);
	ck_assert_int_eq(pv_buf_add(&b, chunk, 8192), -1);
	pv_test_alloc_ok();
	ck_assert(pv_buf_failed(&b));
	ck_assert_str_eq(b.data, "x");
	pv_buf_release(&b, 0);
	ck_assert(!b.secret);
	ck_assert_ptr_null(b.data);
}
END_TEST

START_TEST(test_secret_fd_first_line)
{
	struct pv_secret *s = NULL;
	int p[2];
	char rest[16] = {0};

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], "line1\nline2\n", 12), 12);
	close(p[1]);
	ck_assert_int_eq(pv_secret_from_fd(p[0], "stdin", &s), PV_OK);
	ck_assert_str_eq(s->data, "line1");
	/* only the first line was consumed */
	ck_assert_int_eq(read(p[0], rest, sizeof(rest) - 1), 6);
	ck_assert_str_eq(rest, "line2\n");
	close(p[0]);
	pv_secret_free(s);
}
END_TEST

/* Bytes a terminal would act on are shown as \xNN; text, tabs, line breaks and valid UTF-8
 * (but C1 controls) pass; a sequence cut by the end of a piece waits for the next piece. */
START_TEST(test_escape_text)
{
	struct pv_buf b = PV_BUF_INIT;
	const char in[] =
		"lab x\033]0;pwn\007 \r\b\x7f\tok\n"
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 csi\xc2\x9b lone\x9b bad\xc0\xaf "
		"sur\xed\xa0\x80 big\xf4\x90\x80\x80";

	ck_assert_int_eq(pv_escape_text(&b, in, strlen(in), true), (long)strlen(in));
	ck_assert_str_eq(b.data,
			 "lab x\\x1b]0;pwn\\x07 \\x0d\\x08\\x7f\tok\n"
			 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 csi\\xc2\\x9b lone\\x9b "
			 "bad\\xc0\\xaf sur\\xed\\xa0\\x80 big\\xf4\\x90\\x80\\x80");
	/* in pieces: "\xe2\x82" is held back until "\xac" comes, unless it is the last piece */
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_escape_text(&b, "a\xe2\x82", 3, false), 1);
	ck_assert_int_eq(pv_escape_text(&b, "\xe2\x82\xac", 3, false), 3);
	ck_assert_str_eq(b.data, "a\xe2\x82\xac");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_escape_text(&b, "a\xe2\x82", 3, true), 3);
	ck_assert_str_eq(b.data, "a\\xe2\\x82");
	pv_buf_release(&b, 0);
}
END_TEST

/* The bidirectional controls (Trojan Source) are shown, never passed: a message cannot read
 * other than it is. */
START_TEST(test_escape_bidi)
{
	struct pv_buf b = PV_BUF_INIT;
	/* RLO, LRI, PDI, LRM, RLM, ALM and PDF around plain text */
	const char in[] = "a\xe2\x80\xae"
			  "b\xe2\x81\xa6"
			  "c\xe2\x81\xa9"
			  "d\xe2\x80\x8e"
			  "e\xe2\x80\x8f"
			  "f\xd8\x9c"
			  "g\xe2\x80\xac"
			  "h\xe2\x80\x8d";

	ck_assert_int_eq(pv_escape_text(&b, in, strlen(in), true), (long)strlen(in));
	ck_assert_str_eq(b.data, "a\\u202eb\\u2066c\\u2069d\\u200ee\\u200ff\\u061cg\\u202ch"
				 "\xe2\x80\x8d"); /* a zero-width joiner is text */
	pv_buf_reset(&b);
	pv_escape_xml(&b, in);
	ck_assert_str_eq(b.data, "a\\u202eb\\u2066c\\u2069d\\u200ee\\u200ff\\u061cg\\u202ch"
				 "\xe2\x80\x8d");
	pv_buf_release(&b, 0);
}
END_TEST

/* Text for HTML and XML: markup as entities, what is not text as U+FFFD. */
START_TEST(test_escape_xml)
{
	struct pv_buf b = PV_BUF_INIT;

	pv_escape_xml(&b, "<a href=\"x\">&'</a>\x01\tok \xc3\xa9 \xff \xe2\x82");
	ck_assert_str_eq(b.data, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;\xef\xbf\xbd\tok "
				 "\xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd");
	pv_buf_reset(&b);
	/* an overlong '/', DEL, a C1 control, U+FFFF, CR */
	pv_escape_xml(&b, "\xc0\xaf\x7f\xc2\x9b\xef\xbf\xbf\r");
	ck_assert_str_eq(b.data, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				 "\xef\xbf\xbd");
	pv_buf_reset(&b);
	pv_escape_xmln(&b, "a\0b", 3);
	ck_assert_str_eq(b.data, "a\xef\xbf\xbd"
				 "b");
	pv_escape_xml(&b, NULL);
	ck_assert_uint_eq(b.len, 5);
	pv_buf_release(&b, 0);
}
END_TEST

/* A file written whole: put in place at once (a link there replaced, its target left alone),
 * nothing left beside it; a write that fails leaves neither a part nor its temporary file. */
START_TEST(test_file_write)
{
	char path[256], tmp[300], target[256], got[64] = "";
	int dir;
	FILE *f;

	snprintf(path, sizeof(path), "%s/out.html", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	write_tmp("out.html.new", "left by a crash", 15);
	ck_assert_int_eq(pv_file_replace(path, "one", 3), PV_OK);
	ck_assert_int_eq(pv_file_replace(path, "two!", 4), PV_OK);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(got, sizeof(got), f));
	fclose(f);
	ck_assert_str_eq(got, "two!");
	/* a link at the path is replaced, never followed */
	snprintf(target, sizeof(target), "%s", write_tmp("target", "kept", 4));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink(target, path), 0);
	ck_assert_int_eq(pv_file_replace(path, "new", 3), PV_OK);
	f = fopen(target, "r");
	ck_assert_ptr_nonnull(fgets(got, sizeof(got), f));
	fclose(f);
	ck_assert_str_eq(got, "kept");
	/* a folder at the path: the rename fails, the temporary file goes */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	write_tmp("out.html/x", "x", 1);
	ck_assert_int_eq(pv_file_replace(path, "new", 3), PV_EIO);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "cannot write "));
	ck_assert_int_eq(access(tmp, F_OK), -1);
	/* without a temporary file: a name that exists is refused and left as it was */
	dir = open(tmpdir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dir, 0);
	ck_assert_int_eq(pv_file_write_at(dir, "target", NULL, "x", 1, "the target"), PV_EIO);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "cannot write the target: "));
	ck_assert_int_eq(pv_file_write_at(dir, "fresh", NULL, "abc", 3, "fresh"), PV_OK);
	ck_assert_int_eq(pv_file_write_at(dir, "fresh", ".fresh.new", "abcd", 4, "fresh"), PV_OK);
	ck_assert_int_eq(faccessat(dir, ".fresh.new", F_OK, 0), -1);
	close(dir);
	f = fopen(target, "r");
	ck_assert_ptr_nonnull(fgets(got, sizeof(got), f));
	fclose(f);
	ck_assert_str_eq(got, "kept");
}
END_TEST

#define near(a, b, tol)                                                                            \
	ck_assert_msg(fabs((a) - (b)) <= (tol), "%s = %.6f, not %.6f", #a, (double)(a), (double)(b))

/* ---- statistics (util/stats.h) ---- */

START_TEST(test_stats_distributions)
{
	/* P(a, x) of an integer a: 1 - e^-x sum x^k / k! */
	near(pv_stat_gamma_p(1, 2), 1 - exp(-2), 1e-12);
	near(pv_stat_gamma_p(3, 2), 1 - 5 * exp(-2), 1e-12);
	near(pv_stat_gamma_p(50, 60), 0.915593, 1e-6); /* P(Poisson(60) >= 50) */
	ck_assert(pv_stat_gamma_p(2, 0) == 0);
	/* I_x(a, b) of integers: a binomial tail; I_0.5(2, 3) = P(Bin(4, .5) >= 2) = 11/16 */
	near(pv_stat_beta_i(2, 3, 0.5), 0.6875, 1e-12);
	near(pv_stat_beta_i(1, 1, 0.3), 0.3, 1e-12);
	near(pv_stat_binom_cdf(2, 4, 0.5), 11.0 / 16, 1e-12);
	near(pv_stat_binom_cdf(0, 10, 0.1), pow(0.9, 10), 1e-12);
	ck_assert(pv_stat_binom_cdf(10, 10, 0.3) == 1);
	near(pv_stat_norm_q(0.975), 1.959963984540054, 1e-9);
	near(pv_stat_norm_q(0.5), 0, 1e-12);
	near(pv_stat_norm_q(0.05), -1.644853626951472, 1e-9);
	near(pv_stat_t_q(0.975, 1), 12.7062, 1e-4);
	near(pv_stat_t_q(0.975, 2), 4.3027, 1e-4);
	near(pv_stat_t_q(0.975, 10), 2.2281, 1e-4);
	near(pv_stat_t_q(0.975, 30), 2.0423, 1e-4);
	near(pv_stat_t_q(0.025, 10), -2.2281, 1e-4);
	near(pv_stat_t_q(0.975, INFINITY), 1.959964, 1e-6);
}
END_TEST

START_TEST(test_stats_intervals)
{
	double lo, hi, d;

	pv_stat_poisson_ci(0, 0.05, &lo, &hi);
	ck_assert(lo == 0);
	near(hi, 3.688879, 1e-5);
	pv_stat_poisson_ci(1, 0.05, &lo, &hi);
	near(lo, 0.025318, 1e-5);
	near(hi, 5.571643, 1e-5);
	pv_stat_poisson_ci(10, 0.05, &lo, &hi);
	near(lo, 4.795389, 1e-5);
	near(hi, 18.390356, 1e-5);
	pv_stat_poisson_ci(100, 0.05, &lo, &hi);
	near(lo, 81.363991, 1e-4);
	near(hi, 121.626794, 1e-4);
	pv_stat_binom_ci(5, 10, 0.05, &lo, &hi);
	near(lo, 0.187086, 1e-5);
	near(hi, 0.812914, 1e-5);
	pv_stat_binom_ci(0, 10, 0.05, &lo, &hi);
	ck_assert(lo == 0);
	near(hi, 1 - pow(0.025, 0.1), 1e-6); /* 0.3085 */
	pv_stat_binom_ci(10, 10, 0.05, &lo, &hi);
	near(lo, pow(0.025, 0.1), 1e-6);
	ck_assert(hi == 1);
	pv_stat_wilson(5, 10, 0.05, &lo, &hi);
	near(lo, 0.2366, 1e-4);
	near(hi, 0.7634, 1e-4);
	/* Newcombe 1998, table II, method 10 */
	pv_stat_prop_diff(56, 70, 48, 80, 0.05, &d, &lo, &hi);
	near(d, 0.2, 1e-12);
	near(lo, 0.0524, 1e-4);
	near(hi, 0.3339, 1e-4);
	pv_stat_prop_diff(9, 10, 3, 10, 0.05, &d, &lo, &hi);
	near(lo, 0.1705, 1e-4);
	near(hi, 0.8090, 1e-4);
	pv_stat_prop_diff(6, 7, 2, 7, 0.05, &d, &lo, &hi);
	near(lo, 0.0582, 1e-4);
	near(hi, 0.8062, 1e-4);
	pv_stat_prop_diff(5, 56, 0, 29, 0.05, &d, &lo, &hi);
	near(lo, -0.0381, 1e-4);
	near(hi, 0.1926, 1e-4);
	pv_stat_prop_diff(1, 0, 1, 10, 0.05, &d, &lo, &hi);
	ck_assert(isnan(d) && lo == -1 && hi == 1);
	/* two rates of 100 in equal times: Clopper-Pearson on 100 of 200, as a ratio */
	pv_stat_rate_ratio(100, 10, 100, 10, 0.05, &d, &lo, &hi);
	near(d, 1, 1e-12);
	near(lo, 0.750266, 1e-5);
	near(hi, 1.332860, 1e-5);
	/* the same counts over twice the time: half the rate */
	pv_stat_rate_ratio(100, 20, 100, 10, 0.05, &d, &lo, &hi);
	near(d, 0.5, 1e-12);
	near(lo, 0.375133, 1e-5);
	pv_stat_rate_ratio(0, 10, 0, 10, 0.05, &d, &lo, &hi);
	ck_assert(isnan(d) && lo == 0 && isinf(hi));
}
END_TEST

/* Garwood's exact interval against values computed apart (the Poisson distribution summed,
 * bisected: scripts in the commit). */
START_TEST(test_stats_garwood)
{
	static const double want[][3] = {{0, 0, 3.688879454},
					 {1, 0.025317808, 5.571643391},
					 {10, 4.795388696, 18.390356042},
					 {184, 158.373200481, 212.592547288},
					 {448, 407.470503355, 491.469781634}};
	double lo, hi;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		pv_stat_poisson_ci((uint64_t)want[i][0], 0.05, &lo, &hi);
		ck_assert_msg(fabs(lo - want[i][1]) < 1e-6 && fabs(hi - want[i][2]) < 1e-6,
			      "%g: %.9f %.9f", want[i][0], lo, hi);
	}
	/* a large count: the interval is the normal one, +-1.96 sqrt(n), within 0.1% */
	pv_stat_poisson_ci(1000000, 0.05, &lo, &hi);
	ck_assert(fabs((hi - lo) / (2 * 1.959964 * 1000) - 1) < 1e-3);
}
END_TEST

START_TEST(test_stats_spreads)
{
	double x[] = {10, 12, 14}, d, lo, hi;
	struct pv_stat_est a = pv_stat_repeats(x, 3, 0), b, one;

	near(a.mean, 12, 1e-12);
	near(a.var, 4.0 / 3, 1e-12); /* s^2 = 4, over 3 */
	near(a.df, 2, 0);
	/* the floor wins when the repeats agree more than a run's own noise allows */
	b = pv_stat_repeats(x, 3, 30);
	near(b.var, 10, 1e-12);
	ck_assert(isinf(b.df));
	one = pv_stat_repeats(x, 1, 9);
	ck_assert(one.mean == 10 && one.var == 9 && isinf(one.df));
	/* Welch: two groups of 3 with s^2 4 and means 12 and 20: df 4, t 2.776 */
	{
		double y[] = {18, 20, 22};
		struct pv_stat_est e = pv_stat_repeats(y, 3, 0);

		pv_stat_diff(e, a, 0.05, &d, &lo, &hi);
		near(d, 8, 1e-12);
		near(hi - d, 2.7764 * sqrt(8.0 / 3), 1e-3);
		ck_assert(lo > 0);
	}
	pv_stat_diff(a, a, 0.05, &d, &lo, &hi);
	ck_assert(d == 0 && lo < 0 && hi > 0);
}
END_TEST

/* FNV-1a's published vectors (draft-eastlake-fnv's test suite, "" "a" "foobar"); a hash
 * carried on over pieces is the hash of the whole. */
START_TEST(test_hash_fnv)
{
	ck_assert_uint_eq(pv_hash_fnv64(PV_HASH_FNV64_INIT, "", 0), 0xcbf29ce484222325ull);
	ck_assert_uint_eq(pv_hash_fnv64(PV_HASH_FNV64_INIT, "a", 1), 0xaf63dc4c8601ec8cull);
	ck_assert_uint_eq(pv_hash_fnv64(PV_HASH_FNV64_INIT, "foobar", 6), 0x85944171f73967e8ull);
	ck_assert_uint_eq(pv_hash_fnv64(pv_hash_fnv64(PV_HASH_FNV64_INIT, "foo", 3), "bar", 3),
			  0x85944171f73967e8ull);
	/* n bytes, not up to a NUL */
	ck_assert_uint_ne(pv_hash_fnv64(PV_HASH_FNV64_INIT, "a\0b", 3),
			  pv_hash_fnv64(PV_HASH_FNV64_INIT, "a", 1));
	ck_assert_uint_eq(pv_hash_fnv32(PV_HASH_FNV32_INIT, "", 0), 0x811c9dc5u);
	ck_assert_uint_eq(pv_hash_fnv32(PV_HASH_FNV32_INIT, "a", 1), 0xe40c292cu);
	ck_assert_uint_eq(pv_hash_fnv32(PV_HASH_FNV32_INIT, "foobar", 6), 0xbf9cf968u);
	ck_assert_uint_eq(pv_hash_fnv32(pv_hash_fnv32(PV_HASH_FNV32_INIT, "foo", 3), "bar", 3),
			  0xbf9cf968u);
}
END_TEST

/* ASCII A-Z folded to a-z and no other byte: '@' '[' '`' '{' are the neighbours of the two
 * ranges, and the bytes of a UTF-8 'É' stay as they are. */
START_TEST(test_hash_fnv_lower)
{
	const char *odd = "@[`{\xc3\x89\xff";

	ck_assert_uint_eq(pv_hash_fnv64_lower(PV_HASH_FNV64_INIT, "FooBAR", 6),
			  0x85944171f73967e8ull);
	ck_assert_uint_eq(pv_hash_fnv64_lower(PV_HASH_FNV64_INIT, "foobar", 6),
			  0x85944171f73967e8ull);
	ck_assert_uint_eq(pv_hash_fnv64_lower(PV_HASH_FNV64_INIT, "AZ", 2),
			  pv_hash_fnv64(PV_HASH_FNV64_INIT, "az", 2));
	ck_assert_uint_eq(pv_hash_fnv64_lower(PV_HASH_FNV64_INIT, odd, strlen(odd)),
			  pv_hash_fnv64(PV_HASH_FNV64_INIT, odd, strlen(odd)));
	ck_assert_uint_eq(
		pv_hash_fnv64_lower(pv_hash_fnv64_lower(PV_HASH_FNV64_INIT, "FOO", 3), "Bar", 3),
		0x85944171f73967e8ull);
}
END_TEST

START_TEST(test_strset)
{
	struct pv_strset *s = pv_strset_new();
	char name[32];

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pv_strset_add(s, "cli1-u1"), 1);
	ck_assert_int_eq(pv_strset_add(s, "CLI1-U1"), 0); /* AD compares names case-insensitively */
	ck_assert(pv_strset_has(s, "Cli1-u1"));
	ck_assert(!pv_strset_has(s, "cli1-u2"));
	for (int i = 0; i < 5000; i++) { /* forces several grows */
		snprintf(name, sizeof(name), "u%d", i);
		ck_assert_int_eq(pv_strset_add(s, name), 1);
	}
	ck_assert_uint_eq(pv_strset_count(s), 5001);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "U%d", i);
		ck_assert(pv_strset_has(s, name));
	}
	ck_assert(!pv_strset_has(s, "u5000"));
	pv_strset_free(s);
	pv_strset_free(NULL);
}
END_TEST

/* Numbered in the order first added, through every grow; exact sets tell case apart. */
START_TEST(test_strset_numbered)
{
	struct pv_strset *s = pv_strset_new(), *x = pv_strset_new_exact();
	char name[32];
	size_t idx = 99;

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(pv_strset_put(s, "all", &idx), 1);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(pv_strset_put(s, "Web", &idx), 1);
	ck_assert_uint_eq(idx, 1);
	ck_assert_int_eq(pv_strset_put(s, "WEB", &idx), 0); /* there: its number */
	ck_assert_uint_eq(idx, 1);
	ck_assert_str_eq(pv_strset_at(s, 1), "Web"); /* as first added */
	ck_assert_ptr_null(pv_strset_at(s, 2));
	ck_assert(pv_strset_find(s, "web", &idx) && idx == 1);
	ck_assert(!pv_strset_find(s, "db", &idx));
	/* exact: Ansible's names differ by case */
	ck_assert_int_eq(pv_strset_put(x, "Web", &idx), 1);
	ck_assert_int_eq(pv_strset_put(x, "web", &idx), 1);
	ck_assert_uint_eq(idx, 1);
	ck_assert(pv_strset_find(x, "Web", &idx) && idx == 0);
	ck_assert(!pv_strset_has(x, "WEB"));
	for (int i = 0; i < 3000; i++) { /* several grows of the slots and the names */
		snprintf(name, sizeof(name), "h%d", i);
		ck_assert_int_eq(pv_strset_put(x, name, &idx), 1);
		ck_assert_uint_eq(idx, (size_t)i + 2);
	}
	ck_assert_uint_eq(pv_strset_count(x), 3002);
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "h%d", i);
		ck_assert(pv_strset_find(x, name, &idx));
		ck_assert_uint_eq(idx, (size_t)i + 2);
		ck_assert_str_eq(pv_strset_at(x, idx), name);
		name[0] = 'H';
		ck_assert(!pv_strset_has(x, name));
	}
	/* out of memory for the names: -1, the set as it was */
	pv_test_alloc_fail_at(1);
	for (int i = 3000; i < 5000; i++) { /* the names grow at 4096 */
		int k;

		snprintf(name, sizeof(name), "h%d", i);
		k = pv_strset_put(x, name, NULL);
		if (k < 0) {
			ck_assert(!pv_strset_has(x, name));
			break;
		}
	}
	pv_test_alloc_ok();
	ck_assert_int_gt(pv_test_alloc_refused(), 0);
	pv_strset_free(s);
	pv_strset_free(x);
}
END_TEST

/* The fan-out: every item once, each outcome with its own message (thread-local), and the
 * whole said as all, some or none failed. */
struct fan_ctx {
	int calls[40];
	unsigned fail_mod; /* items i with i % fail_mod == 0 fail; 0: none */
};

static int fan_item(size_t i, void *arg)
{
	struct fan_ctx *c = arg;

	__atomic_add_fetch(&c->calls[i], 1, __ATOMIC_RELAXED);
	if (c->fail_mod && i % c->fail_mod == 0)
		return pv_error(i == 0 ? PV_EUNREACH : PV_EREMOTE, "host %zu failed", i);
	return pv_error(PV_OK, "host %zu fine", i);
}

START_TEST(test_fanout)
{
	struct pv_fanout_result res[40];
	struct fan_ctx c;

	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(pv_fanout_run(40, 3, fan_item, &c, res), PV_OK);
	for (int i = 0; i < 40; i++) {
		char want[32];

		ck_assert_int_eq(c.calls[i], 1);
		ck_assert_int_eq(res[i].code, PV_OK);
		snprintf(want, sizeof(want), "host %d fine", i);
		ck_assert_str_eq(res[i].msg, want);
	}
	/* some fail: partial, the first failure named */
	memset(&c, 0, sizeof(c));
	c.fail_mod = 7;
	ck_assert_int_eq(pv_fanout_run(40, 0, fan_item, &c, res), PV_EPARTIAL);
	ck_assert_str_eq(pv_errmsg(), "6 of 40 hosts failed, first: host 0 failed");
	ck_assert_int_eq(res[0].code, PV_EUNREACH);
	ck_assert_int_eq(res[7].code, PV_EREMOTE);
	ck_assert_str_eq(res[7].msg, "host 7 failed");
	ck_assert_int_eq(res[8].code, PV_OK);
	/* all fail: the first failure's code; one item alone: its message as it is */
	memset(&c, 0, sizeof(c));
	c.fail_mod = 1;
	ck_assert_int_eq(pv_fanout_run(3, 2, fan_item, &c, res), PV_EUNREACH);
	ck_assert_str_eq(pv_errmsg(), "all 3 hosts failed, first: host 0 failed");
	ck_assert_int_eq(pv_fanout_run(1, 2, fan_item, &c, res), PV_EUNREACH);
	ck_assert_str_eq(pv_errmsg(), "host 0 failed");
	/* nothing to do */
	ck_assert_int_eq(pv_fanout_run(0, 2, fan_item, &c, NULL), PV_OK);
}
END_TEST

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	memcpy(tmpdir + strlen(tmpdir) - 6, "XXXXXX", 6);
}

START_TEST(test_utf16le)
{
	struct pv_buf b = PV_BUF_INIT;
	char out[16];

	/* ASCII (upper-cased on request), 2-byte, and a non-BMP character as a surrogate pair */
	ck_assert_int_eq(pv_utf16le(&b, "a\xc3\xa9\xf0\x9f\x98\x80", 7, 1), 0);
	ck_assert_uint_eq(b.len, 8);
	ck_assert_mem_eq(b.data, "A\0\xe9\0\x3d\xd8\x00\xde", 8);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)b.data, b.len, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "A\xc3\xa9\xf0\x9f\x98\x80");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_utf16le(&b, "", 0, 0), 0);
	ck_assert_ptr_nonnull(b.data);
	/* cut short, a bad continuation, overlong, a surrogate, beyond U+10FFFF */
	ck_assert_int_eq(pv_utf16le(&b, "\xc3", 1, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xc3\x41", 2, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xc0\xaf", 2, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xed\xa0\x80", 3, 0), -2);
	ck_assert_int_eq(pv_utf16le(&b, "\xf4\x90\x80\x80", 4, 0), -2);
	/* back: odd length, lone surrogates, no room */
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a", 1, out, sizeof(out)), -1);
	ck_assert_int_eq(
		pv_utf16le_to_utf8((const uint8_t *)"\x00\xd8\x41\x00", 4, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"\x00\xdc", 2, out, sizeof(out)), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a\0b\0", 4, out, 2), -1);
	ck_assert_int_eq(pv_utf16le_to_utf8((const uint8_t *)"a\0b\0", 4, out, 3), 0);
	ck_assert_str_eq(out, "ab");
	pv_buf_release(&b, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_error_record);
	tcase_add_test(tc, test_fanout);
	tcase_add_test(tc, test_strset_numbered);
	tcase_add_test(tc, test_error_truncates);
	tcase_add_test(tc, test_status_names);
	tcase_add_test(tc, test_buf);
	tcase_add_test(tc, test_escape_text);
	tcase_add_test(tc, test_escape_bidi);
	tcase_add_test(tc, test_escape_xml);
	tcase_add_test(tc, test_buf_sticky_failure);
	tcase_add_test(tc, test_tar_headers);
	tcase_add_test(tc, test_sha256);
	tcase_add_test(tc, test_md4_md5);
	tcase_add_test(tc, test_hmac_md5);
	tcase_add_test(tc, test_hmac_sha256);
	tcase_add_test(tc, test_aes_cmac128);
	tcase_add_test(tc, test_kdf_hmac_sha256);
	tcase_add_test(tc, test_sha512);
	tcase_add_test(tc, test_aead);
	tcase_add_test(tc, test_tar_read);
	tcase_add_test(tc, test_tar_read_by_tar);
	tcase_add_test(tc, test_buf_secret);
	tcase_add_test(tc, test_secret_file_newline);
	tcase_add_test(tc, test_secret_file_errors);
	tcase_add_test(tc, test_secret_env);
	tcase_add_test(tc, test_secret_fd_first_line);
	tcase_add_test(tc, test_strset);
	tcase_add_test(tc, test_hash_fnv);
	tcase_add_test(tc, test_hash_fnv_lower);
	tcase_add_test(tc, test_file_write);
	tcase_add_test(tc, test_stats_distributions);
	tcase_add_test(tc, test_stats_intervals);
	tcase_add_test(tc, test_stats_garwood);
	tcase_add_test(tc, test_stats_spreads);
	tcase_add_test(tc, test_utf16le);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
