/* Binder: syntax tree to typed expression.
 *
 * Resolves names against the table's columns, types every node, and makes
 * operands of one comparison (or IN list, or BETWEEN) share a type the way
 * DuckDB does: INTEGER with DECIMAL compares exactly as DECIMAL, anything
 * numeric with DOUBLE as DOUBLE (FLOAT when the floating side is a FLOAT column
 * and the other side is not a DOUBLE), DATE with TIMESTAMP as TIMESTAMP; a
 * string literal takes the type of the other side and is parsed at bind time.
 * Implicit conversions become CAST nodes (literals are converted on the spot),
 * BETWEEN becomes two comparisons, and literal-only subtrees are folded. */
#include "expr_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

typedef struct binder {
    const pq_expr_column *cols;
    int n_cols;
    pq_arena *arena;
    pq_error *err;
} binder;

/* The type operands are brought to, with what a string literal needs to be
 * read as that type. */
typedef struct target {
    pq_vtype type;
    int32_t scale;
    bool f32;
    bool uuid, binary;
    int64_t precision;         /* TIMESTAMP/TIME: nanoseconds a literal is truncated to */
    bool local_ts;             /* TIMESTAMP without time zone: a literal's offset is dropped */
} target;

static const char *const arith_text[] = {"+", "-", "*", "%"};

/* ------------------------------------------------------------------ constructors */

pq_expr *pq_x_new(pq_arena *arena, pq_xkind kind, pq_vtype type, int n_args)
{
    pq_expr *e = pq_arena_alloc(arena, sizeof *e);
    if (!e)
        return NULL;
    e->kind = kind;
    e->type = type;
    e->n_args = n_args;
    if (n_args > 0) {
        e->args = pq_arena_alloc(arena, sizeof(pq_expr *) * (size_t)n_args);
        if (!e->args)
            return NULL;
    }
    return e;
}

pq_expr *pq_x_literal(pq_arena *arena, const pq_value *v)
{
    pq_expr *e = pq_x_new(arena, PQ_X_LITERAL, v->type, 0);
    if (!e)
        return NULL;
    e->value = *v;
    if (v->type == PQ_V_NULL)
        e->value.is_null = true;
    if (v->type == PQ_V_DECIMAL)
        e->scale = v->u.dec.scale;
    return e;
}

pq_expr *pq_x_copy(pq_arena *arena, const pq_expr *e)
{
    pq_expr *c = pq_arena_dup(arena, e, sizeof *e);
    if (!c)
        return NULL;
    if (e->n_args > 0) {
        c->args = pq_arena_dup(arena, e->args, sizeof(pq_expr *) * (size_t)e->n_args);
        if (!c->args)
            return NULL;
    }
    c->kernel = NULL;
    return c;
}

static int cmp_values_qsort(const void *a, const void *b)
{
    return pq_value_cmp(a, b);
}

int pq_x_sort_values(pq_value *v, int n, bool *had_null)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (v[i].is_null || v[i].type == PQ_V_NULL)
            *had_null = true;
        else
            v[k++] = v[i];
    }
    qsort(v, (size_t)k, sizeof *v, cmp_values_qsort);
    int m = 0;
    for (int i = 0; i < k; i++)
        if (m == 0 || pq_value_cmp(&v[m - 1], &v[i]) != 0)
            v[m++] = v[i];
    return m;
}

/* ------------------------------------------------------------------ helpers */

static pq_expr *oom(binder *b)
{
    PQ_NOMEM(b->err);
    return NULL;
}

static bool is_null_literal(const pq_expr *e)
{
    return e->kind == PQ_X_LITERAL && (e->value.is_null || e->value.type == PQ_V_NULL);
}

static bool is_numeric(pq_vtype t)
{
    return t == PQ_V_INT || t == PQ_V_DECIMAL || t == PQ_V_DOUBLE;
}

static const char *type_name(const pq_expr *e)
{
    if (e->kind == PQ_X_COLUMN) {
        if (e->col.opaque) return e->col.opaque;
        if (e->col.uuid) return "UUID";
        if (e->col.binary) return "BLOB";
    }
    if (e->type == PQ_V_DOUBLE && e->f32)
        return "FLOAT";
    return pq_x_type_name(e->type);
}

/* Only IS [NOT] NULL may look at a column whose values have no order. */
static int usable(binder *b, const pq_expr *e)
{
    if (e->kind == PQ_X_COLUMN && e->col.opaque)
        return pq_fail(b->err, PQ_E_USAGE,
                       "column '%s' has type %s and can only be tested with IS [NOT] NULL", e->name,
                       e->col.opaque);
    return PQ_OK;
}

