/* remote/exec.c: commands on a host over an SSH session (remote/ssh.c): run with input on
 * stdin and output kept within remote/caps.h's caps (exec, exec_max), cut short on request
 * (stoppable), or followed line by line while they run (stream); and the one way to run a
 * script, pv_remote_sh, whose failure says the line of stderr that says why. */
#include "remote/remote.h"

#include "remote/caps.h"
#include "remote/internal.h"
#include "remote/quote.h"

#include "util/err.h"
#include "util/log.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#define CMD_WORD_MAX 64 /* how much of a command's first word goes into messages */

/* The first word of a command line, for messages (the rest may be long). */
static const char *cmd_word(const char *cmd, char *buf, size_t len)
{
	size_t n;

	cmd += strspn(cmd, " \t\n");
	n = strcspn(cmd, " \t\n;|&");
	if (n >= len)
		n = len - 1;
	memcpy(buf, cmd, n);
	buf[n] = '\0';
	return buf;
}

/* exec ------------------------------------------------------------------------------------ */

#define STREAM_SLICE_MS 200   /* how often a stream looks at its stop condition */
#define STREAM_GRACE_MS 10000 /* a stopped command's time to end after its input ends */

/* Output is taken through channel callbacks rather than ssh_channel_read(): the callback sees
 * both streams as packets arrive, even while ssh_channel_write() waits for window space, so a
 * command writing a lot to stdout and stderr while we feed its stdin cannot deadlock, and
 * libssh re-opens our receive window as soon as the data is consumed. */
struct run {
	struct pv_buf *out, *err;
	size_t out_max;	    /* stdout kept at most (remote/caps.h) */
	size_t out_base;    /* out->len before this command */
	size_t err_base;    /* err->len before this command */
	size_t err_dropped; /* stderr past PV_REMOTE_ERR_MAX */
	bool too_much;	    /* stdout passed out_max: the command is ended */
	bool lines;	    /* a stream: stdout is lines, each at most PV_REMOTE_LINE_MAX */
	size_t since_nl;    /* a stream: bytes since the last line break */
	bool oom;
	bool got_status, got_signal;
	int status;
	char signame[32];
};

static int on_data(ssh_session s, ssh_channel ch, void *data, uint32_t len, int is_stderr, void *ud)
{
	struct run *x = ud;
	struct pv_buf *b = is_stderr ? x->err : x->out;
	size_t keep = len;

	(void)s;
	(void)ch;
	if (b == NULL || x->oom)
		return (int)len;
	/* a host cannot fill our memory: stdout past its cap ends the command (exec_cmd sees
	 * too_much), stderr past its cap is dropped and counted */
	if (is_stderr && b->len - x->err_base + len > PV_REMOTE_ERR_MAX) {
		keep = b->len - x->err_base < PV_REMOTE_ERR_MAX
			       ? PV_REMOTE_ERR_MAX - (b->len - x->err_base)
			       : 0;
		x->err_dropped += len - keep;
	} else if (!is_stderr && x->out_max && b->len - x->out_base + len > x->out_max) {
		x->too_much = true;
		return (int)len;
	} else if (!is_stderr && x->lines) {
		const char *d = data, *nl = memrchr(d, '\n', len);

		x->since_nl = nl ? (size_t)(d + len - nl - 1) : x->since_nl + len;
		if (x->since_nl > PV_REMOTE_LINE_MAX) {
			x->too_much = true;
			return (int)len;
		}
	}
	if (keep && pv_buf_add(b, data, keep) < 0)
		x->oom = true;
	return (int)len; /* always consumed, so the window keeps opening */
}

/* The note that stderr was cut, at its end. */
static void err_note(struct run *x)
{
	if (x->err && x->err_dropped)
		pv_buf_addf(x->err, "\n[%zu more bytes of stderr dropped: past %u KiB]\n",
			    x->err_dropped, PV_REMOTE_ERR_MAX >> 10);
}

static void on_status(ssh_session s, ssh_channel ch, int status, void *ud)
{
	struct run *x = ud;

	(void)s;
	(void)ch;
	x->got_status = true;
	x->status = status;
}

static void on_signal(ssh_session s, ssh_channel ch, const char *sig, int core, const char *msg,
		      const char *lang, void *ud)
{
	struct run *x = ud;

	(void)s;
	(void)ch;
	(void)core;
	(void)msg;
	(void)lang;
	x->got_signal = true;
	snprintf(x->signame, sizeof(x->signame), "%s", sig ? sig : "?");
}

