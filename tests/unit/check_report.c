/* tests/unit/check_report.c: a run's folder that nobody here produced (issue 31). Run folders
 * are mailed around, so `provision report` and `compare` read folders made anywhere: reading
 * one and drawing its pages must take bounded time and memory whatever it holds
 * (results/read.c, watch.c, parse.c, compare.c; report/, util/plot.c), nothing in it
 * may block the reader (a FIFO), no number from it may be converted out of range, and its
 * text may not make a page read other than it is.
 *
 * The cases here ran forever or did quadratic work before: they run under a short timeout,
 * which is what fails them then (the timeout is far above what they take now; it says
 * "ends", not "is fast"). Folders are made in memory (struct pv_results_files) when only what
 * is in them matters, on disk when the files' kinds do.
 *
 * And the sweep's bar chart (pv_plot_bars): its bars, labels and whiskers, and an axis that
 * ends and a drawing that stays in its box whatever the values. */
#include <check.h>

#include "tests/unit/unit.h"
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "load/stats.h"
#include "report/html.h"
#include "report/report.h"
#include "results/compare.h"
#include "results/results.h"
#include "util/err.h"

/* ---- a folder in memory ---- */

struct mem {
	const char *rel[8];
	struct pv_buf text[8];
	size_t n, gets;
};

static struct pv_buf *mem_file(struct mem *m, const char *rel)
{
	ck_assert_uint_lt(m->n, 8);
	m->rel[m->n] = rel;
	return &m->text[m->n++];
}

static int mem_get(void *arg, const char *rel, size_t max, char **text, size_t *len)
{
	struct mem *m = arg;

	m->gets++;
	for (size_t i = 0; i < m->n; i++) {
		/* "*x": every file whose path ends with x */
		if (m->rel[i][0] == '*' ? strlen(rel) < strlen(m->rel[i] + 1) ||
						  strcmp(rel + strlen(rel) - strlen(m->rel[i] + 1),
							 m->rel[i] + 1)
					: strcmp(m->rel[i], rel) != 0)
			continue;
		if (m->text[i].len > max)
			return pv_error(PV_EIO, "%zu bytes, more than the %zu left to read",
					m->text[i].len, max);
		ck_assert_ptr_nonnull(*text = malloc(m->text[i].len + 1));
		memcpy(*text, m->text[i].data ? m->text[i].data : "", m->text[i].len + 1);
		*len = m->text[i].len;
		return PV_OK;
	}
	return 1;
}

static struct pv_results_run *mem_load(struct mem *m)
{
	struct pv_results_files files = {mem_get, m};
	struct pv_results_run *run = NULL;

	for (size_t i = 0; i < m->n; i++)
		ck_assert(!pv_buf_failed(&m->text[i]));
	ck_assert_msg(pv_results_parse_files(&files, "mem", &run) == PV_OK, "%s", pv_errmsg());
	return run;
}

static void mem_free(struct mem *m)
{
	for (size_t i = 0; i < m->n; i++)
		pv_buf_release(&m->text[i], 0);
	memset(m, 0, sizeof(*m));
}

/* manifest.json: steps of users 10, 20, ...; hosts cli1..cliN each step, clients */
static void manifest(struct pv_buf *b, unsigned steps, unsigned hosts)
{
	pv_buf_addstr(b, "{\"manifest_version\": 1, \"run_id\": \"r\", \"driver\": {\"name\": "
			 "\"builtin\"}, \"steps\": [");
	for (unsigned s = 1; s <= steps; s++) {
		pv_buf_addf(b, "%s{\"step\": %u, \"users\": %u, \"hosts\": [", s > 1 ? "," : "", s,
			    10 * s);
		for (unsigned h = 1; h <= hosts; h++)
			pv_buf_addf(b, "%s{\"name\": \"cli%u\", \"role\": \"client\"}",
				    h > 1 ? "," : "", h);
		pv_buf_addstr(b, "]}");
	}
	pv_buf_addstr(b, "]}");
}

/* load.json (version 1) of those steps, each step's members after "users" from step_extra */
static void load_json(struct pv_buf *b, unsigned steps, const char *config, const char *extra)
{
	pv_buf_addf(b, "{\"version\": 1, \"config\": {%s}, \"steps\": [", config);
	for (unsigned s = 1; s <= steps; s++)
		pv_buf_addf(b, "%s{\"users\": %u%s%s}", s > 1 ? "," : "", 10 * s,
			    extra[0] ? ", " : "", extra);
	pv_buf_addstr(b, "], \"answer\": {}}");
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* ---- finding 2: what never ended ---- */

/* A watch's time of 1e22 s made the over-time plot's tick loop endless (v + step == v): times
 * and values are bounded where the watch is read, named in the refusal. */
START_TEST(watch_bounds)
{
	static const struct {
		const char *csv, *why;
	} bad[] = {
		{"1,measure,5\n1e22,measure,5\n",
		 "line 3: the time '1e22' is not from 0 to 31622400 "
		 "seconds"},
		{"-1,measure,5\n", "line 2: the time '-1' is not from 0"},
		{"inf,measure,5\n", "line 2: the time 'inf' is not from 0"},
		{"nan,measure,5\n", "line 2 has no time"},
		{"1,measure,1e300\n", "line 2: '1e300' of column 'cpu' is beyond +-1e+12"},
		{"1,measure,-inf\n", "line 2: '-inf' of column 'cpu' is beyond"},
	};
	struct pv_results_watch *w = NULL;
	char text[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "seconds,phase,cpu\n%s", bad[i].csv);
		ck_assert_int_eq(pv_results_parse_watch(text, strlen(text), &w), PV_ECONFIG);
		ck_assert_msg(strstr(pv_errmsg(), bad[i].why), "%s", pv_errmsg());
	}
	snprintf(text, sizeof(text), "seconds,phase,cpu\n0,warmup,-3\n31622400,measure,1e12\n");
	ck_assert_int_eq(pv_results_parse_watch(text, strlen(text), &w), PV_OK);
	ck_assert_uint_eq(w->n, 2);
	pv_results_watch_free(w);
}
END_TEST

/* An axis ends whatever it is given: a span of 1e22 s, values to 1e308, a range a double cannot
 * step through; at most 50 ticks each. */
