#!/usr/bin/env bash
# Writes through the mount (SPEC section 6), with the real pqfs daemon:
#   - cp of a CSV into a partition directory (existing, or new and nested:
#     COL=VALUE/ makes it) writes one <stem>-<unique>.parquet there; every view
#     then has the rows (csvcmp against the inputs), and DuckDB reads the lake
#     to the same rows;
#   - a CSV column that matches the path is accepted, one that contradicts it,
#     a bad value, a wrong field count are EINVAL at close, named (line and
#     column) in /.pqfs/errors, and leave nothing in the lake;
#   - a shell's `>` redirection (dup2 closes the first descriptor unwritten);
#   - a child that closes its copy of the descriptor (subprocess, a shell's
#     command) does not write the file early; the writer's close does;
#   - a Parquet file with the table's schema is taken in; another is EINVAL;
#   - mkdir at the root makes a table whose schema the first CSV defines;
#   - the table's ini writer settings (compression, row_group_rows, sort_by)
#     shape the written file;
#   - EPERM for views (where=), view files, rm, mv; EROFS on a read-only mount;
#   - four concurrent cp into one partition all land;
#   - staging is bounded by cache_size: ENOSPC, and nothing half-written.
#   tests/mount/write.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: write.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init

# close_errno CMD...: runs a copy and prints OK or the errno name its close/open gave.
copy_errno() {
    python3 - "$1" "$2" <<'PY'
import errno, shutil, sys
try:
    with open(sys.argv[1], 'rb') as src, open(sys.argv[2], 'wb') as dst:
        shutil.copyfileobj(src, dst)
    print('OK')
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}
# rename_errno FROM TO: OK or the errno name rename() gave.
rename_errno() {
    python3 -c '
import errno, os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
    print("OK")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))' "$1" "$2"
}
lake_files() { find "$LAKE" -type f | sort; }

LAKE=$WORK/lake MNT=$WORK/mnt IN=$WORK/in
mkdir -p "$LAKE/events/dt=2024-01-01/region=eu" "$IN"
printf 'id,name,amount,ts\n1,a,1.5,2024-01-01 10:00:00\n2,"b, c",,2024-01-01 11:00:00\n' >"$IN/seed.csv"
"$PQTOOL" write "$IN/seed.csv" "$LAKE/events/dt=2024-01-01/region=eu/part-0.parquet"
cat >"$WORK/lake.ini" <<EOF
[pqfs]
source = $LAKE
cache_dir = $WORK/cache
metadata_ttl = 30s

[table events]
partitions = dt:date, region:string
compression = snappy
row_group_rows = 3
; dt is a partition column: constant in a part, left out of its sort
sort_by = dt, id

[table sales]
partitions = month:string
EOF
start_pqfs "$WORK/pqfs.log" "$WORK/lake.ini" "$MNT"
PID=$PQFS_PID

# ------------------------------------------------------------ into partitions
printf 'id,name,amount,ts\n5,e,5.5,2024-01-02 00:00:00\n3,"q ""x""",3,2024-01-02 01:00:00\n4,,,\n' >"$IN/a.csv"
check "cp into an existing partition directory" 'cp "$IN/a.csv" "$MNT/events/dt=2024-01-01/region=eu/"'
new=$(find "$LAKE/events/dt=2024-01-01/region=eu" -name 'a-*.parquet')
check "one new part file a-<16 hex>.parquet, readable by all" \
    '[ "$(echo "$new" | grep -cE "/a-[0-9a-f]{16}\.parquet$")" = 1 ] && [ "$(stat -c %a "$new")" = 644 ]'
printf 'id,name,amount,ts,region,dt\n7,g,7,2024-03-04 05:06:07,us,2024-01-09\n' >"$IN/b.csv"
check "cp into new nested partition directories (dt=2024-01-09/region=us/ made)" \
    'cp "$IN/b.csv" "$MNT/events/dt=2024-01-09/region=us/" && [ -n "$(find "$LAKE/events/dt=2024-01-09/region=us" -name "b-*.parquet")" ]'
printf 'id,name,amount,ts\n8,h,8,\n' >"$IN/c.csv"
check "cp into the NULL partition (__HIVE_DEFAULT_PARTITION__)" \
    'cp "$IN/c.csv" "$MNT/events/dt=2024-01-09/region=__HIVE_DEFAULT_PARTITION__/" && [ -n "$(find "$LAKE/events/dt=2024-01-09/region=__HIVE_DEFAULT_PARTITION__" -name "c-*.parquet")" ]'
