/* util/secret.c: reading and wiping secrets. */
#include "util/secret.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECRET_MAX 4096

struct pv_secret *pv_secret_new(const char *s, size_t len)
{
	struct pv_secret *sec = calloc(1, sizeof(*sec));

	if (!sec)
		return NULL;
	sec->data = malloc(len + 1);
	if (!sec->data) {
		free(sec);
		return NULL;
	}
	memcpy(sec->data, s, len);
	sec->data[len] = '\0';
	sec->len = len;
	return sec;
}

void pv_secret_free(struct pv_secret *s)
{
	if (!s)
		return;
	if (s->data) {
		explicit_bzero(s->data, s->len);
		free(s->data);
	}
	free(s);
}

/* Reads at most SECRET_MAX bytes; stop_at_newline for interactive/stdin use. */
static int read_fd(int fd, const char *what, int stop_at_newline, struct pv_secret **out)
{
	char buf[SECRET_MAX + 1];
	size_t len = 0;
	int r = PV_OK;

	for (;;) {
		ssize_t n;

		if (len == sizeof(buf)) {
			r = pv_error(PV_ECONFIG, "secret from %s is longer than %d bytes", what,
				     SECRET_MAX);
			goto out;
		}
		n = read(fd, buf + len, stop_at_newline ? 1 : sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = pv_error(PV_EIO, "cannot read secret from %s: %s", what,
				     strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (stop_at_newline && buf[len - 1] == '\n')
			break;
	}
	/* One trailing newline (as editors and `echo` write it) is not part of the secret. */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	if (len == 0) {
		r = pv_error(PV_ECONFIG, "secret from %s is empty", what);
		goto out;
	}
	if (memchr(buf, '\0', len)) {
		r = pv_error(PV_ECONFIG, "secret from %s holds a NUL byte", what);
		goto out;
	}
	*out = pv_secret_new(buf, len);
	if (!*out)
		r = pv_error(PV_EIO, "out of memory");
out:
	explicit_bzero(buf, sizeof(buf));
	return r;
}

int pv_secret_from_file(const char *path, const char *what, struct pv_secret **out)
{
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pv_error(PV_EIO, "cannot open %s: %s", what, strerror(errno));
	r = read_fd(fd, what, 0, out);
	close(fd);
	return r;
}

int pv_secret_from_env(const char *name, const char *what, struct pv_secret **out)
{
	char *v = getenv(name);
	struct pv_secret *sec;
	size_t len;

	if (!v)
		return pv_error(PV_ECONFIG,
				"%s is unset: export it in the shell that runs provision, or give "
				"the secret as {file: F}, {stdin: true} or {prompt: true}",
				what);
	len = strlen(v);
	sec = len ? pv_secret_new(v, len) : NULL;
	/* Out of the environment, and out of memory: unsetenv only drops the pointer, and the
	 * initial environment block is what /proc/PID/environ shows. The string stays valid
	 * after unsetenv (glibc never frees what setenv made; the initial block is the stack's). */
	unsetenv(name);
	explicit_bzero(v, len);
	if (!len)
		return pv_error(PV_ECONFIG, "%s is empty", what);
	if (!sec)
		return pv_error(PV_EIO, "out of memory");
	*out = sec;
	return PV_OK;
}

int pv_secret_from_fd(int fd, const char *what, struct pv_secret **out)
{
	return read_fd(fd, what, 1, out);
}
