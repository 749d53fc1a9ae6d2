#!/usr/bin/env bash
# Integration tests of the mount (CTest label `mount`): mounts a generated lake
# (gen_lake.mjs) with the real pqfs daemon and checks what standard tools see
# against DuckDB's answers.
#
#   tests/mount/run.sh BUILD_DIR
#
# Needs /dev/fuse, fusermount3, node with tools/js/node_modules (DuckDB),
# python3 and ../shared/tools/csvcmp.py; exits 77 (CTest: skipped) without
# them.  PQFS_SHARED_DIR overrides ../shared; VERBOSE=1 prints every passing
# check; PQFS_MOUNT_KEEP=1 keeps the work directory; PQFS_MOUNT_STRICT=1 makes
# the known gaps and the SPEC conflicts (size 0 until complete
# fools DuckDB's read_csv) failures; PQFS_MOUNT_DEADLINE (270 s) is when a
# watchdog stops a hung run, before CTest's TIMEOUT would kill it uncleanly.
#
# Views are compared with csvcmp.py in order, never --unordered: SPEC section 3
# fixes the table order (partition directories sorted, files by name, rows in
# file order), and DuckDB with one thread returns the glob's order, which is
# the same here (duck.mjs explains why), so LIMIT picks the same rows too.
#
# What is covered: the table root, real and nested partition directories,
# where= (spaces, quotes, %2F, %25, && || !), data-column and virtual
# partition COL=VALUE (other order, percent-encoded, the NULL partition),
# select=, limit=, stacked components in any order (equal bytes), readdir
# (partitions listed, virtual components and raw files not, pruning below
# where=), EINVAL and /.pqfs/errors, ENOENT, the corrupt-file table (EIO for
# views touching a bad file, the others fine, the file named in errors),
# schema.txt, plan.txt, /.pqfs/stats, data.csv's size (0, then exact),
# python's csv module and DuckDB's read_csv on data.csv, a file replaced /
# added / removed in the lake (visible after metadata_ttl, an open handle keeps
# its snapshot), an ini mount with a declared partition type, single-table
# mounts, and the fstab form through mount.fuse3.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: run.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init

LAKE=$WORK/lake
MNT=$WORK/mnt
node "$here/gen_lake.mjs" "$LAKE" >/dev/null
LAKE2=$WORK/lake2                       # an unchanged copy for the later mounts
cp -a "$LAKE" "$LAKE2"
start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,metadata_ttl=1s,log_level=debug"
MAIN_PID=$PQFS_PID
# A second pqfs on the same mountpoint is refused, as mount(8) refuses
# (issue 23: it stacked a second mount and exited 0).
rc=0
timeout 20 "$PQFS" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache-second" >"$WORK/second.out" 2>&1 || rc=$?
n=$(awk -v m="$MNT" '$2 == m' /proc/self/mounts | wc -l)
[ "$rc" = 2 ] && [ "$n" = 1 ] && grep -q "is already a pqfs mount: unmount it first" "$WORK/second.out" &&
    pass "a second pqfs on the mountpoint: refused (exit 2, one mount)" ||
    fail "a second pqfs on the mountpoint: exit $rc, $n mounts, '$(head -c 200 "$WORK/second.out")'"
while [ "$(awk -v m="$MNT" '$2 == m' /proc/self/mounts | wc -l)" -gt 1 ]; do fusermount3 -u "$MNT"; done

# ---------------------------------------------------------------- view cases
# view NAME PATH TABLE WHERE SELECT LIMIT [nonempty]
#   PATH (below the mount) is compared with DuckDB's
#   SELECT SELECT FROM TABLE WHERE WHERE LIMIT LIMIT.  `nonempty`: the
#   reference must have rows (guards against a vacuous comparison).
CASES=$WORK/cases.txt
: >"$CASES"
Q_NAMES=() Q_PATHS=() Q_FLAGS=() Q_MNT=()
HIVE_TYPES=
view() {
    printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\n' "$1" "$3" "$4" "$5" "$6" "$HIVE_TYPES" >>"$CASES"
    Q_NAMES+=("$1") Q_PATHS+=("$2") Q_FLAGS+=("${7:-}") Q_MNT+=("${VIEW_MNT:-$MNT}")
}

# Runs the queued cases: DuckDB's answers, then cat through the mount.
run_views() {
    local exp=$WORK/expected act=$WORK/actual i name p out
    mkdir -p "$exp" "$act"
    node "$here/duck.mjs" expect "${VIEW_LAKE:-$LAKE}" "$CASES" "$exp"
    for i in "${!Q_NAMES[@]}"; do
        name=${Q_NAMES[$i]} p=${Q_MNT[$i]}/${Q_PATHS[$i]}
        out=$act/$name.csv
        if [ -f "$exp/$name.err" ]; then
            fail "$name: DuckDB rejected the reference query: $(head -1 "$exp/$name.err")"
            continue
        fi
        if ! cat "$p" >"$out" 2>"$act/$name.stderr"; then
            fail "$name: cat '$p' failed: $(cat "$act/$name.stderr")"
            continue
        fi
        if [ "${Q_FLAGS[$i]}" = nonempty ] && [ "$(wc -l <"$exp/$name.csv")" -lt 2 ]; then
            fail "$name: the reference answer has no rows (the case tests nothing)"
        fi
        # Byte-identical text agrees by every rule of csvcmp: skip the Python run.
        if cmp -s "$exp/$name.csv" "$out" || python3 "$CSVCMP" "$exp/$name.csv" "$out" >"$act/$name.diff" 2>&1; then
            pass "$name"
        else
            fail "$name: '$p' differs from DuckDB:"
            sed 's/^/    /' "$act/$name.diff" | head -12
        fi
        # The same view's data.parquet (SPEC section 3): an exact size at
        # lookup, and the same rows (read back as CSV by pqtool).
        case $p in */data.csv) ;; *) continue ;; esac
        local pq=${p%/data.csv}/data.parquet size
        size=$(stat -c %s "$pq" 2>"$act/$name.pq.stderr") || { fail "$name: stat '$pq': $(cat "$act/$name.pq.stderr")"; continue; }
        if ! cp "$pq" "$act/$name.parquet" 2>"$act/$name.pq.stderr"; then
            fail "$name: cp '$pq' failed: $(cat "$act/$name.pq.stderr")"
            continue
        fi
        [ "$(stat -c %s "$act/$name.parquet")" = "$size" ] || fail "$name: data.parquet's stat size $size is not its length"
        if ! "$PQTOOL" cat "$act/$name.parquet" -o "$act/$name.pq.csv" 2>"$act/$name.pq.stderr"; then
            fail "$name: pqtool cannot read its data.parquet: $(cat "$act/$name.pq.stderr")"
        elif cmp -s "$exp/$name.csv" "$act/$name.pq.csv" || python3 "$CSVCMP" "$exp/$name.csv" "$act/$name.pq.csv" >"$act/$name.pq.diff" 2>&1; then
            pass "$name (data.parquet)"
        else
            fail "$name: '$pq' holds other rows than DuckDB's answer:"
            sed 's/^/    /' "$act/$name.pq.diff" | head -12
        fi
    done
    : >"$CASES"
    Q_NAMES=() Q_PATHS=() Q_FLAGS=() Q_MNT=()
}

E=events
# Table roots.
view ev_root            "$E/data.csv"  events "" "" "" nonempty
view users_root         "users/data.csv" users "" "" "" nonempty
view codes_root         "codes/data.csv" codes "" "" "" nonempty
# Real partition directories, nested.
view ev_y2024           "$E/year=2024/data.csv" events "year = 2024" "" "" nonempty
view ev_y2024_d0101     "$E/year=2024/dt=2024-01-01/data.csv" events "year = 2024 AND dt = '2024-01-01'" "" "" nonempty
view ev_leaf_eu         "$E/year=2024/dt=2024-01-01/region=eu/data.csv" events \
                        "year = 2024 AND dt = '2024-01-01' AND region = 'eu'" "" "" nonempty
view ev_leaf_a_b        "$E/year=2024/dt=2024-01-01/region=a%2Fb/data.csv" events \
                        "year = 2024 AND dt = '2024-01-01' AND region = 'a/b'" "" "" nonempty
view ev_leaf_space      "$E/year=2024/dt=2024-01-02/region=us%20west/data.csv" events \
                        "year = 2024 AND dt = '2024-01-02' AND region = 'us west'" "" "" nonempty
view ev_leaf_null       "$E/year=2024/dt=2024-01-01/region=__HIVE_DEFAULT_PARTITION__/data.csv" events \
                        "year = 2024 AND dt = '2024-01-01' AND region IS NULL" "" "" nonempty
# Partition COL=VALUE given virtually (not the next level, or after a virtual one).
view ev_virt_dt         "$E/dt=2024-01-02/data.csv" events "dt = '2024-01-02'" "" "" nonempty
view ev_virt_region     "$E/region=eu/data.csv" events "region = 'eu'" "" "" nonempty
view ev_virt_null       "$E/region=__HIVE_DEFAULT_PARTITION__/data.csv" events "region IS NULL" "" "" nonempty
view ev_virt_a_b        "$E/region=a%2Fb/data.csv" events "region = 'a/b'" "" "" nonempty
view ev_virt_space_raw  "$E/year=2024/dt=2024-01-02/region=us west/data.csv" events \
                        "year = 2024 AND dt = '2024-01-02' AND region = 'us west'" "" "" nonempty
view ev_virt_reorder    "$E/region=eu/year=2024/dt=2024-01-01/data.csv" events \
                        "year = 2024 AND dt = '2024-01-01' AND region = 'eu'" "" "" nonempty
view ev_virt_nomatch    "$E/year=1999/data.csv" events "year = 1999" "" ""
view codes_virt_int     "codes/code=10/data.csv" codes "code = 10" "" "" nonempty
# Data-column COL=VALUE (typed by the column).
view ev_eq_i32          "$E/i32=42/data.csv" events "i32 = 42" "" "" nonempty
view ev_eq_flag         "$E/year=2023/flag=false/data.csv" events "year = 2023 AND flag = false" "" "" nonempty
view ev_eq_s_comma      "$E/s=with,comma/data.csv" events "s = 'with,comma'" "" "" nonempty
view ev_eq_s_quotes     "$E/s=with \"quotes\"/data.csv" events "s = 'with \"quotes\"'" "" "" nonempty
view ev_eq_s_pct        "$E/s=O%27Neil/data.csv" events "s = 'O''Neil'" "" "" nonempty
view ev_eq_s_nl         "$E/s=two%0Alines/data.csv" events "s = 'two' || chr(10) || 'lines'" "" "" nonempty
view ev_eq_d            "$E/d=935.41/data.csv" events "d = 935.41" "" "" nonempty
view ev_eq_amount       "$E/amount=47315.09/data.csv" events "amount = 47315.09" "" "" nonempty
view ev_eq_ts           "$E/ts=2023-12-31 05:44:25/data.csv" events "ts = TIMESTAMP '2023-12-31 05:44:25'" "" "" nonempty
view users_eq_name      "users/name=Ken O'Neil, Pat/data.csv" users "name = 'Ken O''Neil, Pat'" "" "" nonempty
view users_eq_date      "users/signup=2021-03-04/data.csv" users "signup = DATE '2021-03-04'" "" "" nonempty
# where= expressions.
view w_cmp_and          "$E/where=d > 100 AND d < 200/data.csv" events "d > 100 AND d < 200" "" "" nonempty
view w_nan              "$E/where=d = 'nan'/select=id,d/data.csv" events "d = 'nan'::DOUBLE" "id, d" "" nonempty
view w_huge             "$E/where=d > 1e300/select=id,d/data.csv" events "d > 1e300" "id, d" "" nonempty
view w_negzero          "$E/where=d = 0/select=id,d/data.csv" events "d = 0" "id, d" "" nonempty
view w_ts_range         "$E/where=ts >= '2024-01-01 12:00' AND ts < '2024-01-01 13:00'/data.csv" events \
                        "ts >= '2024-01-01 12:00' AND ts < '2024-01-01 13:00'" "" "" nonempty
view w_tsz              "$E/where=tsz < '2023-12-31 02:00:00'/select=id,tsz/data.csv" events \
                        "tsz < TIMESTAMPTZ '2023-12-31 02:00:00+00'" "id, tsz" "" nonempty
