/* load/line.c: the figures line, written and read (see line.h). */
#include "load/line.h"

#include "json/json.h"
#include "util/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERSION 2
#define SLACK	1e-9 /* relative: a maximum printed with 12 digits may cross its bucket's edge */

static const char *const top_keys[] = {"load", "i", "secs", "users", "failed", "kinds", NULL};
static const char *const kind_keys[] = {"started",    "errors", "late", "over_limit",
					"overloaded", "max",	"hist", NULL};

/* ---- writing ---- */

static bool empty(const struct pv_load_counts *n)
{
	return !(n->started | n->errors | n->late | n->over_limit | n->overloaded |
		 pv_load_hist_count(&n->lat));
}

void pv_load_counts_json(const struct pv_load_counts *n, bool completed, struct pv_json *o)
{
	pv_json_int(o, "started", (long long)n->started);
	if (completed)
		pv_json_int(o, "completed", (long long)pv_load_hist_count(&n->lat));
	pv_json_int(o, "errors", (long long)n->errors);
	pv_json_int(o, "late", (long long)n->late);
	pv_json_int(o, "over_limit", (long long)n->over_limit);
	pv_json_int(o, "overloaded", (long long)n->overloaded);
}

static struct pv_json *kind_json(const struct pv_load_counts *n)
{
	struct pv_json *o = pv_json_object(), *hist = pv_json_array();

	pv_load_counts_json(n, false, o);
	pv_json_real(o, "max", n->lat.max);
	for (unsigned b = 0; b < PV_LOAD_BUCKETS; b++) {
		struct pv_json *pair;

		if (!n->lat.n[b])
			continue;
		pair = pv_json_array();
		pv_json_append_int(pair, b);
		pv_json_append_int(pair, (long long)n->lat.n[b]);
		pv_json_append(hist, pair);
	}
	pv_json_set(o, "hist", hist);
	return o;
}

int pv_load_line_encode(const struct pv_load_figs *f, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object(), *kinds = pv_json_object();
	char *text;

	pv_json_int(o, "load", VERSION);
	pv_json_int(o, "i", (long long)f->seq);
	pv_json_real(o, "secs", f->secs);
	pv_json_int(o, "users", f->connected);
	pv_json_int(o, "failed", f->failed);
	for (int k = 0; k < PV_LOAD_KINDS; k++)
		if (!empty(&f->kind[k]))
			pv_json_set(kinds, pv_load_names[k], kind_json(&f->kind[k]));
	pv_json_set(o, "kinds", kinds);
	/* a value that could not be made is missing: the compact text would lack it, so every
	 * allocation is checked once here by reading the line back */
	text = pv_json_compact(o);
	pv_json_free(o);
	if (text) {
		struct pv_load_figs *back = malloc(sizeof(*back));
		int r = back ? pv_load_line_decode(text, strlen(text), back) : PV_EIO;

		free(back);
		if (r == PV_OK && pv_buf_addstr(out, text) == 0 && pv_buf_addstr(out, "\n") == 0) {
			free(text);
			return PV_OK;
		}
		free(text);
		if (r != PV_OK && r != PV_EIO)
			return pv_error(PV_EBUG, "a figures line does not read back: %s",
					pv_errmsg());
	}
	return pv_error(PV_EIO, "out of memory");
}

/* ---- reading ---- */

struct ctx {
	const char *where; /* "" or "kind 'browse': " */
	char why[200];
};

static bool nope(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool nope(struct ctx *c, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->why, sizeof(c->why), "%s%s", c->where, msg);
	return false;
}

struct known {
	struct ctx *c;
	const char *const *keys;
};

static int known_key(const char *key, const struct pv_json *v, void *arg)
{
	struct known *k = arg;

	(void)v;
	for (size_t i = 0; k->keys[i]; i++)
		if (!strcmp(k->keys[i], key))
			return 0;
	nope(k->c, "unknown key \"%.40s\"", key);
	return 1;
}

/* o is an object holding exactly keys (jansson refuses duplicates when parsing). */
static bool exactly(struct ctx *c, const struct pv_json *o, const char *const *keys)
{
	struct known k = {c, keys};

	if (!pv_json_is_object(o))
		return nope(c, "not an object");
	if (pv_json_each(o, known_key, &k))
		return false;
	for (size_t i = 0; keys[i]; i++)
		if (!pv_json_get(o, keys[i]))
			return nope(c, "no \"%s\"", keys[i]);
	return true;
}

