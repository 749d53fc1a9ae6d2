/* Table formats into one snapshot (tablefmt.h): Hive through io/table.c's
 * discovery, Delta through the log replay (delta_log.h); a file's extras
 * (a Delta deletion vector, decoded with CRoaring: the section at the end). */
#include "tablefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delta_log.h"
#include "footer.h"
#include "numfmt.h"

#include <jansson.h>
#include <roaring/roaring.h>
#include <zlib.h>

#define DELTA_LOG_DIR "_delta_log"

const char *pq_tf_kind_name(pq_tf_kind kind)
{
    return kind == PQ_TF_DELTA ? "Delta Lake" : "Hive";
}

int pq_tf_describe(const pq_tf_snapshot *s, pq_buf *out)
{
    if (s->kind == PQ_TF_HIVE) return 0;
    int rc = pq_buf_printf(out, "table: %s, version %lld", pq_tf_kind_name(s->kind), (long long)s->version);
    if (s->checkpoint_version >= 0)
        rc |= pq_buf_printf(out, " (from the checkpoint of version %lld)", (long long)s->checkpoint_version);
    rc |= pq_buf_printf(out, ", %d live file%s\n", s->table->n_files, s->table->n_files == 1 ? "" : "s");
    return rc;
}

typedef struct detect_ctx {
    bool delta;
} detect_ctx;

static int on_root_entry(void *ctx, const pq_dirent *e)
{
    detect_ctx *d = ctx;
    if (e->st.is_dir && !strcmp(e->name, DELTA_LOG_DIR)) {
        d->delta = true;
        return 1;
    }
    return 0;
}

int pq_tf_detect(pq_store *store, const char *root, pq_tf_kind *out, pq_error *err)
{
    detect_ctx d = {false};
    PQ_TRY(store->ops->list(store, root, on_root_entry, &d, err));
    *out = d.delta ? PQ_TF_DELTA : PQ_TF_HIVE;
    return PQ_OK;
}

void pq_tf_snapshot_free(pq_tf_snapshot *s)
{
    if (!s) return;
    pq_table_free(s->table);
    free(s->cols);
    free(s->files);
    if (s->priv) {
        pq_delta_log_free(s->priv);
        free(s->priv);
    }
    free(s);
}

/* A Delta `decimal(P,S)` (or `decimal`: decimal(10,0)) as a partition
 * type; -1 for another type. */
static int delta_decimal_type(const char *type)
{
    if (!strcmp(type, "decimal")) return pq_part_decimal(10, 0);
    int precision, scale, end = 0;
    if (sscanf(type, "decimal(%d,%d)%n", &precision, &scale, &end) != 2 || type[end] || precision < 1 ||
        precision > 38 || scale < 0 || scale > precision)
        return -1;
    return pq_part_decimal(precision, scale);
}

/* A Delta primitive type as a partition column's type; -1: not read as a
 * partition column yet. */
static int delta_part_type(const char *type)
{
    if (!strncmp(type, "decimal", 7)) return delta_decimal_type(type);
    if (!strcmp(type, "string")) return PQ_PART_STRING;
    if (!strcmp(type, "long") || !strcmp(type, "integer") || !strcmp(type, "short") || !strcmp(type, "byte"))
        return PQ_PART_INT64;
    if (!strcmp(type, "date")) return PQ_PART_DATE;
    if (!strcmp(type, "double") || !strcmp(type, "float")) return PQ_PART_DOUBLE;
    if (!strcmp(type, "boolean")) return PQ_PART_BOOL;
    if (!strcmp(type, "timestamp")) return PQ_PART_TIMESTAMP;
    if (!strcmp(type, "timestamp_ntz")) return PQ_PART_TIMESTAMP_NTZ;
    return -1;
}

static const pq_delta_field *field_named(const pq_delta_log *log, const char *name)
{
    for (int i = 0; i < log->n_fields; i++)
        if (!strcmp(log->fields[i].name, name)) return &log->fields[i];
    return NULL;
}

/* The table's partition columns, named and typed by the schema. */
static int delta_parts(const pq_delta_log *log, pq_table *t, const char *what, pq_error *err)
{
    t->part_names = calloc((size_t)log->n_part_cols + 1, sizeof *t->part_names);
    t->part_types = calloc((size_t)log->n_part_cols + 1, sizeof *t->part_types);
    if (!t->part_names || !t->part_types) return PQ_NOMEM(err);
    for (int p = 0; p < log->n_part_cols; p++) {
        const pq_delta_field *f = field_named(log, log->part_cols[p]);
        int type = f ? delta_part_type(f->type) : -1;
        if (type < 0)
            return pq_fail(err, PQ_E_UNSUPPORTED,
                           "%s: partition column '%s' is of type '%s', which this build does not read as a partition "
                           "column (string, long, integer, short, byte, date, double, float, boolean, timestamp, "
                           "timestamp_ntz, decimal)",
                           what, log->part_cols[p], f ? f->type : "?");
        if (!(t->part_names[p] = strdup(log->part_cols[p]))) return PQ_NOMEM(err);
        t->part_types[p] = (pq_part_type)type;
        t->n_parts = p + 1;
    }
    return PQ_OK;
}

