#include "scan_parquet.h"

#include <stdlib.h>
#include <string.h>

/* Partition constants are encoded this many rows at a time. */
#define CONST_BATCH 65536

struct pq_parquet_out {
    const pq_query *q;
    pq_write_opts opts;
    pq_filewriter *fw;
    pq_arena arena;
    pq_schema_element *schema;
    int32_t n_schema;
    int32_t n_leaves;
    /* Partition columns as leaves of their own: a copy of each synthesized
     * node under a root, so that their path_in_schema is their name. */
    pq_node part_root;
    pq_node *part_nodes;
    pq_leaf *part_leaves;
    /* Each output leaf's path_in_schema, from the output's own elements
     * (a table format may name columns otherwise than the files do). */
    const char ***leaf_paths;
    int32_t *leaf_path_lens;
};

int32_t pq_parquet_out_leaves(const pq_parquet_out *po)
{
    return po->n_leaves;
}


/* The node of element i in nd's subtree (NULL: none). */
static const pq_node *node_at(const pq_node *nd, int32_t i, int depth)
{
    if (nd->element_index == i) return nd;
    for (int32_t c = 0; depth < 64 && c < nd->n_children; c++) {
        const pq_node *hit = nd->children[c] ? node_at(nd->children[c], i, depth + 1) : NULL;
        if (hit) return hit;
    }
    return NULL;
}

/* Element e as its node says: the name the view shows (a Delta column's
 * logical name, not the file's physical one) and a timestamp's time zone
 * (a Delta `timestamp` is UTC whatever the file says).  INT96 keeps its
 * type: it has no annotation to say it. */
static void element_as_node(pq_schema_element *e, const pq_node *n)
{
    if (!n) return;
    e->name = n->name;
    if (n->kind != PQ_NODE_PRIMITIVE || n->phys == PQ_INT96 || n->logical.kind != PQ_LT_TIMESTAMP || !e->has_logical ||
        e->logical.kind != PQ_LT_TIMESTAMP || e->logical.utc == n->logical.utc)
        return;
    e->logical.utc = n->logical.utc;
    /* The converted types TIMESTAMP_MILLIS/MICROS mean UTC. */
    e->converted_type = !n->logical.utc                   ? PQ_CT_NONE
                        : n->logical.unit == PQ_UNIT_MILLIS ? PQ_CT_TIMESTAMP_MILLIS
                        : n->logical.unit == PQ_UNIT_MICROS ? PQ_CT_TIMESTAMP_MICROS
                                                            : PQ_CT_NONE;
}

/* po->leaf_paths from po->schema: every name below the root, depth first. */
static int output_leaf_paths(pq_parquet_out *po, pq_error *err)
{
    po->leaf_paths = pq_arena_alloc(&po->arena, sizeof *po->leaf_paths * (size_t)(po->n_leaves + 1));
    po->leaf_path_lens = pq_arena_alloc(&po->arena, sizeof *po->leaf_path_lens * (size_t)(po->n_leaves + 1));
    if (!po->leaf_paths || !po->leaf_path_lens) return PQ_NOMEM(err);
    const char *names[65];
    int32_t left[65]; /* children still to come at each depth */
    int depth = 0, leaf = 0;
    left[0] = po->schema[0].num_children;
    for (int32_t i = 1; i < po->n_schema; i++) {
        while (depth > 0 && left[depth] == 0) depth--;
        if (depth >= 64 || left[depth] <= 0)
            return pq_fail(err, PQ_E_CORRUPT, "the output schema's elements do not form a tree");
        left[depth]--;
        const pq_schema_element *e = &po->schema[i];
        names[depth] = e->name;
        int32_t kids = e->has_num_children ? e->num_children : 0;
        if (kids > 0) {
            left[++depth] = kids;
            continue;
        }
        if (leaf >= po->n_leaves) return pq_fail(err, PQ_E_CORRUPT, "the output schema has more leaves than columns");
        const char **path = pq_arena_alloc(&po->arena, sizeof *path * (size_t)(depth + 1));
        if (!path) return PQ_NOMEM(err);
        memcpy(path, names, sizeof *path * (size_t)(depth + 1));
        po->leaf_paths[leaf] = path;
        po->leaf_path_lens[leaf++] = depth + 1;
    }
    if (leaf != po->n_leaves) return pq_fail(err, PQ_E_CORRUPT, "the output schema has fewer leaves than columns");
    return PQ_OK;
}

