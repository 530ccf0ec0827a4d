/* smb/async.h: the SMB2 engine: every connection our SMB2 client makes, the load driver's
 * (one per simulated user) and the tree builder's (smb/sync.c wraps this in synchronous
 * calls), is carried by one event loop per thread over non-blocking sockets and one epoll set.
 * The messages are smb/smb2.h's: one codec.
 *
 * It speaks SMB 2.0.2 to 3.1.1 (the highest the server has; 3.1.1 with the preauth integrity
 * hash and the signing capabilities context) and signs and encrypts as MS-SMB2 asks:
 *   - signing: when the server requires it, every request after the logon is signed
 *     (HMAC-SHA256 for 2.x, AES-128-CMAC for 3.0 and 3.0.2, AES-128-GMAC or -CMAC as 3.1.1
 *     negotiated), each message of a compound on its own; every answer that comes signed is
 *     checked, and when signing is required every final answer must come signed. 3.1.1 signs
 *     TREE_CONNECT always, and the end of every logon must come signed;
 *   - encryption (the transform header, AES-128/256-CCM/GCM): every request of a session is
 *     encrypted when the server requires it for the session (SessionFlags ENCRYPT_DATA), when
 *     the logon asks for it (pv_smb_logon's encrypt), and every request on a share that
 *     requires it (ShareFlags ENCRYPT_DATA); the answer to an encrypted request must come
 *     encrypted, for our session, and open under its key;
 *   - 3.0 and 3.0.2: the negotiation checked after each session's first tree connect
 *     (FSCTL_VALIDATE_NEGOTIATE_INFO, signed: a downgrade on the way loses the connection);
 *     NTLM logons carry the MIC, the target name and the channel bindings (smb/ntlm.h).
 * An answer that breaks any of these rules, or that does not fit what it says about itself
 * (lengths, offsets: the codec checks them), loses the connection with PV_EREMOTE and words
 * saying which rule; never the process.
 *
 * A connection is opened in the background (TCP connect, NEGOTIATE, and with a user a
 * SESSION_SETUP with NTLMv2 or a SPNEGO callback, and with a share a TREE_CONNECT) and then
 * takes requests; each request completes through its callback, called from
 * pv_smb_loop_run(), with the answer's status and what it carried. Requests on one
 * connection may be in flight at once (up to the credits the server granted; the others wait,
 * in order). Every wait is bounded: a request gets its final answer within its connection's
 * timeout (interim STATUS_PENDING answers do not extend it), or the connection is lost and
 * every request on it completes with PV_EUNREACH. */
#ifndef PV_SMB_ASYNC_H
#define PV_SMB_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/secret.h"

struct pv_smb_loop;
struct pv_smb_conn;

/* A request's outcome: code is PV_OK when an answer came (whatever its NT status), else the
 * connection's failure (message in msg). What it points at lives in the answer (valid during
 * the callback only). */
struct pv_smb_done {
	int code;
	const char *msg;
	uint32_t status;    /* NT status of the answer */
	const uint8_t *buf; /* the answer's variable part (READ's data, a listing, QUERY_INFO's
			     * or IOCTL's output, a change notification) when present */
	size_t buflen;
	uint8_t fid[16]; /* CREATE: the file id */
	bool durable;	 /* CREATE: the server made the open durable (a "DH2Q" answered) */
	uint64_t size;	 /* CREATE, CLOSE: EndOfFile; WRITE: bytes written */
	double seconds;	 /* from sending to the answer */
};

typedef void (*pv_smb_cb)(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d);

int pv_smb_loop_new(struct pv_smb_loop **out);
/* Close every connection (their pending requests complete with PV_EUNREACH first), free. */
void pv_smb_loop_free(struct pv_smb_loop *l);
/* Wait up to timeout_ms for I/O and handle it, run the callbacks due and the deadlines (those
 * are looked at every 50 ms at most: a timeout is seen up to 50 ms late). PV_OK, or PV_EIO
 * when epoll fails. */
int pv_smb_loop_run(struct pv_smb_loop *l, int timeout_ms);
/* The same, waiting up to seconds (to the microsecond where the kernel can: epoll_pwait2). */
int pv_smb_loop_wait(struct pv_smb_loop *l, double seconds);
/* Connections open or opening. */
size_t pv_smb_loop_count(const struct pv_smb_loop *l);
/* How many connections the last wait found ready (0: it timed out, or failed). */
size_t pv_smb_loop_ready(const struct pv_smb_loop *l);

/* Kerberos (SPNEGO) instead of NTLMv2: called with the server's token (NULL for the first),
 * it appends the next token to out; *done and the session key (all of it, *keylen bytes, at
 * most 32: the AES-256 ciphers use the whole key) once the exchange is complete. PV_OK or a
 * failure (its message recorded). */
