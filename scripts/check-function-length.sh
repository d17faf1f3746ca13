#!/usr/bin/env bash
# No function over MAX lines (default 100) outside tests/: the long ones are split into
# their named phases. A function is counted from the line of its name to its closing
# brace, as clang-format lays C out here (the body's braces in column 0).
#
#   scripts/check-function-length.sh [SOURCE_DIR [MAX]]   (exit 0: none; 1: listed)
#
# scripts/function-length.allow lists "FILE FUNCTION" exceptions, each with its reason in
# a comment above it; an exception that no longer exceeds the limit is reported too, so
# that the list only shrinks.
set -euo pipefail

SRC=${1:-$(cd "$(dirname "$0")/.." && pwd)}
MAX=${2:-100}
ALLOW=$SRC/scripts/function-length.allow

long=$(cd "$SRC" && find vsched agent controller common cli libapprate apps bench -name '*.c' |
	sort | xargs awk -v max="$MAX" '
	FNR == 1 { sig = 0; open_ = 0 }
	/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ && !open_ { sig = FNR; name = $0 }
	/^\{/ { open_ = 1; if (!sig) sig = FNR }
	/^\}/ && open_ {
		n = FNR - sig + 1
		if (n > max) {
			fn = name; sub(/\(.*/, "", fn); sub(/.*[ *]/, "", fn)
			printf "%s %s %d\n", FILENAME, fn, n
		}
		open_ = 0; sig = 0
	}')

allowed() { # FILE FUNCTION
	[ -f "$ALLOW" ] && grep -v '^#' "$ALLOW" | grep -qx "$1 $2"
}

rc=0
while read -r file fn n; do
	[ -n "$file" ] || continue
	if allowed "$file" "$fn"; then
		echo "allowed: $file $fn: $n lines"
	else
		echo "TOO LONG: $file $fn: $n lines (at most $MAX)"
		rc=1
	fi
done <<<"$long"
if [ -f "$ALLOW" ]; then
	while read -r file fn; do
		grep -q "^$file $fn " <<<"$long" || {
			echo "STALE: $file $fn is allowed in $ALLOW but no longer too long: remove it"
			rc=1
		}
	done < <(grep -v '^#' "$ALLOW" | grep .)
fi
[ $rc = 0 ] && echo "no function over $MAX lines outside tests/ (but the allowed ones above)"
exit $rc
