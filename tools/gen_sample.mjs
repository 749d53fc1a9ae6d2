#!/usr/bin/env node
// Writes the small demo lake (a few MB) with DuckDB, deterministically:
//
//   node tools/gen_sample.mjs OUTDIR [--force] [--rows-per-day N]
//
//   OUTDIR/events/dt=2024-01-01/part-0.parquet   (dt=2024-01-01..03, snappy)
//       id BIGINT, ts TIMESTAMP, user_id INTEGER, country VARCHAR,
//       amount DECIMAL(12,2), score DOUBLE (~10% NULL), tags VARCHAR[]
//       rows sorted by ts within a day; row groups of 20,480 rows
//   OUTDIR/users/part-0.parquet, part-1.parquet        (zstd)
//       user_id INTEGER, name VARCHAR, signup DATE, plan VARCHAR
//
// The lake is written to a temporary sibling directory and renamed into
// place, so OUTDIR either does not exist or is complete. An existing OUTDIR
// is an error unless --force (then it is replaced). The same DuckDB version
// writes byte-identical files on every run (one thread; values come from
// hash(), not random()).
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, queryRows, sqlString, closeDuckDB } from './js/duckdb.mjs';

function usage(msg) {
  if (msg) console.error(`gen_sample: ${msg}`);
  console.error('usage: node tools/gen_sample.mjs OUTDIR [--force] [--rows-per-day N]');
  process.exit(2);
}

let outDir;
let force = false;
let rowsPerDay = 60000;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--force') force = true;
  else if (a === '--rows-per-day') rowsPerDay = Number(args[++i]);
  else if (a === '-h' || a === '--help') usage();
  else if (a.startsWith('-')) usage(`unknown option ${a}`);
  else if (outDir === undefined) outDir = a;
  else usage(`unexpected argument ${a}`);
}
if (!outDir) usage('OUTDIR is required');
if (!Number.isInteger(rowsPerDay) || rowsPerDay < 1) usage('--rows-per-day must be a positive integer');

outDir = path.resolve(outDir);
if (fs.existsSync(outDir) && !force) {
  console.error(`gen_sample: ${outDir} exists (use --force to replace it)`);
  process.exit(1);
}
const tmpDir = `${outDir}.tmp-${process.pid}`;
fs.rmSync(tmpDir, { recursive: true, force: true });
fs.mkdirSync(path.join(tmpDir, 'users'), { recursive: true });

const DAYS = ['2024-01-01', '2024-01-02', '2024-01-03'];
const USERS = 5000;
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'CA', 'NL', 'SE', 'ES', 'IT'];
const TAGS = ['new', 'promo', 'mobile', 'web', 'repeat', 'gift'];
const FIRST = ['Ada', 'Alan', 'Barbara', 'Claude', 'Dennis', 'Edsger', 'Frances', 'Grace', 'Hedy',
  'Ivan', 'John', 'Ken', 'Linus', 'Margaret', 'Niklaus', 'Radia', 'Rob', 'Sophie', 'Tim', 'Yukihiro'];
const LAST = ['Lovelace', 'Turing', 'Liskov', 'Shannon', 'Ritchie', 'Dijkstra', 'Allen', 'Hopper',
  'Lamarr', 'Sutherland', 'McCarthy', 'Thompson', 'Torvalds', 'Hamilton', 'Wirth', 'Perlman',
  'Pike', 'Wilson', 'Berners-Lee', 'Matsumoto', "O'Neil", 'Nuñez'];
const list = (xs) => `[${xs.map(sqlString).join(', ')}]`;

