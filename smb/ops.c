/* smb/ops.c: the SMB2 engine's requests (see async.h): CREATE, CLOSE, READ, WRITE, the
 * listing, QUERY_INFO, SET_INFO, leases, FLUSH, LOCK, IOCTL, CHANGE_NOTIFY, each encoded by
 * smb/smb2.c and queued by frame.c; their answers decoded for the callbacks; the entries of a
 * listing. */
#include "smb/async.h"

#include "smb/engine.h"
#include "smb/smb2.h"
#include "util/err.h"

#include <stdio.h>
#include <string.h>

#define IO_MAX	   65536u
#define LIST_BYTES 65536u /* a QUERY_DIRECTORY answer's buffer, at most */

const uint8_t PV_SMB_RELATED[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ---- answers ---- */

/* The answer of a user's request (a success's body, or a failure's error response) decoded
 * into d. -1 (m->why) when malformed. */
int smba_decode(uint16_t cmd, uint32_t status, struct smb2_rd *m, struct pv_smb_done *d)
{
	struct smb2_rd buf = {0};
	int r = 0;

	/* a failure's body is an error response; a success's is the command's (and a
	 * BUFFER_OVERFLOW's, which QUERY_INFO and IOCTL answer with part of their output) */
	if (status != ST_OK &&
	    !(status == ST_BUFFER_OVERFLOW && (cmd == SMB2_QUERY_INFO || cmd == SMB2_IOCTL)))
		return 0;
	switch (cmd) {
	case SMB2_CREATE: {
		struct smb2_create_rsp a;

		if ((r = smb2_create_dec(m, &a)) == 0) {
			struct smb2_rd dh;
			int f = smb2_create_ctx_find(&a.ctx, "DH2Q", &dh);

			memcpy(d->fid, a.fid, 16);
			d->size = a.eof;
			d->durable = f == 1;
			if (f < 0) {
				snprintf(m->why, sizeof(m->why), "%s", a.ctx.why);
				r = -1;
			}
		}
		break;
	}
	case SMB2_CLOSE:
		r = smb2_close_dec(m, &d->size);
		break;
	case SMB2_READ:
		r = smb2_read_dec(m, &buf);
		break;
	case SMB2_WRITE: {
		uint32_t n = 0;

		r = smb2_write_dec(m, &n);
		d->size = n;
		break;
	}
	case SMB2_QUERY_DIRECTORY:
		r = smb2_query_dir_dec(m, &buf);
		break;
	case SMB2_QUERY_INFO:
		r = smb2_query_info_dec(m, &buf);
		break;
	case SMB2_CHANGE_NOTIFY:
		r = smb2_notify_dec(m, &buf);
		break;
	case SMB2_IOCTL: {
		struct smb2_ioctl_rsp a;

		if ((r = smb2_ioctl_dec(m, &a)) == 0)
			buf = a.out;
		break;
	}
	default:
		r = smb2_empty_dec(m, cmd);
		break;
	}
	d->buf = buf.p ? buf.p : m->p + m->len; /* a pointer one may do arithmetic on */
	d->buflen = buf.len;
	return r;
}

/* ---- requests ---- */

/* A request of the caller's: the connection must be open with a session and a tree. */
int smba_ready_for(struct pv_smb_conn *c, uint16_t cmd, pv_smb_cb cb, void *arg, struct req **q)
{
	*q = NULL;
	if (c->st == CS_DEAD)
		return pv_error(c->code ? c->code : PV_EUNREACH, "%s",
				c->err[0] ? c->err : "SMB: the connection is not open");
	if (c->st != CS_OPEN || c->opening || !c->keyed || !c->tid || c->lg.active || c->validating)
		return pv_error(PV_EUNREACH, "SMB: the connection is not open");
	if (!(*q = smba_req_new(cb, arg, cmd, K_USER)))
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

/* The end of a request function inside a compound: a refused request breaks it. */
static int chained(struct pv_smb_conn *c, int r)
{
	if (r != PV_OK && c->chaining && c->chain_err == PV_OK)
		c->chain_err = r;
	return r;
}

/* A CREATE of cr, named by its path in what goes wrong. */
static int send_create(struct pv_smb_conn *c, const struct smb2_create_req *cr, pv_smb_cb cb,
		       void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_CREATE, cb, arg, &q);

	if (r == PV_OK) {
		char what[600];

		snprintf(what, sizeof(what), "the path '%.500s'", cr->path);
		r = smba_send_req(c, q, smb2_create_enc(&q->body, cr), what);
	}
	return chained(c, r);
}

int pv_smb_create(struct pv_smb_conn *c, const char *path, uint32_t access, uint32_t disposition,
		  uint32_t options, pv_smb_cb cb, void *arg)
{
	struct smb2_create_req cr = {
		path, access, 0, 7 /* share read, write, delete */, disposition, options,
		0,    NULL,   0};

	return send_create(c, &cr, cb, arg);
}

int pv_smb_closefile(struct pv_smb_conn *c, const uint8_t fid[16], pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_CLOSE, cb, arg, &q);

	if (r == PV_OK)
		r = smba_send_req(c, q, smb2_close_enc(&q->body, fid, 0), "CLOSE");
	return chained(c, r);
}

