#include "colwrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "codec.h"
#include "encoding.h"
#include "bloom.h"

#define DEFAULT_PAGE_SIZE (1u << 20)
#define DEFAULT_DICT_LIMIT (1u << 20)
/* Levels taken per step: a page ends at the first row boundary after it
 * reaches page_size, so this is how far past page_size it may run. */
#define SLICE_LEVELS 1024
/* Values of the first page after which a dictionary must already pay off
 * (checked after each batch): high-cardinality columns stop hashing early. */
#define DICT_PROBE_VALUES 1024
/* Byte-array bounds longer than this are truncated (pq_write_opts docs). */
#define MAX_BOUND_LEN 64

/* Grows an array to n elements; returns -1 (the array kept) when out of memory. */
#define GROW(ptr, n)                                                   \
    do {                                                               \
        void *grown_ = realloc((ptr), (size_t)(n) * sizeof *(ptr));    \
        if (!grown_) return -1;                                        \
        (ptr) = grown_;                                                \
    } while (0)

void pq_write_opts_init(pq_write_opts *o)
{
    memset(o, 0, sizeof *o);
    o->codec = PQ_CODEC_ZSTD;
    o->level = 3;
}

/* Whether `leaf` is one of o->bloom_columns (its path or its top-level
 * field's name). */
static bool wants_bloom(const pq_write_opts *o, const pq_leaf *leaf)
{
    const pq_node *top = leaf->node;
    while (top->parent && top->parent->parent) top = top->parent;
    for (int i = 0; i < o->n_bloom_columns; i++)
        if (!strcmp(o->bloom_columns[i], leaf->path) || !strcmp(o->bloom_columns[i], top->name)) return true;
    return false;
}

/* ------------------------------------------------------------------ sort orders */

pq_value_order pq_value_order_of(const pq_node *n)
{
    const pq_logical *lt = &n->logical;
    if (n->converted == PQ_CT_DECIMAL || lt->kind == PQ_LT_DECIMAL) {
        /* Signed, by value, whatever the storage (as the format defines). */
        switch (n->phys) {
        case PQ_INT32: return PQ_ORD_I32;
        case PQ_INT64: return PQ_ORD_I64;
        case PQ_BYTE_ARRAY: case PQ_FIXED_LEN_BYTE_ARRAY: return PQ_ORD_DEC_BE;
        default: return PQ_ORD_NONE;
        }
    }
    if (n->converted == PQ_CT_INTERVAL ||
        (lt->kind != PQ_LT_NONE && lt->kind != PQ_LT_STRING && lt->kind != PQ_LT_ENUM && lt->kind != PQ_LT_DATE &&
         lt->kind != PQ_LT_TIME && lt->kind != PQ_LT_TIMESTAMP && lt->kind != PQ_LT_INTEGER &&
         lt->kind != PQ_LT_JSON && lt->kind != PQ_LT_BSON && lt->kind != PQ_LT_UUID))
        return PQ_ORD_NONE;
    bool is_unsigned = (lt->kind == PQ_LT_INTEGER && !lt->is_signed) || n->converted == PQ_CT_UINT_8 ||
                       n->converted == PQ_CT_UINT_16 || n->converted == PQ_CT_UINT_32 ||
                       n->converted == PQ_CT_UINT_64;
    switch (n->phys) {
    case PQ_BOOLEAN: return PQ_ORD_BOOL;
    case PQ_INT32: return is_unsigned ? PQ_ORD_U32 : PQ_ORD_I32;
    case PQ_INT64: return is_unsigned ? PQ_ORD_U64 : PQ_ORD_I64;
    case PQ_FLOAT: return PQ_ORD_F32;
    case PQ_DOUBLE: return PQ_ORD_F64;
    case PQ_BYTE_ARRAY: case PQ_FIXED_LEN_BYTE_ARRAY: return PQ_ORD_BYTES;
    default: return PQ_ORD_NONE;
    }
}

/* Compares two PLAIN values (fixed types) or byte strings (PQ_ORD_BYTES). */
int pq_value_order_cmp(pq_value_order k, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    union { int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; float f; double d; } x, y;
    switch (k) {
    case PQ_ORD_BOOL: return (a[0] != 0) - (b[0] != 0);
    case PQ_ORD_I32: memcpy(&x.i32, a, 4); memcpy(&y.i32, b, 4); return (x.i32 > y.i32) - (x.i32 < y.i32);
    case PQ_ORD_U32: memcpy(&x.u32, a, 4); memcpy(&y.u32, b, 4); return (x.u32 > y.u32) - (x.u32 < y.u32);
    case PQ_ORD_I64: memcpy(&x.i64, a, 8); memcpy(&y.i64, b, 8); return (x.i64 > y.i64) - (x.i64 < y.i64);
    case PQ_ORD_U64: memcpy(&x.u64, a, 8); memcpy(&y.u64, b, 8); return (x.u64 > y.u64) - (x.u64 < y.u64);
    case PQ_ORD_F32: memcpy(&x.f, a, 4); memcpy(&y.f, b, 4); return (x.f > y.f) - (x.f < y.f);
    case PQ_ORD_F64: memcpy(&x.d, a, 8); memcpy(&y.d, b, 8); return (x.d > y.d) - (x.d < y.d);
    case PQ_ORD_BYTES: {
        size_t n = alen < blen ? alen : blen;
        int c = n ? memcmp(a, b, n) : 0;
        if (c) return c < 0 ? -1 : 1;
        return (alen > blen) - (alen < blen);
    }
    case PQ_ORD_DEC_BE: {
        /* The shorter one sign-extended to the longer; the first byte
         * compared signed, the rest unsigned.  No bytes is 0. */
        bool an = alen && (a[0] & 0x80), bn = blen && (b[0] & 0x80);
        if (an != bn) return an ? -1 : 1;
        size_t n = alen > blen ? alen : blen;
        for (size_t i = 0; i < n; i++) {
            unsigned ab = i < n - alen ? (an ? 0xffu : 0u) : a[i - (n - alen)];
            unsigned bb = i < n - blen ? (bn ? 0xffu : 0u) : b[i - (n - blen)];
            if (ab != bb) return ab < bb ? -1 : 1;
        }
        return 0;
    }
    default: return 0;
    }
}

/* The smallest and largest value seen (NaN left out), as PLAIN bytes. */
typedef struct bounds {
    bool any;
    pq_buf lo, hi;
} bounds;