/* Folds a node whose operands are all literals. */
static pq_expr *fold(binder *b, pq_expr *e)
{
    if (!e || e->kind == PQ_X_LITERAL || e->kind == PQ_X_COLUMN)
        return e;
    for (int i = 0; i < e->n_args; i++)
        if (e->args[i]->kind != PQ_X_LITERAL)
            return e;
    pq_value v;
    if (pq_x_eval_constant(e, b->arena, &v, b->err) != PQ_OK)
        return NULL;
    pq_expr *l = pq_x_literal(b->arena, &v);
    if (!l)
        return oom(b);
    l->type = e->type;
    l->scale = e->scale;
    l->f32 = e->f32;
    l->pos = e->pos;
    return l;
}

static pq_expr *null_of(binder *b, pq_vtype type, int32_t pos)
{
    pq_value v = {.type = type, .is_null = true};
    pq_expr *e = pq_x_literal(b->arena, &v);
    if (!e)
        return oom(b);
    e->pos = pos;
    return e;
}

/* ------------------------------------------------------------------ string literals */

static bool trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\n' ||
                  (*s)[*n - 1] == '\r'))
        (*n)--;
    return *n > 0;
}

/* Up to `max` digits at s[*i] (at least one): the field's value. */
static int loose_field(const char *s, size_t n, size_t *i, int max, unsigned *v)
{
    int k = 0;
    *v = 0;
    while (*i < n && k < max && s[*i] >= '0' && s[*i] <= '9') {
        *v = *v * 10 + (unsigned)(s[*i] - '0');
        (*i)++;
        k++;
    }
    return k ? 0 : -1;
}

/* A date or timestamp literal as DuckDB reads it, rewritten to the strict
 * form the parsers take: one-digit month, day, hour, minute or second
 * ('2024-1-5 1:2:3') padded, and for a TIMESTAMP without time zone a UTC
 * offset dropped ('10:00+02' is 10:00 there, as in DuckDB and PostgreSQL).
 * Text of any other shape is copied as it is, for the parsers to refuse. */
static size_t loose_datetime(const char *s, size_t n, bool drop_offset, char *out, size_t cap)
{
    size_t i = 0, o = 0;
    unsigned f[5];
    int nf = 0;
    if (n + 8 >= cap) return 0; /* padding adds at most five characters */
    if (i < n && s[i] == '-') i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    size_t year_end = i;
    if (year_end == 0 || i >= n || s[i] != '-') goto as_is;
    i++;
    if (loose_field(s, n, &i, 2, &f[nf++]) || i >= n || s[i] != '-') goto as_is;
    i++;
    if (loose_field(s, n, &i, 2, &f[nf++])) goto as_is;
    memcpy(out, s, year_end);
    o = year_end;
    o += (size_t)snprintf(out + o, cap - o, "-%02u-%02u", f[0], f[1]);
    if (i == n) return o;
    if (s[i] != ' ' && s[i] != 'T' && s[i] != 't') goto as_is;
    out[o++] = s[i++];
    if (loose_field(s, n, &i, 2, &f[nf++]) || i >= n || s[i] != ':') goto as_is;
    i++;
    if (loose_field(s, n, &i, 2, &f[nf++])) goto as_is;
    o += (size_t)snprintf(out + o, cap - o, "%02u:%02u", f[2], f[3]);
    if (i < n && s[i] == ':') {
        i++;
        if (loose_field(s, n, &i, 2, &f[nf++])) goto as_is;
        o += (size_t)snprintf(out + o, cap - o, ":%02u", f[4]);
        if (i < n && s[i] == '.') {
            size_t from = i++;
            while (i < n && s[i] >= '0' && s[i] <= '9') i++;
            memcpy(out + o, s + from, i - from);
            o += i - from;
        }
    }
    /* the rest is the offset (Z, +HH[:MM], -HH[MM]) or junk */
    if (i < n && drop_offset && (s[i] == 'Z' || s[i] == 'z' || s[i] == '+' || s[i] == '-')) {
        char check[64];
        memcpy(check, "2000-01-01 00:00", 16);
        if (n - i < sizeof check - 17) {
            memcpy(check + 16, s + i, n - i);
            int64_t ns;
            int had;
            if (pq_parse_timestamp_ns(check, 16 + (n - i), &ns, &had) == 0 && had) return o;
        }
    }
    memcpy(out + o, s + i, n - i);
    return o + (n - i);
as_is:
    memcpy(out, s, n);
    return n;
}

/* A timestamp text to nanoseconds, also beyond the years an int64 of
 * nanoseconds holds (1677..2262): the date and the time of day (with its
 * offset) are read separately. */
static int parse_timestamp_wide(const char *s, size_t n, __int128 *ns)
{
    int64_t t;
    if (pq_parse_timestamp_ns(s, n, &t, NULL) == 0) {
        *ns = t;
        return 0;
    }
    size_t i = 8; /* past the shortest date's year and month */
    while (i < n && s[i] != ' ' && s[i] != 'T' && s[i] != 't')
        i++;
    int64_t days;
    if (pq_parse_date(s, i, &days) != 0)
        return -1;
    int64_t tod = 0;
    if (i < n) {
        char buf[64] = "1970-01-01";
        size_t rest = n - i;
        if (rest > sizeof buf - 11)
            return -1;
        memcpy(buf + 10, s + i, rest);
        if (pq_parse_timestamp_ns(buf, 10 + rest, &tod, NULL) != 0)
            return -1;
    }
    *ns = (__int128)days * 86400 * 1000000000 + tod;
    return 0;
}

