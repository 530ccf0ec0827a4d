/* smb/engine.h: the SMB2 engine's private state (struct pv_smb_conn, its requests and its logon)
 * and what its files call of each other: conn.c (the loop, connections, sockets, deadlines),
 * frame.c (frames out and in: credits, compounds, signing, sealing, answers matched), logon.c
 * (NEGOTIATE, the logon and its keys, trees, VALIDATE_NEGOTIATE), ops.c (the requests). Not
 * for use outside these four files: smb/async.h is the engine's interface. */
#ifndef PV_SMB_ENGINE_H
#define PV_SMB_ENGINE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smb/async.h"
#include "smb/ntlm.h"
#include "smb/smb2.h"
#include "util/buf.h"
#include "util/secret.h"

enum cstate { CS_CONNECTING, CS_NEGOTIATE, CS_OPEN, CS_DEAD };

/* What an answer is for: a caller's request, or a step of the engine's own (K_VALIDATE: the
 * FSCTL_VALIDATE_NEGOTIATE_INFO after a tree connect, carrying the tree's callback). */
enum kind { K_USER, K_NEGOTIATE, K_SESSION, K_TREE, K_LOGOFF, K_VALIDATE };

struct req {
	uint64_t mid;
	uint16_t cmd;
	enum kind kind;
	pv_smb_cb cb;
	void *arg;
	double sent, due;
	struct pv_buf body; /* encoded, until it is framed */
	bool encrypted;	    /* it went encrypted: its answer must come so */
	bool sign;	    /* signed even where the session does not sign (K_VALIDATE) */
	double since;	    /* K_VALIDATE: when its tree connect was sent */
	unsigned group;	    /* waiting for credits: the messages of its compound (on the first) */
	uint16_t charge;    /* the credits (and message ids) it takes: 1, or a READ's over 64 KiB
			     * (MS-SMB2 3.2.4.1.5: one per 64 KiB, with large MTU) */
	struct req *next;
};

/* The logon under way (pv_smb_logon). */
struct signon {
	bool active;
	char *wg, *user;
	struct pv_secret *pw;
	pv_smb_auth_fn auth;
	void *auth_arg;
	bool auth_done;
	enum pv_smb_encrypt encrypt;
	pv_smb_cb cb;
	void *arg;
	int step;
	uint8_t skey[32]; /* the logon's session key, until the keys are made */
	size_t sklen;
	/* NTLM: the NEGOTIATE message sent, until the AUTHENTICATE's MIC is made of it; the
	 * server's SPNEGO mechListMIC due in the final answer, when ours went */
	uint8_t ntlm_neg[PV_SMB_NTLM_NEGOTIATE_MAX];
	size_t ntlm_neglen;
	uint8_t ntlm_srv_mic[16];
	bool ntlm_srv_mic_due;
};

struct pv_smb_conn {
	struct pv_smb_loop *l;
	struct pv_smb_conn *prev, *next; /* in the loop's list */
	int fd;
	enum cstate st;
	char *host, *server;
	double tmo; /* seconds */
	bool pipelined;
	double last_final; /* the last final answer (pipelined deadlines count from it) */
	/* the opening of pv_smb_open: a logon and a tree to make before ready, begun at
	 * open_t0; due T after it began or after its last final answer (last_final), the later:
	 * each step of it may take T, as a request */
	bool opening;
	double open_t0;
	pv_smb_cb ready;
	void *ready_arg;
	struct signon want; /* the opening's logon, not yet started */
	char *open_share;
	enum pv_smb_encrypt open_encrypt;
	/* sending */
	uint64_t mid;
	int64_t credits;
	bool epout; /* EPOLLOUT asked for */
	uint8_t *out, *in;
	size_t olen, ocap, osent, ilen, icap;
	struct req *pend, *backlog, *backlog_tail; /* sent; waiting for credits */
	struct req *chain, *chain_tail;		   /* a compound being made */
	unsigned nchain;
	bool chaining;
	int chain_err;
	/* what NEGOTIATE settled */
	uint16_t offer_ciphers[4];
	size_t noffer_ciphers;
	uint8_t neg_hash[64];	 /* SHA-512(0^64 || the NEGOTIATE request) */
	uint8_t client_guid[16]; /* the NEGOTIATE request's ClientGuid */
	bool fixed_guid;	 /* ... the caller's, not a random one */
	uint64_t prev_sid;	 /* the session the logon replaces (PreviousSessionId) */
	struct smb2_conn sec;
	bool negotiated;
	/* the session */
	uint64_t sid;
	bool keyed;
	struct smb2_keys keys;
	bool sess_encrypt, sess_sign;
	uint8_t sess_hash[64];	    /* 3.1.1: the session's preauth hash */
	bool validating, validated; /* 3.0, 3.0.2: the session's VALIDATE_NEGOTIATE under way,
				     * done */
	struct signon lg;
	/* the tree */
	uint32_t tid;
	bool tree_encrypt;
	char *share;
	char desc[96];
	char err[384];
	int code;
	bool freed; /* closed: freed at the end of the loop's turn */
	/* a callback yielded: frames wait in the input for the next turn (held) */
	bool yield, is_held;
	bool eof; /* the server closed (eof_err: how): said once what came before is taken */
	int eof_err;
};

