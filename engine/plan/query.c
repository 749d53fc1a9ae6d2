#include "query.h"

#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "render.h"

static int compile_one(pq_query *q, const char *text, pq_error *err)
{
    pq_expr *e;
    if (pq_expr_compile(text, q->cols, q->n_cols, &q->arena, &e, err) != PQ_OK) return PQ_ERR;
    q->pred = q->pred ? pq_expr_and(&q->arena, q->pred, e) : e;
    if (!q->pred) return PQ_NOMEM(err);
    return PQ_OK;
}

/* COL=VALUE as the expression "COL" = 'VALUE' (the binder reads a string
 * literal as the column's type), or "COL" IS NULL. */
static int compile_equality(pq_query *q, const char *col, const char *val, pq_error *err)
{
    pq_buf t;
    pq_buf_init(&t);
    int rc = pq_buf_append(&t, "\"", 1);
    for (const char *p = col; *p && !rc; p++) rc = *p == '"' ? pq_buf_append(&t, "\"\"", 2) : pq_buf_append(&t, p, 1);
    if (!val) {
        rc |= pq_buf_puts(&t, "\" IS NULL");
    } else {
        rc |= pq_buf_puts(&t, "\" = '");
        for (const char *p = val; *p && !rc; p++) rc = *p == '\'' ? pq_buf_append(&t, "''", 2) : pq_buf_append(&t, p, 1);
        rc |= pq_buf_append(&t, "'", 1);
    }
    rc |= pq_buf_append(&t, "", 1);
    if (rc) {
        pq_buf_free(&t);
        return PQ_NOMEM(err);
    }
    rc = compile_one(q, t.data, err);
    if (rc != PQ_OK) pq_error_prefix(err, "%s=%s: ", col, val ? val : "__HIVE_DEFAULT_PARTITION__");
    pq_buf_free(&t);
    return rc;
}

static void part_node(pq_node *n, const char *name, pq_part_type type)
{
    memset(n, 0, sizeof *n);
    n->name = name;
    n->kind = PQ_NODE_PRIMITIVE;
    n->nullable = true;
    n->def_level = 1;
    n->leaf_index = -1;
    n->converted = PQ_CT_NONE;
    n->n_leaves = 0;
    if (pq_part_is_decimal(type)) {
        /* As a writer stores such a DECIMAL: INT32, INT64, else 16 bytes. */
        int precision = pq_part_decimal_precision(type);
        n->phys = precision <= 9 ? PQ_INT32 : precision <= 18 ? PQ_INT64 : PQ_FIXED_LEN_BYTE_ARRAY;
        n->type_length = precision <= 18 ? 0 : 16;
        n->logical.kind = PQ_LT_DECIMAL;
        n->logical.precision = precision;
        n->logical.scale = pq_part_decimal_scale(type);
        return;
    }
    switch (type) {
    case PQ_PART_INT64: n->phys = PQ_INT64; break;
    case PQ_PART_DATE: n->phys = PQ_INT32; n->logical.kind = PQ_LT_DATE; break;
    case PQ_PART_DOUBLE: n->phys = PQ_DOUBLE; break;
    case PQ_PART_BOOL: n->phys = PQ_BOOLEAN; break;
    case PQ_PART_TIMESTAMP:
    case PQ_PART_TIMESTAMP_NTZ:
        n->phys = PQ_INT64;
        n->logical.kind = PQ_LT_TIMESTAMP;
        n->logical.unit = PQ_UNIT_MICROS;
        n->logical.utc = type == PQ_PART_TIMESTAMP;
        break;
    default: n->phys = PQ_BYTE_ARRAY; n->logical.kind = PQ_LT_STRING; break;
    }
}

