/* fuzz_footer: the input is the tail of a Parquet file (FileMetaData, its
 * 4-byte length, "PAR1").  It is parsed twice: as the end of a larger file
 * whose first gigabyte is not given (so the column chunk offsets of a real
 * footer validate), and as the whole file.  A footer that parses must give a
 * schema whose every node prints, statistics that turn into ranges, and
 * metadata that re-encodes to a fixed point. */
#include "fuzz_common.h"

#include "column.h"
#include "footer.h"
#include "plan.h"

static void walk_nodes(const pq_node *n, pq_buf *text)
{
    pq_buf_clear(text);
    FUZZ_CHECK(pq_node_type_text(n, text) == 0, "no type text for '%s'", n->name);
    fuzz_sink ^= fuzz_touch((const uint8_t *)text->data, text->len);
    for (int32_t i = 0; i < n->n_children; i++)
        if (n->children[i]) walk_nodes(n->children[i], text);
}

static void check_footer(const pq_footer *ft)
{
    const pq_schema *s = &ft->schema;
    FUZZ_CHECK(pq_schema_equal(s, s), "a schema differs from itself");
    pq_buf text;
    pq_buf_init(&text);
    for (int32_t i = 0; s->root && i < s->root->n_children; i++) walk_nodes(s->root->children[i], &text);
    pq_buf_free(&text);

    const pq_file_meta *m = &ft->meta;
    for (int32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        FUZZ_CHECK(rg->n_columns == s->n_leaves, "row group %d: %d chunks, %d leaves", g, rg->n_columns,
                   s->n_leaves);
        for (int32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            if (!cc->has_meta) continue;
            pq_chunk_extent ext;
            pq_error err;
            if (pq_chunk_extent_of(cc, ft->file_size, ft->legacy_chunk_sizes, &ext, &err) == PQ_OK)
                FUZZ_CHECK(ext.start <= ft->file_size && ext.len <= ft->file_size - ext.start,
                           "chunk extent [%llu, +%llu) outside a file of %llu bytes",
                           (unsigned long long)ext.start, (unsigned long long)ext.len,
                           (unsigned long long)ft->file_size);
            pq_col_range r;
            pq_range_from_stats(&s->leaves[c], &cc->meta.stats, cc->meta.has_stats, rg->num_rows, &r);
            if (r.known && r.has_min && r.has_max && r.min.type == r.max.type && !r.min.is_null &&
                !r.max.is_null)
                fuzz_sink ^= (uint32_t)pq_value_cmp(&r.min, &r.max);
        }
    }

    pq_buf once, twice;
    pq_buf_init(&once);
    pq_buf_init(&twice);
    pq_error err;
    if (pq_encode_file_meta(m, &once, &err) == PQ_OK) {
        pq_arena arena;
        pq_arena_init(&arena, 16384);
        pq_file_meta again;
        FUZZ_CHECK(pq_decode_file_meta((const uint8_t *)once.data, once.len, &arena, &again, &err) == PQ_OK,
                   "re-encoded metadata does not decode: %s", err.msg);
        FUZZ_CHECK(pq_encode_file_meta(&again, &twice, &err) == PQ_OK, "%s", err.msg);
        FUZZ_CHECK(twice.len == once.len && memcmp(twice.data, once.data, once.len) == 0,
                   "encoding is not a fixed point (%zu vs %zu bytes)", once.len, twice.len);
        pq_arena_free(&arena);
    }
    pq_buf_free(&once);
    pq_buf_free(&twice);
}

static void parse(const uint8_t *data, size_t size, uint64_t file_size)
{
    pq_footer *ft = NULL;
    pq_error err;
    if (pq_footer_parse(data, size, file_size, &ft, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        return;
    }
    FUZZ_CHECK(ft->file_size == file_size, "file size changed");
    check_footer(ft);
    pq_footer_free(ft);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse(data, size, (uint64_t)size + (1u << 30));
    parse(data, size, size);
    return 0;
}
