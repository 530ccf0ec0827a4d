/* learn/learn.c: a capture's SMB traffic read in one pass (see learn/learn.h): the connections to
 * the SMB port, each direction reassembled (learn/stream.c) and cut into NetBIOS frames (RFC
 * 1002's session message: a zero byte and a 24-bit length, as SMB2 over TCP has it, MS-SMB2
 * 2.1), each frame's SMB2 messages decoded (smb/trace.c) and counted. A direction whose start
 * was not captured, or that lost bytes in mid-frame, is out of step: it is read again from the
 * next place where a frame header is followed by an SMB signature. */
#include "learn/learn.h"
#include "playbooks/workload.h"

#include "learn/stream.h"
#include "learn/table.h"
#include "capture/capture.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/utf16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fstate { F_HDR, F_BODY, F_RESYNC };

/* One direction's NetBIOS frames. */
struct framer {
	struct conn *c;
	enum fstate st;
	uint8_t hdr[8]; /* the frame header; in F_RESYNC the last 8 bytes seen */
	size_t hn;
	size_t want, have; /* the frame's length, its bytes come so far */
	uint8_t *buf;	   /* its first bytes (PV_LEARN_KEEP at most) */
	size_t cap, kept;
	bool holed; /* bytes of it were lost: nothing past the hole is kept */
	struct pv_learn_stream s;
};

struct conn {
	struct conn *next; /* in its hash chain */
	uint8_t key[36];   /* client address and port, server address and port */
	struct pv_learn *l;
	struct framer to_srv, to_cli;
	struct pv_learn_table pend;	/* requests awaiting their answer: message id -> command */
	struct pv_learn_table files;	/* files open: file id (folded) -> when, the user */
	struct pv_learn_table sessions; /* session id -> its user's place */
	/* the namespace: tree id -> its share's node + 1 (a request's own node waits in pend,
	 * w: the node + 1, v: the command and a listing's class << 8); the node of the last
	 * CREATE asked (a compound's requests after it work on it) */
	struct pv_learn_table trees;
	long last_node;
	char logon[80];	      /* the account of the NTLM logon under way ("" none) */
	uint64_t last_create; /* the message id of the last CREATE asked */
	bool fin_cli, fin_srv;
};

#define NBUCKETS 4096u

struct pv_learn {
	struct pv_learn_counts *c;
	uint16_t port;
	int link;
	struct conn *bucket[NBUCKETS];
	size_t nconns;
	double now;	 /* the time of the frame being read */
	double gap;	 /* the activity gap set, 0: learned */
	bool keep_names; /* users by their names, not hashes */
	/* pv_learn_read's second pass: the first's counts, its users' homes as they were at the
	 * capture's end (the depths of the kinds' steps are from them) */
	const struct pv_learn_counts *known;
	struct pv_learn_ns ns;
};

/* ---- messages ---- */

/* The client's address of a connection, as text. */
static void client_addr(const struct conn *cn, char *out, size_t len)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (!memcmp(cn->key, mapped, 12))
		snprintf(out, len, "%u.%u.%u.%u", cn->key[12], cn->key[13], cn->key[14],
			 cn->key[15]);
	else
		for (size_t i = 0, o = 0; i < 16 && o + 6 < len; i += 2)
			o += (size_t)snprintf(out + o, len - o, "%s%x", i ? ":" : "",
					      cn->key[i] << 8 | cn->key[i + 1]);
}

/* The user of a session of this connection: the one its logon named, or (a logon the capture
 * does not hold) one of its own, by session id and address. -1 when there is no room. */
static long user_of(struct conn *cn, uint64_t session)
{
	struct pv_learn_table_entry *e = pv_learn_table_get(&cn->sessions, session);
	char addr[48], id[80];
	long u;

	if (e)
		return (long)e->v;
	client_addr(cn, addr, sizeof(addr));
	snprintf(id, sizeof(id), "session:%llx@%s", (unsigned long long)session, addr);
	if ((u = pv_learn_users_get(&cn->l->c->users, id, PV_LEARN_USER_SESSION)) >= 0)
		pv_learn_table_put(&cn->sessions, session, 0, (uint32_t)u);
	return u;
}

/* A session set up: its user is the account its NTLM logon named, else (Kerberos) the
 * client's address. */
static void logged_on(struct conn *cn, uint64_t session)
{
	struct pv_learn_counts *c = cn->l->c;
	char addr[48], id[80];
	long u;

	if (cn->logon[0]) {
		u = pv_learn_users_get(&c->users, cn->logon, PV_LEARN_USER_NTLM);
	} else {
		client_addr(cn, addr, sizeof(addr));
		snprintf(id, sizeof(id), "addr:%s", addr);
		u = pv_learn_users_get(&c->users, id, PV_LEARN_USER_ADDR);
	}
	cn->logon[0] = '\0';
	c->logons++;
	if (u < 0)
		return;
	pv_learn_user_logon(&c->users.u[u], cn->l->now);
	/* the time of the logon, for the session's lifetime (a session seen without its logon
	 * has none: its time is 0) */
	pv_learn_table_put(&cn->sessions, session, cn->l->now, (uint32_t)u);
}

