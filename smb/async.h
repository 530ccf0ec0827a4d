/* smb/async.h: an event-driven SMB2 client for the built-in load driver: one thread carries
 * many connections (one per simulated user) over non-blocking sockets and one epoll set.
 *
 * A connection is opened in the background (TCP connect, NEGOTIATE, SESSION_SETUP with NTLMv2,
 * TREE_CONNECT) and then takes requests; each request completes through its callback, called
 * from pv_smba_loop_run(), with the answer's status and body. Requests on one connection may be
 * in flight at once (up to the credits the server granted). Every wait is bounded: a request
 * gets its final answer within its connection's timeout (interim STATUS_PENDING answers do not
 * extend it), or the connection is lost and every request on it completes with PV_EUNREACH.
 *
 * Lengths and offsets in answers are checked as in smb/wire.c (the blocking client of the tree
 * builder): a malformed answer loses the connection (PV_EREMOTE), never the process. */
#ifndef PV_SMB_ASYNC_H
#define PV_SMB_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/secret.h"

struct pv_smba_loop;
struct pv_smba;

/* A request's outcome: code is PV_OK when an answer came (whatever its NT status), else the
 * connection's failure (message in msg). The body points into the answer (valid during the
 * callback only): the command's fixed part and what follows, blen bytes. */
struct pv_smba_done {
	int code;
	const char *msg;
	uint32_t status; /* NT status of the answer */
	const uint8_t *body;
	size_t blen;
	const uint8_t *buf; /* the answer's variable part (OutputBuffer, Buffer) when present */
	size_t buflen;
	uint8_t fid[16];    /* CREATE: the file id */
	uint64_t size;	    /* CREATE: EndOfFile */
	double seconds;	    /* from sending to the answer */
};

typedef void (*pv_smba_cb)(struct pv_smba *c, void *arg, const struct pv_smba_done *d);

int pv_smba_loop_new(struct pv_smba_loop **out);
/* Close every connection (their pending requests complete with PV_EUNREACH first), free. */
void pv_smba_loop_free(struct pv_smba_loop *l);
/* Wait up to timeout_ms for I/O and handle it, run the callbacks due and the deadlines (those
 * are looked at every 50 ms at most: a timeout is seen up to 50 ms late). PV_OK, or PV_EIO
 * when epoll fails. */
int pv_smba_loop_run(struct pv_smba_loop *l, int timeout_ms);
/* Connections open or opening. */
size_t pv_smba_loop_count(const struct pv_smba_loop *l);

struct pv_smba_opts {
	const char *host;      /* what to connect to: an alias (resolved by the system's
				* resolver: the hosts block) or an address */
	const char *server;    /* the name in \\server\share (the alias: Kerberos needs it) */
	const char *share;
	const char *workgroup; /* NTLM domain */
	const char *user;
	const struct pv_secret *password;
	int timeout_ms;	       /* per request and for the whole opening; 0: 10 s */
	/* Kerberos (SPNEGO) instead of NTLMv2 when set: called with the server's token (NULL
	 * for the first), it appends the next token to out; *done and the session key once the
	 * exchange is complete. PV_OK or a failure (its message recorded). password unused. */
	int (*auth)(void *auth_arg, const uint8_t *in, size_t inlen, struct pv_buf *out,
		    bool *done, uint8_t session_key[16]);
	void *auth_arg;
};

/* Start opening a connection; ready is called once when it is usable (d->code PV_OK) or has
 * failed (d->code and msg: PV_EUNREACH, PV_ECRED for a refused logon, PV_EREMOTE). The strings
 * are copied; the password is used during the opening only. */
int pv_smba_open(struct pv_smba_loop *l, const struct pv_smba_opts *o, pv_smba_cb ready,
		 void *arg, struct pv_smba **out);
/* Close the connection now: pending requests complete with PV_EUNREACH ("closed"). */
void pv_smba_close_conn(struct pv_smba *c);
bool pv_smba_usable(const struct pv_smba *c);
const char *pv_smba_error(const struct pv_smba *c);

/* Requests (MS-SMB2 2.2.13-2.2.39). path: relative to the share, '/'-separated. Each returns
 * PV_OK when queued, else the failure (also when the connection is not usable), and the
 * callback is then not called. */
#define PV_SMBA_READ	  0x00120089u /* FILE_GENERIC_READ */
#define PV_SMBA_WRITE	  0x0012019fu /* FILE_GENERIC_READ | FILE_GENERIC_WRITE */
#define PV_SMBA_DELETE	  0x00010000u
#define PV_SMBA_OPEN	  1u /* FILE_OPEN */
#define PV_SMBA_CREATE	  2u /* FILE_CREATE */
#define PV_SMBA_OVERWRITE 5u /* FILE_OVERWRITE_IF */
#define PV_SMBA_DIR	  0x00000001u /* FILE_DIRECTORY_FILE */
#define PV_SMBA_NONDIR	  0x00000040u /* FILE_NON_DIRECTORY_FILE */
#define PV_SMBA_DELCLOSE  0x00001000u /* FILE_DELETE_ON_CLOSE */
int pv_smba_create(struct pv_smba *c, const char *path, uint32_t access, uint32_t disposition,
		   uint32_t options, pv_smba_cb cb, void *arg);
int pv_smba_closefile(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg);
/* At most 65536 bytes per READ or WRITE. */
int pv_smba_read(struct pv_smba *c, const uint8_t fid[16], uint64_t off, uint32_t len,
		 pv_smba_cb cb, void *arg);
int pv_smba_write(struct pv_smba *c, const uint8_t fid[16], uint64_t off, const void *data,
		  uint32_t len, pv_smba_cb cb, void *arg);
/* FileDirectoryInformation entries; restart for the first call. */
int pv_smba_list(struct pv_smba *c, const uint8_t fid[16], bool restart, pv_smba_cb cb, void *arg);
/* FileNetworkOpenInformation (MS-FSCC 2.4.29: EndOfFile at 40 of the buffer). */
int pv_smba_stat(struct pv_smba *c, const uint8_t fid[16], pv_smba_cb cb, void *arg);
/* FileRenameInformation: the open file to path (replacing what is there when replace). */
int pv_smba_rename(struct pv_smba *c, const uint8_t fid[16], const char *path, bool replace,
		   pv_smba_cb cb, void *arg);

/* Walk FileDirectoryInformation entries (the buffer of a list answer): fn gets each name
 * (UTF-8) and whether it is a folder; "." and ".." are skipped. PV_EREMOTE when an entry does
 * not fit, or its name is not UTF-16 or not a name (empty, a separator or a NUL in it). */
int pv_smba_entries(const uint8_t *buf, size_t len,
		    int (*fn)(void *arg, const char *name, bool dir, uint64_t size), void *arg);

#endif
