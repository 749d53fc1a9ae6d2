#!/usr/bin/env node
// Differential test of pqtool's row filter and pruning ladder against DuckDB.
//
//   node tests/diff/run_diff.mjs BUILD_DIR OUTDIR [--per-table N] [--seed S]
//        [--only TABLE] [--case K] [--jobs N] [--no-gen] [-v]
//
// 1. gen_tables.mjs writes the tables into OUTDIR/tables (DuckDB and arrow-rs
//    writers, a Hive table); --no-gen reuses them.
// 2. gen_predicates.mjs makes N cases per table (a pqfs --where, its DuckDB SQL,
//    sometimes --select and --limit).
// 3. DuckDB (a child process, one thread, TimeZone=UTC) computes each expected
//    result: COPY (SELECT cols FROM read_parquet([files]) WHERE sql ORDER BY
//    __file, file_row_number [LIMIT n]) TO csv (HEADER). The ORDER BY is the
//    table order (SPEC section 3): files in the order of the table's list
//    (for the Hive table: partition directories level by level in bytewise
//    order of their names, files by name, as gen_tables.mjs lists them), rows in
//    file order. Without it DuckDB's order is not pqtool's even with one thread
//    and preserve_insertion_order: a long IN list becomes a join, which
//    reorders rows. (DuckDB's own glob order is the full path's bytewise order,
//    which agrees with the table walk here but not in general: 'k=1-x/' sorts
//    before 'k=1/' by path, after it by directory name.)
// 4. pqtool cat PATH --where ... --threads 2 [--select] [--limit] --stats, and for
//    a rotating subset of the cases once more with pruning rungs switched off
//    (all of them, only the dictionary, statistics and dictionary), with
//    --batch-rows 7 (batches end mid-page and mid-row-group), or with one
//    thread, or as Parquet (--format parquet, read back with pqtool cat):
//    pruning, batching and the Parquet output must not change the rows.
// 5. Rows are compared in order, cell by cell, by shared/tools/csvcmp.py's
//    rules (csvcmp.mjs; each mismatch is re-checked with csvcmp.py itself when
//    python3 is there). A case where both sides reject the predicate counts as
//    agreement; one side failing is a mismatch.
//
// On a mismatch: the table, the predicate, its SQL, the options, the first
// differing rows, and a command that reproduces it. Exits 1 when any case
// failed, with their count.
import fs from 'node:fs';
import path from 'node:path';
import { execFile, execFileSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generateTables, tableSource } from './gen_tables.mjs';
import { generateCases } from './gen_predicates.mjs';
import { compareCsv } from './csvcmp.mjs';
import { repoRoot, haveNodeModules, quoteIdent } from './lib.mjs';

const T0 = Date.now();
const args = process.argv.slice(2);
const opt = { perTable: 120, seed: 1, only: null, caseNo: null, jobs: 2, gen: true, verbose: false };
const pos = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--per-table') opt.perTable = Number(args[++i]);
  else if (a === '--seed') opt.seed = Number(args[++i]);
  else if (a === '--only') opt.only = args[++i];
  else if (a === '--case') opt.caseNo = Number(args[++i]);
  else if (a === '--jobs') opt.jobs = Number(args[++i]);
  else if (a === '--no-gen') opt.gen = false;
  else if (a === '-v' || a === '--verbose') opt.verbose = true;
  else if (a.startsWith('-')) usage(`unknown option ${a}`);
  else pos.push(a);
}
if (pos.length !== 2) usage();
function usage(msg) {
  if (msg) console.error(`run_diff: ${msg}`);
  console.error('usage: node tests/diff/run_diff.mjs BUILD_DIR OUTDIR [--per-table N] [--seed S] [--only TABLE] [--case K] [--jobs N] [--no-gen] [-v]');
  process.exit(2);
}
const buildDir = path.resolve(pos[0]);
const outDir = path.resolve(pos[1]);
const pqtool = path.join(buildDir, 'pqtool');
if (!fs.existsSync(pqtool)) {
  console.error(`run_diff: ${pqtool} does not exist (build first)`);
  process.exit(2);
}
if (!haveNodeModules()) {
  // 77: CTest's SKIP_RETURN_CODE for diff.duckdb
  console.error('run_diff: SKIPPED: tools/js/node_modules is missing (run tools/setup-deps.sh)');
  process.exit(77);
}
const sharedDir = process.env.PQFS_SHARED_DIR || path.resolve(repoRoot, '..', 'shared');
const csvcmpPy = path.join(sharedDir, 'tools', 'csvcmp.py');
const tablesDir = path.join(outDir, 'tables');
const workDir = path.join(outDir, 'work');
fs.mkdirSync(workDir, { recursive: true });

