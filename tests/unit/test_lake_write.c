/* The lake's write API without FUSE (engine/lake_write.c): an upload
 * renamed before its commit lands under the new name; once committed it
 * cannot be renamed (the part file is named already); renames leave their
 * directory and take only names that hold data; a failed input writes
 * nothing; the rows written are read back through data.csv. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "lake.h"

static char root[] = "/tmp/pq_lake_write_XXXXXX";
static char cache[] = "/tmp/pq_lake_write_cache_XXXXXX";

static pq_lake *open_lake(void)
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
    o.metadata_ttl_ms = 0;
    o.threads = 2;
    o.cache_dir = cache;
    o.cache_size = 64u << 20;
    o.log_level = PQ_LOG_ERROR;
    pq_lake *l = NULL;
    if (pq_lake_open(&o, &l, &err) != PQ_OK) {
        fprintf(stderr, "lake: %s\n", err.msg);
        return NULL;
    }
    return l;
}

/* How many entries of DIR (under the lake root) start with PREFIX and end
 * with ".parquet". */
static int parts_named(const char *dir, const char *prefix)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && len > 8 && !strcmp(e->d_name + len - 8, ".parquet")) n++;
    }
    closedir(d);
    return n;
}

/* The whole of a view file, NUL-terminated (NULL on an error). */
static char *read_view(pq_lake *l, const char *path)
{
    pq_error err;
    pq_error_clear(&err);
    pq_lake_handle *h;
    if (pq_lake_open_file(l, path, 0, &h, NULL, NULL, &err) != PQ_OK) {
        fprintf(stderr, "%s: %s\n", path, err.msg);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    for (;;) {
        size_t n;
        if (len + 4096 + 1 > cap) out = realloc(out, cap *= 2);
        if (pq_lake_read(h, out + len, 4096, len, &n, NULL, NULL, &err) != PQ_OK) {
            fprintf(stderr, "%s: %s\n", path, err.msg);
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
    pq_lake *l = open_lake();
    CHECK(l != NULL);
    if (l) {
        test_rename_then_commit(l);
        test_bad_input_writes_nothing(l);
        pq_lake_close(l);
    }
    (void)rm_tree(root);
    (void)rm_tree(cache);
    return check_report();
}