START_TEST(plot_ends)
{
	static const double x[] = {0, 1e22, 3}, y[] = {0, 1e308, -1e308}, x2[] = {1e22, 1e22 + 1e6};
	struct pv_plot_series s[2] = {{"a", x, y, NULL, NULL, NULL, 3, 0, 'o', 0, 0, true},
				      {"b", x2, y, NULL, NULL, NULL, 2, 1, 's', 1, 1, true}};
	struct pv_buf b = PV_BUF_INIT;
	struct pv_plot p;

	for (int kind = 0; kind < 2; kind++) {
		pv_plot_init(&p);
		p.id = "p";
		p.title = p.desc = p.xlabel = p.ylabel = p.y2label = "t";
		p.xkind = kind ? PV_PLOT_X_NUMBER : PV_PLOT_X_TIME;
		p.s = s;
		p.ns = 2;
		pv_buf_reset(&b);
		pv_plot_svg(&b, &p);
		ck_assert(!pv_buf_failed(&b));
		ck_assert_uint_le(count(b.data, "<line class=\"axis\""), 50);
		ck_assert_uint_le(count(b.data, "<line class=\"grid\""), 50);
		ck_assert_uint_ge(count(b.data, "<line class=\"axis\""), 1);
		/* only the second series: x from 1e22 to 1e22 + 1e6 */
		p.s = s + 1;
		p.ns = 1;
		p.xmin = NAN;
		pv_buf_reset(&b);
		pv_plot_svg(&b, &p);
		ck_assert_uint_le(count(b.data, "<line class=\"axis\""), 50);
		/* bounds given that make no span */
		p.xmin = p.xmax = 5e21;
		p.ymin = p.ymax = 1e300;
		pv_buf_reset(&b);
		pv_plot_svg(&b, &p);
		ck_assert_uint_le(count(b.data, "<line class=\"axis\""), 50);
	}
	pv_buf_release(&b, 0);
}
END_TEST

/* and the page of a run whose watch holds such a time (as a reader before the bound gave it) */
START_TEST(report_huge_time)
{
	struct mem m = {0};
	struct pv_results_run *run;
	struct pv_results_watch *w;
	struct pv_buf b = PV_BUF_INIT;
	const char csv[] = "seconds,phase,cpu\n1,measure,5\n2,measure,6\n";

	manifest(mem_file(&m, "manifest.json"), 2, 1);
	run = mem_load(&m);
	ck_assert_int_eq(pv_results_parse_watch(csv, strlen(csv), &w), PV_OK);
	w->t[1] = 1e22;
	run->steps[1].srv = w;
	run->steps[0].start = 1e9;
	run->steps[1].start = 1e9 + 3e11; /* a step's start far away, as a manifest may say */
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	ck_assert_uint_le(count(b.data, "<line class=\"axis\""), 50 * 8);
	pv_buf_release(&b, 0);
	pv_results_free(run);
	mem_free(&m);
}
END_TEST

static char tmpdir[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void at(char *path, size_t cap, const char *rel)
{
	snprintf(path, cap, "%s/%s", tmpdir, rel);
}

static void rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A FIFO (or a socket, a device) in a run's folder: opening it blocked the reader forever. It
 * is refused by its kind, named, without being opened; a FIFO in a folder's place too. */
START_TEST(fifo)
{
	struct pv_results_run *run = NULL;
	struct pv_buf b = PV_BUF_INIT;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[256];
	int sock;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pv-report-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	manifest(&b, 3, 1);
	put("manifest.json", b.data);
	pv_buf_release(&b, 0);
	at(path, sizeof(path), "step-01");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	at(path, sizeof(path), "step-01/cli1");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	at(path, sizeof(path), "step-01/watch.csv");
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	at(path, sizeof(path), "step-01/cli1/stderr");
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	at(path, sizeof(path), "step-02");
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	at(path, sizeof(path), "step-03");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	at(path, sizeof(path), "step-03/watch-dc.csv");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	at(sa.sun_path, sizeof(sa.sun_path), "step-03/watch.csv");
	ck_assert_int_ge(sock = socket(AF_UNIX, SOCK_STREAM, 0), 0);
	ck_assert_int_eq(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	close(sock);
	ck_assert_ptr_nonnull(run->notes);
	ck_assert_msg(strstr(run->notes, "step-01/watch.csv: 'watch.csv' is a FIFO, not a regular "
					 "file: a run's folder holds only folders and regular "
					 "files, and nothing else in it is opened; remove it"),
		      "%s", run->notes);
	ck_assert_ptr_null(run->steps[0].srv);
	ck_assert_str_eq(run->steps[0].hosts[0].said, "");
	ck_assert_ptr_nonnull(strstr(run->notes, "step-02/watch.csv: 'step-02' is a FIFO, not a "
						 "folder"));
	ck_assert_ptr_nonnull(strstr(run->notes, "step-03/watch.csv: 'watch.csv' is a socket"));
	ck_assert_ptr_nonnull(
		strstr(run->notes, "step-03/watch-dc.csv: 'watch-dc.csv' is a folder"));
	pv_results_free(run);
	/* the manifest itself: the folder is refused, named */
	at(path, sizeof(path), "manifest.json");
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_EIO);
	ck_assert_msg(strstr(pv_errmsg(), "/manifest.json: 'manifest.json' is a FIFO"), "%s",
		      pv_errmsg());
	rm_tmp();
}
END_TEST

/* A header's names were told apart pairwise: 20,000 columns (the cap) took 2 * 10^8 compares a
 * watch. Sorted, a folder of such watches reads at once, and a column is found in log time. */
START_TEST(header_linear)
{
	struct pv_buf csv = PV_BUF_INIT;
	struct pv_results_watch *w = NULL;

	pv_buf_addstr(&csv, "seconds,phase");
	for (unsigned c = 0; c < PV_RESULTS_ENTRIES_MAX; c++)
		pv_buf_addf(&csv, ",c%u", c);
	pv_buf_addstr(&csv, "\n");
	for (int i = 0; i < 20; i++) {
		ck_assert_int_eq(pv_results_parse_watch(csv.data, csv.len, &w), PV_OK);
		ck_assert_int_eq(pv_results_watch_col(w, "c19999"), 19999);
		ck_assert_int_eq(pv_results_watch_col(w, "c123"), 123);
		ck_assert_int_eq(pv_results_watch_col(w, "c20000"), -1);
		pv_results_watch_free(w);
	}
	/* a name twice, however far apart; a column more than the cap */
	csv.len--;
	pv_buf_addstr(&csv, ",c0\n");
	ck_assert_int_eq(pv_results_parse_watch(csv.data, csv.len, &w), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "20001 columns and 0 rows, more than the 20000 columns"),
		      "%s", pv_errmsg());
	pv_buf_reset(&csv);
	pv_buf_addstr(&csv, "seconds,phase,cpu,mem,x,cpu\n");
	ck_assert_int_eq(pv_results_parse_watch(csv.data, csv.len, &w), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "names a column 'cpu' twice"), "%s", pv_errmsg());
	pv_buf_release(&csv, 0);
}
END_TEST

