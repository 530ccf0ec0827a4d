/* tests/unit/check_engine.c: the built-in load driver's engine (load/engine.h) driven whole:
 * pv_load with 2 users on 2 loops, each user's connection to a fake server of its own
 * (tests/unit/fake_smb2.h), and every request each user sent recorded as the fake read it.
 *
 * The engine connects to <alias>:445 by name; here connect(2) is taken over for
 * 127.0.0.<n>:445 (user n's alias): the socket becomes the client's end of a fresh fake, whose
 * tree is built from a small fileset plan. Every request after the tree connect is written as
 * a line (the command and what it asks: paths, access, share access, disposition, options,
 * the lease asked, offsets and lengths, information classes and sizes, the FSCTL, the notify
 * filter, the lock's range and flags, the rename's target), successive 64 KiB READs or WRITEs
 * of one file folded into one line with their count.
 *
 * Each scenario kind runs alone (its weight the only one) at 10 scenarios a second per user for
 * a second, every kind together at their weights, and the ops loops; the lines each user sent
 * from `go` on are held against those recorded from the engine when its scenarios were switch
 * statements (commit 26e097f, before the split): the first 30% of them, because how many
 * scenarios fit into the second depends on the machine, but which ones, on which files, of
 * which sizes, does not (a user's schedule is seeded). The learning of the tree (the listing at
 * the logon, or the fileset's plan) is held the same way, and the engine's own counts of what
 * it sent against what the fakes read. Both users log on as LAB\u1, the one account the fake
 * knows, with schedules of their own (users 1 and 2).
 *
 * PV_ENGINE_RECORD=tests/unit/check_engine_want.h build/unit/check_engine writes the expected
 * values again from the engine as it is (CK_FORK=yes: each run its own process), for a change
 * that means to change what is sent; `make format` then lays the file out. */
#include <check.h>

#include "tests/unit/unit.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileset/fileset.h"
#include "load/engine.h"
#include "smb/smb2.h"
#include "tests/unit/fake_smb2.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/secret.h"
#include "util/utf16.h"

#define USERS 2
#define B     64 /* the body of a request, after its header */

/* The users' home tree: static/ of 2 x 2 folders of 3 files (some over 64 KiB), volatile/ of
 * 3 files, new/ with a folder; the fake also holds 2 files made by an earlier run in new/. */
static const char FILESET[] = "name: t\n"
			      "seed: 7\n"
			      "parts:\n"
			      "  static:\n"
			      "    folders: [2, 2]\n"
			      "    files: 3\n"
			      "    sizes:\n"
			      "      - {size: [1KiB, 150KiB]}\n"
			      "    extensions: [docx, txt]\n"
			      "  volatile:\n"
			      "    files: 3\n"
			      "    sizes:\n"
			      "      - {size: [2KiB, 100KiB]}\n"
			      "    extensions: [docx]\n"
			      "  new:\n"
			      "    folders: [1]\n";

/* ---- one fake per user, found by connect(2) ---- */

struct rec {
	struct fake f;
	bool used;
	pthread_mutex_t lock;
	struct pv_buf log; /* the lines, NUL-terminated */
	bool went;	   /* go came: what follows is the load's */
	size_t at_go;	   /* where the load's requests start in the log */
	unsigned lines;	   /* requests recorded from go on */
	/* the last line, when a READ or WRITE run may go on: its handle, command, where the next
	 * would start, how many, where the line starts */
	uint16_t run_cmd;
	uint64_t run_h, run_off, run_first;
	unsigned run_n;
	size_t run_at;
	/* READs past the end of a static/ file smaller than the largest, and the first (a
	 * learned kind's reads are made on a file that holds them, or on the largest) */
	unsigned past_end;
	char first_past[160];
};

static struct rec recs[USERS];
static struct pv_fileset *plan;
static pthread_mutex_t recs_lock = PTHREAD_MUTEX_INITIALIZER;

/* The run's name in a path (pv-u1-<run>-<n>: the engine's, from the clock) as R. */
static void unrun(char *p)
{
	for (char *s = p; (s = strstr(s, "-u1-")) != NULL;) {
		char *h = s + 4, *e = h;

		while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f'))
			e++;
		if (e > h && *e == '-') {
			*h = 'R';
			memmove(h + 1, e, strlen(e) + 1);
		}
		s += 4;
	}
}

static void utf8_of(const uint8_t *m, size_t len, size_t off, size_t n, char *out, size_t cap)
{
	if (off > len || n > len - off || pv_utf16le_to_utf8(m + off, n, out, cap) < 0)
		snprintf(out, cap, "?");
	for (char *p = out; *p; p++)
		if (*p == '\\')
			*p = '/';
	unrun(out);
}

