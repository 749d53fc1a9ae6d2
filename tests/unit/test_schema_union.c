/* Schema evolution's building blocks (format/schema_union.c): the union type
 * of two primitives (DuckDB's union_by_name rules for integers, floats and
 * timestamps; an integer beside a float is DOUBLE, the SPEC's int to
 * double), the widening a file's column needs to read as the table's, and
 * the union of footers: the order of first appearance, optional where a
 * file lacks the column, widened elements, strict mode's error naming the
 * column, both files and both types, and the lenient mode's first type;
 * INT96 beside INT64 timestamps, and a table format's type set on a
 * column (a Delta INT96 `timestamp` as TIMESTAMP(MICROS, UTC)). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "footer.h"

static pq_node prim(pq_phys phys, pq_logical_kind lk, int bits, bool is_signed)
{
    pq_node n;
    memset(&n, 0, sizeof n);
    n.name = "c";
    n.kind = PQ_NODE_PRIMITIVE;
    n.phys = phys;
    n.converted = PQ_CT_NONE;
    n.logical.kind = lk;
    n.logical.bit_width = (int8_t)bits;
    n.logical.is_signed = is_signed;
    n.nullable = true;
    n.def_level = 1;
    return n;
}

static pq_node ts(pq_time_unit u, bool utc)
{
    pq_node n = prim(PQ_INT64, PQ_LT_TIMESTAMP, 0, false);
    n.logical.unit = u;
    n.logical.utc = utc;
    return n;
}

static void test_union_types(void)
{
    pq_node i8 = prim(PQ_INT32, PQ_LT_INTEGER, 8, true), i16 = prim(PQ_INT32, PQ_LT_INTEGER, 16, true);
    pq_node i32 = prim(PQ_INT32, PQ_LT_NONE, 0, false), i64 = prim(PQ_INT64, PQ_LT_NONE, 0, false);
    pq_node u8 = prim(PQ_INT32, PQ_LT_INTEGER, 8, false), u32 = prim(PQ_INT32, PQ_LT_INTEGER, 32, false);
    pq_node u64 = prim(PQ_INT64, PQ_LT_INTEGER, 64, false);
    pq_node f = prim(PQ_FLOAT, PQ_LT_NONE, 0, false), d = prim(PQ_DOUBLE, PQ_LT_NONE, 0, false);
    pq_node s = prim(PQ_BYTE_ARRAY, PQ_LT_STRING, 0, false);
    pq_node out;
    CHECK(pq_node_union_type(&i8, &i16, &out) == 0 && out.phys == PQ_INT32 && out.logical.bit_width == 16 &&
          out.logical.is_signed && out.converted == PQ_CT_INT_16);
    CHECK(pq_node_union_type(&i32, &i64, &out) == 0 && out.phys == PQ_INT64 && pq_node_same_type(&out, &i64));
    CHECK(pq_node_union_type(&i64, &i32, &out) == 0 && pq_node_same_type(&out, &i64));
    CHECK(pq_node_union_type(&u32, &i32, &out) == 0 && out.phys == PQ_INT64 && out.logical.is_signed);
    CHECK(pq_node_union_type(&u8, &i8, &out) == 0 && out.phys == PQ_INT32 && out.logical.bit_width == 16);
    CHECK(pq_node_union_type(&u8, &u32, &out) == 0 && !out.logical.is_signed && out.logical.bit_width == 32);
    CHECK(pq_node_union_type(&u64, &i64, &out) == -1); /* 128 bits */
    CHECK(pq_node_union_type(&f, &d, &out) == 0 && out.phys == PQ_DOUBLE);
    CHECK(pq_node_union_type(&s, &i32, &out) == -1);
    /* An integer beside a FLOAT or DOUBLE: DOUBLE (the SPEC's int to double;
     * DuckDB makes int and FLOAT a FLOAT), either way round, the integer's
     * annotation gone. */
    CHECK(pq_node_union_type(&i32, &d, &out) == 0 && out.phys == PQ_DOUBLE && out.logical.kind == PQ_LT_NONE &&
          out.converted == PQ_CT_NONE && pq_node_same_type(&out, &d));
    CHECK(pq_node_union_type(&d, &i64, &out) == 0 && pq_node_same_type(&out, &d));
    CHECK(pq_node_union_type(&u64, &d, &out) == 0 && pq_node_same_type(&out, &d));
    CHECK(pq_node_union_type(&u8, &d, &out) == 0 && pq_node_same_type(&out, &d));
    CHECK(pq_node_union_type(&i32, &f, &out) == 0 && pq_node_same_type(&out, &d));
    CHECK(pq_node_union_type(&f, &u32, &out) == 0 && pq_node_same_type(&out, &d));
    CHECK(pq_node_union_type(&s, &d, &out) == -1);
    pq_node dec = prim(PQ_INT64, PQ_LT_DECIMAL, 0, false), day = prim(PQ_INT32, PQ_LT_DATE, 0, false);
    CHECK(pq_node_union_type(&dec, &d, &out) == -1); /* not done: DECIMAL to DOUBLE */
    CHECK(pq_node_union_type(&day, &d, &out) == -1);
    pq_node ms = ts(PQ_UNIT_MILLIS, true), us = ts(PQ_UNIT_MICROS, true), ns = ts(PQ_UNIT_NANOS, true);
    pq_node us_local = ts(PQ_UNIT_MICROS, false);
    CHECK(pq_node_union_type(&ms, &us, &out) == 0 && out.logical.unit == PQ_UNIT_MICROS &&
          out.converted == PQ_CT_TIMESTAMP_MICROS);
    CHECK(pq_node_union_type(&ms, &us_local, &out) == -1);

    CHECK_EQ_INT(pq_node_widen(&i32, &i64), PQ_WIDEN_I32_I64);
    CHECK_EQ_INT(pq_node_widen(&u32, &i64), PQ_WIDEN_U32_I64);
    CHECK_EQ_INT(pq_node_widen(&i8, &i16), PQ_WIDEN_NONE);
    CHECK_EQ_INT(pq_node_widen(&f, &d), PQ_WIDEN_F32_F64);
    CHECK_EQ_INT(pq_node_widen(&ms, &us), PQ_WIDEN_TS_X1000);
    CHECK_EQ_INT(pq_node_widen(&us, &ns), PQ_WIDEN_TS_X1000);
    CHECK_EQ_INT(pq_node_widen(&ms, &ns), PQ_WIDEN_TS_X1000000);
    CHECK_EQ_INT(pq_node_widen(&i32, &d), PQ_WIDEN_I32_F64);
    CHECK_EQ_INT(pq_node_widen(&i8, &d), PQ_WIDEN_I32_F64);
    CHECK_EQ_INT(pq_node_widen(&u32, &d), PQ_WIDEN_U32_F64);
    CHECK_EQ_INT(pq_node_widen(&u8, &d), PQ_WIDEN_U32_F64);
    CHECK_EQ_INT(pq_node_widen(&i64, &d), PQ_WIDEN_I64_F64);
    CHECK_EQ_INT(pq_node_widen(&u64, &d), PQ_WIDEN_U64_F64);
    CHECK_EQ_INT(pq_node_widen(&i32, &f), -1); /* FLOAT is no table's type beside an integer */
    CHECK_EQ_INT(pq_node_widen(&d, &i64), -1);
    CHECK_EQ_INT(pq_node_widen(&dec, &d), -1);
    CHECK_EQ_INT(pq_node_widen(&i64, &i32), -1); /* narrowing */
    CHECK_EQ_INT(pq_node_widen(&u32, &i32), -1);
    CHECK_EQ_INT(pq_node_widen(&d, &f), -1);
    CHECK_EQ_INT(pq_node_widen(&us, &ms), -1);
    CHECK_EQ_INT(pq_node_widen(&s, &i64), -1);

    /* INT96, read as whole microseconds: beside an INT64 timestamp of
     * milliseconds or microseconds of its UTC-ness, TIMESTAMP(MICROS);
     * not beside nanoseconds, another UTC-ness or an integer. */
    pq_node i96 = prim(PQ_INT96, PQ_LT_NONE, 0, false), i96_utc = i96;
    i96_utc.logical.utc = true; /* a Delta `timestamp` (pq_tf_apply_types) */
    CHECK(pq_node_union_type(&i96_utc, &us, &out) == 0 && pq_node_same_type(&out, &us) &&
          out.converted == PQ_CT_TIMESTAMP_MICROS);
    CHECK(pq_node_union_type(&ms, &i96_utc, &out) == 0 && pq_node_same_type(&out, &us));
    CHECK(pq_node_union_type(&i96, &us_local, &out) == 0 && pq_node_same_type(&out, &us_local) &&
          out.converted == PQ_CT_NONE);
    CHECK(pq_node_union_type(&i96, &us, &out) == -1);
    CHECK(pq_node_union_type(&i96_utc, &ns, &out) == -1);
    CHECK(pq_node_union_type(&i96_utc, &i64, &out) == -1);
    CHECK(pq_node_union_type(&i96, &i96, &out) == 0 && out.phys == PQ_INT96);
    CHECK_EQ_INT(pq_node_widen(&i96_utc, &us), PQ_WIDEN_INT96_MICROS);
    CHECK_EQ_INT(pq_node_widen(&i96, &us_local), PQ_WIDEN_INT96_MICROS);
    CHECK_EQ_INT(pq_node_widen(&i96_utc, &i96_utc), PQ_WIDEN_NONE);
    CHECK_EQ_INT(pq_node_widen(&i96_utc, &ns), -1);
    CHECK_EQ_INT(pq_node_widen(&i96_utc, &ms), -1);
    CHECK_EQ_INT(pq_node_widen(&i96, &us), -1);
    CHECK_EQ_INT(pq_node_widen(&us, &i96_utc), -1);
}