/* The page's operation table looked for each name a step gave in every step before it, and
 * drew a row per name: 1,000 steps of 64 names each made 80 s of work and a page of 755 MB.
 * It holds a row per SMB2 command now (and one for the others), whatever load.json names. */
START_TEST(ops_linear)
{
	struct mem m = {0};
	struct pv_buf *l, b = PV_BUF_INIT, extra = PV_BUF_INIT;
	struct pv_results_run *run;
	const unsigned steps = 1000;

	manifest(mem_file(&m, "manifest.json"), steps, 1);
	pv_buf_addstr(&extra,
		      "\"ops\": {\"create\": 10, \"read\": 5, \"close\": 9223372036854775807, "
		      "\"flush\": 9223372036854775807");
	for (unsigned k = 0; k < 64; k++)
		pv_buf_addf(&extra, ", \"cmd%u\": 1", k);
	pv_buf_addstr(&extra, "}");
	l = mem_file(&m, "load.json");
	load_json(l, steps, "", extra.data);
	run = mem_load(&m);
	ck_assert(run->has_load);
	ck_assert(run->steps[0].has_ops);
	ck_assert_uint_eq(run->steps[0].load.all.n.ops[PV_LOAD_OP_CREATE], 10);
	ck_assert_uint_eq(run->steps[0].ops_other, 64);
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	ck_assert_uint_lt(b.len, 16u << 20);
	/* FSCT's six, flush, the others, the requests */
	{
		char *t = strstr(b.data, "<caption>SMB operation mix</caption>"), *end;

		ck_assert_ptr_nonnull(t);
		ck_assert_ptr_nonnull(end = strstr(t, "</table>"));
		*end = '\0';
		ck_assert_uint_eq(count(t, "<tr><th scope=\"row\">"), 6 + 1 + 1 + 1);
		ck_assert_ptr_nonnull(strstr(t, "<tr><th scope=\"row\">flush</th>"));
		ck_assert_ptr_nonnull(strstr(t, "<tr><th scope=\"row\">other</th>"));
		ck_assert_ptr_nonnull(strstr(t, "<td>18446744073709551615</td>")); /* saturated */
	}
	pv_buf_release(&b, 0);
	pv_buf_release(&extra, 0);
	pv_results_free(run);
	mem_free(&m);
}
END_TEST

/* ---- the caps of a folder ---- */

/* A file past 256 MiB is not read; 4 GiB in all are (links to one big sparse file, which a
 * mailed folder may hold, cost nothing on its disk). */
