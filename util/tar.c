/* util/tar.c: ustar headers and padding (see tar.h). */
#include "util/tar.h"

#include "util/err.h"

#include <stdio.h>
#include <string.h>

/* v in len - 1 octal digits and a NUL; the caller checked that it fits. */
static void octal(char *field, size_t len, unsigned long long v)
{
	for (size_t i = len - 1; i > 0; i--, v >>= 3)
		field[i - 1] = (char)('0' + (v & 7));
	field[len - 1] = '\0';
}

/* Where the path splits into prefix (<= 155 bytes) '/' name (<= 100, not empty): the last '/'
 * that leaves a name short enough; 0 when none does. */
static size_t split_at(const char *full, size_t len)
{
	size_t split = 0;

	for (size_t i = 0; i < len && i <= 155; i++)
		if (full[i] == '/' && len - i - 1 <= 100 && len - i - 1 > 0)
			split = i;
	return split;
}

int pv_tar_add(struct pv_buf *b, const struct pv_tar_entry *e, char **data)
{
	char h[PV_TAR_BLOCK], full[300];
	size_t len, split = 0, pad;
	unsigned sum = 0;
	uint64_t size = e->dir ? 0 : e->size;

	if (data)
		*data = NULL;
	len = (size_t)snprintf(full, sizeof(full), "%s%s", e->path, e->dir ? "/" : "");
	if (len >= sizeof(full) || len > 256)
		return pv_error(PV_ECONFIG,
				"path '%s' is too long for a tar stream (at most 255 "
				"bytes); use shorter share or user names",
				e->path);
	if (e->uid > 07777777 || e->gid > 07777777 || size > 077777777777ULL)
		return pv_error(PV_ECONFIG,
				"'%s': an owner id or size too large for a ustar header "
				"(ids up to 2097151, files up to 8 GiB)",
				e->path);
	memset(h, 0, sizeof(h));
	if (len > 100) {
		if (!(split = split_at(full, len)))
			return pv_error(PV_ECONFIG,
					"path '%s' cannot be stored in a tar stream (no "
					"'/' leaves a name of at most 100 bytes); use "
					"shorter share or user names",
					e->path);
		memcpy(h + 345, full, split);
		memcpy(h, full + split + 1, len - split - 1);
	} else {
		memcpy(h, full, len);
	}
	octal(h + 100, 8, e->mode & 07777);
	octal(h + 108, 8, e->uid);
	octal(h + 116, 8, e->gid);
	octal(h + 124, 12, size);
	octal(h + 136, 12, (unsigned long long)(e->mtime < 0 ? 0 : e->mtime));
	memset(h + 148, ' ', 8);
	h[156] = e->dir ? '5' : '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += (unsigned char)h[i];
	octal(h + 148, 7, sum); /* six digits, NUL, and the space left from above */
	pad = (size_t)((PV_TAR_BLOCK - size % PV_TAR_BLOCK) % PV_TAR_BLOCK);
	if (size > (uint64_t)(size_t)-1 / 4 ||
	    pv_buf_reserve(b, sizeof(h) + (size_t)size + pad) < 0)
		return pv_error(PV_EIO, "out of memory");
	memcpy(b->data + b->len, h, sizeof(h));
	b->len += sizeof(h);
	if (data)
		*data = b->data + b->len;
	memset(b->data + b->len, 0, (size_t)size + pad + 1);
	b->len += (size_t)size + pad;
	return PV_OK;
}

int pv_tar_end(struct pv_buf *b)
{
	if (pv_buf_reserve(b, 2 * PV_TAR_BLOCK) < 0)
		return pv_error(PV_EIO, "out of memory");
	memset(b->data + b->len, 0, 2 * PV_TAR_BLOCK + 1);
	b->len += 2 * PV_TAR_BLOCK;
	return PV_OK;
}
