/* tests/unit/check_sync.c: smb/sync.c, our blocking SMB2 client, against the fake server of
 * tests/unit/fake_smb2.h (a thread on the other end of a socketpair(2), hooks to change its
 * answers). The valid flows build and list trees; the malformed ones (short frames, bad
 * NetBIOS lengths, offsets outside the frame, cut compounds, endless keep-alives and
 * STATUS_PENDING, a 64 KiB NTLM target info, paths over the limit) must each end in a clear
 * error, never a crash (ASan, UBSan). With signing required, every request is checked by the
 * fake's own signing code and every answer signed, and hooks change what it signed.
 *
 * With PV_SMB2_CORPUS=<folder> set, the plan of tests/fuzz/smb2_plan.h is run against the
 * fake server, as is and under each fault, and what the server sent is written there: the
 * seed corpus of tests/fuzz/fuzz_smb2.c. */
#include <check.h>

#include "tests/unit/unit.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "smb/internal.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "tests/fuzz/smb2_plan.h"
#include "tests/unit/fake_smb2.h"
#include "util/buf.h"
#include "util/digest.h"
#include "util/err.h"
#include "util/secret.h"
#include "util/utf16.h"

#define T_MS 200 /* the client's timeout in these tests: deadlines of 600 ms (3T) */

/* ---- the client's side ---- */

static void fill(void *ctx, size_t item, uint64_t offset, void *buf, size_t len)
{
	(void)ctx;
	memset(buf, (int)('a' + (item + offset) % 26), len);
}

struct run {
	int r;
	char msg[1024];
	bool lost;
	struct pv_smb_tree_result res;
};

/* Connect over fd, build items under u1 (fresh or listed first) as LAB\u1, free. */
static struct run build(int fd, const struct pv_smb_item *items, size_t n, bool fresh)
{
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
	struct pv_smb_sync *c = NULL;
	struct run out = {0};

	pv_error_clear();
	out.r = smb2_connect_fd(fd, "fake", T_MS, &c);
	if (out.r == PV_OK)
		out.r = pv_smb_sync_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", items, n, fresh,
					       NULL, fill, NULL, NULL, NULL, &out.res);
	snprintf(out.msg, sizeof(out.msg), "%s", pv_errmsg());
	out.lost = pv_smb_sync_lost(c);
	pv_smb_sync_free(c);
	pv_secret_free(pw);
	return out;
}

static const struct pv_smb_item ITEMS[] = {
	{"d", true, 0},		{"d/a", false, 100},
	{"b", false, 70000},	/* two WRITEs in the compound */
	{"big", false, 300000}, /* more than one compound: CREATE, chunks, CLOSE */
	{"e", false, 0},
};
#define NITEMS (sizeof(ITEMS) / sizeof(ITEMS[0]))

/* Run ITEMS against a fake server with hook; the outcome. */
static struct run with(fake_hook hook, long arg, bool fresh, struct fake *f)
{
	int fd = fake_start(f, hook, arg);
	struct run out;

	fake_run(f);
	out = build(fd, ITEMS, NITEMS, fresh);
	fake_stop(f);
	return out;
}

#define ck_assert_failed(run, code, words)                                                         \
	do {                                                                                       \
		ck_assert_msg((run).r == (code), "code %d, not %d: '%s'", (run).r, (code),         \
			      (run).msg);                                                          \
		ck_assert_msg(strstr((run).msg, (words)) != NULL, "message '%s' lacks '%s'",       \
			      (run).msg, (words));                                                 \
	} while (0)

/* ---- valid flows ---- */

/* ---- a mirror (robocopy /MIR /COPY:DT /FFT): times, extras, several connections ---- */

#define M1 133000000000000000ull /* FILETIMEs */
static const struct pv_smb_item MIRROR[] = {
	{"d", true, 0, 0},
	{"d/a", false, 100, M1},
	{"b", false, 70000, M1 + 10000000}, /* a second later */
	{"e", false, 0, M1 + 20000000},
	{"big", false, 300000, M1 + 30000000}, /* chunks, then the time, then CLOSE */
};
#define NMIRROR (sizeof(MIRROR) / sizeof(MIRROR[0]))

struct timed {
	unsigned files;
	double seconds;
	bool seen[NMIRROR];
};

static void on_file(void *ctx, size_t item, double seconds)
{
	struct timed *t = ctx;

	ck_assert_uint_lt(item, NMIRROR);
	ck_assert(!MIRROR[item].dir);
	ck_assert(!t->seen[item]); /* once each */
	t->seen[item] = true;
	t->files++;
	t->seconds += seconds;
}

static struct pv_smb_tree_result mirror(struct pv_smb_sync *c, bool mirror_opt, struct timed *t)
{
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
	struct pv_smb_build_opts o = {4, mirror_opt, 2, on_file, t};
	struct pv_smb_tree_result res;
	int r;

	memset(t, 0, sizeof(*t));
	r = pv_smb_sync_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", MIRROR, NMIRROR, false, &o,
				   fill, NULL, NULL, NULL, &res);
	ck_assert_msg(r == PV_OK, "%s", pv_errmsg());
	pv_secret_free(pw);
	return res;
}

START_TEST(test_mirror)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct pv_smb_sync *conn = NULL;
	struct pv_smb_tree_result r;
	struct timed t;
	unsigned writes, setinfo;
	static const char *const extra[] = {"u1/x", "u1/xd/y", "u1/xd/z/w"};

	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
	/* a copy: every file made with its time, each timed once */
	r = mirror(conn, true, &t);
	ck_assert_uint_eq(r.files_made, 4);
	ck_assert_uint_eq(r.dirs_made, 1);
	ck_assert_uint_eq(t.files, 4);
	ck_assert(t.seconds >= 0);
	ck_assert_uint_eq(fake_lookup(&f, "u1/d/a")->mtime, M1);
	ck_assert_uint_eq(fake_lookup(&f, "u1/b")->mtime, M1 + 10000000);
	ck_assert_uint_eq(fake_lookup(&f, "u1/e")->mtime, M1 + 20000000);
	ck_assert_uint_eq(fake_lookup(&f, "u1/big")->mtime, M1 + 30000000);
	ck_assert_uint_eq(fake_lookup(&f, "u1/big")->size, 300000);
	/* the second pass sends no file: no WRITE, no SET_INFO */
	writes = f.cmds[SMB2_WRITE];
	setinfo = f.cmds[SMB2_SET_INFO];
	r = mirror(conn, true, &t);
	ck_assert_uint_eq(r.files_made + r.files_fixed + r.dirs_made, 0);
	ck_assert_uint_eq(r.files_ok, 4);
	ck_assert_uint_eq(r.files_removed + r.dirs_removed, 0);
	ck_assert_uint_eq(f.cmds[SMB2_WRITE], writes);
	ck_assert_uint_eq(f.cmds[SMB2_SET_INFO], setinfo);
	ck_assert_uint_eq(t.files, 0);
	/* /FFT: a second off is the same file; three seconds off is rewritten with its time */
	fake_lookup(&f, "u1/b")->mtime += 10000000;
	r = mirror(conn, true, &t);
	ck_assert_uint_eq(r.files_fixed, 0);
	fake_lookup(&f, "u1/b")->mtime += 20000000;
	r = mirror(conn, true, &t);
	ck_assert_uint_eq(r.files_fixed, 1);
	ck_assert(t.seen[2] && t.files == 1);
	ck_assert_uint_eq(fake_lookup(&f, "u1/b")->mtime, M1 + 10000000);
	/* extras: left alone without the mirror, removed with it, deepest first */
	fake_mknode(&f, "u1/x", false, 3);
	fake_mknode(&f, "u1/xd", true, 0);
	fake_mknode(&f, "u1/xd/y", false, 3);
	fake_mknode(&f, "u1/xd/z", true, 0);
	fake_mknode(&f, "u1/xd/z/w", false, 3);
	r = mirror(conn, false, &t);
	ck_assert_uint_eq(r.files_removed + r.dirs_removed, 0);
	for (size_t i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(fake_lookup(&f, extra[i]));
	r = mirror(conn, true, &t);
	ck_assert_uint_eq(r.files_removed, 3);
	ck_assert_uint_eq(r.dirs_removed, 2);
	for (size_t i = 0; i < 3; i++)
		ck_assert_ptr_null(fake_lookup(&f, extra[i]));
	ck_assert_ptr_null(fake_lookup(&f, "u1/xd"));
	ck_assert_ptr_nonnull(fake_lookup(&f, "u1/d/a"));
	/* a folder where a file belongs: a mirror removes it (and what it holds), then makes
	 * the file */
	{
		struct fake_node *e = fake_lookup(&f, "u1/e");

		free(e->path);
		free(e->data);
		*e = (struct fake_node){0};
	}
	fake_mknode(&f, "u1/e", true, 0);
	fake_mknode(&f, "u1/e/in", false, 1);
	r = mirror(conn, true, &t);
	ck_assert_uint_eq(r.dirs_removed, 1);
	ck_assert_uint_eq(r.files_removed, 1);
	ck_assert_uint_eq(r.files_made, 1);
	ck_assert(!fake_lookup(&f, "u1/e")->dir);
	ck_assert_uint_eq(fake_lookup(&f, "u1/e")->mtime, M1 + 20000000);
	ck_assert(!pv_smb_sync_lost(conn));
	pv_smb_sync_free(conn);
	fake_stop(&f);
}
END_TEST

