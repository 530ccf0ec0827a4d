/* smb/internal.h: what the files of smb/ share; not for use outside the module. */
#ifndef PV_SMB_INTERNAL_H
#define PV_SMB_INTERNAL_H

#include <libsmbclient.h>

/* lib.c: libsmbclient's functions, loaded at the first pv_smb_lib_open() (dlopen): call them as
 * SMBC(smbc_new_context)(). */
#define SMBC_FUNCS(X)                                                                              \
	X(smbc_new_context)                                                                        \
	X(smbc_free_context)                                                                       \
	X(smbc_init_context)                                                                       \
	X(smbc_set_context)                                                                        \
	X(smbc_setDebug)                                                                           \
	X(smbc_setTimeout)                                                                         \
	X(smbc_setOptionUserData)                                                                  \
	X(smbc_getOptionUserData)                                                                  \
	X(smbc_setFunctionAuthDataWithContext)                                                     \
	X(smbc_setOptionNoAutoAnonymousLogin)                                                      \
	X(smbc_setOptionUseKerberos)                                                               \
	X(smbc_setOptionFallbackAfterKerberos)                                                     \
	X(smbc_setOptionUseCCache)                                                                 \
	X(smbc_getFunctionOpen)                                                                    \
	X(smbc_getFunctionWrite)                                                                   \
	X(smbc_getFunctionClose)                                                                   \
	X(smbc_getFunctionUnlink)                                                                  \
	X(smbc_getFunctionMkdir)                                                                   \
	X(smbc_getFunctionRmdir)                                                                   \
	X(smbc_getFunctionOpendir)                                                                 \
	X(smbc_getFunctionReaddir)                                                                 \
	X(smbc_getFunctionReaddirPlus)                                                             \
	X(smbc_getFunctionClosedir)

struct smbc_api {
#define SMBC_MEMBER(fn) __typeof__(fn) *fn;
	SMBC_FUNCS(SMBC_MEMBER)
#undef SMBC_MEMBER
};

extern const struct smbc_api *pv_smb_lib_api;
/* Load libsmbclient once; PV_EIO (recorded) when it cannot be. */
int pv_smb_lib_open(void);
#define SMBC(fn) (pv_smb_lib_api->fn)

#include "smb/async.h"
#include "smb/smb.h"

struct logon {
	const char *workgroup;
	const char *user;
	const struct pv_secret *password; /* NULL: Kerberos */
};

struct pv_smb_lib {
	SMBCCTX *ctx;
	struct logon l; /* points into the copies below; the auth callback reads it */
	char *server, *workgroup, *user;
	struct pv_secret *password;
	unsigned char *buf; /* write buffer, made on first use */
	size_t bufsize;
	bool reached; /* an operation has succeeded: a later EACCES is not a logon failure */
};

/* sync.c: pv_smb_sync_connect over fd, a stream socket already connected to an SMB2 server
 * (server only names it in messages), with a timeout in milliseconds that plays the part of
 * pv_smb_sync_connect's seconds, deadlines included. The connection owns fd from the call on,
 * success or not (pv_smb_sync_free closes it). For the tests and the fuzz target: a scripted
 * server on the other end of a socketpair(2). */
int smb2_connect_fd(int fd, const char *server, int timeout_ms, struct pv_smb_sync **out);

/* ---- sync.c, for build.c: the synchronous client's connection, and waiting on it ---- */

/* Deadlines, in units of the timeout T (smb.h says the rule): a final answer within ANSWER_T,
 * a tree build within T times (BUILD_T + items + MiB written). */
#define ANSWER_T 3
#define BUILD_T	 8

struct pv_smb_sync {
	struct pv_smb_loop *l;
	struct pv_smb_conn *c;
	char *server;
	int64_t tmo;	  /* T, the timeout, in ms */
	double build_due; /* the tree build must end by then (pv_now() seconds); 0: no build */
	int64_t build_ms; /* how long that build was given */
	bool lost_by_us;  /* the build's deadline closed it */
	char desc[96];	  /* what the last session spoke on its share (pv_smb_sync_describe) */
	bool enc, sign;
	char *who;			 /* the user logged on (pv_smb_sync_logon), for messages */
	const char *user, *share, *base; /* the build's, for messages and names */
};

struct listing;

