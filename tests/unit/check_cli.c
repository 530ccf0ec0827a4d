/* tests/unit/check_cli.c: command-line parsing (provision/cli.c). */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provision/cli.h"
#include "util/err.h"

/* Split line on spaces into a static argv (valid until the next call) and parse it. */
static int parse(struct pv_cli *cli, const char *line)
{
	static char buf[512];
	static char *argv[32];
	char *save = NULL;
	int argc = 1;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[0] = "provision";
	for (char *t = strtok_r(buf, " ", &save); t && argc < 31; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	return pv_cli_parse(argc, argv, cli);
}

START_TEST(test_globals_and_command)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "-p lab.yaml -vv --json check"), PV_OK);
	ck_assert_ptr_nonnull(cli.cmd);
	ck_assert_int_eq(cli.cmd->id, CMD_CHECK);
	ck_assert_str_eq(cli.opt[OPT_PLAYBOOK], "lab.yaml");
	ck_assert_int_eq(cli.verbosity, 2);
	ck_assert_ptr_nonnull(cli.opt[OPT_JSON]);
	ck_assert_ptr_null(cli.opt[OPT_DRY_RUN]);
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_globals_after_command)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "check -q --playbook=x.yaml"), PV_OK);
	ck_assert_str_eq(cli.opt[OPT_PLAYBOOK], "x.yaml");
	ck_assert_int_eq(cli.verbosity, -1);
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_short_attached_value)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "-px.yaml dc -u7"), PV_OK);
	ck_assert_str_eq(cli.opt[OPT_PLAYBOOK], "x.yaml");
	ck_assert_str_eq(cli.opt[OPT_USERS], "7");
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_unknown_command)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "frob"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "unknown command 'frob'"));
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_unknown_option)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "check --frob"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "unknown option '--frob'"));
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "-Z"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "unknown option '-Z'"));
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_option_of_other_command)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "check --users 3"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "'--users' is not an option of 'check'"));
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "--users 3 dc"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "belongs after a command"));
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_missing_value)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "check -p"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "needs a value"));
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "--json=yes check"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "takes no value"));
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_subcommands)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "prepare server"), PV_OK);
	ck_assert_int_eq(cli.cmd->id, CMD_PREPARE);
	ck_assert_str_eq(cli.sub, "server");
	ck_assert_int_eq(pv_cli_phase(cli.sub), CMD_SERVER);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare"), PV_OK); /* the whole lab */
	ck_assert_ptr_null(cli.sub);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "cleanup"), PV_OK);
	ck_assert_ptr_null(cli.sub);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare sideways"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "expected one of dc|join|server|client|controller"));
	pv_cli_release(&cli);
	ck_assert_ptr_null(pv_cli_command("lab")); /* gone: prepare, cleanup and status */
	ck_assert_int_eq(pv_cli_phase("lab"), CMD_COUNT);
	ck_assert_int_eq(parse(&cli, "cleanup client --clients a,b"), PV_OK);
	ck_assert_str_eq(cli.sub, "client");
	ck_assert_str_eq(cli.opt[OPT_CLIENTS], "a,b");
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "check extra"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "unexpected argument 'extra'"));
	pv_cli_release(&cli);
}
END_TEST

/* prepare takes its phases' options: the whole lab those marked for it, a phase its own */
START_TEST(test_prepare_options)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "prepare --users 20 --via ssh --backup /x"), PV_OK);
	ck_assert_str_eq(cli.opt[OPT_VIA], "ssh");
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare client --clients cli1"), PV_OK);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare --clients cli1 dc"), PV_OK); /* option first */
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare --clients cli1"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "'--clients' is not an option of 'prepare'"));
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare client --via ssh"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "not an option of 'prepare client'"));
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "prepare --leave"), PV_EUSAGE);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "status --via smb"), PV_EUSAGE);
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_help_topic)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "help dc"), PV_OK);
	ck_assert_int_eq(cli.cmd->id, CMD_HELP);
	ck_assert_str_eq(cli.sub, "dc");
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "help nothing"), PV_EUSAGE);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "cleanup --help"), PV_OK);
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_sets)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "check"), PV_OK);
	ck_assert_ptr_nonnull(cli.sets);
	ck_assert_ptr_null(cli.sets[0]);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "--set a.b=1 check --set c=2"), PV_OK);
	ck_assert_uint_eq(cli.nsets, 2);
	ck_assert_str_eq(cli.sets[0], "a.b=1");
	ck_assert_str_eq(cli.sets[1], "c=2");
	ck_assert_ptr_null(cli.sets[2]);
	pv_cli_release(&cli);
	ck_assert_int_eq(parse(&cli, "--set novalue check"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "KEY=VALUE"));
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_double_dash)
{
	struct pv_cli cli;

	ck_assert_int_eq(parse(&cli, "-- -weird"), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "unknown command '-weird'"));
	pv_cli_release(&cli);
}
END_TEST

START_TEST(test_count)
{
	unsigned long v = 99;

	ck_assert_int_eq(pv_cli_count("--users", "2000", 1000000, &v), PV_OK);
	ck_assert_uint_eq(v, 2000);
	ck_assert_int_eq(pv_cli_count("--users", "0", 1000000, &v), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "at least 1"));
	ck_assert_int_eq(pv_cli_count("--users", "-5", 1000000, &v), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "not a number"));
	ck_assert_int_eq(pv_cli_count("--users", "12abc", 1000000, &v), PV_EUSAGE);
	ck_assert_int_eq(pv_cli_count("--users", "1000001", 1000000, &v), PV_EUSAGE);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "larger than 1000000"));
	ck_assert_int_eq(pv_cli_count("--users", "99999999999999999999999", 1000000, &v), PV_EUSAGE);
	ck_assert_int_eq(pv_cli_count("--users", "", 1000000, &v), PV_EUSAGE);
	ck_assert_uint_eq(v, 2000); /* untouched on failure */
}
END_TEST

START_TEST(test_tables_consistent)
{
	for (size_t i = 0; i < CMD_COUNT; i++) {
		ck_assert_int_eq(pv_commands[i].id, (int)i);
		ck_assert_ptr_eq(pv_cli_command(pv_commands[i].name), &pv_commands[i]);
	}
	for (size_t i = 0; i < pv_noptions; i++)
		for (size_t j = i + 1; j < pv_noptions; j++) {
			ck_assert_str_ne(pv_options[i].lng, pv_options[j].lng);
			if (pv_options[i].shrt)
				ck_assert_int_ne(pv_options[i].shrt, pv_options[j].shrt);
		}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_globals_and_command);
	tcase_add_test(tc, test_globals_after_command);
	tcase_add_test(tc, test_short_attached_value);
	tcase_add_test(tc, test_unknown_command);
	tcase_add_test(tc, test_unknown_option);
	tcase_add_test(tc, test_option_of_other_command);
	tcase_add_test(tc, test_missing_value);
	tcase_add_test(tc, test_subcommands);
	tcase_add_test(tc, test_help_topic);
	tcase_add_test(tc, test_prepare_options);
	tcase_add_test(tc, test_sets);
	tcase_add_test(tc, test_double_dash);
	tcase_add_test(tc, test_count);
	tcase_add_test(tc, test_tables_consistent);
	suite_add_tcase(s, tc);
	return pv_unit_run(s);
}
