/* tests/unit/check_drain.c: the pure parts of run/drain.c: each probe's output read into a
 * depth (and refused, quoted, when it is not what the probe prints), this lab's users among
 * smbstatus's, the back-off, the rate and ETA, the progress text, the configuration check and
 * a dry run that polls nothing. */
#include <check.h>

#include "tests/unit/unit.h"
#include <math.h>
#include <string.h>

#include "run/drain.h"
#include "util/err.h"

static const char PB[] = "domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, ca_file: /c,"
			 " admin_password: {file: /a}}\n"
			 "users: {per_client: 10}\n"
			 "server: {name: srv, address: 198.18.0.20, shares: 2}\n"
			 "clients: [{name: cli1, address: 198.18.0.31}, {name: cli2, address: "
			 "198.18.0.32}]\n";

static struct pv_playbook *load(const char *const *ovr)
{
	struct pv_playbook *pb = NULL;

	ck_assert_int_eq(pv_playbook_parse("t.yaml", PB, strlen(PB), ovr, &pb), PV_OK);
	return pb;
}

/* a string literal and its length */
#define S(lit) (lit), strlen(lit)

#define HAS(s) ck_assert_msg(strstr(pv_errmsg(), (s)) != NULL, "'%s' not in: %s", (s), pv_errmsg())

static long number(const char *s)
{
	long v = -1;

	ck_assert_int_eq(pv_run_drain_parse_number(s, strlen(s), &v), PV_OK);
	return v;
}

static void bad_number(const char *s, const char *quoted)
{
	long v = 42;

	ck_assert_int_eq(pv_run_drain_parse_number(s, strlen(s), &v), PV_EREMOTE);
	ck_assert_int_eq(v, 42); /* untouched */
	HAS(quoted);
}

START_TEST(numbers)
{
	ck_assert_int_eq(number("5"), 5);
	ck_assert_int_eq(number("0"), 0);
	ck_assert_int_eq(number("  120\n"), 120);
	ck_assert_int_eq(number("\t7\r\n\n"), 7);
	/* a decimal is rounded up: depth <= threshold holds exactly when the number's does */
	ck_assert_int_eq(number("12.5"), 13);
	ck_assert_int_eq(number("12.000"), 12);
	ck_assert_int_eq(number("0.001"), 1);
	ck_assert_int_eq(number("9223372036854775807"), 9223372036854775807L);

	bad_number("hello\n", "printed 'hello', which is not a queue depth");
	bad_number("", "printed nothing; expected a queue depth");
	bad_number("  \n", "printed nothing");
	bad_number("5 6", "printed '5 6'");
	bad_number("5\n6\n", "printed '5\\n6'"); /* made printable */
	bad_number("-3", "printed '-3'");
	bad_number("+3", "printed '+3'");
	bad_number("1e3", "printed '1e3'");
	bad_number(".5", "printed '.5'");
	bad_number("5.", "printed '5.'");
	bad_number("0x10", "printed '0x10'");
	bad_number("queue: 5", "printed 'queue: 5'");
	bad_number("99999999999999999999", "printed '99999999999999999999'");
	bad_number("9223372036854775807.5", "which is not a queue depth");
	bad_number("\x01\x7f\xc3\xa9 it's", "printed '\\x01\\x7f\\xc3\\xa9 it\\'s'");
}
END_TEST

START_TEST(quote)
{
	char big[500], out[64];

	memset(big, 'a', sizeof(big));
	pv_run_drain_quote(big, sizeof(big), 10, out, sizeof(out));
	ck_assert_str_eq(out, "aaaaaaaaaa...");
	pv_run_drain_quote("  x\ty  \n", 8, 10, out, sizeof(out));
	ck_assert_str_eq(out, "x\\ty");
	pv_run_drain_quote(NULL, 0, 10, out, sizeof(out));
	ck_assert_str_eq(out, "");
	/* never past out's end, always terminated */
	pv_run_drain_quote("\x01\x02\x03\x04\x05\x06", 6, 80, out, 12);
	ck_assert_str_eq(out, "\\x01\\x02");
}
END_TEST

