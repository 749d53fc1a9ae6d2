#!/usr/bin/env bash
# Nothing outside the lake root (docs/architecture.md), with pqtool and the
# real pqfs daemon:
#   - reads: a table directory, a partition directory and a .parquet file
#     that are symbolic links out of SOURCE (relative or absolute) are not
#     served, one warning per link however often they are listed; the same
#     kinds of link resolving inside SOURCE are read normally;
#   - writes follow no link: cp into a partition that is a link (out of the
#     lake or inside it) fails with EPERM and creates nothing anywhere; a real
#     partition, or a new one, still takes the file;
#   - a temporary file (.NAME) never renamed is discarded once its time is
#     up (PQFS_TEST_STAGED_TIMEOUT shortens the 10 minutes), even on an idle
#     mount, and counted in /.pqfs/stats;
#   - a daemon killed (SIGKILL) while a commit writes leaves its
#     .NAME.parquet.tmp-XXXXXX and the partition directory it made: a later
#     mount removes them once older than the age (PQFS_TEST_LEFTOVER_AGE
#     shortens the minute), never before, and never a live writer's (a second
#     mount of the lake stopped mid-commit).
#   tests/mount/links.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: links.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init

check() { if eval "$2"; then pass "$1"; else fail "$1"; fi; }
# copy_errno SRC DST: OK or the errno name the copy's open, write or close gave.
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
# Every path under the lake and the outside directory (links not followed),
# with sizes: what a refused write must leave as it was.
everything() { find "$LAKE" "$OUT" -printf '%p %y %s\n' | sort; }
ids() { tail -n +2 | cut -d, -f1 | sort -n | tr '\n' ' '; }
# wait_for SECONDS CMD: polls CMD (eval'd) every 0.1 s.
wait_for() {
    local i
    for i in $(seq $(($1 * 10))); do
        if eval "$2"; then return 0; fi
        sleep 0.1
    done
    return 1
}
# The part-file temporaries under DIR (names only).
temporaries() { find "$1" -name '.*.parquet.tmp-*' -printf '%f\n' 2>/dev/null | sort; }
# stop_at_temporary DIR PID [locked]: SIGSTOPs PID as soon as a part-file temporary
# appears in DIR (within 60 s); prints its path, or nothing.
stop_at_temporary() {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import os, re, signal, sys, time
d, pid, want_lock = sys.argv[1], int(sys.argv[2]), sys.argv[3] == 'locked'
pat = re.compile(r'^\..*\.parquet\.tmp-[A-Za-z0-9]{6}$')

def flocked(path):
    # /proc/locks: "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"
    try:
        ino = os.stat(path).st_ino
        with open('/proc/locks') as f:
            return any('FLOCK' in l and l.split()[5].endswith(':%d' % ino) for l in f if len(l.split()) > 5)
    except OSError:
        return False

end = time.time() + 60
while time.time() < end:
    try:
        names = [n for n in os.listdir(d) if pat.match(n)]
    except FileNotFoundError:
        names = []
    # A live writer's temporary is stopped only once locked: between its
    # create and its lock only its age protects it, which the test takes away.
    if names and (not want_lock or flocked(os.path.join(d, names[0]))):
        os.kill(pid, signal.SIGSTOP)
        print(os.path.join(d, names[0]))
        break
    time.sleep(0.001)
PY
}

WORK=$(realpath "$WORK")
LAKE=$WORK/lake OUT=$WORK/outside IN=$WORK/in MNT=$WORK/mnt
mkdir -p "$LAKE/ev/dt=2024-01-01" "$OUT/dt" "$OUT/table/dt=2024-05-05" "$IN"
printf 'id,name\n1,in\n2,in\n' >"$IN/seed.csv"
"$PQTOOL" write "$IN/seed.csv" "$LAKE/ev/dt=2024-01-01/part-0.parquet"
printf 'id,name\n100,out\n' >"$IN/o1.csv"
"$PQTOOL" write "$IN/o1.csv" "$OUT/dt/part-9.parquet"
printf 'id,name\n200,out\n' >"$IN/o2.csv"
"$PQTOOL" write "$IN/o2.csv" "$OUT/x.parquet"
printf 'id,name\n300,out\n' >"$IN/o3.csv"
"$PQTOOL" write "$IN/o3.csv" "$OUT/table/dt=2024-05-05/part.parquet"
# Out of the lake: a partition (relative and absolute), a file, a table.
ln -s ../../outside/dt "$LAKE/ev/dt=2024-01-10"
ln -s "$OUT/dt" "$LAKE/ev/dt=2024-01-11"
ln -s "$OUT/x.parquet" "$LAKE/ev/dt=2024-01-01/x.parquet"
ln -s ../outside/table "$LAKE/t_out"
# Inside: a partition (relative and absolute), a file, a table.
ln -s dt=2024-01-01 "$LAKE/ev/dt=2024-01-03"
ln -s "$LAKE/ev/dt=2024-01-01" "$LAKE/ev/dt=2024-01-04"
ln -s part-0.parquet "$LAKE/ev/dt=2024-01-01/y.parquet"
ln -s ev "$LAKE/t_in"
# part-0 and y.parquet in each of dt=2024-01-01, 03 and 04: ids 1 and 2 six times.
EXPECT="1 1 1 1 1 1 2 2 2 2 2 2 "

