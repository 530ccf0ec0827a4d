/* results/results.h: a run's folder read back into plain structs, for the report and compare
 * (docs/report.md). What `run` leaves there (docs/load.md, docs/json.md): manifest.json (the
 * steps, hosts, versions, settings), step-NN/watch.csv (the server's samples), watch-dc.csv
 * (the DC's, when watched), step-NN/<client>/load.jsonl (the built-in driver's lines of
 * figures, with latency histograms), step-NN/<host>/stderr, and for driver builtin load.json
 * (every step's figures, the settings, the answer).
 *
 * Only manifest.json must be there: every other part missing is recorded as absent (has_*
 * false, NULL), and a part that cannot be read is left out with a note (run->notes), so that
 * a run cut short, of any driver, still reads. The parsers are pure (text in, structs out)
 * and unit-tested; pv_results_read does the file I/O.
 *
 * A run's folder is mailed around and read on machines that did not make it: nothing in it is
 * trusted. Reading one takes bounded time and memory whatever it holds (the caps below, each
 * past it named in a refusal or a note), and only regular files are read (never a link, a
 * FIFO, a device or a socket: refused, named, without opening it). */
#ifndef PV_RESULTS_RESULTS_H
#define PV_RESULTS_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/summary.h"
#include "playbooks/workload.h"

/* What reading a run's folder may cost, at most (docs/report.md has them as a table). A
 * file: what run gathers of one host's step. A folder: its files' bytes together, and the
 * files looked for. Entries: hosts of a run or of a step, clients of a step, columns of a
 * watch (what run gathers of a host's step, 20,000). JSON: the values of manifest.json or
 * load.json, counted before parsing (a parsed value costs up to 250 bytes). Cells: the numbers
 * of one watch (its times and values, a row and a column more), and of a run's watches
 * together. A watch's time is from 0 to a year after its step's start, its values within
 * +-1e12. Notes: a last line says when more were left out. */
#define PV_RESULTS_FILE_MAX    (256u << 20)
#define PV_RESULTS_RUN_MAX     (4ull << 30)
#define PV_RESULTS_FILES_MAX   100000
#define PV_RESULTS_STEPS_MAX   10000
#define PV_RESULTS_ENTRIES_MAX 20000
#define PV_RESULTS_JSON_MAX    2000000
#define PV_RESULTS_CELLS_MAX   (1u << 22)
#define PV_RESULTS_RUN_CELLS   (1u << 25)
#define PV_RESULTS_CONFIG_MAX  (1u << 20) /* bytes of the server's configuration kept */
#define PV_RESULTS_NOTES_MAX   64
#define PV_RESULTS_SECONDS_MAX 31622400.0
#define PV_RESULTS_VALUE_MAX   1e12
#define PV_RESULTS_TEXT	       384 /* a message or a name kept, at most (cut there) */

/* One host's samples during a step (watch.csv or watch-dc.csv): the columns as the header
 * names them ("cpu", "smbd", "mem_used", "rx_eth0", ...), a row per sample. */
struct pv_results_watch {
	size_t ncols;
	char (*cols)[32];
	size_t *order; /* the columns by name, for a lookup in log time; NULL: looked for in turn */
	size_t n;
	double *t;     /* seconds since the step's start */
	bool *measure; /* after the warm-up */
	double *v;     /* n rows of ncols values; NAN where a cell is empty */
};

/* The column named name, or -1 (a binary search when w->order is set). */
long pv_results_watch_col(const struct pv_results_watch *w, const char *name);
/* Mean, p95 (nearest rank) and maximum of a column over the measured samples (all samples
 * when none is marked measured): false when the column is missing or has no value. */
bool pv_results_watch_stat(const struct pv_results_watch *w, const char *name, double *mean,
			   double *p95, double *max);

struct pv_results_host {
	char name[64];
	char role[16]; /* "client" or "controller" */
	unsigned users;
	char state[16];		     /* done, stopped, failed, lost, not started */
	int exit;		     /* -1 when none */
	char error[PV_RESULTS_TEXT]; /* empty when none */
	char said[PV_RESULTS_TEXT];  /* the first line of its stderr in the step, when any */
};

