/* smb/wire.c: our SMB2 client's synchronous calls (see smb.h), and the tree builder on them:
 * each call runs the connection's own engine loop (smb/async.h) until its answers come, as
 * Samba's libcli/smb wraps its asynchronous calls. The engine does every message, signature
 * and encryption; this file keeps the deadlines of a whole build and the build's logic.
 *
 * Why not libsmbclient for trees: smbd forks a process per TCP connection, and that fork (page
 * tables of a big parent, then dlopen and talloc in the child) costs it 45-85 ms of CPU on the
 * lab, which libsmbclient pays once per user because it makes a connection per logon. SMB2
 * lets one connection carry the sessions of many users one after another (MS-SMB2 3.3.5.5),
 * so a worker here keeps one connection and logs each of its users on and off over it. And
 * each file is ONE compound request (CREATE + WRITE + CLOSE, related, MS-SMB2 3.2.4.1.4),
 * with several such compounds in flight: smbd reads one frame per file and serves the write
 * synchronously (it keeps aio for writes that are not part of a compound). Encrypted, the
 * compound is one transform too: one AEAD pass per file.
 *
 * The engine checks a 3.0 or 3.0.2 negotiation (FSCTL_VALIDATE_NEGOTIATE_INFO after each
 * session's first tree connect) for this client as for the driver. Logon is NTLMv2 in SPNEGO
 * (smb/ntlm.c: with the MIC, the target name and the channel bindings). */
#include "smb/smb.h"

#include "smb/async.h"
#include "smb/internal.h"
#include "smb/smb2.h"
#include "util/err.h"
#include "util/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW	      16	      /* compounds in flight on a connection */
#define PARTS	      6		      /* requests in one: CREATE, 4 WRITEs, CLOSE */
#define WRITE_MAX     65536u	      /* bytes per WRITE (one credit) */
#define COMPOUND_DATA (4 * WRITE_MAX) /* files up to this size are one compound */
/* Deadlines, in units of the timeout T (smb.h says the rule): a final answer within ANSWER_T,
 * a tree build within T times (BUILD_T + items + MiB written). */
#define ANSWER_T 3
#define BUILD_T	 8
#define MIB	 (1u << 20)

enum kind { P_FILE, P_DIR, P_CHUNK };

struct part {
	struct pend *p;
	uint16_t cmd;
};

/* A compound (or a big file's chunk of WRITEs) in flight. */
struct pend {
	struct pv_smb2 *s;
	bool used;
	unsigned n, got;
	enum kind kind;
	size_t item;
	uint32_t status;   /* the first failure in the compound */
	uint16_t fail_cmd; /* and the command that failed */
	bool created, closed, lost;
	bool fix; /* the file was there with another size */
	uint8_t fid[16];
	struct part part[PARTS];
};

/* A file a failure left behind (created, maybe open): removed before returning. */
struct cut {
	size_t item;
	bool open;
	uint8_t fid[16];
};

/* One request waited for. */
struct call {
	struct pv_smb2 *s;
	bool done;
	int code; /* the connection's failure, or the call's own (a logon refused) */
	uint32_t status;
	uint8_t fid[16];
	char msg[768];
	/* QUERY_DIRECTORY: the entries go into this listing as they come */
	struct listing *l;
	const char *rel;
	int err; /* what taking them failed with (message recorded) */
};

struct pv_smb2 {
	struct pv_smba_loop *l;
	struct pv_smba *c;
	char *server;
	int64_t tmo;	  /* T, the timeout, in ms */
	double build_due; /* the tree build must end by then (pv_now() seconds); 0: no build */
	int64_t build_ms; /* how long that build was given */
	bool lost_by_us;  /* the build's deadline closed it */
	char desc[96];	  /* what the last session spoke on its share (pv_smb2_describe) */
	bool enc, sign;
	/* the tree being built */
	char *who; /* the user logged on (pv_smb2_logon), for messages */
	const char *user, *share, *base;
	const struct pv_smb_item *items;
	struct pv_smb_tree_result *res;
	pv_smb_tick_fn tick;
	void *tick_ctx;
	pv_smb_fill_fn fill;
	void *fill_ctx;
	int err; /* the first failure (recorded with pv_error) */
	char errmsg[1024];
	struct pend pend[WINDOW];
	unsigned npend;
	struct cut cuts[WINDOW]; /* at most one per compound in flight */
	unsigned ncuts;
	uint8_t *wbuf; /* WRITE_MAX bytes the fill callback writes into */
};

