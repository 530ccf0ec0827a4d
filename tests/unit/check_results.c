/* tests/unit/check_results.c: results/ (a run's folder read back, the statistics, compare, the
 * bottleneck hint) and the pages made of it (report/, util/plot.c).
 *
 * The statistics are checked against published values: normal and Student's t quantiles
 * (any table), the exact Poisson intervals (Garwood 1936; the table in Ulm 1990), the
 * Clopper-Pearson and Wilson intervals of 5 of 10, Newcombe's (1998) examples of the interval
 * on a difference of proportions, and the distribution-free interval on a median of 100
 * values (the 40th to the 61st, any table of order statistics). Runs are made here: a run
 * folder in a temporary directory for the reader, runs in memory for compare and the hint,
 * each with a known answer.
 *
 * PV_RESULTS_SAMPLES=DIR build/unit/check_results writes the fixture's report.html into DIR,
 * to look at. */
#include <check.h>

#include "tests/unit/alloc.h"
#include "tests/unit/unit.h"
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/line.h"
#include "load/report.h"
#include "load/stats.h"
#include "report/html.h"
#include "report/report.h"
#include "results/compare.h"
#include "results/copy.h"
#include "results/results.h"
#include "util/stats.h"
#include "util/file.h"
#include "util/err.h"

#define near(a, b, tol)                                                                            \
	ck_assert_msg(fabs((a) - (b)) <= (tol), "%s = %.6f, not %.6f", #a, (double)(a), (double)(b))

/* ---- a run folder on disk ---- */

static const char manifest[] =
	"{\"manifest_version\": 1, \"provision\": \"9.9.9\", \"run_id\": \"r1\", \"lab\": \"t\","
	" \"playbook\": {\"path\": \"/p/lab.yaml\", \"sha256\": \"ab\"}, \"status\": \"done\","
	" \"exit_code\": 0, \"error\": null, \"started\": \"2026-01-01T00:00:00.000Z\","
	" \"ended\": \"2026-01-01T00:01:00.000Z\","
	" \"driver\": {\"name\": \"builtin\", \"min_users\": 10, \"max_users\": 20, \"step\": 10,"
	" \"duration\": 4, \"warmup\": 1, \"timeout\": 0, \"client_command\": null,"
	" \"controller_command\": null, \"steps\": [{\"users\": 10}, {\"users\": 20}]},"
	" \"hosts\": [{\"name\": \"srv\", \"role\": \"server\", \"address\": \"198.18.0.20\","
	" \"version\": \"Version 4.17.12-Debian;Linux 6.1.0-1\"}, {\"name\": \"cli1\", \"role\":"
	" \"client\", \"address\": \"198.18.0.31\", \"version\": \"Linux 6.1.0-1\"}],"
	" \"watch\": {\"interval\": 1, \"error\": null},"
	" \"server_config\": \"[global]\\n\\tserver signing = mandatory\\n\\tsecurity = ADS\\n"
	"[fsroot1]\\n\\tpath = /srv/provision/fsroot1\\n\","
	" \"steps\": [{\"step\": 1, \"users\": 10, \"start\": \"2026-01-01T00:00:00.500Z\","
	" \"end\": \"2026-01-01T00:00:05.500Z\", \"seconds\": 5, \"ended\": \"duration\","
	" \"hosts\": [{\"name\": \"cli1\", \"role\": \"client\", \"users\": 10, \"state\": "
	"\"done\","
	" \"exit\": 0, \"error\": null}]},"
	" {\"step\": 2, \"users\": 20, \"start\": \"2026-01-01T00:00:06.000Z\","
	" \"end\": \"2026-01-01T00:00:11.000Z\", \"seconds\": 5, \"ended\": \"host lost\","
	" \"hosts\": [{\"name\": \"cli1\", \"role\": \"client\", \"users\": 20, \"state\": "
	"\"lost\","
	" \"exit\": null, \"error\": \"no figures for 10 s: lost\"}]}]}";

/* load.json with step 1 as the lines below make it (4 measured intervals of browse: 3
 * completed each, 2 ms, 4 ms and 1 s), step 2 with figures and no lines */
static const char loadjson[] =
	"{\"version\": 1, \"config\": {\"rate\": 3310, \"late\": 1, \"overload\": 1, \"interval\": "
	"1,"
	" \"seed\": 7, \"scenarios\": {\"browse\": {\"weight\": 150, \"limit\": 0.5}}},"
	" \"steps\": [{\"users\": 10, \"seconds\": 4, \"connected\": 10, \"not_connected\": 0,"
	" \"clients_lost\": 0, \"scen_per_s\": 3, \"expected_per_s\": 9.19, \"carried\": true,"
	" \"all\": {\"started\": 12, \"completed\": 12, \"errors\": 0, \"late\": 0,"
	" \"over_limit\": 4, \"overloaded\": 4, \"overload_pct\": 33.3, \"latency\": {\"n\": 12,"
	" \"median_ms\": 4, \"p95_ms\": 1000, \"max_ms\": 1000}},"
	" \"kinds\": {\"browse\": {\"started\": 12, \"completed\": 12, \"errors\": 0, \"late\": 0,"
	" \"over_limit\": 4, \"overloaded\": 4, \"overload_pct\": 33.3, \"latency\": {\"n\": 12,"
	" \"median_ms\": 4, \"p95_ms\": 1000, \"max_ms\": 1000}}},"
	" \"clients\": [{\"name\": \"cli1\", \"cpu_driver\": 12.5, \"cpu_host\": 30}],"
	" \"ops\": {\"create\": 36, \"close\": 36, \"query_directory\": 24}},"
	" {\"users\": 20, \"seconds\": 4, \"connected\": 20, \"not_connected\": 0,"
	" \"clients_lost\": 1, \"scen_per_s\": 5, \"expected_per_s\": 18.4, \"carried\": false,"
	" \"all\": {\"started\": 20, \"completed\": 20, \"errors\": 2, \"late\": 0,"
	" \"over_limit\": 0, \"overloaded\": 0, \"overload_pct\": 0, \"latency\": {\"n\": 20,"
	" \"median_ms\": 3, \"p95_ms\": 5, \"max_ms\": 6}}, \"kinds\": {}}],"
	" \"answer\": {\"users\": 10, \"step\": 1, \"line\": \"the server carried 10 users\"}}";

static const char watch_csv[] = "seconds,phase,cpu,usr,smbd,mem_used,rx_eth0\n"
				"0.5,warmup,90.0,50.0,10.0,100.0,1.0\n"
				"1.5,measure,10.0,5.0,20.0,110.0,\n"
				"2.5,measure,30.0,15.0,40.0,120.0,3.0\n"
				"3.5,measure,20.0,10.0,30.0,130.0,4.0\n";

static void put(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* Interval i of cli1's browse: 3 completed (2 ms, 4 ms, 1 s) */
static void line(struct pv_buf *b, unsigned i)
{
	struct pv_load_figs f;

	memset(&f, 0, sizeof(f));
	f.seq = i;
	f.secs = 1;
	f.connected = 10;
	f.threads = 1;
	f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].started = 3; /* completed: the histogram's 3 */
	f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].over_limit =
		f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].overloaded = 1;
	pv_load_hist_add(&f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].lat, 0.002);
	pv_load_hist_add(&f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].lat, 0.004);
	pv_load_hist_add(&f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].lat, 1);
	ck_assert_int_eq(pv_load_line_encode(&f, b), PV_OK);
}

static char tmpdir[64];

static void make_run(void)
{
	struct pv_load_ready rd = {.connected = 9, .failed = 1, .first = "cli1-u3: refused"};
	struct pv_buf b = PV_BUF_INIT;
	char path[512];

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pv-results.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	put(tmpdir, "manifest.json", manifest);
	put(tmpdir, "load.json", loadjson);
	snprintf(path, sizeof(path), "%s/step-01", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/step-01/cli1", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/step-02", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	put(tmpdir, "step-01/watch.csv", watch_csv);
	/* the warm-up's interval (1) is not counted; a line of another kind is skipped */
	ck_assert_int_eq(pv_load_ready_encode(&rd, &b), PV_OK);
	for (unsigned i = 1; i <= 5; i++)
		line(&b, i);
	pv_buf_addstr(&b, "ops {\"n\":1}\n");
	put(tmpdir, "step-01/cli1/load.jsonl", b.data);
	pv_buf_release(&b, 0);
	put(tmpdir, "step-02/watch.csv", "seconds,phase,cpu\n1.0,measure,x\n");
	snprintf(path, sizeof(path), "%s/step-02/cli1", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	put(tmpdir, "step-02/cli1/stderr", "\nprovision load: killed\nmore\n");
}

static void rm_run(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(read_run)
{
	struct pv_results_run *run = NULL;
	const struct pv_results_step *s1, *s2;
	double m, p, x;

	make_run();
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_str_eq(run->id, "r1");
	ck_assert_str_eq(run->driver, "builtin");
	ck_assert_str_eq(run->provision, "9.9.9");
	ck_assert_uint_eq(run->warmup, 1);
	ck_assert_uint_eq(run->planned, 2);
	ck_assert_uint_eq(run->nhosts, 2);
	ck_assert_str_eq(run->hosts[0].version, "Version 4.17.12-Debian;Linux 6.1.0-1");
	ck_assert_ptr_nonnull(strstr(run->server_config, "server signing = mandatory"));
	ck_assert_uint_eq(run->nsteps, 2);
	s1 = &run->steps[0];
	s2 = &run->steps[1];
	near(s1->start, 1767225600.5, 1e-6); /* 2026-01-01T00:00:00.5Z */
	ck_assert_str_eq(s2->ended, "host lost");
	ck_assert_str_eq(s2->hosts[0].error, "no figures for 10 s: lost");
	ck_assert_int_eq(s2->hosts[0].exit, -1);
	ck_assert_str_eq(s2->hosts[0].said, "provision load: killed");
	/* load.json */
	ck_assert(run->has_load);
	ck_assert_uint_eq(run->cfg.rate, 3310);
	ck_assert(run->cfg.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].limit == 0.5);
	ck_assert(run->cfg.kind[PV_PLAYBOOK_WORKLOAD_UPLOAD].limit == 2); /* the default */
	ck_assert_int_eq(run->answer_step, 0);
	ck_assert_uint_eq(run->answer_users, 10);
	ck_assert(s1->carried && !s2->carried);
	ck_assert_uint_eq(s1->load.all.lat.n, 12);
	near(s1->load.all.lat.p95, 1, 1e-12);
	ck_assert_uint_eq(s1->load.nclients, 1);
	near(s1->load.clients[0].cpu, 12.5, 0);
	ck_assert(isnan(s1->load.clients[0].lag_p95));
	ck_assert(s1->has_ops && s1->load.all.n.ops[PV_LOAD_OP_CREATE] == 36 && !s1->ops_other);
	ck_assert_uint_eq(s1->load.all.n.ops[PV_LOAD_OP_QUERY_DIRECTORY], 24);
	ck_assert(!s2->has_ops);
	ck_assert_ptr_null(s2->load.clients);
	/* the clients' lines: 4 measured intervals of 3, matching load.json's 12 */
	ck_assert(s1->has_hist &&
		  pv_load_hist_count(&s1->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].n.lat));
	ck_assert_uint_eq(s1->intervals, 4);
	ck_assert_uint_eq(pv_load_hist_count(&s1->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].n.lat),
			  12);
	ck_assert_uint_eq(pv_load_hist_count(&s1->load.all.n.lat), 12);
	near(s1->load.all.n.lat.max, 1, 0);
	ck_assert_str_eq(s1->ready_error, "cli1-u3: refused");
	ck_assert(!s2->has_hist);
	/* the watch: the warm-up row left out of the figures, an empty cell too */
	ck_assert_ptr_nonnull(s1->srv);
	ck_assert_uint_eq(s1->srv->n, 4);
	ck_assert_int_eq(pv_results_watch_col(s1->srv, "rx_eth0"), 4);
	ck_assert_int_eq(pv_results_watch_col(s1->srv, "net_rx"), -1);
	ck_assert(pv_results_watch_stat(s1->srv, "cpu", &m, &p, &x));
	near(m, 20, 1e-12);
	near(p, 30, 0);
	near(x, 30, 0);
	ck_assert(pv_results_watch_stat(s1->srv, "rx_eth0", &m, &p, &x));
	near(m, 3.5, 1e-12);
	ck_assert(!pv_results_watch_stat(s1->srv, "iowait", &m, &p, &x));
	ck_assert_ptr_null(s1->dc);
	/* step 2's watch is not a CSV of numbers: left out with a note */
	ck_assert_ptr_null(s2->srv);
	ck_assert_ptr_nonnull(run->notes);
	ck_assert_ptr_nonnull(strstr(run->notes, "step-02/watch.csv: line 2: 'x' is not a number"));
	pv_results_free(run);
	rm_run();
}
END_TEST