/* A LOGOFF: the session's lifetime, from its logon, when the capture holds both. */
static void logged_off(struct conn *cn, uint64_t session)
{
	struct pv_learn_table_entry e;
	struct pv_learn_counts *c = cn->l->c;

	c->logoffs++;
	if (pv_learn_table_take(&cn->sessions, session, &e) && e.t > 0)
		pv_learn_hist_add(&c->session_times, cn->l->now - e.t);
}

/* A file id folded into a key (persistent and volatile halves) */
static uint64_t fid_key(const uint8_t f[16])
{
	uint64_t a, b;

	memcpy(&a, f, 8);
	memcpy(&b, f + 8, 8);
	return a ^ (b * 0x9E3779B97F4A7C15ull);
}

/* A request's name in UTF-8 at most (a longer one is followed as no folder or file) */
#define NAME_UTF8 4096

/* A CREATE's pending entry whose compound closes the file: its answer's file id not kept */
#define CLOSED_IN_COMPOUND 0x10000u
/* A CREATE's pending entry that opens a file to read or to edit in place (OPEN, not a stat open,
 * FILE_DIRECTORY_FILE not set), and asks a lease or an oplock: counted when it is granted */
#define FILE_OPEN	 0x20000u
#define FILE_OPEN_LEASED 0x40000u

/* The activity under way of user us ended: its kind counted (its place in c->kinds, or -1). */
static long activity_end(struct pv_learn_counts *c, struct pv_learn_user *us)
{
	long k;

	if (!us->cur_requests)
		return -1;
	k = pv_learn_kinds_add(&c->kinds, &us->cur, us->cur_requests, us->last - us->cur_start);
	memset(&us->cur, 0, sizeof(us->cur));
	us->cur_requests = 0;
	return k;
}

/* ---- the namespace ---- */

/* A request's name (a CREATE's, a TREE_CONNECT's path) in UTF-8, into out: false when it has
 * none, it is not UTF-16 or it is longer than out. */
static bool name_of(const struct pv_smb_trace_msg *m, char *out, size_t cap)
{
	return m->name && pv_utf16le_to_utf8(m->name, m->namelen, out, cap) == 0;
}

/* The depth of node n below user u's home (pv_learn_ns_depth): the home the first pass found
 * by the capture's end, in the second; else the one found so far. */
static int depth_of(const struct conn *cn, long u, long n)
{
	const struct pv_learn *l = cn->l;
	const struct pv_learn_user *us = &l->c->users.u[u];
	uint32_t home = us->home;

	/* the same capture read again: the same users, in the same order */
	if (l->known && (size_t)u < l->known->users.n && !strcmp(l->known->users.u[u].id, us->id))
		home = l->known->users.u[u].home;
	return pv_learn_ns_depth(&l->ns, (long)home - 1, n);
}

/* The share of a tree: the one its TREE_CONNECT named, else (the connect not captured) one of
 * its own, by connection and tree id. */
static long share_of(struct conn *cn, uint32_t tree)
{
	struct pv_learn_table_entry *e = pv_learn_table_get(&cn->trees, tree);
	uint64_t tag;
	long s;

	if (e)
		return (long)e->v - 1;
	tag = pv_hash_fnv64(pv_hash_fnv64(PV_HASH_FNV64_INIT, cn->key, sizeof(cn->key)), &tree,
			    sizeof(tree));
	if ((s = pv_learn_ns_share(&cn->l->ns, NULL, tag)) >= 0)
		pv_learn_table_put(&cn->trees, tree, 0, (uint32_t)s + 1);
	return s;
}

/* The node of the file a request works on: the one its file id was opened as, or a compound's
 * CREATE before it. */
static long node_of(struct conn *cn, const struct pv_smb_trace_msg *m)
{
	struct pv_learn_table_entry *e;

	if (!m->has_fid)
		return -1;
	if (m->fid_related)
		return m->related ? cn->last_node : -1;
	e = pv_learn_table_get(&cn->files, fid_key(m->fid));
	return e && e->v ? (long)e->v - 1 : -1;
}

struct listing {
	struct pv_learn_ns *ns;
	long dir;
};

static void listed(void *arg, const char *name, bool dir, uint64_t eof)
{
	struct listing *li = arg;

	/* "." and ".." are the folder and its parent, not what it holds */
	if (strcmp(name, ".") && strcmp(name, ".."))
		pv_learn_ns_seen(li->ns, pv_learn_ns_path(li->ns, li->dir, name), dir, eof, false);
}

/* A final answer's news of the node n its request named (with a listing's class): a tree's
 * share, what a CREATE opened (and the home of its user u), what a listing holds. */
