#!/usr/bin/env bash
# tests/docs/t_make_install.sh: `make install` into a staging folder (DESTDIR, PREFIX=/usr, as
# a package build does) puts exactly the binary, the man page and the bash completion in
# place, with their modes; the installed binary runs; `man` finds the installed page by name
# in that tree and renders it without a warning; the installed completion completes (the
# completion test run on the installed copies); `make uninstall` removes all three and
# nothing else. A second PREFIX (/opt/pv) shows PREFIX is honoured. No lab needed.
. "$(dirname "$0")/../integration/lib.sh"

S=$T_TMP/stage
mkdir -p "$S"
: >"$T_TMP/keep" && mkdir -p "$S/usr/bin" && cp "$T_TMP/keep" "$S/usr/bin/other-tool"

mk() { make -s -C "$TOP" --no-print-directory "$@" >"$T_TMP/make.out" 2>&1 || {
	fail "make $*: $(tail -n3 "$T_TMP/make.out")"
	return 1
}; }
files() { (cd "$S" && find . -type f | sort); }

mk install DESTDIR="$S" PREFIX=/usr
want=$(printf '%s\n' ./usr/bin/other-tool ./usr/bin/provision ./usr/share/bash-completion/completions/provision \
	./usr/share/man/man1/provision.1 | sort)
[[ $(files) == "$want" ]] || fail "installed files: $(files | tr '\n' ' '), expected $(echo $want)"
[[ $(stat -c %a "$S/usr/bin/provision") == 755 ]] || fail "bin/provision mode $(stat -c %a "$S/usr/bin/provision")"
for f in usr/share/man/man1/provision.1 usr/share/bash-completion/completions/provision; do
	[[ $(stat -c %a "$S/$f") == 644 ]] || fail "$f mode $(stat -c %a "$S/$f")"
done
cmp -s "$S/usr/bin/provision" "$PV" || fail "the installed binary is not bin/provision"
"$S/usr/bin/provision" --version | grep -q '^provision [0-9]' || fail "the installed binary does not run"

# man finds it by name in the staged tree, and it renders without a warning
out=$(MANWIDTH=100 LC_ALL=C.UTF-8 man --warnings -M "$S/usr/share/man" provision 2>"$T_TMP/warn")
[[ $? -eq 0 ]] || fail "man -M stage provision: $(head -n3 "$T_TMP/warn")"
[[ -s $T_TMP/warn ]] && fail "man warns: $(head -n3 "$T_TMP/warn")"
grep -q 'provision.*prepare, drive and tear down' <<<"$(col -bx <<<"$out")" || fail "rendered page lacks its NAME line"
MANWIDTH=100 man --warnings -l "$S/usr/share/man/man1/provision.1" >/dev/null 2>"$T_TMP/warn" ||
	fail "man -l of the installed page failed"
[[ -s $T_TMP/warn ]] && fail "man -l warns: $(head -n3 "$T_TMP/warn")"
MAN_PAGE="$S/usr/share/man/man1/provision.1" bash "$TOP/tests/docs/t_man.sh" 2>"$T_TMP/man.out" ||
	fail "t_man on the installed page: $(grep FAIL "$T_TMP/man.out" | head -n3)"

# the installed completion, with the installed binary
COMPLETION="$S/usr/share/bash-completion/completions/provision" PV_BIN="$S/usr/bin/provision" \
	bash "$TOP/tests/docs/t_completion.sh" 2>"$T_TMP/comp.out" ||
	fail "t_completion on the installed copies: $(grep FAIL "$T_TMP/comp.out" | head -n3)"

mk uninstall DESTDIR="$S" PREFIX=/usr
[[ $(files) == ./usr/bin/other-tool ]] || fail "after uninstall: $(files | tr '\n' ' ')"

# another PREFIX
mk install DESTDIR="$S" PREFIX=/opt/pv
[[ -x $S/opt/pv/bin/provision && -f $S/opt/pv/share/man/man1/provision.1 &&
	-f $S/opt/pv/share/bash-completion/completions/provision ]] || fail "PREFIX=/opt/pv: $(files | tr '\n' ' ')"
mk uninstall DESTDIR="$S" PREFIX=/opt/pv
[[ $(files) == ./usr/bin/other-tool ]] || fail "after uninstall of /opt/pv: $(files | tr '\n' ' ')"
finish
