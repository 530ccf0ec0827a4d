/* tests/fuzz/async_plan.h: what tests/fuzz/fuzz_async.c drives the engine (smb/async.h) through,
 * and what tests/unit/check_async.c records the seed corpus from (tests/fuzz/corpus/async): over a
 * connected fd, open a connection as LAB\u1 to fsroot1 (negotiate, NTLMv2 logon, tree
 * connect), then at once list the folder u1/d (CREATE, QUERY_DIRECTORY until
 * STATUS_NO_MORE_FILES, CLOSE) and read the file u1/f (CREATE, its READs in flight together,
 * CLOSE). The same plan on both sides keeps the message ids of the recorded answers those the
 * client sends, and its fixed randomness (smba_test_fixed: GUID, preauth salt, client
 * challenge) the session keys that signed or encrypted answers were made with.
 *
 * Whatever the server sends, every callback must come exactly once and the loop must end:
 * the plan aborts otherwise (the fuzzer's crash). Header-only: a fuzz target is one .c file
 * built against the project's modules. */
#ifndef PV_TESTS_FUZZ_ASYNC_PLAN_H
#define PV_TESTS_FUZZ_ASYNC_PLAN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smb/async.h"
#include "smb/internal.h"
#include "util/err.h"
#include "util/progress.h"
#include "util/secret.h"

#define ASYNC_PLAN_PASSWORD "Secret-1"
#define ASYNC_PLAN_FILES    5u	  /* in u1/d, the dots apart */
#define ASYNC_PLAN_SIZE	    1500u /* u1/f */
#define ASYNC_PLAN_CHUNK    512u  /* a READ */
#define ASYNC_PLAN_REQS	    256u  /* requests at most (a server that lists without end) */

struct async_plan;

struct async_req {
	struct async_plan *p;
	void (*next)(struct async_req *q, const struct pv_smb_done *d);
	int calls;
};

struct async_plan {
	struct pv_smb_loop *l;
	struct pv_smb_conn *c;
	struct async_req ready;
	struct async_req q[ASYNC_PLAN_REQS];
	unsigned n;
	uint8_t fid_d[16], fid_f[16];
	unsigned names, lists, closes;
	uint64_t read, size;
	bool failed;
	/* the outcome: everything done as planned, or the first failure's message */
	bool ok;
	char msg[512];
};

static inline void async_plan_fail(struct async_plan *p, const char *msg)
{
	if (!p->failed)
		snprintf(p->msg, sizeof(p->msg), "%s", msg);
	p->failed = true;
}

static inline void async_plan_cb(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct async_req *q = arg;

	(void)c;
	if (q->calls++)
		return; /* the plan aborts at its end */
	if (d->code != PV_OK)
		async_plan_fail(q->p, d->msg ? d->msg : "(no message)");
	else if (q->next)
		q->next(q, d);
}

/* Queue a request: call is the pv_smb_* call made with async_plan_cb and the new request
 * *qp; a refusal is a failure (no callback comes for it). */
#define ASYNC_PLAN_ISSUE(p, nextfn, qp, call)                                                      \
	do {                                                                                       \
		if ((p)->n == ASYNC_PLAN_REQS) {                                                   \
			async_plan_fail((p), "the plan made too many requests");                   \
			break;                                                                     \
		}                                                                                  \
		(qp) = &(p)->q[(p)->n++];                                                          \
		*(qp) = (struct async_req){(p), (nextfn), 0};                                      \
		if ((call) != PV_OK) {                                                             \
			(qp)->calls = 1;                                                           \
			async_plan_fail((p), pv_errmsg());                                         \
		}                                                                                  \
	} while (0)

static inline int async_plan_entry(void *arg, const char *name, bool dir, uint64_t size)
{
	(void)name;
	(void)dir;
	(void)size;
	((struct async_plan *)arg)->names++;
	return 0;
}

static inline void async_plan_closed(struct async_req *q, const struct pv_smb_done *d)
{
	if (d->status == 0)
		q->p->closes++;
}

static inline void async_plan_listed(struct async_req *q, const struct pv_smb_done *d)
{
	struct async_plan *p = q->p;

	if (d->status == 0 && pv_smb_entries(d->buf, d->buflen, async_plan_entry, p) != PV_OK)
		async_plan_fail(p, pv_errmsg());
	if (d->status == 0 && !p->failed) {
		p->lists++;
		ASYNC_PLAN_ISSUE(p, async_plan_listed, q,
				 pv_smb_list(p->c, p->fid_d, false, async_plan_cb, q));
		return;
	}
	if (d->status != 0x80000006u) /* STATUS_NO_MORE_FILES */
		async_plan_fail(p, "the listing was refused");
	ASYNC_PLAN_ISSUE(p, async_plan_closed, q,
			 pv_smb_closefile(p->c, p->fid_d, async_plan_cb, q));
}

