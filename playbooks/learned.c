/* playbooks/learned.c: a learned workload (`provision learn -o`, learn/workload.c writes it)
 * read for load.workload: its kinds, its read and write sizes and its users' logons again an
 * hour (see workload.h). What the replay does not use (source, activity, mix, files, the users'
 * other rates) is passed over, and a person's edits are checked as the playbook's are: where,
 * what, and what is expected. */
#include "playbooks/workload.h"

#include "playbooks/schema.h"
#include "playbooks/tree.h"
#include "util/err.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = {"source", "users", "activity", "kinds",	 "other_kinds",
				       "mix",	 "sizes", "files",    "fileset", NULL};
static const char *const kind_keys[] = {"commands", "weight", "per_user_hour", "requests",
					"seconds",  "counts", "think",	       "stands_for",
					"depths",   NULL};
static const char *const stands_keys[] = {"activities", "requests", "weight", "per_user_hour",
					  NULL};
static const char *const size_keys[] = {"read", "write", NULL};
static const char *const again_keys[] = {"median", "users", NULL};
static const char *const opens_keys[] = {"of", "leased", NULL};
static const char *const activity_keys[] = {"gap",	    "gap_learned", "activities", "within",
					    "within_after", "think",	   "client",	 NULL};
static const char *const times_keys[] = {"median", "p95", "quantiles", NULL};
static const char *const dist_keys[] = {"n", "median_up_to", "p95_up_to", "buckets", "means", NULL};

/* A number as learn writes it (%g: 0.25, 136961, 1.2e+06) from lo to hi. */
static int number_at(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
		     const char *path, double lo, double hi, double *dst)
{
	char expect[96];
	const char *s;
	char *end;
	int r;

	snprintf(expect, sizeof(expect), "a number from %g to %g", lo, hi);
	if ((r = pv_playbook_schema_text_at(sc, v, path, expect, &s)))
		return r;
	errno = 0;
	*dst = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(*dst) || *dst < lo || *dst > hi)
		return pv_playbook_schema_fail(sc, v, "'%s' is '%s'; expected %s", path, s, expect);
	return 0;
}

static int number(struct pv_playbook_schema *sc, const struct pv_playbook_node *map,
		  const char *path, const char *key, double lo, double hi, double *dst)
{
	const struct pv_playbook_node *v = pv_playbook_tree_get(map, key);
	char p[128];

	if (!v)
		return 0;
	pv_playbook_schema_key_path(p, sizeof(p), path, key);
	return number_at(sc, v, p, lo, hi, dst);
}

/* The code under below of the command a learned kind replays named w (as learn writes it:
 * pv_playbook_workload_learned_command), else below. */
static unsigned command_code(const char *w, unsigned below)
{
	unsigned code;

	for (code = 0; code < below; code++)
		if (pv_playbook_workload_learned_command(code) &&
		    !strcmp(w, pv_playbook_workload_learned_command(code)))
			break;
	return code;
}

/* "CREATE QUERY_INFO READ+ CLOSE ..." into k: the commands replayed, "+" a repeat, the cut
 * mark "..." last (*cut); those the driver makes itself (logons, tree connects) left out.
 * at[i]: the place in the text of the command kept as step i; *words: the commands read. */
