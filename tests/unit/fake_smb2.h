/* tests/unit/fake_smb2.h: a fake SMB2 server for the tests of our two SMB2 clients
 * (tests/unit/check_sync.c for smb/sync.c, tests/unit/check_async.c for smb/async.h): a
 * thread on the other end of a socketpair(2) that reads the client's requests and answers
 * them from a small file system of its own (MS-SMB2 answers, an NTLMv2 check of the logon),
 * unless a test's hook changes, cuts, delays or replaces the answer.
 *
 * Its NTLMv2 check is a server's, in code of its own over util/digest's primitives (NTOWFv2,
 * the proof, the MIC spelled out here, not smb/ntlm.c's): the proof right for LAB\u1 and
 * FAKE_PASSWORD (else STATUS_LOGON_FAILURE); then, as Samba checks them, every AV pair of its
 * CHALLENGE back unchanged in the client's copy, MsvAvFlags saying a MIC is there (the fake
 * sends a timestamp), MsvAvChannelBindings of 16 zero bytes, MsvAvTargetName "cifs/<name>"
 * (kept in target_name), and the MIC right over the NEGOTIATE it got, the CHALLENGE it sent
 * and the AUTHENTICATE (else STATUS_INVALID_PARAMETER, Samba's answer to a wrong MIC). Then,
 * as Samba's SPNEGO does once NTLM has a MIC and signs, the SPNEGO mechListMIC of the
 * AUTHENTICATE's token checked (a third leg asked where there is none, ACCESS_DENIED where it
 * is wrong) and its own in the final answer.
 *
 * The fake can require signing (as Samba's `server signing = mandatory`): it computes the
 * session key from the AUTHENTICATE and the password it knows (FAKE_PASSWORD, for LAB\u1),
 * checks the signature of every request after the logon with its own code (the KDF input
 * spelled out, the MACs of util/digest, not smb/smb2.c's signing), refuses a request that is
 * not signed right, and signs its answers; hooks then change what it signed. Signing
 * required or not, a request that comes signed is checked so and its answer signed (as
 * Samba does, and MS-SMB2 3.3.4.1.1 asks).
 *
 * FSCTL_VALIDATE_NEGOTIATE_INFO (MS-SMB2 3.3.5.15.12) is answered as a 3.x server answers
 * it: the request held against the client's NEGOTIATE (Capabilities, ClientGuid,
 * SecurityMode, the dialects), the connection ended when it differs or the dialect is 3.1.1;
 * else the fake's own NEGOTIATE answer said again (FAKE_SERVER_GUID), signed; or
 * validate_status, for a server that does not do it.
 *
 * It speaks the dialect it is given, 3.1.1 included (its negotiate contexts, a cipher and a
 * signing algorithm of its choosing, the preauth integrity hash), and can encrypt: a cipher
 * set, it requires encryption of every session (as `server smb encrypt = required`) or of
 * its share (`smb encrypt = required` on it), opens every encrypted request (refusing, as
 * Samba, one it cannot open or one that comes in clear where encryption is required) and
 * encrypts the answers to them. All with its own code: the preauth hash, the KDF inputs and
 * the GMAC nonce are spelled out here, over util/digest's primitives, not smb/sec.c's.
 *
 * It holds the folder u1 of a share (any name); it answers NEGOTIATE, SESSION_SETUP (NTLMv2,
 * or a one-leg stand-in for Kerberos: FAKE_KRB_TICKET),
 * TREE_CONNECT, CREATE (files and folders: FILE_OPEN, FILE_CREATE, FILE_OVERWRITE_IF,
 * delete-on-close), CLOSE, READ and WRITE (a file's bytes are kept), QUERY_DIRECTORY
 * (FileDirectoryInformation, page entries per answer, then STATUS_NO_MORE_FILES), QUERY_INFO
 * (FileNetworkOpenInformation), SET_INFO (FileRenameInformation, FileBasicInformation,
 * FileDispositionInformation, FileEndOfFileInformation), FLUSH, LOCK (byte ranges, conflicts
 * refused), IOCTL (FSCTL_VALIDATE_NEGOTIATE_INFO), CHANGE_NOTIFY (an interim answer, then a
 * change), leases asked in CREATE (noted, none granted) and their breaks acknowledged
 * (fake_lease_break sends one), and LOGOFF, compounds included. Credits: 64 per answer, or as few
 * as a stingy server's (see credits). */
#ifndef PV_TESTS_UNIT_FAKE_SMB2_H
#define PV_TESTS_UNIT_FAKE_SMB2_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/buf.h"

