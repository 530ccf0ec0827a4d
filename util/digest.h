/* util/digest.h: message digests, from nettle (the one module that uses it). */
#ifndef PV_UTIL_DIGEST_H
#define PV_UTIL_DIGEST_H

#include <stddef.h>

#define PV_SHA256_HEX 65 /* 64 hex digits and a NUL */

/* SHA-256 of data, as lower-case hex. */
void pv_sha256_hex(const void *data, size_t len, char out[PV_SHA256_HEX]);

#endif
