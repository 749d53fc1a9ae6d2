#!/usr/bin/env bash
# A Delta Lake table is refused by the mount with a clear reason until the
# mount reads its log (issue 21; pqtool reads it: tests/delta/table.sh): read
# as a Hive directory, its Parquet files include removed ones (an overwrite
# before VACUUM shows the rows of both versions).
#   - through a real mount of a lake holding two Delta tables and a Hive
#     table: the Delta tables' views fail with EIO, /.pqfs/errors says why,
#     a copy into one fails and writes nothing, and the Hive table still reads;
#   - a mount whose root is a Delta table: its root views fail with EIO.
#   tests/delta/refuse.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: refuse.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
mount_dir=$here/../mount
# shellcheck source=../mount/lib.sh
. "$mount_dir/lib.sh"
mount_test_init

DELTA=$SHARED/testdata/delta
[ -d "$DELTA" ] || skip "no $DELTA"
REASON="is a Delta Lake table (it holds _delta_log/)"

# pqtool reads Delta tables now (tests/delta/table.sh, one CTest per table):
# only the mount refuses them.
n_tables=0
for t in "$DELTA"/*/; do [ -d "$t/_delta_log" ] && n_tables=$((n_tables + 1)); done
check "the shared corpus has Delta tables ($n_tables)" '[ "$n_tables" -ge 10 ]'

# ------------------------------------------------------------ the mount
LAKE=$WORK/lake MNT=$WORK/mnt
mkdir -p "$LAKE/hive/p=1"
cp -r "$DELTA/delta-0.8.0" "$LAKE/flat"
cp -r "$DELTA/delta-0.8.0-partitioned" "$LAKE/parted"
printf 'id,v\n1,a\n2,b\n' >"$WORK/two.csv"
"$PQTOOL" write "$WORK/two.csv" "$LAKE/hive/p=1/part-0.parquet"
before=$(find "$LAKE" -type f | sort | md5sum)

start_pqfs "$WORK/pqfs.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache,log_level=warn"
DAEMON=$PQFS_PID
check "the Delta tables are listed as tables" '[ "$(ls "$MNT" | sort | tr "\n" " ")" = "flat hive parted " ]'
check "flat/data.csv fails with EIO" '[ "$(errno_of read "$MNT/flat/data.csv")" = EIO ]'
check "flat/data.parquet fails with EIO" '[ "$(errno_of read "$MNT/flat/data.parquet")" = EIO ]'
check "parted/year=2020/data.csv fails with EIO" '[ "$(errno_of read "$MNT/parted/year=2020/data.csv")" = EIO ]'
check "parted/where=value>0/data.csv fails with EIO" '[ "$(errno_of read "$MNT/parted/where=value>0/data.csv")" = EIO ]'
check "/.pqfs/errors names the format" 'grep -qF "$REASON" "$MNT/.pqfs/errors"'
if cp "$WORK/two.csv" "$MNT/flat/new.csv" 2>/dev/null; then
    fail "a copy into a Delta table succeeded"
else
    pass "a copy into a Delta table fails"
fi
check "the hive table reads" '[ "$(tail -n +2 "$MNT/hive/data.csv" | sort | tr "\n" " ")" = "1,a,1 2,b,1 " ]'
stop_pqfs "$MNT" "$DAEMON"
after=$(find "$LAKE" -type f | sort | md5sum)
check "nothing was written into the lake" '[ "$before" = "$after" ]'

# A single-table mount of a Delta table.
start_pqfs "$WORK/pqfs2.log" "$LAKE/flat" "$WORK/mnt2" -o "cache_dir=$WORK/cache2,log_level=warn"
DAEMON=$PQFS_PID
check "a Delta table as the mount root: data.csv fails with EIO" '[ "$(errno_of read "$WORK/mnt2/data.csv")" = EIO ]'
stop_pqfs "$WORK/mnt2" "$DAEMON"

summary "delta.refuse"
