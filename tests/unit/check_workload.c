/* tests/unit/check_workload.c: the learned workload as YAML (learn/workload.c): every figure of
 * the counts where it belongs, the kinds the most frequent first with their weights, what is
 * past PV_LEARN_KINDS_WRITTEN as one share, the capture's name quoted whatever it holds, and no
 * user's id anywhere in it; and read back for load.workload (playbooks/learned.c): what was
 * written is what is read, and an edit that breaks it is refused where it is. */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/kind.h"
#include "learn/learn.h"
#include "learn/workload.h"
#include "load/engine.h"
#include "playbooks/workload.h"
#include "smb/smb2.h"
#include "util/buf.h"
#include "util/err.h"

#define has(text, s) ck_assert_msg(strstr(text, s), "'%s' lacks '%s'", text, s)

/* How many times s stands in text. */
static int count(const char *text, const char *s)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, s)); p++)
		n++;
	return n;
}

/* Counts of two users over an hour: 40 activities of two kinds, a READ mix, sizes, times. */
static void counts(struct pv_learn_counts *c)
{
	struct pv_learn_kind_shape a = {0}, b = {0};

	memset(c, 0, sizeof(*c));
	c->frames = 100;
	c->t0 = 1000;
	c->t1 = 1000 + 3600;
	pv_learn_users_init(&c->users);
	ck_assert_int_ge(pv_learn_users_get(&c->users, "ntlm:0123456789ab", PV_LEARN_USER_NTLM), 0);
	ck_assert_int_ge(pv_learn_users_get(&c->users, "198.18.0.31", PV_LEARN_USER_ADDR), 0);
	c->req[SMB2_CREATE] = 30;
	c->req[SMB2_READ] = 50;
	c->req[SMB2_CLOSE] = 20;
	c->matched = 99;
	c->req_per_user_hour[0] = 50;
	c->req_per_user_hour[1] = 60;
	c->logons_per_user_hour[0] = 2;
	c->logons_per_user_hour[1] = 3;
	c->relogons_per_user_hour = 1.5;
	c->relogon_users = 1;
	c->listings_per_user_hour[0] = 12;
	c->listings_per_user_hour[1] = 14.5;
	c->notifies_per_user_hour[1] = 1;
	c->activity_gap = 0.5;
	c->gap_learned = true;
	c->activities = 40;
	c->within[0] = 0.001;
	c->within[1] = 0.01;
	c->think[0] = 2;
	c->think[1] = 30;
	for (int i = 0; i < PV_LEARN_THINK_LEVELS; i++) { /* 0.5 s to 20.5 s, steps of 1.25 s */
		struct pv_learn_levels *l[] = {&c->think_q,
					       &c->client_q,
					       &c->within_q,
					       &c->within_after_q[SMB2_CLOSE],
					       &c->within_after_q[SMB2_READ],
					       &c->within_after_q[SMB2_ECHO]};
		const double v[] = {0.5 + 1.25 * i,   0.0001 * (i + 1), 0.001 * (i + 1),
				    0.0001 * (i + 1), 0.002 * (i + 1),	0.002 * (i + 1)};

		for (size_t j = 0; j < sizeof(l) / sizeof(l[0]); j++) {
			l[j]->level[i] = pv_learn_think_levels[i];
			l[j]->q[i] = v[j];
			l[j]->n = PV_LEARN_THINK_LEVELS;
		}
	}
	c->within_after[SMB2_CLOSE][0] = 0.0005;
	c->within_after[SMB2_CLOSE][1] = 0.0012;
	/* gaps within an activity after a CLOSE, enough of them to be written; after a READ, one
	 * too few; after an ECHO, which no kind replays */
	for (int i = 0; i < PV_LEARN_WITHIN_MIN; i++) {
		pv_learn_hist_add(&c->act_within_after[SMB2_CLOSE], 0.0005);
		pv_learn_hist_add(&c->act_within_after[SMB2_ECHO], 0.0005);
		if (i)
			pv_learn_hist_add(&c->act_within_after[SMB2_READ], 0.01);
	}
	c->user_hours = 2; /* the two users, each at work for the hour */
	c->folders_listed = 12;
	c->listings_per_folder[0] = 2;
	c->listings_per_folder[1] = 7;
	c->client[0] = 0.0002;
	c->client[1] = 0.004;
	pv_learn_kinds_init(&c->kinds);
	pv_learn_kind_shape_add(&a, SMB2_CREATE);
	pv_learn_kind_shape_depth(&a, 2); /* a file two levels down in the home */
	pv_learn_kind_shape_add(&a, SMB2_READ);
	pv_learn_kind_shape_add(&a, SMB2_READ);
	pv_learn_kind_shape_add(&a, SMB2_CLOSE);
	/* its file replaced: learn gives CREATE with its disposition's bits */
	pv_learn_kind_shape_add(&b, SMB2_CREATE | pv_playbook_workload_learned_disposition(5));
	pv_learn_kind_shape_add(&b, SMB2_CLOSE);
	for (int i = 0; i < 30; i++)
		pv_learn_kinds_add(&c->kinds, &a, 4, 0.02);
	for (int i = 0; i < 10; i++)
		pv_learn_kinds_add(&c->kinds, &b, 2, 0.001);
	/* think times after the first kind, none after the second */
	for (int i = 0; i < 3; i++)
		pv_learn_hist_add(&c->kinds.k[0].think, 1.5);
	c->has_kinds = true;
	ck_assert_int_eq(pv_learn_kinds_settle(&c->kinds), 0);
	pv_learn_sizes_add(&c->read_sizes, 3000);
	pv_learn_sizes_add(&c->read_sizes, 3000);
	pv_learn_sizes_add(&c->read_sizes, 65536);
	pv_learn_sizes_add(&c->read_sizes, 0);
	pv_learn_hist_add(&c->open_times, 0.002);
	c->still_open = 3;
	c->file_opens = 8; /* to read or edit in place: 2 asked a lease */
	c->file_opens_leased = 2;
}

