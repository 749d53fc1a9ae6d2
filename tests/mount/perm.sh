#!/usr/bin/env bash
# Multi-user mounts (docs/permissions.md, SPEC section 7): as root, a lake
# with a table every user may read (partition dt=1 root's, dt=2 a test
# user's) and one of mode 0700, mounted with -o allow_other; as the test user
# (a user made for the run, removed by the EXIT trap):
#   - the private table is EACCES to ls and to cat; the public one reads,
#     also through a where= view;
#   - stat shows the source's mode, uid and gid (views and view files
#     inherit the nearest real directory's, view files without x);
#   - cp of a CSV into dt=1 (not the user's) or into a new dt=3, and mkdir
#     of a table, are EACCES and nothing is staged or written; cp into dt=2
#     lands, and the new part file is the user's;
#   - /.pqfs/errors is 0600 (not readable by the user), and its messages name
#     lake paths, never the absolute lake or cache paths;
#   - a remote (fake S3) mount with uid=, gid=, file_mode=, dir_mode= shows
#     them in stat; bad values are refused at start, saying why.
#   tests/mount/perm.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: perm.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (a second user, a root daemon)"
command -v useradd >/dev/null && command -v setpriv >/dev/null || skip "needs useradd and setpriv"
mount_test_init
PUSER=pqfsperm$$
PGROUP=pqfspg$$
useradd -M -N "$PUSER"
groupadd "$PGROUP"
trap 'rc=$?; userdel -f "$PUSER" 2>/dev/null; groupdel "$PGROUP" 2>/dev/null; (exit $rc); mount_test_cleanup' EXIT
PUID=$(id -u "$PUSER")
PGID=$(id -g "$PUSER")
# as_user CMD...: runs CMD as the test user, with no supplementary group.
as_user() { setpriv --reuid="$PUID" --regid="$PGID" --clear-groups -- "$@"; }
chmod 0711 "$WORK" # the user reaches the mountpoints, nothing else

