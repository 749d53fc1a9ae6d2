/* Table discovery over real directory trees: file order, partition values
 * (percent-decoded, NULL), inferred and declared types, ignored names, paths
 * that do not fit the layout, listing-time pruning (checked with a store
 * wrapper that records every listing), the table-root test, depth bounds,
 * listing failures, and percent encoding round trips.  All of it twice: as
 * on a local disk, and as on a remote store (parallel_requests > 1), where
 * sibling directories are listed ahead, several at a time; the tables, errors
 * and listings must be the same. */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cache.h"
#include "table.h"

/* ------------------------------------------------------------ helpers --- */

static char g_tmp[64];

static void make_dirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) fprintf(stderr, "mkdir %s failed\n", buf);
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) fprintf(stderr, "mkdir %s failed\n", buf);
}

/* Creates g_tmp/rel with a few bytes (or none), making parent directories. */
static void put_file(const char *rel, bool empty)
{
    char path[4096 + sizeof g_tmp];
    snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    make_dirs(path);
    *slash = '/';
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    if (!empty) fputs("PAR1", f);
    fclose(f);
}

static void put_files(const char *const *rels)
{
    for (; *rels; rels++) put_file(*rels, false);
}

static void put_dir(const char *rel)
{
    char path[4096 + sizeof g_tmp];
    snprintf(path, sizeof path, "%s/%s", g_tmp, rel);
    make_dirs(path);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* parallel_requests of the stores open_store makes, and the most listings
 * seen running at once (each takes 2 ms then, to overlap). */
static int g_parallel_requests;
static int g_inflight, g_max_inflight;
static pthread_mutex_t g_list_mu = PTHREAD_MUTEX_INITIALIZER;

/* A store that forwards to the local store and records every listing. */
typedef struct counting_store {
    pq_store base;
    pq_store *inner;
    int n_lists;
    char listed[256][512];
    const char *fail_dir;      /* listing this directory fails */
    int delay_ms;              /* each listing takes this long (a slow link) */
} counting_store;

static counting_store *as_counting(pq_store *s)
{
    return (counting_store *)s;
}

static int cs_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    pq_store *in = as_counting(s)->inner;
    return in->ops->open(in, path, out, err);
}

static int cs_stat(pq_store *s, const char *path, pq_stat *out, pq_error *err)
{
    pq_store *in = as_counting(s)->inner;
    return in->ops->stat(in, path, out, err);
}

static int cs_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    counting_store *cs = as_counting(s);
    pthread_mutex_lock(&g_list_mu);
    if (cs->n_lists < 256) snprintf(cs->listed[cs->n_lists], sizeof cs->listed[0], "%s", dir);
    cs->n_lists++;
    if (++g_inflight > g_max_inflight) g_max_inflight = g_inflight;
    pthread_mutex_unlock(&g_list_mu);
    if (g_parallel_requests > 1) usleep(2000);
    if (cs->delay_ms) usleep((useconds_t)cs->delay_ms * 1000);
    int rc = cs->fail_dir && strcmp(cs->fail_dir, dir) == 0
                 ? pq_fail(err, PQ_E_IO, "injected listing failure")
                 : cs->inner->ops->list(cs->inner, dir, cb, ctx, err);
    pthread_mutex_lock(&g_list_mu);
    g_inflight--;
    pthread_mutex_unlock(&g_list_mu);
    return rc;
}

static int cs_create(pq_store *s, const char *path, pq_upload **out, pq_error *err)
{
    pq_store *in = as_counting(s)->inner;
    return in->ops->create(in, path, out, err);
}

static int cs_mkdir(pq_store *s, const char *path, pq_error *err)
{
    pq_store *in = as_counting(s)->inner;
    return in->ops->mkdir(in, path, err);
}

static void cs_destroy(pq_store *s)
{
    pq_store_destroy(as_counting(s)->inner);
    free(s);
}

static const pq_store_ops counting_ops = {cs_open, cs_stat, cs_list, cs_create, cs_mkdir,
                                          cs_destroy};

/* A counting store over g_tmp/sub (sub may be ""). */
static counting_store *open_store(const char *sub)
{
    char root[4096];
    snprintf(root, sizeof root, "%s%s%s", g_tmp, sub[0] ? "/" : "", sub);
    pq_error err = {0};
    pq_store *inner = NULL;
    if (pq_store_local_new(root, &inner, &err) != PQ_OK) {
        fprintf(stderr, "local store %s: %s\n", root, err.msg);
        return NULL;
    }
    counting_store *cs = calloc(1, sizeof *cs);
    cs->base.ops = &counting_ops;
    cs->base.root = inner->root;
    cs->base.parallel_requests = g_parallel_requests;
    cs->inner = inner;
    return cs;
}

static bool was_listed(const counting_store *cs, const char *dir)
{
    for (int i = 0; i < cs->n_lists && i < 256; i++)
        if (strcmp(cs->listed[i], dir) == 0) return true;
    return false;
}

static bool listed_twice(const counting_store *cs)
{
    for (int i = 0; i < cs->n_lists && i < 256; i++)
        for (int j = i + 1; j < cs->n_lists && j < 256; j++)
            if (strcmp(cs->listed[i], cs->listed[j]) == 0) return true;
    return false;
}

/* Discovers the table at `root` of a fresh store over g_tmp/sub. */
static pq_table *discover(const char *sub, const char *root, const pq_table_opts *opts,
                          counting_store **store_out)
{
    counting_store *cs = open_store(sub);
    if (!cs) return NULL;
    pq_error err = {0};
    pq_table *t = NULL;
    if (pq_table_discover(&cs->base, root, opts, &t, &err) != PQ_OK)
        fprintf(stderr, "discover %s/%s: %s\n", sub, root, err.msg);
    CHECK(!listed_twice(cs));
    if (store_out)
        *store_out = cs;
    else
        pq_store_destroy(&cs->base);
    return t;
}

