/* tests/unit/check_hosts.c: hosts/: markers, rendering for Linux and Windows, merge and removal
 * byte for byte, name clashes, cksum, and the remote write script (run here with /bin/sh on a
 * scratch file: every branch but the in-place one, which needs a bind mount and is covered by
 * tests/integration/t_client.sh). */
#include "hosts/hosts.h"
#include "hosts/script.h"
#include "tests/unit/alloc.h"
#include "remote/quote.h"
#include "util/err.h"

#include <check.h>

#include "tests/unit/unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ck_assert_msg_has(s)                                                                       \
	ck_assert_msg(strstr(pv_errmsg(), (s)), "message '%s' lacks '%s'", pv_errmsg(), (s))

static const char *const ALIASES3[] = {"srvu1", "srvu2", "srvu3"};
static const char *const SERVER[] = {"srv"};

static struct pv_hosts_style linux_style(void)
{
	struct pv_hosts_style st;

	pv_hosts_style_for(false, &st);
	return st;
}

static struct pv_hosts_style windows_style(void)
{
	struct pv_hosts_style st;

	pv_hosts_style_for(true, &st);
	return st;
}

/* merge text with the lab's block for srv + n aliases (names srvu1..) */
static int merge(const char *text, const char *lab, bool windows, size_t n, struct pv_buf *out)
{
	struct pv_hosts_layout lay;
	struct pv_hosts_style st = windows ? windows_style() : linux_style();
	char(*store)[32] = calloc(n ? n : 1, sizeof(*store));
	const char **names = calloc(n ? n : 1, sizeof(*names));
	struct pv_hosts_group g[2];
	int r;

	for (size_t i = 0; i < n; i++) {
		snprintf(store[i], sizeof(store[i]), "srvu%zu", i + 1);
		names[i] = store[i];
	}
	g[0] = (struct pv_hosts_group){"198.18.0.20", SERVER, 1};
	g[1] = (struct pv_hosts_group){"198.18.0.20", names, n};
	r = pv_hosts_parse(text, strlen(text), lab, &lay);
	if (r == PV_OK)
		r = pv_hosts_merge(text, strlen(text), &lay, lab, &st, g, 2, out);
	free(names);
	free(store);
	return r;
}

static int removed(const char *text, const char *lab, bool windows, struct pv_buf *out)
{
	struct pv_hosts_layout lay;
	struct pv_hosts_style st = windows ? windows_style() : linux_style();
	int r = pv_hosts_parse(text, strlen(text), lab, &lay);

	return r ? r : pv_hosts_remove(text, strlen(text), &lay, &st, out);
}

START_TEST(parse_plain_and_ours)
{
	const char *plain = "127.0.0.1 localhost\n# BEGIN something else\n";
	const char *t = "127.0.0.1 localhost\n"
			"# BEGIN provision lab1\n"
			"198.18.0.20 srv\n"
			"# END provision lab1   \n"
			"10.0.0.1 other\n";
	struct pv_hosts_layout lay;

	ck_assert_int_eq(pv_hosts_parse(plain, strlen(plain), "lab1", &lay), PV_OK);
	ck_assert(!lay.found);
	ck_assert_uint_eq(lay.lines, 2);
	ck_assert_int_eq(pv_hosts_parse("", 0, "lab1", &lay), PV_OK);
	ck_assert(!lay.found);
	ck_assert_int_eq(pv_hosts_parse(t, strlen(t), "lab1", &lay), PV_OK);
	ck_assert(lay.found);
	ck_assert_uint_eq(lay.begin, strlen("127.0.0.1 localhost\n"));
	ck_assert_uint_eq(lay.end, strlen(t) - strlen("10.0.0.1 other\n"));
	ck_assert_uint_eq(lay.begin_line, 2);
	ck_assert_uint_eq(lay.end_line, 4);
	ck_assert(!lay.added_break);
	ck_assert_uint_eq(lay.others, 0);
	/* a lab id that only starts like ours is another lab */
	ck_assert_int_eq(pv_hosts_parse(t, strlen(t), "lab", &lay), PV_OK);
	ck_assert(!lay.found);
	ck_assert_uint_eq(lay.others, 1);
	ck_assert_str_eq(lay.other, "lab1");
}
END_TEST