bool pv_smb2_lost(const struct pv_smb2 *c)
{
	return !c || pv_smba_lost(c->c);
}

const char *pv_smb2_describe(const struct pv_smb2 *c)
{
	if (!c || !c->c)
		return "";
	return c->desc[0] ? c->desc : pv_smba_describe(c->c);
}

bool pv_smb2_signing(const struct pv_smb2 *c)
{
	return c && c->sign;
}

bool pv_smb2_encrypting(const struct pv_smb2 *c)
{
	return c && c->enc;
}

/* A span for a message: "30 s", or "750 ms" when not whole seconds (tests use short ones). */
static const char *span(int64_t ms, char *buf, size_t len)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%lld s", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%lld ms", (long long)ms);
	return buf;
}

static const char *status_text(uint32_t st, char *buf, size_t len)
{
	const char *n = smb2_status_name(st);

	if (st == ST_DISK_FULL || st == ST_QUOTA_EXCEEDED)
		snprintf(buf, len, "No space left on device (%s)", n);
	else if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "NT status 0x%08x", st);
	return buf;
}

/* ---- waiting ---- */

/* The build's deadline passed: the connection goes (answers may still be on their way, and
 * nothing could tell them from new ones). */
static void late(struct pv_smb2 *s)
{
	char a[32], b[32];

	s->lost_by_us = true;
	pv_smba_abort(s->c, PV_EUNREACH,
		      "SMB to '%s': the tree build as %s passed its deadline of %s (the timeout %s "
		      "times %d + items + MiB written)",
		      s->server, s->user, span(s->build_ms, a, sizeof(a)),
		      span(s->tmo, b, sizeof(b)), BUILD_T);
}

/* Run the loop until done is true (a callback sets it), the build's deadline aside. */
static void run_until(struct pv_smb2 *s, const bool *done)
{
	while (!*done) {
		double t = pv_now();
		int wait = 100;

		if (s->build_due && t >= s->build_due && !pv_smba_lost(s->c)) {
			late(s);
			continue; /* the callbacks came with the failure */
		}
		if (s->build_due && (s->build_due - t) * 1000 < wait)
			wait = (int)((s->build_due - t) * 1000) + 1;
		if (pv_smba_loop_run(s->l, wait) != PV_OK) {
			pv_smba_abort(s->c, PV_EIO, "%s", pv_errmsg());
			break;
		}
	}
}

static void on_call(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct call *k = arg;

	pv_smba_yield(c); /* the next request goes after the loop returns: its answer after it */
	k->done = true;
	k->code = d->code;
	k->status = d->status;
	memcpy(k->fid, d->fid, 16);
	snprintf(k->msg, sizeof(k->msg), "%s", d->msg ? d->msg : "");
}

/* Wait for k (whose request was queued with r: PV_OK, or the failure recorded); its code. */
static int wait_for(struct pv_smb2 *s, struct call *k, int r)
{
	if (r != PV_OK)
		return r;
	run_until(s, &k->done);
	if (k->code != PV_OK)
		return pv_error(k->code, "%s", k->msg);
	return PV_OK;
}

/* ---- connection ---- */

static void on_open(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	on_call(c, arg, d);
}

/* A connection on its own loop; *out is set even on failure (pv_smb2_connect's contract).
 * fd >= 0: over that socket (the tests'), else to server's port 445. */
static int connect_to(const char *server, int fd, int64_t timeout_ms, struct pv_smb2 **out)
{
	struct pv_smb2 *s = calloc(1, sizeof(*s));
	struct pv_smba_opts o = {0};
	struct call k = {0};
	int r;

	*out = s;
	if (!s || !(s->server = strdup(server)) || !(s->wbuf = malloc(WRITE_MAX))) {
		if (fd >= 0)
			close(fd);
		return pv_error(PV_EIO, "out of memory");
	}
	s->tmo = timeout_ms > 0 ? timeout_ms : 10000;
	if ((r = pv_smba_loop_new(&s->l)) != PV_OK) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	o.host = server;
	o.server = server;
	o.timeout_ms = (int)(ANSWER_T * s->tmo);
	o.pipelined = true;
	k.s = s;
	r = fd >= 0 ? smba_open_fd(s->l, fd, &o, on_open, &k, &s->c)
		    : pv_smba_open(s->l, &o, on_open, &k, &s->c);
	return wait_for(s, &k, r);
}

