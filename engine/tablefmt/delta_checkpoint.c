/* Classic checkpoints of a Delta table (PROTOCOL.md "Checkpoints"): the
 * table's state at a version as one Parquet file, N.checkpoint.parquet,
 * one action per row: protocol, metaData, the latest txn per application,
 * domainMetadata, every live add (dataChange false) and the removes not
 * yet past delta.deletedFileRetentionDuration (tombstones, for VACUUM and
 * readers of older versions).  The rows come from a replay that keeps each
 * action's JSON (pq_delta_replay_keeping); they are striped into the
 * columns of the checkpoint schema below (Dremel: definition and
 * repetition levels per leaf) and written through our column writers.  An
 * action with a field this schema does not hold is not dropped: the
 * checkpoint is not written (PQ_E_UNSUPPORTED), the JSON commits still
 * are the table. */
#include "tablefmt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "colwrite.h"
#include "delta_log.h"
#include "filewrite.h"

#define DELTA_LOG_DIR "_delta_log"
/* Actions per row group of a checkpoint. */
#define CP_ROWS_PER_GROUP 16384
/* delta.deletedFileRetentionDuration when the table does not set it. */
#define DEFAULT_RETENTION_MS (7LL * 24 * 3600 * 1000)

/* ------------------------------------------------------ the schema */

/* One field of the checkpoint schema: its depth (0: an action), kind and
 * name.  Kinds: S struct, s string, l long, i int, b boolean, M
 * map<string,string>, L list<string>. */
typedef struct cp_field {
    int depth;
    char kind;
    const char *name;
} cp_field;

#define DV_FIELDS                                                                                                      \
    {1, 'S', "deletionVector"}, {2, 's', "storageType"}, {2, 's', "pathOrInlineDv"}, {2, 'i', "offset"},               \
        {2, 'i', "sizeInBytes"}, {2, 'l', "cardinality"}

static const cp_field cp_schema[] = {
    {0, 'S', "txn"},      {1, 's', "appId"}, {1, 'l', "version"}, {1, 'l', "lastUpdated"},
    {0, 'S', "add"},      {1, 's', "path"},  {1, 'M', "partitionValues"}, {1, 'l', "size"},
    {1, 'l', "modificationTime"}, {1, 'b', "dataChange"}, {1, 's', "stats"}, {1, 'M', "tags"}, DV_FIELDS,
    {0, 'S', "remove"},   {1, 's', "path"},  {1, 'l', "deletionTimestamp"}, {1, 'b', "dataChange"},
    {1, 'b', "extendedFileMetadata"}, {1, 'M', "partitionValues"}, {1, 'l', "size"}, {1, 'M', "tags"}, DV_FIELDS,
    {0, 'S', "metaData"}, {1, 's', "id"},    {1, 's', "name"}, {1, 's', "description"}, {1, 'S', "format"},
    {2, 's', "provider"}, {2, 'M', "options"}, {1, 's', "schemaString"}, {1, 'L', "partitionColumns"},
    {1, 'M', "configuration"}, {1, 'l', "createdTime"},
    {0, 'S', "protocol"}, {1, 'i', "minReaderVersion"}, {1, 'i', "minWriterVersion"}, {1, 'L', "readerFeatures"},
    {1, 'L', "writerFeatures"},
    {0, 'S', "domainMetadata"}, {1, 's', "domain"}, {1, 's', "configuration"}, {1, 'b', "removed"},
};
#define N_CP_FIELDS ((int)(sizeof cp_schema / sizeof *cp_schema))

static pq_schema_element group(const char *name, int repetition, int children, int converted)
{
    return (pq_schema_element){.name = name, .has_repetition = true, .repetition = repetition,
                               .has_num_children = true, .num_children = children, .converted_type = converted};
}

static pq_schema_element leaf(const char *name, int repetition, pq_phys phys)
{
    pq_schema_element e = {.name = name, .has_type = true, .type = phys, .has_repetition = true,
                           .repetition = repetition, .converted_type = PQ_CT_NONE};
    if (phys == PQ_BYTE_ARRAY) {
        e.converted_type = PQ_CT_UTF8;
        e.has_logical = true;
        e.logical.kind = PQ_LT_STRING;
    }
    return e;
}

