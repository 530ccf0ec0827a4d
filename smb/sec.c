/* smb/sec.c: the SMB 3 security of a connection (see smb2.h): what NEGOTIATE settled, the
 * preauth integrity hash, the session keys, signing and the transform header. Pure: every
 * hash, MAC and cipher comes from util/digest (nettle), the nonces' random bytes from
 * getrandom() or the caller. */
#include "smb/smb2.h"

#include "util/digest.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

const uint16_t smb2_dialects[5] = {SMB2_202, SMB2_210, SMB2_300, SMB2_302, SMB2_311};
const uint16_t smb2_ciphers[4] = {SMB2_AES128_GCM, SMB2_AES128_CCM, SMB2_AES256_GCM,
				  SMB2_AES256_CCM};
const uint16_t smb2_signs[2] = {SMB2_AES_GMAC, SMB2_AES_CMAC};

static bool in(const uint16_t *v, size_t n, uint16_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A 3.1.1 context's choice (MS-SMB2 3.2.5.2): exactly one, one of those offered (or none in
 * common, 0, where none may be). 0, or -1 with why. */
static int chosen(uint16_t count, uint16_t v, const uint16_t *offered, size_t n, bool none_ok,
		  const char *what, char *why, size_t len)
{
	if (count == 1 && ((none_ok && v == 0) || in(offered, n, v)))
		return 0;
	snprintf(why, len, "its NEGOTIATE answer chose %u %s, the first 0x%04x, not one offered",
		 count, what, v);
	return -1;
}

int smb2_negotiated(const struct smb2_negotiate_req *q, const struct smb2_negotiate_rsp *a,
		    struct smb2_conn *c, char *why, size_t len)
{
	uint16_t d = a->dialect;

	if (!in(q->dialects, q->ndialects, d)) {
		snprintf(why, len, "the server chose dialect 0x%04x, not one offered", d);
		return -1;
	}
	c->dialect = d;
	c->server_caps = a->caps;
	memcpy(c->server_guid, a->guid, 16);
	c->server_mode = a->security_mode;
	c->sign_required = (a->security_mode & SMB2_SIGNING_REQUIRED) != 0;
	c->multi_credit = d >= SMB2_210 && (a->caps & SMB2_CAP_LARGE_MTU);
	c->max_read = a->max_read;
	c->sign_alg = d < SMB2_300 ? SMB2_HMAC_SHA256 : SMB2_AES_CMAC;
	c->cipher = SMB2_NO_CIPHER;
	if (d == SMB2_300 || d == SMB2_302) {
		/* MS-SMB2 3.2.5.2: AES-128-CCM when both sides said SMB2_GLOBAL_CAP_ENCRYPTION */
		if ((a->caps & SMB2_CAP_ENCRYPTION) && (q->caps & SMB2_CAP_ENCRYPTION) &&
		    in(q->ciphers, q->nciphers, SMB2_AES128_CCM))
			c->cipher = SMB2_AES128_CCM;
		return 0;
	}
	if (d != SMB2_311)
		return 0;
	/* MS-SMB2 3.2.5.2: exactly one preauth hash, one we offered; at most one cipher, one
	 * we offered or none in common; the signing algorithm one we offered */
	if (!a->has_preauth) {
		snprintf(why, len,
			 "its SMB 3.1.1 NEGOTIATE answer has no preauth integrity context");
		return -1;
	}
	if (a->hash_count != 1 || a->hash != SMB2_HASH_SHA512) {
		snprintf(why, len,
			 "its NEGOTIATE answer chose %u preauth hashes, the first 0x%04x, where "
			 "SHA-512 (1) alone was offered",
			 a->hash_count, a->hash);
		return -1;
	}
	if (a->has_cipher && chosen(a->cipher_count, a->cipher, q->ciphers, q->nciphers, true,
				    "ciphers", why, len) < 0)
		return -1;
	if (a->has_sign && chosen(a->sign_count, a->sign, q->signs, q->nsigns, false,
				  "signing algorithms", why, len) < 0)
		return -1;
	c->cipher = a->has_cipher ? a->cipher : c->cipher;
	c->sign_alg = a->has_sign ? a->sign : c->sign_alg;
	return 0;
}

