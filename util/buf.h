/* util/buf.h: a growable byte buffer that is always NUL-terminated. */
#ifndef PV_UTIL_BUF_H
#define PV_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct pv_buf {
	char *data; /* NULL until the first append; always NUL-terminated after */
	size_t len;
	size_t cap;
};

#define PV_BUF_INIT { NULL, 0, 0 }

/* Append; return 0, or -1 on allocation failure (the buffer is unchanged). */
int pv_buf_add(struct pv_buf *b, const void *data, size_t len);
int pv_buf_addstr(struct pv_buf *b, const char *s);
int pv_buf_addf(struct pv_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pv_buf_vaddf(struct pv_buf *b, const char *fmt, va_list ap);
/* Drop the contents, keep the memory. */
void pv_buf_reset(struct pv_buf *b);
/* Free the memory (wiping it first when wipe is non-zero) and reset to PV_BUF_INIT. */
void pv_buf_release(struct pv_buf *b, int wipe);
/* Hand the data to the caller (who frees it); the buffer is reset. Never NULL unless OOM. */
char *pv_buf_detach(struct pv_buf *b);

#endif
