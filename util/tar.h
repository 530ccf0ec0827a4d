/* util/tar.h: a writer of POSIX ustar streams (IEEE Std 1003.1-2001, pax "ustar Interchange
 * Format") into a buffer, for `server --via ssh`, which pipes them into `tar -x` on the server.
 * Pure: no I/O. Only what provision needs: folders and regular files with numeric owners,
 * paths up to 255 bytes (split into prefix and name). */
#ifndef PV_UTIL_TAR_H
#define PV_UTIL_TAR_H

#include <stdbool.h>
#include <stdint.h>

#include "util/buf.h"

#define PV_TAR_BLOCK 512

struct pv_tar_entry {
	const char *path; /* relative, '/'-separated, no trailing '/' */
	bool dir;
	uint64_t size; /* files only */
	unsigned long uid, gid;
	unsigned mode;	 /* permission bits */
	long long mtime; /* seconds since the epoch */
};

/* Append e's header; for a file also room for its content, padded to a block with zeros: *data
 * (when data is non-NULL) points at those e->size bytes for the caller to fill before the next
 * append. PV_ECONFIG (recorded) when the path cannot be stored (over 255 bytes, or no '/'
 * where it must split), PV_EIO when out of memory. */
int pv_tar_add(struct pv_buf *b, const struct pv_tar_entry *e, char **data);
/* Append the end of archive (two zero blocks). PV_EIO when out of memory. */
int pv_tar_end(struct pv_buf *b);

#endif
