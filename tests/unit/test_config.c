/* Configuration: value parsers, every ini key, error messages with their line
 * numbers, inline comments, precedence (ini < environment < -o), the fstab
 * mount-helper form, validation and the dump with masked secrets.  Ini files
 * are written into a mkdtemp directory that is removed at the end. */
#include "check.h"
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[64];
static char ini_path[256]; /* tmpdir/lake.ini, rewritten by each test */
static pq_error err;

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(2);
    }
    fwrite(text, 1, len, f);
    fclose(f);
}

static void write_ini(const char *text)
{
    write_text(ini_path, text, strlen(text));
}

/* Loads `text` as lake.ini into a fresh config; returns load_ini's result. */
static int load(pqfs_config *c, const char *text)
{
    write_ini(text);
    pqfs_config_init(c);
    pq_error_clear(&err);
    return pqfs_config_load_ini(c, ini_path, &err);
}

/* The ini must fail with "<path>:<suffix>". */
#define CHECK_INI_ERROR(text, suffix)                                                     \
    do {                                                                                  \
        pqfs_config c_;                                                                   \
        char want_[1400];                                                                 \
        CHECK_EQ_INT(load(&c_, (text)), -1);                                              \
        snprintf(want_, sizeof want_, "%s:%s", ini_path, (suffix));                       \
        CHECK_EQ_STR(err.msg, want_);                                                         \
        pqfs_config_free(&c_);                                                            \
    } while (0)

static int count_args(char **argv)
{
    int n = 0;
    while (argv[n]) n++;
    return n;
}

static int run(pqfs_config *c, char **argv, char **envp)
{
    pqfs_config_init(c);
    pq_error_clear(&err);
    return pqfs_config_from_args(c, count_args(argv), argv, envp, &err);
}

static char *in_tmp(const char *name)
{
    static char paths[8][256];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    return p;
}

/* ---------------------------------------------------------------- value parsers */

static void check_size(const char *s, uint64_t want)
{
    uint64_t v = 12345;
    int rc = pqfs_parse_size(s, &v);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0 && v != want) fprintf(stderr, "  size '%s' -> %llu\n", s, (unsigned long long)v);
    CHECK(v == want);
}

static void check_bad_size(const char *s)
{
    uint64_t v = 12345;
    int rc = pqfs_parse_size(s, &v);
    if (rc == 0) fprintf(stderr, "  size '%s' accepted\n", s ? s : "(null)");
    CHECK_EQ_INT(rc, -1);
    CHECK(v == 12345);
}

static void test_sizes(void)
{
    check_size("0", 0);
    check_size("100000", 100000);
    check_size("1B", 1);
    check_size("1b", 1);
    check_size("1K", 1024);
    check_size("1KiB", 1024);
    check_size("1kb", 1000);
    check_size("1KB", 1000);
    check_size("512MiB", UINT64_C(512) << 20);
    check_size("512M", UINT64_C(512) << 20);
    check_size("3MB", 3000000);
    check_size("2GiB", UINT64_C(2) << 30);
    check_size("2gib", UINT64_C(2) << 30);
    check_size("2G", UINT64_C(2) << 30);
    check_size("2GB", 2000000000);
    check_size("1T", UINT64_C(1) << 40);
    check_size("1TiB", UINT64_C(1) << 40);
    check_size("1TB", UINT64_C(1000000000000));
    check_size("1.5G", UINT64_C(3) << 29);
    check_size("1.5 GiB", UINT64_C(3) << 29);
    check_size(" 2GiB ", UINT64_C(2) << 30);
    check_size("0.5K", 512);
    check_size("1.3K", 1331); /* 1331.2 rounds down */
    check_size("0.001KB", 1);
    check_size("1.0000000001G", UINT64_C(1) << 30); /* digits past the ninth are ignored */
    check_size("18446744073709551615", UINT64_MAX);
    check_size("16777215T", UINT64_C(16777215) << 40);
    check_bad_size("18446744073709551616");
    check_bad_size("16777216T"); /* 2^64 */
    check_bad_size("17179869184G");
    check_bad_size("");
    check_bad_size("   ");
    check_bad_size("abc");
    check_bad_size("G");
    check_bad_size("1.5");   /* a fraction of a byte */
    check_bad_size("1.5B");
    check_bad_size("-1");
    check_bad_size("+1");
    check_bad_size("1X");
    check_bad_size("1GiBx");
    check_bad_size("1 G B");
    check_bad_size("1.");
    check_bad_size(".5G");
    check_bad_size("1e3");
    check_bad_size("1,000");
    check_bad_size(NULL);
}

static void check_duration(const char *s, uint64_t want)
{
    uint64_t v = 12345;
    int rc = pqfs_parse_duration_ms(s, &v);
    CHECK_EQ_INT(rc, 0);
    if (rc == 0 && v != want) fprintf(stderr, "  duration '%s' -> %llu\n", s, (unsigned long long)v);
    CHECK(v == want);
}

static void check_bad_duration(const char *s)
{
    uint64_t v = 12345;
    int rc = pqfs_parse_duration_ms(s, &v);
    if (rc == 0) fprintf(stderr, "  duration '%s' accepted\n", s ? s : "(null)");
    CHECK_EQ_INT(rc, -1);
    CHECK(v == 12345);
}

static void test_durations(void)
{
    check_duration("0", 0);
    check_duration("0s", 0);
    check_duration("5", 5000); /* bare number: seconds */
    check_duration("0.5", 500);
    check_duration("5s", 5000);
    check_duration("5S", 5000);
    check_duration("10sec", 10000);
    check_duration("500ms", 500);
    check_duration("1.5ms", 1);
    check_duration("1.5s", 1500);
    check_duration("2m", 120000);
    check_duration("2min", 120000);
    check_duration("1h", 3600000);
    check_duration("1d", 86400000);
    check_duration("1h30m", 5400000);
    check_duration("1m 30s", 90000);
    check_duration(" 5 s ", 5000);
    check_duration("0.25h", 900000);
    check_bad_duration("");
    check_bad_duration(" ");
    check_bad_duration("s");
    check_bad_duration("5x");
    check_bad_duration("-1s");
    check_bad_duration("5 5");
    check_bad_duration("1h5"); /* only a lone number may leave out the unit */
    check_bad_duration("1.5.5s");
    check_bad_duration("1.s");
    check_bad_duration("99999999999999999999h");
    check_bad_duration("9999999999999999h");
    check_bad_duration(NULL);
}

static void test_bools(void)
{
    static const char *const yes[] = {"true", "TRUE", "True", "yes", "on", "1", " on "};
    static const char *const no[] = {"false", "FALSE", "no", "No", "off", "0", "  0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        bool b = false;
        CHECK_EQ_INT(pqfs_parse_bool(yes[i], &b), 0);
        CHECK(b);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        bool b = true;
        CHECK_EQ_INT(pqfs_parse_bool(no[i], &b), 0);
        CHECK(!b);
    }
    static const char *const bad[] = {"", "maybe", "2", "tru", "yess", "o", "t"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bool b = true;
        CHECK_EQ_INT(pqfs_parse_bool(bad[i], &b), -1);
        CHECK(b);
    }
    bool b;
    CHECK_EQ_INT(pqfs_parse_bool(NULL, &b), -1);
}

/* ---------------------------------------------------------------- defaults */

static void check_table_defaults(const pqfs_table_config *t)
{
    CHECK_EQ_INT(t->compression, PQ_CODEC_ZSTD);
    CHECK_EQ_INT(t->compression_level, 0);
    CHECK_EQ_INT(t->row_group_rows, 1048576);
    CHECK_EQ_INT(t->page_size, 1 << 20);
    CHECK(t->dictionary);
    CHECK(t->page_index);
    CHECK_EQ_INT(t->n_partitions, 0);
    CHECK_EQ_INT(t->n_bloom_filter, 0);
    CHECK_EQ_INT(t->n_sort_by, 0);
}

