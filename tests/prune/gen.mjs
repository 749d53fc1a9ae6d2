// Deterministic test data for the pruning tests: node tests/prune/gen.mjs OUTDIR
//
// Writers: DuckDB (@duckdb/node-api) and arrow-rs (parquet-wasm, reading
// DuckDB's output and rewriting it with its own WriterProperties).  Bloom
// filters on PLAIN columns are added by lib.mjs (arrow-rs through parquet-wasm
// 0.8 cannot write them), checked first against the corpus's
// bloom_filter.xxhash.bin.  Every file's shape (row groups, encodings, page
// index, bloom filters, statistics) is checked here; a writer that changes
// behaviour fails the generation instead of silently weakening a test.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Buffer } from 'node:buffer';
import * as L from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const { openDuckDB, queryRows, sqlString, closeDuckDB } = await import(path.join(root, 'tools/js/duckdb.mjs'));
const pw = await import(path.join(root, 'tools/js/node_modules/parquet-wasm/node/parquet_wasm.js'));
const corpus = path.join(process.env.PQFS_SHARED_DIR || path.resolve(root, '..', 'shared'), 'testdata', 'parquet-testing', 'data');

const out = process.argv[2];
if (!out) {
  console.error('usage: gen.mjs OUTDIR');
  process.exit(2);
}
fs.mkdirSync(out, { recursive: true });
const tmp = fs.mkdtempSync(path.join(out, '.tmp-'));
const db = await openDuckDB({ threads: 1 });
const { conn } = db;

function check(cond, what) {
  if (!cond) throw new Error(`gen: ${what}`);
}

async function duck(name, select, opts = '') {
  const f = path.join(out, name);
  await conn.run(`COPY (${select}) TO ${sqlString(f)} (FORMAT parquet${opts ? ', ' + opts : ''})`);
  return f;
}

/** Writes `select` with DuckDB, then rewrites it with arrow-rs and `props`. */
async function arrow(name, select, build) {
  const base = path.join(tmp, name);
  await conn.run(`COPY (${select}) TO ${sqlString(base)} (FORMAT parquet)`);
  const table = pw.readParquet(fs.readFileSync(base));
  const props = build(new pw.WriterPropertiesBuilder()).build();
  const bytes = Buffer.from(pw.writeParquet(table, props));
  const f = path.join(out, name);
  fs.writeFileSync(f, bytes);
  return f;
}

async function meta(f) {
  return queryRows(conn, `SELECT * FROM parquet_metadata(${sqlString(f)}) ORDER BY row_group_id, column_id`);
}
async function rowGroups(f) {
  const r = await queryRows(conn, `SELECT count(DISTINCT row_group_id) n FROM parquet_metadata(${sqlString(f)})`);
  return Number(r[0].n);
}

// ---------------------------------------------------------------- self-check of the bloom code
{
  const ref = fs.readFileSync(path.join(corpus, 'bloom_filter.xxhash.bin'));
  const bits = Buffer.alloc(1024);
  for (const s of ['hello', 'parquet', 'bloom', 'filter']) L.bloomInsert(bits, L.xxh64(Buffer.from(s)));
  check(L.bloomBlob(bits).equals(ref), 'lib.mjs bloom filter differs from bloom_filter.xxhash.bin');
  check(L.xxh64(Buffer.from('abc')) === 0x44bc2cf5ad770999n, 'lib.mjs XXH64 test vector');
}

// ---------------------------------------------------------------- sorted: 100 row groups of 1000 rows
// id ascending; arrow-rs writes a page index (one page per chunk here).
{
  const f = await arrow('sorted.parquet',
    `SELECT i::BIGINT AS id, 'row-' || lpad(i::VARCHAR, 6, '0') AS label FROM range(100000) t(i) ORDER BY i`,
    (b) => b.setMaxRowGroupSize(1000).setCompression(pw.Compression.SNAPPY));
  check(await rowGroups(f) === 100, 'sorted.parquet: expected 100 row groups');
}

// ---------------------------------------------------------------- pages: small pages with a page index
// 2 row groups of 10000 rows; pages of ~128 rows (write batch 128, 1 KiB page limit).
{
  const f = await arrow('pages.parquet',
    `SELECT i::BIGINT AS id, ((i * 37) % 1000)::INTEGER AS v,
            'str-' || lpad(((i * 7919) % 10000)::VARCHAR, 5, '0') AS s
       FROM range(20000) t(i) ORDER BY i`,
    (b) => b.setMaxRowGroupSize(10000).setDataPageSizeLimit(1024).setWriteBatchSize(128)
      .setDictionaryEnabled(false).setCompression(pw.Compression.UNCOMPRESSED));
  check(await rowGroups(f) === 2, 'pages.parquet: expected 2 row groups');
}

