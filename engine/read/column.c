#include "column.h"

#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* A page's decompressed bytes are kept until the batch that may hold views
 * into them is replaced; then they return to a small pool for reuse. */
typedef struct page_buf {
    uint8_t *p;
    size_t cap;
} page_buf;

#define PQ_POOL_MAX 4
/* A page with more level entries than this is refused: it would need more
 * memory for levels than any real writer produces. */
#define PQ_MAX_PAGE_ENTRIES (64 * 1024 * 1024)
/* Pages are decompressed whole; a larger page is refused rather than letting
 * one file take gigabytes of a shared daemon's memory. */
#define PQ_MAX_PAGE_BYTES (256 * 1024 * 1024)

struct pq_col_reader {
    pq_col_source src;
    pq_phys type;
    int32_t type_length;
    uint16_t max_def, max_rep;
    size_t vsize;
    pq_codec codec;

    int64_t total_values;      /* level entries in the chunk (ColumnMetaData.num_values) */
    int64_t values_seen;       /* level entries of the data pages met so far */
    uint64_t next_page_off;
    int64_t rows_done;
    bool first_entry_checked;

    bool has_dict;
    pq_dict dict;
    pq_arena dict_arena;
    uint8_t *dict_buf;

    /* current data page */
    bool in_page;
    int32_t page_levels;
    int32_t page_pos;
    uint16_t *page_def, *page_rep;
    bool page_all_defined;     /* every definition level is max_def: page_def is not filled */
    size_t page_level_cap;
    pq_values_dec dec;
    page_buf cur;              /* decompressed bytes of the current page (p NULL: none) */
    int32_t page_index;        /* data pages met so far */
    int32_t oi_next;           /* with an offset index: the next page to load */
    bool dict_checked;

    page_buf *held;            /* finished pages the current batch may still point into */
    int n_held, cap_held;
    page_buf pool[PQ_POOL_MAX];
    int n_pool;

    /* batch output */
    uint16_t *out_def, *out_rep;
    size_t out_level_cap;
    uint8_t *out_values;
    size_t out_value_cap;      /* in values */
    pq_arena storage;

    pq_col_counters counters;

    pq_byte_range *extra;      /* bytes read on demand from src.file */
    int n_extra, cap_extra;
    /* Rows skipped but not yet consumed: skips add up until the next read, so
     * that the dropped rows of many windows skip whole pages undecoded. */
    int64_t pending_skip;
};

/* ------------------------------------------------------------------ helpers */

static int fail_at(pq_col_reader *r, pq_error *err)
{
    pq_error_prefix(err, "column '%s' (row group %d, page %d): ", r->src.leaf->path,
                    r->src.row_group, r->page_index);
    return PQ_ERR;
}

/* The longest run of fetched bytes starting at off (its length in *avail),
 * or NULL when no fetched range holds off. */
static const uint8_t *locate_from(const pq_col_reader *r, uint64_t off, uint64_t *avail)
{
    const uint8_t *best = NULL;
    uint64_t best_left = 0;
    for (int pass = 0; pass < 2; pass++) {
        const pq_byte_range *rs = pass ? r->extra : r->src.ranges;
        int32_t n = pass ? r->n_extra : r->src.n_ranges;
        for (int32_t i = 0; i < n; i++) {
            const pq_byte_range *br = &rs[i];
            if (off >= br->off && off - br->off < br->len && br->len - (off - br->off) > best_left) {
                best_left = br->len - (off - br->off);
                best = br->data + (off - br->off);
            }
        }
    }
    *avail = best_left;
    return best;
}

/* [off, off+len) of the chunk in memory: from the fetched ranges, else read
 * from src.file (only the bytes past what is already there). */
static const uint8_t *ensure_bytes(pq_col_reader *r, uint64_t off, uint64_t len, pq_error *err)
{
    uint64_t have;
    const uint8_t *p = locate_from(r, off, &have);
    if (p && have >= len) return p;
    if (!r->src.file || off < r->src.first_page_off || off > r->src.end_off || len > r->src.end_off - off) {
        pq_fail(err, PQ_E_CORRUPT, "bytes %llu..%llu of the chunk were not fetched", (unsigned long long)off,
                (unsigned long long)(off + len));
        return NULL;
    }
    if (!p) have = 0;
    if (r->n_extra == r->cap_extra) {
        int cap = r->cap_extra ? r->cap_extra * 2 : 4;
        pq_byte_range *grown = realloc(r->extra, sizeof *grown * (size_t)cap);
        if (!grown) {
            PQ_NOMEM(err);
            return NULL;
        }
        r->extra = grown;
        r->cap_extra = cap;
    }
    uint8_t *buf = malloc(len ? (size_t)len : 1);
    if (!buf) {
        pq_fail(err, PQ_E_NOMEM, "out of memory for %llu bytes", (unsigned long long)len);
        return NULL;
    }
    if (have) memcpy(buf, p, (size_t)have);
    if (pq_read_at(r->src.file, buf + have, (size_t)(len - have), off + have, err) != PQ_OK) {
        free(buf);
        return NULL;
    }
    r->counters.bytes_fetched += len - have;
    r->extra[r->n_extra++] = (pq_byte_range){off, len, buf};
    return buf;
}

