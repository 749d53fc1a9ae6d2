#!/usr/bin/env bash
# Schema evolution through a real mount (CTest evolve.mount): Hive tables
# whose files' schemas differ, written by DuckDB, read through pqfs as
# DuckDB reads them with read_parquet(..., union_by_name = true):
#   - added: a column only the later file has is a column of every view
#     (data.csv, schema.txt, select=, where= on it, data.parquet read back
#     by DuckDB); the earlier file's rows hold NULL there;
#   - parts: partitions whose files differ: each partition view's schema is
#     the first file's and its own files' union (a type widened there,
#     a column only it has), the table's is every file's;
#   - a file added later with a new column shows in the views after
#     metadata_ttl; the union is computed once per set of files (a second
#     read of schema.txt reads no file);
#   - conflict: a string beside an integer fails only the views that read
#     that column, naming the file, the column and both types;
#   - a CSV written into a table may widen it: fare written first as 30,
#     then 12.5, is DOUBLE in the second file and in the table.
#   tests/evolve/mount.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: mount.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=../mount/lib.sh
. "$here/../mount/lib.sh"
mount_test_init

LAKE=$WORK/lake MNT=$WORK/mnt
mkdir -p "$LAKE"
duck() { node "$root/tests/mount/duck.mjs" sql "$@"; }
sq() { printf "'%s'" "${1//\'/\'\'}"; }

# write REL SQL: DuckDB's COPY (SQL) to LAKE/REL.
write() {
    mkdir -p "$(dirname "$LAKE/$1")"
    duck "COPY ($2) TO $(sq "$LAKE/$1") (FORMAT parquet)" >/dev/null
}
# expect NAME FROM [WHERE] [SELECT]: DuckDB's rows of FROM as canonical CSV
# in WORK/NAME.csv.
expect() {
    local sql="SELECT ${4:-*} FROM $2${3:+ WHERE $3}"
    duck "SET TimeZone = 'UTC'" "COPY ($sql) TO $(sq "$WORK/$1.csv") (FORMAT csv, HEADER, NULLSTR '')" >/dev/null
}
union_of() { printf "read_parquet([%s], union_by_name = true, hive_partitioning = true)" "$1"; }
# same WHAT EXPECTED_CSV GOT_FILE: rows by meaning, unordered.
same() {
    local out
    if out=$(python3 "$CSVCMP" "$2" "$3" --unordered 2>&1); then pass "$1"; else fail "$1: $(echo "$out" | head -5)"; fi
}
stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$MNT/.pqfs/stats"; }

# ------------------------------------------------------------------ the lake
write added/f1.parquet "SELECT i::INTEGER AS id, 'a' || i AS name FROM range(1, 6) t(i)"
write added/f2.parquet "SELECT i::BIGINT AS id, 'b' || i AS name, (i * 1.5)::DOUBLE AS score FROM range(6, 11) t(i)"
write parts/p=1/x.parquet "SELECT i::INTEGER AS id, (i / 4)::FLOAT AS v FROM range(1, 4) t(i)"
write parts/p=2/y.parquet "SELECT i::BIGINT AS id, i / 4 AS v, 'e' || i AS extra FROM range(4, 7) t(i)"
write conflict/a.parquet "SELECT i::INTEGER AS id, i::INTEGER AS code FROM range(1, 4) t(i)"
write conflict/b.parquet "SELECT i::INTEGER AS id, 'c' || i AS code FROM range(4, 7) t(i)"

start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,metadata_ttl=1s,log_level=debug"
A=$MNT/added P=$MNT/parts

# ------------------------------------------------------------------ added
F="$(sq "$LAKE/added/f1.parquet"), $(sq "$LAKE/added/f2.parquet")"
expect added "$(union_of "$F")"
cat "$A/data.csv" >"$WORK/got-added.csv"
same "added: data.csv is the union of both files (score NULL in the first's rows)" "$WORK/added.csv" "$WORK/got-added.csv"
check "added: schema.txt lists the later file's column, the widened type" \
    "grep -qx 'id,INT64,true,false' '$A/schema.txt' && grep -qx 'score,DOUBLE,true,false' '$A/schema.txt'"