// ---------------------------------------------------------------- bloom: PLAIN chunks with bloom filters
// 10 row groups of 2000 rows, no dictionary, so only the bloom rung can prove
// an absent key absent: k and s are high-cardinality and every row group's
// min/max spans the probes.  Present in every row group: k = 777777777,
// s = 'key-12345'.  d holds -0.0 (row group 3) and a NaN with the sign bit
// set (row group 5): SQL equality (d = 0, d = 'nan') matches them although
// their PLAIN bytes differ from +0.0 and the canonical NaN.
const BLOOM_RG = 2000;
{
  const select = `
    SELECT i::BIGINT AS id,
           CASE WHEN i % ${BLOOM_RG} = 777 THEN 777777777 ELSE (i * 2654435761) % 4294967291 END::BIGINT AS k,
           CASE WHEN i % ${BLOOM_RG} = 1234 THEN 'key-12345'
                ELSE 'key-' || lpad(((i * 40503) % 65521)::VARCHAR, 5, '0') END AS s,
           CASE WHEN i = 3 * ${BLOOM_RG} + 100 THEN -0.0::DOUBLE
                WHEN i = 5 * ${BLOOM_RG} + 200 THEN 'inf'::DOUBLE - 'inf'::DOUBLE
                ELSE ((i * 48271) % 2147483647) / 1000.0 - 1000000.5 END AS d
      FROM range(${10 * BLOOM_RG}) t(i) ORDER BY i`;
  const plainFile = await arrow('bloom_nofilter.parquet', select,
    (b) => b.setMaxRowGroupSize(BLOOM_RG).setDictionaryEnabled(false).setCompression(pw.Compression.UNCOMPRESSED));
  const rows = await queryRows(conn, `SELECT k, s, d, signbit(d) AS neg, isnan(d) AS nan
                                         FROM read_parquet(${sqlString(plainFile)}, file_row_number = true)
                                        ORDER BY file_row_number`);
  check(rows.length === 10 * BLOOM_RG, 'bloom: row count');
  const plain = {
    k: (r) => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(r.k)); return b; },
    s: (r) => Buffer.from(r.s, 'utf8'),
    d: (r) => {
      const b = Buffer.alloc(8);
      if (r.nan) b.writeBigUInt64LE(r.neg ? 0xfff8000000000000n : 0x7ff8000000000000n);
      else b.writeDoubleLE(r.d);
      return b;
    },
  };
  const file = fs.readFileSync(plainFile);
  // The NaN's bytes as written: the test relies on them being the sign-bit NaN.
  check(file.includes(Buffer.from('000000000000f8ff', 'hex')), 'bloom: the NaN with the sign bit is not in the file');
  check(file.includes(Buffer.from('0000000000000080', 'hex')), 'bloom: -0.0 is not in the file');
  const patched = L.addBloomFilters(file, (g, col) => {
    if (!plain[col]) return null;
    return rows.slice(g * BLOOM_RG, (g + 1) * BLOOM_RG).map(plain[col]);
  });
  const f = path.join(out, 'bloom.parquet');
  fs.writeFileSync(f, patched);
  fs.unlinkSync(plainFile);
  const m = await meta(f);
  check(m.length === 40, 'bloom.parquet: 10 row groups x 4 columns');
  for (const c of m) {
    check(!/DICTIONARY/.test(c.encodings), `bloom.parquet: ${c.path_in_schema} must be PLAIN (${c.encodings})`);
    check((c.bloom_filter_offset !== null) === ['k', 's', 'd'].includes(c.path_in_schema),
      `bloom.parquet: bloom filter on ${c.path_in_schema}`);
  }
  // The probes must be absent and inside every row group's bounds.
  const probe = await queryRows(conn, `SELECT count(*) FILTER (k = 2000000000) a, count(*) FILTER (s = 'key-3000') b,
      count(*) FILTER (k = 777777777) c, count(*) FILTER (s = 'key-12345') e FROM ${sqlString(f)}`);
  check(Number(probe[0].a) === 0 && Number(probe[0].b) === 0, 'bloom: probes must be absent');
  check(Number(probe[0].c) === 10 && Number(probe[0].e) === 10, 'bloom: present keys once per row group');
  for (const c of m.filter((x) => x.path_in_schema === 'k'))
    check(BigInt(c.stats_min_value) < 2000000000n && BigInt(c.stats_max_value) > 2000000000n, 'bloom: k bounds span the probe');
  for (const c of m.filter((x) => x.path_in_schema === 's'))
    check(c.stats_min_value < 'key-3000' && c.stats_max_value > 'key-3000', 'bloom: s bounds span the probe');
}

