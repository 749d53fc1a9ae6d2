/* Range reasoning for pruning: can any row of a row group / page satisfy the
 * predicate, or does every row?
 *
 * A column's non-null values lie in [min, max] (bounds may be loose, which
 * keeps every argument below valid: nothing here needs a bound to occur), plus
 * NaN when `may_have_nan`; NaN sorts above every number and equals NaN, as in
 * evaluation.  A leaf `col op literal` is:
 *   FALSE when no value of that set satisfies it (or every row is NULL),
 *   TRUE  when every value of the set satisfies it and no row is NULL,
 *   MAYBE otherwise.
 * AND/OR combine with three-valued logic.  Anything without a rule (arithmetic,
 * unknown ranges, LIKE with a leading wildcard) is MAYBE. */
#include "expr_internal.h"

#include <math.h>
#include <string.h>

/* What a range says about the values of one operand, in the comparison's type. */
typedef struct bounds {
    bool has_lo, has_hi;
    pq_value lo, hi;
    bool nan;                  /* NaN values possible */
    bool no_nulls;             /* known: no row is NULL */
    bool all_null;             /* known: every row is NULL (or there are none) */
} bounds;

/* Facts about a leaf predicate P over the non-null values. */
typedef struct facts {
    bool none;                 /* no value satisfies P */
    bool all;                  /* every value satisfies P */
} facts;

static bool value_is_nan(const pq_value *v)
{
    return v->type == PQ_V_DOUBLE && isnan(v->u.d);
}

static bool usable_bound(const pq_value *v, pq_vtype type)
{
    return !v->is_null && v->type == type && !value_is_nan(v);
}

/* x is a column or a cast of one: its bounds converted through the cast. */
static bool get_bounds(const pq_expr *x, const pq_col_range *ranges, bounds *b)
{
    const pq_expr *cast = NULL;
    memset(b, 0, sizeof *b);
    if (x->kind == PQ_X_CAST) {
        cast = x;
        x = x->args[0];
    }
    if (x->kind != PQ_X_COLUMN || x->col.opaque)
        return false;
    const pq_col_range *r = &ranges[x->column];
    if (!r->known)
        return false;
    b->no_nulls = r->has_null_count && r->null_count == 0;
    b->all_null = (r->has_null_count && r->null_count >= r->row_count) || r->row_count == 0 ||
                  x->col.repr == PQ_R_NONE;
    b->nan = x->type == PQ_V_DOUBLE && r->may_have_nan;
    b->has_lo = r->has_min && usable_bound(&r->min, x->type);
    b->has_hi = r->has_max && usable_bound(&r->max, x->type);
    b->lo = r->min;
    b->hi = r->max;
    if (cast) {
        /* Every cast is monotone (non-decreasing), so bounds stay bounds. */
        if (b->has_lo && pq_x_value_cast(&r->min, cast->type, cast->scale, cast->f32, &b->lo) != 0)
            b->has_lo = false;
        if (b->has_hi && pq_x_value_cast(&r->max, cast->type, cast->scale, cast->f32, &b->hi) != 0)
            b->has_hi = false;
        /* DECIMAL -> DOUBLE follows DuckDB's conversion, which can land a
         * few ulps off the nearest double past 2^53 and so below the
         * converted minimum (or above the maximum): widen by 16 ulps. */
        if (cast->type == PQ_V_DOUBLE && x->type == PQ_V_DECIMAL)
            for (int i = 0; i < 16; i++) {
                if (b->has_lo && b->lo.type == PQ_V_DOUBLE) b->lo.u.d = nextafter(b->lo.u.d, -INFINITY);
                if (b->has_hi && b->hi.type == PQ_V_DOUBLE) b->hi.u.d = nextafter(b->hi.u.d, INFINITY);
            }
    }
    return true;
}

static int vcmp(const pq_value *a, const pq_value *b)
{
    return pq_value_cmp(a, b);
}

