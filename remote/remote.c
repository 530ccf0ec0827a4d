/* remote/remote.c: SSH sessions to lab hosts through libssh: connect, host key check against
 * one known_hosts file, public key authentication, commands with input on stdin, whole-file
 * SFTP, and the threaded fan-out over hosts.
 *
 * libssh's errors are translated once, here, into a pv_error code and a message that names
 * the host. libssh is used in blocking mode; every wait is bounded by ssh.timeout (libssh's
 * SSH_OPTIONS_TIMEOUT) or by the command timeout. */
#include "remote/remote.h"

#include "remote/caps.h"

#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#define IO_CHUNK     32768 /* per SFTP read/write request and per stdin write */
#define FANOUT_MAX   16	   /* default concurrency */
#define CMD_WORD_MAX 64	   /* how much of a command's first word goes into messages */

struct pv_remote {
	ssh_session session;
	sftp_session sftp; /* opened on first file operation */
	char *name;	   /* for messages */
	char *address;	   /* what we connect to (address, else name) */
	char *hostopt;	   /* address as libssh's HOST option takes it ([v6]) */
	int port;
	int timeout; /* ssh.timeout, seconds */
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_rc;

/* libssh 0.10 runs ssh_init() from a library constructor, but calling it ourselves, once,
 * before any thread connects keeps us correct with static builds too. libssh's default
 * threading is pthreads, and OpenSSL >= 1.1 locks itself, so nothing else is needed. */
static void init(void)
{
	init_rc = ssh_init();
}

static int lib_ready(void)
{
	pthread_once(&init_once, init);
	if (init_rc != SSH_OK)
		return pv_error(PV_EBUG, "libssh initialisation failed");
	return PV_OK;
}

static int timeout_of(const struct pv_remote_target *t)
{
	return t->timeout > 0 ? t->timeout : 10;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "'cli1' (198.18.0.31)", or "'cli1'" when we connect by name. */
static const char *who(const struct pv_remote *rem, char *buf, size_t len)
{
	if (strcmp(rem->name, rem->address) == 0)
		snprintf(buf, len, "'%s'", rem->name);
	else
		snprintf(buf, len, "'%s' (%s)", rem->name, rem->address);
	return buf;
}

/* "198.18.0.31:22", "[fd00::1]:22" */
static const char *endpoint(const struct pv_remote *rem, char *buf, size_t len)
{
	if (strchr(rem->address, ':'))
		snprintf(buf, len, "[%s]:%d", rem->address, rem->port);
	else
		snprintf(buf, len, "%s:%d", rem->address, rem->port);
	return buf;
}

/* The host as known_hosts names it: "198.18.0.31", or "[198.18.0.31]:2222" off port 22. */
static const char *kh_name(const struct pv_remote *rem, char *buf, size_t len)
{
	if (rem->port == 22)
		snprintf(buf, len, "%s", rem->address);
	else
		snprintf(buf, len, "[%s]:%d", rem->address, rem->port);
	return buf;
}

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

void pv_remote_free(struct pv_remote *rem)
{
	if (rem == NULL)
		return;
	if (rem->sftp != NULL)
		sftp_free(rem->sftp);
	if (rem->session != NULL) {
		if (ssh_is_connected(rem->session))
			ssh_disconnect(rem->session);
		ssh_free(rem->session);
	}
	free(rem->name);
	free(rem->address);
	free(rem->hostopt);
	free(rem);
}

const char *pv_remote_name(const struct pv_remote *rem)
{
	return rem->name;
}

/* Translate a failed ssh_connect(). libssh reports a refused or failed TCP connect with the
 * bare strerror() text, a slow host as "Timeout connecting to", and getaddrinfo failures as
 * "Failed to resolve hostname"; anything else (key exchange, banner) is passed on. */
static int connect_failed(const struct pv_remote *rem)
{
	const char *e = ssh_get_error(rem->session);
	char w[600], ep[300];

	who(rem, w, sizeof(w));
	endpoint(rem, ep, sizeof(ep));
	if (strstr(e, "Failed to resolve hostname")) {
		/* "Failed to resolve hostname NAME (gai_strerror text)" */
		const char *why = strrchr(e, '(');

		return pv_error(PV_EUNREACH,
				"cannot connect to '%s': name '%s' does not resolve %s", rem->name,
				rem->address, why ? why : "");
	}
	if (strstr(e, "Timeout connecting"))
		return pv_error(
			PV_EUNREACH,
			"cannot connect to '%s' (%s): no answer within %d s — is the host up "
			"and port %d open?",
			rem->name, ep, rem->timeout, rem->port);
	if (strstr(e, "Connection refused"))
		return pv_error(PV_EUNREACH,
				"cannot connect to '%s' (%s): Connection refused — is sshd running "
				"there?",
				rem->name, ep);
	/* sshd drops connections beyond MaxStartups (default 10:30:100) before login */
	if (strstr(e, "Connection reset"))
		return pv_error(PV_EUNREACH,
				"cannot connect to '%s' (%s): %s — too many parallel logins for "
				"its sshd (MaxStartups)?",
				rem->name, ep, e);
	return pv_error(PV_EUNREACH, "cannot connect to '%s' (%s): %s", rem->name, ep, e);
}

/* A known_hosts lookup for the name we would have used had we not connected by address:
 * OpenSSH >= 8.5 records hosts by name only (CheckHostIP no). libssh looks hosts up by the
 * HOST option, so switch it for the lookup and back. */
static enum ssh_known_hosts_e known_by_name(struct pv_remote *rem)
{
	enum ssh_known_hosts_e st = SSH_KNOWN_HOSTS_UNKNOWN;

	if (strcmp(rem->name, rem->address) == 0)
		return st;
	if (ssh_options_set(rem->session, SSH_OPTIONS_HOST, rem->name) != SSH_OK)
		return st; /* not a valid host name: nothing to look up */
	st = ssh_session_is_known_server(rem->session);
	if (ssh_options_set(rem->session, SSH_OPTIONS_HOST, rem->hostopt) != SSH_OK)
		st = SSH_KNOWN_HOSTS_ERROR;
	return st;
}

static int check_host_key(struct pv_remote *rem, const struct pv_remote_target *host)
{
	ssh_key key = NULL;
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp = NULL, *kh = NULL;
	const char *type = "?";
	char w[600], kn[300];
	enum ssh_known_hosts_e st;
	FILE *f = NULL;
	int r = PV_EBUG;

	who(rem, w, sizeof(w));
	kh_name(rem, kn, sizeof(kn));
	if (ssh_get_server_publickey(rem->session, &key) != SSH_OK) {
		r = pv_error(PV_ETRUST, "no host key from %s: %s", w, ssh_get_error(rem->session));
		goto out;
	}
	type = ssh_key_type_to_char(ssh_key_type(key));
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0)
		fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	/* ssh_options_apply() ran in ssh_connect(): this is the expanded path */
	if (ssh_options_get(rem->session, SSH_OPTIONS_KNOWNHOSTS, &kh) != SSH_OK || kh == NULL) {
		r = pv_error(PV_ETRUST, "no known_hosts file for %s", w);
		goto out;
	}
	/* libssh treats an unreadable file like a missing one: tell them apart here */
	if ((f = fopen(kh, "r")) == NULL && errno != ENOENT) {
		r = pv_error(PV_ETRUST, "cannot read known_hosts '%s': %s", kh, strerror(errno));
		goto out;
	}

	st = ssh_session_is_known_server(rem->session);
	if (st == SSH_KNOWN_HOSTS_UNKNOWN || st == SSH_KNOWN_HOSTS_NOT_FOUND) {
		enum ssh_known_hosts_e by_name = known_by_name(rem);

		if (by_name != SSH_KNOWN_HOSTS_UNKNOWN && by_name != SSH_KNOWN_HOSTS_NOT_FOUND)
			st = by_name;
	}
	switch (st) {
	case SSH_KNOWN_HOSTS_OK:
		r = PV_OK;
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
		r = pv_error(PV_ETRUST,
			     "host key for %s has CHANGED (now %s %s): remove the old key from "
			     "'%s' if the change is expected (ssh-keygen -R '%s' -f '%s')",
			     w, type, fp ? fp : "?", kh, kn, kh);
		break;
	case SSH_KNOWN_HOSTS_OTHER:
		r = pv_error(PV_ETRUST,
			     "host key for %s is %s but '%s' lists a key of another type for it: "
			     "possible attack; check and update '%s'",
			     w, type, kh, kh);
		break;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		if (!host->accept_new) {
			r = pv_error(PV_ETRUST,
				     "host key of %s is not in '%s'; add it (ssh-keyscan -p %d %s "
				     ">> '%s') or set ssh.accept_new: true",
				     w, kh, rem->port, rem->address, kh);
			break;
		}
		if (ssh_session_update_known_hosts(rem->session) != SSH_OK) {
			r = pv_error(PV_ETRUST, "cannot record host key of %s in '%s': %s", w, kh,
				     ssh_get_error(rem->session));
			break;
		}
		pv_log(PV_LOG_INFO, "%s: recorded new host key %s %s in %s", rem->name, type,
		       fp ? fp : "?", kh);
		r = PV_OK;
		break;
	case SSH_KNOWN_HOSTS_ERROR:
	default:
		r = pv_error(PV_ETRUST, "cannot check host key of %s against '%s': %s", w, kh,
			     ssh_get_error(rem->session));
		break;
	}
out:
	if (f != NULL)
		fclose(f);
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
	ssh_string_free_char(kh);
	ssh_key_free(key);
	return r;
}

static int authenticate(struct pv_remote *rem, const struct pv_remote_target *host)
{
	const char *user = host->user ? host->user : "root";
	const char *id = host->identity;
	ssh_key key = NULL;
	FILE *f = NULL;
	char w[600];
	int r = PV_EBUG, a;

	who(rem, w, sizeof(w));
	if (id != NULL) {
		/* libssh says only "failed" for a missing file: check it ourselves first */
		if ((f = fopen(id, "r")) == NULL) {
			r = pv_error(PV_ECONFIG, "cannot read ssh.identity '%s': %s", id,
				     strerror(errno));
			goto out;
		}
		if (ssh_pki_import_privkey_file(id, NULL, NULL, NULL, &key) != SSH_OK) {
			r = pv_error(
				PV_ECRED,
				"cannot load private key '%s' (passphrase-protected or not "
				"a key?); load it into ssh-agent and unset ssh.identity instead",
				id);
			goto out;
		}
		a = ssh_userauth_publickey(rem->session, NULL, key);
	} else {
		a = ssh_userauth_publickey_auto(rem->session, NULL, NULL);
	}
	switch (a) {
	case SSH_AUTH_SUCCESS:
		r = PV_OK;
		break;
	case SSH_AUTH_DENIED:
	case SSH_AUTH_PARTIAL:
		if (id != NULL)
			r = pv_error(PV_ECRED,
				     "%s@%s refused key '%s'%s; check %s's authorized_keys on %s",
				     user, rem->name, id,
				     a == SSH_AUTH_PARTIAL ? " (more authentication required)" : "",
				     user, w);
		else
			r = pv_error(
				PV_ECRED,
				"%s@%s refused the ssh-agent and default keys (~/.ssh/id_*)%s; "
				"set ssh.identity or load the key into ssh-agent",
				user, rem->name,
				a == SSH_AUTH_PARTIAL ? " (more authentication required)" : "");
		break;
	default:
		r = pv_error(PV_EUNREACH, "authentication to %s as %s failed: %s", w, user,
			     ssh_get_error(rem->session));
		break;
	}
out:
	if (f != NULL)
		fclose(f);
	ssh_key_free(key);
	return r;
}

int pv_remote_connect(const struct pv_remote_target *host, struct pv_remote **out)
{
	struct pv_remote *rem = NULL;
	const char *user = host->user ? host->user : "root";
	const char *addr = host->address ? host->address : host->name;
	long tmo;
	int port, strict = 1, nodelay = 1, r = PV_EBUG;
	bool no_config = false;
	long long t0 = now_ms();

	if ((r = lib_ready()) != PV_OK)
		return r;
	if (addr == NULL || *addr == '\0')
		return pv_error(PV_ECONFIG, "host has neither a name nor an address");
	if ((rem = calloc(1, sizeof(*rem))) == NULL ||
	    (rem->name = strdup(host->name ? host->name : addr)) == NULL ||
	    (rem->address = strdup(addr)) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	rem->port = port = host->port > 0 ? host->port : 22;
	rem->timeout = timeout_of(host);
	tmo = rem->timeout;
	/* libssh's HOST option takes "user@host:port", so an IPv6 literal needs brackets; it
	 * stores the bare address and looks it up in known_hosts as "addr" or "[addr]:port",
	 * like OpenSSH, so a lab file listing "cli1,198.18.0.31" matches by address. */
	if (asprintf(&rem->hostopt, strchr(addr, ':') ? "[%s]" : "%s", addr) < 0) {
		rem->hostopt = NULL;
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((rem->session = ssh_new()) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	/* No ~/.ssh/config: the playbook alone decides. StrictHostKeyChecking stays on because
	 * with it off, libssh reports an unknown host as OK; accept_new is handled here.
	 * NODELAY: libssh leaves Nagle on, which costs a delayed-ACK wait (~40 ms) on every
	 * SFTP write request (3 MB in 32 KiB requests: 2.8 s instead of 0.1 s). */
	if (ssh_options_set(rem->session, SSH_OPTIONS_PROCESS_CONFIG, &no_config) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_HOST, rem->hostopt) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_PORT, &port) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_USER, user) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_TIMEOUT, &tmo) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_NODELAY, &nodelay) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict) != SSH_OK ||
	    ssh_options_set(rem->session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") != SSH_OK ||
	    (host->known_hosts != NULL &&
	     ssh_options_set(rem->session, SSH_OPTIONS_KNOWNHOSTS, host->known_hosts) != SSH_OK)) {
		r = pv_error(PV_ECONFIG, "bad SSH settings for '%s' (address '%s', user '%s'): %s",
			     rem->name, addr, user, ssh_get_error(rem->session));
		goto out;
	}
	if (ssh_connect(rem->session) != SSH_OK) {
		r = connect_failed(rem);
		goto out;
	}
	if ((r = check_host_key(rem, host)) != PV_OK)
		goto out;
	if ((r = authenticate(rem, host)) != PV_OK)
		goto out;
	pv_log(PV_LOG_DEBUG, "%s: connected to %s as %s in %lld ms", rem->name, addr, user,
	       now_ms() - t0);
	*out = rem;
	rem = NULL;
	r = PV_OK;
