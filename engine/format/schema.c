#include "schema.h"

#include <stdlib.h>
#include <string.h>

#define PQ_SCHEMA_MAX_DEPTH 64

/* The flat element list as a tree, before the LIST/MAP rules are applied. */
typedef struct raw_elem {
    const pq_schema_element *se;
    int32_t index;             /* into meta->schema */
    int16_t def, rep;          /* levels counting this element */
    struct raw_elem **children;
    int32_t n_children;
    struct raw_elem *parent;
} raw_elem;

typedef struct build_ctx {
    const pq_file_meta *meta;
    pq_schema *schema;
    pq_arena *arena;
    int32_t next;              /* next element index to consume */
    int32_t n_leaves;
    pq_error *err;
} build_ctx;

static raw_elem *parse_elem(build_ctx *c, raw_elem *parent, int depth)
{
    if (depth > PQ_SCHEMA_MAX_DEPTH) {
        pq_fail(c->err, PQ_E_CORRUPT, "schema nesting deeper than %d levels", PQ_SCHEMA_MAX_DEPTH);
        return NULL;
    }
    if (c->next >= c->meta->n_schema) {
        pq_fail(c->err, PQ_E_CORRUPT, "schema: group '%s' declares more children than elements exist",
                parent && parent->se->name ? parent->se->name : "(root)");
        return NULL;
    }
    int32_t idx = c->next++;
    const pq_schema_element *se = &c->meta->schema[idx];
    raw_elem *r = pq_arena_alloc(c->arena, sizeof *r);
    if (!r) {
        pq_fail(c->err, PQ_E_NOMEM, "out of memory building the schema");
        return NULL;
    }
    r->se = se;
    r->index = idx;
    r->parent = parent;
    if (parent) {
        int rep = se->has_repetition ? se->repetition : PQ_OPTIONAL;
        if (rep < PQ_REQUIRED || rep > PQ_REPEATED) {
            pq_fail(c->err, PQ_E_CORRUPT, "schema element '%s': invalid repetition %d",
                    se->name ? se->name : "?", rep);
            return NULL;
        }
        r->def = (int16_t)(parent->def + (rep != PQ_REQUIRED));
        r->rep = (int16_t)(parent->rep + (rep == PQ_REPEATED));
    }
    bool is_group = se->has_num_children && (se->num_children > 0 || !se->has_type);
    if (!parent) is_group = true;
    if (is_group) {
        int32_t n = se->has_num_children ? se->num_children : 0;
        if (n < 0 || n > c->meta->n_schema - c->next) {
            pq_fail(c->err, PQ_E_CORRUPT, "schema element '%s': %d children but only %d elements follow",
                    se->name ? se->name : "?", n, c->meta->n_schema - c->next);
            return NULL;
        }
        r->n_children = n;
        r->children = pq_arena_alloc(c->arena, sizeof(raw_elem *) * (size_t)(n ? n : 1));
        if (!r->children) {
            pq_fail(c->err, PQ_E_NOMEM, "out of memory building the schema");
            return NULL;
        }
        for (int32_t i = 0; i < n; i++) {
            r->children[i] = parse_elem(c, r, depth + 1);
            if (!r->children[i]) return NULL;
        }
    } else {
        if (!se->has_type || se->type < PQ_BOOLEAN || se->type > PQ_FIXED_LEN_BYTE_ARRAY) {
            pq_fail(c->err, PQ_E_CORRUPT, "schema element '%s': leaf without a valid physical type",
                    se->name ? se->name : "?");
            return NULL;
        }
        if (se->type == PQ_FIXED_LEN_BYTE_ARRAY && (se->type_length <= 0 || se->type_length > (1 << 24))) {
            pq_fail(c->err, PQ_E_CORRUPT, "schema element '%s': FIXED_LEN_BYTE_ARRAY with invalid length %d",
                    se->name ? se->name : "?", se->type_length);
            return NULL;
        }
        c->n_leaves++;
    }
    return r;
}

static bool is_repeated(const raw_elem *r)
{
    return r->se->has_repetition && r->se->repetition == PQ_REPEATED;
}

static bool is_optional(const raw_elem *r)
{
    return !r->se->has_repetition || r->se->repetition == PQ_OPTIONAL;
}