START_TEST(yaml)
{
	struct pv_learn_counts c;
	struct pv_buf b = PV_BUF_INIT;

	counts(&c);
	ck_assert_int_eq(pv_learn_workload(&c, "srv.pcap", "9.9.9", &b), PV_OK);
	ck_assert_ptr_nonnull(b.data);
	has(b.data, "# The workload provision 9.9.9 learned from a capture");
	has(b.data, "source:\n  capture: \"srv.pcap\"\n  seconds: 3600\n  users: 2\n"
		    "  requests: 100\n  answered: 99\n");
	has(b.data,
	    "  requests_per_hour: {median: 50, p95: 60}\n"
	    "  logons_per_hour: {median: 2, p95: 3}\n"
	    "  listings_per_hour: {median: 12, p95: 14.5} # QUERY_DIRECTORY requests\n"
	    "  notifies_per_hour: {median: 0, p95: 1} # CHANGE_NOTIFY requests\n"
	    "  logons_again_per_hour: {median: 1.5, users: 1} # over a user's time at work, "
	    "of the users with two or more: what a replay makes\n");
	has(b.data, "  gap: 0.5\n  gap_learned: true\n  activities: 40\n");
	has(b.data,
	    "  within: {median: 0.001, p95: 0.01, quantiles: {0: 0.001, 5: 0.002, 10: "
	    "0.003, 20: 0.004, 30: 0.005, 40: 0.006, 50: 0.007, 60: 0.008, 70: 0.009, 80: "
	    "0.01, 90: 0.011, 95: 0.012, 98: 0.013, 99: 0.014, 99.5: 0.015, 99.9: 0.016, "
	    "100: 0.017}} # gaps between an activity's requests, from one to the next "
	    "(quantiles: at each percent, what a replay draws from)\n"
	    "  within_after: # of those, by the command of the request each follows (its "
	    "answer, then the client's time), where 50 or more: what a replay draws from "
	    "after its own\n"
	    "    CLOSE: {median: 0.0005, p95: 0.0012, quantiles: {0: 0.0001, 5: 0.0002, 10: "
	    "0.0003, 20: 0.0004, 30: 0.0005, 40: 0.0006, 50: 0.0007, 60: 0.0008, 70: 0.0009, "
	    "80: 0.001, 90: 0.0011, 95: 0.0012, 98: 0.0013, 99: 0.0014, 99.5: 0.0015, 99.9: "
	    "0.0016, 100: 0.0017}}\n  think: ");
	has(b.data, "  think: {median: 2, p95: 30, quantiles: {0: 0.5, 5: 1.75, 10: 3, 20: 4.25, "
		    "30: 5.5, 40: 6.75, 50: 8, 60: 9.25, 70: 10.5, 80: 11.75, 90: 13, 95: 14.25, "
		    "98: 15.5, 99: 16.75, 99.5: 18, 99.9: 19.25, 100: 20.5}} # gaps between "
		    "activities, from one's last request to the next one's first (quantiles: at "
		    "each percent, what a replay draws from)\n"
		    "  client: {median: 0.0002, p95: 0.004, quantiles: {0: 0.0001, 5: 0.0002, 10: "
		    "0.0003, 20: 0.0004, 30: 0.0005, 40: 0.0006, 50: 0.0007, 60: 0.0008, 70: "
		    "0.0009, 80: 0.001, 90: 0.0011, 95: 0.0012, 98: 0.0013, 99: 0.0014, 99.5: "
		    "0.0015, 99.9: 0.0016, 100: 0.0017}} # within one, an answer to the next "
		    "request: the client's own time (quantiles: at each percent, what a replay "
		    "draws from)\n");
	/* the kinds, the most frequent first: 30 of 40 activities, 30 an hour over 2 users =
	 * 15 per user-hour */
	has(b.data, "kinds:");
	has(b.data, "  - commands: CREATE READ+ CLOSE\n    weight: 75.0000 # % of the activities\n"
		    "    per_user_hour: 15\n    requests: 4\n    seconds: 0.02\n"
		    "    counts: [1, 2, 1] # each command's requests, on average\n"
		    "    depths: [2] # each CREATE's depth below the user's home: 0 the home, 7 "
		    "that deep or deeper, -1 outside it or not known\n"
		    "    think: 1.49624 # seconds from its last request to the user's next "
		    "activity, the median of 3\n"
		    "  - commands: CREATE(OVERWRITE_IF) CLOSE\n    weight: 25.0000");
	/* the second kind's CREATE: its depth not known */
	has(b.data, "CREATE(OVERWRITE_IF) CLOSE\n    weight: 25.0000 # % of the activities\n"
		    "    per_user_hour: 5\n    requests: 2\n    seconds: 0.001\n"
		    "    counts: [1, 1] # each command's requests, on average\n"
		    "    depths: [-1] #");
	/* none after the second kind: no think time written for it */
	ck_assert_ptr_null(strstr(strstr(b.data, "CREATE(OVERWRITE_IF) CLOSE"), "    think:"));
	ck_assert_ptr_null(strstr(b.data, "other_kinds"));
	has(b.data, "mix: # % of the requests, by command\n  CREATE: 30.0000\n  CLOSE: 20.0000\n"
		    "  READ: 50.0000\n");
	/* 3000 twice in [2048, 4096), 65536 in [65536, 131072), 0 in bucket 0; each bucket's
	 * mean */
	has(b.data, "  read: {n: 4, median_up_to: 4096, p95_up_to: 131072, buckets: {0: 25.00, "
		    "4096: 50.00, 131072: 25.00}, means: {0: 0.0, 4096: 3000.0, 131072: "
		    "65536.0}}\n");
	has(b.data, "  write: {n: 0, median_up_to: 0, p95_up_to: 0, buckets: {}, means: {}}\n");
	has(b.data,
	    "  listings_per_folder: {median: 2, p95: 7, folders: 12} # how often each folder "
	    "listed was: an open of it and its QUERY_DIRECTORYs a listing\n");
	has(b.data, "files:\n  still_open: 3");
	has(b.data, "\n  opens: {of: 8, leased: 25} # opens of a file to read or to edit in place");
	has(b.data, "  open_seconds: {median: ");
	/* no user's id */
	ck_assert_ptr_null(strstr(b.data, "0123456789ab"));
	ck_assert_ptr_null(strstr(b.data, "198.18.0.31"));
	pv_buf_release(&b, 0);

	/* a name with a quote, a backslash and a newline stays one quoted scalar */
	ck_assert_int_eq(pv_learn_workload(&c, "a\"b\\c\nd.pcap", "1", &b), PV_OK);
	has(b.data, "  capture: \"a\\\"b\\\\c\\x0ad.pcap\"\n");
	pv_buf_release(&b, 0);
	pv_learn_kinds_release(&c.kinds);
	pv_learn_users_release(&c.users);
}
END_TEST

