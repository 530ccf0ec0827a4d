/* provision/trees.c: the per-user home trees of `provision server`: every user's folder
 * <share_path>/<share>/<user> (the user at position i, counting across clients, lives in share
 * i mod K + 1) filled with the playbook's fileset.
 *
 *   --via smb (default): as each user, over SMB (NTLM with the users' shared password), so
 *     ownership and ACLs are what smbd gives that user. libsmbclient keeps process-wide state,
 *     so the users are spread over worker processes (one session each at a time) that report
 *     progress through a pipe; the first failure stops them all.
 *   --via ssh: on the server's disk, a tar stream with the user's mapped uid/gid in every
 *     header piped into one `tar -x` per batch, for large filesets.
 *
 * Either way the users' folders are first made over SSH, owned by the user (uid/gid from
 * getent through winbind: a user missing from the domain is found here, before any data
 * moves), and a re-run lists what exists and writes only missing files and files of the
 * wrong size. */
#include "provision/provision.h"

#include "fileset/fileset.h"
#include "playbooks/names.h"
#include "remote/remote.h"
#include "smb/smb.h"
#include "util/buf.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/strset.h"
#include "util/tar.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS_MIN	2
#define WORKERS_MAX	64
#define GETENT_BATCH	500	    /* names per getent call */
#define SSH_USERS_BATCH 64	    /* users listed and sent per round */
#define TAR_FLUSH	(32u << 20) /* send the tar stream in pieces of about this size */
#define COPY_BATCH	256	    /* users per template-copy round trip */
#define TICK_FILES	32
/* Fewer fresh users than this get their trees in the tar stream, not by the template copy:
 * the template costs the server one more write and one delete per file (2 users x 1000 files
 * of 10 KiB on the lab: 1.95 s by template, 1.3-1.7 s by tar), which pays off once the
 * stream would carry the tree more than a few times. */
#define TEMPLATE_MIN_USERS 4

struct tuser {
	char name[256];
	unsigned share; /* 1..K */
	unsigned long uid, gid;
	bool nonempty; /* its folder holds something already */
	bool done;     /* built by the template copy */
};

struct pv_trees {
	struct pv_ctx *ctx;
	const struct pv_playbook *pb;
	struct pv_remote *rem;
	struct pv_fileset *fs;
	struct pv_smb_item *items;
	struct tuser *users;
	size_t nusers;
	char (*shares)[256];
	struct pv_tree_stats *st;
	struct pv_secret *pw; /* the users' password, for SMB */
	const char *sep;      /* winbind separator from the probe ("" when unknown) */
	unsigned workers;
	/* progress */
	unsigned long done_files;
	unsigned long long done_bytes;
	unsigned long total_files;
	double t0, last_draw;
	bool drawn;
};

/* ---- progress: files/s and MB/s on a terminal, a line every 10 s otherwise ---- */

static void progress(struct pv_trees *t, bool final)
{
	double now = pv_now(), el = now - t->t0;
	double fps = el > 0 ? (double)t->done_files / el : 0;
	double mbs = el > 0 ? (double)t->done_bytes / 1e6 / el : 0;
	unsigned pct = t->total_files
			       ? (unsigned)(100.0 * (double)t->done_files / (double)t->total_files)
			       : 100;

	if (t->ctx->cli.verbosity < 0)
		return;
	if (final) {
		if (t->ctx->progress && t->drawn)
			fputs("\r\033[K", stderr);
		return;
	}
	if (now - t->last_draw < (t->ctx->progress ? 0.1 : 10.0))
		return;
	t->last_draw = now;
	t->drawn = true;
	if (t->ctx->progress)
		fprintf(stderr, "\r\033[Ktrees (%s): %lu/%lu files %3u%% %.0f files/s %.1f MB/s",
			t->st->via, t->done_files, t->total_files, pct, fps, mbs);
	else
		fprintf(stderr,
			"provision: trees (%s): %lu/%lu files (%u%%, %.0f files/s, %.1f MB/s)\n",
			t->st->via, t->done_files, t->total_files, pct, fps, mbs);
}

/* ---- users ---- */

