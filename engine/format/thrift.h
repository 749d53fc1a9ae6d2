/* Thrift compact protocol: a bounded reader over a byte range and a writer that
 * appends to a pq_buf.
 *
 * Wire format (thrift-compact spec):
 *   - integers: i8 is one raw byte; i16/i32/i64 are zigzag ULEB128 varints.
 *   - double: 8 bytes little-endian.
 *   - binary/string: varint length, then the bytes.
 *   - field header: one byte, high nibble = id delta from the previous field of
 *     the same struct (1..15), low nibble = type; delta 0 means a zigzag i16 id
 *     follows.  Booleans live in the header type (1 = true, 2 = false).
 *   - list/set header: one byte, high nibble = size (0..14) and low nibble =
 *     element type; size nibble 15 means a varint size follows.  Bool elements
 *     are one byte each.
 *   - map header: varint size; when non-zero, one byte key type << 4 | value type.
 *   - struct: fields, then a STOP byte (0).
 *
 * Nothing read is trusted: every length and count is checked against the bytes
 * left before it is used, varints are at most 10 bytes, nesting is limited to
 * PQ_TC_MAX_DEPTH.  Failures are PQ_E_CORRUPT; callers prefix the struct/field
 * they were reading. */
#ifndef PQ_THRIFT_H
#define PQ_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "status.h"
#include "types.h"

#define PQ_TC_MAX_DEPTH 64

/* Compact-protocol type codes as they appear on the wire. */
typedef enum pq_tc_type {
    PQ_TC_STOP = 0,
    PQ_TC_TRUE = 1,   /* bool field with value true; also "bool" as a list element type */
    PQ_TC_FALSE = 2,  /* bool field with value false */
    PQ_TC_I8 = 3,
    PQ_TC_I16 = 4,
    PQ_TC_I32 = 5,
    PQ_TC_I64 = 6,
    PQ_TC_DOUBLE = 7,
    PQ_TC_BINARY = 8,
    PQ_TC_LIST = 9,
    PQ_TC_SET = 10,
    PQ_TC_MAP = 11,
    PQ_TC_STRUCT = 12,
    PQ_TC_UUID = 13,  /* 16 raw bytes (newer thrift versions) */
} pq_tc_type;

/* Normalised "bool" type used in pq_tc_field.type and for list elements. */
#define PQ_TC_BOOL PQ_TC_TRUE

/* Human-readable name of a wire type, for error messages. */
const char *pq_tc_type_name(int type);

/* ---------------------------------------------------------------- reader -- */

typedef struct pq_tc_reader {
    const uint8_t *base; /* start of the buffer, for offsets in messages */
    const uint8_t *p;
    const uint8_t *end;
    int depth;           /* open structs / containers */
    pq_error *err;
} pq_tc_reader;

/* One field header.  Bool fields are reported as type PQ_TC_BOOL with the
 * value in bool_value (it is encoded in the header itself). */
typedef struct pq_tc_field {
    int16_t id;
    uint8_t type;
    bool bool_value;
} pq_tc_field;

void pq_tc_reader_init(pq_tc_reader *r, const uint8_t *buf, size_t len, pq_error *err);

static inline size_t pq_tc_remaining(const pq_tc_reader *r) { return (size_t)(r->end - r->p); }
static inline size_t pq_tc_offset(const pq_tc_reader *r) { return (size_t)(r->p - r->base); }

/* Raw primitives. */
int pq_tc_read_varint(pq_tc_reader *r, uint64_t *out);
int pq_tc_read_i8(pq_tc_reader *r, int8_t *out);
int pq_tc_read_i16(pq_tc_reader *r, int16_t *out);
int pq_tc_read_i32(pq_tc_reader *r, int32_t *out);
int pq_tc_read_i64(pq_tc_reader *r, int64_t *out);
int pq_tc_read_double(pq_tc_reader *r, double *out);
/* A view into the input buffer; no copy. */
int pq_tc_read_binary(pq_tc_reader *r, pq_bytes *out);
/* A copy into `arena`, NUL-terminated. */
int pq_tc_read_string(pq_tc_reader *r, pq_arena *arena, const char **out);
/* A bool stored as a list/set element: one byte, 1 = true, 0 or 2 = false. */
int pq_tc_read_bool_elem(pq_tc_reader *r, bool *out);

/* Structs.  begin/end track nesting depth; next_field reads one header and
 * returns type PQ_TC_STOP at the end of the struct.  *last_id is the previous
 * field id of this struct (start at 0), updated on return. */
int pq_tc_struct_begin(pq_tc_reader *r);
void pq_tc_struct_end(pq_tc_reader *r);
int pq_tc_next_field(pq_tc_reader *r, int16_t *last_id, pq_tc_field *f);

/* Containers.  The size is checked against the bytes left (every element
 * needs at least one byte, a double eight, a uuid sixteen) before it is
 * returned, so it is safe to size an allocation with it. */
int pq_tc_list_begin(pq_tc_reader *r, uint8_t *elem_type, uint32_t *n);
int pq_tc_map_begin(pq_tc_reader *r, uint8_t *key_type, uint8_t *val_type, uint32_t *n);

/* Skips one value of the given wire type (PQ_TC_TRUE/FALSE as a field type
 * have no payload; PQ_TC_BOOL as an element type use pq_tc_skip_elem). */
