/* What /proc says about a process (engine/common/proc.c): the parsers fed
 * texts as the kernel writes them (a thread's process, a fatal signal
 * pending, a thread exiting killed, supplementary groups, the inode a
 * descriptor is open on), and the readers checked against this process and
 * children it makes (a signal pending, blocked; a reaped child gone). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "proc.h"

static const char status_text[] = "Name:\tcp\n"
                                  "Umask:\t0022\n"
                                  "State:\tS (sleeping)\n"
                                  "Tgid:\t4242\n"
                                  "Ngid:\t0\n"
                                  "Pid:\t4243\n"
                                  "PPid:\t1\n"
                                  "Groups:\t4 24 27 1000 \n"
                                  "SigQ:\t0/63338\n";

static void test_parse_tgid(void)
{
    CHECK_EQ_INT(pq_proc_parse_tgid(status_text), 4242);
    CHECK_EQ_INT(pq_proc_parse_tgid("Name:\tx\nPid:\t7\n"), 0);
    /* "Tgid:" only at a line's start (not "NTgid:"). */
    CHECK_EQ_INT(pq_proc_parse_tgid("NTgid:\t9\n"), 0);
    CHECK_EQ_INT(pq_proc_parse_tgid("Tgid:\t17"), 17);
}

/* A status text with the given signal masks. */
static const char *masks(char *buf, size_t cap, const char *pnd, const char *shd, const char *ign, const char *cgt)
{
    snprintf(buf, cap, "Name:\tcp\nTgid:\t1\nSigQ:\t0/1\nSigPnd:\t%s\nShdPnd:\t%s\nSigBlk:\t0000000000004000\n"
             "SigIgn:\t%s\nSigCgt:\t%s\nCapInh:\t0\n", pnd, shd, ign, cgt);
    return buf;
}

static void test_parse_fatal_pending(void)
{
    char b[512];
    const char *zero = "0000000000000000";
    CHECK(!pq_proc_parse_fatal_pending(masks(b, sizeof b, zero, zero, zero, zero)));
    /* SIGTERM (15: bit 14) pending for the process, default action: fatal. */
    CHECK(pq_proc_parse_fatal_pending(masks(b, sizeof b, zero, "0000000000004000", zero, zero)));
    /* for the thread alone too */
    CHECK(pq_proc_parse_fatal_pending(masks(b, sizeof b, "0000000000004000", zero, zero, zero)));
    /* caught, or ignored: not fatal */
    CHECK(!pq_proc_parse_fatal_pending(masks(b, sizeof b, zero, "0000000000004000", zero, "0000000000004000")));
    CHECK(!pq_proc_parse_fatal_pending(masks(b, sizeof b, zero, "0000000000004000", "0000000000004000", zero)));
    /* SIGKILL (9: bit 8) cannot be caught */
    CHECK(pq_proc_parse_fatal_pending(masks(b, sizeof b, "0000000000000100", zero, zero, "0000000000000100")));
    /* SIGCHLD (17), SIGWINCH (28), SIGCONT (18) do not end a process */
    CHECK(!pq_proc_parse_fatal_pending(masks(b, sizeof b, "0000000008030000", zero, zero, zero)));
    /* SIGINT (2) beside a harmless one */
    CHECK(pq_proc_parse_fatal_pending(masks(b, sizeof b, "0000000000010002", zero, zero, zero)));
    /* a real-time signal's bit (34 and up) is not looked at */
    CHECK(!pq_proc_parse_fatal_pending(masks(b, sizeof b, "0000000200000000", zero, zero, zero)));
    CHECK(!pq_proc_parse_fatal_pending(""));
}

/* A /proc/TID/stat line: pid, (comm), state, then fields 4..52 with flags
 * (field 9) and exit_code (field 52) as given; `fields` numbered fields in
 * all (older kernels write fewer). */
