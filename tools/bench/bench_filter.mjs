#!/usr/bin/env node
// Times filtered scans of a Hive-partitioned table, `pqtool cat TABLE --where
// ...` against DuckDB's CSV export of the same rows, side by side in one
// process, rounds alternating; then counts the bytes each reads from storage.
//
//   node tools/bench/bench_filter.mjs OUTDIR [--table events|events_arrow] [--queries a,b,...]
//                                     [--runs N] [--warmup N] [--pqtool PATH] [--no-1t]
//                                     [--no-strace]
//
// OUTDIR is gen_filter_data.mjs's (its manifest.json names the query constants).
// Queries (all rows and columns that match, as CSV, to /dev/null):
//   a  range     id BETWEEN lo AND hi          clustered 0.1% (ids grow with ts)
//   b  scatter   country = 'NZ'                ~1%, in every row group
//   c  half      score < 0.5                   ~50%
//   d  limit     LIMIT 10, no filter
//   e  user      user_id = K                   a few rows, scattered, no index in DuckDB's files
//   f  session   session = 'S'                 16 rows, one row group; DuckDB writes a
//                                              dictionary and a bloom filter for this column
// Contenders, per query:
//   pqtool     build/pqtool cat OUTDIR/TABLE --where W [--limit N] --threads 2 > /dev/null:
//              a new process each time, timed as a whole (through a small launcher; below)
//   pqtool-1t  the same with --threads 1
//   duckdb-2t  COPY (SELECT * FROM read_parquet('OUTDIR/TABLE/**/*.parquet', hive_partitioning=true)
//              WHERE W [LIMIT N]) TO '/dev/null' (FORMAT csv, USE_TMP_FILE false),
//              in this process via @duckdb/node-api, SET threads=2
//   duckdb-1t  the same with threads=1
// DuckDB's times cover the query only, on an instance warmed up by earlier
// runs: no process start, no library load. That favours DuckDB.
//
// Bytes read from storage, per query, in untimed runs:
//   pqtool counter  the "storage: N bytes in M reads" line of `pqtool cat --stats`
//   pqtool strace   strace -f -y of that same run: bytes returned by read/pread64/readv/preadv
//                   on file descriptors of .parquet files
//   duckdb strace   the same for the DuckDB query in a fresh node process (this script
//                   with --duck-child), DuckDB threads=2
// Rows out: pqtool's CSV lines - 1 (header) must equal DuckDB's COPY count and
// pqtool's own "rows out"; a mismatch is reported and makes the exit status 1.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDuckDB, queryRows, sqlString, closeDuckDB, repoRoot, duckCopy, duckCopyLockRetries } from '../js/duckdb.mjs';
import { startLauncher, describeFailure } from '../js/launcher.mjs';

const SELF = fileURLToPath(import.meta.url);


// ---------------------------------------------------------------- child mode
// node bench_filter.mjs --duck-child THREADS SQL: runs SQL once in a fresh
// DuckDB and prints the COPY's row count (the strace run).
if (process.argv[2] === '--duck-child') {
  const [threads, sql] = process.argv.slice(3);
  const db = await openDuckDB({ threads });
  try {
    const { reader } = await duckCopy(db.conn, sql);
    console.log(JSON.stringify({ rows: Number(reader.getRows()[0][0]) }));
  } finally {
    closeDuckDB(db);
  }
  process.exit(0);
}

function usage(msg) {
  if (msg) console.error(`bench_filter: ${msg}`);
  console.error('usage: node tools/bench/bench_filter.mjs OUTDIR [--table events|events_arrow] [--queries a,b,...]\n' +
    '                                         [--runs N] [--warmup N] [--pqtool PATH] [--no-1t] [--no-strace]');
  process.exit(2);
}

