/* smb/ntlm.h: NTLMv2 logon messages (MS-NLMP) in a SPNEGO wrapper (RFC 4178), for the SMB2
 * engine (smb/async.h). Pure logic: no I/O, no clock (the caller passes the time and the
 * client challenge), so every function here is unit-tested with the protocol's test vectors.
 *
 * Only what a logon needs: NTLMv2 only, no NTLM signing or sealing keys (SMB2 signs with its
 * own algorithms, from the session key alone). The AUTHENTICATE carries what Windows clients
 * send against relaying and tampering (MS-NLMP 3.1.5.1.2): the client's copy of the server's
 * AV pairs with MsvAvTargetName (the service the client addresses, "cifs/<server>"),
 * MsvAvChannelBindings (all zero: SMB has no TLS channel) and, when the server sent a
 * timestamp, MsvAvFlags saying a MIC is there; and the MIC itself over the three messages.
 * The session key comes out of the logon for SMB2 signing; NTLMSSP_NEGOTIATE_KEY_EXCH is
 * never negotiated, so it is SessionBaseKey itself (see pv_smb_ntlm_authenticate) and no RC4 is
 * needed. */
#ifndef PV_SMB_NTLM_H
#define PV_SMB_NTLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* NTOWFv2 (MS-NLMP 3.3.2): HMAC_MD5(MD4(UTF-16LE(password)), UTF-16LE(UPPER(user) domain)).
 * Strings are UTF-8; -1 when one is not valid UTF-8 or out of memory. */
int pv_smb_ntowfv2(const char *password, size_t plen, const char *user, const char *domain,
		   uint8_t out[16]);

/* The first token of a logon: SPNEGO NegTokenInit offering NTLMSSP, holding NEGOTIATE. When
 * msg is not NULL, the NEGOTIATE message itself (the bytes inside the token: the MIC of the
 * AUTHENTICATE covers them) goes there, *mlen bytes of at most PV_SMB_NTLM_NEGOTIATE_MAX. */
#define PV_SMB_NTLM_NEGOTIATE_MAX 64
int pv_smb_ntlm_negotiate(struct pv_buf *out, uint8_t *msg, size_t *mlen);

/* What the server's CHALLENGE says. msg and target_info point into the token given to
 * parse. */
struct pv_smb_ntlm_challenge {
	const uint8_t *msg; /* the CHALLENGE message itself, msg_len bytes (the MIC covers it) */
	size_t msg_len;
	uint32_t flags;
	uint8_t challenge[8];
	const uint8_t *target_info;
	size_t target_info_len;
	int has_timestamp;  /* MsvAvTimestamp is in target_info */
	uint64_t timestamp; /* its value (FILETIME) */
};

/* Find the NTLMSSP CHALLENGE in the server's token (SPNEGO NegTokenResp, or bare NTLMSSP).
 * -1 when it holds none or is malformed. */
int pv_smb_ntlm_parse_challenge(const uint8_t *tok, size_t len, struct pv_smb_ntlm_challenge *c);

/* Who logs on, and what the AUTHENTICATE answers besides the CHALLENGE. */
struct pv_smb_ntlm_logon {
	const char *user, *domain; /* UTF-8 */
	const char *password;
	size_t plen;
	const char *spn;	  /* MsvAvTargetName: the service addressed, "cifs/<server>" with
				   * the server named as the client addressed it (UTF-8) */
	const uint8_t *negotiate; /* the NEGOTIATE message sent (pv_smb_ntlm_negotiate's msg) */
	size_t neglen;
	uint64_t now;	      /* FILETIME used when the server sent no timestamp */
	const uint8_t *cchal; /* 8 random bytes */
};

/* The client's copy of the server's AV pairs (MS-NLMP 3.1.5.1.2, 2.2.2.1), appended to out,
 * as the NTLMv2 response carries them: the server's pairs in its order up to MsvAvEOL, less
 * any MsvAvTargetName or MsvAvChannelBindings of its own; MsvAvFlags with 0x2 (a MIC is in
 * the AUTHENTICATE) when the server sent MsvAvTimestamp, set in the server's MsvAvFlags when
 * it sent one; then, as Windows orders them, MsvAvChannelBindings (16 zero bytes: no channel
 * bindings, MS-NLMP 2.2.2.1), MsvAvTargetName (spn in UTF-16LE, no NUL) and MsvAvEOL. -1 on
 * bad UTF-8 or out of memory; -2 when spn would not fit an AV pair's 16-bit length. */
