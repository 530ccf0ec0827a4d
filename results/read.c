/* results/read.c: a run's folder read (see results.h): which files, in which order, each
 * handed to the pure parsers, within the caps of a whole folder (its files, their bytes, the
 * watches' numbers); and the files themselves from disk, opened below the folder without
 * following links, without blocking, regular files only (a step's host folders hold what the
 * hosts sent, and the folder may come from anyone). A file that cannot be read is left out
 * with a note; running out of memory fails the whole read, since a run missing a part with no
 * note saying so would be taken for whole. */
#include "results/internal.h"

#include "util/buf.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the files on disk ---- */

/* What a file that is not a regular one is, for the message. */
static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m)   ? "a FIFO"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISLNK(m)  ? "a symbolic link"
	       : S_ISDIR(m)  ? "a folder"
			     : "not a regular file";
}

/* The part name of a path below the folder fd, opened into *out: a folder (last false) or a
 * regular file. Its type is looked at before it is opened, so that no device is ever opened,
 * and again on the descriptor (fstat), so that nothing swapped in between is read; O_NONBLOCK,
 * so that a FIFO swapped in does not block the open. PV_OK; 1 when it does not exist; else
 * PV_EIO recorded (the path left to the caller's note). */
static int open_part(int fd, const char *name, bool last, int *out)
{
	struct stat before, after;
	int next;

	if (fstatat(fd, name, &before, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 1 : pv_error(PV_EIO, "%s", strerror(errno));
	if (last ? !S_ISREG(before.st_mode) : !S_ISDIR(before.st_mode))
		return pv_error(PV_EIO,
				"'%s' is %s, not a %s: a run's folder holds only folders and "
				"regular files, and nothing else in it is opened; remove it",
				name, kind_of(before.st_mode), last ? "regular file" : "folder");
	next = openat(fd, name,
		      O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
	if (next < 0)
		return errno == ENOENT ? 1 : pv_error(PV_EIO, "%s", strerror(errno));
	if (fstat(next, &after) < 0 || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino || after.st_mode != before.st_mode) {
		close(next);
		return pv_error(PV_EIO, "'%s' changed while it was opened", name);
	}
	*out = next;
	return PV_OK;
}

/* rel below the folder *(int *)arg, up to max bytes (files.get, results.h) */
static int slurp(void *arg, const char *rel, size_t max, char **text, size_t *len)
{
	struct pv_buf b = PV_BUF_INIT;
	char part[256];
	int fd = dup(*(const int *)arg);
	struct stat sb;

	*text = NULL;
	*len = 0;
	if (fd < 0)
		return pv_error(PV_EIO, "%s", strerror(errno));
	/* every part without following a link */
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		bool last = !p[n];
		int next = -1, r;

		snprintf(part, sizeof(part), "%.*s", (int)n, p);
		r = open_part(fd, part, last, &next);
		close(fd);
		if (r != PV_OK)
			return r;
		fd = next;
		p += n + !last;
	}
	if (fstat(fd, &sb) < 0) {
		close(fd);
		return pv_error(PV_EIO, "%s", strerror(errno));
	}
	if ((size_t)sb.st_size > max) {
		close(fd);
		return pv_error(PV_EIO, "%lld bytes, more than the %zu read of a file",
				(long long)sb.st_size, max);
	}
	if (pv_buf_reserve(&b, (size_t)sb.st_size + 1) < 0) {
		close(fd);
		return -1;
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
			return pv_error(PV_EIO, "%s", strerror(e));
		}
		if (got == 0)
			break;
		b.len += (size_t)got;
		b.data[b.len] = '\0';
	}
	close(fd);
	if (pv_buf_failed(&b)) {
		pv_buf_release(&b, 0);
		return -1;
	}
	*len = b.len;
	*text = b.data ? b.data : strdup("");
	return *text ? PV_OK : -1;
}

int pv_results_read(const char *dir, struct pv_results_run **out)
{
	struct pv_results_files files = {slurp, NULL};
	int fd, r;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return pv_error(errno == ENOENT || errno == ENOTDIR ? PV_ECONFIG : PV_EIO,
				"%s: %s (give a run's folder: <controller.results>/<run-id>)", dir,
				strerror(errno));
	files.arg = &fd;
	r = pv_results_parse_files(&files, dir, out);
	close(fd);
	return r;
}

int pv_results_parse_repeats(const char *text, size_t len, char (*names)[64], size_t max, size_t *n)
{
	const char *p = text, *end = text + len;

	*n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		size_t l = (size_t)(e - p);

		if (l) {
			if (*n == max)
				return pv_error(PV_ECONFIG, "repeats.txt names more than %zu runs",
						max);
			if (l >= 64 || p[0] == '.')
				return pv_error(PV_ECONFIG,
						"repeats.txt: a line that is not a run's "
						"folder name: '%.60s'",
						p);
			for (size_t i = 0; i < l; i++)
				if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					    "0123456789._-",
					    p[i]) ||
				    !p[i])
					return pv_error(
						PV_ECONFIG,
						"repeats.txt: a line that is not a run's "
						"folder name (letters, digits, '.', '_', '-'): "
						"'%.*s'",
						(int)(l < 60 ? l : 60), p);
			memcpy(names[*n], p, l);
			names[(*n)++][l] = '\0';
		}
		p = e + (nl ? 1 : 0);
	}
	if (!*n)
		return pv_error(PV_ECONFIG, "repeats.txt names no run");
	return PV_OK;
}

