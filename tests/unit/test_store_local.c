/* The local store's root (engine/io/io.c): nothing outside it is read or
 * written.
 * Reads: a table directory, a partition directory and a .parquet file that
 * are symbolic links out of the root (relative or absolute) are left out of
 * listings and are NOTFOUND to open and stat, with one warning per link
 * however often, and through whatever path, they are listed; the same kinds of link resolving inside
 * (relative, absolute under the root, through '..') are followed.
 * Writes follow no link: a write or mkdir into a linked directory (inside or
 * out) is DENIED and leaves nothing anywhere; a real directory still takes
 * them.  A part file's temporary is flocked while it is written.
 * The sweep removes dead writers' temporaries (unlocked, old, ours) and the
 * COL=VALUE directories they leave empty, and nothing else.
 * Each case runs with openat2 and with the by-hand fallback. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "io.h"

static char made[] = "/tmp/pq_store_local_XXXXXX";
static char base[1024], lake[1100], out[1100];

typedef struct warnings {
    int n;
    char last[4096];
} warnings;

static void count_warning(void *ctx, const char *msg)
{
    warnings *w = ctx;
    w->n++;
    snprintf(w->last, sizeof w->last, "%s", msg);
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static void run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run(const char *fmt, ...)
{
    char cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        exit(2);
    }
}

static bool exists(const char *dir, const char *name)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return lstat(p, &st) == 0;
}

/* How many entries of dir (a real path) there are, '.' and '..' aside. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

/* lake/ev/dt=1/a.parquet is real; out/ holds what links lead to. */
static void make_layout(void)
{
    snprintf(lake, sizeof lake, "%s/lake", base);
    snprintf(out, sizeof out, "%s/out", base);
    run("rm -rf '%s' '%s'", lake, out);
    run("mkdir -p '%s/ev/dt=1' '%s/dt/dt=9'", lake, out);
    run("mkdir -p '%s/tt' '%s/table'", lake, out);
    char p[8192];
    snprintf(p, sizeof p, "%s/ev/dt=1/a.parquet", lake);
    put_file(p, "inside");
    snprintf(p, sizeof p, "%s/c.parquet", out);
    put_file(p, "outside");
    snprintf(p, sizeof p, "%s/dt/b.parquet", out);
    put_file(p, "outside");
    snprintf(p, sizeof p, "%s/table/x.parquet", out);
    put_file(p, "outside");
    /* Out of the lake: relative, absolute, a file, a table. */
    run("ln -s ../../out/dt '%s/ev/dt=2' && ln -s '%s/dt' '%s/ev/dt=3'", lake, out, lake);
    run("ln -s ../../../out/c.parquet '%s/ev/dt=1/c.parquet' && ln -s '%s/table' '%s/t_out'", lake, out, lake);
    /* Out and back in: leaves the root on the way, so not followed. */
    run("ln -s ../../lake/ev/dt=1 '%s/ev/dt=7' && ln -s nowhere '%s/ev/dangling'", lake, lake);
    /* Inside: relative, absolute under the root, through '..', a file, a table. */
    run("ln -s dt=1 '%s/ev/dt=4' && ln -s '%s/ev/dt=1' '%s/ev/dt=5'", lake, lake, lake);
    run("ln -s ../ev/dt=4 '%s/ev/dt=6' && ln -s a.parquet '%s/ev/dt=1/d.parquet'", lake, lake);
    run("ln -s ev '%s/t_in' && ln -s '%s/ev/dt=1/a.parquet' '%s/ev/dt=1/e.parquet'", lake, lake, lake);
}

typedef struct names {
    char list[4096];
} names;

/* The listing of dir as "name/ name ..." (sorted by the caller's layout:
 * names are compared as a set by checking each). */
static int collect(void *ctx, const pq_dirent *e)
{
    names *n = ctx;
    size_t len = strlen(n->list);
    snprintf(n->list + len, sizeof n->list - len, "[%s%s]", e->name, e->st.is_dir ? "/" : "");
    return 0;
}

