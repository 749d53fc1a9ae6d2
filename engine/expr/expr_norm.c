/* Normalization of bound expressions and the small API around them:
 * substitute, AND, constant, columns, conjuncts, equality values, text.
 *
 * Normal form: NOT appears only as flags (IS NOT NULL, NOT IN, NOT LIKE) or
 * inside comparison operators (NOT a < b is a >= b, exact under the total
 * order where NaN sorts last); AND/OR are flat; literal-only subtrees are
 * folded with SQL's three-valued logic; a comparison has its literal on the
 * right, and integer constants move across it as DuckDB moves them
 * (`x + 1 > 5` is `x > 4`).  In filter context (reachable from the root
 * through AND/OR only),
 * where NULL and FALSE both reject a row, predicates that can never be TRUE
 * become FALSE (`x = NULL`, `x NOT IN (1, NULL)`, `int_col = 1.5`) and ones
 * TRUE for every non-null value become IS NOT NULL. */
#include "expr_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct norm {
    pq_arena *arena;
    pq_error *err;             /* NULL: a failed fold leaves the subtree as it is */
    bool failed;
} norm;

static const char *const cmp_text[] = {"=", "!=", "<", "<=", ">", ">="};
static const char *const arith_text[] = {"+", "-", "*", "%"};

static pq_cmp_op invert(pq_cmp_op op)
{
    static const pq_cmp_op inv[] = {PQ_OP_NE, PQ_OP_EQ, PQ_OP_GE, PQ_OP_GT, PQ_OP_LE, PQ_OP_LT};
    return inv[op];
}

static pq_cmp_op mirror(pq_cmp_op op)
{
    static const pq_cmp_op mir[] = {PQ_OP_EQ, PQ_OP_NE, PQ_OP_GT, PQ_OP_GE, PQ_OP_LT, PQ_OP_LE};
    return mir[op];
}

static bool is_null_literal(const pq_expr *e)
{
    return e->kind == PQ_X_LITERAL && (e->value.is_null || e->value.type == PQ_V_NULL);
}

/* 0 FALSE, 1 TRUE, -1 not a boolean constant. */
static int bool_literal(const pq_expr *e)
{
    if (e->kind != PQ_X_LITERAL || is_null_literal(e) || e->value.type != PQ_V_BOOL)
        return -1;
    return e->value.u.b;
}

static pq_expr *fail_oom(norm *n)
{
    n->failed = true;
    if (n->err)
        PQ_NOMEM(n->err);
    return NULL;
}

static pq_expr *make_bool(norm *n, int v)
{
    pq_value val = {.type = PQ_V_BOOL};
    if (v < 0)
        val.is_null = true;
    else
        val.u.b = v != 0;
    pq_expr *e = pq_x_literal(n->arena, &val);
    return e ? e : fail_oom(n);
}

static pq_expr *fold(norm *n, pq_expr *e)
{
    if (e->kind == PQ_X_LITERAL || e->kind == PQ_X_COLUMN)
        return e;
    for (int i = 0; i < e->n_args; i++)
        if (e->args[i]->kind != PQ_X_LITERAL)
            return e;
    pq_value v;
    pq_error scratch;
    if (pq_x_eval_constant(e, n->arena, &v, n->err ? n->err : &scratch) != PQ_OK) {
        if (n->err) {
            n->failed = true;
            return NULL;
        }
        return e; /* evaluated (and reported) at run time instead */
    }
    pq_expr *l = pq_x_literal(n->arena, &v);
    if (!l)
        return fail_oom(n);
    l->type = e->type;
    l->scale = e->scale;
    l->f32 = e->f32;
    l->pos = e->pos;
    return l;
}

/* AND/OR of already normalized items: flattened, constants folded. */
static pq_expr *junction(norm *n, pq_xkind kind, pq_expr **items, int count)
{
    int absorbing = kind == PQ_X_AND ? 0 : 1; /* FALSE decides an AND, TRUE an OR */
    int total = 0;
    for (int i = 0; i < count; i++)
        total += items[i]->kind == kind ? items[i]->n_args : 1;
    pq_expr **out = pq_arena_alloc(n->arena, sizeof *out * (size_t)(total ? total : 1));
    if (!out)
        return fail_oom(n);
    int m = 0;
    bool have_null = false;
    for (int i = 0; i < count; i++) {
        int sub_n = items[i]->kind == kind ? items[i]->n_args : 1;
        pq_expr *const *sub = items[i]->kind == kind ? items[i]->args : &items[i];
        for (int j = 0; j < sub_n; j++) {
            int b = bool_literal(sub[j]);
            if (b == absorbing)
                return make_bool(n, absorbing);
            if (b >= 0)
                continue; /* the neutral constant */
            if (is_null_literal(sub[j])) {
                if (have_null)
                    continue;
                have_null = true;
            }
            out[m++] = sub[j];
        }
    }
    if (m == 0)
        return make_bool(n, !absorbing);
    if (m == 1)
        return out[0];
    pq_expr *e = pq_x_new(n->arena, kind, PQ_V_BOOL, 0);
    if (!e)
        return fail_oom(n);
    e->args = out;
    e->n_args = m;
    return e;
}