/* The checkpoint schema's elements (*out malloc'd, *n of them). */
static int cp_elements(pq_schema_element **out, int32_t *n, pq_error *err)
{
    pq_schema_element *e = calloc((size_t)N_CP_FIELDS * 3 + 2, sizeof *e);
    if (!e) return PQ_NOMEM(err);
    int k = 0, tops = 0;
    e[k++] = group("schema", PQ_REQUIRED, 0, PQ_CT_NONE);
    for (int i = 0; i < N_CP_FIELDS; i++) {
        const cp_field *f = &cp_schema[i];
        if (f->depth == 0) tops++;
        int kids = 0;
        for (int j = i + 1; j < N_CP_FIELDS && cp_schema[j].depth > f->depth; j++) kids += cp_schema[j].depth == f->depth + 1;
        switch (f->kind) {
        case 'S': e[k++] = group(f->name, PQ_OPTIONAL, kids, PQ_CT_NONE); break;
        case 's': e[k++] = leaf(f->name, PQ_OPTIONAL, PQ_BYTE_ARRAY); break;
        case 'l': e[k++] = leaf(f->name, PQ_OPTIONAL, PQ_INT64); break;
        case 'i': e[k++] = leaf(f->name, PQ_OPTIONAL, PQ_INT32); break;
        case 'b': e[k++] = leaf(f->name, PQ_OPTIONAL, PQ_BOOLEAN); break;
        case 'M':
            e[k++] = group(f->name, PQ_OPTIONAL, 1, PQ_CT_MAP);
            e[k++] = group("key_value", PQ_REPEATED, 2, PQ_CT_NONE);
            e[k++] = leaf("key", PQ_REQUIRED, PQ_BYTE_ARRAY);
            e[k++] = leaf("value", PQ_OPTIONAL, PQ_BYTE_ARRAY);
            break;
        default: /* 'L' */
            e[k++] = group(f->name, PQ_OPTIONAL, 1, PQ_CT_LIST);
            e[k++] = group("list", PQ_REPEATED, 1, PQ_CT_NONE);
            e[k++] = leaf("element", PQ_OPTIONAL, PQ_BYTE_ARRAY);
            break;
        }
    }
    e[0].num_children = tops;
    *out = e;
    *n = k;
    return PQ_OK;
}

/* ------------------------------------------------------ striping */

/* One leaf's levels and values for a row group. */
typedef struct cp_column {
    uint16_t *def, *rep;
    void *values;              /* int64_t, int32_t, uint8_t or pq_bytes */
    int32_t n_levels, n_values, cap_levels, cap_values;
} cp_column;

typedef struct cp_stripe {
    const pq_schema *schema;
    cp_column *cols;
    bool oom;
    char bad[256];             /* a value this schema cannot hold ("" none) */
} cp_stripe;

static size_t value_size(pq_phys p)
{
    return p == PQ_INT64 ? 8 : p == PQ_INT32 ? 4 : p == PQ_BOOLEAN ? 1 : sizeof(pq_bytes);
}

/* One level entry of n's column, and its value when def says it has one:
 * the JSON value v, or (key) the text at key (a map's key, which lives in
 * the map as long as the row does). */
static void emit_entry(cp_stripe *s, const pq_node *n, uint16_t rep, uint16_t def, const json_t *v, const char *key)
{
    cp_column *c = &s->cols[n->leaf_index];
    if (c->n_levels == c->cap_levels) {
        int32_t cap = c->cap_levels ? c->cap_levels * 2 : 1024;
        uint16_t *d = realloc(c->def, sizeof *d * (size_t)cap), *r = d ? realloc(c->rep, sizeof *r * (size_t)cap) : NULL;
        if (d) c->def = d;
        if (r) c->rep = r;
        if (!d || !r) {
            s->oom = true;
            return;
        }
        c->cap_levels = cap;
    }
    c->def[c->n_levels] = def;
    c->rep[c->n_levels++] = rep;
    if (def < n->def_level) return; /* null */
    if (c->n_values == c->cap_values) {
        int32_t cap = c->cap_values ? c->cap_values * 2 : 1024;
        void *vals = realloc(c->values, value_size(n->phys) * (size_t)cap);
        if (!vals) {
            s->oom = true;
            return;
        }
        c->values = vals;
        c->cap_values = cap;
    }
    int32_t i = c->n_values++;
    if (key) ((pq_bytes *)c->values)[i] = (pq_bytes){(const uint8_t *)key, (uint32_t)strlen(key)};
    else if (n->phys == PQ_INT64) ((int64_t *)c->values)[i] = (int64_t)json_integer_value(v);
    else if (n->phys == PQ_INT32) ((int32_t *)c->values)[i] = (int32_t)json_integer_value(v);
    else if (n->phys == PQ_BOOLEAN) ((uint8_t *)c->values)[i] = json_is_true(v);
    else ((pq_bytes *)c->values)[i] = (pq_bytes){(const uint8_t *)json_string_value(v), (uint32_t)json_string_length(v)};
}

