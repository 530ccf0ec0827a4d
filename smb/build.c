/* smb/build.c: the tree builder of our own SMB2 client (see smb.h): what a tree on the server
 * holds (listed with compounds in flight), what to make, rewrite and remove given the items
 * (a plan), and that work as compounds in flight on the synchronous client's connection
 * (smb/sync.c). `server` builds home trees with it; `copy` mirrors a tree as robocopy /MIR
 * does, over one connection or several.
 *
 * Each file is ONE compound request (CREATE + WRITEs + [SET_INFO] + CLOSE, related, MS-SMB2
 * 3.2.4.1.4), with several such compounds in flight: smbd reads one frame per file and serves
 * the write synchronously. A folder is listed the same way: CREATE + QUERY_DIRECTORY twice +
 * CLOSE, several folders in flight; the second QUERY_DIRECTORY says the first had it all
 * (STATUS_NO_MORE_FILES), and a folder that held more than one answer's worth is listed again
 * on its own. Encrypted, a compound is one transform too: one AEAD pass per file. */
#include "smb/internal.h"

#include "smb/smb2.h"
#include "util/err.h"
#include "util/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_DEF    16	      /* compounds in flight on a connection, by default */
#define WINDOW_MAX    64	      /* ... and at most */
#define PARTS	      7		      /* requests in one: CREATE, 4 WRITEs, SET_INFO, CLOSE */
#define WRITE_MAX     65536u	      /* bytes per WRITE (one credit) */
#define COMPOUND_DATA (4 * WRITE_MAX) /* files up to this size are one compound */
#define MIB	      (1u << 20)
#define ST_NOT_FOUND  0xC0000034u /* STATUS_OBJECT_NAME_NOT_FOUND */
#define ACCESS_TIMES  0x00000100u /* FILE_WRITE_ATTRIBUTES: the file's LastWriteTime set */
#define INFO_BASIC    4		  /* FileBasicInformation (MS-FSCC 2.4.7) */

enum kind { P_FILE, P_DIR, P_CHUNK, P_LIST, P_REMOVE };

struct build;
struct pend;

struct part {
	struct pend *p;
	uint16_t cmd;
	bool second; /* P_LIST: the second QUERY_DIRECTORY */
};

/* A compound (or a big file's chunk of WRITEs) in flight. */
struct pend {
	struct build *b;
	bool used;
	unsigned n, got;
	enum kind kind;
	size_t item;	   /* the item; P_REMOVE: the listing's entry */
	uint32_t status;   /* the first failure in the compound */
	uint16_t fail_cmd; /* and the command that failed */
	bool created, closed, lost;
	bool fix;    /* the file was there with another size or time */
	double sent; /* pv_now() when it went */
	uint8_t fid[16];
	struct part part[PARTS];
	/* P_LIST: the folder, and its entries kept apart until its listing is whole */
	char *rel;
	struct listing ents;
	bool more; /* the second QUERY_DIRECTORY found more: listed again on its own */
};

/* A file a failure left behind (created, maybe open): removed before returning. */
struct cut {
	size_t item;
	bool open;
	uint8_t fid[16];
};

struct pv_smb_sync_plan {
	char *share, *base;
	const struct pv_smb_item *items;
	size_t n;
	unsigned char *act; /* per item: enum plan (PLAN_MISMATCH in a mirror: made anew) */
	struct listing l;
	struct pv_smb_build_opts o;
	struct pv_smb_sync_plan_counts k;
};

/* One call's work on a connection. */
struct build {
	struct pv_smb_sync *s;
	struct pv_smb_sync_plan *plan;
	const struct pv_smb_item *items;
	struct pv_smb_tree_result *res;
	pv_smb_tick_fn tick;
	void *tick_ctx;
	pv_smb_fill_fn fill;
	void *fill_ctx;
	unsigned window;
	int err; /* the first failure (recorded with pv_error) */
	char errmsg[1024];
	struct pend pend[WINDOW_MAX];
	unsigned npend;
	struct cut cuts[WINDOW_MAX]; /* at most one per compound in flight */
	unsigned ncuts;
	uint8_t *wbuf; /* WRITE_MAX bytes the fill callback writes into */
	/* a listing under way: folders to list again on their own */
	char **redo;
	size_t nredo, capredo;
};

/* ---- failures, deadlines ---- */

/* The first failure of the call, its words kept (what comes after must not replace them). */
static void fail(struct build *b, int code)
{
	if (b->err != PV_OK)
		return;
	b->err = code;
	snprintf(b->errmsg, sizeof(b->errmsg), "%s", pv_errmsg());
}

