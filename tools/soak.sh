#!/usr/bin/env bash
# Soak: one mount under 16 readers and 4 writers for a while (not a CTest).
#
#   tools/soak.sh [--seconds N] [--readers N] [--writers N] [--files N]
#                 [--build-dir DIR] [--keep]
#
# Makes a lake of one table, `ev`, of --files (3,000) small part files under
# 30 partition directories p=0..29 (ids 0..files*10-1, 10 rows a file), mounts
# it (metadata_ttl=1s, so listings come and go while writes land) and runs for
# --seconds (600):
#   readers  each loops over views picked at random: where= filters on the
#            seeded ids (a different view per reader and round, so scans are
#            not shared), a partition's data.parquet, the table's data.csv.
#            Every read must succeed; a filter on the seeded ids must return
#            the count that range holds (writers add ids >= 10^9 only).
#   writers  each copies a 5-row CSV of fresh ids (>= 10^9) into a partition
#            in a loop, and records the ids of every cp that exited 0.
# Every 30 s it prints the daemon's RSS and peak RSS, its open descriptors,
# and the reads, writes and failures so far, and where the memory is: RssAnon
# and RssFile, the heap in use and held free, the footer and listing caches
# (/.pqfs/stats).  At the end every acknowledged
# id must be in the lake exactly once (read by pqtool from the source, not
# through the mount), and no read may have failed.  Exits 0 when all holds.
# Unmounts and ends every process it started, whatever happens; --keep keeps
# the work directory (logs, the lake).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=600 readers=16 writers=4 files=3000 build=$ROOT/build keep=0
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) seconds=$2; shift ;;
        --readers) readers=$2; shift ;;
        --writers) writers=$2; shift ;;
        --files) files=$2; shift ;;
        --build-dir) build=$(cd "$2" && pwd); shift ;;
        --keep) keep=1 ;;
        -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "soak.sh: unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
PQFS=$build/pqfs PQTOOL=$build/pqtool
[ -x "$PQFS" ] && [ -x "$PQTOOL" ] || { echo "soak.sh: build pqfs and pqtool first (cmake --build $build)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pqfs-soak.XXXXXX")
LAKE=$WORK/lake MNT=$WORK/mnt
mkdir -p "$LAKE/ev" "$MNT" "$WORK/cache" "$WORK/state"
PIDS=()
cleanup() {
    set +e
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done   # not the daemon's: it ends at unmount
    if grep -qF " $MNT " /proc/self/mounts; then fusermount3 -uz "$MNT" 2>/dev/null || umount -l "$MNT"; fi
    if [ -n "${DAEMON:-}" ]; then
        for _ in $(seq 50); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$DAEMON" 2>/dev/null
    fi
    if [ "$keep" = 1 ]; then echo "soak: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ the lake
echo "soak: writing $files part files into $LAKE/ev" >&2
rows_per_file=10
for ((f = 0; f < files; f++)); do
    p=$((f % 30))
    [ -d "$LAKE/ev/p=$p" ] || mkdir "$LAKE/ev/p=$p"
    {
        echo "id,v,s"
        for ((r = 0; r < rows_per_file; r++)); do
            id=$((f * rows_per_file + r))
            echo "$id,$((id % 1000)).5,s$((id % 13))"
        done
    } >"$WORK/seed.csv"
    "$PQTOOL" write "$WORK/seed.csv" "$LAKE/ev/p=$p/part-$(printf %06d "$f").parquet"
done
seeded=$((files * rows_per_file))

"$PQFS" "$LAKE" "$MNT" -f -o "cache_dir=$WORK/cache,metadata_ttl=1s,log_level=warn" 2>"$WORK/pqfs.log" &
DAEMON=$!
for _ in $(seq 100); do [ -e "$MNT/ev" ] && break; sleep 0.1; done
[ -e "$MNT/ev" ] || { echo "soak: the mount did not come up: $(tail -3 "$WORK/pqfs.log")" >&2; exit 1; }

# ------------------------------------------------------------------ load
END=$(($(date +%s) + seconds))

# reader N: counts reads and failures in state/rN.{ok,fail}; failures logged.
reader() {
    local n=$1 ok=0 fail=0 round=0 m k want got view
    while [ "$(date +%s)" -lt "$END" ]; do
        round=$((round + 1))
        m=$((97 + (n * 31 + round) % 400)) k=$(((n + round) % 97))
        case $((RANDOM % 4)) in
            0|1)
                # A filter on the seeded ids: id % m = k over [0, seeded).
                view="ev/where=id < $seeded AND id % $m = $k/select=id/data.csv"
                want=$(( (seeded - k + m - 1) / m ))
                if got=$(cat "$MNT/$view" 2>>"$WORK/state/r$n.err" | tail -n +2 | wc -l) && [ "$got" = "$want" ]; then
                    ok=$((ok + 1))
                else
                    fail=$((fail + 1)); echo "reader $n: $view: $got rows, want $want" >>"$WORK/state/r$n.err"
                fi ;;
            2)
                view="ev/p=$(((n + round) % 30))/where=v > $((round % 900))/data.parquet"
                if cat "$MNT/$view" >/dev/null 2>>"$WORK/state/r$n.err"; then ok=$((ok + 1)); else
                    fail=$((fail + 1)); echo "reader $n: $view failed" >>"$WORK/state/r$n.err"; fi ;;
            3)
                view="ev/select=id,s/data.csv"
                if got=$(cat "$MNT/$view" 2>>"$WORK/state/r$n.err" | wc -l) && [ "$got" -gt "$seeded" ]; then
                    ok=$((ok + 1))
                else
                    fail=$((fail + 1)); echo "reader $n: $view: $got lines" >>"$WORK/state/r$n.err"
                fi ;;
        esac
        echo "$ok $fail" >"$WORK/state/r$n.count"
    done
}

