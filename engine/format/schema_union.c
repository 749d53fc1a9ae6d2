/* Schema evolution: the union by name of a table's files' schemas, and the
 * widening of one file's column to the table's type (schema.h, footer.h).
 *
 * A column's type in the table is the widest of its files' (the rules of
 * DuckDB's union_by_name for the types below): integers of any width and
 * sign to the narrowest signed or unsigned integer that holds both (int32
 * and uint32: int64; never past 64 bits), FLOAT and DOUBLE to DOUBLE,
 * timestamps of one UTC-ness to the finer unit (INT96, read as whole
 * microseconds, beside one of milliseconds or microseconds: microseconds).
 * An integer beside a FLOAT
 * or DOUBLE is DOUBLE (the SPEC's int to double; DuckDB makes int and FLOAT
 * a FLOAT): int64 values past 2^53 round to the nearest double, as DuckDB's
 * BIGINT to DOUBLE cast does.  Anything else must be one type
 * (pq_node_same_type), or nested columns one shape (pq_schema_equal):
 * otherwise the pair is incompatible. */
#include "footer.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ types */

/* A primitive integer's sign and width (plain INT32/INT64 are signed). */
static bool int_class(const pq_node *n, bool *is_signed, int *bits)
{
    if (n->kind != PQ_NODE_PRIMITIVE || (n->phys != PQ_INT32 && n->phys != PQ_INT64)) return false;
    const pq_logical *l = &n->logical;
    if (l->kind == PQ_LT_NONE) {
        *is_signed = true;
        *bits = n->phys == PQ_INT32 ? 32 : 64;
        return n->converted == PQ_CT_NONE || n->converted == PQ_CT_INT_32 || n->converted == PQ_CT_INT_64;
    }
    if (l->kind != PQ_LT_INTEGER) return false;
    *is_signed = l->is_signed;
    *bits = l->bit_width;
    return (*bits == 8 || *bits == 16 || *bits == 32 || *bits == 64) && (*bits == 64) == (n->phys == PQ_INT64);
}

static bool plain_float(const pq_node *n)
{
    return n->kind == PQ_NODE_PRIMITIVE && (n->phys == PQ_FLOAT || n->phys == PQ_DOUBLE) &&
           n->logical.kind == PQ_LT_NONE;
}

static bool int64_timestamp(const pq_node *n)
{
    return n->kind == PQ_NODE_PRIMITIVE && n->phys == PQ_INT64 && n->logical.kind == PQ_LT_TIMESTAMP &&
           n->logical.unit >= PQ_UNIT_MILLIS && n->logical.unit <= PQ_UNIT_NANOS;
}

/* n as an INT64 TIMESTAMP(MICROS) (the converted type, which means UTC,
 * only when it is). */
static void micros_timestamp(pq_node *n, bool utc)
{
    n->phys = PQ_INT64;
    n->type_length = 0;
    n->logical = (pq_logical){.kind = PQ_LT_TIMESTAMP, .utc = utc, .unit = PQ_UNIT_MICROS};
    n->converted = utc ? PQ_CT_TIMESTAMP_MICROS : PQ_CT_NONE;
}

static pq_converted int_converted(bool is_signed, int bits)
{
    switch (bits) {
    case 8: return is_signed ? PQ_CT_INT_8 : PQ_CT_UINT_8;
    case 16: return is_signed ? PQ_CT_INT_16 : PQ_CT_UINT_16;
    case 32: return is_signed ? PQ_CT_INT_32 : PQ_CT_UINT_32;
    default: return is_signed ? PQ_CT_INT_64 : PQ_CT_UINT_64;
    }
}