static bool contains(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

#define CHECK_NULL_VALUE(v) CHECK((v) == NULL)

/* -------------------------------------------------------------- tests --- */

static void test_order_and_ignored(void)
{
    static const char *const files[] = {
        "t1/dt=2024-01-02/region=eu/part-1.parquet",
        "t1/dt=2024-01-01/region=us/b.parquet",
        "t1/dt=2024-01-01/region=eu/c.parquet",
        "t1/dt=2024-01-01/region=eu/a.parquet",
        "t1/dt=2024-01-01/region=eu/D.PARQUET",
        "t1/dt=2024-01-01/region=eu/_SUCCESS",
        "t1/dt=2024-01-01/region=eu/.a.parquet.crc",
        "t1/dt=2024-01-01/region=eu/_meta.parquet",
        "t1/dt=2024-01-01/region=eu/notes.txt",
        "t1/dt=2024-01-01/region=eu/x.parquet.tmp",
        "t1/_temporary/dt=2024-01-03/region=eu/z.parquet",
        "t1/.hive-staging/dt=2024-01-03/region=eu/z.parquet",
        "t1/dt=2024-01-01/misc/inner.parquet",
        "t1/_SUCCESS",
        NULL,
    };
    put_files(files);
    put_file("t1/dt=2024-01-02/region=eu/empty.parquet", true);
    put_dir("t1/dt=2024-01-01/region=eu/sub.parquet"); /* a directory named like a file */

    counting_store *cs = NULL;
    pq_table *t = discover("", "t1", NULL, &cs);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_STR(t->root, "t1");
    CHECK_EQ_INT(t->n_parts, 2);
    CHECK_EQ_STR(t->part_names[0], "dt");
    CHECK_EQ_STR(t->part_names[1], "region");
    CHECK_EQ_INT(t->part_types[0], PQ_PART_DATE);
    CHECK_EQ_INT(t->part_types[1], PQ_PART_STRING);
    CHECK_EQ_INT(t->n_files, 5);
    CHECK_EQ_INT(t->n_ignored, 0);
    if (t->n_files == 5) {
        /* 'D' (0x44) sorts before 'a' (0x61): bytewise, not case-folded. */
        CHECK_EQ_STR(t->files[0].path, "t1/dt=2024-01-01/region=eu/D.PARQUET");
        CHECK_EQ_STR(t->files[1].path, "t1/dt=2024-01-01/region=eu/a.parquet");
        CHECK_EQ_STR(t->files[2].path, "t1/dt=2024-01-01/region=eu/c.parquet");
        CHECK_EQ_STR(t->files[3].path, "t1/dt=2024-01-01/region=us/b.parquet");
        CHECK_EQ_STR(t->files[4].path, "t1/dt=2024-01-02/region=eu/part-1.parquet");
        CHECK_EQ_STR(t->files[3].values[0], "2024-01-01");
        CHECK_EQ_STR(t->files[3].values[1], "us");
        CHECK_EQ_STR(t->files[4].values[0], "2024-01-02");
        CHECK_EQ_INT(t->files[0].st.size, 4);
        CHECK(!t->files[0].st.is_dir);
        CHECK(t->files[0].st.mtime_ns > 0);
    }
    /* root, two dt directories, three region directories; the hidden,
     * underscore and plain directories were never listed. */
    CHECK_EQ_INT(cs->n_lists, 6);
    CHECK(!was_listed(cs, "t1/_temporary"));
    CHECK(!was_listed(cs, "t1/.hive-staging"));
    CHECK(!was_listed(cs, "t1/dt=2024-01-01/misc"));
    CHECK(!was_listed(cs, "t1/dt=2024-01-01/region=eu/sub.parquet"));
    pq_table_free(t);
    pq_store_destroy(&cs->base);

    /* The same table with a trailing slash on its root, and through a store
     * rooted at the table itself. */
    t = discover("", "t1/", NULL, NULL);
    CHECK(t && t->n_files == 5);
    if (t) CHECK_EQ_STR(t->root, "t1");
    pq_table_free(t);
    t = discover("t1", "", NULL, NULL);
    CHECK(t && t->n_files == 5);
    if (t && t->n_files == 5) {
        CHECK_EQ_STR(t->root, "");
        CHECK_EQ_STR(t->files[0].path, "dt=2024-01-01/region=eu/D.PARQUET");
    }
    pq_table_free(t);
}

static void test_unpartitioned(void)
{
    static const char *const files[] = {"t2/b.parquet", "t2/a.parquet", "t2/_c.parquet", NULL};
    put_files(files);
    pq_table *t = discover("", "t2", NULL, NULL);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_INT(t->n_parts, 0);
    CHECK_EQ_INT(t->n_files, 2);
    if (t->n_files == 2) {
        CHECK_EQ_STR(t->files[0].path, "t2/a.parquet");
        CHECK_EQ_STR(t->files[1].path, "t2/b.parquet");
        CHECK(t->files[0].values == NULL);
    }
    pq_table_free(t);

    /* An empty table: no layout, no files. */
    put_dir("t2e");
    t = discover("", "t2e", NULL, NULL);
    CHECK(t && t->n_files == 0 && t->n_parts == 0 && t->n_ignored == 0);
    pq_table_free(t);
}

static void test_raw_name_order(void)
{
    /* Raw names order the directories: "k=%41" ('%' 0x25) < "k=B" < "k=a";
     * "n=10" < "n=9" (bytewise, not numeric). */
    static const char *const files[] = {
        "t3/k=a/n=9/f.parquet", "t3/k=B/n=10/f.parquet", "t3/k=%41/n=9/f.parquet",
        "t3/k=a/n=10/f.parquet", NULL,
    };
    put_files(files);
    pq_table *t = discover("", "t3", NULL, NULL);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_INT(t->n_files, 4);
    CHECK_EQ_INT(t->part_types[0], PQ_PART_STRING);
    CHECK_EQ_INT(t->part_types[1], PQ_PART_INT64);
    if (t->n_files == 4) {
        CHECK_EQ_STR(t->files[0].path, "t3/k=%41/n=9/f.parquet");
        CHECK_EQ_STR(t->files[0].values[0], "A");
        CHECK_EQ_STR(t->files[1].values[0], "B");
        CHECK_EQ_STR(t->files[2].path, "t3/k=a/n=10/f.parquet");
        CHECK_EQ_STR(t->files[3].path, "t3/k=a/n=9/f.parquet");
        CHECK_EQ_STR(t->files[3].values[1], "9");
    }
    pq_table_free(t);
}

static void test_values(void)
{
    static const char *const files[] = {
        "t4/p=a%2Fb/f.parquet",                  /* 0: a/b */
        "t4/p=x%3Dy=z/f.parquet",                /* 4: raw '=' after the first stays */
        "t4/p=bad%zz/f.parquet",                 /* 1: malformed: raw */
        "t4/p=trail%4/f.parquet",                /* 3: truncated escape: raw */
        "t4/p=nul%00x/f.parquet",                /* 2: would decode to NUL: raw */
        "t4/p=__HIVE_DEFAULT_PARTITION__/f.parquet",
        "t4/p=/f.parquet",                       /* empty value */
        "t4/p=%C3%A9t%c3%a9/f.parquet",          /* UTF-8, either hex case */
        NULL,
    };
    put_files(files);
    pq_table *t = discover("", "t4", NULL, NULL);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_EQ_INT(t->n_files, 8);
    CHECK_EQ_INT(t->part_types[0], PQ_PART_STRING);
    if (t->n_files == 8) {
        /* Raw order: "p=" < "p=%C3.." < "p=__HIVE" < "p=a%2F" < "p=bad" < "p=nul" < "p=trail" < "p=x" */
        CHECK_EQ_STR(t->files[0].values[0], "");
        CHECK_EQ_STR(t->files[1].values[0], "\xc3\xa9t\xc3\xa9");
        CHECK_NULL_VALUE(t->files[2].values[0]);
        CHECK_EQ_STR(t->files[3].values[0], "a/b");
        CHECK_EQ_STR(t->files[4].values[0], "bad%zz");
        CHECK_EQ_STR(t->files[5].values[0], "nul%00x");
        CHECK_EQ_STR(t->files[6].values[0], "trail%4");
        CHECK_EQ_STR(t->files[7].values[0], "x=y=z");
        CHECK_EQ_STR(t->files[2].path, "t4/p=__HIVE_DEFAULT_PARTITION__/f.parquet");
    }
    pq_table_free(t);

    /* Keys are decoded too. */
    static const char *const keyed[] = {"t5/odd%20key=1/f.parquet", NULL};
    put_files(keyed);
    t = discover("", "t5", NULL, NULL);
    CHECK(t && t->n_parts == 1);
    if (t && t->n_parts == 1) {
        CHECK_EQ_STR(t->part_names[0], "odd key");
        CHECK_EQ_INT(t->part_types[0], PQ_PART_INT64);
    }
    pq_table_free(t);
}

/* Builds g_tmp/name with one file per value under key k, returns the
 * inferred type (or -1). */
static int inferred_type_of(const char *name, const char *const *values)
{
    for (int i = 0; values[i]; i++) {
        char rel[512];
        snprintf(rel, sizeof rel, "%s/k=%s/f.parquet", name, values[i]);
        put_file(rel, false);
    }
    pq_table *t = discover("", name, NULL, NULL);
    int type = t && t->n_parts == 1 ? (int)t->part_types[0] : -1;
    pq_table_free(t);
    return type;
}

static void test_inferred_types(void)
{
    static const char *const ints[] = {"-5", "12", "0", "007", "__HIVE_DEFAULT_PARTITION__", NULL};
    static const char *const int_edges[] = {"9223372036854775807", "-9223372036854775808", NULL};
    static const char *const too_big[] = {"9223372036854775808", "1", NULL};
    static const char *const plus[] = {"+1", "2", NULL};
    static const char *const dates[] = {"2024-02-29", "1999-12-31", "__HIVE_DEFAULT_PARTITION__", NULL};
    static const char *const bad_date[] = {"2023-02-29", "2024-01-01", NULL};
    static const char *const mixed[] = {"2024-01-01", "17", NULL};
    static const char *const nulls[] = {"__HIVE_DEFAULT_PARTITION__", NULL};
    static const char *const strings[] = {"eu", "us", NULL};
    static const char *const short_date[] = {"2024-1-01", NULL};
    CHECK_EQ_INT(inferred_type_of("ty_int", ints), PQ_PART_INT64);
    CHECK_EQ_INT(inferred_type_of("ty_int_edges", int_edges), PQ_PART_INT64);
    CHECK_EQ_INT(inferred_type_of("ty_too_big", too_big), PQ_PART_STRING);
    CHECK_EQ_INT(inferred_type_of("ty_plus", plus), PQ_PART_STRING);
    CHECK_EQ_INT(inferred_type_of("ty_date", dates), PQ_PART_DATE);
    CHECK_EQ_INT(inferred_type_of("ty_bad_date", bad_date), PQ_PART_STRING);
    CHECK_EQ_INT(inferred_type_of("ty_mixed", mixed), PQ_PART_STRING);
    CHECK_EQ_INT(inferred_type_of("ty_nulls", nulls), PQ_PART_STRING);
    CHECK_EQ_INT(inferred_type_of("ty_strings", strings), PQ_PART_STRING);
    CHECK_EQ_INT(inferred_type_of("ty_short_date", short_date), PQ_PART_STRING);

    CHECK(pq_part_value_is_int64("-0"));
    CHECK(!pq_part_value_is_int64("-"));
    CHECK(!pq_part_value_is_int64(""));
    CHECK(!pq_part_value_is_int64("1e3"));
    CHECK(!pq_part_value_is_int64(" 1"));
    CHECK(!pq_part_value_is_int64("-9223372036854775809"));
    CHECK(pq_part_value_is_date("2000-02-29"));
    CHECK(!pq_part_value_is_date("1900-02-29"));
    CHECK(pq_part_value_is_date("0001-01-01"));
    CHECK(!pq_part_value_is_date("2024-04-31"));
    CHECK(!pq_part_value_is_date("2024-13-01"));
    CHECK(!pq_part_value_is_date("2024-00-10"));
    CHECK(!pq_part_value_is_date("2024-01-00"));
    CHECK(!pq_part_value_is_date("2024-01-01 "));
    CHECK(!pq_part_value_is_date("2024/01/01"));
}

static void test_declared_types(void)
{
    static const char *const files[] = {
        "t6/dt=2024-01-01/n=1/f.parquet", "t6/dt=2024-01-02/n=abc/f.parquet",
        "t6/dt=2024-01-02/n=2/f.parquet", "t6/dt=2024-01-02/n=__HIVE_DEFAULT_PARTITION__/f.parquet",
        NULL,
    };
    put_files(files);
    /* dt declared a string (inference would say date); n declared int64:
     * the n=abc directory does not fit and is ignored without being listed. */
    pq_part_decl decl[] = {{"dt", PQ_PART_STRING}, {"n", PQ_PART_INT64}};
    pq_table_opts opts = {.declared = decl, .n_declared = 2};
    counting_store *cs = NULL;
    pq_table *t = discover("", "t6", &opts, &cs);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(t->part_types[0], PQ_PART_STRING);
        CHECK_EQ_INT(t->part_types[1], PQ_PART_INT64);
        CHECK_EQ_INT(t->n_files, 3);
        CHECK_EQ_INT(t->n_ignored, 1);
        CHECK(!was_listed(cs, "t6/dt=2024-01-02/n=abc"));
        if (t->n_files == 3) {
            CHECK_EQ_STR(t->files[1].path, "t6/dt=2024-01-02/n=2/f.parquet");
            CHECK_NULL_VALUE(t->files[2].values[1]);
        }
    }
    pq_table_free(t);
    pq_store_destroy(&cs->base);

    /* Declared only in part: the other column is inferred (n is a string
     * here because of n=abc). */
    pq_part_decl only_dt[] = {{"dt", PQ_PART_INFER}};
    opts = (pq_table_opts){.declared = only_dt, .n_declared = 1};
    t = discover("", "t6", &opts, NULL);
    CHECK(t && t->n_files == 4);
    if (t) {
        CHECK_EQ_INT(t->part_types[0], PQ_PART_DATE);
        CHECK_EQ_INT(t->part_types[1], PQ_PART_STRING);
    }
    pq_table_free(t);

    /* A declared name not in the layout: an error naming it. */
    pq_part_decl stray[] = {{"dt", PQ_PART_DATE}, {"region", PQ_PART_STRING}};
    opts = (pq_table_opts){.declared = stray, .n_declared = 2};
    counting_store *store = open_store("");
    pq_error err = {0};
    t = (pq_table *)1;
    CHECK_EQ_INT(pq_table_discover(&store->base, "t6", &opts, &t, &err), PQ_ERR);
    CHECK(t == NULL);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK(contains(err.msg, "'region'"));
    CHECK(contains(err.msg, "dt, n"));

    /* A table with no file yet: the declared columns are the layout. */
    put_dir("t6new/dt=2024-05-01");
    CHECK_EQ_INT(pq_table_discover(&store->base, "t6new", &opts, &t, &err), PQ_OK);
    CHECK(t && t->n_files == 0 && t->n_parts == 2);
    if (t && t->n_parts == 2) {
        CHECK_EQ_STR(t->part_names[0], "dt");
        CHECK_EQ_STR(t->part_names[1], "region");
        CHECK_EQ_INT(t->part_types[0], PQ_PART_DATE);
        CHECK_EQ_INT(t->part_types[1], PQ_PART_STRING);
    }
    pq_table_free(t);
    pq_store_destroy(&store->base);
}

