#!/usr/bin/env node
// A small fake S3 server for integration tests: it serves one directory as one
// bucket (path-style URLs, or virtual-hosted ones on BUCKET.localhost:PORT),
// with optional SigV4 checking, fault injection and a request log. Only node: built-ins, so tests need no npm install.
//
// node fake_s3.mjs --root DIR --bucket NAME [--port 0] [--access-key K --secret-key S]
//                  [--session-token T] [--region us-east-1] [--fail-every N] [--drop-every N] [--delay-ms N]
//                  [--part-delay-ms N] [--mbps N] [--complete-error-every N] [--reset-every N] [--stall-range-gets]
//                  [--ignore-preconditions] [--etag-form md5|long|weak] [--no-etag-on-get] [--lose-conditional-replies N] [--log FILE]
// --session-token T: signed requests must carry x-amz-security-token T (and,
// like every x-amz-* header sent, sign it).
// --fail-every N: every Nth request is answered 503 SlowDown.
// --drop-every N: every Nth GET with a body sends half of it and cuts the connection.
// --reset-every N: every Nth request with a body (PUT, POST) has its connection
// cut as soon as its headers arrive (a server closing a kept-alive connection
// under a client that reuses it: the client must send the body again).
// --stall-range-gets: a GET with a Range header (a footer, a column chunk) is
// never answered: a stalled transfer (listings still answer).
// --ignore-preconditions: If-Match and If-Unmodified-Since on a GET or HEAD
// are ignored (as s3rver ignores them), so a client that sends them is
// served whatever the object is now. Without it they are S3's: 412
// PreconditionFailed when the ETag differs (compared strongly, as RFC 9110
// says for If-Match: a weak tag never matches) or the object is newer.
// --etag-form long|weak: ETags of 300 characters ("<md5 hex repeated>"), or
// weak ones (W/"<md5 hex>"), in listings and replies alike (default md5:
// "<32 hex>"). --no-etag-on-get: a GET's reply has no ETag header (listings
// and HEADs still have one).
// --delay-ms N: every request waits N ms before it is handled (a slow network),
// so the log's inflight= (requests open when it arrived, itself included) shows
// how many requests a client keeps going at once.
// --part-delay-ms N: an UploadPart waits N ms more (a part takes longer to
// send than the writer takes to fill the next), and its log line adds parts=
// (UploadParts open when it arrived, itself included).
// --mbps N: a request body arrives at N MB/s per connection at most (a
// request with a body of B bytes waits B / N us more): one connection's
// bandwidth, which requests side by side multiply.
// A request (method, URL, Range) is faulted at most once by each kind of fault,
// so a client that retries always gets through: the faults are transient.
//
// Multipart uploads: CreateMultipartUpload (POST ?uploads), UploadPart
// (PUT ?partNumber=N&uploadId=ID), CompleteMultipartUpload (POST ?uploadId=ID)
// and AbortMultipartUpload (DELETE ?uploadId=ID), validated like S3 (part
// numbers 1..10000, ascending in the completion, ETags matching, every part but
// the last at least 5 MiB). Parts are kept in memory, never visible as objects;
// completion writes the object atomically (temp file + rename, like PUT).
// ListMultipartUploads, ListParts and UploadPartCopy are not implemented (501).
// --complete-error-every N: every Nth CompleteMultipartUpload that would succeed
// instead answers 200 with an InternalError <Error> body (as real S3 can) and
// creates nothing; at most once per upload id, so a retrying client gets through.
// GET /?fake-pending-uploads (test-only, no auth, never faulted) answers, as
// text/plain, how many uploads were created and neither completed nor aborted.
// GET /?fake-replace&key=KEY&after=N&from=FILE (test-only, no auth, never
// faulted) arms a replacement: the first N GETs of KEY from now on are served
// the object as it is, then FILE is renamed over it, before the next GET of
// KEY opens it (GETs and HEADs of KEY open in arrival order meanwhile, so
// exactly those N saw the old one). The log gets a line "REPLACED KEY". A
// client's reads of one object can so be made to straddle a replacement.
//
// The log has a line per request: METHOD URL RANGE STATUS BYTES, for a GET or
// HEAD of an object etag=ETAG, then inflight=N (and parts=N for an UploadPart).
//
// Prints "listening PORT" on stdout once ready; nothing else goes to stdout.
import http from 'node:http';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import crypto from 'node:crypto';
import { pipeline } from 'node:stream/promises';

const TMP_PREFIX = '.fake-s3-tmp-';

// ---- command line ----
const USAGE = 'usage: fake_s3.mjs --root DIR --bucket NAME [--port 0] [--access-key K --secret-key S] ' +
  '[--session-token T] [--region us-east-1] [--fail-every N] [--drop-every N] [--delay-ms N] [--part-delay-ms N] [--mbps N] [--complete-error-every N] [--reset-every N] [--stall-range-gets] [--ignore-preconditions] [--etag-form md5|long|weak] [--no-etag-on-get] [--log FILE]';
function die(msg) { process.stderr.write(`fake_s3: ${msg}\n${USAGE}\n`); process.exit(2); }