int pv_results_repeats(const char *dir, char (*names)[64], size_t max, size_t *n)
{
	char *text = NULL;
	size_t len = 0;
	int fd, r;

	*n = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return pv_error(PV_ECONFIG, "%s: %s", dir, strerror(errno));
	r = slurp(&fd, "repeats.txt", 4096, &text, &len);
	close(fd);
	if (r < 0)
		r = pv_error(PV_EIO, "out of memory");
	else if (r == PV_OK)
		r = pv_results_parse_repeats(text, len, names, max, n);
	free(text);
	return r;
}

/* ---- the folder's files, in turn, within the caps ---- */

struct reader {
	const struct pv_results_files *files;
	struct pv_results_run *run;
	size_t nfiles;		  /* looked for */
	unsigned long long bytes; /* read */
	size_t cells;		  /* the watches' numbers kept */
	bool over;		  /* a cap of the folder was reached (said once) */
	bool oom;		  /* memory ran out on the way: the read fails */
};

/* A note, or the read failed when memory runs out for it. */
#define NOTE(rd, ...)                                                                              \
	do {                                                                                       \
		if (pv_results_note((rd)->run, __VA_ARGS__) < 0)                                   \
			(rd)->oom = true;                                                          \
	} while (0)

/* A parser's outcome: the parsers are pure, so their PV_EIO is out of memory. */
static int parsed(struct reader *rd, int r)
{
	if (r == PV_EIO)
		rd->oom = true;
	return r;
}

/* The folder holds more than its caps: rel and what follows left out, said once. */
static void over(struct reader *rd, const char *rel)
{
	if (!rd->over)
		NOTE(rd,
		     "%s and the files after it: left out, the folder holds more than %d files or "
		     "%llu bytes to read",
		     rel, PV_RESULTS_FILES_MAX, PV_RESULTS_RUN_MAX);
	rd->over = true;
}

/* rel's content, as files.get gives it, within what the folder has left: PV_OK, 1 when it does
 * not exist or is past the folder's caps, else an error recorded (out of memory: PV_EIO, and
 * the read fails). */
static int get(struct reader *rd, const char *rel, char **text, size_t *len)
{
	int r;

	*text = NULL;
	*len = 0;
	if (rd->over || rd->nfiles >= PV_RESULTS_FILES_MAX) {
		over(rd, rel);
		return 1;
	}
	rd->nfiles++;
	r = rd->files->get(rd->files->arg, rel, PV_RESULTS_FILE_MAX, text, len);
	if (r < 0) {
		rd->oom = true;
		r = pv_error(PV_EIO, "out of memory");
	}
	if (r == PV_OK && *len > PV_RESULTS_RUN_MAX - rd->bytes) {
		over(rd, rel);
		r = 1;
	}
	if (r == PV_OK)
		rd->bytes += *len;
	else {
		free(*text);
		*text = NULL;
	}
	return r;
}