/* One live file's partition values, one block (array, then the strings):
 * pq_table_free frees the array alone.  null and "" are NULL. */
static int delta_values(const pq_delta_log *log, const pq_delta_add *a, const pq_table *t, char ***out,
                        const char *what, pq_error *err)
{
    size_t bytes = sizeof(char *) * ((size_t)t->n_parts + 1);
    const char **vals = calloc((size_t)t->n_parts + 1, sizeof *vals);
    if (!vals) return PQ_NOMEM(err);
    for (int p = 0; p < t->n_parts; p++) {
        const char *phys = field_named(log, t->part_names[p])->physical;
        for (int k = 0; k < a->n_part; k++)
            if (!strcmp(a->part_keys[k], phys)) vals[p] = a->part_vals[k];
        if (vals[p] && !vals[p][0]) vals[p] = NULL;
        if (vals[p] && !pq_part_value_fits(vals[p], t->part_types[p])) {
            int rc = pq_fail(err, PQ_E_CORRUPT, "%s: add of '%s': partition value '%.100s' of '%s' is not %s", what,
                             a->path, vals[p], t->part_names[p], pq_part_type_kind(t->part_types[p]));
            free(vals);
            return rc;
        }
        if (vals[p]) bytes += strlen(vals[p]) + 1;
    }
    char **block = malloc(bytes);
    if (!block) {
        free(vals);
        return PQ_NOMEM(err);
    }
    char *s = (char *)(block + t->n_parts + 1);
    for (int p = 0; p < t->n_parts; p++) {
        block[p] = NULL;
        if (!vals[p]) continue;
        size_t n = strlen(vals[p]) + 1;
        memcpy(s, vals[p], n);
        block[p] = s;
        s += n;
    }
    block[t->n_parts] = NULL;
    free(vals);
    *out = block;
    return PQ_OK;
}

/* The replayed log as a snapshot: its live files in log order. */
static int delta_snapshot(pq_tf_snapshot *s, const char *root, bool apply_deletes, const char *what, pq_error *err)
{
    pq_delta_log *log = s->priv;
    s->version = log->version;
    s->checkpoint_version = log->checkpoint_version;
    pq_table *t = s->table = calloc(1, sizeof *t);
    if (!t || !(t->root = strdup(root))) return PQ_NOMEM(err);
    PQ_TRY(delta_parts(log, t, what, err));
    s->cols = calloc((size_t)log->n_fields + 1, sizeof *s->cols);
    t->files = calloc((size_t)log->n_live + 1, sizeof *t->files);
    s->files = calloc((size_t)log->n_live + 1, sizeof *s->files);
    if (!s->cols || !t->files || !s->files) return PQ_NOMEM(err);
    for (int i = 0; i < log->n_fields; i++) {
        const pq_delta_field *f = &log->fields[i];
        s->cols[i] = (pq_tf_column){.name = f->name, .physical = f->physical, .type = f->type, .part = -1,
                                   .nullable = f->nullable};
        for (int p = 0; p < t->n_parts; p++)
            if (!strcmp(t->part_names[p], f->name)) s->cols[i].part = p;
    }
    s->n_cols = log->n_fields;
    for (int i = 0; i < log->n_adds; i++) {
        const pq_delta_add *a = &log->adds[i];
        if (!a->live) continue;
        if (a->dv.storage && !apply_deletes)
            return pq_fail(err, PQ_E_UNSUPPORTED,
                           "%s: file '%s' has a deletion vector (reader feature 'deletionVectors'), which this reader "
                           "does not apply",
                           what, a->path);
        pq_table_file *tf = &t->files[t->n_files];
        if (!(tf->path = pq_path_join(root, a->path))) return PQ_NOMEM(err);
        tf->st.size = (uint64_t)a->size;
        tf->st.mtime_ns = a->mod_time_ms > INT64_MAX / 1000000 ? INT64_MAX : a->mod_time_ms * 1000000;
        t->n_files++;
        PQ_TRY(delta_values(log, a, t, &tf->values, what, err));
        s->files[t->n_files - 1] = (pq_tf_file){
            .stats = a->stats,
            .deletes = {.storage = a->dv.storage, .path_or_inline = a->dv.path_or_inline, .offset = a->dv.offset,
                        .size_in_bytes = a->dv.size_in_bytes, .cardinality = a->dv.cardinality},
        };
    }
    return PQ_OK;
}

int pq_tf_version_at(pq_store *store, const char *root, int64_t ms, int64_t *version, pq_error *err)
{
    pq_tf_kind kind;
    PQ_TRY(pq_tf_detect(store, root, &kind, err));
    if (kind == PQ_TF_HIVE)
        return pq_fail(err, PQ_E_USAGE, "%s: a time asked of a Hive table, which has no versions",
                       root[0] ? root : "the table");
    return pq_delta_version_at(store, root, ms, version, err);
}

