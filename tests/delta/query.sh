#!/usr/bin/env bash
# pqtool's queries on Delta Lake tables (../shared/testdata/delta): --where
# and --select over partition columns typed by the log's schema, a
# partition path as a filter, time travel with a filter, plan's first line,
# the errors a bad version or a bad log gives (the file and line named), a
# multi-part checkpoint (made here from a classic one), and deletion
# vectors over several row groups (written here).
#   tests/delta/query.sh PQTOOL DELTA_DIR CSVCMP
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: query.sh PQTOOL DELTA_DIR CSVCMP" >&2; exit 2; }
PQTOOL=$1 DELTA=$2 CSVCMP=$3
[ -d "$DELTA/simple_table/_delta_log" ] || { echo "SKIP: no $DELTA"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pqfs-delta-query.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PASSES=0 FAILS=0
# expect WHAT EXPECTED_TEXT ARGS...: the sorted output of pqtool cat ARGS.
expect() {
    local what=$1 want=$2 got
    shift 2
    got=$("$PQTOOL" cat "$@" 2>"$WORK/err.txt" | { read -r h; echo "$h"; sort; } | tr '\n' ' ') || true
    if [ "$got" = "$want" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: $what: got '$got', want '$want' ($(head -c 300 "$WORK/err.txt"))"; fi
}
# refuse WHAT WORDS ARGS...: pqtool cat ARGS exits 1 and says WORDS.
refuse() {
    local what=$1 words=$2 rc=0
    shift 2
    "$PQTOOL" cat "$@" >/dev/null 2>"$WORK/err.txt" || rc=$?
    if [ "$rc" -eq 1 ] && grep -qF -- "$words" "$WORK/err.txt"; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: $what: exit $rc, '$(head -c 300 "$WORK/err.txt")' (want '$words')"; fi
}

# one_file_table DIR FIELDS: DIR a Delta table of its part-0.parquet alone
# (version 0: protocol, metaData, the add); FIELDS a JSON list of
# [name, type, nullable].
one_file_table() {
    python3 - "$1" "$2" <<'PY'
import json, os, sys
d, fields = sys.argv[1], json.loads(sys.argv[2])
schema = {"type": "struct", "fields": [{"name": n, "type": t, "nullable": nl, "metadata": {}} for n, t, nl in fields]}
meta = {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": json.dumps(schema),
        "partitionColumns": [], "configuration": {}, "createdTime": 1}
add = {"path": "part-0.parquet", "size": os.path.getsize(d + "/part-0.parquet"), "partitionValues": {},
       "modificationTime": 1, "dataChange": True}
with open(d + "/_delta_log/00000000000000000000.json", "w") as out:
    for a in ({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}, {"metaData": meta}, {"add": add}):
        out.write(json.dumps(a) + "\n")
PY
}

N=$DELTA/delta-0.8.0-numeric-partition
expect "double partition compared as a number" "x,y,z 10,10.0,b " "$N" --where 'y > 9.95'
expect "long partition compared as a number" "z,x a,9 " "$N" --where 'x < 10' --select z,x
P=$DELTA/delta-0.8.0-partitioned
expect "string partition year (text, not 2020 the number)" "day,value 20,6 20,7 4,5 5,4 " "$P" --where "year = '2021'" --select day,value
expect "a partition path filters by the log's values" "value,year,month,day 1,2020,1,1 2,2020,2,3 3,2020,2,5 " "$P/year=2020"
expect "a partition path and --where" "value 3 " "$P/year=2020/month=2" --where "day = '5'" --select value
expect "special characters: the path decodes to the log's value" "x,y A/A,1 " "$DELTA/delta-0.8.0-special-partition/x=A%2FA"
expect "the NULL partition" "k,v ,2 " "$DELTA/delta-0.8.0-null-partition/k=__HIVE_DEFAULT_PARTITION__"
expect "--select in its own order over partition columns" "c3,c1 4,6 5,4 6,5 " "$DELTA/delta-2.2.0-partitioned-types" --select c3,c1
expect "time travel with a filter" "id 106 108 " "$DELTA/simple_table" --version 3 --where 'id > 100'
expect "an empty table: its header" "column " "$DELTA/delta-0.8-empty"
refuse "an unknown column of an empty table" "unknown column 'nope'" "$DELTA/delta-0.8-empty" --select nope
refuse "a version past the log" "version 99 is not in the log (the latest is 4)" "$DELTA/simple_table" --version 99
mkdir -p "$WORK/p" && cp -r "$P" "$WORK/p/t" && mkdir "$WORK/p/t/value=1"
refuse "a partition path of a column that is none" "'value' is not a partition column" "$WORK/p/t/value=1"

got=$("$PQTOOL" plan "$DELTA/delta-0.2.0" | head -n 1)
if [ "$got" = "table: Delta Lake, version 3 (from the checkpoint of version 3), 3 live files" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: plan names the version: '$got'"; fi
got=$("$PQTOOL" plan "$DELTA/delta-0.2.0" --version 2 | head -n 1)
if [ "$got" = "table: Delta Lake, version 2, 2 live files" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: plan --version 2 names it: '$got'"; fi

# A log copied and broken: each error names the file and what was wrong.
cp -r "$DELTA/simple_table" "$WORK/t"
log=$WORK/t/_delta_log
rm "$log/00000000000000000002.json"
refuse "a commit missing in the middle" "commit 2 is missing (00000000000000000002.json)" "$WORK/t"
expect "versions before the hole still read" "id 0 1 10 11 12 13 14 15 16 17 18 19 2 3 4 5 6 7 8 9 " "$WORK/t" --version 1
cp "$DELTA/simple_table/_delta_log/00000000000000000002.json" "$log/"
printf '{"add":{"path":"x.parquet","size":-1}}\n' >>"$log/00000000000000000004.json"
refuse "a negative size" "00000000000000000004.json: line " "$WORK/t"
refuse "a negative size, named" "add.size is not a non-negative integer" "$WORK/t"
cp "$DELTA/simple_table/_delta_log/00000000000000000004.json" "$log/"
printf '{"add":{"path":"x.parq\n' >>"$log/00000000000000000004.json"
refuse "a line that is not JSON" "not JSON" "$WORK/t"
cp "$DELTA/simple_table/_delta_log/00000000000000000004.json" "$log/"
printf '{"protocol":{"minReaderVersion":4,"minWriterVersion":7}}\n' >>"$log/00000000000000000004.json"
refuse "a reader version past 3" "needs reader version 4" "$WORK/t"
cp "$DELTA/simple_table/_delta_log/00000000000000000004.json" "$log/"
printf '{"add":{"path":"../../etc/passwd","size":1,"partitionValues":{}}}\n' >>"$log/00000000000000000004.json"
refuse "a path out of the table" "has an empty, '.' or '..' component" "$WORK/t"

# A multi-part checkpoint (none in the corpus): simple_table_with_checkpoint's
# classic one split in two by pqtool itself (--format parquet of its rows
# without and with an add), the classic one, _last_checkpoint and commits
# 0-9 removed, so only the two parts can serve; then part 2 of 2 gone.
M=$WORK/mp/_delta_log
mkdir -p "$WORK/mp"
cp -r "$DELTA/simple_table_with_checkpoint/." "$WORK/mp/"
cp10=$M/00000000000000000010.checkpoint.parquet
"$PQTOOL" cat "$cp10" --where 'add IS NULL' --format parquet -o "$M/00000000000000000010.checkpoint.0000000001.0000000002.parquet"
"$PQTOOL" cat "$cp10" --where 'add IS NOT NULL' --format parquet -o "$M/00000000000000000010.checkpoint.0000000002.0000000002.parquet"
rm "$cp10" "$M/_last_checkpoint" "$M"/0000000000000000000[0-9].json
if "$PQTOOL" cat "$WORK/mp" >"$WORK/mp.csv" 2>"$WORK/err.txt" &&
    python3 "$CSVCMP" "$DELTA/expected/simple_table_with_checkpoint.csv" "$WORK/mp.csv" --unordered >/dev/null 2>&1; then
    PASSES=$((PASSES + 1))
else
    FAILS=$((FAILS + 1)); echo "FAIL: a multi-part checkpoint: $(head -c 300 "$WORK/err.txt")"
fi
got=$("$PQTOOL" plan "$WORK/mp" | head -n 1)
if [ "$got" = "table: Delta Lake, version 10 (from the checkpoint of version 10), 11 live files" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: multi-part plan: '$got'"; fi
rm "$M/00000000000000000010.checkpoint.0000000002.0000000002.parquet"
refuse "a multi-part checkpoint missing a part is not used" "no checkpoint at or before it and no commit 0" "$WORK/mp"

# Deletion vectors over several row groups: 30 rows in row groups of 7, the
# rows 0, 6, 7, 13, 14-20 (all of row group 2) and 29 deleted by a vector
# in deletion_vector_<uuid>.bin (written here: a 32-bit portable roaring
# bitmap of one array container, as PROTOCOL.md lays it out), then the same
# file re-added with it (an add of the path with a vector replaces the add
# without: a new key, and the old one removed).
D=$WORK/dv
mkdir -p "$D/_delta_log"
{ echo v; seq 0 29; } >"$WORK/thirty.csv"
"$PQTOOL" write "$WORK/thirty.csv" "$D/part-0.parquet" --row-group-rows 7 >/dev/null
size=$(stat -c %s "$D/part-0.parquet")
python3 - "$D" "$size" <<'PY'
import json, struct, sys, zlib
d, size = sys.argv[1], int(sys.argv[2])
rows = [0, 6, 7, 13] + list(range(14, 21)) + [29]
bm = struct.pack("<II", 12346, 1) + struct.pack("<HH", 0, len(rows) - 1) + struct.pack("<I", 16)
bm += b"".join(struct.pack("<H", r) for r in rows)
data = struct.pack("<IQI", 1681511377, 1, 0) + bm
open(d + "/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin", "wb").write(
    b"\x01" + struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data)))
schema = {"type": "struct", "fields": [{"name": "v", "type": "long", "nullable": True, "metadata": {}}]}
proto = {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
                      "writerFeatures": ["deletionVectors"]}}
meta = {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": json.dumps(schema),
                     "partitionColumns": [], "configuration": {}}}
add = {"path": "part-0.parquet", "size": size, "partitionValues": {}, "modificationTime": 1, "dataChange": True}
dv = {"storageType": "u", "pathOrInlineDv": "vBn[lx{q8@P<9BNH/isA", "offset": 1, "sizeInBytes": len(data),
      "cardinality": len(rows)}
with open(d + "/_delta_log/00000000000000000000.json", "w") as f:
    for a in (proto, meta, {"add": add}):
        f.write(json.dumps(a) + "\n")
with open(d + "/_delta_log/00000000000000000001.json", "w") as f:
    f.write(json.dumps({"remove": {"path": "part-0.parquet", "deletionTimestamp": 2, "dataChange": True}}) + "\n")
    f.write(json.dumps({"add": dict(add, deletionVector=dv)}) + "\n")
PY
expect "deletion vector over row groups" "v 1 10 11 12 2 21 22 23 24 25 26 27 28 3 4 5 8 9 " "$D"
expect "deletion vector, before it (--version 0)" "$(printf 'v '; seq 0 29 | sort | tr '\n' ' ')" "$D" --version 0
expect "deletion vector and --where" "v 12 21 8 " "$D" --where 'v >= 8 AND v <= 21 AND v <> 9 AND v <> 10 AND v <> 11'
# The same vector as an absolute path (storageType p): read where it is
# inside the lake, refused where it is not.
cp -r "$D" "$WORK/dvabs"
python3 - "$WORK/dvabs" "$WORK/dvabs/_delta_log/00000000000000000001.json" <<'PY'
import json, sys
d, p = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(p)]
dv = lines[1]["add"]["deletionVector"]
dv.update(storageType="p", pathOrInlineDv="file://" + d.replace(" ", "%20") + "/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin")
open(p, "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
expect "an absolute-path deletion vector inside the lake" "v 1 10 11 12 2 21 22 23 24 25 26 27 28 3 4 5 8 9 " "$WORK/dvabs"
sed -i 's|file://[^"]*/deletion_vector|file:///elsewhere/deletion_vector|' "$WORK/dvabs/_delta_log/00000000000000000001.json"
refuse "an absolute-path deletion vector outside the lake" "an absolute path outside the lake is not read" "$WORK/dvabs"
got=$("$PQTOOL" cat "$D" --limit 6 | tail -n +2 | tr '\n' ' ')
if [ "$got" = "1 2 3 4 5 8 " ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: deletion vector and --limit 6: got '$got'"; fi
"$PQTOOL" cat "$D" --format parquet --limit 7 -o "$WORK/dv.parquet"
expect "deletion vector, --format parquet --limit 7" "v 1 2 3 4 5 8 9 " "$WORK/dv.parquet"
printf 'x' >>"$D/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
expect "a vector file grown at its end still reads (its size and CRC are the vector's)" "v 1 10 11 12 2 21 22 23 24 25 26 27 28 3 4 5 8 9 " "$D"
python3 - "$D/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[20] ^= 1
open(p, "wb").write(bytes(b))
PY
refuse "a damaged vector" "fails its CRC-32" "$D"

# Column mapping mode id: columns are the files' with the schema's field
# ids, whatever their names.  The file (written by DuckDB with FIELD_IDS)
# names its columns y (field id 1) and x (field id 2); the table's x is id 1
# and its y is id 2, and neither physical name is in the file: by name, or
# by physical name, the answer would be wrong.  A file column the schema
# does not have (id 9, named w: a column dropped since) is no column of
# the table: an expression cannot name it.
NODE_MODULES=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tools/js" && pwd)/node_modules
if [ -d "$NODE_MODULES/@duckdb/node-api" ] && command -v node >/dev/null; then
    D=$WORK/idmap
    mkdir -p "$D/_delta_log"
    NODE_PATH=$NODE_MODULES node -e '
const { DuckDBInstance } = require("@duckdb/node-api");
(async () => {
  const c = await (await DuckDBInstance.create()).connect();
  await c.run(`COPY (SELECT * FROM (VALUES (10, '"'"'a'"'"', 7), (20, '"'"'b'"'"', 8)) t(y, x, w)) TO '"'"'${process.argv[1]}'"'"' (FIELD_IDS {y: 1, x: 2, w: 9})`);
})();' "$D/part-0.parquet"
    python3 - "$D" <<'PY'
import json, os, sys
d = sys.argv[1]
def field(name, typ, fid, phys):
    return {"name": name, "type": typ, "nullable": True,
            "metadata": {"delta.columnMapping.id": fid, "delta.columnMapping.physicalName": phys}}
schema = {"type": "struct", "fields": [field("x", "integer", 1, "col-x"), field("y", "string", 2, "col-y")]}
meta = {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": json.dumps(schema),
        "partitionColumns": [], "configuration": {"delta.columnMapping.mode": "id",
                                                  "delta.columnMapping.maxColumnId": "2"}, "createdTime": 1}
add = {"path": "part-0.parquet", "size": os.path.getsize(d + "/part-0.parquet"), "partitionValues": {},
       "modificationTime": 1, "dataChange": True}
with open(d + "/_delta_log/00000000000000000000.json", "w") as f:
    for a in ({"protocol": {"minReaderVersion": 2, "minWriterVersion": 5}}, {"metaData": meta}, {"add": add}):
        f.write(json.dumps(a) + "\n")
PY
    expect "column mapping id: columns by field id" "x,y 10,a 20,b " "$D"
    expect "column mapping id: --where by field id" "y b " "$D" --where "x > 15" --select y
    refuse "column mapping id: a dropped file column is no column of the table" "unknown column 'w'" "$D" --where "w = 7"
fi

# Partition columns of the other Delta types: boolean, timestamp (UTC;
# the plain form and ISO 8601 with a zone), timestamp_ntz, and double, in
# files of two rows (data.parquet repeats each file's constant per row).
D=$WORK/ptypes
mkdir -p "$D/_delta_log"
printf 'id\n1\n2\n' >"$WORK/two.csv"
printf 'id\n3\n4\n' >"$WORK/two2.csv"
"$PQTOOL" write "$WORK/two.csv" "$D/a.parquet"
"$PQTOOL" write "$WORK/two2.csv" "$D/b.parquet"
python3 - "$D" <<'PY'
import json, os, sys
d = sys.argv[1]
f = lambda n, t: {"name": n, "type": t, "nullable": True, "metadata": {}}
schema = {"type": "struct", "fields": [f("id", "long"), f("b", "boolean"), f("ts", "timestamp"),
                                       f("ntz", "timestamp_ntz"), f("x", "double")]}
meta = {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": json.dumps(schema),
        "partitionColumns": ["b", "ts", "ntz", "x"], "configuration": {}, "createdTime": 1}
def add(p, pv):
    return {"add": {"path": p, "size": os.path.getsize(d + "/" + p), "partitionValues": pv, "modificationTime": 1,
                    "dataChange": True}}
with open(d + "/_delta_log/00000000000000000000.json", "w") as out:
    for a in ({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["timestampNtz"],
                            "writerFeatures": ["timestampNtz"]}}, {"metaData": meta},
              add("a.parquet", {"b": "true", "ts": "2021-01-01 12:00:00", "ntz": "2021-01-01 12:00:00", "x": "1.5"}),
              add("b.parquet", {"b": "false", "ts": "2021-01-02T01:00:00.25+01:00", "ntz": None, "x": "-2"})):
        out.write(json.dumps(a) + "\n")
PY
expect "boolean, timestamp, timestamp_ntz and double partition columns" \
    "id,b,ts,ntz,x 1,true,2021-01-01 12:00:00+00,2021-01-01 12:00:00,1.5 2,true,2021-01-01 12:00:00+00,2021-01-01 12:00:00,1.5 3,false,2021-01-02 00:00:00.25+00,,-2.0 4,false,2021-01-02 00:00:00.25+00,,-2.0 " "$D"
expect "a boolean partition filter" "id 1 2 " "$D" --where "b" --select id
expect "a timestamp partition filter (UTC)" "id 3 4 " "$D" --where "ts > '2021-01-01 23:00:00+00'" --select id
expect "a timestamp_ntz partition filter" "id 1 2 " "$D" --where "ntz = '2021-01-01 12:00:00'" --select id
"$PQTOOL" cat "$D" --format parquet -o "$WORK/ptypes.parquet"
expect "the same through --format parquet (each file's constants on every row)" \
    "id,b,ts,ntz,x 1,true,2021-01-01 12:00:00+00,2021-01-01 12:00:00,1.5 2,true,2021-01-01 12:00:00+00,2021-01-01 12:00:00,1.5 3,false,2021-01-02 00:00:00.25+00,,-2.0 4,false,2021-01-02 00:00:00.25+00,,-2.0 " "$WORK/ptypes.parquet"
sed -i 's/"ntz": null/"ntz": "2021-01-01T00:00:00Z"/' "$D/_delta_log/00000000000000000000.json"
refuse "a timestamp_ntz partition value with a zone" "is not a timestamp without a zone" "$D"

# A Delta `timestamp` stored as INT96 (Spark's old encoding) is the
# table's INT64 TIMESTAMP(MICROS, UTC), the protocol's type: --format
# parquet says so (INT96 cannot say UTC, and DuckDB read it as a TIMESTAMP
# without a zone), every file's INT96 widened to the microseconds data.csv
# shows.  The file here (a CSV written as INT96, then two values given
# nanoseconds below their microsecond, as INT96 can hold, then a bloom
# filter made of them) is filtered by equality: its bloom filter hashes
# the stored bytes, which no literal's encoding is, so it must not prune.
D=$WORK/int96
mkdir -p "$D/_delta_log"
printf 'id,name,created_at\n1,a,2022-10-24 22:59:34.067272\n2,b,2022-10-24 22:59:35\n3,c,1900-01-01 00:00:00.000001\n' \
    >"$WORK/int96.csv"
like=$(ls "$DELTA"/checkpoint-v2-table/part-*.parquet | head -n 1) # id, name, created_at INT96
"$PQTOOL" write "$WORK/int96.csv" "$WORK/int96-plain.parquet" --schema "$like" --no-dictionary --codec uncompressed
python3 - "$WORK/int96-plain.parquet" "$WORK/int96-nanos.parquet" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
for nanos, day, new in ((82774067272000, 2459877, 82774067272999), (1000, 2415021, 1500)):
    old = struct.pack("<qI", nanos, day)
    at = b.find(old)
    assert at > 0 and b.find(old, at + 1) < 0, (nanos, day)
    b[at:at + 12] = struct.pack("<qI", new, day)
open(sys.argv[2], "wb").write(bytes(b))
PY
"$PQTOOL" rewrite "$WORK/int96-nanos.parquet" -o "$D/part-0.parquet" --bloom-filter created_at
one_file_table "$D" '[["id", "long", false], ["name", "string", false], ["created_at", "timestamp", false]]'
if "$PQTOOL" meta "$D/part-0.parquet" | grep -q 'created_at: .*bloom_filter='; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: the INT96 file has no bloom filter"; fi
expect "an INT96 timestamp reads as microseconds, UTC" \
    "id,name,created_at 1,a,2022-10-24 22:59:34.067272+00 2,b,2022-10-24 22:59:35+00 3,c,1900-01-01 00:00:00.000001+00 " "$D"
expect "INT96 equality: its bloom filter does not prune a value stored with nanoseconds" \
    "id 1 " "$D" --where "created_at = '2022-10-24 22:59:34.067272+00'" --select id
expect "INT96 IN" "id 2 3 " "$D" --where "created_at IN ('1900-01-01 00:00:00.000001+00', '2022-10-24 22:59:35+00')" --select id
expect "INT96 equality to an absent value" "id " "$D" --where "created_at = '2022-10-24 22:59:34.067273+00'" --select id
expect "INT96 range" "id 1 2 " "$D" --where "created_at >= '2022-10-24 22:59:34.067272+00'" --select id
"$PQTOOL" cat "$D" --format parquet -o "$WORK/int96-out.parquet"
if "$PQTOOL" meta "$WORK/int96-out.parquet" | grep -qx '  created_at: TIMESTAMP(MICROS,UTC) NOT NULL'; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: --format parquet of an INT96 timestamp: $("$PQTOOL" meta "$WORK/int96-out.parquet" | grep created_at | head -n 1)"; fi
expect "--format parquet of an INT96 timestamp reads back" \
    "id,name,created_at 1,a,2022-10-24 22:59:34.067272+00 2,b,2022-10-24 22:59:35+00 3,c,1900-01-01 00:00:00.000001+00 " "$WORK/int96-out.parquet"
# Files of one table in both encodings (Spark's INT96, then INT64
# TIMESTAMP(MICROS, UTC) as newer writers do, and the other way round):
# one column, each file's widened to it (their types conflicted before).
for order in int96-first int64-first; do
    X=$WORK/mixed-$order
    mkdir -p "$X/_delta_log"
    if [ $order = int96-first ]; then
        cp "$D/part-0.parquet" "$X/a.parquet" && cp "$WORK/int96-out.parquet" "$X/b.parquet"
    else
        cp "$WORK/int96-out.parquet" "$X/a.parquet" && cp "$D/part-0.parquet" "$X/b.parquet"
    fi
    python3 - "$D/_delta_log/00000000000000000000.json" "$X" <<'PY'
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1])][:2]
d = sys.argv[2]
for p in ("a.parquet", "b.parquet"):
    lines.append({"add": {"path": p, "size": os.path.getsize(d + "/" + p), "partitionValues": {},
                          "modificationTime": 1, "dataChange": True}})
