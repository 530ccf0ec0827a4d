/* smb/smb2.h: the SMB2 messages smb/wire.c sends, encoded and decoded without I/O (MS-SMB2),
 * so they are unit-tested. Module-internal: outside smb/ use smb/smb.h. */
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
	SMB2_CREATE = 5,
	SMB2_CLOSE = 6,
	SMB2_READ = 8,
	SMB2_WRITE = 9,
	SMB2_QUERY_DIRECTORY = 14,
	SMB2_QUERY_INFO = 16,
	SMB2_SET_INFO = 17,
};

/* NTSTATUS values we act on */
#define ST_OK			 0x00000000u
#define ST_PENDING		 0x00000103u
#define ST_NO_MORE_FILES	 0x80000006u
#define ST_MORE_PROCESSING	 0xC0000016u
#define ST_ACCESS_DENIED	 0xC0000022u
#define ST_OBJECT_NAME_COLLISION 0xC0000035u
#define ST_DISK_FULL		 0xC000007Fu
#define ST_QUOTA_EXCEEDED	 0xC0000044u
#define ST_BAD_NETWORK_NAME	 0xC00000CCu
#define ST_LOGON_FAILURE	 0xC000006Du

#define SMB2_FLAGS_RESPONSE 0x1u
#define SMB2_FLAGS_ASYNC    0x2u
#define SMB2_FLAGS_RELATED  0x4u
#define SMB2_FLAGS_SIGNED   0x8u

/* SecurityMode of NEGOTIATE and SESSION_SETUP (MS-SMB2 2.2.3, 2.2.4, 2.2.5) */
#define SMB2_SIGNING_ENABLED  0x1u
#define SMB2_SIGNING_REQUIRED 0x2u

/* The Signature field of the header: 16 bytes at 48 */
#define SMB2_SIG_AT  48
#define SMB2_SIG_LEN 16

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

/* Signing (MS-SMB2 3.1.4). The algorithm follows the dialect: HMAC-SHA256, its first 16
 * bytes, for 2.0.2 and 2.1; AES-128-CMAC for 3.x (3.1.1's AES-GMAC is never negotiated here:
 * this client offers 2.0.2 to 3.0.2). */

/* Session.SigningKey from Session.SessionKey (MS-SMB2 3.2.5.3.1): the session key itself for
 * 2.0.2 and 2.1; for 3.0 and 3.0.2 the SP800-108 KDF of it with the label "SMB2AESCMAC\0"
 * and the context "SmbSign\0" (MS-SMB2 3.1.4.2). out may be session_key. */
void smb2_signing_key(uint16_t dialect, const uint8_t session_key[16], uint8_t out[16]);

/* The name of the signing algorithm of a dialect ("AES-128-CMAC"). */
const char *smb2_sign_alg(uint16_t dialect);

/* Sign the message at msg, len bytes from its header: to the next message of a compound,
 * its padding included, or to the end of the frame (MS-SMB2 3.1.4.1). Sets
 * SMB2_FLAGS_SIGNED, zeroes the signature field, and writes the signature there. */
void smb2_sign(uint8_t *msg, size_t len, uint16_t dialect, const uint8_t key[16]);

/* 0 when the message at msg (len bytes, as for smb2_sign) carries the signature key gives
 * it, -1 when not (compared in constant time). The signature field is zeroed for the
 * computation and put back: msg is as it was on return. len is at least SMB2_HDR. */
int smb2_verify(uint8_t *msg, size_t len, uint16_t dialect, const uint8_t key[16]);

/* A '/'-separated UTF-8 path appended to out as the UTF-16LE '\\'-separated name a CREATE
 * carries; -1 on invalid UTF-8 or out of memory. */
int smb2_name(const char *path, struct pv_buf *out);

/* A frame buffer *buf of *cap bytes grown (doubling from first) to hold at least need bytes:
 * 0, or -1 when out of memory (*buf and *cap are then as they were). */
int smb2_ensure(uint8_t **buf, size_t *cap, size_t need, size_t first);

/* The NEGOTIATE request both clients send (MS-SMB2 2.2.3): dialects 2.0.2, 2.1, 3.0 and 3.0.2,
 * signing enabled (we sign when the server requires it), a random client GUID. b gets the
 * SMB2_NEGOTIATE_BODY bytes of the body; 0, or -1 when getrandom fails (errno says why). */
#define SMB2_NEGOTIATE_BODY (36 + 2 * 4)
int smb2_negotiate_body(uint8_t b[SMB2_NEGOTIATE_BODY]);
/* Whether the dialect a NEGOTIATE answer chose is one smb2_negotiate_body offered (MS-SMB2
 * 3.2.5.2: a 3.1.1 server that answered so would expect negotiate contexts we do not send). */
bool smb2_dialect_offered(uint16_t dialect);
#endif