view w_between          "$E/where=amount BETWEEN -100 AND 100.50/data.csv" events "amount BETWEEN -100 AND 100.50" "" "" nonempty
view w_in               "$E/where=s IN ('plain', 'with,comma', '')/data.csv" events "s IN ('plain', 'with,comma', '')" "" "" nonempty
view w_not_in           "$E/year=2023/where=s NOT IN ('plain', 'u5')/select=id,s/data.csv" events \
                        "year = 2023 AND s NOT IN ('plain', 'u5')" "id, s" "" nonempty
view w_not_or_null      "$E/where=NOT (i32 < 50) OR i32 IS NULL/select=id,i32/data.csv" events \
                        "NOT (i32 < 50) OR i32 IS NULL" "id, i32" "" nonempty
view w_arith            "$E/where=i32 % 7 = 3 AND i32 + 1 > 50/select=id,i32/data.csv" events \
                        "i32 % 7 = 3 AND i32 + 1 > 50" "id, i32" "" nonempty
view w_like_pct         "$E/where=s LIKE '%25quote%25'/select=id,s/data.csv" events "s LIKE '%quote%'" "id, s" "" nonempty
view w_like_underscore  "$E/where=s LIKE 'two_lines'/select=id,s/data.csv" events "s LIKE 'two_lines'" "id, s" "" nonempty
view w_not_like         "$E/year=2023/where=s NOT LIKE 'u%'/select=id,s/data.csv" events \
                        "year = 2023 AND s NOT LIKE 'u%'" "id, s" "" nonempty
view w_str_quoted       "$E/where=s = 'O''Neil'/select=id,s/data.csv" events "s = 'O''Neil'" "id, s" "" nonempty
# Inside where=, only %2F (a '/') and %25 (a '%') are escapes; every other
# '%' is literal, as pqtool --where reads it (issue 23: LIKE '%ab%' was
# EINVAL, byte 0xAB, and LIKE '%41%' ran as LIKE 'A%').
view w_like_hexlike     "$E/where=s LIKE '%ab%'/select=id,s/data.csv" events "s LIKE '%ab%'" "id, s" "" nonempty
view w_like_digits      "$E/where=s LIKE '%41%' OR s LIKE '%25 not%'/select=id,s/data.csv" events \
                        "s LIKE '%41%' OR s LIKE '% not%'" "id, s" "" nonempty
view w_like_bc          "$E/where=s LIKE '%bc'/select=id,s/data.csv" events "s LIKE '%bc'" "id, s" "" 
view w_slash            "$E/where=region = 'a%2Fb' AND i32 > 90/data.csv" events "region = 'a/b' AND i32 > 90" "" "" nonempty
# Each %XX decodes on its own: a lone % beside an escape stays a %, and the
# escape still decodes (decoding was all or nothing, and 'a%2Fb' was then
# compared as typed: no rows).
view w_lone_pct         "$E/where=region = 'a%2Fb' AND s LIKE '%'/data.csv" events "region = 'a/b' AND s LIKE '%'" "" "" nonempty
view w_lone_pct_end     "$E/where=s LIKE 'u%' AND region != 'a%2Fb'/select=id,s,region/data.csv" events \
                        "s LIKE 'u%' AND region != 'a/b'" "id, s, region" "" nonempty
view w_bool_col         "$E/where=flag AND i32 > 90/data.csv" events "flag AND i32 > 90" "" "" nonempty
view w_bool_null        "$E/where=flag IS NULL/select=id,flag/data.csv" events "flag IS NULL" "id, flag" "" nonempty
view w_part_or_data     "$E/where=dt = '2024-01-02' OR i32 = 1/select=id,i32,dt/data.csv" events \
                        "dt = '2024-01-02' OR i32 = 1" "id, i32, dt" "" nonempty
view w_part_only        "$E/where=year = 2024 AND dt < '2024-01-02'/data.csv" events "year = 2024 AND dt < '2024-01-02'" "" "" nonempty
view w_null_part        "$E/where=region IS NULL/data.csv" events "region IS NULL" "" "" nonempty
view w_ne_part          "$E/where=region <> 'eu'/select=id,region/data.csv" events "region <> 'eu'" "id, region" "" nonempty
view w_ids              "$E/where=id < 100 OR id > 73950/data.csv" events "id < 100 OR id > 73950" "" "" nonempty
view w_c_ops            "$E/where=!(i32 < 95) && (flag == true || s <> 'plain')/select=id,i32,flag,s/data.csv" events \
                        "NOT (i32 < 95) AND (flag = true OR s <> 'plain')" "id, i32, flag, s" "" nonempty
view w_quoted_ident     "$E/where=\"i32\" = 7/select=id,i32/data.csv" events "i32 = 7" "id, i32" "" nonempty
view w_list_null        "$E/where=tags IS NULL/select=id,tags/data.csv" events "tags IS NULL" "id, tags" "" nonempty
view w_users_float      "users/where=score > 99.5/data.csv" users "score > 99.5" "" "" nonempty
view w_users_dec        "users/where=balance < -4990000/data.csv" users "balance < -4990000" "" "" nonempty
view w_users_struct     "users/where=address IS NULL AND plan = 'pro'/data.csv" users "address IS NULL AND plan = 'pro'" "" "" nonempty
view w_str_int          "$E/where=year = '2024' AND i32 < 3/select=id,year/data.csv" events "year = 2024 AND i32 < 3" "id, year" "" nonempty
view w_str_dec          "$E/where=amount > '69000.5'/select=id,amount/data.csv" events "amount > 69000.5" "id, amount" "" nonempty
view w_str_float        "$E/where=d < '-1.4e5'/select=id,d/data.csv" events "d < -1.4e5" "id, d" "" nonempty
view w_date_between     "$E/where=dt BETWEEN '2023-12-31' AND '2024-01-01' AND i32 = 0/data.csv" events \
                        "dt BETWEEN '2023-12-31' AND '2024-01-01' AND i32 = 0" "" "" nonempty
view w_false            "$E/where=false/data.csv" events "false" "" ""
view w_null_lit         "$E/where=i32 = NULL/data.csv" events "i32 = NULL" "" ""
view w_two_wheres       "$E/where=i32 < 50/where=flag/data.csv" events "i32 < 50 AND flag" "" "" nonempty
# select= and limit=.
view sel_reorder        "$E/select=region,id,tags/data.csv" events "" "region, id, tags" "" nonempty
view sel_spaces         "$E/select=s, d ,year/data.csv" events "" "s, d, year" "" nonempty
view sel_users          "users/select=address,nums,name/data.csv" users "" "address, nums, name" "" nonempty
view lim_7              "$E/limit=7/data.csv" events "" "" 7 nonempty
view lim_0              "$E/limit=0/data.csv" events "" "" 0
view lim_big            "users/limit=100000/data.csv" users "" "" 100000 nonempty
view lim_part           "$E/year=2024/dt=2024-01-02/limit=5000/data.csv" events "year = 2024 AND dt = '2024-01-02'" "" 5000 nonempty
# Stacked components, several orders (bytes compared below too).
view stack_a            "$E/year=2024/where=i32 < 10/select=id,i32,s,region/limit=50/data.csv" events \
                        "year = 2024 AND i32 < 10" "id, i32, s, region" 50 nonempty
view stack_b            "$E/limit=50/select=id,i32,s,region/where=i32 < 10/year=2024/data.csv" events \
                        "year = 2024 AND i32 < 10" "id, i32, s, region" 50 nonempty
view stack_c            "$E/where=i32 < 10/year=2024/limit=50/select=id,i32,s,region/data.csv" events \
                        "year = 2024 AND i32 < 10" "id, i32, s, region" 50 nonempty
view stack_d            "$E/year=2024/dt=2024-01-01/region=eu/where=flag/select=tags,id/limit=20/data.csv" events \
                        "year = 2024 AND dt = '2024-01-01' AND region = 'eu' AND flag" "tags, id" 20 nonempty
view stack_e            "$E/select=tags,id/region=eu/limit=20/dt=2024-01-01/where=flag/year=2024/data.csv" events \
                        "year = 2024 AND dt = '2024-01-01' AND region = 'eu' AND flag" "tags, id" 20 nonempty
# No cap drops a term (69 AND terms returned every row; so did 64 stacked
# where= components before a 65th): long conjunctions, one component or many.
long_and="id >= -1" stacked=
for k in $(seq 2 68); do long_and="$long_and AND id >= -$k"; done
for k in $(seq 1 64); do stacked="$stacked/where=id >= -$k"; done
view long_and_69        "$E/where=$long_and AND id = 7/select=id,i32/data.csv" events "$long_and AND id = 7" "id, i32" "" nonempty
view long_stack_65      "$E${stacked}/where=id = 7/select=id,i32/data.csv" events "id = 7" "id, i32" "" nonempty
# The corrupt-file table: views that do not touch a bad file work.
view broken_ok_real     "broken/k=1/data.csv" broken "k = 1" "" "" nonempty
view broken_ok_where    "broken/where=k IN (1, 5)/data.csv" broken "k IN (1, 5)" "" "" nonempty
view broken_ok_virtual  "broken/k=5/select=v/limit=10/data.csv" broken "k = 5" "v" 10 nonempty

stats_before=$WORK/stats.before
cat "$MNT/.pqfs/stats" >"$stats_before"
run_views

# ---------------------------------------------------------------- equal views, equal bytes
# Through pipes: `cmp -s` on the files themselves trusts st_size, which is 0
# for a view not complete yet and exact for one read before (SPEC section 3),
# and says "differ" without reading (see the size checks below).
same_bytes() {
    local a=$1 b
    shift
    for b in "$@"; do
        if cmp -s <(cat "$MNT/$a") <(cat "$MNT/$b"); then pass "same bytes: $a = $b"; else fail "different bytes: '$a' vs '$b'"; fi
    done
}
same_bytes "$E/year=2024/where=i32 < 10/select=id,i32,s,region/limit=50/data.csv" \
    "$E/limit=50/select=id,i32,s,region/where=i32 < 10/year=2024/data.csv" \
    "$E/where=i32 < 10/year=2024/limit=50/select=id,i32,s,region/data.csv" \
    "$E/where=year = 2024/where=i32 < 10/select=id, i32, s, region/limit=50/data.csv"
same_bytes "$E/year=2024/dt=2024-01-01/region=eu/data.csv" "$E/region=eu/year=2024/dt=2024-01-01/data.csv" \
    "$E/year=2024/region=eu/dt=2024-01-01/data.csv" "$E/where=region = 'eu' AND dt = '2024-01-01' AND year = 2024/data.csv"
same_bytes "$E/year=2024/dt=2024-01-01/region=a%2Fb/data.csv" "$E/year=2024/dt=2024-01-01/where=region = 'a%2Fb'/data.csv" \
    "$E/region=a%2Fb/data.csv"
same_bytes "$E/year=2024/dt=2024-01-02/region=us%20west/data.csv" "$E/year=2024/dt=2024-01-02/region=us west/data.csv"
same_bytes "users/name=Ken O'Neil, Pat/data.csv" "users/name=Ken%20O%27Neil%2C%20Pat/data.csv" \
    "users/where=name = 'Ken O''Neil, Pat'/data.csv"
same_bytes "$E/where=i32 < 50/where=flag/data.csv" "$E/where=flag/where=i32 < 50/data.csv" "$E/where=i32 < 50 AND flag/data.csv"
same_bytes "$E/region=__HIVE_DEFAULT_PARTITION__/data.csv" "$E/where=region IS NULL/data.csv"
# A quoted SQL literal in COL=VALUE is its text, below a real directory or
# as a filter, on partition and data columns (issue 23: region='eu' matched
# nothing, silently).
same_bytes "$E/region=eu/data.csv" "$E/region='eu'/data.csv"
same_bytes "$E/year=2024/dt=2024-01-01/region=eu/data.csv" "$E/year=2024/dt=2024-01-01/region='eu'/data.csv"
same_bytes "users/name=Ken O'Neil, Pat/data.csv" "users/name='Ken O''Neil, Pat'/data.csv"
# Repeatable: the same view read again (from the result cache) and re-read at once by two readers.
cat "$MNT/$E/data.csv" >"$WORK/ev1.csv" & r1=$!
cat "$MNT/$E/data.csv" >"$WORK/ev2.csv" & r2=$!
wait "$r1" "$r2"
if cmp -s "$WORK/ev1.csv" "$WORK/ev2.csv" && cmp -s "$WORK/ev1.csv" "$WORK/actual/ev_root.csv"; then
    pass "events/data.csv repeatable"
