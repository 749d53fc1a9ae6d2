#!/usr/bin/env node
// Writes the `pqtool cat` benchmark input with DuckDB, deterministically.
//
//   node tools/bench/gen_cat_data.mjs OUT.parquet [ROWS]     (ROWS: 2,000,000)
//
// Columns (NULL: about 10% of the rows, independently per column, except id
// and price):
//   id     BIGINT     1..ROWS, no NULLs
//   i32    INTEGER    uniform over the whole int32 range
//   i64    BIGINT     uniform over +-2^62
//   f64    DOUBLE     full-precision values (17 significant digits to print)
//   price  DOUBLE     cents, 0.01..9999.99 (short to print), no NULLs
//   ts     TIMESTAMP  microseconds within 2024
//   low    VARCHAR    20 distinct values (dictionary-encoded)
//   high   VARCHAR    'user_' || a 64-bit hash in hex (nearly all distinct)
// Snappy, ROW_GROUP_SIZE 122880, one thread: the same bytes on every run.
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, queryRows, sqlString, closeDuckDB } from '../js/duckdb.mjs';

const [out, rowsArg] = process.argv.slice(2);
if (!out || out.startsWith('-') || process.argv.length > 4) {
  console.error('usage: node tools/bench/gen_cat_data.mjs OUT.parquet [ROWS]');
  process.exit(2);
}
const rows = rowsArg === undefined ? 2_000_000 : Number(rowsArg.replaceAll('_', ''));
if (!Number.isInteger(rows) || rows < 1) {
  console.error(`gen_cat_data: bad ROWS: ${rowsArg}`);
  process.exit(2);
}

const LOW = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india',
  'juliett', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango'];

const outPath = path.resolve(out);
const tmpPath = `${outPath}.tmp-${process.pid}`;
fs.mkdirSync(path.dirname(outPath), { recursive: true });

const t0 = process.hrtime.bigint();
const db = await openDuckDB({ threads: 1 });
const { conn } = db;
try {
  await conn.run(`CREATE MACRO h(i, salt) AS hash(i::BIGINT * 1000003 + salt)`);
  await conn.run(`CREATE MACRO u(i, salt) AS (h(i, salt) % 1000000007)::DOUBLE / 1000000007`);
  // NULL in about 10% of the rows; a different set of rows per column.
  await conn.run(`CREATE MACRO nul(i, salt, v) AS CASE WHEN u(i, salt) < 0.1 THEN NULL ELSE v END`);
  await conn.run(`
    COPY (
      SELECT
        (i + 1)::BIGINT AS id,
        nul(i, 1, ((h(i, 2) % 4294967296)::BIGINT - 2147483648)::INTEGER) AS i32,
        nul(i, 3, ((h(i, 4) >> 1)::BIGINT - 4611686018427387904)) AS i64,
        nul(i, 5, (u(i, 6) - 0.5) * 2e6 + u(i, 7) / 3) AS f64,
        (1 + (h(i, 8) % 999999)::DOUBLE) / 100 AS price,
        nul(i, 9, TIMESTAMP '2024-01-01' + to_microseconds((h(i, 10) % 31622400000000)::BIGINT)) AS ts,
        nul(i, 11, [${LOW.map(sqlString).join(', ')}][1 + (h(i, 12) % ${LOW.length})::INTEGER]) AS low,
        nul(i, 13, 'user_' || lpad(to_hex(h(i, 14)), 16, '0')) AS high
      FROM range(${rows}) r(i)
      ORDER BY i
    ) TO ${sqlString(tmpPath)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 122880)`);
  fs.renameSync(tmpPath, outPath);

  const p = sqlString(outPath);
  const [meta] = await queryRows(conn, `
    SELECT count(DISTINCT row_group_id) AS row_groups, max(row_group_num_rows) AS max_rg_rows,
           sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS rows
    FROM parquet_metadata(${p})`);
  const cols = await queryRows(conn, `
    SELECT path_in_schema AS col, any_value(type) AS type, string_agg(DISTINCT encodings, ' / ') AS encodings,
           sum(total_compressed_size) AS bytes
    FROM parquet_metadata(${p}) GROUP BY path_in_schema, column_id ORDER BY column_id`);
  const size = fs.statSync(outPath).size;
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`gen_cat_data: ${outPath}: ${meta.rows} rows, ${meta.row_groups} row groups ` +
    `(max ${meta.max_rg_rows} rows), ${(size / 1e6).toFixed(1)} MB, ${secs.toFixed(1)} s`);
  for (const c of cols) {
    console.log(`  ${c.col.padEnd(6)} ${c.type.padEnd(10)} ${(Number(c.bytes) / 1e6).toFixed(1).padStart(6)} MB  ${c.encodings}`);
  }
} catch (e) {
  fs.rmSync(tmpPath, { force: true });
  throw e;
} finally {
  closeDuckDB(db);
}
