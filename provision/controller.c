/* provision/controller.c: `provision controller` and `provision cleanup controller`: the
 * controller's results folder (playbook controller.results) is moved to a timestamped backup,
 * <results>.<YYYYmmdd-HHMMSS> next to it or <DIR>/<name>.<stamp> with --backup DIR, and made
 * anew, empty, with the old folder's mode and owner. Results are never deleted.
 *
 * `controller` also creates a missing folder; `cleanup controller` never creates anything.
 * A folder that is already empty is left as it is (a second run changes nothing).
 * The move is a rename on one file system, so it is instant and all or nothing: a --backup
 * folder on another file system, or a results folder that is itself a mount point, is refused
 * before anything moves. If the new folder cannot be made, the old one is moved back.
 * Local when the playbook has no controller.host; else the same steps run over SSH in one
 * POSIX shell command (a Unix controller is assumed). */
#include "provision/provision.h"

#include "hosts/script.h"
#include "remote/remote.h"
#include "remote/quote.h"
#include "util/err.h"
#include "util/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ctl {
	struct pv_ctx *ctx;
	bool cleanup, dry;
	char results[PATH_MAX];
	char parent[PATH_MAX];
	const char *bdir;
	char stamp[32];
	/* outcome */
	const char *state; /* "moved", "created", "empty", "absent", "would move", "would create" */
	char backup[PATH_MAX];
	unsigned long entries;
};

/* "/a/b//" -> "/a/b"; parent "/a" (or "/" or "." for a bare name). */
static int split(struct ctl *c, const char *path)
{
	size_t n = strlen(path);
	char *slash;

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(c->results) || (n == 1 && path[0] == '/'))
		return pv_error(PV_ECONFIG,
				"controller.results '%s' is not a folder that can be "
				"moved; expected a path such as /var/lib/fsct/results",
				path);
	memcpy(c->results, path, n);
	c->results[n] = '\0';
	slash = strrchr(c->results, '/');
	if (!slash)
		snprintf(c->parent, sizeof(c->parent), ".");
	else if (slash == c->results)
		snprintf(c->parent, sizeof(c->parent), "/");
	else
		snprintf(c->parent, sizeof(c->parent), "%.*s", (int)(slash - c->results),
			 c->results);
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

/* The backup's base: <DIR>/<name> with --backup, else the results path. Checks DIR. */
static int local_base(struct ctl *c, char *base, size_t len, const struct stat *rst)
{
	char rreal[PATH_MAX], breal[PATH_MAX];
	struct stat st, pst;

	if (stat(c->parent, &pst) != 0)
		return pv_error(PV_EIO, "cannot look at '%s': %s", c->parent, strerror(errno));
	if (pst.st_dev != rst->st_dev)
		return pv_error(PV_ECONFIG,
				"results folder '%s' is a mount point, so it cannot be "
				"moved; point controller.results at a folder inside it",
				c->results);
	if (!c->bdir) {
		snprintf(base, len, "%s", c->results);
		return PV_OK;
	}
	if (stat(c->bdir, &st) != 0 || !S_ISDIR(st.st_mode))
		return pv_error(PV_ECONFIG, "--backup '%s' is not a folder%s%s; create it first",
				c->bdir, errno == ENOENT ? "" : ": ",
				errno == ENOENT ? "" : strerror(errno));
	if (!realpath(c->results, rreal) || !realpath(c->bdir, breal))
		return pv_error(PV_EIO, "cannot resolve '%s' or '%s': %s", c->results, c->bdir,
				strerror(errno));
	if (strcmp(breal, rreal) == 0 ||
	    (strncmp(breal, rreal, strlen(rreal)) == 0 && breal[strlen(rreal)] == '/'))
		return pv_error(PV_ECONFIG,
				"--backup '%s' lies inside the results folder '%s'; "
				"pick a folder outside it",
				c->bdir, c->results);
	if (st.st_dev != pst.st_dev)
		return pv_error(PV_ECONFIG,
				"--backup '%s' is on another file system than '%s': "
				"the move would be a copy; pick a folder on the same "
				"file system",
				c->bdir, c->results);
	if ((size_t)snprintf(base, len, "%s/%s", breal, base_name(c->results)) >= len)
		return pv_error(PV_ECONFIG, "--backup '%s': the backup's path would be too long",
				c->bdir);
	return PV_OK;
}

