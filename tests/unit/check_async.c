/* tests/unit/check_async.c: smb/async.h, the event-driven SMB2 client of the load driver,
 * against the fake server of tests/unit/fake_smb2.h, over socketpairs (smba_open_fd), the
 * loop driven by pv_smb_loop_run as load/worker.c drives it.
 *
 * A flow (below) is what a user of the driver does, with several requests in flight at once:
 * open (negotiate, NTLMv2 logon checked by the fake, tree connect), then a file read in
 * chunks with its attributes, a folder listed over several answers, a file written and
 * renamed, one deleted on close. The valid runs check what came back and what the fake holds;
 * the faulty ones (malformed frames and bodies, answers to nothing, deadlines, refused logons,
 * bad signatures) check the code and message that the ready or request callbacks get, and
 * that every callback ran exactly once (ASan and LeakSanitizer check the rest).
 *
 * With PV_ASYNC_CORPUS=<folder> set, the plan of tests/fuzz/async_plan.h is run against the
 * fake, as is and under each fault, and what the fake sent is written there: the seed corpus
 * of tests/fuzz/fuzz_async.c. */
#include <check.h>

#include "tests/unit/unit.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "smb/async.h"
#include "smb/internal.h"
#include "smb/smb2.h"
#include "tests/fuzz/async_plan.h"
#include "tests/unit/fake_smb2.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/secret.h"
#include "util/utf16.h"

#define T_MS   200   /* the connections' timeout in the faults: per request and the opening */
#define T_OK   10000 /* ... in the valid flows: 50 connections under ASan take their time */
#define FSIZE  150000u
#define NDIR   20 /* files in u1/d, and a folder */
#define WRITE1 65536u
#define WRITE2 100u

/* ---- a flow: one connection and its requests ---- */

struct flow;

/* One callback expected: the opening's (ready) or a request's. */
struct call {
	struct flow *fl;
	const char *what;
	void (*next)(struct call *k, const struct pv_smb_done *d);
	int calls, code;
	unsigned seq; /* when its callback came (of every callback in the process) */
	bool refused; /* the request was not queued: no callback may come */
	bool durable; /* a CREATE's answer made the open durable */
	uint32_t status;
	char msg[512];
	uint64_t off;
};

struct flow {
	struct fake f;
	struct pv_smb_conn *c;
	struct call ready;
	struct call k[64];
	unsigned n;
	uint8_t fid_f[16], fid_d[16], fid_w[16], fid_g[16];
	unsigned names, dirs, pages;
	bool read_bad, list_bad;
	uint64_t read, stat_size, opened_size;
	bool open_only; /* only the opening */
	char desc[96];	/* what the connection spoke once open (pv_smb_describe) */
	bool stop;	/* issue nothing more */
};

static uint8_t WDATA[WRITE1 + WRITE2];
static unsigned callbacks; /* callbacks so far */
/* Inside pv_smb_loop_run, pv_smb_close_conn or pv_smb_loop_free: the only places async.h
 * lets a callback come from (never from inside a request function). */
static bool in_loop;

static void on_call(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct call *k = arg;

	(void)c;
	ck_assert_msg(in_loop, "%s: a callback from outside the loop", k->what);
	if (++k->calls > 1)
		return;
	k->seq = ++callbacks;
	k->code = d->code;
	k->status = d->status;
	k->durable = d->durable;
	snprintf(k->msg, sizeof(k->msg), "%s", d->msg ? d->msg : "");
	if (d->code == PV_OK && k->next && !k->fl->stop)
		k->next(k, d);
}

static struct call *issue(struct flow *fl, const char *what,
			  void (*next)(struct call *k, const struct pv_smb_done *d))
{
	struct call *k;

	ck_assert_uint_lt(fl->n, sizeof(fl->k) / sizeof(fl->k[0]));
	k = &fl->k[fl->n++];
	memset(k, 0, sizeof(*k));
	k->fl = fl;
	k->what = what;
	k->next = next;
	return k;
}

/* Make a request: a new call k for it (what it is, where its answer goes), then the
 * pv_smb_* function fn with the arguments given and on_call, k. */
#define REQ(fl, what, next, fn, ...)                                                               \
	(k = issue((fl), (what), (next)), sent(k, fn(__VA_ARGS__, on_call, k)))

/* What a request function returned: not queued, its callback must never come. k. */
static struct call *sent(struct call *k, int r)
{
	if (r != PV_OK) {
		k->refused = true;
		snprintf(k->msg, sizeof(k->msg), "%s", pv_errmsg());
	}
	return k;
}

static void f_read(struct call *k, const struct pv_smb_done *d)
{
	for (size_t i = 0; i < d->buflen; i++)
		if (d->buf[i] != fake_byte(k->off + i))
			k->fl->read_bad = true;
	k->fl->read += d->buflen;
}

static void f_stat(struct call *k, const struct pv_smb_done *d)
{
	if (d->status == ST_OK && d->buflen >= 56)
		k->fl->stat_size = smb2_get64(d->buf + 40);
}

/* The CREATE that k asked for answered d: its file id into fid (the flow's), the flow; NULL
 * when it was refused. */
static struct flow *opened(struct call *k, const struct pv_smb_done *d, uint8_t fid[16])
{
	if (d->status != ST_OK)
		return NULL;
	memcpy(fid, d->fid, 16);
	return k->fl;
}

static void f_opened(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = opened(k, d, k->fl->fid_f);

	if (!fl)
		return;
	fl->opened_size = d->size;
	for (uint64_t off = 0; off < FSIZE; off += 65536) { /* 3 READs in flight */
		REQ(fl, "READ", f_read, pv_smb_read, fl->c, fl->fid_f, off, 65536)->off = off;
	}
	REQ(fl, "QUERY_INFO", f_stat, pv_smb_stat, fl->c, fl->fid_f);
	REQ(fl, "CLOSE f", NULL, pv_smb_closefile, fl->c, fl->fid_f);
}

static int count_entry(void *arg, const char *name, bool dir, uint64_t size)
{
	struct flow *fl = arg;

	(void)size;
	if (strncmp(name, dir ? "sub" : "x", dir ? 3 : 1) != 0)
		fl->list_bad = true;
	fl->names++;
	fl->dirs += dir;
	return 0;
}

static void d_listed(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;

	if (d->status == ST_OK) {
		fl->pages++;
		if (pv_smb_entries(d->buf, d->buflen, count_entry, fl) != PV_OK)
			fl->list_bad = true;
		REQ(fl, "QUERY_DIRECTORY", d_listed, pv_smb_list, fl->c, fl->fid_d, false);
		return;
	}
	REQ(fl, "CLOSE d", NULL, pv_smb_closefile, fl->c, fl->fid_d);
}

static void d_opened(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = opened(k, d, k->fl->fid_d);

	if (!fl)
		return;
	REQ(fl, "QUERY_DIRECTORY", d_listed, pv_smb_list, fl->c, fl->fid_d, true);
}

static void w_opened(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = opened(k, d, k->fl->fid_w);

	if (!fl)
		return;
	REQ(fl, "WRITE", NULL, pv_smb_write, fl->c, fl->fid_w, 0, WDATA, WRITE1);
	REQ(fl, "WRITE", NULL, pv_smb_write, fl->c, fl->fid_w, WRITE1, WDATA + WRITE1, WRITE2);
	REQ(fl, "SET_INFO", NULL, pv_smb_rename, fl->c, fl->fid_w, "u1/w2", true);
	REQ(fl, "CLOSE w", NULL, pv_smb_closefile, fl->c, fl->fid_w);
}

static void g_opened(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = opened(k, d, k->fl->fid_g);

	if (!fl)
		return;
	REQ(fl, "CLOSE g", NULL, pv_smb_closefile, fl->c, fl->fid_g);
}

static void ready(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;

	(void)d;
	snprintf(fl->desc, sizeof(fl->desc), "%s", pv_smb_describe(fl->c));
	if (fl->open_only)
		return;
	REQ(fl, "CREATE f", f_opened, pv_smb_create, fl->c, "u1/f", PV_SMB_READ, PV_SMB_OPEN,
	    PV_SMB_NONDIR);
	REQ(fl, "CREATE d", d_opened, pv_smb_create, fl->c, "u1/d", PV_SMB_READ, PV_SMB_OPEN,
	    PV_SMB_DIR);
	REQ(fl, "CREATE w", w_opened, pv_smb_create, fl->c, "u1/w", PV_SMB_WRITE, PV_SMB_OVERWRITE,
	    PV_SMB_NONDIR);
	REQ(fl, "CREATE g", g_opened, pv_smb_create, fl->c, "u1/gone", PV_SMB_READ | PV_SMB_DELETE,
	    PV_SMB_OPEN, PV_SMB_NONDIR | PV_SMB_DELCLOSE);
}

/* The fake's tree for a flow: u1/f, u1/d with NDIR files and a folder, u1/gone. */
static int flow_start(struct flow *fl, fake_hook hook, long arg)
{
	int fd;

	memset(fl, 0, sizeof(*fl));
	fd = fake_start(&fl->f, hook, arg);
	fake_mknode(&fl->f, "u1/f", false, FSIZE);
	fake_mknode(&fl->f, "u1/d", true, 0);
	for (int i = 0; i < NDIR; i++) {
		char p[32];

		snprintf(p, sizeof(p), "u1/d/x%02d", i);
		fake_mknode(&fl->f, p, false, (uint64_t)i);
	}
	fake_mknode(&fl->f, "u1/d/sub", true, 0);
	fake_mknode(&fl->f, "u1/gone", false, 10);
	fl->f.page = 6; /* 23 entries with the dots: 4 answers, then NO_MORE_FILES */
	return fd;
}

/* What the next flows' fake and client do about SMB 3 security (reset by each test that sets
 * it): the fake's cipher and signing algorithm, what it requires encrypted, what it answers
 * VALIDATE_NEGOTIATE with (0: the answer), a fault in what the client sends; what the client
 * asks for, and the server name it addresses (NULL: "fake", the host). */
static struct {
	uint16_t cipher, sign_alg;
	bool enc_session, enc_share, no_context;
	uint16_t plain_cmd;
	uint32_t validate_status;
	void (*in_hook)(struct fake *f, uint8_t *m, size_t len);
	enum pv_smb_encrypt encrypt;
	const char *server;
} sec;

/* How flow_open logs on: NTLMv2, or the SPNEGO callback below (as load/logon.c's Kerberos
 * one): the fake's one-leg stand-in, or a callback that fails. */
static enum { LOGON_NTLM, LOGON_KRB, LOGON_KRB_FAILS } logon;
static unsigned krb_steps;

static int fake_krb(void *arg, const uint8_t *in, size_t inlen, struct pv_buf *out, bool *done,
		    uint8_t key[32], size_t *keylen)
{
	(void)arg;
	krb_steps++;
	if (logon == LOGON_KRB_FAILS)
		return pv_error(PV_ECRED, "no ticket for cifs@fake (a test)");
	if (!in) {
		pv_buf_add(out, FAKE_KRB_TICKET, 8);
		return PV_OK;
	}
	if (inlen != 8 || memcmp(in, FAKE_KRB_REPLY, 8) != 0)
		return pv_error(PV_EREMOTE, "not the server's token");
	*done = true;
	memcpy(key, FAKE_KRB_KEY, 16);
	*keylen = 16;
	return PV_OK;
}

/* Open the flow's connection over fd on l as LAB\u1 with password, the timeout tmo ms. */
static void flow_open(struct flow *fl, struct pv_smb_loop *l, int fd, const char *password, int tmo)
{
	struct pv_secret *pw = pv_secret_new(password, strlen(password));
	struct pv_smb_open_opts o = {"fake", "fake", "fsroot1", "LAB", "u1", pw, tmo};

	o.encrypt = sec.encrypt;
	if (sec.server)
		o.server = sec.server;
	fl->f.validate_status = sec.validate_status;
	fl->f.in_hook = sec.in_hook;
	fl->f.cipher = sec.cipher;
	fl->f.sign_alg = sec.sign_alg;
	fl->f.encrypt_session = sec.enc_session;
	fl->f.encrypt_share = sec.enc_share;
	fl->f.no_context = sec.no_context;
	fl->f.plain_cmd = sec.plain_cmd;
	ck_assert_ptr_nonnull(pw);
	if (logon != LOGON_NTLM)
		o.auth = fake_krb;
	fl->ready.fl = fl;
	fl->ready.what = "ready";
	fl->ready.next = ready;
	fake_run(&fl->f);
	pv_error_clear();
	ck_assert_int_eq(smba_open_fd(l, fd, &o, on_call, &fl->ready, &fl->c), PV_OK);
	ck_assert_ptr_nonnull(fl->c);
	pv_secret_free(pw);
}

