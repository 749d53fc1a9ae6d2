/* Delta Lake actions into a replay's state (delta_log.h): add and remove
 * reconciled by key, protocol and metaData kept, every field checked. */
#include "delta_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json_arena.h"
#include "numfmt.h"
#include "threads.h"

void pq_delta_log_init(pq_delta_log *log)
{
    memset(log, 0, sizeof *log);
    pq_arena_init(&log->arena, 64 * 1024);
    log->version = -1;
    log->checkpoint_version = -1;
}

void pq_delta_log_free(pq_delta_log *log)
{
    if (!log) return;
    json_decref(log->schema_json);
    json_decref(log->config_json);
    free(log->adds);
    free(log->slots);
    pq_arena_free(&log->arena);
    memset(log, 0, sizeof *log);
}

/* "FILE: line N: " before what was wrong. */
static int bad(pq_error *err, const pq_delta_where *w, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(pq_error *err, const pq_delta_where *w, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return pq_fail(err, PQ_E_CORRUPT, "%s: %s %lld: %s", w->file, w->unit, (long long)w->line, what);
}

static const char *dup_str(pq_delta_log *log, const char *s, size_t n)
{
    return pq_arena_strndup(&log->arena, s, n);
}

/* A string field: *out NULL when absent or null and !required. */
static int get_string(pq_delta_log *log, const json_t *obj, const char *kind, const char *key, bool required,
                      const char **out, const pq_delta_where *w, pq_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required) return bad(err, w, "%s.%s is missing", kind, key);
        return PQ_OK;
    }
    if (!json_is_string(v)) return bad(err, w, "%s.%s is not a string", kind, key);
    size_t n = json_string_length(v);
    if (strlen(json_string_value(v)) != n) return bad(err, w, "%s.%s holds a NUL byte", kind, key);
    if (!(*out = dup_str(log, json_string_value(v), n))) return PQ_NOMEM(err);
    return PQ_OK;
}

/* A non-negative integer field; *out = dflt when absent or null and !required. */
static int get_count(const json_t *obj, const char *kind, const char *key, bool required, int64_t dflt, int64_t *out,
                     const pq_delta_where *w, pq_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = dflt;
    if (!v || json_is_null(v)) {
        if (required) return bad(err, w, "%s.%s is missing", kind, key);
        return PQ_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return bad(err, w, "%s.%s is not a non-negative integer", kind, key);
    *out = (int64_t)json_integer_value(v);
    return PQ_OK;
}

/* An array of strings into the arena. */
static int get_string_array(pq_delta_log *log, const json_t *obj, const char *kind, const char *key,
                            const char ***out, int *n, const pq_delta_where *w, pq_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    *n = 0;
    if (!v || json_is_null(v)) return PQ_OK;
    if (!json_is_array(v)) return bad(err, w, "%s.%s is not an array", kind, key);
    size_t count = json_array_size(v);
    if (count > 100000) return bad(err, w, "%s.%s has %zu entries", kind, key, count);
    const char **arr = pq_arena_alloc(&log->arena, sizeof *arr * (count + 1));
    if (!arr) return PQ_NOMEM(err);
    for (size_t i = 0; i < count; i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e))
            return bad(err, w, "%s.%s[%zu] is not a string", kind, key, i);
        if (!(arr[i] = dup_str(log, json_string_value(e), json_string_length(e)))) return PQ_NOMEM(err);
    }
    *out = arr;
    *n = (int)count;
    return PQ_OK;
}

int pq_delta_decode_path(pq_arena *a, const char *s, const char **out)
{
    size_t n = strlen(s);
    char *d = pq_arena_alloc(a, n + 1);
    if (!d) return -2;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') {
            d[k++] = s[i];
            continue;
        }
        if (i + 2 >= n) return -1;
        int hi = pq_hex_digit(s[i + 1]), lo = pq_hex_digit(s[i + 2]);
        if (hi < 0 || lo < 0) return -1;
        char c = (char)(hi * 16 + lo);
        if (c == '\0') return -1;
        d[k++] = c;
        i += 2;
    }
    d[k] = '\0';
    *out = d;
    return 0;
}

/* Whether a log path, as written (a URI reference), has a scheme: a ':'
 * before any '/' (a relative reference escapes a ':' of its first segment
 * as %3A, RFC 3986 section 4.2). */