static void ns_answer(struct conn *cn, const struct pv_smb_trace_msg *m, long n, uint8_t cls,
		      long u)
{
	struct pv_learn_ns *ns = &cn->l->ns;

	if (n < 0 || m->status != 0)
		return;
	if (m->cmd == 3) {
		pv_learn_table_put(&cn->trees, m->tree, 0, (uint32_t)n + 1);
	} else if (m->cmd == 5 && m->has_attrs) {
		struct pv_learn_user *us = u >= 0 ? &cn->l->c->users.u[u] : NULL;

		/* FILE_CREATED: not there before the capture's CREATE */
		pv_learn_ns_seen(ns, n, m->attrs & 0x10, m->eof, m->action == 2);
		if (us && ns->n[n].parent >= 0) { /* a file, or a folder not a share's root */
			long h = pv_learn_ns_home(ns, us->home ? (long)us->home - 1 : -1, n);

			us->home = h >= 0 ? (uint32_t)h + 1 : us->home;
		}
	} else if (m->cmd == 14 && m->out) {
		struct listing li = {ns, n};

		pv_smb_trace_dir(m->out, m->outlen, cls, listed, &li);
	}
}

static void ioctl_count(struct pv_learn_counts *c, uint32_t ctl)
{
	for (size_t i = 0; i < PV_LEARN_IOCTLS; i++)
		if (c->ioctl_code[i] == ctl || !c->ioctl_req[i]) {
			c->ioctl_code[i] = ctl;
			c->ioctl_req[i]++;
			return;
		}
	c->ioctl_other++;
}

