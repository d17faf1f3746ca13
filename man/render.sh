#!/usr/bin/env bash
# Renders a man page template into a page (run by man/CMakeLists.txt at build time).
#
#   render.sh TEMPLATE OUT VERSION SYSCONFDIR DOCDIR [PROGRAM ARG]
#
# @PROJECT_VERSION@, @SYSCONFDIR@ and @DOCDIR@ are replaced by the values given; with
# PROGRAM, the line @KEYS@ becomes the key list of `PROGRAM --config-keys` (one entry per
# key: name, type, default, range, description) and the line @USAGE@ the text `PROGRAM
# ARG` prints (its usage), so that those parts of a page are the program's own tables and
# cannot drift from them.
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: render.sh TEMPLATE OUT VERSION SYSCONFDIR DOCDIR [PROGRAM ARG]" >&2; exit 2; }
tmpl=$1 out=$2 version=$3 sysconfdir=$4 docdir=$5
prog=${6:-} arg=${7:-}

# roff-safe text: backslashes escaped, no line starting with a control character.
roff() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

keys() {
	"$prog" "$arg" | awk -F'\t' '
		NF != 5 { printf "render.sh: bad key line: %s\n", $0 > "/dev/stderr"; exit 1 }
		{
			for (i = 1; i <= 5; i++) gsub(/\\/, "\\e", $i)
			printf ".TP\n\\fB%s\\fR (%s)\n%s\n.br\nDefault: %s", $1, $2, $5, $3
			if ($4 != "") printf "; range: %s", $4
			printf ".\n"
		}'
}

usage() {
	echo ".nf"
	"$prog" "$arg" 2>&1 | roff
	echo ".fi"
}

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
while IFS= read -r line || [ -n "$line" ]; do
	case $line in
	@KEYS@) keys ;;
	@USAGE@) usage ;;
	*)
		line=${line//@PROJECT_VERSION@/$version}
		line=${line//@SYSCONFDIR@/$sysconfdir}
		printf '%s\n' "${line//@DOCDIR@/$docdir}"
		;;
	esac
done <"$tmpl" >"$tmp"
if grep -q '@KEYS@\|@USAGE@' "$tmp"; then echo "render.sh: $tmpl: a placeholder is left" >&2; exit 1; fi
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
