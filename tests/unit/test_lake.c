/* The lake without FUSE (engine/lake/lake.c, lake_view.c, lake_results.c,
 * lake_write.c; the write lifecycle of a mount is test_uploads.c's).
 * Writes: an upload renamed before its commit lands under the new name; once
 * committed it cannot be renamed (the part file is named already); renames
 * leave their directory and take only names that hold data; a failed input
 * writes nothing; the rows written are read back through data.csv.
 * Snapshots: a file replaced after the listing a view works from fails that
 * view (it never mixes versions, nor reads new bytes with the old footer),
 * and the next open sees the new file. */
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "lake_fixture.h"
#include "lake.h"
#include "threads.h"

static char root[] = "/tmp/pq_lake_XXXXXX";
static char cache[] = "/tmp/pq_lake_cache_XXXXXX";

static pq_lake *open_lake_in(uint64_t metadata_ttl_ms, const char *cache_dir)
{
    return open_test_lake(root, cache_dir, metadata_ttl_ms);
}

static pq_lake *open_lake(uint64_t metadata_ttl_ms)
{
    return open_lake_in(metadata_ttl_ms, cache);
}

/* How many entries of DIR (under the lake root) start with PREFIX and end
 * with ".parquet"; the full path of one in *found when it is given. */
static int parts_found(const char *dir, const char *prefix, char *found, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) || len <= 8 || strcmp(e->d_name + len - 8, ".parquet")) continue;
        if (found) snprintf(found, cap, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static int parts_named(const char *dir, const char *prefix)
{
    return parts_found(dir, prefix, NULL, 0);
}

/* The whole of a view file, NUL-terminated; NULL on an error, which goes
 * to *failed when it is given (else to stderr). */
static char *read_view_or(pq_lake *l, const char *path, pq_error *failed)
{
    pq_error err;
    pq_error_clear(&err);
    pq_lake_handle *h;
    if (pq_lake_open_file(l, path, 0, &h, NULL, NULL, &err) != PQ_OK) {
        if (failed) *failed = err;
        else fprintf(stderr, "%s: %s\n", path, err.msg);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    for (;;) {
        size_t n;
        if (len + 4096 + 1 > cap) out = realloc(out, cap *= 2);
        if (pq_lake_read(h, out + len, 4096, len, &n, NULL, NULL, &err) != PQ_OK) {
            if (failed) *failed = err;
            else fprintf(stderr, "%s: %s\n", path, err.msg);
            free(out);
            out = NULL;
            break;
        }
        if (n == 0) break;
        len += n;
    }
    if (out) out[len] = 0;
    pq_lake_release(h);
    return out;
}

static char *read_view(pq_lake *l, const char *path)
{
    return read_view_or(l, path, NULL);
}

static pq_lake_upload *staged(pq_lake *l, const char *path, const char *text)
{
    pq_error err;
    pq_error_clear(&err);
    pq_lake_upload *u = NULL;
    if (pq_lake_create(l, path, &u, &err) != PQ_OK) {
        fprintf(stderr, "create %s: %s\n", path, err.msg);
        return NULL;
    }
    if (pq_lake_upload_write(u, text, strlen(text), 0, &err) != PQ_OK) {
        fprintf(stderr, "write %s: %s\n", path, err.msg);
        pq_lake_upload_free(u);
        return NULL;
    }
    return u;
}

static void test_rename_then_commit(pq_lake *l)
{
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_mkdir(l, "t", &err), PQ_OK);
    pq_lake_upload *u = staged(l, "t/.a.csv.XXXX", "id,name\n1,x\n2,y\n");
    CHECK(u != NULL);
    if (!u) return;
    /* Renames stay in the directory and take only names that hold data
     * (data.csv does: issue 23; schema.txt and plan.txt do not). */
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/dt=1/a.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/schema.txt", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/plan.txt", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/_a.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_STR(pq_lake_upload_path(u), "t/.a.csv.XXXX");
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/a.csv", &err), PQ_OK);
    CHECK_EQ_STR(pq_lake_upload_path(u), "t/a.csv");
    CHECK_EQ_INT(pq_lake_upload_commit(u, NULL, NULL, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "a-"), 1);
    CHECK_EQ_INT(parts_named("t", ".a"), 0);
    /* Committed: the part file has its name, a rename is refused and
     * changes nothing; a second commit returns the first outcome. */
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/b.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK(strstr(err.msg, "already written under t/a.csv") != NULL);
    CHECK_EQ_STR(pq_lake_upload_path(u), "t/a.csv");
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_upload_commit(u, NULL, NULL, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "a-"), 1);
    CHECK_EQ_INT(parts_named("t", "b-"), 0);
    pq_lake_upload_free(u);
    char *csv = read_view(l, "t/data.csv");
    CHECK_EQ_STR(csv, "id,name\n1,x\n2,y\n");
    free(csv);
}