int pv_smb2_connect(const char *server, int timeout, struct pv_smb2 **out)
{
	return connect_to(server, -1, (int64_t)(timeout > 0 ? timeout : 10) * 1000, out);
}

int smb2_connect_fd(int fd, const char *server, int timeout_ms, struct pv_smb2 **out)
{
	return connect_to(server, fd, timeout_ms, out);
}

void pv_smb2_free(struct pv_smb2 *s)
{
	if (!s)
		return;
	pv_smba_loop_free(s->l); /* closes c */
	free(s->server);
	free(s->who);
	free(s->wbuf);
	free(s);
}

int pv_smb2_logon(struct pv_smb2 *s, const char *workgroup, const char *user,
		  const struct pv_secret *password)
{
	struct call k = {s};
	char *who = strdup(user);

	if (!who)
		return pv_error(PV_EIO, "out of memory");
	free(s->who);
	s->who = who;
	if (pv_smba_lost(s->c))
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	return wait_for(s, &k,
			pv_smba_logon(s->c, workgroup, user, password, NULL, NULL,
				      PV_SMBA_ENCRYPT_AUTO, on_call, &k));
}

int pv_smb2_tree(struct pv_smb2 *s, const char *share)
{
	struct call k = {s};
	char st[96];
	int r;

	if ((r = wait_for(s, &k, pv_smba_tree(s->c, share, on_call, &k))) != PV_OK)
		return r;
	if (k.status == ST_OK) {
		snprintf(s->desc, sizeof(s->desc), "%s", pv_smba_describe(s->c));
		s->enc = pv_smba_encrypting(s->c);
		s->sign = pv_smba_signing(s->c);
		return PV_OK;
	}
	return pv_error(k.status == ST_BAD_NETWORK_NAME ? PV_ECONFIG
			: k.status == ST_ACCESS_DENIED	? PV_ECRED
							: PV_EREMOTE,
			"SMB tree connect to //%s/%s as %s: %s%s", s->server, share,
			s->who ? s->who : "", status_text(k.status, st, sizeof(st)),
			k.status == ST_BAD_NETWORK_NAME ? " (no such share)" : "");
}

int pv_smb2_logoff(struct pv_smb2 *s)
{
	struct call k = {s};

	return wait_for(s, &k, pv_smba_logoff(s->c, on_call, &k));
}

/* ---- failures on a path ---- */

static int path_fail(struct pv_smb2 *s, uint32_t status, const char *what, const char *rel)
{
	char st[96], path[1024];

	snprintf(path, sizeof(path), "%s%s%s", s->base, rel && *rel ? "/" : "", rel ? rel : "");
	status_text(status, st, sizeof(st));
	if (status == ST_DISK_FULL || status == ST_QUOTA_EXCEEDED)
		return pv_error(PV_EREMOTE,
				"the disk of '%s' is full: SMB %s //%s/%s/%s failed (%s)",
				s->server, what, s->server, s->share, path, st);
	return pv_error(PV_EREMOTE, "SMB %s //%s/%s/%s as %s: %s", what, s->server, s->share, path,
			s->user, st);
}

/* The share-relative name of base/rel ("" rel: base itself) into full. rel comes from the
 * fileset or from a listing, which keeps to PATH_LIMIT already. */
static int name_of(const struct pv_smb2 *s, const char *rel, char full[PATH_LIMIT + 1])
{
	size_t bl = strlen(s->base), rl = strlen(rel), len = bl + (rl ? 1 + rl : 0);

	if (len > PATH_LIMIT)
		return pv_error(PV_ECONFIG,
				"SMB //%s/%s: the path '%s/%.*s%s%s' is %zu bytes, more than %d; "
				"shorten the fileset's names",
				s->server, s->share, s->base, rl > 600 ? 300 : (int)rl, rel,
				rl > 600 ? "..." : "", rl > 600 ? rel + rl - 300 : "", len,
				PATH_LIMIT);
	snprintf(full, PATH_LIMIT + 1, "%s%s%s", s->base, rl ? "/" : "", rel); /* checked */
	return PV_OK;
}

