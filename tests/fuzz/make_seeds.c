/* make_fuzz_seeds: cuts seed inputs for the fuzz targets out of Parquet files.
 *
 *   make_fuzz_seeds OUT_DIR FILE.parquet...
 *
 * For each file it writes, under OUT_DIR/fuzz_NAME/ (named by a hash of the
 * content, so repeated runs and equal pieces collapse):
 *   fuzz_footer        the footer tail (metadata, length, "PAR1")
 *   fuzz_page_header   page headers
 *   fuzz_column_index, fuzz_offset_index, fuzz_bloom_header
 *                      page indexes and bloom filters (header + bitset)
 *   fuzz_decompress    compressed pages in the target's framing
 *   fuzz_values        decompressed value sections in the target's framing,
 *                      with the chunk's dictionary page when it has one
 *   fuzz_rle           definition levels and dictionary indices
 * Pieces larger than MAX_SEED bytes are left out, and at most PER_KIND seeds
 * are kept per kind (target, encoding, physical type), so the corpus stays
 * small.  The checked-in corpora were made with this tool, OUT_DIR being
 * tests/fuzz/corpus, from the .parquet files of corpus/fuzz_file/ and of
 * parquet-testing's data/ and bad_data/ (in that order). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec.h"
#include "column.h"
#include "encoding.h"
#include "footer.h"
#include "io.h"

#define MAX_SEED 4096
#define PER_KIND 3
#define MAX_KINDS 512

static const char *out_dir;
static struct {
    char key[64];
    int n;
} kinds[MAX_KINDS];
static int n_kinds;

static bool take_kind(const char *key)
{
    for (int i = 0; i < n_kinds; i++)
        if (!strcmp(kinds[i].key, key)) return kinds[i].n < PER_KIND ? (kinds[i].n++, true) : false;
    if (n_kinds == MAX_KINDS) return false;
    snprintf(kinds[n_kinds].key, sizeof kinds[n_kinds].key, "%s", key);
    kinds[n_kinds++].n = 1;
    return true;
}

static void write_seed(const char *target, const char *kind, const void *a, size_t a_len, const void *b,
                       size_t b_len, const void *c, size_t c_len)
{
    size_t len = a_len + b_len + c_len;
    if (len > MAX_SEED || len == 0 || !take_kind(kind)) return;
    uint8_t *buf = malloc(len);
    if (!buf) return;
    if (a_len) memcpy(buf, a, a_len);
    if (b_len) memcpy(buf + a_len, b, b_len);
    if (c_len) memcpy(buf + a_len + b_len, c, c_len);
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) h = (h ^ buf[i]) * 1099511628211ull;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) perror(path);
    snprintf(path, sizeof path, "%s/%s/%016llx", out_dir, target, (unsigned long long)h);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len) perror(path);
    if (f) fclose(f);
    free(buf);
}

static void put_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* The fuzz_values header (see fuzz_values.c). */
static void values_seed(pq_encoding enc, const pq_leaf *leaf, uint32_t n_values, const uint8_t *dict,
                        size_t dict_len, uint32_t dict_values, const uint8_t *vals, size_t vals_len)
{
    if (n_values > 0xffff || dict_values > 0xffff || dict_len > 0xffff) return;
    bool uses_dict = enc == PQ_ENC_PLAIN_DICTIONARY || enc == PQ_ENC_RLE_DICTIONARY;
    if (!uses_dict) dict_len = dict_values = 0;
    uint8_t hdr[16] = {0};
    hdr[0] = (uint8_t)enc;
    hdr[1] = (uint8_t)leaf->node->phys;
    hdr[2] = (uint8_t)leaf->node->type_length;
    put_u16(hdr + 3, n_values);
    put_u16(hdr + 5, (uint32_t)dict_len);
    put_u16(hdr + 7, dict_values);
    static const uint8_t ops[7] = {0x01, 0x43, 0x05, 0x70, 0x08, 0x7f, 0x02};
    memcpy(hdr + 9, ops, 7);
    char kind[64];
    snprintf(kind, sizeof kind, "values %d %d", (int)enc, (int)leaf->node->phys);
    write_seed("fuzz_values", kind, hdr, 16, dict, dict_len, vals, vals_len);
    if (uses_dict && vals_len > 0) { /* the indices alone, for the hybrid decoder */
        uint8_t rle_hdr[12] = {0};
        rle_hdr[0] = vals[0];
        rle_hdr[1] = 0;
        put_u16(rle_hdr + 2, n_values);
        static const uint8_t rle_ops[6] = {0x03, 0x81, 0x41, 0x09, 0x70, 0x05};
        memcpy(rle_hdr + 6, rle_ops, 6);
        write_seed("fuzz_rle", "rle indices", rle_hdr, 12, vals + 1, vals_len - 1, NULL, 0);
    }
}