START_TEST(parse_crlf_and_other_labs)
{
	const char *t = "127.0.0.1 localhost\r\n"
			"# BEGIN provision other\r\n"
			"10.1.1.1 x\r\n"
			"# END provision other\r\n"
			"# BEGIN provision lab1\r\n"
			"10.2.2.2 y\r\n"
			"# END provision lab1\r\n";
	struct pv_hosts_layout lay;

	ck_assert_int_eq(pv_hosts_parse(t, strlen(t), "lab1", &lay), PV_OK);
	ck_assert(lay.found);
	ck_assert_uint_eq(lay.begin_line, 5);
	ck_assert_uint_eq(lay.end, strlen(t));
	ck_assert_uint_eq(lay.others, 1);
	ck_assert_str_eq(lay.other, "other");
}
END_TEST

START_TEST(parse_malformed)
{
	struct pv_hosts_layout lay;
	const char *no_end = "a b\n# BEGIN provision lab1\n1.2.3.4 x\n";
	const char *no_begin = "a b\n# END provision lab1\n";
	const char *twice = "# BEGIN provision lab1\n# END provision lab1\n"
			    "# BEGIN provision lab1\n# END provision lab1\n";
	const char *nested = "# BEGIN provision lab1\n# BEGIN provision other\n"
			     "# END provision other\n# END provision lab1\n";
	const char *other_open = "# BEGIN provision other\n1.1.1.1 z\n";

	ck_assert_int_eq(pv_hosts_parse(no_end, strlen(no_end), "lab1", &lay), PV_ECONFLICT);
	ck_assert_msg_has("line 2: '# BEGIN provision lab1' has no '# END provision lab1'");
	ck_assert_int_eq(pv_hosts_parse(no_begin, strlen(no_begin), "lab1", &lay), PV_ECONFLICT);
	ck_assert_msg_has("line 2: '# END provision lab1' without a BEGIN");
	ck_assert_int_eq(pv_hosts_parse(twice, strlen(twice), "lab1", &lay), PV_ECONFLICT);
	ck_assert_msg_has("line 3: a second block of lab 'lab1'");
	ck_assert_int_eq(pv_hosts_parse(nested, strlen(nested), "lab1", &lay), PV_ECONFLICT);
	ck_assert_msg_has("line 2: '# BEGIN provision other' lies inside the block");
	/* another lab's broken block is not ours to judge */
	ck_assert_int_eq(pv_hosts_parse(other_open, strlen(other_open), "lab1", &lay), PV_OK);
	ck_assert_uint_eq(lay.others, 0);
}
END_TEST