# ------------------------------------------------------------ the lake
LAKE=$WORK/lake
mkdir -p "$LAKE/pub/dt=1" "$LAKE/pub/dt=2" "$LAKE/priv" "$WORK/in"
printf 'id,amount\n1,10.5\n2,20.5\n3,30.5\n' >"$WORK/in/a.csv"
printf 'id,amount\n4,40.5\n5,50.5\n' >"$WORK/in/b.csv"
printf 'id,amount\n7,70.5\n8,80.5\n' >"$WORK/in/new.csv"
"$PQTOOL" write "$WORK/in/a.csv" "$LAKE/pub/dt=1/part-0.parquet" >/dev/null
"$PQTOOL" write "$WORK/in/b.csv" "$LAKE/pub/dt=2/part-0.parquet" >/dev/null
"$PQTOOL" write "$WORK/in/a.csv" "$LAKE/priv/part-0.parquet" >/dev/null
# A table whose file is not Parquet: its views fail, naming the file.
mkdir -p "$LAKE/broken"
"$PQTOOL" write "$WORK/in/a.csv" "$LAKE/broken/a.parquet" >/dev/null
head -c 300 /dev/urandom >"$LAKE/broken/b.parquet"
printf 'PAR1' >>"$LAKE/broken/b.parquet"
chmod 0755 "$LAKE" "$LAKE/pub" "$LAKE/pub/dt=1" "$WORK/in"
chmod 0644 "$WORK/in"/*.csv
chown "$PUID:$PGID" "$LAKE/pub/dt=2"
chmod 0750 "$LAKE/pub/dt=2"
chmod 0700 "$LAKE/priv"
# A partition writable by a group the user is in only as a supplementary group.
mkdir -p "$LAKE/grp/dt=4" && chmod 0755 "$LAKE/grp"
"$PQTOOL" write "$WORK/in/b.csv" "$LAKE/grp/dt=4/part-0.parquet" >/dev/null
chown "0:$(getent group "$PGROUP" | cut -d: -f3)" "$LAKE/grp/dt=4"
chmod 0770 "$LAKE/grp/dt=4"

M=$WORK/mnt
start_pqfs "$WORK/pqfs.log" "$LAKE" "$M" -o allow_other,cache_dir="$WORK/cache",metadata_ttl=0
LOCAL_PID=$PQFS_PID
CACHE_AREA() { find "$WORK/cache" -name 'stage-*' 2>/dev/null | wc -l; }
lake_files() { find "$LAKE" -type f | sort; }

# ------------------------------------------------------------ reads
check "the private table: ls is EACCES for another user" \
    '! as_user ls "$M/priv" 2>"$WORK/err" && grep -q "Permission denied" "$WORK/err"'
check "the private table: cat of a view file is EACCES" \
    '! as_user cat "$M/priv/data.csv" 2>"$WORK/err" >/dev/null && grep -q "Permission denied" "$WORK/err"'
check "the private table: a where= view is EACCES too" \
    '! as_user cat "$M/priv/where=id > 1/data.csv" 2>"$WORK/err" >/dev/null && grep -q "Permission denied" "$WORK/err"'
check "the private table is still root's to read" '[ "$(wc -l <"$M/priv/data.csv")" = 4 ]'
check "the public table reads for another user" '[ "$(as_user cat "$M/pub/data.csv" | wc -l)" = 6 ]'
check "the public table: a where= view reads" \
    '[ "$(as_user cat "$M/pub/where=amount > 25/data.csv" | tail -n +2 | cut -d, -f1 | tr "\n" " ")" = "3 4 5 " ]'
check "the user's partition (0750) reads for its owner" '[ "$(as_user cat "$M/pub/dt=2/data.csv" | wc -l)" = 3 ]'

# ------------------------------------------------------------ stat
st() { stat -c '%a %u %g' "$1"; }
check "stat: a table directory has its source's mode and owner" '[ "$(st "$M/pub")" = "755 0 0" ] && [ "$(st "$M/priv")" = "700 0 0" ]'
check "stat: a partition directory has its source's" '[ "$(as_user stat -c "%a %u %g" "$M/pub/dt=2")" = "750 $PUID $PGID" ]'
check "stat: a view file has its directory's mode without x" '[ "$(as_user stat -c "%a %u %g" "$M/pub/dt=2/data.csv")" = "640 $PUID $PGID" ]'
check "stat: a where= view has its nearest real directory's" \
    '[ "$(as_user stat -c "%a %u %g" "$M/pub/dt=2/where=id > 4")" = "750 $PUID $PGID" ] &&
     [ "$(as_user stat -c "%a %u %g" "$M/pub/where=id > 4/plan.txt")" = "644 0 0" ]'
check "stat: the root is the lake root's" '[ "$(st "$M")" = "755 0 0" ]'

# ------------------------------------------------------------ writes
before=$(lake_files)
check "cp into a partition the user may not write: EACCES" \
    '! as_user cp "$WORK/in/new.csv" "$M/pub/dt=1/" 2>"$WORK/err" && grep -q "Permission denied" "$WORK/err"'
check "cp into a new partition of a table the user may not write: EACCES" \
    '! as_user cp "$WORK/in/new.csv" "$M/pub/dt=3/" 2>"$WORK/err" && grep -q "Permission denied" "$WORK/err"'
check "mkdir of a table in a lake root the user may not write: EACCES" \
    '! as_user mkdir "$M/newtable" 2>"$WORK/err" && grep -q "Permission denied" "$WORK/err"'
check "a refused write stages nothing and writes nothing into the lake" \
    '[ "$(CACHE_AREA)" = 0 ] && [ "$(lake_files)" = "$before" ] && [ ! -e "$LAKE/pub/dt=3" ] && [ ! -e "$LAKE/newtable" ]'
check "cp into the user's partition lands" 'as_user cp "$WORK/in/new.csv" "$M/pub/dt=2/" 2>"$WORK/err"'
new=$(find "$LAKE/pub/dt=2" -name 'new-*.parquet')
check "the new part file is the writer's" '[ -n "$new" ] && [ "$(stat -c "%u %g" $new)" = "$PUID $PGID" ]'
check "every view has the new rows" '[ "$(as_user cat "$M/pub/dt=2/data.csv" | wc -l)" = 5 ]'
check "root writes into the user's partition too" 'cp "$WORK/in/a.csv" "$M/pub/dt=2/"'
PGID2=$(getent group "$PGROUP" | cut -d: -f3)
check "without its supplementary group the user cannot write the group's partition" \
    '! as_user cp "$WORK/in/new.csv" "$M/grp/dt=4/" 2>"$WORK/err" && grep -q "Permission denied" "$WORK/err"'
check "with it (from /proc/PID/task/PID/status) it can" \
    'setpriv --reuid="$PUID" --regid="$PGID" --groups="$PGID2" -- cp "$WORK/in/new.csv" "$M/grp/dt=4/" 2>"$WORK/err"'

# ------------------------------------------------------------ /.pqfs/errors
as_user cat "$M/pub/where=nope > 1/data.csv" >/dev/null 2>&1 || true
cp "$WORK/in/a.csv" "$M/priv/bad.parquet" 2>/dev/null || true # not Parquet: an error naming the file
cat "$M/broken/data.csv" >/dev/null 2>&1 || true                 # a lake file's error
check "/.pqfs/errors is 0600, the mount owner's" '[ "$(st "$M/.pqfs/errors")" = "600 0 0" ]'
check "/.pqfs/errors is not readable by another user" \
    '! as_user cat "$M/.pqfs/errors" 2>"$WORK/err" >/dev/null && grep -q "Permission denied" "$WORK/err"'
check "/.pqfs/errors holds the errors" \
    'grep -q "nope" "$M/.pqfs/errors" && grep -q "bad.parquet" "$M/.pqfs/errors" && grep -q "broken/b.parquet" "$M/.pqfs/errors"'
check "/.pqfs/errors names no absolute lake or cache path" '! grep -qF "$WORK" "$M/.pqfs/errors"'
check "/.pqfs/stats reads for another user" 'as_user cat "$M/.pqfs/stats" >/dev/null'

# ------------------------------------------------------------ remote
S3ROOT=$WORK/s3
mkdir -p "$S3ROOT/lake"
cp -r "$LAKE/pub" "$S3ROOT/lake/"
start_fake_s3 s3
cat >"$WORK/s3.ini" <<EOF
[pqfs]
source = s3://bkt/lake
cache_dir = $WORK/cache-s3

[s3]
endpoint = http://127.0.0.1:$FAKE_S3_PORT
path_style = true
access_key_id = AKTEST
secret_access_key = SKTEST
EOF
start_pqfs "$WORK/s3.log" "$WORK/s3.ini" "$WORK/mnt-s3" -o "uid=$PUID,gid=$PGID,dir_mode=0750,file_mode=0640"
S3_PID=$PQFS_PID
check "S3 with uid=, gid=, dir_mode=: directories" \
    '[ "$(st "$WORK/mnt-s3/pub")" = "750 $PUID $PGID" ] && [ "$(st "$WORK/mnt-s3/pub/dt=1/where=id > 1")" = "750 $PUID $PGID" ]'
check "S3 with file_mode=: view files" '[ "$(st "$WORK/mnt-s3/pub/dt=1/data.csv")" = "640 $PUID $PGID" ]'
check "S3: the rows read" '[ "$(wc -l <"$WORK/mnt-s3/pub/data.csv")" = 11 ]'
start_pqfs "$WORK/s3b.log" "$WORK/s3.ini" "$WORK/mnt-s3b"
S3B_PID=$PQFS_PID
check "S3 without them: the mounting user's, modes as before" \
    '[ "$(st "$WORK/mnt-s3b/pub")" = "755 0 0" ] && [ "$(st "$WORK/mnt-s3b/pub/data.csv")" = "444 0 0" ]'
check "a bad mode is refused at start" \
    '! "$PQFS" "$WORK/s3.ini" "$WORK/mnt-bad" -f -o dir_mode=0789 2>"$WORK/err" && grep -q "dir_mode.*not an octal mode" "$WORK/err"'
check "a bad uid is refused at start" \
    '! "$PQFS" "$WORK/s3.ini" "$WORK/mnt-bad" -f -o uid=alice 2>"$WORK/err" && grep -q "uid.*not a number" "$WORK/err"'
check "uid= on a local lake is refused, saying why" \
    '! "$PQFS" "$LAKE" "$WORK/mnt-bad" -f -o uid=5 2>"$WORK/err" && grep -q "only for a remote lake" "$WORK/err"'

# Unmounted and waited for here, not only in the trap: a daemon still
# exiting (an ASan build's leak check) must not be cut short by the
# cleanup's sweep of leftover processes, which left mounts behind.
stop_pqfs "$WORK/mnt-s3b" "$S3B_PID"
stop_pqfs "$WORK/mnt-s3" "$S3_PID"
stop_pqfs "$M" "$LOCAL_PID"
summary perm
