/* gen_files: a table of many small Parquet files, as Hive partitions and as
 * a Delta table over the same files (issue 21, "Tables of 100,000 files";
 * tests/big/files.sh, tools/bench/bench_files.sh).
 *
 *   gen_files OUT FILES [--parts P] [--rows R] [--threads T]
 *
 * Writes OUT/hive/p=K/part-NNNNNN.parquet: FILES files in P partitions
 * (default 100; file i in partition i / (FILES / P), so a partition holds
 * FILES / P consecutive files), R rows each (default 20), columns
 *   id    INT64   i*R .. i*R+R-1 (so id ranges cluster per file: a point
 *                 lookup is one file by its statistics)
 *   value DOUBLE  id * 0.25
 *   name  STRING  "name_" + id % 1000
 * through the engine's CSV import (zstd, statistics), and
 * OUT/delta/p=K/part-NNNNNN.parquet (hard links to the same files) with
 * OUT/delta/_delta_log/00000000000000000000.json: protocol, metaData and one
 * add per file with its partition value and stats (numRecords, minValues,
 * maxValues, nullCount), the JSON a Delta writer puts there.  Prints the
 * expected totals: `rows N sum_id S sum_p Q`.  FILES must be a multiple
 * of P. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csvimport.h"
#include "io.h"
#include "status.h"

typedef struct gen {
    const char *out;
    long files, parts, rows, per;
    int threads;
    pq_csv_schema schema;
    int64_t *sizes;             /* per file, for the Delta log */
    int failed;
} gen;

typedef struct worker {
    gen *g;
    int index;
    pthread_t thread;
} worker;

static int buf_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    return pq_buf_append(ctx, data, len) == PQ_OK ? PQ_OK : PQ_NOMEM(err);
}

static void file_csv(const gen *g, long i, pq_buf *csv)
{
    pq_buf_clear(csv);
    pq_buf_puts(csv, "id,value,name\n");
    for (long r = 0; r < g->rows; r++) {
        long id = i * g->rows + r;
        pq_buf_printf(csv, "%ld,%.2f,name_%ld\n", id, (double)id * 0.25, id % 1000);
    }
}

static int write_whole(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return close(fd);
}

/* The hard link of the Delta table's copy (a copy where links fail). */
static int link_or_copy(const char *from, const char *to)
{
    if (link(from, to) == 0) return 0;
    if (errno != EXDEV && errno != EPERM) return -1;
    FILE *f = fopen(from, "rb");
    if (!f) return -1;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return n == sizeof buf ? -1 : write_whole(to, buf, n);
}

/* Encodes file i into parquet, with g->schema (pq_csv_infer'd from file 0). */
static int encode(gen *g, long i, pq_buf *csv, pq_buf *parquet, pq_error *err)
{
    file_csv(g, i, csv);
    pq_file *in;
    if (pq_file_open_mem("gen.csv", csv->data, csv->len, &in, err) != PQ_OK) return PQ_ERR;
    pq_import_opts o;
    pq_import_opts_init(&o);
    o.threads = 1;
    pq_sink sink = {buf_write, parquet};
    pq_buf_clear(parquet);
    int rc = pq_csv_import(in, "gen.csv", g->schema.elements, g->schema.n_elements, &o, &sink, NULL, err);
    pq_file_close(in);
    return rc;
}

static void *work(void *arg)
{
    worker *w = arg;
    gen *g = w->g;
    pq_buf csv, pq;
    pq_buf_init(&csv);
    pq_buf_init(&pq);
    pq_error err;
    pq_error_clear(&err);
    char path[4096], link[4096];
    for (long i = w->index; i < g->files && !g->failed; i += g->threads) {
        long p = i / g->per;
        snprintf(path, sizeof path, "%s/hive/p=%ld/part-%06ld.parquet", g->out, p, i);
        snprintf(link, sizeof link, "%s/delta/p=%ld/part-%06ld.parquet", g->out, p, i);
        if (encode(g, i, &csv, &pq, &err) != PQ_OK) {
            fprintf(stderr, "gen_files: file %ld: %s\n", i, err.msg);
            g->failed = 1;
        } else if (write_whole(path, pq.data, pq.len) != 0 || link_or_copy(path, link) != 0) {
            fprintf(stderr, "gen_files: %s: %s\n", path, strerror(errno));
            g->failed = 1;
        }
        g->sizes[i] = (int64_t)pq.len;
    }
    pq_buf_free(&csv);
    pq_buf_free(&pq);
    return NULL;
}

