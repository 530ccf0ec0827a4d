/* run/watch.c: the watches of the server and the DC (see watch.h). */
#include "env/target.h"
#include "run/watch.h"

#include "json/json.h"
#include "remote/quote.h"
#include "remote/remote.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char pv_run_watch_pl[], pv_run_watch_sh[];

const char *const pv_run_watch_names[PV_RUN_W_COUNT] = {
	[PV_RUN_W_CPU] = "cpu",
	[PV_RUN_W_USR] = "usr",
	[PV_RUN_W_SYS] = "sys",
	[PV_RUN_W_IOWAIT] = "iowait",
	[PV_RUN_W_SMBD] = "smbd",
	[PV_RUN_W_WINBINDD] = "winbindd",
	[PV_RUN_W_SAMBA] = "samba",
	[PV_RUN_W_SELF] = "self",
	[PV_RUN_W_MEM_USED] = "mem_used",
	[PV_RUN_W_MEM_AVAIL] = "mem_avail",
	[PV_RUN_W_DIRTY] = "dirty",
	[PV_RUN_W_RD] = "rd",
	[PV_RUN_W_WR] = "wr",
	[PV_RUN_W_INFLIGHT] = "inflight",
	[PV_RUN_W_NET_RX] = "net_rx",
	[PV_RUN_W_NET_TX] = "net_tx",
};

/* ---- parsing (pure) ---- */

static int malformed(const char *line, size_t len, const char *why)
{
	char shown[120];
	size_t n = len < sizeof(shown) - 1 ? len : sizeof(shown) - 1;

	for (size_t i = 0; i < n; i++)
		shown[i] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
	shown[n] = '\0';
	return pv_error(PV_EREMOTE,
			"a host's sampler printed a line that is not a sample (%s): "
			"'%s%s'",
			why, shown, len > n ? "..." : "");
}

static bool number(const char *s, size_t len, double *out)
{
	char tmp[64], *end;

	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	*out = strtod(tmp, &end);
	return *end == '\0' && isfinite(*out);
}

/* "IF:RX:TX,IF:RX:TX" or "-": the sums, and each interface (the first PV_RUN_WATCH_IFS) */
static bool net(const char *s, size_t len, struct pv_run_watch_sample *out)
{
	out->v[PV_RUN_W_NET_RX] = out->v[PV_RUN_W_NET_TX] = 0;
	out->nifs = 0;
	if (len == 1 && s[0] == '-')
		return true;
	while (len) {
		const char *comma = memchr(s, ',', len);
		size_t n = comma ? (size_t)(comma - s) : len;
		const char *c2 = NULL, *c1 = memchr(s, ':', n);
		double a, b;

		if (c1)
			c2 = memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - s));
		if (!c1 || !c2 || c1 == s || !number(c1 + 1, (size_t)(c2 - c1 - 1), &a) ||
		    !number(c2 + 1, n - (size_t)(c2 + 1 - s), &b))
			return false;
		out->v[PV_RUN_W_NET_RX] += a;
		out->v[PV_RUN_W_NET_TX] += b;
		if (out->nifs < PV_RUN_WATCH_IFS && (size_t)(c1 - s) < sizeof(out->ifs[0].name)) {
			struct pv_run_watch_if *f = &out->ifs[out->nifs++];

			memcpy(f->name, s, (size_t)(c1 - s));
			f->name[c1 - s] = '\0';
			f->rx = a;
			f->tx = b;
		}
		if (!comma)
			break;
		len -= n + 1;
		s = comma + 1;
		if (!len)
			return false;
	}
	return true;
}

/* "PID:CPU:THREADS:TOP:QUOTA,..." or "-": the smbds (the first PV_RUN_WATCH_PROCS) */
static bool procs(const char *s, size_t len, struct pv_run_watch_sample *out)
{
	out->nprocs = 0;
	if (len == 1 && s[0] == '-')
		return true;
	while (len) {
		const char *comma = memchr(s, ',', len);
		size_t n = comma ? (size_t)(comma - s) : len, at = 0;
		double f[5];

		for (int k = 0; k < 5; k++) {
			const char *c = k < 4 ? memchr(s + at, ':', n - at) : NULL;
			size_t e = c ? (size_t)(c - s) : n;

			if ((k < 4 && !c) || !number(s + at, e - at, &f[k]))
				return false;
			at = e + 1;
		}
		if (f[0] < 1 || f[0] > 4194304 || f[0] != floor(f[0]) || f[1] < 0 || f[2] < 1 ||
		    f[2] > 65536 || f[3] < 0 || f[3] > f[1] + 100)
			return false;
		if (out->nprocs < PV_RUN_WATCH_PROCS)
			out->procs[out->nprocs++] = (struct pv_run_watch_proc){
				(int)f[0], f[1], (unsigned)f[2], f[3], f[4] < 0 ? -1 : f[4]};
		if (!comma)
			break;
		len -= n + 1;
		s = comma + 1;
		if (!len)
			return false;
	}
	return true;
}

