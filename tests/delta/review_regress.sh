#!/usr/bin/env bash
# Regressions found by the review of the Delta mount work (f6706f4..3e6131e):
# each check fails on 3e6131e.
#   - a Delta partition column named as a path keyword (as_of, limit):
#     readdir lists COL=VALUE entries that resolve to time travel / a limit,
#     not to the partition (rows of other partitions shown);
#   - partition values that are one value of the column's type ("05" and
#     "5" of a long) are listed as two directories, each with both's rows;
#   - a string partition value "__HIVE_DEFAULT_PARTITION__" is listed as a
#     second NULL directory (a name listed twice; its rows in no directory);
#   - an append writes partition values as typed in the path ("05", "-0",
#     "1000" for a byte, "inf"/"nan" for a double: not what Delta's readers
#     parse);
#   - S3: a log commit whose PUT landed but whose reply was lost is retried,
#     answered 412, read back as "another writer's" and committed again as
#     the next version (the same add twice);
#   - S3 times objects to the second: as_of= inside a commit's second.
#   tests/delta/review_regress.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: review_regress.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init
require_delta_testdata

LAKE=$WORK/lake MNT=$WORK/mnt
mkdir -p "$LAKE"
# schema2 NAME TYPE: the schema of id (a long) and NAME of TYPE.
schema2() { struct_schema "$(field_json id long)" "$(field_json "$1" "$2")"; }

# A table partitioned by a date column named as_of: two partitions, two versions.
T=$LAKE/asof; mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'; write_parquet "$T/b.parquet" $'id\n2\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(schema2 as_of date)" '["as_of"]')" "$(add_action "$T" a.parquet '{"as_of":"2024-01-05"}')"
write_commit "$T" 1 "$(add_action "$T" b.parquet '{"as_of":"2024-01-06"}')"
touch -d '2024-01-01 00:00:00 UTC' "$T/_delta_log/00000000000000000000.json"
touch -d '2024-01-05 12:00:00 UTC' "$T/_delta_log/00000000000000000001.json"
# Partitioned by a long column named limit.
T=$LAKE/lim; mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n2\n3\n'; write_parquet "$T/b.parquet" $'id\n4\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(schema2 limit long)" '["limit"]')" "$(add_action "$T" a.parquet '{"limit":"1"}')" "$(add_action "$T" b.parquet '{"limit":"2"}')"
# A long partition column whose log spells 5 two ways.
T=$LAKE/five; mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'; write_parquet "$T/b.parquet" $'id\n2\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(schema2 p long)" '["p"]')" "$(add_action "$T" a.parquet '{"p":"05"}')" "$(add_action "$T" b.parquet '{"p":"5"}')"
# A string partition column holding the Hive NULL marker as a value, and a NULL.
T=$LAKE/marker; mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'; write_parquet "$T/b.parquet" $'id\n2\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(schema2 s string)" '["s"]')" "$(add_action "$T" a.parquet '{"s":"__HIVE_DEFAULT_PARTITION__"}')" "$(add_action "$T" b.parquet '{"s":null}')"
# Typed partition columns an append writes values of.
T=$LAKE/typed; mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json b byte)" "$(field_json d double)")" '["b","d"]')" "$(add_action "$T" a.parquet '{"b":"1","d":"1.5"}')"

# In-commit timestamps (writer feature inCommitTimestamp): the commits'
# times are in commitInfo.inCommitTimestamp, not the files' mtimes (here a
# copy's: every commit "made" in 2024-01-05).
T=$LAKE/ict; mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'; write_parquet "$T/b.parquet" $'id\n2\n'
write_commit "$T" 0 '{"commitInfo":{"inCommitTimestamp":1600000000000,"timestamp":1600000000000,"operation":"WRITE"}}' \
    '{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["inCommitTimestamp"]}}' \
    "$(metadata_action "$ID_SCHEMA")" "$(add_action "$T" a.parquet '{}')"
write_commit "$T" 1 '{"commitInfo":{"inCommitTimestamp":1800000000000,"timestamp":1800000000000,"operation":"WRITE"}}' "$(add_action "$T" b.parquet '{}')"
touch -d '2024-01-05 00:00:00 UTC' "$T"/_delta_log/*.json

start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,log_level=info"
DAEMON=$PQFS_PID
ids() { tail -n +2 "$1" 2>/dev/null | cut -d, -f1 | sort -n | tr '\n' ' '; }

# ------------------------------------------------------------ keyword partition columns
# Every listed partition directory shows that partition's rows only (or
# is not listed): as_of=2024-01-06 is the partition of id 2, not the
# table at 2024-01-06 (ids 1 and 2).
for d in "$MNT"/asof/as_of=*; do
    want=$([ "${d##*=}" = 2024-01-05 ] && echo "1 " || echo "2 ")
    check "as_of partition column: ${d##*/} shows its partition's rows" '[ "$(ids "$d/data.csv")" = "$want" ]'
done
for d in "$MNT"/lim/limit=*; do
    want=$([ "${d##*=}" = 1 ] && echo "1 2 3 " || echo "4 ")
    check "limit partition column: ${d##*/} shows its partition's rows" '[ "$(ids "$d/data.csv")" = "$want" ]'
done

