/* provision/learn.c: `provision learn CAPTURE`: a capture of a file server's SMB traffic read
 * (learn/learn.h) and what it holds shown as text or JSON: the connections, the SMB2 requests
 * by command with their share, how many were answered, and what could not be read. */
#include "provision/provision.h"

#include "learn/check.h"
#include "learn/learn.h"
#include "learn/workload.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/err.h"

#include "json/json.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct learn_out {
	char path[1024];
	char workload[1024]; /* -o: where the learned workload was written ("": not asked) */
	struct pv_learn_counts c;
	bool read, keep;
	/* --check REPLAY: the replay's capture, its counts and the checks ("": not asked) */
	char replay[1024];
	struct pv_learn_counts rc;
	struct pv_learn_check check;
	bool checked;
};

static void text_users(const struct pv_learn_counts *c, bool keep);
static const char *dur(double s, char *b, size_t n);
static void json_check(struct pv_json *j, const struct learn_out *o);

/* A check's value as it reads best: "29.81%", "1.3 ms", "65536 B", "5626/h", "0.048" */
static void check_value(const struct pv_learn_check_row *r, double v, char *b, size_t n)
{
	if (!strcmp(r->unit, "s"))
		dur(v, b, n);
	else if (!strcmp(r->unit, "%"))
		snprintf(b, n, "%.2f%%", v);
	else if (*r->unit)
		snprintf(b, n, "%.0f%s%s", v, *r->unit == 'B' ? " " : "", r->unit);
	else
		snprintf(b, n, "%.3f", v);
}

/* --check: each check, the capture's value, the replay's, its bound and the verdict */
static void text_check(const struct learn_out *o)
{
	const struct pv_learn_check *k = &o->check;

	printf("learn: the replay %s (%llu requests) against the capture (the gap %.3g s for "
	       "both):\n",
	       o->replay, (unsigned long long)pv_learn_requests(&o->rc), o->c.activity_gap);
	printf("  %-36s %12s %12s  %-28s %s\n", "check", "capture", "replay", "bound", "");
	for (unsigned i = 0; i < k->n; i++) {
		const struct pv_learn_check_row *r = &k->row[i];
		char a[32], b[32];

		check_value(r, r->capture, a, sizeof(a));
		check_value(r, r->replay, b, sizeof(b));
		if (!*r->unit) /* a distance: the replay's value alone */
			a[0] = '\0';
		printf("  %-36s %12s %12s  %-28s %s\n", r->what, a, b, r->rule,
		       r->pass ? "pass" : "FAIL");
	}
	printf("learn: %s: %u of %u checks failed\n",
	       k->failed ? "the replay does not match the capture"
			 : "the replay matches the capture",
	       k->failed, k->n);
}

