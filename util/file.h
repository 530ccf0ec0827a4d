/* util/file.h: reading a small local file a user names (a playbook, an inventory) whole, with
 * its size capped and anything but a regular file refused before it is read (a FIFO is never
 * waited on). */
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

#endif