int pv_run_watch_parse(const char *line, size_t len, struct pv_run_watch_sample *s)
{
	static const char tag[] = "pv-watch ";
	bool seen[PV_RUN_W_COUNT] = {false};
	size_t i = sizeof(tag) - 1;

	if (len >= 14 && memcmp(line, "pv-watch-start", 14) == 0)
		return 1;
	if (len < i || memcmp(line, tag, i) != 0)
		return malformed(line, len, "no 'pv-watch' at its start");
	while (i < len) {
		size_t start = i, eq;
		const char *key, *val;
		size_t klen, vlen;
		int m;

		while (i < len && line[i] != ' ')
			i++;
		if (i == start) {
			i++;
			continue;
		}
		key = line + start;
		val = memchr(key, '=', i - start);
		if (!val)
			return malformed(line, len, "a field without '='");
		eq = (size_t)(val - key);
		klen = eq;
		val++;
		vlen = i - start - eq - 1;
		if (klen == 3 && memcmp(key, "net", 3) == 0) {
			if (!net(val, vlen, s))
				return malformed(line, len, "its net field");
			seen[PV_RUN_W_NET_RX] = seen[PV_RUN_W_NET_TX] = true;
			continue;
		}
		if (klen == 5 && memcmp(key, "procs", 5) == 0) {
			if (!procs(val, vlen, s))
				return malformed(line, len, "its procs field");
			continue;
		}
		for (m = 0; m < PV_RUN_W_COUNT; m++)
			if (strlen(pv_run_watch_names[m]) == klen &&
			    memcmp(pv_run_watch_names[m], key, klen) == 0)
				break;
		if (m == PV_RUN_W_COUNT)
			continue; /* a field a newer sampler added */
		if (!number(val, vlen, &s->v[m]))
			return malformed(line, len, "a value that is not a number");
		seen[m] = true;
	}
	for (int m = 0; m < PV_RUN_W_COUNT; m++)
		if (!seen[m]) {
			char why[64];

			snprintf(why, sizeof(why), "no %s field", pv_run_watch_names[m]);
			return malformed(line, len, why);
		}
	return PV_OK;
}

/* ---- summary and CSV (pure) ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int pv_run_watch_summarize(const struct pv_run_watch_sample *s, size_t n,
			   struct pv_run_watch_stat out[PV_RUN_W_COUNT])
{
	double *v;

	memset(out, 0, sizeof(*out) * PV_RUN_W_COUNT);
	if (n == 0)
		return PV_OK;
	if ((v = malloc(n * sizeof(*v))) == NULL)
		return pv_error(PV_EIO, "out of memory");
	for (int m = 0; m < PV_RUN_W_COUNT; m++) {
		double sum = 0;

		for (size_t i = 0; i < n; i++) {
			v[i] = s[i].v[m];
			sum += v[i];
		}
		qsort(v, n, sizeof(*v), cmp_double);
		out[m].mean = sum / (double)n;
		/* nearest rank: the smallest value with at least 95% of the samples at or below */
		out[m].p95 = v[(size_t)ceil(0.95 * (double)n) - 1];
		out[m].max = v[n - 1];
	}
	free(v);
	return PV_OK;
}

int pv_run_watch_csv(const struct pv_run_watch_sample *s, size_t n, double t0, double measure_from,
		     struct pv_buf *out)
{
	char ifs[PV_RUN_WATCH_IFS][16];
	unsigned nifs = 0;

	/* the interfaces, in the order first seen */
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < s[i].nifs; j++) {
			unsigned k = 0;

			while (k < nifs && strcmp(ifs[k], s[i].ifs[j].name) != 0)
				k++;
			if (k == nifs && nifs < PV_RUN_WATCH_IFS)
				memcpy(ifs[nifs++], s[i].ifs[j].name, sizeof(ifs[0]));
		}
	pv_buf_addstr(out, "seconds,phase");
	for (int m = 0; m < PV_RUN_W_COUNT; m++)
		pv_buf_addf(out, ",%s", pv_run_watch_names[m]);
	for (unsigned k = 0; k < nifs; k++)
		pv_buf_addf(out, ",rx_%s,tx_%s", ifs[k], ifs[k]);
	pv_buf_addstr(out, "\n");
	for (size_t i = 0; i < n; i++) {
		pv_buf_addf(out, "%.1f,%s", s[i].t - t0,
			    s[i].t < measure_from ? "warmup" : "measure");
		for (int m = 0; m < PV_RUN_W_COUNT; m++)
			pv_buf_addf(out, m == PV_RUN_W_SELF ? ",%.2f" : ",%.1f", s[i].v[m]);
		for (unsigned k = 0; k < nifs; k++) {
			unsigned j = 0;

			while (j < s[i].nifs && strcmp(s[i].ifs[j].name, ifs[k]) != 0)
				j++;
			if (j < s[i].nifs)
				pv_buf_addf(out, ",%.1f,%.1f", s[i].ifs[j].rx, s[i].ifs[j].tx);
			else
				pv_buf_addstr(out, ",,");
		}
		pv_buf_addstr(out, "\n");
	}
	return pv_buf_failed(out) ? pv_error(PV_EIO, "out of memory") : PV_OK;
}

