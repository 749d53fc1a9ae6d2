/* Lexer and recursive-descent parser of `where=` expressions (SPEC section 4).
 *
 * Precedence, loosest first: OR, AND, NOT, comparison / IS / IN / BETWEEN /
 * LIKE (non-associative), + -, * %, unary minus.  The output is a syntax tree;
 * names and literals are resolved by the binder.  Every error names the
 * 1-based character (UTF-8 code point) position it concerns. */
#include "expr_internal.h"
#include "numfmt.h"

#include <string.h>

typedef enum tok_kind {
    T_EOF,
    T_IDENT,      /* bare or "quoted" name; text = unescaped */
    T_INT, T_DECIMAL, T_FLOAT,
    T_STRING,     /* text = unescaped */
    T_AND, T_OR, T_NOT, T_BETWEEN, T_IN, T_IS, T_NULL, T_LIKE, T_TRUE, T_FALSE,
    T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE,
    T_PLUS, T_MINUS, T_STAR, T_PERCENT,
    T_LPAREN, T_RPAREN, T_COMMA,
} tok_kind;

typedef struct token {
    tok_kind kind;
    size_t start, end;         /* raw bytes [start, end) of the text */
    const char *text;          /* IDENT, STRING: unescaped; numbers: raw */
    size_t len;
} token;

typedef struct parser {
    const char *src;
    size_t n;
    size_t at;                 /* lexer position */
    token tok;                 /* current token */
    int depth;
    pq_arena *arena;
    pq_error *err;
} parser;

static const struct {
    const char *word;
    tok_kind kind;
} keywords[] = {
    {"and", T_AND},   {"or", T_OR},     {"not", T_NOT},   {"between", T_BETWEEN},
    {"in", T_IN},     {"is", T_IS},     {"null", T_NULL}, {"like", T_LIKE},
    {"true", T_TRUE}, {"false", T_FALSE},
};

/* 1-based code point position of byte offset `off`. */
static int position_of(const parser *p, size_t off)
{
    int pos = 1;
    for (size_t i = 0; i < off && i < p->n; i++)
        if (((uint8_t)p->src[i] & 0xC0) != 0x80)
            pos++;
    return pos;
}

static int fail_at(parser *p, size_t off, const char *what)
{
    return pq_fail(p->err, PQ_E_USAGE, "%s at position %d", what, position_of(p, off));
}

static int unexpected(parser *p)
{
    const token *t = &p->tok;
    if (t->kind == T_EOF)
        return fail_at(p, t->start, "unexpected end of expression");
    size_t n = t->end - t->start;
    const char *more = "";
    if (n > 40) {
        n = 40;
        more = "...";
    }
    return pq_fail(p->err, PQ_E_USAGE, "unexpected '%.*s%s' at position %d", (int)n,
                   p->src + t->start, more, position_of(p, t->start));
}