struct pv_results_step {
	unsigned n;	   /* from 1 */
	unsigned users;	   /* all clients together */
	bool refine;	   /* a step --refine added after the ramp (manifest.json) */
	double start, end; /* seconds since the epoch; NAN when not known */
	char ended[32];	   /* duration, commands ended, host lost, stopped, timeout, ... */
	struct pv_results_host *hosts;
	size_t nhosts;
	struct pv_results_watch *srv; /* NULL: not watched, or no file */
	struct pv_results_watch *dc;  /* NULL: the DC not watched in this run */
	/* driver builtin (has_load): the step's figures as load.json has them, in the one model
	 * of a step (load/summary.h); what load.json does not record is NAN (load.cpu, a
	 * latency, a client's figure). The histograms of the latencies (load.all.n.lat and every
	 * kind's) are the clients' lines' (load.jsonl), merged over the measured intervals and
	 * the clients, when has_hist. load.clients and their names are the step's (pv_results_free
	 * frees them). load.all.n.ops: the SMB2 requests sent, per command (pv_load_op_names),
	 * saturated at UINT64_MAX, when has_ops; ops_other: those of names this provision does
	 * not know. */
	bool has_load;
	struct pv_load_summary load;
	bool carried;	/* counts for the answer, as load.json says (never when client-bound) */
	bool has_logon; /* load.json recorded the logons (version 2): load.logon, load.logon_n */
	bool has_hist;	/* some client's load.jsonl was read */
	unsigned intervals;		   /* measured intervals found in load.jsonl */
	char ready_error[PV_RESULTS_TEXT]; /* a client's first logon failure, when one said */
	char (*client_names)[64];	   /* load.clients[i].name points at client_names[i] */
	bool has_ops;			   /* false: not recorded */
	uint64_t ops_other;
};

struct pv_results_host_info {
	char name[64], role[16], address[64];
	char version[PV_RESULTS_TEXT]; /* what the host said of itself: "Version 4.17.12;Linux 6.1"
					*/
};

struct pv_results_run {
	char dir[1024];
	char id[64], lab[64], driver[16], status[16];
	char provision[32]; /* provision's version */
	char started[40], ended[40];
	int exit_code;
	char error[PV_RESULTS_TEXT]; /* the run's failure, empty when none */
	char playbook[512], sha256[72];
	unsigned min_users, max_users, step_users, duration, warmup, timeout;
	char client_command[PV_RESULTS_TEXT], controller_command[PV_RESULTS_TEXT];
	size_t planned; /* steps in the ramp */
	struct pv_results_host_info *hosts;
	size_t nhosts;
	unsigned watch_interval; /* 0: not watched */
	char watch_error[PV_RESULTS_TEXT];
	char *server_config; /* `testparm -s` on the server at run time; NULL: not recorded */
	struct pv_results_step *steps;
	size_t nsteps;
	/* driver builtin: load.json */
	bool has_load;
	struct pv_playbook_workload cfg;
	long answer_step; /* index into steps, -1 when no step counts */
	unsigned answer_users;
	/* the step that bounds the answer from above (load.json's answer.first_over, or the
	 * fewest users over the answer that did not count): index into steps, -1 when none */
	long first_over;
	bool answer_at_least;	    /* first_over was client-bound: the server carried at least
				     * the answer, and more is not known */
	double client_cores_needed; /* then: client cores the clients would need; NAN: not said */
	char answer[512];	    /* the answer line, as load.json has it */
	/* what could not be read, one line each ("step-02/watch.csv: ..."), PV_RESULTS_NOTES_MAX at
	 * most and a last line saying that more were left out */
	char *notes;
	size_t nnotes;
};

/* ---- reading (I/O) ---- */

/* Read the run folder dir. PV_OK with *out set (pv_results_free it); PV_ECONFIG when dir holds
 * no readable manifest.json (not a run's folder), PV_EIO when dir cannot be opened, and PV_EIO
 * "out of memory" when memory runs out anywhere (never a run with a part left out and no note
 * saying so). A file that cannot be read is left out with a note in run->notes. Files are
 * opened below dir part by part without following links and without blocking (O_NONBLOCK),
 * each checked to be a regular file before it is opened and after (fstat), and read within
 * the caps above. */
int pv_results_read(const char *dir, struct pv_results_run **out);

/* The files of a run's folder, from wherever they are (pv_results_read: the folder on disk; the
 * fuzz target and tests: memory). get puts the content of rel ("step-01/watch.csv"), at most
 * max bytes and NUL-terminated, in *text (free() it) and its length in *len: PV_OK; 1 when
 * rel does not exist; -1 when memory ran out; another code, recorded, when rel is more than
 * max bytes or cannot be read. */
struct pv_results_files {
	int (*get)(void *arg, const char *rel, size_t max, char **text, size_t *len);
	void *arg;
};
/* The run of the folder files give (dir: the name kept in run->dir and messages), as
 * pv_results_read reads one: every file it reads, and the caps, the same. */
int pv_results_parse_files(const struct pv_results_files *files, const char *dir,
			   struct pv_results_run **out);
void pv_results_free(struct pv_results_run *run);
/* A folder of repeats (`run --repeat N`): the names of its runs' folders (siblings of dir),
 * from its repeats.txt (one a line; at most max, 4 KiB, names of letters, digits, '.', '_',
 * '-'). PV_ECONFIG when dir holds no such file, or it names something else. */
