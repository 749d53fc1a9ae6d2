/* Table discovery: Hive partition directories walked through the store's
 * one-level listings (the rules are in table.h).
 *
 * The walk is a depth-first recursion, one store listing per directory
 * entered.  Each level lists once into a small arena, classifies and sorts its
 * entries, descends into the partition directories that fit, then takes its
 * own data files.  Nothing is listed twice and nothing the layout or the
 * prune callback rejects is listed at all: on S3 every listing is a request.
 * On stores with slow round trips (parallel_requests > 1) the partition
 * directories of a level are listed together, several at a time, before the
 * walk enters them in order; what the walk then does is the same. */
#include "table.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mem.h"
#include "numfmt.h"
#include "threads.h"

#define HIVE_NULL_VALUE "__HIVE_DEFAULT_PARTITION__"

/* ------------------------------------------------------------ names --- */

static bool is_hidden_name(const char *name)
{
    return name[0] == '_' || name[0] == '.';
}

/* The directory a Delta Lake table keeps its transaction log in.  Such a
 * table's files are not its rows: removed files stay until VACUUM, and
 * deletion vectors hide rows of the files that are live. */
#define DELTA_LOG_DIR "_delta_log"

static bool is_delta_log(const pq_dirent *e)
{
    return e->st.is_dir && strcmp(e->name, DELTA_LOG_DIR) == 0;
}

static bool has_parquet_suffix(const char *name)
{
    static const char suffix[] = ".parquet";
    size_t n = strlen(name), k = sizeof suffix - 1;
    if (n < k) return false;
    for (size_t i = 0; i < k; i++) {
        char c = name[n - k + i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != suffix[i]) return false;
    }
    return true;
}

static bool is_data_file(const pq_dirent *e)
{
    return !e->st.is_dir && e->st.size > 0 && !is_hidden_name(e->name) &&
           has_parquet_suffix(e->name);
}

/* `key=value` with a non-empty key; the value may be empty. */
static bool is_partition_dir(const pq_dirent *e)
{
    if (!e->st.is_dir || is_hidden_name(e->name)) return false;
    const char *eq = strchr(e->name, '=');
    return eq && eq != e->name;
}

/* ------------------------------------------------- percent encoding --- */

int pq_percent_decode(const char *s, size_t n, char *out)
{
    if (n > INT_MAX) return -1;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int hi = s[i] == '%' && n - i >= 3 ? pq_hex_digit(s[i + 1]) : -1;
        int lo = hi >= 0 ? pq_hex_digit(s[i + 2]) : -1;
        if (lo < 0) { /* a '%' that starts no escape stays */
            out[o++] = s[i];
            continue;
        }
        out[o++] = (char)(hi << 4 | lo);
        i += 2;
    }
    out[o] = '\0';
    return (int)o;
}

size_t pq_path_text_decode(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && n - i >= 3 && s[i + 1] == '2' && (s[i + 2] == 'F' || s[i + 2] == 'f' || s[i + 2] == '5')) {
            out[o++] = s[i + 2] == '5' ? '%' : '/';
            i += 2;
            continue;
        }
        out[o++] = s[i];
    }
    out[o] = '\0';
    return o;
}

/* What Hive's FileUtils escapes in partition path names (the portable set:
 * the Windows-only extras ' ', '<', '>', '|' are left alone, as Hive does on
 * other systems).  Bytes >= 0x80 stay raw so UTF-8 names read naturally. */
static bool needs_escape(unsigned char c)
{
    if (c < 0x20 || c == 0x7f) return true; /* NUL included: strchr below would match it */
    return strchr("\"#%'*/:=?\\{[]^", c) != NULL;
}

int pq_percent_encode(const char *s, size_t n, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t need = needs_escape(c) ? 3 : 1;
        if (cap - o <= need || o + need > INT_MAX) return -1; /* keep room for the NUL */
        if (need == 3) {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        } else {
            out[o++] = (char)c;
        }
    }
    if (cap == 0) return -1;
    out[o] = '\0';
    return (int)o;
}