static int bounds_offer(bounds *b, pq_value_order k, const uint8_t *lo, size_t lo_len, const uint8_t *hi, size_t hi_len)
{
    if (!b->any || pq_value_order_cmp(k, lo, lo_len, (const uint8_t *)b->lo.data, b->lo.len) < 0) {
        pq_buf_clear(&b->lo);
        if (pq_buf_append(&b->lo, lo, lo_len)) return -1;
    }
    if (!b->any || pq_value_order_cmp(k, hi, hi_len, (const uint8_t *)b->hi.data, b->hi.len) > 0) {
        pq_buf_clear(&b->hi);
        if (pq_buf_append(&b->hi, hi, hi_len)) return -1;
    }
    b->any = true;
    return 0;
}

/* Min and max of n typed values, offered to b. */
#define TYPED_BOUNDS(T, ISNAN)                                                                    \
    do {                                                                                          \
        const T *v = values;                                                                      \
        T lo = 0, hi = 0;                                                                         \
        bool seen = false;                                                                        \
        for (int32_t i = 0; i < n; i++) {                                                         \
            T x = v[i];                                                                           \
            if (ISNAN) continue;                                                                  \
            if (!seen) { lo = hi = x; seen = true; }                                              \
            else if (x < lo) lo = x;                                                              \
            else if (x > hi) hi = x;                                                              \
        }                                                                                         \
        if (seen && bounds_offer(b, k, (const uint8_t *)&lo, sizeof lo, (const uint8_t *)&hi, sizeof hi)) \
            return -1;                                                                            \
    } while (0)

static int bounds_add(bounds *b, pq_value_order k, const void *values, int32_t n)
{
    switch (k) {
    case PQ_ORD_BOOL: TYPED_BOUNDS(uint8_t, false); break;
    case PQ_ORD_I32: TYPED_BOUNDS(int32_t, false); break;
    case PQ_ORD_U32: TYPED_BOUNDS(uint32_t, false); break;
    case PQ_ORD_I64: TYPED_BOUNDS(int64_t, false); break;
    case PQ_ORD_U64: TYPED_BOUNDS(uint64_t, false); break;
    case PQ_ORD_F32: TYPED_BOUNDS(float, isnan(x)); break;
    case PQ_ORD_F64: TYPED_BOUNDS(double, isnan(x)); break;
    case PQ_ORD_BYTES:
    case PQ_ORD_DEC_BE: {
        const pq_bytes *v = values;
        if (n <= 0) break;
        int32_t lo = 0, hi = 0;
        for (int32_t i = 1; i < n; i++) {
            if (pq_value_order_cmp(k, v[i].ptr, v[i].len, v[lo].ptr, v[lo].len) < 0) lo = i;
            else if (pq_value_order_cmp(k, v[i].ptr, v[i].len, v[hi].ptr, v[hi].len) > 0) hi = i;
        }
        if (bounds_offer(b, k, v[lo].ptr, v[lo].len, v[hi].ptr, v[hi].len)) return -1;
        break;
    }
    default: break;
    }
    return 0;
}

/* The bounds as statistics bytes (into arena): floats' zeros widened (-0.0
 * as the min, +0.0 as the max, as the format asks), long byte strings
 * truncated.  Returns 0, 1 when no bound can be given, -1 out of memory. */
static int bounds_export(const bounds *b, pq_value_order k, bool truncate, pq_arena *arena, pq_bytes *lo, pq_bytes *hi,
                         bool *lo_exact, bool *hi_exact)
{
    if (!b->any) return 1;
    size_t lo_len = b->lo.len, hi_len = b->hi.len;
    *lo_exact = *hi_exact = true;
    if (truncate) {
        if (lo_len > MAX_BOUND_LEN) {
            lo_len = MAX_BOUND_LEN; /* a prefix sorts at or before the value */
            *lo_exact = false;
        }
        if (hi_len > MAX_BOUND_LEN) {
            hi_len = MAX_BOUND_LEN;
            *hi_exact = false;
        }
    }
    uint8_t *l = pq_arena_alloc(arena, lo_len ? lo_len : 1);
    uint8_t *h = pq_arena_alloc(arena, hi_len ? hi_len : 1);
    if (!l || !h) return -1;
    if (lo_len) memcpy(l, b->lo.data, lo_len);
    if (hi_len) memcpy(h, b->hi.data, hi_len);
    if (!*hi_exact) {
        /* The prefix, last byte below 0xff incremented (and cut there), sorts
         * after every value that starts with the prefix. */
        while (hi_len > 0 && h[hi_len - 1] == 0xff) hi_len--;
        if (hi_len == 0) return 1;
        h[hi_len - 1]++;
    }
    if (k == PQ_ORD_F32) {
        float f;
        memcpy(&f, l, 4);
        if (f == 0.0f) { f = -0.0f; memcpy(l, &f, 4); }
        memcpy(&f, h, 4);
        if (f == 0.0f) { f = 0.0f; memcpy(h, &f, 4); }
    } else if (k == PQ_ORD_F64) {
        double d;
        memcpy(&d, l, 8);
        if (d == 0.0) { d = -0.0; memcpy(l, &d, 8); }
        memcpy(&d, h, 8);
        if (d == 0.0) { d = 0.0; memcpy(h, &d, 8); }
    }
    *lo = (pq_bytes){l, (uint32_t)lo_len};
    *hi = (pq_bytes){h, (uint32_t)hi_len};
    return 0;
}

/* ------------------------------------------------------------------ dictionary */

typedef struct dict {
    uint32_t *slots;           /* entry + 1; 0: empty */
    uint32_t cap;              /* power of two */
    uint32_t n;
    pq_buf plain;              /* the dictionary page's PLAIN values */
    uint32_t *start;           /* byte arrays: where entry i's bytes are in plain */
    uint32_t *len;
    uint32_t alloc;            /* entries start/len can hold */
} dict;

static void dict_free(dict *d)
{
    free(d->slots);
    free(d->start);
    free(d->len);
    pq_buf_free(&d->plain);
}

static inline uint64_t load_small(const uint8_t *p, size_t n)
{
    uint64_t x = 0;
    memcpy(&x, p, n);
    return x;
}

/* Values of up to 8 bytes (most columns) hash with one multiplication. */
static inline uint32_t dict_hash(const uint8_t *p, size_t n, uint32_t mask)
{
    uint64_t h = n <= 8 ? load_small(p, n) * 0x9E3779B97F4A7C15ull : XXH3_64bits(p, n);
    return (uint32_t)(h >> 32) & mask;
}

