#include "render.h"

#include <stdlib.h>
#include <string.h>

#include "numfmt.h"

/* ------------------------------------------------------------------ formats */

pq_cell_format pq_cell_format_of(const pq_node *n)
{
    pq_cell_format f = {.kind = PQ_CELL_BINARY, .phys = n->phys};
    const pq_logical *l = &n->logical;
    switch (n->phys) {
    case PQ_BOOLEAN: f.kind = PQ_CELL_BOOL; break;
    case PQ_INT32: f.kind = PQ_CELL_I32; break;
    case PQ_INT64: f.kind = PQ_CELL_I64; break;
    case PQ_INT96: f.kind = PQ_CELL_INT96; f.utc = l->utc; break; /* utc: a table format's typing (tablefmt.h) */
    case PQ_FLOAT: f.kind = PQ_CELL_FLOAT; break;
    case PQ_DOUBLE: f.kind = PQ_CELL_DOUBLE; break;
    case PQ_BYTE_ARRAY: case PQ_FIXED_LEN_BYTE_ARRAY: f.kind = PQ_CELL_BINARY; break;
    }
    switch (l->kind) {
    case PQ_LT_STRING: case PQ_LT_ENUM: case PQ_LT_JSON:
        if (n->phys == PQ_BYTE_ARRAY || n->phys == PQ_FIXED_LEN_BYTE_ARRAY) f.kind = PQ_CELL_STRING;
        break;
    case PQ_LT_INTEGER:
        if (n->phys == PQ_INT32) f.kind = l->is_signed ? PQ_CELL_I32 : PQ_CELL_U32;
        else if (n->phys == PQ_INT64) f.kind = l->is_signed ? PQ_CELL_I64 : PQ_CELL_U64;
        break;
    case PQ_LT_DECIMAL:
        f.scale = l->scale;
        if (n->phys == PQ_INT32) f.kind = PQ_CELL_DECIMAL_I32;
        else if (n->phys == PQ_INT64) f.kind = PQ_CELL_DECIMAL_I64;
        else if (n->phys == PQ_BYTE_ARRAY || n->phys == PQ_FIXED_LEN_BYTE_ARRAY)
            f.kind = PQ_CELL_DECIMAL_BYTES;
        break;
    case PQ_LT_DATE:
        if (n->phys == PQ_INT32) f.kind = PQ_CELL_DATE;
        break;
    case PQ_LT_TIME:
        f.digits = l->unit == PQ_UNIT_MILLIS ? 3 : l->unit == PQ_UNIT_MICROS ? 6 : 9;
        if ((n->phys == PQ_INT32 && l->unit == PQ_UNIT_MILLIS) ||
            (n->phys == PQ_INT64 && l->unit != PQ_UNIT_MILLIS))
            f.kind = PQ_CELL_TIME;
        break;
    case PQ_LT_TIMESTAMP:
        f.digits = l->unit == PQ_UNIT_MILLIS ? 3 : l->unit == PQ_UNIT_MICROS ? 6 : 9;
        f.utc = l->utc;
        if (n->phys == PQ_INT64) f.kind = PQ_CELL_TIMESTAMP;
        break;
    case PQ_LT_UUID:
        if (n->phys == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length == 16) f.kind = PQ_CELL_UUID;
        break;
    case PQ_LT_FLOAT16:
        if (n->phys == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length == 2) f.kind = PQ_CELL_FLOAT16;
        break;
    case PQ_LT_UNKNOWN: f.kind = PQ_CELL_NULL; break;
    default: break;
    }
    if (l->kind == PQ_LT_NONE && n->converted == PQ_CT_INTERVAL &&
        n->phys == PQ_FIXED_LEN_BYTE_ARRAY && n->type_length == 12)
        f.kind = PQ_CELL_INTERVAL;
    return f;
}

/* ------------------------------------------------------------------ text helpers */

/* Bytes that force a CSV field to be quoted. */
static const uint8_t csv_special[256] = {[','] = 1, ['"'] = 1, ['\n'] = 1, ['\r'] = 1};