static bool is_leaf(const raw_elem *r)
{
    return r->children == NULL;
}

/* The LogicalType of an element, or its ConvertedType mapped to one. */
static pq_logical normalized_logical(const pq_schema_element *se)
{
    pq_logical l = {0};
    if (se->has_logical && se->logical.kind != PQ_LT_NONE) {
        l = se->logical;
        if (l.kind == PQ_LT_DECIMAL && l.precision == 0 && se->has_precision) {
            l.precision = se->precision;
            l.scale = se->scale;
        }
        return l;
    }
    switch (se->converted_type) {
    case PQ_CT_UTF8: l.kind = PQ_LT_STRING; break;
    case PQ_CT_ENUM: l.kind = PQ_LT_ENUM; break;
    case PQ_CT_JSON: l.kind = PQ_LT_JSON; break;
    case PQ_CT_BSON: l.kind = PQ_LT_BSON; break;
    case PQ_CT_DATE: l.kind = PQ_LT_DATE; break;
    case PQ_CT_DECIMAL:
        l.kind = PQ_LT_DECIMAL;
        l.scale = se->has_scale ? se->scale : 0;
        l.precision = se->has_precision ? se->precision : 0;
        break;
    /* Legacy time types: LogicalTypes.md maps them to isAdjustedToUTC=true,
     * but DuckDB and parquet-mr readers treat them as local (no zone); we
     * follow the readers so that output matches what users compare with. */
    case PQ_CT_TIME_MILLIS: l.kind = PQ_LT_TIME; l.unit = PQ_UNIT_MILLIS; break;
    case PQ_CT_TIME_MICROS: l.kind = PQ_LT_TIME; l.unit = PQ_UNIT_MICROS; break;
    case PQ_CT_TIMESTAMP_MILLIS: l.kind = PQ_LT_TIMESTAMP; l.unit = PQ_UNIT_MILLIS; break;
    case PQ_CT_TIMESTAMP_MICROS: l.kind = PQ_LT_TIMESTAMP; l.unit = PQ_UNIT_MICROS; break;
    case PQ_CT_UINT_8: l.kind = PQ_LT_INTEGER; l.bit_width = 8; l.is_signed = false; break;
    case PQ_CT_UINT_16: l.kind = PQ_LT_INTEGER; l.bit_width = 16; l.is_signed = false; break;
    case PQ_CT_UINT_32: l.kind = PQ_LT_INTEGER; l.bit_width = 32; l.is_signed = false; break;
    case PQ_CT_UINT_64: l.kind = PQ_LT_INTEGER; l.bit_width = 64; l.is_signed = false; break;
    case PQ_CT_INT_8: l.kind = PQ_LT_INTEGER; l.bit_width = 8; l.is_signed = true; break;
    case PQ_CT_INT_16: l.kind = PQ_LT_INTEGER; l.bit_width = 16; l.is_signed = true; break;
    case PQ_CT_INT_32: l.kind = PQ_LT_INTEGER; l.bit_width = 32; l.is_signed = true; break;
    case PQ_CT_INT_64: l.kind = PQ_LT_INTEGER; l.bit_width = 64; l.is_signed = true; break;
    case PQ_CT_MAP: case PQ_CT_MAP_KEY_VALUE: l.kind = PQ_LT_MAP; break;
    case PQ_CT_LIST: l.kind = PQ_LT_LIST; break;
    default: break;
    }
    return l;
}

static bool annotated(const raw_elem *r, pq_logical_kind lk, pq_converted ct)
{
    const pq_schema_element *se = r->se;
    if (se->has_logical && se->logical.kind == lk) return true;
    return se->converted_type == (int32_t)ct;
}

static pq_node *new_node(build_ctx *c, const raw_elem *r, pq_node_kind kind, int32_t n_children)
{
    pq_node *n = pq_arena_alloc(c->arena, sizeof *n);
    if (!n) goto oom;
    n->name = r->se->name ? r->se->name : "";
    n->kind = kind;
    n->def_level = r->def;
    n->rep_level = r->rep;
    n->nullable = is_optional(r);
    n->leaf_index = -1;
    n->element_index = r->index;
    n->has_field_id = r->se->has_field_id;
    n->field_id = r->se->field_id;
    n->converted = (pq_converted)r->se->converted_type;
    n->n_children = n_children;
    if (n_children) {
        n->children = pq_arena_alloc(c->arena, sizeof(pq_node *) * (size_t)n_children);
        if (!n->children) goto oom;
    }
    return n;
oom:
    pq_fail(c->err, PQ_E_NOMEM, "out of memory building the schema");
    return NULL;
}