START_TEST(bytes_caps)
{
	struct pv_results_run *run = NULL;
	struct pv_buf b = PV_BUF_INIT;
	char path[256], to[256], rel[64];
	int fd;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pv-report-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	manifest(&b, 9, 0);
	put("manifest.json", b.data);
	pv_buf_release(&b, 0);
	for (unsigned s = 1; s <= 9; s++) {
		snprintf(rel, sizeof(rel), "step-%02u", s);
		at(path, sizeof(path), rel);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
	at(path, sizeof(path), "big");
	ck_assert_int_ge(fd = open(path, O_WRONLY | O_CREAT, 0644), 0);
	ck_assert_int_eq(ftruncate(fd, PV_RESULTS_FILE_MAX + 1), 0);
	close(fd);
	at(to, sizeof(to), "step-01/watch.csv");
	ck_assert_int_eq(link(path, to), 0);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_msg(strstr(run->notes, "step-01/watch.csv: 268435457 bytes, more than the "
					 "268435456 read of a file; left out"),
		      "%s", run->notes);
	pv_results_free(run);
	/* 18 files of 256 MiB: the first 15 read (each refused as no watch), the 16th would be
	 * more than 4 GiB with the manifest, then no more */
	ck_assert_int_eq(truncate(path, PV_RESULTS_FILE_MAX), 0);
	for (unsigned s = 1; s <= 9; s++)
		for (int dc = 0; dc < 2; dc++) {
			snprintf(rel, sizeof(rel), "step-%02u/watch%s.csv", s, dc ? "-dc" : "");
			at(to, sizeof(to), rel);
			if (s > 1 || dc)
				ck_assert_int_eq(link(path, to), 0);
		}
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_uint_eq(count(run->notes, "not a watch CSV"), 15);
	ck_assert_msg(strstr(run->notes,
			     "step-08/watch-dc.csv and the files after it: left out, the "
			     "folder holds more than 100000 files or 4294967296 bytes "
			     "to read"),
		      "%s", run->notes);
	ck_assert_uint_eq(count(run->notes, "left out, the folder holds"), 1);
	pv_results_free(run);
	rm_tmp();
}
END_TEST

/* 100,000 files looked for at most: 3 steps of 20,000 clients would have been 120,000 */
START_TEST(files_cap)
{
	struct mem m = {0};
	struct pv_results_run *run;

	manifest(mem_file(&m, "manifest.json"), 3, PV_RESULTS_ENTRIES_MAX);
	load_json(mem_file(&m, "load.json"), 3, "", "");
	run = mem_load(&m);
	ck_assert(run->has_load);
	ck_assert_uint_eq(m.gets, PV_RESULTS_FILES_MAX);
	ck_assert_msg(strstr(run->notes, "step-03/cli9997/stderr and the files after it: left "
					 "out, the folder holds more than 100000 files"),
		      "%s", run->notes);
	pv_results_free(run);
	mem_free(&m);
}
END_TEST

/* A JSON file's values are counted before it is parsed: a 3-byte "{}," costs a parser 230
 * bytes, so 256 MiB of them would have cost 20 GB. Lists of hosts and clients are capped. */
START_TEST(json_caps)
{
	struct pv_results_run *run = pv_results_new();
	struct pv_buf b = PV_BUF_INIT;
	struct mem m = {0};

	pv_buf_addstr(&b, "{\"manifest_version\": 1, \"driver\": {\"name\": \"x\"}, \"x\": [");
	for (unsigned i = 0; i < PV_RESULTS_JSON_MAX; i++)
		pv_buf_addstr(&b, i ? ",{}" : "{}");
	pv_buf_addstr(&b, "], \"s\": \"[[[,,,\\\"{{\"}");
	ck_assert_int_eq(pv_results_parse_manifest(run, b.data, b.len), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "manifest.json holds 4000006 values, more than the "
					  "2000000 read"),
		      "%s", pv_errmsg());
	ck_assert_int_eq(pv_results_parse_load(run, b.data, b.len), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "load.json holds 4000006 values"), "%s", pv_errmsg());
	pv_results_free(run);
	/* a step of 20,001 hosts, a run of 20,001 */
	run = pv_results_new();
	pv_buf_reset(&b);
	manifest(&b, 1, PV_RESULTS_ENTRIES_MAX + 1);
	ck_assert_int_eq(pv_results_parse_manifest(run, b.data, b.len), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "manifest.json's step 1 names 20001 hosts, more than "
					  "20000"),
		      "%s", pv_errmsg());
	pv_results_free(run);
	run = pv_results_new();
	pv_buf_reset(&b);
	pv_buf_addstr(&b, "{\"manifest_version\": 1, \"driver\": {\"name\": \"x\"}, \"hosts\": [");
	for (unsigned i = 0; i <= PV_RESULTS_ENTRIES_MAX; i++)
		pv_buf_addstr(&b, i ? ",{}" : "{}");
	pv_buf_addstr(&b, "]}");
	ck_assert_int_eq(pv_results_parse_manifest(run, b.data, b.len), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "manifest.json names 20001 hosts, more than 20000"), "%s",
		      pv_errmsg());
	pv_results_free(run);
	/* a step of 20,001 clients: load.json left out, said */
	pv_buf_reset(&b);
	pv_buf_addstr(&b, "\"clients\": [");
	for (unsigned i = 0; i <= PV_RESULTS_ENTRIES_MAX; i++)
		pv_buf_addstr(&b, i ? ",{}" : "{}");
	pv_buf_addstr(&b, "]");
	manifest(mem_file(&m, "manifest.json"), 1, 1);
	load_json(mem_file(&m, "load.json"), 1, "", b.data);
	run = mem_load(&m);
	ck_assert(!run->has_load);
	ck_assert_msg(strstr(run->notes, "load.json: load.json's step 1: 20001 clients, more than "
					 "20000; the load's figures are left out"),
		      "%s", run->notes);
	pv_results_free(run);
	mem_free(&m);
	pv_buf_release(&b, 0);
}
END_TEST

/* A watch holds 2^22 numbers at most, a run's watches 2^25 together; 64 notes are kept; the
 * server's configuration is kept to 1 MiB. */
START_TEST(memory_caps)
{
	struct mem m = {0};
	struct pv_buf *csv;
	struct pv_results_watch *w = NULL;
	struct pv_results_run *run;
	const char *head =
		"{\"manifest_version\": 1, \"driver\": {\"name\": \"x\"}, \"server_config\": \"";
	char *conf;

	csv = mem_file(&m, "*/watch.csv");
	pv_buf_addstr(csv, "seconds,phase,a,b,c,d,e,f,g\n");
	for (unsigned i = 0; i < (1u << 19); i++)
		pv_buf_addstr(csv, "1,m,,,,,,,\n");
	ck_assert_int_eq(pv_results_parse_watch(csv->data, csv->len, &w), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(),
			     "7 columns and 524288 rows, more than the 20000 "
			     "columns or the 4194304 numbers left to read (a watch "
			     "holds 4194304 at most, a run's watches 33554432 together)"),
		      "%s", pv_errmsg());
	/* 2^19 - 1 rows of 7 fit; 9 such watches do not, together */
	pv_buf_reset(csv);
	pv_buf_addstr(csv, "seconds,phase,a,b,c,d,e,f,g\n");
	for (unsigned i = 0; i < (1u << 19) - 1; i++)
		pv_buf_addstr(csv, "1,m,,,,,,,\n");
	manifest(mem_file(&m, "manifest.json"), 100, 0);
	run = mem_load(&m);
	for (unsigned i = 0; i < 8; i++)
		ck_assert_ptr_nonnull(run->steps[i].srv);
	ck_assert_ptr_null(run->steps[8].srv);
	ck_assert_msg(strstr(run->notes, "step-09/watch.csv: 7 columns and 524287 rows, more than "
					 "the 20000 columns or the 0 numbers left to read"),
		      "%s", run->notes);
	/* 92 notes made: 64 kept, and a line saying the rest were left out */
	ck_assert_uint_eq(count(run->notes, "\n"), 65);
	ck_assert_msg(strstr(run->notes, "step-72/watch.csv: 7 columns"), "%s", run->notes);
	ck_assert_ptr_null(strstr(run->notes, "step-73/"));
	ck_assert_ptr_nonnull(strstr(run->notes, "(the notes after the first 64 are left out)\n"));
	pv_results_free(run);
	mem_free(&m);
	/* the server's configuration */
	ck_assert_ptr_nonnull(conf = malloc(3u << 20));
	memset(conf, 'a', 3u << 20);
	memcpy(conf, head, strlen(head));
	memcpy(conf + (3u << 20) - 3, "\"}", 3);
	run = pv_results_new();
	ck_assert_int_eq(pv_results_parse_manifest(run, conf, strlen(conf)), PV_OK);
	ck_assert_uint_eq(strlen(run->server_config), PV_RESULTS_CONFIG_MAX);
	ck_assert_str_eq(run->notes, "manifest.json: the server's configuration is cut at 1048576 "
				     "bytes\n");
	pv_results_free(run);
	free(conf);
}
END_TEST

/* ---- compare ---- */

