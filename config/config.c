/* The configuration: defaults, the command line (including the mount helper
 * form used from fstab), the environment, validation, table lookup and the
 * dump.  The ini file is read by config_ini.c; what each key's value means is
 * in config_values.c.
 *
 * Sources are applied lowest first, each overriding the one before:
 * defaults, the ini file, the environment, the SOURCE argument, -d, then -o
 * options in command-line order (the last of a key wins, as mount(8) does). */
#include "config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* ---------------------------------------------------------------- helpers */

char *cfg_strdup(const char *s)
{
    return cfg_strndup(s, strlen(s));
}

char *cfg_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

int cfg_set_string(char **slot, const char *value)
{
    char *copy = NULL;
    if (value && !(copy = cfg_strdup(value))) return -1;
    if (*slot) memset(*slot, 0, strlen(*slot)); /* the old value may be a secret */
    free(*slot);
    *slot = copy;
    return 0;
}

char *cfg_trimmed_copy(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return cfg_strndup(s, n);
}

char *cfg_absolute_path(const char *path, const char *base_dir)
{
    char *cwd = NULL, *out;
    if (path[0] == '/') {
        out = cfg_strdup(path);
    } else {
        if (!base_dir) {
            cwd = getcwd(NULL, 0);
            if (!cwd) return NULL;
            base_dir = cwd;
        }
        while (path[0] == '.' && path[1] == '/') path += 2;
        if (strcmp(path, ".") == 0) path = "";
        size_t nb = strlen(base_dir), np = strlen(path);
        out = malloc(nb + 1 + np + 1);
        if (out) {
            memcpy(out, base_dir, nb);
            out[nb] = '/';
            memcpy(out + nb + 1, path, np + 1);
        }
        free(cwd);
    }
    if (!out) return NULL;
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/') out[--n] = '\0';
    return out;
}