START_TEST(writeback)
{
	const char *meminfo = "MemTotal:       24568320 kB\n"
			      "Dirty:             26076 kB\n"
			      "Writeback:            8 kB\n"
			      "WritebackTmp:         0 kB\n";
	long kb = -1;

	ck_assert_int_eq(pv_run_drain_parse_writeback(meminfo, strlen(meminfo), &kb), PV_OK);
	ck_assert_int_eq(kb, 26084);
	ck_assert_int_eq(pv_run_drain_parse(NULL, PV_PLAYBOOK_PROBE_WRITEBACK,
					    S("Dirty: 0 kB\nWriteback: 0 kB"), &kb),
			 PV_OK);
	ck_assert_int_eq(kb, 0);
	ck_assert_int_eq(pv_run_drain_parse_writeback(S("Dirty: 5 kB\n"), &kb), PV_EREMOTE);
	HAS("the Dirty: and Writeback: lines");
	ck_assert_int_eq(pv_run_drain_parse_writeback(S("Dirty: lots kB\nWriteback: 0 kB\n"), &kb),
			 PV_EREMOTE);
	HAS("printed 'Dirty: lots kB'");
	ck_assert_int_eq(pv_run_drain_parse_writeback(S("Dirty: 5 MB\nWriteback: 0 kB\n"), &kb),
			 PV_EREMOTE);
	ck_assert_int_eq(pv_run_drain_parse_writeback(S(""), &kb), PV_EREMOTE);
	HAS("printed nothing");
}
END_TEST