/* The plan on one connection, the files written in parts (as by several connections): each
 * file once, by the part it falls to; a listing of folders larger than one answer. */
START_TEST(test_plan_parts)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct pv_smb_sync *conn = NULL;
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
	struct pv_smb_sync_plan *plan = NULL;
	struct pv_smb_tree_result r0 = {0}, r1 = {0}, rp = {0};
	struct pv_smb_build_opts o = {8, true, 2, on_file, NULL};
	const struct pv_smb_sync_plan_counts *k;
	struct timed t = {0};

	o.ctx = &t;
	f.page = 2; /* two entries an answer: every folder's listing takes more than one */
	fake_mknode(&f, "u1/old", false, 9);
	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
	ck_assert_int_eq(pv_smb_sync_logon(conn, "LAB", "u1", pw), PV_OK);
	ck_assert_int_eq(pv_smb_sync_tree(conn, "fsroot1"), PV_OK);
	ck_assert_int_eq(pv_smb_sync_plan(conn, "fsroot1", "u1", MIRROR, NMIRROR, false, &o, &plan),
			 PV_OK);
	k = pv_smb_sync_plan_counts(plan);
	ck_assert_uint_eq(k->files_to_write, 4);
	ck_assert_uint_eq(k->bytes_to_write, 100 + 70000 + 300000);
	ck_assert_uint_eq(k->dirs_to_make, 1);
	ck_assert_uint_eq(k->extras, 1);
	ck_assert_uint_eq(k->listed, 1);
	ck_assert_int_eq(pv_smb_sync_plan_prune(conn, plan, &rp), PV_OK);
	ck_assert_uint_eq(rp.files_removed, 1);
	ck_assert_uint_eq(rp.dirs_made, 1);
	ck_assert_ptr_null(fake_lookup(&f, "u1/old"));
	ck_assert_int_eq(pv_smb_sync_plan_put(conn, plan, 1, 2, fill, NULL, NULL, NULL, &r1),
			 PV_OK);
	ck_assert_uint_eq(r1.files_made, 2);
	ck_assert_ptr_null(fake_lookup(&f, "u1/d/a")); /* the first file is part 0's */
	ck_assert_ptr_nonnull(fake_lookup(&f, "u1/b"));
	ck_assert_int_eq(pv_smb_sync_plan_put(conn, plan, 0, 2, fill, NULL, NULL, NULL, &r0),
			 PV_OK);
	ck_assert_uint_eq(r0.files_made, 2);
	ck_assert_uint_eq(t.files, 4);
	for (size_t i = 0; i < NMIRROR; i++)
		ck_assert(MIRROR[i].dir || t.seen[i]);
	pv_smb_sync_plan_free(plan);
	/* listed again with two entries an answer: all found, nothing to do */
	ck_assert_int_eq(pv_smb_sync_plan(conn, "fsroot1", "u1", MIRROR, NMIRROR, false, &o, &plan),
			 PV_OK);
	k = pv_smb_sync_plan_counts(plan);
	ck_assert_uint_eq(k->files_ok, 4);
	ck_assert_uint_eq(k->files_to_write + k->dirs_to_make + k->extras, 0);
	ck_assert_uint_eq(k->listed, NMIRROR);
	pv_smb_sync_plan_free(plan);
	ck_assert_int_eq(pv_smb_sync_logoff(conn), PV_OK);
	pv_smb_sync_free(conn);
	pv_secret_free(pw);
	fake_stop(&f);
}
END_TEST

START_TEST(test_build_and_list)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct run a, b, c;
	struct pv_smb_sync *conn = NULL;
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));

	fake_run(&f);
	/* three builds over one connection: fresh, listed (all there), listed (one fixed) */
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
	a.r = pv_smb_sync_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS, true,
				     NULL, fill, NULL, NULL, NULL, &a.res);
	ck_assert_msg(a.r == PV_OK, "%s", pv_errmsg());
	ck_assert_uint_eq(a.res.dirs_made, 1);
	ck_assert_uint_eq(a.res.files_made, 4);
	ck_assert_uint_eq(a.res.bytes, 100 + 70000 + 300000);
	ck_assert_ptr_nonnull(fake_lookup(&f, "u1/d"));
	ck_assert_uint_eq(fake_lookup(&f, "u1/d/a")->size, 100);
	ck_assert_uint_eq(fake_lookup(&f, "u1/b")->size, 70000);
	ck_assert_uint_eq(fake_lookup(&f, "u1/big")->size, 300000);
	ck_assert_uint_eq(fake_lookup(&f, "u1/e")->size, 0);
	b.r = pv_smb_sync_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS, false,
				     NULL, fill, NULL, NULL, NULL, &b.res);
	ck_assert_msg(b.r == PV_OK, "%s", pv_errmsg());
	ck_assert_uint_eq(b.res.files_ok, 4);
	ck_assert_uint_eq(b.res.files_made + b.res.dirs_made, 0);
	ck_assert_uint_eq(f.cmds[SMB2_QUERY_DIRECTORY], 4); /* u1 and u1/d, each to the end */
	fake_lookup(&f, "u1/b")->size = 5;
	c.r = pv_smb_sync_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS, false,
				     NULL, fill, NULL, NULL, NULL, &c.res);
	ck_assert_msg(c.r == PV_OK, "%s", pv_errmsg());
	ck_assert_uint_eq(c.res.files_fixed, 1);
	ck_assert_uint_eq(fake_lookup(&f, "u1/b")->size, 70000);
	ck_assert_uint_eq(f.logons_ok, 3);
	ck_assert_uint_eq(f.cmds[SMB2_LOGOFF], 3);
	/* each logon's MIC checked, each session's first tree connect validated (3.0.2) */
	ck_assert_uint_eq(f.mic_ok, 3);
	ck_assert_uint_eq(f.mech_mic_ok, 3);
	ck_assert_str_eq(f.target_name, "cifs/fake");
	ck_assert_uint_eq(f.validated, 3);
	ck_assert_uint_eq(f.cmds[SMB2_IOCTL], 3);
	ck_assert(!pv_smb_sync_lost(conn));
	pv_smb_sync_free(conn);
	pv_secret_free(pw);
	fake_stop(&f);
}
END_TEST

