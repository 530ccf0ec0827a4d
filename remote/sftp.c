/* remote/sftp.c: whole files over SFTP on an SSH session (remote/ssh.c): a file read (within
 * remote/caps.h's cap), written or made new with its mode set before any data goes in, a
 * folder made. */
#include "remote/remote.h"

#include "remote/caps.h"
#include "remote/internal.h"

#include "util/err.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

static const char *sftp_text(int code)
{
	switch (code) {
	case SSH_FX_EOF:
		return "unexpected end of file";
	case SSH_FX_NO_SUCH_FILE:
		return "no such file";
	case SSH_FX_PERMISSION_DENIED:
		return "permission denied";
	case SSH_FX_BAD_MESSAGE:
		return "bad SFTP message";
	case SSH_FX_NO_CONNECTION:
	case SSH_FX_CONNECTION_LOST:
		return "connection lost";
	case SSH_FX_OP_UNSUPPORTED:
		return "operation not supported by the server";
	case SSH_FX_NO_SUCH_PATH:
		return "no such directory";
	case SSH_FX_FILE_ALREADY_EXISTS:
		return "file exists";
	case SSH_FX_WRITE_PROTECT:
		return "read-only file system";
	case SSH_FX_NO_MEDIA:
		return "no media";
	default:
		return NULL;
	}
}

/* Record an SFTP failure: the SFTP status when there is one, else libssh's session error. */
static int sftp_failed(struct pv_remote *rem, const char *what, const char *path)
{
	const char *t = rem->sftp ? sftp_text(sftp_get_error(rem->sftp)) : NULL;
	char w[600];

	if (!ssh_is_connected(rem->session))
		return remote_lost(rem, what, path);
	remote_who(rem, w, sizeof(w));
	return pv_error(PV_EREMOTE, "%s '%s' on %s: %s", what, path, w,
			t ? t : ssh_get_error(rem->session));
}

static int sftp_ready(struct pv_remote *rem)
{
	char w[600];
	int r = PV_EBUG;

	if (rem->sftp != NULL)
		return PV_OK;
	remote_who(rem, w, sizeof(w));
	if ((rem->sftp = sftp_new(rem->session)) == NULL || sftp_init(rem->sftp) != SSH_OK) {
		if (!ssh_is_connected(rem->session))
			r = remote_lost(rem, "starting", "sftp");
		else
			r = pv_error(PV_EREMOTE,
				     "SFTP not available on %s (is the sftp subsystem enabled in "
				     "sshd_config?): %s",
				     w, ssh_get_error(rem->session));
		if (rem->sftp != NULL)
			sftp_free(rem->sftp);
		rem->sftp = NULL;
		goto out;
	}
	r = PV_OK;
out:
	return r;
}

int pv_remote_read_file(struct pv_remote *rem, const char *path, struct pv_buf *buf)
{
	sftp_file f = NULL;
	char *chunk = NULL;
	ssize_t n;
	size_t start = buf->len;
	int r = PV_EBUG;

	if ((r = sftp_ready(rem)) != PV_OK)
		goto out;
	if ((chunk = malloc(IO_CHUNK)) == NULL) {
		r = pv_error(PV_EIO, "out of memory");
		goto out;
	}
	if ((f = sftp_open(rem->sftp, path, O_RDONLY, 0)) == NULL) {
		r = sftp_failed(rem, "cannot open", path);
		goto out;
	}
	while ((n = sftp_read(f, chunk, IO_CHUNK)) > 0) {
		if (buf->len - start + (size_t)n > PV_REMOTE_FILE_MAX) {
			r = pv_error(PV_EREMOTE, "'%s' on '%s' is larger than %u MiB: refused",
				     path, rem->name, PV_REMOTE_FILE_MAX >> 20);
			goto out;
		}
		if (pv_buf_add(buf, chunk, (size_t)n) < 0) {
			r = pv_error(PV_EIO, "out of memory");
			goto out;
		}
	}
	if (n < 0) {
		r = sftp_failed(rem, "cannot read", path);
		goto out;
	}
	r = PV_OK;
out:
	if (r != PV_OK && buf->data != NULL) {
		/* leave the buffer as it was */
		buf->len = start;
		buf->data[start] = '\0';
	}
	if (f != NULL)
		sftp_close(f);
	free(chunk);
	return r;
}

/* path written whole: flags O_TRUNC (made or truncated) or O_EXCL (made new, never through a
 * name that is there, a link included: SFTP's SSH_FXF_EXCL is open's O_EXCL on the server). */