static bool has_scheme(const char *raw)
{
    const char *colon = strchr(raw, ':'), *slash = strchr(raw, '/');
    return colon && (!slash || colon < slash);
}

/* A relative path inside the table, decoded: no leading '/', no "." or
 * ".." component, no empty component. */
static const char *path_problem(const char *p)
{
    if (!*p) return "is empty";
    if (*p == '/') return "is absolute (a path outside the table is not read)";
    for (const char *c = p; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return "has an empty, '.' or '..' component";
        c += len;
        if (*c == '/') c++;
    }
    return NULL;
}

static int get_dv(pq_delta_log *log, const json_t *obj, const char *kind, pq_delta_dv *dv, const pq_delta_where *w,
                  pq_error *err)
{
    memset(dv, 0, sizeof *dv);
    dv->offset = -1;
    const json_t *v = json_object_get(obj, "deletionVector");
    if (!v || json_is_null(v)) return PQ_OK;
    if (!json_is_object(v)) return bad(err, w, "%s.deletionVector is not an object", kind);
    const char *st;
    PQ_TRY(get_string(log, v, "deletionVector", "storageType", true, &st, w, err));
    if (strcmp(st, "u") && strcmp(st, "i") && strcmp(st, "p"))
        return bad(err, w, "%s.deletionVector.storageType '%.40s' is none of u, i, p", kind, st);
    dv->storage = st[0];
    PQ_TRY(get_string(log, v, "deletionVector", "pathOrInlineDv", true, &dv->path_or_inline, w, err));
    PQ_TRY(get_count(v, "deletionVector", "offset", false, -1, &dv->offset, w, err));
    PQ_TRY(get_count(v, "deletionVector", "sizeInBytes", true, 0, &dv->size_in_bytes, w, err));
    PQ_TRY(get_count(v, "deletionVector", "cardinality", true, 0, &dv->cardinality, w, err));
    return PQ_OK;
}

/* The reconciliation key: the path, then (with a deletion vector) its
 * unique id, storage type + pathOrInlineDv + "@offset". */
static const char *file_key(pq_delta_log *log, const char *path, const pq_delta_dv *dv)
{
    pq_buf b;
    pq_buf_init(&b);
    int rc = pq_buf_puts(&b, path);
    if (dv->storage) {
        rc |= pq_buf_printf(&b, "%c%c%s", '\0', dv->storage, dv->path_or_inline);
        if (dv->offset >= 0) rc |= pq_buf_printf(&b, "@%lld", (long long)dv->offset);
    }
    /* Bytes after the path's NUL: length-counted in the arena copy. */
    const char *key = NULL;
    if (!rc) {
        char *k = pq_arena_alloc(&log->arena, b.len + 2);
        if (k) {
            memcpy(k, b.data, b.len);
            key = k;
        }
    }
    pq_buf_free(&b);
    return key;
}

/* Keys hold a NUL between path and id: compared up to their double NUL. */
static size_t key_len(const char *k)
{
    size_t n = strlen(k);
    if (k[n + 1]) n += 1 + strlen(k + n + 1);
    return n;
}

static uint32_t key_hash(const char *k)
{
    return (uint32_t)pq_hash_bytes(k, key_len(k));
}

static bool key_eq(const char *a, const char *b)
{
    size_t n = key_len(a);
    return n == key_len(b) && memcmp(a, b, n) == 0;
}

/* The slot of key: its add, or the empty slot to put it in. */
static uint32_t find_slot(const pq_delta_log *log, const char *key, bool *found)
{
    uint32_t mask = log->n_slots - 1, i = key_hash(key) & mask, first_free = UINT32_MAX;
    for (;;) {
        int32_t s = log->slots[i];
        if (s == -1) {
            *found = false;
            return first_free != UINT32_MAX ? first_free : i;
        }
        if (s == -2) {
            if (first_free == UINT32_MAX) first_free = i;
        } else if (key_eq(log->adds[s].key, key)) {
            *found = true;
            return i;
        }
        i = (i + 1) & mask;
    }
}

