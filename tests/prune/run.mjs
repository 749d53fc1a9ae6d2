// Pruning-ladder tests: node tests/prune/run.mjs PQTOOL DATADIR GROUP...
//
// DATADIR holds gen.mjs's files.  Groups:
//   stats      sorted data, narrow ranges: statistics prune all but the right row groups
//   fully      ranges covering whole row groups: fully matched, no row filter for them
//   pages      page index: pages pruned, rows selected < rows (pages.parquet, alltypes_tiny_pages)
//   bloom      bloom filters prune absent keys only (PLAIN chunks: no other rung can)
//   dict       dictionaries prune absent keys only (no bloom filter)
//   limit      a limit decodes and fetches only the start of big pages; rows exact
//   sweep-gen / sweep-corpus
//              untrusted statistics and bounds: for many predicates at the
//              bounds, rows with pruning == rows with every rung off == DuckDB
//   sweep-written
//              the same over files rewritten by pqfs's writer (its statistics,
//              page index and dictionaries), DuckDB reading the originals
// Every rung-specific assertion is paired with a run that disables the rung
// (--no-stats, --no-dictionary, --no-page-index, --no-bloom) and asserts that
// the counter changes while the rows stay the same.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const shared = process.env.PQFS_SHARED_DIR || path.resolve(root, '..', 'shared');
const CORPUS = path.join(shared, 'testdata', 'parquet-testing', 'data');
const CSVCMP = path.join(shared, 'tools', 'csvcmp.py');
const { openDuckDB, queryRows, sqlString, closeDuckDB } = await import(path.join(root, 'tools/js/duckdb.mjs'));

const [PQTOOL, DATA, ...GROUPS] = process.argv.slice(2);
if (!PQTOOL || !DATA || !GROUPS.length) {
  console.error('usage: run.mjs PQTOOL DATADIR GROUP...');
  process.exit(2);
}
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'pqfs-prune-'));
const db = await openDuckDB({ threads: 1 });
// The reference reads every row and filters: DuckDB's own filter pushdown
// (1.5.6) drops -0.0 and sign-bit NaN rows for `= 0` / `= 'nan'` through its
// bloom filter and dictionary checks, so it is turned off.
await db.conn.run('PRAGMA disable_optimizer');
const gen = (name) => path.join(DATA, name);
const cor = (name) => path.join(CORPUS, name);

// ---------------------------------------------------------------- reporting

const failures = [];
let checks = 0;
function expect(cond, what, repro) {
  checks++;
  if (!cond) failures.push(`${what}${repro ? `\n    repro: ${repro}` : ''}`);
  return cond;
}
function log(...a) { console.log(...a); }
const q = (s) => (/^[\w./=:,-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);
const cmdline = (args) => [PQTOOL, ...args].map(q).join(' ');

// ---------------------------------------------------------------- pqtool

function pqtool(args) {
  return new Promise((resolve) => {
    execFile(PQTOOL, args, { maxBuffer: 1 << 30, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr, args });
    });
  });
}

function parseCounters(text) {
  const c = {};
  const num = (re) => { const m = text.match(re); return m ? m.slice(1).map(Number) : null; };
  let m;
  if ((m = num(/row groups: (\d+) total, (\d+) pruned \(statistics (\d+), dictionary (\d+), page index (\d+), bloom filter (\d+)\), (\d+) fully matched/))) {
    [c.rowGroups, c.pruned, c.byStats, c.byDict, c.byPageIndex, c.byBloom, c.fullyMatched] = m;
    c.kept = c.rowGroups - c.pruned;
  }
  if ((m = num(/pages: (\d+) in page indexes, (\d+) pruned/))) [c.pages, c.pagesPruned] = m;
  if ((m = num(/rows: (\d+) total, (\d+) selected for decoding/))) [c.rows, c.rowsSelected] = m;
  if ((m = num(/bytes: (\d+) to read of (\d+)/))) [c.bytesToRead, c.bytesTotal] = m;
  if ((m = num(/scan: (\d+) row groups read, (\d+) rows filtered, (\d+) rows out, (\d+) pages read, (\d+) pages skipped, (\d+) values decoded/)))
    [c.rgRead, c.rowsFiltered, c.rowsOut, c.pagesRead, c.pagesSkipped, c.valuesDecoded] = m;
  if ((m = num(/workers: (\d+) column reads shared/))) [c.readsShared] = m;
  if ((m = num(/storage: (\d+) bytes in (\d+) reads/))) [c.storageBytes, c.storageReads] = m;
  return c;
}

async function plan(file, where, flags = [], select) {
  const args = ['plan', file, '--where', where, ...(select ? ['--select', select] : []), ...flags];
  const r = await pqtool(args);
  if (!expect(r.code === 0, `pqtool plan failed: ${r.stderr.trim()}`, cmdline(args))) return { c: {}, r };
  return { c: parseCounters(r.stdout), text: r.stdout, cmd: cmdline(args) };
}

async function cat(file, where, flags = [], select) {
  const args = ['cat', file, '--where', where, '--stats', ...(select ? ['--select', select] : []), ...flags];
  const r = await pqtool(args);
  return { code: r.code, csv: r.stdout, err: r.stderr, c: parseCounters(r.stderr), cmd: cmdline(args) };
}

// ---------------------------------------------------------------- DuckDB and csvcmp

let nth = 0;
async function duckCsv(file, where, cols) {
  const out = path.join(WORK, `duck-${nth++}.csv`);
  const list = cols.map((c) => `"${c.replaceAll('"', '""')}"`).join(', ');
  const sql = `SELECT ${list} FROM read_parquet(${sqlString(file)}) WHERE ${where}`;
  try {
    await db.conn.run(`COPY (${sql}) TO ${sqlString(out)} (FORMAT csv, HEADER, NULLSTR '')`);
  } catch (e) {
    return { error: String(e.message || e).split('\n')[0], sql };
  }
  return { path: out, sql };
}

