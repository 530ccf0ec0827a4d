/* tests/fuzz/fuzz_loadline.c: libFuzzer target for the load driver's figures line
 * (load/line.h), which the controller reads from every client. An input is one line, as read
 * from a client's channel. Invariants, each aborting when broken:
 *   - a refusal is PV_EREMOTE with a message;
 *   - a line read is written again as one line ending in '\n', which reads back, and writing
 *     that again gives the same bytes (the maximum is printed with 12 digits: the second
 *     writing is the fixed point);
 *   - the figures read keep the counts' promises (line.h), merge with themselves as a second
 *     client would, and make a step whose summary is finite, with quantiles from 0 to the
 *     maximum. */
#include "load/line.h"
#include "load/stats.h"
#include "util/buf.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_loadline: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

static void check_lat(const struct pv_load_lat *l)
{
	if (!isfinite(l->median) || !isfinite(l->p95) || l->median < 0 || l->median > l->max ||
	    l->p95 < l->median || l->p95 > l->max)
		broken("a quantile outside 0..max, or p95 below the median");
}

static void check_figs(const struct pv_load_figs *f)
{
	for (int k = 0; k < PV_LOAD_KINDS; k++) {
		const struct pv_load_counts *n = &f->kind[k];
		uint64_t sum = 0;

		for (unsigned b = 0; b < PV_LOAD_BUCKETS; b++)
			sum += n->lat.n[b];
		if (n->late > n->started || n->over_limit > sum || n->overloaded < n->late ||
		    n->overloaded > n->late + n->over_limit || sum != pv_load_hist_count(&n->lat) ||
		    !(n->lat.max >= 0))
			broken("figures read that break the counts' promises");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* about 17 KiB each: not on the stack of every run */
	static struct pv_load_figs f, g, two;
	static struct pv_load_step st;
	static struct pv_load_summary sum;
	struct pv_load_config c;
	struct pv_buf a = PV_BUF_INIT, b = PV_BUF_INIT;
	unsigned connected = 0, failed = 0;
	char first[256];
	int r;

	/* the other line the controller reads: "ready {...}" */
	r = pv_load_ready_decode((const char *)data, size, &connected, &failed, first,
				 sizeof(first));
	if (r != PV_OK && (r != PV_EREMOTE || !pv_errmsg()[0]))
		broken("a ready line refused without PV_EREMOTE and a message");
	if (r == PV_OK) {
		if (pv_load_ready_encode(connected, failed, first, &a) != PV_OK ||
		    pv_load_ready_decode(a.data, a.len, &connected, &failed, first,
					 sizeof(first)) != PV_OK)
			broken("a ready line read does not write and read back");
		pv_buf_release(&a, 0);
	}
	r = pv_load_line_decode((const char *)data, size, &f);

	if (r != PV_OK) {
		if (r != PV_EREMOTE || !pv_errmsg()[0])
			broken("a refusal that is not PV_EREMOTE with a message");
		pv_error_clear();
		return 0;
	}
	check_figs(&f);
	if (pv_load_line_encode(&f, &a) != PV_OK)
		broken("figures read cannot be written");
	if (!a.len || a.data[a.len - 1] != '\n' || memchr(a.data, '\n', a.len - 1))
		broken("a line written is not one line");
	if (pv_load_line_decode(a.data, a.len, &g) != PV_OK)
		broken("a line written does not read back");
	if (pv_load_line_encode(&g, &b) != PV_OK || a.len != b.len || memcmp(a.data, b.data, a.len))
		broken("writing what was read back changed the line");
	if (g.seq != f.seq || g.connected != f.connected || g.failed != f.failed)
		broken("the interval or its users changed on the way");
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		if (memcmp(g.kind[k].lat.n, f.kind[k].lat.n, sizeof(f.kind[k].lat.n)) ||
		    g.kind[k].started != f.kind[k].started ||
		    g.kind[k].overloaded != f.kind[k].overloaded)
			broken("a kind's counts changed on the way");

	/* the same interval from a second client, then a step of it */
	two = f;
	pv_load_figs_merge(&two, &g);
	check_figs(&two);
	pv_load_defaults(&c);
	pv_load_step_init(&st, two.connected);
	pv_load_step_add(&st, &two);
	pv_load_step_add(&st, &f);
	pv_load_summarize(&st, &c, &sum);
	if (!isfinite(sum.rate) || sum.rate < 0 || !isfinite(sum.all.overload) ||
	    sum.all.overload < 0)
		broken("a summary that is not finite");
	check_lat(&sum.all.lat);
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		check_lat(&sum.kind[k].lat);
	pv_buf_release(&a, 0);
	pv_buf_release(&b, 0);
	pv_error_clear();
	return 0;
}