/* The synchronous client over the same engine: a NEGOTIATE answer changed on its way (3.0.2
 * said 3.0) fails the tree connect, and the build, with the downgrade named; a changed MIC
 * fails the logon. */
START_TEST(test_downgrade_and_mic)
{
	struct fake f;
	struct run r = with(fake_poke, POKE(SMB2_NEGOTIATE, SMB2_HDR + 2, 0x03000001), true, &f);

	ck_assert_failed(r, PV_EREMOTE,
			 "SMB to 'fake': a downgrade or a tampered negotiation was detected: the "
			 "server's signed VALIDATE_NEGOTIATE answer differs from the NEGOTIATE "
			 "answer taken (its dialect is 3.0.2, its NEGOTIATE answer said 3.0");
	ck_assert(r.lost);
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 0);
	{
		int fd = fake_start(&f, NULL, 0);

		f.in_hook = fake_flip_mic;
		fake_run(&f);
		r = build(fd, ITEMS, NITEMS, true);
		fake_stop(&f);
	}
	ck_assert_failed(r, PV_EREMOTE,
			 "SMB logon as LAB\\u1 on 'fake' refused (NT_STATUS_INVALID_PARAMETER): "
			 "the server did not take the NTLM AUTHENTICATE message");
	ck_assert_uint_eq(f.mic_bad, 1);
}
END_TEST

/* Answers to CREATE compounds go async first: an interim STATUS_PENDING, then the final. */
static enum fake_act pending_once(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd == SMB2_CREATE || q->cmd == SMB2_SESSION_SETUP)
		fake_interim(f, q->cmd, q->mid);
	return FAKE_SEND;
}

/* Each message of a compound answer in a frame of its own (MS-SMB2 3.3.4.1.3 allows it),
 * and keep-alives between them. */
static enum fake_act split(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	size_t off = 0;

	(void)q;
	for (;;) {
		uint32_t next = smb2_get32((uint8_t *)reply->data + off + 20);
		size_t n = next ? next : reply->len - off;

		smb2_put32((uint8_t *)reply->data + off + 20, 0);
		fake_keepalive(f);
		fake_send_frame(f, reply->data + off, n);
		if (!next)
			break;
		off += next;
	}
	return FAKE_DONE;
}

START_TEST(test_interim_and_split)
{
	struct fake f;
	struct run r = with(pending_once, 0, true, &f);

	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(r.res.files_made, 4);
	r = with(split, 0, true, &f);
	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(r.res.files_made, 4);
	ck_assert_uint_eq(r.res.dirs_made, 1);
}
END_TEST

/* A wrong password: NT_STATUS_LOGON_FAILURE is a credentials error, the connection lives. */
START_TEST(test_logon_refused)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct pv_secret *pw = pv_secret_new("wrong", 5);
	struct pv_smb_sync *c = NULL;
	struct pv_smb_tree_result res;

	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &c), PV_OK);
	ck_assert_int_eq(pv_smb_sync_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS,
						true, NULL, fill, NULL, NULL, NULL, &res),
			 PV_ECRED);
	ck_assert_str_eq(pv_errmsg(), "SMB logon as LAB\\u1 on 'fake' refused "
				      "(NT_STATUS_LOGON_FAILURE)");
	ck_assert(!pv_smb_sync_lost(c));
	ck_assert_uint_eq(f.logons_bad, 1);
	pv_smb_sync_free(c);
	pv_secret_free(pw);
	fake_stop(&f);
}
END_TEST

/* The first TREE_CONNECT refused (no such share): the build fails saying so, its session is
 * logged off, and the connection carries the next user's build. */
static enum fake_act no_share_once(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t *m = (uint8_t *)reply->data;

	if (q->cmd != SMB2_TREE_CONNECT || f->done++)
		return FAKE_SEND;
	/* an error response (MS-SMB2 2.2.2) in place of the 16-byte body */
	smb2_put32(m + 8, ST_BAD_NETWORK_NAME);
	smb2_put16(m + SMB2_HDR, 9);
	memset(m + SMB2_HDR + 2, 0, 7);
	reply->len = SMB2_HDR + 9;
	return FAKE_SEND;
}

START_TEST(test_share_refused)
{
	struct fake f;
	int fd = fake_start(&f, no_share_once, 0);
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
	struct pv_smb_sync *c = NULL;
	struct pv_smb_tree_result res;

	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &c), PV_OK);
	ck_assert_int_eq(pv_smb_sync_tree_build(c, "LAB", "u1", pw, "nope", "u1", ITEMS, NITEMS,
						true, NULL, fill, NULL, NULL, NULL, &res),
			 PV_ECONFIG);
	ck_assert_str_eq(pv_errmsg(), "SMB tree connect to //fake/nope as u1: "
				      "NT_STATUS_BAD_NETWORK_NAME (no such share)");
	ck_assert_uint_eq(f.cmds[SMB2_LOGOFF], 1);
	ck_assert_msg(pv_smb_sync_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", ITEMS, NITEMS,
					     true, NULL, fill, NULL, NULL, NULL, &res) == PV_OK,
		      "%s", pv_errmsg());
	ck_assert_uint_eq(res.files_made, 4);
	pv_smb_sync_free(c);
	pv_secret_free(pw);
	fake_stop(&f);
}
END_TEST

/* ---- signing ---- */

/* Interim answers before final ones: unsigned for SESSION_SETUP, flagged as signed with a
 * signature that is none for the others (neither is checked). */
static enum fake_act pending_signed(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd == SMB2_SESSION_SETUP)
		fake_interim(f, q->cmd, q->mid);
	else if (q->cmd == SMB2_CREATE || q->cmd == SMB2_TREE_CONNECT ||
		 q->cmd == SMB2_QUERY_DIRECTORY)
		fake_interim_flagged(f, q->cmd, q->mid, SMB2_FLAGS_SIGNED);
	return FAKE_SEND;
}

/* Requests the fake saw after logons: all but NEGOTIATE and SESSION_SETUP. */
static unsigned after_logon(const struct fake *f)
{
	unsigned n = 0;

	for (int i = 2; i < 16; i++)
		n += f->cmds[i];
	return n;
}

/* Three builds over conn against f (fresh, listed, listed with b of another size): each must
 * succeed (how names the case); their counts into res, the files checked. */
static void three_builds(struct fake *f, struct pv_smb_sync *conn, const struct pv_secret *pw,
			 const char *how, struct pv_smb_tree_result res[3])
{
	for (int k = 0; k < 3; k++) {
		if (k == 2)
			fake_lookup(f, "u1/b")->size = 5;
		ck_assert_msg(pv_smb_sync_tree_build(conn, "LAB", "u1", pw, "fsroot1", "u1", ITEMS,
						     NITEMS, k == 0, NULL, fill, NULL, NULL, NULL,
						     &res[k]) == PV_OK,
			      "%s, build %d: %s", how, k, pv_errmsg());
	}
	ck_assert_uint_eq(res[0].files_made, 4);
	ck_assert_uint_eq(res[1].files_ok, 4);
	ck_assert_uint_eq(res[2].files_fixed, 1);
	ck_assert_uint_eq(fake_lookup(f, "u1/big")->size, 300000);
	ck_assert_uint_eq(fake_lookup(f, "u1/b")->size, 70000);
	ck_assert_uint_eq(f->logons_ok, 3);
	ck_assert_uint_eq(f->cmds[SMB2_LOGOFF], 3);
	ck_assert(!pv_smb_sync_lost(conn));
}

/* Over every dialect offered, with signing required: three builds on one connection (fresh,
 * listed, one file fixed), each request signed right (the fake checks each one, each
 * message of a compound on its own), every answer signed and checked, interim answers
 * passed over (flagged or not). */