// Pairs compared in one Python process with csvcmp.py's own main().
const csvPairs = [];
function compareLater(expectedPath, actualCsv, what, repro) {
  // Byte-identical text agrees by every rule of csvcmp: skip the Python run.
  // So does DuckDB's '-nan' for pqtool's 'nan' (csvcmp folds NaN spellings).
  const expected = fs.readFileSync(expectedPath, 'utf8');
  if (expected === actualCsv || expected.replace(/(^|,)-nan(?=,|\n|$)/gm, '$1nan') === actualCsv) {
    checks++;
    fs.unlinkSync(expectedPath);
    return;
  }
  const actual = path.join(WORK, `pq-${nth++}.csv`);
  fs.writeFileSync(actual, actualCsv);
  csvPairs.push({ expected: expectedPath, actual, what, repro });
}
let csvcmpMs = 0, csvcmpRuns = 0;
function runCsvcmp() {
  if (!csvPairs.length) return;
  const t = Date.now();
  csvcmpRuns += csvPairs.length;
  const list = path.join(WORK, 'pairs.json');
  fs.writeFileSync(list, JSON.stringify(csvPairs.map((p) => [p.expected, p.actual])));
  const py = `
import importlib.util, io, json, sys, contextlib
spec = importlib.util.spec_from_file_location('csvcmp', sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
res = []
for exp, act in json.load(open(sys.argv[2])):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        rc = m.main(['csvcmp.py', exp, act, '--max-diffs', '3'])
    res.append([rc, buf.getvalue()[-600:]])
json.dump(res, sys.stdout)
`;
  const res = JSON.parse(execFileSync('python3', ['-c', py, CSVCMP, list], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  res.forEach(([rc, text], i) => {
    const p = csvPairs[i];
    expect(rc === 0, `${p.what}: pqtool differs from DuckDB (csvcmp):\n      ${text.trim().replaceAll('\n', '\n      ')}`, p.repro);
  });
  csvPairs.length = 0;
  csvcmpMs += Date.now() - t;
}

async function columnsOf(file) {
  const rows = await queryRows(db.conn, `DESCRIBE SELECT * FROM read_parquet(${sqlString(file)})`);
  return rows.map((r) => ({ name: r.column_name, type: r.column_type }));
}

// Checks one predicate: all rungs vs none (byte-identical CSV), and DuckDB (csvcmp).
async function agree(file, where, cols, what, { duck = true, flags = [], threads, duckFile = file } = {}) {
  const select = cols.join(',');
  const t = threads ? ['--threads', String(threads)] : [];
  const [pruned, bare] = await Promise.all([
    cat(file, where, [...flags, ...t], select),
    cat(file, where, ['--no-stats', '--no-dictionary', '--no-page-index', '--no-bloom', ...t], select),
  ]);
  const ok = expect(pruned.code === 0 && bare.code === 0,
    `${what}: pqtool failed: ${(pruned.err + bare.err).split('\n').filter((l) => l.startsWith('pqtool')).join(' | ')}`, pruned.cmd);
  if (!ok) return null;
  expect(pruned.csv === bare.csv,
    `${what}: rows with pruning (${pruned.c.rowsOut}) differ from rows with every rung disabled (${bare.c.rowsOut})`,
    `${pruned.cmd}  vs  ... --no-stats --no-dictionary --no-page-index --no-bloom`);
  if (duck) {
    const d = await duckCsv(duckFile, where, cols);
    if (d.error) expect(false, `${what}: DuckDB failed: ${d.error}`, d.sql);
    else compareLater(d.path, pruned.csv, what, `${pruned.cmd}  vs DuckDB: ${d.sql}`);
  }
  return pruned;
}

const pct = (a, b) => (b ? ((100 * a) / b).toFixed(2) : 'n/a');
const ALL_OFF = ['--no-stats', '--no-dictionary', '--no-page-index', '--no-bloom'];

// ================================================================ groups

const groups = {};

// ---- statistics on sorted data: 100 row groups of 1000 ids
groups.stats = async () => {
  const f = gen('sorted.parquet');
  const cols = ['id', 'label'];
  const cases = [
    { where: 'id BETWEEN 41200 AND 41300', kept: 1, rows: 101 },
    { where: 'id = 41234', kept: 1, rows: 1 },
    { where: 'id >= 41990 AND id <= 42010', kept: 2, rows: 21 },
    { where: 'id < 0', kept: 0, rows: 0 },
    { where: 'id > 99998', kept: 1, rows: 1 },
    { where: "label = 'row-041234'", kept: 1, rows: 1 },
  ];
  // Storage bytes of a scan that reads nothing but the footer.
  const baseline = (await cat(f, 'id < 0', [], cols.join(','))).c.storageBytes;
  for (const k of cases) {
    const { c, cmd } = await plan(f, k.where);
    expect(c.rowGroups === 100, `stats: ${k.where}: 100 row groups (got ${c.rowGroups})`, cmd);
    expect(c.kept === k.kept && c.byStats === 100 - k.kept,
      `stats: ${k.where}: expected ${k.kept} row group(s) kept and ${100 - k.kept} pruned by statistics, got ${c.kept} kept, ${c.byStats} by statistics`, cmd);
    expect(c.bytesToRead * 100 <= c.bytesTotal * (k.kept * 1.05),
      `stats: ${k.where}: bytes to read ${c.bytesToRead} of ${c.bytesTotal} (${pct(c.bytesToRead, c.bytesTotal)}%) is not about ${k.kept}%`, cmd);
    const s = await agree(f, k.where, cols, `stats: ${k.where}`);
    if (s) {
      expect(s.c.rowsOut === k.rows && s.c.rgRead === k.kept,
        `stats: ${k.where}: expected ${k.rows} rows from ${k.kept} row groups read, got ${s.c.rowsOut} from ${s.c.rgRead}`, s.cmd);
      // Storage: the footer read (measured with everything pruned) plus
      // about what the plan reads (indexes add a little).
      expect(s.c.storageBytes <= baseline + 2 * c.bytesToRead,
        `stats: ${k.where}: storage read ${s.c.storageBytes} bytes: footer read ${baseline} + plan ${c.bytesToRead}`, s.cmd);
    }
    // Without the statistics rung: the counter drops to 0 (the page index may
    // take over: every chunk here is one page); without both, nothing is pruned.
    const off = (await plan(f, k.where, ['--no-stats'])).c;
    expect(off.byStats === 0, `stats: ${k.where} --no-stats: ${off.byStats} row groups still pruned by statistics`);
    const none = await plan(f, k.where, ALL_OFF);
    const full = await cat(f, k.where, ALL_OFF, cols.join(','));
    expect(full.c.rgRead === 100 && (!s || (full.csv === s.csv && s.c.storageBytes * 5 < full.c.storageBytes)),
      `stats: ${k.where}: with every rung off: ${full.c.rgRead} row groups read, storage ${full.c.storageBytes} bytes vs ${s?.c.storageBytes} pruned`, full.cmd);
    expect(none.c.pruned === 0 && none.c.bytesToRead === none.c.bytesTotal,
      `stats: ${k.where} with every rung off: ${none.c.pruned} pruned, ${none.c.bytesToRead} of ${none.c.bytesTotal} bytes`, none.cmd);
    if (k.where.startsWith('id BETWEEN'))
      log(`stats: ${k.where}: ${c.kept} of ${c.rowGroups} row groups read, ${pct(c.bytesToRead, c.bytesTotal)}% of bytes ` +
          `(${c.bytesToRead} of ${c.bytesTotal}); storage ${s?.c.storageBytes} bytes of a ${fs.statSync(f).size}-byte file; ` +
          `with every rung off: ${none.c.kept} row groups, 100% of bytes, storage ${full.c.storageBytes} bytes`);
  }
};

// ---- fully matched row groups
groups.fully = async () => {
  const f = gen('sorted.parquet');
  const cols = ['id', 'label'];
  {
    const where = 'id >= 10500 AND id < 30500';
    const { c, cmd } = await plan(f, where);
    expect(c.fullyMatched === 19 && c.byStats === 79 && c.kept === 21,
      `fully: ${where}: expected 19 fully matched, 79 pruned, 21 kept; got ${c.fullyMatched}, ${c.byStats}, ${c.kept}`, cmd);
    const s = await agree(f, where, cols, `fully: ${where}`);
    if (s) {
      // Rows run through the row filter: only the two boundary row groups' selected rows.
      expect(s.c.rowsOut === 20000, `fully: ${where}: ${s.c.rowsOut} rows out`, s.cmd);
      expect(s.c.rowsFiltered === s.c.rowsSelected - 19 * 1000 && s.c.rowsFiltered <= 2000,
        `fully: ${where}: rows filtered ${s.c.rowsFiltered} should exclude the 19000 rows of fully matched row groups (selected ${s.c.rowsSelected})`, s.cmd);
      const off = await cat(f, where, ['--no-stats'], cols.join(','));
      expect(off.c.fullyMatched === 0 && off.c.rowsFiltered >= 20000 && off.csv === s.csv,
        `fully: ${where} --no-stats: fully matched ${off.c.fullyMatched}, rows filtered ${off.c.rowsFiltered} (expected 0 and >= 20000, same rows)`, off.cmd);
      log(`fully: ${where}: ${c.fullyMatched} fully matched row groups, rows filtered ${s.c.rowsFiltered} ` +
          `(without statistics: ${off.c.rowsFiltered}), rows out ${s.c.rowsOut}`);
    }
  }
  {
    // Filter column not projected: a fully matched row group does not read it.
    const where = 'id BETWEEN 20000 AND 29999';
    const s = await cat(f, where, [], 'label');
    expect(s.code === 0 && s.c.fullyMatched === 10 && s.c.byStats === 90 && s.c.rowsFiltered === 0 && s.c.rowsOut === 10000,
      `fully: ${where} --select label: fully matched ${s.c.fullyMatched}, by statistics ${s.c.byStats}, rows filtered ${s.c.rowsFiltered}, rows out ${s.c.rowsOut}`, s.cmd);
    expect(s.c.valuesDecoded === 10000,
      `fully: ${where} --select label: ${s.c.valuesDecoded} values decoded, expected 10000 (label only; id is not read)`, s.cmd);
    const off = await cat(f, where, ['--no-stats'], 'label');
    expect(off.c.fullyMatched === 0 && off.c.rowsFiltered >= 10000 && off.c.valuesDecoded >= 20000 && off.csv === s.csv,
      `fully: ${where} --no-stats: fully matched ${off.c.fullyMatched}, rows filtered ${off.c.rowsFiltered}, values decoded ${off.c.valuesDecoded}`, off.cmd);
    const d = await duckCsv(f, where, ['label']);
    compareLater(d.path, s.csv, `fully: ${where}`, s.cmd);
  }
  for (const where of ['id >= 0', "label LIKE 'row-0%'", 'id IS NOT NULL', 'id BETWEEN -5 AND 100000']) {
    const s = await agree(f, where, cols, `fully: ${where}`);
    if (s) expect(s.c.fullyMatched === 100 && s.c.rowsFiltered === 0 && s.c.rowsOut === 100000,
      `fully: ${where}: fully matched ${s.c.fullyMatched} of 100, rows filtered ${s.c.rowsFiltered}`, s.cmd);
  }
};

// ---- page index
groups.pages = async () => {
  {
    const f = gen('pages.parquet');
    const cols = ['id', 'v', 's'];
    const where = 'id BETWEEN 1000 AND 1100';
    const { c, cmd } = await plan(f, where);
    expect(c.byStats === 1 && c.pagesPruned > 0 && c.rowsSelected >= 101 && c.rowsSelected <= 512,
      `pages: ${where}: by statistics ${c.byStats}, pages pruned ${c.pagesPruned}, rows selected ${c.rowsSelected}`, cmd);
    // Pages are counted once per column, however many conjuncts read it.
    const one = await plan(f, 'id >= 1000');
    expect(one.c.pages > 0 && c.pages === one.c.pages && c.pagesPruned < c.pages,
      `pages: ${where}: ${c.pages} pages in page indexes (${c.pagesPruned} pruned), but id >= 1000 sees ${one.c.pages}`, cmd);
    const off = await plan(f, where, ['--no-page-index']);
    expect(off.c.pagesPruned === 0 && off.c.rowsSelected === 10000,
      `pages: ${where} --no-page-index: pages pruned ${off.c.pagesPruned}, rows selected ${off.c.rowsSelected}`, off.cmd);
    const s = await agree(f, where, cols, `pages: ${where}`);
    const so = await cat(f, where, ['--no-page-index'], cols.join(','));
    if (s) {
      expect(so.csv === s.csv && s.c.rowsOut === 101, `pages: ${where}: rows differ without the page index`, so.cmd);
      expect(s.c.pagesRead < so.c.pagesRead && s.c.valuesDecoded < so.c.valuesDecoded,
        `pages: ${where}: pages read ${s.c.pagesRead} / values decoded ${s.c.valuesDecoded} not below the full scan's ${so.c.pagesRead} / ${so.c.valuesDecoded}`, s.cmd);
      expect(s.c.storageBytes < so.c.storageBytes,
        `pages: ${where}: storage bytes with the page index ${s.c.storageBytes} not below ${so.c.storageBytes} without`, s.cmd);
      log(`pages: pages.parquet ${where}: ${c.pagesPruned} of ${c.pages} page-index pages pruned, ${c.rowsSelected} of ${c.rows} rows selected; ` +
          `pages read ${s.c.pagesRead} vs ${so.c.pagesRead}, values decoded ${s.c.valuesDecoded} vs ${so.c.valuesDecoded}, ` +
          `storage ${s.c.storageBytes} vs ${so.c.storageBytes} bytes without the page index`);
    }
    // Two columns: the selections intersect.
    for (const w of ['id BETWEEN 2000 AND 6000 AND v < 10', 'id < 300 OR id > 19800', 'v = 999', "s = 'str-00007'",
      'id >= 9990 AND id < 10010']) await agree(f, w, cols, `pages: ${w}`);
    // A point lookup (2 rows): the projected columns fetch and decode only
    // the pages holding them, located by their offset indexes; the dropped
    // rows of many windows skip whole pages unread.
    {
      const w = "s = 'str-00007'";
      const only = await cat(f, w, [], 's'), all = await cat(f, w, [], cols.join(','));
      expect(all.code === 0 && all.c.rowsOut === 2 && all.c.storageBytes - only.c.storageBytes < 8192 &&
        all.c.pagesRead - only.c.pagesRead <= 4,
        `pages: ${w}: the projection (id, v) read ${all.c.storageBytes - only.c.storageBytes} bytes and ` +
        `${all.c.pagesRead - only.c.pagesRead} pages for 2 rows`, all.cmd);
    }
  }
  {
    const f = cor('alltypes_tiny_pages.parquet');
    const cols = (await columnsOf(f)).map((x) => x.name);
    for (const where of ['id BETWEEN 100 AND 200', 'id = 4000', 'id >= 7000', 'int_col = 3 AND id < 500',
      "date_string_col = '01/01/09'", 'bigint_col > 85 AND id BETWEEN 3000 AND 3100']) {
      const { c, cmd } = await plan(f, where);
      const off = await plan(f, where, ['--no-page-index']);
      const s = await agree(f, where, cols, `pages: alltypes_tiny_pages ${where}`);
      const so = await cat(f, where, ['--no-page-index']);
      if (where.startsWith('id ')) {
        expect(c.pagesPruned > 0 && c.rowsSelected < c.rows,
          `pages: alltypes_tiny_pages ${where}: pages pruned ${c.pagesPruned}, rows selected ${c.rowsSelected} of ${c.rows}`, cmd);
        expect(off.c.pagesPruned === 0 && off.c.rowsSelected === off.c.rows,
          `pages: alltypes_tiny_pages ${where} --no-page-index: pages pruned ${off.c.pagesPruned}, rows selected ${off.c.rowsSelected}`, off.cmd);
      }
      if (s) {
        expect(so.code === 0 && so.csv === s.csv, `pages: alltypes_tiny_pages ${where}: rows differ without the page index`, so.cmd);
        if (where === 'id BETWEEN 100 AND 200')
          log(`pages: alltypes_tiny_pages ${where}: ${c.pagesPruned} of ${c.pages} pages pruned, ${c.rowsSelected} of ${c.rows} rows selected, ` +
              `bytes to read ${c.bytesToRead} of ${c.bytesTotal}; pages read ${s.c.pagesRead} vs ${so.c.pagesRead}; ` +
              `storage ${s.c.storageBytes} bytes in ${s.c.storageReads} reads vs ${so.c.storageBytes} in ${so.c.storageReads} without the page index`);
      }
    }
  }
};

// ---- bloom filters
groups.bloom = async () => {
  // The generated file, and the same rows rewritten by pqfs's writer with
  // bloom filters of its own (no dictionary: no other rung can prune).
  const written = path.join(WORK, 'bloom-written.parquet');
  const rw = await pqtool(['rewrite', gen('bloom.parquet'), '-o', written, '--no-dictionary', '--bloom-filter', 'k,s,d']);
  expect(rw.code === 0, `bloom: pqtool rewrite failed: ${rw.stderr.trim()}`, cmdline(rw.args));
  for (const f of [gen('bloom.parquet'), written]) await bloomChecks(f);
  await bloomCorpus();
};

async function bloomChecks(f) {
  const cols = ['id', 'k', 's', 'd'];
  const absent = ['k = 2000000000', "s = 'key-3000'", 'k IN (2000000000, 2000000001)', "s IN ('key-3000', 'key-3001')",
    "k = 2000000000 AND s = 'key-12345'"];
  const present = ['k = 777777777', "s = 'key-12345'", 'k IN (2000000000, 777777777)', "s IN ('key-3000', 'key-12345')"];
  for (const where of absent) {
    const { c, cmd } = await plan(f, where);
    expect(c.byBloom === 10 && c.byStats + c.byDict + c.byPageIndex === 0,
      `bloom: absent ${where}: ${c.byBloom} of 10 pruned by bloom filter (statistics ${c.byStats}, dictionary ${c.byDict}, page index ${c.byPageIndex})`, cmd);
    const off = await plan(f, where, ['--no-bloom']);
    expect(off.c.pruned === 0, `bloom: absent ${where} --no-bloom: ${off.c.pruned} pruned (no other rung can)`, off.cmd);
    const s = await agree(f, where, cols, `bloom: ${where}`);
    if (s) expect(s.c.rowsOut === 0 && s.c.rgRead === 0, `bloom: ${where}: ${s.c.rowsOut} rows, ${s.c.rgRead} row groups read`, s.cmd);
  }
  for (const where of present) {
    const { c, cmd } = await plan(f, where);
    expect(c.pruned === 0, `bloom: present ${where}: ${c.pruned} pruned (bloom ${c.byBloom})`, cmd);
    const s = await agree(f, where, cols, `bloom: ${where}`);
    if (s) expect(s.c.rowsOut === 10, `bloom: present ${where}: ${s.c.rowsOut} rows, expected 10`, s.cmd);
  }
  // Floating equality matches -0.0 and NaNs of any sign, whose PLAIN bytes
  // (what the filter hashed) differ from the literal's.
  for (const [where, rows] of [['d = 0', 1], ['d = -0.0', 1], ["d = 'nan'", 1], ["d IN (0, 'nan')", 2]]) {
    const s = await agree(f, where, cols, `bloom: ${where}`);
    if (s) expect(s.c.rowsOut === rows, `bloom: ${where}: ${s.c.rowsOut} rows, expected ${rows}`, s.cmd);
  }
}

async function bloomCorpus() {
  // Corpus: PLAIN string chunk with a bloom filter, and one without its length.
  for (const name of ['data_index_bloom_encoding_stats.parquet', 'data_index_bloom_encoding_with_length.parquet']) {
    const g = cor(name);
    const a = await plan(g, "String = 'ice cream'");
    expect(a.c.byBloom === 1, `bloom: ${name}: 'ice cream' (between min and max, absent) not pruned by the bloom filter`, a.cmd);
    const ao = await plan(g, "String = 'ice cream'", ['--no-bloom']);
    expect(ao.c.pruned === 0, `bloom: ${name} --no-bloom: ${ao.c.pruned} pruned`, ao.cmd);
    for (const w of ["String = 'jumps'", "String = 'Hello'", "String = 'today'", "String = 'ice cream'", "String IN ('ice cream', 'dog')"]) {
      const p = await plan(g, w);
      if (w !== "String = 'ice cream'") expect(p.c.pruned === 0, `bloom: ${name}: present ${w} pruned`, p.cmd);
      await agree(g, w, ['String'], `bloom: ${name} ${w}`);
    }
  }
  {
    const g = gen('dict_bloom.parquet');
    for (const where of ['c = 51', "fruit = 'mango'", 'dz = 3']) {
      const p = await plan(g, where, ['--no-dictionary']);
      expect(p.c.byBloom === 10, `bloom: dict_bloom ${where} --no-dictionary: ${p.c.byBloom} of 10 pruned by bloom filter`, p.cmd);
      const o = await plan(g, where, ['--no-dictionary', '--no-bloom']);
      expect(o.c.pruned === 0, `bloom: dict_bloom ${where} --no-dictionary --no-bloom: ${o.c.pruned} pruned`, o.cmd);
    }
    for (const where of ['dz = 0', "dz = 'nan'", 'dz = -1.5', 'c = 50'])
      await agree(g, where, ['id', 'c', 'fruit', 'dz'], `bloom: dict_bloom ${where} --no-dictionary`, { flags: ['--no-dictionary'] });
  }
  await typedProbes(gen('dict_bloom.parquet'), 'bloom', ['--no-dictionary', '--no-page-index'], 'byBloom');
  log('bloom: absent keys: 10 of 10 row groups pruned by the bloom filter (0 with --no-bloom); present keys: 0 pruned');
}

// Typed probes on dict.parquet / dict_bloom.parquet (gen.mjs): [predicate,
// present?]; every absent value lies between each row group's min and max.
const TYPED_PROBES = [
  ['amt = 12.50', true], ['amt = 12.5', true], ['amt = 12.51', false], ['amt = 13', false],
  ["day = '2024-01-05'", true], ["day = '2024-01-04'", false],
  ["ts = '2024-01-01 00:04:00'", true], ["ts = '2024-01-01 00:03:00'", false],
  ["ts = '2024-01-01 00:04:00.000001'", false],
  ['f = 2.5', true], ['f = 2.25', false],
  ['t = -10', true], ['t = -9', false],
  ['u = 18446744073709551615', true], ['u = 18446744073709551614', false],
];
const TYPED_COLS = ['id', 'amt', 'day', 'ts', 'f', 't', 'u'];

// Each typed probe through one rung (the others off but statistics, which
// cannot prune these): absent values pruned in all 10 row groups, present
// ones in none, rows equal to DuckDB's.
async function typedProbes(file, rung, flags, counter) {
  for (const [where, present] of TYPED_PROBES) {
    const p = await plan(file, where, flags);
    expect(p.c.byStats === 0 && p.c[counter] === (present ? 0 : 10),
      `${rung}: ${path.basename(file)} ${where} (${present ? 'present' : 'absent'}): ${p.c[counter]} of 10 pruned by the ${rung} rung, statistics ${p.c.byStats}`, p.cmd);
    const s = await agree(file, where, TYPED_COLS, `${rung}: ${path.basename(file)} ${where}`, { flags });
    if (s) expect((s.c.rowsOut > 0) === present, `${rung}: ${path.basename(file)} ${where}: ${s.c.rowsOut} rows`, s.cmd);
  }
}

// ---- dictionaries
groups.dict = async () => {
  const f = gen('dict.parquet');
  const cols = ['id', 'c', 'fruit', 'dz'];
  for (const where of ['c = 51', 'c IN (51, 77)', "fruit = 'mango'", "fruit IN ('mango', 'zucchini')", 'dz = 3', 'c = 51 AND id < 100000']) {
    const { c, cmd } = await plan(f, where);
    expect(c.byDict === 10 && c.byStats === 0, `dict: ${where}: ${c.byDict} of 10 pruned by the dictionary (statistics ${c.byStats})`, cmd);
    const off = await plan(f, where, ['--no-dictionary']);
    expect(off.c.pruned === 0, `dict: ${where} --no-dictionary: ${off.c.pruned} pruned (no other rung can)`, off.cmd);
    const s = await agree(f, where, cols, `dict: ${where}`);
    if (s) expect(s.c.rowsOut === 0 && s.c.rgRead === 0, `dict: ${where}: ${s.c.rowsOut} rows, ${s.c.rgRead} row groups read`, s.cmd);
  }
  for (const [where, rows] of [['c = 50', 400], ["fruit = 'kiwi'", 1000], ['c IN (51, 0)', 400], ['dz = 0', 4000],
    ['dz = -0.0', 4000], ["dz = 'nan'", 4000], ['dz = 2.5', 4000], ["dz IN (3, 'nan')", 4000]]) {
    const { c, cmd } = await plan(f, where);
    expect(c.pruned === 0, `dict: present ${where}: ${c.pruned} pruned`, cmd);
    const s = await agree(f, where, cols, `dict: ${where}`);
    if (s) expect(s.c.rowsOut === rows, `dict: ${where}: ${s.c.rowsOut} rows, expected ${rows}`, s.cmd);
    // A dictionary that keeps its row group hands its bytes to the scan:
    // no byte is read twice for it.
    const on = await cat(f, where), off = await cat(f, where, ['--no-dictionary']);
    expect(on.c.storageBytes > 0 && on.c.storageBytes <= off.c.storageBytes,
      `dict: present ${where}: storage ${on.c.storageBytes} bytes with the dictionary rung, ${off.c.storageBytes} without`, on.cmd);
  }
  {
    // Dictionary then PLAIN fallback pages: values past the fallback are not
    // in the dictionary, so the rung must keep the row group.
    const g = gen('dict_fallback.parquet');
    for (const [where, rows] of [['v = 4999', 1], ['v = 3', 1], ["s = 'k04999'", 1], ["s = 'k00002'", 1],
      ['v IN (4998, 7)', 2], ['v = 4999 AND s = \'k04999\'', 1]]) {
      const p = await plan(g, where);
      expect(p.c.byDict === 0, `dict: dict_fallback ${where}: pruned by the dictionary, which lacks the PLAIN pages' values`, p.cmd);
      const s = await agree(g, where, ['id', 'v', 's'], `dict: dict_fallback ${where}`);
      if (s) expect(s.c.rowsOut === rows, `dict: dict_fallback ${where}: ${s.c.rowsOut} rows, expected ${rows}`, s.cmd);
    }
  }
  {
    const g = gen('dict_bloom.parquet');
    // Bloom filters run before dictionaries (a filter is a few KiB, a
    // dictionary page can be megabytes); without them the dictionary prunes.
    const p = await plan(g, 'c = 51');
    expect(p.c.byBloom === 10 && p.c.byDict === 0,
      `dict: dict_bloom c = 51: ${p.c.byBloom} of 10 pruned by the bloom filter (the rung before the dictionary), ${p.c.byDict} by the dictionary`, p.cmd);
    const q = await plan(g, 'c = 51', ['--no-bloom']);
    expect(q.c.byDict === 10, `dict: dict_bloom c = 51 --no-bloom: ${q.c.byDict} of 10 pruned by the dictionary`, q.cmd);
  }
  // The footer's speculative 64 KiB tail read is kept: a full scan reads no
  // byte of these files twice (at most the file size; the magic at the start
  // is never read).
  for (const name of ['dict.parquet', 'pages.parquet', 'sorted.parquet']) {
    const all = await cat(gen(name), 'true');
    const size = fs.statSync(gen(name)).size;
    expect(all.code === 0 && size > 65536 && all.c.storageBytes <= size,
      `dict: full scan of ${name}: storage ${all.c.storageBytes} bytes of a ${size}-byte file`, all.cmd);
  }
  await typedProbes(gen('dict.parquet'), 'dictionary', ['--no-page-index', '--no-bloom'], 'byDict');
  await typedProbes(gen('dict_bloom.parquet'), 'dictionary', ['--no-page-index', '--no-bloom'], 'byDict');
  log('dict: absent values: 10 of 10 row groups pruned by the dictionary (0 with --no-dictionary); present values: 0 pruned');
};

// ---- limit: the first rows of big pages

// A limit that ends early in a row group decodes only the start of its pages
// and fetches only the start of its chunks (streaming codecs): the rows must
// be exactly the first N of the full output, which agrees with DuckDB.
groups.limit = async () => {
  const names = ['limit_zstd', 'limit_gzip', 'limit_lz4_raw', 'limit_snappy', 'limit_rs_zstd', 'limit_rs_gzip', 'limit_rs_lz4_raw',
    'limit_rs_plain_zstd', 'limit_rs_plain_gzip'];
  for (const name of names) {
    const f = gen(`${name}.parquet`);
    const cols = (await columnsOf(f)).map((c) => c.name);
    const full = await agree(f, 'true', cols, `limit: ${name} all rows`);
    if (!full) continue;
    const lines = full.csv.split('\n');
    for (const n of [1, 2, 10, 999, 7000, 19999, 20000, 20001, 29999, 30001, 119999]) {
      const args = ['cat', f, '--limit', String(n), '--stats'];
      const r = await pqtool(args);
      expect(r.code === 0 && r.stdout === lines.slice(0, n + 1).join('\n') + '\n',
        `limit: ${name} --limit ${n}: not the first ${n} rows of the full output (${r.stderr.trim().split('\n')[0]})`, cmdline(args));
    }
    const small = await pqtool(['cat', f, '--limit', '10', '--stats']);
    const c = parseCounters(small.stderr);
    // DuckDB's files hold one page per chunk: only the chunks' starts are
    // read.  arrow-rs's pages come from the offset index: only the start of
    // the page that holds the last row (its dictionaries are read whole, so
    // only the files without them are checked).
    const prefixFetch = !name.endsWith('snappy') && (!name.startsWith('limit_rs') || name.startsWith('limit_rs_plain'));
    expect(!prefixFetch || c.storageBytes * 3 < full.c.storageBytes,
      `limit: ${name} --limit 10: storage ${c.storageBytes} bytes, the full scan ${full.c.storageBytes}`, cmdline(small.args));
    // snappy cannot decode a page's start alone: its chunks are fetched
    // whole, in as few requests as a full scan (not a start, then the rest)
    if (name.endsWith('snappy'))
      expect(c.storageReads <= full.c.storageReads,
        `limit: ${name} --limit 10: ${c.storageReads} storage reads, the full scan ${full.c.storageReads}`, cmdline(small.args));
    if (name === 'limit_rs_plain_gzip') {
      // The first pages, nearly whole, hold 32000 rows (256 KiB of int64);
      // gzip streams, so 10 rows need a few KiB of each (fetching the whole
      // first pages reads half as much as 32000 rows).
      const page = await pqtool(['cat', f, '--limit', '32000', '--stats']);
      const p = parseCounters(page.stderr);
      expect(c.storageBytes < 0.35 * p.storageBytes,
        `limit: ${name} --limit 10: storage ${c.storageBytes} bytes, --limit 32000 (about the first pages) ${p.storageBytes}`, cmdline(small.args));
    }
  }
  // Both bound the projection by the last row the filter keeps (the
  // pre-pass; DuckDB's one-page chunks): rows near the start of the row group
  // must read less than the same rows near its end.
  const earlyReadsLess = async (f, early, late, rows, ratio, what) => {
    const cols = (await columnsOf(f)).map((c) => c.name);
    const a = await agree(f, early[0], cols, `limit: ${what} ${early[1]}`);
    const b = await agree(f, late[0], cols, `limit: ${what} ${late[1]}`);
    if (a && b)
      expect(a.c.rowsOut === rows && b.c.rowsOut === rows && a.c.storageBytes < ratio * b.c.storageBytes,
        `limit: a ${what} ${early[1]} of 120000 read ${a.c.storageBytes} bytes, ${late[1]} ${b.c.storageBytes}`, a.cmd);
  };
  // A point lookup decodes the filter column first and, before it opens the
  // projection, the rest of the row group's filter: no row past the last
  // kept one is fetched or decoded.
  await earlyReadsLess(gen('limit_zstd.parquet'), ["s = 'name-75450xxx'", 'at row 36000'],
    ["s = 'name-72307'", 'at row 119990'], 1, 0.8, 'point lookup');
  // A range over sorted data: its first window keeps one run of rows, so the
  // pre-pass finds where the run ends.
  await earlyReadsLess(gen('limit_zstd.parquet'), ['id BETWEEN 30000 AND 34000', 'ending at row 34000'],
    ['id BETWEEN 110000 AND 114000', 'ending at row 114000'], 4001, 0.6, 'range');
  // The same kind of lookup in arrow-rs's pages (larger than a 4096-row
  // window): the dropped windows add up to whole pages skipped, so each
  // projected column decodes only the page holding the row.
  {
    const f = gen('limit_rs_zstd.parquet');
    const cols = (await columnsOf(f)).map((c) => c.name);
    const w = "s = 'name-38123xx'";
    const only = await cat(f, w, [], 's'), all = await agree(f, w, cols, 'limit: arrow-rs point lookup');
    if (all)
      expect(only.code === 0 && all.c.rowsOut === 1 && all.c.pagesRead - only.c.pagesRead <= cols.length - 1,
        `limit: ${w} on limit_rs_zstd: the ${cols.length - 1} projected columns read ${all.c.pagesRead - only.c.pagesRead} pages for 1 row`, all.cmd);
  }
  // Column reads shared between workers: two one-row-group files, each
  // projecting nine columns of 120000 rows; a worker whose unit ends first
  // takes over columns of the other's.  Whether it gets there in time is
  // the scheduler's call, so the check is over 40 runs: every run gives the
  // bytes of one thread, and some runs share.
  {
    const files = [gen('limit_zstd.parquet'), gen('limit_gzip.parquet')];
    const w = 'id % 1000 = 7';
    const run = (threads) => pqtool(['cat', ...files, '--where', w, '--stats', '--threads', String(threads)]);
    const one = await run(1);
    let same = 0, shared = 0, sharing = 0;
    for (let i = 0; i < 40; i++) {
      const two = await run(2);
      const c = parseCounters(two.stderr);
      if (two.code === 0 && two.stdout === one.stdout) same++;
      shared += c.readsShared ?? 0;
      if (c.readsShared > 0) sharing++;
    }
    const cmd = cmdline(['cat', ...files, '--where', w, '--stats', '--threads', '2']);
    expect(one.code === 0 && one.stdout.split('\n').length === 2 * 120 + 2, `limit: ${w} over two files: ${one.stdout.split('\n').length - 2} rows, expected 240`, cmd);
    expect(same === 40, `limit: ${w} with 2 threads: ${40 - same} of 40 runs differ from 1 thread`, cmd);
    expect(shared > 0, `limit: ${w} with 2 threads: no column read shared in 40 runs`, cmd);
    log(`limit: shared column reads in ${sharing} of 40 two-thread runs (${shared} reads), all equal to one thread's output`);
  }
  // A table's footers are read by several threads at once; of two broken
  // files the error names the first in table order, as a read in order would.
  {
    const dir = path.join(WORK, 'broken-table');
    fs.mkdirSync(dir, { recursive: true });
    const good = fs.readFileSync(gen('dict.parquet'));
    fs.writeFileSync(path.join(dir, 'a.parquet'), good);
    fs.writeFileSync(path.join(dir, 'b.parquet'), good.subarray(0, 3000));
    fs.writeFileSync(path.join(dir, 'c.parquet'), good.subarray(0, 5000));
    let named = 0;
    for (let i = 0; i < 10; i++) {
      const r = await pqtool(['cat', dir, '--threads', '2']);
      if (r.code !== 0 && r.stderr.includes('b.parquet') && !r.stderr.includes('c.parquet')) named++;
    }
    expect(named === 10, `limit: a table with broken b.parquet and c.parquet: ${10 - named} of 10 runs did not fail naming b.parquet alone`,
      cmdline(['cat', dir, '--threads', '2']));
  }
  log(`limit: ${names.length} files, first rows equal the full output's; on DuckDB's zstd, gzip, lz4_raw files a small limit reads under a third of the bytes`);
};

// ---- sweeps: predicates at the bounds, pruned == unpruned == DuckDB

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|DECIMAL.*)$/;
const FLOATING = /^(FLOAT|DOUBLE)$/;

function literal(type, text) {
  if (text === null || text === undefined) return null;
  if (FLOATING.test(type)) return /^-?(nan|inf)/i.test(text) ? sqlString(text.toLowerCase()) : text;
  if (NUMERIC.test(type)) return text;
  if (type === 'BOOLEAN') return text === 'true' ? 'true' : 'false';
  return sqlString(text);
}

// Distinct probe values of a column: data min/max per row group, and the
// writer's statistics (what the rungs see, truncated or NaN included).
async function probeValues(file, col, type) {
  const ident = `"${col.replaceAll('"', '""')}"`;
  const f = sqlString(file);
  const asText = FLOATING.test(type) ? `CAST(CAST(%s AS DOUBLE) AS VARCHAR)` : `CAST(%s AS VARCHAR)`;
  const T = (x) => asText.replace('%s', x);
  const vals = new Set();
  const rgs = await queryRows(db.conn, `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(${f}) ORDER BY row_group_id`);
  let start = 0n;
  const bounds = [];
  for (const r of rgs) {
    bounds.push([start, start + BigInt(r.row_group_num_rows)]);
    start += BigInt(r.row_group_num_rows);
  }
  if (bounds.length) {
    const cases = bounds.map(([a, b], i) => `WHEN file_row_number < ${b} THEN ${i}`).join(' ');
    const rows = await queryRows(db.conn, `SELECT ${T(`min(${ident})`)} AS lo, ${T(`max(${ident})`)} AS hi,
        ${T(`min(${ident}) FILTER (NOT isnan(${FLOATING.test(type) ? ident : '0'}))`)} AS lo2,
        ${T(`max(${ident}) FILTER (NOT isnan(${FLOATING.test(type) ? ident : '0'}))`)} AS hi2
      FROM read_parquet(${f}, file_row_number = true) GROUP BY CASE ${cases} END`);
    for (const r of rows) for (const v of [r.lo, r.hi, r.lo2, r.hi2]) if (v !== null) vals.add(v);
  }
  if (type !== 'BLOB') {
    const leaf = await queryRows(db.conn, `SELECT stats_min_value a, stats_max_value b, stats_min c, stats_max d
      FROM parquet_metadata(${f}) WHERE path_in_schema = ${sqlString(col)}`);
    for (const r of leaf)
      for (const v of [r.a, r.b, r.c, r.d]) {
        if (v === null) continue;
        const ok = await queryRows(db.conn, `SELECT ${T(`TRY_CAST(${sqlString(v)} AS ${type})`)} AS x`);
        if (ok[0].x !== null && (type !== 'VARCHAR' || !v.includes('\uFFFD'))) vals.add(ok[0].x);
      }
  }
  if (!vals.size) return [];
  // Sorted by the column's order (floats as doubles, strings bytewise).
  const key = FLOATING.test(type) ? 'DOUBLE' : type;
  const sorted = await queryRows(db.conn, `SELECT x FROM (VALUES ${[...vals].map((v) => `(${sqlString(v)})`).join(', ')}) t(x)
    ORDER BY TRY_CAST(x AS ${key}) NULLS LAST, x`);
  return sorted.map((r) => r.x);
}

function thin(list, n) {
  if (list.length <= n) return list;
  const out = [];
  for (let i = 0; i < n; i++) out.push(list[Math.floor((i * (list.length - 1)) / (n - 1))]);
  return [...new Set(out)];
}

const UNSIGNED_EDGES = {
  UTINYINT: ['127', '128', '255', '256', '-1'],
  USMALLINT: ['32767', '32768', '65535'],
  UINTEGER: ['2147483647', '2147483648', '4294967295'],
  UBIGINT: ['9223372036854775807', '9223372036854775808', '18446744073709551615', '-1'],
};

// Predicates at a column's probe values (sorted by the caller's order).  The
// extreme values get every comparison; the others =, < and >.
function predicatesFor(col, type, values, light = false) {
  const c = `"${col.replaceAll('"', '""')}"`;
  if (light) {
    // Files whose rungs have their own group: the bounds only.
    const preds = [`${c} IS NULL`];
    for (const v of values) {
      const L = literal(type, v);
      if (L !== null) preds.push(`${c} = ${L}`, `${c} < ${L}`, `${c} >= ${L}`);
    }
    if (FLOATING.test(type)) preds.push(`${c} = 'nan'`, `${c} = 0`, `${c} > 'nan'`);
    return preds;
  }
  const preds = [`${c} IS NULL`, `${c} IS NOT NULL`];
  if (type === 'BOOLEAN') return [...preds, `${c} = true`, `${c} = false`, `${c} <> true`, `NOT ${c}`];
  if (!NUMERIC.test(type) && !FLOATING.test(type) && type !== 'VARCHAR' && type !== 'DATE' && type !== 'BLOB') return preds;
  if (type === 'BLOB') {
    // Printable ASCII only: literal text means the same bytes to both readers.
    const ascii = values.filter((v) => /^[\x20-\x7e]*$/.test(v) && !v.includes('\\'));
    for (const v of ascii) preds.push(`${c} = ${sqlString(v)}`, `${c} < ${sqlString(v)}`, `${c} >= ${sqlString(v)}`);
    return preds;
  }
  const lits = values.map((v) => literal(type, v)).filter((x) => x !== null);
  lits.forEach((L, i) => {
    const edge = i === 0 || i === lits.length - 1;
    for (const op of edge ? ['=', '<', '<=', '>', '>='] : ['=', '<', '>']) preds.push(`${c} ${op} ${L}`);
  });
  if (lits.length) preds.push(`${c} <> ${lits[0]}`);
  for (let i = 0; i + 1 < lits.length; i += 2) preds.push(`${c} BETWEEN ${lits[i]} AND ${lits[i + 1]}`);
  if (lits.length >= 2) {
    preds.push(`${c} IN (${lits[0]}, ${lits[lits.length - 1]})`, `${c} NOT IN (${lits[0]}, ${lits[1]})`,
      `${c} IN (${lits[1]}, NULL)`);
  }
  if (FLOATING.test(type)) {
    for (const op of ['=', '<', '>=', '<>']) preds.push(`${c} ${op} 'nan'`);
    for (const op of ['=', '<', '>']) preds.push(`${c} ${op} 0`);
    preds.push(`${c} = -0.0`, `${c} = 'inf'`, `${c} > '-inf'`, `${c} IN (0, 'nan')`);
  }
  for (const x of UNSIGNED_EDGES[type] || []) for (const op of ['=', '<', '>=']) preds.push(`${c} ${op} ${x}`);
  if (type === 'VARCHAR') {
    for (const v of values) {
      const chars = [...v];
      for (const n of [1, 3, 64]) {
        if (n >= chars.length) continue;
        const p = chars.slice(0, n).join('');
        if (/[%_\\]/.test(p)) continue;
        preds.push(`${c} LIKE ${sqlString(p + '%')}`);
      }
    }
    if (values.length && values[0].length > 1 && !/[%_\\]/.test(values[0][0])) preds.push(`${c} NOT LIKE ${sqlString(values[0][0] + '%')}`);
  }
  return [...new Set(preds)];
}

async function sweep(files, label) {
  let total = 0;
  const rng = (() => { let s = 12345; return () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32); })();
  // PRUNE_ONLY=name.parquet narrows a sweep to one file (debugging).
  if (process.env.PRUNE_ONLY) files = files.filter((x) => path.basename(x.file) === process.env.PRUNE_ONLY);
  for (const { file, columns, maxValues = 5, light = false, showAll = true, prunes = true, duckFile = file } of files) {
    const t1 = Date.now();
    const all = await columnsOf(duckFile);
    const scalar = all.filter((x) => !/[[\]]|STRUCT|MAP|UNION/.test(x.type));
    const tested = columns ? scalar.filter((x) => columns.includes(x.name)) : scalar;
    const shown = (showAll ? scalar : tested).map((x) => x.name);
    const perCol = [];
    for (const { name, type } of tested) {
      const values = thin(await probeValues(duckFile, name, type), maxValues);
      perCol.push(predicatesFor(name, type, values, light));
    }
    const preds = perCol.flat();
    // Conjunctions and disjunctions across columns.
    for (let i = 0; i < (light ? 2 : 4) && perCol.length >= 2; i++) {
      const a = perCol[Math.floor(rng() * perCol.length)], b = perCol[Math.floor(rng() * perCol.length)];
      const x = a[Math.floor(rng() * a.length)], y = b[Math.floor(rng() * b.length)];
      preds.push(`(${x}) AND (${y})`, `(${x}) OR (${y})`, `NOT ((${x}) AND (${y}))`);
    }
    const work = { pruned: 0, fully: 0, pages: 0 };
    const pool = Math.max(2, os.cpus().length);
    let next = 0;
    await Promise.all(Array.from({ length: pool }, async () => {
      while (next < preds.length) {
        const where = preds[next++];
        const r = await agree(file, where, shown, `${label}: ${path.basename(file)}: ${where}`, { threads: 1, duckFile });
        if (r) {
          work.pruned += r.c.pruned || 0;
          work.fully += r.c.fullyMatched || 0;
          work.pages += r.c.pagesPruned || 0;
        }
      }
    }));
    runCsvcmp();
    total += preds.length;
    // Not vacuous: the rungs did prune (where the file's statistics allow it).
    if (prunes) expect(work.pruned + work.fully + work.pages > 0, `${label}: ${path.basename(file)}: no predicate pruned anything`);
    log(`${label}: ${path.basename(file)}: ${((Date.now() - t1) / 1000).toFixed(1)} s, ${preds.length} predicates over ` +
        `${tested.map((x) => `${x.name} ${x.type}`).join(', ')}; pruned ${work.pruned} row groups and ${work.pages} pages, ` +
        `${work.fully} row groups fully matched`);
  }
  log(`${label}: ${total} predicates`);
}