static pq_expr *norm_pred(norm *n, const pq_expr *e, bool negate);

/* An integer literal (INT, or DECIMAL of scale 0 as UINT64 arithmetic is). */
static bool integral_literal(const pq_expr *e, __int128 *v)
{
    if (e->kind != PQ_X_LITERAL || is_null_literal(e))
        return false;
    if (e->value.type == PQ_V_INT)
        *v = e->value.u.i;
    else if (e->value.type == PQ_V_DECIMAL && e->value.u.dec.scale == 0)
        *v = e->value.u.dec.unscaled;
    else
        return false;
    return true;
}

/* `x + c1 op c2` as `x op c2 - c1` (likewise x - c1, c1 - x, and x * c1 when
 * c1 divides c2), on integers only: DuckDB's MoveConstantsRule, whose results
 * (no overflow error from the arithmetic that is gone) the scan must match.
 * It also turns such conditions into `column op literal`, which the fast
 * paths and pruning understand.  Returns 1 with x, op, q when the rule
 * applies, 0 when not, -1 when c1 does not divide c2 (x * c1 = c2 can never
 * hold), -2 when q is beyond the type's range (x + c1 = c2 cannot either). */
static int constant_move(const pq_expr *cmp, const pq_expr **x, pq_cmp_op *op, __int128 *q)
{
    const pq_expr *a = cmp->args[0];
    /* Integer arithmetic widened to DECIMAL(scale 0) (after a decimal
     * constant moved away) compares as the integers: the text prints no such
     * cast, and reading it back must normalize the same way. */
    while (cmp->kind == PQ_X_CMP && a->kind == PQ_X_CAST && a->type == PQ_V_DECIMAL && a->scale == 0 &&
           a->args[0]->type == PQ_V_INT)
        a = a->args[0];
    __int128 c1, c2;
    if (cmp->kind != PQ_X_CMP || a->kind != PQ_X_ARITH ||
        !(a->type == PQ_V_INT || (a->type == PQ_V_DECIMAL && a->scale == 0)) ||
        !integral_literal(cmp->args[1], &c2))
        return 0;
    int side = integral_literal(a->args[1], &c1) ? 1 : integral_literal(a->args[0], &c1) ? 0 : -1;
    if (side < 0)
        return 0;
    *x = a->args[1 - side];
    *op = (pq_cmp_op)cmp->op;
    switch (a->op) {
    case PQ_OP_ADD: *q = c2 - c1; break;
    case PQ_OP_SUB:
        *q = side == 1 ? c2 + c1 : c1 - c2;
        if (side == 0)
            *op = mirror(*op);
        break;
    case PQ_OP_MUL:
        if (c1 == 0)
            return 0;
        if (c2 % c1 != 0)
            return -1;
        *q = c2 / c1;
        if (c1 < 0)
            *op = mirror(*op);
        break;
    default: return 0;
    }
    if (a->type == PQ_V_INT ? (*q < INT64_MIN || *q > INT64_MAX)
                            : (*q <= -pq_pow10_i128[38] || *q >= pq_pow10_i128[38]))
        return -2;
    return 1;
}

static pq_expr *move_constant(norm *n, const pq_expr *cmp)
{
    const pq_expr *x;
    pq_cmp_op op;
    __int128 q;
    if (constant_move(cmp, &x, &op, &q) != 1)
        return NULL;
    pq_value v = {.type = x->type};
    if (x->type == PQ_V_INT)
        v.u.i = (int64_t)q;
    else
        v.u.dec.unscaled = q;
    pq_expr *c = pq_x_new(n->arena, PQ_X_CMP, PQ_V_BOOL, 2);
    pq_expr *lit = pq_x_literal(n->arena, &v);
    if (!c || !lit)
        return fail_oom(n);
    c->op = (uint8_t)op;
    c->args[0] = (pq_expr *)x;
    c->args[1] = lit;
    c->pos = cmp->pos;
    return c;
}

