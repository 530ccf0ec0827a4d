/* learn/namespace.c: the namespace a capture reveals, and the shape of a user's home in it
 * (see learn/namespace.h). */
#include "learn/namespace.h"

#include "util/hash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pv_learn_ns_init(struct pv_learn_ns *ns)
{
	memset(ns, 0, sizeof(*ns));
}

void pv_learn_ns_release(struct pv_learn_ns *ns)
{
	free(ns->n);
	free(ns->slot);
	memset(ns, 0, sizeof(*ns));
}

/* key's place, or -1 */
static long find(const struct pv_learn_ns *ns, uint64_t key)
{
	if (!ns->slots)
		return -1;
	for (size_t s = key & (ns->slots - 1);; s = (s + 1) & (ns->slots - 1)) {
		uint32_t v = ns->slot[s];

		if (!v)
			return -1;
		if (ns->n[v - 1].key == key)
			return (long)v - 1;
	}
}

static void index_put(struct pv_learn_ns *ns, size_t place)
{
	uint64_t key = ns->n[place].key;
	size_t s = key & (ns->slots - 1);

	while (ns->slot[s])
		s = (s + 1) & (ns->slots - 1);
	ns->slot[s] = (uint32_t)place + 1;
}

/* key's node, added under parent when new: its place, or -1 out of room */
static long node(struct pv_learn_ns *ns, uint64_t key, long parent)
{
	long i = find(ns, key);

	if (i >= 0)
		return i;
	if (ns->count >= PV_LEARN_NS_MAX)
		goto refused;
	if (ns->count == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 1024;
		struct pv_learn_ns_node *n = realloc(ns->n, cap * sizeof(*n));

		if (!n)
			goto refused;
		ns->n = n;
		ns->cap = cap;
	}
	if ((ns->count + 1) * 2 > ns->slots) {
		size_t slots = ns->slots ? ns->slots * 2 : 2048;
		uint32_t *s = calloc(slots, sizeof(*s));

		if (!s)
			goto refused;
		free(ns->slot);
		ns->slot = s;
		ns->slots = slots;
		for (size_t j = 0; j < ns->count; j++)
			index_put(ns, j);
	}
	ns->n[ns->count] = (struct pv_learn_ns_node){
		.key = key,
		.parent = (int32_t)parent,
		.depth = parent < 0 ? 0 : (uint16_t)(ns->n[parent].depth + 1),
	};
	index_put(ns, ns->count);
	return (long)ns->count++;
refused:
	ns->refused++;
	return -1;
}

static bool is_sep(char c)
{
	return c == '\\' || c == '/';
}

long pv_learn_ns_share(struct pv_learn_ns *ns, const char *path, uint64_t tag)
{
	uint64_t key;

	if (path) {
		const char *last = path;

		for (const char *c = path; *c; c++)
			if (is_sep(*c))
				last = c + 1;
		key = pv_hash_fnv64_lower(pv_hash_fnv64(PV_HASH_FNV64_INIT, "share:", 6), last,
					  strlen(last));
	} else {
		key = pv_hash_fnv64(pv_hash_fnv64(PV_HASH_FNV64_INIT, "tree:", 5), &tag,
				    sizeof(tag));
	}
	return node(ns, key, -1);
}

long pv_learn_ns_path(struct pv_learn_ns *ns, long at, const char *name)
{
	const char *p = name;

	if (at < 0)
		return -1;
	while (*p) {
		size_t n = 0;

		while (p[n] && !is_sep(p[n]))
			n++;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (ns->n[at].parent >= 0) /* "..": up, not past the share */
				at = ns->n[at].parent;
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (ns->n[at].depth >= PV_LEARN_NS_DEPTH)
				return -1;
			/* Windows compares names without case: ASCII letters hashed in lower case
			 */
			at = node(ns, pv_hash_fnv64_lower(ns->n[at].key, p, n), at);
			if (at < 0)
				return -1;
		}
		p += n + (p[n] != '\0');
	}
	return at;
}

