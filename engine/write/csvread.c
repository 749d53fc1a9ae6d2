#include "csvread.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK ((size_t)1 << 20)

/* Where the scan for the end of a record is: a '"' opens a quoted field only
 * at the start of a field, as split_record reads it (5'11" stays text). */
enum {
    SCAN_FIELD_START = 0,      /* at the start of a field */
    SCAN_UNQUOTED,             /* in an unquoted field (or after a closing quote) */
    SCAN_QUOTED,               /* inside quotes */
    SCAN_QUOTE,                /* a '"' inside quotes: closing, or the first of "" */
};

struct pq_csv_reader {
    pq_file *f;
    const char *name;
    uint64_t file_size;
    uint64_t file_off;         /* next byte of the file to read into buf */
    char *buf;
    size_t cap;
    size_t pos, end;           /* unconsumed bytes: buf[pos, end) */
    size_t scan;               /* the record starting at pos is scanned up to here */
    int scan_state;            /* SCAN_* */
    int64_t scan_newlines;     /* line breaks inside quotes seen by the scan */
    bool started;
    int64_t line;              /* line of the next record */
    int64_t rec_line;          /* line of the last record returned */
    uint64_t consumed;
    pq_csv_text *fields;
    int32_t cap_fields;
};

int pq_csv_open(pq_file *f, const char *name, pq_csv_reader **out, pq_error *err)
{
    pq_csv_reader *r = calloc(1, sizeof *r);
    if (!r) return PQ_NOMEM(err);
    r->f = f;
    r->name = name;
    r->line = 1;
    if (pq_file_size(f, &r->file_size, err) != PQ_OK) {
        free(r);
        return PQ_ERR;
    }
    *out = r;
    return PQ_OK;
}

void pq_csv_free(pq_csv_reader *r)
{
    if (!r) return;
    free(r->buf);
    free(r->fields);
    free(r);
}

int64_t pq_csv_line(const pq_csv_reader *r)
{
    return r->rec_line;
}

uint64_t pq_csv_offset(const pq_csv_reader *r)
{
    return r->consumed;
}

/* Moves the unconsumed bytes to the front and reads the next block behind
 * them, growing the buffer when one record fills it. */
static int refill(pq_csv_reader *r, pq_error *err)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->end -= r->pos;
        r->scan -= r->pos;
        r->pos = 0;
    }
    /* What is left after compaction is one unfinished record. */
    if (r->end > PQ_CSV_MAX_RECORD)
        return pq_fail(err, PQ_E_USAGE, "%s: line %lld: a record longer than %zu MiB%s", r->name,
                       (long long)r->line, PQ_CSV_MAX_RECORD >> 20,
                       r->scan_state == SCAN_QUOTED ? " (is a quote left open?)" : "");
    if (r->cap - r->end < BLOCK) {
        size_t cap = r->cap ? r->cap * 2 : 2 * BLOCK;
        char *nb = realloc(r->buf, cap);
        if (!nb) return pq_fail(err, PQ_E_NOMEM, "out of memory for a CSV record");
        r->buf = nb;
        r->cap = cap;
    }
    uint64_t left = r->file_size - r->file_off;
    size_t take = left < BLOCK ? (size_t)left : BLOCK;
    if (take > 0 && pq_read_at(r->f, r->buf + r->end, take, r->file_off, err) != PQ_OK) return PQ_ERR;
    r->file_off += take;
    r->end += take;
    if (!r->started && r->end >= 3) {
        r->started = true;
        if (memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) r->pos = r->scan = 3;
    }
    return PQ_OK;
}

static int push_field(pq_csv_reader *r, int32_t n, const char *p, size_t len, bool quoted, pq_error *err)
{
    if (n == r->cap_fields) {
        int32_t cap = r->cap_fields ? r->cap_fields * 2 : 16;
        pq_csv_text *nf = realloc(r->fields, sizeof *nf * (size_t)cap);
        if (!nf) return PQ_NOMEM(err);
        r->fields = nf;
        r->cap_fields = cap;
    }
    r->fields[n] = (pq_csv_text){p, (uint32_t)len, quoted};
    return PQ_OK;
}

