/* util/secret.h: a secret (password) whose memory is wiped when it is freed.
 *
 * Secrets are read from a file, an environment variable or a file descriptor; they are never
 * taken from argv, never logged and never copied into error messages. Nor is where they come
 * from: a file path or a variable name may be a password typed in the wrong place, so the
 * messages name the source by `what`, a description the caller gives ("the file given at
 * lab.yaml:12:20"). */
#ifndef PV_UTIL_SECRET_H
#define PV_UTIL_SECRET_H

#include <stddef.h>

struct pv_secret {
	char *data; /* NUL-terminated; may not contain NUL */
	size_t len;
};

/* New secret holding a copy of len bytes of s. Returns NULL on allocation failure. */
struct pv_secret *pv_secret_new(const char *s, size_t len);
/* Wipe and free; NULL is fine. */
void pv_secret_free(struct pv_secret *s);

/* Read a whole file; one trailing "\n" (or "\r\n") is not part of the secret.
 * Errors (recorded, naming `what`, never path): PV_EIO unreadable, PV_ECONFIG empty or holding
 * a NUL byte. */
int pv_secret_from_file(const char *path, const char *what, struct pv_secret **out);
/* Take an environment variable: its value is copied, then removed from the environment
 * (unsetenv) and wiped where it was, so that no child (ssh, a forked worker) inherits it and
 * /proc/PID/environ no longer shows it. Not thread-safe (the environment is not): call it
 * before other threads start. PV_ECONFIG (recorded, naming `what`, never name) if unset or
 * empty; PV_EIO out of memory (the variable is removed all the same). */
int pv_secret_from_env(const char *name, const char *what, struct pv_secret **out);
/* Read fd up to EOF or the first newline (which is dropped). PV_EIO / PV_ECONFIG as above. */
int pv_secret_from_fd(int fd, const char *what, struct pv_secret **out);

#endif
