#!/usr/bin/env bash
# tests/docs/t_prose.sh: each command's help prose has one source, the command table in
# provision/cli.c; docs/<command>.md and the man page carry copies written from the built binary
# by docs/help-prose.sh (`make docs`), and this test fails when a committed copy is not what it
# would write now. Checked:
# - docs/help-prose.sh, run on a copy of docs/, changes nothing: else the first differing line
#   is named with its file, its line and the command whose block it is in;
# - every command of --help has one block in the man page, in its `.Ss`, and one in docs/*.md;
# - every usage line names every option its command takes (or says [options]).
# Why generated copies checked for staleness rather than three hand-kept texts compared after
# normalising: a comparison that strips mdoc markup and Markdown is a renderer of its own,
# with its own blind spots (a word moved into a macro, a quote style), and it still leaves a
# person to edit three places; a generated copy is compared byte for byte, and the fix for a
# failure is one command. The cost is that the man page's descriptions are plain text, without
# mdoc's markup, as `provision help` prints them. No lab needed.
. "$(dirname "$0")/../integration/lib.sh"

GEN=$TOP/docs/help-prose.sh
D=$T_TMP/docs
mkdir -p "$D"
cp "$TOP"/docs/*.md "$TOP/docs/provision.1" "$D/"

HELP=$("$PV" --help) || fail "provision --help failed"
cmds=$(awk '/^Commands:$/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' <<<"$HELP")
(($(wc -l <<<"$cmds") >= 10)) || fail "--help lists only $(wc -l <<<"$cmds") commands: the parse broke"

# the committed pages are what the generator writes now
if ! bash "$GEN" "$PV" "$D" 2>"$T_TMP/gen.err"; then
	fail "docs/help-prose.sh failed: $(head -n3 "$T_TMP/gen.err" | sed "s|$D/|docs/|g")"
else
	for f in "$D"/*.md "$D/provision.1"; do
		name=docs/$(basename "$f")
		cmp -s "$f" "$TOP/$name" && continue
		# the first differing line, and the block it is in (the last marker above it)
		n=$(cmp "$f" "$TOP/$name" 2>/dev/null | grep -oE 'line [0-9]+' | grep -oE '[0-9]+')
		[[ -n $n ]] || n=$(($(wc -l <"$f") + 1)) # one file is a prefix of the other
		c=$(head -n "$n" "$f" | grep -oE '^(<!--|\.\\") provision help [a-z-]+:' | tail -n1 |
			sed -E 's/.*provision help ([a-z-]+):/\1/')
		fail "$name:$n, in the prose of 'provision help ${c:-?}': the page has '$(sed -n "${n}p" "$TOP/$name")', the help gives '$(sed -n "${n}p" "$f")'; edit provision/cli.c (not the page) and run make docs"
	done
fi

# every command has its blocks: one in the man page, within its .Ss; one in the .md pages
man_ss=$(awk '/^\.Ss / { ss = $2 } /^\.\\" provision help [a-z-]+:/ { c = $4; sub(/:$/, "", c); print ss, c }' "$TOP/docs/provision.1")
nblocks=0
for c in $cmds; do
	n=$(grep -cxF "$c $c" <<<"$man_ss")
	[[ $n -eq 1 ]] || fail "docs/provision.1: $n blocks of 'provision help $c' in '.Ss $c', not 1"
	n=$(cat "$TOP"/docs/*.md | grep -cE "^<!-- provision help $c:")
	[[ $n -eq 1 ]] || fail "docs/*.md: $n blocks of 'provision help $c', not 1"
	nblocks=$((nblocks + n))
	# the block holds the command's usage (so the generator filled it)
	h=$("$PV" help "$c")
	grep -qxF "$(head -n1 <<<"$h")" "$TOP"/docs/*.md ||
		fail "no docs/*.md holds the usage line of 'provision help $c'"
done
[[ -z $(awk '$1 != $2' <<<"$man_ss") ]] ||
	fail "docs/provision.1: a block in another command's .Ss: $(awk '$1 != $2' <<<"$man_ss" | head -n1)"

# usage lines name every option the command takes
nopts=0
for c in $cmds; do
	h=$("$PV" help "$c")
	usage=$(head -n1 <<<"$h")
	usage=${usage#usage: provision \[global options\] }
	[[ $usage == *"options]"* ]] && continue # prepare [options], sweep [the job's options]
	# each option as "--long" or "-s --long": either spelling will do
	while read -r a b; do
		lng=${b:-$a} spell=${b:+$a|$b}
		nopts=$((nopts + 1))
		grep -qE -- "(^|[[ |])(${spell:-$a})([] |=]|$)" <<<"$usage" ||
			fail "usage of '$c' lacks $lng, an option it takes: $usage"
	done < <(awk '/^Options:$/ { on = 1; next } /^$/ || /^[^ ]/ { on = 0 }
		on && match($0, /^ +(-[A-Za-z], )?--[a-z][a-z0-9-]*/) {
			s = substr($0, 1, RLENGTH); gsub(/[ ,]+/, " ", s); sub(/^ /, "", s); print s
		}' <<<"$h")
done
((nopts >= 30)) || fail "only $nopts options checked against usage lines: the parse broke"

echo "t_prose: $(wc -l <<<"$cmds") commands' prose in docs/*.md and docs/provision.1 ($nblocks blocks), $nopts options in usage lines checked" >&2
finish