static bool integer(struct ctx *c, const struct pv_json *o, const char *key, long long lo,
		    long long hi, uint64_t *out)
{
	long long v;

	if (!pv_json_integer(pv_json_get(o, key), &v) || v < lo || v > hi)
		return nope(c, "\"%s\" is not an integer from %lld to %lld", key, lo, hi);
	*out = (uint64_t)v;
	return true;
}

static bool number(struct ctx *c, const struct pv_json *o, const char *key, double lo, double hi,
		   double *out)
{
	double v;

	if (!pv_json_number(pv_json_get(o, key), &v) || !(v >= lo && v <= hi))
		return nope(c, "\"%s\" is not a number from %g to %g", key, lo, hi);
	*out = v;
	return true;
}

static bool hist(struct ctx *c, const struct pv_json *a, struct pv_load_hist *h)
{
	size_t n = pv_json_size(a);
	uint64_t b, count;
	long long prev = -1;

	if (!pv_json_is_array(a))
		return nope(c, "\"hist\" is not a list");
	for (size_t i = 0; i < n; i++) {
		const struct pv_json *pair = pv_json_at(a, i);
		long long v;

		if (pv_json_size(pair) != 2 || !pv_json_integer(pv_json_at(pair, 0), &v) ||
		    v <= prev || v >= PV_LOAD_BUCKETS)
			return nope(c,
				    "\"hist\" item %zu is not [bucket, count] with buckets rising "
				    "from 0 to %d",
				    i, PV_LOAD_BUCKETS - 1);
		b = (uint64_t)v;
		prev = v;
		if (!pv_json_integer(pv_json_at(pair, 1), &v) || v < 1 || v > PV_LOAD_COUNT_MAX)
			return nope(c, "\"hist\" item %zu has a count that is not from 1 to %lld",
				    i, PV_LOAD_COUNT_MAX);
		count = (uint64_t)v;
		h->n[b] = count;
	}
	return true;
}

/* The maximum lies in the top bucket the histogram holds (or is 0 when it holds nothing). */
static bool max_fits(struct ctx *c, const struct pv_load_hist *h)
{
	unsigned top = PV_LOAD_BUCKETS;

	while (top > 0 && !h->n[top - 1])
		top--;
	if (!top)
		return h->max == 0 ? true : nope(c, "\"max\" is %g with nothing completed", h->max);
	top--;
	if (h->max < pv_load_bucket_low(top) * (1 - SLACK) ||
	    h->max >= pv_load_bucket_high(top) * (1 + SLACK))
		return nope(c, "\"max\" %g is not in the histogram's top bucket %u", h->max, top);
	return true;
}

static bool kind(struct ctx *c, const struct pv_json *o, struct pv_load_counts *n)
{
	const long long M = PV_LOAD_COUNT_MAX;

	if (!exactly(c, o, kind_keys) || !integer(c, o, "started", 0, M, &n->started) ||
	    !integer(c, o, "errors", 0, M, &n->errors) || !integer(c, o, "late", 0, M, &n->late) ||
	    !integer(c, o, "over_limit", 0, M, &n->over_limit) ||
	    !integer(c, o, "overloaded", 0, M, &n->overloaded) ||
	    !number(c, o, "max", 0, 1e9, &n->lat.max) || !hist(c, pv_json_get(o, "hist"), &n->lat))
		return false;
	if (n->late > n->started)
		return nope(c, "more late (%llu) than started (%llu)", (unsigned long long)n->late,
			    (unsigned long long)n->started);
	if (n->over_limit > pv_load_hist_count(&n->lat))
		return nope(c, "more over the limit (%llu) than completed (%llu)",
			    (unsigned long long)n->over_limit,
			    (unsigned long long)pv_load_hist_count(&n->lat));
	if (n->overloaded < n->late || n->overloaded > n->late + n->over_limit)
		return nope(c, "overloaded (%llu) is not from late (%llu) to late + over_limit",
			    (unsigned long long)n->overloaded, (unsigned long long)n->late);
	return max_fits(c, &n->lat);
}

struct kinds {
	struct ctx *c;
	struct pv_load_figs *f;
};

static int one_kind(const char *key, const struct pv_json *v, void *arg)
{
	struct kinds *ks = arg;
	char where[64];
	int k = pv_load_kind_of(key);

	if (k < 0) {
		nope(ks->c, "unknown scenario kind \"%.40s\"", key);
		return 1;
	}
	snprintf(where, sizeof(where), "kind '%s': ", key);
	ks->c->where = where;
	if (!kind(ks->c, v, &ks->f->kind[k]))
		return 1;
	ks->c->where = "";
	return 0;
}