/* Open base/rel with one CREATE and wait for its id; a refusal is reported as `what` failed. */
static int open_wait(struct pv_smb2 *s, const char *rel, uint32_t access, uint32_t disposition,
		     uint32_t options, const char *what, uint8_t fid[16])
{
	char full[PATH_LIMIT + 1];
	struct call k = {s};
	int r;

	if ((r = name_of(s, rel, full)) != PV_OK ||
	    (r = wait_for(s, &k,
			  pv_smba_create(s->c, full, access, disposition, options, on_call, &k))) !=
		    PV_OK)
		return r;
	if (k.status != ST_OK)
		return path_fail(s, k.status, what, rel);
	memcpy(fid, k.fid, 16);
	return PV_OK;
}

/* CLOSE fid and wait (its outcome does not matter: the caller is done with the file). */
static void close_wait(struct pv_smb2 *s, const uint8_t fid[16])
{
	struct call k = {s};

	if (!pv_smba_lost(s->c))
		wait_for(s, &k, pv_smba_closefile(s->c, fid, on_call, &k));
}

/* ---- listing ---- */

/* The entries of a QUERY_DIRECTORY answer, into the listing of the call that asked; a
 * malformed one loses the connection (nothing after it could be trusted either). */
static void on_listed(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct call *k = arg;
	struct pv_smb2 *s = k->s;
	struct smb2_rd r;
	struct smb2_dir_it it;
	struct smb2_dirent e;
	char where[600];
	int n;

	on_call(c, arg, d);
	if (d->code != PV_OK || d->status != ST_OK)
		return;
	snprintf(where, sizeof(where), "//%s/%s/%s", s->server, s->share, s->base);
	smb2_rd_init(&r, d->buf, d->buflen);
	smb2_dir_init(&it, &r);
	while ((n = smb2_dir_next(&it, &e)) == 1 && k->err == PV_OK)
		k->err = listing_entry(k->l, where, s->base, k->rel, e.name, e.dir, e.size);
	if (n < 0) {
		pv_smba_abort(c, PV_EREMOTE, "SMB to '%s': a malformed listing of %s%s%s: %s",
			      s->server, where, *k->rel ? "/" : "", k->rel, it.r.why);
		k->code = PV_EREMOTE;
		snprintf(k->msg, sizeof(k->msg), "%s", pv_smba_error(c));
	}
}

/* What base/rel holds, into l (paths relative to base). */
static int list_dir(void *arg, const char *rel, struct listing *l)
{
	struct pv_smb2 *s = arg;
	uint8_t fid[16] = {0};
	int r;

	if ((r = open_wait(s, rel, PV_SMBA_LIST, PV_SMBA_OPEN, PV_SMBA_DIR, "listing", fid)) !=
	    PV_OK)
		return r;
	for (bool restart = true; r == PV_OK; restart = false) {
		struct call k = {s};

		k.l = l;
		k.rel = rel;
		if ((r = wait_for(s, &k, pv_smba_list(s->c, fid, restart, on_listed, &k))) != PV_OK)
			break;
		if (k.err != PV_OK) {
			r = k.err;
			break;
		}
		if (k.status == ST_NO_MORE_FILES)
			break;
		if (k.status != ST_OK)
			r = path_fail(s, k.status, "listing", rel);
	}
	close_wait(s, fid);
	return r;
}

/* ---- the pipeline: compounds in flight ---- */

/* A whole file is on the server: count it and tell the caller (who may ask to stop). */
static void written(struct pv_smb2 *s, size_t item, bool fix)
{
	uint64_t size = s->items[item].size;

	if (fix)
		s->res->files_fixed++;
	else
		s->res->files_made++;
	s->res->bytes += size;
	if (s->tick && s->tick(s->tick_ctx, 1, size) != 0 && s->err == PV_OK)
		s->err = pv_error(PV_EFAIL, "stopped");
}

/* The first failure of the build, its words kept (what comes after must not replace them). */
static void fail(struct pv_smb2 *s, int code)
{
	if (s->err != PV_OK)
		return;
	s->err = code;
	snprintf(s->errmsg, sizeof(s->errmsg), "%s", pv_errmsg());
}

