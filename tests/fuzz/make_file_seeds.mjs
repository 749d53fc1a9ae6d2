// Writes the small Parquet files of corpus/fuzz_file/ (seeds for fuzz_file):
// features that parquet-testing's small files lack or hold only in large
// files.  DuckDB writes them; parquet-wasm (arrow-rs) rewrites some with a
// page index and many small pages.
//
//   node tests/fuzz/make_file_seeds.mjs    (after tools/setup-deps.sh)
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, closeDuckDB, repoRoot, sqlString } from '../../tools/js/duckdb.mjs';

const out = path.join(repoRoot, 'tests', 'fuzz', 'corpus', 'fuzz_file');
fs.mkdirSync(out, { recursive: true });
const require = createRequire(path.join(repoRoot, 'tools', 'js', 'package.json'));
const pw = require('parquet-wasm/node');

const db = await openDuckDB({ threads: 1 });
const flat = `SELECT i AS id,
    CASE WHEN i % 7 = 3 THEN NULL ELSE 'name' || (i % 5) END AS name,
    (i * 12.25)::DECIMAL(12,2) AS amount,
    DATE '2024-01-01' + i::INTEGER AS day,
    TIMESTAMP '2024-01-01 10:00:00' + to_seconds(i * 90) AS ts,
    i % 2 = 0 AS flag,
    CASE WHEN i % 11 = 0 THEN 'NaN'::DOUBLE ELSE i / 8 END AS f
  FROM range(60) t(i)`;
const files = [
  ['flat_rowgroups.parquet', flat, 'COMPRESSION uncompressed, ROW_GROUP_SIZE 20'],
  ['flat_v2_zstd.parquet', flat, 'COMPRESSION zstd, PARQUET_VERSION v2'],
  ['nested_snappy.parquet', `SELECT i AS id,
      CASE WHEN i % 4 = 0 THEN NULL ELSE [i, NULL, i + 1] END AS xs,
      {'a': i, 'b': CASE WHEN i % 3 = 0 THEN NULL ELSE 's' || i END} AS st,
      MAP {'k' || i: i} AS m,
      [[i], [], NULL] AS xss
    FROM range(12) t(i)`, 'COMPRESSION snappy'],
  ['strings_dict_gzip.parquet', `SELECT (i % 4)::VARCHAR AS cat, repeat('x', i % 9) AS pad,
      (i % 3)::UTINYINT AS small, i::HUGEINT * 1000000000000 AS huge, uuid() IS NULL AS never
    FROM range(40) t(i)`, 'COMPRESSION gzip'],
];
for (const [name, sql, opts] of files)
  await db.conn.run(`COPY (${sql}) TO ${sqlString(path.join(out, name))} (FORMAT parquet, ${opts})`);
closeDuckDB(db);

// arrow-rs rewrite: page statistics (column and offset indexes), tiny pages.
const table = pw.readParquet(fs.readFileSync(path.join(out, 'flat_rowgroups.parquet')));
const props = new pw.WriterPropertiesBuilder()
  .setStatisticsEnabled(pw.EnabledStatistics.Page)
  .setDataPageSizeLimit(64)
  .setWriteBatchSize(8)
  .setMaxRowGroupSize(30)
  .setCompression(pw.Compression.LZ4_RAW)
  .build();
fs.writeFileSync(path.join(out, 'page_index_lz4raw.parquet'), pw.writeParquet(table, props));
for (const f of fs.readdirSync(out)) console.log(f, fs.statSync(path.join(out, f)).size);
