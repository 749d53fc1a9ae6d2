#!/usr/bin/env node
// Times reading a view through the FUSE mount against `pqtool cat` of the same
// view (the FUSE overhead) and DuckDB writing the same rows as CSV, side by
// side in one run; plus the time to the first line of a full table.
//
//   node tools/bench/bench_mount.mjs FILE.parquet|LAKEDIR [--table T] [--where EXPR]
//                                    [--runs N] [--warmup N] [--build DIR] [--no-check]
//
// FILE.parquet (e.g. gen_cat_data.mjs's) is hard-linked into a lake next to it,
// DIR/lake-STEM/STEM/STEM.parquet, a one-table lake; LAKEDIR is mounted as it
// is (gen_filter_data.mjs's OUTDIR: tables events and events_arrow; --table
// picks one, default the first). Views:
//   full      MNT/T/data.csv
//   filtered  MNT/T/where=EXPR/data.csv  (--where; default price < 1000 when the
//             table has a price column, else score < 0.1)
// Contenders, per view:
//   mount      cat MNT/VIEW/data.csv > /dev/null, on a fresh mount (below)
//   mount-hit  the same cat again right after, on the same mount: the result cache
//   pqtool     build/pqtool cat LAKE/T [--where EXPR] > /dev/null
//   pqtool|cat the same through a pipe into cat > /dev/null: the bytes reach
//              another process, as they reach cat through the mount
//   duckdb-2t  COPY (SELECT * FROM read_parquet('LAKE/T/**/*.parquet', hive_partitioning=true)
//              [WHERE EXPR]) TO '/dev/null' (FORMAT csv, USE_TMP_FILE false), threads=2,
//              in this process (warm instance, query only: this favours DuckDB)
// and time to the first line (the header) and to the first data row of the
// full table:
//   ttfb-mount, first-row-mount    head -1 / head -2 MNT/T/data.csv > /dev/null, fresh mount
//   ttfb-pqtool, first-row-pqtool  bash -c 'head -1 / head -2 < <(pqtool cat LAKE/T)'
//
// The result cache: a view's result is kept (cache_dir, up to cache_size) and
// equal views share it, so a second cat of the same view on the same mount is
// served from the cache, not scanned. Every "mount" and "*-mount" head run
// therefore gets a mount of its own: pqfs -f is started (untimed), waited for
// in /proc/self/mounts, the one command timed, the cache hit timed for
// "mount-hit", then `fusermount3 -u` and the daemon's exit waited for
// (untimed). cache_dir is a fresh directory per mount (pqfs wipes it anyway);
// each mount starts with cold footer and listing caches, as pqtool does.
// Whatever happens, every mount is detached (fusermount3 -uz) and every
// daemon started here killed (by pid) on exit.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDuckDB, queryRows, sqlString, closeDuckDB, repoRoot, duckCopy, duckCopyLockRetries } from '../js/duckdb.mjs';
import { startLauncher, describeFailure } from '../js/launcher.mjs';

function usage(msg) {
  if (msg) console.error(`bench_mount: ${msg}`);
  console.error('usage: node tools/bench/bench_mount.mjs FILE.parquet|LAKEDIR [--table T] [--where EXPR]\n' +
    '                                        [--runs N] [--warmup N] [--build DIR] [--no-check]');
  process.exit(2);
}

let source;
let table;
let where;
let runs = 3;
let warmup = 1;
let buildDir = path.join(repoRoot, 'build');
let check = true;
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = () => { if (i + 1 >= args.length) usage(`${a} needs a value`); return args[++i]; };
    if (a === '--table') table = val();
    else if (a === '--where') where = val();
    else if (a === '--runs') runs = Number(val());
    else if (a === '--warmup') warmup = Number(val());
    else if (a === '--build') buildDir = path.resolve(val());
    else if (a === '--no-check') check = false;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (source === undefined) source = a;
    else usage(`unexpected argument ${a}`);
  }
}
if (!source) usage('FILE.parquet or LAKEDIR is required');
if (!Number.isInteger(runs) || runs < 1) usage('--runs must be a positive integer');
if (!Number.isInteger(warmup) || warmup < 0) usage('--warmup must be a non-negative integer');
const pqtool = path.join(buildDir, 'pqtool');
const pqfs = path.join(buildDir, 'pqfs');
for (const b of [pqtool, pqfs]) if (!fs.existsSync(b)) usage(`no ${b} (build it: cmake -S . -B build && cmake --build build)`);
for (const t of ['fusermount3']) if (spawnSync(t, ['-V']).error) usage(`${t} is not installed (fuse3)`);
if (!fs.existsSync('/dev/fuse')) usage('no /dev/fuse');

