/* run/sink.c: the run's results folder, on this machine or on the controller's host (see
 * sink.h). */
#include "run/sink.h"

#include "run/caps.h"

#include "remote/quote.h"
#include "util/err.h"
#include "util/file.h"
#include "util/tar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char pv_run_sink_open_sh[];

int pv_run_sink_dir(struct pv_run_sink *k, const char *rel, bool mk, int *out)
{
	char part[1024];
	int fd = dup(k->fd);

	if (fd < 0)
		return pv_error(PV_EIO, "%s: %s", k->path, strerror(errno));
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		int next;

		snprintf(part, sizeof(part), "%.*s", (int)n, p);
		if (mk && mkdirat(fd, part, 0755) < 0 && errno != EEXIST) {
			close(fd);
			return pv_error(PV_EIO, "cannot make %s/%s: %s", k->path, rel,
					strerror(errno));
		}
		next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return pv_error(PV_EIO, "%s/%s: %s", k->path, rel, strerror(errno));
		fd = next;
		p += n;
		while (*p == '/')
			p++;
	}
	*out = fd;
	return PV_OK;
}

static int local_write(int dir, const char *where, const char *name, const void *data, size_t len,
		       bool replace)
{
	char tmp[300], what[1400];

	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	snprintf(what, sizeof(what), "%s/%s", where, name);
	return pv_file_write_at(dir, name, replace ? tmp : NULL, data, len, what);
}

/* The first failure kept (its words), for the run to stop on; r again. */
static int remember(struct pv_run_sink *k, int r)
{
	if (r == PV_OK || !k->locked)
		return r;
	pthread_mutex_lock(&k->lock);
	if (!k->failed) {
		k->failed = true;
		snprintf(k->fail, sizeof(k->fail), "%s", pv_errmsg());
	}
	pthread_mutex_unlock(&k->lock);
	return r;
}

int pv_run_sink_mkdir(struct pv_run_sink *k, const char *rel)
{
	char full[2048];
	size_t pl = strlen(k->path);
	int fd, r = PV_OK;

	if (!k->rem) {
		if ((r = pv_run_sink_dir(k, rel, true, &fd)) == PV_OK)
			close(fd);
		return remember(k, r);
	}
	/* over SFTP, each folder of rel in turn (one that is there must be a folder) */
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", k->path, rel) >= sizeof(full))
		return pv_error(PV_EIO, "the results path %s/%s is too long", k->path, rel);
	pthread_mutex_lock(&k->lock);
	for (char *p = full + pl + 1; r == PV_OK && (p = strchr(p, '/')); p++) {
		*p = '\0';
		r = pv_remote_mkdir(k->rem, full, 0755);
		*p = '/';
	}
	if (r == PV_OK)
		r = pv_remote_mkdir(k->rem, full, 0755);
	pthread_mutex_unlock(&k->lock);
	return r;
}

int pv_run_sink_write(struct pv_run_sink *k, const char *rel, const char *name, const void *data,
		      size_t len, bool replace)
{
	char full[2048];
	int fd, r;

	snprintf(full, sizeof(full), "%s%s%s/%s", k->path, *rel ? "/" : "", rel, name);
	if (!k->rem) {
		if ((r = pv_run_sink_dir(k, rel, false, &fd)) != PV_OK)
			return remember(k, r);
		r = local_write(fd, k->path, name, data, len, replace);
		close(fd);
		return remember(k, r);
	}
	pthread_mutex_lock(&k->lock);
	r = pv_remote_write_file(k->rem, full, data, len, 0644);
	pthread_mutex_unlock(&k->lock);
	return remember(k, r);
}