static pq_expr *norm_value(norm *n, const pq_expr *e)
{
    switch (e->kind) {
    case PQ_X_LITERAL:
    case PQ_X_COLUMN:
        return (pq_expr *)e;
    case PQ_X_CAST:
    case PQ_X_NEG:
    case PQ_X_ARITH: {
        pq_expr *c = pq_x_copy(n->arena, e);
        if (!c)
            return fail_oom(n);
        for (int i = 0; i < c->n_args; i++)
            if (!(c->args[i] = norm_value(n, e->args[i])))
                return NULL;
        return fold(n, c);
    }
    default:
        return norm_pred(n, e, false);
    }
}

static pq_expr *norm_pred(norm *n, const pq_expr *e, bool negate)
{
    switch (e->kind) {
    case PQ_X_LITERAL: {
        int b = bool_literal(e);
        if (b < 0 || !negate)
            return (pq_expr *)e;
        return make_bool(n, !b);
    }
    case PQ_X_COLUMN: {
        /* A boolean column as a condition is `col = TRUE`. */
        pq_expr *c = pq_x_new(n->arena, PQ_X_CMP, PQ_V_BOOL, 2);
        pq_expr *t = make_bool(n, !negate);
        if (!c || !t)
            return fail_oom(n);
        c->op = PQ_OP_EQ;
        c->args[0] = (pq_expr *)e;
        c->args[1] = t;
        c->pos = e->pos;
        return c;
    }
    case PQ_X_NOT:
        return norm_pred(n, e->args[0], !negate);
    case PQ_X_AND:
    case PQ_X_OR: {
        pq_xkind kind = e->kind;
        if (negate)
            kind = kind == PQ_X_AND ? PQ_X_OR : PQ_X_AND;
        pq_expr **items = pq_arena_alloc(n->arena, sizeof *items * (size_t)e->n_args);
        if (!items)
            return fail_oom(n);
        for (int i = 0; i < e->n_args; i++)
            if (!(items[i] = norm_pred(n, e->args[i], negate)))
                return NULL;
        pq_expr *j = junction(n, kind, items, e->n_args);
        if (j)
            j->pos = j->pos ? j->pos : e->pos;
        return j;
    }
    case PQ_X_CMP: {
        pq_expr *c = pq_x_copy(n->arena, e);
        if (!c)
            return fail_oom(n);
        if (!(c->args[0] = norm_value(n, e->args[0])) || !(c->args[1] = norm_value(n, e->args[1])))
            return NULL;
        if (negate)
            c->op = (uint8_t)invert((pq_cmp_op)c->op);
        if (c->args[0]->kind == PQ_X_LITERAL && c->args[1]->kind != PQ_X_LITERAL) {
            pq_expr *t = c->args[0];
            c->args[0] = c->args[1];
            c->args[1] = t;
            c->op = (uint8_t)mirror((pq_cmp_op)c->op);
        }
        for (pq_expr *m; (m = move_constant(n, c)) != NULL;)
            c = m;
        if (n->failed)
            return NULL;
        return fold(n, c);
    }
    case PQ_X_IS_NULL:
    case PQ_X_IN:
    case PQ_X_LIKE: {
        pq_expr *c = pq_x_copy(n->arena, e);
        if (!c)
            return fail_oom(n);
        if (!(c->args[0] = norm_value(n, e->args[0])))
            return NULL;
        c->negated = c->negated != negate;
        return fold(n, c);
    }
    default:
        return (pq_expr *)e;
    }
}

/* x IS NOT NULL for the column under a comparison (casts do not add NULLs). */
static pq_expr *not_null(norm *n, pq_expr *x)
{
    while (x->kind == PQ_X_CAST)
        x = x->args[0];
    pq_expr *e = pq_x_new(n->arena, PQ_X_IS_NULL, PQ_V_BOOL, 1);
    if (!e)
        return fail_oom(n);
    e->args[0] = x;
    e->negated = true;
    e->pos = x->pos;
    return e;
}