typedef int (*pv_smb_auth_fn)(void *auth_arg, const uint8_t *in, size_t inlen, struct pv_buf *out,
			      bool *done, uint8_t key[32], size_t *keylen);

/* Whether a session encrypts when the server does not require it (a playbook's
 * load.encryption: what encryption costs a server). */
enum pv_smb_encrypt {
	PV_SMB_ENCRYPT_AUTO = 0, /* only where the server or the share requires it */
	PV_SMB_ENCRYPT_ON,	 /* always, with the cipher the server picks */
	PV_SMB_ENCRYPT_AES128_CCM,
	PV_SMB_ENCRYPT_AES128_GCM,
	PV_SMB_ENCRYPT_AES256_CCM,
	PV_SMB_ENCRYPT_AES256_GCM, /* always, this cipher only (the only one offered) */
};

struct pv_smb_open_opts {
	const char *host;      /* what to connect to: an alias (resolved by the system's
				* resolver: the hosts block) or an address */
	const char *server;    /* the name in \\server\share (the alias: Kerberos needs it) */
	const char *share;     /* NULL: no TREE_CONNECT */
	const char *workgroup; /* NTLM domain */
	const char *user;      /* NULL: the opening ends with NEGOTIATE (pv_smb_logon next) */
	const struct pv_secret *password;
	int timeout_ms;	     /* per request and for the whole opening; 0: 10 s */
	pv_smb_auth_fn auth; /* Kerberos instead of NTLM when set; password unused */
	void *auth_arg;
	enum pv_smb_encrypt encrypt;
	/* Deadlines count from the later of a request's sending and the connection's last
	 * final answer, not from its sending alone: for a pipeline whose requests queue at the
	 * server (the tree builder's), the timeout bounds the time between answers. */
	bool pipelined;
	/* A broken connection's user logging on again, as a Windows client does (MS-SMB2
	 * 3.2.4.2.3): its ClientGuid the same on every connection (NULL: a random one), and the
	 * session it had (PreviousSessionId: the server ends that one first; 0: none), so that
	 * the server hands its durable opens back (pv_smb_reopen). */
	const uint8_t *client_guid;
	uint64_t prev_session;
};

/* Start opening a connection; ready is called once when it is usable (d->code PV_OK) or has
 * failed (d->code and msg: PV_EUNREACH, PV_ECRED for a refused logon, PV_EREMOTE). The strings
 * are copied; the password is used during the opening only. */
int pv_smb_open(struct pv_smb_loop *l, const struct pv_smb_open_opts *o, pv_smb_cb ready, void *arg,
		struct pv_smb_conn **out);
/* Log on (a connection opened without a user, or after pv_smb_logoff): the session and its
 * keys replace the connection's (one at a time). cb gets PV_OK, or the failure; a refused
 * logon (PV_ECRED, or PV_EREMOTE when a protocol setting of the server is why: the message
 * names it) leaves the connection usable for another. */
int pv_smb_logon(struct pv_smb_conn *c, const char *workgroup, const char *user,
		 const struct pv_secret *password, pv_smb_auth_fn auth, void *auth_arg,
		 enum pv_smb_encrypt encrypt, pv_smb_cb cb, void *arg);
/* TREE_CONNECT to share (the session's tree from then on); a refusal is d->status. On SMB 3.0
 * and 3.0.2 the session's first is followed by FSCTL_VALIDATE_NEGOTIATE_INFO before cb comes
 * (MS-SMB2 3.2.5.5): a negotiation found changed loses the connection, and cb gets that. */
int pv_smb_tree(struct pv_smb_conn *c, const char *share, pv_smb_cb cb, void *arg);
/* LOGOFF; the session's keys go once its answer has been checked with them. */
int pv_smb_logoff(struct pv_smb_conn *c, pv_smb_cb cb, void *arg);
/* Close the connection now: pending requests complete with PV_EUNREACH ("closed"). */
void pv_smb_close_conn(struct pv_smb_conn *c);
/* Lose the connection with this failure (code, message as printf): what is pending completes
 * with it. For deadlines kept by the caller (smb/sync.c's whole build). */
