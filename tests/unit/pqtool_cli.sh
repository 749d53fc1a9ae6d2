#!/usr/bin/env bash
# pqtool's help and version as users ask for them (issue 23): `pqtool
# --help` (-h, help, `pqtool cat --help`) prints the usage on stdout and
# exits 0, `pqtool --version` prints the version and exits 0; a usage
# error (no command, an unknown one, a bad option) prints the usage on
# stderr and exits 2.  Before: --help was a usage error (stderr, exit 2)
# and --version printed the usage.
#   tests/unit/pqtool_cli.sh PQTOOL
set -uo pipefail
PQTOOL=$1
FAILS=0 PASSES=0
# want WHAT RC STDOUT_GREP STDERR_GREP ARGS...: exit RC, stdout matching
# the first pattern, stderr the second ('' : empty).
want() {
    local what=$1 rc=$2 out_re=$3 err_re=$4
    shift 4
    local out err got=0
    out=$("$PQTOOL" "$@" 2>/tmp/pqfs-cli-err.$$) || got=$?
    err=$(cat /tmp/pqfs-cli-err.$$)
    rm -f /tmp/pqfs-cli-err.$$
    local ok=1
    [ "$got" -eq "$rc" ] || ok=0
    if [ -n "$out_re" ]; then grep -qE -- "$out_re" <<<"$out" || ok=0; else [ -z "$out" ] || ok=0; fi
    if [ -n "$err_re" ]; then grep -qE -- "$err_re" <<<"$err" || ok=0; else [ -z "$err" ] || ok=0; fi
    if [ "$ok" = 1 ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: $what: exit $got, stdout '${out:0:80}', stderr '${err:0:80}'"; fi
}
want "pqtool --help" 0 '^usage: pqtool cat' '' --help
want "pqtool -h" 0 '^usage: pqtool cat' '' -h
want "pqtool help" 0 '^usage: pqtool cat' '' help
want "pqtool cat --help" 0 '^usage: pqtool cat' '' cat --help
want "pqtool --version" 0 '^pqtool \(pqfs version [0-9]' '' --version
want "pqtool (no command)" 2 '' '^usage: pqtool cat'
want "pqtool bogus" 2 '' '^usage: pqtool cat' bogus
want "pqtool cat --bogus" 2 '' '^usage: pqtool cat' cat --bogus x
echo "pqtool_cli: $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