/* Every callback that is due has come (those of refused requests never do). */
static bool settled(const struct flow *fl)
{
	if (!fl->ready.calls)
		return false;
	for (unsigned i = 0; i < fl->n; i++)
		if (!fl->k[i].calls && !fl->k[i].refused)
			return false;
	return true;
}

/* Run l until every flow has settled, 10 s at most, then a few turns more (a second call
 * would come then). */
static void run_flows(struct pv_smb_loop *l, struct flow **fls, size_t n)
{
	double end = pv_now() + 10;
	bool all;

	in_loop = true;
	do {
		ck_assert_int_eq(pv_smb_loop_run(l, 10), PV_OK);
		all = true;
		for (size_t i = 0; i < n; i++)
			all = all && settled(fls[i]);
	} while (!all && pv_now() < end);
	ck_assert_msg(all, "the flows did not settle in 10 s");
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pv_smb_loop_run(l, 5), PV_OK);
	in_loop = false;
}

static void loop_free(struct pv_smb_loop *l)
{
	in_loop = true;
	pv_smb_loop_free(l);
	in_loop = false;
}

/* Every callback ran exactly once, none for what was refused. */
static void ck_once(const struct flow *fl)
{
	ck_assert_msg(fl->ready.calls == 1, "ready called %d times", fl->ready.calls);
	for (unsigned i = 0; i < fl->n; i++)
		ck_assert_msg(fl->k[i].calls == (fl->k[i].refused ? 0 : 1),
			      "request %u (%s%s) called %d times", i, fl->k[i].what,
			      fl->k[i].refused ? ", refused" : "", fl->k[i].calls);
}

/* One flow on a loop of its own against a fake with hook, to the end; then the loop is
 * freed and the fake's thread joined (fake_stop(&fl->f) once it has been looked at). */
static void flow_run(struct flow *fl, fake_hook hook, long arg, int signing, uint16_t dialect,
		     int credits, const char *password, int tmo)
{
	struct pv_smb_loop *l = NULL;
	struct flow *one = fl;
	int fd = flow_start(fl, hook, arg);

	fl->f.signing = signing;
	fl->f.dialect = dialect;
	fl->f.credits = credits;
	ck_assert_int_eq(pv_smb_loop_new(&l), PV_OK);
	flow_open(fl, l, fd, password ? password : FAKE_PASSWORD, tmo);
	run_flows(l, &one, 1);
	loop_free(l);
	fake_join(&fl->f);
	ck_once(fl);
}

/* Whether the client checks a negotiation of this dialect (0: the fake's 3.0.2) with
 * FSCTL_VALIDATE_NEGOTIATE_INFO after the tree connect: 3.0 and 3.0.2. */
static bool validates(uint16_t dialect)
{
	return dialect == 0 || dialect == 0x0300 || dialect == 0x0302;
}

/* What a valid flow must have done, on the client's side and in the fake. */
static void ck_valid(struct flow *fl, const char *how)
{
	const struct fake_node *w2;

	ck_assert_msg(fl->ready.code == PV_OK, "%s: %s", how, fl->ready.msg);
	for (unsigned i = 0; i < fl->n; i++) {
		const struct call *k = &fl->k[i];
		bool last_list = i + 1 < fl->n && strcmp(fl->k[i + 1].what, "CLOSE d") == 0;

		ck_assert_msg(!k->refused && k->code == PV_OK, "%s: %s: %s", how, k->what, k->msg);
		ck_assert_msg(k->status == (last_list ? ST_NO_MORE_FILES : ST_OK),
			      "%s: %s: status 0x%08x", how, k->what, k->status);
	}
	/* 4 CREATEs, 3 READs, QUERY_INFO, CLOSE; 4 listings and the end, CLOSE; 2 WRITEs,
	 * SET_INFO, CLOSE; CLOSE */
	ck_assert_uint_eq(fl->n, 4 + 5 + 6 + 4 + 1);
	ck_assert_uint_eq(fl->opened_size, FSIZE);
	ck_assert_uint_eq(fl->read, FSIZE);
	ck_assert(!fl->read_bad);
	ck_assert_uint_eq(fl->stat_size, FSIZE);
	ck_assert_uint_eq(fl->names, NDIR + 1);
	ck_assert_uint_eq(fl->dirs, 1);
	ck_assert_uint_eq(fl->pages, 4);
	ck_assert(!fl->list_bad);
	ck_assert_uint_eq(fl->f.logons_ok, 1);
	ck_assert_uint_eq(fl->f.logons_bad, 0);
	/* NTLM: the fake checked the MIC and took the AV pairs; the negotiation checked after
	 * the tree connect (the flow makes no IOCTL of its own) where the dialect asks it */
	if (logon == LOGON_NTLM) {
		ck_assert_msg(fl->f.mic_ok == 1, "%s: %u MICs checked", how, fl->f.mic_ok);
		ck_assert_msg(fl->f.mech_mic_ok == 1, "%s: %u mechListMICs", how,
			      fl->f.mech_mic_ok);
		ck_assert_str_eq(fl->f.target_name, "cifs/fake");
	}
	ck_assert_uint_eq(fl->f.mic_bad + fl->f.av_bad, 0);
	ck_assert_uint_eq(fl->f.mech_mic_bad + fl->f.mech_mic_missing, 0);
	ck_assert_msg(fl->f.validated == (validates(fl->f.dialect) ? 1u : 0u),
		      "%s: %u VALIDATE_NEGOTIATE", how, fl->f.validated);
	ck_assert_uint_eq(fl->f.validate_bad, 0);
	ck_assert_uint_eq(fl->f.cmds[SMB2_IOCTL], fl->f.validated);
	ck_assert_ptr_null(fake_lookup(&fl->f, "u1/w"));
	ck_assert_ptr_null(fake_lookup(&fl->f, "u1/gone"));
	ck_assert_ptr_nonnull(w2 = fake_lookup(&fl->f, "u1/w2"));
	ck_assert_uint_eq(w2->size, WRITE1 + WRITE2);
	ck_assert_ptr_nonnull(w2->data);
	ck_assert_msg(memcmp(w2->data, WDATA, WRITE1 + WRITE2) == 0, "%s: what was written", how);
	ck_assert_uint_eq(fl->f.nwrites, 2);
	ck_assert_uint_eq(fl->f.writes[0], 0);
	ck_assert_uint_eq(fl->f.writes[1], WRITE1);
	ck_assert_uint_eq(fl->f.overdrawn, 0);
}

/* Where a fault must show: the first callback that failed (ready, or a request's) with the
 * code, its message holding want; every callback after it failed too. */
static void ck_failed(const struct flow *fl, int code, const char *want, const char *how)
{
	const struct call *first = fl->ready.code != PV_OK ? &fl->ready : NULL;

	for (unsigned i = 0; i < fl->n; i++)
		if (fl->k[i].calls && fl->k[i].code != PV_OK &&
		    (!first || fl->k[i].seq < first->seq))
			first = &fl->k[i];
	ck_assert_msg(first != NULL, "%s: nothing failed", how);
	ck_assert_msg(first->code == code && strstr(first->msg, want),
		      "%s: %s got %d '%s', not %d '%s'", how, first->what, first->code, first->msg,
		      code, want);
	ck_assert_msg(strncmp(first->msg, "SMB ", 4) == 0, "%s: '%s'", how, first->msg);
	for (unsigned i = 0; i < fl->n; i++)
		ck_assert_msg(fl->k[i].seq < first->seq || fl->k[i].code != PV_OK ||
				      fl->k[i].refused,
			      "%s: %s after the failure: ok", how, fl->k[i].what);
}

/* ---- valid flows ---- */

/* Over every dialect offered, without signing and with signing required (every request
 * checked by the fake, every answer signed and checked), and with the logon's end signed
 * though signing is not required. */
START_TEST(test_flows)
{
	static const struct {
		uint16_t dialect;
		int signing;
	} cases[] = {
		{0x0210, SIGN_NONE},	 {0x0302, SIGN_NONE},	  {0x0202, SIGN_REQUIRED},
		{0x0210, SIGN_REQUIRED}, {0x0300, SIGN_REQUIRED}, {0x0302, SIGN_REQUIRED},
		{0x0302, SIGN_SETUP},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct flow fl;
		char how[64];
		unsigned after = 0;

		snprintf(how, sizeof(how), "dialect 0x%04x, signing %d", cases[i].dialect,
			 cases[i].signing);
		flow_run(&fl, NULL, 0, cases[i].signing, cases[i].dialect, 0, NULL, T_OK);
		ck_valid(&fl, how);
		for (int c = SMB2_TREE_CONNECT; c < 32; c++)
			after += fl.f.cmds[c];
		ck_assert_uint_eq(after, 1 + fl.n + validates(cases[i].dialect));
		ck_assert_uint_eq(fl.f.sig_bad + fl.f.unsigned_reqs, 0);
		/* VALIDATE_NEGOTIATE is signed whether signing is required or not */
		ck_assert_uint_eq(fl.f.signed_ok, cases[i].signing == SIGN_REQUIRED ? after
						  : validates(cases[i].dialect)	    ? 1
										    : 0);
		fake_stop(&fl.f);
	}
}
END_TEST

/* Logons through the SPNEGO callback (Kerberos in load/logon.c), done in one round trip: the
 * server's token taken before the final answer's signature is checked with the key it gives;
 * and a callback that fails is a refused logon. */
START_TEST(test_spnego_logon)
{
	static const struct {
		uint16_t dialect;
		int signing;
	} cases[] = {{0x0302, SIGN_REQUIRED},
		     {0x0210, SIGN_REQUIRED},
		     {0x0302, SIGN_SETUP},
		     {0x0302, SIGN_NONE}};
	static struct flow fl;

	logon = LOGON_KRB;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		krb_steps = 0;
		flow_run(&fl, NULL, 0, cases[i].signing, cases[i].dialect, 0, NULL, T_OK);
		ck_valid(&fl, "kerberos");
		ck_assert_uint_eq(krb_steps, 2);
		ck_assert_uint_eq(fl.f.sig_bad + fl.f.unsigned_reqs, 0);
		ck_assert_uint_eq(fl.f.signed_ok > 0,
				  cases[i].signing == SIGN_REQUIRED || validates(cases[i].dialect));
		fake_stop(&fl.f);
	}
	logon = LOGON_KRB_FAILS;
	flow_run(&fl, NULL, 0, SIGN_NONE, 0, 0, NULL, T_MS);
	logon = LOGON_NTLM;
	ck_failed(&fl, PV_ECRED, "SMB logon as u1 on 'fake': no ticket for cifs@fake (a test)",
		  "kerberos refused");
	ck_assert_uint_eq(fl.f.cmds[SMB2_SESSION_SETUP], 0);
	fake_stop(&fl.f);
}
END_TEST

/* A server that claims a logon it never authenticated is refused, for every dialect and both
 * mechanisms: success answered to NTLM's NEGOTIATE (before the AUTHENTICATE, so before the
 * password was used), unsigned or signed under the keys of a zero session key; a Kerberos
 * final answer with no token (the server's AP-REP missing: no mutual authentication). The
 * connection never gets as far as TREE_CONNECT. */
START_TEST(test_forged_logon)
{
	static const uint16_t dialects[] = {0x0210, 0x0302, 0x0311};
	static const char *const want = "the server claimed a logon that never authenticated: ";
	static struct flow fl;

	for (size_t d = 0; d < sizeof(dialects) / sizeof(dialects[0]); d++) {
		for (int mech = 0; mech < 2; mech++) {
			for (long kind = FORGE_CLEAR; kind <= FORGE_ZERO_KEY; kind++) {
				char name[64];

				snprintf(name, sizeof(name), "dialect 0x%04x, %s, %s", dialects[d],
					 mech ? "kerberos" : "ntlm",
					 kind == FORGE_CLEAR ? "unsigned" : "zero key");
				logon = mech ? LOGON_KRB : LOGON_NTLM;
				krb_steps = 0;
				flow_run(&fl, fake_forge_logon, kind, SIGN_NONE, dialects[d], 0,
					 NULL, T_MS);
				logon = LOGON_NTLM;
				ck_failed(&fl, PV_EREMOTE, want, name);
				ck_assert_msg(strstr(fl.ready.msg,
						     mech ? "did not complete the Kerberos exchange"
							  : "before this client had sent its "
							    "AUTHENTICATE"),
					      "%s: %s", name, fl.ready.msg);
				ck_assert_msg(fl.f.hooked > 0, "%s: the hook never ran", name);
				ck_assert_uint_eq(fl.f.cmds[SMB2_TREE_CONNECT], 0);
				ck_assert_uint_eq(fl.f.cmds[SMB2_SESSION_SETUP], 1);
				fake_stop(&fl.f);
			}
		}
	}
}
END_TEST