int pq_query_compile(const pq_schema *schema, const char *const *part_names, const pq_part_type *part_types,
                     int n_parts, const pq_query_spec *spec, pq_query **out, pq_error *err)
{
    pq_query *q = calloc(1, sizeof *q);
    if (!q) return PQ_NOMEM(err);
    pq_arena_init(&q->arena, 16384);
    q->schema = schema;
    q->n_data = schema->root->n_children;
    q->n_parts = n_parts;
    q->n_cols = q->n_data + n_parts;
    q->limit = spec->limit;
    q->cols = pq_arena_alloc(&q->arena, sizeof *q->cols * (size_t)(q->n_cols + 1));
    q->part_nodes = pq_arena_alloc(&q->arena, sizeof *q->part_nodes * (size_t)(n_parts + 1));
    q->part_types = pq_arena_alloc(&q->arena, sizeof *q->part_types * (size_t)(n_parts + 1));
    if (!q->cols || !q->part_nodes || !q->part_types) goto oom;
    for (int i = 0; i < q->n_data; i++) {
        const pq_node *n = schema->root->children[i];
        q->cols[i].name = n->name;
        q->cols[i].node = n;
    }
    for (int p = 0; p < n_parts; p++) {
        q->part_types[p] = part_types[p] == PQ_PART_INFER ? PQ_PART_STRING : part_types[p];
        char *name = pq_arena_strndup(&q->arena, part_names[p], strlen(part_names[p]));
        if (!name) goto oom;
        part_node(&q->part_nodes[p], name, q->part_types[p]);
        q->cols[q->n_data + p].name = name;
        q->cols[q->n_data + p].node = &q->part_nodes[p];
        q->cols[q->n_data + p].partition = true;
        /* A data column named like a partition column is hidden by it. */
        for (int i = 0; i < q->n_data; i++)
            if (!strcmp(q->cols[i].name, name)) q->cols[i].name = "";
    }
    int n_out = spec->select ? spec->n_select : q->n_cols;
    q->out = pq_arena_alloc(&q->arena, sizeof *q->out * (size_t)(n_out + 1));
    if (!q->out) goto oom;
    for (int j = 0; j < n_out; j++) {
        if (!spec->select) {
            q->out[q->n_out++] = j;
            continue;
        }
        int found = -1;
        for (int i = 0; i < q->n_cols && found < 0; i++)
            if (q->cols[i].name[0] && !strcmp(q->cols[i].name, spec->select[j])) found = i;
        if (found < 0) {
            pq_fail(err, PQ_E_USAGE, "select: unknown column '%s'", spec->select[j]);
            goto fail;
        }
        q->out[q->n_out++] = found;
    }
    if (!spec->select) {
        /* Hidden data columns (shadowed by a partition column) are not output. */
        int k = 0;
        for (int j = 0; j < q->n_out; j++)
            if (q->cols[q->out[j]].name[0]) q->out[k++] = q->out[j];
        q->n_out = k;
    }
    for (int i = 0; i < spec->n_eq; i++)
        if (compile_equality(q, spec->eq_cols[i], spec->eq_vals[i], err) != PQ_OK) goto fail;
    for (int i = 0; i < spec->n_wheres; i++)
        if (compile_one(q, spec->wheres[i], err) != PQ_OK) goto fail;
    *out = q;
    return PQ_OK;
oom:
    PQ_NOMEM(err);
fail:
    pq_query_free(q);
    return PQ_ERR;
}

void pq_query_free(pq_query *q)
{
    if (!q) return;
    pq_arena_free(&q->arena);
    free(q);
}

int pq_query_header(const pq_query *q, pq_buf *out)
{
    const char **names = calloc((size_t)q->n_out + 1, sizeof *names);
    if (!names) return -1;
    for (int j = 0; j < q->n_out; j++) names[j] = q->cols[q->out[j]].name;
    int rc = pq_csv_header(names, q->n_out, out);
    free(names);
    return rc;
}

