#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "column.h"
#include "encoding.h"

#define MAX_EQ_VALUES 256
/* Bloom filters and indexes larger than this are not worth reading to prune. */
#define MAX_AUX_BYTES (64u << 20)

const char *pq_rung_name(pq_rung r)
{
    switch (r) {
    case PQ_RUNG_PARTITION: return "partition";
    case PQ_RUNG_STATS: return "statistics";
    case PQ_RUNG_DICTIONARY: return "dictionary";
    case PQ_RUNG_PAGE_INDEX: return "page index";
    case PQ_RUNG_BLOOM: return "bloom filter";
    default: return "none";
    }
}

/* ------------------------------------------------------------------ trust rules */

/* Whether the type has a defined sort order at all (INT96 and INTERVAL don't). */
static bool has_sort_order(const pq_node *n)
{
    if (n->phys == PQ_INT96) return false;
    if (n->converted == PQ_CT_INTERVAL) return false;
    if (n->logical.kind == PQ_LT_UNRECOGNIZED || n->logical.kind == PQ_LT_VARIANT ||
        n->logical.kind == PQ_LT_GEOMETRY || n->logical.kind == PQ_LT_GEOGRAPHY)
        return false;
    return true;
}

/* Whether the deprecated min/max fields, written with a signed comparison,
 * agree with the type's order: true for signed numbers and temporals, false
 * for unsigned integers and every byte-array type (old writers compared
 * bytes as signed). */
static bool legacy_order_ok(const pq_node *n)
{
    switch (n->phys) {
    case PQ_BOOLEAN: case PQ_FLOAT: case PQ_DOUBLE: return true;
    case PQ_INT32: case PQ_INT64:
        return !(n->logical.kind == PQ_LT_INTEGER && !n->logical.is_signed);
    default: return false;
    }
}

static bool is_float_type(const pq_node *n)
{
    return n->phys == PQ_FLOAT || n->phys == PQ_DOUBLE || n->logical.kind == PQ_LT_FLOAT16;
}

static bool bound_is_nan(const pq_value *v)
{
    return v->type == PQ_V_DOUBLE && isnan(v->u.d);
}

void pq_range_from_stats(const pq_leaf *leaf, const pq_stats *st, bool has_stats, int64_t rows,
                         pq_col_range *out)
{
    memset(out, 0, sizeof *out);
    const pq_node *n = leaf->node;
    out->known = true;
    out->row_count = rows;
    out->may_have_nan = is_float_type(n);
    if (!has_stats) return;
    if (st->has_null_count && st->null_count >= 0 && st->null_count <= rows) {
        out->has_null_count = true;
        out->null_count = st->null_count;
    }
    if (leaf->column_order == PQ_ORDER_UNKNOWN || !has_sort_order(n)) return;
    pq_bytes lo, hi;
    bool has_lo = false, has_hi = false, exact_lo = false, exact_hi = false;
    bool byte_type = n->phys == PQ_BYTE_ARRAY || n->phys == PQ_FIXED_LEN_BYTE_ARRAY;
    if (st->has_min_value && st->has_max_value) {
        lo = st->min_value;
        hi = st->max_value;
        has_lo = has_hi = true;
        exact_lo = st->has_min_exact ? st->min_exact : !byte_type;
        exact_hi = st->has_max_exact ? st->max_exact : !byte_type;
    } else if (st->has_min && st->has_max && legacy_order_ok(n)) {
        lo = st->min;
        hi = st->max;
        has_lo = has_hi = true;
        exact_lo = exact_hi = true;
    }
    if (!has_lo || !has_hi) return;
    pq_value vlo, vhi;
    if (pq_value_from_plain(n, lo.ptr, lo.len, &vlo) != 0) return;
    if (pq_value_from_plain(n, hi.ptr, hi.len, &vhi) != 0) return;
    /* NaN bounds (buggy writers) and inverted bounds prove nothing. */
    if (bound_is_nan(&vlo) || bound_is_nan(&vhi)) return;
    if (pq_value_cmp(&vlo, &vhi) > 0) return;
    out->has_min = out->has_max = true;
    out->min = vlo;
    out->max = vhi;
    out->exact_min = exact_lo;
    out->exact_max = exact_hi;
}

/* ------------------------------------------------------------------ helpers */

static int read_exact(pq_file *f, uint64_t file_size, uint64_t off, uint64_t len, uint8_t **out,
                      pq_error *err)
{
    *out = NULL;
    if (off > file_size || len > file_size - off || len > MAX_AUX_BYTES) return PQ_OK; /* proves nothing */
    uint8_t *buf = malloc(len ? (size_t)len : 1);
    if (!buf) return PQ_NOMEM(err);
    if (pq_read_at(f, buf, (size_t)len, off, err) != PQ_OK) {
        free(buf);
        return PQ_ERR;
    }
    *out = buf;
    return PQ_OK;
}

/* Column index of a conjunct that reads exactly one data column, else -1. */
static int single_column(const pq_expr *conj)
{
    int cols[2];
    int n = pq_expr_columns(conj, cols, 2);
    return n == 1 ? cols[0] : -1;
}

/* ------------------------------------------------------------------ schema evolution */

/* The widening of a leaf to the table's type (plan.h leaf_widen). */
static int widen_of(const pq_plan_input *in, int32_t leaf)
{
    return in->leaf_widen ? in->leaf_widen[leaf] : PQ_WIDEN_NONE;
}

static bool widens_to_double(int w)
{
    return w == PQ_WIDEN_I32_F64 || w == PQ_WIDEN_U32_F64 || w == PQ_WIDEN_I64_F64 || w == PQ_WIDEN_U64_F64;
}

