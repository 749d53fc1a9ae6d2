# Helpers shared by the Delta Lake mount tests in tests/delta (sourced; it
# sources tests/mount/lib.sh, whose mount_test_init, start_pqfs, stop_pqfs,
# start_fake_s3 and check set up, mount, unmount and check): Parquet files,
# Delta commits and their actions written by hand, an ini for a mount of the
# fake S3, and a CSV's rows.

# shellcheck source=../mount/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../mount/lib.sh"

# require_delta_testdata: DELTA, the shared corpus of Delta tables; skips (77) without it.
require_delta_testdata() {
    DELTA=$SHARED/testdata/delta
    [ -d "$DELTA/simple_table/_delta_log" ] || skip "no $DELTA"
}

# The protocol action of a table every reader and writer takes (reader 1, writer 2).
DELTA_PROTOCOL='{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}'

# write_parquet OUT CSV_TEXT: a Parquet file of those rows (pqtool write of WORK/in.csv).
write_parquet() {
    printf '%s' "$2" >"$WORK/in.csv"
    "$PQTOOL" write "$WORK/in.csv" "$1"
}

# write_commit TABLE VERSION ACTION...: TABLE/_delta_log/VERSION.json, one action a line.
write_commit() {
    local t=$1 v=$2
    shift 2
    mkdir -p "$t/_delta_log"
    printf '%s\n' "$@" >"$t/_delta_log/$(printf '%020d' "$v").json"
}

# field_json NAME TYPE: a nullable field of a Delta schema, without metadata.
field_json() { printf '{"name":"%s","type":"%s","nullable":true,"metadata":{}}' "$1" "$2"; }

# struct_schema FIELD_JSON...: the Delta schema (a struct) of those fields.
struct_schema() {
    local IFS=,
    printf '{"type":"struct","fields":[%s]}' "$*"
}

# The schema of one column, id, a long.
ID_SCHEMA=$(struct_schema "$(field_json id long)")

# metadata_action SCHEMA [PARTITION_COLUMNS [CONFIGURATION [ID]]]: a metaData action
# (PARTITION_COLUMNS a JSON list, default []; CONFIGURATION a JSON object, default {};
# ID the table's id, default t).
metadata_action() {
    local schema
    schema=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1")
    printf '{"metaData":{"id":"%s","format":{"provider":"parquet","options":{}},"schemaString":%s,"partitionColumns":%s,"configuration":%s,"createdTime":1}}' \
        "${4:-t}" "$schema" "${2:-[]}" "${3:-{\}}"
}

# add_action TABLE PATH [PARTITION_VALUES]: an add of TABLE/PATH with its size
# (PARTITION_VALUES a JSON object, default {}).
add_action() {
    printf '{"add":{"path":"%s","partitionValues":%s,"size":%s,"modificationTime":1,"dataChange":true}}' \
        "$2" "${3:-{\}}" "$(stat -c %s "$1/$2")"
}

# remove_action PATH [DELETION_TIMESTAMP_MS]: a remove (default deletionTimestamp 2).
remove_action() { printf '{"remove":{"path":"%s","deletionTimestamp":%s,"dataChange":true}}' "$1" "${2:-2}"; }

# add_partition_values COMMIT_FILE: the partitionValues of each add in a
# commit, one JSON object a line (keys sorted).
add_partition_values() {
    python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l)
    if "add" in o: print(json.dumps(o["add"]["partitionValues"], sort_keys=True))' "$1"
}

# write_s3_ini OUT CACHE_DIR: an ini mounting s3://bkt/lake of the fake S3
# started by start_fake_s3 (FAKE_S3_PORT), logging at level info.
write_s3_ini() {
    cat >"$1" <<INI
[pqfs]
source = s3://bkt/lake
cache_dir = $2
log_level = info

[s3]
endpoint = http://127.0.0.1:$FAKE_S3_PORT
path_style = true
access_key_id = AKTEST
secret_access_key = SKTEST
INI
}

# sorted_rows CSV: the rows of CSV after its header, sorted (numbers as
# numbers), on one line, each followed by a space.
sorted_rows() { tail -n +2 "$1" | sort -n | tr '\n' ' '; }