int pq_node_union_type(const pq_node *a, const pq_node *b, pq_node *out)
{
    if (a->kind != PQ_NODE_PRIMITIVE || b->kind != PQ_NODE_PRIMITIVE) return -1;
    *out = *a;
    if (pq_node_same_type(a, b)) return 0;
    bool sa, sb;
    int wa, wb;
    if (int_class(a, &sa, &wa) && int_class(b, &sb, &wb)) {
        int bits = wa > wb ? wa : wb;
        bool is_signed = sa && sb;
        if (sa != sb) {
            /* The unsigned one needs twice its width as a signed integer. */
            int u = sa ? wb : wa, s = sa ? wa : wb;
            bits = 2 * u > s ? 2 * u : s;
            is_signed = true;
        }
        if (bits > 64) return -1;
        out->phys = bits == 64 ? PQ_INT64 : PQ_INT32;
        out->type_length = 0;
        out->logical = (pq_logical){.kind = PQ_LT_INTEGER, .bit_width = (int8_t)bits, .is_signed = is_signed};
        out->converted = int_converted(is_signed, bits);
        return 0;
    }
    /* FLOAT and DOUBLE, or an integer beside either: DOUBLE. */
    if ((plain_float(a) || int_class(a, &sa, &wa)) && (plain_float(b) || int_class(b, &sb, &wb))) {
        out->phys = PQ_DOUBLE;
        out->type_length = 0;
        out->logical = (pq_logical){.kind = PQ_LT_NONE};
        out->converted = PQ_CT_NONE;
        return 0;
    }
    /* INT96 is read as whole microseconds (pq_widen): beside an INT64
     * timestamp no finer than that, of its UTC-ness, TIMESTAMP(MICROS). */
    const pq_node *i96 = a->phys == PQ_INT96 ? a : b->phys == PQ_INT96 ? b : NULL, *other = i96 == a ? b : a;
    if (i96 && int64_timestamp(other) && other->logical.unit != PQ_UNIT_NANOS &&
        i96->logical.utc == other->logical.utc) {
        micros_timestamp(out, other->logical.utc);
        return 0;
    }
    if (int64_timestamp(a) && int64_timestamp(b) && a->logical.utc == b->logical.utc) {
        pq_time_unit u = a->logical.unit > b->logical.unit ? a->logical.unit : b->logical.unit;
        out->logical.unit = u;
        out->converted = u == PQ_UNIT_MILLIS   ? PQ_CT_TIMESTAMP_MILLIS
                         : u == PQ_UNIT_MICROS ? PQ_CT_TIMESTAMP_MICROS
                                               : PQ_CT_NONE;
        return 0;
    }
    return -1;
}

int pq_node_widen(const pq_node *from, const pq_node *to)
{
    if (from->kind != PQ_NODE_PRIMITIVE || to->kind != PQ_NODE_PRIMITIVE) return -1;
    if (pq_node_same_type(from, to)) return PQ_WIDEN_NONE;
    pq_node u;
    if (pq_node_union_type(from, to, &u) != 0 || !pq_node_same_type(&u, to)) return -1;
    if (from->phys == PQ_INT32 && to->phys == PQ_INT64) {
        bool s32;
        int w32;
        return int_class(from, &s32, &w32) && !s32 ? PQ_WIDEN_U32_I64 : PQ_WIDEN_I32_I64;
    }
    if (from->phys == PQ_FLOAT && to->phys == PQ_DOUBLE) return PQ_WIDEN_F32_F64;
    bool s;
    int w;
    if (to->phys == PQ_DOUBLE && int_class(from, &s, &w)) {
        if (from->phys == PQ_INT32) return s ? PQ_WIDEN_I32_F64 : PQ_WIDEN_U32_F64;
        return s ? PQ_WIDEN_I64_F64 : PQ_WIDEN_U64_F64;
    }
    if (from->phys == PQ_INT96) return PQ_WIDEN_INT96_MICROS; /* to TIMESTAMP(MICROS): the union's only */
    if (int64_timestamp(from) && from->logical.unit != to->logical.unit)
        return to->logical.unit - from->logical.unit == 1 ? PQ_WIDEN_TS_X1000 : PQ_WIDEN_TS_X1000000;
    return PQ_WIDEN_NONE; /* INT32 in INT32 (int8 as int16...), INT64 in INT64 */
}

/* ------------------------------------------------------------------ the union */

typedef struct ucol {
    const char *name;          /* as the files' nodes name it */
    pq_schema_element *elems;  /* the column's elements, as its first file has them */
    int32_t n_elems;
    pq_schema one;             /* those elements as a schema of one column */
    pq_node *node;             /* one's column, with the first file's node names and types */
    pq_node type;              /* primitive: the union's type so far */
    bool widened;              /* type is not the first file's */
    bool nullable;             /* optional (or missing) in some file */
    int n_files;               /* files that hold it */
    const char *first;         /* the file it came from (messages) */
} ucol;

struct pq_schema_union {
    pq_arena arena;
    ucol *cols;
    int n_cols, cap;
    int n_files;
    bool strict;
};

int pq_schema_union_new(bool strict, pq_schema_union **out, pq_error *err)
{
    pq_schema_union *u = calloc(1, sizeof *u);
    if (!u) return PQ_NOMEM(err);
    pq_arena_init(&u->arena, 16384);
    u->strict = strict;
    *out = u;
    return PQ_OK;
}

void pq_schema_union_free(pq_schema_union *u)
{
    if (!u) return;
    for (int i = 0; i < u->n_cols; i++) pq_schema_free(&u->cols[i].one);
    free(u->cols);
    pq_arena_free(&u->arena);
    free(u);
}