static int take_buffer(pq_col_reader *r, size_t need, bool populate, page_buf *out, pq_error *err)
{
    /* Reuse the pooled buffer with the most room. */
    int best = -1;
    for (int i = 0; i < r->n_pool; i++)
        if (best < 0 || r->pool[i].cap > r->pool[best].cap) best = i;
    page_buf b = {NULL, 0};
    if (best >= 0) {
        b = r->pool[best];
        r->pool[best] = r->pool[--r->n_pool];
    }
    if (b.cap < need) {
        size_t cap = need < 4096 ? 4096 : need;
        uint8_t *p = realloc(b.p, cap);
        if (!p) {
            free(b.p);
            return pq_fail(err, PQ_E_NOMEM, "out of memory for a page of %zu bytes", need);
        }
        b.p = p;
        b.cap = cap;
        if (populate) pq_prefault(p, cap);
    }
    *out = b;
    return PQ_OK;
}

static void give_back(pq_col_reader *r, page_buf b)
{
    if (!b.p) return;
    if (r->n_pool < PQ_POOL_MAX) r->pool[r->n_pool++] = b;
    else free(b.p);
}

/* The current page is done.  Byte-array values of the batch may be views into
 * its buffer, so it is held until the next batch; other types were copied. */
static int finish_page(pq_col_reader *r, pq_error *err)
{
    pq_values_free(&r->dec);
    memset(&r->dec, 0, sizeof r->dec);
    r->in_page = false;
    if (!r->cur.p) return PQ_OK;
    page_buf b = r->cur;
    r->cur.p = NULL;
    r->cur.cap = 0;
    if (r->type != PQ_BYTE_ARRAY && r->type != PQ_FIXED_LEN_BYTE_ARRAY) {
        give_back(r, b);
        return PQ_OK;
    }
    if (r->n_held == r->cap_held) {
        int cap = r->cap_held ? r->cap_held * 2 : 8;
        page_buf *h = realloc(r->held, sizeof *h * (size_t)cap);
        if (!h) {
            free(b.p);
            return PQ_NOMEM(err);
        }
        r->held = h;
        r->cap_held = cap;
    }
    r->held[r->n_held++] = b;
    return PQ_OK;
}

static void release_held(pq_col_reader *r)
{
    for (int i = 0; i < r->n_held; i++) give_back(r, r->held[i]);
    r->n_held = 0;
}

static int ensure_levels(pq_col_reader *r, size_t n, pq_error *err)
{
    if (n <= r->page_level_cap) return PQ_OK;
    size_t cap = r->page_level_cap ? r->page_level_cap : 1024;
    while (cap < n) cap *= 2;
    uint16_t *d = realloc(r->page_def, cap * sizeof *d);
    if (!d) return pq_fail(err, PQ_E_NOMEM, "out of memory for page levels");
    r->page_def = d;
    uint16_t *rp = realloc(r->page_rep, cap * sizeof *rp);
    if (!rp) return pq_fail(err, PQ_E_NOMEM, "out of memory for page levels");
    r->page_rep = rp;
    r->page_level_cap = cap;
    return PQ_OK;
}

static int ensure_out_levels(pq_col_reader *r, size_t n, pq_error *err)
{
    if (n <= r->out_level_cap) return PQ_OK;
    size_t cap = r->out_level_cap ? r->out_level_cap : 1024;
    while (cap < n) cap *= 2;
    uint16_t *d = realloc(r->out_def, cap * sizeof *d);
    if (!d) return pq_fail(err, PQ_E_NOMEM, "out of memory for levels");
    r->out_def = d;
    uint16_t *rp = realloc(r->out_rep, cap * sizeof *rp);
    if (!rp) return pq_fail(err, PQ_E_NOMEM, "out of memory for levels");
    r->out_rep = rp;
    r->out_level_cap = cap;
    return PQ_OK;
}

static int ensure_out_values(pq_col_reader *r, size_t n, pq_error *err)
{
    if (n <= r->out_value_cap) return PQ_OK;
    size_t cap = r->out_value_cap ? r->out_value_cap : 1024;
    while (cap < n) cap *= 2;
    uint8_t *v = realloc(r->out_values, cap * r->vsize);
    if (!v) return pq_fail(err, PQ_E_NOMEM, "out of memory for values");
    r->out_values = v;
    r->out_value_cap = cap;
    return PQ_OK;
}

/* Decompresses `len` bytes at src into a pooled buffer of exactly `ulen`
 * bytes (or points at src when the page is not compressed). */
static int page_bytes(pq_col_reader *r, bool compressed, const uint8_t *src, size_t len,
                      size_t ulen, const uint8_t **out, pq_error *err)
{
    if (!compressed || r->codec == PQ_CODEC_UNCOMPRESSED) {
        *out = src;
        return PQ_OK;
    }
    if (ulen == 0 && len == 0) {
        *out = src;
        return PQ_OK;
    }
    PQ_TRY(take_buffer(r, ulen ? ulen : 1, true, &r->cur, err));
    if (pq_decompress(r->codec, src, len, r->cur.p, ulen, err) != PQ_OK) return PQ_ERR;
    r->counters.bytes_decompressed += ulen;
    *out = r->cur.p;
    return PQ_OK;
}

/* Levels equal to `max` among n, and whether any is above it.  Blocks of 16
 * with a fixed inner trip count: gcc and clang vectorize them at -O2, and
 * every page runs this over all its levels.  The block sums are 32-bit: with
 * 16-bit ones gcc 12.2 at -O3 (outer-loop vectorization, inlined into
 * append_entries) returned counts far above n. */
static int32_t scan_levels(const uint16_t *lv, int32_t n, uint16_t max, bool *above)
{
    uint32_t bad = 0;
    int32_t count = 0, i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32_t b = 0, k = 0;
        for (int j = 0; j < 16; j++) {
            b |= (uint32_t)(lv[i + j] > max);
            k += (uint32_t)(lv[i + j] == max);
        }
        bad |= b;
        count += (int32_t)k;
    }
    for (; i < n; i++) {
        bad |= (uint32_t)(lv[i] > max);
        count += lv[i] == max;
    }
    *above = bad != 0;
    return count;
}

