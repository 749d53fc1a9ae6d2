/* Value parsers and the meaning of every key: sizes, durations, booleans, log
 * levels, compression specs, partition declarations and column lists, and the
 * functions that apply one key of [pqfs], [s3] or [table NAME] to the config.
 *
 * Every apply function reports "<where>: <key>: <what is wrong>", where `where`
 * is "lake.ini:7", "-o" or the environment variable, and never echoes the
 * value of a secret. */
#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- numbers */

static const char *skip_space(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

/* Trailing whitespace is allowed; anything else after the parsed text is not. */
static int only_space_left(const char *s)
{
    return *skip_space(s) == '\0';
}

/* Decimal digits into a uint64_t; *end is left after the last digit.  -1 when
 * there is no digit or the value overflows. */
static int parse_digits_u64(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9') {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
        p++;
    }
    if (p == s) return -1;
    *end = p;
    *out = v;
    return 0;
}

/* Up to 9 fraction digits after a '.', as numerator over *den (10^digits).
 * Digits past the ninth are ignored: they are below a billionth of the unit
 * and the results round down anyway. */
static int parse_fraction(const char *s, const char **end, uint64_t *num, uint64_t *den)
{
    *num = 0;
    *den = 1;
    const char *p = s;
    while (*p >= '0' && *p <= '9') {
        if (*den < 1000000000u) {
            *num = *num * 10 + (uint64_t)(*p - '0');
            *den *= 10;
        }
        p++;
    }
    if (p == s) return -1;
    *end = p;
    return 0;
}

/* A signed decimal integer with optional surrounding whitespace. */
static int parse_int64(const char *s, int64_t *out)
{
    const char *p = skip_space(s);
    bool negative = false;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    uint64_t mag;
    const char *end;
    if (parse_digits_u64(p, &end, &mag) < 0 || !only_space_left(end)) return -1;
    if (negative) {
        if (mag > (uint64_t)INT64_MAX + 1) return -1;
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)mag;
    }
    return 0;
}

/* ---------------------------------------------------------------- sizes */

typedef struct unit_def {
    const char *name;
    uint64_t factor;
} unit_def;

/* K/M/G/T are binary, as in tmpfs's size=2G and systemd; KB/MB/GB/TB are
 * decimal, as in DuckDB's memory_limit.  Matched case-insensitively. */
static const unit_def size_units[] = {
    {"", 1},
    {"b", 1},
    {"k", UINT64_C(1) << 10},
    {"kib", UINT64_C(1) << 10},
    {"kb", UINT64_C(1000)},
    {"m", UINT64_C(1) << 20},
    {"mib", UINT64_C(1) << 20},
    {"mb", UINT64_C(1000000)},
    {"g", UINT64_C(1) << 30},
    {"gib", UINT64_C(1) << 30},
    {"gb", UINT64_C(1000000000)},
    {"t", UINT64_C(1) << 40},
    {"tib", UINT64_C(1) << 40},
    {"tb", UINT64_C(1000000000000)},
};

int pqfs_parse_size(const char *s, uint64_t *out)
{
    if (!s) return -1;
    const char *p = skip_space(s), *end;
    uint64_t whole, frac_num = 0, frac_den = 1;
    if (parse_digits_u64(p, &end, &whole) < 0) return -1;
    p = end;
    if (*p == '.') {
        if (parse_fraction(p + 1, &end, &frac_num, &frac_den) < 0) return -1;
        p = end;
    }
    p = skip_space(p);
    const char *unit = p;
    while (*p && isalpha((unsigned char)*p)) p++;
    size_t unit_len = (size_t)(p - unit);
    if (!only_space_left(p)) return -1;

    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++) {
        const unit_def *u = &size_units[i];
        if (strlen(u->name) != unit_len || strncasecmp(u->name, unit, unit_len) != 0) continue;
        /* A fraction of a byte means nothing; "1.5" without a unit is a typo. */
        if (u->factor == 1 && frac_num != 0) return -1;
        uint64_t bytes;
        if (__builtin_mul_overflow(whole, u->factor, &bytes)) return -1;
        /* frac_num/frac_den * factor, rounded down, without overflowing:
         * factor = q*den + r, and frac_num < den <= 10^9 keeps frac_num*r small. */
        uint64_t q = u->factor / frac_den, r = u->factor % frac_den;
        uint64_t part = frac_num * q + frac_num * r / frac_den;
        if (__builtin_add_overflow(bytes, part, &bytes)) return -1;
        *out = bytes;
        return 0;
    }
    return -1;
}