static void test_layout_mismatch(void)
{
    /* Subdirectories come first: dt=1/region=eu/y.parquet fixes the layout
     * (dt, region); x.parquet beside it, z.parquet, top.parquet and the
     * other=5 directory do not fit. */
    static const char *const files[] = {
        "t7/dt=1/x.parquet", "t7/dt=1/region=eu/y.parquet", "t7/dt=2/z.parquet",
        "t7/dt=2/region=us/w.parquet", "t7/top.parquet", "t7/other=5/v.parquet", NULL,
    };
    put_files(files);
    counting_store *cs = NULL;
    pq_table *t = discover("", "t7", NULL, &cs);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(t->n_parts, 2);
        CHECK_EQ_INT(t->n_files, 2);
        CHECK_EQ_INT(t->n_ignored, 4);
        if (t->n_files == 2) {
            CHECK_EQ_STR(t->files[0].path, "t7/dt=1/region=eu/y.parquet");
            CHECK_EQ_STR(t->files[1].path, "t7/dt=2/region=us/w.parquet");
        }
        CHECK(!was_listed(cs, "t7/other=5"));
    }
    pq_table_free(t);
    pq_store_destroy(&cs->base);

    /* The first file is shallow: the layout is (dt), and the deeper
     * directory is ignored without being listed. */
    static const char *const shallow[] = {
        "t8/dt=1/x.parquet", "t8/dt=2/region=eu/y.parquet", "t8/dt=3/z.parquet", NULL,
    };
    put_files(shallow);
    t = discover("", "t8", NULL, &cs);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(t->n_parts, 1);
        CHECK_EQ_INT(t->n_files, 2);
        CHECK_EQ_INT(t->n_ignored, 1);
        CHECK(!was_listed(cs, "t8/dt=2/region=eu"));
        CHECK_EQ_INT(cs->n_lists, 4);
    }
    pq_table_free(t);
    pq_store_destroy(&cs->base);

    /* A key repeated in one path does not fit. */
    static const char *const repeated[] = {"t9/a=1/a=2/f.parquet", "t9/a=1/b=2/g.parquet", NULL};
    put_files(repeated);
    t = discover("", "t9", NULL, NULL);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(t->n_files, 1);
        CHECK_EQ_INT(t->n_ignored, 1);
        if (t->n_files == 1) CHECK_EQ_STR(t->files[0].path, "t9/a=1/b=2/g.parquet");
    }
    pq_table_free(t);
}

