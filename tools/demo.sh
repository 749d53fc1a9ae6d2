#!/usr/bin/env bash
# The first thing to run: installs what is missing, builds, writes a small demo
# lake into build/demo-lake (once), mounts it with pqfs and walks through a few
# views, then unmounts.
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

# ---- the mount ----
MNT=${PQFS_DEMO_MOUNT:-$ROOT/$BUILD/demo-mnt}
CACHE=$ROOT/$BUILD/demo-cache
mkdir -p "$MNT"
if mountpoint -q "$MNT"; then fusermount3 -u "$MNT" || fusermount3 -uz "$MNT"; fi
PQFS_PID=
cleanup() {
    if mountpoint -q "$MNT" 2>/dev/null; then fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" || true; fi
    if [ -n "$PQFS_PID" ]; then kill "$PQFS_PID" 2>/dev/null || true; wait "$PQFS_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rm -rf "$LAKE/demo_writes"   # the table the demo writes (below), from an interrupted run
step "mount: pqfs $LAKE $MNT"
"$BUILD/pqfs" "$LAKE" "$MNT" -f -o "cache_dir=$CACHE,metadata_ttl=5s" 2>"$BUILD/demo-pqfs.log" &
PQFS_PID=$!
for _ in $(seq 50); do mountpoint -q "$MNT" && break; sleep 0.1; done
mountpoint -q "$MNT" || { echo "pqfs did not mount; its log:"; cat "$BUILD/demo-pqfs.log"; exit 1; }

cd "$MNT"
step "the lake: one directory per table"
show ls
step "a table: its partition directories and the view files"
show ls events
show cat events/schema.txt
step "the rows as CSV, streamed"
show_head 4 cat events/data.csv
step "a partition directory narrows the rows"
show_head 3 cat events/dt=2024-01-02/data.csv
show wc -l events/dt=2024-01-02/data.csv
step "where= filters, select= projects, limit= stops early (components in any order)"
show cat "events/where=amount > 1000 AND country IN ('DE','FR')/select=id,country,amount,dt/limit=5/data.csv"
step "what was pruned to answer it"
show cat "events/where=id BETWEEN 100000 AND 100100/select=id,amount/plan.txt"
show cat "events/where=id BETWEEN 100000 AND 100100/select=id,amount/limit=3/data.csv"
step "writing: mkdir makes a table, a CSV copied in becomes a Parquet part file"
printf 'id,city,visited\n1,Lisbon,2024-05-01\n2,"Oslo, NO",\n' >"$ROOT/$BUILD/demo-visits.csv"
show mkdir demo_writes
show cp "$ROOT/$BUILD/demo-visits.csv" demo_writes/visits.csv
show cat demo_writes/data.csv
show cat demo_writes/schema.txt
show find "$ROOT/$LAKE/demo_writes" -name '*.parquet'
rm -rf "$ROOT/$LAKE/demo_writes"
step "counters"
show_head 12 cat .pqfs/stats
cd "$ROOT"

if [ -t 0 ] && [ -t 1 ]; then
    printf '\nThe lake stays mounted at %s: try it in another terminal.\nPress Enter to unmount. ' "$MNT"
    read -r _ || true
fi