int pv_smb_ntlm_target_info(const struct pv_smb_ntlm_challenge *c, const char *spn,
			    struct pv_buf *out);

/* The second token: SPNEGO NegTokenResp holding AUTHENTICATE (MS-NLMP 2.2.1.3, with its
 * Version field, all zero as NTLMSSP_NEGOTIATE_VERSION is not asked for, and its MIC field)
 * with the NTLMv2 response over pv_smb_ntlm_target_info's pairs for l->user in l->domain. The
 * MIC (MS-NLMP 3.1.5.1.2) is HMAC_MD5(ExportedSessionKey, NEGOTIATE || CHALLENGE ||
 * AUTHENTICATE with the MIC field zero), the messages being l->negotiate and c->msg. -1 on
 * bad UTF-8 or out of memory; -2 when a field would not fit its 16-bit length (MS-NLMP
 * 2.2.1.3): the NTLMv2 response is 48 bytes longer than the client's AV pairs, which are the
 * server's target info and the pairs added (24 bytes, twice the SPN's UTF-16 units, and 8
 * for MsvAvFlags when added), so a server's target info near 65,400 bytes cannot be
 * answered; or a user or domain of more than 32767 UTF-16 units.
 *
 * On success session_key holds the logon's session key, the one SMB2 takes as
 * Session.SessionKey (the caller wipes it after use). It is MS-NLMP's ExportedSessionKey:
 * without NTLMSSP_NEGOTIATE_KEY_EXCH, which this client never asks for, that is the
 * KeyExchangeKey (3.1.5.1.2), which for NTLMv2 is SessionBaseKey (3.4.5.1): see
 * pv_smb_ntlmv2_session_key. The MIC is keyed with it too. The AUTHENTICATE's
 * EncryptedRandomSessionKey stays empty. */
int pv_smb_ntlm_authenticate(const struct pv_smb_ntlm_challenge *c,
			     const struct pv_smb_ntlm_logon *l, struct pv_buf *out,
			     uint8_t session_key[16]);

/* Whether the AUTHENTICATE for c says it has a MIC (the server sent a timestamp) while NTLM
 * signing is granted with extended session security: then the server's SPNEGO (Samba's,
 * Windows') wants a mechListMIC with it, and pv_smb_ntlm_authenticate puts it in its NegTokenResp
 * (RFC 4178 5: a mechanism that signs, once the MIC binds the messages). */
bool pv_smb_ntlm_signs(const struct pv_smb_ntlm_challenge *c);
/* That SPNEGO mechListMIC: the NTLMSSP_MESSAGE_SIGNATURE (MS-NLMP 2.2.2.9.2, 3.4.4.2: Version
 * 1, the first 8 bytes of HMAC_MD5(SignKey, SeqNum || message), SeqNum; no RC4 over them, as
 * KEY_EXCH is not negotiated) with sequence number 0 over the DER of the mechTypes our
 * NegTokenInit offered (SEQUENCE { NTLMSSP's OID }), under the client's signing key, or with
 * server the server's: SIGNKEY = MD5(ExportedSessionKey || the "session key to ... signing key
 * magic constant" of that direction and its NUL) (3.4.5.2). */
void pv_smb_ntlm_mech_list_mic(const uint8_t session_key[16], bool server, uint8_t out[16]);
/* The server's final SPNEGO token (its NegTokenResp, len bytes; none at all is taken): 0 when
 * it carries no mechListMIC, or want; -1 when it carries another; -2 when it is not a
 * NegTokenResp. */
int pv_smb_ntlm_final_mic(const uint8_t *tok, size_t len, const uint8_t want[16]);

/* Where the MIC field is in an AUTHENTICATE message (after the fixed fields and Version). */
#define PV_SMB_NTLM_MIC_AT 72

/* The NTLMv2 response itself (MS-NLMP 3.3.2): NTProofStr || temp, appended to out;
 * exposed for the test vectors of MS-NLMP 4.2.4. */
int pv_smb_ntlmv2_response(const uint8_t key[16], const uint8_t schal[8], uint64_t time,
			   const uint8_t cchal[8], const uint8_t *info, size_t ilen,
			   struct pv_buf *out);

/* SessionBaseKey (MS-NLMP 3.3.2): HMAC_MD5(ResponseKeyNT, NTProofStr), key being
 * ResponseKeyNT (NTOWFv2) and proof NTProofStr, the first 16 bytes of the NTLMv2 response. */
void pv_smb_ntlmv2_session_key(const uint8_t key[16], const uint8_t proof[16], uint8_t out[16]);

#endif
