/* Appends to a Delta Lake table (PROTOCOL.md of delta-io/delta: "Writer
 * Requirements"): a blind append commits version N+1 holding commitInfo
 * and one add per new file, put-if-absent; a writer that took N+1 first
 * means trying N+2, unless its commit changed what this one was written
 * against (metaData or protocol: then the append fails, the caller removes
 * its file).  What a writer must honour and this one cannot (invariants,
 * CHECK constraints, generated and identity columns, column mapping, row
 * tracking, in-commit timestamps, ...) refuses the append up front. */
#include "tablefmt.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "delta_log.h"
#include "expr.h"
#include "footer.h"
#include "http.h"
#include "json_arena.h"
#include "numfmt.h"
#include "plan.h"

#define DELTA_LOG_DIR "_delta_log"
/* Commits another writer may take before an append gives up. */
#define APPEND_ATTEMPTS 1000

/* ------------------------------------------------------ what a writer must honour */

/* Writer features (protocol version 7) an append honours: by writing only
 * adds of files without deletion vectors, and by the schema and
 * configuration checks below for those whose use they find. */
static bool writer_feature_honoured(const char *f)
{
    static const char *const ok[] = {"appendOnly",       "invariants",    "checkConstraints",   "changeDataFeed",
                                     "generatedColumns", "columnMapping", "identityColumns",    "deletionVectors",
                                     "timestampNtz",     "v2Checkpoint",  "vacuumProtocolCheck", "domainMetadata"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(f, ok[i])) return true;
    return false;
}

/* A field metadata key of the schema (at any depth) that needs a writer to
 * compute or check values, *key its name; NULL when none. */
static const char *schema_needs(const json_t *type, int depth, const char **column)
{
    const json_t *fields = json_is_object(type) ? json_object_get(type, "fields") : NULL;
    if (depth > 64) return "a schema nested past 64 levels";
    size_t i;
    const json_t *f;
    json_array_foreach(fields, i, f) {
        const json_t *meta = json_object_get(f, "metadata");
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)meta, key, v) {
            (void)v;
            if (!strcmp(key, "delta.invariants") || !strcmp(key, "delta.generationExpression") ||
                !strncmp(key, "delta.identity.", 15) || !strcmp(key, "CURRENT_DEFAULT")) {
                *column = json_string_value(json_object_get(f, "name"));
                return key;
            }
        }
        const json_t *t = json_object_get(f, "type");
        /* Arrays and maps nest structs in elementType / valueType. */
        for (int hop = 0; hop < 4 && json_is_object(t) && !json_object_get(t, "fields"); hop++) {
            const json_t *next = json_object_get(t, "elementType");
            t = next ? next : json_object_get(t, "valueType");
        }
        const char *deeper = json_is_object(t) ? schema_needs(t, depth + 1, column) : NULL;
        if (deeper) return deeper;
    }
    return NULL;
}

int pq_tf_check_append(const pq_tf_snapshot *s, pq_error *err)
{
    if (s->kind != PQ_TF_DELTA) return PQ_OK;
    const pq_delta_log *log = s->priv;
    const char *what = s->table->root[0] ? s->table->root : "the table";
    if (log->min_writer > 7)
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: the Delta table needs writer version %lld (protocol.minWriterVersion); this build writes "
                       "versions 1 to 7",
                       what, (long long)log->min_writer);
    for (int i = 0; log->min_writer == 7 && i < log->n_writer_features; i++)
        if (!writer_feature_honoured(log->writer_features[i]))
            return pq_fail(err, PQ_E_UNSUPPORTED,
                           "%s: the Delta table has writer feature '%s' (protocol.writerFeatures), which this build "
                           "cannot honour in an append",
                           what, log->writer_features[i]);
    const char *column = NULL, *key = schema_needs(log->schema_json, 0, &column);
    if (key)
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: column '%s' has '%s' in its metadata (an invariant, a generated, identity or default "
                       "value), which this build does not compute or check",
                       what, column ? column : "?", key);
    const char *ckey;
    const json_t *v;
    json_object_foreach((json_t *)log->config_json, ckey, v) {
        (void)v;
        if (!strncmp(ckey, "delta.constraints.", 18))
            return pq_fail(err, PQ_E_UNSUPPORTED,
                           "%s: the Delta table has the CHECK constraint '%s', which this build does not check", what,
                           ckey + 18);
    }
    if (log->mapping_mode && strcmp(log->mapping_mode, "none"))
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: the Delta table uses column mapping mode '%s': this build writes no physical names or "
                       "field ids",
                       what, log->mapping_mode);
    return PQ_OK;
}