static void test_bad_input_writes_nothing(pq_lake *l)
{
    pq_error err;
    pq_error_clear(&err);
    pq_lake_upload *u = staged(l, "t/bad.csv", "id,name\nzz,x\n");
    CHECK(u != NULL);
    if (!u) return;
    CHECK_EQ_INT(pq_lake_upload_commit(u, NULL, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK(strstr(err.msg, "bad.csv") != NULL);
    pq_lake_upload_free(u);
    CHECK_EQ_INT(parts_named("t", "bad"), 0);
    /* A file discarded before its commit (an unlinked temporary) writes
     * nothing either. */
    u = staged(l, "t/.gone.tmp", "id,name\n3,z\n");
    CHECK(u != NULL);
    pq_lake_upload_free(u);
    CHECK_EQ_INT(parts_named("t", "gone"), 0);
    CHECK_EQ_INT(parts_named("t", ".gone"), 0);
    char *csv = read_view(l, "t/data.csv");
    CHECK_EQ_STR(csv, "id,name\n1,x\n2,y\n");
    free(csv);
}

static bool write_csv(pq_lake *l, const char *path, const char *text)
{
    pq_error err;
    pq_error_clear(&err);
    pq_lake_upload *u = staged(l, path, text);
    bool ok = u && pq_lake_upload_commit(u, NULL, NULL, &err) == PQ_OK;
    if (u && !ok) fprintf(stderr, "commit %s: %s\n", path, err.msg);
    pq_lake_upload_free(u);
    return ok;
}

/* Renames the part file `from_prefix`* of from_dir over `to_prefix`* of
 * to_dir (a file replaced in the lake), then reads `view` twice: the first
 * read fails, naming the change; the second reads `want`. */
static void replace_then_read(pq_lake *l, const char *to_dir, const char *to_prefix, const char *from_dir,
                              const char *from_prefix, const char *view, const char *want)
{
    char old_part[600], new_part[600];
    CHECK_EQ_INT(parts_found(to_dir, to_prefix, old_part, sizeof old_part), 1);
    CHECK_EQ_INT(parts_found(from_dir, from_prefix, new_part, sizeof new_part), 1);
    CHECK_EQ_INT(rename(new_part, old_part), 0);
    pq_error failed;
    pq_error_clear(&failed);
    char *csv = read_view_or(l, view, &failed);
    CHECK(csv == NULL);
    CHECK(strstr(failed.msg, "changed since it was listed") != NULL);
    free(csv);
    csv = read_view(l, view);
    CHECK_EQ_STR(csv, want);
    free(csv);
}

static void test_replaced_file(void)
{
    /* Listings trusted for a minute: the second view works from the
     * listing the first one made. */
    pq_lake *l = open_lake(60000);
    CHECK(l != NULL);
    if (!l) return;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_mkdir(l, "s", &err), PQ_OK);
    CHECK_EQ_INT(pq_lake_mkdir(l, "other", &err), PQ_OK);
    CHECK(write_csv(l, "s/k=1/a.csv", "id,name\n1,old1\n2,old1\n"));
    CHECK(write_csv(l, "s/k=2/b.csv", "id,name\n3,old2\n4,old2\n"));
    CHECK(write_csv(l, "other/k=2/c.csv", "id,name\n5,new2\n6,new2\n7,new2\n"));
    char *csv = read_view(l, "s/data.csv");
    CHECK_EQ_STR(csv, "id,name,k\n1,old1,1\n2,old1,1\n3,old2,2\n4,old2,2\n");
    free(csv);
    /* k=2's part file replaced in the lake (another file renamed over it). */
    /* A new view still works from the listing: the file it names is gone,
     * so the view fails, saying so; it neither reads the new file with the
     * old footer nor serves new rows under the old listing.  The next open
     * lists again and reads the lake as it is now. */
    replace_then_read(l, "s/k=2", "b-", "other/k=2", "c-", "s/where=id > 0/data.csv",
                      "id,name,k\n1,old1,1\n2,old1,1\n5,new2,2\n6,new2,2\n7,new2,2\n");
    pq_lake_close(l);

    /* The table's schema file (its first, k=1's) replaced after a listing
     * that has not read its footer yet: that view fails, the next one
     * lists again and reads it (it failed until the TTL ran out). */
    l = open_lake(60000);
    CHECK(l != NULL);
    if (!l) return;
    CHECK_EQ_INT(pq_lake_mkdir(l, "other2", &err), PQ_OK);
    CHECK(write_csv(l, "other2/k=1/d.csv", "id,name\n8,new1\n"));
    pq_lake_attr a;
    CHECK_EQ_INT(pq_lake_stat(l, "s/k=1", &a, NULL, NULL, &err), PQ_OK);
    replace_then_read(l, "s/k=1", "a-", "other2/k=1", "d-", "s/data.csv",
                      "id,name,k\n8,new1,1\n5,new2,2\n6,new2,2\n7,new2,2\n");
    pq_lake_close(l);
}

/* A data.parquet whose result cannot start (its cache file cannot be
 * made) fails its lookup, and the reason is reported as data.csv's is. */
static void test_parquet_without_cache(void)
{
    char gone[] = "/tmp/pq_lake_gone_XXXXXX";
    if (!mkdtemp(gone)) return;
    pq_lake *l = open_lake_in(0, gone);
    CHECK(l != NULL);
    if (!l) return;
    CHECK_EQ_INT(rmdir(gone), 0);
    pq_lake_attr a;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_stat(l, "t/data.parquet", &a, NULL, NULL, &err), PQ_ERR);
    CHECK(strstr(err.msg, "cannot create a cache file") != NULL);
    char *errors = read_view(l, ".pqfs/errors");
    CHECK(errors && strstr(errors, "t/data.parquet") && strstr(errors, "cannot create a cache file"));
    free(errors);
    pq_lake_close(l);
}


