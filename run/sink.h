/* run/sink.h: where a run's results go: a folder of its own below controller.results, on this
 * machine or on the controller's host over SSH. On this machine every part of a path is opened
 * without following a link and every file is made anew (O_EXCL, or beside and renamed over),
 * so that a link planted in the results folder is never followed as root; on the controller's
 * host folders and files are made over SFTP (a folder there must be one, a file must be new).
 * What a host sends is taken apart by provision's own ustar reader, on either side: only
 * folders and regular files ever reach the results, never a link, device node or FIFO. */
#ifndef PV_RUN_SINK_H
#define PV_RUN_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "remote/remote.h"
#include "util/buf.h"

struct pv_run_sink {
	struct pv_remote *rem; /* the controller's host; NULL: this machine */
	int fd;		       /* local: the run's folder, -1 when not open */
	char path[1024];       /* the run's folder */
	pthread_mutex_t lock;  /* one SSH session for every thread */
	bool locked;	       /* lock was initialised */
	/* the first write or folder that failed (a full disk): a run stops after its step */
	bool failed;
	char fail[512];
};

/* Make the run's folder <results>/<id> (given: exactly that name; else the first of id, id-2..
 * id-9 that is free) on the controller: rem, or this machine when rem is NULL. *name gets the
 * folder's name. PV_EIO (local), PV_EREMOTE naming the folder. */
int pv_run_sink_open(struct pv_run_sink *k, struct pv_remote *rem, const char *results,
		     const char *id, bool given, char name[64]);
void pv_run_sink_close(struct pv_run_sink *k);

/* Make the folder rel below the run's folder (its parent there). */
int pv_run_sink_mkdir(struct pv_run_sink *k, const char *rel);
/* Write the file rel/name below the run's folder (replace: atomically over an older one). */
int pv_run_sink_write(struct pv_run_sink *k, const char *rel, const char *name, const void *data,
		      size_t len, bool replace);
/* data at the end of rel/name, a file written before by pv_run_sink_write (never through a link:
 * O_NOFOLLOW here, the file must be there on the controller's host). */
int pv_run_sink_append(struct pv_run_sink *k, const char *rel, const char *name, const void *data,
		       size_t len);
/* This machine only: rel's folder below the run's, opened (made when mk) into *fd. */
int pv_run_sink_dir(struct pv_run_sink *k, const char *rel, bool mk, int *fd);
/* The files of a ustar stream into rel (made), which must not hold them yet; *files, *bytes:
 * what was written, *skipped: entries that are neither files nor folders (not written). A
 * stream past PV_RUN_GATHER_MAX bytes or PV_RUN_GATHER_ENTRIES_MAX entries (run/caps.h), or
 * not clean (util/tar.h), is refused before anything is written: PV_EREMOTE. */
int pv_run_sink_tar(struct pv_run_sink *k, const char *rel, const struct pv_buf *tar,
		    unsigned long *files, unsigned long long *bytes, unsigned long *skipped);

#endif