/* P = `x op L` for one non-null literal L. */
static facts compare_facts(const bounds *b, pq_cmp_op op, const pq_value *L)
{
    facts f = {false, false};
    bool interval_empty, interval_inside;
    if (value_is_nan(L)) {
        /* Non-NaN values all sit below NaN. */
        interval_empty = op == PQ_OP_EQ || op == PQ_OP_GT || op == PQ_OP_GE;
        interval_inside = !interval_empty;
    } else {
        switch (op) {
        case PQ_OP_EQ:
        case PQ_OP_NE: {
            bool disjoint = (b->has_lo && vcmp(L, &b->lo) < 0) || (b->has_hi && vcmp(L, &b->hi) > 0);
            bool single = b->has_lo && b->has_hi && vcmp(&b->lo, L) == 0 && vcmp(&b->hi, L) == 0;
            interval_empty = op == PQ_OP_EQ ? disjoint : single;
            interval_inside = op == PQ_OP_EQ ? single : disjoint;
            break;
        }
        case PQ_OP_LT:
            interval_empty = b->has_lo && vcmp(&b->lo, L) >= 0;
            interval_inside = b->has_hi && vcmp(&b->hi, L) < 0;
            break;
        case PQ_OP_LE:
            interval_empty = b->has_lo && vcmp(&b->lo, L) > 0;
            interval_inside = b->has_hi && vcmp(&b->hi, L) <= 0;
            break;
        case PQ_OP_GT:
            interval_empty = b->has_hi && vcmp(&b->hi, L) <= 0;
            interval_inside = b->has_lo && vcmp(&b->lo, L) > 0;
            break;
        default: /* GE */
            interval_empty = b->has_hi && vcmp(&b->hi, L) < 0;
            interval_inside = b->has_lo && vcmp(&b->lo, L) >= 0;
            break;
        }
    }
    bool nan_satisfies = false;
    if (b->nan) {
        int c = value_is_nan(L) ? 0 : 1; /* sign of NaN vs L */
        switch (op) {
        case PQ_OP_EQ: nan_satisfies = c == 0; break;
        case PQ_OP_NE: nan_satisfies = c != 0; break;
        case PQ_OP_LT: nan_satisfies = false; break;
        case PQ_OP_LE: nan_satisfies = c == 0; break;
        case PQ_OP_GT: nan_satisfies = c > 0; break;
        case PQ_OP_GE: nan_satisfies = true; break;
        }
    }
    f.none = interval_empty && (!b->nan || !nan_satisfies);
    f.all = interval_inside && (!b->nan || nan_satisfies);
    return f;
}

static bool in_interval(const bounds *b, const pq_value *v)
{
    if (value_is_nan(v))
        return false;
    return (!b->has_lo || vcmp(v, &b->lo) >= 0) && (!b->has_hi || vcmp(v, &b->hi) <= 0);
}

/* P = `x IN list` (membership only; the list's NULL is handled by the caller). */
static facts in_facts(const bounds *b, const pq_value *list, int32_t n)
{
    facts f = {false, false};
    bool list_nan = n > 0 && value_is_nan(&list[n - 1]); /* NaN sorts last */
    /* First list value >= lo, by binary search over the sorted list. */
    int32_t lo = 0, hi = n;
    if (b->has_lo) {
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (vcmp(&list[mid], &b->lo) < 0) lo = mid + 1;
            else hi = mid;
        }
    }
    bool hit = lo < n && in_interval(b, &list[lo]);
    f.none = !hit && (!b->nan || !list_nan);
    if (b->has_lo && b->has_hi && vcmp(&b->lo, &b->hi) == 0) {
        bool member = false;
        for (int32_t i = lo; i < n && !member; i++)
            member = vcmp(&list[i], &b->lo) == 0;
        f.all = member && (!b->nan || list_nan);
    }
    return f;
}

static bool starts_with(const pq_value *v, pq_bytes p)
{
    return v->u.s.len >= p.len && (p.len == 0 || memcmp(v->u.s.ptr, p.ptr, p.len) == 0);
}

/* P = `x LIKE pattern`: every match starts with the literal prefix. */
static facts like_facts(const bounds *b, pq_bytes pattern)
{
    facts f = {false, false};
    uint32_t plen = 0;
    while (plen < pattern.len && pattern.ptr[plen] != '%' && pattern.ptr[plen] != '_')
        plen++;
    if (plen == 0)
        return f;
    pq_bytes prefix = {pattern.ptr, plen};
    pq_value pv = {.type = PQ_V_STRING};
    pv.u.s = prefix;
    /* Strings starting with prefix form the interval [prefix, successor). */
    uint8_t succ[64];
    bool has_succ = false;
    uint32_t slen = plen < sizeof succ ? plen : 0;
    if (slen) {
        memcpy(succ, prefix.ptr, slen);
        while (slen > 0 && succ[slen - 1] == 0xFF)
            slen--;
        if (slen > 0) {
            succ[slen - 1]++;
            has_succ = true;
        }
    }
    pq_value sv = {.type = PQ_V_STRING};
    sv.u.s.ptr = succ;
    sv.u.s.len = slen;
    f.none = (b->has_hi && vcmp(&b->hi, &pv) < 0) || (b->has_lo && has_succ && vcmp(&b->lo, &sv) >= 0);
    bool only_prefix = true; /* pattern is prefix followed by '%'s only */
    for (uint32_t i = plen; i < pattern.len; i++)
        if (pattern.ptr[i] != '%')
            only_prefix = false;
    f.all = only_prefix && plen < pattern.len && b->has_lo && b->has_hi && starts_with(&b->lo, prefix) &&
            starts_with(&b->hi, prefix);
    return f;
}

static pq_tri verdict(const bounds *b, facts f)
{
    if (b->all_null || f.none)
        return PQ_TRI_FALSE;
    if (f.all && b->no_nulls)
        return PQ_TRI_TRUE;
    return PQ_TRI_MAYBE;
}