static int commands(struct pv_playbook_schema *sc, const struct pv_playbook_node *v,
		    const char *path, struct pv_playbook_workload_learned_kind *k, unsigned *at,
		    unsigned *words, bool *cut)
{
	const char *s, *p;
	int r;

	*words = 0;
	*cut = false;
	if ((r = pv_playbook_schema_text_at(sc, v, path, "SMB2 commands such as CREATE READ+ CLOSE",
					    &s)))
		return r;
	k->n = 0;
	for (p = s; *p;) {
		char w[32];
		size_t len = strcspn(p, " ");
		bool repeat = len > 1 && p[len - 1] == '+';
		unsigned code;

		if (!len) {
			p++;
			continue;
		}
		if (len >= sizeof(w))
			len = sizeof(w) - 1;
		memcpy(w, p, len - repeat);
		w[len - repeat] = '\0';
		p += strcspn(p, " ");
		if (!strcmp(w, "...") && !repeat) {
			*cut = true;
			continue;
		}
		(*words)++;
		if ((code = command_code(w, 0x80)) == 0x80) {
			static const char *const others[] = {
				"NEGOTIATE",	"SESSION_SETUP",   "LOGOFF",
				"TREE_CONNECT", "TREE_DISCONNECT", "CANCEL",
				"ECHO",		"OPLOCK_BREAK",	   NULL};

			if (pv_playbook_schema_known(w, others))
				continue; /* the driver's own */
			return pv_playbook_schema_fail(
				sc, v,
				"'%s' has '%s', which is no SMB2 command; expected "
				"command names as learn writes them (CREATE, READ+, "
				"QUERY_DIRECTORY, ...)",
				path, w);
		}
		if (k->n == PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS)
			return pv_playbook_schema_fail(
				sc, v,
				"'%s' has more than %d commands to replay; expected "
				"at most %d, as learn writes them",
				path, PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS,
				PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS);
		at[k->n] = *words - 1;
		k->step[k->n++] =
			(uint8_t)(code | (repeat ? PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT : 0));
	}
	return 0;
}

/* counts: [N, ...], one a command (words of them), each 1 (a command) or 2 and more (a
 * repeat) on average; those of the steps kept into k->count, and a cut kind's requests past
 * them into k->rest. */
static int counts(struct pv_playbook_schema *sc, const struct pv_playbook_node *v, const char *path,
		  struct pv_playbook_workload_learned_kind *k, const unsigned *at, unsigned words,
		  bool cut)
{
	double sum = 0;
	double c[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS];
	int r;

	if (words > sizeof(c) / sizeof(c[0]))
		return pv_playbook_schema_fail(
			sc, v, "'%s' counts more than %d commands, the most a kind has", path,
			PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS);
	if (v->kind != PV_PLAYBOOK_NODE_SEQUENCE || v->n != words)
		return pv_playbook_schema_fail(
			sc, v, "'%s' is %s; expected a list of %u numbers, one a command", path,
			v->kind == PV_PLAYBOOK_NODE_SEQUENCE ? "a list of another length"
							     : pv_playbook_schema_kind(v),
			words);
	for (size_t i = 0; i < v->n; i++) {
		char p[96];

		snprintf(p, sizeof(p), "%s.%zu", path, i);
		if ((r = number_at(sc, v->items[i], p, 1, 1e9, &c[i])))
			return r;
	}
	for (unsigned i = 0; i < k->n; i++)
		k->count[i] = c[at[i]];
	for (unsigned i = 0; i < words; i++)
		sum += c[i];
	if (cut && k->requests > sum)
		k->rest = k->requests - sum;
	return 0;
}

/* depths: [D, ...], one a step that names a path (a CREATE), each from -1 (outside the home)
 * to PV_PLAYBOOK_WORKLOAD_DEEP, into k->depth. */
static int depths(struct pv_playbook_schema *sc, const struct pv_playbook_node *v, const char *path,
		  struct pv_playbook_workload_learned_kind *k)
{
	unsigned names = 0, at = 0;
	int r;