/* The lease state a CREATE asks for (its "RqLs" context), or -1. */
static long lease_of(const uint8_t *m, size_t len)
{
	size_t at = smb2_get32(m + B + 48), n = smb2_get32(m + B + 52);

	if (m[B + 3] != 0xff || !n || at > len || n > len - at)
		return -1;
	for (size_t c = at; c + 16 <= at + n;) {
		uint32_t next = smb2_get32(m + c);
		size_t no = smb2_get16(m + c + 4), nl = smb2_get16(m + c + 6);
		size_t dof = smb2_get16(m + c + 10);

		if (nl == 4 && c + no + 4 <= len && memcmp(m + c + no, "RqLs", 4) == 0 &&
		    c + dof + 20 <= len)
			return (long)smb2_get32(m + c + dof + 16);
		if (!next)
			break;
		c += next;
	}
	return -1;
}

/* A line into r's log: appended, or in place of the last when at is where it starts. */
static void add_line(struct rec *r, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_line(struct rec *r, size_t at, const char *fmt, ...)
{
	va_list ap;

	if (at < r->log.len) {
		r->log.len = at;
		r->log.data[at] = '\0';
	}
	r->run_at = r->log.len;
	va_start(ap, fmt);
	pv_buf_vaddf(&r->log, fmt, ap);
	va_end(ap);
	pv_buf_addstr(&r->log, "\n");
}

/* fake's in_hook: one request message, as a line of r's log. */
static void record(struct fake *f, uint8_t *m, size_t len)
{
	struct rec *r = (struct rec *)((char *)f - offsetof(struct rec, f));
	uint16_t cmd = smb2_get16(m + 12);
	char path[1100];

	if (cmd < SMB2_CREATE || len < B + 8)
		return; /* the logon */
	if (cmd == SMB2_IOCTL && smb2_get32(m + B + 4) == SMB2_FSCTL_VALIDATE_NEGOTIATE)
		return; /* the logon's too (3.0.2) */
	pthread_mutex_lock(&r->lock);
	if (r->went)
		r->lines++;
	if ((cmd == SMB2_READ || cmd == SMB2_WRITE) && len >= B + 32) {
		uint32_t n = smb2_get32(m + B + 4);
		uint64_t off = smb2_get64(m + B + 8), h = smb2_get64(m + B + 16);
		const struct fake_node *nd = h >= 1 && h <= FAKE_HANDLES && f->h[h - 1].node >= 0
						     ? &f->fs[f->h[h - 1].node]
						     : NULL;

		uint64_t largest = 0;

		for (int j = 0; nd && j < FAKE_NODES; j++)
			if (f->fs[j].path && !f->fs[j].dir && strstr(f->fs[j].path, "/static/") &&
			    f->fs[j].size > largest)
				largest = f->fs[j].size;
		/* past the end of a file smaller than the largest (which is read when none holds
		 * all the reads of an open) */
		if (cmd == SMB2_READ && r->went && nd && strstr(nd->path, "/static/") &&
		    off + n > nd->size && nd->size < largest && !r->past_end++)
			snprintf(r->first_past, sizeof(r->first_past),
				 "%s (%llu bytes) read at %llu+%u", nd->path,
				 (unsigned long long)nd->size, (unsigned long long)off, n);

		/* the next chunk of a run of whole chunks: the run's line again, longer */
		if (r->run_n && r->run_cmd == cmd && r->run_h == h && r->run_off == off &&
		    (off - r->run_first) == 65536ull * r->run_n) {
			r->run_n++;
			r->run_off = off + n;
			add_line(r, r->run_at, "%s h%llu %llu+%llu x%u",
				 cmd == SMB2_READ ? "READ" : "WRITE", (unsigned long long)h,
				 (unsigned long long)r->run_first,
				 (unsigned long long)(r->run_off - r->run_first), r->run_n);
		} else {
			add_line(r, SIZE_MAX, "%s h%llu %llu+%u",
				 cmd == SMB2_READ ? "READ" : "WRITE", (unsigned long long)h,
				 (unsigned long long)off, n);
			r->run_cmd = cmd;
			r->run_h = h;
			r->run_first = off;
			r->run_off = off + n;
			r->run_n = 1;
		}
		if (n != 65536)
			r->run_n = 0; /* a short chunk ends the run */
		pthread_mutex_unlock(&r->lock);
		return;
	}
	r->run_n = 0;
	switch (cmd) {
	case SMB2_CREATE: {
		long lease = lease_of(m, len);
		char l[32] = "";

		utf8_of(m, len, smb2_get16(m + B + 44), smb2_get16(m + B + 46), path, sizeof(path));
		if (lease >= 0)
			snprintf(l, sizeof(l), " lease=%ld", lease);
		add_line(r, SIZE_MAX, "CREATE %s a=%x s=%x d=%u o=%x%s", path,
			 smb2_get32(m + B + 24), smb2_get32(m + B + 32), smb2_get32(m + B + 36),
			 smb2_get32(m + B + 40), l);
		break;
	}
	case SMB2_CLOSE:
		add_line(r, SIZE_MAX, "CLOSE h%llu f=%x", (unsigned long long)smb2_get64(m + B + 8),
			 smb2_get16(m + B + 2));
		break;
	case SMB2_FLUSH:
		add_line(r, SIZE_MAX, "FLUSH h%llu", (unsigned long long)smb2_get64(m + B + 8));
		break;
	case SMB2_LOCK:
		add_line(r, SIZE_MAX, "LOCK h%llu n=%u %llx+%llu f=%x",
			 (unsigned long long)smb2_get64(m + B + 8), smb2_get16(m + B + 2),
			 (unsigned long long)smb2_get64(m + B + 24),
			 (unsigned long long)smb2_get64(m + B + 32), smb2_get32(m + B + 40));
		break;
	case SMB2_IOCTL:
		add_line(r, SIZE_MAX, "IOCTL h%llu ctl=%x in=%u out=%u f=%x",
			 (unsigned long long)smb2_get64(m + B + 8), smb2_get32(m + B + 4),
			 smb2_get32(m + B + 28), smb2_get32(m + B + 44), smb2_get32(m + B + 48));
		break;
	case SMB2_QUERY_DIRECTORY:
		utf8_of(m, len, smb2_get16(m + B + 24), smb2_get16(m + B + 26), path, sizeof(path));
		add_line(r, SIZE_MAX, "QDIR h%llu c=%u f=%x '%s' out=%u",
			 (unsigned long long)smb2_get64(m + B + 8), m[B + 2], m[B + 3], path,
			 smb2_get32(m + B + 28));
		break;
	case SMB2_CHANGE_NOTIFY:
		add_line(r, SIZE_MAX, "NOTIFY h%llu f=%x out=%u filter=%x",
			 (unsigned long long)smb2_get64(m + B + 8), smb2_get16(m + B + 2),
			 smb2_get32(m + B + 4), smb2_get32(m + B + 24));
		break;
	case SMB2_QUERY_INFO:
		add_line(r, SIZE_MAX, "QINFO h%llu %u.%u out=%u",
			 (unsigned long long)smb2_get64(m + B + 24), m[B + 2], m[B + 3],
			 smb2_get32(m + B + 4));
		break;
	case SMB2_SET_INFO: {
		size_t n = smb2_get32(m + B + 4), at = smb2_get16(m + B + 8);
		unsigned long long h = smb2_get64(m + B + 16);
		char what[1200] = "";

		if (at > len || n > len - at)
			n = 0;
		if (m[B + 3] == 10 && n >= 20) { /* rename: the target, whether it replaces */
			utf8_of(m, len, at + 20, smb2_get32(m + at + 16), path, sizeof(path));
			snprintf(what, sizeof(what), " to=%s replace=%u", path, m[at]);
		} else if (m[B + 3] == 20 && n >= 8) {
			snprintf(what, sizeof(what), " eof=%llu",
				 (unsigned long long)smb2_get64(m + at));
		} else if (m[B + 3] == 13 && n >= 1) {
			snprintf(what, sizeof(what), " delete=%u", m[at]);
		}
		add_line(r, SIZE_MAX, "SETINFO h%llu %u.%u len=%zu%s", h, m[B + 2], m[B + 3], n,
			 what);
		break;
	}
	default:
		add_line(r, SIZE_MAX, "CMD%u", cmd);
	}
	pthread_mutex_unlock(&r->lock);
}

/* User n's fake, its tree from the plan, on the other end of fd. */
static int fake_for(int fd, unsigned user)
{
	struct rec *r = &recs[user];
	int cfd, fl;

	pthread_mutex_lock(&recs_lock);
	ck_assert_msg(!r->used, "user %u connected twice", user);
	r->used = true;
	pthread_mutex_unlock(&recs_lock);
	cfd = fake_start(&r->f, NULL, 0);
	for (size_t i = 0; i < plan->n; i++) {
		char p[600];

		snprintf(p, sizeof(p), "u1/%s", plan->entries[i].path);
		ck_assert_ptr_nonnull(
			fake_mknode(&r->f, p, plan->entries[i].dir, plan->entries[i].size));
	}
	fake_mknode(&r->f, "u1/new/pv-old1.dat", false, 5000);
	fake_mknode(&r->f, "u1/new/pv-old2.dat", false, 70000);
	r->f.in_hook = record;
	fake_run(&r->f);
	ck_assert_int_ge(dup2(cfd, fd), 0);
	close(cfd);
	ck_assert_int_ge(fl = fcntl(fd, F_GETFL), 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
	return 0;
}

/* connect(2) for the whole test binary: 127.0.0.<n>:445 is user n-1's fake (smb/async.c's
 * pv_smb_open resolves the alias and connects; this is where the fake comes in), anything
 * else the system's. */
int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)addr.__sockaddr__;

	if (len >= sizeof(*in) && in->sin_family == AF_INET && ntohs(in->sin_port) == 445) {
		uint32_t a = ntohl(in->sin_addr.s_addr);

		if ((a >> 8) == 0x7f0000 && (a & 0xff) >= 1 && (a & 0xff) <= USERS)
			return fake_for(fd, (a & 0xff) - 1);
	}
	return (int)syscall(SYS_connect, fd, addr.__sockaddr__, len);
}