static bool listed(pq_store *st, const char *dir, const char *entry)
{
    names n = {{0}};
    pq_error err;
    if (st->ops->list(st, dir, collect, &n, &err) != PQ_OK) return false;
    return strstr(n.list, entry) != NULL;
}

static int listing_size(pq_store *st, const char *dir)
{
    names n = {{0}};
    pq_error err;
    if (st->ops->list(st, dir, collect, &n, &err) != PQ_OK) return -1;
    int k = 0;
    for (const char *p = n.list; *p; p++) k += *p == '[';
    return k;
}

/* What open(path) reads: its bytes, or "" with the error class in *cls. */
static void read_path(pq_store *st, const char *path, char *buf, size_t cap, int *cls)
{
    pq_error err;
    pq_error_clear(&err);
    buf[0] = '\0';
    *cls = -1;
    pq_file *f;
    if (st->ops->open(st, path, &f, &err) != PQ_OK) {
        *cls = err.cls;
        return;
    }
    uint64_t size = 0;
    if (pq_file_size(f, &size, &err) == PQ_OK && size < cap && pq_read_at(f, buf, (size_t)size, 0, &err) == PQ_OK)
        buf[size] = '\0';
    pq_file_close(f);
}

static void test_reads(const char *mode)
{
    fprintf(stderr, "reads (%s)\n", mode);
    make_layout();
    pq_error err;
    pq_store *st = NULL;
    CHECK_EQ_INT(pq_store_local_new(lake, &st, &err), PQ_OK);
    if (!st) return;
    warnings w = {0};
    st->warn = count_warning;
    st->warn_ctx = &w;

    /* The root: the linked table inside is there, the one out is not. */
    CHECK(listed(st, "", "[ev/]"));
    CHECK(listed(st, "", "[t_in/]"));
    CHECK(!listed(st, "", "[t_out"));
    CHECK_EQ_INT(w.n, 1);
    CHECK(strstr(w.last, "t_out") != NULL);
    /* Partitions: 1 real, 4, 5, 6 linked inside; 2, 3 out; 7 out and back. */
    for (int round = 0; round < 2; round++) {
        CHECK(listed(st, "ev", "[dt=1/]"));
        CHECK(listed(st, "ev", "[dt=4/]"));
        CHECK(listed(st, "ev", "[dt=5/]"));
        CHECK(listed(st, "ev", "[dt=6/]"));
        CHECK(!listed(st, "ev", "[dt=2"));
        CHECK(!listed(st, "ev", "[dt=3"));
        CHECK(!listed(st, "ev", "[dt=7"));
        CHECK(!listed(st, "ev", "[dangling"));
        CHECK_EQ_INT(listing_size(st, "ev"), 4);
    }
    /* One warning per path, however often it is listed (t_out, dt=2, 3, 7). */
    CHECK_EQ_INT(w.n, 4);
    /* Files: a.parquet real, d.parquet and e.parquet linked inside, c.parquet out. */
    CHECK_EQ_INT(listing_size(st, "ev/dt=1"), 3);
    CHECK(!listed(st, "ev/dt=1", "[c.parquet"));
    CHECK(listed(st, "ev/dt=1", "[e.parquet]"));
    CHECK_EQ_INT(w.n, 5);
    CHECK_EQ_INT(listing_size(st, "ev/dt=4"), 3);
    CHECK_EQ_INT(listing_size(st, "t_in/dt=5"), 3);
    CHECK_EQ_INT(listing_size(st, "t_in"), 4);
    /* The same links met through linked directories: no new warning. */
    CHECK_EQ_INT(w.n, 5);

    char buf[64];
    int cls;
    read_path(st, "ev/dt=1/a.parquet", buf, sizeof buf, &cls);
    CHECK_EQ_STR(buf, "inside");
    read_path(st, "ev/dt=1/d.parquet", buf, sizeof buf, &cls);
    CHECK_EQ_STR(buf, "inside");
    read_path(st, "ev/dt=1/e.parquet", buf, sizeof buf, &cls);
    CHECK_EQ_STR(buf, "inside");
    read_path(st, "ev/dt=6/d.parquet", buf, sizeof buf, &cls);
    CHECK_EQ_STR(buf, "inside");
    read_path(st, "t_in/dt=5/a.parquet", buf, sizeof buf, &cls);
    CHECK_EQ_STR(buf, "inside");
    /* Out of the lake: not served, whatever names them. */
    const char *outside[] = {"ev/dt=1/c.parquet", "ev/dt=2/b.parquet", "ev/dt=3/b.parquet", "t_out/x.parquet",
                             "ev/dt=7/a.parquet"};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        read_path(st, outside[i], buf, sizeof buf, &cls);
        CHECK_EQ_STR(buf, "");
        CHECK_EQ_INT(cls, PQ_E_NOTFOUND);
    }
    pq_stat s;
    CHECK_EQ_INT(st->ops->stat(st, "t_out", &s, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOTFOUND);
    CHECK_EQ_INT(st->ops->stat(st, "ev/dt=5", &s, &err), PQ_OK);
    CHECK(s.is_dir);
    CHECK_EQ_INT(st->ops->stat(st, "ev/dt=1/e.parquet", &s, &err), PQ_OK);
    CHECK_EQ_INT(s.size, 6);
    /* A listing of a link out is refused too. */
    CHECK_EQ_INT(listing_size(st, "ev/dt=2"), -1);
    CHECK_EQ_INT(listing_size(st, "t_out"), -1);
    pq_store_destroy(st);
}