bool smb2_validates(uint16_t dialect)
{
	return dialect == SMB2_300 || dialect == SMB2_302;
}

int smb2_validated(const struct smb2_conn *c, const struct smb2_rd *out, char *why, size_t len)
{
	struct smb2_rd r = *out;
	uint32_t caps;
	const uint8_t *guid;
	uint16_t mode, dialect;

	smb2_rd_seek(&r, 0);
	caps = smb2_rd_u32(&r);
	guid = smb2_rd_bytes(&r, 16);
	mode = smb2_rd_u16(&r);
	dialect = smb2_rd_u16(&r);
	if (r.bad || out->len != 24) {
		snprintf(why, len, "its VALIDATE_NEGOTIATE_INFO answer is %zu bytes, not 24",
			 out->len);
		return -1;
	}
	if (dialect != c->dialect) {
		snprintf(why, len, "its dialect is %s", smb2_dialect_name(dialect));
		snprintf(why + strlen(why), len - strlen(why), ", its NEGOTIATE answer said %s",
			 smb2_dialect_name(c->dialect));
	} else if (caps != c->server_caps) {
		snprintf(why, len, "its capabilities are 0x%08x, its NEGOTIATE answer said 0x%08x",
			 caps, c->server_caps);
	} else if (mode != c->server_mode) {
		snprintf(why, len, "its security mode is 0x%04x, its NEGOTIATE answer said 0x%04x",
			 mode, c->server_mode);
	} else if (memcmp(guid, c->server_guid, 16) != 0) {
		snprintf(why, len, "its server GUID is not the one its NEGOTIATE answer gave");
	} else {
		return 0;
	}
	return -1;
}

void smb2_preauth(uint8_t h[64], const void *msg, size_t len)
{
	pv_sha512_2(h, 64, msg, len, h);
}

const char *smb2_cipher_name(uint16_t cipher)
{
	switch (cipher) {
	case SMB2_AES128_CCM:
		return "AES-128-CCM";
	case SMB2_AES128_GCM:
		return "AES-128-GCM";
	case SMB2_AES256_CCM:
		return "AES-256-CCM";
	case SMB2_AES256_GCM:
		return "AES-256-GCM";
	default:
		return "no cipher";
	}
}

bool smb2_cipher_known(uint16_t cipher)
{
	return cipher >= SMB2_AES128_CCM && cipher <= SMB2_AES256_GCM;
}

const char *smb2_sign_name(uint16_t alg)
{
	switch (alg) {
	case SMB2_HMAC_SHA256:
		return "HMAC-SHA256";
	case SMB2_AES_CMAC:
		return "AES-128-CMAC";
	case SMB2_AES_GMAC:
		return "AES-128-GMAC";
	default:
		return "an unknown signing algorithm";
	}
}

static bool gcm(uint16_t cipher)
{
	return cipher == SMB2_AES128_GCM || cipher == SMB2_AES256_GCM;
}

static bool aes256(uint16_t cipher)
{
	return cipher == SMB2_AES256_CCM || cipher == SMB2_AES256_GCM;
}

static enum pv_aead_alg aead_alg(uint16_t cipher)
{
	switch (cipher) {
	case SMB2_AES128_GCM:
		return PV_AES128_GCM;
	case SMB2_AES256_CCM:
		return PV_AES256_CCM;
	case SMB2_AES256_GCM:
		return PV_AES256_GCM;
	default:
		return PV_AES128_CCM;
	}
}

/* The nonce's length in the transform header (MS-SMB2 2.2.41): 11 bytes for CCM, 12 for GCM
 * (the rest of the 16-byte field is zero). */
static size_t nonce_len(uint16_t cipher)
{
	return gcm(cipher) ? 12 : 11;
}

void smb2_keys_clear(struct smb2_keys *k)
{
	pv_aead_free(k->gmac);
	pv_aead_free(k->enc);
	pv_aead_free(k->dec);
	explicit_bzero(k, sizeof(*k));
}

int smb2_keys_signing(struct smb2_keys *k, uint16_t alg, const uint8_t key[16])
{
	pv_aead_free(k->gmac);
	k->gmac = NULL;
	k->sign_alg = alg;
	if (k->sign != key)
		memcpy(k->sign, key, 16);
	if (alg == SMB2_AES_GMAC && !(k->gmac = pv_aead_new(PV_AES128_GCM, key)))
		return -1;
	return 0;
}

