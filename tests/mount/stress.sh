#!/usr/bin/env bash
# Concurrency and shutdown tests of the mount (CTest label `mount`).
#
#   tests/mount/stress.sh BUILD_DIR
#
# 1. Time to first byte: `head -1` of the biggest table's data.csv returns
#    well before a full `cat` of it ends (streaming, SPEC section 3).
# 2. Rounds of 16 concurrent readers on mixed views: full reads checksummed
#    against `pqtool cat` of the same query (itself checked against DuckDB:
#    csvcmp for the small views, row counts for the big ones), `head -c 1000`
#    and `head -1` readers closing early, readers killed mid-read.  No wrong bytes, no errors, the daemon
#    alive, /.pqfs/stats shows cancelled results.
# 3. `fusermount3 -uz` during active reads: every reader ends (complete and
#    right, or an error; never a hang), the daemon exits within seconds of
#    the last close, no mount is left.
# 4. SIGTERM to the daemon during reads: readers end with complete data or an
#    error, the daemon exits with status 0 within seconds, the mount is gone.
#
# Same requirements and environment variables as run.sh (exit 77 without them).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: stress.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init

# The big table: ~90 MB of CSV, more than the 64 MiB a result may run ahead of
# its readers, so a reader closing early always leaves a running result to cancel.
BIG_ROWS=${PQFS_STRESS_BIG_ROWS:-1400000}
ROUNDS=${PQFS_STRESS_ROUNDS:-3}
LAKE=$WORK/lake
MNT=$WORK/mnt
node "$here/gen_lake.mjs" "$LAKE" --big-rows "$BIG_ROWS" --big-files 8 >/dev/null
OPTS="cache_dir=$WORK/cache,metadata_ttl=5s,cache_size=16MiB,log_level=debug"
start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "$OPTS"
PID=$PQFS_PID

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# ---------------------------------------------------------------- 1. time to first byte
# head -1 of three views not read before (after one that loads the table's
# footers), the median against a full cat of the table.
head -1 "$MNT/big/where=g <> 1000/data.csv" >/dev/null
times=()
for i in 1 2 3; do
    t0=$(now)
    first=$(head -1 "$MNT/big/where=g <> $((1000 + i))/data.csv")
    times+=("$(elapsed "$t0")")
    [ "$first" = "id,g,d,s,ts" ] || fail "head -1 big/where=g <> $((1000 + i)): '$first'"
done
ttfb=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
t0=$(now)
full_bytes=$(cat "$MNT/big/data.csv" | wc -c)
tfull=$(elapsed "$t0")
echo "big/data.csv: $full_bytes bytes; head -1 ${times[*]}s (median ${ttfb}s), full cat ${tfull}s"
# Bound: a quarter of the full read (about a tenth on an idle machine).
if awk -v a="$ttfb" -v b="$tfull" 'BEGIN { exit !(a * 4 < b) }'; then pass "time to first byte ${ttfb}s < full ${tfull}s / 4"
else fail "time to first byte ${ttfb}s is not well below the full read ${tfull}s (bound: a quarter)"; fi
[ "$full_bytes" -gt $((64 << 20)) ] || fail "big/data.csv is only $full_bytes bytes: make PQFS_STRESS_BIG_ROWS larger"

# ---------------------------------------------------------------- references
# view NAME PATH TABLE [pqtool options...]; the reference is pqtool's output.
REF=$WORK/ref
mkdir -p "$REF"
V_NAMES=() V_PATHS=()
ref() {
    local name=$1 p=$2 table=$3
    shift 3
    "$PQTOOL" cat "$LAKE/$table" "$@" >"$REF/$name.csv"
    sha256sum <"$REF/$name.csv" | cut -d' ' -f1 >"$REF/$name.sha"
    head -c 1000 "$REF/$name.csv" >"$REF/$name.head"
    V_NAMES+=("$name") V_PATHS+=("$p")
}
ref ev_all    "events/data.csv" events
ref ev_where  "events/year=2024/where=i32 < 50/select=id,s,tags,region/data.csv" events \
              --where "year = 2024 AND i32 < 50" --select id,s,tags,region
