#include "filewrite.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "rowgroup.h"
#include "rowsort.h"
#include "threads.h"


struct pq_filewriter {
    pq_sink sink;
    uint64_t off;
    const pq_schema_element *schema;
    int32_t n_schema, n_leaves;
    pq_chunk_out *chunks;      /* n_rgs * n_leaves, bytes already written */
    pq_row_group *rgs;
    int32_t n_rgs, alloc;
    int64_t rows;
    pq_buf scratch;
    bool finished;
    pq_sorting_column *sorting; /* recorded in every row group; NULL: none */
    int32_t n_sorting;
};

static int put(pq_filewriter *w, const void *p, size_t n, pq_error *err)
{
    if (n == 0) return PQ_OK;
    PQ_TRY(w->sink.write(w->sink.ctx, p, n, err));
    w->off += n;
    return PQ_OK;
}

int pq_filewriter_new(const pq_sink *sink, const pq_schema_element *schema, int32_t n_schema, int32_t n_leaves,
                      pq_filewriter **out, pq_error *err)
{
    *out = NULL;
    if (n_schema < 1 || n_leaves < 1) return pq_fail(err, PQ_E_USAGE, "a file needs at least one column");
    /* A schema the footer cannot describe fails now, not after the data. */
    for (int32_t i = 0; i < n_schema; i++)
        if (schema[i].has_logical && schema[i].logical.kind == PQ_LT_UNRECOGNIZED)
            return pq_fail(err, PQ_E_UNSUPPORTED, "column '%s' has a logical type this writer does not know",
                           schema[i].name ? schema[i].name : "");
    pq_file_meta probe = {.version = 2, .schema = (pq_schema_element *)schema, .n_schema = n_schema,
                          .n_column_orders = -1};
    pq_buf scratch;
    pq_buf_init(&scratch);
    int probe_rc = pq_encode_file_meta(&probe, &scratch, err);
    pq_buf_free(&scratch);
    if (probe_rc != PQ_OK) {
        pq_error_prefix(err, "the schema cannot be written: ");
        return PQ_ERR;
    }
    pq_filewriter *w = calloc(1, sizeof *w);
    if (!w) return PQ_NOMEM(err);
    w->sink = *sink;
    w->schema = schema;
    w->n_schema = n_schema;
    w->n_leaves = n_leaves;
    if (put(w, "PAR1", 4, err) != PQ_OK) {
        free(w);
        return PQ_ERR;
    }
    *out = w;
    return PQ_OK;
}

void pq_filewriter_free(pq_filewriter *w)
{
    if (!w) return;
    for (int64_t i = 0; i < (int64_t)w->n_rgs * w->n_leaves; i++) pq_chunk_out_free(&w->chunks[i]);
    for (int32_t g = 0; g < w->n_rgs; g++) free(w->rgs[g].columns);
    free(w->chunks);
    free(w->rgs);
    free(w->sorting);
    pq_buf_free(&w->scratch);
    free(w);
}

int pq_filewriter_set_sorting(pq_filewriter *w, const pq_sorting_column *cols, int32_t n, pq_error *err)
{
    pq_sorting_column *copy = NULL;
    if (n > 0) {
        copy = malloc(sizeof *copy * (size_t)n);
        if (!copy) return PQ_NOMEM(err);
        memcpy(copy, cols, sizeof *copy * (size_t)n);
    }
    free(w->sorting);
    w->sorting = copy;
    w->n_sorting = n;
    return PQ_OK;
}

