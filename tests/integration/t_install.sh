#!/usr/bin/env bash
# tests/integration/t_install.sh: how `run` (driver builtin) puts provision's binary on a
# client (run/scripts/install.sh, as built into provision), run here on scratch folders:
# a binary that cannot run for a missing library is refused with the library named (status
# 4, nothing left in place); a folder root cannot trust is refused (a link, one another user
# owns, one others may write: status 3); a copy that is not the binary sent is refused (5);
# the real binary is checked and renamed into place, and a second check finds it present.
. "$(dirname "$0")/lib.sh"

S=$(mktemp -d /tmp/pv-install.XXXXXX)
trap 'rm -rf "$S" "$T_TMP"' EXIT
SCRIPT=$TOP/run/scripts/install.sh

# inst DIR DIGEST TMP MODE: the script as provision runs it (its preamble sets the variables)
inst() {
	OUT=$(dir=$1 digest=$2 tmp=$3 mode=$4 sh -c ". '$SCRIPT'" 2>"$T_TMP/err")
	RC=$?
	ERR=$(cat "$T_TMP/err")
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }

# a binary needing a library that is not there: built against a stub, the stub then removed
mkdir -p "$S/lib"
echo 'int pv_missing(void) { return 1; }' >"$S/m.c"
echo 'int pv_missing(void); int main(void) { return pv_missing(); }' >"$S/x.c"
cc -shared -fPIC -o "$S/lib/libpvmissing.so" "$S/m.c" && cc -o "$S/x" "$S/x.c" -L"$S/lib" -lpvmissing ||
	{ fail "cannot build the test binary"; finish; exit; }
rm -f "$S/lib/libpvmissing.so"

# 1. missing library: refused, named, not put in place
D=$S/provision-a
inst "$D" "$(sha "$S/x")" provision.new.cli1 check
expect_rc 0 "check on a fresh folder"
[[ $OUT == absent ]] || fail "a fresh folder: '$OUT', expected absent"
[[ $(stat -c %a "$D") == 700 ]] || fail "the folder was made with mode $(stat -c %a "$D"), expected 700"
cp "$S/x" "$D/provision.new.cli1"
inst "$D" "$(sha "$S/x")" provision.new.cli1 finish
expect_rc 4 "a binary with a library missing"
expect_err "libraries missing: libpvmissing.so" "the missing library named"
[[ -e $D/provision ]] && fail "a binary that cannot run was put in place"

# 2. folders root cannot trust
ln -s "$S/lib" "$S/provision-link"
inst "$S/provision-link" x provision.new.cli1 check
expect_rc 3 "a folder that is a link"
expect_err "not a folder \\(a link\\?\\)"
mkdir -m 0777 "$S/provision-open"
inst "$S/provision-open" x provision.new.cli1 check
expect_rc 3 "a folder others may write"
expect_err "writable by others"
mkdir -m 0700 "$S/provision-theirs"
chown nobody "$S/provision-theirs"
inst "$S/provision-theirs" x provision.new.cli1 check
expect_rc 3 "a folder another user owns"
expect_err "is not ours"

# 3. the copy is not what was sent
D=$S/provision-b
inst "$D" "$(sha "$PV")" provision.new.cli2 check
echo garbage >"$D/provision.new.cli2"
inst "$D" "$(sha "$PV")" provision.new.cli2 finish
expect_rc 5 "a copy that is not the binary"
expect_err "is not the binary sent"

# 4. the real binary: checked, in place, then found present
cp "$PV" "$D/provision.new.cli2"
inst "$D" "$(sha "$PV")" provision.new.cli2 finish
expect_rc 0 "the binary put in place"
[[ $OUT == installed && -x $D/provision && ! -e $D/provision.new.cli2 ]] ||
	fail "after finish: '$OUT', $(ls -A "$D")"
inst "$D" "$(sha "$PV")" provision.new.cli1 check
[[ $OUT == present ]] || fail "a second check: '$OUT', expected present"
"${PVT[@]}" "$D/provision" --version | grep -q '^provision ' || fail "the binary put in place does not run"

finish
