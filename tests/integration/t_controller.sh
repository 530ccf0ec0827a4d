#!/usr/bin/env bash
# provision controller / cleanup controller: the results folder moved to a timestamped backup and
# made anew, here (ctl) and over SSH (cli1 as the controller host), checked with ls and stat.
# Works in a scratch folder (the lab's /tmp is shared by every namespace) and removes it.
. "$(dirname "$0")/lib.sh"

D=$(mktemp -d /tmp/pv-ctl-it.XXXXXX)
trap 'rm -rf "$D" "$T_TMP"' EXIT
STAMP='[0-9]{8}-[0-9]{6}'
entries() { ls -A "$1" | wc -l; }

for where in local cli1; do
	R=$D/$where/results
	mkdir -p "$D/$where"
	args=(-p "$PLAYBOOK" --set "controller.results=$R")
	[[ $where == cli1 ]] && args+=(--set controller.host.name=cli1 --set controller.host.address=198.18.0.31)

	# 1. a missing folder is made; cleanup never makes one
	pv "${args[@]}" cleanup controller
	expect_rc 0 "$where: cleanup controller of a missing folder"
	expect_out "nothing to do: $where:$R does not exist"
	[[ -e $R ]] && fail "$where: cleanup controller created the results folder"
	pv "${args[@]}" controller
	expect_rc 0 "$where: controller on a missing folder"
	expect_out "^controller: created $where:$R, empty"
	[[ -d $R && $(entries "$R") -eq 0 ]] || fail "$where: no empty results folder made"

	# 2. results inside: moved to <results>.<stamp>, made anew with the old mode, nothing lost
	mkdir "$R/run1" && echo data >"$R/run1/result.xml" && touch "$R/summary.txt"
	chmod 0750 "$R"
	pv "${args[@]}" --dry-run controller
	expect_rc 0 "$where: dry run"
	expect_out "would move $where:$R \(2 entries\)"
	[[ $(entries "$R") -eq 2 ]] || fail "$where: --dry-run moved something"
	pv "${args[@]}" controller
	expect_rc 0 "$where: controller with results"
	expect_out "^controller: moved $where:$R \(2 entries\) to $R\.$STAMP and made it anew, empty"
	b=$(ls -d "$R".2* 2>/dev/null)
	[[ $(wc -w <<<"$b") -eq 1 ]] || fail "$where: expected one backup, found: $b"
	[[ -f $b/run1/result.xml && $(cat "$b/run1/result.xml") == data && -f $b/summary.txt ]] ||
		fail "$where: the backup does not hold the results"
	[[ -d $R && $(entries "$R") -eq 0 ]] || fail "$where: the results folder was not made anew, empty"
	[[ $(stat -c %a "$R") == 750 ]] || fail "$where: new folder mode $(stat -c %a "$R"), expected 750"

	# 3. an empty folder: nothing to do, nothing moved
	pv "${args[@]}" controller
	expect_rc 0 "$where: controller on an empty folder"
	expect_out "nothing to do: $where:$R is empty already"
	[[ $(ls -d "$R".2* | wc -l) -eq 1 ]] || fail "$where: an empty folder was backed up"

	# 4. cleanup controller --backup DIR: into DIR, left empty; the JSON names the backup
	touch "$R/second"
	mkdir "$D/$where/archive"
	pv "${args[@]}" --json cleanup controller --backup "$D/$where/archive"
	expect_rc 0 "$where: cleanup controller --backup"
	python3 -c 'import json,sys,re; d=json.load(sys.stdin); assert d["ok"] and d["state"]=="moved" and d["entries"]==1 and re.fullmatch(sys.argv[1], d["backup"]), d' \
		"$D/$where/archive/results\.[0-9]{8}-[0-9]{6}" <<<"$OUT" || fail "$where: JSON of cleanup controller: $OUT"
	[[ -f $(ls -d "$D/$where/archive/results".2*)/second ]] || fail "$where: the backup in --backup DIR lacks the file"
	[[ -d $R && $(entries "$R") -eq 0 ]] || fail "$where: cleanup did not leave the folder empty"

	# 5. refused before anything moves: missing --backup, --backup inside, another file system,
	#    a file where the folder should be
	touch "$R/third"
	pv "${args[@]}" controller --backup "$D/nosuch"
	expect_rc 3 "$where: --backup that does not exist"; expect_err "not a folder.*create it first"
	mkdir -p "$R/inner"
	pv "${args[@]}" controller --backup "$R/inner"
	expect_rc 3 "$where: --backup inside the results"; expect_err "lies inside the results folder"
	rmdir "$R/inner"
	pv "${args[@]}" controller --backup /dev/shm
	expect_rc 3 "$where: --backup on another file system"; expect_err "another file system"
	[[ -f $R/third && $(entries "$R") -eq 1 ]] || fail "$where: a refused reset moved the results"
	rm -rf "$R" && touch "$R"
	pv "${args[@]}" controller
	expect_rc 11 "$where: a file instead of the folder"; expect_err "exists and is not a folder"
	[[ -f $R ]] || fail "$where: the file in the way was touched"
done

# 6. an unreachable controller host: its own status, and it is named
"$LAB_SH" sshd cli2 stop >/dev/null
pv -p "$PLAYBOOK" --set "controller.results=$D/x" --set controller.host.name=cli2 \
	--set controller.host.address=198.18.0.32 controller
"$LAB_SH" sshd cli2 start >/dev/null
expect_rc 6 "controller host down"; expect_err "cannot connect to 'cli2'"
[[ -e $D/x ]] && fail "a folder was made though the controller host was down"

finish