static char *dup(pq_arena *a, const char *s)
{
    return pq_arena_strndup(a, s ? s : "", strlen(s ? s : ""));
}

/* The names and types a table format gave the file's nodes (after its
 * elements were read: pq_tf_apply_types) onto the copy's, which has the
 * shape of `src`. */
static int copy_node_view(pq_arena *a, pq_node *dst, const pq_node *src, int depth)
{
    if (depth > 64 || dst->kind != src->kind || dst->n_children != src->n_children) return -1;
    if (!(dst->name = dup(a, src->name))) return -1;
    if (src->kind == PQ_NODE_PRIMITIVE) {
        dst->logical = src->logical;
        return 0;
    }
    for (int32_t i = 0; i < src->n_children; i++)
        if (dst->children[i] && src->children[i] && copy_node_view(a, dst->children[i], src->children[i], depth + 1))
            return -1;
    return 0;
}

/* A new column from file `ft`'s top-level node `nd`. */
static int add_column(pq_schema_union *u, const pq_footer *ft, const pq_node *nd, const char *file, pq_error *err)
{
    if (u->n_cols == u->cap) {
        int cap = u->cap ? 2 * u->cap : 16;
        ucol *grown = realloc(u->cols, sizeof *grown * (size_t)cap);
        if (!grown) return PQ_NOMEM(err);
        u->cols = grown;
        u->cap = cap;
    }
    const pq_file_meta *m = &ft->meta;
    int32_t end = pq_schema_subtree_end(m, nd->element_index);
    if (end < 0) return pq_fail(err, PQ_E_CORRUPT, "%s: column '%s': schema elements end early", file, nd->name);
    ucol *c = &u->cols[u->n_cols];
    memset(c, 0, sizeof *c);
    c->n_elems = end - nd->element_index;
    /* One more in front: the root of the one-column schema. */
    pq_schema_element *e = pq_arena_alloc(&u->arena, sizeof *e * (size_t)(c->n_elems + 1));
    if (!e || !(c->name = dup(&u->arena, nd->name)) || !(c->first = dup(&u->arena, file))) return PQ_NOMEM(err);
    memset(&e[0], 0, sizeof e[0]);
    e[0].name = "schema";
    e[0].has_num_children = true;
    e[0].num_children = 1;
    e[0].converted_type = PQ_CT_NONE;
    for (int32_t i = 0; i < c->n_elems; i++) {
        e[i + 1] = m->schema[nd->element_index + i];
        if (!(e[i + 1].name = dup(&u->arena, e[i + 1].name))) return PQ_NOMEM(err);
    }
    c->elems = e + 1;
    pq_file_meta one = {.schema = e, .n_schema = c->n_elems + 1};
    PQ_TRY(pq_schema_build(&one, &c->one, err));
    u->n_cols++;
    c->node = c->one.root->children[0];
    if (copy_node_view(&u->arena, c->node, nd, 0) != 0)
        return pq_fail(err, PQ_E_CORRUPT, "%s: column '%s': its schema does not build again", file, nd->name);
    if (nd->kind == PQ_NODE_PRIMITIVE) c->type = *c->node;
    c->nullable = nd->nullable;
    c->n_files = 1;
    return PQ_OK;
}

static int conflict(const pq_schema_union *u, const ucol *c, const pq_node *nd, const char *file, pq_error *err)
{
    pq_buf ta, tb;
    pq_buf_init(&ta);
    pq_buf_init(&tb);
    (void)pq_node_type_text(c->node->kind == PQ_NODE_PRIMITIVE ? &c->type : c->node, &ta);
    (void)pq_node_type_text(nd, &tb);
    pq_fail(err, PQ_E_UNSUPPORTED, "column '%s' is %.*s in %s but %.*s in %s: no type holds both", c->name,
            (int)ta.len, ta.data ? ta.data : "", c->first, (int)tb.len, tb.data ? tb.data : "", file);
    (void)u;
    pq_buf_free(&ta);
    pq_buf_free(&tb);
    return PQ_ERR;
}

