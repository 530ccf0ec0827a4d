/* smb/ntlm.h: NTLMv2 logon messages (MS-NLMP) in a SPNEGO wrapper (RFC 4178), for the SMB2
 * client of smb/wire.c. Pure logic: no I/O, no clock (the caller passes the time and the
 * client challenge), so every function here is unit-tested with the protocol's test vectors.
 *
 * Only what a logon needs: NTLMv2 only, no MIC (the server does not ask for one when the
 * AUTHENTICATE message carries none), no NTLM signing or sealing keys (SMB2 signs with its
 * own algorithms, from the session key alone). The session key comes out of the logon for
 * SMB2 signing; NTLMSSP_NEGOTIATE_KEY_EXCH is never negotiated, so it is SessionBaseKey
 * itself (see pv_ntlm_authenticate) and no RC4 is needed. */
#ifndef PV_SMB_NTLM_H
#define PV_SMB_NTLM_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* NTOWFv2 (MS-NLMP 3.3.2): HMAC_MD5(MD4(UTF-16LE(password)), UTF-16LE(UPPER(user) domain)).
 * Strings are UTF-8; -1 when one is not valid UTF-8 or out of memory. */
int pv_ntowfv2(const char *password, size_t plen, const char *user, const char *domain,
	       uint8_t out[16]);

/* The first token of a logon: SPNEGO NegTokenInit offering NTLMSSP, holding NEGOTIATE. */
int pv_ntlm_negotiate(struct pv_buf *out);

/* What the server's CHALLENGE says. target_info points into the token given to parse. */
struct pv_ntlm_challenge {
	uint32_t flags;
	uint8_t challenge[8];
	const uint8_t *target_info;
	size_t target_info_len;
	int has_timestamp;  /* MsvAvTimestamp is in target_info */
	uint64_t timestamp; /* its value (FILETIME) */
};

/* Find the NTLMSSP CHALLENGE in the server's token (SPNEGO NegTokenResp, or bare NTLMSSP).
 * -1 when it holds none or is malformed. */
int pv_ntlm_parse_challenge(const uint8_t *tok, size_t len, struct pv_ntlm_challenge *c);

/* The second token: SPNEGO NegTokenResp holding AUTHENTICATE with the NTLMv2 response for
 * user in domain. now: FILETIME used when the server sent no timestamp; cchal: 8 random
 * bytes. -1 on bad UTF-8 or out of memory; -2 when a field would not fit its 16-bit length
 * (MS-NLMP 2.2.1.3): a server's target info of more than 65487 bytes (the NTLMv2 response
 * is 48 bytes longer), or a user or domain of more than 32767 UTF-16 units.
 *
 * On success session_key holds the logon's session key, the one SMB2 takes as
 * Session.SessionKey (the caller wipes it after use). It is MS-NLMP's ExportedSessionKey:
 * without NTLMSSP_NEGOTIATE_KEY_EXCH, which this client never asks for, that is the
 * KeyExchangeKey (3.1.5.1.2), which for NTLMv2 is SessionBaseKey (3.4.5.1): see
 * pv_ntlmv2_session_key. The AUTHENTICATE's EncryptedRandomSessionKey stays empty. */
int pv_ntlm_authenticate(const struct pv_ntlm_challenge *c, const char *user, const char *domain,
			 const char *password, size_t plen, uint64_t now, const uint8_t cchal[8],
			 struct pv_buf *out, uint8_t session_key[16]);

/* The NTLMv2 response itself (MS-NLMP 3.3.2): NTProofStr || temp, appended to out;
 * exposed for the test vectors of MS-NLMP 4.2.4. */
int pv_ntlmv2_response(const uint8_t key[16], const uint8_t schal[8], uint64_t time,
		       const uint8_t cchal[8], const uint8_t *info, size_t ilen,
		       struct pv_buf *out);

/* SessionBaseKey (MS-NLMP 3.3.2): HMAC_MD5(ResponseKeyNT, NTProofStr), key being
 * ResponseKeyNT (NTOWFv2) and proof NTProofStr, the first 16 bytes of the NTLMv2 response. */
void pv_ntlmv2_session_key(const uint8_t key[16], const uint8_t proof[16], uint8_t out[16]);

#endif