/* More kinds than are written: the rest as one share, the written ones the most frequent. */
START_TEST(many_kinds)
{
	struct pv_learn_counts c;
	struct pv_buf b = PV_BUF_INIT;
	struct pv_playbook_workload_learned l;
	double weights = 0;

	counts(&c);
	pv_learn_kinds_release(&c.kinds);
	pv_learn_kinds_init(&c.kinds);
	c.activities = 0;
	for (int k = 0; k < PV_LEARN_KINDS_WRITTEN + 6; k++) {
		struct pv_learn_kind_shape s = {0};

		/* kind k: READ or WRITE by each of k's 9 bits, a CLOSE after each (nothing
		 * folds: 18 steps), seen once, but the first six kinds 1000 times each */
		for (int i = 0; i < 9; i++) {
			pv_learn_kind_shape_add(&s, (k >> i) & 1 ? SMB2_READ : SMB2_WRITE);
			pv_learn_kind_shape_add(&s, SMB2_CLOSE);
		}
		for (int i = 0; i < (k < 6 ? 1000 : 1); i++) {
			pv_learn_kinds_add(&c.kinds, &s, 2, 0.001);
			c.activities++;
		}
	}
	ck_assert_int_eq(pv_learn_kinds_settle(&c.kinds), 0);
	ck_assert_int_eq(pv_learn_workload(&c, "x.pcap", "1", &b), PV_OK);
	ck_assert_int_eq(count(b.data, "  - commands: "), PV_LEARN_KINDS_WRITTEN);
	/* 262 kinds: the 6 seen 1000 times and 250 of the rest written, 6 left: 6 of 6256, each
	 * replayed as a kind written (every kind's commands in the same shares: none made as
	 * another command) */
	has(b.data, "other_kinds: {weight: 0.0959, activities: 6, requests: 12, stood_in_for: 6, "
		    "made_as_another_command: 0.0000}");
	ck_assert_int_eq(count(b.data, "    weight: 15.9847 "), 6);
	/* (the 6 past, the last by their shapes: WRITEs first, each READ once or twice of its 9:
	 * the first kinds written that read as often stand in) */
	ck_assert_int_eq(count(b.data, "    stands_for: {activities: "), 2);
	/* read back: the kinds past the written ones at their rate too, 6256 activities an hour
	 * over 2 users (6250 without them) */
	ck_assert_msg(pv_playbook_workload_learned_parse("w.yaml", b.data, b.len, &l) == PV_OK,
		      "%s", pv_errmsg());
	ck_assert_uint_eq(l.n, PV_LEARN_KINDS_WRITTEN);
	ck_assert_double_eq_tol(l.per_user_hour, 6256 / 2.0, 1e-6);
	for (unsigned i = 0; i < l.n; i++)
		weights += l.kind[i].weight;
	ck_assert_double_eq_tol(weights, 100, 0.02); /* each written to 4 decimals */
	pv_buf_release(&b, 0);
	pv_learn_kinds_release(&c.kinds);
	pv_learn_users_release(&c.users);
}
END_TEST

