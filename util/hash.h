/* util/hash.h: FNV-1a (Fowler, Noll and Vo; draft-eastlake-fnv), the one non-cryptographic
 * hash: the keys of hash tables (util/strset, learn/'s users, kinds and connections), a file's
 * lease key (load/client.c) and a user's share of a fileset's content (fileset/fileset.c,
 * whose bytes must be the same on every host and in every release). Not for what must resist
 * a chosen collision: digests are util/digest.h's. Pure logic; unit-tested in
 * tests/unit/check_util.c. */
#ifndef PV_UTIL_HASH_H
#define PV_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The 64-bit offset basis (the hash of nothing) and prime; the 32-bit offset basis. */
#define PV_HASH_FNV64_INIT  0xcbf29ce484222325ull
#define PV_HASH_FNV64_PRIME 0x100000001b3ull
#define PV_HASH_FNV32_INIT  0x811c9dc5u

/* 64-bit FNV-1a: h with the n bytes at p hashed in, one after the other. Start from
 * PV_HASH_FNV64_INIT (or a seed of the caller's) and pass the result on to hash several
 * pieces: hashing "bar" after "foo" gives the hash of "foobar". */
uint64_t pv_hash_fnv64(uint64_t h, const void *p, size_t n);
/* pv_hash_fnv64 of the n bytes at s with the ASCII letters A-Z taken as a-z (no other byte
 * changed, whatever the locale): names equal but for ASCII case hash alike, as AD compares
 * sAMAccountName. */
uint64_t pv_hash_fnv64_lower(uint64_t h, const char *s, size_t n);
/* 32-bit FNV-1a, as pv_hash_fnv64: start from PV_HASH_FNV32_INIT. */
uint32_t pv_hash_fnv32(uint32_t h, const void *p, size_t n);

#endif