/* A run of steps of users 10, 20, ... (the last half shifted by shift), load figures and the
 * server's configuration of settings distinct settings, read from memory. */
static struct pv_results_run *cmp_run(unsigned steps, unsigned shift, unsigned settings,
				      unsigned val)
{
	struct mem m = {0};
	struct pv_buf *b = mem_file(&m, "manifest.json"), *l;
	struct pv_results_run *run;

	pv_buf_addstr(b, "{\"manifest_version\": 1, \"run_id\": \"r\", \"driver\": {\"name\": "
			 "\"builtin\"}, \"server_config\": \"[global]\\n");
	for (unsigned k = 0; k < settings; k++)
		pv_buf_addf(b, "\\tkey %u = %u\\n", k, k % 3 ? k : k + val);
	pv_buf_addstr(b, "\", \"steps\": [");
	l = mem_file(&m, "load.json");
	pv_buf_addstr(l, "{\"version\": 1, \"steps\": [");
	for (unsigned s = 1; s <= steps; s++) {
		unsigned users = 10 * s + (s > steps / 2 ? shift : 0);

		pv_buf_addf(b, "%s{\"step\": %u, \"users\": %u}", s > 1 ? "," : "", s, users);
		pv_buf_addf(l,
			    "%s{\"users\": %u, \"seconds\": 10, \"all\": {\"started\": %u, "
			    "\"completed\": %u}}",
			    s > 1 ? "," : "", users, 100 + s, 100 + s);
	}
	pv_buf_addstr(b, "]}");
	pv_buf_addstr(l, "], \"answer\": {}}");
	run = mem_load(&m);
	mem_free(&m);
	return run;
}

/* compare looked for each users in a list, for each run's step in turn, and for each setting
 * in every other: quadratic in each. Two runs of 5,000 steps and 20,000 settings compare at
 * once; the steps not in both are named 64 at most; a run's settings past 20,000 are said. */
START_TEST(compare_linear)
{
	struct pv_results_run *runs[2] = {cmp_run(5000, 5, 20001, 0), cmp_run(5000, 0, 20000, 1)};
	const size_t group[2] = {0, 1};
	struct pv_results_cmp *c = NULL;
	struct pv_buf b = PV_BUF_INIT;

	ck_assert(runs[0]->has_load && runs[1]->has_load);
	ck_assert_msg(pv_results_cmp_build((const struct pv_results_run *const *)runs, group, 2,
					   &c) == PV_OK,
		      "%s", pv_errmsg());
	ck_assert_uint_eq(c->nsteps, 2500);
	ck_assert_uint_eq(count(c->uncommon, "\n"), 65);
	ck_assert_ptr_nonnull(strstr(c->uncommon, "25010 users: not in every run of A\n"));
	ck_assert_ptr_nonnull(strstr(c->uncommon, "(and more steps not in every run)\n"));
	/* a third of the settings differ, and the first run's were cut */
	ck_assert_uint_eq(c->nsettings, 6668);
	ck_assert_str_eq(c->settings[c->nsettings - 2].key, "server [global] key 19998");
	ck_assert_str_eq(c->settings[c->nsettings - 1].key, "server configuration");
	ck_assert_str_eq(c->settings[c->nsettings - 1].values[0],
			 "more than 20000 settings: the rest not compared");
	ck_assert_str_eq(c->settings[c->nsettings - 1].values[1], "");
	pv_report_compare_page(c, &b);
	ck_assert(!pv_buf_failed(&b));
	pv_buf_release(&b, 0);
	pv_results_cmp_free(c);
	/* the steps of every run together, at most 20,000 */
	pv_results_free(runs[1]);
	runs[1] = cmp_run(10000, 0, 0, 0);
	{
		const struct pv_results_run *three[3] = {runs[0], runs[1], runs[0]};
		const size_t groups[3] = {0, 1, 2};

		runs[0]->nsteps++; /* 5,001 */
		ck_assert_int_eq(pv_results_cmp_build(three, groups, 3, &c), PV_EUSAGE);
		runs[0]->nsteps--;
	}
	ck_assert_msg(strstr(pv_errmsg(), "the runs hold 20002 steps together, more than the 20000 "
					  "compare reads"),
		      "%s", pv_errmsg());
	pv_results_free(runs[0]);
	pv_results_free(runs[1]);
}
END_TEST

/* ---- finding 3: numbers converted only in range ---- */

/* load.json's settings became integers by a cast whatever they were: 1e300, -1e300 or 2^64 is
 * undefined behaviour to convert. They are refused, named, as is what is no whole number. */