typedef struct prune_state {
    int calls;
    bool bad_args;
} prune_state;

static bool prune_dt2_us(void *ctx, int depth, const char *const *names, const char *const *values)
{
    prune_state *ps = ctx;
    ps->calls++;
    if (depth < 1 || depth > 2 || strcmp(names[0], "dt") != 0) ps->bad_args = true;
    if (depth == 2 && strcmp(names[1], "region") != 0) ps->bad_args = true;
    if (values[0] && strcmp(values[0], "2") == 0) return false;
    if (depth == 2 && values[1] && strcmp(values[1], "us") == 0) return false;
    return true;
}

static void test_prune(void)
{
    static const char *const files[] = {
        "t10/dt=1/region=eu/a.parquet", "t10/dt=1/region=us/b.parquet",
        "t10/dt=2/region=eu/c.parquet", "t10/dt=2/region=us/d.parquet",
        "t10/dt=3/region=eu/e.parquet", "t10/dt=3/region=us/f.parquet",
        "t10/dt=__HIVE_DEFAULT_PARTITION__/region=eu/g.parquet", NULL,
    };
    put_files(files);
    prune_state ps = {0};
    pq_table_opts opts = {.prune = prune_dt2_us, .prune_ctx = &ps};
    counting_store *cs = NULL;
    pq_table *t = discover("", "t10", &opts, &cs);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(t->n_files, 3);
        CHECK_EQ_INT(t->n_ignored, 0);
        if (t->n_files == 3) {
            CHECK_EQ_STR(t->files[0].path, "t10/dt=1/region=eu/a.parquet");
            CHECK_EQ_STR(t->files[1].path, "t10/dt=3/region=eu/e.parquet");
            CHECK_EQ_STR(t->files[2].path, "t10/dt=__HIVE_DEFAULT_PARTITION__/region=eu/g.parquet");
            CHECK_NULL_VALUE(t->files[2].values[0]);
        }
    }
    CHECK(!ps.bad_args);
    /* dt=1, dt=2, dt=3, NULL; then the regions under the three kept. */
    CHECK_EQ_INT(ps.calls, 4 + 2 + 2 + 1);
    CHECK(!was_listed(cs, "t10/dt=2"));
    CHECK(!was_listed(cs, "t10/dt=1/region=us"));
    CHECK(!was_listed(cs, "t10/dt=3/region=us"));
    CHECK(was_listed(cs, "t10/dt=3/region=eu"));
    /* root + 3 dt + 3 region=eu */
    CHECK_EQ_INT(cs->n_lists, 7);
    pq_table_free(t);
    pq_store_destroy(&cs->base);
}