static void request(struct conn *cn, const struct pv_smb_trace_msg *m)
{
	struct pv_learn_counts *c = cn->l->c;
	double t = cn->l->now;
	char name[NAME_UTF8]; /* the name it names */
	long u, node = -1;
	unsigned listing = 0; /* a QUERY_DIRECTORY's pattern, as its step's bits */

	c->req[m->cmd]++;
	switch (m->cmd) {
	case 1: /* SESSION_SETUP: the account of an NTLM logon, for its answer */
		if (m->sec && pv_learn_ntlm_user(m->sec, m->seclen, cn->l->keep_names, cn->logon,
						 sizeof(cn->logon)) < 0)
			cn->logon[0] = '\0';
		break;
	case 3: /* TREE_CONNECT: its share, for its answer's tree id */
		if (name_of(m, name, sizeof(name)))
			node = pv_learn_ns_share(&cn->l->ns, name, 0);
		break;
	case 5: /* CREATE */
		cn->last_create = m->mid;
		if (m->disposition < 6)
			c->disposition[m->disposition]++;
		node = cn->last_node =
			name_of(m, name, sizeof(name))
				? pv_learn_ns_path(&cn->l->ns, share_of(cn, m->tree), name)
				: -1;
		break;
	case 14: /* QUERY_DIRECTORY: the folder listed, for its answer; a listing of it when it
		  * is the first on this open (a compound's, on the open just made) */
		listing = pv_playbook_workload_learned_listing(m->name, m->namelen);
		c->listing[listing >> 5]++;
		node = node_of(cn, m);
		if (node >= 0 && m->fid_related) {
			pv_learn_ns_listed(&cn->l->ns, node);
		} else if (node >= 0) {
			struct pv_learn_table_entry *fe =
				pv_learn_table_get(&cn->files, fid_key(m->fid));

			if (fe && !fe->w) {
				fe->w = 1;
				pv_learn_ns_listed(&cn->l->ns, node);
			}
		}
		break;
	case 15: /* CHANGE_NOTIFY: a watch (of a whole subtree?), timed to its answer */
		c->notify.tree += m->flags & 1u;
		break;
	case 11: /* IOCTL: by its control code */
		ioctl_count(c, m->ctl);
		break;
	case 6: /* CLOSE: how long the file was open (a compound's own: no time) */
		if (m->has_fid && m->fid_related && m->related) {
			struct pv_learn_table_entry *e =
				pv_learn_table_get(&cn->pend, cn->last_create);

			/* the CREATE before it in the compound: its file id is not kept */
			if (e && (e->v & 0xffffu) == 5) /* (the flags of a file open aside) */
				e->v |= CLOSED_IN_COMPOUND;
			pv_learn_hist_add(&c->open_times, 0);
		} else if (m->has_fid) {
			struct pv_learn_table_entry e;

			if (pv_learn_table_take(&cn->files, fid_key(m->fid), &e))
				pv_learn_hist_add(&c->open_times, t - e.t);
		}
		break;
	case 8: /* READ */
		c->read_asked += m->length;
		pv_learn_sizes_add(&c->read_sizes, m->length);
		break;
	case 9: /* WRITE */
		c->written += m->length;
		pv_learn_sizes_add(&c->write_sizes, m->length);
		pv_learn_ns_written(&cn->l->ns, node_of(cn, m));
		break;
	case 17: /* SET_INFO: the file changed in place too */
		pv_learn_ns_written(&cn->l->ns, node_of(cn, m));
		break;
	default:
		break;
	}
	/* a CANCEL names the request it cancels, and has no answer of its own; the node a
	 * request names (and a listing's class) wait for its answer with it */
	if (m->cmd != 12) {
		bool file = m->cmd == 5 && m->disposition == 1 && !(m->create_options & 1) &&
			    pv_playbook_workload_learned_create(1, m->access) !=
				    PV_PLAYBOOK_WORKLOAD_LEARNED_STAT;
		struct pv_learn_table_entry *pe = pv_learn_table_put(
			&cn->pend, m->mid, t,
			m->cmd | (m->cmd == 14 ? (uint32_t)m->info_class << 8 : 0u) |
				(file ? FILE_OPEN : 0u) |
				(file && m->oplock ? FILE_OPEN_LEASED : 0u));

		if (!pe)
			c->untracked++;
		else
			pe->w = (uint32_t)(node + 1);
	}
	/* what the user did: NEGOTIATE and the logon's first leg have no session yet */
	if (m->session && m->cmd != 0 && m->cmd != 1 && (u = user_of(cn, m->session)) >= 0) {
		struct pv_learn_user *us = &c->users.u[u];
		bool starts = false; /* it begins an activity (the kinds' pass) */

		/* its activity: a gap longer than the activity gap ends the one under way, once
		 * the user holds no file open (an activity works on what it opened, to its CLOSE),
		 * or once the gap is PV_LEARN_HOLD times as long (at least PV_LEARN_HOLD_MIN) */
		if (cn->l->gap > 0) {
			double idle = t - us->last, hold = PV_LEARN_HOLD * cn->l->gap;

			if (us->cur_requests && idle > cn->l->gap &&
			    (!us->open ||
			     idle > (hold > PV_LEARN_HOLD_MIN ? hold : PV_LEARN_HOLD_MIN))) {
				long k = activity_end(c, us);

				/* the think time: from its last request to this one (and after
				 * its kind) */
				pv_learn_hist_add(&c->think_gaps, idle);
				if (k >= 0)
					pv_learn_hist_add(&c->kinds.k[k].think, idle);
			}
			if (!us->cur_requests++) {
				us->cur_start = t;
				starts = true;
			} else { /* a gap within the activity, however long */
				pv_learn_hist_add(&c->act_within, idle);
				/* after each command, but for one QUERY_DIRECTORY to the next: a
				 * replay makes a listing whole, its requests one after another, and
				 * waits after its last (the gaps after a listing's NO_MORE_FILES,
				 * not after the page of names before it: the built-in load's, 211
				 * us at the median with both, were replayed at 422) */
				if (us->last_cmd < PV_SMB_TRACE_NCMD &&
				    !(us->last_cmd == 14 && m->cmd == 14))
					pv_learn_hist_add(&c->act_within_after[us->last_cmd], idle);
			}
			pv_learn_kind_shape_add(
				&us->cur,
				m->cmd == 5    ? pv_playbook_workload_learned_create(m->disposition,
										     m->access)
				: m->cmd == 11 ? 11 | pv_playbook_workload_learned_fsctl(m->ctl)
				: m->cmd == 14 ? 14 | listing
					       : m->cmd);
			if (m->cmd == 5)
				pv_learn_kind_shape_depth(&us->cur, depth_of(cn, u, node));
		}
		if (m->cmd == 14) { /* where the folder listed is: the home, below it, else */
			int d = depth_of(cn, u, node);

			c->listing_at[d == 0 ? 0 : d > 0 ? 1 : 2]++;
		}
		pv_learn_user_request(us, t);
		if (m->cmd != 12) { /* a CANCEL has no answer of its own */
			if (!us->waiting && us->answered > 0) {
				pv_learn_hist_add(&c->client_delays, t - us->answered);
				if (cn->l->gap > 0 &&
				    !starts) /* within an activity, however long */
					pv_learn_hist_add(&c->act_client, t - us->answered);
			}
			us->waiting++;
		}
		if (m->cmd == 5)
			us->open++;
		else if (m->cmd == 6 && us->open) /* a file opened before the capture: none */
			us->open--;
		us->last_cmd = (uint8_t)(m->cmd < PV_SMB_TRACE_NCMD ? m->cmd : UINT8_MAX);
		us->trees += m->cmd == 3;
		us->opens += m->cmd == 5;
		us->listings += m->cmd == 14;
		us->notifies += m->cmd == 15;
	}
	if (m->cmd == 2) /* LOGOFF, once its user has it */
		logged_off(cn, m->session);
}

