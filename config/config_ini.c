/* Reading the ini file with inih.
 *
 * Debian's libinih (r55) is built with INI_HANDLER_LINENO=0, so the handler
 * is not told the line number; it calls the handler only for key lines, never
 * for a section header (so an empty unknown or duplicate section would go
 * unnoticed); it reads lines into a 200-byte buffer and silently truncates
 * longer ones (an S3 session token is ~1000 characters); and it treats an
 * indented line as the continuation of the previous value.  So the file is fed
 * to ini_parse_stream through our own reader, one physical line per call,
 * which keeps the line number, handles section headers and comments itself,
 * strips leading whitespace (no continuation lines: "  threads = 4" is a key,
 * not more of the previous value), and splits the rare key line that does not
 * fit inih's buffer itself, with inih's rules.  inih parses every other key
 * line and calls handle_key with the line number known.
 *
 * Syntax: "[pqfs]", "[s3]", "[table NAME]" (or [table "NAME"]); "key = value"
 * or "key: value"; whole-line comments start with ';' or '#'; an inline
 * comment is ';' after whitespace.  Section and key names are
 * case-insensitive.  The first error stops the parse. */
#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* An ini file is a few hundred bytes; anything this large is not one. */
#define INI_FILE_MAX (16u << 20)

typedef struct ini_ctx {
    pqfs_config *c;
    const char *path; /* as given, for messages */
    char *base_dir;   /* the file's directory: relative paths in it are taken from there */

    const char *text; /* the whole file */
    size_t len, pos;
    int lineno; /* the line last handed to inih: the one its handler is called for */

    cfg_section_kind kind; /* current section */
    int table_index;       /* current table in c->tables */
    char label[160];       /* "pqfs", "s3", "table events": how messages name the section */
    int key_line[CFG_MAX_KEYS]; /* where each key of the current section was set; 0: not yet */

    int pqfs_line, s3_line; /* where [pqfs] and [s3] start; 0: not seen */
    int first_table;        /* c->tables[first_table..] come from this file */
    int *table_lines;       /* their header lines */

    int err_line; /* the first error (0: none yet) */
    pq_error err; /* its message */
} ini_ctx;

