#!/usr/bin/env bash
# Remote part files replaced while a scan reads them, behind servers that
# ignore If-Match and If-Unmodified-Since (SPEC 8: a view never mixes two
# versions of the lake).  A part file of ten row groups is replaced, same
# size and layout (only its values differ, so the old footer's offsets read
# the new bytes cleanly), between two ranged reads of one scan: the server
# itself does it after the Nth GET of that object (fake_s3.mjs's
# ?fake-replace; fault_proxy.mjs in front of nginx and python's
# http.server), and its log shows both versions served.  Every reply's ETag
# and Last-Modified must be the listed ones, so:
#   - the view (a mount's data.csv and data.parquet, pqtool cat) fails with
#     EIO naming the file, with no row of the new version in what it gave;
#   - read again, it fails again or has the new version whole: the result
#     cache never serves a mixed result; after metadata_ttl it is the new
#     version whole;
# on fake_s3 told to ignore preconditions (S3: the ETag; a file no listing
# showed, by its HEAD's), python's http.server (Last-Modified; it takes no
# precondition and no range), and nginx behind a proxy that drops them
# (ETag from an HTML index's HEAD, Last-Modified from a JSON listing); and
# s3rver itself, with the AWS SDK putting the new version, when tools/js
# has them.
#   tests/mount/remote_replaced.sh BUILD_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: remote_replaced.sh BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$1" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
mount_test_init
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx is not installed"
command -v curl >/dev/null 2>&1 || skip "curl is not installed"

# ------------------------------------------------------------ two versions
# 200,000 rows of (id, v) in ten row groups, uncompressed and plain, so the
# versions (v = 1, v = 2) differ in the values' bytes only.
ROWS=200000
TTL=1
python3 - "$WORK" "$ROWS" <<'PY'
import sys
w, n = sys.argv[1], int(sys.argv[2])
for v in (1, 2):
    with open(f"{w}/ver-{v}.csv", "w") as f:
        f.write("id,v\n")
        f.writelines(f"{i},{v}\n" for i in range(n))
PY
for v in 1 2; do
    "$PQTOOL" write "$WORK/ver-$v.csv" "$WORK/ver-$v.parquet" --codec none --no-dictionary --no-statistics \
        --row-group-rows 20000
done
check "the two versions have the same size and layout, different values" \
    '[ "$(stat -c %s "$WORK/ver-1.parquet")" = "$(stat -c %s "$WORK/ver-2.parquet")" ] && ! cmp -s "$WORK/ver-1.parquet" "$WORK/ver-2.parquet" &&
     "$PQTOOL" meta "$WORK/ver-1.parquet" | grep -q "^row_groups: 10$"'
T_OLD=1704067200 # the old version's mtime; the new one's is a minute later
# place DIR: DIR/part-0.parquet, the old version.
place() {
    mkdir -p "$1"
    cp "$WORK/ver-1.parquet" "$1/part-0.parquet"
    touch -d "@$T_OLD" "$1/part-0.parquet"
}
# next_version: a fresh copy of the new version (a rename consumes it),
# beside the lakes so that it renames over their files; prints its path.
N_NEXT=0
next_version() {
    N_NEXT=$((N_NEXT + 1))
    cp "$WORK/ver-2.parquet" "$WORK/next-$N_NEXT.parquet"
    touch -d "@$((T_OLD + 60))" "$WORK/next-$N_NEXT.parquet"
    echo "$WORK/next-$N_NEXT.parquet"
}

# v_has CSV VALUE: some row has v = VALUE.  whole_new CSV: every row, all new.
v_has() { awk -F, -v v="$2" 'NR > 1 && $2 == v { found = 1 } END { exit !found }' "$1"; }
whole_new() { [ "$(tail -n +2 "$1" | wc -l)" = "$ROWS" ] && v_has "$1" 2 && ! v_has "$1" 1; }
# view_csv|view_parquet VIEW OUT: reads a mount's view as CSV into OUT, its
# errors into OUT.err, the outcome in READ_RC.
view_csv() { READ_RC=0; cat "$1" >"$2" 2>"$2.err" || READ_RC=$?; }
view_parquet() {
    READ_RC=0
    : >"$2"
    cp "$1" "$2.parquet" 2>"$2.err" || READ_RC=$?
    [ "$READ_RC" != 0 ] || "$PQTOOL" cat "$2.parquet" >"$2" 2>>"$2.err" || READ_RC=$?
}
# straddled LOG FROM URLPATH FIELD: in LOG past line FROM, the replacement was
# made and GETs of URLPATH were answered with two identities (FIELD etag= or lm=).
straddled() {
    tail -n +"$(($2 + 1))" "$1" >"$WORK/log-part"
    grep -q "^REPLACED " "$WORK/log-part" &&
        [ "$(grep -F "GET $3 " "$WORK/log-part" | grep -o " $4[^ ]*" | sort -u | wc -l)" -ge 2 ]
}