static bool word_is(const char *s, size_t n, const char *w)
{
    size_t i = 0;
    for (; i < n && w[i]; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != w[i]) return false;
    }
    return i == n && w[i] == '\0';
}

/* Reads string literal `lit` as the target type (DuckDB's casts: numbers
 * rounded half away from zero to the target's scale, a date read from a
 * timestamp text drops the time, booleans true/t/yes/y/1 and false/...). */
static pq_expr *coerce_string(binder *b, const pq_expr *lit, const target *t)
{
    const char *s = (const char *)lit->value.u.s.ptr;
    size_t n = lit->value.u.s.len;
    const char *ts = s;
    size_t tn = n;
    bool nonblank = trim(&ts, &tn);
    pq_value v = {.type = t->type};
    int form = PQ_LF_PLAIN;
    bool ok = false;
    switch (t->type) {
    case PQ_V_DATE: {
        int64_t days;
        __int128 ns, d128;
        char fixed[96];
        size_t fl = nonblank ? loose_datetime(ts, tn, false, fixed, sizeof fixed) : 0;
        if (fl) ts = fixed, tn = fl;
        if (nonblank && pq_parse_date(ts, tn, &days) == 0) {
            ok = true;
        } else if (nonblank && parse_timestamp_wide(ts, tn, &ns) == 0) {
            /* wide: '2999-12-31 10:00' is a date past int64 nanoseconds */
            d128 = pq_x_floor_div(ns, (__int128)86400 * 1000000000);
            ok = d128 >= INT64_MIN && d128 <= INT64_MAX;
            days = ok ? (int64_t)d128 : 0;
        }
        if (ok && (days < INT32_MIN || days > INT32_MAX)) ok = false;
        if (ok) v.u.date = (int32_t)days;
        break;
    }
    case PQ_V_TIMESTAMP:
        /* DuckDB reads the text at the column's precision (microseconds
         * unless the column holds nanoseconds), dropping further digits. */
    {
        char fixed[96];
        size_t fl = nonblank ? loose_datetime(ts, tn, t->local_ts, fixed, sizeof fixed) : 0;
        if (fl) ts = fixed, tn = fl;
        ok = nonblank && parse_timestamp_wide(ts, tn, &v.u.ts_ns) == 0;
        v.u.ts_ns = pq_x_floor_div(v.u.ts_ns, t->precision) * t->precision;
        break;
    }
    case PQ_V_TIME:
        ok = nonblank && pq_parse_time_ns(ts, tn, &v.u.time_ns) == 0;
        v.u.time_ns = v.u.time_ns / t->precision * t->precision;
        break;
    case PQ_V_INT:
    case PQ_V_DECIMAL: {
        __int128 u;
        int32_t sc;
        if (!nonblank || pq_parse_decimal(ts, tn, &u, &sc) != 0) break;
        int32_t want = t->type == PQ_V_INT ? 0 : t->scale;
        if (sc > want) {
            u = pq_x_dec_round(u, sc, want);
        } else if (!pq_x_dec_rescale(u, sc, want, &u)) {
            break;
        }
        if (t->type == PQ_V_INT) {
            if (u < INT64_MIN || u > INT64_MAX) break;
            v.u.i = (int64_t)u;
        } else {
            v.u.dec.unscaled = u;
            v.u.dec.scale = want;
        }
        ok = true;
        break;
    }
    case PQ_V_DOUBLE:
        ok = nonblank && pq_parse_double(ts, tn, &v.u.d) == 0;
        if (ok && t->f32) v.u.d = pq_x_round_f32(v.u.d);
        break;
    case PQ_V_BOOL:
        if (word_is(ts, tn, "true") || word_is(ts, tn, "t") || word_is(ts, tn, "yes") ||
            word_is(ts, tn, "y") || word_is(ts, tn, "1")) {
            v.u.b = true;
            ok = true;
        } else if (word_is(ts, tn, "false") || word_is(ts, tn, "f") || word_is(ts, tn, "no") ||
                   word_is(ts, tn, "n") || word_is(ts, tn, "0")) {
            v.u.b = false;
            ok = true;
        }
        break;
    case PQ_V_STRING:
        if (t->uuid) {
            uint8_t *bytes = pq_arena_alloc(b->arena, 16);
            if (!bytes) return oom(b);
            ok = pq_parse_uuid(ts, tn, bytes) == 0;
            v.u.s.ptr = bytes;
            v.u.s.len = 16;
            form = PQ_LF_UUID;
        } else {
            /* BLOB text: \xHH is a byte and any other backslash an error, as
             * DuckDB reads it. */
            uint8_t *bytes = pq_arena_alloc(b->arena, n + 1);
            if (!bytes) return oom(b);
            size_t k = n;
            if (t->binary) ok = pq_unescape_binary(s, n, bytes, &k) == 0;
            else {
                memcpy(bytes, s, n);
                ok = true;
            }
            v.u.s.ptr = bytes;
            v.u.s.len = (uint32_t)k;
            form = t->binary ? PQ_LF_BINARY : PQ_LF_PLAIN;
        }
        break;
    case PQ_V_NULL: ok = true; v = lit->value; break;
    }
    if (!ok) {
        const char *name = t->uuid ? "UUID" : t->binary ? "BLOB"
                           : (t->type == PQ_V_DOUBLE && t->f32) ? "FLOAT"
                                                                : pq_x_type_name(t->type);
        pq_fail(b->err, PQ_E_USAGE, "cannot read '%.*s' as %s", (int)(n > 60 ? 60 : n), s, name);
        return NULL;
    }
    pq_expr *e = pq_x_literal(b->arena, &v);
    if (!e) return oom(b);
    e->pos = lit->pos;
    e->lit_form = (uint8_t)form;
    e->f32 = t->f32 && t->type == PQ_V_DOUBLE;
    return e;
}