/* ------------------------------------------------------------ no cap changes an answer */

/* A growing string (test text: aborts the test when memory runs out). */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void addf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        if (!t->s) abort();
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* Rows of a view's CSV (its lines after the header); -1 when it fails,
 * with the error's class in *cls when given. */
static int view_rows(pq_lake *l, const char *path, int *cls)
{
    pq_error failed;
    pq_error_clear(&failed);
    char *csv = read_view_or(l, path, &failed);
    if (!csv) {
        if (cls) *cls = failed.cls;
        else fprintf(stderr, "%.120s...: %s\n", path, failed.msg);
        return -1;
    }
    int lines = 0;
    for (const char *p = csv; *p; p++) lines += *p == '\n';
    free(csv);
    return lines - 1;
}

/* `c/where=id >= -1 AND ... AND id >= -(n-2) AND id = 1/data.csv`: n terms. */
static char *conjunction_view(int n_terms)
{
    text t = {0};
    addf(&t, "c/where=id >= -1");
    for (int k = 2; k < n_terms; k++) addf(&t, " AND id >= %d", -k);
    addf(&t, " AND id = 1/data.csv");
    return t.s;
}

/* Every term of a long AND counts (64 were kept, the rest dropped: 69
 * terms on 100 rows returned all 100), in the row filter and the ladder,
 * at the old cap and past it; also as stacked where= components. */