int pv_smb_read(struct pv_smb_conn *c, const uint8_t fid[16], uint64_t off, uint32_t len,
		pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r;

	if (pv_smb_max_read(c) && len > pv_smb_max_read(c)) /* 0: not open (ready_for says) */
		return chained(c, pv_error(PV_EBUG, "SMB: a READ of %u bytes (at most %u)", len,
					   pv_smb_max_read(c)));
	if ((r = smba_ready_for(c, SMB2_READ, cb, arg, &q)) == PV_OK) {
		q->charge = (uint16_t)((len + IO_MAX - 1) / IO_MAX); /* 64 KiB a credit */
		r = smba_send_req(c, q, smb2_read_enc(&q->body, fid, off, len), "READ");
	}
	return chained(c, r);
}

int pv_smb_write(struct pv_smb_conn *c, const uint8_t fid[16], uint64_t off, const void *data,
		 uint32_t len, pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r;

	if (len > IO_MAX)
		return chained(
			c, pv_error(PV_EBUG, "SMB: a WRITE of %u bytes (at most %u)", len, IO_MAX));
	if ((r = smba_ready_for(c, SMB2_WRITE, cb, arg, &q)) == PV_OK)
		r = smba_send_req(c, q, smb2_write_enc(&q->body, fid, off, data, len), "WRITE");
	return chained(c, r);
}

int pv_smb_list_match(struct pv_smb_conn *c, const uint8_t fid[16], bool restart,
		      const char *pattern, pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_QUERY_DIRECTORY, cb, arg, &q);

	/* FileDirectoryInformation, SMB2_RESTART_SCANS for the first */
	if (r == PV_OK)
		r = smba_send_req(c, q,
				  smb2_query_dir_enc(&q->body, fid, 1, restart ? 1 : 0,
						     pattern ? pattern : "*", LIST_BYTES),
				  "QUERY_DIRECTORY");
	return chained(c, r);
}

int pv_smb_list(struct pv_smb_conn *c, const uint8_t fid[16], bool restart, pv_smb_cb cb, void *arg)
{
	return pv_smb_list_match(c, fid, restart, NULL, cb, arg);
}

int pv_smb_stat(struct pv_smb_conn *c, const uint8_t fid[16], pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_QUERY_INFO, cb, arg, &q);

	/* SMB2_0_INFO_FILE, FileNetworkOpenInformation */
	if (r == PV_OK)
		r = smba_send_req(c, q, smb2_query_info_enc(&q->body, 1, 0x22, fid, 4096, 0),
				  "QUERY_INFO");
	return chained(c, r);
}

int pv_smb_rename(struct pv_smb_conn *c, const uint8_t fid[16], const char *path, bool replace,
		  pv_smb_cb cb, void *arg)
{
	struct pv_buf info = PV_BUF_INIT;
	struct req *q;
	int r = smba_ready_for(c, SMB2_SET_INFO, cb, arg, &q);

	if (r == PV_OK) {
		int e = smb2_rename_info(&info, path, replace);
		char what[600];

		snprintf(what, sizeof(what), "the path '%.500s'", path);
		if (e == 0 && info.len > UINT32_MAX)
			e = -1;
		/* SMB2_0_INFO_FILE, FileRenameInformation */
		r = smba_send_req(c, q,
				  e < 0 ? -1
					: smb2_set_info_enc(&q->body, 1, 10, fid, info.data,
							    (uint32_t)info.len),
				  what);
	}
	pv_buf_release(&info, 0);
	return chained(c, r);
}

int pv_smb_setinfo(struct pv_smb_conn *c, const uint8_t fid[16], uint8_t info_class,
		   const void *data, uint32_t len, pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_SET_INFO, cb, arg, &q);

	if (r == PV_OK) /* SMB2_0_INFO_FILE */
		r = smba_send_req(c, q, smb2_set_info_enc(&q->body, 1, info_class, fid, data, len),
				  "SET_INFO");
	return chained(c, r);
}

static const uint8_t no_guid[16];

/* A CREATE with a lease (and, from 3.0, dh: a durable request or reconnect context). */
static int create_leased(struct pv_smb_conn *c, struct smb2_create_req *cr,
			 const struct pv_smb_lease *ls, const struct smb2_cctx *dh, pv_smb_cb cb,
			 void *arg)
{
	uint8_t lease[52];
	struct smb2_cctx ctx[2] = {{"RqLs", lease, 0}};
	uint16_t dialect = pv_smb_dialect(c);

	ctx[0].len = (size_t)smb2_lease_ctx(lease, sizeof(lease), ls->key, ls->state,
					    dialect >= SMB2_300);
	cr->oplock = SMB2_OPLOCK_LEASE;
	cr->ctx = ctx;
	cr->nctx = 1;
	if (dh && dialect >= SMB2_300) {
		ctx[1] = *dh;
		cr->nctx = 2;
	}
	return send_create(c, cr, cb, arg);
}

