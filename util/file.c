/* util/file.c: local files read and written whole (see file.h). */
#include "util/file.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pv_file_read(const char *path, const char *what, size_t max, char **text, size_t *len,
		 struct stat *st)
{
	char *buf = NULL;
	size_t got = 0;
	ssize_t n;
	int fd, r = PV_OK;

	memset(st, 0, sizeof(*st));
	/* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return pv_error(PV_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
	if (fstat(fd, st) < 0)
		r = pv_error(PV_EIO, "cannot read %s '%s': %s", what, path, strerror(errno));
	else if (!S_ISREG(st->st_mode))
		r = pv_error(PV_EIO, "cannot read %s '%s': %s", what, path,
			     S_ISDIR(st->st_mode) ? "it is a folder" : "not a regular file");
	else if ((size_t)st->st_size > max)
		r = pv_error(PV_ECONFIG, "%s '%s' is %lld bytes; expected at most %zu", what, path,
			     (long long)st->st_size, max);
	else if (!(buf = malloc((size_t)st->st_size + 1)))
		r = pv_error(PV_EIO, "out of memory");
	while (r == PV_OK && got < (size_t)st->st_size &&
	       (n = read(fd, buf + got, (size_t)st->st_size - got)) != 0) {
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			r = pv_error(PV_EIO, "cannot read %s '%s': %s", what, path,
				     strerror(errno));
		else if (n > 0)
			got += (size_t)n;
	}
	close(fd);
	if (r != PV_OK) {
		free(buf);
		return r;
	}
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return PV_OK;
}

int pv_file_write_at(int dir, const char *name, const char *tmp, const void *data, size_t len,
		     const char *what)
{
	const char *at = tmp ? tmp : name;
	int fd, r = PV_OK;

	if (tmp)
		unlinkat(dir, tmp, 0);
	fd = openat(dir, at, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return pv_error(PV_EIO, "cannot write %s: %s", what, strerror(errno));
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = pv_error(PV_EIO, "cannot write %s: %s", what, strerror(errno));
			break;
		}
		done += (size_t)w;
	}
	if (close(fd) < 0 && r == PV_OK)
		r = pv_error(PV_EIO, "cannot write %s: %s", what, strerror(errno));
	if (r == PV_OK && tmp && renameat(dir, tmp, dir, name) < 0)
		r = pv_error(PV_EIO, "cannot write %s: %s", what, strerror(errno));
	if (r != PV_OK)
		unlinkat(dir, at, 0); /* never a part of a file under a name read as whole */
	return r;
}

int pv_file_replace(const char *path, const void *data, size_t len)
{
	char tmp[2048];

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return pv_error(PV_EIO, "%s: the path is too long", path);
	return pv_file_write_at(AT_FDCWD, path, tmp, data, len, path);
}
