/* load/copyline.c: the copy job's lines (see copy.h): the controller's setup lines to the
 * agent and the agent's lines back, made and read. Pure. */
#include "load/copy.h"
#include "load/proto.h"

#include "json/json.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const pv_load_copy_class_names[PV_LOAD_COPY_CLASSES] = {
	"under 4 KiB", "4-16 KiB", "16-64 KiB", "64 KiB-1 MiB", "1 MiB and over",
};

/* ---- the controller's lines ---- */

static void kv(struct pv_buf *out, const char *k, const char *v)
{
	pv_buf_addf(out, " %s=", k);
	pv_load_proto_encode(out, v);
}

int pv_load_copy_config_put(const struct pv_load_copy_config *c, struct pv_buf *out)
{
	pv_buf_addstr(out, "copy");
	kv(out, "server", c->server);
	kv(out, "share", c->share);
	kv(out, "base", c->base);
	kv(out, "workgroup", c->workgroup);
	kv(out, "user", c->user);
	pv_buf_addf(out, " window=%u connections=%u mirror=%d fft=%u timeout=%d interval=%.17g",
		    c->window, c->connections, c->mirror ? 1 : 0, c->fft, c->timeout, c->interval);
	if (c->dir[0])
		kv(out, "dir", c->dir);
	pv_buf_addstr(out, "\n");
	if (c->fileset) {
		pv_buf_addstr(out, "fileset ");
		pv_load_proto_encode(out, c->fileset_name[0] ? c->fileset_name : "fileset");
		pv_buf_addf(out, " %zu\n", c->fileset_len);
		pv_buf_add(out, c->fileset, c->fileset_len);
	}
	pv_buf_addstr(out, "start\n");
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

static int bad(const char *what, const char *line, size_t len)
{
	return pv_error(PV_EUSAGE, "copy-agent: %s in the line '%.*s%s'", what,
			(int)(len < 80 ? len : 80), line, len > 80 ? "..." : "");
}

/* An unsigned number in [lo, hi] from w. */
static bool uint_in(const char *w, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(w, &end, 10);

	if (!*w || *end || w[0] == '-' || v < lo || v > hi)
		return false;
	*out = (unsigned)v;
	return true;
}

static int copy_line(struct pv_load_copy_config *c, const char *line, size_t len)
{
	const char *s = line + 4, *end = line + len;
	char w[1400];

	c->window = 8;
	c->connections = 1;
	c->fft = 2;
	c->timeout = 10;
	c->interval = 1;
	while (s < end) {
		char *eq, *v;
		unsigned u;
		char *e;

		while (s < end && *s == ' ')
			s++;
		if (s == end)
			break;
		if (pv_load_proto_word(&s, end, w, sizeof(w)) < 0 || !(eq = strchr(w, '=')))
			return bad("a word that is not KEY=VALUE", line, len);
		*eq = '\0';
		v = eq + 1;
#define TEXT(key, field)                                                                           \
	if (strcmp(w, key) == 0) {                                                                 \
		if (strlen(v) >= sizeof(c->field))                                                 \
			return bad("a value too long for " key, line, len);                        \
		snprintf(c->field, sizeof(c->field), "%s", v);                                     \
		continue;                                                                          \
	}
		TEXT("server", server)
		TEXT("share", share)
		TEXT("base", base)
		TEXT("workgroup", workgroup)
		TEXT("user", user)
		TEXT("dir", dir)
#undef TEXT
		if (strcmp(w, "window") == 0 && uint_in(v, 1, PV_LOAD_COPY_WINDOW_MAX, &c->window))
			continue;
		if (strcmp(w, "connections") == 0 &&
		    uint_in(v, 1, PV_LOAD_COPY_CONNECTIONS_MAX, &c->connections))
			continue;
		if (strcmp(w, "fft") == 0 && uint_in(v, 0, 3600, &c->fft))
			continue;
		if (strcmp(w, "mirror") == 0 && uint_in(v, 0, 1, &u)) {
			c->mirror = u;
			continue;
		}
		if (strcmp(w, "timeout") == 0 && uint_in(v, 1, 3600, &u)) {
			c->timeout = (int)u;
			continue;
		}
		if (strcmp(w, "interval") == 0 && (c->interval = strtod(v, &e), !*e && *v) &&
		    c->interval >= 0.05 && c->interval <= 60)
			continue;
		return bad("an unknown key or a value out of range", line, len);
	}
	if (!c->server[0] || !c->share[0] || !c->base[0] || !c->user[0])
		return bad("no server, share, base or user", line, len);
	if (c->base[0] == '/' || strstr(c->base, "\\") || strstr(c->base, "//") ||
	    c->base[strlen(c->base) - 1] == '/')
		return bad("a base that is not a share-relative folder (a/b/c)", line, len);
	return PV_OK;
}

int pv_load_copy_config_line(struct pv_load_copy_config *c, const char *line, size_t len,
			     size_t *need, bool *started)
{
	*need = 0;
	/* a NUL would end the words read (load/proto.h's words, strtoul) before the line does */
	if (memchr(line, '\0', len))
		return bad("a NUL byte", line, len);
	/* one 'copy' line, one source: a second would mix its settings or its files with the
	 * first's (and a second copy line keeps the first's names but not its numbers) */
	if (len >= 5 && memcmp(line, "copy ", 5) == 0)
		return c->server[0] ? bad("a second 'copy' line", line, len)
				    : copy_line(c, line, len);
	if (len >= 8 && memcmp(line, "fileset ", 8) == 0) {
		const char *s = line + 8, *end = line + len;
		char n[32], *e;
		unsigned long long v;

		if (c->fileset)
			return bad("a second fileset", line, len);
		if (pv_load_proto_word(&s, end, c->fileset_name, sizeof(c->fileset_name)) < 0 ||
		    pv_load_proto_word(&s, end, n, sizeof(n)) < 0 || s != end)
			return bad("not 'fileset NAME LENGTH'", line, len);
		v = strtoull(n, &e, 10);
		if (*e || n[0] == '-' || v == 0 || v > PV_LOAD_COPY_FILESET_MAX)
			return bad("a fileset's length that is not 1 to 1 MiB", line, len);
		*need = (size_t)v;
		return PV_OK;
	}
	if (len == 5 && memcmp(line, "start", 5) == 0) {
		if (!c->server[0])
			return bad("'start' before the 'copy' line", line, len);
		if (!!c->dir[0] == !!c->fileset)
			return bad("a source that is neither one folder nor one fileset", line,
				   len);
		*started = true;
		return PV_OK;
	}
	return bad("an unknown line", line, len);
}

int pv_load_copy_config_text(struct pv_load_copy_config *c, const char *text, size_t len)
{
	free(c->fileset);
	if (!(c->fileset = malloc(len ? len : 1)))
		return pv_error(PV_EIO, "out of memory");
	memcpy(c->fileset, text, len);
	c->fileset_len = len;
	return PV_OK;
}

void pv_load_copy_config_release(struct pv_load_copy_config *c)
{
	free(c->fileset);
	c->fileset = NULL;
	c->fileset_len = 0;
}

/* ---- the agent's lines ---- */

int pv_load_copy_line_conn(unsigned n, int port, const char *desc, struct pv_buf *out)
{
	pv_buf_addf(out, "copy-conn %u %d ", n, port);
	pv_load_proto_encode(out, desc && *desc ? desc : "-");
	pv_buf_addstr(out, "\n");
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_copy_line_tick(const struct pv_load_copy_tick *t, struct pv_buf *out)
{
	pv_buf_addf(out, "copy-tick %.3f %lu %llu %.1f %.1f\n", t->t, t->files,
		    (unsigned long long)t->bytes, t->cpu, t->top);
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

static int put_json(const char *tag, struct pv_json *o, struct pv_buf *out)
{
	char *text = o ? pv_json_compact(o) : NULL;

	pv_json_free(o);
	if (!text)
		return pv_error(PV_EIO, "out of memory");
	pv_buf_addf(out, "%s %s\n", tag, text);
	free(text);
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

int pv_load_copy_line_plan(const struct pv_load_copy_plan *p, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object();

	pv_json_int(o, "files", (long long)p->files);
	pv_json_int(o, "bytes", (long long)p->bytes);
	pv_json_int(o, "dirs", (long long)p->dirs);
	pv_json_int(o, "extras", (long long)p->extras);
	pv_json_int(o, "ok", (long long)p->ok);
	pv_json_int(o, "listed", (long long)p->listed);
	pv_json_int(o, "skipped", (long long)p->skipped);
	pv_json_int(o, "source_files", (long long)p->source_files);
	pv_json_int(o, "source_bytes", (long long)p->source_bytes);
	pv_json_int(o, "source_dirs", (long long)p->source_dirs);
	pv_json_real(o, "list_s", p->list_s);
	pv_json_str(o, "first_skipped", p->first_skipped);
	return put_json("copy-plan", o, out);
}

int pv_load_copy_line_done(const struct pv_load_copy_done *d, struct pv_buf *out)
{
	struct pv_json *o = pv_json_object(), *cl = pv_json_array();

	pv_json_int(o, "files", (long long)d->files);
	pv_json_int(o, "fixed", (long long)d->fixed);
	pv_json_int(o, "dirs", (long long)d->dirs);
	pv_json_int(o, "removed_files", (long long)d->removed_files);
	pv_json_int(o, "removed_dirs", (long long)d->removed_dirs);
	pv_json_int(o, "ok", (long long)d->ok);
	pv_json_int(o, "bytes", (long long)d->bytes);
	pv_json_real(o, "list_s", d->list_s);
	pv_json_real(o, "prune_s", d->prune_s);
	pv_json_real(o, "put_s", d->put_s);
	pv_json_real(o, "total_s", d->total_s);
	pv_json_real(o, "cpu_s", d->cpu_s);
	pv_json_real(o, "put_cpu", d->put_cpu);
	pv_json_real(o, "put_top", d->put_top);
	pv_json_str(o, "speaks", d->speaks);
	for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++) {
		struct pv_json *c = pv_json_object();

		pv_json_int(c, "files", (long long)d->classes[i].files);
		pv_json_real(c, "p50", d->classes[i].p50);
		pv_json_real(c, "p95", d->classes[i].p95);
		pv_json_append(cl, c);
	}
	pv_json_set(o, "classes", cl);
	return put_json("copy-done", o, out);
}

/* The largest count a line may give: no copy comes near it, and a double holds it exactly. */
#define COUNT_MAX 1e15

static bool count_of(const struct pv_json *o, const char *k, unsigned long *out)
{
	long long v;

	if (!pv_json_integer(pv_json_get(o, k), &v) || v < 0 || (double)v > COUNT_MAX)
		return false;
	*out = (unsigned long)v;
	return true;
}

static bool bytes_of(const struct pv_json *o, const char *k, uint64_t *out)
{
	unsigned long v;

	if (!count_of(o, k, &v))
		return false;
	*out = v;
	return true;
}

/* A time or a share of a core: a finite number, 0 to a day (null: unknown, NAN). */
static bool real_of(const struct pv_json *o, const char *k, double max, double *out)
{
	const struct pv_json *v = pv_json_get(o, k);

	if (v && pv_json_is_null(v)) {
		*out = NAN;
		return true;
	}
	return pv_json_number(v, out) && isfinite(*out) && *out >= 0 && *out <= max;
}

static bool text_of(const struct pv_json *o, const char *k, char *out, size_t len)
{
	const char *t = pv_json_text(pv_json_get(o, k));

	if (!t || strlen(t) >= len)
		return false;
	snprintf(out, len, "%s", t);
	return true;
}

#define DAY  86400.0
#define CORE 100.0 * PV_LOAD_COPY_CONNECTIONS_MAX * 64 /* % of a core, all cores of a big host */

static bool plan_of(const struct pv_json *o, struct pv_load_copy_plan *p)
{
	return count_of(o, "files", &p->files) && bytes_of(o, "bytes", &p->bytes) &&
	       count_of(o, "dirs", &p->dirs) && count_of(o, "extras", &p->extras) &&
	       count_of(o, "ok", &p->ok) && count_of(o, "listed", &p->listed) &&
	       count_of(o, "skipped", &p->skipped) &&
	       bytes_of(o, "source_files", &p->source_files) &&
	       bytes_of(o, "source_bytes", &p->source_bytes) &&
	       bytes_of(o, "source_dirs", &p->source_dirs) &&
	       real_of(o, "list_s", DAY, &p->list_s) &&
	       text_of(o, "first_skipped", p->first_skipped, sizeof(p->first_skipped));
}

static bool done_of(const struct pv_json *o, struct pv_load_copy_done *d)
{
	const struct pv_json *cl = pv_json_get(o, "classes");

	if (!(count_of(o, "files", &d->files) && count_of(o, "fixed", &d->fixed) &&
	      count_of(o, "dirs", &d->dirs) && count_of(o, "removed_files", &d->removed_files) &&
	      count_of(o, "removed_dirs", &d->removed_dirs) && count_of(o, "ok", &d->ok) &&
	      bytes_of(o, "bytes", &d->bytes) && real_of(o, "list_s", DAY, &d->list_s) &&
	      real_of(o, "prune_s", DAY, &d->prune_s) && real_of(o, "put_s", DAY, &d->put_s) &&
	      real_of(o, "total_s", DAY, &d->total_s) && real_of(o, "cpu_s", DAY, &d->cpu_s) &&
	      real_of(o, "put_cpu", CORE, &d->put_cpu) &&
	      real_of(o, "put_top", CORE, &d->put_top) &&
	      text_of(o, "speaks", d->speaks, sizeof(d->speaks)) && pv_json_is_array(cl) &&
	      pv_json_size(cl) == PV_LOAD_COPY_CLASSES))
		return false;
	for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++) {
		const struct pv_json *c = pv_json_at(cl, (size_t)i);

		if (!count_of(c, "files", &d->classes[i].files) ||
		    !real_of(c, "p50", DAY, &d->classes[i].p50) ||
		    !real_of(c, "p95", DAY, &d->classes[i].p95))
			return false;
	}
	return true;
}

static int malformed(const char *line, size_t len, const char *why)
{
	char shown[120];
	size_t n = len < sizeof(shown) - 1 ? len : sizeof(shown) - 1;

	for (size_t i = 0; i < n; i++)
		shown[i] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
	shown[n] = '\0';
	return pv_error(PV_EREMOTE,
			"the copy agent printed a line that is not one of its own (%s): "
			"'%s%s'",
			why, shown, len > n ? "..." : "");
}

int pv_load_copy_line_parse(const char *line, size_t len, struct pv_load_copy_line *l)
{
	memset(l, 0, sizeof(*l));
	/* sscanf and the words stop at a NUL: what follows it would go unread */
	if (memchr(line, '\0', len))
		return malformed(line, len, "a NUL byte");
	if (len > 10 && memcmp(line, "copy-tick ", 10) == 0) {
		char buf[200];
		double t, f, b, cpu, top;
		char extra;

		if (len >= sizeof(buf))
			return malformed(line, len, "too long");
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (sscanf(buf + 10, "%lf %lf %lf %lf %lf %c", &t, &f, &b, &cpu, &top, &extra) !=
			    5 ||
		    !(t >= 0 && t <= DAY) || !(f >= 0 && f <= COUNT_MAX && f == floor(f)) ||
		    !(b >= 0 && b <= COUNT_MAX && b == floor(b)) || !(cpu >= 0 && cpu <= CORE) ||
		    !(top >= 0 && top <= CORE))
			return malformed(line, len, "its tick");
		l->kind = PV_LOAD_COPY_TICK;
		l->tick = (struct pv_load_copy_tick){t, (unsigned long)f, (uint64_t)b, cpu, top};
		return PV_OK;
	}
	if (len > 10 && memcmp(line, "copy-conn ", 10) == 0) {
		const char *s = line + 10, *end = line + len;
		char n[16], p[16], *e1, *e2;
		unsigned long nv, pv;

		if (pv_load_proto_word(&s, end, n, sizeof(n)) < 0 ||
		    pv_load_proto_word(&s, end, p, sizeof(p)) < 0 ||
		    pv_load_proto_word(&s, end, l->desc, sizeof(l->desc)) < 0 || s != end)
			return malformed(line, len, "not 'copy-conn N PORT DESC'");
		nv = strtoul(n, &e1, 10);
		pv = strtoul(p, &e2, 10);
		if (*e1 || *e2 || n[0] == '-' || p[0] == '-' ||
		    nv >= PV_LOAD_COPY_CONNECTIONS_MAX || pv > 65535)
			return malformed(line, len, "its connection or port");
		l->kind = PV_LOAD_COPY_CONN;
		l->conn = (unsigned)nv;
		l->port = (int)pv;
		return PV_OK;
	}
	if ((len > 10 && memcmp(line, "copy-plan ", 10) == 0) ||
	    (len > 10 && memcmp(line, "copy-done ", 10) == 0)) {
		bool plan = line[5] == 'p';
		char err[128];
		struct pv_json *o = pv_json_parse(line + 10, len - 10, err, sizeof(err));
		bool ok = o && pv_json_is_object(o) &&
			  (plan ? plan_of(o, &l->plan) : done_of(o, &l->done));

		pv_json_free(o);
		if (!ok)
			return malformed(line, len, plan ? "its plan" : "its figures");
		l->kind = plan ? PV_LOAD_COPY_PLAN : PV_LOAD_COPY_DONE;
		return PV_OK;
	}
	return malformed(line, len, "no copy- word at its start");
}
