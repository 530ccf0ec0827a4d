/* tests/unit/check_cli.c: provision/: command-line parsing (cli.c) and the credentials
 * provider (secrets.c: {env: NAME} taken out of the environment at start, messages that name
 * where a reference was given and never its value, the process made non-dumpable). */
#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "provision/cli.h"
#include "provision/provision.h"
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
	ck_assert_ptr_nonnull(
		strstr(pv_errmsg(), "expected one of dc|join|server|client|controller"));
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
	ck_assert_int_eq(pv_cli_count("--users", "99999999999999999999999", 1000000, &v),
			 PV_EUSAGE);
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

/* ---- the credentials provider ---- */

#define PB_HEAD                                                                                    \
	"domain:\n"                                                                                \
	"  realm: LAB.TEST\n"                                                                      \
	"  netbios: LAB\n"                                                                         \
	"  dc: dc.lab.test\n"                                                                      \
	"  ca_file: /etc/ca.pem\n"

/* A context with the playbook text loaded and the provider made. */
static void creds_ctx(struct pv_ctx *ctx, const char *text)
{
	memset(ctx, 0, sizeof(*ctx));
	ck_assert_msg(pv_playbook_parse("t.yaml", text, strlen(text), NULL, &ctx->pb) == PV_OK,
		      "%s", pv_errmsg());
	ck_assert_int_eq(pv_creds_init(ctx), PV_OK);
	ctx->env.pb = ctx->pb;
}

static void creds_ctx_free(struct pv_ctx *ctx)
{
	pv_creds_free(ctx->creds);
	pv_playbook_free(ctx->pb);
}

/* What a child started now sees of the variable: "unset" or its value. */
static void child_sees(const char *name, const char *want)
{
	char cmd[128], line[64] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "printf %%s \"${%s-unset}\"", name);
	ck_assert_ptr_nonnull(p = popen(cmd, "r"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), p));
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_str_eq(line, want);
}

START_TEST(test_creds_env_taken_at_start)
{
	struct pv_ctx ctx;
	const struct pv_secret *admin = NULL, *users = NULL;

	setenv("PV_T_ADMIN", "adm1n-pw", 1);
	setenv("PV_T_OTHER", "kept", 1);
	child_sees("PV_T_ADMIN", "adm1n-pw");
	/* the same variable for both: taken once, given to both */
	creds_ctx(&ctx, PB_HEAD "  admin_password: {env: PV_T_ADMIN}\n"
				"users: {password: {env: PV_T_ADMIN}}\n");
	/* gone before any secret is asked for: no child, thread or worker inherits it */
	ck_assert_ptr_null(getenv("PV_T_ADMIN"));
	child_sees("PV_T_ADMIN", "unset");
	child_sees("PV_T_OTHER", "kept");
	ck_assert_int_eq(pv_env_secret(&ctx.env, PV_ENV_CRED_ADMIN, &admin), PV_OK);
	ck_assert_str_eq(admin->data, "adm1n-pw");
	ck_assert_int_eq(pv_env_secret(&ctx.env, PV_ENV_CRED_USERS, &users), PV_OK);
	ck_assert_str_eq(users->data, "adm1n-pw");
	ck_assert_ptr_ne(admin, users);
	creds_ctx_free(&ctx);
	unsetenv("PV_T_OTHER");
}
END_TEST

/* A password written where the variable's name or the file's path goes is never repeated:
 * the message names the place in the playbook instead. */
START_TEST(test_creds_messages_name_the_place)
{
	struct pv_ctx ctx;
	const struct pv_secret *sec = NULL;

	unsetenv("Sup3rSecret");
	creds_ctx(&ctx, PB_HEAD "  admin_password: {env: Sup3rSecret}\n"
				"users: {password: {file: \"/nonexistent/Sup3r-Secret!\"}}\n");
	ck_assert_int_eq(pv_env_secret(&ctx.env, PV_ENV_CRED_ADMIN, &sec), PV_ECONFIG);
	ck_assert_str_eq(pv_errmsg(),
			 "admin password: the environment variable given at t.yaml:6:25 is unset: "
			 "export it in the shell that runs provision, or give the secret as {file: "
			 "F}, {stdin: true} or {prompt: true}");
	/* asked again: the same failure, nothing read twice */
	ck_assert_int_eq(pv_env_secret(&ctx.env, PV_ENV_CRED_ADMIN, &sec), PV_ECONFIG);
	ck_assert_ptr_null(strstr(pv_errmsg(), "Sup3r"));
	ck_assert_int_eq(pv_env_secret(&ctx.env, PV_ENV_CRED_USERS, &sec), PV_EIO);
	ck_assert_str_eq(pv_errmsg(), "users' password: cannot open the file given at t.yaml:7:26: "
				      "No such file or directory");
	ck_assert_ptr_null(strstr(pv_errmsg(), "Sup3r"));
	creds_ctx_free(&ctx);

	/* the option's file when --password-file gives it */
	creds_ctx(&ctx, PB_HEAD "  admin_password: {prompt: true}\n");
	ctx.cli.opt[OPT_PASSWORD_FILE] = "/nonexistent/Sup3r-Secret!";
	ck_assert_int_eq(pv_env_secret(&ctx.env, PV_ENV_CRED_USERS, &sec), PV_EIO);
	ck_assert_str_eq(pv_errmsg(),
			 "users' password: cannot open the file given by --password-file: "
			 "No such file or directory");
	ctx.cli.opt[OPT_PASSWORD_FILE] = NULL;
	creds_ctx_free(&ctx);
}
END_TEST

START_TEST(test_creds_harden)
{
	struct rlimit rl;

	ck_assert_int_eq(pv_creds_harden(), PV_OK);
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_CORE, &rl), 0);
	ck_assert_uint_eq(rl.rlim_cur, 0);
	ck_assert_uint_eq(rl.rlim_max, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("parse");
	TCase *tc2 = tcase_create("creds");

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
	tcase_add_test(tc2, test_creds_env_taken_at_start);
	tcase_add_test(tc2, test_creds_messages_name_the_place);
	tcase_add_test(tc2, test_creds_harden);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tc2);
	return pv_unit_run(s);
}
