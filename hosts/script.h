/* hosts/script.h: the POSIX shell script that applies one hosts-file edit on a Linux/Unix host,
 * in one round trip, safely. Pure text generation (no I/O); provision/ runs the script over
 * SSH with the new content on stdin.
 *
 * What the script does, in order:
 *   1. takes a lock (flock on the file itself, waiting at most lock_wait seconds; without flock
 *      on the host it goes on and prints "pv-warn ...");
 *   2. checks the file still has the cksum it had when it was read (old_sum), else exit 22 and
 *      nothing is written;
 *   3. when new_sum is set: reads stdin into a temporary file next to the file (its mode and
 *      owner copied), checks it against new_sum (a cut connection gives a short file: exit 25,
 *      nothing written) and fsyncs it;
 *   4. when make_backup and no backup exists: keeps a copy of the current file as backup;
 *   5. renames the temporary file onto the file (atomic). When the file is a mount point
 *      (containers, network namespaces bind-mount a hosts file: rename gives EBUSY; known from
 *      /proc/self/mountinfo, or from the EBUSY itself) it rewrites the file in place (truncate,
 *      write, fsync) under the lock, checks the result, and on failure writes the previous
 *      content back;
 *   6. when drop_backup: removes the backup if it holds the same bytes as the file now;
 *   7. runs `getent hosts` on the verify names.
 * stdout lines: "pv-write rename|in-place", "pv-backup made|exists|removed|kept",
 * "pv-warn TEXT", then (with verify names) "pv-getent-output", getent's own lines as they are,
 * and "pv-getent <status>" last.
 * Exit status 0, or one of PV_HOSTS_SCRIPT_* below with one line on stderr saying why. */
#ifndef PV_HOSTS_SCRIPT_H
#define PV_HOSTS_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

enum {
	PV_HOSTS_SCRIPT_OPEN = 20,    /* the file cannot be opened */
	PV_HOSTS_SCRIPT_LOCKED = 21,  /* another writer held the lock too long */
	PV_HOSTS_SCRIPT_CHANGED = 22, /* the file changed after it was read */
	PV_HOSTS_SCRIPT_TEMP = 23,    /* no temporary file next to it */
	PV_HOSTS_SCRIPT_INPUT = 24,   /* the new content could not be stored */
	PV_HOSTS_SCRIPT_SHORT = 25,   /* the new content arrived incomplete */
	PV_HOSTS_SCRIPT_BACKUP = 26,  /* the backup could not be made */
	PV_HOSTS_SCRIPT_REPLACE = 27, /* rename failed (not EBUSY) */
	PV_HOSTS_SCRIPT_INPLACE = 28, /* in-place rewrite failed; previous content put back */
};

struct pv_hosts_write {
	const char *path;    /* the hosts file, e.g. /etc/hosts */
	const char *backup;  /* the backup's path; NULL when neither made nor dropped */
	const char *old_sum; /* "CRC LEN" of the content read (pv_hosts_cksum_str) */
	const char *new_sum; /* of the content sent on stdin; NULL: nothing is written */
	bool make_backup;    /* keep a copy of the current file as backup when there is none */
	bool drop_backup;    /* remove the backup when it equals the file (after any write) */
	const char *const *verify; /* names for getent hosts afterwards */
	size_t nverify;
	int lock_wait; /* seconds, > 0 */
};

/* Append the script (to be run by sh -c) to out. PV_EIO on allocation failure. */
int pv_hosts_script(struct pv_buf *out, const struct pv_hosts_write *w);

#endif
