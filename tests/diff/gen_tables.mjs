#!/usr/bin/env node
// Differential test data: deterministic Parquet tables written by DuckDB and
// by arrow-rs (parquet-wasm), and a descriptor of them for the predicate
// generator.
//
//   node tests/diff/gen_tables.mjs OUTDIR
//
// OUTDIR (replaced) receives:
//   duck_sorted.parquet    DuckDB, rows in id order (id, i64, d, ts, dec18 and s_low
//                          follow the row order, so statistics and dictionaries prune),
//                          ROW_GROUP_SIZE 2048, snappy, bloom filters (DuckDB writes
//                          them for dictionary-encoded columns)
//   duck_unsorted.parquet  DuckDB, a random permutation, ROW_GROUP_SIZE 4096,
//                          PARQUET_VERSION V2 (delta encodings, v2 pages), zstd
//   arrow_dict.parquet     arrow-rs, sorted by s, dictionary on, page statistics and a
//                          page index, small data pages, 1500-row row groups
//   arrow_plain.parquet    arrow-rs, sorted by f64 (NaN, ±inf, ±0.0 at page edges),
//                          dictionary off, v2 pages (delta encodings for byte arrays),
//                          uncompressed, pages of ~512 bytes, 2500-row row groups;
//                          f32 has chunk statistics only, dec9 none
//   arrow_zstd.parquet     as arrow_plain but in id order and zstd-compressed
//   hive/                  DuckDB part files under pi=INT/pd=DATE/ps=STRING
//                          (negative int, 10 vs 9 vs 100, percent-encoded strings,
//                          __HIVE_DEFAULT_PARTITION__ at each level, two files in some
//                          directories: part-10 sorts before part-9), plus files pqfs
//                          must ignore (_SUCCESS, .hidden, a zero-byte .parquet)
//   tables.json            the descriptor: columns and types, the files of each
//                          table in table order (SPEC section 3), sample values,
//                          min/max per column
//
// Data values come from a seeded PRNG (mulberry32), DuckDB runs with one
// thread, so the same versions write the same bytes on every run.
//
// Columns (all nullable, ~10% NULL unless said):
//   id BIGINT (never NULL, unique) · i32 INTEGER (incl. ±2^31 bounds) · i64 BIGINT
//   f64 DOUBLE (NaN, -0.0, +0.0, ±inf, denormal, max) · f32 FLOAT (NaN, ±inf, -0.0)
//   b BOOLEAN · s VARCHAR ('', shared prefixes, multi-byte UTF-8, quotes, comma,
//   newline, % and _) · s_low VARCHAR (12 values, clustered) · d DATE
//   ts TIMESTAMP (µs) · tstz TIMESTAMPTZ (UTC-adjusted) · dec9 DECIMAL(9,2) (int32)
//   dec18 DECIMAL(18,4) (int64) · dec30 DECIMAL(30,5) (fixed_len_byte_array)
//   "odd col" INTEGER (a name that needs quoting; values clustered for bloom filters)
//   nulls INTEGER (always NULL)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRng, duckdbHelpers, parquetWasm, quoteString } from './lib.mjs';

export const COLUMNS = [
  { name: 'id', type: 'int64', sql: 'BIGINT' },
  { name: 'i32', type: 'int32', sql: 'INTEGER' },
  { name: 'i64', type: 'int64', sql: 'BIGINT' },
  { name: 'f64', type: 'double', sql: 'DOUBLE' },
  { name: 'f32', type: 'float', sql: 'FLOAT' },
  { name: 'b', type: 'bool', sql: 'BOOLEAN' },
  { name: 's', type: 'string', sql: 'VARCHAR' },
  { name: 's_low', type: 'string', sql: 'VARCHAR' },
  { name: 'd', type: 'date', sql: 'DATE' },
  { name: 'ts', type: 'timestamp', sql: 'TIMESTAMP' },
  { name: 'tstz', type: 'timestamptz', sql: 'TIMESTAMPTZ' },
  { name: 'dec9', type: 'decimal', sql: 'DECIMAL(9,2)', precision: 9, scale: 2 },
  { name: 'dec18', type: 'decimal', sql: 'DECIMAL(18,4)', precision: 18, scale: 4 },
  { name: 'dec30', type: 'decimal', sql: 'DECIMAL(30,5)', precision: 30, scale: 5 },
  { name: 'odd col', type: 'int32', sql: 'INTEGER' },
  { name: 'nulls', type: 'int32', sql: 'INTEGER' },
];