/* Decodes a key or value into the arena; the raw text when the escape is
 * malformed or yields a NUL byte (values are C strings). */
static char *decode_component(pq_arena *a, const char *s, size_t n)
{
    char *out = pq_arena_alloc(a, n + 1);
    if (!out) return NULL;
    int len = pq_percent_decode(s, n, out);
    if (len < 0 || memchr(out, '\0', (size_t)len) != NULL) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    return out;
}

/* ----------------------------------------------------- value types --- */

bool pq_part_value_is_int64(const char *s)
{
    bool negative = *s == '-';
    if (negative) s++;
    if (!*s) return false;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (acc > (limit - d) / 10) return false;
        acc = acc * 10 + d;
    }
    return true;
}

static bool read_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

bool pq_part_value_is_date(const char *s)
{
    static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int year, month, day;
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-') return false;
    if (!read_digits(s, 4, &year) || !read_digits(s + 5, 2, &month) ||
        !read_digits(s + 8, 2, &day))
        return false;
    if (month < 1 || month > 12 || day < 1) return false;
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    int limit = month_days[month - 1] + (month == 2 && leap);
    return day <= limit;
}

int pq_part_value_bool(const char *s)
{
    if (!strcasecmp(s, "true")) return 1;
    if (!strcasecmp(s, "false")) return 0;
    return -1;
}

int pq_part_value_micros(const char *s, bool utc, int64_t *micros)
{
    int had_offset = 0;
    if (pq_parse_timestamp_units(s, strlen(s), 6, micros, &had_offset) != 0) return -1;
    return had_offset && !utc ? -1 : 0;
}

int pq_part_value_decimal(const char *s, pq_part_type type, __int128 *unscaled)
{
    if (!pq_part_is_decimal(type)) return -1;
    int precision = pq_part_decimal_precision(type), scale = pq_part_decimal_scale(type);
    __int128 v;
    int32_t at;
    if (pq_parse_decimal(s, strlen(s), &v, &at) != 0) return -1;
    /* To the column's scale: more digits only when they are zeros. */
    for (; at > scale; at--) {
        if (v % 10 != 0) return -1;
        v /= 10;
    }
    for (; at < scale; at++) {
        if (v >= pq_pow10_i128[37] || v <= -pq_pow10_i128[37]) return -1; /* 10 v would be 10^38 or more */
        v *= 10;
    }
    if (v >= pq_pow10_i128[precision] || v <= -pq_pow10_i128[precision]) return -1;
    *unscaled = v;
    return 0;
}

bool pq_part_value_fits(const char *value, pq_part_type type)
{
    if (!value) return true; /* NULL fits every type */
    __int128 unscaled;
    if (pq_part_is_decimal(type)) return pq_part_value_decimal(value, type, &unscaled) == 0;
    switch (type) {
    case PQ_PART_INT64: return pq_part_value_is_int64(value);
    case PQ_PART_DATE: return pq_part_value_is_date(value);
    case PQ_PART_DOUBLE: {
        double d;
        return pq_parse_double(value, strlen(value), &d) == 0;
    }
    case PQ_PART_BOOL: return pq_part_value_bool(value) >= 0;
    case PQ_PART_TIMESTAMP:
    case PQ_PART_TIMESTAMP_NTZ: {
        int64_t us;
        return pq_part_value_micros(value, type == PQ_PART_TIMESTAMP, &us) == 0;
    }
    default: return true;
    }
}

const char *pq_part_type_kind(pq_part_type type)
{
    return type == PQ_PART_INT64    ? "an integer"
           : type == PQ_PART_DATE   ? "a date (YYYY-MM-DD)"
           : type == PQ_PART_DOUBLE ? "a floating-point number"
           : type == PQ_PART_BOOL   ? "a boolean (true or false)"
           : type == PQ_PART_TIMESTAMP ? "a timestamp (YYYY-MM-DD HH:MM:SS[.ffffff], UTC unless it says)"
           : type == PQ_PART_TIMESTAMP_NTZ ? "a timestamp without a zone (YYYY-MM-DD HH:MM:SS[.ffffff])"
           : pq_part_is_decimal(type) ? "a decimal within the column's precision and scale (never rounded)"
                                    : "a string";
}

