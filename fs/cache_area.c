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
#include <time.h>
#include <unistd.h>

/* A directory still being set up (made, not yet locked) has this prefix, so
 * another mount scanning at that moment never takes it for a dead one. */
#define NEW_PREFIX "new-"
#define LIVE_PREFIX "mount-"
/* How old an unlocked new-* directory must be to count as a crash's. */
#define NEW_STALE_SECONDS 600

/* Empties and removes the directory `name` in `parent` (its files only: a
 * mount's directory holds no subdirectories). */
static void remove_area(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    unlinkat(parent, name, AT_REMOVEDIR);
}

/* Removes the mount-* directories no daemon holds (and new-* ones a crash
 * left during setup). */
static void remove_dead_areas(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    time_t now = time(NULL);
    while ((de = readdir(d)) != NULL) {
        bool live = !strncmp(de->d_name, LIVE_PREFIX, strlen(LIVE_PREFIX));
        bool fresh = !strncmp(de->d_name, NEW_PREFIX, strlen(NEW_PREFIX));
        if (!live && !fresh) continue;
        int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st;
        bool dead = flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                    (live || (fstat(fd, &st) == 0 && now - st.st_mtime > NEW_STALE_SECONDS));
        if (dead) remove_area(dirfd(d), de->d_name);
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

int pqfs_cache_area_open(const char *cache_dir, const char *mountpoint, pqfs_cache_area *out, char *err, size_t cap)
{
    out->path[0] = '\0';
    out->lock_fd = -1;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", cache_dir) >= (int)sizeof tmp - 32) {
        snprintf(err, cap, "cache_dir %s: path too long", cache_dir);
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(tmp, 0755);
        *p = '/';
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
        snprintf(err, cap, "cache_dir %s: %s", cache_dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(tmp, &st) != 0) {
        snprintf(err, cap, "cache_dir %s: %s", cache_dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, cap, "cache_dir %s: not a directory", cache_dir);
        return -1;
    }
    /* 0700 (SPEC), but never a shared directory's mode (cache_dir=/tmp):
     * this mount's own directory below is 0700 in any case. */
    if (!(st.st_mode & S_ISVTX) && st.st_uid == geteuid() && chmod(tmp, 0700) != 0) {
        snprintf(err, cap, "cache_dir %s: %s", cache_dir, strerror(errno));
        return -1;
    }
    char real_cache[PATH_MAX], real_mnt[PATH_MAX];
    if (mountpoint && realpath(tmp, real_cache) && realpath(mountpoint, real_mnt) && at_or_below(real_cache, real_mnt)) {
        snprintf(err, cap, "cache_dir %s is inside the mountpoint %s (the mount would hide it)", cache_dir, mountpoint);
        return -1;
    }
    remove_dead_areas(tmp);
    char fresh[PATH_MAX];
    if (snprintf(fresh, sizeof fresh, "%s/" NEW_PREFIX "XXXXXX", tmp) >= (int)sizeof fresh || !mkdtemp(fresh)) {
        snprintf(err, cap, "cache_dir %s: cannot make a directory in it: %s", cache_dir, strerror(errno));
        return -1;
    }
    int fd = open(fresh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, cap, "cache_dir %s: cannot lock %s: %s", cache_dir, fresh, strerror(errno));
        if (fd >= 0) close(fd);
        rmdir(fresh);
        return -1;
    }
    /* Locked: now it may carry the name a scan looks at. */
    if (snprintf(out->path, sizeof out->path, "%s/" LIVE_PREFIX "%s", tmp, fresh + strlen(tmp) + 1 + strlen(NEW_PREFIX)) >=
            (int)sizeof out->path ||
        rename(fresh, out->path) != 0) {
        snprintf(err, cap, "cache_dir %s: %s", cache_dir, strerror(errno));
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
            remove_area(pfd, slash + 1);
            close(pfd);
        }
    }
    close(a->lock_fd);
    a->lock_fd = -1;
}
