#!/usr/bin/env node
// s3rver (a real S3 imitation, tools/js devDependency) serving a lake for
// integration tests, with the AWS SDK (@aws-sdk/client-s3) uploading it and
// replacing objects on request. s3rver ignores If-Match and
// If-Unmodified-Since; its ETags are the objects' MD5s.
//
// node s3rver_lake.mjs --dir STORE --lake DIR [--port 0] [--log FILE]
// Every file under DIR is put as bucket "bkt", key lake/REL (keys S3RVER /
// S3RVER, path-style URLs), through the SDK.
// GET /?s3rver-replace&key=KEY&after=N&from=FILE (answered here) arms a
// replacement: the first N GETs of KEY from now on go as they come; the next
// one (and any after it) waits until those have been answered in full, then
// the SDK puts FILE's bytes as KEY, and the GET goes on. The log gets a
// line "REPLACED KEY".
// The log has a line per GET or HEAD of an object: METHOD URL RANGE STATUS etag=ETAG.
// Prints "listening PORT" on stdout once ready; nothing else goes to stdout.
import http from 'node:http';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(path.join(path.dirname(new URL(import.meta.url).pathname), '../../tools/js/package.json'));
const S3rver = require('s3rver');
const { S3Client, CreateBucketCommand, PutObjectCommand } = require('@aws-sdk/client-s3');

const USAGE = 'usage: s3rver_lake.mjs --dir STORE --lake DIR [--port 0] [--log FILE]';
function die(msg) { process.stderr.write(`s3rver_lake: ${msg}\n${USAGE}\n`); process.exit(2); }
const opts = { port: '0' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (!['--dir', '--lake', '--port', '--log'].includes(a) || i + 1 >= process.argv.length) die(`bad argument ${a}`);
  opts[a.slice(2)] = process.argv[++i];
}
if (!opts.dir || !opts.lake) die('--dir and --lake are required');
const logFd = opts.log ? fs.openSync(opts.log, 'a') : null;
const logLine = (text) => { if (logFd !== null) fs.writeSync(logFd, `${text}\n`); };

const s3rver = new S3rver({ directory: path.resolve(opts.dir), silent: true });
await s3rver.configureBuckets();

// Armed replacements: key -> { after, from, seen, before: [answered promises], done }.
const replacements = new Map();
let sdk = null;

function keyOf(url) {
  const p = decodeURIComponent(url.split('?')[0]);
  return p.startsWith('/bkt/') ? p.slice('/bkt/'.length) : null;
}

async function gate(req, key, answered) {
  const r = key && replacements.get(key);
  if (!r || req.method !== 'GET') return;
  r.seen++;
  if (r.seen <= r.after) { r.before.push(answered); return; }
  if (r.seen === r.after + 1) {
    r.done = (async () => {
      await Promise.all(r.before);
      await sdk.send(new PutObjectCommand({ Bucket: 'bkt', Key: key, Body: await fsp.readFile(r.from) }));
      logLine(`REPLACED ${key}`);
    })();
  }
  await r.done;
}

const handler = s3rver.callback();
const server = http.createServer((req, res) => {
  const q = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  if (req.method === 'GET' && req.url.startsWith('/?') && q.has('s3rver-replace')) {
    const after = Number(q.get('after'));
    if (!q.get('key') || !Number.isInteger(after) || after < 0 || !q.get('from')) { res.writeHead(400); return res.end('bad\n'); }
    replacements.set(q.get('key'), { after, from: path.resolve(q.get('from')), seen: 0, before: [] });
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    return res.end('armed\n');
  }
  const key = keyOf(req.url);
  let answered;
  const done = new Promise((resolve) => { answered = resolve; });
  res.on('close', answered);
  if (key && (req.method === 'GET' || req.method === 'HEAD') && !req.url.includes('?')) {
    res.on('finish', () => logLine(`${req.method} ${req.url} ${(req.headers.range ?? '--').replace(/\s+/g, '')} ` +
      `${res.statusCode} etag=${res.getHeader('etag') ?? '-'}`));
  }
  gate(req, key, done).then(() => handler(req, res), (e) => { res.writeHead(500); res.end(`s3rver_lake: ${e.message}\n`); });
});
server.on('error', (e) => { process.stderr.write(`s3rver_lake: ${e.message}\n`); process.exit(1); });
server.listen(Number(opts.port), '127.0.0.1', async () => {
  const port = server.address().port;
  sdk = new S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  try {
    await sdk.send(new CreateBucketCommand({ Bucket: 'bkt' }));
    const files = await fsp.readdir(opts.lake, { recursive: true, withFileTypes: true });
    for (const f of files.filter((f) => f.isFile())) {
      const full = path.join(f.parentPath ?? f.path, f.name);
      const rel = path.relative(opts.lake, full).split(path.sep).join('/');
      await sdk.send(new PutObjectCommand({ Bucket: 'bkt', Key: `lake/${rel}`, Body: await fsp.readFile(full) }));
    }
  } catch (e) {
    process.stderr.write(`s3rver_lake: uploading the lake: ${e.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`listening ${port}\n`);
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 1000).unref();
  });
}
