#!/usr/bin/env bash
# Delta Lake tables read by pqtool over S3 (tests/mount/fake_s3.mjs) and
# over HTTP (nginx autoindex as JSON: the listings jansson parses) give the
# rows of expected/TABLE.csv, as locally: every table of
# ../shared/testdata/delta that table.sh reads (its known gaps and refusals
# left out), --version N for each expected/TABLE@vN.csv, and a refusal named
# the same way.  Servers on 127.0.0.1 only, ended by the EXIT trap.
#   tests/delta/remote.sh PQTOOL DELTA_DIR CSVCMP
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: remote.sh PQTOOL DELTA_DIR CSVCMP" >&2; exit 2; }
PQTOOL=$1 DELTA=$(cd "$2" && pwd) CSVCMP=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../mount/lib.sh
. "$here/../mount/lib.sh" # skip, fail, free_port, start_listener, start_nginx
[ -d "$DELTA/simple_table/_delta_log" ] || skip "no $DELTA"
command -v node >/dev/null || skip "no node (fake_s3.mjs)"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx is not installed"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pqfs-delta-remote.XXXXXX")
DAEMONS=()
cleanup() {
    for p in "${DAEMONS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${DAEMONS[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
PASSES=0 FAILS=0

# S3: one bucket over the test data (read only).
start_listener s3 node "$here/../mount/fake_s3.mjs" --root "$DELTA" --bucket bkt --access-key AKTEST \
    --secret-key SKTEST
S3_PORT=$LISTEN_PORT
[ -n "$S3_PORT" ] || { echo "FAIL: fake_s3 did not start: $(cat "$WORK/s3.err")"; exit 1; }

# HTTP: nginx, JSON listings.
HTTP_PORT=$(free_port)
start_nginx "$HTTP_PORT" /delta/ "
    location /delta/ { alias $DELTA/; autoindex on; autoindex_format json; }"

s3cat() {
    AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST \
        AWS_REGION=us-east-1 "$PQTOOL" cat "s3://bkt/$@"
}
httpcat() { "$PQTOOL" cat "http://127.0.0.1:$HTTP_PORT/delta/$@"; }

# compare HOW WHAT EXPECTED ARGS...
compare() {
    local how=$1 what=$2 exp=$3
    shift 3
    if ! "$how" "$@" >"$WORK/out.csv" 2>"$WORK/err.txt"; then
        fail "$what: exit non-zero: $(head -c 300 "$WORK/err.txt")"
    elif python3 "$CSVCMP" "$exp" "$WORK/out.csv" --unordered >"$WORK/cmp.txt" 2>&1; then
        PASSES=$((PASSES + 1))
    else
        fail "$what: rows differ: $(head -n 3 "$WORK/cmp.txt")"
    fi
}

n=0
for t in "$DELTA"/*/; do
    name=$(basename "$t")
    [ -d "$t/_delta_log" ] && [ -f "$DELTA/expected/$name.csv" ] || continue
    # The tables table.sh counts as known gaps are refused here too.
    "$PQTOOL" cat "$t" >/dev/null 2>&1 || continue
    n=$((n + 1))
    compare s3cat "s3 $name" "$DELTA/expected/$name.csv" "$name"
    compare httpcat "http $name" "$DELTA/expected/$name.csv" "$name"
    for v in "$DELTA/expected/$name"@v*.csv; do
        [ -f "$v" ] || continue
        version=${v##*@v}
        version=${version%.csv}
        compare s3cat "s3 $name --version $version" "$v" "$name" --version "$version"
        compare httpcat "http $name --version $version" "$v" "$name" --version "$version"
    done
done
[ "$n" -ge 10 ] || fail "only $n tables read locally"
if s3cat spark-variant-stable-feature-checkpoint >/dev/null 2>"$WORK/err.txt" || ! grep -qF "'variantType'" "$WORK/err.txt"; then
    fail "s3: spark-variant-stable-feature-checkpoint is not refused naming variantType: $(head -c 300 "$WORK/err.txt")"
else
    PASSES=$((PASSES + 1))
fi

echo "delta.remote: $PASSES passed, $FAILS failed ($n tables over S3 and HTTP)"
[ "$FAILS" -eq 0 ]
