#!/usr/bin/env bash
# The JSON contract (docs/json.md): with --json every command writes exactly one JSON document on
# stdout and nothing else, on success, with --dry-run and on failure, each parsed here by
# Python's json module; and a stdout that cannot be written (a full disk, a closed pipe) gives a
# non-zero exit. Lab 'pvjson' (users pj-cli1-u1...), left as found.
. "$(dirname "$0")/lib.sh"

D=$(mktemp -d /tmp/pv-json-it.XXXXXX)
trap 'rm -rf "$D" "$T_TMP"' EXIT
P=(-p "$PLAYBOOK" --set lab=pvjson --set "users.name_template=pj-{client}-u{n}"
	--set users.per_client=2 --set "controller.results=$D/results")
BAD=(--admin-password-file /nonexistent/admin.pass)

cat >"$D/envelope.py" <<'PY'
import json, sys
rc, dry = int(sys.argv[1]), sys.argv[2] == "1"
text = sys.stdin.read()
d = json.loads(text)  # the whole of stdout: one document, nothing else
assert isinstance(d, dict), "not an object"
assert text.count("\n") == 1 and text.endswith("\n"), "not one line"
assert d["version"] == 1, d
assert d["exit"] == rc and d["ok"] == (rc == 0), d
assert isinstance(d["outcome"], str) and d["outcome"], d
assert (d["message"] is None) == (rc == 0), d
if rc:
    assert isinstance(d["message"], str) and d["message"], d
if "dry_run" in d:
    assert d["dry_run"] == dry, d
PY
# jcheck WHAT RC [DRY]: exit status RC, stdout exactly one JSON object with the envelope
jcheck() {
	local what=$1 rc=$2 dry=${3:-0}
	[[ $RC -eq $rc ]] || { fail "$what: exit status $RC, expected $rc"; show; return; }
	python3 "$D/envelope.py" "$rc" "$dry" <<<"$OUT" 2>"$T_TMP/py" ||
		{ fail "$what: $(tail -n 1 "$T_TMP/py")"; show; }
}

pv "${P[@]}" cleanup --leave >/dev/null

# help, version, usage errors, commands not built: JSON too
pv --json --version; jcheck "--version" 0
pv --json help dc; jcheck "help dc" 0
python3 -c 'import json,sys; assert "usage: provision" in json.load(sys.stdin)["text"]' <<<"$OUT" || fail "help text missing from JSON"
pv --json frobnicate; jcheck "unknown command" 2
pv --json dc --users; jcheck "option without a value" 2
pv "${P[@]}" --json --dry-run run --min-users 2 --max-users 4 --step 2; jcheck "run --dry-run" 0 1
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["planned"] == 2 and len(d["plan"]) == 5 and d["steps"] == []' <<<"$OUT" || fail "run --dry-run JSON: $OUT"
pv "${P[@]}" --json run --min-users 9 --max-users 4; jcheck "run, impossible ramp" 3
pv "${P[@]}" --json wait; jcheck "wait with no probe" 3
pv "${P[@]}" --json wait --probe inflight --settle 0; jcheck "wait --probe inflight" 0
pv "${P[@]}" --json --dry-run wait --probe writeback; jcheck "wait --dry-run" 0 1
pv "${P[@]}" --json wait --probe-command 'echo 5' --timeout 1; jcheck "wait that times out" 14
pv "${P[@]}" --json wait --probe-command 'echo x'; jcheck "wait with a probe printing garbage" 8
pv -p "$T_TMP/missing.yaml" --json dc; jcheck "missing playbook" 9
echo 'domain: [' >"$D/bad.yaml"
pv -p "$D/bad.yaml" --json dc; jcheck "malformed playbook" 3
pv -p "$D/bad.yaml" --json check; jcheck "check of a malformed playbook" 3
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["checks"][0]["check"]=="playbook" and d["checks"][0]["status"]=="fail"' <<<"$OUT" || fail "check JSON of a malformed playbook: $OUT"

# every command: normal, --dry-run, failing
pv "${P[@]}" --json check; jcheck "check" 0
python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["checks"]) > 5 and all(c["status"] in ("ok","warn") for c in d["checks"])' <<<"$OUT" || fail "check JSON: $OUT"
pv "${P[@]}" --json --dry-run check; jcheck "check --dry-run" 0 1
pv "${P[@]}" --json check "${BAD[@]}"; jcheck "check, admin password unreadable" 9

for phase in dc join server client controller; do
	pv "${P[@]}" --json --dry-run "$phase"; jcheck "$phase --dry-run" 0 1
	pv "${P[@]}" --json "$phase"; jcheck "$phase" 0
