/* load/answer.h: the answer of a ramp in words, the one place they are written: the line
 * (load.txt, load.json, `run`'s table), the page's paragraph (report.html), compare's answer of
 * a group of runs and its note on a client-bound step, `run --repeat`'s answer over its
 * repeats. Each is built from the one model of a step (load/summary.h) and the one outcome
 * below, whoever found it: the run from its steps (pv_load_outcome_of), results/ from
 * load.json. Texts are appended to a buffer (util/buf.h; a failure is the buffer's, sticky). */
#ifndef PV_LOAD_ANSWER_H
#define PV_LOAD_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include "load/summary.h"
#include "util/buf.h"

/* What a ramp's answer is made of. */
struct pv_load_outcome {
	double threshold;		    /* overload %: a step counts at or under it */
	const struct pv_load_summary *best; /* the step carried with the most users; NULL: none */
	const struct pv_load_summary *over; /* the step that bounds it from above; NULL: none */
	unsigned best_n, over_n;	    /* their numbers in the run, from 1 */
	bool best_refine, over_refine;	    /* a step --refine added */
	bool at_least; /* over was client-bound: the server carried at least best's users */
	double cores;  /* client cores over's users would need; 0 or NAN: not known */
};

/* The outcome of the steps of r by the answer's rules (load/summary.h), the steps numbered by
 * their place. */
void pv_load_outcome_of(const struct pv_load_results *r, struct pv_load_outcome *out);

/* The line, without a newline: "the server carried 120 users without overload (step 6, 120
 * users: overload 0.4%; the first step over it, step 7, 140 users: overload 7.9%)", and why a
 * client-bound step says nothing of the server; "no step was measured". PV_OK, or PV_EIO when
 * out of memory. */
int pv_load_answer_line(const struct pv_load_results *r, struct pv_buf *out);

/* How a text is marked: emphasis and a tag around words, and the text taken from the run (a
 * client's name) made safe where it lands. pv_load_plain: none, the text as it is. */
struct pv_load_markup {
	const char *strong, *strong_end, *tag, *tag_end;
	void (*text)(struct pv_buf *out, const char *s);
};
extern const struct pv_load_markup pv_load_plain;

/* The page's paragraph: the answer with its margin, and what the first step over it had (or
 * that the clients were the limit there, or that the ramp stopped short of any limit). */
void pv_load_answer_prose(const struct pv_load_outcome *o, const struct pv_load_markup *m,
			  struct pv_buf *out);

/* A client that was the limit, in words: "cli2: its busiest loop at 95% of a core, loop lag
 * p95 150 ms" (its: "its busiest loop", else "busiest loop"). */
void pv_load_client_words(struct pv_buf *out, const struct pv_load_client *c, bool its,
			  const struct pv_load_markup *m);

/* compare's answer of a group who of runs: "B carried at least 40 users (the clients were the
 * limit above it)", or "B carried 40 to 60 users (across its 3 repeats)". */
void pv_load_answer_range(struct pv_buf *out, const char *who, unsigned lo, unsigned hi,
			  size_t runs, bool at_least);

/* `run --repeat`'s answer: "the server carried 90 users (80-90 over 3 repeats)" (n answers:
 * their median, lowest and highest). */
void pv_load_answer_repeats(struct pv_buf *out, double median, double lo, double hi, size_t n);

#endif
