#!/usr/bin/env bash
# `pqtool write` (CSV to Parquet):
#   - corpus round trip: every flat corpus file's CSV view, written with the
#     file's own schema (--schema), reads back to the same CSV bytes; DuckDB
#     reads the same rows from the written file as from the original. Files
#     with nested columns are refused with one line.
#   - inference: every corpus CSV view written without a schema reads back to
#     the same values (csvcmp).
#   - a CSV that leaves out a nested column of its schema writes it NULL.
#   - a generated CSV with every inferred type and the awkward cases: the types
#     inferred; DuckDB parses the CSV with those types to the same rows;
#     --row-group-rows cuts row groups; --threads 1 and 3 write the same bytes;
#     --sort-by sorts (stable, NULLs last) and records sorting_columns;
#     writer options reach the file (codec, bloom filter).
#   - bad input: exit 1, one line naming the file, line and column, and no
#     output file (nor a temporary one) left behind.
#   tests/writer/csv.sh PQTOOL WORKDIR
set -u
pqtool=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${PQFS_SHARED_DIR:-$root/../shared}
data=$shared/testdata/parquet-testing/data
csvcmp=$shared/tools/csvcmp.py
duck=1
if ! command -v node >/dev/null || [ ! -d "$root/tools/js/node_modules/@duckdb" ]; then
    duck=0
    echo "note: node or tools/js/node_modules missing: DuckDB comparisons skipped"
fi
rm -rf "$work"
mkdir -p "$work"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
failed() { echo "FAIL: $*"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok; else failed "$1"; fi; }