/* 50 connections on one loop, each against its own fake over its own socketpair, their
 * requests in flight together. */
START_TEST(test_many_connections)
{
	enum { N = 50 };
	static struct flow fls[N];
	struct flow *p[N];
	struct pv_smb_loop *l = NULL;

	ck_assert_int_eq(pv_smb_loop_new(&l), PV_OK);
	for (int i = 0; i < N; i++) {
		int fd = flow_start(&fls[i], NULL, 0);

		fls[i].f.signing = i % 2 ? SIGN_REQUIRED : SIGN_NONE;
		fls[i].f.dialect = i % 3 ? 0x0302 : 0x0210;
		flow_open(&fls[i], l, fd, FAKE_PASSWORD, T_OK);
		p[i] = &fls[i];
	}
	ck_assert_uint_eq(pv_smb_loop_count(l), N);
	run_flows(l, p, N);
	ck_assert_uint_eq(pv_smb_loop_count(l), N);
	for (int i = 0; i < N; i++)
		ck_assert(pv_smb_usable(fls[i].c));
	loop_free(l);
	for (int i = 0; i < N; i++) {
		char how[32];

		snprintf(how, sizeof(how), "connection %d", i);
		fake_join(&fls[i].f);
		ck_once(&fls[i]);
		ck_valid(&fls[i], how);
		fake_stop(&fls[i].f);
	}
}
END_TEST

/* Every answer but NEGOTIATE's goes async first: an interim STATUS_PENDING (flagged signed
 * with a signature that is none, with signing on), keep-alives, then the final answer. */
static enum fake_act pending_all(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd != SMB2_NEGOTIATE) {
		fake_interim_flagged(f, q->cmd, q->mid,
				     f->signing == SIGN_REQUIRED && q->cmd != SMB2_SESSION_SETUP
					     ? SMB2_FLAGS_SIGNED
					     : 0);
		fake_keepalive(f);
	}
	return FAKE_SEND;
}

START_TEST(test_interim_answers)
{
	static struct flow fl;

	flow_run(&fl, pending_all, 0, SIGN_NONE, 0, 0, NULL, T_OK);
	ck_valid(&fl, "interim");
	fake_stop(&fl.f);
	flow_run(&fl, pending_all, 0, SIGN_REQUIRED, 0x0210, 0, NULL, T_OK);
	ck_valid(&fl, "interim, signed");
	ck_assert_uint_eq(fl.f.sig_bad + fl.f.unsigned_reqs, 0);
	fake_stop(&fl.f);
}
END_TEST

/* A stingy server: k credits at first, then one only when the client would have none. The
 * requests wait in the client's backlog and go in the order they were made, never
 * without a credit; with one credit, one at a time. */
START_TEST(test_few_credits)
{
	for (int k = 1; k <= 3; k++) {
		static struct flow fl;
		char how[32];

		snprintf(how, sizeof(how), "%d credits", k);
		flow_run(&fl, NULL, 0, k == 2 ? SIGN_REQUIRED : SIGN_NONE, 0, k, NULL, T_OK);
		ck_valid(&fl, how);
		ck_assert_uint_le(fl.f.granted, (unsigned long)k + 4 + fl.n);
		fake_stop(&fl.f);
	}
}
END_TEST

/* SMB 3.1.1 (preauth integrity, the fake's own hash and key derivation; AES-CMAC or, offered
 * and chosen, AES-GMAC signing) and encryption: every cipher, required of the session, of the
 * share, or asked for by the client (a cipher of its choosing, offered alone); and 3.0.2's
 * AES-128-CCM. Every request after the logon opened by the fake (none refused in clear, none
 * that failed to open), the flow's answers all opened and taken. */
START_TEST(test_smb3)
{
	static const struct {
		uint16_t dialect, cipher, sign_alg;
		int signing;
		bool enc_session, enc_share;
		enum pv_smb_encrypt encrypt;
		const char *desc;
	} cases[] = {
		{0x0311, 0, 0, SIGN_NONE, false, false, 0, "SMB 3.1.1"},
		{0x0311, 0, 0, SIGN_REQUIRED, false, false, 0, "SMB 3.1.1, signed (AES-128-CMAC)"},
		{0x0311, 0, 2, SIGN_REQUIRED, false, false, 0, "SMB 3.1.1, signed (AES-128-GMAC)"},
		{0x0311, 1, 0, SIGN_NONE, true, false, 0, "SMB 3.1.1, encrypted (AES-128-CCM)"},
		{0x0311, 2, 2, SIGN_REQUIRED, true, false, 0, "SMB 3.1.1, encrypted (AES-128-GCM)"},
		{0x0311, 3, 0, SIGN_NONE, true, false, 0, "SMB 3.1.1, encrypted (AES-256-CCM)"},
		{0x0311, 4, 0, SIGN_NONE, true, false, 0, "SMB 3.1.1, encrypted (AES-256-GCM)"},
		{0x0311, 2, 0, SIGN_NONE, false, true, 0,
		 "SMB 3.1.1, encrypted (AES-128-GCM) on this share"},
		{0x0311, 4, 0, SIGN_NONE, false, false, PV_SMB_ENCRYPT_AES256_GCM,
		 "SMB 3.1.1, encrypted (AES-256-GCM)"},
		{0x0311, 2, 0, SIGN_REQUIRED, false, false, PV_SMB_ENCRYPT_ON,
		 "SMB 3.1.1, encrypted (AES-128-GCM)"},
		{0x0302, 1, 0, SIGN_NONE, true, false, 0, "SMB 3.0.2, encrypted (AES-128-CCM)"},
		{0x0300, 1, 0, SIGN_REQUIRED, false, true, 0,
		 "SMB 3.0, encrypted (AES-128-CCM) on this share"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct flow fl;
		char how[96];
		unsigned after = 0;
		bool enc = cases[i].enc_session || cases[i].enc_share || cases[i].encrypt;

		snprintf(how, sizeof(how), "case %zu (%s)", i, cases[i].desc);
		memset(&sec, 0, sizeof(sec));
		sec.cipher = cases[i].cipher;
		sec.sign_alg = cases[i].sign_alg;
		sec.enc_session = cases[i].enc_session;
		sec.enc_share = cases[i].enc_share;
		sec.encrypt = cases[i].encrypt;
		flow_run(&fl, NULL, 0, cases[i].signing, cases[i].dialect, 0, NULL, T_OK);
		ck_valid(&fl, how);
		ck_assert_str_eq(fl.desc, cases[i].desc);
		for (int c = SMB2_TREE_CONNECT; c < 32; c++)
			after += fl.f.cmds[c];
		ck_assert_uint_eq(fl.f.enc_bad + fl.f.clear_refused, 0);
		ck_assert_uint_eq(fl.f.sig_bad + fl.f.unsigned_reqs, 0);
		/* encrypted: everything after the logon, but a share's TREE_CONNECT */
		ck_assert_msg(fl.f.enc_ok == (enc ? after - (cases[i].enc_share ? 1 : 0) : 0),
			      "%s: %u encrypted of %u", how, fl.f.enc_ok, after);
		if (cases[i].dialect == 0x0311) {
			ck_assert_uint_eq(fl.f.client_hash, 1); /* SHA-512 */
			ck_assert_uint_eq(fl.f.nclient_ciphers, cases[i].encrypt > 1 ? 1 : 4);
			ck_assert_uint_eq(fl.f.nclient_signs, 2);
		}
		fake_stop(&fl.f);
	}
	memset(&sec, 0, sizeof(sec));
}
END_TEST

/* A server that chose a cipher the client asked for alone, or none: the logon is refused
 * before it starts, saying so. */
START_TEST(test_smb3_no_cipher)
{
	static struct flow fl;

	memset(&sec, 0, sizeof(sec));
	sec.encrypt = PV_SMB_ENCRYPT_ON;
	flow_run(&fl, NULL, 0, SIGN_NONE, 0x0311, 0, NULL, T_MS);
	ck_failed(&fl, PV_EREMOTE,
		  "SMB logon as LAB\\u1 on 'fake': encryption was asked for (the playbook's "
		  "load.encryption), but the server accepts none of the ciphers offered",
		  "no cipher");
	ck_assert_uint_eq(fl.f.cmds[SMB2_SESSION_SETUP], 0);
	fake_stop(&fl.f);
	sec.encrypt = PV_SMB_ENCRYPT_AES256_CCM;
	sec.cipher = 3;
	flow_run(&fl, NULL, 0, SIGN_NONE, 0x0210, 0, NULL, T_MS);
	ck_failed(&fl, PV_EREMOTE,
		  "encryption with AES-256-CCM was asked for (the playbook's load.encryption), but "
		  "SMB 2.1, the dialect negotiated, cannot encrypt",
		  "2.1");
	fake_stop(&fl.f);
	memset(&sec, 0, sizeof(sec));
}
END_TEST

/* The requests of the FSCT mix the flows above do not make, against the fake: FLUSH, byte-range
 * LOCK (a second handle's overlapping lock refused, an unlock), an FSCTL with its output, and
 * CHANGE_NOTIFY (interim, then the change), encrypted. */
static uint32_t other_status, notify_len, fsctl_len;
static uint8_t fsctl_byte;
static uint8_t fid_a[16], fid_b[16];

static void x_notified(struct call *k, const struct pv_smb_done *d)
{
	(void)k;
	notify_len = (uint32_t)d->buflen;
}

static void x_fsctl(struct call *k, const struct pv_smb_done *d)
{
	(void)k;
	fsctl_len = (uint32_t)d->buflen;
	if (d->buflen == 64)
		fsctl_byte = d->buf[63];
}

static void x_locked2(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;

	other_status = d->status;
	REQ(fl, "UNLOCK", NULL, pv_smb_lock, fl->c, fid_a, 0, 100, true, true);
	REQ(fl, "FLUSH", NULL, pv_smb_flush, fl->c, fid_a);
	/* FSCTL_CREATE_OR_GET_OBJECT_ID (MS-FSCC 2.3.8), as Explorer asks it */
	REQ(fl, "FSCTL", x_fsctl, pv_smb_fsctl, fl->c, 0x000900c0u, fid_a, NULL, 0, 64);
	REQ(fl, "NOTIFY", x_notified, pv_smb_notify, fl->c, fid_b, 1u);
}

static void x_locked(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;

	(void)d;
	REQ(fl, "LOCK 2", x_locked2, pv_smb_lock, fl->c, fid_b, 50, 10, false, false);
}

static void x_opened_b(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;

	memcpy(fid_b, d->fid, 16);
	REQ(fl, "LOCK", x_locked, pv_smb_lock, fl->c, fid_a, 0, 100, true, false);
}

static void x_opened_a(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;

	memcpy(fid_a, d->fid, 16);
	REQ(fl, "CREATE d", x_opened_b, pv_smb_create, fl->c, "u1/d", PV_SMB_READ, PV_SMB_OPEN,
	    PV_SMB_DIR);
}

/* A slow server: every answer of the opening sent 150 ms late, against a timeout of 250 ms.
 * The opening (NEGOTIATE, two SESSION_SETUPs, TREE_CONNECT: 600 ms) is due T after its last
 * answer, not T after it began: a server that answers each step in time is slow, not lost
 * (at 5% of a CPU the lab's srv logs 40 users on at once in 13 s, each step within 10 s). */
static enum fake_act slow_open(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)f;
	(void)reply;
	if (q->cmd <= SMB2_TREE_CONNECT)
		nanosleep(&(struct timespec){0, 150 * 1000 * 1000}, NULL);
	return FAKE_SEND;
}

START_TEST(test_slow_opening)
{
	static struct flow fl;
	struct pv_smb_loop *l = NULL;
	struct flow *one = &fl;
	int fd = flow_start(&fl, slow_open, 0);
	double t0 = pv_now();

	memset(&sec, 0, sizeof(sec));
	ck_assert_int_eq(pv_smb_loop_new(&l), PV_OK);
	fl.open_only = true;
	flow_open(&fl, l, fd, FAKE_PASSWORD, 250);
	run_flows(l, &one, 1);
	ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
	ck_assert_msg(pv_now() - t0 > 0.5, "the opening took %.3f s", pv_now() - t0);
	loop_free(l);
	fake_stop(&fl.f);
	ck_once(&fl);
}
END_TEST

/* fl's connection to a fake of its own (speaking dialect, or 0: the fake's default) being
 * opened alone (no requests after it), in a loop of its own: the loop. */