/* A footer of flat columns: "name:TYPE" with TYPE i32, i64, i96, u32, f, d,
 * str, and a trailing '!' for REQUIRED; its root named `root`. */
static pq_footer *footer_named(const char *root, const char *const *cols, int n)
{
    pq_footer *ft = calloc(1, sizeof *ft);
    pq_arena_init(&ft->arena, 1024);
    pq_schema_element *e = pq_arena_alloc(&ft->arena, sizeof *e * (size_t)(n + 1));
    e[0] = (pq_schema_element){.name = root, .has_num_children = true, .num_children = n,
                               .converted_type = PQ_CT_NONE};
    for (int i = 0; i < n; i++) {
        const char *colon = strchr(cols[i], ':');
        pq_schema_element *c = &e[i + 1];
        c->name = pq_arena_strndup(&ft->arena, cols[i], (size_t)(colon - cols[i]));
        c->has_type = true;
        c->has_repetition = true;
        c->repetition = strchr(colon, '!') ? PQ_REQUIRED : PQ_OPTIONAL;
        c->converted_type = PQ_CT_NONE;
        const char *t = colon + 1;
        if (!strncmp(t, "i32", 3)) c->type = PQ_INT32;
        else if (!strncmp(t, "i64", 3)) c->type = PQ_INT64;
        else if (!strncmp(t, "i96", 3)) c->type = PQ_INT96;
        else if (!strncmp(t, "u32", 3)) c->type = PQ_INT32, c->converted_type = PQ_CT_UINT_32;
        else if (!strncmp(t, "f", 1)) c->type = PQ_FLOAT;
        else if (!strncmp(t, "d", 1)) c->type = PQ_DOUBLE;
        else c->type = PQ_BYTE_ARRAY, c->converted_type = PQ_CT_UTF8;
    }
    ft->meta.schema = e;
    ft->meta.n_schema = n + 1;
    pq_error err;
    if (pq_schema_build(&ft->meta, &ft->schema, &err) != PQ_OK) {
        fprintf(stderr, "footer_of: %s\n", err.msg);
        abort();
    }
    return ft;
}