/* ---- pv_load's caller ---- */

static const struct pv_load_user USERS_OF[USERS] = {
	{"u1", "127.0.0.1", "fsroot1", 1},
	{"u1", "127.0.0.2", "fsroot1", 2},
};

struct caller {
	unsigned steps;
	struct pv_load_ready rd;
	struct pv_load_figs sum;
	bool went;
};

static int c_next(void *arg, const struct pv_load_user **users, size_t *total, size_t *n)
{
	struct caller *c = arg;

	*users = USERS_OF;
	*total = USERS;
	*n = c->steps++ ? 0 : USERS;
	return PV_OK;
}

static bool c_stop(void *arg)
{
	(void)arg;
	return false;
}

/* Every user learned its tree: the load's requests start here. */
static bool c_go(void *arg)
{
	struct caller *c = arg;

	for (unsigned i = 0; i < USERS; i++) {
		pthread_mutex_lock(&recs[i].lock);
		recs[i].at_go = recs[i].log.len;
		recs[i].went = true;
		recs[i].run_n = 0;
		pthread_mutex_unlock(&recs[i].lock);
	}
	c->went = true;
	return true;
}

static int c_ready(void *arg, const struct pv_load_ready *r)
{
	((struct caller *)arg)->rd = *r;
	return PV_OK;
}