static void test_defaults(void)
{
    pqfs_config c;
    pqfs_config_init(&c);
    CHECK(c.source == NULL);
    CHECK(c.mountpoint == NULL);
    CHECK(!c.read_only);
    CHECK_EQ_INT(c.threads, 0);
    CHECK(c.cache_size == UINT64_C(2) << 30);
    CHECK(c.metadata_ttl_ms == 5000);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_INFO);
    CHECK(!c.foreground);
    CHECK_EQ_INT(c.n_fuse_opts, 0);
    CHECK_EQ_STR(c.s3_region, "us-east-1");
    CHECK(c.s3_endpoint == NULL);
    CHECK(!c.s3_path_style);
    CHECK(c.s3_access_key_id == NULL && c.s3_secret_access_key == NULL && c.s3_session_token == NULL);
    CHECK_EQ_INT(c.n_tables, 0);
    check_table_defaults(&c.table_defaults);
    CHECK(c.cache_dir != NULL);
    if (geteuid() == 0) CHECK_EQ_STR(c.cache_dir, "/var/cache/pqfs");
    pqfs_config_free(&c);
    pqfs_config_free(&c); /* free leaves an empty config: a second free is harmless */

    /* The cache directory depends on the caller's environment. */
    char *argv[] = {"pqfs", "/data/lake", "/mnt/lake", NULL};
    char *xdg_env[] = {"XDG_CACHE_HOME=/xdg", "HOME=/home/u", NULL};
    char *home_env[] = {"HOME=/home/u", NULL};
    char *relative_xdg_env[] = {"XDG_CACHE_HOME=rel", "HOME=/home/u", NULL};
    CHECK_EQ_INT(run(&c, argv, xdg_env), 0);
    CHECK_EQ_STR(c.cache_dir, geteuid() == 0 ? "/var/cache/pqfs" : "/xdg/pqfs");
    pqfs_config_free(&c);
    CHECK_EQ_INT(run(&c, argv, home_env), 0);
    CHECK_EQ_STR(c.cache_dir, geteuid() == 0 ? "/var/cache/pqfs" : "/home/u/.cache/pqfs");
    pqfs_config_free(&c);
    CHECK_EQ_INT(run(&c, argv, relative_xdg_env), 0);
    CHECK_EQ_STR(c.cache_dir, geteuid() == 0 ? "/var/cache/pqfs" : "/home/u/.cache/pqfs");
    /* validate fills in AWS's endpoint for the region. */
    CHECK_EQ_STR(c.s3_endpoint, "https://s3.us-east-1.amazonaws.com");
    pqfs_config_free(&c);
}

/* ---------------------------------------------------------------- every key */

static void test_every_key(void)
{
    pqfs_config c;
    char *long_token = malloc(1601);
    memset(long_token, 'T', 1600);
    long_token[1600] = '\0';
    char *text = malloc(4096);
    snprintf(text, 4096,
             "; pqfs configuration\n"
             "[pqfs]\n"
             "source = lake                  ; relative: next to the ini\n"
             "read_only = yes\n"
             "threads = 8\n"
             "cache_dir = /var/tmp/pqfs-cache\n"
             "cache_size = 512MiB\n"
             "metadata_ttl = 1m\n"
             "log_level = debug\n"
             "\n"
             "[s3]\n"
             "endpoint = http://127.0.0.1:9000/\n"
             "region = eu-west-1\n"
             "path_style = true\n"
             "access_key_id = AKIDEXAMPLE\n"
             "secret_access_key = wJalrXUtnFEMI/K7MDENG\n"
             "session_token = %s ; a long line\n"
             "\n"
             "[table events]\n"
             "partitions = dt:date, region:string, n:int, m:bigint, k:int64, x\n"
             "compression = gzip:7\n"
             "row_group_rows = 65536\n"
             "page_size = 256KiB\n"
             "dictionary = off\n"
             "page_statistics = false\n"
             "bloom_filter = user_id, email\n"
             "sort_by = ts,id\n"
             "[table \"other\"]\n",
             long_token);
    CHECK_EQ_INT(load(&c, text), 0);
    CHECK_EQ_STR(err.msg, "");
    char want[512];
    snprintf(want, sizeof want, "%s/lake", tmpdir);
    CHECK_EQ_STR(c.source, want);
    CHECK(c.read_only);
    CHECK_EQ_INT(c.threads, 8);
    CHECK_EQ_STR(c.cache_dir, "/var/tmp/pqfs-cache");
    CHECK(c.cache_size == UINT64_C(512) << 20);
    CHECK(c.metadata_ttl_ms == 60000);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_DEBUG);
    CHECK_EQ_STR(c.s3_endpoint, "http://127.0.0.1:9000");
    CHECK_EQ_STR(c.s3_region, "eu-west-1");
    CHECK(c.s3_path_style);
    CHECK_EQ_STR(c.s3_access_key_id, "AKIDEXAMPLE");
    CHECK_EQ_STR(c.s3_secret_access_key, "wJalrXUtnFEMI/K7MDENG");
    CHECK_EQ_STR(c.s3_session_token, long_token);
    CHECK_EQ_STR(c.ini_path, ini_path);

    CHECK_EQ_INT(c.n_tables, 2);
    const pqfs_table_config *t = pqfs_config_table(&c, "events");
    CHECK(t == &c.tables[0]);
    CHECK_EQ_STR(t->name, "events");
    CHECK_EQ_INT(t->n_partitions, 6);
    if (t->n_partitions == 6) {
        static const char *const names[] = {"dt", "region", "n", "m", "k", "x"};
        static const pq_part_type types[] = {PQ_PART_DATE,  PQ_PART_STRING, PQ_PART_INT64,
                                               PQ_PART_INT64, PQ_PART_INT64,  PQ_PART_INFER};
        for (int i = 0; i < 6; i++) {
            CHECK_EQ_STR(t->partitions[i].name, names[i]);
            CHECK_EQ_INT(t->partitions[i].type, types[i]);
        }
    }
    CHECK_EQ_INT(t->compression, PQ_CODEC_GZIP);
    CHECK_EQ_INT(t->compression_level, 7);
    CHECK_EQ_INT(t->row_group_rows, 65536);
    CHECK_EQ_INT(t->page_size, 256 << 10);
    CHECK(!t->dictionary);
    CHECK(!t->page_index);
    CHECK_EQ_INT(t->n_bloom_filter, 2);
    if (t->n_bloom_filter == 2) {
        CHECK_EQ_STR(t->bloom_filter[0], "user_id");
        CHECK_EQ_STR(t->bloom_filter[1], "email");
    }
    CHECK_EQ_INT(t->n_sort_by, 2);
    if (t->n_sort_by == 2) {
        CHECK_EQ_STR(t->sort_by[0], "ts");
        CHECK_EQ_STR(t->sort_by[1], "id");
    }
    /* An empty table section gets the defaults; an unknown table too. */
    const pqfs_table_config *other = pqfs_config_table(&c, "other");
    CHECK(other == &c.tables[1]);
    CHECK_EQ_STR(other->name, "other");
    check_table_defaults(other);
    CHECK(pqfs_config_table(&c, "nope") == &c.table_defaults);
    CHECK(pqfs_config_table(&c, NULL) == &c.table_defaults);
    CHECK(pqfs_config_table(&c, "Events") == &c.table_defaults); /* table names are case-sensitive */
    pqfs_config_free(&c);
    free(text);
    free(long_token);

    /* Section and key names are case-insensitive; ':' separates like '='. */
    CHECK_EQ_INT(load(&c, "[PQFS]\nThreads = 3\nLOG_LEVEL: warning\n[S3]\nRegion=x\n[Table T]\nPage_Index=0\n"), 0);
    CHECK_EQ_INT(c.threads, 3);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_WARN);
    CHECK_EQ_STR(c.s3_region, "x");
    CHECK(!pqfs_config_table(&c, "T")->page_index);
    pqfs_config_free(&c);
}

