/* tests/unit/check_phases.c: the pure parts of phases/: the run's ramp and each client's share,
 * the command driver's templates, FSCT's command lines, the server watch's lines, summary and
 * CSV; which DC a host names (phases/replica.h); the prerequisites check names (phases/needs.h)
 * and the phases each kind of server takes (server.kind); and the caps on what `run` gathers
 * from a host in a step (run/caps.h, run/sink.h), on a folder of its own under /tmp. */
#include <check.h>

#include "tests/unit/unit.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "phases/lab.h"
#include "phases/needs.h"
#include "phases/replica.h"
#include "phases/trees_internal.h"
#include "load/line.h"
#include "run/internal.h"
#include "run/lines.h"
#include "run/caps.h"
#include "run/render.h"
#include "run/sink.h"
#include "run/watch.h"
#include "util/err.h"
#include "util/tar.h"

static const char PB[] =
	"domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, ca_file: /c,"
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
	struct pv_run_ramp r;
	const char *too_many[] = {"driver.max_users=21", NULL};
	const char *too_few[] = {"driver.min_users=1", NULL};

	ck_assert_int_eq(pv_run_ramp_plan(pb, &r), PV_OK);
	ck_assert_uint_eq(r.n, 4); /* 4, 9, 14, and max_users 15 last */
	pv_run_ramp_release(&r);
	pv_playbook_free(pb);
	/* FSCT's iterations: min, min+step, ... and max_users last */
	{
		const char *o[] = {"driver.min_users=4", "driver.max_users=14", NULL};

		pb = load(o);
		ck_assert_int_eq(pv_run_ramp_plan(pb, &r), PV_OK);
		ck_assert_uint_eq(r.n, 3);
		ck_assert_uint_eq(r.totals[0], 4);
		ck_assert_uint_eq(r.totals[1], 9);
		ck_assert_uint_eq(r.totals[2], 14);
		pv_run_ramp_release(&r);
		pv_playbook_free(pb);
	}
	pb = load(too_many);
	ck_assert_int_eq(pv_run_ramp_plan(pb, &r), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "prepare makes 20 users"));
	pv_playbook_free(pb);
	pb = load(too_few);
	ck_assert_int_eq(pv_run_ramp_plan(pb, &r), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "fewer than the 2 clients"));
	pv_playbook_free(pb);
	/* shares over the clients: even, the first ones one more, summing to the total */
	ck_assert_uint_eq(pv_run_ramp_share(9, 2, 0), 5);
	ck_assert_uint_eq(pv_run_ramp_share(9, 2, 1), 4);
	ck_assert_uint_eq(pv_run_ramp_share(10, 3, 0) + pv_run_ramp_share(10, 3, 1) +
				  pv_run_ramp_share(10, 3, 2),
			  10);
}
END_TEST

START_TEST(ramp_last_step)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_run_ramp r;

	/* 4 9 14, and max_users 15 as the last step even though the step does not reach it */
	ck_assert_int_eq(pv_run_ramp_plan(pb, &r), PV_OK);
	ck_assert_uint_eq(r.totals[r.n - 1], 15);
	ck_assert_uint_eq(r.totals[0], 4);
	pv_run_ramp_release(&r);
	pv_playbook_free(pb);
}
END_TEST

/* --refine: halving the gap between the last step carried and the first over it */
START_TEST(refine)
{
	static struct pv_load_summary st[8];
	size_t n = 3;
	unsigned next;

	memset(st, 0, sizeof(st));
	for (int i = 0; i < 3; i++) {
		st[i].users = st[i].connected = 40 * (i + 1); /* 40, 80, 120 */
		st[i].all.n.started = st[i].all.lat.n = 100;
	}
	st[2].all.n.overloaded = 50;
	/* the server's limit at 97 users: each step carried below it, overloaded above */
	while ((next = pv_run_refine_next(st, n, 1, 5, 2)) > 0) {
		ck_assert_uint_lt(n, 8);
		st[n].users = st[n].connected = next;
		st[n].all.n.started = st[n].all.lat.n = 100;
		st[n].all.n.overloaded = next > 97 ? 50 : 0;
		n++;
	}
	/* 80 | 120 -> 100 (over), 90, 95: 95 carried, 100 over: 5 apart */
	ck_assert_uint_eq(n, 6);
	ck_assert(st[3].users == 100 && st[4].users == 90 && st[5].users == 95);
	/* nothing to refine: no step over the answer; the step over it client-bound; no
	 * resolution asked */
	ck_assert_uint_eq(pv_run_refine_next(st, 2, 1, 5, 2), 0);
	ck_assert_uint_eq(pv_run_refine_next(st, 3, 1, 0, 2), 0);
	st[2].client_bound = true;
	ck_assert_uint_eq(pv_run_refine_next(st, 3, 1, 5, 2), 0);
	/* nothing carried: from 0 up, never below the minimum (a user per client) */
	st[0].all.n.overloaded = 50;
	st[0].users = 4;
	ck_assert_uint_eq(pv_run_refine_next(st, 1, 1, 1, 3), 3);
	ck_assert_uint_eq(pv_run_refine_next(st, 1, 1, 1, 4), 0);
}
END_TEST

/* --over-steps: the ramp ends when the last k steps were all the server's overload */
START_TEST(ramp_over)
{
	static struct pv_load_summary st[4];

	memset(st, 0, sizeof(st));
	for (int i = 0; i < 4; i++) {
		st[i].users = st[i].connected = 10 * (i + 1); /* 10, 20, 30, 40 */
		st[i].all.n.started = st[i].all.lat.n = 100;
	}
	st[1].all.n.overloaded = st[2].all.n.overloaded = 50;
	ck_assert(!pv_run_ramp_over(st, 1, 1, 1)); /* step 1 carried */
	ck_assert(pv_run_ramp_over(st, 2, 1, 1));
	ck_assert(!pv_run_ramp_over(st, 2, 1, 2)); /* one over, two asked */
	ck_assert(pv_run_ramp_over(st, 3, 1, 2));
	ck_assert(!pv_run_ramp_over(st, 3, 1, 3)); /* step 1 carried among the three */
	ck_assert(!pv_run_ramp_over(st, 3, 1, 0)); /* not asked */
	ck_assert(!pv_run_ramp_over(st, 1, 1, 2)); /* fewer steps than asked */
	/* a client-bound step is not the server's overload; nor is a step nobody logged on to */
	st[2].client_bound = true;
	ck_assert(!pv_run_ramp_over(st, 3, 1, 2));
	st[2].client_bound = false;
	st[2].users = 0;
	ck_assert(!pv_run_ramp_over(st, 3, 1, 1));
	/* a step whose load never started (too short a step) says nothing of the server */
	st[2].users = 30;
	st[2].all.n.started = 0;
	ck_assert(!pv_run_ramp_over(st, 3, 1, 1));
	st[2].all.n.started = 100;
	/* overloaded under the threshold: carried */
	st[2].users = 30;
	st[2].all.n.overloaded = 1;
	ck_assert(!pv_run_ramp_over(st, 3, 5, 1));
}
END_TEST

