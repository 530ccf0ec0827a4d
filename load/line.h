/* load/line.h: the lines `provision load` prints and `run` reads from every client, each one
 * JSON object on one line (docs/load.md):
 *
 *   ready {"users":50,"connected":50,"failed":0,"error":null,"spoke":"SMB 3.1.1",
 *          "logon":{"failed":0,"retries":0,"max":0.21,"hist":[[78,12],...]}}
 *
 * once a step's users have logged on or failed ("error": the first failure; "spoke": what the
 * first user's connection speaks; "logon": the logons of this step: how many gave up, tries
 * made again, each user's time to log on as a histogram); then every interval
 *
 *   {"load":3,"i":3,"secs":1.0002,"users":50,"failed":0,"threads":2,"cpu":4.1,"cpu_top":2.3,
 *    "host_cpu":11.5,"lag":{"max":0.0012,"hist":[[1,40],[5,2]]},"kinds":{"browse":{
 *    "started":2,"errors":0,"late":0,"over_limit":0,"unserved":0,"overloaded":0,"max":0.0071,
 *    "hist":[[57,1],[60,1]],"ops":{"create":8,"close":8,"query_directory":4}}}}
 *
 * and "done" once the step's last line is out. "load" is the figures' format (3); "i" the
 * interval, from 1 in each step; "secs" its length; "users" and "failed" the users with and
 * without a connection at its end; "threads", "cpu", "cpu_top", "host_cpu" (null: not known)
 * and "lag" the driver itself (load/stats.h); "kinds" the counts of every kind that had any
 * (the others are all 0), with the latency histogram as a sparse list of [bucket, count]
 * pairs, buckets rising (load/stats.h), the exact maximum in seconds, and the SMB2 requests
 * sent per command (commands with none left out). Only primary counts travel: how many
 * completed (or logged on) is the histogram's count.
 *
 * Reading is strict: every key known and present, integers where counts go, and counts that
 * can be (unserved <= started, over_limit <= completed, late <= completed + errors, late +
 * unserved <= overloaded <= late + over_limit + errors + unserved, overloaded <= completed +
 * errors + unserved, every maximum in its histogram's top bucket). Started counts where a scenario
 * starts, the rest where it ends. Pure: no I/O. */
#ifndef PV_LOAD_LINE_H
#define PV_LOAD_LINE_H

#include <stdbool.h>
#include <stddef.h>

#include "load/stats.h"
#include "util/buf.h"

#define PV_LOAD_LINE_MAX  65536		  /* bytes: a longer line is refused unread */
#define PV_LOAD_COUNT_MAX 1000000000000LL /* a count in one line: more is surely wrong */
#define PV_LOAD_USERS_MAX 100000000

/* The counts of n into the object o: started, errors, late, over_limit, unserved,
 * overloaded, and completed (the histogram's count) when asked; the figures line and the
 * reports both write them so. */
struct pv_json;
void pv_load_counts_json(const struct pv_load_counts *n, bool completed, struct pv_json *o);
/* The SMB2 requests of ops[] as an object {"create": n, ...}: every command when all, else
 * those with any. */
struct pv_json *pv_load_ops_json(const uint64_t ops[PV_LOAD_OPS], bool all);

/* What the ready line says. */
struct pv_load_ready {
	unsigned connected, failed; /* users with a connection, and without one, now */
	char first[640];	    /* the first failure, "" when none */
	char spoke[128];	    /* what the first user's connection speaks ("SMB 3.1.1,
				     * encrypted (AES-128-GCM)", pv_smb_describe), "" when none */
	struct pv_load_logon logon; /* the logons of this step */
};

/* The ready line, with its '\n', appended to out. PV_EIO when out of memory. */
int pv_load_ready_encode(const struct pv_load_ready *r, struct pv_buf *out);
/* Such a line (its '\n' may be there or not) into *out (text too long for it shortened), set
 * only on success. PV_EREMOTE naming what is wrong, the line quoted shortened, when it is not
 * one. */
int pv_load_ready_decode(const char *line, size_t len, struct pv_load_ready *out);
/* Whether line (its '\n' may be there or not) is the step's "done". */
bool pv_load_is_done(const char *line, size_t len);

/* f as one line, with its '\n', appended to out. PV_EIO when out of memory. */
int pv_load_line_encode(const struct pv_load_figs *f, struct pv_buf *out);
/* One line (its final '\n' may be there or not) into *out, set only on success. PV_EREMOTE
 * naming what is wrong and quoting the line (shortened, non-printing bytes as '?') when it is
 * not a line of figures; PV_EIO when out of memory. */
int pv_load_line_decode(const char *line, size_t len, struct pv_load_figs *out);

#endif
