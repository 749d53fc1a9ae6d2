#!/usr/bin/env bash
# The writer against the parquet-testing corpus: `pqtool rewrite` re-encodes
# every file that pqtool reads (the same schema, rows and row groups), with
# several writer settings, or copies its chunks byte for byte (--copy), or
# cuts its rows into row groups of 7 across the original's (--row-group-rows:
# nested rows cut whole, readers skipping into a row group), and then
#   - pqtool reads the rewrite to exactly the CSV it reads from the original;
#   - DuckDB reads the same rows from the rewrite as from the original
#     (tests/writer/duck_same.mjs; with the default settings and with small
#     pages, when node and tools/js/node_modules are there).
# And `pqtool cat FILE [--limit 7] --format parquet` (the scan's Parquet
# output, data.parquet's) must read back to the same CSV as the view.  A schema
# the writer cannot describe (an unknown logical type) must be refused with one
# "pqtool: ..." line.
#   tests/writer/run.sh PQTOOL WORKDIR
set -u
pqtool=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${PQFS_SHARED_DIR:-$root/../shared}
data=$shared/testdata/parquet-testing/data
[ -d "$data" ] || { echo "skipped: no corpus at $data"; exit 77; }
duck=1
if ! command -v node >/dev/null || [ ! -d "$root/tools/js/node_modules/@duckdb" ]; then
    duck=0
    echo "note: node or tools/js/node_modules missing: DuckDB comparisons skipped"
fi
rm -rf "$work"
mkdir -p "$work"

# name|pqtool rewrite options|compare with DuckDB
variants=(
    "default||1"
    "small-pages|--codec snappy --page-size 2048 --batch-rows 100|1"
    "plain|--codec none --no-dictionary --page-size 700|0"
    "gzip-nostats|--codec gzip:9 --no-statistics|0"
    "copy|--copy|1"
    "reshaped|--row-group-rows 7 --batch-rows 3|1"
)

pass=0 fail=0 refused=0
failed() { echo "FAIL: $*"; fail=$((fail + 1)); }
duck_pairs=()   # original, rewrite: compared by one DuckDB process at the end
for f in "$data"/*.parquet; do
    name=$(basename "$f" .parquet)
    # Only files pqtool reads: the others are the corpus tests' business.
    "$pqtool" cat "$f" -o "$work/$name.orig.csv" 2>/dev/null || { rm -f "$work/$name.orig.csv"; continue; }
    for v in "${variants[@]}"; do
        IFS='|' read -r vname opts with_duck <<<"$v"
        out=$work/$name.$vname.parquet
        # shellcheck disable=SC2086
        if ! "$pqtool" rewrite "$f" -o "$out" $opts 2>"$work/err"; then
            if [ "$(wc -l <"$work/err")" -eq 1 ] && grep -qE '^pqtool: .*(this writer does not know|the schema cannot be written)' "$work/err"; then
                refused=$((refused + 1))
            else
                failed "$name ($vname): rewrite failed: $(head -c 300 "$work/err")"
            fi
            continue
        fi
        [ -e "$out" ] || { failed "$name ($vname): no output"; continue; }
        if ! "$pqtool" cat "$out" -o "$work/$name.$vname.csv" 2>"$work/err"; then
            failed "$name ($vname): pqtool cannot read the rewrite: $(head -c 300 "$work/err")"
            continue
        fi
        if ! cmp -s "$work/$name.orig.csv" "$work/$name.$vname.csv"; then
            failed "$name ($vname): pqtool reads other rows from the rewrite"
            diff "$work/$name.orig.csv" "$work/$name.$vname.csv" | head -5
            continue
        fi
        [ "$duck" = 1 ] && [ "$with_duck" = 1 ] && duck_pairs+=("$f" "$out")
        pass=$((pass + 1))
        rm -f "$work/$name.$vname.csv"
    done
done
# The scan's Parquet output (data.parquet): every file as a whole view (row
# groups copied) and its first 7 rows (--limit: a cut row group re-encoded),
# read back by pqtool to the CSV of the same view.
views=0
for f in "$data"/*.parquet; do
    name=$(basename "$f" .parquet)
    [ -f "$work/$name.orig.csv" ] || continue
    for lim in "" 7; do
        out=$work/$name.view$lim.parquet
        if ! "$pqtool" cat "$f" ${lim:+--limit "$lim"} --format parquet -o "$out" 2>"$work/err"; then
            # (a logical type the writer does not know is written as its
            # physical type, as the CSV view shows it: never refused here)
            if [ "$(wc -l <"$work/err")" -eq 1 ] && grep -qE '^pqtool: .*the schema cannot be written' "$work/err"; then
                refused=$((refused + 1))
            else
                failed "$name (cat --format parquet ${lim:+--limit $lim}): $(head -c 300 "$work/err")"
            fi
            continue
        fi
        if [ -n "$lim" ]; then head -n $((lim + 1)) "$work/$name.orig.csv" >"$work/$name.want.csv"
        else cp "$work/$name.orig.csv" "$work/$name.want.csv"; fi
        if ! "$pqtool" cat "$out" -o "$work/$name.view.csv" 2>"$work/err"; then
            failed "$name (cat --format parquet ${lim:+--limit $lim}): pqtool cannot read it: $(head -c 300 "$work/err")"
        elif ! cmp -s "$work/$name.want.csv" "$work/$name.view.csv"; then
            failed "$name (cat --format parquet ${lim:+--limit $lim}): other rows than the CSV view"
        else
            views=$((views + 1))
        fi
    done
done
echo "views: $views data.parquet outputs read back to their CSV view"

# A whole view's row groups are copied, not re-encoded: the scan says so, and
# every chunk keeps its codec and compressed size.
for name in alltypes_tiny_pages data_index_bloom_encoding_stats nested_lists.snappy floating_orders_nan_count; do
    f=$data/$name.parquet
    rgs=$("$pqtool" meta "$f" | sed -n 's/^row_groups: //p')
    got=$("$pqtool" cat "$f" --format parquet -o "$work/$name.whole.parquet" --stats 2>&1 |
        sed -n 's/^parquet: \([0-9]*\) row groups copied.*/\1/p')
    chunks() { "$pqtool" meta "$1" | grep -oE '^  [^ ]+: [A-Z_0-9]+ values=[0-9]+ compressed=[0-9]+'; }
    if [ "$got" != "$rgs" ]; then failed "$name: ${got:-0} of $rgs row groups copied in its whole view"
    elif [ "$(chunks "$f")" != "$(chunks "$work/$name.whole.parquet")" ]; then failed "$name: copied chunks differ in codec or size"
    fi
