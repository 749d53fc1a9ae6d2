/* Vectorized evaluation of bound expressions over column batches.
 *
 * Every node is evaluated for a selection of rows (ascending row numbers) into
 * row-indexed scratch vectors: a value array plus a NULL mask, or for
 * conditions a byte per row holding FALSE (0), NULL (1) or TRUE (2), so that
 * SQL's AND is min and OR is max.  AND and OR narrow the selection as they go:
 * a row already decided is not evaluated further (no overflow error from a row
 * an earlier conjunct rejected, as in DuckDB).
 *
 * Fast paths (kernels, built once by pq_x_prepare): `column op literal`,
 * `column [NOT] IN (literals)` and `column LIKE pattern` read the batch's
 * stored values directly.  The literal is brought to the stored representation
 * (scale, time unit, int32 range...) with the comparison adjusted, e.g.
 * `ts_millis > '...00.0005'` becomes `stored > 0` on milliseconds and
 * `int32_col < 3000000000` TRUE for every non-null row. */
#include "expr_internal.h"

#include <math.h>
#include <string.h>

#include "numfmt.h"

enum { TRI_F = 0, TRI_N = 1, TRI_T = 2 };

#define NS_PER_DAY ((int64_t)86400 * 1000000000)
#define INT128_MAX_V ((__int128)(~(unsigned __int128)0 >> 1))
#define INT128_MIN_V (-INT128_MAX_V - 1)

bool pq_x_disable_kernels = false;

/* Result of `a op b` from the sign of the comparison (-1, 0, 1). */
static const uint8_t cmp_tri[6][3] = {
    [PQ_OP_EQ] = {TRI_F, TRI_T, TRI_F}, [PQ_OP_NE] = {TRI_T, TRI_F, TRI_T},
    [PQ_OP_LT] = {TRI_T, TRI_F, TRI_F}, [PQ_OP_LE] = {TRI_T, TRI_T, TRI_F},
    [PQ_OP_GT] = {TRI_F, TRI_F, TRI_T}, [PQ_OP_GE] = {TRI_F, TRI_T, TRI_T},
};

/* ------------------------------------------------------------------ kernels */

typedef enum kmode {
    KM_I32, KM_U32, KM_I64, KM_U64, /* stored integers */
    KM_I128,                        /* INT96 as ns, byte decimals as unscaled */
    KM_DOUBLE,                      /* stored numbers read as double */
    KM_BYTES, KM_BOOL,
} kmode;

typedef enum like_shape { LS_GENERAL, LS_PREFIX, LS_SUFFIX, LS_CONTAINS, LS_ALL } like_shape;

typedef union klit {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    __int128 x;
    double d;
    pq_bytes s;
    uint8_t b;
} klit;

struct pq_kernel {
    int32_t column;
    pq_repr repr;              /* of the column */
    kmode mode;
    pq_cmp_op op;
    int constant;              /* CMP: -1, or FALSE 0 / TRUE 1 for every non-null row */
    int32_t scale;             /* KM_DOUBLE from a decimal column */
    bool from_int, from_decimal, f32; /* KM_DOUBLE: the column is converted */
    klit lit;
    /* IN */
    bool in, negated, has_null;
    int32_t n_set;
    const void *set;           /* sorted array of the mode's element type */
    /* LIKE */
    bool like;
    like_shape shape;
    pq_bytes needle;           /* literal part of prefix/suffix/contains patterns */
};

/* The literal as an integer L on a scale where stored value p means p * grid. */
static bool int_grid(const pq_colinfo *c, const pq_value *lit, __int128 *L, __int128 *grid)
{
    *grid = 1;
    switch (lit->type) {
    case PQ_V_INT:
        if (c->type != PQ_V_INT) return false;
        *L = lit->u.i;
        return true;
    case PQ_V_DATE:
        if (c->type != PQ_V_DATE) return false;
        *L = lit->u.date;
        return true;
    case PQ_V_TIME:
        if (c->type != PQ_V_TIME) return false;
        *L = lit->u.time_ns;
        *grid = c->unit;
        return true;
    case PQ_V_TIMESTAMP:
        *L = lit->u.ts_ns;
        if (c->type == PQ_V_DATE) *grid = NS_PER_DAY;
        else if (c->type == PQ_V_TIMESTAMP) *grid = c->repr == PQ_R_INT96 ? 1 : c->unit;
        else return false;
        return true;
    case PQ_V_DECIMAL: {
        int32_t cs;
        if (c->type == PQ_V_INT) cs = 0;
        else if (c->type == PQ_V_DECIMAL) cs = c->scale;
        else return false;
        int32_t s = lit->u.dec.scale;
        __int128 u = lit->u.dec.unscaled;
        if (s >= cs) {
            *L = u;
            *grid = pq_pow10_i128[s - cs];
        } else if (!pq_x_dec_rescale(u, s, cs, L)) {
            *L = u > 0 ? INT128_MAX_V : INT128_MIN_V; /* beyond every stored value */
        }
        return true;
    }
    default: return false;
    }
}

/* Clamps q to the stored range [lo, hi]: -1 in range, else the constant. */
static int clamp_const(pq_cmp_op op, __int128 q, __int128 lo, __int128 hi)
{
    if (q > hi)
        return op == PQ_OP_LT || op == PQ_OP_LE || op == PQ_OP_NE;
    if (q < lo)
        return op == PQ_OP_GT || op == PQ_OP_GE || op == PQ_OP_NE;
    return -1;
}

static void stored_range(kmode m, __int128 *lo, __int128 *hi)
{
    switch (m) {
    case KM_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case KM_U32: *lo = 0; *hi = UINT32_MAX; break;
    case KM_I64: *lo = INT64_MIN; *hi = INT64_MAX; break;
    case KM_U64: *lo = 0; *hi = (__int128)UINT64_MAX; break;
    default: *lo = INT128_MIN_V; *hi = INT128_MAX_V; break;
    }
}

static void store_int(kmode m, __int128 q, klit *out)
{
    switch (m) {
    case KM_I32: out->i32 = (int32_t)q; break;
    case KM_U32: out->u32 = (uint32_t)q; break;
    case KM_I64: out->i64 = (int64_t)q; break;
    case KM_U64: out->u64 = (uint64_t)q; break;
    default: out->x = q; break;
    }
}

static size_t elem_size(kmode m)
{
    switch (m) {
    case KM_I32: case KM_U32: return 4;
    case KM_I64: case KM_U64: case KM_DOUBLE: return 8;
    case KM_I128: return 16;
    case KM_BYTES: return sizeof(pq_bytes);
    case KM_BOOL: return 1;
    }
    return 16;
}

