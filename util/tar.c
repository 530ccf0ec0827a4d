/* util/tar.c: ustar headers and padding, and the reader (see tar.h). */
#include "util/tar.h"

#include "util/err.h"

#include <stdbool.h>
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

/* ---- reader ---- */

/* An octal field (NUL or space terminated, leading spaces allowed); false when it is not. */
static bool field_octal(const char *f, size_t len, unsigned long long *v)
{
	size_t i = 0;
	bool digits = false;

	*v = 0;
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v > (~0ULL >> 3))
			return false;
		*v = (*v << 3) | (unsigned)(f[i] - '0');
		digits = true;
	}
	for (; i < len; i++)
		if (f[i] != '\0' && f[i] != ' ')
			return false;
	return digits;
}

static int bad(const char *what, const char *path)
{
	return pv_error(PV_EREMOTE, "the results stream is not a clean ustar archive: %s%s%s%s",
			what, path ? " ('" : "", path ? path : "", path ? "')" : "");
}

/* Clean the path in place: drop "./" prefixes and a trailing '/', refuse what tar.h says. */
static int clean(char *p, char **out)
{
	size_t n;

	while (p[0] == '.' && p[1] == '/')
		p += 2;
	n = strlen(p);
	while (n && p[n - 1] == '/')
		p[--n] = '\0';
	if (n == 0 || (n == 1 && p[0] == '.')) {
		*out = NULL; /* the top folder */
		return PV_OK;
	}
	if (p[0] == '/')
		return bad("an absolute path", p);
	for (char *c = p; *c;) {
		char *e = strchr(c, '/');
		size_t l = e ? (size_t)(e - c) : strlen(c);

		if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
			return bad("a path with an empty, '.' or '..' part", p);
		c += l + (e ? 1 : 0);
	}
	*out = p;
	return PV_OK;
}

int pv_tar_each(const void *data, size_t len,
		int (*fn)(void *arg, const struct pv_tar_entry *e, const char *content), void *arg,
		unsigned long *skipped)
{
	static const char zero[PV_TAR_BLOCK];
	const char *d = data;
	size_t off = 0;

	if (skipped)
		*skipped = 0;
	while (off + PV_TAR_BLOCK <= len) {
		const char *h = d + off;
		char full[300], *path = NULL;
		unsigned long long size, mode, mtime, sum, uid, gid;
		unsigned calc = 0;
		struct pv_tar_entry e;
		int r;

		if (memcmp(h, zero, PV_TAR_BLOCK) == 0)
			return PV_OK; /* the end (one zero block is enough to stop) */
		if (memcmp(h + 257, "ustar", 5) != 0)
			return bad("a header without 'ustar'", NULL);
		for (size_t i = 0; i < PV_TAR_BLOCK; i++)
			calc += i >= 148 && i < 156 ? ' ' : (unsigned char)h[i];
		if (!field_octal(h + 148, 8, &sum) || sum != calc)
			return bad("a header checksum that does not match", NULL);
		if (!field_octal(h + 124, 12, &size) || !field_octal(h + 100, 8, &mode) ||
		    !field_octal(h + 136, 12, &mtime))
			return bad("a size, mode or time field that is not octal", NULL);
		if (!field_octal(h + 108, 8, &uid))
			uid = 0;
		if (!field_octal(h + 116, 8, &gid))
			gid = 0;
		if (h[345])
			snprintf(full, sizeof(full), "%.155s/%.100s", h + 345, h);
		else
			snprintf(full, sizeof(full), "%.100s", h);
		off += PV_TAR_BLOCK;
		if (size > len - off)
			return bad("a stream cut short", full);
		if ((r = clean(full, &path)) != PV_OK)
			return r;
		memset(&e, 0, sizeof(e));
		e.path = path;
		e.mode = (unsigned)(mode & 07777);
		e.mtime = (long long)mtime;
		e.uid = (unsigned long)uid;
		e.gid = (unsigned long)gid;
		if ((h[156] == '0' || h[156] == '\0') && path) {
			e.size = size;
			if ((r = fn(arg, &e, d + off)) != 0)
				return r;
		} else if (h[156] == '5' && path) {
			e.dir = true;
			if ((r = fn(arg, &e, NULL)) != 0)
				return r;
		} else if (path && skipped) {
			(*skipped)++;
		}
		off += (size_t)size;
		off += (PV_TAR_BLOCK - off % PV_TAR_BLOCK) % PV_TAR_BLOCK;
	}
	return bad("a stream cut short (no end of archive)", NULL);
}
