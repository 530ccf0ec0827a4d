/* run/install.c: provision's binary on a client (see install.h). */
#include "run/install.h"

#include "run/lines.h"

#include "remote/quote.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const char pv_run_install_sh[];

int pv_run_self_read(struct pv_run_self *self)
{
	struct pv_buf b = PV_BUF_INIT;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	char chunk[65536];
	ssize_t n;

	memset(self, 0, sizeof(*self));
	if (fd < 0)
		return pv_error(PV_EIO, "cannot read provision's own binary (/proc/self/exe): %s",
				strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		pv_buf_add(&b, chunk, (size_t)n);
	close(fd);
	if (n < 0 || pv_buf_failed(&b)) {
		pv_buf_release(&b, 0);
		return pv_error(PV_EIO, "cannot read provision's own binary: %s",
				n < 0 ? strerror(errno) : "out of memory");
	}
	self->len = b.len;
	self->data = pv_buf_detach(&b);
	pv_sha256_hex(self->data, self->len, self->digest);
	return PV_OK;
}

void pv_run_self_release(struct pv_run_self *self)
{
	free(self->data);
	memset(self, 0, sizeof(*self));
}

/* Run the install script in mode (check or finish) on the host; its stdout into out. */
static int script(struct pv_remote *rem, const char *dir, const char *digest, const char *tmp,
		  const char *mode, struct pv_buf *out)
{
	struct pv_buf sc = PV_BUF_INIT, err = PV_BUF_INIT;
	int status = 0, r;

	pv_remote_var(&sc, "dir", dir);
	pv_remote_var(&sc, "digest", digest);
	pv_remote_var(&sc, "tmp", tmp);
	pv_remote_var(&sc, "mode", mode);
	pv_buf_addstr(&sc, pv_run_install_sh);
	r = pv_buf_failed(&sc) ? pv_error(PV_EIO, "out of memory")
			       : pv_remote_exec(rem, sc.data, NULL, 0, out, &err, &status, 0);
	if (r == PV_OK && status != 0) {
		/* the script's last line says what is wrong; status 3: the folder, 4: libraries */
		r = pv_error(status == 3 ? PV_ECONFIG : PV_EREMOTE, "'%s': %s", pv_remote_name(rem),
			     err.len ? err.data : "the install check failed");
	}
	pv_buf_release(&sc, 0);
	pv_buf_release(&err, 0);
	return r;
}

int pv_run_install_self(struct pv_remote *rem, const struct pv_run_self *self, char *path,
			size_t len, bool *copied)
{
	struct pv_buf out = PV_BUF_INIT;
	char dir[64], tmp[160], name[80];
	int r;

	*copied = false;
	snprintf(dir, sizeof(dir), "/var/tmp/provision-%.16s", self->digest);
	snprintf(path, len, "%s/provision", dir);
	/* the copy's name carries the host's: hosts may share a file system */
	snprintf(name, sizeof(name), "provision.new.%.60s", pv_remote_name(rem));
	for (char *c = name; *c; c++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-",
			    *c))
			*c = '_';
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, name);
	if ((r = script(rem, dir, self->digest, name, "check", &out)) != PV_OK)
		goto out;
	if ((r = pv_run_install_answer(out.data ? out.data : "", out.len, false)) < 0) {
		r = pv_error_prefix(PV_EREMOTE, "'%s'", pv_remote_name(rem));
		goto out;
	}
	if (r == 1) {
		pv_log(PV_LOG_DEBUG, "%s: %s is there already", pv_remote_name(rem), path);
		r = PV_OK;
		goto out;
	}
	pv_log(PV_LOG_INFO, "%s: copying provision (%zu bytes) to %s", pv_remote_name(rem),
	       self->len, path);
	if ((r = pv_remote_write_file(rem, tmp, self->data, self->len, 0700)) != PV_OK)
		goto out;
	pv_buf_reset(&out);
	if ((r = script(rem, dir, self->digest, name, "finish", &out)) != PV_OK)
		goto out;
	if (pv_run_install_answer(out.data ? out.data : "", out.len, true) < 0) {
		r = pv_error_prefix(PV_EREMOTE, "'%s'", pv_remote_name(rem));
		goto out;
	}
	r = PV_OK;
	*copied = true;
out:
	pv_buf_release(&out, 0);
	return r;
}