static void put_elem(kmode m, void *set, int32_t i, const klit *v)
{
    switch (m) {
    case KM_I32: ((int32_t *)set)[i] = v->i32; break;
    case KM_U32: ((uint32_t *)set)[i] = v->u32; break;
    case KM_I64: ((int64_t *)set)[i] = v->i64; break;
    case KM_U64: ((uint64_t *)set)[i] = v->u64; break;
    case KM_I128: ((__int128 *)set)[i] = v->x; break;
    case KM_DOUBLE: ((double *)set)[i] = v->d; break;
    case KM_BYTES: ((pq_bytes *)set)[i] = v->s; break;
    case KM_BOOL: ((uint8_t *)set)[i] = v->b; break;
    }
}

/* A literal of the comparison's type in the kernel's terms: the adjusted op
 * and stored literal, or a constant (0/1) for every non-null row. */
static int kernel_literal(const pq_kernel *k, const pq_colinfo *c, pq_cmp_op op,
                          const pq_value *lit, pq_cmp_op *op_out, klit *out)
{
    *op_out = op;
    switch (k->mode) {
    case KM_DOUBLE:
        if (lit->type != PQ_V_DOUBLE) return -2;
        out->d = lit->u.d;
        return -1;
    case KM_BYTES:
        if (lit->type != PQ_V_STRING) return -2;
        out->s = lit->u.s;
        return -1;
    case KM_BOOL:
        if (lit->type != PQ_V_BOOL) return -2;
        out->b = lit->u.b;
        return -1;
    default: {
        __int128 L, grid, q, lo, hi;
        if (!int_grid(c, lit, &L, &grid)) return -2;
        int constant;
        pq_x_grid_literal(op, L, grid, op_out, &q, &constant);
        if (constant >= 0) return constant;
        stored_range(k->mode, &lo, &hi);
        constant = clamp_const(*op_out, q, lo, hi);
        if (constant >= 0) return constant;
        store_int(k->mode, q, out);
        return -1;
    }
    }
}

static void like_shape_of(pq_bytes p, like_shape *shape, pq_bytes *needle)
{
    uint32_t lead = 0, trail = 0, n = p.len;
    while (lead < n && p.ptr[lead] == '%') lead++;
    if (lead == n) {
        *shape = LS_ALL;
        return;
    }
    while (trail < n - lead && p.ptr[n - 1 - trail] == '%') trail++;
    for (uint32_t i = lead; i < n - trail; i++)
        if (p.ptr[i] == '%' || p.ptr[i] == '_') {
            *shape = LS_GENERAL;
            return;
        }
    needle->ptr = p.ptr + lead;
    needle->len = n - lead - trail;
    if (lead == 0 && trail > 0) *shape = LS_PREFIX;
    else if (lead > 0 && trail == 0) *shape = LS_SUFFIX;
    else if (lead > 0 && trail > 0) *shape = LS_CONTAINS;
    else *shape = LS_GENERAL; /* no wildcard: the binder made it an equality */
}

static int build_kernel(pq_expr *e, pq_arena *arena)
{
    const pq_expr *x = e->args[0];
    const pq_expr *cast = NULL;
    if (x->kind == PQ_X_CAST) {
        cast = x;
        x = x->args[0];
    }
    if (x->kind != PQ_X_COLUMN || x->col.opaque || x->col.repr == PQ_R_NONE)
        return PQ_OK;
    const pq_colinfo *c = &x->col;
    pq_kernel k = {.column = x->column, .repr = c->repr, .constant = -1, .op = (pq_cmp_op)e->op};
    if (cast && cast->type == PQ_V_DOUBLE) {
        k.mode = KM_DOUBLE;
        k.from_int = c->type == PQ_V_INT;
        k.from_decimal = c->type == PQ_V_DECIMAL;
        k.scale = c->scale;
        k.f32 = cast->f32;
        if (!k.from_int && !k.from_decimal && c->type != PQ_V_DOUBLE)
            return PQ_OK;
    } else {
        switch (c->repr) {
        case PQ_R_I32: k.mode = KM_I32; break;
        case PQ_R_U32: k.mode = KM_U32; break;
        case PQ_R_I64: k.mode = KM_I64; break;
        case PQ_R_U64: k.mode = KM_U64; break;
        case PQ_R_INT96: case PQ_R_DEC_BYTES: k.mode = KM_I128; break;
        case PQ_R_FLOAT: case PQ_R_DOUBLE: case PQ_R_HALF: k.mode = KM_DOUBLE; break;
        case PQ_R_BYTES: k.mode = KM_BYTES; break;
        case PQ_R_BOOL: k.mode = KM_BOOL; break;
        default: return PQ_OK;
        }
    }
    if (e->kind == PQ_X_CMP) {
        const pq_expr *lit = e->args[1];
        if (lit->kind != PQ_X_LITERAL || lit->value.is_null || lit->value.type == PQ_V_NULL)
            return PQ_OK;
        pq_cmp_op op;
        int constant = kernel_literal(&k, c, k.op, &lit->value, &op, &k.lit);
        if (constant == -2)
            return PQ_OK;
        k.op = op;
        k.constant = constant;
    } else if (e->kind == PQ_X_IN) {
        k.in = true;
        k.negated = e->negated;
        k.has_null = e->list_has_null;
        void *set = pq_arena_alloc(arena, elem_size(k.mode) * (size_t)(e->n_list ? e->n_list : 1));
        if (!set)
            return PQ_ERR;
        for (int32_t i = 0; i < e->n_list; i++) {
            pq_cmp_op op;
            klit v;
            int constant = kernel_literal(&k, c, PQ_OP_EQ, &e->list[i], &op, &v);
            if (constant == -2)
                return PQ_OK;
            if (constant < 0) /* values that no stored value equals are dropped */
                put_elem(k.mode, set, k.n_set++, &v);
        }
        k.set = set; /* still sorted: the mapping to stored values is monotone */
    } else if (e->kind == PQ_X_LIKE) {
        if (k.mode != KM_BYTES || cast)
            return PQ_OK;
        k.like = true;
        k.negated = e->negated;
        like_shape_of(e->pattern, &k.shape, &k.needle);
    } else {
        return PQ_OK;
    }
    pq_kernel *kp = pq_arena_dup(arena, &k, sizeof k);
    if (!kp)
        return PQ_ERR;
    e->kernel = kp;
    return PQ_OK;
}

int pq_x_prepare(pq_expr *e, pq_arena *arena, pq_error *err)
{
    for (int i = 0; i < e->n_args; i++)
        PQ_TRY(pq_x_prepare(e->args[i], arena, err));
    if (e->kernel || (e->kind != PQ_X_CMP && e->kind != PQ_X_IN && e->kind != PQ_X_LIKE))
        return PQ_OK;
    if (build_kernel(e, arena) != PQ_OK)
        return PQ_NOMEM(err);
    return PQ_OK;
}

int pq_x_kernel_constant(const pq_expr *e)
{
    const pq_kernel *k = e->kernel;
    if (!k)
        return -1;
    if (k->in)
        return k->n_set == 0 && !k->has_null ? (k->negated ? 1 : 0) : -1;
    if (k->like)
        return -1;
    return k->constant;
}

