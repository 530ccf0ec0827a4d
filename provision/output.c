/* provision/output.c: everything provision prints: the log sink (stderr, one line per
 * action), error lines, check reports, and JSON on stdout. */
#include "provision/provision.h"

#include "util/err.h"
#include "util/log.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int verbosity;

static void sink(enum pv_log_level level, const char *msg, void *unused)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };

	(void)unused;
	if ((level == PV_LOG_INFO && verbosity < 0) || (level == PV_LOG_DEBUG && verbosity < 1) ||
	    (level == PV_LOG_WARN && verbosity < 0))
		return;
	fprintf(stderr, "provision: %s%s\n", prefix[level], msg);
}

void pv_out_init(struct pv_ctx *ctx)
{
	verbosity = ctx->cli.verbosity;
	ctx->json = ctx->cli.opt[OPT_JSON] != NULL;
	/* A live meter only when stderr is a terminal and we are in the foreground (OpenSSH). */
	ctx->progress = !ctx->cli.opt[OPT_NO_PROGRESS] && verbosity >= 0 && isatty(STDERR_FILENO) &&
			tcgetpgrp(STDERR_FILENO) == getpgrp();
	pv_log_set_sink(sink, NULL);
}

int pv_out_fail(int code)
{
	fprintf(stderr, "provision: error: %s\n", pv_errmsg()[0] ? pv_errmsg() : pv_status_help(code));
	return code;
}

void pv_out_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void pv_report_print(const struct pv_ctx *ctx, const struct pv_report *r)
{
	const char *st = strcmp(r->status, "fail") == 0 ? "FAIL" : r->status;

	if (ctx->json)
		return;
	if (ctx->cli.verbosity < 0 && strcmp(r->status, "ok") == 0)
		return;
	printf("%-4s  %-9s %-14s %s\n", st, r->check, r->target, r->msg);
	fflush(stdout);
}

void pv_report_json(FILE *f, const struct pv_report *rs, size_t n, int exit_code)
{
	fprintf(f, "{\"ok\":%s,\"exit\":%d,\"outcome\":", exit_code == 0 ? "true" : "false",
		exit_code);
	pv_out_json_str(f, pv_status_name(exit_code));
	fputs(",\"checks\":[", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{\"check\":", i ? "," : "");
		pv_out_json_str(f, rs[i].check);
		fputs(",\"target\":", f);
		pv_out_json_str(f, rs[i].target);
		fputs(",\"status\":", f);
		pv_out_json_str(f, rs[i].status);
		if (strcmp(rs[i].status, "fail") == 0) {
			fprintf(f, ",\"code\":%d,\"outcome\":", rs[i].code);
			pv_out_json_str(f, pv_status_name(rs[i].code));
		}
		fputs(",\"message\":", f);
		pv_out_json_str(f, rs[i].msg);
		fputc('}', f);
	}
	fputs("]}\n", f);
}
