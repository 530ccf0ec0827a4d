/* smb/lib_tree.c: building, checking and removing a folder tree over one SMB session.
 *
 * Lean on purpose: smbd spends 2-3 ms of CPU per file it creates (extended attributes, ACL
 * inheritance), so the server is the limit and every request we save is a request smbd does
 * not serve. A file costs exactly create + write + close (one write per MiB); a fresh tree
 * is not listed first; an existing one is listed once, one query per folder. */
#include "smb/smb.h"

#include "smb/internal.h"
#include "util/buf.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK	 (1u << 20) /* bytes per write request at most */
#define ATTR_DIR 0x10	    /* FILE_ATTRIBUTE_DIRECTORY, MS-FSCC 2.6 */

/* "smb://server/share/base[/path]", every component percent-encoded (RFC 3986 unreserved
 * characters and '/' kept) because libsmbclient decodes what it is given. */
static int url(struct pv_buf *b, const struct pv_smb_lib *s, const char *share, const char *base,
	       const char *path)
{
	const char *parts[3] = {share, base, path};
	static const char hex[] = "0123456789ABCDEF";

	pv_buf_reset(b);
	if (pv_buf_addf(b, "smb://%s", s->server) < 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (!parts[i] || !*parts[i])
			continue;
		if (pv_buf_addstr(b, "/") < 0)
			return -1;
		for (const unsigned char *c = (const unsigned char *)parts[i]; *c; c++) {
			char e[3] = {'%', hex[*c >> 4], hex[*c & 15]};
			bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				     (*c >= '0' && *c <= '9') || strchr("-._~/", *c);

			if ((plain ? pv_buf_add(b, c, 1) : pv_buf_add(b, e, 3)) < 0)
				return -1;
		}
	}
	return 0;
}

/* Translate errno from libsmbclient for an operation on base/path (path may be NULL). */
static int fail(struct pv_smb_lib *s, int err, const char *what, const char *share,
		const char *base, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s%s%s", base, rel && *rel ? "/" : "", rel ? rel : "");

	switch (err) {
	case ECONNREFUSED:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENETUNREACH:
		return pv_error(PV_EUNREACH, "SMB %s //%s/%s/%s: %s; is smbd running there?", what,
				s->server, share, path, strerror(err));
	case EACCES:
	case EPERM:
		if (!s->reached)
			return pv_error(PV_ECRED,
					"SMB logon as %s\\%s on '%s' refused, or no access to "
					"//%s/%s/%s (%s)",
					s->workgroup, s->user, s->server, s->server, share, path,
					strerror(err));
		return pv_error(PV_EREMOTE, "SMB %s //%s/%s/%s as %s: %s", what, s->server, share,
				path, s->user, strerror(err));
	case ENOSPC:
	case EDQUOT:
		return pv_error(PV_EREMOTE,
				"the disk of '%s' is full: SMB %s //%s/%s/%s failed (%s)",
				s->server, what, s->server, share, path, strerror(err));
	default:
		return pv_error(PV_EREMOTE, "SMB %s //%s/%s/%s as %s: %s", what, s->server, share,
				path, s->user, strerror(err));
	}
}

/* ---- listing ---- */

struct walk {
	struct pv_smb_lib *s;
	const char *share, *base;
	struct pv_buf u;
};

/* What base/rel holds, into l (paths relative to base). */
static int list_dir(void *arg, const char *rel, struct listing *l)
{
	struct walk *w = arg;
	struct pv_smb_lib *s = w->s;
	const struct libsmb_file_info *fi;
	SMBCFILE *dir;
	int r = PV_OK;

	if (url(&w->u, s, w->share, w->base, rel) < 0)
		return pv_error(PV_EIO, "out of memory");
	if (!(dir = SMBC(smbc_getFunctionOpendir)(s->ctx)(s->ctx, w->u.data)))
		return fail(s, errno, "listing", w->share, w->base, rel);
	s->reached = true;
	while (r == PV_OK &&
	       (fi = SMBC(smbc_getFunctionReaddirPlus)(s->ctx)(s->ctx, dir)) != NULL) {
		char where[512];

		snprintf(where, sizeof(where), "//%s/%s/%s", s->server, w->share, w->base);
		r = listing_entry(l, where, w->base, rel, fi->name, (fi->attrs & ATTR_DIR) != 0,
				  fi->size, 0);
	}
	SMBC(smbc_getFunctionClosedir)(s->ctx)(s->ctx, dir);
	return r;
}