/* The deadline of units times T, unless a caller's (pv_smb_sync_tree_build's) is armed; whether
 * this call armed it (and so disarms it at its end). */
static bool arm(struct pv_smb_sync *s, int64_t units)
{
	const int64_t cap = INT64_MAX / 4;

	if (s->build_due)
		return false;
	s->build_ms = units < cap / s->tmo ? units * s->tmo : cap;
	s->build_due = pv_now() + (double)s->build_ms / 1000;
	return true;
}

/* Work units of items (smb.h): one per item and per MiB written, BUILD_T for the call. */
static int64_t units_of(const struct pv_smb_item *items, size_t n, const unsigned char *act)
{
	const int64_t cap = INT64_MAX / 8;
	int64_t units = BUILD_T;

	for (size_t i = 0; i < n && units < cap; i++)
		if (!act || act[i] != PLAN_KEEP)
			units += 1 + (int64_t)(items[i].dir ? 0 : (items[i].size + MIB - 1) / MIB);
	return units;
}

static void begin(struct build *b, struct pv_smb_sync *s, struct pv_smb_sync_plan *plan)
{
	memset(b, 0, sizeof(*b));
	b->s = s;
	b->plan = plan;
	b->items = plan->items;
	b->window = plan->o.window ? plan->o.window : WINDOW_DEF;
	if (b->window > WINDOW_MAX)
		b->window = WINDOW_MAX;
	s->share = plan->share;
	s->base = plan->base;
	s->user = s->who ? s->who : "";
}

static int end(struct build *b, bool armed)
{
	if (armed)
		b->s->build_due = 0;
	free(b->wbuf);
	for (size_t i = 0; i < b->nredo; i++)
		free(b->redo[i]);
	free(b->redo);
	if (b->err != PV_OK) /* what a clean-up recorded must not replace the message */
		return pv_error(b->err, "%s", b->errmsg);
	return PV_OK;
}

/* ---- the pipeline: compounds in flight ---- */

/* A whole file is on the server: count it and tell the caller (who may ask to stop). */
static void written(struct build *b, struct pend *p)
{
	uint64_t size = b->items[p->item].size;

	if (p->fix)
		b->res->files_fixed++;
	else
		b->res->files_made++;
	b->res->bytes += size;
	if (b->plan->o.on_file)
		b->plan->o.on_file(b->plan->o.ctx, p->item, pv_now() - p->sent);
	if (b->tick && b->tick(b->tick_ctx, 1, size) != 0 && b->err == PV_OK)
		b->err = pv_error(PV_EFAIL, "stopped");
}

/* A folder's listing is whole: its entries into the tree's (or, when it held more than one
 * answer's worth, the folder to list again on its own). */
static void listed(struct build *b, struct pend *p)
{
	struct listing *l = &b->plan->l;
	int r = PV_OK;

	if (p->more) {
		if (b->nredo == b->capredo) {
			size_t cap = b->capredo ? 2 * b->capredo : 16;
			char **v = realloc(b->redo, cap * sizeof(*v));

			if (!v) {
				fail(b, pv_error(PV_EIO, "out of memory"));
				return;
			}
			b->redo = v;
			b->capredo = cap;
		}
		b->redo[b->nredo++] = p->rel;
		p->rel = NULL;
		return;
	}
	if ((l->seen += p->ents.seen) > LIST_MAX)
		r = pv_error(PV_EREMOTE,
			     "SMB listing //%s/%s/%s: more than %u entries; is the server listing "
			     "the same folder again and again?",
			     b->s->server, b->s->share, b->s->base, LIST_MAX);
	for (size_t i = 0; i < p->ents.n && r == PV_OK; i++)
		r = listing_add(l, p->ents.v[i].path, p->ents.v[i].dir, p->ents.v[i].size,
				p->ents.v[i].mtime);
	if (r != PV_OK)
		fail(b, r);
}