static pq_node *convert(build_ctx *c, const raw_elem *r, bool as_required_element);

/* A repeated element used as the element of a list: present whenever its
 * list entry exists. */
static pq_node *convert_element(build_ctx *c, const raw_elem *r)
{
    return convert(c, r, true);
}

static int32_t leaf_counter(build_ctx *c)
{
    return c->schema->n_leaves++;
}

static pq_node *convert_struct(build_ctx *c, const raw_elem *r)
{
    pq_node *n = new_node(c, r, PQ_NODE_STRUCT, r->n_children);
    if (!n) return NULL;
    for (int32_t i = 0; i < r->n_children; i++) {
        n->children[i] = convert(c, r->children[i], false);
        if (!n->children[i]) return NULL;
        n->children[i]->parent = n;
    }
    return n;
}

static pq_node *convert_primitive(build_ctx *c, const raw_elem *r)
{
    pq_node *n = new_node(c, r, PQ_NODE_PRIMITIVE, 0);
    if (!n) return NULL;
    n->phys = (pq_phys)r->se->type;
    n->type_length = r->se->type_length;
    n->logical = normalized_logical(r->se);
    n->leaf_index = leaf_counter(c);
    return n;
}

/* Element of a LIST-annotated group whose only child `rep` is repeated, by the
 * backward-compatibility rules of LogicalTypes.md. */
static pq_node *list_element(build_ctx *c, const raw_elem *list, const raw_elem *rep)
{
    if (is_leaf(rep) || rep->n_children != 1) return convert_element(c, rep);
    const char *rn = rep->se->name ? rep->se->name : "";
    const char *ln = list->se->name ? list->se->name : "";
    size_t ll = strlen(ln);
    if (!strcmp(rn, "array") || (!strncmp(rn, ln, ll) && !strcmp(rn + ll, "_tuple")))
        return convert_element(c, rep);
    return convert(c, rep->children[0], false);
}

static pq_node *convert(build_ctx *c, const raw_elem *r, bool as_required_element)
{
    /* A repeated field outside a LIST/MAP group is a list of required
     * elements; the list itself is never null. */
    if (is_repeated(r) && !as_required_element) {
        pq_node *n = new_node(c, r, PQ_NODE_LIST, 1);
        if (!n) return NULL;
        n->def_level = (int16_t)(r->def - 1);
        n->rep_level = (int16_t)(r->rep - 1);
        n->nullable = false;
        n->elem_def_level = r->def;
        n->elem_rep_level = r->rep;
        n->children[0] = convert_element(c, r);
        if (!n->children[0]) return NULL;
        n->children[0]->parent = n;
        return n;
    }
    pq_node *n;
    if (is_leaf(r)) {
        n = convert_primitive(c, r);
    } else if (annotated(r, PQ_LT_LIST, PQ_CT_LIST) && r->n_children == 1 &&
               is_repeated(r->children[0])) {
        const raw_elem *rep = r->children[0];
        n = new_node(c, r, PQ_NODE_LIST, 1);
        if (!n) return NULL;
        n->elem_def_level = rep->def;
        n->elem_rep_level = rep->rep;
        n->children[0] = list_element(c, r, rep);
        if (!n->children[0]) return NULL;
        n->children[0]->parent = n;
    } else if ((annotated(r, PQ_LT_MAP, PQ_CT_MAP) || annotated(r, PQ_LT_MAP, PQ_CT_MAP_KEY_VALUE)) &&
               r->n_children == 1 && is_repeated(r->children[0]) &&
               !is_leaf(r->children[0]) && r->children[0]->n_children >= 1 &&
               r->children[0]->n_children <= 2) {
        const raw_elem *kv = r->children[0];
        n = new_node(c, r, PQ_NODE_MAP, 2);
        if (!n) return NULL;
        n->elem_def_level = kv->def;
        n->elem_rep_level = kv->rep;
        n->children[0] = convert(c, kv->children[0], false);
        if (!n->children[0]) return NULL;
        n->children[0]->parent = n;
        if (kv->n_children == 2) {
            n->children[1] = convert(c, kv->children[1], false);
            if (!n->children[1]) return NULL;
            n->children[1]->parent = n;
        } else {
            n->n_children = 1; /* a map without values: keys only */
        }
    } else {
        n = convert_struct(c, r);
    }
    if (n && as_required_element) n->nullable = false;
    return n;
}