open(d + "/_delta_log/00000000000000000000.json", "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
    expect "INT96 and INT64 timestamp files in one table ($order)" \
        "id 1 1 2 2 " "$X" --where "created_at >= '2022-10-24 22:59:34.067272+00'" --select id
done

# A dictionary-encoded INT96 column (the corpus's int96_from_spark, whose
# last value Spark wrote past the nanosecond range, its day wrapped) in a
# Delta table: the dictionary rung compares values as the scan widens
# them (an absent one prunes, a present one never does), and the wrapped
# value is a microsecond count like the others (a nanosecond one it would
# not fit).
S=$WORK/int96spark
mkdir -p "$S/_delta_log"
cp "$DELTA/../parquet-testing/data/int96_from_spark.parquet" "$S/part-0.parquet"
one_file_table "$S" '[["a", "timestamp", true]]'
spark_rows="a  2024-01-01 01:00:00+00 2024-01-01 20:34:56.123456+00 2024-12-30 23:00:00+00 290000-12-30 23:00:00+00 9999-12-31 03:00:00+00 "
expect "Spark's INT96, UTC, its wrapped day too" "$spark_rows" "$S"
expect "INT96 by dictionary: a value it holds" "a 2024-01-01 01:00:00+00 " "$S" --where "a = '2024-01-01 01:00:00+00'"
expect "INT96 by dictionary: the wrapped value" "a 290000-12-30 23:00:00+00 " "$S" --where "a = '290000-12-30 23:00:00+00'"
expect "INT96 by dictionary: a value it lacks" "a " "$S" --where "a = '2024-01-01 01:00:01+00'"
got=$("$PQTOOL" plan "$S" --where "a = '2024-01-01 01:00:01+00'" | grep '^row groups:')
if [ "$got" = "row groups: 1 total, 1 pruned (statistics 0, dictionary 1, page index 0, bloom filter 0), 0 fully matched" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: the INT96 dictionary prunes an absent value: '$got'"; fi
"$PQTOOL" cat "$S" --format parquet -o "$WORK/int96spark.parquet"
expect "Spark's INT96 through --format parquet" "$spark_rows" "$WORK/int96spark.parquet"
if [ -d "$NODE_MODULES/@duckdb/node-api" ] && command -v node >/dev/null; then
    DUCK=$(cd "$(dirname "${BASH_SOURCE[0]}")/../mount" && pwd)/duck.mjs
    # DuckDB reads the instants: a TIMESTAMP WITH TIME ZONE, microseconds since the epoch.
    instants() {
        node "$DUCK" sql "SELECT any_value(typeof($2)) || ' ' || string_agg(id || '=' || epoch_us($2), ' ' ORDER BY id) FROM read_parquet('$1')"
    }
    got=$(instants "$WORK/int96-out.parquet" created_at)
    want="TIMESTAMP WITH TIME ZONE 1=1666652374067272 2=1666652375000000 3=-2208988799999999"
    if [ "$got" = "$want" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: DuckDB reads --format parquet of an INT96 timestamp as '$got', want '$want'"; fi
    got=$(node "$DUCK" sql "SELECT any_value(typeof(a)) || ' ' || string_agg(epoch_us(a)::VARCHAR, ' ' ORDER BY a) FROM read_parquet('$WORK/int96spark.parquet')")
    want="TIMESTAMP WITH TIME ZONE 1704070800000000 1704141296123456 1735599600000000 253402225200000000 9089380393200000000"
    if [ "$got" = "$want" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: DuckDB reads --format parquet of Spark's INT96 as '$got', want '$want'"; fi
    # The corpus's INT96 tables, against their expected CSVs.
    for t in checkpoint-v2-table:id:created_at delta-stats-optional:integer:timestamp; do
        IFS=: read -r name key col <<<"$t"
        "$PQTOOL" cat "$DELTA/$name" --format parquet -o "$WORK/$name.parquet"
        got=$(node "$DUCK" sql "SELECT any_value(typeof(\"$col\")) || ' ' || string_agg(\"$key\" || '=' || epoch_us(\"$col\"), ' ' ORDER BY \"$key\") FROM read_parquet('$WORK/$name.parquet')")
        want=$(python3 - "$DELTA/expected/$name.csv" "$key" "$col" <<'PY'
import csv, datetime, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: int(r[sys.argv[2]]))
epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
us = lambda s: (datetime.datetime.fromisoformat(s.replace("+00", "+00:00")) - epoch) // datetime.timedelta(microseconds=1)
print("TIMESTAMP WITH TIME ZONE " + " ".join(f"{r[sys.argv[2]]}={us(r[sys.argv[3]])}" for r in rows))
PY
)
        if [ "$got" = "$want" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: DuckDB reads --format parquet of $name as '$got', want '$want'"; fi
    done
fi

# Decimal partition columns (decimal(5,2): INT32 in --format parquet,
# decimal(12,3): INT64, decimal(38,10): 16 bytes), typed by the schema:
# compared exactly ("1.5" is 1.50), rendered at their scale, a value with
# more digits than the type holds refused naming it (before: the table was
# refused, "partition column 'amount' is of type 'decimal(5,2)'").
M=$WORK/decimal
python3 - "$M" "$PQTOOL" <<'PY'
import json, os, subprocess, sys
d, pqtool = sys.argv[1], sys.argv[2]
f = lambda n, t: {"name": n, "type": t, "nullable": True, "metadata": {}}
schema = {"type": "struct", "fields": [f("id", "long"), f("amount", "decimal(5,2)"), f("big", "decimal(38,10)"),
                                       f("mid", "decimal(12,3)")]}
meta = {"id": "t", "format": {"provider": "parquet", "options": {}}, "schemaString": json.dumps(schema),
        "partitionColumns": ["amount", "big", "mid"], "configuration": {}, "createdTime": 1}
parts = [("1.50", "12345678901234567890.5", "-0.001", [1, 2]), ("-3.00", "-0.0000000001", "123456789.000", [3]),
         (None, None, None, [4]), ("999.99", "1", "0", [5])]
os.makedirs(d + "/_delta_log")
adds = []
for i, (a, b, m, ids) in enumerate(parts):
    open(d + "/in.csv", "w").write("id\n" + "".join(f"{x}\n" for x in ids))
    path = f"f{i}.parquet"
    subprocess.run([pqtool, "write", d + "/in.csv", d + "/" + path], check=True)
    adds.append({"path": path, "size": os.path.getsize(d + "/" + path), "modificationTime": 1, "dataChange": True,
                 "partitionValues": {"amount": a, "big": b, "mid": m}})
os.remove(d + "/in.csv")
with open(d + "/_delta_log/00000000000000000000.json", "w") as out:
    for a in [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}, {"metaData": meta}] + [{"add": a} for a in adds]:
        out.write(json.dumps(a) + "\n")
PY
expect "decimal partitions at their scale" \
    "id,amount,big,mid 1,1.50,12345678901234567890.5000000000,-0.001 2,1.50,12345678901234567890.5000000000,-0.001 3,-3.00,-0.0000000001,123456789.000 4,,, 5,999.99,1.0000000000,0.000 " "$M"
expect "a decimal partition compared exactly" "id 1 2 " "$M" --where "amount = 1.5" --select id
expect "a decimal partition range" "id 3 " "$M" --where "amount < 0" --select id
expect "a 38-digit decimal partition" "id 1 2 " "$M" --where "big > 12345678901234567890.4999999999" --select id
expect "a decimal(38,10) partition, its smallest step" "id 3 " "$M" --where "big = -0.0000000001" --select id
expect "a decimal(12,3) partition" "id 1 2 " "$M" --where "mid < 0" --select id
expect "a decimal partition IS NULL" "id 4 " "$M" --where "amount IS NULL" --select id
"$PQTOOL" cat "$M" --format parquet -o "$WORK/decimal-out.parquet"
got=$("$PQTOOL" meta "$WORK/decimal-out.parquet" | grep -E '^  [0-9] (amount|big|mid):' | tr -s ' ' | tr '\n' ';')
if [ "$got" = " 1 amount: INT32 max_def=1 max_rep=0; 2 big: FIXED_LEN_BYTE_ARRAY max_def=1 max_rep=0; 3 mid: INT64 max_def=1 max_rep=0;" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: --format parquet's decimal partition columns: '$got'"; fi
expect "--format parquet of decimal partitions reads back" \
    "id,amount,big,mid 1,1.50,12345678901234567890.5000000000,-0.001 2,1.50,12345678901234567890.5000000000,-0.001 3,-3.00,-0.0000000001,123456789.000 4,,, 5,999.99,1.0000000000,0.000 " "$WORK/decimal-out.parquet"
if [ -d "$NODE_MODULES/@duckdb/node-api" ] && command -v node >/dev/null; then
    got=$(node "$(cd "$(dirname "${BASH_SOURCE[0]}")/../mount" && pwd)/duck.mjs" sql "SELECT any_value(typeof(amount)) || ' ' || any_value(typeof(big)) || ' ' || any_value(typeof(mid)) || ' ' || sum(amount)::VARCHAR || ' ' || sum(big)::VARCHAR || ' ' || sum(mid)::VARCHAR FROM read_parquet('$WORK/decimal-out.parquet')")
    want="DECIMAL(5,2) DECIMAL(38,10) DECIMAL(12,3) 999.99 24691357802469135781.9999999999 123456788.998"
    if [ "$got" = "$want" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: DuckDB reads --format parquet's decimal partitions as '$got', want '$want'"; fi
fi
sed -i 's/"amount": "999.99"/"amount": "999.991"/' "$M/_delta_log/00000000000000000000.json"
refuse "a decimal partition value finer than its scale" "partition value '999.991' of 'amount' is not a decimal" "$M"
sed -i 's/"amount": "999.991"/"amount": "1000.00"/' "$M/_delta_log/00000000000000000000.json"
refuse "a decimal partition value past its precision" "partition value '1000.00' of 'amount' is not a decimal" "$M"

echo "delta.query: $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