static void complete(struct build *b, struct pend *p)
{
	const char *path = p->kind == P_LIST	 ? p->rel
			   : p->kind == P_REMOVE ? b->plan->l.v[p->item].path
						 : b->items[p->item].path;

	if (p->lost)
		return; /* the connection's failure was taken */
	if (p->kind == P_LIST) {
		if (p->status == ST_OK)
			listed(b, p);
		else
			fail(b, sync_path_fail(b->s, p->status, "listing", path));
		return;
	}
	if (p->kind == P_REMOVE) {
		bool dir = b->plan->l.v[p->item].dir;

		if (p->status == ST_OK || p->status == ST_NOT_FOUND)
			(*(dir ? &b->res->dirs_removed : &b->res->files_removed))++;
		else
			fail(b, sync_path_fail(b->s, p->status, "removing", path));
		return;
	}
	if (p->kind == P_DIR) {
		if (p->status == ST_OK)
			b->res->dirs_made++;
		else if (p->status != ST_OBJECT_NAME_COLLISION)
			fail(b, sync_path_fail(b->s, p->status, "making folder", path));
		return;
	}
	if (p->status != ST_OK) {
		fail(b, sync_path_fail(b->s, p->status,
				       p->fail_cmd == SMB2_CREATE     ? "creating"
				       : p->fail_cmd == SMB2_WRITE    ? "writing"
				       : p->fail_cmd == SMB2_SET_INFO ? "setting the time of"
								      : "closing",
				       path));
		if (p->kind == P_FILE && p->created && b->ncuts < WINDOW_MAX) {
			struct cut *cut = &b->cuts[b->ncuts++];

			cut->item = p->item;
			cut->open = !p->closed;
			memcpy(cut->fid, p->fid, 16);
		}
		return;
	}
	if (p->kind != P_CHUNK)
		written(b, p);
}

/* The entries of a listing's QUERY_DIRECTORY answer, into the folder's own listing; a
 * malformed one loses the connection (nothing after it could be trusted either). */
static void take_entries(struct build *b, struct pend *p, const struct pv_smb_done *d)
{
	struct pv_smb_sync *s = b->s;
	struct smb2_rd r;
	struct smb2_dir_it it;
	struct smb2_dirent e;
	char where[600];
	int n, err = PV_OK;

	snprintf(where, sizeof(where), "//%s/%s/%s", s->server, s->share, s->base);
	smb2_rd_init(&r, d->buf, d->buflen);
	smb2_dir_init(&it, &r);
	while ((n = smb2_dir_next(&it, &e)) == 1 && err == PV_OK)
		err = listing_entry(&p->ents, where, s->base, p->rel, e.name, e.dir, e.size,
				    e.mtime);
	if (n < 0) {
		pv_smb_abort(s->c, PV_EREMOTE, "SMB to '%s': a malformed listing of %s%s%s: %s",
			     s->server, where, *p->rel ? "/" : "", p->rel, it.r.why);
		return;
	}
	if (err != PV_OK) {
		fail(b, err);
		p->lost = true; /* not merged: the failure is the call's */
	}
}

/* The answer to one message of a compound in flight. */
static void on_part(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct part *pt = arg;
	struct pend *p = pt->p;
	struct build *b = p->b;

	if (d->code != PV_OK) {
		if (!p->lost)
			fail(b, pv_error(d->code, "%s", d->msg));
		p->lost = true;
	} else if (pt->cmd == SMB2_QUERY_DIRECTORY &&
		   (d->status == ST_OK || d->status == ST_NO_MORE_FILES)) {
		if (d->status == ST_OK) {
			take_entries(b, p, d);
			p->more = p->more || pt->second;
		}
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
		complete(b, p);
		free(p->rel);
		p->rel = NULL;
		listing_release(&p->ents);
		p->used = false;
		b->npend--;
		pv_smb_yield(c); /* a slot free: the next compound goes before more is read */
	}
}

/* A free slot for a compound of kind for item (waiting for one when all are in flight);
 * NULL when the connection is gone. */
static struct pend *slot(struct build *b, enum kind kind, size_t item, bool fix)
{
	struct pv_smb_sync *s = b->s;

	while (b->npend >= b->window && !pv_smb_lost(s->c))
		if (!sync_turn(s))
			break;
	if (b->npend >= b->window || pv_smb_lost(s->c))
		return NULL;
	for (unsigned i = 0; i < WINDOW_MAX; i++)
		if (!b->pend[i].used) {
			struct pend *p = &b->pend[i];

			memset(p, 0, sizeof(*p));
			p->b = b;
			p->used = true;
			p->kind = kind;
			p->item = item;
			p->fix = fix;
			p->sent = pv_now();
			b->npend++;
			return p;
		}
	return NULL;
}

/* The next part of compound p, for a request of cmd (counted in p->n once queued). */
static struct part *part(struct pend *p, uint16_t cmd)
{
	struct part *pt = &p->part[p->n];

	pt->p = p;
	pt->cmd = cmd;
	pt->second = false;
	return pt;
}

/* The compound or chunk p is made: counted in flight, or its slot given back when none of
 * its requests went (r the failure). */
static int sent(struct build *b, struct pend *p, int r)
{
	if (r != PV_OK || p->n == 0) {
		free(p->rel);
		p->rel = NULL;
		p->used = false;
		b->npend--;
	}
	return r;
}

