/* provision/lock.c: one command that changes a lab at a time, on this controller. prepare, a
 * phase, run and cleanup hold a lock on <folder>/<lab>.lock (fcntl, released by the kernel when
 * the process ends, however it ends) for their whole run; a second one on the same lab is
 * refused at once with the holder's pid (PV_EBUSY), before it asks for a password or touches
 * anything. Read-only commands (status, check, wait) and dry runs take no lock.
 *
 * The folder is one only we can write to, so that no other local user can take a lab's lock
 * first (a world-writable /run/lock let anyone block every run, or, with
 * fs.protected_regular, make root's open of the file fail): LOCK_DIR (/run/provision), made
 * 0700 when missing, for root; $XDG_RUNTIME_DIR/provision for another user; or the folder
 * $PROVISION_LOCK_DIR names. Whichever it is, it must be a real folder (not a link) owned by
 * us and writable by nobody else, or provision refuses to run. */
#include "provision/provision.h"

#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_DIR "/run/provision"

/* The folder at dir, made (mode 0700) when made is set and it is missing, then checked as
 * the header says. */
static int lock_folder(const char *dir, bool make, const char *fix)
{
	struct stat st;

	if (make && mkdir(dir, 0700) != 0 && errno != EEXIST)
		return pv_error(PV_EIO, "cannot make the lock folder %s: %s; %s", dir,
				strerror(errno), fix);
	if (lstat(dir, &st) != 0)
		return pv_error(PV_EIO, "cannot use the lock folder %s: %s; %s", dir,
				strerror(errno), fix);
	if (!S_ISDIR(st.st_mode))
		return pv_error(PV_EIO, "the lock folder %s is not a folder (a link, say); %s", dir,
				fix);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return pv_error(PV_EIO,
				"the lock folder %s is %s: another user could take a lab's lock "
				"there first; %s",
				dir, st.st_uid != geteuid() ? "not ours" : "writable by others",
				fix);
	return PV_OK;
}

int pv_lab_lock(const char *lab)
{
	const char *env = getenv("PROVISION_LOCK_DIR"), *run = getenv("XDG_RUNTIME_DIR");
	const char *fix = "set PROVISION_LOCK_DIR to a folder only you can write to";
	char dir[256], path[512];
	struct flock fl;
	struct stat st;
	int fd, r;

	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
		r = lock_folder(dir, false, "fix it, or set PROVISION_LOCK_DIR to another folder");
	} else if (geteuid() == 0 || !run || !*run) {
		snprintf(dir, sizeof(dir), "%s", LOCK_DIR);
		r = lock_folder(dir, true, fix);
	} else {
		snprintf(dir, sizeof(dir), "%s/provision", run);
		r = lock_folder(dir, true, fix);
	}
	if (r != PV_OK)
		return r;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.lock", dir, lab) >= sizeof(path))
		return pv_error(PV_EIO, "the lock file's path for lab '%s' is too long", lab);
	/* the folder is ours alone; still never through a link, and only a plain file, and
	 * nothing is ever written to it (the lock is on the open file) */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return pv_error(PV_EIO, "cannot open the lock file %s for lab '%s': %s", path, lab,
				strerror(errno));
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