const secs = (t) => `${((Date.now() - t) / 1000).toFixed(1)}s`;

// ---------------------------------------------------------------- tables
let desc;
const tGen = Date.now();
if (opt.gen || !fs.existsSync(path.join(tablesDir, 'tables.json'))) desc = await generateTables(tablesDir);
else desc = JSON.parse(fs.readFileSync(path.join(tablesDir, 'tables.json'), 'utf8'));
console.log(`run_diff: tables in ${tablesDir} (${secs(tGen)}): ` +
  desc.tables.map((t) => `${t.name} ${t.rows} rows`).join(', '));

// ---------------------------------------------------------------- cases
// Extra runs of a case, on a rotation: each must give DuckDB's rows too.
const VARIANTS = [
  { name: 'no-pruning', args: ['--no-stats', '--no-page-index', '--no-dictionary', '--no-bloom', '--threads', '2'] },
  { name: 'no-dictionary', args: ['--no-dictionary', '--threads', '2'] },
  { name: 'page-index+bloom', args: ['--no-stats', '--no-dictionary', '--threads', '2'] },
  { name: 'batch-rows-7', args: ['--batch-rows', '7', '--threads', '2'] },
  { name: 'one-thread', args: ['--threads', '1'] },
  // The rows as Parquet (pqtool cat --format parquet: copied and re-encoded
  // row groups), then read back as CSV: the same rows.
  { name: 'parquet', args: ['--threads', '2', '--format', 'parquet'], parquet: true },
];
// Engine bugs known to make a table's results wrong: its mismatches are
// reported but do not fail the run (until the bug is fixed: then the run says
// to remove the entry). { TABLE: 'what is wrong, where, how to reproduce' }.
// Empty: the two bugs this test found were fixed (README.md).
const KNOWN = {};

// Known engine errors, by message: a pqtool failure whose stderr matches
// { pattern, bug } is reported as known and does not fail the run.
const KNOWN_ERRORS = [];

// arrow_zstd is arrow_plain's data in another order and codec: half the cases.
const casesOf = (t) => (t.name === 'arrow_zstd' ? Math.ceil(opt.perTable / 2) : opt.perTable);

const cases = [];
for (const t of desc.tables) {
  if (opt.only && t.name !== opt.only) continue;
  generateCases(t, casesOf(t), opt.seed).forEach((c, k) => {
    if (opt.caseNo !== null && k !== opt.caseNo) return;
    cases.push({ ...c, table: t, no: k });
  });
}

function sqlOf(c) {
  const cols = (c.select ?? c.table.columns.map((x) => x.name)).map(quoteIdent).join(', ');
  // ORDER BY the table order: with one thread DuckDB mostly keeps the file
  // order, but not always (a long IN list becomes a join, which reorders).
  return `SELECT ${cols} FROM ${tableSource(tablesDir, c.table, { ordered: true })} WHERE ${c.sql} ` +
    `ORDER BY __file, file_row_number` + (c.limit !== undefined ? ` LIMIT ${c.limit}` : '');
}

function pqArgs(c, extra) {
  const a = ['cat', path.join(tablesDir, c.table.path), '--where', c.where];
  if (c.select) a.push('--select', c.select.join(','));
  if (c.limit !== undefined) a.push('--limit', String(c.limit));
  return a.concat(extra);
}