# ---------------------------------------------------------------- corpus
if [ -d "$data" ]; then
    same=0 refused=0 inferred=0 duck_pairs=()
    for f in "$data"/*.parquet; do
        name=$(basename "$f" .parquet)
        "$pqtool" cat "$f" -o "$work/$name.csv" 2>/dev/null || { rm -f "$work/$name.csv"; continue; }
        out=$work/$name.w.parquet
        if "$pqtool" write "$work/$name.csv" "$out" --schema "$f" 2>"$work/err"; then
            if "$pqtool" cat "$out" -o "$work/$name.w.csv" 2>"$work/err" && cmp -s "$work/$name.csv" "$work/$name.w.csv"; then
                same=$((same + 1))
                duck_pairs+=("$f" "$out")
            else
                failed "$name: the written file does not read back to the same CSV: $(head -c 300 "$work/err")"
            fi
        elif [ "$(wc -l <"$work/err")" -eq 1 ] && grep -qE "^pqtool: $work/$name.csv: (column .*: its type cannot be written from CSV|line 1: column .* is nested \(a list, map or struct\): CSV cannot hold it)" "$work/err"; then
            refused=$((refused + 1))
        else
            failed "$name: write failed: $(head -c 300 "$work/err")"
        fi
        if "$pqtool" write "$work/$name.csv" "$work/$name.i.parquet" 2>"$work/err" &&
            "$pqtool" cat "$work/$name.i.parquet" -o "$work/$name.i.csv" 2>>"$work/err" &&
            python3 "$csvcmp" "$work/$name.csv" "$work/$name.i.csv" >"$work/cmp" 2>&1; then
            inferred=$((inferred + 1))
        else
            failed "$name: inferred write: $(head -c 300 "$work/err") $(head -c 300 "$work/cmp")"
        fi
    done
    echo "corpus: $same round trips with the file's schema, $refused refused (nested), $inferred with inferred types"
    check "at least 40 corpus round trips (got $same)" '[ "$same" -ge 40 ]'
    check "at least 50 inferred round trips (got $inferred)" '[ "$inferred" -ge 50 ]'
    if [ "$duck" = 1 ]; then
        node "$here/duck_same.mjs" "${duck_pairs[@]}" >"$work/duck.log" 2>&1
        n_same=$(grep -c ': same \|DuckDB refuses both alike\|original unreadable' "$work/duck.log")
        echo "corpus: DuckDB reads the same rows from $n_same of $((${#duck_pairs[@]} / 2)) as from the originals"
        # int96_from_spark holds an INT96 past the nanosecond range, which DuckDB
        # wraps when it reads the original (see its .md); the written file holds
        # the value normalized, so DuckDB must parse the CSV to its rows instead.
        grep -v ': same \|DuckDB refuses both alike\|original unreadable' "$work/duck.log" >"$work/duck.bad"
        known=$work/int96_from_spark.w.parquet
        if grep -q "^$known: " "$work/duck.bad"; then
            node "$here/duck_csv.mjs" "$work/int96_from_spark.csv" "$known" >>"$work/duck.log" 2>&1
            check "DuckDB parses int96_from_spark's CSV to the written rows" 'grep -q "^$known: same 6$" "$work/duck.log"'
            grep -v "^$known: " "$work/duck.bad" >"$work/duck.bad2"
            mv "$work/duck.bad2" "$work/duck.bad"
        fi
        check "DuckDB reads the corpus round trips alike: $(head -3 "$work/duck.bad")" '[ ! -s "$work/duck.bad" ]'
    fi
else
    echo "note: no corpus at $data: corpus round trips skipped"
fi

# ---------------------------------------------------------------- generated
g=$work/g.csv
python3 "$here/gen_csv.py" "$g" 30000 7
check "write the generated CSV" '"$pqtool" write "$g" "$work/g.parquet" --row-group-rows 7000 2>"$work/err"'
"$pqtool" meta "$work/g.parquet" >"$work/g.meta" 2>&1
schema=$(sed -n '/^schema:/,/^columns:/p' "$work/g.meta" | tr -s ' ' | tr '\n' ';')
check "inferred types ($schema)" '[ "$schema" = "schema:; id: INT64; k: INT64; name: STRING; price: DOUBLE; ok: BOOLEAN; day: DATE; ts: TIMESTAMP(MICROS); tsz: TIMESTAMP(MICROS,UTC); tsn: TIMESTAMP(NANOS); empty: STRING;columns:;" ]'
check "30000 rows in 5 row groups" 'grep -q "^rows: 30000$" "$work/g.meta" && grep -q "^row_groups: 5$" "$work/g.meta"'
check "zstd by default, statistics and page index written" 'grep -q "id: ZSTD .*min=0 max=6999.*column_index=.*offset_index=" "$work/g.meta"'
"$pqtool" cat "$work/g.parquet" -o "$work/g.back.csv" 2>"$work/err"
check "reads back to the same values" 'python3 "$csvcmp" "$g" "$work/g.back.csv" >"$work/cmp" 2>&1'
if [ "$duck" = 1 ]; then
    check "DuckDB parses the CSV to the same rows: $(node "$here/duck_csv.mjs" "$g" "$work/g.parquet" 2>&1 | tee "$work/duck_g.log")" \
        'grep -q ": same 30000$" "$work/duck_g.log"'
fi
"$pqtool" write "$g" "$work/t1.parquet" --threads 1 --row-group-rows 4000 2>/dev/null
"$pqtool" write "$g" "$work/t3.parquet" --threads 3 --row-group-rows 4000 2>/dev/null
check "the same bytes at 1 and 3 threads" 'cmp -s "$work/t1.parquet" "$work/t3.parquet"'

# Sorted: by k then ts, stable, NULLs last; sorting_columns recorded.
check "write --sort-by" '"$pqtool" write "$g" "$work/s.parquet" --sort-by k,ts --row-group-rows 10000 2>"$work/err"'
"$pqtool" meta "$work/s.parquet" >"$work/s.meta" 2>&1
check "every row group records sorting_columns 1,6" '[ "$(grep -c "^row group .* sorted_by=1,6$" "$work/s.meta")" -eq 3 ]'
"$pqtool" cat "$work/s.parquet" -o "$work/s.csv" 2>/dev/null
sorted_by_k_ts() { # SRC.csv GOT.csv: GOT is SRC sorted by k, ts (NULLs last), ties in input order
    python3 - "$1" "$2" <<"EOF"
import csv, sys
src = list(csv.DictReader(open(sys.argv[1], newline="")))
got = list(csv.DictReader(open(sys.argv[2], newline="")))
def key(r):
    k = r["k"]
    return (k == "", int(k) if k else 0, r["ts"] == "", r["ts"], int(r["id"]))
want = sorted(src, key=key)
ok = len(got) == len(src) and [r["id"] for r in got] == [r["id"] for r in want]
sys.exit(0 if ok else 1)
EOF
}
check "rows sorted by k, ts (NULLs last), ties in input order, none lost" 'sorted_by_k_ts "$g" "$work/s.csv"'

# A Parquet file reshaped, as a Parquet write into a table with sort_by and
# row_group_rows is: its rows cut into other row groups, and sorted.
row_groups() { "$pqtool" meta "$1" | grep "^row group" | sed -E "s/.* rows=([0-9]+) .*sorted_by=(.*)$/\1:\2/; s/.* rows=([0-9]+) .*/\1/" | tr "\n" " "; }
check "rewrite --row-group-rows 9000 of row groups of 4000: 9000 9000 9000 3000, the same rows in order" \
    '"$pqtool" rewrite "$work/t1.parquet" -o "$work/rg.parquet" --row-group-rows 9000 2>"$work/err" &&
     [ "$(row_groups "$work/rg.parquet")" = "9000 9000 9000 3000 " ] &&
     "$pqtool" cat "$work/rg.parquet" | cmp -s - "$work/g.back.csv"'