/* What learn writes, load.workload reads: the kinds' commands (repeats marked), weights and
 * requests, the rate of the kinds kept, each size bucket's share. */
START_TEST(read_back)
{
	struct pv_learn_counts c;
	struct pv_buf b = PV_BUF_INIT;
	struct pv_playbook_workload_learned l;
	struct pv_learn_kind_shape t = {0};

	counts(&c);
	/* a kind of logons only: written, not replayed */
	pv_learn_kind_shape_add(&t, SMB2_SESSION_SETUP);
	pv_learn_kind_shape_add(&t, SMB2_TREE_CONNECT);
	pv_learn_kinds_add(&c.kinds, &t, 2, 0.001);
	c.activities++;
	ck_assert_int_eq(pv_learn_kinds_settle(&c.kinds), 0);
	pv_learn_sizes_add(&c.write_sizes, 700);
	ck_assert_int_eq(pv_learn_workload(&c, "srv.pcap", "1", &b), PV_OK);
	ck_assert_msg(pv_playbook_workload_learned_parse("w.yaml", b.data, b.len, &l) == PV_OK,
		      "%s", pv_errmsg());
	ck_assert_uint_eq(l.n, 2);
	ck_assert_uint_eq(l.kind[0].n, 3);
	ck_assert_uint_eq(l.kind[0].step[0], SMB2_CREATE);
	ck_assert_uint_eq(l.kind[0].step[1], SMB2_READ | PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT);
	ck_assert_uint_eq(l.kind[0].step[2], SMB2_CLOSE);
	ck_assert_double_eq(l.kind[0].count[1], 2); /* READ+: two READs each time */
	/* its CREATE's depth below the home: 2; the second kind's not known (-1) */
	ck_assert(l.kind[0].depths && l.kind[1].depths);
	ck_assert_int_eq(l.kind[0].depth[0], 2);
	ck_assert_int_eq(l.kind[1].depth[0], PV_PLAYBOOK_WORKLOAD_OUT);
	ck_assert_double_eq_tol(l.kind[0].weight, 30.0 / 41 * 100, 1e-3);
	ck_assert_double_eq(l.kind[0].requests, 4);
	ck_assert_uint_eq(l.kind[1].n, 2);
	ck_assert_uint_eq(l.kind[1].step[0],
			  SMB2_CREATE | PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF);
	ck_assert_uint_eq(l.kind[1].step[1], SMB2_CLOSE);
	/* 30 and 10 activities an hour over 2 users; the logons' kind not counted */
	ck_assert_double_eq_tol(l.per_user_hour, 20, 1e-9);
	/* the users' logons again an hour (not their logons an hour: those count the first) */
	ck_assert_double_eq_tol(l.relogons_per_user_hour, c.relogons_per_user_hour, 1e-6);
	/* files.opens: 25% asked a lease, so 75% of the replay's opens ask none */
	ck_assert_double_eq_tol(l.unleased, 75, 1e-9);
	/* activity.client: what a replay waits between an activity's requests */
	ck_assert_double_eq_tol(l.client[0], 0.0002, 1e-12);
	ck_assert_double_eq_tol(l.client[1], 0.004, 1e-12);
	/* activity.think: the quantiles a replay draws the time between activities from */
	ck_assert_uint_eq(l.think.n, PV_LEARN_THINK_LEVELS);
	ck_assert_uint_eq(l.client_q.n, PV_LEARN_THINK_LEVELS);
	ck_assert_uint_eq(l.within.n, PV_LEARN_THINK_LEVELS);
	ck_assert_double_eq_tol(l.within.q[PV_LEARN_THINK_LEVELS - 1], 0.017, 1e-12);
	/* activity.gap: under it, a replay holding nothing open */
	ck_assert_double_eq_tol(l.gap, 0.5, 1e-12);
	/* activity.within_after: drawn after a CLOSE, none after a READ (too few learned) */
	ck_assert_uint_eq(l.within_after[SMB2_CLOSE].n, PV_LEARN_THINK_LEVELS);
	ck_assert_double_eq_tol(l.within_after[SMB2_CLOSE].q[PV_LEARN_THINK_LEVELS - 1], 0.0017,
				1e-12);
	for (int i = 0; i < PV_PLAYBOOK_WORKLOAD_CMDS; i++)
		ck_assert(i == SMB2_CLOSE || !l.within_after[i].n);
	for (int i = 0; i < PV_LEARN_THINK_LEVELS; i++) {
		ck_assert_double_eq(l.think.level[i], pv_learn_think_levels[i]);
		ck_assert_double_eq_tol(l.think.q[i], c.think_q.q[i], 1e-9);
		ck_assert_double_eq(l.client_q.level[i], pv_learn_think_levels[i]);
		ck_assert_double_eq_tol(l.client_q.q[i], c.client_q.q[i], 1e-12);
	}
	ck_assert_double_eq_tol(l.kind[0].seconds, 0.02, 1e-12);

	ck_assert_double_eq(l.read[0], 25);
	ck_assert_double_eq(l.read[12], 50);
	ck_assert_double_eq(l.read[17], 25);
	/* each bucket's mean size: what a replay asks on average */
	ck_assert_double_eq(l.read_mean[12], 3000);
	ck_assert_double_eq(l.read_mean[17], 65536);
	ck_assert_double_eq(l.write_mean[10], 700);
	ck_assert_double_eq(l.write[10], 100);
	ck_assert_double_eq(l.read[11] + l.read[13] + l.write[9] + l.write[11], 0);
	pv_buf_release(&b, 0);
	pv_learn_kinds_release(&c.kinds);
	pv_learn_users_release(&c.users);
}
END_TEST