const db = await openDuckDB({ threads: 1 });
const { conn } = db;
try {
  // u(i, salt): a uniform value in [0, 1) that depends only on (i, salt).
  await conn.run(`CREATE MACRO u(i, salt) AS
      (hash(i::BIGINT * 1000003 + salt) % 1000000007)::DOUBLE / 1000000007`);

  const n = rowsPerDay * DAYS.length;
  await conn.run(`
    CREATE TABLE events AS
    WITH g AS (
      SELECT i,
             (DATE ${sqlString(DAYS[0])} + (i // ${rowsPerDay})::INTEGER) AS dt,
             i % ${rowsPerDay} AS k
      FROM range(${n}) r(i)
    )
    SELECT
      (i + 1)::BIGINT AS id,
      dt::TIMESTAMP + to_microseconds(((k + u(i, 1)) * (86400000000 / ${rowsPerDay}))::BIGINT) AS ts,
      (1 + floor(pow(u(i, 2), 2) * ${USERS}))::INTEGER AS user_id,
      CASE WHEN u(i, 3) < 0.01 THEN NULL
           ELSE ${list(COUNTRIES)}[1 + floor(pow(u(i, 4), 1.5) * ${COUNTRIES.length})::INTEGER] END AS country,
      ((CASE WHEN u(i, 5) < 0.02 THEN -1 ELSE 1 END)
        * (0.5 + pow(u(i, 6), 3) * 2000))::DECIMAL(12,2) AS amount,
      CASE WHEN u(i, 7) < 0.10 THEN NULL ELSE u(i, 8) * 100 END AS score,
      CASE WHEN u(i, 9) < 0.05 THEN NULL
           ELSE list_filter(${list(TAGS)}, lambda t, j: u(i, 100 + j) < 0.2) END AS tags,
      dt
    FROM g
    ORDER BY i`);

  await conn.run(`
    CREATE TABLE users AS
    SELECT
      i::INTEGER AS user_id,
      ${list(FIRST)}[1 + floor(u(i, 11) * ${FIRST.length})::INTEGER] || ' ' ||
        ${list(LAST)}[1 + floor(u(i, 12) * ${LAST.length})::INTEGER] AS name,
      DATE '2020-01-01' + floor(u(i, 13) * 1460)::INTEGER AS signup,
      ['free', 'free', 'free', 'pro', 'pro', 'team'][1 + floor(u(i, 14) * 6)::INTEGER] AS plan
    FROM range(1, ${USERS + 1}) r(i)
    ORDER BY i`);

  await conn.run(`
    COPY (FROM events ORDER BY id) TO ${sqlString(path.join(tmpDir, 'events'))}
    (FORMAT parquet, PARTITION_BY (dt), COMPRESSION snappy, ROW_GROUP_SIZE 20480,
     FILENAME_PATTERN 'part-{i}')`);
  const half = USERS / 2;
  await conn.run(`COPY (FROM users WHERE user_id <= ${half} ORDER BY user_id)
    TO ${sqlString(path.join(tmpDir, 'users', 'part-0.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
  await conn.run(`COPY (FROM users WHERE user_id > ${half} ORDER BY user_id)
    TO ${sqlString(path.join(tmpDir, 'users', 'part-1.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);

  if (force) fs.rmSync(outDir, { recursive: true, force: true });
  fs.renameSync(tmpDir, outDir);

  const files = await queryRows(conn, `
    SELECT file_name AS file, max(row_group_num_rows) AS max_rg_rows,
           count(DISTINCT row_group_id) AS row_groups, sum(total_compressed_size) AS bytes
    FROM parquet_metadata(${sqlString(path.join(outDir, '**', '*.parquet'))})
    GROUP BY file_name ORDER BY file_name`);
  const [{ rows: evRows }] = await queryRows(conn,
    `SELECT count(*) AS rows FROM read_parquet(${sqlString(path.join(outDir, 'events', '*', '*.parquet'))}, hive_partitioning = true)`);
  const [{ rows: usRows }] = await queryRows(conn,
    `SELECT count(*) AS rows FROM ${sqlString(path.join(outDir, 'users', '*.parquet'))}`);
  let total = 0;
  for (const f of files) {
    const size = fs.statSync(f.file).size;
    total += size;
    console.log(`${path.relative(process.cwd(), f.file).padEnd(50)} ${String(f.row_groups).padStart(3)} row groups ${String(size).padStart(9)} bytes`);
  }
  console.log(`gen_sample: ${outDir}: events ${evRows} rows, users ${usRows} rows, ${(total / 1e6).toFixed(1)} MB`);
} catch (e) {
  fs.rmSync(tmpDir, { recursive: true, force: true });
  throw e;
} finally {
  closeDuckDB(db);
}