static int local_reset(struct ctl *c)
{
	char base[PATH_MAX];
	struct stat st;
	int r;

	/* a mistyped --backup is an error even when there is nothing to move */
	if (c->bdir && (stat(c->bdir, &st) != 0 || !S_ISDIR(st.st_mode)))
		return pv_error(PV_ECONFIG, "--backup '%s' is not a folder%s%s; create it first",
				c->bdir, errno == ENOENT ? "" : ": ",
				errno == ENOENT ? "" : strerror(errno));
	if (lstat(c->results, &st) != 0) {
		if (errno != ENOENT)
			return pv_error(PV_EIO, "cannot look at results folder '%s': %s",
					c->results, strerror(errno));
		if (c->cleanup) {
			c->state = "absent";
			return PV_OK;
		}
		if (c->dry) {
			c->state = "would create";
			return PV_OK;
		}
		if (mkdir_p(c->results, 0755) != 0)
			return pv_error(PV_EIO, "cannot create results folder '%s': %s", c->results,
					strerror(errno));
		c->state = "created";
		return PV_OK;
	}
	if (S_ISLNK(st.st_mode))
		return pv_error(PV_ECONFIG,
				"results folder '%s' is a symbolic link; set "
				"controller.results to the folder it points at",
				c->results);
	if (!S_ISDIR(st.st_mode))
		return pv_error(PV_ECONFLICT,
				"'%s' exists and is not a folder; move it away or fix "
				"controller.results",
				c->results);
	if ((r = count_entries(c->results, &c->entries)) != PV_OK)
		return r;
	if (c->entries == 0) {
		c->state = "empty";
		return PV_OK;
	}
	if ((r = local_base(c, base, sizeof(base), &st)) != PV_OK)
		return r;
	for (int i = 1; i < 1000; i++) {
		int n = i == 1 ? snprintf(c->backup, sizeof(c->backup), "%s.%s", base, c->stamp)
			       : snprintf(c->backup, sizeof(c->backup), "%s.%s-%d", base, c->stamp,
					  i);

		if ((size_t)n >= sizeof(c->backup))
			return pv_error(PV_ECONFIG, "the backup's path for '%s' would be too long",
					c->results);
		if (c->dry) {
			struct stat x;

			if (lstat(c->backup, &x) == 0)
				continue;
			c->state = "would move";
			return PV_OK;
		}
		if (rename_new(c->results, c->backup) == 0)
			break;
		if (errno != EEXIST && errno != ENOTEMPTY)
			return pv_error(PV_EIO, "cannot move '%s' to '%s': %s", c->results,
					c->backup, strerror(errno));
		if (i == 999)
			return pv_error(PV_EIO, "cannot find a free backup name for '%s'", base);
	}
	if (mkdir(c->results, st.st_mode & 07777) != 0) {
		int e = errno;

		if (rename_new(c->backup, c->results) != 0)
			return pv_error(PV_EIO,
					"cannot make '%s' anew (%s), and moving the results "
					"back failed too (%s): they are in '%s'",
					c->results, strerror(e), strerror(errno), c->backup);
		return pv_error(PV_EIO, "cannot make '%s' anew: %s; the results were moved back",
				c->results, strerror(e));
	}
	/* mkdir applies the umask; the old folder's mode and owner are what the driver expects */
	if (chmod(c->results, st.st_mode & 07777) != 0 ||
	    (chown(c->results, st.st_uid, st.st_gid) != 0 && errno != EPERM))
		pv_log(PV_LOG_WARN,
		       "'%s' made anew, but its mode or owner differs from the old "
		       "folder's: %s",
		       c->results, strerror(errno));
	c->state = "moved";
	return PV_OK;
}

/* ---- over SSH ---- */

