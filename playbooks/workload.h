/* playbooks/workload.h: the playbook's load: section, the built-in driver's workload settings
 * (docs/load.md, docs/playbook.md): the 12 scenario kinds by name, their weights and latency
 * limits, the rate and the overload rule. The defaults are decided here and nowhere else.
 * Pure data; load/model.h builds each user's schedule from it. */
#ifndef PV_PLAYBOOKS_WORKLOAD_H
#define PV_PLAYBOOKS_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pv_playbook_workload_kind {
	PV_PLAYBOOK_WORKLOAD_UPLOAD,	  /* create a file in new/ and write 4-64 KiB to it */
	PV_PLAYBOOK_WORKLOAD_BROWSE,	  /* list a static/ folder, look at three of its files */
	PV_PLAYBOOK_WORKLOAD_OPEN_READ,	  /* open a static/ document and read it whole */
	PV_PLAYBOOK_WORKLOAD_COPY_IN,	  /* copy a static/ file into new/ */
	PV_PLAYBOOK_WORKLOAD_EDIT_SAVE,	  /* read a volatile/ document, save it as an editor does */
	PV_PLAYBOOK_WORKLOAD_OPEN_CLOSE,  /* open a document, read its attributes, close it */
	PV_PLAYBOOK_WORKLOAD_REWRITE,	  /* rewrite a volatile/ file in place */
	PV_PLAYBOOK_WORKLOAD_DELETE_NEW,  /* delete the oldest file this user made in new/ */
	PV_PLAYBOOK_WORKLOAD_LIST_NEW,	  /* list new/ */
	PV_PLAYBOOK_WORKLOAD_RENAME,	  /* rename a volatile/ file and back */
	PV_PLAYBOOK_WORKLOAD_MKDIR,	  /* make a folder in new/, a file in it, delete both */
	PV_PLAYBOOK_WORKLOAD_READ_FOLDER, /* read every file of one static/ folder */
	PV_PLAYBOOK_WORKLOAD_LEARNED,	  /* one of load.workload's learned kinds (struct
					     pv_playbook_workload_learned) */
	PV_PLAYBOOK_WORKLOAD_KINDS
};

/* "upload", "browse", ..., "learned" as in docs/load.md and the playbook, then NULL. */
extern const char *const pv_playbook_workload_names[PV_PLAYBOOK_WORKLOAD_KINDS + 1];

/* FSCT's published weights: 15, 150, 40, 7, 15, 50, 15, 5, 15, 7, 7, 5 per user-hour, 331 in
 * all. */
#define PV_PLAYBOOK_WORKLOAD_RATE 331

/* The most event loops (a thread each) one client's driver runs: load.threads above it is
 * refused where the playbook is read, and a client with more cores runs this many. */
#define PV_PLAYBOOK_WORKLOAD_THREADS_MAX 64

struct pv_playbook_workload_scenario {
	double weight; /* relative: the kind is drawn with probability weight / sum of weights */
	double limit;  /* seconds: a scenario that takes longer is overloaded */
};

/* A workload learned from a capture (`provision learn -o`, docs/learn.md), as load.workload
 * names it: its kinds of activity, each a sequence of SMB2 commands replayed in order, and the
 * sizes of its reads and writes. Only the commands a user sends on an open session are kept
 * (CREATE, CLOSE, FLUSH, READ, WRITE, LOCK, IOCTL, QUERY_DIRECTORY, CHANGE_NOTIFY, QUERY_INFO,
 * SET_INFO); logons and tree connects are the driver's own. */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS  256	 /* kinds kept, the most frequent first */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS  128	 /* commands of a kind, at most (learn/kind.h's) */