START_TEST(render_linux_wraps_at_width)
{
	struct pv_buf b = PV_BUF_INIT;
	const char *p;
	size_t lines = 0, names = 0;

	ck_assert_int_eq(merge("", "lab1", false, 2000, &b), PV_OK);
	ck_assert(strncmp(b.data, "# BEGIN provision lab1\n# managed by provision", 45) == 0);
	ck_assert(strstr(b.data, "\n198.18.0.20 srv\n198.18.0.20 srvu1 srvu2 "));
	ck_assert(strstr(b.data, " srvu2000\n# END provision lab1\n"));
	ck_assert(!strchr(b.data, '\r'));
	for (p = b.data; *p;) {
		const char *nl = strchr(p, '\n');

		ck_assert_ptr_nonnull(nl);
		ck_assert_uint_le((size_t)(nl - p), PV_HOSTS_LINE_MAX);
		if (strncmp(p, "198.18.0.20 srvu", 16) == 0)
			for (const char *q = p; q < nl; q++)
				names += *q == ' ';
		lines++;
		p = nl + 1;
	}
	ck_assert_uint_eq(names, 2000);
	/* 2000 names of 5..8 characters in lines of at most 255 bytes: far fewer than 2000 lines */
	ck_assert_uint_lt(lines, 100);
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(render_windows_crlf_nine_names)
{
	struct pv_buf b = PV_BUF_INIT;
	const char *p;
	size_t alias_lines = 0;

	ck_assert_int_eq(merge("127.0.0.1 localhost\r\n", "lab1", true, 20, &b), PV_OK);
	ck_assert(strstr(b.data, "127.0.0.1 localhost\r\n# BEGIN provision lab1\r\n"));
	ck_assert(strstr(b.data,
			 "\r\n198.18.0.20 srv\r\n"
			 "198.18.0.20 srvu1 srvu2 srvu3 srvu4 srvu5 srvu6 srvu7 srvu8 srvu9\r\n"
			 "198.18.0.20 srvu10 srvu11 srvu12 srvu13 srvu14 srvu15 srvu16 srvu17 "
			 "srvu18\r\n198.18.0.20 srvu19 srvu20\r\n# END provision lab1\r\n"));
	/* every line break is CRLF */
	for (p = b.data; (p = strchr(p, '\n')); p++)
		ck_assert(p > b.data && p[-1] == '\r');
	for (p = b.data; (p = strstr(p, "198.18.0.20 srvu")); p++)
		alias_lines++;
	ck_assert_uint_eq(alias_lines, 3);
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(merge_keeps_outside_bytes_and_is_stable)
{
	const char *orig = "# comment\t kept\n127.0.0.1\tlocalhost\n\n  ::1 ip6-localhost  \n";
	struct pv_buf a = PV_BUF_INIT, b = PV_BUF_INIT, c = PV_BUF_INIT;

	ck_assert_int_eq(merge(orig, "lab1", false, 3, &a), PV_OK);
	ck_assert(strncmp(a.data, orig, strlen(orig)) == 0);
	ck_assert_str_eq(a.data + strlen(orig), "# BEGIN provision lab1\n"
						"# managed by provision: edits between these "
						"markers are replaced\n"
						"198.18.0.20 srv\n"
						"198.18.0.20 srvu1 srvu2 srvu3\n"
						"# END provision lab1\n");
	/* the same N again: the same bytes */
	ck_assert_int_eq(merge(a.data, "lab1", false, 3, &b), PV_OK);
	ck_assert_str_eq(a.data, b.data);
	/* another N replaces the block where it is; lines after it stay after it */
	pv_buf_addstr(&b, "10.9.9.9 after\n");
	ck_assert_int_eq(merge(b.data, "lab1", false, 5, &c), PV_OK);
	ck_assert(strstr(c.data, "srvu1 srvu2 srvu3 srvu4 srvu5\n# END provision lab1\n10.9.9.9 "
				 "after\n"));
	ck_assert(!strstr(c.data + 1, "# BEGIN provision lab1\n# BEGIN"));
	ck_assert_int_eq(removed(c.data, "lab1", false, &a), PV_OK);
	ck_assert_str_eq(a.data, "# comment\t kept\n127.0.0.1\tlocalhost\n\n  ::1 ip6-localhost  \n"
				 "10.9.9.9 after\n");
	pv_buf_release(&a, 0);
	pv_buf_release(&b, 0);
	pv_buf_release(&c, 0);
}
END_TEST

START_TEST(merge_without_final_break_round_trips)
{
	const char *orig = "127.0.0.1 localhost\n10.0.0.1 last-no-break";
	struct pv_buf a = PV_BUF_INIT, b = PV_BUF_INIT, c = PV_BUF_INIT;
	struct pv_hosts_layout lay;

	ck_assert_int_eq(merge(orig, "lab1", false, 2, &a), PV_OK);
	ck_assert(strstr(a.data, "last-no-break\n# BEGIN provision lab1\n"));
	ck_assert(strstr(a.data, "\n# provision ended the line above with a line break; cleanup "
				 "removes it\n"));
	ck_assert_int_eq(pv_hosts_parse(a.data, a.len, "lab1", &lay), PV_OK);
	ck_assert(lay.added_break);
	/* re-merging keeps the note, so removal still gives the original bytes */
	ck_assert_int_eq(merge(a.data, "lab1", false, 4, &b), PV_OK);
	ck_assert(strstr(b.data, "# provision ended the line above"));
	ck_assert_int_eq(removed(b.data, "lab1", false, &c), PV_OK);
	ck_assert_str_eq(c.data, orig);
	/* with a line added after the block, that break ends a line we keep */
	pv_buf_addstr(&b, "10.7.7.7 later\n");
	ck_assert_int_eq(removed(b.data, "lab1", false, &c), PV_OK);
	ck_assert_str_eq(c.data, "127.0.0.1 localhost\n10.0.0.1 last-no-break\n10.7.7.7 later\n");
	/* Windows: the CRLF added is the one taken away */
	ck_assert_int_eq(merge("127.0.0.1 localhost", "lab1", true, 2, &a), PV_OK);
	ck_assert(strncmp(a.data, "127.0.0.1 localhost\r\n# BEGIN", 28) == 0);
	ck_assert_int_eq(removed(a.data, "lab1", true, &c), PV_OK);
	ck_assert_str_eq(c.data, "127.0.0.1 localhost");
	pv_buf_release(&a, 0);
	pv_buf_release(&b, 0);
	pv_buf_release(&c, 0);
}
END_TEST

START_TEST(remove_only_ours)
{
	const char *t = "127.0.0.1 localhost\n"
			"# BEGIN provision other\n10.1.1.1 srvu1\n# END provision other\n"
			"# BEGIN provision lab1\n198.18.0.20 srvu1\n# END provision lab1\n"
			"# trailing comment";
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(removed(t, "lab1", false, &b), PV_OK);
	ck_assert_str_eq(b.data, "127.0.0.1 localhost\n"
				 "# BEGIN provision other\n10.1.1.1 srvu1\n# END provision other\n"
				 "# trailing comment");
	/* nothing of ours: the same bytes */
	{
		struct pv_buf c = PV_BUF_INIT;

		ck_assert_int_eq(removed(b.data, "lab1", false, &c), PV_OK);
		ck_assert_str_eq(c.data, b.data);
		pv_buf_release(&c, 0);
	}
	ck_assert_int_eq(removed("", "lab1", false, &b), PV_OK);
	ck_assert_ptr_nonnull(b.data);
	ck_assert_uint_eq(b.len, 0);
	/* a file holding only our block becomes empty */
	ck_assert_int_eq(merge("", "lab1", false, 1, &b), PV_OK);
	{
		char *copy = strdup(b.data);

		ck_assert_int_eq(removed(copy, "lab1", false, &b), PV_OK);
		ck_assert_uint_eq(b.len, 0);
		free(copy);
	}
	pv_buf_release(&b, 0);
}
END_TEST

START_TEST(names_clash)
{
	struct pv_strset *names = pv_strset_new();
	struct pv_hosts_layout lay;
	const char *same = "198.18.0.20\tsrv.lab.test srv\n";
	const char *other = "127.0.0.1 localhost\n10.0.0.9 x SRVU2 # srvu3 in a comment\n";
	const char *in_lab = "# BEGIN provision other\n10.1.1.1 srvu3\n# END provision other\n";
	const char *in_ours = "# BEGIN provision lab1\n10.1.1.1 srvu3\n# END provision lab1\n";
	const char *v6 = "fd00:0:0::20 srvu1\n";

	pv_strset_add(names, "srv");
	for (size_t i = 0; i < 3; i++)
		pv_strset_add(names, ALIASES3[i]);
	ck_assert_int_eq(pv_hosts_parse(same, strlen(same), "lab1", &lay), PV_OK);
	ck_assert_int_eq(pv_hosts_check_names(same, strlen(same), &lay, "198.18.0.20", names), 0);
	ck_assert_int_eq(pv_hosts_parse(other, strlen(other), "lab1", &lay), PV_OK);
	ck_assert_int_eq(pv_hosts_check_names(other, strlen(other), &lay, "198.18.0.20", names),
			 PV_ECONFLICT);
	ck_assert_msg_has("line 2 maps 'SRVU2' to 10.0.0.9, not to the server's 198.18.0.20");
	ck_assert_int_eq(pv_hosts_parse(in_lab, strlen(in_lab), "lab1", &lay), PV_OK);
	ck_assert_int_eq(pv_hosts_check_names(in_lab, strlen(in_lab), &lay, "198.18.0.20", names),
			 PV_ECONFLICT);
	ck_assert_msg_has("in the block of lab 'other', maps 'srvu3' to 10.1.1.1");
	/* our own block is replaced, so what it says does not count */
	ck_assert_int_eq(pv_hosts_parse(in_ours, strlen(in_ours), "lab1", &lay), PV_OK);
	ck_assert_int_eq(pv_hosts_check_names(in_ours, strlen(in_ours), &lay, "198.18.0.20", names),
			 0);
	/* one address in two spellings */
	ck_assert_int_eq(pv_hosts_parse(v6, strlen(v6), "lab1", &lay), PV_OK);
	ck_assert_int_eq(pv_hosts_check_names(v6, strlen(v6), &lay, "fd00::20", names), 0);
	ck_assert(pv_hosts_same_address("10.0.0.1", 8, "10.0.0.1", 8));
	ck_assert(!pv_hosts_same_address("10.0.0.1", 8, "10.0.0.10", 9));
	ck_assert(!pv_hosts_same_address("fd00::1", 7, "10.0.0.1", 8));
	pv_strset_free(names);
}
END_TEST

START_TEST(cksum_matches_posix_cksum)
{
	char s[32], *big = malloc(70000);

	/* values from coreutils' cksum */
	ck_assert_uint_eq(pv_hosts_cksum("", 0), 4294967295u);
	pv_hosts_cksum_str("abc", 3, s);
	ck_assert_str_eq(s, "1219131554 3");
	pv_hosts_cksum_str("127.0.0.1\tlocalhost\n", 20, s);
	ck_assert_str_eq(s, "199562755 20");
	memset(big, 'x', 70000);
	pv_hosts_cksum_str(big, 70000, s);
	ck_assert_str_eq(s, "4215398528 70000");
	free(big);
}
END_TEST

START_TEST(sh_quote)
{
	struct pv_buf b = PV_BUF_INIT;

	ck_assert_int_eq(pv_remote_quote(&b, "/etc/it's a $(file)"), 0);
	ck_assert_str_eq(b.data, "'/etc/it'\\''s a $(file)'");
	pv_buf_release(&b, 0);
}
END_TEST

/* ---- the write script, run with /bin/sh on a scratch file ---- */

static char dir[64];

static void dir_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pv-unit-hosts-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *path, const char *data)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	fputs(data, f);
	fclose(f);
}