static const char remote_body[] =
	"die() { c=$1; shift; printf '%s\\n' \"$*\" >&2; exit \"$c\"; }\n"
	"[ -z \"$bdir\" ] || [ -d \"$bdir\" ] || die 32 \"--backup $bdir is not a folder on this "
	"host; create it first\"\n"
	"if [ -L \"$r\" ]; then die 33 \"results folder $r is a symbolic link; set "
	"controller.results to the folder it points at\"; fi\n"
	"if [ ! -e \"$r\" ]; then\n"
	"  if [ \"$create\" != 1 ]; then echo 'pv-ctl absent'; exit 0; fi\n"
	"  if [ \"$dry\" = 1 ]; then echo 'pv-ctl would-create'; exit 0; fi\n"
	"  mkdir -p -- \"$r\" || die 34 \"cannot create results folder $r\"\n"
	"  echo 'pv-ctl created'; exit 0\n"
	"fi\n"
	"[ -d \"$r\" ] || die 31 \"$r exists and is not a folder; move it away or fix "
	"controller.results\"\n"
	"n=$(ls -A -- \"$r\" | wc -l) || die 34 \"cannot list $r\"\n"
	"if [ \"$n\" -eq 0 ]; then echo 'pv-ctl empty'; exit 0; fi\n"
	"dev() { stat -c %d -- \"$1\"; }\n"
	"[ \"$(dev \"$r\")\" = \"$(dev \"$p\")\" ] || die 37 \"results folder $r is a mount "
	"point, so it cannot be moved; point controller.results at a folder inside it\"\n"
	"if [ -n \"$bdir\" ]; then\n"
	"  rr=$(cd -- \"$r\" && pwd -P) && bb=$(cd -- \"$bdir\" && pwd -P) || die 34 \"cannot "
	"resolve $r or $bdir\"\n"
	"  case $bb/ in \"$rr\"/*) die 32 \"--backup $bdir lies inside the results folder $r; "
	"pick a folder outside it\" ;; esac\n"
	"  [ \"$(dev \"$bdir\")\" = \"$(dev \"$p\")\" ] || die 32 \"--backup $bdir is on another "
	"file system than $r: the move would be a copy; pick a folder on the same file system\"\n"
	"  base=$bb/${r##*/}\n"
	"else base=$r; fi\n"
	"d=$base.$stamp; i=1\n"
	"while [ -e \"$d\" ] || [ -L \"$d\" ]; do i=$((i + 1)); d=$base.$stamp-$i; done\n"
	"if [ \"$dry\" = 1 ]; then echo \"pv-ctl would-move $n $d\"; exit 0; fi\n"
	"mode=$(stat -c %a -- \"$r\") && own=$(stat -c %u:%g -- \"$r\") || die 34 \"cannot read "
	"the mode of $r\"\n"
	"err=$(mv -- \"$r\" \"$d\" 2>&1) || die 35 \"cannot move $r to $d: $err\"\n"
	"if ! err=$(mkdir -m \"$mode\" -- \"$r\" 2>&1); then\n"
	"  mv -- \"$d\" \"$r\" || die 36 \"cannot make $r anew ($err), and moving the results "
	"back failed too: they are in $d\"\n"
	"  die 36 \"cannot make $r anew: $err; the results were moved back\"\n"
	"fi\n"
	"chown \"$own\" -- \"$r\" 2>/dev/null\n"
	"echo \"pv-ctl moved $n $d\"\n";

static int var(struct pv_buf *b, const char *name, const char *value)
{
	if (pv_buf_addf(b, "%s=", name) < 0 || pv_remote_quote(b, value) < 0 ||
	    pv_buf_addstr(b, "\n") < 0)
		return -1;
	return 0;
}

static int remote_reset(struct ctl *c, const struct pv_host *h)
{
	struct pv_remote *rem = NULL;
	struct pv_buf s = PV_BUF_INIT, cmd = PV_BUF_INIT, out = PV_BUF_INIT, err = PV_BUF_INIT;
	int status = 0, r;
	char *line = NULL;

	if (pv_buf_addstr(&s, "set -u\nLC_ALL=C; export LC_ALL\n") < 0 ||
	    var(&s, "r", c->results) < 0 || var(&s, "p", c->parent) < 0 ||
	    var(&s, "bdir", c->bdir ? c->bdir : "") < 0 || var(&s, "stamp", c->stamp) < 0 ||
	    var(&s, "create", c->cleanup ? "0" : "1") < 0 ||
	    var(&s, "dry", c->dry ? "1" : "0") < 0 || pv_buf_addstr(&s, remote_body) < 0 ||
	    pv_buf_addstr(&cmd, "sh -c ") < 0 || pv_remote_quote(&cmd, s.data) < 0) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((r = pv_remote_connect(h, &rem)) != PV_OK)
		goto out;
	if ((r = pv_remote_exec(rem, cmd.data, NULL, 0, &out, &err, &status, 0)) != PV_OK)
		goto out;
	if (err.data)
		err.data[strcspn(err.data, "\n")] = '\0';
	if (status != 0) {
		r = pv_error(status == 31				      ? PV_ECONFLICT
			     : (status == 32 || status == 33 || status == 37) ? PV_ECONFIG
									      : PV_EREMOTE,
			     "on '%s': %s", h->name,
			     err.data && *err.data ? err.data : "the reset command failed");
		goto out;
	}
	line = out.data ? strstr(out.data, "pv-ctl ") : NULL;
	if (!line) {
		r = pv_error(PV_EREMOTE, "on '%s': the reset command said nothing: %s", h->name,
			     err.data ? err.data : "");
		goto out;
	}
	line += strlen("pv-ctl ");
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "moved ", 6) == 0 || strncmp(line, "would-move ", 11) == 0) {
		char *sp;

		c->state = line[0] == 'm' ? "moved" : "would move";
		line = strchr(line, ' ') + 1;
		c->entries = strtoul(line, &sp, 10);
		snprintf(c->backup, sizeof(c->backup), "%s", *sp ? sp + 1 : "");
	} else if (strcmp(line, "created") == 0) {
		c->state = "created";
	} else if (strcmp(line, "would-create") == 0) {
		c->state = "would create";
	} else if (strcmp(line, "empty") == 0) {
		c->state = "empty";
	} else {
		c->state = "absent";
	}
	r = PV_OK;