// The lake.
source = path.resolve(source);
if (!fs.existsSync(source)) usage(`no such file or directory: ${source}`);
let lake;
if (fs.statSync(source).isFile()) {
  const stem = path.basename(source).replace(/\.parquet$/, '');
  lake = path.join(path.dirname(source), `lake-${stem}`);
  const dst = path.join(lake, stem, path.basename(source));
  const same = fs.existsSync(dst) && fs.statSync(dst).ino === fs.statSync(source).ino;
  if (!same) {
    fs.rmSync(dst, { force: true });
    fs.mkdirSync(path.dirname(dst), { recursive: true });
    try { fs.linkSync(source, dst); } catch { fs.copyFileSync(source, dst); }
  }
  table ??= stem;
} else {
  lake = source;
  table ??= fs.readdirSync(lake, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !/^[._]/.test(e.name)).map((e) => e.name).sort()[0];
}
const tableDir = path.join(lake, table ?? '');
if (!table || !fs.existsSync(tableDir)) usage(`no table ${tableDir}`);

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mount-'));
const mnt = path.join(tmpDir, 'mnt');
fs.mkdirSync(mnt);

// --------------------------------------------------------------- cleanup
let daemon = null; // { pid, child }
const isMounted = () => fs.readFileSync('/proc/self/mounts', 'utf8').split('\n')
  .some((l) => l.split(' ')[1] === mnt);
function cleanupSync() {
  if (isMounted()) spawnSync('fusermount3', ['-uz', mnt], { stdio: 'ignore' });
  if (daemon) {
    try { process.kill(daemon.pid, 'SIGKILL'); } catch { /* gone */ }
    daemon = null;
  }
  // never recurse into a mount that could not be detached
  if (!isMounted()) fs.rmSync(tmpDir, { recursive: true, force: true });
  else console.error(`bench_mount: ${mnt} is still mounted; left ${tmpDir}`);
}
process.on('exit', cleanupSync);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(130));

// pqtool and friends run through tools/js/launcher.mjs, forked before DuckDB
// is loaded (fork() from this process gets slower as its memory grows).
const launcher = startLauncher(tmpDir);
const failures = [];

async function timed(name, argv) {
  const r = await launcher.run(argv);
  if (r.rc !== 0) {
    const msg = `${name}: ${argv.join(' ')}: ${describeFailure(r)}`;
    if (!failures.includes(msg)) { failures.push(msg); console.error(`bench_mount: warning: ${msg}`); }
  }
  return { wall: r.wall, cpu: r.cpu };
}