static void assign_leaf_ranges(pq_node *n, pq_leaf *leaves, int32_t n_leaves_total)
{
    if (n->kind == PQ_NODE_PRIMITIVE) {
        n->first_leaf = n->leaf_index;
        n->n_leaves = 1;
        if (n->leaf_index >= 0 && n->leaf_index < n_leaves_total) leaves[n->leaf_index].node = n;
        return;
    }
    n->first_leaf = -1;
    n->n_leaves = 0;
    for (int32_t i = 0; i < n->n_children; i++) {
        pq_node *ch = n->children[i];
        assign_leaf_ranges(ch, leaves, n_leaves_total);
        if (n->first_leaf < 0) n->first_leaf = ch->first_leaf;
        n->n_leaves += ch->n_leaves;
    }
    if (n->first_leaf < 0) n->first_leaf = 0;
}

static int fill_leaf_levels(build_ctx *c, const raw_elem *r, int32_t *next_leaf, char *path,
                            size_t path_len, size_t cap, const char **parts, int32_t n_parts)
{
    size_t len = path_len;
    if (r->parent) {
        if (n_parts >= 64) return pq_fail(c->err, PQ_E_CORRUPT, "schema nested deeper than 64 levels");
        parts[n_parts++] = r->se->name ? r->se->name : "";
        const char *nm = r->se->name ? r->se->name : "";
        size_t nl = strlen(nm);
        if (len && len < cap - 1) path[len++] = '.';
        if (nl > cap - 1 - len) nl = cap - 1 - len;
        memcpy(path + len, nm, nl);
        len += nl;
        path[len] = '\0';
    }
    if (is_leaf(r)) {
        pq_leaf *lf = &c->schema->leaves[(*next_leaf)++];
        lf->max_def = r->def;
        lf->max_rep = r->rep;
        lf->path = pq_arena_strndup(c->arena, path, len);
        lf->path_parts = pq_arena_alloc(c->arena, sizeof *lf->path_parts * (size_t)(n_parts ? n_parts : 1));
        if (!lf->path || !lf->path_parts) return pq_fail(c->err, PQ_E_NOMEM, "out of memory building the schema");
        for (int32_t i = 0; i < n_parts; i++) {
            lf->path_parts[i] = pq_arena_strndup(c->arena, parts[i], strlen(parts[i]));
            if (!lf->path_parts[i]) return pq_fail(c->err, PQ_E_NOMEM, "out of memory building the schema");
        }
        lf->n_path_parts = n_parts;
        return PQ_OK;
    }
    for (int32_t i = 0; i < r->n_children; i++)
        PQ_TRY(fill_leaf_levels(c, r->children[i], next_leaf, path, len, cap, parts, n_parts));
    return PQ_OK;
}

