/* remote/remote.h: SSH to lab hosts through libssh: one session per host, host keys checked
 * against a known_hosts file (remote/ssh.c), commands run with input on stdin so secrets never
 * reach a command line (remote/exec.c), SFTP read/write (remote/sftp.c).
 *
 * Errors are recorded with pv_error() and name the host and the cause:
 *   PV_EUNREACH  name does not resolve, connection refused, timeout
 *   PV_ETRUST    host key unknown (and accept_new off) or changed, or known_hosts unreadable
 *   PV_ECRED     authentication refused (key or agent)
 *   PV_EREMOTE   remote command could not run / SFTP failure
 * Sessions are not shared between threads. */
#ifndef PV_REMOTE_REMOTE_H
#define PV_REMOTE_REMOTE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/fanout.h"

struct pv_remote; /* one connected, authenticated session */

/* Where and how to connect: filled from the playbook in one place (env/target.c). */
struct pv_remote_target {
	const char *name;	 /* the host's name: messages, known_hosts when no address */
	const char *address;	 /* IPv4/IPv6 literal or name; NULL: name */
	int port;		 /* 0: 22 */
	const char *user;	 /* NULL: root */
	const char *identity;	 /* private key file; NULL: ssh-agent, then the default keys */
	const char *known_hosts; /* NULL: ~/.ssh/known_hosts */
	bool accept_new;	 /* accept (and record) an unknown host key */
	int timeout;		 /* seconds for each wait; 0: 10 */
};

/* Connect to t->address (or t->name), verify the host key, authenticate (identity file, else
 * agent/default keys). On success *out is set; free with pv_remote_free(). */
int pv_remote_connect(const struct pv_remote_target *t, struct pv_remote **out);
void pv_remote_free(struct pv_remote *r);
/* Host name for messages. */
const char *pv_remote_name(const struct pv_remote *r);

/* Run cmd (a shell command line, no secrets in it) on the host. in/inlen, when non-NULL,
 * is written to the command's stdin, then stdin is closed. stdout and stderr, when non-NULL,
 * receive the output (appended). *status receives the exit status (-1 if killed by a signal).
 * timeout in seconds (0: the host's ssh.timeout * 6). Returns PV_OK when the command ran,
 * whatever its status. */
int pv_remote_exec(struct pv_remote *r, const char *cmd, const void *in, size_t inlen,
		   struct pv_buf *out, struct pv_buf *err, int *status, int timeout);
/* Whatever a host sends, pv_remote_exec keeps at most PV_REMOTE_OUT_MAX bytes of stdout and
 * PV_REMOTE_ERR_MAX of stderr (remote/caps.h): more stdout ends the command and fails
 * (PV_EREMOTE, out as it was); more stderr is dropped, and a last line of err says how much.
 * pv_remote_exec_max is the same without stdin, keeping at most out_max bytes of stdout (a
 * caller that takes more, as run's results). */
int pv_remote_exec_max(struct pv_remote *r, const char *cmd, struct pv_buf *out, size_t out_max,
		       struct pv_buf *err, int *status, int timeout);

/* pv_remote_exec that can be cut short: stop(arg) is asked every 200 ms while the command
 * runs; once it returns true the command is asked to end (SIGTERM; sshd refuses that for root
 * logins, and the command then ends on its own, or of SIGPIPE when it next writes), its
 * channel is closed and PV_ESTOPPED is returned (recorded). For short commands that a Ctrl-C
 * must not wait for (wait's probes). */
int pv_remote_exec_stoppable(struct pv_remote *r, const char *cmd, const void *in, size_t inlen,
			     struct pv_buf *out, struct pv_buf *err, int *status, int timeout,
			     bool (*stop)(void *arg), void *arg);

/* A long-running command: cmd starts with in/inlen (may be NULL) on its stdin, which then stays
 * open; each whole line of its stdout goes to on_line as it arrives (a non-zero return, or
 * stop() returning true, which is asked every 200 ms, or the timeout, ends the stream). Ending
 * it closes the command's stdin: a command that watches its stdin (the run's wrapper, the
 * server's sampler) takes that as the order to stop, and gets 10 s to exit before SIGKILL is
 * asked for. If the controller dies, the channel closes and the command sees the same. stderr
 * is appended to err (may be NULL); *status is the exit status (-1 when killed). A host that
 * goes away is PV_EUNREACH. timeout 0: none. */
struct pv_remote_stream_ops {
	int (*on_line)(void *arg, const char *line, size_t len);
	bool (*stop)(void *arg);
	void *arg;
	/* more input for the command's stdin, asked with stop() (may be NULL): what it appends
	 * to in is written; non-zero ends the stream as on_line's does */
	int (*input)(void *arg, struct pv_buf *in);
};
int pv_remote_stream(struct pv_remote *r, const char *cmd, const void *in, size_t inlen,
		     const struct pv_remote_stream_ops *ops, struct pv_buf *err, int *status,
		     int timeout);
/* A line longer than PV_REMOTE_LINE_MAX ends the stream (PV_EREMOTE); its stderr is kept as
 * pv_remote_exec keeps it. */

/* The one way to run a script on a host: script (a file of the tree, with its variables
 * before it: remote/quote.h) runs with `sh -c`, quoted as one word; in/inlen (a secret, data,
 * or NULL) go to its stdin, never its command line. A script whose buffer failed (out of
 * memory while it was built) is refused, PV_EIO, and never sent. Its stderr is logged (debug).
 * With status non-NULL the exit status is returned there and the reason (pv_remote_reason of
 * stderr) recorded as the message, whatever the status: the caller says what it means. With
 * status NULL a non-zero status fails, PV_EREMOTE: "<what> on '<host>' failed (status N):
 * <the reason>" (of stderr, else of out). timeout as for pv_remote_exec. */
int pv_remote_sh(struct pv_remote *r, const char *what, const struct pv_buf *script, const void *in,
		 size_t inlen, struct pv_buf *out, int *status, int timeout);
/* The command line pv_remote_sh sends for script (NUL-terminated): `sh -c` and the script
 * quoted as one word, onto cmd; -1 when out of memory. For a caller that runs it its own way
 * (run/drain.c: a poll that Ctrl-C must stop). */
int pv_remote_sh_line(struct pv_buf *cmd, const char *script);
/* The line of a command's output that says why it failed, into out (cut to len): the last
 * non-empty one, unless a line reports a full disk: then the first such line. "" for NULL. */
void pv_remote_reason(const char *text, char *out, size_t len);

/* SFTP: read a whole remote file into buf (PV_EREMOTE if absent, message says so, or larger
 * than PV_REMOTE_FILE_MAX);
 * write data to path with mode (created or truncated, then fsync'd when the server
 * supports it). */
int pv_remote_read_file(struct pv_remote *r, const char *path, struct pv_buf *buf);
int pv_remote_write_file(struct pv_remote *r, const char *path, const void *data, size_t len,
			 int mode);
/* SFTP: the same for a file that must be new (O_EXCL on the server: never through a name that
 * is there, a symbolic link included; PV_EREMOTE then). */
int pv_remote_create_file(struct pv_remote *r, const char *path, const void *data, size_t len,
			  int mode);
/* SFTP: data written at the end of the file at path, one that is there (made by
 * pv_remote_create_file): PV_EREMOTE when it is not. */
int pv_remote_append_file(struct pv_remote *r, const char *path, const void *data, size_t len);
/* SFTP: the folder path made with mode; one that is there already is fine when it is a folder
 * (not a link to one), else PV_EREMOTE. */
int pv_remote_mkdir(struct pv_remote *r, const char *path, int mode);

#endif