/* Writes one upload of `text` at path: PQ_OK or the failure's class. */
static int write_path(pq_store *st, const char *path, const char *text)
{
    pq_error err;
    pq_error_clear(&err);
    pq_upload *u;
    if (st->ops->create(st, path, &u, &err) != PQ_OK) return err.cls;
    if (u->ops->write(u, text, strlen(text), &err) != PQ_OK) {
        u->ops->abort(u);
        return err.cls;
    }
    return u->ops->commit(u, &err) == PQ_OK ? PQ_OK : err.cls;
}

/* write_path, committed only if path is free (commit_new). */
static int write_new(pq_store *st, const char *path, const char *text)
{
    pq_error err;
    pq_error_clear(&err);
    pq_upload *u;
    if (st->ops->create(st, path, &u, &err) != PQ_OK) return err.cls;
    if (u->ops->write(u, text, strlen(text), &err) != PQ_OK) {
        u->ops->abort(u);
        return err.cls;
    }
    return u->ops->commit_new(u, &err) == PQ_OK ? PQ_OK : err.cls;
}

/* Put-if-absent (a Delta log commit): the first writer of a name wins, the
 * second gets PQ_E_EXISTS and changes nothing, and neither leaves its
 * temporary; remove takes a file away, never through a link. */
static void test_commit_new(const char *mode)
{
    fprintf(stderr, "commit_new (%s)\n", mode);
    make_layout();
    pq_error err;
    pq_store *st = NULL;
    CHECK_EQ_INT(pq_store_local_new(lake, &st, &err), PQ_OK);
    if (!st) return;
    char dir[2048], p[2400], got[16] = {0};
    snprintf(dir, sizeof dir, "%s/ev/dt=1", lake);
    int before = entries(dir);
    CHECK_EQ_INT(write_new(st, "ev/dt=1/00001.json", "first"), PQ_OK);
    CHECK_EQ_INT(write_new(st, "ev/dt=1/00001.json", "second"), PQ_E_EXISTS);
    snprintf(p, sizeof p, "%s/00001.json", dir);
    FILE *f = fopen(p, "r");
    if (f) {
        CHECK(fread(got, 1, sizeof got - 1, f) > 0);
        fclose(f);
    }
    CHECK_EQ_STR(got, "first");
    CHECK_EQ_INT(entries(dir), before + 1); /* no temporary left */
    CHECK_EQ_INT(st->ops->remove(st, "ev/dt=1/00001.json", &err), PQ_OK);
    CHECK(!exists(lake, "ev/dt=1/00001.json"));
    CHECK_EQ_INT(st->ops->remove(st, "ev/dt=1/00001.json", &err), PQ_ERR);
    /* Through a link out of the lake: refused, the target untouched. */
    int out_entries = entries(out);
    CHECK_EQ_INT(write_new(st, "t_out/x.json", "x"), PQ_E_DENIED);
    CHECK_EQ_INT(st->ops->remove(st, "t_out/a.parquet", &err), PQ_ERR);
    CHECK_EQ_INT(entries(out), out_entries);
    pq_store_destroy(st);
}