/* Whether any byte of v equals the byte replicated in `pattern` (exact). */
static inline uint64_t has_byte(uint64_t v, uint64_t pattern)
{
    uint64_t x = v ^ pattern;
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* Whether the text holds a byte that needs quoting, 8 bytes at a time. */
static inline bool needs_quoting(const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        if (has_byte(v, 0x2c2c2c2c2c2c2c2cull) | has_byte(v, 0x2222222222222222ull) |
            has_byte(v, 0x0a0a0a0a0a0a0a0aull) | has_byte(v, 0x0d0d0d0d0d0d0d0dull))
            return true;
    }
    for (; i < n; i++)
        if (csv_special[p[i]]) return true;
    return false;
}

/* Writes one CSV field; w has room for 2 * n + 2 bytes. */
static char *write_csv_string(char *w, const uint8_t *s, size_t n)
{
    if (n && !needs_quoting(s, n)) {
        memcpy(w, s, n);
        return w + n;
    }
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') *w++ = '"';
        *w++ = (char)s[i];
    }
    *w++ = '"';
    return w;
}

int pq_csv_field(const char *s, size_t n, pq_buf *out)
{
    if (pq_buf_reserve(out, 2 * n + 2)) return -1;
    char *w = write_csv_string(out->data + out->len, (const uint8_t *)s, n);
    out->len = (size_t)(w - out->data);
    return 0;
}

static const char hexdig[] = "0123456789ABCDEF";
static const char hexlow[] = "0123456789abcdef";

/* Binary as text: printable ASCII except \ " ' as is, everything else \xHH
 * (DuckDB's blob text, which the canonical CSV follows).  The result never
 * needs CSV quote doubling; in CSV it is quoted when it holds a comma or is
 * empty.  w has room for 4 * n + 2 bytes. */
static char *write_binary(char *w, const uint8_t *p, size_t n, bool csv)
{
    bool quote = csv && (n == 0 || memchr(p, ',', n) != NULL);
    if (quote) *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x7F && c != '\\' && c != '"' && c != '\'') {
            *w++ = (char)c;
        } else {
            *w++ = '\\';
            *w++ = 'x';
            *w++ = hexdig[c >> 4];
            *w++ = hexdig[c & 15];
        }
    }
    if (quote) *w++ = '"';
    return w;
}

static int binary_text(const uint8_t *p, size_t n, bool csv, pq_buf *out)
{
    if (pq_buf_reserve(out, n * 4 + 2)) return -1;
    char *w = write_binary(out->data + out->len, p, n, csv);
    out->len = (size_t)(w - out->data);
    return 0;
}

static int json_string(const uint8_t *p, size_t n, pq_buf *out)
{
    if (pq_buf_reserve(out, n * 6 + 2)) return -1;
    char *w = out->data + out->len;
    *w++ = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\') {
            *w++ = '\\';
            *w++ = (char)c;
        } else if (c < 0x20) {
            memcpy(w, "\\u00", 4);
            w += 4;
            *w++ = hexlow[c >> 4];
            *w++ = hexlow[c & 15];
        } else {
            *w++ = (char)c;
        }
    }
    *w++ = '"';
    out->len = (size_t)(w - out->data);
    return 0;
}

static inline int32_t load_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (int32_t)v;
}

static size_t fmt_int96(const pq_int96 *v, char *w)
{
    /* Readers show INT96 with microsecond precision (pq_int96_micros). */
    return pq_fmt_timestamp(pq_int96_micros(v->b), 6, w);
}

static size_t fmt_uuid(const uint8_t *p, char *w)
{
    char *s = w;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *w++ = '-';
        *w++ = hexlow[p[i] >> 4];
        *w++ = hexlow[p[i] & 15];
    }
    return (size_t)(w - s);
}