const char *cfg_env_get(char **envp, const char *name)
{
    if (!envp) envp = environ;
    size_t n = strlen(name);
    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static char *join2(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *p = malloc(na + nb + 1);
    if (!p) return NULL;
    memcpy(p, a, na);
    memcpy(p + na, b, nb + 1);
    return p;
}

char *cfg_default_cache_dir(char **envp)
{
    uid_t uid = geteuid();
    if (uid == 0) return cfg_strdup("/var/cache/pqfs");
    /* The XDG base directory spec says to ignore a relative XDG_CACHE_HOME. */
    const char *xdg = cfg_env_get(envp, "XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') return join2(xdg, "/pqfs");
    const char *home = cfg_env_get(envp, "HOME");
    if (home && home[0] == '/') return join2(home, "/.cache/pqfs");
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found && found->pw_dir &&
        found->pw_dir[0] == '/')
        return join2(found->pw_dir, "/.cache/pqfs");
    char tmp[64];
    snprintf(tmp, sizeof tmp, "/tmp/pqfs-%lu", (unsigned long)uid);
    return cfg_strdup(tmp);
}

cfg_source_kind cfg_source_kind_of(const char *s, size_t *scheme_len)
{
    /* RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://". */
    size_t n = 0;
    *scheme_len = 0;
    if (!isalpha((unsigned char)s[0])) return CFG_SOURCE_PATH;
    while (isalnum((unsigned char)s[n]) || s[n] == '+' || s[n] == '-' || s[n] == '.') n++;
    if (strncmp(s + n, "://", 3) != 0) return CFG_SOURCE_PATH;
    *scheme_len = n;
    if (n == 2 && strncasecmp(s, "s3", 2) == 0) return CFG_SOURCE_S3;
    if (n == 4 && strncasecmp(s, "http", 4) == 0) return CFG_SOURCE_HTTP;
    if (n == 5 && strncasecmp(s, "https", 5) == 0) return CFG_SOURCE_HTTPS;
    return CFG_SOURCE_BAD_SCHEME;
}

/* ---------------------------------------------------------------- init and free */

void pqfs_config_init(pqfs_config *c)
{
    memset(c, 0, sizeof *c);
    c->read_only = false;
    c->threads = 0;
    c->cache_dir = cfg_default_cache_dir(NULL); /* NULL when out of memory: validate says so */
    c->cache_size = UINT64_C(2) << 30;
    c->metadata_ttl_ms = 5000;
    c->log_level = PQFS_LOG_INFO;
    c->uid = c->gid = -1;
    c->dir_mode = c->file_mode = -1;
    c->s3_region = cfg_strdup("us-east-1");
    c->s3_path_style = false;
    cfg_table_defaults(&c->table_defaults);
}

void pqfs_config_free(pqfs_config *c)
{
    free(c->source);
    free(c->mountpoint);
    free(c->cache_dir);
    for (int i = 0; i < c->n_fuse_opts; i++) free(c->fuse_opts[i]);
    free(c->fuse_opts);
    free(c->s3_endpoint);
    free(c->s3_region);
    /* Wipe secrets before their memory goes back to the allocator. */
    cfg_set_string(&c->s3_access_key_id, NULL);
    cfg_set_string(&c->s3_secret_access_key, NULL);
    cfg_set_string(&c->s3_session_token, NULL);
    for (int i = 0; i < c->n_tables; i++) cfg_table_free(&c->tables[i]);
    free(c->tables);
    cfg_table_free(&c->table_defaults);
    free(c->ini_path);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- single keys */

int pqfs_config_set(pqfs_config *c, const char *key, const char *value, const char *where, pq_error *err)
{
    if (!where) where = "-o";
    int id = cfg_key_id(CFG_SECTION_PQFS, key);
    if (id < 0) return pq_fail(err, PQ_E_USAGE, "%s: unknown key '%s' in [pqfs]", where, key);
    return cfg_apply_pqfs(c, id, value, NULL, where, err);
}

/* ---------------------------------------------------------------- environment */

static const struct {
    const char *var;
    int key;
} pqfs_env_vars[] = {
    {"PQFS_SOURCE", CFG_PQFS_SOURCE},
    {"PQFS_READ_ONLY", CFG_PQFS_READ_ONLY},
    {"PQFS_THREADS", CFG_PQFS_THREADS},
    {"PQFS_CACHE_DIR", CFG_PQFS_CACHE_DIR},
    {"PQFS_CACHE_SIZE", CFG_PQFS_CACHE_SIZE},
    {"PQFS_METADATA_TTL", CFG_PQFS_METADATA_TTL},
    {"PQFS_LOG_LEVEL", CFG_PQFS_LOG_LEVEL},
};

/* The first of two variables that is set and not empty (an empty variable
 * counts as unset, as `PQFS_THREADS= pqfs ...` intends). */
static const char *env_first(char **envp, const char *a, const char *b, const char **which)
{
    const char *v = cfg_env_get(envp, a);
    *which = a;
    if ((!v || !*v) && b) {
        v = cfg_env_get(envp, b);
        *which = b;
    }
    return v && *v ? v : NULL;
}

static int apply_environment(pqfs_config *c, char **envp, pq_error *err)
{
    const char *which, *v;
    for (size_t i = 0; i < sizeof pqfs_env_vars / sizeof pqfs_env_vars[0]; i++) {
        v = env_first(envp, pqfs_env_vars[i].var, NULL, &which);
        if (v && cfg_apply_pqfs(c, pqfs_env_vars[i].key, v, NULL, which, err) < 0) return -1;
    }
    /* AWS SDK order: the S3-specific endpoint variable before the general one,
     * AWS_REGION before AWS_DEFAULT_REGION. */
    v = env_first(envp, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", &which);
    if (v && cfg_apply_s3(c, CFG_S3_ENDPOINT, v, which, err) < 0) return -1;
    v = env_first(envp, "AWS_REGION", "AWS_DEFAULT_REGION", &which);
    if (v && cfg_apply_s3(c, CFG_S3_REGION, v, which, err) < 0) return -1;

    /* Credentials are one unit, as in the AWS SDKs: a key id in the
     * environment replaces the ini's id, secret and token together (an ini
     * session token belongs to the ini's key, not to this one).  A secret or
     * token without a key id is ignored. */
    const char *id = env_first(envp, "AWS_ACCESS_KEY_ID", NULL, &which);
    if (id) {
        const char *secret = env_first(envp, "AWS_SECRET_ACCESS_KEY", NULL, &which);
        const char *token = env_first(envp, "AWS_SESSION_TOKEN", NULL, &which);
        if (cfg_set_string(&c->s3_access_key_id, id) < 0 ||
            cfg_set_string(&c->s3_secret_access_key, secret) < 0 ||
            cfg_set_string(&c->s3_session_token, token) < 0)
            return PQ_NOMEM(err);
    }
    return 0;
}

/* ---------------------------------------------------------------- command line */

const char *pqfs_config_usage(void)
{
    return "usage: pqfs SOURCE MOUNTPOINT [-f] [-d] [-o opt[,opt...]]...\n"
           "  SOURCE      a lake (/path, http(s)://host/prefix, s3://bucket/prefix) or an .ini file\n"
           "  -f          stay in the foreground\n"
           "  -d          debug: foreground, log_level=debug and FUSE request tracing\n"
           "  -o opt,...  [pqfs] keys (source, read_only, threads, cache_dir, cache_size,\n"
           "              metadata_ttl, log_level, sized_csv; remote lakes: uid, gid, dir_mode,\n"
           "              file_mode)\n"
           "              or FUSE options (allow_other, ro, ...); nonempty: mount even where a\n"
           "              pqfs mount already is (refused otherwise)\n"
           "  -h, --help  this text\n"
           "  -V, --version\n";
}

typedef struct arg_scan {
    const char *positional[3]; /* a third one is an error, kept for the message */
    int n_positional;
    const char **opt_lists; /* the argument of each -o, in order */
    int n_opt_lists;
    bool foreground, debug, help, version;
} arg_scan;

static int scan_args(arg_scan *s, int argc, char **argv, pq_error *err)
{
    memset(s, 0, sizeof *s);
    s->opt_lists = calloc((size_t)(argc > 0 ? argc : 1), sizeof *s->opt_lists);
    if (!s->opt_lists) return PQ_NOMEM(err);
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0') {
            if (s->n_positional == 3) continue;
            s->positional[s->n_positional++] = a;
        } else if (strcmp(a, "--") == 0) {
            options_done = true;
        } else if (strcmp(a, "-f") == 0) {
            s->foreground = true;
        } else if (strcmp(a, "-d") == 0) {
            s->debug = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            s->help = true;
        } else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            s->version = true;
        } else if (strncmp(a, "-o", 2) == 0) {
            /* "-o opts" or "-oopts", as FUSE and mount(8) accept. */
            const char *list = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!list) return pq_fail(err, PQ_E_USAGE, "option -o needs an argument (-o opt[,opt...])");
            s->opt_lists[s->n_opt_lists++] = list;
        } else {
            return pq_fail(err, PQ_E_USAGE, "unknown option '%s' (see pqfs --help)", a);
        }
    }
    if (s->n_positional > 2)
        return pq_fail(err, PQ_E_USAGE,
                        "unexpected argument '%s': usage: pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]",
                        s->positional[2]);
    return 0;
}

