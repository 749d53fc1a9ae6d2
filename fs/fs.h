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
} pqfs_fs_opts;

pqfs_fs *pqfs_fs_new(pq_lake *lake, const pqfs_fs_opts *o);
void pqfs_fs_free(pqfs_fs *fs);
/* Marks the session so blocked reads can give up on shutdown. */
void pqfs_fs_set_session(pqfs_fs *fs, struct fuse_session *se);
const struct fuse_lowlevel_ops *pqfs_fs_ops(void);

/* The errno for an engine error class. */
int pqfs_errno(const pq_error *err);

#endif
