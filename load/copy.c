/* load/copy.c: the copy job's agent on a client (see copy.h): the source walked (a folder,
 * without following a link) or planned (a fileset), the target planned on one connection, the
 * files written by every connection, each in a thread of its own, the figures. */
#include "load/copy.h"

#include "fileset/fileset.h"
#include "smb/smb.h"
#include "util/err.h"
#include "util/progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NT_EPOCH   11644473600ull /* seconds from 1601 to 1970 */
#define FS_MTIME   1767225600ull  /* a fileset's files: 2026-01-01 plus up to a year */
#define PATH_MAX_B 1000 /* bytes of a relative path we take (smb.h keeps 1023 with base) */

/* ---- the source ---- */

struct source {
	struct pv_smb_item *items;
	size_t n, cap;
	uint64_t *seed; /* a fileset: each file's content seed */
	struct pv_fileset *fs;
	int root; /* a folder: its descriptor */
	unsigned long skipped;
	char first_skipped[256];
	uint64_t files, bytes, dirs;
};

static void source_release(struct source *s)
{
	for (size_t i = 0; i < s->n && s->root >= 0; i++)
		free((char *)s->items[i].path);
	free(s->items);
	free(s->seed);
	pv_fileset_free(s->fs);
	if (s->root >= 0)
		close(s->root);
}

static int add(struct source *s, char *path, bool dir, uint64_t size, uint64_t mtime)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct pv_smb_item *v = realloc(s->items, cap * sizeof(*v));

		if (!v)
			return pv_error(PV_EIO, "out of memory");
		s->items = v;
		s->cap = cap;
	}
	s->items[s->n++] = (struct pv_smb_item){path, dir, size, mtime};
	if (!dir) {
		s->files++;
		s->bytes += size;
	} else {
		s->dirs++;
	}
	return PV_OK;
}

static void skip(struct source *s, const char *path, const char *why)
{
	if (!s->skipped++)
		snprintf(s->first_skipped, sizeof(s->first_skipped), "%.200s (%s)", path, why);
}

/* A name SMB carries as it is: none of Windows' reserved characters or control bytes. */
static bool smb_name(const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || strchr("\\:*?\"<>|", *p))
			return false;
	return true;
}

/* Folder fd (rel below the root) into s: its folders before what they hold, each folder's
 * entries by name (a plan that is the same from run to run). */
static int walk(struct source *s, int fd, const char *rel, unsigned depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int r = PV_OK;

	if (!d) {
		close(fd);
		return pv_error(PV_EIO, "copy: cannot read the folder '%s': %s", rel,
				strerror(errno));
	}
	while ((e = readdir(d)) != NULL && r == PV_OK) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!v) {
				r = pv_error(PV_EIO, "out of memory");
				break;
			}
			names = v;
		}
		if (!(names[n] = strdup(e->d_name)))
			r = pv_error(PV_EIO, "out of memory");
		else
			n++;
	}
	if (r == PV_OK)
		qsort(names, n, sizeof(*names), (int (*)(const void *, const void *))strcmp);
	for (size_t i = 0; i < n && r == PV_OK; i++) {
		size_t len = strlen(rel) + (rel[0] ? 1 : 0) + strlen(names[i]);
		char *path = malloc(len + 1);
		struct stat st;

		if (!path) {
			r = pv_error(PV_EIO, "out of memory");
			break;
		}
		snprintf(path, len + 1, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
		if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
			skip(s, path, strerror(errno));
		} else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			skip(s, path, S_ISLNK(st.st_mode) ? "a link" : "not a file or folder");
		} else if (!smb_name(names[i]) || len > PATH_MAX_B) {
			skip(s, path,
			     len > PATH_MAX_B ? "path too long" : "a name SMB cannot carry");
		} else {
			uint64_t mt = ((uint64_t)st.st_mtim.tv_sec + NT_EPOCH) * 10000000ull +
				      (uint64_t)st.st_mtim.tv_nsec / 100;
			bool dir = S_ISDIR(st.st_mode);

			if ((r = add(s, path, dir, dir ? 0 : (uint64_t)st.st_size, mt)) != PV_OK)
				break;
			path = NULL; /* the item holds it */
			if (dir && depth < 256) {
				int sub = openat(dirfd(d), names[i],
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

				if (sub < 0)
					skip(s, s->items[s->n - 1].path, strerror(errno));
				else
					r = walk(s, sub, s->items[s->n - 1].path, depth + 1);
			}
		}
		free(path);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return r;
}

