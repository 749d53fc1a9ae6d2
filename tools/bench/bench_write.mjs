#!/usr/bin/env node
// Times the Parquet writer: `pqtool rewrite SRC -o OUT` (read SRC, re-encode
// every row group: dictionary or PLAIN, zstd level 3, statistics, page index)
// against DuckDB writing the same rows with the same codec, side by side in
// one process, rounds alternating.
//
//   node tools/bench/bench_write.mjs SRC.parquet [--runs N] [--warmup N] [--pqtool PATH] [--out DIR]
//   node tools/bench/bench_write.mjs SRC.parquet|TABLE_DIR --view [--where EXPR] [...]
//   node tools/bench/bench_write.mjs SRC.csv --csv [...]
//
// --view times a view's data.parquet instead: `pqtool cat SRC [--where EXPR]
// --format parquet -o OUT` (row groups that match entirely copied, the rest
// re-encoded) against DuckDB's COPY (SELECT * FROM SRC [WHERE EXPR]) TO OUT
// (FORMAT parquet, COMPRESSION zstd); a TABLE_DIR is read by DuckDB as
// read_parquet('TABLE_DIR/**/*.parquet', hive_partitioning = true).
//
// --csv times CSV import: `pqtool write SRC.csv OUT` (types inferred in a first
// pass, then parsed, encoded column by column in parallel, written) against
// DuckDB's COPY (FROM read_csv(SRC)) TO OUT (FORMAT parquet, COMPRESSION zstd);
// the check is then that DuckDB parses SRC with the types of pqtool's output
// to the same rows (tests/writer/duck_csv.mjs).
//
// Contenders:
//   pqtool     pqtool rewrite SRC -o DIR/pqtool.parquet --threads 2: a new process each
//              time, timed as a whole (spawn to exit)
//   pqtool-1t  the same with --threads 1
//   duckdb-2t  COPY (FROM read_parquet(SRC)) TO 'DIR/duckdb.parquet' (FORMAT parquet,
//              COMPRESSION zstd), in this process via @duckdb/node-api, SET threads=2
//              (a warm instance, the query only: this favours DuckDB)
//   duckdb-1t  the same with threads=1
// Then: the sizes of both outputs, and whether DuckDB reads the same rows from
// pqtool's output as from SRC (tests/writer/duck_same.mjs).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDuckDB, sqlString, closeDuckDB, repoRoot } from '../js/duckdb.mjs';

function usage(msg) {
  if (msg) console.error(`bench_write: ${msg}`);
  console.error('usage: node tools/bench/bench_write.mjs SRC.parquet [--runs N] [--warmup N] [--pqtool PATH] [--out DIR]');
  process.exit(2);
}
let src;
let runs = 5;
let warmup = 1;
let pqtool = path.join(repoRoot, 'build', 'pqtool');
let outDir;
let viewMode = false;
let csvMode = false;
let where;
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = () => { if (i + 1 >= args.length) usage(`${a} needs a value`); return args[++i]; };
    if (a === '--runs') runs = Number(val());
    else if (a === '--warmup') warmup = Number(val());
    else if (a === '--pqtool') pqtool = path.resolve(val());
    else if (a === '--out') outDir = path.resolve(val());
    else if (a === '--view') viewMode = true;
    else if (a === '--csv') csvMode = true;
    else if (a === '--where') where = val();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (src === undefined) src = path.resolve(a);
    else usage(`unexpected argument ${a}`);
  }
}
if (!src) usage('SRC.parquet is required');
if (!Number.isInteger(runs) || runs < 1) usage('--runs must be a positive integer');
if (!fs.existsSync(pqtool)) usage(`${pqtool} not found (build first)`);
outDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'bench-write-'));
fs.mkdirSync(outDir, { recursive: true });
const pqOut = path.join(outDir, 'pqtool.parquet');
const duckOut = path.join(outDir, 'duckdb.parquet');

function runPqtool(threads) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const args = csvMode ? ['write', src, pqOut, '--threads', String(threads)] : viewMode
      ? ['cat', src, ...(where ? ['--where', where] : []), '--format', 'parquet', '-o', pqOut, '--threads', String(threads)]
      : ['rewrite', src, '-o', pqOut, '--threads', String(threads)];
    const child = spawn(pqtool, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => {
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      if (code !== 0) reject(new Error(`pqtool ${args[0]} failed (${code}): ${err.trim()}`));
      else resolve(wall);
    });
  });
}