/* ------------------------------------------------------------------ type unification */

static target target_of(const pq_expr *e)
{
    target t = {.type = e->type, .scale = e->scale, .f32 = e->type == PQ_V_DOUBLE && e->f32,
                .precision = 1000};
    if (is_null_literal(e))
        t.type = PQ_V_NULL;
    if (e->kind == PQ_X_COLUMN) {
        t.uuid = e->col.uuid;
        t.binary = e->col.binary;
        t.local_ts = e->col.local_ts;
        if (e->col.unit < t.precision)
            t.precision = e->col.unit; /* nanosecond columns */
    }
    return t;
}

/* Merges operand e into t; false when the two cannot be compared. */
static bool unify(target *t, const pq_expr *e)
{
    target u = target_of(e);
    if (u.type == PQ_V_NULL)
        return true;
    if (t->type == PQ_V_NULL) {
        *t = u;
        return true;
    }
    if (t->type == u.type) {
        if (t->type == PQ_V_STRING && e->kind != PQ_X_LITERAL && t->uuid != u.uuid)
            return false;
        t->f32 = t->f32 && u.f32;
        if (u.scale > t->scale) t->scale = u.scale;
        t->uuid |= u.uuid;
        t->binary |= u.binary;
        t->local_ts |= u.local_ts;
        if (u.precision < t->precision) t->precision = u.precision;
        return true;
    }
    if (is_numeric(t->type) && is_numeric(u.type)) {
        if (t->type == PQ_V_DOUBLE || u.type == PQ_V_DOUBLE) {
            bool f32 = (t->type != PQ_V_DOUBLE || t->f32) && (u.type != PQ_V_DOUBLE || u.f32);
            t->type = PQ_V_DOUBLE;
            t->f32 = f32;
            t->scale = 0;
        } else {
            t->type = PQ_V_DECIMAL;
            if (u.scale > t->scale) t->scale = u.scale;
        }
        return true;
    }
    if ((t->type == PQ_V_DATE && u.type == PQ_V_TIMESTAMP) ||
        (t->type == PQ_V_TIMESTAMP && u.type == PQ_V_DATE)) {
        t->type = PQ_V_TIMESTAMP;
        t->local_ts |= u.local_ts;
        if (u.precision < t->precision) t->precision = u.precision;
        return true;
    }
    return false;
}

/* Brings e to type t: literals are converted, other nodes get a CAST. */
static pq_expr *cast_to(binder *b, pq_expr *e, const target *t)
{
    if (t->type == PQ_V_NULL || is_null_literal(e))
        return e;
    if (e->type == t->type && (t->type != PQ_V_DOUBLE || e->f32 == t->f32 || !t->f32))
        return e;
    if (e->kind == PQ_X_LITERAL) {
        pq_value v;
        if (pq_x_value_cast(&e->value, t->type, 0, t->f32, &v) != 0) {
            pq_fail(b->err, PQ_E_USAGE, "cannot convert %s to %s", type_name(e), pq_x_type_name(t->type));
            return NULL;
        }
        if (t->type == PQ_V_DOUBLE && e->value.type == PQ_V_DECIMAL && !e->value.is_null) {
            /* DuckDB's cast, as for a column (pq_x_dec_to_double). */
            double d = pq_x_dec_to_double(e->value.u.dec.unscaled, e->value.u.dec.scale);
            v.u.d = t->f32 ? (double)(float)d : d;
        }
        pq_expr *l = pq_x_literal(b->arena, &v);
        if (!l) return oom(b);
        l->pos = e->pos;
        l->f32 = t->f32 && t->type == PQ_V_DOUBLE;
        return l;
    }
    pq_expr *c = pq_x_new(b->arena, PQ_X_CAST, t->type, 1);
    if (!c) return oom(b);
    c->args[0] = e;
    c->pos = e->pos;
    c->f32 = t->type == PQ_V_DOUBLE && t->f32;
    c->scale = t->type == PQ_V_DECIMAL ? e->scale : 0; /* INT -> DECIMAL(scale 0) */
    return c;
}