else
    fail "events/data.csv differs between reads"
fi

# ---------------------------------------------------------------- canonical CSV, exact bytes
# codes: x INTEGER, code inferred int64 (leading zeros gone, as DuckDB infers).
want=$'x,code\n0,1\n1,1\n2,1\n10,10\n11,10\n12,10\n20,100\n21,100\n22,100\n'
if [ "$(cat "$MNT/codes/data.csv"; echo .)" = "$want." ]; then pass "codes/data.csv exact"; else
    fail "codes/data.csv: expected $(printf %q "$want") got $(printf %q "$(cat "$MNT/codes/data.csv")")"; fi
# Header, NULL as an empty unquoted field, "" for the empty string, quotes doubled,
# newlines inside quotes, decimals with their scale, UTC timestamps with +00.
python3 - "$MNT/$E/data.csv" "$WORK/actual/ev_root.csv" <<'PY' && pass "canonical CSV details" || fail "canonical CSV details (above)"
import re, sys
data = open(sys.argv[1], 'rb').read()
bad = []
if not data.startswith(b'id,i32,d,s,ts,tsz,amount,flag,tags,year,dt,region\n'): bad.append('header')
if b'\r\n' in data.replace(b'"cr\r\nlf"', b''): bad.append('CRLF line end outside a quoted field')
if b',"",' not in data: bad.append('no "" for an empty string')
if not re.search(rb'\n\d+,,', data): bad.append('no empty unquoted NULL for i32')
if b'"with ""quotes"""' not in data: bad.append('quotes not doubled')
if b'"two\nlines"' not in data: bad.append('newline not kept inside quotes')
if not re.search(rb',-?\d+\.\d\d,(true|false|),', data): bad.append('decimal without scale 2')
if not re.search(rb',\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00,', data): bad.append('tsz without +00')
if not re.search(rb',\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6},', data): bad.append('ts micros')
if b',nan,' not in data or b',inf,' not in data or b',-inf,' not in data: bad.append('nan/inf spelling')
if b',[],' not in data.replace(b'"[]"', b'[]') : bad.append('empty list')
if not re.search(rb'"\[""[^"]*"",null\]"', data): bad.append('list with a null element')
if bad:
    print('canonical CSV:', ', '.join(bad)); sys.exit(1)
PY

# ---------------------------------------------------------------- python csv module and DuckDB read_csv
# A reader's view: csv.reader parses every row with the header's field count, the
# same rows as DuckDB's answer, strings identical (commas, quotes, CR/LF, UTF-8).
python3 - "$WORK/expected/ev_root.csv" "$WORK/actual/ev_root.csv" "$WORK/expected/users_root.csv" \
    "$WORK/actual/users_root.csv" <<'PY' && pass "csv module parses data.csv" || fail "csv module (above)"
import csv, sys
ok = True
for exp, act, cols in ((sys.argv[1], sys.argv[2], ('s', 'region', 'dt')), (sys.argv[3], sys.argv[4], ('name', 'plan', 'signup'))):
    e = list(csv.reader(open(exp, newline='', encoding='utf-8')))
    a = list(csv.reader(open(act, newline='', encoding='utf-8')))
    if len(e) != len(a) or e[0] != a[0]:
        print(act, 'rows/header', len(e), len(a), a[0]); ok = False; continue
    if any(len(r) != len(a[0]) for r in a):
        print(act, 'ragged rows'); ok = False
    for c in cols:
        i = a[0].index(c)
        diff = [(k, e[k][i], a[k][i]) for k in range(1, len(a)) if e[k][i] != a[k][i]]
        if diff:
            print(act, c, diff[:3]); ok = False
sys.exit(0 if ok else 1)
PY
nrows=$(($(python3 -c 'import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1], newline=""))))' "$WORK/expected/ev_root.csv") - 1))
# DuckDB's read_csv on a view read completely before (stat gives the exact size).
duck_count() { node "$here/duck.mjs" sql "SELECT count(*) FROM read_csv('$MNT/$1', header = true, allow_quoted_nulls = false)" 2>&1 | head -3 || true; }
got=$(duck_count "$E/data.csv")
if [ "$got" = "$nrows" ]; then pass "DuckDB read_csv events/data.csv"; else fail "DuckDB read_csv('events/data.csv'): expected $nrows rows, got: $got"; fi
cat "$MNT/$E/year=2024/select=id,s/data.csv" >/dev/null
got=$(node "$here/duck.mjs" sql "SELECT count(*) FROM read_csv('$MNT/$E/year=2024/select=id,s/data.csv', header = true,
        allow_quoted_nulls = false, columns = {'id': 'BIGINT', 's': 'VARCHAR'}) m
    POSITIONAL JOIN (SELECT id, s FROM read_parquet('$LAKE/events/**/part-*.parquet', hive_partitioning = true) WHERE year = 2024) p
    WHERE m.id IS DISTINCT FROM p.id OR m.s IS DISTINCT FROM p.s" 2>&1 | head -3) || true
if [ "$got" = 0 ]; then pass "DuckDB read_csv strings identical"; else fail "DuckDB read_csv of year=2024/select=id,s: $got rows differ from the Parquet"; fi
# ...and on a view nobody read yet: stat says 0 bytes (SPEC section 3), and
# DuckDB believes it.
got=$(duck_count "$E/select=id,s,tags,region/data.csv")
if [ "$got" = "$nrows" ]; then pass "DuckDB read_csv on a fresh view"; else
    conflict "DuckDB read_csv on a view not read before (size 0 in stat) gives: $(echo $got | head -c 150), expected $nrows rows"; fi
# sized=1: data.csv made on its lookup, its size exact before any read, so
# DuckDB's read_csv, tar and shutil.copyfile take it whole (issue 23).
sz="$MNT/$E/select=id,s,region/sized=1/data.csv"
s0=$(stat -c %s "$sz")
got=$(duck_count "$E/select=id,s,region/sized=1/data.csv")
[ "$s0" -gt 0 ] && [ "$got" = "$nrows" ] && pass "sized=1: exact size on the first stat, DuckDB read_csv reads every row" ||
    fail "sized=1: stat size $s0, DuckDB read_csv $got rows (want $nrows)"
[ "$(cat "$sz" | wc -c)" = "$s0" ] && pass "sized=1: the size is the bytes" || fail "sized=1: $(cat "$sz" | wc -c) bytes, stat said $s0"
python3 - "$MNT/$E/select=id,region/sized=1/data.csv" "$WORK/sized-copy.csv" <<'PY' && pass "sized=1: shutil.copyfile copies a data.csv not read before" ||
import shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
got = open(sys.argv[2], 'rb').read()
sys.exit(0 if got and got == open(sys.argv[1], 'rb').read() else 'copied %d bytes' % len(got))
PY
    fail "sized=1 and shutil.copyfile (above)"
expect_errno_plain() { [ "$(errno_of "$2" "$MNT/$3")" = "$1" ] && pass "$2 '$3': $1" || fail "$2 '$3': $(errno_of "$2" "$MNT/$3"), want $1"; }
expect_errno_plain EINVAL stat "$E/sized=2"
expect_errno_plain EINVAL stat "$E/sized=1/sized=0"

# ---------------------------------------------------------------- readdir
# d_ino from readdir is the st_ino stat gives (find -inum, tar and rsync
# use them); numbers were the listing position.
python3 - "$MNT" "$MNT/$E" "$MNT/$E/year=2024" <<'PY' && pass "readdir's d_ino equals stat's st_ino" || fail "d_ino and st_ino differ (above)"
import os, sys
bad = []
for d in sys.argv[1:]:
    for e in os.scandir(d):
        st = os.stat(os.path.join(d, e.name))
        if e.inode() != st.st_ino: bad.append('%s/%s: d_ino %d, st_ino %d' % (d, e.name, e.inode(), st.st_ino))
if bad: sys.exit('\n'.join(bad[:5]))
PY
listing() { (cd "$1" && ls -1A) | grep -vx 'data.parquet' | tr '\n' ' ' | sed 's/ $//'; }
expect_ls() {
    local got
    got=$(listing "$MNT/$1" 2>&1) || true
    if [ "$got" = "$2" ]; then pass "ls $1"; else fail "ls '$1': expected [$2] got [$got]"; fi
}
expect_ls "" "broken codes events users"
expect_ls "$E" "data.csv plan.txt schema.txt year=2023 year=2024"
expect_ls "$E/year=2024" "data.csv dt=2024-01-01 dt=2024-01-02 plan.txt schema.txt"
expect_ls "$E/year=2024/dt=2024-01-01" \
    "data.csv plan.txt region=__HIVE_DEFAULT_PARTITION__ region=a%2Fb region=eu region=us schema.txt"
expect_ls "$E/year=2023/dt=2023-12-31/region=eu" "data.csv plan.txt schema.txt"
expect_ls "users" "data.csv plan.txt schema.txt"
expect_ls "codes" "code=001 code=010 code=100 data.csv plan.txt schema.txt"
expect_ls ".pqfs" "errors stats"
# Below a where=: only partitions that can hold matching rows (SQL three-valued logic).
expect_ls "$E/where=year = 2024" "data.csv plan.txt schema.txt year=2024"
expect_ls "$E/where=year > 2030" "data.csv plan.txt schema.txt"
expect_ls "$E/year=2024/where=dt >= '2024-01-02'" "data.csv dt=2024-01-02 plan.txt schema.txt"
expect_ls "$E/year=2024/dt=2024-01-01/where=region IS NULL" \
    "data.csv plan.txt region=__HIVE_DEFAULT_PARTITION__ schema.txt"
expect_ls "$E/year=2024/dt=2024-01-01/where=region = 'a%2Fb'" "data.csv plan.txt region=a%2Fb schema.txt"
expect_ls "$E/year=2024/dt=2024-01-02/where=region <> 'eu'" "data.csv plan.txt region=us%20west schema.txt"
expect_ls "$E/year=2024/dt=2024-01-02/where=region = 'us west' OR i32 = 1" \
    "data.csv plan.txt region=__HIVE_DEFAULT_PARTITION__ region=eu region=us%20west schema.txt"