static size_t fmt_interval(const uint8_t *p, char *w)
{
    uint32_t months = (uint32_t)load_le32(p), days = (uint32_t)load_le32(p + 4),
             millis = (uint32_t)load_le32(p + 8);
    char *s = w;
    uint32_t years = months / 12;
    months %= 12;
    if (years) {
        w += pq_fmt_u32(years, w);
        memcpy(w, years == 1 ? " year " : " years ", years == 1 ? 6 : 7);
        w += years == 1 ? 6 : 7;
    }
    if (months) {
        w += pq_fmt_u32(months, w);
        memcpy(w, months == 1 ? " month " : " months ", months == 1 ? 7 : 8);
        w += months == 1 ? 7 : 8;
    }
    if (days) {
        w += pq_fmt_u32(days, w);
        memcpy(w, days == 1 ? " day " : " days ", days == 1 ? 5 : 6);
        w += days == 1 ? 5 : 6;
    }
    /* As DuckDB prints an interval: no time part when it is zero, unless
     * that is all there is ("1 day", "00:00:00"). */
    if (millis == 0 && w > s) return (size_t)(w - s) - 1; /* the trailing space */
    w += pq_fmt_time((int64_t)millis, 3, w);
    return (size_t)(w - s);
}

/* Fixed-width text of a non-string value; returns bytes written (room for
 * PQ_FMT_MAX + 16 bytes is guaranteed by the caller) or 0 when the kind is
 * a byte-string kind. */
static size_t fixed_text(const pq_cell_format *f, const void *values, size_t i, char *w)
{
    switch (f->kind) {
    case PQ_CELL_BOOL:
        if (((const uint8_t *)values)[i]) {
            memcpy(w, "true", 4);
            return 4;
        }
        memcpy(w, "false", 5);
        return 5;
    case PQ_CELL_I32: return pq_fmt_i32(((const int32_t *)values)[i], w);
    case PQ_CELL_U32: return pq_fmt_u32((uint32_t)((const int32_t *)values)[i], w);
    case PQ_CELL_I64: return pq_fmt_i64(((const int64_t *)values)[i], w);
    case PQ_CELL_U64: return pq_fmt_u64((uint64_t)((const int64_t *)values)[i], w);
    case PQ_CELL_FLOAT: return pq_fmt_float(((const float *)values)[i], w);
    case PQ_CELL_DOUBLE: return pq_fmt_double(((const double *)values)[i], w);
    case PQ_CELL_FLOAT16: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        uint16_t bits = (uint16_t)(b->ptr[0] | (b->ptr[1] << 8));
        return pq_fmt_float(pq_half_to_float(bits), w);
    }
    case PQ_CELL_DECIMAL_I32: return pq_fmt_decimal_i64(((const int32_t *)values)[i], f->scale, w);
    case PQ_CELL_DECIMAL_I64: return pq_fmt_decimal_i64(((const int64_t *)values)[i], f->scale, w);
    case PQ_CELL_DATE: return pq_fmt_date(((const int32_t *)values)[i], w);
    case PQ_CELL_TIME:
        if (f->phys == PQ_INT32) return pq_fmt_time(((const int32_t *)values)[i], f->digits, w);
        return pq_fmt_time(((const int64_t *)values)[i], f->digits, w);
    case PQ_CELL_TIMESTAMP: {
        size_t n = pq_fmt_timestamp(((const int64_t *)values)[i], f->digits, w);
        if (f->utc) {
            memcpy(w + n, "+00", 3);
            n += 3;
        }
        return n;
    }
    case PQ_CELL_INT96: {
        size_t n = fmt_int96(&((const pq_int96 *)values)[i], w);
        if (f->utc) {
            memcpy(w + n, "+00", 3);
            n += 3;
        }
        return n;
    }
    case PQ_CELL_UUID: return fmt_uuid(((const pq_bytes *)values)[i].ptr, w);
    case PQ_CELL_INTERVAL: return fmt_interval(((const pq_bytes *)values)[i].ptr, w);
    default: return 0;
    }
}

#define FIXED_ROOM (PQ_FMT_MAX + 64)

