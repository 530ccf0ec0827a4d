/* run/lines.c: the built-in driver's client lines, read and merged (see lines.h). */
#include "run/lines.h"

#include "load/line.h"
#include "run/caps.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A status: -1, or digits up to 65535 (no leading 0), and nothing after. */
static bool status_of(const char *p, const char *end, int *v)
{
	long n = 0;
	bool neg = p < end && *p == '-';

	if (neg)
		p++;
	if (p == end || end - p > 5 || (*p == '0' && end - p > 1)) /* as perl prints it */
		return false;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return false;
		n = n * 10 + (*p - '0');
	}
	if (neg ? n != 1 : n > 65535)
		return false;
	*v = neg ? -1 : (int)n;
	return true;
}

void pv_run_wrap_line(const char *line, size_t len, struct pv_run_wrap_line *out)
{
	static const struct {
		const char *word;
		enum pv_run_wrap kind;
	} words[] = {{"pv-started ", PV_RUN_WRAP_STARTED},
		     {"pv-exit ", PV_RUN_WRAP_EXIT},
		     {"pv-stopped ", PV_RUN_WRAP_STOPPED},
		     {"pv-error ", PV_RUN_WRAP_ERROR}};
	const char *end = line + len;

	memset(out, 0, sizeof(*out));
	if (len == 8 && !memcmp(line, "pv-alive", 8)) {
		out->kind = PV_RUN_WRAP_ALIVE;
		return;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t wl = strlen(words[i].word);
		const char *v = line + wl;

		if (len < wl || memcmp(line, words[i].word, wl))
			continue;
		switch (words[i].kind) {
		case PV_RUN_WRAP_EXIT:
		case PV_RUN_WRAP_STOPPED:
			if (!status_of(v, end, &out->status))
				return;
			break;
		case PV_RUN_WRAP_ERROR:
			out->text = v;
			out->textlen = (size_t)(end - v) < PV_RUN_WRAP_TEXT_MAX
					       ? (size_t)(end - v)
					       : PV_RUN_WRAP_TEXT_MAX;
			break;
		default:
			break;
		}
		out->kind = words[i].kind;
		return;
	}
}

int pv_run_install_answer(const char *out, size_t len, bool finish)
{
	/* one line, with or without its line break */
	if (len && out[len - 1] == '\n')
		len--;
	if (finish && len == 9 && !memcmp(out, "installed", 9))
		return 1;
	if (!finish && len == 7 && !memcmp(out, "present", 7))
		return 1;
	if (!finish && len == 6 && !memcmp(out, "absent", 6))
		return 0;
	pv_error(PV_EREMOTE, "the install script answered %zu bytes that are not '%s'", len,
		 finish ? "installed" : "present' or 'absent");
	return -1;
}

size_t pv_run_client_lines_max(const struct pv_run_client *c)
{
	return c->max_iv + PV_RUN_OTHER_LINES_MAX;
}

/* "ready {...}": every user has logged on or failed (read by load/line.h); once only. */
static int ready(struct pv_run_client *c, const char *line, size_t len)
{
	struct pv_load_ready *rd;

	if (c->ready) {
		pv_error(PV_EREMOTE, "provision load said it was ready twice");
		return -1;
	}
	rd = malloc(sizeof(*rd));

	if (!rd) {
		pv_error(PV_EIO, "out of memory");
		return -1;
	}
	if (pv_load_ready_decode(line, len, rd) != PV_OK) {
		free(rd);
		return -1;
	}
	c->connected = rd->connected;
	c->failed = rd->failed;
	snprintf(c->ready_error, sizeof(c->ready_error), "%s", rd->first);
	snprintf(c->spoke, sizeof(c->spoke), "%s", rd->spoke);
	c->logon = rd->logon;
	c->ready = true;
	free(rd);
	return 1;
}

/* An interval's figures: what merging needs kept at its number (the array grows to that number,
 * which is at most max_iv), the rest added to the client's sums after the warm-up. */