out:
	pv_remote_free(rem);
	return r;
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

/* The session died under us. libssh may leave "Socket error: Success" as its message after
 * a peer close; that says nothing, so it is dropped. */
static int lost(struct pv_remote *rem, const char *what, const char *obj)
{
	const char *e = ssh_get_error(rem->session);
	char w[600];

	who(rem, w, sizeof(w));
	if (*e == '\0' || strstr(e, "Success"))
		return pv_error(PV_EUNREACH, "connection to %s lost while %s '%s'", w, what, obj);
	return pv_error(PV_EUNREACH, "connection to %s lost while %s '%s': %s", w, what, obj, e);
}

/* A channel call failed: a dead session means the host went away. */
static int channel_failed(struct pv_remote *rem, const char *what, const char *word)
{
	char w[600];

	if (!ssh_is_connected(rem->session))
		return lost(rem, what, word);
	who(rem, w, sizeof(w));
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
		if (now_ms() >= deadline)
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
		long long left = deadline - now_ms();

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
	who(rem, w, sizeof(w));
	if (timeout <= 0)
		timeout = rem->timeout * 6;
	deadline = now_ms() + (long long)timeout * 1000;
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
	sp->grace = now_ms() + STREAM_GRACE_MS;
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
	long long t = now_ms();
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
	who(rem, w, sizeof(w));
	if (timeout > 0)
		deadline = now_ms() + (long long)timeout * 1000;
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
		r = lost(rem, "running", word);
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

/* SFTP ------------------------------------------------------------------------------------ */

static const char *sftp_text(int code)
{
	switch (code) {
	case SSH_FX_EOF:
		return "unexpected end of file";
	case SSH_FX_NO_SUCH_FILE:
		return "no such file";
	case SSH_FX_PERMISSION_DENIED:
		return "permission denied";
	case SSH_FX_BAD_MESSAGE:
		return "bad SFTP message";
	case SSH_FX_NO_CONNECTION:
	case SSH_FX_CONNECTION_LOST:
		return "connection lost";
	case SSH_FX_OP_UNSUPPORTED:
		return "operation not supported by the server";
	case SSH_FX_NO_SUCH_PATH:
		return "no such directory";
	case SSH_FX_FILE_ALREADY_EXISTS:
		return "file exists";
	case SSH_FX_WRITE_PROTECT:
		return "read-only file system";
	case SSH_FX_NO_MEDIA:
		return "no media";
	default:
		return NULL;
	}
}

/* Record an SFTP failure: the SFTP status when there is one, else libssh's session error. */
static int sftp_failed(struct pv_remote *rem, const char *what, const char *path)
{
	const char *t = rem->sftp ? sftp_text(sftp_get_error(rem->sftp)) : NULL;
	char w[600];

	if (!ssh_is_connected(rem->session))
		return lost(rem, what, path);
	who(rem, w, sizeof(w));
	return pv_error(PV_EREMOTE, "%s '%s' on %s: %s", what, path, w,
			t ? t : ssh_get_error(rem->session));
}

static int sftp_ready(struct pv_remote *rem)
{
	char w[600];
	int r = PV_EBUG;

	if (rem->sftp != NULL)
		return PV_OK;
	who(rem, w, sizeof(w));
	if ((rem->sftp = sftp_new(rem->session)) == NULL || sftp_init(rem->sftp) != SSH_OK) {
		if (!ssh_is_connected(rem->session))
			r = lost(rem, "starting", "sftp");
		else
			r = pv_error(PV_EREMOTE,
				     "SFTP not available on %s (is the sftp subsystem enabled in "
				     "sshd_config?): %s",
				     w, ssh_get_error(rem->session));
		if (rem->sftp != NULL)
			sftp_free(rem->sftp);
		rem->sftp = NULL;
		goto out;
	}
	r = PV_OK;
out:
	return r;
}

int pv_remote_read_file(struct pv_remote *rem, const char *path, struct pv_buf *buf)
{
	sftp_file f = NULL;
	char *chunk = NULL;
	ssize_t n;
	size_t start = buf->len;
	int r = PV_EBUG;

	if ((r = sftp_ready(rem)) != PV_OK)
		goto out;
	if ((chunk = malloc(IO_CHUNK)) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((f = sftp_open(rem->sftp, path, O_RDONLY, 0)) == NULL) {
		r = sftp_failed(rem, "cannot open", path);
		goto out;
	}
	while ((n = sftp_read(f, chunk, IO_CHUNK)) > 0) {
		if (buf->len - start + (size_t)n > PV_REMOTE_FILE_MAX) {
			r = pv_error(PV_EREMOTE, "'%s' on '%s' is larger than %u MiB: refused",
				     path, rem->name, PV_REMOTE_FILE_MAX >> 20);
			goto out;
		}
		if (pv_buf_add(buf, chunk, (size_t)n) < 0) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
	}
	if (n < 0) {
		r = sftp_failed(rem, "cannot read", path);
		goto out;
	}
	r = PV_OK;
out:
	if (r != PV_OK && buf->data != NULL) {
		/* leave the buffer as it was */
		buf->len = start;
		buf->data[start] = '\0';
	}
	if (f != NULL)
		sftp_close(f);
	free(chunk);
	return r;
}

/* path written whole: flags O_TRUNC (made or truncated) or O_EXCL (made new, never through a
 * name that is there, a link included: SFTP's SSH_FXF_EXCL is open's O_EXCL on the server). */
static int write_file(struct pv_remote *rem, const char *path, int flags, const void *data,
		      size_t len, int mode)
{
	sftp_file f = NULL;
	sftp_attributes st = NULL;
	const char *p = data;
	size_t done = 0;
	ssize_t n;
	int r = PV_EBUG;

	if ((r = sftp_ready(rem)) != PV_OK)
		goto out;
	if ((f = sftp_open(rem->sftp, path, O_WRONLY | O_CREAT | flags, (mode_t)mode)) == NULL) {
		r = sftp_failed(rem, "cannot create", path);
		goto out;
	}
	/* The mode given to open applies only to a new file (and passes through the server's
	 * umask): set it before any data goes in, so a secret never sits in a wider file. */
	if ((st = sftp_fstat(f)) == NULL) {
		r = sftp_failed(rem, "cannot stat", path);
		goto out;
	}
	if ((st->permissions & 07777) != ((unsigned)mode & 07777) &&
	    sftp_chmod(rem->sftp, path, (mode_t)mode) < 0) {
		r = sftp_failed(rem, "cannot set the mode of", path);
		goto out;
	}
	while (done < len) {
		size_t chunk = len - done < IO_CHUNK ? len - done : IO_CHUNK;

		if ((n = sftp_write(f, p + done, chunk)) < 0) {
			r = sftp_failed(rem, "cannot write", path);
			goto out;
		}
		done += (size_t)n;
	}
	if (sftp_extension_supported(rem->sftp, "fsync@openssh.com", "1") && sftp_fsync(f) < 0) {
		r = sftp_failed(rem, "cannot fsync", path);
		goto out;
	}
	n = sftp_close(f);
	f = NULL;
	if (n != SSH_OK) {
		r = sftp_failed(rem, "cannot close", path);
		goto out;
	}
	r = PV_OK;
out:
	sftp_attributes_free(st);
	if (f != NULL)
		sftp_close(f);
	return r;
}

int pv_remote_write_file(struct pv_remote *rem, const char *path, const void *data, size_t len,
			 int mode)
{
	return write_file(rem, path, O_TRUNC, data, len, mode);
}

int pv_remote_create_file(struct pv_remote *rem, const char *path, const void *data, size_t len,
			  int mode)
{
	return write_file(rem, path, O_EXCL, data, len, mode);
}

int pv_remote_mkdir(struct pv_remote *rem, const char *path, int mode)
{
	sftp_attributes st = NULL;
	int r;

	if ((r = sftp_ready(rem)) != PV_OK)
		return r;
	if (sftp_mkdir(rem->sftp, path, (mode_t)mode) == 0)
		return PV_OK;
	/* there already: fine when it is a folder itself (lstat: not a link to one) */
	if (sftp_get_error(rem->sftp) != SSH_FX_FILE_ALREADY_EXISTS &&
	    sftp_get_error(rem->sftp) != SSH_FX_FAILURE)
		return sftp_failed(rem, "cannot make the folder", path);
	if ((st = sftp_lstat(rem->sftp, path)) == NULL)
		return sftp_failed(rem, "cannot make the folder", path);
	r = st->type == SSH_FILEXFER_TYPE_DIRECTORY
		    ? PV_OK
		    : pv_error(PV_EREMOTE,
			       "cannot make the folder '%s' on '%s': something else is there", path,
			       rem->name);
	sftp_attributes_free(st);
	return r;
}

/* fan-out --------------------------------------------------------------------------------- */

struct fanout {
	size_t n;
	size_t next; /* next host to take, under lock */
	pthread_mutex_t lock;
	pv_fanout_fn fn;
	void *ctx;
	struct pv_fanout_result *results;
};

/* A worker takes hosts one at a time until none are left. The error message is
 * thread-local, so it is cleared before and copied right after each call. */
static void *worker(void *arg)
{
	struct fanout *fo = arg;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&fo->lock);
		i = fo->next < fo->n ? fo->next++ : fo->n;
		pthread_mutex_unlock(&fo->lock);
		if (i == fo->n)
			break;
		pv_error_clear();
		fo->results[i].code = fo->fn(i, fo->ctx);
		snprintf(fo->results[i].msg, sizeof(fo->results[i].msg), "%s", pv_errmsg());
	}
	return NULL;
}