check "rewrite --sort-by k,ts --row-group-rows 9000: row groups 9000 9000 9000 3000 with sorting_columns 1,6" \
    '"$pqtool" rewrite "$work/t1.parquet" -o "$work/rs.parquet" --sort-by k,ts --row-group-rows 9000 2>"$work/err" &&
     [ "$(row_groups "$work/rs.parquet")" = "9000:1,6 9000:1,6 9000:1,6 3000:1,6 " ]'
"$pqtool" cat "$work/rs.parquet" -o "$work/rs.csv" 2>/dev/null
check "the rewritten rows: sorted by k, ts (NULLs last), ties in input order, none lost" 'sorted_by_k_ts "$g" "$work/rs.csv"'
check "rewrite --sort-by of a column that is not there: one line naming it" \
    '! "$pqtool" rewrite "$work/t1.parquet" -o "$work/bad.parquet" --sort-by nope 2>"$work/err" &&
     [ "$(wc -l <"$work/err")" = 1 ] && grep -q "sort_by: no column .nope." "$work/err" && [ ! -e "$work/bad.parquet" ]'
if [ -f "$data/list_columns.parquet" ]; then
    check "rewrite --sort-by of a file with a repeated column: refused, naming it" \
        '! "$pqtool" rewrite "$data/list_columns.parquet" -o "$work/bad.parquet" --sort-by int64_list 2>"$work/err" &&
         grep -q "sort_by: column .* is repeated" "$work/err"'
fi

# Many sort keys (no fixed cap; a rewrite once refused past 64): 65 keys
# where only the last one differs, by CSV write and by rewrite, order rows
# by it, and all 65 are recorded.
python3 - "$work/k65.csv" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write(",".join("c%d" % i for i in range(65)) + ",id\n")
    for i in range(40):
        f.write(",".join(["1"] * 64) + ",%d,%d\n" % ((i * 7) % 40, i))
EOF
keys65=$(python3 -c 'print(",".join("c%d" % i for i in range(65)))')
sorted65() { "$pqtool" cat "$1" --select c64 2>/dev/null | tail -n +2 | tr '\n' ' '; }
want65=$(seq 0 39 | tr '\n' ' ')
rec65=$(seq -s, 0 64)
"$pqtool" write "$work/k65.csv" "$work/k65u.parquet" 2>/dev/null
check "write --sort-by of 65 keys sorts by the 65th and records all 65" \
    '"$pqtool" write "$work/k65.csv" "$work/k65w.parquet" --sort-by "$keys65" 2>"$work/err" &&
     [ "$(sorted65 "$work/k65w.parquet")" = "$want65" ] && [ "$(row_groups "$work/k65w.parquet")" = "40:$rec65 " ]'
check "rewrite --sort-by of 65 keys sorts by the 65th and records all 65" \
    '"$pqtool" rewrite "$work/k65u.parquet" -o "$work/k65r.parquet" --sort-by "$keys65" 2>"$work/err" &&
     [ "$(sorted65 "$work/k65r.parquet")" = "$want65" ] && [ "$(row_groups "$work/k65r.parquet")" = "40:$rec65 " ]'

# INTERVAL prints as DuckDB prints it (no time part when it is zero, unless
# that is all there is), compared with DuckDB's own CSV of the file.
if [ "$duck" = 1 ]; then
    node "$root/tests/mount/duck.mjs" sql "COPY (SELECT * FROM (VALUES (1, INTERVAL '1 day'), (2, INTERVAL 0 SECOND),
        (3, INTERVAL '1 year 2 months 3 days 04:05:06.789'), (4, INTERVAL '14 months'), (5, INTERVAL '1.5 seconds'),
        (6, NULL), (7, INTERVAL '2 days 00:00:00.001')) t(id, iv)) TO '$work/iv.parquet' (FORMAT parquet)" >/dev/null 2>&1
    node "$root/tests/mount/duck.mjs" sql "COPY (SELECT * FROM '$work/iv.parquet') TO '$work/iv_duck.csv' (HEADER)" >/dev/null 2>&1
    check "INTERVAL text as DuckDB's (1 day, 00:00:00, 1 year 2 months)" \
        '"$pqtool" cat "$work/iv.parquet" >"$work/iv.csv" && grep -qx "1,1 day" "$work/iv.csv" && python3 "$csvcmp" "$work/iv_duck.csv" "$work/iv.csv" >/dev/null'