/* One request waited for. */
struct sync_call {
	struct pv_smb_sync *s;
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

/* The callback of a request waited for (k its arg): k filled, done. */
void sync_on_call(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d);
/* Wait for k, whose request was queued with r (PV_OK, or the failure recorded); its code. */
int sync_wait(struct pv_smb_sync *s, struct sync_call *k, int r);
/* Run the loop until *done, the build's deadline aside. */
void sync_run_until(struct pv_smb_sync *s, const bool *done);
/* One turn of the loop (100 ms at most), the build's deadline kept; false when the loop
 * failed (the connection is lost then). */
bool sync_turn(struct pv_smb_sync *s);
/* A failure of `what` on base/rel with an NT status, recorded (PV_EREMOTE; "the disk of ..
 * is full" for ENOSPC). */
int sync_path_fail(struct pv_smb_sync *s, uint32_t status, const char *what, const char *rel);
/* The share-relative name of base/rel ("" rel: base itself) into full; PV_ECONFIG past
 * PATH_LIMIT. */
int sync_name(const struct pv_smb_sync *s, const char *rel, char full[1024]);
/* Open base/rel with one CREATE and wait for its id; a refusal is reported as `what` failed. */
int sync_open(struct pv_smb_sync *s, const char *rel, uint32_t access, uint32_t disposition,
	      uint32_t options, const char *what, uint8_t fid[16]);
/* CLOSE fid and wait (its outcome does not matter: the caller is done with the file). */
void sync_close(struct pv_smb_sync *s, const uint8_t fid[16]);

/* conn.c: pv_smb_open over fd, a stream socket already connected to an SMB2 server (made
 * non-blocking here), o->host only naming it in messages; from there on the same path as a
 * connection pv_smb_open made: the opening starts when the loop finds fd writable. The
 * connection owns fd from the call on, success or not. For the tests and the fuzz target: a
 * scripted server on the other end of a socketpair(2). */
int smba_open_fd(struct pv_smb_loop *l, int fd, const struct pv_smb_open_opts *o, pv_smb_cb ready,
		 void *arg, struct pv_smb_conn **out);
/* logon.c: for the same tests and fuzz targets, every connection opened from here on (until
 * turned off) uses fixed bytes where it would use random ones: its client GUID, its 3.1.1
 * preauth salt, its NTLMv2 client challenge and its nonces. The session keys, and with them
 * every signature and encryption of a recorded conversation, then hold when it is replayed.
 * Never for real traffic. */
void smba_test_fixed(bool on);

/* listing.c: what a tree holds, paths relative to its base, sorted (listing_walk) */
struct found {
	char *path;
	bool dir;
	bool used; /* an item of the build was found here (the rest are extras) */
	uint64_t size;
	uint64_t mtime; /* LastWriteTime (FILETIME); 0 when the listing did not say */
};

struct listing {
	struct found *v;
	size_t n, cap;
	size_t seen; /* entries the server listed, "." and ".." included (LIST_MAX) */
};

/* Bytes in a share-relative path (base/rel) that either client creates or lists. A longer
 * path is an error naming it, never cut: a cut folder name would be listed again (the walk
 * repeats) or the wrong file made. */
#define PATH_LIMIT 1023
/* Entries one tree's listing may show (dots included), so a server cannot make a walk grow
 * without end; no fileset comes near it. */
#define LIST_MAX (1u << 20)

int listing_add(struct listing *l, const char *path, bool dir, uint64_t size, uint64_t mtime);
/* One entry the server listed in folder rel ("" for the base) of the tree at base: skipped
 * when it is "." or "..", else added as rel/name. Records PV_EREMOTE, naming the folder and
 * the name, when the name is empty or holds '/' or '\\', when base/rel/name would pass
 * PATH_LIMIT, or when the tree shows more than LIST_MAX entries. where: how the message names
 * the tree ("//server/share/base"). */
int listing_entry(struct listing *l, const char *where, const char *base, const char *rel,
		  const char *name, bool dir, uint64_t size, uint64_t mtime);
/* Everything below a tree's base into l, sorted: list_dir adds what folder rel ("" for the
 * base) holds, paths relative to the base; it is called for the base, then for every folder
 * found. Stops at the first failure. */
int listing_walk(struct listing *l, int (*list_dir)(void *ctx, const char *rel, struct listing *l),
		 void *ctx);
struct found *listing_lookup(const struct listing *l, const char *path);
void listing_release(struct listing *l);

/* What to do with a fileset item given the listing: a file matches when its size does and,
 * when the item has an mtime, its LastWriteTime is within fft seconds of it (robocopy's /FFT
 * takes 2). The entry found is marked used. PLAN_MISMATCH (a folder where a file belongs or
 * the reverse) has recorded a PV_EREMOTE error naming the path. */
enum plan { PLAN_KEEP, PLAN_MAKE, PLAN_FIX, PLAN_MISMATCH };
enum plan listing_plan(const struct listing *l, const struct pv_smb_item *it, unsigned fft,
		       const char *server, const char *share, const char *base);

#endif