# ------------------------------------------------------------ in-commit timestamps
# as_of=2024-06-01 is before version 1 by its in-commit timestamp (2027):
# version 0 (id 1), or refused as the commit message says; never id 1 and 2.
got=$(ids "$MNT/ict/as_of=2024-06-01/data.csv" || true)
check "in-commit timestamps: as_of by time refused or by them, not by mtimes (got ids '$got')" '[ "$got" = "" ] || [ "$got" = "1 " ]'

# ------------------------------------------------------------ one value, one directory
check "05 and 5 of a long partition column: one directory" '[ "$(ls -d "$MNT"/five/p=* | wc -l)" = 1 ]'
all=""
for d in "$MNT"/five/p=*; do all="$all$(ids "$d/data.csv")"; done
check "... and the partitions' rows together are the table's, once" '[ "$all" = "1 2 " ]'

names=$(ls "$MNT/marker" | grep '^s=' || true)
check "a string value __HIVE_DEFAULT_PARTITION__ and NULL: two names, not one twice" \
    '[ "$(printf "%s\n" "$names" | sort -u | wc -l)" = 2 ]'
all=""
for d in $names; do all="$all$(ids "$MNT/marker/$d/data.csv")"; done
check "... and the partitions' rows together are the table's, once" '[ "$(printf "%s" "$all" | tr " " "\n" | sort -n | tr "\n" " ")" = " 1 2 " ] || [ "$(echo $all | tr " " "\n" | sort -n | tr "\n" " ")" = "1 2 " ]'

# ------------------------------------------------------------ partition values an append writes
printf 'id\n7\n' >"$WORK/x.csv"
# Delta's readers parse a byte as a Java Byte and a double as Java's
# Double.parseDouble does: "1000" and "inf" are neither.
if cp "$WORK/x.csv" "$MNT/typed/b=1000/d=1.5/" 2>/dev/null; then
    fail "append: b=1000 into a byte partition column is taken (written $(add_partition_values "$LAKE/typed/_delta_log/00000000000000000001.json"))"
else pass "append: b=1000 into a byte column refused"; fi
v=$(ls "$LAKE/typed/_delta_log/" | grep -c 'json$')
if cp "$WORK/x.csv" "$MNT/typed/b=007/d=inf/" 2>/dev/null; then
    got=$(add_partition_values "$LAKE/typed/_delta_log/$(printf '%020d' "$v").json")
    check "append: b=007 d=inf written as Delta spells them (7, Infinity), not '$got'" \
        '[ "$got" = "{\"b\": \"7\", \"d\": \"Infinity\"}" ]'
else pass "append: b=007/d=inf refused"; fi
stop_pqfs "$MNT" "$DAEMON"

# ------------------------------------------------------------ S3: a commit's reply lost
S3ROOT=$WORK/s3root
mkdir -p "$S3ROOT/lake"
cp -r "$DELTA/simple_table" "$S3ROOT/lake/"
start_fake_s3 s3 --lose-conditional-replies 1
[ -n "$FAKE_S3_PORT" ] || { fail "fake_s3 did not start: $(cat "$WORK/s3.err")"; summary "delta.regress"; exit 1; }
write_s3_ini "$WORK/s3.ini" "$WORK/cache-s3"
start_pqfs "$WORK/pqfs-s3.log" "$WORK/s3.ini" "$MNT"
A=$PQFS_PID
before=$(ls "$S3ROOT/lake/simple_table/_delta_log/" | grep -c 'json$')
printf 'id\n900\n' >"$WORK/s.csv"
cp "$WORK/s.csv" "$MNT/simple_table/" 2>"$WORK/cp.err" || true
after=$(ls "$S3ROOT/lake/simple_table/_delta_log/" | grep -c 'json$')
adds=$(cat "$S3ROOT"/lake/simple_table/_delta_log/*.json | grep -c '"path":"s-' || true)
check "S3, a commit's reply lost: one version committed, not $((after - before))" '[ $((after - before)) = 1 ]'
check "... adding the file once, not $adds times" '[ "$adds" = 1 ]'
check "... and the table reads" '"$PQTOOL" cat "$S3ROOT/lake/simple_table" >/dev/null'
# S3 times objects to the second: a time inside the second of a commit is
# refused, not guessed at; one well after the last commit is the latest.
last=$(ls "$S3ROOT/lake/simple_table/_delta_log/" | grep 'json$' | tail -n 1)
sec=$(date -u -d "@$(stat -c %Y "$S3ROOT/lake/simple_table/_delta_log/$last")" '+%Y-%m-%d %H:%M:%S')
check "S3: as_of= within the second of a commit: EINVAL" '[ "$(errno_of stat "$MNT/simple_table/as_of=$sec.500")" = EINVAL ]'
check "... and the reason is logged" 'grep -q "within the second of version" "$WORK/pqfs-s3.log"'
check "S3: as_of= well after the last commit: the latest" '[ "$(tail -n +2 "$MNT/simple_table/as_of=2099-01-01/data.csv" | sort -n | tr "\n" " ")" = "$(tail -n +2 "$MNT/simple_table/data.csv" | sort -n | tr "\n" " ")" ]'
stop_pqfs "$MNT" "$A"
summary "delta.regress"