void cfg_format_size(uint64_t bytes, char *buf, size_t cap)
{
    static const struct {
        const char *name;
        unsigned shift;
    } units[] = {{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}};
    for (size_t i = 0; bytes != 0 && i < sizeof units / sizeof units[0]; i++) {
        uint64_t unit = UINT64_C(1) << units[i].shift;
        if (bytes % unit == 0) {
            snprintf(buf, cap, "%llu%s", (unsigned long long)(bytes / unit), units[i].name);
            return;
        }
    }
    snprintf(buf, cap, "%llu", (unsigned long long)bytes);
}

/* ---------------------------------------------------------------- durations */

static const unit_def duration_units[] = {
    {"ms", 1},
    {"s", 1000},
    {"sec", 1000},
    {"m", 60 * 1000},
    {"min", 60 * 1000},
    {"h", 60 * 60 * 1000},
    {"d", 24 * 60 * 60 * 1000},
};

/* "5s", "500ms", "2m", "1h", "1.5s", "1h30m" (components add up), "0".  A bare
 * number is seconds, like FUSE's attr_timeout and mountpoint-s3's
 * --metadata-ttl. */
int pqfs_parse_duration_ms(const char *s, uint64_t *out)
{
    if (!s) return -1;
    const char *p = skip_space(s);
    uint64_t total = 0;
    int components = 0;
    while (*p) {
        const char *end;
        uint64_t whole, frac_num = 0, frac_den = 1;
        if (parse_digits_u64(p, &end, &whole) < 0) return -1;
        p = end;
        if (*p == '.') {
            if (parse_fraction(p + 1, &end, &frac_num, &frac_den) < 0) return -1;
            p = end;
        }
        p = skip_space(p);
        const char *unit = p;
        while (*p && isalpha((unsigned char)*p)) p++;
        size_t unit_len = (size_t)(p - unit);
        uint64_t factor = 0;
        if (unit_len == 0) {
            /* Only a lone number may leave out its unit. */
            if (components > 0 || !only_space_left(p)) return -1;
            factor = 1000;
        }
        for (size_t i = 0; factor == 0 && i < sizeof duration_units / sizeof duration_units[0]; i++) {
            const unit_def *u = &duration_units[i];
            if (strlen(u->name) == unit_len && strncasecmp(u->name, unit, unit_len) == 0)
                factor = u->factor;
        }
        if (factor == 0) return -1;
        uint64_t ms;
        if (__builtin_mul_overflow(whole, factor, &ms)) return -1;
        /* frac_num < 10^9 and factor <= 8.64e7 keep the product in range. */
        if (__builtin_add_overflow(ms, frac_num * factor / frac_den, &ms)) return -1;
        if (__builtin_add_overflow(total, ms, &total)) return -1;
        components++;
        p = skip_space(p);
    }
    if (components == 0) return -1;
    *out = total;
    return 0;
}

void cfg_format_duration(uint64_t ms, char *buf, size_t cap)
{
    static const struct {
        const char *name;
        uint64_t ms;
    } units[] = {{"h", 3600000}, {"m", 60000}, {"s", 1000}};
    if (ms == 0) {
        snprintf(buf, cap, "0");
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ms % units[i].ms == 0) {
            snprintf(buf, cap, "%llu%s", (unsigned long long)(ms / units[i].ms), units[i].name);
            return;
        }
    }
    snprintf(buf, cap, "%llums", (unsigned long long)ms);
}

/* ---------------------------------------------------------------- booleans, names */

int pqfs_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    if (!s) return -1;
    const char *p = skip_space(s);
    size_t n = strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strlen(yes[i]) == n && strncasecmp(p, yes[i], n) == 0) {
            *out = true;
            return 0;
        }
        if (strlen(no[i]) == n && strncasecmp(p, no[i], n) == 0) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

static const char *const log_level_names[] = {"error", "warn", "info", "debug"};

const char *cfg_log_level_name(pqfs_log_level level)
{
    unsigned i = (unsigned)level;
    return i < sizeof log_level_names / sizeof log_level_names[0] ? log_level_names[i] : "?";
}