/* Levels of a v1 page as a fuzz_rle "levels v1" seed. */
static void levels_seed(pq_encoding enc, int max_level, uint32_t n, const uint8_t *p, size_t len)
{
    if (n > 0xffff) return;
    uint8_t hdr[12] = {0};
    hdr[1] = enc == PQ_ENC_RLE ? 1 : 2;
    put_u16(hdr + 2, n);
    put_u16(hdr + 4, (uint32_t)max_level);
    char kind[32];
    snprintf(kind, sizeof kind, "levels %d %d", (int)enc, max_level);
    write_seed("fuzz_rle", kind, hdr, 12, p, len, NULL, 0);
}

static uint32_t count_defined(const uint16_t *def, uint32_t n, int max_def)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) k += def[i] == max_def;
    return k;
}

typedef struct chunk_ctx {
    const uint8_t *file;
    size_t size;
    const pq_leaf *leaf;
    pq_codec codec;
    uint8_t *dict;           /* decompressed dictionary page */
    size_t dict_len;
    uint32_t dict_values;
} chunk_ctx;

/* One data page: its value section and levels as seeds. */
static void data_page(chunk_ctx *c, const pq_page_header *h, const uint8_t *payload)
{
    const pq_leaf *leaf = c->leaf;
    bool v2 = h->type == PQ_PAGE_DATA_V2;
    uint32_t n = (uint32_t)(v2 ? h->data_v2.num_values : h->data.num_values);
    if (n > 0xffff) return;
    size_t clen = (size_t)h->compressed_page_size, ulen = (size_t)h->uncompressed_page_size;
    size_t levels_len = v2 ? (size_t)h->data_v2.rep_levels_byte_length + (size_t)h->data_v2.def_levels_byte_length : 0;
    if (levels_len > clen || levels_len > ulen) return;
    bool compressed = c->codec != PQ_CODEC_UNCOMPRESSED && (!v2 || h->data_v2.is_compressed);
    if (compressed) {
        uint8_t dhdr[5];
        dhdr[0] = (uint8_t)c->codec;
        uint32_t out = (uint32_t)(ulen - levels_len);
        for (int i = 0; i < 4; i++) dhdr[1 + i] = (uint8_t)(out >> (8 * i));
        char kind[32];
        snprintf(kind, sizeof kind, "codec %d", (int)c->codec);
        write_seed("fuzz_decompress", kind, dhdr, 5, payload + levels_len, clen - levels_len, NULL, 0);
    }
    size_t body_len = compressed ? ulen - levels_len : clen - levels_len;
    uint8_t *body = malloc(body_len ? body_len : 1);
    if (!body) return;
    pq_error err;
    if (compressed) {
        if (pq_decompress(c->codec, payload + levels_len, clen - levels_len, body, body_len, &err) != PQ_OK) {
            free(body);
            return;
        }
    } else {
        memcpy(body, payload + levels_len, body_len);
    }
    uint16_t *lv = calloc(n ? n : 1, sizeof *lv);
    uint32_t n_values = n;
    const uint8_t *vals = body;
    size_t vals_len = body_len;
    int enc = v2 ? h->data_v2.encoding : h->data.encoding;
    if (!v2) {
        size_t used;
        if (leaf->max_rep > 0) {
            if (pq_levels_v1_read((pq_encoding)h->data.rep_encoding, vals, vals_len, leaf->max_rep, lv, n, &used, NULL,
                                  &err) != PQ_OK)
                goto out;
            vals += used;
            vals_len -= used;
        }
        if (leaf->max_def > 0) {
            if (pq_levels_v1_read((pq_encoding)h->data.def_encoding, vals, vals_len, leaf->max_def, lv, n, &used, NULL,
                                  &err) != PQ_OK)
                goto out;
            levels_seed((pq_encoding)h->data.def_encoding, leaf->max_def, n, vals, used);
            n_values = count_defined(lv, n, leaf->max_def);
            vals += used;
            vals_len -= used;
        }
    } else if (leaf->max_def > 0) {
        pq_rle_dec d;
        const uint8_t *def = payload + h->data_v2.rep_levels_byte_length;
        if (pq_rle_init(&d, def, (size_t)h->data_v2.def_levels_byte_length, pq_bit_width((uint32_t)leaf->max_def),
                        &err) != PQ_OK ||
            pq_rle_read_u16(&d, lv, n, &err) != PQ_OK)
            goto out;
        n_values = count_defined(lv, n, leaf->max_def);
    }
    values_seed((pq_encoding)enc, leaf, n_values, c->dict, c->dict_len, c->dict_values, vals, vals_len);
out:
    free(lv);
    free(body);
}

static int c_phys(const pq_footer *ft, int32_t col) { return (int)ft->schema.leaves[col].node->phys; }

static const char *phys_kind(const char *what, int phys)
{
    static char kind[32];
    snprintf(kind, sizeof kind, "%s %d", what, phys);
    return kind;
}