START_TEST(read_refused)
{
	struct pv_results_run *run = NULL;
	char path[512], link[512];

	make_run();
	/* lines that do not add up to load.json's counts: the histograms are dropped */
	{
		struct pv_buf b = PV_BUF_INIT;

		line(&b, 2);
		put(tmpdir, "step-01/cli1/load.jsonl", b.data);
		pv_buf_release(&b, 0);
	}
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert(!run->steps[0].has_hist && !pv_load_hist_count(&run->steps[0].load.all.n.lat));
	ck_assert_ptr_nonnull(strstr(run->notes, "do not add up"));
	pv_results_free(run);
	/* a line of figures that is wrong is named */
	put(tmpdir, "step-01/cli1/load.jsonl", "{\"load\":1,\"i\":2}\n");
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_ptr_nonnull(strstr(run->notes, "step-01/cli1/load.jsonl: line 1"));
	pv_results_free(run);
	/* a link in the folder is not followed */
	snprintf(path, sizeof(path), "%s/step-01/watch.csv", tmpdir);
	snprintf(link, sizeof(link), "%s/elsewhere.csv", tmpdir);
	ck_assert_int_eq(rename(path, link), 0);
	ck_assert_int_eq(symlink(link, path), 0);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_ptr_null(run->steps[0].srv);
	ck_assert_ptr_nonnull(strstr(run->notes, "step-01/watch.csv"));
	pv_results_free(run);
	/* load.json of other steps: no load figures, the run still reads */
	put(tmpdir, "load.json", "{\"version\": 1, \"steps\": [{\"users\": 11}]}");
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert(!run->has_load);
	ck_assert_ptr_nonnull(strstr(run->notes, "has 11 users, the manifest's 10"));
	pv_results_free(run);
	/* not a run's folder */
	snprintf(path, sizeof(path), "%s/manifest.json", tmpdir);
	unlink(path);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "no manifest.json"));
	put(tmpdir, "manifest.json", "{\"manifest_version\": 2}");
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "version 2"));
	put(tmpdir, "manifest.json", "[1,");
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_ECONFIG);
	ck_assert_int_eq(pv_results_read("/nonexistent/run", &run), PV_ECONFIG);
	rm_run();
}
END_TEST

/* A watch CSV's header: a column is found by its name, so a name twice is refused */
START_TEST(watch_header)
{
	struct pv_results_watch *w = NULL;

	ck_assert_int_eq(pv_results_parse_watch("seconds,phase,cpu,cpu\n1,measure,1,2\n",
						strlen("seconds,phase,cpu,cpu\n1,measure,1,2\n"),
						&w),
			 PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "'cpu' twice"));
	ck_assert_int_eq(
		pv_results_parse_watch("seconds,phasep,cpu\n", strlen("seconds,phasep,cpu\n"), &w),
		PV_ECONFIG);
	ck_assert_int_eq(
		pv_results_parse_watch("seconds,phase,,cpu\n", strlen("seconds,phase,,cpu\n"), &w),
		PV_ECONFIG);
	ck_assert_int_eq(pv_results_parse_watch("seconds,phase,cpu\n1,measure\n",
						strlen("seconds,phase,cpu\n1,measure\n"), &w),
			 PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "line 2 has 2 cells, the header 3"));
	ck_assert_int_eq(pv_results_parse_watch("seconds,phase,cpu\n1,measure,5\n\n",
						strlen("seconds,phase,cpu\n1,measure,5\n\n"), &w),
			 PV_OK);
	ck_assert_uint_eq(w->n, 1);
	pv_results_watch_free(w);
}
END_TEST

/* The server's configuration as testparm gives it, one setting at a time: sections, the
 * blanks around keys and values, comments and lines that are not settings. */
START_TEST(config_settings)
{
	static const char conf[] = "# made by testparm\n[global]\n\tserver signing = mandatory\n"
				   "\tsecurity=ADS \n; a comment = no\n   no equals sign\n"
				   "[homes]\n\tpath =\t/home/%U\n\tempty =\n[half = open\nlast = x";
	static const char *const want[][3] = {{"global", "server signing", "mandatory"},
					      {"global", "security", "ADS "},
					      {"homes", "path", "/home/%U"},
					      {"homes", "empty", ""},
					      {"homes", "[half", "open"},
					      {"homes", "last", "x"}};
	struct pv_results_setting s = {"global", NULL, NULL, 6, 0, 0};
	size_t pos = 0, n = 0;
	char got[3][64];

	while (pv_results_config_next(conf, &pos, &s)) {
		ck_assert_uint_lt(n, sizeof(want) / sizeof(want[0]));
		snprintf(got[0], sizeof(got[0]), "%.*s", s.nsection, s.section);
		snprintf(got[1], sizeof(got[1]), "%.*s", s.nkey, s.key);
		snprintf(got[2], sizeof(got[2]), "%.*s", s.nvalue, s.value);
		for (int k = 0; k < 3; k++)
			ck_assert_str_eq(got[k], want[n][k]);
		n++;
	}
	ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
	ck_assert_uint_eq(pos, sizeof(conf) - 1);
	pos = 0;
	ck_assert(!pv_results_config_next(NULL, &pos, &s));
	ck_assert(!pv_results_config_next("", &pos, &s));
}
END_TEST

START_TEST(times)
{
	near(pv_results_time("1970-01-01T00:00:01.250Z"), 1.25, 1e-9);
	near(pv_results_time("2026-11-30T12:15:00.000Z"), 1796040900, 1e-6);
	ck_assert(isnan(pv_results_time("2026-11-30 12:15:00")));
	ck_assert(isnan(pv_results_time("2026-11-30T12:15:00.000Zx")));
	ck_assert(isnan(pv_results_time(NULL)));
}
END_TEST

/* ---- a capacity run: load.json as load/report.c writes it (version 2) ---- */

/* One step of the fixture: users, whether --refine added it, its logons (users who could not
 * log on, tries again, each logon's time), client cli2's busiest loop (% of a core) and loop
 * lag (cli1 stays at 30% and 2 ms), the share of completed scenarios that started late, the
 * server's and the DC's CPU. */
struct cap {
	unsigned users;
	bool refine;
	unsigned failed, retries;
	double logon_s;
	double top2, lag2;
	double late;
	double srv_cpu, dc_cpu;
};

static const char *const cap_clients[] = {"cli1", "cli2"};

/* Step c as `run` summarizes it: 10 intervals of 1 s, each with users / 5 browse scenarios
 * completed in 20 ms (late ones counted overloaded) and one unserved per user without a
 * connection; the logons; the two clients' own figures. */
static void cap_step(const struct cap *c, const struct pv_playbook_workload *cfg,
		     struct pv_load_summary *out, struct pv_load_client *cl)
{
	struct pv_load_step ps;
	struct pv_load_client_acc acc[2];

	pv_load_step_init(&ps, c->users);
	ps.cpu = c->srv_cpu;
	ps.dc_cpu = c->dc_cpu;
	ps.dc_samba = isnan(c->dc_cpu) ? NAN : 2 * c->dc_cpu;
	memset(acc, 0, sizeof(acc));
	for (unsigned i = 1; i <= 10; i++) {
		struct pv_load_figs f;
		struct pv_load_counts *b = &f.kind[PV_PLAYBOOK_WORKLOAD_BROWSE];
		unsigned done = c->users / 5, late = (unsigned)llround(c->late * done);

		memset(&f, 0, sizeof(f));
		f.seq = i;
		f.secs = 1;
		f.connected = c->users - c->failed;
		f.failed = c->failed;
		b->started = done + c->failed;
		b->unserved = c->failed;
		b->late = late;
		b->overloaded = late + c->failed;
		for (unsigned k = 0; k < done; k++)
			pv_load_hist_add(&b->lat, 0.020);
		pv_load_step_add(&ps, &f);
		for (int n = 0; n < 2; n++) {
			struct pv_load_figs cf;

			memset(&cf, 0, sizeof(cf));
			cf.secs = 1;
			cf.threads = 2;
			cf.cpu_top = n ? c->top2 : 30;
			cf.cpu = 1.5 * cf.cpu_top;
			cf.host_cpu = cf.cpu / 4;
			for (int k = 0; k < 100; k++)
				pv_load_hist_add(&cf.lag, n ? c->lag2 : 0.002);
			pv_load_client_add(&acc[n], &cf);
		}
	}
	ps.logon.failed = c->failed;
	ps.logon.retries = c->retries;
	for (unsigned k = 0; k < c->users - c->failed; k++)
		pv_load_hist_add(&ps.logon.lat, c->logon_s);
	pv_load_summarize(&ps, cfg, out);
	for (int n = 0; n < 2; n++)
		pv_load_client_of(&acc[n], cap_clients[n], &cl[n]);
	pv_load_summary_clients(out, cl, 2);
}

/* A run folder of steps caps[0..n) in tmpdir: manifest.json (the steps, refine marked, each
 * client done) and load.json as the built-in driver writes it. */
