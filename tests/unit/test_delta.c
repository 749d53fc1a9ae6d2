/* Delta Lake log replay (engine/tablefmt): add/remove reconciliation by
 * path and deletion vector id, paths URL-decoded once, the checkpoint a
 * replay starts from (with and without _last_checkpoint), a commit missing
 * in the middle, protocol refusals naming the feature, errors naming the
 * file and line, partition values typed by the schema, deletion vectors
 * decoded (z85, a RoaringBitmapArray built with CRoaring, files checked by
 * size and CRC-32), interval settings (the tombstone retention) parsed.
 * Logs are written into a mkdtemp directory (a local store); no data file
 * is read. */
#include "check.h"
#include "delta_log.h"
#include "json_arena.h"
#include "threads.h"
#include "tablefmt.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <roaring/roaring.h>
#include <zlib.h>

static char tmpdir[] = "/tmp/pqfs-test-delta.XXXXXX";

static const char *PROTOCOL = "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n";
static const char *METADATA =
    "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
    "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"v\\\",\\\"type\\\":\\\"long\\\","
    "\\\"nullable\\\":true,\\\"metadata\\\":{}},{\\\"name\\\":\\\"p\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,"
    "\\\"metadata\\\":{}}]}\",\"partitionColumns\":[\"p\"],\"configuration\":{}}}\n";

static int apply(pq_delta_log *log, const char *text, pq_error *err)
{
    return pq_delta_apply_json(log, text, strlen(text), "00000000000000000001.json", false, err);
}

/* The live paths in log order, "a;b;". */
static void live_paths(const pq_delta_log *log, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < log->n_adds; i++)
        if (log->adds[i].live) snprintf(out + strlen(out), cap - strlen(out), "%s;", log->adds[i].path);
}

static void test_reconcile(void)
{
    pq_delta_log log;
    pq_delta_log_init(&log);
    pq_error err;
    char paths[512];
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"a.parquet\",\"size\":1,\"partitionValues\":{}}}\n"
                             "{\"add\":{\"path\":\"b.parquet\",\"size\":2,\"partitionValues\":{}}}\n"
                             "\n"
                             "{\"add\":{\"path\":\"c.parquet\",\"size\":3,\"partitionValues\":{}}}\n", &err), PQ_OK);
    CHECK_EQ_INT(log.n_live, 3);
    /* remove b, re-add a (the newer add wins, once), remove of an unknown path. */
    CHECK_EQ_INT(apply(&log, "{\"remove\":{\"path\":\"b.parquet\",\"deletionTimestamp\":1}}\n"
                             "{\"add\":{\"path\":\"a.parquet\",\"size\":10,\"partitionValues\":{}}}\n"
                             "{\"remove\":{\"path\":\"zzz.parquet\"}}\n"
                             "{\"commitInfo\":{\"operation\":\"WRITE\"},\"txn\":{\"appId\":\"q\",\"version\":1}}\n", &err),
                 PQ_OK);
    live_paths(&log, paths, sizeof paths);
    CHECK_EQ_STR(paths, "c.parquet;a.parquet;");
    CHECK_EQ_INT(log.n_live, 2);
    for (int i = 0; i < log.n_adds; i++)
        if (log.adds[i].live && !strcmp(log.adds[i].path, "a.parquet")) CHECK_EQ_INT(log.adds[i].size, 10);
    /* A deletion vector makes another key: the same path with a DV, then
     * the remove of the path without one leaves the DV's add live. */
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"c.parquet\",\"size\":3,\"partitionValues\":{},\"deletionVector\":"
                             "{\"storageType\":\"u\",\"pathOrInlineDv\":\"ab^-aqEH.-t@S}K{vb[*k^\",\"offset\":1,"
                             "\"sizeInBytes\":36,\"cardinality\":2}}}\n"
                             "{\"remove\":{\"path\":\"c.parquet\"}}\n", &err), PQ_OK);
    live_paths(&log, paths, sizeof paths);
    CHECK_EQ_STR(paths, "a.parquet;c.parquet;");
    CHECK_EQ_INT(apply(&log, "{\"remove\":{\"path\":\"c.parquet\",\"deletionVector\":{\"storageType\":\"u\","
                             "\"pathOrInlineDv\":\"ab^-aqEH.-t@S}K{vb[*k^\",\"offset\":1,\"sizeInBytes\":36,"
                             "\"cardinality\":2}}}\n", &err), PQ_OK);
    live_paths(&log, paths, sizeof paths);
    CHECK_EQ_STR(paths, "a.parquet;");
    /* Many files: the table grows and shrinks through the hash. */
    char line[128];
    for (int i = 0; i < 5000; i++) {
        snprintf(line, sizeof line, "{\"add\":{\"path\":\"f%d.parquet\",\"size\":1,\"partitionValues\":{}}}", i);
        CHECK_EQ_INT(apply(&log, line, &err), PQ_OK);
    }
    for (int i = 0; i < 5000; i += 2) {
        snprintf(line, sizeof line, "{\"remove\":{\"path\":\"f%d.parquet\"}}", i);
        CHECK_EQ_INT(apply(&log, line, &err), PQ_OK);
    }
    CHECK_EQ_INT(log.n_live, 1 + 2500);
    /* A checkpoint's removes are tombstones: not applied. */
    const char *tomb = "{\"remove\":{\"path\":\"a.parquet\"}}\n";
    CHECK_EQ_INT(pq_delta_apply_json(&log, tomb, strlen(tomb), "cp.json", true, &err), PQ_OK);
    CHECK_EQ_INT(log.n_live, 2501);
    pq_delta_log_free(&log);
}

