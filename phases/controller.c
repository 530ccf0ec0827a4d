/* phases/controller.c: the results folder reset, here or on the controller host over SSH
 * (phases/scripts/ctl-reset.sh), and its status. */
#include "env/target.h"
#include "phases/controller.h"

#include "playbooks/names.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern const char pv_phases_ctl_reset_sh[];
extern const char pv_phases_ctl_status_sh[];

struct ctl {
	bool cleanup, dry;
	const char *bdir;
	char parent[PATH_MAX];
	char stamp[32];
	struct pv_phases_controller_result *res;
};

/* "/a/b//" -> "/a/b"; parent "/a" (or "/" or "." for a bare name). */
static int split(const char *path, char *results, size_t rlen, char *parent, size_t plen)
{
	size_t n = strlen(path);
	char *slash;

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= rlen || (n == 1 && path[0] == '/'))
		return pv_error(PV_ECONFIG,
				"controller.results '%s' is not a folder that can be "
				"moved; expected a path such as /var/lib/fsct/results",
				path);
	memcpy(results, path, n);
	results[n] = '\0';
	slash = strrchr(results, '/');
	if (!slash)
		snprintf(parent, plen, ".");
	else if (slash == results)
		snprintf(parent, plen, "/");
	else
		snprintf(parent, plen, "%.*s", (int)(slash - results), results);
	return PV_OK;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ---- local ---- */

static int count_entries(const char *path, unsigned long *n)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d)
		return pv_error(PV_EIO, "cannot list results folder '%s': %s", path,
				strerror(errno));
	*n = 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			(*n)++;
	closedir(d);
	return PV_OK;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, mode) != 0 && errno != EEXIST ? -1 : 0;
}

/* rename(2) that never replaces dst (an empty folder there would be replaced silently). */
static int rename_new(const char *src, const char *dst)
{
	int r = renameat2(AT_FDCWD, src, AT_FDCWD, dst, RENAME_NOREPLACE);

	if (r != 0 && errno == EINVAL) {
		/* a file system without RENAME_NOREPLACE: check, then rename */
		struct stat st;

		if (lstat(dst, &st) == 0) {
			errno = EEXIST;
			return -1;
		}
		r = rename(src, dst);
	}
	return r;
}

static int backup_dir_ok(const char *bdir, struct stat *st)
{
	if (stat(bdir, st) != 0 || !S_ISDIR(st->st_mode))
		return pv_error(PV_ECONFIG, "--backup '%s' is not a folder%s%s; create it first",
				bdir, errno == ENOENT ? "" : ": ",
				errno == ENOENT ? "" : strerror(errno));
	return PV_OK;
}

/* The backup's base: <DIR>/<name> with --backup, else the results path. Checks DIR. */
static int local_base(struct ctl *c, char *base, size_t len, const struct stat *rst)
{
	const char *results = c->res->results;
	char rreal[PATH_MAX], breal[PATH_MAX];
	struct stat st, pst;
	int r;

	if (stat(c->parent, &pst) != 0)
		return pv_error(PV_EIO, "cannot look at '%s': %s", c->parent, strerror(errno));
	if (pst.st_dev != rst->st_dev)
		return pv_error(PV_ECONFIG,
				"results folder '%s' is a mount point, so it cannot be "
				"moved; point controller.results at a folder inside it",
				results);
	if (!c->bdir) {
		snprintf(base, len, "%s", results);
		return PV_OK;
	}
	if ((r = backup_dir_ok(c->bdir, &st)) != PV_OK)
		return r;
	if (!realpath(results, rreal) || !realpath(c->bdir, breal))
		return pv_error(PV_EIO, "cannot resolve '%s' or '%s': %s", results, c->bdir,
				strerror(errno));
	if (strcmp(breal, rreal) == 0 ||
	    (strncmp(breal, rreal, strlen(rreal)) == 0 && breal[strlen(rreal)] == '/'))
		return pv_error(PV_ECONFIG,
				"--backup '%s' lies inside the results folder '%s'; pick "
				"a folder outside it",
				c->bdir, results);
	if (st.st_dev != pst.st_dev)
		return pv_error(PV_ECONFIG,
				"--backup '%s' is on another file system than '%s': the "
				"move would be a copy; pick a folder on the same file "
				"system",
				c->bdir, results);
	if ((size_t)snprintf(base, len, "%s/%s", breal, base_name(results)) >= len)
		return pv_error(PV_ECONFIG, "--backup '%s': the backup's path would be too long",
				c->bdir);
	return PV_OK;
}

