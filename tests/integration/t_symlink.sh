#!/usr/bin/env bash
# Root never acts through a path a load user controls: users' folders hold symbolic links to a
# root-owned file and to a folder outside the share; `server --via ssh`, its re-run and `cleanup
# server` leave the targets untouched (owner, mode, content: stat and sha256sum on srv). The
# race (a link planted after provision looked and before it writes) is made certain by running
# the writer (phases/scripts/trees.pl, as built into provision) by hand on a prepared folder.
# Lab 'pvsym' (users sy-cli1-u1...), left as found.
. "$(dirname "$0")/lib.sh"

P=(-p "$PLAYBOOK" --set lab=pvsym --set "users.name_template=sy-{client}-u{n}" --set users.per_client=1)
OUT_DIR=/srv/pv-sym-outside   # on srv: root's, outside the share
OUT_FILE=/srv/pv-sym-secret
U1=sy-cli1-u1
U2=sy-cli2-u1
trap 'on srv rm -rf "$OUT_DIR" "$OUT_FILE" /srv/pv-sym-share; rm -rf "$T_TMP"' EXIT

# fingerprint: owner, mode and content of the targets, and what the folder holds
fingerprint() {
	on srv sh -c "stat -c '%U:%G %a %s' $OUT_FILE $OUT_DIR; sha256sum $OUT_FILE; ls -A $OUT_DIR"
}
as_user() { # USER CMD...: on srv with the user's uid and gid and no other group
	local u=$1 id
	shift
	id=$(on srv getent passwd "LAB\\$u" | cut -d: -f3,4)
	on srv setpriv --reuid="${id%:*}" --regid="${id#*:}" --clear-groups "$@"
}
plant() {
	as_user $U1 sh -c "cd $SP/fsroot1/$U1/static/d01 && f=\$(ls f0001.*) && rm -f \"\$f\" && ln -s $OUT_FILE \"\$f\""
	as_user $U2 sh -c "cd $SP/fsroot2/$U2 && rm -rf new && ln -s $OUT_DIR new"
}

pv "${P[@]}" cleanup --leave >/dev/null
on srv sh -c "mkdir -p $OUT_DIR && chmod 0755 $OUT_DIR && echo 'root only' >$OUT_FILE && chmod 0644 $OUT_FILE"
before=$(fingerprint)

pv "${P[@]}" prepare --via ssh
expect_rc 0 "prepare --via ssh"
plant
on srv test -L "$SP/fsroot2/$U2/new" || fail "the link to a folder was not planted"
on srv sh -c "test -L $SP/fsroot1/$U1/static/d01/f0001.*" || fail "the link to a file was not planted"

# 1. a re-run over the links: they are replaced by what the fileset has, as the user
pv "${P[@]}" server --via ssh
expect_rc 0 "server --via ssh over planted links"
[[ $(fingerprint) == "$before" ]] || fail "the re-run touched the targets: $(fingerprint)"
on srv test -L "$SP/fsroot2/$U2/new" && fail "the link to a folder outside is still there"
[[ $(on srv stat -c %U "$SP/fsroot2/$U2/new") == "LAB\\$U2" ]] || fail "new/ is not the user's: $(on srv stat -c %U "$SP/fsroot2/$U2/new")"
on srv sh -c "test -f $SP/fsroot1/$U1/static/d01/f0001.* && ! test -L $SP/fsroot1/$U1/static/d01/f0001.*" ||
	fail "the link to a file was not replaced by the file"
[[ $(on srv sh -c "stat -c %U $SP/fsroot1/$U1/static/d01/f0001.*") == "LAB\\$U1" ]] || fail "the file put back is not the user's"
pv "${P[@]}" status
expect_rc 0 "status after the re-run"

# 2. cleanup server with links in the trees
plant
pv "${P[@]}" cleanup server
expect_rc 0 "cleanup server over planted links"
[[ $(fingerprint) == "$before" ]] || fail "cleanup touched the targets: $(fingerprint)"

# 3. the race made certain: the writer, by hand, on a folder whose link was planted after any
#    look: a tar stream writing <share>/<user>/new/x.dat where new -> the root-owned folder
S=/srv/pv-sym-share
on srv sh -c "rm -rf $S && mkdir -p $S/sh && chmod 0755 $S $S/sh && mkdir $S/sh/$U2"
id=$(on srv getent passwd "LAB\\$U2" | cut -d: -f3,4)
on srv chown "${id%:*}:${id#*:}" "$S/sh/$U2"
as_user $U2 ln -s "$OUT_DIR" "$S/sh/$U2/new"
python3 - "$T_TMP/stream.tar" "${id%:*}" "${id#*:}" "$U2" <<'PY'
import io, sys, tarfile
path, uid, gid, user = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as t:
    data = b"written through the link?\n"
    i = tarfile.TarInfo(f"sh/{user}/new/x.dat"); i.size = len(data); i.uid = uid; i.gid = gid; i.mode = 0o644
    t.addfile(i, io.BytesIO(data))
PY
on srv perl -e "$(cat "$TOP/phases/scripts/trees.pl")" extract "$S" <"$T_TMP/stream.tar" 2>"$T_TMP/err"
rc=$?
[[ $rc -ne 0 ]] || fail "the writer followed a planted link without an error"
grep -q 'Permission denied' "$T_TMP/err" || fail "the writer's error: $(cat "$T_TMP/err")"
[[ $(fingerprint) == "$before" ]] || fail "the writer went through the link: $(fingerprint)"
# the template copy, by hand, the same way: static -> the outside folder
on srv sh -c "mkdir -p $S/.tpl/static && echo t >$S/.tpl/static/f && chmod -R a+rX $S/.tpl"
as_user $U2 sh -c "rm -f $S/sh/$U2/new; ln -s $OUT_DIR $S/sh/$U2/static"
echo "${id%:*} ${id#*:} sh/$U2" | on srv perl -e "$(cat "$TOP/phases/scripts/trees.pl")" copy "$S" .tpl 2>"$T_TMP/err"
[[ $(fingerprint) == "$before" ]] || fail "the copier went through the link: $(fingerprint)"
on srv test -f "$S/sh/$U2/static/f" || fail "the copier did not replace the user's link with the folder: $(cat "$T_TMP/err")"

pv "${P[@]}" cleanup --leave
expect_rc 0 "cleanup"
[[ $(fingerprint) == "$before" ]] || fail "the targets changed: $(fingerprint)"
finish
