/* provision/output.c: everything provision prints. stderr: one line per action (the log
 * sink), live progress on a terminal (the progress sink), the error line. stdout: the result,
 * as text or as exactly one JSON document (docs/json.md, written with json/).
 *
 * Text may come from anywhere (a lab id, a remote host's stderr, a client's line): every byte
 * a terminal would act on is shown as \xNN (util/escape.h) in all text output, whatever the
 * source. On stderr the sinks here escape what they print. On stdout every renderer prints
 * with stdio, so stdout itself becomes a stream that escapes what goes through it (glibc's
 * fopencookie over fd 1), once, here: no renderer can forget. The JSON document, escaped by
 * jansson already, and this file's own terminal sequences go out raw. */
#include "provision/provision.h"

#include "util/err.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/progress.h"

#include <errno.h>
#include "json/json.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_VERSION 1

static int verbosity;
static bool live, quiet_progress;
static bool line_drawn; /* a live progress line is on the terminal */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *raw_out; /* stdout as it was: for the JSON document */

/* ---- escaping ---- */

/* stdout's escaping stream: the bytes of a UTF-8 sequence cut by the end of a write wait for
 * the next one. */
static struct {
	char held[4];
	size_t nheld;
} esc;

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static ssize_t esc_write(void *cookie, const char *buf, size_t len)
{
	struct pv_buf in = PV_BUF_INIT, out = PV_BUF_INIT;
	long took;
	int r = -1;

	(void)cookie;
	if (pv_buf_add(&in, esc.held, esc.nheld) < 0 || pv_buf_add(&in, buf, len) < 0)
		goto out;
	if ((took = pv_escape_text(&out, in.data, in.len, false)) < 0)
		goto out;
	esc.nheld = in.len - (size_t)took; /* at most 3: a sequence is 4 bytes at most */
	memcpy(esc.held, in.data + took, esc.nheld);
	r = write_all(STDOUT_FILENO, out.data, out.len);
out:
	pv_buf_release(&in, 0);
	pv_buf_release(&out, 0);
	if (r < 0 && !errno)
		errno = ENOMEM;
	return r < 0 ? -1 : (ssize_t)len;
}

/* What is held at the end: escaped, as it will never be completed. */
static void esc_drain(void)
{
	struct pv_buf out = PV_BUF_INIT;

	if (esc.nheld && pv_escape_text(&out, esc.held, esc.nheld, true) >= 0)
		write_all(STDOUT_FILENO, out.data, out.len);
	esc.nheld = 0;
	pv_buf_release(&out, 0);
}

/* msg with what a terminal would act on escaped, into b (reset first); b->data or "". */
static const char *escaped(struct pv_buf *b, const char *msg)
{
	pv_buf_reset(b);
	if (!msg || pv_escape_text(b, msg, strlen(msg), true) < 0 || !b->data)
		return "(out of memory)";
	return b->data;
}

static void clear_line(void)
{
	if (line_drawn) {
		fputs("\r\033[K", stderr);
		line_drawn = false;
	}
}

static void log_sink(enum pv_log_level level, const char *msg, void *unused)
{
	static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
	struct pv_buf b = PV_BUF_INIT;

	(void)unused;
	if ((level == PV_LOG_INFO && verbosity < 0) || (level == PV_LOG_DEBUG && verbosity < 1) ||
	    (level == PV_LOG_WARN && verbosity < 0))
		return;
	pthread_mutex_lock(&lock);
	clear_line();
	fprintf(stderr, "provision: %s%s\n", prefix[level], escaped(&b, msg));
	pthread_mutex_unlock(&lock);
	pv_buf_release(&b, 0);
}

/* A live line with count, rate and ETA on a terminal, redrawn at most 10 times a second;
 * otherwise a plain line every 10 seconds, so that logs show that work goes on. */
static void progress_sink(struct pv_progress *p, enum pv_progress_event ev, void *unused)
{
	double now = pv_now(), el = now - p->start;
	double rate = el > 0 ? (double)p->done / el : 0;
	unsigned pct = p->total ? (unsigned)(100.0 * (double)p->done / (double)p->total) : 100;
	long eta =
		rate > 0 && p->total >= p->done ? (long)((double)(p->total - p->done) / rate) : -1;
	char etas[32] = "--:--", mbs[48] = "";
	struct pv_buf w = PV_BUF_INIT, d = PV_BUF_INIT;
	const char *what = escaped(&w, p->what), *detail = escaped(&d, p->detail);

	(void)unused;
	if (quiet_progress)
		goto done;
	pthread_mutex_lock(&lock);
	if (ev == PV_PROGRESS_END) {
		if (p->drawn)
			clear_line();
		goto out;
	}
	if (now - p->last < (live ? (p->one_request ? 0.5 : 0.1) : 10.0))
		goto out;
	p->last = now;
	p->drawn = true;
	if (eta >= 0)
		snprintf(etas, sizeof(etas), "%ld:%02ld", eta / 60, eta % 60);
	if (p->bytes && el > 0)
		snprintf(mbs, sizeof(mbs), " %.1f MB/s", (double)p->bytes / 1e6 / el);
	if (p->detail[0]) {
		fprintf(stderr, live ? "\r\033[K%s: %s" : "provision: %s: %s\n", what, detail);
	} else if (p->one_request) {
		fprintf(stderr,
			live ? "\r\033[K%s: %lu %s in one request, %.0f s"
			     : "provision: %s: %lu %s in one request, %.0f s\n",
			what, p->total, p->unit, el);
	} else if (live) {
		fprintf(stderr, "\r\033[K%s: %lu/%lu %s %3u%% %.1f/s%s ETA %s", what, p->done,
			p->total, p->unit, pct, rate, mbs, etas);
	} else {
		fprintf(stderr, "provision: %s: %lu/%lu %s (%u%%, %.1f/s%s, ETA %s)\n", what,
			p->done, p->total, p->unit, pct, rate, mbs, etas);
	}
	line_drawn = live;
out:
	pthread_mutex_unlock(&lock);
done:
	pv_buf_release(&w, 0);
	pv_buf_release(&d, 0);
}

