/* smb/smb.h: SMB to the file server: our own SMB2 client (smb/async.h's engine, and the
 * synchronous calls of smb/sync.c below: many users' sessions on one connection, a file in one
 * compound request; SMB 2.0.2 to 3.1.1, signed or encrypted as the server or share requires)
 * for building trees and for `check`, and libsmbclient (the only place it is used, loaded with
 * dlopen when first needed) when PROVISION_SMB_CLIENT=libsmbclient asks for it, and as the
 * reference of the benchmarks. Nothing falls back to it.
 * Errors are recorded with pv_error(): PV_EUNREACH (refused, timeout, no route),
 * PV_ECRED (logon refused), PV_EREMOTE (any other SMB failure: the message names the path and
 * says "disk full" for ENOSPC, or names the server's setting a logon was refused for), PV_EIO
 * (out of memory, libsmbclient would not start).
 *
 * A libsmbclient session (struct pv_smb_lib) is one context holding one SMB connection of one
 * user. libsmbclient keeps process-wide state, so use sessions of one process from one thread;
 * for many users at once use many processes (phases/trees_smb.c forks workers). */
#ifndef PV_SMB_SMB_H
#define PV_SMB_SMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/secret.h"

struct pv_smb_lib;

/* A session to server as user. With password: NTLM as workgroup\user. With password NULL:
 * Kerberos with the ticket cache named by KRB5CCNAME (libsmbclient wants the user name and an
 * empty password then; an empty user would go anonymous). No network traffic happens until
 * the first operation. *out is freed with pv_smb_lib_free (NULL is fine). */
int pv_smb_lib_session(const char *server, const char *workgroup, const char *user,
		       const struct pv_secret *password, int timeout, struct pv_smb_lib **out);
void pv_smb_lib_free(struct pv_smb_lib *s);

/* What a tree holds: folders and files (paths relative to the tree's base, '/'-separated, a
 * folder before anything in it). */
struct pv_smb_item {
	const char *path;
	bool dir;
	uint64_t size;
	uint64_t mtime; /* the LastWriteTime to give the file (FILETIME: 100 ns units since
			 * 1601); 0: none (the server's time of writing stays) */
};

/* Fill buf with len bytes of item's content from offset. */
typedef void (*pv_smb_fill_fn)(void *ctx, size_t item, uint64_t offset, void *buf, size_t len);
/* Called after each file written (files and bytes since the last call); non-zero stops. */
typedef int (*pv_smb_tick_fn)(void *ctx, unsigned long files, uint64_t bytes);

struct pv_smb_tree_result {
	unsigned long dirs_made, files_made, files_fixed, files_ok;
	uint64_t bytes;
	unsigned long files_removed, dirs_removed; /* a mirror's extras */
};

/* How our client's build goes beyond `server`'s trees (NULL: the defaults: 16 files in
 * flight, sizes compared, extras left alone). */
struct pv_smb_build_opts {
	unsigned window; /* files (a compound each) in flight on a connection; 0: 16, at most 64 */
	bool mirror;	 /* what is under base and is not an item is removed (robocopy /MIR) */
	unsigned fft;	 /* an item's mtime matches a file's within this many seconds (/FFT: 2) */
	/* each file written: seconds from its compound's sending to its last answer (called
	 * from the thread of the connection that wrote it) */
	void (*on_file)(void *ctx, size_t item, double seconds);
	void *ctx;
};

/* Make //server/share/base hold items: base must exist; what is missing is made, a file of
 * another size is rewritten, what matches is left alone. When fresh is true the tree is taken
 * to be empty (no listing first). Extra entries are left in place. */
int pv_smb_lib_tree_build(struct pv_smb_lib *s, const char *share, const char *base,
			  const struct pv_smb_item *items, size_t n, bool fresh,
			  pv_smb_fill_fn fill, void *fill_ctx, pv_smb_tick_fn tick, void *tick_ctx,
			  struct pv_smb_tree_result *res);

/* Our own SMB2 client, synchronous (smb/sync.c): each call runs an engine loop of its own
 * (smb/async.h) until its answers come, as Samba's synchronous calls wrap its asynchronous
 * ones. One connection carries the sessions of many users, one after another (MS-SMB2
 * 3.3.5.5); a tree build sends each file as one compound request (CREATE + WRITE + CLOSE,
 * related), many in flight. It signs and encrypts as smb/async.h says: what the server or the
 * share requires, and an answer that breaks the rules loses the connection with PV_EREMOTE
 * ("SMB answer from 'server' has a bad signature: ...", "... failed decryption: ..."). A
 * connection is used from one thread.
 *
 * Time: with T the timeout given here (seconds; 10 when 0 or less):
 *   - connecting and negotiating take at most 3T;
 *   - every request gets its final answer within 3T of being sent, or of the last final
 *     answer when requests are pipelined (they queue at the server). Keep-alives and interim
 *     STATUS_PENDING answers (MS-SMB2 3.3.4.2) never extend it;
 *   - a tree build (logon to logoff) ends within T x (8 + its items + each file's size in
 *     MiB, rounded up): 10 s x (8 + 100 + 100) = 35 min for 100 files of under 1 MiB.
 * A deadline passed fails with PV_EUNREACH and a message saying which, and the connection
 * is lost (pv_smb_sync_lost): answers may still be on their way.
 *
 * What the server sends is checked before it is read (smb/smb2.h's reader): a frame shorter
 * than an SMB2 header (64 bytes) or longer than 1 MiB, a NetBIOS message other than a session
 * message or a keep-alive, or any length or offset pointing outside the frame or the answer
 * fails with PV_EREMOTE ("a malformed answer: ...") and loses the connection. Paths stay
 * within 1023 bytes (share-relative) and listings within 2^20 entries: beyond, an error names
 * the path. */