groups['sweep-gen'] = async () => {
  const light = { light: true, showAll: false, maxValues: 3 };
  await sweep([
    { file: gen('nan.parquet'), columns: ['d', 'f'] }, { file: gen('nan_rs.parquet'), columns: ['d', 'f'] },
    { file: gen('long_strings.parquet'), columns: ['s', 'b'], maxValues: 6 },
    { file: gen('unsigned.parquet'), columns: ['u8', 'u16', 'u32', 'u64'], maxValues: 3 },
    { file: gen('unsigned_rs.parquet'), columns: ['u8', 'u16', 'u32', 'u64'], maxValues: 3 },
    { file: gen('pages.parquet'), ...light }, { file: gen('sorted.parquet'), ...light },
    { file: gen('dict.parquet'), columns: ['c', 'fruit', 'dz'], ...light },
    { file: gen('dict_bloom.parquet'), columns: ['c', 'fruit', 'dz'], ...light },
    { file: gen('bloom.parquet'), columns: ['k', 's', 'd'], ...light },
    { file: gen('dict_fallback.parquet'), columns: ['v', 's'], ...light },
  ], 'sweep-gen');
};

groups['sweep-corpus'] = async () => {
  await sweep([
    { file: cor('binary_truncated_min_max.parquet'), maxValues: 3 },
    { file: cor('nan_in_stats.parquet') },
    { file: cor('floating_orders_nan_count.parquet'), maxValues: 3 },
    { file: cor('single_nan.parquet') },
    { file: cor('float16_nonzeros_and_nans.parquet') },
    // No statistics at all (Impala 1.3): nothing to prune, rows must still agree.
    { file: cor('alltypes_plain.parquet'), columns: ['id', 'bool_col', 'bigint_col', 'float_col', 'string_col'], maxValues: 3, prunes: false },
    { file: cor('alltypes_dictionary.parquet'), columns: ['id', 'double_col', 'string_col'], maxValues: 3, prunes: false },
    { file: cor('alltypes_tiny_pages.parquet'), columns: ['id', 'tinyint_col', 'float_col', 'date_string_col'], maxValues: 3 },
    { file: cor('datapage_v2.snappy.parquet'), columns: ['a', 'b', 'c', 'd'], maxValues: 3 },
    { file: cor('int32_decimal.parquet') }, { file: cor('int64_decimal.parquet') },
    { file: cor('fixed_length_decimal.parquet') }, { file: cor('byte_array_decimal.parquet'), prunes: false },
    { file: cor('nullable.impala.parquet'), columns: ['id'] },
    { file: cor('int32_with_null_pages.parquet') },
    { file: cor('data_index_bloom_encoding_stats.parquet'), maxValues: 4 },
    { file: cor('data_index_bloom_encoding_with_length.parquet'), maxValues: 4 },
    { file: cor('sort_columns.parquet'), maxValues: 3 },
  ], 'sweep-corpus');
};