static bool prune_dt1(void *ctx, int depth, const char *const *names, const char *const *values)
{
    (void)ctx, (void)depth, (void)names;
    return !(values[0] && strcmp(values[0], "1") == 0);
}

static void test_expected_layout(void)
{
    /* Unpruned, t8's layout is (dt).  Pruning dt=1 away would let
     * dt=2/region=eu set a layout of its own; the expected layout keeps it. */
    pq_table_opts opts = {.prune = prune_dt1};
    pq_table *t = discover("", "t8", &opts, NULL);
    CHECK(t && t->n_parts == 2 && t->n_files == 1);
    pq_table_free(t);

    static const char *const layout[] = {"dt"};
    opts.expected_layout = layout;
    opts.n_expected_layout = 1;
    counting_store *cs = NULL;
    t = discover("", "t8", &opts, &cs);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(t->n_parts, 1);
        CHECK_EQ_INT(t->n_files, 1);
        CHECK_EQ_INT(t->n_ignored, 1);
        if (t->n_files == 1) CHECK_EQ_STR(t->files[0].path, "t8/dt=3/z.parquet");
        CHECK(!was_listed(cs, "t8/dt=2/region=eu"));
    }
    pq_table_free(t);
    pq_store_destroy(&cs->base);
}

static void test_table_root(void)
{
    static const char *const files[] = {
        "lake/events/dt=1/a.parquet", "lake/flat/a.parquet", "lake/nested/sub/a.parquet",
        "lake/hidden/_x.parquet", "lake/hidden/.y.parquet", "lake/hidden/_SUCCESS",
        "lake/hidden/z.csv", "lake/hidden/_k=1/a.parquet", "lake/hidden/.k=1/a.parquet",
        NULL,
    };
    put_files(files);
    put_file("lake/hidden/empty.parquet", true);
    put_dir("lake/newtable/dt=2024-01-01");
    counting_store *cs = open_store("lake");
    pq_error err = {0};
    bool yes = false;
    struct {
        const char *dir;
        bool expect;
    } cases[] = {
        {"", false},         /* the lake root holds plain table directories */
        {"events", true},    /* key=value directories */
        {"flat", true},      /* Parquet files */
        {"nested", false},   /* Parquet files only deeper, under a plain directory */
        {"hidden", false},   /* only ignored names and an empty file */
        {"newtable", true},  /* an empty partition directory counts */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int before = cs->n_lists;
        yes = !cases[i].expect;
        CHECK_EQ_INT(pq_dir_is_table_root(&cs->base, cases[i].dir, &yes, &err), PQ_OK);
        if (yes != cases[i].expect) fprintf(stderr, "table root '%s'\n", cases[i].dir);
        CHECK(yes == cases[i].expect);
        CHECK_EQ_INT(cs->n_lists - before, 1);
    }
    CHECK_EQ_INT(pq_dir_is_table_root(&cs->base, "missing", &yes, &err), PQ_ERR);
    CHECK(contains(err.msg, "missing"));
    pq_store_destroy(&cs->base);
}

static void test_list_failures(void)
{
    /* A missing table root. */
    counting_store *cs = open_store("");
    pq_error err = {0};
    pq_table *t = NULL;
    CHECK_EQ_INT(pq_table_discover(&cs->base, "no-such-table", NULL, &t, &err), PQ_ERR);
    CHECK(t == NULL);
    CHECK_EQ_INT(err.cls, PQ_E_IO);
    CHECK(contains(err.msg, "no-such-table"));

    /* A listing that fails halfway: the error names the directory and
     * nothing leaks (ASan). */
    cs->fail_dir = "t10/dt=2/region=us";
    CHECK_EQ_INT(pq_table_discover(&cs->base, "t10", NULL, &t, &err), PQ_ERR);
    CHECK(t == NULL);
    CHECK(contains(err.msg, "'t10/dt=2/region=us'"));
    CHECK(contains(err.msg, "injected listing failure"));
    pq_store_destroy(&cs->base);
}