int pv_run_sink_append(struct pv_run_sink *k, const char *rel, const char *name, const void *data,
		       size_t len)
{
	char full[2048];
	int dfd, fd, r = PV_OK;

	snprintf(full, sizeof(full), "%s%s%s/%s", k->path, *rel ? "/" : "", rel, name);
	if (k->rem) {
		pthread_mutex_lock(&k->lock);
		r = pv_remote_append_file(k->rem, full, data, len);
		pthread_mutex_unlock(&k->lock);
		return remember(k, r);
	}
	if ((r = pv_run_sink_dir(k, rel, false, &dfd)) != PV_OK)
		return remember(k, r);
	fd = openat(dfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return remember(k,
				pv_error(PV_EIO, "cannot append to %s: %s", full, strerror(errno)));
	for (size_t done = 0; done < len && r == PV_OK;) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = pv_error(PV_EIO, "cannot write %s: %s", full,
				     w < 0 ? strerror(errno) : "nothing written");
		else
			done += (size_t)w;
	}
	if (close(fd) < 0 && r == PV_OK)
		r = pv_error(PV_EIO, "cannot write %s: %s", full, strerror(errno));
	return remember(k, r);
}

/* Writing a ustar stream out (pv_run_sink_tar): provision's own reader (util/tar.h) takes it apart,
 * so only folders and regular files with clean paths ever reach the results; each is written
 * by provision, here with openat(O_NOFOLLOW) and O_EXCL, on the controller's host over SFTP
 * (mkdir, and open with O_EXCL, which never goes through a name that is there). Never by tar:
 * a client's links, device nodes and FIFOs are not made anywhere. */
struct untar {
	struct pv_run_sink *k;
	char top[1200];	 /* the folder the stream goes into: rel (local) or its full path */
	char made[2048]; /* remote: the last folder made (its parents were made before it) */
	int fd;		 /* local: that folder */
	unsigned long files, entries;
	unsigned long long bytes;
};

static int untar_local(struct untar *u, const struct pv_tar_entry *e, const char *content)
{
	const char *slash = strrchr(e->path, '/');
	struct pv_run_sink sub = *u->k;
	char dir[1024];
	int fd = -1, r;

	sub.fd = u->fd;
	if (e->dir) {
		if ((r = pv_run_sink_dir(&sub, e->path, true, &fd)) == PV_OK)
			close(fd);
		return r;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - e->path) : 0, e->path);
	if ((r = pv_run_sink_dir(&sub, dir, true, &fd)) != PV_OK)
		return r;
	r = local_write(fd, u->k->path, slash ? slash + 1 : e->path, content, (size_t)e->size,
			false);
	close(fd);
	return r;
}

/* Each folder of path (below top) made over SFTP, then the file itself when it is one. */
static int untar_remote(struct untar *u, const struct pv_tar_entry *e, const char *content)
{
	char full[2048];
	size_t tl = strlen(u->top);
	int r = PV_OK;

	char *slash;

	if ((size_t)snprintf(full, sizeof(full), "%s/%s", u->top, e->path) >= sizeof(full))
		return pv_error(PV_EREMOTE, "the results hold a path too long: '%.100s...'",
				e->path);
	/* the folders on the way, unless they are the last one made (tar lists a folder before
	 * what it holds) */
	slash = strrchr(full, '/');
	if (strlen(u->made) != (size_t)(slash - full) ||
	    strncmp(u->made, full, (size_t)(slash - full)))
		for (char *p = full + tl + 1; r == PV_OK && (p = strchr(p, '/')); p++) {
			*p = '\0';
			r = pv_remote_mkdir(u->k->rem, full, 0755);
			*p = '/';
		}
	if (r != PV_OK)
		return r;
	if (e->dir) {
		if ((r = pv_remote_mkdir(u->k->rem, full, 0755)) == PV_OK)
			snprintf(u->made, sizeof(u->made), "%s", full);
		return r;
	}
	return pv_remote_create_file(u->k->rem, full, content, (size_t)e->size, 0644);
}

static int untar_entry(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct untar *u = arg;

	if (!e->dir) {
		u->files++;
		u->bytes += e->size;
	}
	return u->k->rem ? untar_remote(u, e, content) : untar_local(u, e, content);
}

/* The first pass: how many entries, refused past the cap before anything is written. */
static int untar_count(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct untar *u = arg;

	(void)e;
	(void)content;
	if (++u->entries > PV_RUN_GATHER_ENTRIES_MAX)
		return pv_error(PV_EREMOTE,
				"the results hold more than %d files and folders: refused, none "
				"written",
				PV_RUN_GATHER_ENTRIES_MAX);
	return 0;
}

