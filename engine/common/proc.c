/* What /proc says about a process (proc.h): pure parsers of the texts, and
 * readers that read a live file whole and parse it.  In common/ because it
 * is an OS fact any layer may ask, and the lake's write lifecycle, which
 * asks it, sits above everything else. */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ parsers */

/* The text after "KEY:" on the line that starts with it, or NULL. */
static const char *line_after(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, key, kl)) return p + kl;
    return NULL;
}

/* The hexadecimal mask after KEY (0 when the line is missing). */
static unsigned long long mask_of(const char *text, const char *key)
{
    const char *v = line_after(text, key);
    unsigned long long m;
    return v && sscanf(v, " %llx", &m) == 1 ? m : 0;
}

int pq_proc_parse_tgid(const char *status)
{
    const char *v = line_after(status, "Tgid:");
    long tgid;
    return v && sscanf(v, " %ld", &tgid) == 1 && tgid > 0 && tgid <= 0x7fffffff ? (int)tgid : 0;
}

bool pq_proc_parse_fatal_pending(const char *status)
{
    unsigned long long pending = mask_of(status, "SigPnd:") | mask_of(status, "ShdPnd:");
    unsigned long long ignored = mask_of(status, "SigIgn:"), caught = mask_of(status, "SigCgt:");
#define SIGBIT(n) (1ull << ((n) - 1))
    /* Signals whose default is not to end the process: SIGCHLD, SIGCONT,
     * SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU, SIGURG, SIGWINCH. */
    const unsigned long long harmless = SIGBIT(17) | SIGBIT(18) | SIGBIT(19) | SIGBIT(20) | SIGBIT(21) |
                                        SIGBIT(22) | SIGBIT(23) | SIGBIT(28);
    bool killed = (pending & SIGBIT(9)) || (pending & ~ignored & ~caught & ~harmless & 0xffffffffull);
#undef SIGBIT
    return killed;
}

bool pq_proc_parse_killed(const char *stat)
{
    const char *p = strrchr(stat, ')'); /* the command name may hold spaces and ')' */
    if (!p) return false;
    unsigned long long field[64];
    int k = 0;
    for (p++; k < 64 && *p;) {
        while (*p == ' ') p++;
        if (!*p || *p == '\n') break;
        char *end;
        field[k++] = strtoull(p, &end, 10); /* the state letter reads as 0 */
        p = end;
        while (*p && *p != ' ') p++;
    }
    const unsigned long long pf_exiting = 0x4;
    /* field[0] is field 3 (state): flags is field 9, exit_code field 52 */
    return k > 49 && (field[6] & pf_exiting) && (field[49] & 0x7f) != 0;
}

int pq_proc_parse_groups(const char *status, uint32_t **out)
{
    *out = NULL;
    const char *line = line_after(status, "Groups:");
    if (!line) return 0;
    const char *end = strchr(line, '\n');
    if (!end) end = line + strlen(line);
    uint32_t *groups = malloc(sizeof *groups * (size_t)((end - line) / 2 + 1));
    if (!groups) return -1;
    int count = 0;
    for (const char *q = line; q < end;) {
        char *stop;
        unsigned long g = strtoul(q, &stop, 10);
        if (stop == q) {
            q++;
            continue;
        }
        if (stop > end) break;
        if (g <= UINT32_MAX) groups[count++] = (uint32_t)g;
        q = stop;
    }
    *out = groups;
    return count;
}

bool pq_proc_parse_fdinfo_ino(const char *fdinfo, uint64_t *ino)
{
    const char *v = line_after(fdinfo, "ino:");
    unsigned long long n;
    if (!v || sscanf(v, " %llu", &n) != 1) return false;
    *ino = n;
    return true;
}

/* ------------------------------------------------------------------ readers */

/* The whole of a /proc file, NUL-terminated (malloc'd), at most max bytes;
 * NULL when it cannot be read. */
static char *read_text(const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = max < 8192 ? max : 8192, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            if (cap >= max) break; /* cut at max */
            size_t want = cap * 2 < max ? cap * 2 : max;
            char *grown = realloc(buf, want);
            if (!grown) break;
            buf = grown;
            cap = want;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (buf) buf[len] = '\0';
    return buf;
}

#define STATUS_MAX (1u << 20) /* a status with 65,536 groups is about 450 KiB */

static char *status_of(int tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", tid);
    return read_text(path, STATUS_MAX);
}

int pq_proc_process_of(int tid)
{
    if (tid <= 0) return 0;
    char *text = status_of(tid);
    int tgid = text ? pq_proc_parse_tgid(text) : 0;
    free(text);
    return tgid;
}

bool pq_proc_killed_by_signal(int tid)
{
    if (tid <= 0) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", tid);
    char *text = read_text(path, 4096);
    bool killed = text && pq_proc_parse_killed(text);
    free(text);
    return killed;
}

bool pq_proc_fatal_signal_pending(int tid)
{
    if (tid <= 0) return false;
    char *text = status_of(tid);
    bool pending = text && pq_proc_parse_fatal_pending(text);
    free(text);
    return pending;
}

bool pq_proc_gone(int tid)
{
    if (tid <= 0) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", tid);
    struct stat st;
    return stat(path, &st) != 0 && errno == ENOENT;
}

bool pq_proc_dying(int tid)
{
    /* A killed thread does not wait for close() to finish: once it is
     * reaped /proc has no entry for it, and only a kill ends a thread
     * inside close(). */
    return tid > 0 && (pq_proc_gone(tid) || pq_proc_fatal_signal_pending(tid) || pq_proc_killed_by_signal(tid));
}

bool pq_proc_holds_inode(int pid, uint64_t ino)
{
    if (pid <= 0) return false;
    char dir_path[64];
    snprintf(dir_path, sizeof dir_path, "/proc/%d/fdinfo", pid);
    DIR *d = opendir(dir_path);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64 + sizeof e->d_name];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        /* "ino:" comes in the first lines (an epoll's or inotify's list of
         * what it watches follows them). */
        char *text = read_text(path, 4096);
        uint64_t file_ino;
        found = text && pq_proc_parse_fdinfo_ino(text, &file_ino) && file_ino == ino;
        free(text);
    }
    closedir(d);
    return found;
}

int pq_proc_groups(int pid, uint32_t **out)
{
    *out = NULL;
    if (pid <= 0) return -1;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, pid);
    char *text = read_text(path, STATUS_MAX);
    if (!text) return -1;
    int n = pq_proc_parse_groups(text, out);
    free(text);
    return n;
}

/* ------------------------------------------------------------------ the table */

static int sys_process_of(void *ctx, int tid)
{
    (void)ctx;
    return pq_proc_process_of(tid);
}

static bool sys_killed_by_signal(void *ctx, int tid)
{
    (void)ctx;
    return pq_proc_killed_by_signal(tid);
}

static bool sys_dying(void *ctx, int tid)
{
    (void)ctx;
    return pq_proc_dying(tid);
}

static bool sys_holds_inode(void *ctx, int pid, uint64_t ino)
{
    (void)ctx;
    return pq_proc_holds_inode(pid, ino);
}

const pq_proc_ops *pq_proc_system(void)
{
    static const pq_proc_ops ops = {NULL, sys_process_of, sys_killed_by_signal, sys_dying, sys_holds_inode};
    return &ops;
}
