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

#endif
