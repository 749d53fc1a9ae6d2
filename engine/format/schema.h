/* Schema: the flat SchemaElement list of the footer as a tree.
 *
 * Two views of the same schema:
 *  - the physical leaves (one per column chunk, in chunk order) with their
 *    maximum definition and repetition levels;
 *  - the logical tree of nodes (primitive, struct, list, map) obtained by
 *    applying the LIST/MAP backward-compatibility rules of LogicalTypes.md, which
 *    the CSV/JSON renderer walks.
 * Logical types are normalized: a ConvertedType without a LogicalType becomes
 * the equivalent pq_logical. */
#ifndef PQ_SCHEMA_H
#define PQ_SCHEMA_H

#include "meta.h"

typedef enum pq_node_kind {
    PQ_NODE_PRIMITIVE,
    PQ_NODE_STRUCT,
    PQ_NODE_LIST,
    PQ_NODE_MAP,
} pq_node_kind;

typedef struct pq_node pq_node;
struct pq_node {
    const char *name;
    pq_node_kind kind;
    pq_node *parent;
    pq_node **children;        /* STRUCT: fields; LIST: {element}; MAP: {key, value or NULL} */
    int32_t n_children;

    /* Definition level at which this node is present (non-null).  A node
     * whose parent is present but whose level entry has def < def_level is
     * NULL (only possible when `nullable`). */
    int16_t def_level;
    int16_t rep_level;
    bool nullable;

    /* LIST / MAP: the repeated group.  The collection holds at least one
     * element iff def >= elem_def_level; an entry with rep == elem_rep_level
     * continues the collection. */
    int16_t elem_def_level;
    int16_t elem_rep_level;

    /* PRIMITIVE */
    pq_phys phys;
    int32_t type_length;
    pq_converted converted;
    pq_logical logical;
    int32_t leaf_index;        /* column chunk index, -1 for groups */

    int32_t first_leaf, n_leaves; /* the leaves under this node: [first, first+n) */
    int32_t element_index;     /* index into pq_file_meta.schema */
    bool has_field_id;         /* the element's field_id (a table format may match columns by it) */
    int32_t field_id;
};

typedef struct pq_leaf {
    const pq_node *node;       /* the primitive node */
    int16_t max_def;
    int16_t max_rep;
    const char *path;          /* dotted path of the physical column, for messages */
    /* The names of the physical path, root's child to the leaf, every
     * level included (a LIST's repeated group too): a column chunk's
     * path_in_schema. */
    const char **path_parts;
    int32_t n_path_parts;
    int32_t column_order;      /* pq_column_order */
} pq_leaf;

typedef struct pq_schema {
    pq_node *root;             /* STRUCT of the top-level fields */
    pq_leaf *leaves;
    int32_t n_leaves;
    pq_arena arena;
} pq_schema;

/* Builds the schema of a decoded footer.  Inconsistent schemas (a group with
 * too many children, a leaf without a type, a FIXED_LEN_BYTE_ARRAY without a
 * length, depth beyond 64) are PQ_E_CORRUPT. */
int pq_schema_build(const pq_file_meta *meta, pq_schema *out, pq_error *err);
void pq_schema_free(pq_schema *s);

/* The top-level field called `name` (exact match), or NULL. */
const pq_node *pq_schema_find(const pq_schema *s, const char *name);
/* The index just past element i's subtree in m's schema elements
 * (children follow depth first), or -1 when the elements end first. */
int32_t pq_schema_subtree_end(const pq_file_meta *m, int32_t i);

/* Text of a node's type for schema.txt / pqtool meta, e.g. "INT64",
 * "DECIMAL(12,2)", "TIMESTAMP(MICROS,UTC)", "LIST<STRING>",
 * "STRUCT<a: INT32, b: STRING>". */
int pq_node_type_text(const pq_node *n, pq_buf *out);

/* Whether two primitive nodes hold one type (physical type, length and
 * annotation; INT32/INT64 with or without their own signed INTEGER
 * annotation are one type). */
bool pq_node_same_type(const pq_node *a, const pq_node *b);
/* Whether two schemas have the same shape and types (multi-file tables). */
bool pq_schema_equal(const pq_schema *a, const pq_schema *b);
/* pq_schema_equal, nullability (required or optional) included: a query
 * compiled against one is the query compiled against the other. */
bool pq_schema_identical(const pq_schema *a, const pq_schema *b);

/* Schema evolution (schema_union.c).  The type of a table's primitive
 * column whose files hold types a and b: *out is a copy of a with the
 * widest of both (integers to the narrowest integer holding both, unsigned
 * ones in a signed type of twice their width, at most 64 bits; FLOAT and
 * DOUBLE to DOUBLE, and an integer beside either to DOUBLE; INT64
 * timestamps of one UTC-ness to the finer unit; INT96 beside an INT64
 * TIMESTAMP(MILLIS or MICROS) of its UTC-ness to TIMESTAMP(MICROS)).
 * -1 when no type holds both (a string and an integer, ...). */
int pq_node_union_type(const pq_node *a, const pq_node *b, pq_node *out);

/* How a file's values of a primitive column become the table's type. */
typedef enum pq_widen {
    PQ_WIDEN_NONE = 0,         /* the same values (int8 read as int16 is INT32 both) */
    PQ_WIDEN_I32_I64,          /* INT32 sign-extended to INT64 */
    PQ_WIDEN_U32_I64,          /* uint32 (INT32) zero-extended to INT64 */
    PQ_WIDEN_F32_F64,          /* FLOAT to DOUBLE */
    PQ_WIDEN_TS_X1000,         /* timestamp to a unit 1,000 times finer */
    PQ_WIDEN_TS_X1000000,      /* timestamp, milliseconds to nanoseconds */
    /* Integers to DOUBLE: the nearest double (exact up to 2^53 in
     * magnitude; past it several integers are one double).  uint8/uint16
     * are INT32s that read as U32. */
    PQ_WIDEN_I32_F64,          /* INT32 (int8, int16, int32) */
    PQ_WIDEN_U32_F64,          /* uint8, uint16, uint32 (INT32) */
    PQ_WIDEN_I64_F64,          /* INT64 */
    PQ_WIDEN_U64_F64,          /* uint64 (INT64) */
    /* INT96 (8 bytes of nanoseconds of the day, 4 of Julian day, little
     * endian) to an INT64 TIMESTAMP(MICROS) of its UTC-ness: the whole
     * microseconds every reader here shows of it (render.c, expr_value.c:
     * Spark's wrapping arithmetic, so that no value is out of range). */
    PQ_WIDEN_INT96_MICROS,
} pq_widen;
/* The conversion of a file's column of type `from` to the table's `to`, or
 * -1 when `to` does not hold every value of `from` (not primitives, or
 * another type). */
int pq_node_widen(const pq_node *from, const pq_node *to);

#endif