START_TEST(render)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_run_driver_vars v = {"cli2",	       3,	   7, 2, 4, 30, 2, "/tmp/r/2",
				       "/tmp/r/2/.pw", "cli1,cli2"};
	struct pv_buf b = PV_BUF_INIT;
	bool pw = false;

	ck_assert_int_eq(
		pv_run_driver_render(pb,
				     "load --users {users}/{users_total} --step {step}/{steps}"
				     " --for {duration}s+{warmup} -o {results} "
				     "{first_user}..{last_user} via {alias_template} on "
				     "//{server}/{share} ({shares}) as {domain}\\\\{user_template}"
				     " in {realm} {dns_domain} {lab} {clients} {server_address}",
				     &v, &b, &pw),
		PV_OK);
	/* names and paths single-quoted where they land unquoted; numbers as they are */
	ck_assert_str_eq(b.data, "load --users 3/7 --step 2/4 --for 30s+2 -o '/tmp/r/2' "
				 "'cli2-u1'..'cli2-u3' via 'srvu{n}' on //'srv'/'fsroot1' (2) as "
				 "'LAB'\\\\'cli2-u{n}' in 'LAB.TEST' 'lab.test' 'provision' "
				 "'cli1,cli2' '198.18.0.20'");
	ck_assert(!pw);
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_run_driver_render(pb, "x -A {password_file}", &v, &b, &pw), PV_OK);
	ck_assert(pw);
	ck_assert_str_eq(b.data, "x -A '/tmp/r/2/.pw'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_run_driver_render(pb, "x {userz}", &v, &b, &pw), PV_ECONFIG);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "'{userz}' is not a placeholder"));
	pv_buf_reset(&b);
	/* braces that are not a placeholder stay: the shell's, a lone '{', a {N} or {a-b} */
	ck_assert_int_eq(pv_run_driver_render(pb, "a { b; } ${X:-1} ${HOME} {N} {", &v, &b, &pw),
			 PV_OK);
	ck_assert_str_eq(b.data, "a { b; } ${X:-1} ${HOME} {N} {");
	pv_buf_release(&b, 0);
	pv_playbook_free(pb);
}
END_TEST

/* What sh prints for cmd (its first line of output, at most len - 1 bytes). */
static void sh_out(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
}

/* A value that is shell code, quotes, spaces and a '$' comes back from sh as exactly itself
 * wherever the template puts it: unquoted, in double or single quotes, in $( ) and ` ` (also
 * inside double quotes), after a comment with a quote in it; a \{word} stays text. Each case
 * is run by /bin/sh, which is the judge. */
START_TEST(render_quoted)
{
	static const char *const where[] = {
		"printf '%s|' {results}",
		"printf '%s|' \"{results}\"",
		"printf '%s|' '{results}'",
		"printf '%s|' x{results}y",
		"printf '%s|' \"$(printf '%s' {results})\"",
		"printf '%s|' \"$(printf '%s' \"{results}\")\"",
		"printf '%s|' \"`printf '%s' {results}`\"",
		"printf '%s|' \"$( (printf '%s' \"{results}\") )\"",
		"# it's a comment\nprintf '%s|' {results}",
	};
	const char *val = "/tmp/a b/$(touch /tmp/pv-PWNED)/`id`/it's \"q\" \\ & ; |";
	struct pv_playbook *pb = load(NULL);
	struct pv_run_driver_vars v = {"cli2", 3, 7, 2, 4, 30, 2, val, "/p", "cli1,cli2"};
	struct pv_buf b = PV_BUF_INIT;
	char got[512], want[512];

	unlink("/tmp/pv-PWNED");
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		pv_buf_reset(&b);
		ck_assert_int_eq(pv_run_driver_render(pb, where[i], &v, &b, NULL), PV_OK);
		sh_out(b.data, got, sizeof(got));
		snprintf(want, sizeof(want), "%s|", i == 3 ? "" : val);
		if (i == 3)
			snprintf(want, sizeof(want), "x%sy|", val);
		ck_assert_msg(!strcmp(got, want), "template %s rendered as %s printed %s", where[i],
			      b.data, got);
	}
	ck_assert_int_ne(access("/tmp/pv-PWNED", F_OK), 0);
	/* numbers stay bare (arithmetic takes them); a backslash keeps a brace as text */
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_run_driver_render(pb, "echo $(( {users} * {duration} )) \\{results}",
					      &v, &b, NULL),
			 PV_OK);
	sh_out(b.data, got, sizeof(got));
	ck_assert_str_eq(got, "90 {results}\n");
	pv_buf_release(&b, 0);
	pv_playbook_free(pb);
}
END_TEST

/* The listing of the share folders (list-trees.sh: "TYPE SIZE UID ./PATH", NUL-ended): every
 * entry's owner is kept, since a tree holding another uid's files is an earlier account's
 * (cleanup dc, dc again) and is built anew; a record without its uid is no record. */
START_TEST(listing_owners)
{
	static const char L[] = "f 1024 11117 ./fsroot1/u1/static/a.txt\0"
				"d 4096 11114 ./fsroot1/u1/static\0"
				"f 12 ./fsroot1/u1/old-format\0"
				"l 9 11117 ./fsroot1/u1/link\0";
	struct pv_buf out = PV_BUF_INIT;
	struct have *hv = NULL, *h;
	size_t nh = 0;

	ck_assert_int_eq(pv_buf_add(&out, L, sizeof(L) - 1), 0);
	ck_assert_int_eq(pv_phases_trees_parse_listing(&out, &hv, &nh), PV_OK);
	ck_assert_uint_eq(nh, 3);
	ck_assert_ptr_nonnull(h = pv_phases_trees_find(hv, nh, "fsroot1/u1/static/a.txt"));
	ck_assert(!h->dir && !h->other && h->size == 1024 && h->uid == 11117);
	ck_assert_ptr_nonnull(h = pv_phases_trees_find(hv, nh, "fsroot1/u1/static"));
	ck_assert(h->dir && h->size == 0 && h->uid == 11114);
	ck_assert_ptr_nonnull(h = pv_phases_trees_find(hv, nh, "fsroot1/u1/link"));
	ck_assert(h->other && h->uid == 11117);
	ck_assert_ptr_null(pv_phases_trees_find(hv, nh, "fsroot1/u1/old-format"));
	free(hv);
	pv_buf_release(&out, 0);
}
END_TEST

/* getent's lines: a user's uid and gid, the domain dropped; root, a system account or its
 * group (below PV_PHASES_TREES_ID_MIN) are refused: trees.pl would act as that account on the
 * server; anything not plain digits is no line of getent.sh. */
