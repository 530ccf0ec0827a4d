/* run/drain.c: wait until the file server has drained: one SSH session, one remote command
 * per poll (run/scripts/drain.sh for the built-in probes, the playbook's command for the
 * command probe), its output parsed into a depth, polls spaced by the back-off rule. */
#include "env/target.h"
#include "run/drain.h"

#include "remote/quote.h"
#include "remote/remote.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/progress.h"

#include "samba/samba.h"
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

extern const char pv_run_drain_sh[];

#define BACKOFF_FACTOR 1.5
#define BACKOFF_MAX    8   /* times the interval */
#define NAP_SLICE      0.1 /* seconds between looks at env->stop while waiting */
#define QUOTE_MAX      80  /* characters of a probe's output quoted in a message */

static const char *const probe_names[] = {"command", "writeback", "inflight", "smb"};

const char *pv_run_drain_probe_name(enum pv_playbook_probe_kind k)
{
	return (unsigned)k < sizeof(probe_names) / sizeof(probe_names[0]) ? probe_names[k] : "?";
}

/* ---- messages ---------------------------------------------------------------------------- */

void pv_run_drain_quote(const char *text, size_t len, size_t max, char *out, size_t outlen)
{
	size_t o = 0, kept = 0;

	if (outlen == 0)
		return;
	out[0] = '\0';
	if (!text)
		return;
	while (len && isspace((unsigned char)*text))
		text++, len--;
	while (len && isspace((unsigned char)text[len - 1]))
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		char e[8];

		if (kept == max) {
			snprintf(e, sizeof(e), "...");
		} else if (c == '\n') {
			snprintf(e, sizeof(e), "\\n");
		} else if (c == '\t') {
			snprintf(e, sizeof(e), "\\t");
		} else if (c == '\r') {
			snprintf(e, sizeof(e), "\\r");
		} else if (c == '\'' || c == '\\') {
			snprintf(e, sizeof(e), "\\%c", c);
		} else if (c < 0x20 || c >= 0x7f) {
			snprintf(e, sizeof(e), "\\x%02x", c);
		} else {
			e[0] = (char)c;
			e[1] = '\0';
		}
		if (o + strlen(e) + 1 > outlen)
			break;
		memcpy(out + o, e, strlen(e) + 1);
		o += strlen(e);
		if (kept++ == max)
			break;
	}
}

/* "printed 'hello', which ..." or "printed nothing, ..." */
static int bad_output(const char *text, size_t len, const char *what)
{
	char q[QUOTE_MAX * 4 + 8];

	pv_run_drain_quote(text, len, QUOTE_MAX, q, sizeof(q));
	if (!q[0])
		return pv_error(PV_EREMOTE, "printed nothing; expected %s", what);
	return pv_error(PV_EREMOTE, "printed '%s', which is not %s", q, what);
}

/* ---- parsing ----------------------------------------------------------------------------- */

/* digits ["." digits] at p (no sign): value rounded up into *v; the end in *end. */
static bool number_at(const char *p, const char *lim, long *v, const char **end)
{
	unsigned long long n = 0;
	bool frac = false;

	if (p >= lim || !isdigit((unsigned char)*p))
		return false;
	for (; p < lim && isdigit((unsigned char)*p); p++) {
		if (n > (unsigned long long)LONG_MAX / 10)
			return false;
		n = n * 10 + (unsigned)(*p - '0');
		if (n > (unsigned long long)LONG_MAX)
			return false;
	}
	if (p < lim && *p == '.') {
		if (p + 1 >= lim || !isdigit((unsigned char)p[1]))
			return false;
		for (p++; p < lim && isdigit((unsigned char)*p); p++)
			frac |= *p != '0';
	}
	if (frac) {
		if (n == (unsigned long long)LONG_MAX)
			return false;
		n++;
	}
	*v = (long)n;
	*end = p;
	return true;
}

int pv_run_drain_parse_number(const char *text, size_t len, long *depth)
{
	const char *p = text, *lim = text + len, *end;
	long v;

	while (p < lim && isspace((unsigned char)*p))
		p++;
	if (!number_at(p, lim, &v, &end))
		return bad_output(text, len,
				  "a queue depth: one integer or decimal number, "
				  "such as 120 (0 or more, below 2^63)");
	while (end < lim && isspace((unsigned char)*end))
		end++;
	if (end != lim)
		return bad_output(text, len,
				  "a queue depth: one integer or decimal number, "
				  "such as 120, and nothing else");
	*depth = v;
	return PV_OK;
}

