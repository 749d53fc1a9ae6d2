#!/usr/bin/env bash
# Tables of many files (issue 21): a Hive table of FILES small files (20 rows
# each, 100 partitions p=0..99) and a Delta table over the same files (one
# commit, an add per file with its stats), from tests/big/gen_files, read in
# full, by partition (p = 7) and by a point lookup that statistics prune
# (id = 12345: row-group statistics for Hive, add.stats for Delta), with
# pqtool and through the mount, under a limit of 1,024 descriptors:
#   - every answer has DuckDB's rows: count, sum(id), sum(p), sum(value * 4)
#     and sum(length(name)) against read_parquet(hive/**/*.parquet,
#     hive_partitioning = true) with the same WHERE;
#   - descriptors on lake files, sampled, stay within the budget (a quarter
#     of the limit), and peak RSS under a bound (docs/architecture.md,
#     "Resource bounds": a batch of footers held by a scan, the footer
#     cache's budget in the mount, the Delta snapshot);
#   - a small file is one read (its footer's read takes all of it), the
#     partition filter reads only p=7's files and the Delta point lookup
#     only the file its stats leave (plus the log).
# CI runs 20,000 files (FILES, the first argument after BUILD_DIR, default
# 20000: about 30 s); tools/bench/bench_files.sh times 100,000 against DuckDB.
#   tests/big/files.sh BUILD_DIR [FILES]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: files.sh BUILD_DIR [FILES]" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
FILES=${2:-20000}
# shellcheck source=../mount/lib.sh
. "$root/tests/mount/lib.sh"
mount_test_init
GEN=$BUILD/tests/gen_files
[ -x "$GEN" ] || { echo "no $GEN" >&2; exit 2; }

LIMIT=1024
ulimit -n "$LIMIT"
BUDGET=$((LIMIT / 4)) # engine/include/pqfs/fdcache.h: a quarter of the soft limit
DATA=$WORK/data MNT=$WORK/mnt
"$GEN" "$DATA" "$FILES" >"$WORK/gen.out"
PER=$((FILES / 100))

# Peak RSS bounds (KiB).  pqtool holds a batch of 512 footers and, for
# Delta, the snapshot (about 600 bytes an add: path, key, stats text); the
# daemon adds the footer cache (64 MiB) and the listing cache.  A
# sanitizer's allocator keeps freed memory in quarantine: there the peak is
# printed, not bounded.
PQTOOL_PEAK_KIB=$((64 * 1024 + FILES * 1)) MOUNT_PEAK_KIB=$((160 * 1024 + FILES * 1))
SANITIZED=0
grep -qE '^PQFS_(SANITIZE|TSAN):BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null && SANITIZED=1

