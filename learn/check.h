/* learn/check.h: a replay's capture checked against the capture its workload was learned from
 * (provision learn CAPTURE --check REPLAY, docs/learn.md), with the bounds issue 29 sets: the
 * file work's command shares (CREATE by disposition and IOCTL by control code apart), the
 * users' rates, the gaps between their requests, the read and write sizes, the answers' status
 * classes, what the watches (CHANGE_NOTIFY) were answered with and how many requests were
 * answered. Pure logic over what pv_learn_read counted. */
#ifndef PV_LEARN_CHECK_H
#define PV_LEARN_CHECK_H

#include <stdbool.h>

#include "learn/learn.h"

#define PV_LEARN_CHECK_ROWS 96

/* CREATE's dispositions by value (MS-SMB2 2.2.13): "SUPERSEDE" .. "OVERWRITE_IF" */
extern const char *const pv_learn_dispositions[6];

/* One check: what it compares, the capture's and the replay's value, its bound and whether
 * the replay keeps it. */
struct pv_learn_check_row {
	const char *group; /* "mix", "rates", "gaps", "sizes", "status", "notify", "opens",
			    * "answers" */
	char what[48];	   /* "CREATE (OPEN)", "total variation", "p95", ... */
	const char *unit;  /* "%", "s", "B", "/h"; "": a distance between the two, one value
			    * (the replay's) */
	double capture, replay;
	char rule[32]; /* the bound as said: "within 3 points", "at most 0.05" */
	bool pass;
};

struct pv_learn_check {
	unsigned n, failed;
	struct pv_learn_check_row row[PV_LEARN_CHECK_ROWS];
};

/* Whether command cmd is file work (the mix compares those: not NEGOTIATE, SESSION_SETUP,
 * LOGOFF, TREE_CONNECT, TREE_DISCONNECT, CANCEL or ECHO, which the logons per user-hour
 * stand for). */
bool pv_learn_file_work(unsigned cmd);

/* The replay's counts rep checked against the capture's cap, into out. */
void pv_learn_check(const struct pv_learn_counts *cap, const struct pv_learn_counts *rep,
		    struct pv_learn_check *out);

#endif