/* ------------------------------------------------------------------ evaluation context */

typedef struct vec {
    int32_t m;                 /* index mask: -1, or 0 for a constant (one element) */
    uint8_t *null;             /* 1: NULL */
    union {
        int64_t *i;            /* INT, DATE (days), TIME (ns) */
        double *d;
        __int128 *x;           /* DECIMAL (unscaled), TIMESTAMP (ns) */
        pq_bytes *s;
        uint8_t *t;            /* BOOL as TRI_F / TRI_T */
    } v;
} vec;

typedef struct ctx {
    const pq_col_batch *const *batches;
    int32_t n_rows;
    pq_arena *arena;
    pq_error *err;
    int32_t n_cols;
    const int32_t **rowmap;    /* per column: dense value index per row, -1 for NULL */
    uint8_t *checked;          /* per column: batch validated */
    const int32_t *identity;
} ctx;

static void *scratch(ctx *c, size_t elem, int32_t count)
{
    void *p = pq_arena_alloc(c->arena, elem * (size_t)(count > 0 ? count : 1));
    if (!p)
        pq_fail(c->err, PQ_E_NOMEM, "out of memory for the filter's scratch vectors");
    return p;
}

/* The batch of a column, checked once per call: enough rows, and values
 * for every non-null row (so no loop below reads past them). */
static const pq_col_batch *column_batch(ctx *c, const pq_expr *col)
{
    int32_t i = col->column;
    const pq_col_batch *b = c->batches && i < c->n_cols ? c->batches[i] : NULL;
    if (!b) {
        pq_fail(c->err, PQ_E_USAGE, "no batch for column '%s'", col->name);
        return NULL;
    }
    if (c->checked[i])
        return b;
    if (b->n_rows < c->n_rows) {
        pq_fail(c->err, PQ_E_CORRUPT, "column '%s': batch of %d rows, %d expected", col->name,
                b->n_rows, c->n_rows);
        return NULL;
    }
    int32_t present = c->n_rows;
    if (b->def) {
        present = 0;
        uint16_t full = (uint16_t)col->col.def_level;
        for (int32_t r = 0; r < c->n_rows; r++)
            present += b->def[r] == full;
    }
    /* Opaque columns (nested ones) are only tested for NULL: no values. */
    if (present > b->n_values && !col->col.opaque) {
        pq_fail(c->err, PQ_E_CORRUPT, "column '%s': %d non-null rows but %d values", col->name,
                present, b->n_values);
        return NULL;
    }
    c->checked[i] = 1;
    return b;
}

/* Row -> dense value index of a column (-1: NULL), built once per call and
 * only for selections that skip rows. */
static const int32_t *rowmap(ctx *c, const pq_expr *col)
{
    int32_t i = col->column;
    const pq_col_batch *b = column_batch(c, col);
    if (!b)
        return NULL;
    if (c->rowmap[i])
        return c->rowmap[i];
    if (!b->def) {
        c->rowmap[i] = c->identity;
        return c->identity;
    }
    int32_t *m = scratch(c, sizeof *m, c->n_rows);
    if (!m)
        return NULL;
    int32_t k = 0;
    uint16_t full = (uint16_t)col->col.def_level;
    for (int32_t r = 0; r < c->n_rows; r++) {
        bool present = b->def[r] == full;
        m[r] = present ? k : -1;
        k += present;
    }
    c->rowmap[i] = m;
    return m;
}

static int overflow(ctx *c, const pq_expr *e, const char *what)
{
    pq_buf text;
    pq_buf_init(&text);
    pq_expr_text(e, &text);
    pq_fail(c->err, PQ_E_USAGE, "%s overflow in %.*s", what, (int)(text.len > 300 ? 300 : text.len),
            text.data ? text.data : "");
    pq_buf_free(&text);
    return PQ_ERR;
}

static int cmp_bytes(pq_bytes a, pq_bytes b)
{
    uint32_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c != 0)
        return c < 0 ? -1 : 1;
    return (a.len > b.len) - (a.len < b.len);
}

static double half_at(const pq_bytes *v, int32_t k)
{
    if (v[k].len < 2)
        return NAN;
    return pq_half_to_float((uint16_t)(v[k].ptr[0] | v[k].ptr[1] << 8));
}

static __int128 be_at(const pq_bytes *v, int32_t k)
{
    bool fits;
    return pq_x_be_int(v[k].ptr, v[k].len, &fits);
}

/* ------------------------------------------------------------------ kernel evaluation */

/* The rows of a selection with k, the index of the row's value.  A full
 * selection walks the rows in order (k counts the non-null ones, or equals r
 * for a required column: loops the compiler can vectorize); a partial one
 * goes through the row map.  Expects n, sel, out, full, defs, level, map. */
#define ROWS_LOOP(...)                                                                    \
    do {                                                                                  \
        if (full && !defs) {                                                              \
            for (int32_t r = 0; r < n; r++) {                                             \
                int32_t k = r;                                                            \
                (void)k;                                                                  \
                __VA_ARGS__                                                               \
            }                                                                             \
        } else if (full) {                                                                \
            int32_t k = 0;                                                                \
            for (int32_t r = 0; r < n; r++) {                                             \
                if (defs[r] != level) {                                                   \
                    out[r] = TRI_N;                                                       \
                    continue;                                                             \
                }                                                                         \
                __VA_ARGS__                                                               \
                k++;                                                                      \
            }                                                                             \
        } else {                                                                          \
            for (int32_t i_ = 0; i_ < n; i_++) {                                          \
                int32_t r = sel[i_], k = map[r];                                          \
                if (k < 0) {                                                              \
                    out[r] = TRI_N;                                                       \
                    continue;                                                             \
                }                                                                         \
                __VA_ARGS__                                                               \
            }                                                                             \
        }                                                                                 \
    } while (0)

#define SIGN(a, b) (((a) > (b)) - ((a) < (b)))

/* One loop per operator: the condition becomes TRI_T (2) or TRI_F (0)
 * without a branch. */
#define COND_LOOP(T, COND)                                                                \
    do {                                                                                  \
        const T *v_ = values;                                                             \
        ROWS_LOOP(T x = v_[k]; out[r] = (uint8_t)((COND) << 1););                         \
    } while (0)

#define CMP_LOOPS(T, LIT)                                                                 \
    do {                                                                                  \
        const T lit = (LIT);                                                              \
        switch (kn->op) {                                                                 \
        case PQ_OP_EQ: COND_LOOP(T, x == lit); break;                                     \
        case PQ_OP_NE: COND_LOOP(T, x != lit); break;                                     \
        case PQ_OP_LT: COND_LOOP(T, x < lit); break;                                      \
        case PQ_OP_LE: COND_LOOP(T, x <= lit); break;                                     \
        case PQ_OP_GT: COND_LOOP(T, x > lit); break;                                      \
        case PQ_OP_GE: COND_LOOP(T, x >= lit); break;                                     \
        }                                                                                 \
    } while (0)

