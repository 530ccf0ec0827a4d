/* tests/unit/check_phases.c: the pure parts of phases/: the run's ramp and each client's share,
 * the command driver's templates, FSCT's command lines, the server watch's lines, summary and
 * CSV. */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <string.h>

#include "run/render.h"
#include "run/watch.h"
#include "util/err.h"

static const char PB[] = "domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, ca_file: /c,"
			 " admin_password: {file: /a}}\n"
			 "users: {per_client: 10}\n"
			 "server: {name: srv, address: 198.18.0.20, shares: 2}\n"
			 "clients: [{name: cli1, address: 198.18.0.31}, {name: cli2, address: "
			 "198.18.0.32}]\n"
			 "driver: {min_users: 4, max_users: 15, step: 5, duration: 30, warmup: 2}\n";

static struct pv_playbook *load(const char *const *ovr)
{
	struct pv_playbook *pb = NULL;

	ck_assert_int_eq(pv_playbook_parse("t.yaml", PB, strlen(PB), ovr, &pb), PV_OK);
	return pb;
}

START_TEST(ramp)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_ramp r;
	const char *too_many[] = { "driver.max_users=21", NULL };
	const char *too_few[] = { "driver.min_users=1", NULL };

	ck_assert_int_eq(pv_ramp_plan(pb, &r), PV_OK);
	ck_assert_uint_eq(r.n, 4); /* 4, 9, 14, and max_users 15 last */
	pv_ramp_release(&r);
	pv_playbook_free(pb);
	/* FSCT's iterations: min, min+step, ... and max_users last */
	{
		const char *o[] = { "driver.min_users=4", "driver.max_users=14", NULL };

		pb = load(o);
		ck_assert_int_eq(pv_ramp_plan(pb, &r), PV_OK);
		ck_assert_uint_eq(r.n, 3);
		ck_assert_uint_eq(r.totals[0], 4);
		ck_assert_uint_eq(r.totals[1], 9);
		ck_assert_uint_eq(r.totals[2], 14);
		pv_ramp_release(&r);
		pv_playbook_free(pb);
	}
	pb = load(too_many);
	ck_assert_int_eq(pv_ramp_plan(pb, &r), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "prepare makes 20 users"));
	pv_playbook_free(pb);
	pb = load(too_few);
	ck_assert_int_eq(pv_ramp_plan(pb, &r), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "fewer than the 2 clients"));
	pv_playbook_free(pb);
	/* shares over the clients: even, the first ones one more, summing to the total */
	ck_assert_uint_eq(pv_ramp_share(9, 2, 0), 5);
	ck_assert_uint_eq(pv_ramp_share(9, 2, 1), 4);
	ck_assert_uint_eq(pv_ramp_share(10, 3, 0) + pv_ramp_share(10, 3, 1) + pv_ramp_share(10, 3, 2),
			  10);
}
END_TEST

START_TEST(ramp_last_step)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_ramp r;

	/* 4 9 14, and max_users 15 as the last step even though the step does not reach it */
	ck_assert_int_eq(pv_ramp_plan(pb, &r), PV_OK);
	ck_assert_uint_eq(r.totals[r.n - 1], 15);
	ck_assert_uint_eq(r.totals[0], 4);
	pv_ramp_release(&r);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(render)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_driver_vars v = { "cli2", 3, 7, 2, 4, 30, 2, "/tmp/r/2", "/tmp/r/2/.pw",
				    "cli1,cli2" };
	struct pv_buf b = PV_BUF_INIT;
	bool pw = false;

	ck_assert_int_eq(pv_driver_render(pb, "load --users {users}/{users_total} --step {step}/{steps}"
					      " --for {duration}s+{warmup} -o {results} "
					      "{first_user}..{last_user} via {alias_template} on "
					      "//{server}/{share} ({shares}) as {domain}\\\\{user_template}"
					      " in {realm} {dns_domain} {lab} {clients} {server_address}",
					  &v, &b, &pw),
			 PV_OK);
	ck_assert_str_eq(b.data, "load --users 3/7 --step 2/4 --for 30s+2 -o /tmp/r/2 cli2-u1..cli2-u3"
				 " via srvu{n} on //srv/fsroot1 (2) as LAB\\\\cli2-u{n} in LAB.TEST "
				 "lab.test provision cli1,cli2 198.18.0.20");
	ck_assert(!pw);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_driver_render(pb, "x -A {password_file}", &v, &b, &pw), PV_OK);
	ck_assert(pw);
	ck_assert_str_eq(b.data, "x -A /tmp/r/2/.pw");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_driver_render(pb, "x {userz}", &v, &b, &pw), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "'{userz}' is not a placeholder"));
	pv_buf_reset(&b);
	/* braces that are not a placeholder stay: the shell's, a lone '{', a {N} or {a-b} */
	ck_assert_int_eq(pv_driver_render(pb, "a { b; } ${X:-1} ${HOME} {N} {", &v, &b, &pw), PV_OK);
	ck_assert_str_eq(b.data, "a { b; } ${X:-1} ${HOME} {N} {");
	pv_buf_release(&b, 0);
	pv_playbook_free(pb);
}
END_TEST