static int write_file(struct pv_remote *rem, const char *path, int flags, const void *data,
		      size_t len, int mode)
{
	sftp_file f = NULL;
	sftp_attributes st = NULL;
	const char *p = data;
	size_t done = 0;
	ssize_t n;
	int r = PV_EBUG;

	if ((r = sftp_ready(rem)) != PV_OK)
		goto out;
	if ((f = sftp_open(rem->sftp, path, O_WRONLY | O_CREAT | flags, (mode_t)mode)) == NULL) {
		r = sftp_failed(rem, "cannot create", path);
		goto out;
	}
	/* The mode given to open applies only to a new file (and passes through the server's
	 * umask): set it before any data goes in, so a secret never sits in a wider file. */
	if ((st = sftp_fstat(f)) == NULL) {
		r = sftp_failed(rem, "cannot stat", path);
		goto out;
	}
	if ((st->permissions & 07777) != ((unsigned)mode & 07777) &&
	    sftp_chmod(rem->sftp, path, (mode_t)mode) < 0) {
		r = sftp_failed(rem, "cannot set the mode of", path);
		goto out;
	}
	while (done < len) {
		size_t chunk = len - done < IO_CHUNK ? len - done : IO_CHUNK;

		if ((n = sftp_write(f, p + done, chunk)) < 0) {
			r = sftp_failed(rem, "cannot write", path);
			goto out;
		}
		done += (size_t)n;
	}
	if (sftp_extension_supported(rem->sftp, "fsync@openssh.com", "1") && sftp_fsync(f) < 0) {
		r = sftp_failed(rem, "cannot fsync", path);
		goto out;
	}
	n = sftp_close(f);
	f = NULL;
	if (n != SSH_OK) {
		r = sftp_failed(rem, "cannot close", path);
		goto out;
	}
	r = PV_OK;
out:
	sftp_attributes_free(st);
	if (f != NULL)
		sftp_close(f);
	return r;
}

int pv_remote_write_file(struct pv_remote *rem, const char *path, const void *data, size_t len,
			 int mode)
{
	return write_file(rem, path, O_TRUNC, data, len, mode);
}

int pv_remote_create_file(struct pv_remote *rem, const char *path, const void *data, size_t len,
			  int mode)
{
	return write_file(rem, path, O_EXCL, data, len, mode);
}

int pv_remote_append_file(struct pv_remote *rem, const char *path, const void *data, size_t len)
{
	const char *p = data;
	sftp_file f;
	size_t done = 0;
	int r = PV_OK;

	if ((r = sftp_ready(rem)) != PV_OK)
		return r;
	/* no O_CREAT: the file is one made before (pv_remote_create_file); the server writes at
	 * its end whatever the offset (SSH_FXF_APPEND) */
	if ((f = sftp_open(rem->sftp, path, O_WRONLY | O_APPEND, 0)) == NULL)
		return sftp_failed(rem, "cannot append to", path);
	while (done < len && r == PV_OK) {
		size_t chunk = len - done < IO_CHUNK ? len - done : IO_CHUNK;
		ssize_t n = sftp_write(f, p + done, chunk);

		if (n < 0)
			r = sftp_failed(rem, "cannot write", path);
		else
			done += (size_t)n;
	}
	if (sftp_close(f) != SSH_OK && r == PV_OK)
		r = sftp_failed(rem, "cannot close", path);
	return r;
}

int pv_remote_mkdir(struct pv_remote *rem, const char *path, int mode)
{
	sftp_attributes st = NULL;
	int r;

	if ((r = sftp_ready(rem)) != PV_OK)
		return r;
	if (sftp_mkdir(rem->sftp, path, (mode_t)mode) == 0)
		return PV_OK;
	/* there already: fine when it is a folder itself (lstat: not a link to one) */
	if (sftp_get_error(rem->sftp) != SSH_FX_FILE_ALREADY_EXISTS &&
	    sftp_get_error(rem->sftp) != SSH_FX_FAILURE)
		return sftp_failed(rem, "cannot make the folder", path);
	if ((st = sftp_lstat(rem->sftp, path)) == NULL)
		return sftp_failed(rem, "cannot make the folder", path);
	r = st->type == SSH_FILEXFER_TYPE_DIRECTORY
		    ? PV_OK
		    : pv_error(PV_EREMOTE,
			       "cannot make the folder '%s' on '%s': something else is there", path,
			       rem->name);
	sftp_attributes_free(st);
	return r;
}