START_TEST(getent_lines)
{
	char name[PV_PLAYBOOK_NAME_MAX];
	unsigned long uid = 1, gid = 1;

	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:13156:10513", "LAB", name,
						     sizeof(name), &uid, &gid),
			 1);
	ck_assert_str_eq(name, "cli1-u1");
	ck_assert_uint_eq(uid, 13156);
	ck_assert_uint_eq(gid, 10513);
	ck_assert_int_eq(pv_phases_trees_getent_line("cli1-u2:20000:20000", "LAB", name,
						     sizeof(name), &uid, &gid),
			 1);
	ck_assert_str_eq(name, "cli1-u2");
	/* a name that starts like the domain is not cut; "LAB+" alone is no name */
	ck_assert_int_eq(pv_phases_trees_getent_line("LABu1:20000:20000", "LAB", name, sizeof(name),
						     &uid, &gid),
			 1);
	ck_assert_str_eq(name, "LABu1");
	ck_assert_int_eq(pv_phases_trees_getent_line("lab+u1:20000:20000", "LAB", name,
						     sizeof(name), &uid, &gid),
			 1);
	ck_assert_str_eq(name, "u1");
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB+:20000:20000", "LAB", name, sizeof(name),
						     &uid, &gid),
			 0);
	/* root, a system uid, root's group, a system group: refused */
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:0:10513", "LAB", name,
						     sizeof(name), &uid, &gid),
			 -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "'LAB\\cli1-u1' as uid 0"));
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:999:10513", "LAB", name,
						     sizeof(name), &uid, &gid),
			 -1);
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:13156:0", "LAB", name,
						     sizeof(name), &uid, &gid),
			 -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "group 0"));
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:13156:27", "LAB", name,
						     sizeof(name), &uid, &gid),
			 -1);
	/* not a line of getent.sh: skipped (the user is then missing, which is an error too):
	 * (uid_t)-1, a sign, a space, a field too many, a number past 32 bits */
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:4294967295:10513", "LAB", name,
						     sizeof(name), &uid, &gid),
			 0);
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:-1:10513", "LAB", name,
						     sizeof(name), &uid, &gid),
			 0);
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1: 13156:10513", "LAB", name,
						     sizeof(name), &uid, &gid),
			 0);
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:13156:10513:x", "LAB", name,
						     sizeof(name), &uid, &gid),
			 0);
	ck_assert_int_eq(pv_phases_trees_getent_line("LAB\\cli1-u1:99999999999999999999999:10513",
						     "LAB", name, sizeof(name), &uid, &gid),
			 0);
}
END_TEST

/* The command driver's wrapper lines: only what run-client.pl prints is obeyed; a status that
 * is no number of its range, or an error text past its cap, is not taken as it came. */
START_TEST(wrap_lines)
{
	struct pv_run_wrap_line w;
	char big[1000];

#define WRAP(s) pv_run_wrap_line(s, strlen(s), &w)
	WRAP("pv-started 4242");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_STARTED);
	WRAP("pv-alive");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_ALIVE);
	WRAP("pv-exit 143");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_EXIT);
	ck_assert_int_eq(w.status, 143);
	WRAP("pv-stopped -1");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_STOPPED);
	ck_assert_int_eq(w.status, -1);
	WRAP("pv-exit 99999999999999999999");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_OTHER);
	WRAP("pv-exit 1x");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_OTHER);
	WRAP("pv-stopped -2");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_OTHER);
	WRAP("pv-alive!");
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_OTHER);
	memset(big, 'x', sizeof(big));
	memcpy(big, "pv-error ", 9);
	pv_run_wrap_line(big, sizeof(big), &w);
	ck_assert_int_eq(w.kind, PV_RUN_WRAP_ERROR);
	ck_assert_uint_eq(w.textlen, PV_RUN_WRAP_TEXT_MAX);
#undef WRAP
}
END_TEST

/* A figures line for interval seq, as provision load writes it. */
static void figures_line(uint64_t seq, struct pv_buf *b)
{
	struct pv_load_figs f;

	memset(&f, 0, sizeof(f));
	f.seq = seq;
	f.secs = 1;
	f.connected = 2;
	f.threads = 2;
	f.cpu = 30;
	f.cpu_top = 20;
	f.host_cpu = -1;
	pv_buf_reset(b);
	ck_assert_int_eq(pv_load_line_encode(&f, b), PV_OK);
	b->data[--b->len] = '\0'; /* without its '\n', as the stream hands it over */
}

/* A client is trusted with nothing: one short line naming interval 1,000,000 of a step of 12
 * is refused (main's reader sized an array of 1,000,000 intervals, about 16 GiB, for it); so
 * is a line too many, a second "ready", a line too long; the intervals merge by number. */
#define LOGON "\"logon\":{\"failed\":1,\"retries\":2,\"max\":0.01,\"hist\":[[49,1]]}"
#define READY                                                                                      \
	"ready {\"users\":3,\"connected\":2,\"failed\":1,\"error\":null,\"spoke\":\"SMB "          \
	"3.1.1\"," LOGON "}"
#define READY_NEG                                                                                  \
	"ready {\"users\":2,\"connected\":-1,\"failed\":0,\"error\":null,\"spoke\":null," LOGON "}"

START_TEST(client_lines)
{
	struct pv_run_client c, d;
	const struct pv_run_client *both[] = {&c, NULL, &d};
	static struct pv_load_step ls;
	struct pv_load_client cl;
	struct pv_buf b = PV_BUF_INIT;
	char *big;

	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	c.max_iv = d.max_iv = 12;
	c.skip = d.skip = 1;
	ck_assert_int_eq(pv_run_client_line(&c, READY, strlen(READY)), 1);
	ck_assert(c.ready);
	ck_assert_uint_eq(c.connected, 2);
	ck_assert_str_eq(c.spoke, "SMB 3.1.1");
	ck_assert(c.logon.failed == 1 && c.logon.retries == 2 &&
		  pv_load_hist_count(&c.logon.lat) == 1);
	figures_line(1000000, &b);
	ck_assert_int_eq(pv_run_client_line(&c, b.data, b.len), -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "interval 1000000; the step has at most 12"));
	ck_assert_uint_le(c.niv, 12);
	for (uint64_t i = 1; i <= 3; i++) {
		figures_line(i, &b);
		ck_assert_int_eq(pv_run_client_line(&c, b.data, b.len), 2);
		if (i != 2)
			ck_assert_int_eq(pv_run_client_line(&d, b.data, b.len), 2);
	}
	ck_assert_uint_eq(c.niv, 3);
	ck_assert_int_eq(pv_run_client_line(&c, READY, strlen(READY)), -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "ready twice"));
	ck_assert_int_eq(pv_run_client_line(&d, READY_NEG, strlen(READY_NEG)), -1);
	ck_assert_int_eq(pv_run_client_line(&d, "hello", 5), -1);
	big = malloc(PV_LOAD_LINE_MAX + 1);
	memset(big, '{', PV_LOAD_LINE_MAX + 1);
	ck_assert_int_eq(pv_run_client_line(&d, big, PV_LOAD_LINE_MAX + 1), -1);
	free(big);
	/* the intervals merged by number, after the warm-up's one; d has no interval 2 */
	pv_load_step_init(&ls, 4);
	pv_run_clients_merge(both, 3, &ls);
	ck_assert_uint_eq(ls.intervals, 2);
	/* a client's own figures: its intervals after the warm-up's */
	pv_run_client_figures(&c, "cli1", &cl);
	ck_assert_str_eq(cl.name, "cli1");
	ck_assert(cl.threads == 2 && fabs(cl.cpu - 30) < 1e-9 && fabs(cl.cpu_top - 20) < 1e-9);
	ck_assert(!cl.bound);
	/* "done": the step's part over, nothing may follow */
	ck_assert_int_eq(pv_run_client_line(&d, "done", 4), 3);
	ck_assert(d.done);
	figures_line(3, &b);
	ck_assert_int_eq(pv_run_client_line(&d, b.data, b.len), -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "after it said the step was done"));
	/* an interval sent again: refused, not counted twice */
	figures_line(2, &b);
	ck_assert_int_eq(pv_run_client_line(&c, b.data, b.len), -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "interval 2 twice"));
	/* lines past the step's: refused */
	for (uint64_t i = 4; c.nlines < pv_run_client_lines_max(&c) && i <= 12; i++) {
		figures_line(i, &b);
		ck_assert_int_eq(pv_run_client_line(&c, b.data, b.len), 2);
	}
	c.nlines = pv_run_client_lines_max(&c); /* as though the others were all lines too */
	ck_assert_int_eq(pv_run_client_line(&c, "done", 4), -1);
	ck_assert_ptr_nonnull(strstr(pv_errmsg(), "more than"));
	pv_run_client_release(&c);
	pv_run_client_release(&d);
	pv_buf_release(&b, 0);
}
END_TEST

