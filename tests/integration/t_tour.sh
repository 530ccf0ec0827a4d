#!/usr/bin/env bash
# The README's tour, and docs/wait.md's examples, run as they are written, so that they cannot
# fall behind the program (the other pages' examples are measured on labs of thousands of files,
# copy and sweep, or on captures, learn, and are not run here): every
# "$ provision ..." line of its fenced blocks is run on the lab from the top of the tree, as
# the README says it was (tests/lab/lab.sh exec ctl, playbooks/lab.yaml, the default lab), in
# the README's order; before `compare`, the second run of the same settings it compares with
# (id tour2, not shown there). Each command's output has the shape the README shows:
#   - every line the README shows is a line of the command's output, in the README's order
#     (stdout's and stderr's apart: the README's `provision:` lines are stderr's), where a
#     line's shape is its words with every number as N (times, counts and figures differ
#     from run to run; "1 poll" and "3 polls" are one shape), and spaces collapsed;
#   - a README line "..." stands for lines left out; the README may show some of the lines
#     (prepare shows four of its nine stderr lines), never one the output lacks;
#   - each command exits 0; and what the README says of them in words: `prepare` again
#     changes nothing (every phase 'already'), `status` after `cleanup` says the lab holds
#     nothing and exits 13.
# What it makes is the tour's own: the default lab, prepared and cleaned up by the tour's
# commands (cleaned up here too when the test stops part way), and the results folder's backup
# that cleanup keeps, removed at the end.
. "$(dirname "$0")/lib.sh"