static void cap_run(const struct cap *caps, size_t n)
{
	struct pv_playbook_workload cfg;
	struct pv_load_summary sums[8];
	struct pv_load_client cl[8][2];
	struct pv_load_results res;
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_uint_le(n, 8);
	pv_playbook_workload_defaults(&cfg);
	cfg.rate = 3310;
	for (size_t i = 0; i < n; i++)
		cap_step(&caps[i], &cfg, &sums[i], cl[i]);
	res = (struct pv_load_results){&cfg, sums, n, "srv, run cap"};
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/pv-results.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_int_eq(pv_load_report_json(&res, &b), PV_OK);
	put(tmpdir, "load.json", b.data);
	pv_buf_reset(&b);
	pv_buf_addstr(&b, "{\"manifest_version\": 1, \"run_id\": \"cap\", \"lab\": \"t\", "
			  "\"status\": \"done\", \"exit_code\": 0, \"driver\": {\"name\": "
			  "\"builtin\", \"duration\": 10, \"warmup\": 0, \"steps\": [");
	for (size_t i = 0; i < n; i++)
		pv_buf_addf(&b, "%s{\"users\": %u, \"refine\": %s}", i ? ", " : "", caps[i].users,
			    caps[i].refine ? "true" : "false");
	pv_buf_addstr(&b, "]}, \"steps\": [");
	for (size_t i = 0; i < n; i++)
		pv_buf_addf(
			&b,
			"%s{\"step\": %zu, \"users\": %u, \"refine\": %s, \"ended\": "
			"\"duration\", \"hosts\": [{\"name\": \"cli1\", \"role\": \"client\", "
			"\"users\": %u, \"state\": \"done\", \"exit\": 0}, {\"name\": \"cli2\", "
			"\"role\": \"client\", \"users\": %u, \"state\": \"done\", \"exit\": 0}]}",
			i ? ", " : "", i + 1, caps[i].users, caps[i].refine ? "true" : "false",
			caps[i].users / 2, caps[i].users - caps[i].users / 2);
	pv_buf_addstr(&b, "]}");
	put(tmpdir, "manifest.json", b.data);
	/* the server's and the DC's watch: their CPU flat over the step */
	for (size_t i = 0; i < n; i++) {
		char rel[160];

		snprintf(rel, sizeof(rel), "%s/step-%02zu", tmpdir, i + 1);
		ck_assert_int_eq(mkdir(rel, 0755), 0);
		for (int dc = 0; dc < 2; dc++) {
			double cpu = dc ? caps[i].dc_cpu : caps[i].srv_cpu;

			pv_buf_reset(&b);
			pv_buf_addf(&b,
				    "seconds,phase,cpu,samba\n1,measure,%g,%g\n2,measure,%g,%g\n",
				    cpu, 2 * cpu, cpu, 2 * cpu);
			snprintf(rel, sizeof(rel), "step-%02zu/watch%s.csv", i + 1,
				 dc ? "-dc" : "");
			put(tmpdir, rel, b.data);
		}
	}
	pv_buf_release(&b, 0);
}

/* The hint of the run in tmpdir. */
static void cap_hint(struct pv_results_hint *h)
{
	struct pv_results_run *run = NULL;

	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert(run->has_load);
	pv_results_hint(run, h);
	if (getenv("PV_HINT_DEBUG"))
		fprintf(stderr, "%s\n%s\n\n", h->nearest, h->first);
	pv_results_free(run);
}

/* cli2's loop full at 60 users: the step over the answer is the clients', not the server's */
static const struct cap CAP_BOUND[] = {
	{20, false, 0, 0, 0.050, 30, 0.002, 0, 20, 10},
	{40, false, 0, 0, 0.060, 60, 0.002, 0, 35, 20},
	{60, false, 0, 0, 0.070, 95, 0.150, 0, 40, 25},
	{80, false, 0, 0, 0.080, 97, 0.300, 0.1, 50, 30},
};

/* the DC's CPU the highest at the step over the answer, 60 users (5% late) */
static const struct cap CAP_DC[] = {
	{20, false, 0, 0, 0.050, 30, 0.002, 0, 20, 30},
	{40, false, 0, 0, 0.060, 40, 0.002, 0, 35, 60},
	{60, false, 0, 0, 0.200, 50, 0.002, 0.05, 45, 92},
};

/* 20 and 40 users carried; 60 with 3 users who could not log on (their scenarios unserved)
 * and the DC busy; 80 where cli2's loop was full (client-bound); then --refine's 50, carried:
 * the answer is 50, and the step over it 60. */
static const struct cap CAP_LOGONS[] = {
	{20, false, 0, 0, 0.050, 30, 0.002, 0, 20, 10},
	{40, false, 0, 0, 0.060, 40, 0.002, 0, 35, 20},
	{60, false, 3, 4, 0.900, 50, 0.002, 0, 45, 85},
	{80, false, 0, 0, 0.200, 95, 0.150, 0, 50, 40},
	{50, true, 0, 0, 0.070, 45, 0.002, 0, 40, 30},
};

START_TEST(read_capacity)
{
	struct pv_results_run *run = NULL;
	const struct pv_results_step *s3, *s4;

	cap_run(CAP_LOGONS, 5);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_ptr_null(run->notes);
	ck_assert(run->has_load);
	ck_assert_uint_eq(run->nsteps, 5);
	ck_assert(run->steps[4].refine && !run->steps[3].refine);
	/* the answer as load.json says it: the refine step of 50, the step over it 60 */
	ck_assert_int_eq(run->answer_step, 4);
	ck_assert_uint_eq(run->answer_users, 50);
	ck_assert_int_eq(run->first_over, 2);
	ck_assert(!run->answer_at_least);
	ck_assert(isnan(run->client_cores_needed));
	ck_assert_ptr_nonnull(strstr(run->answer, "the server carried 50 users"));
	/* the logons and the unserved scenarios */
	s3 = &run->steps[2];
	ck_assert(s3->has_logon && !s3->carried && !s3->load.client_bound);
	ck_assert_uint_eq(s3->load.logon.n, 57);
	ck_assert_uint_eq(s3->load.logon_n.failed, 3);
	ck_assert_uint_eq(s3->load.logon_n.retries, 4);
	near(s3->load.logon.p95, 0.9, 0.9 * 0.05); /* the bucket's middle */
	ck_assert(s3->load.logon.p95_lo <= 0.9 && s3->load.logon.p95_hi >= 0.9);
	ck_assert_uint_eq(s3->load.all.n.unserved, 30);
	ck_assert_uint_eq(s3->load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE].n.unserved, 30);
	ck_assert_uint_eq(s3->load.failed, 3);
	near(s3->load.all.overload, 100.0 * 30 / (120 + 30), 1e-9);
	near(s3->load.dc_cpu, 85, 1e-9);
	near(s3->load.dc_samba, 170, 1e-9);
	/* the client-bound step: cli2 bound, cli1 not, never carried */
	s4 = &run->steps[3];
	ck_assert(s4->load.client_bound && !s4->carried);
	ck_assert_uint_eq(s4->load.nclients, 2);
	ck_assert_str_eq(s4->load.clients[1].name, "cli2");
	ck_assert(s4->load.clients[1].bound && !s4->load.clients[0].bound);
	near(s4->load.clients[1].cpu_top, 95, 1e-9);
	near(s4->load.clients[1].cpu, 142.5, 1e-9);
	ck_assert_uint_eq(s4->load.clients[1].threads, 2);
	ck_assert(s4->load.clients[1].lag_p95 >= 100 && s4->load.clients[1].lag_p95 < 200);
	near(s4->load.driver_cores, (45 + 142.5) / 100, 1e-9);
	ck_assert(!run->steps[0].load.client_bound && run->steps[0].carried);
	/* the steps users rising: the refine step among the ramp's */
	{
		size_t ord[5], want[] = {0, 1, 4, 2, 3};

		pv_results_by_users(run, ord);
		for (int i = 0; i < 5; i++)
			ck_assert_uint_eq(ord[i], want[i]);
	}
	pv_results_free(run);
	rm_run();
}
END_TEST

/* Edit load.json's text: the first from replaced by to (which must be there). */
static void edit_load(const char *from, const char *to)
{
	char path[512], *text, *at;
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/load.json", tmpdir);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + strlen(to) + 1);
	ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	ck_assert_ptr_nonnull(at = strstr(text, from));
	memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
	memcpy(at, to, strlen(to));
	put(tmpdir, "load.json", text);
	free(text);
}

/* load.json's capacity figures that cannot be are refused, named, and the run reads on
 * without load figures */
