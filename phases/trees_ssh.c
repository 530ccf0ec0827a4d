/* phases/trees_ssh.c: the trees of `server --via ssh`, on the server's disk: tar streams with
 * the user's uid and gid in every header, written by phases/scripts/trees.pl as each user (never
 * as root inside a user's folder: a link the user plants leads only where the user could write
 * anyway), and, for the users whose folder is empty when the fileset's content is the same for
 * everyone, one template sent once and copied into each folder on the server, as each user. */
#include "phases/trees_internal.h"

#include "remote/quote.h"
#include "remote/remote.h"
#include "samba/samba.h"
#include "util/err.h"
#include "util/log.h"
#include "util/tar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SSH_USERS_BATCH 64	    /* users listed and sent per round */
#define TAR_FLUSH	(32u << 20) /* send the tar stream in pieces of about this size */
#define COPY_BATCH	256	    /* users per template-copy round trip */
/* Fewer fresh users than this get their trees in the tar stream, not by the template copy:
 * the template costs the server one more write and one delete per file (2 users x 1000 files
 * of 10 KiB on the lab: 1.95 s by template, 1.3-1.7 s by tar), which pays off once the
 * stream would carry the tree more than a few times. */
#define TEMPLATE_MIN_USERS 4

extern const char pv_phases_trees_sh[];
extern const char pv_phases_trees_pl[];
extern const char pv_phases_send_template_sh[];
extern const char pv_phases_rm_template_sh[];

static int add_dir(struct pv_buf *b, const char *path, unsigned long uid, unsigned long gid,
		   unsigned mode, long long mtime)
{
	struct pv_tar_entry e = {path, true, 0, uid, gid, mode, mtime};

	return pv_tar_add(b, &e, NULL);
}

static int add_file(struct pv_buf *b, const char *path, uint64_t seed, uint64_t size,
		    unsigned long uid, unsigned long gid, long long mtime)
{
	struct pv_tar_entry e = {path, false, size, uid, gid, 0644, mtime};
	char *data;
	int r = pv_tar_add(b, &e, &data);

	if (r == PV_OK)
		pv_fileset_fill(seed, 0, data, (size_t)size);
	return r;
}

int pv_phases_trees_extract(struct pv_phases_trees *t, struct pv_buf *b, const char *what,
			    bool folders)
{
	struct pv_buf sc = PV_BUF_INIT;
	double t0 = pv_now();
	int r;

	if (pv_tar_end(b) != PV_OK)
		return PV_EIO;
	pv_remote_var(&sc, "base", t->pb->server.share_path);
	pv_remote_var(&sc, "mode", "extract");
	pv_remote_var(&sc, "folders", folders ? "1" : "0");
	pv_remote_var(&sc, "prog", pv_phases_trees_pl);
	pv_buf_addstr(&sc, pv_phases_trees_sh);
	r = pv_remote_sh(t->rem, what, &sc, b->data, b->len, NULL, NULL, 3600);
	pv_buf_release(&sc, 0);
	pv_log(PV_LOG_DEBUG, "trees: %zu bytes of tar written in %.3f s", b->len, pv_now() - t0);
	pv_buf_reset(b);
	/* a failed write removed its file (trees.pl): the trees hold whole files only */
	return pv_phases_trees_disk_full(t, r);
}

/* Content 'shared' gives every user the same bytes, so for users whose folder is empty the
 * tree goes over the wire once, into a template folder beside the shares, and the server
 * copies it into each folder: SSH carries one tree, not one per user, and the disk does the
 * rest at its own speed. */
/* The template tpl copied into the empty folders of users b..e-1, as each user (trees.pl). */
static int copy_template(struct pv_phases_trees *t, const char *tpl, size_t b, size_t e)
{
	struct pv_buf sc = PV_BUF_INIT, in = PV_BUF_INIT;
	char path[1024];
	size_t n = 0;
	int r = PV_OK;

	pv_remote_var(&sc, "base", t->pb->server.share_path);
	pv_remote_var(&sc, "mode", "copy");
	pv_remote_var(&sc, "tpl", tpl);
	pv_remote_var(&sc, "prog", pv_phases_trees_pl);
	pv_buf_addstr(&sc, pv_phases_trees_sh);
	for (size_t i = b; i < e && r == PV_OK; i++) {
		struct tuser *u = &t->users[i];

		if (u->nonempty)
			continue;
		if ((r = pv_phases_trees_user_path(t, u, NULL, path, sizeof(path))) != PV_OK)
			break;
		pv_buf_addf(&in, "%lu %lu %s\n", u->uid, u->gid, path);
		n++;
	}
	if (r == PV_OK && n && pv_buf_failed(&in))
		r = pv_error(PV_EIO, "out of memory");
	else if (r == PV_OK && n)
		r = pv_phases_trees_disk_full(t,
					      pv_remote_sh(t->rem,
							   "copying the template into the "
							   "users' folders",
							   &sc, in.data, in.len, NULL, NULL, 3600));
	for (size_t i = b; i < e && r == PV_OK && n; i++) {
		if (t->users[i].nonempty)
			continue;
		t->users[i].done = true;
		t->st->files_made += t->fs->nfiles;
		t->st->dirs_made += t->fs->ndirs;
		t->st->bytes_written += t->fs->bytes;
	}
	if (n)
		pv_phases_trees_progress(t);
	pv_buf_release(&sc, 0);
	pv_buf_release(&in, 0);
	return r;
}