static void text(const struct pv_ctx *ctx, const void *result, int code)
{
	const struct learn_out *o = result;
	const struct pv_learn_counts *c = &o->c;
	uint64_t reqs = pv_learn_requests(c), tracked = reqs - c->req[12];
	uint64_t smb =
		c->smb2_bytes + c->enc_bytes + c->comp_bytes + c->smb1_bytes + c->other_bytes;

	(void)ctx;
	(void)code;
	if (!o->read)
		return;
	printf("learn: %s: %llu frames over %.2f s, %llu TCP connection%s to the SMB port (%llu "
	       "begun before the capture)\n",
	       o->path, (unsigned long long)c->frames, c->frames ? c->t1 - c->t0 : 0.0,
	       (unsigned long long)c->conns, c->conns == 1 ? "" : "s",
	       (unsigned long long)c->conns_midway);
	printf("learn: %llu SMB2 requests, %llu answered in the capture (%.1f%%), %llu with an "
	       "error status\n",
	       (unsigned long long)reqs, (unsigned long long)c->matched,
	       pv_learn_pct(c->matched, tracked), (unsigned long long)c->errors);
	if (reqs) {
		printf("  %-16s %10s %7s\n", "command", "requests", "%");
		for (uint16_t i = 0; i < PV_SMB_TRACE_NCMD; i++)
			if (c->req[i])
				printf("  %-16s %10llu %7.2f\n", pv_smb_trace_cmd_name(i),
				       (unsigned long long)c->req[i],
				       pv_learn_pct(c->req[i], reqs));
	}
	text_users(c, o->keep);
	if (c->enc_frames)
		printf("learn: not read: %llu encrypted frames (%.1f%% of the SMB bytes); capture "
		       "with encryption off (smb encrypt = off on a lab server) to learn from "
		       "them\n",
		       (unsigned long long)c->enc_frames, pv_learn_pct(c->enc_bytes, smb));
	if (c->comp_frames)
		printf("learn: not read: %llu compressed frames (%.1f%% of the SMB bytes)\n",
		       (unsigned long long)c->comp_frames, pv_learn_pct(c->comp_bytes, smb));
	if (c->smb1_frames)
		printf("learn: not read: %llu SMB1 frames (%.1f%% of the SMB bytes)\n",
		       (unsigned long long)c->smb1_frames, pv_learn_pct(c->smb1_bytes, smb));
	if (c->gap_bytes)
		printf("learn: not read: %llu bytes the capture did not keep (%llu frames cut by "
		       "its "
		       "snapshot length, %llu holes); the headers before them were read\n",
		       (unsigned long long)c->gap_bytes, (unsigned long long)c->cut_frames,
		       (unsigned long long)c->gaps);
	if (c->other_frames)
		printf("learn: not read: %llu NetBIOS frames that were not SMB (%.1f%% of the "
		       "bytes)\n",
		       (unsigned long long)c->other_frames, pv_learn_pct(c->other_bytes, smb));
	if (c->malformed)
		printf("learn: %llu malformed SMB2 frames, the first: %s\n",
		       (unsigned long long)c->malformed, c->first_malformed);
	if (c->bad_frames)
		printf("learn: %llu frames not taken apart, the first: %s\n",
		       (unsigned long long)c->bad_frames, c->first_bad);
	if (c->conns_refused)
		printf("learn: %llu segments of connections past the %u followed at once were not "
		       "read\n",
		       (unsigned long long)c->conns_refused, PV_LEARN_CONNS_MAX);
	if (o->workload[0])
		printf("learn: the learned workload written to %s (the playbook's load.workload "
		       "replays it: docs/learn.md)\n",
		       o->workload);
	if (o->checked)
		text_check(o);
}

/* The namespace the answers showed: the homes, and the shape of one (the fileset -o writes) */
static void text_namespace(const struct pv_learn_counts *c)
{
	const struct pv_learn_ns_shape *sh = &c->shape;

	if (!sh->files) {
		printf("learn: the namespace: no file seen in a user's home (%llu folders and "
		       "files seen)\n",
		       (unsigned long long)c->ns_nodes);
		return;
	}
	printf("learn: the namespace: %zu homes, %llu files and %llu folders seen in them; a "
	       "home: ",
	       sh->homes, (unsigned long long)sh->files, (unsigned long long)sh->folders);
	for (unsigned l = 0; l < sh->levels; l++)
		printf("%u folders of ", sh->per[l]);
	printf("%u files (%g, the median)%s\n", sh->files_per, sh->files_median,
	       c->ns_refused ? "; larger than learn follows, the rest not read" : "");
	if (c->folders_listed)
		printf("learn: listings: %llu folder%s listed, each %g time%s (median; p95 %g), an "
		       "open of it and its QUERY_DIRECTORYs a listing\n",
		       (unsigned long long)c->folders_listed, c->folders_listed == 1 ? "" : "s",
		       c->listings_per_folder[0], c->listings_per_folder[0] == 1 ? "" : "s",
		       c->listings_per_folder[1]);
}

/* After a kind's commands, the depths below the home of what its CREATEs name ("; depths 0 2",
 * "-" for one outside it or not known), as room in name allows. */
static void depths_text(const struct pv_learn_kind_shape *s, char *name, size_t len)
{
	int d[PV_LEARN_KIND_STEPS];
	unsigned n = pv_learn_kind_depths(s, d);
	size_t o = strlen(name);

	for (unsigned j = 0; j < n && o + 8 < len; j++) {
		int w = d[j] < 0 ? snprintf(name + o, len - o, "%s-", j ? " " : "; depths ")
				 : snprintf(name + o, len - o, "%s%d", j ? " " : "; depths ", d[j]);

		o += w > 0 ? (size_t)w : 0;
	}
}