/* Room one CSV cell can take. */
static inline size_t cell_room(const pq_cell_format *f, const void *values, size_t i)
{
    switch (f->kind) {
    case PQ_CELL_STRING: return 2 * (size_t)((const pq_bytes *)values)[i].len + 2;
    case PQ_CELL_BINARY: return 4 * (size_t)((const pq_bytes *)values)[i].len + 2;
    case PQ_CELL_DECIMAL_BYTES: return pq_fmt_decimal_max(((const pq_bytes *)values)[i].len, f->scale) + 2;
    default: return FIXED_ROOM;
    }
}

/* Writes one cell; w has cell_room() bytes. */
static inline char *write_cell(const pq_cell_format *f, const void *values, size_t i, char *w)
{
    switch (f->kind) {
    case PQ_CELL_NULL: return w;
    case PQ_CELL_STRING: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        return write_csv_string(w, b->ptr, b->len);
    }
    case PQ_CELL_BINARY: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        return write_binary(w, b->ptr, b->len, true);
    }
    case PQ_CELL_DECIMAL_BYTES: {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        if (b->len == 0) {
            *w = '0';
            return w + 1;
        }
        return w + pq_fmt_decimal_be(b->ptr, b->len, f->scale, w);
    }
    default: return w + fixed_text(f, values, i, w);
    }
}

int pq_csv_cell(const pq_cell_format *f, const void *values, size_t i, pq_buf *out)
{
    if (pq_buf_reserve(out, cell_room(f, values, i))) return -1;
    out->len = (size_t)(write_cell(f, values, i, out->data + out->len) - out->data);
    return 0;
}

static bool json_numeric(pq_cell_kind k)
{
    switch (k) {
    case PQ_CELL_I32: case PQ_CELL_U32: case PQ_CELL_I64: case PQ_CELL_U64:
    case PQ_CELL_FLOAT: case PQ_CELL_DOUBLE: case PQ_CELL_FLOAT16:
    case PQ_CELL_DECIMAL_I32: case PQ_CELL_DECIMAL_I64: case PQ_CELL_DECIMAL_BYTES:
    case PQ_CELL_BOOL:
        return true;
    default: return false;
    }
}

int pq_json_cell(const pq_cell_format *f, const void *values, size_t i, pq_buf *out)
{
    if (f->kind == PQ_CELL_NULL) return pq_buf_append(out, "null", 4);
    if (f->kind == PQ_CELL_STRING) {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        return json_string(b->ptr, b->len, out);
    }
    if (f->kind == PQ_CELL_BINARY) {
        const pq_bytes *b = &((const pq_bytes *)values)[i];
        pq_buf tmp;
        pq_buf_init(&tmp);
        int rc = binary_text(b->ptr, b->len, false, &tmp);
        if (!rc) rc = json_string((const uint8_t *)tmp.data, tmp.len, out);
        pq_buf_free(&tmp);
        return rc;
    }
    size_t start = out->len;
    if (pq_csv_cell(f, values, i, out)) return -1;
    if (json_numeric(f->kind)) {
        /* JSON has no nan/inf: use the spellings JavaScript and Python read. */
        size_t n = out->len - start;
        const char *s = out->data + start;
        if (n == 3 && !memcmp(s, "nan", 3)) {
            out->len = start;
            return pq_buf_append(out, "NaN", 3);
        }
        if ((n == 3 && !memcmp(s, "inf", 3)) || (n == 4 && !memcmp(s, "-inf", 4))) {
            bool neg = n == 4;
            out->len = start;
            return pq_buf_puts(out, neg ? "-Infinity" : "Infinity");
        }
        return 0;
    }
    /* dates, times, timestamps, uuids, intervals: JSON strings */
    size_t n = out->len - start;
    if (pq_buf_reserve(out, 2)) return -1;
    memmove(out->data + start + 1, out->data + start, n);
    out->data[start] = '"';
    out->data[start + n + 1] = '"';
    out->len += 2;
    return 0;
}