static inline void dict_entry(const dict *d, bool byte_array, size_t width, uint32_t e, const uint8_t **p,
                              size_t *n)
{
    if (byte_array) {
        *p = (const uint8_t *)d->plain.data + d->start[e];
        *n = d->len[e];
    } else {
        *p = (const uint8_t *)d->plain.data + (size_t)e * width;
        *n = width;
    }
}

static int dict_grow_slots(dict *d, bool byte_array, size_t width)
{
    uint32_t cap = d->cap ? d->cap * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (uint32_t e = 0; e < d->n; e++) {
        const uint8_t *p;
        size_t n;
        dict_entry(d, byte_array, width, e, &p, &n);
        uint32_t h = dict_hash(p, n, cap - 1);
        while (slots[h]) h = (h + 1) & (cap - 1);
        slots[h] = e + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->cap = cap;
    return 0;
}

/* The index of the value (bytes p[0..n); fixed-width values are `n` wide),
 * inserting it when new.  -1: out of memory or a dictionary past 4 GiB. */
static int64_t dict_index(dict *d, bool byte_array, const uint8_t *p, size_t n)
{
    if ((uint64_t)(d->n + 1) * 2 > d->cap && dict_grow_slots(d, byte_array, n)) return -1;
    const bool small = !byte_array && n <= 8;
    const uint64_t key = small ? load_small(p, n) : 0;
    uint32_t h = dict_hash(p, n, d->cap - 1);
    for (;;) {
        uint32_t e = d->slots[h];
        if (!e) break;
        const uint8_t *q;
        size_t qn;
        dict_entry(d, byte_array, n, e - 1, &q, &qn);
        if (small ? load_small(q, n) == key : qn == n && (n == 0 || memcmp(p, q, n) == 0)) return e - 1;
        h = (h + 1) & (d->cap - 1);
    }
    if (byte_array) {
        if (d->n == d->alloc) {
            uint32_t a = d->alloc ? d->alloc * 2 : 1024;
            GROW(d->start, a);
            GROW(d->len, a);
            d->alloc = a;
        }
        if (d->plain.len + n + 4 > UINT32_MAX) return -1;
        uint32_t len32 = (uint32_t)n;
        if (pq_buf_append(&d->plain, &len32, 4)) return -1;
        d->start[d->n] = (uint32_t)d->plain.len;
        d->len[d->n] = len32;
    }
    if (pq_buf_append(&d->plain, p, n)) return -1;
    d->slots[h] = ++d->n;
    return d->n - 1;
}

/* ------------------------------------------------------------------ the writer */

struct pq_colwriter {
    const pq_leaf *leaf;
    pq_write_opts o;
    pq_value_order ord;
    bool truncate;             /* byte arrays: long bounds are cut */
    int def_bw, rep_bw;
    bool use_dict;             /* dictionary encoding still on */
    dict dict;

    /* the page being filled */
    pq_buf hashes;             /* bloom filter: uint64_t XXH64 of every value */
    pq_buf def, rep;           /* uint32_t levels */
    pq_buf idx;                /* uint32_t dictionary indices */
    pq_buf plain;              /* PLAIN values (booleans: one byte each until encoded) */
    int32_t page_levels, page_values, page_rows;
    size_t page_plain_bytes;   /* the page's values as PLAIN would take */
    bounds page_bounds;

    /* the chunk so far */
    pq_buf pages;              /* encoded data pages */
    pq_buf body, comp, header; /* scratch */
    int64_t rows, levels, nulls, uncompressed;
    bounds chunk_bounds;
    bool stats_ok;             /* every page so far has bounds (or is all null) */
    int32_t n_dict_pages, n_plain_pages;
    /* page index */
    pq_page_location *locs;
    bool *null_pages;
    pq_bytes *page_min, *page_max;
    int64_t *page_nulls;
    int32_t n_pages, pages_alloc;
    pq_arena arena;            /* page bounds (moved to the chunk at finish) */
};

int pq_colwriter_new(const pq_leaf *leaf, const pq_write_opts *opts, pq_colwriter **out, pq_error *err)
{
    *out = NULL;
    if (!pq_codec_supported(opts->codec))
        return pq_fail(err, PQ_E_UNSUPPORTED, "%s: compression %s is not available", leaf->path,
                       pq_codec_name(opts->codec));
    if (leaf->node->phys == PQ_FIXED_LEN_BYTE_ARRAY && leaf->node->type_length <= 0)
        return pq_fail(err, PQ_E_USAGE, "%s: FIXED_LEN_BYTE_ARRAY without a length", leaf->path);
    pq_colwriter *w = calloc(1, sizeof *w);
    if (!w) return PQ_NOMEM(err);
    w->leaf = leaf;
    w->o = *opts;
    if (!w->o.page_size) w->o.page_size = DEFAULT_PAGE_SIZE;
    if (!w->o.dict_limit) w->o.dict_limit = DEFAULT_DICT_LIMIT;
    w->ord = w->o.no_statistics ? PQ_ORD_NONE : pq_value_order_of(leaf->node);
    w->truncate = leaf->node->phys == PQ_BYTE_ARRAY && w->ord == PQ_ORD_BYTES; /* never a decimal's bytes */
    w->def_bw = pq_bit_width((uint32_t)leaf->max_def);
    w->rep_bw = pq_bit_width((uint32_t)leaf->max_rep);
    w->use_dict = !w->o.no_dictionary && leaf->node->phys != PQ_BOOLEAN;
    if (wants_bloom(opts, leaf)) w->o.bloom_filter = true;
    if (leaf->node->phys == PQ_BOOLEAN) w->o.bloom_filter = false;
    if (w->o.bloom_fpp <= 0 || w->o.bloom_fpp >= 1) w->o.bloom_fpp = 0.01;
    w->stats_ok = true;
    pq_arena_init(&w->arena, 4096);
    *out = w;
    return PQ_OK;
}

void pq_colwriter_free(pq_colwriter *w)
{
    if (!w) return;
    dict_free(&w->dict);
    pq_buf *bufs[] = {&w->hashes, &w->def, &w->rep, &w->idx, &w->plain, &w->pages, &w->body, &w->comp, &w->header,
                      &w->page_bounds.lo, &w->page_bounds.hi, &w->chunk_bounds.lo, &w->chunk_bounds.hi};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) pq_buf_free(bufs[i]);
    free(w->locs);
    free(w->null_pages);
    free(w->page_min);
    free(w->page_max);
    free(w->page_nulls);
    pq_arena_free(&w->arena);
    free(w);
}

