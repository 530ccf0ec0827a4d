/* smb/sync.c: our SMB2 client's synchronous calls (see smb.h): each call runs the
 * connection's own engine loop (smb/async.h) until its answers come, as Samba's libcli/smb
 * wraps its asynchronous calls. The engine does every message, signature and encryption; this
 * file keeps the waiting and the deadlines; the tree builder on it is smb/build.c.
 *
 * Why not libsmbclient for trees: smbd forks a process per TCP connection, and that fork (page
 * tables of a big parent, then dlopen and talloc in the child) costs it 45-85 ms of CPU on the
 * lab, which libsmbclient pays once per user because it makes a connection per logon. SMB2
 * lets one connection carry the sessions of many users one after another (MS-SMB2 3.3.5.5),
 * so a worker here keeps one connection and logs each of its users on and off over it.
 *
 * The engine checks a 3.0 or 3.0.2 negotiation (FSCTL_VALIDATE_NEGOTIATE_INFO after each
 * session's first tree connect) for this client as for the driver. Logon is NTLMv2 in SPNEGO
 * (smb/ntlm.c: with the MIC, the target name and the channel bindings). */
#include "smb/smb.h"

#include "smb/async.h"
#include "smb/internal.h"
#include "smb/smb2.h"
#include "util/err.h"
#include "util/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool pv_smb_sync_lost(const struct pv_smb_sync *c)
{
	return !c || pv_smb_lost(c->c);
}

const char *pv_smb_sync_describe(const struct pv_smb_sync *c)
{
	if (!c || !c->c)
		return "";
	return c->desc[0] ? c->desc : pv_smb_describe(c->c);
}

int pv_smb_sync_local_port(const struct pv_smb_sync *c)
{
	return c ? pv_smb_local_port(c->c) : 0;
}

bool pv_smb_sync_signing(const struct pv_smb_sync *c)
{
	return c && c->sign;
}

bool pv_smb_sync_encrypting(const struct pv_smb_sync *c)
{
	return c && c->enc;
}

/* A span for a message: "30 s", or "750 ms" when not whole seconds (tests use short ones). */
static const char *span(int64_t ms, char *buf, size_t len)
{
	if (ms % 1000 == 0)
		snprintf(buf, len, "%lld s", (long long)(ms / 1000));
	else
		snprintf(buf, len, "%lld ms", (long long)ms);
	return buf;
}

static const char *status_text(uint32_t st, char *buf, size_t len)
{
	const char *n = smb2_status_name(st);

	if (st == ST_DISK_FULL || st == ST_QUOTA_EXCEEDED)
		snprintf(buf, len, "No space left on device (%s)", n);
	else if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "NT status 0x%08x", st);
	return buf;
}

/* ---- waiting ---- */

/* The build's deadline passed: the connection goes (answers may still be on their way, and
 * nothing could tell them from new ones). */
static void late(struct pv_smb_sync *s)
{
	char a[32], b[32];

	s->lost_by_us = true;
	pv_smb_abort(s->c, PV_EUNREACH,
		     "SMB to '%s': the tree build as %s passed its deadline of %s (the timeout %s "
		     "times %d + items + MiB written)",
		     s->server, s->user, span(s->build_ms, a, sizeof(a)),
		     span(s->tmo, b, sizeof(b)), BUILD_T);
}

/* Run the loop until done is true (a callback sets it), the build's deadline aside. */
void sync_run_until(struct pv_smb_sync *s, const bool *done)
{
	while (!*done) {
		double t = pv_now();
		int wait = 100;

		if (s->build_due && t >= s->build_due && !pv_smb_lost(s->c)) {
			late(s);
			continue; /* the callbacks came with the failure */
		}
		if (s->build_due && (s->build_due - t) * 1000 < wait)
			wait = (int)((s->build_due - t) * 1000) + 1;
		if (pv_smb_loop_run(s->l, wait) != PV_OK) {
			pv_smb_abort(s->c, PV_EIO, "%s", pv_errmsg());
			break;
		}
	}
}

