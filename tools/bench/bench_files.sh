#!/usr/bin/env bash
# Tables of many small files (issue 21): pqtool and the mount against DuckDB's
# read_parquet('hive/**/*.parquet', hive_partitioning = true), side by side in
# one run, for the full table, a partition (p = 7) and a point lookup that
# statistics prune (id = 12345); wall time, peak RSS, most descriptors held.
#
#   tools/bench/bench_files.sh [--files N] [--data DIR] [--runs N] [--build DIR]
#                              [--tables hive,delta] [--queries full,p7,id] [--s3-delay-ms MS]
#
# --data DIR holds (or gets: tests/big/gen_files, ~12 s for 100,000) DIR/hive
# and DIR/delta, N files (default 100,000) of 20 rows in 100 partitions; the
# Delta table is the same files with one commit of N adds (stats included).
# DuckDB reads the Hive layout for both (it has no Delta reader offline), so
# the Delta rows compare pqfs's log replay and stats pruning with DuckDB's
# listing and footers.  Each round runs every contender once, in turn; the
# medians are printed with pqtool / duckdb and mount / duckdb (below 1:
# pqfs faster).  DuckDB runs in a fresh node process per run (threads=2,
# COPY ... TO '/dev/null' (FORMAT csv)); its time is the query's alone
# (timed inside that process), its peak RSS the whole process's (node is
# about 50 MB of it).  The mount is a fresh one per run (cold listing and
# footer caches, no cached result): `cat MNT/TABLE/VIEW/data.csv > /dev/null`;
# its peak RSS is the daemon's VmHWM, its descriptors sampled every 5 ms.
# With --s3-delay-ms the lake is served by tests/mount/fake_s3.mjs (each
# request held MS ms) and pqtool and the mount read s3://bench/TABLE;
# DuckDB still reads the local files.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
FILES=100000 DATA=/work/benchdata/files RUNS=3 BUILD=$root/build TABLES=hive,delta QUERIES=full,p7,id S3_DELAY=
while [ $# -gt 0 ]; do
    case $1 in
    --files) FILES=$2; shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --queries) QUERIES=$2; shift 2 ;;
    --s3-delay-ms) S3_DELAY=$2; shift 2 ;;
    *) echo "usage: bench_files.sh [--files N] [--data DIR] [--runs N] [--build DIR] [--tables hive,delta] [--queries full,p7,id] [--s3-delay-ms MS]" >&2; exit 2 ;;
    esac
done
PQTOOL=$BUILD/pqtool PQFS=$BUILD/pqfs GEN=$BUILD/tests/gen_files
for x in "$PQTOOL" "$PQFS" "$GEN"; do [ -x "$x" ] || { echo "bench_files: no $x (build first)" >&2; exit 2; }; done
[ -d "$root/tools/js/node_modules/@duckdb/node-api" ] || { echo "bench_files: DuckDB missing (tools/setup-deps.sh)" >&2; exit 2; }

if [ ! -d "$DATA/hive" ]; then
    echo "generating $FILES files into $DATA"
    "$GEN" "$DATA" "$FILES" --parts 100
fi
DATA=$(cd "$DATA" && pwd)
N_FILES=$(find "$DATA/hive" -name '*.parquet' | wc -l)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pqfs-bench-files.XXXXXX")
MNT=$WORK/mnt DAEMON= SERVER=
mkdir -p "$MNT"
cleanup() {
    set +e
    if awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts; then fusermount3 -uz "$MNT"; fi
    [ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
    rmdir "$MNT" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SRC=$DATA PREFIX=$DATA
if [ -n "$S3_DELAY" ]; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    node "$root/tests/mount/fake_s3.mjs" --root "$DATA" --bucket bench --port "$port" --delay-ms "$S3_DELAY" >"$WORK/s3.log" 2>&1 &
    SERVER=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
    export AWS_ENDPOINT_URL=http://127.0.0.1:$port
    # The mount takes its endpoint and path style from an ini ([s3]).
    printf '[pqfs]\nsource = s3://bench\n[s3]\nendpoint = http://127.0.0.1:%s\npath_style = true\n' "$port" >"$WORK/lake.ini"
    SRC=$WORK/lake.ini PREFIX=s3://bench
fi


# The descriptor sampler (sample_process, stop_sampling: FD_MOST).
# shellcheck source=../../tests/lib/sampler.sh
. "$root/tests/lib/sampler.sh"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

where_of() { case $1 in full) echo "" ;; p7) echo "p = 7" ;; id) echo "id = 12345" ;; esac; }
view_of() { case $1 in full) echo "." ;; p7) echo "p=7" ;; id) echo "where=id=12345" ;; esac; }