/* The longest kind learn keeps (PV_LEARN_KIND_STEPS commands, in the widest words: a replaced
 * file's CREATE repeated, a listing repeated) is written whole and read back whole, with each
 * command's count: a session of a script is replayed as it went, not cut after its first
 * commands; one command more is cut, and marked so. */
START_TEST(long_kind)
{
	struct pv_learn_counts c;
	struct pv_buf b = PV_BUF_INIT;
	struct pv_playbook_workload_learned l;
	struct pv_learn_kind_shape s = {0}, more;
	const char *at;

	counts(&c);
	for (unsigned i = 0; i < PV_LEARN_KIND_STEPS; i++)
		for (int twice = 0; twice < 2; twice++)
			pv_learn_kind_shape_add(
				&s,
				i % 2 ? SMB2_QUERY_DIRECTORY
				      : SMB2_CREATE | pv_playbook_workload_learned_disposition(5));
	ck_assert(s.n == PV_LEARN_KIND_STEPS && !s.cut);
	more = s;
	pv_learn_kind_shape_add(&more, SMB2_CLOSE);
	ck_assert(more.cut);
	for (int i = 0; i < 50; i++) /* the most frequent kind: first */
		pv_learn_kinds_add(&c.kinds, &s, 2 * PV_LEARN_KIND_STEPS, 0.5);
	pv_learn_kinds_add(&c.kinds, &more, 2 * PV_LEARN_KIND_STEPS + 1, 0.5);
	c.activities += 51;
	ck_assert_int_eq(pv_learn_kinds_settle(&c.kinds), 0);
	ck_assert_int_eq(pv_learn_workload(&c, "srv.pcap", "1", &b), PV_OK);
	ck_assert_ptr_nonnull(at = strstr(b.data, "  - commands: CREATE(OVERWRITE_IF)+ "));
	ck_assert_int_eq(count(at, "CREATE(OVERWRITE_IF)+ QUERY_DIRECTORY+") -
				 count(strstr(at + 1, "  - commands: "),
				       "CREATE(OVERWRITE_IF)+ QUERY_DIRECTORY+"),
			 PV_LEARN_KIND_STEPS / 2);
	ck_assert_msg(pv_playbook_workload_learned_parse("w.yaml", b.data, b.len, &l) == PV_OK,
		      "%s", pv_errmsg());
	ck_assert_uint_eq(l.kind[0].n, PV_LEARN_KIND_STEPS);
	ck_assert_double_eq(l.kind[0].rest, 0);
	for (unsigned i = 0; i < PV_LEARN_KIND_STEPS; i++) {
		ck_assert_uint_eq(
			l.kind[0].step[i],
			(i % 2 ? SMB2_QUERY_DIRECTORY
			       : SMB2_CREATE | PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF) |
				PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT);
		ck_assert_double_eq(l.kind[0].count[i], 2);
	}
	pv_buf_release(&b, 0);
	pv_learn_kinds_release(&c.kinds);
	pv_learn_users_release(&c.users);
}
END_TEST

