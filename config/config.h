/* pqfs configuration: the [pqfs], [s3] and [table NAME] sections of an ini
 * file (SPEC section 7), environment variables and -o options, validated into
 * one struct.
 *
 * Precedence: command line (-o key=value), then environment (PQFS_<KEY> for
 * [pqfs] keys, AWS_* for S3 credentials), then the ini file, then defaults.
 * An unknown section or key, or a bad value, is an error that names the file
 * and line ("lake.ini:12: unknown key 'treads' in [pqfs]").  Secrets
 * (secret_access_key, session_token) are never printed by pqfs_config_dump. */
#ifndef PQFS_CONFIG_H
#define PQFS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "status.h"
#include "table.h"

typedef enum pqfs_log_level {
    PQFS_LOG_ERROR = 0,
    PQFS_LOG_WARN = 1,
    PQFS_LOG_INFO = 2,
    PQFS_LOG_DEBUG = 3,
} pqfs_log_level;

typedef struct pqfs_partition_decl {
    char *name;
    pq_part_type type;             /* the engine's (table.h) */
} pqfs_partition_decl;

typedef struct pqfs_table_config {
    char *name;                    /* [table NAME] */
    pqfs_partition_decl *partitions; /* partitions = dt:date, region:string */
    int n_partitions;
    pq_codec compression;          /* compression = zstd:3 | snappy | lz4_raw | gzip[:N] | brotli[:N] | none
                                      (pq_codec_parse, codec.h) */
    int compression_level;         /* 0: the codec's default (zstd 3) */
    int64_t row_group_rows;        /* default 1048576 */
    int64_t page_size;             /* page_size = 1MiB (default) */
    bool dictionary;               /* default true */
    bool page_index;               /* page_statistics / page_index: default true */
    char **bloom_filter;           /* bloom_filter = user_id, email */
    int n_bloom_filter;
    char **sort_by;                /* sort_by = ts, id */
    int n_sort_by;
} pqfs_table_config;

typedef struct pqfs_config {
    /* [pqfs] */
    char *source;                  /* required: /path, http(s)://host/prefix, s3://bucket/prefix */
    char *mountpoint;              /* from the command line */
    bool read_only;                /* default false */
    bool sized_csv;                /* data.csv materialized on lookup, its size exact (as with sized=1) */
    int threads;                   /* 0 = number of cores (default) */
    char *cache_dir;               /* default /var/cache/pqfs (or $XDG_CACHE_HOME/pqfs when not root) */
    uint64_t cache_size;           /* bytes; default 2GiB; accepts 512MiB, 2GiB, 1.5G, 100000 */
    uint64_t metadata_ttl_ms;      /* default 5s; accepts 500ms, 5s, 2m, 1h, 0 */
    pqfs_log_level log_level;      /* default info */
    bool foreground;               /* -f */
    char **fuse_opts;              /* -o options that are not pqfs keys (allow_other, ro, ...), passed to FUSE */
    int n_fuse_opts;
    bool multi_user;               /* allow_other or allow_root among them (docs/permissions.md) */
    bool nonempty;                 /* -o nonempty: mount even where a pqfs mount already is */
    /* Remote lakes (HTTP, S3): who owns every entry and their modes
     * (uid=, gid=, dir_mode=, file_mode=; octal modes).  -1: unset (the
     * mounting user; 0755 (0555 read-only) and 0444). */
    int64_t uid, gid;
    int dir_mode, file_mode;

    /* [s3] */
    char *s3_endpoint;             /* default: https://s3.<region>.amazonaws.com */
    char *s3_region;               /* default us-east-1 */
    bool s3_path_style;            /* default false */
    char *s3_access_key_id;
    char *s3_secret_access_key;
    char *s3_session_token;

    pqfs_table_config *tables;     /* [table NAME] sections */
    int n_tables;
    pqfs_table_config table_defaults; /* what a table without a section gets */

    char *ini_path;                /* the ini file read, if any */
} pqfs_config;

/* Fills defaults. */
void pqfs_config_init(pqfs_config *c);
void pqfs_config_free(pqfs_config *c);

/* pqfs_config_from_args results besides 0 and -1: -h/--help or -V/--version
 * was given (nothing else is applied or checked); the caller prints
 * pqfs_config_usage() or its version and exits 0. */
#define PQFS_CONFIG_HELP 1
#define PQFS_CONFIG_VERSION 2

/* The command-line synopsis and options, for --help and usage errors. */
const char *pqfs_config_usage(void);

/* Parses `pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]` (argv[0] is the
 * program).  SOURCE ending in ".ini" (or naming an existing regular file) is
 * read as an ini file whose [pqfs] source is the lake; otherwise SOURCE is the
 * lake.  Also accepts the mount helper form `pqfs SOURCE MOUNTPOINT -o opts`
 * used by mount(8) through fstab (fuse.pqfs), where opts may include
 * "defaults", "_netdev", "noauto", "user", "rw", "ro" (ro = read_only=true).
 * Environment is read from `envp` (NULL-terminated "KEY=VALUE" strings) so
 * tests can pass their own.  On error sets err (a one-line message, class
 * PQ_E_USAGE; PQ_E_NOMEM when out of memory) and returns -1 (PQ_ERR).
 *
 * c comes from pqfs_config_init.  Options and arguments may come in any
 * order; "-o" may repeat and "-oopts" works too; "--" ends the options.  With
 * one argument it is the MOUNTPOINT and the source comes from PQFS_SOURCE or
 * -o source=.  -d means -f plus log_level=debug plus FUSE's "debug".  -o
 * options that are [pqfs] keys are applied (a bare "read_only" means true);
 * "ro" sets read_only and also goes to FUSE; mount(8)-only options (rw,
 * defaults, _netdev, auto, noauto, user, user=NAME, nouser, users, owner,
 * group, nofail, x-*, comment=*) are dropped; everything else goes to
 * fuse_opts unchanged, one option per entry.  Relative paths (SOURCE,
 * MOUNTPOINT, cache_dir) are made absolute against the working directory,
 * and relative paths inside the ini against the ini's directory.  envp NULL
 * means the process environment.  Ends with pqfs_config_validate. */
int pqfs_config_from_args(pqfs_config *c, int argc, char **argv, char **envp, pq_error *err);

/* Reads an ini file (precedence below environment and -o).  Exposed for tests. */
int pqfs_config_load_ini(pqfs_config *c, const char *path, pq_error *err);

/* Applies one key=value of the [pqfs] section (from -o or the environment). */
int pqfs_config_set(pqfs_config *c, const char *key, const char *value, const char *where, pq_error *err);

/* Final checks after all sources (source set, mountpoint set, values in range).
 * Also fills s3_endpoint, when none was given, with AWS's endpoint for
 * s3_region. */
int pqfs_config_validate(pqfs_config *c, pq_error *err);

/* The table section for `name`, or the defaults. */
const pqfs_table_config *pqfs_config_table(const pqfs_config *c, const char *name);

/* Effective configuration as ini text, secrets masked ("***"). */
int pqfs_config_dump(const pqfs_config *c, char **out);

/* Value parsers (exposed for tests): "2GiB" "512MiB" "1.5G" "100000" (bytes),
 * "5s" "500ms" "2m" "1h" "0" (milliseconds), "true/false/yes/no/on/off/1/0". */
int pqfs_parse_size(const char *s, uint64_t *out);
int pqfs_parse_duration_ms(const char *s, uint64_t *out);
int pqfs_parse_bool(const char *s, bool *out);

#endif