/* ------------------------------------------------------ the add's statistics */

/* v as the JSON of a Delta statistic of a column of Delta type `type`;
 * NULL where none is written (types whose statistics this build does not
 * write: timestamps, decimals, binary, booleans; NaN; text that is not
 * UTF-8 or longer than a reader keeps whole). */
static json_t *stat_value(const char *type, const pq_value *v)
{
    if (v->is_null) return NULL;
    bool integral = !strcmp(type, "long") || !strcmp(type, "integer") || !strcmp(type, "short") || !strcmp(type, "byte");
    if (integral && v->type == PQ_V_INT) return json_integer((json_int_t)v->u.i);
    if ((!strcmp(type, "double") || !strcmp(type, "float")) && v->type == PQ_V_DOUBLE && v->u.d == v->u.d &&
        v->u.d - v->u.d == 0)
        return json_real(v->u.d);
    if (!strcmp(type, "date") && v->type == PQ_V_DATE) {
        char buf[32];
        size_t n = pq_fmt_date(v->u.date, buf);
        return json_stringn(buf, n);
    }
    /* Readers take a string of 32 bytes or more as cut (delta_stats.c):
     * only shorter ones are written, so every one is whole. */
    if (!strcmp(type, "string") && v->type == PQ_V_STRING && v->u.s.len < 32 &&
        pq_utf8_valid_prefix(v->u.s.ptr, v->u.s.len) == v->u.s.len && !memchr(v->u.s.ptr, 0, v->u.s.len))
        return json_stringn((const char *)v->u.s.ptr, v->u.s.len);
    return NULL;
}

/* The exact range of leaf over every row group (*has false when one row
 * group does not know its bounds exactly). */
static void file_range(const pq_footer *ft, const pq_leaf *leaf, int32_t li, pq_value *min, pq_value *max,
                       bool *has_min, bool *has_max, int64_t *nulls, bool *has_nulls)
{
    *has_min = *has_max = *has_nulls = ft->meta.n_row_groups > 0;
    *nulls = 0;
    for (int32_t g = 0; g < ft->meta.n_row_groups; g++) {
        const pq_row_group *rg = &ft->meta.row_groups[g];
        if (li >= rg->n_columns || !rg->columns[li].has_meta) {
            *has_min = *has_max = *has_nulls = false;
            return;
        }
        const pq_column_meta *m = &rg->columns[li].meta;
        pq_col_range r;
        memset(&r, 0, sizeof r);
        pq_range_from_stats(leaf, &m->stats, m->has_stats, rg->num_rows, &r);
        bool all_null = r.has_null_count && r.null_count == rg->num_rows;
        if (r.has_null_count) *nulls += r.null_count;
        else *has_nulls = false;
        if (all_null) continue; /* no value to bound */
        if (!r.known || !r.has_min || !r.exact_min || r.may_have_nan) *has_min = false;
        if (!r.known || !r.has_max || !r.exact_max || r.may_have_nan) *has_max = false;
        if (*has_min && (g == 0 || min->is_null || pq_value_cmp(&r.min, min) < 0)) *min = r.min;
        if (*has_max && (g == 0 || max->is_null || pq_value_cmp(&r.max, max) > 0)) *max = r.max;
    }
}

/* add.stats of a new file: numRecords, and per top-level column of a type
 * it writes statistics of, minValues, maxValues and nullCount, from its
 * footer's row-group statistics (exact bounds only). */