static void check_table_value(const char *key_line, pq_codec comp, int level)
{
    pqfs_config c;
    char text[256];
    snprintf(text, sizeof text, "[table t]\n%s\n", key_line);
    CHECK_EQ_INT(load(&c, text), 0);
    if (c.n_tables == 1) {
        CHECK_EQ_INT(c.tables[0].compression, comp);
        CHECK_EQ_INT(c.tables[0].compression_level, level);
    }
    pqfs_config_free(&c);
}

static void test_table_values(void)
{
    check_table_value("compression = zstd", PQ_CODEC_ZSTD, 0);
    check_table_value("compression = zstd:3", PQ_CODEC_ZSTD, 3);
    check_table_value("compression = ZSTD : 22", PQ_CODEC_ZSTD, 22);
    check_table_value("compression = snappy", PQ_CODEC_SNAPPY, 0);
    check_table_value("compression = lz4_raw", PQ_CODEC_LZ4_RAW, 0);
    check_table_value("compression = lz4", PQ_CODEC_LZ4_RAW, 0);
    check_table_value("compression = gzip", PQ_CODEC_GZIP, 0);
    check_table_value("compression = gzip:1", PQ_CODEC_GZIP, 1);
    check_table_value("compression = none", PQ_CODEC_UNCOMPRESSED, 0);
    check_table_value("compression = uncompressed", PQ_CODEC_UNCOMPRESSED, 0);

    CHECK_INI_ERROR("[table t]\ncompression = zstd:30\n", "2: compression: zstd level 30 is out of range (1..22)");
    CHECK_INI_ERROR("[table t]\ncompression = gzip:0\n", "2: compression: gzip level 0 is out of range (1..9)");
    CHECK_INI_ERROR("[table t]\ncompression = snappy:1\n", "2: compression: snappy takes no level");
    CHECK_INI_ERROR("[table t]\ncompression = zstd:x\n", "2: compression: 'x' is not a level");
    /* The engine's parser (pq_codec_parse), pqtool's too: brotli is written. */
    check_table_value("compression = brotli", PQ_CODEC_BROTLI, 0);
    check_table_value("compression = brotli:11", PQ_CODEC_BROTLI, 11);
    CHECK_INI_ERROR("[table t]\ncompression = brotli:12\n", "2: compression: brotli level 12 is out of range (0..11)");
    CHECK_INI_ERROR("[table t]\ncompression = lzo\n",
                    "2: compression: 'lzo' is not a compression (zstd[:1-22], snappy, lz4_raw, gzip[:1-9], "
                    "brotli[:0-11], none)");
    CHECK_INI_ERROR("[table t]\npartitions = dt:float\n",
                    "2: partitions: 'float' is not a partition type (int64, date, string)");
    CHECK_INI_ERROR("[table t]\npartitions = :date\n",
                    "2: partitions: '' is not a partition column name (item 1)");
    CHECK_INI_ERROR("[table t]\npartitions = a=b\n",
                    "2: partitions: 'a=b' is not a partition column name (item 1)");
    CHECK_INI_ERROR("[table t]\npartitions = dt, dt:date\n", "2: partitions: column 'dt' is listed twice");
    CHECK_INI_ERROR("[table t]\nbloom_filter = a,,b\n", "2: bloom_filter: empty name in the list (item 2)");
    CHECK_INI_ERROR("[table t]\nsort_by = a,\n", "2: sort_by: empty name in the list (item 2)");
    CHECK_INI_ERROR("[table t]\nsort_by = ts, ts\n", "2: sort_by: column 'ts' is listed twice");
    CHECK_INI_ERROR("[table t]\nrow_group_rows = 0\n", "2: row_group_rows: 0 is out of range (1..2147483647)");
    CHECK_INI_ERROR("[table t]\nrow_group_rows = 1M\n", "2: row_group_rows: '1M' is not a number");
    CHECK_INI_ERROR("[table t]\npage_size = 2GiB\n", "2: page_size: '2GiB' is out of range (1 byte..1GiB)");
    CHECK_INI_ERROR("[table t]\npage_size = lots\n",
                    "2: page_size: 'lots' is not a size (e.g. 100000, 512MiB, 2GiB, 1.5G)");
    CHECK_INI_ERROR("[table t]\ndictionary = maybe\n",
                    "2: dictionary: 'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)");

    /* Empty lists are no columns. */
    pqfs_config c;
    CHECK_EQ_INT(load(&c, "[table t]\nbloom_filter =\nsort_by =   ; none\npartitions=\n"), 0);
    CHECK_EQ_INT(c.tables[0].n_bloom_filter, 0);
    CHECK_EQ_INT(c.tables[0].n_sort_by, 0);
    CHECK_EQ_INT(c.tables[0].n_partitions, 0);
    pqfs_config_free(&c);
}

/* ---------------------------------------------------------------- errors and lines */

