/* The write lifecycle without FUSE (engine/lake/lake_uploads.c), as the
 * mount's requests drive it, with made-up processes (pq_proc_ops): thread
 * 101 and 102 are process 1, 201 is process 2 (tid / 100).
 * rsync's temporary file parked at its close and landing on its rename;
 * GNU mv retrying a failed rename; a dup'd descriptor closed (the flush of
 * a process that still holds another does not commit; the last one does);
 * a child's close of its inherited copy; a writer killed by a signal, or
 * dying while its close commits; a rename while the file is open; the
 * stat of names just written, however many were written within their 10 s
 * (a ring of 16 forgot the first ones). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "lake_fixture.h"
#include "lake.h"

static char root[] = "/tmp/pq_uploads_XXXXXX";
static char cache[] = "/tmp/pq_uploads_cache_XXXXXX";

/* ------------------------------------------------------------------ made-up processes */

static struct {
    int killed_tid;              /* exiting killed by a signal */
    int dying_tid;               /* dying (while its close commits) */
    int holder_pid;              /* holds a descriptor on holder_ino */
    uint64_t holder_ino;
} fake;

static int fake_process_of(void *ctx, int tid)
{
    (void)ctx;
    return tid / 100;
}

static bool fake_killed(void *ctx, int tid)
{
    (void)ctx;
    return tid && tid == fake.killed_tid;
}

static bool fake_dying(void *ctx, int tid)
{
    (void)ctx;
    return tid && tid == fake.dying_tid;
}

static bool fake_holds(void *ctx, int pid, uint64_t ino)
{
    (void)ctx;
    return pid && pid == fake.holder_pid && ino == fake.holder_ino;
}

static const pq_proc_ops fake_proc = {NULL, fake_process_of, fake_killed, fake_dying, fake_holds};

/* The names the lifecycle moved (the adapter's inodes follow them). */
static struct {
    int n;
    char from[256], to[256];
} moved;

static void on_moved(void *ctx, const char *from, const char *to)
{
    (void)ctx;
    moved.n++;
    snprintf(moved.from, sizeof moved.from, "%s", from);
    snprintf(moved.to, sizeof moved.to, "%s", to);
}

/* ------------------------------------------------------------------ helpers */

static pq_lake *open_lake(void)
{
    return open_test_lake(root, cache, 0);
}

static pq_lake_uploads *open_uploads(pq_lake *l, int staged_timeout_s)
{
    pq_error err;
    pq_lake_uploads_opts o = {.staged_timeout_s = staged_timeout_s, .proc = &fake_proc, .moved = on_moved};
    pq_lake_uploads *u = NULL;
    if (pq_lake_uploads_new(l, &o, &u, &err) != PQ_OK) fprintf(stderr, "uploads: %s\n", err.msg);
    return u;
}

/* Part files in DIR (under the lake root) whose names start with PREFIX. */
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

/* The whole of a view file (NULL on an error). */
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
        if (pq_lake_read(h, out + len, 4096, len, &n, NULL, NULL, &err) != PQ_OK || n == 0) break;
        len += n;
    }
    out[len] = 0;
    pq_lake_release(h);
    return out;
}

/* create + write, as the mount's CREATE and WRITE: NULL on a failure. */
static pq_lake_open_upload *created(pq_lake_uploads *u, const char *path, int tid, uint64_t ino, const char *text)
{
    pq_error err;
    pq_error_clear(&err);
    pq_lake_open_upload *f = NULL;
    if (pq_lake_uploads_create(u, path, NULL, tid, ino, &f, &err) != PQ_OK) {
        fprintf(stderr, "create %s: %s\n", path, err.msg);
        return NULL;
    }
    if (pq_lake_uploads_write(f, text, strlen(text), 0, &err) != PQ_OK) {
        fprintf(stderr, "write %s: %s\n", path, err.msg);
        pq_lake_uploads_discard(f);
        return NULL;
    }
    return f;
}