static int source_dir(struct source *s, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return pv_error(PV_ECONFIG, "copy: the source folder '%s' on this client: %s", dir,
				strerror(errno));
	if ((s->root = dup(fd)) < 0) {
		close(fd);
		return pv_error(PV_EIO, "dup: %s", strerror(errno));
	}
	return walk(s, fd, "", 0);
}

static int source_fileset(struct source *s, const struct pv_load_copy_config *c)
{
	int r = pv_fileset_parse(c->fileset_name, c->fileset, c->fileset_len, &s->fs);

	if (r != PV_OK)
		return r;
	if (!(s->items = calloc(s->fs->n ? s->fs->n : 1, sizeof(*s->items))) ||
	    !(s->seed = calloc(s->fs->n ? s->fs->n : 1, sizeof(*s->seed))))
		return pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; i < s->fs->n; i++) {
		const struct pv_fileset_entry *e = &s->fs->entries[i];

		s->seed[i] = pv_fileset_seed(s->fs, e, c->user);
		/* a time of its own, the same in every run: a second copy finds it */
		s->items[i] = (struct pv_smb_item){
			e->path, e->dir, e->size,
			e->dir ? 0 : (FS_MTIME + NT_EPOCH + s->seed[i] % 31536000u) * 10000000ull};
		if (!e->dir) {
			s->files++;
			s->bytes += e->size;
		} else {
			s->dirs++;
		}
	}
	s->n = s->fs->n;
	return PV_OK;
}

/* ---- the connections ---- */

struct agent;

struct conn {
	struct agent *a;
	unsigned i;
	struct pv_smb_sync *c;
	pthread_t t;
	bool started;
	int r;
	char msg[1024];
	struct pv_smb_tree_result res;
	clockid_t clock; /* the thread's CPU clock (while it runs) */
	atomic_bool finished;
	double cpu_end; /* its CPU seconds when it ended */
	/* fill: a folder's file open (the last one read) */
	size_t fd_item;
	int fd;
};

struct agent {
	const struct pv_load_copy_config *c;
	const struct pv_secret *pw;
	const struct pv_load_copy_io *io;
	struct source src;
	struct pv_smb_sync_plan *plan;
	struct conn conns[PV_LOAD_COPY_CONNECTIONS_MAX];
	unsigned nconns;
	float *lat; /* per item: seconds, or -1 */
	atomic_ulong files;
	atomic_ullong bytes;
	atomic_bool stop;
};