/* Gives n compared operands one type.  String literals (strlit[i]) take the
 * type of the others; two incompatible others are an error. */
static int unify_operands(binder *b, pq_expr **ops, const bool *strlit, int n, target *out)
{
    target t = {.type = PQ_V_NULL, .precision = 1000};
    const pq_expr *first = NULL;
    for (int i = 0; i < n; i++) {
        if (strlit[i])
            continue;
        /* -9223372036854775808 is a DECIMAL by the way it is written; as an
         * integer it keeps integer comparisons integer (as DuckDB's literals). */
        const pq_value *v = &ops[i]->value;
        if (ops[i]->kind == PQ_X_LITERAL && !v->is_null && v->type == PQ_V_DECIMAL &&
            v->u.dec.scale == 0 && v->u.dec.unscaled >= INT64_MIN && v->u.dec.unscaled <= INT64_MAX) {
            pq_value iv = {.type = PQ_V_INT, .u.i = (int64_t)v->u.dec.unscaled};
            pq_expr *l = pq_x_literal(b->arena, &iv);
            if (!l)
                return PQ_NOMEM(b->err);
            l->pos = ops[i]->pos;
            ops[i] = l;
        }
        PQ_TRY(usable(b, ops[i]));
        if (!first && !is_null_literal(ops[i]))
            first = ops[i];
        if (!unify(&t, ops[i]))
            return pq_fail(b->err, PQ_E_USAGE, "cannot compare %s with %s", type_name(first),
                           type_name(ops[i]));
    }
    if (t.type == PQ_V_NULL)
        t.type = PQ_V_STRING;
    for (int i = 0; i < n; i++) {
        if (strlit[i] && (t.type != PQ_V_STRING || t.uuid || t.binary)) {
            ops[i] = coerce_string(b, ops[i], &t);
            if (!ops[i])
                return PQ_ERR;
        }
        ops[i] = cast_to(b, ops[i], &t);
        if (!ops[i])
            return PQ_ERR;
    }
    if (out)
        *out = t;
    return PQ_OK;
}

/* ------------------------------------------------------------------ binding */

static pq_expr *bind(binder *b, const pq_ast *a);

/* An integer literal (digits only) up to 2^127 - 1, DuckDB's HUGEINT range. */
static bool parse_hugeint(const char *s, size_t n, __int128 *out)
{
    __int128 v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
            return false;
    }
    *out = v;
    return n > 0;
}

static pq_expr *bind_literal(binder *b, const pq_ast *a)
{
    pq_value v = {.type = PQ_V_NULL};
    switch (a->kind) {
    case PQ_A_INT:
    case PQ_A_DECIMAL: {
        if (a->kind == PQ_A_INT && pq_parse_i64(a->text, a->len, &v.u.i) == 0) {
            v.type = PQ_V_INT;
            break;
        }
        /* A DECIMAL, or an integer too large for int64 (as DuckDB's HUGEINT). */
        int rc = pq_parse_decimal(a->text, a->len, &v.u.dec.unscaled, &v.u.dec.scale);
        if (rc == 0 || (rc == -2 && a->kind == PQ_A_INT && parse_hugeint(a->text, a->len, &v.u.dec.unscaled))) {
            if (rc != 0) v.u.dec.scale = 0; /* 39 digits: still a HUGEINT in DuckDB, exact */
            v.type = PQ_V_DECIMAL;
            break;
        }
        if (rc == -2 && pq_parse_double(a->text, a->len, &v.u.d) == 0) {
            v.type = PQ_V_DOUBLE; /* beyond 38 digits: approximate, as DuckDB does */
            break;
        }
        pq_fail(b->err, PQ_E_USAGE, "invalid number '%.*s' at position %d", (int)a->len, a->text,
                a->pos);
        return NULL;
    }
    case PQ_A_FLOAT:
        if (pq_parse_double(a->text, a->len, &v.u.d) != 0) {
            pq_fail(b->err, PQ_E_USAGE, "invalid number '%.*s' at position %d", (int)a->len,
                    a->text, a->pos);
            return NULL;
        }
        v.type = PQ_V_DOUBLE;
        break;
    case PQ_A_STRING:
        v.type = PQ_V_STRING;
        v.u.s.ptr = (const uint8_t *)a->text;
        v.u.s.len = (uint32_t)a->len;
        break;
    case PQ_A_TRUE: case PQ_A_FALSE:
        v.type = PQ_V_BOOL;
        v.u.b = a->kind == PQ_A_TRUE;
        break;
    default: v.is_null = true; break;
    }
    pq_expr *e = pq_x_literal(b->arena, &v);
    if (!e) return oom(b);
    e->pos = a->pos;
    return e;
}

