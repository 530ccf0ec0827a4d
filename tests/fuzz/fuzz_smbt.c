/* tests/fuzz/fuzz_smbt.c: libFuzzer target for the decoding of captured SMB2 frames
 * (smb/trace.c, through the codec's reader of smb/smb2.c): the input is one NetBIOS frame's
 * payload, requests or answers, compounds included, given whole and then kept only in part
 * (as provision learn keeps the first bytes of a large frame). Every message decoded must lie
 * inside the bytes given, the chain must end, and a malformed one must be refused with its
 * words, never read past.
 *
 * Built by `make fuzz`; run by hand: build/fuzz/bin/fuzz_smbt tests/fuzz/corpus/smbt */
#include "smb/trace.h"

#include <stdlib.h>
#include <string.h>

#define INPUT_MAX (1u << 18)

static void seen(void *arg, const struct pv_smb_trace_msg *m)
{
	size_t *n = arg;

	(*n)++;
	if (m->cmd < PV_SMB_TRACE_NCMD && !m->response && m->length > 0x7fffffffu)
		(*n)++; /* read the fields: a length is any 32-bit value */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[160];
	size_t n = 0;
	bool cut;
	uint8_t *copy;

	if (size > INPUT_MAX)
		return 0;
	(void)pv_smb_trace_kind(data, size);
	/* an exact copy on the heap, so that ASan sees any read past its end */
	if (!(copy = malloc(size ? size : 1)))
		return 0;
	memcpy(copy, data, size);
	(void)pv_smb_trace_frame(copy, size, size, seen, &n, &cut, why, sizeof(why));
	/* the same frame kept only in part: its first half, of a frame twice as long */
	(void)pv_smb_trace_frame(copy, size / 2, size * 2, seen, &n, &cut, why, sizeof(why));
	free(copy);
	return 0;
}