expect added-where "$(union_of "$F")" "score > 10" "id, score"
cat "$A/where=score > 10/select=id,score/data.csv" >"$WORK/got-added-where.csv"
same "added: where= and select= on a column only the later file has" "$WORK/added-where.csv" "$WORK/got-added-where.csv"
expect added-null "$(union_of "$F")" "score IS NULL" "name"
cat "$A/where=score IS NULL/select=name/data.csv" >"$WORK/got-added-null.csv"
same "added: score IS NULL holds in the first file's rows" "$WORK/added-null.csv" "$WORK/got-added-null.csv"
check "added: a column no file has is still unknown (ENOENT)" "! ls '$A/select=nosuch' >/dev/null 2>&1"
cp "$A/data.parquet" "$WORK/added.parquet"
expect added-pq "read_parquet($(sq "$WORK/added.parquet"))"
same "added: data.parquet holds the union's rows (read back by DuckDB)" "$WORK/added.csv" "$WORK/added-pq.csv"
check "added: data.parquet's score is DOUBLE and id BIGINT" \
    "[ \"\$(duck \"SELECT string_agg(column_name || ' ' || column_type, ',') FROM (DESCRIBE SELECT * FROM read_parquet($(sq "$WORK/added.parquet")))\")\" = 'id BIGINT,name VARCHAR,score DOUBLE' ]"

# ------------------------------------------------------------------ parts
X=$(sq "$LAKE/parts/p=1/x.parquet") Y=$(sq "$LAKE/parts/p=2/y.parquet")
expect parts "$(union_of "$X, $Y")"
cat "$P/data.csv" >"$WORK/got-parts.csv"
same "parts: the table is every file's union (float and double: double; int and bigint: bigint)" \
    "$WORK/parts.csv" "$WORK/got-parts.csv"
expect parts-2 "$(union_of "$X, $Y")" "p = 2"
cat "$P/p=2/data.csv" >"$WORK/got-parts-2.csv"
same "parts: p=2's view has its own column (extra) and widened types" "$WORK/parts-2.csv" "$WORK/got-parts-2.csv"
check "parts: p=2's schema.txt: extra, v DOUBLE" \
    "grep -qx 'extra,STRING,true,false' '$P/p=2/schema.txt' && grep -qx 'v,DOUBLE,true,false' '$P/p=2/schema.txt'"
check "parts: p=1's schema is its own file's (no extra, v FLOAT)" \
    "! grep -q '^extra,' '$P/p=1/schema.txt' && grep -qx 'v,FLOAT,true,false' '$P/p=1/schema.txt'"
expect parts-extra "$(union_of "$X, $Y")" "extra = 'e5'" "id, extra"
cat "$P/extra=e5/select=id,extra/data.csv" >"$WORK/got-parts-extra.csv"
same "parts: COL=VALUE on a column only p=2's file has" "$WORK/parts-extra.csv" "$WORK/got-parts-extra.csv"

# ------------------------------------------------------------------ memo, and a file added later
cat "$A/schema.txt" >/dev/null
reads=$(stat_of source_read_requests)
cat "$A/schema.txt" "$A/where=score > 1/schema.txt" >/dev/null
check "the union is kept: schema.txt again reads no file ($reads read requests before)" \
    "[ \"\$(stat_of source_read_requests)\" = '$reads' ]"
write added/f3.parquet "SELECT i::BIGINT AS id, 'c' || i AS name, (i * 1.5)::DOUBLE AS score, i % 2 = 0 AS flag FROM range(11, 13) t(i)"
sleep 1.2
check "a file added later: its new column is in schema.txt after metadata_ttl" "grep -qx 'flag,BOOLEAN,true,false' '$A/schema.txt'"
F3="$F, $(sq "$LAKE/added/f3.parquet")"
expect added3 "$(union_of "$F3")" "flag IS NOT NULL OR id < 3" "id, flag"
cat "$A/where=flag IS NOT NULL OR id < 3/select=id,flag/data.csv" >"$WORK/got-added3.csv"
same "a file added later: its rows, and NULL flags in the older files' rows" "$WORK/added3.csv" "$WORK/got-added3.csv"

