#!/bin/bash
# The node's self-test (docs/vsched.md): the finest period vsched serves with < 1 % misses,
# measured on demand on an idle CPU, with every period tried.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_selftest.sh [OUT]
#
# Output (OUT, default $TMP/selftest.raw): `vschedctl status` after `vschedctl selftest
# --wait`, its JSON, and how long the test took. Bounded: ~10 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

OUT=${1:-$TMP/selftest.raw}
need_root
write_config 'park = "stop";'
start_vsched
t0=$(date +%s%N)
ctl selftest --wait >"$OUT" 2>&1 || true
echo "self-test took $((($(date +%s%N) - t0) / 1000000)) ms ($(machine_note))" >>"$OUT"
ctl status --json >>"$OUT"
cat "$OUT"