static void emit(cp_stripe *s, const pq_node *n, uint16_t rep, uint16_t def, const json_t *v)
{
    emit_entry(s, n, rep, def, v, NULL);
}

/* Every leaf under n, null at level def. */
static void emit_nulls(cp_stripe *s, const pq_node *n, uint16_t rep, uint16_t def)
{
    if (n->kind == PQ_NODE_PRIMITIVE) {
        emit(s, n, rep, def, NULL);
        return;
    }
    for (int32_t c = 0; c < n->n_children; c++)
        if (n->children[c]) emit_nulls(s, n->children[c], rep, def);
}

static void mistyped(cp_stripe *s, const pq_node *n, const json_t *v)
{
    if (!s->bad[0])
        snprintf(s->bad, sizeof s->bad, "field '%s' holds a JSON %s", n->name,
                 json_is_object(v) ? "object" : json_is_array(v) ? "array" : json_is_string(v) ? "string" : "value");
}

static void stripe(cp_stripe *s, const pq_node *n, const json_t *v, uint16_t rep);

/* A map<string,string> or list<string>: its entries, the first at rep,
 * the others at the collection's repetition level. */
static void stripe_collection(cp_stripe *s, const pq_node *n, const json_t *v, uint16_t rep)
{
    bool map = n->kind == PQ_NODE_MAP;
    if (map ? !json_is_object(v) : !json_is_array(v)) {
        mistyped(s, n, v);
        return;
    }
    size_t count = map ? json_object_size(v) : json_array_size(v);
    if (count == 0) {
        emit_nulls(s, n, rep, (uint16_t)n->def_level); /* present, empty */
        return;
    }
    size_t i = 0;
    if (map) {
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e) {
            uint16_t r = i++ ? (uint16_t)n->elem_rep_level : rep;
            emit_entry(s, n->children[0], r, (uint16_t)n->children[0]->def_level, NULL, k);
            stripe(s, n->children[1], e, r);
        }
    } else {
        json_t *e;
        json_array_foreach((json_t *)v, i, e) stripe(s, n->children[0], e, i ? (uint16_t)n->elem_rep_level : rep);
    }
}

static void stripe(cp_stripe *s, const pq_node *n, const json_t *v, uint16_t rep)
{
    if (!v || json_is_null(v)) {
        emit_nulls(s, n, rep, (uint16_t)(n->def_level - (n->nullable ? 1 : 0)));
        return;
    }
    switch (n->kind) {
    case PQ_NODE_PRIMITIVE: {
        bool fits = n->phys == PQ_BYTE_ARRAY ? json_is_string(v)
                    : n->phys == PQ_BOOLEAN  ? json_is_boolean(v)
                    : n->phys == PQ_INT32    ? json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
                                                json_integer_value(v) <= INT32_MAX
                                             : json_is_integer(v);
        if (!fits) mistyped(s, n, v);
        else emit(s, n, rep, (uint16_t)n->def_level, v);
        return;
    }
    case PQ_NODE_STRUCT: {
        if (!json_is_object(v)) {
            mistyped(s, n, v);
            return;
        }
        /* Every field of the action must have its column. */
        const char *k;
        json_t *e;
        json_object_foreach((json_t *)v, k, e) {
            bool known = false;
            for (int32_t c = 0; c < n->n_children && !known; c++) known = !strcmp(n->children[c]->name, k);
            if (!known && !s->bad[0]) snprintf(s->bad, sizeof s->bad, "%s.%.100s has no column", n->name, k);
        }
        for (int32_t c = 0; c < n->n_children; c++) stripe(s, n->children[c], json_object_get(v, n->children[c]->name), rep);
        return;
    }
    default:
        stripe_collection(s, n, v, rep);
    }
}

/* ------------------------------------------------------ what a checkpoint holds */

typedef struct cp_kept {
    json_t *adds;              /* key -> add, live */
    json_t *tombstones;        /* key -> remove */
    json_t *txns;              /* appId -> txn */
    json_t *domains;           /* domain -> domainMetadata */
    json_t *metadata, *protocol;
} cp_kept;