/* A value of a widened leaf as the file's node reads it (a bound, a
 * dictionary entry) in the table's domain, the predicate's: an integer
 * widened to DOUBLE becomes the double the scan makes of it (widen_batch,
 * C's nearest).  That rounding is monotone, so bounds converted stay
 * bounds of the converted values.  The other widenings read in the
 * table's domain already (INT, TIMESTAMP in nanoseconds, DOUBLE; an INT96
 * value reads as the whole microseconds it widens to, pq_int96_micros,
 * and has no bounds: no sort order).  -1 when
 * v is not of the domain the widening reads: it proves nothing. */
static int widen_value(int w, pq_value *v)
{
    if (!widens_to_double(w)) return 0;
    double d;
    if (v->type == PQ_V_INT && w != PQ_WIDEN_U64_F64) {
        d = (double)v->u.i;
    } else if (v->type == PQ_V_DECIMAL && w == PQ_WIDEN_U64_F64 && v->u.dec.scale == 0 && v->u.dec.unscaled >= 0 &&
               v->u.dec.unscaled <= (__int128)UINT64_MAX) {
        d = (double)(uint64_t)v->u.dec.unscaled;
    } else {
        return -1;
    }
    *v = (pq_value){.type = PQ_V_DOUBLE};
    v->u.d = d;
    return 0;
}

/* A range's bounds in the table's domain (widen_value); none when they do
 * not convert. */
static void widen_range(int w, pq_col_range *r)
{
    if (!r->has_min && !r->has_max) return;
    if ((r->has_min && widen_value(w, &r->min) != 0) || (r->has_max && widen_value(w, &r->max) != 0))
        r->has_min = r->has_max = r->exact_min = r->exact_max = false;
}

/* The bloom filter's probe for literal v (the table's DOUBLE) on a leaf of
 * integers widened to DOUBLE: 1 when no integer converts to v (not
 * integral: no row equals it), 0 with *out the one integer that does (an
 * integral v below 2^53 in magnitude, where every integer is a double of
 * its own), -1 when several may (2^53 itself is also 2^53 + 1 rounded;
 * past it many are) or v is no double: the filter cannot tell. */
static int integer_probe(const pq_value *v, pq_value *out)
{
    if (v->type != PQ_V_DOUBLE || !isfinite(v->u.d)) return -1;
    double d = v->u.d;
    if (d != floor(d)) return 1;
    if (fabs(d) >= 0x1p53) return -1;
    *out = (pq_value){.type = PQ_V_INT};
    out->u.i = (int64_t)d;
    return 0;
}

/* ------------------------------------------------------------------ dictionary rung */

/* All data pages of the chunk are dictionary-encoded (else the dictionary does
 * not hold every value). */
static bool chunk_all_dictionary(const pq_column_meta *m)
{
    if (m->n_encoding_stats > 0) {
        bool any_data = false;
        for (int32_t i = 0; i < m->n_encoding_stats; i++) {
            const pq_page_enc_stats *s = &m->encoding_stats[i];
            if (s->page_type != PQ_PAGE_DATA && s->page_type != PQ_PAGE_DATA_V2) continue;
            if (s->count == 0) continue;
            any_data = true;
            if (s->encoding != PQ_ENC_PLAIN_DICTIONARY && s->encoding != PQ_ENC_RLE_DICTIONARY) return false;
        }
        return any_data;
    }
    /* Without page statistics only the v1 layout is unambiguous: the
     * dictionary and its pages are PLAIN_DICTIONARY, a fallback adds PLAIN. */
    bool has_plain_dict = false;
    for (int32_t i = 0; i < m->n_encodings; i++) {
        int32_t e = m->encodings[i];
        if (e == PQ_ENC_PLAIN_DICTIONARY) has_plain_dict = true;
        else if (e != PQ_ENC_RLE && e != PQ_ENC_BIT_PACKED) return false;
    }
    return has_plain_dict;
}

/* Reads and decodes the chunk's dictionary; dict->n stays 0 when there is
 * none or it cannot be used.  bufs[0] gets the chunk's first *head_len bytes
 * (page header and dictionary page) as read, bufs[1] the decompressed page. */
static int load_dictionary(const pq_plan_input *in, const pq_column_chunk *cc, const pq_leaf *leaf,
                           pq_arena *arena, pq_dict *dict, uint8_t **bufs, uint64_t *chunk_start,
                           size_t *head_len, pq_error *err)
{
    memset(dict, 0, sizeof *dict);
    *head_len = 0;
    pq_chunk_extent ext;
    pq_error ignore;
    if (pq_chunk_extent_of(cc, in->footer->file_size, in->footer->legacy_chunk_sizes, &ext, &ignore) != PQ_OK)
        return PQ_OK;
    *chunk_start = ext.start;
    uint64_t head = ext.len < 512 ? ext.len : 512;
    uint8_t *hb;
    PQ_TRY(read_exact(in->file, in->footer->file_size, ext.start, head, &hb, err));
    if (!hb) return PQ_OK;
    bufs[0] = hb;
    *head_len = (size_t)head;
    pq_page_header h;
    size_t hlen;
    if (pq_decode_page_header(hb, (size_t)head, NULL, &h, &hlen, &ignore) != PQ_OK) return PQ_OK;
    if (h.type != PQ_PAGE_DICTIONARY || !h.has_dict || h.compressed_page_size < 0 ||
        h.uncompressed_page_size < 0 || h.dict.num_values < 0 ||
        (uint64_t)hlen + (uint64_t)h.compressed_page_size > ext.len ||
        (uint64_t)hlen + (uint64_t)h.compressed_page_size > MAX_AUX_BYTES ||
        (uint64_t)h.uncompressed_page_size > MAX_AUX_BYTES)
        return PQ_OK;
    /* Read only what the probe did not already bring in. */
    size_t total = hlen + (size_t)h.compressed_page_size;
    if (total > head) {
        uint8_t *grown = realloc(hb, total);
        if (!grown) return PQ_NOMEM(err);
        bufs[0] = hb = grown;
        PQ_TRY(pq_read_at(in->file, hb + head, total - (size_t)head, ext.start + head, err));
        *head_len = total;
    }
    const uint8_t *plain = hb + hlen;
    size_t plain_len = (size_t)h.compressed_page_size;
    pq_codec codec = (pq_codec)cc->meta.codec;
    if (codec != PQ_CODEC_UNCOMPRESSED) {
        uint8_t *u = malloc(h.uncompressed_page_size ? (size_t)h.uncompressed_page_size : 1);
        if (!u) return PQ_NOMEM(err);
        bufs[1] = u;
        if (pq_decompress(codec, plain, plain_len, u, (size_t)h.uncompressed_page_size, &ignore) != PQ_OK)
            return PQ_OK;
        plain = u;
        plain_len = (size_t)h.uncompressed_page_size;
    }
    if (pq_dict_decode(dict, leaf->node->phys, leaf->node->type_length, plain, plain_len,
                       (uint32_t)h.dict.num_values, arena, &ignore) != PQ_OK)
        memset(dict, 0, sizeof *dict);
    return PQ_OK;
}