static void test_paths(void)
{
    pq_arena a;
    pq_arena_init(&a, 1024);
    const char *out;
    CHECK_EQ_INT(pq_delta_decode_path(&a, "x=A%252FA/part%20one.parquet", &out), 0);
    CHECK_EQ_STR(out, "x=A%2FA/part one.parquet"); /* once: %25 is a literal '%' */
    CHECK_EQ_INT(pq_delta_decode_path(&a, "B%20B", &out), 0);
    CHECK_EQ_STR(out, "B B");
    CHECK_EQ_INT(pq_delta_decode_path(&a, "a+b", &out), 0);
    CHECK_EQ_STR(out, "a+b"); /* a URI path: '+' is itself */
    CHECK_EQ_INT(pq_delta_decode_path(&a, "bad%2", &out), -1);
    CHECK_EQ_INT(pq_delta_decode_path(&a, "bad%zz", &out), -1);
    CHECK_EQ_INT(pq_delta_decode_path(&a, "nul%00", &out), -1);
    pq_arena_free(&a);
    /* Through an add: decoded, and paths out of the table refused. */
    pq_delta_log log;
    pq_delta_log_init(&log);
    pq_error err;
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"k=%C3%A9t%C3%A9/f.parquet\",\"size\":1}}", &err), PQ_OK);
    CHECK_EQ_STR(log.adds[0].path, "k=\xc3\xa9t\xc3\xa9/f.parquet");
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"../x.parquet\",\"size\":1}}", &err), PQ_ERR);
    CHECK(strstr(err.msg, "'.' or '..'") != NULL);
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"%2E%2E/x.parquet\",\"size\":1}}", &err), PQ_ERR);
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"s3://bucket/x.parquet\",\"size\":1}}", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"file:/tmp/x.parquet\",\"size\":1}}", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    /* A ':' escaped in the first segment is a name, not a scheme; one after
     * a '/' needs no escape. */
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"t%3A1.parquet\",\"size\":1}}", &err), PQ_OK);
    CHECK_EQ_STR(log.adds[log.n_adds - 1].path, "t:1.parquet");
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"d/t:1.parquet\",\"size\":1}}", &err), PQ_OK);
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"/etc/passwd\",\"size\":1}}", &err), PQ_ERR);
    CHECK_EQ_INT(apply(&log, "{\"add\":{\"path\":\"x%zz\",\"size\":1}}", &err), PQ_ERR);
    CHECK(strstr(err.msg, "malformed") != NULL);
    pq_delta_log_free(&log);
}

/* Bad lines: each error names the file, the line and what was wrong. */
static void test_bad_lines(void)
{
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"{\"add\":{\"path\":\"a\",\"size\":-1}}", "00000000000000000001.json: line 1: add.size is not a non-negative integer"},
        {"\n\n{\"add\":{\"size\":1}}", "line 3: add.path is missing"},
        {"{\"add\":{\"path\":\"a\",\"size\":\"1\"}}", "add.size is not a non-negative integer"},
        {"{\"add\":{\"path\":7,\"size\":1}}", "add.path is not a string"},
        {"{\"add\":{\"path\":\"a\",\"size\":1,\"partitionValues\":{\"p\":3}}}", "add.partitionValues['p'] is neither"},
        {"{\"add\":{\"path\":\"a\",\"size\":1,\"deletionVector\":{\"storageType\":\"q\"}}}", "none of u, i, p"},
        {"{\"add\":[1]}", "add is not an object"},
        {"[1]", "not a JSON object"},
        {"{\"add\":{\"path\":\"a\"", "line 1: not JSON"},
        {"{\"protocol\":{\"minReaderVersion\":\"3\"}}", "protocol.minReaderVersion is not a non-negative integer"},
        {"{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[1]}}", "readerFeatures[0] is not a string"},
        {"{\"metaData\":{\"partitionColumns\":[]}}", "metaData.schemaString is missing"},
        {"{\"add\":{\"path\":\"a\\u0000b\",\"size\":1}}", "not JSON"},
        {"{\"sidecar\":{\"path\":\"x.parquet\"}}", "a sidecar action outside a checkpoint"},
        {"{\"add\":{\"path\":\"a\",\"size\":99999999999999999999}}", "not JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pq_delta_log log;
        pq_delta_log_init(&log);
        pq_error err;
        pq_error_clear(&err);
        CHECK_EQ_INT(apply(&log, cases[i].text, &err), PQ_ERR);
        if (!strstr(err.msg, cases[i].says)) {
            fprintf(stderr, "case %zu: '%s' does not say '%s'\n", i, err.msg, cases[i].says);
            CHECK(0);
        }
        pq_delta_log_free(&log);
    }
}

/* A commit of many lines is parsed in batches on every core and applied in
 * order: a remove in a later batch undoes an add of an earlier one, an add
 * again after its remove is live, blank lines count, and an error names
 * its line however deep in the commit. */
