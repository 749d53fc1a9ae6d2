/* pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]: mounts a Parquet lake.
 * Configuration (config/), the lake (engine/include/pqfs/lake.h), the FUSE adapter (fs.c). */
#include <errno.h>
#include <mntent.h>
#include <stdint.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cache_area.h"
#include "config.h"
#include "fdcache.h"
#include "filewrite.h"
#include "fs.h"
#include "http.h"
#include "mem.h"
#include "numfmt.h"
#include "remote.h"

typedef struct logger {
    bool foreground;
    pqfs_log_level level;
} logger;

static void log_line(void *ctx, pq_log_level lv, const char *msg)
{
    logger *lg = ctx;
    if ((int)lv > (int)lg->level) return;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    if (lg->foreground) fprintf(stderr, "pqfs: %s: %s\n", names[lv], msg);
    else syslog(prio[lv], "%s", msg);
}

/* Cancels remote transfers as soon as the session is told to exit (a
 * signal, the unmount): a request blocked in a stalled transfer (a lookup
 * reading a footer) would otherwise hold the loop, whose end waits for its
 * workers, for the whole stall timeout.  Once a second meanwhile, parked
 * temporary files past their time are discarded (pqfs_fs_expire); every 5 s
 * the heap's free pages past HEAP_FREE_KEPT go back to the system (the
 * thresholds main() sets keep freed buffers for reuse, and each thread's
 * arena would otherwise hold its peak until the unmount). */
#define HEAP_FREE_KEPT ((uint64_t)64 << 20)
typedef struct exit_watch {
    struct fuse_session *se;
    pqfs_fs *fs;
    pthread_t thread;
    _Atomic bool loop_done;
} exit_watch;

static void *exit_watch_main(void *arg)
{
    exit_watch *ew = arg;
    for (int tick = 1; !atomic_load(&ew->loop_done) && !fuse_session_exited(ew->se); tick++) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
        if (tick % 10 == 0) pqfs_fs_expire(ew->fs);
        if (tick % 50 == 0) (void)pq_heap_release(HEAP_FREE_KEPT);
    }
    pq_http_cancel_all();
    return NULL;
}

/* The leftovers of crashed writes, swept once at start beside the loop (a
 * large lake takes a while to walk), stopped at unmount. */
typedef struct sweeper {
    pq_lake *lake;
    int64_t min_age_s;
    pthread_t thread;
    _Atomic bool stop;
} sweeper;

static void *sweeper_main(void *arg)
{
    sweeper *sw = arg;
    pq_error e;
    pq_error_clear(&e);
    (void)pq_lake_sweep_leftovers(sw->lake, sw->min_age_s, &sw->stop, &e);
    return NULL;
}

/* Test hooks (docs/conformance.md): seconds from the environment variable
 * `name` (a whole number >= 0), else `fallback`. */
static int64_t test_hook_seconds(const char *name, int64_t fallback)
{
    const char *v = getenv(name);
    int64_t s;
    if (!v || !*v || pq_parse_i64(v, strlen(v), &s) != 0 || s < 0 || s > INT32_MAX) return fallback;
    return s;
}

/* The lake's storage: a directory, an HTTP(S) prefix (read-only: the
 * mount becomes read-only too) or an S3 bucket. */
static int open_store(pqfs_config *c, pq_store **out, pq_error *err)
{
    pq_http_opts ho;
    pq_http_opts_init(&ho);
    int rc;
    if (!strncmp(c->source, "http://", 7) || !strncmp(c->source, "https://", 8)) {
        rc = pq_store_http_new(c->source, &ho, out, err);
        c->read_only = true;
    } else if (!strncmp(c->source, "s3://", 5)) {
        pq_s3_opts so = {
            .endpoint = c->s3_endpoint,
            .region = c->s3_region,
            .path_style = c->s3_path_style,
            .access_key_id = c->s3_access_key_id,
            .secret_access_key = c->s3_secret_access_key,
            .session_token = c->s3_session_token,
        };
        rc = pq_store_s3_new(c->source, &so, &ho, out, err);
    } else {
        rc = pq_store_local_new(c->source, out, err);
    }
    return rc;
}

/* A password in an http(s) URL on the command line (SOURCE, -o source=)
 * is overwritten with '*' once the configuration holds its own copy: the
 * command line is readable by every user in /proc/PID/cmdline (ps). */
