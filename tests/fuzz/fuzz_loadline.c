/* tests/fuzz/fuzz_loadline.c: libFuzzer target for the lines the controller reads from every
 * client (load/line.h): the figures line, the ready line, "done". An input is one line, as read
 * from a client's channel. Invariants, each aborting when broken:
 *   - a refusal is PV_EREMOTE with a message;
 *   - a line read is written again as one line ending in '\n', which reads back, and writing
 *     that again gives the same bytes (the maximum is printed with 12 digits: the second
 *     writing is the fixed point);
 *   - the figures read keep the counts' promises (line.h), merge with themselves as a second
 *     client would, and make a step whose summary is finite, with quantiles from 0 to the
 *     maximum, each within its bucket's bounds, and a client whose own figures are finite;
 *   - a ready line read writes and reads back the same. */
#include "load/line.h"
#include "load/summary.h"
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
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		const struct pv_load_counts *n = &f->kind[k];
		uint64_t sum = 0;

		for (unsigned b = 0; b < PV_LOAD_BUCKETS; b++)
			sum += n->lat.n[b];
		if (n->unserved > n->started || n->late > sum + n->errors || n->over_limit > sum ||
		    n->overloaded > sum + n->errors + n->unserved ||
		    n->overloaded < n->late + n->unserved ||
		    n->overloaded > n->late + n->over_limit + n->errors + n->unserved ||
		    sum != pv_load_hist_count(&n->lat) || !(n->lat.max >= 0))
			broken("figures read that break the counts' promises");
	}
	if (!(f->cpu >= 0) || !(f->cpu_top >= 0) || !(f->host_cpu == -1 || f->host_cpu >= 0) ||
	    f->threads < 1 || !(f->lag.max >= 0))
		broken("the driver's own figures read out of range");
}

static void check_bounds(const struct pv_load_lat *l)
{
	if (l->n && (!(l->median_lo <= l->median_hi) || !(l->p95_lo <= l->p95_hi) ||
		     l->median_hi > l->max || l->p95_hi > l->max))
		broken("a quantile's bucket bounds out of order or above the maximum");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* about 23 KiB each: not on the stack of every run */
	static struct pv_load_figs f, g, two;
	static struct pv_load_step st;
	static struct pv_load_summary sum;
	static struct pv_load_ready rd, rd2;
	static struct pv_load_client_acc acc;
	struct pv_load_client cl;
	struct pv_playbook_workload c;
	struct pv_buf a = PV_BUF_INIT, b = PV_BUF_INIT;
	int r;

	(void)pv_load_is_done((const char *)data, size);
	/* the other line the controller reads: "ready {...}" */
	r = pv_load_ready_decode((const char *)data, size, &rd);
	if (r != PV_OK && (r != PV_EREMOTE || !pv_errmsg()[0]))
		broken("a ready line refused without PV_EREMOTE and a message");
	if (r == PV_OK) {
		if (pv_load_ready_encode(&rd, &a) != PV_OK ||
		    pv_load_ready_decode(a.data, a.len, &rd2) != PV_OK)
			broken("a ready line read does not write and read back");
		if (rd2.connected != rd.connected || rd2.failed != rd.failed ||
		    strcmp(rd2.first, rd.first) || strcmp(rd2.spoke, rd.spoke) ||
		    rd2.logon.failed != rd.logon.failed ||
		    memcmp(rd2.logon.lat.n, rd.logon.lat.n, sizeof(rd.logon.lat.n)))
			broken("a ready line changed on the way");
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
	if (g.seq != f.seq || g.connected != f.connected || g.failed != f.failed ||
	    g.threads != f.threads || memcmp(g.lag.n, f.lag.n, sizeof(f.lag.n)))
		broken("the interval, its users or the driver's figures changed on the way");
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		if (memcmp(g.kind[k].lat.n, f.kind[k].lat.n, sizeof(f.kind[k].lat.n)) ||
		    g.kind[k].started != f.kind[k].started ||
		    g.kind[k].overloaded != f.kind[k].overloaded ||
		    g.kind[k].unserved != f.kind[k].unserved ||
		    memcmp(g.kind[k].ops, f.kind[k].ops, sizeof(f.kind[k].ops)))
			broken("a kind's counts changed on the way");

	/* the same interval from a second client, then a step of it */
	two = f;
	pv_load_figs_merge(&two, &g);
	check_figs(&two);
	pv_playbook_workload_defaults(&c);
	pv_load_step_init(&st, two.connected);
	pv_load_step_add(&st, &two);
	pv_load_step_add(&st, &f);
	pv_load_summarize(&st, &c, &sum);
	if (!isfinite(sum.rate) || sum.rate < 0 || !isfinite(sum.all.overload) ||
	    sum.all.overload < 0 || sum.all.overload > 100)
		broken("a summary that is not finite");
	check_lat(&sum.all.lat);
	check_bounds(&sum.all.lat);
	check_lat(&sum.lag);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		check_lat(&sum.kind[k].lat);
		check_bounds(&sum.kind[k].lat);
	}
	if (!(sum.rate_lo <= sum.rate) || !(sum.rate <= sum.rate_hi) || !isfinite(sum.rate_hi))
		broken("a throughput outside its interval");
	memset(&acc, 0, sizeof(acc));
	pv_load_client_add(&acc, &f);
	pv_load_client_add(&acc, &g);
	pv_load_client_of(&acc, "cli1", &cl);
	if (!isfinite(cl.cpu) || !isfinite(cl.cpu_top) || !isfinite(cl.lag_p95) ||
	    !(cl.lag_p95 <= cl.lag_max))
		broken("a client's own figures not finite");
	pv_buf_release(&a, 0);
	pv_buf_release(&b, 0);
	pv_error_clear();
	return 0;
}