static struct pv_smb_loop *open_alone(struct flow *fl, uint16_t dialect)
{
	struct pv_smb_loop *l = NULL;
	int fd = flow_start(fl, NULL, 0);

	if (dialect) /* else the fake's own */
		fl->f.dialect = dialect;
	ck_assert_int_eq(pv_smb_loop_new(&l), PV_OK);
	fl->open_only = true;
	flow_open(fl, l, fd, FAKE_PASSWORD, T_OK);
	return l;
}

START_TEST(test_other_requests)
{
	static struct flow fl;
	struct pv_smb_loop *l;
	struct flow *one = &fl;
	struct call *k;

	memset(&sec, 0, sizeof(sec));
	sec.cipher = 2;
	sec.enc_session = true;
	l = open_alone(&fl, 0x0311);
	run_flows(l, &one, 1);
	ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
	REQ(&fl, "CREATE f", x_opened_a, pv_smb_create, fl.c, "u1/f", PV_SMB_WRITE, PV_SMB_OPEN,
	    PV_SMB_NONDIR);
	run_flows(l, &one, 1);
	for (unsigned i = 0; i < fl.n; i++)
		ck_assert_msg(fl.k[i].code == PV_OK, "%s: %s", fl.k[i].what, fl.k[i].msg);
	ck_assert_uint_eq(fl.n, 8);
	ck_assert_uint_eq(other_status, 0xC0000055u); /* LOCK_NOT_GRANTED */
	ck_assert_uint_eq(fl.k[5].status, ST_OK);     /* the unlock */
	ck_assert_uint_eq(fsctl_len, 64);
	ck_assert_uint_eq(fsctl_byte, 0x0b);
	ck_assert_uint_eq(notify_len, 12 + 2);
	ck_assert_uint_eq(fl.f.nlocks, 0);
	ck_assert_uint_eq(fl.f.enc_ok, 1 + fl.n);
	loop_free(l);
	fake_stop(&fl.f);
	ck_once(&fl);
	memset(&sec, 0, sizeof(sec));
}
END_TEST

/* A document as Office opens it (load/scenario.c): CREATE asking for a lease (the
 * v2 context from 3.0, the v1 one in 2.1, none in 2.0.2, where a plain CREATE goes), the
 * lease broken by the server and acknowledged by the connection on its own (the key, the
 * state it broke to), the file's size set (FileEndOfFileInformation) and seen by QUERY_INFO,
 * its times (FileBasicInformation), and its deletion by FileDispositionInformation at the
 * close. */
static const uint8_t lease_key[16] = "lease-key-0123!";
static struct pv_smb_lease lease_ls; /* lease_key, no durable handle asked */
static uint64_t lease_eof;

static void l_set(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = k->fl;
	static const uint8_t del = 1;

	if (d->buflen >= 56)
		fl->stat_size = smb2_get64(d->buf + 40);
	REQ(fl, "SET_INFO delete", NULL, pv_smb_setinfo, fl->c, fl->fid_f, 13, &del, 1);
	REQ(fl, "CLOSE", NULL, pv_smb_closefile, fl->c, fl->fid_f);
}

static void l_opened(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = opened(k, d, k->fl->fid_f);
	static uint8_t basic[40], eof[8];

	if (!fl)
		return;
	smb2_put64(eof, lease_eof);
	REQ(fl, "SET_INFO eof", NULL, pv_smb_setinfo, fl->c, fl->fid_f, 20, eof, 8);
	REQ(fl, "SET_INFO basic", NULL, pv_smb_setinfo, fl->c, fl->fid_f, 4, basic, 40);
	REQ(fl, "QUERY_INFO", l_set, pv_smb_stat, fl->c, fl->fid_f);
}

START_TEST(test_lease_setinfo)
{
	static const struct {
		uint16_t dialect;
		size_t ctx; /* the lease context's length; 0: none */
	} cases[] = {{0x0311, 52}, {0x0302, 52}, {0x0210, 32}, {0x0202, 0}};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct flow fl;
		struct pv_smb_loop *l = NULL;
		struct flow *one = &fl;
		struct call *k;
		int fd = flow_start(&fl, fake_lease_break, SMB2_LEASE_READ);

		memset(&sec, 0, sizeof(sec));
		lease_eof = 5000 + i;
		memcpy(lease_ls.key, lease_key, 16);
		lease_ls.state = SMB2_LEASE_READ | SMB2_LEASE_WRITE | SMB2_LEASE_HANDLE;
		fl.f.dialect = cases[i].dialect;
		ck_assert_int_eq(pv_smb_loop_new(&l), PV_OK);
		fl.open_only = true;
		flow_open(&fl, l, fd, FAKE_PASSWORD, T_OK);
		run_flows(l, &one, 1);
		ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
		REQ(&fl, "CREATE lease", l_opened, pv_smb_create_lease, fl.c, "u1/f",
		    PV_SMB_READ | PV_SMB_WRITE | PV_SMB_DELETE, PV_SMB_OPEN, PV_SMB_NONDIR,
		    &lease_ls);
		run_flows(l, &one, 1);
		for (unsigned j = 0; j < fl.n; j++)
			ck_assert_msg(fl.k[j].code == PV_OK && fl.k[j].status == ST_OK,
				      "%04x: %s: %s (0x%08x)", cases[i].dialect, fl.k[j].what,
				      fl.k[j].msg, fl.k[j].status);
		ck_assert_uint_eq(fl.n, 6);
		ck_assert_uint_eq(fl.stat_size, lease_eof);
		loop_free(l);
		fake_join(&fl.f);
		ck_once(&fl);
		ck_assert_uint_eq(fl.f.leases, cases[i].ctx ? 1 : 0);
		ck_assert_uint_eq(fl.f.lease_acks, cases[i].ctx ? 1 : 0);
		if (cases[i].ctx) {
			ck_assert_uint_eq(fl.f.lease_len, cases[i].ctx);
			ck_assert_mem_eq(fl.f.lease_key, lease_key, 16);
			ck_assert_uint_eq(fl.f.lease_state, 7);
			ck_assert_mem_eq(fl.f.ack_key, lease_key, 16);
			ck_assert_uint_eq(fl.f.ack_state, SMB2_LEASE_READ);
		}
		ck_assert_uint_eq(fl.f.setinfo[4], 1);
		ck_assert_uint_eq(fl.f.setinfo[13], 1);
		ck_assert_uint_eq(fl.f.setinfo[20], 1);
		ck_assert_ptr_null(fake_lookup(&fl.f, "u1/f")); /* deleted at the close */
		fake_stop(&fl.f);
	}
}
END_TEST