# ------------------------------------------------------------------ conflict
C=$MNT/conflict
check "conflict: the view of id alone reads both files" \
    "[ \"\$(tail -n +2 '$C/select=id/data.csv' | sort -n | tr '\n' ' ')\" = '1 2 3 4 5 6 ' ]"
check "conflict: data.csv (which reads code) fails: EIO" "! cat '$C/data.csv' >/dev/null 2>&1"
# Its data.parquet cannot be made, yet is a file to ls -l (size 0); its
# read fails (issue 23: ls -l showed -????????? and stat was EIO).
check "conflict: stat of data.parquet succeeds, size 0" "[ \"\$(stat -c %s '$C/data.parquet')\" = 0 ]"
check "conflict: ls -l shows data.parquet" "ls -l '$C' | grep -q '^-r.* 0 .* data.parquet\$'"
check "conflict: reading data.parquet: EIO" "[ \"\$(errno_of read '$C/data.parquet')\" = EIO ]"
check "conflict: the error names the file, the column and both types" \
    "grep -q \"b.parquet: column 'code' is STRING in this file but INT32 in the table's schema\" '$MNT/.pqfs/errors'"

# ------------------------------------------------------------------ a CSV write widens
# fare written first as 30 (BIGINT), then 12.5: the second file's fare is
# DOUBLE, the table's too; a value that is no number fails (EINVAL) as the
# table's type says, writing nothing.
mkdir "$MNT/fares"
printf 'trip,fare\n1,30\n2,7\n' >"$WORK/fares1.csv"
printf 'trip,fare\n3,12.5\n4,\n' >"$WORK/fares2.csv"
printf 'trip,fare\n5,abc\n' >"$WORK/fares3.csv"
check "fares: the first CSV makes the table (fare BIGINT)" \
    "cp '$WORK/fares1.csv' '$MNT/fares/' && grep -qx 'fare,INT64,true,false' '$MNT/fares/schema.txt'"
check "fares: 12.5 into it is written (its file's fare DOUBLE)" "cp '$WORK/fares2.csv' '$MNT/fares/'"
sleep 1.2
check "fares: the table's fare is DOUBLE now" "grep -qx 'fare,DOUBLE,true,false' '$MNT/fares/schema.txt'"
printf 'trip,fare\n1,30.0\n2,7.0\n3,12.5\n4,\n' >"$WORK/fares.csv"
same "fares: every row, 30 as 30.0" "$WORK/fares.csv" "$MNT/fares/data.csv"
check "fares: DuckDB reads the files as one table with the same rows" \
    "[ \"\$(duck \"SELECT string_agg(trip || ':' || coalesce(fare::VARCHAR, 'NULL'), ' ' ORDER BY trip) FROM read_parquet($(sq "$LAKE/fares/*.parquet"), union_by_name = true)\")\" = '1:30.0 2:7.0 3:12.5 4:NULL' ]"
if cp "$WORK/fares3.csv" "$MNT/fares/" 2>"$WORK/fares3.err"; then fail "fares: 'abc' written"
elif grep -q "Invalid argument" "$WORK/fares3.err" && grep -q "fares3.csv: line 2, column fare: 'abc'" "$WORK/pqfs.log" &&
    ! grep "fares3.csv: line 2, column fare" "$WORK/pqfs.log" | grep -q DOUBLE; then
    pass "fares: 'abc' fails with EINVAL, the message naming the table's type"
else fail "fares: 'abc': $(cat "$WORK/fares3.err"); log: $(grep fares3 "$WORK/pqfs.log" | head -3)"; fi
check "fares: nothing of it written" "[ \"\$(ls '$LAKE/fares' | wc -l)\" = 2 ]"

stop_pqfs "$MNT" "$PQFS_PID"
summary evolve.mount