/* Floating values against a non-NaN literal: NaN is greater than it. */
#define DOUBLE_LOOPS(T)                                                                   \
    do {                                                                                  \
        switch (kn->op) {                                                                 \
        case PQ_OP_EQ: COND_LOOP(T, x == lit); break;                                     \
        case PQ_OP_NE: COND_LOOP(T, !(x == lit)); break;                                  \
        case PQ_OP_LT: COND_LOOP(T, x < lit); break;                                      \
        case PQ_OP_LE: COND_LOOP(T, x <= lit); break;                                     \
        case PQ_OP_GT: COND_LOOP(T, !(x <= lit)); break;                                  \
        case PQ_OP_GE: COND_LOOP(T, !(x < lit)); break;                                   \
        }                                                                                 \
    } while (0)

/* The stored value k of a KM_DOUBLE column, converted as the CAST would. */
static inline double double_at(const pq_kernel *kn, const void *values, int32_t k)
{
    double d;
    switch (kn->repr) {
    case PQ_R_FLOAT: return ((const float *)values)[k];
    case PQ_R_DOUBLE: return ((const double *)values)[k];
    case PQ_R_HALF: return half_at(values, k);
    case PQ_R_I32:
        d = kn->from_int ? (kn->f32 ? (double)(float)((const int32_t *)values)[k]
                                    : (double)((const int32_t *)values)[k])
                         : pq_x_dec_to_double(((const int32_t *)values)[k], kn->scale);
        break;
    case PQ_R_U32: d = kn->f32 ? (double)(float)((const uint32_t *)values)[k] : ((const uint32_t *)values)[k]; break;
    case PQ_R_I64:
        d = kn->from_int ? (kn->f32 ? (double)(float)((const int64_t *)values)[k]
                                    : (double)((const int64_t *)values)[k])
                         : pq_x_dec_to_double(((const int64_t *)values)[k], kn->scale);
        break;
    case PQ_R_U64: d = pq_x_dec_to_double(((const uint64_t *)values)[k], 0); break;
    case PQ_R_DEC_BYTES: d = pq_x_dec_to_double(be_at(values, k), kn->scale); break;
    default: return NAN;
    }
    return kn->f32 && kn->from_decimal ? pq_x_round_f32(d) : d;
}

static inline __int128 i128_at(const pq_kernel *kn, const void *values, int32_t k)
{
    if (kn->repr == PQ_R_INT96)
        return pq_x_int96_ns(((const pq_int96 *)values)[k].b);
    return be_at(values, k);
}

#define DEFINE_SEARCH(NAME, T, SIGNF)                                                     \
    static inline bool NAME(const T *a, int32_t n, T x)                                   \
    {                                                                                     \
        if (n <= 8) { /* short lists: a scan without unpredictable branches */            \
            bool found = false;                                                           \
            for (int32_t i = 0; i < n; i++)                                               \
                found |= SIGNF(a[i], x) == 0;                                             \
            return found;                                                                 \
        }                                                                                 \
        int32_t lo = 0, hi = n;                                                           \
        while (lo < hi) {                                                                 \
            int32_t mid = lo + (hi - lo) / 2;                                             \
            if (SIGNF(a[mid], x) < 0) lo = mid + 1;                                       \
            else hi = mid;                                                                \
        }                                                                                 \
        return lo < n && SIGNF(a[lo], x) == 0;                                            \
    }
#define SIGN_FN(a, b) SIGN(a, b)
DEFINE_SEARCH(find_i32, int32_t, SIGN_FN)
DEFINE_SEARCH(find_u32, uint32_t, SIGN_FN)
DEFINE_SEARCH(find_i64, int64_t, SIGN_FN)
DEFINE_SEARCH(find_u64, uint64_t, SIGN_FN)
DEFINE_SEARCH(find_i128, __int128, SIGN_FN)
DEFINE_SEARCH(find_double, double, pq_x_double_cmp)
DEFINE_SEARCH(find_bytes, pq_bytes, cmp_bytes)

static bool find_bool(const uint8_t *a, int32_t n, uint8_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (a[i] == x)
            return true;
    return false;
}

static size_t next_char(const uint8_t *s, size_t n, size_t i)
{
    i++;
    while (i < n && (s[i] & 0xC0) == 0x80)
        i++;
    return i;
}

/* SQL LIKE without escape: % any run, _ one UTF-8 character.  Greedy with
 * backtracking to the last %, linear in practice, O(n*m) at worst. */
static bool like_match(const uint8_t *s, size_t n, const uint8_t *p, size_t m)
{
    size_t si = 0, pi = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < n) {
        if (pi < m && p[pi] == '%') {
            star_p = ++pi;
            star_s = si;
        } else if (pi < m && p[pi] == '_') {
            si = next_char(s, n, si);
            pi++;
        } else if (pi < m && p[pi] == s[si]) {
            si++;
            pi++;
        } else if (star_p != SIZE_MAX) {
            star_s = next_char(s, n, star_s);
            si = star_s;
            pi = star_p;
        } else {
            return false;
        }
    }
    while (pi < m && p[pi] == '%')
        pi++;
    return pi == m;
}

static bool like_fast(like_shape shape, pq_bytes needle, pq_bytes pattern, pq_bytes s)
{
    switch (shape) {
    case LS_ALL: return true;
    case LS_PREFIX: return s.len >= needle.len && memcmp(s.ptr, needle.ptr, needle.len) == 0;
    case LS_SUFFIX:
        return s.len >= needle.len && memcmp(s.ptr + s.len - needle.len, needle.ptr, needle.len) == 0;
    case LS_CONTAINS: return s.len >= needle.len && memmem(s.ptr, s.len, needle.ptr, needle.len) != NULL;
    case LS_GENERAL: break;
    }
    return like_match(s.ptr, s.len, pattern.ptr, pattern.len);
}

