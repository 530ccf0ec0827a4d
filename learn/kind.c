/* learn/kind.c: the kinds of activity (see learn/kind.h). */
#include "learn/kind.h"

#include "learn/namespace.h"
#include "playbooks/workload.h"
#include "smb/trace.h"
#include "util/hash.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_learn_kind_shape_add(struct pv_learn_kind_shape *s, uint16_t cmd)
{
	uint8_t c = cmd < 0x7f ? (uint8_t)cmd : 0x7f;

	if (s->cut) /* what comes after the cut is not in the shape */
		return;
	if (s->n && (s->step[s->n - 1] & 0x7f) == c) {
		s->step[s->n - 1] |= 0x80; /* a repeat: folded */
		if (s->reqs[s->n - 1] < UINT32_MAX)
			s->reqs[s->n - 1]++;
		return;
	}
	if (s->n == PV_LEARN_KIND_STEPS) {
		s->cut = true;
		return;
	}
	s->reqs[s->n] = 1;
	s->depth[s->n] = PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES(c & PV_PLAYBOOK_WORKLOAD_LEARNED_CMD)
				 ? PV_LEARN_NS_UNKNOWN
				 : 0;
	s->step[s->n++] = c;
}

void pv_learn_kind_shape_depth(struct pv_learn_kind_shape *s, int depth)
{
	if (s->n && !s->cut && s->reqs[s->n - 1] == 1 &&
	    PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES(s->step[s->n - 1] &
					       PV_PLAYBOOK_WORKLOAD_LEARNED_CMD))
		s->depth[s->n - 1] = (int8_t)depth;
}

void pv_learn_kind_shape_refused(struct pv_learn_kind_shape *s)
{
	if (s->n && !s->cut &&
	    PV_PLAYBOOK_WORKLOAD_LEARNED_OPENS(s->step[s->n - 1] &
					       PV_PLAYBOOK_WORKLOAD_LEARNED_CMD) &&
	    s->reqs[s->n - 1] == 1)
		s->step[s->n - 1] = PV_PLAYBOOK_WORKLOAD_LEARNED_REFUSED;
}

/* The commands (a repeat or not: READ and READ+ are one kind, its counts say how often) and
 * their depths, then the length and the cut as one more FNV-1a round on a whole word (a shape
 * cut short hashes apart from the same steps ended there). */
static uint64_t shape_hash(const struct pv_learn_kind_shape *s)
{
	uint8_t cmds[PV_LEARN_KIND_STEPS];
	uint64_t h;

	for (unsigned i = 0; i < s->n; i++)
		cmds[i] = s->step[i] & 0x7f;
	h = pv_hash_fnv64(PV_HASH_FNV64_INIT, cmds, s->n);
	h = pv_hash_fnv64(h, s->depth, s->n);
	return (h ^ s->n ^ (uint64_t)s->cut << 8) * PV_HASH_FNV64_PRIME;
}

static bool same(const struct pv_learn_kind_shape *a, const struct pv_learn_kind_shape *b)
{
	if (a->n != b->n || a->cut != b->cut)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if ((a->step[i] ^ b->step[i]) & 0x7f || a->depth[i] != b->depth[i])
			return false;
	return true;
}

void pv_learn_kinds_init(struct pv_learn_kinds *t)
{
	memset(t, 0, sizeof(*t));
	pv_learn_table_init(&t->index, PV_LEARN_KINDS_MAX);
}

long pv_learn_kinds_add(struct pv_learn_kinds *t, const struct pv_learn_kind_shape *s,
			uint64_t requests, double seconds)
{
	uint64_t h = shape_hash(s), k;
	struct pv_learn_table_entry *e;
	struct pv_learn_kind *kd;

	if (!s->n)
		return -1;
	/* shapes that hash alike are told apart by a probe along the keys h, h+1, ... */
	for (k = h; (e = pv_learn_table_get(&t->index, k)); k++)
		if (same(&t->k[e->v].shape, s)) {
			kd = &t->k[e->v];
			goto found;
		}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 32;
		struct pv_learn_kind *n =
			ncap <= PV_LEARN_KINDS_MAX ? realloc(t->k, ncap * sizeof(*n)) : NULL;

		if (!n)
			goto other;
		t->k = n;
		t->cap = ncap;
	}
	if (!pv_learn_table_put(&t->index, k, 0, (uint32_t)t->n))
		goto other;
	kd = &t->k[t->n++];
	memset(kd, 0, sizeof(*kd));
	kd->shape = *s;
	memset(kd->shape.reqs, 0, sizeof(kd->shape.reqs)); /* an activity's, not the kind's */
found:
	kd->count++;
	kd->requests += requests;
	for (unsigned i = 0; i < s->n; i++) {
		kd->step_requests[i] += s->reqs[i];
		kd->shape.step[i] |= s->step[i] & 0x80; /* repeated by one of them: READ+ */
	}
	kd->seconds += seconds;
	return kd - t->k;
other:
	t->other++;
	t->other_requests += requests;
	return -1;
}

static int by_count(const void *a, const void *b, void *arg)
{
	const struct pv_learn_kinds *t = arg;
	const struct pv_learn_kind *x = &t->k[*(const size_t *)a], *y = &t->k[*(const size_t *)b];
	int d;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->shape.n != y->shape.n)
		return x->shape.n < y->shape.n ? -1 : 1;
	d = memcmp(x->shape.step, y->shape.step, x->shape.n);
	return d ? d : memcmp(x->shape.depth, y->shape.depth, x->shape.n);
}

void pv_learn_kinds_order(const struct pv_learn_kinds *t, size_t *order)
{
	for (size_t i = 0; i < t->n; i++)
		order[i] = i;
	qsort_r(order, t->n, sizeof(*order), by_count, (void *)t);
}