cd "$TOP" || exit 1
P=(-p "$PLAYBOOK")
RESULTS=$LAB/results
BEFORE=()
cleanup() {
	on ctl "${PVT[@]}" "$PV" "${P[@]}" cleanup --leave >/dev/null 2>&1
	rmdir "$RESULTS" 2>/dev/null
	# the backups of the results folder this test's cleanups made
	for b in "$RESULTS".*; do
		[[ -e $b && " ${BEFORE[*]} " != *" $b "* ]] && rm -rf "$b"
	done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
# a lab left prepared is cleaned first (its results kept aside, as cleanup does); the backups
# from here on are the tour's
pv "${P[@]}" cleanup --leave >/dev/null
# an empty results folder is left by cleanup as it is ("already: empty"); the tour's prepare
# makes it (as the README shows: created)
rmdir "$RESULTS" 2>/dev/null
for b in "$RESULTS".*; do [[ -e $b ]] && BEFORE+=("$b"); done

# blocks FILE: FILE's fenced blocks as "cmd N <command line>", then "out N <line>" for each
# line it shows after it
blocks() {
	python3 - "$1" <<'EOF'
import sys
fence, n, cmd = False, 0, None
f = open(sys.argv[1])
for line in f:
    line = line.rstrip("\n")
    if line.startswith("```"):
        fence, cmd = not fence, None
        continue
    if not fence:
        continue
    if line.startswith("$ provision "):
        n += 1
        cmd, text = n, line[2:]
        # a command continued on the next lines (a backslash at the end): one line
        while text.endswith("\\"):
            text = text[:-1].rstrip() + " " + next(f).strip()
        print("cmd %d %s" % (n, text))
    elif cmd is not None:
        print("out %d %s" % (cmd, line))
EOF
}

# shape: a line's words, every number N, plurals after a number one, spaces collapsed
shape() {
	sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/(^|[ (.])[+-]N/\1N/g; s/\b(yes|no)\b/Y/g
		s/(N [a-z]+)s\b/\1/g; s/[[:space:]]+/ /g; s/^ //; s/ $//'
}

# same PAGE CMD N STREAM WANT GOT: WANT's lines (the page's) are GOT's, in order, shape for
# shape; with the page's rules ($RULES, run_page), a line of a "loose" shape (a regular
# expression) is matched by any line of that shape, one of an "optional" shape may be absent
# (a line that comes or not from run to run: a second smbd, a verdict), and what a "drop"
# expression finds is taken out of every line, the page's and the output's, first
same() {
	python3 - "$@" "${RULES:-}" <<'EOF'
import re, sys
page, cmd, n, stream, want, got, rules = sys.argv[1:8]
want = [l for l in open(want).read().split("\n") if l and l != "..."]
got = [l for l in open(got).read().split("\n") if l]
loose, optional, drop = [], [], []
for r in rules.split("\n"):
    if r:
        kind, rx = r.split(" ", 1)
        {"loose": loose, "optional": optional, "drop": drop}[kind].append(re.compile(rx))
for rx in drop:
    want = [rx.sub("", l) for l in want]
    got = [rx.sub("", l) for l in got]
def like(w, g):
    return g == w or any(r.search(w) and r.search(g) for r in loose)
i = 0
for w in want:
    j = i
    while j < len(got) and not like(w, got[j]):
        j += 1
    if j == len(got) and any(r.search(w) for r in optional):
        continue
    i = j
    if i == len(got):
        print("'%s' (%s, block %s, %s): the page's line\n      %s\n    is not in the output's (after the lines matched before it):\n      %s" % (
            cmd, page, n, stream, w, "\n      ".join(got) or "(nothing)"))
        sys.exit(1)
    i += 1
EOF
}

# run_page PAGE: each command of PAGE's blocks run, its output against the page's; with the
# page's $SUBST (a sed script over its commands and lines: a file named there that is the
# test's), $RULES (same) and $DRY (a command matching this regular expression is run with
# --dry-run, and must say it would replay the learned kinds)
run_page() {
	local page=$1 n cmdline args tour why
	blocks "$TOP/$page" | sed -E "${SUBST:-}" >"$T_TMP/page" || { fail "$page could not be read"; return; }
	grep -q '^cmd ' "$T_TMP/page" || fail "no \"\$ provision\" line in $page's blocks"
	# the commands read from fd 3: what they run never reads the list
	while read -r _ n cmdline <&3; do
		# the words as the shell splits them (the sweep's quoted settings)
		mapfile -d '' args < <(python3 -c 'import shlex, sys
for a in shlex.split(sys.argv[1])[1:]:
    sys.stdout.write(a + "\0")' "$cmdline")
		if [[ -n ${DRY:-} && $cmdline =~ $DRY ]]; then
			args+=(--dry-run)
			pv "${args[@]}"
			ran=$((ran + 1))
			expect_rc 0 "$cmdline (--dry-run)"
			grep -q "^run: would replay the [0-9]* kinds of " <<<"$OUT" || { fail "$cmdline --dry-run does not name the learned kinds it would replay"; show; }
			echo "    $cmdline: run with --dry-run" >&2
			continue
		fi
		# the second run that compare compares the tour with: the same settings, not shown
		if [[ ${args[0]} == compare ]]; then
			tour=("${TOUR_RUN[@]}")
			tour[-1]=tour2
			pv "${tour[@]}"
			expect_rc 0 "the second run (tour2) for compare"
		fi
		[[ ${args[*]} == *" run "*"--id tour" ]] && TOUR_RUN=("${args[@]}")
		pv "${args[@]}"
		ran=$((ran + 1))
		expect_rc 0 "$cmdline"
		sed -n "s/^out $n //p" "$T_TMP/page" >"$T_TMP/doc"
		grep '^provision:' "$T_TMP/doc" | shape >"$T_TMP/doc.err"
		grep -v '^provision:' "$T_TMP/doc" | shape >"$T_TMP/doc.out"
		printf '%s\n' "$OUT" | shape >"$T_TMP/got.out"
		printf '%s\n' "$ERR" | shape >"$T_TMP/got.err"
		why=$(same "$page" "$cmdline" "$n" stdout "$T_TMP/doc.out" "$T_TMP/got.out") || { fail "$why"; continue; }
		why=$(same "$page" "$cmdline" "$n" stderr "$T_TMP/doc.err" "$T_TMP/got.err") || fail "$why"
		echo "    $cmdline: $(grep -c . "$T_TMP/doc") lines shown, their shapes in the output" >&2
		# what the README says in words after its blocks
		if [[ ${args[*]} == *" prepare" ]]; then
			pv "${args[@]}"
			expect_rc 0 "prepare again"
			grep -q '^prepare: the lab is prepared in ' <<<"$OUT" || fail "prepare again: no 'the lab is prepared in'"
			grep '^prepare: [a-z]' <<<"$OUT" | grep -v '^prepare: the lab ' | grep -vE '^prepare: [a-z]+ +already ' &&
				fail "prepare again: a phase that is not 'already' (the README: every phase says already)"
		fi
		if [[ ${args[*]} == *" cleanup --leave" ]]; then
			pv "${P[@]}" status
			expect_rc 13 "status after cleanup"
			grep -q 'the lab holds nothing' <<<"$OUT" || { fail "status after cleanup does not say 'the lab holds nothing'"; show; }
		fi
	done 3< <(grep '^cmd ' "$T_TMP/page")
}

ran=0
run_page README.md
((ran >= 6)) || fail "only $ran of the README's commands ran"
# docs/wait.md's, on a lab prepared for them (the other pages' blocks are measured on labs of
# thousands of files: copy, sweep; or on captures: learn)
pv "${P[@]}" prepare
expect_rc 0 "prepare for docs/wait.md"
run_page docs/wait.md
# docs/copy.md's, on the same lab: its copy as written (88,000 files, about 20 s), and its sweep
# of the thread's settings with the small fileset instead (18 copies of srctree take 7
# minutes; the table's shape is the same, but for the smbd CPU per file, which a copy shorter
# than the watch's second has not: its column is dropped); srv's [global] includes the
# registry for it, as the page says. Its second smbd, its verdicts, its system calls and what
# bounds the copy differ from run to run: the shapes of those lines are loose or optional
# ($RULES)
"$LAB_SH" srv-conf 'include=registry' >/dev/null || fail "srv-conf include=registry (docs/copy.md's sweep)"
SUBST='s#(sweep copy --fileset playbooks/filesets/)srctree.yaml#\1small.yaml#'
RULES='loose ^what bounds it: 
loose ^[a-z_]+ N N( N)?$
optional ^[a-z_]+ N N( N)?$
optional ^smbd N: N% of a core
optional changed the files/s beyond the noise
drop  (N|-)$'
run_page docs/copy.md
"$LAB_SH" srv-conf >/dev/null || fail "srv-conf back to the base"
pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup after docs/copy.md"
# docs/learn.md's, on the lab capture the page says it shows (the checked-in one) as the
# page's /tmp/srv.pcap, the workload written in the test's folder; the replay of 4 to 20 users
# as a dry run (t_replay replays for real, and checks what the server saw)
cp "$TOP/tests/learn/captures/lab-smbclient.pcap" "$T_TMP/srv.pcap"
SUBST="s#/tmp/srv.pcap#$T_TMP/srv.pcap#g; s#(-o |load.workload=)team.yaml#\1$T_TMP/team.yaml#"
RULES=
DRY=' run --min-users 4 '
run_page docs/learn.md
((ran >= 13)) || fail "only $ran of the pages' commands ran"

finish