int pq_tf_check_timed(const pq_tf_snapshot *s, pq_error *err)
{
    if (s->kind != PQ_TF_DELTA) return PQ_OK;
    const pq_delta_log *log = s->priv;
    const char *what = s->table->root[0] ? s->table->root : "the table";
    const json_t *ict = json_object_get(log->config_json, "delta.enableInCommitTimestamps");
    bool on = json_is_string(ict) && !strcasecmp(json_string_value(ict), "true");
    for (int i = 0; !on && i < log->n_writer_features; i++) on = !strcmp(log->writer_features[i], "inCommitTimestamp");
    if (on)
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: the Delta table times its commits with in-commit timestamps (writer feature "
                       "'inCommitTimestamp'), which this build does not read: as_of=N names a version",
                       what);
    return PQ_OK;
}

/* The range of a Delta integer type; false for a type that is none. */
static bool int_range(const char *type, int64_t *lo, int64_t *hi)
{
    static const struct { const char *name; int64_t lo, hi; } types[] = {
        {"byte", INT8_MIN, INT8_MAX}, {"short", INT16_MIN, INT16_MAX},
        {"integer", INT32_MIN, INT32_MAX}, {"long", INT64_MIN, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (!strcmp(type, types[i].name)) {
            *lo = types[i].lo;
            *hi = types[i].hi;
            return true;
        }
    return false;
}

int pq_tf_part_canonical(const pq_tf_snapshot *s, int part, const char *text, char *buf, size_t cap, const char **canon,
                         pq_error *err)
{
    char *out = buf;
    *canon = NULL;
    const pq_tf_column *c = NULL;
    for (int i = 0; s->cols && i < s->n_cols && !c; i++)
        if (s->cols[i].part == part) c = &s->cols[i];
    const char *name = s->table->part_names[part];
    if (cap < PQ_FMT_MAX + 8) return pq_fail(err, PQ_E_USAGE, "a partition value's buffer of %zu bytes", cap);
    out[0] = '\0';
    if (!text) return PQ_OK;
    *canon = out;
    pq_part_type t = s->table->part_types[part];
    const char *type = c ? c->type : "string";
    int64_t i, lo, hi, us;
    double d;
    bool ok = true;
    size_t n = 0;
    if (int_range(type, &lo, &hi)) {
        ok = pq_parse_i64(text, strlen(text), &i) == 0 && i >= lo && i <= hi;
        if (ok) n = pq_fmt_i64(i, out);
    } else if (t == PQ_PART_DOUBLE) {
        ok = pq_parse_double(text, strlen(text), &d) == 0 && d == d && d - d == 0; /* finite */
        if (ok) n = pq_fmt_double(d, out);
    } else if (pq_part_is_decimal(t)) {
        /* At the column's scale, as Spark writes it ("1.50"). */
        __int128 unscaled;
        ok = pq_part_value_decimal(text, t, &unscaled) == 0;
        if (ok) n = pq_fmt_decimal_i128(unscaled, pq_part_decimal_scale(t), out);
    } else if (t == PQ_PART_BOOL) {
        ok = pq_part_value_bool(text) >= 0;
        if (ok) n = (size_t)snprintf(out, cap, "%s", pq_part_value_bool(text) ? "true" : "false");
    } else if (t == PQ_PART_DATE) {
        ok = pq_part_value_is_date(text); /* YYYY-MM-DD: one text per date */
        *canon = text;
        if (ok) return PQ_OK;
    } else if (t == PQ_PART_TIMESTAMP || t == PQ_PART_TIMESTAMP_NTZ) {
        ok = pq_part_value_micros(text, t == PQ_PART_TIMESTAMP, &us) == 0;
        if (ok) n = pq_fmt_timestamp(us, 6, out);
        /* ISO 8601 in UTC: no reader takes it for local time. */
        if (ok && t == PQ_PART_TIMESTAMP && n > 10 && out[10] == ' ') {
            out[10] = 'T';
            out[n++] = 'Z';
        }
    } else {
        *canon = text; /* a string is its own text */
        return PQ_OK;
    }
    if (!ok)
        return pq_fail(err, PQ_E_USAGE, "%s=%s: not a value of the column's type (%s)", name, text, type);
    out[n] = '\0';
    return PQ_OK;
}

int pq_tf_open(pq_store *store, const char *root, const pq_tf_opts *opts, pq_tf_snapshot **out, pq_error *err)
{
    *out = NULL;
    int64_t version = opts ? opts->version : -1;
    /* Hive discovery first, which lists the root once: a Delta table's
     * root (it holds _delta_log/) makes it fail at once, PQ_E_UNSUPPORTED,
     * before it descends.  So a Hive table costs one root listing, as
     * before, and a Delta one a second (stopped at _delta_log/). */
    pq_table *hive = NULL;
    pq_tf_kind kind = PQ_TF_HIVE;
    if (version < 0 && pq_table_discover(store, root, opts ? opts->hive : NULL, &hive, err) != PQ_OK) {
        pq_error why = *err;
        if (why.cls != PQ_E_UNSUPPORTED || pq_tf_detect(store, root, &kind, err) != PQ_OK || kind == PQ_TF_HIVE) {
            *err = why;
            return PQ_ERR;
        }
    }
    if (version >= 0) PQ_TRY(pq_tf_detect(store, root, &kind, err));
    char *what = pq_path_join(store->root, root);
    for (size_t n = what ? strlen(what) : 0; n > 1 && what[n - 1] == '/'; n--) what[n - 1] = '\0';
    pq_tf_snapshot *s = calloc(1, sizeof *s);
    if (!s || !what) {
        free(s);
        free(what);
        pq_table_free(hive);
        return PQ_NOMEM(err);
    }
    s->kind = kind;
    s->version = s->checkpoint_version = -1;
    int rc = PQ_OK;
    if (kind == PQ_TF_HIVE) {
        s->table = hive;
        if (version >= 0)
            rc = pq_fail(err, PQ_E_USAGE, "%s: a version (%lld) asked of a Hive table, which has none", what,
                         (long long)version);
    } else {
        pq_delta_log *log = s->priv = malloc(sizeof *log);
        if (!log) rc = PQ_NOMEM(err);
        if (rc == PQ_OK) rc = pq_delta_replay(store, root, version, log, err);
        if (rc == PQ_OK) rc = delta_snapshot(s, root, opts && opts->apply_deletes, what, err);
        if (rc == PQ_OK)
            s->schema_tag = (pq_hash_str(log->schema_string) ^ (log->mapping_by_name ? 0x9e3779b97f4a7c15u : 0) ^
                             (log->mapping_by_id ? 0x5851f42d4c957f2du : 0)) | 1;
        if (rc == PQ_OK) s->table_id = log->table_id;
    }
    free(what);
    if (rc != PQ_OK) {
        pq_tf_snapshot_free(s);
        return PQ_ERR;
    }
    *out = s;
    return PQ_OK;
}

int pq_tf_check_file_schema(const pq_tf_snapshot *s, const pq_schema *schema, const char *file, pq_error *err)
{
    for (int i = 0; i < s->n_cols; i++) {
        if (s->cols[i].part >= 0 || pq_schema_find(schema, s->cols[i].name)) continue;
        return pq_fail(err, PQ_E_UNSUPPORTED,
                       "%s: column '%s' of the table's schema is not in its data files (added and not written "
                       "since: a column no file holds is not read yet)",
                       file, s->cols[i].name);
    }
    return PQ_OK;
}

/* How a table's columns are found in its files: by name (the logical
 * ones without column mapping, the physical ones in mode name) or by
 * field id (mode id). */
typedef struct mapping {
    bool by_name, by_id;
    pq_arena *names;           /* the file schema's arena: new names live there */
} mapping;

/* The file's child of n that is schemaString field f (NULL: none): by
 * field id (delta.columnMapping.id) in mode id, else by its physical name
 * (delta.columnMapping.physicalName) in mode name, else by its name. */
static pq_node *child_of_field(const pq_node *n, const json_t *f, const mapping *m)
{
    const json_t *meta = json_object_get(f, "metadata");
    const char *name = json_string_value(json_object_get(f, "name"));
    if (m->by_id) {
        const json_t *id = json_is_object(meta) ? json_object_get(meta, "delta.columnMapping.id") : NULL;
        if (!json_is_integer(id)) return NULL;
        for (int32_t c = 0; c < n->n_children; c++)
            if (n->children[c]->has_field_id && n->children[c]->field_id == json_integer_value(id)) return n->children[c];
        return NULL;
    }
    if (m->by_name) {
        const json_t *phys = json_is_object(meta) ? json_object_get(meta, "delta.columnMapping.physicalName") : NULL;
        if (json_is_string(phys)) name = json_string_value(phys);
    }
    for (int32_t c = 0; name && c < n->n_children; c++)
        if (!strcmp(n->children[c]->name, name)) return n->children[c];
    return NULL;
}

/* A node's name as the table names it, copied into the schema's own
 * arena: a footer outlives the snapshot that prepared it (the mount's
 * footer cache keeps it past the table's next version).  Out of memory:
 * the file's name stays. */
static void rename_node(pq_node *n, const char *name, pq_arena *names)
{
    if (!strcmp(n->name, name)) return;
    char *copy = pq_arena_strndup(names, name, strlen(name));
    if (copy) n->name = copy;
}

static void delta_type_node(const json_t *type, pq_node *n, const mapping *m, int depth);

/* A struct's fields (schemaString) over the file's children of n: each
 * found first, then renamed (a logical name may be another column's
 * physical one).  Under column mapping, a child that is no field of the
 * table (a column dropped since) gets a name no column has, so that it
 * never stands in for one. */
static void delta_struct_node(const json_t *fields, pq_node *n, const mapping *m, int depth)
{
    size_t nf = json_array_size(fields);
    pq_node **hit = calloc(nf + 1, sizeof *hit);
    if (!hit) return;
    for (size_t i = 0; i < nf; i++) {
        pq_node *c = child_of_field(n, json_array_get(fields, i), m);
        for (size_t j = 0; c && j < i; j++)
            if (hit[j] == c) c = NULL; /* one file column is one table column */
        hit[i] = c;
    }
    for (int32_t c = 0; (m->by_name || m->by_id) && c < n->n_children; c++) {
        bool matched = false;
        for (size_t i = 0; i < nf && !matched; i++) matched = hit[i] == n->children[c];
        if (matched) continue;
        size_t len = strlen(n->children[c]->name);
        char *gone = pq_arena_alloc(m->names, len + 2);
        if (!gone) continue;
        gone[0] = '\x01'; /* no name of a view or an expression starts so */
        memcpy(gone + 1, n->children[c]->name, len + 1);
        n->children[c]->name = gone;
    }
    for (size_t i = 0; i < nf; i++) {
        const json_t *f = json_array_get(fields, i);
        const char *logical = json_string_value(json_object_get(f, "name"));
        if (!hit[i] || !logical) continue;
        rename_node(hit[i], logical, m->names);
        delta_type_node(json_object_get(f, "type"), hit[i], m, depth + 1);
    }
    free(hit);
}

/* A Delta type (schemaString's JSON) applied to a file's node. */
static void delta_type_node(const json_t *type, pq_node *n, const mapping *m, int depth)
{
    if (depth > 64) return;
    if (json_is_string(type)) {
        const char *t = json_string_value(type);
        bool ts = !strcmp(t, "timestamp"), ntz = !strcmp(t, "timestamp_ntz");
        if (n->kind != PQ_NODE_PRIMITIVE || (!ts && !ntz)) return;
        if (n->phys == PQ_INT96 || (n->phys == PQ_INT64 && n->logical.kind == PQ_LT_TIMESTAMP)) n->logical.utc = ts;
        return;
    }
    const char *k = json_is_object(type) ? json_string_value(json_object_get(type, "type")) : NULL;
    if (!k) return;
    if (!strcmp(k, "struct") && n->kind == PQ_NODE_STRUCT) {
        delta_struct_node(json_object_get(type, "fields"), n, m, depth);
    } else if (!strcmp(k, "array") && n->kind == PQ_NODE_LIST && n->n_children == 1) {
        delta_type_node(json_object_get(type, "elementType"), n->children[0], m, depth + 1);
    } else if (!strcmp(k, "map") && n->kind == PQ_NODE_MAP && n->n_children >= 1) {
        delta_type_node(json_object_get(type, "keyType"), n->children[0], m, depth + 1);
        if (n->n_children > 1 && n->children[1])
            delta_type_node(json_object_get(type, "valueType"), n->children[1], m, depth + 1);
    }
}

void pq_tf_apply_types(const pq_tf_snapshot *s, pq_schema *schema)
{
    if (s->kind != PQ_TF_DELTA) return;
    const pq_delta_log *log = s->priv;
    /* Column mapping: the logical names in every view (the leaves' paths
     * keep the physical names the column chunks are matched by). */
    mapping m = {.by_name = log->mapping_by_name && !log->mapping_by_id, .by_id = log->mapping_by_id,
                 .names = &schema->arena};
    delta_type_node(log->schema_json, schema->root, &m, 0);
}

/* A top-level INT96 column of a Delta table: a `timestamp` (or
 * `timestamp_ntz`), Spark's old encoding. */
static bool int96_column(const pq_node *n)
{
    return n->kind == PQ_NODE_PRIMITIVE && n->phys == PQ_INT96;
}

int pq_tf_table_schema(const pq_tf_snapshot *s, const struct pq_footer *ft, struct pq_footer **out, pq_error *err)
{
    *out = NULL;
    if (s->kind != PQ_TF_DELTA) return PQ_OK;
    const pq_node *root = ft->schema.root;
    bool any = false;
    for (int32_t i = 0; i < root->n_children && !any; i++) any = int96_column(root->children[i]);
    if (!any) return PQ_OK;
    pq_schema_union *u;
    PQ_TRY(pq_schema_union_new(false, &u, err));
    int rc = pq_schema_union_add(u, ft, "the table's schema file", err);
    for (int32_t i = 0; i < root->n_children && rc == PQ_OK; i++) {
        const pq_node *n = root->children[i];
        if (!int96_column(n)) continue;
        /* The Delta type: microseconds (PROTOCOL.md), UTC for `timestamp`
         * (pq_tf_apply_types made the node say which). */
        pq_node t = *n;
        t.phys = PQ_INT64;
        t.type_length = 0;
        t.logical = (pq_logical){.kind = PQ_LT_TIMESTAMP, .utc = n->logical.utc, .unit = PQ_UNIT_MICROS};
        t.converted = n->logical.utc ? PQ_CT_TIMESTAMP_MICROS : PQ_CT_NONE;
        rc = pq_schema_union_set_type(u, n->name, &t, err);
    }
    if (rc == PQ_OK) rc = pq_schema_union_finish(u, out, err);
    pq_schema_union_free(u);
    if (rc == PQ_OK) pq_tf_apply_types(s, &(*out)->schema);
    return rc;
}

/* ------------------------------------------------------ deletion vectors
 *
 * Delta Lake deletion vectors (PROTOCOL.md, "Deletion Vector Format"):
 * the row indexes a descriptor deletes, decoded with CRoaring.
 *
 *   storageType u: <random prefix><z85 uuid, 20 chars> -> the file
 *                  <table>/<prefix>/deletion_vector_<uuid>.bin
 *   storageType i: the z85 of the bitmap bytes, inline
 *   storageType p: an absolute path (a URI), read when inside the store
 *
 * A file holds a version byte (1), then per vector: its size (big endian
 * uint32), the bytes, their CRC-32 (big endian).  The bytes: a magic number
 * (1681511377, little endian), then a 64-bit roaring bitmap in the portable
 * format: a bucket count (uint64), then per bucket its key (the high 32
 * bits, uint32) and a 32-bit portable roaring bitmap, keys ascending. */

#define DV_MAGIC 1681511377u
/* Rows a vector may delete here (8 bytes each in memory). */
#define DV_MAX_ROWS ((uint64_t)1 << 28)

static const char z85_chars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

int pq_z85_decode(const char *s, size_t n, uint8_t *out)
{
    if (n % 5) return -1;
    for (size_t i = 0; i < n; i += 5) {
        uint64_t v = 0;
        for (int k = 0; k < 5; k++) {
            const char *c = s[i + k] ? strchr(z85_chars, s[i + k]) : NULL;
            if (!c) return -1;
            v = v * 85 + (uint64_t)(c - z85_chars);
        }
        if (v > UINT32_MAX) return -1;
        for (int k = 0; k < 4; k++) out[i / 5 * 4 + (size_t)k] = (uint8_t)(v >> (24 - 8 * k));
    }
    return 0;
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint16_t load_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Whether the bytes at p start a well-formed 32-bit roaring bitmap in the
 * portable format (RoaringFormatSpec), and its size.  CRoaring decodes it;
 * this only checks what the library Debian 12 ships (0.2.66) does not, and
 * which its iterator trusts: keys ascending, every container's cardinality
 * what its contents hold, array values and runs ascending and within 16
 * bits.  A bitmap it took whole could otherwise crash it (fuzz_delta_log
 * found one: a run container that its safe deserializer accepted). */
static bool portable_bitmap_valid(const uint8_t *p, size_t len, size_t *size)
{
    if (len < 4) return false;
    uint32_t cookie = load_le32(p);
    size_t at = 4, n;
    const uint8_t *runs = NULL;
    if (cookie == 12346) {
        if (len < 8) return false;
        n = load_le32(p + 4);
        at = 8;
    } else if ((cookie & 0xFFFF) == 12347) {
        n = (cookie >> 16) + 1;
        runs = p + at;
        at += (n + 7) / 8;
    } else {
        return false;
    }
    if (n > 65536 || at > len || (len - at) / 4 < n) return false;
    const uint8_t *desc = p + at;
    at += 4 * n;
    if (!runs || n >= 4) { /* the offset header: not needed, only skipped */
        if ((len - at) / 4 < n) return false;
        at += 4 * n;
    }
    for (size_t c = 0; c < n; c++) {
        uint32_t card = (uint32_t)load_le16(desc + 4 * c + 2) + 1;
        if (c > 0 && load_le16(desc + 4 * c) <= load_le16(desc + 4 * (c - 1))) return false;
        if (runs && (runs[c / 8] >> (c % 8) & 1)) {
            if (len - at < 2) return false;
            uint32_t n_runs = load_le16(p + at), total = 0;
            at += 2;
            if (n_runs == 0 || (len - at) / 4 < n_runs) return false;
            int64_t next = 0; /* the first value a run may start at */
            for (uint32_t r = 0; r < n_runs; r++, at += 4) {
                uint32_t start = load_le16(p + at), count = (uint32_t)load_le16(p + at + 2) + 1;
                if ((int64_t)start < next || start + count > 65536) return false;
                next = (int64_t)start + count; /* no overlap (adjacent runs are harmless) */
                total += count;
            }
            if (total != card) return false;
        } else if (card <= 4096) {
            if ((len - at) / 2 < card) return false;
            for (uint32_t i = 1; i < card; i++)
                if (load_le16(p + at + 2 * i) <= load_le16(p + at + 2 * (i - 1))) return false;
            at += 2 * card;
        } else {
            if (len - at < 8192) return false;
            uint32_t bits = 0;
            for (size_t i = 0; i < 8192; i++) bits += (uint32_t)__builtin_popcount(p[at + i]);
            if (bits != card) return false;
            at += 8192;
        }
    }
    *size = at;
    return true;
}

int pq_delta_dv_decode(const uint8_t *p, size_t len, uint64_t cardinality, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err)
{
    *rows = NULL;
    *n_rows = 0;
    if (len < 12 || load_le32(p) != DV_MAGIC)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector: not a RoaringBitmapArray (magic number)");
    uint64_t buckets = (uint64_t)load_le32(p + 4) | (uint64_t)load_le32(p + 8) << 32;
    if (buckets > (len - 12) / 4)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector: %llu buckets in %zu bytes", (unsigned long long)buckets, len);
    if (cardinality > DV_MAX_ROWS)
        return pq_fail(err, PQ_E_UNSUPPORTED, "deletion vector: %llu rows (more than %llu are not read)",
                       (unsigned long long)cardinality, (unsigned long long)DV_MAX_ROWS);
    uint64_t *out = malloc(sizeof *out * (size_t)(cardinality + 1));
    if (!out) return PQ_NOMEM(err);
    size_t at = 12;
    uint64_t n = 0;
    int64_t last_key = -1;
    for (uint64_t b = 0; b < buckets; b++) {
        if (len - at < 4) goto cut;
        uint32_t key = load_le32(p + at);
        at += 4;
        if (key & 0x80000000u || (int64_t)key <= last_key) {
            free(out);
            return pq_fail(err, PQ_E_CORRUPT, "deletion vector: bucket key %u out of order or negative", key);
        }
        last_key = key;
        size_t size = 0;
        if (!portable_bitmap_valid(p + at, len - at, &size) ||
            roaring_bitmap_portable_deserialize_size((const char *)p + at, len - at) != size)
            goto cut;
        roaring_bitmap_t *bm = roaring_bitmap_portable_deserialize_safe((const char *)p + at, size);
        if (!bm) goto cut;
        at += size;
        uint64_t count = roaring_bitmap_get_cardinality(bm);
        if (count > cardinality - n) {
            roaring_bitmap_free(bm);
            free(out);
            return pq_fail(err, PQ_E_CORRUPT, "deletion vector: more rows than its cardinality (%llu)",
                           (unsigned long long)cardinality);
        }
        roaring_uint32_iterator_t it;
        roaring_init_iterator(bm, &it);
        bool ascending = true;
        for (; it.has_value && ascending; roaring_advance_uint32_iterator(&it)) {
            if (n == cardinality) { /* more values than the library counted */
                ascending = false;
                break;
            }
            uint64_t row = (uint64_t)key << 32 | it.current_value;
            /* A bitmap the library took whole may still be malformed
             * (containers out of order, repeated values): the plan needs
             * the rows strictly ascending. */
            ascending &= n == 0 || out[n - 1] < row;
            out[n++] = row;
        }
        roaring_bitmap_free(bm);
        if (!ascending) {
            free(out);
            return pq_fail(err, PQ_E_CORRUPT, "deletion vector: a malformed bitmap (rows not ascending, or more than it counts)");
        }
    }
    if (n != cardinality) {
        free(out);
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector: %llu rows where its cardinality says %llu",
                       (unsigned long long)n, (unsigned long long)cardinality);
    }
    *rows = out;
    *n_rows = n;
    return PQ_OK;
cut:
    free(out);
    return pq_fail(err, PQ_E_CORRUPT, "deletion vector: a bucket is cut short or not a well-formed roaring bitmap (at byte %zu of %zu)",
                   at, len);
}

/* storageType u: <table>/<prefix>/deletion_vector_<uuid>.bin. */
static int dv_file_path(const char *root, const char *v, char **out, pq_error *err)
{
    size_t n = strlen(v);
    if (n < 20) return pq_fail(err, PQ_E_CORRUPT, "deletion vector '%.60s': shorter than its 20-character UUID", v);
    size_t plen = n - 20;
    uint8_t u[16];
    if (pq_z85_decode(v + plen, 20, u) != 0)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector '%.60s': the UUID is not z85", v);
    /* The random prefix is one directory name. */
    if (memchr(v, '/', plen) || (plen == 1 && v[0] == '.') || (plen == 2 && v[0] == '.' && v[1] == '.'))
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector '%.60s': the prefix is not a directory name", v);
    char name[64];
    static const char hex[] = "0123456789abcdef";
    char *w = name;
    w += sizeof "deletion_vector_" - 1;
    memcpy(name, "deletion_vector_", sizeof "deletion_vector_" - 1);
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *w++ = '-';
        *w++ = hex[u[i] >> 4];
        *w++ = hex[u[i] & 15];
    }
    memcpy(w, ".bin", 5);
    char *prefix = strndup(v, plen);
    char *dir = prefix ? pq_path_join(root, prefix) : NULL;
    *out = dir ? pq_path_join(dir, name) : NULL;
    free(prefix);
    free(dir);
    return *out ? PQ_OK : PQ_NOMEM(err);
}

/* An absolute-path vector's file (storageType p: a URI) as a path of the
 * store, when it is inside it: file:/DIR/... under a local store's root,
 * SCHEME://BUCKET/PREFIX/... under a remote store's (s3a and s3n are s3).
 * Anywhere else is not read: a table's log does not send a reader out of
 * the lake. */
static int dv_absolute_path(const pq_store *store, const char *uri, char **out, pq_error *err)
{
    *out = NULL;
    char *decoded = malloc(strlen(uri) + 1);
    if (!decoded) return PQ_NOMEM(err);
    int len = pq_percent_decode(uri, strlen(uri), decoded);
    const char *inside = NULL;
    if (len >= 0 && !memchr(decoded, '\0', (size_t)len)) {
        const char *base = store->local_dir, *p = decoded;
        if (base && !strncmp(p, "file:", 5)) {
            p += 5;
            if (!strncmp(p, "//", 2)) p += 2; /* file:///x, or file://localhost/x */
            if (!strncmp(p, "localhost/", 10)) p += 9;
        } else if (!base) {
            base = store->root;
            static const char *const aliases[] = {"s3a://", "s3n://"};
            for (size_t i = 0; i < 2; i++)
                if (!strncmp(p, aliases[i], 6) && !strncmp(base, "s3://", 5)) {
                    p += 6;
                    base += 5;
                }
        } else {
            p = NULL;
        }
        size_t bl = base ? strlen(base) : 0;
        while (bl > 1 && base[bl - 1] == '/') bl--;
        if (p && bl && !strncmp(p, base, bl) && p[bl] == '/') inside = p + bl + 1;
    }
    int rc = PQ_OK;
    if (!inside || !inside[0] || strstr(inside, "/../") || !strncmp(inside, "../", 3) || strstr(inside, "//"))
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "deletion vector '%.200s': an absolute path outside the lake is not read",
                     uri);
    else if (!(*out = strdup(inside)))
        rc = PQ_NOMEM(err);
    free(decoded);
    return rc;
}