# run_pqtool TABLE Q: one run; prints "secs peak_kib fds lines".
run_pqtool() {
    local w; w=$(where_of "$2")
    local t0 t1
    t0=$(now)
    /usr/bin/time -f '%M' -o "$WORK/time" "$PQTOOL" cat "$PREFIX/$1" ${w:+--where "$w"} >"$WORK/out.csv" &
    local pid=$! child=
    # time's child is pqtool: its descriptors are the ones to sample.
    for _ in $(seq 100); do
        child=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null || true)
        [ -n "$child" ] && break
        sleep 0.001
    done
    sample_process "${child:-$pid}" "$DATA/" "$WORK/fds"
    wait "$pid"
    t1=$(now)
    stop_sampling "$WORK/fds"
    echo "$(secs "$t0" "$t1") $(tail -1 "$WORK/time") $FD_MOST $(wc -l <"$WORK/out.csv")"
}

run_mount() {
    "$PQFS" "$SRC" "$MNT" -f -o "cache_dir=$WORK/cache" >"$WORK/pqfs.log" 2>&1 &
    DAEMON=$!
    for _ in $(seq 200); do awk -v m="$MNT" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts && break; sleep 0.05; done
    sample_process "$DAEMON" "$DATA/" "$WORK/fds"
    local t0 t1
    t0=$(now)
    cat "$MNT/$1/$(view_of "$2")/data.csv" >"$WORK/out.csv" || { echo "mount: cat failed; the log:" >&2; tail -5 "$WORK/pqfs.log" >&2; }
    t1=$(now)
    stop_sampling "$WORK/fds"
    local hwm; hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$DAEMON/status")
    fusermount3 -u "$MNT"
    wait "$DAEMON" || true
    DAEMON=
    echo "$(secs "$t0" "$t1") $hwm $FD_MOST $(wc -l <"$WORK/out.csv")"
}

run_duckdb() {
    local w; w=$(where_of "$2")
    local s
    s=$(/usr/bin/time -f '%M' -o "$WORK/time" node "$here/files_duck.mjs" "$DATA/hive/**/*.parquet" "$w")
    echo "$s $(tail -1 "$WORK/time") - -"
}

echo "bench_files: $N_FILES files in $DATA${S3_DELAY:+, pqfs over fake S3 with $S3_DELAY ms a request}; $RUNS runs; load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$WORK/results"
for table in ${TABLES//,/ }; do
    for q in ${QUERIES//,/ }; do
        for r in $(seq "$RUNS"); do
            for c in pqtool mount duckdb; do
                line=$("run_$c" "$table" "$q")
                echo "$table $q $c $line" >>"$WORK/results"
            done
        done
    done
done

python3 - "$WORK/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    t, q, c, s, kib, fds, lines = line.split()
    rows.setdefault((t, q), {}).setdefault(c, []).append((float(s), int(kib), fds, lines))
print('%-6s %-5s %-7s %9s %9s %5s %9s   %s' % ('table', 'query', 'who', 'median s', 'peak MiB', 'fds', 'lines', 'ratio'))
bad = 0
for (t, q), by in rows.items():
    duck = statistics.median(x[0] for x in by['duckdb'])
    want = {x[3] for x in by['pqtool']} | {x[3] for x in by['mount']}
    for c in ('pqtool', 'mount', 'duckdb'):
        runs = by[c]
        med = statistics.median(x[0] for x in runs)
        peak = max(x[1] for x in runs) / 1024
        fds = max((int(x[2]) for x in runs if x[2] != '-'), default=None)
        ratio = '' if c == 'duckdb' else '%s / duckdb %.2f' % (c, med / duck)
        print('%-6s %-5s %-7s %9.3f %9.0f %5s %9s   %s' % (t, q, c, med, peak, '-' if fds is None else fds, runs[0][3], ratio))
    if len(want) != 1:
        print('LINE COUNT MISMATCH between pqtool and the mount: %s' % sorted(want))
        bad = 1
sys.exit(bad)
PY
