#!/usr/bin/env bash
# docs/man/pqfs.1 and pqtool.1 (issue 23: `man pqfs`, `man pqtool`): each
# renders with `man -l --warnings` and no warning, and names every option
# and key the programs take: pqfs's -o keys (its --help), the ini's
# sections, pqtool's commands and options (its --help).
#   tests/unit/man_pages.sh SOURCE_DIR PQFS PQTOOL
set -uo pipefail
SRC=$1 PQFS=$2 PQTOOL=$3
command -v man >/dev/null || { echo "SKIP: no man (tools/setup-deps.sh installs man-db)"; exit 77; }
FAILS=0 PASSES=0
for m in pqfs pqtool; do
    page=$SRC/docs/man/$m.1
    warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    text=$(MANWIDTH=200 man -l "$page" 2>/dev/null | col -b)
    if [ -z "$warn" ] && [ -n "$text" ]; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: $m.1 warns: $warn"; fi
    # Every --name the program's usage shows is in its page.
    if [ "$m" = pqfs ]; then usage=$("$PQFS" --help); else usage=$("$PQTOOL" --help); fi
    for opt in $(grep -oE -- '--[a-z][a-z-]+' <<<"$usage" | sort -u); do
        if grep -qF -- "$opt" <<<"$text"; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: $m.1 lacks $opt"; fi
    done
done
text=$(MANWIDTH=200 man -l "$SRC/docs/man/pqfs.1" 2>/dev/null | col -b)
for key in source read_only threads cache_dir cache_size metadata_ttl log_level sized_csv uid gid dir_mode file_mode \
    endpoint region path_style access_key_id secret_access_key session_token partitions compression page_size dictionary \
    page_index bloom_filter row_group_rows sort_by nonempty 'where=' 'select=' 'limit=' 'sized=' 'as_of='; do
    if grep -qF -- "$key" <<<"$text"; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: pqfs.1 lacks $key"; fi
done
text=$(MANWIDTH=200 man -l "$SRC/docs/man/pqtool.1" 2>/dev/null | col -b)
for cmd in cat plan meta rewrite write; do
    if grep -qE "^ +$cmd( |$)|pqtool $cmd" <<<"$text"; then PASSES=$((PASSES + 1)); else FAILS=$((FAILS + 1)); echo "FAIL: pqtool.1 lacks the command $cmd"; fi
done
echo "man_pages: $PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