static void kept_free(cp_kept *k)
{
    json_decref(k->adds);
    json_decref(k->tombstones);
    json_decref(k->txns);
    json_decref(k->domains);
    json_decref(k->metadata);
    json_decref(k->protocol);
}

/* pq_delta_keep_fn: the last action for each file, txn application and
 * domain, and the last metaData and protocol. */
static int keep_action(void *ctx, pq_delta_log *log, const char *kind, const void *value, const pq_delta_where *w,
                       pq_error *err)
{
    cp_kept *k = ctx;
    json_t *v = (json_t *)value;
    bool add = !strcmp(kind, "add"), remove = !strcmp(kind, "remove");
    if (add || remove) {
        const char *key;
        PQ_TRY(pq_delta_file_key(log, v, kind, w, &key, err));
        json_object_del(add ? k->tombstones : k->adds, key);
        return json_object_set_nocheck(add ? k->adds : k->tombstones, key, v) ? PQ_NOMEM(err) : PQ_OK;
    }
    json_t **one = !strcmp(kind, "metaData") ? &k->metadata : !strcmp(kind, "protocol") ? &k->protocol : NULL;
    if (one) {
        json_decref(*one);
        *one = json_incref(v);
        return PQ_OK;
    }
    bool txn = !strcmp(kind, "txn"), domain = !strcmp(kind, "domainMetadata");
    if (!txn && !domain) return PQ_OK; /* commitInfo, cdc, sidecar, checkpointMetadata: not state */
    const char *id = json_string_value(json_object_get(v, txn ? "appId" : "domain"));
    if (!id)
        return pq_fail(err, PQ_E_CORRUPT, "%s: %s %lld: %s without %s", w->file, w->unit, (long long)w->line, kind,
                       txn ? "appId" : "domain");
    return json_object_set_nocheck(txn ? k->txns : k->domains, id, v) ? PQ_NOMEM(err) : PQ_OK;
}

/* The microseconds of one UNIT of an interval (units[i].name, plural too),
 * 0 for a word that is none. */
static int64_t interval_unit_us(const char *word, size_t n)
{
    static const struct { const char *name; int64_t us; } units[] = {
        {"week", 604800000000}, {"day", 86400000000}, {"hour", 3600000000}, {"minute", 60000000},
        {"second", 1000000},    {"millisecond", 1000}, {"microsecond", 1},
    };
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        size_t len = strlen(units[i].name);
        if ((n == len || (n == len + 1 && (word[len] == 's' || word[len] == 'S'))) &&
            !strncasecmp(word, units[i].name, len))
            return units[i].us;
    }
    return 0;
}

int64_t pq_delta_interval_ms(const char *text)
{
    const char *p = text;
    int64_t total = 0; /* microseconds */
    int parts = 0;
    while (isspace((unsigned char)*p)) p++;
    if (!strncasecmp(p, "interval", 8) && (isspace((unsigned char)p[8]) || !p[8])) p += 8;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        bool neg = *p == '-';
        if (*p == '-' || *p == '+') p++;
        if (!isdigit((unsigned char)*p)) return -1;
        int64_t n = 0, frac = 0, scale = 1000000; /* frac: microseconds of a second */
        for (; isdigit((unsigned char)*p); p++) {
            if (n > (INT64_MAX - 9) / 10) return -1;
            n = n * 10 + (*p - '0');
        }
        bool fractional = *p == '.';
        if (fractional) {
            if (!isdigit((unsigned char)*++p)) return -1;
            for (; isdigit((unsigned char)*p); p++)
                if (scale > 1) frac += (*p - '0') * (scale /= 10);
        }
        while (isspace((unsigned char)*p)) p++;
        const char *word = p;
        while (isalpha((unsigned char)*p)) p++;
        int64_t us = interval_unit_us(word, (size_t)(p - word));
        if (!us || (fractional && us != 1000000) || (*p && !isspace((unsigned char)*p))) return -1;
        if (n > (INT64_MAX - frac) / us) return -1;
        int64_t v = n * us + frac;
        if (neg ? total < INT64_MIN + v : total > INT64_MAX - v) return -1;
        total += neg ? -v : v;
        parts++;
    }
    return parts && total >= 0 ? total / 1000 : -1;
}

/* delta.deletedFileRetentionDuration in ms, by default a week; -1 when it
 * does not parse (then every tombstone is kept). */
static int64_t retention_ms(const pq_delta_log *log)
{
    const json_t *v = json_object_get(log->config_json, "delta.deletedFileRetentionDuration");
    if (!v) return DEFAULT_RETENTION_MS;
    return json_is_string(v) ? pq_delta_interval_ms(json_string_value(v)) : -1;
}