int pq_schema_union_add(pq_schema_union *u, const pq_footer *ft, const char *file, pq_error *err)
{
    const pq_node *root = ft->schema.root;
    for (int32_t i = 0; i < root->n_children; i++) {
        const pq_node *nd = root->children[i];
        ucol *c = NULL;
        /* Files of a table mostly agree: the column at the same place first. */
        if (i < u->n_cols && !strcmp(u->cols[i].name, nd->name)) c = &u->cols[i];
        for (int k = 0; !c && k < u->n_cols; k++)
            if (!strcmp(u->cols[k].name, nd->name)) c = &u->cols[k];
        if (!c) {
            PQ_TRY(add_column(u, ft, nd, file, err));
            if (u->n_files > 0) u->cols[u->n_cols - 1].nullable = true; /* not in the files before */
            continue;
        }
        c->n_files++;
        c->nullable |= nd->nullable;
        if (c->node->kind == PQ_NODE_PRIMITIVE && nd->kind == PQ_NODE_PRIMITIVE) {
            pq_node t;
            if (pq_node_union_type(&c->type, nd, &t) == 0) {
                if (!pq_node_same_type(&t, &c->type)) {
                    c->type = t;
                    c->widened = !pq_node_same_type(&t, c->node);
                }
                continue;
            }
        } else {
            pq_schema sa = {.root = c->node}, sb = {.root = (pq_node *)nd};
            if (pq_schema_equal(&sa, &sb)) continue;
        }
        /* Incompatible: the first type stays the table's; the file's column
         * fails the scans that read it (pq_query_bind_file). */
        if (u->strict) return conflict(u, c, nd, file, err);
    }
    u->n_files++;
    return PQ_OK;
}

int pq_schema_union_set_type(pq_schema_union *u, const char *name, const pq_node *type, pq_error *err)
{
    for (int i = 0; i < u->n_cols; i++) {
        ucol *c = &u->cols[i];
        if (strcmp(c->name, name)) continue;
        if (c->node->kind != PQ_NODE_PRIMITIVE || type->kind != PQ_NODE_PRIMITIVE)
            return pq_fail(err, PQ_E_USAGE, "column '%s': only a primitive column's type is set", name);
        if (pq_node_widen(&c->type, type) < 0)
            return pq_fail(err, PQ_E_USAGE, "column '%s': its files' type does not widen to the one set", name);
        c->type = *type;
        c->widened = !pq_node_same_type(type, c->node);
        return PQ_OK;
    }
    return pq_fail(err, PQ_E_USAGE, "column '%s' is in no file added", name);
}

int pq_schema_union_finish(const pq_schema_union *u, pq_footer **out, pq_error *err)
{
    *out = NULL;
    if (u->n_cols == 0) return pq_fail(err, PQ_E_USAGE, "a table without columns (no file's schema was added)");
    pq_footer *ft = calloc(1, sizeof *ft);
    if (!ft) return PQ_NOMEM(err);
    pq_arena_init(&ft->arena, 4096);
    int32_t n = 1;
    for (int i = 0; i < u->n_cols; i++) n += u->cols[i].n_elems;
    pq_schema_element *e = pq_arena_alloc(&ft->arena, sizeof *e * (size_t)n);
    if (!e) {
        pq_footer_free(ft);
        return PQ_NOMEM(err);
    }
    memset(&e[0], 0, sizeof e[0]);
    e[0].name = "schema";
    e[0].has_num_children = true;
    e[0].num_children = u->n_cols;
    e[0].converted_type = PQ_CT_NONE;
    int32_t at = 1;
    for (int i = 0; i < u->n_cols; i++) {
        const ucol *c = &u->cols[i];
        memcpy(&e[at], c->elems, sizeof *e * (size_t)c->n_elems);
        for (int32_t k = 0; k < c->n_elems; k++)
            if (!(e[at + k].name = dup(&ft->arena, e[at + k].name))) {
                pq_footer_free(ft);
                return PQ_NOMEM(err);
            }
        pq_schema_element *top = &e[at];
        if (c->widened) {
            top->type = c->type.phys;
            top->type_length = c->type.type_length;
            top->converted_type = c->type.converted;
            top->has_logical = c->type.logical.kind != PQ_LT_NONE;
            top->logical = c->type.logical;
        }
        /* Missing from a file (NULL there) or optional in one: optional. */
        if ((c->nullable || c->n_files < u->n_files) && top->has_repetition && top->repetition == PQ_REQUIRED)
            top->repetition = PQ_OPTIONAL;
        at += c->n_elems;
    }
    ft->meta.version = 1;
    ft->meta.schema = e;
    ft->meta.n_schema = n;
    if (pq_schema_build(&ft->meta, &ft->schema, err) != PQ_OK) {
        pq_footer_free(ft);
        return PQ_ERR;
    }
    /* The writer's order for every leaf (a Parquet output of the table). */
    for (int32_t l = 0; l < ft->schema.n_leaves; l++) ft->schema.leaves[l].column_order = PQ_ORDER_TYPE_DEFINED;
    *out = ft;
    return PQ_OK;
}

int pq_schema_union_files(const pq_schema_union *u)
{
    return u->n_files;
}