static int parse_log_level(const char *s, pqfs_log_level *out)
{
    for (unsigned i = 0; i < sizeof log_level_names / sizeof log_level_names[0]; i++) {
        if (strcasecmp(s, log_level_names[i]) == 0) {
            *out = (pqfs_log_level)i;
            return 0;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = PQFS_LOG_WARN;
        return 0;
    }
    return -1;
}

const char *cfg_part_type_name(pq_part_type type)
{
    switch (type) {
    case PQ_PART_INFER: return "infer";
    case PQ_PART_INT64: return "int64";
    case PQ_PART_DATE: return "date";
    case PQ_PART_STRING: return "string";
    case PQ_PART_DOUBLE: return "double";
    case PQ_PART_BOOL: return "boolean";
    case PQ_PART_TIMESTAMP: return "timestamp";
    case PQ_PART_TIMESTAMP_NTZ: return "timestamp_ntz";
    default: return pq_part_is_decimal(type) ? "decimal" : "?";
    }
}

/* ---------------------------------------------------------------- keys */

typedef struct key_def {
    const char *name;
    int id;
} key_def;

static const key_def pqfs_keys[] = {
    {"source", CFG_PQFS_SOURCE},           {"read_only", CFG_PQFS_READ_ONLY},
    {"threads", CFG_PQFS_THREADS},         {"cache_dir", CFG_PQFS_CACHE_DIR},
    {"cache_size", CFG_PQFS_CACHE_SIZE},   {"metadata_ttl", CFG_PQFS_METADATA_TTL},
    {"log_level", CFG_PQFS_LOG_LEVEL},     {"uid", CFG_PQFS_UID},
    {"gid", CFG_PQFS_GID},                 {"dir_mode", CFG_PQFS_DIR_MODE},
    {"file_mode", CFG_PQFS_FILE_MODE},     {"sized_csv", CFG_PQFS_SIZED_CSV},
};
static const key_def s3_keys[] = {
    {"endpoint", CFG_S3_ENDPOINT},
    {"region", CFG_S3_REGION},
    {"path_style", CFG_S3_PATH_STYLE},
    {"access_key_id", CFG_S3_ACCESS_KEY_ID},
    {"secret_access_key", CFG_S3_SECRET_ACCESS_KEY},
    {"session_token", CFG_S3_SESSION_TOKEN},
};
/* The canonical name of each id comes first. */
static const key_def table_keys[] = {
    {"partitions", CFG_TABLE_PARTITIONS},
    {"compression", CFG_TABLE_COMPRESSION},
    {"row_group_rows", CFG_TABLE_ROW_GROUP_ROWS},
    {"page_size", CFG_TABLE_PAGE_SIZE},
    {"dictionary", CFG_TABLE_DICTIONARY},
    {"page_index", CFG_TABLE_PAGE_INDEX},
    {"page_statistics", CFG_TABLE_PAGE_INDEX},
    {"bloom_filter", CFG_TABLE_BLOOM_FILTER},
    {"sort_by", CFG_TABLE_SORT_BY},
};

static const key_def *keys_of(cfg_section_kind kind, size_t *n)
{
    switch (kind) {
    case CFG_SECTION_PQFS: *n = sizeof pqfs_keys / sizeof pqfs_keys[0]; return pqfs_keys;
    case CFG_SECTION_S3: *n = sizeof s3_keys / sizeof s3_keys[0]; return s3_keys;
    case CFG_SECTION_TABLE: *n = sizeof table_keys / sizeof table_keys[0]; return table_keys;
    case CFG_SECTION_NONE: break;
    }
    *n = 0;
    return NULL;
}

cfg_section_kind cfg_section_kind_of(const char *word, size_t len)
{
    if (len == 4 && strncasecmp(word, "pqfs", 4) == 0) return CFG_SECTION_PQFS;
    if (len == 2 && strncasecmp(word, "s3", 2) == 0) return CFG_SECTION_S3;
    if (len == 5 && strncasecmp(word, "table", 5) == 0) return CFG_SECTION_TABLE;
    return CFG_SECTION_NONE;
}

/* Key names are case-insensitive, like section names. */
int cfg_key_id(cfg_section_kind kind, const char *name)
{
    size_t n;
    const key_def *keys = keys_of(kind, &n);
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(keys[i].name, name) == 0) return keys[i].id;
    return -1;
}