static int ssh_template(struct pv_phases_trees *t)
{
	struct pv_buf tar = PV_BUF_INIT, sc = PV_BUF_INIT, out = PV_BUF_INIT;
	long long now = (long long)time(NULL);
	char tpl[256] = "";
	int r = PV_OK;

	/* the template: every entry of the fileset, owned by root */
	for (size_t j = 0; j < t->fs->n && r == PV_OK; j++) {
		const struct pv_fileset_entry *en = &t->fs->entries[j];

		r = en->dir ? add_dir(&tar, en->path, 0, 0, 0755, now)
			    : add_file(&tar, en->path, pv_fileset_seed(t->fs, en, NULL), en->size,
				       0, 0, now);
	}
	if (r == PV_OK)
		r = pv_tar_end(&tar);
	pv_remote_var(&sc, "base", t->pb->server.share_path);
	pv_buf_addstr(&sc, pv_phases_send_template_sh);
	if (r == PV_OK)
		r = pv_remote_sh(t->rem, "sending the template tree", &sc, tar.data, tar.len, &out,
				 NULL, 3600);
	r = pv_phases_trees_disk_full(t, r);
	if (r == PV_OK) {
		snprintf(tpl, sizeof(tpl), "%s", out.data ? out.data : "");
		tpl[strcspn(tpl, "\n")] = '\0';
		if (strncmp(tpl, "./.provision-tpl.", 17) != 0)
			r = pv_error(PV_EREMOTE, "no template folder made on '%s'",
				     t->pb->server.host.name);
	}
	pv_log(PV_LOG_DEBUG, "trees: template of %zu bytes sent", tar.len);
	for (size_t b = 0; b < t->nusers && r == PV_OK; b += COPY_BATCH)
		r = copy_template(t, tpl, b,
				  b + COPY_BATCH < t->nusers ? b + COPY_BATCH : t->nusers);
	if (tpl[0]) {
		int r2;

		pv_buf_reset(&sc);
		pv_remote_var(&sc, "base", t->pb->server.share_path);
		pv_remote_var(&sc, "tpl", tpl);
		pv_buf_addstr(&sc, pv_phases_rm_template_sh);
		r2 = pv_remote_sh(t->rem, "removing the template", &sc, NULL, 0, NULL, NULL, 600);
		if (r == PV_OK)
			r = r2;
	}
	pv_buf_release(&tar, 0);
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* What user u's tree lacks (against hv, the listing of what it holds) into the tar stream, as
 * its own (its uid and gid), flushed to the server when large. */
static int user_entries(struct pv_phases_trees *t, struct tuser *u, struct have *hv, size_t nh,
			struct pv_buf *tar, long long now)
{
	char path[1024];
	int r = PV_OK;

	for (size_t j = 0; j < t->fs->n && r == PV_OK && !u->done && !u->complete; j++) {
		const struct pv_fileset_entry *en = &t->fs->entries[j];
		struct have *h;

		if ((r = pv_phases_trees_user_path(t, u, en->path, path, sizeof(path))) != PV_OK)
			break;
		h = pv_phases_trees_find(hv, nh, path);
		if (h && h->other)
			h = NULL; /* a link, say: trees.pl removes it (as the user) */
		if (h && h->dir != en->dir)
			return pv_error(PV_EREMOTE,
					"%s/%s on '%s' is a %s where the fileset has a %s; remove "
					"it and run again",
					t->pb->server.share_path, path, t->pb->server.host.name,
					h->dir ? "folder" : "file", en->dir ? "folder" : "file");
		if (en->dir) {
			if (!h) {
				r = add_dir(tar, path, u->uid, u->gid, 0755, now);
				t->st->dirs_made++;
			}
			continue;
		}
		if (h && h->size == en->size) {
			t->st->files_ok++;
			continue;
		}
		if ((r = add_file(tar, path, pv_fileset_seed(t->fs, en, u->name), en->size, u->uid,
				  u->gid, now)) != PV_OK)
			break;
		if (h)
			t->st->files_fixed++;
		else
			t->st->files_made++;
		t->st->bytes_written += en->size;
		if (tar->len >= TAR_FLUSH) {
			r = pv_phases_trees_extract(t, tar, "writing the trees", false);
			pv_phases_trees_progress(t);
		}
	}
	return r;
}

int pv_phases_trees_build_ssh(struct pv_phases_trees *t)
{
	struct pv_buf tar = PV_BUF_INIT, listing = PV_BUF_INIT;
	long long now = (long long)time(NULL);
	size_t fresh = 0;
	int r = PV_OK;

	for (size_t i = 0; i < t->nusers; i++)
		fresh += !t->users[i].nonempty;
	if (t->fs->content == PV_FILESET_CONTENT_SHARED && fresh >= TEMPLATE_MIN_USERS &&
	    (r = ssh_template(t)) != PV_OK)
		return r;
	for (size_t b = 0; b < t->nusers && r == PV_OK; b += SSH_USERS_BATCH) {
		size_t e = b + SSH_USERS_BATCH < t->nusers ? b + SSH_USERS_BATCH : t->nusers;
		struct have *hv = NULL;
		size_t nh = 0;
		bool any = false;

		for (size_t i = b; i < e; i++)
			any |= !t->users[i].complete && !t->users[i].done;
		if (!any)
			continue;
		/* what the incomplete folders hold, file by file */
		for (size_t i = b; i < e; i++)
			if (t->users[i].complete)
				t->users[i].nonempty = false; /* not listed again */
		r = pv_phases_trees_listing(t, b, e, false, &listing, &hv, &nh);
		for (size_t i = b; i < e && r == PV_OK; i++)
			r = user_entries(t, &t->users[i], hv, nh, &tar, now);
		free(hv);
		if (r == PV_OK && tar.len)
			r = pv_phases_trees_extract(t, &tar, "writing the trees", false);
		pv_phases_trees_progress(t);
	}
	pv_buf_release(&tar, 0);
	pv_buf_release(&listing, 0);
	return r;
}