/* ---------------------------------------------------------- listing --- */

/* One directory's entries, copied out of the listing callback. */
typedef struct level_entry {
    const char *name;          /* raw directory entry name */
    pq_stat st;
    const char *key;           /* partition directories: decoded key */
    const char *value;         /*   and decoded value, NULL for the NULL partition */
} level_entry;

typedef struct level {
    pq_arena arena;            /* names, keys and values */
    level_entry *parts;        /* partition directories */
    size_t n_parts, cap_parts;
    level_entry *files;        /* data files */
    size_t n_files, cap_files;
    bool delta_log;            /* it holds _delta_log/ */
    bool nomem;
} level;

static void level_free(level *lv)
{
    pq_arena_free(&lv->arena);
    free(lv->parts);
    free(lv->files);
}

static level_entry *level_push(level_entry **arr, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        level_entry *grown = realloc(*arr, ncap * sizeof *grown);
        if (!grown) return NULL;
        *arr = grown;
        *cap = ncap;
    }
    level_entry *e = &(*arr)[(*n)++];
    memset(e, 0, sizeof *e);
    return e;
}

static int collect_entry(void *ctx, const pq_dirent *e)
{
    level *lv = ctx;
    if (is_delta_log(e)) lv->delta_log = true;
    bool part = is_partition_dir(e);
    if (!part && !is_data_file(e)) return 0;
    level_entry *le = part ? level_push(&lv->parts, &lv->n_parts, &lv->cap_parts)
                           : level_push(&lv->files, &lv->n_files, &lv->cap_files);
    if (!le) goto nomem;
    le->st = e->st;
    size_t len = strlen(e->name);
    if (!(le->name = pq_arena_strndup(&lv->arena, e->name, len))) goto nomem;
    if (part) {
        const char *eq = strchr(le->name, '=');
        const char *raw_value = eq + 1;
        if (!(le->key = decode_component(&lv->arena, le->name, (size_t)(eq - le->name))))
            goto nomem;
        if (strcmp(raw_value, HIVE_NULL_VALUE) == 0) {
            le->value = NULL;
        } else if (!(le->value = decode_component(&lv->arena, raw_value, strlen(raw_value)))) {
            goto nomem;
        }
    }
    return 0;
nomem:
    lv->nomem = true;
    return 1; /* stop the listing; the walk reports it */
}

static int compare_entry_names(const void *a, const void *b)
{
    /* strcmp compares as unsigned char: bytewise order. */
    return strcmp(((const level_entry *)a)->name, ((const level_entry *)b)->name);
}

/* ------------------------------------------------------------- walk --- */

typedef struct walker {
    pq_store *store;
    const pq_table_opts *opts;
    pq_table *t;
    int cap_files;
    pq_buf path;               /* the directory being walked, relative to the store root */
    const char *keys[PQ_TABLE_MAX_DEPTH];   /* partition chain of that directory */
    const char *values[PQ_TABLE_MAX_DEPTH];
    bool layout_fixed;
    pq_error *err;
} walker;

/* Counts a path that does not fit the layout; the first one is kept with
 * the reason, so the lake can say why files are left out. */
static void count_ignored(walker *w, const char *name, const char *why)
{
    pq_table *t = w->t;
    if (t->n_ignored == 0)
        snprintf(t->ignored_first, sizeof t->ignored_first, "%.*s%s%s: %s", (int)(w->path.len < 150 ? w->path.len : 150),
                 w->path.data ? w->path.data : "", w->path.len ? "/" : "", name, why);
    if (t->n_ignored < INT_MAX) t->n_ignored++;
}

static const pq_part_decl *find_declared(const pq_table_opts *opts, const char *name)
{
    for (int i = 0; i < opts->n_declared; i++)
        if (opts->declared[i].name && strcmp(opts->declared[i].name, name) == 0)
            return &opts->declared[i];
    return NULL;
}

