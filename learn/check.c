/* learn/check.c: a replay's capture against the original's (see learn/check.h). */
#include "learn/check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "learn/workload.h"
#include "util/stats.h"

/* The mix's parts: a command, CREATE by disposition, IOCTL by control code, QUERY_DIRECTORY
 * by its pattern's shape. */
#define PARTS 64
struct part {
	unsigned cmd;
	long sub; /* the disposition or the control code; -1: the command whole; -2: the rest */
	uint64_t n[2];
};

struct parts {
	unsigned n;
	struct part p[PARTS];
	uint64_t total[2];
};

static const char *const listings[3] = {"*", "PATTERN", "NAME"};

const char *const pv_learn_dispositions[6] = {"SUPERSEDE", "OPEN",	"CREATE",
					      "OPEN_IF",   "OVERWRITE", "OVERWRITE_IF"};

bool pv_learn_file_work(unsigned cmd)
{
	return cmd < PV_SMB_TRACE_NCMD && cmd > 4 && cmd != 12 && cmd != 13;
}

static void part_add(struct parts *ps, unsigned cmd, long sub, int side, uint64_t n)
{
	unsigned i;

	if (!n)
		return;
	for (i = 0; i < ps->n; i++)
		if (ps->p[i].cmd == cmd && ps->p[i].sub == sub)
			break;
	if (i == ps->n) {
		/* cannot be: 19 commands, 7 dispositions, 18 codes, 4 listings */
		if (ps->n == PARTS)
			return;
		ps->p[ps->n++] = (struct part){cmd, sub, {0, 0}};
	}
	ps->p[i].n[side] += n;
	ps->total[side] += n;
}

static void parts_of(struct parts *ps, const struct pv_learn_counts *c, int side)
{
	for (unsigned cmd = 0; cmd < PV_SMB_TRACE_NCMD; cmd++) {
		uint64_t left = c->req[cmd];

		if (!pv_learn_file_work(cmd))
			continue;
		if (cmd == 5)
			for (long d = 0; d < 6; d++) {
				part_add(ps, cmd, d, side, c->disposition[d]);
				left -= c->disposition[d] < left ? c->disposition[d] : left;
			}
		if (cmd == 11) {
			for (unsigned i = 0; i < PV_LEARN_IOCTLS; i++) {
				part_add(ps, cmd, c->ioctl_code[i], side, c->ioctl_req[i]);
				left -= c->ioctl_req[i] < left ? c->ioctl_req[i] : left;
			}
		}
		if (cmd == 14)
			for (long k = 0; k < 3; k++) {
				part_add(ps, cmd, k, side, c->listing[k]);
				left -= c->listing[k] < left ? c->listing[k] : left;
			}
		part_add(ps, cmd, cmd == 5 || cmd == 11 || cmd == 14 ? -2 : -1, side, left);
	}
}

static struct pv_learn_check_row *row(struct pv_learn_check *o, const char *group, const char *unit,
				      double cap, double rep, bool pass)
{
	struct pv_learn_check_row *r;

	if (o->n == PV_LEARN_CHECK_ROWS)
		return NULL;
	r = &o->row[o->n++];
	*r = (struct pv_learn_check_row){
		.group = group, .unit = unit, .capture = cap, .replay = rep, .pass = pass};
	o->failed += !pass;
	return r;
}

#define SAY(r, ...)  (r ? (void)snprintf(r->what, sizeof(r->what), __VA_ARGS__) : (void)0)
#define RULE(r, ...) (r ? (void)snprintf(r->rule, sizeof(r->rule), __VA_ARGS__) : (void)0)

/* within frac of cap (both 0: kept) */
static bool near(double cap, double rep, double frac)
{
	if (cap == 0)
		return rep == 0;
	return fabs(rep / cap - 1) <= frac + 1e-9;
}

