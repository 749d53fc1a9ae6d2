#!/usr/bin/env node
// Times `pqtool cat FILE > /dev/null` against DuckDB's CSV export of the same
// file, side by side in one process, rounds alternating A/B/C.
//
//   node tools/bench/bench_cat.mjs FILE [--runs N] [--warmup N] [--pqtool PATH]
//                                  [--no-check] [-- EXTRA_PQTOOL_ARGS...]
//
//   A  pqtool     build/pqtool cat FILE [EXTRA...] > /dev/null: a new process
//                 each time, timed as a whole (exec, footer, decode, CSV, write)
//                 with process.hrtime (started through a small launcher; below)
//   B  duckdb-1t  COPY (FROM 'FILE') TO '/dev/null' (FORMAT csv), in this
//                 process via @duckdb/node-api, SET threads=1
//   C  duckdb-2t  the same with threads=2
// DuckDB's times cover the query only, on an instance warmed up by a first
// run: no process start, no library load. That favours DuckDB.
//
// Before timing (unless --no-check) pqtool's output is read once through a
// pipe: its line count must be rows + 1 (header), and its size is reported.
// Exit status: 0, or 1 when pqtool failed or printed the wrong number of lines.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDuckDB, queryRows, sqlString, closeDuckDB, repoRoot } from '../js/duckdb.mjs';
import { startLauncher, describeFailure } from '../js/launcher.mjs';

function usage(msg) {
  if (msg) console.error(`bench_cat: ${msg}`);
  console.error('usage: node tools/bench/bench_cat.mjs FILE [--runs N] [--warmup N] [--pqtool PATH] [--no-check] [-- PQTOOL_ARGS...]');
  process.exit(2);
}

let file;
let runs = 5;
let warmup = 1;
let pqtool = path.join(repoRoot, 'build', 'pqtool');
let check = true;
let extra = [];
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = () => { if (i + 1 >= args.length) usage(`${a} needs a value`); return args[++i]; };
    if (a === '--') { extra = args.slice(i + 1); break; }
    else if (a === '--runs') runs = Number(val());
    else if (a === '--warmup') warmup = Number(val());
    else if (a === '--pqtool') pqtool = path.resolve(val());
    else if (a === '--no-check') check = false;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (file === undefined) file = a;
    else usage(`unexpected argument ${a}`);
  }
}
if (!file) usage('FILE is required');
if (!Number.isInteger(runs) || runs < 1) usage('--runs must be a positive integer');
if (!Number.isInteger(warmup) || warmup < 0) usage('--warmup must be a non-negative integer');
file = path.resolve(file);
if (!fs.existsSync(file)) usage(`no such file: ${file}`);
if (!fs.existsSync(pqtool)) usage(`no pqtool at ${pqtool} (build it: cmake -S . -B build && cmake --build build)`);

const pqArgs = ['cat', file, ...extra];
const relPq = path.relative(process.cwd(), pqtool);
const pqCmd = [relPq && !relPq.startsWith('..') ? relPq : pqtool, ...pqArgs].join(' ');
// Options that change the number of output lines: no line-count check then.
const changesRows = extra.some((a) => /^--(where|limit|format)\b/.test(a));

// pqtool runs through tools/js/launcher.mjs, forked before DuckDB is loaded
// (fork() from this process gets slower as its memory grows).
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cat-'));
const launcher = startLauncher(tmpDir);
let pqFailure = null;

async function runPqtool() {
  const r = await launcher.run([pqtool, ...pqArgs]);
  if (r.rc !== 0 && !pqFailure) {
    pqFailure = describeFailure(r);
    console.error(`bench_cat: warning: ${pqCmd} failed (${pqFailure}); its times mean nothing`);
  }
  return { wall: r.wall, cpu: r.cpu };
}

// Output size and line count of one pqtool run, read through a pipe.
function measurePqtoolOutput() {
  return new Promise((resolve, reject) => {
    const child = spawn(pqtool, pqArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    let bytes = 0;
    let lines = 0;
    let stderr = '';
    child.stdout.on('data', (buf) => {
      bytes += buf.length;
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
    });
    child.stderr.on('data', (b) => { if (stderr.length < 4096) stderr += b; });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, bytes, lines, stderr: stderr.trim() }));
  });
}

const copySql = `COPY (FROM ${sqlString(file)}) TO '/dev/null' (FORMAT csv, USE_TMP_FILE false)`;
async function runDuck(conn) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await conn.run(copySql);
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(cpu0);
  return { wall, cpu: (c.user + c.system) / 1e6 };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmtS = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');