static void message(void *arg, const struct pv_smb_trace_msg *m)
{
	struct conn *cn = arg;
	struct pv_learn_counts *c = cn->l->c;
	long au = -1; /* the answer's user */

	if (m->cmd >= PV_SMB_TRACE_NCMD) {
		c->unknown_cmd++;
		return;
	}
	if (!m->response) {
		request(cn, m);
		return;
	}
	c->resp[m->cmd]++;
	if (m->mid == UINT64_MAX && m->cmd == 18) { /* a break the server sends on its own */
		c->notifications++;
		return;
	}
	if (m->async && m->status == 0x00000103u) { /* STATUS_PENDING: the answer is to come */
		c->interim++;
		return;
	}
	c->ans[m->cmd]++;
	/* the user's answer: when it came (a session not followed yet is no user's: an answer
	 * makes none) */
	if (m->session && m->cmd > 1) {
		struct pv_learn_table_entry *se = pv_learn_table_get(&cn->sessions, m->session);

		if (se && se->v < c->users.n) {
			struct pv_learn_user *us = &c->users.u[se->v];

			us->waiting -= us->waiting > 0;
			us->answered = cn->l->now;
			au = (long)se->v;
		}
	}
	c->status_class[m->cmd][m->status >> 30]++;
	/* STATUS_OBJECT_NAME_NOT_FOUND, STATUS_OBJECT_PATH_NOT_FOUND */
	c->not_found[m->cmd] += m->status == 0xC0000034u || m->status == 0xC000003Au;
	if ((m->status & 0xC0000000u) == 0xC0000000u)
		c->errors++;
	if (m->cmd == 8)
		c->read_got += m->got;
	if (m->cmd == 1 && m->status == 0)
		logged_on(cn, m->session);
	{
		struct pv_learn_table_entry e = {0};
		bool asked = pv_learn_table_take(&cn->pend, m->mid, &e);

		if (asked)
			c->matched++;
		else
			c->unmatched_ans++;
		if (asked && m->cmd == 15 && e.v == 15)
			pv_learn_notify_ended(&c->notify, cn->l->now - e.t, m->status);
		if (asked && m->cmd == 5 && (e.v & FILE_OPEN) && !(m->status & 0xC0000000u)) {
			c->file_opens++;
			c->file_opens_leased += !!(e.v & FILE_OPEN_LEASED);
		}
		/* a CREATE refused opened nothing (its compound's CLOSE, refused too, was counted)
		 */
		if (m->cmd == 5 && asked && (m->status & 0xC0000000u) == 0xC0000000u &&
		    !(e.v & CLOSED_IN_COMPOUND) && m->session) {
			long u = user_of(cn, m->session);

			if (u >= 0 && c->users.u[u].open)
				c->users.u[u].open--;
			/* the user's last step, when it is this CREATE: a refused one */
			if (u >= 0 && m->mid == cn->last_create && !m->related)
				pv_learn_kind_shape_refused(&c->users.u[u].cur);
		}
		/* what the request named (e.w: its node + 1) as the answer showed it; the file
		 * opened, to time it until its CLOSE (unless its compound closed it), with its
		 * node, for what is done with it */
		ns_answer(cn, m, (long)e.w - 1, (uint8_t)(e.v >> 8), au);
		if (m->cmd == 5 && m->has_fid && !(asked && (e.v & CLOSED_IN_COMPOUND)) &&
		    !pv_learn_table_put(&cn->files, fid_key(m->fid), cn->l->now, e.w))
			c->untracked++;
	}
}

/* ---- NetBIOS frames ---- */

static void frame_done(struct framer *f)
{
	struct pv_learn_counts *c = f->c->l->c;
	bool cut = false;
	char why[160];
	size_t n = f->kept;

	c->nb_frames++;
	switch (pv_smb_trace_kind(f->buf, n)) {
	case PV_SMB_TRACE_SMB2:
		c->smb2_frames++;
		c->smb2_bytes += f->want;
		if (pv_smb_trace_frame(f->buf, n, f->want, message, f->c, &cut, why, sizeof(why)) <
		    0) {
			if (!c->malformed++)
				snprintf(c->first_malformed, sizeof(c->first_malformed), "%s", why);
		} else if (cut) {
			c->cut_chains++;
		}
		break;
	case PV_SMB_TRACE_ENCRYPTED:
		c->enc_frames++;
		c->enc_bytes += f->want;
		break;
	case PV_SMB_TRACE_COMPRESSED:
		c->comp_frames++;
		c->comp_bytes += f->want;
		break;
	case PV_SMB_TRACE_SMB1:
		c->smb1_frames++;
		c->smb1_bytes += f->want;
		break;
	default:
		c->other_frames++;
		c->other_bytes += f->want;
		break;
	}
	f->st = F_HDR;
	f->hn = 0;
}