static pq_footer *footer_of(const char *const *cols, int n)
{
    return footer_named("schema", cols, n);
}

static const char *col_text(const pq_footer *ft, int i, pq_buf *b)
{
    b->len = 0;
    const pq_node *n = ft->schema.root->children[i];
    pq_buf_printf(b, "%s:", n->name);
    pq_node_type_text(n, b);
    pq_buf_puts(b, n->nullable ? "" : "!");
    pq_buf_append(b, "", 1);
    return b->data;
}

static void test_union_of_footers(void)
{
    const char *a[] = {"id:i32!", "s:str", "f:f"};
    const char *b[] = {"x:u32", "id:i64!", "f:d"};
    const char *c[] = {"id:i32!", "s:i32", "y:str!"};
    pq_footer *fa = footer_of(a, 3), *fb = footer_of(b, 3), *fc = footer_of(c, 3);
    pq_error err;
    pq_schema_union *u;
    CHECK(pq_schema_union_new(false, &u, &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, fa, "a.parquet", &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, fb, "b.parquet", &err) == PQ_OK);
    /* Lenient: c's s (INT32 beside STRING) is its bind's error, not the union's. */
    CHECK(pq_schema_union_add(u, fc, "c.parquet", &err) == PQ_OK);
    CHECK_EQ_INT(pq_schema_union_files(u), 3);
    pq_footer *t = NULL;
    CHECK(pq_schema_union_finish(u, &t, &err) == PQ_OK);
    pq_schema_union_free(u);
    /* The footers may go: the union kept what it needs. */
    pq_footer_free(fa);
    pq_footer_free(fb);
    pq_buf txt;
    pq_buf_init(&txt);
    CHECK(t && t->schema.root->n_children == 5);
    if (t && t->schema.root->n_children == 5) {
        /* first appearance: a's, then b's x, then c's y */
        CHECK(!strcmp(col_text(t, 0, &txt), "id:INT64!")); /* in every file, required in each */
        CHECK(!strcmp(col_text(t, 1, &txt), "s:STRING")); /* the first type */
        CHECK(!strcmp(col_text(t, 2, &txt), "f:DOUBLE"));
        CHECK(!strcmp(col_text(t, 3, &txt), "x:UINT32")); /* missing in a: optional */
        CHECK(!strcmp(col_text(t, 4, &txt), "y:STRING")); /* required in c, missing before it */
        /* The elements a Parquet output writes: the widened types. */
        CHECK(t->meta.n_schema == 6 && t->meta.schema[1].type == PQ_INT64 &&
              t->meta.schema[1].repetition == PQ_REQUIRED && t->meta.schema[3].type == PQ_DOUBLE &&
              t->meta.schema[5].repetition == PQ_OPTIONAL);
        CHECK(t->schema.leaves[0].column_order == PQ_ORDER_TYPE_DEFINED);
    }
    pq_footer_free(t);

    /* Strict: the conflict names the column, both files and both types. */
    fa = footer_of(a, 3);
    CHECK(pq_schema_union_new(true, &u, &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, fa, "a.parquet", &err) == PQ_OK);
    pq_error_clear(&err);
    CHECK(pq_schema_union_add(u, fc, "c.parquet", &err) == PQ_ERR);
    CHECK(strstr(err.msg, "column 's'") && strstr(err.msg, "a.parquet") && strstr(err.msg, "c.parquet") &&
          strstr(err.msg, "STRING") && strstr(err.msg, "INT32"));
    pq_schema_union_free(u);
    /* Nothing added: no table. */
    CHECK(pq_schema_union_new(false, &u, &err) == PQ_OK);
    CHECK(pq_schema_union_finish(u, &t, &err) == PQ_ERR && t == NULL);
    pq_schema_union_free(u);
    pq_footer_free(fa);
    pq_footer_free(fc);

    /* Integers beside floats: DOUBLE elements without the integers'
     * annotation (uint32's UINT_32 must not stay on a DOUBLE). */
    const char *ia[] = {"v:u32", "w:i64!", "z:f"};
    const char *ib[] = {"v:d", "w:d!", "z:i32"};
    fa = footer_of(ia, 3);
    fb = footer_of(ib, 3);
    CHECK(pq_schema_union_new(true, &u, &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, fa, "a.parquet", &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, fb, "b.parquet", &err) == PQ_OK);
    CHECK(pq_schema_union_finish(u, &t, &err) == PQ_OK);
    pq_schema_union_free(u);
    CHECK(t && t->schema.root->n_children == 3);
    if (t && t->schema.root->n_children == 3) {
        CHECK(!strcmp(col_text(t, 0, &txt), "v:DOUBLE"));
        CHECK(!strcmp(col_text(t, 1, &txt), "w:DOUBLE!"));
        CHECK(!strcmp(col_text(t, 2, &txt), "z:DOUBLE"));
        for (int i = 1; i <= 3; i++)
            CHECK(t->meta.schema[i].type == PQ_DOUBLE && t->meta.schema[i].converted_type == PQ_CT_NONE &&
                  !t->meta.schema[i].has_logical);
        CHECK_EQ_INT(pq_node_widen(fa->schema.root->children[0], t->schema.root->children[0]), PQ_WIDEN_U32_F64);
        CHECK_EQ_INT(pq_node_widen(fa->schema.root->children[1], t->schema.root->children[1]), PQ_WIDEN_I64_F64);
        CHECK_EQ_INT(pq_node_widen(fb->schema.root->children[2], t->schema.root->children[2]), PQ_WIDEN_I32_F64);
        CHECK_EQ_INT(pq_node_widen(fa->schema.root->children[2], t->schema.root->children[2]), PQ_WIDEN_F32_F64);
    }
    pq_footer_free(t);
    pq_footer_free(fa);
    pq_footer_free(fb);
    pq_buf_free(&txt);
}