int pv_run_sink_tar(struct pv_run_sink *k, const char *rel, const struct pv_buf *tar,
		    unsigned long *files, unsigned long long *bytes, unsigned long *skipped)
{
	struct untar u = {.k = k, .fd = -1};
	int r;

	*files = 0;
	*bytes = 0;
	if (tar->len > PV_RUN_GATHER_MAX)
		return pv_error(PV_EREMOTE, "the results are more than %u MiB: refused",
				PV_RUN_GATHER_MAX >> 20);
	/* the whole stream checked first: clean, and within the cap */
	if ((r = pv_tar_each(tar->data, tar->len, untar_count, &u, skipped)) != PV_OK)
		return r;
	if ((r = pv_run_sink_mkdir(k, rel)) != PV_OK)
		return r;
	if (k->rem)
		snprintf(u.top, sizeof(u.top), "%s/%s", k->path, rel);
	else if ((r = pv_run_sink_dir(k, rel, false, &u.fd)) != PV_OK)
		return r;
	pthread_mutex_lock(&k->lock);
	r = pv_tar_each(tar->data, tar->len, untar_entry, &u, skipped);
	pthread_mutex_unlock(&k->lock);
	if (u.fd >= 0)
		close(u.fd);
	*files = u.files;
	*bytes = u.bytes;
	return r;
}

/* Make <results>/<name> on this machine: PV_OK, -EEXIST, or an error recorded. */
static int open_local(struct pv_run_sink *k, const char *results, const char *name)
{
	int top = open(results, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

	if (top < 0)
		return pv_error(PV_EIO,
				"the controller's results folder %s: %s; make it with "
				"'provision prepare controller'",
				results, strerror(errno));
	r = mkdirat(top, name, 0755) == 0 ? PV_OK : -errno;
	if (r == PV_OK)
		k->fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(top);
	if (r == -EEXIST)
		return r;
	if (r != PV_OK)
		return pv_error(PV_EIO, "cannot make %s: %s", k->path, strerror(-r));
	if (k->fd < 0)
		return pv_error(PV_EIO, "%s: %s", k->path, strerror(errno));
	return PV_OK;
}

/* The same on the controller's host. */
static int open_remote(struct pv_run_sink *k, const char *results, const char *name)
{
	struct pv_buf sc = PV_BUF_INIT, err = PV_BUF_INIT;
	int status = 0, r;

	pv_remote_var(&sc, "d", results);
	pv_remote_var(&sc, "n", name);
	pv_buf_addstr(&sc, pv_run_sink_open_sh);
	r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
			       : pv_remote_exec(k->rem, sc.data, NULL, 0, NULL, &err, &status, 0);
	if (r == PV_OK && status == 17)
		r = -EEXIST;
	else if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "cannot make %s on the controller '%s': %s", k->path,
			     pv_remote_name(k->rem), err.len ? err.data : "failed");
	pv_buf_release(&sc, 0);
	pv_buf_release(&err, 0);
	return r;
}

int pv_run_sink_open(struct pv_run_sink *k, struct pv_remote *rem, const char *results,
		     const char *id, bool given, char name[64])
{
	int r;

	k->rem = rem;
	k->fd = -1;
	pthread_mutex_init(&k->lock, NULL);
	k->locked = true;
	for (int attempt = 1; attempt <= 9; attempt++) {
		snprintf(name, 64, attempt > 1 ? "%s-%d" : "%s", id, attempt);
		snprintf(k->path, sizeof(k->path), "%s/%s", results, name);
		r = rem ? open_remote(k, results, name) : open_local(k, results, name);
		if (r == -EEXIST && !given)
			continue;
		if (r == -EEXIST)
			return pv_error(rem ? PV_EREMOTE : PV_EIO,
					"cannot make %s: it exists (choose another --id)", k->path);
		return r;
	}
	return pv_error(PV_EIO, "%s/%s already exists, and so do the next 8 names", results, id);
}

void pv_run_sink_close(struct pv_run_sink *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	if (k->locked)
		pthread_mutex_destroy(&k->lock);
	k->locked = false;
}