# sample PID OUT: until PID ends or OUT.stop exists, the most descriptors
# PID held on the lake's Parquet files, all of them, and its VmHWM, into OUT.
sample() {
    python3 - "$1" "$DATA/" "$2" <<'PY' &
import os, sys, time
pid, lake, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
most = most_lake = samples = hwm = 0
open(out + '.ready', 'w').close() # what it samples may start now (gated)
while not os.path.exists(out + '.stop'):
    try:
        fds = os.listdir('/proc/%d/fd' % pid)
        with open('/proc/%d/status' % pid) as st:
            for line in st:
                if line.startswith('VmHWM:'):
                    hwm = max(hwm, int(line.split()[1]))
    except OSError:
        break
    on_lake = 0
    for fd in fds:
        try:
            t = os.readlink('/proc/%d/fd/%s' % (pid, fd))
            on_lake += t.startswith(lake) and t.endswith('.parquet')
        except OSError:
            pass
    most, most_lake, samples = max(most, len(fds)), max(most_lake, on_lake), samples + 1
    time.sleep(0.005)
with open(out, 'w') as f:
    f.write('%d %d %d %d\n' % (most, most_lake, samples, hwm))
PY
    SAMPLER=$!
}
stop_sample() {
    touch "$1.stop"
    wait "$SAMPLER" || true
    read -r FD_MOST FD_LAKE FD_SAMPLES PEAK_KIB <"$1"
    rm -f "$1" "$1.stop" "$1.ready"
}
# gated READY CMD...: CMD in the background (its pid in $!), started only
# once READY exists: a sampler of its pid is then sampling from its first
# moment, however slowly the sampler itself started (a short run under
# load was over before the first sample: 0 samples, no peak).
gated() {
    local ready=$1
    shift
    (
        while [ ! -e "$ready" ]; do sleep 0.005; done
        exec "$@"
    ) &
}
# sampled_ready READY: waits for a sampler started before a view is read.
sampled_ready() { while [ ! -e "$1" ]; do sleep 0.005; done; }
check_bounds() { # WHAT PEAK_BOUND_KIB
    if [ "$FD_LAKE" -le "$BUDGET" ] && [ "$FD_MOST" -lt "$LIMIT" ] && [ "$FD_SAMPLES" -gt 0 ]; then
        pass "$1: at most $FD_LAKE lake descriptors ($FD_MOST in all, $FD_SAMPLES samples)"
    else
        fail "$1: $FD_LAKE lake descriptors, $FD_MOST in all, $FD_SAMPLES samples (budget $BUDGET; limit $LIMIT)"
    fi
    if [ "$SANITIZED" = 1 ]; then echo "files: $1: peak RSS $((PEAK_KIB / 1024)) MiB (sanitizer build: not bounded)"
    elif [ "$PEAK_KIB" -gt 0 ] && [ "$PEAK_KIB" -le "$2" ]; then pass "$1: peak RSS $((PEAK_KIB / 1024)) MiB (bound $(($2 / 1024)) MiB)"
    else fail "$1: peak RSS $PEAK_KIB KiB, bound $2 KiB"; fi
}

# sums CSV: "count sum(id) sum(p) sum(value*4) sum(length(name))" of a CSV
# with a header naming the columns (in any order).
sums() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
             { n++; si += $c["id"]; sp += $c["p"]; sv += $c["value"] * 4; sl += length($c["name"]) }
             END { printf "%d %.0f %.0f %.0f %.0f\n", n, si, sp, sv, sl }' "$1"
}

