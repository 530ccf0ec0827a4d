/* util/utf16.h: UTF-8 <-> UTF-16LE, the encoding of AD passwords, NTLM and SMB2 names. Pure
 * logic; unit-tested in tests/unit/check_util.c. */
#ifndef PV_UTIL_UTF16_H
#define PV_UTIL_UTF16_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Append the UTF-8 text s (len bytes) to out as UTF-16LE; with upper, ASCII letters are
 * upper-cased. Returns 0, -1 on allocation failure, -2 on invalid UTF-8 (cut short, overlong,
 * a surrogate, beyond U+10FFFF). */
int pv_utf16le(struct pv_buf *out, const char *s, size_t len, int upper);

/* UTF-16LE (len bytes) to NUL-terminated UTF-8 in out (cap bytes). Returns 0, or -1 when the
 * input is not UTF-16 (odd length, a lone surrogate) or the result does not fit. */
int pv_utf16le_to_utf8(const uint8_t *in, size_t len, char *out, size_t cap);

#endif