ref ev_null   "events/where=region IS NULL/limit=3000/data.csv" events --where "region IS NULL" --limit 3000
ref users     "users/select=name,address,nums/data.csv" users --select name,address,nums
ref big_all   "big/data.csv" big
ref big_g     "big/where=g < 100/data.csv" big --where "g < 100"
ref big_ge    "big/where=g >= 100/data.csv" big --where "g >= 100"
ref big_sel   "big/select=id,ts,s,d/data.csv" big --select id,ts,s,d
ref big_lim   "big/where=d > 500/limit=200000/data.csv" big --where "d > 500" --limit 200000
# The references against DuckDB: small views cell by cell, big ones by row count.
: >"$WORK/cases.txt"
printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f\n' ev_where events "year = 2024 AND i32 < 50" "id, s, tags, region" "" >>"$WORK/cases.txt"
printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f\n' ev_null events "region IS NULL" "" 3000 >>"$WORK/cases.txt"
printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f\n' users users "" "name, address, nums" "" >>"$WORK/cases.txt"
node "$here/duck.mjs" expect "$LAKE" "$WORK/cases.txt" "$WORK/expected"
for n in ev_where ev_null users; do
    if cmp -s "$WORK/expected/$n.csv" "$REF/$n.csv" || python3 "$CSVCMP" "$WORK/expected/$n.csv" "$REF/$n.csv"; then
        pass "reference $n agrees with DuckDB"; else fail "pqtool's $n differs from DuckDB's"; fi
done
g=$(node "$here/duck.mjs" sql "SELECT count(*) FROM read_parquet('$LAKE/big/*.parquet') WHERE g < 100")
[ "$(($(wc -l <"$REF/big_g.csv") - 1))" = "$g" ] && pass "big_g row count" || fail "big_g: pqtool rows != DuckDB's $g"
[ "$(($(wc -l <"$REF/big_all.csv") - 1))" = "$BIG_ROWS" ] && pass "big_all row count" || fail "big_all: rows != $BIG_ROWS"
[ "$(wc -c <"$REF/big_all.csv")" = "$full_bytes" ] && pass "big/data.csv size = pqtool's" || fail "big/data.csv: $full_bytes bytes, pqtool $(wc -c <"$REF/big_all.csv")"

# ---------------------------------------------------------------- 2. rounds of 16 readers
# reader KIND VIEW OUT: KIND full (sha256), headc (head -c 1000), head1 (head -1),
# kill (SIGKILL after 0.3 s: a read interrupted, or the whole file when quicker).
reader() {
    set +e
    local kind=$1 p=$MNT/$2 out=$3 rc=0
    case $kind in
        full) { timeout 120 cat "$p" | tee "$out.data" | sha256sum | cut -d' ' -f1 >"$out"; } 2>"$out.err"; rc=${PIPESTATUS[0]} ;;
        headc) timeout 120 head -c 1000 "$p" >"$out" 2>"$out.err" || rc=$? ;;
        head1) timeout 120 head -1 "$p" >"$out" 2>"$out.err" || rc=$? ;;
        kill) { timeout -s KILL 0.3 cat "$p" | sha256sum | cut -d' ' -f1 >"$out"; } 2>"$out.err"; rc=${PIPESTATUS[0]} ;;
    esac
    echo "$rc" >"$out.rc"
}
c0=$(stat_val "$MNT" results_cancelled)
e0=$(stat_val "$MNT" errors)
KINDS=(full full full full full full headc headc headc headc kill head1 head1 head1 full kill)
for round in $(seq "$ROUNDS"); do
    dir=$WORK/round$round
    mkdir -p "$dir"
    pids=()
    for k in $(seq 0 15); do
        vi=$(((k * 7 + round * 3) % ${#V_NAMES[@]}))
        kind=${KINDS[$k]}
        reader "$kind" "${V_PATHS[$vi]}" "$dir/$k" &
        pids+=($!)
        echo "$kind ${V_NAMES[$vi]}" >"$dir/$k.what"
    done
    t0=$(now)
    wait "${pids[@]}"
    bad=0
    for k in $(seq 0 15); do
        read -r kind name <"$dir/$k.what"
        rc=$(cat "$dir/$k.rc")
        case $kind in
            full) want=$(cat "$REF/$name.sha") ;;
            headc) want=$(cat "$REF/$name.head") ;;
            head1) want=$(head -1 "$REF/$name.csv") ;;
            kill) want=$(cat "$REF/$name.sha"); [ "$rc" = 137 ] && rc=0 && want=$(cat "$dir/$k") ;;
        esac
        got=$(cat "$dir/$k")
        if [ "$rc" != 0 ]; then bad=1; fail "round $round reader $k ($kind $name): exit $rc: $(head -c 300 "$dir/$k.err")"
        elif [ "$got" != "$want" ]; then bad=1; fail "round $round reader $k ($kind $name): wrong bytes"
            # what differs, for the log: sizes and the first differing byte
            [ -f "$dir/$k.data" ] && echo "    read $(wc -c <"$dir/$k.data") bytes, want $(wc -c <"$REF/$name.csv"): $(cmp "$dir/$k.data" "$REF/$name.csv" 2>&1 | head -1)"
        fi
    done
    [ "$bad" = 0 ] && pass "round $round: 16 readers right ($(elapsed "$t0")s)"
    kill -0 "$PID" 2>/dev/null || { fail "daemon died in round $round"; break; }
