/* util/buf.c: growable byte buffer. */
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(struct pv_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->failed)
		return -1;
	if (extra > (size_t)-1 / 2 - b->len) {
		b->failed = true;
		return -1;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	/* a secret is moved by hand, so that the old block is wiped before it is freed */
	p = realloc(b->secret ? NULL : b->data, cap);
	if (!p) {
		b->failed = true;
		return -1;
	}
	if (b->secret && b->data) {
		memcpy(p, b->data, b->len + 1);
		explicit_bzero(b->data, b->cap);
		free(b->data);
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int pv_buf_add(struct pv_buf *b, const void *data, size_t len)
{
	if (grow(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int pv_buf_reserve(struct pv_buf *b, size_t extra)
{
	return grow(b, extra);
}

int pv_buf_addstr(struct pv_buf *b, const char *s)
{
	return pv_buf_add(b, s, strlen(s));
}

int pv_buf_vaddf(struct pv_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		b->failed = true;
	if (n < 0 || grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int pv_buf_addf(struct pv_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = pv_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void pv_buf_secret(struct pv_buf *b)
{
	b->secret = true;
}

void pv_buf_reset(struct pv_buf *b)
{
	if (b->data && b->secret)
		explicit_bzero(b->data, b->cap);
	b->len = 0;
	b->failed = false;
	if (b->data)
		b->data[0] = '\0';
}

void pv_buf_release(struct pv_buf *b, int wipe)
{
	if (b->data && (wipe || b->secret))
		explicit_bzero(b->data, b->cap);
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->failed = false;
	b->secret = false;
}

char *pv_buf_detach(struct pv_buf *b)
{
	char *p = b->data;

	if (b->failed) {
		pv_buf_release(b, 0);
		return NULL;
	}
	if (!p)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