static const char *stat_line(char *buf, size_t cap, const char *comm, unsigned long flags, int exit_code, int fields)
{
    int k = snprintf(buf, cap, "4243 (%s) %c", comm, flags & 4 ? 'Z' : 'S');
    for (int f = 4; f <= fields && (size_t)k < cap; f++) {
        unsigned long v = f == 9 ? flags : f == 52 ? (unsigned long)exit_code : (unsigned long)f * 3;
        k += snprintf(buf + k, cap - (size_t)k, " %lu", v);
    }
    snprintf(buf + k, cap - (size_t)k, "\n");
    return buf;
}

static void test_parse_killed(void)
{
    char b[1024];
    const unsigned long exiting = 0x404044; /* PF_EXITING (0x4) among others */
    CHECK(pq_proc_parse_killed(stat_line(b, sizeof b, "cp", exiting, 9, 52)));
    CHECK(pq_proc_parse_killed(stat_line(b, sizeof b, "cp", exiting, 15 | 0x80, 52))); /* SIGTERM, core */
    /* a normal exit: exit_code holds the status (1 << 8), no signal */
    CHECK(!pq_proc_parse_killed(stat_line(b, sizeof b, "cp", exiting, 1 << 8, 52)));
    CHECK(!pq_proc_parse_killed(stat_line(b, sizeof b, "cp", exiting, 0, 52)));
    /* not exiting */
    CHECK(!pq_proc_parse_killed(stat_line(b, sizeof b, "cp", 0x404040, 9, 52)));
    /* a command name with spaces and ')' (read from its first ')', the
     * flags would be one of these zeros) */
    CHECK(pq_proc_parse_killed(stat_line(b, sizeof b, "a b) 0 0 0 0 0 0 0 0 0 0", exiting, 9, 52)));
    /* a kernel that writes no exit_code */
    CHECK(!pq_proc_parse_killed(stat_line(b, sizeof b, "cp", exiting, 9, 44)));
    CHECK(!pq_proc_parse_killed("garbage"));
}

static void test_parse_groups(void)
{
    uint32_t *g;
    int n = pq_proc_parse_groups(status_text, &g);
    CHECK_EQ_INT(n, 4);
    if (n == 4) {
        CHECK_EQ_INT(g[0], 4);
        CHECK_EQ_INT(g[3], 1000);
    }
    free(g);
    /* none */
    n = pq_proc_parse_groups("Name:\tx\nGroups:\t\nSigQ:\t0/1\n", &g);
    CHECK_EQ_INT(n, 0);
    CHECK(g != NULL);
    free(g);
    n = pq_proc_parse_groups("Name:\tx\n", &g);
    CHECK_EQ_INT(n, 0);
    CHECK(g == NULL);
    /* A line far past 4 KiB (libfuse's reader overran its buffer there),
     * the first line of the text, and the last without its newline. */
    size_t cap = 64 + 3000 * 11;
    char *big = malloc(cap);
    size_t k = (size_t)snprintf(big, cap, "Groups:");
    for (int i = 0; i < 3000; i++) k += (size_t)snprintf(big + k, cap - k, " %d", 100000 + i);
    n = pq_proc_parse_groups(big, &g);
    CHECK_EQ_INT(n, 3000);
    if (n == 3000) CHECK_EQ_INT(g[2999], 102999);
    free(g);
    free(big);
}

static void test_parse_fdinfo(void)
{
    uint64_t ino = 0;
    CHECK(pq_proc_parse_fdinfo_ino("pos:\t0\nflags:\t0100002\nmnt_id:\t29\nino:\t18446744073709551557\n", &ino));
    CHECK(ino == 18446744073709551557ull);
    CHECK(!pq_proc_parse_fdinfo_ino("pos:\t0\nflags:\t02\n", &ino));
}

static void *report_tid(void *p)
{
    *(int *)p = gettid();
    *((int *)p + 1) = pq_proc_process_of(gettid());
    return NULL;
}

