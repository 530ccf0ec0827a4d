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

#include "load/summary.h"
#include "util/buf.h"

/* A line of the command driver's wrapper: "pv-started PGID", "pv-alive", "pv-exit RC",
 * "pv-stopped RC", "pv-error TEXT"; anything else is PV_WRAP_OTHER (logged, never obeyed). */
enum pv_run_wrap {
	PV_WRAP_OTHER,
	PV_WRAP_STARTED,
	PV_WRAP_ALIVE,
	PV_WRAP_EXIT,
	PV_WRAP_STOPPED,
	PV_WRAP_ERROR
};
struct pv_run_wrap_line {
	enum pv_run_wrap kind;
	int status;	  /* PV_WRAP_EXIT, PV_WRAP_STOPPED: -1..65535 (-1: unknown) */
	const char *text; /* PV_WRAP_ERROR: into the line, at most PV_RUN_WRAP_TEXT_MAX bytes */
	size_t textlen;
};
#define PV_RUN_WRAP_TEXT_MAX 400
/* The line (len bytes, no '\n') into *out. A status that is not a number of that range makes
 * the line PV_WRAP_OTHER. */
void pv_run_wrap_line(const char *line, size_t len, struct pv_run_wrap_line *out);

/* The answer of run/scripts/install.sh (run/install.h) in mode check ("present" or "absent")
 * or finish ("installed"), its one line of stdout: 1 present or installed, 0 absent, -1
 * (recorded, PV_EREMOTE) anything else. */
int pv_run_install_answer(const char *out, size_t len, bool finish);

struct pv_run_client {
	size_t max_iv;	     /* the highest interval it may send (set before the first line) */
	struct pv_buf lines; /* every line it printed, each with its '\n' */
	size_t nlines;
	bool ready; /* its "ready" line came */
	unsigned connected, failed;
	char ready_error[640];	    /* its first refusal (struct pv_load_ready) */
	char spoke[128];	    /* what its first user's connection speaks */
	struct pv_load_logon logon; /* the step's logons, from its ready line */
	bool done;		    /* its "done" line came: its part of the step is over */
	struct pv_load_figs *iv;    /* its intervals: iv[seq - 1], seq 0 where none came */
	size_t niv;
};

/* The lines a client may send in a step in all. */
size_t pv_run_client_lines_max(const struct pv_run_client *c);

/* One line (without its '\n'): 1 its "ready" line (load/line.h: 'ready {"users":N,
 * "connected":N,"failed":N,"error":...,"spoke":...,"logon":{...}}', the first only), 2 an
 * interval's figures (load/line.h), kept at its number, 3 its "done" (the step's part of it over:
 * nothing may follow in the step). -1 (recorded, PV_EREMOTE, saying why) for anything else: a line
 * too long, not one of those, a second "ready", a line after "done", an interval past max_iv, one
 * line too many. PV_EIO (-1 too) out of memory. */
int pv_run_client_line(struct pv_run_client *c, const char *line, size_t len);
void pv_run_client_release(struct pv_run_client *c);

/* A client's own figures over its intervals after the first skip ones (load/stats.h: its
 * driver's CPU, its busiest loop's, its host's, its loop lag; whether it was the limit). */
void pv_run_client_figures(const struct pv_run_client *c, size_t skip, const char *name,
			   struct pv_load_client *out);

/* The intervals of n clients (NULL ones skipped) after the first skip ones (the warm-up),
 * each merged across the clients that sent it, added to ls in order. */
void pv_run_clients_merge(const struct pv_run_client *const *c, size_t n, size_t skip,
			  struct pv_load_step *ls);

#endif