# ------------------------------------------------------------ pqtool reads
"$PQTOOL" cat "$LAKE/ev" --select id >"$WORK/cat.csv" 2>"$WORK/cat.err" || true
check "pqtool cat of the table: the links inside are read, none out (got $(ids <"$WORK/cat.csv"))" \
    '[ "$(ids <"$WORK/cat.csv")" = "$EXPECT" ]'
check "pqtool warns once for each link out of the table: $(tr '\n' '|' <"$WORK/cat.err")" \
    '[ "$(grep -c "symbolic link out of the lake" "$WORK/cat.err")" = 3 ] &&
     grep -q "ev/dt=2024-01-10: a symbolic link out of the lake" "$WORK/cat.err" &&
     grep -q "ev/dt=2024-01-11: a symbolic link out of the lake" "$WORK/cat.err" &&
     grep -q "dt=2024-01-01/x.parquet: a symbolic link out of the lake" "$WORK/cat.err"'
check "pqtool cat of a partition linked inside reads it" \
    '[ "$("$PQTOOL" cat "$LAKE/ev/dt=2024-01-03" --select id 2>/dev/null | ids)" = "1 1 2 2 " ]'
check "pqtool cat of a partition: its file linked out is not read" \
    '[ "$("$PQTOOL" cat "$LAKE/ev/dt=2024-01-01" --select id 2>/dev/null | ids)" = "1 1 2 2 " ]'
check "pqtool cat of the table filtered to a partition linked out: no rows" \
    '[ "$("$PQTOOL" cat "$LAKE/ev" --where "dt = '"'"'2024-01-10'"'"'" --select id 2>/dev/null | ids)" = "" ]'
check "pqtool cat of the table through a link inside the lake" \
    '[ "$("$PQTOOL" cat "$LAKE/t_in" --select id 2>/dev/null | ids)" = "$EXPECT" ]'

# ------------------------------------------------------------ mount reads
cat >"$WORK/lake.ini" <<EOF
[pqfs]
source = $LAKE
cache_dir = $WORK/cache
metadata_ttl = 0
EOF
start_pqfs "$WORK/pqfs.log" "$WORK/lake.ini" "$MNT"
PID=$PQFS_PID
for round in 1 2; do
    ls "$MNT" >"$WORK/root.ls"
    ls "$MNT/ev" >"$WORK/ev.ls"
    cat "$MNT/ev/data.csv" >"$WORK/ev.csv"
done
check "the root lists the table linked inside, not the one linked out: $(tr '\n' ' ' <"$WORK/root.ls")" \
    'grep -qx ev "$WORK/root.ls" && grep -qx t_in "$WORK/root.ls" && ! grep -q t_out "$WORK/root.ls"'
check "a table linked out is not there (ENOENT)" '[ "$(errno_of stat "$MNT/t_out/data.csv")" = ENOENT ]'
check "the table lists its partitions linked inside, not those linked out: $(tr '\n' ' ' <"$WORK/ev.ls")" \
    'grep -qx dt=2024-01-03 "$WORK/ev.ls" && grep -qx dt=2024-01-04 "$WORK/ev.ls" &&
     ! grep -q dt=2024-01-10 "$WORK/ev.ls" && ! grep -q dt=2024-01-11 "$WORK/ev.ls"'
check "data.csv has the rows of the links inside and none of those out (got $(ids <"$WORK/ev.csv"))" \
    '[ "$(ids <"$WORK/ev.csv")" = "$EXPECT" ]'