static void test_self(void)
{
    CHECK_EQ_INT(pq_proc_process_of(getpid()), getpid());
    /* A thread's process is the thread group (FUSE names the thread). */
    int seen[2] = {0, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, report_tid, seen) == 0) {
        pthread_join(t, NULL);
        CHECK(seen[0] != getpid());
        CHECK_EQ_INT(seen[1], getpid());
    }
    CHECK_EQ_INT(pq_proc_process_of(0), 0);
    CHECK_EQ_INT(pq_proc_process_of(-5), 0);
    CHECK(!pq_proc_killed_by_signal(gettid()));
    CHECK(!pq_proc_fatal_signal_pending(gettid()));
    CHECK(!pq_proc_gone(gettid()));
    CHECK(!pq_proc_dying(gettid()));
    CHECK(!pq_proc_dying(0));
    /* The supplementary groups, as getgroups(2) has them. */
    gid_t want[256];
    int nw = getgroups(256, want);
    uint32_t *g = NULL;
    int n = pq_proc_groups(getpid(), &g);
    CHECK_EQ_INT(n, nw);
    for (int i = 0; i < n && i < nw; i++) {
        bool found = false;
        for (int j = 0; j < nw; j++) found |= g[i] == (uint32_t)want[j];
        CHECK(found);
    }
    free(g);
    CHECK_EQ_INT(pq_proc_groups(0, &g), -1);
    /* A descriptor open on a file: its inode is held; closed, it is not. */
    char path[] = "/tmp/pq_proc_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    struct stat st;
    CHECK_EQ_INT(fstat(fd, &st), 0);
    CHECK(pq_proc_holds_inode(getpid(), (uint64_t)st.st_ino));
    int dup_fd = dup(fd);
    close(fd);
    CHECK(pq_proc_holds_inode(getpid(), (uint64_t)st.st_ino)); /* the dup'd one */
    close(dup_fd);
    CHECK(!pq_proc_holds_inode(getpid(), (uint64_t)st.st_ino));
    unlink(path);
    /* The table answers as the readers do. */
    const pq_proc_ops *ops = pq_proc_system();
    CHECK_EQ_INT(ops->process_of(ops->ctx, gettid()), getpid());
    CHECK(!ops->dying(ops->ctx, gettid()));
}

static void on_usr1(int sig)
{
    (void)sig;
}

/* A child that blocks `sig` (caught when `catch`), sends it to itself and
 * waits, the signal pending: its pid. */
static pid_t child_with_pending(int sig, bool catch)
{
    int ready[2];
    if (pipe(ready) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (catch) signal(sig, on_usr1);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_BLOCK, &set, NULL);
        raise(sig);
        char c = 1;
        if (write(ready[1], &c, 1) != 1) _exit(1);
        for (;;) pause();
    }
    char c;
    bool ok = pid > 0 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    close(ready[1]);
    return ok ? pid : -1;
}

static void test_children(void)
{
    pid_t term = child_with_pending(SIGTERM, false);
    pid_t usr1 = child_with_pending(SIGUSR1, true);
    CHECK(term > 0 && usr1 > 0);
    if (term > 0) {
        CHECK(pq_proc_fatal_signal_pending(term));
        CHECK(pq_proc_dying(term));
        CHECK(!pq_proc_gone(term));
        CHECK_EQ_INT(pq_proc_process_of(term), term);
    }
    if (usr1 > 0) {
        CHECK(!pq_proc_fatal_signal_pending(usr1)); /* caught: the process goes on */
        CHECK(!pq_proc_dying(usr1));
    }
    pid_t pids[2] = {term, usr1};
    for (int i = 0; i < 2; i++) {
        if (pids[i] <= 0) continue;
        kill(pids[i], SIGKILL);
        int status;
        waitpid(pids[i], &status, 0);
        CHECK(WIFSIGNALED(status));
        /* Reaped: gone, which a close waiting on its commit takes for dying. */
        CHECK(pq_proc_gone(pids[i]));
        CHECK(pq_proc_dying(pids[i]));
        CHECK_EQ_INT(pq_proc_process_of(pids[i]), 0);
    }
}

int main(void)
{
    test_parse_tgid();
    test_parse_fatal_pending();
    test_parse_killed();
    test_parse_groups();
    test_parse_fdinfo();
    test_self();
    test_children();
    return check_report();
}