/* The vector's bytes from its file: version byte, size, bytes, CRC-32. */
static int dv_file_bytes(pq_store *store, const char *path, const pq_tf_deletes *d, uint8_t **out, pq_error *err)
{
    pq_file *f;
    PQ_TRY(store->ops->open(store, path, &f, err));
    uint64_t size = 0;
    uint64_t off = d->offset >= 0 ? (uint64_t)d->offset : 1; /* absent: the first vector, after the version byte */
    uint64_t want = (uint64_t)d->size_in_bytes;
    uint8_t head[4], version = 0, *bytes = NULL;
    int rc = pq_file_size(f, &size, err);
    if (rc == PQ_OK && (off < 1 || off > size || size - off < 8 || size - off - 8 < want))
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: a deletion vector of %llu bytes at %llu does not fit in %llu bytes",
                     f->name, (unsigned long long)want, (unsigned long long)off, (unsigned long long)size);
    if (rc == PQ_OK) rc = pq_read_at(f, &version, 1, 0, err);
    if (rc == PQ_OK && version != 1)
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: deletion vector file format %u (only 1 is read)", f->name, version);
    if (rc == PQ_OK) rc = pq_read_at(f, head, 4, off, err);
    if (rc == PQ_OK && load_be32(head) != want)
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: the deletion vector at %llu holds %u bytes, the log says %llu", f->name,
                     (unsigned long long)off, load_be32(head), (unsigned long long)want);
    if (rc == PQ_OK && !(bytes = malloc((size_t)want + 4))) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) rc = pq_read_at(f, bytes, (size_t)want + 4, off + 4, err);
    if (rc == PQ_OK && (uint32_t)crc32(0, bytes, (uInt)want) != load_be32(bytes + want))
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: the deletion vector at %llu fails its CRC-32", f->name,
                     (unsigned long long)off);
    pq_file_close(f);
    if (rc != PQ_OK) {
        free(bytes);
        return PQ_ERR;
    }
    *out = bytes;
    return PQ_OK;
}