int pq_filewriter_add_row_group(pq_filewriter *w, pq_chunk_out *chunks, pq_error *err)
{
    if (w->finished) return pq_fail(err, PQ_E_USAGE, "the file is finished");
    for (int32_t c = 1; c < w->n_leaves; c++)
        if (chunks[c].num_rows != chunks[0].num_rows)
            return pq_fail(err, PQ_E_USAGE, "column %d has %lld rows, column 0 %lld", c,
                           (long long)chunks[c].num_rows, (long long)chunks[0].num_rows);
    if (w->n_rgs == INT16_MAX) return pq_fail(err, PQ_E_USAGE, "too many row groups");
    if (w->n_rgs == w->alloc) {
        int32_t a = w->alloc ? w->alloc * 2 : 8;
        pq_row_group *rgs = realloc(w->rgs, (size_t)a * sizeof *rgs);
        if (!rgs) return PQ_NOMEM(err);
        w->rgs = rgs;
        pq_chunk_out *ch = realloc(w->chunks, (size_t)a * (size_t)w->n_leaves * sizeof *ch);
        if (!ch) return PQ_NOMEM(err);
        w->chunks = ch;
        w->alloc = a;
    }
    pq_row_group *rg = &w->rgs[w->n_rgs];
    memset(rg, 0, sizeof *rg);
    rg->columns = calloc((size_t)w->n_leaves, sizeof *rg->columns);
    if (!rg->columns) return PQ_NOMEM(err);
    rg->n_columns = w->n_leaves;
    rg->num_rows = chunks[0].num_rows;
    rg->n_sorting = w->sorting ? w->n_sorting : -1;
    rg->sorting = w->sorting;
    rg->has_file_offset = rg->has_total_compressed_size = rg->has_ordinal = true;
    rg->file_offset = (int64_t)w->off;
    rg->ordinal = (int16_t)w->n_rgs;
    pq_chunk_out *kept = &w->chunks[(size_t)w->n_rgs * (size_t)w->n_leaves];
    w->n_rgs++; /* from here on the row group is the writer's to free */
    for (int32_t c = 0; c < w->n_leaves; c++) {
        kept[c] = chunks[c];
        memset(&chunks[c], 0, sizeof chunks[c]);
    }
    for (int32_t c = 0; c < w->n_leaves; c++) {
        pq_chunk_out *ch = &kept[c];
        int64_t base = (int64_t)w->off;
        pq_column_chunk *cc = &rg->columns[c];
        cc->file_offset = base;
        cc->has_meta = true;
        cc->meta = ch->meta;
        cc->meta.data_page_offset += base;
        if (cc->meta.has_dictionary_page_offset) cc->meta.dictionary_page_offset += base;
        for (int32_t p = 0; p < ch->n_pages; p++) ch->pages[p].offset += base;
        rg->total_byte_size += ch->meta.total_uncompressed_size;
        rg->total_compressed_size += ch->meta.total_compressed_size;
        PQ_TRY(put(w, ch->bytes.data, ch->bytes.len, err));
        pq_buf_free(&ch->bytes);
    }
    w->rows += rg->num_rows;
    return PQ_OK;
}