/* A time as it reads best: "340 us", "2.1 ms", "1.30 s" */
static const char *dur(double s, char *b, size_t n)
{
	if (s < 1e-3)
		snprintf(b, n, "%.0f us", s * 1e6);
	else if (s < 1)
		snprintf(b, n, "%.1f ms", s * 1e3);
	else
		snprintf(b, n, "%.2f s", s);
	return b;
}

/* Change notify: the watches, how long they stayed, what ended them. */
static void text_notify(const struct pv_learn_counts *c)
{
	const struct pv_learn_notify *n = &c->notify;
	char a[32], b[32];

	if (!c->req[15])
		return;
	printf("learn: change notify: %llu watch%s (%llu of a whole subtree), held %s (median; "
	       "p95 %s) to their answer: ",
	       (unsigned long long)c->req[15], c->req[15] == 1 ? "" : "es",
	       (unsigned long long)n->tree,
	       dur(pv_learn_hist_quantile(&n->held, 0.5), a, sizeof(a)),
	       dur(pv_learn_hist_quantile(&n->held, 0.95), b, sizeof(b)));
	for (int i = 0; i < PV_LEARN_NOTIFY_ENDS; i++)
		printf("%s%s %.1f%%", i ? ", " : "", pv_learn_notify_ends[i],
		       pv_learn_pct(n->ended[i], n->held.n));
	printf("; %llu still watching at the end\n", (unsigned long long)n->open);
}

/* A size as it reads best: "512 B", "64 KiB", "1 MiB" */
static const char *size(uint64_t v, char *b, size_t n)
{
	if (v < 1024)
		snprintf(b, n, "%llu B", (unsigned long long)v);
	else if (v < 1024 * 1024)
		snprintf(b, n, "%llu KiB", (unsigned long long)(v / 1024));
	else
		snprintf(b, n, "%llu MiB", (unsigned long long)(v / 1024 / 1024));
	return b;
}

/* The kinds of activity, the most frequent first (at most KINDS_SHOWN). */
#define KINDS_SHOWN 12
static void text_kinds(const struct pv_learn_counts *c)
{
	const struct pv_learn_kinds *k = &c->kinds;
	const struct pv_learn_kinds_written *w = &k->w;
	const size_t *order = w->order;
	size_t shown;
	char name[PV_LEARN_KIND_NAME_MAX], a[32];

	if (!c->has_kinds || !k->n || !order)
		return;
	shown = k->n < KINDS_SHOWN ? k->n : KINDS_SHOWN;
	printf("learn: %zu kind%s of activity (their commands, repeats folded: READ+), the %zu "
	       "most frequent:\n",
	       k->n, k->n == 1 ? "" : "s", shown);
	printf("  %6s %14s %9s %9s  %s\n", "share", "per user-hour", "requests", "length",
	       "commands");
	for (size_t i = 0; i < shown; i++) {
		const struct pv_learn_kind *kd = &k->k[order[i]];

		pv_learn_kind_name(&kd->shape, name, sizeof(name));
		depths_text(&kd->shape, name, sizeof(name));
		printf("  %5.1f%% %14.1f %9.1f %9s  %s\n",
		       100.0 * (double)kd->count / (double)c->activities,
		       pv_learn_per_user_hour(c, kd->count),
		       (double)kd->requests / (double)kd->count,
		       dur(kd->seconds / (double)kd->count, a, sizeof(a)), name);
	}
	if (k->n > w->kept)
		printf("learn: %zu kinds past the %zu a workload holds (%llu activities, %.1f%% of "
		       "the kinds' requests): each replayed as the kind written nearest its "
		       "commands, %.2f%% of the requests so made as another command\n",
		       k->n - w->kept, w->kept, (unsigned long long)w->past_activities,
		       pv_learn_pct(w->past_requests, w->requests), 100 * w->moved);
	if (k->other)
		printf("learn: %llu activities (%llu requests) of kinds past the %d told apart: "
		       "not replayed\n",
		       (unsigned long long)k->other, (unsigned long long)k->other_requests,
		       PV_LEARN_KINDS_MAX);
}