const char *cfg_key_name(cfg_section_kind kind, int id)
{
    size_t n;
    const key_def *keys = keys_of(kind, &n);
    for (size_t i = 0; i < n; i++)
        if (keys[i].id == id) return keys[i].name;
    return "?";
}

/* ---------------------------------------------------------------- applying values */

/* "<where>: <key>: <why>" and -1. */
static int value_fail(pq_error *err, const char *where, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int value_fail(pq_error *err, const char *where, const char *key, const char *fmt, ...)
{
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return pq_fail(err, PQ_E_USAGE, "%s: %s: %s", where, key, why);
}

/* The value without surrounding whitespace and without one pair of enclosing
 * double quotes (there are no escapes; quotes just let a value say where it
 * ends).  NULL when out of memory. */
static char *clean_value(const char *value)
{
    const char *p = skip_space(value);
    size_t n = strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
    if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
        p++;
        n -= 2;
    }
    return cfg_strndup(p, n);
}

static int apply_int(const char *v, int64_t lo, int64_t hi, int64_t *out, const char *where,
                     const char *key, pq_error *err)
{
    int64_t n;
    if (parse_int64(v, &n) < 0) {
        /* Tell "too large" apart from "not a number" for a digit string. */
        const char *p = v + (*v == '-' || *v == '+');
        if (*p && strspn(p, "0123456789") == strlen(p))
            return value_fail(err, where, key, "%s is out of range (%lld..%lld)", v,
                              (long long)lo, (long long)hi);
        return value_fail(err, where, key, "'%s' is not a number", v);
    }
    if (n < lo || n > hi)
        return value_fail(err, where, key, "%lld is out of range (%lld..%lld)", (long long)n,
                          (long long)lo, (long long)hi);
    *out = n;
    return 0;
}

static int apply_bool(const char *v, bool *out, const char *where, const char *key, pq_error *err)
{
    if (pqfs_parse_bool(v, out) < 0)
        return value_fail(err, where, key,
                          "'%s' is not a boolean (true/false, yes/no, on/off, 1/0)", v);
    return 0;
}

static int apply_size(const char *v, uint64_t *out, const char *where, const char *key, pq_error *err)
{
    if (pqfs_parse_size(v, out) < 0)
        return value_fail(err, where, key, "'%s' is not a size (e.g. 100000, 512MiB, 2GiB, 1.5G)",
                          v);
    return 0;
}

/* Lower-cases the scheme and drops trailing slashes after the authority, so
 * "S3://bucket/prefix/" and "s3://bucket/prefix" name the same lake. */
static void normalize_url(char *url, size_t scheme_len)
{
    for (size_t i = 0; i < scheme_len; i++) url[i] = (char)tolower((unsigned char)url[i]);
    size_t n = strlen(url), authority = scheme_len + 3;
    while (n > authority + 1 && url[n - 1] == '/') url[--n] = '\0';
}

/* The text between "scheme://" and the next '/' (bucket or host). */
static size_t authority_length(const char *url, size_t scheme_len)
{
    const char *a = url + scheme_len + 3;
    return strcspn(a, "/");
}

static int apply_source(pqfs_config *c, const char *v, const char *base_dir, const char *where,
                        pq_error *err)
{
    if (*v == '\0') return value_fail(err, where, "source", "empty value");
    /* file:///data/lake is a local path spelled as a URL (DuckDB accepts it). */
    if (strncasecmp(v, "file://", 7) == 0) {
        if (v[7] != '/')
            return value_fail(err, where, "source", "'%s': file:// takes an absolute path", v);
        v += 7;
    }
    size_t scheme_len;
    cfg_source_kind kind = cfg_source_kind_of(v, &scheme_len);
    char *resolved = NULL;
    switch (kind) {
    case CFG_SOURCE_BAD_SCHEME:
        return value_fail(err, where, "source",
                          "unsupported scheme '%.*s' (use a path, http://, https:// or s3://)",
                          (int)scheme_len, v);
    case CFG_SOURCE_PATH:
        resolved = cfg_absolute_path(v, base_dir);
        if (!resolved) return pq_fail(err, PQ_E_USAGE, "%s: source: cannot resolve '%s'", where, v);
        break;
    case CFG_SOURCE_S3:
    case CFG_SOURCE_HTTP:
    case CFG_SOURCE_HTTPS:
        if (authority_length(v, scheme_len) == 0)
            return value_fail(err, where, "source", "'%s' has no %s", v,
                              kind == CFG_SOURCE_S3 ? "bucket (s3://bucket/prefix)" : "host");
        resolved = cfg_strdup(v);
        if (!resolved) return PQ_NOMEM(err);
        normalize_url(resolved, scheme_len);
        break;
    }
    free(c->source);
    c->source = resolved;
    return 0;
}