done
c1=$(stat_val "$MNT" results_cancelled)
e1=$(stat_val "$MNT" errors)
[ "$c1" -gt "$c0" ] && pass "results_cancelled moved ($c0 -> $c1)" || fail "results_cancelled did not move ($c0 -> $c1)"
[ "$e1" = "$e0" ] && pass "no errors" || fail "errors $e0 -> $e1: $(tail -3 "$MNT/.pqfs/errors")"
kill -0 "$PID" 2>/dev/null && pass "daemon alive after the rounds" || fail "daemon not alive after the rounds"

# ---------------------------------------------------------------- 2b. concurrent lookups
# Path resolution runs on every FUSE thread at once: 4 parallel loops stat
# views never looked up before (distinct select lists and filters), so every
# stat is a fresh lookup that resolves and compiles its path.  Each must
# succeed: a resolver sharing state between threads (strtok did) mixes up
# components and fails some with EINVAL, or resolves them to another view.
lookups() {
    local w=$1 i cols
    for i in $(seq 60); do
        case $((i % 3)) in
            0) cols="name,address,nums" ;;
            1) cols="nums, name" ;;
            *) cols="address,user_id,name" ;;
        esac
        stat "$MNT/users/select=$cols/where=user_id > $((w * 1000 + i))/data.csv" >/dev/null 2>&1 || echo "$w $i $cols"
    done
}
e_l0=$(stat_val "$MNT" errors)
lpids=()
for w in 1 2 3 4; do lookups "$w" >"$WORK/lookups.$w" & lpids+=($!); done
wait "${lpids[@]}" # not a bare wait: the daemon is a background job too
nbad=$(cat "$WORK"/lookups.* | wc -l)
e_l1=$(stat_val "$MNT" errors)
[ "$nbad" = 0 ] && [ "$e_l1" = "$e_l0" ] && pass "240 concurrent fresh lookups resolved" ||
    fail "concurrent lookups: $nbad failed, errors $e_l0 -> $e_l1: $(tail -2 "$MNT/.pqfs/errors")"