static void mix(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		struct pv_learn_check *o)
{
	struct parts ps = {0};
	double tv = 0;

	parts_of(&ps, cap, 0);
	parts_of(&ps, rep, 1);
	for (unsigned i = 0; i < ps.n; i++) {
		const struct part *p = &ps.p[i];
		double c = pv_learn_pct(p->n[0], ps.total[0]),
		       r = pv_learn_pct(p->n[1], ps.total[1]);
		struct pv_learn_check_row *w;
		const char *cmd = pv_smb_trace_cmd_name((uint16_t)p->cmd);

		tv += fabs(c - r) / 200;
		if (c <= 1 && r <= 1)
			continue;
		w = row(o, "mix", "%", c, r, fabs(c - r) <= 3);
		RULE(w, "within 3 points");
		if (p->sub == -1)
			SAY(w, "%s", cmd);
		else if (p->sub == -2)
			SAY(w, "%s (others)", cmd);
		else if (p->cmd == 5)
			SAY(w, "%s (%s)", cmd, pv_learn_dispositions[p->sub]);
		else if (p->cmd == 14)
			SAY(w, "%s (%s)", cmd, listings[p->sub]);
		else
			SAY(w, "%s (0x%lx)", cmd, (unsigned long)p->sub);
	}
	struct pv_learn_check_row *w = row(o, "mix", "", 0, tv, tv <= 0.05 && ps.total[1] > 0);

	SAY(w, "total variation");
	RULE(w, "at most 0.05");
}

/* Whether the replay's logons again differ from the capture's by chance alone, where the
 * capture holds too few to tell 10% (its count's 95% Poisson interval wider than that): the
 * two counts over their users' hours at work, the capture's a binomial share of both
 * (at its share of the hours) with a two-sided p of 0.05 or more. Its count into *kc. */
static bool relogons_by_chance(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
			       uint64_t *kc)
{
	double hc, hr, lo, hi, q, p;
	uint64_t kr, n;

	*kc = pv_learn_users_relogons(&cap->users, &hc);
	kr = pv_learn_users_relogons(&rep->users, &hr);
	if (!(hc > 0) || !(hr > 0))
		return false;
	pv_stat_poisson_ci(*kc, 0.05, &lo, &hi);
	if (*kc && hi - (double)*kc <= 0.10 * (double)*kc) /* enough to tell 10% */
		return false;
	n = *kc + kr;
	q = hc / (hc + hr);
	p = pv_stat_binom_cdf(*kc, n, q);
	if (*kc) {
		double up = 1 - pv_stat_binom_cdf(*kc - 1, n, q);

		p = up < p ? up : p;
	}
	return 2 * p >= 0.05;
}

static void rates(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		  struct pv_learn_check *o)
{
	struct pv_learn_check_row *w;

	w = row(o, "rates", "/h", cap->req_per_user_hour[0], rep->req_per_user_hour[0],
		near(cap->req_per_user_hour[0], rep->req_per_user_hour[0], 0.10));
	SAY(w, "requests per user-hour (median)");
	RULE(w, "within 10%%");
	/* the logons again over a user's time at work: what a replay makes (the logons per
	 * user-hour depend on the capture's length: one logon in 40 s is 90 an hour) */
	bool ok = near(cap->relogons_per_user_hour, rep->relogons_per_user_hour, 0.10);
	uint64_t kc = 0;
	bool chance = !ok && relogons_by_chance(cap, rep, &kc);

	w = row(o, "rates", "/h", cap->relogons_per_user_hour, rep->relogons_per_user_hour,
		ok || chance);
	SAY(w, "logons again per user-hour (median)");
	if (chance)
		RULE(w, "chance: %llu in the capture", (unsigned long long)kc);
	else
		RULE(w, "within 10%%");
}

