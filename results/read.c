/* results/read.c: a run's folder read from disk (see results.h): the files opened below the
 * folder without following links (a step's host folders hold what the hosts sent), each read
 * up to a cap, then handed to the pure parsers. A file that cannot be read is left out with a
 * note; running out of memory fails the whole read, since a run missing a part with no note
 * saying so would be taken for whole. */
#include "results/results.h"

#include "util/buf.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The run's folder being read, and whether memory ran out on the way. */
struct rd {
	int fd;
	bool oom;
};

/* rel below the folder: its content (NUL-terminated) in *text; 1 when it does not exist,
 * PV_EIO naming it when it cannot be read or is larger than max, PV_EIO "out of memory" with
 * rd->oom set. */
static int slurp(struct rd *rd, const char *rel, size_t max, char **text, size_t *len)
{
	struct pv_buf b = PV_BUF_INIT;
	char part[256];
	int fd = dup(rd->fd);

	*text = NULL;
	*len = 0;
	if (fd < 0)
		return pv_error(PV_EIO, "%s: %s", rel, strerror(errno));
	/* every part without following a link */
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		bool last = !p[n];
		int next;

		snprintf(part, sizeof(part), "%.*s", (int)n, p);
		next = openat(fd, part,
			      (last ? O_RDONLY : O_RDONLY | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return errno == ENOENT ? 1
					       : pv_error(PV_EIO, "%s: %s", rel, strerror(errno));
		fd = next;
		p += n + !last;
	}
	{
		struct stat sb;

		if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
			close(fd);
			return pv_error(PV_EIO, "%s: not a file", rel);
		}
		if ((size_t)sb.st_size > max) {
			close(fd);
			return pv_error(PV_EIO, "%s: %lld bytes, more than the %zu read", rel,
					(long long)sb.st_size, max);
		}
		if (pv_buf_reserve(&b, (size_t)sb.st_size + 1) < 0) {
			close(fd);
			rd->oom = true;
			return pv_error(PV_EIO, "out of memory");
		}
	}
	for (;;) {
		ssize_t got;

		if (b.len >= max || pv_buf_reserve(&b, 65536) < 0)
			break;
		got = read(fd, b.data + b.len, b.len + 65536 > max ? max - b.len : 65536);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			close(fd);
			pv_buf_release(&b, 0);
			return pv_error(PV_EIO, "%s: %s", rel, strerror(e));
		}
		if (got == 0)
			break;
		b.len += (size_t)got;
		b.data[b.len] = '\0';
	}
	close(fd);
	if (pv_buf_failed(&b)) {
		pv_buf_release(&b, 0);
		rd->oom = true;
		return pv_error(PV_EIO, "out of memory");
	}
	*len = b.len;
	*text = b.data ? b.data : strdup("");
	if (!*text)
		rd->oom = true;
	return *text ? PV_OK : pv_error(PV_EIO, "out of memory");
}

/* A parser's outcome: the parsers are pure, so their PV_EIO is out of memory. */
static int parsed(struct rd *rd, int r)
{
	if (r == PV_EIO)
		rd->oom = true;
	return r;
}