/* `a op b` on two columns: compares their ranges. */
static pq_tri compare_columns(const bounds *a, const bounds *b, pq_cmp_op op)
{
    if (a->all_null || b->all_null)
        return PQ_TRI_FALSE;
    if (a->nan || b->nan || !a->has_lo || !a->has_hi || !b->has_lo || !b->has_hi)
        return PQ_TRI_MAYBE;
    bool none, all;
    switch (op) {
    case PQ_OP_LT:
        none = vcmp(&a->lo, &b->hi) >= 0;
        all = vcmp(&a->hi, &b->lo) < 0;
        break;
    case PQ_OP_LE:
        none = vcmp(&a->lo, &b->hi) > 0;
        all = vcmp(&a->hi, &b->lo) <= 0;
        break;
    case PQ_OP_GT:
        none = vcmp(&a->hi, &b->lo) <= 0;
        all = vcmp(&a->lo, &b->hi) > 0;
        break;
    case PQ_OP_GE:
        none = vcmp(&a->hi, &b->lo) < 0;
        all = vcmp(&a->lo, &b->hi) >= 0;
        break;
    default: {
        bool disjoint = vcmp(&a->hi, &b->lo) < 0 || vcmp(&b->hi, &a->lo) < 0;
        bool same = vcmp(&a->lo, &a->hi) == 0 && vcmp(&b->lo, &b->hi) == 0 && vcmp(&a->lo, &b->lo) == 0;
        none = op == PQ_OP_EQ ? disjoint : same;
        all = op == PQ_OP_EQ ? same : disjoint;
        break;
    }
    }
    if (none)
        return PQ_TRI_FALSE;
    if (all && a->no_nulls && b->no_nulls)
        return PQ_TRI_TRUE;
    return PQ_TRI_MAYBE;
}

static pq_tri prune(const pq_expr *e, const pq_col_range *ranges)
{
    bounds b;
    switch (e->kind) {
    case PQ_X_LITERAL:
        return (!e->value.is_null && e->value.type == PQ_V_BOOL && e->value.u.b) ? PQ_TRI_TRUE
                                                                                  : PQ_TRI_FALSE;
    case PQ_X_AND:
    case PQ_X_OR: {
        bool is_and = e->kind == PQ_X_AND;
        pq_tri decided = is_and ? PQ_TRI_FALSE : PQ_TRI_TRUE;
        bool all_neutral = true;
        for (int i = 0; i < e->n_args; i++) {
            pq_tri t = prune(e->args[i], ranges);
            if (t == decided)
                return decided;
            if (t == PQ_TRI_MAYBE)
                all_neutral = false;
        }
        return all_neutral ? (is_and ? PQ_TRI_TRUE : PQ_TRI_FALSE) : PQ_TRI_MAYBE;
    }
    case PQ_X_IS_NULL: {
        const pq_expr *x = e->args[0];
        while (x->kind == PQ_X_CAST)
            x = x->args[0];
        if (x->kind != PQ_X_COLUMN)
            return PQ_TRI_MAYBE;
        const pq_col_range *r = &ranges[x->column];
        if (!r->known)
            return PQ_TRI_MAYBE;
        bool none_null = (r->has_null_count && r->null_count == 0) || r->row_count == 0;
        bool every_null = (r->has_null_count && r->null_count >= r->row_count) ||
                          x->col.repr == PQ_R_NONE;
        if (every_null)
            return e->negated ? PQ_TRI_FALSE : PQ_TRI_TRUE;
        if (none_null)
            return e->negated ? PQ_TRI_TRUE : PQ_TRI_FALSE;
        return PQ_TRI_MAYBE;
    }
    case PQ_X_CMP: {
        const pq_expr *l = e->args[0], *r = e->args[1];
        if (!get_bounds(l, ranges, &b))
            return PQ_TRI_MAYBE;
        if (r->kind == PQ_X_LITERAL) {
            if (r->value.is_null || r->value.type == PQ_V_NULL)
                return PQ_TRI_FALSE;
            return verdict(&b, compare_facts(&b, (pq_cmp_op)e->op, &r->value));
        }
        bounds rb;
        if (!get_bounds(r, ranges, &rb))
            return b.all_null ? PQ_TRI_FALSE : PQ_TRI_MAYBE;
        return compare_columns(&b, &rb, (pq_cmp_op)e->op);
    }
    case PQ_X_IN: {
        if (!get_bounds(e->args[0], ranges, &b))
            return PQ_TRI_MAYBE;
        facts f = in_facts(&b, e->list, e->n_list);
        if (!e->negated)
            return verdict(&b, f);
        /* NOT IN is TRUE for a row iff its value is outside the list and the
         * list holds no NULL. */
        facts g = {.none = f.all || e->list_has_null, .all = f.none && !e->list_has_null};
        return verdict(&b, g);
    }
    case PQ_X_LIKE: {
        if (e->args[0]->kind != PQ_X_COLUMN || !get_bounds(e->args[0], ranges, &b))
            return PQ_TRI_MAYBE;
        facts f = like_facts(&b, e->pattern);
        if (e->negated) {
            facts g = {.none = f.all, .all = f.none};
            f = g;
        }
        return verdict(&b, f);
    }
    default:
        return PQ_TRI_MAYBE;
    }
}

pq_tri pq_expr_prune(const pq_expr *e, const pq_col_range *ranges)
{
    if (!e)
        return PQ_TRI_TRUE;
    return prune(e, ranges);
}