let outDir;
let table = 'events';
let queryIds = 'abcdef';
let runs = 3;
let warmup = 1;
let pqtool = path.join(repoRoot, 'build', 'pqtool');
let oneThread = true;
let useStrace = true;
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = () => { if (i + 1 >= args.length) usage(`${a} needs a value`); return args[++i]; };
    if (a === '--table') table = val();
    else if (a === '--queries') queryIds = val().replaceAll(',', '');
    else if (a === '--runs') runs = Number(val());
    else if (a === '--warmup') warmup = Number(val());
    else if (a === '--pqtool') pqtool = path.resolve(val());
    else if (a === '--no-1t') oneThread = false;
    else if (a === '--no-strace') useStrace = false;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (outDir === undefined) outDir = a;
    else usage(`unexpected argument ${a}`);
  }
}
if (!outDir) usage('OUTDIR is required');
if (!Number.isInteger(runs) || runs < 1) usage('--runs must be a positive integer');
if (!Number.isInteger(warmup) || warmup < 0) usage('--warmup must be a non-negative integer');
outDir = path.resolve(outDir);
const manifestPath = path.join(outDir, 'manifest.json');
if (!fs.existsSync(manifestPath)) usage(`no ${manifestPath}: run gen_filter_data.mjs ${outDir} first`);
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
const tableDir = path.join(outDir, table);
if (!fs.existsSync(tableDir)) usage(`no table ${tableDir}`);
if (!fs.existsSync(pqtool)) usage(`no pqtool at ${pqtool} (build it: cmake -S . -B build && cmake --build build)`);
if (useStrace && spawnSync('strace', ['-V']).status !== 0) {
  console.error('bench_filter: no strace (tools/setup-deps.sh installs it, or apt-get install strace); byte counts from pqtool only');
  useStrace = false;
}

const m = manifest;
const ALL_QUERIES = [
  { id: 'a', name: 'range', what: 'clustered 0.1% range', where: `id BETWEEN ${m.range.lo} AND ${m.range.hi}` },
  { id: 'b', name: 'scatter', what: 'scattered ~1% equality', where: `country = ${sqlString(m.country)}` },
  { id: 'c', name: 'half', what: '~50% filter', where: `score < ${m.score_lt}` },
  { id: 'd', name: 'limit', what: 'LIMIT 10, no filter', limit: 10 },
  { id: 'e', name: 'user', what: 'point lookup, high-cardinality key (no index)', where: `user_id = ${m.user_id}` },
  { id: 'f', name: 'session', what: 'point lookup, dictionary + bloom filter', where: `session = ${sqlString(m.session)}` },
];
const queries = ALL_QUERIES.filter((q) => queryIds.includes(q.id));
if (queries.length === 0) usage(`--queries: none of ${queryIds} is one of abcdef`);