	for (unsigned i = 0; i < k->n; i++)
		names += PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES(k->step[i] &
							    PV_PLAYBOOK_WORKLOAD_LEARNED_CMD);
	if (v->kind != PV_PLAYBOOK_NODE_SEQUENCE || v->n != names)
		return pv_playbook_schema_fail(
			sc, v,
			"'%s' is %s; expected a list of %u depths, one a CREATE (from -1, "
			"outside the home, to %d)",
			path,
			v->kind == PV_PLAYBOOK_NODE_SEQUENCE ? "a list of another length"
							     : pv_playbook_schema_kind(v),
			names, PV_PLAYBOOK_WORKLOAD_DEEP);
	for (unsigned i = 0; i < k->n; i++) {
		char p[96];
		double d;

		if (!PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES(k->step[i] &
							PV_PLAYBOOK_WORKLOAD_LEARNED_CMD))
			continue;
		snprintf(p, sizeof(p), "%s.%u", path, at);
		if ((r = number_at(sc, v->items[at], p, PV_PLAYBOOK_WORKLOAD_OUT,
				   PV_PLAYBOOK_WORKLOAD_DEEP, &d)))
			return r;
		if (d != floor(d))
			return pv_playbook_schema_fail(sc, v->items[at],
						       "'%s' is %g; expected a whole depth", p, d);
		k->depth[i] = (int8_t)d;
		at++;
	}
	k->depths = true;
	return 0;
}

static int kinds(struct pv_playbook_schema *sc, const struct pv_playbook_node *seq,
		 struct pv_playbook_workload_learned *l)
{
	int r;

	if (seq->kind != PV_PLAYBOOK_NODE_SEQUENCE)
		return pv_playbook_schema_fail(sc, seq, "'kinds' is %s; expected a list of kinds",
					       pv_playbook_schema_kind(seq));
	for (size_t i = 0; i < seq->n; i++) {
		const struct pv_playbook_node *m = seq->items[i];
		struct pv_playbook_workload_learned_kind k = {0};
		const struct pv_playbook_node *cn;
		double rate = 0, weight = 0, think = 0;
		unsigned at[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS], words;
		bool cut;
		char path[64];

		snprintf(path, sizeof(path), "kinds.%zu", i);
		if ((r = pv_playbook_schema_keys(
			     sc, m, path, kind_keys,
			     "a mapping {commands, weight, per_user_hour, ...}")) ||
		    (r = pv_playbook_schema_require(sc, m, path, "commands",
						    "CREATE READ+ CLOSE")) ||
		    (r = pv_playbook_schema_require(sc, m, path, "weight",
						    "N (% of the activities)")))
			return r;
		snprintf(path, sizeof(path), "kinds.%zu.commands", i);
		if ((r = commands(sc, pv_playbook_tree_get(m, "commands"), path, &k, at, &words,
				  &cut)))
			return r;
		snprintf(path, sizeof(path), "kinds.%zu", i);
		if ((r = number(sc, m, path, "weight", 0, 100, &weight)) ||
		    (r = number(sc, m, path, "per_user_hour", 0, 1e9, &rate)) ||
		    (r = number(sc, m, path, "requests", 0, 1e9, &k.requests)) ||
		    (r = number(sc, m, path, "seconds", 0, 1e4, &k.seconds)) ||
		    /* its own think time: checked, not replayed (docs/learn.md) */
		    (r = number(sc, m, path, "think", 0, 1e4, &think)))
			return r;
		snprintf(path, sizeof(path), "kinds.%zu.counts", i);
		if ((cn = pv_playbook_tree_get(m, "counts")) &&
		    (r = counts(sc, cn, path, &k, at, words, cut)))
			return r;
		snprintf(path, sizeof(path), "kinds.%zu.depths", i);
		if ((cn = pv_playbook_tree_get(m, "depths")) && (r = depths(sc, cn, path, &k)))
			return r;
		/* the kinds not written that this one stands for: replayed as it */
		if ((cn = pv_playbook_tree_get(m, "stands_for"))) {
			double more = 0, more_rate = 0;

			snprintf(path, sizeof(path), "kinds.%zu.stands_for", i);
			if ((r = pv_playbook_schema_keys(
				     sc, cn, path, stands_keys,
				     "a mapping {weight, per_user_hour, ...}")) ||
			    (r = number(sc, cn, path, "weight", 0, 1e9, &more)) ||
			    (r = number(sc, cn, path, "per_user_hour", 0, 1e9, &more_rate)))
				return r;
			weight += more;
			rate += more_rate;
		}
		if (!k.n || weight <= 0)
			continue; /* nothing to replay: logons, tree connects */
		if (l->n == PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS)
			return pv_playbook_schema_fail(
				sc, m,
				"'kinds' has more than %d kinds to replay; expected "
				"at most %d (learn writes the most frequent %d)",
				PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS,
				PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS,
				PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS);
		k.weight = weight;
		l->kind[l->n++] = k;
		l->per_user_hour += rate;
	}
	if (!l->n)
		return pv_playbook_schema_fail(
			sc, seq,
			"'kinds' has no kind with a command to replay (only logons "
			"and tree connects, or every weight 0); expected a workload "
			"learned from a capture of file traffic");
	return 0;
}

