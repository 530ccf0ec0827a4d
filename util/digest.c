/* util/digest.c: message digests through nettle (see digest.h). */
#include "util/digest.h"

#include <stdio.h>

#include <nettle/sha2.h>

void pv_sha256_hex(const void *data, size_t len, char out[PV_SHA256_HEX])
{
	struct sha256_ctx ctx;
	unsigned char d[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}