/* Equal bytes; short strings (codes, flags, countries) inline, not a call. */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, uint32_t len)
{
    if (len > 16)
        return memcmp(a, b, len) == 0;
    uint8_t diff = 0;
    for (uint32_t i = 0; i < len; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

static int run_kernel(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, uint8_t *out)
{
    const pq_kernel *kn = e->kernel;
    const pq_expr *col = e->args[0]->kind == PQ_X_CAST ? e->args[0]->args[0] : e->args[0];
    const pq_col_batch *b = column_batch(c, col);
    if (!b)
        return PQ_ERR;
    bool full = n == c->n_rows; /* sel is every row, in order */
    const uint16_t *defs = b->def;
    uint16_t level = (uint16_t)col->col.def_level;
    const int32_t *map = full ? NULL : rowmap(c, col);
    if (!full && !map)
        return PQ_ERR;
    const void *values = b->values;
    if (kn->like) {
        const pq_bytes *v = values;
        uint8_t yes = kn->negated ? TRI_F : TRI_T, no = kn->negated ? TRI_T : TRI_F;
        ROWS_LOOP(out[r] = like_fast(kn->shape, kn->needle, e->pattern, v[k]) ? yes : no;);
        return PQ_OK;
    }
    if (kn->in) {
        uint8_t yes = kn->negated ? TRI_F : TRI_T;
        uint8_t no = kn->has_null ? TRI_N : kn->negated ? TRI_T : TRI_F;
        int32_t m = kn->n_set;
        switch (kn->mode) {
        case KM_I32: ROWS_LOOP(out[r] = find_i32(kn->set, m, ((const int32_t *)values)[k]) ? yes : no;); break;
        case KM_U32: ROWS_LOOP(out[r] = find_u32(kn->set, m, ((const uint32_t *)values)[k]) ? yes : no;); break;
        case KM_I64: ROWS_LOOP(out[r] = find_i64(kn->set, m, ((const int64_t *)values)[k]) ? yes : no;); break;
        case KM_U64: ROWS_LOOP(out[r] = find_u64(kn->set, m, ((const uint64_t *)values)[k]) ? yes : no;); break;
        case KM_I128: ROWS_LOOP(out[r] = find_i128(kn->set, m, i128_at(kn, values, k)) ? yes : no;); break;
        case KM_DOUBLE: ROWS_LOOP(out[r] = find_double(kn->set, m, double_at(kn, values, k)) ? yes : no;); break;
        case KM_BYTES: ROWS_LOOP(out[r] = find_bytes(kn->set, m, ((const pq_bytes *)values)[k]) ? yes : no;); break;
        case KM_BOOL: ROWS_LOOP(out[r] = find_bool(kn->set, m, ((const uint8_t *)values)[k] != 0) ? yes : no;); break;
        }
        return PQ_OK;
    }
    if (kn->constant >= 0) {
        uint8_t v = kn->constant ? TRI_T : TRI_F;
        ROWS_LOOP(out[r] = v;);
        return PQ_OK;
    }
    const uint8_t *row = cmp_tri[kn->op];
    switch (kn->mode) {
    case KM_I32: CMP_LOOPS(int32_t, kn->lit.i32); break;
    case KM_U32: CMP_LOOPS(uint32_t, kn->lit.u32); break;
    case KM_I64: CMP_LOOPS(int64_t, kn->lit.i64); break;
    case KM_U64: CMP_LOOPS(uint64_t, kn->lit.u64); break;
    case KM_I128: {
        __int128 lit = kn->lit.x;
        ROWS_LOOP(__int128 x = i128_at(kn, values, k); out[r] = row[SIGN(x, lit) + 1];);
        break;
    }
    case KM_DOUBLE: {
        double lit = kn->lit.d;
        if ((kn->repr == PQ_R_DOUBLE || kn->repr == PQ_R_FLOAT) && !isnan(lit)) {
            /* IEEE comparisons plus NaN above every number */
            if (kn->repr == PQ_R_DOUBLE)
                DOUBLE_LOOPS(double);
            else
                DOUBLE_LOOPS(float);
        } else {
            ROWS_LOOP(out[r] = row[pq_x_double_cmp(double_at(kn, values, k), lit) + 1];);
        }
        break;
    }
    case KM_BYTES: {
        const pq_bytes *v = values;
        pq_bytes lit = kn->lit.s;
        if (kn->op == PQ_OP_EQ || kn->op == PQ_OP_NE) {
            uint8_t yes = kn->op == PQ_OP_EQ ? TRI_T : TRI_F, no = TRI_T - yes;
            ROWS_LOOP(out[r] = v[k].len == lit.len && same_bytes(v[k].ptr, lit.ptr, lit.len) ? yes : no;);
        } else {
            ROWS_LOOP(out[r] = row[cmp_bytes(v[k], lit) + 1];);
        }
        break;
    }
    case KM_BOOL: {
        const uint8_t *v = values;
        int lit = kn->lit.b;
        ROWS_LOOP(int x = v[k] != 0; out[r] = row[SIGN(x, lit) + 1];);
        break;
    }
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ general path */

static int eval_pred(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, uint8_t *out);

static int alloc_vec(ctx *c, pq_vtype t, vec *out)
{
    size_t elem;
    switch (t) {
    case PQ_V_BOOL: elem = 1; break;
    case PQ_V_DOUBLE: elem = sizeof(double); break;
    case PQ_V_DECIMAL: case PQ_V_TIMESTAMP: elem = sizeof(__int128); break;
    case PQ_V_STRING: elem = sizeof(pq_bytes); break;
    default: elem = sizeof(int64_t); break;
    }
    out->m = -1;
    out->null = scratch(c, 1, c->n_rows);
    out->v.x = scratch(c, elem, c->n_rows);
    return out->null && out->v.x ? PQ_OK : PQ_ERR;
}

/* x * unit for TIME values, saturated (only corrupt values get near it). */
static inline int64_t scale_time(int64_t x, int64_t unit)
{
    int64_t y;
    if (__builtin_mul_overflow(x, unit, &y))
        return x < 0 ? INT64_MIN : INT64_MAX;
    return y;
}

/* Decodes the selected rows of a column into its value domain. */
#define LOAD(T, ...)                                                                      \
    do {                                                                                  \
        const T *v = values;                                                              \
        for (int32_t i = 0; i < n; i++) {                                                 \
            int32_t r = sel[i], k = map[r];                                               \
            out->null[r] = k < 0;                                                         \
            if (k >= 0) {                                                                 \
                __VA_ARGS__;                                                              \
            }                                                                             \
        }                                                                                 \
    } while (0)

static int load_column(ctx *c, const pq_expr *col, const int32_t *sel, int32_t n, vec *out)
{
    const pq_colinfo *ci = &col->col;
    PQ_TRY(alloc_vec(c, col->type, out));
    if (ci->repr == PQ_R_NONE) {
        for (int32_t i = 0; i < n; i++)
            out->null[sel[i]] = 1;
        return PQ_OK;
    }
    const int32_t *map = rowmap(c, col);
    if (!map)
        return PQ_ERR;
    const void *values = c->batches[col->column]->values;
    int64_t unit = ci->unit;
    bool wide = ci->type == PQ_V_DECIMAL || ci->type == PQ_V_TIMESTAMP; /* into v.x */
    switch (ci->repr) {
    case PQ_R_NONE: break;
    case PQ_R_BOOL: LOAD(uint8_t, out->v.t[r] = v[k] ? TRI_T : TRI_F); break;
    case PQ_R_FLOAT: LOAD(float, out->v.d[r] = v[k]); break;
    case PQ_R_DOUBLE: LOAD(double, out->v.d[r] = v[k]); break;
    case PQ_R_HALF: LOAD(pq_bytes, out->v.d[r] = half_at(v, k)); break;
    case PQ_R_INT96: LOAD(pq_int96, out->v.x[r] = pq_x_int96_ns(v[k].b)); break;
    case PQ_R_BYTES: LOAD(pq_bytes, out->v.s[r] = v[k]); break;
    case PQ_R_DEC_BYTES: LOAD(pq_bytes, out->v.x[r] = be_at(v, k)); break;
    case PQ_R_U64: LOAD(uint64_t, out->v.x[r] = v[k]); break;
    case PQ_R_U32: LOAD(uint32_t, out->v.i[r] = v[k]); break;
    case PQ_R_I32:
        if (wide) LOAD(int32_t, out->v.x[r] = v[k]);
        else if (ci->type == PQ_V_TIME) LOAD(int32_t, out->v.i[r] = scale_time(v[k], unit));
        else LOAD(int32_t, out->v.i[r] = v[k]);
        break;
    case PQ_R_I64:
        if (ci->type == PQ_V_TIMESTAMP) LOAD(int64_t, out->v.x[r] = (__int128)v[k] * unit);
        else if (wide) LOAD(int64_t, out->v.x[r] = v[k]);
        else if (ci->type == PQ_V_TIME) LOAD(int64_t, out->v.i[r] = scale_time(v[k], unit));
        else LOAD(int64_t, out->v.i[r] = v[k]);
        break;
    }
    return PQ_OK;
}

/* A literal as a one-element vector read through index mask 0. */
static int literal_vec(ctx *c, const pq_expr *e, vec *out)
{
    int32_t rows = c->n_rows;
    c->n_rows = 1;
    int rc = alloc_vec(c, e->type, out);
    c->n_rows = rows;
    if (rc != PQ_OK)
        return PQ_ERR;
    out->m = 0;
    const pq_value *v = &e->value;
    out->null[0] = v->is_null || v->type == PQ_V_NULL;
    if (out->null[0])
        return PQ_OK;
    switch (e->type) {
    case PQ_V_BOOL: out->v.t[0] = v->u.b ? TRI_T : TRI_F; break;
    case PQ_V_INT: out->v.i[0] = v->u.i; break;
    case PQ_V_DATE: out->v.i[0] = v->u.date; break;
    case PQ_V_TIME: out->v.i[0] = v->u.time_ns; break;
    case PQ_V_DOUBLE: out->v.d[0] = v->u.d; break;
    case PQ_V_DECIMAL: out->v.x[0] = v->u.dec.unscaled; break;
    case PQ_V_TIMESTAMP: out->v.x[0] = v->u.ts_ns; break;
    case PQ_V_STRING: out->v.s[0] = v->u.s; break;
    case PQ_V_NULL: out->null[0] = 1; break;
    }
    return PQ_OK;
}

static int eval_value(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, vec *out);

static int eval_cast(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, vec *out)
{
    vec a;
    const pq_expr *x = e->args[0];
    PQ_TRY(eval_value(c, x, sel, n, &a));
    PQ_TRY(alloc_vec(c, e->type, out));
    for (int32_t i = 0; i < n; i++) {
        int32_t r = sel[i], ra = r & a.m;
        out->null[r] = a.null[ra];
        if (a.null[ra])
            continue;
        switch (e->type) {
        case PQ_V_DECIMAL: out->v.x[r] = a.v.i[ra]; break; /* INT -> DECIMAL(scale 0) */
        case PQ_V_TIMESTAMP: out->v.x[r] = (__int128)a.v.i[ra] * NS_PER_DAY; break;
        case PQ_V_DOUBLE: {
            double d;
            if (x->type == PQ_V_INT) d = e->f32 ? (double)(float)a.v.i[ra] : (double)a.v.i[ra];
            else if (x->type == PQ_V_DECIMAL) d = pq_x_dec_to_double(a.v.x[ra], x->scale);
            else d = a.v.d[ra];
            out->v.d[r] = e->f32 ? pq_x_round_f32(d) : d;
            break;
        }
        default: break;
        }
    }
    return PQ_OK;
}

/* The rows where both operands are non-null, x and y their values; the
 * result is z (BODY may set out->null[r] instead, or `goto bad`). */
#define ARITH_LOOP(T, FIELD, ...)                                                         \
    for (int32_t i = 0; i < n; i++) {                                                     \
        int32_t r = sel[i], ra = r & a.m, rb = r & b.m;                                   \
        out->null[r] = a.null[ra] || b.null[rb];                                          \
        if (out->null[r])                                                                 \
            continue;                                                                     \
        T x = a.v.FIELD[ra], y = b.v.FIELD[rb], z = 0;                                    \
        (void)y;                                                                          \
        __VA_ARGS__;                                                                      \
        out->v.FIELD[r] = z;                                                              \
    }

static int eval_arith(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, vec *out)
{
    vec a, b;
    bool unary = e->kind == PQ_X_NEG;
    PQ_TRY(eval_value(c, e->args[0], sel, n, &a));
    if (unary) {
        b = a; /* y unused; its NULLs are a's */
    } else {
        PQ_TRY(eval_value(c, e->args[1], sel, n, &b));
    }
    PQ_TRY(alloc_vec(c, e->type, out));
    int32_t sa = e->args[0]->scale, sb = unary ? 0 : e->args[1]->scale, s = e->scale;
    int op = unary ? -1 : e->op;
    switch (e->type) {
    case PQ_V_INT:
        switch (op) {
        case -1: ARITH_LOOP(int64_t, i, if (__builtin_sub_overflow((int64_t)0, x, &z)) goto bad); break;
        case PQ_OP_ADD: ARITH_LOOP(int64_t, i, if (__builtin_add_overflow(x, y, &z)) goto bad); break;
        case PQ_OP_SUB: ARITH_LOOP(int64_t, i, if (__builtin_sub_overflow(x, y, &z)) goto bad); break;
        case PQ_OP_MUL: ARITH_LOOP(int64_t, i, if (__builtin_mul_overflow(x, y, &z)) goto bad); break;
        default: /* x % 0 is NULL; INT64_MIN % -1 overflows (as in DuckDB) */
            ARITH_LOOP(int64_t, i, if (y == 0) out->null[r] = 1; else if (x == INT64_MIN && y == -1) goto bad;
                       else z = x % y);
            break;
        }
        return PQ_OK;
    case PQ_V_DECIMAL: {
        /* A fraction's DECIMAL holds 38 digits, as DuckDB's: past that it is
         * an overflow error there too.  Whole values go on to the int128
         * bound, as DuckDB's HUGEINT (which a literal past int64 is). */
        const __int128 lim = e->scale > 0 ? pq_pow10_i128[38] : 0;
#define DEC_FITS(v) (!lim || ((v) > -lim && (v) < lim))
        switch (op) {
        case -1: ARITH_LOOP(__int128, x, z = -x); break;
        case PQ_OP_MUL: ARITH_LOOP(__int128, x, if (__builtin_mul_overflow(x, y, &z) || !DEC_FITS(z)) goto bad); break;
        default:
            ARITH_LOOP(__int128, x,
                       if (!pq_x_dec_rescale(x, sa, s, &x) || !pq_x_dec_rescale(y, sb, s, &y)) goto bad;
                       if (op == PQ_OP_ADD) { if (__builtin_add_overflow(x, y, &z) || !DEC_FITS(z)) goto bad; }
                       else if (op == PQ_OP_SUB) { if (__builtin_sub_overflow(x, y, &z) || !DEC_FITS(z)) goto bad; }
                       else if (y == 0) out->null[r] = 1;
                       else z = x % y);
            break;
        }
#undef DEC_FITS
        return PQ_OK;
    }
    default:
        switch (op) {
        case -1: ARITH_LOOP(double, d, z = -x); break;
        case PQ_OP_ADD: ARITH_LOOP(double, d, z = x + y); break;
        case PQ_OP_SUB: ARITH_LOOP(double, d, z = x - y); break;
        case PQ_OP_MUL: ARITH_LOOP(double, d, z = x * y); break;
        default: ARITH_LOOP(double, d, z = fmod(x, y)); break;
        }
        if (e->f32)
            for (int32_t i = 0; i < n; i++)
                out->v.d[sel[i]] = pq_x_round_f32(out->v.d[sel[i]]);
        return PQ_OK;
    }
bad:
    return overflow(c, e, e->type == PQ_V_INT ? "integer" : "decimal");
}

static int eval_value(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, vec *out)
{
    switch (e->kind) {
    case PQ_X_LITERAL:
        return literal_vec(c, e, out);
    case PQ_X_COLUMN:
        return load_column(c, e, sel, n, out);
    case PQ_X_CAST:
        return eval_cast(c, e, sel, n, out);
    case PQ_X_NEG:
    case PQ_X_ARITH:
        return eval_arith(c, e, sel, n, out);
    default: {
        /* a condition used as a value (compared with another) */
        PQ_TRY(alloc_vec(c, PQ_V_BOOL, out));
        PQ_TRY(eval_pred(c, e, sel, n, out->v.t));
        for (int32_t i = 0; i < n; i++)
            out->null[sel[i]] = out->v.t[sel[i]] == TRI_N;
        return PQ_OK;
    }
    }
}

/* Sign of a[r] vs b[r] for vectors of type t (both non-null). */
static inline int vec_cmp(pq_vtype t, const vec *a, int32_t sa, int32_t ra, const vec *b, int32_t sb,
                          int32_t rb)
{
    switch (t) {
    case PQ_V_DOUBLE: return pq_x_double_cmp(a->v.d[ra], b->v.d[rb]);
    case PQ_V_DECIMAL:
        if (sa == sb) return SIGN(a->v.x[ra], b->v.x[rb]);
        return pq_x_dec_cmp(a->v.x[ra], sa, b->v.x[rb], sb);
    case PQ_V_TIMESTAMP: return SIGN(a->v.x[ra], b->v.x[rb]);
    case PQ_V_STRING: return cmp_bytes(a->v.s[ra], b->v.s[rb]);
    case PQ_V_BOOL: return SIGN(a->v.t[ra], b->v.t[rb]);
    default: return SIGN(a->v.i[ra], b->v.i[rb]);
    }
}

/* Vector element r as a value, for IN lists on computed operands. */
static void vec_value(pq_vtype t, int32_t scale, const vec *a, int32_t r, pq_value *v)
{
    memset(v, 0, sizeof *v);
    v->type = t;
    switch (t) {
    case PQ_V_BOOL: v->u.b = a->v.t[r] == TRI_T; break;
    case PQ_V_INT: v->u.i = a->v.i[r]; break;
    case PQ_V_DATE: v->u.date = (int32_t)a->v.i[r]; break;
    case PQ_V_TIME: v->u.time_ns = a->v.i[r]; break;
    case PQ_V_DOUBLE: v->u.d = a->v.d[r]; break;
    case PQ_V_DECIMAL: v->u.dec.unscaled = a->v.x[r]; v->u.dec.scale = scale; break;
    case PQ_V_TIMESTAMP: v->u.ts_ns = a->v.x[r]; break;
    case PQ_V_STRING: v->u.s = a->v.s[r]; break;
    case PQ_V_NULL: v->is_null = true; break;
    }
}

static bool list_contains(const pq_expr *e, const pq_value *v)
{
    int32_t lo = 0, hi = e->n_list;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (pq_value_cmp(&e->list[mid], v) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < e->n_list && pq_value_cmp(&e->list[lo], v) == 0;
}

static int eval_junction(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, uint8_t *out)
{
    bool is_and = e->kind == PQ_X_AND;
    uint8_t decided = is_and ? TRI_F : TRI_T;
    int32_t *cur = scratch(c, sizeof *cur, n);
    uint8_t *part = scratch(c, 1, c->n_rows);
    if (!cur || !part)
        return PQ_ERR;
    for (int32_t i = 0; i < n; i++)
        out[sel[i]] = is_and ? TRI_T : TRI_F;
    memcpy(cur, sel, sizeof *cur * (size_t)n);
    int32_t m = n;
    for (int32_t a = 0; a < e->n_args && m > 0; a++) {
        PQ_TRY(eval_pred(c, e->args[a], cur, m, part));
        int32_t kept = 0;
        for (int32_t i = 0; i < m; i++) {
            int32_t r = cur[i];
            uint8_t t = part[r];
            uint8_t v = is_and ? (t < out[r] ? t : out[r]) : (t > out[r] ? t : out[r]);
            out[r] = v;
            if (v != decided)
                cur[kept++] = r;
        }
        m = kept;
    }
    return PQ_OK;
}

static int eval_pred(ctx *c, const pq_expr *e, const int32_t *sel, int32_t n, uint8_t *out)
{
    switch (e->kind) {
    case PQ_X_AND:
    case PQ_X_OR:
        return eval_junction(c, e, sel, n, out);
    case PQ_X_NOT: {
        PQ_TRY(eval_pred(c, e->args[0], sel, n, out));
        for (int32_t i = 0; i < n; i++)
            out[sel[i]] = (uint8_t)(TRI_T - out[sel[i]]);
        return PQ_OK;
    }
    case PQ_X_CMP:
    case PQ_X_IN:
    case PQ_X_LIKE:
        if (e->kernel && !pq_x_disable_kernels)
            return run_kernel(c, e, sel, n, out);
        break;
    case PQ_X_IS_NULL: {
        const pq_expr *x = e->args[0];
        uint8_t is = e->negated ? TRI_F : TRI_T, isnt = e->negated ? TRI_T : TRI_F;
        if (x->kind == PQ_X_COLUMN && x->col.repr != PQ_R_NONE) {
            const pq_col_batch *b = column_batch(c, x);
            if (!b)
                return PQ_ERR;
            uint16_t level = (uint16_t)x->col.def_level;
            for (int32_t i = 0; i < n; i++)
                out[sel[i]] = b->def && b->def[sel[i]] != level ? is : isnt;
            return PQ_OK;
        }
        vec a;
        PQ_TRY(eval_value(c, x, sel, n, &a));
        for (int32_t i = 0; i < n; i++)
            out[sel[i]] = a.null[sel[i] & a.m] ? is : isnt;
        return PQ_OK;
    }
    default: {
        /* literals and boolean columns */
        vec a;
        PQ_TRY(eval_value(c, e, sel, n, &a));
        for (int32_t i = 0; i < n; i++) {
            int32_t r = sel[i];
            out[r] = a.null[r & a.m] ? TRI_N : a.v.t[r & a.m];
        }
        return PQ_OK;
    }
    }
    /* general CMP / IN / LIKE */
    vec a;
    PQ_TRY(eval_value(c, e->args[0], sel, n, &a));
    const pq_expr *x = e->args[0];
    if (e->kind == PQ_X_CMP) {
        vec b;
        PQ_TRY(eval_value(c, e->args[1], sel, n, &b));
        const uint8_t *row = cmp_tri[e->op];
        int32_t sa = x->scale, sb = e->args[1]->scale;
        for (int32_t i = 0; i < n; i++) {
            int32_t r = sel[i];
            int32_t ra = r & a.m, rb = r & b.m;
            out[r] = a.null[ra] || b.null[rb] ? TRI_N : row[vec_cmp(x->type, &a, sa, ra, &b, sb, rb) + 1];
        }
        return PQ_OK;
    }
    if (e->kind == PQ_X_IN) {
        uint8_t yes = e->negated ? TRI_F : TRI_T;
        uint8_t no = e->list_has_null ? TRI_N : e->negated ? TRI_T : TRI_F;
        for (int32_t i = 0; i < n; i++) {
            int32_t r = sel[i];
            if (a.null[r & a.m]) {
                out[r] = TRI_N;
                continue;
            }
            pq_value v;
            vec_value(x->type, x->scale, &a, r & a.m, &v);
            out[r] = list_contains(e, &v) ? yes : no;
        }
        return PQ_OK;
    }
    uint8_t yes = e->negated ? TRI_F : TRI_T, no = e->negated ? TRI_T : TRI_F;
    for (int32_t i = 0; i < n; i++) {
        int32_t r = sel[i];
        int32_t ra = r & a.m;
        if (a.null[ra])
            out[r] = TRI_N;
        else
            out[r] = like_match(a.v.s[ra].ptr, a.v.s[ra].len, e->pattern.ptr, e->pattern.len) ? yes : no;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ entry points */

static int max_column(const pq_expr *e)
{
    int m = e->kind == PQ_X_COLUMN ? e->column : -1;
    for (int i = 0; i < e->n_args; i++) {
        int a = max_column(e->args[i]);
        if (a > m)
            m = a;
    }
    return m;
}

/* Rows with a non-zero keep byte, in 16-row blocks with a fixed trip count
 * (vectorized).  The block sums are 32-bit: gcc 12.2 at -O3 (outer-loop
 * vectorization) miscounts 8-bit ones, and a wrong count made the filter
 * take its every-row path, re-admitting rows an earlier conjunct had
 * rejected, or size its selection wrongly. */
int32_t pq_x_count_kept(const uint8_t *keep, int32_t n_rows)
{
    int32_t n = 0, r = 0;
    for (; r + 16 <= n_rows; r += 16) {
        uint32_t k = 0;
        for (int32_t j = 0; j < 16; j++)
            k += (uint32_t)(keep[r + j] != 0);
        n += (int32_t)k;
    }
    for (; r < n_rows; r++)
        n += keep[r] != 0;
    return n;
}

int pq_expr_filter(const pq_expr *e, const pq_col_batch *const *batches, int32_t n_rows,
                   uint8_t *keep, bool only_kept, pq_arena *scratch_arena, pq_error *err)
{
    if (n_rows <= 0)
        return PQ_OK;
    if (!e) {
        if (!only_kept)
            memset(keep, 1, (size_t)n_rows);
        return PQ_OK;
    }
    ctx c = {.batches = batches, .n_rows = n_rows, .arena = scratch_arena, .err = err};
    c.n_cols = max_column(e) + 1;
    int32_t *identity = scratch(&c, sizeof *identity, n_rows);
    uint8_t *out = scratch(&c, 1, n_rows);
    c.rowmap = scratch(&c, sizeof *c.rowmap, c.n_cols);
    c.checked = scratch(&c, 1, c.n_cols);
    if (!identity || !out || !c.rowmap || !c.checked)
        return PQ_ERR;
    int32_t r0 = 0;
    for (; r0 + 16 <= n_rows; r0 += 16) /* fixed inner trip counts: vectorized at -O2 */
        for (int32_t j = 0; j < 16; j++)
            identity[r0 + j] = r0 + j;
    for (; r0 < n_rows; r0++)
        identity[r0] = r0;
    c.identity = identity;
    int32_t n = n_rows;
    if (only_kept)
        n = pq_x_count_kept(keep, n_rows);
    if (n == n_rows) { /* every row: the kernels' dense loops */
        PQ_TRY(eval_pred(&c, e, identity, n_rows, out));
        int32_t r = 0;
        for (; r + 16 <= n_rows; r += 16)
            for (int32_t j = 0; j < 16; j++)
                keep[r + j] = out[r + j] == TRI_T;
        for (; r < n_rows; r++)
            keep[r] = out[r] == TRI_T;
        return PQ_OK;
    }
    if (n == 0)
        return PQ_OK; /* nothing kept stays so */
    int32_t *sel = scratch(&c, sizeof *sel, n);
    if (!sel)
        return PQ_ERR;
    n = 0;
    for (int32_t r = 0; r < n_rows; r++)
        if (keep[r])
            sel[n++] = r;
    PQ_TRY(eval_pred(&c, e, sel, n, out));
    memset(keep, 0, (size_t)n_rows);
    for (int32_t i = 0; i < n; i++)
        keep[sel[i]] = out[sel[i]] == TRI_T;
    return PQ_OK;
}

int pq_x_eval_constant(const pq_expr *e, pq_arena *arena, pq_value *out, pq_error *err)
{
    static const int32_t zero = 0;
    ctx c = {.n_rows = 1, .arena = arena, .err = err, .identity = &zero}; /* no columns */
    memset(out, 0, sizeof *out);
    if (e->type == PQ_V_BOOL) {
        uint8_t t = TRI_N;
        PQ_TRY(eval_pred(&c, e, &zero, 1, &t));
        out->type = PQ_V_BOOL;
        out->is_null = t == TRI_N;
        out->u.b = t == TRI_T;
        return PQ_OK;
    }
    vec v;
    PQ_TRY(eval_value(&c, e, &zero, 1, &v));
    vec_value(e->type, e->scale, &v, 0, out);
    out->is_null = v.null[0] || e->type == PQ_V_NULL;
    return PQ_OK;
}
