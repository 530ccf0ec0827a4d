/* util/hash.c: FNV-1a, 64 and 32 bits (see hash.h). */
#include "util/hash.h"

#define FNV32_PRIME 16777619u /* 2^24 + 2^8 + 0x93 */

uint64_t pv_hash_fnv64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * PV_HASH_FNV64_PRIME;
	return h;
}

uint64_t pv_hash_fnv64_lower(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		/* by hand, not tolower(): a locale could fold bytes above 127 too */
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + ('a' - 'A'));
		h = (h ^ c) * PV_HASH_FNV64_PRIME;
	}
	return h;
}

uint32_t pv_hash_fnv32(uint32_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * FNV32_PRIME;
	return h;
}