/* What the users did: who they are, their rates, their activities, sizes, open times. */
static void text_users(const struct pv_learn_counts *c, bool keep)
{
	const struct pv_learn_users *us = &c->users;
	size_t kinds[3] = {0, 0, 0};
	char a[32], b[32], d[32], e[32];

	if (!us->n)
		return;
	for (size_t i = 0; i < us->n; i++)
		kinds[us->u[i].kind]++;
	printf("learn: %zu user%s: %zu account%s by NTLM logon (%s), %zu by client "
	       "address (no name seen: Kerberos, or a logon not captured whole), %zu by session "
	       "only "
	       "(logon not captured)%s\n",
	       us->n, us->n == 1 ? "" : "s", kinds[PV_LEARN_USER_NTLM],
	       kinds[PV_LEARN_USER_NTLM] == 1 ? "" : "s", keep ? "by name" : "kept as hashes",
	       kinds[PV_LEARN_USER_ADDR], kinds[PV_LEARN_USER_SESSION],
	       us->refused ? "; more not followed" : "");
	printf("learn: per user-hour: %.0f requests (median; p95 %.0f), %.1f logons (p95 %.1f), "
	       "%.0f QUERY_DIRECTORY (p95 %.0f), %.0f CHANGE_NOTIFY (p95 %.0f)\n",
	       c->req_per_user_hour[0], c->req_per_user_hour[1], c->logons_per_user_hour[0],
	       c->logons_per_user_hour[1], c->listings_per_user_hour[0],
	       c->listings_per_user_hour[1], c->notifies_per_user_hour[0],
	       c->notifies_per_user_hour[1]);
	printf("learn: sessions: %llu logon%s, %llu logoff%s; lifetimes %s (median; p95 %s) of the "
	       "%llu whose logon and logoff the capture holds; %llu still on at its end\n",
	       (unsigned long long)c->logons, c->logons == 1 ? "" : "s",
	       (unsigned long long)c->logoffs, c->logoffs == 1 ? "" : "s",
	       dur(pv_learn_hist_quantile(&c->session_times, 0.5), a, sizeof(a)),
	       dur(pv_learn_hist_quantile(&c->session_times, 0.95), b, sizeof(b)),
	       (unsigned long long)c->session_times.n, (unsigned long long)c->still_on);
	if (c->relogon_users)
		printf("learn: logons again: %.1f per user-hour over each user's time at work "
		       "(median of the %zu user%s with two or more): what a replay makes\n",
		       c->relogons_per_user_hour, c->relogon_users,
		       c->relogon_users == 1 ? "" : "s");
	else
		printf("learn: logons again: none (no user logged on twice): a replay logs each "
		       "user on once a step\n");
	if (c->file_opens)
		printf("learn: opens to read or edit a file, granted: %llu, %.1f%% of them "
		       "asking a lease or an oplock (a replay asks as many)\n",
		       (unsigned long long)c->file_opens,
		       pv_learn_pct(c->file_opens_leased, c->file_opens));
	if (c->req_gaps.n) {
		printf("learn: activities: a user's requests more than %s apart (%s) start "
		       "another, unless it holds a file open: %llu activities, %.1f requests "
		       "each\n",
		       dur(c->activity_gap, a, sizeof(a)),
		       c->gap_learned ? "learned: the split of the gaps' two modes" : "--gap",
		       (unsigned long long)c->activities, c->activity_requests);
		printf("learn: gaps within an activity %s (median; p95 %s), think times between "
		       "them %s (median; p95 %s)\n",
		       dur(c->within[0], a, sizeof(a)), dur(c->within[1], b, sizeof(b)),
		       dur(c->think[0], d, sizeof(d)), dur(c->think[1], e, sizeof(e)));
		printf("learn: within an activity, the client's own time from an answer to its "
		       "next "
		       "request %s (median; p95 %s): the gaps less the server's\n",
		       dur(c->client[0], a, sizeof(a)), dur(c->client[1], b, sizeof(b)));
	}
	text_kinds(c);
	if (c->read_sizes.n || c->write_sizes.n)
		printf("learn: reads asked up to %s (median; p95 %s), writes up to %s (median; p95 "
		       "%s)\n",
		       size(pv_learn_sizes_quantile(&c->read_sizes, 0.5), a, sizeof(a)),
		       size(pv_learn_sizes_quantile(&c->read_sizes, 0.95), b, sizeof(b)),
		       size(pv_learn_sizes_quantile(&c->write_sizes, 0.5), d, sizeof(d)),
		       size(pv_learn_sizes_quantile(&c->write_sizes, 0.95), e, sizeof(e)));
	if (c->open_times.n)
		printf("learn: files open %s (median; p95 %s), %llu closes\n",
		       dur(pv_learn_hist_quantile(&c->open_times, 0.5), a, sizeof(a)),
		       dur(pv_learn_hist_quantile(&c->open_times, 0.95), b, sizeof(b)),
		       (unsigned long long)c->open_times.n);
	text_namespace(c);
	text_notify(c);
}