int pv_smb_create_lease(struct pv_smb_conn *c, const char *path, uint32_t access,
			uint32_t disposition, uint32_t options, const struct pv_smb_lease *ls,
			pv_smb_cb cb, void *arg)
{
	uint8_t durable[SMB2_DURABLE_CTX_LEN];
	struct smb2_cctx dh = {"DH2Q", durable, 0};
	struct smb2_create_req cr = {
		path, access, 0, 7 /* share read, write, delete */, disposition, options,
		0,    NULL,   0};

	/* leases from 2.1 on, the v2 context and durable handles v2 from 3.0 (MS-SMB2
	 * 3.2.4.3.8, 3.2.4.3.5) */
	if (pv_smb_dialect(c) < SMB2_210)
		return pv_smb_create(c, path, access, disposition, options, cb, arg);
	dh.len = (size_t)smb2_durable_ctx(durable, ls->guid);
	return create_leased(c, &cr, ls, memcmp(ls->guid, no_guid, 16) ? &dh : NULL, cb, arg);
}

int pv_smb_reopen(struct pv_smb_conn *c, const char *path, const uint8_t fid[16],
		  const struct pv_smb_lease *ls, pv_smb_cb cb, void *arg)
{
	uint8_t again[SMB2_RECONNECT_CTX_LEN];
	struct smb2_cctx dh = {"DH2C", again, 0};
	struct smb2_create_req cr = {path, PV_SMB_READ, 0, 7, PV_SMB_OPEN, 0, 0, NULL, 0};

	if (pv_smb_dialect(c) < SMB2_300 || !memcmp(ls->guid, no_guid, 16))
		return pv_error(PV_EBUG, "SMB: a durable open is claimed again from 3.0 only");
	dh.len = (size_t)smb2_reconnect_ctx(again, fid, ls->guid);
	return create_leased(c, &cr, ls, &dh, cb, arg);
}

int pv_smb_flush(struct pv_smb_conn *c, const uint8_t fid[16], pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_FLUSH, cb, arg, &q);

	if (r == PV_OK)
		r = smba_send_req(c, q, smb2_flush_enc(&q->body, fid), "FLUSH");
	return chained(c, r);
}

int pv_smb_lock(struct pv_smb_conn *c, const uint8_t fid[16], uint64_t off, uint64_t len, bool excl,
		bool unlock, pv_smb_cb cb, void *arg)
{
	/* SMB2_LOCKFLAG_SHARED_LOCK 1, EXCLUSIVE_LOCK 2, UNLOCK 4, FAIL_IMMEDIATELY 0x10 */
	struct smb2_lock lk = {off, len, unlock ? 4u : (excl ? 2u : 1u) | 0x10u};
	struct req *q;
	int r = smba_ready_for(c, SMB2_LOCK, cb, arg, &q);

	if (r == PV_OK)
		r = smba_send_req(c, q, smb2_lock_enc(&q->body, fid, &lk, 1), "LOCK");
	return chained(c, r);
}

int pv_smb_fsctl(struct pv_smb_conn *c, uint32_t ctl, const uint8_t fid[16], const void *in,
		 uint32_t inlen, uint32_t max_out, pv_smb_cb cb, void *arg)
{
	struct req *q;
	int r;

	if (inlen > IO_MAX || max_out > IO_MAX)
		return chained(c, pv_error(PV_EBUG, "SMB: an IOCTL over %u bytes", IO_MAX));
	if ((r = smba_ready_for(c, SMB2_IOCTL, cb, arg, &q)) == PV_OK)
		r = smba_send_req(c, q,
				  smb2_ioctl_enc(&q->body, ctl, fid, in, inlen, max_out, true),
				  "IOCTL");
	return chained(c, r);
}

int pv_smb_notify(struct pv_smb_conn *c, const uint8_t fid[16], uint32_t filter, pv_smb_cb cb,
		  void *arg)
{
	struct req *q;
	int r = smba_ready_for(c, SMB2_CHANGE_NOTIFY, cb, arg, &q);

	if (r == PV_OK)
		r = smba_send_req(c, q, smb2_notify_enc(&q->body, fid, 0, filter, 4096),
				  "CHANGE_NOTIFY");
	return chained(c, r);
}

int pv_smb_entries(const uint8_t *buf, size_t len,
		   int (*fn)(void *arg, const char *name, bool dir, uint64_t size), void *arg)
{
	struct smb2_rd r;
	struct smb2_dir_it it;
	struct smb2_dirent e;
	int k;

	smb2_rd_init(&r, buf, len);
	smb2_dir_init(&it, &r);
	while ((k = smb2_dir_next(&it, &e)) == 1) {
		int x;

		if (strcmp(e.name, ".") != 0 && strcmp(e.name, "..") != 0 &&
		    (x = fn(arg, e.name, e.dir, e.size)) != 0)
			return x;
	}
	return k < 0 ? pv_error(PV_EREMOTE, "a malformed listing: %s", it.r.why) : PV_OK;
}
