/* learn/learn.h: what a capture of a file server's SMB traffic holds (provision learn), read in
 * one streaming pass: its frames, the TCP connections to the SMB port put back in order
 * (learn/stream.c), their NetBIOS frames, and every SMB2 request and answer decoded by the one
 * codec (smb/trace.h), answers matched to their requests by connection and message id. What
 * cannot be read (encrypted or compressed frames, SMB1, bytes the capture lost) is counted, in
 * frames and bytes, never guessed at. Memory is bounded by the connections open at once and the
 * users told apart (each at most PV_LEARN_CONNS_MAX, PV_LEARN_USERS_MAX), not by the capture's
 * length. */
#ifndef PV_LEARN_LEARN_H
#define PV_LEARN_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "learn/hist.h"
#include "learn/namespace.h"
#include "learn/user.h"
#include "smb/trace.h"

/* At most this many TCP connections followed at once (more: counted, not read). */
#define PV_LEARN_CONNS_MAX 16384u
/* Of each NetBIOS frame, at most this many bytes are kept for decoding (its headers and the
 * fixed parts of its bodies; a large WRITE's data is only counted). */
#define PV_LEARN_KEEP (64u * 1024u)
/* At most this many requests awaiting their answer per connection (more: not matched). */
#define PV_LEARN_PENDING_MAX 65536u

struct pv_learn_opts {
	uint16_t port;	 /* the SMB port; 0: 445 */
	double gap;	 /* the idle time that ends an activity, seconds; 0: learned (Otsu) */
	bool keep_names; /* users by their account names ("ntlm:domain\\user"), not hashes */
};

/* The levels (percent) at which the think times' quantiles are kept and written (the replay
 * draws from them): finer in the tail, where a few long ones (a program started again, a
 * person away) carry much of the mean. */
#define PV_LEARN_THINK_LEVELS 17
extern const double pv_learn_think_levels[PV_LEARN_THINK_LEVELS];
/* A time's quantiles as a replay draws from them (log-linear between two levels): at
 * pv_learn_think_levels, and on both sides of the PV_LEARN_HOLES widest holes of its
 * histogram (PV_LEARN_HOLE_BINS empty bins or more, a factor of 1.4), so that no draw falls
 * where the capture had none: smbclient's think times, 2.1 ms at 70% and 53 ms at 80%, are
 * under 2.4 ms or over 47 ms, and a draw between the two levels alone fell in the hole, 3 to
 * 40 ms. Each hole adds the time of the bin under it at its share (percent, to 10^-4, rounded
 * down) and that of the bin over it 10^-3 percent further; a point not above the one before
 * is left out. The levels left go where the time rises the fastest (summary.c's refine). n 0:
 * none learned. */
#define PV_LEARN_HOLES	   7
#define PV_LEARN_HOLE_BINS 3
#define PV_LEARN_REFINE	   1.5
#define PV_LEARN_LEVELS	   (PV_LEARN_THINK_LEVELS + 2 * PV_LEARN_HOLES)
struct pv_learn_levels {
	unsigned n;
	double level[PV_LEARN_LEVELS], q[PV_LEARN_LEVELS];
};

#define PV_LEARN_IOCTLS 8

/* What a watch (a CHANGE_NOTIFY) was answered with: changes (STATUS_SUCCESS, the changes or,
 * with none listed, too many to list), NOTIFY_ENUM_DIR (too many: list the folder again),
 * NOTIFY_CLEANUP (the folder closed while it watched), CANCELLED (the client's CANCEL), another
 * error. */
enum pv_learn_notify_end {
	PV_LEARN_NOTIFY_CHANGED,
	PV_LEARN_NOTIFY_ENUM_DIR,
	PV_LEARN_NOTIFY_CLOSED,
	PV_LEARN_NOTIFY_CANCELLED,
	PV_LEARN_NOTIFY_ERROR,
	PV_LEARN_NOTIFY_ENDS
};
/* "changed", "enum_dir", "closed", "cancelled", "error" */
extern const char *const pv_learn_notify_ends[PV_LEARN_NOTIFY_ENDS];

/* Change notify, as a figure of its own: the watches, how long each stayed (its request to its
 * final answer) and what ended it; those still watching when the capture ended. */
struct pv_learn_notify {
	uint64_t tree;			      /* the watches (req[15]) of a whole subtree */
	uint64_t ended[PV_LEARN_NOTIFY_ENDS]; /* adding up to held.n: those answered */
	uint64_t open;			      /* unanswered when the capture ended */
	struct pv_learn_hist held;
};
/* A watch's final answer, status, held seconds after its request. */
void pv_learn_notify_ended(struct pv_learn_notify *n, double held, uint32_t status);

