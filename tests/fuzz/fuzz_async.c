/* tests/fuzz/fuzz_async.c: libFuzzer target for the SMB2 engine as the load driver uses it
 * (smb/conn.c, frame.c, logon.c, ops.c, smb/smb2.c, smb/sec.c, smb/ntlm.c). The input is the
 * server's side of a whole conversation, its replies one after another exactly as they go on the
 * wire (NetBIOS header, SMB2 messages or transform headers), sent by the scripted server of
 * tests/fuzz/stream.h while the client runs the plan of tests/fuzz/async_plan.h on its loop: open
 * (negotiate, NTLMv2 logon, tree connect), then a folder listed and a file read, their requests in
 * flight together. Whatever the bytes, every callback must come exactly once (the plan aborts
 * otherwise), and never a crash, a hang or a leak. The seeds (tests/fuzz/corpus/async) are what
 * tests/unit/check_async.c's fake server sent for the same plan, valid and with faults, SMB 3.1.1
 * and encrypted ones among them (transform headers, negotiate contexts); message ids line up.
 *
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address,undefined against the project's
 * modules); tests/fuzz/async.options gives its -max_len. */
#include "tests/fuzz/async_plan.h"
#include "tests/fuzz/stream.h"

/* A reply stream longer than this is not a conversation of the plan's size. */
#define ASYNC_INPUT_MAX (1u << 20)

/* The plan against data, streamed; the outcome in *p. */
static void async_replay(struct async_plan *p, const uint8_t *data, size_t size)
{
	struct server s;
	pthread_t th;
	int fd;

	memset(p, 0, sizeof(*p));
	if ((fd = stream_start(&s, data, size, &th)) < 0) {
		snprintf(p->msg, sizeof(p->msg), "no socketpair or thread");
		return;
	}
	/* a long timeout: the stream ends with a close, so the client never waits for it */
	async_plan_run(p, fd, 60000); /* owns fd */
	stream_stop(&s, th);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct async_plan p;

	if (size <= ASYNC_INPUT_MAX)
		async_replay(&p, data, size);
	return 0;
}
