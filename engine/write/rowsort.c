/* Rows of a Parquet file held in memory and put in order (rowsort.h). */
#include "rowsort.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "encoding.h"
#include "rowgroup.h"
#include "threads.h"

/* Rows decoded at a time, and rows gathered at a time for the writer. */
#define LOAD_BATCH_ROWS 8192
#define ADD_SLICE_ROWS 8192

/* ------------------------------------------------------------------ stable sort */

static void insertion_sort(uint32_t *a, int64_t n, pq_row_cmp cmp, const void *ctx)
{
    for (int64_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        int64_t j = i;
        while (j > 0 && cmp(ctx, a[j - 1], x) > 0) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

void pq_stable_sort_rows(uint32_t *a, uint32_t *tmp, int64_t n, pq_row_cmp cmp, const void *ctx)
{
    if (n <= 16) {
        insertion_sort(a, n, cmp, ctx);
        return;
    }
    int64_t h = n / 2;
    pq_stable_sort_rows(a, tmp, h, cmp, ctx);
    pq_stable_sort_rows(a + h, tmp, n - h, cmp, ctx);
    if (cmp(ctx, a[h - 1], a[h]) <= 0) return; /* already in order: sorted input costs n compares */
    /* Merge: the left half moves to tmp; on ties it goes first (stable). */
    memcpy(tmp, a, sizeof *a * (size_t)h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) a[k++] = cmp(ctx, a[j], tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < h) a[k++] = tmp[i++];
}

/* ------------------------------------------------------------------ keys */

int pq_sort_leaves(const pq_footer *ft, const char *const *names, int n, const char *file, int32_t *leaves,
                   pq_error *err)
{
    const pq_schema *s = &ft->schema;
    for (int32_t c = 0; n > 0 && c < s->n_leaves; c++)
        if (s->leaves[c].max_rep > 0)
            return pq_fail(err, PQ_E_USAGE,
                           "%s: sort_by: column %s is repeated, and rows with repeated columns cannot be sorted yet",
                           file, s->leaves[c].path);
    for (int k = 0; k < n; k++) {
        int32_t hit = -1;
        for (int32_t c = 0; c < s->n_leaves; c++) {
            const pq_node *nd = s->leaves[c].node;
            if (nd->parent == s->root && !strcmp(nd->name, names[k])) hit = c;
        }
        if (hit < 0) {
            for (int32_t i = 0; i < s->root->n_children; i++)
                if (!strcmp(s->root->children[i]->name, names[k]))
                    return pq_fail(err, PQ_E_USAGE, "%s: sort_by: column '%s' is nested: rows are sorted by "
                                                    "top-level columns", file, names[k]);
            return pq_fail(err, PQ_E_USAGE, "%s: sort_by: no column '%s'", file, names[k]);
        }
        if (pq_value_order_of(s->leaves[hit].node) == PQ_ORD_NONE)
            return pq_fail(err, PQ_E_USAGE, "%s: sort_by: column '%s' has a type rows cannot be sorted by yet",
                           file, names[k]);
        leaves[k] = hit;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ rows in memory */

typedef struct leaf_rows {
    uint16_t *def;             /* per row; NULL when the leaf is required */
    uint32_t *vidx;            /* per row with a value: its index in vals */
    uint8_t *vals;             /* the values, typed (encoding.h) */
    pq_arena heap;             /* byte-array values' bytes */
} leaf_rows;

typedef struct key_col {
    const leaf_rows *lr;
    pq_value_order ord;
    int16_t max_def;
    size_t vsize;
    bool bytes;
} key_col;

struct pq_sorted_rows {
    const pq_footer *ft;
    int64_t n_rows;
    leaf_rows *cols;
    uint32_t *perm;            /* sorted position -> row */
};

int64_t pq_sorted_rows_count(const pq_sorted_rows *s)
{
    return s->n_rows;
}

static bool is_bytes(pq_phys p)
{
    return p == PQ_BYTE_ARRAY || p == PQ_FIXED_LEN_BYTE_ARRAY;
}

/* Decodes leaf c of every row group into lr (n_rows rows in all). */
static int load_leaf(pq_file *f, const pq_footer *ft, int32_t c, int64_t n_rows, leaf_rows *lr, pq_error *err)
{
    const pq_leaf *leaf = &ft->schema.leaves[c];
    size_t vsize = pq_value_size(leaf->node->phys);
    size_t n = (size_t)(n_rows ? n_rows : 1);
    bool bytes = is_bytes(leaf->node->phys);
    pq_arena_init(&lr->heap, 1u << 20);
    lr->def = leaf->max_def > 0 ? malloc(sizeof *lr->def * n) : NULL;
    lr->vidx = malloc(sizeof *lr->vidx * n);
    lr->vals = malloc(vsize * n); /* flat: at most one value per row */
    if ((leaf->max_def > 0 && !lr->def) || !lr->vidx || !lr->vals) return PQ_NOMEM(err);
    int64_t row = 0, nv = 0;
    int rc = PQ_OK;
    for (int32_t g = 0; rc == PQ_OK && g < ft->meta.n_row_groups; g++) {
        if (ft->meta.row_groups[g].num_rows == 0) continue;
        pq_rg_reader *rg = NULL;
        rc = pq_rg_open(f, ft, g, &c, 1, &rg, err);
        pq_col_reader *cr = rc == PQ_OK ? pq_rg_column(rg, c) : NULL;
        while (rc == PQ_OK && pq_col_position(cr) < rg->num_rows) {
            pq_col_batch b;
            rc = pq_col_read(cr, LOAD_BATCH_ROWS, &b, err);
            if (rc != PQ_OK) break;
            if (b.n_rows == 0 || b.n_levels != b.n_rows || b.n_rows > n_rows - row) {
                rc = pq_fail(err, PQ_E_CORRUPT, "column %s, row group %d: its rows do not match the row group's",
                             leaf->path, g);
                break;
            }
            int32_t k = 0;
            for (int32_t i = 0; i < b.n_rows; i++) {
                bool has = !b.def || b.def[i] == leaf->max_def;
                if (lr->def) lr->def[row + i] = b.def ? b.def[i] : (uint16_t)leaf->max_def;
                lr->vidx[row + i] = (uint32_t)(nv + k);
                k += has;
            }
            if (k != b.n_values) {
                rc = pq_fail(err, PQ_E_CORRUPT, "column %s, row group %d: %d values for %d non-null rows", leaf->path,
                             g, b.n_values, k);
                break;
            }
            if (bytes) {
                /* The batch's bytes live in its page: copied, in one block. */
                const pq_bytes *src = b.values;
                size_t total = 0;
                for (int32_t i = 0; i < b.n_values; i++) total += src[i].len;
                uint8_t *dst = total ? pq_arena_alloc(&lr->heap, total) : NULL;
                if (total && !dst) {
                    rc = PQ_NOMEM(err);
                    break;
                }
                pq_bytes *out = (pq_bytes *)(void *)lr->vals + nv;
                size_t at = 0; /* dst is NULL when every value is empty */
                for (int32_t i = 0; i < b.n_values; i++) {
                    if (src[i].len) memcpy(dst + at, src[i].ptr, src[i].len);
                    out[i] = (pq_bytes){src[i].len ? dst + at : (const uint8_t *)"", src[i].len};
                    at += src[i].len;
                }
            } else if (b.n_values) {
                memcpy(lr->vals + vsize * (size_t)nv, b.values, vsize * (size_t)b.n_values);
            }
            nv += b.n_values;
            row += b.n_rows;
        }
        pq_rg_close(rg);
        if (rc != PQ_OK) pq_error_prefix(err, "row group %d: ", g);
    }
    if (rc == PQ_OK && row != n_rows)
        rc = pq_fail(err, PQ_E_CORRUPT, "column %s has %lld rows, the row groups %lld", leaf->path, (long long)row,
                     (long long)n_rows);
    return rc;
}

typedef struct load_job {
    pq_file *f;
    const pq_footer *ft;
    pq_sorted_rows *s;
    pthread_mutex_t mu;
    int *rc;                   /* per leaf */
    pq_error *errs;            /* per leaf */
    bool failed;
} load_job;

/* Leaf i into memory; once one has failed, the leaves not started yet are
 * left (the first failure in leaf order is the one reported). */
static void load_one(void *arg, size_t i)
{
    load_job *j = arg;
    int32_t c = (int32_t)i;
    pthread_mutex_lock(&j->mu);
    bool failed = j->failed;
    pthread_mutex_unlock(&j->mu);
    if (failed) return;
    j->rc[c] = load_leaf(j->f, j->ft, c, j->s->n_rows, &j->s->cols[c], &j->errs[c]);
    if (j->rc[c] != PQ_OK) {
        pthread_mutex_lock(&j->mu);
        j->failed = true;
        pthread_mutex_unlock(&j->mu);
    }
}

static int cmp_float(double a, double b)
{
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return na == nb ? 0 : na ? 1 : -1; /* NaN after every number */
    return (a > b) - (a < b);
}

typedef struct sort_ctx {
    const key_col *keys;
    int n_keys;
} sort_ctx;

static int cmp_rows(const void *ctx, uint32_t a, uint32_t b)
{
    const sort_ctx *sc = ctx;
    for (int k = 0; k < sc->n_keys; k++) {
        const key_col *kc = &sc->keys[k];
        const leaf_rows *lr = kc->lr;
        bool pa = !lr->def || lr->def[a] == kc->max_def, pb = !lr->def || lr->def[b] == kc->max_def;
        if (!pa || !pb) {
            if (pa != pb) return pa ? -1 : 1; /* NULLs last */
            continue;
        }
        const uint8_t *va = lr->vals + kc->vsize * lr->vidx[a], *vb = lr->vals + kc->vsize * lr->vidx[b];
        int c;
        if (kc->bytes) {
            const pq_bytes *x = (const pq_bytes *)(const void *)va, *y = (const pq_bytes *)(const void *)vb;
            c = pq_value_order_cmp(kc->ord, x->ptr, x->len, y->ptr, y->len);
        } else if (kc->ord == PQ_ORD_F32) {
            float x, y;
            memcpy(&x, va, sizeof x);
            memcpy(&y, vb, sizeof y);
            c = cmp_float(x, y);
        } else if (kc->ord == PQ_ORD_F64) {
            double x, y;
            memcpy(&x, va, sizeof x);
            memcpy(&y, vb, sizeof y);
            c = cmp_float(x, y);
        } else {
            c = pq_value_order_cmp(kc->ord, va, kc->vsize, vb, kc->vsize);
        }
        if (c) return c;
    }
    return 0;
}

int pq_sorted_rows_load(pq_file *f, const pq_footer *ft, const char *file, const int32_t *key_leaves, int n_keys,
                        int threads, pq_sorted_rows **out, pq_error *err)
{
    *out = NULL;
    int32_t n_leaves = ft->schema.n_leaves;
    int64_t n_rows = 0;
    for (int32_t g = 0; g < ft->meta.n_row_groups; g++) {
        int64_t r = ft->meta.row_groups[g].num_rows;
        if (r < 0 || r > (int64_t)UINT32_MAX - 1 - n_rows)
            return pq_fail(err, PQ_E_USAGE, "%s: sort_by: too many rows to sort (more than %u)", file,
                           UINT32_MAX - 1);
        n_rows += r;
    }
    pq_sorted_rows *s = calloc(1, sizeof *s);
    key_col *keys = calloc((size_t)(n_keys > 0 ? n_keys : 1), sizeof *keys);
    load_job j = {.f = f, .ft = ft, .s = s};
    j.rc = calloc((size_t)(n_leaves > 0 ? n_leaves : 1), sizeof *j.rc);
    j.errs = calloc((size_t)(n_leaves > 0 ? n_leaves : 1), sizeof *j.errs);
    if (s) {
        s->ft = ft;
        s->n_rows = n_rows;
        s->cols = calloc((size_t)(n_leaves > 0 ? n_leaves : 1), sizeof *s->cols);
        s->perm = malloc(sizeof *s->perm * (size_t)(n_rows ? n_rows : 1));
    }
    int rc = s && keys && j.rc && j.errs && s->cols && s->perm ? PQ_OK : PQ_NOMEM(err);
    if (s && !s->cols) n_leaves = 0; /* nothing for pq_sorted_rows_free to walk */
    /* Decode: one task per leaf. */
    if (threads <= 0) threads = pq_default_threads();
    if (threads > n_leaves) threads = n_leaves > 0 ? n_leaves : 1;
    pthread_mutex_init(&j.mu, NULL);
    if (threads > 64) threads = 64;
    if (rc == PQ_OK) pq_parallel_for((size_t)n_leaves, threads, load_one, &j);
    pthread_mutex_destroy(&j.mu);
    for (int32_t c = 0; rc == PQ_OK && c < n_leaves; c++)
        if (j.rc[c] != PQ_OK) { /* the first failure in leaf order */
            *err = j.errs[c];
            pq_error_prefix(err, "%s: ", file);
            rc = PQ_ERR;
        }
    /* Sort: row numbers by the keys. */
    if (rc == PQ_OK) {
        for (int k = 0; k < n_keys; k++) {
            const pq_leaf *leaf = &ft->schema.leaves[key_leaves[k]];
            keys[k] = (key_col){&s->cols[key_leaves[k]], pq_value_order_of(leaf->node), leaf->max_def,
                                pq_value_size(leaf->node->phys), is_bytes(leaf->node->phys)};
        }
        for (int64_t i = 0; i < n_rows; i++) s->perm[i] = (uint32_t)i;
        uint32_t *tmp = malloc(sizeof *tmp * (size_t)(n_rows / 2 + 1));
        if (!tmp) rc = PQ_NOMEM(err);
        else {
            sort_ctx sc = {keys, n_keys};
            pq_stable_sort_rows(s->perm, tmp, n_rows, cmp_rows, &sc);
            free(tmp);
        }
    }
    free(keys);
    free(j.rc);
    free(j.errs);
    if (rc != PQ_OK) {
        pq_sorted_rows_free(s);
        return PQ_ERR;
    }
    *out = s;
    return PQ_OK;
}

int pq_sorted_rows_add(const pq_sorted_rows *s, int32_t leaf, int64_t from, int64_t n, pq_colwriter *w,
                       pq_error *err)
{
    const pq_leaf *lf = &s->ft->schema.leaves[leaf];
    const leaf_rows *lr = &s->cols[leaf];
    size_t vsize = pq_value_size(lf->node->phys);
    if (from < 0 || n < 0 || from > s->n_rows || n > s->n_rows - from)
        return pq_fail(err, PQ_E_USAGE, "rows %lld..%lld are not among the %lld sorted", (long long)from,
                       (long long)(from + n), (long long)s->n_rows);
    uint16_t *def = lr->def ? malloc(sizeof *def * ADD_SLICE_ROWS) : NULL;
    uint8_t *vals = malloc(vsize * ADD_SLICE_ROWS);
    int rc = (!lr->def || def) && vals ? PQ_OK : PQ_NOMEM(err);
    for (int64_t r0 = 0; rc == PQ_OK && r0 < n; r0 += ADD_SLICE_ROWS) {
        int32_t k = (int32_t)(n - r0 < ADD_SLICE_ROWS ? n - r0 : ADD_SLICE_ROWS);
        int32_t nv = 0;
        const uint32_t *rows = s->perm + from + r0;
        for (int32_t i = 0; i < k; i++) {
            uint32_t r = rows[i];
            bool has = !lr->def || lr->def[r] == lf->max_def;
            if (def) def[i] = lr->def[r];
            if (has) memcpy(vals + vsize * (size_t)nv++, lr->vals + vsize * lr->vidx[r], vsize);
        }
        pq_col_batch b = {.n_rows = k, .n_levels = k, .def = def, .n_values = nv, .values = vals};
        rc = pq_colwriter_add(w, &b, err);
    }
    free(def);
    free(vals);
    return rc;
}

void pq_sorted_rows_free(pq_sorted_rows *s)
{
    if (!s) return;
    for (int32_t c = 0; s->cols && c < s->ft->schema.n_leaves; c++) {
        free(s->cols[c].def);
        free(s->cols[c].vidx);
        free(s->cols[c].vals);
        pq_arena_free(&s->cols[c].heap);
    }
    free(s->cols);
    free(s->perm);
    free(s);
}