/* A host's name as a folder's: one plain part. */
static bool plain(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static void read_watch(struct reader *rd, const char *rel, struct pv_results_watch **out)
{
	char *text;
	size_t len;
	int r = get(rd, rel, &text, &len);

	/* the watches a run keeps: the numbers they hold, all of them together */
	if (r == PV_OK &&
	    parsed(rd, pv_results_parse_watch_in(text, len, PV_RESULTS_RUN_CELLS - rd->cells, out)))
		r = PV_ECONFIG;
	free(text);
	if (r != PV_OK && r != 1)
		NOTE(rd, "%s: %s; left out", rel, pv_errmsg());
	if (r == PV_OK)
		rd->cells += ((*out)->n + 1) * ((*out)->ncols + 1);
}

/* The first line of what the host printed on stderr, when anything. */
static void read_said(struct reader *rd, const char *rel, struct pv_results_host *h)
{
	char *text;
	size_t len;

	if (get(rd, rel, &text, &len) == PV_OK) {
		const char *p = text;

		while (*p == '\n' || *p == '\r')
			p++;
		snprintf(h->said, sizeof(h->said), "%.*s", (int)strcspn(p, "\r\n"), p);
	}
	free(text);
}

static void read_step(struct reader *rd, struct pv_results_step *st)
{
	struct pv_results_run *run = rd->run;
	char rel[512];
	unsigned skip = 0, interval = run->has_load && run->cfg.interval ? run->cfg.interval : 1;
	bool every = true, any = false;

	snprintf(rel, sizeof(rel), "step-%02u/watch.csv", st->n);
	read_watch(rd, rel, &st->srv);
	snprintf(rel, sizeof(rel), "step-%02u/watch-dc.csv", st->n);
	read_watch(rd, rel, &st->dc);
	skip = (run->warmup + interval - 1) / interval;
	for (size_t i = 0; i < st->nhosts; i++) {
		struct pv_results_host *h = &st->hosts[i];
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
		r = get(rd, rel, &text, &len);
		if (r == PV_OK && parsed(rd, pv_results_parse_jsonl(st, text, len, skip)) != PV_OK)
			r = PV_ECONFIG;
		if (r == PV_OK)
			any = true;
		else
			every = false;
		if (r != PV_OK && r != 1)
			NOTE(rd, "%s: %s; left out", rel, pv_errmsg());
		free(text);
	}
	if (!st->has_hist)
		return;
	/* the histograms must hold exactly the scenarios load.json counts completed */
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS && every && any; k++)
		if (pv_load_hist_count(&st->load.kind[k].n.lat) != st->load.kind[k].lat.n)
			every = false;
	if (!every || !any) {
		NOTE(rd,
		     "step %u: the clients' lines do not add up to load.json's figures (a client's "
		     "load.jsonl missing or cut); its latency intervals are left out",
		     st->n);
		st->has_hist = false;
		memset(&st->load.all.n.lat, 0, sizeof(st->load.all.n.lat));
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			memset(&st->load.kind[k].n.lat, 0, sizeof(st->load.kind[k].n.lat));
	}
}

int pv_results_parse_files(const struct pv_results_files *files, const char *dir,
			   struct pv_results_run **out)
{
	struct reader rd = {files, NULL, 0, 0, 0, false, false};
	char *text = NULL;
	size_t len;
	int r;

	if (!(rd.run = pv_results_new()))
		return pv_error(PV_EIO, "out of memory");
	snprintf(rd.run->dir, sizeof(rd.run->dir), "%s", dir);
	r = get(&rd, "manifest.json", &text, &len);
	if (r == 1)
		r = pv_error(PV_ECONFIG,
			     "%s holds no manifest.json: not a run's folder (give "
			     "<controller.results>/<run-id>)",
			     dir);
	else if (r == PV_OK && (r = pv_results_parse_manifest(rd.run, text, len)) != PV_OK)
		r = pv_error_prefix(r, "%s", dir);
	else if (r != PV_OK)
		r = pv_error_prefix(r, "%s/manifest.json", dir);
	free(text);
	text = NULL;
	if (r == PV_OK) {
		int lr = get(&rd, "load.json", &text, &len);

		if (lr == PV_OK && parsed(&rd, pv_results_parse_load(rd.run, text, len)) != PV_OK)
			lr = PV_ECONFIG;
		if (lr != PV_OK && lr != 1)
			NOTE(&rd, "load.json: %s; the load's figures are left out", pv_errmsg());
		free(text);
		for (size_t i = 0; i < rd.run->nsteps; i++)
			read_step(&rd, &rd.run->steps[i]);
		if (rd.oom)
			r = pv_error(PV_EIO, "%s: out of memory", dir);
	}
	if (r != PV_OK) {
		pv_results_free(rd.run);
		return r;
	}
	*out = rd.run;
	return PV_OK;
}

void pv_results_free(struct pv_results_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->nsteps; i++) {
		struct pv_results_step *st = &run->steps[i];

		free(st->hosts);
		pv_results_watch_free(st->srv);
		pv_results_watch_free(st->dc);
		free((void *)st->load.clients);
		free(st->client_names);
	}
	free(run->steps);
	free(run->hosts);
	free(run->server_config);
	free(run->notes);
	free(run);
}