#define PV_PLAYBOOK_WORKLOAD_SIZE_BINS	    34	 /* size buckets: 0 (empty), then [2^(k-1), 2^k) */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT 0x80 /* a step's flag: the command repeats (READ+) */
/* A CREATE step's disposition, in its bits 5 and 6: OPEN (0: what was there opened, as the
 * workloads learned before dispositions were say), OPEN_IF, OVERWRITE_IF (OVERWRITE and
 * SUPERSEDE with it: what was there replaced), CREATE (a name that was not there); "CREATE",
 * "CREATE(OPEN_IF)", "CREATE(OVERWRITE_IF)", "CREATE(CREATE)" in a workload */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_DISP	  0x60
#define PV_PLAYBOOK_WORKLOAD_LEARNED_OPEN_IF	  0x20
#define PV_PLAYBOOK_WORKLOAD_LEARNED_OVERWRITE_IF 0x40
#define PV_PLAYBOOK_WORKLOAD_LEARNED_NEW	  0x60
#define PV_PLAYBOOK_WORKLOAD_LEARNED_CMD	  0x1f /* the SMB2 command */
/* An IOCTL step's control code, in the same bits: FSCTL_CREATE_OR_GET_OBJECT_ID (0: as the
 * workloads learned before the codes were say, and every code not named here), or one a
 * client sends that the server may well refuse, as it did in the capture:
 * FSCTL_SRV_ENUMERATE_SNAPSHOTS (Explorer's Previous Versions, smbclient's allinfo) on the
 * file open, FSCTL_DFS_GET_REFERRALS (its _EX too) on no file; "IOCTL", "IOCTL(SNAPSHOTS)",
 * "IOCTL(REFERRAL)" in a workload */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS 0x20
#define PV_PLAYBOOK_WORKLOAD_LEARNED_REFERRAL  0x40
/* A QUERY_DIRECTORY step's pattern, in the same bits: every name ("*", or none: 0), part of
 * the folder (a wildcard with letters: smbclient's mget f000*), or one name (no wildcard:
 * smbclient's del, a client that looks whether a name is there); "QUERY_DIRECTORY",
 * "QUERY_DIRECTORY(PATTERN)", "QUERY_DIRECTORY(NAME)" in a workload */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN 0x20
#define PV_PLAYBOOK_WORKLOAD_LEARNED_NAME    0x40
#define PV_PLAYBOOK_FSCTL_OBJECT_ID	     0x000900C0u
#define PV_PLAYBOOK_FSCTL_SNAPSHOTS	     0x00144064u
#define PV_PLAYBOOK_FSCTL_REFERRAL	     0x00060194u
#define PV_PLAYBOOK_FSCTL_REFERRAL_EX	     0x000601B0u
/* A CREATE the server refused (a name not found, access denied), as its step's command:
 * "CREATE(REFUSED)", replayed as a look for a name that is not there */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_REFUSED 19
/* A CREATE of what is there that asks no access to its data (FILE_OPEN, DesiredAccess within
 * FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES, READ_CONTROL and SYNCHRONIZE: what Explorer
 * and smbtorture's bench open to look at a name, and a server answers without a share mode or
 * lease), as its step's command: "CREATE(STAT)", replayed as such an open */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_STAT 20
/* Whether a step's command (its bits PV_PLAYBOOK_WORKLOAD_LEARNED_CMD) opens a file:
 * CREATE, CREATE(STAT) */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_OPENS(c) ((c) == 5 || (c) == PV_PLAYBOOK_WORKLOAD_LEARNED_STAT)
/* ... or names a path: those and CREATE(REFUSED), each with its depth (a kind's `depths`) */
#define PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES(c)                                                      \
	(PV_PLAYBOOK_WORKLOAD_LEARNED_OPENS(c) || (c) == PV_PLAYBOOK_WORKLOAD_LEARNED_REFUSED)
/* A step's depth below the user's home (a kind's `depths`): 0 the home itself, up to
 * PV_PLAYBOOK_WORKLOAD_DEEP (that deep or deeper); PV_PLAYBOOK_WORKLOAD_OUT outside the home
 * or not known (learn/namespace.h's depths, the two it cannot place made one) */