static inline void async_plan_dir(struct async_req *q, const struct pv_smb_done *d)
{
	struct async_plan *p = q->p;

	if (d->status != 0) {
		async_plan_fail(p, "the folder could not be opened");
		return;
	}
	memcpy(p->fid_d, d->fid, 16);
	ASYNC_PLAN_ISSUE(p, async_plan_listed, q,
			 pv_smb_list(p->c, p->fid_d, true, async_plan_cb, q));
}

static inline void async_plan_got(struct async_req *q, const struct pv_smb_done *d)
{
	if (d->status == 0)
		q->p->read += d->buflen;
	else
		async_plan_fail(q->p, "a READ was refused");
}

static inline void async_plan_file(struct async_req *q, const struct pv_smb_done *d)
{
	struct async_plan *p = q->p;

	if (d->status != 0) {
		async_plan_fail(p, "the file could not be opened");
		return;
	}
	memcpy(p->fid_f, d->fid, 16);
	p->size = d->size;
	for (uint64_t off = 0; off < p->size && off < 16 * ASYNC_PLAN_CHUNK && !p->failed;
	     off += ASYNC_PLAN_CHUNK) {
		ASYNC_PLAN_ISSUE(
			p, async_plan_got, q,
			pv_smb_read(p->c, p->fid_f, off, ASYNC_PLAN_CHUNK, async_plan_cb, q));
	}
	ASYNC_PLAN_ISSUE(p, async_plan_closed, q,
			 pv_smb_closefile(p->c, p->fid_f, async_plan_cb, q));
}

static inline void async_plan_ready(struct async_req *q, const struct pv_smb_done *d)
{
	struct async_plan *p = q->p;

	(void)d;
	ASYNC_PLAN_ISSUE(p, async_plan_dir, q,
			 pv_smb_create(p->c, "u1/d", PV_SMB_READ, PV_SMB_OPEN, PV_SMB_DIR,
				       async_plan_cb, q));
	ASYNC_PLAN_ISSUE(p, async_plan_file, q,
			 pv_smb_create(p->c, "u1/f", PV_SMB_READ, PV_SMB_OPEN, PV_SMB_NONDIR,
				       async_plan_cb, q));
}

static inline bool async_plan_settled(const struct async_plan *p)
{
	if (!p->ready.calls)
		return false;
	for (unsigned i = 0; i < p->n; i++)
		if (!p->q[i].calls)
			return false;
	return true;
}

/* Run the plan over fd (owned from here) with the timeout in ms; the outcome in *p. Aborts
 * when a callback came twice or never, or the loop did not end in 30 s. */
static inline void async_plan_run(struct async_plan *p, int fd, int timeout_ms)
{
	struct pv_secret *pw = pv_secret_new(ASYNC_PLAN_PASSWORD, strlen(ASYNC_PLAN_PASSWORD));
	struct pv_smb_open_opts o = {"fake", "fake", "fsroot1", "LAB", "u1", pw, timeout_ms};
	double end = pv_now() + 30;

	memset(p, 0, sizeof(*p));
	p->ready = (struct async_req){p, async_plan_ready, 0};
	if (!pw || pv_smb_loop_new(&p->l) != PV_OK) {
		close(fd);
		pv_secret_free(pw);
		snprintf(p->msg, sizeof(p->msg), "out of memory");
		return;
	}
	smba_test_fixed(true); /* the recorded conversation's keys */
	if (smba_open_fd(p->l, fd, &o, async_plan_cb, &p->ready, &p->c) != PV_OK) {
		p->ready.calls = 1;
		async_plan_fail(p, pv_errmsg());
	}
	pv_secret_free(pw);
	while (!async_plan_settled(p) && pv_now() < end)
		if (pv_smb_loop_run(p->l, 50) != PV_OK)
			break;
	if (!async_plan_settled(p)) {
		fprintf(stderr, "async plan: not every callback came\n");
		abort();
	}
	pv_smb_loop_free(p->l);
	if (p->ready.calls != 1) {
		fprintf(stderr, "async plan: ready called %d times\n", p->ready.calls);
		abort();
	}
	for (unsigned i = 0; i < p->n; i++)
		if (p->q[i].calls != 1) {
			fprintf(stderr, "async plan: request %u called %d times\n", i,
				p->q[i].calls);
			abort();
		}
	p->ok = !p->failed && p->closes == 2 && p->read == p->size;
	if (!p->failed && !p->ok)
		snprintf(p->msg, sizeof(p->msg), "the plan ended short");
}

#endif