/* A channel call failed: a dead session means the host went away. */
static int channel_failed(struct pv_remote *rem, const char *what, const char *word)
{
	char w[600];

	if (!ssh_is_connected(rem->session))
		return remote_lost(rem, what, word);
	remote_who(rem, w, sizeof(w));
	return pv_error(PV_EREMOTE, "%s '%s' on %s failed: %s", what, word, w,
			ssh_get_error(rem->session));
}

/* Opens a session channel on rem whose data, exit status and exit signal go to x through cb
 * (the caller's: libssh keeps the pointer while the channel lives) and starts cmd on it; *chp
 * is the channel, to free, even on failure. */
static int channel_start(struct pv_remote *rem, const char *cmd, const char *word,
			 const char *doing, struct ssh_channel_callbacks_struct *cb, struct run *x,
			 ssh_channel *chp)
{
	memset(cb, 0, sizeof(*cb));
	cb->userdata = x;
	cb->channel_data_function = on_data;
	cb->channel_exit_status_function = on_status;
	cb->channel_exit_signal_function = on_signal;
	ssh_callbacks_init(cb);
	if ((*chp = ssh_channel_new(rem->session)) == NULL ||
	    ssh_channel_open_session(*chp) != SSH_OK)
		return channel_failed(rem, "opening a channel for", word);
	if (ssh_set_channel_callbacks(*chp, cb) != SSH_OK)
		return pv_error(PV_EIO, "out of memory");
	pv_log(PV_LOG_DEBUG, "%s: %s %s", rem->name, doing, word);
	if (ssh_channel_request_exec(*chp, cmd) != SSH_OK)
		return channel_failed(rem, "starting", word);
	return PV_OK;
}

/* pv_remote_exec, and pv_remote_exec_stoppable when stop is non-NULL. */
/* How a command's exchange ended short of its exit. */
enum cut { CUT_NONE, CUT_FAILED, CUT_TOO_MUCH, CUT_TIMEOUT, CUT_STOPPED };

/* in onto the command's stdin, then its end; CUT_FAILED with *r recorded. */
static enum cut send_input(struct pv_remote *rem, ssh_channel ch, const struct run *x,
			   const unsigned char *in, size_t inlen, long long deadline,
			   const char *word, int *r)
{
	for (size_t done = 0; in != NULL && done < inlen;) {
		size_t chunk = inlen - done < IO_CHUNK ? inlen - done : IO_CHUNK;
		int n = ssh_channel_write(ch, in + done, (uint32_t)chunk);

		if (n == SSH_ERROR) {
			/* a command that exits without reading its input is its own business */
			if (ssh_is_connected(rem->session) &&
			    (!ssh_channel_is_open(ch) || ssh_channel_is_eof(ch)))
				break;
			*r = channel_failed(rem, "sending input to", word);
			return CUT_FAILED;
		}
		done += (size_t)n;
		if (x->too_much)
			return CUT_TOO_MUCH;
		if (remote_now_ms() >= deadline)
			return CUT_TIMEOUT;
	}
	if (ssh_channel_is_open(ch) && ssh_channel_send_eof(ch) != SSH_OK &&
	    !ssh_is_connected(rem->session)) {
		*r = channel_failed(rem, "closing the input of", word);
		return CUT_FAILED;
	}
	return CUT_NONE;
}

/* Until the end of the output: the callbacks take the data, this only waits (asking stop, when
 * given, at least every STREAM_SLICE_MS). */
static enum cut wait_output(struct pv_remote *rem, ssh_channel ch, const struct run *x,
			    long long deadline, bool (*stop)(void *arg), void *arg,
			    const char *word, int *r)
{
	while (!ssh_channel_is_eof(ch) && !ssh_channel_is_closed(ch)) {
		long long left = deadline - remote_now_ms();

		if (left <= 0)
			return CUT_TIMEOUT;
		if (stop != NULL) {
			if (stop(arg))
				return CUT_STOPPED;
			if (left > STREAM_SLICE_MS)
				left = STREAM_SLICE_MS;
		}
		if (ssh_channel_poll_timeout(ch, left > INT32_MAX ? INT32_MAX : (int)left, 0) ==
		    SSH_ERROR) {
			*r = channel_failed(rem, "reading the output of", word);
			return CUT_FAILED;
		}
		if (x->too_much)
			return CUT_TOO_MUCH;
	}
	return x->too_much ? CUT_TOO_MUCH : CUT_NONE; /* the last data came with the end */
}

