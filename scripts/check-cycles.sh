#!/usr/bin/env bash
# No call cycle between the files of a program: for each program below, the file graph
# "a.c calls a function defined in b.c" is built from the object files' symbols (nm:
# what each object defines, what it leaves undefined) and must have no cycle. A cycle
# means one of the files owns something it should not (docs/architecture.md).
#
#   scripts/check-cycles.sh BUILD_DIR [PROGRAM...]   (exit 0: no cycle; 1: cycles, listed)
#
# Programs: the controller's daemon (vsched_ctld + main.c) and decision library
# (vsched_control), the agent (agent_core + main.c), vsched (vsched_core + main.c),
# vschedctl, and common/. Static functions and inline ones are the file's own business:
# only external symbols make edges.
set -euo pipefail

BUILD=${1:?usage: check-cycles.sh BUILD_DIR [PROGRAM...]}
shift
ONLY=("$@")
command -v nm >/dev/null || { echo "check-cycles: nm not found (binutils)" >&2; exit 2; }

# Object directories of each program (CMake's layout: DIR/CMakeFiles/TARGET.dir/*.c.o).
PROGRAMS=(
	"controller: controller/CMakeFiles/vsched_ctld.dir controller/CMakeFiles/vsched-controller.dir"
	"controller-logic: controller/CMakeFiles/vsched_control.dir"
	"agent: agent/CMakeFiles/agent_core.dir agent/CMakeFiles/vsched-agent.dir"
	"vsched: vsched/CMakeFiles/vsched_core.dir vsched/CMakeFiles/vsched.dir"
	"vschedctl: cli/CMakeFiles/vschedctl.dir"
	"common: common/CMakeFiles/vsched_common.dir"
)

# "FILE SYMBOL" lines: what the objects define (kind d) or need (kind u); one nm call.
symbols() { # KIND DIR...
	local kind=$1 dir objs=()
	shift
	for dir in "$@"; do
		objs+=("$BUILD/$dir"/*.o)
	done
	if [ "$kind" = d ]; then
		nm -A -g --defined-only "${objs[@]}"
	else
		nm -A -u "${objs[@]}"
	fi | awk '{ f = $1; sub(/:.*/, "", f); sub(/.*\//, "", f); sub(/\.o$/, "", f); print f, $NF }'
}

rc=0
for p in "${PROGRAMS[@]}"; do
	name=${p%%:*}
	if [ ${#ONLY[@]} -gt 0 ] && ! printf '%s\n' "${ONLY[@]}" | grep -qx "$name"; then
		continue
	fi
	read -r -a dirs <<<"${p#*:}"
	found=0
	for dir in "${dirs[@]}"; do
		compgen -G "$BUILD/$dir/*.o" >/dev/null && found=1
	done
	if [ "$found" = 0 ]; then
		echo "check-cycles: $name: no object files under $BUILD (build it first)" >&2
		exit 2
	fi
	defined=$(symbols d "${dirs[@]}" | sort -k2,2)
	# edges "caller callee" between distinct files, each edge once
	edges=$(join -1 2 -2 2 <(symbols u "${dirs[@]}" | sort -k2,2) <(printf '%s\n' "$defined") |
		awk '$2 != $3 { print $2, $3 }' | sort -u)
	nfiles=$(printf '%s\n' "$defined" | awk 'NF { print $1 }' | sort -u | wc -l)
	if out=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null) && [ -z "$out" ]; then
		echo "$name: $nfiles files, $(printf '%s\n' "$edges" | grep -c . || true) call edges, no cycle"
	else
		rc=1
		echo "$name: CYCLE between files:"
		printf '%s\n' "$out" | sed -n 's/^tsort: //p' | sed 's/^/    /'
		echo "  edges (caller -> callee):"
		printf '%s\n' "$edges" | sed 's/^/    /'
	fi
done
exit $rc