expect_ls "$E/year=2024/dt=2024-01-02/region=us west" "data.csv plan.txt region=us%20west schema.txt"
expect_ls "$E/year=2024/region=eu" "data.csv dt=2024-01-01 dt=2024-01-02 plan.txt schema.txt"
# year=2023 could hold dt=2024-01-01 as far as the year level knows.
expect_ls "$E/where=dt = '2024-01-01'" "data.csv plan.txt schema.txt year=2023 year=2024"
expect_ls "$E/where=dt = '2024-01-01'/year=2023" "data.csv plan.txt schema.txt"
# find(1) below a where=: each listed partition is the real directory, which
# lists its own subdirectories that can match (not itself again, forever).
walk() { (cd "$MNT/$1" && timeout 30 find . -type d | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'); }
got=$(walk "$E/where=dt >= '2024-01-02'" 2>&1) || true
want=". ./year=2023 ./year=2024 ./year=2024/dt=2024-01-02 ./year=2024/dt=2024-01-02/region=__HIVE_DEFAULT_PARTITION__"
want+=" ./year=2024/dt=2024-01-02/region=eu ./year=2024/dt=2024-01-02/region=us%20west"
[ "$got" = "$want" ] && pass "find below where=" || fail "find below where=dt >= '2024-01-02': expected [$want] got [$(echo "$got" | head -c 600)]"
got=$(walk "$E/select=id/limit=1" 2>&1) || true
want=$(cd "$LAKE/events" && find . -type d ! -path '*/plain' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] && pass "find below select=/limit=" || fail "find below select=id/limit=1: expected [$want] got [$(echo "$got" | head -c 600)]"
# Virtual components resolve (cd, stat) though never listed; raw part files are not shown.
if (cd "$MNT/$E/where=i32 = 1/select=id" && head -1 data.csv | grep -qx id); then pass "cd into a virtual view"; else fail "cd into a virtual view"; fi
if [ -d "$MNT/$E/limit=3" ] && [ -f "$MNT/$E/limit=3/schema.txt" ]; then pass "stat of virtual components"; else fail "stat of virtual components"; fi
if ls -1A "$MNT/$E/year=2023/dt=2023-12-31/region=eu" | grep -q 'part-\|_SUCCESS\|zero\|crc'; then
    fail "raw or ignored files listed in a leaf partition"; else pass "no raw files listed"; fi
if ls -1A "$MNT/$E/year=2024/dt=2024-01-01" | grep -qx plain; then fail "plain directory listed as a partition"; else pass "plain dir not listed"; fi
if ls -1A "$MNT" | grep -qx '.pqfs'; then fail ".pqfs listed at the root (it is hidden)"; else pass ".pqfs hidden"; fi

# pqtool pointed at a partition directory reads it as the table filtered to
# those values, partition columns included (as DuckDB's hive_partitioning
# and the mount's view of the same directory; it used to drop them): the
# same rows as the table root with those values as a filter.
"$PQTOOL" cat "$LAKE2/events/year=2024/dt=2024-01-01" --select id,year,dt,region >"$WORK/pqtool-partdir.csv" 2>&1 &&
    "$PQTOOL" cat "$LAKE2/events" --where "year = 2024 AND dt = '2024-01-01'" --select id,year,dt,region >"$WORK/pqtool-partdir-ref.csv" &&
    cmp -s "$WORK/pqtool-partdir.csv" "$WORK/pqtool-partdir-ref.csv" &&
    [ "$(wc -l <"$WORK/pqtool-partdir.csv")" -gt 1 ] && pass "pqtool on a partition directory: its rows with the partition columns" ||
    fail "pqtool on a partition directory: $(head -2 "$WORK/pqtool-partdir.csv")"

# Any number of partition directories in the path (16 were split off; the
# rest was read as the table's own path, without those columns).
deep=$WORK/deep/t deep_where=
for k in $(seq 1 20); do deep=$deep/k$k=$k; deep_where="$deep_where${deep_where:+ AND }k$k = $k"; done
mkdir -p "$deep" && cp "$(find "$LAKE2/events" -name 'part-*.parquet' | sort | head -1)" "$deep/"
"$PQTOOL" cat "$deep" --select id,k1,k20 >"$WORK/pqtool-deep.csv" 2>&1 &&
    "$PQTOOL" cat "$WORK/deep/t" --where "$deep_where" --select id,k1,k20 >"$WORK/pqtool-deep-ref.csv" &&
    cmp -s "$WORK/pqtool-deep.csv" "$WORK/pqtool-deep-ref.csv" && [ "$(wc -l <"$WORK/pqtool-deep.csv")" -gt 1 ] &&
    pass "pqtool on a partition directory 20 levels down: every partition column" ||
    fail "pqtool on a partition directory 20 levels down: $(head -2 "$WORK/pqtool-deep.csv")"

# ---------------------------------------------------------------- errors: EINVAL, ENOENT
errors_has() { grep -qF -- "$1" "$MNT/.pqfs/errors"; }
expect_errno() { # ERRNO OP PATH [TEXT expected in /.pqfs/errors]
    local got
    got=$(errno_of "$2" "$MNT/$3")
    if [ "$got" != "$1" ]; then fail "$2 '$3': expected $1, got $got"; return 0; fi
    if [ -n "${4:-}" ] && ! errors_has "$4"; then
        fail "$2 '$3': $1 as expected, but /.pqfs/errors has no line with '$4'"; return 0; fi
    pass "$2 '$3': $1"
}
expect_errno EINVAL stat "$E/where=nosuch = 1" "unknown column 'nosuch'"
# A partition value with a space at an end that no directory has is a typo,
# not a filter matching nothing (issue 23).
expect_errno EINVAL stat "$E/region= eu" "the value ' eu' begins or ends with a space"
expect_errno EINVAL stat "$E/year=2024/region=eu " "the value 'eu ' begins or ends with a space"
# tail -f /.pqfs/errors shows lines logged after it opened (issue 23: an
# open descriptor read nothing past its first text), and an open handle's
# fstat size grows with them.
timeout 6 tail -f "$MNT/.pqfs/errors" >"$WORK/tail.out" 2>&1 &
tail_pid=$!
python3 - "$MNT/.pqfs/errors" "$MNT/$E/where=tailcheck = 1" <<'PY' && pass "an open /.pqfs/errors reads the lines logged after its open" ||
import os, sys, time
with open(sys.argv[1], 'rb') as f:
    first = f.read()
    try:
        os.stat(sys.argv[2])
    except OSError:
        pass
    more = f.read()
    size = os.fstat(f.fileno()).st_size
sys.exit(0 if b"unknown column 'tailcheck'" in more and size == len(first) + len(more) else 'read %r after, fstat %d' % (more[:100], size))
PY
    fail "an open /.pqfs/errors (above)"
sleep 2.5 # tail polls each second
kill "$tail_pid" 2>/dev/null || true; wait "$tail_pid" 2>/dev/null || true
grep -q "unknown column 'tailcheck'" "$WORK/tail.out" && pass "tail -f /.pqfs/errors shows a new line" ||
    fail "tail -f /.pqfs/errors: '$(tail -c 300 "$WORK/tail.out")'"
expect_errno EINVAL list "$E/where=i32 >" "where=i32 >"
expect_errno EINVAL stat "$E/where=((/data.csv" "where=(("
expect_errno EINVAL read "$E/where=i32 = 'abc'/data.csv" "where=i32 = 'abc'"
expect_errno EINVAL stat "$E/where=s LIKE" "where=s LIKE"
# A %00 (a NUL byte) in a name or value: refused (region=a%00b was region=a)
expect_errno EINVAL stat "$E/year=2024/dt=2024-01-01/region=eu%00x" "NUL byte"
expect_errno EINVAL stat "$E/region=%00" "NUL byte"
expect_errno EINVAL stat "$E/where=s = 'a%00'/data.csv" "NUL byte"
# %27 is not a quote inside where= (only %2F and %25 decode): a '%' operator here.
expect_errno EINVAL stat "$E/where=s = %27O%27/data.csv" "where=s = %27O%27"
expect_errno EINVAL stat "$E/where=" "where="
expect_errno EINVAL stat "$E/select=id,nosuch" "nosuch"
expect_errno EINVAL stat "$E/select=id/select=s" "select"
# pqtool as the paths: a second --select or --limit is refused (the last won)
"$PQTOOL" cat "$LAKE2/events" --select id --select s >/dev/null 2>&1 && fail "pqtool took two --select" || pass "pqtool: two --select refused"
"$PQTOOL" cat "$LAKE2/events" --limit 1 --limit 2 >/dev/null 2>&1 && fail "pqtool took two --limit" || pass "pqtool: two --limit refused"
"$PQTOOL" cat "$LAKE2/events" --select id --limit 1 >/dev/null 2>&1 && pass "pqtool: one --select and one --limit" || fail "pqtool: --select id --limit 1 failed"
expect_errno EINVAL stat "$E/limit=abc" "limit=abc"
expect_errno EINVAL stat "$E/limit=-1" "limit=-1"
expect_errno EINVAL stat "$E/limit=99999999999999999999" "limit=99999999999999999999"
expect_errno EINVAL stat "$E/limit=+5" "limit=+5"
"$PQTOOL" cat "$LAKE2/events" --limit 99999999999999999999 >/dev/null 2>"$WORK/limit.err" && fail "pqtool took a --limit past int64" ||
    { grep -q "^pqtool: --limit: '99999999999999999999' is not a row count" "$WORK/limit.err" && pass "pqtool: --limit past int64 refused, saying why" ||
      fail "pqtool --limit past int64: $(cat "$WORK/limit.err")"; }
for l in +2 " 2" -0; do
    "$PQTOOL" cat "$LAKE2/events" --limit "$l" >/dev/null 2>&1 && fail "pqtool took --limit '$l'" || pass "pqtool: --limit '$l' refused (digits only)"
done
"$PQTOOL" cat "$LAKE2/events" --where "nosuch > 1" >/dev/null 2>"$WORK/where.err" || true
grep -qx "pqtool: $LAKE2/events: unknown column 'nosuch'" "$WORK/where.err" && pass "pqtool: a bad --where names the path" ||
    fail "pqtool --where nosuch: $(cat "$WORK/where.err")"
"$PQTOOL" plan "$LAKE2/events" --stats >/dev/null 2>&1 && fail "pqtool plan took --stats (a plan has no scan counters)" || pass "pqtool plan: --stats refused"
expect_errno EINVAL stat "$E/limit=1/limit=2" "limit"
expect_errno EINVAL stat "$E/nosuch=1" "nosuch"
expect_errno EINVAL stat "$E/i32=abc" "i32"
expect_errno EINVAL stat "$E/dt=2024-13-45" "dt"
expect_errno EINVAL stat "$E/year=2024/where=year = 'x'" "year = 'x'"
expect_errno ENOENT stat "nosuch"
expect_errno ENOENT stat "nosuch/data.csv"
expect_errno ENOENT stat "$E/nosuch"
expect_errno ENOENT stat "$E/data.txt"
expect_errno ENOENT stat "$E/year=2024/dt=2024-01-01/plain"
expect_errno ENOENT stat "$E/year=2023/dt=2023-12-31/region=eu/part-0.parquet"
expect_errno ENOENT stat "$E/year=2023/dt=2023-12-31/region=eu/_SUCCESS"
expect_errno ENOENT stat ".pqfs/nosuch"
expect_errno ENOENT stat ".hidden"
# Not tables (SPEC section 2): no Parquet inside, or a name starting with _ or '.'.
expect_errno ENOENT stat "empty"
expect_errno ENOENT stat "empty/data.csv"
expect_errno ENOENT stat "_staging"
expect_errno ENOENT stat ".trash/data.csv"
expect_errno ENOENT stat "README.txt"
# Integer overflow is an error (SPEC section 4), at lookup or when read.  (Not
# `id * BIG > 0`: DuckDB and pqfs both move the constant: id > 0.)
got=$(errno_of read "$MNT/$E/where=(id * 4611686018427387904) % 7 = 1/data.csv")
if [ "$got" = OK ]; then fail "where=(id * 4611686018427387904) % 7 = 1: read without error"
elif grep -qi 'overflow' "$MNT/.pqfs/errors"; then pass "integer overflow: $got"
else fail "integer overflow: $got, but /.pqfs/errors does not say overflow"; fi
errno=$(errno_of stat "$MNT/$E/data.csv/x")
case $errno in ENOTDIR|ENOENT) pass "data.csv/x: $errno" ;; *) fail "stat data.csv/x: expected ENOTDIR or ENOENT, got $errno" ;; esac
# What SPEC section 6 refuses at once (EPERM): writing a view file, mkdir of
# anything but a table, deleting.  Writes that work: tests/mount/write.sh.
for op in "touch $MNT/$E/data.csv" "mkdir $MNT/$E/newdir" "rm -f $MNT/$E/data.csv" "touch $MNT/$E/select=id/new.csv"; do
    if out=$(timeout 10 $op 2>&1); then fail "'$op' succeeded"; else
        case $out in *"Read-only file system"*|*"Operation not permitted"*) pass "refused: $op" ;;
            *) fail "'$op': expected EROFS or EPERM, got: $out" ;; esac
    fi
done

# ---------------------------------------------------------------- the corrupt files
for v in "broken/data.csv" "broken/k=2/data.csv" "broken/k=3/data.csv" "broken/where=k > 1/data.csv" \
         "broken/select=id/data.csv" "broken/k=2/plan.txt" "broken/k=2/data.parquet" "broken/where=k > 1/data.parquet" \
         "broken/k=3/data.parquet" "broken/k=3/where=id > 8/data.parquet"; do
    # (k=3's row groups match entirely: copied byte for byte, its pages are walked, not decoded)
    if cat "$MNT/$v" >/dev/null 2>"$WORK/cat.err"; then fail "cat '$v' succeeded over a corrupt file"
    elif grep -q "Input/output error" "$WORK/cat.err"; then pass "EIO: $v"
    else fail "cat '$v': expected EIO, got: $(cat "$WORK/cat.err")"; fi