/* A mode as chmod writes it: 1 to 4 octal digits (0755, 644). */
static int apply_mode(const char *v, int *out, const char *where, const char *key, pq_error *err)
{
    size_t n = strlen(v);
    if (n == 0 || n > 4 || strspn(v, "01234567") != n)
        return value_fail(err, where, key, "'%s' is not an octal mode (e.g. 0755, 0644)", v);
    *out = (int)strtol(v, NULL, 8);
    return 0;
}

int cfg_apply_pqfs(pqfs_config *c, int key, const char *value, const char *base_dir,
                   const char *where, pq_error *err)
{
    const char *name = cfg_key_name(CFG_SECTION_PQFS, key);
    if (!value) {
        /* "-o read_only" without a value switches it on, like "-o ro". */
        if (key == CFG_PQFS_READ_ONLY || key == CFG_PQFS_SIZED_CSV) {
            *(key == CFG_PQFS_READ_ONLY ? &c->read_only : &c->sized_csv) = true;
            return 0;
        }
        return value_fail(err, where, name, "needs a value (%s=...)", name);
    }
    char *v = clean_value(value);
    if (!v) return PQ_NOMEM(err);
    int rc = 0;
    int64_t n;
    uint64_t u;
    switch (key) {
    case CFG_PQFS_SOURCE: rc = apply_source(c, v, base_dir, where, err); break;
    case CFG_PQFS_READ_ONLY: rc = apply_bool(v, &c->read_only, where, name, err); break;
    case CFG_PQFS_SIZED_CSV: rc = apply_bool(v, &c->sized_csv, where, name, err); break;
    case CFG_PQFS_THREADS:
        rc = apply_int(v, 0, CFG_THREADS_MAX, &n, where, name, err);
        if (rc == 0) c->threads = (int)n;
        break;
    case CFG_PQFS_CACHE_DIR:
        if (*v == '\0') {
            rc = value_fail(err, where, name, "empty value");
            break;
        }
        {
            char *dir = cfg_absolute_path(v, base_dir);
            if (!dir) {
                rc = pq_fail(err, PQ_E_USAGE, "%s: cache_dir: cannot resolve '%s'", where, v);
                break;
            }
            free(c->cache_dir);
            c->cache_dir = dir;
        }
        break;
    case CFG_PQFS_CACHE_SIZE:
        rc = apply_size(v, &u, where, name, err);
        if (rc == 0 && u == 0) rc = value_fail(err, where, name, "must be more than 0");
        if (rc == 0) c->cache_size = u;
        break;
    case CFG_PQFS_METADATA_TTL:
        if (pqfs_parse_duration_ms(v, &u) < 0)
            rc = value_fail(err, where, name,
                            "'%s' is not a duration (e.g. 500ms, 5s, 2m, 1h, 0)", v);
        else
            c->metadata_ttl_ms = u;
        break;
    case CFG_PQFS_UID:
    case CFG_PQFS_GID:
        /* Numbers, as mountpoint-s3 and s3fs take them; (uid_t)-1 means
         * "unchanged" to chown and is no one's. */
        rc = apply_int(v, 0, (int64_t)UINT32_MAX - 1, &n, where, name, err);
        if (rc == 0) *(key == CFG_PQFS_UID ? &c->uid : &c->gid) = n;
        break;
    case CFG_PQFS_DIR_MODE: rc = apply_mode(v, &c->dir_mode, where, name, err); break;
    case CFG_PQFS_FILE_MODE: rc = apply_mode(v, &c->file_mode, where, name, err); break;
    case CFG_PQFS_LOG_LEVEL:
        if (parse_log_level(v, &c->log_level) < 0)
            rc = value_fail(err, where, name,
                            "'%s' is not a log level (error, warn, info, debug)", v);
        break;
    default: rc = pq_fail(err, PQ_E_USAGE, "%s: unknown key in [pqfs]", where); break;
    }
    free(v);
    return rc;
}

