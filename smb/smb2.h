/* smb/smb2.h: the one SMB2 codec (MS-SMB2) of smb/, without I/O so that all of it is unit-tested:
 * every request the engine (smb/async.h) sends is encoded here and every answer it takes is decoded
 * here, through one bounds-checked reader; the SMB 3 security of a connection (negotiation, the
 * preauth integrity hash, key derivation, signing, the transform header of encryption) is in
 * smb/sec.c, declared below. Module-internal: outside smb/ use smb/smb.h and smb/async.h. */
#ifndef PV_SMB_SMB2_H
#define PV_SMB_SMB2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define SMB2_HDR 64

enum smb2_cmd {
	SMB2_NEGOTIATE = 0,
	SMB2_SESSION_SETUP = 1,
	SMB2_LOGOFF = 2,
	SMB2_TREE_CONNECT = 3,
	SMB2_TREE_DISCONNECT = 4,
	SMB2_CREATE = 5,
	SMB2_CLOSE = 6,
	SMB2_FLUSH = 7,
	SMB2_READ = 8,
	SMB2_WRITE = 9,
	SMB2_LOCK = 10,
	SMB2_IOCTL = 11,
	SMB2_CANCEL = 12,
	SMB2_ECHO = 13,
	SMB2_QUERY_DIRECTORY = 14,
	SMB2_CHANGE_NOTIFY = 15,
	SMB2_QUERY_INFO = 16,
	SMB2_SET_INFO = 17,
	SMB2_OPLOCK_BREAK = 18,
};

/* NTSTATUS values we act on */
#define ST_OK			 0x00000000u
#define ST_PENDING		 0x00000103u
#define ST_NOTIFY_ENUM_DIR	 0x0000010Cu
#define ST_NO_MORE_FILES	 0x80000006u
#define ST_MORE_PROCESSING	 0xC0000016u
#define ST_ACCESS_DENIED	 0xC0000022u
#define ST_OBJECT_NAME_COLLISION 0xC0000035u
#define ST_DISK_FULL		 0xC000007Fu
#define ST_QUOTA_EXCEEDED	 0xC0000044u
#define ST_BAD_NETWORK_NAME	 0xC00000CCu
#define ST_LOGON_FAILURE	 0xC000006Du
#define ST_NOT_SUPPORTED	 0xC00000BBu
#define ST_INVALID_PARAMETER	 0xC000000Du
#define ST_BUFFER_OVERFLOW	 0x80000005u
#define ST_INVALID_DEVICE_REQ	 0xC0000010u
#define ST_FILE_CLOSED		 0xC0000128u
#define ST_FS_DRIVER_REQUIRED	 0xC000019Cu

#define SMB2_FLAGS_RESPONSE 0x1u
#define SMB2_FLAGS_ASYNC    0x2u
#define SMB2_FLAGS_RELATED  0x4u
#define SMB2_FLAGS_SIGNED   0x8u

/* SecurityMode of NEGOTIATE and SESSION_SETUP (MS-SMB2 2.2.3, 2.2.4, 2.2.5) */
#define SMB2_SIGNING_ENABLED  0x1u
#define SMB2_SIGNING_REQUIRED 0x2u

/* Capabilities (MS-SMB2 2.2.3) */
#define SMB2_CAP_LARGE_MTU  0x04u
#define SMB2_CAP_ENCRYPTION 0x40u

/* SessionFlags (MS-SMB2 2.2.6) and ShareFlags (2.2.10) */
#define SMB2_SESSION_GUEST   0x1u
#define SMB2_SESSION_NULL    0x2u
#define SMB2_SESSION_ENCRYPT 0x4u
#define SMB2_SHARE_ENCRYPT   0x8000u

/* The dialects, as NEGOTIATE carries them */
#define SMB2_202 0x0202u
#define SMB2_210 0x0210u
#define SMB2_300 0x0300u
#define SMB2_302 0x0302u
#define SMB2_311 0x0311u