static char *stats_text(const pq_tf_snapshot *s, const pq_footer *ft, int64_t rows)
{
    json_t *st = json_object(), *mins = json_object(), *maxs = json_object(), *nulls = json_object();
    bool ok = st && mins && maxs && nulls && !json_object_set_new(st, "numRecords", json_integer((json_int_t)rows));
    for (int i = 0; ok && ft && i < s->n_cols; i++) {
        const pq_tf_column *c = &s->cols[i];
        const pq_node *n = c->part < 0 ? pq_schema_find(&ft->schema, c->name) : NULL;
        if (!n || n->kind != PQ_NODE_PRIMITIVE || n->n_leaves != 1) continue;
        pq_value min = {.is_null = true}, max = {.is_null = true};
        bool has_min, has_max, has_nulls;
        int64_t nc;
        file_range(ft, &ft->schema.leaves[n->first_leaf], n->first_leaf, &min, &max, &has_min, &has_max, &nc, &has_nulls);
        json_t *jmin = has_min ? stat_value(c->type, &min) : NULL, *jmax = has_max ? stat_value(c->type, &max) : NULL;
        if (jmin && jmax) {
            ok = !json_object_set_new(mins, c->physical, jmin) && !json_object_set_new(maxs, c->physical, jmax);
        } else {
            json_decref(jmin);
            json_decref(jmax);
        }
        if (ok && has_nulls) ok = !json_object_set_new(nulls, c->physical, json_integer((json_int_t)nc));
    }
    ok = ok && !json_object_set(st, "minValues", mins) && !json_object_set(st, "maxValues", maxs) &&
         !json_object_set(st, "nullCount", nulls);
    char *dumped = ok ? json_dumps(st, JSON_COMPACT) : NULL;
    char *text = dumped ? strdup(dumped) : NULL; /* the caller's to free() */
    pq_json_free(dumped);
    json_decref(mins);
    json_decref(maxs);
    json_decref(nulls);
    json_decref(st);
    return text;
}

/* ------------------------------------------------------ the commit */

/* The commit's lines: commitInfo (with txn, the append's own id: a commit
 * read back is known for ours by it), then the add. */
static char *commit_text(const pq_tf_snapshot *s, const pq_tf_new_file *f, int64_t now_ms, const char *txn)
{
    pq_buf path;
    pq_buf_init(&path);
    /* A URI path, relative to the table (decoded once by readers). */
    if (pq_url_encode(&path, f->path, strlen(f->path), true)) return NULL;
    char *stats = stats_text(s, f->footer, f->rows);
    json_t *parts = json_object();
    for (int p = 0; parts && p < s->table->n_parts; p++) {
        const char *v = f->part_values[p];
        if (json_object_set_new(parts, s->table->part_names[p], v ? json_string(v) : json_null())) {
            json_decref(parts);
            parts = NULL;
        }
    }
    json_t *add = stats && parts ? json_pack("{s:{s:s,s:O,s:I,s:I,s:b,s:s}}", "add", "path", path.data,
                                             "partitionValues", parts, "size", (json_int_t)f->size,
                                             "modificationTime", (json_int_t)f->modified_ms, "dataChange", 1,
                                             "stats", stats)
                                 : NULL;
    json_t *info = json_pack("{s:{s:I,s:s,s:{s:s},s:b,s:s,s:s}}", "commitInfo", "timestamp", (json_int_t)now_ms,
                             "operation", "WRITE", "operationParameters", "mode", "Append", "isBlindAppend", 1,
                             "engineInfo", "pqfs", "txnId", txn);
    char *a = add ? json_dumps(add, JSON_COMPACT) : NULL, *b = info ? json_dumps(info, JSON_COMPACT) : NULL;
    char *text = NULL;
    if (a && b && (text = malloc(strlen(a) + strlen(b) + 3))) sprintf(text, "%s\n%s\n", b, a);
    pq_json_free(a);
    pq_json_free(b);
    json_decref(add);
    json_decref(info);
    json_decref(parts);
    free(stats);
    pq_buf_free(&path);
    return text;
}

/* The commit at path, read back: *ours when its commitInfo.txnId is
 * txn (this append's: a PUT whose reply was lost, then retried, landed).
 * Another writer's that changed the table's schema or protocol fails:
 * the append, written against the old ones, must not follow it.  A line
 * that is not JSON fails too (what it changed is not known). */
static int read_back(pq_store *store, const char *path, const char *txn, bool *ours, pq_error *err)
{
    *ours = false;
    char *text;
    size_t size;
    PQ_TRY(pq_delta_read_log_file(store, path, &text, &size, err));
    int rc = PQ_OK;
    bool changed = false;
    for (char *line = text, *end; rc == PQ_OK && line && line < text + size; line = end + 1) {
        end = memchr(line, '\n', (size_t)(text + size - line));
        if (!end) end = text + size;
        size_t n = (size_t)(end - line);
        while (n && (line[n - 1] == '\r' || line[n - 1] == ' ')) n--;
        if (!n) continue;
        json_t *o = json_loadb(line, n, 0, NULL);
        if (!json_is_object(o)) {
            rc = pq_fail(err, PQ_E_IO, "%s: a concurrent commit holds a line that is not a JSON object", path);
        } else {
            const json_t *id = json_object_get(json_object_get(o, "commitInfo"), "txnId");
            if (json_is_string(id) && !strcmp(json_string_value(id), txn)) *ours = true;
            changed |= json_object_get(o, "metaData") || json_object_get(o, "protocol");
        }
        json_decref(o);
    }
    if (rc == PQ_OK && changed && !*ours)
        rc = pq_fail(err, PQ_E_IO,
                     "%s: a concurrent commit changed the table's schema or protocol: the append is not committed",
                     path);
    free(text);
    return rc;
}