static bool is_ident_start(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_ident_char(uint8_t c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

static bool word_equals(const char *s, size_t n, const char *word)
{
    size_t i = 0;
    for (; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (word[i] == '\0' || c != word[i])
            return false;
    }
    return word[i] == '\0';
}

/* Reads a quoted run ('string' or "name") whose quote doubles as its escape. */
static int lex_quoted(parser *p, char quote, token *t)
{
    size_t i = p->at + 1, extra = 0;
    for (;;) {
        if (i >= p->n) {
            return fail_at(p, p->at, quote == '\'' ? "unterminated string starting"
                                                   : "unterminated quoted name starting");
        }
        if (p->src[i] == quote) {
            if (i + 1 < p->n && p->src[i + 1] == quote) {
                i += 2;
                extra++;
                continue;
            }
            break;
        }
        i++;
    }
    size_t raw = i - p->at - 1;
    char *text = pq_arena_alloc(p->arena, raw - extra + 1);
    if (!text)
        return PQ_NOMEM(p->err);
    size_t k = 0;
    for (size_t j = p->at + 1; j < i; j++) {
        text[k++] = p->src[j];
        if (p->src[j] == quote)
            j++;
    }
    t->text = text;
    t->len = k;
    t->kind = quote == '\'' ? T_STRING : T_IDENT;
    t->end = i + 1;
    if (t->kind == T_IDENT && k == 0)
        return fail_at(p, p->at, "empty quoted name");
    /* Text is UTF-8, as in DuckDB: other bytes in a literal would match
     * differently by bytes and by characters (LIKE's fast and general
     * paths).  Binary values are written as \xHH, which is text. */
    if (pq_utf8_valid_prefix((const unsigned char *)text, k) != k)
        return fail_at(p, p->at, quote == '\'' ? "a string that is not UTF-8 text starting"
                                               : "a quoted name that is not UTF-8 text starting");
    return PQ_OK;
}

static int lex_number(parser *p, token *t)
{
    size_t i = p->at;
    bool point = false, exponent = false, digits = false;
    while (i < p->n && is_digit((uint8_t)p->src[i])) {
        i++;
        digits = true;
    }
    if (i < p->n && p->src[i] == '.') {
        point = true;
        i++;
        while (i < p->n && is_digit((uint8_t)p->src[i])) {
            i++;
            digits = true;
        }
    }
    bool ok = digits;
    if (ok && i < p->n && (p->src[i] == 'e' || p->src[i] == 'E')) {
        exponent = true;
        i++;
        if (i < p->n && (p->src[i] == '+' || p->src[i] == '-'))
            i++;
        if (i >= p->n || !is_digit((uint8_t)p->src[i]))
            ok = false;
        while (i < p->n && is_digit((uint8_t)p->src[i]))
            i++;
    }
    if (!ok || (i < p->n && (is_ident_char((uint8_t)p->src[i]) || p->src[i] == '.'))) {
        while (i < p->n && (is_ident_char((uint8_t)p->src[i]) || p->src[i] == '.'))
            i++;
        size_t n = i - p->at;
        return pq_fail(p->err, PQ_E_USAGE, "invalid number '%.*s' at position %d",
                       (int)(n > 40 ? 40 : n), p->src + p->at, position_of(p, p->at));
    }
    t->kind = exponent ? T_FLOAT : point ? T_DECIMAL : T_INT;
    t->text = p->src + p->at;
    t->len = i - p->at;
    t->end = i;
    return PQ_OK;
}

/* Advances to the next token. */
static int next(parser *p)
{
    while (p->at < p->n && (p->src[p->at] == ' ' || p->src[p->at] == '\t' ||
                            p->src[p->at] == '\n' || p->src[p->at] == '\r'))
        p->at++;
    token *t = &p->tok;
    memset(t, 0, sizeof *t);
    t->start = p->at;
    if (p->at >= p->n) {
        t->kind = T_EOF;
        t->end = p->at;
        return PQ_OK;
    }
    const char *s = p->src + p->at;
    uint8_t c = (uint8_t)s[0];
    char c1 = p->at + 1 < p->n ? s[1] : '\0';
    int width = 1;
    if (c == '\'' || c == '"') {
        PQ_TRY(lex_quoted(p, (char)c, t));
        p->at = t->end;
        return PQ_OK;
    }
    if (is_digit(c) || (c == '.' && p->at + 1 < p->n && is_digit((uint8_t)c1))) {
        PQ_TRY(lex_number(p, t));
        p->at = t->end;
        return PQ_OK;
    }
    if (is_ident_start(c)) {
        size_t i = p->at;
        while (i < p->n && is_ident_char((uint8_t)p->src[i]))
            i++;
        t->kind = T_IDENT;
        t->text = s;
        t->len = i - p->at;
        t->end = i;
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
            if (word_equals(s, t->len, keywords[k].word))
                t->kind = keywords[k].kind;
        p->at = i;
        return PQ_OK;
    }
    switch (c) {
    case '=': t->kind = T_EQ; width = c1 == '=' ? 2 : 1; break;
    case '!':
        if (c1 == '=') { t->kind = T_NE; width = 2; }
        else t->kind = T_NOT;
        break;
    case '<':
        if (c1 == '=') { t->kind = T_LE; width = 2; }
        else if (c1 == '>') { t->kind = T_NE; width = 2; }
        else t->kind = T_LT;
        break;
    case '>':
        if (c1 == '=') { t->kind = T_GE; width = 2; }
        else t->kind = T_GT;
        break;
    case '&':
        if (c1 != '&') goto bad;
        t->kind = T_AND;
        width = 2;
        break;
    case '|':
        if (c1 != '|') goto bad;
        t->kind = T_OR;
        width = 2;
        break;
    case '+': t->kind = T_PLUS; break;
    case '-': t->kind = T_MINUS; break;
    case '*': t->kind = T_STAR; break;
    case '%': t->kind = T_PERCENT; break;
    case '(': t->kind = T_LPAREN; break;
    case ')': t->kind = T_RPAREN; break;
    case ',': t->kind = T_COMMA; break;
    default: goto bad;
    }
    t->end = p->at + (size_t)width;
    p->at = t->end;
    return PQ_OK;
bad:
    /* One whole UTF-8 character in the message. */
    t->kind = T_COMMA; /* anything but T_EOF */
    t->end = p->at + 1;
    while (t->end < p->n && ((uint8_t)p->src[t->end] & 0xC0) == 0x80 && t->end - p->at < 4)
        t->end++;
    return unexpected(p);
}

/* ------------------------------------------------------------------ tree */

static pq_ast *node(parser *p, pq_akind kind, size_t off, int n_args)
{
    pq_ast *a = pq_arena_alloc(p->arena, sizeof *a);
    if (!a) {
        PQ_NOMEM(p->err);
        return NULL;
    }
    a->kind = kind;
    a->pos = position_of(p, off);
    a->depth = 1;
    if (n_args > 0) {
        a->args = pq_arena_alloc(p->arena, sizeof(pq_ast *) * (size_t)n_args);
        if (!a->args) {
            PQ_NOMEM(p->err);
            return NULL;
        }
    }
    return a;
}

/* Sets args (already stored) and checks the subtree height. */
static int seal(parser *p, pq_ast *a, size_t off)
{
    int h = 0;
    for (int i = 0; i < a->n_args; i++)
        if (a->args[i]->depth > h)
            h = a->args[i]->depth;
    if (h + 1 > PQ_EXPR_MAX_DEPTH)
        return fail_at(p, off, "expression nested too deeply");
    a->depth = (int16_t)(h + 1);
    return PQ_OK;
}

static pq_ast *binary(parser *p, pq_akind kind, uint8_t op, size_t off, pq_ast *l, pq_ast *r)
{
    pq_ast *a = node(p, kind, off, 2);
    if (!a)
        return NULL;
    a->op = op;
    a->args[0] = l;
    a->args[1] = r;
    a->n_args = 2;
    return seal(p, a, off) == PQ_OK ? a : NULL;
}

static int enter(parser *p)
{
    if (++p->depth > PQ_EXPR_MAX_DEPTH)
        return fail_at(p, p->tok.start, "expression nested too deeply");
    return PQ_OK;
}

static pq_ast *parse_or(parser *p);

static int expect(parser *p, tok_kind kind, const char *what)
{
    if (p->tok.kind != kind)
        return pq_fail(p->err, PQ_E_USAGE, "expected '%s' at position %d", what,
                       position_of(p, p->tok.start));
    return next(p);
}

static pq_ast *parse_primary(parser *p)
{
    token t = p->tok;
    pq_ast *a;
    switch (t.kind) {
    case T_LPAREN:
        if (enter(p) || next(p))
            return NULL;
        a = parse_or(p);
        if (!a || expect(p, T_RPAREN, ")"))
            return NULL;
        p->depth--;
        return a;
    case T_IDENT: a = node(p, PQ_A_IDENT, t.start, 0); break;
    case T_INT: a = node(p, PQ_A_INT, t.start, 0); break;
    case T_DECIMAL: a = node(p, PQ_A_DECIMAL, t.start, 0); break;
    case T_FLOAT: a = node(p, PQ_A_FLOAT, t.start, 0); break;
    case T_STRING: a = node(p, PQ_A_STRING, t.start, 0); break;
    case T_TRUE: a = node(p, PQ_A_TRUE, t.start, 0); break;
    case T_FALSE: a = node(p, PQ_A_FALSE, t.start, 0); break;
    case T_NULL: a = node(p, PQ_A_NULL, t.start, 0); break;
    default: unexpected(p); return NULL;
    }
    if (!a)
        return NULL;
    a->text = t.text;
    a->len = t.len;
    return next(p) == PQ_OK ? a : NULL;
}

static pq_ast *parse_unary(parser *p)
{
    if (p->tok.kind == T_MINUS || p->tok.kind == T_PLUS) {
        size_t off = p->tok.start;
        bool minus = p->tok.kind == T_MINUS;
        if (enter(p) || next(p))
            return NULL;
        pq_ast *x = parse_unary(p);
        if (!x)
            return NULL;
        p->depth--;
        if (!minus)
            return x;
        pq_ast *a = node(p, PQ_A_NEG, off, 1);
        if (!a)
            return NULL;
        a->args[0] = x;
        a->n_args = 1;
        return seal(p, a, off) == PQ_OK ? a : NULL;
    }
    return parse_primary(p);
}

static pq_ast *parse_mul(parser *p)
{
    pq_ast *l = parse_unary(p);
    while (l && (p->tok.kind == T_STAR || p->tok.kind == T_PERCENT)) {
        uint8_t op = p->tok.kind == T_STAR ? PQ_OP_MUL : PQ_OP_MOD;
        size_t off = p->tok.start;
        if (next(p))
            return NULL;
        pq_ast *r = parse_unary(p);
        if (!r)
            return NULL;
        l = binary(p, PQ_A_ARITH, op, off, l, r);
    }
    return l;
}

static pq_ast *parse_add(parser *p)
{
    pq_ast *l = parse_mul(p);
    while (l && (p->tok.kind == T_PLUS || p->tok.kind == T_MINUS)) {
        uint8_t op = p->tok.kind == T_PLUS ? PQ_OP_ADD : PQ_OP_SUB;
        size_t off = p->tok.start;
        if (next(p))
            return NULL;
        pq_ast *r = parse_mul(p);
        if (!r)
            return NULL;
        l = binary(p, PQ_A_ARITH, op, off, l, r);
    }
    return l;
}

/* x [NOT] IN ( item, ... ) with the current token after IN. */
static pq_ast *parse_in_list(parser *p, pq_ast *x, size_t off, bool negated)
{
    if (expect(p, T_LPAREN, "("))
        return NULL;
    pq_ast **items = NULL;
    int n = 0, cap = 0;
    for (;;) {
        pq_ast *item = parse_or(p);
        if (!item)
            return NULL;
        if (n == cap) {
            int ncap = cap ? cap * 2 : 8;
            pq_ast **grown = pq_arena_alloc(p->arena, sizeof *grown * (size_t)ncap);
            if (!grown) {
                PQ_NOMEM(p->err);
                return NULL;
            }
            if (n)
                memcpy(grown, items, sizeof *items * (size_t)n);
            items = grown;
            cap = ncap;
        }
        items[n++] = item;
        if (p->tok.kind != T_COMMA)
            break;
        if (next(p))
            return NULL;
    }
    if (expect(p, T_RPAREN, ")"))
        return NULL;
    pq_ast *a = node(p, PQ_A_IN, off, n + 1);
    if (!a)
        return NULL;
    a->negated = negated;
    a->args[0] = x;
    memcpy(a->args + 1, items, sizeof *items * (size_t)n);
    a->n_args = n + 1;
    return seal(p, a, off) == PQ_OK ? a : NULL;
}

static pq_ast *parse_predicate(parser *p)
{
    pq_ast *x = parse_add(p);
    if (!x)
        return NULL;
    size_t off = p->tok.start;
    switch (p->tok.kind) {
    case T_EQ: case T_NE: case T_LT: case T_LE: case T_GT: case T_GE: {
        static const uint8_t ops[] = {
            [T_EQ] = PQ_OP_EQ, [T_NE] = PQ_OP_NE, [T_LT] = PQ_OP_LT,
            [T_LE] = PQ_OP_LE, [T_GT] = PQ_OP_GT, [T_GE] = PQ_OP_GE,
        };
        uint8_t op = ops[p->tok.kind];
        if (next(p))
            return NULL;
        pq_ast *r = parse_add(p);
        return r ? binary(p, PQ_A_CMP, op, off, x, r) : NULL;
    }
    case T_IS: {
        bool negated = false;
        if (next(p))
            return NULL;
        if (p->tok.kind == T_NOT) {
            negated = true;
            if (next(p))
                return NULL;
        }
        if (p->tok.kind != T_NULL) {
            unexpected(p);
            return NULL;
        }
        if (next(p))
            return NULL;
        pq_ast *a = node(p, PQ_A_IS_NULL, off, 1);
        if (!a)
            return NULL;
        a->negated = negated;
        a->args[0] = x;
        a->n_args = 1;
        return seal(p, a, off) == PQ_OK ? a : NULL;
    }
    case T_NOT: case T_BETWEEN: case T_IN: case T_LIKE: {
        bool negated = p->tok.kind == T_NOT;
        if (negated) {
            if (next(p))
                return NULL;
            if (p->tok.kind != T_BETWEEN && p->tok.kind != T_IN && p->tok.kind != T_LIKE) {
                unexpected(p);
                return NULL;
            }
        }
        tok_kind kind = p->tok.kind;
        if (next(p))
            return NULL;
        if (kind == T_IN)
            return parse_in_list(p, x, off, negated);
        if (kind == T_LIKE) {
            pq_ast *pat = parse_add(p);
            if (!pat)
                return NULL;
            pq_ast *a = binary(p, PQ_A_LIKE, 0, off, x, pat);
            if (a)
                a->negated = negated;
            return a;
        }
        pq_ast *lo = parse_add(p);
        if (!lo)
            return NULL;
        if (p->tok.kind != T_AND) {
            pq_fail(p->err, PQ_E_USAGE, "expected 'AND' at position %d", position_of(p, p->tok.start));
            return NULL;
        }
        if (next(p))
            return NULL;
        pq_ast *hi = parse_add(p);
        if (!hi)
            return NULL;
        pq_ast *a = node(p, PQ_A_BETWEEN, off, 3);
        if (!a)
            return NULL;
        a->negated = negated;
        a->args[0] = x;
        a->args[1] = lo;
        a->args[2] = hi;
        a->n_args = 3;
        return seal(p, a, off) == PQ_OK ? a : NULL;
    }
    default: return x;
    }
}

static pq_ast *parse_not(parser *p)
{
    if (p->tok.kind != T_NOT)
        return parse_predicate(p);
    size_t off = p->tok.start;
    if (enter(p) || next(p))
        return NULL;
    pq_ast *x = parse_not(p);
    if (!x)
        return NULL;
    p->depth--;
    pq_ast *a = node(p, PQ_A_NOT, off, 1);
    if (!a)
        return NULL;
    a->args[0] = x;
    a->n_args = 1;
    return seal(p, a, off) == PQ_OK ? a : NULL;
}

/* A run of `sub` joined by one operator, as one n-ary node. */
static pq_ast *parse_chain(parser *p, tok_kind op, pq_akind kind, pq_ast *(*sub)(parser *))
{
    pq_ast *first = sub(p);
    if (!first || p->tok.kind != op)
        return first;
    size_t off = p->tok.start;
    pq_ast **items = NULL;
    int n = 0, cap = 0;
    pq_ast *cur = first;
    for (;;) {
        if (n == cap) {
            int ncap = cap ? cap * 2 : 4;
            pq_ast **grown = pq_arena_alloc(p->arena, sizeof *grown * (size_t)ncap);
            if (!grown) {
                PQ_NOMEM(p->err);
                return NULL;
            }
            if (n)
                memcpy(grown, items, sizeof *items * (size_t)n);
            items = grown;
            cap = ncap;
        }
        items[n++] = cur;
        if (p->tok.kind != op)
            break;
        if (next(p))
            return NULL;
        cur = sub(p);
        if (!cur)
            return NULL;
    }
    pq_ast *a = node(p, kind, off, 0);
    if (!a)
        return NULL;
    a->args = items;
    a->n_args = n;
    return seal(p, a, off) == PQ_OK ? a : NULL;
}

static pq_ast *parse_and(parser *p)
{
    return parse_chain(p, T_AND, PQ_A_AND, parse_not);
}

static pq_ast *parse_or(parser *p)
{
    return parse_chain(p, T_OR, PQ_A_OR, parse_and);
}

int pq_x_parse(const char *text, size_t len, pq_arena *arena, pq_ast **out, pq_error *err)
{
    if (len > PQ_EXPR_MAX_LEN)
        return pq_fail(err, PQ_E_USAGE, "expression too long (%zu bytes, limit %d)", len,
                       PQ_EXPR_MAX_LEN);
    parser p = {.src = text, .n = len, .arena = arena, .err = err};
    PQ_TRY(next(&p));
    if (p.tok.kind == T_EOF)
        return pq_fail(err, PQ_E_USAGE, "empty expression");
    pq_ast *a = parse_or(&p);
    if (!a)
        return PQ_ERR;
    if (p.tok.kind != T_EOF)
        return unexpected(&p);
    *out = a;
    return PQ_OK;
}
