#!/usr/bin/env node
// A fault-injecting HTTP proxy for integration tests: it forwards every
// request to one origin server (nginx, python's http.server) and passes its
// answer back unchanged, so the client sees the origin's own ETag,
// Last-Modified, ranges and listings. Only node: built-ins.
//
// node fault_proxy.mjs --origin http://127.0.0.1:PORT [--port 0] [--drop-preconditions] [--log FILE]
// --drop-preconditions: If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since are not forwarded (a proxy or server that ignores
// them), so the origin serves whatever the file is now.
// GET /?fault-replace&path=URLPATH&after=N&from=FILE&to=FILE (answered by the
// proxy itself) arms a replacement: the first N GETs of URLPATH from now on
// are forwarded as they come; the next one waits until each of those has its
// answer's headers back (the origin has opened the file), then FILE is
// renamed over TO (the origin's file) and the GET goes on. So exactly N GETs
// saw the old file, whatever the client keeps in flight. The log gets a line
// "REPLACED URLPATH".
//
// The log has a line per forwarded request: METHOD URL RANGE STATUS
// etag=ETAG lm=LAST-MODIFIED (as the origin sent them; - when absent).
// Prints "listening PORT" on stdout once ready; nothing else goes to stdout.
import http from 'node:http';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

const USAGE = 'usage: fault_proxy.mjs --origin http://HOST:PORT [--port 0] [--drop-preconditions] [--log FILE]';
function die(msg) { process.stderr.write(`fault_proxy: ${msg}\n${USAGE}\n`); process.exit(2); }

const opts = { port: 0, dropPreconditions: false, log: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--drop-preconditions') opts.dropPreconditions = true;
  else if (['--origin', '--port', '--log'].includes(a)) {
    if (i + 1 >= process.argv.length) die(`${a} needs a value`);
    opts[a.slice(2)] = process.argv[++i];
  } else die(`unknown argument ${a}`);
}
if (!opts.origin) die('--origin is required');
const origin = new URL(opts.origin);
if (origin.protocol !== 'http:') die('the origin must be http://');
opts.port = Number(opts.port);
if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) die('bad --port');
const logFd = opts.log ? fs.openSync(opts.log, 'a') : null;
const logLine = (text) => { if (logFd !== null) fs.writeSync(logFd, `${text}\n`); };

const PRECONDITIONS = ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since'];
const agent = new http.Agent({ keepAlive: true });

// Armed replacements: URL path -> { after, from, to, seen, before: [promises of headers back] }.
const replacements = new Map();

function arm(res, q) {
  const p = q.get('path') ?? '', after = Number(q.get('after') ?? ''), from = q.get('from') ?? '', to = q.get('to') ?? '';
  if (!p.startsWith('/') || !Number.isInteger(after) || after < 0 || !from || !to) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    return res.end('fault-replace needs path=/URLPATH&after=N&from=FILE&to=FILE\n');
  }
  replacements.set(p, { after, from: path.resolve(from), to: path.resolve(to), seen: 0, before: [] });
  res.writeHead(200, { 'Content-Type': 'text/plain' });
  res.end('armed\n');
}

// Resolves when the request may go to the origin: at once, or, for the GET
// after an armed path's Nth, once the file is replaced.
async function gate(req, urlPath, headersBack) {
  const r = replacements.get(urlPath);
  if (!r || req.method !== 'GET') return;
  r.seen++;
  if (r.seen <= r.after) { r.before.push(headersBack); return; }
  if (r.seen === r.after + 1) {
    r.done = (async () => {
      await Promise.all(r.before);
      await fsp.rename(r.from, r.to);
      logLine(`REPLACED ${urlPath}`);
    })();
  }
  await r.done;
}

function forward(req, res) {
  const headers = { ...req.headers };
  if (opts.dropPreconditions) for (const h of PRECONDITIONS) delete headers[h];
  headers.host = origin.host;
  let signal;
  const headersBack = new Promise((resolve) => { signal = resolve; });
  const urlPath = req.url.split('?')[0];
  gate(req, urlPath, headersBack).then(() => {
    const up = http.request({ host: origin.hostname, port: origin.port, method: req.method, path: req.url, headers, agent }, (ur) => {
      logLine(`${req.method} ${req.url} ${(req.headers.range ?? '--').replace(/\s+/g, '')} ${ur.statusCode} ` +
        `etag=${ur.headers.etag ?? '-'} lm=${(ur.headers['last-modified'] ?? '-').replace(/\s+/g, '_')}`);
      signal();
      res.writeHead(ur.statusCode, ur.headers);
      ur.pipe(res);
      ur.on('error', () => res.destroy());
    });
    up.on('error', (e) => {
      signal();
      if (!res.headersSent) { res.writeHead(502, { 'Content-Type': 'text/plain' }); res.end(`fault_proxy: ${e.message}\n`); } else res.destroy();
    });
    // A client that stops reading (it had its range of a whole-file answer)
    // ends the origin's transfer too.
    res.on('close', () => up.destroy());
    req.pipe(up);
  }, (e) => {
    signal();
    res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(`fault_proxy: ${e.message}\n`);
  });
}

const server = http.createServer((req, res) => {
  const qi = req.url.indexOf('?');
  const q = new URLSearchParams(qi < 0 ? '' : req.url.slice(qi + 1));
  if (req.method === 'GET' && req.url.startsWith('/?') && q.has('fault-replace')) return arm(res, q);
  forward(req, res);
});
server.on('error', (e) => { process.stderr.write(`fault_proxy: ${e.message}\n`); process.exit(1); });
server.listen(opts.port, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 1000).unref();
  });
}