static void mask_url_passwords(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        for (char *p = strstr(argv[i], "://"); p; p = strstr(p + 3, "://")) {
            char *auth = p + 3, *end = auth + strcspn(auth, "/,");
            char *at = NULL;
            for (char *q = auth; q < end; q++)
                if (*q == '@') at = q;
            if (!at) continue;
            char *colon = memchr(auth, ':', (size_t)(at - auth));
            if (!colon || at - colon - 1 < 3) {
                for (char *q = colon ? colon + 1 : at; q < at; q++) *q = '*';
                continue;
            }
            /* "***" whatever its length (one star a character told the
             * length); the rest moves up, NULs fill the end of the string. */
            size_t tail = strlen(at);
            memcpy(colon + 1, "***", 3);
            memmove(colon + 4, at, tail + 1);
            memset(colon + 4 + tail + 1, 0, (size_t)(at - (colon + 4)));
            p = colon; /* the next URL starts after this one */
        }
    }
}

/* The effective configuration (command line, environment, ini and
 * defaults merged), secrets masked: what precedence made of them. */
static void log_config(const pqfs_config *cfg, logger *lg)
{
    char *dump = NULL;
    if (pqfs_config_dump(cfg, &dump) == 0 && dump) {
        for (char *line = strtok(dump, "\n"); line; line = strtok(NULL, "\n")) {
            char msg[1200];
            snprintf(msg, sizeof msg, "config: %s", line);
            log_line(lg, PQ_LOG_DEBUG, msg);
        }
    }
    free(dump);
}

/* The [table NAME] sections as the lake's declarations; parts[i] holds
 * table i's partition declarations.  Both arrays are the caller's to free
 * (each parts[i] too), also after a failure. */
static int table_decls(const pqfs_config *cfg, pq_lake_table_decl **decls_out, pq_part_decl ***parts_out)
{
    pq_lake_table_decl *decls = *decls_out = calloc((size_t)cfg->n_tables + 1, sizeof *decls);
    pq_part_decl **parts = *parts_out = calloc((size_t)cfg->n_tables + 1, sizeof *parts);
    if (!decls || !parts) return -1;
    for (int i = 0; i < cfg->n_tables; i++) {
        const pqfs_table_config *t = &cfg->tables[i];
        if (!(parts[i] = calloc((size_t)t->n_partitions + 1, sizeof **parts))) return -1;
        for (int p = 0; p < t->n_partitions; p++)
            parts[i][p] = (pq_part_decl){t->partitions[p].name, t->partitions[p].type};
        decls[i] = (pq_lake_table_decl){t->name, parts[i], t->n_partitions};
        /* The writer settings: data.parquet is written with them. */
        decls[i].has_write = true;
        pq_write_opts_init(&decls[i].write);
        decls[i].write.codec = t->compression;
        decls[i].write.level = t->compression_level;
        decls[i].write.page_size = t->page_size > 0 ? (size_t)t->page_size : 0;
        decls[i].write.no_dictionary = !t->dictionary;
        decls[i].write.no_statistics = !t->page_index;
        decls[i].write.bloom_columns = (const char *const *)t->bloom_filter;
        decls[i].write.n_bloom_columns = t->n_bloom_filter;
        decls[i].row_group_rows = t->row_group_rows;
        decls[i].sort_by = (const char *const *)t->sort_by;
        decls[i].n_sort_by = t->n_sort_by;
    }
    return 0;
}

/* From the mount to the unmount: the FUSE loop with the exit watch and
 * (a mount that writes) the leftover sweep beside it.  Returns the loop's
 * status. */
static int run_mounted(struct fuse_session *se, pqfs_fs *fs, pq_lake *lake, const pqfs_config *cfg, logger *lg)
{
    fuse_daemonize(cfg->foreground);
    struct fuse_loop_config *lc = fuse_loop_cfg_create();
    if (lc) {
        fuse_loop_cfg_set_max_threads(lc, 64);
        fuse_loop_cfg_set_idle_threads(lc, 8);
    }
    exit_watch ew = {.se = se, .fs = fs};
    bool watching = pthread_create(&ew.thread, NULL, exit_watch_main, &ew) == 0;
    /* Only a mount that writes sweeps (a read-only one changes nothing);
     * after fuse_daemonize, whose fork keeps no thread. */
    sweeper sw = {.lake = lake, .min_age_s = test_hook_seconds("PQFS_TEST_LEFTOVER_AGE", 60)};
    if (sw.min_age_s < 1) sw.min_age_s = 1; /* 0 would sweep a temporary between its create and its lock */
    bool sweeping = !cfg->read_only && pthread_create(&sw.thread, NULL, sweeper_main, &sw) == 0;
    int rc = fuse_session_loop_mt(se, lc);
    if (lc) fuse_loop_cfg_destroy(lc);
    atomic_store(&ew.loop_done, true);
    atomic_store(&sw.stop, true);
    if (watching) pthread_join(ew.thread, NULL);
    if (sweeping) pthread_join(sw.thread, NULL);
    pq_http_cancel_all(); /* a stalled remote read would hold the exit for its stall timeout */
    pq_lake_shutdown(lake);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    log_line(lg, PQ_LOG_INFO, "unmounted");
    return rc;
}