static void cmds(struct pv_json *o, const char *key, const uint64_t *v)
{
	struct pv_json *m = pv_json_object();

	for (uint16_t i = 0; i < PV_SMB_TRACE_NCMD; i++)
		if (v[i])
			pv_json_int(m, pv_smb_trace_cmd_name(i), (long long)v[i]);
	pv_json_set(o, key, m);
}

#define INT(o, k, v) pv_json_int(o, k, (long long)(v))

static struct pv_json *pair(double a, double b)
{
	struct pv_json *o = pv_json_object();

	pv_json_real(o, "median", a);
	pv_json_real(o, "p95", b);
	return o;
}

/* {median, p95, quantiles: {PERCENT: SECONDS}}: the quantiles where learned (what a replay
 * draws from). */
static struct pv_json *times(const double mp[2], const struct pv_learn_levels *l)
{
	struct pv_json *o = pair(mp[0], mp[1]), *qo;

	if (!l->n)
		return o;
	qo = pv_json_object();
	for (unsigned i = 0; i < l->n; i++) {
		char k[24];

		snprintf(k, sizeof(k), "%g", l->level[i]);
		pv_json_real(qo, k, l->q[i]);
	}
	pv_json_set(o, "quantiles", qo);
	return o;
}

/* A time distribution: {median, p95, n} */
static struct pv_json *hist_json(const struct pv_learn_hist *h)
{
	struct pv_json *o = pair(pv_learn_hist_quantile(h, 0.5), pv_learn_hist_quantile(h, 0.95));

	INT(o, "n", h->n);
	return o;
}

/* Every kind of activity, the most frequent first. */
static void json_kinds(struct pv_json *j, const struct pv_learn_counts *c)
{
	const struct pv_learn_kinds *k = &c->kinds;
	const struct pv_learn_kinds_written *w = &k->w;
	const size_t *order = w->order;
	struct pv_json *a = pv_json_array();
	char name[PV_LEARN_KIND_NAME_MAX];

	for (size_t i = 0; order && i < k->n; i++) {
		const struct pv_learn_kind *kd = &k->k[order[i]];
		struct pv_json *o = pv_json_object();

		pv_learn_kind_name(&kd->shape, name, sizeof(name));
		pv_json_str(o, "commands", name);
		INT(o, "count", kd->count);
		pv_json_real(o, "share", (double)kd->count / (double)c->activities);
		pv_json_real(o, "per_user_hour", pv_learn_per_user_hour(c, kd->count));
		pv_json_real(o, "requests", (double)kd->requests / (double)kd->count);
		pv_json_real(o, "seconds", kd->seconds / (double)kd->count);
		pv_json_set(o, "think", hist_json(&kd->think));
		{
			int d[PV_LEARN_KIND_STEPS];
			unsigned nd = pv_learn_kind_depths(&kd->shape, d);
			struct pv_json *da = pv_json_array();

			for (unsigned x = 0; x < nd; x++)
				pv_json_append_int(da, d[x]);
			pv_json_set(o, "depths", da);
		}
		/* past those a workload holds: the place of the kind replayed for it */
		if (i >= w->kept)
			INT(o, "replayed_as", w->near[i]);
		pv_json_append(a, o);
	}
	pv_json_real(j, "kinds_made_as_another_command", w->moved);
	if (c->has_kinds) {
		pv_json_set(j, "kinds", a);
	} else {
		pv_json_free(a);
		pv_json_str(j, "kinds", NULL);
	}
	INT(j, "kinds_other", k->other);
}

/* A size distribution: {n, median_up_to, p95_up_to} */
static struct pv_json *sizes_json(const struct pv_learn_sizes *s)
{
	struct pv_json *o = pv_json_object();

	INT(o, "n", s->n);
	INT(o, "median_up_to", pv_learn_sizes_quantile(s, 0.5));
	INT(o, "p95_up_to", pv_learn_sizes_quantile(s, 0.95));
	return o;
}

/* What the users did, as text_users says it, and each user (its id: a hash, an address, or a
 * session's id). */