START_TEST(read_capacity_refused)
{
	static const struct {
		const char *from, *to, *says;
	} bad[] = {
		/* step 4 is client-bound and not carried: carried too cannot be */
		{"\"carried\": false,\n      \"client_bound\": true",
		 "\"carried\": true,\n      \"client_bound\": true", "carried and client-bound"},
		{"\"client_bound\": true", "\"client_bound\": 1", "\"client_bound\" is not true"},
		{"\"client_bound\": true", "\"client_bound\": false", "but one of its clients"},
		{"\"bound\": true", "\"bound\": \"yes\"", "client cli2's \"bound\""},
		{"\"failed\": 3", "\"failed\": 58", "57 users logged on and 58 could not, of 60"},
		{"\"unserved\": 30", "\"unserved\": 999", "more unserved (999) than started"},
		{"\"first_over\": {\n      \"step\": 3", "\"first_over\": {\n      \"step\": 4",
		 "answer.first_over (step 4, 60 users) is not that step"},
		{"\"step\": 5,\n    \"last_carried\"", "\"step\": 2,\n    \"last_carried\"",
		 "answer (step 2, 50 users) is not a step carried"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pv_results_run *run = NULL;

		cap_run(CAP_LOGONS, 5);
		edit_load(bad[i].from, bad[i].to);
		ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
		ck_assert_msg(!run->has_load, "case %zu read", i);
		ck_assert_msg(run->notes && strstr(run->notes, bad[i].says), "case %zu: %s", i,
			      run->notes ? run->notes : "(no note)");
		for (size_t k = 0; k < run->nsteps; k++)
			ck_assert(!run->steps[k].has_load && !run->steps[k].load.clients);
		ck_assert_int_eq(run->first_over, -1);
		pv_results_free(run);
		rm_run();
	}
}
END_TEST

START_TEST(hint_capacity)
{
	struct pv_results_hint h;

	/* client-bound: which client, its loop and lag; the server carried at least 40 */
	cap_run(CAP_BOUND, 4);
	cap_hint(&h);
	ck_assert_int_eq(h.step, 2);
	ck_assert_ptr_nonnull(strstr(h.nearest, "The first step over the answer, 60 users (step "
						"3), was client-bound: the clients were the limit "
						"there, not the server."));
	ck_assert_ptr_nonnull(strstr(h.nearest, "Client cli2's busiest event loop ran at 95% of a "
						"core (the limit: 90%) and its loop lag p95 was "));
	ck_assert_ptr_nonnull(strstr(h.nearest, "The server carried at least 40 users"));
	ck_assert_ptr_nonnull(strstr(h.nearest, "about 3 client cores would run 60 users"));
	ck_assert_ptr_nonnull(strstr(
		h.nearest, "Of the server and the DC there, the busiest: the server's CPU: 40%"));
	ck_assert_ptr_null(strstr(h.nearest, "nearest its limit"));
	ck_assert_ptr_nonnull(strstr(h.first, "What moved first, at 60 users (step 3): client cli2 "
					      "was the limit (its busiest loop at 95% of a core"));
	rm_run();
	/* logons failed at 60 users, the DC busy there; the refine step's 50 carried */
	cap_run(CAP_LOGONS, 5);
	cap_hint(&h);
	ck_assert_int_eq(h.step, 2);
	ck_assert_ptr_nonnull(strstr(h.nearest,
				     "The first step over the answer is 60 users (step 3: "
				     "overload 20.00%, with errors or users not "
				     "connected)."));
	ck_assert_ptr_nonnull(strstr(h.nearest,
				     "Logons failed there: 3 of 60 users could not log "
				     "on, after 4 tries made again; the logon p95 was "));
	ck_assert_ptr_nonnull(strstr(h.nearest,
				     "30 scenarios were due to users without a "
				     "connection (unserved), 100% of the 30 overloaded. "
				     "Every logon passes through the DC: its CPU was 85%."));
	ck_assert_ptr_nonnull(strstr(h.nearest, "The resource nearest its limit there was the DC's "
						"CPU: 85% of all its cores"));
	/* users rising: 20, 40, 50 (refine), then 60 */
	ck_assert_ptr_nonnull(strstr(h.first,
				     "What moved first, at 60 users (step 3): the DC's "
				     "CPU reached 85%; 3 of 60 users could not log on; the "
				     "logon p95 rose from "));
	ck_assert_ptr_null(strstr(h.first, "cli2")); /* 80 users is past the step looked at */
	rm_run();
	/* no step counted, the only one client-bound: nothing is known of the server */
	cap_run(CAP_BOUND + 2, 1);
	cap_hint(&h);
	ck_assert_int_eq(h.step, 0);
	ck_assert_ptr_nonnull(strstr(h.nearest, "No step counted; the fewest users tried, 60 (step "
						"1), were client-bound: the clients were the limit "
						"there, not the server."));
	ck_assert_ptr_nonnull(strstr(h.nearest, "What the server carries, this run cannot tell"));
	rm_run();
	/* the DC's CPU the highest, nothing else wrong */
	cap_run(CAP_DC, 3);
	cap_hint(&h);
	ck_assert_int_eq(h.step, 2);
	ck_assert_ptr_null(strstr(h.nearest, "Logons failed"));
	ck_assert_ptr_nonnull(strstr(h.nearest,
				     "The resource nearest its limit there was the DC's "
				     "CPU: 92% of all its cores on average (p95 92%): 92% of "
				     "that limit."));
	ck_assert_ptr_nonnull(strstr(h.first, "What moved first, at 60 users (step 3): the DC's "
					      "CPU reached 92%"));
	rm_run();
}
END_TEST

/* ---- runs in memory ---- */

/* A run of driver builtin with steps of users[i], rate[i] scenarios/s over 300 s, overload
 * over[i] percent, latencies around lat[i] seconds (1000 values spread over a few buckets). */
static struct pv_results_run *mem_run(const char *id, size_t n, const unsigned *users,
				      const double *rate, const double *over, const double *lat)
{
	struct pv_results_run *r = pv_results_new();

	ck_assert_ptr_nonnull(r);
	snprintf(r->id, sizeof(r->id), "%s", id);
	snprintf(r->dir, sizeof(r->dir), "/runs/%s", id);
	snprintf(r->driver, sizeof(r->driver), "builtin");
	pv_playbook_workload_defaults(&r->cfg);
	r->has_load = true;
	r->steps = calloc(n, sizeof(*r->steps));
	r->nsteps = n;
	for (size_t i = 0; i < n; i++) {
		struct pv_results_step *s = &r->steps[i];

		s->n = (unsigned)i + 1;
		s->users = users[i];
		s->has_load = true;
		s->load.driver_cores = s->load.dc_cpu = s->load.dc_samba = s->load.cpu = NAN;
		s->load.logon.median = s->load.logon.p95 = NAN;
		s->load.users = users[i];
		s->load.secs = 300;
		s->load.all.n.started = (uint64_t)llround(rate[i] * 300);
		s->load.all.lat.n = s->load.all.n.started;
		s->load.all.n.overloaded =
			(uint64_t)llround(over[i] / 100 * (double)s->load.all.n.started);
		s->load.all.overload = over[i];
		s->load.rate = rate[i];
		s->load.connected = users[i];
		for (int k = 0; k < 1000; k++)
			pv_load_hist_add(&s->load.all.n.lat, lat[i] * (0.8 + 0.4 * k / 1000.0));
		s->has_hist = true;
		s->load.all.lat.median = pv_load_hist_quantile(&s->load.all.n.lat, 0.5);
		s->load.all.lat.p95 = pv_load_hist_quantile(&s->load.all.n.lat, 0.95);
		s->carried = over[i] <= 1;
		if (s->carried) {
			r->answer_step = (long)i;
			r->answer_users = users[i];
		}
	}
	r->first_over = pv_results_first_over(r);
	return r;
}

static const unsigned U[] = {100, 200, 300, 400};
static const double RATE[] = {9.19, 18.39, 27.58, 36.78};
static const double OVER0[] = {0, 0, 0.2, 0.5};
static const double LAT[] = {0.02, 0.02, 0.022, 0.025};

START_TEST(compare_same)
{
	struct pv_results_run *a = mem_run("a", 4, U, RATE, OVER0, LAT),
			      *b = mem_run("b", 4, U, RATE, OVER0, LAT);
	const struct pv_results_run *runs[] = {a, b};
	size_t group[] = {0, 1};
	struct pv_results_cmp *c = NULL;

	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_OK);
	ck_assert_uint_eq(c->nsteps, 4);
	near(c->alpha, 0.05 / 4, 1e-15);
	ck_assert_uint_eq(c->differ, 0);
	ck_assert_uint_eq(c->differ_rate, 0);
	for (size_t s = 0; s < 4; s++)
		for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++) {
			const struct pv_results_cmp_fig *F =
				&c->steps[s].fig[PV_RESULTS_CMP_FIGS + f];

			ck_assert_int_eq(F->verdict, PV_RESULTS_CMP_SAME);
			ck_assert(F->dlo < 0 || (f == PV_RESULTS_CMP_OVERLOAD && F->dlo <= 0));
			ck_assert(F->dhi > 0 || (f == PV_RESULTS_CMP_OVERLOAD && F->dhi >= 0));
		}
	ck_assert_uint_eq(c->groups[1].answer_lo, 400);
	ck_assert_int_eq(c->groups[1].answer_diff, 0);
	ck_assert(!c->groups[1].answer_real);
	ck_assert_str_eq(c->groups[1].answer_why, "the same answer");
	ck_assert_uint_eq(c->nsettings, 0);
	pv_results_cmp_free(c);
	pv_results_free(a);
	pv_results_free(b);
}
END_TEST

/* B is the same server capped: from 300 users it falls behind (fewer scenarios, slower,
 * overloaded) */
START_TEST(compare_capped)
{
	static const double rate_b[] = {9.19, 18.39, 24.0, 26.0}, over_b[] = {0, 0, 12, 35},
			    lat_b[] = {0.02, 0.02, 0.4, 1.5};
	struct pv_results_run *a = mem_run("a", 4, U, RATE, OVER0, LAT),
			      *b = mem_run("b", 4, U, rate_b, over_b, lat_b);
	const struct pv_results_run *runs[] = {a, b};
	size_t group[] = {0, 1};
	struct pv_results_cmp *c = NULL;
	const struct pv_results_cmp_fig *F;

	b->server_config = strdup("[global]\n\tserver signing = mandatory\n");
	a->server_config = strdup("[global]\n\tsecurity = ADS\n");
	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_OK);
	/* the first two steps alike, the last two apart on every figure */
	for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++) {
		ck_assert_int_eq(c->steps[0].fig[PV_RESULTS_CMP_FIGS + f].verdict,
				 PV_RESULTS_CMP_SAME);
		ck_assert_int_eq(c->steps[1].fig[PV_RESULTS_CMP_FIGS + f].verdict,
				 PV_RESULTS_CMP_SAME);
	}
	F = &c->steps[3].fig[PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_RATE];
	ck_assert_int_eq(F->verdict, PV_RESULTS_CMP_LOWER);
	near(F->d, 100 * (26.0 / 36.78 - 1), 0.1);
	ck_assert_int_eq(c->steps[3].fig[PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_OVERLOAD].verdict,
			 PV_RESULTS_CMP_HIGHER);
	ck_assert_int_eq(c->steps[3].fig[PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_P95].verdict,
			 PV_RESULTS_CMP_HIGHER);
	ck_assert_int_eq(c->steps[2].fig[PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_MEDIAN].verdict,
			 PV_RESULTS_CMP_HIGHER);
	ck_assert_uint_eq(c->differ_rate, 2);
	/* B carried 200 against A's 400: real, from the overload at 300 */
	ck_assert_uint_eq(c->groups[1].answer_lo, 200);
	ck_assert_int_eq(c->groups[1].answer_diff, -200);
	ck_assert(c->groups[1].answer_real);
	ck_assert_ptr_nonnull(
		strstr(c->groups[1].answer_why, "at 300 users the overload is 12.00%"));
	/* what differs: the server's settings, each as set or Samba's default */
	ck_assert_uint_eq(c->nsettings, 2);
	ck_assert_str_eq(c->settings[0].key, "server [global] security");
	ck_assert_str_eq(c->settings[0].values[0], "ADS");
	ck_assert_str_eq(c->settings[0].values[1], "(not set: the default)");
	ck_assert_str_eq(c->settings[1].key, "server [global] server signing");
	ck_assert_str_eq(c->settings[1].values[1], "mandatory");
	pv_results_cmp_free(c);
	pv_results_free(a);
	pv_results_free(b);
}
END_TEST

/* A difference of the answer that the noise explains: 1.05% against 0.95% overload */
START_TEST(compare_answer_noise)
{
	static const double over_a[] = {0, 0, 0.2, 0.95}, over_b[] = {0, 0, 0.2, 1.05};
	struct pv_results_run *a = mem_run("a", 4, U, RATE, over_a, LAT),
			      *b = mem_run("b", 4, U, RATE, over_b, LAT);
	const struct pv_results_run *runs[] = {a, b};
	size_t group[] = {0, 1};
	struct pv_results_cmp *c = NULL;

	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_OK);
	ck_assert_int_eq(c->groups[1].answer_diff, -100);
	ck_assert(!c->groups[1].answer_real);
	ck_assert_ptr_nonnull(strstr(c->groups[1].answer_why, "within the noise"));
	pv_results_cmp_free(c);
	pv_results_free(a);
	pv_results_free(b);
}
END_TEST

