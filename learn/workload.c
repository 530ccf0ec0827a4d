/* learn/workload.c: the learned workload as YAML (see workload.h). */
#include "learn/workload.h"

#include "fileset/fileset.h"
#include "learn/kind.h"
#include "playbooks/workload.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fileset's sizes (docs/fileset.md) from sizes by powers of two: each bucket a range,
 * weighed by its share (in hundredths of a point, 1 at least). */
static void fileset_sizes(struct pv_buf *b, const struct pv_learn_sizes *s)
{
	pv_buf_addstr(b, "      sizes: # by powers of two, as the files seen\n");
	for (unsigned k = 0; k < PV_LEARN_SIZES_BINS; k++) {
		unsigned long long lo = k ? 1ULL << (k - 1) : 0, hi = k ? (1ULL << k) - 1 : 0;
		double share = s->n ? 100.0 * (double)s->b[k] / (double)s->n : 0;
		long w = lround(share * 100);

		if (!s->b[k])
			continue;
		if (lo > PV_FILESET_FILE_MAX)
			lo = PV_FILESET_FILE_MAX;
		if (hi > PV_FILESET_FILE_MAX)
			hi = PV_FILESET_FILE_MAX;
		if (lo == hi)
			pv_buf_addf(b, "        - {size: %llu, weight: %ld} # %.2f%%\n", lo,
				    w < 1 ? 1 : w, share);
		else
			pv_buf_addf(b, "        - {size: [%llu, %llu], weight: %ld} # %.2f%%\n", lo,
				    hi, w < 1 ? 1 : w, share);
	}
}

/* The namespace the answers showed, as the fileset of a user's home that `prepare` builds. */
static void fileset(struct pv_buf *b, const struct pv_learn_counts *c)
{
	const struct pv_learn_ns_shape *sh = &c->shape;
	unsigned long long files = sh->files_per, prod = 1;

	if (!sh->files) {
		pv_buf_addf(
			b,
			"# fileset: none: the capture's answers showed no file in a user's home "
			"(%llu folders and files seen); the playbook's server.fileset is "
			"built\n",
			(unsigned long long)c->ns_nodes);
		return;
	}
	pv_buf_addf(b,
		    "fileset: # the namespace the capture's CREATE and QUERY_DIRECTORY answers "
		    "showed, as a user's home: the median of %zu homes (%llu files and %llu "
		    "folders seen in them, not those the capture made%s); `prepare` builds it in "
		    "every user's home unless the playbook names another server.fileset\n"
		    "  name: learned\n  seed: 1\n  parts:\n"
		    "    static: # a home as the capture showed it: %.6g files, to read and list\n",
		    sh->homes, (unsigned long long)sh->files, (unsigned long long)sh->folders,
		    c->ns_refused ? "; the namespace was larger than learn follows" : "",
		    sh->files_median);
	if (sh->levels) {
		pv_buf_addstr(b, "      folders: [");
		for (unsigned l = 0; l < sh->levels; l++) {
			unsigned f =
				sh->per[l] > PV_FILESET_FANOUT ? PV_FILESET_FANOUT : sh->per[l];

			pv_buf_addf(b, "%s%u", l ? ", " : "", f);
			prod *= f;
		}
		pv_buf_addstr(b, "]\n");
	}
	/* a fileset holds at most PV_FILESET_ENTRIES entries */
	if (prod * (files + 1) > PV_FILESET_ENTRIES)
		files = PV_FILESET_ENTRIES / prod > 1 ? PV_FILESET_ENTRIES / prod - 1 : 0;
	pv_buf_addf(b, "      files: %llu # in each folder of the last level\n", files);
	fileset_sizes(b, &sh->sizes);
	pv_buf_addf(b,
		    "    volatile: # files written in place: %u a home (the median), 1 at "
		    "least\n      files: %u\n",
		    sh->written, sh->written ? sh->written : 1);
	fileset_sizes(b, sh->written_sizes.n ? &sh->written_sizes : &sh->sizes);
	pv_buf_addstr(b, "    new: # where the replay makes files of its own\n");
}