/* The output ended: the exit status (or signal) into *status. */
static int exited(struct pv_remote *rem, ssh_channel ch, struct run *x, const char *word,
		  const char *w, int *status)
{
	/* exit-status usually precedes or follows EOF closely; this waits at most ssh.timeout */
	if (!x->got_status && !x->got_signal && !ssh_channel_is_closed(ch))
		ssh_channel_get_exit_status(ch);
	if (!x->got_status && !x->got_signal && !ssh_is_connected(rem->session))
		return channel_failed(rem, "waiting for the exit status of", word);
	if (x->oom)
		return pv_error(PV_EIO, "out of memory storing the output of '%s' on %s", word, w);
	if (x->got_signal)
		pv_log(PV_LOG_DEBUG, "%s: %s killed by SIG%s", rem->name, word, x->signame);
	else if (!x->got_status)
		pv_log(PV_LOG_DEBUG, "%s: %s ended without an exit status", rem->name, word);
	if (status != NULL)
		*status = x->got_status ? x->status : -1;
	err_note(x);
	return PV_OK;
}

/* A command cut short: asked to end, and why recorded. OpenSSH >= 7.9 honours "signal"
 * requests, except for root logins, where sshd refuses them ("session signalling requires
 * privilege separation"); closing the channel then leaves the command to die of SIGPIPE when
 * it next writes. */
static int cut_short(ssh_channel ch, enum cut how, const struct run *x, struct pv_buf *out,
		     const char *word, const char *w, int timeout)
{
	ssh_channel_request_send_signal(ch, "TERM");
	switch (how) {
	case CUT_TOO_MUCH:
		/* what came is dropped: the caller gets its buffer as it was */
		if (out) {
			out->len = x->out_base;
			if (out->data)
				out->data[out->len] = '\0';
		}
		return pv_error(PV_EREMOTE, "'%s' on %s printed more than %zu MiB: refused", word,
				w, x->out_max >> 20);
	case CUT_STOPPED:
		return pv_error(PV_ESTOPPED, "'%s' on %s was stopped before it finished", word, w);
	default:
		return pv_error(PV_EREMOTE, "'%s' on %s did not finish within %d s", word, w,
				timeout);
	}
}

static int exec_cmd(struct pv_remote *rem, const char *cmd, const void *in, size_t inlen,
		    struct pv_buf *out, size_t out_max, struct pv_buf *err, int *status,
		    int timeout, bool (*stop)(void *arg), void *arg)
{
	ssh_channel ch = NULL;
	struct ssh_channel_callbacks_struct cb;
	struct run x;
	char word[CMD_WORD_MAX], w[600];
	long long deadline;
	enum cut how;
	int r = PV_EBUG;

	memset(&x, 0, sizeof(x));
	x.out = out;
	x.err = err;
	x.out_max = out_max;
	x.out_base = out ? out->len : 0;
	x.err_base = err ? err->len : 0;
	cmd_word(cmd, word, sizeof(word));
	remote_who(rem, w, sizeof(w));
	if (timeout <= 0)
		timeout = rem->timeout * 6;
	deadline = remote_now_ms() + (long long)timeout * 1000;
	if ((r = channel_start(rem, cmd, word, "running", &cb, &x, &ch)) != PV_OK)
		goto out;
	how = send_input(rem, ch, &x, in, inlen, deadline, word, &r);
	if (how == CUT_NONE)
		how = wait_output(rem, ch, &x, deadline, stop, arg, word, &r);
	if (how == CUT_NONE)
		r = exited(rem, ch, &x, word, w, status);
	else if (how != CUT_FAILED)
		r = cut_short(ch, how, &x, out, word, w, timeout);
out:
	if (ch != NULL) {
		if (ssh_channel_is_open(ch))
			ssh_channel_close(ch);
		ssh_remove_channel_callbacks(ch, &cb);
		ssh_channel_free(ch);
	}
	return r;
}

int pv_remote_exec(struct pv_remote *rem, const char *cmd, const void *in, size_t inlen,
		   struct pv_buf *out, struct pv_buf *err, int *status, int timeout)
{
	return exec_cmd(rem, cmd, in, inlen, out, PV_REMOTE_OUT_MAX, err, status, timeout, NULL,
			NULL);
}