static int32_t count_defined(const uint16_t *def, int32_t n, uint16_t max_def)
{
    bool above;
    return scan_levels(def, n, max_def, &above);
}

static int check_levels(const uint16_t *lv, int32_t n, uint16_t max, const char *what, int32_t *n_max,
                        pq_error *err)
{
    bool above;
    int32_t c = scan_levels(lv, n, max, &above);
    if (above) return pq_fail(err, PQ_E_CORRUPT, "%s level above the maximum %u", what, max);
    if (n_max) *n_max = c;
    return PQ_OK;
}

static int start_values(pq_col_reader *r, int32_t enc, const uint8_t *p, size_t len,
                        int32_t n_values, pq_error *err)
{
    if ((enc == PQ_ENC_PLAIN_DICTIONARY || enc == PQ_ENC_RLE_DICTIONARY) && !r->has_dict)
        return pq_fail(err, PQ_E_CORRUPT, "dictionary-encoded page but the chunk has no dictionary page");
    return pq_values_init(&r->dec, (pq_encoding)enc, r->type, r->type_length, p, len,
                          (uint32_t)n_values, r->has_dict ? &r->dict : NULL, err);
}

static int load_dictionary(pq_col_reader *r, const pq_page_header *h, const uint8_t *data, pq_error *err)
{
    if (r->has_dict) return pq_fail(err, PQ_E_CORRUPT, "a second dictionary page");
    if (!h->has_dict) return pq_fail(err, PQ_E_CORRUPT, "dictionary page without its header");
    if (h->dict.num_values < 0) return pq_fail(err, PQ_E_CORRUPT, "dictionary of %d values", h->dict.num_values);
    const uint8_t *bytes = data;
    size_t ulen = (size_t)h->uncompressed_page_size;
    if (r->codec != PQ_CODEC_UNCOMPRESSED) {
        r->dict_buf = malloc(ulen ? ulen : 1);
        if (!r->dict_buf) return pq_fail(err, PQ_E_NOMEM, "out of memory for the dictionary");
        PQ_TRY(pq_decompress(r->codec, data, (size_t)h->compressed_page_size, r->dict_buf, ulen, err));
        bytes = r->dict_buf;
    } else {
        ulen = (size_t)h->compressed_page_size;
    }
    if (h->dict.encoding != PQ_ENC_PLAIN && h->dict.encoding != PQ_ENC_PLAIN_DICTIONARY)
        return pq_fail(err, PQ_E_UNSUPPORTED, "dictionary page encoding %s",
                       pq_encoding_name((pq_encoding)h->dict.encoding));
    PQ_TRY(pq_dict_decode(&r->dict, r->type, r->type_length, bytes, ulen,
                          (uint32_t)h->dict.num_values, &r->dict_arena, err));
    r->has_dict = true;
    return PQ_OK;
}

/* Sets up the first `need` entries of a decoded page prefix p[0..len): their
 * definition levels, then the values decoder.  false when the prefix is too
 * short for them (or anything else is off).  The decoders touch only the
 * bytes they need and check each against the end, so a scratch decoder that
 * skips the values proves they are there: a later read of them cannot run
 * off the prefix. */
static bool prefix_holds(pq_col_reader *r, const pq_data_page_header *dp, const uint8_t *p, size_t len, int32_t need)
{
    pq_error ignore;
    size_t used = 0;
    int32_t nv = need;
    bool all_defined = false;
    if (r->max_def > 0) {
        if (pq_levels_v1_read((pq_encoding)dp->def_encoding, p, len, r->max_def, r->page_def, (size_t)need, &used,
                              &all_defined, &ignore) != PQ_OK)
            return false;
        if (!all_defined && check_levels(r->page_def, need, r->max_def, "definition", &nv, &ignore) != PQ_OK)
            return false;
    }
    pq_values_dec probe;
    bool holds = pq_values_init(&probe, (pq_encoding)dp->encoding, r->type, r->type_length, p + used, len - used,
                                (uint32_t)nv, r->has_dict ? &r->dict : NULL, &ignore) == PQ_OK &&
                 pq_values_skip(&probe, (size_t)nv, &ignore) == PQ_OK;
    pq_values_free(&probe);
    if (!holds || start_values(r, dp->encoding, p + used, len - used, nv, &ignore) != PQ_OK) return false;
    r->page_all_defined = all_defined;
    return true;
}

/* Sets up only the first `need` of the page's entries, for a flat column whose
 * later rows the reader will never be asked for: a streaming decoder stops
 * after the bytes that hold their levels and values (a proportional guess
 * first, grown while short: the decoder resumes, nothing is decoded twice).
 * *done false: not possible here (codec, encoding, or anything unexpected);
 * the caller decodes the whole page, which also reports real corruption. */
