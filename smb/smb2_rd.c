/* smb/smb2_rd.c: the bounds-checked reader (see smb2.h) every byte of an answer is read
 * through, in the spirit of OpenSSH's sshbuf: a get past the end fails instead of reading
 * there, the first failure is kept with its words, and a span the server gives is checked once
 * before a reader of exactly those bytes is made. */
#include "smb/smb2.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

void smb2_rd_init(struct smb2_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = p ? len : 0;
	r->at = 0;
	r->bad = false;
	r->why[0] = 0;
}

int smb2_rd_fail(struct smb2_rd *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->bad) {
		va_start(ap, fmt);
		vsnprintf(r->why, sizeof(r->why), fmt, ap);
		va_end(ap);
	}
	r->bad = true;
	return -1;
}

const uint8_t *smb2_rd_bytes(struct smb2_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad)
		return NULL;
	if (n > r->len - r->at) {
		smb2_rd_fail(r, "%zu bytes at %zu read past the end of %zu", n, r->at, r->len);
		return NULL;
	}
	p = r->p + r->at;
	r->at += n;
	return p;
}

uint8_t smb2_rd_u8(struct smb2_rd *r)
{
	const uint8_t *p = smb2_rd_bytes(r, 1);

	return p ? p[0] : 0;
}

uint16_t smb2_rd_u16(struct smb2_rd *r)
{
	const uint8_t *p = smb2_rd_bytes(r, 2);

	return p ? smb2_get16(p) : 0;
}

uint32_t smb2_rd_u32(struct smb2_rd *r)
{
	const uint8_t *p = smb2_rd_bytes(r, 4);

	return p ? smb2_get32(p) : 0;
}

uint64_t smb2_rd_u64(struct smb2_rd *r)
{
	const uint8_t *p = smb2_rd_bytes(r, 8);

	return p ? smb2_get64(p) : 0;
}

void smb2_rd_skip(struct smb2_rd *r, size_t n)
{
	smb2_rd_bytes(r, n);
}

void smb2_rd_seek(struct smb2_rd *r, size_t at)
{
	if (r->bad)
		return;
	if (at > r->len)
		smb2_rd_fail(r, "an offset of %zu past the end of %zu", at, r->len);
	else
		r->at = at;
}

size_t smb2_rd_left(const struct smb2_rd *r)
{
	return r->bad ? 0 : r->len - r->at;
}

int smb2_rd_span(struct smb2_rd *r, size_t off, size_t len, const char *what, struct smb2_rd *out)
{
	if (r->bad)
		return -1;
	if (len == 0) {
		smb2_rd_init(out, r->p + r->len, 0); /* a pointer one may do arithmetic on */
		return 0;
	}
	if (off > r->len || len > r->len - off)
		return smb2_rd_fail(r, "%s (%zu bytes at %zu) is not inside its %zu bytes", what,
				    len, off, r->len);
	smb2_rd_init(out, r->p + off, len);
	return 0;
}