/* A compound made since pv_smb_chain: sent (or freed when it cannot go, with the reason). */
static int send_chain(struct build *b, struct pend *p, int r)
{
	int sr = pv_smb_send(b->s->c);

	if (r == PV_OK)
		r = sr;
	if (r != PV_OK)
		p->n = 0; /* none of its callbacks comes */
	return sent(b, p, r);
}

/* Wait until every compound in flight has its answers. */
static int drain(struct build *b)
{
	while (b->npend > 0 && !pv_smb_lost(b->s->c))
		if (!sync_turn(b->s))
			break;
	/* a lost connection completed everything with its failure */
	return b->npend > 0 ? PV_EUNREACH : PV_OK;
}

/* WRITEs of [from, to) of item into p, with fid (PV_SMB_RELATED inside a compound). */
static int writes(struct build *b, struct pend *p, const uint8_t fid[16], uint64_t from,
		  uint64_t to, size_t item)
{
	for (uint64_t off = from; off < to;) {
		uint32_t n = to - off < WRITE_MAX ? (uint32_t)(to - off) : WRITE_MAX;
		int r;

		b->fill(b->fill_ctx, item, off, b->wbuf, n);
		if ((r = pv_smb_write(b->s->c, fid, off, b->wbuf, n, on_part,
				      part(p, SMB2_WRITE))) != PV_OK)
			return r;
		p->n++;
		off += n;
	}
	return PV_OK;
}

/* The item's LastWriteTime (FileBasicInformation: the other times and the attributes 0, left
 * as they are, MS-FSCC 2.4.7), when it has one. */
static int set_time(struct build *b, struct pend *p, const uint8_t fid[16], size_t item)
{
	uint8_t basic[40] = {0};
	int r;

	if (!b->items[item].mtime)
		return PV_OK;
	smb2_put64(basic + 16, b->items[item].mtime);
	if ((r = pv_smb_setinfo(b->s->c, fid, INFO_BASIC, basic, sizeof(basic), on_part,
				part(p, SMB2_SET_INFO))) == PV_OK)
		p->n++;
	return r;
}

static uint32_t file_access(const struct pv_smb_item *it)
{
	return PV_SMB_PUT | (it->mtime ? ACCESS_TIMES : 0);
}

/* A file (up to COMPOUND_DATA bytes) or a folder as one compound: CREATE, WRITEs, CLOSE. */
static int compound(struct build *b, size_t item, bool fix)
{
	const struct pv_smb_item *it = &b->items[item];
	struct pv_smb_conn *c = b->s->c;
	char full[PATH_LIMIT + 1];
	struct pend *p;
	int r;

	if ((r = sync_name(b->s, it->path, full)) != PV_OK)
		return r;
	if (!(p = slot(b, it->dir ? P_DIR : P_FILE, item, fix)))
		return PV_EUNREACH;
	pv_smb_chain(c);
	r = it->dir ? pv_smb_create(c, full, PV_SMB_LIST, PV_SMB_CREATE, PV_SMB_DIR, on_part,
				    part(p, SMB2_CREATE))
		    : pv_smb_create(c, full, file_access(it), PV_SMB_OVERWRITE, PV_SMB_NONDIR,
				    on_part, part(p, SMB2_CREATE));
	if (r == PV_OK) {
		p->n++;
		if (!it->dir && (r = writes(b, p, PV_SMB_RELATED, 0, it->size, item)) == PV_OK)
			r = set_time(b, p, PV_SMB_RELATED, item);
	}
	if (r == PV_OK &&
	    (r = pv_smb_closefile(c, PV_SMB_RELATED, on_part, part(p, SMB2_CLOSE))) == PV_OK)
		p->n++;
	return send_chain(b, p, r);
}

/* A file larger than one compound: CREATE, then WRITEs in flight with its id, then the time
 * and CLOSE. */