static char *get(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Run the script for w with input on stdin; returns the exit status, output in out/err. */
static int run(const struct pv_hosts_write *w, const char *input, char *out, char *err)
{
	struct pv_buf s = PV_BUF_INIT, cmd = PV_BUF_INIT;
	char in[300], o[300], e[300];
	int st;

	snprintf(in, sizeof(in), "%s/stdin", dir);
	snprintf(o, sizeof(o), "%s/stdout", dir);
	snprintf(e, sizeof(e), "%s/stderr", dir);
	put(in, input ? input : "");
	ck_assert_int_eq(pv_hosts_script(&s, w), PV_OK);
	pv_buf_addstr(&cmd, "/bin/sh -c ");
	pv_remote_quote(&cmd, s.data);
	pv_buf_addf(&cmd, " <'%s' >'%s' 2>'%s'", in, o, e);
	st = system(cmd.data);
	strcpy(out, get(o));
	strcpy(err, get(e));
	pv_buf_release(&s, 0);
	pv_buf_release(&cmd, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int entries(void)
{
	char cmd[300];

	/* files in the folder besides hosts, its backup and the run's own stdin/stdout/stderr */
	snprintf(
		cmd, sizeof(cmd),
		"test $(ls -A '%s' | grep -v -x -e hosts -e hosts.bak -e stdin -e stdout -e stderr "
		"| wc -l) -eq 0",
		dir);
	return system(cmd) == 0 ? 0 : 1;
}

START_TEST(script_writes_backs_up_and_verifies)
{
	const char *old = "127.0.0.1\tlocalhost\n", *new = "127.0.0.1\tlocalhost\n10.0.0.1 x\n";
	const char *verify[] = {"localhost"};
	char path[300], bak[300], olds[32], news[32], out[4096], err[4096];
	struct pv_hosts_write w;
	struct stat st;

	snprintf(path, sizeof(path), "%s/hosts", dir);
	snprintf(bak, sizeof(bak), "%s/hosts.bak", dir);
	put(path, old);
	chmod(path, 0644);
	pv_hosts_cksum_str(old, strlen(old), olds);
	pv_hosts_cksum_str(new, strlen(new), news);
	w = (struct pv_hosts_write){path, bak, olds, news, true, false, verify, 1, 5};
	ck_assert_int_eq(run(&w, new, out, err), 0);
	ck_assert_str_eq(get(path), new);
	ck_assert_str_eq(get(bak), old);
	ck_assert(strstr(out, "pv-backup made\n"));
	ck_assert(strstr(out, "pv-write rename\n"));
	ck_assert(strstr(out, "pv-getent-output\n127.0.0.1") ||
		  strstr(out, "pv-getent-output\n::1"));
	ck_assert(strstr(out, "pv-getent 0\n"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644); /* not mktemp's 0600 */
	ck_assert_int_eq(entries(), 0);

	/* the file changed since it was read: nothing written, no temporary left */
	w.old_sum = olds; /* it now holds new */
	ck_assert_int_eq(run(&w, "whatever\n", out, err), PV_HOSTS_SCRIPT_CHANGED);
	ck_assert(strstr(err, "changed after provision read it"));
	ck_assert_str_eq(get(path), new);
	ck_assert_int_eq(entries(), 0);

	/* input cut short (a dropped connection): nothing written */
	w.old_sum = news;
	w.new_sum = olds;
	ck_assert_int_eq(run(&w, "127.0.0.1\tloc", out, err), PV_HOSTS_SCRIPT_SHORT);
	ck_assert(strstr(err, "arrived incomplete"));
	ck_assert_str_eq(get(path), new);
	ck_assert_int_eq(entries(), 0);

	/* an existing backup is never overwritten */
	ck_assert_int_eq(run(&w, old, out, err), 0);
	ck_assert(strstr(out, "pv-backup exists\n"));
	ck_assert_str_eq(get(path), old);
	ck_assert_str_eq(get(bak), old);

	/* drop_backup: kept while it differs from the file, removed when equal */
	put(bak, "something else\n");
	w = (struct pv_hosts_write){path, bak, olds, NULL, false, true, NULL, 0, 5};
	ck_assert_int_eq(run(&w, NULL, out, err), 0);
	ck_assert(strstr(out, "pv-backup kept\n"));
	ck_assert_ptr_nonnull(get(bak));
	put(bak, old);
	ck_assert_int_eq(run(&w, NULL, out, err), 0);
	ck_assert(strstr(out, "pv-backup removed\n"));
	ck_assert_ptr_null(get(bak));
	ck_assert_str_eq(get(path), old);

	/* a name that does not resolve: getent's status comes back */
	{
		const char *nosuch[] = {"localhost", "pv-no-such-name.invalid"};

		w = (struct pv_hosts_write){path, NULL, olds, NULL, false, false, nosuch, 2, 5};
		ck_assert_int_eq(run(&w, NULL, out, err), 0);
		ck_assert(strstr(out, "pv-getent 2\n"));
	}
}
END_TEST

START_TEST(script_follows_a_symlink)
{
	const char *old = "a\n", *new = "b\n";
	char real[300], link[300], olds[32], news[32], out[4096], err[4096];
	struct pv_hosts_write w;
	struct stat st;

	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/hosts", dir);
	put(real, old);
	ck_assert_int_eq(symlink(real, link), 0);
	pv_hosts_cksum_str(old, strlen(old), olds);
	pv_hosts_cksum_str(new, strlen(new), news);
	w = (struct pv_hosts_write){link, NULL, olds, news, false, false, NULL, 0, 5};
	ck_assert_int_eq(run(&w, new, out, err), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_str_eq(get(real), new);
}
END_TEST

START_TEST(script_missing_file)
{
	char path[300], sum[32], out[4096], err[4096];
	struct pv_hosts_write w;

	snprintf(path, sizeof(path), "%s/absent", dir);
	pv_hosts_cksum_str("", 0, sum);
	w = (struct pv_hosts_write){path, NULL, sum, sum, false, false, NULL, 0, 5};
	ck_assert_int_eq(run(&w, "", out, err), PV_HOSTS_SCRIPT_OPEN);
	ck_assert(strstr(err, "cannot open"));
}
END_TEST

/* A builder whose buffer runs out of memory halfway says so, and the buffer is marked
 * failed, whichever allocation fails: nothing cut short can be sent. */
START_TEST(script_out_of_memory)
{
	const char *v[] = {"srvu1", "srvu2"};
	struct pv_hosts_write w = {
		"/etc/hosts", "/etc/hosts.bak", "1 2", "3 4", true, false, v, 2, 30};
	struct pv_buf ref = PV_BUF_INIT;
	long allocs;

	ck_assert_int_eq(pv_hosts_script(&ref, &w), PV_OK);
	pv_buf_release(&ref, 0);
	pv_test_alloc_fail_at(-1);
	ck_assert_int_eq(pv_hosts_script(&ref, &w), PV_OK);
	allocs = pv_test_alloc_count();
	ck_assert_int_gt(allocs, 1);
	for (long k = 1; k <= allocs; k++) {
		struct pv_buf b = PV_BUF_INIT;

		pv_test_alloc_fail_at(k);
		ck_assert_int_eq(pv_hosts_script(&b, &w), PV_EIO);
		pv_test_alloc_ok();
		ck_assert(pv_buf_failed(&b));
		ck_assert(!b.data || b.len < ref.len);
		pv_buf_release(&b, 0);
	}
	pv_buf_release(&ref, 0);
}
END_TEST

static Suite *hosts_suite(void)
{
	Suite *s = suite_create("hosts");
	TCase *tc = tcase_create("model");
	TCase *sc = tcase_create("script");

	tcase_add_test(tc, parse_plain_and_ours);
	tcase_add_test(tc, parse_crlf_and_other_labs);
	tcase_add_test(tc, parse_malformed);
	tcase_add_test(tc, render_linux_wraps_at_width);
	tcase_add_test(tc, render_windows_crlf_nine_names);
	tcase_add_test(tc, merge_keeps_outside_bytes_and_is_stable);
	tcase_add_test(tc, merge_without_final_break_round_trips);
	tcase_add_test(tc, remove_only_ours);
	tcase_add_test(tc, names_clash);
	tcase_add_test(tc, cksum_matches_posix_cksum);
	tcase_add_test(tc, sh_quote);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(sc, dir_setup, dir_teardown);
	tcase_add_test(sc, script_writes_backs_up_and_verifies);
	tcase_add_test(sc, script_follows_a_symlink);
	tcase_add_test(sc, script_missing_file);
	tcase_add_test(sc, script_out_of_memory);
	suite_add_tcase(s, sc);
	return s;
}

int main(void)
{
	return pv_unit_run(hosts_suite());
}