# writer N: acknowledged ids in state/wN.ids, failures counted.
writer() {
    local n=$1 seq=0 fail=0 base ids csv
    : >"$WORK/state/w$n.ids"
    csv=$WORK/state/w$n.csv
    while [ "$(date +%s)" -lt "$END" ]; do
        seq=$((seq + 1))
        base=$((1000000000 + n * 10000000 + seq * 5))
        { echo "id,v,s"; for r in 0 1 2 3 4; do echo "$((base + r)),1.5,w$n"; done; } >"$csv"
        if cp "$csv" "$MNT/ev/p=$((seq % 30))/w$n-$seq.csv" 2>>"$WORK/state/w$n.err"; then
            for r in 0 1 2 3 4; do echo $((base + r)); done >>"$WORK/state/w$n.ids"
        else
            fail=$((fail + 1))
        fi
        echo "$seq $fail" >"$WORK/state/w$n.count"
    done
}

for ((i = 0; i < readers; i++)); do reader "$i" & PIDS+=($!); done
for ((i = 0; i < writers; i++)); do writer "$i" & PIDS+=($!); done

sum_counts() { # PREFIX -> "ok fail"
    cat "$WORK"/state/"$1"*.count 2>/dev/null | awk '{ a += $1; b += $2 } END { print a + 0, b + 0 }'
}
sample() {
    local rss hwm fds
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$DAEMON/status")
    hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$DAEMON/status")
    fds=$(find "/proc/$DAEMON/fd" -mindepth 1 -maxdepth 1 | wc -l)
    [ -z "${FD_KINDS:-}" ] || find "/proc/$DAEMON/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' 2>/dev/null |
        sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -5 >&2
    read -r r_ok r_fail <<<"$(sum_counts r)"
    read -r w_n w_fail <<<"$(sum_counts w)"
    printf 'soak: t=%4ds  rss=%6d KiB  peak=%6d KiB  fds=%5d  reads=%6d failed=%d  writes=%5d failed=%d\n' \
        $(($(date +%s) - START)) "$rss" "$hwm" "$fds" "$r_ok" "$r_fail" "$w_n" "$w_fail"
    # Where the memory is: anonymous vs mapped files, the heap, the caches (MiB).
    awk '/^RssAnon|^RssFile/ { printf "%s %d MiB  ", $1, $2 / 1024 }' "/proc/$DAEMON/status"
    awk '/^(heap_in_use|heap_free|footer_cache|listing_cache)_bytes/ { printf "%s %d MiB  ", $1, $2 / 1048576 }
         END { print "" }' "$MNT/.pqfs/stats" 2>/dev/null || echo
}
START=$(date +%s)
sample
while [ "$(date +%s)" -lt "$END" ]; do
    sleep $(( END - $(date +%s) < 30 ? (END - $(date +%s) > 0 ? END - $(date +%s) : 0) : 30 ))
    kill -0 "$DAEMON" 2>/dev/null || { echo "soak: the daemon died: $(tail -5 "$WORK/pqfs.log")" >&2; exit 1; }
    sample
done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
PIDS=()
sleep 6 # past the daemon's next heap trim (every 5 s)
echo "soak: idle after the load:"
sample

# ------------------------------------------------------------------ checks
status=0
read -r r_ok r_fail <<<"$(sum_counts r)"
if [ "$r_fail" -ne 0 ]; then
    echo "soak: FAIL: $r_fail of $((r_ok + r_fail)) reads failed; the first:" >&2
    cat "$WORK"/state/r*.err 2>/dev/null | head -5 >&2
    status=1
fi
{ cat "$WORK"/state/w*.ids 2>/dev/null || true; } | sort -n >"$WORK/acked" # none with --writers 0
"$PQTOOL" cat "$LAKE/ev" --where "id >= 1000000000" --select id | tail -n +2 | sort -n >"$WORK/found"
acked=$(wc -l <"$WORK/acked")
dups=$(uniq -d "$WORK/found" | wc -l)
missing=$(comm -23 "$WORK/acked" "$WORK/found" | wc -l)
extra=$(comm -13 "$WORK/acked" <(uniq "$WORK/found") | wc -l)
echo "soak: $acked acknowledged rows written; in the lake: $(wc -l <"$WORK/found") rows, $missing missing, $dups twice, $extra not acknowledged"
if [ "$missing" -ne 0 ] || [ "$dups" -ne 0 ]; then
    echo "soak: FAIL: every acknowledged write must be in the lake exactly once" >&2
    status=1
fi
leftovers=$(find "$LAKE" -name '.*' | wc -l)
[ "$leftovers" -eq 0 ] || { echo "soak: FAIL: $leftovers temporary files left in the lake" >&2; status=1; }
[ "$status" -eq 0 ] && echo "soak: PASS"
exit "$status"
