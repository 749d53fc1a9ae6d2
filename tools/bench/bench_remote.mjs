#!/usr/bin/env node
// Reading a table over HTTP against reading it from the local disk, and
// against DuckDB on the local files, side by side in one run.
//
//   node tools/bench/bench_remote.mjs LAKEDIR TABLE [--where EXPR]... [--runs N] [--build DIR]
//                                     [--s3-delay-ms N]
//
// LAKEDIR is served by nginx (started here on a free port, autoindex as
// JSON, stopped on exit) and read as http://127.0.0.1:PORT/TABLE.  With
// --s3-delay-ms N it is served instead by tests/mount/fake_s3.mjs as bucket
// "bench", every request held N ms (a network's round trip; loopback has
// none), and read as s3://bench/TABLE.  For each query (the full table, then
// each --where):
//   pqtool-remote build/pqtool cat http://.../TABLE (or s3://) [--where EXPR] > /dev/null
//   pqtool-local  build/pqtool cat LAKEDIR/TABLE [--where EXPR] > /dev/null
//   duckdb-2t     COPY (SELECT * FROM read_parquet('LAKEDIR/TABLE/**/*.parquet',
//                 hive_partitioning = true) [WHERE EXPR]) TO '/dev/null' (FORMAT csv),
//                 threads=2, warm in-process instance (this favours DuckDB)
// and the requests and bytes pqtool read (its --stats).  DuckDB reads the
// local files: httpfs is not installed offline, and over loopback the
// transport costs little next to the decoding; the http/local ratio is the
// remote store's own cost.  Rounds rotate the order; medians are printed.
// pqtool runs through tools/js/launcher.mjs (forked before DuckDB is loaded:
// a fork from this process once DuckDB has read the lake costs tens of ms).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openDuckDB, sqlString, closeDuckDB, repoRoot, duckCopy } from '../js/duckdb.mjs';
import { startLauncher, describeFailure } from '../js/launcher.mjs';

function usage(msg) {
  if (msg) console.error(`bench_remote: ${msg}`);
  console.error('usage: node tools/bench/bench_remote.mjs LAKEDIR TABLE [--where EXPR]... [--runs N] [--build DIR] [--s3-delay-ms N]');
  process.exit(2);
}

let lake, table, runs = 5, buildDir = path.join(repoRoot, 'build'), s3DelayMs = null;
const wheres = [null];
{
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i++) {
    const val = () => { if (i + 1 >= a.length) usage(`${a[i]} needs a value`); return a[++i]; };
    if (a[i] === '--where') wheres.push(val());
    else if (a[i] === '--runs') runs = Number(val());
    else if (a[i] === '--build') buildDir = path.resolve(val());
    else if (a[i] === '--s3-delay-ms') s3DelayMs = Number(val());
    else if (a[i].startsWith('-')) usage(`unknown option ${a[i]}`);
    else if (lake === undefined) lake = path.resolve(a[i]);
    else if (table === undefined) table = a[i];
    else usage(`unexpected argument ${a[i]}`);
  }
}
if (!lake || !table) usage('LAKEDIR and TABLE are required');
if (!Number.isInteger(runs) || runs < 1) usage('--runs must be a positive integer');
if (s3DelayMs !== null && !(Number.isInteger(s3DelayMs) && s3DelayMs >= 0)) usage('--s3-delay-ms must be a non-negative integer');
const pqtool = path.join(buildDir, 'pqtool');
if (!fs.existsSync(pqtool)) usage(`no ${pqtool}`);
const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
if (!nginxBin && s3DelayMs === null) usage('nginx is not installed (tools/setup-deps.sh installs it)');