/* Whether the dictionary holds a value equal to v (by value: -0.0 = 0.0),
 * each value widened (w) to the table's type, v's. */
static bool dict_contains(const pq_node *n, int w, const pq_dict *d, const pq_value *v)
{
    size_t vs = pq_value_size(d->type);
    uint8_t plain[16];
    for (uint32_t i = 0; i < d->n; i++) {
        const uint8_t *p;
        size_t len;
        const void *elem = (const uint8_t *)d->values + (size_t)i * vs;
        if (d->type == PQ_BYTE_ARRAY || d->type == PQ_FIXED_LEN_BYTE_ARRAY) {
            const pq_bytes *b = elem;
            p = b->ptr;
            len = b->len;
        } else if (d->type == PQ_BOOLEAN) {
            plain[0] = *(const uint8_t *)elem;
            p = plain;
            len = 1;
        } else {
            memcpy(plain, elem, vs);
            p = plain;
            len = vs;
        }
        pq_value dv;
        if (pq_value_from_plain(n, p, len, &dv) != 0 || widen_value(w, &dv) != 0) return true; /* cannot tell: keep */
        if (dv.type == v->type && pq_value_cmp(&dv, v) == 0) return true;
    }
    return false;
}

/* A dictionary that did not prune leaves its chunk's first bytes in *keep
 * (malloc'd; the caller hands them to the scan or frees them). */
typedef struct kept_bytes {
    uint8_t *bytes;
    uint64_t off;
    size_t len;
} kept_bytes;