static int add_fuse_opt(pqfs_config *c, const char *opt, size_t n)
{
    char **opts = realloc(c->fuse_opts, (size_t)(c->n_fuse_opts + 1) * sizeof *opts);
    if (!opts) return -1;
    c->fuse_opts = opts;
    if (!(opts[c->n_fuse_opts] = cfg_strndup(opt, n))) return -1;
    c->n_fuse_opts++;
    return 0;
}

/* Options that mount(8) and systemd read from fstab and that mean nothing to
 * the filesystem.  mount.fuse3 drops most of them itself, but pqfs can also be
 * started directly with an fstab line's options. */
static bool is_mount_helper_option(const char *opt, size_t n)
{
    static const char *const exact[] = {"rw", "defaults", "_netdev", "noauto", "auto", "user",
                                        "nouser", "users", "nofail", "owner", "group"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strlen(exact[i]) == n && strncmp(opt, exact[i], n) == 0) return true;
    /* "x-systemd.automount" and other x-* are userspace-only by convention;
     * "user=NAME" is what libmount passes for a user mount. */
    return (n >= 2 && strncmp(opt, "x-", 2) == 0) || (n >= 8 && strncmp(opt, "comment=", 8) == 0) ||
           (n >= 5 && strncmp(opt, "user=", 5) == 0);
}