static bool stats_as(pq_lake_uploads *u, const char *path, uint64_t want)
{
    uint64_t size = ~0ull;
    return pq_lake_uploads_stat(u, path, 0, &size) && size == want;
}

static int flush(pq_lake_open_upload *f, int tid, pq_error *err)
{
    pq_error_clear(err);
    return pq_lake_uploads_flush(f, tid, err);
}

static int rename_as(pq_lake_uploads *u, const char *from, const char *to, unsigned flags, pq_error *err)
{
    pq_error_clear(err);
    return pq_lake_uploads_rename(u, from, to, flags, NULL, 101, err);
}

/* ------------------------------------------------------------------ tests */

/* rsync writes .NAME.XXXXXX, closes it and renames it to NAME: the close
 * parks it (nothing in the lake, writes refused), the rename commits it
 * under NAME, and rename() gets the outcome. */
static void test_rsync_lands_on_rename(pq_lake *l, pq_lake_uploads *u)
{
    pq_error err;
    const char *text = "id,name\n1,x\n2,y\n";
    pq_lake_open_upload *f = created(u, "t/.rows.csv.Ab12Cd", 101, 11, text);
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "rows-"), 0);
    CHECK_EQ_INT(parts_named("t", ".rows"), 0);
    CHECK(stats_as(u, "t/.rows.csv.Ab12Cd", strlen(text)));
    /* Closed: a write through another descriptor is refused (EBADF). */
    CHECK_EQ_INT(pq_lake_uploads_write(f, "3,z\n", 4, strlen(text), &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CLOSED);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "rows-"), 0);
    CHECK(stats_as(u, "t/.rows.csv.Ab12Cd", strlen(text))); /* parked */
    moved.n = 0;
    CHECK_EQ_INT(rename_as(u, "t/.rows.csv.Ab12Cd", "t/rows.csv", 0, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "rows-"), 1);
    CHECK(!stats_as(u, "t/.rows.csv.Ab12Cd", strlen(text)));
    CHECK(stats_as(u, "t/rows.csv", strlen(text)));
    CHECK_EQ_INT(moved.n, 1);
    CHECK_EQ_STR(moved.from, "t/.rows.csv.Ab12Cd");
    CHECK_EQ_STR(moved.to, "t/rows.csv");
    char *csv = read_view(l, "t/data.csv");
    CHECK_EQ_STR(csv, "id,name\n1,x\n2,y\n");
    free(csv);
    /* A parked file renamed to another temporary name keeps waiting. */
    f = created(u, "t/.two.csv.1", 101, 12, "id,name\n5,e\n");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(rename_as(u, "t/.two.csv.1", "t/.two.csv.2", 0, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "two-"), 0);
    CHECK(stats_as(u, "t/.two.csv.2", 12));
    /* unlinked, nothing lands; unlink of anything else is refused */
    CHECK_EQ_INT(pq_lake_uploads_unlink(u, "t/.two.csv.2", &err), PQ_OK);
    CHECK(!stats_as(u, "t/.two.csv.2", 12));
    CHECK_EQ_INT(rename_as(u, "t/.two.csv.2", "t/two.csv", 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(parts_named("t", "two-"), 0);
    CHECK_EQ_INT(pq_lake_uploads_unlink(u, "t/rows.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
}

/* GNU mv renames with RENAME_NOREPLACE, and on EINVAL (bad input) tries
 * again without: the same outcome, the file still parked under its name
 * (not EPERM, which would say the file is gone). */
static void test_mv_retries(pq_lake_uploads *u)
{
    pq_error err;
    pq_lake_open_upload *f = created(u, "t/.bad.csv.Xy", 101, 21, "id,name\nzz,x\n");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(rename_as(u, "t/.bad.csv.Xy", "t/bad.csv", PQ_RENAME_NOREPLACE, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK(stats_as(u, "t/.bad.csv.Xy", 13));
    CHECK_EQ_INT(rename_as(u, "t/.bad.csv.Xy", "t/bad.csv", 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK(strstr(err.msg, "bad.csv") != NULL);
    CHECK_EQ_INT(rename_as(u, "t/.bad.csv.Xy", "t/bad.csv", 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    CHECK_EQ_INT(parts_named("t", "bad"), 0);
    CHECK(!stats_as(u, "t/bad.csv", 13));
    CHECK_EQ_INT(pq_lake_uploads_unlink(u, "t/.bad.csv.Xy", &err), PQ_OK);
    CHECK_EQ_INT(rename_as(u, "t/.bad.csv.Xy", "t/bad.csv", 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
}

/* A close of one descriptor while the process holds another (a shell's
 * `echo >&3`, os.close(os.dup(fd))) does not commit, nor a child closing
 * its inherited copy; the writer's last close does, once. */
static void test_dup_close(pq_lake_uploads *u)
{
    pq_error err;
    pq_lake_open_upload *f = created(u, "t/dup.csv", 101, 31, "id,name\n7,d\n");
    CHECK(f != NULL);
    if (!f) return;
    fake.holder_pid = 1;
    fake.holder_ino = 31;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "dup-"), 0);
    fake.holder_pid = 0;
    CHECK_EQ_INT(flush(f, 201, &err), PQ_OK); /* process 2: a child */
    CHECK_EQ_INT(parts_named("t", "dup-"), 0);
    CHECK_EQ_INT(pq_lake_uploads_write(f, "id,name\n7,d\n8,e\n", 16, 0, &err), PQ_OK);
    CHECK_EQ_INT(flush(f, 102, &err), PQ_OK); /* process 1's last descriptor, from another thread */
    CHECK_EQ_INT(parts_named("t", "dup-"), 1);
    CHECK(stats_as(u, "t/dup.csv", 16));
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "dup-"), 1);
    /* A file its creator never closed (the descriptor went to a child that
     * wrote it) is written at the last close. */
    f = created(u, "t/passed.csv", 101, 32, "id,name\n9,p\n");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(flush(f, 201, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "passed-"), 0);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "passed-"), 1);
}

/* A writer killed by a signal (kill -9, SIGTERM of cp): the kernel closes
 * its file as close() would, and nothing is written, not at the release
 * either.  One killed while its close commits writes nothing too. */
static void test_dying_writer(pq_lake_uploads *u)
{
    pq_error err;
    pq_lake_open_upload *f = created(u, "t/killed.csv", 101, 41, "id,name\n1,k\n");
    CHECK(f != NULL);
    if (!f) return;
    fake.killed_tid = 101;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    fake.killed_tid = 0;
    CHECK_EQ_INT(parts_named("t", "killed-"), 0);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "killed-"), 0);
    CHECK(!stats_as(u, "t/killed.csv", 12));

    f = created(u, "t/dying.csv", 101, 42, "id,name\n1,k\n");
    CHECK(f != NULL);
    if (!f) return;
    fake.dying_tid = 101;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CANCELLED);
    fake.dying_tid = 0;
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "dying-"), 0);
    CHECK(!stats_as(u, "t/dying.csv", 12));
    /* An exit without close() (a command behind `> FILE`) commits. */
    f = created(u, "t/exited.csv", 101, 43, "id,name\n1,k\n");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "exited-"), 1);
}