static void json_users(struct pv_json *j, const struct pv_learn_counts *c)
{
	static const char *const kinds[] = {"ntlm", "address", "session"};
	struct pv_json *a = pv_json_array(), *o;

	for (size_t i = 0; i < c->users.n; i++) {
		const struct pv_learn_user *u = &c->users.u[i];

		o = pv_json_object();
		pv_json_str(o, "id", u->id);
		pv_json_str(o, "by", kinds[u->kind]);
		INT(o, "requests", u->requests);
		INT(o, "logons", u->logons);
		INT(o, "tree_connects", u->trees);
		INT(o, "opens", u->opens);
		INT(o, "listings", u->listings);
		INT(o, "notifies", u->notifies);
		pv_json_real(o, "first", u->first);
		pv_json_real(o, "last", u->last);
		pv_json_append(a, o);
	}
	pv_json_set(j, "users", a);
	INT(j, "users_not_followed", c->users.refused);
	INT(j, "logons", c->logons);
	o = hist_json(&c->session_times);
	INT(o, "logoffs", c->logoffs);
	INT(o, "still_on", c->still_on);
	pv_json_set(j, "session_times", o);
	pv_json_set(j, "requests_per_user_hour",
		    pair(c->req_per_user_hour[0], c->req_per_user_hour[1]));
	pv_json_set(j, "logons_per_user_hour",
		    pair(c->logons_per_user_hour[0], c->logons_per_user_hour[1]));
	pv_json_real(j, "logons_again_per_user_hour", c->relogons_per_user_hour);
	pv_json_int(j, "logons_again_users", (long long)c->relogon_users);
	pv_json_set(j, "listings_per_user_hour",
		    pair(c->listings_per_user_hour[0], c->listings_per_user_hour[1]));
	pv_json_set(j, "notifies_per_user_hour",
		    pair(c->notifies_per_user_hour[0], c->notifies_per_user_hour[1]));
	pv_json_real(j, "activity_gap", c->activity_gap);
	pv_json_bool(j, "activity_gap_learned", c->gap_learned);
	INT(j, "activities", c->activities);
	pv_json_real(j, "requests_per_activity", c->activity_requests);
	pv_json_set(j, "gaps_within", times(c->within, &c->within_q));
	o = pv_json_object();
	for (int i = 0; i < PV_SMB_TRACE_NCMD; i++)
		if (c->act_within_after[i].n) {
			struct pv_json *t = times(c->within_after[i], &c->within_after_q[i]);

			INT(t, "n", c->act_within_after[i].n);
			pv_json_set(o, pv_smb_trace_cmd_name((uint16_t)i), t);
		}
	pv_json_set(j, "gaps_within_after", o);
	pv_json_set(j, "client_times", times(c->client, &c->client_q));
	pv_json_set(j, "think_times", times(c->think, &c->think_q));
	pv_json_set(j, "read_sizes", sizes_json(&c->read_sizes));
	pv_json_set(j, "write_sizes", sizes_json(&c->write_sizes));
	json_kinds(j, c);
	o = hist_json(&c->open_times);
	INT(o, "still_open", c->still_open);
	pv_json_set(j, "open_times", o);
	o = pv_json_object();
	INT(o, "n", c->file_opens);
	INT(o, "leased", c->file_opens_leased);
	pv_json_set(j, "file_opens", o);
	o = pv_json_object();
	INT(o, "seen", c->ns_nodes);
	INT(o, "not_followed", c->ns_refused);
	INT(o, "homes", c->shape.homes);
	INT(o, "files", c->shape.files);
	INT(o, "folders", c->shape.folders);
	pv_json_real(o, "home_files_median", c->shape.files_median);
	{
		struct pv_json *per = pv_json_array();

		for (unsigned l = 0; l < c->shape.levels; l++)
			pv_json_append_int(per, c->shape.per[l]);
		pv_json_set(o, "folders_per_level", per);
	}
	INT(o, "files_per_folder", c->shape.files_per);
	INT(o, "written_in_place", c->shape.written);
	INT(o, "folders_listed", c->folders_listed);
	pv_json_set(o, "listings_per_folder",
		    pair(c->listings_per_folder[0], c->listings_per_folder[1]));
	{ /* QUERY_DIRECTORYs by where their folder is */
		struct pv_json *at = pv_json_object();

		INT(at, "home", c->listing_at[0]);
		INT(at, "below", c->listing_at[1]);
		INT(at, "outside", c->listing_at[2]);
		pv_json_set(o, "listings_at", at);
	}
	pv_json_set(j, "namespace", o);
	o = hist_json(&c->notify.held);
	INT(o, "watches", c->req[15]);
	INT(o, "tree", c->notify.tree);
	INT(o, "still_watching", c->notify.open);
	{
		struct pv_json *e = pv_json_object();

		for (int i = 0; i < PV_LEARN_NOTIFY_ENDS; i++)
			INT(e, pv_learn_notify_ends[i], c->notify.ended[i]);
		pv_json_set(o, "answered", e);
	}
	pv_json_set(j, "change_notify", o);
}

