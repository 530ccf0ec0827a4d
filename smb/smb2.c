/* smb/smb2.c: the SMB2 codec (see smb2.h): the header, names, every request encoder and
 * answer decoder. The reader the decoders read through is smb/smb2_rd.c; the security of a
 * connection is smb/sec.c. */
#include "smb/smb2.h"

#include "util/utf16.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void smb2_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void smb2_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void smb2_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint16_t smb2_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t smb2_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t smb2_get64(const uint8_t *p)
{
	return (uint64_t)smb2_get32(p) | (uint64_t)smb2_get32(p + 4) << 32;
}

void smb2_hdr_put(uint8_t *p, const struct smb2_hdr *h)
{
	memset(p, 0, SMB2_HDR);
	memcpy(p, "\xfeSMB", 4);
	smb2_put16(p + 4, SMB2_HDR);
	smb2_put16(p + 6, h->credit_charge);
	smb2_put32(p + 8, h->status);
	smb2_put16(p + 12, h->command);
	smb2_put16(p + 14, h->credits);
	smb2_put32(p + 16, h->flags);
	smb2_put32(p + 20, h->next);
	smb2_put64(p + 24, h->mid);
	smb2_put32(p + 36, h->tree);
	smb2_put64(p + 40, h->session);
}

int smb2_hdr_get(const uint8_t *p, size_t len, struct smb2_hdr *h)
{
	if (len < SMB2_HDR || memcmp(p, "\xfeSMB", 4) != 0 || smb2_get16(p + 4) != SMB2_HDR)
		return -1;
	h->credit_charge = smb2_get16(p + 6);
	h->status = smb2_get32(p + 8);
	h->command = smb2_get16(p + 12);
	h->credits = smb2_get16(p + 14);
	h->flags = smb2_get32(p + 16);
	h->next = smb2_get32(p + 20);
	h->mid = smb2_get64(p + 24);
	/* an async response carries an AsyncId where a sync one has ProcessId and TreeId */
	h->tree = (h->flags & SMB2_FLAGS_ASYNC) ? 0 : smb2_get32(p + 36);
	h->session = smb2_get64(p + 40);
	return 0;
}

const char *smb2_cmd_name(uint16_t cmd)
{
	static const char *const names[] = {
		"NEGOTIATE",	 "SESSION_SETUP", "LOGOFF",   "TREE_CONNECT", "TREE_DISCONNECT",
		"CREATE",	 "CLOSE",	  "FLUSH",    "READ",	      "WRITE",
		"LOCK",		 "IOCTL",	  "CANCEL",   "ECHO",	      "QUERY_DIRECTORY",
		"CHANGE_NOTIFY", "QUERY_INFO",	  "SET_INFO", "OPLOCK_BREAK",
	};

	return cmd < sizeof(names) / sizeof(names[0]) ? names[cmd] : "an unknown command";
}

const char *smb2_dialect_name(uint16_t dialect)
{
	static char other[8];

	switch (dialect) {
	case SMB2_202:
		return "2.0.2";
	case SMB2_210:
		return "2.1";
	case SMB2_300:
		return "3.0";
	case SMB2_302:
		return "3.0.2";
	case SMB2_311:
		return "3.1.1";
	default:
		snprintf(other, sizeof(other), "0x%04x", dialect);
		return other;
	}
}