static int figures(struct pv_run_client *c, const struct pv_load_figs *f)
{
	struct pv_run_iv *iv;

	if (f->seq < 1 || f->seq > c->max_iv) {
		pv_error(PV_EREMOTE,
			 "provision load sent figures for interval %llu; the step has at most %zu",
			 (unsigned long long)f->seq, c->max_iv);
		return -1;
	}
	if (f->seq <= c->niv && c->iv[f->seq - 1].seq) {
		pv_error(PV_EREMOTE, "provision load sent the figures of interval %llu twice",
			 (unsigned long long)f->seq);
		return -1;
	}
	if (f->seq > c->niv) {
		if (!(iv = realloc(c->iv, (size_t)f->seq * sizeof(*iv)))) {
			pv_error(PV_EIO, "out of memory");
			return -1;
		}
		memset(iv + c->niv, 0, ((size_t)f->seq - c->niv) * sizeof(*iv));
		c->iv = iv;
		c->niv = (size_t)f->seq;
	}
	c->iv[f->seq - 1] = (struct pv_run_iv){f->seq, f->secs, f->connected, f->failed};
	if (f->seq > c->skip) {
		c->sum.drops += f->drops;
		c->sum.reconnects += f->reconnects;
		c->sum.relogons += f->relogons;
		c->sum.reclaimed += f->reclaimed;
		pv_load_hist_merge(&c->sum.lag, &f->lag);
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			pv_load_counts_merge(&c->sum.kind[k], &f->kind[k]);
		pv_load_client_add(&c->own, f);
	}
	return 2;
}

int pv_run_client_line(struct pv_run_client *c, const char *line, size_t len)
{
	struct pv_load_figs f;

	if (len > PV_LOAD_LINE_MAX) {
		pv_error(PV_EREMOTE, "provision load printed a line of %zu bytes (at most %d)", len,
			 PV_LOAD_LINE_MAX);
		return -1;
	}
	if (c->nlines >= pv_run_client_lines_max(c)) {
		pv_error(PV_EREMOTE,
			 "provision load printed more than %zu lines in a step of %zu intervals",
			 pv_run_client_lines_max(c), c->max_iv);
		return -1;
	}
	c->nlines++;
	if (pv_buf_add(&c->lines, line, len) < 0 || pv_buf_add(&c->lines, "\n", 1) < 0) {
		pv_error(PV_EIO, "out of memory");
		return -1;
	}
	if (c->done) {
		pv_error(PV_EREMOTE,
			 "provision load printed a line after it said the step was done");
		return -1;
	}
	if (pv_load_is_done(line, len)) {
		c->done = true;
		return 3;
	}
	if (len > 6 && !strncmp(line, "ready ", 6))
		return ready(c, line, len);
	if (pv_load_line_decode(line, len, &f) != PV_OK) {
		pv_error_prefix(PV_EREMOTE, "provision load printed a line that is not figures");
		return -1;
	}
	return figures(c, &f);
}

void pv_run_client_release(struct pv_run_client *c)
{
	free(c->iv);
	pv_buf_release(&c->lines, 0);
	memset(c, 0, sizeof(*c));
}

void pv_run_client_figures(const struct pv_run_client *c, const char *name,
			   struct pv_load_client *out)
{
	memset(out, 0, sizeof(*out));
	pv_load_client_of(&c->own, name, out);
}

void pv_run_clients_merge(const struct pv_run_client *const *c, size_t n, struct pv_load_step *ls)
{
	size_t most = 0, skip = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		if (!c[i])
			continue;
		if (c[i]->niv > most)
			most = c[i]->niv;
		if (c[i]->skip < skip)
			skip = c[i]->skip;
	}
	/* what each interval merged across the clients gives: its users, its length */
	for (size_t seq = skip == SIZE_MAX ? 1 : skip + 1; seq <= most; seq++) {
		struct pv_run_iv m = {0, 0, 0, 0};

		for (size_t i = 0; i < n; i++) {
			const struct pv_run_iv *v;

			if (!c[i] || seq > c[i]->niv || seq <= c[i]->skip ||
			    (v = &c[i]->iv[seq - 1])->seq != seq)
				continue;
			if (v->secs > m.secs)
				m.secs = v->secs;
			m.connected += v->connected;
			m.failed += v->failed;
			m.seq = seq;
		}
		if (!m.seq)
			continue;
		if (!ls->intervals || m.connected < ls->connected)
			ls->connected = m.connected;
		if (!ls->intervals || m.failed > ls->failed)
			ls->failed = m.failed;
		ls->intervals++;
		ls->secs += m.secs;
	}
	/* the rest adds up: each client's sums */
	for (size_t i = 0; i < n; i++) {
		if (!c[i])
			continue;
		ls->drops += c[i]->sum.drops;
		ls->reconnects += c[i]->sum.reconnects;
		ls->relogons += c[i]->sum.relogons;
		ls->reclaimed += c[i]->sum.reclaimed;
		pv_load_hist_merge(&ls->lag, &c[i]->sum.lag);
		for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++)
			pv_load_counts_merge(&ls->kind[k], &c[i]->sum.kind[k]);
	}
}