static void test_depth_bound(void)
{
    char rel[4096];
    size_t len = (size_t)snprintf(rel, sizeof rel, "deep");
    for (int i = 0; i < PQ_TABLE_MAX_DEPTH; i++)
        len += (size_t)snprintf(rel + len, sizeof rel - len, "/k%d=%d", i, i);
    snprintf(rel + len, sizeof rel - len, "/f.parquet");
    put_file(rel, false);
    pq_table *t = discover("", "deep", NULL, NULL);
    CHECK(t && t->n_parts == PQ_TABLE_MAX_DEPTH && t->n_files == 1);
    if (t && t->n_files == 1) CHECK_EQ_STR(t->files[0].values[PQ_TABLE_MAX_DEPTH - 1], "63");
    pq_table_free(t);

    len = (size_t)snprintf(rel, sizeof rel, "deeper");
    for (int i = 0; i <= PQ_TABLE_MAX_DEPTH; i++)
        len += (size_t)snprintf(rel + len, sizeof rel - len, "/k%d=%d", i, i);
    snprintf(rel + len, sizeof rel - len, "/f.parquet");
    put_file(rel, false);
    t = discover("", "deeper", NULL, NULL);
    CHECK(t && t->n_files == 0 && t->n_ignored == 1);
    pq_table_free(t);
}

static void test_odd_names(void)
{
    static const char *const files[] = {
        "t11/s=caf\xc3\xa9/a b.parquet", "t11/s=\x01" "ctl/new\nline.parquet",
        "t11/s=\xff/q\"uote.parquet", "t11/s=sp ace/x.parquet", NULL,
    };
    put_files(files);
    pq_table *t = discover("", "t11", NULL, NULL);
    CHECK(t && t->n_files == 4);
    if (t && t->n_files == 4) {
        CHECK_EQ_STR(t->files[0].values[0], "\x01" "ctl");
        CHECK_EQ_STR(t->files[0].path, "t11/s=\x01" "ctl/new\nline.parquet");
        CHECK_EQ_STR(t->files[1].values[0], "caf\xc3\xa9");
        CHECK_EQ_STR(t->files[1].path, "t11/s=caf\xc3\xa9/a b.parquet");
        CHECK_EQ_STR(t->files[2].values[0], "sp ace");
        CHECK_EQ_STR(t->files[3].values[0], "\xff");
    }
    pq_table_free(t);
}

static void test_percent_coding(void)
{
    char out[1024], back[1024];
    CHECK_EQ_INT(pq_percent_encode("a/b=c%d", 7, out, sizeof out), 13);
    CHECK_EQ_STR(out, "a%2Fb%3Dc%25d");
    CHECK_EQ_INT(pq_percent_encode("\x7f\x01 x", 4, out, sizeof out), 8);
    CHECK_EQ_STR(out, "%7F%01 x");
    CHECK_EQ_INT(pq_percent_encode("\"#'*:?\\{[]^", 11, out, sizeof out), 33);
    CHECK_EQ_STR(out, "%22%23%27%2A%3A%3F%5C%7B%5B%5D%5E");
    CHECK_EQ_INT(pq_percent_encode("caf\xc3\xa9-_.~ ,;", 12, out, sizeof out), 12);
    CHECK_EQ_STR(out, "caf\xc3\xa9-_.~ ,;");
    CHECK_EQ_INT(pq_percent_encode("", 0, out, sizeof out), 0);
    CHECK_EQ_STR(out, "");
    /* Room: the encoded text plus its NUL, no less. */
    CHECK_EQ_INT(pq_percent_encode("a/", 2, out, 5), 4);
    CHECK_EQ_INT(pq_percent_encode("a/", 2, out, 4), -1);
    CHECK_EQ_INT(pq_percent_encode("ab", 2, out, 2), -1);
    CHECK_EQ_INT(pq_percent_encode("", 0, out, 0), -1);

    CHECK_EQ_INT(pq_percent_decode("a%2fb%2F", 8, back), 4);
    CHECK_EQ_STR(back, "a/b/");
    CHECK_EQ_INT(pq_percent_decode("plain+text", 10, back), 10);
    CHECK_EQ_STR(back, "plain+text");
    /* a '%' that starts no escape stays, the escapes beside it decode */
    CHECK_EQ_INT(pq_percent_decode("%", 1, back), 1);
    CHECK_EQ_STR(back, "%");
    CHECK_EQ_INT(pq_percent_decode("%4", 2, back), 2);
    CHECK_EQ_STR(back, "%4");
    CHECK_EQ_INT(pq_percent_decode("%zz", 3, back), 3);
    CHECK_EQ_STR(back, "%zz");
    CHECK_EQ_INT(pq_percent_decode("%g0", 3, back), 3);
    CHECK_EQ_STR(back, "%g0");
    CHECK_EQ_INT(pq_percent_decode("a%2Fb%", 6, back), 4);
    CHECK_EQ_STR(back, "a/b%");
    CHECK_EQ_INT(pq_percent_decode("u%'%2f", 6, back), 4);
    CHECK_EQ_STR(back, "u%'/");
    CHECK_EQ_INT(pq_percent_decode("x%00y", 5, back), 3);
    CHECK(back[1] == '\0' && back[2] == 'y');

    /* Every byte value round-trips, and the encoded form has no '/', '=',
     * or control byte, and only uppercase escapes. */
    char all[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    int n = pq_percent_encode(all, 256, out, sizeof out);
    CHECK(n > 256);
    bool clean = true;
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)out[i];
        if (c == '/' || c == '=' || c < 0x20 || c == 0x7f || (c >= 'a' && c <= 'f' && i > 0 &&
                                                             (out[i - 1] == '%')))
            clean = false;
    }
    CHECK(clean);
    CHECK_EQ_INT(pq_percent_decode(out, (size_t)n, back), 256);
    CHECK(memcmp(back, all, 256) == 0);

    /* Encoded values survive a trip through a real directory. */
    const char *value = "a/b=c%d?e";
    CHECK(pq_percent_encode(value, strlen(value), out, sizeof out) > 0);
    char rel[1200];
    snprintf(rel, sizeof rel, "t12/v=%s/f.parquet", out);
    put_file(rel, false);
    pq_table *t = discover("", "t12", NULL, NULL);
    CHECK(t && t->n_files == 1);
    if (t && t->n_files == 1) CHECK_EQ_STR(t->files[0].values[0], value);
    pq_table_free(t);
}

