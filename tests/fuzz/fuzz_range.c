/* tests/fuzz/fuzz_range.c: libFuzzer target for AD's ranged values as ldap/ops.c reads them
 * (ldap/encode.h: pv_ldap_range_answer, pv_ldap_range_take, pv_ldap_range_next), asking a DC for
 * the slices of one attribute ('member'). An input is the DC's answers, one after another, each a
 * few lines "ATTRIBUTE-NAME VALUES" ended by an empty line: the attribute names the DC answered
 * with and how many values each held. The reader is driven exactly as ops.c drives it.
 * Invariants, each aborting when broken:
 *   - every request after the first asks for a slice starting after the one before (the
 *     reader always moves on: a DC cannot keep it asking), and names it in the request;
 *   - the values taken never pass PV_LDAP_VALUES_MAX;
 *   - a refusal has a message; once done (or refused), the reader asks nothing more (the
 *     loop below stops asking only on pv_ldap_range_next's word). */
#include "ldap/caps.h"
#include "ldap/encode.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_range: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pv_ldap_range rg = {0, 0, false, false};
	char *text = malloc(size + 1), *line, *nl, want[128], asked[128] = "member";
	unsigned long last = 0;
	bool first = true;
	int r = 1;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	line = text;
	while (r == 1 && line) {
		/* one answer: its lines up to an empty one */
		pv_ldap_range_answer(&rg);
		for (; line; line = nl ? nl + 1 : NULL) {
			char *sp;
			unsigned long n;

			if ((nl = strchr(line, '\n')))
				*nl = '\0';
			if (!*line) {
				line = nl ? nl + 1 : NULL;
				break;
			}
			if (!(sp = strrchr(line, ' ')))
				continue;
			*sp = '\0';
			n = strtoul(sp + 1, NULL, 10) % (PV_LDAP_VALUES_MAX + 2);
			if ((r = pv_ldap_range_take(&rg, line, "member", n)) < 0)
				break;
			if (rg.values > PV_LDAP_VALUES_MAX)
				broken("more values taken than the cap");
		}
		if (r < 0 || (r = pv_ldap_range_next(&rg, "member", want, sizeof(want))) <= 0)
			break;
		/* a new request: it must start past the last one */
		if (!first && rg.next <= last)
			broken("a request that does not move on");
		snprintf(asked, sizeof(asked), "member;range=%lu-*", rg.next);
		if (strcmp(asked, want))
			broken("the request does not name the slice asked for");
		last = rg.next;
		first = false;
	}
	if (r < 0 && !pv_errmsg()[0])
		broken("a refusal without a message");
	pv_error_clear();
	free(text);
	return 0;
}