static void gaps(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		 struct pv_learn_check *o)
{
	static const double q[] = {0.5, 0.95};
	struct pv_learn_check_row *w;
	double ks = pv_learn_hist_ks(&cap->req_gaps, &rep->req_gaps);

	for (int i = 0; i < 2; i++) {
		double c = pv_learn_hist_quantile(&cap->req_gaps, q[i]);
		double r = pv_learn_hist_quantile(&rep->req_gaps, q[i]);

		w = row(o, "gaps", "s", c, r, near(c, r, 0.20));
		SAY(w, "a user's gaps, p%.0f", q[i] * 100);
		RULE(w, "within 20%%");
	}
	w = row(o, "gaps", "", 0, ks, ks <= 0.10);
	SAY(w, "a user's gaps, Kolmogorov-Smirnov");
	RULE(w, "at most 0.10");
}

static void sizes(const char *what, const struct pv_learn_sizes *c, const struct pv_learn_sizes *r,
		  struct pv_learn_check *o)
{
	static const double q[] = {0.5, 0.95};
	struct pv_learn_check_row *w;
	double worst = 0;
	int at = 0;

	if (!c->n && !r->n)
		return;
	for (int i = 0; i < 2; i++) {
		double a = pv_learn_sizes_value(c, q[i]), b = pv_learn_sizes_value(r, q[i]);

		w = row(o, "sizes", "B", a, b, c->n && r->n && near(a, b, 0.20));
		SAY(w, "%s sizes, p%.0f", what, q[i] * 100);
		RULE(w, "within 20%%");
	}
	for (int k = 0; k < PV_LEARN_SIZES_BINS; k++) {
		double d = fabs(pv_learn_pct(c->b[k], c->n) - pv_learn_pct(r->b[k], r->n));

		if (d > worst)
			worst = d, at = k;
	}
	w = row(o, "sizes", "%", pv_learn_pct(c->b[at], c->n), pv_learn_pct(r->b[at], r->n),
		c->n && r->n && worst <= 3);
	if (worst > 0)
		SAY(w, "%s sizes, worst bucket (to %llu B)", what,
		    at ? (unsigned long long)1 << at : 0ULL);
	else
		SAY(w, "%s sizes, every bucket", what);
	RULE(w, "each bucket within 3 points");
}

/* The share of the replay's file-work answers whose status class cannot be paired with one
 * of the capture's for the same command (by command: the total-variation distance of the two
 * class distributions, weighed by the replay's answers), and the surplus of names and paths
 * not found. */
static void status(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		   struct pv_learn_check *o)
{
	uint64_t ans[2] = {0, 0}, nf[2] = {0, 0};
	double off = 0;
	struct pv_learn_check_row *w;

	for (unsigned cmd = 0; cmd < PV_SMB_TRACE_NCMD; cmd++)
		if (pv_learn_file_work(cmd)) {
			ans[0] += cap->ans[cmd], ans[1] += rep->ans[cmd];
			nf[0] += cap->not_found[cmd], nf[1] += rep->not_found[cmd];
		}
	for (unsigned cmd = 0; cmd < PV_SMB_TRACE_NCMD; cmd++) {
		uint64_t a = 0, b = 0;
		double tv = 0;

		if (!pv_learn_file_work(cmd))
			continue;
		for (int k = 0; k < 4; k++)
			a += cap->status_class[cmd][k], b += rep->status_class[cmd][k];
		if (!b)
			continue;
		for (int k = 0; k < 4; k++)
			tv += a ? fabs(pv_learn_pct(cap->status_class[cmd][k], a) -
				       pv_learn_pct(rep->status_class[cmd][k], b)) /
					      200
				: 0.5;
		off += tv * (double)b;
	}
	off = ans[1] ? 100 * off / (double)ans[1] : 0;
	w = row(o, "status", "", 0, off, off <= 1);
	SAY(w, "answers of another status class, %%");
	RULE(w, "at most 1%%");
	w = row(o, "status", "%", pv_learn_pct(nf[0], ans[0]), pv_learn_pct(nf[1], ans[1]),
		pv_learn_pct(nf[1], ans[1]) - pv_learn_pct(nf[0], ans[0]) <= 0.5);
	SAY(w, "names or paths not found");
	RULE(w, "at most 0.5 points more");
}