static int grow_slots(pq_delta_log *log, pq_error *err)
{
    uint32_t n = log->n_slots ? log->n_slots : 1024;
    while ((uint64_t)(log->n_live + 1) * 2 > n) n *= 2;
    if (n == log->n_slots && (uint64_t)(log->n_used + 1) * 10 <= (uint64_t)n * 7) return PQ_OK;
    int32_t *slots = malloc(sizeof *slots * n);
    if (!slots) return PQ_NOMEM(err);
    for (uint32_t i = 0; i < n; i++) slots[i] = -1;
    free(log->slots);
    log->slots = slots;
    log->n_slots = n;
    log->n_used = 0;
    for (int a = 0; a < log->n_adds; a++) {
        if (!log->adds[a].live) continue;
        bool found;
        uint32_t s = find_slot(log, log->adds[a].key, &found);
        log->slots[s] = a;
        log->n_used++;
    }
    return PQ_OK;
}

static int take_partition_values(pq_delta_log *log, const json_t *obj, pq_delta_add *a, const pq_delta_where *w,
                                 pq_error *err)
{
    const json_t *pv = json_object_get(obj, "partitionValues");
    if (!pv || json_is_null(pv)) return PQ_OK;
    if (!json_is_object(pv)) return bad(err, w, "add.partitionValues is not an object");
    size_t n = json_object_size(pv);
    a->part_keys = pq_arena_alloc(&log->arena, sizeof *a->part_keys * (n + 1));
    a->part_vals = pq_arena_alloc(&log->arena, sizeof *a->part_vals * (n + 1));
    if (!a->part_keys || !a->part_vals) return PQ_NOMEM(err);
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)pv, k, v) {
        if (!json_is_null(v) && (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)))
            return bad(err, w, "add.partitionValues['%.60s'] is neither a string nor null", k);
        if (!(a->part_keys[a->n_part] = dup_str(log, k, strlen(k)))) return PQ_NOMEM(err);
        a->part_vals[a->n_part] = NULL;
        if (json_is_string(v) && !(a->part_vals[a->n_part] = dup_str(log, json_string_value(v), json_string_length(v))))
            return PQ_NOMEM(err);
        a->n_part++;
    }
    return PQ_OK;
}

/* add and remove: the path decoded and checked, the key. */
static int file_action(pq_delta_log *log, const json_t *obj, const char *kind, pq_delta_add *a,
                       const pq_delta_where *w, pq_error *err)
{
    memset(a, 0, sizeof *a);
    if (!json_is_object(obj)) return bad(err, w, "%s is not an object", kind);
    const char *raw;
    PQ_TRY(get_string(log, obj, kind, "path", true, &raw, w, err));
    int rc = pq_delta_decode_path(&log->arena, raw, &a->path);
    if (rc == -2) return PQ_NOMEM(err);
    if (rc < 0) return bad(err, w, "%s.path '%.200s' has a malformed %%-escape (or %%00)", kind, raw);
    const char *problem = has_scheme(raw) ? "is an absolute URI (a file outside the table is not read)"
                                          : path_problem(a->path);
    if (problem) {
        if (strstr(problem, "outside"))
            return pq_fail(err, PQ_E_UNSUPPORTED, "%s: %s %lld: %s.path '%.200s' %s", w->file, w->unit,
                           (long long)w->line, kind, raw, problem);
        return bad(err, w, "%s.path '%.200s' %s", kind, raw, problem);
    }
    PQ_TRY(get_dv(log, obj, kind, &a->dv, w, err));
    if (!(a->key = file_key(log, a->path, &a->dv))) return PQ_NOMEM(err);
    return PQ_OK;
}

static int apply_add(pq_delta_log *log, const json_t *obj, const pq_delta_where *w, pq_error *err)
{
    pq_delta_add a;
    PQ_TRY(file_action(log, obj, "add", &a, w, err));
    PQ_TRY(get_count(obj, "add", "size", true, 0, &a.size, w, err));
    PQ_TRY(get_count(obj, "add", "modificationTime", false, 0, &a.mod_time_ms, w, err));
    PQ_TRY(get_string(log, obj, "add", "stats", false, &a.stats, w, err));
    PQ_TRY(take_partition_values(log, obj, &a, w, err));
    if (log->n_adds >= INT32_MAX - 1) return bad(err, w, "more than %d add actions", INT32_MAX - 1);
    if (log->n_adds == log->cap_adds) {
        int cap = log->cap_adds ? log->cap_adds * 2 : 256;
        if (cap < 0 || cap > INT32_MAX - 1) cap = INT32_MAX - 1;
        pq_delta_add *adds = realloc(log->adds, sizeof *adds * (size_t)cap);
        if (!adds) return PQ_NOMEM(err);
        log->adds = adds;
        log->cap_adds = cap;
    }
    PQ_TRY(grow_slots(log, err));
    bool found;
    uint32_t s = find_slot(log, a.key, &found);
    if (found) {
        log->adds[log->slots[s]].live = false;
    } else {
        if (log->slots[s] == -1) log->n_used++;
        log->n_live++;
    }
    a.live = true;
    log->adds[log->n_adds] = a;
    log->slots[s] = log->n_adds++;
    return PQ_OK;
}