/* One interface's mean and max rates over the samples that have it. */
static struct pv_json *if_json(const struct pv_run_watch_sample *s, size_t n, const char *name)
{
	struct pv_json *f = pv_json_object();
	double rx = 0, tx = 0, rxm = 0, txm = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < s[i].nifs; j++)
			if (strcmp(s[i].ifs[j].name, name) == 0) {
				const struct pv_run_watch_if *w = &s[i].ifs[j];

				rx += w->rx;
				tx += w->tx;
				rxm = w->rx > rxm ? w->rx : rxm;
				txm = w->tx > txm ? w->tx : txm;
				k++;
			}
	pv_json_real(f, "rx_mean", k ? rx / (double)k : 0);
	pv_json_real(f, "rx_max", rxm);
	pv_json_real(f, "tx_mean", k ? tx / (double)k : 0);
	pv_json_real(f, "tx_max", txm);
	return f;
}

int pv_run_watch_json(const struct pv_run_watch_sample *s, size_t n, int interval,
		      const struct pv_run_watch_stat stat[PV_RUN_W_COUNT], char **out)
{
	struct pv_json *o = pv_json_object(), *m;

	pv_json_int(o, "samples", (long long)n);
	pv_json_int(o, "interval", interval);
	for (int i = 0; i < PV_RUN_W_COUNT; i++) {
		m = pv_json_object();
		pv_json_real(m, "mean", stat[i].mean);
		pv_json_real(m, "p95", stat[i].p95);
		pv_json_real(m, "max", stat[i].max);
		pv_json_set(o, pv_run_watch_names[i], m);
	}
	m = pv_json_object();
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < s[i].nifs; j++)
			if (!pv_json_get(m, s[i].ifs[j].name))
				pv_json_set(m, s[i].ifs[j].name,
					    if_json(s + i, n - i, s[i].ifs[j].name));
	pv_json_set(o, "interfaces", m);
	*out = pv_json_pretty(o);
	pv_json_free(o);
	return *out ? PV_OK : pv_error(PV_EIO, "out of memory");
}

/* ---- the running watch ---- */

struct pv_run_watch {
	struct pv_remote *rem;
	char *cmd;
	int interval;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, ended, stopping;
	struct pv_run_watch_sample *s;
	size_t n, cap;
	int code; /* a failure while it ran */
	char msg[512];
	char what[16]; /* "server", "DC" */
};

static void failed(struct pv_run_watch *w, int code)
{
	if (w->code == PV_OK) {
		w->code = code;
		snprintf(w->msg, sizeof(w->msg), "%s", pv_errmsg());
	}
}

static int grow(struct pv_run_watch *w)
{
	size_t cap = w->cap ? 2 * w->cap : 256;
	struct pv_run_watch_sample *s;

	if (cap > (size_t)1 << 24 || (s = realloc(w->s, cap * sizeof(*s))) == NULL)
		return -1;
	w->s = s;
	w->cap = cap;
	return 0;
}

static int on_line(void *arg, const char *line, size_t len)
{
	struct pv_run_watch *w = arg;
	struct pv_run_watch_sample s;
	int r;

	memset(&s, 0, sizeof(s));
	s.t = pv_now();
	r = pv_run_watch_parse(line, len, &s);
	pthread_mutex_lock(&w->lock);
	if (r == 1) {
		w->started = true;
		pthread_cond_broadcast(&w->cond);
	} else if (r != PV_OK) {
		failed(w, r);
	} else if (w->n < w->cap || grow(w) == 0) {
		w->s[w->n++] = s;
	} else {
		failed(w, pv_error(PV_EIO, "out of memory keeping the %s's samples", w->what));
	}
	pthread_mutex_unlock(&w->lock);
	return r < 0 || r > 1 ? r : 0;
}

