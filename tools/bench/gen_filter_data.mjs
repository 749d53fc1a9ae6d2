#!/usr/bin/env node
// Writes the filter benchmark's lake with DuckDB (and, with --arrow, a copy
// rewritten by arrow-rs through parquet-wasm), deterministically.
//
//   node tools/bench/gen_filter_data.mjs OUTDIR [ROWS] [--files-per-day N] [--days N] [--no-arrow]
//
// ROWS: 20,000,000 by default. Layout (Hive partitions, zstd, ROW_GROUP_SIZE
// 122880, rows in id order within every file):
//   OUTDIR/events/dt=YYYY-MM-DD/part-K.parquet        DuckDB's COPY, one per file
//   OUTDIR/events_arrow/dt=YYYY-MM-DD/part-K.parquet  the same rows rewritten by
//                                                     arrow-rs: page index (page
//                                                     statistics), pages of <= 20000 rows
//   OUTDIR/manifest.json                               row counts and the constants of
//                                                     the benchmark's queries
//
// Columns (NULL: about 10% of the rows, independently, in country, amount
// and duration_ms; none elsewhere):
//   id          BIGINT         1..ROWS, increasing with ts (ranges cluster)
//   ts          TIMESTAMP      2024-01-01 + id * (DAYS days / ROWS), increasing
//   user_id     BIGINT         hash % 10,000,000 + 1: high cardinality, scattered;
//                              too many distinct values per row group for DuckDB's
//                              dictionary, so PLAIN without a bloom filter
//   session     VARCHAR        's' + 16 hex digits, 16 consecutive rows per session:
//                              ~7,700 distinct per row group, so DuckDB
//                              dictionary-encodes it and writes a bloom filter
//   country     VARCHAR        25 codes; 'NZ' in ~1% of the rows, scattered
//   event       VARCHAR        6 values; 'view' in ~50%
//   score       DOUBLE         uniform in [0, 1), full precision
//   amount      DECIMAL(12,2)  0.01..9999.99
//   duration_ms DOUBLE         0.001..60000 ms, 3 decimals
//   dt          DATE           partition column: ts's day (DAYS = 16 days)
import fs from 'node:fs';
import path from 'node:path';
import { Buffer } from 'node:buffer';
import { openDuckDB, queryRows, sqlString, closeDuckDB, repoRoot } from '../js/duckdb.mjs';

function usage(msg) {
  if (msg) console.error(`gen_filter_data: ${msg}`);
  console.error('usage: node tools/bench/gen_filter_data.mjs OUTDIR [ROWS] [--days N] [--files-per-day N] [--no-arrow]');
  process.exit(2);
}

let out;
let rows = 20_000_000;
let days = 16;
let filesPerDay = 2;
let arrow = true;
{
  const args = process.argv.slice(2);
  let positional = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = () => { if (i + 1 >= args.length) usage(`${a} needs a value`); return args[++i]; };
    if (a === '--days') days = Number(val());
    else if (a === '--files-per-day') filesPerDay = Number(val());
    else if (a === '--no-arrow') arrow = false;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (positional === 0) { out = a; positional++; }
    else if (positional === 1) { rows = Number(a.replaceAll('_', '')); positional++; }
    else usage(`unexpected argument ${a}`);
  }
}
if (!out) usage('OUTDIR is required');
if (!Number.isInteger(rows) || rows < 1000) usage('ROWS must be an integer >= 1000');
if (!Number.isInteger(days) || days < 1 || days > 365) usage('--days must be 1..365');
if (!Number.isInteger(filesPerDay) || filesPerDay < 1) usage('--files-per-day must be >= 1');

const RG = 122880;
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'CA', 'IT', 'ES', 'MX', 'KR', 'NL', 'SE',
  'PL', 'AU', 'TR', 'AR', 'CH', 'BE', 'AT', 'NO', 'DK', 'FI']; // + 'NZ' at ~1%
const EVENTS = ['view', 'view', 'view', 'view', 'view', 'view', 'click', 'click', 'click',
  'scroll', 'add_to_cart', 'purchase']; // view 50%, click 25%, three at ~8%
const SPAN_US = BigInt(days) * 86_400_000_000n;

const outDir = path.resolve(out);
const duckTable = path.join(outDir, 'events');
const arrowTable = path.join(outDir, 'events_arrow');
fs.mkdirSync(outDir, { recursive: true });
const tmpDir = fs.mkdtempSync(path.join(outDir, '.tmp-'));