/* The one account the fake knows, LAB\u1 (tests/fuzz/smb2_plan.h logs on with the same). */
#define FAKE_PASSWORD "Secret-1"
/* A Kerberos-like logon (a SPNEGO callback's): a token starting with FAKE_KRB_TICKET is taken
 * at once, the final answer carries FAKE_KRB_REPLY, and the session key is FAKE_KRB_KEY. */
#define FAKE_KRB_TICKET "FAKE-KRB"
#define FAKE_KRB_REPLY	"FAKE-REP"
#define FAKE_KRB_KEY	"0123456789abcdef"

/* The fake's ServerGuid, in NEGOTIATE and VALIDATE_NEGOTIATE_INFO answers. */
#define FAKE_SERVER_GUID "fake-server-guid"

#define FAKE_NODES   256
#define FAKE_HANDLES 64

struct fake_node {
	char *path; /* share-relative, '/'-separated; NULL: a free slot */
	bool dir;
	uint64_t size;
	uint8_t *data;	/* the file's bytes (size of them) once written; NULL: fake_byte() */
	uint64_t mtime; /* LastWriteTime: set by SET_INFO FileBasicInformation, 0 on overwrite */
};

struct fake_handle {
	int node; /* -1: free */
	bool listed, delete_on_close;
	int cursor; /* QUERY_DIRECTORY: the next entry to list (of -2 .. FAKE_NODES) */
};

/* What the fake does about signing: nothing (as before signing was written: these answers
 * are the seed corpus's), sign the final SESSION_SETUP answer of a logon and nothing more
 * (Samba when signing is not required: it signs that answer for every logon that is not a
 * guest's), or require signing (SecurityMode SIGNING_REQUIRED; every request after the logon
 * must be signed right, and every answer is signed). */
enum { SIGN_NONE, SIGN_SETUP, SIGN_REQUIRED };

/* The request a frame starts with, for hooks to choose on. */
struct fake_req {
	uint16_t cmd;
	uint64_t mid;
};

struct fake;
/* Called with each answer frame before it goes (reply: the SMB2 messages, no NetBIOS
 * header): change it and return FAKE_SEND, or send what you like with the helpers and
 * return FAKE_DONE, or FAKE_HANGUP to close the connection. */