static pq_expr *bind_ident(binder *b, const pq_ast *a)
{
    for (int i = 0; i < b->n_cols; i++) {
        const char *name = b->cols[i].name;
        if (!name || strlen(name) != a->len || memcmp(name, a->text, a->len) != 0)
            continue;
        const pq_node *node = b->cols[i].node;
        pq_expr *e = pq_x_new(b->arena, PQ_X_COLUMN, PQ_V_NULL, 0);
        if (!e) return oom(b);
        if (!node || node->kind != PQ_NODE_PRIMITIVE) {
            /* Nested columns: only IS [NOT] NULL, on a batch of row-level
             * nullness (def 1: present) that the scan builds. */
            memset(&e->col, 0, sizeof e->col);
            e->col.repr = PQ_R_BYTES;
            e->col.type = PQ_V_STRING;
            e->col.def_level = 1;
            e->col.opaque = !node ? "NESTED" : node->kind == PQ_NODE_LIST ? "LIST"
                            : node->kind == PQ_NODE_MAP ? "MAP" : "STRUCT";
        } else {
            pq_x_colinfo(node, &e->col);
        }
        e->type = e->col.type;
        e->scale = e->col.scale;
        e->f32 = e->col.f32;
        e->column = i;
        e->name = pq_arena_strndup(b->arena, name, a->len);
        e->pos = a->pos;
        if (!e->name) return oom(b);
        return e;
    }
    pq_fail(b->err, PQ_E_USAGE, "unknown column '%.*s'", (int)(a->len > 200 ? 200 : a->len), a->text);
    return NULL;
}

static pq_expr *compare(binder *b, pq_cmp_op op, pq_expr *l, pq_expr *r, int32_t pos)
{
    if (is_null_literal(l) || is_null_literal(r))
        return null_of(b, PQ_V_BOOL, pos);
    pq_expr *e = pq_x_new(b->arena, PQ_X_CMP, PQ_V_BOOL, 2);
    if (!e) return oom(b);
    e->op = (uint8_t)op;
    e->args[0] = l;
    e->args[1] = r;
    e->pos = pos;
    return fold(b, e);
}

static pq_expr *bind_cmp(binder *b, const pq_ast *a)
{
    pq_expr *ops[2];
    bool strlit[2];
    for (int i = 0; i < 2; i++) {
        if (!(ops[i] = bind(b, a->args[i])))
            return NULL;
        strlit[i] = a->args[i]->kind == PQ_A_STRING;
    }
    if (unify_operands(b, ops, strlit, 2, NULL))
        return NULL;
    return compare(b, (pq_cmp_op)a->op, ops[0], ops[1], a->pos);
}

static pq_expr *logical(binder *b, pq_xkind kind, pq_expr **items, int n, int32_t pos)
{
    pq_expr *e = pq_x_new(b->arena, kind, PQ_V_BOOL, n);
    if (!e) return oom(b);
    memcpy(e->args, items, sizeof *items * (size_t)n);
    e->pos = pos;
    return fold(b, e);
}

static pq_expr *bind_between(binder *b, const pq_ast *a)
{
    pq_expr *ops[3];
    bool strlit[3];
    for (int i = 0; i < 3; i++) {
        if (!(ops[i] = bind(b, a->args[i])))
            return NULL;
        strlit[i] = a->args[i]->kind == PQ_A_STRING;
    }
    if (unify_operands(b, ops, strlit, 3, NULL))
        return NULL;
    /* x BETWEEN lo AND hi is x >= lo AND x <= hi; NOT BETWEEN is x < lo OR x > hi. */
    pq_expr *parts[2];
    parts[0] = compare(b, a->negated ? PQ_OP_LT : PQ_OP_GE, ops[0], ops[1], a->pos);
    parts[1] = compare(b, a->negated ? PQ_OP_GT : PQ_OP_LE, ops[0], ops[2], a->pos);
    if (!parts[0] || !parts[1])
        return NULL;
    return logical(b, a->negated ? PQ_X_OR : PQ_X_AND, parts, 2, a->pos);
}