const glob = path.join(tableDir, '**', '*.parquet');
for (const q of queries) {
  q.pqArgs = ['cat', tableDir, ...(q.where ? ['--where', q.where] : []), ...(q.limit ? ['--limit', String(q.limit)] : [])];
  q.sql = `COPY (SELECT * FROM read_parquet(${sqlString(glob)}, hive_partitioning=true)` +
    `${q.where ? ` WHERE ${q.where}` : ''}${q.limit ? ` LIMIT ${q.limit}` : ''}) TO '/dev/null' (FORMAT csv, USE_TMP_FILE false)`;
}
const relPq = path.relative(process.cwd(), pqtool);
const pqName = relPq && !relPq.startsWith('..') ? relPq : pqtool;
const shq = (s) => (/^[\w./=,-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
const pqCmd = (args) => [pqName, ...args].map(shq).join(' ');

// pqtool runs through tools/js/launcher.mjs, forked before DuckDB is loaded
// (fork() from this process gets slower as its memory grows).
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-filter-'));
const launcher = startLauncher(tmpDir);

async function runPqtool(q, threads) {
  const args = [...q.pqArgs, '--threads', String(threads)];
  const r = await launcher.run([pqtool, ...args]);
  if (r.rc !== 0 && !q.failure) {
    q.failure = describeFailure(r);
    console.error(`bench_filter: warning: ${pqCmd(args)} failed (${q.failure}); its times mean nothing`);
  }
  return { wall: r.wall, cpu: r.cpu };
}

async function runDuck(conn, q) {
  const { reader, wall, cpu } = await duckCopy(conn, q.sql);
  const rows = Number(reader.getRows()[0][0]);
  if (q.duckRows === undefined) q.duckRows = rows;
  else if (q.duckRows !== rows) q.notes.push(`DuckDB's COPY counted ${rows} rows, earlier ${q.duckRows}`);
  return { wall, cpu };
}

// Bytes returned by read-like calls on .parquet file descriptors, from an
// `strace -f -y` log (the fd is printed with its path: fd<path>). A call cut
// by another thread's ("<unfinished ...>") is matched with its "<... resumed>"
// line by thread id.
const READ_CALLS = 'read,pread64,readv,preadv,preadv2';
function straceBytes(logFile) {
  let bytes = 0;
  let calls = 0;
  const pending = new Map();
  const count = (file, ret) => {
    if (file.endsWith('.parquet') && ret > 0) { bytes += ret; calls++; }
  };
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    let mm = /^(\d+)\s+(?:read|pread64|readv|preadv|preadv2)\(\d+<([^>]*)>/.exec(line);
    if (mm) {
      if (line.endsWith('<unfinished ...>')) pending.set(mm[1], mm[2]);
      else { const r = /= (-?\d+)(?: [A-Z]\w+ \(.*\))?$/.exec(line); if (r) count(mm[2], Number(r[1])); }
      continue;
    }
    mm = /^(\d+)\s+<\.\.\. (?:read|pread64|readv|preadv|preadv2) resumed>.*= (-?\d+)(?: [A-Z]\w+ \(.*\))?$/.exec(line);
    if (mm && pending.has(mm[1])) { count(pending.get(mm[1]), Number(mm[2])); pending.delete(mm[1]); }
  }
  return { bytes, calls };
}

const straceArgs = (log) => ['-f', '-qq', '-y', '--seccomp-bpf', '-e', `trace=${READ_CALLS}`, '-o', log];

// One pqtool run with --stats (under strace unless --no-strace): line count of
// its output, its counters, and the bytes strace saw.
function checkPqtool(q) {
  const log = path.join(tmpDir, `pq-${q.id}.strace`);
  const args = [...q.pqArgs, '--threads', '2', '--stats'];
  const [cmd, argv] = useStrace ? ['strace', [...straceArgs(log), pqtool, ...args]] : [pqtool, args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let stderr = '';
    child.stdout.on('data', (buf) => {
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
    });
    child.stderr.on('data', (b) => { stderr += b; });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const st = /storage: (\d+) bytes in (\d+) reads/.exec(stderr);
      const out = /scan: .*?(\d+) rows out/.exec(stderr);
      const res = {
        code, signal, rows: lines - 1, stderr: stderr.trim(),
        counterBytes: st ? Number(st[1]) : NaN, counterReads: st ? Number(st[2]) : NaN,
        statsRows: out ? Number(out[1]) : NaN,
        plan: stderr.split('\n').filter((l) => /^(files|row groups|pages|rows|bytes):/.test(l)),
      };
      if (useStrace && code === 0) Object.assign(res, { strace: straceBytes(log) });
      fs.rmSync(log, { force: true });
      resolve(res);
    });
  });
}