static void column_chunk(const pq_footer *ft, const uint8_t *file, size_t size, int32_t g, int32_t col)
{
    const pq_column_chunk *cc = &ft->meta.row_groups[g].columns[col];
    if (!cc->has_meta) return;
    pq_error err;
    if (cc->has_column_index && cc->column_index_length > 0 &&
        (uint64_t)cc->column_index_offset + (uint64_t)cc->column_index_length <= size)
        write_seed("fuzz_column_index", phys_kind("ci", c_phys(ft, col)), file + cc->column_index_offset, (size_t)cc->column_index_length, NULL, 0,
                   NULL, 0);
    if (cc->has_offset_index && cc->offset_index_length > 0 &&
        (uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length <= size)
        write_seed("fuzz_offset_index", "oi", file + cc->offset_index_offset, (size_t)cc->offset_index_length, NULL, 0,
                   NULL, 0);
    const pq_column_meta *m = &cc->meta;
    if (m->has_bloom_filter_offset && (uint64_t)m->bloom_filter_offset < size) {
        pq_bloom_header bh;
        size_t used;
        size_t avail = size - (size_t)m->bloom_filter_offset;
        if (pq_decode_bloom_header(file + m->bloom_filter_offset, avail, &bh, &used, &err) == PQ_OK &&
            bh.num_bytes >= 0 && used + (size_t)bh.num_bytes <= avail)
            write_seed("fuzz_bloom_header", "bloom", file + m->bloom_filter_offset, used + (size_t)bh.num_bytes, NULL,
                       0, NULL, 0);
    }

    pq_chunk_extent ext;
    if (pq_chunk_extent_of(cc, ft->file_size, ft->legacy_chunk_sizes, &ext, &err) != PQ_OK) return;
    chunk_ctx c = {file, size, &ft->schema.leaves[col], (pq_codec)m->codec, NULL, 0, 0};
    pq_arena arena;
    pq_arena_init(&arena, 4096);
    uint64_t off = ext.start, end = ext.start + ext.len;
    for (int pages = 0; off < end && off < size && pages < 8; pages++) {
        pq_page_header h;
        size_t used;
        pq_arena_reset(&arena);
        if (pq_decode_page_header(file + off, size - off, &arena, &h, &used, &err) != PQ_OK ||
            h.compressed_page_size < 0 || h.uncompressed_page_size < 0 ||
            off + used + (uint64_t)h.compressed_page_size > size)
            break;
        char kind[32];
        snprintf(kind, sizeof kind, "page header %d %d", h.type,
                 h.has_data ? h.data.encoding : h.has_data_v2 ? h.data_v2.encoding : -1);
        write_seed("fuzz_page_header", kind, file + off, used, NULL, 0, NULL, 0);
        const uint8_t *payload = file + off + used;
        if (h.type == PQ_PAGE_DICTIONARY && h.has_dict && !c.dict) {
            size_t len = c.codec == PQ_CODEC_UNCOMPRESSED ? (size_t)h.compressed_page_size
                                                          : (size_t)h.uncompressed_page_size;
            c.dict = malloc(len ? len : 1);
            if (c.codec == PQ_CODEC_UNCOMPRESSED) memcpy(c.dict, payload, len);
            else if (pq_decompress(c.codec, payload, (size_t)h.compressed_page_size, c.dict, len, &err) != PQ_OK)
                len = 0;
            c.dict_len = len;
            c.dict_values = (uint32_t)h.dict.num_values;
        } else if ((h.type == PQ_PAGE_DATA && h.has_data) || (h.type == PQ_PAGE_DATA_V2 && h.has_data_v2)) {
            data_page(&c, &h, payload);
        }
        off += used + (uint64_t)h.compressed_page_size;
    }
    free(c.dict);
    pq_arena_free(&arena);
}

static int one_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(data);
        return 1;
    }
    fclose(f);
    pq_error err;
    pq_footer *ft = NULL;
    pq_file *pf = NULL;
    if (pq_file_open_mem(path, data, (size_t)size, &pf, &err) != PQ_OK || pq_footer_read(pf, &ft, &err) != PQ_OK) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        pq_file_close(pf);
        if (size >= 8) { /* unreadable footers are seeds too */
            uint32_t len = (uint32_t)data[size - 8] | (uint32_t)data[size - 7] << 8 |
                           (uint32_t)data[size - 6] << 16 | (uint32_t)data[size - 5] << 24;
            if ((uint64_t)len + 8 <= (uint64_t)size)
                write_seed("fuzz_footer", "footer bad", data + size - 8 - len, (size_t)len + 8, NULL, 0, NULL, 0);
        }
        free(data);
        return 0;
    }
    char kind[64];
    const char *writer = ft->meta.created_by ? ft->meta.created_by : "?";
    snprintf(kind, sizeof kind, "footer %.*s", (int)strcspn(writer, " "), writer);
    write_seed("fuzz_footer", kind, data + size - 8 - ft->meta_len, (size_t)ft->meta_len + 8, NULL, 0, NULL, 0);
    for (int32_t g = 0; g < ft->meta.n_row_groups && g < 2; g++)
        for (int32_t c = 0; c < ft->meta.row_groups[g].n_columns; c++) column_chunk(ft, data, (size_t)size, g, c);
    pq_footer_free(ft);
    pq_file_close(pf);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: make_fuzz_seeds OUT_DIR FILE.parquet...\n");
        return 2;
    }
    out_dir = argv[1];
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
        perror(out_dir);
        return 1;
    }
    int rc = 0;
    for (int i = 2; i < argc; i++) rc |= one_file(argv[i]);
    return rc;
}