/* A copy of [s, s+n) with FUSE's backslash escapes ("\," and "\\") undone. */
static char *unescape_option(const char *s, size_t n)
{
    char *out = malloc(n + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n) i++;
        *o++ = s[i];
    }
    *o = '\0';
    return out;
}

/* One option of a -o list (raw, escapes intact). */
static int apply_mount_option(pqfs_config *c, const char *opt, size_t n, pq_error *err)
{
    if (n == 0) return 0;
    size_t name_len = 0;
    while (name_len < n && opt[name_len] != '=') name_len++;
    char *name = unescape_option(opt, name_len);
    if (!name) return PQ_NOMEM(err);
    int key = cfg_key_id(CFG_SECTION_PQFS, name);
    free(name);
    if (key >= 0) {
        char *value = name_len < n ? unescape_option(opt + name_len + 1, n - name_len - 1) : NULL;
        if (name_len < n && !value) return PQ_NOMEM(err);
        int rc = cfg_apply_pqfs(c, key, value, NULL, "-o", err);
        free(value);
        return rc;
    }
    if (n == 8 && !strncmp(opt, "nonempty", 8)) {
        c->nonempty = true; /* pqfs's own (libfuse 3 has none): not passed on */
        return 0;
    }
    if (n == 2 && strncmp(opt, "ro", 2) == 0) c->read_only = true; /* and FUSE mounts read-only */
    else if ((n == 11 && !strncmp(opt, "allow_other", 11)) || (n == 10 && !strncmp(opt, "allow_root", 10)))
        c->multi_user = true; /* and FUSE lets other users in */
    else if (is_mount_helper_option(opt, n)) return 0;
    if (add_fuse_opt(c, opt, n) < 0) return PQ_NOMEM(err);
    return 0;
}

static int apply_option_list(pqfs_config *c, const char *list, pq_error *err)
{
    const char *p = list;
    for (;;) {
        /* Split at commas that are not escaped with a backslash. */
        size_t n = 0;
        while (p[n] && p[n] != ',') n += (p[n] == '\\' && p[n + 1]) ? 2 : 1;
        if (apply_mount_option(c, p, n, err) < 0) return -1;
        if (!p[n]) return 0;
        p += n + 1;
    }
}

/* An .ini SOURCE, rather than a lake: a local path ending in ".ini" or
 * naming a regular file (a lake is a directory or a URL). */
static bool is_ini_source(const char *source)
{
    size_t scheme_len, n = strlen(source);
    if (cfg_source_kind_of(source, &scheme_len) != CFG_SOURCE_PATH) return false;
    if (n >= 4 && strcasecmp(source + n - 4, ".ini") == 0) return true;
    struct stat st;
    return stat(source, &st) == 0 && S_ISREG(st.st_mode);
}

int pqfs_config_from_args(pqfs_config *c, int argc, char **argv, char **envp, pq_error *err)
{
    arg_scan s;
    int rc = scan_args(&s, argc, argv, err);
    if (rc == 0 && s.help) rc = PQFS_CONFIG_HELP;
    else if (rc == 0 && s.version) rc = PQFS_CONFIG_VERSION;
    if (rc != 0) {
        free(s.opt_lists);
        return rc;
    }

    /* One positional argument is the mountpoint (the source then comes from
     * PQFS_SOURCE or -o source=); two are SOURCE MOUNTPOINT. */
    const char *source_arg = s.n_positional == 2 ? s.positional[0] : NULL;
    const char *mount_arg = s.n_positional >= 1 ? s.positional[s.n_positional - 1] : NULL;

    /* pqfs_config_init took the default cache directory from the process
     * environment; the caller's envp decides instead, unless a value was
     * already set. */
    char *init_default = cfg_default_cache_dir(NULL);
    if (init_default && c->cache_dir && strcmp(init_default, c->cache_dir) == 0) {
        char *dir = cfg_default_cache_dir(envp);
        if (dir) {
            free(c->cache_dir);
            c->cache_dir = dir;
        }
    }
    free(init_default);

    if (source_arg && is_ini_source(source_arg)) {
        rc = pqfs_config_load_ini(c, source_arg, err);
        source_arg = NULL;
    }
    if (rc == 0) rc = apply_environment(c, envp, err);
    if (rc == 0 && source_arg)
        rc = cfg_apply_pqfs(c, CFG_PQFS_SOURCE, source_arg, NULL, "SOURCE", err);
    if (rc == 0 && (s.foreground || s.debug)) c->foreground = true;
    if (rc == 0 && s.debug) {
        c->log_level = PQFS_LOG_DEBUG;
        if (add_fuse_opt(c, "debug", 5) < 0) rc = PQ_NOMEM(err);
    }
    for (int i = 0; rc == 0 && i < s.n_opt_lists; i++)
        rc = apply_option_list(c, s.opt_lists[i], err);
    free(s.opt_lists);
    if (rc == 0 && mount_arg) {
        /* Absolute, because the daemon changes to / before it serves. */
        char *mp = cfg_absolute_path(mount_arg, NULL);
        if (!mp) return pq_fail(err, PQ_E_USAGE, "mountpoint '%s': cannot resolve", mount_arg);
        free(c->mountpoint);
        c->mountpoint = mp;
    }
    if (rc == 0) rc = pqfs_config_validate(c, err);
    return rc;
}