static void keep(struct framer *f, const uint8_t *p, size_t n)
{
	if (f->holed || f->kept >= PV_LEARN_KEEP)
		return;
	if (n > PV_LEARN_KEEP - f->kept)
		n = PV_LEARN_KEEP - f->kept;
	if (f->kept + n > f->cap) {
		size_t ncap = f->cap ? f->cap : 256;
		uint8_t *b;

		while (ncap < f->kept + n)
			ncap *= 2;
		if (ncap > PV_LEARN_KEEP)
			ncap = PV_LEARN_KEEP;
		if (!(b = realloc(f->buf, ncap))) {
			f->holed = true; /* out of memory: the frame is counted, not decoded */
			return;
		}
		f->buf = b;
		f->cap = ncap;
	}
	memcpy(f->buf + f->kept, p, n);
	f->kept += n;
}

static void body_start(struct framer *f, size_t len)
{
	f->st = F_BODY;
	f->want = len;
	f->have = f->kept = 0;
	f->holed = false;
}

/* In F_RESYNC, one more byte: a frame header (a zero byte, a length of 64 bytes to 16 MiB)
 * followed by an SMB signature starts a frame again. */
static void resync_byte(struct framer *f, uint8_t b)
{
	size_t len;

	if (f->hn == 8)
		memmove(f->hdr, f->hdr + 1, --f->hn);
	f->hdr[f->hn++] = b;
	if (f->hn < 8 || f->hdr[0] != 0 || memcmp(f->hdr + 5, "SMB", 3) != 0 ||
	    (f->hdr[4] != 0xfe && f->hdr[4] != 0xfd && f->hdr[4] != 0xfc && f->hdr[4] != 0xff))
		return;
	len = (size_t)f->hdr[1] << 16 | (size_t)f->hdr[2] << 8 | f->hdr[3];
	if (len < 64)
		return;
	f->c->l->c->resyncs++;
	body_start(f, len);
	keep(f, f->hdr + 4, 4);
	f->have = 4;
}

static void on_data(void *arg, const uint8_t *p, size_t n)
{
	struct framer *f = arg;

	while (n) {
		if (f->st == F_RESYNC) {
			resync_byte(f, *p++);
			n--;
			continue;
		}
		if (f->st == F_HDR) {
			size_t len;

			f->hdr[f->hn++] = *p++;
			n--;
			if (f->hn < 4)
				continue;
			len = (size_t)f->hdr[1] << 16 | (size_t)f->hdr[2] << 8 | f->hdr[3];
			if (f->hdr[0] == 0x85 && len == 0) { /* a session keep-alive */
				f->c->l->c->keepalives++;
				f->hn = 0;
				continue;
			}
			if (f->hdr[0] != 0 || len < 4) { /* out of step */
				f->st = F_RESYNC;
				continue;
			}
			body_start(f, len);
			continue;
		}
		{
			size_t take = f->want - f->have < n ? f->want - f->have : n;

			keep(f, p, take);
			f->have += take;
			p += take;
			n -= take;
			if (f->have == f->want)
				frame_done(f);
		}
	}
}

static void on_gap(void *arg, size_t n)
{
	struct framer *f = arg;

	if (f->st == F_BODY && n <= f->want - f->have) {
		/* the hole is inside this frame: counted, decoded up to the hole */
		f->holed = true;
		f->have += n;
		if (f->have == f->want)
			frame_done(f);
		return;
	}
	if (f->st == F_BODY) {
		f->holed = true;
		f->have = f->want;
		frame_done(f);
	}
	f->st = F_RESYNC;
	f->hn = 0;
}

/* ---- connections ---- */

static void framer_init(struct framer *f, struct conn *c)
{
	memset(f, 0, sizeof(*f));
	f->c = c;
	pv_learn_stream_init(&f->s, on_data, on_gap, f);
}

static void framer_end(struct framer *f, struct pv_learn_counts *c)
{
	pv_learn_stream_end(&f->s);
	c->bytes += f->s.bytes;
	c->gap_bytes += f->s.gap_bytes;
	c->gaps += f->s.gaps;
	c->again_bytes += f->s.again_bytes;
	pv_learn_stream_release(&f->s);
	free(f->buf);
	f->buf = NULL;
}

static void conn_end(struct pv_learn *l, struct conn *c)
{
	framer_end(&c->to_srv, l->c);
	framer_end(&c->to_cli, l->c);
	l->c->unanswered += c->pend.n;
	for (size_t i = 0; i < c->pend.slots; i++) /* the watches still on */
		l->c->notify.open += c->pend.e[i].used && c->pend.e[i].v == 15;
	l->c->still_open += c->files.n;
	for (size_t i = 0; i < c->sessions.slots; i++)
		l->c->still_on += c->sessions.e[i].used && c->sessions.e[i].t > 0;
	pv_learn_table_release(&c->pend);
	pv_learn_table_release(&c->files);
	pv_learn_table_release(&c->sessions);
	pv_learn_table_release(&c->trees);
	free(c);
	l->nconns--;
}

/* 32-bit FNV-1a, not the 64-bit one cut short: the bucket decides the order pv_learn_end ends
 * the connections in, and ending one may still decode what it held back (its users then
 * numbered in that order), so another hash could change what learn reports. */