int pq_parquet_out_new(const pq_query *q, const pq_footer *ref, const pq_write_opts *opts, const pq_sink *sink,
                       pq_parquet_out **out, pq_error *err)
{
    *out = NULL;
    pq_parquet_out *po = calloc(1, sizeof *po);
    if (!po) return PQ_NOMEM(err);
    po->q = q;
    po->opts = *opts;
    pq_arena_init(&po->arena, 4096);
    const pq_file_meta *m = &ref->meta;
    int rc = PQ_OK;
    /* Count the elements first. */
    int32_t n = 1;
    for (int j = 0; j < q->n_out && rc == PQ_OK; j++) {
        int col = q->out[j];
        if (col >= q->n_data) {
            n++;
            po->n_leaves++;
            continue;
        }
        const pq_node *nd = q->cols[col].node;
        int32_t end = pq_schema_subtree_end(m, nd->element_index);
        if (end < 0) rc = pq_fail(err, PQ_E_CORRUPT, "column %s: schema elements end early", q->cols[col].name);
        else n += end - nd->element_index;
        po->n_leaves += nd->n_leaves;
    }
    po->schema = pq_arena_alloc(&po->arena, sizeof *po->schema * (size_t)n);
    po->part_nodes = pq_arena_alloc(&po->arena, sizeof *po->part_nodes * (size_t)(q->n_parts + 1));
    po->part_leaves = pq_arena_alloc(&po->arena, sizeof *po->part_leaves * (size_t)(q->n_parts + 1));
    if (rc == PQ_OK && (!po->schema || !po->part_nodes || !po->part_leaves))
        rc = PQ_NOMEM(err);
    if (rc == PQ_OK) {
        pq_schema_element *root = &po->schema[0];
        memset(root, 0, sizeof *root);
        root->name = "schema";
        root->has_num_children = true;
        root->num_children = q->n_out;
        root->converted_type = PQ_CT_NONE;
        po->n_schema = 1;
        po->part_root.kind = PQ_NODE_STRUCT;
        po->part_root.name = "schema";
        for (int j = 0; j < q->n_out; j++) {
            int col = q->out[j];
            if (col < q->n_data) {
                const pq_node *nd = q->cols[col].node;
                int32_t end = pq_schema_subtree_end(m, nd->element_index);
                for (int32_t i = nd->element_index; i < end; i++) {
                    pq_schema_element *e = &po->schema[po->n_schema++];
                    *e = m->schema[i];
                    /* A logical type this writer cannot describe: the column
                     * as its physical type, as data.csv shows it. */
                    if (e->has_logical && e->logical.kind == PQ_LT_UNRECOGNIZED) e->has_logical = false;
                    element_as_node(e, node_at(nd, i, 0));
                    e->name = pq_arena_strndup(&po->arena, e->name ? e->name : "", strlen(e->name ? e->name : ""));
                    if (!e->name) rc = PQ_NOMEM(err);
                }
                continue;
            }
            int p = col - q->n_data;
            pq_node *pn = &po->part_nodes[p];
            *pn = q->part_nodes[p];
            pn->parent = &po->part_root;
            po->part_leaves[p] = (pq_leaf){.node = pn, .max_def = 1, .max_rep = 0, .path = pn->name, .column_order = PQ_ORDER_TYPE_DEFINED};
            pq_schema_element *e = &po->schema[po->n_schema++];
            memset(e, 0, sizeof *e);
            e->name = pn->name;
            e->has_type = true;
            e->type = pn->phys;
            e->has_repetition = true;
            e->repetition = PQ_OPTIONAL;
            e->converted_type = pn->logical.kind == PQ_LT_DATE ? PQ_CT_DATE
                                : pn->logical.kind == PQ_LT_STRING ? PQ_CT_UTF8 : PQ_CT_NONE;
            e->type_length = pn->type_length;
            if (pn->logical.kind == PQ_LT_DECIMAL) {
                /* The legacy fields too: readers that know no LogicalType read them. */
                e->converted_type = PQ_CT_DECIMAL;
                e->has_scale = e->has_precision = true;
                e->scale = pn->logical.scale;
                e->precision = pn->logical.precision;
            }
            if (pn->logical.kind != PQ_LT_NONE) {
                e->has_logical = true;
                e->logical = pn->logical;
            }
        }
    }
    if (rc == PQ_OK) rc = output_leaf_paths(po, err);
    if (rc == PQ_OK) rc = pq_filewriter_new(sink, po->schema, po->n_schema, po->n_leaves, &po->fw, err);
    if (rc != PQ_OK) {
        pq_parquet_out_free(po);
        return rc;
    }
    *out = po;
    return PQ_OK;
}