static int c_emit(void *arg, const struct pv_load_figs *f)
{
	pv_load_figs_merge(&((struct caller *)arg)->sum, f);
	return PV_OK;
}

static int c_done(void *arg)
{
	(void)arg;
	return PV_OK;
}

/* ---- the runs ---- */

/* The runs: each kind alone, every kind at its weight, the ops loops, and every kind again with
 * static/ learnt from the fileset's plan (PLAN: the same files known, so the same requests as
 * MIXED's once learnt). */
/* the runs past the kinds: PLAN is MIXED with the plan taken, CLIENT the learned kinds with a
 * client time waited between an activity's requests (the same requests as LEARNED's), STATS
 * a learned kind of stat opens (stat_kinds), UNLEASED the learned kinds with 75% of their opens
 * to read or edit asked no lease in the capture */
enum {
	MIXED = PV_PLAYBOOK_WORKLOAD_KINDS,
	OPS_WRITE,
	OPS_OPEN,
	PLAN,
	CLIENT,
	STATS,
	UNLEASED,
	RUNS
};

struct want {
	const char *learn;	/* the requests before go (NULL: not held) */
	const char *run[USERS]; /* the first ones after */
};

static const char *run_name(int k)
{
	return k < PV_PLAYBOOK_WORKLOAD_KINDS ? pv_playbook_workload_names[k]
	       : k == MIXED		      ? "mixed"
	       : k == OPS_WRITE		      ? "ops-write"
	       : k == OPS_OPEN		      ? "ops-open"
	       : k == PLAN		      ? "mixed, the plan taken"
	       : k == CLIENT		      ? "learned, a client time waited"
	       : k == STATS		      ? "learned, stat opens"
					      : "learned, 75% of its opens without a lease";
}

#include "tests/unit/check_engine_want.h"

/* The first line where got and want differ, for the message. */
static const char *differ(const char *got, const char *want, char *out, size_t cap)
{
	unsigned line = 1;
	const char *g = got, *w = want;

	while (*w && *g == *w) {
		if (*w == '\n') {
			line++;
			got = g + 1;
			want = w + 1;
		}
		g++;
		w++;
	}
	snprintf(out, cap, "line %u: got '%.*s', want '%.*s'", line, (int)strcspn(got, "\n"), got,
		 (int)strcspn(want, "\n"), want);
	return out;
}