/* An S3 endpoint is an http(s) URL with a host. */
static int apply_endpoint(pqfs_config *c, const char *v, const char *where, pq_error *err)
{
    size_t scheme_len;
    cfg_source_kind kind = cfg_source_kind_of(v, &scheme_len);
    if ((kind != CFG_SOURCE_HTTP && kind != CFG_SOURCE_HTTPS) || authority_length(v, scheme_len) == 0)
        return value_fail(err, where, "endpoint",
                          "'%s' is not an http:// or https:// URL with a host", v);
    /* Not echoed: it holds a secret.  S3 signs with the keys instead. */
    if (memchr(v + scheme_len, '@', authority_length(v, scheme_len)))
        return value_fail(err, where, "endpoint",
                          "a URL with credentials (user:password@) is not supported; give access_key_id and "
                          "secret_access_key");
    char *url = cfg_strdup(v);
    if (!url) return PQ_NOMEM(err);
    normalize_url(url, scheme_len);
    free(c->s3_endpoint);
    c->s3_endpoint = url;
    return 0;
}

int cfg_apply_s3(pqfs_config *c, int key, const char *value, const char *where, pq_error *err)
{
    const char *name = cfg_key_name(CFG_SECTION_S3, key);
    if (!value) return value_fail(err, where, name, "needs a value");
    char *v = clean_value(value);
    if (!v) return PQ_NOMEM(err);
    /* An empty value means "not set here": the default endpoint and region,
     * no credentials (anonymous access unless the environment has some). */
    const char *set = *v ? v : NULL;
    int rc = 0;
    switch (key) {
    case CFG_S3_ENDPOINT:
        if (set) {
            rc = apply_endpoint(c, v, where, err);
        } else {
            free(c->s3_endpoint);
            c->s3_endpoint = NULL;
        }
        break;
    case CFG_S3_REGION:
        if (cfg_set_string(&c->s3_region, set ? set : "us-east-1") < 0) rc = PQ_NOMEM(err);
        break;
    case CFG_S3_PATH_STYLE: rc = apply_bool(v, &c->s3_path_style, where, name, err); break;
    case CFG_S3_ACCESS_KEY_ID:
        if (cfg_set_string(&c->s3_access_key_id, set) < 0) rc = PQ_NOMEM(err);
        break;
    case CFG_S3_SECRET_ACCESS_KEY:
        if (cfg_set_string(&c->s3_secret_access_key, set) < 0) rc = PQ_NOMEM(err);
        break;
    case CFG_S3_SESSION_TOKEN:
        if (cfg_set_string(&c->s3_session_token, set) < 0) rc = PQ_NOMEM(err);
        break;
    default: rc = pq_fail(err, PQ_E_USAGE, "%s: unknown key in [s3]", where); break;
    }
    /* The value may be a secret: wipe our copy before freeing it. */
    memset(v, 0, strlen(v));
    free(v);
    return rc;
}

/* ---------------------------------------------------------------- tables */