int pq_schema_build(const pq_file_meta *meta, pq_schema *out, pq_error *err)
{
    memset(out, 0, sizeof *out);
    /* Blocks sized from the schema: every file of a table keeps one. */
    size_t block = meta->n_schema > 0 ? (size_t)meta->n_schema * 256 : 1024;
    pq_arena_init(&out->arena, block < 1024 ? 1024 : block > 8192 ? 8192 : block);
    if (meta->n_schema < 1) {
        pq_arena_free(&out->arena);
        return pq_fail(err, PQ_E_CORRUPT, "schema is empty");
    }
    build_ctx c = {.meta = meta, .schema = out, .arena = &out->arena, .err = err};
    raw_elem *root = parse_elem(&c, NULL, 0);
    if (!root) goto fail;
    if (c.next != meta->n_schema) {
        pq_fail(err, PQ_E_CORRUPT, "schema: %d elements but the root's tree covers %d",
                meta->n_schema, c.next);
        goto fail;
    }
    if (root->n_children == 0) {
        pq_fail(err, PQ_E_CORRUPT, "schema has no columns");
        goto fail;
    }
    out->leaves = pq_arena_alloc(&out->arena, sizeof(pq_leaf) * (size_t)c.n_leaves);
    if (!out->leaves) {
        pq_fail(err, PQ_E_NOMEM, "out of memory building the schema");
        goto fail;
    }
    int32_t expected_leaves = c.n_leaves;
    pq_node *rn = convert_struct(&c, root);
    if (!rn) goto fail;
    rn->nullable = false;
    if (out->n_leaves != expected_leaves) {
        pq_fail(err, PQ_E_CORRUPT, "schema: leaf count mismatch");
        goto fail;
    }
    out->root = rn;
    assign_leaf_ranges(rn, out->leaves, out->n_leaves);
    char path[1024];
    path[0] = '\0';
    int32_t next_leaf = 0;
    const char *parts[64];
    if (fill_leaf_levels(&c, root, &next_leaf, path, 0, sizeof path, parts, 0) != PQ_OK) goto fail;
    for (int32_t i = 0; i < out->n_leaves; i++) {
        int32_t order = PQ_ORDER_UNDEFINED;
        if (meta->n_column_orders == out->n_leaves) order = meta->column_orders[i];
        out->leaves[i].column_order = order;
    }
    return PQ_OK;
fail:
    pq_arena_free(&out->arena);
    memset(out, 0, sizeof *out);
    return PQ_ERR;
}

void pq_schema_free(pq_schema *s)
{
    if (!s) return;
    pq_arena_free(&s->arena);
    memset(s, 0, sizeof *s);
}

const pq_node *pq_schema_find(const pq_schema *s, const char *name)
{
    for (int32_t i = 0; i < s->root->n_children; i++)
        if (!strcmp(s->root->children[i]->name, name)) return s->root->children[i];
    return NULL;
}

static const char *unit_name(pq_time_unit u)
{
    switch (u) {
    case PQ_UNIT_MILLIS: return "MILLIS";
    case PQ_UNIT_MICROS: return "MICROS";
    case PQ_UNIT_NANOS: return "NANOS";
    default: return "?";
    }
}

static int primitive_type_text(const pq_node *n, pq_buf *out)
{
    const pq_logical *l = &n->logical;
    switch (l->kind) {
    case PQ_LT_STRING: return pq_buf_puts(out, "STRING");
    case PQ_LT_ENUM: return pq_buf_puts(out, "ENUM");
    case PQ_LT_JSON: return pq_buf_puts(out, "JSON");
    case PQ_LT_BSON: return pq_buf_puts(out, "BSON");
    case PQ_LT_UUID: return pq_buf_puts(out, "UUID");
    case PQ_LT_FLOAT16: return pq_buf_puts(out, "FLOAT16");
    case PQ_LT_DATE: return pq_buf_puts(out, "DATE");
    case PQ_LT_DECIMAL: return pq_buf_printf(out, "DECIMAL(%d,%d)", l->precision, l->scale);
    case PQ_LT_TIME:
        return pq_buf_printf(out, "TIME(%s%s)", unit_name(l->unit), l->utc ? ",UTC" : "");
    case PQ_LT_TIMESTAMP:
        return pq_buf_printf(out, "TIMESTAMP(%s%s)", unit_name(l->unit), l->utc ? ",UTC" : "");
    case PQ_LT_INTEGER:
        return pq_buf_printf(out, "%sINT%d", l->is_signed ? "" : "U", l->bit_width);
    case PQ_LT_UNKNOWN: return pq_buf_puts(out, "NULL");
    default: break;
    }
    if (n->converted == PQ_CT_INTERVAL) return pq_buf_puts(out, "INTERVAL");
    if (n->phys == PQ_INT96) return pq_buf_puts(out, "TIMESTAMP(INT96)");
    if (n->phys == PQ_FIXED_LEN_BYTE_ARRAY)
        return pq_buf_printf(out, "FIXED_LEN_BYTE_ARRAY(%d)", n->type_length);
    if (n->phys == PQ_BYTE_ARRAY) return pq_buf_puts(out, "BINARY");
    return pq_buf_puts(out, pq_phys_name(n->phys));
}