/* load.workload's kinds for the run of kind learned (and a fourth: a folder read file by file,
 * cut short): a file read (its repeat made 2.5 times on average: 2, and a third with a chance
 * of one half),
 * a folder listed in two parts, watched between them (one answer's page, from the start;
 * then on from there, not from the start again), then a file of its own written (3 writes),
 * its lock taken and
 * released, and three CREATEs at once (the third looks for a name not there), and one that
 * begins on a file not yet open; reads of 2-4 KiB and of 64 KiB, writes of 512 B-1 KiB. The fourth
 * holds its folder open while it reads a file in it, as a client's copy of a folder does. CREATE's
 * dispositions: the second kind's written file is replaced (OVERWRITE_IF: one of the user's
 * own), the fifth's first made (CREATE: a new name, deleted when closed), its second opened as
 * it is to be written (OPEN: a volatile/ document), then one refused (CREATE(REFUSED): a
 * name not there looked for). The first's IOCTLs send the codes learned: the snapshots of its
 * file (43: IOCTL(SNAPSHOTS)), and once it is closed the referral of the share on no file (75:
 * IOCTL(REFERRAL)), both refused by the fake (NOT_SUPPORTED), as a server may: the kind goes
 * on. */
static void learned(struct pv_playbook_workload_learned *l)
{
	static const struct {
		const char *cmds;
		double weight, requests;
	} kinds[] = {
		{"5 16 43 136 6 75", 3, 8}, {"5 142 15 14 6 69 17 137 7 10 10 6 5 5 5 6 6", 4, 19},
		{"8 16 6", 1, 3},	    {"133 142 5 8 6", 1, 12},
		{"101 9 6 5 9 6 19", 2, 7},
	};

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct pv_playbook_workload_learned_kind *k = &l->kind[l->n++];
		const char *p = kinds[i].cmds;
		char *e;

		k->weight = kinds[i].weight;
		k->requests = kinds[i].requests;
		for (unsigned long c; (c = strtoul(p, &e, 10)), e != p; p = e)
			k->step[k->n++] = (uint8_t)c;
	}
	l->kind[0].count[3] = 2.5;
	/* a folder listed and held open, then its files read one by one, cut after the first: 6
	 * requests past the cut, its last whole cycle (CREATE READ CLOSE, inside the folder's)
	 * made twice more, the folder closed first. Its folder was opened twice in one of five
	 * activities (CREATE+, 1.2 on average): once here, as 1.2 is nearer 1 than 2 */
	for (int i = 0; i < 5; i++)
		l->kind[3].count[i] = i == 1 ? 2 : 1;
	l->kind[3].count[0] = 1.2;
	l->kind[3].rest = 6;
	l->read[12] = 50;
	l->read[17] = 50; /* half of them 64 KiB, asked whole past a smaller file's end */
	l->write[10] = 100;
}

/* load.workload's kind for the run STATS: CREATE(STAT) QUERY_INFO READ CLOSE, as a client
 * opens a file to look at it (and a read it could not make on such an open, as the server
 * would refuse it), then a folder looked at so and listed (its access then a listing's). */
static void stat_kinds(struct pv_playbook_workload_learned *l)
{
	static const uint8_t steps[][4] = {
		{PV_PLAYBOOK_WORKLOAD_LEARNED_STAT, 16, 8, 6},
		{PV_PLAYBOOK_WORKLOAD_LEARNED_STAT, 14, 6, 0},
	};

	memset(l, 0, sizeof(*l));
	for (unsigned i = 0; i < 2; i++) {
		struct pv_playbook_workload_learned_kind *k = &l->kind[l->n++];

		k->weight = 1;
		k->requests = 4 - i;
		for (k->n = 0; k->n < 4 && steps[i][k->n]; k->n++)
			k->step[k->n] = steps[i][k->n];
	}
	l->read[12] = 100;
}

