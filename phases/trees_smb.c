/* phases/trees_smb.c: the trees of `server` over SMB, as each user: worker processes, each
 * with one connection of our own SMB2 client (smb/sync.c: SMB 2.0.2 to 3.1.1, signed and
 * encrypted as the server or the share requires) that carries its users' sessions in turn; or,
 * when PROVISION_SMB_CLIENT=libsmbclient asks for it and only then, libsmbclient, a connection
 * per user (it keeps process-wide state: hence processes). Workers report through a pipe; the
 * first failure stops them all; Ctrl-C or SIGTERM lets them finish the files they are
 * writing. */
#include "phases/trees_internal.h"

#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS_MAX 64
#define TICK_FILES  32

/* ---- --via smb: worker processes ---- */

enum rec_kind { REC_TICK, REC_USER, REC_FAIL };

struct rec { /* one pipe write, atomic: < PIPE_BUF */
	int kind;
	int code;
	unsigned long files;
	unsigned long long bytes;
	struct pv_smb_tree_result res;
	char msg[1024];
};

struct wctx {
	int fd;
	const struct pv_fileset *fs;
	const char *user;
	unsigned long files;
	unsigned long long bytes;
	double last;
};

static void send_rec(int fd, const struct rec *rc)
{
	const char *p = (const char *)rc;
	size_t left = sizeof(*rc);

	while (left > 0) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3); /* the parent is gone */
		p += w;
		left -= (size_t)w;
	}
}

static void fill(void *arg, size_t item, uint64_t offset, void *buf, size_t len)
{
	const struct wctx *w = arg;

	pv_fileset_fill(pv_fileset_seed(w->fs, &w->fs->entries[item], w->user), offset, buf, len);
}

/* Set in a worker by SIGTERM (the parent stopping everyone after a failure) or SIGINT: the
 * worker finishes the file it is writing, then stops, so no file is left cut short. */
static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static int tick(void *arg, unsigned long files, uint64_t bytes)
{
	struct wctx *w = arg;
	double now;

	w->files += files;
	w->bytes += bytes;
	now = pv_now();
	if (w->files >= TICK_FILES || now - w->last >= 0.2) {
		struct rec rc;

		memset(&rc, 0, sizeof(rc));
		rc.kind = REC_TICK;
		rc.files = w->files;
		rc.bytes = w->bytes;
		send_rec(w->fd, &rc);
		w->files = 0;
		w->bytes = 0;
		w->last = now;
	}
	return stopping;
}

/* Which SMB client builds the trees: our own (smb/sync.c: one connection per worker for all
 * its users, a compound request per file), unless PROVISION_SMB_CLIENT=libsmbclient asks for a
 * libsmbclient session per user. Nothing falls back to libsmbclient: a server our client
 * cannot serve is an error that says why. */
bool pv_phases_trees_want_libsmbclient(void)
{
	const char *e = getenv("PROVISION_SMB_CLIENT");

	return e && strcmp(e, "libsmbclient") == 0;
}

static int build_one(struct pv_phases_trees *t, struct pv_smb_sync **conn, bool lib,
		     const char *server, struct tuser *u, const struct pv_secret *pw,
		     struct wctx *w, struct pv_smb_tree_result *res)
{
	const char *share = t->shares[u->share - 1];
	struct pv_smb_lib *s = NULL;
	int r;

