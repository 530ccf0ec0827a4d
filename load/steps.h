/* load/steps.h: what a scenario is made of, for the files that make and run them (scenario.c
 * its runner and the built-in scenarios, replay.c load.workload's learned kinds): a table of
 * steps, each a request on a file or a path, and what is done before it. Internal to load/. */
#ifndef PV_LOAD_STEPS_H
#define PV_LOAD_STEPS_H

#include <stdint.h>

struct user;

/* What a step does. Each request's answer comes back to the runner, which takes it as the step
 * that asked says; READ, WRITE and LIST are whole: as many requests as the file or the
 * listing takes, the runner going on once the last is answered. */
enum req {
	OPEN,	 /* CREATE of path into file, as the mode arg says (modes[]) */
	PROBE,	 /* CREATE of path, not to be found (Explorer's desktop.ini, Office's owner file, a
		  * copy's target): "not found" is the answer it wants, what it finds is closed */
	STAT,	 /* QUERY_INFO */
	OBJECT,	 /* IOCTL FSCTL_CREATE_OR_GET_OBJECT_ID, as the shell's link tracking asks */
	FSCTL,	 /* IOCTL of the control code arg (a learned one), on the file, or on none for
		  * FSCTL_DFS_GET_REFERRALS; its answer taken whatever its status, as a refusal in
		  * the capture was */
	LOCK,	 /* an Office-style range lock */
	UNLOCK,	 /* ... released */
	READ,	 /* the whole file (u->size bytes, as its CREATE said) */
	WRITE,	 /* arg bytes (0: u->size) */
	LIST,	 /* the whole folder: its files into u->names (file F1, u->path only); arg
		  * engine_internal.h's LIST_PAGE, LIST_GO_ON: a learned listing in parts;
		  * LIST_PATTERN, LIST_NAME: of part of it, of one name */
	NOTIFY,	 /* CHANGE_NOTIFY: nothing waits for its answer, the next step goes at once */
	SETINFO, /* the information class arg (INFO_*) */
	RENAME,	 /* to path, over what is there when arg */
	FLUSH,
	CLOSE,
	AGAIN, /* on from step arg */
	END,   /* the scenario ends well */
	/* load.workload's: one request each, of a size drawn from the learned sizes */
	LREAD,	/* at where the last ended (from 0 again past the end) */
	LWRITE, /* at where the last ended (from 0 again past 1 MiB) */
};

enum { F1, F2 }; /* the file a step acts on: u->fid, u->fid2 */
enum { P1, P2 }; /* the path it names: u->path, u->path2 */

/* What a step's before() says: go on with the step, end the scenario well or in an error, or
 * (n > 0) skip n steps, this one and the n - 1 after it. */
enum { GO = 0, DONE = -1, FAIL = -2 };

/* What a scenario works on, picked first from what its user knows of its tree into u->path
 * (its size as listed into u->listed). */
enum pick { NONE, STATIC, VOLATILE, EITHER, FOLDER };

/* A step: its request (enum req), the file (F1, F2) and the path (P1, P2) it acts on, its
 * argument (an enum mode, a length, an information class...); what is done before it: a file
 * picked (enum pick), then before() (a path named, a size: NULL, nothing); its chance. */
struct step {
	uint8_t req, file;
	uint32_t arg;
	uint8_t path, pick;
	int (*before)(struct user *u);
	uint16_t chance; /* taken only with this chance in 65536 (0: always); a learned repeat's
			  * fraction of a request */
	int8_t at; /* a learned folder's depth below the user's home (load/replay.c's folder_at:
		    * PV_PLAYBOOK_WORKLOAD_OUT the share's root) less its NO_DEPTH; 0: not learned
		    */
};

/* How OPEN opens: access, disposition, options, and the lease asked (0: none; a document is
 * opened with one, as an SMB 3 client opens it). */
enum mode {
	DIR_LIST,  /* a folder to list */
	DIR_NEW,   /* a folder made, to be deleted */
	DIR_DEL,   /* a folder to delete */
	DOC_READ,  /* a document to read */
	DOC_EDIT,  /* ... to edit */
	DOC_OVER,  /* ... to write over */
	DOC_NEW,   /* ... made */
	FILE_NEW,  /* a file made */
	FILE_TEMP, /* a temporary file, made or written over */
	FILE_MADE, /* a file made, to be deleted */
	FILE_DEL,  /* a file to rename or delete */
	OWN,	   /* a file of its own, opened as it is or made: read, written, deleted */
	OWN_OVER,  /* ... its bytes replaced, or made (a learned CREATE(OVERWRITE_IF)) */
	OWN_NEW,   /* a file made, deleted when closed (a learned CREATE(CREATE)) */
	ATTRS,	   /* a file looked at: its attributes alone, no lease (a learned CREATE(STAT)) */
};

#endif