int pq_query_part_value(const pq_query *q, int part, const char *text, pq_value *out)
{
    memset(out, 0, sizeof *out);
    pq_part_type t = q->part_types[part];
    bool ts = t == PQ_PART_TIMESTAMP || t == PQ_PART_TIMESTAMP_NTZ;
    bool dec = pq_part_is_decimal(t);
    out->type = t == PQ_PART_INT64    ? PQ_V_INT
                : t == PQ_PART_DATE   ? PQ_V_DATE
                : t == PQ_PART_DOUBLE ? PQ_V_DOUBLE
                : t == PQ_PART_BOOL   ? PQ_V_BOOL
                : ts                  ? PQ_V_TIMESTAMP
                : dec                 ? PQ_V_DECIMAL
                                      : PQ_V_STRING;
    if (!text) {
        out->is_null = true;
        return 0;
    }
    size_t n = strlen(text);
    if (dec) {
        out->u.dec.scale = pq_part_decimal_scale(t);
        return pq_part_value_decimal(text, t, &out->u.dec.unscaled);
    }
    if (t == PQ_PART_INT64) return pq_parse_i64(text, n, &out->u.i) == 0 ? 0 : -1;
    if (t == PQ_PART_DOUBLE) return pq_parse_double(text, n, &out->u.d) == 0 ? 0 : -1;
    if (t == PQ_PART_BOOL) {
        int b = pq_part_value_bool(text);
        out->u.b = b == 1;
        return b < 0 ? -1 : 0;
    }
    if (ts) {
        int64_t us;
        if (pq_part_value_micros(text, t == PQ_PART_TIMESTAMP, &us) != 0) return -1;
        out->u.ts_ns = (__int128)us * 1000;
        return 0;
    }
    if (t == PQ_PART_DATE) {
        int64_t days;
        if (pq_parse_date(text, n, &days) != 0 || days < INT32_MIN || days > INT32_MAX) return -1;
        out->u.date = (int32_t)days;
        return 0;
    }
    out->u.s.ptr = (const uint8_t *)text;
    out->u.s.len = (uint32_t)n;
    return 0;
}

int pq_query_fold_parts(const pq_query *q, const char *const *values, int n, pq_arena *a, pq_expr **out, int *bad)
{
    pq_expr *pred = q->pred;
    if (bad) *bad = -1;
    for (int p = 0; p < n && p < q->n_parts && pred; p++) {
        pq_value v;
        if (pq_query_part_value(q, p, values ? values[p] : NULL, &v) != 0) {
            if (!bad) continue;
            *bad = p;
            *out = NULL;
            return 0;
        }
        pred = pq_expr_substitute(a, pred, q->n_data + p, &v);
        if (!pred) return -1;
    }
    *out = pred;
    return 0;
}

int pq_query_part_cell(const pq_query *q, int part, const char *text, pq_buf *out)
{
    if (!text) return 0;
    pq_value v;
    if (pq_query_part_value(q, part, text, &v) != 0) return pq_csv_field(text, strlen(text), out);
    char tmp[PQ_FMT_MAX];
    switch (v.type) {
    case PQ_V_INT: return pq_buf_append(out, tmp, pq_fmt_i64(v.u.i, tmp));
    case PQ_V_DATE: return pq_buf_append(out, tmp, pq_fmt_date(v.u.date, tmp));
    case PQ_V_DOUBLE: return pq_buf_append(out, tmp, pq_fmt_double(v.u.d, tmp));
    case PQ_V_BOOL: return pq_buf_puts(out, v.u.b ? "true" : "false");
    case PQ_V_DECIMAL: {
        /* As a DECIMAL column renders (its scale's digits). */
        char d[64];
        return pq_buf_append(out, d, pq_fmt_decimal_i128(v.u.dec.unscaled, v.u.dec.scale, d));
    }
    case PQ_V_TIMESTAMP: {
        /* As a TIMESTAMP(MICROS) column renders: "+00" when UTC. */
        size_t k = pq_fmt_timestamp((int64_t)(v.u.ts_ns / 1000), 6, tmp);
        if (q->part_types[part] == PQ_PART_TIMESTAMP) memcpy(tmp + k, "+00", 3), k += 3;
        return pq_buf_append(out, tmp, k);
    }
    default: return pq_csv_field(text, strlen(text), out);
    }
}

static bool same_shape(const pq_node *a, const pq_node *b)
{
    pq_schema sa = {.root = (pq_node *)a}, sb = {.root = (pq_node *)b};
    return pq_schema_equal(&sa, &sb);
}