# replaced_view WHAT HOW MNT TABLE LOG URLPATH FIELD ARM...: ARM (a command)
# arms the replacement, then MNT/TABLE/data.{csv,parquet} (HOW csv or
# parquet) is read three times: during, right after, and after the TTL.
replaced_view() {
    local what=$1 how=$2 mnt=$3 table=$4 log=$5 url=$6 field=$7 mark file
    shift 7
    file=data.csv
    [ "$how" = csv ] || file=data.parquet
    mark=$(wc -l <"$log")
    "$@" >/dev/null
    view_$how "$mnt/$table/$file" "$WORK/$table-1"
    check "$what: $file of a part file replaced between two reads of its scan fails with EIO" \
        '[ "$READ_RC" != 0 ] && grep -q "Input/output error" "$WORK/$table-1.err"'
    check "$what ($file): the replacement landed between two ranged reads of the object (two versions in the server's log)" \
        'straddled "$log" "$mark" "$url" "$field"'
    check "$what ($file): no row of the new version in what was read" '! v_has "$WORK/$table-1" 2'
    check "$what ($file): .pqfs/errors names the file, changed since it was listed" \
        'grep -q "$table/part-0.parquet: changed since it was listed" "$mnt/.pqfs/errors"'
    view_$how "$mnt/$table/$file" "$WORK/$table-2"
    check "$what ($file): read again, no mixed result from the result cache (EIO again, or the new version whole)" \
        '{ [ "$READ_RC" != 0 ] && grep -q "Input/output error" "$WORK/$table-2.err" && ! v_has "$WORK/$table-2" 2; } || whole_new "$WORK/$table-2"'
    sleep "$TTL.5"
    view_$how "$mnt/$table/$file" "$WORK/$table-3"
    check "$what ($file): after metadata_ttl, the new version whole" '[ "$READ_RC" = 0 ] && whole_new "$WORK/$table-3"'
}

# replaced_pqtool WHAT URL TABLE LOG URLPATH FIELD ARM...: the same through
# pqtool cat URL (with PQTOOL_ENV), then a second run.
PQTOOL_ENV=()
replaced_pqtool() {
    local what=$1 url=$2 table=$3 log=$4 path=$5 field=$6 mark rc=0
    shift 6
    mark=$(wc -l <"$log")
    "$@" >/dev/null
    env "${PQTOOL_ENV[@]}" "$PQTOOL" cat "$url" >"$WORK/$table-1" 2>"$WORK/$table-1.err" || rc=$?
    check "$what: pqtool cat of a part file replaced between two reads of its scan fails, naming the file" \
        '[ "$rc" != 0 ] && grep -q "$table/part-0.parquet: changed since it was listed" "$WORK/$table-1.err"'
    check "$what (pqtool): the replacement landed between two ranged reads of the object (two versions in the server's log)" \
        'straddled "$log" "$mark" "$path" "$field"'
    check "$what (pqtool): no row of the new version in what it wrote" '! v_has "$WORK/$table-1" 2'
    rc=0
    env "${PQTOOL_ENV[@]}" "$PQTOOL" cat "$url" >"$WORK/$table-2" 2>"$WORK/$table-2.err" || rc=$?
    check "$what (pqtool): run again, the new version whole" '[ "$rc" = 0 ] && whole_new "$WORK/$table-2"'
}