static void test_long_conjunctions(pq_lake *l)
{
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_mkdir(l, "c", &err), PQ_OK);
    text csv = {0};
    addf(&csv, "id,grp\n");
    for (int i = 1; i <= 100; i++) addf(&csv, "%d,g%d\n", i, i % 7);
    CHECK(write_csv(l, "c/a.csv", csv.s));
    free(csv.s);
    static const int terms[] = {2, 63, 64, 65, 69, 200, 1000};
    for (size_t i = 0; i < sizeof terms / sizeof *terms; i++) {
        char *view = conjunction_view(terms[i]);
        CHECK_EQ_INT(view_rows(l, view, NULL), 1);
        free(view);
    }
    /* Stacked components: 64 (the old cap) and 120 where= components, then
     * where=id = 1; past the path's component cap it refuses, never drops. */
    static const int stacked[] = {64, 120, 200};
    for (size_t i = 0; i < sizeof stacked / sizeof *stacked; i++) {
        text t = {0};
        addf(&t, "c");
        for (int k = 1; k <= stacked[i]; k++) addf(&t, "/where=id >= %d", -k);
        addf(&t, "/where=id = 1/data.csv");
        int cls = 0;
        CHECK_EQ_INT(view_rows(l, t.s, stacked[i] < 126 ? NULL : &cls), stacked[i] < 126 ? 1 : -1);
        if (stacked[i] >= 126) CHECK_EQ_INT(cls, PQ_E_USAGE);
        free(t.s);
    }
    /* Long IN lists and OR chains (the equality rungs take at most 256
     * values: past that they prove nothing, and the filter decides). */
    static const char *const lists[] = {"id IN (3, 5", "id NOT IN (3, 5"};
    static const int list_rows[] = {2, 98};
    for (size_t i = 0; i < 2; i++) {
        text t = {0};
        addf(&t, "c/where=%s", lists[i]);
        for (int k = 0; k < 300; k++) addf(&t, ", %d", 1000 + k);
        addf(&t, ")/data.csv");
        CHECK_EQ_INT(view_rows(l, t.s, NULL), list_rows[i]);
        free(t.s);
    }
    text t = {0};
    addf(&t, "c/where=id = 7 OR id = 9");
    for (int k = 0; k < 300; k++) addf(&t, " OR id = %d", 1000 + k);
    addf(&t, "/data.csv");
    CHECK_EQ_INT(view_rows(l, t.s, NULL), 2);
    free(t.s);
    /* A LIKE prefix longer than the pruner's 64-byte successor buffer. */
    t = (text){0};
    addf(&t, "c/where=grp LIKE 'g1");
    for (int k = 0; k < 100; k++) addf(&t, "x");
    addf(&t, "%%' OR grp = 'g2'/data.csv");
    CHECK_EQ_INT(view_rows(l, t.s, NULL), 15);
    free(t.s);
}

/* A table of n_cols integer columns c0.. with rows 0..2 (cell = row + col). */
static void write_wide(pq_lake *l, const char *table, int n_cols)
{
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_mkdir(l, table, &err), PQ_OK);
    text csv = {0};
    for (int c = 0; c < n_cols; c++) addf(&csv, c ? ",c%d" : "c%d", c);
    addf(&csv, "\n");
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < n_cols; c++) addf(&csv, c ? ",%d" : "%d", r + c);
        addf(&csv, "\n");
    }
    char path[256];
    snprintf(path, sizeof path, "%s/a.csv", table);
    CHECK(write_csv(l, path, csv.s));
    free(csv.s);
}

/* Predicates over many columns: more filter columns than the per-conjunct
 * masks hold (64) and than the scan's column list held (256: the columns
 * past it were never decoded), and select= of them all. */