static pq_expr *simplify(norm *n, pq_expr *e)
{
    switch (e->kind) {
    case PQ_X_LITERAL:
        return is_null_literal(e) ? make_bool(n, 0) : e;
    case PQ_X_AND:
    case PQ_X_OR: {
        pq_expr **items = pq_arena_alloc(n->arena, sizeof *items * (size_t)e->n_args);
        if (!items)
            return fail_oom(n);
        for (int i = 0; i < e->n_args; i++)
            if (!(items[i] = simplify(n, e->args[i])))
                return NULL;
        return junction(n, e->kind, items, e->n_args);
    }
    case PQ_X_IN: {
        if (e->list_has_null) {
            if (e->negated)
                return make_bool(n, 0); /* x NOT IN (.., NULL) is never TRUE */
            pq_expr *c = pq_x_copy(n->arena, e);
            if (!c)
                return fail_oom(n);
            c->list_has_null = false; /* IN: NULL only turns FALSE into NULL */
            e = c;
        }
        if (e->n_list == 0)
            return e->negated ? not_null(n, e->args[0]) : make_bool(n, 0);
        if (e->n_list == 1) {
            /* x IN (v) is x = v (x NOT IN (v) is x != v) */
            pq_expr *c = pq_x_new(n->arena, PQ_X_CMP, PQ_V_BOOL, 2);
            pq_expr *lit = pq_x_literal(n->arena, &e->list[0]);
            if (!c || !lit)
                return fail_oom(n);
            lit->lit_form = e->lit_form;
            lit->f32 = e->f32;
            c->op = e->negated ? PQ_OP_NE : PQ_OP_EQ;
            c->args[0] = e->args[0];
            c->args[1] = lit;
            c->pos = e->pos;
            /* A comparison now: normalized as one (constants moved), or its
             * printed form, read back, would normalize further. */
            for (pq_expr *m; (m = move_constant(n, c)) != NULL;)
                c = m;
            if (n->failed)
                return NULL;
            return simplify(n, c);
        }
        break;
    }
    case PQ_X_LIKE: {
        bool all = true;
        for (uint32_t i = 0; i < e->pattern.len; i++)
            if (e->pattern.ptr[i] != '%')
                all = false;
        if (all)
            return e->negated ? make_bool(n, 0) : not_null(n, e->args[0]);
        return e;
    }
    case PQ_X_CMP: {
        /* x * c1 = c2 where c1 does not divide c2, or x + c1 = c2 where
         * c2 - c1 is out of range: never equal; x * c1 != c2 then holds for
         * every non-null x (DuckDB's rule again). */
        const pq_expr *x;
        pq_cmp_op op;
        __int128 q;
        int moved = constant_move(e, &x, &op, &q);
        if (e->op == PQ_OP_EQ && moved < 0)
            return make_bool(n, 0);
        if (e->op == PQ_OP_NE && moved == -1)
            return not_null(n, (pq_expr *)x);
        break;
    }
    default:
        return e;
    }
    /* CMP / IN leaves on a column: constant for every non-null row? */
    pq_error scratch;
    if (pq_x_prepare(e, n->arena, &scratch) != PQ_OK)
        return e;
    int k = pq_x_kernel_constant(e);
    if (k == 0)
        return make_bool(n, 0);
    if (k == 1)
        return not_null(n, e->args[0]);
    return e;
}

pq_expr *pq_x_normalize(pq_expr *e, pq_arena *arena, pq_error *err)
{
    norm n = {.arena = arena, .err = err};
    pq_expr *r = norm_pred(&n, e, false);
    if (r)
        r = simplify(&n, r);
    if (!r || n.failed)
        return NULL;
    pq_error scratch;
    if (pq_x_prepare(r, arena, err ? err : &scratch) != PQ_OK)
        return NULL;
    return r;
}

/* ------------------------------------------------------------------ API */

static pq_expr *replace_column(pq_arena *arena, const pq_expr *e, int index, const pq_value *v)
{
    if (e->kind == PQ_X_COLUMN) {
        if (e->column != index)
            return (pq_expr *)e;
        pq_value lit = *v;
        lit.type = e->type;
        if (v->is_null || v->type == PQ_V_NULL) {
            memset(&lit.u, 0, sizeof lit.u);
            lit.is_null = true;
        } else if (v->type != e->type) {
            pq_value c;
            if (pq_x_value_cast(v, e->type, e->scale, e->f32, &c) != 0)
                return NULL; /* a value of another type: keep the column */
            lit = c;
        }
        pq_expr *l = pq_x_literal(arena, &lit);
        if (!l)
            return NULL;
        l->type = e->type;
        l->scale = e->scale;
        l->f32 = e->f32;
        l->pos = e->pos;
        l->lit_form = e->col.uuid ? PQ_LF_UUID : e->col.binary ? PQ_LF_BINARY : PQ_LF_PLAIN;
        return l;
    }
    if (e->n_args == 0)
        return (pq_expr *)e;
    pq_expr *c = pq_x_copy(arena, e);
    if (!c)
        return NULL;
    for (int i = 0; i < e->n_args; i++)
        if (!(c->args[i] = replace_column(arena, e->args[i], index, v)))
            return NULL;
    return c;
}