fi

# A schema with nested columns takes a CSV that leaves them out: they are
# written NULL (list_columns: two LIST columns, no flat one, so a row id is
# added to a copy of its schema by DuckDB).
if [ "$duck" = 1 ] && [ -f "$data/list_columns.parquet" ]; then
    node "$root/tests/mount/duck.mjs" sql "COPY (SELECT 1::BIGINT AS id, [1, 2]::BIGINT[] AS l, {'a': 1::INTEGER} AS st) TO '$work/nested_schema.parquet' (FORMAT parquet)" >/dev/null 2>&1
    printf 'id\n7\n8\n' >"$work/no_nested.csv"
    check "a CSV without the nested columns writes them NULL (list, struct)" \
        '"$pqtool" write "$work/no_nested.csv" "$work/no_nested.parquet" --schema "$work/nested_schema.parquet" 2>"$work/err" &&
         [ "$("$pqtool" cat "$work/no_nested.parquet" | tr "\n" " ")" = "id,l,st 7,, 8,, " ] &&
         [ "$(node "$root/tests/mount/duck.mjs" sql "SELECT count(*) FROM read_parquet('"'"'$work/no_nested.parquet'"'"') WHERE l IS NULL AND st IS NULL AND id > 6" 2>&1 | tail -1)" = 2 ]'
    printf 'id,l\n7,[1]\n' >"$work/with_nested.csv"
    check "a CSV holding a nested column: refused, one line naming it" \
        '! "$pqtool" write "$work/with_nested.csv" "$work/with_nested.parquet" --schema "$work/nested_schema.parquet" 2>"$work/err" &&
         [ "$(wc -l <"$work/err")" = 1 ] && grep -q "column .l. is nested" "$work/err" && [ ! -e "$work/with_nested.parquet" ]'
fi

# Writer options reach the file.
"$pqtool" write "$g" "$work/o.parquet" --codec snappy --no-dictionary --bloom-filter name 2>/dev/null
"$pqtool" meta "$work/o.parquet" >"$work/o.meta" 2>&1
check "--codec snappy --no-dictionary" 'grep -q "  name: SNAPPY .*encodings=PLAIN" "$work/o.meta" && ! grep -q "RLE_DICTIONARY" "$work/o.meta"'
check "--bloom-filter name" 'grep -q "  name: .*bloom_filter=" "$work/o.meta" && ! grep -q "  price: .*bloom_filter=" "$work/o.meta"'
check "a value the bloom filter holds is found, one it lacks is pruned" \
    '[ "$("$pqtool" cat "$work/o.parquet" --where "name = '"'"'alpha'"'"'" | wc -l)" -gt 1 ] && "$pqtool" plan "$work/o.parquet" --where "name = '"'"'zzz'"'"'" | grep -q "bloom"'

# A row group copied byte for byte (a Parquet view that matches it entirely)
# keeps its bloom filters: a value inside the statistics' range but absent
# is still pruned by the bloom filter in the copy (it was dropped).
python3 -c 'print("id,s"); [print("%d,s%d" % (i, i)) for i in range(1, 2001)]' >"$work/bf.csv"
"$pqtool" write "$work/bf.csv" "$work/bf.parquet" --bloom-filter id,s 2>/dev/null
check "a copied row group keeps its bloom filters, and they prune" \
    '"$pqtool" cat "$work/bf.parquet" --format parquet -o "$work/bf_copy.parquet" 2>"$work/err" &&
     [ "$("$pqtool" meta "$work/bf_copy.parquet" | grep -c "bloom_filter=")" = 2 ] &&
     "$pqtool" plan "$work/bf_copy.parquet" --where "s = '"'"'s1000x'"'"'" | grep -q "1 pruned (statistics 0, dictionary 0, page index 0, bloom filter 1)" &&
     "$pqtool" cat "$work/bf_copy.parquet" | cmp -s - <("$pqtool" cat "$work/bf.parquet")'