static int list_users(struct pv_trees *t)
{
	const struct pv_playbook *pb = t->pb;
	unsigned long per = pb->users.per_client;
	size_t i = 0;
	int r;

	if (pb->nclients == 0)
		return pv_error(PV_ECONFIG,
				"the playbook has no clients: users are made per client");
	t->nusers = pb->nclients * per;
	if (!(t->users = calloc(t->nusers, sizeof(*t->users))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t c = 0; c < pb->nclients; c++)
		for (unsigned long n = 1; n <= per; n++, i++) {
			r = pv_names_expand(pb->users.name_template, pb->clients[c].name,
					    pb->server.host.name, n, 0, t->users[i].name,
					    sizeof(t->users[i].name));
			if (r != PV_OK)
				return r;
			t->users[i].share = (unsigned)(i % pb->server.shares) + 1;
		}
	return PV_OK;
}

/* uid and gid of every user through the server's NSS (winbind), in batches. */
static int map_users(struct pv_trees *t)
{
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT;
	size_t missing = 0;
	char first[256] = "";
	size_t dlen = strlen(t->pb->domain.netbios);
	int r = PV_OK;

	for (size_t b = 0; b < t->nusers && r == PV_OK; b += GETENT_BATCH) {
		size_t e = b + GETENT_BATCH < t->nusers ? b + GETENT_BATCH : t->nusers;

		pv_buf_reset(&sc);
		pv_buf_reset(&out);
		/* Samba keeps name -> SID answers in its cache (gencache) for 'winbind cache
		 * time': a user deleted and made again meanwhile would map to the old uid, and
		 * its folder would not be its own. */
		pv_buf_addstr(&sc, b == 0 ? "net cache flush >/dev/null 2>&1\n" : "");
		if (*t->sep) {
			pv_buf_addstr(&sc, "sep=");
			pv_remote_quote(&sc, t->sep);
			pv_buf_addstr(&sc, "\nd=");
		} else {
			pv_buf_addstr(&sc, "sep=$(wbinfo --separator 2>/dev/null) || sep='\\'\nd=");
		}
		pv_remote_quote(&sc, t->pb->domain.netbios);
		pv_buf_addstr(&sc, "\ngetent passwd");
		for (size_t i = b; i < e; i++) {
			pv_buf_addstr(&sc, " \"$d$sep\"");
			pv_remote_quote(&sc, t->users[i].name);
		}
		pv_buf_addstr(&sc, " | cut -d: -f1,3,4\nexit 0\n");
		if (!sc.data) {
			r = pv_error(PV_EIO, "out of memory");
			break;
		}
		if ((r = pv_srv_run(t->rem, "looking up the users (getent)", sc.data, NULL, 0, &out,
				    NULL, 120)) != PV_OK)
			break;
		/* lines "name:uid:gid"; winbind may return the name in another case */
		for (size_t i = b; i < e; i++)
			t->users[i].uid = (unsigned long)-1;
		for (char *line = out.data, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char name[256];
			unsigned long uid, gid;

			if ((nl = strchr(line, '\n')))
				*nl = '\0';
			if (sscanf(line, "%255[^:]:%lu:%lu", name, &uid, &gid) != 3)
				continue;
			/* "LAB\\name" (any separator), or just "name" with winbind's default domain
			 */
			if (strlen(name) > dlen &&
			    strncasecmp(name, t->pb->domain.netbios, dlen) == 0)
				memmove(name, name + dlen + 1, strlen(name + dlen + 1) + 1);
			for (size_t i = b; i < e; i++)
				if (t->users[i].uid == (unsigned long)-1 &&
				    strcasecmp(t->users[i].name, name) == 0) {
					t->users[i].uid = uid;
					t->users[i].gid = gid;
					break;
				}
		}
		for (size_t i = b; i < e; i++)
			if (t->users[i].uid == (unsigned long)-1 && !missing++)
				snprintf(first, sizeof(first), "%s", t->users[i].name);
	}
	if (r == PV_OK && missing)
		r = pv_error(PV_EFAIL,
			     "%zu of %zu users are not in the domain as '%s' sees it (first: "
			     "'%s\\%s'); run provision dc first (same lab, same --users)",
			     missing, t->nusers, t->pb->server.host.name, t->pb->domain.netbios,
			     first);
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* ---- tar (util/tar.h) ---- */

static int tar_header(struct pv_buf *b, const char *path, bool dir, unsigned long long size,
		      unsigned long uid, unsigned long gid, unsigned mode, long long mtime)
{
	struct pv_tar_entry e = {path, dir, size, uid, gid, mode, mtime};

	return pv_tar_add(b, &e, NULL);
}

static int tar_file(struct pv_buf *b, const char *path, uint64_t seed, uint64_t size,
		    unsigned long uid, unsigned long gid, unsigned mode, long long mtime)
{
	struct pv_tar_entry e = {path, false, size, uid, gid, mode, mtime};
	char *data;
	int r = pv_tar_add(b, &e, &data);

	if (r == PV_OK)
		pv_fileset_fill(seed, 0, data, (size_t)size);
	return r;
}

static void prune(struct pv_trees *t, size_t b, size_t e);

/* r from a command on the server: when it failed for want of space, say so and where. */
static int disk_full(const struct pv_trees *t, int r)
{
	if (r == PV_OK || !strstr(pv_errmsg(), "No space left"))
		return r;
	return pv_error(PV_EREMOTE, "the disk of '%s' is full under %s: %s",
			t->pb->server.host.name, t->pb->server.share_path, pv_errmsg());
}

/* Extract what b holds (a tar stream, ended here, of users[ub..ue)) under share_path, as root
 * keeping the numeric owners of the headers. */
static int tar_send(struct pv_trees *t, struct pv_buf *b, const char *what, size_t ub, size_t ue)
{
	struct pv_buf cmd = PV_BUF_INIT;
	double t0 = pv_now();
	int r;

	if (pv_tar_end(b) != PV_OK)
		return PV_EIO;
	pv_buf_addstr(&cmd, "cd ");
	pv_remote_quote(&cmd, t->pb->server.share_path);
	pv_buf_addstr(&cmd, " && tar -x -f - --numeric-owner --same-owner --same-permissions");
	if (!cmd.data)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(t->rem, what, cmd.data, b->data, b->len, NULL, NULL, 3600);
	pv_buf_release(&cmd, 0);
	pv_log(PV_LOG_DEBUG, "trees: %zu bytes of tar extracted in %.3f s", b->len, pv_now() - t0);
	if (r != PV_OK && strstr(pv_errmsg(), "No space left")) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s",
			 pv_errmsg()); /* prune's commands may overwrite it */
		prune(t, ub, ue);
		pv_error(r, "%s", msg);
		r = disk_full(t, r);
	}
	pv_buf_reset(b);
	return r;
}