/* After its close a name still stats, with the bytes written, though the
 * lake has its rows under a part name: chmod and utimes by name (cp -p,
 * shutil.copy2) find it; it is not readable; opened for writing again it
 * is a new file. */
static void test_just_written(pq_lake *l, pq_lake_uploads *u)
{
    pq_error err;
    const char *text = "id,name\n11,s\n12,t\n";
    pq_lake_open_upload *f = created(u, "t/sized.csv", 101, 51, text);
    CHECK(f != NULL);
    if (!f) return;
    uint64_t size = 0;
    /* ftruncate of the open file (by its number), then written again */
    CHECK_EQ_INT(pq_lake_uploads_setattr(u, NULL, 51, 3, &size, &err), PQ_OK);
    CHECK_EQ_INT(size, 3);
    CHECK(pq_lake_uploads_stat(u, NULL, 51, &size) && size == 3);
    CHECK_EQ_INT(pq_lake_uploads_write(f, text, strlen(text), 0, &err), PQ_OK);
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(parts_named("t", "sized-"), 1);
    pq_lake_attr a;
    CHECK_EQ_INT(pq_lake_stat(l, "t/sized.csv", &a, NULL, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOTFOUND);
    CHECK(stats_as(u, "t/sized.csv", strlen(text)));
    size = 0;
    CHECK_EQ_INT(pq_lake_uploads_setattr(u, "t/sized.csv", 51, -1, &size, &err), PQ_OK);
    CHECK_EQ_INT(size, strlen(text));
    /* no longer open: not truncated */
    CHECK_EQ_INT(pq_lake_uploads_setattr(u, "t/sized.csv", 51, 0, &size, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOTFOUND);
    pq_fail(&err, PQ_E_NOTFOUND, "no such file");
    CHECK_EQ_INT(pq_lake_uploads_refuse_read(u, "t/sized.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_ACCESS);
    pq_fail(&err, PQ_E_NOTFOUND, "no such file");
    CHECK_EQ_INT(pq_lake_uploads_refuse_read(u, "t/never.csv", &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOTFOUND);
    pq_lake_open_upload *again = NULL;
    CHECK_EQ_INT(pq_lake_uploads_reopen(u, "t/sized.csv", NULL, 101, 51, &again, &err), PQ_OK);
    CHECK(pq_lake_uploads_stat(u, NULL, 51, &size) && size == 0); /* the new file, by its number */
    pq_lake_uploads_discard(again);
    CHECK_EQ_INT(pq_lake_uploads_reopen(u, "t/never.csv", NULL, 101, 52, &again, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
}

/* More names written within 10 s than a ring of 16 held: each still
 * stats with its own size, and the first can still be renamed (DuckDB's
 * COPY, tempfile + os.replace). */
static void test_many_written(pq_lake_uploads *u)
{
    enum { N = 40 };
    pq_error err;
    char path[64], text[128];
    size_t sizes[N];
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "t/many%d.csv", i);
        /* sizes all different */
        snprintf(text, sizeof text, "id,name\n%d,%.*s\n", 100 + i, i + 1, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
        sizes[i] = strlen(text);
        pq_lake_open_upload *f = created(u, path, 101, 1000 + (uint64_t)i, text);
        CHECK(f != NULL);
        if (!f) return;
        CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
        pq_lake_uploads_release(f);
    }
    int right = 0;
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "t/many%d.csv", i);
        right += stats_as(u, path, sizes[i]);
    }
    CHECK_EQ_INT(right, N);
    CHECK_EQ_INT(rename_as(u, "t/many0.csv", "t/renamed0.csv", 0, &err), PQ_OK);
    CHECK(stats_as(u, "t/renamed0.csv", sizes[0]));
    uint64_t size;
    CHECK(!pq_lake_uploads_stat(u, "t/many0.csv", 0, &size));
    /* Expiry forgets none of them before their time. */
    pq_lake_uploads_expire(u);
    right = 0;
    for (int i = 1; i < N; i++) {
        snprintf(path, sizeof path, "t/many%d.csv", i);
        right += stats_as(u, path, sizes[i]);
    }
    CHECK_EQ_INT(right, N - 1);
}

/* A file renamed while it is still open (a tempfile renamed inside its
 * `with` block) is committed under the new name at its close; renames stay
 * in their directory, take only names that hold data, and RENAME_NOREPLACE
 * onto a name just written is EEXIST. */
static void test_rename_open(pq_lake_uploads *u)
{
    pq_error err;
    pq_lake_open_upload *f = created(u, "t/.open.tmp", 101, 61, "id,name\n61,o\n");
    CHECK(f != NULL);
    if (!f) return;
    moved.n = 0;
    CHECK_EQ_INT(rename_as(u, "t/.open.tmp", "t/landed.csv", 0, &err), PQ_OK);
    CHECK_EQ_INT(moved.n, 1);
    CHECK_EQ_STR(moved.to, "t/landed.csv");
    CHECK(stats_as(u, "t/landed.csv", 13));
    CHECK(!stats_as(u, "t/.open.tmp", 13));
    uint64_t size;
    CHECK(pq_lake_uploads_stat(u, "t/.open.tmp", 61, &size) && size == 13); /* by its number, under any name */
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    CHECK_EQ_INT(parts_named("t", "landed-"), 1);
    CHECK_EQ_INT(parts_named("t", ".open"), 0);
    pq_lake_uploads_release(f);

    f = created(u, "t/other.csv", 101, 62, "id,name\n62,p\n63,q\n");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    pq_lake_uploads_release(f);
    CHECK_EQ_INT(rename_as(u, "t/other.csv", "t/landed.csv", PQ_RENAME_NOREPLACE, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_EXISTS);
    CHECK_EQ_INT(rename_as(u, "t/other.csv", "t/schema.txt", 0, &err), PQ_ERR); /* a view file's name (data.csv is data) */
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(rename_as(u, "t/other.csv", "u/other.csv", 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(rename_as(u, "t/other.csv", "t/landed.csv", PQ_RENAME_EXCHANGE, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
    CHECK_EQ_INT(rename_as(u, "t/other.csv", "t/landed.csv", 0, &err), PQ_OK);
    CHECK(stats_as(u, "t/landed.csv", 18)); /* replaced by the one renamed onto it */
    CHECK(!stats_as(u, "t/other.csv", 18));
    CHECK_EQ_INT(parts_named("t", "landed-"), 1);
    CHECK_EQ_INT(parts_named("t", "other-"), 1); /* the rows stay where they were written */
    /* Data is not renamed through the mount. */
    CHECK_EQ_INT(rename_as(u, "t/never.csv", "t/x.csv", 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_DENIED);
}

/* A parked file never renamed within staged_timeout_s is discarded by the
 * once-a-second expiry, and counted. */
static void test_parked_expires(pq_lake *l)
{
    pq_lake_uploads *u = open_uploads(l, 1);
    CHECK(u != NULL);
    if (!u) return;
    pq_error err;
    pq_lake_open_upload *f = created(u, "t/.late.csv.1", 101, 71, "id,name\n71,l\n");
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
        pq_lake_uploads_release(f);
    }
    CHECK(stats_as(u, "t/.late.csv.1", 13));
    sleep(2);
    pq_lake_uploads_expire(u);
    CHECK(!stats_as(u, "t/.late.csv.1", 13));
    char *stats = read_view(l, ".pqfs/stats");
    CHECK(stats && strstr(stats, "staged_files_expired 1\n"));
    free(stats);
    /* What is open or parked at the end is discarded: nothing lands. */
    f = created(u, "t/.left.csv.1", 101, 72, "id,name\n72,l\n");
    CHECK(f != NULL);
    if (f) CHECK_EQ_INT(flush(f, 101, &err), PQ_OK);
    CHECK(created(u, "t/open-at-end.csv", 101, 73, "id,name\n73,l\n") != NULL);
    pq_lake_uploads_free(u);
    CHECK_EQ_INT(parts_named("t", "left-"), 0);
    CHECK_EQ_INT(parts_named("t", "open-at-end-"), 0);
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
        pq_error err;
        CHECK_EQ_INT(pq_lake_mkdir(l, "t", &err), PQ_OK);
        pq_lake_uploads *u = open_uploads(l, 0);
        CHECK(u != NULL);
        if (u) {
            test_rsync_lands_on_rename(l, u);
            test_mv_retries(u);
            test_dup_close(u);
            test_dying_writer(u);
            test_just_written(l, u);
            test_many_written(u);
            test_rename_open(u);
            pq_lake_uploads_free(u);
        }
        test_parked_expires(l);
        pq_lake_close(l);
    }
    (void)rm_tree(root);
    (void)rm_tree(cache);
    return check_report();
}
