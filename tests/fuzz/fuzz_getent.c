/* tests/fuzz/fuzz_getent.c: libFuzzer target for the trees' reading of getent on the server
 * (phases/trees_internal.h, pv_phases_trees_getent_line): the "name:uid:gid" lines of
 * phases/scripts/getent.sh, whose uid and gid trees.pl then works as. An input is the whole
 * output, read a line at a time as map_users reads it. Invariants, each aborting when broken:
 *   - a line taken gives a non-empty name without ':' (the domain dropped) and a uid and a gid
 *     from PV_PHASES_TREES_ID_MIN to 4294967294: never root, a system account or group, nor
 *     (uid_t)-1;
 *   - a line refused says why (a message); a line skipped records nothing. */
#include "phases/trees_internal.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_getent: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char name[PV_PLAYBOOK_NAME_MAX];
		unsigned long uid = 0, gid = 0;
		int r;

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		pv_error_clear();
		r = pv_phases_trees_getent_line(line, "LAB", name, sizeof(name), &uid, &gid);
		if (r == 1) {
			if (!name[0] || strchr(name, ':'))
				broken("a name empty or holding ':'");
			if (uid < PV_PHASES_TREES_ID_MIN || gid < PV_PHASES_TREES_ID_MIN ||
			    uid > 4294967294UL || gid > 4294967294UL)
				broken("a uid or gid of root, a system account or no id taken");
		} else if (r == -1) {
			if (!pv_errmsg()[0])
				broken("a refusal without a message");
		} else if (r != 0 || pv_errmsg()[0]) {
			broken("a line skipped with a message, or an unknown answer");
		}
	}
	pv_error_clear();
	free(text);
	return 0;
}
