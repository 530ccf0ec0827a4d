/* util/file.h: local files read and written whole. Reading a small file a user names (a
 * playbook, an inventory), with its size capped and anything but a regular file refused before
 * it is read (a FIFO is never waited on); writing one so that a reader finds the old file or the
 * new one, never a part (the run's results, report.html). */
#ifndef PV_UTIL_FILE_H
#define PV_UTIL_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Read the regular file at path, at most max bytes, into *text (NUL-terminated; the caller
 * frees it) and *len. *st receives its status whenever it could be taken (zeroed otherwise),
 * so a caller can refuse more (an executable). what names the file in messages ("playbook").
 * PV_EIO: it cannot be opened or read, or it is a folder or not a regular file ("cannot read
 * playbook 'x': it is a folder"); PV_ECONFIG: larger than max. */
int pv_file_read(const char *path, const char *what, size_t max, char **text, size_t *len,
		 struct stat *st);

/* data (len bytes) as the file name in the folder dir (a descriptor, or AT_FDCWD and a path),
 * whole or not at all. tmp: written there first (beside name, in dir; one left by an earlier
 * failure removed first), then renamed over name (a link at name is replaced, never followed);
 * NULL: written to name itself, which must not exist yet. On failure what was written is
 * removed (tmp, or name when tmp is NULL), never left as a part of a file under a name read as
 * whole. what names the file in messages. PV_OK, or PV_EIO "cannot write WHAT: ...". */
int pv_file_write_at(int dir, const char *name, const char *tmp, const void *data, size_t len,
		     const char *what);

/* data to path as a new file put in place at once (pv_file_write_at with path.new as tmp).
 * PV_EIO naming the path on failure. */
int pv_file_replace(const char *path, const void *data, size_t len);

#endif