int pq_parquet_out_append(pq_parquet_out *po, pq_chunk_out *chunks, pq_error *err)
{
    for (int32_t i = 0; i < po->n_leaves; i++) {
        chunks[i].meta.path = po->leaf_paths[i];
        chunks[i].meta.n_path = po->leaf_path_lens[i];
    }
    return pq_filewriter_add_row_group(po->fw, chunks, err);
}

int pq_parquet_out_finish(pq_parquet_out *po, pq_error *err)
{
    return pq_filewriter_finish(po->fw, err);
}

void pq_parquet_out_free(pq_parquet_out *po)
{
    if (!po) return;
    pq_filewriter_free(po->fw);
    pq_arena_free(&po->arena);
    free(po);
}

/* ------------------------------------------------------------------ row group encoder */

/* A partition column's value in one file, as the column writer takes it. */
typedef struct part_const {
    bool is_null;
    int64_t i64;
    int32_t i32;               /* a date's days; a boolean */
    double d;
    pq_bytes str;
    uint8_t be[16];            /* a DECIMAL of 16 bytes (str points here) */
} part_const;

/* How a file's leaf becomes the output's (schema evolution). */
enum leaf_mode {
    LEAF_SAME,                 /* the table's levels */
    LEAF_LIFT,                 /* required in the file, optional in the table: every value present */
    LEAF_NULL,                 /* the file lacks the column: NULL in every row */
};

struct pq_rg_encoder {
    const pq_parquet_out *po;
    const pq_node *const *col_node;
    pq_colwriter **w;          /* per output leaf */
    int16_t *max_def;          /* per output leaf: the file's (its batches' levels) */
    uint8_t *mode;             /* per output leaf: enum leaf_mode */
    uint16_t *ones;            /* LEAF_LIFT: definition levels of present values */
    int32_t n_ones;
    uint16_t *zeros;           /* LEAF_NULL: repetition levels */
    int32_t n;
    int64_t rows;
    part_const *pc;            /* per output column (partition columns only) */
    uint16_t *cdef;            /* CONST_BATCH entries */
    void *cvals;
    pq_chunk_out *copied;      /* per output leaf, after pq_rg_encoder_copy */
};

void pq_rg_encoder_free(pq_rg_encoder *e)
{
    if (!e) return;
    for (int32_t i = 0; i < e->n; i++) pq_colwriter_free(e->w[i]);
    free(e->w);
    free(e->max_def);
    free(e->mode);
    free(e->ones);
    free(e->zeros);
    free(e->pc);
    free(e->cdef);
    free(e->cvals);
    pq_chunks_free(e->copied, e->n);
    free(e);
}

/* The writers of data column col's leaves: the output's (the table's)
 * types and levels, from this file's leaves (or none: it lacks the column). */
