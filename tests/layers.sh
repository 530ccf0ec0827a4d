#!/usr/bin/env bash
# tests/layers.sh: every #include "module/header.h" in the tree's C files against the layers
# table of docs/architecture.md (the one place the allowed arrows are written). Prints each
# include that crosses a layer as FILE:LINE: and exits 1; prints a summary and exits 0 when
# there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
table=docs/architecture.md

declare -A allow
while read -r mod rest; do
	allow[${mod%:}]=" $rest "
done < <(awk '/^```layers$/ {on = 1; next} /^```$/ {on = 0} on && NF' "$table")
[[ ${#allow[@]} -gt 0 ]] || { echo "layers: no table in $table" >&2; exit 2; }

bad=0 checked=0
while IFS= read -r f; do
	mod=${f%%/*}
	if [[ -z ${allow[$mod]+x} ]]; then
		echo "$f: module '$mod' is not in the layers table of $table" >&2
		bad=$((bad + 1))
		continue
	fi
	while IFS=: read -r line inc; do
		checked=$((checked + 1))
		to=${inc%%/*}
		[[ $to == "$mod" ]] && continue
		[[ ${allow[$mod]} == *" $to "* || ${allow[$mod]} == *" $inc "* ]] && continue
		echo "$f:$line: includes \"$inc\": '$mod' may include only:${allow[$mod]}(docs/architecture.md)" >&2
		bad=$((bad + 1))
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/[^"]*"' "$f" |
		sed -E 's/^([0-9]+):.*"([^"]+)".*/\1:\2/')
done < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -Ev '^(tests|bench|build)/')

if [[ $bad -gt 0 ]]; then
	echo "layers: $bad include(s) cross the layers" >&2
	exit 1
fi
echo "layers: $checked includes across ${#allow[@]} modules follow docs/architecture.md"