START_TEST(test_signed_builds)
{
	static const struct {
		uint16_t dialect;
		const char *how;
	} d[] = {
		{0x0202, "SMB 2.0.2, signed (HMAC-SHA256)"},
		{0x0210, "SMB 2.1, signed (HMAC-SHA256)"},
		{0x0300, "SMB 3.0, signed (AES-128-CMAC)"},
		{0x0302, "SMB 3.0.2, signed (AES-128-CMAC)"},
	};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct fake f;
		int fd = fake_start(&f, i % 2 ? pending_signed : NULL, 0);
		struct pv_secret *pw =
			pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
		struct pv_smb_sync *conn = NULL;
		struct pv_smb_tree_result res[3];

		f.signing = SIGN_REQUIRED;
		f.dialect = d[i].dialect;
		fake_run(&f);
		ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
		ck_assert(!pv_smb_sync_signing(conn)); /* no session yet */
		three_builds(&f, conn, pw, d[i].how, res);
		ck_assert_str_eq(pv_smb_sync_describe(conn), d[i].how);
		ck_assert(pv_smb_sync_signing(conn) && !pv_smb_sync_encrypting(conn));
		ck_assert_uint_eq(f.sig_bad + f.unsigned_reqs, 0);
		ck_assert_uint_eq(f.signed_ok, after_logon(&f));
		ck_assert_uint_gt(f.signed_ok, 20);
		ck_assert(!pv_smb_sync_lost(conn));
		pv_smb_sync_free(conn);
		pv_secret_free(pw);
		fake_stop(&f);
	}
}
END_TEST

/* The plan of ITEMS against a fake with this signing and dialect (0: 3.0.2) and hook. */
static struct run with_signing(fake_hook hook, long arg, bool fresh, int signing, uint16_t dialect,
			       struct fake *f)
{
	int fd = fake_start(f, hook, arg);
	struct run out;

	f->signing = signing;
	f->dialect = dialect;
	fake_run(f);
	out = build(fd, ITEMS, NITEMS, fresh);
	fake_stop(f);
	return out;
}

/* Every way an answer can fail signing ends the build with the clear error and loses the
 * connection: a changed byte (in a compound, the padding before the next message, which
 * the signature covers too), a missing signature where signing is required, a wrong one, a
 * signed answer before any key, one signed for another session; on the rpc path (logon,
 * tree connect, listing, logoff) and in the pipeline (a file's compound). */
START_TEST(test_bad_signatures)
{
	static const char BAD[] = "SMB answer from 'fake' has a bad signature: ";
	static const struct {
		long arg;
		int signing;
		uint16_t dialect;
		bool fresh;
		const char *want;
	} cases[] = {
		{TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_REQUIRED, 0, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) does not match its AES-128-CMAC "
		 "signature; the connection is dropped"},
		{TAMPER(SMB2_SESSION_SETUP, UNSIGN), SIGN_REQUIRED, 0x0210, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) came unsigned, and the server requires "
		 "signing"},
		{TAMPER(SMB2_TREE_CONNECT, WRONG), SIGN_REQUIRED, 0x0210, true,
		 "TREE_CONNECT (message 3, NT_STATUS_OK) does not match its HMAC-SHA256 signature"},
		/* 3.0 and 3.0.2: VALIDATE_NEGOTIATE is message 4 */
		{TAMPER(SMB2_CREATE, FLIP), SIGN_REQUIRED, 0, true,
		 "CREATE (message 5, NT_STATUS_OK) does not match its AES-128-CMAC signature"},
		{TAMPER(SMB2_CLOSE, UNSIGN), SIGN_REQUIRED, 0x0300, true,
		 "CLOSE (message 6, NT_STATUS_OK) came unsigned, and the server requires signing"},
		{TAMPER(SMB2_WRITE, WRONG), SIGN_REQUIRED, 0, true,
		 "WRITE (message 8, NT_STATUS_OK) does not match its AES-128-CMAC signature"},
		{TAMPER(SMB2_QUERY_DIRECTORY, UNSIGN), SIGN_REQUIRED, 0x0202, false,
		 "QUERY_DIRECTORY (message 5, NT_STATUS_OK) came unsigned, and the server requires "
		 "signing"},
		{TAMPER(SMB2_LOGOFF, FLIP), SIGN_REQUIRED, 0, true, "LOGOFF (message "},
		{TAMPER(SMB2_NEGOTIATE, FLAG), SIGN_REQUIRED, 0, true,
		 "NEGOTIATE (message 0, NT_STATUS_OK) came signed before there was a session key"},
		{TAMPER(SMB2_TREE_CONNECT, OTHER_SID), SIGN_REQUIRED, 0, true,
		 "TREE_CONNECT (message 3, NT_STATUS_OK) came signed for session 0x9999, not ours "
		 "(0x1122)"},
		/* not required: a signed answer is still checked */
		{TAMPER(SMB2_SESSION_SETUP, WRONG), SIGN_SETUP, 0, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) does not match its AES-128-CMAC "
		 "signature"},
		{TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_SETUP, 0x0210, true,
		 "SESSION_SETUP (message 2, NT_STATUS_OK) does not match its HMAC-SHA256 "
		 "signature"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f;
		struct run r = with_signing(fake_tamper, cases[i].arg, cases[i].fresh,
					    cases[i].signing, cases[i].dialect, &f);

		ck_assert_msg(f.done == 1, "case %zu: the answer to tamper with never came", i);
		ck_assert_msg(r.r == PV_EREMOTE && strncmp(r.msg, BAD, strlen(BAD)) == 0 &&
				      strstr(r.msg, cases[i].want),
			      "case %zu: %d '%s' lacks '%s'", i, r.r, r.msg, cases[i].want);
		ck_assert_msg(strstr(r.msg, "PROVISION_SMB_CLIENT=libsmbclient") != NULL,
			      "case %zu: no way out named: %s", i, r.msg);
		ck_assert_msg(r.lost, "case %zu: the connection should be lost", i);
		ck_assert_uint_eq(f.sig_bad + f.unsigned_reqs, 0); /* the client did it right */
	}
}
END_TEST

/* A server that does not require signing: nothing is signed (signing costs both sides CPU)
 * but 3.0.2's VALIDATE_NEGOTIATE, which MS-SMB2 signs always, and the end of each logon, which
 * such a server may sign (Samba does), is checked when signed and taken when not. */
START_TEST(test_signing_not_required)
{
	struct fake f;
	struct run r;
	int fd = fake_start(&f, NULL, 0);
	struct pv_smb_sync *conn = NULL;

	f.signing = SIGN_SETUP;
	fake_run(&f);
	ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
	ck_assert(!pv_smb_sync_signing(conn));
	pv_smb_sync_free(conn);
	fake_stop(&f);
	for (uint16_t dialect = 0x0202; dialect; dialect = dialect == 0x0202 ? 0x0302 : 0) {
		r = with_signing(NULL, 0, true, SIGN_SETUP, dialect, &f);
		ck_assert_msg(r.r == PV_OK, "%s", r.msg);
		ck_assert_uint_eq(r.res.files_made, 4);
		ck_assert_uint_eq(f.signed_ok, dialect == 0x0302 ? 1 : 0);
		ck_assert_uint_eq(f.validated, dialect == 0x0302 ? 1 : 0);
		ck_assert_uint_eq(f.sig_bad + f.unsigned_reqs, 0);
	}
	/* the final SESSION_SETUP answer unsigned: taken, as signing is not required */
	r = with_signing(fake_tamper, TAMPER(SMB2_SESSION_SETUP, UNSIGN), true, SIGN_SETUP, 0, &f);
	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(f.done, 1);
}
END_TEST

/* SMB 3.1.1 and encryption: three builds on one connection (fresh, listed, one file fixed)
 * with every cipher, required of the session or of the share, and 3.0.2's AES-128-CCM; every
 * request after the logon opened by the fake (a share's TREE_CONNECT goes in clear), every
 * answer opened; what the sessions spoke said. The compounds go as one transform each. */