static const struct pv_smb_lease durable_ls = {
	{0x11, 0x22, 0x33, 0x44, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	SMB2_LEASE_READ | SMB2_LEASE_HANDLE,
	{0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf,
	 1}};
static struct pv_smb_lease durable_as;

static void durable_opened(struct call *k, const struct pv_smb_done *d)
{
	struct flow *fl = opened(k, d, k->fl->fid_f);

	if (fl)
		REQ(fl, "CREATE DH2C", NULL, pv_smb_reopen, fl->c, "u1/f", fl->fid_f, &durable_as);
}

/* Durable handles v2: a lease open asks for one (DH2Q, its CreateGuid) from 3.0 only and
 * only with a CreateGuid; the answer's DH2Q says granted (d->durable); a claim again (DH2C)
 * names the open's FileId and CreateGuid, and is refused below 3.0 or without a guid. */
START_TEST(test_durable)
{
	static const struct {
		uint16_t dialect;
		bool grant, guid;
		unsigned asked; /* DH2Qs the fake saw */
		bool durable;	/* d->durable */
		unsigned reclaims;
	} cases[] = {
		{0x0311, true, true, 1, true, 1},   {0x0300, true, true, 1, true, 1},
		{0x0302, false, true, 1, false, 1}, {0x0311, true, false, 0, false, 0},
		{0x0210, true, true, 0, false, 0},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct flow fl;
		struct pv_smb_loop *l;
		struct flow *one = &fl;
		struct call *k;

		memset(&sec, 0, sizeof(sec));
		durable_as = durable_ls;
		if (!cases[i].guid)
			memset(durable_as.guid, 0, 16);
		l = open_alone(&fl, cases[i].dialect);
		fl.f.grant_durable = cases[i].grant; /* read at a CREATE, after the logon */
		run_flows(l, &one, 1);
		ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
		ck_assert_ptr_nonnull(fake_mknode(&fl.f, "u1/f", false, 10));
		REQ(&fl, "CREATE DH2Q", durable_opened, pv_smb_create_lease, fl.c, "u1/f",
		    PV_SMB_READ, PV_SMB_OPEN, PV_SMB_NONDIR, &durable_as);
		run_flows(l, &one, 1);
		loop_free(l);
		fake_join(&fl.f);
		ck_assert_msg(fl.k[0].code == PV_OK && fl.k[0].status == ST_OK, "%04x: %s (0x%08x)",
			      cases[i].dialect, fl.k[0].msg, fl.k[0].status);
		ck_assert_uint_eq(fl.f.durables, cases[i].asked);
		ck_assert_int_eq(fl.k[0].durable, cases[i].durable);
		if (cases[i].asked)
			ck_assert_mem_eq(fl.f.durable_guid, durable_ls.guid, 16);
		ck_assert_uint_eq(fl.n, 2);
		ck_assert_uint_eq(fl.f.reclaims, cases[i].reclaims);
		ck_assert_int_eq(fl.k[1].refused, !cases[i].reclaims);
		if (cases[i].reclaims) {
			ck_assert_msg(fl.k[1].code == PV_OK && fl.k[1].status == ST_OK, "DH2C: %s",
				      fl.k[1].msg);
			ck_assert_mem_eq(fl.f.reclaim_fid, fl.fid_f, 16);
			ck_assert_mem_eq(fl.f.reclaim_guid, durable_ls.guid, 16);
			ck_assert_mem_eq(fl.f.lease_key, durable_ls.key, 16); /* the same lease */
		}
		fake_stop(&fl.f);
	}
}
END_TEST

/* ---- faults ---- */

/* Hooks of this suite (f->arg is a command unless said otherwise). */

/* The answer to command f->arg sent twice. */
static enum fake_act twice(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	if (q->cmd != f->arg || f->done++)
		return FAKE_SEND;
	fake_send_frame(f, reply->data, reply->len);
	fake_send_frame(f, reply->data, reply->len);
	return FAKE_DONE;
}

/* No answer to command f->arg: the fake hangs up at once (f->arg > 0), or says nothing until
 * the client gives up (f->arg negated). */
static enum fake_act no_answer(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	(void)reply;
	if (q->cmd != labs(f->arg))
		return FAKE_SEND;
	if (f->arg < 0)
		fake_client_gone(f, 5000);
	return FAKE_HANGUP;
}

/* SessionFlags (f->arg) in the answer that ends the logon; a guest's or anonymous logon's
 * unsigned, as a server sends it (there is no key for it). */
static enum fake_act session_flags(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t *m = (uint8_t *)reply->data;

	if (q->cmd == SMB2_SESSION_SETUP && smb2_get32(m + 8) == ST_OK) {
		smb2_put16(m + SMB2_HDR + 2, (uint16_t)f->arg);
		if (f->arg & 3) {
			smb2_put32(m + 16, smb2_get32(m + 16) & ~SMB2_FLAGS_SIGNED);
			memset(m + SMB2_SIG_AT, 0, SMB2_SIG_LEN);
		}
	}
	return FAKE_SEND;
}

/* The first READ answer's DataOffset set to f->arg. */
static enum fake_act data_offset(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	if (q->cmd == SMB2_READ && !f->done++)
		((uint8_t *)reply->data)[SMB2_HDR + 2] = (uint8_t)f->arg;
	return FAKE_SEND;
}

/* The answer to command f->arg grants no credit: with a stingy fake (one credit at a time),
 * the client is left with none and nothing in flight that could bring one. */
static enum fake_act no_grant(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	if (q->cmd == f->arg && !f->done++)
		smb2_put16((uint8_t *)reply->data + 14, 0);
	return FAKE_SEND;
}

/* Keep-alives without end, as fast as they go, from the first READ on. */
static enum fake_act flood(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	static uint8_t ka[65536];

	(void)reply;
	if (q->cmd != SMB2_READ)
		return FAKE_SEND;
	for (size_t i = 0; i < sizeof(ka); i += 4)
		ka[i] = 0x85;
	for (double end = pv_now() + 10; pv_now() < end && !fake_client_gone(f, 0);)
		fake_send_raw(f, ka, sizeof(ka));
	return FAKE_HANGUP;
}

/* The first answer to command f->arg in a transform header that no key made (a session's
 * logon answered as if encrypted). */
static enum fake_act wrap_tf(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t h[52] = {0xfd, 'S', 'M', 'B'};

	if (q->cmd != f->arg || f->done++)
		return FAKE_SEND;
	smb2_put32(h + 36, (uint32_t)reply->len);
	smb2_put16(h + 42, 1);
	smb2_put64(h + 44, 0x1122);
	fake_send_raw(f, "\0", 1);
	fake_send_raw(f,
		      (uint8_t[]){(uint8_t)((reply->len + 52) >> 16),
				  (uint8_t)((reply->len + 52) >> 8), (uint8_t)(reply->len + 52)},
		      3);
	fake_send_raw(f, h, sizeof(h));
	fake_send_raw(f, reply->data, reply->len);
	return FAKE_DONE;
}

/* The CHALLENGE's flags, on their way: f->arg toggled in them (the SESSION_SETUP answer that
 * carries it is not signed). */
static enum fake_act challenge_flag(struct fake *f, const struct fake_req *q, struct pv_buf *reply)
{
	uint8_t *c = q->cmd == SMB2_SESSION_SETUP
			     ? memmem(reply->data, reply->len, "NTLMSSP\0\2", 9)
			     : NULL;

	if (c && !f->done++)
		smb2_put32(c + 20, smb2_get32(c + 20) ^ (uint32_t)f->arg);
	return FAKE_SEND;
}

/* An in_hook: the last byte of the first AUTHENTICATE's SPNEGO token (its mechListMIC's)
 * changed on its way. */
static void flip_last(struct fake *f, uint8_t *m, size_t len)
{
	if (f->done || len <= SMB2_HDR + 24 || smb2_get16(m + 12) != SMB2_SESSION_SETUP ||
	    !memmem(m + SMB2_HDR, len - SMB2_HDR, "NTLMSSP\0\3", 9))
		return;
	m[len - 1] ^= 0x01;
	f->done++;
}

static const struct fault {
	const char *name;
	fake_hook hook;
	long arg;
	int signing;
	int credits;
	const char *password;
	int code;
	const char *want;
	/* SMB 3: the fake's dialect (0: 3.0.2), cipher, signing algorithm, what it requires
	 * encrypted, and its own faults */
	uint16_t dialect, cipher, sign_alg;
	bool enc_session, enc_share, no_context;
	uint16_t plain_cmd;
	/* what the fake answers VALIDATE_NEGOTIATE with; a fault in what the client sends */
	uint32_t validate_status;
	void (*in_hook)(struct fake *f, uint8_t *m, size_t len);
} FAULTS[] = {
	/* frames */
	{"short frame", fake_short_frame, 10, 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': a malformed answer: a frame of 10 bytes, shorter than an SMB2 header "
	 "(64 bytes)"},
	{"empty frame", fake_short_frame, 0, 0, 0, NULL, PV_EREMOTE,
	 "a frame of 0 bytes, shorter than an SMB2 header"},
	{"netbios type", fake_bad_netbios, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': not an SMB2 answer (a NetBIOS message of type 0x82, 0 bytes)"},
	{"keep-alive with a length", fake_bad_netbios, 1, 0, 0, NULL, PV_EREMOTE,
	 "not an SMB2 answer (a NetBIOS message of type 0x85, 4 bytes)"},
	{"frame over the limit", fake_bad_netbios, 2, 0, 0, NULL, PV_EREMOTE,
	 "a malformed answer: a frame of 1052673 bytes, more than the 1052672 this client "
	 "takes"},
	{"frame of 16 MiB", fake_bad_netbios, 3, 0, 0, NULL, PV_EREMOTE,
	 "a frame of 16777215 bytes, more than the 1052672"},
	{"frame cut, closed", fake_cut_frame, SMB2_SESSION_SETUP, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': the connection was closed in the middle of an answer"},
	{"frame cut, silence", fake_cut_frame, -SMB2_READ, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': no final answer to READ in 200 ms"},
	/* bodies */
	{"CREATE short", fake_cut_body, SMB2_CREATE | 70 << 16, 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': a malformed answer: CREATE with a body of 70 bytes, 88 expected"},
	{"NEGOTIATE short", fake_cut_body, SMB2_NEGOTIATE | 40 << 16, 0, 0, NULL, PV_EREMOTE,
	 "NEGOTIATE with a body of 40 bytes, 64 expected"},
	{"READ short", fake_cut_body, SMB2_READ | 12 << 16, 0, 0, NULL, PV_EREMOTE,
	 "READ with a body of 12 bytes, 16 expected"},
	{"READ data length", fake_poke, POKE(SMB2_READ, SMB2_HDR + 4, 0x7fffffff), 0, 0, NULL,
	 PV_EREMOTE,
	 "SMB to 'fake': a malformed answer: READ's data (2147483647 bytes at 80) is not inside "
	 "its 65616 bytes"},
	{"READ data offset", data_offset, 16, 0, 0, NULL, PV_EREMOTE,
	 "READ's data (65536 bytes at 16) is not inside"},
	{"READ data offset past", data_offset, 250, 0, 0, NULL, PV_EREMOTE,
	 "READ's data (65536 bytes at 250) is not inside"},
	{"QUERY_DIRECTORY buffer", fake_poke, POKE(SMB2_QUERY_DIRECTORY, SMB2_HDR + 4, 0x7fffffff),
	 0, 0, NULL, PV_EREMOTE,
	 "a malformed answer: QUERY_DIRECTORY's buffer (2147483647 bytes at 72) is not inside"},
	{"QUERY_DIRECTORY offset", fake_poke, POKE(SMB2_QUERY_DIRECTORY, SMB2_HDR + 2, 0x01000008),
	 0, 0, NULL, PV_EREMOTE, "a malformed answer: QUERY_DIRECTORY's buffer (256 bytes at 8)"},
	{"QUERY_INFO buffer", fake_poke, POKE(SMB2_QUERY_INFO, SMB2_HDR + 4, 57), 0, 0, NULL,
	 PV_EREMOTE, "a malformed answer: QUERY_INFO's buffer (57 bytes at 72) is not inside"},
	{"security buffer", fake_poke, POKE(SMB2_SESSION_SETUP, SMB2_HDR + 4, 0x0010fff0), 0, 0,
	 NULL, PV_EREMOTE,
	 "a malformed answer: SESSION_SETUP's security buffer (16 bytes at 65520) is not "
	 "inside"},
	{"security buffer length", fake_poke, POKE(SMB2_SESSION_SETUP, SMB2_HDR + 4, 0xfff00048), 0,
	 0, NULL, PV_EREMOTE, "SESSION_SETUP's security buffer (65520 bytes at 72)"},
	/* message ids, commands, compounds */
	{"message never sent", fake_poke, POKE(SMB2_CREATE, 24, 999), 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': a malformed answer: CREATE for message 999, which is not in flight"},
	{"answered twice", twice, SMB2_READ, 0, 0, NULL, PV_EREMOTE,
	 "a malformed answer: READ for message "},
	{"wrong command", fake_poke, POKE(SMB2_TREE_CONNECT, 12, SMB2_CREATE), 0, 0, NULL,
	 PV_EREMOTE, "a malformed answer: CREATE answering TREE_CONNECT"},
	{"wrong command later", fake_poke, POKE(SMB2_QUERY_INFO, 12, SMB2_READ), 0, 0, NULL,
	 PV_EREMOTE, "a malformed answer: READ answering QUERY_INFO"},
	{"not SMB2", fake_poke, POKE(SMB2_CREATE, 0, 0x424d53ff), 0, 0, NULL, PV_EREMOTE,
	 "a malformed answer: no SMB2 header at byte 0 of its frame"},
	{"NextCommand outside", fake_poke, POKE(SMB2_CREATE, 20, 4096), 0, 0, NULL, PV_EREMOTE,
	 "a malformed compound answer: NextCommand 4096 at byte 0 points outside its frame"},
	{"NextCommand short", fake_poke, POKE(SMB2_CREATE, 20, 8), 0, 0, NULL, PV_EREMOTE,
	 "a malformed compound answer: NextCommand 8 at byte 0 points outside"},
	{"NextCommand cuts", fake_poke, POKE(SMB2_NEGOTIATE, 20, 64), 0, 0, NULL, PV_EREMOTE,
	 "NEGOTIATE with a body of 0 bytes, 64 expected"},
	{"a request", fake_poke, POKE(SMB2_CREATE, 16, 0), 0, 0, NULL, PV_EREMOTE,
	 "a request where an answer was due"},
	/* deadlines, the connection */
	{"endless keep-alives", fake_hold_keepalive, SMB2_TREE_CONNECT, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': not open: no answer within 200 ms"},
	{"endless keep-alives later", fake_hold_keepalive, SMB2_READ, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': no final answer to READ in 200 ms (keep-alives and interim answers do "
	 "not extend a request)"},
	{"endless pending", fake_hold_pending, SMB2_QUERY_DIRECTORY, 0, 0, NULL, PV_EUNREACH,
	 "no final answer to QUERY_DIRECTORY in 200 ms"},
	{"keep-alive flood", flood, 0, 0, 0, NULL, PV_EUNREACH,
	 "no final answer to READ in 200 ms"},
	{"closed mid-request", no_answer, SMB2_CREATE, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': the connection was closed"},
	{"closed at logon", no_answer, SMB2_SESSION_SETUP, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': the connection was closed"},
	{"silence", no_answer, -SMB2_QUERY_INFO, 0, 0, NULL, PV_EUNREACH,
	 "no final answer to QUERY_INFO in 200 ms"},
	{"silence at logon", no_answer, -SMB2_SESSION_SETUP, 0, 0, NULL, PV_EUNREACH,
	 "SMB to 'fake': not open: no answer within 200 ms"},
	{"no credits", NULL, 0, 0, -1, NULL, PV_EREMOTE,
	 "SMB to 'fake': the server granted no credits: 1 request cannot be sent"},
	{"credits run out", no_grant, SMB2_CREATE, 0, 1, NULL, PV_EREMOTE,
	 "SMB to 'fake': the server granted no credits: 8 requests cannot be sent"},
	/* logons and shares */
	{"wrong password", NULL, 0, 0, 0, "wrong", PV_ECRED,
	 "SMB logon as LAB\\u1 on 'fake' refused (NT_STATUS_LOGON_FAILURE)"},
	{"guest", session_flags, 1, 0, 0, NULL, PV_ECRED,
	 "SMB logon as LAB\\u1 on 'fake': taken as a guest or anonymous logon"},
	{"guest, signing required", session_flags, 1, SIGN_REQUIRED, 0, NULL, PV_ECRED,
	 "taken as a guest or anonymous logon"},
	/* NTLM: the MIC changed on the way, or the CHALLENGE it covers (a flag no one asked
	 * for added: the proof still holds, the MIC does not) */
	{"MIC changed", NULL, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB logon as LAB\\u1 on 'fake' refused (NT_STATUS_INVALID_PARAMETER): the server did "
	 "not take the NTLM AUTHENTICATE message",
	 .in_hook = fake_flip_mic},
	{"CHALLENGE changed", challenge_flag, 0x02000000, 0, 0, NULL, PV_EREMOTE,
	 "refused (NT_STATUS_INVALID_PARAMETER): the server did not take the NTLM AUTHENTICATE "
	 "message; its MIC covers the NEGOTIATE and CHALLENGE messages"},
	/* SPNEGO: our mechListMIC changed on the way (refused, as Samba refuses it), the
	 * server's in a final answer that is not signed */
	{"mechListMIC changed", NULL, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB logon as LAB\\u1 on 'fake' refused (NT_STATUS_ACCESS_DENIED): a server that "
	 "requires encryption",
	 .in_hook = flip_last},
	{"server's mechListMIC changed", fake_tamper, TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_NONE,
	 0, NULL, PV_EREMOTE,
	 "SMB logon as LAB\\u1 on 'fake': the server's SPNEGO mechListMIC does not match the "
	 "session key"},
	/* SMB 3.0.2's negotiation checked: its answer changed on the way (a dialect, encryption
	 * taken away, signing said required), the VALIDATE_NEGOTIATE answer changed and signed
	 * again, unsigned, signed wrong, or refused */
	{"NEGOTIATE's dialect changed", fake_poke, POKE(SMB2_NEGOTIATE, SMB2_HDR + 2, 0x03000001),
	 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its dialect is "
	 "3.0.2, its NEGOTIATE answer said 3.0; MS-SMB2 3.2.5.14.12); the connection is dropped"},
	{"NEGOTIATE's capabilities changed", fake_poke, POKE(SMB2_NEGOTIATE, SMB2_HDR + 24, 0x4), 0,
	 0, NULL, PV_EREMOTE,
	 "a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its capabilities "
	 "are 0x00000044, its NEGOTIATE answer said 0x00000004",
	 .cipher = 1},
	{"NEGOTIATE's security mode changed", fake_poke,
	 POKE(SMB2_NEGOTIATE, SMB2_HDR + 2, 0x03020003), SIGN_SETUP, 0, NULL, PV_EREMOTE,
	 "a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its security mode "
	 "is 0x0001, its NEGOTIATE answer said 0x0003"},
	{"VALIDATE_NEGOTIATE's dialect", fake_validate_tamper, 3, 0, 0, NULL, PV_EREMOTE,
	 "a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its dialect is 3.0, "
	 "its NEGOTIATE answer said 3.0.2"},
	{"VALIDATE_NEGOTIATE's capabilities", fake_validate_tamper, 0, SIGN_REQUIRED, 0, NULL,
	 PV_EREMOTE,
	 "a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its capabilities "
	 "are 0x00000044, its NEGOTIATE answer said 0x00000004"},
	{"VALIDATE_NEGOTIATE's GUID", fake_validate_tamper, 1, 0, 0, NULL, PV_EREMOTE,
	 "a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its server GUID is "
	 "not the one its NEGOTIATE answer gave"},
	{"VALIDATE_NEGOTIATE's security mode", fake_validate_tamper, 2, SIGN_REQUIRED, 0, NULL,
	 PV_EREMOTE,
	 "a downgrade or a tampered negotiation was detected: the server's signed "
	 "VALIDATE_NEGOTIATE answer differs from the NEGOTIATE answer taken (its security mode "
	 "is 0x0001, its NEGOTIATE answer said 0x0003"},
	{"VALIDATE_NEGOTIATE unsigned", fake_tamper, TAMPER(SMB2_IOCTL, UNSIGN), SIGN_NONE, 0, NULL,
	 PV_EREMOTE,
	 "SMB answer from 'fake' to VALIDATE_NEGOTIATE (NT_STATUS_OK) came unsigned: an SMB 3.0.2 "
	 "client ends a connection whose negotiation its server does not confirm signed "
	 "(MS-SMB2 3.2.5.14.12), as a downgrade or a tampered negotiation cannot be ruled out"},
	{"VALIDATE_NEGOTIATE unsigned, signing required", fake_tamper, TAMPER(SMB2_IOCTL, UNSIGN),
	 SIGN_REQUIRED, 0, NULL, PV_EREMOTE,
	 "SMB answer from 'fake' has a bad signature: IOCTL (message 4, NT_STATUS_OK) came "
	 "unsigned, and the server requires signing"},
	{"VALIDATE_NEGOTIATE signed wrong", fake_tamper, TAMPER(SMB2_IOCTL, WRONG), SIGN_NONE, 0,
	 NULL, PV_EREMOTE,
	 "SMB answer from 'fake' has a bad signature: IOCTL (message 4, NT_STATUS_OK) does not "
	 "match its AES-128-CMAC signature"},
	{"VALIDATE_NEGOTIATE not supported, unsigned", fake_tamper, TAMPER(SMB2_IOCTL, UNSIGN),
	 SIGN_SETUP, 0, NULL, PV_EREMOTE,
	 "SMB answer from 'fake' to VALIDATE_NEGOTIATE (NT_STATUS_NOT_SUPPORTED) came unsigned",
	 .validate_status = ST_NOT_SUPPORTED},
	{"VALIDATE_NEGOTIATE refused", NULL, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': the server refused VALIDATE_NEGOTIATE (NT_STATUS_ACCESS_DENIED): it got "
	 "another negotiation than this client sent: a downgrade or a tampered negotiation was "
	 "detected",
	 .validate_status = ST_ACCESS_DENIED},
	{"VALIDATE_NEGOTIATE refused otherwise", NULL, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': the server refused VALIDATE_NEGOTIATE (NT_STATUS_INVALID_PARAMETER); the "
	 "connection is dropped",
	 .validate_status = ST_INVALID_PARAMETER},
	/* encryption required where the connection has no cipher (the fake's 3.0.2 does not
	 * offer SMB2_GLOBAL_CAP_ENCRYPTION): the setting named */
	{"session encrypted", session_flags, 4, 0, 0, NULL, PV_EREMOTE,
	 "SMB logon as LAB\\u1 on 'fake': the server requires encryption of every session "
	 "(Samba: `server smb encrypt = required`; Windows: EncryptData), but the server did not "
	 "offer encryption with SMB 3.0.2"},
	{"share encrypted", fake_poke, POKE(SMB2_TREE_CONNECT, SMB2_HDR + 4, 0x8000), 0, 0, NULL,
	 PV_EREMOTE,
	 "SMB to 'fake': the share fsroot1 requires encryption (Samba: `smb encrypt = required` "
	 "on it; Windows: the share's EncryptData), but the server did not offer encryption"},
	/* signing required */
	{"unsigned", fake_tamper, TAMPER(SMB2_READ, UNSIGN), SIGN_REQUIRED, 0, NULL, PV_EREMOTE,
	 "SMB answer from 'fake' has a bad signature: READ (message "},
	{"unsigned logon", fake_tamper, TAMPER(SMB2_SESSION_SETUP, UNSIGN), SIGN_REQUIRED, 0, NULL,
	 PV_EREMOTE,
	 "SESSION_SETUP (message 2, NT_STATUS_OK) came unsigned, and the server "
	 "requires signing"},
	{"flipped", fake_tamper, TAMPER(SMB2_CREATE, FLIP), SIGN_REQUIRED, 0, NULL, PV_EREMOTE,
	 "CREATE (message 5, NT_STATUS_OK) does not match its AES-128-CMAC signature"},
	{"wrong signature", fake_tamper, TAMPER(SMB2_QUERY_DIRECTORY, WRONG), SIGN_REQUIRED, 0,
	 NULL, PV_EREMOTE, "QUERY_DIRECTORY (message "},
	{"signed before the key", fake_tamper, TAMPER(SMB2_NEGOTIATE, FLAG), SIGN_REQUIRED, 0, NULL,
	 PV_EREMOTE,
	 "NEGOTIATE (message 0, NT_STATUS_OK) came signed before there was a session key"},
	{"another session", fake_tamper, TAMPER(SMB2_TREE_CONNECT, OTHER_SID), SIGN_REQUIRED, 0,
	 NULL, PV_EREMOTE, "came signed for session 0x9999, not ours (0x1122)"},
	{"not required, flipped", fake_tamper, TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_SETUP, 0,
	 NULL, PV_EREMOTE, "SESSION_SETUP (message 2, NT_STATUS_OK) does not match"},
	/* SMB 3.1.1: the preauth integrity hash, the end of the logon signed, its contexts */
	{"3.1.1 NEGOTIATE changed", fake_poke, POKE(SMB2_NEGOTIATE, SMB2_HDR + 8, 0x01020304), 0, 0,
	 NULL, PV_EREMOTE,
	 "SMB answer from 'fake' has a bad signature: SESSION_SETUP (message 2, NT_STATUS_OK) does "
	 "not match its AES-128-CMAC signature",
	 .dialect = 0x0311},
	{"3.1.1 logon's end unsigned", fake_tamper, TAMPER(SMB2_SESSION_SETUP, UNSIGN), SIGN_NONE,
	 0, NULL, PV_EREMOTE,
	 "SESSION_SETUP (message 2, NT_STATUS_OK) came unsigned, and SMB 3.1.1 signs the end of "
	 "every logon",
	 .dialect = 0x0311},
	{"3.1.1 GMAC flipped", fake_tamper, TAMPER(SMB2_CREATE, FLIP), SIGN_REQUIRED, 0, NULL,
	 PV_EREMOTE, "CREATE (message 4, NT_STATUS_OK) does not match its AES-128-GMAC signature",
	 .dialect = 0x0311, .sign_alg = 2},
	{"3.1.1 without contexts", NULL, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB to 'fake': its SMB 3.1.1 NEGOTIATE answer has no preauth integrity context",
	 .dialect = 0x0311, .no_context = true},
	{"3.1.1 a cipher not offered", fake_poke, POKE(SMB2_NEGOTIATE, 186, 0x0009), 0, 0, NULL,
	 PV_EREMOTE,
	 "SMB to 'fake': its NEGOTIATE answer chose 1 ciphers, the first 0x0009, not one offered",
	 .dialect = 0x0311, .cipher = 2},
	/* encryption: an answer tampered with, its nonce, its session, cut, its tag, its Flags,
	 * or in clear */
	{"ciphertext tampered", fake_tf_tamper, SMB2_READ | TF_FLIP << 16, 0, 0, NULL, PV_EREMOTE,
	 "SMB answer from 'fake' failed decryption: it does not open under the session's "
	 "AES-128-GCM key (its tag does not match",
	 .dialect = 0x0311, .cipher = 2, .enc_session = true},
	{"wrong nonce", fake_tf_tamper, SMB2_CREATE | TF_NONCE << 16, 0, 0, NULL, PV_EREMOTE,
	 "failed decryption: it does not open under the session's AES-256-CCM key",
	 .dialect = 0x0311, .cipher = 3, .enc_session = true},
	{"wrong session id", fake_tf_tamper, SMB2_TREE_CONNECT | TF_SID << 16, 0, 0, NULL,
	 PV_EREMOTE,
	 "SMB answer from 'fake' failed decryption: its transform header names session 0x9999, "
	 "not ours (0x1122)",
	 .dialect = 0x0311, .cipher = 4, .enc_session = true},
	{"truncated transform", fake_tf_tamper, SMB2_QUERY_INFO | TF_SHORT << 16, 0, 0, NULL,
	 PV_EREMOTE,
	 "SMB to 'fake': a malformed answer: a transform header whose OriginalMessageSize (",
	 .dialect = 0x0302, .cipher = 1, .enc_session = true},
	{"tag changed", fake_tf_tamper, SMB2_WRITE | TF_TAG << 16, 0, 0, NULL, PV_EREMOTE,
	 "failed decryption: it does not open under the session's AES-128-CCM key",
	 .dialect = 0x0311, .cipher = 1, .enc_share = true},
	{"transform flags", fake_tf_tamper, SMB2_CLOSE | TF_FLAGS << 16, 0, 0, NULL, PV_EREMOTE,
	 "a malformed answer: a transform header with Flags 0x0000, not 0x0001 (encrypted)",
	 .dialect = 0x0311, .cipher = 2, .enc_session = true},
	{"answered in clear", NULL, 0, 0, 0, NULL, PV_EREMOTE,
	 "SMB answer from 'fake' came unencrypted: QUERY_DIRECTORY (message ", .dialect = 0x0311,
	 .cipher = 2, .enc_session = true, .plain_cmd = SMB2_QUERY_DIRECTORY},
	{"encrypted before the key", wrap_tf, SMB2_SESSION_SETUP, 0, 0, NULL, PV_EREMOTE,
	 "SMB answer from 'fake' failed decryption: it came encrypted (for session 0x1122) before "
	 "the session had a key to open it",
	 .dialect = 0x0311, .cipher = 2, .enc_session = true},
};

START_TEST(test_faults)
{
	const struct fault *t = &FAULTS[_i];
	static struct flow fl;

	memset(&sec, 0, sizeof(sec));
	sec.cipher = t->cipher;
	sec.sign_alg = t->sign_alg;
	sec.enc_session = t->enc_session;
	sec.enc_share = t->enc_share;
	sec.no_context = t->no_context;
	sec.plain_cmd = t->plain_cmd;
	sec.validate_status = t->validate_status;
	sec.in_hook = t->in_hook;
	flow_run(&fl, t->hook, t->arg, t->signing, t->dialect, t->credits, t->password, T_MS);
	memset(&sec, 0, sizeof(sec));
	ck_failed(&fl, t->code, t->want, t->name);
	ck_assert_msg(!t->hook || fl.f.hooked > 0, "%s: the hook never ran", t->name);
	fake_stop(&fl.f);
}
END_TEST

/* The NTLM logon as a server checks it (the fake's own code): the target name is the server
 * as the caller addressed it (an alias, not the host connected to); a MIC changed on the way,
 * or a CHALLENGE changed before the client made it, is refused though the proof is right. */
START_TEST(test_ntlm_logon)
{
	static struct flow fl;

	memset(&sec, 0, sizeof(sec));
	sec.server = "srvu3";
	flow_run(&fl, NULL, 0, SIGN_NONE, 0, 0, NULL, T_OK);
	sec.server = NULL;
	ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
	ck_assert_uint_eq(fl.f.mic_ok, 1);
	ck_assert_str_eq(fl.f.target_name, "cifs/srvu3");
	fake_stop(&fl.f);

	sec.in_hook = fake_flip_mic;
	flow_run(&fl, NULL, 0, SIGN_NONE, 0, 0, NULL, T_MS);
	sec.in_hook = NULL;
	ck_failed(&fl, PV_EREMOTE, "refused (NT_STATUS_INVALID_PARAMETER)", "MIC changed");
	ck_assert_uint_eq(fl.f.done, 1);
	ck_assert_uint_eq(fl.f.mic_bad, 1);
	ck_assert_uint_eq(fl.f.mic_ok + fl.f.av_bad + fl.f.logons_ok, 0);
	fake_stop(&fl.f);

	flow_run(&fl, challenge_flag, 0x02000000, SIGN_NONE, 0, 0, NULL, T_MS);
	ck_failed(&fl, PV_EREMOTE, "refused (NT_STATUS_INVALID_PARAMETER)", "CHALLENGE changed");
	ck_assert_uint_eq(fl.f.mic_bad, 1);
	ck_assert_uint_eq(fl.f.mic_ok + fl.f.av_bad + fl.f.logons_ok, 0);
	fake_stop(&fl.f);

	/* SPNEGO's mechListMIC: ours changed on the way, the server's */
	sec.in_hook = flip_last;
	flow_run(&fl, NULL, 0, SIGN_NONE, 0, 0, NULL, T_MS);
	sec.in_hook = NULL;
	ck_failed(&fl, PV_EREMOTE, "or it did not take the SPNEGO mechListMIC", "mechListMIC");
	ck_assert_uint_eq(fl.f.mic_ok, 1); /* the NTLM MIC held: the SPNEGO one did not */
	ck_assert_uint_eq(fl.f.mech_mic_bad, 1);
	fake_stop(&fl.f);
	flow_run(&fl, fake_tamper, TAMPER(SMB2_SESSION_SETUP, FLIP), SIGN_NONE, 0, 0, NULL, T_MS);
	ck_failed(&fl, PV_EREMOTE, "the server's SPNEGO mechListMIC does not match",
		  "server's mechListMIC");
	ck_assert_uint_eq(fl.f.done, 1);
	ck_assert_uint_eq(fl.f.mech_mic_ok, 1);
	fake_stop(&fl.f);
}
END_TEST

/* The client's NEGOTIATE changed on its way (its ClientGuid): the fake, as a server, takes
 * the VALIDATE_NEGOTIATE that says the true one for a man in the middle's work and ends the
 * connection (MS-SMB2 3.3.5.15.12). */
static void client_guid_flip(struct fake *f, uint8_t *m, size_t len)
{
	(void)f;
	if (len >= SMB2_HDR + 36 && smb2_get16(m + 12) == SMB2_NEGOTIATE)
		m[SMB2_HDR + 12] ^= 0x01;
}

/* FSCTL_VALIDATE_NEGOTIATE_INFO after the tree connect of SMB 3.0 and 3.0.2 (signed, though
 * signing is not required, and taken), never for 2.x or 3.1.1; a server that does not do
 * it, saying so signed; a server that saw another NEGOTIATE than the client sent. */
START_TEST(test_validate_negotiate)
{
	static const uint16_t dialects[] = {0x0202, 0x0210, 0x0300, 0x0302, 0x0311};
	static const uint32_t not_done[] = {ST_NOT_SUPPORTED, ST_FILE_CLOSED, ST_INVALID_DEVICE_REQ,
					    ST_FS_DRIVER_REQUIRED};
	static struct flow fl;

	memset(&sec, 0, sizeof(sec));
	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++) {
		unsigned want = validates(dialects[i]);

		flow_run(&fl, NULL, 0, SIGN_NONE, dialects[i], 0, NULL, T_OK);
		ck_valid(&fl, "validation");
		ck_assert_msg(fl.f.cmds[SMB2_IOCTL] == want, "0x%04x: %u IOCTLs", dialects[i],
			      fl.f.cmds[SMB2_IOCTL]);
		ck_assert_uint_eq(fl.f.validated, want);
		/* signed: the only request that is (3.1.1 signs its TREE_CONNECT) */
		ck_assert_uint_eq(fl.f.signed_ok, dialects[i] == 0x0311 ? 1 : want);
		ck_assert_uint_eq(fl.f.validate_bad + fl.f.sig_bad, 0);
		fake_stop(&fl.f);
	}
	for (size_t i = 0; i < sizeof(not_done) / sizeof(not_done[0]); i++) {
		sec.validate_status = not_done[i];
		flow_run(&fl, NULL, 0, SIGN_NONE, 0x0302, 0, NULL, T_OK);
		ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
		for (unsigned k = 0; k < fl.n; k++)
			ck_assert_msg(fl.k[k].code == PV_OK, "%s: %s", fl.k[k].what, fl.k[k].msg);
		ck_assert_uint_eq(fl.n, 4 + 5 + 6 + 4 + 1); /* the whole flow */
		ck_assert_uint_eq(fl.f.cmds[SMB2_IOCTL], 1);
		ck_assert_uint_eq(fl.f.signed_ok, 1);
		ck_assert_uint_eq(fl.f.validated + fl.f.validate_bad, 0);
		fake_stop(&fl.f);
	}
	sec.validate_status = 0;
	sec.in_hook = client_guid_flip;
	flow_run(&fl, NULL, 0, SIGN_NONE, 0x0302, 0, NULL, T_MS);
	sec.in_hook = NULL;
	ck_failed(&fl, PV_EUNREACH, "SMB to 'fake': the connection was closed", "GUID changed");
	ck_assert_uint_eq(fl.f.validate_bad, 1);
	fake_stop(&fl.f);
}
END_TEST

/* A request on a connection that is not usable is refused at once, its callback never
 * called; closing a connection completes what is pending, with "closed". */
START_TEST(test_refused_and_closed)
{
	static struct flow fl;
	struct pv_smb_loop *l = open_alone(&fl, 0);
	struct flow *one = &fl;
	struct call *k;

	REQ(&fl, "READ", NULL, pv_smb_read, fl.c, fl.fid_f, 0, 10);
	ck_assert(k->refused);
	ck_assert_str_eq(k->msg, "SMB: the connection is not open");
	run_flows(l, &one, 1);
	ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
	REQ(&fl, "READ", NULL, pv_smb_read, fl.c, fl.fid_f, 0, PV_SMB_READ_MAX + 1);
	ck_assert(k->refused);
	ck_assert_str_eq(k->msg, "SMB: a READ of 1048577 bytes (at most 1048576)");
	/* a request in flight, then closed by the caller */
	REQ(&fl, "CREATE", NULL, pv_smb_create, fl.c, "u1/f", PV_SMB_READ, PV_SMB_OPEN, 0);
	ck_assert(!k->refused);
	in_loop = true;
	pv_smb_close_conn(fl.c);
	in_loop = false;
	ck_assert_int_eq(k->calls, 1);
	ck_assert_int_eq(k->code, PV_EUNREACH);
	ck_assert_str_eq(k->msg, "SMB to 'fake': closed");
	ck_assert_uint_eq(pv_smb_loop_count(l), 0);
	REQ(&fl, "CLOSE", NULL, pv_smb_closefile, fl.c, fl.fid_f);
	ck_assert(k->refused);
	run_flows(l, &one, 1);
	loop_free(l);
	fake_stop(&fl.f);
	ck_once(&fl);
	ck_assert_int_eq(fl.ready.code, PV_OK);

	/* the server gone before a request is made: the send fails in pv_smb_read, and the
	 * callback still comes from the loop (on_call checks), with the close */
	l = open_alone(&fl, 0);
	run_flows(l, &one, 1);
	ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
	shutdown(fl.f.fd, SHUT_RDWR);
	fake_join(&fl.f);
	REQ(&fl, "READ", NULL, pv_smb_read, fl.c, fl.fid_f, 0, 10);
	ck_assert(!k->refused);
	ck_assert_int_eq(k->calls, 0);
	run_flows(l, &one, 1);
	ck_assert_int_eq(k->code, PV_EUNREACH);
	ck_assert_str_eq(k->msg, "SMB to 'fake': the connection was closed");
	loop_free(l);
	fake_stop(&fl.f);
	ck_once(&fl);
}
END_TEST

/* READs over 64 KiB (large MTU): each one request charged a credit per 64 KiB and taking as
 * many message ids (the fake refuses an id used before, and a READ charged less), three in
 * flight at once, every byte as the file holds it; the largest one the connection takes is
 * the server's MaxReadSize up to PV_SMB_READ_MAX (the fake says 8 MiB). */
static void lr_opened(struct call *k, const struct pv_smb_done *d)
{
	static const uint32_t off[] = {0, 50000, 0}, len[] = {131072, 100000, 10};
	struct flow *fl = opened(k, d, k->fl->fid_f);

	if (!fl)
		return;
	for (int i = 0; i < 3; i++)
		REQ(fl, "READ", f_read, pv_smb_read, fl->c, fl->fid_f, off[i], len[i])->off =
			off[i];
	REQ(fl, "CLOSE f", NULL, pv_smb_closefile, fl->c, fl->fid_f);
}

START_TEST(test_large_reads)
{
	static struct flow fl;
	struct pv_smb_loop *l = open_alone(&fl, 0);
	struct flow *one = &fl;
	struct call *k;

	run_flows(l, &one, 1);
	ck_assert_msg(fl.ready.code == PV_OK, "%s", fl.ready.msg);
	ck_assert_uint_eq(pv_smb_max_read(fl.c), PV_SMB_READ_MAX);
	REQ(&fl, "CREATE f", lr_opened, pv_smb_create, fl.c, "u1/f", PV_SMB_READ, PV_SMB_OPEN,
	    PV_SMB_NONDIR);
	run_flows(l, &one, 1);
	for (unsigned i = 0; i < fl.n; i++)
		ck_assert_msg(fl.k[i].calls == 1 && fl.k[i].code == PV_OK && fl.k[i].status == 0,
			      "%s: %d calls, code %d, status 0x%08x: %s", fl.k[i].what,
			      fl.k[i].calls, fl.k[i].code, fl.k[i].status, fl.k[i].msg);
	ck_assert_uint_eq(fl.n, 5);
	ck_assert_uint_eq(fl.f.bad_mids, 0);
	ck_assert_uint_eq(fl.f.bad_charge, 0);
	ck_assert_uint_eq(fl.f.large_reads, 2);
	ck_assert_uint_eq(fl.f.overdrawn, 0);
	ck_assert(!fl.read_bad);
	ck_assert_uint_eq(fl.read, 131072 + 100000 + 10);
	loop_free(l);
	fake_stop(&fl.f);
}
END_TEST

/* ---- listings, given to pv_smb_entries directly ---- */

struct seen {
	unsigned n;
	char last[800];
};

static int seen_entry(void *arg, const char *name, bool dir, uint64_t size)
{
	struct seen *s = arg;

	(void)dir;
	(void)size;
	s->n++;
	snprintf(s->last, sizeof(s->last), "%s", name);
	return 0;
}

/* An entry at b + at: its NextEntryOffset, a name of len bytes (UTF-16LE) copied from name,
 * nl said in FileNameLength. The entry's end. */
static size_t put_entry(uint8_t *b, size_t at, uint32_t next, const void *name, uint32_t len,
			uint32_t nl)
{
	memset(b + at, 0, 64 + len);
	smb2_put32(b + at, next);
	smb2_put32(b + at + 56, 0x80);
	smb2_put32(b + at + 60, nl);
	memcpy(b + at + 64, name, len);
	return at + 64 + len;
}

START_TEST(test_entries)
{
	static const uint8_t ab[] = {'a', 0, 'b', 0}, dot[] = {'.', 0};
	static const uint8_t lone[] = {'a', 0, 0x00, 0xd8}; /* a high surrogate alone */
	static const uint8_t slash[] = {'a', 0, '/', 0, 'b', 0}, bslash[] = {'a', 0, '\\', 0};
	static const uint8_t nul[] = {'a', 0, 0, 0}, none[512] = {0};
	static const char UTF[] = "a malformed listing: a name that is not UTF-16";
	/* one entry at 0, the buffer len bytes: what is refused */
	static const struct {
		const uint8_t *name;
		uint32_t copied, nl, next;
		size_t len;
		const char *want;
	} bad[] = {
		{ab, 4, 4, 0, 66,
		 "an entry whose name (4 bytes) or NextEntryOffset (0) does not fit the 66 bytes "
		 "left"},						/* the name past the end */
		{ab, 4, 0xfffffff0u, 0, 68, "name (4294967280 bytes)"}, /* ... far past */
		{ab, 4, 4, 66, 200,
		 "NextEntryOffset (66) does not fit"}, /* NextEntryOffset inside the entry */
		{ab, 4, 4, 8, 200, "NextEntryOffset (8) does not fit"}, /* ... inside its header */
		{ab, 4, 4, 201, 200,
		 "NextEntryOffset (201) does not fit the 200 bytes left"}, /* ... past the end */
		{ab, 4, 4, 68, 68,
		 "a malformed listing: an entry of 0 bytes, shorter than its 64 fixed ones"}, /* at
												 the
												 end
											       */
		{lone, 4, 4, 0, 68, UTF},
		{ab, 3, 3, 0, 67, UTF},				   /* an odd length */
		{none, 512, 512, 0, 64 + 512, "name (512 bytes)"}, /* longer than a name may be */
		{slash, 6, 6, 0, 70, "a malformed listing: the server listed a bad name 'a/b'"},
		{bslash, 4, 4, 0, 68, "a malformed listing: the server listed a bad name 'a\\'"},
		{nul, 4, 4, 0, 68, "a malformed listing: the server listed a bad name 'a'"},
		{ab, 0, 0, 0, 64, "a malformed listing: the server listed a bad name ''"},
	};
	uint8_t b[1024];
	struct seen s = {0};
	size_t end;

	/* two entries and a dot: both names, the dot skipped */
	end = put_entry(b, 0, 72, dot, 2, 2);
	end = put_entry(b, 72, 72, ab, 4, 4);
	end = put_entry(b, 144, 0, ab, 2, 2);
	ck_assert_int_eq(pv_smb_entries(b, end, seen_entry, &s), PV_OK);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_str_eq(s.last, "a");
	ck_assert_int_eq(pv_smb_entries(b, 0, seen_entry, &s), PV_OK); /* nothing listed */
	ck_assert_int_eq(pv_smb_entries(NULL, 0, seen_entry, &s), PV_OK);
	pv_error_clear();
	ck_assert_int_eq(pv_smb_entries(b, 63, seen_entry, &s), PV_EREMOTE);
	ck_assert_str_eq(
		pv_errmsg(),
		"a malformed listing: an entry of 63 bytes, shorter than its 64 fixed ones");
	ck_assert_int_eq(pv_smb_entries(b, 72 + 40, seen_entry, &s), PV_EREMOTE); /* cut */
	ck_assert_str_eq(pv_errmsg(), "a malformed listing: an entry of 40 bytes, shorter than its "
				      "64 fixed ones");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_entry(b, 0, bad[i].next, bad[i].name, bad[i].copied, bad[i].nl);
		ck_assert_msg(pv_smb_entries(b, bad[i].len, seen_entry, &s) == PV_EREMOTE,
			      "case %zu taken", i);
		ck_assert_msg(strncmp(pv_errmsg(), "a malformed listing: ", 21) == 0 &&
				      strstr(pv_errmsg(), bad[i].want),
			      "case %zu: '%s' lacks '%s'", i, pv_errmsg(), bad[i].want);
	}
}
END_TEST

/* ---- the fuzz target's seed corpus ---- */

/* The tree the plan of tests/fuzz/async_plan.h finds. */
static void async_plan_tree(struct fake *f)
{
	fake_mknode(f, "u1/d", true, 0);
	for (unsigned i = 0; i < ASYNC_PLAN_FILES; i++) {
		char p[32];

		snprintf(p, sizeof(p), "u1/d/f%u", i);
		fake_mknode(f, p, false, i);
	}
	fake_mknode(f, "u1/f", false, ASYNC_PLAN_SIZE);
	f->page = 3;
}

/* The faults the corpus holds besides the valid conversation. */
static const struct {
	const char *name;
	fake_hook hook;
	long arg;
	int signing;
	uint16_t dialect;
	int credits; /* the fake's (0: 64 an answer) */
	uint16_t cipher, sign_alg;
	bool enc_session, enc_share;
} SEEDS[] = {
	{"valid", NULL, 0, SIGN_NONE, 0x0210},
	{"valid-302", NULL, 0, SIGN_NONE, 0x0302},
	{"stingy", NULL, 0, SIGN_NONE, 0x0302, 1}, /* one credit at a time: the backlog */
	{"no-credits", NULL, 0, SIGN_NONE, 0x0302, -1},
	{"signed-302", NULL, 0, SIGN_REQUIRED, 0x0302},
	{"signed-210", NULL, 0, SIGN_REQUIRED, 0x0210},
	{"interim", pending_all, 0, SIGN_NONE, 0},
	{"signed-interim", pending_all, 0, SIGN_REQUIRED, 0},
	{"short-frame", fake_short_frame, 10},
	{"netbios-type", fake_bad_netbios, 0},
	{"netbios-huge", fake_bad_netbios, 2},
	{"cut-frame", fake_cut_frame, SMB2_SESSION_SETUP},
	{"create-short", fake_cut_body, SMB2_CREATE | 70 << 16},
	{"read-outside", fake_poke, POKE(SMB2_READ, SMB2_HDR + 4, 0x7fffffff)},
	{"listing-outside", fake_poke, POKE(SMB2_QUERY_DIRECTORY, SMB2_HDR + 4, 0x7fffffff)},
	{"entry-name", fake_poke, POKE(SMB2_QUERY_DIRECTORY, 72 + 60, 0x10000)},
	{"secbuf-outside", fake_poke, POKE(SMB2_SESSION_SETUP, SMB2_HDR + 4, 0x0010fff0)},
	{"mid-unknown", fake_poke, POKE(SMB2_CREATE, 24, 999)},
	{"twice", twice, SMB2_READ},
	{"next-outside", fake_poke, POKE(SMB2_CREATE, 20, 4096)},
	{"guest", session_flags, 1},
	{"signed-flipped", fake_tamper, TAMPER(SMB2_READ, FLIP), SIGN_REQUIRED, 0x0302},
	{"signed-missing", fake_tamper, TAMPER(SMB2_QUERY_DIRECTORY, UNSIGN), SIGN_REQUIRED,
	 0x0202},
	{"smb311", NULL, 0, SIGN_NONE, 0x0311},
	{"smb311-gmac", NULL, 0, SIGN_REQUIRED, 0x0311, 0, 0, 2},
	{"enc-311-gcm", NULL, 0, SIGN_NONE, 0x0311, 0, 2, 0, true},
	{"enc-311-ccm-share", NULL, 0, SIGN_NONE, 0x0311, 0, 1, 0, false, true},
	{"enc-302-ccm", NULL, 0, SIGN_NONE, 0x0302, 0, 1, 0, true},
	{"enc-tampered", fake_tf_tamper, SMB2_READ | TF_FLIP << 16, SIGN_NONE, 0x0311, 0, 2, 0,
	 true},
	{"enc-session-id", fake_tf_tamper, SMB2_CREATE | TF_SID << 16, SIGN_NONE, 0x0311, 0, 4, 0,
	 true},
	{"enc-truncated", fake_tf_tamper, SMB2_CLOSE | TF_SHORT << 16, SIGN_NONE, 0x0311, 0, 3, 0,
	 true},
};

/* The plan against the fake under each seed's fault: every callback once (the plan checks),
 * the valid ones all done; with PV_ASYNC_CORPUS set, what the fake sent goes to a file per
 * seed there. */
START_TEST(test_plan_and_corpus)
{
	const char *dir = getenv("PV_ASYNC_CORPUS");

	for (size_t i = 0; i < sizeof(SEEDS) / sizeof(SEEDS[0]); i++) {
		static struct fake f;
		struct async_plan p;
		int fd = fake_start(&f, SEEDS[i].hook, SEEDS[i].arg);

		f.signing = SEEDS[i].signing;
		f.dialect = SEEDS[i].dialect;
		f.credits = SEEDS[i].credits;
		f.cipher = SEEDS[i].cipher;
		f.sign_alg = SEEDS[i].sign_alg;
		f.encrypt_session = SEEDS[i].enc_session;
		f.encrypt_share = SEEDS[i].enc_share;
		async_plan_tree(&f);
		if (dir) {
			char path[512];

			snprintf(path, sizeof(path), "%s/%s", dir, SEEDS[i].name);
			ck_assert_ptr_nonnull(f.capture = fopen(path, "wb"));
		}
		fake_run(&f);
		async_plan_run(&p, fd, T_OK);
		fake_stop(&f);
		ck_assert_msg(p.ok == ((SEEDS[i].hook == NULL || SEEDS[i].hook == pending_all) &&
				       SEEDS[i].credits >= 0),
			      "%s: %s", SEEDS[i].name, p.msg);
		if (p.ok) {
			ck_assert_uint_eq(p.names, ASYNC_PLAN_FILES);
			ck_assert_uint_eq(p.read, ASYNC_PLAN_SIZE);
		} else {
			ck_assert_msg(strncmp(p.msg, "SMB ", 4) == 0 ||
					      strncmp(p.msg, "a malformed listing", 19) == 0,
				      "%s: %s", SEEDS[i].name, p.msg);
		}
	}
}
END_TEST

/* The fuzz target (LLVMFuzzerTestOneInput) over every seed and every crash it found, under
 * ASan and UBSan here too; the valid seeds, streamed at once as the fuzz target does, still
 * make the whole plan (signatures included: the plan's fixed client challenge). */
#include "tests/fuzz/fuzz_async.c"

struct replayed {
	bool seeds; /* the corpus, not the crashes */
	unsigned ok;
};

/* An input as the fuzz target runs it (async_replay is what LLVMFuzzerTestOneInput does):
 * the valid seeds make the whole plan, the tampered ones fail on their signature. */
static void replay(void *arg, const char *name, const uint8_t *data, size_t len)
{
	struct replayed *r = arg;
	bool bad_sig = strstr(name, "flipped") || strstr(name, "missing");
	bool bad_tf =
		strstr(name, "tampered") || strstr(name, "session-id") || strstr(name, "truncated");
	struct async_plan p;

	async_replay(&p, data, len);
	if (r->seeds && !bad_sig && !bad_tf &&
	    (strncmp(name, "valid", 5) == 0 || strncmp(name, "signed-", 7) == 0 ||
	     strncmp(name, "smb311", 6) == 0 || strncmp(name, "enc-", 4) == 0 ||
	     strcmp(name, "interim") == 0 || strcmp(name, "stingy") == 0)) {
		ck_assert_msg(p.ok, "%s: %s", name, p.msg);
		r->ok++;
	}
	if (bad_sig)
		ck_assert_msg(!p.ok && strstr(p.msg, "has a bad signature"), "%s: %s", name, p.msg);
	if (r->seeds && bad_tf)
		ck_assert_msg(!p.ok && (strstr(p.msg, "failed decryption") ||
					strstr(p.msg, "transform header")),
			      "%s: %s", name, p.msg);
}

START_TEST(test_fuzz_replay)
{
	struct replayed r = {true, 0};
	int seeds = pv_unit_inputs("tests/fuzz/corpus/async", ASYNC_INPUT_MAX, replay, &r);

	ck_assert_msg(seeds >= 0, "tests/fuzz/corpus/async: %s (run from the top of the tree)",
		      strerror(errno));
	ck_assert_uint_ge((unsigned)seeds, sizeof(SEEDS) / sizeof(SEEDS[0]));
	ck_assert_uint_ge(r.ok, 12);
	r.seeds = false;
	ck_assert_int_ge(pv_unit_inputs("tests/fuzz/crashes/async", ASYNC_INPUT_MAX, replay, &r),
			 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("async");
	TCase *tc = tcase_create("valid");

	for (size_t i = 0; i < sizeof(WDATA); i++)
		WDATA[i] = (uint8_t)(i * 7 + i / 251);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_flows);
	tcase_add_test(tc, test_spnego_logon);
	tcase_add_test(tc, test_forged_logon);
	tcase_add_test(tc, test_many_connections);
	tcase_add_test(tc, test_interim_answers);
	tcase_add_test(tc, test_few_credits);
	tcase_add_test(tc, test_refused_and_closed);
	tcase_add_test(tc, test_large_reads);
	tcase_add_test(tc, test_smb3);
	tcase_add_test(tc, test_smb3_no_cipher);
	tcase_add_test(tc, test_other_requests);
	tcase_add_test(tc, test_slow_opening);
	tcase_add_test(tc, test_lease_setinfo);
	tcase_add_test(tc, test_durable);
	tcase_add_test(tc, test_ntlm_logon);
	tcase_add_test(tc, test_validate_negotiate);
	suite_add_tcase(s, tc);
	tc = tcase_create("faults");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_faults, 0, (int)(sizeof(FAULTS) / sizeof(FAULTS[0])));
	tcase_add_test(tc, test_entries);
	suite_add_tcase(s, tc);
	tc = tcase_create("fuzz-plan");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_plan_and_corpus);
	tcase_add_test(tc, test_fuzz_replay);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
