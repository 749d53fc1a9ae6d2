/* The daemon's own directory inside cache_dir.
 *
 * Every mount keeps its result and staging files in cache_dir/mount-XXXXXX,
 * made at start and locked (flock) for the daemon's life.  Mounts that share
 * a cache_dir (root's default is one for all) never touch each other's
 * files; the directories of daemons that are gone (unlocked) are removed at
 * the next mount, with what a crash left in them. */
#ifndef PQFS_CACHE_AREA_H
#define PQFS_CACHE_AREA_H

#include <stddef.h>

#include "status.h"

typedef struct pqfs_cache_area {
    char path[4096];             /* cache_dir/mount-XXXXXX: the lake's cache_dir */
    int lock_fd;                 /* -1: none */
} pqfs_cache_area;

/* Makes cache_dir (mode 0700; an existing one is set to 0700 unless it is a
 * shared sticky directory such as /tmp, or not the caller's), refuses one
 * at or below the mountpoint (the mount would hide it), removes unlocked
 * mount-* directories, and makes and locks this mount's.  Returns 0, or -1
 * with a message in err. */
int pqfs_cache_area_open(const char *cache_dir, const char *mountpoint, pqfs_cache_area *out, pq_error *err);

/* Removes this mount's directory (and anything left in it). */
void pqfs_cache_area_close(pqfs_cache_area *a);

#endif
