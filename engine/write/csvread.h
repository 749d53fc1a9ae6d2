/* CSV reader: RFC 4180 records from a file, streamed in blocks.
 *
 * Fields are separated by ',' and records by '\n' or "\r\n".  A field that
 * starts with '"' is quoted: it runs to the closing quote, may hold ',', '"'
 * (doubled) and line breaks, and must be followed by a separator or the end
 * of the record.  A '"' inside an unquoted field is kept as is (5'11").  A
 * UTF-8 byte order mark at the start is skipped.
 *
 * An empty unquoted field and a quoted empty field ("") are told apart
 * (quoted): canonical CSV writes NULL as the first and the empty string as
 * the second.  An empty line is a record of one empty unquoted field.
 *
 * Nothing in the input is trusted: an unterminated quote or a record longer
 * than PQ_CSV_MAX_RECORD is PQ_E_USAGE (bad input) naming the file and line. */
#ifndef PQ_CSVREAD_H
#define PQ_CSVREAD_H

#include <stdbool.h>
#include <stdint.h>

#include "io.h"
#include "status.h"

#define PQ_CSV_MAX_RECORD ((size_t)64 << 20)

typedef struct pq_csv_text {
    const char *p;             /* unescaped content (valid until the next call) */
    uint32_t len;
    bool quoted;
} pq_csv_text;

typedef struct pq_csv_reader pq_csv_reader;

/* Reads `f` (not owned) from its start; `name` names it in messages. */
int pq_csv_open(pq_file *f, const char *name, pq_csv_reader **out, pq_error *err);
void pq_csv_free(pq_csv_reader *r);

/* The next record: *fields[0..*n_fields).  At the end of the input *n_fields
 * is 0.  The fields stay valid until the next call. */
int pq_csv_next(pq_csv_reader *r, const pq_csv_text **fields, int32_t *n_fields, pq_error *err);

/* The line (1-based) the last record returned starts on. */
int64_t pq_csv_line(const pq_csv_reader *r);

/* Bytes of input consumed so far. */
uint64_t pq_csv_offset(const pq_csv_reader *r);

#endif
