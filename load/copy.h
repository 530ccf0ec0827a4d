/* load/copy.h: the copy job's part on a client (docs/copy.md): a tree copied to a folder of a
 * share by our own SMB2 client as robocopy /MIR /COPY:DT /FFT copies it, measured as robocopy's
 * users know it. `provision copy` starts it there over SSH (`provision copy-agent`), as `run`
 * starts `provision load`, and reads its lines; both halves of those lines are here.
 *
 * The source is a folder on the client (regular files and folders; links, devices and names
 * SMB cannot carry are skipped and counted) or a fileset (fileset/fileset.h: the same tree and
 * bytes on every machine). Each file goes as one compound (CREATE, WRITEs, SET_INFO of its
 * LastWriteTime, CLOSE) with `window` of them in flight on a connection (robocopy /MT:n),
 * over `connections` connections; one connection lists the target (compounds in flight),
 * removes the extras (mirror only) and makes the folders first. A file whose size matches and
 * whose LastWriteTime is within fft seconds is not sent (/FFT): a second copy of the same tree
 * sends nothing.
 *
 * What the controller sends on the agent's stdin (load/proto.h's percent-encoding for words):
 *   <the user's password>
 *   copy server=srvu1 share=fsroot1 base=cli1-u1/copy workgroup=LAB user=cli1-u1 window=8
 *        connections=1 mirror=1 fft=2 timeout=10 interval=1 dir=/data/src
 *   fileset NAME LEN          (instead of dir=: LEN bytes of the fileset's YAML follow)
 *   start
 * What it prints (stdout), one line each:
 *   copy-conn N PORT DESC     (connection N is open: its TCP port, what it speaks)
 *   copy-plan {json}          (the plan: files to send, bytes, folders, extras, the listing)
 *   copy-tick T FILES BYTES CPU TOP   (seconds since the plan, files and bytes sent so far,
 *                              the agent's CPU and its busiest connection thread's, % of a
 *                              core, over the last interval)
 *   copy-done {json}          (the totals, the phases' times, latency per size class)
 * Pure but the agent itself (pv_load_copy_agent_run: the files, the SMB connections, threads). */
#ifndef PV_LOAD_COPY_H
#define PV_LOAD_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/secret.h"

#define PV_LOAD_COPY_WINDOW_MAX	     64
#define PV_LOAD_COPY_CONNECTIONS_MAX 16
#define PV_LOAD_COPY_FILESET_MAX     (1u << 20) /* bytes of fileset YAML */
#define PV_LOAD_COPY_CLASSES	     5
#define PV_LOAD_COPY_TICK_SECS	     0.25 /* seconds between the agent's ticks (run's) */

struct pv_load_copy_config {
	char server[256], share[256], base[1024], workgroup[256], user[256];
	unsigned window, connections, fft;
	bool mirror;
	int timeout;	 /* seconds per request (smb.h's T) */
	double interval; /* seconds between copy-tick lines */
	char dir[1024];	 /* the source folder, or "" with a fileset */
	char fileset_name[256];
	char *fileset; /* its YAML (malloc'd), fileset_len bytes */
	size_t fileset_len;
};

/* The lines (after the password line) for c onto out: "copy ...", "fileset ..." and its text,
 * "start". */
int pv_load_copy_config_put(const struct pv_load_copy_config *c, struct pv_buf *out);
/* Reading them: feed each line (without its newline) to pv_load_copy_config_line; a "fileset" line
 * asks for *need bytes of text, to be given to pv_load_copy_config_text; *started once "start"
 * came. PV_EUSAGE naming what is wrong (an unknown key, a value out of range, no source, two
 * sources (a folder and a fileset, or two filesets), a second 'copy' line, a fileset over
 * PV_LOAD_COPY_FILESET_MAX, a NUL byte). */
int pv_load_copy_config_line(struct pv_load_copy_config *c, const char *line, size_t len,
			     size_t *need, bool *started);
int pv_load_copy_config_text(struct pv_load_copy_config *c, const char *text, size_t len);
void pv_load_copy_config_release(struct pv_load_copy_config *c);

/* The agent's figures. Size classes: under 4 KiB, 4-16 KiB, 16-64 KiB, 64 KiB-1 MiB, 1 MiB
 * and over. */
extern const char *const pv_load_copy_class_names[PV_LOAD_COPY_CLASSES];
struct pv_load_copy_class {
	unsigned long files;
	double p50, p95; /* seconds from a file's compound sent to its last answer */
};
struct pv_load_copy_plan {
	unsigned long files, dirs, extras, ok, listed, skipped; /* skipped: not copyable here */
	uint64_t bytes, source_files, source_bytes, source_dirs;
	double list_s;
	char first_skipped[256];
};
struct pv_load_copy_done {
	unsigned long files, fixed, dirs, removed_files, removed_dirs, ok;
	uint64_t bytes;
	double list_s, prune_s, put_s, total_s; /* the phases, and logon to logoff */
	double cpu_s;				/* the agent's CPU over the whole copy */
	double put_cpu;				/* % of a core: the agent over the files' writing */
	double put_top; /* % of a core: its busiest connection thread then */
	struct pv_load_copy_class classes[PV_LOAD_COPY_CLASSES];
	char speaks[96]; /* "SMB 3.1.1", "SMB 3.1.1, encrypted (AES-128-GCM)" */
};
struct pv_load_copy_tick {
	double t;
	unsigned long files;
	uint64_t bytes;
	double cpu, top;
};

/* The agent's lines, made and read. */
int pv_load_copy_line_conn(unsigned n, int port, const char *desc, struct pv_buf *out);
int pv_load_copy_line_plan(const struct pv_load_copy_plan *p, struct pv_buf *out);
int pv_load_copy_line_tick(const struct pv_load_copy_tick *t, struct pv_buf *out);
int pv_load_copy_line_done(const struct pv_load_copy_done *d, struct pv_buf *out);
enum pv_load_copy_kind {
	PV_LOAD_COPY_CONN,
	PV_LOAD_COPY_PLAN,
	PV_LOAD_COPY_TICK,
	PV_LOAD_COPY_DONE
};
struct pv_load_copy_line {
	enum pv_load_copy_kind kind;
	unsigned conn;
	int port;
	char desc[96];
	struct pv_load_copy_plan plan;
	struct pv_load_copy_tick tick;
	struct pv_load_copy_done done;
};
/* One line the agent printed: PV_OK and *l; PV_EREMOTE quoting it when it is none of these
 * or malformed (a count or time out of range, a NUL byte included). */
int pv_load_copy_line_parse(const char *line, size_t len, struct pv_load_copy_line *l);

/* The agent: the copy c describes, as the user with password; each line goes to emit (which
 * may fail: the copy stops); stop() is asked as files go (true: the copy stops, PV_ESTOPPED).
 * Its figures in *done. PV_ECONFIG: no such folder, a bad fileset; the SMB codes of smb.h. */
struct pv_load_copy_io {
	int (*emit)(void *ctx, const char *line, size_t len);
	bool (*stop)(void *ctx);
	void *ctx;
};
int pv_load_copy_agent_run(const struct pv_load_copy_config *c, const struct pv_secret *password,
			   const struct pv_load_copy_io *io, struct pv_load_copy_done *done);

#endif