/* Kind kd's share of its requests each command of cmd[0..ncmd) took, into p (the steps kept:
 * a cut kind's requests past them are not known); its requests an activity into *len. */
static void shares(const struct pv_learn_kind *kd, const uint8_t *slot, unsigned ncmd, double *p,
		   double *len)
{
	double sum = 0;

	memset(p, 0, ncmd * sizeof(*p));
	for (unsigned i = 0; i < kd->shape.n; i++) {
		p[slot[kd->shape.step[i] & 0x7f]] += (double)kd->step_requests[i];
		sum += (double)kd->step_requests[i];
	}
	for (unsigned c = 0; c < ncmd && sum > 0; c++)
		p[c] /= sum;
	*len = kd->count ? (double)kd->requests / (double)kd->count : 0;
}

double pv_learn_kinds_nearest(const struct pv_learn_kinds *t, const size_t *order, size_t kept,
			      size_t *near)
{
	uint8_t slot[128] = {0}, seen[128] = {0};
	unsigned ncmd = 0;
	double *p = NULL, *len = NULL, moved = 0, all = 0;

	if (kept >= t->n || !kept) {
		for (size_t i = kept; i < t->n; i++)
			near[i] = 0;
		return 0;
	}
	/* the commands the kinds hold, each a slot of its own */
	for (size_t i = 0; i < t->n; i++)
		for (unsigned j = 0; j < t->k[i].shape.n; j++)
			if (!seen[t->k[i].shape.step[j] & 0x7f]++)
				slot[t->k[i].shape.step[j] & 0x7f] = (uint8_t)ncmd++;
	if (!(p = malloc((kept + 1) * ncmd * sizeof(*p))) ||
	    !(len = malloc((kept + 1) * sizeof(*len)))) {
		free(p);
		return -1;
	}
	for (size_t k = 0; k < kept; k++)
		shares(&t->k[order[k]], slot, ncmd, p + k * ncmd, &len[k]);
	for (size_t i = kept; i < t->n; i++) {
		const struct pv_learn_kind *kd = &t->k[order[i]];
		double *q = p + kept * ncmd, best = HUGE_VAL, best_l1 = 0;

		shares(kd, slot, ncmd, q, &len[kept]);
		near[i] = 0;
		for (size_t k = 0; k < kept; k++) {
			double l1 = 0, d;

			for (unsigned c = 0; c < ncmd; c++)
				l1 += fabs(q[c] - p[k * ncmd + c]);
			d = l1 +
			    (len[k] > 0 && len[kept] > 0
				     ? PV_LEARN_KIND_NEAR_LENGTH * fabs(log(len[kept] / len[k]))
				     : 0);
			if (d < best) {
				best = d;
				best_l1 = l1;
				near[i] = k;
			}
		}
		moved += (double)kd->requests * best_l1 / 2;
	}
	for (size_t i = 0; i < t->n; i++)
		all += (double)t->k[i].requests;
	free(p);
	free(len);
	return all > 0 ? moved / all : 0;
}

static void written_release(struct pv_learn_kinds_written *w)
{
	free(w->order);
	free(w->near);
	memset(w, 0, sizeof(*w));
}

int pv_learn_kinds_settle(struct pv_learn_kinds *t)
{
	struct pv_learn_kinds_written *w = &t->w;

	written_release(w);
	if (!t->n)
		return 0;
	if (!(w->order = malloc(t->n * sizeof(*w->order))) ||
	    !(w->near = malloc(t->n * sizeof(*w->near))))
		goto oom;
	pv_learn_kinds_order(t, w->order);
	w->kept = t->n < PV_LEARN_KINDS_WRITTEN ? t->n : PV_LEARN_KINDS_WRITTEN;
	if ((w->moved = pv_learn_kinds_nearest(t, w->order, w->kept, w->near)) < 0)
		goto oom;
	for (size_t i = 0; i < t->n; i++) {
		w->requests += t->k[i].requests;
		if (i >= w->kept) {
			w->past_activities += t->k[w->order[i]].count;
			w->past_requests += t->k[w->order[i]].requests;
		}
	}
	return 0;
oom:
	written_release(w);
	return -1;
}

void pv_learn_kind_name(const struct pv_learn_kind_shape *s, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < s->n && o < len; i++)
		o += (size_t)snprintf(
			out + o, len - o, "%s%s%s", i ? " " : "",
			pv_playbook_workload_learned_command(s->step[i] & 0x7f)
				? pv_playbook_workload_learned_command(s->step[i] & 0x7f)
				: pv_smb_trace_cmd_name(s->step[i] & 0x7f),
			s->step[i] & 0x80 ? "+" : "");
	if (s->cut && o < len)
		snprintf(out + o, len - o, " ...");
}

unsigned pv_learn_kind_depths(const struct pv_learn_kind_shape *s, int *out)
{
	unsigned n = 0;

	for (unsigned j = 0; j < s->n; j++)
		if (PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES(s->step[j] &
						       PV_PLAYBOOK_WORKLOAD_LEARNED_CMD))
			out[n++] = s->depth[j] < 0 ? PV_PLAYBOOK_WORKLOAD_OUT
				   : s->depth[j] < PV_PLAYBOOK_WORKLOAD_DEEP
					   ? s->depth[j]
					   : PV_PLAYBOOK_WORKLOAD_DEEP;
	return n;
}

void pv_learn_kinds_release(struct pv_learn_kinds *t)
{
	free(t->k);
	pv_learn_table_release(&t->index);
	written_release(&t->w);
	memset(t, 0, sizeof(*t));
}
