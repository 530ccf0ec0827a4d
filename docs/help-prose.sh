#!/usr/bin/env bash
# docs/help-prose.sh: writes each command's help prose into the docs, so that it has one source:
# the command table in provision/cli.c, as the built binary prints it (`provision help CMD`).
# - docs/*.md: the block between `<!-- provision help CMD: ... -->` and
#   `<!-- end provision help CMD -->` becomes the help's usage, summary and description, verbatim,
#   in a fenced block;
# - docs/provision.1: the lines between `.\" provision help CMD: ...` and
#   `.\" end provision help CMD` (in `.Ss CMD`) become the description, as mdoc text.
# Nothing outside the markers is touched. `make docs` runs it on docs/; tests/docs/t_prose.sh runs
# it on a copy and fails when the committed pages differ from what it writes.
# usage: docs/help-prose.sh [PROVISION [DOCS_DIR]]   (default: bin/provision, docs)
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PV=${1:-$TOP/bin/provision}
DIR=${2:-$TOP/docs}
B=$(mktemp -d /tmp/pv-prose.XXXXXX)
trap 'rm -rf "$B"' EXIT

die() {
	echo "help-prose: $*" >&2
	exit 1
}

[[ -x $PV ]] || die "no binary at $PV: run make first"
help=$("$PV" --help) || die "$PV --help failed"
cmds=$(awk '/^Commands:$/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' <<<"$help")
[[ -n $cmds ]] || die "no commands in $PV --help"

for c in $cmds; do
	h=$("$PV" help "$c") || die "$PV help $c failed"
	# the head: usage, blank, summary, blank, description; up to the options, no blank at the end
	awk '/^(Options|Global options):$/ { exit }
		{ line[++n] = $0 }
		END { while (n > 0 && line[n] == "") n--; for (i = 1; i <= n; i++) print line[i] }' \
		<<<"$h" >"$B/$c.head"
	awk 'NR == 1 && !/^usage: provision / { bad = 1 } (NR == 2 || NR == 4) && $0 != "" { bad = 1 }
		END { exit bad || NR < 5 }' "$B/$c.head" ||
		die "'provision help $c' is not usage, blank, summary, blank, description"
	{
		printf '`provision help %s` says:\n\n```text\n' "$c"
		cat "$B/$c.head"
		printf '```\n'
	} >"$B/$c.md"
	# the description as mdoc text: a backslash is \e, a line starting with . or ' is
	# guarded, a blank line is a paragraph; an indented line (a table, an example) starts a line
	# of its own, and so does the first line after such a run; no hyphenation (--set-tle)
	tail -n +5 "$B/$c.head" | awk '
		BEGIN { print ".nh" }
		END { print ".hy" }
		{ gsub(/\\/, "\\e") }
		/^$/ { print ".Pp"; ind = 0; next }
		/^ / { print; ind = 1; next }
		{ if (ind) print ".br"; ind = 0 }
		/^[.'\'']/ { $0 = "\\&" $0 }
		{ print }' >"$B/$c.man"
done

# fill FILE BEGIN_PREFIX END_PREFIX END_SUFFIX EXT: every marked block of FILE written anew
fill() {
	# the markers through the environment: awk -v would read the backslash of .\" as an escape
	BP=$2 EP=$3 ES=$4 awk -v B="$B" -v ext="$5" -v f="$1" '
		BEGIN { bp = ENVIRON["BP"]; ep = ENVIRON["EP"]; es = ENVIRON["ES"] }
		function fail(m) { print "help-prose: " f ":" FNR ": " m > "/dev/stderr"; bad = 1; exit 1 }
		!c && index($0, bp) == 1 {
			c = substr($0, length(bp) + 1); sub(/:.*/, "", c)
			if (c !~ /^[a-z-]+$/) fail("no command in the marker")
			src = B "/" c "." ext
			if ((getline l < src) <= 0) fail("marker for \"" c "\", which provision help does not list")
			print
			do print l; while ((getline l < src) > 0)
			close(src)
			next
		}
		c && $0 == ep c es { print; c = ""; next }
		c { next }
		{ print }
		END { if (!bad && c) fail("no end marker for \"" c "\"") }' "$1" >"$B/out" ||
		exit 1
	cmp -s "$B/out" "$1" || cat "$B/out" >"$1"
}

for f in "$DIR"/*.md; do
	fill "$f" '<!-- provision help ' '<!-- end provision help ' ' -->' md
done
fill "$DIR/provision.1" '.\" provision help ' '.\" end provision help ' '' man