static int fix_layout(walker *w, const char *const *names, int n)
{
    pq_table *t = w->t;
    w->layout_fixed = true;
    if (n == 0) return PQ_OK;
    t->part_names = calloc((size_t)n, sizeof *t->part_names);
    t->part_types = calloc((size_t)n, sizeof *t->part_types);
    if (!t->part_names || !t->part_types) goto nomem;
    t->n_parts = n;
    for (int i = 0; i < n; i++)
        if (!(t->part_names[i] = strdup(names[i]))) goto nomem;
    return PQ_OK;
nomem:
    return PQ_NOMEM(w->err);
}

/* Appends "dir/name" (or "name" at the store root) to the path buffer. */
static int path_push(pq_buf *path, const char *name)
{
    if (path->len > 0 && pq_buf_append(path, "/", 1) != 0) return -1;
    if (pq_buf_append(path, name, strlen(name) + 1) != 0) return -1;
    path->len--; /* keep the NUL in the buffer, out of the length */
    return 0;
}

static void path_pop(pq_buf *path, size_t len)
{
    path->len = len;
    if (path->data) path->data[len] = '\0';
}

static int add_file(walker *w, const level_entry *f, int depth)
{
    pq_table *t = w->t;
    if (t->n_files == w->cap_files) {
        if (w->cap_files > INT_MAX / 2)
            return pq_fail(w->err, PQ_E_USAGE, "too many files in one table");
        int ncap = w->cap_files ? w->cap_files * 2 : 64;
        pq_table_file *grown = realloc(t->files, (size_t)ncap * sizeof *grown);
        if (!grown) return PQ_NOMEM(w->err);
        t->files = grown;
        w->cap_files = ncap;
    }
    pq_table_file *tf = &t->files[t->n_files];
    memset(tf, 0, sizeof *tf);
    tf->st = f->st;

    size_t saved = w->path.len;
    if (path_push(&w->path, f->name) != 0) goto nomem;
    tf->path = strdup(w->path.data);
    path_pop(&w->path, saved);
    if (!tf->path) goto nomem;

    if (depth > 0) {
        /* The value array and its strings in one block. */
        size_t size = (size_t)depth * sizeof(char *);
        for (int i = 0; i < depth; i++)
            if (w->values[i]) size += strlen(w->values[i]) + 1;
        char **values = malloc(size);
        if (!values) {
            free(tf->path);
            goto nomem;
        }
        char *text = (char *)(values + depth);
        for (int i = 0; i < depth; i++) {
            if (!w->values[i]) {
                values[i] = NULL;
                continue;
            }
            size_t len = strlen(w->values[i]) + 1;
            memcpy(text, w->values[i], len);
            values[i] = text;
            text += len;
        }
        tf->values = values;
    }
    t->n_files++;
    return PQ_OK;
nomem:
    return PQ_NOMEM(w->err);
}

/* Why a partition directory at `depth` (0 = directly under the root) may
 * not be entered (the layout, the key chain, the declared type), or NULL
 * when it may. */
static const char *partition_dir_misfit(walker *w, const level_entry *p, int depth)
{
    if (depth >= PQ_TABLE_MAX_DEPTH) return "nested too deep";
    if (w->layout_fixed) {
        if (depth >= w->t->n_parts || strcmp(p->key, w->t->part_names[depth]) != 0)
            return "not the table's partition layout";
    } else {
        for (int i = 0; i < depth; i++)
            if (strcmp(w->keys[i], p->key) == 0) return "a partition column named twice";
    }
    const pq_part_decl *decl = find_declared(w->opts, p->key);
    if (decl && !pq_part_value_fits(p->value, decl->type))
        return decl->type == PQ_PART_INT64 ? "not an integer, as the ini declares"
                                           : "not a date (YYYY-MM-DD), as the ini declares";
    return NULL;
}

