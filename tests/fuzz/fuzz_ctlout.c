/* tests/fuzz/fuzz_ctlout.c: libFuzzer target for what the remote controller's scripts answer
 * (phases/controller.h: pv_controller_parse_reset, pv_controller_parse_status), read from
 * the controller host's stdout. An input is the whole stdout, given to both. Invariants,
 * each aborting when broken:
 *   - a refusal is PV_EREMOTE with a message, and leaves the result as it was;
 *   - an answer read has a known state or kind; a move names an absolute backup folder that
 *     ends inside its field and holds no line break;
 *   - the same text read again gives the same answer. */
#include "phases/controller.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_ctlout: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pv_controller_result res, again;
	struct pv_controller_status st, st2;
	char *text = malloc(size + 1);
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&res, 0, sizeof(res));
	memset(&again, 0, sizeof(again));
	r = pv_controller_parse_reset(text, &res);
	if (r != PV_OK) {
		if (r != PV_EREMOTE || !pv_errmsg()[0])
			broken("a refusal that is not PV_EREMOTE with a message");
		if (res.state || res.backup[0] || res.entries)
			broken("a refusal that changed the result");
	} else {
		static const char *const states[] = {"moved",	     "would move", "created",
						     "would create", "empty",	   "absent"};
		bool known = false;

		for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
			known |= res.state && !strcmp(res.state, states[i]);
		if (!known)
			broken("an unknown state");
		if (!memchr(res.backup, '\0', sizeof(res.backup)) || strchr(res.backup, '\n'))
			broken("a backup path that does not end in its field, or holds a line "
			       "break");
		if (!!strstr(res.state, "move") != (res.backup[0] == '/'))
			broken("a move without an absolute backup, or a backup without a move");
		if (pv_controller_parse_reset(text, &again) != PV_OK || again.state != res.state ||
		    again.entries != res.entries || strcmp(again.backup, res.backup))
			broken("the same text read twice gives two answers");
	}
	memset(&st, 0, sizeof(st));
	memset(&st2, 0, sizeof(st2));
	r = pv_controller_parse_status(text, &st);
	if (r != PV_OK) {
		if (r != PV_EREMOTE || !pv_errmsg()[0] || st.kind || st.entries || st.backups)
			broken("a status refusal without a message, or that changed the status");
	} else if (!st.kind ||
		   (strcmp(st.kind, "folder") && strcmp(st.kind, "absent") &&
		    strcmp(st.kind, "other")) ||
		   pv_controller_parse_status(text, &st2) != PV_OK || st2.kind != st.kind ||
		   st2.entries != st.entries || st2.backups != st.backups) {
		broken("an unknown kind, or two readings of the same status");
	}
	pv_error_clear();
	free(text);
	return 0;
}