/* Repeats: the spread across them is the noise */
START_TEST(compare_repeats)
{
	static const double r1[] = {9.0, 18.0, 27.0, 36.0}, r2[] = {9.4, 18.8, 28.2, 37.6},
			    r3[] = {8.6, 17.2, 25.8, 34.4}, s1[] = {9.2, 18.4, 27.6, 36.8};
	struct pv_results_run *a1 = mem_run("a1", 4, U, r1, OVER0, LAT),
			      *a2 = mem_run("a2", 4, U, r2, OVER0, LAT),
			      *a3 = mem_run("a3", 4, U, r3, OVER0, LAT),
			      *b1 = mem_run("b1", 4, U, s1, OVER0, LAT),
			      *b2 = mem_run("b2", 4, U, r2, OVER0, LAT);
	const struct pv_results_run *runs[] = {a1, a2, a3, b1, b2};
	size_t group[] = {0, 0, 0, 1, 1};
	struct pv_results_cmp *c = NULL;
	const struct pv_results_cmp_fig *F;

	ck_assert_int_eq(pv_results_cmp_build(runs, group, 5, &c), PV_OK);
	ck_assert_uint_eq(c->ngroups, 2);
	ck_assert_uint_eq(c->groups[0].nruns, 3);
	F = &c->steps[3].fig[PV_RESULTS_CMP_RATE];
	near(F->v, 36, 1e-9); /* the mean of the repeats */
	ck_assert(F->lo < 36 && F->hi > 36);
	ck_assert_uint_eq(c->differ_rate, 0);
	pv_results_cmp_free(c);
	pv_results_free(a1);
	pv_results_free(a2);
	pv_results_free(a3);
	pv_results_free(b1);
	pv_results_free(b2);
}
END_TEST

START_TEST(compare_refused)
{
	static const unsigned other[] = {150, 250, 350, 450};
	struct pv_results_run *a = mem_run("a", 4, U, RATE, OVER0, LAT),
			      *b = mem_run("b", 4, other, RATE, OVER0, LAT);
	const struct pv_results_run *runs[] = {a, b};
	size_t group[] = {0, 1}, one[] = {0, 0};
	struct pv_results_cmp *c = NULL;

	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "no step in common"));
	ck_assert_int_eq(pv_results_cmp_build(runs, one, 2, &c), PV_EUSAGE);
	snprintf(b->driver, sizeof(b->driver), "command");
	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "of driver 'command'"));
	snprintf(b->driver, sizeof(b->driver), "builtin");
	b->has_load = false;
	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "no load figures"));
	ck_assert_ptr_null(c);
	pv_results_free(a);
	pv_results_free(b);
}
END_TEST

/* n clients for step s, named cli1, cli2, ... (freed with the run) */
static struct pv_load_client *mem_clients(struct pv_results_step *s, size_t n)
{
	struct pv_load_client *c = calloc(n, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(s->client_names = calloc(n, sizeof(*s->client_names)));
	for (size_t k = 0; k < n; k++) {
		snprintf(s->client_names[k], sizeof(s->client_names[k]), "cli%zu", k + 1);
		c[k].name = s->client_names[k];
	}
	s->load.clients = c;
	s->load.nclients = n;
	return c;
}

/* Step i of run r made client-bound: client cli2's loop full (95% of a core, lag 150 ms) */
static void mem_bound(struct pv_results_run *r, size_t i)
{
	struct pv_results_step *s = &r->steps[i];
	struct pv_load_client *c = mem_clients(s, 2);

	for (int k = 0; k < 2; k++) {
		c[k].threads = 2;
		c[k].cpu_top = k ? 95 : 40;
		c[k].cpu = 1.5 * c[k].cpu_top;
		c[k].host_cpu = NAN;
		c[k].lag_p95 = k ? 150 : 2;
		c[k].bound = k == 1;
	}
	s->load.client_bound = true;
	s->carried = false;
}

/* A client-bound step, in either run, is not compared as the server's */
START_TEST(compare_client_bound)
{
	/* B's clients could not keep up from 300 users: fewer scenarios there, which would be a
	 * difference beyond the noise if it were the server's */
	static const double rate_b[] = {9.19, 18.39, 20.0, 21.0};
	struct pv_results_run *a = mem_run("a", 4, U, RATE, OVER0, LAT),
			      *b = mem_run("b", 4, U, rate_b, OVER0, LAT);
	const struct pv_results_run *runs[] = {a, b};
	size_t group[] = {0, 1};
	struct pv_results_cmp *c = NULL;

	mem_bound(b, 2);
	mem_bound(b, 3);
	b->answer_step = 1;
	b->answer_users = 200;
	b->first_over = 2;
	b->answer_at_least = true;
	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_OK);
	ck_assert_uint_eq(c->nsteps, 4);
	ck_assert_uint_eq(c->ncompared, 2);
	near(c->alpha, 0.05 / 2, 1e-15);
	ck_assert(c->steps[0].compared && c->steps[1].compared);
	for (size_t s = 2; s < 4; s++) {
		const struct pv_results_cmp_step *S = &c->steps[s];

		ck_assert(!S->compared && S->client_bound[1] && !S->client_bound[0]);
		ck_assert(!S->carried[1] && S->carried[0]);
		ck_assert_str_eq(S->note, "B was client-bound (cli2: its busiest loop at 95% of a "
					  "core, loop lag p95 150 ms)");
		for (int f = 0; f < PV_RESULTS_CMP_FIGS; f++) {
			ck_assert_int_eq(S->fig[PV_RESULTS_CMP_FIGS + f].verdict,
					 PV_RESULTS_CMP_NA);
			ck_assert(isnan(S->fig[PV_RESULTS_CMP_FIGS + f].d));
			ck_assert(S->fig[PV_RESULTS_CMP_FIGS + f].have); /* still shown */
		}
	}
	ck_assert_uint_eq(c->differ, 0);
	ck_assert_uint_eq(c->differ_rate, 0);
	/* B's answer is a lower bound, and what tells the answers apart is the clients' */
	ck_assert(c->groups[1].answer_at_least && !c->groups[0].answer_at_least);
	ck_assert_int_eq(c->groups[1].answer_diff, -200);
	ck_assert(!c->groups[1].answer_real);
	ck_assert_str_eq(c->groups[1].answer_why,
			 "cannot be weighed: at 300 users B was client-bound (cli2: its busiest "
			 "loop at 95% of a core, loop lag p95 150 ms): the clients were the limit "
			 "there, not the server, and no other step between the two answers tells "
			 "them apart");
	pv_results_cmp_free(c);
	/* the base client-bound at 400 only: that step left out of the weighing too */
	pv_results_free(b);
	b = mem_run("b", 4, U, RATE, OVER0, LAT);
	runs[1] = b;
	mem_bound(a, 3);
	ck_assert_int_eq(pv_results_cmp_build(runs, group, 2, &c), PV_OK);
	ck_assert_uint_eq(c->ncompared, 3);
	ck_assert(!c->steps[3].compared && c->steps[3].client_bound[0]);
	ck_assert_ptr_nonnull(strstr(c->steps[3].note, "A was client-bound (cli2"));
	ck_assert_int_eq(c->steps[2].fig[PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_RATE].verdict,
			 PV_RESULTS_CMP_SAME);
	pv_results_cmp_free(c);
	pv_results_free(a);
	pv_results_free(b);
	/* three groups, B client-bound at 300: C against A is still weighed there */
	{
		static const double rate_c[] = {9.19, 18.39, 20.0, 36.78};
		struct pv_results_run *x = mem_run("a", 4, U, RATE, OVER0, LAT),
				      *y = mem_run("b", 4, U, RATE, OVER0, LAT),
				      *z = mem_run("c", 4, U, rate_c, OVER0, LAT);
		const struct pv_results_run *three[] = {x, y, z};
		size_t g3[] = {0, 1, 2};

		mem_bound(y, 2);
		ck_assert_int_eq(pv_results_cmp_build(three, g3, 3, &c), PV_OK);
		ck_assert_uint_eq(c->ncompared, 4);
		ck_assert(!c->steps[2].compared);
		ck_assert(!pv_results_cmp_weighed(&c->steps[2], 1) &&
			  pv_results_cmp_weighed(&c->steps[2], 2));
		ck_assert_int_eq(c->steps[2].fig[PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_RATE].verdict,
				 PV_RESULTS_CMP_NA);
		ck_assert_int_eq(
			c->steps[2].fig[2 * PV_RESULTS_CMP_FIGS + PV_RESULTS_CMP_RATE].verdict,
			PV_RESULTS_CMP_LOWER);
		ck_assert_uint_eq(c->differ_rate, 1);
		pv_results_cmp_free(c);
		pv_results_free(x);
		pv_results_free(y);
		pv_results_free(z);
	}
}
END_TEST

/* ---- the hint ---- */

static struct pv_results_watch *mem_watch(double cpu, double iowait)
{
	struct pv_results_watch *w = calloc(1, sizeof(*w));

	w->ncols = 2;
	w->cols = calloc(2, sizeof(*w->cols));
	strcpy(w->cols[0], "cpu");
	strcpy(w->cols[1], "iowait");
	w->n = 2;
	w->t = calloc(2, sizeof(double));
	w->measure = calloc(2, sizeof(bool));
	w->v = calloc(4, sizeof(double));
	for (int i = 0; i < 2; i++) {
		w->t[i] = i;
		w->measure[i] = true;
		w->v[2 * i] = cpu;
		w->v[2 * i + 1] = iowait;
	}
	return w;
}

START_TEST(hint)
{
	static const double over[] = {0, 0.3, 0.8, 6}, lat[] = {0.02, 0.02, 0.02, 0.02};
	struct pv_results_run *r = mem_run("h", 4, U, RATE, over, lat);
	struct pv_results_hint h;

	/* browse slows at 300 users (twice the first step's p95 and 10 ms more), the CPU
	 * reaches 85% at 400, where the step is overloaded */
	for (size_t i = 0; i < 4; i++) {
		struct pv_load_kind_sum *k = &r->steps[i].load.kind[PV_PLAYBOOK_WORKLOAD_BROWSE];

		k->lat.n = 100;
		k->lat.p95 = i < 2 ? 0.03 : 0.09;
		for (int j = 0; j < 100; j++) /* the histogram the clients' lines give */
			pv_load_hist_add(&k->n.lat, k->lat.p95 * (0.8 + 0.4 * j / 100.0));
		r->steps[i].srv = mem_watch(20 + 20.0 * (double)i + (i == 3 ? 5 : 0), 1);
	}
	pv_results_hint(r, &h);
	ck_assert_int_eq(h.step, 3);
	ck_assert_ptr_nonnull(strstr(h.nearest, "400 users (step 4: overload 6.00%)"));
	ck_assert_ptr_nonnull(strstr(
		h.nearest, "The resource nearest its limit there was the server's CPU: 85%"));
	ck_assert_ptr_nonnull(strstr(h.first, "What moved first, at 300 users (step 3): browse's "
					      "p95 rose from 30 ms to 90 ms."));
	ck_assert_ptr_nonnull(strstr(h.first, "Then at 400 users: the server's CPU reached 85%."));
	/* a client's driver busier than the server: named as the nearest */
	{
		struct pv_load_client *c = mem_clients(&r->steps[3], 1);

		snprintf(r->steps[3].client_names[0], sizeof(r->steps[3].client_names[0]), "cli2");
		c->threads = 4;
		c->cpu = 250;
		c->cpu_top = 87;
		c->host_cpu = NAN;
	}
	pv_results_hint(r, &h);
	ck_assert_ptr_nonnull(
		strstr(h.nearest, "client cli2's load driver: its busiest loop at 87%"));
	/* not watched: said so */
	for (size_t i = 0; i < 4; i++) {
		pv_results_watch_free(r->steps[i].srv);
		r->steps[i].srv = NULL;
		free((void *)r->steps[i].load.clients);
		free(r->steps[i].client_names);
		r->steps[i].load.clients = NULL;
		r->steps[i].client_names = NULL;
		r->steps[i].load.nclients = 0;
	}
	pv_results_hint(r, &h);
	ck_assert_ptr_nonnull(strstr(h.nearest, "The server was not watched in this run"));
	/* a low CPU at the overload: the limit is elsewhere */
	for (size_t i = 0; i < 4; i++)
		r->steps[i].srv = mem_watch(30, 25);
	pv_results_hint(r, &h);
	ck_assert_ptr_nonnull(strstr(h.nearest, "No measured resource was near its limit there"));
	ck_assert_ptr_nonnull(strstr(h.first, "at 100 users (step 1): the server's iowait reached "
					      "25% (the disk)"));
	/* driver command: no overload known */
	snprintf(r->driver, sizeof(r->driver), "command");
	for (size_t i = 0; i < 4; i++)
		r->steps[i].has_load = false;
	pv_results_hint(r, &h);
	ck_assert_int_eq(h.step, -1);
	ck_assert_ptr_nonnull(strstr(h.nearest, "Driver 'command' measures no overload"));
	pv_results_free(r);
}
END_TEST

