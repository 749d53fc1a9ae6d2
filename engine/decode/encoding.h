/* Value and level decoders (one .c file per encoding family).
 *
 * Every decoder follows Init / Read / Skip: init over a page's encoded bytes,
 * read the next n values into a typed array, or skip n values without
 * materializing them.  Nothing in the page is trusted: a run, a length or a
 * bit width that overruns the page is PQ_E_CORRUPT, never an out-of-bounds read.
 *
 * Typed output arrays by physical type:
 *   BOOLEAN -> uint8_t (0/1)      INT32 -> int32_t     INT64 -> int64_t
 *   INT96 -> pq_int96             FLOAT -> float       DOUBLE -> double
 *   BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY -> pq_bytes (views into the page buffer,
 *   the dictionary, or `storage` where values had to be rebuilt) */
#ifndef PQ_ENCODING_H
#define PQ_ENCODING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "status.h"
#include "types.h"

/* Size of one element of the typed output array for a physical type. */
size_t pq_value_size(pq_phys type);

/* ------------------------------------------------------------------ RLE / bit-packed hybrid
 * Used for definition/repetition levels, dictionary indices and RLE booleans.
 * bit_width 0..32.  (Levels are at most 16 bits; indices 32.) */
typedef struct pq_rle_dec {
    const uint8_t *p, *end;     /* p: next run header */
    int bit_width;
    uint32_t rle_left;          /* values left in the current RLE run */
    uint32_t rle_value;
    uint32_t packed_left;       /* values left in the current bit-packed run, counting
                                 * buffered ones; clamped to the bytes actually present */
    const uint8_t *packed_p;    /* next group of 8 in the bit-packed run */
    uint32_t group[8];          /* unpacked current group */
    uint32_t group_pos;         /* next index in group; 8 = none buffered */
} pq_rle_dec;

int pq_rle_init(pq_rle_dec *d, const uint8_t *p, size_t len, int bit_width, pq_error *err);
/* Fails with PQ_E_CORRUPT when the data ends before n values. */
int pq_rle_read_u32(pq_rle_dec *d, uint32_t *out, size_t n, pq_error *err);
int pq_rle_read_u16(pq_rle_dec *d, uint16_t *out, size_t n, pq_error *err);
int pq_rle_skip(pq_rle_dec *d, size_t n, pq_error *err);
/* Whether the next n values are one RLE run of `value` (the definition
 * levels of a page without nulls), so that a caller can skip expanding them.
 * The decoder does not move; anything else, an error included, is false. */
bool pq_rle_is_one_run(const pq_rle_dec *d, uint32_t value, size_t n);

/* Deprecated BIT_PACKED level encoding: values packed MSB-first, no runs.
 * `len` must hold ceil(n * bit_width / 8) bytes. */
int pq_bitpacked_levels_read(const uint8_t *p, size_t len, int bit_width, uint16_t *out, size_t n,
                             pq_error *err);

/* Levels of a data page v1: RLE with a 4-byte little-endian length prefix, or
 * BIT_PACKED.  Decodes n levels and sets *consumed to the bytes used.  With
 * all_max non-NULL, an RLE section that is one run of max_level sets
 * *all_max and leaves `out` unwritten (pq_rle_is_one_run). */
int pq_levels_v1_read(pq_encoding enc, const uint8_t *p, size_t len, int max_level, uint16_t *out,
                      size_t n, size_t *consumed, bool *all_max, pq_error *err);

/* Bit width needed to store max_value (0 for 0). */
int pq_bit_width(uint32_t max_value);

/* Appends v[0..n) RLE / bit-packed hybrid encoded (no length prefix): runs of
 * 8 or more equal values as RLE runs, the rest bit-packed, the last group
 * zero-padded.  Returns 0, or -1 when out of memory or bit_width > 32. */
int pq_rle_encode(const uint32_t *v, size_t n, int bit_width, pq_buf *out);
/* Upper bound of the bytes pq_rle_encode appends for n values. */
size_t pq_rle_encode_bound(size_t n, int bit_width);