/* Negotiate context ids (MS-SMB2 2.2.3.1) and what they carry */
#define SMB2_CTX_PREAUTH    1u
#define SMB2_CTX_ENCRYPTION 2u
#define SMB2_CTX_SIGNING    8u
#define SMB2_HASH_SHA512    1u
enum smb2_cipher {
	SMB2_NO_CIPHER = 0,
	SMB2_AES128_CCM = 1,
	SMB2_AES128_GCM = 2,
	SMB2_AES256_CCM = 3,
	SMB2_AES256_GCM = 4,
};
enum smb2_sign_alg { SMB2_HMAC_SHA256 = 0, SMB2_AES_CMAC = 1, SMB2_AES_GMAC = 2 };

/* The Signature field of the header: 16 bytes at 48 */
#define SMB2_SIG_AT  48
#define SMB2_SIG_LEN 16

/* A file id that names the file a compound's first request opened (MS-SMB2 3.2.4.1.4) */
extern const uint8_t SMB2_RELATED_FID[16];

/* The fixed part of a request or response header. */
struct smb2_hdr {
	uint16_t credit_charge, command, credits;
	uint32_t status, flags, next, tree;
	uint64_t mid, session;
};

/* Little-endian stores and loads. */
void smb2_put16(uint8_t *p, uint16_t v);
void smb2_put32(uint8_t *p, uint32_t v);
void smb2_put64(uint8_t *p, uint64_t v);
uint16_t smb2_get16(const uint8_t *p);
uint32_t smb2_get32(const uint8_t *p);
uint64_t smb2_get64(const uint8_t *p);

/* Write a request header into p (SMB2_HDR bytes). */
void smb2_hdr_put(uint8_t *p, const struct smb2_hdr *h);
/* Read a response header from p (at least SMB2_HDR bytes there); -1 if it is not SMB2. */
int smb2_hdr_get(const uint8_t *p, size_t len, struct smb2_hdr *h);

/* The name of a command ("CREATE"), "an unknown command" for one we never send. */
const char *smb2_cmd_name(uint16_t cmd);
/* A name for an NTSTATUS ("NT_STATUS_DISK_FULL"), or NULL when we do not know it. */
const char *smb2_status_name(uint32_t status);
/* "3.1.1" for SMB2_311, "0x1234" for a dialect we do not know (in a buffer the next call
 * overwrites). */
const char *smb2_dialect_name(uint16_t dialect);

/* A '/'-separated UTF-8 path appended to out as the UTF-16LE '\\'-separated name a CREATE
 * carries; -1 on invalid UTF-8 or out of memory. */
int smb2_name(const char *path, struct pv_buf *out);

/* A frame buffer *buf of *cap bytes grown (doubling from first) to hold at least need bytes:
 * 0, or -1 when out of memory (*buf and *cap are then as they were). */
int smb2_ensure(uint8_t **buf, size_t *cap, size_t need, size_t first);

/* ---- the reader: every byte of an answer is read through it ----
 *
 * In the spirit of OpenSSH's sshbuf: a cursor over bytes that came from the server, whose
 * gets fail past the end instead of reading there. A failure is sticky (every get after it
 * returns 0 or NULL) and the first one's words stay in why, so a decoder reads its fields
 * one after another and looks once at the end. Offsets and lengths that the server gives
 * are checked once, by smb2_rd_span, which makes a reader of just those bytes. */
struct smb2_rd {
	const uint8_t *p;
	size_t len, at;
	bool bad;
	char why[200]; /* the first failure ("READ's data (... bytes at ...) is not inside ...") */
};

