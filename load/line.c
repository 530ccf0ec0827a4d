/* load/line.c: the figures line, written and read (see line.h). */
#include "load/line.h"

#include "json/json.h"
#include "util/err.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VERSION 6    /* 6: reclaimed; 5: relogons; 4: drops, reconnects (3 to 5 still read) */
#define SLACK	1e-9 /* relative: a maximum printed with 12 digits may cross its bucket's edge */
#define CPU_MAX 1e6  /* % of one core: 10,000 cores */

static const char *const top_keys[] = {
	"load",	     "i",	"secs", "users",   "failed",   "drops", "reconnects", "relogons",
	"reclaimed", "threads", "cpu",	"cpu_top", "host_cpu", "lag",	"kinds",      NULL};
static const char *const top_keys_5[] = {"load",    "i",	  "secs",     "users",	 "failed",
					 "drops",   "reconnects", "relogons", "threads", "cpu",
					 "cpu_top", "host_cpu",	  "lag",      "kinds",	 NULL};
static const char *const top_keys_4[] = {"load",     "i",	   "secs",    "users", "failed",
					 "drops",    "reconnects", "threads", "cpu",   "cpu_top",
					 "host_cpu", "lag",	   "kinds",   NULL};
static const char *const top_keys_3[] = {"load",     "i",	"secs",	 "users",
					 "failed",   "threads", "cpu",	 "cpu_top",
					 "host_cpu", "lag",	"kinds", NULL};
static const char *const kind_keys[] = {"started",    "errors", "late", "over_limit", "unserved",
					"overloaded", "max",	"hist", "ops",	      NULL};
static const char *const hist_keys[] = {"max", "hist", NULL};
static const char *const ready_keys[] = {"users", "connected", "failed", "error",
					 "spoke", "logon",     NULL};
static const char *const logon_keys[] = {"failed", "retries", "max", "hist", NULL};

/* ---- writing ---- */

static bool empty(const struct pv_load_counts *n)
{
	uint64_t ops = 0;

	for (int o = 0; o < PV_LOAD_OPS; o++)
		ops |= n->ops[o];
	return !(n->started | n->errors | n->late | n->over_limit | n->unserved | n->overloaded |
		 ops | pv_load_hist_count(&n->lat));
}

void pv_load_counts_json(const struct pv_load_counts *n, bool completed, struct pv_json *o)
{
	pv_json_int(o, "started", (long long)n->started);
	if (completed)
		pv_json_int(o, "completed", (long long)pv_load_hist_count(&n->lat));
	pv_json_int(o, "errors", (long long)n->errors);
	pv_json_int(o, "late", (long long)n->late);
	pv_json_int(o, "over_limit", (long long)n->over_limit);
	pv_json_int(o, "unserved", (long long)n->unserved);
	pv_json_int(o, "overloaded", (long long)n->overloaded);
}

struct pv_json *pv_load_ops_json(const uint64_t ops[PV_LOAD_OPS], bool all)
{
	struct pv_json *o = pv_json_object();

	for (int k = 0; k < PV_LOAD_OPS; k++)
		if (all || ops[k])
			pv_json_int(o, pv_load_op_names[k], (long long)ops[k]);
	return o;
}

/* "max" and "hist" of h into o: the exact maximum, the buckets that hold any */
static void hist_json(const struct pv_load_hist *h, struct pv_json *o)
{
	struct pv_json *hist = pv_json_array();

	pv_json_real(o, "max", h->max);
	for (unsigned b = 0; b < PV_LOAD_BUCKETS; b++) {
		struct pv_json *pair;

		if (!h->n[b])
			continue;
		pair = pv_json_array();
		pv_json_append_int(pair, b);
		pv_json_append_int(pair, (long long)h->n[b]);
		pv_json_append(hist, pair);
	}
	pv_json_set(o, "hist", hist);
}

static struct pv_json *kind_json(const struct pv_load_counts *n)
{
	struct pv_json *o = pv_json_object();