static bool figs(struct ctx *c, const struct pv_json *o, struct pv_load_figs *f)
{
	uint64_t version, users, failed;
	struct kinds ks = {c, f};

	if (!exactly(c, o, top_keys) || !integer(c, o, "load", 0, 1LL << 53, &version))
		return false;
	if (version != VERSION)
		return nope(c, "format %llu, not %d: the client runs another version of provision",
			    (unsigned long long)version, VERSION);
	if (!integer(c, o, "i", 1, 1LL << 53, &f->seq) ||
	    !number(c, o, "secs", 1e-9, 86400, &f->secs) ||
	    !integer(c, o, "users", 0, PV_LOAD_USERS_MAX, &users) ||
	    !integer(c, o, "failed", 0, PV_LOAD_USERS_MAX, &failed))
		return false;
	f->connected = (unsigned)users;
	f->failed = (unsigned)failed;
	if (!pv_json_is_object(pv_json_get(o, "kinds")))
		return nope(c, "\"kinds\" is not an object");
	return pv_json_each(pv_json_get(o, "kinds"), one_kind, &ks) == 0;
}

static int malformed(const char *line, size_t len, const char *why)
{
	char shown[100];
	size_t n = len < sizeof(shown) - 1 ? len : sizeof(shown) - 1;

	for (size_t i = 0; i < n; i++)
		shown[i] = (unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e ? '?'
											  : line[i];
	shown[n] = '\0';
	return pv_error(PV_EREMOTE,
			"a load client printed a line that is not a figures line (%s): '%s'%s; "
			"expected one JSON object per line in provision load's format %d",
			why, shown, len > n ? "..." : "", VERSION);
}

int pv_load_line_decode(const char *line, size_t len, struct pv_load_figs *out)
{
	struct ctx c = {.where = ""};
	struct pv_load_figs *f;
	struct pv_json *o;
	char err[160];
	bool ok;

	if (len && line[len - 1] == '\n')
		len--;
	if (len > PV_LOAD_LINE_MAX)
		return malformed(line, len, "longer than 65536 bytes");
	if (!(o = pv_json_parse(line, len, err, sizeof(err)))) {
		/* jansson says "out of memory" in its own words; a line this short parses */
		return malformed(line, len, err);
	}
	if (!(f = calloc(1, sizeof(*f)))) {
		pv_json_free(o);
		return pv_error(PV_EIO, "out of memory");
	}
	ok = figs(&c, o, f);
	pv_json_free(o);
	if (ok)
		*out = *f;
	free(f);
	return ok ? PV_OK : malformed(line, len, c.why);
}

/* ---- ready ---- */

int pv_load_ready_encode(unsigned connected, unsigned failed, const char *first, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object();
	char *text;

	pv_json_int(o, "users", (long long)connected + failed);
	pv_json_int(o, "connected", connected);
	pv_json_int(o, "failed", failed);
	pv_json_str(o, "error", first && *first ? first : NULL);
	text = pv_json_compact(o);
	pv_json_free(o);
	if (!text)
		return pv_error(PV_EIO, "out of memory");
	pv_buf_addf(out, "ready %s\n", text);
	free(text);
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_ready_decode(const char *line, size_t len, unsigned *connected, unsigned *failed,
			 char *first, size_t firstlen)
{
	struct pv_json *o;
	const struct pv_json *c, *f, *e;
	long long vc = 0, vf = 0;
	int r = PV_OK;

	if (len && line[len - 1] == '\n')
		len--;
	if (len < 6 || strncmp(line, "ready ", 6) != 0)
		return pv_error(PV_EREMOTE, "provision load said '%.*s', not 'ready {...}'",
				(int)(len < 80 ? len : 80), line);
	o = pv_json_parse(line + 6, len - 6, NULL, 0);
	c = o ? pv_json_get(o, "connected") : NULL;
	f = o ? pv_json_get(o, "failed") : NULL;
	e = o ? pv_json_get(o, "error") : NULL;
	if (!c || !f || !pv_json_integer(c, &vc) || !pv_json_integer(f, &vf) || vc < 0 || vf < 0 ||
	    vc > PV_LOAD_USERS_MAX || vf > PV_LOAD_USERS_MAX) {
		r = pv_error(PV_EREMOTE, "provision load said '%.*s', not what it should",
			     (int)(len < 80 ? len : 80), line);
	} else {
		*connected = (unsigned)vc;
		*failed = (unsigned)vf;
		snprintf(first, firstlen, "%s", e && pv_json_text(e) ? pv_json_text(e) : "");
	}
	pv_json_free(o);
	return r;
}