static pq_expr *bind_in(binder *b, const pq_ast *a)
{
    int n = a->n_args;
    pq_expr **ops = pq_arena_alloc(b->arena, sizeof *ops * (size_t)n);
    bool *strlit = pq_arena_alloc(b->arena, sizeof *strlit * (size_t)n);
    if (!ops || !strlit) return oom(b);
    bool all_literal = true;
    for (int i = 0; i < n; i++) {
        if (!(ops[i] = bind(b, a->args[i])))
            return NULL;
        strlit[i] = a->args[i]->kind == PQ_A_STRING;
        if (i > 0 && ops[i]->kind != PQ_X_LITERAL)
            all_literal = false;
    }
    target t = {0};
    if (unify_operands(b, ops, strlit, n, &t))
        return NULL;
    bool f32 = t.type == PQ_V_DOUBLE && t.f32; /* the list was rounded to float */
    pq_expr *x = ops[0];
    if (is_null_literal(x))
        return null_of(b, PQ_V_BOOL, a->pos);
    if (!all_literal) {
        /* Items that are not constants: an OR of equalities (AND of !=). */
        pq_expr **parts = pq_arena_alloc(b->arena, sizeof *parts * (size_t)(n - 1));
        if (!parts) return oom(b);
        for (int i = 1; i < n; i++)
            if (!(parts[i - 1] = compare(b, a->negated ? PQ_OP_NE : PQ_OP_EQ, x, ops[i], a->pos)))
                return NULL;
        if (n == 2)
            return parts[0];
        return logical(b, a->negated ? PQ_X_AND : PQ_X_OR, parts, n - 1, a->pos);
    }
    pq_value *list = pq_arena_alloc(b->arena, sizeof *list * (size_t)(n - 1));
    if (!list) return oom(b);
    for (int i = 1; i < n; i++)
        list[i - 1] = ops[i]->value;
    bool had_null = false;
    int m = pq_x_sort_values(list, n - 1, &had_null);
    if (m == 0)
        return null_of(b, PQ_V_BOOL, a->pos); /* x IN (NULL, ...) is never TRUE nor FALSE */
    if (m == 1 && !had_null) {
        pq_expr *lit = pq_x_literal(b->arena, &list[0]);
        if (!lit) return oom(b);
        lit->f32 = f32;
        for (int i = 1; i < n; i++)
            if (ops[i]->kind == PQ_X_LITERAL && !is_null_literal(ops[i]))
                lit->lit_form = ops[i]->lit_form;
        return compare(b, a->negated ? PQ_OP_NE : PQ_OP_EQ, x, lit, a->pos);
    }
    pq_expr *e = pq_x_new(b->arena, PQ_X_IN, PQ_V_BOOL, 1);
    if (!e) return oom(b);
    e->args[0] = x;
    e->negated = a->negated;
    e->list = list;
    e->n_list = m;
    e->list_has_null = had_null;
    e->f32 = f32;
    e->pos = a->pos;
    for (int i = 1; i < n; i++)
        if (ops[i]->lit_form != PQ_LF_PLAIN)
            e->lit_form = ops[i]->lit_form;
    return fold(b, e);
}

static pq_expr *bind_like(binder *b, const pq_ast *a)
{
    pq_expr *x = bind(b, a->args[0]), *pat = x ? bind(b, a->args[1]) : NULL;
    if (!pat)
        return NULL;
    if (usable(b, x))
        return NULL;
    if (!is_null_literal(x) && (x->type != PQ_V_STRING || (x->kind == PQ_X_COLUMN && x->col.uuid))) {
        pq_fail(b->err, PQ_E_USAGE, "LIKE needs a string, not %s", type_name(x));
        return NULL;
    }
    if (pat->kind != PQ_X_LITERAL || (!is_null_literal(pat) && pat->type != PQ_V_STRING)) {
        pq_fail(b->err, PQ_E_USAGE, "the pattern of LIKE must be a string literal (position %d)",
                a->args[1]->pos);
        return NULL;
    }
    if (is_null_literal(x) || is_null_literal(pat))
        return null_of(b, PQ_V_BOOL, a->pos);
    pq_bytes p = pat->value.u.s;
    bool wildcard = false;
    for (uint32_t i = 0; i < p.len; i++)
        if (p.ptr[i] == '%' || p.ptr[i] == '_')
            wildcard = true;
    if (!wildcard) /* no wildcard: plain equality, which the pruning rungs understand */
        return compare(b, a->negated ? PQ_OP_NE : PQ_OP_EQ, x, pat, a->pos);
    pq_expr *e = pq_x_new(b->arena, PQ_X_LIKE, PQ_V_BOOL, 1);
    if (!e) return oom(b);
    e->args[0] = x;
    e->negated = a->negated;
    e->pattern = p;
    e->pos = a->pos;
    return fold(b, e);
}