static int setup_page_v1_prefix(pq_col_reader *r, const pq_page_header *h, uint64_t data_off, int32_t need,
                                bool *done, pq_error *err)
{
    *done = false;
    const pq_data_page_header *dp = &h->data;
    size_t ulen = (size_t)h->uncompressed_page_size, clen = (size_t)h->compressed_page_size;
    if (!pq_codec_decodes_prefix(r->codec)) return PQ_OK;
    if (r->max_def > 0 && dp->def_encoding != PQ_ENC_RLE) return PQ_OK;
    /* Encodings whose first values are read from the start of the data alone
     * (BYTE_STREAM_SPLIT's streams and the delta lengths span the page). */
    if (dp->encoding != PQ_ENC_PLAIN && dp->encoding != PQ_ENC_PLAIN_DICTIONARY &&
        dp->encoding != PQ_ENC_RLE_DICTIONARY)
        return PQ_OK;
    pq_error ignore;
    if (dp->num_values <= 0 || take_buffer(r, ulen ? ulen : 1, false, &r->cur, &ignore) != PQ_OK) return PQ_OK;
    /* Compressed bytes at hand: possibly only the page's start (the caller
     * fetched the chunk's start); more are read when the output needs them. */
    uint64_t have;
    const uint8_t *data = locate_from(r, data_off, &have);
    if (!data) {
        have = pq_prefix_fetch_len(r->codec, clen, need, dp->num_values);
        if (!(data = ensure_bytes(r, data_off, have, err))) return PQ_ERR;
    }
    if (have > clen) have = clen;
    size_t want = (size_t)((double)ulen * need / dp->num_values) + 8192;
    /* More bytes or a larger want go on from where the decoder stopped. */
    pq_prefix_cursor cursor = {0, 0, 0, 0};
    for (;;) {
        if (want > ulen) want = ulen;
        size_t got;
        int rc = pq_decompress_prefix(r->codec, &cursor, data, (size_t)have, r->cur.p, want, ulen, &got, &ignore);
        if ((rc != PQ_OK || got < want) && have < clen) {
            /* The output ran into the end of the bytes at hand: what the
             * decoder asks for (the rest of a ZSTD block) and an eighth, or
             * else a quarter more (the first guess is proportional, so
             * rarely far off). */
            uint64_t more = rc == PQ_OK && cursor.more ? cursor.more + have / 8 : have / 4 + 8192;
            have = clen - have < more ? clen : have + more;
            if (!(data = ensure_bytes(r, data_off, have, err))) return PQ_ERR;
            continue;
        }
        if (rc != PQ_OK || got < want) return PQ_OK;
        if (prefix_holds(r, dp, r->cur.p, got, need)) {
            r->counters.bytes_decompressed += got;
            *done = true;
            return PQ_OK;
        }
        if (got == ulen) return PQ_OK;
        want += want / 4 + 8192;
    }
}

static int setup_page_v1(pq_col_reader *r, const pq_page_header *h, const uint8_t *data, pq_error *err)
{
    const pq_data_page_header *dp = &h->data;
    int32_t n = dp->num_values;
    const uint8_t *p;
    size_t len = r->codec == PQ_CODEC_UNCOMPRESSED ? (size_t)h->compressed_page_size
                                                    : (size_t)h->uncompressed_page_size;
    PQ_TRY(page_bytes(r, true, data, (size_t)h->compressed_page_size, len, &p, err));
    size_t used;
    if (r->max_rep > 0) {
        PQ_TRY(pq_levels_v1_read((pq_encoding)dp->rep_encoding, p, len, r->max_rep, r->page_rep,
                                 (size_t)n, &used, NULL, err));
        PQ_TRY(check_levels(r->page_rep, n, r->max_rep, "repetition", NULL, err));
        p += used;
        len -= used;
    }
    int32_t n_values = n;
    r->page_all_defined = false;
    if (r->max_def > 0) {
        PQ_TRY(pq_levels_v1_read((pq_encoding)dp->def_encoding, p, len, r->max_def, r->page_def,
                                 (size_t)n, &used, &r->page_all_defined, err));
        if (!r->page_all_defined)
            PQ_TRY(check_levels(r->page_def, n, r->max_def, "definition", &n_values, err));
        p += used;
        len -= used;
    }
    return start_values(r, dp->encoding, p, len, n_values, err);
}

static int setup_page_v2(pq_col_reader *r, const pq_page_header *h, const uint8_t *data, pq_error *err)
{
    const pq_data_page_header_v2 *dp = &h->data_v2;
    int32_t n = dp->num_values;
    int64_t rep_len = dp->rep_levels_byte_length, def_len = dp->def_levels_byte_length;
    if (rep_len < 0 || def_len < 0 || rep_len + def_len > h->compressed_page_size ||
        rep_len + def_len > h->uncompressed_page_size)
        return pq_fail(err, PQ_E_CORRUPT, "level lengths %lld + %lld exceed the page size %d",
                       (long long)rep_len, (long long)def_len, h->compressed_page_size);
    const uint8_t *p = data;
    pq_rle_dec rle;
    if (r->max_rep > 0) {
        PQ_TRY(pq_rle_init(&rle, p, (size_t)rep_len, pq_bit_width(r->max_rep), err));
        PQ_TRY(pq_rle_read_u16(&rle, r->page_rep, (size_t)n, err));
        PQ_TRY(check_levels(r->page_rep, n, r->max_rep, "repetition", NULL, err));
    }
    p += rep_len;
    int32_t n_values = n;
    r->page_all_defined = false;
    if (r->max_def > 0) {
        PQ_TRY(pq_rle_init(&rle, p, (size_t)def_len, pq_bit_width(r->max_def), err));
        r->page_all_defined = pq_rle_is_one_run(&rle, r->max_def, (size_t)n);
        if (!r->page_all_defined) {
            PQ_TRY(pq_rle_read_u16(&rle, r->page_def, (size_t)n, err));
            PQ_TRY(check_levels(r->page_def, n, r->max_def, "definition", &n_values, err));
        }
    }
    p += def_len;
    size_t clen = (size_t)(h->compressed_page_size - rep_len - def_len);
    size_t ulen = (size_t)(h->uncompressed_page_size - rep_len - def_len);
    const uint8_t *vals;
    bool compressed = dp->is_compressed;
    PQ_TRY(page_bytes(r, compressed, p, clen, ulen, &vals, err));
    return start_values(r, dp->encoding, vals, compressed && r->codec != PQ_CODEC_UNCOMPRESSED ? ulen : clen,
                        n_values, err);
}