done
pv "${P[@]}" --json dc --users 0; jcheck "dc --users 0" 2
pv "${P[@]}" --json dc "${BAD[@]}"; jcheck "dc, admin password unreadable" 9
pv "${P[@]}" --json join "${BAD[@]}"; jcheck "join, admin password unreadable" 9
pv "${P[@]}" --json server --via ftp; jcheck "server --via ftp" 2
pv "${P[@]}" --json server --users 3; jcheck "server, users missing from the domain" 1
python3 -c 'import json,sys; d=json.load(sys.stdin); assert "not in the domain" in d["message"] and "trees" in d' <<<"$OUT" || fail "server failure JSON: $OUT"
pv "${P[@]}" --json client --clients nosuch; jcheck "client --clients nosuch" 3
pv "${P[@]}" --json controller --backup "$D/nosuch"; jcheck "controller --backup missing" 3

pv "${P[@]}" --json status; jcheck "status" 0
pv "${P[@]}" --json --dry-run status; jcheck "status --dry-run" 0 1
pv "${P[@]}" --json status "${BAD[@]}"; jcheck "status, admin password unreadable" 9
pv "${P[@]}" --json prepare; jcheck "prepare" 0
pv "${P[@]}" --json --dry-run prepare; jcheck "prepare --dry-run" 0 1
pv "${P[@]}" --json prepare "${BAD[@]}"; jcheck "prepare, admin password unreadable" 9
python3 -c 'import json,sys; d=json.load(sys.stdin); s={p["phase"]: p["state"] for p in d["phases"]}; assert s["dc"]=="failed" and s["server"]=="skipped" and s["client"]=="already", s' <<<"$OUT" ||
	fail "prepare failure JSON: $OUT"

# copy: a dry run, refusals, a failure on the client, a copy
FS=$TOP/playbooks/filesets/small.yaml
pv "${P[@]}" --json --dry-run copy --fileset "$FS"; jcheck "copy --dry-run" 0 1
python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["plan"]) == 5 and "pj-cli1-u1" in d["plan"][0], d' <<<"$OUT" || fail "copy --dry-run JSON: $OUT"
pv "${P[@]}" --json copy; jcheck "copy without a source" 2
pv "${P[@]}" --json copy --from relative/folder; jcheck "copy --from a relative folder" 2
pv "${P[@]}" --json copy --fileset "$FS" --mt 0; jcheck "copy --mt 0" 2
pv "${P[@]}" --json copy --fileset "$D/nosuch.yaml"; jcheck "copy --fileset missing" 3
pv "${P[@]}" --json copy --fileset "$FS" --client nosuch; jcheck "copy --client nosuch" 3
pv "${P[@]}" --json copy --from /nonexistent/folder; jcheck "copy from a folder the client lacks" 3
pv "${P[@]}" --json copy --fileset "$FS" --id pj-copy; jcheck "copy" 0
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["files_copied"] == 70 and d["done"] and d["bound"] and d["report"].endswith("report.html"), d' <<<"$OUT" || fail "copy JSON: $OUT"

for phase in controller client server dc; do
	pv "${P[@]}" --json --dry-run cleanup "$phase"; jcheck "cleanup $phase --dry-run" 0 1
done
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["plan"] and d["found"]==4, d' <<<"$OUT" || fail "cleanup dc --dry-run JSON: $OUT"
pv "${P[@]}" --json --dry-run cleanup join --leave; jcheck "cleanup join --dry-run" 0 1
pv "${P[@]}" --json --dry-run cleanup; jcheck "cleanup --dry-run" 0 1
pv "${P[@]}" --json cleanup dc --clients cli1; jcheck "cleanup dc --clients" 2
pv "${P[@]}" --json cleanup "${BAD[@]}"; jcheck "cleanup, admin password unreadable" 9
for phase in controller client server join dc; do
	args=(); [[ $phase == join ]] && args=(--leave)
	pv "${P[@]}" --json cleanup "$phase" "${args[@]}"; jcheck "cleanup $phase" 0
done
pv "${P[@]}" --json cleanup; jcheck "cleanup (nothing left)" 0

# stdout that cannot be written: a full disk, a closed pipe
on ctl sh -c "${PVT[*]} '$PV' --json --version >/dev/full 2>'$T_TMP/err'"
rc=$?
[[ $rc -eq 9 ]] || fail "--version to /dev/full: exit $rc, expected 9"
grep -q 'cannot write the results to stdout' "$T_TMP/err" || fail "no message for a full stdout: $(cat "$T_TMP/err")"
on ctl bash -c "${PVT[*]} '$PV' help cleanup 2>'$T_TMP/err' | (exec 0<&-; sleep 0.5); echo \${PIPESTATUS[0]}" >"$T_TMP/rc"
[[ $(cat "$T_TMP/rc") -eq 9 ]] || fail "help into a closed pipe: exit $(cat "$T_TMP/rc"), expected 9"

finish