static void test_writes(const char *mode)
{
    fprintf(stderr, "writes (%s)\n", mode);
    make_layout();
    pq_error err;
    pq_store *st = NULL;
    CHECK_EQ_INT(pq_store_local_new(lake, &st, &err), PQ_OK);
    if (!st) return;
    char dir[2048];
    int out_entries = entries(out), dt9 = 0;
    snprintf(dir, sizeof dir, "%s/dt", out);
    dt9 = entries(dir);
    /* Into links out of the lake, and into links inside: refused. */
    const char *refused[] = {"ev/dt=2/n.parquet", "ev/dt=3/n.parquet", "t_out/n.parquet", "ev/dt=4/n.parquet",
                             "ev/dt=5/n.parquet", "t_in/dt=1/n.parquet"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        int rc = write_path(st, refused[i], "x");
        CHECK_EQ_INT(rc, PQ_E_DENIED);
        if (rc != PQ_E_DENIED) fprintf(stderr, "  %s: %d\n", refused[i], rc);
    }
    CHECK_EQ_INT(st->ops->mkdir(st, "ev/dt=2", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(st->ops->mkdir(st, "ev/dt=2/region=x", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(st->ops->mkdir(st, "t_in/dt=8", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(st->ops->rmdir(st, "ev/dt=4", &err), PQ_ERR);
    CHECK(exists(lake, "ev/dt=4"));
    /* Nothing anywhere: not outside, not in the directories linked inside. */
    CHECK_EQ_INT(entries(out), out_entries);
    CHECK_EQ_INT(entries(dir), dt9);
    snprintf(dir, sizeof dir, "%s/ev/dt=1", lake);
    CHECK_EQ_INT(entries(dir), 4); /* a, c, d, e */
    CHECK(!exists(lake, "t_in/dt=8") && !exists(lake, "ev/dt=8"));
    /* A real directory takes writes; new directories are made. */
    CHECK_EQ_INT(write_path(st, "ev/dt=1/n.parquet", "new"), PQ_OK);
    CHECK(exists(lake, "ev/dt=1/n.parquet"));
    CHECK_EQ_INT(entries(dir), 5);
    CHECK_EQ_INT(st->ops->mkdir(st, "ev/dt=8", &err), PQ_OK);
    CHECK_EQ_INT(st->ops->mkdir(st, "ev/dt=8", &err), PQ_OK); /* already there: fine */
    CHECK_EQ_INT(write_path(st, "ev/dt=8/m.parquet", "new"), PQ_OK);
    char p[2400];
    snprintf(p, sizeof p, "%s/ev/dt=8/m.parquet", lake);
    struct stat sb;
    CHECK(stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0644);
    CHECK_EQ_INT(st->ops->mkdir(st, "ev/dt=10", &err), PQ_OK);
    CHECK_EQ_INT(st->ops->rmdir(st, "ev/dt=10", &err), PQ_OK);
    CHECK(!exists(lake, "ev/dt=10"));

    /* While it is written, the temporary is locked (a sweep leaves it). */
    pq_upload *u = NULL;
    CHECK_EQ_INT(st->ops->create(st, "ev/dt=1/live.parquet", &u, &err), PQ_OK);
    snprintf(dir, sizeof dir, "%s/ev/dt=1", lake);
    DIR *d = opendir(dir);
    struct dirent *e;
    int locked = -1;
    while (d && (e = readdir(d)))
        if (!strncmp(e->d_name, ".live.parquet.tmp-", 18) && strlen(e->d_name) == 24) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            int fd = open(p, O_RDONLY | O_NOFOLLOW);
            locked = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
            if (fd >= 0) close(fd);
        }
    if (d) closedir(d);
    CHECK_EQ_INT(locked, 1);
    if (u) u->ops->abort(u);
    CHECK_EQ_INT(entries(dir), 5);
    pq_store_destroy(st);
}

/* A temporary as a crashed writer leaves it: unlocked, modified age_s ago. */
static void leftover(const char *rel, long age_s)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", lake, rel);
    put_file(p, "PAR1 half a file");
    struct timespec t[2];
    clock_gettime(CLOCK_REALTIME, &t[0]);
    t[0].tv_sec -= age_s;
    t[1] = t[0];
    CHECK(utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW) == 0);
}

static void test_sweep(const char *mode)
{
    fprintf(stderr, "sweep (%s)\n", mode);
    make_layout();
    pq_error err;
    pq_store *st = NULL;
    CHECK_EQ_INT(pq_store_local_new(lake, &st, &err), PQ_OK);
    if (!st) return;
    run("mkdir -p '%s/ev/dt=20/region=eu' '%s/ev/dt=21'", lake, lake);
    run("mkdir -p '%s/ev/dt=22' '%s/ev/dt=23'", lake, lake);
    /* Dead and old: removed, with the partition directories left empty. */
    leftover("ev/dt=20/region=eu/.a-0123456789abcdef.parquet.tmp-Ab12Cd", 120);
    leftover("ev/dt=1/.b-0123456789abcdef.parquet.tmp-xY34zW", 120);
    leftover(".c-0123456789abcdef.parquet.tmp-QQ00qq", 120);
    leftover("tt/.d-0123456789abcdef.parquet.tmp-ZZ99zz", 120);
    /* Kept: too young, not our kind of name, another user's, beyond a link. */
    leftover("ev/dt=21/.e-0123456789abcdef.parquet.tmp-Ab12Cd", 5);
    leftover("ev/dt=22/.f.csv.tmp-Ab12Cd", 120);
    leftover("ev/dt=22/.g-0123456789abcdef.parquet.tmp-Ab12C", 120);
    leftover("ev/dt=23/.h-0123456789abcdef.parquet.tmp-Ab12Cd", 120);
    char p[8192];
    snprintf(p, sizeof p, "%s/ev/dt=23/.h-0123456789abcdef.parquet.tmp-Ab12Cd", lake);
    CHECK(lchown(p, 65534, 65534) == 0);
    snprintf(p, sizeof p, "%s/dt/.i-0123456789abcdef.parquet.tmp-Ab12Cd", out);
    put_file(p, "outside");
    struct timespec old[2] = {{time(NULL) - 120, 0}, {time(NULL) - 120, 0}};
    CHECK(utimensat(AT_FDCWD, p, old, 0) == 0);
    /* A live writer's, made old: locked, so kept. */
    pq_upload *u = NULL;
    CHECK_EQ_INT(st->ops->create(st, "ev/dt=21/live.parquet", &u, &err), PQ_OK);
    snprintf(p, sizeof p, "%s/ev/dt=21", lake);
    DIR *d = opendir(p);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, ".live.parquet.tmp-", 18)) continue;
        char q[8500];
        snprintf(q, sizeof q, "%s/%s", p, e->d_name);
        CHECK(utimensat(AT_FDCWD, q, old, 0) == 0);
    }
    if (d) closedir(d);

    pq_sweep_counts n = {0};
    CHECK_EQ_INT(pq_store_local_sweep(st, 60, NULL, &n, &err), PQ_OK);
    CHECK_EQ_INT(n.temporaries, 4);
    CHECK_EQ_INT(n.dirs, 2); /* region=eu, then dt=20 */
    CHECK(!exists(lake, "ev/dt=20"));
    CHECK(exists(lake, "ev/dt=1/a.parquet") && !exists(lake, "ev/dt=1/.b-0123456789abcdef.parquet.tmp-xY34zW"));
    CHECK(!exists(lake, ".c-0123456789abcdef.parquet.tmp-QQ00qq"));
    CHECK(exists(lake, "tt") && entries(lake) > 0); /* a table directory stays, empty or not */
    snprintf(p, sizeof p, "%s/tt", lake);
    CHECK_EQ_INT(entries(p), 0);
    CHECK(exists(lake, "ev/dt=21/.e-0123456789abcdef.parquet.tmp-Ab12Cd"));
    CHECK(exists(lake, "ev/dt=22/.f.csv.tmp-Ab12Cd"));
    CHECK(exists(lake, "ev/dt=22/.g-0123456789abcdef.parquet.tmp-Ab12C"));
    CHECK(exists(lake, "ev/dt=23/.h-0123456789abcdef.parquet.tmp-Ab12Cd"));
    CHECK(exists(out, "dt/.i-0123456789abcdef.parquet.tmp-Ab12Cd"));
    snprintf(p, sizeof p, "%s/ev/dt=21", lake);
    CHECK_EQ_INT(entries(p), 2); /* the young one and the live one */
    /* Once its writer is done, the live one's name is the part file's. */
    CHECK_EQ_INT(u ? u->ops->commit(u, &err) : PQ_ERR, PQ_OK);
    CHECK(exists(lake, "ev/dt=21/live.parquet"));
    /* Age 0: the young one goes too. */
    n = (pq_sweep_counts){0};
    CHECK_EQ_INT(pq_store_local_sweep(st, 0, NULL, &n, &err), PQ_OK);
    CHECK_EQ_INT(n.temporaries, 1);
    CHECK_EQ_INT(n.dirs, 0); /* dt=21 still holds live.parquet */
    CHECK(!exists(lake, "ev/dt=21/.e-0123456789abcdef.parquet.tmp-Ab12Cd"));
    pq_store_destroy(st);
}

