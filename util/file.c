/* util/file.c: a small local file read whole (see file.h). */
#include "util/file.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
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