START_TEST(number_casts)
{
	static const struct {
		const char *config, *why;
	} bad[] = {
		{"\"rate\": 1e300", "config.rate is not a whole number from 1 to 36000000"},
		{"\"rate\": -1e300", "config.rate is not"},
		{"\"rate\": 18446744073709551616.0", "config.rate is not"},
		{"\"rate\": 2.5", "config.rate is not"},
		{"\"interval\": 1e300", "config.interval is not a whole number from 1 to 3600"},
		{"\"interval\": 4294967297", "config.interval is not"},
		{"\"seed\": 1e300",
		 "config.seed is not a whole number from -9223372036854775808 to "
		 "9223372036854775807"},
		{"\"seed\": -1e300", "config.seed is not"},
		{"\"seed\": 18446744073709551616.0", "config.seed is not"},
		{"\"seed\": 9223372036854775808.0", "config.seed is not"},
		{"\"seed\": \"NaN\"", "config.seed is not"},
		{"\"seed\": 18446744073709551616", "load.json is not JSON"},
	};
	struct pv_results_run *run;
	struct pv_load_hist h;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mem m = {0};

		manifest(mem_file(&m, "manifest.json"), 2, 0);
		load_json(mem_file(&m, "load.json"), 2, bad[i].config, "");
		run = mem_load(&m);
		ck_assert_msg(!run->has_load, "%s", bad[i].config);
		ck_assert_msg(run->notes && strstr(run->notes, bad[i].why), "%s: %s", bad[i].config,
			      run->notes);
		pv_results_free(run);
		mem_free(&m);
	}
	/* as the writer writes them (a seed past 2^63 as a negative long long), and a whole real */
	{
		struct mem m = {0};

		manifest(mem_file(&m, "manifest.json"), 2, 0);
		load_json(mem_file(&m, "load.json"), 2,
			  "\"rate\": 3310.0, \"interval\": 2, \"seed\": -1", "");
		run = mem_load(&m);
		ck_assert_msg(run->has_load, "%s", run->notes);
		ck_assert_uint_eq(run->cfg.rate, 3310);
		ck_assert_uint_eq(run->cfg.interval, 2);
		ck_assert(run->cfg.seed == UINT64_MAX);
		pv_results_free(run);
		mem_free(&m);
	}
	/* exit statuses beyond an int: none */
	{
		const char text[] =
			"{\"manifest_version\": 1, \"exit_code\": 1e300, \"driver\": {\"name\": "
			"\"x\"}, \"steps\": [{\"step\": 1, \"hosts\": [{\"exit\": "
			"4294967296}, {\"exit\": -1e300}, {\"exit\": 3}]}]}";

		run = pv_results_new();
		ck_assert_int_eq(pv_results_parse_manifest(run, text, strlen(text)), PV_OK);
		ck_assert_int_eq(run->exit_code, -1);
		ck_assert_int_eq(run->steps[0].hosts[0].exit, -1);
		ck_assert_int_eq(run->steps[0].hosts[1].exit, -1);
		ck_assert_int_eq(run->steps[0].hosts[2].exit, 3);
		pv_results_free(run);
	}
	/* a histogram's count near 2^64 (merged from anyone's lines): the quantile's rank is held
	 * below 2^64 before it is converted */
	memset(&h, 0, sizeof(h));
	h.n[5] = UINT64_MAX;
	h.max = pv_load_bucket_high(5);
	ck_assert(isfinite(pv_load_hist_quantile(&h, 1.0)));
	ck_assert(pv_load_hist_quantile(&h, 1.0) <= pv_load_bucket_high(5));
}
END_TEST

/* ---- finding 7: text that reads as it is ---- */

/* The bidirectional controls in anything a run's folder says (a host's error, its name, the
 * run's id) are shown on the page as \uNNNN, never written: "pwn\u202e..." would have read
 * backwards. */
