#!/usr/bin/env bash
# Appends to Delta Lake tables through real mounts (issue 21): `cp x.csv
# MNT/table/` writes the part file, then commits the next version
# (commitInfo and an add with partitionValues and stats) put-if-absent.
#   - the rows after an append are the old rows plus the new, through the
#     mount and through pqtool (which replays the log from disk);
#   - the commit is valid JSON with the protocol's required fields; its
#     stats prune (plan.txt);
#   - into a partition: the add's partitionValues; into a timestamp
#     partition spelled in any way (ISO 8601 with a Z, with a space,
#     percent-encoded, an offset): the one canonical text (ISO 8601 UTC),
#     timestamp_ntz without a zone; a value that is none refused (EINVAL);
#   - another writer's commit taken first: the append follows it (N+2);
#     one that changed the schema: the append fails with EIO and its file
#     is removed, not left in the table unnamed;
#   - at version 10 a classic checkpoint: pqtool replays from it, it alone
#     is the table, DuckDB reads it; it keeps the tombstones within
#     delta.deletedFileRetentionDuration (default 1 week; a duration of
#     several units) and drops the older ones;
#   - two mounts appending to one table at once lose nothing, locally and
#     over S3 (fake_s3.mjs: If-None-Match: *, 412 for a key taken);
#   - what a writer must honour and this one cannot (writer features,
#     invariants, CHECK constraints, column mapping) and a table without
#     files: EPERM, nothing written.
#   tests/delta/append.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: append.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init
require_delta_testdata

LAKE=$WORK/lake MNT=$WORK/mnt MNT2=$WORK/mnt2
mkdir -p "$LAKE"
cp -r "$DELTA/simple_table" "$DELTA/delta-0.8.0-partitioned" "$DELTA/table_with_column_mapping" "$LAKE/"

# Tables an append must refuse: each with one file (id 1).
refusing() {
    local t=$LAKE/$1 protocol=$2 schema=$3 conf=${4:-"{}"}
    mkdir -p "$t"
    write_parquet "$t/f.parquet" $'id\n1\n'
    write_commit "$t" 0 "$protocol" "$(metadata_action "$schema" "[]" "$conf")" "$(add_action "$t" f.parquet)"
}
refusing rowtracking '{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["rowTracking","domainMetadata"]}}' "$ID_SCHEMA"
refusing invariant "$DELTA_PROTOCOL" '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{"delta.invariants":"{\"expression\":{\"expression\":\"id > 0\"}}"}}]}'
refusing constrained '{"protocol":{"minReaderVersion":1,"minWriterVersion":3}}' "$ID_SCHEMA" '{"delta.constraints.positive":"id > 0"}'
mkdir -p "$LAKE/empty"
write_commit "$LAKE/empty" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA")"
# Tables other writers commit to while a mount holds an older version.
for t in racer changer; do
    mkdir -p "$LAKE/$t"
    write_parquet "$LAKE/$t/f0.parquet" $'id\n1\n'
    write_commit "$LAKE/$t" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA")" "$(add_action "$LAKE/$t" f0.parquet)"
done

# A partitioned table for the checkpoint: f0 (p=a) removed at version 1,
# just now (a tombstone the checkpoint keeps), f1 (p=b) added.
T=$LAKE/cp
mkdir -p "$T/p=a" "$T/p=b"
write_parquet "$T/p=a/f0.parquet" $'id\n1\n'
write_parquet "$T/p=b/f1.parquet" $'id\n2\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json p string)")" '["p"]')" \
    "$(add_action "$T" p=a/f0.parquet '{"p":"a"}')"
write_commit "$T" 1 "$(remove_action p=a/f0.parquet "$(date +%s)000")" "$(add_action "$T" p=b/f1.parquet '{"p":"b"}')"

# A table partitioned by a timestamp column, ts: one file's value as Spark
# writes it (no zone: UTC), the other's in ISO 8601 with microseconds.
T=$LAKE/tsp
mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'
write_parquet "$T/b.parquet" $'id\n2\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json ts timestamp)")" '["ts"]')" \
    "$(add_action "$T" a.parquet '{"ts":"2024-01-02 03:04:05"}')" "$(add_action "$T" b.parquet '{"ts":"2024-01-01T00:00:00.000000Z"}')"

