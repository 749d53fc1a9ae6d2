#!/usr/bin/env bash
# Schema evolution against DuckDB (CTest evolve.duckdb): tests/evolve/evolve.mjs.
#   tests/evolve/run.sh PQTOOL WORKDIR
# Exits 77 (skipped) without node, tools/js/node_modules, python3 or csvcmp.py.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: run.sh PQTOOL WORKDIR" >&2; exit 2; }
shared=${PQFS_SHARED_DIR:-$root/../shared}
skip() { echo "SKIP: $*"; exit 77; }
command -v node >/dev/null 2>&1 || skip "node is not installed"
[ -d "$root/tools/js/node_modules/@duckdb/node-api" ] || skip "tools/js/node_modules/@duckdb/node-api missing (run tools/setup-deps.sh)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
[ -f "$shared/tools/csvcmp.py" ] || skip "no csvcmp.py in $shared/tools"
exec node "$here/evolve.mjs" "$1" "$2" "$shared/tools/csvcmp.py"
