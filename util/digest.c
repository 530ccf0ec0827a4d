/* util/digest.c: message digests and MACs through nettle (see digest.h). Each hash and HMAC
 * goes through one helper below, so that every context is wiped in one place once its digest
 * is out (digest.h says why). */
#include "util/digest.h"

#include <stdio.h>
#include <string.h>

#include <nettle/cmac.h>
#include <nettle/hmac.h>
#include <nettle/macros.h>
#include <nettle/md4.h>
#include <nettle/md5.h>
#include <nettle/nettle-meta.h>
#include <nettle/sha2.h>

/* Room for the context of any hash used here. */
union hash_ctx {
	struct md4_ctx md4;
	struct md5_ctx md5;
	struct sha256_ctx sha256;
};

static void hash(const struct nettle_hash *h, const void *data, size_t len, uint8_t *out)
{
	union hash_ctx ctx;

	h->init(&ctx);
	h->update(&ctx, len, data);
	h->digest(&ctx, h->digest_size, out);
	explicit_bzero(&ctx, sizeof(ctx));
}

static void hmac(const struct nettle_hash *h, const void *key, size_t klen, const void *data,
		 size_t len, uint8_t *out)
{
	union hash_ctx ctx[3]; /* outer, inner, state: each holds state derived from the key */

	hmac_set_key(&ctx[0], &ctx[1], &ctx[2], h, klen, key);
	hmac_update(&ctx[2], h, len, data);
	hmac_digest(&ctx[0], &ctx[1], &ctx[2], h, h->digest_size, out);
	explicit_bzero(ctx, sizeof(ctx));
}

void pv_sha256_hex(const void *data, size_t len, char out[PV_SHA256_HEX])
{
	uint8_t d[SHA256_DIGEST_SIZE];

	hash(&nettle_sha256, data, len, d);
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void pv_md4(const void *data, size_t len, uint8_t out[16])
{
	hash(&nettle_md4, data, len, out);
}

void pv_md5(const void *data, size_t len, uint8_t out[16])
{
	hash(&nettle_md5, data, len, out);
}

void pv_hmac_md5(const void *key, size_t klen, const void *data, size_t len, uint8_t out[16])
{
	hmac(&nettle_md5, key, klen, data, len, out);
}

void pv_hmac_sha256(const void *key, size_t klen, const void *data, size_t len, uint8_t out[32])
{
	hmac(&nettle_sha256, key, klen, data, len, out);
}

void pv_aes_cmac128(const uint8_t key[16], const void *data, size_t len, uint8_t out[16])
{
	struct cmac_aes128_ctx ctx; /* the expanded AES key and the subkeys K1, K2 */

	cmac_aes128_set_key(&ctx, key);
	cmac_aes128_update(&ctx, len, data);
	cmac_aes128_digest(&ctx, CMAC128_DIGEST_SIZE, out);
	explicit_bzero(&ctx, sizeof(ctx));
}

void pv_kdf_hmac_sha256(const void *key, size_t klen, const void *label, size_t llen,
			const void *context, size_t clen, uint8_t *out, size_t olen)
{
	struct hmac_sha256_ctx ctx; /* state derived from the key */
	uint8_t k[SHA256_DIGEST_SIZE], be[4];
	uint32_t bits = (uint32_t)(olen * 8);

	for (uint32_t i = 1; olen > 0; i++) {
		size_t n = olen < sizeof(k) ? olen : sizeof(k);

		hmac_sha256_set_key(&ctx, klen, key);
		WRITE_UINT32(be, i);
		hmac_sha256_update(&ctx, sizeof(be), be);
		hmac_sha256_update(&ctx, llen, label);
		hmac_sha256_update(&ctx, 1, (const uint8_t *)"");
		hmac_sha256_update(&ctx, clen, context);
		WRITE_UINT32(be, bits);
		hmac_sha256_update(&ctx, sizeof(be), be);
		hmac_sha256_digest(&ctx, sizeof(k), k);
		memcpy(out, k, n);
		out += n;
		olen -= n;
	}
	explicit_bzero(&ctx, sizeof(ctx));
	explicit_bzero(k, sizeof(k));
}
