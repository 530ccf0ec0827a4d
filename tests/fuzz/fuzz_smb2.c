/* tests/fuzz/fuzz_smb2.c: libFuzzer target for our SMB2 client's synchronous side and tree
 * builder (smb/sync.c over the engine of smb/async.h, the codec of smb/smb2.c, the security
 * of smb/sec.c, smb/ntlm.c, smb/listing.c). The input is the server's side of a whole
 * conversation, its replies one after another exactly as they go on the wire (NetBIOS header,
 * SMB2 messages or transform headers); a scripted server on the other end of a socketpair(2)
 * sends them while the client runs the plan of tests/fuzz/smb2_plan.h: negotiate (3.1.1 and
 * its contexts in the seeds that have them), NTLMv2 logon, tree connect, listing, a small
 * build, logoff. Whatever the bytes, the client must end with an error or success, never a
 * crash, a hang or a leak.
 *
 * The server (tests/fuzz/stream.h) writes the whole input at once and then closes its
 * sending side (the client takes an answer only once it sent its request: smb/sync.c yields
 * after each). The seeds (tests/fuzz/corpus/smb2) are what tests/unit/check_sync.c's fake
 * server sent for the same plan, valid and with faults, signed and encrypted (with the
 * plan's fixed randomness their keys hold); message ids line up.
 *
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address,undefined against the project's
 * modules); run by hand: build/fuzz/bin/fuzz_smb2 -max_len=131072 tests/fuzz/corpus/smb2 */
#include "tests/fuzz/smb2_plan.h"
#include "tests/fuzz/stream.h"

/* A reply stream longer than this is not a conversation of the plan's size. */
#define INPUT_MAX (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server s;
	struct pv_smb_tree_result res;
	pthread_t th;
	int fd;

	if (size > INPUT_MAX || (fd = stream_start(&s, data, size, &th)) < 0)
		return 0;
	/* a long timeout: the stream ends with a close, so the client never waits for it */
	smb2_plan_run(fd, 60000, &res); /* owns fd */
	stream_stop(&s, th);
	return 0;
}