void pq_chunk_out_free(pq_chunk_out *c)
{
    pq_buf_free(&c->bytes);
    pq_buf_free(&c->column_index);
    pq_buf_free(&c->bloom);
    pq_arena_free(&c->arena);
    memset(c, 0, sizeof *c);
}

void pq_chunks_free(pq_chunk_out *chunks, int32_t n)
{
    if (!chunks) return;
    for (int32_t i = 0; i < n; i++) pq_chunk_out_free(&chunks[i]);
    free(chunks);
}

/* Appends a level section of a v1 page: 4-byte length, then the RLE runs. */
static int put_levels(pq_buf *body, const pq_buf *levels, int32_t n, int bw)
{
    size_t at = body->len;
    uint32_t len = 0;
    if (pq_buf_append(body, &len, 4)) return -1;
    if (pq_rle_encode((const uint32_t *)levels->data, (size_t)n, bw, body)) return -1;
    len = (uint32_t)(body->len - at - 4);
    memcpy(body->data + at, &len, 4);
    return 0;
}

/* Compresses w->body and appends header + bytes of one page to `to`;
 * *page_bytes receives the header and compressed size. */
static int emit_page(pq_colwriter *w, pq_page_header *h, pq_buf *to, size_t *page_bytes, pq_error *err)
{
    pq_buf_clear(&w->comp);
    size_t bound = pq_compress_bound(w->o.codec, w->body.len);
    if (pq_buf_reserve(&w->comp, bound)) return PQ_NOMEM(err);
    size_t clen = 0;
    PQ_TRY(pq_compress(w->o.codec, w->o.level, (const uint8_t *)w->body.data, w->body.len,
                       (uint8_t *)w->comp.data, bound, &clen, err));
    if (w->body.len > INT32_MAX || clen > INT32_MAX)
        return pq_fail(err, PQ_E_USAGE, "%s: a page of %zu bytes is too large", w->leaf->path, w->body.len);
    h->uncompressed_page_size = (int32_t)w->body.len;
    h->compressed_page_size = (int32_t)clen;
    pq_buf_clear(&w->header);
    PQ_TRY(pq_encode_page_header(h, &w->header, err));
    if (pq_buf_append(to, w->header.data, w->header.len) || pq_buf_append(to, w->comp.data, clen))
        return PQ_NOMEM(err);
    w->uncompressed += (int64_t)(w->header.len + w->body.len);
    *page_bytes = w->header.len + clen;
    return PQ_OK;
}

static int grow_page_index(pq_colwriter *w)
{
    if (w->n_pages < w->pages_alloc) return 0;
    int32_t a = w->pages_alloc ? w->pages_alloc * 2 : 16;
    GROW(w->locs, a);
    GROW(w->null_pages, a);
    GROW(w->page_min, a);
    GROW(w->page_max, a);
    GROW(w->page_nulls, a);
    w->pages_alloc = a;
    return 0;
}
/* Whether the first page's values take fewer bytes as dictionary and
 * indices than PLAIN (high-cardinality columns do not). */
static bool dictionary_pays(const pq_colwriter *w)
{
    size_t n_idx = w->idx.len / 4;
    size_t idx_bytes = n_idx * (size_t)pq_bit_width(w->dict.n ? w->dict.n - 1 : 0) / 8;
    return w->dict.plain.len + idx_bytes < w->page_plain_bytes;
}

/* Turns the page's dictionary indices back into PLAIN values and drops the
 * dictionary: the column is written PLAIN from here on. */
static int page_to_plain(pq_colwriter *w, pq_error *err)
{
    const bool byte_array = w->leaf->node->phys == PQ_BYTE_ARRAY;
    const size_t width = byte_array ? 0 : w->leaf->node->phys == PQ_FIXED_LEN_BYTE_ARRAY
                                               ? (size_t)w->leaf->node->type_length
                                               : pq_value_size(w->leaf->node->phys);
    const uint32_t *ix = (const uint32_t *)w->idx.data;
    pq_buf_clear(&w->plain);
    if (pq_buf_reserve(&w->plain, w->page_plain_bytes)) return PQ_NOMEM(err);
    for (size_t i = 0; i < w->idx.len / 4; i++) {
        const uint8_t *p;
        size_t n;
        dict_entry(&w->dict, byte_array, width, ix[i], &p, &n);
        uint32_t len = (uint32_t)n;
        if ((byte_array && pq_buf_append(&w->plain, &len, 4)) || pq_buf_append(&w->plain, p, n)) return PQ_NOMEM(err);
    }
    pq_buf_clear(&w->idx);
    dict_free(&w->dict);
    memset(&w->dict, 0, sizeof w->dict);
    w->use_dict = false;
    return PQ_OK;
}

