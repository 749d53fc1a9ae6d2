/* fuzz_delta_log: a Delta Lake commit (or a v2 checkpoint's JSON) as the
 * log replay parses it.  The first byte: bit 0, the lines are a
 * checkpoint's (removes are tombstones, sidecars allowed); bit 1, the input
 * is applied twice (the same actions again: re-adds and removes of known
 * keys).  The rest is the file's bytes.
 *
 * Whatever the input, the replay returns a state or an error of class
 * CORRUPT, UNSUPPORTED or NOMEM, never a crash.  On success: the live adds
 * counted are the live adds held, no two live adds share a key, every live
 * path is relative, inside the table (no empty, "." or ".." component) and
 * NUL-free, sizes are non-negative.  Finishing it (protocol, metaData,
 * schemaString) gives fields with names, and every partition column among
 * them.  The input's first line as a log file name and as a path parses
 * without reading past it.  With bit 2, the bytes are also a deletion
 * vector (RoaringBitmapArray; the last byte its cardinality): decoded or
 * refused, rows ascending and as many as the cardinality; and the first
 * line as z85.  With bit 3, the bytes are also an add's stats JSON, read
 * into bounds for a column of every type (and each live add's stats into
 * bounds of the schema's fields): never a crash, bounds in order, null
 * counts within the rows. */
#include "fuzz_common.h"

#include <stdbool.h>

#include "delta_log.h"

static bool inside(const char *p)
{
    if (!*p || *p == '/') return false;
    for (const char *c = p; *c;) {
        size_t len = strcspn(c, "/");
        if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) return false;
        c += len;
        if (*c == '/') c++;
    }
    return true;
}

static void check_state(const pq_delta_log *log)
{
    int live = 0;
    for (int i = 0; i < log->n_adds; i++) {
        const pq_delta_add *a = &log->adds[i];
        if (!a->live) continue;
        live++;
        FUZZ_CHECK(inside(a->path), "live path '%s' is not inside the table", a->path);
        FUZZ_CHECK(a->size >= 0, "size %lld", (long long)a->size);
        FUZZ_CHECK(a->key != NULL, "no key");
        for (int j = i + 1; j < log->n_adds && j < i + 64; j++)
            FUZZ_CHECK(!log->adds[j].live || strcmp(log->adds[j].key, a->key) ||
                           strcmp(log->adds[j].key + strlen(a->key) + 1, a->key + strlen(a->key) + 1),
                       "two live adds of '%s'", a->path);
    }
    FUZZ_CHECK(live == log->n_live, "%d live adds held, %d counted", live, log->n_live);
}

/* Bounds from stats: what pq_delta_stats_ranges gives is consistent. */
static void check_stats(const char *stats, size_t len, const pq_delta_stats_col *cols, int n, int32_t prefix_len)
{
    pq_col_range r[16];
    pq_arena a;
    pq_arena_init(&a, 1024);
    if (n > 16) n = 16;
    int known = pq_delta_stats_ranges(stats, len, cols, n, prefix_len, &a, r);
    FUZZ_CHECK(known >= -1 && known <= n, "%d columns known of %d", known, n);
    for (int i = 0; i < n; i++) {
        if (!r[i].known) continue;
        FUZZ_CHECK(r[i].row_count >= 0, "column %d: %lld rows", i, (long long)r[i].row_count);
        if (r[i].has_null_count)
            FUZZ_CHECK(r[i].null_count >= 0 && r[i].null_count <= r[i].row_count, "column %d: %lld nulls of %lld", i,
                       (long long)r[i].null_count, (long long)r[i].row_count);
        if (r[i].has_min && r[i].has_max)
            FUZZ_CHECK(pq_value_cmp(&r[i].min, &r[i].max) <= 0, "column %d: min above max", i);
    }
    pq_arena_free(&a);
}