int pq_filewriter_finish(pq_filewriter *w, pq_error *err)
{
    if (w->finished) return pq_fail(err, PQ_E_USAGE, "the file is finished");
    w->finished = true;
    /* Bloom filters, column indexes, then offset indexes, all row groups
     * together: a reader fetches a column's across row groups in few reads. */
    for (int32_t g = 0; g < w->n_rgs; g++)
        for (int32_t c = 0; c < w->n_leaves; c++) {
            pq_chunk_out *ch = &w->chunks[(size_t)g * (size_t)w->n_leaves + (size_t)c];
            if (!ch->bloom.len) continue;
            pq_column_meta *m = &w->rgs[g].columns[c].meta;
            m->has_bloom_filter_offset = m->has_bloom_filter_length = true;
            m->bloom_filter_offset = (int64_t)w->off;
            m->bloom_filter_length = (int32_t)ch->bloom.len;
            PQ_TRY(put(w, ch->bloom.data, ch->bloom.len, err));
        }
    for (int32_t g = 0; g < w->n_rgs; g++)
        for (int32_t c = 0; c < w->n_leaves; c++) {
            pq_chunk_out *ch = &w->chunks[(size_t)g * (size_t)w->n_leaves + (size_t)c];
            if (!ch->column_index.len) continue;
            pq_column_chunk *cc = &w->rgs[g].columns[c];
            cc->has_column_index = true;
            cc->column_index_offset = (int64_t)w->off;
            cc->column_index_length = (int32_t)ch->column_index.len;
            PQ_TRY(put(w, ch->column_index.data, ch->column_index.len, err));
        }
    for (int32_t g = 0; g < w->n_rgs; g++)
        for (int32_t c = 0; c < w->n_leaves; c++) {
            pq_chunk_out *ch = &w->chunks[(size_t)g * (size_t)w->n_leaves + (size_t)c];
            if (ch->n_pages == 0) continue; /* a copied chunk whose source had none */
            pq_offset_index oi = {ch->n_pages, ch->pages};
            pq_buf_clear(&w->scratch);
            PQ_TRY(pq_encode_offset_index(&oi, &w->scratch, err));
            pq_column_chunk *cc = &w->rgs[g].columns[c];
            cc->has_offset_index = true;
            cc->offset_index_offset = (int64_t)w->off;
            cc->offset_index_length = (int32_t)w->scratch.len;
            PQ_TRY(put(w, w->scratch.data, w->scratch.len, err));
        }
    int32_t *orders = calloc((size_t)(uint32_t)w->n_leaves, sizeof *orders);
    if (!orders) return PQ_NOMEM(err);
    for (int32_t c = 0; c < w->n_leaves; c++) orders[c] = PQ_ORDER_TYPE_DEFINED;
    pq_file_meta m = {
        .version = 2,
        .schema = (pq_schema_element *)w->schema,
        .n_schema = w->n_schema,
        .num_rows = w->rows,
        .row_groups = w->rgs,
        .n_row_groups = w->n_rgs,
        .created_by = PQ_CREATED_BY,
        .column_orders = orders,
        .n_column_orders = w->n_leaves,
    };
    pq_buf_clear(&w->scratch);
    int rc = pq_encode_file_meta(&m, &w->scratch, err);
    free(orders);
    PQ_TRY(rc);
    if (w->scratch.len > UINT32_MAX) return pq_fail(err, PQ_E_USAGE, "the footer is too large");
    uint32_t len = (uint32_t)w->scratch.len;
    uint8_t tail[8];
    for (int i = 0; i < 4; i++) tail[i] = (uint8_t)(len >> (8 * i));
    memcpy(tail + 4, "PAR1", 4);
    PQ_TRY(put(w, w->scratch.data, w->scratch.len, err));
    return put(w, tail, sizeof tail, err);
}

/* A rewrite runs (row group, column) tasks on several threads: each reads
 * one column chunk and encodes it.  Row groups are appended in order by the
 * calling thread as soon as all their columns are sealed; at most `window`
 * row groups are in flight, which bounds the memory held. */
typedef struct rewrite_job {
    pq_file *f;
    const pq_footer *ft;
    const pq_write_opts *opts;
    int32_t batch_rows;
    bool copy_chunks;
    int32_t n_leaves, n_tasks;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int32_t next_task;         /* task t: row group t / n_leaves, column t % n_leaves */
    int32_t emit_rg;           /* the first row group not appended yet */
    int32_t window;
    bool cancel;
    pq_chunk_out *chunks;      /* per task */
    uint8_t *state;            /* per task: 0 to do, 1 sealed, 2 failed */
    pq_error *errs;            /* per task, when failed */
    /* Reshaped (row_group_rows or sort_by): output row group g holds rows
     * [g * out_rows, ...) of the input, or of the sorted rows. */
    int64_t out_rows;          /* 0: the input's row groups */
    int64_t total_rows;
    int64_t *in_first;         /* per input row group: its first row */
    const pq_sorted_rows *sorted;
} rewrite_job;

void pq_rewrite_opts_init(pq_rewrite_opts *o)
{
    memset(o, 0, sizeof *o);
    pq_write_opts_init(&o->write);
}

/* Index structures larger than this are not copied (the chunk still is). */
#define MAX_INDEX_BYTES (16u << 20)