struct pv_smb_loop {
	int ep;
	struct pv_smb_conn *conns;
	size_t n;
	struct pv_smb_conn *dead; /* closed during a turn: freed at its end */
	double sweep_at;	  /* the next look at every connection's deadlines */
	size_t nheld;		  /* connections whose input holds frames a callback left */
	size_t ready;		  /* connections the last wait found ready */
};

/* ---- conn.c ---- */

/* The connection is lost: every request completes with the failure (code, message as
 * printf), a logon under way and ready too. Once only: a lost connection stays so. */
void smba_lose(struct pv_smb_conn *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Send what is queued. A failure loses the connection only when may_lose (see conn.c). */
void smba_flush(struct pv_smb_conn *c, bool may_lose);

/* ---- frame.c ---- */

struct req *smba_req_new(pv_smb_cb cb, void *arg, uint16_t cmd, enum kind kind);
/* The credits the n linked requests from q take (a READ over 64 KiB more than one). */
unsigned smba_charges(const struct req *q, unsigned n);
void smba_req_free(struct req *q);
/* q's callback with d, then q freed. */
void smba_complete(struct pv_smb_conn *c, struct req *q, const struct pv_smb_done *d);
/* A request whose body was encoded into q->body (enc is the encoder's result): into the
 * compound being made, or queued. PV_OK, or the failure (q freed, no callback). */
int smba_send_req(struct pv_smb_conn *c, struct req *q, int enc, const char *what);
/* Queue the n requests from q (linked) as one frame, now or behind what waits for credits. */
void smba_submit(struct pv_smb_conn *c, struct req *q, unsigned n);
/* Send what waited for credits, in order, while credits allow. */
void smba_unblock(struct pv_smb_conn *c);
/* One frame that came (len bytes at f, its Direct TCP header taken off): opened when
 * encrypted, then each message of it checked and taken. */
void smba_frame(struct pv_smb_conn *c, uint8_t *f, size_t len);

/* ---- logon.c ---- */

/* The logon's secrets wiped, its strings freed. */
void smba_logon_clear(struct signon *g);
/* The session ends, or never began: its keys go. */
void smba_session_end(struct pv_smb_conn *c);
/* c->desc made again from what the connection speaks now (pv_smb_describe). */
void smba_describe(struct pv_smb_conn *c);
/* The connect is done: NEGOTIATE goes. */
void smba_negotiate(struct pv_smb_conn *c);
/* The NEGOTIATE answer m (a success's: checked, then what it settled taken). */
void smba_negotiate_answer(struct pv_smb_conn *c, const struct smb2_hdr *h, struct smb2_rd *m);
/* NEGOTIATE answered and checked: the opening goes on with its logon, or ends. */
void smba_negotiated(struct pv_smb_conn *c);
/* What a SESSION_SETUP answer does before its signature is checked (the session id, the
 * preauth hash, the keys); -1 when the connection was lost. */
int smba_session_pre(struct pv_smb_conn *c, const struct smb2_hdr *h, struct smb2_rd *m,
		     struct smb2_session_setup_rsp *a);
/* A SESSION_SETUP answer, checked: the logon's next step, or its end. */
void smba_session_answer(struct pv_smb_conn *c, const struct smb2_hdr *h,
			 const struct smb2_session_setup_rsp *a);
/* The server's mechListMIC in the final answer of an NTLM logon checked; -1 when the
 * connection was lost over it. */
int smba_ntlm_final(struct pv_smb_conn *c, const struct smb2_rd *tok);
/* A TREE_CONNECT answer (a success's decoded into a): the tree taken, or why it cannot be
 * (d->code, d->msg). */
int smba_tree_answer(struct pv_smb_conn *c, const struct smb2_hdr *h,
		     const struct smb2_tree_connect_rsp *a, struct pv_smb_done *d);
/* The tree connect tq was answered and taken: its VALIDATE_NEGOTIATE goes (tq freed). */
void smba_validate_start(struct pv_smb_conn *c, struct req *tq);
/* The answer to VALIDATE_NEGOTIATE: 0 when it holds, else -1 and the connection lost. */
int smba_validate_answer(struct pv_smb_conn *c, const struct smb2_hdr *h, struct smb2_rd *m,
			 bool decrypted);

/* ---- ops.c ---- */

/* A request of the caller's: the connection must be open with a session and a tree. */
int smba_ready_for(struct pv_smb_conn *c, uint16_t cmd, pv_smb_cb cb, void *arg, struct req **q);
/* The answer of a user's request (a success's body, or a failure's error response) decoded
 * into d. -1 (m->why) when malformed. */
int smba_decode(uint16_t cmd, uint32_t status, struct smb2_rd *m, struct pv_smb_done *d);

#endif