static int ctx_fail(ini_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records the first error as "path:line: ..." and returns 0 (inih's "stop"). */
static int ctx_fail(ini_ctx *x, const char *fmt, ...)
{
    if (x->err_line) return 0;
    x->err_line = x->lineno;
    char why[sizeof x->err.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    pq_fail(&x->err, PQ_E_USAGE, "%s:%d: %s", x->path, x->lineno, why);
    return 0;
}

/* inih's inline comment: ';' at the start of a line part or after whitespace.
 * Returns the offset of the first of `stops` or of a comment, or n. */
static size_t find_stop_or_comment(const char *s, size_t n, const char *stops, bool start_is_space)
{
    bool was_space = start_is_space;
    for (size_t i = 0; i < n; i++) {
        if (stops && strchr(stops, s[i])) return i;
        if (was_space && s[i] == ';') return i;
        was_space = isspace((unsigned char)s[i]) != 0;
    }
    return n;
}

/* ---------------------------------------------------------------- sections */

static int table_named(const pqfs_config *c, const char *name)
{
    for (int i = 0; i < c->n_tables; i++)
        if (strcmp(c->tables[i].name, name) == 0) return i;
    return -1;
}

static int start_table(ini_ctx *x, const char *name)
{
    pqfs_config *c = x->c;
    const char *problem = cfg_table_name_problem(name);
    if (problem) return ctx_fail(x, "%s", problem);
    int existing = table_named(c, name);
    if (existing >= x->first_table)
        return ctx_fail(x, "duplicate section [table %s] (first at line %d)", name,
                        x->table_lines[existing - x->first_table]);
    if (existing >= 0) return ctx_fail(x, "duplicate section [table %s] (already defined)", name);

    int n_here = c->n_tables - x->first_table;
    pqfs_table_config *tables = realloc(c->tables, (size_t)(c->n_tables + 1) * sizeof *tables);
    if (!tables) return ctx_fail(x, "out of memory");
    c->tables = tables;
    int *lines = realloc(x->table_lines, (size_t)(n_here + 1) * sizeof *lines);
    if (!lines) return ctx_fail(x, "out of memory");
    x->table_lines = lines;

    pqfs_table_config *t = &c->tables[c->n_tables];
    if (cfg_table_copy(t, &c->table_defaults) < 0) return ctx_fail(x, "out of memory");
    free(t->name);
    t->name = cfg_strdup(name);
    if (!t->name) {
        cfg_table_free(t);
        return ctx_fail(x, "out of memory");
    }
    x->table_lines[n_here] = x->lineno;
    x->table_index = c->n_tables++;
    return 1;
}

/* "[pqfs]", "[s3]", "[table events]" or "[table "events"]".  Returns 0 on error. */
static int handle_section(ini_ctx *x, const char *line, size_t n)
{
    const char *close = memchr(line, ']', n);
    if (!close) return ctx_fail(x, "section header without ']'");
    size_t after = (size_t)(close + 1 - line);
    while (after < n && isspace((unsigned char)line[after])) after++;
    if (after < n && line[after] != ';' && line[after] != '#')
        return ctx_fail(x, "unexpected text after ']'");

    const char *inner = line + 1;
    size_t inner_len = (size_t)(close - inner);
    while (inner_len && isspace((unsigned char)*inner)) inner++, inner_len--;
    while (inner_len && isspace((unsigned char)inner[inner_len - 1])) inner_len--;
    size_t word_len = 0;
    while (word_len < inner_len && !isspace((unsigned char)inner[word_len])) word_len++;
    const char *rest = inner + word_len;
    size_t rest_len = inner_len - word_len;
    while (rest_len && isspace((unsigned char)*rest)) rest++, rest_len--;

    cfg_section_kind kind = cfg_section_kind_of(inner, word_len);
    if (kind == CFG_SECTION_NONE || (kind != CFG_SECTION_TABLE && rest_len > 0))
        return ctx_fail(x, "unknown section [%.*s]", (int)inner_len, inner);

    memset(x->key_line, 0, sizeof x->key_line);
    x->kind = kind;
    if (kind == CFG_SECTION_PQFS || kind == CFG_SECTION_S3) {
        int *first = kind == CFG_SECTION_PQFS ? &x->pqfs_line : &x->s3_line;
        const char *name = kind == CFG_SECTION_PQFS ? "pqfs" : "s3";
        if (*first) return ctx_fail(x, "duplicate section [%s] (first at line %d)", name, *first);
        *first = x->lineno;
        snprintf(x->label, sizeof x->label, "%s", name);
        return 1;
    }
    if (rest_len >= 2 && rest[0] == '"' && rest[rest_len - 1] == '"') {
        rest++;
        rest_len -= 2;
    }
    char *name = cfg_strndup(rest, rest_len);
    if (!name) return ctx_fail(x, "out of memory");
    int ok = start_table(x, name);
    if (ok) snprintf(x->label, sizeof x->label, "table %s", name);
    free(name);
    return ok;
}

/* ---------------------------------------------------------------- keys */

/* One key of the current section; value is as inih delivers it (trimmed). */
static int handle_key(ini_ctx *x, const char *name, const char *value)
{
    if (x->err_line) return 0;
    if (x->kind == CFG_SECTION_NONE)
        return ctx_fail(x, "key '%s' outside any section (put it under [pqfs], [s3] or [table NAME])",
                        name);
    int id = cfg_key_id(x->kind, name);
    if (id < 0) return ctx_fail(x, "unknown key '%s' in [%s]", name, x->label);
    if (x->key_line[id])
        return ctx_fail(x, "duplicate key '%s' in [%s] (first at line %d)", name, x->label,
                        x->key_line[id]);
    x->key_line[id] = x->lineno;

    /* inih cuts inline comments only when built with INI_ALLOW_INLINE_COMMENTS
     * (Debian's is); cutting here too keeps "source = /data ; comment" working
     * with any build, and is a no-op after inih has done it. */
    size_t len = strlen(value);
    len = find_stop_or_comment(value, len, NULL, false);
    while (len && isspace((unsigned char)value[len - 1])) len--;
    char *v = cfg_strndup(value, len);
    if (!v) return ctx_fail(x, "out of memory");

    char where[1100];
    snprintf(where, sizeof where, "%s:%d", x->path, x->lineno);
    pq_error why;
    int rc;
    switch (x->kind) {
    case CFG_SECTION_PQFS: rc = cfg_apply_pqfs(x->c, id, v, x->base_dir, where, &why); break;
    case CFG_SECTION_S3: rc = cfg_apply_s3(x->c, id, v, where, &why); break;
    default:
        rc = cfg_apply_table(&x->c->tables[x->table_index], id, v, where, &why);
        break;
    }
    memset(v, 0, len); /* may be a secret */
    free(v);
    if (rc < 0 && !x->err_line) {
        x->err_line = x->lineno;
        x->err = why;
    }
    return rc == 0;
}

static int inih_handler(void *user, const char *section, const char *name, const char *value)
{
    (void)section; /* ours is tracked by handle_section: inih truncates long names */
    return handle_key(user, name, value);
}

/* A key line longer than inih's line buffer, split with inih's rules. */
static void handle_long_key_line(ini_ctx *x, const char *line, size_t n, size_t sep)
{
    char *name = cfg_trimmed_copy(line, sep);
    /* Like inih: the comment search starts right after the '=', then the
     * value is trimmed ("key = ;x" is empty, "key=;x" is ";x"). */
    const char *value = line + sep + 1;
    size_t value_len = find_stop_or_comment(value, n - sep - 1, NULL, false);
    char *v = cfg_trimmed_copy(value, value_len);
    if (!name || !v)
        ctx_fail(x, "out of memory");
    else
        handle_key(x, name, v);
    if (v) memset(v, 0, strlen(v));
    free(name);
    free(v);
}

/* ---------------------------------------------------------------- the reader */

/* inih's ini_reader: hands inih one physical line per call (so inih's own
 * line count, which it reports for errors, matches ours), or an empty line
 * for the lines handled here.  NULL ends the parse: end of file or an error. */
static char *read_line(char *buf, int num, void *stream)
{
    ini_ctx *x = stream;
    if (x->err_line || x->pos >= x->len) return NULL;
    const char *line = x->text + x->pos;
    const char *nl = memchr(line, '\n', x->len - x->pos);
    size_t n = nl ? (size_t)(nl - line) : x->len - x->pos;
    x->pos += n + (nl != NULL);
    x->lineno++;

    if (n && line[n - 1] == '\r') n--;
    if (x->lineno == 1 && n >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
        line += 3;
        n -= 3;
    }
    while (n && isspace((unsigned char)*line)) line++, n--;
    while (n && isspace((unsigned char)line[n - 1])) n--;

    buf[0] = '\0';
    if (n == 0 || *line == ';' || *line == '#') return buf;
    if (*line == '[') return handle_section(x, line, n) ? buf : NULL;

    size_t sep = find_stop_or_comment(line, n, "=:", false);
    if (sep == n || line[sep] == ';') {
        ctx_fail(x, "expected 'key = value' or a [section] header");
        return NULL;
    }
    if (n < (size_t)num) {
        memcpy(buf, line, n);
        buf[n] = '\0';
        return buf;
    }
    handle_long_key_line(x, line, n, sep);
    return x->err_line ? NULL : buf;
}

/* ---------------------------------------------------------------- loading */

static int read_file(const char *path, char **text, size_t *len, pq_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return pq_fail(err, PQ_E_USAGE, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        int e = errno;
        fclose(f);
        return pq_fail(err, PQ_E_USAGE, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(f);
        return pq_fail(err, PQ_E_USAGE, "%s: %s", path,
                        S_ISDIR(st.st_mode) ? strerror(EISDIR) : "not a regular file");
    }
    if ((uint64_t)st.st_size > INI_FILE_MAX) {
        fclose(f);
        return pq_fail(err, PQ_E_USAGE, "%s: too large for a configuration file", path);
    }
    size_t size = (size_t)st.st_size;
    char *buf = malloc(size + 1);
    if (!buf) {
        fclose(f);
        return PQ_NOMEM(err);
    }
    size_t got = fread(buf, 1, size, f);
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(buf);
        return pq_fail(err, PQ_E_USAGE, "%s: read error", path);
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return 0;
}

/* The directory part of an absolute path ("/etc/pqfs/lake.ini" -> "/etc/pqfs"). */
static char *directory_of(const char *path)
{
    char *abs = cfg_absolute_path(path, NULL);
    if (!abs) return NULL;
    char *slash = strrchr(abs, '/');
    if (slash == abs)
        abs[1] = '\0';
    else if (slash)
        *slash = '\0';
    return abs;
}

int pqfs_config_load_ini(pqfs_config *c, const char *path, pq_error *err)
{
    char *text = NULL;
    size_t len = 0;
    if (read_file(path, &text, &len, err) < 0) return -1;

    /* inih sees C strings: a NUL byte would silently end a line. */
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *p = text; p < nul; p++) line += *p == '\n';
        free(text);
        return pq_fail(err, PQ_E_USAGE, "%s:%d: NUL byte (not a text file)", path, line);
    }

    ini_ctx x;
    memset(&x, 0, sizeof x);
    x.c = c;
    x.path = path;
    x.text = text;
    x.len = len;
    x.first_table = c->n_tables;
    x.base_dir = directory_of(path);
    int rc = 0;
    if (!x.base_dir || cfg_set_string(&c->ini_path, path) < 0) {
        rc = pq_fail(err, PQ_E_USAGE, "%s: out of memory or no working directory", path);
    } else {
        int line = ini_parse_stream(read_line, &x, inih_handler, &x);
        if (x.err_line && (line <= 0 || line >= x.err_line))
            rc = pq_fail(err, x.err.cls, "%s", x.err.msg);
        else if (line == -2)
            rc = pq_fail(err, PQ_E_USAGE, "%s: out of memory", path);
        else if (line > 0) /* inih's own objection, which read_line should have caught first */
            rc = pq_fail(err, PQ_E_USAGE, "%s:%d: syntax error", path, line);
    }
    memset(text, 0, len); /* the file may hold secrets */
    free(text);
    free(x.base_dir);
    free(x.table_lines);
    return rc;
}