void cfg_table_defaults(pqfs_table_config *t)
{
    memset(t, 0, sizeof *t);
    t->compression = PQ_CODEC_ZSTD;
    t->compression_level = 0; /* zstd's own default, level 3 */
    t->row_group_rows = 1048576;
    t->page_size = INT64_C(1) << 20;
    t->dictionary = true;
    t->page_index = true;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

void cfg_table_free(pqfs_table_config *t)
{
    free(t->name);
    for (int i = 0; i < t->n_partitions; i++) free(t->partitions[i].name);
    free(t->partitions);
    free_names(t->bloom_filter, t->n_bloom_filter);
    free_names(t->sort_by, t->n_sort_by);
    memset(t, 0, sizeof *t);
}

static int copy_names(char ***dst, char *const *src, int n)
{
    *dst = NULL;
    if (n == 0) return 0;
    char **names = calloc((size_t)n, sizeof *names);
    if (!names) return -1;
    for (int i = 0; i < n; i++) {
        names[i] = cfg_strdup(src[i]);
        if (!names[i]) {
            free_names(names, i);
            return -1;
        }
    }
    *dst = names;
    return 0;
}

int cfg_table_copy(pqfs_table_config *dst, const pqfs_table_config *src)
{
    *dst = *src;
    dst->name = NULL;
    dst->partitions = NULL;
    dst->bloom_filter = NULL;
    dst->sort_by = NULL;
    dst->n_partitions = dst->n_bloom_filter = dst->n_sort_by = 0;
    if (src->name && !(dst->name = cfg_strdup(src->name))) goto fail;
    if (src->n_partitions > 0) {
        dst->partitions = calloc((size_t)src->n_partitions, sizeof *dst->partitions);
        if (!dst->partitions) goto fail;
        for (int i = 0; i < src->n_partitions; i++) {
            dst->partitions[i].type = src->partitions[i].type;
            dst->partitions[i].name = cfg_strdup(src->partitions[i].name);
            dst->n_partitions = i + 1;
            if (!dst->partitions[i].name) goto fail;
        }
    }
    if (copy_names(&dst->bloom_filter, src->bloom_filter, src->n_bloom_filter) < 0) goto fail;
    dst->n_bloom_filter = src->n_bloom_filter;
    if (copy_names(&dst->sort_by, src->sort_by, src->n_sort_by) < 0) goto fail;
    dst->n_sort_by = src->n_sort_by;
    return 0;
fail:
    cfg_table_free(dst);
    return -1;
}

const char *cfg_table_name_problem(const char *name)
{
    if (*name == '\0') return "a table section needs a name: [table NAME]";
    /* The name is a top-level directory of the lake. */
    if (strchr(name, '/')) return "a table name cannot contain '/'";
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return "a table name cannot be '.' or '..'";
    for (const char *p = name; *p; p++)
        if (iscntrl((unsigned char)*p)) return "a table name cannot contain control characters";
    return NULL;
}

/* Splits a comma list into trimmed items.  An empty (all-blank) value is an
 * empty list; an empty item between commas is an error. */
static int split_list(const char *v, char ***items_out, int *n_out, const char *where,
                      const char *key, pq_error *err)
{
    *items_out = NULL;
    *n_out = 0;
    if (*skip_space(v) == '\0') return 0;
    int n = 1;
    for (const char *p = v; *p; p++) n += *p == ',';
    char **items = calloc((size_t)n, sizeof *items);
    if (!items) return PQ_NOMEM(err);
    const char *p = v;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(p, ",");
        items[i] = cfg_trimmed_copy(p, len);
        if (!items[i]) {
            free_names(items, i);
            return PQ_NOMEM(err);
        }
        if (items[i][0] == '\0') {
            free_names(items, i + 1);
            return value_fail(err, where, key, "empty name in the list (item %d)", i + 1);
        }
        p += len + (p[len] == ',');
    }
    *items_out = items;
    *n_out = n;
    return 0;
}

/* A column list (bloom_filter, sort_by): names non-empty and distinct. */
static int apply_name_list(const char *v, char ***names, int *n, const char *where, const char *key,
                           pq_error *err)
{
    char **items;
    int count;
    if (split_list(v, &items, &count, where, key, err) < 0) return -1;
    for (int i = 0; i < count; i++) {
        for (int j = 0; j < i; j++) {
            if (strcmp(items[i], items[j]) == 0) {
                int rc = value_fail(err, where, key, "column '%s' is listed twice", items[i]);
                free_names(items, count);
                return rc;
            }
        }
    }
    free_names(*names, *n);
    *names = items;
    *n = count;
    return 0;
}

static int parse_part_type(const char *s, pq_part_type *out)
{
    static const struct {
        const char *name;
        pq_part_type type;
    } types[] = {
        {"int64", PQ_PART_INT64},   {"int", PQ_PART_INT64},     {"bigint", PQ_PART_INT64},
        {"date", PQ_PART_DATE},     {"string", PQ_PART_STRING}, {"varchar", PQ_PART_STRING},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strcasecmp(s, types[i].name) == 0) {
            *out = types[i].type;
            return 0;
        }
    }
    return -1;
}

/* "dt:date, region:string, hour": a name without a type is inferred from the
 * directory values, like a table without a partitions key. */