// Files written by pqfs's writer (pqtool rewrite, small pages: many pages per
// chunk, so the page index matters; or chunks copied with --copy): pruning
// with the statistics, page index and dictionaries in them must keep exactly
// the rows of a scan without them, and DuckDB's rows from the original file.
groups['sweep-written'] = async () => {
  const rewrite = async (src, flags = ['--page-size', '2048']) => {
    const out = path.join(WORK, `written${flags.includes('--copy') ? '-copy' : ''}-${path.basename(src)}`);
    const r = await pqtool(['rewrite', src, '-o', out, ...flags]);
    expect(r.code === 0, `pqtool rewrite ${src} failed: ${r.stderr.trim()}`, cmdline(r.args));
    return { file: out, duckFile: src };
  };
  const light = { light: true, showAll: false, maxValues: 3 };
  await sweep([
    { ...await rewrite(gen('nan.parquet')), columns: ['d', 'f'] },
    { ...await rewrite(gen('long_strings.parquet')), columns: ['s', 'b'], maxValues: 6 },
    { ...await rewrite(gen('unsigned.parquet')), columns: ['u8', 'u16', 'u32', 'u64'], maxValues: 3 },
    { ...await rewrite(gen('sorted.parquet')), ...light },
    { ...await rewrite(gen('pages.parquet'), ['--page-size', '4096', '--no-dictionary']), ...light },
    { ...await rewrite(gen('dict.parquet')), columns: ['c', 'fruit', 'dz'], ...light },
    { ...await rewrite(cor('int32_with_null_pages.parquet')) },
    { ...await rewrite(cor('alltypes_tiny_pages.parquet')), columns: ['id', 'tinyint_col', 'float_col', 'date_string_col'], maxValues: 3 },
    { ...await rewrite(cor('float16_nonzeros_and_nans.parquet')), prunes: false },
    { ...await rewrite(cor('fixed_length_decimal.parquet')), prunes: false },
    // Chunks copied byte for byte, with their page index rebased.
    { ...await rewrite(cor('alltypes_tiny_pages.parquet'), ['--copy']), columns: ['id', 'tinyint_col', 'float_col'], maxValues: 3 },
    { ...await rewrite(gen('pages.parquet'), ['--copy']), ...light },
    { ...await rewrite(cor('nan_in_stats.parquet'), ['--copy']) },
  ], 'sweep-written');
};

// ================================================================ main

const t0 = Date.now();
try {
  for (const g of GROUPS) {
    if (!groups[g]) throw new Error(`unknown group ${g}`);
    const before = failures.length;
    await groups[g]();
    runCsvcmp();
    log(`${g}: ${failures.length - before ? `${failures.length - before} FAILED` : 'ok'}`);
  }
} finally {
  closeDuckDB(db);
  if (!failures.length) fs.rmSync(WORK, { recursive: true, force: true });
}
log(`${checks} checks, ${failures.length} failures, ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
    `(csvcmp: ${csvcmpRuns} comparisons, ${(csvcmpMs / 1000).toFixed(1)} s)`);
if (failures.length) {
  const shown = failures.slice(0, 40);
  console.log(`FAIL:\n  ${shown.join('\n  ')}${failures.length > shown.length ? `\n  ... and ${failures.length - shown.length} more` : ''}`);
  console.log(`(work files kept in ${WORK})`);
  process.exit(1);
}