pq_expr *pq_expr_substitute(pq_arena *arena, const pq_expr *e, int index, const pq_value *v)
{
    if (!e)
        return NULL;
    pq_expr *r = replace_column(arena, e, index, v);
    if (!r)
        return (pq_expr *)e;
    pq_expr *out = pq_x_normalize(r, arena, NULL);
    return out ? out : (pq_expr *)e;
}

pq_expr *pq_expr_and(pq_arena *arena, pq_expr *a, pq_expr *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    pq_expr *e = pq_x_new(arena, PQ_X_AND, PQ_V_BOOL, 2);
    if (!e)
        return NULL;
    e->args[0] = a;
    e->args[1] = b;
    return pq_x_normalize(e, arena, NULL);
}

pq_tri pq_expr_constant(const pq_expr *e)
{
    if (!e)
        return PQ_TRI_TRUE;
    if (e->kind != PQ_X_LITERAL)
        return PQ_TRI_MAYBE;
    return bool_literal(e) == 1 ? PQ_TRI_TRUE : PQ_TRI_FALSE; /* NULL keeps no row */
}

/* Smallest column index above `floor` in e (INT32_MAX when none). */
static void min_column_above(const pq_expr *e, int floor, int *best)
{
    if (e->kind == PQ_X_COLUMN && e->column > floor && e->column < *best)
        *best = e->column;
    for (int i = 0; i < e->n_args; i++)
        min_column_above(e->args[i], floor, best);
}

int pq_expr_columns(const pq_expr *e, int *out, int max)
{
    int n = 0, last = -1;
    while (e) {
        int best = INT32_MAX;
        min_column_above(e, last, &best);
        if (best == INT32_MAX)
            break;
        if (n < max)
            out[n] = best;
        n++;
        last = best;
    }
    return n;
}

int pq_expr_conjuncts(const pq_expr *e, const pq_expr **out, int max)
{
    if (!e)
        return 0;
    if (e->kind != PQ_X_AND) {
        if (max > 0)
            out[0] = e;
        return 1;
    }
    for (int i = 0; i < e->n_args && i < max; i++)
        out[i] = e->args[i];
    return e->n_args;
}

/* The column under a comparison when its value converts exactly (INT ->
 * DECIMAL, DATE -> TIMESTAMP); NULL for a DOUBLE cast or anything else. */
static const pq_expr *exact_column(const pq_expr *x)
{
    if (x->kind == PQ_X_CAST && x->type != PQ_V_DOUBLE)
        x = x->args[0];
    return x->kind == PQ_X_COLUMN ? x : NULL;
}

static int add_equality_value(const pq_expr *col, const pq_value *lit, pq_value *values, int max,
                              int *n)
{
    pq_value d;
    int rc = pq_x_to_domain(&col->col, lit, &d);
    if (rc == -1)
        return 0; /* no value of the column equals it */
    if (rc != 0)
        return -1;
    /* Floating equality also matches the other zero and other NaN bit patterns,
     * which a hash or a dictionary lookup of one encoding would miss. */
    if (d.type == PQ_V_DOUBLE && (d.u.d == 0 || d.u.d != d.u.d))
        return -1;
    if (*n >= max)
        return -1;
    values[(*n)++] = d;
    return 0;
}

int pq_expr_equality_values(const pq_expr *e, pq_value *values, int max, int *n_values)
{
    *n_values = 0;
    if (!e || e->n_args < 1)
        return -1;
    const pq_expr *col = exact_column(e->args[0]);
    if (!col || col->col.opaque || col->col.repr == PQ_R_INT96)
        return -1; /* INT96: sub-microsecond bytes differ for one value */
    if (e->kind == PQ_X_CMP && e->op == PQ_OP_EQ && e->args[1]->kind == PQ_X_LITERAL &&
        !is_null_literal(e->args[1])) {
        if (add_equality_value(col, &e->args[1]->value, values, max, n_values))
            return -1;
        return col->column;
    }
    if (e->kind == PQ_X_IN && !e->negated) {
        for (int i = 0; i < e->n_list; i++)
            if (add_equality_value(col, &e->list[i], values, max, n_values))
                return -1;
        return col->column;
    }
    return -1;
}