/* The results folder moved to <base>.<stamp>[-N] (the first free name), for real or not. */
static int local_move(struct ctl *c, const char *base)
{
	struct pv_phases_controller_result *res = c->res;

	for (int i = 1; i < 1000; i++) {
		int n = i == 1 ? snprintf(res->backup, sizeof(res->backup), "%s.%s", base, c->stamp)
			       : snprintf(res->backup, sizeof(res->backup), "%s.%s-%d", base,
					  c->stamp, i);

		if ((size_t)n >= sizeof(res->backup))
			return pv_error(PV_ECONFIG, "the backup's path for '%s' would be too long",
					res->results);
		if (c->dry) {
			struct stat x;

			if (lstat(res->backup, &x) == 0)
				continue;
			res->state = "would move";
			return PV_OK;
		}
		if (rename_new(res->results, res->backup) == 0)
			return PV_OK;
		if (errno != EEXIST && errno != ENOTEMPTY)
			return pv_error(PV_EIO, "cannot move '%s' to '%s': %s", res->results,
					res->backup, strerror(errno));
	}
	return pv_error(PV_EIO, "cannot find a free backup name for '%s'", base);
}

/* The results folder made anew with the old one's mode and owner (st); the results moved back
 * when it cannot be made. */
static int local_anew(struct ctl *c, const struct stat *st)
{
	struct pv_phases_controller_result *res = c->res;

	if (mkdir(res->results, st->st_mode & 07777) != 0) {
		int e = errno;

		if (rename_new(res->backup, res->results) != 0)
			return pv_error(PV_EIO,
					"cannot make '%s' anew (%s), and moving the results "
					"back failed too (%s): they are in '%s'",
					res->results, strerror(e), strerror(errno), res->backup);
		return pv_error(PV_EIO, "cannot make '%s' anew: %s; the results were moved back",
				res->results, strerror(e));
	}
	/* mkdir applies the umask; the old folder's mode and owner are what the driver expects */
	if (chmod(res->results, st->st_mode & 07777) != 0 ||
	    (chown(res->results, st->st_uid, st->st_gid) != 0 && errno != EPERM))
		pv_log(PV_LOG_WARN,
		       "'%s' made anew, but its mode or owner differs from the old "
		       "folder's: %s",
		       res->results, strerror(errno));
	res->state = "moved";
	return PV_OK;
}

static int local_reset(struct ctl *c)
{
	struct pv_phases_controller_result *res = c->res;
	char base[PATH_MAX];
	struct stat st;
	int r;

	/* a mistyped --backup is an error even when there is nothing to move */
	if (c->bdir && (r = backup_dir_ok(c->bdir, &st)) != PV_OK)
		return r;
	if (lstat(res->results, &st) != 0) {
		if (errno != ENOENT)
			return pv_error(PV_EIO, "cannot look at results folder '%s': %s",
					res->results, strerror(errno));
		if (c->cleanup) {
			res->state = "absent";
			return PV_OK;
		}
		if (c->dry) {
			res->state = "would create";
			return PV_OK;
		}
		if (mkdir_p(res->results, 0755) != 0)
			return pv_error(PV_EIO, "cannot create results folder '%s': %s",
					res->results, strerror(errno));
		res->state = "created";
		return PV_OK;
	}
	if (S_ISLNK(st.st_mode))
		return pv_error(PV_ECONFIG,
				"results folder '%s' is a symbolic link; set "
				"controller.results to the folder it points at",
				res->results);
	if (!S_ISDIR(st.st_mode))
		return pv_error(PV_ECONFLICT,
				"'%s' exists and is not a folder; move it away or fix "
				"controller.results",
				res->results);
	if ((r = count_entries(res->results, &res->entries)) != PV_OK)
		return r;
	if (res->entries == 0) {
		res->state = "empty";
		return PV_OK;
	}
	if ((r = local_base(c, base, sizeof(base), &st)) != PV_OK)
		return r;
	if ((r = local_move(c, base)) != PV_OK || c->dry)
		return r;
	return local_anew(c, &st);
}

