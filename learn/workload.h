/* learn/workload.h: what a capture's users did, written as a workload a person can read and
 * edit (provision learn -o WORKLOAD.yaml, docs/learn.md): their rates, their activities and
 * the kinds of them with a weight each, the command mix, the read and write sizes and how long
 * files stay open. No name, path or byte of the capture is in it: users are counted, never
 * named, and kinds are command sequences. Pure logic over what pv_learn_read counted. */
#ifndef PV_LEARN_WORKLOAD_H
#define PV_LEARN_WORKLOAD_H

#include <stdint.h>

#include "learn/learn.h"
#include "util/buf.h"

/* Every SMB2 request the capture holds, all commands together. */
uint64_t pv_learn_requests(const struct pv_learn_counts *c);

/* a as a percent of b (0 when b is 0). */
double pv_learn_pct(uint64_t a, uint64_t b);
/* n a user-hour: over the user-hours the capture holds (c->user_hours; 0 when none). */
double pv_learn_per_user_hour(const struct pv_learn_counts *c, uint64_t n);

/* The workload learned into c as YAML (its kinds as c->kinds.w settled them: at most
 * PV_LEARN_KINDS_WRITTEN, the most frequent first), appended to out; source names the capture (its
 * file name, as the user gave it) and version the provision that learned it. PV_OK, or PV_EIO when
 * out of memory (out marked failed). */
int pv_learn_workload(const struct pv_learn_counts *c, const char *source, const char *version,
		      struct pv_buf *out);

#endif