static pq_expr *bind_arith(binder *b, const pq_ast *a)
{
    bool unary = a->kind == PQ_A_NEG;
    pq_expr *ops[2] = {NULL, NULL};
    for (int i = 0; i < (unary ? 1 : 2); i++) {
        if (!(ops[i] = bind(b, a->args[i])))
            return NULL;
        if (usable(b, ops[i]))
            return NULL;
    }
    const char *sym = unary ? "-" : arith_text[a->op];
    target t = {.type = PQ_V_NULL, .precision = 1000};
    for (int i = 0; i < (unary ? 1 : 2); i++) {
        if (!is_null_literal(ops[i]) && !is_numeric(ops[i]->type)) {
            if (unary)
                pq_fail(b->err, PQ_E_USAGE, "cannot apply '-' to %s", type_name(ops[i]));
            else
                pq_fail(b->err, PQ_E_USAGE, "cannot apply '%s' to %s and %s", sym,
                        type_name(ops[0]), type_name(ops[1]));
            return NULL;
        }
        unify(&t, ops[i]);
    }
    if (t.type == PQ_V_NULL)
        t.type = PQ_V_INT;
    int32_t scale = 0;
    if (t.type == PQ_V_DECIMAL) {
        target dec = {.type = PQ_V_DECIMAL};
        for (int i = 0; i < (unary ? 1 : 2); i++) {
            pq_expr *c = cast_to(b, ops[i], &dec); /* INT -> DECIMAL(scale 0); decimals keep theirs */
            if (!c) return NULL;
            ops[i] = c;
        }
        int32_t sl = ops[0]->scale, sr = unary ? 0 : ops[1]->scale;
        scale = unary ? sl : a->op == PQ_OP_MUL ? sl + sr : (sl > sr ? sl : sr);
        if (scale > 38) {
            pq_fail(b->err, PQ_E_USAGE, "the result of '%s' needs more than 38 decimal digits", sym);
            return NULL;
        }
    } else {
        for (int i = 0; i < (unary ? 1 : 2); i++)
            if (!(ops[i] = cast_to(b, ops[i], &t)))
                return NULL;
    }
    pq_expr *e = pq_x_new(b->arena, unary ? PQ_X_NEG : PQ_X_ARITH, t.type, unary ? 1 : 2);
    if (!e) return oom(b);
    e->op = a->op;
    e->scale = scale;
    e->f32 = t.type == PQ_V_DOUBLE && t.f32;
    e->pos = a->pos;
    for (int i = 0; i < e->n_args; i++) {
        e->args[i] = ops[i];
        if (is_null_literal(ops[i]))
            return null_of(b, t.type, a->pos);
    }
    return fold(b, e);
}

static int need_bool(binder *b, const pq_expr *e, const char *what)
{
    PQ_TRY(usable(b, e));
    if (!is_null_literal(e) && e->type != PQ_V_BOOL)
        return pq_fail(b->err, PQ_E_USAGE, "%s needs a boolean operand, not %s", what, type_name(e));
    return PQ_OK;
}

static pq_expr *bind(binder *b, const pq_ast *a)
{
    switch (a->kind) {
    case PQ_A_IDENT: return bind_ident(b, a);
    case PQ_A_INT: case PQ_A_DECIMAL: case PQ_A_FLOAT: case PQ_A_STRING:
    case PQ_A_TRUE: case PQ_A_FALSE: case PQ_A_NULL:
        return bind_literal(b, a);
    case PQ_A_NEG: case PQ_A_ARITH: return bind_arith(b, a);
    case PQ_A_CMP: return bind_cmp(b, a);
    case PQ_A_BETWEEN: return bind_between(b, a);
    case PQ_A_IN: return bind_in(b, a);
    case PQ_A_LIKE: return bind_like(b, a);
    case PQ_A_IS_NULL: {
        pq_expr *x = bind(b, a->args[0]);
        if (!x) return NULL;
        pq_expr *e = pq_x_new(b->arena, PQ_X_IS_NULL, PQ_V_BOOL, 1);
        if (!e) return oom(b);
        e->args[0] = x;
        e->negated = a->negated;
        e->pos = a->pos;
        return fold(b, e);
    }
    case PQ_A_NOT: {
        pq_expr *x = bind(b, a->args[0]);
        if (!x || need_bool(b, x, "NOT")) return NULL;
        pq_expr *e = pq_x_new(b->arena, PQ_X_NOT, PQ_V_BOOL, 1);
        if (!e) return oom(b);
        e->args[0] = x;
        e->pos = a->pos;
        return fold(b, e);
    }
    case PQ_A_AND: case PQ_A_OR: {
        pq_expr **items = pq_arena_alloc(b->arena, sizeof *items * (size_t)a->n_args);
        if (!items) return oom(b);
        for (int i = 0; i < a->n_args; i++) {
            items[i] = bind(b, a->args[i]);
            if (!items[i] || need_bool(b, items[i], a->kind == PQ_A_AND ? "AND" : "OR"))
                return NULL;
        }
        return logical(b, a->kind == PQ_A_AND ? PQ_X_AND : PQ_X_OR, items, a->n_args, a->pos);
    }
    }
    pq_fail(b->err, PQ_E_USAGE, "unsupported expression at position %d", a->pos);
    return NULL;
}

int pq_expr_compile(const char *text, const pq_expr_column *cols, int n_cols, pq_arena *arena,
                    pq_expr **out, pq_error *err)
{
    pq_ast *ast;
    PQ_TRY(pq_x_parse(text, strlen(text), arena, &ast, err));
    binder b = {.cols = cols, .n_cols = n_cols, .arena = arena, .err = err};
    pq_expr *e = bind(&b, ast);
    if (!e)
        return PQ_ERR;
    if (e->kind == PQ_X_COLUMN)
        PQ_TRY(usable(&b, e));
    if (!is_null_literal(e) && e->type != PQ_V_BOOL)
        return pq_fail(err, PQ_E_USAGE, "the expression is not a condition: it has type %s",
                       type_name(e));
    e = pq_x_normalize(e, arena, err);
    if (!e)
        return PQ_ERR;
    *out = e;
    return PQ_OK;
}