// ---------------------------------------------------------------- dictionary rung
// c: even numbers 0..98, every value in every row group (so min/max = 0/98
// everywhere); fruit: 20 names, never 'mango' (which sorts between them).
const FRUITS = ['apple', 'banana', 'cherry', 'date', 'elderberry', 'fig', 'grape', 'honeydew', 'kiwi', 'lemon',
  'lime', 'nectarine', 'orange', 'papaya', 'peach', 'pear', 'plum', 'quince', 'raspberry', 'strawberry'];
const dictSelect = (n) => `
  SELECT i::BIGINT AS id, (((i * 7) % 50) * 2)::INTEGER AS c,
         list_extract(${'[' + FRUITS.map(sqlString).join(', ') + ']'}, ((i * 3) % 20)::INTEGER + 1) AS fruit,
         list_extract([-1.5::DOUBLE, -0.0::DOUBLE, 2.5::DOUBLE, 'inf'::DOUBLE - 'inf'::DOUBLE, 7.25::DOUBLE],
                      (i % 5)::INTEGER + 1) AS dz,
         (((i * 13) % 40) * 1.25)::DECIMAL(9, 2) AS amt,
         DATE '2024-01-01' + (((i * 7) % 30) * 2)::INTEGER AS day,
         TIMESTAMP '2024-01-01 00:00:00' + to_minutes((((i * 7) % 30) * 2)::BIGINT) AS ts,
         (((i * 11) % 30) * 0.5)::FLOAT AS f,
         (((i * 5) % 40) * 2 - 40)::TINYINT AS t,
         (18446744073709551615::UBIGINT - (((i * 3) % 30) * 2)::UBIGINT) AS u
    FROM range(${n}) t(i) ORDER BY i`;
// Typed columns (amt, day, ts, f, t, u): even steps, so odd steps between
// the bounds are absent (run.mjs TYPED_PROBES).
{
  // arrow-rs: dictionary, no bloom filter.
  const f = await arrow('dict.parquet', dictSelect(20000),
    (b) => b.setMaxRowGroupSize(2000).setCompression(pw.Compression.SNAPPY));
  const m = await meta(f);
  check(await rowGroups(f) === 10, 'dict.parquet: 10 row groups');
  for (const c of m) {
    check(c.bloom_filter_offset === null, 'dict.parquet: no bloom filters');
    if (c.path_in_schema !== 'id') check(/DICTIONARY/.test(c.encodings), `dict.parquet: ${c.path_in_schema} dictionary`);
    if (c.path_in_schema === 'c') check(c.stats_min_value === '0' && c.stats_max_value === '98', 'dict.parquet: c bounds');
  }
  // DuckDB: dictionary and bloom filters on the same columns (row groups of 2048).
  const g = await duck('dict_bloom.parquet', dictSelect(20480), 'ROW_GROUP_SIZE 2048');
  check(await rowGroups(g) === 10, 'dict_bloom.parquet: 10 row groups');
  for (const c of await meta(g))
    if (c.path_in_schema !== 'id')
      check(/DICTIONARY/.test(c.encodings) && c.bloom_filter_offset !== null, `dict_bloom.parquet: ${c.path_in_schema}`);
}

// Dictionary fallback: arrow-rs gives up the dictionary when it passes 256
// bytes, so later pages are PLAIN and hold values the dictionary lacks.  The
// dictionary rung must see that (encoding_stats) and keep the row group.
{
  const f = await arrow('dict_fallback.parquet',
    `SELECT i::BIGINT AS id, ((i * 7919) % 5000)::BIGINT AS v,
            'k' || lpad(((i * 7919) % 5000)::VARCHAR, 5, '0') AS s
       FROM range(5000) t(i) ORDER BY i`,
    (b) => b.setMaxRowGroupSize(5000).setDictionaryPageSizeLimit(256).setDataPageSizeLimit(512)
      .setWriteBatchSize(64).setCompression(pw.Compression.SNAPPY));
  for (const c of await meta(f))
    if (c.path_in_schema !== 'id')
      check(/DICTIONARY/.test(c.encodings) && /PLAIN(,|$)/.test(c.encodings),
        `dict_fallback.parquet: ${c.path_in_schema} should mix dictionary and PLAIN pages (${c.encodings})`);
}

