#!/usr/bin/env node
// Writes the lake the mount tests (tests/mount/run.sh, stress.sh) mount, with
// DuckDB, deterministically (one thread; values from hash(), not random()):
//
//   node tests/mount/gen_lake.mjs OUTDIR [--big-rows N] [--big-files K]
//
// OUTDIR/events/year=INT/dt=DATE/region=STRING/part-J.parquet
//     Hive partitions by int, date and string keys, including the NULL
//     partition region=__HIVE_DEFAULT_PARTITION__ and percent-encoded values
//     region=a%2Fb ('a/b') and region=us%20west ('us west'); 2-3 files per
//     partition, 3+ row groups per file (DuckDB cuts row groups at 2048 rows).
//     id BIGINT (increasing in table order), i32 INTEGER, d DOUBLE (NULL, nan,
//     inf, -0.0), s VARCHAR (commas, quotes, newlines, CR, empty, UTF-8),
//     ts TIMESTAMP (microseconds), tsz TIMESTAMPTZ, amount DECIMAL(12,2),
//     flag BOOLEAN, tags VARCHAR[] (NULL, [], NULL elements).
//     Also files the table must ignore: _SUCCESS, .part-0.parquet.crc,
//     _ignored.parquet, .hidden.parquet, a zero-byte zero.parquet, a file at
//     the wrong depth (year=2024/stray-0.parquet) and a plain directory
//     (no '=') holding a Parquet file.  Data files are all named part-*.parquet,
//     so the reference query reads TABLE/**/part-*.parquet.
// OUTDIR/users/part-0.parquet, part-1.parquet     (unpartitioned, zstd)
//     user_id INTEGER, name VARCHAR, signup DATE, plan VARCHAR, score FLOAT,
//     balance DECIMAL(18,4), address STRUCT(city VARCHAR, zip INTEGER),
//     nums INTEGER[]
// OUTDIR/codes/code=001|010|100/part-0.parquet    (a key whose inferred type
//     int64 loses the leading zeros; declared as string in an ini)
// OUTDIR/broken/k=1..5/part-0.parquet             (id BIGINT, v VARCHAR)
//     k=1, k=5 valid; k=2 a truncated copy (no footer); k=3 a valid footer
//     over garbage page headers; k=4 a file of another schema (id VARCHAR).
// OUTDIR/_staging/, OUTDIR/.trash/ (Parquet inside), OUTDIR/empty/k=1/notes.txt,
//     OUTDIR/README.txt: none of them a table.
// OUTDIR/big/part-NN.parquet  (only with --big-rows N > 0; K files, default 8)
//     id BIGINT, g INTEGER, d DOUBLE, s VARCHAR, ts TIMESTAMP; row groups of
//     16384 rows (the first bytes of a view come after the first row group).
//
// Writes into OUTDIR.tmp-PID and renames it to OUTDIR (which must not exist).
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, sqlString, closeDuckDB } from '../../tools/js/duckdb.mjs';

function usage(msg) {
  if (msg) console.error(`gen_lake: ${msg}`);
  console.error('usage: node tests/mount/gen_lake.mjs OUTDIR [--big-rows N] [--big-files K]');
  process.exit(2);
}

let outDir;
let bigRows = 0;
let bigFiles = 8;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--big-rows') bigRows = Number(args[++i]);
  else if (a === '--big-files') bigFiles = Number(args[++i]);
  else if (a.startsWith('-')) usage(`unknown option ${a}`);
  else if (outDir === undefined) outDir = a;
  else usage(`unexpected argument ${a}`);
}
if (!outDir) usage('OUTDIR is required');
if (!Number.isInteger(bigRows) || bigRows < 0) usage('--big-rows must be a count');
if (!Number.isInteger(bigFiles) || bigFiles < 1 || bigFiles > 99) usage('--big-files must be 1..99');
outDir = path.resolve(outDir);
if (fs.existsSync(outDir)) {
  console.error(`gen_lake: ${outDir} exists`);
  process.exit(1);
}
const tmp = `${outDir}.tmp-${process.pid}`;
fs.rmSync(tmp, { recursive: true, force: true });