/* A table format's type set on a column (pq_schema_union_set_type): a
 * Delta `timestamp` in INT96 is INT64 TIMESTAMP(MICROS, UTC) in the
 * elements a Parquet output writes; a type the files' does not widen to,
 * a nested column or an unknown name is refused. */
static void test_set_type(void)
{
    const char *a[] = {"id:i64!", "ts:i96", "s:str"};
    pq_footer *fa = footer_of(a, 3);
    pq_node *ts_node = fa->schema.root->children[1];
    ts_node->logical.utc = true; /* as pq_tf_apply_types makes it */
    pq_node us = ts(PQ_UNIT_MICROS, true), ns = ts(PQ_UNIT_NANOS, true);
    us.converted = PQ_CT_TIMESTAMP_MICROS; /* the elements get the node's own */
    pq_error err;
    pq_schema_union *u;
    CHECK(pq_schema_union_new(false, &u, &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, fa, "a.parquet", &err) == PQ_OK);
    CHECK(pq_schema_union_set_type(u, "ts", &ns, &err) == PQ_ERR && err.cls == PQ_E_USAGE);
    CHECK(pq_schema_union_set_type(u, "s", &us, &err) == PQ_ERR);
    CHECK(pq_schema_union_set_type(u, "nope", &us, &err) == PQ_ERR && strstr(err.msg, "nope"));
    CHECK(pq_schema_union_set_type(u, "ts", &us, &err) == PQ_OK);
    pq_footer *t = NULL;
    CHECK(pq_schema_union_finish(u, &t, &err) == PQ_OK);
    pq_schema_union_free(u);
    pq_buf txt;
    pq_buf_init(&txt);
    CHECK(t && t->schema.root->n_children == 3);
    if (t && t->schema.root->n_children == 3) {
        CHECK(!strcmp(col_text(t, 0, &txt), "id:INT64!"));
        CHECK(!strcmp(col_text(t, 1, &txt), "ts:TIMESTAMP(MICROS,UTC)"));
        CHECK(!strcmp(col_text(t, 2, &txt), "s:STRING"));
        const pq_schema_element *e = &t->meta.schema[2];
        CHECK(e->type == PQ_INT64 && e->has_logical && e->logical.kind == PQ_LT_TIMESTAMP && e->logical.utc &&
              e->logical.unit == PQ_UNIT_MICROS && e->converted_type == PQ_CT_TIMESTAMP_MICROS);
        CHECK_EQ_INT(pq_node_widen(ts_node, t->schema.root->children[1]), PQ_WIDEN_INT96_MICROS);
    }
    pq_footer_free(t);
    pq_footer_free(fa);
    pq_buf_free(&txt);
}