/* sizes.X.KEY: a mapping {SIZE: V} (the key N for the sizes from N/2 up to below N, 0 for the
 * empty ones), each V from lo to hi into v[its bucket]. */
static int by_bucket(struct pv_playbook_schema *sc, const struct pv_playbook_node *m,
		     const char *path, const char *key, double lo, double hi, const char *what,
		     double *v)
{
	const struct pv_playbook_node *b = pv_playbook_tree_get(m, key);
	char p[64];
	int r;

	if (!b)
		return 0;
	snprintf(p, sizeof(p), "%s.%s", path, key);
	if (b->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(sc, b, "'%s' is %s; expected a mapping {SIZE: %s}",
					       p, pv_playbook_schema_kind(b), what);
	for (size_t i = 0; i < b->n; i++) {
		char *end, kp[96];
		unsigned long long n;
		int k = 0;

		errno = 0;
		n = strtoull(b->keys[i]->text, &end, 10);
		while (k < PV_PLAYBOOK_WORKLOAD_SIZE_BINS && n > (k ? 1ull << k : 0ull))
			k++;
		if (end == b->keys[i]->text || *end || errno ||
		    k == PV_PLAYBOOK_WORKLOAD_SIZE_BINS || n != (k ? 1ull << k : 0ull))
			return pv_playbook_schema_fail(
				sc, b->keys[i],
				"'%s' has the bucket '%s'; expected 0 or a power of "
				"two from 2 to %llu",
				p, b->keys[i]->text, 1ull << (PV_PLAYBOOK_WORKLOAD_SIZE_BINS - 1));
		snprintf(kp, sizeof(kp), "%s.%s", p, b->keys[i]->text);
		if ((r = number_at(sc, b->items[i], kp, lo, hi, &v[k])))
			return r;
	}
	return 0;
}

/* sizes.read or sizes.write: each power-of-two bucket's share (buckets) and mean size (means) */
static int dist(struct pv_playbook_schema *sc, const struct pv_playbook_node *m, const char *path,
		double *pct, double *mean)
{
	int r;

	if ((r = pv_playbook_schema_keys(sc, m, path, dist_keys, "a mapping {n, buckets, ...}")) ||
	    (r = by_bucket(sc, m, path, "buckets", 0, 100, "PERCENT", pct)))
		return r;
	if ((r = by_bucket(sc, m, path, "means", 0, 1e12, "BYTES", mean)))
		return r;
	/* a mean within its bucket: from N/2 up to N (the empty ones' 0) */
	for (int k = 1; k < PV_PLAYBOOK_WORKLOAD_SIZE_BINS; k++)
		if (mean[k] > 0 &&
		    (mean[k] < (double)(1ull << (k - 1)) || mean[k] > (double)(1ull << k))) {
			char p[96];

			snprintf(p, sizeof(p), "%s.means.%llu", path, 1ull << k);
			return pv_playbook_schema_fail(
				sc, pv_playbook_tree_get(m, "means"),
				"'%s' is %g; expected a size from %llu to %llu, within its bucket",
				p, mean[k], 1ull << (k - 1), 1ull << k);
		}
	return 0;
}

/* activity.think or activity.client (what): its median and p95 (client's into l->client) and
 * its quantiles ({PERCENT: SECONDS}, from 0 to 100 percent, each after the last, the seconds
 * never fewer) into *out; none: left unlearned. */
static int times(struct pv_playbook_schema *sc, const struct pv_playbook_node *m, const char *what,
		 struct pv_playbook_workload_learned *l, struct pv_playbook_workload_quantiles *out)
{
	const struct pv_playbook_node *q;
	char path[64];
	int r;

	snprintf(path, sizeof(path), "activity.%s", what);
	if ((r = pv_playbook_schema_keys(sc, m, path, times_keys,
					 "a mapping {median, p95, quantiles}")))
		return r;
	if (!strcmp(what, "client") &&
	    ((r = number(sc, m, path, "median", 0, 60, &l->client[0])) ||
	     (r = number(sc, m, path, "p95", l->client[0], 3600, &l->client[1]))))
		return r;
	if (!(q = pv_playbook_tree_get(m, "quantiles")))
		return 0;
	snprintf(path, sizeof(path), "activity.%s.quantiles", what);
	if (q->kind != PV_PLAYBOOK_NODE_MAPPING || q->n < 2 ||
	    q->n > PV_PLAYBOOK_WORKLOAD_QUANTILES)
		return pv_playbook_schema_fail(
			sc, q,
			"'%s' is %s; expected a mapping {PERCENT: SECONDS} of 2 to %d, from 0 to "
			"100",
			path,
			q->kind == PV_PLAYBOOK_NODE_MAPPING ? "a mapping of another size"
							    : pv_playbook_schema_kind(q),
			PV_PLAYBOOK_WORKLOAD_QUANTILES);
	for (size_t i = 0; i < q->n; i++) {
		double lo = i ? out->level[i - 1] : 0, at;
		char kp[96];

		if ((r = number_at(sc, q->keys[i], path, lo, 100, &at)))
			return r;
		if ((i && !(at > lo)) || (i == 0 && at != 0) || (i == q->n - 1 && at != 100))
			return pv_playbook_schema_fail(
				sc, q->keys[i],
				"'%s' has the level %s after %g; expected the percents in order, "
				"from 0 to 100",
				path, q->keys[i]->text, lo);
		out->level[i] = at;
		snprintf(kp, sizeof(kp), "%s.%s", path, q->keys[i]->text);
		if ((r = number_at(sc, q->items[i], kp, i ? out->q[i - 1] : 0, 1e4, &out->q[i])))
			return r;
	}
	if (!(out->q[q->n - 1] > 0))
		return pv_playbook_schema_fail(
			sc, q, "'%s' has no time over 0; expected the times learn wrote", path);
	out->n = (unsigned)q->n;
	return 0;
}

/* activity.within_after: {COMMAND: {median, p95, quantiles}, ...}, each command one a learned
 * kind replays (CREATE, READ, ...), each once, into l->within_after by its code. */
static int within_after(struct pv_playbook_schema *sc, const struct pv_playbook_node *m,
			struct pv_playbook_workload_learned *l)
{
	if (m->kind != PV_PLAYBOOK_NODE_MAPPING)
		return pv_playbook_schema_fail(
			sc, m,
			"'activity.within_after' is %s; expected a mapping {COMMAND: {median, "
			"p95, quantiles}}",
			pv_playbook_schema_kind(m));
	for (size_t i = 0; i < m->n; i++) {
		const char *name = m->keys[i]->text;
		unsigned code;
		char what[48];
		int r;

		if ((code = command_code(name, PV_PLAYBOOK_WORKLOAD_CMDS)) ==
		    PV_PLAYBOOK_WORKLOAD_CMDS)
			return pv_playbook_schema_fail(
				sc, m->keys[i],
				"'activity.within_after' has '%s', which is no SMB2 command a kind "
				"replays; expected command names as learn writes them (CREATE, "
				"READ, "
				"QUERY_DIRECTORY, ...)",
				name);
		if (l->within_after[code].n)
			return pv_playbook_schema_fail(
				sc, m->keys[i],
				"'activity.within_after' has '%s' twice; expected it once", name);
		snprintf(what, sizeof(what), "within_after.%s", name);
		if ((r = times(sc, m->items[i], what, l, &l->within_after[code])))
			return r;
		if (!l->within_after[code].n)
			return pv_playbook_schema_fail(sc, m->items[i],
						       "'activity.%s' has no quantiles; expected "
						       "them, as learn writes them",
						       what);
	}
	return 0;
}

int pv_playbook_workload_learned_parse(const char *name, const char *text, size_t len,
				       struct pv_playbook_workload_learned *out)
{
	struct pv_playbook_schema sc = {.name = name, .doc = "the learned workload"};
	const struct pv_playbook_node *k, *s;
	struct pv_playbook_node *root = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = pv_playbook_tree_parse(name, text, len, &root)))
		return r;
	if ((r = pv_playbook_schema_keys(&sc, root, "", top_keys,
					 "a workload as `provision learn -o` writes it")))
		goto out;
	if (!(k = pv_playbook_tree_get(root, "kinds"))) {
		r = pv_playbook_schema_fail(
			&sc, root,
			"no 'kinds' in it; expected a workload that `provision learn "
			"CAPTURE -o FILE` wrote from a capture of SMB2 file traffic");
		goto out;
	}
	if ((r = kinds(&sc, k, out)))
		goto out;
	/* its fileset is read as a fileset's (fileset/), where server.fileset names this file */
	out->fileset = pv_playbook_tree_get(root, "fileset") != NULL;
	if ((s = pv_playbook_tree_get(root, "users")) &&
	    (s = pv_playbook_tree_get(s, "logons_again_per_hour")) &&
	    ((r = pv_playbook_schema_keys(&sc, s, "users.logons_again_per_hour", again_keys,
					  "a mapping {median, users}")) ||
	     (r = number(&sc, s, "users.logons_again_per_hour", "median", 0, 1e9,
			 &out->relogons_per_user_hour))))
		goto out;
	if ((s = pv_playbook_tree_get(root, "files")) && (s = pv_playbook_tree_get(s, "opens"))) {
		double leased = 100;

		if ((r = pv_playbook_schema_keys(&sc, s, "files.opens", opens_keys,
						 "a mapping {of, leased}")) ||
		    (r = number(&sc, s, "files.opens", "leased", 0, 100, &leased)))
			goto out;
		out->unleased = 100 - leased;
	}
	if ((s = pv_playbook_tree_get(root, "activity")) &&
	    ((r = pv_playbook_schema_keys(
		      &sc, s, "activity", activity_keys,
		      "a mapping {gap, within, within_after, think, client, ...}")) ||
	     (r = number(&sc, s, "activity", "gap", 0, 1e4, &out->gap)) ||
	     (pv_playbook_tree_get(s, "think") &&
	      (r = times(&sc, pv_playbook_tree_get(s, "think"), "think", out, &out->think))) ||
	     (pv_playbook_tree_get(s, "within") &&
	      (r = times(&sc, pv_playbook_tree_get(s, "within"), "within", out, &out->within))) ||
	     (pv_playbook_tree_get(s, "within_after") &&
	      (r = within_after(&sc, pv_playbook_tree_get(s, "within_after"), out))) ||
	     (pv_playbook_tree_get(s, "client") &&
	      (r = times(&sc, pv_playbook_tree_get(s, "client"), "client", out, &out->client_q)))))
		goto out;
	if ((s = pv_playbook_tree_get(root, "sizes"))) {
		const struct pv_playbook_node *rd = pv_playbook_tree_get(s, "read"),
					      *wr = pv_playbook_tree_get(s, "write");

		if ((r = pv_playbook_schema_keys(&sc, s, "sizes", size_keys,
						 "a mapping {read, write}")) ||
		    (rd && (r = dist(&sc, rd, "sizes.read", out->read, out->read_mean))) ||
		    (wr && (r = dist(&sc, wr, "sizes.write", out->write, out->write_mean))))
			goto out;
	}
out:
	pv_playbook_tree_free(root);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}