/* A host's name as a folder's: one plain part. */
static bool plain(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static void read_watch(struct pv_res_run *run, struct rd *rd, const char *rel,
		       struct pv_res_watch **out)
{
	char *text;
	size_t len;
	int r = slurp(rd, rel, PV_RES_FILE_MAX, &text, &len);

	if (r == PV_OK && parsed(rd, pv_res_parse_watch(text, len, out)) != PV_OK)
		r = PV_ECONFIG;
	if (r != PV_OK && r != 1 && pv_res_note(run, "%s: %s; left out", rel, pv_errmsg()) < 0)
		rd->oom = true;
	free(text);
}

/* The first line of what the host printed on stderr, when anything. */
static void read_said(struct rd *rd, const char *rel, struct pv_res_host *h)
{
	char *text;
	size_t len;

	if (slurp(rd, rel, PV_RES_FILE_MAX, &text, &len) == PV_OK) {
		const char *p = text;

		while (*p == '\n' || *p == '\r')
			p++;
		snprintf(h->said, sizeof(h->said), "%.*s", (int)strcspn(p, "\r\n"), p);
	}
	free(text);
}

static void read_step(struct pv_res_run *run, struct rd *rd, struct pv_res_step *st)
{
	char rel[512];
	unsigned skip = 0, interval = run->has_load && run->cfg.interval ? run->cfg.interval : 1;
	bool every = true, any = false;

	snprintf(rel, sizeof(rel), "step-%02u/watch.csv", st->n);
	read_watch(run, rd, rel, &st->srv);
	snprintf(rel, sizeof(rel), "step-%02u/watch-dc.csv", st->n);
	read_watch(run, rd, rel, &st->dc);
	skip = (run->warmup + interval - 1) / interval;
	for (size_t i = 0; i < st->nhosts; i++) {
		struct pv_res_host *h = &st->hosts[i];
		char *text;
		size_t len;
		int r;

		if (!plain(h->name))
			continue;
		snprintf(rel, sizeof(rel), "step-%02u/%s/stderr", st->n, h->name);
		read_said(rd, rel, h);
		if (!st->has_load || strcmp(h->role, "client"))
			continue;
		snprintf(rel, sizeof(rel), "step-%02u/%s/load.jsonl", st->n, h->name);
		r = slurp(rd, rel, PV_RES_FILE_MAX, &text, &len);
		if (r == PV_OK && parsed(rd, pv_res_parse_jsonl(st, text, len, skip)) != PV_OK)
			r = PV_ECONFIG;
		if (r == PV_OK)
			any = true;
		else
			every = false;
		if (r != PV_OK && r != 1 &&
		    pv_res_note(run, "%s: %s; left out", rel, pv_errmsg()) < 0)
			rd->oom = true;
		free(text);
	}
	if (!st->has_hist)
		return;
	/* the histograms must hold exactly the scenarios load.json counts completed */
	for (int k = 0; k < PV_LOAD_KINDS && every && any; k++)
		if (pv_load_hist_count(&st->kind[k].hist) != st->kind[k].completed)
			every = false;
	if (!every || !any) {
		if (pv_res_note(run,
				"step %u: the clients' lines do not add up to load.json's figures "
				"(a client's load.jsonl missing or cut); its latency intervals are "
				"left out",
				st->n) < 0)
			rd->oom = true;
		st->has_hist = st->all.has_hist = false;
		for (int k = 0; k < PV_LOAD_KINDS; k++)
			st->kind[k].has_hist = false;
	}
}

int pv_res_read(const char *dir, struct pv_res_run **out)
{
	struct pv_res_run *run;
	struct rd rd = {-1, false};
	char *text = NULL;
	size_t len;
	int r;

	rd.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rd.fd < 0)
		return pv_error(errno == ENOENT || errno == ENOTDIR ? PV_ECONFIG : PV_EIO,
				"%s: %s (give a run's folder: <controller.results>/<run-id>)", dir,
				strerror(errno));
	if (!(run = pv_res_new())) {
		close(rd.fd);
		return pv_error(PV_EIO, "out of memory");
	}
	snprintf(run->dir, sizeof(run->dir), "%s", dir);
	r = slurp(&rd, "manifest.json", PV_RES_FILE_MAX, &text, &len);
	if (r == 1)
		r = pv_error(PV_ECONFIG,
			     "%s holds no manifest.json: not a run's folder (give "
			     "<controller.results>/<run-id>)",
			     dir);
	else if (r == PV_OK && (r = pv_res_parse_manifest(run, text, len)) != PV_OK)
		r = pv_error_prefix(r, "%s", dir);
	free(text);
	text = NULL;
	if (r == PV_OK) {
		int lr = slurp(&rd, "load.json", PV_RES_FILE_MAX, &text, &len);

		if (lr == PV_OK && parsed(&rd, pv_res_parse_load(run, text, len)) != PV_OK)
			lr = PV_ECONFIG;
		if (lr != PV_OK && lr != 1 &&
		    pv_res_note(run, "load.json: %s; the load's figures are left out",
				pv_errmsg()) < 0)
			rd.oom = true;
		free(text);
		for (size_t i = 0; i < run->nsteps; i++)
			read_step(run, &rd, &run->steps[i]);
		if (rd.oom)
			r = pv_error(PV_EIO, "%s: out of memory", dir);
	}
	close(rd.fd);
	if (r != PV_OK) {
		pv_res_free(run);
		return r;
	}
	*out = run;
	return PV_OK;
}

void pv_res_free(struct pv_res_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->nsteps; i++) {
		struct pv_res_step *st = &run->steps[i];

		free(st->hosts);
		pv_res_watch_free(st->srv);
		pv_res_watch_free(st->dc);
		free(st->clients);
		free(st->ops);
	}
	free(run->steps);
	free(run->hosts);
	free(run->server_config);
	free(run->notes);
	free(run);
}