// The DuckDB query in a fresh node process under strace.
function straceDuck(q) {
  const log = path.join(tmpDir, `duck-${q.id}.strace`);
  const r = spawnSync('strace', [...straceArgs(log), process.execPath, SELF, '--duck-child', '2', q.sql],
    { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) {
    fs.rmSync(log, { force: true });
    return { error: `exit ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n').slice(-2).join(' | ')}` };
  }
  const res = { ...JSON.parse(r.stdout.trim().split('\n').pop()), strace: straceBytes(log) };
  fs.rmSync(log, { force: true });
  return res;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};
const fmtS = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');
const fmtMB = (x) => (Number.isFinite(x) ? (x / 1e6).toFixed(2) : '-');
const fmtR = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const duck1 = oneThread ? await openDuckDB({ threads: 1 }) : null;
const duck2 = await openDuckDB({ threads: 2 });
let status = 0;
try {
  const tableBytes = fs.readdirSync(tableDir, { recursive: true })
    .filter((f) => f.endsWith('.parquet')).reduce((s, f) => s + fs.statSync(path.join(tableDir, f)).size, 0);
  const [meta] = await queryRows(duck2.conn, `
    SELECT count(DISTINCT file_name) AS files, count(DISTINCT (file_name, row_group_id)) AS row_groups,
           sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS rows
    FROM parquet_metadata(${sqlString(glob)})`);
  const totalRows = Number(meta.rows);
  const cpuModel = (os.cpus()[0]?.model ?? '?').replace(/\s+/g, ' ');
  console.log(`table     ${tableDir}  (${m.tables?.[table] ?? '?'})`);
  console.log(`          ${(tableBytes / 1e6).toFixed(1)} MB, ${totalRows} rows, ${meta.files} files, ${meta.row_groups} row groups`);
  console.log(`machine   ${os.cpus().length} cores, ${cpuModel}, node ${process.version}; load average ${load()}`);
  console.log(`pqtool    ${pqCmd(['cat', tableDir, '--where', 'W', '--threads', '2'])} > /dev/null` +
    `${oneThread ? '  (pqtool-1t: --threads 1)' : ''}`);
  console.log(`duckdb    COPY (SELECT * FROM read_parquet('${glob}', hive_partitioning=true) WHERE W) TO '/dev/null' (FORMAT csv, USE_TMP_FILE false)` +
    `  (threads=2${oneThread ? ', threads=1' : ''})`);
  console.log(`rounds    ${warmup} warm-up + ${runs} timed per query, order rotating`);

  const summary = [];
  for (const q of queries) {
    q.notes = [];
    console.log('');
    console.log(`query ${q.id}  ${q.name}: ${q.what}`);
    console.log(`  where   ${q.where ?? '(none)'}${q.limit ? `   limit ${q.limit}` : ''}`);
    const chk = checkPqtool(q);
    const pqc = await chk;
    if (pqc.code !== 0 || pqc.signal) {
      q.failure = `exit ${pqc.code ?? pqc.signal}: ${pqc.stderr.split('\n').pop()}`;
      console.log(`  check   pqtool failed: ${q.failure}`);
    }
    const contenders = [
      { name: 'pqtool', run: () => runPqtool(q, 2), wall: [], cpu: [] },
      ...(oneThread ? [{ name: 'pqtool-1t', run: () => runPqtool(q, 1), wall: [], cpu: [] }] : []),
      { name: 'duckdb-2t', run: () => runDuck(duck2.conn, q), wall: [], cpu: [] },
      ...(oneThread ? [{ name: 'duckdb-1t', run: () => runDuck(duck1.conn, q), wall: [], cpu: [] }] : []),
    ];
    for (let w = 0; w < warmup; w++) for (const c of contenders) await c.run();
    for (let r = 0; r < runs; r++) {
      const order = contenders.map((_, k) => contenders[(k + r) % contenders.length]);
      const line = [];
      for (const c of order) {
        const { wall, cpu } = await c.run();
        c.wall.push(wall);
        c.cpu.push(cpu);
        line.push(`${c.name} ${fmtS(wall)}s`);
      }
      console.log(`  round ${String(r + 1).padStart(2)}  ${line.join('   ')}`);
    }
    const dk = useStrace ? straceDuck(q) : null;
    if (dk?.error) q.notes.push(`DuckDB under strace failed: ${dk.error}`);

    // Rows out: pqtool's lines, pqtool's counter, DuckDB's COPY count (in this
    // process and in the strace child).
    const rowsOk = !q.failure && pqc.rows === q.duckRows && pqc.statsRows === pqc.rows &&
      (!dk || dk.error || dk.rows === q.duckRows);
    if (!rowsOk && !q.failure) {
      q.notes.push(`ROW COUNT MISMATCH: pqtool printed ${pqc.rows} rows (its stats: ${pqc.statsRows}), ` +
        `DuckDB ${q.duckRows}${dk && !dk.error ? ` (fresh process: ${dk.rows})` : ''}`);
      status = 1;
    }
    if (q.failure) status = 1;
    console.log(`  rows    pqtool ${pqc.rows}, duckdb ${q.duckRows}: ${rowsOk ? 'agree' : 'DIFFER'}` +
      `   (${(100 * q.duckRows / totalRows).toFixed(3)}% of ${totalRows})`);
    for (const l of pqc.plan) console.log(`  plan    ${l}`);
    console.log(`  ${'contender'.padEnd(10)} ${'median s'.padStart(9)} ${'min s'.padStart(8)} ${'max s'.padStart(8)} ${'cpu s'.padStart(8)}`);
    for (const c of contenders) {
      console.log(`  ${c.name.padEnd(10)} ${fmtS(median(c.wall)).padStart(9)} ${fmtS(Math.min(...c.wall)).padStart(8)} ` +
        `${fmtS(Math.max(...c.wall)).padStart(8)} ${fmtS(median(c.cpu)).padStart(8)}`);
    }
    const med = Object.fromEntries(contenders.map((c) => [c.name, median(c.wall)]));
    const r2 = q.failure ? NaN : med.pqtool / med['duckdb-2t'];
    const r1 = q.failure || !oneThread ? NaN : med['pqtool-1t'] / med['duckdb-1t'];
    console.log(`  ratio   pqtool / duckdb-2t = ${fmtR(r2)}` +
      (oneThread ? `   pqtool-1t / duckdb-1t = ${fmtR(r1)}` : '') + '   (median wall time; < 1: pqtool faster)');
    const pqS = pqc.strace ?? {};
    const dkS = dk?.strace ?? {};
    console.log(`  bytes   pqtool counter ${fmtMB(pqc.counterBytes)} MB in ${pqc.counterReads} reads;` +
      (useStrace ? ` pqtool strace ${fmtMB(pqS.bytes)} MB in ${pqS.calls} calls;` +
        ` duckdb strace ${fmtMB(dkS.bytes)} MB in ${dkS.calls} calls;` +
        ` pqtool / duckdb = ${fmtR(pqS.bytes / dkS.bytes)}` : ''));
    for (const n of q.notes) console.log(`  NOTE    ${n}`);
    summary.push({ q, med, r1, r2, pqc, pqS, dkS, rowsOk });
  }

  console.log('');
  console.log(`summary   load average ${load()} (1, 5, 15 min), ${os.cpus().length} cores`);
  const hdr = ['query', 'rows out', 'pqtool s', 'duck-2t s', 'ratio', ...(oneThread ? ['pq-1t s', 'duck-1t s', 'ratio'] : []),
    'pq ctr MB', 'pq strace MB', 'duck strace MB', 'bytes ratio'];
  const rowsT = summary.map(({ q, med, r1, r2, pqc, pqS, dkS, rowsOk }) => [
    `${q.id} ${q.name}`, `${pqc.rows}${rowsOk ? '' : ' != ' + q.duckRows}`,
    fmtS(med.pqtool), fmtS(med['duckdb-2t']), fmtR(r2),
    ...(oneThread ? [fmtS(med['pqtool-1t']), fmtS(med['duckdb-1t']), fmtR(r1)] : []),
    fmtMB(pqc.counterBytes), fmtMB(pqS.bytes), fmtMB(dkS.bytes), fmtR(pqS.bytes / dkS.bytes),
  ]);
  const widths = hdr.map((h, k) => Math.max(h.length, ...rowsT.map((r) => r[k].length)));
  const fmtRow = (r) => r.map((c, k) => (k === 0 ? c.padEnd(widths[k]) : c.padStart(widths[k]))).join('  ');
  console.log(fmtRow(hdr));
  for (const r of rowsT) console.log(fmtRow(r));
  console.log('');
  console.log('ratio     pqtool median / DuckDB median at the same thread count (< 1: pqtool faster);');
  console.log('          bytes ratio = pqtool strace / duckdb strace (bytes read from .parquet files).');
  console.log('note      pqtool is timed as a whole process (start, listing, footers, scan, CSV, write);');
  console.log('          DuckDB only as a query on an already warm in-process instance: this favours DuckDB.');
  console.log('          Bytes: every file is in the page cache; they count what each reader asks for, not disk I/O.');
  const lockRetries = duckCopyLockRetries();
  if (lockRetries) {
    console.log(`WARNING   DuckDB's COPY to /dev/null was locked by another process ${lockRetries} time(s) (retried):`);
    console.log('          another benchmark ran at the same time; these numbers are disturbed.');
  }
} finally {
  if (duck1) closeDuckDB(duck1);
  closeDuckDB(duck2);
  launcher.close();
  fs.rmSync(tmpDir, { recursive: true, force: true });
}
process.exitCode = status;
