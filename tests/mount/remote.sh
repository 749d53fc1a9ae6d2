#!/usr/bin/env bash
# Remote sources (SPEC sections 1, 2 and 7): the same lake mounted from a
# local directory, over HTTP from nginx (autoindex as JSON, and as HTML), and
# from an S3-compatible server (tests/mount/fake_s3.mjs: ListObjectsV2,
# ranged GETs, PUT, SigV4 checked, every 7th request answered 503 and every
# 5th GET cut off mid-body) must give the same bytes for every view (also
# over python3 -m http.server, which ignores byte ranges):
#   - listings, data.csv (partitions, where=, select=, limit=, a
#     percent-encoded partition value, the NULL partition), data.parquet,
#     schema.txt;
#   - HTTP is read-only: writes are EROFS; a file replaced on the server is
#     seen after metadata_ttl; basic auth from the URL, the password never
#     shown (log, mount table);
#   - S3: an object replaced after its listing fails the views that read it
#     (If-Match: EIO, logged), not a mix of versions;
#   - S3 takes writes: cp of a CSV lands as one PUT object (a large one as a
#     multipart upload, aborted when the write fails or starts over) and every view has
#     the rows; mkdir makes a table (S3 has no directories) whose first file
#     defines it;
#   - S3 virtual-hosted URLs (BUCKET.localhost) with a session token: reads
#     and a write; a wrong token fails the mount;
#   - a wrong S3 secret or an unknown HTTP prefix fails the mount, saying why;
#   - pqtool cat reads http:// and s3:// tables to the local answer.
#   tests/mount/remote.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: remote.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx is not installed"


# ------------------------------------------------------------ the lake
LAKE=$WORK/lake
python3 - "$WORK" <<'PY'
import os, sys
w = sys.argv[1]
os.makedirs(f"{w}/csv", exist_ok=True)
parts = [("2024-01-01", "eu"), ("2024-01-01", "new york"), ("2024-01-02", "eu"), ("2024-01-02", None)]
for k, (dt, region) in enumerate(parts):
    with open(f"{w}/csv/events-{k}.csv", "w") as f:
        f.write("id,name,amount,ts\n")
        for i in range(1500):
            n = k * 1500 + i
            amount = "" if n % 17 == 0 else f"{(n * 37) % 1000}.{n % 100:02d}"
            f.write(f'{n},"name {n % 23}, x",{amount},2024-01-0{1 + k // 2} {n % 24:02d}:00:00\n')
with open(f"{w}/csv/users.csv", "w") as f:
    f.write("user_id,country\n")
    for i in range(300):
        f.write(f"{i},{['DE', 'FR', 'US'][i % 3]}\n")