/* Encodes the page being filled (even an empty one when `force`). */
static int flush_page(pq_colwriter *w, bool force, pq_error *err)
{
    if (w->page_levels == 0 && !force) return PQ_OK;
    pq_buf_clear(&w->body);
    if (w->leaf->max_rep > 0 && put_levels(&w->body, &w->rep, w->page_levels, w->rep_bw)) return PQ_NOMEM(err);
    if (w->leaf->max_def > 0 && put_levels(&w->body, &w->def, w->page_levels, w->def_bw)) return PQ_NOMEM(err);
    if (w->use_dict && w->n_dict_pages == 0 && !dictionary_pays(w)) PQ_TRY(page_to_plain(w, err));
    bool dict_page = w->use_dict;
    if (dict_page) {
        uint8_t bw = (uint8_t)pq_bit_width(w->dict.n ? w->dict.n - 1 : 0);
        if (pq_buf_append(&w->body, &bw, 1) ||
            pq_rle_encode((const uint32_t *)w->idx.data, w->idx.len / 4, bw, &w->body))
            return PQ_NOMEM(err);
    } else if (w->leaf->node->phys == PQ_BOOLEAN) {
        size_t n = w->plain.len, bytes = (n + 7) / 8;
        if (pq_buf_reserve(&w->body, bytes)) return PQ_NOMEM(err);
        uint8_t *p = (uint8_t *)w->body.data + w->body.len;
        memset(p, 0, bytes);
        for (size_t i = 0; i < n; i++)
            if (w->plain.data[i]) p[i / 8] |= (uint8_t)(1u << (i % 8));
        w->body.len += bytes;
    } else if (pq_buf_append(&w->body, w->plain.data, w->plain.len)) {
        return PQ_NOMEM(err);
    }

    /* Entries without a value: nulls, and in nested columns empty or null
     * collections too (as other writers count them). */
    int64_t page_nulls = (int64_t)w->page_levels - w->page_values;
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = PQ_PAGE_DATA;
    h.has_data = true;
    h.data.num_values = w->page_levels;
    h.data.encoding = dict_page ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN;
    h.data.def_encoding = PQ_ENC_RLE;
    h.data.rep_encoding = PQ_ENC_RLE;
    pq_bytes lo = {0}, hi = {0};
    bool lo_exact = true, hi_exact = true, has_bounds = false;
    if (w->ord != PQ_ORD_NONE) {
        int rc = bounds_export(&w->page_bounds, w->ord, w->truncate, &w->arena, &lo, &hi, &lo_exact, &hi_exact);
        if (rc < 0) return PQ_NOMEM(err);
        has_bounds = rc == 0;
        if (!has_bounds && w->page_values > 0) w->stats_ok = false; /* NaN only, or an unboundable max */
        h.data.has_stats = true;
        h.data.stats.has_null_count = true;
        h.data.stats.null_count = page_nulls;
        if (has_bounds) {
            h.data.stats.has_min_value = h.data.stats.has_max_value = true;
            h.data.stats.min_value = lo;
            h.data.stats.max_value = hi;
            if (!lo_exact || !hi_exact) {
                h.data.stats.has_min_exact = h.data.stats.has_max_exact = true;
                h.data.stats.min_exact = lo_exact;
                h.data.stats.max_exact = hi_exact;
            }
        }
    }
    if (grow_page_index(w)) return PQ_NOMEM(err);
    size_t at = w->pages.len, page_bytes = 0;
    PQ_TRY(emit_page(w, &h, &w->pages, &page_bytes, err));
    if (page_bytes > INT32_MAX) return pq_fail(err, PQ_E_USAGE, "%s: page too large", w->leaf->path);
    int32_t p = w->n_pages++;
    w->locs[p] = (pq_page_location){(int64_t)at, (int32_t)page_bytes, w->rows};
    w->null_pages[p] = w->page_values == 0;
    w->page_min[p] = has_bounds ? lo : (pq_bytes){0};
    w->page_max[p] = has_bounds ? hi : (pq_bytes){0};
    w->page_nulls[p] = page_nulls;
    if (dict_page) w->n_dict_pages++;
    else w->n_plain_pages++;

    if (w->page_bounds.any &&
        bounds_offer(&w->chunk_bounds, w->ord, (const uint8_t *)w->page_bounds.lo.data, w->page_bounds.lo.len,
                     (const uint8_t *)w->page_bounds.hi.data, w->page_bounds.hi.len))
        return PQ_NOMEM(err);
    w->rows += w->page_rows;
    w->levels += w->page_levels;
    w->nulls += page_nulls;
    w->page_levels = w->page_values = w->page_rows = 0;
    w->page_plain_bytes = 0;
    w->page_bounds.any = false;
    pq_buf_clear(&w->def);
    pq_buf_clear(&w->rep);
    pq_buf_clear(&w->idx);
    pq_buf_clear(&w->plain);
    return PQ_OK;
}

/* Estimated encoded bytes of the page being filled. */
static size_t page_estimate(const pq_colwriter *w)
{
    size_t levels = (size_t)w->page_levels * (size_t)(w->def_bw + w->rep_bw) / 8;
    if (w->use_dict) return levels + w->idx.len / 4 * (size_t)(pq_bit_width(w->dict.n) + 1) / 8;
    return levels + w->plain.len;
}

/* Appends levels [l0, l1) and values [v0, v1) of the batch to the page. */
static int add_slice(pq_colwriter *w, const pq_col_batch *b, int32_t l0, int32_t l1, int32_t v0, int32_t v1,
                     int32_t rows, pq_error *err)
{
    int32_t nl = l1 - l0, nv = v1 - v0;
    if (w->leaf->max_def > 0) {
        if (pq_buf_reserve(&w->def, (size_t)nl * 4)) return PQ_NOMEM(err);
        uint32_t *d = (uint32_t *)(w->def.data + w->def.len);
        for (int32_t i = 0; i < nl; i++) d[i] = b->def ? b->def[l0 + i] : (uint32_t)w->leaf->max_def;
        w->def.len += (size_t)nl * 4;
    }
    if (w->leaf->max_rep > 0) {
        if (pq_buf_reserve(&w->rep, (size_t)nl * 4)) return PQ_NOMEM(err);
        uint32_t *r = (uint32_t *)(w->rep.data + w->rep.len);
        for (int32_t i = 0; i < nl; i++) r[i] = b->rep ? b->rep[l0 + i] : 0;
        w->rep.len += (size_t)nl * 4;
    }
    w->page_levels += nl;
    w->page_rows += rows;
    if (nv == 0) return PQ_OK; /* nulls only: a batch's values may be NULL */
    w->page_values += nv;
    const pq_phys phys = w->leaf->node->phys;
    const bool byte_array = phys == PQ_BYTE_ARRAY;
    const size_t vsize = pq_value_size(phys);
    const uint8_t *vals = (const uint8_t *)b->values + (size_t)v0 * vsize;
    if (w->ord != PQ_ORD_NONE && bounds_add(&w->page_bounds, w->ord, vals, nv)) return PQ_NOMEM(err);
    if (w->o.bloom_filter) {
        if (pq_buf_reserve(&w->hashes, (size_t)nv * 8)) return PQ_NOMEM(err);
        uint64_t *h = (uint64_t *)(w->hashes.data + w->hashes.len);
        for (int32_t i = 0; i < nv; i++) {
            if (byte_array || phys == PQ_FIXED_LEN_BYTE_ARRAY) {
                const pq_bytes *x = (const pq_bytes *)vals + i;
                h[i] = pq_bloom_hash(x->ptr, x->len);
            } else {
                h[i] = pq_bloom_hash(vals + (size_t)i * vsize, vsize);
            }
        }
        w->hashes.len += (size_t)nv * 8;
    }
    if (w->use_dict) {
        if (pq_buf_reserve(&w->idx, (size_t)nv * 4)) return PQ_NOMEM(err);
        uint32_t *ix = (uint32_t *)(w->idx.data + w->idx.len);
        for (int32_t i = 0; i < nv; i++) {
            const uint8_t *p;
            size_t n;
            if (byte_array || phys == PQ_FIXED_LEN_BYTE_ARRAY) {
                const pq_bytes *x = (const pq_bytes *)vals + i;
                p = x->ptr;
                n = x->len;
            } else {
                p = vals + (size_t)i * vsize;
                n = vsize;
            }
            int64_t e = dict_index(&w->dict, byte_array, p, n);
            if (e < 0) return PQ_NOMEM(err);
            ix[i] = (uint32_t)e;
            w->page_plain_bytes += n + (byte_array ? 4 : 0);
        }
        w->idx.len += (size_t)nv * 4;
    } else if (byte_array || phys == PQ_FIXED_LEN_BYTE_ARRAY) {
        const pq_bytes *x = (const pq_bytes *)vals;
        for (int32_t i = 0; i < nv; i++) {
            uint32_t len = x[i].len;
            if ((byte_array && pq_buf_append(&w->plain, &len, 4)) || pq_buf_append(&w->plain, x[i].ptr, len))
                return PQ_NOMEM(err);
        }
    } else if (pq_buf_append(&w->plain, vals, (size_t)nv * vsize)) {
        return PQ_NOMEM(err);
    }
    return PQ_OK;
}

