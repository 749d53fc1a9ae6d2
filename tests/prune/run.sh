#!/usr/bin/env bash
# Pruning-ladder tests (CTest label `prune`).
#
#   tests/prune/run.sh BUILD_DIR|PQTOOL OUTDIR [GROUP...]
#
# OUTDIR receives the generated data (tests/prune/gen.mjs), made once and
# again whenever gen.mjs or lib.mjs is newer than OUTDIR/STAMP.  GROUP is
# `gen` (only generate) or a group of run.mjs: stats fully pages bloom dict limit
# sweep-gen sweep-corpus; none = all.  Exits 77 (CTest: skipped) when node,
# tools/js/node_modules (tools/setup-deps.sh), python3 or the corpus are
# missing.  PQFS_SHARED_DIR overrides ../shared.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: run.sh BUILD_DIR|PQTOOL OUTDIR [GROUP...]" >&2; exit 2; }
target=$1 out=$2
shift 2
if [ -d "$target" ]; then pqtool=$target/pqtool; else pqtool=$target; fi
[ -x "$pqtool" ] || { echo "run.sh: no pqtool at $pqtool" >&2; exit 2; }
pqtool=$(cd "$(dirname "$pqtool")" && pwd)/$(basename "$pqtool")

export PQFS_SHARED_DIR=${PQFS_SHARED_DIR:-$root/../shared}
skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null 2>&1 || skip "node is not installed"
for m in @duckdb/node-api parquet-wasm; do
    [ -d "$root/tools/js/node_modules/$m" ] || skip "tools/js/node_modules/$m missing (run tools/setup-deps.sh)"
done
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -d "$PQFS_SHARED_DIR/testdata/parquet-testing/data" ] || skip "no corpus at $PQFS_SHARED_DIR/testdata/parquet-testing"
[ -f "$PQFS_SHARED_DIR/tools/csvcmp.py" ] || skip "no csvcmp.py in $PQFS_SHARED_DIR/tools"

# Generate under a lock: parallel CTest runs share OUTDIR.
mkdir -p "$out"
stale() {
    [ ! -f "$out/STAMP" ] || [ "$here/gen.mjs" -nt "$out/STAMP" ] || [ "$here/lib.mjs" -nt "$out/STAMP" ]
}
if stale; then
    exec 9>"$out/.lock"
    if command -v flock >/dev/null 2>&1; then flock 9; fi
    if stale; then
        rm -f "$out/STAMP"
        node "$here/gen.mjs" "$out"
    fi
    exec 9>&-
fi

groups=("$@")
if [ ${#groups[@]} -eq 0 ]; then groups=(stats fully pages bloom dict limit sweep-gen sweep-corpus); fi
if [ "${groups[*]}" = gen ]; then exit 0; fi
run=()
for g in "${groups[@]}"; do [ "$g" = gen ] || run+=("$g"); done
exec node "$here/run.mjs" "$pqtool" "$out" "${run[@]}"