static int apply_remove(pq_delta_log *log, const json_t *obj, const pq_delta_where *w, pq_error *err)
{
    pq_delta_add r;
    PQ_TRY(file_action(log, obj, "remove", &r, w, err));
    /* A checkpoint's removes are tombstones (for VACUUM), of files its adds
     * no longer hold. */
    if (w->checkpoint || !log->n_slots) return PQ_OK;
    bool found;
    uint32_t s = find_slot(log, r.key, &found);
    if (found) {
        log->adds[log->slots[s]].live = false;
        log->slots[s] = -2;
        log->n_live--;
    }
    return PQ_OK;
}

static int apply_protocol(pq_delta_log *log, const json_t *obj, const pq_delta_where *w, pq_error *err)
{
    if (!json_is_object(obj)) return bad(err, w, "protocol is not an object");
    PQ_TRY(get_count(obj, "protocol", "minReaderVersion", true, 0, &log->min_reader, w, err));
    PQ_TRY(get_count(obj, "protocol", "minWriterVersion", true, 0, &log->min_writer, w, err));
    PQ_TRY(get_string_array(log, obj, "protocol", "readerFeatures", &log->reader_features, &log->n_reader_features, w,
                            err));
    PQ_TRY(get_string_array(log, obj, "protocol", "writerFeatures", &log->writer_features, &log->n_writer_features, w,
                            err));
    log->has_protocol = true;
    return PQ_OK;
}

static int apply_metadata(pq_delta_log *log, const json_t *obj, const pq_delta_where *w, pq_error *err)
{
    if (!json_is_object(obj)) return bad(err, w, "metaData is not an object");
    PQ_TRY(get_string(log, obj, "metaData", "schemaString", true, &log->schema_string, w, err));
    PQ_TRY(get_string(log, obj, "metaData", "id", false, &log->table_id, w, err));
    PQ_TRY(get_string_array(log, obj, "metaData", "partitionColumns", &log->part_cols, &log->n_part_cols, w, err));
    const json_t *conf = json_object_get(obj, "configuration");
    log->mapping_mode = NULL;
    log->string_prefix = NULL;
    json_decref(log->config_json);
    log->config_json = NULL;
    if (conf && !json_is_null(conf)) {
        if (!json_is_object(conf)) return bad(err, w, "metaData.configuration is not an object");
        if (!(log->config_json = json_deep_copy(conf))) return PQ_NOMEM(err);
        PQ_TRY(get_string(log, conf, "metaData.configuration", "delta.columnMapping.mode", false, &log->mapping_mode,
                          w, err));
        /* Only read for pruning: a value of another type is not an error,
         * it makes every string statistic a possibly cut one. */
        const json_t *pl = json_object_get(conf, "delta.dataSkippingStringPrefixLength");
        log->string_prefix = NULL;
        if (json_is_string(pl)) PQ_TRY(get_string(log, conf, "metaData.configuration",
                                                  "delta.dataSkippingStringPrefixLength", false, &log->string_prefix,
                                                  w, err));
        else if (pl && !json_is_null(pl)) log->string_prefix = "?";
    }
    const json_t *format = json_object_get(obj, "format");
    const json_t *provider = json_is_object(format) ? json_object_get(format, "provider") : NULL;
    if (json_is_string(provider) && strcmp(json_string_value(provider), "parquet"))
        return pq_fail(err, PQ_E_UNSUPPORTED, "%s: %s %lld: metaData.format.provider '%.40s' (only parquet is read)",
                       w->file, w->unit, (long long)w->line, json_string_value(provider));
    log->has_metadata = true;
    return PQ_OK;
}