START_TEST(fsct)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_fsct_client(pb, "CTL", &b), PV_OK);
	ck_assert_str_eq(b.data, "$pw = [Console]::In.ReadLine(); & 'fsct.exe' run client /controller "
				 "'CTL' /server 'srv' /password $pw /domain 'lab.test'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_fsct_controller(pb, &b), PV_OK);
	ck_assert_str_eq(b.data, "$pw = [Console]::In.ReadLine(); & 'fsct.exe' run controller /server "
				 "'srv' /password $pw /volumes '\\\\srv\\fsroot1' /clients "
				 "'cli1,cli2' /min_users 4 /max_users 15 /step 5 /duration 30 "
				 "/workload 'HomeFolders'");
	ck_assert(!strstr(b.data, "Us3r")); /* no password in what is rendered */
	pv_buf_release(&b, 0);
	pv_playbook_free(pb);
}
END_TEST

static const char LINE[] = "pv-watch cpu=12.5 usr=8.0 sys=4.5 iowait=0.0 smbd=20.1 winbindd=0.5 "
			   "samba=0.0 self=0.31 mem_used=512.0 mem_avail=1024.5 dirty=3.0 "
			   "rd=0.0 wr=120.5 inflight=2 net=eth0:10.5:20.0,veth1:1.5:2.0";

START_TEST(watch_parse)
{
	struct pv_watch_sample s;
	char bad[256];

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_watch_parse(LINE, strlen(LINE), &s), PV_OK);
	ck_assert(s.v[PV_W_CPU] == 12.5 && s.v[PV_W_SMBD] == 20.1 && s.v[PV_W_SELF] == 0.31);
	ck_assert(s.v[PV_W_MEM_AVAIL] == 1024.5 && s.v[PV_W_INFLIGHT] == 2);
	ck_assert(s.v[PV_W_NET_RX] == 12.0 && s.v[PV_W_NET_TX] == 22.0); /* summed over interfaces */
	ck_assert_uint_eq(s.nifs, 2); /* and each kept */
	ck_assert_str_eq(s.ifs[1].name, "veth1");
	ck_assert(s.ifs[1].rx == 1.5 && s.ifs[1].tx == 2.0);
	ck_assert_int_eq(pv_watch_parse("pv-watch-start interval=2 hz=100", 32, &s), 1);
	/* no interface but lo */
	snprintf(bad, sizeof(bad), "%.*snet=-", (int)(strstr(LINE, "net=") - LINE), LINE);
	ck_assert_int_eq(pv_watch_parse(bad, strlen(bad), &s), PV_OK);
	ck_assert(s.v[PV_W_NET_RX] == 0 && s.v[PV_W_NET_TX] == 0);
	/* a field a newer sampler adds is let through */
	snprintf(bad, sizeof(bad), "%s gpu=3", LINE);
	ck_assert_int_eq(pv_watch_parse(bad, strlen(bad), &s), PV_OK);
	/* malformed: quoted in the message */
	ck_assert_int_eq(pv_watch_parse("perl: not found", 15, &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "'perl: not found'"));
	snprintf(bad, sizeof(bad), "%s", LINE);
	memcpy(strstr(bad, "cpu=12.5"), "cpu=1x.5", 8);
	ck_assert_int_eq(pv_watch_parse(bad, strlen(bad), &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "not a number"));
	snprintf(bad, sizeof(bad), "%.*s", (int)(strstr(LINE, " net=") - LINE), LINE);
	ck_assert_int_eq(pv_watch_parse(bad, strlen(bad), &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "no net_rx field"));
	ck_assert_int_eq(pv_watch_parse("pv-watch cpu=nan", 16, &s), PV_EREMOTE);
	ck_assert_int_eq(pv_watch_parse("pv-watch cpu=1 net=eth0:1", 25, &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "net field"));
	ck_assert_int_eq(pv_watch_parse("pv-watch cpu=1 net=eth0:1:2,", 28, &s), PV_EREMOTE);
}
END_TEST