/* The next line of [*p, lim) without its newline; false at the end. */
static bool next_line(const char **p, const char *lim, const char **ls, const char **le)
{
	const char *nl;

	if (*p >= lim)
		return false;
	*ls = *p;
	nl = memchr(*p, '\n', (size_t)(lim - *p));
	*le = nl ? nl : lim;
	*p = nl ? nl + 1 : lim;
	return true;
}

static const char *skip_blank(const char *p, const char *lim)
{
	while (p < lim && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

int pv_run_drain_parse_writeback(const char *text, size_t len, long *kb)
{
	static const char *const keys[] = {"Dirty:", "Writeback:"};
	const char *p = text, *lim = text + len, *ls, *le, *end;
	long v[2] = {0, 0};
	bool seen[2] = {false, false};

	while (next_line(&p, lim, &ls, &le)) {
		for (int k = 0; k < 2; k++) {
			size_t kl = strlen(keys[k]);
			const char *q;

			if ((size_t)(le - ls) < kl || memcmp(ls, keys[k], kl) != 0)
				continue;
			q = skip_blank(ls + kl, le);
			if (!number_at(q, le, &v[k], &end) || (end = skip_blank(end, le)) == le ||
			    (size_t)(le - end) < 2 || memcmp(end, "kB", 2) != 0 ||
			    skip_blank(end + 2, le) != le)
				return bad_output(ls, (size_t)(le - ls),
						  "a /proc/meminfo line such as 'Dirty: 120 kB'");
			seen[k] = true;
		}
	}
	if (!seen[0] || !seen[1])
		return bad_output(text, len,
				  "the Dirty: and Writeback: lines of /proc/meminfo (is the "
				  "server Linux?)");
	if (v[0] > LONG_MAX - v[1])
		return bad_output(text, len, "a plausible amount of dirty memory");
	*kb = v[0] + v[1];
	return PV_OK;
}

int pv_run_drain_parse_inflight(const char *text, size_t len, long *n)
{
	const char *p = text, *lim = text + len, *ls, *le, *q;
	long sum = 0, a, b;
	unsigned lines = 0;

	while (next_line(&p, lim, &ls, &le)) {
		q = skip_blank(ls, le);
		if (q == le)
			continue; /* an empty line */
		if (!number_at(q, le, &a, &q) || q == skip_blank(q, le) ||
		    !number_at(skip_blank(q, le), le, &b, &q) || skip_blank(q, le) != le)
			return bad_output(ls, (size_t)(le - ls),
					  "a /sys/block/<device>/inflight line: two numbers, the "
					  "reads and the writes in flight");
		if (a > LONG_MAX - sum || b > LONG_MAX - sum - a)
			return bad_output(ls, (size_t)(le - ls), "a plausible number of requests");
		sum += a + b;
		lines++;
	}
	if (lines == 0)
		return pv_error(PV_EREMOTE,
				"found no /sys/block/*/inflight: the inflight probe needs "
				"a Linux server with block devices; use another probe");
	*n = sum;
	return PV_OK;
}

/* ---- this lab's users ---------------------------------------------------------------------- */

/* s matches template t (placeholders {client}, {server}, {n}), letters without case. */
static bool match_from(const char *t, const char *s, const char *client, const char *server)
{
	while (*t) {
		if (*t == '{') {
			const char *val = NULL;
			size_t vl;

			if (strncmp(t, "{n}", 3) == 0) {
				size_t run = 0;

				if (*s < '1' || *s > '9')
					return false;
				while (isdigit((unsigned char)s[run]))
					run++;
				/* the number may be followed by digits of the template */
				for (size_t k = run; k > 0; k--)
					if (match_from(t + 3, s + k, client, server))
						return true;
				return false;
			}
			if (strncmp(t, "{client}", 8) == 0) {
				val = client;
				t += 8;
			} else if (strncmp(t, "{server}", 8) == 0) {
				val = server;
				t += 8;
			} else {
				return false; /* {k} or worse: not a user name template */
			}
			if (!val)
				return false;
			vl = strlen(val);
			if (strncasecmp(s, val, vl) != 0)
				return false;
			s += vl;
			continue;
		}
		if (tolower((unsigned char)*t) != tolower((unsigned char)*s))
			return false;
		t++;
		s++;
	}
	return *s == '\0';
}

bool pv_run_drain_lab_user(const struct pv_playbook *pb, const char *username)
{
	const char *name = username, *tmpl = pb->users.name_template;
	const char *server = pb->has_server ? pb->server.host.name : NULL;

	if (!username || !tmpl)
		return false;
	for (const char *p = username; *p; p++)
		if (*p == '\\' || *p == '/' || *p == '+')
			name = p + 1;
	if (!*name)
		return false;
	for (size_t i = 0; i < pb->nclients; i++)
		if (match_from(tmpl, name, pb->clients[i].name, server))
			return true;
	return false;
}

static bool lab_user(void *arg, const char *user)
{
	return pv_run_drain_lab_user(arg, user);
}

int pv_run_drain_parse_smb(const struct pv_playbook *pb, const char *text, size_t len, long *n)
{
	switch (pv_samba_status_count(text, len, lab_user, (void *)pb, n)) {
	case PV_SAMBA_STATUS_OK:
		return PV_OK;
	case PV_SAMBA_STATUS_NOT_JSON:
		return bad_output(text, len, "the JSON of 'smbstatus --json'");
	default:
		return bad_output(text, len,
				  "what 'smbstatus --json' prints (an object with 'sessions' and "
				  "'open_files')");
	}
}

int pv_run_drain_parse(const struct pv_playbook *pb, enum pv_playbook_probe_kind k,
		       const char *text, size_t len, long *depth)
{
	switch (k) {
	case PV_PLAYBOOK_PROBE_WRITEBACK:
		return pv_run_drain_parse_writeback(text, len, depth);
	case PV_PLAYBOOK_PROBE_INFLIGHT:
		return pv_run_drain_parse_inflight(text, len, depth);
	case PV_PLAYBOOK_PROBE_SMB:
		return pv_run_drain_parse_smb(pb, text, len, depth);
	case PV_PLAYBOOK_PROBE_COMMAND:
		return pv_run_drain_parse_number(text, len, depth);
	}
	return pv_error(PV_EBUG, "unknown drain probe %d", (int)k);
}

/* ---- timing ------------------------------------------------------------------------------ */

double pv_run_drain_backoff(int interval, double cur, bool have_prev, long prev, long depth,
			    long threshold)
{
	double base = interval > 0 ? interval : 1, next;

	if (!have_prev || depth <= threshold || depth < prev)
		return base;
	next = (cur > base ? cur : base) * BACKOFF_FACTOR;
	return next < base * BACKOFF_MAX ? next : base * BACKOFF_MAX;
}

void pv_run_drain_rate_add(struct pv_run_drain_rate *r, double t, long depth)
{
	if (r->n > 0 && t > r->t) {
		double inst = ((double)r->depth - (double)depth) / (t - r->t);

		r->rate = r->n >= 2 ? 0.5 * r->rate + 0.5 * inst : inst;
	}
	if (r->n == 0 || t > r->t) {
		r->t = t;
		r->depth = depth;
		r->n++;
	}
}

double pv_run_drain_eta(const struct pv_run_drain_rate *r, long depth, long threshold)
{
	if (depth <= threshold)
		return 0;
	if (r->n < 2 || !(r->rate > 0))
		return -1;
	return ((double)depth - (double)threshold) / r->rate;
}

/* "40", "2.5", "0.25": a rate in few characters */
static void rate_text(char *out, size_t len, double v)
{
	v = fabs(v);
	snprintf(out, len, v >= 10 ? "%.0f" : v >= 1 ? "%.1f" : "%.2f", v);
}

static void secs_text(char *out, size_t len, double s)
{
	if (s < 100)
		snprintf(out, len, "%.0f s", ceil(s));
	else if (s < 6000)
		snprintf(out, len, "%.0f min %02.0f s", floor(s / 60), fmod(floor(s), 60));
	else
		snprintf(out, len, "%.0f h %02.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

void pv_run_drain_detail(char *out, size_t len, const char *metric, long depth, long threshold,
			 const struct pv_run_drain_rate *r, double settled, int settle, double next)
{
	char rt[32], eta[32];
	double e;

	if (depth <= threshold) {
		if (settle > 0)
			snprintf(out, len, "%s %ld, settling %.0f/%d s", metric, depth,
				 floor(settled < settle ? settled : settle), settle);
		else
			snprintf(out, len, "%s %ld, drained", metric, depth);
		return;
	}
	if (r->n >= 2 && r->rate > 0) {
		rate_text(rt, sizeof(rt), r->rate);
		e = pv_run_drain_eta(r, depth, threshold);
		secs_text(eta, sizeof(eta), e);
		snprintf(out, len, "%s %ld, draining %s/s, ETA %s", metric, depth, rt, eta);
	} else if (r->n >= 2 && r->rate < 0) {
		rate_text(rt, sizeof(rt), r->rate);
		snprintf(out, len, "%s %ld, rising %s/s, next poll in %.0f s", metric, depth, rt,
			 ceil(next));
	} else {
		snprintf(out, len, "%s %ld, not falling, next poll in %.0f s", metric, depth,
			 ceil(next));
	}
}

/* ---- configuration ------------------------------------------------------------------------- */

int pv_run_drain_check(const struct pv_playbook *pb, const struct pv_playbook_drain *d)
{
	if (!pb->has_server)
		return pv_error(PV_ECONFIG,
				"the playbook has no server: wait polls the file server; add a "
				"server: section (name, address)");
	if ((unsigned)d->probe > PV_PLAYBOOK_PROBE_SMB)
		return pv_error(PV_ECONFIG,
				"unknown drain probe %d; expected drain.probe (--probe) command, "
				"writeback, inflight or smb",
				(int)d->probe);
	if (d->probe == PV_PLAYBOOK_PROBE_COMMAND && (!d->command || !d->command[0]))
		return pv_error(
			PV_ECONFIG,
			"no drain probe configured: pass --probe writeback, inflight or smb, "
			"or --probe-command CMD (a command printing the queue depth), or set "
			"drain.probe or drain.command in the playbook");
	if (d->probe == PV_PLAYBOOK_PROBE_SMB && pb->nclients == 0)
		return pv_error(
			PV_ECONFIG,
			"the smb probe counts the sessions of this lab's users, named from "
			"users.name_template and the clients, but the playbook has no clients; "
			"add them, or use another probe");
	if (d->interval < 1 || d->interval > 3600)
		return pv_error(PV_ECONFIG,
				"drain.interval (--interval) is %d; expected 1 to 3600 seconds",
				d->interval);
	if (d->settle < 0 || d->settle > 86400)
		return pv_error(PV_ECONFIG,
				"drain.settle (--settle) is %d; expected 0 to 86400 seconds",
				d->settle);
	if (d->timeout < 1)
		return pv_error(PV_ECONFIG,
				"drain.timeout (--timeout) is %d; expected 1 or more "
				"seconds",
				d->timeout);
	if (d->threshold < 0)
		return pv_error(PV_ECONFIG,
				"drain.threshold (--threshold) is %ld; expected 0 or more",
				d->threshold);
	return PV_OK;
}

static const char *metric_of(const struct pv_playbook_drain *d)
{
	static const char *const defaults[] = {"req_queue", "dirty+writeback kB", "I/O in flight",
					       "SMB opens and sessions"};

	if (d->metric && d->metric[0])
		return d->metric;
	return (unsigned)d->probe <= PV_PLAYBOOK_PROBE_SMB ? defaults[d->probe] : "depth";
}

/* The command's first word (with "..." when more follows): a probe command may carry a
 * token or a password, so messages never show it whole. */
static void command_word(const char *cmd, char *out, size_t len)
{
	size_t n;

	while (*cmd == ' ' || *cmd == '\t')
		cmd++;
	n = strcspn(cmd, " \t\r\n");
	snprintf(out, len, "%.*s%s", (int)(n > 64 ? 64 : n), cmd, cmd[n] ? " ..." : "");
}

static void probe_text(const struct pv_playbook_drain *d, char *out, size_t len)
{
	char w[80];

	switch (d->probe) {
	case PV_PLAYBOOK_PROBE_WRITEBACK:
		snprintf(out, len, "Dirty + Writeback of /proc/meminfo");
		break;
	case PV_PLAYBOOK_PROBE_INFLIGHT:
		snprintf(out, len, "the reads and writes in flight of /sys/block/*/inflight");
		break;
	case PV_PLAYBOOK_PROBE_SMB:
		snprintf(out, len,
			 "this lab's users' sessions and open files in 'smbstatus --json'");
		break;
	default:
		command_word(d->command ? d->command : "", w, sizeof(w));
		snprintf(out, len, "the output of drain.command '%s'", w);
		break;
	}
}

void pv_run_drain_plan(const struct pv_playbook *pb, const struct pv_playbook_drain *d,
		       struct pv_env_plan *plan)
{
	char what[160];

	probe_text(d, what, sizeof(what));
	pv_env_plan_add(plan, "poll %s on %s: %s", metric_of(d),
			pb->has_server ? pb->server.host.name : "(no server)", what);
	pv_env_plan_add(
		plan,
		"poll every %d s while it falls (backing off to %d s while it does not), until "
		"it is at most %ld for %d s, giving up after %d s",
		d->interval, d->interval * BACKOFF_MAX, d->threshold, d->settle, d->timeout);
}

/* ---- the wait ---------------------------------------------------------------------------- */

struct waiter {
	const struct pv_env *env;
	const struct pv_playbook_drain *d;
	struct pv_run_drain_result *res;
	const char *host;
	struct pv_remote *rem;
	struct pv_buf cmd;
	char probe[160]; /* for messages: "probe writeback", "drain.command 'nasq ...'" */
	double t0, deadline;
};

/* Sleep secs, looking at env->stop every NAP_SLICE. */
static int nap(const struct waiter *w, double secs)
{
	double end = pv_now() + secs;

	for (;;) {
		double left = end - pv_now(), s;
		struct timespec ts;

		if (pv_env_stopped(w->env))
			return PV_ESTOPPED;
		if (left <= 0)
			return PV_OK;
		s = left < NAP_SLICE ? left : NAP_SLICE;
		ts.tv_sec = (time_t)s;
		ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL); /* EINTR (the signal itself) is fine: we look again */
	}
}

static int stopped(const struct waiter *w)
{
	const struct pv_run_drain_result *res = w->res;

	if (res->polls == 0)
		return pv_error(PV_ESTOPPED,
				"stopped (Ctrl-C or SIGTERM) while waiting for %s on %s to drain, "
				"before the first reading",
				res->metric, w->host);
	return pv_error(PV_ESTOPPED,
			"stopped (Ctrl-C or SIGTERM) while waiting for %s on %s to drain: the last "
			"depth was %ld (threshold %ld) after %.1f s, %u poll%s",
			res->metric, w->host, res->last, w->d->threshold, res->seconds, res->polls,
			res->polls == 1 ? "" : "s");
}

static int timed_out(const struct waiter *w, double settled, bool no_answer)
{
	const struct pv_run_drain_result *res = w->res;
	const struct pv_playbook_drain *d = w->d;
	char how[256] = "";

	if (no_answer)
		snprintf(how, sizeof(how), "; the last poll (%s) did not answer in time", w->probe);
	if (res->polls == 0)
		return pv_error(PV_ETIMEOUT,
				"%s on %s: no reading within the timeout of %d s (%s did not "
				"answer); check the probe by hand on %s, or raise --timeout "
				"(drain.timeout)",
				res->metric, w->host, d->timeout, w->probe, w->host);
	if (res->last <= d->threshold)
		return pv_error(
			PV_ETIMEOUT,
			"%s on %s did not stay drained for the settle time within the "
			"timeout of %d s: the last depth was %ld (threshold %ld), at or below "
			"it for %.0f of %d s (peak %ld, %u polls)%s; raise --timeout "
			"(drain.timeout) or lower --settle (drain.settle)",
			res->metric, w->host, d->timeout, res->last, d->threshold, settled,
			d->settle, res->peak, res->polls, how);
	return pv_error(PV_ETIMEOUT,
			"%s on %s did not drain within the timeout of %d s: the last depth was %ld "
			"(threshold %ld; first %ld, peak %ld, %u polls)%s; raise --timeout "
			"(drain.timeout), raise --threshold (drain.threshold) if %ld is this "
			"server's normal, or find what keeps the queue busy",
			res->metric, w->host, d->timeout, res->last, d->threshold, res->first,
			res->peak, res->polls, how, res->last);
}

/* The remote command of one poll. */
static int build_command(struct waiter *w)
{
	const struct pv_playbook_drain *d = w->d;
	char word[80];

	if (d->probe == PV_PLAYBOOK_PROBE_COMMAND) {
		pv_buf_addstr(&w->cmd, d->command);
		command_word(d->command, word, sizeof(word));
		snprintf(w->probe, sizeof(w->probe), "drain.command '%s'", word);
	} else {
		struct pv_buf script = PV_BUF_INIT;

		pv_remote_var(&script, "probe", pv_run_drain_probe_name(d->probe));
		pv_buf_addstr(&script, pv_run_drain_sh);
		if (pv_buf_failed(&script) || pv_remote_sh_line(&w->cmd, script.data) < 0) {
			pv_buf_release(&script, 0);
			return pv_error(PV_EIO, "out of memory");
		}
		pv_buf_release(&script, 0);
		snprintf(w->probe, sizeof(w->probe), "the %s probe",
			 pv_run_drain_probe_name(d->probe));
	}
	if (pv_buf_failed(&w->cmd))
		return pv_error(PV_EIO, "out of memory");
	return PV_OK;
}

/* Why a probe with a non-zero status failed, from its stderr (else stdout). */
static int probe_failed(const struct waiter *w, int status, const struct pv_buf *out,
			const struct pv_buf *err)
{
	const struct pv_buf *b = err->len ? err : out;
	const char *hint = "";
	char q[QUOTE_MAX * 4 + 8], st[32];
	size_t start = 0, end = b->len;

	/* the last non-empty line says why, usually */
	while (end > 0 && isspace((unsigned char)b->data[end - 1]))
		end--;
	for (size_t i = end; i > 0; i--)
		if (b->data[i - 1] == '\n') {
			start = i;
			break;
		}
	pv_run_drain_quote(b->data ? b->data + start : NULL, end - start, QUOTE_MAX, q, sizeof(q));
	if (w->d->probe == PV_PLAYBOOK_PROBE_SMB)
		hint = status == 127 ? "; the smb probe needs Samba's smbstatus on the server"
				     : "; the smb probe needs 'smbstatus --json' (Samba 4.17 or "
				       "later) and the right to read Samba's state (root)";
	if (status < 0)
		snprintf(st, sizeof(st), "was killed");
	else
		snprintf(st, sizeof(st), "failed (status %d)", status);
	return pv_error(PV_EREMOTE, "%s on %s %s%s%s%s%s", w->probe, w->host, st,
			!q[0]	   ? ""
			: b == err ? ": '"
				   : ", printing '",
			q, q[0] ? "'" : "", hint);
}

static bool stop_asked(void *arg)
{
	const struct waiter *w = arg;

	return pv_env_stopped(w->env);
}

/* One reading: PV_OK with *depth, or why not. A Ctrl-C does not wait for a slow probe: the
 * poll is cut short (the probe itself is asked to end, and left to end on its own where sshd
 * refuses signals, as for root logins). */
static int poll_once(struct waiter *w, long *depth)
{
	struct pv_buf out = PV_BUF_INIT, err = PV_BUF_INIT;
	int status = -1, r, to = w->env->pb->server.host.ssh.timeout * 6;
	double left = w->deadline - pv_now();

	/* a probe never runs past the wait's timeout by more than a second */
	if (to <= 0)
		to = 60;
	if (left < to)
		to = left < 1 ? 1 : (int)ceil(left);
	r = pv_remote_exec_stoppable(w->rem, w->cmd.data, NULL, 0, &out, &err, &status, to,
				     stop_asked, w);
	if (r != PV_OK)
		goto out;
	if (err.len)
		pv_log(PV_LOG_DEBUG, "%s: %s: stderr: %.*s", w->host, w->probe,
		       (int)(err.len > 500 ? 500 : err.len), err.data);
	if (status != 0) {
		r = probe_failed(w, status, &out, &err);
		goto out;
	}
	r = pv_run_drain_parse(w->env->pb, w->d->probe, out.data ? out.data : "", out.len, depth);
	if (r != PV_OK) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", pv_errmsg());
		r = pv_error(r, "%s on %s %s%s", w->probe, w->host, msg,
			     w->d->probe == PV_PLAYBOOK_PROBE_COMMAND
				     ? "; fix drain.command (--probe-command) so that it prints "
				       "the depth alone"
				     : "");
	}
out:
	pv_buf_release(&out, 0);
	pv_buf_release(&err, 0);
	return r;
}

static void note(struct pv_run_drain_result *res, long depth, double t)
{
	if (res->polls == 0)
		res->first = res->peak = depth;
	if (depth > res->peak)
		res->peak = depth;
	res->last = depth;
	res->polls++;
	res->seconds = t;
}

static int loop(struct waiter *w)
{
	const struct pv_playbook_drain *d = w->d;
	struct pv_run_drain_result *res = w->res;
	struct pv_run_drain_rate rate;
	struct pv_progress p;
	double wait_s = 0, below_since = -1, settled = 0;
	long depth = 0, prev = 0;
	bool failed = false; /* the poll before failed */
	int r;

	memset(&rate, 0, sizeof(rate));
	pv_progress_start(&p, "wait", res->metric, 0);
	for (;;) {
		double now;

		r = poll_once(w, &depth);
		now = pv_now();
		if (pv_env_stopped(w->env)) { /* the signal may have cut the poll short too */
			res->seconds = now - w->t0;
			r = stopped(w);
			break;
		}
		/* A probe that has read before and fails once is asked again after the interval
		 * (Samba 4.17's smbstatus --json can PANIC on an open whose lease changes as it
		 * walks them); one that never read, or fails twice in a row, ends the wait. */
		if (r == PV_EREMOTE && res->polls > 0 && !failed &&
		    now + d->interval < w->deadline) {
			pv_log(PV_LOG_WARN, "%s; asking again in %d s", pv_errmsg(), d->interval);
			failed = true;
			if (nap(w, d->interval) != PV_OK) {
				res->seconds = pv_now() - w->t0;
				r = stopped(w);
				break;
			}
			continue;
		}
		if (r != PV_OK) {
			if (now >= w->deadline && r == PV_EREMOTE)
				r = timed_out(w, settled, true);
			break;
		}
		failed = false;
		note(res, depth, now - w->t0);
		pv_run_drain_rate_add(&rate, now, depth);
		wait_s = pv_run_drain_backoff(d->interval, wait_s, res->polls > 1, prev, depth,
					      d->threshold);
		prev = depth;
		if (depth <= d->threshold) {
			if (below_since < 0)
				below_since = now;
			settled = now - below_since;
			if (settled >= d->settle) {
				res->drained = true;
				r = PV_OK;
				break;
			}
			/* the settle ends on time */
			if (wait_s > d->settle - settled)
				wait_s = d->settle - settled;
		} else {
			below_since = -1;
			settled = 0;
		}
		pv_log(PV_LOG_DEBUG, "%s: poll %u: %s %ld (%.1f s), next in %.1f s", w->host,
		       res->polls, res->metric, depth, now - w->t0, wait_s);
		if (now >= w->deadline) {
			r = timed_out(w, settled, false);
			break;
		}
		{
			char line[sizeof(p.detail)];

			pv_run_drain_detail(line, sizeof(line), res->metric, depth, d->threshold,
					    &rate, settled, d->settle, wait_s);
			pv_progress_detail(&p, "%s", line);
		}
		/* the last poll is at the timeout */
		if (now + wait_s > w->deadline)
			wait_s = w->deadline - now;
		if (nap(w, wait_s) != PV_OK) {
			res->seconds = pv_now() - w->t0;
			r = stopped(w);
			break;
		}
	}
	pv_progress_end(&p);
	return r;
}

int pv_run_drain_wait(const struct pv_env *env, const struct pv_playbook_drain *d,
		      struct pv_run_drain_result *res)
{
	const struct pv_playbook *pb = env->pb;
	struct waiter w;
	int r;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	snprintf(res->metric, sizeof(res->metric), "%s", metric_of(d));
	if ((r = pv_run_drain_check(pb, d)) != PV_OK)
		return r;
	w.env = env;
	w.d = d;
	w.res = res;
	w.host = pb->server.host.name;
	if ((r = build_command(&w)) != PV_OK || env->dry_run)
		goto out;
	pv_log(PV_LOG_INFO,
	       "%s: waiting until %s is at most %ld for %d s (%s, every %d s, at "
	       "most %d s)",
	       w.host, res->metric, d->threshold, d->settle, w.probe, d->interval, d->timeout);
	w.t0 = pv_now();
	w.deadline = w.t0 + d->timeout;
	r = pv_env_host_connect(&pb->server.host, &w.rem);
	if (pv_env_stopped(env)) {
		r = stopped(&w);
		goto out;
	}
	if (r != PV_OK)
		goto out;
	r = loop(&w);
	if (r == PV_OK)
		pv_log(PV_LOG_DEBUG, "%s: %s drained to %ld in %.1f s, %u polls", w.host,
		       res->metric, res->last, res->seconds, res->polls);
out:
	pv_remote_free(w.rem);
	pv_buf_release(&w.cmd, 0);
	return r;
}