/* Splits the record buf[start, stop) into fields, unescaping quoted ones in
 * place (the unescaped text is never longer). */
static int split_record(pq_csv_reader *r, char *start, char *stop, int32_t *n_fields, pq_error *err)
{
    int32_t n = 0;
    char *p = start;
    for (;;) {
        if (p < stop && *p == '"') {
            char *in = p + 1, *o = p + 1;
            for (;;) {
                if (in >= stop)
                    return pq_fail(err, PQ_E_USAGE, "%s: line %lld, field %d: a quoted field is not closed", r->name,
                                   (long long)r->rec_line, n + 1);
                if (*in == '"') {
                    if (in + 1 < stop && in[1] == '"') {
                        *o++ = '"';
                        in += 2;
                        continue;
                    }
                    in++;
                    break;
                }
                *o++ = *in++;
            }
            if (push_field(r, n++, p + 1, (size_t)(o - (p + 1)), true, err) != PQ_OK) return PQ_ERR;
            if (in == stop) break;
            if (*in != ',')
                return pq_fail(err, PQ_E_USAGE, "%s: line %lld, field %d: text after a closing quote", r->name,
                               (long long)r->rec_line, n);
            p = in + 1;
            continue;
        }
        char *comma = memchr(p, ',', (size_t)(stop - p));
        char *fe = comma ? comma : stop;
        if (push_field(r, n++, p, (size_t)(fe - p), false, err) != PQ_OK) return PQ_ERR;
        if (!comma) break;
        p = comma + 1;
    }
    *n_fields = n;
    return PQ_OK;
}

int pq_csv_next(pq_csv_reader *r, const pq_csv_text **fields, int32_t *n_fields, pq_error *err)
{
    *n_fields = 0;
    *fields = NULL;
    for (;;) {
        /* Find the end of the record at pos: a line break outside quotes. */
        size_t i = r->scan;
        int st = r->scan_state;
        int64_t nl = r->scan_newlines;
        const char *b = r->buf;
        /* Most records hold no quote: then the record ends at the next line
         * break, found with memchr instead of the state machine. */
        if (st == SCAN_FIELD_START && i == r->pos && i < r->end) {
            const char *lf = memchr(b + i, '\n', r->end - i);
            if (lf && !memchr(b + i, '"', (size_t)(lf - (b + i)))) i = (size_t)(lf - b);
        }
        for (; i < r->end; i++) {
            char c = b[i];
            if (st == SCAN_QUOTED) {
                if (c == '"') st = SCAN_QUOTE;
                else if (c == '\n') nl++;
                continue;
            }
            if (c == '"' && (st == SCAN_FIELD_START || st == SCAN_QUOTE)) {
                st = SCAN_QUOTED;
                continue;
            }
            if (c == '\n') break;
            st = c == ',' ? SCAN_FIELD_START : SCAN_UNQUOTED;
        }
        bool inq = st == SCAN_QUOTED;
        r->scan = i;
        r->scan_state = st;
        r->scan_newlines = nl;
        bool at_eof = r->file_off >= r->file_size;
        if (i == r->end && !at_eof) {
            if (refill(r, err) != PQ_OK) return PQ_ERR;
            continue;
        }
        if (i == r->end && r->pos == r->end) return PQ_OK; /* the end of the input */
        if (i == r->end && inq)
            return pq_fail(err, PQ_E_USAGE, "%s: line %lld: a quoted field is not closed before the end of the file",
                           r->name, (long long)r->line);
        char *start = r->buf + r->pos;
        char *stop = r->buf + i;
        if (stop > start && stop[-1] == '\r') stop--;
        r->rec_line = r->line;
        r->line += nl + 1;
        size_t next = i < r->end ? i + 1 : i;
        r->consumed += next - r->pos;
        r->pos = r->scan = next;
        r->scan_state = SCAN_FIELD_START;
        r->scan_newlines = 0;
        if (split_record(r, start, stop, n_fields, err) != PQ_OK) return PQ_ERR;
        *fields = r->fields;
        return PQ_OK;
    }
}