	pv_load_counts_json(n, false, o);
	hist_json(&n->lat, o);
	pv_json_set(o, "ops", pv_load_ops_json(n->ops, false));
	return o;
}

/* A line of ours as text (prefix, then o), appended to out with its '\n'. read (NULL: the
 * caller does) reads it back: every allocation of the object is so checked once, since a value
 * that could not be made would be missing. */
static int finish(struct pv_json *o, const char *prefix, int (*read)(const char *, size_t),
		  struct pv_buf *out)
{
	char *text = pv_json_compact(o);
	int r;

	pv_json_free(o);
	if (!text)
		return pv_error(PV_EIO, "out of memory");
	r = read ? read(text, strlen(text)) : PV_OK;
	if (r == PV_OK &&
	    (pv_buf_addstr(out, prefix) || pv_buf_addstr(out, text) || pv_buf_addstr(out, "\n")))
		r = PV_EIO;
	free(text);
	if (r == PV_OK || r == PV_EIO)
		return r == PV_OK ? PV_OK : pv_error(PV_EIO, "out of memory");
	return pv_error(PV_EBUG, "a line of provision load does not read back: %s", pv_errmsg());
}

static int read_figs(const char *text, size_t len);

int pv_load_line_encode(const struct pv_load_figs *f, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object(), *kinds = pv_json_object(), *lag = pv_json_object();

	pv_json_int(o, "load", VERSION);
	pv_json_int(o, "i", (long long)f->seq);
	pv_json_real(o, "secs", f->secs);
	pv_json_int(o, "users", f->connected);
	pv_json_int(o, "failed", f->failed);
	pv_json_int(o, "drops", f->drops);
	pv_json_int(o, "reconnects", f->reconnects);
	pv_json_int(o, "relogons", f->relogons);
	pv_json_int(o, "reclaimed", f->reclaimed);
	pv_json_int(o, "threads", f->threads);
	pv_json_real(o, "cpu", f->cpu);
	pv_json_real(o, "cpu_top", f->cpu_top);
	pv_json_real(o, "host_cpu", f->host_cpu >= 0 ? f->host_cpu : NAN);
	hist_json(&f->lag, lag);
	pv_json_set(o, "lag", lag);
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
		if (!empty(&f->kind[k]))
			pv_json_set(kinds, pv_playbook_workload_names[k], kind_json(&f->kind[k]));
	pv_json_set(o, "kinds", kinds);
	return finish(o, "", read_figs, out);
}