/* ---------------------------------------------------------------- validation */

static int validate_names(char *const *names, int n, const char *table, const char *key, pq_error *err)
{
    for (int i = 0; i < n; i++)
        if (!names[i] || !names[i][0])
            return pq_fail(err, PQ_E_USAGE, "[table %s] %s: empty column name", table, key);
    return 0;
}

static int validate_table(const pqfs_table_config *t, const char *label, pq_error *err)
{
    if (t->row_group_rows < 1 || t->row_group_rows > CFG_ROW_GROUP_ROWS_MAX)
        return pq_fail(err, PQ_E_USAGE, "[table %s] row_group_rows: %lld is out of range (1..%d)", label,
                        (long long)t->row_group_rows, CFG_ROW_GROUP_ROWS_MAX);
    if (t->page_size < 1 || t->page_size > CFG_PAGE_SIZE_MAX)
        return pq_fail(err, PQ_E_USAGE, "[table %s] page_size: %lld is out of range (1 byte..1GiB)", label,
                        (long long)t->page_size);
    if (!pq_codec_level_ok(t->compression, t->compression_level))
        return pq_fail(err, PQ_E_USAGE, "[table %s] compression: %s level %d is out of range", label,
                        pq_codec_spec_name(t->compression), t->compression_level);
    for (int i = 0; i < t->n_partitions; i++)
        if (!t->partitions[i].name || !t->partitions[i].name[0])
            return pq_fail(err, PQ_E_USAGE, "[table %s] partitions: empty column name", label);
    if (validate_names(t->bloom_filter, t->n_bloom_filter, label, "bloom_filter", err) < 0 ||
        validate_names(t->sort_by, t->n_sort_by, label, "sort_by", err) < 0)
        return -1;
    return 0;
}