int pq_csv_header(const char *const *names, int n, pq_buf *out)
{
    for (int i = 0; i < n; i++) {
        if (i && pq_buf_append(out, ",", 1)) return -1;
        if (pq_csv_field(names[i], strlen(names[i]), out)) return -1;
    }
    return pq_buf_append(out, "\n", 1);
}

/* ------------------------------------------------------------------ nested assembly */

typedef struct leaf_cursor {
    const pq_col_batch *b;
    pq_cell_format fmt;
    int32_t lvl;
    int32_t val;
    uint16_t max_def;
} leaf_cursor;

typedef struct json_ctx {
    leaf_cursor *cur;          /* indexed by leaf - base */
    int32_t base;
    pq_buf *out;
    pq_error *err;
} json_ctx;

static int levels_ran_out(json_ctx *c)
{
    return pq_fail(c->err, PQ_E_CORRUPT, "repetition/definition levels are inconsistent across the leaves of a nested column");
}

static inline uint16_t def_at(const leaf_cursor *lc)
{
    return lc->b->def ? lc->b->def[lc->lvl] : 0;
}

/* Node n is absent (NULL, or an empty collection): one level entry of each
 * of its leaves is passed over.  Every leaf must be below `def_limit` there
 * too, or one of its values would be skipped unwritten and the values after
 * it would shift (and with them the output, by where batches end). */
static int advance_absent(json_ctx *c, const pq_node *n, int32_t def_limit)
{
    for (int32_t i = 0; i < n->n_leaves; i++) {
        leaf_cursor *lc = &c->cur[n->first_leaf + i - c->base];
        if (lc->lvl >= lc->b->n_levels || def_at(lc) >= def_limit) return levels_ran_out(c);
        lc->lvl++;
    }
    return PQ_OK;
}

/* Whether the collection n continues at the cursor's next level entry. */
static inline bool continues(const leaf_cursor *lc, const pq_node *n)
{
    return lc->lvl < lc->b->n_levels && lc->b->rep && lc->b->rep[lc->lvl] == n->elem_rep_level;
}

static int render_json(json_ctx *c, const pq_node *n);

static int render_collection(json_ctx *c, const pq_node *n, leaf_cursor *lc)
{
    bool is_map = n->kind == PQ_NODE_MAP;
    if (def_at(lc) < n->elem_def_level) {
        if (pq_buf_append(c->out, is_map ? "{}" : "[]", 2)) return -1;
        return advance_absent(c, n, n->elem_def_level);
    }
    if (pq_buf_append(c->out, is_map ? "{" : "[", 1)) return -1;
    for (bool first = true;; first = false) {
        if (!first && pq_buf_append(c->out, ",", 1)) return -1;
        if (!is_map) {
            PQ_TRY(render_json(c, n->children[0]));
        } else {
            /* Keys are JSON strings: render the key, then quote it unless it
             * is a string already. */
            size_t at = c->out->len;
            PQ_TRY(render_json(c, n->children[0]));
            if (c->out->len == at || c->out->data[at] != '"') {
                size_t klen = c->out->len - at;
                if (pq_buf_reserve(c->out, 2)) return -1;
                memmove(c->out->data + at + 1, c->out->data + at, klen);
                c->out->data[at] = '"';
                c->out->data[at + klen + 1] = '"';
                c->out->len += 2;
            }
            if (pq_buf_append(c->out, ":", 1)) return -1;
            if (n->n_children > 1) PQ_TRY(render_json(c, n->children[1]));
            else if (pq_buf_append(c->out, "null", 4)) return -1;
        }
        /* The first leaf decides; every other leaf must agree. */
        bool more = continues(lc, n);
        for (int32_t i = 1; i < n->n_leaves; i++)
            if (continues(&c->cur[n->first_leaf + i - c->base], n) != more) return levels_ran_out(c);
        if (!more) break;
    }
    return pq_buf_append(c->out, is_map ? "}" : "]", 1);
}

