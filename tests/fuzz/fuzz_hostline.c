/* tests/fuzz/fuzz_hostline.c: libFuzzer target for the command driver's wrapper lines as the
 * controller reads them (run/lines.h, pv_run_wrap_line): "pv-started", "pv-alive", "pv-exit
 * RC", "pv-stopped RC", "pv-error TEXT" from run/scripts/run-client.pl on a client. An input
 * is the client's stdout, read a line at a time. Invariants, each aborting when broken:
 *   - a line is taken as one of those only when it starts with its word (and "pv-alive" is
 *     the whole line);
 *   - a status is -1..65535 and is exactly the line's number;
 *   - an error's text lies inside the line, after "pv-error ", and is at most
 *     PV_RUN_WRAP_TEXT_MAX bytes. */
#include "run/lines.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void broken(const char *what, const char *line, size_t len)
{
	fprintf(stderr, "fuzz_hostline: broken promise: %s; line: '%.*s'\n", what, (int)len, line);
	abort();
}

static void one(const char *line, size_t len)
{
	struct pv_run_wrap_line w;
	char num[16];

	pv_run_wrap_line(line, len, &w);
	switch (w.kind) {
	case PV_RUN_WRAP_ALIVE:
		if (len != 8 || memcmp(line, "pv-alive", 8))
			broken("alive, but not 'pv-alive'", line, len);
		break;
	case PV_RUN_WRAP_STARTED:
		if (len < 11 || memcmp(line, "pv-started ", 11))
			broken("started, but not 'pv-started '", line, len);
		break;
	case PV_RUN_WRAP_EXIT:
	case PV_RUN_WRAP_STOPPED: {
		size_t wl = w.kind == PV_RUN_WRAP_EXIT ? 8 : 11;

		if (len < wl ||
		    memcmp(line, w.kind == PV_RUN_WRAP_EXIT ? "pv-exit " : "pv-stopped ", wl))
			broken("a status line without its word", line, len);
		if (w.status < -1 || w.status > 65535)
			broken("a status out of range", line, len);
		snprintf(num, sizeof(num), "%d", w.status);
		if (len - wl != strlen(num) || memcmp(line + wl, num, len - wl))
			broken("a status that is not the line's number", line, len);
		break;
	}
	case PV_RUN_WRAP_ERROR:
		if (len < 9 || memcmp(line, "pv-error ", 9) || w.text != line + 9 ||
		    w.textlen > PV_RUN_WRAP_TEXT_MAX || w.textlen > len - 9)
			broken("an error's text outside the line or past its cap", line, len);
		break;
	case PV_RUN_WRAP_OTHER:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* the line on its own, so that ASan sees any read past it */
		char *line = malloc(len ? len : 1);

		if (!line)
			return 0;
		memcpy(line, p, len);
		one(line, len);
		free(line);
		p += len + (nl ? 1 : 0);
	}
	return 0;
}
