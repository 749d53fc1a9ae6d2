#!/usr/bin/env bash
# One Delta Lake table of ../shared/testdata/delta read through a real
# mount whose root is (a copy of) the table, against its expected files
# (testdata/delta/README.md), as tests/delta/table.sh reads it with pqtool:
#   - expected/TABLE.csv: data.csv has those rows (unordered), and so has
#     data.parquet (read back by pqtool);
#   - expected/TABLE@vN.csv: as_of=N/data.csv has those rows;
#   - expected/TABLE.refuse: data.csv fails with EIO, and /.pqfs/errors
#     names one of its lines (a reader feature).
# A known gap (tests/delta/table.sh's list) must fail with EIO and its
# reason, never show rows.
#   tests/delta/mount_table.sh BUILD_DIR TABLE_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: mount_table.sh BUILD_DIR TABLE_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
TABLE=${2%/}
# shellcheck source=../mount/lib.sh
. "$here/../mount/lib.sh"
mount_test_init
name=$(basename "$TABLE")
expected=$(dirname "$TABLE")/expected
[ -d "$TABLE/_delta_log" ] || skip "$TABLE is not a Delta table"

# The known gaps, as tests/delta/table.sh lists them (the words its
# refusal says).
gap=$(sed -n "s/^    \[$name\]=\"\(.*\)\"$/\1/p" "$here/table.sh")

cp -r "$TABLE" "$WORK/table"
MNT=$WORK/mnt
start_pqfs "$WORK/pqfs.log" "$WORK/table" "$MNT" -o "cache_dir=$WORK/cache,log_level=warn"
DAEMON=$PQFS_PID

# same WHAT EXPECTED FILE: FILE's rows are EXPECTED's (unordered).
same() {
    if python3 "$CSVCMP" "$2" "$3" --unordered >"$WORK/cmp.txt" 2>&1; then
        pass "$1"
    else
        fail "$1: rows differ from $(basename "$2"): $(head -n 5 "$WORK/cmp.txt")"
    fi
}

# refused WHAT WORDS...: data.csv fails with EIO, and /.pqfs/errors holds
# one of WORDS.
refused() {
    local what=$1 e w
    shift
    e=$(errno_of read "$MNT/data.csv")
    [ "$e" = EIO ] || { fail "$what: data.csv gives $e, not EIO"; return 1; }
    for w in "$@"; do
        if grep -qF -- "$w" "$MNT/.pqfs/errors"; then
            pass "$what"
            return 0
        fi
    done
    fail "$what: /.pqfs/errors names none of: $*; it says: $(tail -c 400 "$MNT/.pqfs/errors")"
    return 1
}

if [ -f "$expected/$name.refuse" ]; then
    mapfile -t features < <(grep -v '^[[:space:]]*$' "$expected/$name.refuse")
    refused "refusal names the feature" "${features[@]}"
elif [ -n "$gap" ]; then
    if cat "$MNT/data.csv" >"$WORK/out.csv" 2>/dev/null &&
        python3 "$CSVCMP" "$expected/$name.csv" "$WORK/out.csv" --unordered >/dev/null 2>&1; then
        xpass "$name reads through the mount"
    elif refused "known gap" "$gap"; then
        xfail "$name is refused: $gap"
    fi
else
    if cat "$MNT/data.csv" >"$WORK/out.csv" 2>"$WORK/err.txt"; then
        same "data.csv" "$expected/$name.csv" "$WORK/out.csv"
    else
        fail "data.csv: $(head -c 300 "$WORK/err.txt"); errors: $(tail -c 300 "$MNT/.pqfs/errors")"
    fi
    if "$PQTOOL" plan "$TABLE" 2>/dev/null | head -n 1 | grep -q ', 0 live files$'; then
        # No live file: no schema to write data.parquet with (as pqtool).
        check "data.parquet of a table without files fails" '[ "$(errno_of read "$MNT/data.parquet")" != OK ]'
    elif cp "$MNT/data.parquet" "$WORK/out.parquet" 2>"$WORK/err.txt"; then
        if ! "$PQTOOL" cat "$WORK/out.parquet" >"$WORK/outp.csv" 2>"$WORK/err.txt"; then
            fail "data.parquet does not read back: $(head -c 300 "$WORK/err.txt")"
        else
            same "data.parquet" "$expected/$name.csv" "$WORK/outp.csv"
        fi
    else
        fail "data.parquet: $(head -c 300 "$WORK/err.txt"); errors: $(tail -c 300 "$MNT/.pqfs/errors")"
    fi
    for v in "$expected/$name"@v*.csv; do
        [ -f "$v" ] || continue
        version=${v##*@v}
        version=${version%.csv}
        if cat "$MNT/as_of=$version/data.csv" >"$WORK/v.csv" 2>"$WORK/err.txt"; then
            same "as_of=$version/data.csv" "$v" "$WORK/v.csv"
        else
            fail "as_of=$version/data.csv: $(head -c 300 "$WORK/err.txt")"
        fi
    done
fi
stop_pqfs "$MNT" "$DAEMON"
summary "delta.mount.$name"