static int render_json(json_ctx *c, const pq_node *n)
{
    leaf_cursor *lc = &c->cur[n->first_leaf - c->base];
    if (n->n_leaves == 0) return pq_buf_append(c->out, "null", 4);
    if (lc->lvl >= lc->b->n_levels) return levels_ran_out(c);
    if (def_at(lc) < n->def_level) {
        if (pq_buf_append(c->out, "null", 4)) return -1;
        return advance_absent(c, n, n->def_level);
    }
    switch (n->kind) {
    case PQ_NODE_PRIMITIVE:
        if (def_at(lc) < lc->max_def) {
            if (pq_buf_append(c->out, "null", 4)) return -1;
        } else {
            if (lc->val >= lc->b->n_values) return levels_ran_out(c);
            if (pq_json_cell(&lc->fmt, lc->b->values, (size_t)lc->val, c->out)) return -1;
            lc->val++;
        }
        lc->lvl++;
        return PQ_OK;
    case PQ_NODE_STRUCT:
        if (pq_buf_append(c->out, "{", 1)) return -1;
        for (int32_t i = 0; i < n->n_children; i++) {
            if (i && pq_buf_append(c->out, ",", 1)) return -1;
            const char *nm = n->children[i]->name;
            if (json_string((const uint8_t *)nm, strlen(nm), c->out)) return -1;
            if (pq_buf_append(c->out, ":", 1)) return -1;
            PQ_TRY(render_json(c, n->children[i]));
        }
        return pq_buf_append(c->out, "}", 1);
    case PQ_NODE_LIST:
    case PQ_NODE_MAP:
        return render_collection(c, n, lc);
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ rows */

typedef struct col_state {
    const pq_out_col *col;
    pq_cell_format fmt;
    bool flat;
    uint16_t max_def;
    int32_t val;               /* flat: next value index */
    json_ctx json;             /* nested */
} col_state;

#define STACK_COLS 64
#define STACK_LEAVES 256

static int32_t collect_leaf_nodes(const pq_node *n, leaf_cursor *cur, int32_t at)
{
    if (n->kind == PQ_NODE_PRIMITIVE) {
        cur[at].fmt = pq_cell_format_of(n);
        cur[at].max_def = (uint16_t)n->def_level;
        return at + 1;
    }
    for (int32_t i = 0; i < n->n_children; i++) at = collect_leaf_nodes(n->children[i], cur, at);
    return at;
}

int pq_csv_rows(const pq_out_col *cols, int n_cols, int32_t n_rows, const uint8_t *keep,
                pq_buf *out, size_t *row_ends, pq_error *err)
{
    col_state stack_states[STACK_COLS];
    leaf_cursor stack_cursors[STACK_LEAVES];
    col_state *st = stack_states;
    leaf_cursor *cursors = stack_cursors;
    void *heap = NULL;
    int32_t total_leaves = 0;
    for (int j = 0; j < n_cols; j++)
        if (cols[j].node && cols[j].node->kind != PQ_NODE_PRIMITIVE)
            total_leaves += cols[j].node->n_leaves;
    if (n_cols > STACK_COLS || total_leaves > STACK_LEAVES) {
        heap = malloc(sizeof(col_state) * (size_t)n_cols + sizeof(leaf_cursor) * (size_t)total_leaves + 1);
        if (!heap) return PQ_NOMEM(err);
        st = heap;
        cursors = (leaf_cursor *)(st + n_cols);
    }
    pq_buf scratch;
    pq_buf_init(&scratch);
    int rc = PQ_OK;
    leaf_cursor *lcur = cursors;
    for (int j = 0; j < n_cols && rc == PQ_OK; j++) {
        col_state *s = &st[j];
        memset(s, 0, sizeof *s);
        s->col = &cols[j];
        const pq_node *nd = cols[j].node;
        if (!nd) continue;
        for (int32_t k = 0; k < nd->n_leaves; k++)
            if (cols[j].leaves[k].n_rows != n_rows)
                rc = pq_fail(err, PQ_E_CORRUPT, "column '%s' has %d rows where %d were expected",
                             nd->name, cols[j].leaves[k].n_rows, n_rows);
        if (nd->kind == PQ_NODE_PRIMITIVE) {
            s->flat = true;
            s->fmt = pq_cell_format_of(nd);
            s->max_def = (uint16_t)nd->def_level;
        } else {
            int32_t got = collect_leaf_nodes(nd, lcur, 0);
            for (int32_t k = 0; k < got; k++) {
                lcur[k].b = &cols[j].leaves[k];
                lcur[k].lvl = 0;
                lcur[k].val = 0;
            }
            s->json = (json_ctx){.cur = lcur, .base = nd->first_leaf, .out = &scratch, .err = err};
            lcur += got;
        }
    }
    /* Cells are written through a cursor; the buffer grows only when a
     * cell might not fit (no per-cell function call for room). */
    char *w = NULL, *end = NULL;
#define ROOM(need)                                                                    \
    do {                                                                              \
        size_t need_ = (need);                                                        \
        if (!w || (size_t)(end - w) < need_) {                                        \
            if (w) out->len = (size_t)(w - out->data);                                \
            if (pq_buf_reserve(out, need_ + 65536)) goto oom;                         \
            w = out->data + out->len;                                                 \
            end = out->data + out->cap;                                               \
        }                                                                             \
    } while (0)
    ROOM(256);
    for (int32_t r = 0; r < n_rows && rc == PQ_OK; r++) {
        bool emit = !keep || keep[r];
        for (int j = 0; j < n_cols; j++) {
            col_state *s = &st[j];
            if (emit && j) {
                ROOM(1);
                *w++ = ',';
            }
            if (s->flat) {
                const pq_col_batch *b = s->col->leaves;
                if (b->def && b->def[r] != s->max_def) continue;
                if (emit) {
                    ROOM(cell_room(&s->fmt, b->values, (size_t)s->val));
                    w = write_cell(&s->fmt, b->values, (size_t)s->val, w);
                }
                s->val++;
            } else if (s->col->node) {
                const leaf_cursor *top = &s->json.cur[0];
                if (top->lvl < top->b->n_levels && top->b->def &&
                    top->b->def[top->lvl] < s->col->node->def_level) {
                    /* The whole value is NULL: an empty field, not JSON null. */
                    if (advance_absent(&s->json, s->col->node, s->col->node->def_level) != PQ_OK) {
                        rc = PQ_ERR;
                        break;
                    }
                    continue;
                }
                scratch.len = 0;
                if (render_json(&s->json, s->col->node) != PQ_OK) {
                    rc = PQ_ERR;
                    break;
                }
                if (emit) {
                    ROOM(2 * scratch.len + 2);
                    w = write_csv_string(w, (const uint8_t *)scratch.data, scratch.len);
                }
            } else if (emit) {
                ROOM(s->col->constant_len);
                memcpy(w, s->col->constant, s->col->constant_len);
                w += s->col->constant_len;
            }
        }
        if (emit && rc == PQ_OK) {
            ROOM(1);
            *w++ = '\n';
            if (row_ends) *row_ends++ = (size_t)(w - out->data);
        }
    }
#undef ROOM
    /* Every leaf of a nested column must have been walked to its end: levels
     * or values left over mean the leaves disagree on the rows. */
    for (int j = 0; j < n_cols && rc == PQ_OK; j++) {
        col_state *s = &st[j];
        if (s->flat || !s->col->node) continue;
        for (int32_t k = 0; k < s->col->node->n_leaves && rc == PQ_OK; k++) {
            const leaf_cursor *lc = &s->json.cur[k];
            if (lc->lvl != lc->b->n_levels || lc->val != lc->b->n_values) rc = levels_ran_out(&s->json);
        }
    }
    out->len = (size_t)(w - out->data);
    pq_buf_free(&scratch);
    free(heap);
    return rc;
oom:
    pq_buf_free(&scratch);
    free(heap);
    return pq_fail(err, PQ_E_NOMEM, "out of memory rendering CSV");
}