function parseArgs(argv) {
  const names = { '--root': 'root', '--bucket': 'bucket', '--port': 'port', '--access-key': 'accessKey',
    '--secret-key': 'secretKey', '--region': 'region', '--fail-every': 'failEvery', '--drop-every': 'dropEvery', '--delay-ms': 'delayMs', '--part-delay-ms': 'partDelayMs', '--mbps': 'mbps', '--log': 'log',
    '--complete-error-every': 'completeErrorEvery', '--session-token': 'sessionToken', '--reset-every': 'resetEvery',
    '--etag-form': 'etagForm', '--lose-conditional-replies': 'loseConditionalReplies' };
  const o = { etagForm: 'md5', port: '0', region: 'us-east-1', failEvery: '0', dropEvery: '0', delayMs: '0', partDelayMs: '0', mbps: '0', completeErrorEvery: '0', resetEvery: '0', loseConditionalReplies: '0' };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i], v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    if (a === '--stall-range-gets') { o.stallRangeGets = true; continue; }
    if (a === '--ignore-preconditions') { o.ignorePreconditions = true; continue; }
    if (a === '--no-etag-on-get') { o.noEtagOnGet = true; continue; }
    if (!names[a]) die(`unknown argument ${a}`);
    if (v === undefined) { if (i + 1 >= argv.length) die(`${a} needs a value`); v = argv[++i]; }
    o[names[a]] = v;
  }
  if (!o.root || !o.bucket) die('--root and --bucket are required');
  if (!fs.statSync(o.root, { throwIfNoEntry: false })?.isDirectory()) die(`${o.root} is not a directory`);
  if (!o.accessKey !== !o.secretKey) die('--access-key and --secret-key go together');
  if (o.sessionToken && !o.accessKey) die('--session-token needs --access-key');
  o.root = path.resolve(o.root);
  o.port = Number(o.port);
  o.failEvery = Number(o.failEvery);
  o.loseConditionalReplies = Number(o.loseConditionalReplies);
  o.dropEvery = Number(o.dropEvery);
  o.resetEvery = Number(o.resetEvery);
  o.delayMs = Number(o.delayMs);
  o.partDelayMs = Number(o.partDelayMs);
  o.mbps = Number(o.mbps);
  o.completeErrorEvery = Number(o.completeErrorEvery);
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) die('bad --port');
  if (!Number.isInteger(o.failEvery) || o.failEvery < 0) die('bad --fail-every');
  if (!Number.isInteger(o.dropEvery) || o.dropEvery < 0) die('bad --drop-every');
  if (!Number.isInteger(o.resetEvery) || o.resetEvery < 0) die('bad --reset-every');
  if (!Number.isInteger(o.delayMs) || o.delayMs < 0) die('bad --delay-ms');
  if (!Number.isInteger(o.partDelayMs) || o.partDelayMs < 0) die('bad --part-delay-ms');
  if (!(o.mbps >= 0)) die('bad --mbps');
  if (!Number.isInteger(o.completeErrorEvery) || o.completeErrorEvery < 0) die('bad --complete-error-every');
  if (!['md5', 'long', 'weak'].includes(o.etagForm)) die('bad --etag-form');
  o.logFd = o.log ? fs.openSync(o.log, 'a') : null;
  return o;
}
const opts = parseArgs(process.argv.slice(2));

// ---- small helpers ----
const sha256hex = (data) => crypto.createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
// Byte order of the UTF-8 encodings, which is how S3 sorts keys (not UTF-16 order).
const cmp = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function xmlEscape(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c])
    .replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, (c) => `&#${c.charCodeAt(0)};`);
}
const el = (name, v) => `<${name}>${xmlEscape(v)}</${name}>`;

// %XX-decode to bytes the way the client's signer does: a '%' that starts no
// valid escape stays a literal '%' (so a sloppy client gets a 403, not a crash).
function pctDecode(s) {
  const out = [];
  const b = Buffer.from(s);
  for (let i = 0; i < b.length; i++) {
    const hex = b[i] === 0x25 && i + 2 < b.length ? b.toString('latin1', i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) { out.push(parseInt(hex, 16)); i += 2; } else out.push(b[i]);
  }
  return Buffer.from(out);
}
// AWS URI encoding: unreserved bytes A-Za-z0-9-._~ as is, the rest %XX uppercase.
function uriEncode(bytes, keepSlash = false) {
  let s = '';
  for (const c of Buffer.from(bytes)) {
    const ch = String.fromCharCode(c);
    s += /[A-Za-z0-9\-._~]/.test(ch) || (keepSlash && ch === '/') ? ch : '%' + c.toString(16).toUpperCase().padStart(2, '0');
  }
  return s;
}

// Raw query -> [[nameBytes, valueBytes]]; '+' stays a literal '+' (clients send %20).
function parseQuery(raw) {
  return raw.split('&').filter(Boolean).map((part) => {
    const i = part.indexOf('=');
    return i < 0 ? [pctDecode(part), Buffer.alloc(0)] : [pctDecode(part.slice(0, i)), pctDecode(part.slice(i + 1))];
  });
}

// Key -> path segments; null for keys that cannot map safely onto the directory
// (empty, "a//b", ".", "..", NUL, trailing "/").
function keySegments(key) {
  const segs = key.split('/');
  return key && !segs.some((s) => s === '' || s === '.' || s === '..' || s.includes('\0')) ? segs : null;
}
// ETag from key+size+mtime (not the content MD5): cheap, and a replaced file gets a new one.
function etagOf(key, st) {
  const hex = crypto.createHash('md5').update(`${key}\0${st.size}\0${st.mtimeMs}`).digest('hex');
  return opts.etagForm === 'long' ? `"${hex.repeat(10).slice(0, 298)}"` : opts.etagForm === 'weak' ? `W/"${hex}"` : `"${hex}"`;
}
const notFound = (e) => ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(e?.code);