/* ---- over SSH ---- */

static int remote_reset(struct ctl *c, const struct pv_playbook_host *h)
{
	struct pv_phases_controller_result *res = c->res;
	struct pv_remote *rem = NULL;
	struct pv_buf s = PV_BUF_INIT, out = PV_BUF_INIT;
	int status = 0, r;

	pv_remote_var(&s, "r", res->results);
	pv_remote_var(&s, "p", c->parent);
	pv_remote_var(&s, "bdir", c->bdir ? c->bdir : "");
	pv_remote_var(&s, "stamp", c->stamp);
	pv_remote_var(&s, "create", c->cleanup ? "0" : "1");
	pv_remote_var(&s, "dry", c->dry ? "1" : "0");
	pv_buf_addstr(&s, pv_phases_ctl_reset_sh);
	if (pv_buf_failed(&s)) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_env_host_connect(h, &rem)) != PV_OK)
		goto out;
	if ((r = pv_remote_sh(rem, "the reset of the results folder", &s, NULL, 0, &out, &status,
			      0)) != PV_OK)
		goto out;
	if (status != 0) {
		/* the reason pv_remote_sh recorded: the script's line on stderr (ctl-reset.sh) */
		r = pv_error(status == 31				      ? PV_ECONFLICT
			     : (status == 32 || status == 33 || status == 37) ? PV_ECONFIG
									      : PV_EREMOTE,
			     "on '%s': %s", h->name,
			     *pv_errmsg() ? pv_errmsg() : "the reset command failed");
		goto out;
	}
	if ((r = pv_phases_controller_parse_reset(out.data, res)) != PV_OK) {
		r = pv_error_prefix(r, "on '%s'", h->name);
		goto out;
	}
	r = PV_OK;
out:
	pv_buf_release(&s, 0);
	pv_buf_release(&out, 0);
	pv_remote_free(rem);
	return r;
}

static int setup(const struct pv_env *env, char *results, size_t len, char *parent, size_t plen,
		 const char **host)
{
	const struct pv_playbook *pb = env->pb;

	if (!pb->has_controller)
		return pv_error(PV_ECONFIG, "the playbook has no controller section; add "
					    "'controller: {results: PATH}' (and host: for a remote "
					    "controller)");
	*host = pb->controller.host.name ? pb->controller.host.name : "local";
	return split(pb->controller.results, results, len, parent, plen);
}

int pv_phases_controller_reset(const struct pv_env *env, const struct pv_phases_controller_opts *o,
			       struct pv_phases_controller_result *res)
{
	const struct pv_playbook *pb = env->pb;
	struct ctl c;
	struct tm tm;
	time_t now = time(NULL);
	double t0 = pv_now();
	int r;