static int user_path(const struct pv_trees *t, const struct tuser *u, const char *rel, char *out,
		     size_t len)
{
	int n = snprintf(out, len, "%s/%s%s%s", t->shares[u->share - 1], u->name, rel ? "/" : "",
			 rel ? rel : "");

	return n < 0 || (size_t)n >= len ? pv_error(PV_ECONFIG, "path too long: %s", out) : PV_OK;
}

/* Every user's folder, owned by the user, mode 0700; and which hold something already. */
static int make_user_dirs(struct pv_trees *t)
{
	struct pv_buf tar = PV_BUF_INIT, sc = PV_BUF_INIT, out = PV_BUF_INIT;
	long long now = (long long)time(NULL);
	char path[1024];
	int r = PV_OK;

	for (size_t i = 0; i < t->nusers && r == PV_OK; i++) {
		struct tuser *u = &t->users[i];

		if ((r = user_path(t, u, NULL, path, sizeof(path))) == PV_OK)
			r = tar_header(&tar, path, true, 0, u->uid, u->gid, 0700, now);
	}
	if (r == PV_OK)
		r = tar_send(t, &tar, "making the users' folders", 0, 0);
	pv_log(PV_LOG_DEBUG, "trees: folders sent at %.3f s", pv_now() - t->t0);
	/* folders with something in them: one find for all */
	pv_buf_addstr(&sc, "cd ");
	pv_remote_quote(&sc, t->pb->server.share_path);
	pv_buf_addstr(&sc, " || exit 1\nfind");
	for (unsigned k = 0; k < t->pb->server.shares; k++) {
		pv_buf_addstr(&sc, " ");
		pv_remote_quote(&sc, t->shares[k]);
	}
	pv_buf_addstr(&sc, " -mindepth 1 -maxdepth 1 -type d ! -empty -print\n");
	if (r == PV_OK && !sc.data)
		r = pv_error(PV_EIO, "out of memory");
	if (r == PV_OK)
		r = pv_srv_run(t->rem, "looking at the users' folders", sc.data, NULL, 0, &out,
			       NULL, 300);
	if (r == PV_OK) {
		struct pv_strset *ne = pv_strset_new();

		if (!ne)
			r = pv_error(PV_EIO, "out of memory");
		for (char *line = out.data, *nl; r == PV_OK && line && *line;
		     line = nl ? nl + 1 : NULL) {
			if ((nl = strchr(line, '\n')))
				*nl = '\0';
			if (pv_strset_add(ne, line) < 0)
				r = pv_error(PV_EIO, "out of memory");
		}
		for (size_t i = 0; r == PV_OK && i < t->nusers; i++) {
			user_path(t, &t->users[i], NULL, path, sizeof(path));
			t->users[i].nonempty = pv_strset_has(ne, path);
		}
		pv_strset_free(ne);
	}
	pv_buf_release(&tar, 0);
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* ---- --via ssh ---- */

struct have {
	char *path;
	bool dir;
	unsigned long long size;
};

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct have *)a)->path, ((const struct have *)b)->path);
}

/* What the non-empty folders among users[b..e) hold: "type size path" lines from find. */
static int ssh_listing(struct pv_trees *t, size_t b, size_t e, struct pv_buf *out, struct have **hv,
		       size_t *nh)
{
	struct pv_buf sc = PV_BUF_INIT;
	size_t n = 0, cap = 0;
	char path[1024];
	bool any = false;
	int r;

	*hv = NULL;
	*nh = 0;
	pv_buf_reset(out);
	pv_buf_addstr(&sc, "cd ");
	pv_remote_quote(&sc, t->pb->server.share_path);
	pv_buf_addstr(&sc, " || exit 1\nfind");
	for (size_t i = b; i < e; i++) {
		if (!t->users[i].nonempty)
			continue;
		any = true;
		user_path(t, &t->users[i], NULL, path, sizeof(path));
		pv_buf_addstr(&sc, " ");
		pv_remote_quote(&sc, path);
	}
	pv_buf_addstr(&sc, " -mindepth 1 -printf '%y %s %p\\n'\n");
	if (!any) {
		pv_buf_release(&sc, 0);
		return PV_OK;
	}
	if (!sc.data)
		return pv_error(PV_EIO, "out of memory");
	r = pv_srv_run(t->rem, "listing the users' trees", sc.data, NULL, 0, out, NULL, 600);
	pv_buf_release(&sc, 0);
	for (char *line = out->data, *nl; r == PV_OK && line && *line; line = nl ? nl + 1 : NULL) {
		char type, *sp;
		unsigned long long size;

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (sscanf(line, "%c %llu", &type, &size) != 2 || !(sp = strchr(line + 2, ' ')))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct have *p = realloc(*hv, nc * sizeof(*p));

			if (!p) {
				r = pv_error(PV_EIO, "out of memory");
				break;
			}
			*hv = p;
			cap = nc;
		}
		(*hv)[n++] = (struct have){sp + 1, type == 'd', size}; /* points into out */
	}
	if (n)
		qsort(*hv, n, sizeof(**hv), by_path);
	*nh = n;
	return r;
}

