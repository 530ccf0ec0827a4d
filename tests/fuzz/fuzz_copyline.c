/* tests/fuzz/fuzz_copyline.c: libFuzzer target for the copy job's lines (load/copy.h), both
 * ways. An input is read twice: as one line a client's copy agent printed, as the controller
 * reads it (pv_load_copy_line_parse), and as what the controller sends the agent after the password
 * (lines for pv_load_copy_config_line, a "fileset" line's bytes for pv_load_copy_config_text, until
 * "start"), as provision/copy.c's agent reads its stdin. Invariants, each aborting when
 * broken:
 *   - an agent line refused is PV_EREMOTE, its message quoting at most 119 printable bytes;
 *     a line holding a NUL byte is refused (text after it is text too);
 *   - an agent line read keeps the header's promises: a connection below 16, a port of 16
 *     bits, a description that ends in its field; counts whole and at most 1e15; times from 0
 *     to a day (or NAN: not measured); shares of a core from 0 to 102400%;
 *   - it is written again by its writer as one line ending in '\n', which reads back to the
 *     same kind and counts, and writing that gives the same bytes again (ticks are written to
 *     the millisecond and JSON reals to 12 digits: the second writing is the fixed point);
 *   - a setup line refused is PV_EUSAGE with a message, and asks for no text; a "fileset"
 *     line asks for 1 byte to 1 MiB;
 *   - a setup that starts came from one "copy" line and at most one "fileset" line, and has
 *     a server, share, base and user, a share-relative base, every number in its range, and
 *     exactly one source; pv_load_copy_config_put writes it, and the lines written start again
 *     with the very same setup (every field, the fileset's bytes). */
#include "load/copy.h"
#include "util/buf.h"
#include "util/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY	   86400.0
#define COUNTS	   1e15
#define CORE_MAX   102400.0
#define AGENT_LINE 4095 /* the agent's read_line (provision/copy.c) */

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_copyline: broken promise: %s; message: '%s'\n", what, pv_errmsg());
	abort();
}

static void ends(const char *s, size_t len)
{
	if (!memchr(s, '\0', len))
		broken("a string that does not end inside its field");
}

static void count(unsigned long v)
{
	if ((double)v > COUNTS)
		broken("a count over 1e15 read");
}

static void bytes(uint64_t v)
{
	if ((double)v > COUNTS)
		broken("a byte count over 1e15 read");
}

static void span(double v, double max)
{
	if (!isnan(v) && !(v >= 0 && v <= max))
		broken("a time or a share of a core out of its range read");
}

static void check_line(const struct pv_load_copy_line *l)
{
	switch (l->kind) {
	case PV_LOAD_COPY_CONN:
		ends(l->desc, sizeof(l->desc));
		if (l->conn >= PV_LOAD_COPY_CONNECTIONS_MAX || l->port < 0 || l->port > 65535 ||
		    !l->desc[0])
			broken("a connection, port or description out of range read");
		break;
	case PV_LOAD_COPY_TICK:
		count(l->tick.files);
		bytes(l->tick.bytes);
		if (isnan(l->tick.t) || isnan(l->tick.cpu) || isnan(l->tick.top))
			broken("a tick with a NAN");
		span(l->tick.t, DAY);
		span(l->tick.cpu, CORE_MAX);
		span(l->tick.top, CORE_MAX);
		break;
	case PV_LOAD_COPY_PLAN:
		count(l->plan.files);
		count(l->plan.dirs);
		count(l->plan.extras);
		count(l->plan.ok);
		count(l->plan.listed);
		count(l->plan.skipped);
		bytes(l->plan.bytes);
		bytes(l->plan.source_files);
		bytes(l->plan.source_bytes);
		bytes(l->plan.source_dirs);
		span(l->plan.list_s, DAY);
		ends(l->plan.first_skipped, sizeof(l->plan.first_skipped));
		break;
	case PV_LOAD_COPY_DONE:
		count(l->done.files);
		count(l->done.fixed);
		count(l->done.dirs);
		count(l->done.removed_files);
		count(l->done.removed_dirs);
		count(l->done.ok);
		bytes(l->done.bytes);
		span(l->done.list_s, DAY);
		span(l->done.prune_s, DAY);
		span(l->done.put_s, DAY);
		span(l->done.total_s, DAY);
		span(l->done.cpu_s, DAY);
		span(l->done.put_cpu, CORE_MAX);
		span(l->done.put_top, CORE_MAX);
		ends(l->done.speaks, sizeof(l->done.speaks));
		for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++) {
			count(l->done.classes[i].files);
			span(l->done.classes[i].p50, DAY);
			span(l->done.classes[i].p95, DAY);
		}
		break;
	default:
		broken("a line of no kind read");
	}
}