int pv_remote_fanout(size_t n, int max_parallel, pv_fanout_fn fn, void *ctx,
		     struct pv_fanout_result *results)
{
	struct fanout fo;
	pthread_t *tids = NULL;
	size_t nthreads, started = 0, failed = 0, first = n;
	int r = PV_EBUG;

	if (n == 0)
		return PV_OK;
	if ((r = lib_ready()) != PV_OK)
		return r;
	memset(&fo, 0, sizeof(fo));
	fo.n = n;
	fo.fn = fn;
	fo.ctx = ctx;
	fo.results = results;
	pthread_mutex_init(&fo.lock, NULL);
	for (size_t i = 0; i < n; i++) {
		results[i].code = PV_EBUG;
		results[i].msg[0] = '\0';
	}
	nthreads = max_parallel > 0 ? (size_t)max_parallel : FANOUT_MAX;
	if (nthreads > n)
		nthreads = n;
	if ((tids = calloc(nthreads, sizeof(*tids))) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (; started < nthreads; started++)
		if (pthread_create(&tids[started], NULL, worker, &fo) != 0)
			break;
	if (started == 0)
		worker(&fo); /* no threads to be had: do the work here, one host at a time */
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);

	for (size_t i = 0; i < n; i++) {
		if (results[i].code == PV_OK)
			continue;
		failed++;
		if (first == n)
			first = i;
	}
	if (failed == 0) {
		r = PV_OK;
	} else if (failed < n) {
		r = pv_error(PV_EPARTIAL, "%zu of %zu hosts failed, first: %s", failed, n,
			     results[first].msg);
	} else {
		/* every host failed: pass on the first failure's code */
		if (n == 1)
			r = pv_error(results[first].code, "%s", results[first].msg);
		else
			r = pv_error(results[first].code, "all %zu hosts failed, first: %s", n,
				     results[first].msg);
	}
out:
	free(tids);
	pthread_mutex_destroy(&fo.lock);
	return r;
}