void pv_learn_ns_seen(struct pv_learn_ns *ns, long i, bool dir, uint64_t size, bool made)
{
	struct pv_learn_ns_node *x;
	uint8_t before;

	if (i < 0)
		return;
	x = &ns->n[i];
	before = x->flags;
	if (dir) {
		x->flags |= PV_LEARN_NS_DIR;
		x->flags &= (uint8_t)~PV_LEARN_NS_FILE;
	} else if (!(x->flags & PV_LEARN_NS_DIR)) {
		/* its size as first seen: the namespace before the capture wrote to it */
		if (!(x->flags & PV_LEARN_NS_SIZED))
			x->size = size;
		x->flags |= PV_LEARN_NS_FILE | PV_LEARN_NS_SIZED;
	}
	/* made by the capture when its first answer said so; a file seen before it was made
	 * (listed, then overwritten) was there */
	if (made && !(before & (PV_LEARN_NS_DIR | PV_LEARN_NS_FILE)))
		x->flags |= PV_LEARN_NS_MADE;
	for (long p = x->parent; p >= 0 && !(ns->n[p].flags & PV_LEARN_NS_DIR); p = ns->n[p].parent)
		ns->n[p].flags |= PV_LEARN_NS_DIR;
}

void pv_learn_ns_written(struct pv_learn_ns *ns, long i)
{
	if (i >= 0)
		ns->n[i].flags |= PV_LEARN_NS_WRITTEN;
}

void pv_learn_ns_listed(struct pv_learn_ns *ns, long i)
{
	if (i >= 0 && ns->n[i].listings < UINT32_MAX)
		ns->n[i].listings++;
}

/* the listings counted by how many: up to LISTED_MAX, the rest with it */
#define LISTED_MAX 4096

void pv_learn_ns_listings(const struct pv_learn_ns *ns, double out[2], uint64_t *folders)
{
	static const double q[2] = {0.5, 0.95};
	uint64_t *by = calloc(LISTED_MAX + 1, sizeof(*by)), n = 0;

	out[0] = out[1] = 0;
	*folders = 0;
	if (!by)
		return;
	for (size_t i = 0; i < ns->count; i++)
		if (ns->n[i].listings) {
			by[ns->n[i].listings < LISTED_MAX ? ns->n[i].listings : LISTED_MAX]++;
			n++;
		}
	for (int k = 0; k < 2 && n; k++) {
		/* the rank of the quantile, 1-based: the ceiling of q n */
		uint64_t want = (uint64_t)ceil(q[k] * (double)n), seen = 0;
		unsigned v = 1;

		while (v < LISTED_MAX && (seen += by[v]) < want)
			v++;
		out[k] = v;
	}
	*folders = n;
	free(by);
}

long pv_learn_ns_home(const struct pv_learn_ns *ns, long home, long i)
{
	long f;

	if (i < 0)
		return home;
	f = (ns->n[i].flags & PV_LEARN_NS_DIR) || ns->n[i].parent < 0 ? i : ns->n[i].parent;
	if (home < 0)
		return f;
	while (ns->n[f].depth > ns->n[home].depth)
		f = ns->n[f].parent;
	while (ns->n[home].depth > ns->n[f].depth)
		home = ns->n[home].parent;
	while (home != f && home >= 0 && f >= 0) {
		home = ns->n[home].parent;
		f = ns->n[f].parent;
	}
	return home; /* -1: two shares, no folder holds both */
}

int pv_learn_ns_depth(const struct pv_learn_ns *ns, long home, long i)
{
	long f = i;
	int d;

	if (home < 0 || i < 0)
		return PV_LEARN_NS_UNKNOWN;
	if (ns->n[i].depth < ns->n[home].depth)
		return PV_LEARN_NS_OUT;
	d = ns->n[i].depth - ns->n[home].depth;
	for (int k = 0; k < d && f >= 0; k++)
		f = ns->n[f].parent;
	if (f != home)
		return PV_LEARN_NS_OUT;
	return d < PV_LEARN_NS_DEEP ? d : PV_LEARN_NS_DEEP;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted here), 0 for none. */
