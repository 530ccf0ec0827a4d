/* tests/fuzz/fuzz_results.c: libFuzzer target for the readers of a run's folder
 * (results/results.h): what `provision report` and `compare` read may have been cut short,
 * edited, or hold what a host sent (the clients' lines of figures, their stderr). The first
 * byte of an input picks the reader, the rest is the file:
 *
 *     'm'  manifest.json          'l'  load.json (after a manifest of steps of 10 and 20 users)
 *     'w'  a watch CSV            'j'  a client's load.jsonl (into a step, the first line skipped)
 *
 * Invariants, each aborting when broken: a refusal is PV_ECONFIG (or PV_EIO) with a message;
 * what is read can be freed, a watch's rows hold their columns and its statistics lie within
 * its values; a manifest read names its driver; load.json read gives steps of the manifest's
 * users, an answer that is one of them and carried, a step over it that is not, no step
 * carried and client-bound, no more logons than users nor unserved than started, and a
 * refused one leaves no load figure behind; the histograms read hold what was counted. */
#include "results/results.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char base_manifest[] =
	"{\"manifest_version\": 1, \"run_id\": \"f\", \"driver\": {\"name\": \"builtin\"},"
	" \"steps\": [{\"step\": 1, \"users\": 10}, {\"step\": 2, \"users\": 20}]}";

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_results: %s\n", what);
	abort();
}

static void refused(int r)
{
	if ((r != PV_ECONFIG && r != PV_EIO) || !pv_errmsg()[0])
		broken("a refusal that is not PV_ECONFIG or PV_EIO with a message");
	pv_error_clear();
}

static void watch(const char *text, size_t len)
{
	struct pv_results_watch *w = NULL;
	int r = pv_results_parse_watch(text, len, &w);

	if (r != PV_OK) {
		refused(r);
		return;
	}
	for (size_t c = 0; c < w->ncols; c++) {
		double mean, p95, max, lo = INFINITY, hi = -INFINITY;

		for (size_t i = 0; i < w->n; i++) {
			double v = w->v[i * w->ncols + c];

			if (!isnan(v)) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
		}
		if (pv_results_watch_stat(w, w->cols[c], &mean, &p95, &max)) {
			if (!(p95 <= max && max <= hi && p95 >= lo))
				broken("a watch's p95 or maximum outside its values");
			if (isfinite(mean) && (mean < lo - fabs(lo) * 1e-9 - 1e-9 ||
					       mean > hi + fabs(hi) * 1e-9 + 1e-9))
				broken("a watch's mean outside its values");
		}
	}
	pv_results_watch_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_results_run *run;
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	int r;

	if (!size)
		return 0;
	run = pv_results_new();
	if (!run)
		return 0;
	switch (data[0]) {
	case 'm':
		r = pv_results_parse_manifest(run, text, len);
		if (r != PV_OK)
			refused(r);
		else if (!run->driver[0])
			broken("a manifest read without a driver");
		break;
	case 'l':
		if (pv_results_parse_manifest(run, base_manifest, sizeof(base_manifest) - 1) !=
		    PV_OK)
			broken("the base manifest refused");
		r = pv_results_parse_load(run, text, len);
		if (r != PV_OK) {
			refused(r);
			if (run->has_load || run->first_over >= 0)
				broken("load figures kept from a load.json refused");
			for (size_t i = 0; i < run->nsteps; i++)
				if (run->steps[i].has_load || run->steps[i].load.clients ||
				    run->steps[i].has_ops)
					broken("a step's load figures kept from a load.json "
					       "refused");
			break;
		}
		for (size_t i = 0; i < run->nsteps; i++)
			if (run->steps[i].users != 10 * (i + 1))
				broken("load.json changed a step's users");
		if (run->answer_step >= (long)run->nsteps ||
		    (run->answer_step >= 0 && !run->steps[run->answer_step].carried))
			broken("an answer that is not a step carried");
		if (run->first_over >= (long)run->nsteps ||
		    (run->first_over >= 0 && run->steps[run->first_over].carried))
			broken("a first step over the answer that is not a step not carried");
		if (run->answer_at_least &&
		    (run->first_over < 0 || !run->steps[run->first_over].load.client_bound))
			broken("an answer at least, without a client-bound step over it");
		for (size_t i = 0; i < run->nsteps; i++) {
			const struct pv_results_step *st = &run->steps[i];

			if (st->carried && st->load.client_bound)
				broken("a step carried and client-bound");
			if (st->load.logon.n > st->users ||
			    st->load.logon_n.failed > st->users - st->load.logon.n ||
			    st->load.all.n.unserved > st->load.all.n.started)
				broken("logons or unserved scenarios that cannot be");
		}
		break;
	case 'w':
		watch(text, len);
		break;
	case 'j':
		if (pv_results_parse_manifest(run, base_manifest, sizeof(base_manifest) - 1) !=
		    PV_OK)
			broken("the base manifest refused");
		r = pv_results_parse_jsonl(&run->steps[0], text, len, 1);
		if (r != PV_OK) {
			refused(r);
			if (run->steps[0].has_hist)
				broken("histograms kept from lines refused");
			break;
		}
		{
			uint64_t all = 0;

			for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
				all += pv_load_hist_count(&run->steps[0].load.kind[k].n.lat);
			if (all != pv_load_hist_count(&run->steps[0].load.all.n.lat))
				broken("the kinds' histograms do not add up to all's");
		}
		break;
	default:
		break;
	}
	pv_results_free(run);
	return 0;
}