const list = (xs) => `[${xs.map((x) => (x === null ? 'NULL' : sqlString(x))).join(', ')}]`;
const STRINGS = ['plain', 'with,comma', 'with "quotes"', 'two\nlines', 'mixed, "all"\nthree', '',
  'ñandú über', ' lead and trail ', "O'Neil", 'back\\slash', 'tab\there', 'cr\r\nlf', '%25 not decoded'];
const TAGS = ['new', 'promo', 'a,b', 'q"q', 'mobile'];

// Leaf partitions of `events`, in table order (bytewise order of the raw
// names, level by level), and the rows of each of their files.
const LEAVES = [
  ['year=2023', 'dt=2023-12-31', 'region=eu', [4500, 5200]],
  ['year=2023', 'dt=2023-12-31', 'region=us', [3000, 4700]],
  ['year=2024', 'dt=2024-01-01', 'region=__HIVE_DEFAULT_PARTITION__', [2500, 4400]],
  ['year=2024', 'dt=2024-01-01', 'region=a%2Fb', [4300, 2200]],
  ['year=2024', 'dt=2024-01-01', 'region=eu', [5000, 4100, 3300]],
  ['year=2024', 'dt=2024-01-01', 'region=us', [4800, 2600]],
  ['year=2024', 'dt=2024-01-02', 'region=__HIVE_DEFAULT_PARTITION__', [2100, 3900]],
  ['year=2024', 'dt=2024-01-02', 'region=eu', [4600, 5100]],
  ['year=2024', 'dt=2024-01-02', 'region=us%20west', [3500, 4200]],
];

