/* remote/ssh.c: SSH sessions to lab hosts through libssh: connect, the host key checked
 * against one known_hosts file, public key authentication, and a session lost said once for
 * exec.c and sftp.c.
 *
 * libssh's errors are translated once, in remote/, into a pv_error code and a message that
 * names the host. libssh is used in blocking mode; every wait is bounded by ssh.timeout
 * (libssh's SSH_OPTIONS_TIMEOUT) or by the command timeout. */
#include "remote/remote.h"

#include "remote/internal.h"

#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libssh/libssh.h>

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

long long remote_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "'cli1' (198.18.0.31)", or "'cli1'" when we connect by name. */
const char *remote_who(const struct pv_remote *rem, char *buf, size_t len)
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

	remote_who(rem, w, sizeof(w));
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

	remote_who(rem, w, sizeof(w));
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

	remote_who(rem, w, sizeof(w));
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
	long long t0 = remote_now_ms();

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
	       remote_now_ms() - t0);
	*out = rem;
	rem = NULL;
	r = PV_OK;
out:
	pv_remote_free(rem);
	return r;
}

/* The session died under us. libssh may leave "Socket error: Success" as its message after
 * a peer close; that says nothing, so it is dropped. */
int remote_lost(struct pv_remote *rem, const char *what, const char *obj)
{
	const char *e = ssh_get_error(rem->session);
	char w[600];

	remote_who(rem, w, sizeof(w));
	if (*e == '\0' || strstr(e, "Success"))
		return pv_error(PV_EUNREACH, "connection to %s lost while %s '%s'", w, what, obj);
	return pv_error(PV_EUNREACH, "connection to %s lost while %s '%s': %s", w, what, obj, e);
}