	memset(&c, 0, sizeof(c));
	c.cleanup = o->cleanup;
	c.dry = env->dry_run;
	c.bdir = o->backup_dir;
	c.res = res;
	res->host = "local";
	if (c.bdir && !*c.bdir)
		return pv_error(PV_EUSAGE, "--backup needs a folder");
	/* on a controller host the folder reaches a shell script: absolute and normalized, as
	 * controller.results is (playbooks/names.h); here only system calls see it */
	if (c.bdir &&
	    pv_playbook_names_check_path("--backup", c.bdir, pb->controller.host.name != NULL))
		return pv_error(PV_EUSAGE, "%s; expected %s", pv_errmsg(),
				pb->controller.host.name
					? "an absolute, normalized folder on the controller host"
					: "a folder");
	if ((r = setup(env, res->results, sizeof(res->results), c.parent, sizeof(c.parent),
		       &res->host)) != PV_OK)
		return r;
	localtime_r(&now, &tm);
	strftime(c.stamp, sizeof(c.stamp), "%Y%m%d-%H%M%S", &tm);
	if (pb->controller.host.name)
		r = remote_reset(&c, &pb->controller.host);
	else
		r = local_reset(&c);
	if (r == PV_OK && strcmp(res->state, "moved") == 0)
		pv_log(PV_LOG_INFO, "%s: moved %s to %s", res->host, res->results, res->backup);
	if (r == PV_OK && strcmp(res->state, "would move") == 0)
		pv_env_plan_add(&res->plan,
				"move %s:%s (%lu entries) to %s and make it anew, empty", res->host,
				res->results, res->entries, res->backup);
	if (r == PV_OK && strcmp(res->state, "would create") == 0)
		pv_env_plan_add(&res->plan, "create %s:%s", res->host, res->results);
	res->seconds = pv_now() - t0;
	return r;
}

void pv_phases_controller_result_release(struct pv_phases_controller_result *res)
{
	pv_env_plan_release(&res->plan);
}

/* ---- status ---- */

static int local_status(struct pv_phases_controller_status *st, const char *parent)
{
	struct stat s;
	DIR *d;
	struct dirent *e;
	const char *name = base_name(st->results);
	size_t nl = strlen(name);

	if (lstat(st->results, &s) != 0)
		st->kind = "absent";
	else if (!S_ISDIR(s.st_mode))
		st->kind = "other";
	else {
		st->kind = "folder";
		if (count_entries(st->results, &st->entries) != PV_OK)
			return PV_EIO;
	}
	if ((d = opendir(parent))) {
		while ((e = readdir(d)))
			if (strncmp(e->d_name, name, nl) == 0 && e->d_name[nl] == '.' &&
			    e->d_name[nl + 1] >= '0' && e->d_name[nl + 1] <= '9')
				st->backups++;
		closedir(d);
	}
	return PV_OK;
}

int pv_phases_controller_status(const struct pv_env *env, struct pv_phases_controller_status *st)
{
	const struct pv_playbook *pb = env->pb;
	struct pv_remote *rem = NULL;
	struct pv_buf s = PV_BUF_INIT, out = PV_BUF_INIT;
	char parent[PATH_MAX];
	int status = 0, r;

	memset(st, 0, sizeof(*st));
	st->host = "local";
	if ((r = setup(env, st->results, sizeof(st->results), parent, sizeof(parent), &st->host)) !=
	    PV_OK)
		return r;
	if (!pb->controller.host.name)
		return local_status(st, parent);
	pv_remote_var(&s, "r", st->results);
	pv_buf_addstr(&s, pv_phases_ctl_status_sh);
	if (pv_buf_failed(&s)) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_env_host_connect(&pb->controller.host, &rem)) != PV_OK ||
	    (r = pv_remote_sh(rem, "looking at the results folder", &s, NULL, 0, &out, &status,
			      0)) != PV_OK)
		goto out;
	if (status != 0 || pv_phases_controller_parse_status(out.data, st) != PV_OK) {
		r = pv_error(PV_EREMOTE, "on '%s': cannot look at %s", st->host, st->results);
		goto out;
	}
out:
	pv_buf_release(&s, 0);
	pv_buf_release(&out, 0);
	pv_remote_free(rem);
	return r;
}