/* Reads [off, off + len) of f into a new buffer; NULL with *err on failure. */
static uint8_t *read_range(pq_file *f, uint64_t file_size, int64_t off, int64_t len, pq_error *err)
{
    if (off < 0 || len <= 0 || (uint64_t)off > file_size || (uint64_t)len > file_size - (uint64_t)off) {
        pq_fail(err, PQ_E_CORRUPT, "a range of %lld bytes at %lld is outside the file", (long long)len,
                (long long)off);
        return NULL;
    }
    uint8_t *b = malloc((size_t)len);
    if (!b) {
        PQ_NOMEM(err);
        return NULL;
    }
    if (pq_read_at(f, b, (size_t)len, (uint64_t)off, err) != PQ_OK) {
        free(b);
        return NULL;
    }
    return b;
}

/* The source chunk's bloom filter (header and bitset, as they are) into
 * out->bloom, when it is one a reader uses: it describes the same values.
 * Anything else, or a read that fails, leaves the copy without one; a bloom
 * filter is only ever a help. */
static void copy_bloom(pq_file *f, const pq_footer *ft, const pq_column_meta *m, pq_chunk_out *out)
{
    uint8_t *raw;
    size_t len;
    pq_bloom bloom;
    pq_error ignore;
    if (pq_bloom_filter_load(f, ft, m, &raw, &len, &bloom, &ignore) == PQ_OK && raw &&
        pq_buf_append(&out->bloom, raw, len))
        out->bloom.len = 0;
    free(raw);
}

bool pq_chunk_copyable(const pq_footer *ft, int32_t g, int32_t c)
{
    const pq_column_chunk *cc = &ft->meta.row_groups[g].columns[c];
    const pq_column_meta *cm = &cc->meta;
    /* Copied only when the metadata describes the bytes plainly: no
     * dictionary offset of 0 or past the data pages (writers' quirks the
     * reader works around), no chunk in another file, reliable sizes. */
    return cc->has_meta && !cc->file_path && !cc->encrypted && !ft->legacy_chunk_sizes &&
           (!cm->has_dictionary_page_offset ||
            (cm->dictionary_page_offset > 0 && cm->dictionary_page_offset < cm->data_page_offset));
}

int pq_chunk_copy_from(pq_file *f, const pq_footer *ft, int32_t g, int32_t c, pq_chunk_out *out, pq_error *err)
{
    memset(out, 0, sizeof *out);
    const pq_column_chunk *cc = &ft->meta.row_groups[g].columns[c];
    pq_chunk_extent ext;
    PQ_TRY(pq_chunk_extent_of(cc, ft->file_size, false, &ext, err));
    uint8_t *bytes = read_range(f, ft->file_size, (int64_t)ext.start, (int64_t)ext.len, err);
    if (!bytes) return PQ_ERR;
    uint8_t *ci_raw = NULL;
    pq_arena arena;
    pq_arena_init(&arena, 4096);
    /* The reader's validated offset index: an unusable one is not copied. */
    pq_offset_index oi;
    bool has_oi = false;
    int rc = pq_offset_index_load(f, ft, cc, ft->meta.row_groups[g].num_rows, &arena, &oi, &has_oi, err);
    if (rc == PQ_OK && cc->has_column_index && cc->column_index_length > 0 &&
        (uint32_t)cc->column_index_length <= MAX_INDEX_BYTES) {
        ci_raw = read_range(f, ft->file_size, cc->column_index_offset, cc->column_index_length, err);
        if (!ci_raw) rc = PQ_ERR;
    }
    if (rc == PQ_OK)
        /* Statistics in an order the output declares: not those of a logical
         * type the writer does not know (written as its physical type). */
        rc = pq_chunk_copy(&cc->meta, ft->meta.row_groups[g].num_rows,
                           ft->schema.leaves[c].column_order == PQ_ORDER_TYPE_DEFINED &&
                               ft->schema.leaves[c].node->logical.kind != PQ_LT_UNRECOGNIZED,
                           bytes, ext.start, ext.len,
                           has_oi ? &oi : NULL, ci_raw, ci_raw ? (size_t)cc->column_index_length : 0, out, err);
    if (rc == PQ_OK) copy_bloom(f, ft, &cc->meta, out);
    free(bytes);
    free(ci_raw);
    pq_arena_free(&arena);
    return rc;
}