uint64_t pv_learn_requests(const struct pv_learn_counts *c)
{
	uint64_t n = 0;

	for (int i = 0; i < PV_SMB_TRACE_NCMD; i++)
		n += c->req[i];
	return n;
}

/* "  WHAT: {median: M, p95: P, quantiles: {PERCENT: SECONDS, ...}} # COMMENT", the quantiles
 * (what a replay draws from) where learned; comment NULL: none (within_after's, said above). */
static void quantiles(struct pv_buf *out, const char *what, const double mp[2],
		      const struct pv_learn_levels *l, const char *comment)
{
	pv_buf_addf(out, "  %s: {median: %.6g, p95: %.6g", what, mp[0], mp[1]);
	if (l->n) {
		pv_buf_addstr(out, ", quantiles: {");
		for (unsigned i = 0; i < l->n; i++)
			pv_buf_addf(out, "%s%g: %.6g", i ? ", " : "", l->level[i], l->q[i]);
		pv_buf_addstr(out, "}");
	}
	if (!comment) {
		pv_buf_addstr(out, "}\n");
		return;
	}
	pv_buf_addf(out, "} # %s%s\n", comment,
		    l->n ? " (quantiles: at each percent, what a replay draws from)" : "");
}

/* activity.within_after: the gaps within an activity by the command of the request each follows,
 * of the commands a replay makes that the capture holds PV_LEARN_WITHIN_MIN of. */
static void within_after(struct pv_buf *out, const struct pv_learn_counts *c)
{
	bool any = false;

	for (uint16_t i = 0; i < PV_SMB_TRACE_NCMD; i++) {
		char what[48];

		if (c->act_within_after[i].n < PV_LEARN_WITHIN_MIN ||
		    !pv_playbook_workload_learned_command(i))
			continue;
		if (!any)
			pv_buf_addf(out,
				    "  within_after: # of those, by the command of the request "
				    "each follows (its answer, then the client's time), where %d "
				    "or more: what a replay draws from after its own\n",
				    PV_LEARN_WITHIN_MIN);
		any = true;
		snprintf(what, sizeof(what), "  %s", pv_smb_trace_cmd_name(i));
		quantiles(out, what, c->within_after[i], &c->within_after_q[i], NULL);
	}
}

double pv_learn_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

double pv_learn_per_user_hour(const struct pv_learn_counts *c, uint64_t n)
{
	return c->user_hours > 0 ? (double)n / c->user_hours : 0;
}

