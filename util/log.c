/* util/log.c: forwards formatted log lines to the sink provision/ installed. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

static pv_log_sink sink;
static void *sink_ctx;

void pv_log_set_sink(pv_log_sink s, void *ctx)
{
	sink = s;
	sink_ctx = ctx;
}

void pv_log(enum pv_log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (!sink)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sink(level, line, sink_ctx);
}
