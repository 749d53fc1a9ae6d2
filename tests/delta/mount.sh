#!/usr/bin/env bash
# Delta Lake tables through a real mount (issue 21), in a lake made here
# beside a Hive table; each table of the shared corpus as a mount's root is
# tests/delta/mount_table.sh.
#   - an overwrite before VACUUM (the log removes a file still on disk):
#     the removed file's rows are not shown; as_of=0 shows them;
#   - partition values from the log, not the directories: files outside any
#     COL=VALUE directory, a decoy directory the log does not name; readdir
#     lists the log's values, a COL=VALUE component filters by them;
#   - a schema changed by a later version: schema.txt of as_of=0 is that
#     version's;
#   - as_of=TIMESTAMP by the commits' modification times (one set back in
#     time counts as 1 ms after the one before), in UTC or with an offset;
#   - bad as_of= components, and as_of= on a Hive table;
#   - writes into an older version refused with EPERM, nothing written
#     (appends: tests/delta/append.sh);
#   - plan.txt names the version.
#   tests/delta/mount.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: mount.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init

LAKE=$WORK/lake MNT=$WORK/mnt
mkdir -p "$LAKE"

# An overwrite before VACUUM.
T=$LAKE/overwrite
mkdir -p "$T"
write_parquet "$T/part-a.parquet" $'id\n1\n2\n3\n4\n5\n'
write_parquet "$T/part-b.parquet" $'id\n6\n7\n8\n9\n10\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA")" "$(add_action "$T" part-a.parquet)"
write_commit "$T" 1 "$(remove_action part-a.parquet)" "$(add_action "$T" part-b.parquet)"

# Partition values from the log: the files are at the table's root, and a
# directory region=xx holds a file the log does not add.
T=$LAKE/flatpart
mkdir -p "$T/region=xx"
write_parquet "$T/eu.parquet" $'id\n1\n2\n'
write_parquet "$T/us.parquet" $'id\n3\n'
write_parquet "$T/none.parquet" $'id\n4\n'
write_parquet "$T/region=xx/decoy.parquet" $'id\n99\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json region string)")" '["region"]')" \
    "$(add_action "$T" eu.parquet '{"region":"eu"}')" "$(add_action "$T" us.parquet '{"region":"u/s"}')" \
    "$(add_action "$T" none.parquet '{"region":null}')"

# A schema that a later version changes (an overwrite with a new column).
T=$LAKE/evolve
mkdir -p "$T"
write_parquet "$T/e0.parquet" $'id\n1\n'
write_parquet "$T/e1.parquet" $'id,name\n2,b\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA")" "$(add_action "$T" e0.parquet)"
write_commit "$T" 1 "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json name string)")")" "$(remove_action e0.parquet)" "$(add_action "$T" e1.parquet)"

# Timed commits: a table of five versions whose commit files have these
# modification times (version 3's is set back, before version 2's).
T=$LAKE/timed
mkdir -p "$T"
for v in 0 1 2 3 4; do write_parquet "$T/v$v.parquet" "$(printf 'id\n%d\n' "$v")"; done
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA")" "$(add_action "$T" v0.parquet)"
for v in 1 2 3 4; do write_commit "$T" "$v" "$(add_action "$T" "v$v.parquet")"; done
times=("2024-01-01 00:00:00Z" "2024-01-02 00:00:00Z" "2024-01-03 00:00:00Z" "2024-01-02 12:00:00Z" "2024-01-05 00:00:00Z")
for v in 0 1 2 3 4; do touch -d "${times[$v]}" "$T/_delta_log/$(printf '%020d' "$v").json"; done

# Files with statistics in their adds (numRecords, minValues, maxValues,
# nullCount): a file they rule out is never opened.
T=$LAKE/stats
mkdir -p "$T"
write_parquet "$T/low.parquet" $'id\n1\n2\n3\n'
write_parquet "$T/high.parquet" $'id\n7\n8\n9\n'
stats_add() {
    printf '{"add":{"path":"%s","partitionValues":{},"size":%s,"modificationTime":1,"dataChange":true,"stats":"{\\"numRecords\\":3,\\"minValues\\":{\\"id\\":%s},\\"maxValues\\":{\\"id\\":%s},\\"nullCount\\":{\\"id\\":0}}"}}' \
        "$1" "$(stat -c %s "$T/$1")" "$2" "$3"
}
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA")" "$(stats_add low.parquet 1 3)" "$(stats_add high.parquet 7 9)"