/* ------------------------------------------------------------------ text */

static bool is_keyword(const char *s)
{
    static const char *const words[] = {"and", "or", "not", "between", "in", "is",
                                        "null", "like", "true", "false"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *w = words[i];
        size_t k = 0;
        while (s[k] && w[k] && (s[k] | 0x20) == w[k])
            k++;
        if (!s[k] && !w[k])
            return true;
    }
    return false;
}

static int put_name(pq_buf *out, const char *name)
{
    bool bare = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9') && !is_keyword(name);
    for (const char *p = name; *p && bare; p++) {
        unsigned char c = (unsigned char)*p;
        bare = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c >= 0x80;
    }
    if (bare)
        return pq_buf_puts(out, name);
    if (pq_buf_puts(out, "\""))
        return -1;
    for (const char *p = name; *p; p++)
        if (pq_buf_append(out, p, 1) || (*p == '"' && pq_buf_append(out, p, 1)))
            return -1;
    return pq_buf_puts(out, "\"");
}

/* Binding strength, for parentheses. */
static int strength(const pq_expr *e)
{
    switch (e->kind) {
    case PQ_X_OR: return 1;
    case PQ_X_AND: return 2;
    case PQ_X_NOT: return 3;
    case PQ_X_CMP: case PQ_X_IS_NULL: case PQ_X_IN: case PQ_X_LIKE: return 4;
    case PQ_X_ARITH: return e->op == PQ_OP_ADD || e->op == PQ_OP_SUB ? 5 : 6;
    case PQ_X_NEG: return 7;
    case PQ_X_CAST: return e->type == PQ_V_DOUBLE ? 8 : strength(e->args[0]);
    case PQ_X_LITERAL: {
        /* a negative number reads as unary minus */
        const pq_value *v = &e->value;
        if (!v->is_null && ((v->type == PQ_V_INT && v->u.i < 0 && v->u.i != INT64_MIN) || /* that one is parenthesized */
                            (v->type == PQ_V_DECIMAL && v->u.dec.unscaled < 0) ||
                            (v->type == PQ_V_DOUBLE && v->u.d < 0)))
            return 7;
        return 8;
    }
    default: return 8;
    }
}

static int put_expr(pq_buf *out, const pq_expr *e);

/* A DOUBLE literal next to a FLOAT operand must read back as a double; a
 * whole DECIMAL literal next to what prints as an integer must read back as
 * a DECIMAL ("12.", not "12"), or the arithmetic becomes 64-bit integer
 * arithmetic with its overflow errors. */
static pq_litform form_near(const pq_expr *lit, const pq_expr *sibling, bool arith)
{
    if (lit->type == PQ_V_DOUBLE && !lit->f32 && sibling->type == PQ_V_DOUBLE && sibling->f32)
        return PQ_LF_FLOAT_TOKEN;
    if (arith && lit->kind == PQ_X_LITERAL && lit->type == PQ_V_DECIMAL && lit->value.type == PQ_V_DECIMAL &&
        lit->value.u.dec.scale == 0) {
        const pq_expr *shown = sibling;
        while (shown->kind == PQ_X_CAST && shown->type != PQ_V_DOUBLE)
            shown = shown->args[0]; /* exact conversions are not printed */
        if (shown->type == PQ_V_INT)
            return PQ_LF_DECIMAL_TOKEN;
    }
    return (pq_litform)lit->lit_form;
}

static int put_operand_near(pq_buf *out, const pq_expr *e, int min_strength, const pq_expr *sibling, bool arith)
{
    if (e->kind == PQ_X_LITERAL && strength(e) >= min_strength)
        return pq_x_value_text(&e->value, form_near(e, sibling, arith), out);
    if (strength(e) >= min_strength)
        return put_expr(out, e);
    if (pq_buf_puts(out, "(") || put_expr(out, e))
        return -1;
    return pq_buf_puts(out, ")");
}

static int put_operand(pq_buf *out, const pq_expr *e, int min_strength)
{
    return put_operand_near(out, e, min_strength, e, false);
}