/* Each of k parts' share of its side's whole (the capture's c[i] of nc, the replay's r[i] of
 * nr) within 3 points: a row each in group, said as prefix and the part's name (none for a
 * part neither side has). */
static void share_rows(struct pv_learn_check *o, const char *group, const char *prefix,
		       const char *const *name, int k, const uint64_t *c, uint64_t nc,
		       const uint64_t *r, uint64_t nr)
{
	for (int i = 0; i < k; i++) {
		double a = pv_learn_pct(c[i], nc), b = pv_learn_pct(r[i], nr);
		struct pv_learn_check_row *w;

		if (a == 0 && b == 0)
			continue;
		w = row(o, group, "%", a, b, nr && fabs(a - b) <= 3);
		SAY(w, "%s%s", prefix, name[i]);
		RULE(w, "within 3 points");
	}
}

/* Change notify: what each watch was answered with (learn/learn.h), as a share of those
 * answered, within 3 points each (none when the capture holds no answered watch). */
static void notify(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		   struct pv_learn_check *o)
{
	if (cap->notify.held.n)
		share_rows(o, "notify", "CHANGE_NOTIFY answered: ", pv_learn_notify_ends,
			   PV_LEARN_NOTIFY_ENDS, cap->notify.ended, cap->notify.held.n,
			   rep->notify.ended, rep->notify.held.n);
}

/* the opens of a file to read or edit in place that ask a lease or an oplock: the server's
 * work for one differs (where the capture has such opens) */
static void leases(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		   struct pv_learn_check *o)
{
	double a = pv_learn_pct(cap->file_opens_leased, cap->file_opens),
	       b = pv_learn_pct(rep->file_opens_leased, rep->file_opens);
	struct pv_learn_check_row *w;

	if (!cap->file_opens)
		return;
	w = row(o, "opens", "%", a, b, rep->file_opens && fabs(a - b) <= 3);
	SAY(w, "file opens asking a lease or an oplock");
	RULE(w, "within 3 points");
}

/* the shapes of the paths: where each QUERY_DIRECTORY's folder is, the user's home, below it,
 * or outside it (or not known), each within 3 points (where the capture lists) */
static void places(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		   struct pv_learn_check *o)
{
	static const char *const at[3] = {"at the home", "below the home", "outside the home"};
	uint64_t n[2] = {0, 0};

	for (int i = 0; i < 3; i++)
		n[0] += cap->listing_at[i], n[1] += rep->listing_at[i];
	if (n[0])
		share_rows(o, "places", "QUERY_DIRECTORY: ", at, 3, cap->listing_at, n[0],
			   rep->listing_at, n[1]);
}

static void answers(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		    struct pv_learn_check *o)
{
	uint64_t asked[2] = {pv_learn_requests(cap) - cap->req[12],
			     pv_learn_requests(rep) - rep->req[12]};
	double a = pv_learn_pct(cap->matched, asked[0]), b = pv_learn_pct(rep->matched, asked[1]);
	struct pv_learn_check_row *w =
		row(o, "answers", "%", a, b, asked[0] && asked[1] && a >= 99 && b >= 99);

	SAY(w, "requests matched to their answer");
	RULE(w, "at least 99%% each");
}

void pv_learn_check(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		    struct pv_learn_check *out)
{
	memset(out, 0, sizeof(*out));
	mix(cap, rep, out);
	rates(cap, rep, out);
	gaps(cap, rep, out);
	sizes("read", &cap->read_sizes, &rep->read_sizes, out);
	sizes("write", &cap->write_sizes, &rep->write_sizes, out);
	status(cap, rep, out);
	notify(cap, rep, out);
	leases(cap, rep, out);
	places(cap, rep, out);
	answers(cap, rep, out);
}