// ---- responses and the request log ----
function logLine(ctx, status, bytes) {
  if (opts.logFd === null) return;
  // Written synchronously before the response goes out, so a test that reads the
  // log right after its client finished sees the line. BYTES = body bytes announced.
  const range = (ctx.req.headers.range ?? '').replace(/\s+/g, '') || '--';
  const parts = ctx.partsInflight ? ` parts=${ctx.partsInflight}` : '';
  const etag = ctx.etag ? ` etag=${ctx.etag}` : '';
  fs.writeSync(opts.logFd, `${ctx.req.method} ${ctx.req.url} ${range} ${status} ${bytes}${etag} inflight=${ctx.inflight}${parts}\n`);
}
function logNote(text) {
  if (opts.logFd !== null) fs.writeSync(opts.logFd, `${text}\n`);
}

function reply(ctx, status, headers = {}, body = null) {
  const head = ctx.req.method === 'HEAD';
  const len = body === null ? 0 : Buffer.byteLength(body);
  if (!('Content-Length' in headers) && status !== 204 && status !== 304) headers['Content-Length'] = len;
  logLine(ctx, status, head ? 0 : len);
  ctx.done = true;
  ctx.res.writeHead(status, { 'x-amz-request-id': ctx.id, ...headers });
  ctx.res.end(head || body === null ? undefined : body);
}

function sendError(ctx, status, code, message, extra = {}, headers = {}) {
  let x = `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${el('Code', code)}${el('Message', message)}`;
  for (const [k, v] of Object.entries(extra)) x += el(k, v);
  x += `${el('Resource', ctx.resource)}${el('RequestId', ctx.id)}</Error>`;
  reply(ctx, status, { 'Content-Type': 'application/xml', ...headers }, x);
}