check "a table linked inside reads the same rows" '[ "$(ids <"$MNT/t_in/data.csv")" = "$EXPECT" ]'
check "a partition linked out holds no rows" '[ "$(ids <"$MNT/ev/dt=2024-01-10/data.csv")" = "" ]'
check "a partition linked inside is read normally" '[ "$(ids <"$MNT/ev/dt=2024-01-04/data.csv")" = "1 1 2 2 " ]'
check "one warning per link out, however often (and through whatever link) it is listed: $(grep -c 'out of the lake' "$WORK/pqfs.log") lines" \
    '[ "$(grep -c "symbolic link out of the lake" "$WORK/pqfs.log")" = 4 ] &&
     [ "$(grep "symbolic link out of the lake" "$WORK/pqfs.log" | sed "s/: a symbolic.*//" | sort -u | wc -l)" = 4 ]'

# ------------------------------------------------------------ mount writes
printf 'id,name\n7,new\n' >"$IN/small.csv"
before=$(everything)
check "cp into a partition linked out (relative): EPERM" \
    '[ "$(copy_errno "$IN/small.csv" "$MNT/ev/dt=2024-01-10/small.csv")" = EPERM ]'
check "cp into a partition linked out (absolute): EPERM" \
    '[ "$(copy_errno "$IN/small.csv" "$MNT/ev/dt=2024-01-11/small.csv")" = EPERM ]'
check "cp into a partition linked inside: EPERM (writes follow no link)" \
    '[ "$(copy_errno "$IN/small.csv" "$MNT/ev/dt=2024-01-03/small.csv")" = EPERM ]'
check "cp into a table linked inside: EPERM" \
    '[ "$(copy_errno "$IN/small.csv" "$MNT/t_in/dt=2024-01-01/small.csv")" = EPERM ]'
check "cp(1) into a partition linked out fails" '! cp "$IN/small.csv" "$MNT/ev/dt=2024-01-10/" 2>/dev/null'
check "the refused writes created nothing, in the lake or outside it" '[ "$(everything)" = "$before" ]'
check "the reason is in /.pqfs/errors" 'grep -q "symbolic link is on the path (writes follow none)" "$MNT/.pqfs/errors"'
check "cp into a real partition still writes" \
    'cp "$IN/small.csv" "$MNT/ev/dt=2024-01-01/" && [ -n "$(find "$LAKE/ev/dt=2024-01-01" -name "small-*.parquet")" ]'
check "cp into a new partition makes it" \
    'cp "$IN/small.csv" "$MNT/ev/dt=2024-01-20/" && [ -n "$(find "$LAKE/ev/dt=2024-01-20" -name "small-*.parquet")" ]'
check "nothing was written outside the lake" '[ "$(find "$OUT" -name "small-*" | wc -l)" = 0 ]'
stop_pqfs "$MNT" "$PID"

# ------------------------------------------------------------ temporary files never renamed
cat >"$WORK/stage.ini" <<EOF
[pqfs]
source = $LAKE
cache_dir = $WORK/cache-stage
EOF
PQFS_TEST_STAGED_TIMEOUT=2 start_pqfs "$WORK/pqfs-stage.log" "$WORK/stage.ini" "$MNT"
PID=$PQFS_PID
stage_files() { find "$WORK/cache-stage" -name 'stage-*' | wc -l; }
printf 'id,name\n8,parked\n' >"$MNT/ev/dt=2024-01-01/.parked.csv"
check "a closed temporary file is parked (it stats, its bytes wait in the cache)" \
    '[ "$(errno_of stat "$MNT/ev/dt=2024-01-01/.parked.csv")" = OK ] && [ "$(stage_files)" = 1 ]'
# Nothing touches the mount meanwhile: the discard comes by itself.
check "never renamed, it is discarded once its time is up, on an idle mount" 'wait_for 10 "[ \"\$(stage_files)\" = 0 ]"'
check "counted in /.pqfs/stats (staged_files_expired 1)" '[ "$(stat_val "$MNT" staged_files_expired)" = 1 ]'
check "renamed after that: ENOENT, and nothing lands" \
    '! mv "$MNT/ev/dt=2024-01-01/.parked.csv" "$MNT/ev/dt=2024-01-01/parked.csv" 2>/dev/null &&
     [ -z "$(find "$LAKE" -name "parked-*")" ]'
printf 'id,name\n9,renamed\n' >"$MNT/ev/dt=2024-01-01/.soon.csv"
check "renamed in time, it is written" \
    'mv "$MNT/ev/dt=2024-01-01/.soon.csv" "$MNT/ev/dt=2024-01-01/soon.csv" && [ -n "$(find "$LAKE" -name "soon-*.parquet")" ] &&
     [ "$(stat_val "$MNT" staged_files_expired)" = 1 ]'
stop_pqfs "$MNT" "$PID"

# ------------------------------------------------------------ a commit killed: the leftovers
# Big enough for its commit to take a while (about 2 s here).
echo id,name >"$IN/big.csv"
seq 1 4000000 | awk '{ print $1 ",n" ($1 % 977) "-x" ($1 * 7919 % 100003) }' >>"$IN/big.csv"
start_pqfs "$WORK/pqfs-killed.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache-killed"
PID=$PQFS_PID
cp "$IN/big.csv" "$MNT/ev/dt=2024-02-01/" 2>/dev/null &
CP=$!
tmp=$(stop_at_temporary "$LAKE/ev/dt=2024-02-01" "$PID")
kill -KILL "$PID"
wait "$CP" 2>/dev/null || true
fusermount3 -uz "$MNT" 2>/dev/null || true
wait "$PID" 2>/dev/null || true
check "the killed commit left its temporary ($tmp) and the partition directory it made" \
    '[ -n "$tmp" ] && [ -f "$tmp" ] && [ "$(ls -A "$LAKE/ev/dt=2024-02-01" | wc -l)" = 1 ]'
# swept MNT LOG: waits for the mount's sweep to be done.
swept() { wait_for 30 "grep -q 'swept the lake' '$1'"; }
PQFS_TEST_LEFTOVER_AGE=3600 start_pqfs "$WORK/pqfs-young.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache-killed"
PID=$PQFS_PID
check "a mount sweeps at start" 'swept "$WORK/pqfs-young.log"'
check "younger than the age, the temporary stays" \
    '[ -f "$tmp" ] && [ "$(stat_val "$MNT" leftover_temporaries_removed)" = 0 ]'
stop_pqfs "$MNT" "$PID"
sleep 2
PQFS_TEST_LEFTOVER_AGE=1 start_pqfs "$WORK/pqfs-old.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache-killed"
PID=$PQFS_PID
check "the next mount sweeps at start" 'swept "$WORK/pqfs-old.log"'
check "older than the age, the temporary and the empty partition directory are gone" \
    '[ ! -e "$tmp" ] && [ ! -e "$LAKE/ev/dt=2024-02-01" ]'
check "counted in /.pqfs/stats (1 temporary, 1 directory)" \
    '[ "$(stat_val "$MNT" leftover_temporaries_removed)" = 1 ] && [ "$(stat_val "$MNT" leftover_dirs_removed)" = 1 ]'
check "no temporary is left anywhere in the lake" '[ -z "$(temporaries "$LAKE")" ]'
check "the lake's other files are all there" '[ "$(ids <"$MNT/ev/dt=2024-01-01/data.csv")" = "1 1 2 2 7 9 " ]'
stop_pqfs "$MNT" "$PID"

# ------------------------------------------------------------ a live writer's temporary stays
start_pqfs "$WORK/pqfs-live.log" "$LAKE" "$MNT" -o "cache_dir=$WORK/cache-live"
LIVE=$PQFS_PID
cp "$IN/big.csv" "$MNT/ev/dt=2024-02-02/" 2>"$WORK/live-cp.err" &
CP=$!
tmp=$(stop_at_temporary "$LAKE/ev/dt=2024-02-02" "$LIVE" locked)
# Made old: only its writer's lock keeps it now.
[ -n "$tmp" ] && touch -d '-2 hours' "$tmp"
PQFS_TEST_LEFTOVER_AGE=1 start_pqfs "$WORK/pqfs-second.log" "$LAKE" "$WORK/second" -o "cache_dir=$WORK/cache-second"
SECOND=$PQFS_PID
check "a second mount of the lake sweeps at start" 'swept "$WORK/pqfs-second.log"'
check "the live writer's temporary ($tmp) is not swept, however old" \
    '[ -n "$tmp" ] && [ -f "$tmp" ] && [ "$(stat_val "$WORK/second" leftover_temporaries_removed)" = 0 ]'
kill -CONT "$LIVE"
cp_rc=0
wait "$CP" || cp_rc=$?
check "the writer, resumed, commits its file ($(cat "$WORK/live-cp.err"))" \
    '[ "$cp_rc" = 0 ] && [ -n "$(find "$LAKE/ev/dt=2024-02-02" -name "big-*.parquet")" ] && [ -z "$(temporaries "$LAKE")" ]'
check "its rows are all there" '[ "$(tail -n +2 "$MNT/ev/dt=2024-02-02/data.csv" | wc -l)" = 4000000 ]'
stop_pqfs "$WORK/second" "$SECOND"
stop_pqfs "$MNT" "$LIVE"

summary "mount.links"
