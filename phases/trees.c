/* phases/trees.c: the trees' users, their folders, the survey of what the folders hold, and
 * the entry points (see trees.h), above the two builders it picks between. The users' folders are
 * made over SSH owned by the user (uid/gid from getent through winbind: a user missing from the
 * domain is found here, before any data moves). */
#include "phases/trees_internal.h"

#include "remote/quote.h"
#include "remote/remote.h"
#include "samba/samba.h"
#include "util/err.h"
#include "util/log.h"
#include "util/strset.h"
#include "util/tar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define WORKERS_MIN  2
#define WORKERS_MAX  64
#define GETENT_BATCH 500 /* names per getent call */

extern const char pv_phases_getent_sh[];
extern const char pv_phases_rm_foreign_sh[];

/* ---- users ---- */

static int list_users(struct pv_phases_trees *t)
{
	const struct pv_playbook *pb = t->pb;
	unsigned long per = pb->users.per_client;
	size_t i = 0;
	int r;

	if (pb->nclients == 0)
		return pv_error(PV_ECONFIG,
				"the playbook has no clients: users are made per client");
	t->nusers = pb->nclients * per;
	if (!(t->users = calloc(t->nusers ? t->nusers : 1, sizeof(*t->users))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t c = 0; c < pb->nclients; c++)
		for (unsigned long n = 1; n <= per; n++, i++) {
			struct pv_playbook_roster_user u;

			if ((r = pv_playbook_roster_user(pb, c, n, &u)) != PV_OK)
				return r;
			memcpy(t->users[i].name, u.name, sizeof(u.name));
			t->users[i].share = u.share;
		}
	return PV_OK;
}

/* uid and gid of every user through the server's NSS (winbind), in batches. */
static int map_users(struct pv_phases_trees *t)
{
	struct pv_buf sc = PV_BUF_INIT, out = PV_BUF_INIT;
	size_t missing = 0;
	char first[PV_PLAYBOOK_NAME_MAX] = "";
	int r = PV_OK;

	for (size_t b = 0; b < t->nusers && r == PV_OK; b += GETENT_BATCH) {
		size_t e = b + GETENT_BATCH < t->nusers ? b + GETENT_BATCH : t->nusers;

		pv_buf_reset(&sc);
		pv_buf_reset(&out);
		pv_remote_var(&sc, "flush", b == 0 ? "1" : "0");
		pv_remote_var(&sc, "sep", t->sep);
		pv_remote_var(&sc, "d", t->pb->domain.netbios);
		pv_buf_addstr(&sc, "set --");
		for (size_t i = b; i < e; i++) {
			pv_buf_addstr(&sc, " ");
			pv_remote_quote(&sc, t->users[i].name);
		}
		pv_buf_addstr(&sc, "\n");
		pv_buf_addstr(&sc, pv_phases_getent_sh);
		if ((r = pv_remote_sh(t->rem, "looking up the users (getent)", &sc, NULL, 0, &out,
				      NULL, 120)) != PV_OK)
			break;
		/* lines "name:uid:gid"; winbind may return the name in another case */
		for (size_t i = b; i < e; i++)
			t->users[i].uid = (unsigned long)-1;
		for (char *line = out.data, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			char name[PV_PLAYBOOK_NAME_MAX];
			unsigned long uid, gid;
			int got;

			if ((nl = strchr(line, '\n')))
				*nl = '\0';
			got = pv_phases_trees_getent_line(line, t->pb->domain.netbios, name,
							  sizeof(name), &uid, &gid);
			if (got < 0) {
				r = pv_error_prefix(PV_EREMOTE, "'%s'", t->pb->server.host.name);
				break;
			}
			if (got == 0)
				continue;
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
	t->mapped = r == PV_OK;
	pv_buf_release(&sc, 0);
	pv_buf_release(&out, 0);
	return r;
}

/* ---- listings ---- */

/* The first entry at or after path in a sorted listing (nh when none). */
static size_t lower_bound(const struct have *hv, size_t nh, const char *path)
{
	size_t lo = 0, hi = nh;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(hv[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Which users' folders hold something, and which hold the whole fileset at the right sizes,
 * owned by the user (complete: nothing to do for them), from one listing of the share folders.
 * A folder holding anything of another uid is foreign: an earlier account of the same name
 * (cleanup dc, then dc again) made it, and the user could not write there. The owners are
 * checked once the users are mapped to their uids (server; status does not look them up). */
static int survey(struct pv_phases_trees *t)
{
	struct pv_buf listing = PV_BUF_INIT;
	struct have *hv = NULL;
	size_t nh = 0;
	char path[1024];
	int r;

	if ((r = pv_phases_trees_listing(t, 0, t->nusers, true, &listing, &hv, &nh)) != PV_OK)
		goto out;
	for (size_t i = 0; i < t->nusers; i++) {
		struct tuser *u = &t->users[i];
		size_t at;

		if ((r = pv_phases_trees_user_path(t, u, "", path, sizeof(path))) != PV_OK)
			goto out;
		at = lower_bound(hv, nh, path); /* "<share>/<user>/": the first thing inside */
		u->nonempty = at < nh && strncmp(hv[at].path, path, strlen(path)) == 0;
		u->foreign = false;
		for (size_t k = at;
		     t->mapped && k < nh && strncmp(hv[k].path, path, strlen(path)) == 0; k++)
			u->foreign |= hv[k].uid != u->uid;
		u->complete = u->nonempty && !u->foreign;
		for (size_t j = 0; j < t->fs->n && u->complete; j++) {
			const struct pv_fileset_entry *en = &t->fs->entries[j];
			struct have *h;

			if ((r = pv_phases_trees_user_path(t, u, en->path, path, sizeof(path))) !=
			    PV_OK)
				goto out;
			h = pv_phases_trees_find(hv, nh, path);
			u->complete = h && !h->other && h->dir == en->dir &&
				      (en->dir || h->size == en->size);
		}
	}
out:
	free(hv);
	pv_buf_release(&listing, 0);
	return r;
}

/* Every user's folder, owned by the user, mode 0700 (made where missing, as one tar). */
static int make_user_dirs(struct pv_phases_trees *t)
{
	struct pv_buf tar = PV_BUF_INIT;
	long long now = (long long)time(NULL);
	char path[1024];
	int r = PV_OK;

	for (size_t i = 0; i < t->nusers && r == PV_OK; i++) {
		struct tuser *u = &t->users[i];
		struct pv_tar_entry e = {path, true, 0, u->uid, u->gid, 0700, now};

		if ((r = pv_phases_trees_user_path(t, u, NULL, path, sizeof(path))) == PV_OK)
			r = pv_tar_add(&tar, &e, NULL);
	}
	if (r == PV_OK)
		r = pv_phases_trees_extract(t, &tar, "making the users' folders", true);
	pv_buf_release(&tar, 0);
	return r;
}

/* The folders of the users whose tree is foreign, removed (as root, with rm -rf, which never
 * follows a link inside; the share folders above are root's): they are built anew. */
static int remove_foreign(struct pv_phases_trees *t, unsigned long n)
{
	struct pv_buf sc = PV_BUF_INIT;
	char path[1024];
	int r = PV_OK;

	pv_remote_var(&sc, "base", t->pb->server.share_path);
	pv_buf_addstr(&sc, "set --");
	for (size_t i = 0; i < t->nusers && r == PV_OK; i++) {
		if (!t->users[i].foreign)
			continue;
		if ((r = pv_phases_trees_user_path(t, &t->users[i], NULL, path, sizeof(path))) !=
		    PV_OK)
			break;
		pv_buf_addstr(&sc, " ./");
		pv_remote_quote(&sc, path);
	}
	pv_buf_addstr(&sc, "\n");
	pv_buf_addstr(&sc, pv_phases_rm_foreign_sh);
	if (r == PV_OK)
		r = pv_remote_sh(t->rem, "removing the trees of earlier accounts", &sc, NULL, 0,
				 NULL, NULL, 600);
	pv_buf_release(&sc, 0);
	if (r != PV_OK)
		return r;
	pv_log(PV_LOG_INFO,
	       "trees: %lu user%s' folders held files of another uid (an earlier account of the "
	       "same name, removed since): removed, built anew",
	       n, n == 1 ? "" : "s");
	for (size_t i = 0; i < t->nusers; i++)
		if (t->users[i].foreign)
			t->users[i].nonempty = false;
	t->st->replaced = n;
	return make_user_dirs(t);
}

/* ---- entry points ---- */

void pv_phases_trees_free(struct pv_phases_trees *t)
{
	if (!t)
		return;
	free(t->items);
	free(t->shares);
	free(t->users);
	pv_fileset_free(t->fs);
	free(t);
}

/* The fileset, the users and the shares' names: what the build and the status share. */
static int trees_new(const struct pv_env *env, struct pv_remote *rem,
		     const struct pv_samba_facts *f, struct pv_phases_trees_stats *st,
		     struct pv_phases_trees **out)
{
	const struct pv_playbook *pb = env->pb;
	struct pv_phases_trees *t = calloc(1, sizeof(*t));
	int r;

	*out = NULL;
	if (!t)
		return pv_error(PV_EIO, "out of memory");
	*t = (struct pv_phases_trees){.env = env, .pb = pb, .rem = rem, .st = st, .sep = f->sep};
	if (!pb->server.fileset) {
		st->skipped = true;
		*out = t;
		return PV_OK;
	}
	if ((r = pv_fileset_read(pb->server.fileset, &t->fs)) != PV_OK)
		goto fail;
	snprintf(st->fileset, sizeof(st->fileset), "%s", t->fs->name);
	st->files_per_user = t->fs->nfiles;
	st->bytes_per_user = t->fs->bytes;
	if ((r = list_users(t)) != PV_OK)
		goto fail;
	st->users = t->nusers;
	if (!(t->shares = calloc(pb->server.shares, sizeof(*t->shares))) ||
	    !(t->items = calloc(t->fs->n ? t->fs->n : 1, sizeof(*t->items)))) {
		r = pv_error(PV_EIO, "out of memory");
		goto fail;
	}
	for (unsigned k = 1; k <= pb->server.shares; k++)
		if ((r = pv_playbook_share_name(pb, k, t->shares[k - 1])) != PV_OK)
			goto fail;
	for (size_t i = 0; i < t->fs->n; i++)
		t->items[i] = (struct pv_smb_item){t->fs->entries[i].path, t->fs->entries[i].dir,
						   t->fs->entries[i].size};
	*out = t;
	return PV_OK;
fail:
	pv_phases_trees_free(t);
	return r;
}

int pv_phases_trees_prepare(const struct pv_env *env, struct pv_remote *rem,
			    const struct pv_samba_facts *f, const struct pv_phases_trees_opts *o,
			    struct pv_phases_trees_stats *st, struct pv_phases_trees **out)
{
	const char *via = o->via ? o->via : "smb";
	/* one SMB session per server core (at least 2, so that a round trip is always hidden):
	 * smbd is the limit, and more sessions than cores cost it CPU (lab, 2 cores, 20 users x 100
	 * files, interleaved: 2 sessions 2.05 s and 2.9 s of smbd CPU, 8 sessions 2.36 s and 3.3 s)
	 */
	unsigned long workers = f->cores > WORKERS_MIN ? f->cores : WORKERS_MIN;
	struct pv_phases_trees *t = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	*out = NULL;
	if (strcmp(via, "smb") != 0 && strcmp(via, "ssh") != 0)
		return pv_error(PV_EUSAGE, "--via '%s': expected smb or ssh", via);
	st->via = strcmp(via, "ssh") == 0 ? "ssh" : "smb";
	if (o->parallel > WORKERS_MAX)
		return pv_error(PV_EUSAGE, "--parallel %u is larger than %d", o->parallel,
				WORKERS_MAX);
	if (o->parallel)
		workers = o->parallel;
	if ((r = trees_new(env, rem, f, st, &t)) != PV_OK)
		return r;
	t->workers = (unsigned)(workers < WORKERS_MAX ? workers : WORKERS_MAX);
	t->ssh = st->via[1] == 's';
	if (st->skipped)
		goto out;
	/* over SMB every user logs on as itself, so the shared password is needed */
	if (!t->ssh && !env->dry_run &&
	    (r = pv_env_secret(env, PV_ENV_CRED_USERS, &t->pw)) != PV_OK) {
		r = pv_error_prefix(r, "the trees are built over SMB as each user (or build them "
				       "with --via ssh)");
		goto out;
	}
	/* every user must be in the domain before anything is made */
	r = map_users(t);
out:
	if (r != PV_OK) {
		pv_phases_trees_free(t);
		return r;
	}
	*out = t;
	return PV_OK;
}

int pv_phases_trees_build(struct pv_phases_trees *t, struct pv_env_plan *plan)
{
	struct pv_phases_trees_stats *st = t->st;
	unsigned long todo = 0, foreign = 0;
	double t0 = pv_now();
	int r;

	if (st->skipped)
		return PV_OK;
	if (!t->env->dry_run && (r = make_user_dirs(t)) != PV_OK)
		return r;
	pv_log(PV_LOG_DEBUG, "trees: users' folders made in %.3f s", pv_now() - t0);
	if ((r = survey(t)) != PV_OK)
		return r;
	for (size_t i = 0; i < t->nusers; i++) {
		if (t->users[i].complete) {
			st->complete++;
			st->files_ok += t->fs->nfiles;
		} else {
			todo++;
		}
	}
	pv_log(PV_LOG_DEBUG, "trees: surveyed at %.3f s: %lu of %zu complete", pv_now() - t0,
	       st->complete, t->nusers);
	for (size_t i = 0; i < t->nusers; i++)
		foreign += t->users[i].foreign;
	if (t->env->dry_run) {
		if (foreign)
			pv_env_plan_add(
				plan,
				"remove the trees of %lu users, which hold files of another "
				"uid (an earlier account of the same name), and build them anew",
				foreign);
		if (todo)
			pv_env_plan_add(
				plan,
				"build the trees of %lu users (fileset '%s': %lu files, %.1f "
				"MB each) over %s; %lu complete already",
				todo, st->fileset, st->files_per_user,
				(double)st->bytes_per_user / 1e6, st->via, st->complete);
		return PV_OK;
	}
	if (foreign && (r = remove_foreign(t, foreign)) != PV_OK)
		return r;
	if (todo == 0)
		goto done;
	pv_progress_start(&t->prog, t->ssh ? "trees (ssh)" : "trees (smb)", "files",
			  (unsigned long)(t->nusers * t->fs->nfiles));
	pv_phases_trees_progress(t);
	r = t->ssh ? pv_phases_trees_build_ssh(t) : pv_phases_trees_build_smb(t);
	pv_progress_end(&t->prog);
done:
	st->seconds = pv_now() - t0;
	return r;
}

int pv_phases_trees_status(const struct pv_env *env, struct pv_remote *rem,
			   const struct pv_samba_facts *f, bool *skipped, unsigned long *planned,
			   unsigned long *complete)
{
	struct pv_phases_trees_stats st;
	struct pv_phases_trees *t = NULL;
	int r;

	memset(&st, 0, sizeof(st));
	*planned = *complete = 0;
	if ((r = trees_new(env, rem, f, &st, &t)) != PV_OK)
		return r;
	*skipped = st.skipped;
	if (!st.skipped && (r = survey(t)) == PV_OK) {
		*planned = t->nusers;
		for (size_t i = 0; i < t->nusers; i++)
			*complete += t->users[i].complete;
	}
	pv_phases_trees_free(t);
	return r;
}