static void test_big_commit(void)
{
    enum { ADDS = 12000 };
    pq_buf text;
    pq_buf_init(&text);
    pq_buf_puts(&text, PROTOCOL);
    pq_buf_puts(&text, METADATA);
    for (int i = 0; i < ADDS; i++) {
        pq_buf_printf(&text, "{\"add\":{\"path\":\"p=%d/f-%05d.parquet\",\"size\":%d,\"partitionValues\":{\"p\":\"%d\"},"
                             "\"stats\":\"{\\\"numRecords\\\":%d}\"}}\n",
                      i % 7, i, 100 + i, i % 7, i);
        if (i % 1000 == 999) pq_buf_puts(&text, "\n"); /* a blank line now and then */
    }
    /* Removes of the first 3,000 adds (batches behind), then 10 of them again. */
    for (int i = 0; i < 3000; i++) pq_buf_printf(&text, "{\"remove\":{\"path\":\"p=%d/f-%05d.parquet\"}}\n", i % 7, i);
    for (int i = 0; i < 10; i++)
        pq_buf_printf(&text, "{\"add\":{\"path\":\"p=%d/f-%05d.parquet\",\"size\":1,\"partitionValues\":{\"p\":\"%d\"}}}\n",
                      i % 7, i, i % 7);
    pq_delta_log log;
    pq_delta_log_init(&log);
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(apply(&log, text.data, &err), PQ_OK);
    CHECK_EQ_INT(log.n_live, ADDS - 3000 + 10);
    int live_stats = 0, bad_size = 0;
    for (int i = 0; i < log.n_adds; i++) {
        if (!log.adds[i].live) continue;
        int k = atoi(strrchr(log.adds[i].path, '-') + 1);
        live_stats += log.adds[i].stats != NULL;
        bad_size += log.adds[i].size != (k < 10 ? 1 : 100 + k);
    }
    CHECK_EQ_INT(live_stats, ADDS - 3000);
    CHECK_EQ_INT(bad_size, 0);
    pq_delta_log_free(&log);
    /* The 9,001st add made malformed: its line counted from the text. */
    const char *nine = strstr(text.data, "f-09000.parquet");
    CHECK(nine != NULL);
    if (nine) {
        int line = 1;
        for (const char *c = text.data; c < nine; c++) line += *c == '\n';
        CHECK_EQ_INT(line, 3 + 9000 + 9); /* protocol, metaData, 9,000 adds, 9 blank lines */
        char says[64];
        snprintf(says, sizeof says, "line %d: not JSON", line);
        char *broken = strdup(text.data);
        size_t at = (size_t)(nine - text.data);
        while (at && broken[at - 1] != '\n') at--;
        broken[at] = '['; /* the line's '{': no longer JSON */
        pq_delta_log_init(&log);
        pq_error_clear(&err);
        CHECK_EQ_INT(apply(&log, broken, &err), PQ_ERR);
        CHECK(strstr(err.msg, says) != NULL);
        if (!strstr(err.msg, says)) fprintf(stderr, "big commit: '%s'\n", err.msg);
        pq_delta_log_free(&log);
        free(broken);
    }
    pq_buf_free(&text);
}

/* Trees parsed into an arena on several threads read back whole, are
 * dropped with it; jansson's other memory (a tree built, json_dumps's
 * text) is the heap's as before. */
typedef struct arena_job {
    pq_json_arena arena;
    char texts[256][48];
    json_t *trees[256];
} arena_job;

static void parse_into(void *ctx, size_t i)
{
    arena_job *j = ctx;
    j->trees[i] = pq_json_parse_in(&j->arena, j->texts[i], strlen(j->texts[i]), 0, NULL);
}