	if (lib) {
		r = pv_smb_lib_session(server, t->pb->domain.netbios, u->name, pw,
				       t->pb->domain.timeout, &s);
		if (r == PV_OK)
			r = pv_smb_lib_tree_build(s, share, u->name, t->items, t->fs->n,
						  !u->nonempty, fill, w, tick, w, res);
		pv_smb_lib_free(s);
		return r;
	}
	memset(res, 0, sizeof(*res));
	for (int attempt = 0;; attempt++) {
		struct pv_smb_tree_result part;

		r = *conn ? PV_OK : pv_smb_sync_connect(server, t->pb->domain.timeout, conn);
		if (r == PV_OK) {
			/* a second attempt lists what the first one wrote */
			r = pv_smb_sync_tree_build(*conn, t->pb->domain.netbios, u->name, pw, share,
						   u->name, t->items, t->fs->n,
						   !u->nonempty && attempt == 0, NULL, fill, w,
						   tick, w, &part);
			/* the second listing also finds what the first attempt wrote */
			res->files_ok +=
				attempt == 0 ? part.files_ok
					     : part.files_ok - res->files_made - res->files_fixed;
			res->dirs_made += part.dirs_made;
			res->files_made += part.files_made;
			res->files_fixed += part.files_fixed;
			res->bytes += part.bytes;
		}
		if (r == PV_OK)
			return r;
		/* the connection was lost (smbd restarted, a network blip): once more on a new
		 * one; every file written is whole, and the listing finds them */
		if (attempt > 0 || !pv_smb_sync_lost(*conn) || stopping || r == PV_EREMOTE)
			return r;
		pv_log(PV_LOG_WARN, "trees: %s; connecting again for %s", pv_errmsg(), u->name);
		pv_smb_sync_free(*conn);
		*conn = NULL;
		sleep(1);
	}
}

static void worker(struct pv_phases_trees *t, int fd, const size_t *todo, size_t ntodo,
		   size_t first, size_t step, const struct pv_secret *pw)
{
	const char *server =
		t->pb->server.host.address ? t->pb->server.host.address : t->pb->server.host.name;
	struct pv_smb_sync *conn = NULL;
	bool lib = pv_phases_trees_want_libsmbclient(), said = first != 0;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (size_t i = first; i < ntodo && !stopping; i += step) {
		struct tuser *u = &t->users[todo[i]];
		struct wctx w = {fd, t->fs, u->name, 0, 0, pv_now()};
		struct rec rc;
		int r;

		memset(&rc, 0, sizeof(rc));
		/* what the first user's session spoke, once, from the first worker: which
		 * dialect, and whether it signed or encrypted (and with what), is the server's
		 * choice and the load's cost */
		r = build_one(t, &conn, lib, server, u, pw, &w, &rc.res);
		if (!said && r == PV_OK && !lib) {
			pv_log(PV_LOG_INFO, "trees: our SMB2 client speaks %s to '%s'%s",
			       pv_smb_sync_describe(conn), server,
			       pv_smb_sync_encrypting(conn)
				       ? " (the server or the share requires "
					 "encryption: every request encrypted, every "
					 "answer opened and checked)"
			       : pv_smb_sync_signing(conn) ? " (the server requires signing: every "
							     "request signed, every "
							     "answer checked)"
							   : "");
			said = true;
		}
		rc.files = w.files;
		rc.bytes = w.bytes;
		rc.kind = r == PV_OK ? REC_USER : REC_FAIL;
		rc.code = r;
		if (r != PV_OK)
			snprintf(rc.msg, sizeof(rc.msg), "user %s: %s", u->name, pv_errmsg());
		send_rec(fd, &rc);
		if (r != PV_OK)
			break;
	}
	pv_smb_sync_free(conn);
}

/* Set in the parent by SIGINT (Ctrl-C) or SIGTERM during an SMB build: the workers are told
 * to stop (they finish what they are writing), and the command says how far it got. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	interrupted = sig;
}

/* After SIGINT or SIGTERM, once: SIGTERM to every worker (a terminal's Ctrl-C reaches them
 * too; a kill of this process alone must be passed on). */
static void tell_workers(const pid_t *pids, unsigned n, bool *told)
{
	if (!interrupted || *told)
		return;
	for (unsigned w = 0; w < n; w++)
		kill(pids[w], SIGTERM);
	*told = true;
}