int pqfs_config_validate(pqfs_config *c, pq_error *err)
{
    if (!c->source || !c->source[0])
        return pq_fail(err, PQ_E_USAGE,
                        "no source: give SOURCE (a lake or an .ini file), source = in [pqfs], "
                        "PQFS_SOURCE or -o source=");
    size_t scheme_len;
    cfg_source_kind kind = cfg_source_kind_of(c->source, &scheme_len);
    if (kind == CFG_SOURCE_BAD_SCHEME)
        return pq_fail(err, PQ_E_USAGE,
                        "source: unsupported scheme '%.*s' (use a path, http://, https:// or s3://)",
                        (int)scheme_len, c->source);
    if (kind == CFG_SOURCE_PATH && c->source[0] != '/')
        return pq_fail(err, PQ_E_USAGE, "source: '%s' is not an absolute path", c->source);
    if (!c->mountpoint || !c->mountpoint[0])
        return pq_fail(err, PQ_E_USAGE,
                        "no mountpoint: usage: pqfs SOURCE MOUNTPOINT [-f] [-o opt[,opt...]]");
    if (c->threads < 0 || c->threads > CFG_THREADS_MAX)
        return pq_fail(err, PQ_E_USAGE, "threads: %d is out of range (0..%d)", c->threads, CFG_THREADS_MAX);
    if (c->cache_size == 0) return pq_fail(err, PQ_E_USAGE, "cache_size: must be more than 0");
    if (!c->cache_dir || !c->cache_dir[0]) return pq_fail(err, PQ_E_USAGE, "cache_dir: not set");
    if ((unsigned)c->log_level > PQFS_LOG_DEBUG)
        return pq_fail(err, PQ_E_USAGE, "log_level: %d is not a log level", (int)c->log_level);
    if (kind == CFG_SOURCE_PATH && (c->uid >= 0 || c->gid >= 0 || c->dir_mode >= 0 || c->file_mode >= 0))
        return pq_fail(err, PQ_E_USAGE, "%s: only for a remote lake (http(s)://, s3://); a local lake's files and "
                        "directories report their own owners and modes (with allow_other)",
                        c->uid >= 0 ? "uid" : c->gid >= 0 ? "gid" : c->dir_mode >= 0 ? "dir_mode" : "file_mode");
    if (c->dir_mode > 07777 || c->file_mode > 07777) return pq_fail(err, PQ_E_USAGE, "dir_mode/file_mode: above 07777");

    if (kind == CFG_SOURCE_S3) {
        if (c->s3_access_key_id && !c->s3_secret_access_key)
            return pq_fail(err, PQ_E_USAGE, "s3: access_key_id is set but secret_access_key is not");
        if (!c->s3_access_key_id && (c->s3_secret_access_key || c->s3_session_token))
            return pq_fail(err, PQ_E_USAGE, "s3: secret_access_key or session_token without access_key_id");
    }
    if (!c->s3_region || !c->s3_region[0]) {
        if (cfg_set_string(&c->s3_region, "us-east-1") < 0) return PQ_NOMEM(err);
    }
    if (!c->s3_endpoint) {
        /* AWS's regional endpoint; MinIO and other stores set endpoint. */
        size_t n = strlen(c->s3_region) + sizeof "https://s3..amazonaws.com";
        c->s3_endpoint = malloc(n);
        if (!c->s3_endpoint) return PQ_NOMEM(err);
        snprintf(c->s3_endpoint, n, "https://s3.%s.amazonaws.com", c->s3_region);
    }

    for (int i = 0; i < c->n_tables; i++) {
        const char *problem = c->tables[i].name ? cfg_table_name_problem(c->tables[i].name) : "no name";
        if (problem) return pq_fail(err, PQ_E_USAGE, "table %d: %s", i + 1, problem);
        if (validate_table(&c->tables[i], c->tables[i].name, err) < 0) return -1;
        for (int j = 0; j < i; j++)
            if (strcmp(c->tables[i].name, c->tables[j].name) == 0)
                return pq_fail(err, PQ_E_USAGE, "[table %s] is defined twice", c->tables[i].name);
    }
    return validate_table(&c->table_defaults, "defaults", err);
}

/* ---------------------------------------------------------------- lookup and dump */

const pqfs_table_config *pqfs_config_table(const pqfs_config *c, const char *name)
{
    for (int i = 0; name && i < c->n_tables; i++)
        if (strcmp(c->tables[i].name, name) == 0) return &c->tables[i];
    return &c->table_defaults;
}

static void dump_list(FILE *f, const char *prefix, const char *key, char *const *names, int n)
{
    if (n == 0) return;
    fprintf(f, "%s%s = ", prefix, key);
    for (int i = 0; i < n; i++) fprintf(f, "%s%s", i ? ", " : "", names[i]);
    fputc('\n', f);
}