static int data_writers(pq_rg_encoder *e, const pq_schema *file_schema, int col, pq_error *err)
{
    const pq_parquet_out *po = e->po;
    const pq_query *q = po->q;
    const pq_node *nd = e->col_node[col], *ref = q->cols[col].node;
    if (nd && nd->n_leaves != ref->n_leaves)
        return pq_fail(err, PQ_E_UNSUPPORTED, "column '%s' is nested otherwise than in the table's schema",
                       q->cols[col].name);
    for (int32_t k = 0; k < ref->n_leaves; k++) {
        const pq_leaf *fl = nd ? &file_schema->leaves[nd->first_leaf + k] : NULL;
        const pq_leaf *rl = &q->schema->leaves[ref->first_leaf + k];
        uint8_t mode = LEAF_SAME;
        if (!fl) {
            mode = LEAF_NULL; /* optional in the table: the union makes it so */
            if (rl->max_def < 1)
                return pq_fail(err, PQ_E_UNSUPPORTED, "column '%s' is not in this file and required in the table's "
                               "schema", q->cols[col].name);
        } else if (fl->max_def != rl->max_def || fl->max_rep != rl->max_rep) {
            /* The output schema is the table's: this file's levels must mean
             * the same (the scan's shape check leaves nullability and list
             * layout free, which CSV does not mind), or be a flat required
             * column of an optional one. */
            if (fl->max_rep || rl->max_rep || fl->max_def != 0 || rl->max_def != 1)
                return pq_fail(err, PQ_E_UNSUPPORTED,
                               "column '%s' is nullable or nested otherwise than in the table's schema "
                               "(levels %d/%d, there %d/%d): one Parquet file cannot hold both",
                               q->cols[col].name, fl->max_def, fl->max_rep, rl->max_def, rl->max_rep);
            mode = LEAF_LIFT;
        }
        e->max_def[e->n] = fl ? fl->max_def : 0;
        e->mode[e->n] = mode;
        PQ_TRY(pq_colwriter_new(rl, &po->opts, &e->w[e->n++], err));
    }
    return PQ_OK;
}

int pq_rg_encoder_new(const pq_parquet_out *po, const pq_schema *file_schema, const pq_node *const *col_node,
                      const char *const *part_values, pq_rg_encoder **out, pq_error *err)
{
    *out = NULL;
    const pq_query *q = po->q;
    pq_rg_encoder *e = calloc(1, sizeof *e);
    if (!e) return PQ_NOMEM(err);
    e->po = po;
    e->col_node = col_node;
    e->w = calloc((size_t)po->n_leaves + 1, sizeof *e->w);
    e->max_def = calloc((size_t)po->n_leaves + 1, sizeof *e->max_def);
    e->mode = calloc((size_t)po->n_leaves + 1, sizeof *e->mode);
    e->pc = calloc((size_t)q->n_out + 1, sizeof *e->pc);
    int rc = e->w && e->max_def && e->mode && e->pc ? PQ_OK : PQ_NOMEM(err);
    for (int j = 0; j < q->n_out && rc == PQ_OK; j++) {
        int col = q->out[j];
        if (col < q->n_data) {
            rc = data_writers(e, file_schema, col, err);
            continue;
        }
        int p = col - q->n_data;
        const char *text = part_values ? part_values[p] : NULL;
        pq_value v;
        if (pq_query_part_value(q, p, text, &v) != 0) {
            rc = pq_fail(err, PQ_E_CORRUPT, "partition value '%s' is not a valid %s", text, q->cols[col].name);
            break;
        }
        part_const *pc = &e->pc[j];
        pc->is_null = v.is_null;
        if (v.type == PQ_V_INT) pc->i64 = v.u.i;
        else if (v.type == PQ_V_DATE) pc->i32 = v.u.date;
        else if (v.type == PQ_V_BOOL) pc->i32 = v.u.b;
        else if (v.type == PQ_V_TIMESTAMP) pc->i64 = (int64_t)(v.u.ts_ns / 1000); /* TIMESTAMP(MICROS) */
        else if (v.type == PQ_V_DOUBLE) pc->d = v.u.d;
        else if (v.type == PQ_V_DECIMAL) {
            /* In the part node's physical type (pq_query's part_node). */
            pc->i64 = (int64_t)v.u.dec.unscaled;
            pc->i32 = (int32_t)v.u.dec.unscaled;
            unsigned __int128 u = (unsigned __int128)v.u.dec.unscaled;
            for (int i = 15; i >= 0; i--, u >>= 8) pc->be[i] = (uint8_t)u;
            pc->str = (pq_bytes){.ptr = pc->be, .len = 16};
        } else pc->str = v.u.s;
        rc = pq_colwriter_new(&po->part_leaves[p], &po->opts, &e->w[e->n++], err);
    }
    if (rc != PQ_OK) {
        pq_rg_encoder_free(e);
        return rc;
    }
    *out = e;
    return PQ_OK;
}