static void complete(struct pv_smb2 *s, struct pend *p)
{
	const struct pv_smb_item *it = &s->items[p->item];

	if (p->lost)
		return; /* the connection's failure was taken */
	if (p->kind == P_DIR) {
		if (p->status == ST_OK)
			s->res->dirs_made++;
		else if (p->status != ST_OBJECT_NAME_COLLISION)
			fail(s, path_fail(s, p->status, "making folder", it->path));
		return;
	}
	if (p->status != ST_OK) {
		fail(s, path_fail(s, p->status,
				  p->fail_cmd == SMB2_CREATE  ? "creating"
				  : p->fail_cmd == SMB2_WRITE ? "writing"
							      : "closing",
				  it->path));
		if (p->kind == P_FILE && p->created && s->ncuts < WINDOW) {
			struct cut *cut = &s->cuts[s->ncuts++];

			cut->item = p->item;
			cut->open = !p->closed;
			memcpy(cut->fid, p->fid, 16);
		}
		return;
	}
	if (p->kind != P_CHUNK)
		written(s, p->item, p->fix);
}

/* The answer to one message of a compound in flight. */
static void on_part(struct pv_smba *c, void *arg, const struct pv_smba_done *d)
{
	struct part *pt = arg;
	struct pend *p = pt->p;
	struct pv_smb2 *s = p->s;

	if (d->code != PV_OK) {
		if (!p->lost)
			fail(s, pv_error(d->code, "%s", d->msg));
		p->lost = true;
	} else {
		if (d->status != ST_OK && p->status == ST_OK) {
			p->status = d->status;
			p->fail_cmd = pt->cmd;
		}
		if (pt->cmd == SMB2_CREATE && d->status == ST_OK) {
			p->created = true;
			memcpy(p->fid, d->fid, 16);
		}
		if (pt->cmd == SMB2_CLOSE && d->status == ST_OK)
			p->closed = true;
	}
	if (++p->got == p->n) {
		complete(s, p);
		p->used = false;
		s->npend--;
		pv_smba_yield(c); /* a slot free: the next compound goes before more is read */
	}
}

/* A free slot for a compound of kind for item (waiting for one when all are in flight);
 * NULL when the connection is gone. */
static struct pend *slot(struct pv_smb2 *s, enum kind kind, size_t item, bool fix)
{
	while (s->npend == WINDOW && !pv_smba_lost(s->c)) {
		if (pv_smba_loop_run(s->l, 100) != PV_OK)
			break;
		if (s->build_due && pv_now() >= s->build_due && !pv_smba_lost(s->c))
			late(s);
	}
	if (s->npend == WINDOW || pv_smba_lost(s->c))
		return NULL;
	for (unsigned i = 0; i < WINDOW; i++)
		if (!s->pend[i].used) {
			struct pend *p = &s->pend[i];

			memset(p, 0, sizeof(*p));
			p->s = s;
			p->used = true;
			p->kind = kind;
			p->item = item;
			p->fix = fix;
			s->npend++;
			return p;
		}
	return NULL;
}

/* The next part of compound p, for a request of cmd (counted in p->n once queued). */
static void part(struct pend *p, uint16_t cmd, struct part **pt)
{
	*pt = &p->part[p->n];
	(*pt)->p = p;
	(*pt)->cmd = cmd;
}

/* The compound or chunk p is made: counted in flight, or its slot given back when none of
 * its requests went (r the failure). */
static int sent(struct pv_smb2 *s, struct pend *p, int r)
{
	if (r != PV_OK || p->n == 0) {
		p->used = false;
		s->npend--;
	}
	return r;
}

/* Wait until every compound in flight has its answers. */
static int drain(struct pv_smb2 *s)
{
	while (s->npend > 0 && !pv_smba_lost(s->c)) {
		if (pv_smba_loop_run(s->l, 100) != PV_OK)
			break;
		if (s->build_due && pv_now() >= s->build_due && !pv_smba_lost(s->c))
			late(s);
	}
	/* a lost connection completed everything with its failure */
	return s->npend > 0 ? PV_EUNREACH : PV_OK;
}

