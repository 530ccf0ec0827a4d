/* util/digest.h: message digests and MACs, from nettle (the one module that uses it). */
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

#endif