/* Run k; what each user sent into recs. */
static void run(int k, struct caller *c)
{
	struct pv_playbook_workload cfg;
	struct pv_secret *pw = pv_secret_new(FAKE_PASSWORD, strlen(FAKE_PASSWORD));
	struct pv_load_opts o = {
		.cfg = &cfg,
		.client = "cli1",
		.workgroup = "LAB",
		.password = pw,
		.duration = k == OPS_WRITE || k == OPS_OPEN ? 0.3 : 1.0,
		.timeout_ms = 10000,
		.threads = 2,
		.ops_loop = k == OPS_WRITE  ? PV_LOAD_OPS_WRITE
			    : k == OPS_OPEN ? PV_LOAD_OPS_OPEN
					    : PV_LOAD_SCHEDULES,
		.arg = c,
		.next = c_next,
		.stop = c_stop,
		.go = c_go,
		.ready = c_ready,
		.emit = c_emit,
		.done = c_done,
	};
	int r;

	memset(c, 0, sizeof(*c));
	memset(recs, 0, sizeof(recs));
	for (unsigned i = 0; i < USERS; i++)
		pthread_mutex_init(&recs[i].lock, NULL);
	ck_assert_int_eq(pv_fileset_parse("t", FILESET, strlen(FILESET), &plan), PV_OK);
	pv_playbook_workload_defaults(&cfg);
	cfg.rate = 36000; /* 10 scenarios a second per user */
	if (k < PV_PLAYBOOK_WORKLOAD_KINDS || k == CLIENT || k == STATS || k == UNLEASED)
		for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_KINDS; j++)
			cfg.kind[j].weight = j == (k == CLIENT || k == STATS || k == UNLEASED
							   ? PV_PLAYBOOK_WORKLOAD_LEARNED
							   : k);
	for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_KINDS; j++)
		cfg.kind[j].limit = 100; /* ASan is slow: nothing is over its limit */
	if (k == PV_PLAYBOOK_WORKLOAD_LEARNED || k == CLIENT || k == UNLEASED)
		learned(&cfg.learned);
	if (k == UNLEASED)
		cfg.learned.unleased = 75;
	if (k == STATS)
		stat_kinds(&cfg.learned);
	if (k == CLIENT) /* 0.05 s after each answer, always (no spread) */
		cfg.learned.client[0] = cfg.learned.client[1] = 0.05;
	cfg.late = 100;
	if (k == PLAN) {
		o.fileset = FILESET;
		o.fileset_name = "t";
		o.fileset_len = strlen(FILESET);
	}
	pv_error_clear();
	r = pv_load(&o);
	ck_assert_msg(r == PV_OK, "%s: pv_load: %d %s", run_name(k), r, pv_errmsg());
	ck_assert_msg(c->went && c->rd.connected == USERS && !c->rd.failed,
		      "%s: %u of %d logged on: %s", run_name(k), c->rd.connected, USERS,
		      c->rd.first);
	for (unsigned i = 0; i < USERS; i++)
		fake_join(&recs[i].f); /* the engine closed its connections */
	pv_secret_free(pw);
	pv_fileset_free(plan);
	plan = NULL;
}

static void release(void)
{
	for (unsigned i = 0; i < USERS; i++) {
		fake_stop(&recs[i].f);
		pv_buf_release(&recs[i].log, 0);
		pthread_mutex_destroy(&recs[i].lock);
	}
}

/* ---- PV_ENGINE_RECORD=FILE: the expected values written again, from this engine ---- */

/* At most max lines of s (len bytes) as C string literals, each but the last followed by sep
 * (a macro's continuation). */
static void put_lines(FILE *f, const char *s, size_t len, unsigned max, const char *sep)
{
	const char *e = s + len;

	if (!len || !max)
		fprintf(f, "\t\"\"\n");
	for (unsigned n = 0; s < e && n < max; n++) {
		size_t l = strcspn(s, "\n");

		fprintf(f, "\t\"%.*s\\n\"%s\n", (int)l, s, s + l + 1 < e && n + 1 < max ? sep : "");
		s += l + 1;
	}
}

/* How many of a user's lines from go on are held: 30% of a run's (how many more scenarios its
 * second holds depends on the machine), 8 at least; 30 of the ops loops'. */
static unsigned held(int k, const struct rec *r)
{
	unsigned n = 0, keep;

	for (const char *p = r->log.data + r->at_go; *p; p++)
		n += *p == '\n';
	keep = (n * 3 + 9) / 10;
	if (k == OPS_WRITE || k == OPS_OPEN)
		return 30;
	return keep > 8 ? keep : n < 8 ? n : 8;
}

/* What run k sent, into the file as check_engine_want.h holds it: the first run starts the
 * file, PLAN's learning ends it (`make format` then lays it out). */