# ------------------------------------------------------------ S3 (fake_s3, If-Match ignored)
S3ROOT=$WORK/s3
for t in t_warm t_csv t_parquet t_tool t_one; do place "$S3ROOT/lake/$t"; done
start_fake_s3 s3 --ignore-preconditions
S3_PORT=$FAKE_S3_PORT
# arm_s3 KEY: the object KEY replaced after its 2nd GET from now.
arm_s3() {
    curl -sfG "http://127.0.0.1:$S3_PORT/" -d fake-replace --data-urlencode "key=$1" -d after=2 \
        --data-urlencode "from=$(next_version)"
}
cat >"$WORK/s3.ini" <<EOF
[pqfs]
source = s3://bkt/lake
cache_dir = $WORK/cache-s3
metadata_ttl = ${TTL}s

[s3]
endpoint = http://127.0.0.1:$S3_PORT
path_style = true
access_key_id = AKTEST
secret_access_key = SKTEST
EOF
start_pqfs "$WORK/pqfs-s3.log" "$WORK/s3.ini" "$WORK/mnt-s3"
# (Another table: a complete result is served again, whatever the server
# holds, until the listing is older than metadata_ttl.)
check "S3: the old version reads whole" \
    'cat "$WORK/mnt-s3/t_warm/data.csv" >"$WORK/s3-before.csv" && [ "$(tail -n +2 "$WORK/s3-before.csv" | wc -l)" = "$ROWS" ] &&
     v_has "$WORK/s3-before.csv" 1 && ! v_has "$WORK/s3-before.csv" 2'
for how in csv parquet; do
    replaced_view "S3 (If-Match ignored)" "$how" "$WORK/mnt-s3" "t_$how" "$WORK/s3.log" \
        "/bkt/lake/t_$how/part-0.parquet" etag= arm_s3 "lake/t_$how/part-0.parquet"
done
stop_pqfs "$WORK/mnt-s3" "$PQFS_PID"
PQTOOL_ENV=(AWS_ENDPOINT_URL="http://127.0.0.1:$S3_PORT" AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST)
replaced_pqtool "S3 (If-Match ignored)" s3://bkt/lake/t_tool t_tool "$WORK/s3.log" /bkt/lake/t_tool/part-0.parquet etag= \
    arm_s3 lake/t_tool/part-0.parquet
# One object by its URL: never listed, its HEAD says what it is.
replaced_pqtool "S3, one object (identity from its HEAD)" s3://bkt/lake/t_one/part-0.parquet t_one "$WORK/s3.log" \
    /bkt/lake/t_one/part-0.parquet etag= arm_s3 lake/t_one/part-0.parquet
check "S3: the HEAD-sized object was read with If-Match on its HEAD's ETag (HEADs, no listing of it)" \
    'grep -q "^HEAD /bkt/lake/t_one/part-0.parquet " "$WORK/s3.log" && ! grep -q "prefix=lake%2Ft_one" "$WORK/s3.log"'

# The ETag rules (docs/conformance.md): one is kept and compared whole,
# however long; a weak one (W/"...") is compared but never sent as If-Match,
# which a server compares strongly (so it would refuse every read); a reply
# without the ETag the listing gave fails, as it cannot be told from a
# changed object.
S3ROOT=$WORK/s3-forms
for t in t_long t_weak t_noetag; do place "$S3ROOT/lake/$t"; done
start_fake_s3 s3-long --ignore-preconditions --etag-form long
S3_PORT=$FAKE_S3_PORT
PQTOOL_ENV=(AWS_ENDPOINT_URL="http://127.0.0.1:$S3_PORT" AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST)
replaced_pqtool "S3, 300-character ETags" s3://bkt/lake/t_long t_long "$WORK/s3-long.log" /bkt/lake/t_long/part-0.parquet etag= \
    arm_s3 lake/t_long/part-0.parquet
start_fake_s3 s3-weak --etag-form weak
S3_PORT=$FAKE_S3_PORT
PQTOOL_ENV=(AWS_ENDPOINT_URL="http://127.0.0.1:$S3_PORT" AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST)
check "S3, weak ETags, If-Match compared strongly: the table reads whole (no If-Match on a weak tag)" \
    'env "${PQTOOL_ENV[@]}" "$PQTOOL" cat s3://bkt/lake/t_weak >"$WORK/weak-0.csv" 2>"$WORK/weak-0.err" &&
     [ "$(tail -n +2 "$WORK/weak-0.csv" | wc -l)" = "$ROWS" ] && ! grep -q " 412 " "$WORK/s3-weak.log"'