static bool should_stop(void *arg)
{
	struct pv_run_watch *w = arg;
	bool stop;

	pthread_mutex_lock(&w->lock);
	stop = w->stopping;
	pthread_mutex_unlock(&w->lock);
	return stop;
}

static void *run(void *arg)
{
	struct pv_run_watch *w = arg;
	struct pv_remote_stream_ops ops = {on_line, should_stop, w};
	struct pv_buf err = PV_BUF_INIT;
	int status = 0, r;

	r = pv_remote_stream(w->rem, w->cmd, NULL, 0, &ops, &err, &status, 0);
	pthread_mutex_lock(&w->lock);
	if (r != PV_OK)
		failed(w, r);
	else if (!w->stopping)
		failed(w, pv_error(PV_EREMOTE, "the %s's sampler ended on its own (status %d)%s%s",
				   w->what, status, err.len ? ": " : "", err.len ? err.data : ""));
	w->ended = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pv_buf_release(&err, 0);
	return NULL;
}

static void release(struct pv_run_watch *w)
{
	pv_remote_free(w->rem);
	free(w->cmd);
	free(w->s);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

int pv_run_watch_start(const struct pv_playbook_host *host, struct pv_remote *rem, const char *what,
		       int interval, bool procs, struct pv_run_watch **out)
{
	struct pv_run_watch *w;
	struct pv_buf cmd = PV_BUF_INIT;
	struct timespec until;
	int r, wait = host->ssh.timeout > 0 ? 3 * host->ssh.timeout : 30;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		pv_remote_free(rem);
		return pv_error(PV_EIO, "out of memory");
	}
	w->rem = rem; /* freed with w from here on */
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->interval = interval;
	snprintf(w->what, sizeof(w->what), "%s", what);
	{
		char iv[16];

		snprintf(iv, sizeof(iv), "%d", interval);
		pv_remote_var(&cmd, "prog", pv_run_watch_pl);
		pv_remote_var(&cmd, "interval", iv);
		pv_remote_var(&cmd, "procs", procs ? "procs" : "");
		pv_buf_addstr(&cmd, pv_run_watch_sh);
	}
	if (pv_buf_failed(&cmd)) {
		pv_buf_release(&cmd, 0);
		release(w);
		return pv_error(PV_EIO, "out of memory");
	}
	w->cmd = cmd.data;
	if (!w->rem && (r = pv_env_host_connect(host, &w->rem)) != PV_OK) {
		release(w);
		return pv_error_prefix(r, "%s watch", what);
	}
	if (pthread_create(&w->thread, NULL, run, w) != 0) {
		release(w);
		return pv_error(PV_EIO, "%s watch: cannot start a thread", what);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait;
	pthread_mutex_lock(&w->lock);
	while (!w->started && !w->ended && pthread_cond_timedwait(&w->cond, &w->lock, &until) == 0)
		;
	if (!w->started) {
		w->stopping = true;
		if (w->code == PV_OK)
			failed(w, pv_error(PV_EREMOTE,
					   "the %s's sampler did not start within %d s (it needs "
					   "perl on the %s)",
					   what, wait, what));
	}
	pthread_mutex_unlock(&w->lock);
	if (!w->started) {
		pthread_join(w->thread, NULL);
		r = pv_error(w->code, "%s watch: %s", what, w->msg);
		release(w);
		return r;
	}
	pv_log(PV_LOG_INFO, "%s watch: sampling '%s' every %d s", what, host->name, interval);
	*out = w;
	return PV_OK;
}

int pv_run_watch_window(struct pv_run_watch *w, double from, double to,
			struct pv_run_watch_sample **s, size_t *n)
{
	size_t a, b;
	int r;

	*s = NULL;
	*n = 0;
	pthread_mutex_lock(&w->lock);
	for (a = 0; a < w->n && w->s[a].t < from; a++)
		;
	for (b = a; b < w->n && w->s[b].t <= to; b++)
		;
	if (b > a && (*s = malloc((b - a) * sizeof(**s))) != NULL) {
		memcpy(*s, w->s + a, (b - a) * sizeof(**s));
		*n = b - a;
	}
	r = b > a && !*s       ? pv_error(PV_EIO, "out of memory")
	    : w->code != PV_OK ? pv_error(w->code, "%s watch: %s", w->what, w->msg)
			       : PV_OK;
	pthread_mutex_unlock(&w->lock);
	return r;
}

int pv_run_watch_stop(struct pv_run_watch *w)
{
	int r;

	if (!w)
		return PV_OK;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	r = w->code != PV_OK ? pv_error(w->code, "%s watch: %s", w->what, w->msg) : PV_OK;
	release(w);
	return r;
}