static void record_want(int k)
{
	FILE *f;
	char name[32];

	if (k > PLAN) /* not recorded: checked on their own */
		return;
	f = fopen(getenv("PV_ENGINE_RECORD"), k ? "a" : "w");
	ck_assert_ptr_nonnull(f);
	if (!k) {
		fprintf(f,
			"/* tests/unit/check_engine_want.h: what each run of check_engine.c sent, "
			"as recorded\n * (PV_ENGINE_RECORD=<this file>) from the engine whose "
			"scenarios were switch statements\n * (commit 26e097f): the learning of "
			"the tree, listed or from the plan, and the first of each\n * user's "
			"requests from go on. */\n\n");
		fprintf(f, "/* the learning: static/, volatile/ and new/ listed, then static/'s "
			   "folders */\n#define LEARN_LISTED \\\n");
		put_lines(f, recs[0].log.data, recs[0].at_go, UINT_MAX, " \\");
		fprintf(f, "\nstatic const struct want WANT[PLAN] = {\n");
	}
	if (k == PLAN) {
		fprintf(f, "\n/* static/ from the plan: only volatile/ and new/ listed */\n"
			   "#define LEARN_PLAN \\\n");
		put_lines(f, recs[0].log.data, recs[0].at_go, UINT_MAX, " \\");
		ck_assert_int_eq(fclose(f), 0);
		return;
	}
	{
		if (k < PV_PLAYBOOK_WORKLOAD_KINDS) {
			snprintf(name, sizeof(name), "PV_PLAYBOOK_WORKLOAD_%s",
				 pv_playbook_workload_names[k]);
			for (char *p = name; *p; p++)
				*p = (char)toupper((unsigned char)*p);
		} else {
			snprintf(name, sizeof(name), "%s",
				 k == MIXED	  ? "MIXED"
				 : k == OPS_WRITE ? "OPS_WRITE"
						  : "OPS_OPEN");
		}
		fprintf(f, "[%s] = {%s, {\n", name,
			k == PV_PLAYBOOK_WORKLOAD_UPLOAD || k == MIXED ? "LEARN_LISTED" : "NULL");
	}
	for (unsigned i = 0; i < USERS; i++) {
		fprintf(f, "/* user %u */\n", i);
		put_lines(f, recs[i].log.data + recs[i].at_go, recs[i].log.len - recs[i].at_go,
			  held(k, &recs[i]), "");
		fprintf(f, "%s", i + 1 < USERS ? ",\n" : "");
	}
	fprintf(f, "%s", k == OPS_OPEN ? "}},\n};\n" : "}},\n");
	ck_assert_int_eq(fclose(f), 0);
}

static unsigned lines_in(const char *s)
{
	unsigned n = 0;

	while ((s = strchr(s, '\n')))
		n++, s++;
	return n;
}

/* STATS: each file looked at is opened with its attributes alone asked (FILE_READ_ATTRIBUTES),
 * no lease, as it is (FILE_OPEN, neither a folder nor a file asked); its attributes asked and
 * nothing read; the folder looked at is opened to be listed, and listed. */
static void check_stats(const struct caller *c)
{
	uint64_t errors = c->sum.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].errors,
		 started = c->sum.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].started;

	ck_assert_msg(!errors && started >= 4, "stat opens: %llu of %llu in error",
		      (unsigned long long)errors, (unsigned long long)started);
	for (unsigned i = 0; i < USERS; i++) {
		const char *p = (const char *)recs[i].log.data + recs[i].at_go;
		unsigned looked = 0, listed = 0, asked = 0;

		for (int len; *p; p += len + (p[len] == '\n')) {
			const char *a = strstr(p, " a=");

			len = (int)strcspn(p, "\n");

			ck_assert_msg(strncmp(p, "READ ", 5) != 0,
				      "user %u read on a stat open: %.*s", i, len, p);
			if (!strncmp(p, "QINFO ", 6))
				asked++;
			if (!strncmp(p, "QDIR ", 5))
				listed++;
			if (strncmp(p, "CREATE ", 7) || !a || a - p > len)
				continue;
			if (!strncmp(a, " a=100081 ", 10)) /* the folder, to be listed */
				continue;
			ck_assert_msg(!strncmp(a, " a=80 s=7 d=1 o=0", 17) &&
					      !memmem(p, (size_t)len, "lease=", 6),
				      "user %u: not a stat open: %.*s", i, len, p);
			looked++;
		}
		ck_assert_msg(looked >= 1 && asked >= looked && listed >= 1,
			      "user %u: %u stat opens, %u QUERY_INFO, %u listings", i, looked,
			      asked, listed);
	}
}

/* UNLEASED: of each user's opens of a file to read or to edit (FILE_OPEN, not a folder, not a
 * stat open), three in four ask no lease, evenly: after n of them, 3n/4 without one (rounded
 * down); and the learned run's requests otherwise (its opens' leases aside) */