/* ---- the pages ---- */

/* Nothing in the page can make a request: a policy that allows none, no script, no URL but
 * the page's own anchors. */
static void page_safe(const char *html)
{
	const char *p;

	ck_assert_ptr_nonnull(strstr(html, "<meta http-equiv=\"Content-Security-Policy\" "
					   "content=\"default-src 'none'; style-src "
					   "'unsafe-inline'; img-src data:;"));
	ck_assert_ptr_null(strstr(html, "<script"));
	ck_assert_ptr_null(strstr(html, "http:"));
	ck_assert_ptr_null(strstr(html, "https:"));
	ck_assert_ptr_null(strstr(html, "url("));
	ck_assert_ptr_null(strstr(html, "@import"));
	for (p = strstr(html, "href=\""); p; p = strstr(p + 1, "href=\""))
		ck_assert_msg(p[6] == '#', "a link out: %.40s", p);
	ck_assert_ptr_null(strstr(html, "src=\""));
}

START_TEST(report_page)
{
	struct pv_results_run *run = NULL;
	struct pv_buf b = PV_BUF_INIT;
	const char *dir = getenv("PV_RESULTS_SAMPLES");

	make_run();
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	page_safe(b.data);
	ck_assert_ptr_nonnull(strstr(b.data, "<b>The server carried 10 users</b>"));
	ck_assert_ptr_nonnull(strstr(b.data, "id=\"plot-ramp\""));
	ck_assert_ptr_nonnull(strstr(b.data, "id=\"plot-srv-cpu\""));
	ck_assert_ptr_nonnull(strstr(b.data, "id=\"plot-clients\""));
	ck_assert_ptr_null(strstr(b.data, "id=\"plot-dc-cpu\""));
	ck_assert_ptr_nonnull(strstr(b.data, "The DC&#39;s watch: not recorded in this run."));
	ck_assert_ptr_nonnull(strstr(b.data, "4.17.12-Debian"));
	ck_assert_ptr_nonnull(
		strstr(b.data, "signing: server signing</th><td class=\"l\">mandatory"));
	ck_assert_ptr_nonnull(strstr(b.data, "encryption: server smb encrypt</th><td "
					     "class=\"l\">not set: Samba&#39;s default"));
	ck_assert_ptr_nonnull(strstr(b.data, "no figures for 10 s: lost; its stderr began: "
					     "provision load: killed"));
	ck_assert_ptr_nonnull(strstr(b.data, "cli1-u3: refused"));
	ck_assert_ptr_nonnull(strstr(b.data, "<th scope=\"row\">query_directory</th><td>10</td>"
					     "<td>25.0</td>"));
	/* FSCT's named commands first, beside its shares; a command no step sent left out */
	ck_assert_ptr_nonnull(strstr(b.data, "<tr><th scope=\"row\">create</th><td>22</td><td>37.5"
					     "</td><td class=\"na\">-</td></tr>"));
	ck_assert_ptr_nonnull(strstr(b.data, "<tr><th scope=\"row\">write</th><td>7</td><td>0.0"));
	ck_assert(strstr(b.data, ">create</th>") < strstr(b.data, ">query_directory</th>"));
	ck_assert_ptr_null(strstr(b.data, ">negotiate</th>"));
	if (dir) {
		char path[512];

		snprintf(path, sizeof(path), "%s/report.html", dir);
		ck_assert_int_eq(pv_file_replace(path, b.data, b.len), PV_OK);
	}
	/* no step carried: the fewest users' figures say why */
	pv_buf_reset(&b);
	run->answer_step = -1;
	run->steps[0].carried = false;
	run->first_over = pv_results_first_over(run);
	ck_assert_int_eq(run->first_over, 0);
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	ck_assert_ptr_nonnull(strstr(b.data,
				     "<b>The server carried no step</b> without overload. "
				     "Even the fewest users tried, 10 (step 1), had overload "
				     "33.30% (the threshold: 1%)."));
	/* a run of driver command: no load sections, said so */
	pv_buf_reset(&b);
	snprintf(run->driver, sizeof(run->driver), "command");
	run->has_load = false;
	for (size_t i = 0; i < run->nsteps; i++)
		run->steps[i].has_load = false;
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	page_safe(b.data);
	ck_assert_ptr_nonnull(strstr(b.data, "Driver <b>command</b> measures no scenarios"));
	ck_assert_ptr_nonnull(strstr(b.data, "The driver measures no scenarios: not recorded"));
	ck_assert_ptr_null(strstr(b.data, "scenarios/s (95% interval)"));
	pv_buf_release(&b, 0);
	pv_results_free(run);
	rm_run();
}
END_TEST

/* The row of step n in the steps table (from its <tr to its </tr>), in a static buffer. */
static const char *step_row(const char *html, unsigned n)
{
	static char row[4096];
	char head[64];
	const char *table = strstr(html, "<caption>Every step</caption>"), *at, *end;

	ck_assert_ptr_nonnull(table);
	snprintf(head, sizeof(head), "<th scope=\"row\">%u", n);
	ck_assert_ptr_nonnull(at = strstr(table, head));
	while (at > table && strncmp(at, "<tr", 3))
		at--;
	ck_assert_ptr_nonnull(end = strstr(at, "</tr>"));
	snprintf(row, sizeof(row), "%.*s", (int)(end - at), at);
	return row;
}

/* A capacity run's page: client-bound marked in words and never carried, the logons beside
 * the DC's CPU, the refine step among the ramp's, the answer as the run gave it. */
START_TEST(report_capacity)
{
	struct pv_results_run *run = NULL;
	struct pv_buf b = PV_BUF_INIT;
	const char *row, *dir = getenv("PV_RESULTS_SAMPLES");

	cap_run(CAP_BOUND, 4);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	page_safe(b.data);
	/* the ramp marks the client-bound steps apart (60 and 80), named in its legend */
	ck_assert_ptr_nonnull(strstr(b.data, "data-name=\"client-bound: the clients&#39; limit, "
					     "not the server&#39;s\" data-points=\"4\""));
	ck_assert_ptr_nonnull(strstr(b.data, "<b>The server carried at least 40 users</b> without "
					     "overload (step 2)."));
	ck_assert_ptr_nonnull(strstr(b.data,
				     "The first step over it, 60 users (step 3), was <b "
				     "class=\"tag\">client-bound</b>: the clients were the "
				     "limit there, not the server (cli2: its busiest loop at "
				     "95% of a core, loop lag p95 "));
	ck_assert_ptr_nonnull(strstr(b.data, "how many more than 40 users the server carries, this "
					     "run cannot tell (about 3 client cores would run 60 "
					     "users)."));
	ck_assert_ptr_nonnull(strstr(b.data,
				     "The run's answer line: the server carried at least 40 "
				     "users without overload (step 2, 40 users"));
	/* the columns: the DC's CPU, the logon p95 beside it, the busiest client loop */
	ck_assert_ptr_nonnull(strstr(b.data, "<th scope=\"col\">DC CPU %<br>(samba % of a "
					     "core)</th><th scope=\"col\">logon p95 ms<br>(its "
					     "bucket)</th><th scope=\"col\">busiest client loop "
					     "%<br>/ lag p95 ms</th>"));
	/* steps 3 and 4 client-bound: said in words, never "yes" */
	for (unsigned n = 3; n <= 4; n++) {
		row = step_row(b.data, n);
		ck_assert_ptr_nonnull(strstr(row, "<tr class=\"cb\">"));
		ck_assert_ptr_nonnull(strstr(row, "<td><b>no: client-bound</b></td>"));
		ck_assert_ptr_null(strstr(row, "<td>yes</td>"));
		ck_assert_ptr_nonnull(strstr(row, "<span class=\"ci\">cli2 bound !</span>"));
	}
	row = step_row(b.data, 2);
	ck_assert_ptr_nonnull(strstr(row, "<td>yes</td>"));
	ck_assert_ptr_nonnull(strstr(row, "<td>20.0 (40.0)</td>")); /* the DC, its samba */
	ck_assert_ptr_null(strstr(row, "client-bound"));
	if (dir) {
		char path[512];

		snprintf(path, sizeof(path), "%s/report-client-bound.html", dir);
		ck_assert_int_eq(pv_file_replace(path, b.data, b.len), PV_OK);
		/* and the run's folder, for provision report and compare by hand */
		snprintf(path, sizeof(path),
			 "rm -rf '%s/client-bound' && cp -r '%s' '%s/client-bound'", dir, tmpdir,
			 dir);
		ck_assert_int_eq(system(path), 0);
	}
	pv_results_free(run);
	rm_run();
	/* logons failed at 60; the refine step of 50 between 40 and 60 */
	pv_buf_reset(&b);
	cap_run(CAP_LOGONS, 5);
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	ck_assert_int_eq(pv_report_page(run, &b), PV_OK);
	ck_assert_ptr_nonnull(strstr(b.data, "<b>The server carried 50 users</b> without overload "
					     "(step 5, a step --refine added)."));
	ck_assert_ptr_nonnull(strstr(b.data,
				     "The first step over it, 60 users (step 3), had "
				     "overload 20.00% (the threshold: 1%), 3 of 60 users could "
				     "not log on (4 logons tried again), 30 scenarios "
				     "unserved."));
	row = step_row(b.data, 5);
	ck_assert_ptr_nonnull(strstr(row, "5 <span class=\"tag\">refine</span>"));
	ck_assert_ptr_nonnull(strstr(row, "<td>yes</td>"));
	row = step_row(b.data, 3);
	ck_assert_ptr_nonnull(strstr(row, "<td><b>no</b></td>"));
	ck_assert_ptr_nonnull(strstr(row, "<br>3 failed !, 4 retried</td>"));
	ck_assert_ptr_nonnull(strstr(row, "<td class=\"over\">57 of 60</td>"));
	/* users rising: 40 (step 2), 50 (step 5, refine), 60 (step 3) */
	ck_assert(strstr(b.data, "<th scope=\"row\">2</th>") <
		  strstr(b.data, "<th scope=\"row\">5 <span"));
	ck_assert(strstr(b.data, "<th scope=\"row\">5 <span") <
		  strstr(b.data, "<th scope=\"row\">3</th>"));
	ck_assert_ptr_nonnull(
		strstr(b.data, "Logons failed there: 3 of 60 users could not log on"));
	if (dir) {
		char path[512];

		snprintf(path, sizeof(path), "%s/report-logons.html", dir);
		ck_assert_int_eq(pv_file_replace(path, b.data, b.len), PV_OK);
		/* and the run's folder, for provision report and compare by hand */
		snprintf(path, sizeof(path), "rm -rf '%s/logons' && cp -r '%s' '%s/logons'", dir,
			 tmpdir, dir);
		ck_assert_int_eq(system(path), 0);
	}
	pv_buf_release(&b, 0);
	pv_results_free(run);
	rm_run();
}
END_TEST