static void test_wide_predicates(pq_lake *l)
{
    write_wide(l, "w", 300);
    static const int spans[] = {64, 65, 70, 256, 257, 300};
    for (size_t i = 0; i < sizeof spans / sizeof *spans; i++) {
        int n = spans[i];
        /* c_k >= k holds on every row; c_(n-1) = n only on row 1.  Then the
         * same terms ORed with a FALSE branch: one conjunct, not n. */
        for (int ored = 0; ored < 2; ored++) {
            text t = {0};
            addf(&t, "w/where=%sc0 >= 0", ored ? "(" : "");
            for (int c = 1; c < n - 1; c++) addf(&t, " AND c%d >= %d", c, c);
            addf(&t, " AND c%d = %d%s/data.csv", n - 1, n, ored ? ") OR c0 < 0" : "");
            CHECK_EQ_INT(view_rows(l, t.s, NULL), 1);
            free(t.s);
        }
    }
    text t = {0};
    addf(&t, "w/where=c299 = 300/select=c299");
    for (int c = 298; c >= 0; c--) addf(&t, ",c%d", c);
    addf(&t, "/data.csv");
    char *csv = read_view(l, t.s);
    CHECK(csv && !strncmp(csv, "c299,c298,", 10) && strstr(csv, "\n300,299,298,") && strstr(csv, ",3,2,1\n"));
    free(csv);
    free(t.s);
}

/* A value that decodes to a NUL byte is refused: a lookup and a write into
 * `k=a%00b` (written into k=a before) or `k=%00` (the empty string). */