/* Decodes the page header at `off` and checks the page lies in the chunk. */
static int read_header_at(pq_col_reader *r, uint64_t off, pq_page_header *h, uint64_t *data_off,
                          pq_error *err)
{
    if (off >= r->src.end_off)
        return pq_fail(err, PQ_E_CORRUPT, "page at offset %llu is past the end of the chunk",
                       (unsigned long long)off);
    uint64_t avail;
    const uint8_t *hp = locate_from(r, off, &avail);
    uint64_t limit = r->src.end_off - off;
    if (!hp && r->src.file) {
        /* only the chunk's start was fetched: read on, a window at a time */
        avail = limit < 16384 ? limit : 16384;
        if (!(hp = ensure_bytes(r, off, avail, err))) return PQ_ERR;
    }
    if (!hp)
        return pq_fail(err, PQ_E_CORRUPT, "page at offset %llu is outside the fetched chunk",
                       (unsigned long long)off);
    if (avail > limit) avail = limit;
    size_t hlen;
    while (pq_decode_page_header(hp, (size_t)avail, NULL, h, &hlen, err) != PQ_OK) {
        /* A header cut by the end of what was fetched: read more of it. */
        if (!r->src.file || avail >= limit || avail >= (16u << 20)) {
            pq_error_prefix(err, "page header at offset %llu: ", (unsigned long long)off);
            return PQ_ERR;
        }
        avail = limit < 4 * avail ? limit : 4 * avail;
        if (!(hp = ensure_bytes(r, off, avail, err))) return PQ_ERR;
    }
    if (h->compressed_page_size < 0 || h->uncompressed_page_size < 0)
        return pq_fail(err, PQ_E_CORRUPT, "negative page size");
    if (h->uncompressed_page_size > PQ_MAX_PAGE_BYTES)
        return pq_fail(err, PQ_E_UNSUPPORTED, "page of %d bytes exceeds the %d MiB page limit",
                       h->uncompressed_page_size, PQ_MAX_PAGE_BYTES >> 20);
    *data_off = off + hlen;
    if ((uint64_t)h->compressed_page_size > r->src.end_off - *data_off)
        return pq_fail(err, PQ_E_CORRUPT, "page of %d bytes at offset %llu overruns the chunk",
                       h->compressed_page_size, (unsigned long long)*data_off);
    return PQ_OK;
}

static int page_entries(const pq_page_header *h, int32_t *n, pq_error *err)
{
    bool v2 = h->type == PQ_PAGE_DATA_V2;
    if ((v2 && !h->has_data_v2) || (!v2 && !h->has_data))
        return pq_fail(err, PQ_E_CORRUPT, "data page without its header");
    *n = v2 ? h->data_v2.num_values : h->data.num_values;
    if (*n < 0 || *n > PQ_MAX_PAGE_ENTRIES) return pq_fail(err, PQ_E_CORRUPT, "page of %d values", *n);
    return PQ_OK;
}

/* first_row: the page's first row (flat columns). */
static int start_data_page(pq_col_reader *r, const pq_page_header *h, uint64_t data_off, int32_t n,
                           int64_t first_row, pq_error *err)
{
    PQ_TRY(ensure_levels(r, (size_t)n, err));
    int32_t levels = n;
    bool prefix = false;
    /* Only the page's first rows can be asked for: decode just those when
     * that saves a quarter of the page or more. */
    if (h->type == PQ_PAGE_DATA && r->max_rep == 0 && r->src.rows_needed > 0 && first_row >= 0 &&
        first_row < r->src.rows_needed && r->src.rows_needed - first_row < n - n / 4 &&
        h->uncompressed_page_size >= 64 * 1024) {
        levels = (int32_t)(r->src.rows_needed - first_row);
        PQ_TRY(setup_page_v1_prefix(r, h, data_off, levels, &prefix, err));
        if (!prefix) {
            levels = n;
            if (r->cur.p) {
                give_back(r, r->cur);
                r->cur.p = NULL;
                r->cur.cap = 0;
            }
            pq_values_free(&r->dec);
            memset(&r->dec, 0, sizeof r->dec);
        }
    }
    if (!prefix) {
        const uint8_t *data = ensure_bytes(r, data_off, (uint64_t)h->compressed_page_size, err);
        if (!data) return PQ_ERR;
        PQ_TRY(h->type == PQ_PAGE_DATA_V2 ? setup_page_v2(r, h, data, err) : setup_page_v1(r, h, data, err));
    }
    r->page_levels = levels;
    r->page_pos = 0;
    r->in_page = true;
    r->counters.pages_read++;
    if (!r->first_entry_checked) {
        if (r->max_rep > 0 && r->page_rep[0] != 0)
            return pq_fail(err, PQ_E_CORRUPT, "the chunk's first repetition level is not 0");
        r->first_entry_checked = true;
    }
    return PQ_OK;
}

static int dictionary_page(pq_col_reader *r, const pq_page_header *h, uint64_t data_off, pq_error *err)
{
    const uint8_t *data = ensure_bytes(r, data_off, (uint64_t)h->compressed_page_size, err);
    if (!data) return PQ_ERR;
    return load_dictionary(r, h, data, err);
}

uint64_t pq_prefix_fetch_len(pq_codec codec, uint64_t len, int64_t needed, int64_t rows)
{
    if (!pq_codec_decodes_prefix(codec) || needed <= 0 || rows <= 0 || needed > rows - rows / 4) return len;
    uint64_t guess = (uint64_t)((double)len * (double)needed / (double)rows * 1.0625) + 8192;
    return guess < len ? guess : len;
}