static int big_file(struct build *b, size_t item, bool fix)
{
	const struct pv_smb_item *it = &b->items[item];
	struct pv_smb_sync *s = b->s;
	struct sync_call k = {s};
	struct pend *p;
	uint8_t fid[16];
	double t0 = pv_now();
	int r;

	if ((r = drain(b)) != PV_OK || b->err != PV_OK)
		return r != PV_OK ? r : b->err;
	if ((r = sync_open(s, it->path, file_access(it), PV_SMB_OVERWRITE, PV_SMB_NONDIR,
			   "creating", fid)) != PV_OK) {
		fail(b, r);
		return r;
	}
	for (uint64_t off = 0; off < it->size && b->err == PV_OK;) {
		uint64_t to = it->size - off < COMPOUND_DATA ? it->size : off + COMPOUND_DATA;

		if (!(p = slot(b, P_CHUNK, item, fix)))
			return PV_EUNREACH;
		if ((r = sent(b, p, writes(b, p, fid, off, to, item))) != PV_OK)
			return r;
		off = to;
	}
	if (b->err == PV_OK && it->mtime) {
		if (!(p = slot(b, P_CHUNK, item, fix)))
			return PV_EUNREACH;
		if ((r = sent(b, p, set_time(b, p, fid, item))) != PV_OK)
			return r;
	}
	if ((r = drain(b)) != PV_OK)
		return r;
	if ((r = sync_wait(s, &k, pv_smb_closefile(s->c, fid, sync_on_call, &k))) != PV_OK)
		return r;
	if (k.status != ST_OK)
		fail(b, sync_path_fail(s, k.status, "closing", it->path));
	if (b->err != PV_OK) {
		if (b->ncuts < WINDOW_MAX)
			b->cuts[b->ncuts++] = (struct cut){item, false, {0}};
		return b->err;
	}
	written(b, &(struct pend){.b = b, .item = item, .fix = fix, .sent = t0});
	return PV_OK;
}

/* Remove base/path: CREATE for DELETE with delete-on-close, CLOSE; as one compound in flight
 * (cb's pend) or, for the clean-up of a failure, waited for (p NULL). */
static int remove_one(struct build *b, struct pend *p, const char *path, bool dir)
{
	struct pv_smb_conn *c = b->s->c;
	char full[PATH_LIMIT + 1];
	struct sync_call k1 = {b->s}, k2 = {b->s};
	int r;

	if ((r = sync_name(b->s, path, full)) != PV_OK)
		return p ? sent(b, p, r) : r;
	pv_smb_chain(c);
	r = pv_smb_create(c, full, PV_SMB_DELETE | 0x80u, PV_SMB_OPEN,
			  (dir ? PV_SMB_DIR : PV_SMB_NONDIR) | PV_SMB_DELCLOSE,
			  p ? on_part : sync_on_call, p ? (void *)part(p, SMB2_CREATE) : &k1);
	if (r == PV_OK && p)
		p->n++;
	if (r == PV_OK &&
	    (r = pv_smb_closefile(c, PV_SMB_RELATED, p ? on_part : sync_on_call,
				  p ? (void *)part(p, SMB2_CLOSE) : &k2)) == PV_OK &&
	    p)
		p->n++;
	if (p)
		return send_chain(b, p, r);
	if (r == PV_OK && (r = pv_smb_send(c)) == PV_OK) {
		sync_run_until(b->s, &k1.done);
		sync_run_until(b->s, &k2.done);
	}
	return r;
}

/* Remove the files a failure cut short: close what is still open, delete on close. */
static void remove_cuts(struct build *b)
{
	for (unsigned i = 0; i < b->ncuts && !pv_smb_lost(b->s->c); i++) {
		if (b->cuts[i].open)
			sync_close(b->s, b->cuts[i].fid);
		remove_one(b, NULL, b->items[b->cuts[i].item].path, false);
	}
	b->ncuts = 0;
}

/* ---- listing ---- */

/* Folder rel listed as one compound in flight. */
static int list_compound(struct build *b, const char *rel)
{
	struct pv_smb_conn *c = b->s->c;
	char full[PATH_LIMIT + 1];
	struct pend *p;
	struct part *pt;
	int r;

	if ((r = sync_name(b->s, rel, full)) != PV_OK)
		return r;
	if (!(p = slot(b, P_LIST, 0, false)))
		return PV_EUNREACH;
	if (!(p->rel = strdup(rel)))
		return sent(b, p, pv_error(PV_EIO, "out of memory"));
	pv_smb_chain(c);
	r = pv_smb_create(c, full, PV_SMB_LIST, PV_SMB_OPEN, PV_SMB_DIR, on_part,
			  part(p, SMB2_CREATE));
	for (int i = 0; i < 2 && r == PV_OK; i++) {
		p->n++;
		pt = part(p, SMB2_QUERY_DIRECTORY);
		pt->second = i == 1;
		r = pv_smb_list(c, PV_SMB_RELATED, i == 0, on_part, pt);
	}
	if (r == PV_OK) {
		p->n++;
		if ((r = pv_smb_closefile(c, PV_SMB_RELATED, on_part, part(p, SMB2_CLOSE))) ==
		    PV_OK)
			p->n++;
	}
	return send_chain(b, p, r);
}

