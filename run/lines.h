/* run/lines.h: what the controller reads from the hosts of a step, line by line: the command
 * driver's wrapper's "pv-*" lines (run/scripts/run-client.pl), and each client's `provision
 * load` in a step of the built-in driver (docs/load.md): its "ready" line and its lines of
 * figures, one per interval, kept per client, then the clients' intervals merged. Pure: no
 * I/O, so that the unit tests and the fuzz targets (tests/fuzz/fuzz_hostline.c,
 * fuzz_clientlines.c) reach them without a host.
 *
 * A client is another host: it is trusted with nothing. Every line is at most
 * PV_LOAD_LINE_MAX bytes; an interval's number is at most max_iv (the step's length in
 * intervals and PV_RUN_INTERVALS_SLACK: run/caps.h), so a client cannot make the controller
 * keep more than max_iv intervals; and it may send at most max_iv + PV_RUN_OTHER_LINES_MAX
 * lines, each kept once (load.jsonl). */
#ifndef PV_RUN_LINES_H
#define PV_RUN_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load/summary.h"
#include "util/buf.h"

/* A line of the command driver's wrapper: "pv-started PGID", "pv-alive", "pv-exit RC",
 * "pv-stopped RC", "pv-error TEXT"; anything else is PV_RUN_WRAP_OTHER (logged, never obeyed). */
enum pv_run_wrap {
	PV_RUN_WRAP_OTHER,
	PV_RUN_WRAP_STARTED,
	PV_RUN_WRAP_ALIVE,
	PV_RUN_WRAP_EXIT,
	PV_RUN_WRAP_STOPPED,
	PV_RUN_WRAP_ERROR
};
struct pv_run_wrap_line {
	enum pv_run_wrap kind;
	int status;	  /* PV_RUN_WRAP_EXIT, PV_RUN_WRAP_STOPPED: -1..65535 (-1: unknown) */
	const char *text; /* PV_RUN_WRAP_ERROR: into the line, at most PV_RUN_WRAP_TEXT_MAX bytes */
	size_t textlen;
};
#define PV_RUN_WRAP_TEXT_MAX 400
/* The line (len bytes, no '\n') into *out. A status that is not a number of that range makes
 * the line PV_RUN_WRAP_OTHER. */
void pv_run_wrap_line(const char *line, size_t len, struct pv_run_wrap_line *out);

/* The answer of run/scripts/install.sh (run/install.h) in mode check ("present" or "absent")
 * or finish ("installed"), its one line of stdout: 1 present or installed, 0 absent, -1
 * (recorded, PV_EREMOTE) anything else. */
int pv_run_install_answer(const char *out, size_t len, bool finish);

/* What the controller keeps of an interval of a client: what merging it with the other
 * clients' same interval needs. The rest (the counts and histograms, 20 KiB an interval) is
 * added to the client's sums as it comes, so a step of hours costs no more than one of seconds. */
struct pv_run_iv {
	uint64_t seq; /* 0: none came */
	double secs;
	unsigned connected, failed;
};

struct pv_run_client {
	size_t max_iv; /* the highest interval it may send (set before the first line) */
	size_t skip;   /* the intervals of the warm-up, not counted (set before the first line) */
	struct pv_buf lines; /* the lines it printed not yet taken (each with its '\n') */
	size_t nlines;	     /* every line it printed in the step */
	bool ready;	     /* its "ready" line came */
	unsigned connected, failed;
	char ready_error[640];	    /* its first refusal (struct pv_load_ready) */
	char spoke[128];	    /* what its first user's connection speaks */
	struct pv_load_logon logon; /* the step's logons, from its ready line */
	bool done;		    /* its "done" line came: its part of the step is over */
	struct pv_run_iv *iv;	    /* its intervals: iv[seq - 1] */
	size_t niv;
	/* its intervals after the warm-up, added as they come: the step's counts (of the fields
	 * pv_run_clients_merge does not take from iv) and its own figures */
	struct pv_load_step sum;
	struct pv_load_client_acc own;
};

/* The lines a client may send in a step in all. */
size_t pv_run_client_lines_max(const struct pv_run_client *c);

/* One line (without its '\n'), kept in lines: 1 its "ready" line (load/line.h: 'ready {"users":N,
 * "connected":N,"failed":N,"error":...,"spoke":...,"logon":{...}}', the first only), 2 an
 * interval's figures (load/line.h), kept at its number, 3 its "done" (the step's part of it over:
 * nothing may follow in the step). -1 (recorded, PV_EREMOTE, saying why) for anything else: a line
 * too long, not one of those, a second "ready", a line after "done", an interval past max_iv or
 * one that came already, one line too many. PV_EIO (-1 too) out of memory. */
int pv_run_client_line(struct pv_run_client *c, const char *line, size_t len);
void pv_run_client_release(struct pv_run_client *c);

/* A client's own figures over its intervals after the warm-up (load/stats.h: its driver's CPU,
 * its busiest loop's, its host's, its loop lag; whether it was the limit). */
void pv_run_client_figures(const struct pv_run_client *c, const char *name,
			   struct pv_load_client *out);

/* The intervals of n clients (NULL ones skipped) after the warm-up, each merged across the
 * clients that sent it, added to ls in order: as pv_load_step_add of each merged interval. */
void pv_run_clients_merge(const struct pv_run_client *const *c, size_t n, struct pv_load_step *ls);

#endif
