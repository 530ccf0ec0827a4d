/* tests/fuzz/smb2_plan.h: the conversation that tests/fuzz/fuzz_smb2.c drives and that
 * tests/unit/check_sync.c records the seed corpus from (tests/fuzz/corpus/smb2): over a
 * connected fd, negotiate, log on as LAB\u1, connect to fsroot1, list the tree u1 (not
 * fresh: a QUERY_DIRECTORY per folder) and build a few items there, then log off. The same
 * plan on both sides keeps the message ids of the recorded answers those the client sends,
 * and its fixed randomness (smba_test_fixed: GUID, preauth salt, NTLMv2 client challenge) the
 * session keys that signed or encrypted answers were made with.
 * Header-only: a fuzz target is one .c file built against the project's modules. */
#ifndef PV_TESTS_FUZZ_SMB2_PLAN_H
#define PV_TESTS_FUZZ_SMB2_PLAN_H

#include <string.h>

#include "smb/internal.h"
#include "util/err.h"
#include "util/secret.h"

#define SMB2_PLAN_PASSWORD "Secret-1"

/* A folder, a file in it, a file of two WRITEs, an empty one, and one over a compound
 * (CREATE, WRITE chunks in flight, CLOSE): every shape of request the build sends. */
static const struct pv_smb_item smb2_plan_items[] = {
	{"d", true, 0},	 {"d/a", false, 100},	 {"b", false, 70000},
	{"e", false, 0}, {"big", false, 300000},
};

static void smb2_plan_fill(void *ctx, size_t item, uint64_t offset, void *buf, size_t len)
{
	(void)ctx;
	memset(buf, (int)('a' + (item + offset) % 26), len);
}

/* Run the plan over fd (owned from here) with the timeout in ms; the build's counts into
 * *res. Returns the code of the first failure (its message recorded). */
static inline int smb2_plan_run(int fd, int timeout_ms, struct pv_smb_tree_result *res)
{
	struct pv_secret *pw = pv_secret_new(SMB2_PLAN_PASSWORD, strlen(SMB2_PLAN_PASSWORD));
	struct pv_smb_sync *c = NULL;
	int r;

	smba_test_fixed(true); /* the recorded conversation's keys */
	r = smb2_connect_fd(fd, "fake", timeout_ms, &c);
	memset(res, 0, sizeof(*res));
	if (r == PV_OK && !pw)
		r = pv_error(PV_EIO, "out of memory");
	if (r == PV_OK)
		r = pv_smb_sync_tree_build(c, "LAB", "u1", pw, "fsroot1", "u1", smb2_plan_items,
					   sizeof(smb2_plan_items) / sizeof(smb2_plan_items[0]),
					   false, NULL, smb2_plan_fill, NULL, NULL, NULL, res);
	pv_smb_sync_free(c);
	pv_secret_free(pw);
	return r;
}

#endif