static int scan_sorted(struct pv_smb_lib *s, const char *share, const char *base, struct listing *l)
{
	struct walk w = {s, share, base, PV_BUF_INIT};
	int r = listing_walk(l, list_dir, &w);

	pv_buf_release(&w.u, 0);
	return r;
}

/* ---- building ---- */

static int write_file(struct pv_smb_lib *s, const char *share, const char *base,
		      const struct pv_smb_item *it, size_t index, pv_smb_fill_fn fill, void *ctx,
		      struct pv_buf *u)
{
	SMBCFILE *f;
	uint64_t off = 0;
	int r = PV_OK;

	if (!s->buf) {
		if (!(s->buf = malloc(CHUNK)))
			return pv_error(PV_EIO, "out of memory");
		s->bufsize = CHUNK;
	}
	if (url(u, s, share, base, it->path) < 0)
		return pv_error(PV_EIO, "out of memory");
	f = SMBC(smbc_getFunctionOpen)(s->ctx)(s->ctx, u->data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!f)
		return fail(s, errno, "creating", share, base, it->path);
	s->reached = true;
	while (off < it->size && r == PV_OK) {
		size_t n = it->size - off < s->bufsize ? (size_t)(it->size - off) : s->bufsize;
		ssize_t w;

		fill(ctx, index, off, s->buf, n);
		w = SMBC(smbc_getFunctionWrite)(s->ctx)(s->ctx, f, s->buf, n);
		if (w <= 0)
			r = fail(s, w < 0 ? errno : EIO, "writing", share, base, it->path);
		else
			off += (uint64_t)w;
	}
	/* close reports a failed delayed write (e.g. disk full) too */
	if (SMBC(smbc_getFunctionClose)(s->ctx)(s->ctx, f) < 0 && r == PV_OK)
		r = fail(s, errno, "closing", share, base, it->path);
	/* a file cut short (a full disk) goes: the tree holds whole files only, and a re-run
	 * writes what is missing */
	if (r != PV_OK)
		SMBC(smbc_getFunctionUnlink)(s->ctx)(s->ctx, u->data);
	return r;
}

int pv_smb_lib_tree_build(struct pv_smb_lib *s, const char *share, const char *base,
			  const struct pv_smb_item *items, size_t n, bool fresh,
			  pv_smb_fill_fn fill, void *fill_ctx, pv_smb_tick_fn tick, void *tick_ctx,
			  struct pv_smb_tree_result *res)
{
	struct listing l = {0};
	struct pv_buf u = PV_BUF_INIT;
	int r = PV_OK;

	memset(res, 0, sizeof(*res));
	if (!fresh && (r = scan_sorted(s, share, base, &l)) != PV_OK)
		goto out;
	for (size_t i = 0; i < n && r == PV_OK; i++) {
		const struct pv_smb_item *it = &items[i];
		enum plan p = listing_plan(&l, it, 0, s->server, share, base);

		if (p == PLAN_MISMATCH) {
			r = PV_EREMOTE;
			break;
		}
		if (p == PLAN_KEEP) {
			if (!it->dir)
				res->files_ok++;
			continue;
		}
		if (it->dir) {
			if (url(&u, s, share, base, it->path) < 0) {
				r = pv_error(PV_EIO, "out of memory");
				break;
			}
			if (SMBC(smbc_getFunctionMkdir)(s->ctx)(s->ctx, u.data, 0755) < 0 &&
			    errno != EEXIST) {
				r = fail(s, errno, "making folder", share, base, it->path);
				break;
			}
			s->reached = true;
			res->dirs_made++;
			continue;
		}
		if ((r = write_file(s, share, base, it, i, fill, fill_ctx, &u)) != PV_OK)
			break;
		if (p == PLAN_FIX)
			res->files_fixed++;
		else
			res->files_made++;
		res->bytes += it->size;
		if (tick && tick(tick_ctx, 1, it->size) != 0)
			r = pv_error(PV_EFAIL, "stopped");
	}
out:
	listing_release(&l);
	pv_buf_release(&u, 0);
	return r;
}
