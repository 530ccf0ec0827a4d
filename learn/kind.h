/* learn/kind.h: the kinds of activity of a capture's users. An activity is a run of one
 * user's requests with no gap longer than the activity gap; its shape is the sequence of its
 * commands with repeats folded (READ READ READ is READ+), the first PV_LEARN_KIND_STEPS of them.
 * Activities of one shape, a command repeated or not (READ and READ+), are one kind, counted
 * with their requests, each step's requests and their length, its READ+ when one of them
 * repeated it; the kinds past PV_LEARN_KINDS_MAX are counted together as "other". Pure logic. */
#ifndef PV_LEARN_KIND_H
#define PV_LEARN_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "learn/hist.h"
#include "learn/table.h"

#define PV_LEARN_KIND_STEPS 128	 /* commands of a shape, at most (longer: cut, marked) */
#define PV_LEARN_KINDS_MAX  4096 /* kinds told apart */
/* a shape's words (pv_learn_kind_name) and their NUL, at most: 22 bytes a step
 * ("CREATE(OVERWRITE_IF)+ "), then " ..." */
#define PV_LEARN_KIND_NAME_MAX (PV_LEARN_KIND_STEPS * 22 + 8)

/* A shape: one byte a step (the command, 0x80 set when it repeats), and of a step that names a
 * path (a CREATE) the depth of what it names below the user's home (learn/namespace.h's
 * pv_learn_ns_depth: PV_LEARN_NS_UNKNOWN until told; 0 for the other steps), a cut mark; and
 * how many requests each step folded (not part of the shape: activities of one shape differ
 * in it). */
struct pv_learn_kind_shape {
	uint8_t step[PV_LEARN_KIND_STEPS];
	int8_t depth[PV_LEARN_KIND_STEPS];
	uint8_t n;
	bool cut;
	uint32_t reqs[PV_LEARN_KIND_STEPS];
};

struct pv_learn_kind {
	struct pv_learn_kind_shape shape;
	uint64_t count, requests;
	uint64_t step_requests[PV_LEARN_KIND_STEPS]; /* each step's requests, its activities' summed
						      */
	double seconds; /* the activities' lengths, first request to last, summed */
	/* the think times after its activities: from one's last request to the user's next
	 * activity's first (none after a user's last) */
	struct pv_learn_hist think;
};

/* The kinds a workload writes, at most (the most frequent first; each past them replayed as
 * the written kind nearest it). */
#define PV_LEARN_KINDS_WRITTEN 256

/* The kinds as a workload writes them, settled once counted (pv_learn_kinds_settle): their
 * places in order of count, each past the first `kept` (PV_LEARN_KINDS_WRITTEN at most)
 * replayed as the written kind near[i] (a place in order), the share of all the kinds'
 * requests so made as another command, and what the kinds past `kept` held. */
struct pv_learn_kinds_written {
	size_t *order, *near; /* NULL until settled (or when none is counted) */
	size_t kept;
	double moved;
	uint64_t past_activities, past_requests, requests; /* requests: every kind's */
};

struct pv_learn_kinds {
	struct pv_learn_kind *k;
	size_t n, cap;
	struct pv_learn_table index;
	uint64_t other, other_requests; /* activities of kinds past PV_LEARN_KINDS_MAX */
	struct pv_learn_kinds_written w;
};

void pv_learn_kind_shape_add(struct pv_learn_kind_shape *s, uint16_t cmd);
/* The depth of what the shape's last step names (pv_learn_ns_depth), when it is one that names
 * a path and was just added (a step folded into a repeat keeps its first's). */
void pv_learn_kind_shape_depth(struct pv_learn_kind_shape *s, int depth);
/* The shape's last step, a CREATE (or CREATE(STAT)) made once, refused by the server: it becomes
 * PV_PLAYBOOK_WORKLOAD_LEARNED_REFUSED (a CREATE folded into a repeat, or followed by another
 * request before its answer, stays as it is). */
void pv_learn_kind_shape_refused(struct pv_learn_kind_shape *s);
void pv_learn_kinds_init(struct pv_learn_kinds *t);
/* An activity of shape s, of requests over seconds, counted: its kind's place in t->k, or -1
 * (no shape, or counted with the other kinds). */
long pv_learn_kinds_add(struct pv_learn_kinds *t, const struct pv_learn_kind_shape *s,
			uint64_t requests, double seconds);
/* The kinds' places in order of count (most first), n of them, into order (which holds t->n);
 * ties by shape. */
void pv_learn_kinds_order(const struct pv_learn_kinds *t, size_t *order);
/* The kinds past the first `kept` of order (pv_learn_kinds_order's) each to the kept kind
 * nearest it, into near[i] for kept <= i < t->n (a place in order): the one whose commands
 * take the closest shares of its requests (the L1 distance between the two kinds' shares of
 * each command, a CREATE's disposition and an IOCTL's code apart, over the steps kept), plus
 * PV_LEARN_KIND_NEAR_LENGTH times |ln| of their requests an activity over each other's.
 * Returns the share of all the kinds' requests made as another command when each kind past
 * them is replayed as its nearest (the sum of its requests times half the L1 distance), 0 to
 * 1; 0 when none is past them or none is kept; -1 when out of memory. */
#define PV_LEARN_KIND_NEAR_LENGTH 0.1
double pv_learn_kinds_nearest(const struct pv_learn_kinds *t, const size_t *order, size_t kept,
			      size_t *near);
/* The kinds counted, settled as a workload writes them (t->w; again if settled before):
 * 0, or -1 when out of memory (t->w then empty). */
int pv_learn_kinds_settle(struct pv_learn_kinds *t);
/* The shape as words: "CREATE QUERY_INFO CLOSE", "READ+" for a repeat, " ..." when cut (its
 * depths are not in them: learn/workload.c writes them apart). */
void pv_learn_kind_name(const struct pv_learn_kind_shape *s, char *out, size_t len);
/* The depths of the shape's steps that name a path (a CREATE), in order, as a workload writes
 * them (PV_PLAYBOOK_WORKLOAD_OUT for one outside the home or not known, at most
 * PV_PLAYBOOK_WORKLOAD_DEEP), into out (room for PV_LEARN_KIND_STEPS): how many. */
unsigned pv_learn_kind_depths(const struct pv_learn_kind_shape *s, int *out);
void pv_learn_kinds_release(struct pv_learn_kinds *t);

#endif
