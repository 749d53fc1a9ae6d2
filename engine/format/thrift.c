/* Thrift compact protocol reader and writer (see thrift.h for the format). */
#include "thrift.h"

#include <string.h>

const char *pq_tc_type_name(int type)
{
    switch (type) {
    case PQ_TC_STOP: return "stop";
    case PQ_TC_TRUE: return "bool";
    case PQ_TC_FALSE: return "bool";
    case PQ_TC_I8: return "i8";
    case PQ_TC_I16: return "i16";
    case PQ_TC_I32: return "i32";
    case PQ_TC_I64: return "i64";
    case PQ_TC_DOUBLE: return "double";
    case PQ_TC_BINARY: return "binary";
    case PQ_TC_LIST: return "list";
    case PQ_TC_SET: return "set";
    case PQ_TC_MAP: return "map";
    case PQ_TC_STRUCT: return "struct";
    case PQ_TC_UUID: return "uuid";
    default: return "invalid type";
    }
}

/* ================================================================ reader == */

void pq_tc_reader_init(pq_tc_reader *r, const uint8_t *buf, size_t len, pq_error *err)
{
    r->base = buf;
    r->p = buf;
    r->end = buf + len;
    r->depth = 0;
    r->err = err;
}

/* Fails unless n more bytes are available. */
static int need(pq_tc_reader *r, size_t n, const char *what)
{
    if (pq_tc_remaining(r) < n)
        return PQ_CORRUPT(r->err, "truncated %s at byte %zu: needs %zu bytes, %zu left", what,
                          pq_tc_offset(r), n, pq_tc_remaining(r));
    return PQ_OK;
}

int pq_tc_read_varint(pq_tc_reader *r, uint64_t *out)
{
    size_t start = pq_tc_offset(r);
    uint64_t v = 0;
    /* A 64-bit value needs at most 10 groups of 7 bits; the 10th may only
     * carry the top bit, so anything above 1 there is an overflow (and a set
     * continuation bit would make it longer than 10 bytes). */
    for (unsigned i = 0; i < 10; i++) {
        if (r->p >= r->end)
            return PQ_CORRUPT(r->err, "truncated varint at byte %zu", start);
        uint8_t b = *r->p++;
        if (i == 9 && b > 1)
            return PQ_CORRUPT(r->err,
                              "varint at byte %zu is longer than 10 bytes or overflows 64 bits",
                              start);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return PQ_OK;
        }
    }
    return PQ_CORRUPT(r->err, "varint at byte %zu is too long", start); /* not reached */
}