const t0 = process.hrtime.bigint();
const secs = () => (Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1);
// One thread: the same bytes on every run.
const db = await openDuckDB({ threads: 1, preserve_insertion_order: true });
const { conn } = db;
try {
  await conn.run(`CREATE MACRO h(i, salt) AS hash(i::BIGINT * 1000003 + salt)`);
  await conn.run(`CREATE MACRO u(i, salt) AS (h(i, salt) % 1000000007)::DOUBLE / 1000000007`);
  await conn.run(`CREATE MACRO nul(i, salt, v) AS CASE WHEN u(i, salt) < 0.1 THEN NULL ELSE v END`);
  // i = id - 1. ts grows with i in whole microseconds; dt is its day.
  const select = `
    SELECT
      (i + 1)::BIGINT AS id,
      TIMESTAMP '2024-01-01' + to_microseconds((i::HUGEINT * ${SPAN_US} // ${rows})::BIGINT) AS ts,
      ((h(i, 1) % 10000000) + 1)::BIGINT AS user_id,
      's' || lpad(to_hex(h(i // 16, 2)), 16, '0') AS session,
      nul(i, 3, CASE WHEN u(i, 4) < 0.0111 THEN 'NZ'
                     ELSE [${COUNTRIES.map(sqlString).join(', ')}][1 + (h(i, 5) % ${COUNTRIES.length})::INTEGER] END) AS country,
      [${EVENTS.map(sqlString).join(', ')}][1 + (h(i, 6) % ${EVENTS.length})::INTEGER] AS event,
      u(i, 7) AS score,
      nul(i, 8, ((1 + (h(i, 9) % 999999)) / 100)::DECIMAL(12,2)) AS amount,
      nul(i, 10, (1 + (h(i, 11) % 60000000))::DOUBLE / 1000) AS duration_ms,
      (TIMESTAMP '2024-01-01' + to_microseconds((i::HUGEINT * ${SPAN_US} // ${rows})::BIGINT))::DATE AS dt
    FROM range(${rows}) r(i)
    ORDER BY i`;
  // filesPerDay files per partition: file k of a day holds the k-th
  // 1/filesPerDay of its time span, a contiguous range of ids, written by a
  // COPY of its own. Not COPY ... PARTITION_BY (dt): even with one thread and
  // ORDER BY, DuckDB 1.5's partitioned writer flushes leftover rows into a
  // last row group that overlaps the others (tried: every file ended with a
  // row group spanning ids from its middle), and it cannot rotate files.
  const duckTmp = path.join(tmpDir, 'events');
  const slices = await queryRows(conn, `
    SELECT day, k, min(i) AS lo, max(i) AS hi FROM (
      SELECT i, (i::HUGEINT * ${SPAN_US} // ${rows}) // 86400000000 AS day,
             ((i::HUGEINT * ${SPAN_US} // ${rows}) % 86400000000) * ${filesPerDay} // 86400000000 AS k
      FROM range(${rows}) r(i))
    GROUP BY day, k ORDER BY lo`);
  for (const sl of slices) {
    const dt = new Date(Date.UTC(2024, 0, 1) + Number(sl.day) * 86_400_000).toISOString().slice(0, 10);
    const f = path.join(duckTmp, `dt=${dt}`, `part-${sl.k}.parquet`);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    await conn.run(`
      COPY (SELECT * EXCLUDE (dt) FROM (${select.replace(`FROM range(${rows}) r(i)`, `FROM range(${sl.lo}, ${sl.hi + 1n}) r(i)`)}))
      TO ${sqlString(f)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${RG})`);
  }
  fs.rmSync(duckTable, { recursive: true, force: true });
  fs.renameSync(duckTmp, duckTable);
  console.log(`gen_filter_data: DuckDB wrote ${duckTable} (${secs()} s)`);

  const files = listParquet(duckTable);
  const glob = sqlString(path.join(duckTable, '**', '*.parquet'));
  const [m] = await queryRows(conn, `
    SELECT count(DISTINCT file_name) AS files, count(DISTINCT (file_name, row_group_id)) AS row_groups,
           sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS rows,
           max(row_group_num_rows) AS max_rg_rows
    FROM parquet_metadata(${glob})`);
  if (Number(m.rows) !== rows) throw new Error(`gen_filter_data: wrote ${m.rows} rows, expected ${rows}`);
  // Sortedness: within every file, row group id ranges must increase.
  const [unsorted] = await queryRows(conn, `
    SELECT count(*) AS n FROM (
      SELECT file_name, row_group_id, stats_min_value::BIGINT AS lo, stats_max_value::BIGINT AS hi,
             lag(stats_max_value::BIGINT) OVER (PARTITION BY file_name ORDER BY row_group_id) AS prev_hi
      FROM parquet_metadata(${glob}) WHERE path_in_schema = 'id')
    WHERE prev_hi IS NOT NULL AND lo <= prev_hi`);
  if (Number(unsorted.n) !== 0) throw new Error('gen_filter_data: rows are not in id order within the files');

  // What DuckDB's writer put into the files, per column.
  const cols = await queryRows(conn, `
    SELECT path_in_schema AS col, any_value(type) AS type, string_agg(DISTINCT encodings, ' / ') AS encodings,
           sum(total_compressed_size) AS bytes, count(bloom_filter_offset) AS blooms, count(*) AS chunks,
           count(stats_min_value) AS with_stats
    FROM parquet_metadata(${glob}) GROUP BY path_in_schema, column_id ORDER BY column_id`);
  const size = files.reduce((s, f) => s + fs.statSync(f).size, 0);
  console.log(`  ${files.length} files in ${days} partitions, ${m.row_groups} row groups (max ${m.max_rg_rows} rows), ` +
    `${rows} rows, ${(size / 1e6).toFixed(1)} MB`);
  for (const c of cols) {
    console.log(`  ${c.col.padEnd(12)} ${c.type.padEnd(11)} ${(Number(c.bytes) / 1e6).toFixed(1).padStart(7)} MB  ` +
      `stats ${c.with_stats}/${c.chunks}  bloom ${c.blooms}/${c.chunks}  ${c.encodings}`);
  }
  console.log('  page index: none (DuckDB does not write ColumnIndex/OffsetIndex; see `pqtool meta`)');

  // Query constants, from the data itself.
  const at = (frac) => Math.floor(rows * frac);
  const rangeRows = Math.max(1, Math.round(rows / 1000));
  const rangeLo = at(0.37) + 1;
  const [k] = await queryRows(conn, `
    SELECT (SELECT user_id FROM (${select}) WHERE id = ${at(0.61) + 1}) AS user_id,
           (SELECT session FROM (${select}) WHERE id = ${at(0.23) + 1}) AS session`);
  const probe = await queryRows(conn, `
    SELECT count(*) FILTER (WHERE NOT bloom_filter_excludes) AS maybe, count(*) AS n
    FROM parquet_bloom_probe(${glob}, 'session', ${sqlString(k.session)})`);
  console.log(`  bloom probe session = '${k.session}': ${probe[0].maybe} of ${probe[0].n} row groups may match`);

  const manifest = {
    rows, days, files: files.length, row_groups: Number(m.row_groups), row_group_size: RG,
    tables: { events: 'DuckDB ' + (await queryRows(conn, 'SELECT version() AS v'))[0].v },
    range: { lo: rangeLo, hi: rangeLo + rangeRows - 1 },
    user_id: Number(k.user_id),
    session: k.session,
    country: 'NZ',
    score_lt: 0.5,
  };

  if (arrow) {
    const pw = await import(path.join(repoRoot, 'tools/js/node_modules/parquet-wasm/node/parquet_wasm.js'));
    const arrowTmp = path.join(tmpDir, 'events_arrow');
    for (const f of files) {
      const rel = path.relative(duckTable, f);
      const dst = path.join(arrowTmp, rel);
      fs.mkdirSync(path.dirname(dst), { recursive: true });
      const table = pw.readParquet(fs.readFileSync(f));
      // (each builder call consumes the builder and returns a new one)
      let b = new pw.WriterPropertiesBuilder()
        .setCompression(pw.Compression.ZSTD)
        .setMaxRowGroupSize(RG)
        .setStatisticsEnabled(pw.EnabledStatistics.Page)
        .setCreatedBy('parquet-wasm 0.8 (arrow-rs) via gen_filter_data.mjs');
      // A dictionary only where DuckDB has one: arrow-rs would otherwise keep
      // one of every value of the unique columns (it falls back past 1 MiB).
      for (const c of ['id', 'ts', 'user_id', 'score', 'amount', 'duration_ms']) b = b.setColumnDictionaryEnabled(c, false);
      const props = b.build();
      fs.writeFileSync(dst, Buffer.from(pw.writeParquet(table, props)));
    }
    fs.rmSync(arrowTable, { recursive: true, force: true });
    fs.renameSync(arrowTmp, arrowTable);
    const aglob = sqlString(path.join(arrowTable, '**', '*.parquet'));
    const [am] = await queryRows(conn, `
      SELECT count(DISTINCT (file_name, row_group_id)) AS row_groups,
             sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS rows, count(bloom_filter_offset) AS blooms
      FROM parquet_metadata(${aglob})`);
    if (Number(am.rows) !== rows) throw new Error(`gen_filter_data: arrow copy has ${am.rows} rows, expected ${rows}`);
    const asize = listParquet(arrowTable).reduce((s, f) => s + fs.statSync(f).size, 0);
    console.log(`gen_filter_data: arrow-rs rewrote ${arrowTable} (${secs()} s): ${am.row_groups} row groups, ` +
      `${(asize / 1e6).toFixed(1)} MB, page index on every column, bloom filters ${am.blooms} ` +
      '(parquet-wasm 0.8 cannot write them)');
    manifest.tables.events_arrow = 'arrow-rs (parquet-wasm 0.8), page statistics';
  }
  fs.writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  console.log(`gen_filter_data: ${path.join(outDir, 'manifest.json')}; done in ${secs()} s`);
} finally {
  closeDuckDB(db);
  fs.rmSync(tmpDir, { recursive: true, force: true });
}

function listParquet(dir) {
  const outFiles = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.parquet')) outFiles.push(path.join(e.parentPath ?? e.path, e.name));
  }
  return outFiles.sort();
}