START_TEST(report_bidi)
{
	struct mem m = {0};
	struct pv_buf *b = mem_file(&m, "manifest.json"), page = PV_BUF_INIT;
	struct pv_results_run *runs[2];
	const size_t group[2] = {0, 1};
	struct pv_results_cmp *c = NULL;
	static const char *const raw[] = {"\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x80\x8f",
					  "\xd8\x9c"};

	pv_buf_addstr(
		b, "{\"manifest_version\": 1, \"run_id\": \"r\\u2066id\", \"driver\": {\"name\": "
		   "\"builtin\"}, \"error\": \"done \\u202egnp.exe\", \"steps\": [{\"step\": 1, "
		   "\"users\": 10, \"hosts\": [{\"name\": \"cli\\u200f1\", \"role\": \"client\", "
		   "\"state\": \"failed\", \"error\": \"x\\u061c\\u202ey\"}]}]}");
	load_json(mem_file(&m, "load.json"), 1, "",
		  "\"seconds\": 10, \"all\": {\"started\": 5, \"completed\": 5}");
	runs[0] = mem_load(&m);
	runs[1] = mem_load(&m);
	ck_assert_int_eq(pv_report_page(runs[0], &page), PV_OK);
	ck_assert_ptr_nonnull(strstr(page.data, "the run: done \\u202egnp.exe"));
	ck_assert_ptr_nonnull(strstr(page.data, "cli\\u200f1 (failed): x\\u061c\\u202ey"));
	ck_assert_ptr_nonnull(strstr(page.data, "<h1>Run r\\u2066id</h1>"));
	ck_assert_msg(pv_results_cmp_build((const struct pv_results_run *const *)runs, group, 2,
					   &c) == PV_OK,
		      "%s", pv_errmsg());
	pv_report_compare_page(c, &page);
	ck_assert_ptr_nonnull(strstr(page.data, "r\\u2066id (<code>mem</code>)"));
	for (size_t i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
		ck_assert_msg(!strstr(page.data, raw[i]), "a bidirectional control written: %zu",
			      i);
	pv_buf_release(&page, 0);
	pv_results_cmp_free(c);
	pv_results_free(runs[0]);
	pv_results_free(runs[1]);
	mem_free(&m);
}
END_TEST

/* The kinds' tables of figures have a row for a kind weighed or started, no other: a built-in
 * run shows no 'learned' row, a replay (load.workload: only 'learned' weighed) none of the
 * built-in kinds but one it started; the settings' table lists every kind. */
START_TEST(kind_rows)
{
	static const char replay[] =
		"\"rate\": 331, \"scenarios\": {\"learned\": {\"weight\": 1}, "
		"\"upload\": {\"weight\": 0}, \"browse\": {\"weight\": 0}, "
		"\"open_read\": {\"weight\": 0}, \"copy_in\": {\"weight\": 0}, "
		"\"edit_save\": {\"weight\": 0}, \"open_close\": {\"weight\": 0}, "
		"\"rewrite\": {\"weight\": 0}, \"delete_new\": {\"weight\": 0}, "
		"\"list_new\": {\"weight\": 0}, \"rename\": {\"weight\": 0}, "
		"\"mkdir\": {\"weight\": 0}, \"read_folder\": {\"weight\": 0}}";
	static const char both[] = "\"seconds\": 10, \"all\": {\"started\": 9, \"completed\": 9}, "
				   "\"kinds\": {\"learned\": {\"started\": 5, \"completed\": 5}, "
				   "\"mkdir\": {\"started\": 4, \"completed\": 4}}";
	/* the rows of learned, mkdir and browse: two tables (latency per kind, the mix), and
	 * the settings' (every kind, always) */
	static const struct {
		const char *config, *step;
		size_t learned, mkdir, browse;
	} cases[] = {
		{"\"rate\": 331", both, 3, 3, 3}, /* built-in, 'learned' started all the same */
		{replay, both, 3, 3, 1},	  /* a replay, mkdir started though weight 0 */
		/* a built-in run that never started 'learned': only its settings' row */
		{"\"rate\": 331", "\"seconds\": 10, \"all\": {\"started\": 5, \"completed\": 5}", 1,
		 3, 3}, /* mkdir: weighed by default */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mem m = {0};
		struct pv_results_run *run;
		struct pv_buf page = PV_BUF_INIT;

		pv_buf_addstr(mem_file(&m, "manifest.json"),
			      "{\"manifest_version\": 1, \"run_id\": \"r\", \"driver\": {\"name\": "
			      "\"builtin\"}, \"steps\": [{\"step\": 1, \"users\": 10}]}");
		load_json(mem_file(&m, "load.json"), 1, cases[i].config, cases[i].step);
		run = mem_load(&m);
		ck_assert_int_eq(pv_report_page(run, &page), PV_OK);
		ck_assert_uint_eq(count(page.data, "<th scope=\"row\">learned</th>"),
				  cases[i].learned);
		ck_assert_uint_eq(count(page.data, "<th scope=\"row\">mkdir</th>"), cases[i].mkdir);
		ck_assert_uint_eq(count(page.data, "<th scope=\"row\">browse</th>"),
				  cases[i].browse);
		pv_buf_release(&page, 0);
		pv_results_free(run);
		mem_free(&m);
	}
}
END_TEST

/* ---- the sweep's bar chart (pv_plot_bars) ---- */

/* The part of svg from the bar labelled name (as escaped) to its end, in a buffer the next
 * call overwrites. */
static const char *bar(const char *svg, const char *name)
{
	static char g[2048];
	char start[256];
	const char *at, *end;

	snprintf(start, sizeof(start), "<g class=\"bar\" data-name=\"%s\"", name);
	ck_assert_msg((at = strstr(svg, start)) != NULL, "no bar %s", name);
	ck_assert_ptr_nonnull(end = strstr(at, "</g>"));
	ck_assert_int_lt(end - at, sizeof(g));
	snprintf(g, sizeof(g), "%.*s", (int)(end - at), at);
	return g;
}

/* Whatever the values, every number the SVG holds is finite, every coordinate is inside its
 * 960-wide box, and what the bars draw is on the axis (x from 300 to 930: a bar is never
 * wider than 630 nor of a negative width, a whisker never leaves the axis); the axis has
 * from 2 to 50 ticks, on it, each labelled with a finite number, increasing: how many. */
static size_t bars_sane(const char *svg)
{
	static const char *const attrs[] = {" x=\"", " x1=\"", " x2=\"", " width=\""};
	static const char tick[] = "stroke=\"#ddd\"/><text x=\"";
	const char *p;
	char *end;
	double last = -1;
	size_t ticks = 0;

	for (const char *const *w = (const char *const[]){"nan", "inf", NULL}; *w; w++) {
		p = strcasestr(svg, *w);
		ck_assert_msg(!p, "not a number: ...%.60s", p - (p - svg > 40 ? 40 : p - svg));
	}
	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++)
		for (p = strstr(svg, attrs[a]); p; p = strstr(p + 1, attrs[a])) {
			double v = strtod(p + strlen(attrs[a]), &end);

			ck_assert_msg(*end == '"' && v >= 0 && v <= 960, "%s%.20s", attrs[a],
				      p + strlen(attrs[a]));
		}
	for (p = strstr(svg, "<rect x=\""); p; p = strstr(p + 1, "<rect x=\"")) {
		double w;

		ck_assert_msg(strncmp(p, "<rect x=\"300\"", 13) == 0, "%.40s", p);
		ck_assert_ptr_nonnull(p = strstr(p, " width=\""));
		w = strtod(p + 8, NULL);
		ck_assert_msg(w >= 0 && w <= 630, "a bar %g wide", w);
	}
	/* whiskers: "M x y H x M x y V y M x y V y" */
	for (p = strstr(svg, " d=\""); p; p = strstr(p + 1, " d=\"")) {
		char cmd = 0;
		int arg = 0;

		for (const char *q = p + 4; *q != '"';) {
			double v;

			if (*q == 'M' || *q == 'H' || *q == 'V') {
				cmd = *q++;
				arg = 0;
				continue;
			}
			if (*q == ' ') {
				q++;
				continue;
			}
			v = strtod(q, &end);
			ck_assert_msg(end > q, "path %.80s", p);
			if (cmd == 'H' || (cmd == 'M' && arg == 0))
				ck_assert_msg(v >= 300 && v <= 930, "a whisker at x %g: %.80s", v,
					      p);
			else
				ck_assert_msg(v >= 0 && v <= 2000, "a whisker at y %g: %.80s", v,
					      p);
			arg++;
			q = end;
		}
	}
	for (p = strstr(svg, tick); p; p = strstr(p + 1, tick)) {
		double x = strtod(p + strlen(tick), &end), v;

		ck_assert_msg(x >= 300 && x <= 930, "a tick at x %g", x);
		v = strtod(strchr(end, '>') + 1, NULL);
		ck_assert_msg(isfinite(v) && v > last, "tick %g after %g", v, last);
		last = v;
		ticks++;
	}
	ck_assert_uint_ge(ticks, 2);
	ck_assert_uint_le(ticks, 50);
	return ticks;
}

/* One g.bar per label, its name and value; the labels escaped (markup, quotes, a
 * bidirectional control shown as \u202e); bars and whiskers where the axis puts them;
 * whiskers only where both ends are finite; a condition with no value an empty bar. */