int pq_colwriter_add(pq_colwriter *w, const pq_col_batch *b, pq_error *err)
{
    const int16_t max_def = w->leaf->max_def;
    const bool nested = w->leaf->max_rep > 0;
    const bool fixed_bytes = w->leaf->node->phys == PQ_FIXED_LEN_BYTE_ARRAY;
    if (b->n_levels < 0 || b->n_values < 0 || b->n_values > b->n_levels)
        return pq_fail(err, PQ_E_USAGE, "%s: a batch of %d levels and %d values", w->leaf->path, b->n_levels,
                       b->n_values);
    int32_t l = 0, v = 0;
    while (l < b->n_levels) {
        /* A slice of whole rows: SLICE_LEVELS levels, then on to a row start. */
        int32_t end = l + SLICE_LEVELS < b->n_levels ? l + SLICE_LEVELS : b->n_levels;
        if (nested)
            while (end < b->n_levels && b->rep && b->rep[end] != 0) end++;
        int32_t nv = 0, rows = 0;
        for (int32_t i = l; i < end; i++) {
            if (!b->def || b->def[i] == max_def) nv++;
            if (!nested || !b->rep || b->rep[i] == 0) rows++;
        }
        if (v + nv > b->n_values)
            return pq_fail(err, PQ_E_USAGE, "%s: the batch's levels ask for more values than it has", w->leaf->path);
        if (fixed_bytes)
            for (int32_t i = v; i < v + nv; i++)
                if (((const pq_bytes *)b->values)[i].len != (uint32_t)w->leaf->node->type_length)
                    return pq_fail(err, PQ_E_USAGE, "%s: a value of %u bytes in a column of %d", w->leaf->path,
                                   ((const pq_bytes *)b->values)[i].len, w->leaf->node->type_length);
        PQ_TRY(add_slice(w, b, l, end, v, v + nv, rows, err));
        l = end;
        v += nv;
        if (page_estimate(w) >= w->o.page_size) PQ_TRY(flush_page(w, false, err));
    }
    /* A column that a dictionary does not shrink (high cardinality) is found
     * out early, before hashing every value of the page. */
    if (w->use_dict && w->n_dict_pages == 0 && w->idx.len / 4 >= DICT_PROBE_VALUES && !dictionary_pays(w))
        PQ_TRY(page_to_plain(w, err));
    /* Past the limit the dictionary stops growing: the pages after this
     * batch are PLAIN (the ones before keep their dictionary). */
    if (w->use_dict && w->dict.plain.len > w->o.dict_limit) {
        PQ_TRY(flush_page(w, false, err));
        w->use_dict = false;
    }
    return PQ_OK;
}