# The same, partitioned by region: readdir below where= on id lists only the
# regions with a file the log's statistics may hold a match in.
T=$LAKE/pstats
mkdir -p "$T"
write_parquet "$T/eu.parquet" $'id\n1\n2\n3\n'
write_parquet "$T/us.parquet" $'id\n7\n8\n9\n'
pstats_add() {
    printf '{"add":{"path":"%s","partitionValues":{"region":"%s"},"size":%s,"modificationTime":1,"dataChange":true,"stats":"{\\"numRecords\\":3,\\"minValues\\":{\\"id\\":%s},\\"maxValues\\":{\\"id\\":%s},\\"nullCount\\":{\\"id\\":0}}"}}' \
        "$1" "$2" "$(stat -c %s "$T/$1")" "$3" "$4"
}
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json region string)")" '["region"]')" \
    "$(pstats_add eu.parquet eu 1 3)" "$(pstats_add us.parquet us 7 9)"

# A table deleted and made anew at the same place later (remade).
T=$LAKE/remade
mkdir -p "$T"
write_parquet "$T/old.parquet" $'id\n1\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA" '[]' '{}' first)" "$(add_action "$T" old.parquet)"

# A Hive table beside them.
mkdir -p "$LAKE/hive/p=1"
write_parquet "$LAKE/hive/p=1/part-0.parquet" $'id,v\n1,a\n2,b\n'
before=$(find "$LAKE" -type f | sort | xargs md5sum | md5sum)

start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,log_level=info,metadata_ttl=1s"
DAEMON=$PQFS_PID

check "every table is listed" '[ "$(ls "$MNT" | tr "\n" " ")" = "evolve flatpart hive overwrite pstats remade stats timed " ]'
check "an overwrite: the removed file's rows are not shown" '[ "$(sorted_rows "$MNT/overwrite/data.csv")" = "6 7 8 9 10 " ]'
check "an overwrite: as_of=0 shows the version before" '[ "$(sorted_rows "$MNT/overwrite/as_of=0/data.csv")" = "1 2 3 4 5 " ]'
check "as_of= anywhere in the path" '[ "$(sorted_rows "$MNT/overwrite/where=id>2/as_of=0/data.csv")" = "3 4 5 " ]'
"$PQTOOL" cat "$MNT/overwrite/data.parquet" >"$WORK/ow.csv" 2>&1 || true
check "an overwrite: data.parquet holds the live rows" '[ "$(sorted_rows "$WORK/ow.csv")" = "6 7 8 9 10 " ]'
check "plan.txt names the version" '[ "$(head -n 1 "$MNT/overwrite/plan.txt")" = "table: Delta Lake, version 1, 1 live file" ]'
check "plan.txt of as_of=0 names it" '[ "$(head -n 1 "$MNT/overwrite/as_of=0/plan.txt")" = "table: Delta Lake, version 0, 1 live file" ]'
check "as_of= is listed nowhere" '! ls "$MNT/overwrite" | grep -q as_of'

check "partition values from the log: readdir lists them, not the directories" \
    '[ "$(ls "$MNT/flatpart" | tr "\n" " ")" = "data.csv data.parquet plan.txt region=__HIVE_DEFAULT_PARTITION__ region=eu region=u%2Fs schema.txt " ]'
check "partition values from the log: every live file, no decoy" '[ "$(sorted_rows "$MNT/flatpart/data.csv")" = "1,eu 2,eu 3,u/s 4, " ]'
check "a partition component filters by the log's value" '[ "$(sorted_rows "$MNT/flatpart/region=eu/data.csv")" = "1,eu 2,eu " ]'
check "an escaped value" '[ "$(sorted_rows "$MNT/flatpart/region=u%2Fs/data.csv")" = "3,u/s " ]'
check "the NULL partition" '[ "$(sorted_rows "$MNT/flatpart/region=__HIVE_DEFAULT_PARTITION__/data.csv")" = "4, " ]'
check "a value no file has: no rows" '[ "$(sorted_rows "$MNT/flatpart/region=xx/data.csv")" = "" ]'
check "below a partition: no more partitions" '[ "$(ls "$MNT/flatpart/region=eu" | tr "\n" " ")" = "data.csv data.parquet plan.txt schema.txt " ]'
check "where= on the partition column" '[ "$(sorted_rows "$MNT/flatpart/where=region>'"'"'f'"'"'/data.csv")" = "3,u/s " ]'
check "readdir under a filter lists what can match" '[ "$(ls "$MNT/flatpart/where=region>'"'"'f'"'"'" | grep region= | tr "\n" " ")" = "region=u%2Fs " ]'
check "plan.txt counts files pruned by partition values" 'grep -q "files: 3 total, 2 pruned by partition" "$MNT/flatpart/region=eu/plan.txt"'

check "log statistics: the rows" '[ "$(sorted_rows "$MNT/stats/where=id>7/data.csv")" = "8 9 " ]'
check "log statistics: plan.txt counts the file they prune" \
    'grep -q "files: 2 total, 0 pruned by partition, 1 pruned by log statistics" "$MNT/stats/where=id>7/plan.txt"'