/* The intervals of a step are not kept whole (20 KiB each; an hour's step at one a second
 * grew the controller by 150 MiB a client): each client adds them up as they come. What that
 * gives is what merging the intervals by number and adding each to the step gives
 * (pv_load_figs_merge, pv_load_step_add), the warm-up's left out, for clients that skip
 * different intervals. */
static void some_figs(uint64_t seq, unsigned client, struct pv_load_figs *f)
{
	memset(f, 0, sizeof(*f));
	f->seq = seq;
	f->secs = 1 + 0.01 * (double)(seq + client);
	f->connected = (unsigned)(10 + (seq * 7 + client * 3) % 5);
	f->failed = (unsigned)((seq + client) % 3);
	f->drops = (unsigned)(seq % 2);
	f->reconnects = (unsigned)(client % 2);
	f->threads = 2;
	f->host_cpu = -1;
	for (int k = 0; k < PV_PLAYBOOK_WORKLOAD_KINDS; k++) {
		f->kind[k].started = seq * 100 + client * 10 + (uint64_t)k;
		unsigned bk = (unsigned)((seq + client + (uint64_t)k) % 20);

		f->kind[k].errors = (seq + (uint64_t)k) % 2;
		f->kind[k].overloaded = f->kind[k].errors;
		f->kind[k].ops[k % PV_LOAD_OPS] = seq + client;
		f->kind[k].lat.n[bk] = 2;
		f->kind[k].lat.max = pv_load_bucket_low(bk);
	}
	f->lag.n[seq % 20] = client + 1;
	f->lag.max = pv_load_bucket_low((unsigned)(seq % 20));
}

START_TEST(client_sums)
{
	static const uint64_t sent[2][6] = {{1, 2, 3, 4, 5, 6}, {1, 3, 4, 6, 0, 0}};
	static struct pv_run_client c[2];
	static struct pv_load_step got, want;
	static struct pv_load_figs f, m;
	const struct pv_run_client *both[] = {&c[0], &c[1]};
	struct pv_buf b = PV_BUF_INIT;

	memset(c, 0, sizeof(c));
	for (unsigned i = 0; i < 2; i++) {
		c[i].max_iv = 12;
		c[i].skip = 2;
		for (int j = 0; j < 6 && sent[i][j]; j++) {
			some_figs(sent[i][j], i, &f);
			pv_buf_reset(&b);
			ck_assert_int_eq(pv_load_line_encode(&f, &b), PV_OK);
			ck_assert_int_eq(pv_run_client_line(&c[i], b.data, b.len - 1), 2);
		}
	}
	/* what the step was before: the intervals merged by number, added one by one */
	pv_load_step_init(&want, 7);
	for (uint64_t seq = 3; seq <= 6; seq++) {
		bool any = false;

		for (unsigned i = 0; i < 2; i++)
			for (int j = 0; j < 6; j++)
				if (sent[i][j] == seq) {
					/* as the controller reads it: a line and back */
					some_figs(seq, i, &f);
					pv_buf_reset(&b);
					ck_assert_int_eq(pv_load_line_encode(&f, &b), PV_OK);
					ck_assert_int_eq(pv_load_line_decode(b.data, b.len - 1, &f),
							 PV_OK);
					if (!any)
						m = f;
					else
						pv_load_figs_merge(&m, &f);
					any = true;
				}
		if (any)
			pv_load_step_add(&want, &m);
	}
	pv_load_step_init(&got, 7);
	pv_run_clients_merge(both, 2, &got);
	ck_assert_uint_eq(got.intervals, 4);
	ck_assert_uint_eq(got.intervals, want.intervals);
	ck_assert_double_eq_tol(got.secs, want.secs, 1e-9);
	ck_assert_uint_eq(got.connected, want.connected);
	ck_assert_uint_eq(got.failed, want.failed);
	ck_assert_uint_eq(got.drops, want.drops);
	ck_assert_uint_eq(got.reconnects, want.reconnects);
	ck_assert_mem_eq(&got.lag, &want.lag, sizeof(got.lag));
	ck_assert_mem_eq(got.kind, want.kind, sizeof(got.kind));
	/* a client's own figures: its intervals after the warm-up, 4 of c[0]'s */
	{
		struct pv_load_client cl;

		pv_run_client_figures(&c[0], "cli1", &cl);
		ck_assert_uint_eq(pv_load_hist_count(&c[0].own.lag), 4);
		ck_assert_str_eq(cl.name, "cli1");
	}
	/* what is kept of an interval is small: the step's length does not weigh */
	ck_assert_uint_le(sizeof(struct pv_run_iv), 32);
	pv_run_client_release(&c[0]);
	pv_run_client_release(&c[1]);
	pv_buf_release(&b, 0);
}
END_TEST

/* The buffer that carries the users' password (and the built-in driver's user list) to a
 * host is a secret buffer before anything goes in: every growth moves it and wipes the old
 * block (util/buf.h), so no copy is left in freed memory (issue 22, finding 10). */
START_TEST(host_input_secret)
{
	struct pv_playbook *pb = load(NULL);
	struct run R;
	struct pv_run_step step;
	struct steprun st;
	struct hostrun x;
	struct pv_run_host h;

	memset(&R, 0, sizeof(R));
	memset(&step, 0, sizeof(step));
	memset(&st, 0, sizeof(st));
	memset(&x, 0, sizeof(x));
	R.pb = pb;
	snprintf(R.base, sizeof(R.base), "/tmp/provision-run-t-1");
	step.n = 1;
	step.users = 4;
	st.run = &R;
	st.step = &step;
	memset(&h, 0, sizeof(h));
	x.st = &st;
	x.h = &h;
	for (size_t i = 0; i <= pb->nclients; i++) {
		pv_run_host_init(&R, &st, &x, i);
		ck_assert(x.input.secret);
		pv_buf_release(&x.input, 1);
	}
	pv_playbook_free(pb);
}
END_TEST

START_TEST(fsct)
{
	struct pv_playbook *pb = load(NULL);
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_run_fsct_client(pb, "CTL", &b), PV_OK);
	ck_assert_str_eq(b.data,
			 "$pw = [Console]::In.ReadLine(); & 'fsct.exe' run client /controller "
			 "'CTL' /server 'srv' /password $pw /domain 'lab.test'");
	pv_buf_reset(&b);
	ck_assert_int_eq(pv_run_fsct_controller(pb, &b), PV_OK);
	ck_assert_str_eq(b.data,
			 "$pw = [Console]::In.ReadLine(); & 'fsct.exe' run controller /server "
			 "'srv' /password $pw /volumes '\\\\srv\\fsroot1' /clients "
			 "'cli1,cli2' /min_users 4 /max_users 15 /step 5 /duration 30 "
			 "/workload 'HomeFolders'");
	ck_assert(!strstr(b.data, "Us3r")); /* no password in what is rendered */
	pv_buf_release(&b, 0);
	pv_playbook_free(pb);
}
END_TEST