/* Pages from the offset index: the reader jumps to page locations instead of
 * walking headers, so pages outside the selection need not be fetched. */
static int load_page_indexed(pq_col_reader *r, int64_t *skip_rows, pq_error *err)
{
    const pq_offset_index *oi = r->src.offset_index;
    if (!r->dict_checked) {
        /* Anything before the first data page is the dictionary (if any). */
        r->dict_checked = true;
        uint64_t off = r->src.first_page_off;
        while (off < (uint64_t)oi->pages[0].offset) {
            pq_page_header h;
            uint64_t data_off;
            PQ_TRY(read_header_at(r, off, &h, &data_off, err));
            if (h.type == PQ_PAGE_DICTIONARY) PQ_TRY(dictionary_page(r, &h, data_off, err));
            off = data_off + (uint64_t)h.compressed_page_size;
        }
    }
    while (!r->in_page) {
        if (r->oi_next >= oi->n_pages) return PQ_OK;
        if (skip_rows && *skip_rows == 0) return PQ_OK; /* skipped exactly to a page boundary */
        int32_t k = r->oi_next;
        int64_t end = k + 1 < oi->n_pages ? oi->pages[k + 1].first_row_index : r->src.row_group_rows;
        int64_t page_rows = end - oi->pages[k].first_row_index;
        r->page_index = k + 1;
        r->oi_next++;
        if (skip_rows && page_rows <= *skip_rows) {
            *skip_rows -= page_rows;
            r->counters.pages_skipped++;
            continue;
        }
        pq_page_header h;
        uint64_t data_off;
        /* Pages fetched one by one as they are needed: the whole page, or
         * its start when only its first rows will be read (flat columns:
         * the prefix decoder reads on as far as they need). */
        if (r->src.file) {
            uint64_t len = (uint64_t)oi->pages[k].compressed_page_size;
            if (r->max_rep == 0 && r->src.rows_needed > oi->pages[k].first_row_index)
                len = pq_prefix_fetch_len(r->codec, len, r->src.rows_needed - oi->pages[k].first_row_index,
                                          page_rows);
            if (!ensure_bytes(r, (uint64_t)oi->pages[k].offset, len, err)) return PQ_ERR;
        }
        PQ_TRY(read_header_at(r, (uint64_t)oi->pages[k].offset, &h, &data_off, err));
        if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2)
            return pq_fail(err, PQ_E_CORRUPT, "offset index points at a page of type %d", h.type);
        int32_t n = 0;
        PQ_TRY(page_entries(&h, &n, err));
        if (r->max_rep == 0 && n != page_rows)
            return pq_fail(err, PQ_E_CORRUPT, "page holds %d values, the offset index says %lld rows", n,
                           (long long)page_rows);
        if (n == 0) continue;
        PQ_TRY(start_data_page(r, &h, data_off, n, oi->pages[k].first_row_index, err));
    }
    return PQ_OK;
}

/* Reads page headers until a data page with entries is set up.  Returns
 * PQ_OK with r->in_page false at the end of the chunk.  When skip_rows is
 * given, a data page whose row count is known and fits entirely in *skip_rows
 * is skipped without decompression and *skip_rows reduced. */