static void test_json_arena(void)
{
    arena_job *j = calloc(1, sizeof *j);
    CHECK(j != NULL);
    if (!j) return;
    pq_json_arena_init(&j->arena);
    for (int i = 0; i < 256; i++) snprintf(j->texts[i], sizeof j->texts[i], "{\"k\":%d,\"s\":\"v%d\",\"a\":[%d]}", i, i, i);
    pq_parallel_for(256, 4, parse_into, j);
    int bad = 0;
    for (int i = 0; i < 256; i++) {
        char want[16];
        snprintf(want, sizeof want, "v%d", i);
        const char *s = json_string_value(json_object_get(j->trees[i], "s"));
        bad += json_integer_value(json_object_get(j->trees[i], "k")) != i || !s || strcmp(s, want) ||
               json_integer_value(json_array_get(json_object_get(j->trees[i], "a"), 0)) != i;
    }
    CHECK_EQ_INT(bad, 0);
    json_error_t jerr;
    CHECK(pq_json_parse_in(&j->arena, "{\"k\":", 5, 0, &jerr) == NULL); /* not JSON */
    for (int i = 0; i < 256; i++) pq_json_drop(j->trees[i]);
    pq_json_arena_free(&j->arena);
    json_t *built = json_pack("{s:i,s:s}", "n", 7, "t", "x");
    char *text = built ? json_dumps(built, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    CHECK(text && !strcmp(text, "{\"n\":7,\"t\":\"x\"}"));
    pq_json_free(text);
    json_decref(built);
    free(j);
}

static void test_names_and_choice(void)
{
    pq_delta_name d = pq_delta_parse_name("00000000000000000010.json");
    CHECK_EQ_INT(d.kind, PQ_DELTA_NAME_COMMIT);
    CHECK_EQ_INT(d.version, 10);
    d = pq_delta_parse_name("00000000000000000010.checkpoint.0000000002.0000000003.parquet");
    CHECK_EQ_INT(d.kind, PQ_DELTA_NAME_MULTIPART);
    CHECK_EQ_INT(d.part, 2);
    CHECK_EQ_INT(d.n_parts, 3);
    d = pq_delta_parse_name("00000000000000000006.checkpoint.f5ee283b-37c7-46af-b64c-8f77c6a5c43a.json");
    CHECK_EQ_INT(d.kind, PQ_DELTA_NAME_V2);
    CHECK(d.json);
    CHECK_EQ_INT(pq_delta_parse_name("00000000000000000010.crc").kind, PQ_DELTA_NAME_OTHER);
    CHECK_EQ_INT(pq_delta_parse_name("0000000000000000010.json").kind, PQ_DELTA_NAME_OTHER);
    CHECK_EQ_INT(pq_delta_parse_name("99999999999999999999.json").kind, PQ_DELTA_NAME_OTHER); /* past INT64_MAX */
    CHECK_EQ_INT(pq_delta_parse_name("00000000000000000001.00000000000000000003.compacted.json").kind,
                 PQ_DELTA_NAME_OTHER);
    CHECK_EQ_INT(pq_delta_parse_name("00000000000000000010.checkpoint.0000000004.0000000003.parquet").kind,
                 PQ_DELTA_NAME_OTHER);

    const char *names[] = {
        "00000000000000000000.json",
        "00000000000000000005.checkpoint.parquet",
        "00000000000000000010.checkpoint.0000000001.0000000002.parquet",
        "00000000000000000010.checkpoint.0000000002.0000000002.parquet",
        "00000000000000000015.checkpoint.0000000001.0000000002.parquet", /* part 2 of 2 missing */
        "00000000000000000012.checkpoint.bbbb.json",
        "00000000000000000012.checkpoint.aaaa.parquet",
        "_last_checkpoint",
    };
    int n = (int)(sizeof names / sizeof *names), files[8], nf;
    CHECK_EQ_INT(pq_delta_choose_checkpoint(names, n, 100, files, &nf), 12); /* 15 is incomplete */
    CHECK_EQ_INT(nf, 1);
    CHECK_EQ_STR(names[files[0]], "00000000000000000012.checkpoint.aaaa.parquet"); /* the first by name */
    CHECK_EQ_INT(pq_delta_choose_checkpoint(names, n, 11, files, &nf), 10);
    CHECK_EQ_INT(nf, 2);
    CHECK_EQ_STR(names[files[0]], "00000000000000000010.checkpoint.0000000001.0000000002.parquet");
    CHECK_EQ_STR(names[files[1]], "00000000000000000010.checkpoint.0000000002.0000000002.parquet");
    CHECK_EQ_INT(pq_delta_choose_checkpoint(names, n, 9, files, &nf), 5);
    CHECK_EQ_INT(pq_delta_choose_checkpoint(names, n, 4, files, &nf), -1);
    CHECK_EQ_INT(nf, 0);
}

/* ------------------------------------------------------------ on a store */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static char table_n;

/* A new table directory under tmpdir: its path in `dir`, its log in `log`. */
static void new_table(char *dir, char *log, size_t cap)
{
    snprintf(dir, cap, "%s/t%c", tmpdir, 'a' + table_n++);
    snprintf(log, cap, "%s/_delta_log", dir);
    CHECK_EQ_INT(mkdir(dir, 0755), 0);
    CHECK_EQ_INT(mkdir(log, 0755), 0);
}

static int open_table(const char *dir, int64_t version, pq_tf_snapshot **snap, pq_error *err)
{
    pq_store *st;
    if (pq_store_local_new(dir, &st, err) != PQ_OK) return PQ_ERR;
    pq_tf_opts o = {.version = version};
    int rc = pq_tf_open(st, "", &o, snap, err);
    pq_store_destroy(st);
    return rc;
}

static char *cat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

static void test_replay_on_store(void)
{
    char dir[256], log[300];
    pq_error err;
    pq_tf_snapshot *s;

    /* Three commits; typed partition values; time travel. */
    new_table(dir, log, sizeof dir);
    char *c0 = cat3(PROTOCOL, METADATA, "{\"add\":{\"path\":\"p=1/a.parquet\",\"size\":5,\"partitionValues\":{\"p\":\"1\"}}}\n");
    write_file(log, "00000000000000000000.json", c0);
    free(c0);
    write_file(log, "00000000000000000001.json",
               "{\"add\":{\"path\":\"other/b.parquet\",\"size\":6,\"partitionValues\":{\"p\":null}}}\n"
               "{\"add\":{\"path\":\"c.parquet\",\"size\":7,\"partitionValues\":{\"p\":\"\"}}}\n");
    write_file(log, "00000000000000000002.json", "{\"remove\":{\"path\":\"p%3D1/a.parquet\"}}\n");
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_OK);
    if (s) {
        CHECK_EQ_INT(s->kind, PQ_TF_DELTA);
        CHECK_EQ_INT(s->version, 2);
        CHECK_EQ_INT(s->table->n_files, 2);
        CHECK_EQ_INT(s->table->n_parts, 1);
        CHECK_EQ_INT(s->table->part_types[0], PQ_PART_INT64);
        CHECK_EQ_STR(s->table->files[0].path, "other/b.parquet");
        CHECK(s->table->files[0].values[0] == NULL); /* null */
        CHECK(s->table->files[1].values[0] == NULL); /* "" */
        CHECK_EQ_INT(s->table->files[1].st.size, 7);
        CHECK_EQ_INT(s->n_cols, 2);
        CHECK_EQ_STR(s->cols[1].name, "p");
        CHECK_EQ_INT(s->cols[1].part, 0);
        pq_tf_snapshot_free(s);
    }
    CHECK_EQ_INT(open_table(dir, 0, &s, &err), PQ_OK);
    if (s) {
        CHECK_EQ_INT(s->table->n_files, 1);
        CHECK_EQ_STR(s->table->files[0].values[0], "1");
        pq_tf_snapshot_free(s);
    }
    CHECK_EQ_INT(open_table(dir, 3, &s, &err), PQ_ERR);
    CHECK(strstr(err.msg, "version 3 is not in the log (the latest is 2)") != NULL);

    /* A value that is not of its column's type. */
    write_file(log, "00000000000000000003.json",
               "{\"add\":{\"path\":\"d.parquet\",\"size\":1,\"partitionValues\":{\"p\":\"one\"}}}\n");
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_ERR);
    CHECK(strstr(err.msg, "partition value 'one' of 'p' is not an integer") != NULL);

    /* A commit missing in the middle: an error, and the versions before it
     * still read. */
    write_file(log, "00000000000000000003.json", "");
    write_file(log, "00000000000000000005.json", "");
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_ERR);
    CHECK(strstr(err.msg, "commit 4 is missing (00000000000000000004.json)") != NULL);
    CHECK_EQ_INT(open_table(dir, 3, &s, &err), PQ_OK);
    pq_tf_snapshot_free(s);

    /* The newest complete checkpoint without _last_checkpoint: a v2 JSON
     * checkpoint at 1 (the commits before it gone), an incomplete
     * multi-part one at 2, and commit 2 after the v2 one. */
    new_table(dir, log, sizeof dir);
    char *cp = cat3(PROTOCOL, METADATA,
                    "{\"checkpointMetadata\":{\"version\":1}}\n"
                    "{\"add\":{\"path\":\"x.parquet\",\"size\":1,\"partitionValues\":{\"p\":\"4\"}}}\n"
                    "{\"remove\":{\"path\":\"gone.parquet\"}}\n");
    write_file(log, "00000000000000000001.checkpoint.0b1e.json", cp);
    free(cp);
    write_file(log, "00000000000000000002.checkpoint.0000000001.0000000002.parquet", "not read");
    write_file(log, "00000000000000000002.json", "{\"add\":{\"path\":\"y.parquet\",\"size\":1,\"partitionValues\":{}}}\n");
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_OK);
    if (s) {
        CHECK_EQ_INT(s->checkpoint_version, 1);
        CHECK_EQ_INT(s->version, 2);
        CHECK_EQ_INT(s->table->n_files, 2);
        pq_tf_snapshot_free(s);
    }
    /* A hint that does not parse is only a warning: the listing decides. */
    write_file(log, "_last_checkpoint", "{\"version\":");
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_OK);
    pq_tf_snapshot_free(s);
    /* Before the checkpoint, with commit 0 gone: nothing to start from. */
    CHECK_EQ_INT(open_table(dir, 0, &s, &err), PQ_ERR);
    CHECK(strstr(err.msg, "no checkpoint at or before it and no commit 0") != NULL);

    /* Protocol refusals, each naming the feature (PQ_E_UNSUPPORTED). */
    static const struct {
        const char *protocol, *conf, *says;
    } refusals[] = {
        {"{\"protocol\":{\"minReaderVersion\":4,\"minWriterVersion\":7}}\n", "", "needs reader version 4"},
        {"{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"v2Checkpoint\","
         "\"deletionVectors\",\"variantType\"]}}\n", "", "reader feature 'variantType'"},
        {"{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"typeWidening\"]}}\n", "",
         "reader feature 'typeWidening'"},
        {"{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}\n", "\"delta.columnMapping.mode\":\"byHash\"",
         "column mapping mode 'byHash'"},
    };
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        new_table(dir, log, sizeof dir);
        char meta[2048];
        snprintf(meta, sizeof meta, "%.*s{%s}}}\n", (int)(strstr(METADATA, "{}}}") - METADATA), METADATA,
                 refusals[i].conf);
        char *c = cat3(refusals[i].protocol, meta, "");
        write_file(log, "00000000000000000000.json", c);
        free(c);
        pq_error_clear(&err);
        CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
        if (!strstr(err.msg, refusals[i].says)) {
            fprintf(stderr, "refusal %zu: '%s' does not say '%s'\n", i, err.msg, refusals[i].says);
            CHECK(0);
        }
    }
    /* delta.columnMapping.mode is honoured only where the protocol has
     * column mapping: under reader version 1 the display names are read
     * (mode id too is then no refusal). */
    static const char *mapped_schema =
        "{\"metaData\":{\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":"
        "\\\"v\\\",\\\"type\\\":\\\"long\\\",\\\"metadata\\\":{\\\"delta.columnMapping.physicalName\\\":"
        "\\\"col-1\\\"}}]}\",\"partitionColumns\":[],\"configuration\":{\"delta.columnMapping.mode\":\"%s\"}}}\n";
    static const struct {
        const char *protocol, *mode, *physical;
    } mapped[] = {
        {"{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n", "name", "v"},
        {"{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n", "id", "v"},
        {"{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}\n", "name", "col-1"},
        {"{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"columnMapping\"]}}\n",
         "name", "col-1"},
        {"{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}\n", "none", "v"},
    };
    for (size_t i = 0; i < sizeof mapped / sizeof *mapped; i++) {
        new_table(dir, log, sizeof dir);
        char meta[1024];
        snprintf(meta, sizeof meta, mapped_schema, mapped[i].mode);
        char *c = cat3(mapped[i].protocol, meta, "");
        write_file(log, "00000000000000000000.json", c);
        free(c);
        CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_OK);
        if (s) {
            CHECK_EQ_STR(s->cols[0].physical, mapped[i].physical);
            pq_tf_snapshot_free(s);
        }
    }
    /* A file with a deletion vector: given to a caller that applies
     * deletes, refused to one that does not (never read whole). */
    new_table(dir, log, sizeof dir);
    char *dvlog = cat3("{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":"
                       "[\"deletionVectors\"],\"writerFeatures\":[\"deletionVectors\"]}}\n",
                       METADATA,
                       "{\"add\":{\"path\":\"a.parquet\",\"size\":1,\"partitionValues\":{\"p\":\"1\"},"
                       "\"deletionVector\":{\"storageType\":\"u\",\"pathOrInlineDv\":\"vBn[lx{q8@P<9BNH/isA\","
                       "\"offset\":1,\"sizeInBytes\":36,\"cardinality\":2}}}\n");
    write_file(log, "00000000000000000000.json", dvlog);
    free(dvlog);
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "has a deletion vector (reader feature 'deletionVectors'), which this reader does not apply") != NULL);
    pq_store *dst;
    CHECK_EQ_INT(pq_store_local_new(dir, &dst, &err), PQ_OK);
    pq_tf_opts applying = {.version = -1, .apply_deletes = true};
    CHECK_EQ_INT(pq_tf_open(dst, "", &applying, &s, &err), PQ_OK);
    if (s) {
        CHECK_EQ_INT(s->files[0].deletes.storage, 'u');
        CHECK_EQ_INT(s->files[0].deletes.cardinality, 2);
        pq_tf_snapshot_free(s);
    }
    pq_store_destroy(dst);
    /* No protocol, no metaData: errors saying so. */
    new_table(dir, log, sizeof dir);
    write_file(log, "00000000000000000000.json", METADATA);
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_ERR);
    CHECK(strstr(err.msg, "no protocol action") != NULL);
    /* A Hive table asked for a version. */
    CHECK_EQ_INT(open_table(tmpdir, 1, &s, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
}

/* ------------------------------------------------------ deletion vectors */

static const char z85_alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

static void z85_encode(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = (uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 | (uint32_t)p[i + 2] << 8 | p[i + 3];
        for (int k = 4; k >= 0; k--) {
            out[i / 4 * 5 + (size_t)k] = z85_alphabet[v % 85];
            v /= 85;
        }
    }
    out[n / 4 * 5] = '\0';
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* A RoaringBitmapArray of rows {0, 9, 70000} and {2^32 + 5}, built with
 * CRoaring; its length. */
static size_t make_dv(uint8_t *out)
{
    put_le32(out, 1681511377u);
    put_le32(out + 4, 2);
    put_le32(out + 8, 0);
    size_t at = 12;
    uint32_t lo[] = {0, 9, 70000}, hi[] = {5};
    for (uint32_t key = 0; key < 2; key++) {
        roaring_bitmap_t *bm = key ? roaring_bitmap_of_ptr(1, hi) : roaring_bitmap_of_ptr(3, lo);
        put_le32(out + at, key);
        at += 4;
        at += roaring_bitmap_portable_serialize(bm, (char *)out + at);
        roaring_bitmap_free(bm);
    }
    return at;
}

static void test_deletion_vectors(void)
{
    /* Z85: ZeroMQ's example, and a vector's UUID as a table names it. */
    uint8_t b[32];
    CHECK_EQ_INT(pq_z85_decode("HelloWorld", 10, b), 0);
    CHECK(!memcmp(b, "\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b", 8));
    CHECK_EQ_INT(pq_z85_decode("vBn[lx{q8@P<9BNH/isA", 20, b), 0);
    CHECK(!memcmp(b, "\x61\xd1\x6c\x75\x69\x94\x46\xb7\xa1\x5b\x8b\x53\x88\x52\xe5\x0e", 16));
    CHECK_EQ_INT(pq_z85_decode("Hello", 4, b), -1);
    CHECK_EQ_INT(pq_z85_decode("Hel~o", 5, b), -1);
    CHECK_EQ_INT(pq_z85_decode("#####", 5, b), -1); /* past 2^32 */

    uint8_t dv[256];
    size_t len = make_dv(dv);
    uint64_t *rows, n;
    pq_error err;
    CHECK_EQ_INT(pq_delta_dv_decode(dv, len, 4, &rows, &n, &err), PQ_OK);
    CHECK_EQ_INT(n, 4);
    if (n == 4) {
        CHECK_EQ_INT(rows[0], 0);
        CHECK_EQ_INT(rows[1], 9);
        CHECK_EQ_INT(rows[2], 70000);
        CHECK(rows[3] == ((uint64_t)1 << 32) + 5);
    }
    free(rows);
    CHECK_EQ_INT(pq_delta_dv_decode(dv, len, 3, &rows, &n, &err), PQ_ERR); /* cardinality */
    CHECK(strstr(err.msg, "cardinality") != NULL);
    CHECK_EQ_INT(pq_delta_dv_decode(dv, len - 3, 4, &rows, &n, &err), PQ_ERR); /* cut */
    CHECK_EQ_INT(pq_delta_dv_decode(dv + 1, len - 1, 4, &rows, &n, &err), PQ_ERR); /* magic */
    /* A bitmap CRoaring takes whole but whose array container is not
     * sorted (9, then 0): refused, the plan needs ascending rows. */
    uint8_t bad[64];
    put_le32(bad, 1681511377u);
    put_le32(bad + 4, 1);
    put_le32(bad + 8, 0);
    put_le32(bad + 12, 0);                 /* bucket key 0 */
    put_le32(bad + 16, 12346);             /* no-run cookie */
    put_le32(bad + 20, 1);                 /* one container */
    put_le32(bad + 24, (uint32_t)1 << 16); /* key 0, cardinality - 1 = 1 */
    put_le32(bad + 28, 16);                /* its data at byte 16 of the bitmap */
    bad[32] = 9, bad[33] = 0, bad[34] = 0, bad[35] = 0;
    CHECK_EQ_INT(pq_delta_dv_decode(bad, 36, 2, &rows, &n, &err), PQ_ERR);
    CHECK(strstr(err.msg, "not a well-formed roaring bitmap") != NULL);
    bad[32] = 0, bad[34] = 9; /* sorted: 0, 9 */
    CHECK_EQ_INT(pq_delta_dv_decode(bad, 36, 2, &rows, &n, &err), PQ_OK);
    if (n == 2) CHECK(rows[0] == 0 && rows[1] == 9);
    free(rows);
    /* Run and bitset containers as CRoaring writes them: rows 10..99,999 as
     * runs, then 6,000 even rows of another 64 Ki block as a bitset. */
    roaring_bitmap_t *big = roaring_bitmap_create();
    roaring_bitmap_add_range(big, 10, 100000);
    roaring_bitmap_run_optimize(big);
    for (uint32_t v = 0; v < 12000; v += 2) roaring_bitmap_add(big, (3u << 16) + v);
    size_t bsz = roaring_bitmap_portable_size_in_bytes(big);
    uint8_t *bdv = malloc(16 + bsz);
    put_le32(bdv, 1681511377u);
    put_le32(bdv + 4, 1);
    put_le32(bdv + 8, 0);
    put_le32(bdv + 12, 0);
    roaring_bitmap_portable_serialize(big, (char *)bdv + 16);
    uint64_t bcard = roaring_bitmap_get_cardinality(big);
    roaring_bitmap_free(big);
    CHECK_EQ_INT(pq_delta_dv_decode(bdv, 16 + bsz, bcard, &rows, &n, &err), PQ_OK);
    CHECK_EQ_INT(n, 99990 + 6000);
    if (n == 99990 + 6000) CHECK(rows[0] == 10 && rows[99989] == 99999 && rows[99990] == (3u << 16) && rows[n - 1] == (3u << 16) + 11998);
    free(rows);
    for (size_t cut = 16; cut < 16 + bsz; cut += 97) /* cut anywhere: an error */
        CHECK_EQ_INT(pq_delta_dv_decode(bdv, cut, bcard, &rows, &n, &err), PQ_ERR);
    free(bdv);
    for (size_t cut = 0; cut < len; cut++) { /* every prefix: an error, never a read past it */
        if (pq_delta_dv_decode(dv, cut, 4, &rows, &n, &err) == PQ_OK) free(rows);
    }

    /* In a file: <table>/<prefix>/deletion_vector_<uuid>.bin at an offset,
     * size and CRC-32 checked; inline in z85. */
    char dir[256], log[300], path[600];
    new_table(dir, log, sizeof dir);
    snprintf(path, sizeof path, "%s/ab", dir);
    CHECK_EQ_INT(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/ab/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin", dir);
    uint8_t file[300];
    file[0] = 1;
    put_be32(file + 1, (uint32_t)len);
    memcpy(file + 5, dv, len);
    put_be32(file + 5 + len, (uint32_t)crc32(0, dv, (uInt)len));
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(file, 1, len + 9, f);
        fclose(f);
    }
    pq_table_file tf = {.path = "part-0.parquet"};
    pq_table t = {.root = "", .files = &tf, .n_files = 1};
    pq_tf_file extra = {.deletes = {.storage = 'u', .path_or_inline = "abvBn[lx{q8@P<9BNH/isA", .offset = 1,
                                    .size_in_bytes = (int64_t)len, .cardinality = 4}};
    pq_tf_snapshot snap = {.kind = PQ_TF_DELTA, .table = &t, .files = &extra};
    pq_store *st;
    CHECK_EQ_INT(pq_store_local_new(dir, &st, &err), PQ_OK);
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_OK);
    CHECK_EQ_INT(n, 4);
    free(rows);
    extra.deletes.size_in_bytes = (int64_t)len - 1;
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_ERR);
    CHECK(strstr(err.msg, "the log says") != NULL);
    extra.deletes.size_in_bytes = (int64_t)len;
    extra.deletes.offset = 200;
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_ERR);
    CHECK(strstr(err.msg, "does not fit") != NULL);
    extra.deletes.offset = 1;
    file[10] ^= 1; /* a flipped bit: the CRC */
    f = fopen(path, "wb");
    if (f) {
        fwrite(file, 1, len + 9, f);
        fclose(f);
    }
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_ERR);
    CHECK(strstr(err.msg, "CRC-32") != NULL);
    extra.deletes.path_or_inline = "../vBn[lx{q8@P<9BNH/isA";
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_ERR);
    char inline_dv[400];
    uint8_t padded[260] = {0};
    memcpy(padded, dv, len);
    z85_encode(padded, (len + 3) / 4 * 4, inline_dv);
    extra.deletes = (pq_tf_deletes){.storage = 'i', .path_or_inline = inline_dv, .offset = -1,
                                    .size_in_bytes = (int64_t)len, .cardinality = 4};
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_OK);
    CHECK_EQ_INT(n, 4);
    free(rows);
    extra.deletes.storage = 'p';
    CHECK_EQ_INT(pq_tf_deleted_rows(&snap, st, 0, &rows, &n, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    pq_store_destroy(st);
}

/* A commit larger than the 8 MiB piece it is read in (delta_replay.c,
 * JSON_PIECE): lines cut by a piece's end are applied whole, a line longer
 * than a piece too, line numbers in messages count from the file's start,
 * and the commit is read in several reads of at most a piece (it was one
 * read of the whole file, held while it was applied). */
static void test_commit_in_pieces(void)
{
    char dir[256], log[300], path[400];
    new_table(dir, log, sizeof dir);
    snprintf(path, sizeof path, "%s/00000000000000000000.json", log);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(PROTOCOL, f);
    fputs(METADATA, f);
    const int n = 60000; /* about 20 MB of adds */
    char pad[301];
    memset(pad, 'x', 300);
    pad[300] = '\0';
    for (int i = 0; i < n; i++)
        fprintf(f, "{\"add\":{\"path\":\"p=%d/f%06d.parquet\",\"size\":%d,\"partitionValues\":{\"p\":\"%d\"},"
                   "\"stats\":\"{\\\"numRecords\\\":1,\\\"pad\\\":\\\"%s\\\"}\"}}\n",
                i % 7, i, i + 1, i % 7, pad);
    /* One line of 9 MiB: longer than a piece. */
    fputs("{\"commitInfo\":{\"note\":\"", f);
    for (int i = 0; i < 9 * 1024; i++) fprintf(f, "%01024d", 0);
    fputs("\"}}\n", f);
    long lines = n + 3;
    fclose(f);

    pq_store *st;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_store_local_new(dir, &st, &err), PQ_OK);
    pq_tf_opts o = {.version = -1};
    pq_tf_snapshot *s = NULL;
    CHECK_EQ_INT(pq_tf_open(st, "", &o, &s, &err), PQ_OK);
    if (s) {
        CHECK_EQ_INT(s->table->n_files, n);
        CHECK_EQ_INT(s->table->files[n - 1].st.size, n);
        CHECK(s->files && s->files[12345].stats && strstr(s->files[12345].stats, pad) != NULL);
        pq_tf_snapshot_free(s);
    }
    struct stat sb;
    CHECK_EQ_INT(stat(path, &sb), 0);
    uint64_t reads = atomic_load(&st->counters.read_requests), bytes = atomic_load(&st->counters.read_bytes);
    CHECK(reads >= 4 && reads <= 8);
    CHECK(bytes >= (uint64_t)sb.st_size);
    pq_store_destroy(st);

    /* A bad line after a few pieces is named by its line in the file. */
    f = fopen(path, "a");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"add\":{\"path\":\"z\",\"size\":-1}}\n", f);
    fclose(f);
    CHECK_EQ_INT(open_table(dir, -1, &s, &err), PQ_ERR);
    char says[64];
    snprintf(says, sizeof says, "line %ld: add.size", lines + 1);
    if (!strstr(err.msg, says)) fprintf(stderr, "'%s' does not say '%s'\n", err.msg, says);
    CHECK(strstr(err.msg, says) != NULL);
}

