/* The lake without FUSE (engine/lake.c, lake_write.c).
 * Writes: an upload renamed before its commit lands under the new name; once
 * committed it cannot be renamed (the part file is named already); renames
 * leave their directory and take only names that hold data; a failed input
 * writes nothing; the rows written are read back through data.csv.
 * Snapshots: a file replaced after the listing a view works from fails that
 * view (it never mixes versions, nor reads new bytes with the old footer),
 * and the next open sees the new file. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "lake.h"

static char root[] = "/tmp/pq_lake_XXXXXX";
static char cache[] = "/tmp/pq_lake_cache_XXXXXX";

static pq_lake *open_lake_in(uint64_t metadata_ttl_ms, const char *cache_dir)
{
    pq_error err;
    pq_error_clear(&err);
    pq_store *st = NULL;
    if (pq_store_local_new(root, &st, &err) != PQ_OK) {
        fprintf(stderr, "store: %s\n", err.msg);
        return NULL;
    }
    pq_lake_opts o = {0};
    o.store = st;
    o.metadata_ttl_ms = metadata_ttl_ms;
    o.threads = 2;
    o.cache_dir = cache_dir;
    o.cache_size = 64u << 20;
    o.log_level = PQ_LOG_ERROR;
    pq_lake *l = NULL;
    if (pq_lake_open(&o, &l, &err) != PQ_OK) {
        fprintf(stderr, "lake: %s\n", err.msg);
        return NULL;
    }
    return l;
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
    /* Renames stay in the directory and take only names that hold data. */
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/dt=1/a.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(pq_lake_upload_rename(u, "t/data.csv", &err), PQ_ERR);
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

static int rm_tree(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    return system(cmd);
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
        pq_lake_close(l);
    }
    test_replaced_file();
    test_parquet_without_cache();
    (void)rm_tree(root);
    (void)rm_tree(cache);
    return check_report();
}
