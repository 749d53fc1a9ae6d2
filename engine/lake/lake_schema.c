/* A view's schema and query (schema evolution in the mount).
 *
 * A Hive view's schema is the union by name (footer.h: pq_schema_union) of
 * the table's schema file (its first file), whose columns every view has
 * (a lookup checks a view against that file alone), and of the files the
 * view reads, as pqtool and DuckDB's read_parquet(..., union_by_name =
 * true) read them: a column only later files hold is one of its columns,
 * NULL in the rows of the files without it, and a narrower type is
 * widened.  The files are the view's snapshot, listed with the query
 * compiled against the schema file, so a partition its filters rule out
 * is neither listed nor part of the schema; a query that does not compile
 * there (it names a column only later files have) rules nothing out.
 *
 * A view's result is keyed by its files and by its query compiled against
 * the schema file when it compiles there (the union is a function of the
 * files, so the key needs nothing more, and finding a kept result or its
 * size reads no footer but the first); else by the query compiled against
 * the union.  The union is computed once per set of files: kept in a memo
 * keyed by the table, its schema file's identity, the view's directory
 * and filter, and the digest of its files' identities, so it never stands
 * for another set of files.  A Delta table's schema is its log's (lake.c:
 * format_ref), never a union. */
#include <stdlib.h>
#include <string.h>

#include "lake_internal.h"
#include "scan.h"

/* Unions kept for reuse (each a schema only: a few KiB).  Past this, the
 * least recently used one no view holds goes; one every slot's view holds
 * is computed for its view alone and freed after it. */
#define UNION_MEMO_ENTRIES 32
/* A scan's union pass keeps this much of its files' footers (and their
 * files) for the scan, as pqtool does: a table within it reads each file
 * once. */
#define UNION_KEEP_BYTES ((size_t)16 << 20)

struct lake_union {
    struct lake_union *next;
    char *key;
    pq_footer *ft;               /* NULL: the union is the schema file's own schema */
    int refs;
    bool kept;                   /* in l->unions */
    uint64_t last_used_ms;
};

static void union_free(lake_union *u)
{
    pq_footer_free(u->ft);
    free(u->key);
    free(u);
}

void lake_unions_free(pq_lake *l)
{
    while (l->unions) {
        lake_union *u = l->unions;
        l->unions = u->next;
        union_free(u);
    }
}

static void union_put(pq_lake *l, lake_union *u)
{
    if (!u) return;
    pthread_mutex_lock(&l->mu);
    bool gone = --u->refs == 0 && !u->kept;
    pthread_mutex_unlock(&l->mu);
    if (gone) union_free(u);
}

/* The memo's key: everything the union depends on but the files' footers,
 * which their identities (in the digest) fix. */
static char *union_key(const view *v, const pq_query *q_ref, const snapshot *s)
{
    const table_info *t = v->t;
    pq_buf k;
    pq_buf_init(&k);
    int bad = pq_buf_printf(&k, "%zu:%s\n%zu:%s %llu %lld\n%zu:%s\n", strlen(t->root), t->root, strlen(t->ref_path),
                            t->ref_path, (unsigned long long)t->ref_id.size, (long long)t->ref_id.mtime_ns,
                            strlen(v->real_dir ? v->real_dir : ""), v->real_dir ? v->real_dir : "");
    bad |= pq_buf_puts(&k, q_ref ? "pred " : "no filter\n");
    if (q_ref) bad |= pq_expr_key(q_ref->pred, &k) | pq_buf_puts(&k, "\n");
    bad |= pq_buf_printf(&k, "files %d %s", s->files->n_files, s->digest);
    bad |= pq_buf_append(&k, "", 1);
    if (bad) {
        pq_buf_free(&k);
        return NULL;
    }
    return k.data;
}

static lake_union *union_find_locked(pq_lake *l, const char *key)
{
    for (lake_union *u = l->unions; u; u = u->next)
        if (!strcmp(u->key, key)) {
            u->refs++;
            u->last_used_ms = pq_now_ms();
            return u;
        }
    return NULL;
}

/* Keeps u in the memo (one reference more for it), evicting the least
 * recently used unheld entry when full; with every entry held, u stays
 * its caller's alone.  Another thread's union of the same files kept
 * first wins: *u becomes it. */
static void union_keep(pq_lake *l, lake_union **u)
{
    pthread_mutex_lock(&l->mu);
    lake_union *had = union_find_locked(l, (*u)->key);
    if (had) {
        pthread_mutex_unlock(&l->mu);
        union_put(l, *u);
        *u = had;
        return;
    }
    int n = 0;
    lake_union **victim = NULL;
    for (lake_union **p = &l->unions; *p; p = &(*p)->next) {
        n++;
        if ((*p)->refs == 0 && (!victim || (*p)->last_used_ms < (*victim)->last_used_ms)) victim = p;
    }
    lake_union *evicted = NULL;
    if (n >= UNION_MEMO_ENTRIES && victim) {
        evicted = *victim;
        *victim = evicted->next;
        n--;
    }
    if (n < UNION_MEMO_ENTRIES) {
        (*u)->kept = true;
        (*u)->next = l->unions;
        l->unions = *u;
    }
    pthread_mutex_unlock(&l->mu);
    if (evicted) union_free(evicted);
}