/* WRITEs of [from, to) of item into p, with fid (PV_SMBA_RELATED inside a compound). */
static int writes(struct pv_smb2 *s, struct pend *p, const uint8_t fid[16], uint64_t from,
		  uint64_t to, size_t item)
{
	for (uint64_t off = from; off < to;) {
		uint32_t n = to - off < WRITE_MAX ? (uint32_t)(to - off) : WRITE_MAX;
		struct part *pt;
		int r;

		part(p, SMB2_WRITE, &pt);
		s->fill(s->fill_ctx, item, off, s->wbuf, n);
		if ((r = pv_smba_write(s->c, fid, off, s->wbuf, n, on_part, pt)) != PV_OK)
			return r;
		p->n++;
		off += n;
	}
	return PV_OK;
}

/* A file (up to COMPOUND_DATA bytes) or a folder as one compound: CREATE, WRITEs, CLOSE. */
static int compound(struct pv_smb2 *s, size_t item, bool fix)
{
	const struct pv_smb_item *it = &s->items[item];
	char full[PATH_LIMIT + 1];
	struct pend *p;
	struct part *pt;
	int r, sr;

	if ((r = name_of(s, it->path, full)) != PV_OK)
		return r;
	if (!(p = slot(s, it->dir ? P_DIR : P_FILE, item, fix)))
		return PV_EUNREACH;
	pv_smba_chain(s->c);
	part(p, SMB2_CREATE, &pt);
	r = it->dir ? pv_smba_create(s->c, full, PV_SMBA_LIST, PV_SMBA_CREATE, PV_SMBA_DIR, on_part,
				     pt)
		    : pv_smba_create(s->c, full, PV_SMBA_PUT, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR,
				     on_part, pt);
	if (r == PV_OK) {
		p->n++;
		if (!it->dir)
			r = writes(s, p, PV_SMBA_RELATED, 0, it->size, item);
	}
	if (r == PV_OK) {
		part(p, SMB2_CLOSE, &pt);
		if ((r = pv_smba_closefile(s->c, PV_SMBA_RELATED, on_part, pt)) == PV_OK)
			p->n++;
	}
	sr = pv_smba_send(s->c); /* frees the compound when it cannot go, with the reason */
	if (r == PV_OK)
		r = sr;
	if (r != PV_OK)
		p->n = 0; /* none of its callbacks comes */
	return sent(s, p, r);
}

/* A file larger than one compound: CREATE, then WRITEs in flight with its id, then CLOSE. */
static int big_file(struct pv_smb2 *s, size_t item, bool fix)
{
	const struct pv_smb_item *it = &s->items[item];
	struct call k = {s};
	uint8_t fid[16];
	int r;

	if ((r = drain(s)) != PV_OK || s->err != PV_OK)
		return r != PV_OK ? r : s->err;
	if ((r = open_wait(s, it->path, PV_SMBA_PUT, PV_SMBA_OVERWRITE, PV_SMBA_NONDIR, "creating",
			   fid)) != PV_OK) {
		fail(s, r);
		return r;
	}
	for (uint64_t off = 0; off < it->size && s->err == PV_OK;) {
		uint64_t to = it->size - off < COMPOUND_DATA ? it->size : off + COMPOUND_DATA;
		struct pend *p = slot(s, P_CHUNK, item, fix);

		if (!p)
			return PV_EUNREACH;
		if ((r = sent(s, p, writes(s, p, fid, off, to, item))) != PV_OK)
			return r;
		off = to;
	}
	if ((r = drain(s)) != PV_OK)
		return r;
	if ((r = wait_for(s, &k, pv_smba_closefile(s->c, fid, on_call, &k))) != PV_OK)
		return r;
	if (k.status != ST_OK)
		fail(s, path_fail(s, k.status, "closing", it->path));
	if (s->err != PV_OK) {
		if (s->ncuts < WINDOW)
			s->cuts[s->ncuts++] = (struct cut){item, false, {0}};
		return s->err;
	}
	written(s, item, fix);
	return PV_OK;
}

