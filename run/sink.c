/* run/sink.c: the run's results folder, on this machine or on the controller's host (see
 * sink.h). */
#include "run/sink.h"

#include "remote/quote.h"
#include "util/err.h"
#include "util/tar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char pv_run_sink_mkdir_sh[], pv_run_sink_open_sh[], pv_run_sink_untar_sh[];

int pv_sink_dir(struct pv_sink *k, const char *rel, bool mk, int *out)
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
	char tmp[300];
	int fd, r = PV_OK;

	snprintf(tmp, sizeof(tmp), replace ? ".%s.new" : "%s", name);
	if (replace)
		unlinkat(dir, tmp, 0);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = pv_error(PV_EIO, "cannot write %s/%s: %s", where, name,
				     strerror(errno));
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && r == PV_OK)
		r = pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
	if (r == PV_OK && replace && renameat(dir, tmp, dir, name) < 0)
		r = pv_error(PV_EIO, "cannot write %s/%s: %s", where, name, strerror(errno));
	return r;
}

static int remote_cmd(struct pv_sink *k, const char *what, const char *script, const void *in,
		      size_t inlen)
{
	struct pv_buf err = PV_BUF_INIT;
	int status = 0, r;

	r = pv_remote_exec(k->rem, script, in, inlen, NULL, &err, &status, 0);
	if (r == PV_OK && status != 0)
		r = pv_error(PV_EREMOTE, "%s on the controller '%s' failed (status %d): %s", what,
			     pv_remote_name(k->rem), status, err.len ? err.data : "no message");
	pv_buf_release(&err, 0);
	return r;
}

int pv_sink_mkdir(struct pv_sink *k, const char *rel)
{
	struct pv_buf sc = PV_BUF_INIT;
	int fd, r;

	if (!k->rem) {
		if ((r = pv_sink_dir(k, rel, true, &fd)) == PV_OK)
			close(fd);
		return r;
	}
	pv_remote_var(&sc, "d", k->path);
	pv_remote_var(&sc, "rel", rel);
	pv_buf_addstr(&sc, pv_run_sink_mkdir_sh);
	pthread_mutex_lock(&k->lock);
	r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
			       : remote_cmd(k, "making a results folder", sc.data, NULL, 0);
	pthread_mutex_unlock(&k->lock);
	pv_buf_release(&sc, 0);
	return r;
}

int pv_sink_write(struct pv_sink *k, const char *rel, const char *name, const void *data,
		  size_t len, bool replace)
{
	char full[2048];
	int fd, r;

	snprintf(full, sizeof(full), "%s%s%s/%s", k->path, *rel ? "/" : "", rel, name);
	if (!k->rem) {
		if ((r = pv_sink_dir(k, rel, false, &fd)) != PV_OK)
			return r;
		r = local_write(fd, k->path, name, data, len, replace);
		close(fd);
		return r;
	}
	pthread_mutex_lock(&k->lock);
	r = pv_remote_write_file(k->rem, full, data, len, 0644);
	pthread_mutex_unlock(&k->lock);
	return r;
}

struct untar {
	struct pv_sink *k;
	const char *rel;
	int top;
	unsigned long files;
	unsigned long long bytes;
};

static int untar_entry(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct untar *u = arg;
	const char *slash = strrchr(e->path, '/');
	struct pv_sink sub = *u->k;
	char dir[1024];
	int fd = -1, r;

	sub.fd = u->top;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - e->path) : 0, e->path);
	if (e->dir) {
		if ((r = pv_sink_dir(&sub, e->path, true, &fd)) == PV_OK)
			close(fd);
		return r;
	}
	if ((r = pv_sink_dir(&sub, dir, true, &fd)) != PV_OK)
		return r;
	r = local_write(fd, u->k->path, slash ? slash + 1 : e->path, content, (size_t)e->size,
			false);
	close(fd);
	u->files++;
	u->bytes += e->size;
	return r;
}

static int untar_entry_count(void *arg, const struct pv_tar_entry *e, const char *content)
{
	struct untar *u = arg;

	(void)content;
	if (!e->dir) {
		u->files++;
		u->bytes += e->size;
	}
	return 0;
}

int pv_sink_tar(struct pv_sink *k, const char *rel, const struct pv_buf *tar, unsigned long *files,
		unsigned long long *bytes, unsigned long *skipped)
{
	struct untar u = {k, rel, -1, 0, 0};
	int r;

	if (!k->rem) {
		if ((r = pv_sink_dir(k, rel, true, &u.top)) != PV_OK)
			return r;
		r = pv_tar_each(tar->data, tar->len, untar_entry, &u, skipped);
		close(u.top);
	} else {
		struct pv_buf sc = PV_BUF_INIT;

		/* checked first: only files and folders, clean paths, into a folder of ours */
		if ((r = pv_tar_each(tar->data, tar->len, untar_entry_count, &u, skipped)) != PV_OK)
			return r;
		pv_remote_var(&sc, "d", k->path);
		pv_remote_var(&sc, "rel", rel);
		pv_buf_addstr(&sc, pv_run_sink_untar_sh);
		pthread_mutex_lock(&k->lock);
		r = pv_buf_failed(&sc)
			    ? pv_error(PV_EIO, "out of memory")
			    : remote_cmd(k, "writing results", sc.data, tar->data, tar->len);
		pthread_mutex_unlock(&k->lock);
		pv_buf_release(&sc, 0);
	}
	*files = u.files;
	*bytes = u.bytes;
	return r;
}

/* Make <results>/<name> on this machine: PV_OK, -EEXIST, or an error recorded. */
static int open_local(struct pv_sink *k, const char *results, const char *name)
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
static int open_remote(struct pv_sink *k, const char *results, const char *name)
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

int pv_sink_open(struct pv_sink *k, struct pv_remote *rem, const char *results, const char *id,
		 bool given, char name[64])
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

void pv_sink_close(struct pv_sink *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	if (k->locked)
		pthread_mutex_destroy(&k->lock);
	k->locked = false;
}
