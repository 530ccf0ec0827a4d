/* tests/fuzz/fuzz_clientlines.c: libFuzzer target for the controller's reading of the
 * built-in driver's clients and the merging of their intervals (run/lines.h:
 * pv_run_client_line, pv_run_clients_merge). An input is the lines of up to four clients in
 * one step, as they arrive: each line starts with the client's digit ('0'..'3'), then the line
 * as its `provision load` printed it. A client whose line is refused is failed: its later
 * lines are not read, as run/builtin.c stops its stream. Then the step's intervals are merged,
 * after a warm-up of one interval. Invariants, each aborting when broken:
 *   - a client keeps at most max_iv intervals and reads at most its lines' cap, and the lines
 *     it keeps are those it was allowed, each with its '\n'; counts are added only from the
 *     intervals after the warm-up;
 *   - a refusal has a message; "ready" is taken once; nothing is taken after "done";
 *   - the merged step has no more intervals than the most any client sent, and its users
 *     never more than the clients' connected users together; each client's own figures are
 *     finite. */
#include "load/summary.h"
#include "run/lines.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLIENTS 4
#define MAX_IV	20

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_clientlines: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pv_run_client c[CLIENTS];
	const struct pv_run_client *all[CLIENTS];
	static struct pv_load_step ls;
	bool failed[CLIENTS] = {false}, done[CLIENTS] = {false};
	const char *p = (const char *)data, *end = p + size;
	size_t most = 0;
	unsigned long long users = 0;

	for (int i = 0; i < CLIENTS; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].max_iv = MAX_IV;
		c[i].skip = 1;
		all[i] = &c[i];
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		int k = len ? p[0] - '0' : -1, r;

		if (k >= 0 && k < CLIENTS && !failed[k]) {
			bool was_ready = c[k].ready;
			size_t had = c[k].nlines;
			/* the line on its own, so that ASan sees any read past it */
			char *line = malloc(len - 1 ? len - 1 : 1);

			if (!line)
				return 0;
			memcpy(line, p + 1, len - 1);
			pv_error_clear();
			r = pv_run_client_line(&c[k], line, len - 1);
			free(line);
			if (r < 0) {
				failed[k] = true;
				if (!pv_errmsg()[0])
					broken("a refusal without a message");
			} else if (r == 1 && was_ready) {
				broken("a second 'ready' taken");
			} else if (done[k]) {
				broken("a line taken after 'done'");
			}
			if (r == 3)
				done[k] = true;
			if (c[k].nlines > had + 1 || c[k].nlines > pv_run_client_lines_max(&c[k]))
				broken("more lines read than allowed");
		}
		p += len + (nl ? 1 : 0);
	}
	for (int i = 0; i < CLIENTS; i++) {
		size_t breaks = 0;

		if (c[i].niv > MAX_IV)
			broken("more intervals kept than the step has");
		for (size_t j = 0; j < c[i].lines.len; j++)
			breaks += c[i].lines.data[j] == '\n';
		if (breaks != c[i].nlines && !(failed[i] && breaks + 1 == c[i].nlines))
			broken("the lines kept are not the lines read");
		if (c[i].niv > most)
			most = c[i].niv;
		for (size_t s = 0; s < c[i].niv; s++)
			if (c[i].iv[s].seq && c[i].iv[s].seq != s + 1)
				broken("an interval kept at another number");
		{
			/* each interval counted once: the sums hold no more started scenarios than
			 * the intervals kept could have brought (each at most the line's cap) */
			size_t kept = 0;

			for (size_t s = 1; s < c[i].niv; s++)
				kept += c[i].iv[s].seq != 0;
			if (c[i].sum.kind[0].started && !kept)
				broken("counts added from no interval after the warm-up");
		}
		{
			struct pv_load_client cl;

			pv_run_client_figures(&c[i], "cli", &cl);
			if (!isfinite(cl.cpu) || !isfinite(cl.cpu_top) || !isfinite(cl.lag_p95) ||
			    cl.cpu < 0 || cl.lag_p95 > cl.lag_max)
				broken("a client's own figures not finite");
		}
	}
	pv_load_step_init(&ls, 0);
	pv_run_clients_merge(all, CLIENTS, &ls);
	if (ls.intervals > (most ? most - 1 : 0))
		broken("more intervals merged than any client sent after the warm-up");
	for (int i = 0; i < CLIENTS; i++)
		for (size_t s = 1; s < c[i].niv; s++)
			users += c[i].iv[s].connected;
	if (ls.intervals && ls.connected > users)
		broken("more users connected than the clients sent");
	for (int i = 0; i < CLIENTS; i++)
		pv_run_client_release(&c[i]);
	pv_error_clear();
	return 0;
}
