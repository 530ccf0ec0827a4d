/* remote/internal.h: what the files of remote/ share (ssh.c: the session; exec.c: commands;
 * sftp.c: files); not for use outside the module. */
#ifndef PV_REMOTE_INTERNAL_H
#define PV_REMOTE_INTERNAL_H

#include <stddef.h>

#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include "remote/remote.h"

#define IO_CHUNK 32768 /* per SFTP read/write request and per stdin write */

struct pv_remote {
	ssh_session session;
	sftp_session sftp; /* opened on first file operation */
	char *name;	   /* for messages */
	char *address;	   /* what we connect to (address, else name) */
	char *hostopt;	   /* address as libssh's HOST option takes it ([v6]) */
	int port;
	int timeout; /* ssh.timeout, seconds */
};

/* ssh.c: the monotonic clock in milliseconds. */
long long remote_now_ms(void);
/* ssh.c: the host for messages: "'cli1' (198.18.0.31)", or "'cli1'" when we connect by name. */
const char *remote_who(const struct pv_remote *rem, char *buf, size_t len);
/* ssh.c: the session died under us while doing what to obj: recorded (PV_EUNREACH). */
int remote_lost(struct pv_remote *rem, const char *what, const char *obj);

#endif