int pq_query_conflict(const pq_query *q, int col, const pq_node *in_file, const char *file, pq_error *err)
{
    pq_buf tf, tt;
    pq_buf_init(&tf);
    pq_buf_init(&tt);
    (void)pq_node_type_text(in_file, &tf);
    (void)pq_node_type_text(q->cols[col].node, &tt);
    pq_fail(err, PQ_E_UNSUPPORTED, "%s: column '%s' is %.*s in this file but %.*s in the table's schema (the files' types "
            "do not widen to one)", file, q->cols[col].name, (int)tf.len, tf.data ? tf.data : "", (int)tt.len,
            tt.data ? tt.data : "");
    pq_buf_free(&tf);
    pq_buf_free(&tt);
    return PQ_ERR;
}

int pq_query_bind_file(const pq_query *q, const pq_schema *fs, int32_t *col_leaf, const pq_node **col_node,
                       pq_col_fit *fit, pq_error *err)
{
    for (int i = 0; i < q->n_cols; i++) {
        col_leaf[i] = -1;
        col_node[i] = NULL;
        if (fit) fit[i] = (pq_col_fit){PQ_FIT_SAME, PQ_WIDEN_NONE};
        if (i >= q->n_data || !q->cols[i].name[0]) continue;
        const pq_node *ref = q->schema->root->children[i];
        const pq_node *n = pq_schema_find(fs, ref->name);
        if (!n && fit) {
            fit[i].state = PQ_FIT_MISSING;
            continue;
        }
        if (!n) return pq_fail(err, PQ_E_CORRUPT, "column '%s' is missing (the table's schema has it)", ref->name);
        int widen = same_shape(n, ref) ? PQ_WIDEN_NONE : fit ? pq_node_widen(n, ref) : -1;
        if (widen < 0 && fit) {
            fit[i].state = PQ_FIT_CONFLICT;
            col_node[i] = n;
            continue;
        }
        if (widen < 0)
            return pq_fail(err, PQ_E_CORRUPT, "column '%s' has another type than in the table's schema", ref->name);
        if (fit) fit[i].widen = (uint8_t)widen;
        col_node[i] = n;
        if (n->kind == PQ_NODE_PRIMITIVE) col_leaf[i] = n->leaf_index;
    }
    return PQ_OK;
}

static char *select_name(pq_arena *a, const char *p, size_t len, bool percent)
{
    char *name = pq_arena_alloc(a, len + 1);
    if (!name) return NULL;
    if (!percent) {
        memcpy(name, p, len);
        name[len] = '\0';
    } else {
        (void)pq_path_text_decode(p, len, name);
    }
    return name;
}

int pq_select_parse(const char *s, bool percent, pq_arena *a, const char ***out, int *n, pq_error *err)
{
    const char *p = s;
    for (;;) {
        while (*p == ' ') p++;
        char *name = NULL;
        if (*p == '"') {
            pq_buf q;
            pq_buf_init(&q);
            const char *at = ++p;
            int rc = 0;
            for (;; p++) {
                if (!*p) {
                    pq_buf_free(&q);
                    return pq_fail(err, PQ_E_USAGE, "a quoted name without its closing '\"'");
                }
                if (*p == '"' && p[1] == '"') {
                    rc |= pq_buf_append(&q, at, (size_t)(p + 1 - at));
                    at = ++p + 1;
                } else if (*p == '"') {
                    break;
                }
            }
            rc |= pq_buf_append(&q, at, (size_t)(p - at));
            p++;
            if (!rc) name = select_name(a, q.data ? q.data : "", q.len, percent);
            pq_buf_free(&q);
            if (!name) return PQ_NOMEM(err);
            while (*p == ' ') p++;
            if (*p && *p != ',') return pq_fail(err, PQ_E_USAGE, "unexpected text after a quoted name");
            if (!*name) return pq_fail(err, PQ_E_USAGE, "an empty quoted name");
        } else {
            const char *end = strchr(p, ',');
            if (!end) end = p + strlen(p);
            const char *last = end;
            while (last > p && last[-1] == ' ') last--;
            if (last > p && !(name = select_name(a, p, (size_t)(last - p), percent)))
                return PQ_NOMEM(err);
            p = end;
        }
        if (name && pq_arena_push_str(a, out, n, name)) return PQ_NOMEM(err);
        if (!*p) return PQ_OK;
        p++; /* the comma */
    }
}