static void test_errors(void)
{
    CHECK_INI_ERROR("; a\n[pqfs]\nsource = /data\n\n; b\n\nread_only = false\nthreads = 4\n"
                    "cache_size = 2GiB\n\nlog_level = info\ntreads = 4\n",
                    "12: unknown key 'treads' in [pqfs]");
    CHECK_INI_ERROR("[pqfs]\nsource = /x\n[foo]\nbar = 1\n", "3: unknown section [foo]");
    CHECK_INI_ERROR("[pqfs]\n[  foo bar ] ; empty\n", "2: unknown section [foo bar]");
    CHECK_INI_ERROR("[pqfs]\nthreads = 1\n[pqfs extra]\n", "3: unknown section [pqfs extra]");
    CHECK_INI_ERROR("[pqfs]\n\n\n\n\nsource=/x\nthreads = abc\n", "7: threads: 'abc' is not a number");
    CHECK_INI_ERROR("[pqfs]\nthreads = -1\n", "2: threads: -1 is out of range (0..1024)");
    CHECK_INI_ERROR("[pqfs]\nthreads = 1025\n", "2: threads: 1025 is out of range (0..1024)");
    CHECK_INI_ERROR("[pqfs]\nthreads = 99999999999999999999\n",
                    "2: threads: 99999999999999999999 is out of range (0..1024)");
    CHECK_INI_ERROR("[pqfs]\nthreads = 4;5\n", "2: threads: '4;5' is not a number");
    CHECK_INI_ERROR("[pqfs]\nthreads =\n", "2: threads: '' is not a number");
    CHECK_INI_ERROR("[pqfs]\nread_only = maybe\n",
                    "2: read_only: 'maybe' is not a boolean (true/false, yes/no, on/off, 1/0)");
    CHECK_INI_ERROR("[pqfs]\ncache_size = 0\n", "2: cache_size: must be more than 0");
    CHECK_INI_ERROR("[pqfs]\ncache_size = big\n",
                    "2: cache_size: 'big' is not a size (e.g. 100000, 512MiB, 2GiB, 1.5G)");
    CHECK_INI_ERROR("[pqfs]\nmetadata_ttl = soon\n",
                    "2: metadata_ttl: 'soon' is not a duration (e.g. 500ms, 5s, 2m, 1h, 0)");
    CHECK_INI_ERROR("[pqfs]\nlog_level = loud\n",
                    "2: log_level: 'loud' is not a log level (error, warn, info, debug)");
    CHECK_INI_ERROR("[pqfs]\nsource =\n", "2: source: empty value");
    CHECK_INI_ERROR("[pqfs]\ncache_dir = \"\"\n", "2: cache_dir: empty value");
    CHECK_INI_ERROR("[pqfs]\nsource = ftp://host/lake\n",
                    "2: source: unsupported scheme 'ftp' (use a path, http://, https:// or s3://)");
    CHECK_INI_ERROR("[pqfs]\nsource = s3:///prefix\n", "2: source: 's3:///prefix' has no bucket (s3://bucket/prefix)");
    CHECK_INI_ERROR("[pqfs]\nsource = https://\n", "2: source: 'https://' has no host");
    CHECK_INI_ERROR("[s3]\nendpoint = 127.0.0.1:9000\n",
                    "2: endpoint: '127.0.0.1:9000' is not an http:// or https:// URL with a host");
    /* Credentials in the endpoint: refused, and not echoed. */
    CHECK_INI_ERROR("[s3]\nendpoint = http://u:endpointpw@127.0.0.1:9000\n",
                    "2: endpoint: a URL with credentials (user:password@) is not supported; give access_key_id and "
                    "secret_access_key");
    CHECK_INI_ERROR("[s3]\npath_style = sometimes\n",
                    "2: path_style: 'sometimes' is not a boolean (true/false, yes/no, on/off, 1/0)");

    /* Duplicates: keys in one section, aliases, sections. */
    CHECK_INI_ERROR("[pqfs]\nthreads = 1\nsource = /x\nthreads = 2\n",
                    "4: duplicate key 'threads' in [pqfs] (first at line 2)");
    CHECK_INI_ERROR("[table ev]\npage_index = true\npage_statistics = false\n",
                    "3: duplicate key 'page_statistics' in [table ev] (first at line 2)");
    CHECK_INI_ERROR("[s3]\nregion = a\n[pqfs]\n[s3]\n", "4: duplicate section [s3] (first at line 1)");
    CHECK_INI_ERROR("[pqfs]\n[table a]\n[table b]\n\n[table a]\n",
                    "5: duplicate section [table a] (first at line 2)");
    CHECK_INI_ERROR("[table a]\n[table \"a\"]\n", "2: duplicate section [table a] (first at line 1)");
    /* The same key in two different sections is fine. */
    pqfs_config c;
    CHECK_EQ_INT(load(&c, "[table a]\nsort_by = x\n[table b]\nsort_by = y\n"), 0);
    pqfs_config_free(&c);

    /* Syntax. */
    CHECK_INI_ERROR("[pqfs]\nthreads 4\n", "2: expected 'key = value' or a [section] header");
    CHECK_INI_ERROR("[pqfs]\nsource ;= /x\n", "2: expected 'key = value' or a [section] header");
    CHECK_INI_ERROR("\n[pqfs\n", "2: section header without ']'");
    CHECK_INI_ERROR("[pqfs] threads = 1\n", "1: unexpected text after ']'");
    CHECK_INI_ERROR("source = /x\n[pqfs]\n",
                    "1: key 'source' outside any section (put it under [pqfs], [s3] or [table NAME])");
    CHECK_INI_ERROR("[table]\n", "1: a table section needs a name: [table NAME]");
    CHECK_INI_ERROR("[table a/b]\n", "1: a table name cannot contain '/'");
    CHECK_INI_ERROR("[table ..]\n", "1: a table name cannot be '.' or '..'");
    CHECK_INI_ERROR("[s3]\nbucket = b\n", "2: unknown key 'bucket' in [s3]");
    CHECK_INI_ERROR("[table ev]\ncodec = zstd\n", "2: unknown key 'codec' in [table ev]");

    /* Line numbers survive CRLF, a BOM, comments and blank lines. */
    CHECK_INI_ERROR("\xEF\xBB\xBF[pqfs]\r\n# hash comment\r\n; semicolon comment\r\n\r\nthreads = x\r\n",
                    "5: threads: 'x' is not a number");
    /* ... and long lines, which inih's own 200-byte buffer would split. */
    {
        char text[2048];
        char pad[900];
        memset(pad, 'a', sizeof pad - 1);
        pad[sizeof pad - 1] = '\0';
        snprintf(text, sizeof text, "[pqfs]\n; %s\ncache_dir = /%s\n\nthreads = many\n", pad, pad);
        CHECK_INI_ERROR(text, "5: threads: 'many' is not a number");
        snprintf(text, sizeof text, "[pqfs]\nsource = /x\n  %s\n", pad);
        CHECK_INI_ERROR(text, "3: expected 'key = value' or a [section] header");
        snprintf(text, sizeof text, "[pqfs]\n%s = 1\n", pad);
        CHECK(load(&c, text) == -1 && strstr(err.msg, ":2: unknown key 'aaaa") != NULL);
        pqfs_config_free(&c);
        snprintf(text, sizeof text, "[table %s]\nsort_by = x\n[table %s]\n", pad, pad);
        CHECK(load(&c, text) == -1 && strstr(err.msg, ":3: duplicate section [table aaa") != NULL);
        pqfs_config_free(&c);
        /* A long value keeps inih's comment rules: "key = ;x" is an empty value. */
        snprintf(text, sizeof text, "[s3]\nsession_token = ;%s\naccess_key_id = %s ;c\n", pad, pad);
        CHECK_EQ_INT(load(&c, text), 0);
        CHECK(c.s3_session_token == NULL);
        CHECK_EQ_STR(c.s3_access_key_id, pad);
        pqfs_config_free(&c);
    }

    /* A NUL byte: not a text file. */
    static const char with_nul[] = "[pqfs]\nsource = /x\nthr\0eads = 1\n";
    write_text(ini_path, with_nul, sizeof with_nul - 1);
    pqfs_config_init(&c);
    CHECK_EQ_INT(pqfs_config_load_ini(&c, ini_path, &err), -1);
    char want[600];
    snprintf(want, sizeof want, "%s:3: NUL byte (not a text file)", ini_path);
    CHECK_EQ_STR(err.msg, want);
    pqfs_config_free(&c);

    /* Files that cannot be read. */
    pqfs_config_init(&c);
    CHECK_EQ_INT(pqfs_config_load_ini(&c, in_tmp("missing.ini"), &err), -1);
    snprintf(want, sizeof want, "%s: No such file or directory", in_tmp("missing.ini"));
    CHECK_EQ_STR(err.msg, want);
    CHECK_EQ_INT(pqfs_config_load_ini(&c, tmpdir, &err), -1);
    snprintf(want, sizeof want, "%s: Is a directory", tmpdir);
    CHECK_EQ_STR(err.msg, want);
    pqfs_config_free(&c);

    /* Errors are pq_errors of class "usage" (what the daemon exits 2 for);
     * a NULL one is allowed. */
    write_ini("[nope]\n");
    pqfs_config_init(&c);
    CHECK_EQ_INT(pqfs_config_load_ini(&c, ini_path, &err), -1);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK_EQ_INT(pqfs_config_load_ini(&c, ini_path, NULL), -1);
    pqfs_config_free(&c);
}

