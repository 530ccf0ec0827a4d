/* load/line.h: the line of figures `provision load` prints every interval and `run` reads from
 * every client: one JSON object on one line (docs/load.md), e.g.
 *
 *   {"load":2,"i":3,"secs":1.0002,"users":50,"failed":0,"kinds":{"browse":{"started":2,
 *    "errors":0,"late":0,"over_limit":0,"overloaded":0,"max":0.0071,
 *    "hist":[[57,1],[60,1]]}}}
 *
 * "load" is the format's version (2); "i" the interval, from 1; "secs" its length; "users" and
 * "failed" the users with and without a connection at its end; "kinds" the counts of every
 * kind that had any (the others are all 0), with the latency histogram as a sparse list of
 * [bucket, count] pairs, buckets rising (load/stats.h), and the exact maximum in seconds. Only
 * primary counts travel: how many completed is the histogram's count.
 *
 * Reading is strict: every key known and present, integers where counts go, and counts that
 * can be (late <= overloaded <= late + over_limit, late <= started, over_limit <= completed,
 * the maximum in the histogram's top bucket).
 * Pure: no I/O. */
#ifndef PV_LOAD_LINE_H
#define PV_LOAD_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "load/stats.h"
#include "util/buf.h"

#define PV_LOAD_LINE_MAX  65536		  /* bytes: a longer line is refused unread */
#define PV_LOAD_COUNT_MAX 1000000000000LL /* a count in one line: more is surely wrong */
#define PV_LOAD_USERS_MAX 100000000

/* The counts of n into the object o: started, errors, late, over_limit, overloaded, and
 * completed (the histogram's count) when asked; the figures line and the reports both write
 * them so. */
struct pv_json;
void pv_load_counts_json(const struct pv_load_counts *n, bool completed, struct pv_json *o);

/* The line `provision load` prints once every user has logged on or failed:
 *   ready {"users":N,"connected":N,"failed":N,"error":"the first failure"|null}
 * appended to out with its '\n' (first: NULL or "" for none). PV_EIO when out of memory. */
int pv_load_ready_encode(unsigned connected, unsigned failed, const char *first,
			 struct pv_buf *out);
/* Such a line (its '\n' may be there or not): *connected, *failed and the first failure into
 * first (firstlen bytes; "" when none), set only on success. PV_EREMOTE naming what is wrong
 * when it is not one. */
int pv_load_ready_decode(const char *line, size_t len, unsigned *connected, unsigned *failed,
			 char *first, size_t firstlen);

/* f as one line, with its '\n', appended to out. PV_EIO when out of memory. */
int pv_load_line_encode(const struct pv_load_figs *f, struct pv_buf *out);
/* One line (its final '\n' may be there or not) into *out, set only on success. PV_EREMOTE
 * naming what is wrong and quoting the line (shortened, non-printing bytes as '?') when it is
 * not a line of figures; PV_EIO when out of memory. */
int pv_load_line_decode(const char *line, size_t len, struct pv_load_figs *out);

#endif
