/* smb/smb.h: SMB to the file server: our own SMB2 client (smb/wire.c: many users' sessions on
 * one connection, a file in one compound request, signed when the server requires it) for
 * building trees, and libsmbclient (the only place it is used, loaded with dlopen when first
 * needed) for what ours does not do: encryption, and the share listing of `check`.
 * Errors are recorded with pv_error(): PV_EUNREACH (refused, timeout, no route),
 * PV_ECRED (logon refused), PV_EREMOTE (any other SMB failure: the message names the path and
 * says "disk full" for ENOSPC), PV_EIO (out of memory, libsmbclient would not start).
 *
 * A libsmbclient session (struct pv_smb) is one context holding one SMB connection of one
 * user. libsmbclient keeps process-wide state, so use sessions of one process from one thread;
 * for many users at once use many processes (phases/trees_smb.c forks workers). */
#ifndef PV_SMB_SMB_H
#define PV_SMB_SMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/secret.h"

/* Log on to server as workgroup\user with password (NTLM) and list its shares.
 * On success *nshares is the number of disk shares seen. */
int pv_smb_list_shares(const char *server, const char *workgroup, const char *user,
		       const struct pv_secret *password, int timeout, unsigned *nshares);

struct pv_smb;

/* A session to server as user. With password: NTLM as workgroup\user. With password NULL:
 * Kerberos with the ticket cache named by KRB5CCNAME (libsmbclient wants the user name and an
 * empty password then; an empty user would go anonymous). No network traffic happens until
 * the first operation. *out is freed with pv_smb_free (NULL is fine). */
int pv_smb_session(const char *server, const char *workgroup, const char *user,
		   const struct pv_secret *password, int timeout, struct pv_smb **out);
void pv_smb_free(struct pv_smb *s);

/* What a tree holds: folders and files (paths relative to the tree's base, '/'-separated, a
 * folder before anything in it). */
struct pv_smb_item {
	const char *path;
	bool dir;
	uint64_t size;
};

/* Fill buf with len bytes of item's content from offset. */
typedef void (*pv_smb_fill_fn)(void *ctx, size_t item, uint64_t offset, void *buf, size_t len);
/* Called after each file written (files and bytes since the last call); non-zero stops. */
typedef int (*pv_smb_tick_fn)(void *ctx, unsigned long files, uint64_t bytes);

struct pv_smb_tree_result {
	unsigned long dirs_made, files_made, files_fixed, files_ok;
	uint64_t bytes;
};

/* Make //server/share/base hold items: base must exist; what is missing is made, a file of
 * another size is rewritten, what matches is left alone. When fresh is true the tree is taken
 * to be empty (no listing first). Extra entries are left in place. */
int pv_smb_tree_build(struct pv_smb *s, const char *share, const char *base,
		      const struct pv_smb_item *items, size_t n, bool fresh, pv_smb_fill_fn fill,
		      void *fill_ctx, pv_smb_tick_fn tick, void *tick_ctx,
		      struct pv_smb_tree_result *res);

/* Our own SMB2 client (smb/wire.c) for building trees: one connection carries the sessions
 * of many users, one after another (NTLMv2 logons), and each file is one compound request.
 * A connection is used from one thread.
 *
 * Signing (MS-SMB2 3.1.4): when the server requires it (its NEGOTIATE answer says
 * SIGNING_REQUIRED: Samba's `server signing = mandatory`, Windows Server 2025 by default),
 * every request after the logon is signed with the session's key (HMAC-SHA256 for SMB 2.0.2
 * and 2.1, AES-128-CMAC with the SMB 3.0 key derivation for 3.0 and 3.0.2), and every answer
 * but interim ones must come signed; otherwise nothing is signed, and any answer that comes
 * signed anyway (Samba signs the end of every logon) is still checked. An answer whose
 * signature is wrong, that comes unsigned where one is required, or that is signed for no
 * session of ours fails with PV_EREMOTE ("SMB answer from 'server' has a bad signature:
 * ...") and loses the connection; it never sends us to libsmbclient. */
struct pv_smb2;

/* Connect and negotiate. On failure *out may still be set (free it); pv_smb2_unsupported()
 * then says whether the server wants what this client does not do (encryption, a dialect
 * beyond 3.0.2): use pv_smb_session instead.
 *
 * Time: with T the timeout given here (seconds; 10 when 0 or less):
 *   - connecting takes at most T, and a read waits at most T for the next bytes;
 *   - every request gets its final answer within 3T of being sent. Keep-alives and interim
 *     STATUS_PENDING answers (MS-SMB2 3.3.4.2) reset the T wait, never this deadline. With
 *     requests pipelined, 3T is the most between two final answers while any is in flight;
 *   - a tree build (logon to logoff) ends within T x (8 + its items + each file's size in
 *     MiB, rounded up): 10 s x (8 + 100 + 100) = 35 min for 100 files of under 1 MiB.
 * A deadline passed fails with PV_EUNREACH and a message saying which, and the connection
 * is lost (pv_smb2_lost): answers may still be on their way.
 *
 * What the server sends is checked before it is read: a frame shorter than an SMB2 header
 * (64 bytes) or longer than 1 MiB, a NetBIOS message other than a session message or a
 * keep-alive, or any length or offset pointing outside the frame or the answer fails with
 * PV_EREMOTE ("a malformed answer: ...") and loses the connection. Paths stay within 1023
 * bytes (share-relative) and listings within 2^20 entries: beyond, an error names the path. */
int pv_smb2_connect(const char *server, int timeout, struct pv_smb2 **out);
bool pv_smb2_unsupported(const struct pv_smb2 *c);
/* NULL when c does not sign (the server does not require it, or c never negotiated), else
 * how it signs, as "SMB 3.0.2, AES-128-CMAC"; the string lives as long as c. */
const char *pv_smb2_signing(const struct pv_smb2 *c);
/* Whether c can carry no more requests (the connection failed or closed, or never opened). */
bool pv_smb2_lost(const struct pv_smb2 *c);
void pv_smb2_free(struct pv_smb2 *c);

/* pv_smb_tree_build over c as workgroup\user with password (NTLM), then log off (a LOGOFF
 * answer with a bad signature fails the build too). After a failure check
 * pv_smb2_unsupported() too (a server that wants encryption says so at logon). */
int pv_smb2_tree_build(struct pv_smb2 *c, const char *workgroup, const char *user,
		       const struct pv_secret *password, const char *share, const char *base,
		       const struct pv_smb_item *items, size_t n, bool fresh, pv_smb_fill_fn fill,
		       void *fill_ctx, pv_smb_tick_fn tick, void *tick_ctx,
		       struct pv_smb_tree_result *res);

#endif