done
errors_has "broken/k=2/part-0.parquet" && pass "errors names the truncated file" ||
    fail "/.pqfs/errors does not name broken/k=2/part-0.parquet"
errors_has "broken/k=3/part-0.parquet" && pass "errors names the garbled file" ||
    fail "/.pqfs/errors does not name broken/k=3/part-0.parquet"
# A file whose schema does not fit (SPEC section 2): an error for the views that touch it.
if cat "$MNT/broken/k=4/data.csv" >/dev/null 2>"$WORK/cat.err"; then fail "broken/k=4 (other schema) read without error"
elif grep -q "Input/output error" "$WORK/cat.err"; then pass "EIO: broken/k=4 (other schema)"
else fail "broken/k=4: expected EIO, got: $(cat "$WORK/cat.err")"; fi
errors_has "broken/k=4/part-0.parquet" && pass "errors names the other-schema file" ||
    fail "/.pqfs/errors does not name broken/k=4/part-0.parquet"
# The failing views leave the rest alone: the good views again, and another table.
cmp -s "$MNT/broken/k=1/data.csv" "$WORK/actual/broken_ok_real.csv" && pass "broken/k=1 still fine" ||
    fail "broken/k=1/data.csv changed after the failures"
"$PQTOOL" cat "$MNT/broken/k=1/data.parquet" 2>/dev/null | cmp -s - "$WORK/actual/broken_ok_real.csv" &&
    pass "broken/k=1/data.parquet still fine" || fail "broken/k=1/data.parquet unreadable or changed after the failures"
cmp -s "$MNT/users/data.csv" "$WORK/actual/users_root.csv" && pass "users still fine" ||
    fail "users/data.csv changed after the failures"
# A view's schema is the union of its files' (schema evolution): one whose
# footer cannot be read fails schema.txt too; a partition without it does not.
if cat "$MNT/broken/k=2/schema.txt" >/dev/null 2>"$WORK/cat.err"; then fail "broken/k=2/schema.txt read over a truncated file"
elif grep -q "Input/output error" "$WORK/cat.err"; then pass "EIO: broken/k=2/schema.txt (its file's footer is the schema's too)"
else fail "broken/k=2/schema.txt: expected EIO, got: $(cat "$WORK/cat.err")"; fi
head -c 200 "$MNT/broken/k=1/schema.txt" | grep -q '^name,type' && pass "schema.txt of a good partition of that table" ||
    fail "broken/k=1/schema.txt unreadable"
kill -0 "$MAIN_PID" 2>/dev/null && pass "daemon alive after the corrupt files" || fail "daemon died"

# ---------------------------------------------------------------- schema.txt, plan.txt
want_schema='name,type,nullable,partition
id,INT64,true,false
i32,INT32,true,false
d,DOUBLE,true,false
s,STRING,true,false
ts,TIMESTAMP(MICROS),true,false
tsz,"TIMESTAMP(MICROS,UTC)",true,false
amount,"DECIMAL(12,2)",true,false
flag,BOOLEAN,true,false
tags,LIST<STRING>,true,false
year,INT64,true,true
dt,DATE,true,true
region,STRING,true,true'
schema_ok() { # PATH: one line per column, 4 fields, the header; names and partition flags as wanted
    python3 - "$MNT/$1" "$2" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
want = [l.split(':') for l in sys.argv[2].split()]
ok = rows and rows[0] == ['name', 'type', 'nullable', 'partition'] and all(len(r) == 4 for r in rows)
ok = ok and [[r[0], r[3]] for r in rows[1:]] == want and all(r[2] in ('true', 'false') for r in rows[1:])
if not ok: print(rows)
sys.exit(0 if ok else 1)
PY
}
if [ "$(cat "$MNT/$E/schema.txt")" = "$want_schema" ]; then pass "events/schema.txt"; else
    fail "events/schema.txt:"; diff <(echo "$want_schema") "$MNT/$E/schema.txt" | sed 's/^/    /'; fi
schema_ok "$E/year=2024/dt=2024-01-01/region=eu/select=region,tags,id/schema.txt" "region:true tags:false id:false" &&
    pass "schema.txt of a select= view" || fail "schema.txt of a select= view (above)"
schema_ok "users/schema.txt" "user_id:false name:false signup:false plan:false score:false balance:false address:false nums:false" &&
    pass "users/schema.txt" || fail "users/schema.txt (above)"
grep -q '^signup,DATE,' "$MNT/users/schema.txt" && grep -q '^code,INT64,true,true$' "$MNT/codes/schema.txt" &&
    pass "schema.txt types" || fail "schema.txt types: $(cat "$MNT/users/schema.txt" "$MNT/codes/schema.txt" | tr '\n' ' ')"
# plan.txt: the predicate, the files of the matching partitions only, statistics pruning.
plan=$(cat "$MNT/$E/where=region = 'eu' AND id < 100/plan.txt")
files=$(grep -c '^file ' <<<"$plan" || true)
if [ "$files" = 7 ] && ! grep -q '^file .*region=us' <<<"$plan" && grep -q 'statistics [1-9]' <<<"$plan" &&
    grep -q "^predicate: .*region" <<<"$plan"; then pass "plan.txt"; else fail "plan.txt of where=region = 'eu' AND id < 100 (files: $files):"; echo "$plan" | head -20; fi
# The directories the listing pruned are never listed, but counted: the plan
# says how many (here the region directories other than eu), and so does
# /.pqfs/stats once a scan pruned some.
grep -qE '^files: 7 total, 0 pruned by partition; [1-9][0-9]* partition directories pruned at listing' <<<"$plan" &&
    pass "plan.txt counts the partition directories pruned at listing" ||
    fail "plan.txt does not count the directories pruned at listing: $(grep '^files:' <<<"$plan")"
grep -qE '^files: 0 total; [1-9][0-9]* partition director(y|ies) pruned at listing' "$MNT/$E/where=year = 1999/plan.txt" &&
    pass "plan.txt of an empty view counts the pruned directories" ||
    fail "plan.txt of where=year = 1999: $(cat "$MNT/$E/where=year = 1999/plan.txt")"
# A limit without a filter reads only the first row groups: the plan says
# the rest are not read, and selects only the limit's rows.
lplan=$(cat "$MNT/$E/limit=3/plan.txt")
grep -qE '^row groups: .* past the limit \(not read\)$' <<<"$lplan" && grep -q '^rows: [0-9]* total, 3 selected for decoding$' <<<"$lplan" &&
    pass "plan.txt of a limit= view" || fail "plan.txt of limit=3: $(grep -E '^(row groups|rows):' <<<"$lplan")"
p0=$(stat_val "$MNT" partition_dirs_pruned)
cat "$MNT/$E/where=year = 2023 AND i32 > 0/data.csv" >/dev/null
p1=$(stat_val "$MNT" partition_dirs_pruned)
[ "$p1" -gt "$p0" ] && pass "stats partition_dirs_pruned moved ($p0 -> $p1)" || fail "stats partition_dirs_pruned $p0 -> $p1"
grep -q 'no files can match\|files: 0 total' "$MNT/$E/where=year = 1999/plan.txt" && pass "plan.txt, nothing matches" ||
    fail "plan.txt of where=year = 1999: $(head -3 "$MNT/$E/where=year = 1999/plan.txt")"
[ "$(cat "$MNT/$E/year=2024/dt=2024-01-01/region=eu/plan.txt" | grep -c '^file ')" = 3 ] && pass "plan.txt of a leaf" ||
    fail "plan.txt of a leaf partition does not list its 3 files"

# ---------------------------------------------------------------- data.csv size (SPEC section 3)
# schema.txt and /.pqfs/* have exact sizes: Python's shutil copies with
# sendfile, which FUSE serves up to the size (a size-0 file copied as empty).
python3 - "$MNT/$E/schema.txt" "$MNT/.pqfs/stats" "$WORK/copied.txt" <<'PY' && pass "schema.txt and stats: exact sizes, shutil.copyfile copies them" ||
import os, shutil, sys
for src in sys.argv[1:3]:
    want = open(src, 'rb').read()
    shutil.copyfile(src, sys.argv[3])
    got = open(sys.argv[3], 'rb').read()
    size = os.stat(src).st_size
    if not want or size == 0 or (src.endswith('schema.txt') and (got != want or size != len(want))) or \
            (src.endswith('stats') and not got.startswith(b'source_read_requests ')):
        sys.exit('%s: stat size %d, read %d bytes, shutil copied %d' % (src, size, len(want), len(got)))
PY
    fail "schema.txt / stats sizes (above)"
# plan.txt: size 0 until the view's plan was made, then its exact size
# (issue 23: it stayed 0, and shutil.copyfile, tar and rsync copied it as
# 0 bytes); the next open serves that same text.
pv="$MNT/$E/where=i32 > 5/plan.txt"
ps0=$(stat -c %s "$pv")
pn=$(cat "$pv" | wc -c)
ps1=$(stat -c %s "$pv")
[ "$ps0" = 0 ] && [ "$pn" -gt 0 ] && [ "$ps1" = "$pn" ] && pass "plan.txt: size 0, then its exact size once read ($pn)" ||
    fail "plan.txt sizes: $ps0 before, $ps1 after reading $pn bytes"
python3 - "$pv" "$WORK/copied-plan.txt" <<'PY' && pass "shutil.copyfile copies a plan.txt read before" ||
import shutil, sys
want = open(sys.argv[1], 'rb').read()
shutil.copyfile(sys.argv[1], sys.argv[2])
got = open(sys.argv[2], 'rb').read()
sys.exit(0 if got == want and got else 'copied %d bytes of %d' % (len(got), len(want)))
PY
    fail "shutil.copyfile of plan.txt (above)"
# data.csv not yet complete: size 0 (SPEC), so sendfile copies nothing.
python3 - "$MNT/$E/where=i32 > 20/select=id/data.csv" "$WORK/copied.csv" <<'PY' && pass "shutil.copyfile of a fresh data.csv" ||
import os, shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
sys.exit(0 if os.path.getsize(sys.argv[2]) > 0 else 1)
PY
    conflict "shutil.copyfile (sendfile) of a data.csv not read before copies 0 bytes: its size is 0 until complete (SPEC section 3)"
v="$MNT/users/where=user_id < 100/data.csv"
s0=$(stat -c %s "$v")
[ "$s0" = 0 ] && pass "size 0 before the result is complete" || fail "stat size of a fresh data.csv: $s0, expected 0"
n=$(cat "$v" | wc -c)
s1=$(stat -c %s "$v")
[ "$s1" = "$n" ] && pass "exact size after a complete read ($n)" || fail "stat size after a complete read: $s1, expected $n"
[ "$(ls -l "$v" | awk '{print $5}')" = "$n" ] && pass "ls -l size" || fail "ls -l size of a complete data.csv"
python3 - "$v" "$n" <<'PY' && pass "fstat of an open handle after reading all" || fail "fstat of an open handle (above)"
import os, sys
with open(sys.argv[1], 'rb') as f:
    data = f.read()
    st = os.fstat(f.fileno()).st_size
if len(data) != int(sys.argv[2]) or st != len(data):
    print('read', len(data), 'fstat', st, 'want', sys.argv[2]); sys.exit(1)
PY
# Partial reads: head stops early, the rest of the file is still right afterwards.
head -c 1000 "$MNT/$E/year=2023/data.csv" >"$WORK/head.csv"
head -c 1000 "$WORK/actual/ev_root.csv" | cmp -s - "$WORK/head.csv" && pass "head -c 1000" || fail "head -c 1000 differs"
[ "$(head -1 "$MNT/$E/year=2024/data.csv")" = "id,i32,d,s,ts,tsz,amount,flag,tags,year,dt,region" ] && pass "head -1" || fail "head -1"
python3 - "$MNT/$E/data.csv" <<'PY' && pass "random offsets" || fail "random offsets (above)"
import os, random, sys
p = sys.argv[1]
whole = open(p, 'rb').read()
rnd = random.Random(7)
with open(p, 'rb') as f:
    for _ in range(200):
        off = rnd.randrange(0, len(whole) + 10)
        n = rnd.choice([1, 7, 4096, 65536, 1 << 20])
        f.seek(off)
        got = f.read(n)
        if got != whole[off:off + n]:
            print('offset', off, 'length', n); sys.exit(1)
PY