# ---------------------------------------------------------------- 3/4. unmount and SIGTERM during reads
# Fresh views (not in the result cache): they are being scanned while read.
during_reads() { # MODE: unmount | sigterm
    local mode=$1 dir=$WORK/$1 k pids=() t0 rc
    mkdir -p "$dir"
    local v0
    v0=$(stat_val "$MNT" views_opened)
    local views=("big/where=g <> 1/data.csv" "big/where=g <> 2/data.csv" "big/where=g <> 3/data.csv"
                 "big/where=g <> 4/data.csv" "big/where=id % 2 = 0/data.csv" "events/where=i32 <> 5/data.csv"
                 "big/where=g <> 1/data.csv" "big/select=s,id/data.csv")
    for k in "${!views[@]}"; do
        reader full "${views[$k]}" "$dir/$k" &
        pids+=($!)
    done
    # A slow reader that closes early.
    python3 - "$MNT/big/where=g <> 9/data.csv" >"$dir/slow.out" 2>&1 <<'PY' &
import sys, time
try:
    with open(sys.argv[1], 'rb') as f:
        for _ in range(40):
            if not f.read(65536): break
            time.sleep(0.02)
    print('ok')
except OSError as e:
    print('error', e)
PY
    pids+=($!)
    # A lookup that materializes a data.parquet (it waits for its scan): it
    # ends too, with the size or an error (EINTR once the mount is going).
    # (set +e: under errexit, inherited, a failing stat ended the subshell
    # before it wrote its status, and a hang, 124, went unseen.)
    (set +e; timeout 120 stat -c %s "$MNT/big/where=g <> 7/data.parquet" >"$dir/pq.out" 2>&1; echo $? >"$dir/pq.rc") &
    pids+=($!)
    # Act once every reader has its file open (the daemon counts the opens),
    # then a little later, mid-read.
    local i
    for i in $(seq 100); do
        [ "$(stat_val "$MNT" views_opened)" -ge $((v0 + ${#views[@]} + 1)) ] && break
        sleep 0.1
    done
    sleep 0.3
    t0=$(now)
    if [ "$mode" = unmount ]; then fusermount3 -uz "$MNT"; else kill -TERM "$PID"; fi
    # Every reader ends (timeout 120 inside; a hang shows as exit 124).
    local hung=0
    for k in "${!pids[@]}"; do
        wait "${pids[$k]}" || true
    done
    local treaders
    treaders=$(elapsed "$t0")
    local ok=0 err=0
    for k in "${!views[@]}"; do
        rc=$(cat "$dir/$k.rc")
        if [ "$rc" = 124 ]; then hung=1; fail "$mode: reader of ${views[$k]} hung (timeout)"
        elif [ "$rc" = 0 ]; then
            # Complete: must be right.  References: pqtool, made now for these views.
            local w=${views[$k]%/data.csv} args=() table
            table=${w%%/*}
            case $w in
                */where=*) args=(--where "${w#*/where=}") ;;
                */select=*) args=(--select "${w#*/select=}") ;;
            esac
            if [ "$("$PQTOOL" cat "$LAKE/$table" "${args[@]}" | sha256sum | cut -d' ' -f1)" = "$(cat "$dir/$k")" ]; then ok=$((ok + 1))
            else fail "$mode: reader of ${views[$k]} ended with status 0 and wrong bytes"; fi
        else
            err=$((err + 1))
        fi
    done
    if [ ! -s "$dir/pq.rc" ]; then fail "$mode: the data.parquet lookup left no exit status"
    elif [ "$(cat "$dir/pq.rc")" = 124 ]; then hung=1; fail "$mode: the data.parquet lookup hung (timeout)"
    elif grep -q "Interrupted system call" "$dir/pq.out"; then
        fail "$mode: the data.parquet lookup said EINTR: the mount going away is ENOTCONN, not an interrupted call"; fi
    echo "$mode during reads: readers done ${treaders}s after; $ok complete and right, $err with an error; slow reader: $(cat "$dir/slow.out"); data.parquet lookup: $(head -c 120 "$dir/pq.out")"
    [ "$hung" = 0 ] && pass "$mode: no reader hung"
    # The daemon ends within seconds of the last close.
    if wait_exit "$PID" 10; then pass "$mode: daemon exited"; else fail "$mode: daemon $PID still running 10 s after the readers ended"; fi
    if [ "$mode" = sigterm ]; then
        [ "$WAIT_STATUS" = 0 ] && pass "sigterm: exit status 0" || fail "sigterm: daemon exit status $WAIT_STATUS"
    fi
    grep -q 'unmounted' "$WORK/pqfs-$mode.log" && pass "$mode: clean shutdown (log says unmounted)" ||
        fail "$mode: no 'unmounted' in the daemon log: $(tail -3 "$WORK/pqfs-$mode.log")"
    is_mounted "$MNT" && fail "$mode: $MNT still mounted" || pass "$mode: no mount left"
    if grep -qiE 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error|Assertion|Segmentation' "$WORK/pqfs-$mode.log"; then
        fail "$mode: the daemon log shows a crash or a sanitizer report:"
        grep -iE -A12 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error|Assertion|Segmentation' "$WORK/pqfs-$mode.log" | head -40 | sed 's/^/    /'
    fi
    return 0
}
# The first daemon is still up from the rounds: unmount it under readers.
ln -sf "$WORK/pqfs.log" "$WORK/pqfs-unmount.log"
during_reads unmount
start_pqfs "$WORK/pqfs-sigterm.log" "$LAKE" "$MNT" -o "$OPTS"
PID=$PQFS_PID
during_reads sigterm

summary "mount stress"