/* CREATE's dispositions as a step's bits, each named as learn writes it and read back */
START_TEST(dispositions)
{
	static const struct {
		uint32_t disposition;
		unsigned bits;
		const char *name;
	} want[] = {
		{0, PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF,
		 "CREATE(OVERWRITE_IF)"}, /* SUPERSEDE */
		{1, 0, "CREATE"},	  /* OPEN */
		{2, PV_PLAYBOOK_WORKLOAD_LEARNED_NEW, "CREATE(CREATE)"},
		{3, PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF, "CREATE(OPEN_IF)"},
		{4, PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF,
		 "CREATE(OVERWRITE_IF)"}, /* OVERWRITE */
		{5, PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF, "CREATE(OVERWRITE_IF)"},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		unsigned bits = pv_playbook_workload_learned_disposition(want[i].disposition);

		ck_assert_uint_eq(bits, want[i].bits);
		ck_assert_str_eq(pv_playbook_workload_learned_command(SMB2_CREATE | bits),
				 want[i].name);
	}
	/* no other command takes them */
	ck_assert_ptr_null(pv_playbook_workload_learned_command(
		SMB2_READ | PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF));
	/* a CREATE of what is there asking no access to its data is a stat open: the
	 * attributes (read, written), READ_CONTROL, SYNCHRONIZE; not with its data read, with
	 * DELETE, with no access asked, nor one that may make the file */
	ck_assert_uint_eq(pv_playbook_workload_learned_create(1, 0x00100080),
			  PV_PLAYBOOK_WORKLOAD_LEARNED_STAT);
	ck_assert_uint_eq(pv_playbook_workload_learned_create(1, 0x00120180),
			  PV_PLAYBOOK_WORKLOAD_LEARNED_STAT);
	ck_assert_str_eq(pv_playbook_workload_learned_command(PV_PLAYBOOK_WORKLOAD_LEARNED_STAT),
			 "CREATE(STAT)");
	ck_assert_uint_eq(pv_playbook_workload_learned_create(1, 0x00120089), SMB2_CREATE);
	ck_assert_uint_eq(pv_playbook_workload_learned_create(1, 0x00010080), SMB2_CREATE);
	ck_assert_uint_eq(pv_playbook_workload_learned_create(1, 0), SMB2_CREATE);
	ck_assert_uint_eq(pv_playbook_workload_learned_create(3, 0x00100080),
			  SMB2_CREATE | PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF);
	ck_assert_ptr_null(pv_playbook_workload_learned_command(
		PV_PLAYBOOK_WORKLOAD_LEARNED_STAT | PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF));
	/* QUERY_DIRECTORY its pattern's: every name, part of the folder, one name */
	{
		static const struct {
			const char *pattern;
			unsigned bits;
		} pat[] = {{"", 0},
			   {"*", 0},
			   {"*.*", 0},
			   {"f000*", PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN},
			   {"*.txt", PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN},
			   {"a?c", PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN},
			   {"<.TXT", PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN},
			   {"s2", PV_PLAYBOOK_WORKLOAD_LEARNED_NAME},
			   {"desktop.ini", PV_PLAYBOOK_WORKLOAD_LEARNED_NAME}};

		for (size_t i = 0; i < sizeof(pat) / sizeof(pat[0]); i++) {
			uint8_t u16[32] = {0};
			size_t n = strlen(pat[i].pattern);

			for (size_t j = 0; j < n; j++)
				u16[2 * j] = (uint8_t)pat[i].pattern[j];
			ck_assert_msg(pv_playbook_workload_learned_listing(u16, 2 * n) ==
					      pat[i].bits,
				      "%s", pat[i].pattern);
		}
		ck_assert_uint_eq(pv_playbook_workload_learned_listing(NULL, 4), 0);
		ck_assert_str_eq(pv_playbook_workload_learned_command(
					 14 | PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN),
				 "QUERY_DIRECTORY(PATTERN)");
		ck_assert_str_eq(pv_playbook_workload_learned_command(
					 14 | PV_PLAYBOOK_WORKLOAD_LEARNED_NAME),
				 "QUERY_DIRECTORY(NAME)");
	}
	/* but IOCTL its control codes': the snapshots, the referrals (and their _EX), the rest the
	 * object id, each named as learn writes it and the code a replay sends */
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl(0x00144064),
			  PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS);
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl(0x00060194),
			  PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL);
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl(0x000601B0),
			  PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL);
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl(0x00140204), 0); /* VALIDATE */
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl(0x000900C0), 0);
	ck_assert_str_eq(pv_playbook_workload_learned_command(
				 SMB2_IOCTL | PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS),
			 "IOCTL(SNAPSHOTS)");
	ck_assert_str_eq(pv_playbook_workload_learned_command(
				 SMB2_IOCTL | PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL),
			 "IOCTL(REFERRAL)");
	ck_assert_ptr_null(pv_playbook_workload_learned_command(SMB2_IOCTL | 0x60));
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl_code(
				  SMB2_IOCTL | PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS),
			  0x00144064);
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl_code(
				  SMB2_IOCTL | PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL),
			  0x00060194);
	ck_assert_uint_eq(pv_playbook_workload_learned_fsctl_code(SMB2_IOCTL), 0x000900C0);
	{ /* read back from a workload */
		static const char text[] =
			"kinds:\n  - {weight: 1, commands: CREATE IOCTL(SNAPSHOTS) CLOSE "
			"IOCTL(REFERRAL) CREATE(STAT)+ CLOSE}\n";
		struct pv_playbook_workload_learned l;

		ck_assert_int_eq(
			pv_playbook_workload_learned_parse("w.yaml", text, strlen(text), &l),
			PV_OK);
		ck_assert_uint_eq(l.kind[0].n, 6);
		ck_assert_uint_eq(l.kind[0].step[4], PV_PLAYBOOK_WORKLOAD_LEARNED_STAT |
							     PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT);
		ck_assert_uint_eq(l.kind[0].step[1],
				  SMB2_IOCTL | PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS);
		ck_assert_uint_eq(l.kind[0].step[3],
				  SMB2_IOCTL | PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL);
	}
}
END_TEST

