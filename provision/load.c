/* provision/load.c: `provision load`, the built-in load driver's part on one client. `run`
 * starts it over SSH (docs/load.md); by hand it reads the same lines from stdin:
 *
 *   <the users' password>
 *   config rate=331 ...          (load/proto.h)
 *   fileset NAME PIECE ...       (optional: the users' trees' description)
 *   user cli1-u1 srvu1 fsroot2 1
 *   start
 *   go                           (once "ready" is printed: the step's load starts)
 *   user ...                     (once "done" is printed: the next step, if any)
 *   start
 *   go
 *
 * stdout: per step "ready {...}" once its users have logged on or failed, one line of figures
 * per interval (load/line.h), and "done". The end of stdin stops it: between steps it is the
 * end, in a step the figures so far end it. */
#include "provision/provision.h"

#include "load/line.h"
#include "load/engine.h"
#include "load/proto.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct input {
	char buf[PV_LOAD_PROTO_LINE_MAX];
	size_t len;
	bool eof, go, stop;
	const volatile sig_atomic_t *signal;
};

/* Read what stdin has (wait at most ms): complete lines go to line(). */
static int pump(struct input *in, int ms, int (*line)(struct input *, const char *, size_t),
		bool once)
{
	struct pollfd p = {STDIN_FILENO, POLLIN, 0};

	while (!in->eof) {
		char *nl;
		ssize_t n;

		while ((nl = memchr(in->buf, '\n', in->len)) != NULL) {
			size_t l = (size_t)(nl - in->buf);
			int r = line(in, in->buf, l);

			memmove(in->buf, nl + 1, in->len - l - 1);
			in->len -= l + 1;
			if (r != PV_OK)
				return r;
			if (once)
				return PV_OK;
		}
		if (poll(&p, 1, ms) <= 0)
			return PV_OK;
		if (in->len == sizeof(in->buf))
			return pv_error(PV_EUSAGE, "a line of more than %zu bytes on stdin",
					sizeof(in->buf));
		n = read(STDIN_FILENO, in->buf + in->len, sizeof(in->buf) - in->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			in->eof = true;
			break;
		}
		in->len += (size_t)n;
		ms = 0;
	}
	return PV_OK;
}

/* In a step: "go" starts the load, "stop" (or the end of stdin) ends it (load/proto.h). */
static int control(struct input *in, const char *l, size_t len)
{
	enum pv_load_proto_ctl c;
	int rc = pv_load_proto_control(l, len, &c);

	if (rc == PV_OK)
		*(c == PV_LOAD_PROTO_GO ? &in->go : &in->stop) = true;
	return rc;
}

struct run {
	struct input in; /* first: the line callbacks get it */
	struct pv_load_proto proto;
	struct pv_buf line;
	int err;
};

static bool should_stop(void *arg)
{
	struct run *r = arg;

	if (r->err == PV_OK)
		r->err = pump(&r->in, 0, control, false);
	return r->in.eof || r->in.stop || r->err != PV_OK || (r->in.signal && *r->in.signal);
}

static bool go(void *arg)
{
	struct run *r = arg;

	should_stop(arg);
	return r->in.go;
}

static int put(const char *s, size_t len)
{
	if (fwrite(s, 1, len, stdout) != len || fflush(stdout) != 0)
		return pv_error(PV_EIO, "cannot write the figures to stdout: %s", strerror(errno));
	return PV_OK;
}

static int ready(void *arg, const struct pv_load_ready *rd)
{
	struct run *r = arg;
	int rc;

	pv_buf_reset(&r->line);
	rc = pv_load_ready_encode(rd, &r->line);
	return rc == PV_OK ? put(r->line.data, r->line.len) : rc;
}

static int emit(void *arg, const struct pv_load_figs *f)
{
	struct run *r = arg;
	int rc;

	pv_buf_reset(&r->line);
	if ((rc = pv_load_line_encode(f, &r->line)) != PV_OK)
		return rc;
	return put(r->line.data, r->line.len);
}

static int done(void *arg)
{
	(void)arg;
	return put("done\n", 5);
}

static int setup(struct input *in, const char *l, size_t len)
{
	struct run *r = (struct run *)in;
	int rc = pv_load_proto_parse(&r->proto, l, len);

	in->stop = in->stop || r->proto.stop;
	return rc;
}

static int open_files(size_t n);

/* The next step: setup lines until a "start" (its users in *n), or the end of stdin (*n 0). */
static int next(void *arg, const struct pv_load_user **users, size_t *total, size_t *n)
{
	struct run *r = arg;
	int rc = r->err;

	r->in.go = false;
	*n = 0;
	while (rc == PV_OK && !r->proto.step && !r->in.eof && !r->in.stop) {
		if (r->in.signal && *r->in.signal)
			return pv_error(PV_ESTOPPED, "stopped between steps");
		rc = pump(&r->in, 200, setup, true);
	}
	if (rc != PV_OK)
		return rc;
	if (!r->proto.step && !r->proto.steps)
		return pv_error(PV_EUSAGE,
				"stdin ended before 'start' (see 'provision help load')");
	if (r->proto.step && (rc = open_files(r->proto.n)) != PV_OK)
		return rc;
	*users = r->proto.users;
	*total = r->proto.n;
	*n = r->proto.step;
	r->proto.step = 0;
	return PV_OK;
}