/* One table's keys; prefix "; " turns them into comments (the defaults). */
static void dump_table(FILE *f, const pqfs_table_config *t, const char *prefix)
{
    if (t->n_partitions > 0) {
        fprintf(f, "%spartitions = ", prefix);
        for (int i = 0; i < t->n_partitions; i++) {
            const pqfs_partition_decl *p = &t->partitions[i];
            fprintf(f, "%s%s", i ? ", " : "", p->name);
            if (p->type != PQ_PART_INFER) fprintf(f, ":%s", cfg_part_type_name(p->type));
        }
        fputc('\n', f);
    }
    fprintf(f, "%scompression = %s", prefix, pq_codec_spec_name(t->compression));
    if (t->compression_level) fprintf(f, ":%d", t->compression_level);
    char size[32];
    cfg_format_size((uint64_t)t->page_size, size, sizeof size);
    fprintf(f, "\n%srow_group_rows = %lld\n%spage_size = %s\n", prefix, (long long)t->row_group_rows,
            prefix, size);
    fprintf(f, "%sdictionary = %s\n%spage_index = %s\n", prefix, t->dictionary ? "true" : "false",
            prefix, t->page_index ? "true" : "false");
    dump_list(f, prefix, "bloom_filter", t->bloom_filter, t->n_bloom_filter);
    dump_list(f, prefix, "sort_by", t->sort_by, t->n_sort_by);
}

int pqfs_config_dump(const pqfs_config *c, char **out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *out = NULL;
    if (!f) return -1;
    char size[32], ttl[32];
    cfg_format_size(c->cache_size, size, sizeof size);
    cfg_format_duration(c->metadata_ttl_ms, ttl, sizeof ttl);

    fprintf(f, "[pqfs]\n");
    if (c->source) {
        /* A password in an http(s) URL is a secret: shown as ***. */
        const char *host = strstr(c->source, "://");
        host = host ? host + 3 : c->source;
        size_t hl = strcspn(host, "/?#");
        const char *at = memrchr(host, '@', hl);
        const char *colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
        if (colon)
            fprintf(f, "source = %.*s***%s\n", (int)(colon + 1 - c->source), c->source, at);
        else
            fprintf(f, "source = %s\n", c->source);
    }
    fprintf(f, "read_only = %s\nthreads = %d\n", c->read_only ? "true" : "false", c->threads);
    if (c->sized_csv) fprintf(f, "sized_csv = true\n");
    if (c->cache_dir) fprintf(f, "cache_dir = %s\n", c->cache_dir);
    fprintf(f, "cache_size = %s\nmetadata_ttl = %s\nlog_level = %s\n", size, ttl,
            cfg_log_level_name(c->log_level));
    if (c->uid >= 0) fprintf(f, "uid = %lld\n", (long long)c->uid);
    if (c->gid >= 0) fprintf(f, "gid = %lld\n", (long long)c->gid);
    if (c->dir_mode >= 0) fprintf(f, "dir_mode = %04o\n", (unsigned)c->dir_mode);
    if (c->file_mode >= 0) fprintf(f, "file_mode = %04o\n", (unsigned)c->file_mode);
    /* Command-line-only settings, as comments so the text stays a valid ini. */
    if (c->ini_path) fprintf(f, "; ini file: %s\n", c->ini_path);
    if (c->mountpoint) fprintf(f, "; mountpoint: %s\n", c->mountpoint);
    if (c->foreground) fprintf(f, "; foreground\n");
    if (c->n_fuse_opts > 0) {
        fprintf(f, "; fuse options: ");
        for (int i = 0; i < c->n_fuse_opts; i++) fprintf(f, "%s%s", i ? "," : "", c->fuse_opts[i]);
        fputc('\n', f);
    }

    fprintf(f, "\n[s3]\n");
    if (c->s3_endpoint) fprintf(f, "endpoint = %s\n", c->s3_endpoint);
    if (c->s3_region) fprintf(f, "region = %s\n", c->s3_region);
    fprintf(f, "path_style = %s\n", c->s3_path_style ? "true" : "false");
    /* The key id names the key and is not secret (AWS prints it in logs). */
    if (c->s3_access_key_id) fprintf(f, "access_key_id = %s\n", c->s3_access_key_id);
    if (c->s3_secret_access_key) fprintf(f, "secret_access_key = ***\n");
    if (c->s3_session_token) fprintf(f, "session_token = ***\n");

    for (int i = 0; i < c->n_tables; i++) {
        fprintf(f, "\n[table %s]\n", c->tables[i].name);
        dump_table(f, &c->tables[i], "");
    }
    fprintf(f, "\n; tables without a section:\n");
    dump_table(f, &c->table_defaults, "; ");

    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed) {
        free(text);
        return -1;
    }
    *out = text;
    return 0;
}