int pq_tc_skip(pq_tc_reader *r, int type);
/* Skips one container element: like pq_tc_skip, except that bools take a byte. */
int pq_tc_skip_elem(pq_tc_reader *r, int type);

/* ---------------------------------------------- table-driven structs -- */

/* What a struct decoder knows of a field: its name for messages, the wire
 * type it must have (PQ_TC_LIST also accepts a set), and whether the IDL
 * makes it required.  Tables are indexed by field id; {0} marks a gap. */
typedef struct pq_tc_fdef {
    const char *name;
    uint8_t type;
    bool required;
} pq_tc_fdef;

/* Reading state of one struct: its name and field table, the last field id
 * (for delta decoding), and which ids (1..31) were seen. */
typedef struct pq_tc_sctx {
    const char *name;
    const pq_tc_fdef *fields;
    size_t n_fields;
    int16_t last;
    uint32_t seen;
    uint32_t wrong; /* known ids that came with another wire type */
} pq_tc_sctx;

#define PQ_TC_SCTX(struct_name, table) \
    {struct_name, table, sizeof table / sizeof table[0], 0, 0, 0}

/* Enters the struct (depth-checked). */
int pq_tc_sctx_begin(pq_tc_reader *r, pq_tc_sctx *s);
/* Reads the next field the caller has to handle: returns 1 for a field, 0 at
 * STOP once every required field was seen, PQ_ERR otherwise.  A known id that
 * comes with another wire type is skipped like an unknown field, as
 * thrift-generated code does.  Unknown ids are returned: the caller skips
 * them with pq_tc_skip(r, f->type). */
int pq_tc_sctx_next(pq_tc_reader *r, pq_tc_sctx *s, pq_tc_field *f);
/* Prefixes the error message with "Struct.field: " and returns PQ_ERR.  A
 * message starting with '[' (a list element's "[3]: ...") is glued on. */
int pq_tc_sctx_fail(pq_tc_reader *r, const pq_tc_sctx *s, int16_t id);
static inline bool pq_tc_sctx_seen(const pq_tc_sctx *s, int id)
{
    return id > 0 && id < 32 && ((s->seen >> id) & 1u);
}

/* ---------------------------------------------------------------- writer -- */

/* Appends to `buf`.  Allocation failure is sticky: calls after it do nothing,
 * pq_tc_writer_finish reports it. */
typedef struct pq_tc_writer {
    pq_buf *buf;
    int depth;
    bool failed; /* allocation failed */
    bool misuse; /* unbalanced struct begin/end or nesting beyond the limit */
    int16_t last_id[PQ_TC_MAX_DEPTH + 1];
} pq_tc_writer;

void pq_tc_writer_init(pq_tc_writer *w, pq_buf *buf);
/* PQ_OK, or PQ_ERR with PQ_E_NOMEM (or PQ_E_USAGE on unbalanced nesting). */
int pq_tc_writer_finish(pq_tc_writer *w, pq_error *err);

void pq_tc_write_byte(pq_tc_writer *w, uint8_t b);
void pq_tc_write_varint(pq_tc_writer *w, uint64_t v);
void pq_tc_write_i8(pq_tc_writer *w, int8_t v);
void pq_tc_write_i16(pq_tc_writer *w, int16_t v);
void pq_tc_write_i32(pq_tc_writer *w, int32_t v);
void pq_tc_write_i64(pq_tc_writer *w, int64_t v);
void pq_tc_write_double(pq_tc_writer *w, double v);
void pq_tc_write_binary(pq_tc_writer *w, const void *p, size_t n);
void pq_tc_write_string(pq_tc_writer *w, const char *s);
void pq_tc_write_bool_elem(pq_tc_writer *w, bool v);

void pq_tc_write_struct_begin(pq_tc_writer *w);
/* Writes STOP and closes the struct. */
void pq_tc_write_struct_end(pq_tc_writer *w);
/* A field header (short form when the id delta is 1..15, long form otherwise).
 * For a bool field use pq_tc_write_field_bool, which carries the value. */
void pq_tc_write_field(pq_tc_writer *w, int16_t id, uint8_t type);
void pq_tc_write_field_bool(pq_tc_writer *w, int16_t id, bool v);
void pq_tc_write_list_begin(pq_tc_writer *w, uint8_t elem_type, uint32_t n);
void pq_tc_write_map_begin(pq_tc_writer *w, uint8_t key_type, uint8_t val_type, uint32_t n);

/* Field header + value in one call, for encoders. */
void pq_tc_write_field_i8(pq_tc_writer *w, int16_t id, int8_t v);
void pq_tc_write_field_i16(pq_tc_writer *w, int16_t id, int16_t v);
void pq_tc_write_field_i32(pq_tc_writer *w, int16_t id, int32_t v);
void pq_tc_write_field_i64(pq_tc_writer *w, int16_t id, int64_t v);
void pq_tc_write_field_double(pq_tc_writer *w, int16_t id, double v);
void pq_tc_write_field_binary(pq_tc_writer *w, int16_t id, const void *p, size_t n);
void pq_tc_write_field_string(pq_tc_writer *w, int16_t id, const char *s);
/* A field holding an empty struct (the members of marker unions). */
void pq_tc_write_field_empty_struct(pq_tc_writer *w, int16_t id);

#endif