// ---- SigV4 verification; returns null when fine, else [status, code, message, extra] ----
function checkAuth(req, rawPath, query) {
  const h = req.headers.authorization;
  if (!h) return [403, 'AccessDenied', 'Missing Authorization header (presigned URLs are not supported)'];
  const m = /^AWS4-HMAC-SHA256\s+(.+)$/s.exec(h);
  if (!m) return [400, 'AuthorizationHeaderMalformed', 'Only AWS4-HMAC-SHA256 Authorization headers are supported'];
  const f = {};
  for (const part of m[1].split(',')) {
    const i = part.indexOf('=');
    if (i > 0) f[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  if (!f.Credential || !f.SignedHeaders || !f.Signature) return [400, 'AuthorizationHeaderMalformed', 'Credential, SignedHeaders and Signature are required'];
  const [ak, date, region, service, term, ...rest] = f.Credential.split('/');
  if (rest.length || service !== 's3' || term !== 'aws4_request') return [400, 'AuthorizationHeaderMalformed', `bad credential scope ${f.Credential}`];
  if (ak !== opts.accessKey) return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.', { AWSAccessKeyId: ak }];
  if (region !== opts.region) return [400, 'AuthorizationHeaderMalformed', `the region '${region}' is wrong; expecting '${opts.region}'`, { Region: opts.region }];
  const amzDate = req.headers['x-amz-date'] ?? '';
  if (!/^\d{8}T\d{6}Z$/.test(amzDate)) return [403, 'AccessDenied', 'Missing or malformed x-amz-date header'];
  if (amzDate.slice(0, 8) !== date) return [400, 'AuthorizationHeaderMalformed', 'Credential date does not match x-amz-date'];
  const signed = f.SignedHeaders.split(';');
  for (const need of ['host', 'x-amz-date', 'x-amz-content-sha256'])
    if (!signed.includes(need)) return [403, 'AccessDenied', `SignedHeaders must include ${need}`];
  // S3 wants every x-amz-* header sent to be signed.
  for (const name of Object.keys(req.headers))
    if (name.startsWith('x-amz-') && !signed.includes(name)) return [403, 'AccessDenied', `${name} is sent but not signed`];
  if (opts.sessionToken && req.headers['x-amz-security-token'] !== opts.sessionToken)
    return [403, 'InvalidToken', 'The provided token is malformed or otherwise invalid.'];
  const payload = req.headers['x-amz-content-sha256'] ?? '';
  if (!/^([0-9a-fA-F]{64}|UNSIGNED-PAYLOAD|STREAMING-.*)$/.test(payload)) return [400, 'InvalidArgument', 'bad x-amz-content-sha256'];

  // Canonical request, rebuilt from what was received. The URI is the raw path
  // (S3 signs the once-encoded path as sent); the query is decoded and re-encoded.
  const q = query.map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`).join('&');
  const headers = signed.map((n) => `${n}:${(req.headersDistinct[n] ?? []).map((v) => v.trim().replace(/\s+/g, ' ')).join(',')}\n`).join('');
  const creq = [req.method, rawPath, q, headers, f.SignedHeaders, payload].join('\n');
  const scope = `${date}/${region}/s3/aws4_request`;
  const sts = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(creq)].join('\n');
  let key = hmac('AWS4' + opts.secretKey, date);
  for (const part of [region, 's3', 'aws4_request']) key = hmac(key, part);
  const want = Buffer.from(hmac(key, sts).toString('hex'));
  const got = Buffer.from(f.Signature);
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want))
    return [403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.',
      { StringToSign: sts, CanonicalRequest: creq }];
  return null;
}

// ---- ListObjectsV2 ----
// Every regular file under DIR (following symlinks), skipping in-flight uploads.
async function walkDir(rel, out) {
  let ents;
  try { ents = await fsp.readdir(path.join(opts.root, rel)); } catch { return; }
  await Promise.all(ents.map(async (name) => {
    if (name.startsWith(TMP_PREFIX)) return;
    const key = rel ? `${rel}/${name}` : name;
    let st;
    try { st = await fsp.stat(path.join(opts.root, key)); } catch { return; } // deleted meanwhile, dangling link
    if (st.isDirectory()) await walkDir(key, out);
    else if (st.isFile()) out.push({ key, st });
  }));
}

// With delimiter "/" only DIR's own level is read: its files, and each
// subdirectory that holds a file somewhere below as KEY/ (a CommonPrefix, as
// S3 rolls it up), found by a search that stops at the first file.  Walking
// the whole tree for that made a listing of a 100,000-file table's root take
// seconds, which no S3 does.
async function hasFile(rel) {
  let ents;
  try { ents = await fsp.readdir(path.join(opts.root, rel), { withFileTypes: true }); } catch { return false; }
  for (const e of ents) {
    if (e.name.startsWith(TMP_PREFIX)) continue;
    const key = `${rel}/${e.name}`;
    let st;
    try { st = await fsp.stat(path.join(opts.root, key)); } catch { continue; }
    if (st.isFile() || (st.isDirectory() && await hasFile(key))) return true;
  }
  return false;
}

// The stats are synchronous: a thousand small stat() calls cost a few ms,
// where as many promises cost tens of ms of the server's one thread.
async function walkLevel(rel, out) {
  let ents;
  try { ents = await fsp.readdir(path.join(opts.root, rel)); } catch { return; }
  const dirs = [];
  for (const name of ents) {
    if (name.startsWith(TMP_PREFIX)) continue;
    const key = rel ? `${rel}/${name}` : name;
    let st;
    try { st = fs.statSync(path.join(opts.root, key)); } catch { continue; }
    if (st.isFile()) out.push({ key, st });
    else if (st.isDirectory()) dirs.push(key);
  }
  for (const key of dirs) if (await hasFile(key)) out.push({ key: `${key}/`, dir: true });
}

async function listObjects(ctx, q) {
  const prefix = q.get('prefix') ?? '', delimiter = q.get('delimiter') ?? '';
  const encType = q.get('encoding-type');
  if (encType !== undefined && encType !== 'url') return sendError(ctx, 400, 'InvalidArgument', 'Invalid Encoding Method specified in Request');
  let maxKeys = 1000;
  if (q.has('max-keys')) {
    if (!/^\d+$/.test(q.get('max-keys'))) return sendError(ctx, 400, 'InvalidArgument', 'Provided max-keys not an integer or within integer range');
    maxKeys = Math.min(Number(q.get('max-keys')), 1000);
  }
  const token = q.get('continuation-token');
  // The token is just the base64url of the last entry returned; resume after it.
  const after = token === undefined ? null : Buffer.from(token, 'base64url').toString();
  if (token !== undefined && !after) return sendError(ctx, 400, 'InvalidArgument', 'The continuation token provided is incorrect');
  const startAfter = q.get('start-after') ?? '';

  // Only walk the directory named by the prefix's leading "a/b/" part.
  const slash = prefix.lastIndexOf('/');
  const base = slash > 0 && keySegments(prefix.slice(0, slash)) ? prefix.slice(0, slash) : '';
  const files = [];
  if (delimiter === '/') await walkLevel(base, files);
  else await walkDir(base, files);
  const keys = files.filter((f) => f.key.startsWith(prefix) && cmp(f.key, startAfter) > 0).sort((a, b) => cmp(a.key, b.key));

  // Objects and rolled-up prefixes in one key-ordered list: they page together.
  // Keys sharing a common prefix are adjacent once sorted, so checking the last entry dedups.
  const entries = [];
  for (const f of keys) {
    const i = delimiter ? f.key.indexOf(delimiter, prefix.length) : -1;
    if (i < 0 && f.dir) continue; /* a directory named by the prefix itself ("a/" for prefix "a/"): its files are listed at its own level */
    if (i < 0) entries.push({ name: f.key, file: f });
    else if (entries.at(-1)?.name !== f.key.slice(0, i + delimiter.length)) entries.push({ name: f.key.slice(0, i + delimiter.length) });
  }
  let start = 0;
  if (after !== null) while (start < entries.length && cmp(entries[start].name, after) <= 0) start++;
  const page = entries.slice(start, start + maxKeys);
  const truncated = maxKeys > 0 && start + page.length < entries.length;

  const enc = (s) => (encType === 'url' ? uriEncode(s, true) : s);
  let x = '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">';
  x += el('Name', opts.bucket) + el('Prefix', enc(prefix));
  if (delimiter) x += el('Delimiter', enc(delimiter));
  x += el('MaxKeys', maxKeys);
  if (encType) x += el('EncodingType', encType);
  x += el('KeyCount', page.length) + el('IsTruncated', truncated);
  if (token !== undefined) x += el('ContinuationToken', token);
  if (truncated) x += el('NextContinuationToken', Buffer.from(page.at(-1).name).toString('base64url'));
  if (q.has('start-after')) x += el('StartAfter', enc(startAfter));
  for (const e of page.filter((e) => e.file)) {
    const { key, st } = e.file;
    x += `<Contents>${el('Key', enc(key))}${el('LastModified', new Date(st.mtimeMs).toISOString())}` +
      `${el('ETag', etagOf(key, st))}${el('Size', st.size)}<StorageClass>STANDARD</StorageClass></Contents>`;
  }
  for (const e of page.filter((e) => !e.file)) x += `<CommonPrefixes>${el('Prefix', enc(e.name))}</CommonPrefixes>`;
  x += '</ListBucketResult>';
  reply(ctx, 200, { 'Content-Type': 'application/xml' }, x);
}

// ---- objects ----
// Range header -> {start,end}, 'unsatisfiable', or null (absent/malformed/multi-range: whole object).
function parseRange(h, size) {
  const m = /^bytes=(\d*)-(\d*)$/.exec((h ?? '').replace(/\s+/g, ''));
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    return n === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]), end = m[2] === '' ? Infinity : Number(m[2]);
  if (end < start) return null; // syntactically invalid: ignored, as RFC 9110 says
  return start >= size ? 'unsatisfiable' : { start, end: Math.min(end, size - 1) };
}
// If-None-Match compares weakly (W/ dropped on both sides), If-Match strongly.
const etagMatches = (h, etag) => h.split(',').map((t) => t.trim().replace(/^W\//, ''))
  .some((t) => t === '*' || t === etag.replace(/^W\//, '') || `"${t}"` === etag);
const etagMatchesStrongly = (h, etag) => !etag.startsWith('W/') &&
  h.split(',').map((t) => t.trim()).some((t) => t === '*' || t === etag);

// Armed replacements (GET /?fake-replace): key -> { after, from, seen, chain }.
// Opens of an armed key are chained, so they happen in arrival order and the
// rename lands after the Nth GET's open and before the next one's.
const replacements = new Map();
function openObject(req, key, file) {
  const r = replacements.get(key);
  if (!r) return fsp.open(file, 'r');
  if (req.method === 'GET' && ++r.seen === r.after + 1)
    r.chain = r.chain.then(() => fsp.rename(r.from, file)).then(() => logNote(`REPLACED ${key}`));
  const opened = r.chain.then(() => fsp.open(file, 'r'));
  r.chain = opened.then(() => {}, () => {});
  return opened;
}
function armReplacement(ctx, q) {
  const key = q.get('key') ?? '', after = Number(q.get('after') ?? ''), from = q.get('from') ?? '';
  if (!keySegments(key) || !Number.isInteger(after) || after < 0 || !from)
    return reply(ctx, 400, { 'Content-Type': 'text/plain' }, 'fake-replace needs key=KEY&after=N&from=FILE\n');
  replacements.set(key, { after, from: path.resolve(from), seen: 0, chain: Promise.resolve() });
  reply(ctx, 200, { 'Content-Type': 'text/plain' }, 'armed\n');
}

let getCount = 0; // GETs with a body, for --drop-every
const faulted = new Set();
// Whether this request may be faulted by `kind` (the first time only).
function faultOnce(kind, req) {
  const key = `${kind} ${req.method} ${req.url} ${req.headers.range ?? ''}`;
  if (faulted.has(key)) return false;
  faulted.add(key);
  return true;
}
async function getObject(ctx, key, segs) {
  const { req, res } = ctx;
  let fh, st;
  try {
    // fstat of the opened file: the ETag and the bytes come from the same inode
    // even if the file is replaced by a rename meanwhile.
    fh = await openObject(req, key, path.join(opts.root, ...segs));
    st = await fh.stat();
  } catch (e) {
    await fh?.close();
    if (notFound(e)) return sendError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: key });
    throw e;
  }
  if (!st.isFile()) { await fh.close(); return sendError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: key }); }
  const etag = etagOf(key, st);
  ctx.etag = etag;
  const headers = { ETag: etag, 'Last-Modified': new Date(st.mtimeMs).toUTCString(), 'Accept-Ranges': 'bytes' };
  if (opts.noEtagOnGet && req.method === 'GET') delete headers.ETag;
  const ifMatch = opts.ignorePreconditions ? undefined : req.headers['if-match'], ifNoneMatch = req.headers['if-none-match'];
  const ifUnmodified = opts.ignorePreconditions ? undefined : req.headers['if-unmodified-since'];
  // S3 compares If-Unmodified-Since to the second (Last-Modified has no more).
  const since = ifUnmodified === undefined ? NaN : Date.parse(ifUnmodified);
  const failed = ifMatch !== undefined ? (etagMatchesStrongly(ifMatch, etag) ? null : 'If-Match')
    : !Number.isNaN(since) && Math.floor(st.mtimeMs / 1000) * 1000 > since ? 'If-Unmodified-Since' : null;
  if (failed) {
    await fh.close();
    return sendError(ctx, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', { Condition: failed });
  }
  if (ifNoneMatch !== undefined && etagMatches(ifNoneMatch, etag)) { await fh.close(); return reply(ctx, 304, headers); }
  const range = parseRange(req.headers.range, st.size);
  if (range === 'unsatisfiable') {
    await fh.close();
    return sendError(ctx, 416, 'InvalidRange', 'The requested range is not satisfiable',
      { RangeRequested: req.headers.range, ActualObjectSize: st.size }, { 'Content-Range': `bytes */${st.size}` });
  }
  const { start, end } = range ?? { start: 0, end: st.size - 1 };
  const len = end - start + 1;
  const status = range ? 206 : 200;
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${st.size}`;
  Object.assign(headers, { 'Content-Type': 'application/octet-stream', 'Content-Length': len });
  if (req.method === 'HEAD' || len === 0) { await fh.close(); return reply(ctx, status, headers); }
  logLine(ctx, status, len);
  ctx.done = true;
  res.writeHead(status, { 'x-amz-request-id': ctx.id, ...headers });
  if (opts.dropEvery > 0 && ++getCount % opts.dropEvery === 0 && len > 1 && faultOnce('drop', req)) {
    // A connection lost mid-body: half the bytes, then the socket is cut.
    const half = Math.floor(len / 2);
    const buf = Buffer.alloc(half);
    await fh.read(buf, 0, half, start);
    await fh.close();
    res.write(buf, () => res.socket?.destroy());
    return;
  }
  // pipeline closes the file and the stream if the client goes away mid-body.
  await pipeline(fh.createReadStream({ start, end }), res).catch(() => res.destroy());
}

// Writes an object atomically: writeTmp(tmp) fills a temp file in the
// object's directory, then it is renamed into place, so readers never see a
// half-written object. writeTmp may return a function that sends a refusal
// instead (the temp file is dropped). Returns the object's path, or null when
// a reply was sent.
// With noReplace (a PUT with If-None-Match: *, S3's conditional write) the
// object is linked into place only where no object is: 412 otherwise.
async function storeObject(ctx, key, segs, writeTmp, noReplace = false) {
  const file = path.join(opts.root, ...segs);
  const tmp = path.join(path.dirname(file), TMP_PREFIX + crypto.randomBytes(8).toString('hex'));
  try {
    await fsp.mkdir(path.dirname(file), { recursive: true });
    const refuse = await writeTmp(tmp);
    if (refuse) {
      await fsp.rm(tmp, { force: true });
      refuse();
      return null;
    }
    if (noReplace) {
      try {
        await fsp.link(tmp, file);
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
        await fsp.rm(tmp, { force: true });
        sendError(ctx, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold',
          { Condition: 'If-None-Match' });
        return null;
      }
      await fsp.rm(tmp, { force: true });
    } else {
      await fsp.rename(tmp, file);
    }
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => {});
    // A file where a directory is needed (or the reverse): S3 allows "a" and "a/b", a directory cannot.
    if (['ENOTDIR', 'EEXIST', 'EISDIR', 'ENOTEMPTY'].includes(e.code)) {
      sendError(ctx, 409, 'InvalidRequest', `fake_s3 cannot store ${key} next to a conflicting file or directory`);
      return null;
    }
    throw e;
  }
  return file;
}

async function putObject(ctx, key, segs) {
  const { req } = ctx;
  if (req.headers['x-amz-copy-source'] !== undefined) return sendError(ctx, 501, 'NotImplemented', 'CopyObject is not implemented');
  const sha = req.headers['x-amz-content-sha256'] ?? '';
  if (sha.startsWith('STREAMING-')) return sendError(ctx, 501, 'NotImplemented', 'aws-chunked uploads are not implemented');
  const hash = crypto.createHash('sha256');
  const file = await storeObject(ctx, key, segs, async (tmp) => {
    await pipeline(req, async function* (src) { for await (const c of src) { hash.update(c); yield c; } },
      fs.createWriteStream(tmp, { flags: 'wx' }));
    if (/^[0-9a-fA-F]{64}$/.test(sha) && hash.digest('hex') !== sha.toLowerCase())
      return () => sendError(ctx, 400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');
  }, req.headers['if-none-match'] === '*');
  // --lose-conditional-replies N: the first N conditional PUTs that succeed
  // have their reply lost (the connection cut after the object is in
  // place): the client cannot tell whether they landed.
  if (file && opts.loseConditionalReplies > 0 && req.headers['if-none-match'] === '*') {
    opts.loseConditionalReplies--;
    ctx.done = true;
    req.socket.destroy();
    return;
  }
  if (file) reply(ctx, 200, { ETag: etagOf(key, await fsp.stat(file)) });
}

async function deleteObject(ctx, segs) {
  // S3 answers 204 whether or not the key existed.
  try { await fsp.unlink(path.join(opts.root, ...segs)); } catch (e) { if (!notFound(e) && e.code !== 'EPERM') throw e; }
  reply(ctx, 204);
}

// ---- multipart uploads ----
// uploadId -> { key, parts: Map(partNumber -> { body, md5 }), errored }; in memory
// only, so parts are never visible as objects nor listed.
const uploads = new Map();
const MIN_PART = 5 * 1024 * 1024; // every part but the last
let completeCount = 0; // CompleteMultipartUploads that would succeed, for --complete-error-every

const xmlUnescape = (s) => s.replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(amp|lt|gt|quot|apos));/g, (_, hex, dec, name) =>
  (hex || dec ? String.fromCodePoint(parseInt(hex ?? dec, hex ? 16 : 10)) : { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[name]));

// The whole request body, or null (after replying) when x-amz-content-sha256
// names a hash the body does not have.
async function readBody(ctx) {
  const chunks = [];
  for await (const c of ctx.req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const sha = ctx.req.headers['x-amz-content-sha256'] ?? '';
  if (/^[0-9a-fA-F]{64}$/.test(sha) && sha256hex(body) !== sha.toLowerCase()) {
    sendError(ctx, 400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');
    return null;
  }
  return body;
}

// The upload `id` of `key`, or undefined after replying 404 NoSuchUpload.
function findUpload(ctx, key, id) {
  const up = uploads.get(id);
  if (up && up.key === key) return up;
  sendError(ctx, 404, 'NoSuchUpload', 'The specified upload does not exist. The upload ID may be invalid, ' +
    'or the upload may have been aborted or completed.', { UploadId: id });
}

function createUpload(ctx, key) {
  const id = crypto.randomBytes(16).toString('hex');
  uploads.set(id, { key, parts: new Map(), errored: false });
  reply(ctx, 200, { 'Content-Type': 'application/xml' }, '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `${el('Bucket', opts.bucket)}${el('Key', key)}${el('UploadId', id)}</InitiateMultipartUploadResult>`);
}

async function uploadPart(ctx, key, q) {
  const { req } = ctx;
  if (req.headers['x-amz-copy-source'] !== undefined) return sendError(ctx, 501, 'NotImplemented', 'UploadPartCopy is not implemented');
  if ((req.headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-'))
    return sendError(ctx, 501, 'NotImplemented', 'aws-chunked uploads are not implemented');
  const pn = q.get('partNumber') ?? '';
  if (!/^\d{1,5}$/.test(pn) || Number(pn) < 1 || Number(pn) > 10000)
    return sendError(ctx, 400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000, inclusive',
      { ArgumentName: 'partNumber', ArgumentValue: pn });
  const id = q.get('uploadId');
  if (!findUpload(ctx, key, id)) return;
  const body = await readBody(ctx);
  if (body === null) return;
  // Aborted or completed while the part was arriving?
  const up = findUpload(ctx, key, id);
  if (!up) return;
  const md5 = crypto.createHash('md5').update(body).digest();
  up.parts.set(Number(pn), { body, md5 }); // a part uploaded again replaces the old one
  reply(ctx, 200, { ETag: `"${md5.toString('hex')}"` });
}

async function completeUpload(ctx, key, segs, id) {
  const { req } = ctx;
  if (!findUpload(ctx, key, id)) return;
  const body = await readBody(ctx);
  if (body === null) return;
  const up = findUpload(ctx, key, id);
  if (!up) return;

  // <CompleteMultipartUpload><Part><PartNumber>N</PartNumber><ETag>"…"</ETag></Part>…</CompleteMultipartUpload>;
  // other elements of a Part (checksums) are ignored.
  const malformed = () => sendError(ctx, 400, 'MalformedXML',
    'The XML you provided was not well-formed or did not validate against our published schema');
  const m = /^\s*(?:<\?xml[^>]*\?>\s*)?<CompleteMultipartUpload(?:\s[^>]*)?>([\s\S]*)<\/CompleteMultipartUpload>\s*$/
    .exec(body.toString());
  if (!m) return malformed();
  const listed = [];
  const rest = m[1].replace(/<Part>([\s\S]*?)<\/Part>/g, (_, inner) => {
    const n = /<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(inner), e = /<ETag>([^<]*)<\/ETag>/.exec(inner);
    listed.push(n && e ? { n: Number(n[1]), etag: xmlUnescape(e[1]).trim().replace(/^"(.*)"$/, '$1') } : null);
    return '';
  });
  if (rest.trim() || listed.length === 0 || listed.includes(null)) return malformed();
  for (let i = 1; i < listed.length; i++)
    if (listed[i].n <= listed[i - 1].n)
      return sendError(ctx, 400, 'InvalidPartOrder', 'The list of parts was not in ascending order. Parts must be ordered by part number.',
        { UploadId: id });
  const parts = [];
  for (const { n, etag } of listed) {
    const p = up.parts.get(n);
    if (!p || p.md5.toString('hex') !== etag.toLowerCase())
      return sendError(ctx, 400, 'InvalidPart', 'One or more of the specified parts could not be found.  The part may not have been ' +
        "uploaded, or the specified entity tag may not match the part's entity tag.", { UploadId: id, PartNumber: n, ETag: etag });
    parts.push(p);
  }
  for (let i = 0; i < parts.length - 1; i++)
    if (parts[i].body.length < MIN_PART)
      return sendError(ctx, 400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed object size.',
        { ProposedSize: parts[i].body.length, MinSizeAllowed: MIN_PART, PartNumber: listed[i].n, ETag: listed[i].etag });

  if (opts.completeErrorEvery > 0 && ++completeCount % opts.completeErrorEvery === 0 && !up.errored) {
    up.errored = true; // once per upload: the retry succeeds
    return sendError(ctx, 200, 'InternalError', 'We encountered an internal error. Please try again.');
  }

  const file = await storeObject(ctx, key, segs, (tmp) => fsp.writeFile(tmp, parts.map((p) => p.body), { flag: 'wx' }));
  if (!file) return;
  uploads.delete(id);
  const etag = '"' + crypto.createHash('md5').update(Buffer.concat(parts.map((p) => p.md5))).digest('hex') + `-${parts.length}"`;
  const location = `http://${req.headers.host ?? '127.0.0.1'}/${uriEncode(opts.bucket)}/${uriEncode(key, true)}`;
  reply(ctx, 200, { 'Content-Type': 'application/xml' }, '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<CompleteMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `${el('Location', location)}${el('Bucket', opts.bucket)}${el('Key', key)}${el('ETag', etag)}</CompleteMultipartUploadResult>`);
}

function abortUpload(ctx, key, id) {
  if (!findUpload(ctx, key, id)) return;
  uploads.delete(id);
  reply(ctx, 204);
}

// ---- dispatch ----
let requestCount = 0;
async function handle(ctx) {
  const { req } = ctx;
  const qi = req.url.indexOf('?');
  const rawPath = qi < 0 ? req.url : req.url.slice(0, qi);
  const query = parseQuery(qi < 0 ? '' : req.url.slice(qi + 1));
  ctx.resource = rawPath;
  // Test-only introspection, before faults and auth: uploads neither completed nor aborted.
  if (req.method === 'GET' && rawPath === '/' && query.length === 1 && query[0][0].toString() === 'fake-pending-uploads')
    return reply(ctx, 200, { 'Content-Type': 'text/plain' }, `${uploads.size}\n`);
  if (req.method === 'GET' && rawPath === '/' && query.length > 0 && query[0][0].toString() === 'fake-replace')
    return armReplacement(ctx, new Map(query.map(([k, v]) => [k.toString(), v.toString()])));
  if (opts.failEvery > 0 && ctx.n % opts.failEvery === 0 && faultOnce('503', req)) return sendError(ctx, 503, 'SlowDown', 'Please reduce your request rate.');
  if (opts.accessKey) {
    const fail = checkAuth(req, rawPath, query);
    if (fail) return sendError(ctx, fail[0], fail[1], fail[2], fail[3]);
  }
  const q = new Map();
  for (const [k, v] of query) if (!q.has(k.toString())) q.set(k.toString(), v.toString());

  // Virtual-hosted style (BUCKET.localhost:PORT/KEY; curl resolves any
  // *.localhost to the loopback), else path style (HOST/BUCKET/KEY).
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  const vhost = host.endsWith('.localhost') ? host.slice(0, -'.localhost'.length) : null;
  const rest = rawPath.slice(1);
  const slash = vhost !== null ? -1 : rest.indexOf('/');
  const bucket = vhost !== null ? vhost : pctDecode(slash < 0 ? rest : rest.slice(0, slash)).toString();
  const key = vhost !== null ? pctDecode(rest).toString() : slash < 0 ? '' : pctDecode(rest.slice(slash + 1)).toString();
  if (!rawPath.startsWith('/') || bucket !== opts.bucket)
    return sendError(ctx, 404, 'NoSuchBucket', 'The specified bucket does not exist', { BucketName: bucket });

  if (key === '') { // bucket-level operations
    if (req.method === 'HEAD') return reply(ctx, 200);
    if (q.has('uploads')) return sendError(ctx, 501, 'NotImplemented', 'ListMultipartUploads is not implemented');
    if (req.method === 'GET' && q.has('location'))
      return reply(ctx, 200, { 'Content-Type': 'application/xml' }, '<?xml version="1.0" encoding="UTF-8"?>\n' +
        `<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${opts.region === 'us-east-1' ? '' : xmlEscape(opts.region)}</LocationConstraint>`);
    if (req.method === 'GET') return listObjects(ctx, q); // V1 (no list-type) gets the V2 answer too
    return sendError(ctx, 501, 'NotImplemented', `${req.method} on a bucket is not implemented`);
  }
  const segs = keySegments(key);
  if (!segs) return sendError(ctx, 400, 'InvalidArgument', 'fake_s3 rejects keys with empty, "." or ".." segments', { Key: key });
  for (const sub of ['acl', 'tagging', 'retention', 'legal-hold', 'attributes'])
    if (q.has(sub)) return sendError(ctx, 501, 'NotImplemented', `?${sub} is not implemented`);
  if (req.method === 'POST' && q.has('uploads') && !q.has('uploadId')) return createUpload(ctx, key);
  if (q.has('uploadId') && !q.has('uploads')) {
    if (req.method === 'PUT') return uploadPart(ctx, key, q);
    if (req.method === 'POST') return completeUpload(ctx, key, segs, q.get('uploadId'));
    if (req.method === 'DELETE') return abortUpload(ctx, key, q.get('uploadId'));
  }
  if (q.has('uploads') || q.has('uploadId')) return sendError(ctx, 501, 'NotImplemented', `${req.method} ?${q.has('uploads') ? 'uploads' : 'uploadId'} is not implemented`);
  switch (req.method) {
    case 'GET': case 'HEAD': return getObject(ctx, key, segs);
    case 'PUT': return putObject(ctx, key, segs);
    case 'DELETE': return deleteObject(ctx, segs);
    default: return sendError(ctx, 501, 'NotImplemented', `${req.method} is not implemented`);
  }
}

let inflight = 0, partsInflight = 0, bodyRequests = 0;
const server = http.createServer((req, res) => {
  if (opts.stallRangeGets && req.method === 'GET' && req.headers.range) return; /* never answered */
  if (opts.resetEvery > 0 && Number(req.headers['content-length'] ?? 0) > 0 && ++bodyRequests % opts.resetEvery === 0 &&
      faultOnce('reset', req)) {
    req.socket.destroy();
    return;
  }
  const ctx = { req, res, n: ++requestCount, id: crypto.randomBytes(8).toString('hex').toUpperCase(), done: false,
    resource: req.url, inflight: ++inflight };
  const isPart = req.method === 'PUT' && /[?&]partNumber=/.test(req.url);
  if (isPart) ctx.partsInflight = ++partsInflight;
  res.on('close', () => { inflight--; if (isPart) partsInflight--; });
  const bodyBytes = Number(req.headers['content-length'] ?? 0) || 0;
  const delay = opts.delayMs + (isPart ? opts.partDelayMs : 0) + (opts.mbps > 0 ? bodyBytes / (opts.mbps * 1000) : 0);
  const start = delay > 0 ? new Promise((r) => setTimeout(r, delay)) : Promise.resolve();
  start.then(() => handle(ctx)).catch((err) => {
    if (ctx.done) res.destroy();
    else sendError(ctx, 500, 'InternalError', String(err?.message ?? err));
  });
});
server.on('error', (e) => { process.stderr.write(`fake_s3: ${e.message}\n`); process.exit(1); });
server.listen(opts.port, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections(); // keep-alive sockets would otherwise hold close() open
    setTimeout(() => process.exit(0), 1000).unref();
  });
}
