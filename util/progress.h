/* util/progress.h: progress of long work, reported by library code and drawn by provision/.
 *
 * A phase that works through many items (users, files) starts a progress, updates it as it
 * goes and ends it; it never prints. The sink provision/ installs decides what to show (a live
 * line on a terminal, a plain line now and then in a log, nothing with -q) and how often:
 * updates are cheap to call on every item. */
#ifndef PV_UTIL_PROGRESS_H
#define PV_UTIL_PROGRESS_H

#include <stdbool.h>

/* Monotonic seconds. */
double pv_now(void);

struct pv_progress {
	const char *what; /* "dc", "trees (smb)", ... */
	const char *unit; /* "users", "files" */
	unsigned long total, done;
	unsigned long long bytes; /* when the work also counts bytes (MB/s shown), else 0 */
	bool one_request; /* the work is one request whose progress cannot be seen: time only */
	char detail[160]; /* when set, shown instead of the count ("depth 120, -40/s, ETA 3 s") */
	double start;
	/* the sink's own state */
	double last;
	bool drawn;
};

enum pv_progress_event { PV_PROGRESS_UPDATE, PV_PROGRESS_END };
typedef void (*pv_progress_sink)(struct pv_progress *p, enum pv_progress_event ev, void *ctx);

/* Install the sink (NULL: progress is not shown). Call before starting threads. */
void pv_progress_set_sink(pv_progress_sink sink, void *ctx);

void pv_progress_start(struct pv_progress *p, const char *what, const char *unit,
		       unsigned long total);
void pv_progress_update(struct pv_progress *p, unsigned long done);
/* done items and bytes so far */
void pv_progress_bytes(struct pv_progress *p, unsigned long done, unsigned long long bytes);
/* One long request (total is what it covers): time goes on, no count. */
void pv_progress_tick(struct pv_progress *p);
/* Work whose measure is not a count (a queue draining, a step of a run): its own text. */
void pv_progress_detail(struct pv_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void pv_progress_end(struct pv_progress *p);

#endif