static void check_unleased(const struct caller *c)
{
	uint64_t errors = c->sum.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].errors;

	ck_assert_msg(!errors, "unleased: %llu scenarios in error", (unsigned long long)errors);
	for (unsigned i = 0; i < USERS; i++) {
		const char *p = (const char *)recs[i].log.data + recs[i].at_go;
		unsigned opens = 0, plain = 0;

		for (int len; *p; p += len + (p[len] == '\n')) {
			const char *a = strstr(p, " a=");
			unsigned acc, d, o;

			len = (int)strcspn(p, "\n");
			/* (a name looked for and not there, CREATE(REFUSED)'s, asks none) */
			if (strncmp(p, "CREATE ", 7) || !a || a - p > len ||
			    memmem(p, (size_t)(a - p), "/pv-absent-", 11) ||
			    sscanf(a, " a=%x s=%*x d=%u o=%x", &acc, &d, &o) != 3 || d != 1 ||
			    !(o & 0x40) ||
			    acc == 0x80) /* FILE_NON_DIRECTORY_FILE; FILE_READ_ATTRIBUTES alone */
				continue;
			opens++;
			plain += !memmem(p, (size_t)len, "lease=", 6);
			ck_assert_msg(plain == opens * 3 / 4,
				      "user %u: %u of its first %u opens to read or edit without a "
				      "lease (%u wanted): %.*s",
				      i, plain, opens, opens * 3 / 4, len, p);
		}
		ck_assert_msg(opens >= 4, "user %u: %u opens to read or edit", i, opens);
	}
}

/* The lines of each user from go on begin with those wanted; the engine counted what the
 * fakes read. */
static void check(int k, const struct caller *c)
{
	const struct want *w = &WANT[k == PLAN	   ? MIXED
				     : k == CLIENT ? PV_PLAYBOOK_WORKLOAD_LEARNED
						   : k];
	const char *learn = k == PLAN ? LEARN_PLAN : w->learn;
	uint64_t ops = 0, errors = 0, started = 0;
	char msg[2600];

	for (int j = 0; j < PV_PLAYBOOK_WORKLOAD_KINDS; j++) {
		for (int op = 0; op < PV_LOAD_OPS; op++)
			ops += c->sum.kind[j].ops[op];
		errors += c->sum.kind[j].errors;
		started += c->sum.kind[j].started;
	}
	ck_assert_msg(!errors, "%s: %llu scenarios in error", run_name(k),
		      (unsigned long long)errors);
	if (k == CLIENT) { /* every activity waited after each of its (3 or more) answers */
		const struct pv_load_hist *h = &c->sum.kind[PV_PLAYBOOK_WORKLOAD_LEARNED].lat;
		double lo, hi;

		ck_assert_uint_gt(pv_load_hist_count(h), 0);
		pv_load_hist_bounds(h, 0, &lo, &hi);
		ck_assert_msg(hi >= 0.15,
			      "%s: an activity done in under %.3f s, its 3 waits 0.15 s",
			      run_name(k), hi);
	}
	if (k != OPS_WRITE && k != OPS_OPEN) {
		ck_assert_msg(started >= 4, "%s: %llu scenarios", run_name(k),
			      (unsigned long long)started);
		ck_assert_msg(ops == recs[0].lines + recs[1].lines,
			      "%s: the engine counted %llu requests, the fakes read %u",
			      run_name(k), (unsigned long long)ops, recs[0].lines + recs[1].lines);
	}
	for (unsigned i = 0; i < USERS; i++) {
		const char *got = (const char *)recs[i].log.data;

		ck_assert_ptr_nonnull(got);
		/* a learned read is made on a static/ file that holds it (and the rest of the
		 * reads of that open), as the capture's was, or on the largest when none does:
		 * none asks past the end of a smaller one */
		if (k == PV_PLAYBOOK_WORKLOAD_LEARNED || k == CLIENT)
			ck_assert_msg(!recs[i].past_end,
				      "%s, user %u: %u reads past a file's end: %s", run_name(k), i,
				      recs[i].past_end, recs[i].first_past);
		if (learn && !i)
			ck_assert_msg(recs[i].at_go == strlen(learn) &&
					      strncmp(got, learn, recs[i].at_go) == 0,
				      "%s: the learning: %s", run_name(k),
				      differ(got, learn, msg, sizeof(msg)));
		got += recs[i].at_go;
		/* CLIENT's waits leave it fewer requests in its second: those it made are
		 * LEARNED's first ones, 8 at least */
		ck_assert_msg(strncmp(got, w->run[i],
				      k == CLIENT && strlen(got) < strlen(w->run[i])
					      ? strlen(got)
					      : strlen(w->run[i])) == 0 &&
				      (k != CLIENT || lines_in(got) >= 8),
			      "%s, user %u: %s", run_name(k), i,
			      differ(got, w->run[i], msg, sizeof(msg)));
	}
}

START_TEST(scenario)
{
	struct caller c;

	run(_i, &c);
	if (getenv("PV_ENGINE_RECORD"))
		record_want(_i);
	else if (_i == STATS)
		check_stats(&c);
	else if (_i == UNLEASED)
		check_unleased(&c);
	else
		check(_i, &c);
	release();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("engine");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, scenario, 0, RUNS);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