static size_t bucket_of(const uint8_t key[36])
{
	return pv_hash_fnv32(PV_HASH_FNV32_INIT, key, 36) % NBUCKETS;
}

/* End the connections that both sides closed (to make room). */
static void sweep_closed(struct pv_learn *l)
{
	for (size_t b = 0; b < NBUCKETS; b++)
		for (struct conn **pp = &l->bucket[b]; *pp;) {
			struct conn *c = *pp;

			if (c->fin_cli && c->fin_srv) {
				*pp = c->next;
				conn_end(l, c);
			} else {
				pp = &c->next;
			}
		}
}

/* The connection of key, made when new. A client's SYN (without ACK) on a connection that has
 * carried bytes or was closed is a new connection on the same ports (a port used again): the
 * old one ends first. */
static struct conn *conn_of(struct pv_learn *l, const uint8_t key[36], bool syn)
{
	size_t b = bucket_of(key);
	struct conn *c;

	for (struct conn **pp = &l->bucket[b]; (c = *pp); pp = &c->next)
		if (!memcmp(c->key, key, 36)) {
			if (!syn || !(c->fin_cli || c->fin_srv || c->to_srv.s.bytes))
				return c;
			*pp = c->next;
			conn_end(l, c);
			break;
		}
	if (l->nconns >= PV_LEARN_CONNS_MAX)
		sweep_closed(l);
	if (l->nconns >= PV_LEARN_CONNS_MAX || !(c = calloc(1, sizeof(*c))))
		return NULL;
	memcpy(c->key, key, 36);
	c->l = l;
	framer_init(&c->to_srv, c);
	framer_init(&c->to_cli, c);
	pv_learn_table_init(&c->pend, PV_LEARN_PENDING_MAX);
	pv_learn_table_init(&c->files, PV_LEARN_PENDING_MAX);
	pv_learn_table_init(&c->sessions, PV_LEARN_PENDING_MAX);
	pv_learn_table_init(&c->trees, PV_LEARN_PENDING_MAX);
	c->last_node = -1;
	c->next = l->bucket[b];
	l->bucket[b] = c;
	l->nconns++;
	l->c->conns++;
	return c;
}

struct pv_learn *pv_learn_begin(const struct pv_learn_opts *o, int link, struct pv_learn_counts *c)
{
	struct pv_learn *l = calloc(1, sizeof(*l));

	memset(c, 0, sizeof(*c));
	pv_learn_users_init(&c->users);
	pv_learn_kinds_init(&c->kinds);
	if (!l)
		return NULL;
	l->c = c;
	l->gap = o ? o->gap : 0;
	l->keep_names = o && o->keep_names;
	l->port = o && o->port ? o->port : 445;
	l->link = link;
	pv_learn_ns_init(&l->ns);
	return l;
}

void pv_learn_frame(struct pv_learn *l, const uint8_t *p, size_t caplen, size_t wirelen, double t)
{
	struct pv_learn_counts *c = l->c;
	struct pv_capture_seg s;
	char why[160];
	uint8_t key[36];
	bool to_srv;
	struct conn *cn;
	struct framer *f;

	if (!c->frames++)
		c->t0 = t;
	c->t1 = t;
	l->now = t;
	if (caplen < wirelen)
		c->cut_frames++;
	switch (pv_capture_frame(l->link, p, caplen, wirelen, &s, why, sizeof(why))) {
	case PV_CAPTURE_TCP:
		c->tcp++;
		break;
	case PV_CAPTURE_NOT_TCP:
		c->not_tcp++;
		return;
	case PV_CAPTURE_FRAGMENT:
		c->fragments++;
		return;
	default:
		if (!c->bad_frames++)
			snprintf(c->first_bad, sizeof(c->first_bad), "frame %llu: %.120s",
				 (unsigned long long)c->frames, why);
		return;
	}
	if (s.dport == l->port)
		to_srv = true;
	else if (s.sport == l->port)
		to_srv = false;
	else
		return;
	/* the key: the client's side first, whichever way the segment goes */
	memcpy(key, to_srv ? s.src : s.dst, 16);
	key[16] = (uint8_t)((to_srv ? s.sport : s.dport) >> 8);
	key[17] = (uint8_t)(to_srv ? s.sport : s.dport);
	memcpy(key + 18, to_srv ? s.dst : s.src, 16);
	key[34] = (uint8_t)(l->port >> 8);
	key[35] = (uint8_t)l->port;
	if (!(cn = conn_of(l, key,
			   to_srv && (s.flags & (PV_CAPTURE_TCP_SYN | 0x10)) ==
					     PV_CAPTURE_TCP_SYN))) {
		c->conns_refused++;
		return;
	}
	f = to_srv ? &cn->to_srv : &cn->to_cli;
	if (!f->s.synced && !(s.flags & PV_CAPTURE_TCP_SYN) && s.wire) {
		f->st = F_RESYNC; /* its start was not captured: find a frame's start */
		if (!cn->to_srv.s.began_midway && !cn->to_cli.s.began_midway)
			c->conns_midway++;
	}
	pv_learn_stream_seg(&f->s, s.seq, s.flags, s.data, s.len, s.wire);
	/* what this side acknowledged of the other's bytes: a hole there will not be filled */
	if (s.flags & 0x10)
		pv_learn_stream_acked(to_srv ? &cn->to_cli.s : &cn->to_srv.s, s.ack);
	if (s.flags & PV_CAPTURE_TCP_RST) {
		cn->fin_cli = cn->fin_srv = true;
	} else if (s.flags & PV_CAPTURE_TCP_FIN) {
		if (to_srv)
			cn->fin_cli = true;
		else
			cn->fin_srv = true;
	}
}