static int apply_sidecar(pq_delta_log *log, const json_t *obj, const pq_delta_where *w, pq_error *err)
{
    if (!w->checkpoint) return bad(err, w, "a sidecar action outside a checkpoint");
    if (!json_is_object(obj)) return bad(err, w, "sidecar is not an object");
    const char *raw, *path;
    PQ_TRY(get_string(log, obj, "sidecar", "path", true, &raw, w, err));
    int rc = pq_delta_decode_path(&log->arena, raw, &path);
    if (rc == -2) return PQ_NOMEM(err);
    if (rc < 0 || has_scheme(raw) || path_problem(path) || strchr(path, '/'))
        return bad(err, w, "sidecar.path '%.200s' is not a file name in _delta_log/_sidecars/", raw);
    if (pq_arena_push_str(&log->arena, &log->sidecars, &log->n_sidecars, path)) return PQ_NOMEM(err);
    return PQ_OK;
}

int pq_delta_file_key(pq_delta_log *log, const void *action, const char *kind, const pq_delta_where *w,
                      const char **key, pq_error *err)
{
    pq_delta_add a;
    PQ_TRY(file_action(log, action, kind, &a, w, err));
    *key = a.key;
    return PQ_OK;
}

int pq_delta_apply_action(pq_delta_log *log, const char *kind, const void *value, const pq_delta_where *w,
                          pq_error *err)
{
    const json_t *v = value;
    int rc = PQ_OK;
    if (!strcmp(kind, "add")) rc = apply_add(log, v, w, err);
    else if (!strcmp(kind, "remove")) rc = apply_remove(log, v, w, err);
    else if (!strcmp(kind, "protocol")) rc = apply_protocol(log, v, w, err);
    else if (!strcmp(kind, "metaData")) rc = apply_metadata(log, v, w, err);
    else if (!strcmp(kind, "sidecar")) rc = apply_sidecar(log, v, w, err);
    if (rc == PQ_OK && log->keep) rc = log->keep(log->keep_ctx, log, kind, value, w, err);
    return rc;
}

int pq_delta_apply_json(pq_delta_log *log, const char *text, size_t len, const char *file, bool checkpoint,
                        pq_error *err)
{
    int64_t line = 0;
    return pq_delta_apply_json_lines(log, text, len, file, checkpoint, &line, err);
}

/* A log's lines are parsed on every core, a batch at a time, then applied
 * in order: parsing is most of a replay (jansson builds each line's tree;
 * a commit of 100,000 adds is 36 MB of JSON), applying is what must be in
 * order.  A batch's trees are parsed into an arena (json_arena.h) and go
 * with it: no malloc, free or walk per object.  A batch is at most this
 * many bytes (its trees several times that) or lines.  (Parsing the next
 * batch while this one is applied gained nothing on two cores: measured.) */
#define PARSE_BATCH_BYTES ((size_t)1 << 20)
#define PARSE_BATCH_LINES 4096

typedef struct parsed_line {
    const char *text;
    size_t len;
    int64_t line;              /* its line number in the file */
    json_t *obj;               /* NULL: not JSON (parsed again, alone, for the message) */
} parsed_line;

typedef struct parse_batch {
    parsed_line *pl;
    pq_json_arena arena;
    bool heap;                 /* a keep function holds actions past the batch: trees on the heap */
} parse_batch;

static void parse_line(void *ctx, size_t i)
{
    parse_batch *b = ctx;
    parsed_line *pl = &b->pl[i];
    json_error_t jerr;
    pl->obj = b->heap ? json_loadb(pl->text, pl->len, 0, &jerr) : pq_json_parse_in(&b->arena, pl->text, pl->len, 0, NULL);
}

/* Objects are made on several threads: jansson's hash seed is set once,
 * before any is (its only global state). */
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;
static void seed_jansson(void)
{
    json_object_seed(0);
}

static int apply_object(pq_delta_log *log, json_t *obj, const pq_delta_where *w, pq_error *err)
{
    if (!json_is_object(obj)) return bad(err, w, "not a JSON object (an action)");
    const char *kind;
    json_t *v;
    json_object_foreach(obj, kind, v) PQ_TRY(pq_delta_apply_action(log, kind, v, w, err));
    return PQ_OK;
}