static void json(const struct pv_ctx *ctx, const void *result, int code, struct pv_json *j)
{
	const struct learn_out *o = result;
	const struct pv_learn_counts *c = &o->c;
	struct pv_json *f = pv_json_object(), *d = pv_json_object();

	(void)ctx;
	(void)code;
	pv_json_str(j, "capture", o->path[0] ? o->path : NULL);
	pv_json_str(j, "workload", o->workload[0] ? o->workload : NULL);
	INT(j, "frames", c->frames);
	pv_json_real(j, "seconds", c->frames ? c->t1 - c->t0 : 0);
	INT(j, "tcp", c->tcp);
	INT(j, "not_tcp", c->not_tcp);
	INT(j, "fragments", c->fragments);
	INT(j, "cut_frames", c->cut_frames);
	INT(j, "bad_frames", c->bad_frames);
	pv_json_str(j, "first_bad", c->first_bad[0] ? c->first_bad : NULL);
	INT(j, "connections", c->conns);
	INT(j, "connections_midway", c->conns_midway);
	INT(j, "connections_refused", c->conns_refused);
	INT(j, "bytes", c->bytes);
	INT(j, "lost_bytes", c->gap_bytes);
	INT(j, "holes", c->gaps);
	INT(j, "again_bytes", c->again_bytes);
	INT(f, "smb2", c->smb2_frames);
	INT(f, "encrypted", c->enc_frames);
	INT(f, "compressed", c->comp_frames);
	INT(f, "smb1", c->smb1_frames);
	INT(f, "other", c->other_frames);
	INT(f, "keepalive", c->keepalives);
	INT(f, "resyncs", c->resyncs);
	pv_json_set(j, "netbios_frames", f);
	INT(j, "smb2_bytes", c->smb2_bytes);
	INT(j, "encrypted_bytes", c->enc_bytes);
	cmds(j, "requests", c->req);
	cmds(j, "answers", c->ans);
	cmds(j, "responses", c->resp);
	INT(j, "matched", c->matched);
	INT(j, "unmatched_answers", c->unmatched_ans);
	INT(j, "unanswered", c->unanswered);
	INT(j, "untracked", c->untracked);
	INT(j, "interim", c->interim);
	INT(j, "notifications", c->notifications);
	INT(j, "errors", c->errors);
	INT(j, "unknown_commands", c->unknown_cmd);
	INT(j, "malformed", c->malformed);
	pv_json_str(j, "first_malformed", c->first_malformed[0] ? c->first_malformed : NULL);
	INT(j, "cut_chains", c->cut_chains);
	for (size_t i = 0; i < 6; i++)
		INT(d, pv_learn_dispositions[i], c->disposition[i]);
	pv_json_set(j, "create_dispositions", d);
	INT(j, "read_asked", c->read_asked);
	INT(j, "read_got", c->read_got);
	INT(j, "written", c->written);
	json_users(j, c);
	if (o->checked)
		json_check(j, o);
}

static void json_check(struct pv_json *j, const struct learn_out *o)
{
	struct pv_json *c = pv_json_object(), *a = pv_json_array();

	pv_json_str(c, "replay", o->replay);
	INT(c, "replay_requests", pv_learn_requests(&o->rc));
	cmds(c, "replay_requests_by_command", o->rc.req);
	for (unsigned i = 0; i < o->check.n; i++) {
		const struct pv_learn_check_row *r = &o->check.row[i];
		struct pv_json *x = pv_json_object();

		pv_json_str(x, "group", r->group);
		pv_json_str(x, "check", r->what);
		if (*r->unit)
			pv_json_real(x, "capture", r->capture);
		pv_json_real(x, "replay", r->replay);
		pv_json_str(x, "unit", r->unit);
		pv_json_str(x, "bound", r->rule);
		pv_json_bool(x, "pass", r->pass);
		pv_json_append(a, x);
	}
	pv_json_set(c, "checks", a);
	INT(c, "failed", o->check.failed);
	pv_json_bool(c, "match", !o->check.failed);
	pv_json_set(j, "check", c);
}