/* The text fails to read with PV_ECONFIG and a message holding want; nothing is kept. */
static void refused(const char *text, const char *want)
{
	struct pv_playbook_workload_learned l;

	memset(&l, 0xff, sizeof(l));
	ck_assert_int_eq(pv_playbook_workload_learned_parse("w.yaml", text, strlen(text), &l),
			 PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), want), "'%s' lacks '%s'", pv_errmsg(), want);
	ck_assert_uint_eq(l.n, 0);
}

START_TEST(read_refusals)
{
	char many[64 + (PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS + 1) * 5] =
		"kinds:\n  - {weight: 1, commands: ",
								  more[64];

	refused("source: {}\n", "w.yaml:1:1: no 'kinds' in it; expected a workload that "
				"`provision learn CAPTURE -o FILE` wrote");
	refused("kinds:\n  - {commands: TREE_CONNECT, weight: 50}\n",
		"'kinds' has no kind with a command to replay");
	refused("kinds:\n  - {commands: CREATE CLOSE, weight: 0}\n",
		"'kinds' has no kind with a command to replay");
	refused("kinds:\n  - {commands: CREATE REED+ CLOSE, weight: 50}\n",
		"w.yaml:2:16: 'kinds.0.commands' has 'REED', which is no SMB2 command");
	refused("kinds:\n  - {commands: CREATE, weigth: 50}\n", "(did you mean 'weight'?)");
	refused("kinds:\n  - {commands: CREATE(OPEN_OR_NOT) CLOSE, weight: 50}\n",
		"has 'CREATE(OPEN_OR_NOT)', which is no SMB2 command");
	refused("kinds:\n  - {commands: CREATE}\n", "missing required key 'weight'");
	refused("kinds:\n  - {commands: CREATE, weight: 101}\n",
		"'kinds.0.weight' is '101'; expected a number from 0 to 100");
	refused("kinds:\n  - {commands: CREATE, weight: lots}\n", "'kinds.0.weight' is 'lots'");
	refused("kinds: CREATE\n", "'kinds' is a string; expected a list of kinds");
	/* depths: one a CREATE, each a whole depth from -1 to 7 */
	refused("kinds:\n  - {commands: CREATE READ CREATE(STAT) CLOSE, weight: 5, depths: [1]}\n",
		"'kinds.0.depths' is a list of another length; expected a list of 2 depths, one a "
		"CREATE (from -1, outside the home, to 7)");
	refused("kinds:\n  - {commands: CREATE CLOSE, weight: 5, depths: [8]}\n",
		"'kinds.0.depths.0' is '8'; expected a number from -1 to 7");
	refused("kinds:\n  - {commands: CREATE CLOSE, weight: 5, depths: [1.5]}\n",
		"'kinds.0.depths.0' is 1.5; expected a whole depth");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nsizes: {read: {buckets: {3000: 1}}}\n",
		"'sizes.read.buckets' has the bucket '3000'; expected 0 or a power of two");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nsizes: {read: {buckets: {4096: x}}}\n",
		"'sizes.read.buckets.4096' is 'x'");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nsizes: {read: {means: {4096: 5000}}}\n",
		"'sizes.read.means.4096' is 5000; expected a size from 2048 to 4096, within its "
		"bucket");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nmixx: {}\n", "(did you mean 'mix'?)");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nusers: {logons_again_per_hour: "
		"{median: "
		"-1}}\n",
		"'users.logons_again_per_hour.median' is '-1'; expected a number from 0 to");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {client: {median: 0.5, p95: "
		"0.1}}\n",
		"'activity.client.p95' is '0.1'; expected a number from 0.5 to 3600");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {client: {median: 61}}\n",
		"'activity.client.median' is '61'; expected a number from 0 to 60");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nfiles: {opens: {of: 4, leased: 101}}\n",
		"'files.opens.leased' is '101'; expected a number from 0 to 100");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nfiles: {opens: {leases: 50}}\n",
		"(did you mean 'leased'?)");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {clients: {}}\n",
		"(did you mean 'client'?)");
	/* activity.gap and within_after */
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {gap: -1}\n",
		"'activity.gap' is '-1'; expected a number from 0 to 10000");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {within_after: [1]}\n",
		"'activity.within_after' is a sequence; expected a mapping {COMMAND:");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {within_after: {ECHO: "
		"{median: 1}}}\n",
		"'activity.within_after' has 'ECHO', which is no SMB2 command a kind replays");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {within_after: {CLOSE: "
		"{median: 1}}}\n",
		"'activity.within_after.CLOSE' has no quantiles");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nactivity: {within_after: {CLOSE: "
		"{quantiles: {0: 1, 100: 2}}, CLOSE: {quantiles: {0: 1, 100: 2}}}}\n",
		"'activity.within_after' has 'CLOSE' twice");
	refused("kinds:\n  - {commands: CREATE, weight: 5}\nusers: {logons_again_per_hour: {mean: "
		"1}}\n",
		"(did you mean 'median'?)");
	for (int i = 0; i < PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS + 1; i++)
		strcat(many, "READ ");
	strcat(many, "}\n");
	snprintf(more, sizeof(more), "more than %d commands to replay",
		 PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS);
	refused(many, more);
	refused("kinds:\n  - {commands: CREATE READ+, weight: 5, counts: [1]}\n",
		"'kinds.0.counts' is a list of another length; expected a list of 2 numbers");
	refused("kinds:\n  - {commands: CREATE READ+, weight: 5, counts: [1, 0.5]}\n",
		"'kinds.0.counts.1' is '0.5'; expected a number from 1 to");
	/* a cut kind's mark, and the commands the driver makes itself, are passed over */
	{
		struct pv_playbook_workload_learned l;
		const char *t = "kinds:\n  - {commands: NEGOTIATE CREATE WRITE+ ..., weight: 1.5e1,"
				" requests: 11, counts: [1, 1, 3]}\n";

		ck_assert_int_eq(pv_playbook_workload_learned_parse("w.yaml", t, strlen(t), &l),
				 PV_OK);
		ck_assert_uint_eq(l.n, 1);
		ck_assert_uint_eq(l.kind[0].n, 2);
		ck_assert_uint_eq(l.kind[0].step[1],
				  SMB2_WRITE | PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT);
		ck_assert_double_eq(l.kind[0].weight, 15);
		ck_assert_double_eq(l.kind[0].count[1], 3);
		/* cut: 11 requests, 5 of them in its commands, 6 past the cut */
		ck_assert_double_eq(l.kind[0].rest, 6);
	}
}
END_TEST

/* What the replay opens of a user's tree, by kind, and the run's check of it against a fileset
 * (load/replay.c) */
static unsigned needs(const char *commands)
{
	struct pv_playbook_workload w;
	char text[256];

	memset(&w, 0, sizeof(w));
	snprintf(text, sizeof(text), "kinds:\n  - {weight: 1, commands: %s}\n", commands);
	ck_assert_int_eq(
		pv_playbook_workload_learned_parse("w.yaml", text, strlen(text), &w.learned),
		PV_OK);
	return pv_load_replay_needs(&w);
}

static int check_against(const char *fileset)
{
	struct pv_playbook_workload w;
	const char *text = "kinds:\n  - {weight: 1, commands: CREATE READ CLOSE}\n"
			   "  - {weight: 1, commands: CREATE QUERY_DIRECTORY CLOSE}\n";
	char path[] = "/tmp/pv-check-fileset.XXXXXX";
	int fd = mkstemp(path), r;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
	fputs(fileset, f);
	fclose(f);
	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(
		pv_playbook_workload_learned_parse("w.yaml", text, strlen(text), &w.learned),
		PV_OK);
	r = pv_load_replay_check(&w, "w.yaml", path);
	unlink(path);
	return r;
}

START_TEST(replay_needs)
{
	ck_assert_uint_eq(needs("CREATE READ CLOSE"), PV_LOAD_NEEDS_STATIC);
	ck_assert_uint_eq(needs("CREATE QUERY_DIRECTORY+ CLOSE"), PV_LOAD_NEEDS_FOLDER);
	ck_assert_uint_eq(needs("CREATE WRITE CLOSE"), PV_LOAD_NEEDS_VOLATILE);
	ck_assert_uint_eq(needs("CREATE(OPEN_IF) WRITE CLOSE"), 0); /* a file of its own */
	ck_assert_uint_eq(needs("CREATE QUERY_DIRECTORY CREATE READ CLOSE CLOSE"),
			  PV_LOAD_NEEDS_FOLDER | PV_LOAD_NEEDS_STATIC);
	/* a fileset with static/ files in folders: the run goes; none there: refused, what is
	 * lacking and the fix named */
	ck_assert_int_eq(check_against("parts:\n  static:\n    folders: [2]\n    files: 3\n"
				       "    sizes: [{size: 10}]\n"),
			 PV_OK);
	ck_assert_int_eq(check_against("parts:\n  new:\n    folders: [2]\n"), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "has no files in static/ to read, folders in static/ "
					  "with files to list): prepare them"),
		      "%s", pv_errmsg());
	/* files in static/ itself: it is the folder listed; folders and no file: neither */
	ck_assert_int_eq(check_against("parts:\n  static:\n    files: 3\n"
				       "    sizes: [{size: 10}]\n"),
			 PV_OK);
	ck_assert_int_eq(check_against("parts:\n  static:\n    folders: [2]\n"), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "server.fileset /tmp/pv-check-fileset."), "%s",
		      pv_errmsg());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = tcase_create("workload");

	tcase_add_test(tc, yaml);
	tcase_add_test(tc, many_kinds);
	tcase_add_test(tc, read_back);
	tcase_add_test(tc, long_kind);
	tcase_add_test(tc, dispositions);
	tcase_add_test(tc, read_refusals);
	tcase_add_test(tc, replay_needs);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