START_TEST(watch_summary)
{
	struct pv_watch_sample s[20];
	struct pv_watch_stat st[PV_W_COUNT];
	struct pv_buf b = PV_BUF_INIT;

	memset(s, 0, sizeof(s));
	for (int i = 0; i < 20; i++) {
		s[i].t = 100 + 2 * i;
		s[i].v[PV_W_CPU] = 20 - i; /* 20, 19, ... 1: unsorted on purpose */
		s[i].v[PV_W_SMBD] = 5;
	}
	ck_assert_int_eq(pv_watch_summarize(s, 20, st), PV_OK);
	ck_assert(st[PV_W_CPU].mean == 10.5);
	ck_assert(st[PV_W_CPU].p95 == 19); /* rank ceil(0.95 * 20) = 19 of 1..20 */
	ck_assert(st[PV_W_CPU].max == 20);
	ck_assert(st[PV_W_SMBD].mean == 5 && st[PV_W_SMBD].p95 == 5);
	ck_assert_int_eq(pv_watch_summarize(s, 1, st), PV_OK);
	ck_assert(st[PV_W_CPU].p95 == 20 && st[PV_W_CPU].mean == 20);
	ck_assert_int_eq(pv_watch_summarize(s, 0, st), PV_OK);
	ck_assert(st[PV_W_CPU].max == 0);

	ck_assert_int_eq(pv_watch_csv(s, 3, 99, 101.5, &b), PV_OK);
	ck_assert_uint_eq(s[0].nifs, 0);
	ck_assert_str_eq(b.data,
			 "seconds,phase,cpu,usr,sys,iowait,smbd,winbindd,samba,self,mem_used,"
			 "mem_avail,dirty,rd,wr,inflight,net_rx,net_tx\n"
			 "1.0,warmup,20.0,0.0,0.0,0.0,5.0,0.0,0.0,0.00,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0\n"
			 "3.0,measure,19.0,0.0,0.0,0.0,5.0,0.0,0.0,0.00,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0\n"
			 "5.0,measure,18.0,0.0,0.0,0.0,5.0,0.0,0.0,0.00,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0\n");
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(watch_csv_interfaces)
{
	struct pv_watch_sample s[2];
	struct pv_buf b = PV_BUF_INIT;
	static const char a[] = "pv-watch cpu=1 usr=0 sys=0 iowait=0 smbd=0 winbindd=0 samba=0 self=0 "
				"mem_used=0 mem_avail=0 dirty=0 rd=0 wr=0 inflight=0 net=eth0:1:2";
	static const char c[] = "pv-watch cpu=1 usr=0 sys=0 iowait=0 smbd=0 winbindd=0 samba=0 self=0 "
				"mem_used=0 mem_avail=0 dirty=0 rd=0 wr=0 inflight=0 "
				"net=eth1:5:6,eth0:3:4";

	ck_assert_int_eq(pv_watch_parse(a, strlen(a), &s[0]), PV_OK);
	ck_assert_int_eq(pv_watch_parse(c, strlen(c), &s[1]), PV_OK);
	s[0].t = 10;
	s[1].t = 12;
	ck_assert_int_eq(pv_watch_csv(s, 2, 10, 0, &b), PV_OK);
	/* one pair of columns per interface, in the order first seen; empty where absent */
	ck_assert(strstr(b.data, ",net_rx,net_tx,rx_eth0,tx_eth0,rx_eth1,tx_eth1\n"));
	ck_assert(strstr(b.data, ",1.0,2.0,1.0,2.0,,\n"));
	ck_assert(strstr(b.data, ",8.0,10.0,3.0,4.0,5.0,6.0\n"));
	pv_buf_release(&b, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("phases");
	TCase *tc = tcase_create("phases");

	tcase_add_test(tc, ramp);
	tcase_add_test(tc, ramp_last_step);
	tcase_add_test(tc, render);
	tcase_add_test(tc, fsct);
	tcase_add_test(tc, watch_parse);
	tcase_add_test(tc, watch_summary);
	tcase_add_test(tc, watch_csv_interfaces);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
