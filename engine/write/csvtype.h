/* CSV text as typed values (internal to csvimport): how a target column
 * of a flat Parquet schema reads its text (the inverse of render.c, never
 * rounding), and which types a column's values so far allow (inference). */
#ifndef PQ_CSVTYPE_H
#define PQ_CSVTYPE_H

#include "mem.h"
#include "schema.h"
#include "status.h"

/* How a target column reads its text. */
typedef enum conv_kind {
    CV_BOOL,
    CV_INT,                    /* signed, in [lo, hi] */
    CV_UINT,                   /* unsigned, at most umax, stored as the bit pattern */
    CV_FLOAT,
    CV_DOUBLE,
    CV_DATE,
    CV_TIMESTAMP,              /* digits: 3, 6, 9 */
    CV_TIME,
    CV_DECIMAL,                /* INT32/INT64 unscaled, `scale`, `precision` */
    CV_DECIMAL_BYTES,          /* big-endian two's complement: fixed_len bytes, or minimal (BYTE_ARRAY) */
    CV_INT96,                  /* a timestamp as Julian day and nanoseconds */
    CV_FLOAT16,
    CV_STRING,
    CV_BINARY,                 /* printable ASCII as is, other bytes as \xHH */
    CV_UUID,
    CV_FIXED,                  /* binary of exactly fixed_len bytes */
} conv_kind;

typedef struct target_col {
    const pq_leaf *leaf;
    const char *name;
    size_t name_len;
    conv_kind kind;
    pq_phys phys;
    size_t vsize;              /* bytes per value in the typed array */
    int digits;
    bool utc;
    int32_t scale, precision;
    int64_t lo, hi;
    uint64_t umax;
    int32_t fixed_len;
    bool required;
    /* A leaf of a nested column (list, map, struct): a CSV cannot hold one,
     * but may leave the column out, which writes it NULL.  `name` is then
     * the top-level column's, `required` whether that one is. */
    bool nested;
    int32_t csv_field;         /* -1: not in the CSV */
} target_col;

/* Classifies a leaf; PQ_E_UNSUPPORTED for what cannot be read from CSV
 * (unknown logical types).  A nested column's leaf is `nested`. */
int pq_csv_classify(const pq_leaf *leaf, target_col *t, pq_error *err);

/* Converts one non-NULL field into *value (t->vsize bytes).  Byte arrays go
 * to `heap`, and their pq_bytes holds the heap offset (in ptr) until the
 * caller makes it a pointer.  0; -1 with *why for bad text; -2 out of memory. */
int pq_csv_convert(const target_col *t, const char *p, size_t n, void *value, pq_buf *heap, const char **why);

typedef struct infer_state {
    bool any;                  /* a non-NULL value was seen */
    bool can_int, can_double, can_bool, can_date, can_ts;
    bool ts_nanos, ts_offset, ts_local;
    bool ts_micros_only;       /* a value out of the years nanoseconds reach */
} infer_state;

/* Narrows s by one field (quoted: it was in quotes; "" is a value). */
void pq_csv_infer_value(infer_state *s, const char *p, size_t n, bool quoted);

#endif