#define PV_PLAYBOOK_WORKLOAD_DEEP 7
#define PV_PLAYBOOK_WORKLOAD_OUT  (-1)
/* the logons a user-hour replayed at most: one every 0.1 s (a capture of a few seconds can
 * say far more: one logon in 30 ms is 120,000 an hour) */
#define PV_PLAYBOOK_WORKLOAD_LOGONS_MAX 36000
/* load.rate's most: scenarios (or learned activities) a user starts an hour, 10,000 a second (a
 * script's or a benchmark's rate, as a learned capture of one may have: smbtorture's
 * smb2.bench.path-contention-shared, 4,600 a second on the lab) */
#define PV_PLAYBOOK_WORKLOAD_RATE_MAX 36000000
/* a learned time's quantiles read from a workload at most */
#define PV_PLAYBOOK_WORKLOAD_QUANTILES 32
/* a learned wait shorter than this is not waited (a loop's turn takes about as long): 20 us
 * (100 us until 2026-12-05: the gaps after a CLOSE were replayed 67 us at the median, the
 * capture's 119; docs/learn.md) */
#define PV_PLAYBOOK_WORKLOAD_CLIENT_MIN 2e-5

/* A learned time's distribution by its quantiles: q[i] seconds at level[i] percent, from 0
 * (the first) to 100 (the last), the levels ascending, the seconds never fewer; n 0: none. */
struct pv_playbook_workload_quantiles {
	unsigned n;
	double level[PV_PLAYBOOK_WORKLOAD_QUANTILES];
	double q[PV_PLAYBOOK_WORKLOAD_QUANTILES];
};

struct pv_playbook_workload_learned_kind {
	uint8_t step[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS]; /* SMB2 command codes, |
							     PV_PLAYBOOK_WORKLOAD_LEARNED_REPEAT */
	uint8_t n;
	double weight;	 /* relative */
	double requests; /* an activity's requests on average, in the capture */
	/* each step's requests on average (a repeat's: 2 or more); 0: not learned (a workload
	 * written before learn counted them), the kind's requests tell */
	double count[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS];
	/* a kind cut short (learn keeps PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS commands): its requests
	 * past the cut on average (its requests less its commands' counts); 0 otherwise */
	double rest;
	double seconds; /* an activity's length on average, in the capture (0: not learned) */
	/* of each step that names a path (PV_PLAYBOOK_WORKLOAD_LEARNED_NAMES), its depth below
	 * the user's home (PV_PLAYBOOK_WORKLOAD_DEEP, PV_PLAYBOOK_WORKLOAD_OUT); depths: whether
	 * learned (a workload written before learn kept them has none) */
	int8_t depth[PV_PLAYBOOK_WORKLOAD_LEARNED_STEPS];
	bool depths;
};

/* The SMB2 commands, by code (MS-SMB2 2.2.1: NEGOTIATE 0 to OPLOCK_BREAK 18). */
#define PV_PLAYBOOK_WORKLOAD_CMDS 19