/* Out of memory at each realloc() the page and the reader make, one point at a time (that
 * one and every later realloc refused): where the point was reached, PV_EIO saying "out of
 * memory" and no run handed out (the page's buffer then holds nothing promised: the caller
 * writes nothing); where it was not (the code asked for fewer), the very page and run of a
 * run with all the memory. Every point up to the count taken with all the memory is reached,
 * so each point fails once; nothing leaks (ASan). */
/* repeats.txt of `run --repeat`: names of sibling folders only, bounded */
START_TEST(repeats_names)
{
	char names[4][64];
	size_t n = 9;
	static const char *const bad[] = {
		"../etc\n",	    /* a path */
		"a/b\n",	    /* a path */
		".hidden\n",	    /* a dot first */
		"ok\nspace here\n", /* a space */
		"",		    /* nothing */
		"\n\n",		    /* nothing either */
		"a\nb\nc\nd\ne\n",  /* more than max */
	};

	ck_assert_int_eq(pv_results_parse_repeats("t-r1\nt-r2\n\nt_r.3", 16, names, 4, &n), PV_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(names[0], "t-r1");
	ck_assert_str_eq(names[2], "t_r.3");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(pv_results_parse_repeats(bad[i], strlen(bad[i]), names, 4, &n) ==
				      PV_ECONFIG,
			      "'%s' taken", bad[i]);
	}
	{
		char longer[80];

		memset(longer, 'x', 70);
		longer[70] = '\n';
		ck_assert_int_eq(pv_results_parse_repeats(longer, 71, names, 4, &n), PV_ECONFIG);
	}
	ck_assert_int_eq(pv_results_parse_repeats("a\0b\n", 4, names, 4, &n), PV_ECONFIG);
}
END_TEST

START_TEST(report_oom)
{
	struct pv_results_run *run = NULL;
	struct pv_buf ref = PV_BUF_INIT;
	long page_allocs, read_allocs;

	make_run();
	ck_assert_int_eq(pv_results_read(tmpdir, &run), PV_OK);
	/* the page with all the memory, counting its reallocs */
	pv_test_alloc_fail_at(-1);
	ck_assert_int_eq(pv_report_page(run, &ref), PV_OK);
	page_allocs = pv_test_alloc_count();
	pv_test_alloc_ok();
	ck_assert_int_gt(page_allocs, 0);
	/* the run read with all the memory, counting its reallocs */
	{
		struct pv_results_run *again = NULL;

		pv_test_alloc_fail_at(-1);
		ck_assert_int_eq(pv_results_read(tmpdir, &again), PV_OK);
		read_allocs = pv_test_alloc_count();
		pv_test_alloc_ok();
		ck_assert_int_gt(read_allocs, 0);
		pv_results_free(again);
	}
	for (long at = 1, hit = 0; at <= page_allocs + 1; at++) {
		struct pv_buf b = PV_BUF_INIT;
		int rc;

		pv_test_alloc_fail_at(at);
		rc = pv_report_page(run, &b);
		pv_test_alloc_ok();
		if (pv_test_alloc_refused()) {
			hit++;
			ck_assert_msg(rc == PV_EIO && strstr(pv_errmsg(), "out of memory"),
				      "page, realloc %ld refused: %d %s", at, rc, pv_errmsg());
		} else {
			ck_assert_msg(rc == PV_OK, "page, nothing refused at %ld: %d %s", at, rc,
				      pv_errmsg());
			ck_assert(!pv_buf_failed(&b));
			ck_assert_uint_eq(b.len, ref.len);
			ck_assert(!memcmp(b.data, ref.data, ref.len));
		}
		pv_buf_release(&b, 0);
		if (at == page_allocs + 1)
			ck_assert_int_eq(hit, page_allocs);
	}
	for (long at = 1, hit = 0; at <= read_allocs + 1; at++) {
		struct pv_results_run *again = NULL;
		int rc;

		pv_test_alloc_fail_at(at);
		rc = pv_results_read(tmpdir, &again);
		pv_test_alloc_ok();
		if (pv_test_alloc_refused()) {
			hit++;
			ck_assert_msg(rc == PV_EIO && strstr(pv_errmsg(), "out of memory"),
				      "read, realloc %ld refused: %d %s", at, rc, pv_errmsg());
			ck_assert_ptr_null(again);
		} else {
			struct pv_buf b = PV_BUF_INIT;

			/* all read: its page is the page of the run read before */
			ck_assert_msg(rc == PV_OK, "read, nothing refused at %ld: %d %s", at, rc,
				      pv_errmsg());
			ck_assert_int_eq(pv_report_page(again, &b), PV_OK);
			ck_assert_uint_eq(b.len, ref.len);
			ck_assert(!memcmp(b.data, ref.data, ref.len));
			pv_buf_release(&b, 0);
		}
		pv_results_free(again);
		if (at == read_allocs + 1)
			ck_assert_int_eq(hit, read_allocs);
	}
	pv_buf_release(&ref, 0);
	pv_results_free(run);
	rm_run();
}
END_TEST

/* ---- the copy job (results/copy.h) ---- */

/* The rate and its interval against values worked out apart: the interval rates' mean and
 * sample standard deviation by Python's statistics module, t(0.975, df) from a table
 * (df 2: 4.302653, 3: 3.182446, 9: 2.262157), half-width t * sd / sqrt(k) about the mean
 * rate count / t of the last tick, the low end not below 0. */
START_TEST(copy_rate)
{
	double rate, lo, hi;
	/* rates 20, 15, 25, 10 a second: mean 17.5, sd 6.454972, t(3) */
	static const double t1[] = {1, 2, 3, 4, 5}, c1[] = {10, 30, 45, 70, 80};
	/* a tick at the same time and one back in time are skipped: rates 20, 19.5, 4.5, 20 */
	static const double t2[] = {1, 2, 2, 4, 3, 5, 5.5}, c2[] = {10, 30, 31, 70, 71, 80, 90};
	/* one burst then nothing: sd 57.735027, t(2); the low end held at 0 */
	static const double t3[] = {1, 2, 3, 4}, c3[] = {0, 100, 100, 100};
	/* ten half-second intervals from the start, t(9) */
	static const double t4[] = {0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5},
			    c4[] = {0, 7, 13, 22, 30, 36, 45, 51, 60, 66, 75};

	pv_results_copy_rate(t1, c1, 5, &rate, &lo, &hi);
	near(rate, 16, 1e-12);
	near(lo, 16 - 3.182446 * 6.454972 / 2, 1e-5); /* 5.728699 */
	near(hi, 16 + 3.182446 * 6.454972 / 2, 1e-5); /* 26.271301 */
	pv_results_copy_rate(t2, c2, 7, &rate, &lo, &hi);
	near(rate, 90 / 5.5, 1e-12);
	near(lo, 4.158495, 1e-5); /* 16.363636 - 3.182446 * 7.670289 / 2 */
	near(hi, 28.568778, 1e-5);
	pv_results_copy_rate(t3, c3, 4, &rate, &lo, &hi);
	near(rate, 25, 1e-12);
	ck_assert(lo == 0);
	near(hi, 25 + 4.302653 * 57.735027 / sqrt(3), 1e-4); /* 168.421758 */
	pv_results_copy_rate(t4, c4, 11, &rate, &lo, &hi);
	near(rate, 75 / 5.5, 1e-12);
	near(lo, 11.585119, 1e-5); /* 13.636364 -+ 2.262157 * 2.867442 / sqrt(10) */
	near(hi, 15.687608, 1e-5);
	/* a steady rate: no spread, a zero-width interval */
	{
		static const double t5[] = {1, 2, 3, 4}, c5[] = {50, 100, 150, 200};

		pv_results_copy_rate(t5, c5, 4, &rate, &lo, &hi);
		ck_assert(rate == 50 && lo == 50 && hi == 50);
	}
	/* fewer than three intervals: the rate, NAN bounds */
	pv_results_copy_rate(t1, c1, 3, &rate, &lo, &hi);
	near(rate, 15, 1e-12);
	ck_assert(isnan(lo) && isnan(hi));
	pv_results_copy_rate(t2, c2, 4, &rate, &lo,
			     &hi); /* three intervals, one of them of no time */
	near(rate, 17.5, 1e-12);
	ck_assert(isnan(lo) && isnan(hi));
	pv_results_copy_rate(t2, c2, 5, &rate, &lo, &hi); /* and one back in time: still two */
	ck_assert(isfinite(rate) && isnan(lo) && isnan(hi));
	pv_results_copy_rate(t2, c2, 6, &rate, &lo, &hi); /* three at last */
	ck_assert(isfinite(lo) && isfinite(hi));
	pv_results_copy_rate(t1, c1, 1, &rate, &lo, &hi);
	ck_assert(rate == 10 && isnan(lo) && isnan(hi));
	/* no tick, or a last tick at 0 or before: nothing */
	pv_results_copy_rate(t1, c1, 0, &rate, &lo, &hi);
	ck_assert(isnan(rate) && isnan(lo) && isnan(hi));
	{
		static const double t6[] = {0, 0}, c6[] = {5, 9}, t7[] = {1, -1}, t8[] = {1, NAN};

		pv_results_copy_rate(t6, c6, 2, &rate, &lo, &hi);
		ck_assert(isnan(rate) && isnan(lo) && isnan(hi));
		pv_results_copy_rate(t7, c6, 2, &rate, &lo, &hi);
		ck_assert(isnan(rate) && isnan(lo) && isnan(hi));
		pv_results_copy_rate(t8, c6, 2, &rate, &lo, &hi);
		ck_assert(isnan(rate) && isnan(lo) && isnan(hi));
	}
}
END_TEST