/* The entries of a QUERY_DIRECTORY answer waited for, into the tree's listing. */
static void on_listed(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct sync_call *k = arg;
	struct pv_smb_sync *s = k->s;
	struct smb2_rd r;
	struct smb2_dir_it it;
	struct smb2_dirent e;
	char where[600];
	int n;

	sync_on_call(c, arg, d);
	if (d->code != PV_OK || d->status != ST_OK)
		return;
	snprintf(where, sizeof(where), "//%s/%s/%s", s->server, s->share, s->base);
	smb2_rd_init(&r, d->buf, d->buflen);
	smb2_dir_init(&it, &r);
	while ((n = smb2_dir_next(&it, &e)) == 1 && k->err == PV_OK)
		k->err =
			listing_entry(k->l, where, s->base, k->rel, e.name, e.dir, e.size, e.mtime);
	if (n < 0) {
		pv_smb_abort(c, PV_EREMOTE, "SMB to '%s': a malformed listing of %s%s%s: %s",
			     s->server, where, *k->rel ? "/" : "", k->rel, it.r.why);
		k->code = PV_EREMOTE;
		snprintf(k->msg, sizeof(k->msg), "%s", pv_smb_error(c));
	}
}

/* Folder rel listed on its own (a folder larger than one answer): request after request. */
static int list_alone(struct build *b, const char *rel)
{
	struct pv_smb_sync *s = b->s;
	uint8_t fid[16] = {0};
	int r;

	if ((r = sync_open(s, rel, PV_SMB_LIST, PV_SMB_OPEN, PV_SMB_DIR, "listing", fid)) != PV_OK)
		return r;
	for (bool restart = true; r == PV_OK; restart = false) {
		struct sync_call k = {s};

		k.l = &b->plan->l;
		k.rel = rel;
		if ((r = sync_wait(s, &k, pv_smb_list(s->c, fid, restart, on_listed, &k))) != PV_OK)
			break;
		if (k.err != PV_OK) {
			r = k.err;
			break;
		}
		if (k.status == ST_NO_MORE_FILES)
			break;
		if (k.status != ST_OK)
			r = sync_path_fail(s, k.status, "listing", rel);
	}
	sync_close(s, fid);
	return r;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct found *)a)->path, ((const struct found *)b)->path);
}

/* Everything below base into the plan's listing, sorted: the base, then every folder found,
 * breadth first, window folders in flight. */
static int list_tree(struct build *b)
{
	struct listing *l = &b->plan->l;
	size_t next = 0; /* the next entry of l to look at for a folder to list */
	bool base = false;
	int r = PV_OK;

	while (r == PV_OK && b->err == PV_OK) {
		while (next < l->n && !l->v[next].dir)
			next++;
		if (!base || next < l->n) {
			char *rel = base ? strdup(l->v[next].path) : NULL;

			if (base && !rel)
				return pv_error(PV_EIO, "out of memory");
			r = list_compound(b, base ? rel : "");
			free(rel);
			next += base;
			base = true;
			continue;
		}
		if (b->npend == 0 && b->nredo == 0)
			break;
		if (b->npend > 0) {
			if (!sync_turn(b->s))
				break;
			continue;
		}
		/* folders larger than one answer, one after the other */
		while (b->nredo > 0 && r == PV_OK) {
			char *rel = b->redo[--b->nredo];

			r = list_alone(b, rel);
			free(rel);
		}
	}
	if (r != PV_OK)
		fail(b, r);
	drain(b);
	if (b->err == PV_OK && pv_smb_lost(b->s->c))
		fail(b, pv_error(PV_EUNREACH, "%s", pv_smb_error(b->s->c)));
	if (b->err == PV_OK && l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_path);
	return b->err;
}

/* ---- the plan ---- */

void pv_smb_sync_plan_free(struct pv_smb_sync_plan *p)
{
	if (!p)
		return;
	listing_release(&p->l);
	free(p->act);
	free(p->share);
	free(p->base);
	free(p);
}

const struct pv_smb_sync_plan_counts *pv_smb_sync_plan_counts(const struct pv_smb_sync_plan *p)
{
	return &p->k;
}