void pv_out_init(struct pv_ctx *ctx)
{
	verbosity = ctx->cli.verbosity;
	ctx->json = ctx->cli.opt[OPT_JSON] != NULL;
	/* A live meter only when stderr is a terminal and we are in the foreground (OpenSSH). */
	ctx->progress = !ctx->cli.opt[OPT_NO_PROGRESS] && verbosity >= 0 && isatty(STDERR_FILENO) &&
			tcgetpgrp(STDERR_FILENO) == getpgrp();
	live = ctx->progress;
	quiet_progress = verbosity < 0 || ctx->cli.opt[OPT_NO_PROGRESS] != NULL;
	pv_log_set_sink(log_sink, NULL);
	pv_progress_set_sink(progress_sink, NULL);
	if (!raw_out) {
		cookie_io_functions_t io = {.write = esc_write};
		FILE *f;

		fflush(stdout);
		raw_out = stdout;
		if ((f = fopencookie(NULL, "w", io))) {
			setvbuf(f, NULL, _IOLBF, 0);
			stdout = f;
		}
	}
}

void *pv_out_result(struct pv_out *out, const char *command, size_t size,
		    void (*text)(const struct pv_ctx *, const void *, int),
		    void (*json)(const struct pv_ctx *, const void *, int, struct pv_json *),
		    void (*release)(void *))
{
	void *r = calloc(1, size);

	if (!r) {
		pv_error(PV_EIO, "out of memory");
		return NULL;
	}
	*out = (struct pv_out){command, r, text, json, release};
	return r;
}

void pv_out_error(int code, const char *msg)
{
	struct pv_buf b = PV_BUF_INIT;

	pthread_mutex_lock(&lock);
	clear_line();
	fprintf(stderr, "provision: error: %s\n",
		msg && *msg ? escaped(&b, msg) : pv_status_help(code));
	pthread_mutex_unlock(&lock);
	pv_buf_release(&b, 0);
}

/* ---- JSON ---- */

void pv_json_plan(struct pv_json *o, const struct pv_env_plan *p)
{
	struct pv_json *a = pv_json_array();

	for (size_t i = 0; i < p->n; i++)
		pv_json_append_str(a, p->items[i]);
	pv_json_set(o, "plan", a);
}

void pv_text_plan(const char *cmd, const struct pv_env_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		printf("%s: would %s\n", cmd, p->items[i]);
}

/* The document: the envelope (version, command, ok, exit, outcome, message, dry_run), then
 * the result's own fields. */
static int write_json(struct pv_ctx *ctx, const struct pv_out *out, int code, const char *msg)
{
	struct pv_json *o = pv_json_object();
	int r = 0;

	if (!o)
		return -1;
	pv_json_int(o, "version", JSON_VERSION);
	pv_json_str(o, "command", out ? out->command : NULL);
	pv_json_bool(o, "ok", code == PV_OK);
	pv_json_int(o, "exit", code);
	pv_json_str(o, "outcome", pv_status_name(code));
	pv_json_str(o, "message",
		    code == PV_OK ? NULL : (msg && *msg ? msg : pv_status_help(code)));
	pv_json_bool(o, "dry_run", ctx->cli.opt[OPT_DRY_RUN] != NULL);
	if (out && out->result && out->json)
		out->json(ctx, out->result, code, o);
	r = pv_json_dump(o, raw_out ? raw_out : stdout);
	pv_json_free(o);
	return r;
}

int pv_out_report(struct pv_ctx *ctx, const struct pv_out *out, int code, const char *msg)
{
	int w = 0;

	if (ctx->json)
		w = write_json(ctx, out, code, msg);
	else if (out && out->result && out->text)
		out->text(ctx, out->result, code);
	if (code != PV_OK) /* stderr says it too, JSON or not */
		pv_out_error(code, msg);
	if (raw_out && raw_out != stdout && (fflush(raw_out) != 0 || ferror(raw_out)))
		w = -1;
	if (fflush(stdout) == 0)
		esc_drain();
	if (fflush(stdout) != 0 || ferror(stdout) || w < 0) {
		int e = errno;

		fprintf(stderr, "provision: error: cannot write the results to stdout: %s\n",
			strerror(e ? e : EIO));
		return code != PV_OK ? code : PV_EIO;
	}
	return code;
}