int pv_remote_exec_max(struct pv_remote *rem, const char *cmd, struct pv_buf *out, size_t out_max,
		       struct pv_buf *err, int *status, int timeout)
{
	return exec_cmd(rem, cmd, NULL, 0, out, out_max, err, status, timeout, NULL, NULL);
}

int pv_remote_exec_stoppable(struct pv_remote *rem, const char *cmd, const void *in, size_t inlen,
			     struct pv_buf *out, struct pv_buf *err, int *status, int timeout,
			     bool (*stop)(void *arg), void *arg)
{
	return exec_cmd(rem, cmd, in, inlen, out, PV_REMOTE_OUT_MAX, err, status, timeout, stop,
			arg);
}

/* stream ---------------------------------------------------------------------------------- */

/* Complete lines of out to on_line; what follows the last newline stays for later. */
static int deliver(struct pv_buf *out, const struct pv_remote_stream_ops *ops)
{
	size_t start = 0;
	int r = 0;

	for (size_t i = 0; i < out->len && r == 0; i++) {
		if (out->data[i] != '\n')
			continue;
		out->data[i] = '\0';
		r = ops->on_line ? ops->on_line(ops->arg, out->data + start, i - start) : 0;
		start = i + 1;
	}
	if (start) {
		memmove(out->data, out->data + start, out->len - start);
		out->len -= start;
		out->data[out->len] = '\0';
	}
	return r;
}

/* A stream being stopped: its stdin ended, the grace it has to end on its own. */
struct stopping {
	bool on;
	long long grace;
};

static void stop_stream(ssh_channel ch, struct stopping *sp)
{
	if (sp->on)
		return;
	sp->on = true;
	sp->grace = remote_now_ms() + STREAM_GRACE_MS;
	ssh_channel_send_eof(ch);
}

/* What ops->input has for the command's stdin, written; its non-zero answer stops it. */
static int stream_input(struct pv_remote *rem, ssh_channel ch,
			const struct pv_remote_stream_ops *ops, const char *word,
			struct stopping *sp)
{
	struct pv_buf more = PV_BUF_INIT;
	int ir = ops->input(ops->arg, &more), r = PV_OK;

	if (ir == 0 && more.len &&
	    ssh_channel_write(ch, more.data, (uint32_t)more.len) == SSH_ERROR)
		r = channel_failed(rem, "sending input to", word);
	pv_buf_release(&more, 1);
	if (r == PV_OK && ir != 0)
		stop_stream(ch, sp);
	return r;
}

/* One turn of a stream: stop when asked (or past the deadline), more input, the output's
 * lines to ops->on_line. PV_OK to go on. */
static int stream_turn(struct pv_remote *rem, ssh_channel ch, struct run *x, struct pv_buf *out,
		       const struct pv_remote_stream_ops *ops, long long deadline,
		       struct stopping *sp, const char *word, const char *w)
{
	long long t = remote_now_ms();
	int r;

	if (!sp->on && ((ops->stop && ops->stop(ops->arg)) || (deadline && t >= deadline)))
		stop_stream(ch, sp);
	if (!sp->on && ops->input && (r = stream_input(rem, ch, ops, word, sp)) != PV_OK)
		return r;
	if (sp->on && t >= sp->grace) {
		ssh_channel_request_send_signal(ch, "KILL");
		return pv_error(PV_EREMOTE,
				"'%s' on %s did not stop within %d s of the end of its input", word,
				w, STREAM_GRACE_MS / 1000);
	}
	if (ssh_channel_poll_timeout(ch, STREAM_SLICE_MS, 0) == SSH_ERROR)
		return channel_failed(rem, "reading the output of", word);
	if (x->oom)
		return pv_error(PV_EIO, "out of memory reading '%s' on %s", word, w);
	if (x->too_much)
		return pv_error(PV_EREMOTE,
				"'%s' on %s printed a line longer than %u KiB: refused, and the "
				"command stopped",
				word, w, PV_REMOTE_LINE_MAX >> 10);
	if (deliver(out, ops) != 0)
		stop_stream(ch, sp);
	return PV_OK;
}