/* ------------------------------------------------------------------ dictionary */
typedef struct pq_dict {
    pq_phys type;
    int32_t type_length;
    uint32_t n;
    void *values;               /* typed array of n values (pq_bytes views into the dict page) */
} pq_dict;

/* Decodes a dictionary page (PLAIN, or PLAIN_DICTIONARY which means PLAIN)
 * holding num_values values. Arrays are allocated in `arena`. */
int pq_dict_decode(pq_dict *dict, pq_phys type, int32_t type_length, const uint8_t *p, size_t len,
                   uint32_t num_values, pq_arena *arena, pq_error *err);

/* ------------------------------------------------------------------ value decoders */
typedef struct pq_delta_state {
    /* DELTA_BINARY_PACKED decoder state */
    const uint8_t *p, *end;     /* p: next block header, or next miniblock of this block */
    uint32_t block_size, miniblocks, values_per_mini;
    uint64_t total_left;        /* values left to return, including first */
    uint64_t last;              /* last value produced (arithmetic wraps as uint64) */
    uint64_t min_delta;         /* of the current block */
    bool first_pending;         /* the header's first value is still to be returned */
    uint32_t mini_index;        /* miniblock within the current block (== miniblocks: none) */
    uint32_t mini_left;         /* deltas left in the current miniblock (multiple of 8) */
    uint32_t mini_width;        /* bit width of the current miniblock */
    const uint8_t *widths;      /* bit widths of the current block's miniblocks */
    const uint8_t *mini_p;      /* next group of 8 in the current miniblock */
    uint64_t buf[8];            /* a decoded group, partly consumed */
    uint32_t buf_pos, buf_len;
} pq_delta_state;

typedef struct pq_values_dec {
    pq_encoding enc;
    pq_phys type;
    int32_t type_length;
    const uint8_t *p, *end;     /* remaining encoded bytes */
    uint32_t left;              /* values left in the page (upper bound) */
    const pq_dict *dict;
    /* per-encoding state */
    pq_rle_dec rle;             /* dictionary indices; RLE booleans */
    uint32_t bool_bit;          /* PLAIN boolean: bit offset (0..7) into *p */
    pq_delta_state delta;       /* DELTA_BINARY_PACKED, and lengths / prefixes below */
    pq_delta_state delta2;      /* DELTA_BYTE_ARRAY: suffix lengths */
    const uint8_t *bytes_p;     /* DELTA_*: next unread byte of the concatenated bytes */
    const uint8_t *bytes_end;
    uint8_t *last_value;        /* DELTA_BYTE_ARRAY: previous value (malloc'd) */
    uint32_t last_len, last_cap;
    uint32_t bss_index;         /* BYTE_STREAM_SPLIT: next value index */
    uint32_t bss_count;         /* values in each stream (the stride) */
} pq_values_dec;

/* Initializes a decoder over a page's value bytes.  num_values is the number
 * of non-null values the page holds (levels told us).  dict is required for
 * PLAIN_DICTIONARY / RLE_DICTIONARY.  Unsupported combinations (an encoding
 * that does not apply to the type) are PQ_E_CORRUPT / PQ_E_UNSUPPORTED. */
int pq_values_init(pq_values_dec *d, pq_encoding enc, pq_phys type, int32_t type_length,
                   const uint8_t *p, size_t len, uint32_t num_values, const pq_dict *dict,
                   pq_error *err);
/* Reads n values into out (typed array).  Byte-array values that must be
 * rebuilt (DELTA_BYTE_ARRAY) are copied into `storage`, which the caller keeps
 * alive as long as the values. */
int pq_values_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err);
int pq_values_skip(pq_values_dec *d, size_t n, pq_error *err);
/* Frees scratch memory held by the decoder (safe on a zeroed decoder). */
void pq_values_free(pq_values_dec *d);

#endif
