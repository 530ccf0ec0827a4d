/* smb/internal.h: what the files of smb/ share; not for use outside the module. */
#ifndef PV_SMB_INTERNAL_H
#define PV_SMB_INTERNAL_H

#include <libsmbclient.h>

/* lib.c: libsmbclient's functions, loaded at the first pv_smbc_load() (dlopen): call them as
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

extern const struct smbc_api *pv_smbc;
/* Load libsmbclient once; PV_EIO (recorded) when it cannot be. */
int pv_smbc_load(void);
#define SMBC(fn) (pv_smbc->fn)

#include "smb/async.h"
#include "smb/smb.h"

struct logon {
	const char *workgroup;
	const char *user;
	const struct pv_secret *password; /* NULL: Kerberos */
};

struct pv_smb {
	SMBCCTX *ctx;
	struct logon l; /* points into the copies below; the auth callback reads it */
	char *server, *workgroup, *user;
	struct pv_secret *password;
	unsigned char *buf; /* write buffer, made on first use */
	size_t bufsize;
	bool reached; /* an operation has succeeded: a later EACCES is not a logon failure */
};

/* wire.c: pv_smb2_connect over fd, a stream socket already connected to an SMB2 server
 * (server only names it in messages), with a timeout in milliseconds that plays the part of
 * pv_smb2_connect's seconds, deadlines included. The connection owns fd from the call on,
 * success or not (pv_smb2_free closes it). For the tests and the fuzz target: a scripted
 * server on the other end of a socketpair(2). */
int smb2_connect_fd(int fd, const char *server, int timeout_ms, struct pv_smb2 **out);

/* async.c: pv_smba_open over fd, a stream socket already connected to an SMB2 server (made
 * non-blocking here), o->host only naming it in messages; from there on the same path as a
 * connection pv_smba_open made: the opening starts when the loop finds fd writable. The
 * connection owns fd from the call on, success or not. For the tests and the fuzz target: a
 * scripted server on the other end of a socketpair(2). */
int smba_open_fd(struct pv_smba_loop *l, int fd, const struct pv_smba_opts *o, pv_smba_cb ready,
		 void *arg, struct pv_smba **out);
/* async.c: for the same tests and fuzz targets, every connection opened from here on (until
 * turned off) uses fixed bytes where it would use random ones: its client GUID, its 3.1.1
 * preauth salt, its NTLMv2 client challenge and its nonces. The session keys, and with them
 * every signature and encryption of a recorded conversation, then hold when it is replayed.
 * Never for real traffic. */
void smba_test_fixed(bool on);

/* listing.c: what a tree holds, paths relative to its base, sorted (listing_walk) */
struct found {
	char *path;
	bool dir;
	uint64_t size;
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

int listing_add(struct listing *l, const char *path, bool dir, uint64_t size);
/* One entry the server listed in folder rel ("" for the base) of the tree at base: skipped
 * when it is "." or "..", else added as rel/name. Records PV_EREMOTE, naming the folder and
 * the name, when the name is empty or holds '/' or '\\', when base/rel/name would pass
 * PATH_LIMIT, or when the tree shows more than LIST_MAX entries. where: how the message names
 * the tree ("//server/share/base"). */
int listing_entry(struct listing *l, const char *where, const char *base, const char *rel,
		  const char *name, bool dir, uint64_t size);
/* Everything below a tree's base into l, sorted: list_dir adds what folder rel ("" for the
 * base) holds, paths relative to the base; it is called for the base, then for every folder
 * found. Stops at the first failure. */
int listing_walk(struct listing *l, int (*list_dir)(void *ctx, const char *rel, struct listing *l),
		 void *ctx);
const struct found *listing_lookup(const struct listing *l, const char *path);
void listing_release(struct listing *l);

/* What to do with a fileset item given the listing. PLAN_MISMATCH (a folder where a file
 * belongs or the reverse) has recorded a PV_EREMOTE error naming the path. */
enum plan { PLAN_KEEP, PLAN_MAKE, PLAN_FIX, PLAN_MISMATCH };
enum plan listing_plan(const struct listing *l, const struct pv_smb_item *it, const char *server,
		       const char *share, const char *base);

#endif