/* FSCT's clients reach its controller, a Windows host, by name: a run without controller.host
 * is refused naming what to set (never '/controller localhost', which is each client itself);
 * its clients must be Windows hosts and there must be a server. */
START_TEST(fsct_refusals)
{
	const char *no_host[] = {"driver.name=fsct", "controller.results=/r", NULL};
	const char *linux_cli[] = {
		"driver.name=fsct",	    "controller.results=/r",
		"controller.host.name=ctl", "controller.host.address=198.18.0.40",
		"clients.0.os=windows",	    NULL};
	const char *good[] = {"driver.name=fsct",
			      "controller.results=/r",
			      "controller.host.name=ctl",
			      "controller.host.address=198.18.0.40",
			      "clients.0.os=windows",
			      "clients.1.os=windows",
			      NULL};
	struct pv_playbook *pb = load(no_host);
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_run_fsct_check(pb), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "set controller.host.name to that host's name"), "%s",
		      pv_errmsg());
	ck_assert(strstr(pv_errmsg(), "'fsct run client /controller NAME'"));
	pv_playbook_free(pb);
	/* no controller section at all: the same */
	{
		const char *none[] = {"driver.name=fsct", NULL};

		pb = load(none);
		ck_assert_int_eq(pv_run_fsct_check(pb), PV_ECONFIG);
		ck_assert(strstr(pv_errmsg(), "controller.host.name"));
		pv_playbook_free(pb);
	}
	pb = load(linux_cli);
	ck_assert_int_eq(pv_run_fsct_check(pb), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "'cli2' is os: linux: set its os: windows"), "%s",
		      pv_errmsg());
	pv_playbook_free(pb);
	pb = load(good);
	ck_assert_int_eq(pv_run_fsct_check(pb), PV_OK);
	ck_assert_int_eq(pv_run_fsct_client(pb, pb->controller.host.name, &b), PV_OK);
	ck_assert(strstr(b.data, "/controller 'ctl' /server 'srv'"));
	ck_assert(!strstr(b.data, "localhost"));
	pv_buf_release(&b, 0);
	pv_playbook_free(pb);
	/* no server: FSCT has nothing to load */
	{
		static const char noserver[] =
			"domain: {realm: LAB.TEST, netbios: LAB, dc: dc.lab.test, ca_file: /c,"
			" admin_password: {file: /a}}\n"
			"clients: [{name: cli1, address: 198.18.0.31, os: windows}]\n"
			"controller: {results: /r, host: {name: ctl}}\n"
			"driver: {name: fsct}\n";

		ck_assert_int_eq(pv_playbook_parse("t.yaml", noserver, strlen(noserver), NULL, &pb),
				 PV_OK);
		ck_assert_int_eq(pv_run_fsct_check(pb), PV_ECONFIG);
		ck_assert(strstr(pv_errmsg(), "add a 'server:' section"));
		pv_playbook_free(pb);
	}
}
END_TEST

/* What the lab's srv printed (phases/scripts/needs.sh, as tests/docs/t_needs.sh runs it): every
 * prerequisite there, one ok item. */
static const char SRV_FACTS[] = "Linux srv\nkdc=dc.lab.test\nwinbind=dc.lab.test\n"
				"n_uid=0\nn_perl=/usr/bin/perl\nn_net=/usr/bin/net\n"
				"n_testparm=/usr/bin/testparm\nn_wbinfo=/usr/bin/wbinfo\n"
				"n_smbd=/usr/sbin/smbd\nn_winbindd=/usr/sbin/winbindd\n"
				"n_svc=/usr/bin/systemctl\nn_nss_passwd=files winbind\n"
				"n_nss_group=files systemd winbind\nn_security=ADS\n"
				"n_realm=LAB.TEST\nn_registry_shares=Yes\n"
				"n_config_backend=file\nn_idmap_star_backend=tdb\n"
				"n_idmap_star_range=3000-7999\nn_idmap_dom_backend=rid\n"
				"n_idmap_dom_range=10000-999999\n";

/* The items judge gave, each "status: message", one a line, into out. */
static void judged(const struct pv_playbook *pb, enum pv_phases_needs_role role, const char *facts,
		   char *out, size_t len, size_t *fails)
{
	struct pv_phases_check_result c;
	size_t o = 0;

	memset(&c, 0, sizeof(c));
	pv_phases_needs_judge(&c, pb, "h", role, facts);
	out[0] = '\0';
	for (size_t i = 0; i < c.n && o < len; i++) {
		ck_assert_str_eq(c.items[i].check, "needs");
		ck_assert_str_eq(c.items[i].target, "h");
		o += (size_t)snprintf(out + o, len - o, "%s: %s\n", c.items[i].status,
				      c.items[i].msg);
	}
	*fails = c.failed;
	if (c.failed)
		ck_assert_int_eq(c.first_fail, PV_ECONFIG);
	pv_phases_check_result_release(&c);
}

/* The facts of in with the line of KEY made KEY=VALUE (VALUE NULL: the line gone), into out. */
static void fact_set(const char *in, const char *key, const char *value, char *out, size_t len)
{
	const char *at = strstr(in, key), *eol;
	char copy[2048];

	ck_assert_ptr_nonnull(at);
	eol = strchr(at, '\n') + 1;
	snprintf(copy, sizeof(copy), "%.*s%s%s%s%s%s", (int)(at - in), in, value ? key : "",
		 value ? "=" : "", value ? value : "", value ? "\n" : "", eol);
	snprintf(out, len, "%s", copy);
}

#define facts_with(key, value, out, len) fact_set(SRV_FACTS, key, value, out, len)

