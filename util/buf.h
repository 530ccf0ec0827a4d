/* util/buf.h: a growable byte buffer that is always NUL-terminated.
 *
 * Failure is sticky: once an append runs out of memory, the buffer is marked failed and every
 * later append fails too, leaving the contents as they were before the first failure. A
 * builder can then append without checking each call and look once at the end
 * (pv_buf_failed); whoever sends a buffer somewhere checks it first, so a script cut short
 * halfway is never run. pv_buf_reset and pv_buf_release clear the mark.
 *
 * A buffer meant for key material (a password in UTF-16, an NT hash) is marked with
 * pv_buf_secret() before the first append: growing it then moves the contents to new memory
 * and wipes the old block (realloc would leave a copy behind in freed memory), and
 * pv_buf_reset and pv_buf_release wipe it. */
#ifndef PV_UTIL_BUF_H
#define PV_UTIL_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct pv_buf {
	char *data; /* NULL until the first append; always NUL-terminated after */
	size_t len;
	size_t cap;
	bool failed; /* an append ran out of memory (sticky) */
	bool secret; /* wiped when it grows, is reset or released (pv_buf_secret) */
};

#define PV_BUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0, false, false                                                           \
	}

/* Append; return 0, or -1 on allocation failure or when the buffer failed earlier (the
 * contents are unchanged). */
int pv_buf_add(struct pv_buf *b, const void *data, size_t len);
int pv_buf_addstr(struct pv_buf *b, const char *s);
int pv_buf_addf(struct pv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pv_buf_vaddf(struct pv_buf *b, const char *fmt, va_list ap);
/* Make room for extra more bytes (and the NUL) at data + len; -1 as for an append. The
 * caller writes there and then raises len itself. */
int pv_buf_reserve(struct pv_buf *b, size_t extra);
/* Whether an append failed since the last reset (or the buffer holds nothing at all when
 * something was expected: callers that need content check data too). */
static inline bool pv_buf_failed(const struct pv_buf *b)
{
	return b->failed;
}
/* Mark b as holding key material (see above); it stays so until pv_buf_release. */
void pv_buf_secret(struct pv_buf *b);
/* Drop the contents (wiped for a secret buffer) and the failure mark, keep the memory. */
void pv_buf_reset(struct pv_buf *b);
/* Free the memory (wiping it first when wipe is non-zero or b is secret) and reset to
 * PV_BUF_INIT. */
void pv_buf_release(struct pv_buf *b, int wipe);
/* Hand the data to the caller (who frees it); the buffer is reset. NULL when the buffer
 * failed or on OOM. */
char *pv_buf_detach(struct pv_buf *b);

#endif