/* Adds rows [first, first + n) of column c of the input to cw, read across
 * its row groups (each one's reader skips to the first row needed). */
static int add_input_rows(const rewrite_job *j, int32_t c, int64_t first, int64_t n, pq_colwriter *cw, pq_error *err)
{
    const pq_file_meta *m = &j->ft->meta;
    for (int32_t g = 0; n > 0 && g < m->n_row_groups; g++) {
        int64_t rows = m->row_groups[g].num_rows, off = first - j->in_first[g];
        if (off >= rows) continue;
        int64_t take = rows - off < n ? rows - off : n;
        pq_rg_reader *rg = NULL;
        int rc = pq_rg_open(j->f, j->ft, g, &c, 1, &rg, err);
        pq_col_reader *cr = rc == PQ_OK ? pq_rg_column(rg, c) : NULL;
        if (rc == PQ_OK && off > 0) rc = pq_col_skip(cr, off, err);
        for (int64_t got = 0; rc == PQ_OK && got < take;) {
            pq_col_batch b;
            rc = pq_col_read(cr, take - got < j->batch_rows ? (int32_t)(take - got) : j->batch_rows, &b, err);
            if (rc == PQ_OK && b.n_rows == 0)
                rc = pq_fail(err, PQ_E_CORRUPT, "column %s ends before the row group's %lld rows",
                             j->ft->schema.leaves[c].path, (long long)rows);
            if (rc == PQ_OK) rc = pq_colwriter_add(cw, &b, err);
            got += b.n_rows;
        }
        pq_rg_close(rg);
        if (rc != PQ_OK) {
            pq_error_prefix(err, "row group %d: ", g);
            return PQ_ERR;
        }
        first += take;
        n -= take;
    }
    return n == 0 ? PQ_OK : pq_fail(err, PQ_E_CORRUPT, "the row groups hold fewer rows than they claim");
}

/* Output row group g of a reshaped rewrite, column c, into *out. */
static int reshape_chunk(const rewrite_job *j, int32_t g, int32_t c, pq_chunk_out *out, pq_error *err)
{
    int64_t first = (int64_t)g * j->out_rows;
    int64_t n = j->total_rows - first < j->out_rows ? j->total_rows - first : j->out_rows;
    pq_colwriter *cw = NULL;
    int rc = pq_colwriter_new(&j->ft->schema.leaves[c], j->opts, &cw, err);
    if (rc == PQ_OK)
        rc = j->sorted ? pq_sorted_rows_add(j->sorted, c, first, n, cw, err) : add_input_rows(j, c, first, n, cw, err);
    if (rc == PQ_OK) rc = pq_colwriter_finish(cw, out, err);
    pq_colwriter_free(cw);
    return rc;
}

/* Reads column c of row group g and encodes it into *out (or copies it). */
static int rewrite_chunk(const rewrite_job *j, int32_t g, int32_t c, pq_chunk_out *out, pq_error *err)
{
    const pq_footer *ft = j->ft;
    if (j->out_rows > 0) return reshape_chunk(j, g, c, out, err);
    if (ft->meta.row_groups[g].num_rows == 0) return PQ_OK; /* not written */
    if (j->copy_chunks && pq_chunk_copyable(ft, g, c)) return pq_chunk_copy_from(j->f, ft, g, c, out, err);
    pq_rg_reader *rg = NULL;
    PQ_TRY(pq_rg_open(j->f, ft, g, &c, 1, &rg, err));
    pq_colwriter *cw = NULL;
    int rc = pq_colwriter_new(&ft->schema.leaves[c], j->opts, &cw, err);
    pq_col_reader *cr = pq_rg_column(rg, c);
    while (rc == PQ_OK && pq_col_position(cr) < rg->num_rows) {
        pq_col_batch b;
        rc = pq_col_read(cr, j->batch_rows, &b, err);
        if (rc == PQ_OK && b.n_rows == 0)
            rc = pq_fail(err, PQ_E_CORRUPT, "column %s ends before the row group's %lld rows",
                         ft->schema.leaves[c].path, (long long)rg->num_rows);
        if (rc == PQ_OK) rc = pq_colwriter_add(cw, &b, err);
    }
    if (rc == PQ_OK) rc = pq_colwriter_finish(cw, out, err);
    pq_colwriter_free(cw);
    pq_rg_close(rg);
    return rc;
}