/* n rows of a partition constant to writer w. */
static int add_constant(pq_rg_encoder *e, pq_colwriter *w, const part_const *pc, pq_phys phys, int64_t n,
                        pq_error *err)
{
    /* Taken on first use: most views project no partition column. */
    if (!e->cdef) e->cdef = malloc(sizeof *e->cdef * CONST_BATCH);
    if (!e->cvals) e->cvals = malloc(sizeof(pq_bytes) * CONST_BATCH); /* the widest value */
    if (!e->cdef || !e->cvals) return PQ_NOMEM(err);
    while (n > 0) {
        int32_t m = n < CONST_BATCH ? (int32_t)n : CONST_BATCH;
        for (int32_t i = 0; i < m; i++) e->cdef[i] = pc->is_null ? 0 : 1;
        if (!pc->is_null) {
            if (phys == PQ_INT64)
                for (int32_t i = 0; i < m; i++) ((int64_t *)e->cvals)[i] = pc->i64;
            else if (phys == PQ_INT32)
                for (int32_t i = 0; i < m; i++) ((int32_t *)e->cvals)[i] = pc->i32;
            else if (phys == PQ_BOOLEAN)
                for (int32_t i = 0; i < m; i++) ((uint8_t *)e->cvals)[i] = (uint8_t)pc->i32;
            else if (phys == PQ_DOUBLE)
                for (int32_t i = 0; i < m; i++) ((double *)e->cvals)[i] = pc->d;
            else
                for (int32_t i = 0; i < m; i++) ((pq_bytes *)e->cvals)[i] = pc->str;
        }
        pq_col_batch b = {.n_rows = m, .n_levels = m, .def = e->cdef, .n_values = pc->is_null ? 0 : m,
                          .values = pc->is_null ? NULL : e->cvals};
        PQ_TRY(pq_colwriter_add(w, &b, err));
        n -= m;
    }
    return PQ_OK;
}

/* n rows of NULL (a column the file lacks) to writer w. */
static int add_nulls(pq_rg_encoder *e, pq_colwriter *w, int64_t n, pq_error *err)
{
    if (!e->zeros) e->zeros = calloc(CONST_BATCH, sizeof *e->zeros);
    if (!e->zeros) return PQ_NOMEM(err);
    while (n > 0) {
        int32_t m = n < CONST_BATCH ? (int32_t)n : CONST_BATCH;
        pq_col_batch b = {.n_rows = m, .n_levels = m, .def = e->zeros, .rep = e->zeros};
        PQ_TRY(pq_colwriter_add(w, &b, err));
        n -= m;
    }
    return PQ_OK;
}

/* The first n rows of a batch (whole rows: nested entries up to the n-th
 * row start). */
static void batch_prefix(const pq_col_batch *in, int32_t n, int16_t max_def, pq_col_batch *out)
{
    *out = *in;
    if (in->n_rows <= n) return;
    int32_t rows = 0, e = 0, values = 0;
    for (; e < in->n_levels; e++) {
        if (!in->rep || in->rep[e] == 0) {
            if (rows == n) break;
            rows++;
        }
        values += !in->def || in->def[e] == max_def;
    }
    out->n_rows = rows;
    out->n_levels = e;
    out->n_values = values;
}

int pq_rg_encoder_add(pq_rg_encoder *e, const pq_out_col *cols, int32_t n, pq_error *err)
{
    const pq_query *q = e->po->q;
    if (n <= 0) return PQ_OK;
    int32_t li = 0;
    for (int j = 0; j < q->n_out; j++) {
        int col = q->out[j];
        if (col < q->n_data) {
            for (int32_t k = 0; k < q->cols[col].node->n_leaves; k++, li++) {
                if (e->mode[li] == LEAF_NULL) {
                    PQ_TRY(add_nulls(e, e->w[li], n, err));
                    continue;
                }
                pq_col_batch b;
                batch_prefix(&cols[j].leaves[k], n, e->max_def[li], &b);
                if (e->mode[li] == LEAF_LIFT) {
                    if (b.n_levels > e->n_ones) {
                        uint16_t *g = realloc(e->ones, sizeof *g * (size_t)b.n_levels);
                        if (!g) return PQ_NOMEM(err);
                        e->ones = g;
                        for (int32_t i = e->n_ones; i < b.n_levels; i++) g[i] = 1;
                        e->n_ones = b.n_levels;
                    }
                    b.def = e->ones;
                }
                PQ_TRY(pq_colwriter_add(e->w[li], &b, err));
            }
        } else {
            const pq_node *pn = &e->po->part_nodes[col - q->n_data];
            PQ_TRY(add_constant(e, e->w[li++], &e->pc[j], pn->phys, n, err));
        }
    }
    e->rows += n;
    return PQ_OK;
}