struct pv_playbook_workload_learned {
	unsigned n; /* kinds; 0: no workload learned */
	struct pv_playbook_workload_learned_kind kind[PV_PLAYBOOK_WORKLOAD_LEARNED_KINDS];
	double per_user_hour;			     /* the kinds kept, each user, in the capture */
	double read[PV_PLAYBOOK_WORKLOAD_SIZE_BINS]; /* each size bucket's share of the reads, in %
						      */
	double write[PV_PLAYBOOK_WORKLOAD_SIZE_BINS]; /* ... of the writes */
	/* each bucket's mean size in bytes (sizes.read.means, sizes.write.means); 0: not learned
	 * (a workload written before learn kept them): a size drawn evenly within its bucket */
	double read_mean[PV_PLAYBOOK_WORKLOAD_SIZE_BINS],
		write_mean[PV_PLAYBOOK_WORKLOAD_SIZE_BINS];
	/* users.logons_again_per_hour's median: how often each user logs off and on again, as
	 * the capture's users did from one logon to the next (replayed at most
	 * PV_PLAYBOOK_WORKLOAD_LOGONS_MAX); 0 (none learned: no user logged on twice): once a
	 * step, as the built-in load */
	double relogons_per_user_hour;
	/* 100 less opens.leased: the share (%) of the opens of a file to read or to edit in
	 * place (disposition OPEN, not a stat open nor a folder) that asked no lease and no
	 * oplock in the capture, and that the replay makes without one; 0 (not learned too):
	 * each asks a lease, as the built-in load's */
	double unleased;
	/* activity.gap: the idle that ended a capture's activity when its user held no file open
	 * (seconds; 0: not learned): a replay with nothing open never waits one within an
	 * activity (paused in load/scenario.c), as the capture's users never did */
	double gap;
	/* activity.client: seconds from an answer to the activity's next request, the capture's
	 * client's own time (median, p95), waited between a replayed activity's requests where
	 * at least PV_PLAYBOOK_WORKLOAD_CLIENT_MIN; 0: none learned, each request on the last
	 * one's answer */
	double client[2];
	/* activity.client.quantiles: the client's time drawn from them, not from the median and
	 * p95 (n 0: none learned) */
	struct pv_playbook_workload_quantiles client_q;
	/* activity.within.quantiles: the time from an activity's request to its next, drawn
	 * from them and waited from the request (the answer and the client's time in it), in
	 * place of the client's time after the answer (n 0: none learned) */
	struct pv_playbook_workload_quantiles within;
	/* activity.within_after: the same gaps by the command of the request each follows (its
	 * code, MS-SMB2 2.2.1); one with n 2 or more is drawn from after the replay's own request
	 * of that command, in place of within */
	struct pv_playbook_workload_quantiles within_after[PV_PLAYBOOK_WORKLOAD_CMDS];
	/* activity.think.quantiles: the time between activities (from one's last request to the
	 * next one's first); n 0: none learned, the activities start at exponential times at
	 * the rate */
	struct pv_playbook_workload_quantiles think;
	/* it has a fileset: (the namespace learned, a user's home): server.fileset when the
	 * playbook names none */
	bool fileset;
};

/* The playbook's load: section (docs/playbook.md), defaults from pv_playbook_workload_defaults. */
struct pv_playbook_workload {
	unsigned rate; /* scenarios per user-hour, 1..PV_PLAYBOOK_WORKLOAD_RATE_MAX; default 331 */
	struct pv_playbook_workload_scenario kind[PV_PLAYBOOK_WORKLOAD_KINDS];
	double late;	   /* seconds after its time a start is late; default 1 */
	double overload;   /* percent: the most overload a step may have to count; default 1 */
	unsigned interval; /* seconds between figure lines; default 1 */
	uint64_t seed;	   /* default 1 */
	enum pv_playbook_workload_auth {
		PV_PLAYBOOK_WORKLOAD_NTLM = 0,
		PV_PLAYBOOK_WORKLOAD_KERBEROS
	} auth; /* how users log on */
	/* a step's users stay logged on into the next step, where only the new ones log on;
	 * default false: every step logs all its users on anew, as FSCT's steps do */
	bool keep_logged_on;
	unsigned threads; /* event loops (threads) of each client's driver, at most
			   * PV_PLAYBOOK_WORKLOAD_THREADS_MAX; 0 (default): one per core the client
			   * lets it run on, at most PV_PLAYBOOK_WORKLOAD_THREADS_MAX */
	/* whether users' sessions encrypt: only where the server or the share requires it
	 * (auto), always with the cipher the server picks (on), or always with this cipher, the
	 * only one offered (what encryption costs the server, cipher by cipher) */
	enum pv_playbook_workload_encryption {
		PV_PLAYBOOK_WORKLOAD_ENCRYPT_AUTO = 0,
		PV_PLAYBOOK_WORKLOAD_ENCRYPT_ON,
		PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES128_CCM,
		PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES128_GCM,
		PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_CCM,
		PV_PLAYBOOK_WORKLOAD_ENCRYPT_AES256_GCM,
	} encryption;
	/* load.workload's kinds (kind PV_PLAYBOOK_WORKLOAD_LEARNED) */
	struct pv_playbook_workload_learned learned;
};