const LOW = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa',
  'lambda', 'mu'];
// Strings with shared prefixes, multi-byte UTF-8 and characters CSV must quote.
export const VOCAB = ['', 'a', 'ab', 'abc', 'abcd', 'abd', 'abe', 'abc ', 'b', 'B', 'Z', 'zz', 'émile',
  'éa', 'é', 'e', '日本', '日本語', 'ü', 'a_b', 'a%b', 'axb', "it's", 'x,y', 'say "hi"',
  'line1\nline2', ' lead', 'ab\u00a0c', '\u{1F600}smile', 'abcdefghijklmnopqrstuvwxyz'];
const ALPHA = ['a', 'b', 'c', 'd', 'é', '日', 'Z'];

const DAY_MS = 86400000;
const pad = (n, w = 2) => String(n).padStart(w, '0');

function dateText(days) {
  const t = new Date(days * DAY_MS);
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
}
const dayOf = (text) => Math.round(Date.parse(`${text}T00:00:00Z`) / DAY_MS);

/** 'YYYY-MM-DD HH:MM:SS.ffffff' from microseconds since the epoch. */
function tsText(us) {
  const ms = Math.floor(us / 1000);
  const frac = us - ms * 1000;
  const t = new Date(ms);
  return `${dateText(Math.floor(ms / DAY_MS))} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:` +
    `${pad(t.getUTCSeconds())}.${pad(t.getUTCMilliseconds(), 3)}${pad(frac, 3)}`;
}

