/* phases/trees_base.c: what both tree builders (trees_ssh.c, trees_smb.c) and the entry points
 * above them (trees.c) stand on: a user's path, a listing of the users' folders over SSH, the
 * progress, a full disk said as such. */
#include "phases/trees_internal.h"

#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"

#include <stdio.h>
#include <string.h>

extern const char pv_phases_list_trees_sh[];

int pv_phases_trees_user_path(const struct pv_phases_trees *t, const struct tuser *u,
			      const char *rel, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s%s%s", t->shares[u->share - 1], u->name, rel ? "/" : "",
			 rel ? rel : "");

	return n < 0 || (size_t)n >= len ? pv_error(PV_ECONFIG, "path too long: %s", out) : PV_OK;
}

void pv_phases_trees_progress(struct pv_phases_trees *t)
{
	pv_progress_bytes(&t->prog, t->st->files_made + t->st->files_fixed + t->st->files_ok,
			  t->st->bytes_written);
}

int pv_phases_trees_disk_full(const struct pv_phases_trees *t, int r)
{
	if (r == PV_OK || !strstr(pv_errmsg(), "No space left"))
		return r;
	return pv_error(PV_EREMOTE, "the disk of '%s' is full under %s: %s",
			t->pb->server.host.name, t->pb->server.share_path, pv_errmsg());
}

int pv_phases_trees_listing(struct pv_phases_trees *t, size_t b, size_t e, bool all,
			    struct pv_buf *out, struct have **hv, size_t *nh)
{
	struct pv_buf sc = PV_BUF_INIT;
	size_t dirs = 0;
	char path[1024];
	int r;

	*hv = NULL;
	*nh = 0;
	pv_buf_reset(out);
	pv_remote_var(&sc, "base", t->pb->server.share_path);
	pv_buf_addstr(&sc, "set --");
	if (all) {
		for (unsigned k = 0; k < t->pb->server.shares; k++, dirs++) {
			pv_buf_addstr(&sc, " ");
			pv_remote_quote(&sc, t->shares[k]);
		}
	} else {
		for (size_t i = b; i < e; i++) {
			if (!t->users[i].nonempty)
				continue;
			pv_phases_trees_user_path(t, &t->users[i], NULL, path, sizeof(path));
			pv_buf_addstr(&sc, " ");
			pv_remote_quote(&sc, path);
			dirs++;
		}
	}
	pv_buf_addstr(&sc, "\n");
	pv_buf_addstr(&sc, pv_phases_list_trees_sh);
	if (dirs == 0) {
		pv_buf_release(&sc, 0);
		return PV_OK;
	}
	r = pv_remote_sh(t->rem, "listing the users' trees", &sc, NULL, 0, out, NULL, 600);
	pv_buf_release(&sc, 0);
	return r == PV_OK ? pv_phases_trees_parse_listing(out, hv, nh) : r;
}