START_TEST(test_encrypted_builds)
{
	static const struct {
		uint16_t dialect, cipher;
		bool session;
		const char *how;
	} d[] = {
		{0x0311, 1, true, "SMB 3.1.1, encrypted (AES-128-CCM)"},
		{0x0311, 2, true, "SMB 3.1.1, encrypted (AES-128-GCM)"},
		{0x0311, 3, false, "SMB 3.1.1, encrypted (AES-256-CCM) on this share"},
		{0x0311, 4, true, "SMB 3.1.1, encrypted (AES-256-GCM)"},
		{0x0302, 1, true, "SMB 3.0.2, encrypted (AES-128-CCM)"},
	};

	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		struct fake f;
		int fd = fake_start(&f, NULL, 0);
		struct pv_secret *pw =
			pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
		struct pv_smb_sync *conn = NULL;
		struct pv_smb_tree_result res[3];

		f.dialect = d[i].dialect;
		f.cipher = d[i].cipher;
		f.encrypt_session = d[i].session;
		f.encrypt_share = !d[i].session;
		fake_run(&f);
		ck_assert_int_eq(smb2_connect_fd(fd, "fake", T_MS, &conn), PV_OK);
		three_builds(&f, conn, pw, d[i].how, res);
		ck_assert_str_eq(pv_smb_sync_describe(conn), d[i].how);
		ck_assert(pv_smb_sync_encrypting(conn));
		ck_assert_uint_eq(f.enc_bad + f.clear_refused, 0);
		/* a frame per compound: fewer frames than requests after the logons, and at least
		 * one per compound on the tree: the fresh build's folder, 3 files and the big
		 * file's 7 frames (CREATE, 5 WRITEs, CLOSE), two listings (u1, u1/d) in each
		 * build after it, and the file fixed in the third */
		ck_assert_uint_ge(f.enc_ok, 1 + 3 + 7 + 2 + 2 + 1);
		ck_assert_uint_lt(f.enc_ok, after_logon(&f));
		ck_assert(!pv_smb_sync_lost(conn));
		pv_smb_sync_free(conn);
		pv_secret_free(pw);
		fake_stop(&f);
	}
}
END_TEST

/* ---- deadlines ---- */

START_TEST(test_endless_keepalives)
{
	struct fake f;
	struct run r = with(fake_hold_keepalive, SMB2_TREE_CONNECT, true, &f);

	ck_assert_failed(
		r, PV_EUNREACH,
		"SMB to 'fake': no final answer to TREE_CONNECT in 600 ms (keep-alives and "
		"interim answers do not extend a request)");
	ck_assert(r.lost);
	ck_assert_uint_eq(f.hooked, 4); /* negotiate, 2 session setups, tree connect */
}
END_TEST

START_TEST(test_endless_pending)
{
	struct fake f;
	struct run r = with(fake_hold_pending, SMB2_SESSION_SETUP, true, &f);

	ck_assert_failed(r, PV_EUNREACH, "no final answer to SESSION_SETUP in 600 ms");
	ck_assert(r.lost);
	/* in the pipeline: the CREATE compounds in flight never answered */
	r = with(fake_hold_pending, SMB2_CREATE, true, &f);
	ck_assert_failed(r, PV_EUNREACH, "SMB to 'fake': no final answer to CREATE in 600 ms");
	ck_assert(r.lost);
}
END_TEST

/* Every answer comes, late: 400 ms after its request (within 3T), with keep-alives. */
static enum fake_act slow(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)q;
	(void)reply;
	if (q->cmd != SMB2_NEGOTIATE)
		for (int i = 0; i < 8; i++) {
			struct timespec ts = {0, 50 * 1000000L};

			nanosleep(&ts, NULL);
			fake_keepalive(f);
		}
	return FAKE_SEND;
}

START_TEST(test_build_deadline)
{
	static const struct pv_smb_item one[] = {{"d", true, 0}};
	struct fake f;
	int fd = fake_start(&f, slow, 0);
	struct run r;

	fake_run(&f);
	/* T x (8 + 1 item) = 1.8 s; logon, tree connect and the listing of u1 (CREATE, two
	 * QUERY_DIRECTORY, CLOSE) take 7 x 400 ms before the folder is even asked for */
	r = build(fd, one, 1, false);
	fake_stop(&f);
	ck_assert_failed(r, PV_EUNREACH,
			 "SMB to 'fake': the tree build as u1 passed its deadline of 1800 ms (the "
			 "timeout 200 ms times 8 + items + MiB written)");
	ck_assert(r.lost);
}
END_TEST

/* ---- malformed frames ---- */

START_TEST(test_short_frames)
{
	for (long n = 0; n <= 10; n += 10) {
		struct fake f;
		struct run r = with(fake_short_frame, n, true, &f);
		char want[128];

		snprintf(want, sizeof(want),
			 "SMB to 'fake': a malformed answer: a frame of %ld bytes, shorter than an "
			 "SMB2 header (64 bytes)",
			 n);
		ck_assert_failed(r, PV_EREMOTE, want);
		ck_assert(r.lost);
	}
}
END_TEST

START_TEST(test_bad_netbios)
{
	static const char *want[] = {
		"not an SMB2 answer (a NetBIOS message of type 0x82, 0 bytes)",
		"not an SMB2 answer (a NetBIOS message of type 0x85, 4 bytes)",
		"a frame of 1052673 bytes, more than the 1052672 this client takes",
		"a frame of 16777215 bytes, more than the 1052672 this client takes",
	};

	for (long i = 0; i < 4; i++) {
		struct fake f;
		struct run r = with(fake_bad_netbios, i, true, &f);

		ck_assert_failed(r, PV_EREMOTE, want[i]);
		ck_assert(r.lost);
	}
}
END_TEST

START_TEST(test_truncated_frame)
{
	struct fake f;
	struct run r = with(fake_cut_frame, SMB2_SESSION_SETUP, true, &f);

	ck_assert_failed(r, PV_EUNREACH, "SMB to 'fake': the connection was closed");
	ck_assert(r.lost);
	r = with(fake_cut_frame, -SMB2_TREE_CONNECT, true, &f);
	ck_assert_failed(r, PV_EUNREACH,
			 "SMB to 'fake': no final answer to TREE_CONNECT in 600 ms");
	ck_assert(r.lost);
}
END_TEST