# Partitioned by a decimal(5,2) column, amt: one file's value as Spark
# writes it (at the scale), one with fewer digits.
T=$LAKE/decp
mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'
write_parquet "$T/b.parquet" $'id\n2\n'
write_commit "$T" 0 "$DELTA_PROTOCOL" "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json amt 'decimal(5,2)')")" '["amt"]')" \
    "$(add_action "$T" a.parquet '{"amt":"1.50"}')" "$(add_action "$T" b.parquet '{"amt":"-3"}')"

# Partitioned by a timestamp_ntz column, tn (reader and writer feature
# timestampNtz).
T=$LAKE/ntz
mkdir -p "$T"
write_parquet "$T/a.parquet" $'id\n1\n'
write_commit "$T" 0 '{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}}' \
    "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json tn timestamp_ntz)")" '["tn"]')" \
    "$(add_action "$T" a.parquet '{"tn":"2024-01-01 00:00:00"}')"

# Tombstones of each age for a checkpoint (PROTOCOL.md: a remove older than
# delta.deletedFileRetentionDuration, default 1 week, expires and may leave
# the checkpoint; a younger one stays): f0 live, then one file a remove at
# version 1, each SPEC NAME:AGE_HOURS (NAME: for a remove without a
# deletionTimestamp); versions 2-8 hold only commitInfo, the mount's appends
# commit 9 and 10.
NOW_MS=$(($(date +%s) * 1000))
tombstone_table() { # NAME CONFIGURATION SPEC...
    local t=$LAKE/$1 conf=$2 spec name age v adds=() removes=()
    shift 2
    mkdir -p "$t"
    write_parquet "$t/f0.parquet" $'id\n1\n'
    for spec in "$@"; do
        name=${spec%%:*} age=${spec#*:}
        write_parquet "$t/$name.parquet" $'id\n99\n'
        adds+=("$(add_action "$t" "$name.parquet")")
        if [ -n "$age" ]; then removes+=("$(remove_action "$name.parquet" $((NOW_MS - age * 3600000)))")
        else removes+=("$(printf '{"remove":{"path":"%s","dataChange":true}}' "$name.parquet")"); fi
    done
    write_commit "$t" 0 "$DELTA_PROTOCOL" "$(metadata_action "$ID_SCHEMA" "[]" "$conf")" "$(add_action "$t" f0.parquet)" "${adds[@]}"
    write_commit "$t" 1 "${removes[@]}"
    for v in 2 3 4 5 6 7 8; do write_commit "$t" "$v" '{"commitInfo":{"timestamp":1,"operation":"WRITE"}}'; done
}
tombstone_table tombs '{}' old:192 young:144 untimed:
tombstone_table tombs36h '{"delta.deletedFileRetentionDuration":"interval 1 day 12 hours"}' old:40 young:30

# A long metadata_ttl: the mount keeps the version it read (the races
# below need it to); its own appends forget it.
start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,log_level=info,metadata_ttl=1h"
DAEMON=$PQFS_PID

# ------------------------------------------------------------ an append
before=$(sorted_rows "$MNT/simple_table/data.csv")
printf 'id\n100\n101\n' >"$WORK/a.csv"
check "cp into a Delta table" 'cp "$WORK/a.csv" "$MNT/simple_table/"'
check "the rows: the old ones and the new, through the mount" '[ "$(sorted_rows "$MNT/simple_table/data.csv")" = "${before}100 101 " ]'
"$PQTOOL" cat "$LAKE/simple_table" >"$WORK/after.csv"
check "... and through pqtool, from the log on disk" '[ "$(sorted_rows "$WORK/after.csv")" = "${before}100 101 " ]'
check "the next version (5) is committed" '[ -f "$LAKE/simple_table/_delta_log/00000000000000000005.json" ]'
check "as_of=4 is the table before" '[ "$(sorted_rows "$MNT/simple_table/as_of=4/data.csv")" = "$before" ]'
python3 - "$LAKE/simple_table/_delta_log/00000000000000000005.json" "$LAKE/simple_table" >"$WORK/commit.txt" 2>&1 <<'PY' || true
import json, os, sys, urllib.parse
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
kinds = [next(iter(a)) for a in lines]
assert kinds == ["commitInfo", "add"], kinds
info, add = lines[0]["commitInfo"], lines[1]["add"]
assert isinstance(info["timestamp"], int) and info["operation"] == "WRITE", info
for k in ("path", "partitionValues", "size", "modificationTime", "dataChange"):
    assert k in add, k
path = os.path.join(sys.argv[2], urllib.parse.unquote(add["path"]))
assert os.path.getsize(path) == add["size"], (path, add["size"])
assert add["dataChange"] is True and add["partitionValues"] == {}
stats = json.loads(add["stats"])
assert stats == {"numRecords": 2, "minValues": {"id": 100}, "maxValues": {"id": 101}, "nullCount": {"id": 0}}, stats
print("ok")
PY
check "the commit: valid JSON, the protocol's fields, the file's size, its stats" '[ "$(cat "$WORK/commit.txt")" = ok ] || { cat "$WORK/commit.txt" >&2; false; }'
check "its stats prune the new file" 'grep -q "1 pruned by log statistics" "$MNT/simple_table/where=id<50/plan.txt"'

# ------------------------------------------------------------ into a partition
P=delta-0.8.0-partitioned
printf 'value\n42\n' >"$WORK/b.csv"
check "cp into a partition of a Delta table" 'cp "$WORK/b.csv" "$MNT/$P/year=2022/month=1/day=9/"'
check "its rows in the partition" '[ "$(sorted_rows "$MNT/$P/year=2022/data.csv")" = "42,2022,1,9 " ]'
check "the add's partitionValues" 'grep -qF "\"partitionValues\":{\"year\":\"2022\",\"month\":\"1\",\"day\":\"9\"}" "$LAKE/$P/_delta_log/00000000000000000001.json"'
check "the partition is listed" 'ls "$MNT/$P" | grep -qx "year=2022"'

# ------------------------------------------------------------ a timestamp partition
# Each spelling of an instant in the path (ISO 8601 with a Z, SQL's with a
# space, that percent-encoded, an offset; a fraction) commits the one text
# Delta's readers parse as that instant in UTC (pq_tf_part_canonical: ISO
# 8601 with a Z), versions 1 to 5; the rows read back with it.
ts_paths=('ts=2024-01-02T03:04:05Z' 'ts=2024-01-02 03:04:05' 'ts=2024-01-02%2003%3A04%3A05' 'ts=2024-01-02T05:04:05+02:00'
    'ts=2024-01-02T03:04:05.5Z')
ts_texts=(2024-01-02T03:04:05Z 2024-01-02T03:04:05Z 2024-01-02T03:04:05Z 2024-01-02T03:04:05Z 2024-01-02T03:04:05.5Z)
# commits_as TABLE COMPONENT CSV VERSION COLUMN TEXT: CSV copied into
# MNT/TABLE/COMPONENT/ commits VERSION with partitionValues {COLUMN: TEXT}.
commits_as() {
    local t=$1 comp=$2 csv=$3 v=$4 col=$5 text=$6 got
    if cp "$csv" "$MNT/$t/$comp/" 2>"$WORK/cp.err"; then
        got=$(add_partition_values "$LAKE/$t/_delta_log/$(printf '%020d' "$v").json")
        check "$t: cp into $comp commits $col '$text' (got $got)" '[ "$got" = "{\"$col\": \"$text\"}" ]'
    else
        fail "$t: cp into $comp: $(cat "$WORK/cp.err")"
    fi
}
for i in 0 1 2 3 4; do
    printf 'id\n%d\n' $((10 + i)) >"$WORK/ts$i.csv"
    commits_as tsp "${ts_paths[$i]}" "$WORK/ts$i.csv" $((i + 1)) ts "${ts_texts[$i]}"
done
got=$(node "$root/tests/mount/duck.mjs" sql "SELECT string_agg(CAST(epoch_us(CAST(add.partitionValues.ts AS TIMESTAMPTZ)) AS VARCHAR), ' '
    ORDER BY filename) FROM read_json('$LAKE/tsp/_delta_log/0000000000000000000[1-5].json', filename = true,
    format = 'newline_delimited', columns = {add: 'STRUCT(partitionValues STRUCT(ts VARCHAR))'}) WHERE add IS NOT NULL" 2>&1)
check "... DuckDB reads each committed text as that instant" \
    '[ "$got" = "1704164645000000 1704164645000000 1704164645000000 1704164645000000 1704164645500000" ]'
T_ROWS="1,2024-01-02 03:04:05+00 10,2024-01-02 03:04:05+00 11,2024-01-02 03:04:05+00 12,2024-01-02 03:04:05+00 13,2024-01-02 03:04:05+00 "
check "... one directory an instant, the log's two spellings of 03:04:05 and the appends' alike" \
    '[ "$(ls "$MNT/tsp" | grep "^ts=" | tr "\n" " ")" = "ts=2024-01-01T00%3A00%3A00Z ts=2024-01-02T03%3A04%3A05.5Z ts=2024-01-02T03%3A04%3A05Z " ]'
for i in 0 1 2 3; do
    check "... ${ts_paths[$i]}/data.csv: the rows of 03:04:05" '[ "$(sorted_rows "$MNT/tsp/${ts_paths[$i]}/data.csv")" = "$T_ROWS" ]'
done
T_ALL="1,2024-01-02 03:04:05+00 2,2024-01-01 00:00:00+00 10,2024-01-02 03:04:05+00 11,2024-01-02 03:04:05+00 12,2024-01-02 03:04:05+00 13,2024-01-02 03:04:05+00 14,2024-01-02 03:04:05.5+00 "
check "... the table's rows through the mount" '[ "$(sorted_rows "$MNT/tsp/data.csv")" = "$T_ALL" ]'
"$PQTOOL" cat "$LAKE/tsp" >"$WORK/tsp.csv" 2>&1 || true
check "... and through pqtool, from the log on disk" '[ "$(sorted_rows "$WORK/tsp.csv")" = "$T_ALL" ]'

# Not an instant of the column's type: EINVAL, nothing committed, and the
# reason names the log's type (not the ini's, which types a Hive table).
for bad in 'ts=2024-02-30T00:00:00Z' 'ts=2024-01-02T03:04:05.1234567Z'; do
    if cp "$WORK/ts0.csv" "$MNT/tsp/$bad/" 2>"$WORK/cp.err"; then fail "timestamp partition: cp into $bad succeeded"
    else check "timestamp partition: cp into $bad: EINVAL" 'grep -q "Invalid argument" "$WORK/cp.err"'; fi
done
check "... nothing committed" '[ ! -f "$LAKE/tsp/_delta_log/00000000000000000006.json" ]'
# timestamp_ntz: the protocol's spelling without a zone (a space, no T);
# a value with a zone is refused.
ntz_paths=('tn=2024-01-02T03:04:05' 'tn=2024-01-02%2003%3A04%3A05.25')
ntz_texts=('2024-01-02 03:04:05' '2024-01-02 03:04:05.25')
for i in 0 1; do commits_as ntz "${ntz_paths[$i]}" "$WORK/ts$i.csv" $((i + 1)) tn "${ntz_texts[$i]}"; done
if cp "$WORK/ts0.csv" "$MNT/ntz/tn=2024-01-02T03:04:05Z/" 2>"$WORK/cp.err"; then
    fail "timestamp_ntz partition: cp into tn=2024-01-02T03:04:05Z (a zone) succeeded"
else
    check "timestamp_ntz partition: cp into tn=2024-01-02T03:04:05Z (a zone): EINVAL" 'grep -q "Invalid argument" "$WORK/cp.err"'
    check "... the log names the Delta log's type, not the ini" \
        'grep -F "tn=2024-01-02T03:04:05Z: not a timestamp without a zone" "$WORK/pqfs.log" | grep -qF "the column'"'"'s type in the Delta Lake table'"'"'s log"'
fi
check "... the rows, through the mount and pqtool" \
    '[ "$(sorted_rows "$MNT/ntz/data.csv")" = "1,2024-01-01 00:00:00 10,2024-01-02 03:04:05 11,2024-01-02 03:04:05.25 " ] &&
     [ "$("$PQTOOL" cat "$LAKE/ntz" | tail -n +2 | sort -n | tr "\n" " ")" = "1,2024-01-01 00:00:00 10,2024-01-02 03:04:05 11,2024-01-02 03:04:05.25 " ]'

# ------------------------------------------------------------ a decimal partition
# Read at the column's scale; one directory a value (1.50 and 1.5 are one);
# an append commits the value at the scale, as Spark writes it; a value
# finer than the scale is EINVAL (before: the table was refused whole).
check "decimal partition: the rows" '[ "$(sorted_rows "$MNT/decp/data.csv")" = "1,1.50 2,-3.00 " ]'
check "decimal partition: one directory a value, at the scale" '[ "$(ls "$MNT/decp" | grep "^amt=" | tr "\n" " ")" = "amt=-3.00 amt=1.50 " ]'
check "decimal partition: amt=1.5 is amt=1.50" '[ "$(sorted_rows "$MNT/decp/amt=1.5/data.csv")" = "1,1.50 " ]'
check "decimal partition: where= compares exactly" '[ "$(sorted_rows "$MNT/decp/where=amt<0/data.csv")" = "2,-3.00 " ]'
printf 'id\n7\n' >"$WORK/dec.csv"
commits_as decp amt=1.5 "$WORK/dec.csv" 1 amt 1.50
commits_as decp amt=42 "$WORK/dec.csv" 2 amt 42.00
check "decimal partition: the appended rows" '[ "$(sorted_rows "$MNT/decp/data.csv")" = "1,1.50 2,-3.00 7,1.50 7,42.00 " ]'
if cp "$WORK/dec.csv" "$MNT/decp/amt=1.505/" 2>"$WORK/cp.err"; then fail "decimal partition: cp into amt=1.505 succeeded"
else check "decimal partition: cp into amt=1.505 (finer than the scale): EINVAL" 'grep -q "Invalid argument" "$WORK/cp.err"'; fi
check "... nothing committed" '[ ! -f "$LAKE/decp/_delta_log/00000000000000000003.json" ]'

# ------------------------------------------------------------ a checkpoint
# Versions 2 to 10 appended through the mount: at version 10 (every
# PQ_TF_CHECKPOINT_INTERVAL) a classic checkpoint is written.
for i in $(seq 2 10); do
    printf 'id\n%d\n' $((10 + i)) >"$WORK/cp$i.csv"
    cp "$WORK/cp$i.csv" "$MNT/cp/p=c/" || fail "append $i into cp"
done
check "the checkpoint of version 10 is written" '[ -f "$LAKE/cp/_delta_log/00000000000000000010.checkpoint.parquet" ]'
check "_last_checkpoint names it" 'grep -q "\"version\":10" "$LAKE/cp/_delta_log/_last_checkpoint"'
check "pqtool replays from it" '"$PQTOOL" plan "$LAKE/cp" | head -n 1 | grep -qF "version 10 (from the checkpoint of version 10), 10 live files"'
"$PQTOOL" cat "$LAKE/cp" >"$WORK/cp-full.csv"
mkdir -p "$WORK/cut" && cp -r "$LAKE/cp" "$WORK/cut/"
rm "$WORK/cut/cp/_delta_log/"0000000000000000000[0-9].json
"$PQTOOL" cat "$WORK/cut/cp" >"$WORK/cp-cut.csv" 2>&1 || true
check "the checkpoint alone (commits 0-9 removed) is the table" '[ "$(sorted_rows "$WORK/cp-cut.csv")" = "$(sorted_rows "$WORK/cp-full.csv")" ] && [ "$(sorted_rows "$WORK/cp-full.csv")" = "2,b 12,c 13,c 14,c 15,c 16,c 17,c 18,c 19,c 20,c " ]'
NODE_PATH=$root/tools/js/node_modules node -e '
const { DuckDBInstance } = require("@duckdb/node-api");
(async () => {
  const c = await (await DuckDBInstance.create()).connect();
  const f = process.argv[1];
  const r = await c.runAndReadAll(`SELECT count(add.path), count(remove.path), count(metaData.id), count(protocol.minReaderVersion),
      max(CASE WHEN add.path = '"'"'p=b/f1.parquet'"'"' THEN add.partitionValues['"'"'p'"'"'] END), bool_or(add.dataChange),
      max(remove.path) FROM read_parquet('"'"'${f}'"'"')`);
  console.log(JSON.stringify(r.getRowsJson()[0]));
})();' "$LAKE/cp/_delta_log/00000000000000000010.checkpoint.parquet" >"$WORK/cp-duck.txt" 2>&1 || true
check "DuckDB reads the checkpoint: 10 adds, the tombstone, metaData, protocol, partitionValues, dataChange false" \
    '[ "$(cat "$WORK/cp-duck.txt")" = "[\"10\",\"1\",\"1\",\"1\",\"b\",false,\"p=a/f0.parquet\"]" ] || { cat "$WORK/cp-duck.txt" >&2; false; }'

# Tombstones: the checkpoint keeps those within the retention, drops the
# expired (the default of 1 week; "interval 1 day 12 hours", every unit of
# it); a remove without a deletionTimestamp is kept (its age is unknown).
for t in tombs tombs36h; do
    for v in 9 10; do
        printf 'id\n%d\n' $((100 + v)) >"$WORK/$t$v.csv"
        cp "$WORK/$t$v.csv" "$MNT/$t/" || fail "append $v into $t"
    done
done
checkpoint_of() { echo "$LAKE/$1/_delta_log/00000000000000000010.checkpoint.parquet"; }
# removes_in TABLE: the paths of the removes in its checkpoint of version 10, sorted.
removes_in() {
    node "$root/tests/mount/duck.mjs" sql \
        "SELECT coalesce(string_agg(remove.path, ' ' ORDER BY remove.path), '') FROM read_parquet('$(checkpoint_of "$1")')" 2>&1
}
check "tombstones: both checkpoints of version 10 are written" '[ -f "$(checkpoint_of tombs)" ] && [ -f "$(checkpoint_of tombs36h)" ]'
got=$(removes_in tombs)
check "default retention (1 week): the tombstones of 6 days and without a time kept, of 8 days dropped (got '$got')" \
    '[ "$got" = "untimed.parquet young.parquet" ]'
got=$(removes_in tombs36h)
check "retention 'interval 1 day 12 hours': the tombstone of 30 hours kept, of 40 hours dropped (got '$got')" \
    '[ "$got" = "young.parquet" ]'
for t in tombs tombs36h; do
    rm -rf "$WORK/cut/$t" && cp -r "$LAKE/$t" "$WORK/cut/"
    rm "$WORK/cut/$t/_delta_log/"0000000000000000000[0-9].json
    "$PQTOOL" cat "$WORK/cut/$t" >"$WORK/$t-cut.csv" 2>&1 || true
    check "$t: the table reads, through the mount and from its checkpoint alone" \
        '[ "$(sorted_rows "$MNT/$t/data.csv")" = "1 109 110 " ] && [ "$(sorted_rows "$WORK/$t-cut.csv")" = "1 109 110 " ]'
done

# ------------------------------------------------------------ races
check "the racing tables read (version 0 kept)" '[ "$(sorted_rows "$MNT/racer/data.csv")" = "1 " ] && [ "$(sorted_rows "$MNT/changer/data.csv")" = "1 " ]'
write_parquet "$LAKE/racer/f1.parquet" $'id\n2\n'
write_commit "$LAKE/racer" 1 "$(add_action "$LAKE/racer" f1.parquet)"
printf 'id\n3\n' >"$WORK/c.csv"
check "another writer took version 1: the append follows it" 'cp "$WORK/c.csv" "$MNT/racer/"'
check "... as version 2" '[ -f "$LAKE/racer/_delta_log/00000000000000000002.json" ]'
check "... and no row is lost" '[ "$(sorted_rows "$MNT/racer/data.csv")" = "1 2 3 " ]'
write_commit "$LAKE/changer" 1 "$(metadata_action "$(struct_schema "$(field_json id long)" "$(field_json x string)")")"
n_files=$(find "$LAKE/changer" -name '*.parquet' | wc -l)
if cp "$WORK/c.csv" "$MNT/changer/" 2>"$WORK/cp.err"; then
    fail "an append after a schema change it did not see succeeded"
else
    check "an append after a schema change it did not see: EIO" 'grep -q "Input/output error" "$WORK/cp.err"'
fi
check "... its file is removed" '[ "$(find "$LAKE/changer" -name "*.parquet" | wc -l)" = "$n_files" ]'
check "... no version is committed" '[ ! -f "$LAKE/changer/_delta_log/00000000000000000002.json" ]'
check "... and the log says why" 'grep -q "a concurrent commit changed the table.s schema or protocol" "$WORK/pqfs.log"'

# ------------------------------------------------------------ refusals
refused() {
    local t=$1 words=$2
    if cp "$WORK/a.csv" "$MNT/$t/" 2>"$WORK/cp.err"; then
        fail "$t: an append succeeded"
    else
        check "$t: EPERM" 'grep -q "Operation not permitted" "$WORK/cp.err"'
        check "$t: the log names why" 'grep -qF -- "$words" "$WORK/pqfs.log"'
    fi
}
refused table_with_column_mapping "column mapping mode 'name'"
refused rowtracking "writer feature 'rowTracking'"
refused invariant "'delta.invariants'"
refused constrained "CHECK constraint 'positive'"
refused empty "without live files"
stop_pqfs "$MNT" "$DAEMON"
check "nothing was written into the refusing tables" '[ "$(find "$LAKE/rowtracking" "$LAKE/invariant" "$LAKE/constrained" "$LAKE/empty" "$LAKE/table_with_column_mapping" -newer "$WORK/a.csv" -type f | wc -l)" = 0 ]'

# ------------------------------------------------------------ two mounts at once
# append_from_both_mounts N: WORK/a1..aN.csv copied into simple_table through
# MNT and WORK/b1..bN.csv through MNT2, all at once; ok: how many succeeded.
append_from_both_mounts() {
    local i p pids=()
    for i in $(seq 1 "$1"); do
        cp "$WORK/a$i.csv" "$MNT/simple_table/" & pids+=($!)
        cp "$WORK/b$i.csv" "$MNT2/simple_table/" & pids+=($!)
    done
    ok=0
    for p in "${pids[@]}"; do wait "$p" && ok=$((ok + 1)); done
}
start_pqfs "$WORK/pqfs-a.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache-a,log_level=info"
A=$PQFS_PID
start_pqfs "$WORK/pqfs-b.log" "$LAKE" "$MNT2" -o "cache_dir=$WORK/cache-b,log_level=info"
B=$PQFS_PID
want=$(sorted_rows "$MNT/simple_table/data.csv")
for i in $(seq 1 8); do
    printf 'id\n%d\n' $((1000 + i)) >"$WORK/a$i.csv"
    printf 'id\n%d\n' $((2000 + i)) >"$WORK/b$i.csv"
done
append_from_both_mounts 8
check "16 concurrent appends from two mounts all succeed" '[ "$ok" = 16 ]'
"$PQTOOL" cat "$LAKE/simple_table" >"$WORK/both.csv"
expect=$(printf '%s\n' $want $(seq 1001 1008) $(seq 2001 2008) | sort -n | tr '\n' ' ')
check "... and lose nothing" '[ "$(sorted_rows "$WORK/both.csv")" = "$expect" ]'
check "... in 16 versions, 6 to 21" '[ "$(ls "$LAKE/simple_table/_delta_log/" | grep -c "json$")" = 22 ]'
stop_pqfs "$MNT" "$A"
stop_pqfs "$MNT2" "$B"

# ------------------------------------------------------------ over S3
# Two mounts of one bucket (fake_s3.mjs, which honours If-None-Match: * as
# S3 does) appending at once.
S3ROOT=$WORK/s3root
mkdir -p "$S3ROOT/lake"
cp -r "$DELTA/simple_table" "$S3ROOT/lake/"
start_fake_s3 s3
[ -n "$FAKE_S3_PORT" ] || { fail "fake_s3 did not start: $(cat "$WORK/s3.err")"; summary "delta.append"; exit 1; }
for m in a b; do write_s3_ini "$WORK/s3-$m.ini" "$WORK/cache-s3-$m"; done
start_pqfs "$WORK/pqfs-s3a.log" "$WORK/s3-a.ini" "$MNT"
A=$PQFS_PID
start_pqfs "$WORK/pqfs-s3b.log" "$WORK/s3-b.ini" "$MNT2"
B=$PQFS_PID
want=$(sorted_rows "$MNT/simple_table/data.csv")
append_from_both_mounts 4
check "S3: 8 concurrent appends from two mounts all succeed" '[ "$ok" = 8 ]'
"$PQTOOL" cat "$S3ROOT/lake/simple_table" >"$WORK/s3both.csv"
expect=$(printf '%s\n' $want 1001 1002 1003 1004 2001 2002 2003 2004 | sort -n | tr '\n' ' ')
check "S3: ... and lose nothing" '[ "$(sorted_rows "$WORK/s3both.csv")" = "$expect" ]'
check "S3: ... in 8 versions, 5 to 12" '[ "$(ls "$S3ROOT/lake/simple_table/_delta_log/" | grep -c "json$")" = 13 ]'
check "S3: a version was taken first at least once (412)" 'grep -q " 412 " "$WORK/s3.log"'
check "S3: the mount reads the appended rows" '[ "$(sorted_rows "$MNT/simple_table/data.csv")" = "$expect" ]'
stop_pqfs "$MNT" "$A"
stop_pqfs "$MNT2" "$B"
summary "delta.append"