const isDir = fs.statSync(src).isDirectory();
const duckSource = csvMode ? `read_csv(${sqlString(src)})` : isDir ? `read_parquet(${sqlString(path.join(src, '**', '*.parquet'))}, hive_partitioning = true)`
  : `read_parquet(${sqlString(src)})`;
const duckQuery = `SELECT * FROM ${duckSource}${viewMode && where ? ` WHERE ${where}` : ''}`;
const duck = { 1: await openDuckDB({ threads: 1 }), 2: await openDuckDB({ threads: 2 }) };
async function runDuck(threads) {
  const t0 = process.hrtime.bigint();
  await duck[threads].conn.run(`COPY (${duckQuery}) TO ${sqlString(duckOut)} (FORMAT parquet, COMPRESSION zstd)`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const contenders = [
  { name: 'pqtool', run: () => runPqtool(2), t: [] },
  { name: 'pqtool-1t', run: () => runPqtool(1), t: [] },
  { name: 'duckdb-2t', run: () => runDuck(2), t: [] },
  { name: 'duckdb-1t', run: () => runDuck(1), t: [] },
];
console.log(`source    ${src}${isDir ? ' (a table)' : ` (${fs.statSync(src).size} bytes)`}`);
console.log(`pqtool    ${csvMode ? 'write SRC OUT' : viewMode ? `cat SRC${where ? ` --where '${where}'` : ''} --format parquet` : 'rewrite SRC'} -o OUT --threads 2|1`);
console.log(`duckdb    COPY (${duckQuery}) TO OUT (FORMAT parquet, COMPRESSION zstd)`);
for (let i = 0; i < warmup; i++) for (const c of contenders) await c.run();
for (let r = 0; r < runs; r++) {
  const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
  const line = [];
  for (const c of order) {
    const t = await c.run();
    c.t.push(t);
    line.push(`${c.name} ${t.toFixed(3)}s`);
  }
  console.log(`  round ${String(r + 1).padStart(2)}  ${line.join('   ')}`);
}
const median = (a) => { const s = [...a].sort((x, y) => x - y); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
console.log('  contender   median s    min s    max s');
for (const c of contenders) {
  console.log(`  ${c.name.padEnd(10)}  ${median(c.t).toFixed(3).padStart(8)} ${Math.min(...c.t).toFixed(3).padStart(8)} ${Math.max(...c.t).toFixed(3).padStart(8)}`);
}
const m = Object.fromEntries(contenders.map((c) => [c.name, median(c.t)]));
const pqSize = fs.statSync(pqOut).size, duckSize = fs.statSync(duckOut).size;
console.log(`ratio     pqtool / duckdb-2t = ${(m.pqtool / m['duckdb-2t']).toFixed(2)}   ` +
  `pqtool-1t / duckdb-1t = ${(m['pqtool-1t'] / m['duckdb-1t']).toFixed(2)}   (median wall time; < 1: pqtool faster)`);
console.log(`size      pqtool ${pqSize} bytes, duckdb ${duckSize} bytes: pqtool / duckdb = ${(pqSize / duckSize).toFixed(3)}`);
for (const k of [1, 2]) closeDuckDB(duck[k]);
// The check: DuckDB's own output (the same rows) against pqtool's; for a CSV,
// DuckDB's parse of it with the types pqtool chose.
const same = csvMode
  ? spawnSync('node', [path.join(repoRoot, 'tests/writer/duck_csv.mjs'), src, pqOut], { encoding: 'utf8' })
  : spawnSync('node', [path.join(repoRoot, 'tests/writer/duck_same.mjs'), duckOut, pqOut], { encoding: 'utf8' });
console.log(`check     DuckDB reads the same rows from pqtool's output as from ${csvMode ? 'the CSV' : 'its own'}: ${same.stdout.trim()}`);
console.log(`note      pqtool is timed as a whole process (start, footer, read, encode, write); DuckDB only as a
          query on a warm in-process instance: this favours DuckDB.  Outputs in ${outDir}.`);
process.exit(same.status === 0 ? 0 : 1);
