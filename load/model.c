/* load/model.c: the scenario table and each user's schedule (see model.h). */
#include "load/model.h"

#include "util/digest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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

void pv_load_sched_init(struct pv_load_sched *s, const struct pv_playbook_workload *c,
			const char *client, unsigned user)
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
	s->mean = 3600.0 / (c->rate ? c->rate : PV_PLAYBOOK_WORKLOAD_RATE);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		sum += c->kind[k].weight > 0 ? c->kind[k].weight : 0;
		s->cum[k] = sum;
	}
}

void pv_load_next(struct pv_load_sched *s, double *gap, enum pv_playbook_workload_kind *kind)
{
	double x;
	int k;

	/* inversion: 1 - u is in (0, 1], so the logarithm is finite and the gap >= 0 */
	*gap = -s->mean * log1p(-pv_load_rng_unit(&s->rng));
	x = pv_load_rng_unit(&s->rng) * s->cum[PV_PLAYBOOK_WORKLOAD_KINDS - 1];
	for (k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS && !(x < s->cum[k]); k++)
		;
	/* x * total rounded up to total: the last kind with a weight */
	while (k == PV_PLAYBOOK_WORKLOAD_KINDS || (k > 0 && s->cum[k] == s->cum[k - 1]))
		k--;
	*kind = (enum pv_playbook_workload_kind)k;
}