out:
	pv_buf_release(&s, 0);
	pv_buf_release(&cmd, 0);
	pv_buf_release(&out, 0);
	pv_buf_release(&err, 0);
	pv_remote_free(rem);
	return r;
}

static void report(const struct ctl *c, const char *where, double secs, int code)
{
	const char *cmd = c->cleanup ? "cleanup controller" : "controller";

	if (c->ctx->json) {
		printf("{\"ok\":%s,\"exit\":%d,\"command\":\"%s\",\"dry_run\":%s,\"host\":",
		       code == PV_OK ? "true" : "false", code, cmd, c->dry ? "true" : "false");
		pv_out_json_str(stdout, where);
		printf(",\"results\":");
		pv_out_json_str(stdout, c->results);
		printf(",\"state\":");
		if (c->state)
			pv_out_json_str(stdout, c->state);
		else
			printf("null");
		printf(",\"entries\":%lu,\"backup\":", c->entries);
		if (c->backup[0])
			pv_out_json_str(stdout, c->backup);
		else
			printf("null");
		printf(",\"seconds\":%.3f}\n", secs);
		return;
	}
	if (code != PV_OK)
		return;
	if (strcmp(c->state, "moved") == 0)
		printf("%s: moved %s:%s (%lu entries) to %s and made it anew, empty\n", cmd, where,
		       c->results, c->entries, c->backup);
	else if (strcmp(c->state, "would move") == 0)
		printf("%s: would move %s:%s (%lu entries) to %s and make it anew, empty\n", cmd,
		       where, c->results, c->entries, c->backup);
	else if (strcmp(c->state, "created") == 0)
		printf("%s: created %s:%s, empty\n", cmd, where, c->results);
	else if (strcmp(c->state, "would create") == 0)
		printf("%s: would create %s:%s\n", cmd, where, c->results);
	else if (strcmp(c->state, "empty") == 0)
		printf("%s: nothing to do: %s:%s is empty already\n", cmd, where, c->results);
	else
		printf("%s: nothing to do: %s:%s does not exist\n", cmd, where, c->results);
}

static int run_controller(struct pv_ctx *ctx, bool cleanup)
{
	struct ctl c;
	const struct pv_controller *pc;
	const char *where = "local";
	struct tm tm;
	time_t now = time(NULL);
	double t0 = pv_now();
	int r;

	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.cleanup = cleanup;
	c.dry = ctx->cli.opt[OPT_DRY_RUN] != NULL;
	c.bdir = ctx->cli.opt[OPT_BACKUP];
	if ((r = pv_ctx_load(ctx)) != PV_OK)
		goto out;
	if (ctx->cli.opt[OPT_CLIENTS]) {
		r = pv_error(PV_EUSAGE, "--clients does not apply to '%s'",
			     cleanup ? "cleanup controller" : "controller");
		goto out;
	}
	if (!ctx->pb->has_controller) {
		r = pv_error(PV_ECONFIG, "the playbook has no controller section; add "
					 "'controller: {results: PATH}' (and host: for a remote "
					 "controller)");
		goto out;
	}
	if (c.bdir && !*c.bdir) {
		r = pv_error(PV_EUSAGE, "--backup needs a folder");
		goto out;
	}
	pc = &ctx->pb->controller;
	if ((r = split(&c, pc->results)) != PV_OK)
		goto out;
	localtime_r(&now, &tm);
	strftime(c.stamp, sizeof(c.stamp), "%Y%m%d-%H%M%S", &tm);
	if (pc->host.name) {
		where = pc->host.name;
		r = remote_reset(&c, &pc->host);
	} else {
		r = local_reset(&c);
	}
	if (r == PV_OK && strcmp(c.state, "moved") == 0)
		pv_log(PV_LOG_INFO, "%s: moved %s to %s", where, c.results, c.backup);
	report(&c, where, pv_now() - t0, r);
out:
	if (r != PV_OK)
		pv_out_fail(r);
	return r;
}

int pv_cmd_controller(struct pv_ctx *ctx)
{
	return run_controller(ctx, false);
}

int pv_cmd_cleanup_controller(struct pv_ctx *ctx)
{
	return run_controller(ctx, true);
}