int pv_smb_sync_plan(struct pv_smb_sync *s, const char *share, const char *base,
		     const struct pv_smb_item *items, size_t n, bool fresh,
		     const struct pv_smb_build_opts *o, struct pv_smb_sync_plan **out)
{
	struct pv_smb_sync_plan *p = calloc(1, sizeof(*p));
	struct pv_smb_tree_result unused;
	struct build b;
	bool armed;
	double t0 = pv_now();
	int r = PV_OK;

	*out = NULL;
	if (!p || !(p->share = strdup(share)) || !(p->base = strdup(base)) ||
	    !(p->act = calloc(n ? n : 1, 1))) {
		pv_smb_sync_plan_free(p);
		return pv_error(PV_EIO, "out of memory");
	}
	p->items = items;
	p->n = n;
	if (o)
		p->o = *o;
	if (pv_smb_lost(s->c)) {
		pv_smb_sync_plan_free(p);
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	}
	begin(&b, s, p);
	b.res = &unused;
	armed = arm(s, BUILD_T + (int64_t)n);
	if (!fresh && (r = list_tree(&b)) != PV_OK) {
		end(&b, armed);
		pv_smb_sync_plan_free(p);
		return r;
	}
	for (size_t i = 0; i < n && b.err == PV_OK; i++) {
		const struct pv_smb_item *it = &items[i];
		enum plan a = fresh ? PLAN_MAKE
				    : listing_plan(&p->l, it, p->o.fft, s->server, share, base);

		if (a == PLAN_MISMATCH && !p->o.mirror)
			fail(&b, PV_EREMOTE);
		p->act[i] = (unsigned char)a;
		if (a == PLAN_KEEP) {
			p->k.files_ok += !it->dir;
			continue;
		}
		if (it->dir) {
			p->k.dirs_to_make++;
		} else {
			p->k.files_to_write++;
			p->k.bytes_to_write += it->size;
		}
	}
	/* what is there and is no item, and a mismatch's entry in a mirror: extras (a mirror
	 * removes them before it makes anything) */
	for (size_t i = 0; i < n && p->o.mirror; i++)
		if (p->act[i] == PLAN_MISMATCH)
			listing_lookup(&p->l, items[i].path)->used = false;
	for (size_t i = 0; i < p->l.n; i++)
		p->k.extras += !p->l.v[i].used;
	p->k.list_seconds = fresh ? 0 : pv_now() - t0;
	p->k.listed = p->l.n;
	if ((r = end(&b, armed)) != PV_OK) {
		pv_smb_sync_plan_free(p);
		return r;
	}
	*out = p;
	return PV_OK;
}