static int write_line(const struct pv_load_copy_line *l, struct pv_buf *out)
{
	switch (l->kind) {
	case PV_LOAD_COPY_CONN:
		return pv_load_copy_line_conn(l->conn, l->port, l->desc, out);
	case PV_LOAD_COPY_TICK:
		return pv_load_copy_line_tick(&l->tick, out);
	case PV_LOAD_COPY_PLAN:
		return pv_load_copy_line_plan(&l->plan, out);
	default:
		return pv_load_copy_line_done(&l->done, out);
	}
}

/* what a writing keeps exactly: the kind, the counts and the texts */
static bool same_counts(const struct pv_load_copy_line *a, const struct pv_load_copy_line *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case PV_LOAD_COPY_CONN:
		return a->conn == b->conn && a->port == b->port && !strcmp(a->desc, b->desc);
	case PV_LOAD_COPY_TICK:
		return a->tick.files == b->tick.files && a->tick.bytes == b->tick.bytes;
	case PV_LOAD_COPY_PLAN:
		return a->plan.files == b->plan.files && a->plan.bytes == b->plan.bytes &&
		       a->plan.dirs == b->plan.dirs && a->plan.extras == b->plan.extras &&
		       a->plan.ok == b->plan.ok && a->plan.listed == b->plan.listed &&
		       a->plan.skipped == b->plan.skipped &&
		       a->plan.source_files == b->plan.source_files &&
		       a->plan.source_bytes == b->plan.source_bytes &&
		       a->plan.source_dirs == b->plan.source_dirs &&
		       isnan(a->plan.list_s) == isnan(b->plan.list_s) &&
		       !strcmp(a->plan.first_skipped, b->plan.first_skipped);
	default:
		for (int i = 0; i < PV_LOAD_COPY_CLASSES; i++)
			if (a->done.classes[i].files != b->done.classes[i].files ||
			    isnan(a->done.classes[i].p95) != isnan(b->done.classes[i].p95))
				return false;
		return a->done.files == b->done.files && a->done.fixed == b->done.fixed &&
		       a->done.dirs == b->done.dirs &&
		       a->done.removed_files == b->done.removed_files &&
		       a->done.removed_dirs == b->done.removed_dirs && a->done.ok == b->done.ok &&
		       a->done.bytes == b->done.bytes &&
		       isnan(a->done.put_top) == isnan(b->done.put_top) &&
		       !strcmp(a->done.speaks, b->done.speaks);
	}
}

static void agent_line(const char *data, size_t size)
{
	static struct pv_load_copy_line l, back, again;
	struct pv_buf a = PV_BUF_INIT, b = PV_BUF_INIT;
	int r = pv_load_copy_line_parse(data, size, &l);
	size_t n;

	if (r != PV_OK) {
		const char *q = strstr(pv_errmsg(), "): '");

		if (r != PV_EREMOTE || !q)
			broken("an agent line refused without PV_EREMOTE and its quote");
		for (q += 4, n = 0; *q && strcmp(q, "'") && strcmp(q, "...'"); q++, n++)
			if (*q < 0x20 || *q >= 0x7f || n >= 119)
				broken("a byte quoted that does not print, or over 119 of them");
		pv_error_clear();
		return;
	}
	if (memchr(data, '\0', size))
		broken("an agent line holding a NUL byte read");
	check_line(&l);
	if (write_line(&l, &a) != PV_OK)
		broken("a line read cannot be written");
	if (!a.len || a.data[a.len - 1] != '\n' || memchr(a.data, '\n', a.len - 1))
		broken("a line written is not one line");
	if (pv_load_copy_line_parse(a.data, a.len - 1, &back) != PV_OK)
		broken("a line written does not read back");
	check_line(&back);
	if (!same_counts(&l, &back))
		broken("a line's kind, counts or text changed on the way");
	if (write_line(&back, &b) != PV_OK || a.len != b.len || memcmp(a.data, b.data, a.len))
		broken("writing what was read back changed the line");
	if (pv_load_copy_line_parse(b.data, b.len - 1, &again) != PV_OK ||
	    !same_counts(&back, &again))
		broken("the second writing does not read back the same");
	pv_buf_release(&a, 0);
	pv_buf_release(&b, 0);
	pv_error_clear();
}

/* The setup lines in [p, end) as the agent reads them: PV_OK and *started, or the first
 * refusal (PV_OK and not *started: the text ended first, or a line was too long). */
