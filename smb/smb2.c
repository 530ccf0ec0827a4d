/* smb/smb2.c: SMB2 header and name encodings; see smb2.h. */
#include "smb/smb2.h"

#include "util/digest.h"
#include "util/utf16.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

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
	switch (cmd) {
	case SMB2_NEGOTIATE:
		return "NEGOTIATE";
	case SMB2_SESSION_SETUP:
		return "SESSION_SETUP";
	case SMB2_LOGOFF:
		return "LOGOFF";
	case SMB2_TREE_CONNECT:
		return "TREE_CONNECT";
	case SMB2_CREATE:
		return "CREATE";
	case SMB2_CLOSE:
		return "CLOSE";
	case SMB2_READ:
		return "READ";
	case SMB2_WRITE:
		return "WRITE";
	case SMB2_QUERY_DIRECTORY:
		return "QUERY_DIRECTORY";
	case SMB2_QUERY_INFO:
		return "QUERY_INFO";
	case SMB2_SET_INFO:
		return "SET_INFO";
	default:
		return "an unknown command";
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
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == status)
			return names[i].name;
	return NULL;
}

/* ---- signing ---- */

/* 3.x: AES-128-CMAC (MS-SMB2 3.1.4.1); before: HMAC-SHA256 */
static bool cmac(uint16_t dialect)
{
	return dialect >= 0x0300;
}

void smb2_signing_key(uint16_t dialect, const uint8_t session_key[16], uint8_t out[16])
{
	/* sizeof: the terminating NUL is part of the label and the context (MS-SMB2 3.1.4.2) */
	static const char label[] = "SMB2AESCMAC", context[] = "SmbSign";

	if (cmac(dialect))
		pv_kdf_hmac_sha256(session_key, 16, label, sizeof(label), context, sizeof(context),
				   out, 16);
	else if (out != session_key)
		memcpy(out, session_key, 16);
}

const char *smb2_sign_alg(uint16_t dialect)
{
	return cmac(dialect) ? "AES-128-CMAC" : "HMAC-SHA256";
}

/* The signature of msg, its signature field zeroed already, into sig. */
static void signature(const uint8_t *msg, size_t len, uint16_t dialect, const uint8_t key[16],
		      uint8_t sig[SMB2_SIG_LEN])
{
	if (cmac(dialect)) {
		pv_aes_cmac128(key, msg, len, sig);
	} else {
		uint8_t h[32];

		pv_hmac_sha256(key, 16, msg, len, h);
		memcpy(sig, h, SMB2_SIG_LEN);
	}
}

void smb2_sign(uint8_t *msg, size_t len, uint16_t dialect, const uint8_t key[16])
{
	smb2_put32(msg + 16, smb2_get32(msg + 16) | SMB2_FLAGS_SIGNED);
	memset(msg + SMB2_SIG_AT, 0, SMB2_SIG_LEN);
	signature(msg, len, dialect, key, msg + SMB2_SIG_AT);
}

int smb2_verify(uint8_t *msg, size_t len, uint16_t dialect, const uint8_t key[16])
{
	uint8_t got[SMB2_SIG_LEN], want[SMB2_SIG_LEN], diff = 0;

	memcpy(got, msg + SMB2_SIG_AT, SMB2_SIG_LEN);
	memset(msg + SMB2_SIG_AT, 0, SMB2_SIG_LEN);
	signature(msg, len, dialect, key, want);
	memcpy(msg + SMB2_SIG_AT, got, SMB2_SIG_LEN);
	for (int i = 0; i < SMB2_SIG_LEN; i++) /* no early exit: the time says nothing */
		diff |= (uint8_t)(got[i] ^ want[i]);
	return diff ? -1 : 0;
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

static const uint16_t dialects[] = {0x0202, 0x0210, 0x0300, 0x0302};

int smb2_negotiate_body(uint8_t b[SMB2_NEGOTIATE_BODY])
{
	memset(b, 0, SMB2_NEGOTIATE_BODY);
	smb2_put16(b, 36);
	smb2_put16(b + 2, sizeof(dialects) / sizeof(dialects[0]));
	smb2_put16(b + 4, SMB2_SIGNING_ENABLED);
	if (getrandom(b + 12, 16, 0) != 16)
		return -1;
	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++)
		smb2_put16(b + 36 + 2 * i, dialects[i]);
	return 0;
}

bool smb2_dialect_offered(uint16_t dialect)
{
	for (size_t i = 0; i < sizeof(dialects) / sizeof(dialects[0]); i++)
		if (dialects[i] == dialect)
			return true;
	return false;
}