# A %00 decodes to a NUL byte: refused, nothing written (region=a%00b wrote
# into region=a, region=%00 into region=).
check "cp into region=a%00b or region=%00 is EINVAL and writes nothing" \
    '! cp "$IN/c.csv" "$MNT/events/dt=2024-01-09/region=a%00b/" 2>"$WORK/nul.err" && grep -q "Invalid argument" "$WORK/nul.err" &&
     ! cp "$IN/c.csv" "$MNT/events/dt=2024-01-09/region=%00/" 2>/dev/null &&
     ! mkdir "$MNT/events/dt=2024-01-09/region=x%00y" 2>/dev/null &&
     [ -z "$(find "$LAKE/events" -path "*region=a/*" -o -path "*region=/*" -o -name "*%00*")" ]'
check "a shell redirection writes (printf > FILE)" \
    'printf "id,name,amount,ts\n9,r,9,\n" >"$MNT/events/dt=2024-01-09/region=us/redirect.csv" && [ -n "$(find "$LAKE/events/dt=2024-01-09/region=us" -name "redirect-*.parquet")" ]'

# Every view has the rows: the table root against the inputs (partitions appended).
{
    echo "id,name,amount,ts,dt,region"
    tail -n +2 "$IN/seed.csv" | sed 's/$/,2024-01-01,eu/'
    tail -n +2 "$IN/a.csv" | sed 's/$/,2024-01-01,eu/'
    echo "7,g,7.0,2024-03-04 05:06:07,2024-01-09,us"
    echo "8,h,8.0,,2024-01-09,"
    echo "9,r,9.0,,2024-01-09,us"
} >"$WORK/expect.csv"
cat "$MNT/events/data.csv" >"$WORK/got.csv"
check "events/data.csv has every written row: $(python3 "$CSVCMP" --unordered "$WORK/expect.csv" "$WORK/got.csv" 2>&1 | head -3)" \
    'python3 "$CSVCMP" --unordered "$WORK/expect.csv" "$WORK/got.csv" >/dev/null 2>&1'
check "a filtered view sees written rows (where=id>=5: 5,7,8,9)" \
    '[ "$(tail -n +2 "$MNT/events/where=id>=5/select=id/data.csv" | sort -n | tr "\n" " ")" = "5 7 8 9 " ]'
duck_rows=$(node "$here/duck.mjs" sql "SELECT count(*) || '/' || sum(id) FROM read_parquet('$LAKE/events/**/*.parquet', hive_partitioning = true)" 2>&1 | head -1)
check "DuckDB reads the lake with the written files: 8 rows, ids summing to 39 (got $duck_rows)" '[ "$duck_rows" = "8/39" ]'

check "a file being written can be truncated (ftruncate) before close" \
    'python3 -c "
import sys
with open(sys.argv[1], \"w\") as f:
    f.write(\"junk that is no CSV\")
    f.flush()
    f.truncate(0)
    f.seek(0)
    f.write(\"id,name,amount,ts\n21,t,1,\n\")
" "$MNT/events/dt=2024-03-01/region=eu/trunc.csv" && [ "$(tail -n +2 "$MNT/events/dt=2024-03-01/select=id/data.csv")" = 21 ]'

# The ini's writer settings: snappy, row groups of 3, sorted by id.
meta=$("$PQTOOL" meta "$new")
check "written with the table's compression (snappy)" 'grep -q "  id: SNAPPY" <<<"$meta"'
check "sorted by id, sorting_columns recorded" 'grep -q "^row group 0: rows=3 .*sorted_by=0$" <<<"$meta" && [ "$("$PQTOOL" cat "$new" --select id | tail -n +2 | tr "\n" " ")" = "3 4 5 " ]'

# ------------------------------------------------------------ bad input: EINVAL, nothing left
before=$(lake_files)
printf 'id,name,amount,ts,dt\n10,x,1,,2024-01-05\n' >"$IN/contra.csv"
check "a column that contradicts the path: EINVAL at close" '[ "$(copy_errno "$IN/contra.csv" "$MNT/events/dt=2024-01-01/region=eu/contra.csv")" = EINVAL ]'
printf 'id,name,amount,ts\n11,x,abc,\n' >"$IN/bad.csv"
check "a value that does not fit its column: EINVAL" '[ "$(copy_errno "$IN/bad.csv" "$MNT/events/dt=2024-01-01/region=eu/bad.csv")" = EINVAL ]'
printf 'id,name,amount,ts\n12,a\377b,1,\n' >"$IN/utf8.csv"
check "a string that is not UTF-8: EINVAL (DuckDB could not read the table after it)" \
    '[ "$(copy_errno "$IN/utf8.csv" "$MNT/events/dt=2024-01-01/region=eu/utf8.csv")" = EINVAL ] && [ -z "$(find "$LAKE/events" -name "utf8-*")" ]'
printf 'id,name,amount,ts\n12,x\n' >"$IN/short.csv"
check "a record with too few fields: EINVAL" '[ "$(copy_errno "$IN/short.csv" "$MNT/events/dt=2024-01-07/region=eu/short.csv")" = EINVAL ]'
printf 'id,nope\n1,2\n' >"$IN/col.csv"
check "a column the table lacks: EINVAL" '[ "$(copy_errno "$IN/col.csv" "$MNT/events/dt=2024-01-01/region=eu/col.csv")" = EINVAL ]'
check "failed writes leave nothing in the lake (no file, no temp, no directory)" '[ "$(lake_files)" = "$before" ] && [ ! -e "$LAKE/events/dt=2024-01-07" ]'
# A table with list columns takes Parquet; a CSV holding a nested column is
# bad input (EINVAL, not EIO: nothing is wrong with the storage), one that
# leaves the nested columns out writes them NULL.
check "a CSV holding a nested column: EINVAL" \
    'mkdir "$MNT/lists" && cp "$SHARED/testdata/parquet-testing/data/list_columns.parquet" "$MNT/lists/" &&
     printf "int64_list,utf8_list\n1,a\n" >"$IN/lists.csv" && [ "$(copy_errno "$IN/lists.csv" "$MNT/lists/lists.csv")" = EINVAL ]'
node "$here/duck.mjs" sql "COPY (SELECT 1::BIGINT AS id, [1, 2]::BIGINT[] AS l) TO '$IN/withlist.parquet' (FORMAT parquet)" >/dev/null 2>&1
check "a CSV leaving out the nested column writes it NULL" \
    'mkdir "$MNT/withlist" && cp "$IN/withlist.parquet" "$MNT/withlist/" && printf "id\n9\n" >"$IN/nolist.csv" &&
     cp "$IN/nolist.csv" "$MNT/withlist/" && [ "$(tail -n +2 "$MNT/withlist/data.csv" | sort | tr "\n" " ")" = "1,\"[1,2]\" 9, " ]'
errs=$(cat "$MNT/.pqfs/errors")
check "the reasons are in /.pqfs/errors with line and column" \
    'grep -q "contra.csv: line 2, column dt: .2024-01-05. contradicts the path (dt=2024-01-01)" <<<"$errs" &&
     grep -q "bad.csv: line 2, column amount: .abc. is not a number" <<<"$errs" &&
     grep -q "short.csv: line 2: 2 fields, the header has 4" <<<"$errs" &&
     grep -q "col.csv: line 1: column .nope. is not in the table.s schema" <<<"$errs"'

# ------------------------------------------------------------ a cache_dir shared by two mounts
# Each mount keeps its files in a locked directory of its own in cache_dir: a
# second mount starting on the same cache_dir leaves the first one's staged
# write alone (it deleted every stage-* file there, failing the write).
exec 7>"$MNT/events/dt=2024-07-01/region=eu/shared.csv"
printf 'id,name,amount,ts\n71,a,1,\n' >&7
start_pqfs "$WORK/pqfs-second.log" "$LAKE" "$WORK/second" -o "cache_dir=$WORK/cache,read_only=true"
SECOND=$PQFS_PID
printf '72,b,2,\n' >&7
exec 7>&-
check "a second mount on the same cache_dir leaves the first one's staged write alone" \
    '[ "$(tail -n +2 "$MNT/events/dt=2024-07-01/data.csv" | wc -l)" = 2 ]'
check "each mount has its own directory in cache_dir" '[ "$(find "$WORK/cache" -maxdepth 1 -name "mount-*" | wc -l)" = 2 ]'
stop_pqfs "$WORK/second" "$SECOND"
check "the second mount's directory goes at its unmount, the first one's stays" \
    '[ "$(find "$WORK/cache" -maxdepth 1 -name "mount-*" | wc -l)" = 1 ]'
# A cache_dir inside the mountpoint would be hidden by the mount: refused.
mkdir -p "$WORK/inner"
MOUNTS+=("$WORK/inner")
check "a cache_dir inside the mountpoint is refused at start, naming both" \
    '! timeout 10 "$PQFS" "$LAKE" "$WORK/inner" -f -o "cache_dir=$WORK/inner/cache" 2>"$WORK/inner.err" &&
     grep -q "cache_dir $WORK/inner/cache is inside the mountpoint $WORK/inner" "$WORK/inner.err" && ! is_mounted "$WORK/inner" &&
     [ ! -e "$WORK/inner/cache" ]'
# Another user's cache_dir (not a shared sticky one) is refused: they could
# swap what is staged in it.
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$WORK/theirs" && chown 4321 "$WORK/theirs" && mkdir -p "$WORK/mnt-theirs"
    MOUNTS+=("$WORK/mnt-theirs")
    check "another user's cache_dir is refused at start" \
        '! timeout 10 "$PQFS" "$LAKE" "$WORK/mnt-theirs" -f -o "cache_dir=$WORK/theirs" 2>"$WORK/theirs.err" &&
         grep -q "cache_dir $WORK/theirs belongs to another user (uid 4321)" "$WORK/theirs.err" && ! is_mounted "$WORK/mnt-theirs"'
fi

# ------------------------------------------------------------ Parquet input
"$PQTOOL" write "$IN/a.csv" "$IN/same.parquet" --schema "$LAKE/events/dt=2024-01-01/region=eu/part-0.parquet"
check "a Parquet file with the table's schema is taken in" \
    'cp "$IN/same.parquet" "$MNT/events/dt=2024-01-02/region=eu/" && [ "$(tail -n +2 "$MNT/events/dt=2024-01-02/data.csv" | wc -l)" = 3 ]'
# A footer whose num_rows says 0 while its row groups hold rows (the total
# is not checked against them by readers): the rows are written, not dropped.
python3 "$here/footer_rows.py" "$IN/same.parquet" "$IN/zero_total.parquet" 0
check "a Parquet file whose footer total says 0 rows: its row groups' 3 rows are written" \
    'cp "$IN/zero_total.parquet" "$MNT/events/dt=2024-01-04/region=eu/" && [ -n "$(find "$LAKE/events/dt=2024-01-04/region=eu" -name "zero_total-*.parquet")" ] &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-01-04/data.csv" | wc -l)" = 3 ]'
# The table's row_group_rows (3) and sort_by (id) apply to Parquet input too.
printf 'id,name,amount,ts\n8,a,1,\n2,b,2,\n7,c,3,\n1,d,4,\n,e,5,\n6,f,6,\n3,g,7,\n5,h,8,\n' >"$IN/unsorted.csv"
"$PQTOOL" write "$IN/unsorted.csv" "$IN/unsorted.parquet" --row-group-rows 5 --schema "$LAKE/events/dt=2024-01-01/region=eu/part-0.parquet"
check "a Parquet file is written in the table's row groups (3), sorted by id (NULLs last), sorting_columns recorded" \
    'cp "$IN/unsorted.parquet" "$MNT/events/dt=2024-01-03/region=eu/" &&
     part=$(find "$LAKE/events/dt=2024-01-03/region=eu" -name "unsorted-*.parquet") &&
     [ "$("$PQTOOL" meta "$part" | grep "^row group" | sed -E "s/.* rows=([0-9]+) .*sorted_by=(.*)$/\1:\2/" | tr "\n" " ")" = "3:0 3:0 2:0 " ] &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-01-03/region=eu/select=id,name/data.csv" | tr "\n" " ")" = "1,d 2,b 3,g 5,h 6,f 7,c 8,a ,e " ]'
# A CSV with its header only adds no rows: close() succeeds and nothing is
# written (no empty part; a new table gets no all-STRING schema from it).
printf 'id,name,amount,ts\n' >"$IN/header_only.csv"
before=$(lake_files)
check "a header-only CSV: close() succeeds, no part file, no directory, a new table stays without schema" \
    'cp "$IN/header_only.csv" "$MNT/events/dt=2024-01-01/region=eu/" && cp "$IN/header_only.csv" "$MNT/events/dt=2031-01-01/region=eu/" &&
     mkdir "$MNT/headeronly" && cp "$IN/header_only.csv" "$MNT/headeronly/" &&
     [ "$(lake_files)" = "$before" ] && [ ! -e "$LAKE/events/dt=2031-01-01" ] && [ ! -s "$MNT/headeronly/schema.txt" ]'

# DuckDB annotates INT64 columns (INT_64), pqtool does not: one type, so
# DuckDB's files join a table pqfs wrote; TIMESTAMP_MS is another type,
# refused at close with both types named (not found out later by every view).
node "$here/duck.mjs" sql "COPY (SELECT 91::BIGINT AS id, 'duck' AS name, 2.5::DOUBLE AS amount, TIMESTAMP '2024-01-05 10:00:00' AS ts) TO '$IN/duck.parquet' (FORMAT parquet)" >/dev/null 2>&1
node "$here/duck.mjs" sql "COPY (SELECT 92::BIGINT AS id, 'duck' AS name, 2.5::DOUBLE AS amount, TIMESTAMP_MS '2024-01-05 10:00:00' AS ts) TO '$IN/duck_ms.parquet' (FORMAT parquet)" >/dev/null 2>&1
check "a DuckDB-written Parquet file joins the table; every view reads both writers' files" \
    'cp "$IN/duck.parquet" "$MNT/events/dt=2024-01-05/region=eu/" &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-01-05/where=id = 91/select=id,name,ts/data.csv")" = "91,duck,2024-01-05 10:00:00" ] &&
     [ "$(tail -n +2 "$MNT/events/select=id/data.csv" | wc -l)" -gt 3 ]'
check "a Parquet file whose column has another type (TIMESTAMP_MS): EINVAL, both types named" \
    '[ "$(copy_errno "$IN/duck_ms.parquet" "$MNT/events/dt=2024-01-05/region=eu/duck_ms.parquet")" = EINVAL ] &&
     grep -q "duck_ms.parquet: column ts is TIMESTAMP(MILLIS), the table.s is TIMESTAMP(MICROS)" "$MNT/.pqfs/errors"'
check "a Parquet file with another schema: EINVAL" \
    '[ "$(copy_errno "$SHARED/testdata/parquet-testing/data/alltypes_plain.parquet" "$MNT/events/dt=2024-01-02/region=eu/other.parquet")" = EINVAL ]'

# ------------------------------------------------------------ refused at once
check "a where= view takes no writes: EPERM" '[ "$(copy_errno "$IN/a.csv" "$MNT/events/where=id>1/x.csv")" = EPERM ]'
check "a data-column filter takes no writes: EPERM" '[ "$(copy_errno "$IN/a.csv" "$MNT/events/dt=2024-01-01/region=eu/name=a/x.csv")" = EPERM ]'
check "a partition directory without all partition columns: EPERM" '[ "$(copy_errno "$IN/a.csv" "$MNT/events/dt=2024-01-01/x.csv")" = EPERM ]'
check "data.csv is read-only: EPERM" '[ "$(copy_errno "$IN/a.csv" "$MNT/events/data.csv")" = EPERM ]'
check "rm of a view file: EPERM" '! rm -f "$MNT/events/data.csv" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err"'
check "mv of a partition directory: EPERM" '! mv "$MNT/events/dt=2024-01-01" "$MNT/events/dt=2030-01-01" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err"'
check "ln -s, ln and mkfifo in the lake: EPERM (symlink was ENOSYS)" \
    '! ln -s x "$MNT/events/lnk" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err" &&
     ! ln "$MNT/events/data.csv" "$MNT/events/hard" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err" &&
     ! mkfifo "$MNT/events/ff" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err"'

# ------------------------------------------------------------ concurrent writers
cps=()
for k in 1 2 3 4; do
    printf 'id,name,amount,ts\n%d,p%d,1,\n%d,q%d,2,\n' $((100 + k)) "$k" $((200 + k)) "$k" >"$IN/par$k.csv"
    cp "$IN/par$k.csv" "$MNT/events/dt=2024-02-01/region=eu/" &
    cps+=($!)
done
wait "${cps[@]}" # not a bare wait: the daemon and the watchdog are children too
check "four concurrent cp into one partition: four files, eight rows" \
    '[ "$(find "$LAKE/events/dt=2024-02-01/region=eu" -name "par*.parquet" | wc -l)" = 4 ] && [ "$(tail -n +2 "$MNT/events/dt=2024-02-01/data.csv" | wc -l)" = 8 ]'

# ------------------------------------------------------------ a new table
check "mkdir at the root makes a table" 'mkdir "$MNT/fresh" && ls "$MNT" | grep -qx fresh'
check "a table without files reads as empty (data.csv, schema.txt, plan.txt; were EIO)" \
    'cat "$MNT/fresh/data.csv" "$MNT/fresh/schema.txt" "$MNT/fresh/plan.txt" >"$WORK/fresh-empty.txt" && [ ! -s "$WORK/fresh-empty.txt" ]'
# No schema, so no data.parquet to make: still a file to ls -l (size 0; issue
# 23: -?????????), its read EIO.
check "a table without files: ls -l shows data.parquet, size 0" \
    'ls -l "$MNT/fresh" | grep -q "^-r.* 0 .* data.parquet\$" && [ "$(errno_of read "$MNT/fresh/data.parquet")" = EIO ]'
printf 'k,when,flag,score\n1,2024-01-01,true,0.5\n2,,false,nan\n' >"$IN/fresh.csv"
check "its first CSV defines the schema" 'cp "$IN/fresh.csv" "$MNT/fresh/" && cat "$MNT/fresh/data.csv" >"$WORK/fresh.got" && cmp "$IN/fresh.csv" "$WORK/fresh.got"'
check "types inferred (int64, date, boolean, double)" \
    'grep -q "^k,INT64," "$MNT/fresh/schema.txt" && grep -q "^when,DATE" "$MNT/fresh/schema.txt" && grep -q "^flag,BOOLEAN" "$MNT/fresh/schema.txt"'
printf 'k,when,flag,score\n3,2024-02-02,,1\n' >"$IN/fresh2.csv"
check "a second file appends" 'cp "$IN/fresh2.csv" "$MNT/fresh/" && [ "$(tail -n +2 "$MNT/fresh/data.csv" | wc -l)" = 3 ]'
# A view's data.csv copied into another table lands as data-<unique>.parquet
# (issue 23: EPERM, nothing logged, since the name data.csv is the view's);
# copied onto a schema.txt it is EPERM with the reason in /.pqfs/errors.
check "cp of a view's data.csv into a table: data-<16 hex>.parquet, the same rows" \
    'mkdir "$MNT/copyback" && cp "$MNT/fresh/data.csv" "$MNT/copyback/" &&
     [ "$(ls "$LAKE/copyback" | grep -cE "^data-[0-9a-f]{16}\.parquet$")" = 1 ] &&
     [ "$(tail -n +2 "$MNT/copyback/data.csv" | sort)" = "$(tail -n +2 "$MNT/fresh/data.csv" | sort)" ]'
check "cp onto a view's schema.txt: EPERM, the reason logged" \
    '! cp "$IN/fresh2.csv" "$MNT/copyback/schema.txt" 2>/dev/null && grep -q "copyback/schema.txt: the lake.s files are not written in place" "$MNT/.pqfs/errors"'
# A new table's types come from a sample; a later value that does not fit makes
# the write start over with the types of every row (the first upload dropped).
mkdir "$MNT/wide"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("id,code\n")
    for i in range(210000):
        f.write("%d,%s\n" % (i, "x7" if i == 205000 else str(i % 100)))
' "$IN/wide.csv"
check "a late value that does not fit the sample's types: written in a second pass" \
    'cp "$IN/wide.csv" "$MNT/wide/" && grep -q "^code,STRING" "$MNT/wide/schema.txt" && [ "$(tail -n +2 "$MNT/wide/data.csv" | wc -l)" = 210000 ]'
check "one part file and no temporary left" '[ "$(ls -A "$LAKE/wide" | wc -l)" = 1 ]'
# A new table with partitions declared in the ini: the first write goes into
# COL=VALUE/ directories that do not exist yet.
check "mkdir of a declared partitioned table, then a write into month=2024-01/" \
    'mkdir "$MNT/sales" && printf "sku,qty\na,1\nb,2\n" >"$IN/sales.csv" && cp "$IN/sales.csv" "$MNT/sales/month=2024-01/" &&
     [ -n "$(find "$LAKE/sales/month=2024-01" -name "sales-*.parquet")" ] &&
     [ "$(cat "$MNT/sales/data.csv")" = "$(printf "sku,qty,month\na,1,2024-01\nb,2,2024-01")" ]'
# rmdir undoes a mkdir (a table without files, its directory empty); a
# table with data, a partition directory or a non-empty directory: EPERM.
check "rmdir of an empty table made by mkdir" \
    'mkdir "$MNT/oops" && [ -d "$LAKE/oops" ] && rmdir "$MNT/oops" && [ ! -e "$LAKE/oops" ] && ! ls -1 "$MNT" | grep -qx oops'
check "rmdir of a table with data, of a partition directory: EPERM, nothing removed" \
    '! rmdir "$MNT/events" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err" &&
     ! rmdir "$MNT/events/dt=2024-01-01" 2>"$WORK/err" && grep -q "Operation not permitted" "$WORK/err" &&
     [ -d "$LAKE/events/dt=2024-01-01" ]'
check "rmdir of a made table whose directory is not empty: EPERM" \
    'mkdir "$MNT/oops2" && mkdir "$LAKE/oops2/sub" && ! rmdir "$MNT/oops2" 2>/dev/null && [ -d "$LAKE/oops2/sub" ] &&
     rmdir "$LAKE/oops2/sub" && rmdir "$MNT/oops2" && [ ! -e "$LAKE/oops2" ]'
# A table made by mkdir and not declared: its first write's COL=VALUE
# directories become its partition layout (a CSV column of that name must
# agree, and is not written into the file); later writes follow the layout.
mkdir "$MNT/trips"
printf 'city,km,year\nLisbon,12,2024\nOslo,,2024\n' >"$IN/trips1.csv"
printf 'city,km\nRome,7\n' >"$IN/trips2.csv"
check "an undeclared new table takes its layout from the first write's path" \
    'cp "$IN/trips1.csv" "$MNT/trips/year=2024/" && cp "$IN/trips2.csv" "$MNT/trips/year=2025/" &&
     [ "$(cat "$MNT/trips/data.csv")" = "$(printf "city,km,year\nLisbon,12,2024\nOslo,,2024\nRome,7,2025")" ] &&
     grep -q "^year,INT64,true,true" "$MNT/trips/schema.txt"'
check "then the layout is the table's: a write outside it is EPERM" \
    '[ "$(copy_errno "$IN/trips2.csv" "$MNT/trips/x.csv")" = EPERM ]'
check "a partition value of another kind (year=soon where years are integers): EINVAL, the type stays INT64" \
    '[ "$(copy_errno "$IN/trips2.csv" "$MNT/trips/year=soon/t.csv")" = EINVAL ] && [ ! -e "$LAKE/trips/year=soon" ] &&
     grep -q "^year,INT64,true,true" "$MNT/trips/schema.txt"'
check "a date partition written as 2024-1-7 (where dt is a date): EINVAL" \
    '[ "$(copy_errno "$IN/a.csv" "$MNT/events/dt=2024-1-7/region=eu/a.csv")" = EINVAL ] && [ ! -e "$LAKE/events/dt=2024-1-7" ]'
check "mkdir of anything else: EPERM" '! mkdir "$MNT/events/junk" 2>/dev/null'

# ------------------------------------------------------------ copy tools that set modes after close
# shutil.copy / copy2 and install set the mode (and times) by name after
# close, when the file is already in the lake under its part name: the name
# stats for a few seconds more and takes them without effect.
S=$MNT/events/dt=2024-06-01/region=eu
printf 'id,name,amount,ts\n71,s,1,\n' >"$IN/sh.csv"
check "shutil.copy, shutil.copy2 and install -m 644 succeed, each file lands once" \
    'python3 -c "
import shutil, sys
shutil.copy(sys.argv[1], sys.argv[2] + \"/sh.csv\"); shutil.copy2(sys.argv[1], sys.argv[2] + \"/sh2.csv\")
" "$IN/sh.csv" "$S" && install -m 644 "$IN/sh.csv" "$S/inst.csv" &&
     [ "$(find "$LAKE/events/dt=2024-06-01" -name "*.parquet" | wc -l)" = 3 ] &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-06-01/select=id/data.csv" | tr "\n" " ")" = "71 71 71 " ]'

# The same name written again while it still stats (cp twice, a loop that
# reuses a name): a second file, not EPERM.
printf 'id,name,amount,ts\n72,t,1,\n' >"$IN/again.csv"
check "the same name written twice in a row: both land" \
    'cp "$IN/sh.csv" "$S/again.csv" && cp "$IN/again.csv" "$S/again.csv" &&
     printf "id,name,amount,ts\n73,u,1,\n" >"$S/again.csv" &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-06-01/select=id/data.csv" | sort -n | tr "\n" " ")" = "71 71 71 71 72 73 " ]'

# A name just written renamed in its directory (tempfile + os.replace;
# DuckDB's COPY over a name that exists writes tmp_NAME and renames it):
# the rows are in the lake already, only the name moves. Across
# directories, or a name not just written: EPERM.
check "tempfile + os.replace in a partition directory: the rows land once, the final name stats" \
    'python3 -c "
import os, sys, tempfile
fd, tmp = tempfile.mkstemp(dir=sys.argv[1], prefix=\"tmp\", suffix=\".csv\")
os.write(fd, b\"id,name,amount,ts\\n74,r,1,\\n\"); os.close(fd)
os.replace(tmp, sys.argv[1] + \"/final.csv\")
assert os.stat(sys.argv[1] + \"/final.csv\").st_size > 0
" "$S" && [ "$(tail -n +2 "$MNT/events/dt=2024-06-01/where=id = 74/select=id/data.csv")" = 74 ]'
check "rename across directories, or of a name not just written: EPERM" \
    'printf "id,name,amount,ts\n75,r,1,\n" >"$S/across.csv" &&
     ! mv "$S/across.csv" "$MNT/events/dt=2024-06-02/region=eu/across.csv" 2>/dev/null &&
     ! mv "$S/never.csv" "$S/never2.csv" 2>/dev/null'

# Copy tools that set a directory's times and mode after filling it (cp -a,
# rsync -a --inplace) succeed: directories take them without effect.
mkdir -p "$IN/tree/k=1" "$IN/tree/k=2" "$MNT/treecopy" "$MNT/rsynced"
printf 'a,b\n1,x\n' >"$IN/tree/k=1/r.csv"; printf 'a,b\n2,y\n' >"$IN/tree/k=2/r.csv"
check "cp -a of a tree of partitions: succeeds, every file lands" \
    'cp -a "$IN/tree/." "$MNT/treecopy/" && [ "$(tail -n +2 "$MNT/treecopy/data.csv" | tr "\n" " ")" = "1,x,1 2,y,2 " ]'
check "rsync -a --inplace of a tree of partitions: succeeds, every file lands" \
    'rsync -a --inplace "$IN/tree/" "$MNT/rsynced/" && [ "$(tail -n +2 "$MNT/rsynced/data.csv" | tr "\n" " ")" = "1,x,1 2,y,2 " ]'
# Plain rsync writes .NAME.XXXXXX and renames it to NAME: the part is named
# after NAME (a dot-named part would be hidden from every listing).
mkdir "$MNT/rsyncplain"
check "rsync -a (temporary .NAME.XXXXXX, then rename): succeeds, every file lands once, parts named r-*" \
    'rsync -a "$IN/tree/" "$MNT/rsyncplain/" && [ "$(tail -n +2 "$MNT/rsyncplain/data.csv" | tr "\n" " ")" = "1,x,1 2,y,2 " ] &&
     [ "$(cd "$LAKE/rsyncplain" && find . -name "*.parquet" | sed "s/-[0-9a-f]*\.parquet$//" | sort | tr "\n" " ")" = "./k=1/r ./k=2/r " ] &&
     [ -f "$MNT/rsyncplain/k=1/r.csv" ]'
# A temporary name (starting with '.') lands only when renamed to a name
# without the dot: an interrupted rsync closes its temporary file and
# unlinks it, and must leave nothing (its close used to commit the part).
mkdir -p "$IN/rsync_pq" "$IN/rsync_bad"
"$PQTOOL" write "$IN/tree/k=1/r.csv" "$IN/rsync_pq/p.parquet"
: >"$IN/rsync_pq/empty.csv"
check "rsync -a of a .parquet file (read as Parquet, by the name it is renamed to) and an empty file (adds nothing)" \
    'rsync -a "$IN/rsync_pq/" "$MNT/rsyncplain/k=3/" && [ -n "$(find "$LAKE/rsyncplain/k=3" -name "p-*.parquet")" ] &&
     [ "$(find "$LAKE/rsyncplain/k=3" -type f | wc -l)" = 1 ] &&
     [ "$(tail -n +2 "$MNT/rsyncplain/k=3/data.csv")" = "1,x,3" ]'
printf 'a,b\n5,w\n' >"$IN/rsync_bad/_u.csv"
printf 'a,b\n6,w\n' >"$IN/rsync_bad/data.csv"
before=$(lake_files)
# _u.csv is no data (a leading '_'): refused.  data.csv is data, whatever a
# view calls its output (issue 23): it lands as data-<unique>.parquet.
check "rsync of _u.csv and data.csv: _u.csv refused (EPERM), data.csv lands as data-<16 hex>.parquet" \
    '! rsync -a "$IN/rsync_bad/" "$MNT/rsyncplain/k=1/" 2>"$WORK/rsync_bad.err" &&
     grep -q "rename .* -> \"_u.csv\": Operation not permitted" "$WORK/rsync_bad.err" &&
     ! grep -q "data.csv" "$WORK/rsync_bad.err" &&
     [ "$(comm -13 <(echo "$before") <(lake_files) | grep -cE "rsyncplain/k=1/data-[0-9a-f]{16}\.parquet$")" = 1 ] &&
     [ "$(comm -13 <(echo "$before") <(lake_files) | wc -l)" = 1 ]'
before=$(lake_files)
check "a closed .temp file is not in the lake; unlinked it is gone; another renamed lands under the new name" \
    'python3 -c "
import os, sys
d = sys.argv[1]
for n in (\".cut.csv.X1\", \".keep.csv.X2\"):
    with open(d + \"/\" + n, \"w\") as f:
        f.write(\"a,b\\n7,partial\\n8,cu\")
assert os.stat(d + \"/.cut.csv.X1\").st_size > 0
os.unlink(d + \"/.cut.csv.X1\")
try:
    os.rename(d + \"/.cut.csv.X1\", d + \"/cut.csv\")
    sys.exit(\"renamed a discarded file\")
except OSError:
    pass
" "$MNT/rsyncplain/k=1" && [ "$(lake_files)" = "$before" ] &&
     mv "$MNT/rsyncplain/k=1/.keep.csv.X2" "$MNT/rsyncplain/k=1/keep.csv" &&
     [ -n "$(find "$LAKE/rsyncplain/k=1" -name "keep-*.parquet")" ] && [ -f "$MNT/rsyncplain/k=1/keep.csv" ]'
# A rename whose commit fails leaves its source, as a failed rename does, and
# a retry gets the same EINVAL: GNU mv (renameat2 with RENAME_NOREPLACE, then
# a plain rename when that is EINVAL) said "cannot stat" (the file was gone);
# now it fails on EINVAL (which it words as "a subdirectory of itself").
# unlink discards the file.
before=$(lake_files)
check "mv of a bad temporary file: EINVAL, the file stays until removed, nothing lands" \
    'printf "a,b\nx,y,z\n" >"$MNT/rsyncplain/k=1/.badmv.csv" &&
     ! mv "$MNT/rsyncplain/k=1/.badmv.csv" "$MNT/rsyncplain/k=1/badmv.csv" 2>"$WORK/mv.err" &&
     ! grep -q "cannot stat" "$WORK/mv.err" && [ -e "$MNT/rsyncplain/k=1/.badmv.csv" ] &&
     [ "$(rename_errno "$MNT/rsyncplain/k=1/.badmv.csv" "$MNT/rsyncplain/k=1/badmv2.csv")" = EINVAL ] &&
     rm "$MNT/rsyncplain/k=1/.badmv.csv" && [ ! -e "$MNT/rsyncplain/k=1/.badmv.csv" ] && [ "$(lake_files)" = "$before" ]'
# Renamed before it is closed (tempfile used inside its with block), and a
# temporary name written twice before its rename (the second file wins);
# a file being written stats with the bytes written so far.
before=$(lake_files)
check "a file renamed before close lands under the new name; a temp name written twice lands once, the second" \
    'python3 -c "
import os, sys, tempfile
d = sys.argv[1]
for prefix in (\"tmp\", \".\"):
    with tempfile.NamedTemporaryFile(\"w\", dir=d, prefix=prefix, suffix=\".csv\", delete=False) as f:
        f.write(\"a,b\\n9,open\\n\"); f.flush()
        assert os.stat(f.name).st_size == 11, os.stat(f.name).st_size
        os.replace(f.name, d + \"/renamed_open\" + (\"_dot\" if prefix == \".\" else \"\") + \".csv\")
for v in (\"10,first\", \"11,second\"):
    with open(d + \"/.twice.csv\", \"w\") as f:
        f.write(\"a,b\\n\" + v + \"\\n\")
os.rename(d + \"/.twice.csv\", d + \"/twice.csv\")
" "$MNT/rsyncplain/k=1" &&
     [ -n "$(find "$LAKE/rsyncplain/k=1" -name "renamed_open-*.parquet")" ] && [ -n "$(find "$LAKE/rsyncplain/k=1" -name "renamed_open_dot-*.parquet")" ] &&
     [ "$(tail -n +2 "$MNT/rsyncplain/k=1/where=a >= 9/data.csv" | sort | tr "\n" " ")" = "11,second,1 9,open,1 9,open,1 " ] &&
     [ "$(find "$LAKE/rsyncplain/k=1" -name "twice-*.parquet" | wc -l)" = 1 ]'
check "just-written names: one each (12 writes all stat), renamed the old name is gone, through a dot name too, reading one is EACCES" \
    'python3 -c "
import errno, os, sys
d = sys.argv[1]
for i in range(12):
    with open(d + \"/ring%d.csv\" % i, \"w\") as f:
        f.write(\"a,b\\n%d,ring\\n\" % (20 + i))
for i in range(12):
    os.stat(d + \"/ring%d.csv\" % i)
os.rename(d + \"/ring0.csv\", d + \"/ring0b.csv\")
assert not os.path.exists(d + \"/ring0.csv\")
os.rename(d + \"/ring1.csv\", d + \"/.ring1\")
os.rename(d + \"/.ring1\", d + \"/ring1b.csv\")
assert os.path.exists(d + \"/ring1b.csv\")
try:
    open(d + \"/ring2.csv\").read()
    sys.exit(\"read a just-written name\")
except OSError as e:
    assert e.errno == errno.EACCES, e
" "$MNT/rsyncplain/k=1" && [ "$(find "$LAKE/rsyncplain/k=1" -name "ring*.parquet" | wc -l)" = 12 ]'
# Races at close: two dup'd descriptors closed at once (one parks the file),
# and stats of a name while its file is closed (the upload freed under them
# crashed the daemon).
check "dup'd descriptors closed at once, stats racing closes: each file lands once, the daemon lives" \
    'python3 -c "
import os, sys, threading
d = sys.argv[1]
for i in range(60):
    fd = os.open(d + \"/.dup%d.csv\" % i, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b\"a,b\\n%d,dup\\n\" % (100 + i))
    fds = [fd, os.dup(fd)]
    gate = threading.Barrier(2)
    def close(f):
        gate.wait()
        os.close(f)
    ts = [threading.Thread(target=close, args=(f,)) for f in fds]
    [t.start() for t in ts]
    [t.join() for t in ts]
    os.rename(d + \"/.dup%d.csv\" % i, d + \"/dup%d.csv\" % i)
stop = False
def hammer():
    while not stop:
        try:
            os.stat(d + \"/h.csv\")
        except OSError:
            pass
ts = [threading.Thread(target=hammer) for _ in range(3)]
[t.start() for t in ts]
for i in range(150):
    with open(d + \"/h.csv\", \"w\") as f:
        f.write(\"a,b\\n%d,h\\n\" % (200 + i))
stop = True
[t.join() for t in ts]
" "$MNT/rsyncplain/k=4" && [ "$(find "$LAKE/rsyncplain/k=4" -name "dup*.parquet" | wc -l)" = 60 ] &&
     [ "$(find "$LAKE/rsyncplain/k=4" -name "h-*.parquet" | wc -l)" = 150 ] && kill -0 "$PID"'
check "a name starting with _ is still refused" \
    '! (printf "a,b\n3,z\n" >"$MNT/rsyncplain/k=1/_x.csv") 2>/dev/null && [ "$(find "$LAKE/rsyncplain" -name "_*" | wc -l)" = 0 ]'

# ------------------------------------------------------------ concurrent first writes
# Three first writes into a new table at once, with conflicting columns: the
# first to commit defines the table, the others meet it (or fail EINVAL);
# the table stays readable (three conflicting files made it EIO).
printf 'id,v\n1,2\n' >"$IN/r1.csv"; printf 'id,v\nabc,xyz\n' >"$IN/r2.csv"; printf 'id,w\n5,6\n' >"$IN/r3.csv"
mkdir "$MNT/race"
race_pids=()
for f in r1 r2 r3; do
    (if cp "$IN/$f.csv" "$MNT/race/" 2>"$WORK/$f.err"; then echo 0; else echo 1; fi >"$WORK/$f.rc") & race_pids+=($!)
done
wait "${race_pids[@]}" || true
ok_writes=$(cat "$WORK"/r[123].rc | grep -c '^0$' || true)
check "concurrent first writes into a new table: one schema, every accepted row readable ($ok_writes accepted)" \
    '[ "$ok_writes" -ge 1 ] && [ "$(find "$LAKE/race" -name "*.parquet" | wc -l)" = "$ok_writes" ] &&
     cat "$MNT/race/data.csv" >"$WORK/race.csv" && [ "$(tail -n +2 "$WORK/race.csv" | wc -l)" = "$ok_writes" ]'

# ------------------------------------------------------------ children of the writer
# A child started while the file is open closes its copy of the descriptor
# (at exec or exit): that close must not write the half-written file.
D=$MNT/events/dt=2024-04-01/region=eu
check "a writer that runs a subprocess midway: both rows land, close() is OK" \
    '[ "$(python3 -c "
import subprocess, sys
with open(sys.argv[1], \"w\") as f:
    f.write(\"id,name,amount,ts\n31,f1,1,\n\"); f.flush()
    subprocess.run([\"true\"], check=True)
    f.write(\"32,f2,2,\n\")
print(\"OK\")
" "$D/sub.csv")" = OK ] && [ "$(tail -n +2 "$MNT/events/dt=2024-04-01/select=id/data.csv" | tr "\n" " ")" = "31 32 " ]'
check "a shell group that runs a command between writes: one file, both rows" \
    '{ echo "id,name,amount,ts"; echo "41,g,1,"; /bin/true; echo "42,h,2,"; } >"$D/grp.csv" &&
     [ "$(find "$LAKE/events/dt=2024-04-01/region=eu" -name "grp-*.parquet" | wc -l)" = 1 ] &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-04-01/select=id/data.csv" | sort -n | tr "\n" " ")" = "31 32 41 42 " ]'
check "the writer's own close still reports the outcome (EINVAL after a child closed first)" \
    '[ "$(python3 -c "
import errno, subprocess, sys
try:
    with open(sys.argv[1], \"w\") as f:
        f.write(\"id,name,amount,ts\n43,x,abc,\n\"); f.flush()
        subprocess.run([\"true\"], check=True)
    print(\"OK\")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
" "$D/subbad.csv")" = EINVAL ] && [ -z "$(find "$LAKE/events" -name "subbad-*")" ]'
check "a descriptor passed to a child that writes after the opener closed: the rows land" \
    'python3 -c "
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
child = subprocess.Popen([\"sh\", \"-c\", \"sleep 0.2; printf \x27id,name,amount,ts\\\\n51,k,1,\\\\n\x27\"], stdout=fd)
os.close(fd)
sys.exit(child.wait())
" "$D/passed.csv" && sleep 0.3 && [ "$(tail -n +2 "$MNT/events/dt=2024-04-01/select=id/data.csv" | sort -n | tr "\n" " ")" = "31 32 41 42 51 " ]'

# A dup'd descriptor closed while the file is still open (a shell's
# `echo >&3` dups 3 onto 1 and closes the copy; os.close(os.dup(fd))): the
# file is written at the last close, with every row (it was written at the
# first, and the rest refused with EPERM).
mkdir -p "$IN/dup"
check "exec 3>FILE; echo >&3 ...; exec 3>&-: one file with every row" \
    'bash -c "exec 3>\"$D/dup3.csv\"; echo id,name,amount,ts >&3; echo 71,d,1, >&3; echo 72,d,2, >&3; exec 3>&-" &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-04-01/where=id > 70 AND id < 80/select=id/data.csv" | sort -n | tr "\n" " ")" = "71 72 " ]'
check "os.close(os.dup(fd)) mid-file: the rows after it land too" \
    'python3 -c "
import os, sys
f = open(sys.argv[1], \"w\")
f.write(\"id,name,amount,ts\\n81,p,1,\\n\"); f.flush()
os.close(os.dup(f.fileno()))
f.write(\"82,p,2,\\n\"); f.close()
" "$D/dup.csv" &&
     [ "$(tail -n +2 "$MNT/events/dt=2024-04-01/where=id > 80 AND id < 90/select=id/data.csv" | sort -n | tr "\n" " ")" = "81 82 " ]'

# ------------------------------------------------------------ writers that die, read-write opens
# A writer killed mid-file (kill -9, SIGTERM of cp): the kernel closes its
# files as close() would, but what arrived is not the file; nothing lands.
# The killed writer has sent whole lines, so what arrived parses (it used to
# land as a shorter file).
# A writer that exits normally without close() (a command behind `> FILE`
# does) still writes.
K=$MNT/sales/month=2024-05
python3 -c 'print("sku,qty"); [print(f"s{i},{i}") for i in range(300000)]' >"$WORK/slow.csv"
cat >"$WORK/killme.py" <<'KILLEOF'
import os, sys, time
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT)
os.write(fd, open(sys.argv[1], "rb").read())
with open(sys.argv[3], "w") as f:
    f.write(str(os.getpid()))  # python3 may be a wrapper: kill this pid
time.sleep(30)
KILLEOF
python3 "$WORK/killme.py" "$WORK/slow.csv" "$K/killed.csv" "$WORK/killed.ready" &
kp=$!
for _ in $(seq 100); do [ -s "$WORK/killed.ready" ] && break; sleep 0.1; done
kill -9 "$(cat "$WORK/killed.ready" 2>/dev/null)" 2>/dev/null || true; wait $kp 2>/dev/null || true; sleep 0.3
check "a writer killed with SIGKILL after sending its rows: nothing lands, nothing is left" \
    '[ -e "$WORK/killed.ready" ] && [ -z "$(find "$LAKE/sales" -name "killed-*" -o -name ".killed-*")" ] && [ ! -e "$LAKE/sales/month=2024-05" ]'
check "cp killed with SIGTERM midway: nothing lands" \
    'mkfifo "$WORK/fifo" && { (cat "$WORK/slow.csv"; sleep 5) >"$WORK/fifo" & fp=$!; } &&
     { cp "$WORK/fifo" "$K/cpkilled.csv" & cp_pid=$!; } && sleep 0.5 && kill -TERM $cp_pid; wait $cp_pid 2>/dev/null; kill $fp 2>/dev/null; wait $fp 2>/dev/null
     sleep 0.3; [ -z "$(find "$LAKE/sales" -name "cpkilled-*")" ]'
# Killed while close() writes the file (the rows are all there; the commit
# takes a while): nothing lands either (it landed whole, and a retry then
# wrote the rows twice).
python3 -c 'print("sku,qty"); [print(f"s{i},{i}") for i in range(4000000)]' >"$WORK/big.csv"
cat >"$WORK/killclose.py" <<'KILLEOF'
import os, sys, time
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT)
os.write(fd, open(sys.argv[1], "rb").read())
parent = os.getpid()
if os.fork() == 0:
    # Kills the writer 50 ms into its close(), which takes longer (4M rows:
    # about 0.3 s here);
    # the child's own copy of the descriptor goes first.
    os.close(fd)
    time.sleep(0.05)
    os.kill(parent, 9)
    os._exit(0)
os.close(fd)
KILLEOF
check "a writer killed while close() writes its file: nothing lands" \
    '! python3 "$WORK/killclose.py" "$WORK/big.csv" "$K/inclose.csv" 2>/dev/null; sleep 0.5;
     [ -z "$(find "$LAKE/sales" -name "inclose-*" -o -name ".inclose-*")" ] && [ ! -e "$LAKE/sales/month=2024-05" ]'
check "a writer that exits without close(): its file lands whole" \
    'python3 -c "
import os, sys
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT)
os.write(fd, open(sys.argv[1], \"rb\").read())
os._exit(0)
" "$WORK/slow.csv" "$K/exited.csv" && sleep 0.3 &&
     [ "$(tail -n +2 "$MNT/sales/month=2024-05/data.csv" | wc -l)" = 300000 ]'
check "read() of a file opened read-write for writing: EINVAL, the mount serves on, the file lands" \
    '[ "$(python3 -c "
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
os.write(fd, b\"id,name,amount,ts\\n61,rw,1,\\n\")
try:
    os.read(fd, 10); print(\"read\")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
os.close(fd)
" "$D/rw.csv")" = EINVAL ] && [ "$(tail -n +2 "$MNT/events/dt=2024-04-01/select=id/data.csv" | sort -n | tr "\n" " ")" = "31 32 41 42 51 61 71 72 81 82 " ]'

stop_pqfs "$MNT" "$PID"

# ------------------------------------------------------------ cache_size bounds staging
# Staged bytes share cache_size with kept results: a file bigger than the
# budget fails with ENOSPC at the write that passes it, and close() writes
# nothing (the staged bytes are not the whole file); the budget is free again
# for the next file.
start_pqfs "$WORK/pqfs-small.log" "$LAKE" "$WORK/small" -o "cache_dir=$WORK/cache-small,cache_size=1MiB"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("id,name,amount,ts\n")
    for i in range(100000): f.write("%d,name-%d,%d.5,2024-01-01 00:00:00\n" % (1000 + i, i, i))
' "$IN/big.csv"
before=$(lake_files)
check "a file bigger than cache_size: ENOSPC" \
    '[ "$(copy_errno "$IN/big.csv" "$WORK/small/events/dt=2024-01-01/region=eu/big.csv")" = ENOSPC ]'
check "the failed write leaves nothing (not the part staged before the cache filled)" '[ "$(lake_files)" = "$before" ]'
check "the reason is in /.pqfs/errors" 'grep -q "big.csv: the cache is full" "$WORK/small/.pqfs/errors"'
check "the next file fits again" 'cp "$IN/a.csv" "$WORK/small/events/dt=2024-01-01/region=eu/again.csv" && [ -n "$(find "$LAKE/events" -name "again-*.parquet")" ]'
stop_pqfs "$WORK/small" "$PQFS_PID"

# ------------------------------------------------------------ read-only mount
start_pqfs "$WORK/pqfs-ro.log" "$LAKE" "$WORK/ro" -o "cache_dir=$WORK/cache-ro,read_only=true"
check "read-only mount: EROFS" '[ "$(copy_errno "$IN/a.csv" "$WORK/ro/events/dt=2024-01-01/region=eu/x.csv")" = EROFS ]'
check "read-only mount: mkdir EROFS" '! mkdir "$WORK/ro/t2" 2>"$WORK/err" && grep -q "Read-only file system" "$WORK/err"'
stop_pqfs "$WORK/ro" "$PQFS_PID"

summary mount.write