# ---------------------------------------------------------------- bad input
bad() { # name, csv text, extra options, expected message pattern
    printf '%b' "$2" >"$work/bad.csv"
    rm -f "$work/bad.parquet"
    # shellcheck disable=SC2086
    if "$pqtool" write "$work/bad.csv" "$work/bad.parquet" $3 2>"$work/err"; then
        failed "$1: accepted"
        return
    fi
    if [ "$(wc -l <"$work/err")" -eq 1 ] && grep -qE "^pqtool: $work/bad.csv: $4" "$work/err" &&
        [ ! -e "$work/bad.parquet" ] && [ -z "$(ls "$work" | grep 'bad.parquet.tmp')" ]; then ok; else
        failed "$1: $(cat "$work/err")"
    fi
}
bad "field count" 'a,b\n1,2\n3\n' "" "line 3: 1 fields, the header has 2"
bad "unterminated quote" 'a,b\n1,"x\n' "" "line 2: a quoted field is not closed"
bad "text after a quote" 'a,b\n1,"x"y\n' "" "line 2, field 2: text after a closing quote"
bad "not an integer for the schema" 'id,k\n1,2\nzz,3\n' "--schema $work/g.parquet" "line 3, column id: 'zz' is not an integer"
bad "unknown column for the schema" 'id,nope\n1,2\n' "--schema $work/g.parquet" "line 1: column 'nope' is not in the table's schema"
bad "timezone offset into a local timestamp" 'ts\n2024-01-01 10:00:00+02\n' "--schema $work/g.parquet" "line 2, column ts: .*time zone offset"
bad "nanoseconds into micros" 'ts\n2024-01-01 10:00:00.1234567\n' "--schema $work/g.parquet" "line 2, column ts: .*finer than the column's unit"
bad "duplicate header" 'a,a\n1,2\n' "" "line 1: column 'a' appears twice"
bad "invalid UTF-8 in a string (inferred)" 'a,s\n1,ok\n2,a\xffb\n' "" "line 3, column s: .*not valid UTF-8"
bad "a lone continuation byte" 's\n\x80\n' "" "line 2, column s: .*not valid UTF-8"
bad "empty input" '' "" "empty input"
bad "sort by a missing column" 'a\n1\n' "--sort-by b" "sort_by: no column 'b'"

# A bad value deep in a streamed row group (past many slices), at 1 and 3 threads:
# the earliest bad row is named, and nothing is written.
python3 - "$work/deep.csv" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("id,k,name\n")
    for i in range(300000):
        f.write("%d,%s,n%d\n" % (i, "zz" if i in (150000, 250000) else str(i % 7), i))
EOF
printf 'id,k,name\n0,1,x\n' >"$work/deep_ref.csv"
"$pqtool" write "$work/deep_ref.csv" "$work/deep_ref.parquet" 2>/dev/null
for t in 1 3; do
    rm -f "$work/deep.parquet"
    "$pqtool" write "$work/deep.csv" "$work/deep.parquet" --schema "$work/deep_ref.parquet" --threads $t \
        --row-group-rows 100000 2>"$work/err" && failed "deep bad value accepted"
    check "deep bad value at $t threads: $(cat "$work/err")" \
        'grep -qx "pqtool: $work/deep.csv: line 150002, column k: .zz. is not an integer" "$work/err" && [ ! -e "$work/deep.parquet" ]'
done

# Types come from a sample of the first 200,000 rows; a later value that does
# not fit (1.5 in an int64 column, a date in a boolean one) makes a second pass
# with the types of every row.  A column with no value in the sample is read on.
python3 - "$work/late.csv" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("id,v,flag,late\n")
    for i in range(250000):
        v = "1.5" if i == 240000 else str(i)
        flag = "2024-01-01" if i == 249999 else ("true" if i % 2 else "false")
        late = "7" if i == 230000 else ""
        f.write("%d,%s,%s,%s\n" % (i, v, flag, late))
EOF
check "a late value widens the inferred type (second pass)" '"$pqtool" write "$work/late.csv" "$work/late.parquet" 2>"$work/err"'
late_schema=$("$pqtool" meta "$work/late.parquet" | sed -n '/^schema:/,/^columns:/p' | tr -s ' ' | tr '\n' ';')
check "types from every row: v DOUBLE, flag STRING, late INT64 ($late_schema)" \
    '[ "$late_schema" = "schema:; id: INT64; v: DOUBLE; flag: STRING; late: INT64;columns:;" ]'
check "and every row is there" '[ "$("$pqtool" cat "$work/late.parquet" --where "id >= 0" | wc -l)" = 250001 ]'

echo "writer.csv: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
