#!/usr/bin/env bash
# Configure, build and run the whole test suite (ctest); exits with ctest's status.
#
#   tools/test.sh [--werror] [--sanitize] [--build-dir DIR] [--build-type TYPE]
#                 [--no-setup] [-- CTEST_ARGS...]
#
#   --werror          -DPQFS_WERROR=ON
#   --sanitize        -DPQFS_SANITIZE=ON (ASan+UBSan); build dir build-asan by default
#   --build-dir DIR   build directory (default: build, or build-asan with --sanitize);
#                     relative to the repository root
#   --build-type T    CMAKE_BUILD_TYPE (default RelWithDebInfo)
#   --no-setup        do not run tools/setup-deps.sh first
#   -- ARGS           passed to ctest, e.g. `-- -L unit` or `-- -R corpus.data.alltypes`
#
# The compiler comes from CC as usual (CC=clang tools/test.sh --sanitize); a
# build dir configured with another compiler is reconfigured from scratch.
# Works from any directory. PQFS_SHARED_DIR defaults to ../shared (CMake).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

werror=OFF
sanitize=OFF
build_dir=
build_type=RelWithDebInfo
setup=1
ctest_args=()
while [ $# -gt 0 ]; do
    case $1 in
        --werror) werror=ON ;;
        --sanitize) sanitize=ON ;;
        --build-dir) [ $# -ge 2 ] || { echo "test.sh: --build-dir needs a value" >&2; exit 2; }
                     build_dir=$2; shift ;;
        --build-dir=*) build_dir=${1#*=} ;;
        --build-type) [ $# -ge 2 ] || { echo "test.sh: --build-type needs a value" >&2; exit 2; }
                      build_type=$2; shift ;;
        --build-type=*) build_type=${1#*=} ;;
        --no-setup) setup=0 ;;
        --) shift; ctest_args=("$@"); break ;;
        -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "test.sh: unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$build_dir" ]; then
    if [ "$sanitize" = ON ]; then build_dir=build-asan; else build_dir=build; fi
fi
jobs=$(nproc 2>/dev/null || echo 2)

if [ "$setup" -eq 1 ]; then
    tools/setup-deps.sh
fi

# A cache made with another compiler cannot be reused: start that dir afresh.
cache=$build_dir/CMakeCache.txt
if [ -f "$cache" ]; then
    cc_cached=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$cache")
    cc_now=$(command -v "${CC:-cc}" 2>/dev/null || echo "${CC:-cc}")
    if [ -n "$cc_cached" ] && [ "$(readlink -f "$cc_cached")" != "$(readlink -f "$cc_now")" ]; then
        echo "test.sh: $build_dir was configured with $cc_cached, not $cc_now: reconfiguring" >&2
        rm -rf "$cache" "$build_dir/CMakeFiles"
    fi
fi

echo "test.sh: configure $build_dir (CC=${CC:-cc}, $build_type, werror=$werror, sanitize=$sanitize)" >&2
cmake -S . -B "$build_dir" \
    -DCMAKE_BUILD_TYPE="$build_type" \
    -DPQFS_WERROR="$werror" \
    -DPQFS_SANITIZE="$sanitize"

echo "test.sh: build with $jobs jobs" >&2
cmake --build "$build_dir" -j "$jobs"

if [ "$sanitize" = ON ]; then
    # Any report fails the test; keep the defaults if the caller set their own.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi

# One test more than cores: the mount and writer tests spend part of their
# time waiting (metadata TTLs, daemons starting and stopping), which another
# test fills (on 2 cores the ASan suite took 315 s at -j2, 276 s at -j3).
test_jobs=$((jobs + 1))
echo "test.sh: ctest -j$test_jobs ${ctest_args[*]}" >&2
cd "$build_dir"
status=0
ctest --output-on-failure -j"$test_jobs" "${ctest_args[@]}" || status=$?
exit "$status"