/** A decimal text with `scale` digits from an unscaled BigInt. */
function decText(unscaled, scale) {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

/** n rows of values as text (null = NULL), in id order. */
export function makeRows(n, seed) {
  const rng = makeRng(seed);
  const rows = [];
  const nul = (p = 0.1) => rng.chance(p);
  const base = dayOf('2022-06-01');
  for (let i = 0; i < n; i++) {
    const r = {};
    r.id = String(i);
    // Extreme values only in the first quarter of the rows, so that in id
    // order the later row groups have tight statistics.
    const early = i < n / 4;
    r.i32 = nul() ? null : early && rng.chance(0.05)
      ? rng.pick(['0', '1', '-1', '2147483647', '-2147483648', '100000', '-100000'])
      : String(rng.int(-100000, 100000));
    r.i64 = nul() ? null : String(i * 1000003 - 6000000000 + rng.int(0, 999999));
    if (nul()) r.f64 = null;
    else if (rng.chance(0.1)) {
      r.f64 = rng.pick(['nan', 'nan', 'nan', '-0.0', '-0.0', '0.0', '0.0', 'inf', '-inf', '5e-324',
        '1.7976931348623157e308', '-1e-300']);
    } else if (rng.chance(0.2)) r.f64 = String(rng.int(-50, 50));
    else r.f64 = (rng.int(-1000000, 1000000) / 100).toFixed(2);
    if (nul()) r.f32 = null;
    else if (rng.chance(0.08)) r.f32 = rng.pick(['nan', 'inf', '-inf', '-0.0', '0.0', '3.4028235e38']);
    else if (rng.chance(0.5)) r.f32 = String(rng.int(-4000, 4000) / 4);
    else r.f32 = String(rng.int(-10000, 10000) / 10);
    r.b = nul() ? null : rng.chance(0.5) ? 'true' : 'false';
    if (nul()) r.s = null;
    else if (rng.chance(0.45)) r.s = rng.pick(VOCAB);
    else {
      const len = rng.int(0, 5);
      let s = '';
      for (let k = 0; k < len; k++) s += rng.pick(ALPHA);
      r.s = s;
    }
    // Clustered: in id order a row group holds 1-3 of the 12 values (noise in the last quarter only).
    r.s_low = nul(0.05) ? null : LOW[(Math.floor(i * 12 / n) + (i > n * 0.75 && rng.chance(0.04) ? rng.int(1, 11) : 0)) % 12];
    const dd = base + Math.floor(i * 1500 / n) + rng.int(-3, 3);
    r.d = nul() ? null : early && rng.chance(0.03)
      ? rng.pick(['1969-12-31', '1970-01-01', '1900-01-01', '2999-12-31']) : dateText(dd);
    const tus = (base * DAY_MS + Math.floor(i * 1500 * DAY_MS / n)) * 1000 + rng.int(-2 * DAY_MS, 2 * DAY_MS) * 1000 +
      (rng.chance(0.3) ? 0 : rng.int(0, 999));
    r.ts = nul() ? null : early && rng.chance(0.03)
      ? rng.pick(['1969-12-31 23:59:59.999999', '1970-01-01 00:00:00.000000', '1900-01-01 12:00:00.000000'])
      : tsText(rng.chance(0.2) ? Math.floor(tus / 3600e6) * 3600e6 : tus);
    const zus = (base * DAY_MS + rng.int(0, 1500) * DAY_MS + rng.int(0, DAY_MS - 1)) * 1000 + rng.int(0, 999);
    r.tstz = nul() ? null : `${tsText(rng.chance(0.2) ? Math.floor(zus / 60e6) * 60e6 : zus)}+00`;
    r.dec9 = nul() ? null : early && rng.chance(0.03)
      ? rng.pick(['9999999.99', '-9999999.99', '0.00', '0.01'])
      : decText(BigInt(rng.int(-8000, 8000) * 25), 2);
    r.dec18 = nul() ? null : decText(BigInt(i) * 123456n - 500000000n + BigInt(rng.int(0, 99999)), 4);
    if (nul()) r.dec30 = null;
    else {
      const len = rng.int(1, 25);
      let digits = String(rng.int(1, 9));
      for (let k = 1; k < len; k++) digits += String(rng.int(0, 9));
      let u = BigInt(digits) * 100000n + BigInt(rng.int(0, 99999));
      if (rng.chance(0.4)) u = -u;
      if (rng.chance(0.02)) u = rng.pick([0n, 10n ** 30n - 1n, -(10n ** 30n - 1n)]);
      r.dec30 = decText(u, 5);
    }
    // Many distinct values over a wide range, but in id order each eighth of the
    // rows draws from its own 300: min/max cannot prune an equality, the
    // dictionary and the bloom filter can.
    r['odd col'] = nul() ? null : String(((Math.floor(i * 8 / n) * 300 + rng.int(0, 299)) * 7919) % 1000003);
    r.nulls = null;
    r._perm = rng.next();
    rows.push(r);
  }
  return rows;
}

const colList = COLUMNS.map((c) => `"${c.name}"`).join(', ');

/** Loads rows into a new DuckDB table: a CSV of texts (NULL unquoted and
 * empty, strings quoted) read as VARCHAR and cast by the INSERT. Much faster
 * than INSERT ... VALUES. */
async function loadRows(conn, table, rows, csvFile, extra = []) {
  const all = [...COLUMNS, ...extra];
  await conn.run(`CREATE TABLE ${table} (${all.map((c) => `"${c.name}" ${c.sql}`).join(', ')})`);
  const field = (v) => (v === null ? '' : `"${String(v).replaceAll('"', '""')}"`);
  fs.writeFileSync(csvFile, rows.map((r) => all.map((c) => field(r[c.name])).join(',')).join('\n') + '\n');
  const spec = all.map((c) => `${quoteString(c.name)}: 'VARCHAR'`).join(', ');
  await conn.run(`INSERT INTO ${table} SELECT * FROM read_csv(${quoteString(csvFile)}, header = false,
    columns = {${spec}}, quote = '"', escape = '"', allow_quoted_nulls = false, parallel = false)`);
  fs.rmSync(csvFile);
}

/** Writes an arrow-rs file from a DuckDB query (DuckDB → Parquet → Arrow → Parquet). */
async function writeArrow(conn, query, tmpFile, outFile, configure) {
  const pw = parquetWasm();
  await conn.run(`COPY (${query}) TO ${quoteString(tmpFile)} (FORMAT parquet, ROW_GROUP_SIZE 1000000)`);
  const table = pw.readParquet(new Uint8Array(fs.readFileSync(tmpFile)));
  const props = configure(new pw.WriterPropertiesBuilder(), pw).setCreatedBy('parquet-rs (pqfs diff test)').build();
  fs.writeFileSync(outFile, pw.writeParquet(table, props));
  fs.rmSync(tmpFile);
}

// Hive partitions: (pi, pd, ps) and how many part files each directory gets.
// Values are written percent-encoded where needed; null is __HIVE_DEFAULT_PARTITION__.
const HIVE_DIRS = [
  [3, '2024-01-01', 'a', 1], [3, '2024-01-01', 'b c', 2], [3, '2024-01-02', 'a', 1],
  [9, '2024-01-01', 'x/y', 1], [10, '2024-01-01', 'a', 2], [10, '2024-01-03', 'é', 1],
  [-1, '2024-01-02', 'a', 1], [null, '2024-01-01', 'a', 1], [null, null, null, 1],
  [0, null, 'b c', 1], [9, '2024-01-02', null, 2], [100, '2023-12-31', 'abc', 1],
  [100, '2023-12-31', 'abd', 1], [3, '2024-01-02', "it's", 1], [3, '2024-01-02', '100%', 1],
];
const HIVE_NULL = '__HIVE_DEFAULT_PARTITION__';
const encodePart = (v) => (v === null ? HIVE_NULL : encodeURIComponent(String(v)).replaceAll("'", '%27'));
const bytewise = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function columnStats(conn, source, columns) {
  const out = { min: {}, max: {}, rows: 0 };
  const parts = columns.map((c) => `min("${c.name}")::VARCHAR, max("${c.name}")::VARCHAR`);
  const reader = await conn.runAndReadAll(`SELECT count(*)::VARCHAR, ${parts.join(', ')} FROM ${source}`);
  const row = reader.getRows()[0];
  out.rows = Number(row[0]);
  columns.forEach((c, k) => {
    out.min[c.name] = row[1 + 2 * k];
    out.max[c.name] = row[2 + 2 * k];
  });
  return out;
}

/** Up to k distinct non-null values of each column, drawn from rows. */
function samplesOf(rows, columns, rng, k = 40) {
  const out = {};
  for (const c of columns) {
    const vals = [...new Set(rows.map((r) => r[c.name]).filter((v) => v !== null))];
    vals.sort();
    out[c.name] = rng.sample(vals, k);
  }
  return out;
}

export async function generateTables(outDir, { rows = 12000, hiveRows = 6000, seed = 20240601 } = {}) {
  outDir = path.resolve(outDir);
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const { openDuckDB, closeDuckDB } = await duckdbHelpers();
  const db = await openDuckDB({ threads: 1 });
  const { conn } = db;
  const tables = [];
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    const data = makeRows(rows, seed);
    await loadRows(conn, 'base', data, path.join(outDir, 'tmp_base.csv'), [{ name: '_perm', sql: 'DOUBLE' }]);
    const rng = makeRng(seed + 1);
    const samples = samplesOf(data, COLUMNS, rng);
    const fileTable = async (name) => {
      const file = `${name}.parquet`;
      const src = tableSource(outDir, { kind: 'file', files: [file] });
      const st = await columnStats(conn, src, COLUMNS);
      tables.push({ name, kind: 'file', path: file, files: [file], columns: COLUMNS, samples, ...st });
    };

    await conn.run(`COPY (SELECT ${colList} FROM base ORDER BY id) TO ${quoteString(path.join(outDir, 'duck_sorted.parquet'))}
      (FORMAT parquet, ROW_GROUP_SIZE 2048, COMPRESSION snappy)`);
    await fileTable('duck_sorted');

    await conn.run(`COPY (SELECT ${colList} FROM base ORDER BY _perm) TO ${quoteString(path.join(outDir, 'duck_unsorted.parquet'))}
      (FORMAT parquet, ROW_GROUP_SIZE 4096, COMPRESSION zstd, PARQUET_VERSION V2)`);
    await fileTable('duck_unsorted');

    await writeArrow(conn, `SELECT ${colList} FROM base ORDER BY s NULLS FIRST, id`,
      path.join(outDir, 'tmp_dict.parquet'), path.join(outDir, 'arrow_dict.parquet'),
      (b, pw) => b.setMaxRowGroupSize(1500).setDataPageSizeLimit(1024).setWriteBatchSize(64)
        .setStatisticsEnabled(pw.EnabledStatistics.Page).setDictionaryEnabled(true)
        .setColumnDictionaryEnabled('id', false).setCompression(pw.Compression.SNAPPY));
    await fileTable('arrow_dict');

    const plainProps = (compression) => (b, pw) => b.setMaxRowGroupSize(2500).setDataPageSizeLimit(512)
      .setWriteBatchSize(32).setStatisticsEnabled(pw.EnabledStatistics.Page).setDictionaryEnabled(false)
      .setColumnStatisticsEnabled('f32', pw.EnabledStatistics.Chunk)
      .setColumnStatisticsEnabled('dec9', pw.EnabledStatistics.None)
      .setWriterVersion(pw.WriterVersion.V2).setCompression(pw.Compression[compression]);
    await writeArrow(conn, `SELECT ${colList} FROM base ORDER BY f64 NULLS FIRST, id`,
      path.join(outDir, 'tmp_plain.parquet'), path.join(outDir, 'arrow_plain.parquet'), plainProps('UNCOMPRESSED'));
    await fileTable('arrow_plain');

    // The same pages compressed: a batch of rows spans many decompressed pages
    // of byte arrays, whose buffers must all outlive the batch.
    await writeArrow(conn, `SELECT ${colList} FROM base ORDER BY id`,
      path.join(outDir, 'tmp_zstd.parquet'), path.join(outDir, 'arrow_zstd.parquet'), plainProps('ZSTD'));
    await fileTable('arrow_zstd');

    // The Hive table: its own rows, each assigned to a partition directory and part file.
    const hdata = makeRows(hiveRows, seed + 7);
    const hrng = makeRng(seed + 8);
    const slots = [];
    HIVE_DIRS.forEach(([pi, pd, ps, nfiles], di) => {
      for (let f = 0; f < nfiles; f++) slots.push({ di, pi, pd, ps, file: nfiles === 1 ? 'part-0.parquet' : ['part-9.parquet', 'part-10.parquet'][f] });
    });
    for (const r of hdata) r._slot = hrng.int(0, slots.length - 1);
    await loadRows(conn, 'hbase', hdata, path.join(outDir, 'tmp_hive.csv'), [{ name: '_perm', sql: 'DOUBLE' }, { name: '_slot', sql: 'INTEGER' }]);
    const hiveRoot = path.join(outDir, 'hive');
    const hiveFiles = [];
    for (let k = 0; k < slots.length; k++) {
      const sl = slots[k];
      const rel = path.posix.join('hive', `pi=${encodePart(sl.pi)}`, `pd=${encodePart(sl.pd)}`, `ps=${encodePart(sl.ps)}`, sl.file);
      fs.mkdirSync(path.dirname(path.join(outDir, rel)), { recursive: true });
      await conn.run(`COPY (SELECT ${colList} FROM hbase WHERE _slot = ${k} ORDER BY id) TO ${quoteString(path.join(outDir, rel))}
        (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
      hiveFiles.push(rel);
    }
    // Files the table walk must ignore.
    fs.writeFileSync(path.join(hiveRoot, '_SUCCESS'), '');
    fs.writeFileSync(path.join(hiveRoot, 'pi=3', 'pd=2024-01-01', 'ps=a', '.hidden.parquet'), 'not parquet');
    fs.writeFileSync(path.join(hiveRoot, 'pi=3', 'pd=2024-01-01', 'ps=a', '_tmp.parquet'), 'not parquet');
    fs.writeFileSync(path.join(hiveRoot, 'pi=3', 'pd=2024-01-01', 'ps=a', 'zero.parquet'), '');
    // Table order (SPEC section 3): partition directories level by level in
    // bytewise order of their (encoded) names, then files in name order.
    hiveFiles.sort((a, b) => {
      const pa = a.split('/'), pb = b.split('/');
      for (let k = 0; k < pa.length; k++) {
        const c = bytewise(pa[k], pb[k]);
        if (c) return c;
      }
      return 0;
    });
    const partCols = [
      { name: 'pi', type: 'int64', sql: 'BIGINT', partition: true },
      { name: 'pd', type: 'date', sql: 'DATE', partition: true },
      { name: 'ps', type: 'string', sql: 'VARCHAR', partition: true },
    ];
    const hcols = [...COLUMNS, ...partCols];
    const hsamples = samplesOf(hdata, COLUMNS, makeRng(seed + 9));
    const uniq = (xs) => [...new Set(xs.filter((x) => x !== null).map(String))];
    hsamples.pi = uniq(HIVE_DIRS.map((h) => h[0])).concat(['4', '-2']);
    hsamples.pd = uniq(HIVE_DIRS.map((h) => h[1])).concat(['2024-01-04']);
    hsamples.ps = uniq(HIVE_DIRS.map((h) => h[2])).concat(['b', 'x']);
    const hsrc = tableSource(outDir, { kind: 'hive', files: hiveFiles });
    const hst = await columnStats(conn, hsrc, hcols);
    tables.push({ name: 'hive', kind: 'hive', path: 'hive', files: hiveFiles, columns: hcols, samples: hsamples, ...hst });
  } finally {
    closeDuckDB(db);
  }
  const desc = { seed, tables };
  fs.writeFileSync(path.join(outDir, 'tables.json'), JSON.stringify(desc, null, 1));
  return desc;
}

/** DuckDB's FROM clause for a table of the descriptor. With `ordered`, two
 * more columns give each row's place in table order: __file (the position of
 * its file in the table's file list) and file_row_number. */
export function tableSource(outDir, t, { ordered = false } = {}) {
  const list = `[${t.files.map((f) => quoteString(path.join(outDir, f))).join(', ')}]`;
  const hive = t.kind === 'hive' ? `, hive_partitioning = true, hive_types = {'pi': BIGINT, 'pd': DATE, 'ps': VARCHAR}` : '';
  if (!ordered) return `read_parquet(${list}${hive})`;
  return `(SELECT *, list_position(${list}, filename) AS __file FROM read_parquet(${list}${hive}, ` +
    `filename = true, file_row_number = true))`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node tests/diff/gen_tables.mjs OUTDIR');
    process.exit(2);
  }
  const t0 = Date.now();
  const desc = await generateTables(out);
  for (const t of desc.tables) console.log(`${t.name}: ${t.rows} rows, ${t.files.length} file(s)`);
  console.log(`gen_tables: ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}