int64_t pq_rg_encoder_rows(const pq_rg_encoder *e)
{
    return e->rows;
}

bool pq_rg_encoder_can_copy(const pq_rg_encoder *e, const pq_footer *ft, int32_t g)
{
    const pq_query *q = e->po->q;
    int32_t li = 0;
    for (int j = 0; j < q->n_out; j++) {
        int col = q->out[j];
        if (col >= q->n_data) {
            li++;
            continue;
        }
        const pq_node *nd = e->col_node[col], *ref = q->cols[col].node;
        for (int32_t k = 0; k < ref->n_leaves; k++, li++) {
            if (e->mode[li] == LEAF_NULL) continue; /* encoded as a constant */
            /* The chunk must hold the output's type and levels as they are:
             * a widened or lifted column is re-encoded. */
            const pq_leaf *fl = &ft->schema.leaves[nd->first_leaf + k];
            const pq_leaf *rl = &q->schema->leaves[ref->first_leaf + k];
            if (e->mode[li] != LEAF_SAME || !pq_node_same_type(fl->node, rl->node) ||
                !pq_chunk_copyable(ft, g, nd->first_leaf + k))
                return false;
        }
    }
    return true;
}

int pq_rg_encoder_copy(pq_rg_encoder *e, pq_file *f, const pq_footer *ft, int32_t g, pq_error *err)
{
    const pq_query *q = e->po->q;
    if (e->rows || e->copied) return pq_fail(err, PQ_E_USAGE, "a row group is copied whole or not at all");
    e->copied = calloc((size_t)e->n + 1, sizeof *e->copied);
    if (!e->copied) return PQ_NOMEM(err);
    int64_t rows = ft->meta.row_groups[g].num_rows;
    int32_t li = 0;
    for (int j = 0; j < q->n_out; j++) {
        int col = q->out[j];
        if (col < q->n_data) {
            const pq_node *nd = e->col_node[col];
            for (int32_t k = 0; k < q->cols[col].node->n_leaves; k++, li++) {
                if (nd) PQ_TRY(pq_chunk_copy_from(f, ft, g, nd->first_leaf + k, &e->copied[li], err));
                else PQ_TRY(add_nulls(e, e->w[li], rows, err));
            }
        } else {
            const pq_node *pn = &e->po->part_nodes[col - q->n_data];
            PQ_TRY(add_constant(e, e->w[li++], &e->pc[j], pn->phys, rows, err));
        }
    }
    e->rows = rows;
    return PQ_OK;
}

int pq_rg_encoder_finish(pq_rg_encoder *e, pq_chunk_out **chunks, pq_error *err)
{
    const pq_query *q = e->po->q;
    *chunks = NULL;
    pq_chunk_out *out = calloc((size_t)e->n + 1, sizeof *out);
    if (!out) return PQ_NOMEM(err);
    int32_t li = 0;
    int rc = PQ_OK;
    for (int j = 0; j < q->n_out && rc == PQ_OK; j++) {
        int col = q->out[j];
        int32_t leaves = col < q->n_data ? q->cols[col].node->n_leaves : 1;
        for (int32_t k = 0; k < leaves && rc == PQ_OK; k++, li++) {
            if (e->copied && col < q->n_data && e->col_node[col]) {
                out[li] = e->copied[li];
                memset(&e->copied[li], 0, sizeof e->copied[li]);
            } else {
                rc = pq_colwriter_finish(e->w[li], &out[li], err);
            }
        }
    }
    if (rc != PQ_OK) {
        pq_chunks_free(out, e->n);
        return rc;
    }
    *chunks = out;
    return PQ_OK;
}