int smb2_keys_make(struct smb2_keys *k, const struct smb2_conn *c, const uint8_t *session_key,
		   size_t sklen, const uint8_t preauth[64], const uint8_t *nonce_fixed)
{
	/* sizeof: the terminating NUL is part of each label and context (MS-SMB2 3.1.4.2) */
	static const char l_sign30[] = "SMB2AESCMAC", c_sign30[] = "SmbSign",
			  l_ccm30[] = "SMB2AESCCM", c_in[] = "ServerIn ", c_out[] = "ServerOut",
			  l_sign[] = "SMBSigningKey", l_c2s[] = "SMBC2SCipherKey",
			  l_s2c[] = "SMBS2CCipherKey";
	uint8_t sk[16] = {0}, enc[32], dec[32], sign[16];
	size_t klen = aes256(c->cipher) ? 32 : 16;
	/* Session.SessionKey: the first 16 bytes, zero-padded when shorter (MS-SMB2 3.2.5.3.1);
	 * the AES-256 ciphers' keys come from all of them (Session.FullSessionKey) */
	const uint8_t *full = aes256(c->cipher) && sklen > 16 ? session_key : sk;
	size_t flen = aes256(c->cipher) && sklen > 16 ? sklen : 16;
	int r = 0;

	smb2_keys_clear(k);
	memcpy(sk, session_key, sklen < 16 ? sklen : 16);
	k->cipher = c->cipher;
	if (c->dialect < SMB2_300) {
		memcpy(sign, sk, 16);
	} else if (c->dialect < SMB2_311) {
		pv_kdf_hmac_sha256(sk, 16, l_sign30, sizeof(l_sign30), c_sign30, sizeof(c_sign30),
				   sign, 16);
		pv_kdf_hmac_sha256(sk, 16, l_ccm30, sizeof(l_ccm30), c_in, sizeof(c_in), enc, 16);
		pv_kdf_hmac_sha256(sk, 16, l_ccm30, sizeof(l_ccm30), c_out, sizeof(c_out), dec, 16);
	} else {
		pv_kdf_hmac_sha256(sk, 16, l_sign, sizeof(l_sign), preauth, 64, sign, 16);
		pv_kdf_hmac_sha256(full, flen, l_c2s, sizeof(l_c2s), preauth, 64, enc, klen);
		pv_kdf_hmac_sha256(full, flen, l_s2c, sizeof(l_s2c), preauth, 64, dec, klen);
	}
	if (smb2_keys_signing(k, c->sign_alg, sign) < 0)
		r = -1;
	if (r == 0 && c->dialect >= SMB2_300 && c->cipher &&
	    (!(k->enc = pv_aead_new(aead_alg(c->cipher), enc)) ||
	     !(k->dec = pv_aead_new(aead_alg(c->cipher), dec))))
		r = -1;
	if (r == 0 && nonce_fixed)
		memcpy(k->nonce_fixed, nonce_fixed, sizeof(k->nonce_fixed));
	else if (r == 0 && getrandom(k->nonce_fixed, sizeof(k->nonce_fixed), 0) !=
				   (ssize_t)sizeof(k->nonce_fixed))
		r = -1;
	explicit_bzero(sk, sizeof(sk));
	explicit_bzero(enc, sizeof(enc));
	explicit_bzero(dec, sizeof(dec));
	explicit_bzero(sign, sizeof(sign));
	if (r < 0)
		smb2_keys_clear(k);
	return r;
}

/* The signature of msg, its signature field zeroed already, into sig. */
static void signature(const uint8_t *msg, size_t len, const struct smb2_keys *k,
		      uint8_t sig[SMB2_SIG_LEN])
{
	uint8_t h[32], nonce[12];

	switch (k->sign_alg) {
	case SMB2_AES_GMAC:
		/* MS-SMB2 3.1.4.1: the nonce is the MessageId, then 4 bytes whose bit 0 says an
		 * answer (SMB2_FLAGS_SERVER_TO_REDIR) and bit 1 a CANCEL */
		memcpy(nonce, msg + 24, 8);
		smb2_put32(nonce + 8, (smb2_get32(msg + 16) & SMB2_FLAGS_RESPONSE) |
					      (smb2_get16(msg + 12) == SMB2_CANCEL ? 2u : 0u));
		pv_aead_seal(k->gmac, nonce, sizeof(nonce), msg, len, NULL, 0, sig);
		break;
	case SMB2_AES_CMAC:
		pv_aes_cmac128(k->sign, msg, len, sig);
		break;
	default:
		pv_hmac_sha256(k->sign, 16, msg, len, h);
		memcpy(sig, h, SMB2_SIG_LEN);
		break;
	}
}