START_TEST(needs)
{
	struct pv_playbook *pb = load(NULL);
	char got[8192], f[2048];
	size_t fails;

	/* everything there: one ok line */
	judged(pb, PV_PHASES_NEEDS_SERVER, SRV_FACTS, got, sizeof(got), &fails);
	ck_assert_uint_eq(fails, 0);
	ck_assert_msg(!strncmp(got, "ok: root, perl, Samba's tools", 29), "%s", got);
	ck_assert_str_eq(strchr(got, '\n'), "\n"); /* and nothing else */
	/* each missing prerequisite named with its fix */
	{
		static const struct {
			const char *key, *value, *status, *want;
		} cases[] = {
			{"n_uid", "1000", "fail",
			 "root: the SSH user has uid 1000; join and server run net"},
			{"n_uid", "1000", "fail", "set ssh.user: root for this host"},
			{"n_perl", "", "warn",
			 "perl is not installed: run cannot watch the server"},
			{"n_perl", "", "warn", "install perl (Debian: perl-base)"},
			{"n_net", "", "fail", "Samba: net not found"},
			{"n_winbindd", "", "fail", "set server.kind: windows or nas"},
			{"n_svc", "", "fail",
			 "server.service: its command 'systemctl' is not on the server"},
			{"n_nss_passwd", "files systemd", "fail",
			 "passwd: 'files systemd', group: 'files systemd winbind', without "
			 "winbind"},
			{"n_nss_group", "files", "fail",
			 "add winbind to both lines (Debian: "
			 "libnss-winbind)"},
			{"n_security", "USER", "fail",
			 "smb.conf: security = USER: a member server needs 'security = ads'"},
			{"n_realm", "OTHER.TEST", "fail",
			 "smb.conf: realm = OTHER.TEST: set 'realm = LAB.TEST' in [global]"},
			{"n_registry_shares", "No", "fail",
			 "smb.conf: registry shares = No: server makes the lab's shares with 'net "
			 "conf addshare'"},
			{"n_idmap_dom_backend", "ad", "fail",
			 "idmap backend ad maps only users with a uidNumber"},
			{"n_idmap_dom_range", NULL, "fail",
			 "'idmap config LAB : backend = rid' has no range"},
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char want[512];

			facts_with(cases[i].key, cases[i].value, f, sizeof(f));
			judged(pb, PV_PHASES_NEEDS_SERVER, f, got, sizeof(got), &fails);
			snprintf(want, sizeof(want), "%s: ", cases[i].status);
			ck_assert_msg(!strncmp(got, want, strlen(want)) &&
					      strstr(got, cases[i].want),
				      "%s=%s: got %s", cases[i].key,
				      cases[i].value ? cases[i].value : "(none)", got);
			ck_assert_uint_eq(fails, strcmp(cases[i].status, "fail") == 0);
			ck_assert(!strstr(got, "ok: ")); /* no ok line beside a missing one */
		}
	}
	/* registry shares through include = registry or config backend = registry count */
	facts_with("n_registry_shares", "No\nn_include_registry=1", f, sizeof(f));
	judged(pb, PV_PHASES_NEEDS_SERVER, f, got, sizeof(got), &fails);
	ck_assert_uint_eq(fails, 0);
	facts_with("n_config_backend", "registry\nn_registry_shares=No", f, sizeof(f));
	judged(pb, PV_PHASES_NEEDS_SERVER, f, got, sizeof(got), &fails);
	ck_assert_uint_eq(fails, 0);
	/* no idmap range at all: the whole fix, with the domain's name */
	{
		char g[2048];

		facts_with("n_idmap_star_range", NULL, g, sizeof(g));
		fact_set(g, "n_idmap_dom_range", NULL, f, sizeof(f));
		judged(pb, PV_PHASES_NEEDS_SERVER, f, got, sizeof(got), &fails);
		ck_assert_uint_eq(fails, 1);
		ck_assert_msg(strstr(got, "smb.conf: no idmap range: winbindd gives the domain's "
					  "users no uid") &&
				      strstr(got, "'idmap config LAB : backend = rid'"),
			      "%s", got);
	}
	/* testparm there but smb.conf does not load; no testparm at all */
	judged(pb, PV_PHASES_NEEDS_SERVER,
	       "n_uid=0\nn_perl=/p\nn_net=/n\nn_testparm=/t\nn_wbinfo=/w\n"
	       "n_smbd=/s\nn_winbindd=/w\nn_svc=/s\nn_nss_passwd=winbind\n"
	       "n_nss_group=winbind\nn_testparm_failed=1\n",
	       got, sizeof(got), &fails);
	ck_assert_uint_eq(fails, 1);
	ck_assert(strstr(got, "'testparm -sv' printed nothing"));
	judged(pb, PV_PHASES_NEEDS_SERVER,
	       "n_uid=0\nn_perl=/p\nn_svc=/s\nn_nss_passwd=files winbind\n"
	       "n_nss_group=files winbind\n",
	       got, sizeof(got), &fails);
	ck_assert_uint_eq(fails, 1);
	ck_assert_msg(strstr(got, "Samba: net, testparm, wbinfo, smbd, winbindd not found"), "%s",
		      got);
	/* clients: root and perl */
	judged(pb, PV_PHASES_NEEDS_CLIENT, "Linux cli1\nn_uid=0\nn_perl=/usr/bin/perl\n", got,
	       sizeof(got), &fails);
	ck_assert_str_eq(got, "ok: root, perl\n");
	judged(pb, PV_PHASES_NEEDS_CLIENT, "n_uid=0\nn_perl=\n", got, sizeof(got), &fails);
	ck_assert_uint_eq(fails, 1);
	ck_assert(strstr(got, "fail: perl is not installed: run starts every driver's work"));
	judged(pb, PV_PHASES_NEEDS_CLIENT, "n_uid=1001\nn_perl=/p\n", got, sizeof(got), &fails);
	ck_assert(strstr(got, "fail: root: the SSH user has uid 1001; client writes the aliases "
			      "into /etc/hosts as root"));
	pv_playbook_free(pb);
}
END_TEST

/* server.kind: which phases a server takes */
START_TEST(server_kinds)
{
	struct pv_playbook *pb = load(NULL);
	const char *nas[] = {"server.kind=nas", NULL}, *win[] = {"server.kind=windows", NULL};

	ck_assert_int_eq(pb->server.kind, PV_PLAYBOOK_SERVER_SAMBA);
	ck_assert_int_eq(pv_phases_lab_server_phase(pb, "join"), PV_OK);
	pv_playbook_free(pb);
	pb = load(nas);
	ck_assert_int_eq(pb->server.kind, PV_PLAYBOOK_SERVER_NAS);
	ck_assert_int_eq(pv_phases_lab_server_phase(pb, "cleanup server"), PV_ECONFIG);
	ck_assert_msg(strstr(pv_errmsg(), "'cleanup server' does not apply to this server: "
					  "server.kind is nas") &&
			      strstr(pv_errmsg(), "its phases are dc, client and controller"),
		      "%s", pv_errmsg());
	pv_playbook_free(pb);
	pb = load(win);
	ck_assert_int_eq(pb->server.kind, PV_PLAYBOOK_SERVER_WINDOWS);
	ck_assert_int_eq(pv_phases_lab_server_phase(pb, "join"), PV_ECONFIG);
	ck_assert(strstr(pv_errmsg(), "FSCT's 'prepare server' on Windows"));
	pv_playbook_free(pb);
	{
		const char *bad[] = {"server.kind=nsa", NULL};
		struct pv_playbook *x = NULL;

		ck_assert_int_eq(pv_playbook_parse("t.yaml", PB, strlen(PB), bad, &x), PV_ECONFIG);
		ck_assert_msg(strstr(pv_errmsg(), "'server.kind' is 'nsa' (did you mean 'nas'?); "
						  "expected one of: samba, windows, nas"),
			      "%s", pv_errmsg());
	}
}
END_TEST

static const char LINE[] = "pv-watch cpu=12.5 usr=8.0 sys=4.5 iowait=0.0 smbd=20.1 winbindd=0.5 "
			   "samba=0.0 self=0.31 mem_used=512.0 mem_avail=1024.5 dirty=3.0 "
			   "rd=0.0 wr=120.5 inflight=2 net=eth0:10.5:20.0,veth1:1.5:2.0";