const duck1 = await openDuckDB({ threads: 1 });
const duck2 = await openDuckDB({ threads: 2 });
let status = 0;
try {
  const [meta] = await queryRows(duck2.conn, `
    SELECT sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS rows,
           count(DISTINCT row_group_id) AS row_groups, count(DISTINCT column_id) AS columns
    FROM parquet_metadata(${sqlString(file)})`);
  const rows = Number(meta.rows);
  const fileBytes = fs.statSync(file).size;
  const cpuModel = (os.cpus()[0]?.model ?? '?').replace(/\s+/g, ' ');

  console.log(`file      ${file}`);
  console.log(`          ${(fileBytes / 1e6).toFixed(1)} MB, ${rows} rows, ${meta.columns} columns, ${meta.row_groups} row groups`);
  console.log(`machine   ${os.cpus().length} cores, ${cpuModel}, node ${process.version}`);
  console.log(`A         ${pqCmd} > /dev/null`);
  console.log(`B, C      ${copySql}  (threads=1, threads=2)`);
  console.log(`rounds    ${warmup} warm-up + ${runs} timed, order rotating A/B/C`);

  if (check) {
    const o = await measurePqtoolOutput();
    if (o.code !== 0 || o.signal) {
      console.log(`check     pqtool failed: exit ${o.code ?? o.signal}${o.stderr ? `: ${o.stderr.split('\n')[0]}` : ''}`);
      pqFailure ??= `exit ${o.code ?? o.signal}`;
    } else if (!changesRows && o.lines !== rows + 1) {
      console.log(`check     FAIL: pqtool printed ${o.lines} lines, expected ${rows + 1} (rows + header)`);
      pqFailure ??= 'wrong line count';
    } else {
      console.log(`check     pqtool output ${(o.bytes / 1e6).toFixed(1)} MB, ${o.lines} lines` +
        (changesRows ? ' (line count not checked: --where/--limit/--format)' : ' (rows + header: ok)'));
    }
  }

  const contenders = [
    { name: 'pqtool', run: runPqtool, wall: [], cpu: [] },
    { name: 'duckdb-1t', run: () => runDuck(duck1.conn), wall: [], cpu: [] },
    { name: 'duckdb-2t', run: () => runDuck(duck2.conn), wall: [], cpu: [] },
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
    console.log(`round ${String(r + 1).padStart(2)}  ${line.join('   ')}`);
  }

  console.log('');
  console.log(`${'contender'.padEnd(11)} ${'median s'.padStart(9)} ${'min s'.padStart(8)} ${'max s'.padStart(8)} ${'cpu s'.padStart(8)} ${'Mrows/s'.padStart(8)} ${'MB/s in'.padStart(8)}`);
  for (const c of contenders) {
    const m = median(c.wall);
    console.log(`${c.name.padEnd(11)} ${fmtS(m).padStart(9)} ${fmtS(Math.min(...c.wall)).padStart(8)} ` +
      `${fmtS(Math.max(...c.wall)).padStart(8)} ${fmtS(median(c.cpu)).padStart(8)} ` +
      `${(rows / m / 1e6).toFixed(2).padStart(8)} ${(fileBytes / m / 1e6).toFixed(1).padStart(8)}` +
      `${c.name === 'pqtool' && pqFailure ? '   (FAILED: not a valid result)' : ''}`);
  }
  const [a, b1, b2] = contenders.map((c) => median(c.wall));
  console.log('');
  if (pqFailure) {
    console.log(`ratios    n/a: pqtool failed (${pqFailure})`);
    status = 1;
  } else {
    console.log(`ratio     pqtool / duckdb-1t = ${(a / b1).toFixed(2)}   (median wall time; < 1: pqtool faster)`);
    console.log(`ratio     pqtool / duckdb-2t = ${(a / b2).toFixed(2)}`);
  }
  console.log('note      pqtool is timed as a whole process (start, footer, decode, CSV, write);');
  console.log('          DuckDB only as a query on an already warm in-process instance: this favours DuckDB.');
  console.log('          cpu s: pqtool = its user+sys; DuckDB = this process\'s user+sys during the query.');
} finally {
  closeDuckDB(duck1);
  closeDuckDB(duck2);
  launcher.close();
  fs.rmSync(tmpDir, { recursive: true, force: true });
}
process.exitCode = status;