static void fill(void *ctx, size_t item, uint64_t off, void *buf, size_t len)
{
	struct conn *k = ctx;
	struct source *s = &k->a->src;
	ssize_t got = 0;

	if (s->fs) {
		pv_fileset_fill(s->seed[item], off, buf, len);
		return;
	}
	if (k->fd < 0 || k->fd_item != item) {
		if (k->fd >= 0)
			close(k->fd);
		k->fd = openat(s->root, s->items[item].path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		k->fd_item = item;
	}
	if (k->fd >= 0)
		got = pread(k->fd, buf, len, (off_t)off);
	/* a file that shrank, or went, since it was listed: zeros for what is missing (its
	 * size is the listed one; the next copy finds the difference) */
	if (got < (ssize_t)len)
		memset((char *)buf + (got > 0 ? got : 0), 0, len - (size_t)(got > 0 ? got : 0));
}

static int tick(void *ctx, unsigned long files, uint64_t bytes)
{
	struct conn *k = ctx;

	atomic_fetch_add(&k->a->files, files);
	atomic_fetch_add(&k->a->bytes, bytes);
	return atomic_load(&k->a->stop) ? 1 : 0;
}

static void on_file(void *ctx, size_t item, double seconds)
{
	struct agent *a = ctx;

	a->lat[item] = (float)seconds;
}

static int conn_open(struct agent *a, struct conn *k)
{
	int r;

	k->fd = -1;
	if ((r = pv_smb_sync_connect(a->c->server, a->c->timeout, &k->c)) != PV_OK ||
	    (r = pv_smb_sync_logon(k->c, a->c->workgroup, a->c->user, a->pw)) != PV_OK ||
	    (r = pv_smb_sync_tree(k->c, a->c->share)) != PV_OK)
		return r;
	{
		struct pv_buf line = PV_BUF_INIT;

		r = pv_load_copy_line_conn(k->i, pv_smb_sync_local_port(k->c),
					   pv_smb_sync_describe(k->c), &line);
		if (r == PV_OK)
			r = a->io->emit(a->io->ctx, line.data, line.len);
		pv_buf_release(&line, 0);
	}
	return r;
}

static void *put_main(void *arg)
{
	struct conn *k = arg;
	struct agent *a = k->a;

	struct timespec ts;

	k->r = pv_smb_sync_plan_put(k->c, a->plan, k->i, a->nconns, fill, k, tick, k, &k->res);
	if (k->r != PV_OK)
		snprintf(k->msg, sizeof(k->msg), "%s", pv_errmsg());
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		k->cpu_end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	atomic_store(&k->finished, true);
	return NULL;
}

/* A thread's CPU seconds, or -1 once its clock is gone (the thread ended). */
static double cpu_secs(const struct conn *k)
{
	struct timespec ts;

	if (atomic_load(&k->finished) || clock_gettime(k->clock, &ts) != 0)
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int emit_tick(struct agent *a, double t0, double *last_t, double *last_cpu, double *last_th,
		     double *cpu, double *top)
{
	struct pv_load_copy_tick t = {pv_now() - t0, atomic_load(&a->files),
				      atomic_load(&a->bytes)};
	double now = pv_now(), c = self_cpu(), dt = now - *last_t;
	struct pv_buf line = PV_BUF_INIT;
	int r;

	t.cpu = dt > 0 ? 100 * (c - *last_cpu) / dt : 0;
	for (unsigned i = 0; i < a->nconns; i++) {
		double th = a->conns[i].started ? cpu_secs(&a->conns[i]) : -1, p;

		if (th < 0)
			continue; /* not started, or ended: its last reading stands */
		p = dt > 0 ? 100 * (th - last_th[i]) / dt : 0;
		t.top = p > t.top ? p : t.top;
		last_th[i] = th;
	}
	if (t.cpu < 0)
		t.cpu = 0;
	*cpu = t.cpu;
	*top = t.top;
	*last_t = now;
	*last_cpu = c;
	r = pv_load_copy_line_tick(&t, &line);
	if (r == PV_OK)
		r = a->io->emit(a->io->ctx, line.data, line.len);
	pv_buf_release(&line, 0);
	return r;
}

/* ---- the figures ---- */

static int cmp_float(const void *x, const void *y)
{
	float a = *(const float *)x, b = *(const float *)y;

	return (a > b) - (a < b);
}

static int class_of(uint64_t size)
{
	return size < 4096 ? 0 : size < 16384 ? 1 : size < 65536 ? 2 : size < (1u << 20) ? 3 : 4;
}

/* Each size class's median and p95 (nearest rank) of the files written. */
static int classes(struct agent *a, struct pv_load_copy_done *d)
{
	float *v = malloc((a->src.n ? a->src.n : 1) * sizeof(*v));

	if (!v)
		return pv_error(PV_EIO, "out of memory");
	for (int c = 0; c < PV_LOAD_COPY_CLASSES; c++) {
		size_t n = 0;

		for (size_t i = 0; i < a->src.n; i++)
			if (!a->src.items[i].dir && a->lat[i] >= 0 &&
			    class_of(a->src.items[i].size) == c)
				v[n++] = a->lat[i];
		d->classes[c].files = n;
		d->classes[c].p50 = d->classes[c].p95 = NAN;
		if (!n)
			continue;
		qsort(v, n, sizeof(*v), cmp_float);
		d->classes[c].p50 = v[(size_t)ceil(0.50 * (double)n) - 1];
		d->classes[c].p95 = v[(size_t)ceil(0.95 * (double)n) - 1];
	}
	free(v);
	return PV_OK;
}

/* ---- the agent ---- */

static int plan_line(struct agent *a)
{
	const struct pv_smb_sync_plan_counts *k = pv_smb_sync_plan_counts(a->plan);
	struct pv_load_copy_plan p = {k->files_to_write, k->dirs_to_make, k->extras,
				      k->files_ok,	 k->listed,	  a->src.skipped};
	struct pv_buf line = PV_BUF_INIT;
	int r;

	p.bytes = k->bytes_to_write;
	p.source_files = a->src.files;
	p.source_bytes = a->src.bytes;
	p.source_dirs = a->src.dirs;
	p.list_s = k->list_seconds;
	snprintf(p.first_skipped, sizeof(p.first_skipped), "%s", a->src.first_skipped);
	r = pv_load_copy_line_plan(&p, &line);
	if (r == PV_OK)
		r = a->io->emit(a->io->ctx, line.data, line.len);
	pv_buf_release(&line, 0);
	return r;
}

/* The writing, in a thread per connection; ticks from here meanwhile. */
static int put_all(struct agent *a, struct pv_load_copy_done *d)
{
	double t0 = pv_now(), last_t = t0, c0 = self_cpu(), last_cpu = c0, cpu, top;
	double last_th[PV_LOAD_COPY_CONNECTIONS_MAX] = {0};
	int r = PV_OK;

	for (unsigned i = 0; i < a->nconns; i++) {
		struct conn *k = &a->conns[i];

		if (pthread_create(&k->t, NULL, put_main, k) != 0) {
			atomic_store(&a->stop, true);
			r = pv_error(PV_EIO, "copy: cannot start a thread");
			break;
		}
		if (pthread_getcpuclockid(k->t, &k->clock) != 0)
			k->clock = (clockid_t)-1; /* no reading: its share is not known */
		k->started = true;
	}
	for (bool running = true; running;) {
		struct timespec ts = {0, 50 * 1000 * 1000};

		nanosleep(&ts, NULL);
		running = false;
		for (unsigned i = 0; i < a->nconns; i++)
			running = running ||
				  (a->conns[i].started && !atomic_load(&a->conns[i].finished));
		if (a->io->stop && a->io->stop(a->io->ctx))
			atomic_store(&a->stop, true);
		if (pv_now() - last_t >= a->c->interval &&
		    emit_tick(a, t0, &last_t, &last_cpu, last_th, &cpu, &top) != PV_OK) {
			atomic_store(&a->stop, true);
			if (r == PV_OK)
				r = pv_error(PV_EIO, "%s", pv_errmsg());
		}
	}
	for (unsigned i = 0; i < a->nconns; i++)
		if (a->conns[i].started)
			pthread_join(a->conns[i].t, NULL);
	d->put_s = pv_now() - t0;
	d->put_cpu = d->put_s > 0 ? 100 * (self_cpu() - c0) / d->put_s : 0;
	for (unsigned i = 0; i < a->nconns; i++) {
		double p = d->put_s > 0 ? 100 * a->conns[i].cpu_end / d->put_s : 0;

		d->put_top = p > d->put_top ? p : d->put_top;
	}
	emit_tick(a, t0, &last_t, &last_cpu, last_th, &cpu, &top);
	for (unsigned i = 0; i < a->nconns && r == PV_OK; i++)
		if (a->conns[i].r != PV_OK)
			r = pv_error(a->conns[i].r, "%s", a->conns[i].msg);
	if (r == PV_OK && atomic_load(&a->stop))
		r = pv_error(PV_ESTOPPED, "copy: stopped");
	return r;
}

int pv_load_copy_agent_run(const struct pv_load_copy_config *c, const struct pv_secret *password,
			   const struct pv_load_copy_io *io, struct pv_load_copy_done *done)
{
	struct agent *a = calloc(1, sizeof(*a));
	struct pv_smb_build_opts o = {0};
	double t0 = pv_now(), c0 = self_cpu(), t;
	int r;

	memset(done, 0, sizeof(*done));
	if (!a)
		return pv_error(PV_EIO, "out of memory");
	a->c = c;
	a->pw = password;
	a->io = io;
	a->src.root = -1;
	a->nconns = c->connections ? c->connections : 1;
	r = c->fileset ? source_fileset(&a->src, c) : source_dir(&a->src, c->dir);
	if (r == PV_OK && !(a->lat = malloc((a->src.n ? a->src.n : 1) * sizeof(*a->lat))))
		r = pv_error(PV_EIO, "out of memory");
	for (size_t i = 0; r == PV_OK && i < a->src.n; i++)
		a->lat[i] = -1;
	for (unsigned i = 0; i < a->nconns; i++) {
		a->conns[i].a = a;
		a->conns[i].i = i;
		a->conns[i].fd = -1;
	}
	/* connection 0 makes the base and the plan, removes the extras, makes the folders */
	if (r == PV_OK && (r = conn_open(a, &a->conns[0])) == PV_OK &&
	    (r = pv_smb_sync_mkdirs(a->conns[0].c, c->share, c->base)) == PV_OK) {
		o.window = c->window;
		o.mirror = c->mirror;
		o.fft = c->fft;
		o.on_file = on_file;
		o.ctx = a;
		snprintf(done->speaks, sizeof(done->speaks), "%s",
			 pv_smb_sync_describe(a->conns[0].c));
		r = pv_smb_sync_plan(a->conns[0].c, c->share, c->base, a->src.items, a->src.n,
				     false, &o, &a->plan);
	}
	if (r == PV_OK)
		r = plan_line(a);
	if (r == PV_OK) {
		t = pv_now();
		r = pv_smb_sync_plan_prune(a->conns[0].c, a->plan, &a->conns[0].res);
		done->prune_s = pv_now() - t;
	}
	for (unsigned i = 1; i < a->nconns && r == PV_OK; i++)
		r = conn_open(a, &a->conns[i]);
	if (r == PV_OK)
		r = put_all(a, done);
	for (unsigned i = 0; i < a->nconns; i++) {
		struct conn *k = &a->conns[i];

		done->files += k->res.files_made;
		done->fixed += k->res.files_fixed;
		done->dirs += k->res.dirs_made;
		done->removed_files += k->res.files_removed;
		done->removed_dirs += k->res.dirs_removed;
		done->bytes += k->res.bytes;
		if (k->c && !pv_smb_sync_lost(k->c) && r == PV_OK)
			r = pv_smb_sync_logoff(k->c);
		pv_smb_sync_free(k->c);
		if (k->fd >= 0)
			close(k->fd);
	}
	if (a->plan) {
		done->ok = pv_smb_sync_plan_counts(a->plan)->files_ok;
		done->list_s = pv_smb_sync_plan_counts(a->plan)->list_seconds;
	}
	done->total_s = pv_now() - t0;
	done->cpu_s = self_cpu() - c0;
	if (r == PV_OK)
		r = classes(a, done);
	if (r == PV_OK) {
		struct pv_buf line = PV_BUF_INIT;

		r = pv_load_copy_line_done(done, &line);
		if (r == PV_OK)
			r = io->emit(io->ctx, line.data, line.len);
		pv_buf_release(&line, 0);
	}
	pv_smb_sync_plan_free(a->plan);
	free(a->lat);
	source_release(&a->src);
	free(a);
	return r;
}