replaced_pqtool "S3, weak ETags" s3://bkt/lake/t_weak t_weak "$WORK/s3-weak.log" /bkt/lake/t_weak/part-0.parquet etag= \
    arm_s3 lake/t_weak/part-0.parquet
start_fake_s3 s3-noetag --no-etag-on-get
check "S3, a GET reply without the listed ETag: pqtool fails, naming the file" \
    '! AWS_ENDPOINT_URL="http://127.0.0.1:$FAKE_S3_PORT" AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST "$PQTOOL" cat s3://bkt/lake/t_noetag >"$WORK/noetag.csv" 2>"$WORK/noetag.err" &&
     grep -q "t_noetag/part-0.parquet: the reply has no ETag, the listing gave \"" "$WORK/noetag.err"'

# s3rver itself (tools/js devDependency), which ignores If-Match, with the
# AWS SDK putting the new version mid-scan.
if [ -d "$root/tools/js/node_modules/s3rver" ] && [ -d "$root/tools/js/node_modules/@aws-sdk/client-s3" ]; then
    for t in s_csv s_tool; do place "$WORK/s3rver-lake/$t"; done
    mkdir -p "$WORK/s3rver-store"
    start_listener s3rver env NODE_NO_WARNINGS=1 node "$here/s3rver_lake.mjs" --dir "$WORK/s3rver-store" \
        --lake "$WORK/s3rver-lake" --log "$WORK/s3rver.log"
    S3RVER_PORT=$LISTEN_PORT
    arm_s3rver() {
        curl -sfG "http://127.0.0.1:$S3RVER_PORT/" -d s3rver-replace --data-urlencode "key=$1" -d after=2 \
            --data-urlencode "from=$(next_version)"
    }
    sed -e "s#^endpoint = .*#endpoint = http://127.0.0.1:$S3RVER_PORT#" -e "s#^access_key_id = .*#access_key_id = S3RVER#" \
        -e "s#^secret_access_key = .*#secret_access_key = S3RVER#" -e "s#cache-s3#cache-s3rver#" "$WORK/s3.ini" >"$WORK/s3rver.ini"
    start_pqfs "$WORK/pqfs-s3rver.log" "$WORK/s3rver.ini" "$WORK/mnt-s3rver"
    replaced_view "s3rver, the AWS SDK replacing" csv "$WORK/mnt-s3rver" s_csv "$WORK/s3rver.log" \
        /bkt/lake/s_csv/part-0.parquet etag= arm_s3rver lake/s_csv/part-0.parquet
    stop_pqfs "$WORK/mnt-s3rver" "$PQFS_PID"
    PQTOOL_ENV=(AWS_ENDPOINT_URL="http://127.0.0.1:$S3RVER_PORT" AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER)
    replaced_pqtool "s3rver, the AWS SDK replacing" s3://bkt/lake/s_tool s_tool "$WORK/s3rver.log" \
        /bkt/lake/s_tool/part-0.parquet etag= arm_s3rver lake/s_tool/part-0.parquet
else
    echo "note: s3rver or @aws-sdk/client-s3 missing in tools/js/node_modules (tools/setup-deps.sh): its cases skipped"
fi

# ------------------------------------------------------------ HTTP
HLAKE=$WORK/http-lake
for t in py_csv py_parquet py_tool ng_csv ng_tool ngj_tool; do place "$HLAKE/$t"; done
# arm_proxy PORT URLPATH FILE: FILE replaced after URLPATH's 2nd GET through
# the proxy at PORT.
arm_proxy() {
    curl -sfG "http://127.0.0.1:$1/" -d fault-replace --data-urlencode "path=$2" -d after=2 \
        --data-urlencode "from=$(next_version)" --data-urlencode "to=$3"
}
http_ini() {
    cat >"$1" <<EOF
[pqfs]
source = $2
cache_dir = $WORK/cache-$3
metadata_ttl = ${TTL}s
EOF
}