static int put_expr(pq_buf *out, const pq_expr *e)
{
    switch (e->kind) {
    case PQ_X_LITERAL: return pq_x_value_text(&e->value, (pq_litform)e->lit_form, out);
    case PQ_X_COLUMN: return put_name(out, e->name);
    case PQ_X_CAST:
        if (e->type != PQ_V_DOUBLE)
            return put_expr(out, e->args[0]); /* exact conversions are not shown */
        if (pq_buf_puts(out, "CAST(") || put_expr(out, e->args[0]))
            return -1;
        return pq_buf_puts(out, e->f32 ? " AS FLOAT)" : " AS DOUBLE)");
    case PQ_X_NEG:
        if (pq_buf_puts(out, "-"))
            return -1;
        return put_operand(out, e->args[0], 8);
    case PQ_X_ARITH: {
        int s = strength(e);
        if (put_operand_near(out, e->args[0], s, e->args[1], true) || pq_buf_puts(out, " ") ||
            pq_buf_puts(out, arith_text[e->op]) || pq_buf_puts(out, " "))
            return -1;
        return put_operand_near(out, e->args[1], s + 1, e->args[0], true);
    }
    case PQ_X_CMP:
        if (put_operand_near(out, e->args[0], 5, e->args[1], false) || pq_buf_puts(out, " ") ||
            pq_buf_puts(out, cmp_text[e->op]) || pq_buf_puts(out, " "))
            return -1;
        return put_operand_near(out, e->args[1], 5, e->args[0], false);
    case PQ_X_IS_NULL:
        if (put_operand(out, e->args[0], 5))
            return -1;
        return pq_buf_puts(out, e->negated ? " IS NOT NULL" : " IS NULL");
    case PQ_X_IN:
        if (put_operand(out, e->args[0], 5) || pq_buf_puts(out, e->negated ? " NOT IN (" : " IN ("))
            return -1;
        for (int i = 0; i < e->n_list; i++) {
            pq_litform form = (pq_litform)e->lit_form;
            if (e->list[i].type == PQ_V_DOUBLE && e->args[0]->type == PQ_V_DOUBLE && !e->f32 &&
                e->args[0]->f32)
                form = PQ_LF_FLOAT_TOKEN; /* f32: the list was rounded to float */
            if ((i && pq_buf_puts(out, ", ")) || pq_x_value_text(&e->list[i], form, out))
                return -1;
        }
        if (e->list_has_null && pq_buf_puts(out, e->n_list ? ", NULL" : "NULL"))
            return -1;
        return pq_buf_puts(out, ")");
    case PQ_X_LIKE: {
        pq_value p = {.type = PQ_V_STRING};
        p.u.s = e->pattern;
        if (put_operand(out, e->args[0], 5) ||
            pq_buf_puts(out, e->negated ? " NOT LIKE " : " LIKE "))
            return -1;
        return pq_x_value_text(&p, PQ_LF_PLAIN, out);
    }
    case PQ_X_AND:
    case PQ_X_OR:
        for (int i = 0; i < e->n_args; i++) {
            if (i && pq_buf_puts(out, e->kind == PQ_X_AND ? " AND " : " OR "))
                return -1;
            if (put_operand(out, e->args[i], 8))
                return -1;
        }
        return 0;
    case PQ_X_NOT:
        if (pq_buf_puts(out, "NOT "))
            return -1;
        return put_operand(out, e->args[0], 8);
    }
    return -1;
}

int pq_expr_text(const pq_expr *e, pq_buf *out)
{
    if (!e)
        return pq_buf_puts(out, "TRUE");
    return put_expr(out, e);
}

/* ------------------------------------------------------------------ cache keys */

static int key_i128(pq_buf *out, __int128 v)
{
    unsigned __int128 u = (unsigned __int128)v;
    return pq_buf_printf(out, "%016llx%016llx", (unsigned long long)(uint64_t)(u >> 64),
                         (unsigned long long)(uint64_t)u);
}

static int key_bytes(pq_buf *out, const uint8_t *p, uint32_t len)
{
    static const char hex[] = "0123456789abcdef";
    if (pq_buf_printf(out, "%u:", (unsigned)len) || pq_buf_reserve(out, (size_t)len * 2 + 1))
        return -1;
    for (uint32_t i = 0; i < len; i++) {
        out->data[out->len++] = hex[p[i] >> 4];
        out->data[out->len++] = hex[p[i] & 15];
    }
    return 0;
}

