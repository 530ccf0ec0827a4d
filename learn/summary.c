/* learn/summary.c: what a capture's users did, summed up once it is read (see
 * pv_learn_summarize in learn/learn.h). Pure logic. */
#include "learn/learn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double pv_learn_think_levels[PV_LEARN_THINK_LEVELS] = {0,	 5,  10, 20, 30, 40,   50,   60, 70,
							     80, 90, 95, 98, 99, 99.5, 99.9, 100};

const char *const pv_learn_notify_ends[PV_LEARN_NOTIFY_ENDS] = {"changed", "enum_dir", "closed",
								"cancelled", "error"};

void pv_learn_notify_ended(struct pv_learn_notify *n, double held, uint32_t status)
{
	enum pv_learn_notify_end e = status == 0x00000000u   ? PV_LEARN_NOTIFY_CHANGED
				     : status == 0x0000010Cu ? PV_LEARN_NOTIFY_ENUM_DIR
				     : status == 0x0000010Bu ? PV_LEARN_NOTIFY_CLOSED
				     : status == 0xC0000120u ? PV_LEARN_NOTIFY_CANCELLED
							     : PV_LEARN_NOTIFY_ERROR;

	n->ended[e]++;
	pv_learn_hist_add(&n->held, held);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median and p95 of v (n of them, sorted here) into out[2]. */
static void med_p95(double *v, size_t n, double out[2])
{
	out[0] = out[1] = 0;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	out[0] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	out[1] = v[(size_t)((double)(n - 1) * 0.95 + 0.5)];
}

enum what { REQUESTS, LOGONS, LISTINGS, NOTIFIES };

/* Each user's count of what an hour of its own (its first request to its last; the capture's
 * length where no user was seen longer than a moment), the median and the p95 over the users
 * seen longer than a moment, into out; v has room for every user. */
static void rates(const struct pv_learn_counts *c, double *v, enum what w, double out[2])
{
	const struct pv_learn_users *us = &c->users;
	double whole = (c->t1 - c->t0) / 3600;
	size_t n = 0;
	bool spans = false;

	for (size_t i = 0; i < us->n && !spans; i++)
		spans = us->u[i].last > us->u[i].first;
	for (size_t i = 0; i < us->n; i++) {
		const struct pv_learn_user *u = &us->u[i];
		double h = spans ? (u->last - u->first) / 3600 : whole;
		uint64_t x = w == REQUESTS   ? u->requests
			     : w == LOGONS   ? u->logons
			     : w == LISTINGS ? u->listings
					     : u->notifies;

		if (h > 0)
			v[n++] = (double)x / h;
	}
	if (n)
		med_p95(v, n, out);
}

static int by_share(const void *a, const void *b)
{
	double x = ((const struct pv_learn_hole *)a)->share,
	       y = ((const struct pv_learn_hole *)b)->share;

	return (x > y) - (x < y);
}

/* The levels left to l, each halfway between the two whose times are the furthest apart (of
 * a factor PV_LEARN_REFINE or more, not a hole's two points, not from 0 s): where the time
 * rises the fastest, log-linear draws between two levels are the furthest off (smbclient's
 * think times, 841 us at 60% and 2.1 ms at 70%, most of those between under 1 ms). */
static void refine(const struct pv_learn_hist *h, struct pv_learn_levels *l)
{
	while (l->n < PV_LEARN_LEVELS) {
		unsigned at = 0;
		double most = log(PV_LEARN_REFINE), lv, q;

		for (unsigned i = 1; i < l->n; i++)
			if (l->level[i] - l->level[i - 1] >= 0.01 && l->q[i - 1] > 0 &&
			    log(l->q[i] / l->q[i - 1]) > most) {
				most = log(l->q[i] / l->q[i - 1]);
				at = i;
			}
		if (!at)
			return;
		lv = floor((l->level[at - 1] + l->level[at]) / 2 * 1e4) / 1e4;
		q = pv_learn_hist_quantile(h, lv / 100);
		if (!(lv > l->level[at - 1]) || q < l->q[at - 1] || q > l->q[at])
			return;
		memmove(&l->level[at + 1], &l->level[at], (l->n - at) * sizeof(l->level[0]));
		memmove(&l->q[at + 1], &l->q[at], (l->n - at) * sizeof(l->q[0]));
		l->level[at] = lv;
		l->q[at] = q;
		l->n++;
	}
}

/* A time's median and p95, and its quantiles (struct pv_learn_levels), from h (left as they
 * are when h holds nothing). */
static void times_of(const struct pv_learn_hist *h, double mp[2], struct pv_learn_levels *l)
{
	struct pv_learn_hole holes[PV_LEARN_HOLES];
	double lv[PV_LEARN_LEVELS], v[PV_LEARN_LEVELS];
	size_t k, n = 0;

	if (!h->n)
		return;
	mp[0] = pv_learn_hist_quantile(h, 0.5);
	mp[1] = pv_learn_hist_quantile(h, 0.95);
	k = pv_learn_hist_holes(h, PV_LEARN_HOLE_BINS, holes, PV_LEARN_HOLES);
	qsort(holes, k, sizeof(holes[0]), by_share);
	for (size_t i = 0; i < k; i++) {
		double at = floor(holes[i].share * 1e6) / 1e4;

		if (at + 1e-3 >= 100)
			continue;
		lv[n] = at;
		v[n++] = holes[i].lo;
		lv[n] = at + 1e-3;
		v[n++] = holes[i].hi;
	}
	/* the fixed levels and the holes' points, by level */
	l->n = 0;
	for (size_t i = 0, j = 0; i < PV_LEARN_THINK_LEVELS || j < n;) {
		bool fixed =
			j >= n || (i < PV_LEARN_THINK_LEVELS && pv_learn_think_levels[i] <= lv[j]);
		double at = fixed ? pv_learn_think_levels[i] : lv[j];
		double q = fixed ? pv_learn_hist_quantile(h, at / 100) : v[j];

		if (fixed)
			i++;
		else
			j++;
		if (l->n && (!(at > l->level[l->n - 1]) || q < l->q[l->n - 1]))
			continue;
		l->level[l->n] = at;
		l->q[l->n++] = q;
	}
	if (!(l->q[l->n - 1] > 0)) { /* every time under 1 us: none a replay can wait */
		l->n = 0;
		return;
	}
	refine(h, l);
}

void pv_learn_times(struct pv_learn_counts *c)
{
	times_of(&c->act_within, c->within, &c->within_q);
	for (int i = 0; i < PV_SMB_TRACE_NCMD; i++)
		times_of(&c->act_within_after[i], c->within_after[i], &c->within_after_q[i]);
	times_of(&c->act_client, c->client, &c->client_q);
	times_of(&c->think_gaps, c->think, &c->think_q);
}

void pv_learn_summarize(struct pv_learn_counts *c, double gap)
{
	struct pv_learn_users *us = &c->users;
	double hours = (c->t1 - c->t0) / 3600, *v;
	uint64_t reqs = 0;

	for (size_t i = 0; i < us->n; i++) {
		pv_learn_hist_merge(&c->req_gaps, &us->u[i].gaps);
		reqs += us->u[i].requests;
	}
	c->gap_learned = !(gap > 0);
	c->activity_gap = c->gap_learned ? pv_learn_hist_split(&c->req_gaps) : gap;
	if (c->has_kinds) { /* counted exactly, as they ended */
		c->activities = c->kinds.other;
		for (size_t i = 0; i < c->kinds.n; i++)
			c->activities += c->kinds.k[i].count;
	} else { /* from each user's gaps over the activity gap (by bins) */
		for (size_t i = 0; i < us->n; i++)
			if (us->u[i].requests)
				c->activities += 1 + (c->activity_gap > 0
							      ? pv_learn_hist_above(&us->u[i].gaps,
										    c->activity_gap)
							      : 0);
	}
	c->activity_requests = c->activities ? (double)reqs / (double)c->activities : 0;
	if (c->req_gaps.n) {
		double n = (double)c->req_gaps.n;
		double above = c->activity_gap > 0
				       ? (double)pv_learn_hist_above(&c->req_gaps, c->activity_gap)
				       : 0;

		if (n > above) {
			c->within[0] = pv_learn_hist_quantile(&c->req_gaps, 0.5 * (n - above) / n);
			c->within[1] = pv_learn_hist_quantile(&c->req_gaps, 0.95 * (n - above) / n);
		}
		if (c->client_delays.n) {
			double dn = (double)c->client_delays.n,
			       da = c->activity_gap > 0
					    ? (double)pv_learn_hist_above(&c->client_delays,
									  c->activity_gap)
					    : 0;

			if (dn > da) {
				c->client[0] = pv_learn_hist_quantile(&c->client_delays,
								      0.5 * (dn - da) / dn);
				c->client[1] = pv_learn_hist_quantile(&c->client_delays,
								      0.95 * (dn - da) / dn);
			}
		}
		if (above > 0) {
			c->think[0] =
				pv_learn_hist_quantile(&c->req_gaps, (n - above + 0.5 * above) / n);
			c->think[1] = pv_learn_hist_quantile(&c->req_gaps,
							     (n - above + 0.95 * above) / n);
		}
	}
	pv_learn_times(c);
	if (c->has_kinds)
		(void)pv_learn_kinds_settle(&c->kinds); /* out of memory: left unsettled, and the
							   workload's writer says so */
	/* a user's hours: those it was seen at work, from its first request to its last, not the
	 * capture's (a capture begun before a user's first request, or a user gone before its
	 * end, would say a slower user than it was); a user seen at one moment alone is left out
	 * of the rates, and with none seen longer, the capture's length is every user's */
	c->user_hours = 0;
	for (size_t i = 0; i < us->n; i++)
		c->user_hours += (us->u[i].last - us->u[i].first) / 3600;
	if (!(c->user_hours > 0))
		c->user_hours = hours * (double)us->n;
	if (!(hours > 0) || !us->n || !(v = malloc(us->n * sizeof(*v))))
		return;
	rates(c, v, REQUESTS, c->req_per_user_hour);
	rates(c, v, LOGONS, c->logons_per_user_hour);
	c->relogons_per_user_hour = 0;
	if ((c->relogon_users = pv_learn_users_relogon_rates(us, v))) {
		double mp[2];

		med_p95(v, c->relogon_users, mp);
		c->relogons_per_user_hour = mp[0];
	}
	rates(c, v, LISTINGS, c->listings_per_user_hour);
	rates(c, v, NOTIFIES, c->notifies_per_user_hour);
	free(v);
}
