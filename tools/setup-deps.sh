#!/usr/bin/env bash
# Installs what pqfs needs to build, test, fuzz and benchmark, on Debian 12.
# Idempotent: when everything is there it only checks (well under a second).
#
#   tools/setup-deps.sh [--no-npm] [--no-optional]
#
#   --no-npm        skip the reference tools in tools/js (npm ci)
#   --no-optional   skip the benchmark extras (hyperfine, strace, linux-perf);
#                   also PQFS_SETUP_OPTIONAL=0 in the environment
#
# Debian packages are installed with apt-get (as root, or through sudo). Node.js
# is taken as it is when `node` is >= 18 with `npm` beside it; only otherwise
# are Debian's nodejs and npm installed. The npm packages in tools/js are
# installed with `npm ci` from the committed package-lock.json, and skipped
# when node_modules already matches it (hash in node_modules/.lockhash).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JS_DIR=$ROOT/tools/js

want_npm=1
want_optional=${PQFS_SETUP_OPTIONAL:-1}
for arg in "$@"; do
    case $arg in
        --no-npm) want_npm=0 ;;
        --no-optional) want_optional=0 ;;
        -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup-deps: unknown option: $arg" >&2; exit 2 ;;
    esac
done

# Build, test and fuzz: required.
REQUIRED=(
    pkg-config cmake make gcc clang libclang-rt-14-dev
    libfuse3-dev fuse3
    libzstd-dev libsnappy-dev liblz4-dev zlib1g-dev libbrotli-dev libxxhash-dev
    libcurl4-openssl-dev libssl-dev libinih-dev libjansson-dev libroaring-dev nginx
    python3 git ca-certificates rsync man-db groff-base bsdextrautils
)
# Benchmarks and profiling: nice to have; a failure here is only a warning.
OPTIONAL=(hyperfine strace linux-perf)

log() { printf 'setup-deps: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

is_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

node_major() {
    local v
    v=$(node --version 2>/dev/null) || return 1
    v=${v#v}
    printf '%s\n' "${v%%.*}"
}

SUDO=()
apt_updated=0
as_root() {
    if [ "$(id -u)" -ne 0 ] && [ ${#SUDO[@]} -eq 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and no sudo; install as root: $*"
        SUDO=(sudo)
    fi
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive "$@"
}
apt_install() {
    if [ "$apt_updated" -eq 0 ]; then
        log "apt-get update"
        as_root apt-get update -qq
        apt_updated=1
    fi
    log "apt-get install $*"
    as_root apt-get install -y -qq --no-install-recommends "$@"
}

command -v dpkg-query >/dev/null 2>&1 || die "no dpkg-query: this script is for Debian (12)"

# --- Debian packages ---------------------------------------------------------
missing=()
for p in "${REQUIRED[@]}"; do
    is_installed "$p" || missing+=("$p")
done

# Node.js: keep what is there when it is recent enough (e.g. a nodesource
# build, which bundles npm and conflicts with Debian's npm package).
if [ "$want_npm" -eq 1 ]; then
    major=$(node_major || echo 0)
    if [ "$major" -lt 18 ]; then
        is_installed nodejs || missing+=(nodejs)
        is_installed npm || missing+=(npm)
        [ "$major" -eq 0 ] || log "node v$major is too old (need >= 18); installing Debian's"
    elif ! command -v npm >/dev/null 2>&1; then
        if dpkg-query -W -f='${Version}' nodejs 2>/dev/null | grep -q nodesource; then
            die "node $(node --version) has no npm beside it; reinstall it with its npm"
        fi
        missing+=(npm)
    fi
fi

if [ ${#missing[@]} -gt 0 ]; then
    apt_install "${missing[@]}"
fi

if [ "$want_optional" != 0 ]; then
    opt_missing=()
    for p in "${OPTIONAL[@]}"; do
        is_installed "$p" || opt_missing+=("$p")
    done
    if [ ${#opt_missing[@]} -gt 0 ]; then
        apt_install "${opt_missing[@]}" || log "warning: could not install ${opt_missing[*]} (benchmarks only)"
    fi
fi

# --- npm reference tools -------------------------------------------------------
if [ "$want_npm" -eq 1 ]; then
    major=$(node_major || echo 0)
    [ "$major" -ge 18 ] || die "node >= 18 needed, have $(node --version 2>/dev/null || echo none)"
    [ -f "$JS_DIR/package-lock.json" ] || die "missing $JS_DIR/package-lock.json"
    # The install depends on the lock file, the platform and node's major version.
    lockhash=$( { cat "$JS_DIR/package-lock.json"; echo "node$major $(uname -m)"; } | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$JS_DIR/node_modules/.lockhash" 2>/dev/null || true)" != "$lockhash" ]; then
        log "npm ci in tools/js"
        (cd "$JS_DIR" && npm ci --no-audit --no-fund --loglevel=error)
        (cd "$JS_DIR" && node -e "import('@duckdb/node-api').then(() => 0)") \
            || die "tools/js: @duckdb/node-api does not load after npm ci"
        printf '%s\n' "$lockhash" > "$JS_DIR/node_modules/.lockhash"
    fi
fi

log "ok"