static int key_value(pq_buf *out, const pq_value *v)
{
    if (pq_buf_printf(out, "<%d", (int)v->type))
        return -1;
    if (v->is_null)
        return pq_buf_puts(out, " null>");
    int rc = 0;
    switch (v->type) {
    case PQ_V_NULL: break;
    case PQ_V_BOOL: rc = pq_buf_printf(out, " %d", v->u.b ? 1 : 0); break;
    case PQ_V_INT: rc = pq_buf_printf(out, " %lld", (long long)v->u.i); break;
    case PQ_V_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &v->u.d, sizeof bits);
        rc = pq_buf_printf(out, " %016llx", (unsigned long long)bits);
        break;
    }
    case PQ_V_DECIMAL:
        rc = pq_buf_puts(out, " ") || key_i128(out, v->u.dec.unscaled) ||
             pq_buf_printf(out, "e-%d", (int)v->u.dec.scale);
        break;
    case PQ_V_STRING: rc = pq_buf_puts(out, " ") || key_bytes(out, v->u.s.ptr, v->u.s.len); break;
    case PQ_V_DATE: rc = pq_buf_printf(out, " %d", (int)v->u.date); break;
    case PQ_V_TIME: rc = pq_buf_printf(out, " %lld", (long long)v->u.time_ns); break;
    case PQ_V_TIMESTAMP: rc = pq_buf_puts(out, " ") || key_i128(out, v->u.ts_ns); break;
    }
    return rc ? -1 : pq_buf_puts(out, ">");
}

static int key_node(pq_buf *out, const pq_expr *e)
{
    if (pq_buf_printf(out, "(%d %d %d %d %d %d", (int)e->kind, (int)e->type, (int)e->scale, e->f32 ? 1 : 0,
                      (int)e->op, e->negated ? 1 : 0))
        return -1;
    switch (e->kind) {
    case PQ_X_LITERAL:
        if (key_value(out, &e->value))
            return -1;
        break;
    case PQ_X_COLUMN:
        if (pq_buf_printf(out, " c%d", (int)e->column))
            return -1;
        break;
    case PQ_X_IN:
        if (pq_buf_printf(out, " n%d%s", (int)e->n_list, e->list_has_null ? "+null" : ""))
            return -1;
        for (int i = 0; i < e->n_list; i++)
            if (key_value(out, &e->list[i]))
                return -1;
        break;
    case PQ_X_LIKE:
        if (pq_buf_puts(out, " ") || key_bytes(out, e->pattern.ptr, e->pattern.len))
            return -1;
        break;
    default: break;
    }
    for (int i = 0; i < e->n_args; i++)
        if (pq_buf_puts(out, " ") || key_node(out, e->args[i]))
            return -1;
    return pq_buf_puts(out, ")");
}

/* Whether evaluating e can fail (integer or decimal overflow, the only
 * errors of evaluation): then the order of the conjuncts around it decides
 * whether a row reaches it, so that order is part of the key. */
static bool can_fail(const pq_expr *e)
{
    if (e->kind == PQ_X_ARITH || e->kind == PQ_X_NEG)
        return true;
    for (int i = 0; i < e->n_args; i++)
        if (can_fail(e->args[i]))
            return true;
    return false;
}

static int cmp_key_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pq_expr_key(const pq_expr *e, pq_buf *out)
{
    if (!e)
        return pq_buf_puts(out, "TRUE");
    const pq_expr *one = e;
    const pq_expr *const *items = &one;
    int n = 1;
    if (e->kind == PQ_X_AND) {
        items = (const pq_expr *const *)e->args;
        n = e->n_args;
    }
    /* Each conjunct's key, NUL-terminated, in one buffer; then sorted. */
    pq_buf all;
    pq_buf_init(&all);
    size_t *at = malloc((size_t)n * sizeof *at);
    const char **texts = malloc((size_t)n * sizeof *texts);
    int rc = at && texts ? 0 : -1;
    for (int i = 0; i < n && !rc; i++) {
        at[i] = all.len;
        rc = key_node(&all, items[i]) || pq_buf_append(&all, "", 1);
    }
    bool order_matters = false;
    for (int i = 0; i < n && !order_matters; i++) order_matters = can_fail(items[i]);
    if (!rc) {
        for (int i = 0; i < n; i++) texts[i] = all.data + at[i];
        if (!order_matters) qsort(texts, (size_t)n, sizeof *texts, cmp_key_text);
        for (int i = 0; i < n && !rc; i++) rc = (i && pq_buf_puts(out, " AND ")) || pq_buf_puts(out, texts[i]);
    }
    free(at);
    free(texts);
    pq_buf_free(&all);
    return rc ? -1 : 0;
}