const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-remote-'));
let server, url;
if (s3DelayMs === null) {
  fs.writeFileSync(path.join(work, 'nginx.conf'), `${process.getuid?.() === 0 ? 'user root;' : ''}
daemon off; worker_processes 2; pid ${work}/nginx.pid; error_log ${work}/error.log;
events { worker_connections 256; }
http { access_log off; client_body_temp_path ${work}/b; proxy_temp_path ${work}/p;
  fastcgi_temp_path ${work}/f; uwsgi_temp_path ${work}/u; scgi_temp_path ${work}/s;
  server { listen 127.0.0.1:${port}; location / { root ${lake}; autoindex on; autoindex_format json; } } }
`);
  server = spawn(nginxBin, ['-c', path.join(work, 'nginx.conf'), '-p', work], { stdio: 'ignore' });
  url = `http://127.0.0.1:${port}/${table}`;
} else {
  // Unsigned requests to a path-style endpoint; pqtool takes it from the
  // environment, which the launcher (started below) passes on.
  server = spawn(process.execPath, [path.join(repoRoot, 'tests', 'mount', 'fake_s3.mjs'), '--root', lake, '--bucket', 'bench',
    '--port', String(port), '--delay-ms', String(s3DelayMs)], { stdio: 'ignore' });
  process.env.AWS_ENDPOINT_URL = `http://127.0.0.1:${port}`;
  url = `s3://bench/${table}`;
}
const stop = () => { try { server.kill('SIGTERM'); } catch { /* gone */ } fs.rmSync(work, { recursive: true, force: true }); };
process.on('exit', stop);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
for (let i = 0; i < 100; i++) {
  if (spawnSync('curl', ['-s', '-o', '/dev/null', `http://127.0.0.1:${port}/`]).status === 0) break;
  await new Promise((r) => setTimeout(r, 50));
}

// One pqtool run: wall seconds, and what its --stats said it read.
const launcher = startLauncher(work);
async function runPqtool(src, where) {
  const args = ['cat', src, '--stats', ...(where ? ['--where', where] : [])];
  const r = await launcher.run([pqtool, ...args]);
  if (r.rc !== 0) throw new Error(`pqtool ${args.join(' ')}: ${describeFailure(r)}`);
  const m = r.stderr.match(/storage: (\d+) bytes in (\d+) reads/);
  return { wall: r.wall, requests: m ? Number(m[2]) : NaN, bytes: m ? Number(m[1]) : NaN };
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[(s.length - 1) >> 1]; };

const duck = await openDuckDB({ threads: 2 });
const glob = sqlString(path.join(lake, table, '**', '*.parquet'));
console.log(`bench_remote: ${lake}/${table} ${s3DelayMs === null ? 'over nginx' : `over a fake S3 holding each request ${s3DelayMs} ms`} at ${url}; ` +
  `${runs} runs; ${os.cpus().length} cores`);
const rows = [];
for (const where of wheres) {
  const sql = `COPY (SELECT * FROM read_parquet(${glob}, hive_partitioning = true)${where ? ` WHERE ${where}` : ''}) ` +
    `TO '/dev/null' (FORMAT csv, USE_TMP_FILE false)`;
  await runPqtool(url, where); await runPqtool(path.join(lake, table), where); await duckCopy(duck.conn, sql); // warm-up
  const t = { http: [], local: [], duck: [] };
  let httpStats, localStats;
  for (let r = 0; r < runs; r++) {
    const order = [['http', url], ['local', path.join(lake, table)], ['duck', null]];
    for (let k = 0; k < r % 3; k++) order.push(order.shift());
    for (const [name, src] of order) {
      if (name === 'duck') t.duck.push((await duckCopy(duck.conn, sql)).wall);
      else {
        const s = await runPqtool(src, where);
        t[name].push(s.wall);
        if (name === 'http') httpStats = s; else localStats = s;
      }
    }
  }
  const m = { http: median(t.http), local: median(t.local), duck: median(t.duck) };
  rows.push({ where: where ?? '(full table)', ...m, httpStats, localStats });
}
closeDuckDB(duck);
launcher.close();
console.log('query                        pqtool-remote s  pqtool-local s  duckdb-2t s  remote/local  remote/duck  requests (remote/local)  bytes read (remote/local)');
for (const r of rows) {
  console.log(`${r.where.padEnd(28).slice(0, 28)} ${r.http.toFixed(3).padStart(15)} ${r.local.toFixed(3).padStart(15)} ` +
    `${r.duck.toFixed(3).padStart(12)} ${(r.http / r.local).toFixed(2).padStart(13)} ${(r.http / r.duck).toFixed(2).padStart(12)}  ` +
    `${r.httpStats.requests}/${r.localStats.requests}`.padEnd(25) + `  ${r.httpStats.bytes}/${r.localStats.bytes}`);
}
// Ends here even when a server child (or DuckDB's threads) would keep the
// event loop going; the 'exit' handler stops the server.
process.exit(0);