/* The checkpoint's rows, one action each ({"add": {...}}), into rows. */
static int cp_rows(const cp_kept *k, const pq_delta_log *log, json_t *rows, pq_error *err)
{
    int bad = 0;
    bad |= json_array_append_new(rows, json_pack("{s:O}", "protocol", k->protocol));
    bad |= json_array_append_new(rows, json_pack("{s:O}", "metaData", k->metadata));
    const char *key;
    json_t *v;
    json_object_foreach(k->txns, key, v) bad |= json_array_append_new(rows, json_pack("{s:O}", "txn", v));
    json_object_foreach(k->domains, key, v) bad |= json_array_append_new(rows, json_pack("{s:O}", "domainMetadata", v));
    json_object_foreach(k->adds, key, v) {
        json_t *a = json_copy(v); /* a checkpoint's adds change no data */
        bad |= !a || json_object_set_new(a, "dataChange", json_false());
        bad |= json_array_append_new(rows, json_pack("{s:o}", "add", a));
    }
    int64_t keep = retention_ms(log);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    json_object_foreach(k->tombstones, key, v) {
        const json_t *at = json_object_get(v, "deletionTimestamp");
        if (keep >= 0 && json_is_integer(at) && json_integer_value(at) < now - keep) continue; /* expired */
        bad |= json_array_append_new(rows, json_pack("{s:O}", "remove", v));
    }
    return bad ? PQ_NOMEM(err) : PQ_OK;
}

/* ------------------------------------------------------ writing */

typedef struct upload_sink {
    pq_upload *up;
} upload_sink;

static int to_upload(void *ctx, const char *data, size_t len, pq_error *err)
{
    upload_sink *u = ctx;
    return u->up->ops->write(u->up, data, len, err);
}

/* Rows [from, to) as one row group of fw. */
static int write_group(pq_filewriter *fw, const pq_schema *schema, const json_t *rows, size_t from, size_t to,
                       const char *what, pq_error *err)
{
    cp_stripe s = {.schema = schema, .cols = calloc((size_t)schema->n_leaves, sizeof *s.cols)};
    pq_chunk_out *chunks = calloc((size_t)schema->n_leaves, sizeof *chunks);
    int rc = s.cols && chunks ? PQ_OK : PQ_NOMEM(err);
    for (size_t r = from; rc == PQ_OK && r < to; r++) {
        const json_t *row = json_array_get(rows, r);
        for (int32_t c = 0; c < schema->root->n_children; c++) {
            const pq_node *n = schema->root->children[c];
            stripe(&s, n, json_object_get(row, n->name), 0);
        }
    }
    if (rc == PQ_OK && s.oom) rc = PQ_NOMEM(err);
    if (rc == PQ_OK && s.bad[0])
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: an action this checkpoint schema cannot hold: %s", what, s.bad);
    pq_write_opts wo;
    pq_write_opts_init(&wo);
    int32_t done = 0;
    for (int32_t i = 0; rc == PQ_OK && i < schema->n_leaves; i++, done++) {
        const pq_leaf *lf = &schema->leaves[i];
        pq_colwriter *w = NULL;
        pq_col_batch b = {.n_rows = (int32_t)(to - from), .n_levels = s.cols[i].n_levels,
                          .def = lf->max_def ? s.cols[i].def : NULL, .rep = lf->max_rep ? s.cols[i].rep : NULL,
                          .n_values = s.cols[i].n_values, .values = s.cols[i].values};
        rc = pq_colwriter_new(lf, &wo, &w, err);
        if (rc == PQ_OK) rc = pq_colwriter_add(w, &b, err);
        if (rc == PQ_OK) rc = pq_colwriter_finish(w, &chunks[i], err);
        pq_colwriter_free(w);
        if (rc != PQ_OK) break;
    }
    if (rc == PQ_OK) rc = pq_filewriter_add_row_group(fw, chunks, err); /* takes them over, zeroed */
    pq_chunks_free(chunks, rc == PQ_OK ? 0 : done);
    for (int32_t i = 0; s.cols && i < schema->n_leaves; i++) {
        free(s.cols[i].def);
        free(s.cols[i].rep);
        free(s.cols[i].values);
    }
    free(s.cols);
    return rc;
}

/* The checkpoint file of rows at path (put-if-absent: a checkpoint another
 * writer made first is as good). */