static void test_comments_and_quotes(void)
{
    pqfs_config c;
    CHECK_EQ_INT(load(&c, "[pqfs]                      ; the mount\n"
                          "source = /data/lake            ; or https://host/lake, s3://bucket/prefix\n"
                          "read_only = false\n"
                          "threads = 0                    ; 0 = number of cores\n"
                          "cache_dir = /var/cache/pqfs    ; result and staging files; wiped at mount\n"
                          "cache_size = 2GiB\n"
                          "metadata_ttl = 5s              ; how long listings and footers are trusted\n"
                          "log_level = info               ; error | warn | info | debug\n"
                          "\n"
                          "[s3]\n"
                          "endpoint = http://127.0.0.1:9000\n"
                          "region = us-east-1\n"
                          "path_style = true\n"
                          "; access_key_id, secret_access_key, session_token: here, or AWS_* environment\n"
                          "\n"
                          "[table events]\n"
                          "partitions = dt:date, region:string\n"
                          "compression = zstd:3\n"
                          "row_group_rows = 1048576\n"
                          "bloom_filter = user_id\n"
                          "sort_by = ts\n"),
                 0);
    CHECK_EQ_STR(err.msg, "");
    CHECK_EQ_STR(c.source, "/data/lake");
    CHECK_EQ_INT(c.threads, 0);
    CHECK_EQ_STR(c.cache_dir, "/var/cache/pqfs");
    CHECK(c.metadata_ttl_ms == 5000);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_INFO);
    CHECK_EQ_STR(c.s3_endpoint, "http://127.0.0.1:9000");
    CHECK(c.s3_path_style);
    CHECK_EQ_INT(c.n_tables, 1);
    CHECK_EQ_INT(c.tables[0].compression_level, 3);
    CHECK_EQ_INT(c.tables[0].n_partitions, 2);
    pqfs_config_free(&c);

    /* ';' without whitespace before it belongs to the value; '#' only starts
     * whole-line comments; indented lines are keys, not continuations;
     * quotes keep the spaces at a value's ends (but " ;" still starts a
     * comment: inih cuts it before the quotes are seen). */
    CHECK_EQ_INT(load(&c, "  [pqfs]\n"
                          "    source = \"/data/my lake \"\n"
                          "    cache_dir = /c;d#e\n"
                          "\tthreads = 2\n"
                          "  # comment\n"
                          "[s3]\n"
                          "secret_access_key = abc;def\n"),
                 0);
    CHECK_EQ_STR(c.source, "/data/my lake ");
    CHECK_EQ_STR(c.cache_dir, "/c;d#e");
    CHECK_EQ_INT(c.threads, 2);
    CHECK_EQ_STR(c.s3_secret_access_key, "abc;def");
    pqfs_config_free(&c);

    /* Quoted, with a comment after the closing quote. */
    CHECK_EQ_INT(load(&c, "[pqfs]\nsource = \"/q\"  ; c\nlog_level = \"warn\"\n"), 0);
    CHECK_EQ_STR(c.source, "/q");
    CHECK_EQ_INT(c.log_level, PQFS_LOG_WARN);
    pqfs_config_free(&c);

    /* Relative paths in the ini are taken from the ini's directory. */
    CHECK_EQ_INT(load(&c, "[pqfs]\nsource = ./sub/lake/\ncache_dir = cache\n"), 0);
    char want[512];
    snprintf(want, sizeof want, "%s/sub/lake", tmpdir);
    CHECK_EQ_STR(c.source, want);
    snprintf(want, sizeof want, "%s/cache", tmpdir);
    CHECK_EQ_STR(c.cache_dir, want);
    pqfs_config_free(&c);

    /* Sources: URLs keep their text apart from the scheme's case and trailing
     * slashes; file:// is a path. */
    static const struct {
        const char *in, *out;
    } sources[] = {
        {"s3://bucket/prefix/", "s3://bucket/prefix"},
        {"S3://Bucket/Prefix", "s3://Bucket/Prefix"},
        {"s3://bucket", "s3://bucket"},
        {"s3://bucket/", "s3://bucket"},
        {"HTTPS://host:8443/lake//", "https://host:8443/lake"},
        {"http://host", "http://host"},
        {"file:///data/lake", "/data/lake"},
        {"/", "/"},
        {"/data//", "/data"},
    };
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "[pqfs]\nsource = %s\n", sources[i].in);
        CHECK_EQ_INT(load(&c, text), 0);
        CHECK_EQ_STR(c.source, sources[i].out);
        pqfs_config_free(&c);
    }
    CHECK_INI_ERROR("[pqfs]\nsource = file://host/x\n", "2: source: 'file://host/x': file:// takes an absolute path");
}

/* ---------------------------------------------------------------- precedence */

