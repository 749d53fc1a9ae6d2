#!/usr/bin/env bash
# Readers of views never see ESTALE (or any failure) while writes change the
# table under them (issue 19): a data.parquet inode is one version of a
# view's bytes, and a write between the lookup that made the inode and the
# open used to fail the open with ESTALE; the kernel retries such an open
# once, with a fresh lookup, so a second write in that window reached the
# reader as "Stale file handle".
#   For SECONDS (20) s: 8 readers of data.parquet (the table, two partitions
#   the writers write into, a where= view) and 4 of data.csv, against 2
#   writers copying 5-row CSVs into p=0 and p=1.  Every read must succeed;
#   every data.parquet read must be a whole Parquet file (pqtool reads it)
#   with at least the seeded rows, every data.csv at least the seeded rows.
#   Before that: data.parquet read again right after a write has its row.
#   tests/mount/stale.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: stale.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init

SECONDS_RUN=${PQFS_STALE_SECONDS:-20}
LAKE=$WORK/lake MNT=$WORK/mnt
mkdir -p "$LAKE/ev" "$WORK/state"
# 4 partitions of 5 files of 10 rows: ids 0..199.
for f in $(seq 0 19); do
    p=$((f % 4))
    mkdir -p "$LAKE/ev/p=$p"
    { echo "id,v"; for r in $(seq 0 9); do echo "$((f * 10 + r)),$r.5"; done; } >"$WORK/seed.csv"
    "$PQTOOL" write "$WORK/seed.csv" "$LAKE/ev/p=$p/part-$f.parquet"
done

start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,metadata_ttl=1s,log_level=warn"
DAEMON=$PQFS_PID

# A new open after a write's close() sees the rows (SPEC 6), although the
# name was looked up (and its inode cached by the kernel) just before.
"$PQTOOL" cat "$MNT/ev/p=2/data.parquet" >/dev/null
printf 'id,v\n999999,0.5\n' >"$WORK/one.csv"
cp "$WORK/one.csv" "$MNT/ev/p=2/"
cp "$MNT/ev/p=2/data.parquet" "$WORK/after.parquet"
check "data.parquet opened right after a write has its row" \
    '"$PQTOOL" cat "$WORK/after.parquet" --where "id = 999999" | grep -qx "999999,0.5,2"'

END=$(($(date +%s) + SECONDS_RUN))

# reader N VIEW MIN: reads VIEW in a loop; counts in state/rN.{ok,fail}.
reader() {
    local n=$1 view=$2 min=$3 ok=0 fail=0 rows out=$WORK/state/r$1.out
    while [ "$(date +%s)" -lt "$END" ]; do
        if ! cat "$MNT/$view" >"$out" 2>>"$WORK/state/r$n.err"; then
            fail=$((fail + 1)); echo "reader $n: $view: read failed" >>"$WORK/state/r$n.err"
        else
            case $view in
                *.parquet) rows=$("$PQTOOL" cat "$out" 2>>"$WORK/state/r$n.err" | tail -n +2 | wc -l) || rows=-1 ;;
                *) rows=$(tail -n +2 "$out" | wc -l) ;;
            esac
            if [ "$rows" -ge "$min" ]; then ok=$((ok + 1)); else
                fail=$((fail + 1)); echo "reader $n: $view: $rows rows, want at least $min" >>"$WORK/state/r$n.err"; fi
        fi
        echo "$ok $fail" >"$WORK/state/r$n.count"
    done
}
writer() {
    local n=$1 seq=0 csv=$WORK/state/w$1.csv
    while [ "$(date +%s)" -lt "$END" ]; do
        seq=$((seq + 1))
        { echo "id,v"; for r in 0 1 2 3 4; do echo "$((1000000 + n * 100000 + seq * 5 + r)),0.5"; done; } >"$csv"
        if cp "$csv" "$MNT/ev/p=$((seq % 2))/w$n-$seq.csv" 2>>"$WORK/state/w$n.err"; then
            echo "$seq" >"$WORK/state/w$n.count"
        else
            echo "writer $n: cp failed" >>"$WORK/state/w$n.err"
        fi
    done
}

pids=()
views=("ev/data.parquet" "ev/p=0/data.parquet" "ev/p=1/data.parquet" "ev/where=v > 1/data.parquet")
mins=(200 50 50 160)
for i in $(seq 0 7); do reader "$i" "${views[$((i % 4))]}" "${mins[$((i % 4))]}" & pids+=($!); done
csv_views=("ev/data.csv" "ev/p=0/data.csv" "ev/select=id/data.csv" "ev/p=1/where=v > 1/data.csv")
csv_mins=(200 50 200 40)
for i in 0 1 2 3; do reader "$((8 + i))" "${csv_views[$i]}" "${csv_mins[$i]}" & pids+=($!); done
for i in 0 1; do writer "$i" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done

read -r ok failed <<<"$(cat "$WORK"/state/r*.count | awk '{ a += $1; b += $2 } END { print a + 0, b + 0 }')"
writes=$(cat "$WORK"/state/w*.count 2>/dev/null | awk '{ a += $1 } END { print a + 0 }')
if [ "$failed" -eq 0 ] && [ "$ok" -gt 0 ]; then
    pass "$ok reads under $writes writes, none failed"
else
    fail "$failed of $((ok + failed)) reads failed under $writes writes; the first:"
    cat "$WORK"/state/r*.err 2>/dev/null | grep -v '^$' | sort | uniq -c | sort -rn | head -5
fi
[ "$writes" -gt 10 ] && pass "$writes writes landed" || fail "only $writes writes landed"
[ ! -s "$WORK/state/w0.err" ] && [ ! -s "$WORK/state/w1.err" ] && pass "no write failed" ||
    fail "writes failed: $(cat "$WORK"/state/w*.err | head -3)"

stop_pqfs "$MNT" "$DAEMON"
summary "mount stale"