/* A YAML double-quoted string: the capture's name as given (its quotes and controls escaped) */
static void quoted(struct pv_buf *b, const char *s)
{
	pv_buf_addstr(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			pv_buf_addf(b, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			pv_buf_addf(b, "\\x%02x", ch);
		else
			pv_buf_add(b, s, 1);
	}
	pv_buf_addstr(b, "\"");
}

static void times(struct pv_buf *b, const char *key, const struct pv_learn_hist *h,
		  const char *note)
{
	pv_buf_addf(b, "  %s: {median: %.6g, p95: %.6g, n: %llu}%s\n", key,
		    pv_learn_hist_quantile(h, 0.5), pv_learn_hist_quantile(h, 0.95),
		    (unsigned long long)h->n, note);
}

/* Sizes: the median's and the p95's power of two, and each power of two's share */
static void sizes(struct pv_buf *b, const char *key, const struct pv_learn_sizes *s)
{
	const char *sep = "";

	pv_buf_addf(b, "  %s: {n: %llu, median_up_to: %llu, p95_up_to: %llu, buckets: {", key,
		    (unsigned long long)s->n, (unsigned long long)pv_learn_sizes_quantile(s, 0.5),
		    (unsigned long long)pv_learn_sizes_quantile(s, 0.95));
	for (int k = 0; k < PV_LEARN_SIZES_BINS; k++)
		if (s->b[k]) {
			pv_buf_addf(b, "%s%llu: %.2f", sep, k ? 1ull << k : 0ull,
				    pv_learn_pct(s->b[k], s->n));
			sep = ", ";
		}
	pv_buf_addstr(b, "}, means: {");
	sep = "";
	for (int k = 0; k < PV_LEARN_SIZES_BINS; k++)
		if (s->b[k]) {
			pv_buf_addf(b, "%s%llu: %.1f", sep, k ? 1ull << k : 0ull,
				    (double)s->bytes[k] / (double)s->b[k]);
			sep = ", ";
		}
	pv_buf_addstr(b, "}}\n");
}

/* What the written kind i (a place in w->order) stands for: the kinds past the written ones
 * nearest it, their activities and requests, and the weight and rate a replay adds to the
 * kind's own to make their requests: as many of its activities as their requests make. */
static void stands_for(struct pv_buf *b, const struct pv_learn_counts *c,
		       const struct pv_learn_kind *kd, size_t i)
{
	const struct pv_learn_kinds *k = &c->kinds;
	const struct pv_learn_kinds_written *w = &k->w;
	uint64_t acts = 0, reqs = 0;
	double as_many;

	for (size_t j = w->kept; j < k->n; j++)
		if (w->near[j] == i) {
			acts += k->k[w->order[j]].count;
			reqs += k->k[w->order[j]].requests;
		}
	if (!acts || !kd->requests)
		return;
	as_many = (double)reqs * (double)kd->count / (double)kd->requests;
	pv_buf_addf(b,
		    "    stands_for: {activities: %llu, requests: %llu, weight: %.4f, "
		    "per_user_hour: %.6g} # kinds not written, nearest this one: replayed as it\n",
		    (unsigned long long)acts, (unsigned long long)reqs,
		    c->activities ? 100.0 * as_many / (double)c->activities : 0,
		    c->user_hours > 0 ? as_many / c->user_hours : 0);
}

/* Where each of a kind's steps that names a path (a CREATE) works: its depth below the user's
 * home, -1 outside it or not known (none: a kind that names no path). */
static void depths(struct pv_buf *b, const struct pv_learn_kind_shape *s)
{
	int d[PV_LEARN_KIND_STEPS];
	unsigned n = pv_learn_kind_depths(s, d);

	if (!n)
		return;
	pv_buf_addstr(b, "    depths: [");
	for (unsigned j = 0; j < n; j++)
		pv_buf_addf(b, "%s%d", j ? ", " : "", d[j]);
	pv_buf_addf(b,
		    "] # each CREATE's depth below the user's home: 0 the home, %d that deep or "
		    "deeper, -1 outside it or not known\n",
		    PV_PLAYBOOK_WORKLOAD_DEEP);
}

static void kinds(struct pv_buf *b, const struct pv_learn_counts *c)
{
	const struct pv_learn_kinds *k = &c->kinds;
	const struct pv_learn_kinds_written *w = &k->w;
	uint64_t rest = k->other + w->past_activities;
	char name[PV_LEARN_KIND_NAME_MAX];

	if (k->n && !w->order) { /* not settled: out of memory */
		b->failed = true;
		return;
	}
	pv_buf_addstr(b, "kinds: # an activity's commands, repeats folded (READ+), the most "
			 "frequent first\n");
	for (size_t i = 0; i < w->kept; i++) {
		const struct pv_learn_kind *kd = &k->k[w->order[i]];

		pv_learn_kind_name(&kd->shape, name, sizeof(name));
		pv_buf_addf(b, "  - commands: %s\n", name);
		pv_buf_addf(b,
			    "    weight: %.4f # %% of the activities\n"
			    "    per_user_hour: %.6g\n"
			    "    requests: %.4g\n"
			    "    seconds: %.6g\n",
			    pv_learn_pct(kd->count, c->activities),
			    pv_learn_per_user_hour(c, kd->count),
			    (double)kd->requests / (double)kd->count,
			    kd->seconds / (double)kd->count);
		pv_buf_addstr(b, "    counts: [");
		for (unsigned j = 0; j < kd->shape.n; j++)
			pv_buf_addf(b, "%s%.4g", j ? ", " : "",
				    (double)kd->step_requests[j] / (double)kd->count);
		pv_buf_addstr(b, "] # each command's requests, on average\n");
		depths(b, &kd->shape);
		if (kd->think.n)
			pv_buf_addf(b,
				    "    think: %.6g # seconds from its last request to the user's "
				    "next activity, the median of %llu\n",
				    pv_learn_hist_quantile(&kd->think, 0.5),
				    (unsigned long long)kd->think.n);
		stands_for(b, c, kd, i);
	}
	if (rest)
		pv_buf_addf(
			b,
			"other_kinds: {weight: %.4f, activities: %llu, requests: %llu, "
			"stood_in_for: %llu, made_as_another_command: %.4f} # past the %d "
			"written: each of those told apart replayed as the kind written nearest "
			"its commands (that kind's stands_for: its weight and rate added, as many "
			"of its activities as their requests make), the %% of all requests made "
			"as another command so; those past the %d told apart not replayed\n",
			pv_learn_pct(rest, c->activities), (unsigned long long)rest,
			(unsigned long long)(k->other_requests + w->past_requests),
			(unsigned long long)w->past_activities, 100 * w->moved,
			PV_LEARN_KINDS_WRITTEN, PV_LEARN_KINDS_MAX);
}

/* Change notify: the watches, how long each stayed and what ended it. */
static void notify(struct pv_buf *out, const struct pv_learn_counts *c)
{
	const struct pv_learn_notify *n = &c->notify;

	pv_buf_addf(out,
		    "  change_notify: # the watches (CHANGE_NOTIFY requests), how long each "
		    "stayed (its request to its answer) and what ended it, as a %% of those "
		    "answered\n"
		    "    watches: %llu\n    whole_subtree: %llu\n"
		    "    held_seconds: {median: %.6g, p95: %.6g}\n    answered: {",
		    (unsigned long long)c->req[15], (unsigned long long)n->tree,
		    pv_learn_hist_quantile(&n->held, 0.5), pv_learn_hist_quantile(&n->held, 0.95));
	for (int i = 0; i < PV_LEARN_NOTIFY_ENDS; i++)
		pv_buf_addf(out, "%s%s: %.4f", i ? ", " : "", pv_learn_notify_ends[i],
			    pv_learn_pct(n->ended[i], n->held.n));
	pv_buf_addf(out, "}\n    still_watching: %llu # when the capture ended\n",
		    (unsigned long long)n->open);
}

int pv_learn_workload(const struct pv_learn_counts *c, const char *source, const char *version,
		      struct pv_buf *out)
{
	uint64_t reqs = pv_learn_requests(c);

	pv_buf_addf(out,
		    "# The workload provision %s learned from a capture (docs/learn.md): what its "
		    "users did,\n"
		    "# per user. No name, path or byte of the capture is in it: users are counted, "
		    "never named,\n"
		    "# and kinds are command sequences. Weights may be edited; the playbook's\n"
		    "# load.workload: FILE replays it at any number of users.\n",
		    version);
	pv_buf_addstr(out, "source:\n  capture: ");
	quoted(out, source);
	pv_buf_addf(out,
		    "\n  seconds: %.6g\n  users: %zu\n  requests: %llu\n  answered: %llu\n"
		    "  not_read: {encrypted_frames: %llu, smb1_frames: %llu, lost_bytes: %llu}\n",
		    c->frames ? c->t1 - c->t0 : 0.0, c->users.n, (unsigned long long)reqs,
		    (unsigned long long)c->matched, (unsigned long long)c->enc_frames,
		    (unsigned long long)c->smb1_frames, (unsigned long long)c->gap_bytes);
	pv_buf_addf(out,
		    "users: # each user's rates over its own hours (its first request to its "
		    "last): the median and the p95 of the users\n"
		    "  requests_per_hour: {median: %.6g, p95: %.6g}\n"
		    "  logons_per_hour: {median: %.6g, p95: %.6g}\n"
		    "  listings_per_hour: {median: %.6g, p95: %.6g} # QUERY_DIRECTORY requests\n"
		    "  notifies_per_hour: {median: %.6g, p95: %.6g} # CHANGE_NOTIFY requests\n"
		    "  logons_again_per_hour: {median: %.6g, users: %zu} # over a user's time at "
		    "work, of the users with two or more: what a replay makes\n",
		    c->req_per_user_hour[0], c->req_per_user_hour[1], c->logons_per_user_hour[0],
		    c->logons_per_user_hour[1], c->listings_per_user_hour[0],
		    c->listings_per_user_hour[1], c->notifies_per_user_hour[0],
		    c->notifies_per_user_hour[1], c->relogons_per_user_hour, c->relogon_users);
	times(out, "session_seconds", &c->session_times, " # logon to logoff, sessions whole");
	pv_buf_addf(out,
		    "activity: # a user's requests more than gap seconds apart start another "
		    "activity, unless it holds a file open (up to 10 gaps, 1 s at least)\n"
		    "  gap: %.6g\n  gap_learned: %s\n  activities: %llu\n",
		    c->activity_gap, c->gap_learned ? "true" : "false",
		    (unsigned long long)c->activities);
	quantiles(out, "within", c->within, &c->within_q,
		  "gaps between an activity's requests, from one to the next");
	within_after(out, c);
	quantiles(out, "think", c->think, &c->think_q,
		  "gaps between activities, from one's last request to the next one's first");
	quantiles(out, "client", c->client, &c->client_q,
		  "within one, an answer to the next request: the client's own time");
	if (c->has_kinds)
		kinds(out, c);
	pv_buf_addstr(out, "mix: # % of the requests, by command\n");
	for (uint16_t i = 0; i < PV_SMB_TRACE_NCMD; i++)
		if (c->req[i])
			pv_buf_addf(out, "  %s: %.4f\n", pv_smb_trace_cmd_name(i),
				    pv_learn_pct(c->req[i], reqs));
	pv_buf_addstr(out,
		      "sizes: # bytes: reads asked, writes sent; bucket N (a power of two) holds "
		      "those from N/2 up to below N, bucket 0 the empty ones, each as a % of "
		      "them, and their mean size (means: what a replay asks on average)\n");
	sizes(out, "read", &c->read_sizes);
	sizes(out, "write", &c->write_sizes);
	pv_buf_addf(out, "files:\n  still_open: %llu # when the capture ended\n",
		    (unsigned long long)c->still_open);
	if (c->file_opens)
		pv_buf_addf(
			out,
			"  opens: {of: %llu, leased: %.6g} # opens of a file to read or to edit "
			"in place (OPEN, not a stat open nor a folder) granted: how many, and the "
			"%% of them that asked a lease or an oplock, as many as a replay asks\n",
			(unsigned long long)c->file_opens,
			pv_learn_pct(c->file_opens_leased, c->file_opens));
	times(out, "open_seconds", &c->open_times, " # CREATE's answer to the CLOSE");
	pv_buf_addf(out,
		    "  listings_per_folder: {median: %g, p95: %g, folders: %llu} # how often each "
		    "folder listed was: an open of it and its QUERY_DIRECTORYs a listing\n",
		    c->listings_per_folder[0], c->listings_per_folder[1],
		    (unsigned long long)c->folders_listed);
	notify(out, c);
	fileset(out, c);
	if (pv_buf_failed(out))
		return pv_error(PV_EIO, "out of memory while writing the learned workload");
	return PV_OK;
}