/* After a failed extraction (a full disk): tar leaves files cut short and goes on with the
 * next ones, so every file of users[b..e) whose size is not the fileset's is removed, in one
 * command; the tree then holds whole files only and a re-run writes the rest. Best effort:
 * the caller reports the first failure. */
static void prune(struct pv_trees *t, size_t b, size_t e)
{
	struct pv_buf listing = PV_BUF_INIT, rm = PV_BUF_INIT, sc = PV_BUF_INIT;
	struct have *hv = NULL;
	size_t nh = 0, n = 0;
	char path[1024];

	for (size_t i = b; i < e; i++)
		t->users[i].nonempty = true; /* list them all */
	if (ssh_listing(t, b, e, &listing, &hv, &nh) != PV_OK)
		goto out;
	for (size_t i = b; i < e; i++)
		for (size_t j = 0; j < t->fs->n; j++) {
			const struct pv_fileset_entry *en = &t->fs->entries[j];
			struct have key, *h;

			if (en->dir || user_path(t, &t->users[i], en->path, path, sizeof(path)))
				continue;
			key.path = path;
			h = nh ? bsearch(&key, hv, nh, sizeof(*hv), by_path) : NULL;
			if (h && !h->dir && h->size != en->size) {
				pv_buf_add(&rm, path, strlen(path) + 1);
				n++;
			}
		}
	if (n == 0)
		goto out;
	pv_buf_addstr(&sc, "cd ");
	pv_remote_quote(&sc, t->pb->server.share_path);
	pv_buf_addstr(&sc, " && xargs -0 rm -f --");
	if (sc.data && rm.data &&
	    pv_srv_run(t->rem, "removing files cut short", sc.data, rm.data, rm.len, NULL, NULL,
		       600) == PV_OK)
		pv_log(PV_LOG_INFO, "removed %zu files cut short by the full disk", n);
out:
	free(hv);
	pv_buf_release(&listing, 0);
	pv_buf_release(&rm, 0);
	pv_buf_release(&sc, 0);
}

/* The copier: users on stdin, "uid gid folder" lines. Starting a process costs ~20 ms on a
 * busy server, more than copying a hundred small files, so one perl (Essential on Debian and
 * present on most servers) copies the template into many folders and sets the owner as it
 * goes; without perl, cp -r and chown -R per user. One copier per server core (at most 8),
 * each with a share of the users (GNU split round robin), since one copier keeps one core
 * busy and the disk has more to give (on the lab: 2 cores, 2000 files copied in 0.55 s by
 * one, the same as cp -r). */
static const char copy_script[] =
	"\ncopy() {\n"
	"if command -v perl >/dev/null 2>&1; then\n"
	"perl -e '\n"
	"use strict; my $tpl = shift; my (@d, @f);\n"
	"sub walk { my $r = shift; opendir(my $h, \"$tpl/$r\") or die \"$tpl/$r: $!\\n\";\n"
	"  for my $e (sort grep { !/^\\.\\.?$/ } readdir $h) {\n"
	"    my $p = $r eq \"\" ? $e : \"$r/$e\";\n"
	"    if (-d \"$tpl/$p\") { push @d, $p; walk($p) } else { push @f, $p } } }\n"
	"walk(\"\");\n"
	"while (my $l = <STDIN>) { chomp $l; my ($u, $g, $to) = split / /, $l, 3;\n"
	"  for my $p (@d) { mkdir(\"$to/$p\", 0755) or $!{EEXIST} or die \"$to/$p: $!\\n\";\n"
	"    chown($u, $g, \"$to/$p\") or die \"$to/$p: $!\\n\" }\n"
	"  for my $p (@f) { open(my $i, \"<\", \"$tpl/$p\") or die \"$tpl/$p: $!\\n\";\n"
	"    open(my $o, \">\", \"$to/$p\") or die \"$to/$p: $!\\n\"; binmode $i; binmode $o;\n"
	"    my $b; while (my $n = sysread($i, $b, 1048576)) { my $d = 0;\n"
	"      while ($d < $n) { my $w = syswrite($o, $b, $n - $d, $d);\n"
	"        defined($w) or do { my $e = $!; unlink \"$to/$p\"; die \"$to/$p: $e\\n\" };\n"
	"        $d += $w } }\n"
	"    close($o) or do { my $e = $!; unlink \"$to/$p\"; die \"$to/$p: $e\\n\" };\n"
	"    close($i); chown($u, $g, \"$to/$p\") or die \"$to/$p: $!\\n\" }\n"
	"}' \"$tpl\"\n"
	"else\n"
	"while read -r u g to; do cp -r \"$tpl\"/. \"$to\"/ && chown -R \"$u:$g\" \"$to\" || "
	"return 1; done\n"
	"fi\n"
	"}\n"
	"list=$(mktemp)\n"
	"cat >\"$list\"\n"
	"n=$(nproc 2>/dev/null || echo 1)\n"
	"[ \"$n\" -le 8 ] || n=8\n"
	"[ \"$n\" -le \"$(wc -l <\"$list\")\" ] || n=$(wc -l <\"$list\")\n"
	"rc=0\n"
	"if [ \"$n\" -gt 1 ] && split -n \"r/$n\" \"$list\" \"$list.\" 2>/dev/null; then\n"
	"  pids=\n"
	"  for f in \"$list\".*; do copy <\"$f\" & pids=\"$pids $!\"; done\n"
	"  for p in $pids; do wait \"$p\" || rc=$?; done\n"
	"else\n"
	"  copy <\"$list\" || rc=$?\n"
	"fi\n"
	"rm -f \"$list\" \"$list\".*\n"
	"exit $rc\n";