/* A copy where nothing is at its limit; each test moves one fact to its threshold. */
static struct pv_results_copy_facts copy_facts(void)
{
	struct pv_results_copy_facts f;

	memset(&f, 0, sizeof(f));
	f.files = 5000;
	f.put_s = 10;
	f.connections = 1;
	f.smbd_known = true;
	f.smbd_pid = 18743;
	f.smbd_ours = true;
	f.smbd_cpu = 40;
	f.smbd_top = 30;
	f.smbd_threads = 3;
	f.smbd_quota = -1;
	f.client_top = 50;
	f.server_cpu = 45;
	f.server_iowait = 5;
	f.dgram_qlen = -1;
	return f;
}

static enum pv_results_copy_bound judge(const struct pv_results_copy_facts *f, char *text,
					size_t len)
{
	memset(text, 'x', len);
	return pv_results_copy_judge(f, text, len);
}

#define has(text, s) ck_assert_msg(strstr(text, s), "'%s' lacks '%s'", text, s)

/* Each verdict at its threshold and just under it, its words (the pid, the percentages, the
 * fix), and which verdict wins when several facts are at their limits. */
START_TEST(copy_judge)
{
	struct pv_results_copy_facts f = copy_facts(), g;
	char text[1024];

	ck_assert_str_eq(pv_results_copy_bound_names[PV_RESULTS_COPY_BOUND_QUOTA], "quota");
	ck_assert_str_eq(pv_results_copy_bound_names[PV_RESULTS_COPY_BOUND_CORE], "smbd core");
	ck_assert_str_eq(pv_results_copy_bound_names[PV_RESULTS_COPY_BOUND_CPUS], "server cpus");
	ck_assert_str_eq(pv_results_copy_bound_names[PV_RESULTS_COPY_BOUND_CLIENT], "client");
	ck_assert_str_eq(pv_results_copy_bound_names[PV_RESULTS_COPY_BOUND_DISK], "disk");
	ck_assert_str_eq(pv_results_copy_bound_names[PV_RESULTS_COPY_BOUND_UNKNOWN], "unknown");

	/* nothing at its limit, the smbd seen: unknown, with what was measured */
	ck_assert_int_eq(judge(&f, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	has(text, "Nothing measured was at its limit");
	has(text, "Nothing measured was at its limit (the busiest smbd thread: 30% of a core; the "
		  "client's busiest thread: 50% of a core; the server's CPUs: 45% busy, 5% "
		  "waiting for I/O).");
	has(text, "more requests in flight (--mt) or connections would tell");
	/* no smbd seen: unknown, said so */
	g = f;
	g.smbd_known = false;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	has(text, "The data cannot tell what bounds this copy");
	has(text, "smbd processes were not seen");
	has(text, "the client's busiest thread: 50% of a core.");

	/* a quota: the smbd at 85% of it (17 of 20% of a core) */
	g = f;
	g.smbd_quota = 20;
	g.smbd_cpu = 17;
	g.smbd_top = 15;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_QUOTA);
	has(text, "A CPU quota is the limit: smbd 18743 (it serves the copy's connection) used 17% "
		  "of a core, and the cgroup that holds it may use 20%");
	has(text, "Raise or remove the quota");
	g.smbd_cpu = 16.9;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.smbd_cpu = 17;
	g.smbd_ours = false;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_QUOTA);
	has(text, "smbd 18743 used 17% of a core");
	/* the quota is the group's: 14% and the other smbds' 3% under it are at the limit */
	g.smbd_cpu = 14;
	g.group_cpu = 16.9;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.group_cpu = 17;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_QUOTA);
	has(text, "smbd 18743 used 14% of a core (17% with the other smbds under the same quota), "
		  "and the cgroup that holds it may use 20%");
	g.group_cpu = 0;
	g.smbd_cpu = 17;
	g.smbd_quota = -1; /* no quota: 17% of a core is nothing */
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.smbd_quota = 20;
	g.smbd_known = false; /* a quota of an smbd not seen: not a verdict */
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);

	/* one smbd thread at 85% of a core */
	g = f;
	g.smbd_top = 85;
	g.smbd_cpu = 97;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CORE);
	has(text, "One core of the server is the limit: smbd 18743 (it serves the copy's "
		  "connection) ran its busiest thread at 85% of a core (3 threads, 97% in all)");
	has(text, "More connections (--connections N, robocopy cannot) or more clients spread it "
		  "over more cores.");
	ck_assert_ptr_null(strstr(text, "already had several"));
	g.connections = 4;
	g.smbd_threads = 1;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CORE);
	has(text, "(1 thread, 97% in all)");
	has(text, "; this copy already had several, and the busiest still was at its core.");
	g.smbd_top = 84.9;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.smbd_top = 100;
	g.smbd_known = false;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);

	/* the server's CPUs at 90% */
	g = f;
	g.server_cpu = 90;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CPUS);
	has(text, "The server's CPUs are the limit: they were 90% busy over the copy, and no one "
		  "smbd thread was at a full core (the busiest at 30%)");
	g.server_cpu = 89.9;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.server_cpu = NAN; /* not watched */
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);

	/* the client's thread at PV_LOAD_BOUND_CPU (90%) of a core: client-bound */
	ck_assert(PV_LOAD_BOUND_CPU == 90);
	g = f;
	g.client_top = 90;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CLIENT);
	has(text, "The client is the limit (client-bound): the copy's busiest thread there ran at "
		  "90% of a core");
	has(text, "Copy from more clients, or with fewer requests in flight per connection and "
		  "more connections.");
	g.client_top = 89.9;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.client_top = 99;
	g.smbd_known = false; /* the client's own measure needs no smbd */
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CLIENT);

	/* the disk: I/O wait at 20% */
	g = f;
	g.server_iowait = 20;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_DISK);
	has(text,
	    "The server's disk is the limit: its CPUs waited for I/O 20% of the time while no "
	    "smbd thread was at a full core (the busiest at 30%).");
	g.server_iowait = 19.9;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	g.server_iowait = NAN;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);

	/* precedence: quota, core, server CPUs, client, disk; each one off in turn */
	g = f;
	g.smbd_quota = 100;
	g.smbd_cpu = 95;
	g.smbd_top = 95;
	g.server_cpu = 95;
	g.client_top = 95;
	g.server_iowait = 50;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_QUOTA);
	g.smbd_quota = -1;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CORE);
	g.smbd_top = 50;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CPUS);
	g.server_cpu = 50;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CLIENT);
	g.client_top = 50;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_DISK);
	g.server_iowait = 5;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);

	/* figures not measured (the server not watched, no smbd seen, the agent's CPU null) are
	 * said so, never printed as "nan" */
	g = f;
	g.smbd_known = false;
	g.server_cpu = 95;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CPUS);
	has(text, "they were 95% busy over the copy (no smbd thread was measured). Other work");
	ck_assert_ptr_null(strcasestr(text, "nan"));
	g.server_cpu = 50;
	g.server_iowait = 30;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_DISK);
	has(text, "its CPUs waited for I/O 30% of the time (no smbd thread was measured).");
	ck_assert_ptr_null(strcasestr(text, "nan"));
	g.server_iowait = 5;
	g.client_top = NAN;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	has(text, "the client's busiest thread: not measured.");
	ck_assert_ptr_null(strcasestr(text, "nan"));
	g = f;
	g.client_top = NAN;
	g.server_cpu = g.server_iowait = NAN;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	has(text, "(the busiest smbd thread: 30% of a core; the client's busiest thread: not "
		  "measured; the server's CPUs: not measured)");
	ck_assert_ptr_null(strcasestr(text, "nan"));
	g.smbd_top = NAN;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	has(text, "(the busiest smbd thread: not measured;");
	ck_assert_ptr_null(strcasestr(text, "nan"));
	g.server_cpu = 95; /* an smbd seen, its threads not measured */
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CPUS);
	has(text, "95% busy over the copy (no smbd thread was measured)");
	ck_assert_ptr_null(strcasestr(text, "nan"));

	/* the text ends inside a short buffer */
	g = f;
	g.server_cpu = 95;
	ck_assert_int_eq(judge(&g, text, 16), PV_RESULTS_COPY_BOUND_CPUS);
	ck_assert_str_eq(text, "The server's CP");
}
END_TEST

/* A small net.unix.max_dgram_qlen is named after any verdict, with its value and the fix; at
 * systemd's 512, unknown, or with no smbd seen, it is not. */
START_TEST(copy_judge_qlen)
{
	struct pv_results_copy_facts f = copy_facts(), g;
	char text[1024];

	f.dgram_qlen = 10;
	ck_assert_int_eq(judge(&f, text, sizeof(text)), PV_RESULTS_COPY_BOUND_UNKNOWN);
	has(text, "waiting for I/O). The time goes to waiting");
	has(text, " The server's Unix sockets queue at most 10 datagrams (net.unix.max_dgram_qlen");
	has(text, "Set it to 512 (sysctl net.unix.max_dgram_qlen=512) and restart Samba.");
	g = f;
	g.smbd_top = 95;
	ck_assert_int_eq(judge(&g, text, sizeof(text)), PV_RESULTS_COPY_BOUND_CORE);
	has(text, "One core of the server is the limit");
	has(text, "queue at most 10 datagrams");
	g.dgram_qlen = 511;
	judge(&g, text, sizeof(text));
	has(text, "queue at most 511 datagrams");
	g.dgram_qlen = 512;
	judge(&g, text, sizeof(text));
	ck_assert_ptr_null(strstr(text, "max_dgram_qlen"));
	g.dgram_qlen = -1;
	judge(&g, text, sizeof(text));
	ck_assert_ptr_null(strstr(text, "max_dgram_qlen"));
	g = f;
	g.smbd_known = false; /* not Samba: its sockets say nothing */
	judge(&g, text, sizeof(text));
	ck_assert_ptr_null(strstr(text, "max_dgram_qlen"));
	/* a short buffer: cut, still a string */
	ck_assert_int_eq(judge(&f, text, 40), PV_RESULTS_COPY_BOUND_UNKNOWN);
	ck_assert_uint_eq(strlen(text), 39);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("results");
	TCase *tc = tcase_create("results");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, read_run);
	tcase_add_test(tc, read_refused);
	tcase_add_test(tc, watch_header);
	tcase_add_test(tc, times);
	tcase_add_test(tc, config_settings);
	tcase_add_test(tc, read_capacity);
	tcase_add_test(tc, read_capacity_refused);
	tcase_add_test(tc, compare_same);
	tcase_add_test(tc, compare_capped);
	tcase_add_test(tc, compare_answer_noise);
	tcase_add_test(tc, compare_repeats);
	tcase_add_test(tc, compare_refused);
	tcase_add_test(tc, compare_client_bound);
	tcase_add_test(tc, hint);
	tcase_add_test(tc, hint_capacity);
	tcase_add_test(tc, report_page);
	tcase_add_test(tc, report_capacity);
	tcase_add_test(tc, report_oom);
	tcase_add_test(tc, repeats_names);
	tcase_add_test(tc, copy_rate);
	tcase_add_test(tc, copy_judge);
	tcase_add_test(tc, copy_judge_qlen);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