// --------------------------------------------------------------- mounting
let mountNo = 0;
async function mountFresh() {
  const cache = path.join(tmpDir, `cache-${++mountNo}`);
  const log = path.join(tmpDir, 'pqfs.log');
  const fd = fs.openSync(log, 'w');
  const child = spawn(pqfs, [lake, mnt, '-f', '-o', `cache_dir=${cache},metadata_ttl=5s`],
    { stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  daemon = { pid: child.pid, child, exited: false };
  child.on('exit', () => { if (daemon && daemon.child === child) daemon.exited = true; });
  for (let i = 0; i < 200; i++) {
    if (isMounted()) return;
    if (daemon.exited) break;
    await sleep(50);
  }
  throw new Error(`bench_mount: pqfs did not mount ${mnt}: ${fs.readFileSync(log, 'utf8').trim()}`);
}
async function unmount() {
  if (!daemon) return;
  const d = daemon;
  if (spawnSync('fusermount3', ['-u', mnt]).status !== 0) spawnSync('fusermount3', ['-uz', mnt]);
  for (let i = 0; i < 100 && !d.exited; i++) await sleep(50);
  if (!d.exited) {
    console.error(`bench_mount: warning: pqfs ${d.pid} still running 5 s after unmount; killing it`);
    try { process.kill(d.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  daemon = null;
  fs.rmSync(path.join(tmpDir, `cache-${mountNo}`), { recursive: true, force: true });
}
// The daemon's user + system CPU seconds so far.
function daemonCpu() {
  try {
    const f = fs.readFileSync(`/proc/${daemon.pid}/stat`, 'utf8');
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return NaN;
  }
}
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));



// Size and sha256 of a command's output, or of a file read through the mount.
function digest(argvOrFile) {
  return new Promise((resolve, reject) => {
    const h = crypto.createHash('sha256');
    let bytes = 0;
    let lines = 0;
    const feed = (b) => {
      h.update(b);
      bytes += b.length;
      for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) lines++;
    };
    const done = (err) => (err ? reject(err) : resolve({ bytes, lines, sha: h.digest('hex') }));
    if (typeof argvOrFile === 'string') {
      fs.createReadStream(argvOrFile, { highWaterMark: 1 << 20 }).on('data', feed).on('error', done).on('end', () => done());
    } else {
      const c = spawn(argvOrFile[0], argvOrFile.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
      c.stdout.on('data', feed);
      c.on('error', done);
      c.on('close', (code) => (code === 0 ? done() : done(new Error(`${argvOrFile.join(' ')}: exit ${code}`))));
    }
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
};
const fmtS = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');
const fmtR = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

const duck = await openDuckDB({ threads: 2 });
let status = 0;
try {
  const glob = path.join(tableDir, '**', '*.parquet');
  const cols = (await queryRows(duck.conn, `DESCRIBE SELECT * FROM read_parquet(${sqlString(glob)}, hive_partitioning=true)`))
    .map((r) => r.column_name);
  where ??= cols.includes('price') ? 'price < 1000' : cols.includes('score') ? 'score < 0.1' : undefined;
  if (!where) usage(`--where is needed for table ${table} (columns: ${cols.join(', ')})`);
  const [meta] = await queryRows(duck.conn, `
    SELECT count(DISTINCT file_name) AS files, sum(row_group_num_rows) FILTER (WHERE column_id = 0) AS rows
    FROM parquet_metadata(${sqlString(glob)})`);
  const tableBytes = fs.readdirSync(tableDir, { recursive: true }).filter((f) => f.endsWith('.parquet'))
    .reduce((s, f) => s + fs.statSync(path.join(tableDir, f)).size, 0);
  console.log(`lake      ${lake}, table ${table}: ${meta.files} files, ${meta.rows} rows, ${(tableBytes / 1e6).toFixed(1)} MB`);
  console.log(`machine   ${os.cpus().length} cores, ${(os.cpus()[0]?.model ?? '?').replace(/\s+/g, ' ')}, node ${process.version}; load average ${load()}`);
  console.log(`mount     ${path.relative(process.cwd(), pqfs) || pqfs} LAKE ${mnt} -f -o cache_dir=FRESH,metadata_ttl=5s  (a fresh mount per timed mount run)`);
  console.log(`rounds    ${warmup} warm-up + ${runs} timed, order rotating`);

  const views = [
    { name: 'full', rel: [table, 'data.csv'], pqArgs: [], sqlWhere: '' },
    { name: 'filtered', rel: [table, `where=${where}`, 'data.csv'], pqArgs: ['--where', where], sqlWhere: ` WHERE ${where}` },
  ];
  for (const v of views) {
    v.file = path.join(mnt, ...v.rel);
    v.sql = `COPY (SELECT * FROM read_parquet(${sqlString(glob)}, hive_partitioning=true)${v.sqlWhere}) ` +
      `TO '/dev/null' (FORMAT csv, USE_TMP_FILE false)`;
    v.pqCmd = [pqtool, 'cat', tableDir, ...v.pqArgs];
  }

  // Check: the mount serves exactly pqtool's bytes, and DuckDB has as many rows.
  if (check) {
    for (const v of views) {
      await mountFresh();
      try {
        const [a, b] = [await digest(v.file), await digest(v.pqCmd)];
        const { reader } = await duckCopy(duck.conn, v.sql);
        const duckRows = Number(reader.getRows()[0][0]);
        const ok = a.sha === b.sha && b.lines - 1 === duckRows;
        if (!ok) status = 1;
        console.log(`check     ${v.name.padEnd(8)} mount ${(a.bytes / 1e6).toFixed(1)} MB ${a.lines - 1} rows, ` +
          `pqtool ${(b.bytes / 1e6).toFixed(1)} MB ${b.lines - 1} rows${a.sha === b.sha ? ' (same bytes)' : ' (BYTES DIFFER)'}, ` +
          `duckdb ${duckRows} rows: ${ok ? 'ok' : 'MISMATCH'}`);
        v.bytes = b.bytes;
      } finally {
        await unmount();
      }
    }
  }

  const results = [];
  for (const v of views) {
    console.log('');
    console.log(`view ${v.name}: ${path.join('MNT', ...v.rel)}`);
    const mountRun = { name: 'mount', wall: [], cpu: [] };
    const hitRun = { name: 'mount-hit', wall: [], cpu: [] };
    const contenders = [
      {
        ...mountRun,
        run: async (record) => {
          await mountFresh();
          try {
            // cpu s: cat's own plus the daemon's (utime + stime from /proc)
            const d0 = daemonCpu();
            const a = await timed('mount', ['cat', v.file]);
            const d1 = daemonCpu();
            const b = await timed('mount-hit', ['cat', v.file]);
            const d2 = daemonCpu();
            if (record) { hitRun.wall.push(b.wall); hitRun.cpu.push(b.cpu + d2 - d1); }
            return { wall: a.wall, cpu: a.cpu + d1 - d0 };
          } finally {
            await unmount();
          }
        },
      },
      { name: 'pqtool', wall: [], cpu: [], run: () => timed('pqtool', v.pqCmd) },
      // The same bytes handed to another process, as the mount hands them to cat.
      { name: 'pqtool|cat', wall: [], cpu: [], run: () => timed('pqtool|cat', ['bash', '-c', '"$@" | cat', 'pipe', ...v.pqCmd]) },
      {
        name: 'duckdb-2t', wall: [], cpu: [],
        run: async () => {
          const { wall, cpu } = await duckCopy(duck.conn, v.sql);
          return { wall, cpu };
        },
      },
    ];
    for (let w = 0; w < warmup; w++) for (const c of contenders) await c.run(false);
    for (let r = 0; r < runs; r++) {
      const order = contenders.map((_, k) => contenders[(k + r) % contenders.length]);
      const line = [];
      for (const c of order) {
        const { wall, cpu } = await c.run(true);
        c.wall.push(wall);
        c.cpu.push(cpu);
        line.push(`${c.name} ${fmtS(wall)}s`);
      }
      console.log(`  round ${String(r + 1).padStart(2)}  ${line.join('   ')}   (mount-hit ${fmtS(hitRun.wall.at(-1))}s)`);
    }
    const all = [contenders[0], hitRun, contenders[1], contenders[2], contenders[3]];
    console.log(`  ${'contender'.padEnd(10)} ${'median s'.padStart(9)} ${'min s'.padStart(8)} ${'max s'.padStart(8)} ${'cpu s'.padStart(8)} ${'MB/s out'.padStart(9)}`);
    for (const c of all) {
      const mm = median(c.wall);
      console.log(`  ${c.name.padEnd(10)} ${fmtS(mm).padStart(9)} ${fmtS(Math.min(...c.wall)).padStart(8)} ` +
        `${fmtS(Math.max(...c.wall)).padStart(8)} ${fmtS(median(c.cpu)).padStart(8)} ` +
        `${(v.bytes ? (v.bytes / mm / 1e6).toFixed(1) : '-').padStart(9)}`);
    }
    const med = Object.fromEntries(all.map((c) => [c.name, median(c.wall)]));
    const over = med.mount / med.pqtool;
    console.log(`  ratio   mount / pqtool = ${fmtR(over)} (FUSE overhead ${((over - 1) * 100).toFixed(1)}%, goal < 10%)` +
      `   pqtool / duckdb-2t = ${fmtR(med.pqtool / med['duckdb-2t'])}   mount / duckdb-2t = ${fmtR(med.mount / med['duckdb-2t'])}` +
      `   mount-hit / mount = ${fmtR(med['mount-hit'] / med.mount)}   mount / (pqtool|cat) = ${fmtR(med.mount / med['pqtool|cat'])}`);
    // The copy the mount cannot avoid: mount-hit moves the same bytes
    // through FUSE with no scan at all. When pqtool keeps every core busy,
    // no idle core is left to hide that copy (and the cache file's write).
    const cpuMed = Object.fromEntries(all.map((c) => [c.name, median(c.cpu)]));
    const cores = os.cpus().length;
    console.log(`  floor   mount-hit / pqtool = ${fmtR(med['mount-hit'] / med.pqtool)} (the FUSE copy alone, no scan); ` +
      `pqtool keeps ${(cpuMed.pqtool / med.pqtool).toFixed(1)} of ${cores} cores busy`);
    results.push({ v, med });
  }

  // Time to the first line (the header) and to the first data row of the
  // full table: `head -1` / `head -2`, each mount run on a fresh mount. For
  // pqtool, `head -N < <(pqtool ...)` inside bash -c: the time is head's (bash
  // does not wait for the process substitution); pqtool dies of SIGPIPE at
  // its next write, and is given 300 ms (untimed) to do so before the next run.
  console.log('');
  console.log(`ttfb      head -1 / head -2 of MNT/${table}/data.csv (fresh mount each run) vs ` +
    `head -1 / head -2 < <(${path.basename(pqtool)} cat LAKE/${table})`);
  const ttfb = [];
  for (const n of [1, 2]) {
    const tag = n === 1 ? 'ttfb' : 'first-row';
    ttfb.push({
      name: `${tag}-mount`, wall: [], cpu: [],
      run: async () => {
        await mountFresh();
        try { return await timed(`${tag}-mount`, ['head', `-${n}`, views[0].file]); } finally { await unmount(); }
      },
    }, {
      name: `${tag}-pqtool`, wall: [], cpu: [],
      run: async () => {
        const r = await timed(`${tag}-pqtool`, ['bash', '-c', `head -${n} < <("$@")`, 'ttfb', ...views[0].pqCmd]);
        await sleep(300);
        return r;
      },
    });
  }
  for (let w = 0; w < warmup; w++) for (const c of ttfb) await c.run();
  for (let r = 0; r < runs; r++) {
    const order = ttfb.map((_, k) => ttfb[(k + r) % ttfb.length]);
    for (const c of order) {
      const { wall, cpu } = await c.run();
      c.wall.push(wall);
      c.cpu.push(cpu);
    }
  }
  for (const c of ttfb) {
    console.log(`  ${c.name.padEnd(16)} median ${fmtS(median(c.wall))} s   min ${fmtS(Math.min(...c.wall))}   max ${fmtS(Math.max(...c.wall))}`);
  }

  console.log('');
  console.log(`summary   load average ${load()} (1, 5, 15 min), ${os.cpus().length} cores`);
  console.log(`view       mount s  hit s  pqtool s  duck-2t s  mount/pqtool  pqtool/duck  mount/duck  mount/(pqtool|cat)`);
  for (const { v, med } of results) {
    console.log(`${v.name.padEnd(9)} ${fmtS(med.mount).padStart(8)} ${fmtS(med['mount-hit']).padStart(6)} ` +
      `${fmtS(med.pqtool).padStart(9)} ${fmtS(med['duckdb-2t']).padStart(10)} ${fmtR(med.mount / med.pqtool).padStart(13)} ` +
      `${fmtR(med.pqtool / med['duckdb-2t']).padStart(12)} ${fmtR(med.mount / med['duckdb-2t']).padStart(11)} ` +
      `${fmtR(med.mount / med['pqtool|cat']).padStart(19)}`);
  }
  console.log(`ttfb      header: mount ${fmtS(median(ttfb[0].wall))} s, pqtool ${fmtS(median(ttfb[1].wall))} s;` +
    ` first row: mount ${fmtS(median(ttfb[2].wall))} s, pqtool ${fmtS(median(ttfb[3].wall))} s`);
  console.log('note      mount and pqtool are timed as whole commands (cat / pqtool process); the mount is set up');
  console.log('          before and torn down after, untimed. DuckDB only as a query on a warm in-process instance:');
  console.log('          this favours DuckDB. mount-hit = the same view read again: served by the result cache.');
  console.log('          cpu s of mount runs = cat\'s + the daemon\'s (/proc/PID/stat), at 1/CLK_TCK resolution.');
  const lockRetries = duckCopyLockRetries();
  if (lockRetries) {
    console.log(`WARNING   DuckDB's COPY to /dev/null was locked by another process ${lockRetries} time(s) (retried):`);
    console.log('          another benchmark ran at the same time; these numbers are disturbed.');
  }
  if (failures.length) {
    console.log(`FAILED    ${failures.length} command(s) failed; their times mean nothing:`);
    for (const f of failures) console.log(`          ${f}`);
    status = 1;
  }
} finally {
  await unmount().catch(() => {});
  closeDuckDB(duck);
  launcher.close();
}
process.exitCode = status;