int pv_results_repeats(const char *dir, char (*names)[64], size_t max, size_t *n);
int pv_results_parse_repeats(const char *text, size_t len, char (*names)[64], size_t max,
			     size_t *n);

/* ---- parsing (pure) ---- */

struct pv_results_run *pv_results_new(void);
/* manifest.json into run (steps, hosts, settings): PV_ECONFIG naming what is wrong. */
int pv_results_parse_manifest(struct pv_results_run *run, const char *text, size_t len);
/* load.json (version 1, or 2 with capacity's figures: logons, unserved, the clients' own
 * figures and client_bound, the answer's last step carried and first over it) into the steps
 * run has (matched by position, the users checked) and its config and answer: PV_ECONFIG
 * naming what is wrong (the run is left without load figures). Counts that cannot be are
 * refused as the figures line's reader refuses them: more unserved or overloaded than
 * started, more logons than users, a step carried and client-bound, a client bound in a step
 * that is not, an answer that names a step that is not what it says. */
int pv_results_parse_load(struct pv_results_run *run, const char *text, size_t len);
/* A watch CSV into *out (pv_results_watch_free it): PV_ECONFIG naming the line when it is not
 * one: a header naming a column twice or none, more than PV_RESULTS_ENTRIES_MAX columns or
 * PV_RESULTS_CELLS_MAX numbers, a cell that is not a number, a row without a time, a time not
 * from 0 to PV_RESULTS_SECONDS_MAX or a value beyond +-PV_RESULTS_VALUE_MAX. */
int pv_results_parse_watch(const char *text, size_t len, struct pv_results_watch **out);
void pv_results_watch_free(struct pv_results_watch *w);
/* One client's load.jsonl of step st: the histograms of the intervals after the first skip
 * (the warm-up) added into st's kinds, the ready line's error kept. Lines that are neither
 * are skipped; PV_ECONFIG when a line of figures is malformed (st unchanged then). */
int pv_results_parse_jsonl(struct pv_results_step *st, const char *text, size_t len, unsigned skip);
/* Append one note line to run->notes (printf format; past PV_RESULTS_NOTES_MAX, one saying that
 * more were left out, then nothing): 0, or -1 when out of memory (the notes as they were). */
int pv_results_note(struct pv_results_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One setting of the server's configuration as `testparm -s` gave it (run->server_config):
 * its section ("global" before any), its key and its value, each a part of the text (not
 * NUL-terminated). Set section to "global" (nsection 6) before the first call. */
struct pv_results_setting {
	const char *section, *key, *value;
	int nsection, nkey, nvalue;
};
/* The next setting of conf (NULL: none) from *pos (0 at first), into *s: false at the end.
 * A line "[name]" starts a section; a line "key = value" is a setting (the key without the
 * blanks around it, the value from its first character that is not blank to the end of the
 * line); a line starting with '#' or ';', or without '=', is skipped. */
bool pv_results_config_next(const char *conf, size_t *pos, struct pv_results_setting *s);

/* The steps' indices in idx (run->nsteps of them), users rising (the steps --refine added
 * among the ramp's; at equal users in the order they ran). */
void pv_results_by_users(const struct pv_results_run *run, size_t *idx);

/* "2026-11-30T12:15:00.250Z" as seconds since the epoch; NAN when not that form. */
double pv_results_time(const char *iso);

/* The step that bounds the answer from above: of the steps with load figures and more users
 * than the answer (every step when none is carried), the one with the fewest that does not
 * count; -1 when none. */
long pv_results_first_over(const struct pv_results_run *run);

/* ---- the bottleneck hint (pure) ---- */

/* For the first step over the answer (run->first_over): when it was client-bound, that the
 * clients were the limit there and not the server (which client, its busiest loop's CPU and
 * its loop lag, the server's and the DC's levels beside); else the logons that failed there
 * (how many, their p95, the scenarios left unserved, the DC's CPU) and the resource with a
 * known limit that was nearest it (the server's and the DC's CPU, the server's memory, each
 * client's busiest loop and CPU). Then what moved first over the steps up to it, users rising
 * (a scenario kind's p95 doubled from the first step's or over its limit, a CPU at 80% or
 * more, iowait at 20% or more, I/O in flight doubled, memory available under 10%, the logon
 * p95 doubled, logons failed, a client's loop at 80% or the client the limit). Sentences
 * from the data; where the data cannot tell (not watched, no load figures), they say so. */
struct pv_results_hint {
	long step;	    /* the first step over the answer (index), -1 when none */
	char nearest[1024]; /* the resource nearest its limit, or why it cannot be told */
	char first[768];    /* what moved first, or why it cannot be told */
};
void pv_results_hint(const struct pv_results_run *run, struct pv_results_hint *out);

#endif