/* Remove the files a failure cut short: close what is still open, delete on close. */
static void remove_cuts(struct pv_smb2 *s)
{
	for (unsigned i = 0; i < s->ncuts && !pv_smba_lost(s->c); i++) {
		char full[PATH_LIMIT + 1];
		struct call k1 = {s}, k2 = {s};

		if (s->cuts[i].open)
			close_wait(s, s->cuts[i].fid);
		if (name_of(s, s->items[s->cuts[i].item].path, full) != PV_OK)
			continue;
		pv_smba_chain(s->c);
		pv_smba_create(s->c, full, PV_SMBA_DELETE | 0x80u, PV_SMBA_OPEN,
			       PV_SMBA_NONDIR | PV_SMBA_DELCLOSE, on_call, &k1);
		pv_smba_closefile(s->c, PV_SMBA_RELATED, on_call, &k2);
		if (pv_smba_send(s->c) == PV_OK) {
			run_until(s, &k1.done);
			run_until(s, &k2.done);
		}
	}
	s->ncuts = 0;
}

/* How long a build of items may take (smb.h): T x (BUILD_T + items + MiB written), kept far
 * from overflowing (a day's worth per item would not be reached by any fileset). */
static int64_t build_budget(int64_t tmo, const struct pv_smb_item *items, size_t n)
{
	const int64_t cap = INT64_MAX / 4;
	int64_t units = BUILD_T;

	for (size_t i = 0; i < n && units < cap / tmo; i++)
		units += 1 + (int64_t)(items[i].dir ? 0 : (items[i].size + MIB - 1) / MIB);
	return units < cap / tmo ? units * tmo : cap;
}

/* The session's end: LOGOFF, its answer checked with the session's keys. A LOGOFF that
 * failed its signature or decryption (PV_EREMOTE) is a failure; a connection that was lost
 * then is not one of the build's (every file was written). */
static int logoff(struct pv_smb2 *s)
{
	int r;

	if (pv_smba_lost(s->c))
		return PV_OK;
	r = pv_smb2_logoff(s); /* also after a refused TREE_CONNECT: the session goes */
	return r == PV_EREMOTE ? r : PV_OK;
}

int pv_smb2_tree_build(struct pv_smb2 *s, const char *workgroup, const char *user,
		       const struct pv_secret *password, const char *share, const char *base,
		       const struct pv_smb_item *items, size_t n, bool fresh, pv_smb_fill_fn fill,
		       void *fill_ctx, pv_smb_tick_fn tick, void *tick_ctx,
		       struct pv_smb_tree_result *res)
{
	struct listing l = {0};
	bool logged_on = false;
	int r;

	memset(res, 0, sizeof(*res));
	if (pv_smba_lost(s->c))
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	s->build_ms = build_budget(s->tmo, items, n);
	s->build_due = pv_now() + (double)s->build_ms / 1000;
	s->user = user;
	s->share = share;
	s->base = base;
	s->items = items;
	s->res = res;
	s->tick = tick;
	s->tick_ctx = tick_ctx;
	s->fill = fill;
	s->fill_ctx = fill_ctx;
	s->err = PV_OK;
	s->errmsg[0] = 0;
	s->ncuts = 0;
	s->npend = 0;
	if ((r = pv_smb2_logon(s, workgroup, user, password)) != PV_OK)
		goto out;
	logged_on = true;
	if ((r = pv_smb2_tree(s, share)) != PV_OK ||
	    (!fresh && (r = listing_walk(&l, list_dir, s)) != PV_OK))
		goto out;
	for (size_t i = 0; i < n && r == PV_OK && s->err == PV_OK; i++) {
		const struct pv_smb_item *it = &items[i];
		enum plan p = listing_plan(&l, it, s->server, share, base);

		if (p == PLAN_MISMATCH) {
			fail(s, PV_EREMOTE);
			break;
		}
		if (p == PLAN_KEEP) {
			if (!it->dir)
				res->files_ok++;
			continue;
		}
		if (!it->dir && it->size > COMPOUND_DATA)
			r = big_file(s, i, p == PLAN_FIX);
		else
			r = compound(s, i, p == PLAN_FIX);
		if (r != PV_OK && s->err == PV_OK)
			fail(s, r);
	}
	drain(s);
	r = s->err;
	remove_cuts(s);
out:
	if (r != PV_OK && s->err == PV_OK)
		fail(s, r);
	if (logged_on) {
		int lr = logoff(s);

		if (s->err == PV_OK && lr != PV_OK)
			fail(s, lr);
	}
	s->build_due = 0;
	listing_release(&l);
	if (s->err != PV_OK) /* what the clean-up above recorded must not replace the message */
		return pv_error(s->err, "%s", s->errmsg);
	return PV_OK;
}
