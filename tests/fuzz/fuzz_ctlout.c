/* tests/fuzz/fuzz_ctlout.c: libFuzzer target for what the remote controller's scripts and the
 * built-in driver's install script answer (phases/controller.h: pv_phases_controller_parse_reset,
 * pv_phases_controller_parse_status; run/lines.h: pv_run_install_answer), read from a host's
 * stdout. An input is the whole stdout, given to each. Invariants, each aborting when broken:
 *   - the install answer is "present", "absent" or "installed", exactly, or refused with a
 *     message;
 *   - a refusal is PV_EREMOTE with a message, and leaves the result as it was;
 *   - an answer read has a known state or kind; a move names an absolute backup folder that
 *     ends inside its field and holds no line break;
 *   - the same text read again gives the same answer. */
#include "phases/controller.h"
#include "run/lines.h"
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
	static struct pv_phases_controller_result res, again;
	struct pv_phases_controller_status st, st2;
	char *text = malloc(size + 1);
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&res, 0, sizeof(res));
	memset(&again, 0, sizeof(again));
	r = pv_phases_controller_parse_reset(text, &res);
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
		if (pv_phases_controller_parse_reset(text, &again) != PV_OK ||
		    again.state != res.state || again.entries != res.entries ||
		    strcmp(again.backup, res.backup))
			broken("the same text read twice gives two answers");
	}
	memset(&st, 0, sizeof(st));
	memset(&st2, 0, sizeof(st2));
	r = pv_phases_controller_parse_status(text, &st);
	if (r != PV_OK) {
		if (r != PV_EREMOTE || !pv_errmsg()[0] || st.kind || st.entries || st.backups)
			broken("a status refusal without a message, or that changed the status");
	} else if (!st.kind ||
		   (strcmp(st.kind, "folder") && strcmp(st.kind, "absent") &&
		    strcmp(st.kind, "other")) ||
		   pv_phases_controller_parse_status(text, &st2) != PV_OK || st2.kind != st.kind ||
		   st2.entries != st.entries || st2.backups != st.backups) {
		broken("an unknown kind, or two readings of the same status");
	}
	for (int fin = 0; fin < 2; fin++) {
		size_t n = size && data[size - 1] == '\n' ? size - 1 : size;
		int a;

		pv_error_clear();
		a = pv_run_install_answer((const char *)data, size, fin);
		if (a < 0 ? !pv_errmsg()[0]
			  : (a == 1 ? (n != (fin ? 9u : 7u) ||
				       memcmp(data, fin ? "installed" : "present", n))
				    : (fin || n != 6 || memcmp(data, "absent", 6))))
			broken("an install answer taken that is not one the script gives");
	}
	pv_error_clear();
	free(text);
	return 0;
}