static void test_precedence(void)
{
    write_ini("[pqfs]\n"
              "source = /ini/lake\n"
              "read_only = false\n"
              "threads = 1\n"
              "cache_dir = /ini/cache\n"
              "cache_size = 1GiB\n"
              "metadata_ttl = 1s\n"
              "log_level = error\n"
              "[s3]\n"
              "endpoint = http://ini:9000\n"
              "region = ini-region\n"
              "access_key_id = INIKEY\n"
              "secret_access_key = INISECRET\n"
              "session_token = INITOKEN\n");
    char *env[] = {"PQFS_SOURCE=/env/lake",
                   "PQFS_READ_ONLY=true",
                   "PQFS_THREADS=2",
                   "PQFS_CACHE_DIR=/env/cache",
                   "PQFS_CACHE_SIZE=2GiB",
                   "PQFS_METADATA_TTL=2s",
                   "PQFS_LOG_LEVEL=warn",
                   "AWS_ENDPOINT_URL=http://env:9000",
                   "AWS_DEFAULT_REGION=env-default-region",
                   "AWS_REGION=env-region",
                   "AWS_ACCESS_KEY_ID=ENVKEY",
                   "AWS_SECRET_ACCESS_KEY=ENVSECRET",
                   NULL};
    char *no_env[] = {NULL};
    pqfs_config c;

    /* ini only */
    char *argv_ini[] = {"pqfs", ini_path, "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_ini, no_env), 0);
    CHECK_EQ_STR(err.msg, "");
    CHECK_EQ_STR(c.source, "/ini/lake");
    CHECK(!c.read_only);
    CHECK_EQ_INT(c.threads, 1);
    CHECK_EQ_STR(c.cache_dir, "/ini/cache");
    CHECK(c.cache_size == UINT64_C(1) << 30);
    CHECK(c.metadata_ttl_ms == 1000);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_ERROR);
    CHECK_EQ_STR(c.s3_endpoint, "http://ini:9000");
    CHECK_EQ_STR(c.s3_region, "ini-region");
    CHECK_EQ_STR(c.s3_access_key_id, "INIKEY");
    CHECK_EQ_STR(c.s3_secret_access_key, "INISECRET");
    CHECK_EQ_STR(c.s3_session_token, "INITOKEN");
    CHECK_EQ_STR(c.ini_path, ini_path);
    CHECK_EQ_STR(c.mountpoint, "/mnt/lake");
    pqfs_config_free(&c);

    /* environment over ini */
    CHECK_EQ_INT(run(&c, argv_ini, env), 0);
    CHECK_EQ_STR(c.source, "/env/lake");
    CHECK(c.read_only);
    CHECK_EQ_INT(c.threads, 2);
    CHECK_EQ_STR(c.cache_dir, "/env/cache");
    CHECK(c.cache_size == UINT64_C(2) << 30);
    CHECK(c.metadata_ttl_ms == 2000);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_WARN);
    CHECK_EQ_STR(c.s3_endpoint, "http://env:9000");
    CHECK_EQ_STR(c.s3_region, "env-region");
    CHECK_EQ_STR(c.s3_access_key_id, "ENVKEY");
    CHECK_EQ_STR(c.s3_secret_access_key, "ENVSECRET");
    CHECK(c.s3_session_token == NULL); /* the ini's token belonged to the ini's key */
    pqfs_config_free(&c);

    /* -o over environment over ini */
    char *argv_o[] = {"pqfs", ini_path, "/mnt/lake", "-o",
                      "source=/o/lake,read_only=false,threads=3,cache_dir=/o/cache",
                      "-o", "cache_size=3GiB,metadata_ttl=3s,log_level=debug", NULL};
    CHECK_EQ_INT(run(&c, argv_o, env), 0);
    CHECK_EQ_STR(err.msg, "");
    CHECK_EQ_STR(c.source, "/o/lake");
    CHECK(!c.read_only);
    CHECK_EQ_INT(c.threads, 3);
    CHECK_EQ_STR(c.cache_dir, "/o/cache");
    CHECK(c.cache_size == UINT64_C(3) << 30);
    CHECK(c.metadata_ttl_ms == 3000);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_DEBUG);
    CHECK_EQ_INT(c.n_fuse_opts, 0);
    pqfs_config_free(&c);

    /* -o over ini without environment; the last -o of a key wins. */
    char *argv_o2[] = {"pqfs", "-o", "threads=5", ini_path, "-othreads=6", "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_o2, no_env), 0);
    CHECK_EQ_INT(c.threads, 6);
    CHECK_EQ_STR(c.source, "/ini/lake");
    pqfs_config_free(&c);

    /* A lake SOURCE argument is command line: over PQFS_SOURCE, under -o source=. */
    char *argv_lake[] = {"pqfs", "/arg/lake", "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_lake, env), 0);
    CHECK_EQ_STR(c.source, "/arg/lake");
    CHECK(c.ini_path == NULL);
    pqfs_config_free(&c);
    char *argv_lake_o[] = {"pqfs", "/arg/lake", "/mnt/lake", "-o", "source=s3://b/p", NULL};
    CHECK_EQ_INT(run(&c, argv_lake_o, env), 0);
    CHECK_EQ_STR(c.source, "s3://b/p");
    pqfs_config_free(&c);

    /* AWS_DEFAULT_REGION when AWS_REGION is unset or empty; an empty variable
     * is unset; AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL; a token without
     * a key id in the environment leaves the ini's credentials alone. */
    char *env2[] = {"AWS_REGION=", "AWS_DEFAULT_REGION=dflt", "PQFS_THREADS=",
                    "AWS_ENDPOINT_URL=http://general", "AWS_ENDPOINT_URL_S3=https://s3specific",
                    "AWS_SESSION_TOKEN=ENVTOKEN", NULL};
    CHECK_EQ_INT(run(&c, argv_ini, env2), 0);
    CHECK_EQ_STR(c.s3_region, "dflt");
    CHECK_EQ_INT(c.threads, 1);
    CHECK_EQ_STR(c.s3_endpoint, "https://s3specific");
    CHECK_EQ_STR(c.s3_access_key_id, "INIKEY");
    CHECK_EQ_STR(c.s3_session_token, "INITOKEN");
    pqfs_config_free(&c);

    /* Bad environment values name the variable. */
    char *env_bad[] = {"PQFS_THREADS=abc", NULL};
    CHECK_EQ_INT(run(&c, argv_ini, env_bad), -1);
    CHECK_EQ_STR(err.msg, "PQFS_THREADS: threads: 'abc' is not a number");
    pqfs_config_free(&c);
    char *env_bad2[] = {"AWS_ENDPOINT_URL=minio:9000", NULL};
    CHECK_EQ_INT(run(&c, argv_ini, env_bad2), -1);
    CHECK_EQ_STR(err.msg, "AWS_ENDPOINT_URL: endpoint: 'minio:9000' is not an http:// or https:// URL with a host");
    pqfs_config_free(&c);
    char *argv_bad[] = {"pqfs", ini_path, "/mnt", "-o", "metadata_ttl=soon", NULL};
    CHECK_EQ_INT(run(&c, argv_bad, no_env), -1);
    CHECK_EQ_STR(err.msg, "-o: metadata_ttl: 'soon' is not a duration (e.g. 500ms, 5s, 2m, 1h, 0)");
    pqfs_config_free(&c);
    /* An error in the ini stops from_args with the ini's message. */
    write_ini("[pqfs]\ntreads = 4\n");
    CHECK_EQ_INT(run(&c, argv_ini, no_env), -1);
    char want[600];
    snprintf(want, sizeof want, "%s:2: unknown key 'treads' in [pqfs]", ini_path);
    CHECK_EQ_STR(err.msg, want);
    pqfs_config_free(&c);
}

/* ---------------------------------------------------------------- command line */

static void check_fuse_opts(const pqfs_config *c, const char *const *want, int n)
{
    CHECK_EQ_INT(c->n_fuse_opts, n);
    for (int i = 0; i < n && i < c->n_fuse_opts; i++) CHECK_EQ_STR(c->fuse_opts[i], want[i]);
}

static void test_command_line(void)
{
    pqfs_config c;
    char *no_env[] = {NULL};

    /* The fstab form, as mount.fuse3 runs it. */
    char fstab_ini[256];
    snprintf(fstab_ini, sizeof fstab_ini, "%s/lake.ini", tmpdir);
    write_ini("[pqfs]\nsource = /data/lake\nthreads = 9\n");
    char *argv_fstab[] = {"pqfs", fstab_ini, "/mnt/lake", "-o", "defaults,_netdev,allow_other,threads=2", NULL};
    CHECK_EQ_INT(run(&c, argv_fstab, no_env), 0);
    CHECK_EQ_STR(err.msg, "");
    CHECK_EQ_STR(c.source, "/data/lake");
    CHECK_EQ_STR(c.mountpoint, "/mnt/lake");
    CHECK_EQ_INT(c.threads, 2);
    CHECK(!c.read_only);
    CHECK(!c.foreground);
    static const char *const fstab_opts[] = {"allow_other"};
    check_fuse_opts(&c, fstab_opts, 1);
    pqfs_config_free(&c);

    /* What /sbin/mount.fuse3 (libfuse 3.14) actually runs for that fstab line
     * with x-systemd.automount and comment=: it drops _netdev, noauto, user
     * and nofail itself, keeps the rest and adds dev,suid (as root). */
    char *argv_helper[] = {"pqfs", fstab_ini, "/mnt/lake", "-o",
                           "defaults,allow_other,x-systemd.automount,rw,threads=2,comment=x,dev,suid",
                           NULL};
    CHECK_EQ_INT(run(&c, argv_helper, no_env), 0);
    CHECK_EQ_INT(c.threads, 2);
    static const char *const helper_opts[] = {"allow_other", "dev", "suid"};
    check_fuse_opts(&c, helper_opts, 3);
    pqfs_config_free(&c);

    /* mount(8)-only options are dropped, ro is read_only and FUSE's, the rest
     * goes to FUSE unchanged (escapes included). */
    char *argv_opts[] = {"pqfs", "-o",
                         "rw,ro,noauto,auto,user,nouser,users,owner,group,nofail,user=bob,"
                         "x-systemd.automount,x-systemd.idle-timeout=60,comment=hi",
                         "/data/lake", "-o", "default_permissions,max_read=131072,,fsname=a\\,b",
                         "/mnt/lake", "-oallow_other", NULL};
    CHECK_EQ_INT(run(&c, argv_opts, no_env), 0);
    CHECK(c.read_only);
    static const char *const more_opts[] = {"ro", "default_permissions", "max_read=131072", "fsname=a\\,b",
                                            "allow_other"};
    check_fuse_opts(&c, more_opts, 5);
    pqfs_config_free(&c);

    /* Bare read_only is true; an escaped comma in a pqfs value is a comma;
     * a misspelt key is not ours, so it goes to FUSE (which will object). */
    char *argv_bare[] = {"pqfs", "/data/lake", "/mnt/lake", "-o", "read_only,source=/data/a\\,b,treads=4", NULL};
    CHECK_EQ_INT(run(&c, argv_bare, no_env), 0);
    CHECK(c.read_only);
    CHECK_EQ_STR(c.source, "/data/a,b");
    static const char *const typo_opts[] = {"treads=4"};
    check_fuse_opts(&c, typo_opts, 1);
    pqfs_config_free(&c);

    /* -f, -d, "--", and relative paths made absolute. */
    char cwd[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    char *argv_flags[] = {"pqfs", "-d", "-o", "log_level=warn", "--", "rel/lake", "-mnt", NULL};
    CHECK_EQ_INT(run(&c, argv_flags, no_env), 0);
    CHECK(c.foreground);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_WARN); /* -o beats -d's debug */
    static const char *const debug_opts[] = {"debug"};
    check_fuse_opts(&c, debug_opts, 1);
    char want[700];
    snprintf(want, sizeof want, "%s/rel/lake", cwd);
    CHECK_EQ_STR(c.source, want);
    snprintf(want, sizeof want, "%s/-mnt", cwd);
    CHECK_EQ_STR(c.mountpoint, want);
    pqfs_config_free(&c);
    char *argv_f[] = {"pqfs", "/data/lake", "-f", "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_f, no_env), 0);
    CHECK(c.foreground);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_INFO);
    CHECK_EQ_INT(c.n_fuse_opts, 0);
    pqfs_config_free(&c);

    /* One argument is the mountpoint; the source comes from elsewhere. */
    char *env_source[] = {"PQFS_SOURCE=s3://bucket/lake", NULL};
    char *argv_one[] = {"pqfs", "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_one, env_source), 0);
    CHECK_EQ_STR(c.source, "s3://bucket/lake");
    CHECK_EQ_STR(c.mountpoint, "/mnt/lake");
    pqfs_config_free(&c);
    CHECK_EQ_INT(run(&c, argv_one, no_env), -1);
    CHECK_EQ_STR(err.msg, "no source: give SOURCE (a lake or an .ini file), source = in [pqfs], PQFS_SOURCE or -o source=");
    pqfs_config_free(&c);
    char *argv_none[] = {"pqfs", NULL};
    CHECK_EQ_INT(run(&c, argv_none, env_source), -1);
    CHECK_EQ_STR(err.msg, "no mountpoint: usage: pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]");
    pqfs_config_free(&c);
    /* An ini without a source and no other source. */
    write_ini("[pqfs]\nthreads = 1\n");
    char *argv_nosrc[] = {"pqfs", ini_path, "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_nosrc, no_env), -1);
    CHECK(strncmp(err.msg, "no source:", 10) == 0);
    pqfs_config_free(&c);

    /* An existing regular file is an ini whatever its name. */
    char *conf = in_tmp("lake.conf");
    write_text(conf, "[pqfs]\nsource = /from/conf\n", 27);
    char *argv_conf[] = {"pqfs", conf, "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_conf, no_env), 0);
    CHECK_EQ_STR(c.source, "/from/conf");
    CHECK_EQ_STR(c.ini_path, conf);
    pqfs_config_free(&c);
    /* A missing *.ini is an error, not a lake. */
    char *argv_missing[] = {"pqfs", in_tmp("gone.ini"), "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_missing, no_env), -1);
    snprintf(want, sizeof want, "%s: No such file or directory", in_tmp("gone.ini"));
    CHECK_EQ_STR(err.msg, want);
    pqfs_config_free(&c);
    /* A directory is a lake. */
    char *argv_dir[] = {"pqfs", tmpdir, "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_dir, no_env), 0);
    CHECK_EQ_STR(c.source, tmpdir);
    CHECK(c.ini_path == NULL);
    pqfs_config_free(&c);

    /* Usage errors, help and version. */
    char *argv_unknown[] = {"pqfs", "/a", "/b", "-x", NULL};
    CHECK_EQ_INT(run(&c, argv_unknown, no_env), -1);
    CHECK_EQ_STR(err.msg, "unknown option '-x' (see pqfs --help)");
    pqfs_config_free(&c);
    char *argv_noarg[] = {"pqfs", "/a", "/b", "-o", NULL};
    CHECK_EQ_INT(run(&c, argv_noarg, no_env), -1);
    CHECK_EQ_STR(err.msg, "option -o needs an argument (-o opt[,opt...])");
    pqfs_config_free(&c);
    char *argv_three[] = {"pqfs", "/a", "/b", "/c", "/d", NULL};
    CHECK_EQ_INT(run(&c, argv_three, no_env), -1);
    CHECK_EQ_STR(err.msg, "unexpected argument '/c': usage: pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]");
    pqfs_config_free(&c);
    char *argv_bare_threads[] = {"pqfs", "/a", "/b", "-o", "threads", NULL};
    CHECK_EQ_INT(run(&c, argv_bare_threads, no_env), -1);
    CHECK_EQ_STR(err.msg, "-o: threads: needs a value (threads=...)");
    pqfs_config_free(&c);
    char *argv_zero_cache[] = {"pqfs", "/a", "/b", "-o", "cache_size=0", NULL};
    CHECK_EQ_INT(run(&c, argv_zero_cache, no_env), -1);
    CHECK_EQ_STR(err.msg, "-o: cache_size: must be more than 0");
    pqfs_config_free(&c);
    char *argv_scheme[] = {"pqfs", "gs://bucket/x", "/b", NULL};
    CHECK_EQ_INT(run(&c, argv_scheme, no_env), -1);
    CHECK_EQ_STR(err.msg, "SOURCE: source: unsupported scheme 'gs' (use a path, http://, https:// or s3://)");
    pqfs_config_free(&c);
    char *argv_help[] = {"pqfs", "/a", "--help", "-x", NULL};
    CHECK_EQ_INT(run(&c, argv_help, no_env), -1); /* -x is still an error */
    pqfs_config_free(&c);
    char *argv_help2[] = {"pqfs", "-h", NULL};
    CHECK_EQ_INT(run(&c, argv_help2, no_env), PQFS_CONFIG_HELP);
    pqfs_config_free(&c);
    char *argv_version[] = {"pqfs", "--version", NULL};
    CHECK_EQ_INT(run(&c, argv_version, no_env), PQFS_CONFIG_VERSION);
    pqfs_config_free(&c);
    char *argv_v[] = {"pqfs", "/a", "/b", "-V", NULL};
    CHECK_EQ_INT(run(&c, argv_v, no_env), PQFS_CONFIG_VERSION);
    pqfs_config_free(&c);
    CHECK(strstr(pqfs_config_usage(), "usage: pqfs SOURCE MOUNTPOINT") != NULL);
}

/* ---------------------------------------------------------------- set and validate */

static void test_set_and_validate(void)
{
    pqfs_config c;
    pqfs_config_init(&c);
    CHECK_EQ_INT(pqfs_config_set(&c, "threads", "16", "-o", &err), 0);
    CHECK_EQ_INT(c.threads, 16);
    CHECK_EQ_INT(pqfs_config_set(&c, "read_only", NULL, NULL, &err), 0);
    CHECK(c.read_only);
    CHECK_EQ_INT(pqfs_config_set(&c, "READ_ONLY", "off", NULL, &err), 0);
    CHECK(!c.read_only);
    CHECK_EQ_INT(pqfs_config_set(&c, "metadata_ttl", "250ms", NULL, &err), 0);
    CHECK(c.metadata_ttl_ms == 250);
    CHECK_EQ_INT(pqfs_config_set(&c, "metadata_ttl", "0", NULL, &err), 0);
    CHECK(c.metadata_ttl_ms == 0);
    CHECK_EQ_INT(pqfs_config_set(&c, "cache_size", "1.5G", NULL, &err), 0);
    CHECK(c.cache_size == UINT64_C(3) << 29);
    CHECK_EQ_INT(pqfs_config_set(&c, "log_level", "ERROR", NULL, &err), 0);
    CHECK_EQ_INT(c.log_level, PQFS_LOG_ERROR);
    CHECK_EQ_INT(pqfs_config_set(&c, "cache_dir", "/x/", NULL, &err), 0);
    CHECK_EQ_STR(c.cache_dir, "/x");
    CHECK_EQ_INT(pqfs_config_set(&c, "source", "s3://b", NULL, &err), 0);
    CHECK_EQ_STR(c.source, "s3://b");

    CHECK_EQ_INT(pqfs_config_set(&c, "bogus", "1", NULL, &err), -1);
    CHECK_EQ_STR(err.msg, "-o: unknown key 'bogus' in [pqfs]");
    CHECK_EQ_INT(pqfs_config_set(&c, "endpoint", "http://x", "-o", &err), -1);
    CHECK_EQ_STR(err.msg, "-o: unknown key 'endpoint' in [pqfs]"); /* [s3] keys are not -o options */
    CHECK_EQ_INT(pqfs_config_set(&c, "threads", "lots", "PQFS_THREADS", &err), -1);
    CHECK_EQ_STR(err.msg, "PQFS_THREADS: threads: 'lots' is not a number");
    CHECK_EQ_INT(c.threads, 16); /* a failed set changes nothing */

    /* validate: mountpoint missing, then fields out of range set by hand. */
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "no mountpoint: usage: pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]");
    c.mountpoint = strdup("/mnt");
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), 0);
    c.threads = 2000;
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "threads: 2000 is out of range (0..1024)");
    c.threads = 0;
    c.cache_size = 0;
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "cache_size: must be more than 0");
    c.cache_size = 1;
    c.table_defaults.row_group_rows = 0;
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "[table defaults] row_group_rows: 0 is out of range (1..2147483647)");
    c.table_defaults.row_group_rows = 1;

    /* Credentials must pair up for an s3:// source. */
    c.s3_access_key_id = strdup("K");
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "s3: access_key_id is set but secret_access_key is not");
    c.s3_secret_access_key = strdup("S");
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), 0);
    free(c.s3_access_key_id);
    c.s3_access_key_id = NULL;
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "s3: secret_access_key or session_token without access_key_id");

    /* A relative path set by hand is not accepted. */
    free(c.s3_secret_access_key);
    c.s3_secret_access_key = NULL;
    free(c.source);
    c.source = strdup("relative");
    CHECK_EQ_INT(pqfs_config_validate(&c, &err), -1);
    CHECK_EQ_STR(err.msg, "source: 'relative' is not an absolute path");
    pqfs_config_free(&c);

    /* The endpoint default follows the region. */
    char *argv[] = {"pqfs", "s3://bucket/p", "/mnt", NULL};
    char *env[] = {"AWS_REGION=eu-central-1", NULL};
    CHECK_EQ_INT(run(&c, argv, env), 0);
    CHECK_EQ_STR(c.s3_endpoint, "https://s3.eu-central-1.amazonaws.com");
    pqfs_config_free(&c);
}

