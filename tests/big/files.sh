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
# shellcheck source=../lib/sampler.sh
. "$root/tests/lib/sampler.sh"
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
sanitized_build "$BUILD"
check_bounds() { # WHAT PEAK_BOUND_KIB
    check_fd_bound "$1"
    check_peak_rss "$1" "$2"
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
        wait_sampled $! "$DATA/" "$WORK/fds"
        rc=$SAMPLED_RC
        t=$(seconds_since "$t0")
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
        # Hive: the union's pass reads every footer once, and a footer it
        # lets go whose statistics rule the file out is not read again
        # (before: about 1.8 reads a file).
        id12345) reads_at_most "$what" "${reads:-0}" $([ "$table" = hive ] && echo $((FILES + 2)) || echo $((2 + log_reads))) ;;
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
        sample_process "$daemon" "$DATA/" "$WORK/fds"
        sampled_ready "$WORK/fds.ready"
        what="mount $table/${views[$i]}"
        t0=$(date +%s.%N)
        if cat "$MNT/$table/${views[$i]}/data.csv" >"$WORK/out.csv" 2>"$WORK/err"; then
            t=$(seconds_since "$t0")
            echo "files: $what: ${t}s"
            check_sums "$what" "$WORK/out.csv" "${names[$i]}"
        else
            fail "$what: cat failed: $(head -c 300 "$WORK/err")"
        fi
        reads=$(stat_of source_read_requests)
        stop_sampling "$WORK/fds"
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
        # Hive: every footer once for the union (those its statistics rule
        # out are not read again; at 20,000 files the footer cache holds
        # them all anyway, at 100,000 it does not: bench_files.sh), the
        # schema file's and the first files' few more.
        [ "$i" = 2 ] && [ "$table" = hive ] && reads_at_most "$what" "${reads:-0}" $((FILES + 8))
        stop_pqfs "$MNT" "$daemon"
    done
done

summary "big files"