done

# The rewrite is the same bytes at any thread count (row groups in order).
f=$data/alltypes_tiny_pages.parquet
"$pqtool" rewrite "$f" -o "$work/t1.parquet" --threads 1 --page-size 2048 &&
    "$pqtool" rewrite "$f" -o "$work/t2.parquet" --threads 2 --page-size 2048 &&
    "$pqtool" rewrite "$data/floating_orders_nan_count.parquet" -o "$work/n1.parquet" --threads 1 --page-size 64 &&
    "$pqtool" rewrite "$data/floating_orders_nan_count.parquet" -o "$work/n3.parquet" --threads 3 --page-size 64 ||
    failed "rewrite with --threads failed"
cmp -s "$work/t1.parquet" "$work/t2.parquet" && cmp -s "$work/n1.parquet" "$work/n3.parquet" ||
    failed "rewrite: other bytes at another thread count"
[ "$views" -gt 100 ] || failed "too few data.parquet views ($views)"

if [ ${#duck_pairs[@]} -gt 0 ]; then
    node "$here/duck_same.mjs" "${duck_pairs[@]}" >"$work/duck.log" 2>&1
    n_bad=$(grep -vcE ': (same [0-9]+|original unreadable by DuckDB|DuckDB refuses both alike)' "$work/duck.log")
    if [ "$n_bad" -ne 0 ]; then
        grep -vE ': (same [0-9]+|original unreadable by DuckDB|DuckDB refuses both alike)' "$work/duck.log" | sed 's/^/FAIL: DuckDB: /'
        fail=$((fail + n_bad))
        pass=$((pass - n_bad))
    fi
    echo "DuckDB: $(grep -c ': same ' "$work/duck.log") of $((${#duck_pairs[@]} / 2)) rewrites read to the same rows as their originals"
fi
echo "writer: $pass rewrites agree, $refused refused (schema not encodable), $fail failed"
[ "$pass" -gt 100 ] || { echo "FAIL: too few files rewritten ($pass)"; exit 1; }
[ "$fail" -eq 0 ]
