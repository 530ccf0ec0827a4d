/* util/digest.h: message digests, MACs and the AEAD ciphers of SMB 3, from nettle (the one
 * module that uses it: smb/ gets every hash, MAC and cipher it needs from here). */
#ifndef PV_UTIL_DIGEST_H
#define PV_UTIL_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* Each function here wipes the nettle contexts it used before it returns: the input may be a
 * password (MD4 of NTOWFv2), the key an NT hash or a session key. The temporaries nettle 3.8
 * keeps on its own stack (hmac_set_key's padded key) are beyond reach. */

#define PV_SHA256_HEX 65 /* 64 hex digits and a NUL */

/* SHA-256 of data, as lower-case hex. */
void pv_sha256_hex(const void *data, size_t len, char out[PV_SHA256_HEX]);

/* MD4 (RFC 1320) and MD5 (RFC 1321) of data: NTLM's NT hash and its HMAC need them. */
void pv_md4(const void *data, size_t len, uint8_t out[16]);
void pv_md5(const void *data, size_t len, uint8_t out[16]);

/* HMAC (RFC 2104) with MD5 and with SHA-256 (RFC 4231); a key of any length. */
void pv_hmac_md5(const void *key, size_t klen, const void *data, size_t len, uint8_t out[16]);
void pv_hmac_sha256(const void *key, size_t klen, const void *data, size_t len, uint8_t out[32]);

/* AES-CMAC with a 128-bit key (RFC 4493), as SMB 3 signing uses it. */
void pv_aes_cmac128(const uint8_t key[16], const void *data, size_t len, uint8_t out[16]);

/* The KDF in counter mode of NIST SP800-108 (section 5.1) with HMAC-SHA256 as the PRF and a
 * 32-bit counter and length (r = 32), as MS-SMB2 3.1.4.2 derives the SMB 3 keys:
 *   K(i) = HMAC-SHA256(key, [i]_32 || label || 0x00 || context || [L]_32), i from 1,
 * big-endian, L = 8 x olen bits; out gets the first olen bytes of K(1) || K(2) || ...
 * The label and context are taken as given (MS-SMB2's carry their terminating NUL, counted
 * in llen and clen: "SMB2AESCMAC" is 12 bytes); olen is at most 2^29 - 1. */
void pv_kdf_hmac_sha256(const void *key, size_t klen, const void *label, size_t llen,
			const void *context, size_t clen, uint8_t *out, size_t olen);

/* SHA-512 of a || b: one step of SMB 3.1.1's preauth integrity hash, H = SHA-512(H || message)
 * (MS-SMB2 3.2.5.2, 3.2.5.3.1). out may be a. */
void pv_sha512_2(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[64]);

/* The AEAD ciphers of SMB 3 encryption (MS-SMB2 3.1.4.3): AES-CCM and AES-GCM with 128- and
 * 256-bit keys, a 16-byte tag, the nonce as given (SMB: 11 bytes for CCM, 12 for GCM). A
 * context holds the expanded key (and GCM's hash key), made once per session key; its free
 * wipes it. GMAC (SMB 3.1.1's AES-GMAC signing) is AES-128-GCM over no plaintext: seal with
 * len 0 and the message as aad. */
enum pv_aead_alg { PV_AES128_CCM, PV_AES128_GCM, PV_AES256_CCM, PV_AES256_GCM };
struct pv_aead;
/* key: 16 or 32 bytes as alg says. NULL when out of memory. */
struct pv_aead *pv_aead_new(enum pv_aead_alg alg, const uint8_t *key);
void pv_aead_free(struct pv_aead *a);
/* Encrypt buf (len bytes) in place, authenticating aad too; the tag into tag. */
void pv_aead_seal(struct pv_aead *a, const uint8_t *nonce, size_t nlen, const void *aad,
		  size_t alen, uint8_t *buf, size_t len, uint8_t tag[16]);
/* Decrypt buf in place and check tag (in constant time): 0, or -1 when the tag does not match
 * (buf then holds what the wrong key or the changed bytes made: discard it). */
int pv_aead_open(struct pv_aead *a, const uint8_t *nonce, size_t nlen, const void *aad, size_t alen,
		 uint8_t *buf, size_t len, const uint8_t tag[16]);

#endif