/* The boundary order of the pages' bounds (null pages left out). */
static int32_t boundary_order(const pq_colwriter *w)
{
    bool asc = true, desc = true;
    int32_t prev = -1;
    for (int32_t p = 0; p < w->n_pages; p++) {
        if (w->null_pages[p]) continue;
        if (prev >= 0) {
            int lo = pq_value_order_cmp(w->ord, w->page_min[p].ptr, w->page_min[p].len, w->page_min[prev].ptr,
                             w->page_min[prev].len);
            int hi = pq_value_order_cmp(w->ord, w->page_max[p].ptr, w->page_max[p].len, w->page_max[prev].ptr,
                             w->page_max[prev].len);
            if (lo < 0 || hi < 0) asc = false;
            if (lo > 0 || hi > 0) desc = false;
        }
        prev = p;
    }
    return asc ? PQ_BOUNDARY_ASCENDING : desc ? PQ_BOUNDARY_DESCENDING : PQ_BOUNDARY_UNORDERED;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The chunk's bloom filter: header and bitset, sized for the distinct
 * hashes. */
static int build_bloom(pq_colwriter *w, pq_buf *out, pq_error *err)
{
    uint64_t *h = (uint64_t *)w->hashes.data;
    size_t n = w->hashes.len / 8, distinct = 0;
    if (n) qsort(h, n, sizeof *h, cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || h[i] != h[i - 1]) h[distinct++] = h[i];
    uint32_t bytes = pq_bloom_bytes_for(distinct, w->o.bloom_fpp);
    pq_bloom_header bh = {.num_bytes = (int32_t)bytes, .algorithm_block = true, .hash_xxhash = true,
                          .compression_none = true};
    PQ_TRY(pq_encode_bloom_header(&bh, out, err));
    if (pq_buf_reserve(out, bytes)) return PQ_NOMEM(err);
    uint8_t *bits = (uint8_t *)out->data + out->len;
    memset(bits, 0, bytes);
    for (size_t i = 0; i < distinct; i++) pq_bloom_insert_hash(bits, bytes, h[i]);
    out->len += bytes;
    return PQ_OK;
}

/* path_in_schema: every level's name, a LIST's or MAP's repeated group
 * included (readers such as hyparquet look the chunk up by it).  The names
 * are copied into the chunk's arena: the leaf may be an input file's, whose
 * footer the scan lets go (a batch at a time) before the output's footer is
 * written. */
static int leaf_path(const pq_leaf *leaf, pq_arena *arena, const char ***out, int32_t *n_out)
{
    int32_t n = leaf->n_path_parts;
    if (n <= 0)
        for (const pq_node *x = leaf->node; x && x->parent; x = x->parent) n++;
    const char **path = pq_arena_alloc(arena, (size_t)(n ? n : 1) * sizeof *path);
    if (!path) return -1;
    if (leaf->n_path_parts > 0) {
        for (int32_t i = 0; i < n; i++)
            if (!(path[i] = pq_arena_strndup(arena, leaf->path_parts[i], strlen(leaf->path_parts[i])))) return -1;
    } else {
        int32_t i = n;
        for (const pq_node *x = leaf->node; x && x->parent; x = x->parent)
            if (!(path[--i] = pq_arena_strndup(arena, x->name, strlen(x->name)))) return -1;
    }
    *out = path;
    *n_out = n;
    return 0;
}

int pq_colwriter_finish(pq_colwriter *w, pq_chunk_out *out, pq_error *err)
{
    memset(out, 0, sizeof *out);
    pq_arena_init(&out->arena, 4096);
    PQ_TRY(flush_page(w, w->n_pages == 0, err));
    pq_column_meta *m = &out->meta;
    m->type = w->leaf->node->phys;
    m->codec = w->o.codec;
    m->num_values = w->levels;
    out->num_rows = w->rows;

    /* The dictionary page comes first. */
    if (w->n_dict_pages > 0) {
        pq_buf_clear(&w->body);
        if (pq_buf_append(&w->body, w->dict.plain.data, w->dict.plain.len)) return PQ_NOMEM(err);
        pq_page_header h;
        memset(&h, 0, sizeof h);
        h.type = PQ_PAGE_DICTIONARY;
        h.has_dict = true;
        h.dict.num_values = (int32_t)w->dict.n;
        h.dict.encoding = PQ_ENC_PLAIN;
        size_t bytes = 0;
        PQ_TRY(emit_page(w, &h, &out->bytes, &bytes, err));
        m->has_dictionary_page_offset = true;
        m->dictionary_page_offset = 0;
    }
    size_t data_at = out->bytes.len;
    if (data_at == 0) {
        out->bytes = w->pages; /* no dictionary page: the pages are the chunk */
        pq_buf_init(&w->pages);
    } else if (pq_buf_append(&out->bytes, w->pages.data, w->pages.len)) {
        return PQ_NOMEM(err);
    }
    m->data_page_offset = (int64_t)data_at;
    m->total_compressed_size = (int64_t)out->bytes.len;
    m->total_uncompressed_size = w->uncompressed;

    int32_t encs[4], n_encs = 0;
    encs[n_encs++] = PQ_ENC_PLAIN; /* the dictionary page's, or PLAIN pages' */
    if (w->leaf->max_def > 0 || w->leaf->max_rep > 0) encs[n_encs++] = PQ_ENC_RLE;
    if (w->n_dict_pages > 0) encs[n_encs++] = PQ_ENC_RLE_DICTIONARY;
    m->encodings = pq_arena_alloc(&out->arena, sizeof encs);
    m->encoding_stats = pq_arena_alloc(&out->arena, 3 * sizeof *m->encoding_stats);
    if (!m->encodings || !m->encoding_stats || leaf_path(w->leaf, &out->arena, &m->path, &m->n_path))
        return PQ_NOMEM(err);
    memcpy(m->encodings, encs, sizeof encs);
    m->n_encodings = n_encs;
    int32_t ne = 0;
    if (w->n_dict_pages > 0) {
        m->encoding_stats[ne++] = (pq_page_enc_stats){PQ_PAGE_DICTIONARY, PQ_ENC_PLAIN, 1};
        m->encoding_stats[ne++] = (pq_page_enc_stats){PQ_PAGE_DATA, PQ_ENC_RLE_DICTIONARY, w->n_dict_pages};
    }
    if (w->n_plain_pages > 0) m->encoding_stats[ne++] = (pq_page_enc_stats){PQ_PAGE_DATA, PQ_ENC_PLAIN, w->n_plain_pages};
    m->n_encoding_stats = ne;

    if (w->ord != PQ_ORD_NONE) {
        m->has_stats = true;
        m->stats.has_null_count = true;
        m->stats.null_count = w->nulls;
        pq_bytes lo, hi;
        bool lo_exact, hi_exact;
        int rc = bounds_export(&w->chunk_bounds, w->ord, w->truncate, &out->arena, &lo, &hi, &lo_exact, &hi_exact);
        if (rc < 0) return PQ_NOMEM(err);
        if (rc == 0) {
            m->stats.has_min_value = m->stats.has_max_value = true;
            m->stats.min_value = lo;
            m->stats.max_value = hi;
            if (!lo_exact || !hi_exact) {
                m->stats.has_min_exact = m->stats.has_max_exact = true;
                m->stats.min_exact = lo_exact;
                m->stats.max_exact = hi_exact;
            }
        }
    } else if (!w->o.no_statistics) {
        m->has_stats = true;
        m->stats.has_null_count = true;
        m->stats.null_count = w->nulls;
    }

    if (w->o.bloom_filter) PQ_TRY(build_bloom(w, &out->bloom, err));

    /* The page index. */
    out->n_pages = w->n_pages;
    out->pages = pq_arena_alloc(&out->arena, (size_t)w->n_pages * sizeof *out->pages);
    if (!out->pages) return PQ_NOMEM(err);
    for (int32_t p = 0; p < w->n_pages; p++) {
        out->pages[p] = w->locs[p];
        out->pages[p].offset += (int64_t)data_at;
    }
    if (w->ord != PQ_ORD_NONE && w->stats_ok) {
        pq_column_index ci = {
            .n_pages = w->n_pages,
            .null_pages = w->null_pages,
            .min_values = w->page_min,
            .max_values = w->page_max,
            .boundary_order = boundary_order(w),
            .null_counts = w->page_nulls,
        };
        PQ_TRY(pq_encode_column_index(&ci, &out->column_index, err));
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ copied chunks */

static int copy_bytes(pq_arena *a, pq_bytes *b)
{
    if (!b->len) return 0;
    uint8_t *p = pq_arena_alloc(a, b->len);
    if (!p) return -1;
    memcpy(p, b->ptr, b->len);
    b->ptr = p;
    return 0;
}

/* A chunk copied byte for byte is not decoded, so its pages are walked
 * instead: every page header must decode, each page must lie inside the
 * chunk, and the data pages must hold the chunk's values before it ends, as
 * a reader finds them.  Cheap (headers only), and it keeps a chunk a reader
 * would fail on from passing into a new file as if it were sound. */
static int check_chunk_pages(const uint8_t *bytes, uint64_t len, int64_t num_values, pq_error *err)
{
    pq_arena a;
    pq_arena_init(&a, 1024);
    int64_t values = 0;
    uint64_t at = 0;
    int rc = PQ_OK;
    for (int32_t page = 0; rc == PQ_OK && values < num_values; page++) {
        if (at >= len) {
            rc = pq_fail(err, PQ_E_CORRUPT, "column chunk ends after %lld of its %lld values", (long long)values,
                         (long long)num_values);
            break;
        }
        pq_page_header h;
        size_t used;
        if (pq_decode_page_header(bytes + at, (size_t)(len - at), &a, &h, &used, err) != PQ_OK) {
            pq_error_prefix(err, "page %d: page header at offset %llu: ", page, (unsigned long long)at);
            rc = PQ_ERR;
            break;
        }
        if (h.compressed_page_size < 0 || (uint64_t)h.compressed_page_size > len - at - used) {
            rc = pq_fail(err, PQ_E_CORRUPT, "page %d: %d bytes at offset %llu overrun the column chunk", page,
                         h.compressed_page_size, (unsigned long long)at);
            break;
        }
        if (h.has_data_v2) values += h.data_v2.num_values > 0 ? h.data_v2.num_values : 0;
        else if (h.has_data) values += h.data.num_values > 0 ? h.data.num_values : 0;
        at += used + (uint64_t)h.compressed_page_size;
        pq_arena_reset(&a);
    }
    pq_arena_free(&a);
    return rc;
}

int pq_chunk_copy(const pq_column_meta *src, int64_t num_rows, bool type_ordered, const uint8_t *bytes,
                  uint64_t start, uint64_t len, const pq_offset_index *oi, const uint8_t *column_index,
                  size_t column_index_len, pq_chunk_out *out, pq_error *err)
{
    memset(out, 0, sizeof *out);
    pq_arena_init(&out->arena, 1024);
    pq_arena *a = &out->arena;
    pq_column_meta *m = &out->meta;
    *m = *src;
    out->num_rows = num_rows;
    if (pq_buf_append(&out->bytes, bytes, (size_t)len)) return PQ_NOMEM(err);
    /* Offsets: relative to the chunk's first byte. */
    if ((uint64_t)src->data_page_offset < start || (uint64_t)src->data_page_offset - start >= len ||
        (src->has_dictionary_page_offset &&
         ((uint64_t)src->dictionary_page_offset < start || (uint64_t)src->dictionary_page_offset - start >= len)))
        return pq_fail(err, PQ_E_CORRUPT, "column chunk offsets outside its extent");
    m->data_page_offset -= (int64_t)start;
    if (m->has_dictionary_page_offset) m->dictionary_page_offset -= (int64_t)start;
    /* Pages from the chunk's first one (its dictionary, when it has one). */
    uint64_t first = (uint64_t)(m->has_dictionary_page_offset && m->dictionary_page_offset < m->data_page_offset
                                    ? m->dictionary_page_offset
                                    : m->data_page_offset);
    PQ_TRY(check_chunk_pages(bytes + first, len - first, src->num_values, err));
    m->has_index_page_offset = false;
    m->has_bloom_filter_offset = m->has_bloom_filter_length = false;
    m->kv = NULL;
    m->n_kv = 0;
    m->total_compressed_size = (int64_t)len;
    /* The arrays point into the source footer: copy them. */
    m->encodings = pq_arena_alloc(a, sizeof *m->encodings * (size_t)(src->n_encodings + 1));
    m->path = pq_arena_alloc(a, sizeof *m->path * (size_t)(src->n_path + 1));
    if (!m->encodings || !m->path) return PQ_NOMEM(err);
    if (src->n_encodings) memcpy(m->encodings, src->encodings, sizeof *m->encodings * (size_t)src->n_encodings);
    for (int32_t i = 0; i < src->n_path; i++)
        if (!(m->path[i] = pq_arena_strndup(a, src->path[i], strlen(src->path[i])))) return PQ_NOMEM(err);
    if (src->n_encoding_stats > 0) {
        m->encoding_stats = pq_arena_alloc(a, sizeof *m->encoding_stats * (size_t)src->n_encoding_stats);
        if (!m->encoding_stats) return PQ_NOMEM(err);
        memcpy(m->encoding_stats, src->encoding_stats, sizeof *m->encoding_stats * (size_t)src->n_encoding_stats);
    }
    pq_stats *st = &m->stats;
    st->has_min = st->has_max = false; /* deprecated fields: an order this file does not declare */
    if (!type_ordered) st->has_min_value = st->has_max_value = st->has_min_exact = st->has_max_exact = false;
    if ((st->has_min_value && copy_bytes(a, &st->min_value)) || (st->has_max_value && copy_bytes(a, &st->max_value)))
        return PQ_NOMEM(err);
    m->has_stats = st->has_min_value || st->has_max_value || st->has_null_count || st->has_distinct_count;

    if (oi && oi->n_pages > 0) {
        out->pages = pq_arena_alloc(a, sizeof *out->pages * (size_t)oi->n_pages);
        if (!out->pages) return PQ_NOMEM(err);
        for (int32_t p = 0; p < oi->n_pages; p++) {
            const pq_page_location *l = &oi->pages[p];
            if (l->offset < 0 || (uint64_t)l->offset < start || (uint64_t)l->offset - start >= len ||
                l->compressed_page_size <= 0 || (uint64_t)l->compressed_page_size > len - ((uint64_t)l->offset - start))
                return pq_fail(err, PQ_E_CORRUPT, "offset index page %d outside the column chunk", p);
            out->pages[p] = *l;
            out->pages[p].offset -= (int64_t)start;
        }
        out->n_pages = oi->n_pages;
    }
    if (type_ordered && column_index && column_index_len && pq_buf_append(&out->column_index, column_index, column_index_len))
        return PQ_NOMEM(err);
    return PQ_OK;
}