check "readdir below where= on a data column: the regions whose files the log's statistics may match" \
    '[ "$(ls "$MNT/pstats/where=id>7" | grep region= | tr "\n" " ")" = "region=us " ] &&
     [ "$(ls "$MNT/pstats/where=id<2" | grep region= | tr "\n" " ")" = "region=eu " ] &&
     [ "$(ls "$MNT/pstats/where=id=5" | grep -c region=)" = 0 ] &&
     [ "$(ls "$MNT/pstats/where=id>2" | grep region= | tr "\n" " ")" = "region=eu region=us " ]'
check "... and the rows" '[ "$(sorted_rows "$MNT/pstats/where=id>7/data.csv")" = "8,us 9,us " ]'
check "log statistics: /.pqfs/stats counts it" '[ "$(stat_val "$MNT" files_pruned_log_statistics)" -ge 1 ]'
check "schema.txt of the latest version" '[ "$(tail -n +2 "$MNT/evolve/schema.txt" | cut -d, -f1 | tr "\n" " ")" = "id name " ]'
check "schema.txt of as_of=0 is that version's" '[ "$(tail -n +2 "$MNT/evolve/as_of=0/schema.txt" | cut -d, -f1 | tr "\n" " ")" = "id " ]'
check "the latest version's rows" '[ "$(sorted_rows "$MNT/evolve/data.csv")" = "2,b " ]'
check "as_of=0's rows" '[ "$(sorted_rows "$MNT/evolve/as_of=0/data.csv")" = "1 " ]'

at() { sorted_rows "$MNT/timed/as_of=$1/data.csv" 2>/dev/null; }
check "as_of=a date: the commit at its midnight" '[ "$(at 2024-01-01)" = "0 " ]'
check "as_of=TIMESTAMP between commits: the one before" '[ "$(at "2024-01-02 11:00:00")" = "0 1 " ]'
check "a commit set back counts as 1 ms after the one before" '[ "$(at "2024-01-03 00:00:00")" = "0 1 2 " ]'
check "... and is found 1 ms later" '[ "$(at "2024-01-03 00:00:00.001")" = "0 1 2 3 " ]'
check "as_of= with an offset" '[ "$(at "2024-01-04T00:00:00+02:00")" = "0 1 2 3 " ]'
check "as_of= after the last commit: the latest" '[ "$(at "2030-01-01T00:00:00Z")" = "0 1 2 3 4 " ]'
check "as_of= before the first commit: ENOENT" '[ "$(errno_of read "$MNT/timed/as_of=2023-12-31/data.csv")" = ENOENT ]'
check "as_of= past the latest version: ENOENT" '[ "$(errno_of stat "$MNT/timed/as_of=99")" = ENOENT ]'
check "as_of= neither a version nor a time: EINVAL" '[ "$(errno_of stat "$MNT/timed/as_of=soon")" = EINVAL ]'
check "... and the reason is in /.pqfs/errors" 'grep -qF "as_of=soon: neither a version" "$MNT/.pqfs/errors"'
check "two as_of= components: EINVAL" '[ "$(errno_of stat "$MNT/timed/as_of=1/as_of=2")" = EINVAL ]'
check "as_of= on a Hive table is a column it has not: EINVAL" '[ "$(errno_of stat "$MNT/hive/as_of=1")" = EINVAL ]'

if cp "$WORK/in.csv" "$MNT/overwrite/as_of=0/new.csv" 2>"$WORK/cp.err"; then
    fail "a copy into an older version succeeded"
else
    check "a copy into an older version (as_of=0): EPERM" 'grep -q "Operation not permitted" "$WORK/cp.err"'
fi
# A kept older version is the table's only while the table is the same
# one (metaData.id): made anew, as_of=0 is the new table's version 0.
check "remade: as_of=0 before" '[ "$(sorted_rows "$MNT/remade/as_of=0/data.csv")" = "1 " ]'
rm -rf "$LAKE/remade"
mkdir -p "$LAKE/remade"
write_parquet "$LAKE/remade/new.parquet" $'id\n2\n3\n'
write_commit "$LAKE/remade" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA" '[]' '{}' second)" \
    "$(add_action "$LAKE/remade" new.parquet)"
before=$(find "$LAKE" -type f | sort | xargs md5sum | md5sum) # the test's own writes
sleep 1.2
check "remade: as_of=0 is the new table's version 0 after metadata_ttl" \
    '[ "$(sorted_rows "$MNT/remade/as_of=0/data.csv")" = "2 3 " ]'
check "remade: and the latest is too" '[ "$(sorted_rows "$MNT/remade/data.csv")" = "2 3 " ]'
check "mkdir in a Delta table: EPERM" '! mkdir "$MNT/overwrite/x=1" 2>/dev/null'
check "the Hive table reads" '[ "$(sorted_rows "$MNT/hive/data.csv")" = "1,a,1 2,b,1 " ]'
stop_pqfs "$MNT" "$DAEMON"
after=$(find "$LAKE" -type f | sort | xargs md5sum | md5sum)
check "nothing was written into the lake" '[ "$before" = "$after" ]'

summary "delta.mount"
