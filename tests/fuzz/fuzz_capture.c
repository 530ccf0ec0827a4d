/* tests/fuzz/fuzz_capture.c: libFuzzer target for the capture reader of provision learn: the
 * input is a whole capture file (pcap or pcapng), read as `provision learn` reads one: libpcap
 * (capture/file.c) over a memory file, each frame taken apart (capture/frame.c), the TCP
 * connections to port 445 put back in order (learn/stream.c), their NetBIOS frames and SMB2
 * messages decoded and counted (learn/learn.c, smb/trace.c). Whatever the bytes: counts or a
 * clear refusal, never a crash, a hang, a leak or memory without bound.
 *
 * The seeds (tests/fuzz/corpus/capture) are small captures made on the lab (an smbclient
 * session, Ethernet) and made by hand (reordered, retransmitted and missing segments, a
 * compound, a stream begun mid-frame, Linux cooked and raw IPv6 link types).
 *
 * Built by `make fuzz`; run by hand: build/fuzz/bin/fuzz_capture tests/fuzz/corpus/capture */
#include "capture/capture.h"
#include "learn/learn.h"

#include <stdio.h>

/* A capture longer than this is not a seed's size. */
#define INPUT_MAX (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_learn_counts c = {0};
	struct pv_capture *cap;
	struct pv_learn *l;
	const uint8_t *p;
	size_t caplen, wirelen;
	double t;
	FILE *f;

	if (size == 0 || size > INPUT_MAX || !(f = fmemopen((void *)data, size, "rb")))
		return 0;
	if (pv_capture_open_file(f, "fuzz", &cap) != 0)
		return 0;
	/* inputs of odd length with an activity gap set (the kinds of activity in this pass), the
	 * others with it learned (the split of the gaps' modes) */
	if ((l = pv_learn_begin(&(struct pv_learn_opts){.gap = size % 2 ? 0.01 : 0},
				pv_capture_link(cap), &c))) {
		while (pv_capture_next(cap, &p, &caplen, &wirelen, &t) > 0)
			pv_learn_frame(l, p, caplen, wirelen, t);
		pv_learn_end(l);
	}
	pv_learn_counts_release(&c);
	pv_capture_close(cap);
	return 0;
}
