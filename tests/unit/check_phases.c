/* tests/unit/check_phases.c: the pure parts of phases/: the run's ramp and each client's share,
 * the command driver's templates, FSCT's command lines. */
#include <check.h>

#include "tests/unit/unit.h"
#include <string.h>

#include "phases/driver.h"
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

int main(void)
{
	Suite *s = suite_create("phases");
	TCase *tc = tcase_create("phases");

	tcase_add_test(tc, ramp);
	tcase_add_test(tc, ramp_last_step);
	tcase_add_test(tc, render);
	tcase_add_test(tc, fsct);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