/* Puts text at path unless something is there (PQ_E_EXISTS). */
static int put_new(pq_store *store, const char *path, const char *text, pq_error *err)
{
    pq_upload *u;
    PQ_TRY(store->ops->create(store, path, &u, err));
    if (!u->ops->commit_new) {
        u->ops->abort(u);
        return pq_fail(err, PQ_E_UNSUPPORTED, "%s: this store has no put-if-absent write for a log commit", path);
    }
    if (u->ops->write(u, text, strlen(text), err) != PQ_OK) {
        u->ops->abort(u);
        return PQ_ERR;
    }
    return u->ops->commit_new(u, err);
}

/* This append's id: 128 random bits in hex. */
static void new_txn_id(char out[33])
{
    uint8_t r[16];
    static _Atomic uint64_t counter;
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x[2] = {(uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32), (uint64_t)ts.tv_sec + counter++};
        memcpy(r, x, sizeof r);
    }
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", r[i]);
}

/* One attempt at version v: PQ_OK committed (ours, also when read back
 * after a lost reply), *next when another writer's blind commit took v,
 * *again when v should be tried again (nothing there yet); else an error,
 * *maybe when ours may have landed all the same. */
static int attempt_at(pq_store *store, const char *path, const char *text, const char *txn, bool *next, bool *again,
                      bool *maybe, pq_error *err)
{
    *next = *again = false;
    int rc = put_new(store, path, text, err);
    if (rc == PQ_OK) return PQ_OK;
    bool taken = err->cls == PQ_E_EXISTS;
    if (!taken && err->cls != PQ_E_IO) return PQ_ERR; /* refused before a byte went: nothing landed */
    /* Taken, or the reply lost: whose is it? */
    pq_error put_err = *err;
    bool ours;
    rc = read_back(store, path, txn, &ours, err);
    if (rc == PQ_OK) {
        *next = !ours;
        return ours ? PQ_OK : PQ_ERR;
    }
    if (err->cls == PQ_E_NOTFOUND) {
        /* Not there: ours did not land (a 409 of a write in flight, or a
         * failed PUT), so v is tried again. */
        *again = true;
        *err = put_err;
        return PQ_ERR;
    }
    *maybe = !taken; /* a failed PUT whose fate a failed read cannot tell */
    return PQ_ERR;
}

int pq_tf_append(pq_store *store, const pq_tf_snapshot *s, const pq_tf_new_file *f, int64_t *version, bool *maybe,
                 pq_error *err)
{
    *maybe = false;
    if (s->kind != PQ_TF_DELTA) return pq_fail(err, PQ_E_USAGE, "an append to a table without a log");
    PQ_TRY(pq_tf_check_append(s, err));
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char txn[33];
    new_txn_id(txn);
    char *text = commit_text(s, f, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, txn);
    char *logdir = pq_path_join(s->table->root, DELTA_LOG_DIR);
    int rc = text && logdir ? PQ_OK : PQ_NOMEM(err);
    int64_t v = s->version + 1;
    for (int attempt = 0; rc == PQ_OK; attempt++) {
        if (attempt >= APPEND_ATTEMPTS) {
            rc = pq_fail(err, PQ_E_IO, "%s: %d attempts at committing, other writers taking the versions", logdir,
                         APPEND_ATTEMPTS);
            break;
        }
        char name[PQ_DELTA_VERSION_DIGITS + 8];
        snprintf(name, sizeof name, "%020lld.json", (long long)v);
        char *path = pq_path_join(logdir, name);
        if (!path) {
            rc = PQ_NOMEM(err);
            break;
        }
        bool next, again;
        rc = attempt_at(store, path, text, txn, &next, &again, maybe, err);
        free(path);
        if (rc == PQ_OK) {
            *version = v;
            break;
        }
        if (next || again) {
            if (again) nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
            v += next;
            rc = PQ_OK;
        }
    }
    free(logdir);
    free(text);
    return rc;
}