static inline int64_t zigzag_decode(uint64_t v)
{
    return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

static inline uint64_t zigzag_encode(int64_t n)
{
    uint64_t u = (uint64_t)n;
    return (u << 1) ^ (0 - (u >> 63));
}

int pq_tc_read_i8(pq_tc_reader *r, int8_t *out)
{
    PQ_TRY(need(r, 1, "i8"));
    *out = (int8_t)*r->p++;
    return PQ_OK;
}

/* Reads a zigzag varint whose unsigned form must fit in `bits` bits. */
static int read_zigzag(pq_tc_reader *r, unsigned bits, int64_t *out)
{
    size_t start = pq_tc_offset(r);
    uint64_t v = 0;
    PQ_TRY(pq_tc_read_varint(r, &v));
    if (bits < 64 && (v >> bits) != 0)
        return PQ_CORRUPT(r->err, "varint at byte %zu does not fit in i%u", start, bits);
    *out = zigzag_decode(v);
    return PQ_OK;
}

int pq_tc_read_i16(pq_tc_reader *r, int16_t *out)
{
    int64_t v = 0;
    PQ_TRY(read_zigzag(r, 16, &v));
    *out = (int16_t)v;
    return PQ_OK;
}

int pq_tc_read_i32(pq_tc_reader *r, int32_t *out)
{
    int64_t v = 0;
    PQ_TRY(read_zigzag(r, 32, &v));
    *out = (int32_t)v;
    return PQ_OK;
}

int pq_tc_read_i64(pq_tc_reader *r, int64_t *out)
{
    return read_zigzag(r, 64, out);
}

int pq_tc_read_double(pq_tc_reader *r, double *out)
{
    PQ_TRY(need(r, 8, "double"));
    uint64_t bits = 0;
    for (int i = 7; i >= 0; i--) bits = (bits << 8) | r->p[i];
    r->p += 8;
    memcpy(out, &bits, sizeof bits);
    return PQ_OK;
}

int pq_tc_read_binary(pq_tc_reader *r, pq_bytes *out)
{
    size_t start = pq_tc_offset(r);
    uint64_t n;
    PQ_TRY(pq_tc_read_varint(r, &n));
    if (n > pq_tc_remaining(r))
        return PQ_CORRUPT(r->err, "binary of %llu bytes at byte %zu exceeds the %zu bytes left",
                          (unsigned long long)n, start, pq_tc_remaining(r));
    if (n > UINT32_MAX)
        return PQ_CORRUPT(r->err, "binary of %llu bytes at byte %zu is too long",
                          (unsigned long long)n, start);
    out->ptr = r->p;
    out->len = (uint32_t)n;
    r->p += n;
    return PQ_OK;
}

int pq_tc_read_string(pq_tc_reader *r, pq_arena *arena, const char **out)
{
    pq_bytes b = {0};
    PQ_TRY(pq_tc_read_binary(r, &b));
    if (!arena) return pq_fail(r->err, PQ_E_USAGE, "string field decoded without an arena");
    char *s = pq_arena_strndup(arena, (const char *)b.ptr, b.len);
    if (!s) return pq_fail(r->err, PQ_E_NOMEM, "out of memory copying a %u-byte string", b.len);
    *out = s;
    return PQ_OK;
}

int pq_tc_read_bool_elem(pq_tc_reader *r, bool *out)
{
    PQ_TRY(need(r, 1, "bool"));
    uint8_t b = *r->p++;
    /* The spec says 1/2 (like field types); some writers used 0 for false. */
    if (b > 2)
        return PQ_CORRUPT(r->err, "bool element at byte %zu has value %u", pq_tc_offset(r) - 1, b);
    *out = b == 1;
    return PQ_OK;
}

static int enter(pq_tc_reader *r)
{
    if (r->depth >= PQ_TC_MAX_DEPTH)
        return PQ_CORRUPT(r->err, "nesting deeper than %d at byte %zu", PQ_TC_MAX_DEPTH,
                          pq_tc_offset(r));
    r->depth++;
    return PQ_OK;
}

static void leave(pq_tc_reader *r)
{
    if (r->depth > 0) r->depth--;
}

int pq_tc_struct_begin(pq_tc_reader *r)
{
    return enter(r);
}

void pq_tc_struct_end(pq_tc_reader *r)
{
    leave(r);
}

int pq_tc_next_field(pq_tc_reader *r, int16_t *last_id, pq_tc_field *f)
{
    PQ_TRY(need(r, 1, "struct (no STOP byte)"));
    size_t start = pq_tc_offset(r);
    uint8_t b = *r->p++;
    if (b == 0) {
        f->id = 0;
        f->type = PQ_TC_STOP;
        f->bool_value = false;
        return PQ_OK;
    }
    uint8_t type = b & 0x0f;
    unsigned delta = b >> 4;
    if (type > PQ_TC_UUID)
        return PQ_CORRUPT(r->err, "field header at byte %zu has unknown type %u", start, type);
    int32_t id;
    if (delta == 0) {
        int16_t id16;
        PQ_TRY(pq_tc_read_i16(r, &id16));
        id = id16;
    } else {
        id = (int32_t)*last_id + (int32_t)delta;
        if (id > INT16_MAX)
            return PQ_CORRUPT(r->err, "field id at byte %zu overflows i16", start);
    }
    f->id = (int16_t)id;
    f->bool_value = type == PQ_TC_TRUE;
    f->type = (type == PQ_TC_TRUE || type == PQ_TC_FALSE) ? PQ_TC_BOOL : type;
    *last_id = f->id;
    return PQ_OK;
}

/* Smallest encoding of one element of a type: bounds container sizes. */
static size_t min_elem_size(int type)
{
    switch (type) {
    case PQ_TC_DOUBLE: return 8;
    case PQ_TC_UUID: return 16;
    default: return 1; /* varints, bytes, length prefixes, STOP, container headers */
    }
}

static int valid_elem_type(uint8_t *type)
{
    if (*type == PQ_TC_FALSE) *type = PQ_TC_BOOL; /* some writers tag bool lists with 2 */
    return *type >= PQ_TC_TRUE && *type <= PQ_TC_UUID;
}

/* Checks that n elements of the given minimal sizes can fit in the rest. */
static int check_count(pq_tc_reader *r, const char *kind, uint64_t n, size_t each, size_t start)
{
    size_t left = pq_tc_remaining(r);
    if (n > left / each)
        return PQ_CORRUPT(r->err, "%s of %llu elements at byte %zu exceeds the %zu bytes left",
                          kind, (unsigned long long)n, start, left);
    return PQ_OK;
}

int pq_tc_list_begin(pq_tc_reader *r, uint8_t *elem_type, uint32_t *n)
{
    size_t start = pq_tc_offset(r);
    PQ_TRY(need(r, 1, "list header"));
    uint8_t b = *r->p++;
    uint8_t type = b & 0x0f;
    uint64_t size = b >> 4;
    if (size == 15) {
        PQ_TRY(pq_tc_read_varint(r, &size));
        if (size > UINT32_MAX)
            return PQ_CORRUPT(r->err, "list at byte %zu has size %llu", start,
                              (unsigned long long)size);
    }
    /* Some writers tag empty lists with type 0; only a non-empty list needs
     * a real element type. */
    if (size > 0 && !valid_elem_type(&type))
        return PQ_CORRUPT(r->err, "list at byte %zu has unknown element type %u", start, type);
    PQ_TRY(check_count(r, "list", size, min_elem_size(type), start));
    *elem_type = type;
    *n = (uint32_t)size;
    return PQ_OK;
}

int pq_tc_map_begin(pq_tc_reader *r, uint8_t *key_type, uint8_t *val_type, uint32_t *n)
{
    size_t start = pq_tc_offset(r);
    uint64_t size;
    PQ_TRY(pq_tc_read_varint(r, &size));
    if (size == 0) {
        *key_type = *val_type = PQ_TC_STOP;
        *n = 0;
        return PQ_OK;
    }
    if (size > UINT32_MAX)
        return PQ_CORRUPT(r->err, "map at byte %zu has size %llu", start, (unsigned long long)size);
    PQ_TRY(need(r, 1, "map header"));
    uint8_t b = *r->p++;
    uint8_t kt = b >> 4, vt = b & 0x0f;
    if (!valid_elem_type(&kt) || !valid_elem_type(&vt))
        return PQ_CORRUPT(r->err, "map at byte %zu has unknown key/value types %u/%u", start,
                          b >> 4, b & 0x0f);
    PQ_TRY(check_count(r, "map", size, min_elem_size(kt) + min_elem_size(vt), start));
    *key_type = kt;
    *val_type = vt;
    *n = (uint32_t)size;
    return PQ_OK;
}

static int skip_value(pq_tc_reader *r, int type, bool as_elem);

static int skip_struct(pq_tc_reader *r)
{
    PQ_TRY(pq_tc_struct_begin(r));
    int16_t last = 0;
    for (;;) {
        pq_tc_field f = {0};
        PQ_TRY(pq_tc_next_field(r, &last, &f));
        if (f.type == PQ_TC_STOP) break;
        PQ_TRY(skip_value(r, f.type, false));
    }
    pq_tc_struct_end(r);
    return PQ_OK;
}

static int skip_value(pq_tc_reader *r, int type, bool as_elem)
{
    uint64_t v;
    switch (type) {
    case PQ_TC_TRUE:
    case PQ_TC_FALSE:
        if (as_elem) {
            bool b;
            return pq_tc_read_bool_elem(r, &b);
        }
        return PQ_OK; /* the value was in the field header */
    case PQ_TC_I8:
        PQ_TRY(need(r, 1, "i8"));
        r->p++;
        return PQ_OK;
    case PQ_TC_I16:
    case PQ_TC_I32:
    case PQ_TC_I64:
        return pq_tc_read_varint(r, &v);
    case PQ_TC_DOUBLE:
        PQ_TRY(need(r, 8, "double"));
        r->p += 8;
        return PQ_OK;
    case PQ_TC_UUID:
        PQ_TRY(need(r, 16, "uuid"));
        r->p += 16;
        return PQ_OK;
    case PQ_TC_BINARY: {
        pq_bytes b = {0};
        return pq_tc_read_binary(r, &b);
    }
    case PQ_TC_LIST:
    case PQ_TC_SET: {
        uint8_t et;
        uint32_t n;
        PQ_TRY(pq_tc_list_begin(r, &et, &n));
        PQ_TRY(enter(r));
        for (uint32_t i = 0; i < n; i++) PQ_TRY(skip_value(r, et, true));
        leave(r);
        return PQ_OK;
    }
    case PQ_TC_MAP: {
        uint8_t kt, vt;
        uint32_t n;
        PQ_TRY(pq_tc_map_begin(r, &kt, &vt, &n));
        PQ_TRY(enter(r));
        for (uint32_t i = 0; i < n; i++) {
            PQ_TRY(skip_value(r, kt, true));
            PQ_TRY(skip_value(r, vt, true));
        }
        leave(r);
        return PQ_OK;
    }
    case PQ_TC_STRUCT:
        return skip_struct(r);
    default:
        return PQ_CORRUPT(r->err, "cannot skip a value of unknown type %d at byte %zu", type,
                          pq_tc_offset(r));
    }
}

int pq_tc_skip(pq_tc_reader *r, int type)
{
    return skip_value(r, type, false);
}

int pq_tc_skip_elem(pq_tc_reader *r, int type)
{
    return skip_value(r, type, true);
}

/* ================================================== table-driven structs == */

static const pq_tc_fdef *field_def(const pq_tc_sctx *s, int16_t id)
{
    if (id > 0 && (size_t)id < s->n_fields && s->fields[id].name) return &s->fields[id];
    return NULL;
}

int pq_tc_sctx_fail(pq_tc_reader *r, const pq_tc_sctx *s, int16_t id)
{
    const char *sep = (r->err && r->err->msg[0] == '[') ? "" : ": ";
    const pq_tc_fdef *d = field_def(s, id);
    if (d)
        pq_error_prefix(r->err, "%s.%s%s", s->name, d->name, sep);
    else
        pq_error_prefix(r->err, "%s field %d%s", s->name, id, sep);
    return PQ_ERR;
}

int pq_tc_sctx_begin(pq_tc_reader *r, pq_tc_sctx *s)
{
    if (pq_tc_struct_begin(r) != PQ_OK) {
        pq_error_prefix(r->err, "%s: ", s->name);
        return PQ_ERR;
    }
    return PQ_OK;
}

/* Fails naming the first required field not seen. */
static int check_required(pq_tc_reader *r, const pq_tc_sctx *s)
{
    for (size_t id = 1; id < s->n_fields && id < 32; id++) {
        const pq_tc_fdef *d = &s->fields[id];
        if (!d->required || pq_tc_sctx_seen(s, (int)id)) continue;
        if ((s->wrong >> id) & 1u)
            return PQ_CORRUPT(r->err, "%s.%s: required field is not a %s", s->name, d->name,
                              pq_tc_type_name(d->type));
        return PQ_CORRUPT(r->err, "%s.%s: required field is missing", s->name, d->name);
    }
    return PQ_OK;
}

static bool type_matches(uint8_t want, uint8_t got)
{
    return want == got || (want == PQ_TC_LIST && got == PQ_TC_SET);
}

int pq_tc_sctx_next(pq_tc_reader *r, pq_tc_sctx *s, pq_tc_field *f)
{
    for (;;) {
        if (pq_tc_next_field(r, &s->last, f) != PQ_OK) {
            pq_error_prefix(r->err, "%s: ", s->name);
            return PQ_ERR;
        }
        if (f->type == PQ_TC_STOP) {
            pq_tc_struct_end(r);
            return check_required(r, s);
        }
        const pq_tc_fdef *d = field_def(s, f->id);
        bool in_mask = f->id > 0 && f->id < 32;
        if (d && !type_matches(d->type, f->type)) {
            /* e.g. Dremio's parquet-mr wrote a list as ColumnMetaData field 15 */
            if (pq_tc_skip(r, f->type) != PQ_OK) return pq_tc_sctx_fail(r, s, f->id);
            if (in_mask) s->wrong |= 1u << f->id;
            continue;
        }
        if (in_mask) s->seen |= 1u << f->id;
        return 1;
    }
}

/* ================================================================ writer == */

void pq_tc_writer_init(pq_tc_writer *w, pq_buf *buf)
{
    w->buf = buf;
    w->depth = 0;
    w->failed = false;
    w->misuse = false;
    w->last_id[0] = 0;
}

int pq_tc_writer_finish(pq_tc_writer *w, pq_error *err)
{
    if (w->failed) return pq_fail(err, PQ_E_NOMEM, "out of memory encoding thrift");
    if (w->misuse || w->depth != 0)
        return pq_fail(err, PQ_E_USAGE, "thrift writer: unbalanced or too deep structs");
    return PQ_OK;
}

static void put(pq_tc_writer *w, const void *p, size_t n)
{
    if (w->failed) return;
    if (pq_buf_append(w->buf, p, n) != 0) w->failed = true;
}

void pq_tc_write_byte(pq_tc_writer *w, uint8_t b)
{
    put(w, &b, 1);
}

void pq_tc_write_varint(pq_tc_writer *w, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    put(w, tmp, n);
}

void pq_tc_write_i8(pq_tc_writer *w, int8_t v)
{
    pq_tc_write_byte(w, (uint8_t)v);
}

void pq_tc_write_i16(pq_tc_writer *w, int16_t v)
{
    pq_tc_write_varint(w, zigzag_encode(v));
}

void pq_tc_write_i32(pq_tc_writer *w, int32_t v)
{
    /* Zigzag over 32 bits so the varint stays within 5 bytes. */
    uint32_t u = (uint32_t)v;
    pq_tc_write_varint(w, (uint32_t)((u << 1) ^ (0u - (u >> 31))));
}

void pq_tc_write_i64(pq_tc_writer *w, int64_t v)
{
    pq_tc_write_varint(w, zigzag_encode(v));
}

void pq_tc_write_double(pq_tc_writer *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t tmp[8];
    for (int i = 0; i < 8; i++) tmp[i] = (uint8_t)(bits >> (8 * i));
    put(w, tmp, 8);
}

void pq_tc_write_binary(pq_tc_writer *w, const void *p, size_t n)
{
    pq_tc_write_varint(w, n);
    if (n) put(w, p, n);
}

void pq_tc_write_string(pq_tc_writer *w, const char *s)
{
    pq_tc_write_binary(w, s, strlen(s));
}

void pq_tc_write_bool_elem(pq_tc_writer *w, bool v)
{
    pq_tc_write_byte(w, v ? PQ_TC_TRUE : PQ_TC_FALSE);
}

void pq_tc_write_struct_begin(pq_tc_writer *w)
{
    if (w->depth >= PQ_TC_MAX_DEPTH) {
        w->misuse = true;
        return;
    }
    w->depth++;
    w->last_id[w->depth] = 0;
}

void pq_tc_write_struct_end(pq_tc_writer *w)
{
    pq_tc_write_byte(w, PQ_TC_STOP);
    if (w->depth > 0)
        w->depth--;
    else
        w->misuse = true;
}

void pq_tc_write_field(pq_tc_writer *w, int16_t id, uint8_t type)
{
    int16_t *last = &w->last_id[w->depth];
    if (id > *last && id - *last <= 15) {
        pq_tc_write_byte(w, (uint8_t)(((id - *last) << 4) | type));
    } else {
        pq_tc_write_byte(w, type);
        pq_tc_write_i16(w, id);
    }
    *last = id;
}

void pq_tc_write_field_bool(pq_tc_writer *w, int16_t id, bool v)
{
    pq_tc_write_field(w, id, v ? PQ_TC_TRUE : PQ_TC_FALSE);
}

void pq_tc_write_list_begin(pq_tc_writer *w, uint8_t elem_type, uint32_t n)
{
    if (n < 15) {
        pq_tc_write_byte(w, (uint8_t)((n << 4) | elem_type));
    } else {
        pq_tc_write_byte(w, (uint8_t)(0xf0 | elem_type));
        pq_tc_write_varint(w, n);
    }
}

void pq_tc_write_map_begin(pq_tc_writer *w, uint8_t key_type, uint8_t val_type, uint32_t n)
{
    pq_tc_write_varint(w, n);
    if (n) pq_tc_write_byte(w, (uint8_t)((key_type << 4) | (val_type & 0x0f)));
}

void pq_tc_write_field_i8(pq_tc_writer *w, int16_t id, int8_t v)
{
    pq_tc_write_field(w, id, PQ_TC_I8);
    pq_tc_write_i8(w, v);
}

void pq_tc_write_field_i16(pq_tc_writer *w, int16_t id, int16_t v)
{
    pq_tc_write_field(w, id, PQ_TC_I16);
    pq_tc_write_i16(w, v);
}

void pq_tc_write_field_i32(pq_tc_writer *w, int16_t id, int32_t v)
{
    pq_tc_write_field(w, id, PQ_TC_I32);
    pq_tc_write_i32(w, v);
}

void pq_tc_write_field_i64(pq_tc_writer *w, int16_t id, int64_t v)
{
    pq_tc_write_field(w, id, PQ_TC_I64);
    pq_tc_write_i64(w, v);
}

void pq_tc_write_field_double(pq_tc_writer *w, int16_t id, double v)
{
    pq_tc_write_field(w, id, PQ_TC_DOUBLE);
    pq_tc_write_double(w, v);
}

void pq_tc_write_field_binary(pq_tc_writer *w, int16_t id, const void *p, size_t n)
{
    pq_tc_write_field(w, id, PQ_TC_BINARY);
    pq_tc_write_binary(w, p, n);
}

void pq_tc_write_field_string(pq_tc_writer *w, int16_t id, const char *s)
{
    pq_tc_write_field(w, id, PQ_TC_BINARY);
    pq_tc_write_string(w, s);
}

void pq_tc_write_field_empty_struct(pq_tc_writer *w, int16_t id)
{
    pq_tc_write_field(w, id, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_struct_end(w);
}