static double median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

int pv_learn_ns_shape(const struct pv_learn_ns *ns, const long *homes, size_t nhomes,
		      struct pv_learn_ns_shape *out)
{
	enum { L = PV_LEARN_NS_LEVELS };
	int32_t *hidx = NULL;
	uint64_t *files = NULL, *dirs = NULL, *written = NULL, *col = NULL;
	uint64_t depth_files[L + 1] = {0};
	size_t h = 0;
	double prod = 1;
	int r = -1;

	memset(out, 0, sizeof(*out));
	if (!ns->count || !nhomes)
		return 0;
	if (!(hidx = malloc(ns->count * sizeof(*hidx))))
		return -1;
	for (size_t i = 0; i < ns->count; i++)
		hidx[i] = -1;
	for (size_t k = 0; k < nhomes; k++)
		if (homes[k] >= 0 && (size_t)homes[k] < ns->count && hidx[homes[k]] < 0)
			hidx[homes[k]] = (int32_t)h++;
	out->homes = h;
	if (!h) {
		r = 0;
		goto out;
	}
	files = calloc(h, sizeof(*files));
	written = calloc(h, sizeof(*written));
	col = calloc(h, sizeof(*col));
	dirs = calloc(h * (L + 1), sizeof(*dirs));
	if (!files || !written || !col || !dirs)
		goto out;
	for (size_t i = 0; i < ns->count; i++) {
		const struct pv_learn_ns_node *x = &ns->n[i];
		long a = x->parent;
		unsigned rel;

		if (!(x->flags & (PV_LEARN_NS_DIR | PV_LEARN_NS_FILE)) ||
		    (x->flags & PV_LEARN_NS_MADE) || hidx[i] >= 0)
			continue;
		while (a >= 0 && hidx[a] < 0)
			a = ns->n[a].parent;
		if (a < 0)
			continue;			     /* in no home */
		rel = (unsigned)(x->depth - ns->n[a].depth); /* 1: in the home itself */
		if (x->flags & PV_LEARN_NS_DIR) {
			out->folders++;
			if (rel <= L)
				dirs[(size_t)hidx[a] * (L + 1) + rel]++;
			continue;
		}
		out->files++;
		files[hidx[a]]++;
		depth_files[rel - 1 < L ? rel - 1 : L]++;
		if (x->flags & PV_LEARN_NS_SIZED)
			pv_learn_sizes_add(&out->sizes, x->size);
		if (x->flags & PV_LEARN_NS_WRITTEN) {
			written[hidx[a]]++;
			if (x->flags & PV_LEARN_NS_SIZED)
				pv_learn_sizes_add(&out->written_sizes, x->size);
		}
	}
	/* the levels down to where most files are, then the folders of each level over those of
	 * the level above (a home's count, the median), and the files shared among the last's */
	for (unsigned d = 1; d <= L; d++)
		if (depth_files[d] > depth_files[out->levels])
			out->levels = d;
	for (unsigned l = 1; l <= out->levels; l++) {
		double m, f;

		for (size_t k = 0; k < h; k++)
			col[k] = dirs[k * (L + 1) + l];
		m = median(col, h);
		f = round(m / prod);
		out->per[l - 1] = f < 1 ? 1 : (unsigned)f;
		prod *= out->per[l - 1];
	}
	out->files_median = median(files, h);
	{
		double f = floor(out->files_median / prod); /* no more than a home holds */

		out->files_per = f < 1 ? 1 : (unsigned)f;
	}
	{
		double w = ceil(median(written, h));

		out->written = (unsigned)w;
	}
	r = 0;
out:
	free(hidx);
	free(files);
	free(written);
	free(col);
	free(dirs);
	return r;
}
