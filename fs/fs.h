/* The FUSE adapter: low-level operations over a pq_lake.  Each operation
 * decodes the request, calls the lake, and replies once; the errno of a
 * failure is chosen in one place (pqfs_errno). */
#ifndef PQFS_FS_H
#define PQFS_FS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "lake.h"

typedef struct pqfs_fs pqfs_fs;

typedef struct pqfs_fs_opts {
    double entry_timeout;        /* seconds directory entries are trusted (metadata_ttl) */
    bool read_only;
    /* Seconds a closed file with a temporary name (.NAME, as rsync's) waits
     * for its rename before it is discarded; 0: 600. */
    int staged_timeout_s;
    /* allow_other or allow_root (with default_permissions): callers are
     * other users; writes are checked against them (pq_lake_create_as)
     * and /.pqfs/errors is the mount owner's only. */
    bool multi_user;
    /* Report the lake's owners and modes (pq_lake_attr.has_owner): a
     * multi-user mount, or a remote lake (its uid=, gid=, dir_mode=,
     * file_mode=); else everything is the mounting user's, as before. */
    bool report_owners;
} pqfs_fs_opts;

pqfs_fs *pqfs_fs_new(pq_lake *lake, const pqfs_fs_opts *o);
void pqfs_fs_free(pqfs_fs *fs);
/* Marks the session so blocked reads can give up on shutdown. */
void pqfs_fs_set_session(pqfs_fs *fs, struct fuse_session *se);
const struct fuse_lowlevel_ops *pqfs_fs_ops(void);
/* Discards the parked temporary files whose time ran out (called once a
 * second: the space they hold in the cache is freed even on an idle mount). */
void pqfs_fs_expire(pqfs_fs *fs);

/* The errno for an engine error class. */
int pqfs_errno(const pq_error *err);

#endif