void pv_smb_abort(struct pv_smb_conn *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* From a callback: take no more answers of c in this turn of the loop; what came stays for
 * the next (which then does not wait). For synchronous callers (smb/sync.c), whose next
 * request goes after the loop returns: an answer to it must not be read before it is sent. */
void pv_smb_yield(struct pv_smb_conn *c);
/* Open, with a session and a tree when asked: requests may be made. */
bool pv_smb_usable(const struct pv_smb_conn *c);
/* No longer carries anything (failed, lost or closed). */
bool pv_smb_lost(const struct pv_smb_conn *c);
const char *pv_smb_error(const struct pv_smb_conn *c);
/* What the connection speaks, for messages: "SMB 3.1.1, encrypted (AES-128-GCM)", "SMB 3.0.2,
 * signed (AES-128-CMAC)", "SMB 3.1.1" (neither); "" before NEGOTIATE. Lives as long as c, and
 * changes with the session and the tree. */
const char *pv_smb_describe(const struct pv_smb_conn *c);
/* The negotiated dialect (0 before NEGOTIATE) and whether the session's requests go
 * encrypted (on the current tree), or signed. */
/* The connection's own TCP port (how the server's smbstatus names it); 0 when not known. */
int pv_smb_local_port(const struct pv_smb_conn *c);
uint16_t pv_smb_dialect(const struct pv_smb_conn *c);
/* The largest READ c takes: 64 KiB, or with large MTU (multi-credit, 2.1 on) the server's
 * MaxReadSize up to PV_SMB_READ_MAX; 0 before the negotiate. */
uint32_t pv_smb_max_read(const struct pv_smb_conn *c);
bool pv_smb_encrypting(const struct pv_smb_conn *c);
/* The connection's session id (0: none yet), for a logon again's prev_session. */
uint64_t pv_smb_session(const struct pv_smb_conn *c);
bool pv_smb_signing(const struct pv_smb_conn *c);

/* Requests (MS-SMB2 2.2.13-2.2.39), on the session and tree. path: relative to the share,
 * '/'-separated. Each returns PV_OK when queued, else the failure (also when the connection
 * is not usable), and the callback is then not called. */
#define PV_SMB_READ	 0x00120089u /* FILE_GENERIC_READ */
#define PV_SMB_WRITE	 0x0012019fu /* FILE_GENERIC_READ | FILE_GENERIC_WRITE */
#define PV_SMB_DELETE	 0x00010000u
#define PV_SMB_LIST	 0x00100081u /* FILE_LIST_DIRECTORY | READ_ATTRIBUTES | SYNCHRONIZE */
#define PV_SMB_PUT	 0x00100082u /* FILE_WRITE_DATA | READ_ATTRIBUTES | SYNCHRONIZE */
#define PV_SMB_ATTRS	 0x00000080u /* FILE_READ_ATTRIBUTES alone: a stat open, no ACL read */
#define PV_SMB_OPEN	 1u	     /* FILE_OPEN */
#define PV_SMB_CREATE	 2u	     /* FILE_CREATE */
#define PV_SMB_OPEN_IF	 3u	     /* FILE_OPEN_IF */
#define PV_SMB_OVERWRITE 5u	     /* FILE_OVERWRITE_IF */
#define PV_SMB_DIR	 0x00000001u /* FILE_DIRECTORY_FILE */
#define PV_SMB_NONDIR	 0x00000040u /* FILE_NON_DIRECTORY_FILE */
#define PV_SMB_DELCLOSE	 0x00001000u /* FILE_DELETE_ON_CLOSE */
#define PV_SMB_REPARSE	 0x00200000u /* FILE_OPEN_REPARSE_POINT: the link itself, not followed */
int pv_smb_create(struct pv_smb_conn *c, const char *path, uint32_t access, uint32_t disposition,
		  uint32_t options, pv_smb_cb cb, void *arg);
int pv_smb_closefile(struct pv_smb_conn *c, const uint8_t fid[16], pv_smb_cb cb, void *arg);
/* A READ of at most pv_smb_max_read(c) bytes, a WRITE of at most 65536. */
#define PV_SMB_READ_MAX (1u << 20)
int pv_smb_read(struct pv_smb_conn *c, const uint8_t fid[16], uint64_t off, uint32_t len,
		pv_smb_cb cb, void *arg);
int pv_smb_write(struct pv_smb_conn *c, const uint8_t fid[16], uint64_t off, const void *data,
		 uint32_t len, pv_smb_cb cb, void *arg);
/* FileDirectoryInformation entries; restart for the first call. */
int pv_smb_list(struct pv_smb_conn *c, const uint8_t fid[16], bool restart, pv_smb_cb cb,
		void *arg);
/* ... of the names pattern matches (a server's wildcards: *, ?; NULL: "*", every name), as a
 * client that looks for part of a folder or for one name asks. */
int pv_smb_list_match(struct pv_smb_conn *c, const uint8_t fid[16], bool restart,
		      const char *pattern, pv_smb_cb cb, void *arg);
/* FileNetworkOpenInformation (MS-FSCC 2.4.29: EndOfFile at 40 of the buffer). */
int pv_smb_stat(struct pv_smb_conn *c, const uint8_t fid[16], pv_smb_cb cb, void *arg);
/* FileRenameInformation: the open file to path (replacing what is there when replace). */
int pv_smb_rename(struct pv_smb_conn *c, const uint8_t fid[16], const char *path, bool replace,
		  pv_smb_cb cb, void *arg);
/* SET_INFO of a file information class (MS-FSCC 2.4: 4 FileBasicInformation, 13
 * FileDispositionInformation, 20 FileEndOfFileInformation, ...) with its data. */
int pv_smb_setinfo(struct pv_smb_conn *c, const uint8_t fid[16], uint8_t info_class,
		   const void *data, uint32_t len, pv_smb_cb cb, void *arg);
/* CREATE asking for a lease on the file (a create context "RqLs", v2 from 3.0; a plain CREATE
 * below 2.1): ls->key names the file's lease for this client (every open of the file the same
 * key), ls->state the caching asked (SMB2_LEASE_READ 1, HANDLE 2, WRITE 4). A lease break the
 * server waits for is acknowledged by the connection itself. */
struct pv_smb_lease {
	uint8_t key[16];
	uint32_t state;
	/* from 3.0, non-zero: the open is asked to be durable ("DH2Q", MS-SMB2 3.2.4.3.5) under
	 * this CreateGuid, so that it outlives a broken connection (d->durable: granted) */
	uint8_t guid[16];
};
int pv_smb_create_lease(struct pv_smb_conn *c, const char *path, uint32_t access,
			uint32_t disposition, uint32_t options, const struct pv_smb_lease *ls,
			pv_smb_cb cb, void *arg);
/* A durable open claimed again on a new connection after its old one broke (MS-SMB2 3.2.4.4:
 * a CREATE of the same path with a "DH2C" naming the old file id and the CreateGuid, and the
 * same lease): d->fid is its file id now. A server that no longer has it (it restarted, or
 * the open's timeout passed) answers OBJECT_NAME_NOT_FOUND. */
int pv_smb_reopen(struct pv_smb_conn *c, const char *path, const uint8_t fid[16],
		  const struct pv_smb_lease *ls, pv_smb_cb cb, void *arg);
int pv_smb_flush(struct pv_smb_conn *c, const uint8_t fid[16], pv_smb_cb cb, void *arg);
/* A byte-range lock (exclusive when excl), or its unlock; never waits for a conflicting one
 * (FAIL_IMMEDIATELY: a conflict is a status). */
int pv_smb_lock(struct pv_smb_conn *c, const uint8_t fid[16], uint64_t off, uint64_t len, bool excl,
		bool unlock, pv_smb_cb cb, void *arg);
/* An FSCTL (IOCTL, MS-SMB2 2.2.31) with its input; at most max_out bytes back in d->buf. */
int pv_smb_fsctl(struct pv_smb_conn *c, uint32_t ctl, const uint8_t fid[16], const void *in,
		 uint32_t inlen, uint32_t max_out, pv_smb_cb cb, void *arg);
/* CHANGE_NOTIFY on an open folder (filter: FILE_NOTIFY_CHANGE_*): the answer comes when
 * something changes, or STATUS_CANCELLED/NOTIFY_ENUM_DIR; it goes async at once (an interim
 * answer), so its deadline is the connection's like any other. */
int pv_smb_notify(struct pv_smb_conn *c, const uint8_t fid[16], uint32_t filter, pv_smb_cb cb,
		  void *arg);

/* A compound (MS-SMB2 3.2.4.1.4): the requests made between pv_smb_chain and pv_smb_send go
 * in one frame, each after the first related to it (SMB2_FLAGS_RELATED): a file id of
 * PV_SMB_RELATED means the file the first one opened. Signed message by message, encrypted
 * as a whole. pv_smb_send: PV_OK when the compound is queued; else the failure, and none of
 * its requests' callbacks is called (nor when a request of it was refused). */
extern const uint8_t PV_SMB_RELATED[16];
void pv_smb_chain(struct pv_smb_conn *c);
int pv_smb_send(struct pv_smb_conn *c);

/* Walk FileDirectoryInformation entries (the buffer of a list answer): fn gets each name
 * (UTF-8) and whether it is a folder; "." and ".." are skipped. PV_EREMOTE ("a malformed
 * listing: ...") when an entry does not fit (smb/smb2.h's iterator says why). */
int pv_smb_entries(const uint8_t *buf, size_t len,
		   int (*fn)(void *arg, const char *name, bool dir, uint64_t size), void *arg);

#endif