static int write_checkpoint(pq_store *store, const char *path, const json_t *rows, pq_error *err)
{
    pq_schema_element *el = NULL;
    int32_t n_el = 0;
    PQ_TRY(cp_elements(&el, &n_el, err));
    pq_file_meta meta = {.schema = el, .n_schema = n_el, .n_column_orders = -1};
    pq_schema schema;
    memset(&schema, 0, sizeof schema);
    int rc = pq_schema_build(&meta, &schema, err);
    upload_sink us = {NULL};
    pq_filewriter *fw = NULL;
    if (rc == PQ_OK) rc = store->ops->create(store, path, &us.up, err);
    if (rc == PQ_OK && !us.up->ops->commit_new)
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: this store has no put-if-absent write", path);
    pq_sink sink = {to_upload, &us};
    if (rc == PQ_OK) rc = pq_filewriter_new(&sink, el, n_el, schema.n_leaves, &fw, err);
    size_t n = json_array_size(rows);
    for (size_t at = 0; rc == PQ_OK && at < n; at += CP_ROWS_PER_GROUP)
        rc = write_group(fw, &schema, rows, at, at + CP_ROWS_PER_GROUP < n ? at + CP_ROWS_PER_GROUP : n, path, err);
    if (rc == PQ_OK) rc = pq_filewriter_finish(fw, err);
    pq_filewriter_free(fw);
    if (us.up && rc == PQ_OK) {
        rc = us.up->ops->commit_new(us.up, err);
        if (rc != PQ_OK && err->cls == PQ_E_EXISTS) rc = PQ_OK;
    } else if (us.up) {
        us.up->ops->abort(us.up);
    }
    pq_schema_free(&schema);
    free(el);
    return rc;
}

/* _last_checkpoint: a hint for readers (they check it against the listing). */
static int write_hint(pq_store *store, const char *logdir, int64_t version, size_t size, pq_error *err)
{
    char *path = pq_path_join(logdir, "_last_checkpoint");
    char text[96];
    int n = snprintf(text, sizeof text, "{\"version\":%lld,\"size\":%zu}\n", (long long)version, size);
    pq_upload *u = NULL;
    int rc = path ? store->ops->create(store, path, &u, err) : PQ_NOMEM(err);
    if (rc == PQ_OK) rc = u->ops->write(u, text, (size_t)n, err);
    if (rc == PQ_OK) rc = u->ops->commit(u, err);
    else if (u) u->ops->abort(u);
    free(path);
    return rc;
}

int pq_tf_checkpoint(pq_store *store, const pq_tf_snapshot *s, int64_t version, pq_error *err)
{
    if (s->kind != PQ_TF_DELTA) return pq_fail(err, PQ_E_USAGE, "a checkpoint of a table without a log");
    const pq_delta_log *cur = s->priv;
    for (int i = 0; i < cur->n_writer_features; i++)
        if (!strcmp(cur->writer_features[i], "v2Checkpoint"))
            return pq_fail(err, PQ_E_UNSUPPORTED, "%s: a v2Checkpoint table's checkpoints are not written",
                           s->table->root);
    cp_kept k = {json_object(), json_object(), json_object(), json_object(), NULL, NULL};
    json_t *rows = json_array();
    pq_delta_log log;
    int rc = k.adds && k.tombstones && k.txns && k.domains && rows ? PQ_OK : PQ_NOMEM(err);
    if (rc == PQ_OK) rc = pq_delta_replay_keeping(store, s->table->root, version, keep_action, &k, &log, err);
    else pq_delta_log_init(&log);
    if (rc == PQ_OK && (!k.protocol || !k.metadata))
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: no protocol or metaData to checkpoint", s->table->root);
    if (rc == PQ_OK) rc = cp_rows(&k, &log, rows, err);
    char *logdir = pq_path_join(s->table->root, DELTA_LOG_DIR);
    char name[PQ_DELTA_VERSION_DIGITS + 24];
    snprintf(name, sizeof name, "%020lld.checkpoint.parquet", (long long)version);
    char *path = logdir ? pq_path_join(logdir, name) : NULL;
    if (rc == PQ_OK && !path) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) rc = write_checkpoint(store, path, rows, err);
    if (rc == PQ_OK) rc = write_hint(store, logdir, version, json_array_size(rows), err);
    free(path);
    free(logdir);
    json_decref(rows);
    pq_delta_log_free(&log);
    kept_free(&k);
    return rc;
}