enum fake_act { FAKE_SEND, FAKE_DONE, FAKE_HANGUP };
typedef enum fake_act (*fake_hook)(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

struct fake {
	int fd;
	pthread_t thread;
	fake_hook hook;
	long arg;	    /* for the hook */
	unsigned hooked;    /* frames the hook has seen */
	unsigned done;	    /* for hooks that act once */
	size_t target_info; /* bytes of NTLM target info in the challenge (0: a small one) */
	uint16_t dialect;   /* chosen in NEGOTIATE (0: 3.0.2) */
	int signing;	    /* SIGN_NONE, SIGN_SETUP or SIGN_REQUIRED (below) */
	bool keyed;	    /* key is the signing key of the session logged on */
	uint8_t key[16];
	/* encryption and 3.1.1 (set before fake_run) */
	uint16_t cipher;	  /* what it picks (3.1.1; 3.0.x: AES-128-CCM); 0: none */
	uint16_t sign_alg;	  /* 3.1.1: AES-GMAC (2) to pick it when offered; 0: AES-CMAC */
	bool encrypt_session;	  /* SessionFlags ENCRYPT_DATA: every request after the logon */
	bool encrypt_share;	  /* ShareFlags ENCRYPT_DATA: every request on the tree */
	bool no_context;	  /* 3.1.1 without its negotiate contexts (a broken server) */
	uint8_t conn_preauth[64]; /* the connection's preauth hash (3.1.1) */
	uint8_t preauth[64];	  /* the session's */
	size_t hash_at;		  /* an answer to hash once it is whole (at this offset) */
	bool hash_pending;
	uint16_t client_ciphers[8], client_signs[8]; /* what the client offered (3.1.1) */
	unsigned nclient_ciphers, nclient_signs;
	uint16_t client_hash; /* the hash algorithm offered first */
	/* what the client's NEGOTIATE said (for VALIDATE_NEGOTIATE) and the fake's answer */
	uint32_t client_caps, server_caps;
	uint16_t client_mode, server_mode;
	uint8_t client_guid[16];
	uint16_t client_dialects[16];
	unsigned nclient_dialects;
	/* VALIDATE_NEGOTIATE: answered right, or with the connection ended (the request not the
	 * client's NEGOTIATE, or 3.1.1); a status to answer it with instead (0: none) */
	unsigned validated, validate_bad;
	uint32_t validate_status;
	bool hangup; /* end the connection after this frame, answering nothing */
	struct pv_aead *gmac, *c2s, *s2c;
	uint64_t nonce;
	unsigned enc_ok, enc_bad, clear_refused; /* encrypted requests opened, not, refused */
	uint16_t plain_cmd; /* the first answer to this command goes unencrypted (a fault) */
	unsigned signed_ok, sig_bad, unsigned_reqs; /* requests after the logon, when required */
	uint8_t schal[8];
	struct fake_node fs[FAKE_NODES];
	struct fake_handle h[FAKE_HANDLES];
	unsigned cmds[32]; /* requests seen, by command */
	unsigned logons_ok, logons_bad;
	/* NTLM: the NEGOTIATE message taken and the CHALLENGE sent, which the MIC covers; the
	 * AUTHENTICATEs whose MIC was right or wrong, whose AV pairs were not as asked, and the
	 * MsvAvTargetName of the last (UTF-8) */
	struct pv_buf nego, chal;
	unsigned mic_ok, mic_bad, av_bad;
	/* SPNEGO: the mechTypes offered (their DER), and the mechListMICs that came right,
	 * wrong, or not at all where Samba wants one */
	struct pv_buf mech_types;
	unsigned mech_mic_ok, mech_mic_bad, mech_mic_missing;
	char target_name[256];
	/* Called with each request message as it comes, before the fake reads it (a test's fault
	 * in what the client sent) */
	void (*in_hook)(struct fake *f, uint8_t *m, size_t len);
	FILE *capture; /* every byte sent, for the corpus */
	unsigned page; /* entries per QUERY_DIRECTORY answer (0: all in one) */
	int credits;   /* credits granted: 0, 64 an answer; k > 0, stingy (see fake_smb2.c) */
	long balance;  /* ... the client's credits, as the fake counts them */
	bool balance_set;
	unsigned long granted;
	unsigned overdrawn;	   /* requests that came without a credit */
	uint64_t next_mid;	   /* the lowest message id not used yet */
	unsigned bad_mids;	   /* requests whose message id was used before (refused) */
	unsigned bad_charge;	   /* READs over 64 KiB a credit (refused) */
	unsigned long large_reads; /* READs over 64 KiB, charged as they must be */
	struct {
		int h; /* the handle that holds it */
		uint64_t off, len;
	} locks[16];
	unsigned nlocks;
	uint64_t writes[64]; /* the offsets of the WRITEs seen, in order */
	unsigned nwrites;
	/* leases: CREATEs that asked for one (RequestedOplockLevel 0xff and an "RqLs" context:
	 * its length, 32 or 52, key and state, the last one's), and their breaks acknowledged
	 * (LEASE_BREAK_ACK: the key and state of the last) */
	unsigned leases, lease_acks;
	size_t lease_len;
	uint8_t lease_key[16], ack_key[16];
	uint32_t lease_state, ack_state;
	/* durable handles v2: CREATEs with a "DH2Q" (the last one's CreateGuid; granted, a DH2Q
	 * answered, when grant_durable) and with a "DH2C" (the last one's FileId and CreateGuid,
	 * answered as an open of its path) */
	bool grant_durable, dh_now;
	unsigned durables, reclaims;
	uint8_t durable_guid[16], reclaim_fid[16], reclaim_guid[16];
	unsigned setinfo[64]; /* SET_INFO requests, by information class */
	bool joined;
};

/* The byte at off of a file that was not written there (READ answers it). */
uint8_t fake_byte(uint64_t off);

/* Bytes on the wire: as they are, or as a NetBIOS session message (type 0, 24-bit length)
 * holding p; a session keep-alive (type 0x85). The client gone: nothing is sent. */
void fake_send_raw(struct fake *f, const void *p, size_t n);
void fake_send_frame(struct fake *f, const void *p, size_t n);
void fake_keepalive(struct fake *f);
/* An interim answer to mid: async, STATUS_PENDING (MS-SMB2 3.3.4.2); with flags
 * SMB2_FLAGS_SIGNED too, a signature field of 0xaa bytes (a server may flag an interim
 * answer to a signed request so; MS-SMB2 3.2.5.1.3 checks no interim answer). */
void fake_interim_flagged(struct fake *f, uint16_t cmd, uint64_t mid, uint32_t flags);
void fake_interim(struct fake *f, uint16_t cmd, uint64_t mid);
/* Whether the client has closed its end, waiting up to ms for it; what it sends meanwhile
 * is read and dropped (it may still be sending). */
bool fake_client_gone(struct fake *f, int ms);
/* Hold a request: keep-alives (or interim answers to mid when cmd is set) every 20 ms until
 * the client gives up and closes, 10 s at most. */
void fake_stall(struct fake *f, uint16_t cmd, uint64_t mid);

/* The node of a share-relative path, or NULL; a new one (NULL when the table is full). */
struct fake_node *fake_lookup(struct fake *f, const char *path);
struct fake_node *fake_mknode(struct fake *f, const char *path, bool dir, uint64_t size);

/* A fake server holding the folder u1; returns the client's end of the socketpair. Then
 * set what the test needs (signing, dialect, nodes...), fake_run() starts the thread. Once
 * the client closed its end, fake_join() waits for the thread to end (the nodes can be
 * looked at then), fake_stop() does that if need be and frees the nodes. */
int fake_start(struct fake *f, fake_hook hook, long arg);
void fake_run(struct fake *f);
void fake_join(struct fake *f);
void fake_stop(struct fake *f);

/* ---- hooks both suites use (f->arg says what to do) ---- */

/* What fake_tamper() does to the first answer to command (f->arg & 0xffff) (for
 * SESSION_SETUP the final one: the first is not signed), after the fake signed it: */
enum {
	FLIP,	   /* flip the last bit of the message (padding of a compound's message) */
	UNSIGN,	   /* clear SMB2_FLAGS_SIGNED and the signature */
	WRONG,	   /* flip a bit of the signature */
	FLAG,	   /* set SMB2_FLAGS_SIGNED with a signature of 0xaa bytes */
	OTHER_SID, /* put another session's id in the header */
};
#define TAMPER(cmd, kind) ((long)(cmd) | (long)(kind) << 16)
enum fake_act fake_tamper(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* The request of command f->arg is held: keep-alives, or interim answers, until the client
 * gives up; then the fake hangs up. */
enum fake_act fake_hold_keepalive(struct fake *f, const struct fake_req *q, struct pv_buf *reply);
enum fake_act fake_hold_pending(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* What fake_tf_tamper does to the first encrypted answer to command (f->arg & 0xffff): */
enum {
	TF_FLIP,  /* flip a byte of the ciphertext */
	TF_NONCE, /* change the nonce in the transform header */
	TF_SID,	  /* another session's id in the transform header */
	TF_SHORT, /* cut: OriginalMessageSize says 10 bytes more than follow */
	TF_TAG,	  /* flip a byte of the signature (the AEAD tag) */
	TF_FLAGS, /* Flags 0 instead of 1 (encrypted) */
};
enum fake_act fake_tf_tamper(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* An in_hook: the first AUTHENTICATE's MIC changed (a byte of it flipped) on its way. */
void fake_flip_mic(struct fake *f, uint8_t *m, size_t len);

/* The first VALIDATE_NEGOTIATE_INFO answer changed, then signed again with the fake's key (a
 * server whose answer differs from its NEGOTIATE's, or a forger with the key): f->arg
 * selects Capabilities (0: 0x40 toggled), the Guid (1), SecurityMode (2: 0x2 toggled) or
 * Dialect (3: 3.0 for 3.0.2, and back). */
enum fake_act fake_validate_tamper(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* The first answer replaced by a frame of f->arg bytes (at most 10): shorter than a header. */
enum fake_act fake_short_frame(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* The first answer under a NetBIOS header that is not a session message of a size a client
 * takes: f->arg 0: type 0x82; 1: a keep-alive with a length; 2: 1 MiB + 1; 3: 16 MiB - 1. */
enum fake_act fake_bad_netbios(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* The frame of the answer to command f->arg cut: its NetBIOS length says more than comes,
 * then the server closes (or, with the command negated, waits). */
enum fake_act fake_cut_frame(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* A field of the first message answering command (f->arg & 0xffff), in a compound too, set: at byte
 * (f->arg >> 16 & 0xffff) of the message, the 32-bit value f->arg >> 32. */
#define POKE(cmd, at, v)                                                                           \
	((long)((unsigned long)(cmd) | (unsigned long)(at) << 16 | (unsigned long)(v) << 32))
enum fake_act fake_poke(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* After the answer to the first CREATE that asked for a lease, a lease break notification
 * (MS-SMB2 2.2.23.2: MessageId 0xFFFFFFFFFFFFFFFF, SMB2_NOTIFY_BREAK_LEASE_FLAG_ACK_REQUIRED)
 * of that lease from read-write-handle caching to f->arg. */
enum fake_act fake_lease_break(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* The first message answering command f->arg (in a compound too) cut to its header and
 * f->arg >> 16 bytes of body, the frame ending there. */
enum fake_act fake_cut_body(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

/* A server that claims a logon it never authenticated: the first SESSION_SETUP answer (NTLM's
 * CHALLENGE, or the final answer of the Kerberos stand-in) is replaced by a STATUS_SUCCESS
 * with no security token, unsigned (FORGE_CLEAR) or signed with the keys a session key of 16
 * zero bytes gives (FORGE_ZERO_KEY: what anyone can compute). f->arg says which. */
enum { FORGE_CLEAR, FORGE_ZERO_KEY };
enum fake_act fake_forge_logon(struct fake *f, const struct fake_req *q, struct pv_buf *reply);

#endif
