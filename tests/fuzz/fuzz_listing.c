/* tests/fuzz/fuzz_listing.c: libFuzzer target for the trees' listing of the server's share
 * folders (phases/trees_internal.h, pv_phases_trees_parse_listing): the NUL-ended "TYPE SIZE UID
 * ./PATH" records phases/scripts/list-trees.sh prints with find -printf. An input is the whole
 * output. Invariants, each aborting when broken:
 *   - only running out of memory refuses;
 *   - every entry's path lies inside the output, ends there, and no "./" is left before it;
 *     a folder has size 0 and is no "other"; the entries are sorted by path;
 *   - pv_phases_trees_find finds an entry with every path listed, and none with a path not listed.
 */
#include "phases/trees_internal.h"
#include "util/buf.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_listing: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_buf out = PV_BUF_INIT;
	struct have *hv = NULL, *h;
	size_t nh = 0;
	int r;

	if (pv_buf_add(&out, data, size) < 0)
		return 0;
	r = pv_phases_trees_parse_listing(&out, &hv, &nh);
	if (r != PV_OK) {
		if (r != PV_EIO)
			broken("a refusal that is not out of memory");
		goto out;
	}
	for (size_t i = 0; i < nh; i++) {
		const char *p = hv[i].path;

		if (p < out.data || p >= out.data + out.len + 1 ||
		    !memchr(p, '\0', (size_t)(out.data + out.len + 1 - p)))
			broken("a path outside the output");
		if (hv[i].dir && (hv[i].size || hv[i].other))
			broken("a folder with a size, or a folder that is 'other'");
		if (i && strcmp(hv[i - 1].path, p) > 0)
			broken("entries not sorted by path");
		if (!(h = pv_phases_trees_find(hv, nh, p)) || strcmp(h->path, p))
			broken("pv_phases_trees_find does not find a path listed");
	}
	if (pv_phases_trees_find(hv, nh, "\x01not-listed\x01") &&
	    !memmem(data, size, "\x01not-listed\x01", 12))
		broken("pv_phases_trees_find finds a path not listed");
out:
	free(hv);
	pv_buf_release(&out, 0);
	pv_error_clear();
	return 0;
}