/* Interval settings (delta.deletedFileRetentionDuration) as Spark spells
 * them: every unit counts (before, "interval 1 day 12 hours" was 1 day, so
 * a checkpoint dropped tombstones the setting keeps). */
static void test_intervals(void)
{
    static const struct { const char *text; int64_t ms; } cases[] = {
        {"interval 1 week", 604800000},
        {"interval 7 days", 604800000},
        {"interval 1 day 12 hours", 129600000},
        {"INTERVAL 2 Hours 30 minutes", 9000000},
        {"  interval 1 hour  ", 3600000},
        {"30 days", 2592000000},
        {"interval 1.5 seconds", 1500},
        {"interval 250 milliseconds 1000 microseconds", 251},
        {"interval 1 day -1 hour", 82800000},
        {"interval 0 seconds", 0},
        {"interval 1day", 86400000},
        {"interval", -1},
        {"", -1},
        {"interval 1 month", -1},
        {"interval 1 year", -1},
        {"interval 1.5 days", -1},
        {"interval 1 fortnight", -1},
        {"interval 1 days2", -1},
        {"interval -1 hour", -1},
        {"interval x hours", -1},
        {"intervals 1 hour", -1},
        {"interval 99999999999999999999 weeks", -1},
        {"interval 9223372036854775807 microseconds 1 week", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int64_t got = pq_delta_interval_ms(cases[i].text);
        if (got != cases[i].ms) fprintf(stderr, "'%s': %lld ms\n", cases[i].text, (long long)got);
        CHECK_EQ_INT(got, cases[i].ms);
    }
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_reconcile();
    test_paths();
    test_bad_lines();
    test_big_commit();
    test_json_arena();
    test_names_and_choice();
    test_replay_on_store();
    test_deletion_vectors();
    test_commit_in_pieces();
    test_intervals();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_report();
}