# python3 -m http.server: Last-Modified, no ETag, no preconditions, no
# ranges (each read is the whole file, cut as it streams by).  The proxy in
# front only replaces the file.
PY_PORT=$(free_port)
"$PYTHON" -m http.server "$PY_PORT" --bind 127.0.0.1 --directory "$HLAKE" >"$WORK/pyhttp.log" 2>&1 &
DAEMONS+=("$!")
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PY_PORT/" >/dev/null 2>&1 && break; sleep 0.1; done
start_listener proxy-py node "$here/fault_proxy.mjs" --origin "http://127.0.0.1:$PY_PORT" --log "$WORK/proxy-py.log"
PROXY_PY=$LISTEN_PORT
http_ini "$WORK/py.ini" "http://127.0.0.1:$PROXY_PY" py
start_pqfs "$WORK/pqfs-py.log" "$WORK/py.ini" "$WORK/mnt-py"
for how in csv parquet; do
    replaced_view "python http.server (Last-Modified)" "$how" "$WORK/mnt-py" "py_$how" "$WORK/proxy-py.log" \
        "/py_$how/part-0.parquet" lm= arm_proxy "$PROXY_PY" "/py_$how/part-0.parquet" "$HLAKE/py_$how/part-0.parquet"
done
stop_pqfs "$WORK/mnt-py" "$PQFS_PID"
PQTOOL_ENV=()
replaced_pqtool "python http.server (Last-Modified)" "http://127.0.0.1:$PROXY_PY/py_tool" py_tool "$WORK/proxy-py.log" \
    /py_tool/part-0.parquet lm= arm_proxy "$PROXY_PY" /py_tool/part-0.parquet "$HLAKE/py_tool/part-0.parquet"

# nginx (ETag and Last-Modified, preconditions honoured) behind a proxy that
# drops them: an HTML index (a HEAD per file gives the ETag) and a JSON one
# (times only).
NG_PORT=$(free_port)
start_nginx "$NG_PORT" /json/ "
    location /html/ { alias $HLAKE/; autoindex on; }
    location /json/ { alias $HLAKE/; autoindex on; autoindex_format json; }"
start_listener proxy-ng node "$here/fault_proxy.mjs" --origin "http://127.0.0.1:$NG_PORT" --drop-preconditions \
    --log "$WORK/proxy-ng.log"
PROXY_NG=$LISTEN_PORT
check "nginx itself honours If-Match (412); through the proxy it is dropped (206)" \
    '[ "$(curl -s -o /dev/null -w "%{http_code}" -H "If-Match: \"x\"" -r 0-3 "http://127.0.0.1:$NG_PORT/html/ng_csv/part-0.parquet")" = 412 ] &&
     [ "$(curl -s -o /dev/null -w "%{http_code}" -H "If-Match: \"x\"" -r 0-3 "http://127.0.0.1:$PROXY_NG/html/ng_csv/part-0.parquet")" = 206 ]'
http_ini "$WORK/ng.ini" "http://127.0.0.1:$PROXY_NG/html" ng
start_pqfs "$WORK/pqfs-ng.log" "$WORK/ng.ini" "$WORK/mnt-ng"
replaced_view "nginx, If-Match dropped (ETag)" csv "$WORK/mnt-ng" ng_csv "$WORK/proxy-ng.log" \
    /html/ng_csv/part-0.parquet etag= arm_proxy "$PROXY_NG" /html/ng_csv/part-0.parquet "$HLAKE/ng_csv/part-0.parquet"
check "nginx (HTML index): the reads were refused by the ETag" 'grep -q "ng_csv/part-0.parquet: changed since it was listed (ETag " "$WORK/mnt-ng/.pqfs/errors"'
stop_pqfs "$WORK/mnt-ng" "$PQFS_PID"
replaced_pqtool "nginx, If-Match dropped (ETag)" "http://127.0.0.1:$PROXY_NG/html/ng_tool" ng_tool "$WORK/proxy-ng.log" \
    /html/ng_tool/part-0.parquet etag= arm_proxy "$PROXY_NG" /html/ng_tool/part-0.parquet "$HLAKE/ng_tool/part-0.parquet"
replaced_pqtool "nginx JSON listing, If-Unmodified-Since dropped (Last-Modified)" "http://127.0.0.1:$PROXY_NG/json/ngj_tool" \
    ngj_tool "$WORK/proxy-ng.log" /json/ngj_tool/part-0.parquet lm= \
    arm_proxy "$PROXY_NG" /json/ngj_tool/part-0.parquet "$HLAKE/ngj_tool/part-0.parquet"
check "nginx (JSON listing): the read was refused by Last-Modified" 'grep -q "changed since it was listed (Last-Modified " "$WORK/ngj_tool-1.err"'

summary mount.remote_replaced