/* The Delta log: one commit with every file's add, one JSON object a line. */
static int write_delta_log(const gen *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/delta/_delta_log/00000000000000000000.json", g->out);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n", f);
    fputs("{\"metaData\":{\"id\":\"00000000-0000-0000-0000-000000000021\",\"format\":{\"provider\":\"parquet\","
          "\"options\":{}},\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["
          "{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}},"
          "{\\\"name\\\":\\\"value\\\",\\\"type\\\":\\\"double\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}},"
          "{\\\"name\\\":\\\"name\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}},"
          "{\\\"name\\\":\\\"p\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\","
          "\"partitionColumns\":[\"p\"],\"configuration\":{},\"createdTime\":1700000000000}}\n",
          f);
    for (long i = 0; i < g->files; i++) {
        long lo = i * g->rows, hi = lo + g->rows - 1;
        /* name's minimum and maximum as text: name_<id % 1000> over the ids. */
        char nmin[32] = "", nmax[32] = "";
        for (long id = lo; id <= hi; id++) {
            char n[32];
            snprintf(n, sizeof n, "name_%ld", id % 1000);
            if (!nmin[0] || strcmp(n, nmin) < 0) strcpy(nmin, n);
            if (strcmp(n, nmax) > 0) strcpy(nmax, n);
        }
        fprintf(f,
                "{\"add\":{\"path\":\"p=%ld/part-%06ld.parquet\",\"partitionValues\":{\"p\":\"%ld\"},\"size\":%lld,"
                "\"modificationTime\":1700000000000,\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":%ld,"
                "\\\"minValues\\\":{\\\"id\\\":%ld,\\\"value\\\":%.2f,\\\"name\\\":\\\"%s\\\"},"
                "\\\"maxValues\\\":{\\\"id\\\":%ld,\\\"value\\\":%.2f,\\\"name\\\":\\\"%s\\\"},"
                "\\\"nullCount\\\":{\\\"id\\\":0,\\\"value\\\":0,\\\"name\\\":0}}\"}}\n",
                i / g->per, i, i / g->per, (long long)g->sizes[i], g->rows, lo, (double)lo * 0.25, nmin, hi,
                (double)hi * 0.25, nmax);
    }
    return fclose(f);
}

static int make_dirs(const gen *g)
{
    char path[4096];
    const char *sub[] = {"hive", "delta", "delta/_delta_log"};
    if (mkdir(g->out, 0755) != 0 && errno != EEXIST) return -1;
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", g->out, sub[k]);
        if (mkdir(path, 0755) != 0) return -1;
    }
    for (long p = 0; p < g->parts; p++)
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "%s/%s/p=%ld", g->out, sub[k], p);
            if (mkdir(path, 0755) != 0) return -1;
        }
    return 0;
}

static long arg_long(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0) {
        fprintf(stderr, "gen_files: bad number: %s\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    gen g = {.parts = 100, .rows = 20, .threads = 2};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--parts") && i + 1 < argc) g.parts = arg_long(argv[++i]);
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc) g.rows = arg_long(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) g.threads = (int)arg_long(argv[++i]);
        else if (!g.out) g.out = argv[i];
        else if (!g.files) g.files = arg_long(argv[i]);
        else g.out = NULL, i = argc;
    }
    if (!g.out || !g.files || g.files % g.parts || g.threads > 64) {
        fprintf(stderr, "usage: gen_files OUT FILES [--parts P] [--rows R] [--threads T] (FILES a multiple of P)\n");
        return 2;
    }
    g.per = g.files / g.parts;
    if (make_dirs(&g) != 0) {
        fprintf(stderr, "gen_files: %s: %s (it must not hold hive/ or delta/ yet)\n", g.out, strerror(errno));
        return 1;
    }
    g.sizes = calloc((size_t)g.files, sizeof *g.sizes);
    pq_buf csv;
    pq_buf_init(&csv);
    file_csv(&g, 0, &csv);
    pq_file *in;
    pq_error err;
    pq_error_clear(&err);
    if (!g.sizes || pq_file_open_mem("gen.csv", csv.data, csv.len, &in, &err) != PQ_OK ||
        pq_csv_infer(in, "gen.csv", &g.schema, &err) != PQ_OK) {
        fprintf(stderr, "gen_files: %s\n", err.msg);
        return 1;
    }
    pq_file_close(in);
    pq_buf_free(&csv);
    worker w[64];
    for (int t = 0; t < g.threads; t++) {
        w[t] = (worker){.g = &g, .index = t};
        if (pthread_create(&w[t].thread, NULL, work, &w[t]) != 0) return 1;
    }
    for (int t = 0; t < g.threads; t++) pthread_join(w[t].thread, NULL);
    if (g.failed) return 1;
    if (write_delta_log(&g) != 0) {
        fprintf(stderr, "gen_files: the Delta log: %s\n", strerror(errno));
        return 1;
    }
    long long n = (long long)g.files * g.rows;
    printf("rows %lld sum_id %lld sum_p %lld\n", n, n * (n - 1) / 2, (long long)g.rows * g.per * (g.parts - 1) * g.parts / 2);
    pq_csv_schema_free(&g.schema);
    free(g.sizes);
    return 0;
}