int pv_remote_stream(struct pv_remote *rem, const char *cmd, const void *in, size_t inlen,
		     const struct pv_remote_stream_ops *ops, struct pv_buf *err, int *status,
		     int timeout)
{
	ssh_channel ch = NULL;
	struct ssh_channel_callbacks_struct cb;
	struct pv_buf out = PV_BUF_INIT;
	struct stopping sp = {false, 0};
	struct run x;
	char word[CMD_WORD_MAX], w[600];
	long long deadline = 0;
	int r = PV_EBUG;

	memset(&x, 0, sizeof(x));
	x.out = &out;
	x.err = err;
	x.err_base = err ? err->len : 0;
	x.lines = true;
	cmd_word(cmd, word, sizeof(word));
	remote_who(rem, w, sizeof(w));
	if (timeout > 0)
		deadline = remote_now_ms() + (long long)timeout * 1000;
	if ((r = channel_start(rem, cmd, word, "streaming", &cb, &x, &ch)) != PV_OK)
		goto out;
	if (in && inlen && ssh_channel_write(ch, in, (uint32_t)inlen) == SSH_ERROR) {
		r = channel_failed(rem, "sending input to", word);
		goto out;
	}
	/* stdin stays open: its end is the command's signal to stop (see remote.h) */
	while (!ssh_channel_is_eof(ch) && !ssh_channel_is_closed(ch))
		if ((r = stream_turn(rem, ch, &x, &out, ops, deadline, &sp, word, w)) != PV_OK)
			goto out;
	if (out.len && ops->on_line) /* a last line without its newline */
		ops->on_line(ops->arg, out.data, out.len);
	if (!x.got_status && !x.got_signal && !ssh_channel_is_closed(ch))
		ssh_channel_get_exit_status(ch);
	if (!x.got_status && !x.got_signal && !ssh_is_connected(rem->session)) {
		r = remote_lost(rem, "running", word);
		goto out;
	}
	if (status)
		*status = x.got_status ? x.status : -1;
	err_note(&x);
	r = PV_OK;
out:
	if (ch != NULL) {
		if (ssh_channel_is_open(ch))
			ssh_channel_close(ch);
		ssh_remove_channel_callbacks(ch, &cb);
		ssh_channel_free(ch);
	}
	pv_buf_release(&out, 0);
	return r;
}

/* sh -c ------------------------------------------------------------------------------------ */

/* The last line, unless a line reports a full disk (tar, for one, names each file it could
 * not write, then ends with a generic "Exiting with failure status"): then the first such
 * line. */
void pv_remote_reason(const char *text, char *out, size_t len)
{
	const char *end, *start, *full;

	out[0] = '\0';
	if (!text)
		return;
	if ((full = strstr(text, "No space left on device"))) {
		for (start = full; start > text && start[-1] != '\n'; start--)
			;
		end = strchr(full, '\n');
		snprintf(out, len, "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
		return;
	}
	end = text + strlen(text);
	while (end > text && isspace((unsigned char)end[-1]))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

int pv_remote_sh_line(struct pv_buf *cmd, const char *script)
{
	pv_buf_addstr(cmd, "sh -c ");
	return pv_remote_quote(cmd, script) < 0 || pv_buf_failed(cmd) ? -1 : 0;
}

int pv_remote_sh(struct pv_remote *rem, const char *what, const struct pv_buf *script,
		 const void *in, size_t inlen, struct pv_buf *out, int *status, int timeout)
{
	struct pv_buf cmd = PV_BUF_INIT, err = PV_BUF_INIT;
	char tail[512];
	int st = -1, r;

	if (pv_buf_failed(script) || !script->data)
		return pv_error(PV_EIO,
				"out of memory while building the script for %s; nothing "
				"was sent",
				what);
	if (pv_remote_sh_line(&cmd, script->data) < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	r = pv_remote_exec(rem, cmd.data, in, inlen, out, &err, &st, timeout);
	if (r != PV_OK)
		goto out;
	if (err.data && err.len)
		pv_log(PV_LOG_DEBUG, "%s: %s: stderr: %s", pv_remote_name(rem), what, err.data);
	if (status) {
		*status = st;
		/* callers that look at the status may want the reason too */
		pv_remote_reason(err.data, tail, sizeof(tail));
		pv_error(PV_OK, "%s", tail);
	} else if (st != 0) {
		pv_remote_reason(err.data, tail, sizeof(tail));
		if (!tail[0] && out)
			pv_remote_reason(out->data, tail, sizeof(tail));
		r = pv_error(PV_EREMOTE, "%s on '%s' failed (status %d)%s%s", what,
			     pv_remote_name(rem), st, tail[0] ? ": " : "", tail);
	}
out:
	pv_buf_release(&cmd, 0);
	pv_buf_release(&err, 0);
	return r;
}