static int count_entry(void *ctx, const pq_dirent *e)
{
    (void)e;
    ++*(int *)ctx;
    return 0;
}

/* A listing cache (TTL ttl_ms) over a counting store of sub/a=1 and
 * sub/a=2 whose listings each take 150 ms; NULL (checked) on failure. */
static pq_store *slow_cached_store(const char *sub, uint64_t ttl_ms, pq_cache_counters *counters,
                                   counting_store **cs_out)
{
    char d[64];
    snprintf(d, sizeof d, "%s/a=1", sub);
    put_dir(d);
    snprintf(d, sizeof d, "%s/a=2", sub);
    put_dir(d);
    counting_store *cs = *cs_out = open_store(sub);
    CHECK(cs != NULL);
    if (!cs) return NULL;
    cs->delay_ms = 150;
    pq_store *cached = NULL;
    pq_error err = {0};
    CHECK_EQ_INT(pq_store_cached_new(&cs->base, ttl_ms, counters, &cached, &err), PQ_OK);
    return cached;
}

/* A listing slower than the TTL is trusted from when it came back: the
 * next listing of the directory is a hit (it was stored already expired,
 * and a slow link then re-listed everything at every lookup). */
static void test_cache_slow_listing(void)
{
    pq_cache_counters counters = {0};
    counting_store *cs;
    pq_store *cached = slow_cached_store("slowlist", 100, &counters, &cs);
    if (!cached) return;
    pq_error err = {0};
    int n1 = 0, n2 = 0;
    CHECK_EQ_INT(cached->ops->list(cached, "", count_entry, &n1, &err), PQ_OK);
    CHECK_EQ_INT(cached->ops->list(cached, "", count_entry, &n2, &err), PQ_OK);
    CHECK(n1 == 2 && n2 == 2);
    CHECK_EQ_INT(cs->n_lists, 1);
    CHECK_EQ_INT((int)atomic_load(&counters.list_hits), 1);
    usleep(130 * 1000); /* past the TTL: listed again */
    CHECK_EQ_INT(cached->ops->list(cached, "", count_entry, &n2, &err), PQ_OK);
    CHECK_EQ_INT(cs->n_lists, 2);
    pq_store_destroy(cached);
}

/* The kept listings stay within their byte budget: past it they are
 * dropped and listed again (a miss, never a wrong listing); a listing
 * larger than the budget is answered and not kept. */
static void test_cache_listing_bytes(void)
{
    static const char *const dirs[] = {"lbytes/a", "lbytes/b"};
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 200; i++) {
            char rel[128];
            snprintf(rel, sizeof rel, "%s/part-%04d-with-a-long-name-of-forty-bytes.parquet", dirs[d], i);
            put_file(rel, true);
        }
    pq_cache_counters counters = {0};
    counting_store *cs = open_store("lbytes");
    CHECK(cs != NULL);
    if (!cs) return;
    pq_store *cached = NULL;
    pq_error err = {0};
    CHECK_EQ_INT(pq_store_cached_new(&cs->base, 60000, &counters, &cached, &err), PQ_OK);
    if (!cached) return;
    int n = 0;
    CHECK_EQ_INT(cached->ops->list(cached, "a", count_entry, &n, &err), PQ_OK);
    size_t one = pq_store_cached_bytes(cached);
    CHECK(n == 200 && one > 200 * 40); /* every name counted */
    /* Room for one listing: the second drops the first. */
    pq_store_cached_set_max_bytes(cached, one + one / 2);
    int lists = cs->n_lists;
    for (int round = 0; round < 2; round++)
        for (int d = 0; d < 2; d++) {
            n = 0;
            CHECK_EQ_INT(cached->ops->list(cached, d ? "b" : "a", count_entry, &n, &err), PQ_OK);
            CHECK_EQ_INT(n, 200);
            CHECK(pq_store_cached_bytes(cached) <= one + one / 2);
        }
    CHECK_EQ_INT(cs->n_lists - lists, 4); /* each listed again */
    n = 0;
    CHECK_EQ_INT(cached->ops->list(cached, "b", count_entry, &n, &err), PQ_OK);
    CHECK_EQ_INT(cs->n_lists - lists, 4); /* the last one kept: a hit */
    /* Smaller than one listing: answered, not kept. */
    pq_store_cached_set_max_bytes(cached, one / 2);
    n = 0;
    CHECK_EQ_INT(cached->ops->list(cached, "a", count_entry, &n, &err), PQ_OK);
    CHECK(n == 200 && pq_store_cached_bytes(cached) == 0);
    pq_store_destroy(cached);

    /* A directory that outgrew the budget: its new listing is not kept, and
     * its old one goes too (it stayed, holding its bytes, until a drop). */
    pq_store *short_ttl = NULL;
    CHECK_EQ_INT(pq_store_cached_new(&open_store("lbytes")->base, 50, &counters, &short_ttl, &err), PQ_OK);
    if (!short_ttl) return;
    pq_store_cached_set_max_bytes(short_ttl, one + one / 2);
    n = 0;
    CHECK_EQ_INT(short_ttl->ops->list(short_ttl, "a", count_entry, &n, &err), PQ_OK);
    CHECK(pq_store_cached_bytes(short_ttl) == one);
    for (int i = 0; i < 200; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "lbytes/a/more-%04d-with-a-long-name-of-forty-bytes.parquet", i);
        put_file(rel, true);
    }
    usleep(80 * 1000); /* past the TTL */
    n = 0;
    CHECK_EQ_INT(short_ttl->ops->list(short_ttl, "a", count_entry, &n, &err), PQ_OK);
    CHECK_EQ_INT(n, 400);
    CHECK_EQ_INT((int)pq_store_cached_bytes(short_ttl), 0);
    pq_store_destroy(short_ttl);
}