int pq_node_type_text(const pq_node *n, pq_buf *out)
{
    switch (n->kind) {
    case PQ_NODE_PRIMITIVE: return primitive_type_text(n, out);
    case PQ_NODE_LIST:
        if (pq_buf_puts(out, "LIST<") || pq_node_type_text(n->children[0], out)) return -1;
        return pq_buf_puts(out, ">");
    case PQ_NODE_MAP:
        if (pq_buf_puts(out, "MAP<") || pq_node_type_text(n->children[0], out)) return -1;
        if (n->n_children > 1 && (pq_buf_puts(out, ", ") || pq_node_type_text(n->children[1], out)))
            return -1;
        return pq_buf_puts(out, ">");
    case PQ_NODE_STRUCT:
        if (pq_buf_puts(out, "STRUCT<")) return -1;
        for (int32_t i = 0; i < n->n_children; i++) {
            if (i && pq_buf_puts(out, ", ")) return -1;
            if (pq_buf_printf(out, "%s: ", n->children[i]->name)) return -1;
            if (pq_node_type_text(n->children[i], out)) return -1;
        }
        return pq_buf_puts(out, ">");
    }
    return -1;
}

/* A signed INTEGER annotation of the physical type's own width says
 * nothing more than the physical type: DuckDB writes INT64 columns with
 * INT_64, pqfs and others without; both are one type. */
static bool plain_integer(const pq_node *n)
{
    const pq_logical *l = &n->logical;
    return l->kind == PQ_LT_NONE ||
           (l->kind == PQ_LT_INTEGER && l->is_signed &&
            ((n->phys == PQ_INT32 && l->bit_width == 32) || (n->phys == PQ_INT64 && l->bit_width == 64)));
}

bool pq_node_same_type(const pq_node *a, const pq_node *b)
{
    if (a->phys != b->phys || a->type_length != b->type_length) return false;
    if (plain_integer(a) || plain_integer(b)) return plain_integer(a) && plain_integer(b);
    const pq_logical *x = &a->logical, *y = &b->logical;
    return x->kind == y->kind && x->scale == y->scale && x->precision == y->precision && x->utc == y->utc &&
           x->unit == y->unit && x->bit_width == y->bit_width && x->is_signed == y->is_signed;
}

static bool node_equal(const pq_node *a, const pq_node *b)
{
    if (a->kind != b->kind || a->n_children != b->n_children || strcmp(a->name, b->name)) return false;
    if (a->kind == PQ_NODE_PRIMITIVE) return pq_node_same_type(a, b);
    for (int32_t i = 0; i < a->n_children; i++)
        if (!node_equal(a->children[i], b->children[i])) return false;
    return true;
}

bool pq_schema_equal(const pq_schema *a, const pq_schema *b)
{
    return node_equal(a->root, b->root);
}

static bool same_nullability(const pq_node *a, const pq_node *b)
{
    if (a->nullable != b->nullable || a->n_children != b->n_children) return false;
    for (int32_t i = 0; i < a->n_children; i++)
        if (!a->children[i] || !b->children[i] || !same_nullability(a->children[i], b->children[i])) return false;
    return true;
}

/* The root's name is the writer's ("schema", "duckdb_schema",
 * "spark_schema"; a union's is "schema"): not part of the columns. */
bool pq_schema_identical(const pq_schema *a, const pq_schema *b)
{
    const pq_node *x = a->root, *y = b->root;
    if (x->kind != y->kind || x->n_children != y->n_children || x->nullable != y->nullable) return false;
    for (int32_t i = 0; i < x->n_children; i++)
        if (!x->children[i] || !y->children[i] || !node_equal(x->children[i], y->children[i]) ||
            !same_nullability(x->children[i], y->children[i]))
            return false;
    return true;
}

static int32_t subtree_end(const pq_file_meta *m, int32_t i, int depth)
{
    if (i < 0 || i >= m->n_schema || depth > 64) return -1;
    int32_t n = m->schema[i].has_num_children ? m->schema[i].num_children : 0;
    int32_t at = i + 1;
    for (int32_t k = 0; k < n && at >= 0; k++) at = subtree_end(m, at, depth + 1);
    return at;
}

int32_t pq_schema_subtree_end(const pq_file_meta *m, int32_t i)
{
    return subtree_end(m, i, 0);
}
