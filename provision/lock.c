/* provision/lock.c: one command that changes a lab at a time, on this controller. prepare, a
 * phase, run and cleanup hold a lock on /run/lock/provision-<lab>.lock (fcntl, released by the
 * kernel when the process ends, however it ends) for their whole run; a second one on the same
 * lab is refused at once with the holder's pid (PV_EBUSY), before it asks for a password or
 * touches anything. Read-only commands (status, check, wait) and dry runs take no lock. */
#include "provision/provision.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char LOCK_DIR[] = "/run/lock"; /* sticky; $PROVISION_LOCK_DIR overrides it */

int pv_lab_lock(const char *lab)
{
	const char *dir = getenv("PROVISION_LOCK_DIR");
	struct flock fl;
	struct stat st;
	char path[512];
	int fd;

	if (!dir || !*dir)
		dir = LOCK_DIR;
	if ((size_t)snprintf(path, sizeof(path), "%s/provision-%s.lock", dir, lab) >= sizeof(path))
		return pv_error(PV_EIO, "the lock file's path for lab '%s' is too long", lab);
	/* a name in a folder others may write to: never through a link, only a plain file, and
	 * nothing is ever written to it (the lock is on the open file) */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == ENOENT && dir == LOCK_DIR) {
		/* a system without /run/lock (a bare container): /tmp, sticky too */
		snprintf(path, sizeof(path), "/tmp/provision-%s.lock", lab);
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return pv_error(PV_EIO,
				"cannot open the lock file %s for lab '%s': %s (another "
				"provision's lock is kept there; set PROVISION_LOCK_DIR to a "
				"folder of yours to use another)",
				path, lab, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return pv_error(PV_EIO,
				"the lock file %s for lab '%s' is not a plain file: remove it",
				path, lab);
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_SETLK, &fl) == 0)
		return PV_OK; /* fd stays open: the lock lasts as long as the process */
	if (errno != EACCES && errno != EAGAIN) {
		int e = errno;

		close(fd);
		return pv_error(PV_EIO, "cannot lock %s for lab '%s': %s", path, lab, strerror(e));
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
		fl.l_pid = 0;
	close(fd);
	if (fl.l_pid > 0)
		return pv_error(
			PV_EBUSY,
			"lab '%s' is busy: another provision (pid %ld) is changing it (lock "
			"%s); wait for it to end, or stop it, then run this again",
			lab, (long)fl.l_pid, path);
	return pv_error(PV_EBUSY,
			"lab '%s' is busy: another provision is changing it (lock %s); wait for it "
			"to end, or stop it, then run this again",
			lab, path);
}
