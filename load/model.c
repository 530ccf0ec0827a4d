/* load/model.c: the scenario table and each user's schedule (see model.h). */
#include "load/model.h"

#include "util/digest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const pv_load_names[PV_LOAD_KINDS + 1] = {
	[PV_LOAD_UPLOAD] = "upload",
	[PV_LOAD_BROWSE] = "browse",
	[PV_LOAD_OPEN_READ] = "open_read",
	[PV_LOAD_COPY_IN] = "copy_in",
	[PV_LOAD_EDIT_SAVE] = "edit_save",
	[PV_LOAD_OPEN_CLOSE] = "open_close",
	[PV_LOAD_REWRITE] = "rewrite",
	[PV_LOAD_DELETE_NEW] = "delete_new",
	[PV_LOAD_LIST_NEW] = "list_new",
	[PV_LOAD_RENAME] = "rename",
	[PV_LOAD_MKDIR] = "mkdir",
	[PV_LOAD_READ_FOLDER] = "read_folder",
	[PV_LOAD_KINDS] = NULL,
};

const char *const pv_load_encryptions[] = {
	[PV_LOAD_ENCRYPT_AUTO] = "auto",
	[PV_LOAD_ENCRYPT_ON] = "on",
	[PV_LOAD_ENCRYPT_AES128_CCM] = "aes-128-ccm",
	[PV_LOAD_ENCRYPT_AES128_GCM] = "aes-128-gcm",
	[PV_LOAD_ENCRYPT_AES256_CCM] = "aes-256-ccm",
	[PV_LOAD_ENCRYPT_AES256_GCM] = "aes-256-gcm",
	NULL,
};

/* docs/load.md's table: FSCT's weights (they sum to 331) and our latency limits */
static const struct pv_load_scenario defaults[PV_LOAD_KINDS] = {
	[PV_LOAD_UPLOAD] = {15, 2},  [PV_LOAD_BROWSE] = {150, 1},   [PV_LOAD_OPEN_READ] = {40, 2},
	[PV_LOAD_COPY_IN] = {7, 3},  [PV_LOAD_EDIT_SAVE] = {15, 3}, [PV_LOAD_OPEN_CLOSE] = {50, 1},
	[PV_LOAD_REWRITE] = {15, 2}, [PV_LOAD_DELETE_NEW] = {5, 1}, [PV_LOAD_LIST_NEW] = {15, 1},
	[PV_LOAD_RENAME] = {7, 1},   [PV_LOAD_MKDIR] = {7, 2},	    [PV_LOAD_READ_FOLDER] = {5, 5},
};

void pv_load_defaults(struct pv_load_config *c)
{
	memset(c, 0, sizeof(*c));
	c->rate = PV_LOAD_RATE;
	memcpy(c->kind, defaults, sizeof(defaults));
	c->late = 1;
	c->overload = 1;
	c->interval = 1;
	c->seed = 1;
}

int pv_load_kind_of(const char *name)
{
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		if (!strcmp(pv_load_names[k], name))
			return k;
	return -1;
}

/* ---- xoshiro256** 1.0, as published at https://prng.di.unimi.it/xoshiro256starstar.c ---- */

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t pv_load_rng_next(struct pv_load_rng *r)
{
	uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

double pv_load_rng_unit(struct pv_load_rng *r)
{
	return (double)(pv_load_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- schedules ---- */

void pv_load_sched_init(struct pv_load_sched *s, const struct pv_load_config *c, const char *client,
			unsigned user)
{
	uint8_t key[8], mac[32];
	char msg[320];
	int len;
	double sum = 0;

	/* the seed as the key, "<client>\0<user>" as the message: a keyed hash of the user's
	 * name gives states far apart for names that differ by a character */
	for (int i = 0; i < 8; i++)
		key[i] = (uint8_t)(c->seed >> (8 * i));
	len = snprintf(msg, sizeof(msg), "%.255s%c%u", client ? client : "", '\0', user);
	pv_hmac_sha256(key, sizeof(key), msg, (size_t)len, mac);
	memset(s, 0, sizeof(*s));
	for (int w = 0; w < 4; w++)
		for (int i = 0; i < 8; i++)
			s->rng.s[w] |= (uint64_t)mac[8 * w + i] << (8 * i);
	if (!(s->rng.s[0] | s->rng.s[1] | s->rng.s[2] | s->rng.s[3]))
		s->rng.s[0] = 1; /* the one state xoshiro cannot leave */
	s->mean = 3600.0 / (c->rate ? c->rate : PV_LOAD_RATE);
	for (int k = 0; k < PV_LOAD_KINDS; k++) {
		sum += c->kind[k].weight > 0 ? c->kind[k].weight : 0;
		s->cum[k] = sum;
	}
}

void pv_load_next(struct pv_load_sched *s, double *gap, enum pv_load_kind *kind)
{
	double x;
	int k;

	/* inversion: 1 - u is in (0, 1], so the logarithm is finite and the gap >= 0 */
	*gap = -s->mean * log1p(-pv_load_rng_unit(&s->rng));
	x = pv_load_rng_unit(&s->rng) * s->cum[PV_LOAD_KINDS - 1];
	for (k = 0; k < PV_LOAD_KINDS && !(x < s->cum[k]); k++)
		;
	/* x * total rounded up to total: the last kind with a weight */
	while (k == PV_LOAD_KINDS || (k > 0 && s->cum[k] == s->cum[k - 1]))
		k--;
	*kind = (enum pv_load_kind)k;
}