START_TEST(bars_drawn)
{
	static const char *const labels[] = {"baseline", "case sensitive=yes",
					     "x\xe2\x80\xae<script>alert(1)</script>&\"'", "gone",
					     "open-ended"};
	static const double v[] = {100, 150.25, 90, NAN, 10}, lo[] = {80, 120, NAN, NAN, 5},
			    hi[] = {120, 290, 100, NAN, INFINITY};
	static const bool filled[] = {false, true, false, false, false};
	static const char evil[] = "x\\u202e&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;";
	struct pv_buf b = PV_BUF_INIT;
	const char *g;

	pv_plot_bars(&b, "sweep", "Files <per> second", "files/s", labels, v, lo, hi, filled, 5);
	ck_assert(!pv_buf_failed(&b));
	ck_assert_uint_eq(count(b.data, "<g class=\"bar\""), 5);
	ck_assert_uint_eq(count(b.data, "<path class=\"wh\""), 2);
	ck_assert_ptr_nonnull(strstr(b.data, "<title id=\"sweep-t\">Files &lt;per&gt; second"));
	/* the axis: the highest end, 290, and 5% of room make 304.5, in steps of 100 (about
	 * six): 0 to 400 over the 630 pixels from x = 300 to 930; a bar of 100 is 157.5 wide,
	 * its whisker from 80 (x = 426) to 120 (489) */
	ck_assert_uint_eq(bars_sane(b.data), 5);
	ck_assert_ptr_nonnull(strstr(b.data, ">400</text>"));
	g = bar(b.data, "baseline");
	ck_assert_ptr_nonnull(strstr(g, "data-value=\"100\""));
	ck_assert_ptr_nonnull(strstr(g, ">baseline</text>"));
	ck_assert_ptr_nonnull(strstr(g, "width=\"157.5\""));
	ck_assert_ptr_nonnull(strstr(g, "fill=\"#999\"")); /* the baseline: grey */
	ck_assert_ptr_nonnull(strstr(g, "d=\"M426.0 53.0H489.0"));
	g = bar(b.data, "case sensitive=yes");
	ck_assert_ptr_nonnull(strstr(g, "data-value=\"150.25\""));
	ck_assert_ptr_nonnull(strstr(g, "width=\"236.6\"")); /* 630 * 150.25 / 400 = 236.64 */
	ck_assert_ptr_nonnull(strstr(g, "fill=\"#1f5fa8\""));
	ck_assert_ptr_nonnull(strstr(g, "class=\"wh\""));
	g = bar(b.data, evil);
	ck_assert_ptr_nonnull(strstr(g, "data-value=\"90\""));
	ck_assert_ptr_nonnull(strstr(g, ">x\\u202e&lt;script&gt;"));
	ck_assert_ptr_nonnull(strstr(g, "fill=\"#fff\""));
	ck_assert_ptr_null(strstr(g, "class=\"wh\"")); /* lo NAN */
	ck_assert_ptr_null(strstr(b.data, "<script"));
	ck_assert_ptr_null(strstr(b.data, "\xe2\x80\xae"));
	ck_assert_ptr_null(strstr(b.data, "&\""));
	g = bar(b.data, "gone");
	ck_assert_ptr_nonnull(strstr(g, "width=\"0.0\""));
	ck_assert_ptr_null(strstr(g, "class=\"wh\""));
	g = bar(b.data, "open-ended");
	ck_assert_ptr_null(strstr(g, "class=\"wh\"")); /* hi infinite */
	pv_buf_release(&b, 0);
}
END_TEST

/* The axis ends and stays finite, and every bar and whisker stays in the box, whatever the
 * values: huge, 0, negative, NaN, infinite, tiny. */
START_TEST(bars_ends)
{
	static const char *const labels[] = {"a", "b"};
	static const struct {
		double v[2], lo[2], hi[2];
	} cases[] = {
		{{DBL_MAX, 5}, {1e300, 4}, {DBL_MAX, 6}},
		{{1e300, 5}, {-DBL_MAX, 4}, {1e308, 6}},
		{{0, 0}, {0, 0}, {0, 0}},
		{{-1, -5}, {-3, -10}, {-0.5, -1}},
		{{-DBL_MAX, 3}, {-DBL_MAX, 2}, {-1e300, 4}},
		{{NAN, NAN}, {NAN, NAN}, {NAN, NAN}},
		{{INFINITY, -INFINITY}, {INFINITY, 1}, {INFINITY, 2}},
		{{1e-300, 2e-300}, {0, 1e-300}, {2e-300, 3e-300}},
		{{5e-324, 0}, {0, 0}, {5e-324, 0}},
	};
	struct pv_buf b = PV_BUF_INIT;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pv_buf_reset(&b);
		pv_plot_bars(&b, "s", "t", "u", labels, cases[i].v, cases[i].lo, cases[i].hi, NULL,
			     2);
		ck_assert(!pv_buf_failed(&b));
		ck_assert_uint_eq(count(b.data, "<g class=\"bar\""), 2);
		bars_sane(b.data);
	}
	pv_buf_release(&b, 0);
}
END_TEST

/* A label is cut to 40 bytes on the chart (data-name keeps it whole), never inside a
 * character: 39 letters and an 'é' (bytes 40 and 41) show as the 39 letters; so with U+202E
 * (3 bytes) and an emoji (4) across the cut. */
START_TEST(bars_label_cut)
{
	static const char *const labels[] = {
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9z",
		"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\xe2\x80\xae"
		"z",
		"ccccccccccccccccccccccccccccccccccccc\xf0\x9f\x98\x80z",
	};
	static const double v[] = {1, 2, 3};
	struct pv_buf b = PV_BUF_INIT;

	pv_plot_bars(&b, "s", "t", "u", labels, v, NULL, NULL, NULL, 3);
	ck_assert(!pv_buf_failed(&b));
	ck_assert_ptr_nonnull(strstr(b.data, "data-name=\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					     "\xc3\xa9z\""));
	ck_assert_ptr_nonnull(strstr(b.data, ">aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</text>"));
	ck_assert_ptr_nonnull(strstr(b.data, ">bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb</text>"));
	ck_assert_ptr_nonnull(strstr(b.data, ">ccccccccccccccccccccccccccccccccccccc</text>"));
	ck_assert_ptr_null(strstr(b.data, "\xef\xbf\xbd")); /* U+FFFD */
	pv_buf_release(&b, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("hostile");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, watch_bounds);
	tcase_add_test(tc, plot_ends);
	tcase_add_test(tc, report_huge_time);
	tcase_add_test(tc, fifo);
	tcase_add_test(tc, header_linear);
	tcase_add_test(tc, ops_linear);
	tcase_add_test(tc, bytes_caps);
	tcase_add_test(tc, files_cap);
	tcase_add_test(tc, json_caps);
	tcase_add_test(tc, memory_caps);
	tcase_add_test(tc, compare_linear);
	tcase_add_test(tc, number_casts);
	tcase_add_test(tc, report_bidi);
	tcase_add_test(tc, kind_rows);
	suite_add_tcase(s, tc);
	tc = tcase_create("bars");
	tcase_add_test(tc, bars_drawn);
	tcase_add_test(tc, bars_ends);
	tcase_add_test(tc, bars_label_cut);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pv_unit_run(suite());
}