/* At the end: the shape of a home, over the users' homes. */
static void namespace_shape(struct pv_learn *l)
{
	struct pv_learn_counts *c = l->c;
	long *homes = c->users.n ? malloc(c->users.n * sizeof(*homes)) : NULL;
	size_t n = 0;

	c->ns_nodes = l->ns.count;
	c->ns_refused = l->ns.refused;
	for (size_t i = 0; homes && i < c->users.n; i++)
		if (c->users.u[i].home)
			homes[n++] = (long)c->users.u[i].home - 1;
	if (pv_learn_ns_shape(&l->ns, homes, n, &c->shape) < 0)
		memset(&c->shape, 0, sizeof(c->shape));
	pv_learn_ns_listings(&l->ns, c->listings_per_folder, &c->folders_listed);
	free(homes);
}

void pv_learn_end(struct pv_learn *l)
{
	if (!l)
		return;
	for (size_t b = 0; b < NBUCKETS; b++)
		while (l->bucket[b]) {
			struct conn *c = l->bucket[b];

			l->bucket[b] = c->next;
			conn_end(l, c);
		}
	if (l->gap > 0) {
		for (size_t i = 0; i < l->c->users.n; i++)
			activity_end(l->c, &l->c->users.u[i]);
		l->c->has_kinds = true;
	}
	pv_learn_summarize(l->c, l->gap);
	namespace_shape(l);
	pv_learn_ns_release(&l->ns);
	free(l);
}

void pv_learn_counts_release(struct pv_learn_counts *c)
{
	pv_learn_users_release(&c->users);
	pv_learn_kinds_release(&c->kinds);
}

static int one_pass(const char *path, const struct pv_learn_opts *o,
		    const struct pv_learn_counts *known, struct pv_learn_counts *c)
{
	struct pv_capture *cap;
	struct pv_learn *l;
	const uint8_t *p;
	size_t caplen, wirelen;
	double t;
	int r, n;

	memset(c, 0, sizeof(*c));
	if ((r = pv_capture_open(path, &cap)) != PV_OK)
		return r;
	if (!(l = pv_learn_begin(o, pv_capture_link(cap), c))) {
		pv_capture_close(cap);
		return pv_error(PV_EIO, "out of memory");
	}
	l->known = known;
	while ((n = pv_capture_next(cap, &p, &caplen, &wirelen, &t)) > 0)
		pv_learn_frame(l, p, caplen, wirelen, t);
	pv_learn_end(l);
	pv_capture_close(cap);
	return n < 0 ? PV_ECONFIG : PV_OK;
}

int pv_learn_read(const char *path, const struct pv_learn_opts *o, struct pv_learn_counts *c)
{
	struct pv_learn_opts o2 = o ? *o : (struct pv_learn_opts){0};
	struct pv_learn_counts c2;
	int r = one_pass(path, o, NULL, c);

	/* the kinds of activity from a second pass with the gap (learned, or set), the file read
	 * again (at a fraction of a second per hundred MB): the depths of their steps below the
	 * users' homes as the first pass found the homes by the capture's end */
	if (r != PV_OK || !(c->activity_gap > 0))
		return r;
	o2.gap = c->activity_gap;
	if (one_pass(path, &o2, c, &c2) == PV_OK) {
		pv_learn_kinds_release(&c->kinds);
		c->kinds = c2.kinds;
		pv_learn_kinds_init(&c2.kinds);
		c->has_kinds = true;
		c->activities = c2.activities;
		c->activity_requests = c2.activity_requests;
		/* the times the kinds' pass measured (where an activity begins): its own */
		c->think_gaps = c2.think_gaps;
		c->act_within = c2.act_within;
		memcpy(c->act_within_after, c2.act_within_after, sizeof(c->act_within_after));
		c->act_client = c2.act_client;
		memcpy(c->listing_at, c2.listing_at, sizeof(c->listing_at));
		pv_learn_times(c);
	}
	pv_learn_counts_release(&c2);
	return r;
}