static int apply_line(pq_delta_log *log, const parsed_line *pl, const pq_delta_where *w, pq_error *err)
{
    if (pl->obj) return apply_object(log, pl->obj, w, err);
    /* Not JSON, or the arena had no memory: parsed again on the heap, for
     * the message or the action. */
    json_error_t jerr;
    json_t *obj = json_loadb(pl->text, pl->len, 0, &jerr);
    if (!obj) return bad(err, w, "not JSON: %s (column %d)", jerr.text, jerr.column);
    int rc = apply_object(log, obj, w, err);
    json_decref(obj);
    return rc;
}

/* Parses the batch's n lines (on every core when it is worth it), then
 * applies them in order; every tree is freed, with the arena. */
static int apply_batch(pq_delta_log *log, parsed_line *pl, size_t n, size_t bytes, pq_delta_where *w,
                       pq_error *err)
{
    int threads = n < 64 || bytes < 65536 ? 1 : pq_default_threads();
    if (threads > 1) pthread_once(&seed_once, seed_jansson);
    parse_batch b = {.pl = pl, .heap = log->keep != NULL};
    pq_json_arena_init(&b.arena);
    pq_parallel_for(n, threads, parse_line, &b);
    int rc = PQ_OK;
    for (size_t i = 0; i < n; i++) {
        w->line = pl[i].line;
        if (rc == PQ_OK) rc = apply_line(log, &pl[i], w, err);
        if (b.heap) json_decref(pl[i].obj);
        else pq_json_drop(pl[i].obj);
    }
    pq_json_arena_free(&b.arena);
    return rc;
}

int pq_delta_apply_json_lines(pq_delta_log *log, const char *text, size_t len, const char *file, bool checkpoint,
                              int64_t *lines, pq_error *err)
{
    pq_delta_where w = {.file = file, .line = *lines, .unit = "line", .checkpoint = checkpoint};
    parsed_line *pl = malloc(sizeof *pl * PARSE_BATCH_LINES);
    if (!pl) return PQ_NOMEM(err);
    int64_t line = w.line;
    size_t at = 0, n = 0, bytes = 0;
    int rc = PQ_OK;
    while (rc == PQ_OK && at < len) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t m = nl ? (size_t)(nl - s) : len - at;
        at += m + (nl ? 1 : 0);
        line++;
        size_t start = 0;
        while (start < m && (s[start] == ' ' || s[start] == '\t' || s[start] == '\r')) start++;
        if (start == m) continue;
        pl[n++] = (parsed_line){.text = s, .len = m, .line = line};
        bytes += m;
        if (n == PARSE_BATCH_LINES || bytes >= PARSE_BATCH_BYTES) {
            rc = apply_batch(log, pl, n, bytes, &w, err);
            n = bytes = 0;
        }
    }
    if (rc == PQ_OK && n) rc = apply_batch(log, pl, n, bytes, &w, err);
    free(pl);
    if (rc == PQ_OK) *lines = line;
    return rc;
}

/* ------------------------------------------------------------- protocol */

/* Reader features whose meaning this build honours: v2 checkpoints are
 * read; timestampNtz columns render without a zone; vacuumProtocolCheck
 * only binds writers and VACUUM; columnMapping in mode name (physical
 * names in the files, logical ones in every view; mode id is refused by
 * check_protocol); deletionVectors (a file's vector is decoded by
 * pq_tf_deleted_rows; pq_tf_open refuses such a file to a caller that does
 * not apply them).  Everything else (typeWidening, variantType, ...) is
 * refused. */
bool pq_delta_reader_feature_supported(const char *name)
{
    static const char *const ok[] = {"v2Checkpoint", "timestampNtz", "vacuumProtocolCheck", "columnMapping",
                                     "deletionVectors"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(name, ok[i])) return true;
    return false;
}