static void release(void *result)
{
	pv_learn_counts_release(&((struct learn_out *)result)->c);
	pv_learn_counts_release(&((struct learn_out *)result)->rc);
}

/* --check REPLAY: REPLAY read with CAPTURE's gap, and checked against it */
static int check_replay(struct learn_out *o, struct pv_learn_opts opts, const char *replay)
{
	int r;

	snprintf(o->replay, sizeof(o->replay), "%s", replay);
	opts.gap = o->c.activity_gap;
	if ((r = pv_learn_read(replay, &opts, &o->rc)) != PV_OK)
		return pv_error_prefix(r, "the replay's capture (--check %s)", replay);
	pv_learn_check(&o->c, &o->rc, &o->check);
	o->checked = true;
	if (o->check.failed)
		return pv_error(PV_EFAIL,
				"the replay does not match the capture: %u of %u checks failed "
				"(each is shown above; docs/learn.md says what each bound is for)",
				o->check.failed, o->check.n);
	return PV_OK;
}

/* -o FILE: the workload as YAML, FILE replaced whole (nothing half-written) */
static int write_workload(struct learn_out *o, const char *file)
{
	struct pv_buf b = PV_BUF_INIT;
	int r = pv_learn_workload(&o->c, o->path, PV_VERSION, &b);

	if (r == PV_OK && (r = pv_file_replace(file, b.data, b.len)) != PV_OK)
		r = pv_error_prefix(r, "the learned workload (-o %s)", file);
	if (r == PV_OK)
		snprintf(o->workload, sizeof(o->workload), "%s", file);
	pv_buf_release(&b, 0);
	return r;
}

int pv_cmd_learn(struct pv_ctx *ctx, struct pv_out *out)
{
	struct learn_out *o = pv_out_result(out, "learn", sizeof(*o), text, json, release);
	struct pv_learn_opts opts = {0};
	int r;

	if (!o)
		return PV_EIO;
	if (ctx->cli.nargs != 1)
		return pv_error(PV_EUSAGE, "learn needs one capture: provision learn CAPTURE "
					   "(a pcap or pcapng file, as tcpdump -w writes)");
	snprintf(o->path, sizeof(o->path), "%s", ctx->cli.args[0]);
	if (ctx->cli.opt[OPT_PORT]) {
		char *end;
		long v = strtol(ctx->cli.opt[OPT_PORT], &end, 10);

		if (*end || end == ctx->cli.opt[OPT_PORT] || v < 1 || v > 65535)
			return pv_error(PV_EUSAGE, "--port '%s' is not a TCP port (1 to 65535)",
					ctx->cli.opt[OPT_PORT]);
		opts.port = (uint16_t)v;
	}
	if (ctx->cli.opt[OPT_GAP]) {
		char *end;
		double v = strtod(ctx->cli.opt[OPT_GAP], &end);

		if (*end || end == ctx->cli.opt[OPT_GAP] || !(v > 0) || v > 86400)
			return pv_error(PV_EUSAGE,
					"--gap '%s' is not a time in seconds (more than 0, at most "
					"86400): the idle time that ends a user's activity",
					ctx->cli.opt[OPT_GAP]);
		opts.gap = v;
	}
	opts.keep_names = o->keep = ctx->cli.opt[OPT_KEEP_NAMES] != NULL;
	r = pv_learn_read(o->path, &opts, &o->c);
	o->read = o->c.frames > 0 || r == PV_OK;
	if (r == PV_OK && ctx->cli.opt[OPT_OUTPUT])
		r = write_workload(o, ctx->cli.opt[OPT_OUTPUT]);
	if (r == PV_OK && ctx->cli.opt[OPT_CHECK_REPLAY])
		r = check_replay(o, opts, ctx->cli.opt[OPT_CHECK_REPLAY]);
	return r;
}