# ---------------------------------------------------------------- /.pqfs/stats
stats_after=$WORK/stats.after
cat "$MNT/.pqfs/stats" >"$stats_after"
moved() { # NAME: whether the counter grew since stats.before
    local a b
    a=$(awk -v k="$1" '$1 == k { print $2 }' "$stats_before")
    b=$(awk -v k="$1" '$1 == k { print $2 }' "$stats_after")
    if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]; then pass "stats $1 moved ($a -> $b)"; else fail "stats $1 did not move ($a -> $b)"; fi
}
for c in source_read_requests source_read_bytes source_list_requests listing_cache_hits footer_cache_hits \
         footer_cache_misses views_opened result_cache_hits results_started files_total row_groups_total \
         row_groups_pruned_statistics row_groups_fully_matched values_decoded rows_out errors; do
    moved "$c"
done
grep -qE '^[a-z_]+ [0-9]+$' "$stats_after" && ! grep -vqE '^[a-z_]+ [0-9]+$' "$stats_after" && pass "stats format" ||
    fail "stats lines are not 'name number'"
h0=$(stat_val "$MNT" result_cache_hits)
cat "$MNT/users/data.csv" >/dev/null
h1=$(stat_val "$MNT" result_cache_hits)
[ "$h1" -gt "$h0" ] && pass "re-read served from the result cache" || fail "result_cache_hits $h0 -> $h1 on a re-read"
# Equal views written differently share one result: spacing, parentheses,
# BETWEEN against two comparisons, the order of conjuncts and components.
cat "$MNT/$E/where=i32 >= 3 AND i32 <= 40/s=plain/data.csv" >"$WORK/eqview.a"
h0=$(stat_val "$MNT" result_cache_hits)
cat "$MNT/$E/s=plain/where=(i32 BETWEEN 3 AND 40)/data.csv" >"$WORK/eqview.b"
cat "$MNT/$E/where=s = 'plain'/where=i32<=40 and i32>=3/data.csv" >"$WORK/eqview.c"
h1=$(stat_val "$MNT" result_cache_hits)
[ "$h1" -ge $((h0 + 2)) ] && [ "$(wc -l <"$WORK/eqview.a")" -gt 1 ] && cmp -s "$WORK/eqview.a" "$WORK/eqview.b" && cmp -s "$WORK/eqview.a" "$WORK/eqview.c" &&
    pass "equal views written differently share one result" ||
    fail "equal views written differently: result_cache_hits $h0 -> $h1 (expected +2), or their bytes differ"

# ---------------------------------------------------------------- data.parquet and DuckDB
# Every view above also had its data.parquet compared (run_views).  Here:
# it is listed, and DuckDB reads it to the rows of its own query.
(cd "$MNT/$E" && ls -1A) | grep -qx data.parquet && pass "data.parquet listed" || fail "data.parquet not listed in $E"
got=$(node "$here/duck.mjs" sql "SELECT count(*) FROM read_parquet('$MNT/$E/data.parquet')" 2>&1 | head -3) || true
[ "$got" = "$nrows" ] && pass "DuckDB reads events/data.parquet" || fail "DuckDB read_parquet(events/data.parquet): expected $nrows rows, got: $got"
pqv="$E/year=2024/where=i32 < 10/select=id,i32,s,region"
got=$(node "$here/duck.mjs" sql "SELECT count(*) FROM (
      (SELECT id, i32, s, region FROM read_parquet('$MNT/$pqv/data.parquet')
       EXCEPT ALL SELECT id, i32, s, region FROM read_parquet('$LAKE/events/**/part-*.parquet', hive_partitioning = true)
       WHERE year = 2024 AND i32 < 10)
      UNION ALL
      (SELECT id, i32, s, region FROM read_parquet('$LAKE/events/**/part-*.parquet', hive_partitioning = true)
       WHERE year = 2024 AND i32 < 10
       EXCEPT ALL SELECT id, i32, s, region FROM read_parquet('$MNT/$pqv/data.parquet')))" 2>&1 | head -3) || true
[ "$got" = 0 ] && pass "DuckDB: a filtered data.parquet holds exactly the query's rows" ||
    fail "DuckDB: '$pqv/data.parquet' and the query differ by $got rows"

# ---------------------------------------------------------------- the lake changes (SPEC section 8)
# A handle opened before the change keeps its snapshot; after metadata_ttl new
# opens see the new file; a complete result of the old lake is not reused (its
# size is not reported for the new lake).
v=users/select=user_id,name/data.csv
old_users=$WORK/actual/users_root.csv
node "$here/duck.mjs" sql "COPY (SELECT (user_id + 10000)::INTEGER AS user_id, name || ' v2' AS name, signup, plan, score,
        balance, address, nums FROM read_parquet('$LAKE/users/part-0.parquet') WHERE user_id <= 700 ORDER BY user_id)
    TO '$WORK/new-part-1.parquet' (FORMAT parquet)" >/dev/null
python3 - "$MNT/$v" "$LAKE/users/part-1.parquet" "$WORK/new-part-1.parquet" "$WORK/snap-old.csv" <<'PY' &&
import os, shutil, sys
view, target, new, out = sys.argv[1:]
with open(view, 'rb') as f:
    first = f.read(100)
    shutil.copyfile(new, os.path.join(os.path.dirname(target), '.new.tmp'))
    os.rename(os.path.join(os.path.dirname(target), '.new.tmp'), target)
    rest = f.read()
open(out, 'wb').write(first + rest)
PY
    pass "read across a replacement" || fail "reading a handle across a replacement failed"
n_old=$(grep -c '' "$WORK/snap-old.csv" || true)
[ "$n_old" = 6001 ] && pass "open handle kept its snapshot" || fail "open handle across a replacement: $n_old lines, expected 6001"
sleep 1.6
s=$(stat -c %s "$MNT/users/data.csv")
[ "$s" = 0 ] && pass "size 0 for the changed lake" || fail "users/data.csv reports size $s after the lake changed (a stale result's size?)"
view ch_users_root "users/data.csv" users "" "" "" nonempty
view ch_users_new  "users/where=user_id > 10000/data.csv" users "user_id > 10000" "" "" nonempty
run_views
# A file added, then a file removed.
cp "$LAKE/users/part-0.parquet" "$WORK/p0.parquet"
node "$here/duck.mjs" sql "COPY (SELECT (user_id + 20000)::INTEGER AS user_id, name, signup, plan, score, balance, address, nums
    FROM read_parquet('$WORK/p0.parquet') WHERE user_id <= 50) TO '$LAKE/users/.add.tmp' (FORMAT parquet)" >/dev/null
python3 - "$MNT/users/select=user_id,name/data.parquet" "$LAKE/users/.add.tmp" "$LAKE/users/part-2.parquet" <<'PY' &&
import mmap, os, sys, time
# data.parquet maps (MAP_SHARED, as Polars and pyarrow's memory_map do); a
# mapping keeps its version's bytes while the lake changes, and the name
# then opens as the new version (another inode).
view, tmp, final = sys.argv[1:]
old = open(view, 'rb').read()
fd = os.open(view, os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
ino = os.fstat(fd).st_ino
if m[:] != old: sys.exit('mapped bytes differ from read bytes')
os.rename(tmp, final)
time.sleep(1.6)
new = open(view, 'rb').read()
if m[:] != old: sys.exit('the mapping changed under the reader')
if len(new) <= len(old) or os.stat(view).st_ino == ino: sys.exit('no new version after the change: %d -> %d bytes' % (len(old), len(new)))
PY
    pass "data.parquet: mmap, a mapping keeps its version, a new version after the change" || fail "data.parquet mmap/version (above)"
[ -f "$LAKE/users/part-2.parquet" ] || { mv "$LAKE/users/.add.tmp" "$LAKE/users/part-2.parquet"; sleep 1.6; }
view ch_users_added "users/data.csv" users "" "" "" nonempty
run_views
rm "$LAKE/users/part-0.parquet"
sleep 1.6
view ch_users_removed "users/data.csv" users "" "" "" nonempty
run_views
[ "$(grep -c '' "$MNT/users/data.csv")" = 751 ] && pass "users after the changes: 750 rows" || fail "users after the changes"
# A new partition directory and a new table appear after metadata_ttl.
mkdir -p "$LAKE/events/year=2025/dt=2025-01-01/region=eu" "$LAKE/users2"
cp "$LAKE/events/year=2024/dt=2024-01-02/region=eu/part-1.parquet" "$LAKE/events/year=2025/dt=2025-01-01/region=eu/part-0.parquet"
cp "$LAKE/users/part-1.parquet" "$LAKE/users2/part-0.parquet"
sleep 1.6
expect_ls "" "broken codes events users users2"
expect_ls "$E" "data.csv plan.txt schema.txt year=2023 year=2024 year=2025"
view ch_new_part   "$E/year=2025/data.csv" events "year = 2025" "" "" nonempty
view ch_new_root   "$E/where=dt > '2024-01-01'/select=id,year,dt,region/data.csv" events "dt > '2024-01-01'" "id, year, dt, region" "" nonempty
view ch_new_table  "users2/data.csv" users2 "" "" "" nonempty
run_views
# A corrupt file repaired: the view works after metadata_ttl (a failed result
# is not kept); a good file corrupted: its views fail (no stale rows served).
cp "$LAKE/broken/k=1/part-0.parquet" "$LAKE/broken/.fix.tmp"
mv "$LAKE/broken/.fix.tmp" "$LAKE/broken/k=2/part-0.parquet"
head -c 3000 "$LAKE/users2/part-0.parquet" >"$LAKE/users2/.bad.tmp"
mv "$LAKE/users2/.bad.tmp" "$LAKE/users2/part-0.parquet"
sleep 1.6
view ch_repaired   "broken/k=2/data.csv" broken "k = 2" "" "" nonempty
run_views
if cat "$MNT/users2/data.csv" >/dev/null 2>"$WORK/cat.err"; then fail "users2/data.csv read fine after its file was truncated"
elif grep -q "Input/output error" "$WORK/cat.err"; then pass "EIO after a good file was truncated"
else fail "users2/data.csv after truncation: $(cat "$WORK/cat.err")"; fi

# A cached result is keyed by the table's layout and schema too, not only by
# the view's own files: a directory code=x makes the inferred INT64 a STRING,
# and codes/code=001's rows then say 001, not 1 (the old result was served).
# And select= names are kept apart: "a b" is not a and b.
[ "$(grep -c ',1$' "$MNT/codes/code=001/data.csv")" = 3 ] || fail "codes/code=001 before code=x: $(head -2 "$MNT/codes/code=001/data.csv")"
mkdir -p "$LAKE/codes/code=x" "$LAKE/spaced"
cp "$LAKE/codes/code=010/part-0.parquet" "$LAKE/codes/code=x/part-0.parquet"
node "$here/duck.mjs" sql "COPY (SELECT i AS a, i * 10 AS b, 'ab' || i AS \"a b\", i + 7 AS \"x,y\" FROM range(3) r(i)) TO '$LAKE/spaced/.new.tmp' (FORMAT parquet)" >/dev/null
mv "$LAKE/spaced/.new.tmp" "$LAKE/spaced/part-0.parquet"
sleep 1.6
got=$(grep -c ',001$' "$MNT/codes/code=001/data.csv" || true)
[ "$got" = 3 ] && pass "a partition type inferred anew after the TTL: no stale result" ||
    fail "codes/code=001 after code=x appeared: $got rows with 001: $(head -2 "$MNT/codes/code=001/data.csv")"
cat "$MNT/spaced/select=a b/data.csv" >/dev/null
got=$(head -2 "$MNT/spaced/select=a,b/data.csv" | tr '\n' ' ')
[ "$got" = "a,b 0,0 " ] && pass "select=a b and select=a,b are two results" || fail "spaced/select=a,b after select=a b: $got"
# select= takes quoted names (commas inside); %2C is no escape inside select=
# (only %2F and %25 are), so a comma inside a name is quoted.
got=$(head -2 "$MNT/spaced/select=\"x,y\", a/data.csv" | tr '\n' ' ')
[ "$got" = '"x,y",a 7,0 ' ] && pass "select= with a quoted name" || fail "spaced/select=\"x,y\", a: $got"
[ "$(errno_of stat "$MNT/spaced/select=x%2Cy/data.csv")" = EINVAL ] && pass "select=x%2Cy names the column x%2Cy: EINVAL" ||
    fail "select=x%2Cy: $(errno_of stat "$MNT/spaced/select=x%2Cy/data.csv")"
[ "$(errno_of stat "$MNT/spaced/select=\"x,y/data.csv")" = EINVAL ] && pass "select= with an unclosed quote: EINVAL" ||
    fail "select= with an unclosed quote: $(errno_of stat "$MNT/spaced/select=\"x,y/data.csv")"