/* The listing of one directory, made ahead of the walk. */
typedef struct listed {
    char *path;                /* NULL: not listed ahead (the walk lists it) */
    level lv;
    int rc;
    pq_error err;
    bool prune_known, pruned;  /* the prune callback's answer, when asked */
} listed;

typedef struct prefetch {
    pq_store *store;
    listed *dirs;
} prefetch;

static void prefetch_one(void *arg, size_t i)
{
    prefetch *pf = arg;
    listed *d = &pf->dirs[i];
    if (d->path) d->rc = pf->store->ops->list(pf->store, d->path, collect_entry, &d->lv, &d->err);
}

static void listed_free(listed *dirs, size_t n)
{
    if (!dirs) return;
    for (size_t i = 0; i < n; i++) {
        free(dirs[i].path);
        level_free(&dirs[i].lv);
    }
    free(dirs);
}

/* Whether the prune callback drops the partition directory whose key and
 * value are w->keys[depth], w->values[depth]. */
static bool pruned_here(walker *w, int depth)
{
    return w->opts->prune && !w->opts->prune(w->opts->prune_ctx, depth + 1, w->keys, w->values);
}

/* The subdirectories of lv the walk will likely enter, listed ahead
 * together into *out (lv->n_parts entries, in lv's order): those that fit
 * as things stand, have the key of the first that does (before the first
 * file fixes the layout, that is the likely one) and that the prune
 * callback keeps (its answer is kept for the walk).  The walk decides
 * again: a listing made for nothing costs a request, never a different
 * table.  With one directory to enter, nothing is listed ahead (the walk
 * lists it); the prune answers stay. */
static int list_ahead(walker *w, const level *lv, int depth, listed **out)
{
    listed *ahead = *out = calloc(lv->n_parts, sizeof *ahead);
    if (!ahead) return PQ_NOMEM(w->err);
    size_t wanted = 0;
    const char *key = NULL;
    for (size_t i = 0; i < lv->n_parts; i++) {
        const level_entry *p = &lv->parts[i];
        if (partition_dir_misfit(w, p, depth) || (key && strcmp(key, p->key) != 0)) continue;
        key = p->key;
        w->keys[depth] = p->key;
        w->values[depth] = p->value;
        ahead[i].prune_known = true;
        if ((ahead[i].pruned = pruned_here(w, depth))) continue;
        ahead[i].path = pq_path_join(w->path.len ? w->path.data : "", p->name);
        if (!ahead[i].path) return PQ_NOMEM(w->err);
        pq_arena_init(&ahead[i].lv.arena, 4096);
        wanted++;
    }
    if (wanted > 1) {
        prefetch pf = {w->store, ahead};
        pq_parallel_for(lv->n_parts, w->store->parallel_requests, prefetch_one, &pf);
        return PQ_OK;
    }
    for (size_t i = 0; i < lv->n_parts; i++) {
        free(ahead[i].path);
        ahead[i].path = NULL;
    }
    return PQ_OK;
}

/* Walks the directory at w->path.  pre: its listing made ahead (taken over
 * and freed here), or NULL to list it now. */