/* The union of the snapshot's files' schemas, from the memo or read:
 * through `scan` (its files, opened by the scan's options, keeping their
 * footers for the scan) when given. */
static int union_get(pq_lake *l, const view *v, const pq_query *q_ref, const pq_footer *ref_ft, const snapshot *s,
                     const lake_scan_files *scan, lake_union **out, pq_error *err)
{
    *out = NULL;
    char *key = union_key(v, q_ref, s);
    if (!key) return PQ_NOMEM(err);
    pthread_mutex_lock(&l->mu);
    lake_union *u = union_find_locked(l, key);
    pthread_mutex_unlock(&l->mu);
    if (u) {
        free(key);
        *out = u;
        return PQ_OK;
    }
    pq_footer *ft = NULL;
    int rc = scan ? pq_scan_schema_union_from(ref_ft, v->t->ref_path, scan->files, s->files->n_files, q_ref, scan->opts,
                                              UNION_KEEP_BYTES, &ft, err)
                  : lake_files_union(l, v, s, q_ref, ref_ft, &ft, err);
    if (rc != PQ_OK) {
        free(key);
        return PQ_ERR;
    }
    /* Every file of the view's schema file's schema (or none read): that
     * schema, its footer the query's. */
    if (ft && pq_schema_identical(&ft->schema, &ref_ft->schema)) {
        pq_footer_free(ft);
        ft = NULL;
    }
    u = calloc(1, sizeof *u);
    if (!u) {
        pq_footer_free(ft);
        free(key);
        return PQ_NOMEM(err);
    }
    u->key = key;
    u->ft = ft;
    u->refs = 1;
    u->last_used_ms = pq_now_ms();
    union_keep(l, &u);
    *out = u;
    return PQ_OK;
}

/* ------------------------------------------------------------------ view queries */

const pq_footer *lake_view_schema(const view_query *vq)
{
    return vq->u && vq->u->ft ? vq->u->ft : pq_footer_ref_get(vq->ref);
}

void lake_view_query_free(pq_lake *l, view_query *vq)
{
    pq_query_free(vq->q);
    if (vq->ref) pq_footer_ref_put(l->footers, vq->ref);
    union_put(l, vq->u);
    lake_snapshot_free(&vq->s);
    memset(vq, 0, sizeof *vq);
}

bool lake_schema_may_evolve(const table_info *t)
{
    return !t->snap && t->n_files > 1;
}

int lake_view_files(pq_lake *l, const view *v, view_query *vq, pq_error *err)
{
    memset(vq, 0, sizeof *vq);
    const table_info *t = v->t;
    int rc = lake_schema_file(l, t, &vq->ref, err);
    pq_error why;
    bool compiled = rc == PQ_OK && lake_compile_against(v, pq_footer_ref_get(vq->ref), &vq->q, &why) == PQ_OK;
    if (rc == PQ_OK && !compiled && !lake_schema_may_evolve(t)) {
        *err = why;
        rc = PQ_ERR;
    }
    if (rc == PQ_OK) rc = lake_snapshot_take(l, v, vq->q, &vq->s, err);
    if (rc == PQ_OK && !compiled) {
        /* A column the schema file lacks: the query against the union of
         * every file the view may read, and the key by it. */
        rc = union_get(l, v, NULL, pq_footer_ref_get(vq->ref), &vq->s, NULL, &vq->u, err);
        if (rc == PQ_OK && !vq->u->ft) {
            *err = why;
            rc = PQ_ERR;
        }
        if (rc == PQ_OK) rc = lake_compile_against(v, vq->u->ft, &vq->q, err);
        if (rc == PQ_OK) rc = lake_snapshot_rekey(v, vq->q, &vq->s, err);
    }
    if (rc != PQ_OK) lake_view_query_free(l, vq);
    return rc;
}

int lake_view_query_complete(pq_lake *l, const view *v, view_query *vq, const lake_scan_files *scan, pq_error *err)
{
    if (vq->u || !lake_schema_may_evolve(v->t)) return PQ_OK;
    PQ_TRY(union_get(l, v, vq->q, pq_footer_ref_get(vq->ref), &vq->s, scan, &vq->u, err));
    if (!vq->u->ft) return PQ_OK; /* the scan's query is the union's: its verdicts hold */
    if (scan) pq_scan_files_forget_verdicts(scan->files, vq->s.files->n_files);
    pq_query *q;
    PQ_TRY(lake_compile_against(v, vq->u->ft, &q, err));
    pq_query_free(vq->q);
    vq->q = q;
    return PQ_OK;
}

int lake_view_query(pq_lake *l, const view *v, view_query *vq, pq_error *err)
{
    PQ_TRY(lake_view_files(l, v, vq, err));
    if (lake_view_query_complete(l, v, vq, NULL, err) != PQ_OK) {
        lake_view_query_free(l, vq);
        return PQ_ERR;
    }
    return PQ_OK;
}