// ---------------------------------------------------------------- untrusted statistics
// NaN, zeros, infinities and NULLs by row group (2048 rows each): 0 plain
// values, 1 some NaN, 2 all NaN, 3 -0.0/+0.0, 4 infinities and NULLs.
{
  const select = `
    WITH t AS (SELECT i, i // 2048 AS g, i % 2048 AS r FROM range(5 * 2048) t(i))
    SELECT i::BIGINT AS id,
      CASE WHEN g = 0 THEN r / 4.0 - 100
           WHEN g = 1 THEN CASE WHEN r % 7 = 0 THEN 'nan'::DOUBLE ELSE r / 8.0 END
           WHEN g = 2 THEN CASE WHEN r % 2 = 0 THEN 'nan'::DOUBLE ELSE 'inf'::DOUBLE - 'inf'::DOUBLE END
           WHEN g = 3 THEN CASE WHEN r % 3 = 0 THEN -0.0::DOUBLE WHEN r % 3 = 1 THEN 0.0 ELSE r END
           ELSE CASE WHEN r % 4 = 0 THEN 'inf'::DOUBLE WHEN r % 4 = 1 THEN '-inf'::DOUBLE
                     WHEN r % 4 = 2 THEN NULL ELSE r - 1000 END END::DOUBLE AS d,
      CASE WHEN g = 0 THEN r / 4.0 - 100
           WHEN g = 1 THEN CASE WHEN r % 7 = 0 THEN 'nan'::FLOAT ELSE r / 8.0 END
           WHEN g = 2 THEN 'nan'::FLOAT
           WHEN g = 3 THEN CASE WHEN r % 3 = 0 THEN -0.0::FLOAT WHEN r % 3 = 1 THEN 0.0 ELSE r END
           ELSE CASE WHEN r % 4 = 0 THEN 'inf'::FLOAT WHEN r % 4 = 1 THEN '-inf'::FLOAT
                     WHEN r % 4 = 2 THEN NULL ELSE r - 1000 END END::FLOAT AS f
    FROM t ORDER BY i`;
  const a = await duck('nan.parquet', select, 'ROW_GROUP_SIZE 2048');
  check(await rowGroups(a) === 5, 'nan.parquet: 5 row groups');
  const b = await arrow('nan_rs.parquet', select, (p) => p.setMaxRowGroupSize(2048));
  check(await rowGroups(b) === 5, 'nan_rs.parquet: 5 row groups');
}
// Long strings: arrow-rs truncates min/max (and the column index) to 64 bytes.
{
  const select = `
    WITH t AS (SELECT i, i // 500 AS g, i % 500 AS r FROM range(2000) t(i))
    SELECT i::BIGINT AS id,
      CASE WHEN r = 13 THEN NULL
           WHEN g = 0 THEN repeat('a', 70) || lpad(r::VARCHAR, 3, '0')
           WHEN g = 1 THEN repeat('é', 40) || lpad(r::VARCHAR, 3, '0')
           WHEN g = 2 THEN repeat('z', 63) || chr(1114111) || lpad(r::VARCHAR, 3, '0')
           ELSE CASE WHEN r % 2 = 0 THEN 'short' || r::VARCHAR ELSE repeat('m', 64) || lpad(r::VARCHAR, 3, '0') END
      END AS s,
      CASE WHEN r = 17 THEN NULL
           WHEN g = 0 THEN ('\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF\\xFF'
                            || repeat('\\xFF', 60) || lpad(r::VARCHAR, 3, '0'))::BLOB
           ELSE (repeat('q', 66) || lpad(r::VARCHAR, 3, '0'))::BLOB END AS b
    FROM t ORDER BY i`;
  const f = await arrow('long_strings.parquet', select, (p) => p.setMaxRowGroupSize(500));
  const m = await meta(f);
  check(m.some((c) => c.path_in_schema === 's' && c.min_is_exact === false), 'long_strings.parquet: truncated min');
  check(m.some((c) => c.path_in_schema === 's' && c.max_is_exact === false), 'long_strings.parquet: truncated max');
}
// Unsigned integers above the signed range (DuckDB and arrow-rs).
{
  const select = `
    WITH t AS (SELECT i, i // 2048 AS g, i % 2048 AS r FROM range(3 * 2048) t(i))
    SELECT i::BIGINT AS id,
      CASE WHEN g = 0 THEN r % 100 WHEN g = 1 THEN 128 + r % 128 ELSE CASE WHEN r % 3 = 0 THEN NULL ELSE (r * 5) % 256 END END::UTINYINT AS u8,
      CASE WHEN g = 0 THEN r WHEN g = 1 THEN 32768 + r * 3 ELSE CASE WHEN r % 3 = 0 THEN NULL ELSE (r * 33) % 65536 END END::USMALLINT AS u16,
      CASE WHEN g = 0 THEN r WHEN g = 1 THEN 2147483648 + r * 1000 ELSE CASE WHEN r % 3 = 0 THEN NULL ELSE (r * 2097143) % 4294967296 END END::UINTEGER AS u32,
      CASE WHEN g = 0 THEN r::UBIGINT
           WHEN g = 1 THEN 9223372036854775808::UBIGINT + r::UBIGINT * 1000
           ELSE CASE WHEN r % 3 = 0 THEN NULL WHEN r % 3 = 1 THEN 18446744073709551615::UBIGINT - r::UBIGINT
                     ELSE r::UBIGINT END END AS u64
    FROM t ORDER BY i`;
  const a = await duck('unsigned.parquet', select, 'ROW_GROUP_SIZE 2048');
  check(await rowGroups(a) === 3, 'unsigned.parquet: 3 row groups');
  const b = await arrow('unsigned_rs.parquet', select, (p) => p.setMaxRowGroupSize(2048));
  check(await rowGroups(b) === 3, 'unsigned_rs.parquet: 3 row groups');
}