static int depth(const char *path)
{
	int d = 0;

	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* The extras removed (a mirror): files first, then folders from the deepest up, a level's
 * all in flight before the next. */
static int prune(struct build *b)
{
	struct listing *l = &b->plan->l;
	int deepest = -1, r;

	for (size_t i = 0; i < l->n && b->err == PV_OK; i++)
		if (!l->v[i].used) {
			if (!l->v[i].dir) {
				struct pend *p = slot(b, P_REMOVE, i, false);

				if (!p)
					return PV_EUNREACH;
				if ((r = remove_one(b, p, l->v[i].path, false)) != PV_OK)
					fail(b, r);
			} else if (depth(l->v[i].path) > deepest) {
				deepest = depth(l->v[i].path);
			}
		}
	for (int d = deepest; d >= 0 && b->err == PV_OK; d--) {
		if (drain(b) != PV_OK)
			return PV_EUNREACH;
		for (size_t i = 0; i < l->n && b->err == PV_OK; i++)
			if (!l->v[i].used && l->v[i].dir && depth(l->v[i].path) == d) {
				struct pend *p = slot(b, P_REMOVE, i, false);

				if (!p)
					return PV_EUNREACH;
				if ((r = remove_one(b, p, l->v[i].path, true)) != PV_OK)
					fail(b, r);
			}
	}
	return drain(b);
}

int pv_smb_sync_plan_prune(struct pv_smb_sync *s, struct pv_smb_sync_plan *plan,
			   struct pv_smb_tree_result *res)
{
	struct build b;
	bool armed;
	int r = PV_OK;

	if (pv_smb_lost(s->c))
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	begin(&b, s, plan);
	b.res = res;
	armed = arm(s, BUILD_T + (int64_t)(plan->k.extras + plan->k.dirs_to_make));
	if (plan->o.mirror && plan->k.extras)
		r = prune(&b);
	for (size_t i = 0; i < plan->n && r == PV_OK && b.err == PV_OK; i++)
		if (plan->items[i].dir && plan->act[i] != PLAN_KEEP)
			r = compound(&b, i, false);
	if (r != PV_OK)
		fail(&b, r);
	drain(&b);
	return end(&b, armed);
}

int pv_smb_sync_plan_put(struct pv_smb_sync *s, struct pv_smb_sync_plan *plan, unsigned part_no,
			 unsigned parts, pv_smb_fill_fn fill, void *fill_ctx, pv_smb_tick_fn tick,
			 void *tick_ctx, struct pv_smb_tree_result *res)
{
	struct build b;
	size_t j = 0;
	bool armed;
	int r = PV_OK;

	if (pv_smb_lost(s->c))
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	begin(&b, s, plan);
	b.res = res;
	b.fill = fill;
	b.fill_ctx = fill_ctx;
	b.tick = tick;
	b.tick_ctx = tick_ctx;
	if (!(b.wbuf = malloc(WRITE_MAX)))
		return pv_error(PV_EIO, "out of memory");
	armed = arm(s, units_of(plan->items, plan->n, plan->act) / (parts ? parts : 1) + BUILD_T);
	for (size_t i = 0; i < plan->n && r == PV_OK && b.err == PV_OK; i++) {
		const struct pv_smb_item *it = &plan->items[i];

		if (it->dir || plan->act[i] == PLAN_KEEP || j++ % (parts ? parts : 1) != part_no)
			continue;
		if (it->size > COMPOUND_DATA)
			r = big_file(&b, i, plan->act[i] == PLAN_FIX);
		else
			r = compound(&b, i, plan->act[i] == PLAN_FIX);
		if (r != PV_OK)
			fail(&b, r);
	}
	drain(&b);
	remove_cuts(&b);
	return end(&b, armed);
}

int pv_smb_sync_mkdirs(struct pv_smb_sync *s, const char *share, const char *path)
{
	char part[PATH_LIMIT + 1], st[32];
	size_t len = strlen(path);
	int r;

	if (len > PATH_LIMIT)
		return pv_error(PV_ECONFIG,
				"SMB //%s/%s: the folder '%.300s...' is %zu bytes, more "
				"than %d",
				s->server, share, path, len, PATH_LIMIT);
	for (size_t i = 1; i <= len; i++) {
		struct sync_call k = {s};

		if (path[i] != '/' && path[i] != '\0')
			continue;
		memcpy(part, path, i);
		part[i] = '\0';
		if ((r = sync_wait(s, &k,
				   pv_smb_create(s->c, part, PV_SMB_LIST, 3 /* FILE_OPEN_IF */,
						 PV_SMB_DIR, sync_on_call, &k))) != PV_OK)
			return r;
		if (k.status != ST_OK) {
			snprintf(st, sizeof(st), "NT status 0x%08x", k.status);
			return pv_error(PV_EREMOTE, "SMB making folder //%s/%s/%s as %s: %s",
					s->server, share, part, s->who ? s->who : "",
					smb2_status_name(k.status) ? smb2_status_name(k.status)
								   : st);
		}
		sync_close(s, k.fid);
	}
	return PV_OK;
}

/* ---- a whole build ---- */

/* The session's end: LOGOFF, its answer checked with the session's keys. A LOGOFF that
 * failed its signature or decryption (PV_EREMOTE) is a failure; a connection that was lost
 * then is not one of the build's (every file was written). */
static int logoff(struct pv_smb_sync *s)
{
	int r;

	if (pv_smb_lost(s->c))
		return PV_OK;
	r = pv_smb_sync_logoff(s); /* also after a refused TREE_CONNECT: the session goes */
	return r == PV_EREMOTE ? r : PV_OK;
}

int pv_smb_sync_tree_build(struct pv_smb_sync *s, const char *workgroup, const char *user,
			   const struct pv_secret *password, const char *share, const char *base,
			   const struct pv_smb_item *items, size_t n, bool fresh,
			   const struct pv_smb_build_opts *o, pv_smb_fill_fn fill, void *fill_ctx,
			   pv_smb_tick_fn tick, void *tick_ctx, struct pv_smb_tree_result *res)
{
	struct pv_smb_sync_plan *plan = NULL;
	bool logged_on = false;
	int r, lr;
	char msg[1024] = "";

	memset(res, 0, sizeof(*res));
	if (pv_smb_lost(s->c))
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	s->user = user;
	s->share = share;
	s->base = base;
	arm(s, units_of(items, n, NULL));
	if ((r = pv_smb_sync_logon(s, workgroup, user, password)) == PV_OK) {
		logged_on = true;
		if ((r = pv_smb_sync_tree(s, share)) == PV_OK &&
		    (r = pv_smb_sync_plan(s, share, base, items, n, fresh, o, &plan)) == PV_OK) {
			res->files_ok = plan->k.files_ok;
			if ((r = pv_smb_sync_plan_prune(s, plan, res)) == PV_OK)
				r = pv_smb_sync_plan_put(s, plan, 0, 1, fill, fill_ctx, tick,
							 tick_ctx, res);
		}
	}
	if (r != PV_OK)
		snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	if (logged_on && (lr = logoff(s)) != PV_OK && r == PV_OK) {
		r = lr;
		snprintf(msg, sizeof(msg), "%s", pv_errmsg());
	}
	s->build_due = 0;
	pv_smb_sync_plan_free(plan);
	if (r != PV_OK) /* what the clean-up above recorded must not replace the message */
		return pv_error(r, "%s", msg);
	return PV_OK;
}