static int setup(struct pv_load_copy_config *c, const char *p, const char *end, bool *started)
{
	unsigned copies = 0, filesets = 0;

	memset(c, 0, sizeof(*c));
	*started = false;
	while (p < end && !*started) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t need = 7, len;
		int r;

		if (!nl || nl - p > AGENT_LINE)
			return PV_OK; /* stdin ended before 'start', or a line too long */
		len = (size_t)(nl - p);
		r = pv_load_copy_config_line(c, p, len, &need, started);
		if (r != PV_OK) {
			if ((r != PV_EUSAGE && r != PV_EIO) || !pv_errmsg()[0] || need)
				broken("a setup line refused without PV_EUSAGE, a message, or with "
				       "text asked for");
			return r;
		}
		copies += len >= 5 && !memcmp(p, "copy ", 5);
		filesets += len >= 8 && !memcmp(p, "fileset ", 8);
		if (*started && (copies != 1 || filesets > 1))
			broken("a setup started from two 'copy' lines or two filesets");
		p = nl + 1;
		if (need) {
			if (need > PV_LOAD_COPY_FILESET_MAX || *started)
				broken("a fileset line asking for 0 or over 1 MiB, or starting");
			if (need > (size_t)(end - p))
				return PV_OK; /* stdin ended inside the fileset */
			if ((r = pv_load_copy_config_text(c, p, need)) != PV_OK)
				return r;
			p += need;
		}
	}
	return PV_OK;
}

static void check_config(const struct pv_load_copy_config *c)
{
	size_t n = strlen(c->base);

	ends(c->server, sizeof(c->server));
	ends(c->share, sizeof(c->share));
	ends(c->base, sizeof(c->base));
	ends(c->workgroup, sizeof(c->workgroup));
	ends(c->user, sizeof(c->user));
	ends(c->dir, sizeof(c->dir));
	ends(c->fileset_name, sizeof(c->fileset_name));
	if (!c->server[0] || !c->share[0] || !n || !c->user[0])
		broken("a setup started without a server, share, base or user");
	if (c->base[0] == '/' || c->base[n - 1] == '/' || strstr(c->base, "//") ||
	    strchr(c->base, '\\'))
		broken("a setup started with a base that is not share-relative");
	if (c->window < 1 || c->window > PV_LOAD_COPY_WINDOW_MAX || c->connections < 1 ||
	    c->connections > PV_LOAD_COPY_CONNECTIONS_MAX || c->fft > 3600 || c->timeout < 1 ||
	    c->timeout > 3600 || !(c->interval >= 0.05 && c->interval <= 60))
		broken("a setup started with a number out of its range");
	if (!c->dir[0] == !c->fileset)
		broken("a setup started with no source or two");
	if (c->fileset && (c->fileset_len < 1 || c->fileset_len > PV_LOAD_COPY_FILESET_MAX ||
			   !c->fileset_name[0]))
		broken("a setup started with a fileset of no bytes, too many, or no name");
}

static void controller_lines(const char *data, size_t size)
{
	static struct pv_load_copy_config c, back;
	struct pv_buf out = PV_BUF_INIT;
	bool started;

	if (setup(&c, data, data + size, &started) != PV_OK || !started)
		goto out;
	check_config(&c);
	if (pv_load_copy_config_put(&c, &out) != PV_OK)
		broken("a setup read cannot be written");
	if (setup(&back, out.data, out.data + out.len, &started) != PV_OK || !started)
		broken("a setup written does not start again");
	if (strcmp(c.server, back.server) || strcmp(c.share, back.share) ||
	    strcmp(c.base, back.base) || strcmp(c.workgroup, back.workgroup) ||
	    strcmp(c.user, back.user) || strcmp(c.dir, back.dir) || c.window != back.window ||
	    c.connections != back.connections || c.mirror != back.mirror || c.fft != back.fft ||
	    c.timeout != back.timeout || c.interval != back.interval || !c.fileset != !back.fileset)
		broken("a setup changed on the way");
	if (c.fileset &&
	    (c.fileset_len != back.fileset_len || memcmp(c.fileset, back.fileset, c.fileset_len) ||
	     strcmp(c.fileset_name, back.fileset_name)))
		broken("a fileset changed on the way");
	pv_load_copy_config_release(&back);
out:
	pv_load_copy_config_release(&c);
	pv_buf_release(&out, 0);
	pv_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	agent_line((const char *)data, size);
	controller_lines((const char *)data, size);
	return 0;
}
