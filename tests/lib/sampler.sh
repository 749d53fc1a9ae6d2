# A sampler of one process's descriptors and peak RSS, and the checks on
# what it saw (sourced by tests/big/files.sh, tests/mount/fds.sh and
# tools/bench/bench_files.sh).  The checks use pass and fail of
# tests/mount/lib.sh, and LIMIT (the descriptor limit), BUDGET (the lake
# files' share of it) and SANITIZED (sanitized_build) of the caller.

# sample_process PID LAKE OUT: in the background (its pid in SAMPLER), until
# PID ends or OUT.stop exists, every 5 ms, the most descriptors PID held, the
# most of them on Parquet files below LAKE (a path ending in /), the number of
# samples and PID's VmHWM (KiB), into OUT; OUT.ready once it samples.
sample_process() {
    python3 - "$1" "$2" "$3" <<'PY' &
import os, sys, time
pid, lake, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
most = most_lake = samples = hwm = 0
open(out + '.ready', 'w').close() # what it samples may start now (gated)
while not os.path.exists(out + '.stop'):
    try:
        fds = os.listdir('/proc/%d/fd' % pid)
        with open('/proc/%d/status' % pid) as st:
            for line in st:
                if line.startswith('VmHWM:'):
                    hwm = max(hwm, int(line.split()[1]))
    except OSError:
        break
    on_lake = 0
    for fd in fds:
        try:
            t = os.readlink('/proc/%d/fd/%s' % (pid, fd))
            on_lake += t.startswith(lake) and t.endswith('.parquet')
        except OSError:
            pass
    most, most_lake, samples = max(most, len(fds)), max(most_lake, on_lake), samples + 1
    time.sleep(0.005)
with open(out, 'w') as f:
    f.write('%d %d %d %d\n' % (most, most_lake, samples, hwm))
PY
    SAMPLER=$!
}

# stop_sampling OUT: ends the sampler of OUT and reads what it saw into
# FD_MOST FD_LAKE FD_SAMPLES PEAK_KIB; its files are removed.
stop_sampling() {
    touch "$1.stop"
    wait "$SAMPLER" || true
    read -r FD_MOST FD_LAKE FD_SAMPLES PEAK_KIB <"$1"
    rm -f "$1" "$1.stop" "$1.ready"
}

# wait_sampled PID LAKE OUT: sample_process of PID (a child of this shell)
# until it ends, then stop_sampling; its exit status in SAMPLED_RC.
wait_sampled() {
    sample_process "$1" "$2" "$3"
    SAMPLED_RC=0
    wait "$1" || SAMPLED_RC=$?
    stop_sampling "$3"
}

# gated READY CMD...: CMD in the background (its pid in $!), started only
# once READY exists: a sampler of its pid is then sampling from its first
# moment, however slowly the sampler itself started (a short run under
# load was over before the first sample: 0 samples, no peak).
gated() {
    local ready=$1
    shift
    (
        while [ ! -e "$ready" ]; do sleep 0.005; done
        exec "$@"
    ) &
}

# sampled_ready READY: waits for a sampler started before a view is read.
sampled_ready() { while [ ! -e "$1" ]; do sleep 0.005; done; }

# sanitized_build BUILD: SANITIZED=1 for a sanitizer build (ASan, TSan),
# whose allocator keeps freed memory in quarantine: its peak is printed,
# not bounded.
sanitized_build() {
    SANITIZED=0
    grep -qE '^PQFS_(SANITIZE|TSAN):BOOL=ON' "$1/CMakeCache.txt" 2>/dev/null && SANITIZED=1
    return 0
}

# check_fd_bound WHAT: the sampled process held at most BUDGET descriptors on
# lake files, fewer than LIMIT in all, and was sampled.
check_fd_bound() {
    if [ "$FD_LAKE" -le "$BUDGET" ] && [ "$FD_MOST" -lt "$LIMIT" ] && [ "$FD_SAMPLES" -gt 0 ]; then
        pass "$1: at most $FD_LAKE lake descriptors ($FD_MOST in all, $FD_SAMPLES samples)"
    else
        fail "$1: $FD_LAKE lake descriptors, $FD_MOST in all, $FD_SAMPLES samples (budget $BUDGET; limit $LIMIT)"
    fi
}

# check_peak_rss WHAT KIB: the sampled process's peak RSS was within KIB
# (printed only, in a sanitizer build).
check_peak_rss() {
    if [ "$SANITIZED" = 1 ]; then
        echo "${0##*/}: $1: peak RSS $((${PEAK_KIB:-0} / 1024)) MiB (a sanitizer build: not bounded)"
    elif [ "${PEAK_KIB:-0}" -gt 0 ] && [ "$PEAK_KIB" -le "$2" ]; then
        pass "$1: peak RSS $((PEAK_KIB / 1024)) MiB (bound $(($2 / 1024)) MiB)"
    else
        fail "$1: peak RSS ${PEAK_KIB:-?} KiB, bound $2 KiB"
    fi
}