# readdir below a filter on a data column lists only the partitions with a
# file whose statistics may hold a matching row (SPEC section 3; issue 23:
# `ls where=id < 1000` listed every dt).
for d in 1:1,2 2:10,20 3:100,200; do
    mkdir -p "$LAKE/ranged/dt=${d%%:*}"
    printf 'id\n%s\n' "${d#*:}" | tr ',' '\n' >"$WORK/ranged.csv"
    "$PQTOOL" write "$WORK/ranged.csv" "$LAKE/ranged/dt=${d%%:*}/part-0.parquet"
done
sleep 1.2 # metadata_ttl: the root's listing is seen anew
lsdt() { ls "$MNT/ranged/where=$1" | grep '^dt=' | tr '\n' ' '; }
[ "$(lsdt 'id < 15')" = "dt=1 dt=2 " ] && [ "$(lsdt 'id > 150')" = "dt=3 " ] && [ "$(lsdt 'id = 5')" = "" ] &&
    [ "$(lsdt 'id < 15 OR dt = 3')" = "dt=1 dt=2 dt=3 " ] && [ "$(lsdt 'id IS NULL')" = "" ] &&
    pass "readdir below where= on a data column: only partitions whose files may match" ||
    fail "readdir below where=: id<15 '$(lsdt 'id < 15')', id>150 '$(lsdt 'id > 150')', id=5 '$(lsdt 'id = 5')', IS NULL '$(lsdt 'id IS NULL')'"
[ "$(tail -n +2 "$MNT/ranged/where=id < 15/data.csv" | sort -n | tr '\n' ' ')" = "1,1 2,1 10,2 " ] &&
    pass "... and the view's rows are the same" || fail "ranged/where=id < 15 rows: $(tail -n +2 "$MNT/ranged/where=id < 15/data.csv" | tr '\n' ' ')"

# Times: a view file has the newest time of the files it reads, a directory
# (a view of it too) its own (issue 23: every entry had the mount's, so make,
# rsync -u and find -newer saw nothing change).
mkdir -p "$LAKE/timed/k=1" "$LAKE/timed/k=2"
cp "$LAKE/spaced/part-0.parquet" "$LAKE/timed/k=1/a.parquet"
cp "$LAKE/spaced/part-0.parquet" "$LAKE/timed/k=2/b.parquet"
touch -d '2021-02-03 04:05:06' "$LAKE/timed/k=1/a.parquet" "$LAKE/timed/k=2"
touch -d '2022-06-07 08:09:10' "$LAKE/timed/k=2/b.parquet"
touch -d '2020-01-01 00:00:00' "$LAKE/timed/k=1" "$LAKE/timed"
sleep 1.2 # metadata_ttl: the root's listing is seen anew
T22=$(stat -c %Y "$LAKE/timed/k=2/b.parquet") T21=$(stat -c %Y "$LAKE/timed/k=1/a.parquet") T20=$(stat -c %Y "$LAKE/timed")
got=$(stat -c %Y "$MNT/timed/data.csv" "$MNT/timed/data.parquet" "$MNT/timed/schema.txt" "$MNT/timed/k=1/data.csv" \
    "$MNT/timed/where=a>0/data.csv" "$MNT/timed" "$MNT/timed/k=1" "$MNT/timed/where=a>0" "$MNT/timed/k=2" | tr '\n' ' ')
[ "$got" = "$T22 $T22 $T22 $T21 $T22 $T20 $T20 $T20 $T21 " ] && pass "times: view files the newest of their files', directories their own" ||
    fail "times: got '$got', want '$T22 $T22 $T22 $T21 $T22 $T20 $T20 $T20 $T21 '"
find "$MNT/timed" -maxdepth 2 -name data.csv -newer "$LAKE/timed/k=1/a.parquet" | sort >"$WORK/newer.txt"
[ "$(tr '\n' ' ' <"$WORK/newer.txt")" = "$MNT/timed/data.csv $MNT/timed/k=2/data.csv " ] && pass "find -newer: the views that read the newer file" ||
    fail "find -newer: $(tr '\n' ' ' <"$WORK/newer.txt")"

stop_pqfs "$MNT" "$MAIN_PID"
left=$(find "$WORK/cache" -mindepth 1 | head -3)
[ -z "$left" ] && pass "cache_dir empty after unmount" || fail "cache_dir not empty after unmount: $left"

# ---------------------------------------------------------------- an ini file, single-table mounts, fstab form
# The unchanged copy of the generated lake (the one above was changed).
cat >"$WORK/lake.ini" <<EOF
; pqfs configuration for the mount tests
[pqfs]
source = lake2                 ; relative to this file
metadata_ttl = 1s
cache_dir = cache-ini
log_level = debug

[table codes]
partitions = code:string

[table events]
partitions = year:int64, dt:date, region:string
compression = gzip:6           ; the writer settings reach data.parquet
dictionary = false
bloom_filter = s
EOF
MNT2=$WORK/mnt-ini
# cache_dir is wiped at mount (SPEC section 7): each mount keeps its files in
# a directory of its own (cache_dir/mount-*), locked while it runs; one no
# daemon holds (a crash's) goes with its files, one a live daemon holds stays.
# Only directories pqfs made (their .pqfs-mount marker) are emptied, through
# their descriptor: a symlink named mount-* is not followed, another
# program's mount-* directory is kept. Files an older pqfs left directly in
# cache_dir go too.
mkdir -p "$WORK/cache-ini/mount-crashed" "$WORK/cache-ini/mount-live" "$WORK/cache-ini/mount-otherapp" "$WORK/victim"
: >"$WORK/cache-ini/mount-crashed/.pqfs-mount" && : >"$WORK/cache-ini/mount-live/.pqfs-mount"
echo stale >"$WORK/cache-ini/mount-crashed/result-stale" && echo staged >"$WORK/cache-ini/mount-crashed/stage-AbC123"
echo staged >"$WORK/cache-ini/mount-live/stage-Live12" && echo theirs >"$WORK/cache-ini/mount-otherapp/data"
echo precious >"$WORK/victim/file" && : >"$WORK/victim/.pqfs-mount" && ln -s "$WORK/victim" "$WORK/cache-ini/mount-evil"
echo old >"$WORK/cache-ini/stage-Legacy1"
flock "$WORK/cache-ini/mount-live" sleep 30 &
LIVE_LOCK=$!
sleep 0.2
start_pqfs "$WORK/pqfs-ini.log" "$WORK/lake.ini" "$MNT2"
[ ! -e "$WORK/cache-ini/mount-crashed" ] && pass "cache_dir: a crashed mount's directory (a staged write, a result) is wiped at mount" ||
    fail "cache_dir: mount-crashed survived the mount"
[ -e "$WORK/cache-ini/mount-live/stage-Live12" ] && pass "cache_dir: a live mount's directory is left alone" ||
    fail "cache_dir: the second mount removed a live mount's staged write"
[ -e "$WORK/cache-ini/mount-otherapp/data" ] && [ -e "$WORK/victim/file" ] && [ ! -e "$WORK/cache-ini/stage-Legacy1" ] &&
    pass "cache_dir: another program's mount-* and a symlink's target are kept; an old version's stage file goes" ||
    fail "cache_dir: removed what pqfs did not make, followed a symlink, or kept a legacy stage file"
[ "$(find "$WORK/cache-ini" -maxdepth 1 -type d -name 'mount-*' ! -name mount-live ! -name mount-otherapp | wc -l)" = 1 ] &&
    [ "$(stat -c %a "$(find "$WORK/cache-ini" -maxdepth 1 -type d -name 'mount-*' ! -name mount-live ! -name mount-otherapp)")" = 700 ] &&
    pass "cache_dir: this mount's own directory, mode 0700" || fail "cache_dir: no mount-* directory of mode 0700 for this mount"
kill "$LIVE_LOCK" 2>/dev/null
P2=$PQFS_PID
grep -q '^code,STRING,true,true$' "$MNT2/codes/schema.txt" && pass "ini: declared partition type" ||
    fail "ini: codes/schema.txt: $(cat "$MNT2/codes/schema.txt" | tr '\n' ' ')"
[ -d "$WORK/cache-ini" ] && [ "$(stat -c %a "$WORK/cache-ini")" = 700 ] && pass "ini: cache_dir relative to the ini, mode 0700" ||
    fail "ini: cache_dir $WORK/cache-ini missing or not 0700"
VIEW_MNT=$MNT2 VIEW_LAKE=$LAKE2
HIVE_TYPES=code:VARCHAR
view ini_codes        "codes/data.csv" codes "" "" "" nonempty
view ini_codes_real   "codes/code=010/data.csv" codes "code = '010'" "" "" nonempty
view ini_codes_where  "codes/where=code >= '010'/data.csv" codes "code >= '010'" "" "" nonempty
view ini_codes_virt   "codes/where=x > 0/code=001/data.csv" codes "x > 0 AND code = '001'" "" "" nonempty
HIVE_TYPES=
view ini_events       "events/year=2024/where=region IS NULL/data.csv" events "year = 2024 AND region IS NULL" "" "" nonempty
run_views
VIEW_MNT= VIEW_LAKE=
expect_ls_at() { local got; got=$(listing "$1" 2>&1) || true
    if [ "$got" = "$2" ]; then pass "ls $1"; else fail "ls '$1': expected [$2] got [$got]"; fi; }
expect_ls_at "$MNT2/codes/where=code = '100'" "code=100 data.csv plan.txt schema.txt"
[ "$(errno_of stat "$MNT2/codes/code=10")" = OK ] && [ "$(grep -c '' "$MNT2/codes/code=10/data.csv")" = 1 ] &&
    pass "ini: code=10 is the string '10' (no rows)" || fail "ini: codes/code=10 should be a virtual filter matching nothing"
# The table's writer settings in data.parquet: its re-encoded chunks (a row
# group the ladder proves entirely matched is copied with the source's codec:
# the generated data decides which, so only the re-encoded ones are judged).
meta=$("$PQTOOL" meta "$MNT2/events/where=i32 < 10/data.parquet" 2>&1) || true
gz=$(echo "$meta" | grep -E '^  [a-z0-9_]+: GZIP ' || true)
# (Here-strings, not pipes: under pipefail `echo | grep -q` fails when grep
# quits before echo has written everything.)
s_gz=$(grep '^  s: GZIP ' <<<"$gz" || true)
if [ -n "$s_gz" ] && ! grep -q 'RLE_DICTIONARY' <<<"$gz" && ! grep -vq 'bloom_filter=' <<<"$s_gz"; then
    pass "ini: data.parquet written with the table's settings"
else fail "ini: data.parquet's re-encoded chunks lack gzip, no dictionary or the bloom filter on s: $(grep -E '^  s: ' <<<"$meta" | tail -2)"; fi
# log_level = debug: each scan's start and end and each result cache hit
# (info logs none of them).
cat "$MNT2/events/year=2024/where=i32 < 10/data.csv" >/dev/null
cat "$MNT2/events/year=2024/where=i32 < 10/data.csv" >/dev/null
grep -q "debug: events/year=2024/where=i32 < 10/data.csv: scan started over [0-9]* files" "$WORK/pqfs-ini.log" &&
    grep -q "debug: events/year=2024/where=i32 < 10/data.csv: scan done in [0-9]* ms: [0-9]* rows out" "$WORK/pqfs-ini.log" &&
    grep -q "debug: events/year=2024/where=i32 < 10/data.csv: served from the result cache" "$WORK/pqfs-ini.log" &&
    grep -q "debug: table 'events': discovered [0-9]* files" "$WORK/pqfs-ini.log" &&
    pass "log_level = debug logs scans, cache hits and discoveries" ||
    fail "log_level = debug: $(grep -c 'debug:' "$WORK/pqfs-ini.log") debug lines; $(grep 'debug:' "$WORK/pqfs-ini.log" | head -3)"