static int check_protocol(pq_delta_log *log, const char *what, pq_error *err)
{
    if (log->min_reader > 3)
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: the Delta table needs reader version %lld (protocol.minReaderVersion); this build reads "
                       "versions 1 to 3",
                       what, (long long)log->min_reader);
    if (log->min_reader == 3) {
        for (int i = 0; i < log->n_reader_features; i++)
            if (!pq_delta_reader_feature_supported(log->reader_features[i]))
                return pq_fail(err, PQ_E_UNSUPPORTED,
                               "%s: the Delta table needs reader feature '%s' (protocol.readerFeatures), which this "
                               "build does not read",
                               what, log->reader_features[i]);
    }
    /* Reader version 2 is column mapping.  Mode name: columns are found by
     * their physical names, mode id by their field ids (pq_tf_apply_types
     * gives them the logical names); add.stats and partitionValues use the
     * physical names in both. */
    const char *mode = log->mapping_mode ? log->mapping_mode : "none";
    bool supported = log->min_reader == 2;
    for (int i = 0; log->min_reader == 3 && i < log->n_reader_features; i++)
        supported |= !strcmp(log->reader_features[i], "columnMapping");
    if (!supported) return PQ_OK; /* the property is not honoured: display names */
    log->mapping_by_id = !strcmp(mode, "id");
    log->mapping_by_name = !strcmp(mode, "name") || log->mapping_by_id;
    if (strcmp(mode, "none") && !log->mapping_by_name)
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: the Delta table uses column mapping mode '%.40s' (reader feature 'columnMapping'); this "
                       "build reads modes none, name and id",
                       what, mode);
    return PQ_OK;
}

/* --------------------------------------------------------------- schema */

static int parse_schema(pq_delta_log *log, const char *what, pq_error *err)
{
    json_error_t jerr;
    json_t *root = json_loads(log->schema_string, 0, &jerr);
    if (!root)
        return pq_fail(err, PQ_E_CORRUPT, "%s: metaData.schemaString is not JSON: %s (column %d)", what, jerr.text,
                       jerr.column);
    log->schema_json = root;
    const json_t *fields = json_object_get(root, "fields");
    if (!json_is_object(root) || !json_is_array(fields))
        return pq_fail(err, PQ_E_CORRUPT, "%s: metaData.schemaString is not a struct with fields", what);
    size_t n = json_array_size(fields);
    if (n > 100000) return pq_fail(err, PQ_E_CORRUPT, "%s: metaData.schemaString has %zu fields", what, n);
    log->fields = pq_arena_alloc(&log->arena, sizeof *log->fields * (n + 1));
    if (!log->fields) return PQ_NOMEM(err);
    for (size_t i = 0; i < n; i++) {
        const json_t *f = json_array_get(fields, i);
        const json_t *name = json_object_get(f, "name"), *type = json_object_get(f, "type");
        if (!json_is_string(name) || !json_string_length(name) ||
            strlen(json_string_value(name)) != json_string_length(name) || (!json_is_string(type) && !json_is_object(type)))
            return pq_fail(err, PQ_E_CORRUPT, "%s: metaData.schemaString: field %zu has no name or type", what, i);
        pq_delta_field *d = &log->fields[i];
        d->name = json_string_value(name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(log->fields[j].name, d->name))
                return pq_fail(err, PQ_E_CORRUPT, "%s: metaData.schemaString: two fields named '%.100s'", what,
                               d->name);
        const json_t *nested = json_is_object(type) ? json_object_get(type, "type") : NULL;
        d->type = json_is_string(type) ? json_string_value(type) : json_is_string(nested) ? json_string_value(nested) : NULL;
        if (!d->type) return pq_fail(err, PQ_E_CORRUPT, "%s: metaData.schemaString: field '%.100s' has no type", what, d->name);
        const json_t *nullable = json_object_get(f, "nullable");
        d->nullable = !json_is_false(nullable);
        const json_t *meta = json_object_get(f, "metadata");
        const json_t *phys = json_is_object(meta) ? json_object_get(meta, "delta.columnMapping.physicalName") : NULL;
        d->physical = log->mapping_by_name && json_is_string(phys) ? json_string_value(phys) : d->name;
    }
    log->n_fields = (int)n;
    for (int p = 0; p < log->n_part_cols; p++) {
        bool found = false;
        for (int i = 0; i < log->n_fields && !found; i++) found = !strcmp(log->fields[i].name, log->part_cols[p]);
        if (!found)
            return pq_fail(err, PQ_E_CORRUPT, "%s: partition column '%.100s' is not in metaData.schemaString", what,
                           log->part_cols[p]);
    }
    return PQ_OK;
}

int pq_delta_finish(pq_delta_log *log, const char *what, pq_error *err)
{
    if (!log->has_protocol) return pq_fail(err, PQ_E_CORRUPT, "%s: the Delta log has no protocol action", what);
    if (!log->has_metadata) return pq_fail(err, PQ_E_CORRUPT, "%s: the Delta log has no metaData action", what);
    PQ_TRY(check_protocol(log, what, err));
    return parse_schema(log, what, err);
}