START_TEST(test_bad_offsets)
{
	struct {
		fake_hook hook;
		long arg;
		bool fresh;
		const char *want;
	} cases[] = {
		/* NextCommand shorter than a header, and past the frame */
		{fake_poke, POKE(SMB2_CREATE, 20, 8), true,
		 "a malformed compound answer: NextCommand 8 at byte 0 points outside its frame"},
		{fake_poke, POKE(SMB2_CREATE, 20, 4096), true,
		 "a malformed compound answer: NextCommand 4096 at byte 0 points outside"},
		{fake_poke, POKE(SMB2_NEGOTIATE, 20, 80), true,
		 "a malformed compound answer: NextCommand 80 at byte 0 points outside its frame "
		 "of 128 bytes"},
		/* NextCommand inside the frame: the answer ends there */
		{fake_poke, POKE(SMB2_NEGOTIATE, 20, 64), true,
		 "a malformed answer: NEGOTIATE with a body of 0 bytes, 64 expected"},
		/* SESSION_SETUP's security buffer: offset past the answer, length past it */
		{fake_poke, POKE(SMB2_SESSION_SETUP, 68, 0x0010fff0), true,
		 "a malformed answer: SESSION_SETUP's security buffer (16 bytes at 65520) is not "
		 "inside"},
		{fake_poke, POKE(SMB2_SESSION_SETUP, 68, 0xfff00048), true,
		 "a malformed answer: SESSION_SETUP's security buffer (65520 bytes at 72) is not "
		 "inside"},
		/* QUERY_DIRECTORY's buffer, and an entry's name length and next offset */
		{fake_poke, POKE(SMB2_QUERY_DIRECTORY, 68, 0x7fffffff), false,
		 "a malformed answer: QUERY_DIRECTORY's buffer (2147483647 bytes at 72) is not "
		 "inside"},
		{fake_poke, POKE(SMB2_QUERY_DIRECTORY, 66, 0x00000008), false,
		 "a malformed answer: QUERY_DIRECTORY's buffer"},
		{fake_poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 0x10000), false,
		 "a malformed listing of //fake/fsroot1/u1: an entry whose name (65536 bytes)"},
		{fake_poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 600), false,
		 "an entry whose name (600 bytes)"},
		{fake_poke, POKE(SMB2_QUERY_DIRECTORY, 72, 0x100000), false,
		 "NextEntryOffset (1048576) does not fit"},
		{fake_poke, POKE(SMB2_QUERY_DIRECTORY, 72, 8), false,
		 "NextEntryOffset (8) does not fit"},
		/* the protocol id, and a message id nobody asked, a command answering another */
		{fake_poke, POKE(SMB2_TREE_CONNECT, 0, 0x424d53ff), true,
		 "a malformed answer: no SMB2 header at byte 0 of its frame"},
		{fake_poke, POKE(SMB2_CREATE, 24, 999), true,
		 "a malformed answer: CREATE for message 999, which is not in flight"},
		{fake_poke, POKE(SMB2_TREE_CONNECT, 12, SMB2_CREATE), true,
		 "a malformed answer: CREATE answering TREE_CONNECT"},
		{fake_poke, POKE(SMB2_CREATE, 12, SMB2_CLOSE), true,
		 "a malformed answer: CLOSE answering CREATE"},
		/* bodies shorter than their command's */
		{fake_cut_body, SMB2_NEGOTIATE | 40 << 16, true,
		 "a malformed answer: NEGOTIATE with a body of 40 bytes, 64 expected"},
		{fake_cut_body, SMB2_TREE_CONNECT | 8 << 16, true,
		 "a malformed answer: TREE_CONNECT with a body of 8 bytes, 16 expected"},
		{fake_cut_body, SMB2_SESSION_SETUP | 4 << 16, true,
		 "a malformed answer: SESSION_SETUP with a body of 4 bytes, 8 expected"},
		{fake_cut_body, SMB2_CREATE | 70 << 16, false,
		 "a malformed answer: CREATE with a body of 70 bytes, 88 expected"},
		{fake_cut_body, SMB2_CREATE | 70 << 16, true,
		 "a malformed answer: CREATE with a body of 70 bytes, 88 expected"},
		{fake_cut_body, SMB2_QUERY_DIRECTORY | 6 << 16, false,
		 "a malformed answer: QUERY_DIRECTORY with a body of 6 bytes, 8 expected"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f;
		struct run r = with(cases[i].hook, cases[i].arg, cases[i].fresh, &f);

		ck_assert_msg(r.r == PV_EREMOTE && strstr(r.msg, cases[i].want),
			      "case %zu: %d '%s' lacks '%s'", i, r.r, r.msg, cases[i].want);
		ck_assert_msg(r.lost, "case %zu: the connection should be lost", i);
	}
}
END_TEST

/* The answer to the first CREATE compound (a folder's CREATE + CLOSE, or a file's) without
 * its last message, which never comes (f->arg 1); or its first message twice (2). */
static enum fake_act compound_fault(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t *m = (uint8_t *)reply->data;
	uint32_t next = reply->len >= SMB2_HDR ? smb2_get32(m + 20) : 0;
	size_t off = 0, prev = 0;

	if (q->cmd != SMB2_CREATE || !next || f->done++)
		return FAKE_SEND;
	if (f->arg == 2) {
		smb2_put32(m + 20, 0);
		fake_send_frame(f, m, next);
		fake_send_frame(f, m, next);
		fake_client_gone(f, 5000); /* it may still be sending compounds */
		return FAKE_HANGUP;
	}
	while (smb2_get32(m + off + 20)) {
		prev = off;
		off += smb2_get32(m + off + 20);
	}
	smb2_put32(m + prev + 20, 0);
	fake_send_frame(f, m, off);
	fake_stall(f, 0, 0);
	return FAKE_HANGUP;
}

START_TEST(test_truncated_compound)
{
	struct fake f;
	struct run r = with(compound_fault, 1, true, &f);

	/* the folder's CREATE + CLOSE answered without the CLOSE: the pipeline waits, in vain */
	ck_assert_failed(r, PV_EUNREACH, "SMB to 'fake': no final answer to CLOSE in 600 ms");
	ck_assert(r.lost);
	r = with(compound_fault, 2, true, &f);
	ck_assert_failed(r, PV_EREMOTE,
			 "a malformed answer: CREATE for message 5, which is not in "
			 "flight (never sent, or answered already)");
	ck_assert(r.lost);
}
END_TEST

START_TEST(test_dialect_not_offered)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct run r;

	f.dialect = 0x0312;
	fake_run(&f);
	r = build(fd, ITEMS, NITEMS, true);
	fake_stop(&f);
	ck_assert_failed(r, PV_EREMOTE,
			 "SMB to 'fake': the server chose dialect 0x0312, not one offered");
}
END_TEST

/* ---- security buffers ---- */

START_TEST(test_target_info_64k)
{
	/* 65400 and 65460 bytes fit the challenge (SMB2's security buffer holds 65535 with the
	 * NTLM and SPNEGO headers); the AUTHENTICATE carrying them would not (it was sent with
	 * its length cut to 16 bits): refused, nothing is sent */
	static const size_t sizes[] = {65400, 65460};

	for (size_t i = 0; i < 2; i++) {
		struct fake f;
		int fd = fake_start(&f, NULL, 0);
		struct run r;
		char want[256];

		f.target_info = sizes[i];
		fake_run(&f);
		r = build(fd, ITEMS, NITEMS, true);
		fake_stop(&f);
		snprintf(want, sizeof(want),
			 "SMB logon as LAB\\u1 on 'fake': the server's NTLM target info of %zu "
			 "bytes "
			 "would not fit the AUTHENTICATE message's 16-bit lengths",
			 sizes[i]);
		ck_assert_failed(r, PV_EREMOTE, want);
		ck_assert_uint_eq(f.cmds[SMB2_SESSION_SETUP], 1);
		ck_assert_uint_eq(f.logons_ok + f.logons_bad, 0);
	}
	{ /* the largest that fits is answered, and the server can check it */
		struct fake f;
		int fd = fake_start(&f, NULL, 0);
		struct run r;

		f.target_info = 65000;
		fake_run(&f);
		r = build(fd, ITEMS, NITEMS, true);
		fake_stop(&f);
		ck_assert_msg(r.r == PV_OK, "%s", r.msg);
		ck_assert_uint_eq(f.logons_ok, 1);
	}
}
END_TEST

/* pv_smb_ntlm_authenticate itself: fields over 16 bits are refused (-2), not cut. The server's
 * target info is one long AV pair and MsvAvEOL; the client adds its channel bindings (20
 * bytes) and "cifs/fake" (4 + 18) to it, and the NTLMv2 response is 48 bytes more. */