static int read_figs(const char *text, size_t len)
{
	struct pv_load_figs *back = malloc(sizeof(*back));
	int r = back ? pv_load_line_decode(text, len, back) : PV_EIO;

	free(back);
	return r;
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

/* A number from lo to hi, or null (*out NAN). */
static bool number_or_null(struct ctx *c, const struct pv_json *o, const char *key, double lo,
			   double hi, double *out)
{
	const struct pv_json *v = pv_json_get(o, key);

	if (pv_json_is_null(v)) {
		*out = NAN;
		return true;
	}
	if (!pv_json_number(v, out) || !(*out >= lo && *out <= hi))
		return nope(c, "\"%s\" is not a number from %g to %g, nor null", key, lo, hi);
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
		return h->max == 0 ? true
				   : nope(c, "\"max\" is %g with an empty histogram", h->max);
	top--;
	if (h->max < pv_load_bucket_low(top) * (1 - SLACK) ||
	    h->max >= pv_load_bucket_high(top) * (1 + SLACK))
		return nope(c, "\"max\" %g is not in the histogram's top bucket %u", h->max, top);
	return true;
}

/* "max" and "hist" of o into h */
static bool max_hist(struct ctx *c, const struct pv_json *o, struct pv_load_hist *h)
{
	return number(c, o, "max", 0, 1e9, &h->max) && hist(c, pv_json_get(o, "hist"), h) &&
	       max_fits(c, h);
}

struct ops {
	struct ctx *c;
	uint64_t *ops;
};

static int one_op(const char *key, const struct pv_json *v, void *arg)
{
	struct ops *os = arg;
	int k = pv_load_op_of(key);
	long long n;

	if (k < 0) {
		nope(os->c, "\"ops\" names \"%.40s\", not an SMB2 command", key);
		return 1;
	}
	if (!pv_json_integer(v, &n) || n < 0 || n > PV_LOAD_COUNT_MAX) {
		nope(os->c, "\"ops\" has a count for %s that is not from 0 to %lld", key,
		     PV_LOAD_COUNT_MAX);
		return 1;
	}
	os->ops[k] = (uint64_t)n;
	return 0;
}

static bool kind(struct ctx *c, const struct pv_json *o, struct pv_load_counts *n)
{
	const long long M = PV_LOAD_COUNT_MAX;
	struct ops os = {c, n->ops};

	if (!exactly(c, o, kind_keys) || !integer(c, o, "started", 0, M, &n->started) ||
	    !integer(c, o, "errors", 0, M, &n->errors) || !integer(c, o, "late", 0, M, &n->late) ||
	    !integer(c, o, "over_limit", 0, M, &n->over_limit) ||
	    !integer(c, o, "unserved", 0, M, &n->unserved) ||
	    !integer(c, o, "overloaded", 0, M, &n->overloaded) || !max_hist(c, o, &n->lat))
		return false;
	if (!pv_json_is_object(pv_json_get(o, "ops")))
		return nope(c, "\"ops\" is not an object");
	if (pv_json_each(pv_json_get(o, "ops"), one_op, &os))
		return false;
	if (n->unserved > n->started)
		return nope(c, "more unserved (%llu) than started (%llu)",
			    (unsigned long long)n->unserved, (unsigned long long)n->started);
	if (n->over_limit > pv_load_hist_count(&n->lat))
		return nope(c, "more over the limit (%llu) than completed (%llu)",
			    (unsigned long long)n->over_limit,
			    (unsigned long long)pv_load_hist_count(&n->lat));
	if (n->late > pv_load_hist_count(&n->lat) + n->errors)
		return nope(c, "more late (%llu) than ended, completed or in error (%llu)",
			    (unsigned long long)n->late,
			    (unsigned long long)(pv_load_hist_count(&n->lat) + n->errors));
	if (n->overloaded > pv_load_hist_count(&n->lat) + n->errors + n->unserved)
		return nope(c, "more overloaded (%llu) than ended (%llu)",
			    (unsigned long long)n->overloaded,
			    (unsigned long long)(pv_load_hist_count(&n->lat) + n->errors +
						 n->unserved));
	if (n->overloaded < n->late + n->unserved ||
	    n->overloaded > n->late + n->over_limit + n->errors + n->unserved)
		return nope(
			c,
			"overloaded (%llu) is not from late + unserved (%llu) to late + "
			"over_limit + errors + unserved (%llu)",
			(unsigned long long)n->overloaded,
			(unsigned long long)(n->late + n->unserved),
			(unsigned long long)(n->late + n->over_limit + n->errors + n->unserved));
	return true;
}

struct kinds {
	struct ctx *c;
	struct pv_load_figs *f;
};

static int one_kind(const char *key, const struct pv_json *v, void *arg)
{
	struct kinds *ks = arg;
	char where[64];
	int k = pv_playbook_workload_kind_of(key);

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

/* an object holding exactly "max" and "hist", named key in o, into h */
static bool hist_object(struct ctx *c, const struct pv_json *o, const char *key,
			struct pv_load_hist *h)
{
	char where[64];
	bool ok;

	snprintf(where, sizeof(where), "\"%s\": ", key);
	c->where = where;
	ok = exactly(c, pv_json_get(o, key), hist_keys) && max_hist(c, pv_json_get(o, key), h);
	if (ok)
		c->where = "";
	return ok;
}

static bool figs(struct ctx *c, const struct pv_json *o, struct pv_load_figs *f)
{
	uint64_t version, users, failed, threads, drops = 0, reconnects = 0, relogons = 0,
						  reclaimed = 0;
	struct kinds ks = {c, f};

	if (!pv_json_is_object(o))
		return nope(c, "not an object");
	if (!integer(c, o, "load", 0, 1LL << 53, &version))
		return false;
	if (version != VERSION && (version < 3 || version > 5))
		return nope(c, "format %llu, not %d: the client runs another version of provision",
			    (unsigned long long)version, VERSION);
	if (!exactly(c, o,
		     version == 3   ? top_keys_3
		     : version == 4 ? top_keys_4
		     : version == 5 ? top_keys_5
				    : top_keys) ||
	    (version > 3 && (!integer(c, o, "drops", 0, PV_LOAD_USERS_MAX, &drops) ||
			     !integer(c, o, "reconnects", 0, PV_LOAD_USERS_MAX, &reconnects))) ||
	    (version > 4 && !integer(c, o, "relogons", 0, 1LL << 40, &relogons)) ||
	    (version > 5 && !integer(c, o, "reclaimed", 0, 1LL << 40, &reclaimed)))
		return false;
	f->drops = (unsigned)drops;
	f->reconnects = (unsigned)reconnects;
	f->relogons = (unsigned)relogons;
	f->reclaimed = (unsigned)reclaimed;
	if (!integer(c, o, "i", 1, 1LL << 53, &f->seq) ||
	    !number(c, o, "secs", 1e-9, 86400, &f->secs) ||
	    !integer(c, o, "users", 0, PV_LOAD_USERS_MAX, &users) ||
	    !integer(c, o, "failed", 0, PV_LOAD_USERS_MAX, &failed) ||
	    !integer(c, o, "threads", 1, 4096, &threads) ||
	    !number(c, o, "cpu", 0, CPU_MAX, &f->cpu) ||
	    !number(c, o, "cpu_top", 0, CPU_MAX, &f->cpu_top) ||
	    !number_or_null(c, o, "host_cpu", 0, 100, &f->host_cpu) ||
	    !hist_object(c, o, "lag", &f->lag))
		return false;
	f->connected = (unsigned)users;
	f->failed = (unsigned)failed;
	f->threads = (unsigned)threads;
	if (isnan(f->host_cpu))
		f->host_cpu = -1;
	if (!pv_json_is_object(pv_json_get(o, "kinds")))
		return nope(c, "\"kinds\" is not an object");
	return pv_json_each(pv_json_get(o, "kinds"), one_kind, &ks) == 0;
}

static int malformed(const char *what, const char *line, size_t len, const char *why)
{
	char shown[100];
	size_t n = len < sizeof(shown) - 1 ? len : sizeof(shown) - 1;

	for (size_t i = 0; i < n; i++)
		shown[i] = (unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e ? '?'
											  : line[i];
	shown[n] = '\0';
	return pv_error(PV_EREMOTE,
			"a load client printed a line that is not %s (%s): '%s'%s; expected one "
			"JSON object per line in provision load's format %d",
			what, why, shown, len > n ? "..." : "", VERSION);
}

/* line (len bytes, its '\n' dropped) as JSON, read by fn into out (size bytes, set only when
 * fn says yes) */
static int decode(const char *what, const char *line, size_t len, size_t skip,
		  bool (*fn)(struct ctx *, const struct pv_json *, void *), void *out, size_t size)
{
	struct ctx c = {.where = ""};
	struct pv_json *o;
	void *tmp;
	char err[160];
	bool ok;

	if (len > PV_LOAD_LINE_MAX)
		return malformed(what, line, len, "longer than 65536 bytes");
	if (!(o = pv_json_parse(line + skip, len - skip, err, sizeof(err)))) {
		/* jansson says "out of memory" in its own words; a line this short parses */
		return malformed(what, line, len, err);
	}
	if (!(tmp = calloc(1, size))) {
		pv_json_free(o);
		return pv_error(PV_EIO, "out of memory");
	}
	ok = fn(&c, o, tmp);
	pv_json_free(o);
	if (ok)
		memcpy(out, tmp, size);
	free(tmp);
	return ok ? PV_OK : malformed(what, line, len, c.why);
}

static bool figs_fn(struct ctx *c, const struct pv_json *o, void *out)
{
	return figs(c, o, out);
}

int pv_load_line_decode(const char *line, size_t len, struct pv_load_figs *out)
{
	if (len && line[len - 1] == '\n')
		len--;
	return decode("a figures line", line, len, 0, figs_fn, out, sizeof(*out));
}

/* ---- ready, done ---- */

static int read_ready(const char *text, size_t len)
{
	struct pv_load_ready *back = malloc(sizeof(*back));
	int r = back ? pv_load_ready_decode(text, len, back) : PV_EIO;

	free(back);
	return r;
}

int pv_load_ready_encode(const struct pv_load_ready *r, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object(), *l = pv_json_object();
	struct pv_buf text = PV_BUF_INIT;
	int rc;

	pv_json_int(o, "users", (long long)r->connected + r->failed);
	pv_json_int(o, "connected", r->connected);
	pv_json_int(o, "failed", r->failed);
	pv_json_str(o, "error", r->first[0] ? r->first : NULL);
	pv_json_str(o, "spoke", r->spoke[0] ? r->spoke : NULL);
	pv_json_int(l, "failed", (long long)r->logon.failed);
	pv_json_int(l, "retries", (long long)r->logon.retries);
	hist_json(&r->logon.lat, l);
	pv_json_set(o, "logon", l);
	/* read back with its prefix: the reader wants the whole line */
	rc = finish(o, "ready ", NULL, &text);
	if (rc == PV_OK)
		rc = read_ready(text.data, text.len);
	if (rc == PV_OK && pv_buf_add(out, text.data, text.len))
		rc = pv_error(PV_EIO, "out of memory");
	pv_buf_release(&text, 0);
	return rc;
}

static bool ready(struct ctx *c, const struct pv_json *o, void *out)
{
	struct pv_load_ready *r = out;
	const struct pv_json *e = pv_json_get(o, "error"), *sp = pv_json_get(o, "spoke"),
			     *l = pv_json_get(o, "logon");
	uint64_t users, connected, failed;

	if (!exactly(c, o, ready_keys) ||
	    !integer(c, o, "users", 0, 2LL * PV_LOAD_USERS_MAX, &users) ||
	    !integer(c, o, "connected", 0, PV_LOAD_USERS_MAX, &connected) ||
	    !integer(c, o, "failed", 0, PV_LOAD_USERS_MAX, &failed))
		return false;
	if (users != connected + failed)
		return nope(c, "\"users\" %llu is not connected + failed",
			    (unsigned long long)users);
	if (!pv_json_is_null(e) && !pv_json_text(e))
		return nope(c, "\"error\" is not a string nor null");
	if (!pv_json_is_null(sp) && !pv_json_text(sp))
		return nope(c, "\"spoke\" is not a string nor null");
	r->connected = (unsigned)connected;
	r->failed = (unsigned)failed;
	snprintf(r->first, sizeof(r->first), "%s", pv_json_text(e) ? pv_json_text(e) : "");
	snprintf(r->spoke, sizeof(r->spoke), "%s", pv_json_text(sp) ? pv_json_text(sp) : "");
	c->where = "\"logon\": ";
	if (!exactly(c, l, logon_keys) ||
	    !integer(c, l, "failed", 0, PV_LOAD_USERS_MAX, &r->logon.failed) ||
	    !integer(c, l, "retries", 0, PV_LOAD_COUNT_MAX, &r->logon.retries) ||
	    !max_hist(c, l, &r->logon.lat))
		return false;
	c->where = "";
	return true;
}

int pv_load_ready_decode(const char *line, size_t len, struct pv_load_ready *out)
{
	if (len && line[len - 1] == '\n')
		len--;
	if (len < 6 || strncmp(line, "ready ", 6) != 0)
		return malformed("a ready line", line, len, "no 'ready ' at its start");
	return decode("a ready line", line, len, 6, ready, out, sizeof(*out));
}

bool pv_load_is_done(const char *line, size_t len)
{
	if (len && line[len - 1] == '\n')
		len--;
	return len == 4 && !memcmp(line, "done", 4);
}