bool sync_turn(struct pv_smb_sync *s)
{
	if (pv_smb_loop_run(s->l, 100) != PV_OK) {
		pv_smb_abort(s->c, PV_EIO, "%s", pv_errmsg());
		return false;
	}
	if (s->build_due && pv_now() >= s->build_due && !pv_smb_lost(s->c))
		late(s);
	return true;
}

void sync_on_call(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	struct sync_call *k = arg;

	pv_smb_yield(c); /* the next request goes after the loop returns: its answer after it */
	k->done = true;
	k->code = d->code;
	k->status = d->status;
	memcpy(k->fid, d->fid, 16);
	snprintf(k->msg, sizeof(k->msg), "%s", d->msg ? d->msg : "");
}

/* Wait for k (whose request was queued with r: PV_OK, or the failure recorded); its code. */
int sync_wait(struct pv_smb_sync *s, struct sync_call *k, int r)
{
	if (r != PV_OK)
		return r;
	sync_run_until(s, &k->done);
	if (k->code != PV_OK)
		return pv_error(k->code, "%s", k->msg);
	return PV_OK;
}

/* ---- connection ---- */

static void on_open(struct pv_smb_conn *c, void *arg, const struct pv_smb_done *d)
{
	sync_on_call(c, arg, d);
}

/* A connection on its own loop; *out is set even on failure (pv_smb_sync_connect's contract).
 * fd >= 0: over that socket (the tests'), else to server's port 445. */
static int connect_to(const char *server, int fd, int64_t timeout_ms, struct pv_smb_sync **out)
{
	struct pv_smb_sync *s = calloc(1, sizeof(*s));
	struct pv_smb_open_opts o = {0};
	struct sync_call k = {0};
	int r;

	*out = s;
	if (!s || !(s->server = strdup(server))) {
		if (fd >= 0)
			close(fd);
		return pv_error(PV_EIO, "out of memory");
	}
	s->tmo = timeout_ms > 0 ? timeout_ms : 10000;
	if ((r = pv_smb_loop_new(&s->l)) != PV_OK) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	o.host = server;
	o.server = server;
	o.timeout_ms = (int)(ANSWER_T * s->tmo);
	o.pipelined = true;
	k.s = s;
	r = fd >= 0 ? smba_open_fd(s->l, fd, &o, on_open, &k, &s->c)
		    : pv_smb_open(s->l, &o, on_open, &k, &s->c);
	return sync_wait(s, &k, r);
}

int pv_smb_sync_connect(const char *server, int timeout, struct pv_smb_sync **out)
{
	return connect_to(server, -1, (int64_t)(timeout > 0 ? timeout : 10) * 1000, out);
}

int smb2_connect_fd(int fd, const char *server, int timeout_ms, struct pv_smb_sync **out)
{
	return connect_to(server, fd, timeout_ms, out);
}

void pv_smb_sync_free(struct pv_smb_sync *s)
{
	if (!s)
		return;
	pv_smb_loop_free(s->l); /* closes c */
	free(s->server);
	free(s->who);
	free(s);
}

int pv_smb_sync_logon(struct pv_smb_sync *s, const char *workgroup, const char *user,
		      const struct pv_secret *password)
{
	struct sync_call k = {s};
	char *who = strdup(user);

	if (!who)
		return pv_error(PV_EIO, "out of memory");
	free(s->who);
	s->who = who;
	if (pv_smb_lost(s->c))
		return pv_error(PV_EREMOTE, "SMB to '%s': the connection is gone", s->server);
	return sync_wait(s, &k,
			 pv_smb_logon(s->c, workgroup, user, password, NULL, NULL,
				      PV_SMB_ENCRYPT_AUTO, sync_on_call, &k));
}