START_TEST(test_ntlm_field_limits)
{
	enum { ADDED = 20 + 4 + 18 };
	static uint8_t info[65535];
	static const size_t lens[] = {65535 - 48 - ADDED, 65535 - 47 - ADDED, 65535};
	uint8_t skey[16];
	struct pv_smb_ntlm_challenge c = {0};
	struct pv_smb_ntlm_logon l = {
		"u1", "LAB", "pw", 2, "cifs/fake", NULL, 0, 0, (const uint8_t *)"12345678"};
	struct pv_buf b = PV_BUF_INIT;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(info, 0, sizeof(info));
		info[0] = 2; /* MsvAvNbDomainName of all but MsvAvEOL's 4 bytes */
		smb2_put16(info + 2, (uint16_t)(lens[i] - 8));
		c.target_info = info;
		c.target_info_len = lens[i];
		/* NtChallengeResponse: 65535 bytes, then one more */
		ck_assert_int_eq(pv_smb_ntlm_authenticate(&c, &l, &b, skey), i == 0 ? 0 : -2);
	}
	pv_buf_release(&b, 0);
}
END_TEST

/* ---- paths ---- */

START_TEST(test_path_limit)
{
	struct fake f;
	char deep[1200] = "u1";
	int fd = fake_start(&f, NULL, 0);
	struct run r;
	struct pv_smb_item long_item = {NULL, false, 1};
	char name[1100];

	/* the server holds u1/d{100}/d{100}/... 11 deep: the 11th passes 1023 bytes (1113) */
	for (size_t l; (l = strlen(deep)) + 101 < sizeof(deep);) {
		deep[l] = '/';
		memset(deep + l + 1, 'd', 100);
		deep[l + 101] = 0;
		fake_mknode(&f, deep, true, 0);
	}
	fake_run(&f);
	r = build(fd, ITEMS, NITEMS, false);
	fake_stop(&f);
	ck_assert_failed(r, PV_EREMOTE, "SMB listing //fake/fsroot1/u1: the path 'dddd");
	ck_assert_failed(r, PV_EREMOTE,
			 "' below it is 1113 bytes with the base, more than 1023; refused rather "
			 "than cut");
	/* u1 and 10 folders listed, each as one compound of two queries; none twice */
	ck_assert_uint_eq(f.cmds[SMB2_QUERY_DIRECTORY], 2 * 11);
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 11);

	/* a fileset path over the limit: refused before anything is made for it */
	memset(name, 'f', 1021);
	name[1021] = 0;
	long_item.path = name;
	fd = fake_start(&f, NULL, 0);
	fake_run(&f);
	r = build(fd, &long_item, 1, true);
	fake_stop(&f);
	ck_assert_failed(r, PV_ECONFIG, "SMB //fake/fsroot1: the path 'u1/ffff");
	ck_assert_failed(r, PV_ECONFIG,
			 "' is 1024 bytes, more than 1023; shorten the fileset's "
			 "names");
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 0);
	ck_assert(!r.lost);
	/* 1023 exactly is fine */
	name[1020] = 0;
	fd = fake_start(&f, NULL, 0);
	fake_run(&f);
	r = build(fd, &long_item, 1, true);
	fake_stop(&f);
	ck_assert_msg(r.r == PV_OK, "%s", r.msg);
	ck_assert_uint_eq(f.cmds[SMB2_CREATE], 1);
}
END_TEST

/* A listed name holding a separator would pass for a path of several names. */
START_TEST(test_listed_bad_name)
{
	struct fake f;
	int fd = fake_start(&f, NULL, 0);
	struct run r;

	fake_mknode(&f, "u1/a\\b", false, 3); /* the fake lists it as is */
	fake_run(&f);
	r = build(fd, ITEMS, NITEMS, false);
	fake_stop(&f);
	ck_assert_failed(
		r, PV_EREMOTE,
		"SMB to 'fake': a malformed listing of //fake/fsroot1/u1: the server listed a "
		"bad name 'a\\b'");
}
END_TEST

/* ---- the fuzz target's seed corpus ---- */

/* The faults the corpus holds besides the valid conversation, as (hook, arg). */
static const struct {
	const char *name;
	fake_hook hook;
	long arg;
	size_t target_info;
	int signing; /* with signing required, the plan's fixed randomness makes the
		      * signatures hold when the fuzz target replays the answers */
	uint16_t dialect;
	/* SMB 3: the fake's cipher, signing algorithm, what it requires encrypted; a seed
	 * whose conversation must fail though it has no hook */
	uint16_t cipher, sign_alg;
	bool enc_session, enc_share, no_context, fails;
} SEEDS[] = {
	{"valid", NULL, 0, 0},
	{"target-info-64k", NULL, 0, 65460},
	{"interim", pending_once, 0},
	{"split", split, 0},
	{"short-frame", fake_short_frame, 10},
	{"netbios-type", fake_bad_netbios, 0},
	{"netbios-huge", fake_bad_netbios, 2},
	{"cut-frame", fake_cut_frame, SMB2_SESSION_SETUP},
	{"next-short", fake_poke, POKE(SMB2_CREATE, 20, 8)},
	{"secbuf-outside", fake_poke, POKE(SMB2_SESSION_SETUP, 68, 0x0010fff0)},
	{"listing-outside", fake_poke, POKE(SMB2_QUERY_DIRECTORY, 68, 0x7fffffff)},
	{"entry-name", fake_poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 0x10000)},
	{"cut-body", fake_cut_body, SMB2_CREATE | 70 << 16},
	{"compound-cut", compound_fault, 1},
	{"compound-twice", compound_fault, 2},
	{"keepalives", fake_hold_keepalive, SMB2_TREE_CONNECT},
	{"pending", fake_hold_pending, SMB2_CREATE},
	{"signed-302", NULL, 0, 0, SIGN_REQUIRED, 0x0302},
	{"signed-210-interim", pending_signed, 0, 0, SIGN_REQUIRED, 0x0210},
	{"signed-flipped", fake_tamper, TAMPER(SMB2_WRITE, FLIP), 0, SIGN_REQUIRED, 0x0302},
	{"signed-missing", fake_tamper, TAMPER(SMB2_QUERY_DIRECTORY, UNSIGN), 0, SIGN_REQUIRED,
	 0x0202},
	/* SMB 3.1.1: its negotiate contexts and preauth hash, AES-GMAC signing, encryption (the
	 * transform header) with each cipher, and the transform's faults */
	{"smb311", NULL, 0, 0, SIGN_NONE, 0x0311},
	{"smb311-gmac", NULL, 0, 0, SIGN_REQUIRED, 0x0311, 0, 2},
	{"smb311-no-context", NULL, 0, 0, SIGN_NONE, 0x0311, .no_context = true, .fails = true},
	{"enc-311-gcm", NULL, 0, 0, SIGN_NONE, 0x0311, 2, .enc_session = true},
	{"enc-311-ccm256-share", NULL, 0, 0, SIGN_NONE, 0x0311, 3, .enc_share = true},
	{"enc-302-ccm", NULL, 0, 0, SIGN_NONE, 0x0302, 1, .enc_session = true},
	{"enc-tampered", fake_tf_tamper, SMB2_WRITE | TF_FLIP << 16, 0, SIGN_NONE, 0x0311, 4,
	 .enc_session = true},
	{"enc-nonce", fake_tf_tamper, SMB2_CREATE | TF_NONCE << 16, 0, SIGN_NONE, 0x0311, 2,
	 .enc_session = true},
	{"enc-session-id", fake_tf_tamper, SMB2_TREE_CONNECT | TF_SID << 16, 0, SIGN_NONE, 0x0311,
	 2, .enc_session = true},
	{"enc-truncated", fake_tf_tamper, SMB2_LOGOFF | TF_SHORT << 16, 0, SIGN_NONE, 0x0311, 1,
	 .enc_session = true},
};

/* The plan against the fake server under each fault: never a crash, a clear error for each
 * fault; with PV_SMB2_CORPUS set, what the server sent goes to a file per seed there. */