const db = await openDuckDB({ threads: 1 });
const { conn } = db;
const copy = async (select, file, opts = '') => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await conn.run(`COPY (${select}) TO ${sqlString(file)} (FORMAT parquet${opts ? ', ' + opts : ''})`);
};
try {
  await conn.run(`SET TimeZone = 'UTC'`);
  await conn.run(`CREATE MACRO u(i, salt) AS
      (hash(i::BIGINT * 1000003 + salt) % 1000000007)::DOUBLE / 1000000007`);
  const pick = (xs, expr) => `${list(xs)}[1 + (floor(${expr} * ${xs.length})::INTEGER % ${xs.length})]`;

  // ---- events
  const eventsSelect = (first, n, dt) => `
    SELECT
      i::BIGINT AS id,
      CASE WHEN u(i, 1) < 0.05 THEN NULL ELSE floor(u(i, 2) * 100)::INTEGER END AS i32,
      CASE WHEN u(i, 3) < 0.10 THEN NULL
           WHEN i % 997 = 0 THEN 'nan'::DOUBLE
           WHEN i % 1009 = 0 THEN 'inf'::DOUBLE
           WHEN i % 1013 = 0 THEN '-inf'::DOUBLE
           WHEN i % 1019 = 0 THEN -0.0::DOUBLE
           WHEN i % 2 = 0 THEN round((u(i, 4) - 0.5) * 2000, 3)
           ELSE (u(i, 4) - 0.3) * 1e6 / 7 END AS d,
      CASE WHEN u(i, 5) < 0.08 THEN NULL
           WHEN i % 5 = 0 THEN 'u' || i
           ELSE ${pick(STRINGS, 'u(i, 6)')} END AS s,
      TIMESTAMP '${dt}' + to_microseconds(floor(u(i, 7) * 86400000000)::BIGINT
                          - CASE WHEN i % 3 = 0 THEN floor(u(i, 7) * 86400000000)::BIGINT % 1000000 ELSE 0 END) AS ts,
      (TIMESTAMP '${dt}' + to_seconds(floor(u(i, 11) * 86400)::BIGINT))::TIMESTAMPTZ AS tsz,
      CASE WHEN u(i, 8) < 0.05 THEN NULL ELSE ((u(i, 12) - 0.3) * 100000)::DECIMAL(12,2) END AS amount,
      CASE WHEN u(i, 9) < 0.03 THEN NULL ELSE u(i, 13) < 0.5 END AS flag,
      CASE WHEN u(i, 10) < 0.10 THEN NULL
           WHEN u(i, 10) < 0.18 THEN []::VARCHAR[]
           WHEN u(i, 10) < 0.22 THEN [${pick(TAGS, 'u(i, 14)')}, NULL]
           ELSE list_filter(${list(TAGS)}, lambda t, j: u(i, 100 + j) < 0.4) END AS tags
    FROM range(${first}, ${first + n}) r(i)
    ORDER BY i`;
  let next = 1;
  for (const [year, dt, region, files] of LEAVES) {
    for (const [j, n] of files.entries()) {
      const file = path.join(tmp, 'events', year, dt, region, `part-${j}.parquet`);
      await copy(eventsSelect(next, n, dt.slice(3)), file, 'ROW_GROUP_SIZE 2048');
      next += n;
    }
  }
  // What discovery must ignore (SPEC section 2).
  const leaf0 = path.join(tmp, 'events', ...LEAVES[0].slice(0, 3));
  const decoy = eventsSelect(900000, 10, '2023-12-31');
  fs.writeFileSync(path.join(leaf0, '_SUCCESS'), '');
  fs.writeFileSync(path.join(leaf0, '.part-0.parquet.crc'), 'crc');
  fs.writeFileSync(path.join(leaf0, 'zero.parquet'), '');
  await copy(decoy, path.join(leaf0, '_ignored.parquet'));
  await copy(decoy, path.join(leaf0, '.hidden.parquet'));
  await copy(decoy, path.join(tmp, 'events', 'year=2024', 'stray-0.parquet'));
  await copy(decoy, path.join(tmp, 'events', 'year=2024', 'dt=2024-01-01', 'plain', 'stray-1.parquet'));

  // ---- users
  const FIRST = ['Ada', 'Alan', 'Barbara', 'Claude', 'Grace', 'Hedy', 'Ken', 'Radia', 'Sophie', 'Yukihiro'];
  const LAST = ['Lovelace', 'Turing', "O'Neil, Pat", 'Nuñez', 'Hopper', '"Doc" Brown', 'Pike', 'Liskov'];
  const usersSelect = (lo, hi) => `
    SELECT
      i::INTEGER AS user_id,
      ${pick(FIRST, 'u(i, 21)')} || ' ' || ${pick(LAST, 'u(i, 22)')} AS name,
      DATE '2020-01-01' + floor(u(i, 23) * 1460)::INTEGER AS signup,
      CASE WHEN u(i, 24) < 0.05 THEN NULL ELSE ${pick(['free', 'free', 'pro', 'team'], 'u(i, 25)')} END AS plan,
      CASE WHEN u(i, 26) < 0.05 THEN NULL ELSE (u(i, 27) * 100)::FLOAT END AS score,
      ((u(i, 28) - 0.5) * 1e7)::DECIMAL(18,4) AS balance,
      CASE WHEN u(i, 29) < 0.05 THEN NULL
           ELSE {'city': ${pick(['Paris', 'Zürich', 'New York, NY', 'Quote"ville'], 'u(i, 30)')},
                 'zip': CASE WHEN u(i, 31) < 0.1 THEN NULL ELSE floor(u(i, 32) * 99999)::INTEGER END} END AS address,
      CASE WHEN u(i, 33) < 0.1 THEN NULL
           ELSE list_transform(range(floor(u(i, 34) * 4)::INTEGER), lambda x: (i * 7 + x)::INTEGER) END AS nums
    FROM range(${lo}, ${hi}) r(i)
    ORDER BY i`;
  await copy(usersSelect(1, 3001), path.join(tmp, 'users', 'part-0.parquet'), 'COMPRESSION zstd, ROW_GROUP_SIZE 2048');
  await copy(usersSelect(3001, 6001), path.join(tmp, 'users', 'part-1.parquet'), 'COMPRESSION zstd, ROW_GROUP_SIZE 2048');

  // ---- codes
  for (const [k, code] of ['001', '010', '100'].entries()) {
    await copy(`SELECT (i + ${k * 10})::INTEGER AS x FROM range(3) r(i)`,
      path.join(tmp, 'codes', `code=${code}`, 'part-0.parquet'));
  }

  // ---- broken
  const brokenSelect = (k, n) => `SELECT (${k} * 100000 + i)::BIGINT AS id, 'v' || i AS v FROM range(${n}) r(i)`;
  const bdir = (k) => path.join(tmp, 'broken', `k=${k}`, 'part-0.parquet');
  await copy(brokenSelect(1, 5000), bdir(1), 'ROW_GROUP_SIZE 2048');
  await copy(brokenSelect(2, 5000), bdir(2), 'ROW_GROUP_SIZE 2048');
  const whole = fs.readFileSync(bdir(2));
  fs.writeFileSync(bdir(2), whole.subarray(0, Math.floor(whole.length / 2)));
  await copy(brokenSelect(3, 5000), bdir(3), 'ROW_GROUP_SIZE 2048, COMPRESSION zstd');
  const garbled = fs.readFileSync(bdir(3));
  garbled.fill(0xff, 4, 4 + 64); // the first page header of the first column chunk
  fs.writeFileSync(bdir(3), garbled);
  await copy(`SELECT ('x' || i) AS id, 'v' || i AS v FROM range(100) r(i)`, bdir(4));
  await copy(brokenSelect(5, 3000), bdir(5), 'ROW_GROUP_SIZE 2048');

  // ---- not tables: a hidden and an underscore directory holding Parquet, a
  // directory without Parquet, a stray non-Parquet file at the root.
  await copy(brokenSelect(9, 10), path.join(tmp, '_staging', 'part-0.parquet'));
  await copy(brokenSelect(9, 10), path.join(tmp, '.trash', 'part-0.parquet'));
  fs.mkdirSync(path.join(tmp, 'empty', 'k=1'), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'empty', 'k=1', 'notes.txt'), 'no data here\n');
  fs.writeFileSync(path.join(tmp, 'README.txt'), 'the pqfs mount-test lake\n');

  // ---- big
  if (bigRows > 0) {
    const per = Math.ceil(bigRows / bigFiles);
    for (let f = 0; f < bigFiles; f++) {
      const lo = f * per, hi = Math.min(bigRows, lo + per);
      if (hi <= lo) break;
      await copy(`
        SELECT i::BIGINT AS id, (i % 1000)::INTEGER AS g,
               CASE WHEN i % 17 = 0 THEN NULL ELSE (u(i, 41) * 1000)::DOUBLE END AS d,
               ${pick(['alpha', 'beta', 'gamma, delta', 'eps "x"'], 'u(i, 42)')} || (i % 100) AS s,
               TIMESTAMP '2024-01-01' + to_seconds(i) AS ts
        FROM range(${lo}, ${hi}) r(i) ORDER BY i`,
      path.join(tmp, 'big', `part-${String(f).padStart(2, '0')}.parquet`), 'ROW_GROUP_SIZE 16384');
    }
  }
  fs.renameSync(tmp, outDir);
  console.log(`gen_lake: ${outDir}: events ${next - 1} rows${bigRows ? `, big ${bigRows} rows` : ''}`);
} catch (e) {
  fs.rmSync(tmp, { recursive: true, force: true });
  throw e;
} finally {
  closeDuckDB(db);
}