START_TEST(inflight)
{
	const char *sys = "       0        0\n       3        1\n      10       20\n";
	long n = -1;

	ck_assert_int_eq(pv_run_drain_parse_inflight(sys, strlen(sys), &n), PV_OK);
	ck_assert_int_eq(n, 34);
	ck_assert_int_eq(pv_run_drain_parse(NULL, PV_PLAYBOOK_PROBE_INFLIGHT, S("0 0"), &n), PV_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(pv_run_drain_parse_inflight(S(""), &n), PV_EREMOTE);
	HAS("found no /sys/block/*/inflight");
	ck_assert_int_eq(pv_run_drain_parse_inflight(S("1 2 3\n"), &n), PV_EREMOTE);
	HAS("printed '1 2 3'");
	ck_assert_int_eq(pv_run_drain_parse_inflight(S("12\n"), &n), PV_EREMOTE);
	ck_assert_int_eq(pv_run_drain_parse_inflight(S("1 x\n"), &n), PV_EREMOTE);
	ck_assert_int_eq(pv_run_drain_parse_inflight(S("9223372036854775807 1\n"), &n), PV_EREMOTE);
	HAS("a plausible number");
}
END_TEST

START_TEST(lab_users)
{
	struct pv_playbook *pb = load(NULL);
	const char *tmpl[] = {"users.name_template=load{n}x{client}", NULL};

	ck_assert(pv_run_drain_lab_user(pb, "LAB\\cli1-u7"));
	ck_assert(pv_run_drain_lab_user(pb, "cli2-u10"));
	ck_assert(pv_run_drain_lab_user(pb, "LAB+CLI1-U3"));	 /* another separator, any case */
	ck_assert(pv_run_drain_lab_user(pb, "LAB\\cli1-u2000")); /* beyond per_client: dc --users */
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\cli1-u0"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\cli1-u07"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\cli1-u"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\cli1-u7x"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\cli3-u1")); /* not a client of this playbook */
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\administrator"));
	ck_assert(!pv_run_drain_lab_user(pb, "root"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\"));
	ck_assert(!pv_run_drain_lab_user(pb, ""));
	ck_assert(!pv_run_drain_lab_user(pb, NULL));
	pv_playbook_free(pb);

	/* {n} in the middle, followed by text */
	pb = load(tmpl);
	ck_assert(pv_run_drain_lab_user(pb, "LAB\\load12xcli2"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\load12cli2"));
	ck_assert(!pv_run_drain_lab_user(pb, "LAB\\loadxcli2"));
	pv_playbook_free(pb);
}
END_TEST

/* What Samba 4.17 prints (smbstatus --json --resolve-uids, trimmed): two lab sessions, one of
 * the admin; three opens of lab users over two files, one of root. */
static const char SMBSTATUS[] =
	"{\"timestamp\": \"2026-11-30T12:15:05.808303+0000\", \"version\": \"4.17.12-Debian\", "
	"\"smb_conf\": \"/etc/samba/smb.conf\", \"sessions\": {"
	"\"492047455\": {\"session_id\": \"492047455\", \"server_id\": {\"pid\": \"23213\"}, "
	"\"uid\": 13156, \"gid\": 10513, \"username\": \"LAB\\\\cli1-u1\", \"groupname\": "
	"\"LAB\\\\domain users\", \"remote_machine\": \"198.18.0.31\"}, "
	"\"492047456\": {\"session_id\": \"492047456\", \"uid\": 13157, \"username\": "
	"\"LAB\\\\cli2-u10\"}, "
	"\"492047457\": {\"session_id\": \"492047457\", \"uid\": 10500, \"username\": "
	"\"LAB\\\\administrator\"}}, "
	"\"tcons\": {\"294383006\": {\"service\": \"fsroot1\", \"session_id\": \"492047455\"}}, "
	"\"open_files\": {"
	"\"/srv/provision/fsroot1/cli1-u1/a.dat\": {\"service_path\": \"/srv/provision/fsroot1\", "
	"\"filename\": \"cli1-u1/a.dat\", \"num_pending_deletes\": 0, \"opens\": {"
	"\"14515/2\": {\"username\": \"LAB\\\\cli1-u1\", \"uid\": 13156, \"share_file_id\": "
	"\"2\"}, "
	"\"14515/3\": {\"username\": \"LAB\\\\cli1-u1\", \"uid\": 13156, \"share_file_id\": "
	"\"3\"}}}, "
	"\"/srv/provision/fsroot2/cli2-u10\": {\"opens\": {"
	"\"14516/9\": {\"username\": \"LAB\\\\cli2-u10\", \"uid\": 13157}, "
	"\"14516/10\": {\"username\": \"root\", \"uid\": 0}}}}}\n";

START_TEST(smb)
{
	struct pv_playbook *pb = load(NULL);
	const char *idle = "{\"timestamp\": \"x\", \"version\": \"4.17.12-Debian\", \"sessions\": "
			   "{}, \"tcons\": {}, \"open_files\": {}}";
	const char *no_files = "{\"sessions\": {\"1\": {\"username\": \"cli1-u1\"}}}";
	long n = -1;

	ck_assert_int_eq(pv_run_drain_parse_smb(pb, SMBSTATUS, strlen(SMBSTATUS), &n), PV_OK);
	ck_assert_int_eq(n, 5); /* 2 sessions + 3 opens of lab users */
	ck_assert_int_eq(pv_run_drain_parse(pb, PV_PLAYBOOK_PROBE_SMB, idle, strlen(idle), &n),
			 PV_OK);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(pv_run_drain_parse_smb(pb, no_files, strlen(no_files), &n), PV_OK);
	ck_assert_int_eq(n, 1);

	n = -1;
	ck_assert_int_eq(pv_run_drain_parse_smb(pb, S("Usage: smbstatus"), &n), PV_EREMOTE);
	HAS("printed 'Usage: smbstatus', which is not the JSON of 'smbstatus --json'");
	ck_assert_int_eq(pv_run_drain_parse_smb(pb, S("{\"a\": 1}"), &n), PV_EREMOTE);
	HAS("an object with 'sessions'");
	ck_assert_int_eq(pv_run_drain_parse_smb(pb, S("[1, 2]"), &n), PV_EREMOTE);
	ck_assert_int_eq(pv_run_drain_parse_smb(pb, S("{\"sessions\": {}, \"open_files\": 3}"), &n),
			 PV_EREMOTE);
	ck_assert_int_eq(n, -1);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(backoff)
{
	double w = 0;
	/* the first poll, then not falling: x1.5 each poll, up to 8x the interval */
	const double seq[] = {2, 3, 4.5, 6.75, 10.125, 15.1875, 16, 16};

	w = pv_run_drain_backoff(2, w, false, 0, 100, 0);
	ck_assert(fabs(w - seq[0]) < 1e-9);
	for (int i = 1; i < 8; i++) {
		w = pv_run_drain_backoff(2, w, true, 100, 100 + i, 0);
		ck_assert_msg(fabs(w - seq[i]) < 1e-9, "step %d: %g, expected %g", i, w, seq[i]);
	}
	/* falling: back to the interval at once */
	ck_assert(fabs(pv_run_drain_backoff(2, 16, true, 120, 119, 0) - 2) < 1e-9);
	/* at or below the threshold: the interval (the settle clock runs) */
	ck_assert(fabs(pv_run_drain_backoff(2, 16, true, 5, 5, 5) - 2) < 1e-9);
	/* the same depth above the threshold is not falling */
	ck_assert(fabs(pv_run_drain_backoff(2, 2, true, 7, 7, 5) - 3) < 1e-9);
	/* a wait shorter than the interval (settle) backs off from the interval */
	ck_assert(fabs(pv_run_drain_backoff(4, 1, true, 7, 8, 0) - 6) < 1e-9);
}
END_TEST

START_TEST(rate)
{
	struct pv_run_drain_rate r;

	memset(&r, 0, sizeof(r));
	pv_run_drain_rate_add(&r, 10, 120);
	ck_assert(pv_run_drain_eta(&r, 120, 0) < 0); /* one poll: unknown */
	pv_run_drain_rate_add(&r, 11, 80);
	ck_assert(fabs(r.rate - 40) < 1e-9);
	ck_assert(fabs(pv_run_drain_eta(&r, 80, 0) - 2) < 1e-9);
	ck_assert(fabs(pv_run_drain_eta(&r, 80, 40) - 1) < 1e-9);
	pv_run_drain_rate_add(&r, 13, 40); /* 20/s: the mean weighs the newest by half */
	ck_assert(fabs(r.rate - 30) < 1e-9);
	pv_run_drain_rate_add(&r, 13, 10); /* no time passed: ignored */
	ck_assert(fabs(r.rate - 30) < 1e-9);
	ck_assert_int_eq(r.depth, 40);
	pv_run_drain_rate_add(&r, 14, 140); /* rising 100/s */
	ck_assert(r.rate < 0);
	ck_assert(pv_run_drain_eta(&r, 140, 0) < 0);
	ck_assert(pv_run_drain_eta(&r, 0, 0) == 0);
}
END_TEST

START_TEST(detail)
{
	struct pv_run_drain_rate r;
	char out[160];

	memset(&r, 0, sizeof(r));
	pv_run_drain_rate_add(&r, 0, 120);
	pv_run_drain_detail(out, sizeof(out), "req_queue", 120, 0, &r, 0, 4, 2);
	ck_assert_str_eq(out, "req_queue 120, not falling, next poll in 2 s");
	pv_run_drain_rate_add(&r, 1, 80);
	pv_run_drain_detail(out, sizeof(out), "req_queue", 80, 0, &r, 0, 4, 2);
	ck_assert_str_eq(out, "req_queue 80, draining 40/s, ETA 2 s");
	pv_run_drain_rate_add(&r, 2, 90);
	pv_run_drain_detail(out, sizeof(out), "req_queue", 90, 0, &r, 0, 4, 3);
	ck_assert_str_eq(out, "req_queue 90, draining 15/s, ETA 6 s");
	pv_run_drain_rate_add(&r, 3, 130);
	pv_run_drain_detail(out, sizeof(out), "req_queue", 130, 0, &r, 0, 4, 4.5);
	ck_assert_str_eq(out, "req_queue 130, rising 12/s, next poll in 5 s");
	pv_run_drain_detail(out, sizeof(out), "req_queue", 0, 0, &r, 2.4, 4, 2);
	ck_assert_str_eq(out, "req_queue 0, settling 2/4 s");
	pv_run_drain_detail(out, sizeof(out), "req_queue", 0, 0, &r, 0, 0, 2);
	ck_assert_str_eq(out, "req_queue 0, drained");
	/* a long ETA in minutes */
	memset(&r, 0, sizeof(r));
	pv_run_drain_rate_add(&r, 0, 210);
	pv_run_drain_rate_add(&r, 10, 200);
	pv_run_drain_detail(out, sizeof(out), "q", 200, 0, &r, 0, 4, 2);
	ck_assert_str_eq(out, "q 200, draining 1.0/s, ETA 3 min 20 s");
}
END_TEST

START_TEST(config)
{
	struct pv_playbook *pb = load(NULL);
	const char *no_server_pb = "domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, "
				   "ca_file: /c, admin_password: {file: /a}}\n"
				   "clients: [{name: cli1, address: 198.18.0.31}]\n";
	const char *wb[] = {"drain.probe=writeback", NULL};
	struct pv_playbook_drain d = pb->drain;
	struct pv_env env = {pb, true, NULL, NULL, NULL};
	struct pv_run_drain_result res;
	struct pv_playbook *ns = NULL;
	struct pv_env_plan plan = {0};

	/* a playbook without drain: no probe, named with the option and the key */
	ck_assert(!pb->has_drain);
	ck_assert_int_eq(pv_run_drain_check(pb, &d), PV_ECONFIG);
	HAS("--probe");
	HAS("drain.probe");
	ck_assert_int_eq(pv_run_drain_wait(&env, &d, &res), PV_ECONFIG);
	ck_assert_int_eq(res.polls, 0);
	d.probe = PV_PLAYBOOK_PROBE_INFLIGHT;
	ck_assert_int_eq(pv_run_drain_check(pb, &d), PV_OK);
	d.interval = 0;
	ck_assert_int_eq(pv_run_drain_check(pb, &d), PV_ECONFIG);
	HAS("--interval");
	d.interval = 2;
	d.threshold = -1;
	ck_assert_int_eq(pv_run_drain_check(pb, &d), PV_ECONFIG);
	HAS("--threshold");
	d.threshold = 0;
	d.probe = PV_PLAYBOOK_PROBE_COMMAND;
	d.command = "nas-queue --token s3cret";
	ck_assert_int_eq(pv_run_drain_check(pb, &d), PV_OK);
	/* the plan shows the command's first word only */
	pv_run_drain_plan(pb, &d, &plan);
	ck_assert_uint_eq(plan.n, 2);
	ck_assert_str_eq(plan.items[0],
			 "poll req_queue on srv: the output of drain.command 'nas-queue ...'");
	ck_assert_str_eq(plan.items[1], "poll every 2 s while it falls (backing off to 16 s while "
					"it does not), until it is at most 0 for 4 s, giving "
					"up after 600 s");
	pv_env_plan_release(&plan);
	pv_playbook_free(pb);

	/* --set drain.probe=writeback (--probe writeback) on a playbook without drain: */
	pb = load(wb);
	ck_assert(pb->has_drain);
	ck_assert_int_eq(pb->drain.probe, PV_PLAYBOOK_PROBE_WRITEBACK);
	ck_assert_int_eq(pb->drain.interval, 2);
	ck_assert_int_eq(pb->drain.settle, 4);
	ck_assert_int_eq(pb->drain.timeout, 600);
	env.pb = pb;
	/* a dry run checks and polls nothing (no host is reached: there is no session here) */
	ck_assert_int_eq(pv_run_drain_wait(&env, &pb->drain, &res), PV_OK);
	ck_assert_int_eq(res.polls, 0);
	ck_assert(!res.drained);
	ck_assert_str_eq(res.metric, "dirty+writeback kB");
	pv_playbook_free(pb);

	ck_assert_int_eq(pv_playbook_parse("t.yaml", no_server_pb, strlen(no_server_pb), wb, &ns),
			 PV_OK);
	ck_assert_int_eq(pv_run_drain_check(ns, &ns->drain), PV_ECONFIG);
	HAS("no server");
	pv_playbook_free(ns);
	{
		const char *wsmb[] = {"drain.probe=smb", NULL};
		const char *noclients = "domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, "
					"ca_file: /c, admin_password: {file: /a}}\n"
					"server: {name: srv, address: 198.18.0.20}\n";

		ck_assert_int_eq(
			pv_playbook_parse("t.yaml", noclients, strlen(noclients), wsmb, &ns),
			PV_OK);
		ck_assert_int_eq(pv_run_drain_check(ns, &ns->drain), PV_ECONFIG);
		HAS("has no clients");
		pv_playbook_free(ns);
	}
	ck_assert_str_eq(pv_run_drain_probe_name(PV_PLAYBOOK_PROBE_SMB), "smb");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("drain");
	TCase *tc = tcase_create("drain");

	tcase_add_test(tc, numbers);
	tcase_add_test(tc, quote);
	tcase_add_test(tc, writeback);
	tcase_add_test(tc, inflight);
	tcase_add_test(tc, lab_users);
	tcase_add_test(tc, smb);
	tcase_add_test(tc, backoff);
	tcase_add_test(tc, rate);
	tcase_add_test(tc, detail);
	tcase_add_test(tc, config);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