int pq_tf_deleted_rows(const pq_tf_snapshot *s, pq_store *store, int file, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err)
{
    *rows = NULL;
    *n_rows = 0;
    if (!s->files || file < 0 || file >= s->table->n_files || !s->files[file].deletes.storage) return PQ_OK;
    const pq_tf_deletes *d = &s->files[file].deletes;
    if (d->size_in_bytes < 0 || d->size_in_bytes > (1 << 30) || d->cardinality < 0)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector of %s: %lld bytes, %lld rows", s->table->files[file].path,
                       (long long)d->size_in_bytes, (long long)d->cardinality);
    uint8_t *bytes = NULL;
    int rc;
    if (d->storage == 'i') {
        size_t n = strlen(d->path_or_inline);
        if (n % 5 || n / 5 * 4 < (uint64_t)d->size_in_bytes || !(bytes = malloc(n / 5 * 4 + 1)))
            return bytes || n % 5 || n / 5 * 4 < (uint64_t)d->size_in_bytes
                       ? pq_fail(err, PQ_E_CORRUPT, "inline deletion vector of %s: %zu characters for %lld bytes",
                                 s->table->files[file].path, n, (long long)d->size_in_bytes)
                       : PQ_NOMEM(err);
        rc = pq_z85_decode(d->path_or_inline, n, bytes) == 0
                 ? PQ_OK
                 : pq_fail(err, PQ_E_CORRUPT, "inline deletion vector of %s: not z85", s->table->files[file].path);
    } else if (d->storage == 'u') {
        char *path;
        PQ_TRY(dv_file_path(s->table->root, d->path_or_inline, &path, err));
        rc = dv_file_bytes(store, path, d, &bytes, err);
        free(path);
    } else if (d->storage == 'p') {
        char *path;
        if (dv_absolute_path(store, d->path_or_inline, &path, err) != PQ_OK) {
            pq_error_prefix(err, "%s: ", s->table->files[file].path);
            return PQ_ERR;
        }
        rc = dv_file_bytes(store, path, d, &bytes, err);
        free(path);
    } else {
        return pq_fail(err, PQ_E_UNSUPPORTED, "deletion vector of %s: storage type '%c' is not read",
                       s->table->files[file].path, d->storage);
    }
    if (rc == PQ_OK) rc = pq_delta_dv_decode(bytes, (size_t)d->size_in_bytes, (uint64_t)d->cardinality, rows, n_rows, err);
    if (rc != PQ_OK && !strstr(err->msg, s->table->files[file].path)) pq_error_prefix(err, "%s: ", s->table->files[file].path);
    free(bytes);
    return rc;
}