# ... and the effective configuration at start, as ini text.
grep -qx "pqfs: debug: config: \[pqfs\]" "$WORK/pqfs-ini.log" && grep -qx "pqfs: debug: config: cache_dir = $WORK/cache-ini" "$WORK/pqfs-ini.log" &&
    grep -qx "pqfs: debug: config: compression = gzip:6" "$WORK/pqfs-ini.log" &&
    pass "log_level = debug logs the effective configuration" || fail "log_level = debug: no configuration dump in the log"
stop_pqfs "$MNT2" "$P2"

# Configuration errors: one line naming the problem (the ini line), a non-zero
# exit, no mount left behind.
bad_mount() { # NAME TEXT ARGS...: pqfs ARGS must fail, its stderr naming TEXT
    local name=$1 text=$2 m=$WORK/mnt-bad rc=0
    shift 2
    mkdir -p "$m"
    timeout 20 "$PQFS" "$@" "$m" -f >"$WORK/bad.out" 2>&1 || rc=$?
    if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then fail "$name: pqfs exited with $rc"; is_mounted "$m" && fusermount3 -uz "$m"
    elif ! grep -qF -- "$text" "$WORK/bad.out"; then fail "$name: the error does not name '$text': $(head -3 "$WORK/bad.out")"
    elif is_mounted "$m"; then fail "$name: mounted anyway"; fusermount3 -uz "$m"
    else pass "$name"; fi
}
printf '[pqfs]\nsource = lake2\ncolour = blue\n' >"$WORK/bad.ini"
bad_mount "unknown ini key" "bad.ini:3" "$WORK/bad.ini"
printf '[pqfs]\nsource = lake2\n[table events]\npartitions = year:float\n' >"$WORK/bad2.ini"
bad_mount "bad partition type" "bad2.ini:4" "$WORK/bad2.ini"
bad_mount "missing source" "$WORK/nosuch" "$WORK/nosuch"
bad_mount "bad option value" "metadata_ttl" "$LAKE2" -o metadata_ttl=soon
# --help and --version answer on stdout and exit 0 (they printed an empty
# error and exited 2).
out=$("$PQFS" --help 2>&1) && grep -q '^usage: pqfs SOURCE MOUNTPOINT' <<<"$out" && grep -q -- '--version' <<<"$out" &&
    pass "pqfs --help" || fail "pqfs --help: $(head -2 <<<"$out")"
out=$("$PQFS" -V 2>&1) && grep -qE '^pqfs version [0-9.]+ \(libfuse [0-9.]+\)$' <<<"$out" &&
    pass "pqfs --version" || fail "pqfs -V: $out"

# A table directory as SOURCE: the mount root is the table.
MNT3=$WORK/mnt-single
start_pqfs "$WORK/pqfs-single.log" "$LAKE2/events" "$MNT3" -o "cache_dir=$WORK/cache-single,sized_csv"
P3=$PQFS_PID
expect_ls_at "$MNT3" "data.csv plan.txt schema.txt year=2023 year=2024"
VIEW_MNT=$MNT3 VIEW_LAKE=$LAKE2
view single_root  "data.csv" events "" "" "" nonempty
view single_where "year=2024/where=region = 'a%2Fb'/data.csv" events "year = 2024 AND region = 'a/b'" "" "" nonempty
run_views
VIEW_MNT= VIEW_LAKE=
grep -q '^source_read_requests ' "$MNT3/.pqfs/stats" && pass "single-table mount has /.pqfs" || fail "single-table mount: no /.pqfs/stats"
# -o sized_csv: every data.csv has its exact size on lookup; tar packs it
# whole (before: a size-0 member); sized=0 keeps a view streaming.
tar -C "$MNT3/year=2023" -cf "$WORK/sized.tar" data.csv 2>"$WORK/tar.err"
tar_bytes=$(tar -xOf "$WORK/sized.tar" data.csv | wc -c)
[ "$tar_bytes" -gt 0 ] && [ "$tar_bytes" = "$(cat "$MNT3/year=2023/data.csv" | wc -c)" ] && pass "-o sized_csv: tar packs data.csv whole ($tar_bytes bytes)" ||
    fail "-o sized_csv: tar packed $tar_bytes bytes: $(head -c 200 "$WORK/tar.err")"
[ "$(stat -c %s "$MNT3/year=2024/where=id>3/sized=0/data.csv")" = 0 ] && pass "-o sized_csv with sized=0: size 0 until read" ||
    fail "sized=0 under -o sized_csv: size $(stat -c %s "$MNT3/year=2024/where=id>3/sized=0/data.csv")"
stop_pqfs "$MNT3" "$P3"
! grep -q 'debug:' "$WORK/pqfs-single.log" && grep -q 'info: mounted' "$WORK/pqfs-single.log" && pass "log_level info: no debug lines" ||
    fail "log_level info: $(grep -m1 'debug:' "$WORK/pqfs-single.log")"
# A single table's messages name it as the mount root (its name is empty).
mkdir -p "$WORK/single2/k=1/j=2"
cp "$SHARED/testdata/parquet-testing/data/alltypes_plain.parquet" "$WORK/single2/k=1/part-0.parquet"
cp "$SHARED/testdata/parquet-testing/data/alltypes_plain.parquet" "$WORK/single2/k=1/j=2/part-0.parquet"
start_pqfs "$WORK/pqfs-single2.log" "$WORK/single2" "$WORK/mnt-single2" -o "cache_dir=$WORK/cache-single2"
P7=$PQFS_PID
cat "$WORK/mnt-single2/data.csv" >/dev/null
stop_pqfs "$WORK/mnt-single2" "$P7"
grep -q "warn: table '(the mount root)': 1 path left out" "$WORK/pqfs-single2.log" && ! grep -q "table ''" "$WORK/pqfs-single2.log" &&
    pass "a single table is named the mount root in messages" || fail "single table in messages: $(grep -m1 "table '" "$WORK/pqfs-single2.log")"

# A declared partition type the directories do not have (year declared a
# date): every file is left out, as SPEC section 2 says of paths that do not
# fit, but reported in /.pqfs/errors with a reason, not silently empty.
# With metadata_ttl 0 every lookup discovers the table again: said once.
printf '[pqfs]\nsource = %s\ncache_dir = %s\nmetadata_ttl = 0\n[table events]\npartitions = year:date\n' "$LAKE2" "$WORK/cache-misdecl" >"$WORK/misdecl.ini"
start_pqfs "$WORK/pqfs-misdecl.log" "$WORK/misdecl.ini" "$WORK/mnt-misdecl"
P6=$PQFS_PID
for _ in 1 2 3; do cat "$WORK/mnt-misdecl/events/data.csv" >/dev/null 2>&1 || true; done
[ "$(grep -c "table 'events': .* left out, .*year=20[0-9]*: not a date (YYYY-MM-DD), as the ini declares" "$WORK/mnt-misdecl/.pqfs/errors")" = 1 ] &&
    pass "a declared type no directory has: reported once in /.pqfs/errors, with the reason" ||
    fail "a declared type no directory has: not reported once in /.pqfs/errors: $(head -3 "$WORK/mnt-misdecl/.pqfs/errors")"
stop_pqfs "$WORK/mnt-misdecl" "$P6"

# Partition columns named like the keywords (limit=, where=): a real
# directory, which readdir lists, is that partition (SPEC section 3: COL=VALUE
# on a partition column whose directory exists); other values stay keywords.
KWLAKE=$WORK/lake-kw MNT5=$WORK/mnt-kw
mkdir -p "$KWLAKE/kw/limit=1" "$KWLAKE/kw/limit=2" "$KWLAKE/kw2/where=a"
printf 'v\n10\n11\n' >"$WORK/kw1.csv"; printf 'v\n20\n21\n' >"$WORK/kw2.csv"
"$PQTOOL" write "$WORK/kw1.csv" "$KWLAKE/kw/limit=1/a.parquet" && "$PQTOOL" write "$WORK/kw2.csv" "$KWLAKE/kw/limit=2/b.parquet" &&
    "$PQTOOL" write "$WORK/kw1.csv" "$KWLAKE/kw2/where=a/a.parquet" || fail "keyword lake: pqtool write failed"
start_pqfs "$WORK/pqfs-kw.log" "$KWLAKE" "$MNT5" -o "cache_dir=$WORK/cache-kw"
P5=$PQFS_PID
expect_ls_at "$MNT5/kw" "data.csv limit=1 limit=2 plan.txt schema.txt"
kw_got=$(cat "$MNT5/kw/limit=2/data.csv" 2>&1 | tr '\n' ' ')
[ "$kw_got" = "v,limit 20,2 21,2 " ] && pass "kw/limit=2 is the partition directory" ||
    fail "kw/limit=2/data.csv: expected partition 2's rows, got: $kw_got"
kw_got=$(cat "$MNT5/kw/limit=3/data.csv" 2>&1 | tr '\n' ' ')
[ "$kw_got" = "v,limit 10,1 11,1 20,2 " ] && pass "kw/limit=3 (no such directory) is the keyword" ||
    fail "kw/limit=3/data.csv: expected the first 3 rows, got: $kw_got"
kw_got=$(cat "$MNT5/kw2/where=a/data.csv" 2>&1 | tr '\n' ' ')
[ "$kw_got" = "v,where 10,a 11,a " ] && pass "kw2/where=a is the partition directory" ||
    fail "kw2/where=a/data.csv: expected partition a's rows, got: $kw_got"
stop_pqfs "$MNT5" "$P5"

# The fstab form.  An fstab line `lake.ini MNT fuse.pqfs defaults,_netdev 0 0`
# makes mount(8) run `mount.fuse3 lake.ini MNT -t pqfs -o defaults,_netdev,...`,
# which runs `pqfs lake.ini MNT -o ...` from PATH and lets it daemonize.
# mount(8) itself runs helpers with a fixed PATH, so it would need pqfs
# installed in /usr/bin; we call mount.fuse3 the same way mount(8) does, with
# the build directory on PATH.  Skipped when mount.fuse3 is missing.
MNT4=$WORK/mnt-fstab
mkdir -p "$MNT4"
if command -v mount.fuse3 >/dev/null 2>&1; then
    MOUNTS+=("$MNT4")
    if PATH=$BUILD:$PATH mount.fuse3 "$WORK/lake.ini" "$MNT4" -t pqfs -o "defaults,_netdev,cache_dir=$WORK/cache-fstab" \
        2>"$WORK/mount.err"; then
        p4=$(pids_of_pqfs_on "$MNT4")
        [ -n "$p4" ] && DAEMONS+=($p4)
        [ -n "$p4" ] || fail "fstab: no pqfs process found for $MNT4"
        if [ "$(grep -c '' "$MNT4/codes/data.csv")" = 10 ] && grep -q '^code,STRING' "$MNT4/codes/schema.txt"; then
            pass "mount.fuse3 lake.ini -t pqfs"; else fail "mount.fuse3 -t pqfs: codes/data.csv or schema.txt wrong"; fi
        awk -v m="$MNT4" '$2 == m && $3 == "fuse.pqfs" { f = 1 } END { exit !f }' /proc/self/mounts &&
            pass "fstab mount listed as fuse.pqfs" || fail "fstab mount: $(grep " $MNT4 " /proc/self/mounts)"
        fusermount3 -u "$MNT4"
        gone=0
        for _ in $(seq 100); do [ -z "$(pids_of_pqfs_on "$MNT4")" ] && { gone=1; break; }; sleep 0.1; done
        [ "$gone" = 1 ] && pass "fstab daemon exited after unmount" || fail "fstab daemon $p4 still running 10 s after unmount"
    else
        fail "mount.fuse3 -t pqfs failed: $(cat "$WORK/mount.err")"
    fi
else
    echo "SKIP (part): the fstab form: mount.fuse3 is not installed"
fi

# No daemon crashed or complained of memory errors (sanitizer builds), no secret logged.
for log in "$WORK"/pqfs*.log; do
    if grep -qiE 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error|Segmentation|secret_access' "$log"; then
        fail "$(basename "$log"):"; grep -iE -A12 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error|Segmentation|secret_access' "$log" | head -40 | sed 's/^/    /'
    fi
done

summary "mount"