static void tune_malloc(void)
{
    /* Page and result buffers are megabytes, freed and taken again for every
     * row group: keep them in the heap instead of faulting them in each time. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    /* Few malloc arenas: glibc makes up to 8 per core, one per thread that
     * finds the others busy (64 FUSE workers and the scans' threads), and each
     * keeps its high-water mark; the soak's daemon held 15 arenas of 8-21 MiB
     * resident for a heap of 130 MiB in use.  Two per core (2 cores, 2 minutes
     * of tools/soak.sh): RSS 202 MB, 5,613 writes; 16 arenas: 269 MB, 5,761;
     * 2 arenas: 158 MB but 4,442 writes (the CSV import's column tasks
     * contend). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *own = getenv("MALLOC_ARENA_MAX"); /* the user's choice stands */
    if (!own || !*own) mallopt(M_ARENA_MAX, cores < 1 ? 2 : cores > 8 ? 16 : 2 * (int)cores);
}

/* Whether the mountpoint (resolved, as the kernel shows it) is a pqfs
 * mount already, said on stderr: refused as mount(8) refuses, since a
 * second mount would hide the first and both daemons would serve on
 * (-o nonempty: mount over it all the same). */
static bool refuse_stacked(const pqfs_config *cfg)
{
    FILE *f = cfg->nonempty ? NULL : setmntent("/proc/self/mounts", "r");
    if (!f) return false;
    bool found = false;
    for (struct mntent *m; !found && (m = getmntent(f));)
        found = !strcmp(m->mnt_dir, cfg->mountpoint) && !strcmp(m->mnt_type, "fuse.pqfs");
    endmntent(f);
    if (found)
        fprintf(stderr,
                "pqfs: %s is already a pqfs mount: unmount it first (fusermount3 -u %s), or give -o nonempty to "
                "mount over it\n",
                cfg->mountpoint, cfg->mountpoint);
    return found;
}