static int dictionary_rung(const pq_plan_input *in, const pq_row_group *g, const pq_expr *const *conj,
                           int n_conj, pq_arena *arena, bool *pruned, kept_bytes *keep, pq_error *err)
{
    *pruned = false;
    pq_value values[MAX_EQ_VALUES];
    for (int c = 0; c < n_conj && !*pruned; c++) {
        int nv;
        int col = pq_expr_equality_values(conj[c], values, MAX_EQ_VALUES, &nv);
        if (col < 0 || in->col_leaf[col] < 0) continue;
        int32_t leaf = in->col_leaf[col];
        const pq_column_chunk *cc = &g->columns[leaf];
        if (!cc->has_meta || !chunk_all_dictionary(&cc->meta)) continue;
        const pq_leaf *lf = &in->footer->schema.leaves[leaf];
        pq_dict dict;
        uint8_t *bufs[2] = {NULL, NULL};
        uint64_t start = 0;
        size_t head_len = 0;
        int rc = load_dictionary(in, cc, lf, arena, &dict, bufs, &start, &head_len, err);
        if (rc == PQ_OK && dict.values) {
            bool any = false;
            for (int k = 0; k < nv && !any; k++) any = dict_contains(lf->node, widen_of(in, leaf), &dict, &values[k]);
            if (!any) *pruned = true;
        }
        if (rc == PQ_OK && !*pruned && !keep->bytes) *keep = (kept_bytes){bufs[0], start, head_len};
        else free(bufs[0]);
        free(bufs[1]);
        PQ_TRY(rc);
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ bloom rung */

int pq_bloom_filter_load(pq_file *f, const pq_footer *ft, const pq_column_meta *m, uint8_t **raw, size_t *raw_len,
                         pq_bloom *out, pq_error *err)
{
    *raw = NULL;
    *raw_len = 0;
    if (!m->has_bloom_filter_offset || m->bloom_filter_offset < 0) return PQ_OK;
    uint64_t off = (uint64_t)m->bloom_filter_offset;
    /* The header is small; with a known length everything is one read. */
    uint64_t len = m->has_bloom_filter_length && m->bloom_filter_length > 0 ? (uint64_t)m->bloom_filter_length : 64;
    uint8_t *buf;
    PQ_TRY(read_exact(f, ft->file_size, off, len, &buf, err));
    if (!buf && len == 64 && off < ft->file_size) {
        len = ft->file_size - off;
        PQ_TRY(read_exact(f, ft->file_size, off, len, &buf, err));
    }
    if (!buf) return PQ_OK;
    pq_bloom_header bh;
    size_t hlen;
    pq_error ignore;
    uint64_t total = 0;
    if (pq_decode_bloom_header(buf, (size_t)len, &bh, &hlen, &ignore) != PQ_OK || !bh.algorithm_block ||
        !bh.hash_xxhash || !bh.compression_none || bh.num_bytes <= 0 || bh.num_bytes % 32 ||
        (uint32_t)bh.num_bytes > MAX_AUX_BYTES ||
        (total = (uint64_t)hlen + (uint64_t)bh.num_bytes) > ft->file_size - off) {
        free(buf);
        return PQ_OK;
    }
    if (total > len) {
        /* The bitset's rest, after what the first read brought. */
        uint8_t *grown = realloc(buf, (size_t)total);
        if (!grown) {
            free(buf);
            return PQ_NOMEM(err);
        }
        buf = grown;
        if (pq_read_at(f, buf + len, (size_t)(total - len), off + len, err) != PQ_OK) {
            free(buf);
            return PQ_ERR;
        }
    }
    *raw = buf;
    *raw_len = (size_t)total;
    *out = (pq_bloom){buf + hlen, (uint32_t)bh.num_bytes};
    return PQ_OK;
}

static int bloom_rung(const pq_plan_input *in, const pq_row_group *g, const pq_expr *const *conj, int n_conj,
                      bool *pruned, pq_error *err)
{
    *pruned = false;
    pq_value values[MAX_EQ_VALUES];
    for (int c = 0; c < n_conj && !*pruned; c++) {
        int nv;
        int col = pq_expr_equality_values(conj[c], values, MAX_EQ_VALUES, &nv);
        if (col < 0 || in->col_leaf[col] < 0) continue;
        int32_t leaf = in->col_leaf[col];
        const pq_column_chunk *cc = &g->columns[leaf];
        if (!cc->has_meta) continue;
        const pq_node *node = in->footer->schema.leaves[leaf].node;
        /* INT96 (a column widened to TIMESTAMP(MICROS): the predicate's
         * values are the table's): one value has many encodings (the
         * nanoseconds below the microsecond it reads as; days wrapped as
         * Spark writes them), and the filter hashes the one written. */
        if (node->phys == PQ_INT96) continue;
        bool to_double = widens_to_double(widen_of(in, leaf));
        uint8_t *raw;
        size_t raw_len;
        pq_bloom bloom;
        PQ_TRY(pq_bloom_filter_load(in->file, in->footer, &cc->meta, &raw, &raw_len, &bloom, err));
        if (!raw) continue;
        bool any = false;
        for (int k = 0; k < nv && !any; k++) {
            uint8_t plain[64];
            uint8_t *big = NULL;
            pq_value probe = values[k];
            /* The values are the table's (DOUBLE), the filter hashes the file's integers. */
            int ip = to_double ? integer_probe(&values[k], &probe) : 0;
            if (ip > 0) continue;
            if (ip < 0) {
                any = true;
                break;
            }
            int pl = pq_value_to_plain(node, &probe, plain, sizeof plain);
            if (pl < 0 && values[k].type == PQ_V_STRING) {
                /* long string literal: encode into a heap buffer */
                big = malloc(values[k].u.s.len + 16);
                if (big) pl = pq_value_to_plain(node, &values[k], big, values[k].u.s.len + 16);
                if (pl < 0) {
                    free(big);
                    big = NULL;
                    any = true; /* cannot encode: keep */
                    break;
                }
            }
            if (pl == -1) continue; /* no exact representation: no row equals it */
            if (pl < 0) {
                any = true; /* cannot tell: keep */
                break;
            }
            any = pq_bloom_may_contain(&bloom, big ? big : plain, (size_t)pl);
            free(big);
        }
        if (!any) *pruned = true;
        free(raw);
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ page index rung */

typedef struct loaded_index {
    pq_column_index ci;
    pq_offset_index oi;
    bool has_ci, has_oi;
    uint8_t *ci_buf;           /* ColumnIndex bounds point into it */
} loaded_index;

int pq_offset_index_load(pq_file *f, const pq_footer *ft, const pq_column_chunk *cc, int64_t rg_rows,
                         pq_arena *arena, pq_offset_index *out, bool *ok, pq_error *err)
{
    *ok = false;
    if (!cc->has_offset_index || cc->offset_index_length <= 0 || cc->offset_index_offset < 0) return PQ_OK;
    uint8_t *buf;
    PQ_TRY(read_exact(f, ft->file_size, (uint64_t)cc->offset_index_offset, (uint64_t)cc->offset_index_length, &buf,
                      err));
    if (!buf) return PQ_OK;
    pq_error ignore;
    int rc = pq_decode_offset_index(buf, (size_t)cc->offset_index_length, arena, out, &ignore);
    free(buf);
    if (rc != PQ_OK || out->n_pages <= 0) return PQ_OK;
    /* Pages must start at row 0, ascend strictly within the row group, and
     * lie inside the file. */
    if (out->pages[0].first_row_index != 0) return PQ_OK;
    for (int32_t p = 0; p < out->n_pages; p++) {
        const pq_page_location *pl = &out->pages[p];
        if (pl->first_row_index < 0 || pl->first_row_index >= rg_rows) return PQ_OK;
        if (p && pl->first_row_index <= out->pages[p - 1].first_row_index) return PQ_OK;
        if (pl->offset < 0 || pl->compressed_page_size <= 0 ||
            (uint64_t)pl->offset + (uint64_t)pl->compressed_page_size > ft->file_size)
            return PQ_OK;
    }
    *ok = true;
    return PQ_OK;
}

static int64_t page_end_row(const pq_offset_index *oi, int32_t p, int64_t rg_rows)
{
    return p + 1 < oi->n_pages ? oi->pages[p + 1].first_row_index : rg_rows;
}

/* Intersects two sorted disjoint range lists into `out` (room for na + nb). */
static int32_t intersect_ranges(const pq_row_range *a, int32_t na, const pq_row_range *b, int32_t nb,
                                pq_row_range *out)
{
    int32_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        int64_t lo = a[i].begin > b[j].begin ? a[i].begin : b[j].begin;
        int64_t hi = a[i].end < b[j].end ? a[i].end : b[j].end;
        if (lo < hi) out[n++] = (pq_row_range){lo, hi};
        if (a[i].end < b[j].end) i++;
        else j++;
    }
    return n;
}

static int page_index_rung(const pq_plan_input *in, const pq_row_group *g, const pq_expr *const *conj,
                           int n_conj, pq_arena *arena, pq_rg_plan *p, pq_error *err)
{
    int64_t rows = g->num_rows;
    pq_row_range *sel = pq_arena_alloc(arena, sizeof *sel);
    if (!sel) return PQ_NOMEM(err);
    sel[0] = (pq_row_range){0, rows};
    int32_t n_sel = rows > 0 ? 1 : 0;
    bool narrowed = false;
    pq_col_range *ranges = pq_arena_alloc(arena, sizeof *ranges * (size_t)(in->n_cols ? in->n_cols : 1));
    if (!ranges) return PQ_NOMEM(err);
    /* Leaves whose column index was used: their pages are counted once,
     * against the final selection, however many conjuncts read them. */
    int32_t *used = pq_arena_alloc(arena, sizeof *used * (size_t)(n_conj ? n_conj : 1));
    if (!used) return PQ_NOMEM(err);
    int n_used = 0;
    for (int c = 0; c < n_conj && n_sel > 0; c++) {
        int col = single_column(conj[c]);
        if (col < 0 || in->col_leaf[col] < 0) continue;
        int32_t leaf = in->col_leaf[col];
        const pq_column_chunk *cc = &g->columns[leaf];
        const pq_leaf *lf = &in->footer->schema.leaves[leaf];
        if (!cc->has_column_index || cc->column_index_length <= 0 || cc->column_index_offset < 0) continue;
        if (lf->column_order == PQ_ORDER_UNKNOWN || !has_sort_order(lf->node) || lf->max_rep > 0) continue;
        pq_offset_index *oi = p->offset_index[leaf];
        if (!oi) {
            oi = pq_arena_alloc(arena, sizeof *oi);
            if (!oi) return PQ_NOMEM(err);
            bool ok;
            PQ_TRY(pq_offset_index_load(in->file, in->footer, cc, rows, arena, oi, &ok, err));
            if (!ok) continue;
            p->offset_index[leaf] = oi;
        }
        uint8_t *ci_buf;
        PQ_TRY(read_exact(in->file, in->footer->file_size, (uint64_t)cc->column_index_offset,
                          (uint64_t)cc->column_index_length, &ci_buf, err));
        if (!ci_buf) continue;
        pq_column_index ci;
        pq_error ignore;
        if (pq_decode_column_index(ci_buf, (size_t)cc->column_index_length, arena, &ci, &ignore) != PQ_OK ||
            ci.n_pages != oi->n_pages) {
            free(ci_buf);
            continue;
        }
        pq_row_range *kept = pq_arena_alloc(arena, sizeof *kept * (size_t)ci.n_pages);
        if (!kept) {
            free(ci_buf);
            return PQ_NOMEM(err);
        }
        int32_t n_kept = 0;
        int u = 0;
        while (u < n_used && used[u] != leaf) u++;
        if (u == n_used) used[n_used++] = leaf;
        for (int32_t pg = 0; pg < ci.n_pages; pg++) {
            memset(ranges, 0, sizeof *ranges * (size_t)in->n_cols);
            pq_col_range *r = &ranges[col];
            int64_t b = oi->pages[pg].first_row_index, e = page_end_row(oi, pg, rows);
            r->known = true;
            r->row_count = e - b;
            r->may_have_nan = is_float_type(lf->node);
            if (ci.null_counts && ci.null_counts[pg] >= 0 && ci.null_counts[pg] <= r->row_count) {
                r->has_null_count = true;
                r->null_count = ci.null_counts[pg];
            }
            if (ci.null_pages[pg]) {
                r->has_null_count = true;
                r->null_count = r->row_count;
            } else {
                pq_value lo, hi;
                if (pq_value_from_plain(lf->node, ci.min_values[pg].ptr, ci.min_values[pg].len, &lo) == 0 &&
                    pq_value_from_plain(lf->node, ci.max_values[pg].ptr, ci.max_values[pg].len, &hi) == 0 &&
                    !bound_is_nan(&lo) && !bound_is_nan(&hi) && pq_value_cmp(&lo, &hi) <= 0) {
                    r->has_min = r->has_max = true;
                    r->min = lo;
                    r->max = hi;
                    widen_range(widen_of(in, leaf), r);
                }
            }
            if (pq_expr_prune(conj[c], ranges) == PQ_TRI_FALSE) continue;
            if (n_kept && kept[n_kept - 1].end == b) kept[n_kept - 1].end = e;
            else kept[n_kept++] = (pq_row_range){b, e};
        }
        free(ci_buf);
        pq_row_range *next = pq_arena_alloc(arena, sizeof *next * (size_t)(n_sel + n_kept + 1));
        if (!next) return PQ_NOMEM(err);
        int32_t n_next = intersect_ranges(sel, n_sel, kept, n_kept, next);
        if (n_next != 1 || next[0].begin != 0 || next[0].end != rows) narrowed = true;
        sel = next;
        n_sel = n_next;
    }
    for (int u = 0; u < n_used; u++) {
        const pq_offset_index *oi = p->offset_index[used[u]];
        int32_t r = 0;
        for (int32_t pg = 0; pg < oi->n_pages; pg++) {
            int64_t b = oi->pages[pg].first_row_index, e = page_end_row(oi, pg, rows);
            while (r < n_sel && sel[r].end <= b) r++;
            p->pages_total++;
            if (!(r < n_sel && sel[r].begin < e)) p->pages_pruned++;
        }
    }
    if (n_sel == 0) {
        p->decision = PQ_RG_SKIP;
        p->pruned_by = PQ_RUNG_PAGE_INDEX;
        return PQ_OK;
    }
    if (narrowed) {
        p->decision = PQ_RG_SELECT;
        p->ranges = sel;
        p->n_ranges = n_sel;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ bytes */

static void count_bytes(const pq_plan_input *in, const pq_row_group *g, pq_rg_plan *p)
{
    for (int32_t i = 0; i < in->n_read_leaves; i++) {
        int32_t leaf = in->read_leaves[i];
        const pq_column_chunk *cc = &g->columns[leaf];
        pq_chunk_extent ext;
        pq_error ignore;
        if (pq_chunk_extent_of(cc, in->footer->file_size, in->footer->legacy_chunk_sizes, &ext, &ignore) != PQ_OK)
            continue;
        p->bytes_total += ext.len;
        if (p->decision == PQ_RG_SKIP) continue;
        const pq_offset_index *oi = p->offset_index ? p->offset_index[leaf] : NULL;
        if (p->decision == PQ_RG_SCAN || !oi) {
            p->bytes_to_read += ext.len;
            continue;
        }
        /* dictionary (and anything else before the first data page) + the
         * pages that overlap a selected range */
        uint64_t first = (uint64_t)oi->pages[0].offset;
        if (first > ext.start) p->bytes_to_read += first - ext.start;
        int32_t r = 0;
        for (int32_t pg = 0; pg < oi->n_pages; pg++) {
            int64_t b = oi->pages[pg].first_row_index, e = page_end_row(oi, pg, p->rows);
            while (r < p->n_ranges && p->ranges[r].end <= b) r++;
            if (r < p->n_ranges && p->ranges[r].begin < e) p->bytes_to_read += (uint64_t)oi->pages[pg].compressed_page_size;
        }
    }
}

/* Loads the offset index of every leaf the scan reads, so that it fetches
 * only the selected pages. */
static int load_read_offset_indexes(const pq_plan_input *in, const pq_row_group *g, pq_arena *arena,
                                    pq_rg_plan *p, pq_error *err)
{
    for (int32_t i = 0; i < in->n_read_leaves; i++) {
        int32_t leaf = in->read_leaves[i];
        if (p->offset_index[leaf]) continue;
        if (in->footer->schema.leaves[leaf].max_rep > 0) continue;
        pq_offset_index *oi = pq_arena_alloc(arena, sizeof *oi);
        if (!oi) return PQ_NOMEM(err);
        bool ok;
        PQ_TRY(pq_offset_index_load(in->file, in->footer, &g->columns[leaf], g->num_rows, arena, oi, &ok, err));
        if (ok) p->offset_index[leaf] = oi;
    }
    return PQ_OK;
}

int pq_plan_offset_index(const pq_plan_input *in, int32_t rg, int32_t leaf, pq_arena *arena,
                         const pq_offset_index **out, pq_error *err)
{
    *out = NULL;
    const pq_footer *ft = in->footer;
    if (in->no_page_index || rg < 0 || rg >= ft->meta.n_row_groups || leaf < 0 || leaf >= ft->schema.n_leaves)
        return PQ_OK;
    if (ft->schema.leaves[leaf].max_rep > 0) return PQ_OK;
    const pq_row_group *g = &ft->meta.row_groups[rg];
    pq_offset_index *oi = pq_arena_alloc(arena, sizeof *oi);
    if (!oi) return PQ_NOMEM(err);
    bool ok;
    PQ_TRY(pq_offset_index_load(in->file, in->footer, &g->columns[leaf], g->num_rows, arena, oi, &ok, err));
    if (ok) *out = oi;
    return PQ_OK;
}

/* ------------------------------------------------------------------ the ladder */

/* The first deleted row at or after `row`. */
static uint64_t first_deleted_at(const pq_plan_input *in, uint64_t row)
{
    uint64_t lo = 0, hi = in->n_deleted;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (in->deleted_rows[mid] < row) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* A table format's deleted rows leave the selection: a SCAN row group that
 * holds some becomes a SELECT of the rows around them, a SELECT loses them
 * from its ranges (fully_matched stays: no row filter is needed for it). */
static int apply_deleted_rows(const pq_plan_input *in, int32_t rg, pq_arena *arena, pq_rg_plan *p, pq_error *err)
{
    if (!in->n_deleted || p->decision == PQ_RG_SKIP) return PQ_OK;
    uint64_t first = 0;
    for (int32_t i = 0; i < rg; i++) first += (uint64_t)in->footer->meta.row_groups[i].num_rows;
    uint64_t lo = first_deleted_at(in, first), hi = first_deleted_at(in, first + (uint64_t)p->rows);
    if (lo == hi) return PQ_OK;
    pq_row_range whole = {0, p->rows};
    const pq_row_range *sel = p->decision == PQ_RG_SELECT ? p->ranges : &whole;
    int32_t n_sel = p->decision == PQ_RG_SELECT ? p->n_ranges : 1;
    if (hi - lo > (uint64_t)(INT32_MAX - n_sel)) return pq_fail(err, PQ_E_UNSUPPORTED, "too many deleted rows in row group %d", rg);
    pq_row_range *out = pq_arena_alloc(arena, sizeof *out * (size_t)(n_sel + (int64_t)(hi - lo)));
    if (!out) return PQ_NOMEM(err);
    int32_t n = 0;
    uint64_t d = lo;
    for (int32_t r = 0; r < n_sel; r++) {
        int64_t b = sel[r].begin;
        for (; d < hi && (int64_t)(in->deleted_rows[d] - first) < sel[r].end; d++) {
            int64_t x = (int64_t)(in->deleted_rows[d] - first);
            if (x < b) continue;
            if (x > b) out[n++] = (pq_row_range){b, x};
            b = x + 1;
        }
        if (b < sel[r].end) out[n++] = (pq_row_range){b, sel[r].end};
    }
    p->decision = PQ_RG_SELECT;
    p->ranges = out;
    p->n_ranges = n;
    return PQ_OK;
}

int pq_plan_row_group(const pq_plan_input *in, int32_t rg, pq_arena *arena, pq_rg_plan *p, pq_error *err)
{
    const pq_footer *ft = in->footer;
    const pq_row_group *g = &ft->meta.row_groups[rg];
    memset(p, 0, sizeof *p);
    p->row_group = rg;
    p->rows = g->num_rows;
    p->decision = PQ_RG_SCAN;
    p->n_leaves = ft->schema.n_leaves;
    p->offset_index = pq_arena_alloc(arena, sizeof *p->offset_index * (size_t)(p->n_leaves ? p->n_leaves : 1));
    if (!p->offset_index) return PQ_NOMEM(err);

    pq_tri whole = in->pred ? pq_expr_constant(in->pred) : PQ_TRI_TRUE;
    if (whole == PQ_TRI_FALSE || g->num_rows == 0) {
        p->decision = PQ_RG_SKIP;
        p->pruned_by = whole == PQ_TRI_FALSE ? PQ_RUNG_PARTITION : PQ_RUNG_STATS;
    } else if (whole == PQ_TRI_TRUE) {
        p->fully_matched = true;
    } else {
        /* Rung 2: statistics. */
        pq_col_range *ranges = pq_arena_alloc(arena, sizeof *ranges * (size_t)(in->n_cols ? in->n_cols : 1));
        if (!ranges) return PQ_NOMEM(err);
        for (int c = 0; c < in->n_cols; c++) {
            int32_t leaf = in->col_leaf[c];
            if (leaf < 0 || in->no_stats) continue;
            const pq_column_chunk *cc = &g->columns[leaf];
            if (!cc->has_meta) continue;
            pq_range_from_stats(&ft->schema.leaves[leaf], &cc->meta.stats, cc->meta.has_stats, g->num_rows,
                                &ranges[c]);
            widen_range(widen_of(in, leaf), &ranges[c]);
        }
        pq_tri t = pq_expr_prune(in->pred, ranges);
        if (t == PQ_TRI_FALSE) {
            p->decision = PQ_RG_SKIP;
            p->pruned_by = PQ_RUNG_STATS;
        } else if (t == PQ_TRI_TRUE) {
            p->fully_matched = true;
        } else {
            int n_conj = pq_expr_conjuncts(in->pred, NULL, 0);
            const pq_expr **conj = pq_arena_alloc(arena, sizeof *conj * (size_t)n_conj);
            if (!conj) return PQ_NOMEM(err);
            pq_expr_conjuncts(in->pred, conj, n_conj);
            bool pruned = false;
            /* Bloom filters before dictionaries: both answer equality, and a
             * filter is a few KiB where a dictionary page can be megabytes.
             * Only "definitely absent" prunes, so the dictionary still runs
             * on what the filters kept. */
            if (!in->no_bloom) {
                PQ_TRY(bloom_rung(in, g, conj, n_conj, &pruned, err));
                if (pruned) {
                    p->decision = PQ_RG_SKIP;
                    p->pruned_by = PQ_RUNG_BLOOM;
                }
            }
            kept_bytes keep = {NULL, 0, 0};
            if (!pruned && !in->no_dictionary) {
                int rc = dictionary_rung(in, g, conj, n_conj, arena, &pruned, &keep, err);
                if (rc != PQ_OK) {
                    free(keep.bytes);
                    return rc;
                }
                if (pruned) {
                    p->decision = PQ_RG_SKIP;
                    p->pruned_by = PQ_RUNG_DICTIONARY;
                }
            }
            /* Page index: single-column conjuncts to row ranges. */
            int rc = PQ_OK;
            if (!pruned && !in->no_page_index) rc = page_index_rung(in, g, conj, n_conj, arena, p, err);
            /* A row group still to be read takes the dictionary's bytes from
             * memory instead of reading them again. */
            if (rc == PQ_OK && p->decision != PQ_RG_SKIP) pq_file_keep_range(in->file, keep.bytes, keep.off, keep.len);
            else free(keep.bytes);
            PQ_TRY(rc);
        }
    }
    PQ_TRY(apply_deleted_rows(in, rg, arena, p, err));
    if (p->decision == PQ_RG_SELECT) PQ_TRY(load_read_offset_indexes(in, g, arena, p, err));
    if (p->decision == PQ_RG_SCAN) p->rows_selected = p->rows;
    else if (p->decision == PQ_RG_SELECT)
        for (int32_t i = 0; i < p->n_ranges; i++) p->rows_selected += p->ranges[i].end - p->ranges[i].begin;
    count_bytes(in, g, p);
    return PQ_OK;
}

int pq_plan_limit_rows(const pq_plan_input *in, int64_t rows, pq_arena *arena, pq_rg_plan *p, pq_error *err)
{
    if (p->decision != PQ_RG_SCAN || rows >= p->rows || rows < 0) return PQ_OK;
    const pq_row_group *g = &in->footer->meta.row_groups[p->row_group];
    p->ranges = pq_arena_alloc(arena, sizeof *p->ranges);
    if (!p->ranges) return PQ_NOMEM(err);
    p->ranges[0] = (pq_row_range){0, rows};
    p->n_ranges = 1;
    p->decision = PQ_RG_SELECT;
    p->rows_selected = rows;
    PQ_TRY(load_read_offset_indexes(in, g, arena, p, err));
    p->bytes_total = p->bytes_to_read = 0;
    count_bytes(in, g, p);
    return PQ_OK;
}

/* ------------------------------------------------------------------ totals and text */

void pq_plan_totals_add(pq_plan_totals *t, const pq_rg_plan *p)
{
    t->row_groups++;
    if (p->decision == PQ_RG_SKIP) t->row_groups_pruned[p->pruned_by]++;
    else if (p->fully_matched) t->row_groups_fully_matched++;
    t->pages += (uint64_t)p->pages_total;
    t->pages_pruned += (uint64_t)p->pages_pruned;
    t->rows += (uint64_t)p->rows;
    t->rows_selected += (uint64_t)p->rows_selected;
    t->bytes_total += p->bytes_total;
    t->bytes_to_read += p->bytes_to_read;
}

void pq_plan_totals_merge(pq_plan_totals *t, const pq_plan_totals *m)
{
    t->files += m->files;
    t->files_pruned += m->files_pruned;
    t->files_pruned_log += m->files_pruned_log;
    t->log_rung |= m->log_rung;
    t->dirs_pruned += m->dirs_pruned;
    t->row_groups += m->row_groups;
    for (int r = 0; r < PQ_RUNG_COUNT; r++) t->row_groups_pruned[r] += m->row_groups_pruned[r];
    t->row_groups_fully_matched += m->row_groups_fully_matched;
    t->row_groups_past_limit += m->row_groups_past_limit;
    t->pages += m->pages;
    t->pages_pruned += m->pages_pruned;
    t->rows += m->rows;
    t->rows_selected += m->rows_selected;
    t->bytes_total += m->bytes_total;
    t->bytes_to_read += m->bytes_to_read;
}

int pq_plan_rg_text(const pq_rg_plan *p, pq_buf *out)
{
    int rc = pq_buf_printf(out, "  row group %d: %lld rows: ", p->row_group, (long long)p->rows);
    switch (p->decision) {
    case PQ_RG_SKIP: rc |= pq_buf_printf(out, "skip (%s)", pq_rung_name(p->pruned_by)); break;
    case PQ_RG_SCAN: rc |= pq_buf_puts(out, "scan"); break;
    case PQ_RG_SELECT:
        rc |= pq_buf_printf(out, "select %lld rows in %d range%s", (long long)p->rows_selected, p->n_ranges,
                            p->n_ranges == 1 ? "" : "s");
        for (int32_t i = 0; i < p->n_ranges && i < 8; i++)
            rc |= pq_buf_printf(out, " [%lld,%lld)", (long long)p->ranges[i].begin, (long long)p->ranges[i].end);
        if (p->n_ranges > 8) rc |= pq_buf_puts(out, " ...");
        break;
    }
    if (p->fully_matched) rc |= pq_buf_puts(out, ", fully matched");
    if (p->pages_total) rc |= pq_buf_printf(out, ", pages %d pruned of %d", p->pages_pruned, p->pages_total);
    rc |= pq_buf_printf(out, ", bytes %llu of %llu\n", (unsigned long long)p->bytes_to_read,
                        (unsigned long long)p->bytes_total);
    return rc ? -1 : 0;
}

int pq_plan_totals_text(const pq_plan_totals *t, pq_buf *out)
{
    int rc = pq_buf_printf(out, "files: %llu total, %llu pruned by partition", (unsigned long long)t->files,
                           (unsigned long long)t->files_pruned);
    if (t->log_rung) rc |= pq_buf_printf(out, ", %llu pruned by log statistics", (unsigned long long)t->files_pruned_log);
    if (t->dirs_pruned)
        rc |= pq_buf_printf(out, "; %llu partition director%s pruned at listing (files not listed)",
                            (unsigned long long)t->dirs_pruned, t->dirs_pruned == 1 ? "y" : "ies");
    rc |= pq_buf_puts(out, "\n");
    uint64_t pruned = 0;
    for (int r = 0; r < PQ_RUNG_COUNT; r++) pruned += t->row_groups_pruned[r];
    rc |= pq_buf_printf(out, "row groups: %llu total, %llu pruned (statistics %llu, dictionary %llu, page index %llu, "
                             "bloom filter %llu), %llu fully matched\n",
                        (unsigned long long)t->row_groups, (unsigned long long)pruned,
                        (unsigned long long)t->row_groups_pruned[PQ_RUNG_STATS],
                        (unsigned long long)t->row_groups_pruned[PQ_RUNG_DICTIONARY],
                        (unsigned long long)t->row_groups_pruned[PQ_RUNG_PAGE_INDEX],
                        (unsigned long long)t->row_groups_pruned[PQ_RUNG_BLOOM],
                        (unsigned long long)t->row_groups_fully_matched);
    if (t->row_groups_past_limit) {
        out->len--; /* the newline: the limit belongs on the row groups line */
        rc |= pq_buf_printf(out, ", %llu past the limit (not read)\n", (unsigned long long)t->row_groups_past_limit);
    }
    rc |= pq_buf_printf(out, "pages: %llu in page indexes, %llu pruned\n", (unsigned long long)t->pages,
                        (unsigned long long)t->pages_pruned);
    rc |= pq_buf_printf(out, "rows: %llu total, %llu selected for decoding\n", (unsigned long long)t->rows,
                        (unsigned long long)t->rows_selected);
    rc |= pq_buf_printf(out, "bytes: %llu to read of %llu\n", (unsigned long long)t->bytes_to_read,
                        (unsigned long long)t->bytes_total);
    return rc ? -1 : 0;
}
