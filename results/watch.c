/* results/watch.c: a watch CSV read back (watch.csv, watch-dc.csv; see results.h), and its
 * columns' figures. Pure. The file is anyone's: its size is known before anything is kept
 * (columns, rows, numbers within the caps), its header's names are told apart by sorting
 * them (n log n, which the lookups reuse), and every number is held to a sane range, so that
 * what draws it later never meets a time of 1e22 s. */
#include "results/internal.h"

#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_results_watch_free(struct pv_results_watch *w)
{
	if (!w)
		return;
	free(w->cols);
	free(w->order);
	free(w->t);
	free(w->measure);
	free(w->v);
	free(w);
}

long pv_results_watch_col(const struct pv_results_watch *w, const char *name)
{
	size_t lo = 0, hi;

	if (!w)
		return -1;
	if (!w->order) {
		for (size_t c = 0; c < w->ncols; c++)
			if (strcmp(w->cols[c], name) == 0)
				return (long)c;
		return -1;
	}
	for (hi = w->ncols; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(w->cols[w->order[mid]], name);

		if (!d)
			return (long)w->order[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

bool pv_results_watch_stat(const struct pv_results_watch *w, const char *name, double *mean,
			   double *p95, double *max)
{
	long c = pv_results_watch_col(w, name);
	bool any_measured = false;
	double *v, sum = 0;
	size_t k = 0;

	if (c < 0 || !(v = malloc((w->n ? w->n : 1) * sizeof(*v))))
		return false;
	for (size_t i = 0; i < w->n; i++)
		any_measured |= w->measure[i];
	for (size_t i = 0; i < w->n; i++) {
		double x = w->v[i * w->ncols + (size_t)c];

		if ((w->measure[i] || !any_measured) && !isnan(x)) {
			v[k++] = x;
			sum += x;
		}
	}
	if (!k) {
		free(v);
		return false;
	}
	qsort(v, k, sizeof(*v), cmp_double);
	*mean = sum / (double)k;
	*p95 = v[(size_t)ceil(0.95 * (double)k) - 1];
	*max = v[k - 1];
	free(v);
	return true;
}

bool pv_results_next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*line = text + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + (nl ? 1 : 0);
	if (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	return true;
}

/* How many cells a CSV line has (no quoting in these files). */
static size_t cells(const char *line, size_t n)
{
	size_t k = 1;

	for (size_t i = 0; i < n; i++)
		k += line[i] == ',';
	return k;
}

/* for sorting the columns' indices by their names */
static int by_name(const void *a, const void *b, void *arg)
{
	const char(*cols)[32] = arg;

	return strcmp(cols[*(const size_t *)a], cols[*(const size_t *)b]);
}

/* The header's names after "seconds,phase," (line, n bytes) into w->cols, sorted into
 * w->order: PV_ECONFIG when a name is empty, too long or there twice (a column is found by its
 * name: one name, one column). */
static int header(struct pv_results_watch *w, const char *line, size_t n)
{
	const char *p = line + 14, *end = line + n;

	for (size_t c = 0; c < w->ncols; c++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t l = comma ? (size_t)(comma - p) : (size_t)(end - p);

		snprintf(w->cols[c], sizeof(w->cols[c]), "%.*s", (int)l, p);
		p += l + 1;
		if (!l || l >= sizeof(w->cols[c]))
			return pv_error(
				PV_ECONFIG,
				"the header names a column '%s' twice, or none, or too long "
				"a one",
				w->cols[c]);
		w->order[c] = c;
	}
	qsort_r(w->order, w->ncols, sizeof(*w->order), by_name, w->cols);
	for (size_t c = 1; c < w->ncols; c++)
		if (!strcmp(w->cols[w->order[c - 1]], w->cols[w->order[c]]))
			return pv_error(
				PV_ECONFIG,
				"the header names a column '%s' twice, or none, or too long "
				"a one",
				w->cols[w->order[c]]);
	return PV_OK;
}

/* One row (line, n bytes, its number lineno) into the watch's next row. */
static int row(struct pv_results_watch *w, const char *line, size_t n, size_t lineno)
{
	const char *p = line, *end = line + n;
	double *vals = w->v + w->n * w->ncols;
	char cell[64];

	if (cells(line, n) != w->ncols + 2)
		return pv_error(PV_ECONFIG, "line %zu has %zu cells, the header %zu", lineno,
				cells(line, n), w->ncols + 2);
	for (size_t c = 0; c < w->ncols + 2; c++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t l = comma ? (size_t)(comma - p) : (size_t)(end - p);
		char *stop;
		double v;

		snprintf(cell, sizeof(cell), "%.*s", (int)(l < 63 ? l : 63), p);
		p += l + 1;
		if (c == 1) {
			w->measure[w->n] = strcmp(cell, "measure") == 0;
			continue;
		}
		v = l ? strtod(cell, &stop) : NAN;
		if (l && (*stop || l > 62))
			return pv_error(PV_ECONFIG, "line %zu: '%s' is not a number", lineno, cell);
		if (c == 0 && isnan(v))
			return pv_error(PV_ECONFIG, "line %zu has no time", lineno);
		if (c == 0 && !(v >= 0 && v <= PV_RESULTS_SECONDS_MAX))
			return pv_error(PV_ECONFIG,
					"line %zu: the time '%s' is not from 0 to %.0f seconds "
					"(from the step's start)",
					lineno, cell, PV_RESULTS_SECONDS_MAX);
		if (c > 1 && !isnan(v) && !(fabs(v) <= PV_RESULTS_VALUE_MAX))
			return pv_error(PV_ECONFIG,
					"line %zu: '%s' of column '%s' is beyond +-%g, which no "
					"watch measures",
					lineno, cell, w->cols[c - 2], PV_RESULTS_VALUE_MAX);
		if (c == 0)
			w->t[w->n] = v;
		else
			vals[c - 2] = v;
	}
	w->n++;
	return PV_OK;
}

int pv_results_parse_watch(const char *text, size_t len, struct pv_results_watch **out)
{
	return pv_results_parse_watch_in(text, len, PV_RESULTS_CELLS_MAX, out);
}

int pv_results_parse_watch_in(const char *text, size_t len, size_t left,
			      struct pv_results_watch **out)
{
	struct pv_results_watch *w = calloc(1, sizeof(*w));
	const char *line, *l;
	size_t n, pos = 0, rows = 0, lineno = 1, ncells = 0;
	int r = PV_OK;

	if (!w)
		return pv_error(PV_EIO, "out of memory");
	if (!pv_results_next_line(text, len, &pos, &line, &n) || n < 15 ||
	    memcmp(line, "seconds,phase,", 14)) {
		free(w);
		return pv_error(PV_ECONFIG,
				"not a watch CSV (its header is not seconds,phase,...)");
	}
	w->ncols = cells(line, n) - 2;
	/* the rows (the lines that are not empty), each of a time and ncols values: the numbers
	 * counted before any is kept */
	for (size_t at = pos, k; pv_results_next_line(text, len, &at, &l, &k);)
		rows += k > 0;
	if (left > PV_RESULTS_CELLS_MAX)
		left = PV_RESULTS_CELLS_MAX;
	if (w->ncols > PV_RESULTS_ENTRIES_MAX || (rows + 1) > left / (w->ncols + 1)) {
		r = pv_error(
			PV_ECONFIG,
			"%zu columns and %zu rows, more than the %d columns or the %zu numbers "
			"left to read (a watch holds %u at most, a run's watches %u together)",
			w->ncols, rows, PV_RESULTS_ENTRIES_MAX, left, PV_RESULTS_CELLS_MAX,
			PV_RESULTS_RUN_CELLS);
		free(w);
		return r;
	}
	ncells = (rows ? rows : 1) * w->ncols;
	if (!(w->cols = calloc(w->ncols, sizeof(*w->cols))) ||
	    !(w->order = calloc(w->ncols, sizeof(*w->order))) ||
	    !(w->t = calloc(rows ? rows : 1, sizeof(*w->t))) ||
	    !(w->measure = calloc(rows ? rows : 1, sizeof(*w->measure))) ||
	    !(w->v = calloc(ncells, sizeof(*w->v)))) {
		pv_results_watch_free(w);
		return pv_error(PV_EIO, "out of memory");
	}
	r = header(w, line, n);
	while (r == PV_OK && pv_results_next_line(text, len, &pos, &line, &n)) {
		lineno++;
		if (n)
			r = w->n < rows ? row(w, line, n, lineno) : pv_error(PV_EIO, "bug: rows");
	}
	if (r != PV_OK) {
		pv_results_watch_free(w);
		return r;
	}
	*out = w;
	return PV_OK;
}