typedef struct lister {
    pq_store *cached;
    int n;
    int rc;
    pthread_t tid;
} lister;

static void *list_root(void *arg)
{
    lister *l = arg;
    pq_error err = {0};
    l->rc = l->cached->ops->list(l->cached, "", count_entry, &l->n, &err);
    return NULL;
}

/* Lookups that miss while the same directory is being listed wait for that
 * listing (one request, not one per reader), share its failure, and a
 * listing older than an invalidation is not kept. */
static void test_cache_single_flight(void)
{
    pq_cache_counters counters = {0};
    counting_store *cs;
    pq_store *cached = slow_cached_store("flight", 60000, &counters, &cs);
    if (!cached) return;
    pq_error err = {0};
    lister ls[4];
    for (int round = 0; round < 2; round++) {
        cs->fail_dir = round ? "" : NULL;
        pq_store_cached_invalidate(cached, NULL);
        int before = cs->n_lists;
        for (int i = 0; i < 4; i++) {
            ls[i] = (lister){.cached = cached};
            pthread_create(&ls[i].tid, NULL, list_root, &ls[i]);
            usleep(10 * 1000); /* the others start while the first lists */
        }
        for (int i = 0; i < 4; i++) pthread_join(ls[i].tid, NULL);
        CHECK_EQ_INT(cs->n_lists - before, 1);
        for (int i = 0; i < 4; i++) {
            CHECK_EQ_INT(ls[i].rc, round ? PQ_ERR : PQ_OK);
            CHECK_EQ_INT(ls[i].n, round ? 0 : 2);
        }
    }
    /* Invalidated while listing: handed to its caller, not kept. */
    cs->fail_dir = NULL;
    pq_store_cached_invalidate(cached, NULL);
    int before = cs->n_lists;
    ls[0] = (lister){.cached = cached};
    pthread_create(&ls[0].tid, NULL, list_root, &ls[0]);
    usleep(50 * 1000);
    pq_store_cached_invalidate(cached, "");
    pthread_join(ls[0].tid, NULL);
    CHECK_EQ_INT(ls[0].n, 2);
    int n = 0;
    CHECK_EQ_INT(cached->ops->list(cached, "", count_entry, &n, &err), PQ_OK);
    CHECK_EQ_INT(cs->n_lists - before, 2);
    pq_store_destroy(cached);
}

/* The listing thread's callback runs after the answer is kept and the
 * waiters are woken: a lookup that waited for the listing finishes while the
 * callback still runs, and the callback itself may list the directory again
 * (a hit: it does not wait on its own listing).  Before, the callback ran
 * first: the waiter stayed blocked behind it. */
typedef struct blocking_lister {
    pq_store *cached;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool other_done;            /* the waiting lookup has returned */
    bool saw_other_done;        /* ...seen from inside the callback */
    int nested_rc, nested_n, calls;
} blocking_lister;

static int block_in_callback(void *ctx, const pq_dirent *e)
{
    (void)e;
    blocking_lister *b = ctx;
    if (b->calls++) return 0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3;
    pthread_mutex_lock(&b->mu);
    while (!b->other_done && pthread_cond_timedwait(&b->cv, &b->mu, &until) == 0) {
    }
    b->saw_other_done = b->other_done;
    pthread_mutex_unlock(&b->mu);
    /* Only then: with the old order it would wait on its own listing. */
    pq_error err = {0};
    b->nested_rc = b->saw_other_done ? b->cached->ops->list(b->cached, "", count_entry, &b->nested_n, &err) : PQ_ERR;
    return 0;
}

static void *list_blocking(void *arg)
{
    blocking_lister *b = arg;
    pq_error err = {0};
    b->cached->ops->list(b->cached, "", block_in_callback, b, &err);
    return NULL;
}

static void test_cache_callback_after_wakeup(void)
{
    pq_cache_counters counters = {0};
    counting_store *cs;
    pq_store *cached = slow_cached_store("wakefirst", 60000, &counters, &cs);
    if (!cached) return;
    blocking_lister b = {.cached = cached};
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    pthread_t first;
    pthread_create(&first, NULL, list_blocking, &b);
    usleep(50 * 1000); /* the second lookup arrives while the first lists */
    lister other = {.cached = cached};
    pthread_create(&other.tid, NULL, list_root, &other);
    pthread_join(other.tid, NULL);
    pthread_mutex_lock(&b.mu);
    b.other_done = true;
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mu);
    pthread_join(first, NULL);
    CHECK(b.saw_other_done);
    CHECK_EQ_INT(other.rc, PQ_OK);
    CHECK_EQ_INT(other.n, 2);
    CHECK_EQ_INT(b.nested_rc, PQ_OK);
    CHECK_EQ_INT(b.nested_n, 2);
    CHECK_EQ_INT(b.calls, 2);
    CHECK_EQ_INT(cs->n_lists, 1);
    pthread_mutex_destroy(&b.mu);
    pthread_cond_destroy(&b.cv);
    pq_store_destroy(cached);
}

int main(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/pqfs-table-XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        g_parallel_requests = pass ? 4 : 0;
        g_max_inflight = 0;
        test_order_and_ignored();
        test_unpartitioned();
        test_raw_name_order();
        test_values();
        test_inferred_types();
        test_declared_types();
        test_layout_mismatch();
        test_prune();
        test_expected_layout();
        test_table_root();
        test_list_failures();
        test_depth_bound();
        test_odd_names();
        test_percent_coding();
        test_cache_slow_listing();
        test_cache_listing_bytes();
        test_cache_single_flight();
        test_cache_callback_after_wakeup();
        /* Sequential on a local store; siblings listed together otherwise. */
        if (pass) CHECK(g_max_inflight > 1);
        else CHECK_EQ_INT(g_max_inflight, 1);
        remove_tree(g_tmp);
        mkdir(g_tmp, 0700);
    }
    remove_tree(g_tmp);
    return check_report();
}