int pv_smb_sync_tree(struct pv_smb_sync *s, const char *share)
{
	struct sync_call k = {s};
	char st[96];
	int r;

	if ((r = sync_wait(s, &k, pv_smb_tree(s->c, share, sync_on_call, &k))) != PV_OK)
		return r;
	if (k.status == ST_OK) {
		snprintf(s->desc, sizeof(s->desc), "%s", pv_smb_describe(s->c));
		s->enc = pv_smb_encrypting(s->c);
		s->sign = pv_smb_signing(s->c);
		return PV_OK;
	}
	return pv_error(k.status == ST_BAD_NETWORK_NAME ? PV_ECONFIG
			: k.status == ST_ACCESS_DENIED	? PV_ECRED
							: PV_EREMOTE,
			"SMB tree connect to //%s/%s as %s: %s%s", s->server, share,
			s->who ? s->who : "", status_text(k.status, st, sizeof(st)),
			k.status == ST_BAD_NETWORK_NAME ? " (no such share)" : "");
}

int pv_smb_sync_logoff(struct pv_smb_sync *s)
{
	struct sync_call k = {s};

	return sync_wait(s, &k, pv_smb_logoff(s->c, sync_on_call, &k));
}

/* ---- failures on a path ---- */

int sync_path_fail(struct pv_smb_sync *s, uint32_t status, const char *what, const char *rel)
{
	char st[96], path[1024];

	snprintf(path, sizeof(path), "%s%s%s", s->base, rel && *rel ? "/" : "", rel ? rel : "");
	status_text(status, st, sizeof(st));
	if (status == ST_DISK_FULL || status == ST_QUOTA_EXCEEDED)
		return pv_error(PV_EREMOTE,
				"the disk of '%s' is full: SMB %s //%s/%s/%s failed (%s)",
				s->server, what, s->server, s->share, path, st);
	return pv_error(PV_EREMOTE, "SMB %s //%s/%s/%s as %s: %s", what, s->server, s->share, path,
			s->user, st);
}

/* The share-relative name of base/rel ("" rel: base itself) into full. rel comes from the
 * fileset or from a listing, which keeps to PATH_LIMIT already. */
int sync_name(const struct pv_smb_sync *s, const char *rel, char full[PATH_LIMIT + 1])
{
	size_t bl = strlen(s->base), rl = strlen(rel), len = bl + (rl ? 1 + rl : 0);

	if (len > PATH_LIMIT)
		return pv_error(PV_ECONFIG,
				"SMB //%s/%s: the path '%s/%.*s%s%s' is %zu bytes, more than %d; "
				"shorten the fileset's names",
				s->server, s->share, s->base, rl > 600 ? 300 : (int)rl, rel,
				rl > 600 ? "..." : "", rl > 600 ? rel + rl - 300 : "", len,
				PATH_LIMIT);
	snprintf(full, PATH_LIMIT + 1, "%s%s%s", s->base, rl ? "/" : "", rel); /* checked */
	return PV_OK;
}

/* Open base/rel with one CREATE and wait for its id; a refusal is reported as `what` failed. */
int sync_open(struct pv_smb_sync *s, const char *rel, uint32_t access, uint32_t disposition,
	      uint32_t options, const char *what, uint8_t fid[16])
{
	char full[PATH_LIMIT + 1];
	struct sync_call k = {s};
	int r;

	if ((r = sync_name(s, rel, full)) != PV_OK ||
	    (r = sync_wait(s, &k,
			   pv_smb_create(s->c, full, access, disposition, options, sync_on_call,
					 &k))) != PV_OK)
		return r;
	if (k.status != ST_OK)
		return sync_path_fail(s, k.status, what, rel);
	memcpy(fid, k.fid, 16);
	return PV_OK;
}

/* CLOSE fid and wait (its outcome does not matter: the caller is done with the file). */
void sync_close(struct pv_smb_sync *s, const uint8_t fid[16])
{
	struct sync_call k = {s};

	if (!pv_smb_lost(s->c))
		sync_wait(s, &k, pv_smb_closefile(s->c, fid, sync_on_call, &k));
}