struct pv_smb_sync;

/* Connect and negotiate. On failure *out may still be set (free it). */
int pv_smb_sync_connect(const char *server, int timeout, struct pv_smb_sync **out);
/* What c spoke on the share its last session connected to, for messages (until then, what it
 * negotiated): "SMB 3.1.1, encrypted (AES-128-GCM)", "SMB 3.0.2, signed (AES-128-CMAC)",
 * "SMB 3.1.1"; "" before it negotiated. Lives as long as c. */
const char *pv_smb_sync_describe(const struct pv_smb_sync *c);
/* Whether that session signed or encrypted its requests. */
bool pv_smb_sync_signing(const struct pv_smb_sync *c);
bool pv_smb_sync_encrypting(const struct pv_smb_sync *c);
/* c's own TCP port (the server's smbstatus shows it beside the smbd serving c); 0: unknown. */
int pv_smb_sync_local_port(const struct pv_smb_sync *c);
/* Whether c can carry no more requests (the connection failed or closed, or never opened). */
bool pv_smb_sync_lost(const struct pv_smb_sync *c);
void pv_smb_sync_free(struct pv_smb_sync *c);

/* Log on as workgroup\user with password (NTLMv2): PV_OK; PV_ECRED when refused for the
 * credentials, PV_EREMOTE when for a protocol setting of the server (the message names it);
 * the connection stays usable after a refusal. */
int pv_smb_sync_logon(struct pv_smb_sync *c, const char *workgroup, const char *user,
		      const struct pv_secret *password);
/* Connect to share (the session's share from then on): PV_OK; PV_ECONFIG when there is no
 * such share (NT_STATUS_BAD_NETWORK_NAME), PV_ECRED when access is refused, PV_EREMOTE for
 * the rest (a share that requires encryption this connection cannot do: the message says). */
int pv_smb_sync_tree(struct pv_smb_sync *c, const char *share);
/* Log the session off (its answer checked with its keys before they go). */
int pv_smb_sync_logoff(struct pv_smb_sync *c);

/* pv_smb_lib_tree_build over c as workgroup\user with password (NTLM), then log off (a LOGOFF
 * answer that fails its signature or decryption fails the build too); o (may be NULL) as
 * pv_smb_build_opts says. Folders are made first, then the files. */
int pv_smb_sync_tree_build(struct pv_smb_sync *c, const char *workgroup, const char *user,
			   const struct pv_secret *password, const char *share, const char *base,
			   const struct pv_smb_item *items, size_t n, bool fresh,
			   const struct pv_smb_build_opts *o, pv_smb_fill_fn fill, void *fill_ctx,
			   pv_smb_tick_fn tick, void *tick_ctx, struct pv_smb_tree_result *res);

/* The same work in its three parts, for a build over several connections (`copy`): a plan
 * made on one connection (the tree listed, unless fresh: compounds in flight, a folder a
 * round trip), then the extras removed and the folders made on that one (prune), then the
 * files written by every connection, each its part_no-th of every parts (put). Each
 * connection logged on and connected to share already; a plan is read-only during put, so
 * the connections' threads may share it. Deadlines: T x (8 + the items of the call + its
 * MiB). */
struct pv_smb_sync_plan;
struct pv_smb_sync_plan_counts {
	unsigned long files_ok, files_to_write, dirs_to_make, extras, listed;
	uint64_t bytes_to_write;
	double list_seconds; /* how long the listing took */
};
int pv_smb_sync_plan(struct pv_smb_sync *c, const char *share, const char *base,
		     const struct pv_smb_item *items, size_t n, bool fresh,
		     const struct pv_smb_build_opts *o, struct pv_smb_sync_plan **out);
const struct pv_smb_sync_plan_counts *pv_smb_sync_plan_counts(const struct pv_smb_sync_plan *p);
int pv_smb_sync_plan_prune(struct pv_smb_sync *c, struct pv_smb_sync_plan *plan,
			   struct pv_smb_tree_result *res);
int pv_smb_sync_plan_put(struct pv_smb_sync *c, struct pv_smb_sync_plan *plan, unsigned part_no,
			 unsigned parts, pv_smb_fill_fn fill, void *fill_ctx, pv_smb_tick_fn tick,
			 void *tick_ctx, struct pv_smb_tree_result *res);
void pv_smb_sync_plan_free(struct pv_smb_sync_plan *p);
/* Every folder of path (share-relative, '/'-separated) there, made where missing (FILE_OPEN_IF
 * on each in turn). */
int pv_smb_sync_mkdirs(struct pv_smb_sync *c, const char *share, const char *path);

#endif
