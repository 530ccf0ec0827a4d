/* util/digest.c: message digests, MACs and AEAD ciphers through nettle (see digest.h). Each
 * hash and HMAC goes through one helper below, so that every context is wiped in one place once
 * its digest is out (digest.h says why); an AEAD context is wiped by its free. */
#include "util/digest.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/ccm.h>
#include <nettle/cmac.h>
#include <nettle/gcm.h>
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
	struct sha512_ctx sha512;
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

void pv_sha512_2(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[64])
{
	struct sha512_ctx ctx;

	sha512_init(&ctx);
	sha512_update(&ctx, alen, a);
	sha512_update(&ctx, blen, b);
	sha512_digest(&ctx, SHA512_DIGEST_SIZE, out);
	explicit_bzero(&ctx, sizeof(ctx));
}

struct pv_aead {
	enum pv_aead_alg alg;
	union {
		struct ccm_aes128_ctx ccm128;
		struct ccm_aes256_ctx ccm256;
		struct gcm_aes128_ctx gcm128;
		struct gcm_aes256_ctx gcm256;
	} u;
};

struct pv_aead *pv_aead_new(enum pv_aead_alg alg, const uint8_t *key)
{
	struct pv_aead *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->alg = alg;
	switch (alg) {
	case PV_AES128_CCM:
		ccm_aes128_set_key(&a->u.ccm128, key);
		break;
	case PV_AES256_CCM:
		ccm_aes256_set_key(&a->u.ccm256, key);
		break;
	case PV_AES128_GCM:
		gcm_aes128_set_key(&a->u.gcm128, key);
		break;
	case PV_AES256_GCM:
		gcm_aes256_set_key(&a->u.gcm256, key);
		break;
	}
	return a;
}

void pv_aead_free(struct pv_aead *a)
{
	if (!a)
		return;
	explicit_bzero(a, sizeof(*a));
	free(a);
}

/* Encrypt (or decrypt, when open) buf in place under a, the tag into tag. nettle's CCM and
 * GCM take dst == src (they run CTR mode; CCM MACs the clear text before encrypting it and
 * after decrypting it). */
static void aead(struct pv_aead *a, bool open, const uint8_t *nonce, size_t nlen, const void *aad,
		 size_t alen, uint8_t *buf, size_t len, uint8_t tag[16])
{
	switch (a->alg) {
	case PV_AES128_CCM:
		ccm_aes128_set_nonce(&a->u.ccm128, nlen, nonce, alen, len, 16);
		ccm_aes128_update(&a->u.ccm128, alen, aad);
		(open ? ccm_aes128_decrypt : ccm_aes128_encrypt)(&a->u.ccm128, len, buf, buf);
		ccm_aes128_digest(&a->u.ccm128, 16, tag);
		break;
	case PV_AES256_CCM:
		ccm_aes256_set_nonce(&a->u.ccm256, nlen, nonce, alen, len, 16);
		ccm_aes256_update(&a->u.ccm256, alen, aad);
		(open ? ccm_aes256_decrypt : ccm_aes256_encrypt)(&a->u.ccm256, len, buf, buf);
		ccm_aes256_digest(&a->u.ccm256, 16, tag);
		break;
	case PV_AES128_GCM:
		gcm_aes128_set_iv(&a->u.gcm128, nlen, nonce);
		gcm_aes128_update(&a->u.gcm128, alen, aad);
		(open ? gcm_aes128_decrypt : gcm_aes128_encrypt)(&a->u.gcm128, len, buf, buf);
		gcm_aes128_digest(&a->u.gcm128, 16, tag);
		break;
	case PV_AES256_GCM:
		gcm_aes256_set_iv(&a->u.gcm256, nlen, nonce);
		gcm_aes256_update(&a->u.gcm256, alen, aad);
		(open ? gcm_aes256_decrypt : gcm_aes256_encrypt)(&a->u.gcm256, len, buf, buf);
		gcm_aes256_digest(&a->u.gcm256, 16, tag);
		break;
	}
}

void pv_aead_seal(struct pv_aead *a, const uint8_t *nonce, size_t nlen, const void *aad,
		  size_t alen, uint8_t *buf, size_t len, uint8_t tag[16])
{
	aead(a, false, nonce, nlen, aad, alen, buf, len, tag);
}

int pv_aead_open(struct pv_aead *a, const uint8_t *nonce, size_t nlen, const void *aad, size_t alen,
		 uint8_t *buf, size_t len, const uint8_t tag[16])
{
	uint8_t want[16], diff = 0;

	aead(a, true, nonce, nlen, aad, alen, buf, len, want);
	for (int i = 0; i < 16; i++) /* no early exit: the time says nothing */
		diff |= (uint8_t)(want[i] ^ tag[i]);
	explicit_bzero(want, sizeof(want));
	return diff ? -1 : 0;
}