/* "auto", "on", "aes-128-ccm", "aes-128-gcm", "aes-256-ccm", "aes-256-gcm", then NULL: the
 * playbook's words for load.encryption, in the enum's order. */
extern const char *const pv_playbook_workload_encryptions[];

void pv_playbook_workload_defaults(struct pv_playbook_workload *c);
/* The kind named name, or -1. */
int pv_playbook_workload_kind_of(const char *name);
/* The logons again a user-hour a replay of c's learned workload makes: its users' (at most
 * PV_PLAYBOOK_WORKLOAD_LOGONS_MAX); 0 when the learned kind is not weighed, or no workload
 * or no rate was learned (each user logs on once a step). */
double pv_playbook_workload_logons(const struct pv_playbook_workload *c);

/* The SMB2 commands a learned kind may replay, by code (MS-SMB2 2.2.1, a CREATE's
 * disposition bits with it): "CREATE", "CREATE(OPEN_IF)", ..., "SET_INFO" as learn writes
 * them; NULL for a code it does not replay (NEGOTIATE, SESSION_SETUP, LOGOFF, TREE_CONNECT,
 * TREE_DISCONNECT, CANCEL, ECHO, OPLOCK_BREAK, another command with disposition bits) or
 * past 0x7f. */
const char *pv_playbook_workload_learned_command(unsigned code);
/* A CREATE's CreateDisposition (MS-SMB2 2.2.13: 0 SUPERSEDE .. 5 OVERWRITE_IF) as a step's
 * disposition bits (PV_PLAYBOOK_WORKLOAD_LEARNED_DISP). */
unsigned pv_playbook_workload_learned_disposition(uint32_t disposition);
/* A CREATE request's step command, from its CreateDisposition and DesiredAccess: CREATE(STAT)
 * (PV_PLAYBOOK_WORKLOAD_LEARNED_STAT), else CREATE with its disposition bits. */
unsigned pv_playbook_workload_learned_create(uint32_t disposition, uint32_t access);
/* An IOCTL's control code as its step's bits (PV_PLAYBOOK_WORKLOAD_LEARNED_SNAPSHOTS...), and
 * back: the code a step's bits send. */
unsigned pv_playbook_workload_learned_fsctl(uint32_t code);
/* Whether c's learned activities follow the capture's pace (load/model.h's
 * pv_load_next_after): its think times learned (activity.think.quantiles) and the learned kind
 * the only one weighed; else they start at exponential times at the rate. */
bool pv_playbook_workload_paced(const struct pv_playbook_workload *c);
uint32_t pv_playbook_workload_learned_fsctl_code(unsigned bits);
/* A QUERY_DIRECTORY's pattern (UTF-16LE, len bytes; NULL: not kept) as its step's bits: 0 for
 * every name (none, "*", "*.*", or not kept), PV_PLAYBOOK_WORKLOAD_LEARNED_PATTERN for one with
 * a wildcard (* ? and the DOS ones < > ") and more, PV_PLAYBOOK_WORKLOAD_LEARNED_NAME for one
 * without. */
unsigned pv_playbook_workload_learned_listing(const uint8_t *pattern, size_t len);

/* A learned workload's text (len bytes; name in messages) read into *out (zeroed first, and
 * again on failure): PV_OK; PV_ECONFIG naming the place and what is expected (no kinds, none
 * with a command to replay, an unknown command or key, a bad number or size bucket); PV_EIO
 * out of memory. Implemented in playbooks/learned.c, over the playbook's YAML reader. */
int pv_playbook_workload_learned_parse(const char *name, const char *text, size_t len,
				       struct pv_playbook_workload_learned *out);

#endif
