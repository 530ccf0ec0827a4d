/* util/tar.h: a writer and a reader of POSIX ustar streams (IEEE Std 1003.1-2001, pax "ustar
 * Interchange Format"). The writer fills a buffer for `server --via ssh`, which pipes it into
 * `tar -x` on the server; the reader takes apart what `run` gathers from the clients (`tar -c
 * --format=ustar`), so that their files are written by provision itself and never through a
 * link a load user made. Pure: no I/O. Only what provision needs: folders and regular files,
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

/* Walk a ustar stream: fn gets every folder and regular file in order, with its path cleaned
 * (a leading "./" dropped, never empty, never absolute, no "." or ".." component, no empty
 * component) and, for a file, its e->size bytes of content; the top folder "." itself is not
 * passed. A non-zero return from fn ends the walk and is returned. Links, devices and every
 * other kind of entry are not passed: *skipped (may be NULL) counts them. PV_EREMOTE (recorded,
 * naming the entry) for a stream that is not ustar, a bad header checksum, a path that is not
 * clean as above, or a stream cut short. */
int pv_tar_each(const void *data, size_t len,
		int (*fn)(void *arg, const struct pv_tar_entry *e, const char *content), void *arg,
		unsigned long *skipped);

#endif