void smb2_rd_init(struct smb2_rd *r, const void *p, size_t len);
uint8_t smb2_rd_u8(struct smb2_rd *r);
uint16_t smb2_rd_u16(struct smb2_rd *r);
uint32_t smb2_rd_u32(struct smb2_rd *r);
uint64_t smb2_rd_u64(struct smb2_rd *r);
/* n bytes from the cursor (which moves past them), or NULL past the end. */
const uint8_t *smb2_rd_bytes(struct smb2_rd *r, size_t n);
void smb2_rd_skip(struct smb2_rd *r, size_t n);
/* The cursor to at (from the start), or a failure when at is past the end. */
void smb2_rd_seek(struct smb2_rd *r, size_t at);
/* Bytes left after the cursor. */
size_t smb2_rd_left(const struct smb2_rd *r);
/* out: the len bytes at off of r's bytes, where what ("READ's data") says they are; a failure
 * of r ("what (len bytes at off) is not inside its N bytes") when they are not all inside.
 * An empty span may have any offset (it is then empty at r's end). 0 or -1. */
int smb2_rd_span(struct smb2_rd *r, size_t off, size_t len, const char *what, struct smb2_rd *out);
/* Record a failure (the first one stays): -1. */
int smb2_rd_fail(struct smb2_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- requests: each appends its command's body (what follows the 64-byte header) to b ----
 *
 * Offsets in a body count from the start of its header, which is right before it. Each
 * returns 0, or -1 when out of memory, a name is not valid UTF-8, or a length does not fit
 * its field (refused, never cut). */

/* NEGOTIATE (2.2.3) with, when dialects hold 3.1.1, the negotiate contexts (2.2.3.1): preauth
 * integrity with SHA-512 and salt, the ciphers, and the signing algorithms when any. */
struct smb2_negotiate_req {
	const uint16_t *dialects;
	size_t ndialects;
	uint16_t security_mode;
	uint32_t caps;
	uint8_t guid[16];
	uint8_t salt[32];
	const uint16_t *ciphers; /* most wanted first */
	size_t nciphers;
	const uint16_t *signs;
	size_t nsigns;
};
int smb2_negotiate_enc(struct pv_buf *b, const struct smb2_negotiate_req *q);
/* SESSION_SETUP (2.2.5): prev, the PreviousSessionId (0: none). */
int smb2_session_setup_enc(struct pv_buf *b, uint8_t security_mode, const void *tok, size_t len,
			   uint64_t prev);
int smb2_logoff_enc(struct pv_buf *b);
/* TREE_CONNECT to \\server\share. */
int smb2_tree_connect_enc(struct pv_buf *b, const char *server, const char *share);

/* A create context (2.2.13.2): its name ("MxAc") and data. */
struct smb2_cctx {
	const char *name;
	const void *data;
	size_t len;
};
struct smb2_create_req {
	const char *path; /* share-relative, '/'-separated UTF-8; "" is the share's root */
	uint32_t access, attrs, share, disposition, options;
	uint8_t oplock;
	const struct smb2_cctx *ctx;
	size_t nctx;
};
int smb2_create_enc(struct pv_buf *b, const struct smb2_create_req *q);
int smb2_close_enc(struct pv_buf *b, const uint8_t fid[16], uint16_t flags);
int smb2_flush_enc(struct pv_buf *b, const uint8_t fid[16]);
int smb2_read_enc(struct pv_buf *b, const uint8_t fid[16], uint64_t off, uint32_t len);
int smb2_write_enc(struct pv_buf *b, const uint8_t fid[16], uint64_t off, const void *data,
		   uint32_t len);
/* LOCK (2.2.26) of n ranges. */
struct smb2_lock {
	uint64_t off, len;
	uint32_t flags; /* SMB2_LOCKFLAG_*: 1 shared, 2 exclusive, 4 unlock, 0x10 fail at once */
};
int smb2_lock_enc(struct pv_buf *b, const uint8_t fid[16], const struct smb2_lock *locks, size_t n);
/* IOCTL (2.2.31); fsctl: SMB2_0_IOCTL_IS_FSCTL. */
int smb2_ioctl_enc(struct pv_buf *b, uint32_t ctl, const uint8_t fid[16], const void *in,
		   uint32_t inlen, uint32_t max_out, bool fsctl);
int smb2_query_dir_enc(struct pv_buf *b, const uint8_t fid[16], uint8_t info_class, uint8_t flags,
		       const char *pattern, uint32_t out_len);
int smb2_notify_enc(struct pv_buf *b, const uint8_t fid[16], uint16_t flags, uint32_t filter,
		    uint32_t out_len);
int smb2_query_info_enc(struct pv_buf *b, uint8_t type, uint8_t info_class, const uint8_t fid[16],
			uint32_t out_len, uint32_t additional);
int smb2_set_info_enc(struct pv_buf *b, uint8_t type, uint8_t info_class, const uint8_t fid[16],
		      const void *data, uint32_t len);
/* FSCTL_VALIDATE_NEGOTIATE_INFO (MS-SMB2 2.2.31.4): its input, what the client's NEGOTIATE
 * request q said again (Capabilities, ClientGuid, SecurityMode, the dialects offered). */
#define SMB2_FSCTL_VALIDATE_NEGOTIATE 0x00140204u
int smb2_validate_neg_info(struct pv_buf *b, const struct smb2_negotiate_req *q);
/* FILE_RENAME_INFORMATION_TYPE_2 (MS-FSCC 2.4.37.2) naming path (share-relative), the data
 * of a SET_INFO of class 10. */
int smb2_rename_info(struct pv_buf *b, const char *path, bool replace);
/* A lease request (MS-SMB2 2.2.13.2.8 SMB2_CREATE_REQUEST_LEASE, 32 bytes, or 2.2.13.2.10
 * SMB2_CREATE_REQUEST_LEASE_V2, 52 bytes, for 3.x), the data of a create context "RqLs":
 * the key and the caching state asked (SMB2_LEASE_*). */
#define SMB2_LEASE_READ	  0x1u
#define SMB2_LEASE_HANDLE 0x2u
#define SMB2_LEASE_WRITE  0x4u
#define SMB2_OPLOCK_LEASE 0xffu /* CREATE's RequestedOplockLevel with a lease context */
int smb2_lease_ctx(uint8_t *out, size_t outlen, const uint8_t key[16], uint32_t state, bool v2);
/* Durable handles, v2 (3.0 on): the data of a create context "DH2Q" (2.2.13.2.11
 * SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2, 32 bytes: Timeout 0, the server's; Flags 0, not
 * persistent; the open's CreateGuid) and of a "DH2C" (2.2.13.2.12 ..._RECONNECT_V2, 36 bytes:
 * the FileId the open had, its CreateGuid, Flags 0), which claims the open again on a new
 * connection after the old one broke. Each returns its length. */
#define SMB2_DURABLE_CTX_LEN   32
#define SMB2_RECONNECT_CTX_LEN 36
int smb2_durable_ctx(uint8_t out[SMB2_DURABLE_CTX_LEN], const uint8_t guid[16]);
int smb2_reconnect_ctx(uint8_t out[SMB2_RECONNECT_CTX_LEN], const uint8_t fid[16],
		       const uint8_t guid[16]);
/* LEASE_BREAK_ACK (2.2.24.2): the key, the state the break left. */
int smb2_lease_break_ack_enc(struct pv_buf *b, const uint8_t key[16], uint32_t state);

/* ---- answers: each decodes the body of the message m (header included, so offsets from
 * the header are checked against the message) after the caller read its header ----
 *
 * Each returns 0, or -1 with m->why saying what does not fit ("CREATE with a body of 70
 * bytes, 88 expected"). What they point at (spans) lives in the message. */

/* 3.1.1's negotiate contexts as the answer has them (what they mean is smb2_negotiated's). */
struct smb2_negotiate_rsp {
	uint16_t security_mode, dialect;
	uint8_t guid[16]; /* ServerGuid */
	uint32_t caps, max_transact, max_read, max_write;
	struct smb2_rd secbuf;
	bool has_preauth, has_cipher, has_sign;
	uint16_t hash_count, hash, cipher_count, cipher, sign_count, sign;
};
int smb2_negotiate_dec(struct smb2_rd *m, struct smb2_negotiate_rsp *o);
struct smb2_session_setup_rsp {
	uint16_t flags;
	struct smb2_rd token;
};
int smb2_session_setup_dec(struct smb2_rd *m, struct smb2_session_setup_rsp *o);
struct smb2_tree_connect_rsp {
	uint8_t type;
	uint32_t flags, caps, access;
};
int smb2_tree_connect_dec(struct smb2_rd *m, struct smb2_tree_connect_rsp *o);
struct smb2_create_rsp {
	uint8_t oplock;
	uint32_t action, attrs;
	uint64_t alloc, eof;
	uint8_t fid[16];
	struct smb2_rd ctx; /* the create contexts, as they came */
};
int smb2_create_dec(struct smb2_rd *m, struct smb2_create_rsp *o);
/* Among a CREATE answer's contexts (o->ctx; 2.2.14.2: Next, NameOffset, NameLength, DataOffset,
 * DataLength, each offset from its context's start), the data of the one named name (4
 * characters): 1 and *data; 0 when there is none; -1 (ctx->why) when one does not fit or the
 * chain does not move on. */
int smb2_create_ctx_find(struct smb2_rd *ctx, const char *name, struct smb2_rd *data);
int smb2_close_dec(struct smb2_rd *m, uint64_t *eof);
/* A lease break notification (2.2.23.2, an OPLOCK_BREAK with MessageId 0xFFFFFFFFFFFFFFFF and
 * a body of 44 bytes): its key, the state it breaks to, whether the server waits for an ack. */
struct smb2_lease_break {
	uint8_t key[16];
	uint32_t state;
	bool ack;
};
int smb2_lease_break_dec(struct smb2_rd *m, struct smb2_lease_break *o);
int smb2_read_dec(struct smb2_rd *m, struct smb2_rd *data);
int smb2_write_dec(struct smb2_rd *m, uint32_t *count);
struct smb2_ioctl_rsp {
	uint32_t ctl;
	uint8_t fid[16];
	struct smb2_rd in, out;
};
int smb2_ioctl_dec(struct smb2_rd *m, struct smb2_ioctl_rsp *o);
/* QUERY_DIRECTORY, CHANGE_NOTIFY and QUERY_INFO: their output buffer. */
int smb2_query_dir_dec(struct smb2_rd *m, struct smb2_rd *buf);
int smb2_notify_dec(struct smb2_rd *m, struct smb2_rd *buf);
int smb2_query_info_dec(struct smb2_rd *m, struct smb2_rd *buf);
/* LOGOFF, FLUSH, LOCK, SET_INFO, TREE_DISCONNECT: a body of StructureSize only (2.2.8,
 * 2.2.18, 2.2.27, 2.2.40, 2.2.12). */
int smb2_empty_dec(struct smb2_rd *m, uint16_t cmd);

/* FileDirectoryInformation entries (MS-FSCC 2.4.10), the buffer of a QUERY_DIRECTORY answer:
 * each entry checked against the buffer (its name inside it, NextEntryOffset past it and
 * inside the buffer, a name of at most 255 characters, MS-FSCC 2.1.5.2) and its name turned
 * into UTF-8 and refused when it is not a name (empty, a separator or a NUL in it: it would
 * name another file than the one listed). smb2_dir_init_class reads the other classes a
 * capture holds (learn): FileFullDirectory (2), FileBothDirectory (3), FileNames (12: a name
 * alone, no size nor attributes), FileIdBothDirectory (37), FileIdFullDirectory (38). */
struct smb2_dirent {
	char name[768]; /* 255 UTF-16 units: at most 765 bytes of UTF-8 */
	bool dir;
	uint64_t size;
	uint64_t mtime; /* LastWriteTime: 100 ns units since 1601 (MS-DTYP FILETIME) */
};
struct smb2_dir_it {
	struct smb2_rd r;
	bool end;
	uint8_t name_at; /* where an entry's name is: its class's fixed part */
};
void smb2_dir_init(struct smb2_dir_it *it, const struct smb2_rd *buf);
/* -1 for a class it does not read. */
int smb2_dir_init_class(struct smb2_dir_it *it, const struct smb2_rd *buf, uint8_t info_class);
/* 1 and *e the next entry, 0 at the end, -1 when malformed (it->r.why says why). "." and ".."
 * are given like any other. */
int smb2_dir_next(struct smb2_dir_it *it, struct smb2_dirent *e);

/* ---- security (smb/sec.c) ---- */

/* The dialects this client offers, in the order Windows 10 and 11 list them (2.0.2 to 3.1.1:
 * the server takes the highest it speaks), and the ciphers and signing algorithms of 3.1.1 in
 * Windows' order of preference: AES-128-GCM, AES-128-CCM, AES-256-GCM, AES-256-CCM;
 * AES-GMAC, AES-CMAC. */
extern const uint16_t smb2_dialects[5];
extern const uint16_t smb2_ciphers[4];
extern const uint16_t smb2_signs[2];

/* What a connection negotiated (MS-SMB2 3.2.5.2), from what was offered and the answer. */
struct smb2_conn {
	uint16_t dialect;
	uint16_t cipher;   /* enum smb2_cipher; SMB2_NO_CIPHER: this connection cannot encrypt */
	uint16_t sign_alg; /* enum smb2_sign_alg */
	bool sign_required;
	bool multi_credit;
	uint32_t max_read;   /* the server's MaxReadSize */
	uint8_t preauth[64]; /* 3.1.1: Connection.PreauthIntegrityHashValue */
	/* the answer as it came, for FSCTL_VALIDATE_NEGOTIATE_INFO (3.0, 3.0.2) to hold against:
	 * Connection.ServerCapabilities, ServerGuid, ServerSecurityMode */
	uint32_t server_caps;
	uint8_t server_guid[16];
	uint16_t server_mode;
};
/* Check the NEGOTIATE answer a against the offer q and fill c (its preauth hash left as it
 * is): 0, or -1 with why (for "SMB to 'server': <why>") when the server chose what was not
 * offered or broke a rule of MS-SMB2 3.2.5.2 (3.1.1 without the preauth context or with
 * another hash, more than one cipher or signing algorithm chosen). */
int smb2_negotiated(const struct smb2_negotiate_req *q, const struct smb2_negotiate_rsp *a,
		    struct smb2_conn *c, char *why, size_t len);
/* Whether a connection of this dialect checks its NEGOTIATE with FSCTL_VALIDATE_NEGOTIATE_INFO
 * after a logon's first TREE_CONNECT (MS-SMB2 3.2.5.5): 3.0 and 3.0.2. Not 2.x, which has no
 * such check, nor 3.1.1, whose preauth integrity hash covers NEGOTIATE (a 3.1.1 server ends
 * the connection on it, MS-SMB2 3.3.5.15.12). */
bool smb2_validates(uint16_t dialect);
/* The VALIDATE_NEGOTIATE_INFO answer (MS-SMB2 2.2.32.6: the output of a successful IOCTL)
 * held against what the NEGOTIATE answer settled in c (MS-SMB2 3.2.5.14.12): Capabilities,
 * Guid, SecurityMode and Dialect the same. 0, or -1 with why naming what differs ("its
 * dialect is 3.0, its NEGOTIATE answer said 3.0.2"), or that the output is not 24 bytes. */
int smb2_validated(const struct smb2_conn *c, const struct smb2_rd *out, char *why, size_t len);
/* One step of the preauth integrity hash: h = SHA-512(h || msg) (MS-SMB2 3.2.5.2, 3.2.5.3). */
void smb2_preauth(uint8_t h[64], const void *msg, size_t len);

const char *smb2_cipher_name(uint16_t cipher); /* "AES-128-GCM"; "no cipher" for 0 */
const char *smb2_sign_name(uint16_t alg);      /* "AES-128-GMAC" */
bool smb2_cipher_known(uint16_t cipher);

/* A session's keys (MS-SMB2 3.2.5.3.1): Session.SigningKey and, when the connection has a
 * cipher, EncryptionKey (client to server) and DecryptionKey, ready to use. */
struct pv_aead;
struct smb2_keys {
	uint16_t sign_alg, cipher;
	uint8_t sign[16];
	struct pv_aead *gmac, *enc, *dec;
	uint8_t nonce_fixed[4]; /* this session's nonces: these bytes, then a counter */
	uint64_t nonce_count;
};
/* From session_key (sklen bytes: the logon's; the first 16 are Session.SessionKey, all of
 * them Session.FullSessionKey for the AES-256 ciphers) on connection c: for 2.x the key
 * itself signs (HMAC-SHA256); for 3.0 and 3.0.2 the SP800-108 KDF with the labels of MS-SMB2
 * 3.1.4.2 ("SMB2AESCMAC", "SmbSign"; "SMB2AESCCM", "ServerIn "/"ServerOut"); for 3.1.1 with
 * "SMBSigningKey", "SMBC2SCipherKey", "SMBS2CCipherKey" and the session's preauth hash as
 * context. nonce_fixed gets random bytes (or is given, non-NULL, for tests). 0, or -1 when
 * out of memory (k is then cleared). */
int smb2_keys_make(struct smb2_keys *k, const struct smb2_conn *c, const uint8_t *session_key,
		   size_t sklen, const uint8_t preauth[64], const uint8_t *nonce_fixed);
/* A signing key as it is (tests, and the published signatures): alg with key. */
int smb2_keys_signing(struct smb2_keys *k, uint16_t alg, const uint8_t key[16]);
/* Wipe and free what k holds; k is then all zero (a cleared k may be cleared again). */
void smb2_keys_clear(struct smb2_keys *k);

/* Signing (MS-SMB2 3.1.4.1): the message at msg, len bytes from its header to the next
 * message of a compound (its padding included) or to the end of the frame. smb2_sign sets
 * SMB2_FLAGS_SIGNED, zeroes the signature field and writes the signature there (AES-GMAC's
 * nonce is the message id and whether it is an answer or a CANCEL, from the header).
 * smb2_verify: 0 when the signature is k's (compared in constant time), -1 when not; msg is
 * as it was on return. len is at least SMB2_HDR. */
void smb2_sign(uint8_t *msg, size_t len, const struct smb2_keys *k);
int smb2_verify(uint8_t *msg, size_t len, const struct smb2_keys *k);

/* The transform header (MS-SMB2 2.2.41): 52 bytes before the encrypted messages. */
#define SMB2_TF 52
struct smb2_tf {
	const uint8_t *sig, *nonce; /* 16 bytes each */
	uint32_t size;		    /* OriginalMessageSize */
	uint16_t flags;
	uint64_t session;
};
/* Whether a frame starts with a transform header's protocol id (0xFD 'S' 'M' 'B'). */
bool smb2_is_tf(const uint8_t *p, size_t len);
/* The transform header at the start of r: 0, or -1 (r->why) when it is shorter than 52 bytes,
 * its Flags are not 1 (encrypted), or its OriginalMessageSize is not what follows it. */
int smb2_tf_dec(struct smb2_rd *r, struct smb2_tf *t);
/* The nonce of the next message k encrypts (16 bytes, the unused tail zero): unique under the
 * key, as MS-SMB2 3.1.4.3 asks (nonce_fixed, then a 64-bit counter). */
void smb2_nonce(struct smb2_keys *k, uint8_t nonce[16]);
/* Encrypt the len bytes of messages at tf + SMB2_TF under k's EncryptionKey with nonce (its 16
 * bytes go into the header as given; the cipher uses the first 11 or 12), and write the
 * transform header for session sid at tf (MS-SMB2 3.1.4.3: the AAD is the header from its
 * Nonce on). */
void smb2_seal(const struct smb2_keys *k, uint64_t sid, const uint8_t nonce[16], uint8_t *tf,
	       size_t len);
/* Decrypt in place what follows the transform header at tf (len bytes, as its
 * OriginalMessageSize says: smb2_tf_dec checked it) under k's DecryptionKey: 0, or -1 when the
 * tag does not match. */
int smb2_unseal(const struct smb2_keys *k, uint8_t *tf, size_t len);

#endif
