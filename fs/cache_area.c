#include "cache_area.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

/* A directory still being set up (made, not yet locked) has this prefix, so
 * another mount scanning at that moment never takes it for a dead one. */
#define NEW_PREFIX "new-"
#define LIVE_PREFIX "mount-"
/* Inside every directory this code made: only such directories are ever
 * emptied, so a shared cache_dir's other mount-* entries are safe. */
#define MARKER ".pqfs-mount"
/* How old an unlocked new-* directory must be to count as a crash's. */
#define NEW_STALE_SECONDS 600

/* Empties the directory open at `fd` (its entries unlinked through the
 * descriptor: nothing is looked up by path, so nothing swapped in is
 * followed), then removes `name` from `parent`, which fails harmlessly if
 * the name now means something else. */
static void remove_area_fd(int fd, int parent, const char *name)
{
    int dup_fd = dup(fd);
    if (dup_fd < 0) return;
    DIR *d = fdopendir(dup_fd);
    if (!d) {
        close(dup_fd);
        return;
    }
    rewinddir(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    unlinkat(parent, name, AT_REMOVEDIR);
}

/* Removes the mount-* directories no daemon holds (and new-* ones a crash
 * left during setup): only real directories (not symlinks), ours (owner
 * and marker), unlocked.  A new-* one is looked at only once it is old, so
 * a mount being set up now is never locked by this sweep. */
static void remove_dead_areas(int dir_fd)
{
    int scan_fd = dup(dir_fd);
    DIR *d = scan_fd >= 0 ? fdopendir(scan_fd) : NULL;
    if (!d) {
        if (scan_fd >= 0) close(scan_fd);
        return;
    }
    rewinddir(d); /* a dup shares the offset: from the start */
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        bool live = !strncmp(de->d_name, LIVE_PREFIX, strlen(LIVE_PREFIX));
        bool fresh = !strncmp(de->d_name, NEW_PREFIX, strlen(NEW_PREFIX));
        if (!live && !fresh) continue;
        int fd = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        /* The owner, age and lock test the lake's sweep of part-file
         * temporaries makes too (pq_fd_abandoned). */
        bool marked = faccessat(fd, MARKER, F_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
        if (marked && pq_fd_abandoned(fd, live ? 0 : NEW_STALE_SECONDS)) remove_area_fd(fd, dir_fd, de->d_name);
        close(fd); /* drops the lock */
    }
    closedir(d);
}

/* Whether `inner` is `outer` or below it (both absolute, resolved). */
static bool at_or_below(const char *inner, const char *outer)
{
    size_t n = strlen(outer);
    if (n == 1) return true; /* "/" */
    return !strncmp(inner, outer, n) && (inner[n] == '\0' || inner[n] == '/');
}

/* `path` resolved as far as it exists (its deepest existing ancestor through
 * realpath, the rest appended): where a directory not made yet would be. */
static bool resolve_prefix(const char *path, char *out, size_t cap)
{
    char head[PATH_MAX];
    if (snprintf(head, sizeof head, "%s", path) >= (int)sizeof head) return false;
    const char *rest = ""; /* the part of `path` that does not exist yet: "" or "/..." */
    char real[PATH_MAX];
    for (;;) {
        if (head[0] && realpath(head, real)) break;
        char *slash = strrchr(head, '/');
        if (!slash || slash == head) {
            /* Up to the root, or a relative path's first component. */
            if (!realpath(slash ? "/" : ".", real)) return false;
            rest = slash ? path : NULL;
            break;
        }
        *slash = '\0';
        rest = path + (slash - head);
    }
    int w = rest ? snprintf(out, cap, "%s%s", strcmp(real, "/") ? real : "", rest)
                 : snprintf(out, cap, "%s/%s", strcmp(real, "/") ? real : "", path);
    return w > 0 && (size_t)w < cap;
}

int pqfs_cache_area_open(const char *cache_dir, const char *mountpoint, pqfs_cache_area *out, pq_error *err)
{
    out->path[0] = '\0';
    out->lock_fd = -1;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", cache_dir) >= (int)sizeof tmp - 32) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: path too long", cache_dir);
        return -1;
    }
    /* Refused before anything is made in the mountpoint. */
    char where[PATH_MAX], real_mnt[PATH_MAX];
    if (mountpoint && resolve_prefix(tmp, where, sizeof where) && realpath(mountpoint, real_mnt) &&
        at_or_below(where, real_mnt)) {
        pq_fail(err, PQ_E_IO, "cache_dir %s is inside the mountpoint %s (the mount would hide it)", cache_dir, mountpoint);
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(tmp, 0755);
        *p = '/';
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: %s", cache_dir, strerror(errno));
        return -1;
    }
    int dir_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (dir_fd < 0 || fstat(dir_fd, &st) != 0) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: %s", cache_dir, strerror(errno));
        if (dir_fd >= 0) close(dir_fd);
        return -1;
    }
    /* Ours, set to 0700 (SPEC); or a shared sticky directory such as /tmp,
     * whose entries others cannot rename or remove, left as it is.  Another
     * user's directory is refused: they could swap what is staged in it. */
    bool sticky = st.st_mode & S_ISVTX;
    if (!sticky && st.st_uid != geteuid()) {
        pq_fail(err, PQ_E_IO, "cache_dir %s belongs to another user (uid %lu)", cache_dir, (unsigned long)st.st_uid);
        close(dir_fd);
        return -1;
    }
    if (!sticky && fchmod(dir_fd, 0700) != 0) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: %s", cache_dir, strerror(errno));
        close(dir_fd);
        return -1;
    }
    remove_dead_areas(dir_fd);
    if (!sticky) {
        /* Files an older pqfs kept directly in cache_dir (never in a shared
         * directory: there they may be someone else's). */
        int scan_fd = dup(dir_fd);
        DIR *d = scan_fd >= 0 ? fdopendir(scan_fd) : NULL;
        if (d) rewinddir(d); /* after the sweep's reading through a dup */
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL)
            if (!strncmp(de->d_name, "result-", 7) || !strncmp(de->d_name, "stage-", 6)) unlinkat(dir_fd, de->d_name, 0);
        if (d) closedir(d);
        else if (scan_fd >= 0) close(scan_fd);
    }
    close(dir_fd);
    char fresh[PATH_MAX];
    if (snprintf(fresh, sizeof fresh, "%s/" NEW_PREFIX "XXXXXX", tmp) >= (int)sizeof fresh || !mkdtemp(fresh)) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: cannot make a directory in it: %s", cache_dir, strerror(errno));
        return -1;
    }
    int fd = open(fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int marker = fd >= 0 ? openat(fd, MARKER, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    /* Blocking: a sweep holds another mount's lock only for a moment. */
    if (fd < 0 || marker < 0 || flock(fd, LOCK_EX) != 0) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: cannot set up %s: %s", cache_dir, fresh, strerror(errno));
        if (marker >= 0) {
            close(marker);
            unlinkat(fd, MARKER, 0);
        }
        if (fd >= 0) close(fd);
        rmdir(fresh);
        return -1;
    }
    close(marker);
    /* Locked: now it may carry the name a scan looks at. */
    if (snprintf(out->path, sizeof out->path, "%s/" LIVE_PREFIX "%s", tmp, fresh + strlen(tmp) + 1 + strlen(NEW_PREFIX)) >=
            (int)sizeof out->path ||
        rename(fresh, out->path) != 0) {
        pq_fail(err, PQ_E_IO, "cache_dir %s: %s", cache_dir, strerror(errno));
        unlinkat(fd, MARKER, 0);
        close(fd);
        rmdir(fresh);
        out->path[0] = '\0';
        return -1;
    }
    out->lock_fd = fd;
    return 0;
}

void pqfs_cache_area_close(pqfs_cache_area *a)
{
    if (a->lock_fd < 0) return;
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", a->path);
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = '\0';
        int pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd >= 0) {
            /* Emptied through the locked descriptor, not by name. */
            remove_area_fd(a->lock_fd, pfd, slash + 1);
            close(pfd);
        }
    }
    close(a->lock_fd);
    a->lock_fd = -1;
}