static int build_smb(struct pv_phases_trees *t, const struct pv_secret *pw, const size_t *todo,
		     size_t ntodo, unsigned nworkers)
{
	unsigned long files = t->st->files_ok;
	unsigned long long bytes = 0;
	pid_t pids[WORKERS_MAX];
	unsigned started = 0;
	int fds[2], r = PV_OK, first_code = PV_OK;
	char first_msg[1024] = "";
	unsigned long users_done = 0;
	struct sigaction sa, old_int, old_term;
	bool told = false;

	if (pipe(fds) != 0)
		return pv_error(PV_EIO, "pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt; /* no SA_RESTART: the read below returns EINTR */
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fflush(stdout);
	fflush(stderr);
	for (unsigned w = 0; w < nworkers; w++) {
		pid_t pid = fork();

		if (pid < 0) {
			r = pv_error(PV_EIO, "fork: %s", strerror(errno));
			break;
		}
		if (pid == 0) {
			close(fds[0]);
			signal(SIGPIPE, SIG_DFL);
			worker(t, fds[1], todo, ntodo, w, nworkers, pw);
			_exit(0);
		}
		pids[started++] = pid;
	}
	close(fds[1]);
	for (;;) {
		struct rec rc;
		size_t got = 0;
		ssize_t n = 0;

		while (got < sizeof(rc) &&
		       (n = read(fds[0], (char *)&rc + got, sizeof(rc) - got)) != 0) {
			if (n < 0 && errno == EINTR) {
				tell_workers(pids, started, &told);
				continue;
			}
			if (n < 0)
				break;
			got += (size_t)n;
		}
		if (got < sizeof(rc))
			break; /* every worker is gone */
		files += rc.files;
		bytes += rc.bytes;
		if (rc.kind == REC_USER || rc.kind == REC_FAIL) {
			t->st->files_made += rc.res.files_made;
			t->st->files_fixed += rc.res.files_fixed;
			t->st->files_ok += rc.res.files_ok;
			files += rc.res.files_ok;
			t->st->dirs_made += rc.res.dirs_made;
			t->st->bytes_written += rc.res.bytes;
			users_done++;
		}
		if (rc.kind == REC_FAIL) {
			t->st->failed_users++;
			if (first_code == PV_OK) {
				first_code = rc.code;
				snprintf(first_msg, sizeof(first_msg), "%s", rc.msg);
				/* stop the others cleanly: what is written stays, a re-run goes on
				 */
				for (unsigned w = 0; w < started; w++)
					kill(pids[w], SIGTERM);
			}
		}
		pv_progress_bytes(&t->prog, files, bytes);
		/* a signal that came while no read() was waiting interrupted nothing */
		tell_workers(pids, started, &told);
	}
	close(fds[0]);
	for (unsigned w = 0; w < started; w++) {
		int status;

		while (waitpid(pids[w], &status, 0) < 0 && errno == EINTR)
			;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (interrupted && users_done - t->st->failed_users < ntodo)
		return pv_error(PV_EPARTIAL,
				"interrupted by %s after the trees of %lu of %zu users: every file "
				"written is whole; run the same command again to finish",
				interrupted == SIGINT ? "SIGINT" : "SIGTERM",
				users_done - t->st->failed_users + t->st->complete, t->nusers);
	if (first_code != PV_OK)
		return pv_error(first_code, "%s (stopped after %lu of %zu users)", first_msg,
				users_done - 1 + t->st->complete, t->nusers);
	if (r == PV_OK && users_done < ntodo)
		r = pv_error(PV_EBUG, "SMB workers stopped after %lu of %zu users", users_done,
			     ntodo);
	return r;
}

int pv_phases_trees_build_smb(struct pv_phases_trees *t)
{
	size_t *todo = calloc(t->nusers ? t->nusers : 1, sizeof(*todo)), n = 0;
	unsigned workers;
	int r;

	if (!todo)
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < t->nusers; i++)
		if (!t->users[i].complete)
			todo[n++] = i;
	workers = t->workers < n ? t->workers : (unsigned)n;
	if (pv_phases_trees_want_libsmbclient())
		pv_log(PV_LOG_INFO,
		       "trees: %u SMB sessions at once (libsmbclient: a connection per "
		       "user)",
		       workers);
	else
		pv_log(PV_LOG_INFO,
		       "trees: %u SMB connections at once, each logging its users on in "
		       "turn",
		       workers);
	r = build_smb(t, t->pw, todo, n, workers);
	free(todo);
	return r;
}