/* The union of files of one schema is that schema whatever their writer
 * named its root (DuckDB "duckdb_schema", Spark "spark_schema"; a union's
 * root is "schema"): else a table's union pass forgets its statistics
 * verdicts (pqtool table_union, lake_view_query_complete) and every footer
 * is read twice. */
static void test_identical_whatever_the_root(void)
{
    const char *cols[] = {"id:i64", "s:str"};
    const char *req[] = {"id:i64!", "s:str"};
    pq_footer *f = footer_named("duckdb_schema", cols, 2), *g = footer_named("spark_schema", req, 2);
    pq_error err;
    pq_schema_union *u;
    pq_footer *t = NULL;
    CHECK(pq_schema_union_new(false, &u, &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, f, "a.parquet", &err) == PQ_OK);
    CHECK(pq_schema_union_add(u, f, "b.parquet", &err) == PQ_OK);
    CHECK(pq_schema_union_finish(u, &t, &err) == PQ_OK);
    pq_schema_union_free(u);
    CHECK(t && pq_schema_identical(&t->schema, &f->schema));
    CHECK(t && !pq_schema_identical(&t->schema, &g->schema)); /* id's nullability differs */
    pq_footer_free(t);
    pq_footer_free(f);
    pq_footer_free(g);
}

int main(void)
{
    test_identical_whatever_the_root();
    test_union_types();
    test_union_of_footers();
    test_set_type();
    return check_report();
}