PY
enc() { python3 -c 'import sys, urllib.parse; v = sys.argv[1]; print("__HIVE_DEFAULT_PARTITION__" if v == "" else urllib.parse.quote(v, safe=""))' "$1"; }
k=0
for p in "2024-01-01 eu" "2024-01-01 new york" "2024-01-02 eu" "2024-01-02 "; do
    dt=${p%% *}
    region=${p#* }
    d="$LAKE/events/dt=$dt/region=$(enc "$region")"
    mkdir -p "$d"
    "$PQTOOL" write "$WORK/csv/events-$k.csv" "$d/part-0.parquet" --row-group-rows 500
    k=$((k + 1))
done
mkdir -p "$LAKE/users"
"$PQTOOL" write "$WORK/csv/users.csv" "$LAKE/users/users.parquet"
cat >"$WORK/tables.ini" <<EOF
[table events]
partitions = dt:date, region:string
EOF

VIEWS=(
    "events/data.csv"
    "events/dt=2024-01-02/data.csv"
    "events/dt=2024-01-01/region=new york/data.csv"
    "events/region=__HIVE_DEFAULT_PARTITION__/data.csv"
    "events/where=amount > 500 AND name LIKE 'name 1%'/select=id,amount,region/data.csv"
    "events/where=amount IS NULL/limit=7/data.csv"
    "events/region=eu/data.parquet"
    "events/schema.txt"
    "users/where=country = 'FR'/data.csv"
)
LISTED=("" "events" "events/dt=2024-01-01" "events/where=amount > 990")

# snapshot MNT OUT: every view's bytes and every listing, into OUT/.
snapshot() {
    local mnt=$1 out=$2 i
    mkdir -p "$out"
    for i in "${!VIEWS[@]}"; do cat "$mnt/${VIEWS[$i]}" >"$out/view-$i" 2>"$out/err-$i" || echo "cat failed" >>"$out/err-$i"; done
    for i in "${!LISTED[@]}"; do (cd "$mnt/${LISTED[$i]}" && ls) >"$out/ls-$i" 2>&1 || true; done
}
# same OUT1 OUT2 WHAT: every view and listing equal, failures named.
same() {
    local a=$1 b=$2 what=$3 i bad=()
    for i in "${!VIEWS[@]}"; do
        [ -s "$a/view-$i" ] && cmp -s "$a/view-$i" "$b/view-$i" || bad+=("${VIEWS[$i]}")
    done
    for i in "${!LISTED[@]}"; do cmp -s "$a/ls-$i" "$b/ls-$i" || bad+=("ls ${LISTED[$i]}"); done
    check "$what: every view and listing equals the local mount's${bad[*]:+ (differ: ${bad[*]})}" '[ ${#bad[@]} -eq 0 ]'
}

cat >"$WORK/local.ini" <<EOF
[pqfs]
source = $LAKE
cache_dir = $WORK/cache-local
$(cat "$WORK/tables.ini")
EOF
start_pqfs "$WORK/local.log" "$WORK/local.ini" "$WORK/mnt-local"
snapshot "$WORK/mnt-local" "$WORK/snap-local"
check "the local reference has rows in every view" \
    '[ "$(wc -l <"$WORK/snap-local/view-0")" = 6001 ] && [ "$(wc -l <"$WORK/snap-local/view-2")" = 1501 ] && [ "$(wc -l <"$WORK/snap-local/view-3")" = 1501 ] && [ "$(wc -l <"$WORK/snap-local/view-5")" = 8 ]'
stop_pqfs "$WORK/mnt-local" "$PQFS_PID"

# ------------------------------------------------------------ HTTP (nginx)
HTTP_PORT=$(free_port)
mkdir -p "$WORK/nginx"
echo 'alice:{PLAIN}s3cr@t' >"$WORK/nginx/users"
start_nginx "$HTTP_PORT" /json/ "
    location /json/ { alias $LAKE/; autoindex on; autoindex_format json; }
    location /html/ { alias $LAKE/; autoindex on; }
    location /moved/ { rewrite ^/moved/(.*)\$ /json/\$1 redirect; }
    location /auth/ { alias $LAKE/; autoindex on; autoindex_format json;
                      auth_basic \"lake\"; auth_basic_user_file $WORK/nginx/users; }"

for style in json html; do
    cat >"$WORK/http-$style.ini" <<EOF
[pqfs]
source = http://127.0.0.1:$HTTP_PORT/$style
cache_dir = $WORK/cache-$style
metadata_ttl = 1s
$(cat "$WORK/tables.ini")
EOF
    start_pqfs "$WORK/http-$style.log" "$WORK/http-$style.ini" "$WORK/mnt-$style"
    snapshot "$WORK/mnt-$style" "$WORK/snap-$style"
    same "$WORK/snap-local" "$WORK/snap-$style" "HTTP ($style listings)"
    check "HTTP ($style): the mount is read-only (EROFS)" \
        '! cp "$WORK/csv/users.csv" "$WORK/mnt-$style/users/" 2>"$WORK/err" && grep -q "Read-only file system" "$WORK/err"'
    reads=$(stat_val "$WORK/mnt-$style" source_read_requests)
    check "HTTP ($style): reads are counted in /.pqfs/stats ($reads requests)" '[ "${reads:-0}" -gt 0 ]'
    if [ "$style" = json ]; then
        # A file replaced on the server: the next open after the TTL has its rows.
        before=$(tail -n +2 "$WORK/mnt-$style/users/data.csv" | wc -l)
        head -101 "$WORK/csv/users.csv" >"$WORK/csv/users-100.csv"
        "$PQTOOL" write "$WORK/csv/users-100.csv" "$WORK/users.tmp.parquet"
        sleep 1.1 # a new mtime for nginx, whose listing gives seconds
        mv "$WORK/users.tmp.parquet" "$LAKE/users/users.parquet"
        sleep 1.2
        after=$(tail -n +2 "$WORK/mnt-$style/users/data.csv" | wc -l)
        check "HTTP: a file replaced on the server is read anew after metadata_ttl ($before then $after rows)" \
            '[ "$before" = 300 ] && [ "$after" = 100 ]'
        "$PQTOOL" write "$WORK/csv/users.csv" "$WORK/users.tmp.parquet"
        mv "$WORK/users.tmp.parquet" "$LAKE/users/users.parquet"
    fi
    if [ "$style" = json ]; then
        # Replaced after its listing (trusted for 60 s here), the same size:
        # the listed time goes with every GET (If-Unmodified-Since), so the
        # view fails instead of reading a mix of the two.
        stop_pqfs "$WORK/mnt-$style" "$PQFS_PID"
        sed -i 's/^metadata_ttl = 1s/metadata_ttl = 60s/' "$WORK/http-$style.ini"
        start_pqfs "$WORK/http-$style-2.log" "$WORK/http-$style.ini" "$WORK/mnt-$style"
        ls "$WORK/mnt-$style/users" >/dev/null
        sleep 1.1
        touch "$LAKE/users/users.parquet"
        check "HTTP: a file changed since its listing fails the view with EIO (If-Unmodified-Since)" \
            '[ "$(errno_of read "$WORK/mnt-$style/users/data.csv")" = EIO ] && grep -q "users.parquet: changed since it was listed (HTTP 412" "$WORK/mnt-$style/.pqfs/errors"'
    fi
    stop_pqfs "$WORK/mnt-$style" "$PQFS_PID"
done
# python3 -m http.server: an HTML index, and no byte ranges (every read is
# a 200 with the whole file, the range cut out of it as it streams by).
PY_PORT=$(free_port)
"$PYTHON" -m http.server "$PY_PORT" --bind 127.0.0.1 --directory "$LAKE" >"$WORK/pyhttp.log" 2>&1 &
DAEMONS+=("$!")
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PY_PORT/" >/dev/null 2>&1 && break; sleep 0.1; done
cat >"$WORK/http-py.ini" <<EOF
[pqfs]
source = http://127.0.0.1:$PY_PORT
cache_dir = $WORK/cache-py
$(cat "$WORK/tables.ini")
EOF
start_pqfs "$WORK/http-py.log" "$WORK/http-py.ini" "$WORK/mnt-py"
snapshot "$WORK/mnt-py" "$WORK/snap-py"
same "$WORK/snap-local" "$WORK/snap-py" "HTTP (python3 -m http.server: HTML index, no ranges)"
stop_pqfs "$WORK/mnt-py" "$PQFS_PID"

"$PQTOOL" cat "$LAKE/events" --where "amount < 100" --select id,amount,dt,region >"$WORK/pqtool-local.csv"
check "pqtool cat of an http:// table equals the local one" \
    '"$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events" --where "amount < 100" --select id,amount,dt,region >"$WORK/pqtool-http.csv" && cmp -s "$WORK/pqtool-local.csv" "$WORK/pqtool-http.csv"'
# A partition directory has its partition columns, as the local one does; a
# URL naming one .parquet object reads that file (pqtool meta too).
check "pqtool cat of an http:// partition directory equals the local one (partition columns included)" \
    '"$PQTOOL" cat "$LAKE/events/dt=2024-01-01" >"$WORK/pqtool-part-local.csv" && head -1 "$WORK/pqtool-part-local.csv" | grep -q ",dt,region$" &&
     "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events/dt=2024-01-01" | cmp -s - "$WORK/pqtool-part-local.csv"'
check "pqtool cat and meta of one http:// .parquet object equal the local file's" \
    '"$PQTOOL" cat "$LAKE/events/dt=2024-01-01/region=eu/part-0.parquet" --where "amount < 500" >"$WORK/pqtool-file-local.csv" &&
     "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events/dt=2024-01-01/region=eu/part-0.parquet" --where "amount < 500" | cmp -s - "$WORK/pqtool-file-local.csv" &&
     [ "$(wc -l <"$WORK/pqtool-file-local.csv")" -gt 10 ] &&
     "$PQTOOL" meta "http://127.0.0.1:$HTTP_PORT/json/events/dt=2024-01-01/region=eu/part-0.parquet" | grep -q "^row_groups: "'
# An http URL is percent-encoded: "x%20y.parquet" is the file "x y.parquet".
# (Under _single/, which no table discovery looks at.)
mkdir -p "$LAKE/_single"
cp "$LAKE/events/dt=2024-01-01/region=eu/part-0.parquet" "$LAKE/_single/x y.parquet"
check "pqtool cat of an http:// object whose URL encodes a space (%20) reads it" \
    '"$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/_single/x%20y.parquet" --where "amount < 500" | cmp -s - "$WORK/pqtool-file-local.csv"'
check "pqtool cat of a partition directory that does not exist: an error, not an empty answer" \
    '! "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events/dt=2099-01-01" >"$WORK/nodt.csv" 2>"$WORK/nodt.err" && [ ! -s "$WORK/nodt.csv" ] && [ "$(wc -l <"$WORK/nodt.err")" = 1 ]'
check "pqtool: a query string in an http URL is refused; %00 in a partition value too" \
    '! "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events?x=1" 2>&1 >/dev/null | grep -q "query string" &&
     ! "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events/dt=2024-01-01/region=eu%00x" 2>&1 >/dev/null | grep -q "%00"'
check "pqtool cat of a missing http:// .parquet object fails with one line naming it" \
    '! "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/json/events/nope.parquet" >/dev/null 2>"$WORK/nope.err" && [ "$(wc -l <"$WORK/nope.err")" = 1 ] && grep -q "nope.parquet" "$WORK/nope.err"'
check "HTTP: a lake behind a redirect (302 on every URL) reads the same" \
    '"$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/moved/events" --where "amount < 100" --select id,amount,dt,region >"$WORK/pqtool-moved.csv" && cmp -s "$WORK/pqtool-local.csv" "$WORK/pqtool-moved.csv"'
# Basic auth from the URL's user:password; the password is never shown (logs,
# the mount table, messages).
start_pqfs "$WORK/http-auth.log" "http://alice:s3cr%40t@127.0.0.1:$HTTP_PORT/auth" "$WORK/mnt-auth" \
    -o "cache_dir=$WORK/cache-auth"
check "HTTP: basic auth from the URL reads the lake" \
    'cat "$WORK/mnt-auth/users/where=country = '"'"'FR'"'"'/data.csv" >"$WORK/auth.csv" && cmp -s "$WORK/auth.csv" "$WORK/snap-local/view-8"'
check "HTTP: the password is not in the log or the mount table" \
    '! grep -q "s3cr" "$WORK/http-auth.log" && ! grep -q "s3cr" /proc/self/mounts && grep -q "http://127.0.0.1:$HTTP_PORT/auth" /proc/self/mounts'
check "HTTP: nor on the daemon's command line (ps), masked as alice:***@ (not its length)" \
    'tr "\0" " " </proc/$PQFS_PID/cmdline | grep -q "alice:\*\*\*@127" && ! grep -q "s3cr" /proc/$PQFS_PID/cmdline'
stop_pqfs "$WORK/mnt-auth" "$PQFS_PID"
check "pqtool meta of an object behind basic auth: read, and the password is not on stdout" \
    '"$PQTOOL" meta "http://alice:s3cr%40t@127.0.0.1:$HTTP_PORT/auth/users/users.parquet" >"$WORK/meta-auth.txt" &&
     grep -q "^file: http://127.0.0.1:$HTTP_PORT/auth/users/users.parquet$" "$WORK/meta-auth.txt" && ! grep -q "s3cr" "$WORK/meta-auth.txt"'
check "pqtool: a message that echoes a URL with credentials shows them as ***" \
    '! "$PQTOOL" meta "http://alice:s3cr%40t@127.0.0.1:$HTTP_PORT/auth/users/nope.parquet" 2>"$WORK/err" &&
     ! grep -q "s3cr" "$WORK/err" && grep -q "http://\*\*\*@127.0.0.1" "$WORK/err"'
check "HTTP: without the credentials the mount fails with 401" \
    '! "$PQFS" "http://127.0.0.1:$HTTP_PORT/auth" "$WORK/mnt-bad" -f 2>"$WORK/err" && grep -q "HTTP 401 not authorized" "$WORK/err"'
check "HTTP: a prefix the server does not have fails the mount, naming the status" \
    '! "$PQFS" "http://127.0.0.1:$HTTP_PORT/nowhere" "$WORK/mnt-bad" -f 2>"$WORK/err" && grep -q "HTTP 404" "$WORK/err"'

# ------------------------------------------------------------ S3 (fake server)
S3ROOT=$WORK/s3
mkdir -p "$S3ROOT"
cp -r "$LAKE" "$S3ROOT/lake"
start_fake_s3 s3 --fail-every 7 --drop-every 5 --complete-error-every 1 --reset-every 2
S3_PORT=$FAKE_S3_PORT
# s3_ini FILE SECRET [TOKEN]: a mount of the first server, path style; with
# a session token, of the virtual-hosted one (started below).
s3_ini() {
    local endpoint="http://127.0.0.1:$S3_PORT" style="path_style = true" token=""
    [ $# -lt 3 ] || { endpoint="http://localhost:$VHOST_PORT" style="" token="session_token = $3"; }
    cat >"$1" <<EOF
[pqfs]
source = s3://bkt/lake
cache_dir = $WORK/cache-s3${3:+-vhost}
metadata_ttl = 1s

[s3]
endpoint = $endpoint
$style
access_key_id = AKTEST
secret_access_key = $2
$token
$(cat "$WORK/tables.ini")

[table big]
row_group_rows = 50000
EOF
}
s3_ini "$WORK/s3.ini" SKTEST
start_pqfs "$WORK/s3-mount.log" "$WORK/s3.ini" "$WORK/mnt-s3"
snapshot "$WORK/mnt-s3" "$WORK/snap-s3"
same "$WORK/snap-local" "$WORK/snap-s3" "S3"
check "S3: requests were signed and checked, the injected 503s and cut connections retried" \
    'grep -q " 503 " "$WORK/s3.log" && ! grep -q " 403 " "$WORK/s3.log"'
check "S3: a listed file is opened without a request of its own (no HEAD: its size is the listing's)" \
    '! grep -q "^HEAD " "$WORK/s3.log" && grep -q "^GET " "$WORK/s3.log"'
check "S3: reads are ranged GETs" 'grep -q "^GET /bkt/lake/events/dt%3D2024-01-01/region%3Deu/part-0.parquet bytes=" "$WORK/s3.log"'

printf 'id,name,amount,ts\n90001,s3 row,12.50,2024-01-03 00:00:00\n90002,"q ""x""",,2024-01-03 01:00:00\n' >"$WORK/new.csv"
check "S3: cp into a new partition directory" 'cp "$WORK/new.csv" "$WORK/mnt-s3/events/dt=2024-01-03/region=eu/"'
obj=$(cd "$S3ROOT" && find lake/events/dt=2024-01-03 -name 'new-*.parquet')
check "S3: written as one PUT of lake/events/dt=2024-01-03/region=eu/new-<16 hex>.parquet" \
    '[ "$(echo "$obj" | grep -cE "^lake/events/dt=2024-01-03/region=eu/new-[0-9a-f]{16}\.parquet$")" = 1 ] && [ "$(grep -c "^PUT /bkt/lake/events/dt%3D2024-01-03/region%3Deu/new-" "$WORK/s3.log")" -ge 1 ]'
check "S3: every view has the rows (where=id > 90000)" \
    '[ "$(cat "$WORK/mnt-s3/events/where=id > 90000/select=id,name,amount,dt,region/data.csv")" = "$(printf "id,name,amount,dt,region\n90001,s3 row,12.5,2024-01-03,eu\n90002,\"q \"\"x\"\"\",,2024-01-03,eu")" ]'
check "S3: DuckDB reads the written object to the same rows" \
    '[ "$(node "$here/duck.mjs" sql "SELECT count(*) FROM read_parquet('"'"'$S3ROOT/$obj'"'"') WHERE id > 90000" 2>/dev/null | tail -1)" = 2 ]'
check "S3: mkdir makes a table, its first file defines it" \
    'mkdir "$WORK/mnt-s3/fresh" && ls "$WORK/mnt-s3" | grep -qx fresh && printf "k,v\n1,one\n2,two\n" >"$WORK/fresh.csv" && cp "$WORK/fresh.csv" "$WORK/mnt-s3/fresh/" && [ "$(cat "$WORK/mnt-s3/fresh/data.csv")" = "$(cat "$WORK/fresh.csv")" ]'
printf 'id,name,amount,ts\nnot a number,x,,\n' >"$WORK/bad.csv"
check "S3: bad input is EINVAL and leaves no object" \
    '! cp "$WORK/bad.csv" "$WORK/mnt-s3/events/dt=2024-01-04/region=eu/" 2>/dev/null && [ -z "$(cd "$S3ROOT" && find lake -name "bad-*")" ]'
# Part files larger than one 8 MiB part stream up as multipart uploads.
# Random base64 payloads barely compress: ~15 MB of Parquet, two parts or more.
# A late value that does not fit the sampled types makes the write start
# over, so the first upload (parts already sent) must be aborted.
python3 -c '
import base64, os, sys
with open(sys.argv[1], "w") as f:
    f.write("id,code,payload\n")
    for i in range(400000):
        f.write("%d,%s,%s\n" % (i, "x7" if i == 390000 else str(i % 1000), base64.b64encode(os.urandom(30)).decode()))
' "$WORK/big.csv"
pending_uploads() { curl -s "http://127.0.0.1:$S3_PORT/?fake-pending-uploads"; }
check "S3: a large file into a new table: one object, every row, types from all rows" \
    'mkdir "$WORK/mnt-s3/big" && cp "$WORK/big.csv" "$WORK/mnt-s3/big/" &&
     [ "$(cd "$S3ROOT" && find lake/big -type f | grep -cE "^lake/big/big-[0-9a-f]{16}\.parquet$")" = 1 ] &&
     [ "$(cd "$S3ROOT" && find lake/big -type f | wc -l)" = 1 ] &&
     [ "$(tail -n +2 "$WORK/mnt-s3/big/select=id/data.csv" | wc -l)" = 400000 ] && grep -q "^code,STRING" "$WORK/mnt-s3/big/schema.txt"'
big_obj=$(cd "$S3ROOT" && find lake/big -type f | head -1)
check "S3: it went up as a multipart upload (created, >= 2 parts, completed after an error document)" \
    '[ "$(grep -c "^POST /bkt/lake/big/big-.*?uploads " "$WORK/s3.log")" -ge 2 ] &&
     [ "$(grep -cE "^PUT /bkt/lake/big/big-.*partNumber=2&uploadId=" "$WORK/s3.log")" -ge 1 ] &&
     grep -qE "^POST /bkt/lake/big/big-.*uploadId=" "$WORK/s3.log"'
check "S3: the first pass's upload was aborted, no upload is left open" \
    'grep -qE "^DELETE /bkt/lake/big/big-.*uploadId=.* 204 " "$WORK/s3.log" && [ "$(pending_uploads)" = 0 ]'
check "S3: DuckDB reads the multipart object to the same rows" \
    '[ "$(node "$here/duck.mjs" sql "SELECT count(*) || '"'"'/'"'"' || count(DISTINCT payload) || '"'"'/'"'"' || max(code) FROM read_parquet('"'"'$S3ROOT/$big_obj'"'"')" 2>/dev/null | tail -1)" = "400000/400000/x7" ]'
python3 -c '
import sys
lines = open(sys.argv[1]).read().splitlines()
lines[-1] = "not a number," + lines[-1].split(",", 1)[1]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
' "$WORK/big.csv" "$WORK/big-bad.csv"
check "S3: a large file that fails at its last row: EINVAL, no object, the upload aborted" \
    '! cp "$WORK/big-bad.csv" "$WORK/mnt-s3/big/" 2>/dev/null && [ "$(cd "$S3ROOT" && find lake/big -type f | wc -l)" = 1 ] &&
     [ "$(pending_uploads)" = 0 ]'
stop_pqfs "$WORK/mnt-s3" "$PQFS_PID"

# An object replaced after its listing: the listed ETag goes with every GET
# (If-Match), so the view fails (EIO, the reason logged) instead of reading a
# mix of two versions; other views go on.
sed -i 's/^metadata_ttl = 1s/metadata_ttl = 60s/' "$WORK/s3.ini"
start_pqfs "$WORK/s3-mount2.log" "$WORK/s3.ini" "$WORK/mnt-s3"
ls "$WORK/mnt-s3/users" >/dev/null
"$PQTOOL" write "$WORK/csv/users-100.csv" "$WORK/users.tmp.parquet"
mv "$WORK/users.tmp.parquet" "$S3ROOT/lake/users/users.parquet"
check "S3: an object replaced since its listing fails the view with EIO" \
    '[ "$(errno_of read "$WORK/mnt-s3/users/data.csv")" = EIO ] && grep -q "users.parquet: changed since it was listed (HTTP 412" "$WORK/mnt-s3/.pqfs/errors"'
check "S3: the mount goes on serving other views" '[ "$(tail -n +2 "$WORK/mnt-s3/events/dt=2024-01-02/data.csv" | wc -l)" = 3000 ]'
stop_pqfs "$WORK/mnt-s3" "$PQFS_PID"
check "pqtool cat of an s3:// table (AWS_* environment) equals the local one" \
    'AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST "$PQTOOL" cat s3://bkt/lake/events --where "amount < 100 AND id < 90000" --select id,amount,dt,region >"$WORK/pqtool-s3.csv" && cmp -s "$WORK/pqtool-local.csv" "$WORK/pqtool-s3.csv"'

check "pqtool cat of an s3:// partition directory and of one s3:// object equal the local ones" \
    '(export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST &&
      "$PQTOOL" cat s3://bkt/lake/events/dt=2024-01-01 | cmp -s - "$WORK/pqtool-part-local.csv" &&
      "$PQTOOL" cat s3://bkt/lake/events/dt=2024-01-01/region=eu/part-0.parquet --where "amount < 500" | cmp -s - "$WORK/pqtool-file-local.csv")'

# One partition of a remote table lists only its own path: no listing of
# another dt=, no footer of another partition's file.
: >"$WORK/s3.log"
# An endpoint with credentials in it is refused without echoing them (they
# went into every error message, and the bucket was put before them).
check "an s3 endpoint with user:password@ is refused, the password not printed" \
    '! AWS_ENDPOINT_URL=http://u:endpointpw@127.0.0.1:$S3_PORT "$PQTOOL" cat s3://bkt/lake/events 2>"$WORK/ep.err" >/dev/null &&
     grep -q "credentials (user:password@) is not supported" "$WORK/ep.err" && ! grep -q endpointpw "$WORK/ep.err"'
check "pqtool cat s3://.../dt=2024-01-02 lists and reads nothing of the other partitions" \
    'AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST "$PQTOOL" cat s3://bkt/lake/events/dt=2024-01-02 >"$WORK/pqtool-s3-part.csv" &&
     "$PQTOOL" cat "$LAKE/events/dt=2024-01-02" | cmp -s - "$WORK/pqtool-s3-part.csv" &&
     ! grep -E "dt%3D2024-01-0[13]" "$WORK/s3.log" | grep -q . && grep -q "dt%3D2024-01-02" "$WORK/s3.log"'

# The table's schema is the union of every file's (schema evolution, as
# DuckDB's union_by_name reads a table), so pqtool reads the footer of every
# file, those the partition values rule out too (their rows it never reads;
# a partition path, above, lists and reads only its partition's files).
: >"$WORK/s3.log"
check "pqtool over S3 with a partition filter gives the local rows (every footer read once for the schema)" \
    'AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST "$PQTOOL" cat s3://bkt/lake/events --where "dt = '"'"'2024-01-02'"'"'" >"$WORK/pqtool-s3-dt.csv" &&
     "$PQTOOL" cat "$LAKE/events" --where "dt = '"'"'2024-01-02'"'"'" | cmp -s - "$WORK/pqtool-s3-dt.csv" &&
     [ "$(grep -E "^GET /bkt/lake/events/.*\.parquet .*bytes=" "$WORK/s3.log" | grep -c "dt%3D2024-01-02")" -ge 1 ]'

# Footers over a slow network are fetched many at a time, not one per scan
# thread: a second server adds 30 ms to every request and logs how many were
# open at once; a one-thread point lookup must have had several in flight.
start_fake_s3 s3-slow --delay-ms 30 --part-delay-ms 300
SLOW_PORT=$FAKE_S3_PORT
check "pqtool over S3 with --threads 1 fetches footers several at a time (most in flight >= 4)" \
    'AWS_ENDPOINT_URL=http://127.0.0.1:$SLOW_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST "$PQTOOL" cat s3://bkt/lake/events --where "id = 5" --threads 1 >"$WORK/pqtool-s3-slow.csv" && [ "$(sed -n "s/.* inflight=\([0-9]*\)$/\1/p" "$WORK/s3-slow.log" | sort -n | tail -1)" -ge 4 ] && [ "$(wc -l <"$WORK/pqtool-s3-slow.csv")" = 2 ]'
check "pqtool over S3 lists the table's root once (no separate probe of the bucket)" \
    '[ "$(grep -c "^GET /bkt?delimiter=%2F&list-type=2&prefix=lake%2Fevents%2F " "$WORK/s3-slow.log")" = 1 ]'
: >"$WORK/s3-slow.log"
check "pqtool over S3 with --threads 1 reads several row groups at a time (data reads in flight >= 3)" \
    'AWS_ENDPOINT_URL=http://127.0.0.1:$SLOW_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST "$PQTOOL" cat s3://bkt/lake/events --where "amount < 100 AND id < 90000" --select id,amount,dt,region --threads 1 >"$WORK/pqtool-s3-slow.csv" &&
     cmp -s "$WORK/pqtool-local.csv" "$WORK/pqtool-s3-slow.csv" &&
     [ "$(grep " bytes=4-" "$WORK/s3-slow.log" | sed -n "s/.* inflight=\([0-9]*\)$/\1/p" | sort -n | tail -1)" -ge 3 ]'

# The parts of a multipart upload go up several at a time: the slow server
# holds every part 300 ms more, far longer than the writer takes to fill the
# next, so with one part in flight no two parts would ever be open together.
S3_PORT_SAVED=$S3_PORT S3_PORT=$SLOW_PORT
s3_ini "$WORK/s3-slow.ini" SKTEST
S3_PORT=$S3_PORT_SAVED
start_pqfs "$WORK/s3-slow-mount.log" "$WORK/s3-slow.ini" "$WORK/mnt-s3-slow"
: >"$WORK/s3-slow.log"
check "S3: a multipart upload's parts go up together (parts in flight >= 2), the object whole" \
    'mkdir "$WORK/mnt-s3-slow/big2" && cp "$WORK/big.csv" "$WORK/mnt-s3-slow/big2/" &&
     [ "$(grep -E "^PUT /bkt/lake/big2/.*partNumber=" "$WORK/s3-slow.log" | sed -n "s/.* parts=\([0-9]*\)$/\1/p" | sort -n | tail -1)" -ge 2 ] &&
     [ "$(tail -n +2 "$WORK/mnt-s3-slow/big2/select=id/data.csv" | wc -l)" = 400000 ] &&
     [ "$(curl -s "http://127.0.0.1:$SLOW_PORT/?fake-pending-uploads")" = 0 ]'
stop_pqfs "$WORK/mnt-s3-slow" "$PQFS_PID"

# Virtual-hosted URLs (BUCKET.HOST/KEY: the default without path_style, as
# AWS wants) with a session token (temporary credentials): a third server
# routes by the Host header and checks the token.
start_fake_s3 s3-vhost --session-token TOKTEST
VHOST_PORT=$FAKE_S3_PORT
s3_ini "$WORK/s3-vhost.ini" SKTEST TOKTEST
start_pqfs "$WORK/s3-vhost-mount.log" "$WORK/s3-vhost.ini" "$WORK/mnt-vhost"
check "S3 virtual-hosted, with a session token: a view equals the local answer" \
    'cat "$WORK/mnt-vhost/events/where=amount < 100 AND id < 90000/select=id,amount,dt,region/data.csv" >"$WORK/vhost.csv" && cmp -s "$WORK/pqtool-local.csv" "$WORK/vhost.csv"'
printf 'id,name,amount,ts\n90101,vhost,1,\n' >"$WORK/vhost-new.csv"
check "S3 virtual-hosted: a write lands" \
    'cp "$WORK/vhost-new.csv" "$WORK/mnt-vhost/events/dt=2024-01-05/region=eu/" && [ -n "$(cd "$S3ROOT" && find lake/events/dt=2024-01-05 -name "vhost-new-*.parquet")" ]'
stop_pqfs "$WORK/mnt-vhost" "$PQFS_PID"
check "S3 virtual-hosted: keys without the bucket in the path, every request signed with the token" \
    'grep -q "^GET /lake/events/" "$WORK/s3-vhost.log" && grep -q "^PUT /lake/events/dt%3D2024-01-05/" "$WORK/s3-vhost.log" &&
     ! grep -q "^[A-Z]* /bkt/" "$WORK/s3-vhost.log" && ! grep -q " 403 " "$WORK/s3-vhost.log"'
s3_ini "$WORK/s3-vhost-bad.ini" SKTEST EXPIRED
check "S3: a wrong session token fails the mount with the server's reason" \
    '! "$PQFS" "$WORK/s3-vhost-bad.ini" "$WORK/mnt-bad" -f 2>"$WORK/err" && grep -q "HTTP 403 access denied, InvalidToken" "$WORK/err"'

# A transfer that stalls (the server never answers a range GET) holds no
# shutdown: SIGTERM cancels it, and the daemon is gone in seconds, not after
# the stall timeout (30 s a try, 4 tries).
start_fake_s3 s3-stall --stall-range-gets
S3_PORT_SAVED=$S3_PORT S3_PORT=$FAKE_S3_PORT
s3_ini "$WORK/s3-stall.ini" SKTEST
S3_PORT=$S3_PORT_SAVED
start_pqfs "$WORK/s3-stall-mount.log" "$WORK/s3-stall.ini" "$WORK/mnt-stall"
timeout 60 cat "$WORK/mnt-stall/events/where=id < 5/data.csv" >/dev/null 2>&1 &
stall_reader=$!
sleep 1.5
t0=$(date +%s.%N)
kill -TERM "$PQFS_PID"
for _ in $(seq 200); do kill -0 "$PQFS_PID" 2>/dev/null || break; sleep 0.05; done
t1=$(date +%s.%N)
check "SIGTERM while a remote read stalls: the daemon exits within 5 s, no mount left" \
    '! kill -0 "$PQFS_PID" 2>/dev/null && [ "$(echo "$t1 - $t0 < 5" | bc)" = 1 ] && ! is_mounted "$WORK/mnt-stall"'
kill "$stall_reader" 2>/dev/null || true; wait "$stall_reader" 2>/dev/null || true
! is_mounted "$WORK/mnt-stall" || fusermount3 -uz "$WORK/mnt-stall"
kill -9 "$PQFS_PID" 2>/dev/null || true

s3_ini "$WORK/s3-bad.ini" WRONG
check "S3: a wrong secret fails the mount with the server's reason" \
    '! "$PQFS" "$WORK/s3-bad.ini" "$WORK/mnt-bad" -f 2>"$WORK/err" && grep -q "HTTP 403 access denied, SignatureDoesNotMatch" "$WORK/err"'

summary mount.remote