START_TEST(test_plan_and_corpus)
{
	const char *dir = getenv("PV_SMB2_CORPUS");

	for (size_t i = 0; i < sizeof(SEEDS) / sizeof(SEEDS[0]); i++) {
		struct fake f;
		struct pv_smb_tree_result res;
		int fd = fake_start(&f, SEEDS[i].hook, SEEDS[i].arg), r;

		f.target_info = SEEDS[i].target_info;
		f.signing = SEEDS[i].signing;
		f.dialect = SEEDS[i].dialect;
		f.cipher = SEEDS[i].cipher;
		f.sign_alg = SEEDS[i].sign_alg;
		f.encrypt_session = SEEDS[i].enc_session;
		f.encrypt_share = SEEDS[i].enc_share;
		f.no_context = SEEDS[i].no_context;
		fake_mknode(&f, "u1/d", true, 0); /* the plan finds d, and b of another size */
		fake_mknode(&f, "u1/b", false, 5);
		if (dir) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", dir, SEEDS[i].name);
			ck_assert_ptr_nonnull(f.capture = fopen(path, "wb"));
		}
		fake_run(&f);
		r = smb2_plan_run(fd, T_MS, &res);
		fake_stop(&f);
		if (!SEEDS[i].hook && !SEEDS[i].target_info && !SEEDS[i].fails) {
			ck_assert_msg(r == PV_OK, "%s", pv_errmsg());
			ck_assert_uint_eq(res.files_made, 3);
			ck_assert_uint_eq(res.files_fixed, 1);
			/* signed whatever the server requires, when they go in clear: 3.0.2's
			 * VALIDATE_NEGOTIATE, 3.1.1's TREE_CONNECT */
			ck_assert_uint_eq(f.signed_ok, SEEDS[i].signing	      ? after_logon(&f)
						       : SEEDS[i].enc_session ? 0
									      : 1);
		} else if (SEEDS[i].hook == pending_once || SEEDS[i].hook == split ||
			   SEEDS[i].hook == pending_signed) {
			ck_assert_msg(r == PV_OK, "%s: %s", SEEDS[i].name, pv_errmsg());
		} else if (SEEDS[i].hook == fake_tamper) {
			ck_assert_msg(r == PV_EREMOTE && strstr(pv_errmsg(), "has a bad signature"),
				      "%s: %d %s", SEEDS[i].name, r, pv_errmsg());
		} else if (SEEDS[i].hook == fake_tf_tamper) {
			ck_assert_msg(r == PV_EREMOTE &&
					      (strstr(pv_errmsg(), "failed decryption") ||
					       strstr(pv_errmsg(), "transform header")),
				      "%s: %d %s", SEEDS[i].name, r, pv_errmsg());
		} else {
			ck_assert_msg(r != PV_OK && strncmp(pv_errmsg(), "SMB ", 4) == 0,
				      "%s: %d %s", SEEDS[i].name, r, pv_errmsg());
		}
	}
}
END_TEST

/* The fuzz target itself (LLVMFuzzerTestOneInput) over every seed and every crash it
 * found, under ASan and UBSan here too: those inputs stay harmless. */
#include "tests/fuzz/fuzz_smb2.c"

static void replay(void *arg, const char *name, const uint8_t *data, size_t len)
{
	(void)arg;
	(void)name;
	ck_assert_int_eq(LLVMFuzzerTestOneInput(data, len), 0);
}

START_TEST(test_fuzz_replay)
{
	static const char *dirs[] = {"tests/fuzz/corpus/smb2", "tests/fuzz/crashes/smb2"};
	int files = 0;

	for (int d = 0; d < 2; d++) {
		int n = pv_unit_inputs(dirs[d], INPUT_MAX, replay, NULL);

		ck_assert_msg(n >= 0, "%s: %s (run from the top of the tree)", dirs[d],
			      strerror(errno));
		files += n;
	}
	ck_assert_int_ge(files, 23);
}
END_TEST

/* The signed and encrypted seeds, replayed as the fuzz target does (the recorded answers
 * streamed at once, the plan run against them): the fixed randomness (GUID, salt, client
 * challenge) gives the same preauth hash and session keys as when they were recorded, so the
 * valid ones build the tree, signatures, decryption and all, and the faulty ones fail on the
 * signature or the decryption, not on anything before it. */
START_TEST(test_signed_seeds_replay)
{
	static const struct {
		const char *name, *want;
	} seeds[] = {
		{"signed-302", NULL},
		{"signed-210-interim", NULL},
		{"signed-flipped", "WRITE (message "},
		{"signed-missing", "QUERY_DIRECTORY (message "},
		{"smb311", NULL},
		{"smb311-gmac", NULL},
		{"enc-311-gcm", NULL},
		{"enc-311-ccm256-share", NULL},
		{"enc-302-ccm", NULL},
		{"enc-tampered", "does not open under the session's AES-256-GCM key"},
		{"enc-nonce", "does not open under the session's AES-128-GCM key"},
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[256];
		uint8_t *data = malloc(INPUT_MAX);
		FILE *fp;
		struct server srv = {-1, data, 0};
		struct pv_smb_tree_result res;
		pthread_t th;
		int sv[2], r;

		snprintf(path, sizeof(path), "tests/fuzz/corpus/smb2/%s", seeds[i].name);
		ck_assert_ptr_nonnull(data);
		ck_assert_msg((fp = fopen(path, "rb")) != NULL, "%s: %s", path, strerror(errno));
		srv.len = fread(data, 1, INPUT_MAX, fp);
		fclose(fp);
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		srv.fd = sv[1];
		ck_assert_int_eq(pthread_create(&th, NULL, stream, &srv), 0);
		pv_error_clear();
		r = smb2_plan_run(sv[0], 60000, &res);
		pthread_join(th, NULL);
		close(sv[1]);
		free(data);
		if (!seeds[i].want) {
			ck_assert_msg(r == PV_OK, "%s: %s", seeds[i].name, pv_errmsg());
			ck_assert_uint_eq(res.files_made, 3);
		} else {
			ck_assert_msg(r == PV_EREMOTE &&
					      (strstr(pv_errmsg(), "has a bad signature") ||
					       strstr(pv_errmsg(), "failed decryption")) &&
					      strstr(pv_errmsg(), seeds[i].want),
				      "%s: %d %s", seeds[i].name, r, pv_errmsg());
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sync");
	TCase *tc = tcase_create("valid");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_build_and_list);
	tcase_add_test(tc, test_downgrade_and_mic);
	tcase_add_test(tc, test_mirror);
	tcase_add_test(tc, test_plan_parts);
	tcase_add_test(tc, test_interim_and_split);
	tcase_add_test(tc, test_logon_refused);
	tcase_add_test(tc, test_share_refused);
	suite_add_tcase(s, tc);
	tc = tcase_create("signing");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_signed_builds);
	tcase_add_test(tc, test_bad_signatures);
	tcase_add_test(tc, test_signing_not_required);
	tcase_add_test(tc, test_encrypted_builds);
	suite_add_tcase(s, tc);
	tc = tcase_create("deadlines");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_endless_keepalives);
	tcase_add_test(tc, test_endless_pending);
	tcase_add_test(tc, test_build_deadline);
	suite_add_tcase(s, tc);
	tc = tcase_create("malformed");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_short_frames);
	tcase_add_test(tc, test_bad_netbios);
	tcase_add_test(tc, test_truncated_frame);
	tcase_add_test(tc, test_bad_offsets);
	tcase_add_test(tc, test_truncated_compound);
	tcase_add_test(tc, test_dialect_not_offered);
	suite_add_tcase(s, tc);
	tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_target_info_64k);
	tcase_add_test(tc, test_ntlm_field_limits);
	tcase_add_test(tc, test_path_limit);
	tcase_add_test(tc, test_listed_bad_name);
	suite_add_tcase(s, tc);
	tc = tcase_create("fuzz-plan");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_plan_and_corpus);
	tcase_add_test(tc, test_fuzz_replay);
	tcase_add_test(tc, test_signed_seeds_replay);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