START_TEST(watch_parse)
{
	struct pv_run_watch_sample s;
	char bad[256];

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pv_run_watch_parse(LINE, strlen(LINE), &s), PV_OK);
	ck_assert(s.v[PV_RUN_W_CPU] == 12.5 && s.v[PV_RUN_W_SMBD] == 20.1 &&
		  s.v[PV_RUN_W_SELF] == 0.31);
	ck_assert(s.v[PV_RUN_W_MEM_AVAIL] == 1024.5 && s.v[PV_RUN_W_INFLIGHT] == 2);
	ck_assert(s.v[PV_RUN_W_NET_RX] == 12.0 &&
		  s.v[PV_RUN_W_NET_TX] == 22.0); /* summed over interfaces */
	ck_assert_uint_eq(s.nifs, 2);		 /* and each kept */
	ck_assert_str_eq(s.ifs[1].name, "veth1");
	ck_assert(s.ifs[1].rx == 1.5 && s.ifs[1].tx == 2.0);
	ck_assert_int_eq(pv_run_watch_parse("pv-watch-start interval=2 hz=100", 32, &s), 1);
	/* no interface but lo */
	snprintf(bad, sizeof(bad), "%.*snet=-", (int)(strstr(LINE, "net=") - LINE), LINE);
	ck_assert_int_eq(pv_run_watch_parse(bad, strlen(bad), &s), PV_OK);
	ck_assert(s.v[PV_RUN_W_NET_RX] == 0 && s.v[PV_RUN_W_NET_TX] == 0);
	/* a field a newer sampler adds is let through */
	snprintf(bad, sizeof(bad), "%s gpu=3", LINE);
	ck_assert_int_eq(pv_run_watch_parse(bad, strlen(bad), &s), PV_OK);
	/* malformed: quoted in the message */
	ck_assert_int_eq(pv_run_watch_parse("perl: not found", 15, &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "'perl: not found'"));
	snprintf(bad, sizeof(bad), "%s", LINE);
	memcpy(strstr(bad, "cpu=12.5"), "cpu=1x.5", 8);
	ck_assert_int_eq(pv_run_watch_parse(bad, strlen(bad), &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "not a number"));
	snprintf(bad, sizeof(bad), "%.*s", (int)(strstr(LINE, " net=") - LINE), LINE);
	ck_assert_int_eq(pv_run_watch_parse(bad, strlen(bad), &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "no net_rx field"));
	ck_assert_int_eq(pv_run_watch_parse("pv-watch cpu=nan", 16, &s), PV_EREMOTE);
	ck_assert_int_eq(pv_run_watch_parse("pv-watch cpu=1 net=eth0:1", 25, &s), PV_EREMOTE);
	ck_assert(strstr(pv_errmsg(), "net field"));
	ck_assert_int_eq(pv_run_watch_parse("pv-watch cpu=1 net=eth0:1:2,", 28, &s), PV_EREMOTE);
	/* procs: each smbd's CPU, threads, busiest thread and quota (-1: none) */
	snprintf(bad, sizeof(bad), "%s procs=4242:97.5:3:93.0:20.0,77:1.0:1:1.0:-1.0", LINE);
	ck_assert_int_eq(pv_run_watch_parse(bad, strlen(bad), &s), PV_OK);
	ck_assert_uint_eq(s.nprocs, 2);
	ck_assert_int_eq(s.procs[0].pid, 4242);
	ck_assert(s.procs[0].cpu == 97.5 && s.procs[0].threads == 3 && s.procs[0].top == 93.0);
	ck_assert(s.procs[0].quota == 20.0 && s.procs[1].quota < 0);
	snprintf(bad, sizeof(bad), "%s procs=-", LINE);
	ck_assert_int_eq(pv_run_watch_parse(bad, strlen(bad), &s), PV_OK);
	ck_assert_uint_eq(s.nprocs, 0);
	{
		static const char *const wrong[] = {
			"procs=4242:97.5:3:93.0",     /* a field short */
			"procs=4242:97.5:3:199.0:-1", /* a thread a core busier than its process */
			"procs=0:1:1:1:-1",	      /* no such pid */
			"procs=4.5:1:1:1:-1",	      /* nor this */
			"procs=42:1:0:0:-1",	      /* no thread */
			"procs=42:1:1:1:-1,",	      /* a comma with nothing after */
			"procs=42:1:1:1:nan",	      /* not a number */
		};

		for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
			snprintf(bad, sizeof(bad), "%s %s", LINE, wrong[i]);
			ck_assert_msg(pv_run_watch_parse(bad, strlen(bad), &s) == PV_EREMOTE, "%s",
				      wrong[i]);
			ck_assert(strstr(pv_errmsg(), "procs field"));
		}
	}
}
END_TEST

