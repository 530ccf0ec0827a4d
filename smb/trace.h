/* smb/trace.h: SMB2 messages as a capture holds them (provision learn): the messages of one
 * NetBIOS frame, requests and answers alike, each with its header and the few fields of its
 * body that a workload is learned from, decoded through the one codec's bounds-checked reader
 * (smb/smb2.c). Pure logic, no I/O. */
#ifndef PV_SMB_TRACE_H
#define PV_SMB_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The commands of SMB2 (MS-SMB2 2.2.1): 0 NEGOTIATE .. 18 OPLOCK_BREAK. */
#define PV_SMB_TRACE_NCMD 19

/* What a NetBIOS frame of port 445 carries, from its first bytes. */
enum pv_smb_trace_kind {
	PV_SMB_TRACE_SMB2,	 /* 0xFE 'SMB': one message or a compound chain */
	PV_SMB_TRACE_ENCRYPTED,	 /* 0xFD 'SMB': a transform header, encrypted (MS-SMB2 2.2.41) */
	PV_SMB_TRACE_COMPRESSED, /* 0xFC 'SMB': compressed (MS-SMB2 2.2.42) */
	PV_SMB_TRACE_SMB1,	 /* 0xFF 'SMB': SMB1, which provision does not read */
	PV_SMB_TRACE_OTHER,	 /* none of these: a stream out of step, or not SMB */
};

/* One message of a frame. */
struct pv_smb_trace_msg {
	uint16_t cmd;	 /* the command; PV_SMB_TRACE_NCMD or more: not one SMB2 has */
	bool response;	 /* SMB2_FLAGS_SERVER_TO_REDIR */
	bool async;	 /* an async header: async_id, no tree */
	bool related;	 /* a compound's related request */
	uint32_t status; /* the answer's NTSTATUS (0 in a request) */
	uint64_t mid, session, async_id;
	uint32_t tree;
	/* from a request's body, where its command has the field (0 otherwise) */
	uint32_t disposition; /* CREATE: CreateDisposition */
	uint32_t access;      /* CREATE: DesiredAccess */
	uint8_t oplock;	    /* CREATE: RequestedOplockLevel (0xFF: a lease, its context follows) */
	uint32_t ctl;	    /* IOCTL: CtlCode */
	uint32_t length;    /* READ: the bytes asked; WRITE: the bytes written */
	uint8_t info_type;  /* QUERY_INFO, SET_INFO: InfoType */
	uint8_t info_class; /* QUERY_INFO, SET_INFO, QUERY_DIRECTORY: FileInformationClass */
	uint16_t flags;	    /* CHANGE_NOTIFY: Flags (1: SMB2_WATCH_TREE, the whole subtree) */
	/* SESSION_SETUP (request or answer): its security buffer, inside the bytes given (NULL
	 * when it is not all there) */
	const uint8_t *sec;
	size_t seclen;
	/* CREATE's answer, and the request of CLOSE, QUERY_DIRECTORY, CHANGE_NOTIFY, WRITE and
	 * SET_INFO: the file id (has_fid) */
	uint8_t fid[16];
	bool has_fid;
	bool fid_related; /* the file id is a compound's "the file opened before" (all ones) */
	/* CREATE's request: its name (UTF-16LE, relative to the share, NULL when not all in the
	 * bytes given) and CreateOptions; TREE_CONNECT's request: its path (\\server\share);
	 * QUERY_DIRECTORY's request: its pattern (FileName: "*", "f000*", a name) */
	const uint8_t *name;
	size_t namelen;
	uint32_t create_options;
	/* CREATE's answer: CreateAction (1 opened, 2 created, 3 overwritten), FileAttributes
	 * and EndOfFile (has_attrs) */
	uint32_t action, attrs;
	uint64_t eof;
	bool has_attrs;
	/* QUERY_DIRECTORY's answer: its output buffer, inside the bytes given (NULL when not all
	 * there: a listing kept only in part is read by pv_smb_trace_dir up to the cut) */
	const uint8_t *out;
	size_t outlen;
	/* from an answer's body: READ, the bytes read */
	uint32_t got;
	bool body_cut; /* the body was not all in the bytes given (a frame kept only in part) */
};

/* The kind of a frame from its first bytes (len of them). */
enum pv_smb_trace_kind pv_smb_trace_kind(const uint8_t *p, size_t len);

/* The messages of one SMB2 frame of total bytes, of which the first len are in p (a frame may
 * be kept only in part): fn is called for each message whose 64-byte header is inside p, in
 * order along the compound chain. Returns how many, or -1 (why set, the messages before the
 * fault given) when the chain is malformed: a header that is not SMB2's, a NextCommand that
 * is not a multiple of 8 or points past the frame. A chain that goes on past the bytes kept
 * ends there without a fault; *cut (when not NULL) then says so. */
typedef void (*pv_smb_trace_fn)(void *arg, const struct pv_smb_trace_msg *m);
int pv_smb_trace_frame(const uint8_t *p, size_t len, size_t total, pv_smb_trace_fn fn, void *arg,
		       bool *cut, char *why, size_t whylen);

/* The entries of a QUERY_DIRECTORY answer's output buffer (len bytes of it given) in the
 * information class its request asked, read by the codec's reader (smb2_dir_init_class: 1,
 * 2, 3, 12, 37, 38): fn with each entry's name (UTF-8), whether it is a folder and its
 * EndOfFile (0 for FileNames), in order, up to the first that is not all in the bytes given
 * or is malformed. Returns how many; -1 for a class it does not read. */
typedef void (*pv_smb_trace_dir_fn)(void *arg, const char *name, bool dir, uint64_t eof);
int pv_smb_trace_dir(const uint8_t *p, size_t len, uint8_t info_class, pv_smb_trace_dir_fn fn,
		     void *arg);

/* "CREATE", "an unknown command" past OPLOCK_BREAK. */
const char *pv_smb_trace_cmd_name(uint16_t cmd);

#endif