/* ----------------------------------------------------------------- names */

/* Exactly `digits` decimal digits at s; -1 otherwise (or past INT64_MAX). */
static int64_t fixed_digits(const char *s, int digits)
{
    int64_t v = 0;
    for (int i = 0; i < digits; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        if (v > (INT64_MAX - (s[i] - '0')) / 10) return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

pq_delta_name pq_delta_parse_name(const char *name)
{
    pq_delta_name r = {.kind = PQ_DELTA_NAME_OTHER};
    size_t n = strlen(name);
    if (n < PQ_DELTA_VERSION_DIGITS + 5) return r;
    int64_t v = fixed_digits(name, PQ_DELTA_VERSION_DIGITS);
    if (v < 0) return r;
    const char *rest = name + PQ_DELTA_VERSION_DIGITS;
    r.version = v;
    if (!strcmp(rest, ".json")) {
        r.kind = PQ_DELTA_NAME_COMMIT;
    } else if (!strcmp(rest, ".checkpoint.parquet")) {
        r.kind = PQ_DELTA_NAME_CHECKPOINT;
    } else if (!strncmp(rest, ".checkpoint.", 12)) {
        const char *t = rest + 12;
        size_t tl = strlen(t);
        int64_t part = tl == 10 + 1 + 10 + 8 ? fixed_digits(t, 10) : -1;
        int64_t count = part >= 0 && t[10] == '.' ? fixed_digits(t + 11, 10) : -1;
        if (count > 0 && part >= 1 && part <= count && count <= INT32_MAX && !strcmp(t + 21, ".parquet")) {
            r.kind = PQ_DELTA_NAME_MULTIPART;
            r.part = (int32_t)part;
            r.n_parts = (int32_t)count;
        } else if (tl > 5 && !strcmp(t + tl - 5, ".json") && !memchr(t, '.', tl - 5)) {
            r.kind = PQ_DELTA_NAME_V2;
            r.json = true;
        } else if (tl > 8 && !strcmp(t + tl - 8, ".parquet") && !memchr(t, '.', tl - 8)) {
            r.kind = PQ_DELTA_NAME_V2;
        }
    }
    if (r.kind == PQ_DELTA_NAME_OTHER) r.version = 0;
    return r;
}

/* The parts of a multi-part checkpoint (version v, count k) among names:
 * every part 1..k once.  files gets them in part order. */
static bool multipart_complete(const char *const *names, int n, int64_t v, int32_t k, int *files)
{
    for (int32_t p = 1; p <= k; p++) {
        int at = -1;
        for (int i = 0; i < n && at < 0; i++) {
            pq_delta_name d = pq_delta_parse_name(names[i]);
            if (d.kind == PQ_DELTA_NAME_MULTIPART && d.version == v && d.n_parts == k && d.part == p) at = i;
        }
        if (at < 0) return false;
        if (files) files[p - 1] = at;
    }
    return true;
}

int64_t pq_delta_choose_checkpoint(const char *const *names, int n, int64_t target, int *files, int *n_files)
{
    *n_files = 0;
    int64_t best = -1;
    int best_rank = 0;
    for (int i = 0; i < n; i++) {
        pq_delta_name d = pq_delta_parse_name(names[i]);
        if (d.kind < PQ_DELTA_NAME_CHECKPOINT || d.version > target || d.version < best) continue;
        /* Rank at one version: classic 3, multi-part 2, v2 1 (by name). */
        int rank = d.kind == PQ_DELTA_NAME_CHECKPOINT ? 3 : d.kind == PQ_DELTA_NAME_MULTIPART ? 2 : 1;
        if (d.version == best && (rank < best_rank ||
                                  (rank == best_rank && (rank != 1 || strcmp(names[i], names[files[0]]) >= 0))))
            continue;
        if (d.kind == PQ_DELTA_NAME_MULTIPART) {
            if (d.n_parts > n || !multipart_complete(names, n, d.version, d.n_parts, NULL)) continue;
            multipart_complete(names, n, d.version, d.n_parts, files);
            *n_files = d.n_parts;
        } else {
            files[0] = i;
            *n_files = 1;
        }
        best = d.version;
        best_rank = rank;
    }
    return best;
}
