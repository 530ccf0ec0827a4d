#!/usr/bin/env bash
# tests/docs/t_man.sh: the man page (docs/provision.1) against the program's own help, so it
# cannot drift from it. Read from the built binary's printed help (`provision --help`,
# `provision help <command>`), never from the sources of the command table:
# - every command of --help has a subsection in COMMANDS, and every subsection is a command;
# - per command, the options `help <command>` lists (short and long) are the man page's option
#   items for that command, both ways; the global options likewise (OPTIONS);
# - the phases a usage line offers ([dc|join|...]) are in that command's synopsis;
# - every exit status of the help (code and name) is in EXIT STATUS, and the reverse;
# - every PROVISION_* variable the code reads (getenv) is in ENVIRONMENT, and the reverse;
# - the page renders with `man -l` without a warning, and names every command.
# No lab needed.
. "$(dirname "$0")/../integration/lib.sh"

MAN=${MAN_PAGE:-$TOP/docs/provision.1}
[[ -r $MAN ]] || { fail "no man page at $MAN"; exit 1; }

# section NAME: the page's source between `.Sh NAME` and the next `.Sh`
section() { awk -v s="$1" '/^\.Sh / { on = (substr($0, 5) == s); next } on' "$MAN"; }
# subsection CMD: the source of `.Ss CMD` inside COMMANDS
subsection() { section COMMANDS | awk -v s="$1" '/^\.Ss / { on = ($2 == s); next } on'; }
# man_opts: the options of `.It Fl ...` items on stdin, one a line (-u, --users)
man_opts() { awk '/^\.It Fl / { for (i = 2; i <= NF; i++) if ($(i - 1) == "Fl") print "-" $i }' | sort -u; }
# help_opts: the options of the help text's block named $1 ("Options:", "Global options:")
help_opts() {
	awk -v b="$1" '$0 == b { on = 1; next } /^[^ ]/ || /^$/ { on = 0 }
		on && match($0, /^ +(-[A-Za-z], )?--[a-z][a-z0-9-]*/) {
			n = split(substr($0, 1, RLENGTH), w, /[ ,]+/)
			for (i = 1; i <= n; i++) if (w[i] ~ /^-/) print w[i]
		}' | sort -u
}
# same WHAT A B [SOURCE]: the two sorted lists are equal, else say what each lacks (A is what
# SOURCE, "the help" by default, says; B the man page)
same() {
	local miss extra src=${4:-the help}
	miss=$(comm -23 <(echo "$2") <(echo "$3") | tr '\n' ' ')
	extra=$(comm -13 <(echo "$2") <(echo "$3") | tr '\n' ' ')
	[[ -z $miss ]] || fail "$1: in $src, missing from the man page: $miss"
	[[ -z $extra ]] || fail "$1: in the man page, not in $src: $extra"
}

HELP=$("$PV" --help)
[[ $? -eq 0 && -n $HELP ]] || fail "provision --help failed"

# commands, both ways
cmds=$(awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' <<<"$HELP" | sort)
[[ $(wc -l <<<"$cmds") -ge 10 ]] || fail "--help lists only $(wc -l <<<"$cmds") commands: the parse broke"
same "commands" "$cmds" "$(section COMMANDS | awk '/^\.Ss / { print $2 }' | sort)"

# global options
glob=$(help_opts "Global options:" <<<"$HELP")
[[ $glob == *--playbook* && $glob == *--json* ]] || fail "no global options parsed from --help"
same "global options" "$glob" "$(section OPTIONS | man_opts)"

# every command's options and phases
nopts=0
for c in $cmds; do
	h=$("$PV" help "$c") || fail "provision help $c exits $?"
	[[ $h == "usage: provision "* ]] || fail "provision help $c does not start with its usage"
	ho=$(help_opts "Options:" <<<"$h")
	[[ -z $ho ]] || nopts=$((nopts + $(wc -l <<<"$ho")))
	same "options of '$c'" "$ho" "$(subsection "$c" | man_opts)"
	# the global options each command's help repeats are those of --help
	same "global options in 'help $c'" "$glob" "$(help_opts "Global options:" <<<"$h")"
	phases=$(head -n1 <<<"$h" | grep -oE " $c \[[a-z]+(\|[a-z]+)+\]" | grep -oE '\[.*\]' | tr -d '[]')
	if [[ -n $phases ]]; then
		want=".Op Cm ${phases//|/ | }"
		subsection "$c" | grep -qxF "$want" || fail "synopsis of '$c' lacks its phases: $want"
	fi
done
((nopts >= 40)) || fail "only $nopts command options parsed from the help: the parse broke"

# exit statuses: code and name, both ways
codes=$(awk '/^Exit status:/ { on = 1; next } /^$/ { on = 0 } on && /^  [0-9]/ { print $1, $2 }' <<<"$HELP" | sort)
[[ $(wc -l <<<"$codes") -ge 15 ]] || fail "--help lists only $(wc -l <<<"$codes") exit statuses"
same "exit statuses" "$codes" "$(section "EXIT STATUS" | awk '/^\.It [0-9]+ Ta / { print $2, $4 }' | sort)"

# environment: the PROVISION_* variables the code reads
envs=$(grep -rhoE 'getenv\("PROVISION_[A-Z_]+"\)' --include='*.c' "$TOP" --exclude-dir=tests --exclude-dir=build |
	grep -oE 'PROVISION_[A-Z_]+' | sort -u)
[[ -n $envs ]] || fail "no getenv(\"PROVISION_...\") found in the sources"
same "environment" "$envs" "$(section ENVIRONMENT | awk '/^\.It Ev PROVISION_/ { print $3 }' | sort -u)" \
	"the code (getenv)"

# it renders, without a warning, and names every command
if out=$(MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings -l "$MAN" 2>"$T_TMP/warn"); then
	[[ -s $T_TMP/warn ]] && fail "man -l warns: $(head -n3 "$T_TMP/warn")"
	for c in $cmds; do
		grep -qE "^ +provision $c( |$)" <<<"$(col -bx <<<"$out")" || fail "rendered page lacks 'provision $c'"
	done
else
	fail "man -l $MAN failed: $(head -n3 "$T_TMP/warn")"
fi

echo "t_man: $(wc -l <<<"$cmds") commands, $nopts command options, $(wc -l <<<"$glob") global options, $(wc -l <<<"$codes") exit statuses, $(wc -l <<<"$envs") environment variables checked" >&2
finish