static void test_nul_in_names(pq_lake *l)
{
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_mkdir(l, "n", &err), PQ_OK);
    CHECK(write_csv(l, "n/k=a/x.csv", "id\n1\n"));
    static const char *const bad[] = {"n/k=a%00b", "n/k=%00", "n/k%00x=a", "n/where=id = 1%00/data.csv",
                                      "n/k=a/id=1%00"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pq_lake_attr a;
        pq_error_clear(&err);
        CHECK_EQ_INT(pq_lake_stat(l, bad[i], &a, NULL, NULL, &err), PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_USAGE);
        CHECK(strstr(err.msg, "NUL") != NULL);
    }
    pq_lake_upload *u = NULL;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_create(l, "n/k=a%00b/y.csv", &u, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_create(l, "n/k=%00/y.csv", &u, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK_EQ_INT(parts_named("n/k=a", "x-"), 1);
    CHECK_EQ_INT(parts_named("n/k=a", "y-"), 0);
    CHECK_EQ_INT(parts_named("n/k=", "y-"), 0);
    /* A directory of the lake whose name holds %00 is not listed. */
    char path[600];
    snprintf(path, sizeof path, "%s/n/k=c%%00d", root);
    CHECK_EQ_INT(mkdir(path, 0755), 0);
    char *csv = read_view(l, "n/data.csv");
    CHECK(csv != NULL);
    free(csv);
}

/* pq_cred_allows: the Unix rules (owner bits for the owner only, group bits
 * for a member by primary or supplementary group, other bits for the rest,
 * root always); pq_lake_check_write on real and to-be-made directories;
 * /.pqfs/errors naming lake paths. */
/* chmod, then past the millisecond the lake's listings (TTL 0) are from. */
static int chmod_listed(const char *path, mode_t mode)
{
    int rc = chmod(path, mode);
    usleep(2000);
    return rc;
}

static void test_permissions(pq_lake *l)
{
    const uint32_t sup[] = {9, 7}, other_sup[] = {9};
    pq_cred owner = {.uid = 5, .gid = 7}, member = {.uid = 6, .gid = 7}, by_sup = {.uid = 6, .gid = 8, sup, 2};
    pq_cred not_member = {.uid = 6, .gid = 8, other_sup, 1}, rootc = {.uid = 0, .gid = 0};
    CHECK(pq_cred_allows(&owner, 0700, 5, 7, 3));
    CHECK(!pq_cred_allows(&owner, 0070, 5, 7, 3));      /* the owner gets the owner bits, not the group's */
    CHECK(pq_cred_allows(&member, 0070, 5, 7, 3));
    CHECK(!pq_cred_allows(&member, 0707, 5, 7, 3));     /* a member gets the group bits, not other's */
    CHECK(pq_cred_allows(&by_sup, 0070, 5, 7, 3));
    CHECK(!pq_cred_allows(&not_member, 0070, 5, 7, 3));
    CHECK(pq_cred_allows(&not_member, 0003, 5, 7, 3));
    CHECK(!pq_cred_allows(&not_member, 0770, 5, 7, 1));
    CHECK(pq_cred_allows(&rootc, 0, 5, 7, 7));
    CHECK(!pq_cred_allows(&owner, 0600, 5, 7, 3));      /* write without execute: no */
    CHECK(pq_cred_allows(&owner, 0300, 5, 7, 3));
    CHECK(!pq_cred_allows(&owner, 0500, 5, 7, 2));

    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_lake_mkdir(l, "pt", &err), PQ_OK);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/pt", root);
    /* Never the directory's owner, nor root: the group or other bits decide. */
    uint32_t me_gid = (uint32_t)getegid(), groups[] = {me_gid};
    pq_cred in_group = {.uid = 4243, .gid = me_gid}, in_sup = {.uid = 4243, .gid = 4244, groups, 1};
    pq_cred stranger = {.uid = 4243, .gid = 4244};
    CHECK_EQ_INT(chmod_listed(dir, 0770), 0);
    CHECK_EQ_INT(pq_lake_check_write(l, "pt", &in_group, &err), PQ_OK);
    CHECK_EQ_INT(pq_lake_check_write(l, "pt/k=1", &in_sup, &err), PQ_OK); /* a directory to be made in pt */
    CHECK_EQ_INT(pq_lake_check_write(l, "pt", &stranger, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_ACCESS);
    CHECK_EQ_INT(chmod_listed(dir, 0750), 0);
    CHECK_EQ_INT(pq_lake_check_write(l, "pt/k=1", &in_group, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_ACCESS);
    pq_lake_upload *u = NULL;
    CHECK_EQ_INT(pq_lake_create_as(l, "pt/k=1/a.csv", &in_group, &u, &err), PQ_ERR);
    CHECK(u == NULL);
    CHECK_EQ_INT(chmod_listed(dir, 0773), 0);
    CHECK_EQ_INT(pq_lake_check_write(l, "pt", &stranger, &err), PQ_OK);
    CHECK_EQ_INT(chmod_listed(dir, 0776), 0);                  /* other may write but not enter */
    CHECK_EQ_INT(pq_lake_check_write(l, "pt", &stranger, &err), PQ_ERR);
    CHECK_EQ_INT(pq_lake_check_write(l, "pt", NULL, &err), PQ_OK); /* unchecked: a single-user mount */
    CHECK_EQ_INT(chmod_listed(dir, 0755), 0);
    /* A new table needs the lake root's write permission; nothing is made. */
    CHECK_EQ_INT(chmod_listed(root, 0755), 0);
    CHECK_EQ_INT(pq_lake_mkdir_as(l, "pt2", &in_group, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_ACCESS);
    snprintf(dir, sizeof dir, "%s/pt2", root);
    CHECK(access(dir, F_OK) != 0);
    CHECK_EQ_INT(chmod_listed(root, 0700), 0);

    /* Messages in /.pqfs/errors: lake paths, never the daemon's own. */
    pq_error e;
    pq_fail(&e, PQ_E_IO, "%s/pt/x.parquet: boom in %s/stage-1 (%s)", root, cache, root);
    pq_lake_report(l, &e);
    char *shown = read_view(l, ".pqfs/errors");
    CHECK(shown != NULL);
    if (shown) {
        CHECK(strstr(shown, " pt/x.parquet: boom in cache_dir/stage-1 (/)") != NULL);
        CHECK(strstr(shown, root) == NULL);
        free(shown);
    }
}

static int rm_tree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    return system(cmd);
}

/* ------------------------------------------------------------ memory */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED_ALLOCATOR 1
#endif
#endif
#ifndef SANITIZED_ALLOCATOR
#define SANITIZED_ALLOCATOR 0
#endif

/* Lines of /proc/self/maps naming a file under the cache directory. */
static int cache_mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, cache) != NULL;
    fclose(f);
    return n;
}