static void check_log_stats(const pq_delta_log *log)
{
    pq_delta_stats_col cols[16];
    int n = log->n_fields < 16 ? log->n_fields : 16;
    for (int i = 0; i < n; i++) cols[i] = (pq_delta_stats_col){log->fields[i].physical, log->fields[i].type};
    for (int i = 0; i < log->n_adds && i < 64; i++)
        if (log->adds[i].live && log->adds[i].stats)
            check_stats(log->adds[i].stats, strlen(log->adds[i].stats), cols, n, 32);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20)) return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    bool checkpoint = data[0] & 1;
    pq_delta_log log;
    pq_delta_log_init(&log);
    pq_error err;
    pq_error_clear(&err);
    int rc = pq_delta_apply_json(&log, text, len, "fuzz.json", checkpoint, &err);
    if (rc == PQ_OK && (data[0] & 2)) rc = pq_delta_apply_json(&log, text, len, "fuzz.json", checkpoint, &err);
    if (rc == PQ_OK) {
        check_state(&log);
        if (pq_delta_finish(&log, "fuzz", &err) == PQ_OK) {
            for (int i = 0; i < log.n_fields; i++)
                FUZZ_CHECK(log.fields[i].name && log.fields[i].name[0] && log.fields[i].type && log.fields[i].physical,
                           "field %d", i);
            for (int p = 0; p < log.n_part_cols; p++) {
                bool found = false;
                for (int i = 0; i < log.n_fields && !found; i++) found = !strcmp(log.fields[i].name, log.part_cols[p]);
                FUZZ_CHECK(found, "partition column '%s' not in the schema", log.part_cols[p]);
            }
            FUZZ_CHECK(log.min_reader <= 3, "reader version %lld accepted", (long long)log.min_reader);
            if (data[0] & 8) check_log_stats(&log);
        } else {
            rc = PQ_ERR;
        }
    }
    if (rc != PQ_OK)
        FUZZ_CHECK(err.cls == PQ_E_CORRUPT || err.cls == PQ_E_UNSUPPORTED || err.cls == PQ_E_NOMEM,
                   "error class %d: %s", (int)err.cls, err.msg);
    pq_delta_log_free(&log);

    /* The first line as a log file name and as a log path. */
    char name[256];
    const char *nl = memchr(text, '\n', len);
    size_t n = nl ? (size_t)(nl - text) : len;
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, text, n);
    name[n] = '\0';
    pq_delta_name d = pq_delta_parse_name(name);
    if (d.kind != PQ_DELTA_NAME_OTHER) FUZZ_CHECK(d.version >= 0, "version %lld", (long long)d.version);
    if (d.kind == PQ_DELTA_NAME_MULTIPART) FUZZ_CHECK(d.part >= 1 && d.part <= d.n_parts, "part %d of %d", d.part, d.n_parts);
    pq_arena a;
    pq_arena_init(&a, 1024);
    const char *out;
    if (pq_delta_decode_path(&a, name, &out) == 0) FUZZ_CHECK(strlen(out) <= strlen(name), "decoded longer");
    pq_arena_free(&a);

    if (data[0] & 8) {
        static const pq_delta_stats_col every[] = {
            {"a", "long"}, {"b", "timestamp"}, {"c", "timestamp_ntz"}, {"d", "string"}, {"e", "double"},
            {"f", "float"}, {"g", "decimal(38,10)"}, {"h", "date"}, {"i", "boolean"}, {"j", "binary"},
            {"k", "decimal(5,5)"}, {"l", "short"}, {NULL, NULL},
        };
        check_stats(text, len, every, (int)(sizeof every / sizeof *every), len % 40);
    }
    if (data[0] & 4) {
        uint64_t card = len ? (uint8_t)text[len - 1] : 0, *rows, nr;
        if (len && pq_delta_dv_decode((const uint8_t *)text, len - 1, card, &rows, &nr, &err) == PQ_OK) {
            FUZZ_CHECK(nr == card, "%llu rows for cardinality %llu", (unsigned long long)nr, (unsigned long long)card);
            for (uint64_t i = 1; i < nr; i++) FUZZ_CHECK(rows[i - 1] < rows[i], "rows not ascending at %llu", (unsigned long long)i);
            free(rows);
        }
        uint8_t z[256];
        pq_z85_decode(name, n - n % 5, z);
    }
    return 0;
}