/* A root naming one file: that file, and nothing below it. */
static void test_single_file_root(void)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/one.parquet", base);
    put_file(p, "single");
    pq_error err;
    pq_store *st = NULL;
    CHECK_EQ_INT(pq_store_local_new(p, &st, &err), PQ_OK);
    if (!st) return;
    char buf[64];
    int cls;
    read_path(st, "", buf, sizeof buf, &cls);
    CHECK_EQ_STR(buf, "single");
    pq_stat s;
    CHECK_EQ_INT(st->ops->stat(st, "", &s, &err), PQ_OK);
    CHECK(!s.is_dir && s.size == 6);
    CHECK_EQ_INT(listing_size(st, ""), -1);
    pq_sweep_counts n = {0};
    CHECK_EQ_INT(pq_store_local_sweep(st, 0, NULL, &n, &err), PQ_OK);
    CHECK_EQ_INT(n.temporaries + n.dirs, 0);
    pq_store_destroy(st);
}

int main(void)
{
    /* Resolved: the absolute links name the lake as its store resolves it. */
    char *resolved = mkdtemp(made) ? realpath(made, NULL) : NULL;
    if (!resolved || strlen(resolved) >= sizeof base) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(base, sizeof base, "%s", resolved);
    free(resolved);
    for (int by_hand = 0; by_hand < 2; by_hand++) {
        const char *mode = by_hand ? "by hand" : "openat2";
        pq_store_local_test_without_openat2(by_hand);
        test_reads(mode);
        test_writes(mode);
        test_commit_new(mode);
        test_sweep(mode);
    }
    pq_store_local_test_without_openat2(false);
    test_single_file_root();
    run("rm -rf '%s'", base);
    return check_report();
}
