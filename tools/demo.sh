#!/usr/bin/env bash
# The first thing to run: installs what is missing, builds, writes a small demo
# lake into build/demo-lake (once) and shows what pqtool makes of it.
#
#   tools/demo.sh            (from any directory)
#
# The lake: build/demo-lake/events/dt=YYYY-MM-DD/part-0.parquet (3 days) and
# build/demo-lake/users/part-{0,1}.parquet; see tools/gen_sample.mjs.
# Remove build/demo-lake to have it written again.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

BUILD=build
LAKE=$BUILD/demo-lake
PQTOOL=$BUILD/pqtool

if [ -t 1 ]; then B=$'\033[1m' N=$'\033[0m'; else B='' N=''; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }
# Prints a command, runs it; a failure is reported, not fatal (the demo goes on).
show() {
    printf '$ %s\n' "$*"
    local rc=0
    "$@" || rc=$?
    [ "$rc" -eq 0 ] || printf '(exit status %d)\n' "$rc"
}
# `show` for `CMD | head -n N` (a pqtool stopped by head's SIGPIPE is fine).
show_head() {
    local n=$1; shift
    printf '$ %s | head -n %d\n' "$*" "$n"
    local rc
    set +o pipefail
    "$@" | head -n "$n"
    rc=${PIPESTATUS[0]}
    set -o pipefail
    [ "$rc" -eq 0 ] || [ "$rc" -eq 141 ] || printf '(exit status %d)\n' "$rc"
}

step "dependencies (tools/setup-deps.sh)"
tools/setup-deps.sh

step "build"
cmake -S . -B "$BUILD" >/dev/null
cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)"

step "demo lake: $LAKE"
if [ -d "$LAKE" ]; then
    find "$LAKE" -name '*.parquet' -printf '%10s bytes  %p\n' | sort -k3
else
    node tools/gen_sample.mjs "$LAKE"
fi

# ---- what the demo shows (the FUSE mount will take over here) ----
EVENTS=$LAKE/events/dt=2024-01-01/part-0.parquet

step "pqtool meta: the footer of one file"
show "$PQTOOL" meta "$EVENTS"

step "pqtool cat: the first rows as CSV"
show_head 10 "$PQTOOL" cat "$EVENTS"

step "pqtool cat --select on the users table"
show_head 6 "$PQTOOL" cat "$LAKE/users/part-0.parquet" --select user_id,name,plan