/* The value of a /.pqfs/stats line (-1: not there). */
static long long stat_value(pq_lake *l, const char *name)
{
    char *stats = read_view(l, ".pqfs/stats");
    long long v = -1;
    char key[128];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *at = stats ? strstr(stats, key) : NULL;
    if (at) v = atoll(at + strlen(key));
    free(stats);
    return v;
}

/* 40 different views read once each: their kept results hold no thread
 * stack (each producer is joined when its last reader lets it go; before,
 * every kept result's ended thread kept its stack mapped until eviction).
 * The scan workers' threads parked in the pool are not the results': they
 * are counted apart (at most 2 per core, test_threads). */
static void test_kept_results_hold_no_stack(pq_lake *l)
{
    pq_pool_stats pool_before, pool_after;
    pq_pool_get_stats(&pool_before);
    int before = check_stack_mappings() - pool_before.idle;
    CHECK(before >= 0);
    for (int k = 0; k < 40; k++) {
        char view[64];
        snprintf(view, sizeof view, "c/where=id > %d/data.csv", k);
        CHECK_EQ_INT(view_rows(l, view, NULL), 100 - k);
    }
    pq_pool_get_stats(&pool_after);
    CHECK(pool_after.idle <= 2 * pq_default_threads());
    int after = check_stack_mappings() - pool_after.idle;
    if (after - before > 6) fprintf(stderr, "40 kept results: %d more thread stacks\n", after - before);
    CHECK(after - before <= 6); /* glibc reuses up to 40 MiB of ended threads' stacks */
}

/* A kept result nobody reads is not mapped (its pages were counted in the
 * daemon's RSS until it was evicted: the soak's RssFile grew with the result
 * cache); read again from the cache it is mapped anew, the same bytes.  And
 * /.pqfs/stats shows the metadata caches against their budgets. */
static void test_unread_results_unmapped(pq_lake *l)
{
    char *first = read_view(l, "c/select=id/data.csv");
    CHECK(first != NULL);
    if (!first) return;
    for (int round = 0; round < 2; round++) {
        pq_error err;
        pq_error_clear(&err);
        pq_lake_handle *h;
        CHECK_EQ_INT(pq_lake_open_file(l, "c/select=id/data.csv", 0, &h, NULL, NULL, &err), PQ_OK);
        if (!h) break;
        const char *data = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pq_lake_peek(h, 0, strlen(first), &data, &n, NULL, NULL, &err), PQ_OK);
        CHECK_EQ_INT(n, strlen(first));
        CHECK(data && !memcmp(data, first, n)); /* in place, from the mapping */
        CHECK(cache_mappings() >= 1);
        pq_lake_release(h);
        CHECK_EQ_INT(cache_mappings(), 0);
    }
    free(first);
    long long footers = stat_value(l, "footer_cache_bytes");
    CHECK(footers > 0);
    CHECK(footers <= stat_value(l, "footer_cache_budget"));
    CHECK(stat_value(l, "listing_cache_bytes") >= 0);
    /* glibc's count; a sanitizer's allocator is not glibc's (its heap reads 0) */
    CHECK(stat_value(l, "heap_in_use_bytes") > (SANITIZED_ALLOCATOR ? -1 : 0));
    CHECK(stat_value(l, "heap_free_bytes") >= 0);
}

int main(void)
{
    if (!mkdtemp(root) || !mkdtemp(cache)) {
        perror("mkdtemp");
        return 1;
    }
    pq_lake *l = open_lake(0);
    CHECK(l != NULL);
    if (l) {
        test_rename_then_commit(l);
        test_bad_input_writes_nothing(l);
        test_long_conjunctions(l);
        test_wide_predicates(l);
        test_unread_results_unmapped(l);
        test_kept_results_hold_no_stack(l);
        test_nul_in_names(l);
        test_permissions(l);
        pq_lake_close(l);
    }
    test_replaced_file();
    test_parquet_without_cache();
    (void)rm_tree(root);
    (void)rm_tree(cache);
    return check_report();
}