/* Content 'shared' gives every user the same bytes, so for users whose folder is empty the
 * tree goes over the wire once, into a template folder beside the shares, and the server
 * copies it into each folder (cp -r, then chown -R to the user): SSH carries one tree, not
 * one per user, and the disk does the rest at its own speed. */
static int ssh_template(struct pv_trees *t)
{
	struct pv_buf tar = PV_BUF_INIT, sc = PV_BUF_INIT, out = PV_BUF_INIT;
	long long now = (long long)time(NULL);
	char tpl[256] = "", path[1024];
	int r = PV_OK;

	/* the template: every entry of the fileset, owned by root */
	for (size_t j = 0; j < t->fs->n && r == PV_OK; j++) {
		const struct pv_fileset_entry *en = &t->fs->entries[j];

		r = en->dir ? tar_header(&tar, en->path, true, 0, 0, 0, 0755, now)
			    : tar_file(&tar, en->path, pv_fileset_seed(t->fs, en, NULL), en->size, 0,
				       0, 0644, now);
	}
	if (r == PV_OK)
		r = pv_tar_end(&tar);
	pv_buf_addstr(&sc, "set -e\ncd ");
	pv_remote_quote(&sc, t->pb->server.share_path);
	pv_buf_addstr(
		&sc,
		"\nrm -rf ./.provision-tpl.*\n"
		"tpl=$(mktemp -d ./.provision-tpl.XXXXXX)\n"
		"tar -x -f - -C \"$tpl\" --no-same-owner || { e=$?; rm -rf \"$tpl\"; exit $e; }\n"
		"echo \"$tpl\"\n");
	if (r == PV_OK && !sc.data)
		r = pv_error(PV_EIO, "out of memory");
	if (r == PV_OK)
		r = pv_srv_run(t->rem, "sending the template tree", sc.data, tar.data, tar.len,
			       &out, NULL, 3600);
	r = disk_full(t, r);
	if (r == PV_OK) {
		snprintf(tpl, sizeof(tpl), "%s", out.data ? out.data : "");
		tpl[strcspn(tpl, "\n")] = '\0';
		if (strncmp(tpl, "./.provision-tpl.", 17) != 0)
			r = pv_error(PV_EREMOTE, "no template folder made on '%s'",
				     t->pb->server.host.name);
	}
	pv_log(PV_LOG_DEBUG, "trees: template of %zu bytes sent at %.3f s", tar.len,
	       pv_now() - t->t0);
	for (size_t b = 0; b < t->nusers && r == PV_OK; b += COPY_BATCH) {
		size_t e = b + COPY_BATCH < t->nusers ? b + COPY_BATCH : t->nusers, n = 0;

		pv_buf_reset(&sc);
		pv_buf_reset(&out);
		pv_buf_addstr(&sc, "set -e\ncd ");
		pv_remote_quote(&sc, t->pb->server.share_path);
		pv_buf_addstr(&sc, "\ntpl=");
		pv_remote_quote(&sc, tpl);
		pv_buf_addstr(&sc, copy_script);
		for (size_t i = b; i < e && r == PV_OK; i++) {
			struct tuser *u = &t->users[i];

			if (u->nonempty)
				continue;
			if ((r = user_path(t, u, NULL, path, sizeof(path))) != PV_OK)
				break;
			pv_buf_addf(&out, "%lu %lu %s\n", u->uid, u->gid, path);
			n++;
		}
		if (r != PV_OK || n == 0)
			continue;
		if (!sc.data || !out.data) {
			r = pv_error(PV_EIO, "out of memory");
			break;
		}
		r = pv_srv_run(t->rem, "copying the template into the users' folders", sc.data,
			       out.data, out.len, NULL, NULL, 3600);
		r = disk_full(t, r);
		for (size_t i = b; i < e && r == PV_OK; i++) {
			if (t->users[i].nonempty)
				continue;
			t->users[i].done = true;
			t->st->files_made += t->fs->nfiles;
			t->st->dirs_made += t->fs->ndirs;
			t->st->bytes_written += t->fs->bytes;
		}
		t->done_files = t->st->files_made + t->st->files_fixed + t->st->files_ok;
		t->done_bytes = t->st->bytes_written;
		progress(t, false);
	}
	if (tpl[0]) {
		int r2;

		pv_buf_reset(&sc);
		pv_buf_addstr(&sc, "cd ");
		pv_remote_quote(&sc, t->pb->server.share_path);
		pv_buf_addstr(&sc, " && rm -rf -- ");
		pv_remote_quote(&sc, tpl);
		r2 = sc.data ? pv_srv_run(t->rem, "removing the template", sc.data, NULL, 0, NULL,
					  NULL, 600)
			     : pv_error(PV_EIO, "out of memory");
		if (r == PV_OK)
			r = r2;
	}
	pv_buf_release(&tar, 0);
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

static int build_ssh(struct pv_trees *t)
{
	struct pv_buf tar = PV_BUF_INIT, listing = PV_BUF_INIT;
	long long now = (long long)time(NULL);
	char path[1024];
	size_t fresh = 0;
	int r = PV_OK;

	for (size_t i = 0; i < t->nusers; i++)
		fresh += !t->users[i].nonempty;
	if (t->fs->content == PV_CONTENT_SHARED && fresh >= TEMPLATE_MIN_USERS &&
	    (r = ssh_template(t)) != PV_OK)
		return r;
	for (size_t b = 0; b < t->nusers && r == PV_OK; b += SSH_USERS_BATCH) {
		size_t e = b + SSH_USERS_BATCH < t->nusers ? b + SSH_USERS_BATCH : t->nusers;
		struct have *hv = NULL;
		size_t nh = 0;

		if ((r = ssh_listing(t, b, e, &listing, &hv, &nh)) != PV_OK) {
			free(hv);
			break;
		}
		for (size_t i = b; i < e && r == PV_OK; i++) {
			struct tuser *u = &t->users[i];

			for (size_t j = 0; j < t->fs->n && r == PV_OK && !u->done; j++) {
				const struct pv_fileset_entry *en = &t->fs->entries[j];
				struct have key, *h = NULL;

				if ((r = user_path(t, u, en->path, path, sizeof(path))) != PV_OK)
					break;
				key.path = path;
				if (nh)
					h = bsearch(&key, hv, nh, sizeof(*hv), by_path);
				if (h && h->dir != en->dir) {
					r = pv_error(PV_EREMOTE,
						     "%s/%s on '%s' is a %s where the fileset "
						     "has a %s; remove it and run again",
						     t->pb->server.share_path, path,
						     t->pb->server.host.name,
						     h->dir ? "folder" : "file",
						     en->dir ? "folder" : "file");
					break;
				}
				if (en->dir) {
					if (!h) {
						r = tar_header(&tar, path, true, 0, u->uid, u->gid,
							       0755, now);
						t->st->dirs_made++;
					}
					continue;
				}
				if (h && h->size == en->size) {
					t->st->files_ok++;
					continue;
				}
				if ((r = tar_file(&tar, path, pv_fileset_seed(t->fs, en, u->name),
						  en->size, u->uid, u->gid, 0644, now)) != PV_OK)
					break;
				if (h)
					t->st->files_fixed++;
				else
					t->st->files_made++;
				t->st->bytes_written += en->size;
				if (tar.len >= TAR_FLUSH) {
					r = tar_send(t, &tar, "writing the trees (tar)", b, e);
					t->done_files = t->st->files_made + t->st->files_fixed +
							t->st->files_ok;
					t->done_bytes = t->st->bytes_written;
					progress(t, false);
				}
			}
		}
		free(hv);
		if (r == PV_OK && tar.len)
			r = tar_send(t, &tar, "writing the trees (tar)", b, e);
		t->done_files = t->st->files_made + t->st->files_fixed + t->st->files_ok;
		t->done_bytes = t->st->bytes_written;
		progress(t, false);
	}
	pv_buf_release(&tar, 0);
	pv_buf_release(&listing, 0);
	return r;
}

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

/* Which SMB client builds the trees: our own (smb/wire.c: one connection per worker for all
 * its users, a compound request per file) unless the server wants what it does not do, or
 * PROVISION_SMB_CLIENT=libsmbclient asks for a libsmbclient session per user. */
static bool want_libsmbclient(void)
{
	const char *e = getenv("PROVISION_SMB_CLIENT");

	return e && strcmp(e, "libsmbclient") == 0;
}

static int build_one(struct pv_trees *t, struct pv_smb2 **conn, bool *lib, const char *server,
		     struct tuser *u, const struct pv_secret *pw, struct wctx *w,
		     struct pv_smb_tree_result *res)
{
	const char *share = t->shares[u->share - 1];
	struct pv_smb *s = NULL;
	int r;

	if (!*lib) {
		memset(res, 0, sizeof(*res));
		for (int attempt = 0;; attempt++) {
			struct pv_smb_tree_result part;

			r = *conn ? PV_OK : pv_smb2_connect(server, t->pb->domain.timeout, conn);
			if (r == PV_OK) {
				/* a second attempt lists what the first one wrote */
				r = pv_smb2_tree_build(*conn, t->pb->domain.netbios, u->name, pw,
						       share, u->name, t->items, t->fs->n,
						       !u->nonempty && attempt == 0, fill, w, tick,
						       w, &part);
				/* the second listing also finds what the first attempt wrote */
				res->files_ok += attempt == 0 ? part.files_ok
							      : part.files_ok - res->files_made -
									res->files_fixed;
				res->dirs_made += part.dirs_made;
				res->files_made += part.files_made;
				res->files_fixed += part.files_fixed;
				res->bytes += part.bytes;
			}
			if (r == PV_OK || pv_smb2_unsupported(*conn))
				break;
			/* the connection was lost (smbd restarted, a network blip): once more on
			 * a new one; every file written is whole, and the listing finds them */
			if (attempt > 0 || !pv_smb2_lost(*conn) || stopping)
				return r;
			pv_log(PV_LOG_WARN, "trees: %s; connecting again for %s", pv_errmsg(),
			       u->name);
			pv_smb2_free(*conn);
			*conn = NULL;
			sleep(1);
		}
		if (r == PV_OK)
			return r;
		pv_log(PV_LOG_INFO, "trees: %s; using libsmbclient, a connection per user",
		       pv_errmsg());
		pv_smb2_free(*conn);
		*conn = NULL;
		*lib = true;
	}
	r = pv_smb_session(server, t->pb->domain.netbios, u->name, pw, t->pb->domain.timeout, &s);
	if (r == PV_OK)
		r = pv_smb_tree_build(s, share, u->name, t->items, t->fs->n, !u->nonempty, fill, w,
				      tick, w, res);
	pv_smb_free(s);
	return r;
}

static void worker(struct pv_trees *t, int fd, size_t first, size_t step,
		   const struct pv_secret *pw)
{
	const char *server =
		t->pb->server.host.address ? t->pb->server.host.address : t->pb->server.host.name;
	struct pv_smb2 *conn = NULL;
	bool lib = want_libsmbclient();
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (size_t i = first; i < t->nusers && !stopping; i += step) {
		struct tuser *u = &t->users[i];
		struct wctx w = {fd, t->fs, u->name, 0, 0, pv_now()};
		struct rec rc;
		int r;

		memset(&rc, 0, sizeof(rc));
		r = build_one(t, &conn, &lib, server, u, pw, &w, &rc.res);
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
	pv_smb2_free(conn);
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

static int build_smb(struct pv_trees *t, const struct pv_secret *pw, unsigned nworkers)
{
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
			worker(t, fds[1], w, nworkers, pw);
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
		t->done_files += rc.files;
		t->done_bytes += rc.bytes;
		if (rc.kind == REC_USER || rc.kind == REC_FAIL) {
			t->st->files_made += rc.res.files_made;
			t->st->files_fixed += rc.res.files_fixed;
			t->st->files_ok += rc.res.files_ok;
			t->done_files += rc.res.files_ok;
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
		progress(t, false);
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
	if (interrupted && users_done - t->st->failed_users < t->nusers)
		return pv_error(PV_EPARTIAL,
				"interrupted by %s after the trees of %lu of %zu users: every file "
				"written is whole; run the same command again to finish",
				interrupted == SIGINT ? "SIGINT" : "SIGTERM",
				users_done - t->st->failed_users, t->nusers);
	if (first_code != PV_OK)
		return pv_error(first_code, "%s (stopped after %lu of %zu users)", first_msg,
				users_done - 1, t->nusers);
	if (r == PV_OK && users_done < t->nusers)
		r = pv_error(PV_EBUG, "SMB workers stopped after %lu of %zu users", users_done,
			     t->nusers);
	return r;
}

/* ---- the entry point ---- */

void pv_trees_free(struct pv_trees *t)
{
	if (!t)
		return;
	pv_secret_free(t->pw);
	free(t->items);
	free(t->shares);
	free(t->users);
	pv_fileset_free(t->fs);
	free(t);
}

int pv_trees_prepare(struct pv_ctx *ctx, struct pv_remote *rem, const struct pv_srv_facts *f,
		     struct pv_tree_stats *st, struct pv_trees **out)
{
	struct pv_trees *t = calloc(1, sizeof(*t));
	const char *via = ctx->cli.opt[OPT_VIA] ? ctx->cli.opt[OPT_VIA] : "smb";
	/* one SMB session per server core (at least 2, so that a round trip is always hidden):
	 * smbd is the limit, and more sessions than cores cost it CPU (lab, 2 cores, 20 users x 100
	 * files, interleaved: 2 sessions 2.05 s and 2.9 s of smbd CPU, 8 sessions 2.36 s and 3.3 s)
	 */
	unsigned long workers = f->cores > WORKERS_MIN ? f->cores : WORKERS_MIN;
	int r;

	memset(st, 0, sizeof(*st));
	if (!t)
		return pv_error(PV_EIO, "out of memory");
	*t = (struct pv_trees){.ctx = ctx, .pb = ctx->pb, .rem = rem, .st = st, .sep = f->sep};
	st->via = strcmp(via, "ssh") == 0 ? "ssh" : "smb";
	if (strcmp(via, "smb") != 0 && strcmp(via, "ssh") != 0) {
		r = pv_error(PV_EUSAGE, "--via '%s': expected smb or ssh", via);
		goto out;
	}
	if (ctx->cli.opt[OPT_PARALLEL] &&
	    (r = pv_cli_count("--parallel", ctx->cli.opt[OPT_PARALLEL], WORKERS_MAX, &workers)))
		goto out;
	t->workers = (unsigned)(workers < WORKERS_MAX ? workers : WORKERS_MAX);
	if (!ctx->pb->server.fileset) {
		st->skipped = true;
		r = PV_OK;
		goto out;
	}
	if ((r = pv_fileset_load(ctx->pb->server.fileset, &t->fs)) != PV_OK)
		goto out;
	snprintf(st->fileset, sizeof(st->fileset), "%s", t->fs->name);
	st->files_per_user = t->fs->nfiles;
	st->bytes_per_user = t->fs->bytes;
	if ((r = list_users(t)) != PV_OK)
		goto out;
	st->users = t->nusers;
	t->total_files = (unsigned long)(t->nusers * t->fs->nfiles);
	/* over SMB every user logs on as itself, so the shared password is needed */
	if (st->via[1] == 'm' && !ctx->cli.opt[OPT_DRY_RUN] &&
	    (r = pv_ctx_users_password(ctx, "or build with --via ssh", &t->pw)))
		goto out;
	if (!(t->shares = calloc(ctx->pb->server.shares, sizeof(*t->shares))) ||
	    !(t->items = calloc(t->fs->n ? t->fs->n : 1, sizeof(*t->items)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	for (unsigned k = 1; k <= ctx->pb->server.shares; k++)
		if ((r = pv_names_expand(ctx->pb->server.share_template, NULL,
					 ctx->pb->server.host.name, 0, k, t->shares[k - 1],
					 sizeof(t->shares[0]))) != PV_OK)
			goto out;
	for (size_t i = 0; i < t->fs->n; i++)
		t->items[i] = (struct pv_smb_item){t->fs->entries[i].path, t->fs->entries[i].dir,
						   t->fs->entries[i].size};
	/* every user must be in the domain before anything is made */
	r = map_users(t);
out:
	if (r != PV_OK) {
		pv_trees_free(t);
		return r;
	}
	*out = t;
	return PV_OK;
}

int pv_trees_build(struct pv_trees *t)
{
	struct pv_tree_stats *st = t->st;
	int r;

	if (st->skipped)
		return PV_OK;
	if (t->ctx->cli.opt[OPT_DRY_RUN])
		return PV_OK; /* the summary says what would be built */
	t->t0 = t->last_draw = pv_now();
	if ((r = make_user_dirs(t)) != PV_OK)
		return r;
	pv_log(PV_LOG_DEBUG, "trees: users' folders made in %.3f s", pv_now() - t->t0);
	if (st->via[1] == 's')
		r = build_ssh(t);
	else {
		unsigned n = t->workers < t->nusers ? t->workers : (unsigned)t->nusers;

		if (want_libsmbclient())
			pv_log(PV_LOG_INFO,
			       "trees: %u SMB sessions at once (libsmbclient: a connection "
			       "per user)",
			       n);
		else
			pv_log(PV_LOG_INFO,
			       "trees: %u SMB connections at once, each logging its users "
			       "on in turn",
			       n);
		r = build_smb(t, t->pw, n);
	}
	progress(t, true);
	st->seconds = pv_now() - t->t0;
	return r;
}

void pv_tree_stats_print(FILE *f, const struct pv_tree_stats *st)
{
	unsigned long written = st->files_made + st->files_fixed;

	if (st->skipped) {
		fputs("server: no fileset in the playbook: no home trees\n", f);
		return;
	}
	if (st->seconds == 0 && written == 0 && st->files_ok == 0) {
		fprintf(f,
			"server: would build %lu trees of %lu files (%.1f MB each) from fileset "
			"'%s' over %s\n",
			st->users, st->files_per_user, (double)st->bytes_per_user / 1e6,
			st->fileset, st->via);
		return;
	}
	fprintf(f,
		"server: trees of %lu users (fileset '%s', %lu files, %.1f MB each) over %s: %lu "
		"files written (%lu fixed), %lu already right, %lu folders made, %.1f MB in %.1f "
		"s: %.0f files/s, %.1f MB/s\n",
		st->users, st->fileset, st->files_per_user, (double)st->bytes_per_user / 1e6,
		st->via, written, st->files_fixed, st->files_ok, st->dirs_made,
		(double)st->bytes_written / 1e6, st->seconds,
		st->seconds > 0 ? (double)written / st->seconds : 0,
		st->seconds > 0 ? (double)st->bytes_written / 1e6 / st->seconds : 0);
}

void pv_tree_stats_json(FILE *f, const struct pv_tree_stats *st)
{
	if (st->skipped) {
		fputs("\"trees\":{\"skipped\":true}", f);
		return;
	}
	fprintf(f, "\"trees\":{\"skipped\":false,\"via\":\"%s\",\"fileset\":", st->via);
	pv_out_json_str(f, st->fileset);
	fprintf(f,
		",\"users\":%lu,\"files_per_user\":%lu,\"bytes_per_user\":%llu,"
		"\"files_written\":%lu,\"files_fixed\":%lu,\"files_ok\":%lu,\"dirs_made\":%lu,"
		"\"bytes_written\":%llu,\"seconds\":%.3f,\"files_per_second\":%.1f}",
		st->users, st->files_per_user, st->bytes_per_user, st->files_made + st->files_fixed,
		st->files_fixed, st->files_ok, st->dirs_made, st->bytes_written, st->seconds,
		st->seconds > 0 ? (double)(st->files_made + st->files_fixed) / st->seconds : 0);
}