/* The gaps within an activity after one command a capture must hold for a replay to draw them
 * apart from the others (activity.within_after). */
#define PV_LEARN_WITHIN_MIN 50

struct pv_learn_counts {
	/* frames of the capture */
	uint64_t frames, tcp, not_tcp, fragments, bad_frames, cut_frames;
	char first_bad[160]; /* why the first bad frame was */
	double t0, t1;	     /* the first and the last frame's time */
	/* TCP connections to the port */
	uint64_t conns, conns_midway, conns_refused;
	uint64_t bytes, gap_bytes, gaps, again_bytes;
	/* NetBIOS frames, by what they carry */
	uint64_t nb_frames, smb2_frames, smb2_bytes;
	uint64_t enc_frames, enc_bytes, comp_frames, comp_bytes, smb1_frames, smb1_bytes;
	uint64_t other_frames, other_bytes, resyncs, keepalives;
	uint64_t malformed, cut_chains; /* chains refused (first_malformed), or kept in part */
	char first_malformed[160];
	/* SMB2 messages */
	uint64_t req[PV_SMB_TRACE_NCMD], ans[PV_SMB_TRACE_NCMD]; /* final answers, by command */
	uint64_t resp[PV_SMB_TRACE_NCMD]; /* every answer message by command: interim, breaks too */
	uint64_t unknown_cmd;		  /* a command SMB2 has not */
	uint64_t interim;		  /* STATUS_PENDING, the final answer to come */
	uint64_t notifications;		  /* the server's own (lease and oplock breaks) */
	uint64_t matched;		  /* final answers to a request seen */
	uint64_t unmatched_ans;		  /* final answers to no request seen */
	uint64_t unanswered;		  /* requests with no answer in the capture */
	uint64_t untracked;		  /* requests past PV_LEARN_PENDING_MAX */
	uint64_t errors;		  /* final answers with an error status */
	uint64_t disposition[6];	  /* CREATE's: SUPERSEDE .. OVERWRITE_IF */
	uint64_t listing[3]; /* QUERY_DIRECTORY's by pattern: every name, part (PATTERN), NAME */
	/* ... by where the folder is (a user's): its home, below it, outside it or not known */
	uint64_t listing_at[3];
	/* CREATE's opens of a file to read or to edit in place (disposition OPEN, not a stat
	 * open, FILE_DIRECTORY_FILE not set) that the server granted (an answer not an error),
	 * and those of them that asked a lease or an oplock */
	uint64_t file_opens, file_opens_leased;
	/* IOCTL's control codes: the first PV_LEARN_IOCTLS seen, each counted, the rest together */
	uint32_t ioctl_code[PV_LEARN_IOCTLS];
	uint64_t ioctl_req[PV_LEARN_IOCTLS], ioctl_other;
	/* final answers by command and by their status's severity (its top two bits: success,
	 * information, warning, error); and those that did not find a name or path */
	uint64_t status_class[PV_SMB_TRACE_NCMD][4];
	uint64_t not_found[PV_SMB_TRACE_NCMD];
	uint64_t read_asked, read_got, written; /* bytes */
	/* what the users did (learn/user.h), their logons, sizes and how long files stay open */
	struct pv_learn_users users;
	uint64_t logons;
	struct pv_learn_sizes read_sizes, write_sizes; /* asked, written */
	struct pv_learn_hist open_times;	       /* CREATE's answer to CLOSE */
	uint64_t still_open;			       /* files open when the capture ended */
	/* sessions: LOGOFFs, the lifetimes of those whose logon and logoff the capture holds,
	 * and those logged on in the capture and still on at its end */
	uint64_t logoffs, still_on;
	struct pv_learn_hist session_times;
	/* at the end: every user's gaps between requests together, the gap that ends an
	 * activity (learned or set), the activities, and the users' rates per hour */
	struct pv_learn_hist req_gaps;
	double activity_gap;
	bool gap_learned;
	uint64_t activities;
	/* the user-hours the capture holds: each user's from its first request to its last (the
	 * capture's length each where none was seen longer than a moment) */
	double user_hours;
	/* median, p95 over the users seen longer than a moment, each over its own hours */
	double req_per_user_hour[2], logons_per_user_hour[2];
	/* logons again: a user's rate ((logons - 1) over its time at work, its first logon or
	 * request to its last), the median of the users with two or more (how many:
	 * relogon_users); 0 when none has two. Unlike logons_per_user_hour it does not depend on
	 * the capture's length: a user that logged on once in it logs on once, whatever the
	 * length, where logons_per_user_hour says 90 an hour of a capture of 40 s. */
	double relogons_per_user_hour;
	size_t relogon_users;
	/* directory behaviour: QUERY_DIRECTORY and CHANGE_NOTIFY requests per user-hour; the
	 * watches, how long each stayed and what ended it */
	double listings_per_user_hour[2], notifies_per_user_hour[2];
	struct pv_learn_notify notify;
	double activity_requests;   /* per activity, the mean */
	double within[2], think[2]; /* gaps within an activity and between: median, p95 */
	/* the gaps within an activity, where the kinds' pass knows where one begins (however
	 * long: a file held open), and their quantiles, the shape a replay draws them from */
	struct pv_learn_hist act_within;
	struct pv_learn_levels within_q;
	/* the same gaps by the command of the request each follows (its answer's time, then the
	 * client's), their median and p95, and their quantiles: what a replay draws from after
	 * its own request of that command, where the capture holds PV_LEARN_WITHIN_MIN of them
	 * (a gap after a CLOSE drawn from all of them may be one the capture never had there,
	 * one that ends the activity on the wire, and one after a slow answer is cut to it) */
	struct pv_learn_hist act_within_after[PV_SMB_TRACE_NCMD];
	double within_after[PV_SMB_TRACE_NCMD][2];
	struct pv_learn_levels within_after_q[PV_SMB_TRACE_NCMD];
	/* the think times: from an activity's last request to the next one's first, the user's
	 * (the kinds' pass), and their quantiles, seconds, the shape a replay draws them from
	 * (none: no user had two activities) */
	struct pv_learn_hist think_gaps;
	struct pv_learn_levels think_q;
	/* the client's own time: from an answer to the user's next request, with none of its
	 * requests waiting for an answer (the gaps less the server's time); those within an
	 * activity (under its gap): median, p95 */
	struct pv_learn_hist client_delays;
	double client[2];
	/* the same within an activity, where the kinds' pass knows where one begins (a file held
	 * open, the gap between two of its requests may be longer than the activity gap: a copy
	 * that writes each file it read), and their quantiles, the shape a replay draws them
	 * from */
	struct pv_learn_hist act_client;
	struct pv_learn_levels client_q;
	/* the kinds of activity (learn/kind.h): pv_learn_read's from a second pass over the file,
	 * with the gap (learned or set) and the users' homes as the first found them by the
	 * capture's end; over frames given (pv_learn_begin), with the gap set, in that one pass,
	 * the homes as found so far */
	struct pv_learn_kinds kinds;
	bool has_kinds;
	/* the namespace (learn/namespace.h): the folders and files the answers showed, those
	 * not followed (past its bound), and the shape of a user's home in it */
	uint64_t ns_nodes, ns_refused;
	/* directory behaviour: the folders listed, and how often each was (an open of it and its
	 * QUERY_DIRECTORYs one listing): the median and the p95 over them */
	uint64_t folders_listed;
	double listings_per_folder[2];
	struct pv_learn_ns_shape shape;
};