void smb2_sign(uint8_t *msg, size_t len, const struct smb2_keys *k)
{
	smb2_put32(msg + 16, smb2_get32(msg + 16) | SMB2_FLAGS_SIGNED);
	memset(msg + SMB2_SIG_AT, 0, SMB2_SIG_LEN);
	signature(msg, len, k, msg + SMB2_SIG_AT);
}

int smb2_verify(uint8_t *msg, size_t len, const struct smb2_keys *k)
{
	uint8_t got[SMB2_SIG_LEN], want[SMB2_SIG_LEN], diff = 0;

	memcpy(got, msg + SMB2_SIG_AT, SMB2_SIG_LEN);
	memset(msg + SMB2_SIG_AT, 0, SMB2_SIG_LEN);
	signature(msg, len, k, want);
	memcpy(msg + SMB2_SIG_AT, got, SMB2_SIG_LEN);
	for (int i = 0; i < SMB2_SIG_LEN; i++) /* no early exit: the time says nothing */
		diff |= (uint8_t)(got[i] ^ want[i]);
	return diff ? -1 : 0;
}

/* ---- the transform header ---- */

bool smb2_is_tf(const uint8_t *p, size_t len)
{
	return len >= 4 && memcmp(p, "\xfdSMB", 4) == 0;
}

int smb2_tf_dec(struct smb2_rd *r, struct smb2_tf *t)
{
	if (r->len < SMB2_TF)
		return smb2_rd_fail(r,
				    "a transform header in a frame of %zu bytes, shorter than "
				    "its 52",
				    r->len);
	smb2_rd_seek(r, 4);
	t->sig = smb2_rd_bytes(r, 16);
	t->nonce = smb2_rd_bytes(r, 16);
	t->size = smb2_rd_u32(r);
	smb2_rd_u16(r);
	t->flags = smb2_rd_u16(r);
	t->session = smb2_rd_u64(r);
	/* MS-SMB2 2.2.41: Flags (EncryptionAlgorithm in 3.0) 0x0001, encrypted */
	if (t->flags != 1)
		return smb2_rd_fail(r,
				    "a transform header with Flags 0x%04x, not 0x0001 (encrypted)",
				    t->flags);
	if (t->size != r->len - SMB2_TF)
		return smb2_rd_fail(r,
				    "a transform header whose OriginalMessageSize (%u) is not the "
				    "%zu bytes that follow it",
				    t->size, r->len - SMB2_TF);
	return r->bad ? -1 : 0;
}

void smb2_nonce(struct smb2_keys *k, uint8_t nonce[16])
{
	size_t fixed = nonce_len(k->cipher) - 8;

	memset(nonce, 0, 16);
	memcpy(nonce, k->nonce_fixed, fixed);
	smb2_put64(nonce + fixed, k->nonce_count++);
}

void smb2_seal(const struct smb2_keys *k, uint64_t sid, const uint8_t nonce[16], uint8_t *tf,
	       size_t len)
{
	memcpy(tf, "\xfdSMB", 4);
	memcpy(tf + 20, nonce, 16); /* smb2_nonce zeroes the tail (Windows 8 did not) */
	smb2_put32(tf + 36, (uint32_t)len);
	smb2_put16(tf + 40, 0);
	smb2_put16(tf + 42, 1);
	smb2_put64(tf + 44, sid);
	pv_aead_seal(k->enc, tf + 20, nonce_len(k->cipher), tf + 20, 32, tf + SMB2_TF, len, tf + 4);
}

int smb2_unseal(const struct smb2_keys *k, uint8_t *tf, size_t len)
{
	return pv_aead_open(k->dec, tf + 20, nonce_len(k->cipher), tf + 20, 32, tf + SMB2_TF, len,
			    tf + 4);
}
