#!/usr/bin/env bash
# Every relative link of the tree's Markdown files resolves to a file or directory inside
# the tree (a clone has no file outside it), and no text names the team's files outside it.
#
#   scripts/check-doc-links.sh [SOURCE_DIR]   (exit 0: all resolve; 1: the broken ones, listed)
set -euo pipefail
SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cd "$SRC"
rc=0
while IFS= read -r md; do
	dir=$(dirname "$md")
	# [text](target) with a relative target; #anchors and URLs are not files
	while IFS= read -r target; do
		target=${target%%#*}
		[ -n "$target" ] || continue
		case $target in *://* | mailto:*) continue ;; esac
		path=$(realpath -m "$dir/$target")
		if [[ $path != "$SRC"/* ]] || [ ! -e "$path" ]; then
			echo "BROKEN: $md: ($target) is not a file of the tree"
			rc=1
		fi
	done < <(grep -oE '\]\([^) ]+\)' "$md" | sed 's/^](//; s/)$//')
done < <(git ls-files '*.md')
if git grep -nE '\.\./shared|/work/shared' -- ':!scripts/check-doc-links.sh'; then
	echo "BROKEN: the lines above name files outside the tree"
	rc=1
fi
[ $rc = 0 ] && echo "every Markdown link resolves inside the tree"
exit $rc