# DuckDB's answers, one process for the three filters.
declare -A WANT
queries=("" "p = 7" "id = 12345")
names=(full p7 id12345)
for i in 0 1 2; do
    w=${queries[$i]}
    WANT[${names[$i]}]=$(node "$root/tests/mount/duck.mjs" sql \
        "SELECT count(*) || ' ' || coalesce(sum(id), 0) || ' ' || coalesce(sum(p), 0) || ' ' ||
                coalesce(sum(CAST(value * 4 AS BIGINT)), 0) || ' ' || coalesce(sum(length(name)), 0)
         FROM read_parquet('$DATA/hive/**/*.parquet', hive_partitioning = true)${w:+ WHERE $w}")
done
echo "files: $FILES files; DuckDB: full ${WANT[full]}; p = 7 ${WANT[p7]}; id = 12345 ${WANT[id12345]}"
[ "${WANT[full]%% *}" = $((FILES * 20)) ] || fail "DuckDB counts ${WANT[full]%% *} rows, want $((FILES * 20))"

check_sums() { # WHAT CSV NAME
    local got
    got=$(sums "$2")
    if [ "$got" = "${WANT[$3]}" ]; then pass "$1: ${got%% *} rows, DuckDB's sums"
    else fail "$1: count and sums $got, DuckDB's ${WANT[$3]}"; fi
}

# reads_at_most WHAT GOT MAX
reads_at_most() {
    if [ "$2" -gt 0 ] && [ "$2" -le "$3" ]; then pass "$1: $2 storage reads (at most $3)"
    else fail "$1: $2 storage reads, want 1 to $3"; fi
}

# ---------------------------------------------------------------- pqtool
for table in hive delta; do
    for i in 0 1 2; do
        w=${queries[$i]} name=${names[$i]}
        t0=$(date +%s.%N)
        gated "$WORK/fds.ready" "$PQTOOL" cat "$DATA/$table" ${w:+--where "$w"} --stats >"$WORK/out.csv" 2>"$WORK/err"
        pid=$!
        sample "$pid" "$WORK/fds"
        rc=0
        wait "$pid" || rc=$?
        stop_sample "$WORK/fds"
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        what="pqtool $table ${w:-full}"
        if [ "$rc" -ne 0 ]; then fail "$what: exit $rc: $(head -c 300 "$WORK/err")"; continue; fi
        echo "files: $what: ${t}s"
        check_sums "$what" "$WORK/out.csv" "$name"
        check_bounds "$what" "$PQTOOL_PEAK_KIB"
        reads=$(sed -n 's/^storage: [0-9]* bytes in \([0-9]*\) reads$/\1/p' "$WORK/err")
        # Delta: the log is read in pieces of 8 MiB (a few reads), then files.
        log_reads=0
        [ "$table" = delta ] && log_reads=8
        case $name in
        # A Hive table's full scan reads every file's schema first (schema
        # evolution: the table's schema is the union), keeping the footers
        # for the scan within 16 MiB and reading the others again: at most
        # two reads a file.  Delta takes its schema from the log and its
        # newest file: one read a file.
        full) reads_at_most "$what" "${reads:-0}" $(($([ "$table" = hive ] && echo 2 || echo 1) * FILES + log_reads)) ;;
        p7) reads_at_most "$what" "${reads:-0}" $((PER + 1 + log_reads)) ;;
        id12345) [ "$table" = delta ] && reads_at_most "$what" "${reads:-0}" $((2 + log_reads)) ;;
        esac
    done
done

# ---------------------------------------------------------------- the mount
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/.pqfs/stats"; }
views=("." "p=7" "where=id=12345")
for table in hive delta; do
    for i in 0 1 2; do
        # A fresh mount for each view: its peak is that view's, from cold caches.
        start_pqfs "$WORK/pqfs.log" "$DATA" "$MNT" -o "cache_dir=$WORK/cache"
        daemon=$PQFS_PID
        sample "$daemon" "$WORK/fds"
        sampled_ready "$WORK/fds.ready"
        what="mount $table/${views[$i]}"
        t0=$(date +%s.%N)
        if cat "$MNT/$table/${views[$i]}/data.csv" >"$WORK/out.csv" 2>"$WORK/err"; then
            t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
            echo "files: $what: ${t}s"
            check_sums "$what" "$WORK/out.csv" "${names[$i]}"
        else
            fail "$what: cat failed: $(head -c 300 "$WORK/err")"
        fi
        reads=$(stat_of source_read_requests)
        stop_sample "$WORK/fds"
        check_bounds "$what" "$MOUNT_PEAK_KIB"
        # A Hive view's schema is the union of its files' (schema
        # evolution), read before the scan: at most two reads a file, as
        # pqtool.  The union is kept: another view of the same files reads
        # each at most once more.
        [ "$i" = 0 ] && [ "$table" = hive ] && reads_at_most "$what" "${reads:-0}" $((2 * FILES + 1))
        if [ "$i" = 0 ] && [ "$table" = hive ]; then
            if tail -n +2 "$MNT/$table/select=id/data.csv" | wc -l | grep -qx "$((FILES * 20))"; then
                pass "mount hive/select=id: every row"
            else
                fail "mount hive/select=id: not $((FILES * 20)) rows"
            fi
            reads_at_most "mount hive/select=id after hive/. (the union kept)" \
                $(($(stat_of source_read_requests) - reads)) $((FILES + 1))
        fi
        [ "$i" = 2 ] && [ "$table" = delta ] && reads_at_most "$what" "${reads:-0}" 12
        stop_pqfs "$MNT" "$daemon"
    done
done

summary "big files"