static void rewrite_worker(void *arg, int worker)
{
    (void)worker;
    rewrite_job *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        while (!j->cancel && j->next_task < j->n_tasks && j->next_task / j->n_leaves >= j->emit_rg + j->window)
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->cancel || j->next_task >= j->n_tasks) break;
        int32_t t = j->next_task++;
        pthread_mutex_unlock(&j->mu);
        pq_error err;
        pq_error_clear(&err);
        int rc = rewrite_chunk(j, t / j->n_leaves, t % j->n_leaves, &j->chunks[t], &err);
        pthread_mutex_lock(&j->mu);
        j->state[t] = rc == PQ_OK ? 1 : 2;
        if (rc != PQ_OK) j->errs[t] = err;
        pthread_cond_broadcast(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
}

int pq_file_rewrite(pq_file *f, const pq_footer *ft, const char *name, const pq_rewrite_opts *opts,
                    const pq_sink *sink, pq_error *err)
{
    const pq_file_meta *m = &ft->meta;
    rewrite_job j = {
        .f = f, .ft = ft, .opts = &opts->write, .batch_rows = opts->batch_rows > 0 ? opts->batch_rows : 8192,
        .copy_chunks = opts->copy_chunks, .n_leaves = ft->schema.n_leaves,
    };
    int threads = opts->threads;
    if (threads <= 0) threads = pq_default_threads();
    int32_t n_out_rgs = m->n_row_groups;
    pq_sorted_rows *sorted = NULL;
    int rc = PQ_OK;
    if (opts->row_group_rows > 0 || opts->n_sort_by > 0) {
        j.out_rows = opts->row_group_rows > 0 ? opts->row_group_rows : PQ_DEFAULT_ROW_GROUP_ROWS;
        j.in_first = calloc((size_t)(m->n_row_groups > 0 ? m->n_row_groups : 1), sizeof *j.in_first);
        if (!j.in_first) rc = PQ_NOMEM(err);
        for (int32_t g = 0; rc == PQ_OK && g < m->n_row_groups; g++) {
            int64_t r = m->row_groups[g].num_rows;
            if (r < 0 || r > INT64_MAX - j.total_rows)
                rc = pq_fail(err, PQ_E_CORRUPT, "row group %d claims %lld rows", g, (long long)r);
            j.in_first[g] = j.total_rows;
            j.total_rows += r;
        }
        int64_t groups = rc == PQ_OK ? j.total_rows / j.out_rows + (j.total_rows % j.out_rows != 0) : 0;
        /* A file holds at most 32,767 row groups (RowGroup.ordinal is an
         * i16): said now, not after writing that many. */
        if (rc == PQ_OK && (groups >= INT16_MAX || groups > INT32_MAX / (j.n_leaves > 0 ? j.n_leaves : 1)))
            rc = pq_fail(err, PQ_E_USAGE,
                         "%s: %lld rows in row groups of %lld rows make more than %d row groups (a file's most)",
                         name, (long long)j.total_rows, (long long)j.out_rows, INT16_MAX - 1);
        n_out_rgs = (int32_t)groups;
    }
    int32_t *sort_leaves = NULL;
    if (rc == PQ_OK && opts->n_sort_by > 0) {
        sort_leaves = calloc((size_t)opts->n_sort_by, sizeof *sort_leaves);
        if (!sort_leaves) rc = PQ_NOMEM(err);
        if (rc == PQ_OK) rc = pq_sort_leaves(ft, opts->sort_by, opts->n_sort_by, name, sort_leaves, err);
        if (rc == PQ_OK)
            rc = pq_sorted_rows_load(f, ft, name, sort_leaves, opts->n_sort_by, threads, &sorted, err);
        j.sorted = sorted;
    }
    pq_filewriter *w = NULL;
    if (rc == PQ_OK && pq_filewriter_new(sink, m->schema, m->n_schema, j.n_leaves, &w, err) != PQ_OK) {
        pq_error_prefix(err, "%s: ", name);
        rc = PQ_ERR;
    }
    if (rc == PQ_OK && sorted) {
        pq_sorting_column *sc = calloc((size_t)opts->n_sort_by, sizeof *sc);
        if (!sc) rc = PQ_NOMEM(err);
        for (int k = 0; sc && k < opts->n_sort_by; k++) sc[k] = (pq_sorting_column){sort_leaves[k], false, false};
        if (sc) rc = pq_filewriter_set_sorting(w, sc, opts->n_sort_by, err);
        free(sc);
    }
    free(sort_leaves);
    if (rc != PQ_OK) {
        pq_sorted_rows_free(sorted);
        free(j.in_first);
        pq_filewriter_free(w);
        return PQ_ERR;
    }
    j.window = threads + 1;
    j.n_tasks = n_out_rgs * j.n_leaves; /* bounded: footers are, and reshaped counts are checked */
    size_t n = (size_t)(uint32_t)(j.n_tasks ? j.n_tasks : 1);
    j.chunks = calloc(n, sizeof *j.chunks);
    j.state = calloc(n, 1);
    j.errs = calloc(n, sizeof *j.errs);
    rc = j.chunks && j.state && j.errs ? PQ_OK : PQ_NOMEM(err);
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    /* Workers on threads of their own (threads.h): they wait on this
     * thread's window of row groups. */
    pq_workers workers;
    if (pq_workers_start(&workers, rc == PQ_OK ? threads : 0, rewrite_worker, &j) == 0 && rc == PQ_OK)
        rc = pq_fail(err, PQ_E_NOMEM, "cannot start writer threads");
    for (int32_t g = 0; rc == PQ_OK && g < n_out_rgs; g++) {
        pq_chunk_out *chunks = &j.chunks[(size_t)g * (size_t)j.n_leaves];
        /* Every task of the row group, even past a failed one: its chunks
         * are freed next, and a task still encoding into one would write
         * into freed memory. */
        pthread_mutex_lock(&j.mu);
        for (int32_t c = 0; c < j.n_leaves; c++) {
            int32_t t = g * j.n_leaves + c;
            while (!j.state[t]) pthread_cond_wait(&j.cv, &j.mu);
            if (j.state[t] == 2 && rc == PQ_OK) {
                *err = j.errs[t];
                rc = PQ_ERR;
            }
        }
        pthread_mutex_unlock(&j.mu);
        /* A row group without rows has nothing to write (reshaped, none has). */
        if (rc == PQ_OK && (j.out_rows > 0 || m->row_groups[g].num_rows > 0))
            rc = pq_filewriter_add_row_group(w, chunks, err);
        for (int32_t c = 0; c < j.n_leaves; c++) pq_chunk_out_free(&chunks[c]);
        if (rc != PQ_OK) pq_error_prefix(err, "row group %d: ", g);
        pthread_mutex_lock(&j.mu);
        j.emit_rg = g + 1;
        if (rc != PQ_OK) j.cancel = true;
        pthread_cond_broadcast(&j.cv);
        pthread_mutex_unlock(&j.mu);
    }
    pthread_mutex_lock(&j.mu);
    j.cancel = true;
    pthread_cond_broadcast(&j.cv);
    pthread_mutex_unlock(&j.mu);
    pq_workers_join(&workers);
    if (rc == PQ_OK) rc = pq_filewriter_finish(w, err);
    if (rc != PQ_OK) pq_error_prefix(err, "%s: ", name);
    for (size_t t = 0; j.chunks && t < (size_t)j.n_tasks; t++) pq_chunk_out_free(&j.chunks[t]);
    pthread_mutex_destroy(&j.mu);
    pthread_cond_destroy(&j.cv);
    free(j.chunks);
    free(j.state);
    free(j.errs);
    free(j.in_first);
    pq_sorted_rows_free(sorted);
    pq_filewriter_free(w);
    return rc;
}