// ---------------------------------------------------------------- limit: first rows of big pages
// One row group of 120000 rows: DuckDB writes one page per chunk, arrow-rs
// pages of up to 20000 rows; either way far above 64 KiB, so --limit decodes
// only the start of a page (and fetches only the start of each chunk) with
// the streaming codecs, and whole pages with snappy.  Nullable, dictionary,
// PLAIN strings, booleans, decimals, timestamps.
{
  const select = `
    SELECT i::BIGINT AS id, (i * 0.37)::DOUBLE AS d, (i % 1000 * 0.5)::FLOAT AS f,
           'name-' || (i * 7919 % 100003)::VARCHAR || repeat('x', (i % 13)::INTEGER) AS s,
           ['red', 'green', 'blue', 'cyan'][(i % 4)::INTEGER + 1] AS cat,
           (i % 3 = 0) AS b,
           CASE WHEN i % 3 = 1 THEN NULL ELSE (i * 31 % 1000)::INTEGER END AS n,
           (i * 1.25)::DECIMAL(12, 2) AS amt,
           TIMESTAMP '2024-01-01' + to_seconds(i::BIGINT) AS ts,
           CASE WHEN i % 5 = 0 THEN NULL ELSE 'v' || (i % 50)::VARCHAR END AS ns
      FROM range(120000) t(i) ORDER BY i`;
  for (const codec of ['zstd', 'gzip', 'lz4_raw', 'snappy']) {
    const f = await duck(`limit_${codec}.parquet`, select, `COMPRESSION ${codec}, ROW_GROUP_SIZE 120000`);
    check(await rowGroups(f) === 1, `limit_${codec}.parquet: one row group`);
  }
  for (const [name, codec] of [['zstd', pw.Compression.ZSTD], ['gzip', pw.Compression.GZIP], ['lz4_raw', pw.Compression.LZ4_RAW]]) {
    const f = await arrow(`limit_rs_${name}.parquet`, select, (b) => b.setMaxRowGroupSize(120000).setCompression(codec));
    check(await rowGroups(f) === 1, `limit_rs_${name}.parquet: one row group`);
  }
  // Without dictionaries and with 256 KiB pages (several per chunk, each far
  // above 64 KiB): a limit fetches through the offset index only the start of
  // the page that holds its last row.
  for (const [name, codec] of [['zstd', pw.Compression.ZSTD], ['gzip', pw.Compression.GZIP]]) {
    const f = await arrow(`limit_rs_plain_${name}.parquet`, select, (b) => b.setMaxRowGroupSize(120000)
      .setCompression(codec).setDictionaryEnabled(false).setDataPageSizeLimit(256 * 1024));
    check(await rowGroups(f) === 1, `limit_rs_plain_${name}.parquet: one row group`);
  }
}

fs.rmSync(tmp, { recursive: true, force: true });
closeDuckDB(db);
fs.writeFileSync(path.join(out, 'STAMP'), `${new Date(0).toISOString()}\n`);
console.log(`gen.mjs: wrote ${fs.readdirSync(out).filter((x) => x.endsWith('.parquet')).length} files to ${out}`);