int pv_read_password_line(const char *who, struct pv_secret **out)
{
	struct pv_buf b = PV_BUF_INIT;
	int r = PV_OK;

	pv_buf_secret(&b);
	for (;;) {
		char c;
		ssize_t n = read(STDIN_FILENO, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = pv_error(PV_EUSAGE,
				     "provision %s reads the users' password from the "
				     "first line of stdin, then its setup lines: stdin "
				     "ended first",
				     who);
			break;
		}
		if (c == '\n')
			break;
		if (pv_buf_add(&b, &c, 1) < 0) {
			r = pv_error(PV_EIO, "out of memory");
			break;
		}
	}
	if (r == PV_OK && !(*out = pv_secret_new(b.data ? b.data : "", b.len)))
		r = pv_error(PV_EIO, "out of memory");
	pv_buf_release(&b, 1);
	return r;
}

/* Every user holds a socket: a process started with the usual soft limit of 1024 open files
 * (an SSH session's) raises it, up to the hard limit, to what n users need. */
#define FILES_SPARE 64 /* stdin/stdout/stderr, epoll, Kerberos' and the resolver's files */

static int open_files(size_t n)
{
	struct rlimit l;
	rlim_t need = (rlim_t)n + FILES_SPARE;

	if (getrlimit(RLIMIT_NOFILE, &l) != 0)
		return pv_error(PV_EIO, "cannot read the open-files limit: %s", strerror(errno));
	if (l.rlim_cur == RLIM_INFINITY || l.rlim_cur >= need)
		return PV_OK;
	if (l.rlim_max != RLIM_INFINITY && l.rlim_max < need)
		return pv_error(
			PV_EIO,
			"%zu users need %llu open files and this host allows %llu (the hard "
			"limit, ulimit -Hn): raise nofile for this user (limits.conf, or "
			"LimitNOFILE= of sshd's unit) or give this client fewer users",
			n, (unsigned long long)need, (unsigned long long)l.rlim_max);
	l.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &l) != 0)
		return pv_error(PV_EIO,
				"cannot raise the open-files limit to %llu for %zu users: %s",
				(unsigned long long)need, n, strerror(errno));
	return PV_OK;
}

int pv_cmd_load(struct pv_ctx *ctx, struct pv_out *out)
{
	const char *client = ctx->cli.opt[OPT_CLIENT], *wg = ctx->cli.opt[OPT_WORKGROUP];
	unsigned long duration = 0, timeout = 10, parallel = 64;
	struct pv_secret *pw = NULL;
	struct run r;
	uint64_t ops = 0;
	int rc;

	(void)out;
	memset(&r, 0, sizeof(r));
	r.in.signal = ctx->env.stop;
	if (ctx->cli.opt[OPT_OPS] && strcmp(ctx->cli.opt[OPT_OPS], "open-close") != 0 &&
	    strcmp(ctx->cli.opt[OPT_OPS], "open-write-close") != 0)
		return pv_error(PV_EUSAGE, "--ops takes open-write-close or open-close, not '%s'",
				ctx->cli.opt[OPT_OPS]);
	if (!client || !wg || !ctx->cli.opt[OPT_DURATION])
		return pv_error(PV_EUSAGE, "provision load needs --client NAME, --workgroup NAME "
					   "and --duration SECONDS (see 'provision help load')");
	if ((rc = pv_cli_count("--duration", ctx->cli.opt[OPT_DURATION], 604800, &duration)) ||
	    (ctx->cli.opt[OPT_TIMEOUT] &&
	     (rc = pv_cli_count("--timeout", ctx->cli.opt[OPT_TIMEOUT], 3600, &timeout))) ||
	    (ctx->cli.opt[OPT_PARALLEL] &&
	     (rc = pv_cli_count("--parallel", ctx->cli.opt[OPT_PARALLEL], 10000, &parallel))))
		return rc;
	if ((rc = pv_read_password_line("load", &pw)) != PV_OK)
		goto out;
	/* the first step's lines, so that a host with too few open files says so at once */
	while (!r.proto.step && rc == PV_OK && !r.in.eof)
		rc = pump(&r.in, -1, setup, true);
	if (rc == PV_OK && r.proto.step)
		rc = open_files(r.proto.n);
	if (rc == PV_OK) {
		struct pv_load_opts o;

		memset(&o, 0, sizeof(o));
		o.cfg = &r.proto.cfg;
		o.client = client;
		o.workgroup = wg;
		o.realm = r.proto.realm;
		o.kdc = r.proto.kdc[0] ? r.proto.kdc : NULL;
		o.dns_domain = r.proto.dns_domain;
		o.password = pw;
		o.fileset = r.proto.fileset;
		o.fileset_name = r.proto.fileset_name;
		o.fileset_len = r.proto.fileset_len;
		o.duration = (double)duration;
		o.timeout_ms = (int)timeout * 1000;
		o.parallel = (unsigned)parallel;
		o.arg = &r;
		o.next = next;
		o.stop = should_stop;
		o.go = go;
		o.ready = ready;
		o.emit = emit;
		o.done = done;
		if (ctx->cli.opt[OPT_OPS])
			o.ops_loop = strcmp(ctx->cli.opt[OPT_OPS], "open-close") == 0
					     ? PV_LOAD_OPS_OPEN
					     : PV_LOAD_OPS_WRITE;
		o.ops = &ops;
		rc = pv_load(&o);
		if (rc == PV_OK && r.err != PV_OK)
			rc = r.err;
		if (rc == PV_OK && o.ops_loop) {
			pv_buf_reset(&r.line);
			pv_buf_addf(&r.line, "ops {\"ops\":%llu,\"secs\":%.3f,\"users\":%zu}\n",
				    (unsigned long long)ops, (double)duration, r.proto.n);
			rc = put(r.line.data, r.line.len);
		}
	}
out:
	pv_secret_free(pw);
	pv_load_proto_release(&r.proto);
	pv_buf_release(&r.line, 0);
	return rc;
}