const shq = (s) => (/^[A-Za-z0-9_./=,:+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

// ---------------------------------------------------------------- DuckDB side
const WINDOW = 24;
let finishedCases = 0;
let wakeDuck = null;
function caseDone(c) {
  if (--c.pending > 0) return;
  delete c.expected;
  finishedCases++;
  if (wakeDuck) {
    const w = wakeDuck;
    wakeDuck = null;
    w();
  }
}

async function expectedResults(list) {
  const child = fork(path.join(path.dirname(fileURLToPath(import.meta.url)), 'duck_worker.mjs'), [],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const waiting = new Map();
  let ready;
  const isReady = new Promise((r) => { ready = r; });
  child.on('message', (m) => {
    if (m.ready) return ready();
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    w(m);
  });
  const died = new Promise((_, reject) => child.on('exit', (code) => {
    if (waiting.size) reject(new Error(`duck_worker.mjs exited (${code}) with queries pending`));
  }));
  died.catch(() => {});
  await Promise.race([isReady, died]);
  for (const [k, c] of list.entries()) {
    // Stay at most WINDOW cases ahead of the pqtool side (results are held in memory).
    while (k - finishedCases > WINDOW) await new Promise((r) => { wakeDuck = r; });
    const out = path.join(workDir, `expected_${k % (2 * WINDOW + 4)}.csv`);
    const reply = await Promise.race([new Promise((r) => {
      waiting.set(k, r);
      child.send({ id: k, sql: sqlOf(c), out });
    }), died]);
    if (reply.error !== undefined) c.expectedError = reply.error;
    else c.expected = fs.readFileSync(out, 'utf8');
    c.resolve();
  }
  child.send('exit');
}

// ---------------------------------------------------------------- pqtool side
function runPqtool(argv) {
  return new Promise((resolve) => {
    execFile(pqtool, argv, { maxBuffer: 1 << 30, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr, signal: err?.signal });
    });
  });
}

// Pruning done per variant (pqtool --stats), to show every rung was exercised.
const totals = {};
function addStats(variant, stderr) {
  const t = totals[variant] ??= { partition: 0, statistics: 0, dictionary: 0, 'page index': 0, bloom: 0, pages: 0, fully: 0 };
  let m = /row groups: \d+ total, \d+ pruned \(statistics (\d+), dictionary (\d+), page index (\d+), bloom filter (\d+)\), (\d+) fully matched/.exec(stderr);
  if (m) {
    t.statistics += +m[1];
    t.dictionary += +m[2];
    t['page index'] += +m[3];
    t.bloom += +m[4];
    t.fully += +m[5];
  }
  m = /files: \d+ total, (\d+) pruned by partition/.exec(stderr);
  if (m) t.partition += +m[1];
  m = /pages: \d+ in page indexes, (\d+) pruned/.exec(stderr);
  if (m) t.pages += +m[1];
}

let runs = 0, failed = 0, bothErr = 0, passed = 0;
const failures = [];

let havePython;
function csvcmpPyAgrees(expected, actual) {
  if (havePython === undefined) {
    try {
      execFileSync('python3', ['--version'], { stdio: 'ignore' });
      havePython = fs.existsSync(csvcmpPy);
    } catch {
      havePython = false;
    }
  }
  if (!havePython) return null;
  const e = path.join(workDir, 'mismatch_expected.csv'), a = path.join(workDir, 'mismatch_actual.csv');
  fs.writeFileSync(e, expected);
  fs.writeFileSync(a, actual);
  try {
    execFileSync('python3', [csvcmpPy, e, a], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

const knownHits = {};
function report(c, variant, argv, res, diffs) {
  if (KNOWN[c.table.name]) {
    knownHits[c.table.name] = (knownHits[c.table.name] ?? 0) + 1;
    passed++;
    if (!opt.verbose) return;
  } else {
    failed++;
    failures.push(`${c.table.name}#${c.no} [${variant}]`);
  }
  const lines = [];
  lines.push(`${KNOWN[c.table.name] ? 'KNOWN ' : ''}MISMATCH ${c.table.name} case ${c.no} [${variant}]`);
  lines.push(`  where:  ${c.where}`);
  lines.push(`  sql:    ${c.sql}`);
  if (c.select) lines.push(`  select: ${c.select.join(',')}`);
  if (c.limit !== undefined) lines.push(`  limit:  ${c.limit}`);
  if (c.expectedError) lines.push(`  duckdb: error: ${c.expectedError}`);
  if (res.code !== 0) lines.push(`  pqtool: exit ${res.code}${res.signal ? ` (${res.signal})` : ''}: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  for (const d of diffs) lines.push(`  ${d}`);
  lines.push(`  repro:  ${[pqtool, ...argv].map(shq).join(' ')}`);
  lines.push(`  duckdb: ${sqlOf(c).replace(/\[('[^']*', )+'[^']*'\]/g, (m) => (m.length > 300 ? '[...the table\'s files in table order...]' : m))}`);
  console.log(lines.join('\n'));
}

let parquetNo = 0;
async function check(c, variant, extra, parquet) {
  const file = parquet ? path.join(workDir, `case_${parquetNo++ % 64}.parquet`) : null;
  const argv = pqArgs(c, [...extra, '--stats', ...(parquet ? ['-o', file] : [])]);
  let res = await runPqtool(argv);
  runs++;
  if (parquet && res.code === 0) {
    const back = await runPqtool(['cat', file]);
    res = { ...back, stderr: res.stderr + back.stderr };
  }
  if (res.code === 0) addStats(variant, res.stderr);
  const pqOk = res.code === 0;
  const dkOk = c.expectedError === undefined;
  if (!pqOk && !dkOk) {
    bothErr++;
    passed++;
    if (opt.verbose) console.log(`both reject ${c.table.name}#${c.no}: ${c.where}\n  duckdb: ${c.expectedError}\n  pqtool: ${res.stderr.trim()}`);
    return;
  }
  if (!pqOk && dkOk) {
    const k = KNOWN_ERRORS.find((e) => e.pattern.test(res.stderr));
    if (k) {
      k.hits = (k.hits ?? 0) + 1;
      passed++;
      if (opt.verbose) console.log(`known engine error ${c.table.name}#${c.no} [${variant}]: ${res.stderr.trim()}`);
      return;
    }
  }
  if (!pqOk || !dkOk) return report(c, variant, argv, res, []);
  const diffs = compareCsv(c.expected, res.stdout, { maxDiffs: 6 });
  if (diffs.length === 0) {
    passed++;
    return;
  }
  const py = KNOWN[c.table.name] ? null : csvcmpPyAgrees(c.expected, res.stdout);
  if (py === true) diffs.push('(csvcmp.py finds no difference: csvcmp.mjs disagrees with it; fix the port)');
  report(c, variant, argv, res, diffs);
}

// Work items: every case once with the defaults, a rotating subset with a variant.
const items = [];
cases.forEach((c, k) => {
  c.ready = new Promise((r) => { c.resolve = r; });
  c.pending = 1;
  items.push({ c, variant: 'default', args: ['--threads', '2'] });
  if (k % 2 === 0) {
    const v = VARIANTS[(k / 2) % VARIANTS.length];
    items.push({ c, variant: v.name, args: v.args, parquet: v.parquet });
    c.pending++;
  }
});

const tRun = Date.now();
const duck = expectedResults(cases);
let next = 0;
async function worker() {
  while (next < items.length) {
    const it = items[next++];
    await it.c.ready;
    await check(it.c, it.variant, it.args, it.parquet);
    caseDone(it.c);
  }
}
await Promise.all([duck, ...Array.from({ length: Math.max(1, opt.jobs) }, worker)]);

const byTable = {};
for (const c of cases) byTable[c.table.name] = (byTable[c.table.name] ?? 0) + 1;
console.log(`run_diff: ${cases.length} cases (${Object.entries(byTable).map(([k, v]) => `${k} ${v}`).join(', ')}), ` +
  `${runs} pqtool runs in ${secs(tRun)}, ${bothErr} rejected by both`);
for (const [v, t] of Object.entries(totals)) {
  console.log(`run_diff: pruned [${v}]: files by partition ${t.partition}; row groups by statistics ${t.statistics}, ` +
    `dictionary ${t.dictionary}, page index ${t['page index']}, bloom filter ${t.bloom}, fully matched ${t.fully}; ` +
    `pages ${t.pages}`);
}
for (const [name, bug] of Object.entries(KNOWN)) {
  if (!cases.some((c) => c.table.name === name)) continue;
  if (knownHits[name]) console.log(`run_diff: ${name}: ${knownHits[name]} mismatches from a known engine bug (not counted; -v shows them): ${bug}`);
  else console.log(`run_diff: ${name}: the known bug no longer shows: remove '${name}' from KNOWN in tests/diff/run_diff.mjs (${bug})`);
}
for (const k of KNOWN_ERRORS) {
  if (k.hits) console.log(`run_diff: ${k.hits} runs failed with a known engine error (not counted): ${k.bug}`);
  else if (!opt.only && opt.caseNo === null) console.log(`run_diff: the known engine error ${k.pattern} no longer shows: remove it from KNOWN_ERRORS in tests/diff/run_diff.mjs`);
}
if (failed) {
  console.log(`run_diff: ${failed} mismatches: ${failures.slice(0, 40).join(', ')}${failures.length > 40 ? ', ...' : ''}`);
}
const ru = process.resourceUsage();
console.log(`run_diff: total ${secs(T0)} (cpu: node+duckdb ${((ru.userCPUTime + ru.systemCPUTime) / 1e6).toFixed(1)}s)`);
console.log(`diff: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
