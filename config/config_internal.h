/* Internal interface of the configuration module, shared by config.c (sources,
 * validation, dump), config_ini.c (the ini reader) and config_values.c (value
 * parsers and what each key means).  Not for use outside config/. */
#ifndef PQFS_CONFIG_INTERNAL_H
#define PQFS_CONFIG_INTERNAL_H

#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Which section a key belongs to. */
typedef enum cfg_section_kind {
    CFG_SECTION_NONE = 0, /* before the first section header */
    CFG_SECTION_PQFS,
    CFG_SECTION_S3,
    CFG_SECTION_TABLE,
} cfg_section_kind;

/* Keys, numbered per section.  Aliases (page_statistics) map to one id so a
 * section that names both is a duplicate-key error. */
enum {
    CFG_PQFS_SOURCE,
    CFG_PQFS_READ_ONLY,
    CFG_PQFS_THREADS,
    CFG_PQFS_CACHE_DIR,
    CFG_PQFS_CACHE_SIZE,
    CFG_PQFS_METADATA_TTL,
    CFG_PQFS_LOG_LEVEL,
    CFG_PQFS_UID,
    CFG_PQFS_GID,
    CFG_PQFS_DIR_MODE,
    CFG_PQFS_FILE_MODE,
    CFG_PQFS_SIZED_CSV,
    CFG_PQFS_NKEYS,
};
enum {
    CFG_S3_ENDPOINT,
    CFG_S3_REGION,
    CFG_S3_PATH_STYLE,
    CFG_S3_ACCESS_KEY_ID,
    CFG_S3_SECRET_ACCESS_KEY,
    CFG_S3_SESSION_TOKEN,
    CFG_S3_NKEYS,
};
enum {
    CFG_TABLE_PARTITIONS,
    CFG_TABLE_COMPRESSION,
    CFG_TABLE_ROW_GROUP_ROWS,
    CFG_TABLE_PAGE_SIZE,
    CFG_TABLE_DICTIONARY,
    CFG_TABLE_PAGE_INDEX,
    CFG_TABLE_BLOOM_FILTER,
    CFG_TABLE_SORT_BY,
    CFG_TABLE_NKEYS,
};
#define CFG_MAX_KEYS 8 /* the largest of the *_NKEYS above */

/* Limits that are checked when a value is set and again by validate. */
#define CFG_THREADS_MAX 1024
#define CFG_ROW_GROUP_ROWS_MAX INT32_MAX /* page headers count values in int32 */
#define CFG_PAGE_SIZE_MAX (INT64_C(1) << 30)

/* ------------------------------------------------------------ helpers */


/* strdup that reports failure as NULL (callers turn that into "out of memory"). */
char *cfg_strdup(const char *s);
char *cfg_strndup(const char *s, size_t n);

/* Replaces *slot with a copy of value (NULL clears it).  -1 when out of memory. */
int cfg_set_string(char **slot, const char *value);

/* Copies [s, s+n) without leading and trailing whitespace. */
char *cfg_trimmed_copy(const char *s, size_t n);

/* Makes a relative path absolute against base_dir (the ini file's directory),
 * or against the working directory when base_dir is NULL, and drops trailing
 * slashes.  NULL when out of memory or the working directory is unknown. */
char *cfg_absolute_path(const char *path, const char *base_dir);

/* "NAME=VALUE" lookup in a NULL-terminated environment; NULL when absent. */
const char *cfg_env_get(char **envp, const char *name);

/* The default cache directory for this user: /var/cache/pqfs for root, else
 * $XDG_CACHE_HOME/pqfs or $HOME/.cache/pqfs (HOME from the password database
 * when unset), else /tmp/pqfs-UID.  NULL when out of memory. */
char *cfg_default_cache_dir(char **envp);

/* ------------------------------------------------------------ sources */

typedef enum cfg_source_kind {
    CFG_SOURCE_PATH = 0,
    CFG_SOURCE_HTTP,
    CFG_SOURCE_HTTPS,
    CFG_SOURCE_S3,
    CFG_SOURCE_BAD_SCHEME, /* "ftp://...": a scheme pqfs does not speak */
} cfg_source_kind;

/* Classifies a source by its scheme (case-insensitive); *scheme_len is the
 * length of the scheme name when there is one ("s3" -> 2), else 0. */
cfg_source_kind cfg_source_kind_of(const char *s, size_t *scheme_len);

/* ------------------------------------------------------------ keys */

/* The section kind for a section header's first word, or CFG_SECTION_NONE. */
cfg_section_kind cfg_section_kind_of(const char *word, size_t len);
/* The key id in a section (aliases resolved), or -1. */
int cfg_key_id(cfg_section_kind kind, const char *name);
const char *cfg_key_name(cfg_section_kind kind, int id);

/* Apply one key's value; value NULL means a bare "-o key" (only booleans
 * accept it).  `where` prefixes error messages ("lake.ini:7", "-o",
 * "PQFS_THREADS").  Relative paths are taken against base_dir (NULL: the
 * working directory). */
int cfg_apply_pqfs(pqfs_config *c, int key, const char *value, const char *base_dir,
                   const char *where, pq_error *err);
int cfg_apply_s3(pqfs_config *c, int key, const char *value, const char *where, pq_error *err);
int cfg_apply_table(pqfs_table_config *t, int key, const char *value, const char *where,
                    pq_error *err);

/* Table configs: built-in defaults, deep copy, free. */
void cfg_table_defaults(pqfs_table_config *t);
int cfg_table_copy(pqfs_table_config *dst, const pqfs_table_config *src);
void cfg_table_free(pqfs_table_config *t);

/* Checks a table name from "[table NAME]": NULL when fine, else why not. */
const char *cfg_table_name_problem(const char *name);

/* ------------------------------------------------------------ names for the dump */

const char *cfg_log_level_name(pqfs_log_level level);
const char *cfg_part_type_name(pq_part_type type);
/* "2GiB", "512MiB", "1536" (bytes that are no whole KiB); buf >= 32 bytes. */
void cfg_format_size(uint64_t bytes, char *buf, size_t cap);
/* "5s", "500ms", "2m", "1h", "0"; buf >= 32 bytes. */
void cfg_format_duration(uint64_t ms, char *buf, size_t cap);

#endif