static int walk_dir(walker *w, int depth, listed *pre)
{
    level lv;
    memset(&lv, 0, sizeof lv);
    pq_arena_init(&lv.arena, 4096);
    int rc = PQ_OK;
    listed *ahead = NULL;
    size_t n_ahead = 0;

    int listed_rc;
    if (pre && pre->path) {
        level_free(&lv);
        lv = pre->lv;
        memset(&pre->lv, 0, sizeof pre->lv);
        listed_rc = pre->rc;
        if (listed_rc != PQ_OK) *w->err = pre->err;
    } else {
        listed_rc = w->store->ops->list(w->store, w->path.data, collect_entry, &lv, w->err);
    }
    if (listed_rc != PQ_OK) {
        pq_error_prefix(w->err, "directory '%s': ", w->path.len ? w->path.data : ".");
        rc = PQ_ERR;
        goto done;
    }
    if (lv.nomem) {
        rc = pq_fail(w->err, PQ_E_NOMEM, "out of memory listing '%s'", w->path.data);
        goto done;
    }
    if (depth == 0 && lv.delta_log) {
        /* Read as a directory of files, it would show the rows of removed
         * files too.  Its log is read by tablefmt/ (pqtool opens a table
         * through pq_tf_open); discovery, which the mount runs, refuses it
         * until the mount does too (docs/conformance.md). */
        rc = pq_fail(w->err, PQ_E_UNSUPPORTED,
                     "'%s' is a Delta Lake table (it holds " DELTA_LOG_DIR "/): the mount does not read the "
                     "Delta transaction log yet (pqtool cat does), and its Parquet files alone are not the table's rows",
                     w->path.len ? w->path.data : w->store->root ? w->store->root : ".");
        goto done;
    }
    if (lv.n_parts > 1) qsort(lv.parts, lv.n_parts, sizeof *lv.parts, compare_entry_names);
    if (lv.n_files > 1) qsort(lv.files, lv.n_files, sizeof *lv.files, compare_entry_names);

    if (w->store->parallel_requests > 1 && lv.n_parts > 1) {
        n_ahead = lv.n_parts;
        if ((rc = list_ahead(w, &lv, depth, &ahead)) != PQ_OK) goto done;
    }

    /* Subdirectories before this directory's own files (see table.h). */
    for (size_t i = 0; i < lv.n_parts; i++) {
        const level_entry *p = &lv.parts[i];
        const char *misfit = partition_dir_misfit(w, p, depth);
        if (misfit) {
            count_ignored(w, p->name, misfit);
            continue;
        }
        w->keys[depth] = p->key;
        w->values[depth] = p->value;
        if (ahead && ahead[i].prune_known ? ahead[i].pruned : pruned_here(w, depth)) {
            if (w->t->n_dirs_pruned < INT_MAX) w->t->n_dirs_pruned++;
            continue;
        }
        size_t saved = w->path.len;
        if (path_push(&w->path, p->name) != 0) {
            rc = PQ_NOMEM(w->err);
            goto done;
        }
        rc = walk_dir(w, depth + 1, ahead ? &ahead[i] : NULL);
        path_pop(&w->path, saved);
        if (rc != PQ_OK) goto done;
    }

    for (size_t i = 0; i < lv.n_files; i++) {
        if (!w->layout_fixed) {
            if ((rc = fix_layout(w, w->keys, depth)) != PQ_OK) goto done;
        } else if (depth != w->t->n_parts) {
            count_ignored(w, lv.files[i].name, "a file at another depth than the table's partition layout");
            continue;
        }
        /* Every directory entered since the layout was fixed matched it, and
         * those entered before are the first file's own chain: the keys of
         * this directory are the layout's. */
        if ((rc = add_file(w, &lv.files[i], depth)) != PQ_OK) goto done;
    }

done:
    listed_free(ahead, n_ahead);
    level_free(&lv);
    return rc;
}

/* ------------------------------------------------------------ types --- */

static pq_part_type infer_type(const pq_table *t, int col)
{
    bool all_int = true, all_date = true, any = false;
    for (int i = 0; i < t->n_files && (all_int || all_date); i++) {
        const char *v = t->files[i].values[col];
        if (!v) continue; /* NULLs do not vote */
        any = true;
        if (all_int && !pq_part_value_is_int64(v)) all_int = false;
        if (all_date && !pq_part_value_is_date(v)) all_date = false;
    }
    if (!any) return PQ_PART_STRING;
    if (all_int) return PQ_PART_INT64;
    if (all_date) return PQ_PART_DATE;
    return PQ_PART_STRING;
}