/* ---------------------------------------------------------------- dump */

/* uid=, gid=, dir_mode=, file_mode= (remote lakes) and allow_other. */
static void test_owner_options(void)
{
    pqfs_config c;
    char *no_env[] = {NULL};
    char *argv_ok[] = {"pqfs", "s3://bkt/lake", "/mnt/lake", "-o", "allow_other,uid=1000,gid=50,dir_mode=0750,file_mode=640", NULL};
    CHECK_EQ_INT(run(&c, argv_ok, no_env), 0);
    CHECK_EQ_STR(err.msg, "");
    CHECK(c.multi_user);
    CHECK(c.uid == 1000 && c.gid == 50);
    CHECK_EQ_INT(c.dir_mode, 0750);
    CHECK_EQ_INT(c.file_mode, 0640);
    static const char *const opts[] = {"allow_other"};
    check_fuse_opts(&c, opts, 1);
    pqfs_config_free(&c);
    char *argv_root[] = {"pqfs", "s3://bkt/lake", "/mnt/lake", "-o", "allow_root", NULL};
    CHECK_EQ_INT(run(&c, argv_root, no_env), 0);
    CHECK(c.multi_user && c.uid == -1 && c.dir_mode == -1);
    pqfs_config_free(&c);
    char *argv_plain[] = {"pqfs", "s3://bkt/lake", "/mnt/lake", NULL};
    CHECK_EQ_INT(run(&c, argv_plain, no_env), 0);
    CHECK(!c.multi_user);
    pqfs_config_free(&c);
    static const char *const bad[][2] = {
        {"dir_mode=0789", "not an octal mode"}, {"file_mode=12345", "not an octal mode"}, {"dir_mode=", "not an octal mode"},
        {"uid=alice", "not a number"},          {"gid=-1", "out of range"},               {"uid=4294967295", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char opt[64];
        snprintf(opt, sizeof opt, "%s", bad[i][0]);
        char *argv_bad[] = {"pqfs", "s3://bkt/lake", "/mnt/lake", "-o", opt, NULL};
        CHECK_EQ_INT(run(&c, argv_bad, no_env), -1);
        CHECK(strstr(err.msg, bad[i][1]) != NULL);
        pqfs_config_free(&c);
    }
    char *argv_local[] = {"pqfs", "/data/lake", "/mnt/lake", "-o", "uid=5", NULL};
    CHECK_EQ_INT(run(&c, argv_local, no_env), -1);
    CHECK(strstr(err.msg, "only for a remote lake") != NULL);
    pqfs_config_free(&c);
}

static void test_dump(void)
{
    pqfs_config c;
    char *env[] = {"AWS_ACCESS_KEY_ID=AKIDDUMP", "AWS_SECRET_ACCESS_KEY=supersecretvalue",
                   "AWS_SESSION_TOKEN=sessiontokenvalue", NULL};
    write_ini("[pqfs]\nsource = s3://bucket/lake\ncache_size = 1536MiB\nmetadata_ttl = 1500ms\n"
              "[s3]\nregion = eu-west-1\npath_style = yes\n"
              "[table events]\npartitions = dt:date, region, n:int\ncompression = zstd:5\n"
              "page_size = 1000\nbloom_filter = user_id, email\nsort_by = ts\n");
    char *argv[] = {"pqfs", ini_path, "/mnt/lake", "-f", "-o", "allow_other,ro", NULL};
    CHECK_EQ_INT(run(&c, argv, env), 0);
    char *text = NULL;
    CHECK_EQ_INT(pqfs_config_dump(&c, &text), 0);
    CHECK(text != NULL);
    if (!text) {
        pqfs_config_free(&c);
        return;
    }
    CHECK(strstr(text, "supersecretvalue") == NULL);
    CHECK(strstr(text, "sessiontokenvalue") == NULL);
    CHECK(strstr(text, "secret_access_key = ***\n") != NULL);
    CHECK(strstr(text, "session_token = ***\n") != NULL);
    CHECK(strstr(text, "access_key_id = AKIDDUMP\n") != NULL);
    char want[2048];
    snprintf(want, sizeof want,
             "[pqfs]\n"
             "source = s3://bucket/lake\n"
             "read_only = true\n"
             "threads = 0\n"
             "cache_dir = %s\n"
             "cache_size = 1536MiB\n"
             "metadata_ttl = 1500ms\n"
             "log_level = info\n"
             "; ini file: %s\n"
             "; mountpoint: /mnt/lake\n"
             "; foreground\n"
             "; fuse options: allow_other,ro\n"
             "\n"
             "[s3]\n"
             "endpoint = https://s3.eu-west-1.amazonaws.com\n"
             "region = eu-west-1\n"
             "path_style = true\n"
             "access_key_id = AKIDDUMP\n"
             "secret_access_key = ***\n"
             "session_token = ***\n"
             "\n"
             "[table events]\n"
             "partitions = dt:date, region, n:int64\n"
             "compression = zstd:5\n"
             "row_group_rows = 1048576\n"
             "page_size = 1000\n"
             "dictionary = true\n"
             "page_index = true\n"
             "bloom_filter = user_id, email\n"
             "sort_by = ts\n"
             "\n"
             "; tables without a section:\n"
             "; compression = zstd\n"
             "; row_group_rows = 1048576\n"
             "; page_size = 1MiB\n"
             "; dictionary = true\n"
             "; page_index = true\n",
             c.cache_dir, ini_path);
    CHECK_EQ_STR(text, want);

    /* A password in an http(s) source is masked; the user name is not. */
    pqfs_config_free(&c);
    char *argv_url[] = {"pqfs", "https://alice:pa%40ss@data.example.com/lake", "/mnt/lake", NULL};
    char *none[] = {NULL};
    CHECK_EQ_INT(run(&c, argv_url, none), 0);
    free(text);
    text = NULL;
    CHECK_EQ_INT(pqfs_config_dump(&c, &text), 0);
    CHECK(text && strstr(text, "pa%40ss") == NULL);
    CHECK(text && strstr(text, "source = https://alice:***@data.example.com/lake\n") != NULL);

    /* The dump reads back as the same configuration (secrets aside). */
    pqfs_config_free(&c);
    char *argv_plain[] = {"pqfs", ini_path, "/mnt/lake", NULL};
    char *no_env[] = {NULL};
    CHECK_EQ_INT(run(&c, argv_plain, no_env), 0);
    char *first = NULL, *second = NULL;
    CHECK_EQ_INT(pqfs_config_dump(&c, &first), 0);
    pqfs_config_free(&c);
    write_ini(first);
    CHECK_EQ_INT(run(&c, argv_plain, no_env), 0);
    CHECK_EQ_STR(err.msg, "");
    CHECK_EQ_INT(pqfs_config_dump(&c, &second), 0);
    CHECK_EQ_STR(first, second);
    pqfs_config_free(&c);
    free(first);
    free(second);
    free(text);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pqfs-test-config-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(ini_path, sizeof ini_path, "%s/lake.ini", tmpdir);

    test_sizes();
    test_durations();
    test_bools();
    test_defaults();
    test_every_key();
    test_table_values();
    test_errors();
    test_comments_and_quotes();
    test_precedence();
    test_command_line();
    test_set_and_validate();
    test_owner_options();
    test_dump();

    static const char *const files[] = {"lake.ini", "lake.conf"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(in_tmp(files[i]));
    rmdir(tmpdir);
    return check_report();
}