const char *smb2_status_name(uint32_t status)
{
	static const struct {
		uint32_t code;
		const char *name;
	} names[] = {
		{ST_OK, "NT_STATUS_OK"},
		{ST_MORE_PROCESSING, "NT_STATUS_MORE_PROCESSING_REQUIRED"},
		{ST_ACCESS_DENIED, "NT_STATUS_ACCESS_DENIED"},
		{ST_OBJECT_NAME_COLLISION, "NT_STATUS_OBJECT_NAME_COLLISION"},
		{ST_DISK_FULL, "NT_STATUS_DISK_FULL"},
		{ST_QUOTA_EXCEEDED, "NT_STATUS_QUOTA_EXCEEDED"},
		{ST_BAD_NETWORK_NAME, "NT_STATUS_BAD_NETWORK_NAME"},
		{ST_LOGON_FAILURE, "NT_STATUS_LOGON_FAILURE"},
		{0xC0000034u, "NT_STATUS_OBJECT_NAME_NOT_FOUND"},
		{0xC000003Au, "NT_STATUS_OBJECT_PATH_NOT_FOUND"},
		{0xC0000033u, "NT_STATUS_OBJECT_NAME_INVALID"},
		{0xC00000BAu, "NT_STATUS_FILE_IS_A_DIRECTORY"},
		{0xC0000103u, "NT_STATUS_NOT_A_DIRECTORY"},
		{0xC0000043u, "NT_STATUS_SHARING_VIOLATION"},
		{0xC0000072u, "NT_STATUS_ACCOUNT_DISABLED"},
		{0xC0000071u, "NT_STATUS_PASSWORD_EXPIRED"},
		{0xC0000234u, "NT_STATUS_ACCOUNT_LOCKED_OUT"},
		{0xC000006Eu, "NT_STATUS_ACCOUNT_RESTRICTION"},
		{0xC0000064u, "NT_STATUS_NO_SUCH_USER"},
		{0xC000006Au, "NT_STATUS_WRONG_PASSWORD"},
		{0xC00000BBu, "NT_STATUS_NOT_SUPPORTED"},
		{0xC000000Du, "NT_STATUS_INVALID_PARAMETER"},
		{0xC0000203u, "NT_STATUS_USER_SESSION_DELETED"},
		{0xC0000017u, "NT_STATUS_NO_MEMORY"},
		{0xC00000C9u, "NT_STATUS_NETWORK_NAME_DELETED"},
		{0xC000009Au, "NT_STATUS_INSUFFICIENT_RESOURCES"},
		{0xC0000185u, "NT_STATUS_IO_DEVICE_ERROR"},
		{0xC00000A2u, "NT_STATUS_MEDIA_WRITE_PROTECTED"},
		{0xC0000008u, "NT_STATUS_INVALID_HANDLE"},
		{ST_INVALID_DEVICE_REQ, "NT_STATUS_INVALID_DEVICE_REQUEST"},
		{ST_FILE_CLOSED, "NT_STATUS_FILE_CLOSED"},
		{ST_FS_DRIVER_REQUIRED, "NT_STATUS_FS_DRIVER_REQUIRED"},
		{0xC0000011u, "NT_STATUS_END_OF_FILE"},
		{0xC0000054u, "NT_STATUS_FILE_LOCK_CONFLICT"},
		{0xC0000055u, "NT_STATUS_LOCK_NOT_GRANTED"},
		{0xC0000120u, "NT_STATUS_CANCELLED"},
		{ST_NOTIFY_ENUM_DIR, "STATUS_NOTIFY_ENUM_DIR"},
		{ST_BUFFER_OVERFLOW, "STATUS_BUFFER_OVERFLOW"},
		{ST_NO_MORE_FILES, "STATUS_NO_MORE_FILES"},
		{ST_PENDING, "STATUS_PENDING"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == status)
			return names[i].name;
	return NULL;
}

int smb2_name(const char *path, struct pv_buf *out)
{
	size_t from = out->len;

	if (pv_utf16le(out, path, strlen(path), 0) < 0)
		return -1;
	for (size_t i = from; i + 1 < out->len; i += 2)
		if (out->data[i] == '/' && out->data[i + 1] == 0)
			out->data[i] = '\\';
	return 0;
}

int smb2_ensure(uint8_t **buf, size_t *cap, size_t need, size_t first)
{
	if (need > *cap) {
		size_t n = *cap ? *cap : first;
		uint8_t *b;

		while (n < need)
			n *= 2;
		if (!(b = realloc(*buf, n)))
			return -1;
		*buf = b;
		*cap = n;
	}
	return 0;
}

const uint8_t SMB2_RELATED_FID[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ---- requests ---- */

/* n zeroed bytes appended to b: their address, or NULL when out of memory (b is then failed:
 * a pv_buf keeps its first failure). */
static uint8_t *grow(struct pv_buf *b, size_t n)
{
	size_t at = b->len;

	if (pv_buf_reserve(b, n) < 0)
		return NULL;
	memset(b->data + at, 0, n);
	b->len += n;
	return (uint8_t *)b->data + at;
}

/* b padded with zeroes to a multiple of 8 bytes from the body's start at base (whose header,
 * 64 bytes, comes before it: an offset aligned in the body is aligned in the message). */
static int pad8(struct pv_buf *b, size_t base)
{
	size_t n = (8 - (b->len - base) % 8) % 8;

	return n && !grow(b, n) ? -1 : 0;
}

/* The body's offset from its header's start, for the fields that carry one. */
static size_t from_hdr(const struct pv_buf *b, size_t base)
{
	return SMB2_HDR + (b->len - base);
}

static int fits16(size_t v)
{
	return v <= UINT16_MAX;
}

int smb2_negotiate_enc(struct pv_buf *b, const struct smb2_negotiate_req *q)
{
	size_t base = b->len, nctx = 0;
	bool v311 = false;
	uint8_t *f;

	for (size_t i = 0; i < q->ndialects; i++)
		v311 |= q->dialects[i] == SMB2_311;
	if (!(f = grow(b, 36 + 2 * q->ndialects)))
		return -1;
	smb2_put16(f, 36);
	smb2_put16(f + 2, (uint16_t)q->ndialects);
	smb2_put16(f + 4, q->security_mode);
	smb2_put32(f + 8, q->caps);
	memcpy(f + 12, q->guid, 16);
	for (size_t i = 0; i < q->ndialects; i++)
		smb2_put16(f + 36 + 2 * i, q->dialects[i]);
	if (!v311)
		return pv_buf_failed(b) ? -1 : 0;
	/* MS-SMB2 2.2.3.1: each context 8-byte aligned; its Data follows 8 bytes of type,
	 * length and reserved */
	for (int k = 0; k < 3; k++) {
		size_t n = k == 0 ? 4 + 2 + 32 : k == 1 ? 2 + 2 * q->nciphers : 2 + 2 * q->nsigns;
		uint16_t type = k == 0	 ? SMB2_CTX_PREAUTH
				: k == 1 ? SMB2_CTX_ENCRYPTION
					 : SMB2_CTX_SIGNING;
		uint8_t *c;

		if ((k == 1 && !q->nciphers) || (k == 2 && !q->nsigns))
			continue;
		if (pad8(b, base) < 0)
			return -1;
		if (nctx == 0)
			smb2_put32((uint8_t *)b->data + base + 28, (uint32_t)from_hdr(b, base));
		if (!(c = grow(b, 8 + n)))
			return -1;
		smb2_put16(c, type);
		smb2_put16(c + 2, (uint16_t)n);
		if (k == 0) {
			smb2_put16(c + 8, 1);
			smb2_put16(c + 10, 32);
			smb2_put16(c + 12, SMB2_HASH_SHA512);
			memcpy(c + 14, q->salt, 32);
		} else {
			const uint16_t *v = k == 1 ? q->ciphers : q->signs;
			size_t m = k == 1 ? q->nciphers : q->nsigns;

			smb2_put16(c + 8, (uint16_t)m);
			for (size_t i = 0; i < m; i++)
				smb2_put16(c + 10 + 2 * i, v[i]);
		}
		nctx++;
	}
	smb2_put16((uint8_t *)b->data + base + 32, (uint16_t)nctx);
	return 0;
}

/* A body of fixed bytes, then data whose offset (from the header) and 16-bit length go at
 * off_at and off_at + 2 of the fixed part; a byte of padding when there is no data (the
 * StructureSize counts one byte of the buffer). The fixed part's address, or NULL. */
static uint8_t *with_buffer(struct pv_buf *b, size_t fixed, size_t off_at, const void *data,
			    size_t len)
{
	size_t base = b->len;
	uint8_t *f;

	if (!fits16(len) || !(f = grow(b, fixed + (len ? len : 1))))
		return NULL;
	smb2_put16(f, (uint16_t)(fixed + 1));
	smb2_put16(f + off_at, (uint16_t)(SMB2_HDR + fixed));
	smb2_put16(f + off_at + 2, (uint16_t)len);
	if (len)
		memcpy(f + fixed, data, len);
	return (uint8_t *)b->data + base;
}

int smb2_session_setup_enc(struct pv_buf *b, uint8_t security_mode, const void *tok, size_t len,
			   uint64_t prev)
{
	uint8_t *f = with_buffer(b, 24, 12, tok, len);

	if (!f)
		return -1;
	f[3] = security_mode;
	smb2_put64(f + 16, prev); /* PreviousSessionId */
	return 0;
}

int smb2_logoff_enc(struct pv_buf *b)
{
	uint8_t *f = grow(b, 4);

	if (!f)
		return -1;
	smb2_put16(f, 4);
	return 0;
}

int smb2_tree_connect_enc(struct pv_buf *b, const char *server, const char *share)
{
	struct pv_buf unc = PV_BUF_INIT, path = PV_BUF_INIT;
	int r = -1;

	pv_buf_addf(&unc, "\\\\%s\\%s", server, share);
	if (!pv_buf_failed(&unc) && smb2_name(unc.data, &path) == 0 &&
	    with_buffer(b, 8, 4, path.data, path.len))
		r = 0;
	pv_buf_release(&unc, 0);
	pv_buf_release(&path, 0);
	return r;
}

/* The create contexts (MS-SMB2 2.2.13.2) appended to b, whose body starts at base: each
 * 8-byte aligned, its name at 16, its data 8-byte aligned after the name. Their offset and
 * length go into the CREATE's fixed part. */
static int create_contexts(struct pv_buf *b, size_t base, const struct smb2_cctx *cx, size_t n)
{
	size_t first = 0, prev = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(cx[i].name), at, doff = (16 + nl + 7) & ~(size_t)7;
		uint8_t *c;

		if (pad8(b, base) < 0 || !fits16(nl) || cx[i].len > UINT32_MAX)
			return -1;
		at = b->len;
		if (!first)
			first = at;
		if (prev != SIZE_MAX)
			smb2_put32((uint8_t *)b->data + prev, (uint32_t)(at - prev));
		if (!(c = grow(b, doff + cx[i].len)))
			return -1;
		smb2_put16(c + 4, 16);
		smb2_put16(c + 6, (uint16_t)nl);
		smb2_put16(c + 10, cx[i].len ? (uint16_t)doff : 0);
		smb2_put32(c + 12, (uint32_t)cx[i].len);
		memcpy(c + 16, cx[i].name, nl);
		if (cx[i].len)
			memcpy(c + doff, cx[i].data, cx[i].len);
		prev = at;
	}
	if (n) {
		uint8_t *f = (uint8_t *)b->data + base;

		smb2_put32(f + 48, (uint32_t)(SMB2_HDR + first - base));
		smb2_put32(f + 52, (uint32_t)(b->len - first));
	}
	return 0;
}

int smb2_create_enc(struct pv_buf *b, const struct smb2_create_req *q)
{
	struct pv_buf name = PV_BUF_INIT;
	size_t base = b->len;
	uint8_t *f;
	int r = -1;

	if (smb2_name(q->path, &name) == 0 && (f = with_buffer(b, 56, 44, name.data, name.len))) {
		f[3] = q->oplock;
		smb2_put32(f + 4, 2); /* impersonation */
		smb2_put32(f + 24, q->access);
		smb2_put32(f + 28, q->attrs);
		smb2_put32(f + 32, q->share);
		smb2_put32(f + 36, q->disposition);
		smb2_put32(f + 40, q->options);
		r = create_contexts(b, base, q->ctx, q->nctx);
	}
	pv_buf_release(&name, 0);
	return r;
}

/* A body of n zeroed bytes with StructureSize ss and the file id at fid_at. */
static uint8_t *fixed_fid(struct pv_buf *b, size_t n, uint16_t ss, const uint8_t fid[16],
			  size_t fid_at)
{
	uint8_t *f = grow(b, n);

	if (f) {
		smb2_put16(f, ss);
		memcpy(f + fid_at, fid, 16);
	}
	return f;
}

int smb2_close_enc(struct pv_buf *b, const uint8_t fid[16], uint16_t flags)
{
	uint8_t *f = fixed_fid(b, 24, 24, fid, 8);

	if (!f)
		return -1;
	smb2_put16(f + 2, flags);
	return 0;
}

int smb2_lease_ctx(uint8_t *out, size_t outlen, const uint8_t key[16], uint32_t state, bool v2)
{
	size_t n = v2 ? 52 : 32;

	if (outlen < n)
		return -1;
	memset(out, 0, n);
	memcpy(out, key, 16); /* LeaseKey */
	smb2_put32(out + 16, state);
	return (int)n; /* flags, duration, a v2's parent key and epoch: 0 */
}

int smb2_durable_ctx(uint8_t out[SMB2_DURABLE_CTX_LEN], const uint8_t guid[16])
{
	memset(out, 0, SMB2_DURABLE_CTX_LEN); /* Timeout, Flags, Reserved */
	memcpy(out + 16, guid, 16);
	return SMB2_DURABLE_CTX_LEN;
}

int smb2_reconnect_ctx(uint8_t out[SMB2_RECONNECT_CTX_LEN], const uint8_t fid[16],
		       const uint8_t guid[16])
{
	memcpy(out, fid, 16);
	memcpy(out + 16, guid, 16);
	memset(out + 32, 0, 4); /* Flags: not persistent */
	return SMB2_RECONNECT_CTX_LEN;
}

int smb2_lease_break_ack_enc(struct pv_buf *b, const uint8_t key[16], uint32_t state)
{
	uint8_t *f = grow(b, 36);

	if (!f)
		return -1;
	smb2_put16(f, 36);
	memcpy(f + 8, key, 16);
	smb2_put32(f + 24, state);
	return 0;
}

int smb2_flush_enc(struct pv_buf *b, const uint8_t fid[16])
{
	return fixed_fid(b, 24, 24, fid, 8) ? 0 : -1;
}

int smb2_read_enc(struct pv_buf *b, const uint8_t fid[16], uint64_t off, uint32_t len)
{
	uint8_t *f = fixed_fid(b, 49, 49, fid, 16);

	if (!f)
		return -1;
	f[2] = SMB2_HDR + 16; /* where the data should start in the answer */
	smb2_put32(f + 4, len);
	smb2_put64(f + 8, off);
	return 0;
}

int smb2_write_enc(struct pv_buf *b, const uint8_t fid[16], uint64_t off, const void *data,
		   uint32_t len)
{
	uint8_t *f = fixed_fid(b, 48 + (len ? len : 1), 49, fid, 16);

	if (!f)
		return -1;
	smb2_put16(f + 2, SMB2_HDR + 48);
	smb2_put32(f + 4, len);
	smb2_put64(f + 8, off);
	if (len)
		memcpy(f + 48, data, len);
	return 0;
}

int smb2_lock_enc(struct pv_buf *b, const uint8_t fid[16], const struct smb2_lock *locks, size_t n)
{
	uint8_t *f;

	if (n == 0 || !fits16(n) || !(f = fixed_fid(b, 24 + 24 * n, 48, fid, 8)))
		return -1;
	smb2_put16(f + 2, (uint16_t)n);
	for (size_t i = 0; i < n; i++) {
		smb2_put64(f + 24 + 24 * i, locks[i].off);
		smb2_put64(f + 32 + 24 * i, locks[i].len);
		smb2_put32(f + 40 + 24 * i, locks[i].flags);
	}
	return 0;
}

int smb2_ioctl_enc(struct pv_buf *b, uint32_t ctl, const uint8_t fid[16], const void *in,
		   uint32_t inlen, uint32_t max_out, bool fsctl)
{
	uint8_t *f = fixed_fid(b, 56 + (inlen ? inlen : 0), 57, fid, 8);

	if (!f)
		return -1;
	smb2_put32(f + 4, ctl);
	smb2_put32(f + 24, inlen ? SMB2_HDR + 56 : 0);
	smb2_put32(f + 28, inlen);
	smb2_put32(f + 44, max_out);
	smb2_put32(f + 48, fsctl ? 1 : 0);
	if (inlen)
		memcpy(f + 56, in, inlen);
	return 0;
}

int smb2_query_dir_enc(struct pv_buf *b, const uint8_t fid[16], uint8_t info_class, uint8_t flags,
		       const char *pattern, uint32_t out_len)
{
	struct pv_buf name = PV_BUF_INIT;
	uint8_t *f = NULL;

	if (pv_utf16le(&name, pattern, strlen(pattern), 0) == 0 &&
	    (f = with_buffer(b, 32, 24, name.data, name.len))) {
		f[2] = info_class;
		f[3] = flags;
		memcpy(f + 8, fid, 16);
		smb2_put32(f + 28, out_len);
	}
	pv_buf_release(&name, 0);
	return f ? 0 : -1;
}

int smb2_notify_enc(struct pv_buf *b, const uint8_t fid[16], uint16_t flags, uint32_t filter,
		    uint32_t out_len)
{
	uint8_t *f = fixed_fid(b, 32, 32, fid, 8);

	if (!f)
		return -1;
	smb2_put16(f + 2, flags);
	smb2_put32(f + 4, out_len);
	smb2_put32(f + 24, filter);
	return 0;
}

int smb2_query_info_enc(struct pv_buf *b, uint8_t type, uint8_t info_class, const uint8_t fid[16],
			uint32_t out_len, uint32_t additional)
{
	uint8_t *f = fixed_fid(b, 41, 41, fid, 24);

	if (!f)
		return -1;
	f[2] = type;
	f[3] = info_class;
	smb2_put32(f + 4, out_len);
	smb2_put32(f + 16, additional);
	return 0;
}

int smb2_set_info_enc(struct pv_buf *b, uint8_t type, uint8_t info_class, const uint8_t fid[16],
		      const void *data, uint32_t len)
{
	uint8_t *f = fixed_fid(b, 32 + (len ? len : 1), 33, fid, 16);

	if (!f)
		return -1;
	f[2] = type;
	f[3] = info_class;
	smb2_put32(f + 4, len);
	smb2_put16(f + 8, SMB2_HDR + 32);
	if (len)
		memcpy(f + 32, data, len);
	return 0;
}

int smb2_validate_neg_info(struct pv_buf *b, const struct smb2_negotiate_req *q)
{
	uint8_t *f;

	if (q->ndialects > 64 || !(f = grow(b, 24 + 2 * q->ndialects)))
		return -1;
	smb2_put32(f, q->caps);
	memcpy(f + 4, q->guid, 16);
	smb2_put16(f + 20, q->security_mode);
	smb2_put16(f + 22, (uint16_t)q->ndialects);
	for (size_t i = 0; i < q->ndialects; i++)
		smb2_put16(f + 24 + 2 * i, q->dialects[i]);
	return 0;
}

int smb2_rename_info(struct pv_buf *b, const char *path, bool replace)
{
	struct pv_buf name = PV_BUF_INIT;
	uint8_t *f = NULL;

	if (smb2_name(path, &name) == 0 && name.len <= UINT32_MAX && (f = grow(b, 20 + name.len))) {
		f[0] = replace ? 1 : 0;
		smb2_put32(f + 16, (uint32_t)name.len);
		memcpy(f + 20, name.data, name.len);
	}
	pv_buf_release(&name, 0);
	return f ? 0 : -1;
}

/* ---- answers ---- */

/* m's body holds at least min bytes (StructureSize and the fixed part): the cursor after
 * StructureSize; else a failure naming the command. */
static int body(struct smb2_rd *m, uint16_t cmd, size_t min)
{
	size_t have = m->len > SMB2_HDR ? m->len - SMB2_HDR : 0;

	if (m->bad)
		return -1;
	if (m->len < SMB2_HDR || have < min)
		return smb2_rd_fail(m, "%s with a body of %zu bytes, %zu expected",
				    smb2_cmd_name(cmd), have, min);
	smb2_rd_seek(m, SMB2_HDR + 2);
	return 0;
}

/* The span whose 16-bit offset and 32- or 16-bit length were just read. */
static int span(struct smb2_rd *m, size_t off, size_t len, const char *what, struct smb2_rd *out)
{
	if (m->bad)
		return -1;
	/* a buffer before the body would be the header: nothing of ours is there */
	if (len && off < SMB2_HDR)
		return smb2_rd_fail(m, "%s (%zu bytes at %zu) is not inside its %zu bytes", what,
				    len, off, m->len);
	return smb2_rd_span(m, off, len, what, out);
}

/* One negotiate context (MS-SMB2 2.2.3.1.1-2.2.3.1.7) of the answer: what we act on noted,
 * the others passed over. */
static void negotiate_context(struct smb2_rd *c, uint16_t type, struct smb2_negotiate_rsp *o)
{
	switch (type) {
	case SMB2_CTX_PREAUTH:
		o->has_preauth = true;
		o->hash_count = smb2_rd_u16(c);
		smb2_rd_u16(c); /* SaltLength */
		o->hash = smb2_rd_u16(c);
		break;
	case SMB2_CTX_ENCRYPTION:
		o->has_cipher = true;
		o->cipher_count = smb2_rd_u16(c);
		o->cipher = smb2_rd_u16(c);
		break;
	case SMB2_CTX_SIGNING:
		o->has_sign = true;
		o->sign_count = smb2_rd_u16(c);
		o->sign = smb2_rd_u16(c);
		break;
	default:
		break;
	}
}

int smb2_negotiate_dec(struct smb2_rd *m, struct smb2_negotiate_rsp *o)
{
	uint16_t nctx, soff, slen;
	uint32_t coff;
	const uint8_t *g;

	memset(o, 0, sizeof(*o));
	if (body(m, SMB2_NEGOTIATE, 64) < 0)
		return -1;
	o->security_mode = smb2_rd_u16(m);
	o->dialect = smb2_rd_u16(m);
	nctx = smb2_rd_u16(m);
	if ((g = smb2_rd_bytes(m, 16)))
		memcpy(o->guid, g, 16);
	o->caps = smb2_rd_u32(m);
	o->max_transact = smb2_rd_u32(m);
	o->max_read = smb2_rd_u32(m);
	o->max_write = smb2_rd_u32(m);
	smb2_rd_skip(m, 16); /* SystemTime, ServerStartTime */
	soff = smb2_rd_u16(m);
	slen = smb2_rd_u16(m);
	coff = smb2_rd_u32(m);
	if (span(m, soff, slen, "NEGOTIATE's security buffer", &o->secbuf) < 0)
		return -1;
	if (o->dialect != SMB2_311)
		return 0;
	for (size_t at = coff, i = 0; i < nctx; i++) {
		struct smb2_rd c;
		uint16_t type, dlen;

		/* each context 8-byte aligned after the previous one (MS-SMB2 2.2.4) */
		at = (at + 7) & ~(size_t)7;
		if (at > m->len || m->len - at < 8)
			return smb2_rd_fail(
				m,
				"NEGOTIATE's negotiate context %zu of %u (at %zu) is not "
				"inside its %zu bytes",
				i + 1, nctx, at, m->len);
		smb2_rd_seek(m, at);
		type = smb2_rd_u16(m);
		dlen = smb2_rd_u16(m);
		if (span(m, at + 8, dlen, "a negotiate context's data", &c) < 0)
			return -1;
		negotiate_context(&c, type, o);
		if (c.bad)
			return smb2_rd_fail(m,
					    "NEGOTIATE's negotiate context of type %u is %u bytes, "
					    "too short for its fields",
					    type, dlen);
		at += 8 + dlen;
	}
	return m->bad ? -1 : 0;
}

int smb2_session_setup_dec(struct smb2_rd *m, struct smb2_session_setup_rsp *o)
{
	uint16_t off, len;

	if (body(m, SMB2_SESSION_SETUP, 8) < 0)
		return -1;
	o->flags = smb2_rd_u16(m);
	off = smb2_rd_u16(m);
	len = smb2_rd_u16(m);
	return span(m, off, len, "SESSION_SETUP's security buffer", &o->token);
}

int smb2_tree_connect_dec(struct smb2_rd *m, struct smb2_tree_connect_rsp *o)
{
	if (body(m, SMB2_TREE_CONNECT, 16) < 0)
		return -1;
	o->type = smb2_rd_u8(m);
	smb2_rd_u8(m);
	o->flags = smb2_rd_u32(m);
	o->caps = smb2_rd_u32(m);
	o->access = smb2_rd_u32(m);
	return m->bad ? -1 : 0;
}

int smb2_create_dec(struct smb2_rd *m, struct smb2_create_rsp *o)
{
	uint32_t coff, clen;

	if (body(m, SMB2_CREATE, 88) < 0)
		return -1;
	o->oplock = smb2_rd_u8(m);
	smb2_rd_u8(m); /* Flags */
	o->action = smb2_rd_u32(m);
	smb2_rd_skip(m, 32); /* the times */
	o->alloc = smb2_rd_u64(m);
	o->eof = smb2_rd_u64(m);
	o->attrs = smb2_rd_u32(m);
	smb2_rd_skip(m, 4);
	memcpy(o->fid, smb2_rd_bytes(m, 16), 16); /* inside: body() checked 88 bytes */
	coff = smb2_rd_u32(m);
	clen = smb2_rd_u32(m);
	return span(m, coff, clen, "CREATE's create contexts", &o->ctx);
}

int smb2_create_ctx_find(struct smb2_rd *ctx, const char *name, struct smb2_rd *data)
{
	size_t at = 0;

	if (!ctx->len)
		return 0;
	for (;;) {
		struct smb2_rd c, nm;
		uint32_t next, dlen;
		uint16_t noff, nlen, doff;

		if (smb2_rd_span(ctx, at, 16, "a create context", &c) < 0)
			return -1;
		next = smb2_rd_u32(&c);
		noff = smb2_rd_u16(&c);
		nlen = smb2_rd_u16(&c);
		smb2_rd_skip(&c, 2);
		doff = smb2_rd_u16(&c);
		dlen = smb2_rd_u32(&c);
		if (smb2_rd_span(ctx, at + noff, nlen, "a create context's name", &nm) < 0)
			return -1;
		if (nlen == 4 && memcmp(smb2_rd_bytes(&nm, 4), name, 4) == 0)
			return smb2_rd_span(ctx, at + doff, dlen, "a create context's data", data) <
					       0
				       ? -1
				       : 1;
		if (!next)
			return 0;
		if (next < 16 || next > ctx->len - at)
			return smb2_rd_fail(ctx, "a create context's Next of %u at %zu", next, at);
		at += next;
	}
}

int smb2_lease_break_dec(struct smb2_rd *m, struct smb2_lease_break *o)
{
	const uint8_t *key;
	uint32_t flags;

	if (body(m, SMB2_OPLOCK_BREAK, 44) < 0)
		return -1;
	smb2_rd_u16(m); /* NewEpoch */
	flags = smb2_rd_u32(m);
	if ((key = smb2_rd_bytes(m, 16)) != NULL)
		memcpy(o->key, key, 16);
	smb2_rd_u32(m); /* CurrentLeaseState */
	o->state = smb2_rd_u32(m);
	o->ack = flags & 0x1u; /* SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED */
	return m->bad ? -1 : 0;
}

int smb2_close_dec(struct smb2_rd *m, uint64_t *eof)
{
	if (body(m, SMB2_CLOSE, 60) < 0)
		return -1;
	smb2_rd_seek(m, SMB2_HDR + 48);
	*eof = smb2_rd_u64(m);
	return m->bad ? -1 : 0;
}

int smb2_read_dec(struct smb2_rd *m, struct smb2_rd *data)
{
	uint8_t off;
	uint32_t len;

	if (body(m, SMB2_READ, 16) < 0)
		return -1;
	off = smb2_rd_u8(m);
	smb2_rd_u8(m);
	len = smb2_rd_u32(m);
	return span(m, off, len, "READ's data", data);
}

int smb2_write_dec(struct smb2_rd *m, uint32_t *count)
{
	if (body(m, SMB2_WRITE, 16) < 0)
		return -1;
	smb2_rd_u16(m);
	*count = smb2_rd_u32(m);
	return m->bad ? -1 : 0;
}

int smb2_ioctl_dec(struct smb2_rd *m, struct smb2_ioctl_rsp *o)
{
	uint32_t ioff, ilen, ooff, olen;

	if (body(m, SMB2_IOCTL, 48) < 0)
		return -1;
	smb2_rd_u16(m);
	o->ctl = smb2_rd_u32(m);
	memcpy(o->fid, smb2_rd_bytes(m, 16), 16);
	ioff = smb2_rd_u32(m);
	ilen = smb2_rd_u32(m);
	ooff = smb2_rd_u32(m);
	olen = smb2_rd_u32(m);
	if (span(m, ioff, ilen, "IOCTL's input", &o->in) < 0)
		return -1;
	return span(m, ooff, olen, "IOCTL's output", &o->out);
}

/* QUERY_DIRECTORY, CHANGE_NOTIFY, QUERY_INFO: StructureSize 9, OutputBufferOffset (16 bits),
 * OutputBufferLength (32 bits). */
static int out_buffer(struct smb2_rd *m, uint16_t cmd, const char *what, struct smb2_rd *buf)
{
	uint16_t off;
	uint32_t len;

	if (body(m, cmd, 8) < 0)
		return -1;
	off = smb2_rd_u16(m);
	len = smb2_rd_u32(m);
	return span(m, off, len, what, buf);
}

int smb2_query_dir_dec(struct smb2_rd *m, struct smb2_rd *buf)
{
	if (out_buffer(m, SMB2_QUERY_DIRECTORY, "QUERY_DIRECTORY's buffer", buf) < 0)
		return -1;
	/* a success lists an entry at least: the end of a listing is STATUS_NO_MORE_FILES
	 * (MS-SMB2 3.3.5.18); an empty page would have a client ask again for ever */
	if (buf->len == 0)
		return smb2_rd_fail(m, "QUERY_DIRECTORY's buffer is empty, yet not "
				       "STATUS_NO_MORE_FILES (MS-SMB2 3.3.5.18)");
	return 0;
}

int smb2_notify_dec(struct smb2_rd *m, struct smb2_rd *buf)
{
	return out_buffer(m, SMB2_CHANGE_NOTIFY, "CHANGE_NOTIFY's buffer", buf);
}

int smb2_query_info_dec(struct smb2_rd *m, struct smb2_rd *buf)
{
	return out_buffer(m, SMB2_QUERY_INFO, "QUERY_INFO's buffer", buf);
}

int smb2_empty_dec(struct smb2_rd *m, uint16_t cmd)
{
	return body(m, cmd, 2);
}

/* ---- directory entries ---- */

void smb2_dir_init(struct smb2_dir_it *it, const struct smb2_rd *buf)
{
	smb2_dir_init_class(it, buf, 1);
}

int smb2_dir_init_class(struct smb2_dir_it *it, const struct smb2_rd *buf, uint8_t info_class)
{
	/* each class's fixed part, where its FileName begins (MS-FSCC 2.4) */
	static const uint8_t name_at[39] = {
		[1] = 64, [2] = 68, [3] = 94, [12] = 12, [37] = 104, [38] = 80};

	it->r = *buf;
	it->r.at = 0;
	it->end = buf->len == 0;
	it->name_at = info_class < sizeof(name_at) ? name_at[info_class] : 0;
	return it->name_at ? 0 : -1;
}

int smb2_dir_next(struct smb2_dir_it *it, struct smb2_dirent *e)
{
	struct smb2_rd *r = &it->r;
	size_t left = smb2_rd_left(r), at = r->at, fixed = it->name_at;
	uint32_t next, nl, attrs = 0;

	if (r->bad)
		return -1;
	if (it->end)
		return 0;
	if (left < fixed)
		return smb2_rd_fail(r, "an entry of %zu bytes, shorter than its %zu fixed ones",
				    left, fixed);
	next = smb2_rd_u32(r);
	e->mtime = e->size = 0;
	if (fixed == 12) { /* FileNamesInformation: FileIndex, the name's length */
		smb2_rd_skip(r, 4);
	} else {
		smb2_rd_skip(r, 20); /* FileIndex, CreationTime, LastAccessTime */
		e->mtime = smb2_rd_u64(r);
		smb2_rd_skip(r, 8); /* ChangeTime */
		e->size = smb2_rd_u64(r);
		smb2_rd_skip(r, 8); /* AllocationSize */
		attrs = smb2_rd_u32(r);
	}
	nl = smb2_rd_u32(r);
	/* MS-FSCC 2.1.5.2: a name is at most 255 characters */
	if (nl > left - fixed || nl > 510 || (next && next < fixed + nl) || next > left)
		return smb2_rd_fail(r,
				    "an entry whose name (%u bytes) or NextEntryOffset (%u) does "
				    "not fit the %zu bytes left",
				    nl, next, left);
	smb2_rd_seek(r, at + fixed);
	if (pv_utf16le_to_utf8(smb2_rd_bytes(r, nl), nl, e->name, sizeof(e->name)) < 0)
		return smb2_rd_fail(r, "a name that is not UTF-16");
	/* as listing_entry (smb/listing.c) refuses them: a name that is empty, holds a
	 * separator or a NUL (cut short) would name another file than the one listed */
	if (!*e->name || strlen(e->name) * 2 < nl || strpbrk(e->name, "/\\"))
		return smb2_rd_fail(r, "the server listed a bad name '%.200s'", e->name);
	e->dir = (attrs & 0x10) != 0; /* FILE_ATTRIBUTE_DIRECTORY, MS-FSCC 2.6 */
	if (next)
		smb2_rd_seek(r, at + next);
	else
		it->end = true;
	return 1;
}
