#!/usr/bin/env bash
# One conformance-corpus file: usage check_file.sh PQTOOL FILE CSVCMP
#  - with expected/NAME.csv: pqtool must render it and csvcmp must accept it;
#  - otherwise: render, or fail with exactly one line "pqtool: ..." and a
#    non-zero exit;
#  - always: no crash (signal), no sanitizer report.
set -u
pqtool=$1 file=$2 csvcmp=$3
name=$(basename "$file" .parquet)
expected=$(dirname "$file")/../expected/$name.csv
override=$(dirname "$0")/overrides/$name.csv
[ -f "$override" ] && expected=$override
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$pqtool" cat "$file" -o "$tmp/out.csv" 2>"$tmp/err"
rc=$?
if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer' "$tmp/err"; then
    echo "FAIL: sanitizer report"; cat "$tmp/err"; exit 1
fi
if [ $rc -ge 128 ]; then
    echo "FAIL: killed by signal $((rc - 128))"; cat "$tmp/err"; exit 1
fi
if [ -f "$expected" ]; then
    if [ $rc -ne 0 ]; then
        echo "FAIL: exit $rc but an expected CSV exists"; cat "$tmp/err"; exit 1
    fi
    python3 "$csvcmp" "$expected" "$tmp/out.csv" || { echo "FAIL: output differs"; exit 1; }
    echo "ok: matches expected"
    exit 0
fi
if [ $rc -eq 0 ]; then
    echo "ok: rendered ($(wc -l < "$tmp/out.csv") lines; no expected CSV)"
    exit 0
fi
lines=$(wc -l < "$tmp/err")
if [ "$lines" -ne 1 ] || ! grep -q '^pqtool: ' "$tmp/err"; then
    echo "FAIL: error output is not one 'pqtool: ' line:"; cat "$tmp/err"; exit 1
fi
echo "ok: refused: $(cat "$tmp/err")"
exit 0