static int settle_types(walker *w)
{
    pq_table *t = w->t;
    const pq_table_opts *opts = w->opts;
    /* A table with no file yet (a new one): the declared columns are its layout. */
    if (!w->layout_fixed) {
        const char *names[PQ_TABLE_MAX_DEPTH];
        int n = 0;
        for (int i = 0; i < opts->n_declared && n < PQ_TABLE_MAX_DEPTH; i++) {
            const char *name = opts->declared[i].name;
            if (name && find_declared(opts, name) == &opts->declared[i]) names[n++] = name;
        }
        PQ_TRY(fix_layout(w, names, n));
    }
    for (int i = 0; i < opts->n_declared; i++) {
        const char *name = opts->declared[i].name;
        if (!name) continue;
        bool found = false;
        for (int j = 0; j < t->n_parts && !found; j++) found = strcmp(t->part_names[j], name) == 0;
        if (found) continue;
        pq_buf layout;
        pq_buf_init(&layout);
        for (int j = 0; j < t->n_parts; j++)
            pq_buf_printf(&layout, "%s%s", j ? ", " : "", t->part_names[j]);
        pq_fail(w->err, PQ_E_USAGE,
                "declared partition column '%s' is not in the table's partition layout (%s)",
                name, layout.len ? layout.data : "none");
        pq_buf_free(&layout);
        return PQ_ERR;
    }
    for (int j = 0; j < t->n_parts; j++) {
        const pq_part_decl *decl = find_declared(opts, t->part_names[j]);
        t->part_types[j] = decl && decl->type != PQ_PART_INFER ? decl->type : infer_type(t, j);
    }
    return PQ_OK;
}

/* -------------------------------------------------------- interface --- */

void pq_table_free(pq_table *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_files; i++) {
        free(t->files[i].path);
        free(t->files[i].values);
    }
    free(t->files);
    for (int i = 0; i < t->n_parts; i++) free(t->part_names[i]);
    free(t->part_names);
    free(t->part_types);
    free(t->root);
    free(t);
}

int pq_table_discover(pq_store *store, const char *root, const pq_table_opts *opts, pq_table **out,
                      pq_error *err)
{
    static const pq_table_opts no_opts;
    *out = NULL;
    if (!opts) opts = &no_opts;
    if (opts->n_expected_layout > PQ_TABLE_MAX_DEPTH)
        return pq_fail(err, PQ_E_USAGE, "partition layout deeper than %d levels",
                       PQ_TABLE_MAX_DEPTH);

    pq_table *t = calloc(1, sizeof *t);
    if (!t) return PQ_NOMEM(err);
    size_t root_len = strlen(root);
    while (root_len > 0 && root[root_len - 1] == '/') root_len--;
    if (!(t->root = strndup(root, root_len))) {
        free(t);
        return PQ_NOMEM(err);
    }

    walker w = {.store = store, .opts = opts, .t = t, .err = err};
    pq_buf_init(&w.path);
    int rc = PQ_OK;
    if (pq_buf_append(&w.path, t->root, root_len + 1) != 0) {
        rc = PQ_NOMEM(err);
        goto done;
    }
    w.path.len = root_len;
    if (opts->expected_layout &&
        (rc = fix_layout(&w, opts->expected_layout, opts->n_expected_layout)) != PQ_OK)
        goto done;
    if ((rc = walk_dir(&w, 0, NULL)) != PQ_OK) goto done;
    rc = settle_types(&w);

done:
    pq_buf_free(&w.path);
    if (rc != PQ_OK) {
        pq_table_free(t);
        return PQ_ERR;
    }
    *out = t;
    return PQ_OK;
}

static int find_table_entry(void *ctx, const pq_dirent *e)
{
    /* A Delta table is a table even with no file yet (its views then say
     * why they cannot be read). */
    if (!is_partition_dir(e) && !is_data_file(e) && !is_delta_log(e)) return 0;
    *(bool *)ctx = true;
    return 1; /* one is enough */
}

int pq_dir_is_table_root(pq_store *store, const char *dir, bool *out, pq_error *err)
{
    bool found = false;
    if (store->ops->list(store, dir, find_table_entry, &found, err) != PQ_OK) {
        pq_error_prefix(err, "directory '%s': ", dir[0] ? dir : ".");
        return PQ_ERR;
    }
    *out = found;
    return PQ_OK;
}
