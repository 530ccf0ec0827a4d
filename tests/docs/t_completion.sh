#!/usr/bin/env bash
# tests/docs/t_completion.sh: the bash completion (docs/provision.bash-completion), sourced in
# a clean bash and called as bash calls it (COMP_WORDS, COMP_CWORD), its candidates checked:
# the commands of --help, the phases of prepare and cleanup, every command's options (those
# `help <command>` prints), 'prepare dc' taking dc's options, the fixed values of --via and
# --probe, files for -p, folders for --backup, commands after 'help'. No lab needed.
# COMPLETION and PV_BIN name another copy (t_make_install.sh runs the installed ones).
. "$(dirname "$0")/../integration/lib.sh"

COMPLETION=${COMPLETION:-$TOP/docs/provision.bash-completion}
PV_BIN=${PV_BIN:-$PV}
D=$T_TMP/files
mkdir -p "$D/backups" "$D/bench"
: >"$D/lab.yaml"
: >"$D/big.yaml" # not a folder: --backup must not offer it

# cands WORD...: the candidates for the last word, sorted, one a line, from a fresh bash that
# has sourced only the completion (the command found on PATH as 'provision')
cands() {
	env -i PATH="$(dirname "$PV_BIN"):/usr/bin:/bin" HOME="$T_TMP" bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		complete -p provision | grep -q -- "-F _provision" || { echo "not registered" >&2; exit 1; }
		COMP_WORDS=(provision "$@")
		COMP_CWORD=$#
		_provision provision "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@" | sed '/^$/d' | sort
}
# want WHAT GOT WANTED...: GOT is exactly the WANTED words
want() {
	local what=$1 got=$2
	shift 2
	local exp
	exp=$(printf '%s\n' "$@" | sed '/^$/d' | sort)
	[[ $got == "$exp" ]] || fail "$what: got [$(echo $got)], expected [$(echo $exp)]"
}
# has WHAT GOT WORD...: GOT holds every WORD
has() {
	local what=$1 got=$2 w
	shift 2
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$got" || fail "$what: '$w' not offered (got: $(echo $got | cut -c1-200))"
	done
}

HELP=$("$PV_BIN" --help)
cmds=$(awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' <<<"$HELP")
[[ -n $cmds ]] || fail "no commands in --help"

# shellcheck disable=SC2086,SC2046 # word lists
{
	want "commands" "$(cands "")" $cmds
	want "commands after a global option and its value" "$(cands -p lab.yaml --set a=b "")" $cmds
	want "'pre'" "$(cands pre)" prepare
	want "'st'" "$(cands st)" status
	want "commands after help" "$(cands help c)" $(grep '^c' <<<"$cmds")
	want "phases of prepare" "$(cands prepare "")" dc join server client controller
	want "phases of cleanup" "$(cands -q cleanup "")" dc join server client controller
	want "nothing after a phase" "$(cands cleanup dc "")"
	want "--via" "$(cands server --via "")" smb ssh
	want "--via s" "$(cands prepare --via s)" smb ssh
	want "--probe" "$(cands wait --probe "")" command writeback inflight smb
	want "--probe w" "$(cands wait --drain --probe w)" writeback
	want "a number: nothing" "$(cands dc --users "")"
	want "'dc --re'" "$(cands dc --re)" --reset-passwords
	want "'prepare dc --re': dc's options" "$(cands prepare dc --re)" --reset-passwords
	want "'prepare --re': not an option of prepare" "$(cands prepare --re)"
	want "-p: files" "$(cands -p "$D/l")" "$D/lab.yaml"
	want "--backup: folders only" "$(cands controller --backup "$D/b")" "$D/backups" "$D/bench"
}

# every option of every command, as its help prints it, and the global ones
n=0
for c in $cmds; do
	opts=$("$PV_BIN" help "$c" | grep -oE '^ +(-[A-Za-z], )?--[a-z][a-z0-9-]*' | grep -oE -- '-[-A-Za-z0-9]+')
	# shellcheck disable=SC2086
	has "options of '$c'" "$(cands "$c" -)" $opts
	n=$((n + $(wc -l <<<"$opts")))
done
((n >= 100)) || fail "only $n options checked: the help's format changed"
echo "t_completion: $(wc -l <<<"$cmds") commands, $n options (with the global ones per command) offered" >&2
finish