/* At a capture's end (pv_learn_end): every user's gaps together, the activity gap (gap, or
 * learned when 0), the activities, the gaps within and between them, the users' rates. */
void pv_learn_summarize(struct pv_learn_counts *c, double gap);
/* The times the kinds' pass measured (the gaps within an activity, the client's time in one,
 * the think times between) summed up from their histograms: median, p95 and quantiles; those
 * with none measured left as they are. Part of pv_learn_summarize. */
void pv_learn_times(struct pv_learn_counts *c);

/* What pv_learn_read or pv_learn_begin put in c, released (c's counts stay). */
void pv_learn_counts_release(struct pv_learn_counts *c);

/* Read the capture at path: PV_OK with c filled; PV_ECONFIG when it is not a capture provision
 * reads or is damaged (c holds what was read before), PV_EIO on a local error. */
int pv_learn_read(const char *path, const struct pv_learn_opts *o, struct pv_learn_counts *c);

/* The same over frames already in memory (the fuzz target's and the unit tests' way in): link
 * is the capture's link type (PV_CAPTURE_LINK_*). Call begin, frame for each, then end. */
struct pv_learn;
struct pv_learn *pv_learn_begin(const struct pv_learn_opts *o, int link, struct pv_learn_counts *c);
void pv_learn_frame(struct pv_learn *l, const uint8_t *p, size_t caplen, size_t wirelen, double t);
void pv_learn_end(struct pv_learn *l);

#endif