static int apply_partitions(pqfs_table_config *t, const char *v, const char *where, pq_error *err)
{
    char **items;
    int count;
    if (split_list(v, &items, &count, where, "partitions", err) < 0) return -1;
    pqfs_partition_decl *decls = count ? calloc((size_t)count, sizeof *decls) : NULL;
    int rc = 0;
    if (count && !decls) rc = PQ_NOMEM(err);
    for (int i = 0; rc == 0 && i < count; i++) {
        char *item = items[i], *colon = strchr(item, ':');
        pq_part_type type = PQ_PART_INFER;
        if (colon) {
            *colon = '\0';
            char *type_name = cfg_trimmed_copy(colon + 1, strlen(colon + 1));
            if (!type_name) {
                rc = PQ_NOMEM(err);
                break;
            }
            if (parse_part_type(type_name, &type) < 0)
                rc = value_fail(err, where, "partitions",
                                "'%s' is not a partition type (int64, date, string)", type_name);
            free(type_name);
            if (rc < 0) break;
        }
        char *name = cfg_trimmed_copy(item, strlen(item));
        if (!name) {
            rc = PQ_NOMEM(err);
            break;
        }
        if (*name == '\0' || strpbrk(name, "=/")) {
            rc = value_fail(err, where, "partitions",
                            "'%s' is not a partition column name (item %d)", name, i + 1);
            free(name);
            break;
        }
        for (int j = 0; j < i; j++) {
            if (strcmp(decls[j].name, name) == 0) {
                rc = value_fail(err, where, "partitions", "column '%s' is listed twice", name);
                break;
            }
        }
        decls[i].name = name;
        decls[i].type = type;
    }
    free_names(items, count);
    if (rc < 0) {
        for (int i = 0; i < count && decls; i++) free(decls[i].name);
        free(decls);
        return rc;
    }
    for (int i = 0; i < t->n_partitions; i++) free(t->partitions[i].name);
    free(t->partitions);
    t->partitions = decls;
    t->n_partitions = count;
    return 0;
}

/* The engine's spelling and levels (pq_codec_parse): one parser for the
 * ini and pqtool. */
static int apply_compression(pqfs_table_config *t, const char *v, const char *where, pq_error *err)
{
    pq_error e;
    pq_error_clear(&e);
    if (pq_codec_parse(v, &t->compression, &t->compression_level, &e) != PQ_OK)
        return value_fail(err, where, "compression", "%s", e.msg);
    return 0;
}

int cfg_apply_table(pqfs_table_config *t, int key, const char *value, const char *where,
                    pq_error *err)
{
    const char *name = cfg_key_name(CFG_SECTION_TABLE, key);
    if (!value) return value_fail(err, where, name, "needs a value");
    char *v = clean_value(value);
    if (!v) return PQ_NOMEM(err);
    int rc = 0;
    int64_t n;
    uint64_t u;
    switch (key) {
    case CFG_TABLE_PARTITIONS: rc = apply_partitions(t, v, where, err); break;
    case CFG_TABLE_COMPRESSION: rc = apply_compression(t, v, where, err); break;
    case CFG_TABLE_ROW_GROUP_ROWS:
        rc = apply_int(v, 1, CFG_ROW_GROUP_ROWS_MAX, &n, where, name, err);
        if (rc == 0) t->row_group_rows = n;
        break;
    case CFG_TABLE_PAGE_SIZE:
        rc = apply_size(v, &u, where, name, err);
        if (rc == 0 && (u == 0 || u > (uint64_t)CFG_PAGE_SIZE_MAX))
            rc = value_fail(err, where, name, "'%s' is out of range (1 byte..1GiB)", v);
        if (rc == 0) t->page_size = (int64_t)u;
        break;
    case CFG_TABLE_DICTIONARY: rc = apply_bool(v, &t->dictionary, where, name, err); break;
    case CFG_TABLE_PAGE_INDEX: rc = apply_bool(v, &t->page_index, where, name, err); break;
    case CFG_TABLE_BLOOM_FILTER:
        rc = apply_name_list(v, &t->bloom_filter, &t->n_bloom_filter, where, name, err);
        break;
    case CFG_TABLE_SORT_BY:
        rc = apply_name_list(v, &t->sort_by, &t->n_sort_by, where, name, err);
        break;
    default: rc = pq_fail(err, PQ_E_USAGE, "%s: unknown key in [table]", where); break;
    }
    free(v);
    return rc;
}