START_TEST(watch_summary)
{
	struct pv_run_watch_sample s[20];
	struct pv_run_watch_stat st[PV_RUN_W_COUNT];
	struct pv_buf b = PV_BUF_INIT;

	memset(s, 0, sizeof(s));
	for (int i = 0; i < 20; i++) {
		s[i].t = 100 + 2 * i;
		s[i].v[PV_RUN_W_CPU] = 20 - i; /* 20, 19, ... 1: unsorted on purpose */
		s[i].v[PV_RUN_W_SMBD] = 5;
	}
	ck_assert_int_eq(pv_run_watch_summarize(s, 20, st), PV_OK);
	ck_assert(st[PV_RUN_W_CPU].mean == 10.5);
	ck_assert(st[PV_RUN_W_CPU].p95 == 19); /* rank ceil(0.95 * 20) = 19 of 1..20 */
	ck_assert(st[PV_RUN_W_CPU].max == 20);
	ck_assert(st[PV_RUN_W_SMBD].mean == 5 && st[PV_RUN_W_SMBD].p95 == 5);
	ck_assert_int_eq(pv_run_watch_summarize(s, 1, st), PV_OK);
	ck_assert(st[PV_RUN_W_CPU].p95 == 20 && st[PV_RUN_W_CPU].mean == 20);
	ck_assert_int_eq(pv_run_watch_summarize(s, 0, st), PV_OK);
	ck_assert(st[PV_RUN_W_CPU].max == 0);

	ck_assert_int_eq(pv_run_watch_csv(s, 3, 99, 101.5, &b), PV_OK);
	ck_assert_uint_eq(s[0].nifs, 0);
	ck_assert_str_eq(
		b.data,
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
	struct pv_run_watch_sample s[2];
	struct pv_buf b = PV_BUF_INIT;
	static const char a[] =
		"pv-watch cpu=1 usr=0 sys=0 iowait=0 smbd=0 winbindd=0 samba=0 self=0 "
		"mem_used=0 mem_avail=0 dirty=0 rd=0 wr=0 inflight=0 net=eth0:1:2";
	static const char c[] =
		"pv-watch cpu=1 usr=0 sys=0 iowait=0 smbd=0 winbindd=0 samba=0 self=0 "
		"mem_used=0 mem_avail=0 dirty=0 rd=0 wr=0 inflight=0 "
		"net=eth1:5:6,eth0:3:4";

	ck_assert_int_eq(pv_run_watch_parse(a, strlen(a), &s[0]), PV_OK);
	ck_assert_int_eq(pv_run_watch_parse(c, strlen(c), &s[1]), PV_OK);
	s[0].t = 10;
	s[1].t = 12;
	ck_assert_int_eq(pv_run_watch_csv(s, 2, 10, 0, &b), PV_OK);
	/* one pair of columns per interface, in the order first seen; empty where absent */
	ck_assert(strstr(b.data, ",net_rx,net_tx,rx_eth0,tx_eth0,rx_eth1,tx_eth1\n"));
	ck_assert(strstr(b.data, ",1.0,2.0,1.0,2.0,,\n"));
	ck_assert(strstr(b.data, ",8.0,10.0,3.0,4.0,5.0,6.0\n"));
	pv_buf_release(&b, 0);
}
END_TEST

/* Which DC a name a host reports is: domain.dc or another, by its full or its short name. */
START_TEST(replica_names)
{
	const char *ovr[] = {"domain.dc_address=198.18.0.10",
			     "domain.other_dcs.0.name=dc2.lab.test",
			     "domain.other_dcs.0.address=198.18.0.11",
			     "domain.other_dcs.1.name=dc3.lab.test", NULL};
	struct pv_playbook *pb = load(ovr);
	const struct pv_playbook_domain *d = &pb->domain;

	ck_assert(pv_phases_replica_is_main(d, "dc.lab.test"));
	ck_assert(pv_phases_replica_is_main(d, "DC.LAB.TEST"));
	ck_assert(pv_phases_replica_is_main(d, "dc"));
	ck_assert(!pv_phases_replica_is_main(d, "dc2.lab.test"));
	ck_assert(!pv_phases_replica_is_main(d, "d"));
	ck_assert(!pv_phases_replica_is_main(d, NULL));
	ck_assert_str_eq(pv_phases_replica_address(d, "DC"), "198.18.0.10");
	ck_assert_str_eq(pv_phases_replica_address(d, "DC2"), "198.18.0.11");
	ck_assert_ptr_null(pv_phases_replica_address(d, "dc3.lab.test"));
	ck_assert_ptr_null(pv_phases_replica_address(d, "dc9.lab.test"));
	ck_assert_str_eq(pv_phases_replica_name(d, "DC2"), "dc2.lab.test");
	ck_assert_str_eq(pv_phases_replica_name(d, "dc"), "dc.lab.test");
	ck_assert_str_eq(pv_phases_replica_name(d, "dc9.lab.test"), "dc9.lab.test");
	pv_playbook_free(pb);
}
END_TEST

/* ---- the gather's caps: at most 256 MiB and 20,000 entries a host and step (docs/run.md) ----
 * A host's step folder comes back as a ustar stream that pv_run_sink_tar takes apart into the run's
 * folder; a stream past a cap is refused before anything is written (the host's folder not even
 * made). */

/* a ustar stream of n entries: folders d000, d001... each followed by up to 199 files of one
 * byte ("d000/f00001"); *files: how many files */
static void gather_stream(struct pv_buf *b, unsigned n, unsigned *files)
{
	char path[32];
	unsigned made = 0;

	*files = 0;
	for (unsigned d = 0; made < n; d++) {
		struct pv_tar_entry e = {path, true, 0, 0, 0, 0755, 0};

		snprintf(path, sizeof(path), "d%03u", d);
		ck_assert_int_eq(pv_tar_add(b, &e, NULL), PV_OK);
		made++;
		for (unsigned f = 1; f < 200 && made < n; f++, made++) {
			struct pv_tar_entry fe = {path, false, 1, 0, 0, 0644, 0};
			char *data;

			snprintf(path, sizeof(path), "d%03u/f%05u", d, f);
			ck_assert_int_eq(pv_tar_add(b, &fe, &data), PV_OK);
			*data = 'x';
			(*files)++;
		}
	}
	ck_assert_int_eq(pv_tar_end(b), PV_OK);
}

static bool exists(const char *dir, const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s/run/%s", dir, rel);
	return lstat(p, &st) == 0;
}

START_TEST(gather_caps)
{
	char dir[] = "/tmp/pv-gather.XXXXXX", name[64], cmd[128];
	struct pv_run_sink k;
	struct pv_buf b = PV_BUF_INIT, big = PV_BUF_INIT;
	unsigned long files = 9, skipped = 9;
	unsigned long long bytes = 9;
	unsigned want;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(pv_run_sink_open(&k, NULL, dir, "run", true, name), PV_OK);
	ck_assert_str_eq(name, "run");
	ck_assert_int_eq(PV_RUN_GATHER_ENTRIES_MAX, 20000);
	ck_assert_uint_eq(PV_RUN_GATHER_MAX, 256u << 20);

	/* exactly the cap of entries: written whole */
	gather_stream(&b, PV_RUN_GATHER_ENTRIES_MAX, &want);
	ck_assert_int_eq(pv_run_sink_tar(&k, "step-01/cli1", &b, &files, &bytes, &skipped), PV_OK);
	ck_assert_uint_eq(files, want);
	ck_assert_uint_eq(bytes, want);
	ck_assert_uint_eq(skipped, 0);
	ck_assert_uint_eq(want, 19900); /* and 100 folders */
	ck_assert(exists(dir, "step-01/cli1/d000/f00001"));
	ck_assert(exists(dir, "step-01/cli1/d099/f00199")); /* the last: entry 20,000 */
	ck_assert(!exists(dir, "step-01/cli1/d100"));

	/* one entry more: refused, nothing written, the host's folder not made */
	pv_buf_reset(&b);
	gather_stream(&b, PV_RUN_GATHER_ENTRIES_MAX + 1, &want);
	files = 9;
	ck_assert_int_eq(pv_run_sink_tar(&k, "step-01/cli2", &b, &files, &bytes, &skipped),
			 PV_EREMOTE);
	ck_assert_msg(strstr(pv_errmsg(), "the results hold more than 20000 files and folders: "
					  "refused, none written"),
		      "%s", pv_errmsg());
	ck_assert_uint_eq(files, 0);
	ck_assert(!exists(dir, "step-01/cli2"));

	/* one byte past 256 MiB: refused before it is read (a calloc'd stream of zeros, its pages
	 * never touched), nothing written */
	big.data = calloc(1, (size_t)PV_RUN_GATHER_MAX + 1);
	ck_assert_ptr_nonnull(big.data);
	big.len = big.cap = (size_t)PV_RUN_GATHER_MAX + 1;
	ck_assert_int_eq(pv_run_sink_tar(&k, "step-02/cli1", &big, &files, &bytes, &skipped),
			 PV_EREMOTE);
	ck_assert_msg(strstr(pv_errmsg(), "the results are more than 256 MiB: refused"), "%s",
		      pv_errmsg());
	ck_assert(!exists(dir, "step-02"));
	free(big.data);

	pv_run_sink_close(&k);
	pv_buf_release(&b, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("phases");
	TCase *tc = tcase_create("phases"), *gather = tcase_create("gather");

	tcase_add_test(tc, ramp);
	tcase_add_test(tc, replica_names);
	tcase_add_test(tc, ramp_last_step);
	tcase_add_test(tc, refine);
	tcase_add_test(tc, ramp_over);
	tcase_add_test(tc, render);
	tcase_add_test(tc, render_quoted);
	tcase_add_test(tc, getent_lines);
	tcase_add_test(tc, listing_owners);
	tcase_add_test(tc, wrap_lines);
	tcase_add_test(tc, client_lines);
	tcase_add_test(tc, client_sums);
	tcase_add_test(tc, host_input_secret);
	tcase_add_test(tc, fsct);
	tcase_add_test(tc, fsct_refusals);
	tcase_add_test(tc, needs);
	tcase_add_test(tc, server_kinds);
	tcase_add_test(tc, watch_parse);
	tcase_add_test(tc, watch_summary);
	tcase_add_test(tc, watch_csv_interfaces);
	suite_add_tcase(s, tc);
	/* 20,000 files written under ASan take a few seconds: more than Check's default 4 */
	tcase_set_timeout(gather, 120);
	tcase_add_test(gather, gather_caps);
	suite_add_tcase(s, gather);
	return pv_unit_run(s);
}