int main(int argc, char **argv, char **envp)
{
    tune_malloc();
    /* Lake files hold descriptors from a bounded set (fdcache.h) sized from
     * this limit; FUSE, result cache files and sockets take the rest. */
    pq_fd_raise_limit();
    pqfs_config cfg;
    pqfs_config_init(&cfg);
    pq_error err;
    pq_error_clear(&err);
    int status = 1;
    pq_lake *lake = NULL;
    pqfs_cache_area area = {.lock_fd = -1};
    pqfs_fs *fs = NULL;
    struct fuse_session *se = NULL;
    struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
    pq_lake_table_decl *decls = NULL;
    pq_part_decl **parts = NULL;
    char *shown_source = NULL;

    int parsed = pqfs_config_from_args(&cfg, argc, argv, envp, &err);
    if (parsed == PQFS_CONFIG_HELP || parsed == PQFS_CONFIG_VERSION) {
        if (parsed == PQFS_CONFIG_HELP) fputs(pqfs_config_usage(), stdout);
        else printf("%s (libfuse %s)\n", PQ_CREATED_BY, fuse_pkgversion());
        pqfs_config_free(&cfg);
        return 0;
    }
    if (parsed != 0 || pqfs_config_validate(&cfg, &err) != 0) {
        fprintf(stderr, "pqfs: %s\n", err.msg);
        pqfs_config_free(&cfg);
        return 2;
    }
    if (refuse_stacked(&cfg)) {
        pqfs_config_free(&cfg);
        return 2;
    }
    mask_url_passwords(argc, argv);
    logger lg = {.foreground = cfg.foreground, .level = cfg.log_level};
    if (!cfg.foreground) openlog("pqfs", LOG_PID, LOG_DAEMON);
    if (cfg.log_level >= PQFS_LOG_DEBUG) log_config(&cfg, &lg);

    if (pqfs_cache_area_open(cfg.cache_dir, cfg.mountpoint, &area, &err) != 0) {
        fprintf(stderr, "pqfs: %s\n", err.msg);
        goto out;
    }
    /* The source as logs, messages and the mount table may show it: an
     * HTTP URL without its credentials (SPEC: secrets never in logs). */
    {
        char *clean = NULL, *userpwd = NULL;
        pq_error ce;
        if (pq_url_split_credentials(cfg.source, &clean, &userpwd, &ce) != PQ_OK) {
            fprintf(stderr, "pqfs: out of memory\n");
            goto out;
        }
        shown_source = clean;
        if (userpwd) memset(userpwd, 0, strlen(userpwd));
        free(userpwd);
    }
    pq_store *store;
    if (open_store(&cfg, &store, &err) != 0) {
        fprintf(stderr, "pqfs: %s\n", err.msg);
        goto out;
    }
    if (table_decls(&cfg, &decls, &parts) != 0) {
        pq_store_destroy(store);
        fprintf(stderr, "pqfs: out of memory\n");
        goto out;
    }
    pq_lake_opts lo = {
        .store = store,
        .metadata_ttl_ms = cfg.metadata_ttl_ms,
        .sized_csv = cfg.sized_csv,
        .threads = cfg.threads,
        .cache_dir = area.path,
        .cache_size = cfg.cache_size,
        .tables = decls,
        .n_tables = cfg.n_tables,
        .log = log_line,
        .log_ctx = &lg,
        .log_level = (pq_log_level)lg.level,
        /* A remote lake's entries: uid=, gid=, dir_mode=, file_mode=, or
         * the mounting user's and the modes a mount always reported. */
        .remote_owner = {.uid = cfg.uid >= 0 ? (uint32_t)cfg.uid : (uint32_t)getuid(),
                         .gid = cfg.gid >= 0 ? (uint32_t)cfg.gid : (uint32_t)getgid(),
                         .dir_mode = cfg.dir_mode >= 0 ? (uint32_t)cfg.dir_mode : cfg.read_only ? 0555u : 0755u,
                         .file_mode = cfg.file_mode >= 0 ? (uint32_t)cfg.file_mode : 0444u},
    };
    pq_error e;
    pq_error_clear(&e);
    if (pq_lake_open(&lo, &lake, &e) != PQ_OK) {
        fprintf(stderr, "pqfs: %s: %s\n", shown_source, e.msg);
        goto out;
    }
    pqfs_fs_opts fo = {.entry_timeout = (double)cfg.metadata_ttl_ms / 1000.0,
                       .read_only = cfg.read_only,
                       .staged_timeout_s = (int)test_hook_seconds("PQFS_TEST_STAGED_TIMEOUT", 600),
                       .multi_user = cfg.multi_user,
                       .report_owners = cfg.multi_user || strncmp(cfg.source, "/", 1) != 0};
    fs = pqfs_fs_new(lake, &fo);
    if (!fs) {
        fprintf(stderr, "pqfs: out of memory\n");
        goto out;
    }

    /* FUSE options: ours, then the user's pass-through ones. */
    char opts[4096];
    char fsname[1024];
    snprintf(fsname, sizeof fsname, "%s", shown_source);
    for (char *p = fsname; *p; p++)
        if (*p == ',') *p = '_';
    /* Other users in: the kernel checks every access against the modes the
     * mount reports (the lake's own, docs/permissions.md). */
    int n = snprintf(opts, sizeof opts, "fsname=%s,subtype=pqfs,max_read=1048576%s%s", fsname,
                     cfg.read_only ? ",ro" : "", cfg.multi_user ? ",default_permissions" : "");
    for (int i = 0; i < cfg.n_fuse_opts && n > 0 && (size_t)n < sizeof opts; i++)
        n += snprintf(opts + n, sizeof opts - (size_t)n, ",%s", cfg.fuse_opts[i]);
    if (fuse_opt_add_arg(&args, argv[0]) || fuse_opt_add_arg(&args, "-o") || fuse_opt_add_arg(&args, opts)) {
        fprintf(stderr, "pqfs: out of memory\n");
        goto out;
    }
    se = fuse_session_new(&args, pqfs_fs_ops(), sizeof *pqfs_fs_ops(), fs);
    if (!se) goto out;
    pqfs_fs_set_session(fs, se);
    if (fuse_set_signal_handlers(se) != 0) goto out;
    if (fuse_session_mount(se, cfg.mountpoint) != 0) {
        fuse_remove_signal_handlers(se);
        goto out;
    }
    {
        char msg[4200];
        snprintf(msg, sizeof msg, "mounted %s on %s", shown_source, cfg.mountpoint);
        log_line(&lg, PQ_LOG_INFO, msg);
    }
    int rc = run_mounted(se, fs, lake, &cfg, &lg);
    status = rc < 0 ? 1 : 0;
out:
    if (se) fuse_session_destroy(se);
    fuse_opt_free_args(&args);
    pqfs_fs_free(fs);
    pq_lake_close(lake);
    pqfs_cache_area_close(&area);
    for (int i = 0; parts && i < cfg.n_tables; i++) free(parts[i]);
    free(parts);
    free(decls);
    free(shown_source);
    pqfs_config_free(&cfg);
    if (!lg.foreground) closelog();
    return status;
}