static int load_page(pq_col_reader *r, int64_t *skip_rows, pq_error *err)
{
    if (r->src.offset_index) return load_page_indexed(r, skip_rows, err);
    while (!r->in_page) {
        if (r->values_seen >= r->total_values) return PQ_OK;
        if (skip_rows && *skip_rows == 0) return PQ_OK; /* skipped exactly to a page boundary */
        if (r->next_page_off >= r->src.end_off)
            return pq_fail(err, PQ_E_CORRUPT, "chunk ends after %lld of %lld values",
                           (long long)r->values_seen, (long long)r->total_values);
        pq_page_header h;
        uint64_t data_off;
        PQ_TRY(read_header_at(r, r->next_page_off, &h, &data_off, err));
        r->next_page_off = data_off + (uint64_t)h.compressed_page_size;
        if (h.type == PQ_PAGE_DICTIONARY) {
            PQ_TRY(dictionary_page(r, &h, data_off, err));
            continue;
        }
        if (h.type != PQ_PAGE_DATA && h.type != PQ_PAGE_DATA_V2) continue; /* index pages etc. */
        int32_t n = 0;
        PQ_TRY(page_entries(&h, &n, err));
        if (n > r->total_values - r->values_seen)
            return pq_fail(err, PQ_E_CORRUPT, "page of %d values (chunk has %lld left)", n,
                           (long long)(r->total_values - r->values_seen));
        r->values_seen += n;
        r->page_index++;
        if (n == 0) continue;
        /* A page's row count is known when it holds no repeated values, or
         * from the v2 header (v2 pages start at row boundaries). */
        bool v2 = h.type == PQ_PAGE_DATA_V2;
        int64_t page_rows = r->max_rep == 0 ? n : (v2 ? h.data_v2.num_rows : -1);
        if (skip_rows && page_rows >= 0 && page_rows <= *skip_rows &&
            (r->max_rep == 0 || r->first_entry_checked)) {
            *skip_rows -= page_rows;
            r->counters.pages_skipped++;
            continue;
        }
        PQ_TRY(start_data_page(r, &h, data_off, n, r->max_rep == 0 ? r->values_seen - n : -1, err));
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ public */

int pq_col_reader_open(const pq_col_source *src, pq_col_reader **out, pq_error *err)
{
    const pq_column_chunk *cc = src->chunk;
    if (!cc->has_meta) {
        pq_fail(err, cc->encrypted ? PQ_E_UNSUPPORTED : PQ_E_CORRUPT, "%s",
                cc->encrypted ? "column chunk is encrypted (not supported)" : "column chunk has no metadata");
        pq_error_prefix(err, "column '%s' (row group %d): ", src->leaf->path, src->row_group);
        return PQ_ERR;
    }
    const pq_node *node = src->leaf->node;
    const pq_column_meta *m = &cc->meta;
    if (m->type != (int32_t)node->phys) {
        pq_fail(err, PQ_E_CORRUPT, "chunk type %s does not match the schema's %s",
                pq_phys_name((pq_phys)m->type), pq_phys_name(node->phys));
        pq_error_prefix(err, "column '%s' (row group %d): ", src->leaf->path, src->row_group);
        return PQ_ERR;
    }
    if (m->num_values < 0) {
        pq_fail(err, PQ_E_CORRUPT, "negative value count %lld", (long long)m->num_values);
        pq_error_prefix(err, "column '%s' (row group %d): ", src->leaf->path, src->row_group);
        return PQ_ERR;
    }
    if (!pq_codec_supported((pq_codec)m->codec)) {
        pq_fail(err, PQ_E_UNSUPPORTED, "compression codec %s is not supported",
                pq_codec_name((pq_codec)m->codec));
        pq_error_prefix(err, "column '%s' (row group %d): ", src->leaf->path, src->row_group);
        return PQ_ERR;
    }
    pq_col_reader *r = calloc(1, sizeof *r);
    if (!r) return PQ_NOMEM(err);
    r->src = *src;
    r->type = node->phys;
    r->type_length = node->type_length;
    r->max_def = (uint16_t)src->leaf->max_def;
    r->max_rep = (uint16_t)src->leaf->max_rep;
    r->vsize = pq_value_size(r->type);
    r->codec = (pq_codec)m->codec;
    r->total_values = m->num_values;
    r->next_page_off = src->first_page_off;
    pq_arena_init(&r->dict_arena, 64 * 1024);
    pq_arena_init(&r->storage, 64 * 1024);
    *out = r;
    return PQ_OK;
}

void pq_col_reader_free(pq_col_reader *r)
{
    if (!r) return;
    pq_values_free(&r->dec);
    free(r->cur.p);
    for (int i = 0; i < r->n_held; i++) free(r->held[i].p);
    free(r->held);
    for (int i = 0; i < r->n_pool; i++) free(r->pool[i].p);
    free(r->page_def);
    free(r->page_rep);
    free(r->out_def);
    free(r->out_rep);
    free(r->out_values);
    free(r->dict_buf);
    for (int i = 0; i < r->n_extra; i++) free((void *)r->extra[i].data);
    free(r->extra);
    pq_arena_free(&r->dict_arena);
    pq_arena_free(&r->storage);
    free(r);
}

/* Appends page entries [page_pos, page_pos + take) to the batch. */
static int append_entries(pq_col_reader *r, int32_t take, pq_col_batch *b, pq_error *err)
{
    size_t at = (size_t)b->n_levels;
    PQ_TRY(ensure_out_levels(r, at + (size_t)take, err));
    int32_t nn = take;
    if (r->max_def > 0 && r->page_all_defined) {
        uint16_t *d = r->out_def + at;
        for (int32_t i = 0; i < take; i++)
            d[i] = r->max_def;
    } else if (r->max_def > 0) {
        memcpy(r->out_def + at, r->page_def + r->page_pos, (size_t)take * sizeof(uint16_t));
        nn = count_defined(r->page_def + r->page_pos, take, r->max_def);
    }
    if (r->max_rep > 0)
        memcpy(r->out_rep + at, r->page_rep + r->page_pos, (size_t)take * sizeof(uint16_t));
    if (nn > 0) {
        PQ_TRY(ensure_out_values(r, (size_t)b->n_values + (size_t)nn, err));
        PQ_TRY(pq_values_read(&r->dec, r->out_values + (size_t)b->n_values * r->vsize, (size_t)nn,
                              &r->storage, err));
        r->counters.values_decoded += (uint64_t)nn;
    }
    b->n_levels += take;
    b->n_values += nn;
    r->page_pos += take;
    return PQ_OK;
}

static int skip_entries(pq_col_reader *r, int32_t take, pq_error *err)
{
    int32_t nn = take;
    if (r->max_def > 0 && !r->page_all_defined) nn = count_defined(r->page_def + r->page_pos, take, r->max_def);
    if (nn > 0) PQ_TRY(pq_values_skip(&r->dec, (size_t)nn, err));
    r->page_pos += take;
    return PQ_OK;
}

static void begin_batch(pq_col_reader *r)
{
    release_held(r);
    pq_arena_reset(&r->storage);
}

/* Entries from page_pos up to the start of row number `rows_wanted` (counting
 * row starts), stopping at the page end.  Returns the entry count and adds
 * the row starts seen to *rows. */
static int32_t scan_rows(const pq_col_reader *r, int64_t rows_wanted, int64_t *rows)
{
    int32_t i = r->page_pos;
    if (r->max_rep == 0) {
        int64_t left = rows_wanted - *rows;
        int64_t avail = r->page_levels - r->page_pos;
        int32_t take = (int32_t)(left < avail ? left : avail);
        *rows += take;
        return take;
    }
    const uint16_t *rep = r->page_rep;
    for (; i < r->page_levels; i++) {
        if (rep[i] == 0) {
            if (*rows == rows_wanted) break;
            (*rows)++;
        }
    }
    return i - r->page_pos;
}

/* Consumes entries up to the start of row `target` + 1 (counting row starts
 * from the current position, which is always a row start), appending them to
 * `out` or skipping them.  A row can continue in the next page (data page v1),
 * so a page that ends is followed by a look at the next one, except for flat
 * columns whose rows never span pages. */
static int consume_rows(pq_col_reader *r, int64_t target, pq_col_batch *out, int64_t *rows_out,
                        pq_error *err)
{
    int64_t rows = 0;
    for (;;) {
        if (r->max_rep == 0 && rows == target) break;
        if (!r->in_page) {
            int64_t budget = target - rows;
            if (load_page(r, out ? NULL : &budget, err) != PQ_OK) return PQ_ERR;
            if (!out) rows = target - budget; /* whole pages skipped */
            if (!r->in_page) break;
        }
        int32_t take = scan_rows(r, target, &rows);
        if (take > 0) {
            if (out) PQ_TRY(append_entries(r, take, out, err));
            else PQ_TRY(skip_entries(r, take, err));
        }
        if (r->page_pos == r->page_levels) {
            PQ_TRY(finish_page(r, err));
            continue;
        }
        break; /* at the start of row target + 1 */
    }
    *rows_out = rows;
    return PQ_OK;
}

/* A reader opened for the first rows_needed rows refuses to go past them: its
 * last page may have been decoded only that far. */
static int check_within(pq_col_reader *r, int64_t n_rows, pq_error *err)
{
    if (r->src.rows_needed > 0 && n_rows > r->src.rows_needed - r->rows_done) {
        pq_fail(err, PQ_E_USAGE, "read past row %lld, the last the column reader was opened for",
                (long long)r->src.rows_needed);
        return fail_at(r, err);
    }
    return PQ_OK;
}

/* Consumes the skips put off so far. */
static int flush_skip(pq_col_reader *r, pq_error *err)
{
    int64_t n = r->pending_skip;
    if (n == 0) return PQ_OK;
    r->pending_skip = 0;
    int64_t rows;
    if (consume_rows(r, n, NULL, &rows, err) != PQ_OK) return fail_at(r, err);
    if (rows < n) {
        pq_fail(err, PQ_E_CORRUPT, "chunk ends %lld rows early", (long long)(n - rows));
        return fail_at(r, err);
    }
    return PQ_OK;
}

int pq_col_read(pq_col_reader *r, int32_t max_rows, pq_col_batch *out, pq_error *err)
{
    PQ_TRY(check_within(r, max_rows, err));
    begin_batch(r);
    memset(out, 0, sizeof *out);
    PQ_TRY(flush_skip(r, err));
    if (r->max_rep == 0 && ensure_out_levels(r, (size_t)max_rows, err) != PQ_OK) return fail_at(r, err);
    int64_t rows;
    if (consume_rows(r, max_rows, out, &rows, err) != PQ_OK) return fail_at(r, err);
    out->n_rows = (int32_t)rows;
    out->def = r->max_def > 0 ? r->out_def : NULL;
    out->rep = r->max_rep > 0 ? r->out_rep : NULL;
    out->values = r->out_values;
    r->rows_done += rows;
    return PQ_OK;
}

int pq_col_skip(pq_col_reader *r, int64_t n_rows, pq_error *err)
{
    /* Skipping past rows_needed is fine: skips are only consumed by a read,
     * and reads are checked. */
    if (n_rows < 0) return pq_fail(err, PQ_E_USAGE, "negative skip");
    r->pending_skip += n_rows;
    r->rows_done += n_rows;
    return PQ_OK;
}

int pq_col_read_selected(pq_col_reader *r, int32_t n_rows, const uint8_t *keep, pq_col_batch *out,
                         pq_error *err)
{
    if (r->src.rows_needed > 0) {
        /* Dropped rows at the end are only skipped: the check is up to the
         * last kept row. */
        int32_t through = n_rows;
        while (through > 0 && !keep[through - 1]) through--;
        PQ_TRY(check_within(r, through, err));
    }
    begin_batch(r);
    memset(out, 0, sizeof *out);
    int64_t kept = 0;
    for (int32_t i = 0; i < n_rows;) {
        bool k = keep[i] != 0;
        int32_t j = i + 1;
        /* keep[] holds 0 or 1: runs are found 8 bytes at a time */
        const uint64_t same = k ? 0x0101010101010101ull : 0;
        for (uint64_t w; j + 8 <= n_rows; j += 8) {
            memcpy(&w, keep + j, 8);
            if (w != same) break;
        }
        while (j < n_rows && (keep[j] != 0) == k) j++;
        if (!k) {
            r->pending_skip += j - i; /* dropped rows: skipped with the next ones */
            i = j;
            continue;
        }
        PQ_TRY(flush_skip(r, err));
        int64_t rows;
        if (consume_rows(r, j - i, out, &rows, err) != PQ_OK) return fail_at(r, err);
        if (rows != j - i) {
            pq_fail(err, PQ_E_CORRUPT, "chunk ends %lld rows early", (long long)(j - i - rows));
            return fail_at(r, err);
        }
        kept += rows;
        i = j;
    }
    out->n_rows = (int32_t)kept;
    out->def = r->max_def > 0 ? r->out_def : NULL;
    out->rep = r->max_rep > 0 ? r->out_rep : NULL;
    out->values = r->out_values;
    r->rows_done += n_rows;
    return PQ_OK;
}

int64_t pq_col_position(const pq_col_reader *r)
{
    return r->rows_done;
}

const pq_col_counters *pq_col_reader_counters(const pq_col_reader *r)
{
    return &r->counters;
}
