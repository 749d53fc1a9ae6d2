// unit.sigv4_ref: our AWS Signature V4 signer (engine/io/sigv4.c) against the
// AWS SDK's (@smithy/signature-v4, configured as @aws-sdk/client-s3 does:
// uriEscapePath false, the payload hash taken from x-amz-content-sha256).
//
//   node tests/unit/sigv4_ref.mjs BUILD/tests/sigv4_cases [--cases N] [--seed S] [--dump]
//
// Generates N deterministic pseudo-random S3 requests (default 4,000), signs
// each with the SDK and with sigv4_cases (tests/unit/sigv4_cases.c, which calls
// pq_sigv4_sign), and compares the Authorization headers (hence the signed
// header list and signature), x-amz-date, x-amz-content-sha256 and, for
// object keys, the path (ours built by pq_url_encode as store_s3.c does, the
// SDK's as its S3 client builds it).  Every difference fails the test with the
// case and the SDK's canonical request printed.  Exit 77 (skipped) when
// tools/js/node_modules lacks the SDK's signer.
//
// What the cases are: object GET/HEAD/PUT/POST/DELETE on keys with spaces,
// unicode (2-, 3- and 4-byte UTF-8), % + = ~ ! * ' ( ) & ? # and other
// punctuation, tabs, '/', '//', '.', '..' segments, leading slashes, Hive
// partition names; path-style and virtual-hosted; ListObjectsV2 listings
// (list-type=2, delimiter, prefix, continuation-token) and multipart queries
// (?uploads, ?partNumber=N&uploadId=ID) exactly as store_s3.c builds them;
// random queries sent in four spellings (canonical %XX, encodeURIComponent's
// which leaves !'()* bare, lowercase hex, and a minimal one leaving UTF-8, '/',
// '?', '=' in values and '+' bare), repeated and valueless parameters, stray
// '&'s; extra signed headers in any case with spaces and tabs around and inside
// values, repeated names; session tokens; secrets past HMAC's 64-byte block.
//
// The rules: what is not compared, and why (each excluded by construction,
// none dropped after the fact):
//  1. Headers the SDK never signs (authorization, user-agent, date, expect,
//     connection, ..., proxy-*, sec-*: its ALWAYS_UNSIGNABLE_HEADERS) are not
//     generated: pq_sigv4_sign signs every extra header its caller passes (the
//     caller chooses; store_s3.c passes none), the SDK silently drops these.
//  2. A repeated header name: pq_sigv4_sign takes the values as separate
//     headers and signs them trimmed and joined with ',' (the SigV4 rule); the
//     SDK's headers are a map with one value a name, so it is given that
//     joined value.  Header names are HTTP tokens (ASCII): the SDK lowercases
//     with Unicode rules, we with ASCII's.
//  3. Refusals, checked as refusals (our signer must fail, with the message):
//     CR or LF in a header value (the SDK folds it to a space; we refuse
//     header injection), an extra header named host, x-amz-date,
//     x-amz-content-sha256 or x-amz-security-token (the signer sets them),
//     a header name with ':' or a space, a malformed x-amz-date, a secret
//     over 512 bytes (real ones are 40).
//  4. A query parameter named X-Amz-Signature (any case) is not generated: the
//     SDK skips it (it is a presigned URL's own signature); a header-signed
//     request never has one.
//  5. The SDK is given the decoded query map, so the wire text's decoding is
//     ours to define (sigv4.h): a space on the wire is %20, never '+', as our
//     signer reads a bare '+' as a plus (the minimal spelling sends '+' bare,
//     meaning a plus in the map too; store_s3.c sends none); and a '%' is
//     always escaped (we keep a '%' that starts no escape literally, a rule
//     with no SDK counterpart).
//  6. Keys and query text are valid Unicode: the SDK's encoders throw on lone
//     surrogates, a JS string cannot hold what %FF decodes to, and S3 keys
//     are UTF-8.
//  7. Paths are S3's: signed as sent, never normalised or encoded twice (the
//     SDK's uriEscapePath false, as its S3 client sets it), and never empty
//     (store_s3.c always sends at least "/").  Other services' double
//     encoding is not what our signer does and is not asked of it.
import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const toolsJs = path.resolve(here, '../../tools/js');

function argValue(name, dflt) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}
const driver = process.argv[2];
const nCases = Number(argValue('--cases', '4000'));
const seed = Number(argValue('--seed', '20240607'));
if (!driver || !Number.isInteger(nCases) || nCases < 1) {
  console.error('usage: sigv4_ref.mjs SIGV4_CASES [--cases N] [--seed S]');
  process.exit(2);
}

let SignatureV4, HttpRequest, extendedEncodeURIComponent, escapeUri;
try {
  const req = createRequire(path.join(toolsJs, 'package.json'));
  const sigPath = req.resolve('@smithy/signature-v4');
  ({ SignatureV4 } = req(sigPath));
  // @smithy/core as the signer itself resolves it (its dependency).
  ({ HttpRequest, extendedEncodeURIComponent, escapeUri } = createRequire(sigPath)('@smithy/core/protocols'));
} catch (e) {
  console.error(`sigv4_ref: SKIPPED: @smithy/signature-v4 not in tools/js/node_modules (run tools/setup-deps.sh): ${e.message}`);
  process.exit(77);
}

// The SDK's hash interface (what @smithy/hash-node gives its clients), on
// node's crypto.
class Sha256 {
  constructor(secret) {
    this.h = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuf(secret));
  }
  update(data) { this.h.update(toBuf(data)); }
  async digest() { return new Uint8Array(this.h.digest()); }
}
const toBuf = (d) => (typeof d === 'string' ? Buffer.from(d, 'utf8') : Buffer.from(d.buffer ?? d, d.byteOffset ?? 0, d.byteLength ?? d.length));

// ---------------------------------------------------------------- random

let state = seed >>> 0;
function rnd() { // mulberry32
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
const pick = (a) => a[Math.floor(rnd() * a.length)];
const chance = (p) => rnd() < p;

const PLAIN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.';
const ODD = [' ', ' ', '%', '%25', '%2F', '+', '=', '~', '!', '*', "'", '(', ')', '&', '?', '#', ':', '@', ',', ';', '$',
  '[', ']', '{', '}', '^', '`', '|', '\\', '"', '<', '>', '\t', '\x7f', '\x01'];
const UNI = ['é', 'ü', 'ß', 'ñ', 'Ω', 'ж', '日本', '語', '€', '\u00a0', '\u2028', 'e\u0301', '😀', '𝄞', '\ufeff', '\ufffd'];

function text(maxLen, { odd = 0.15, uni = 0.08 } = {}) {
  let s = '';
  const n = int(0, maxLen);
  for (let i = 0; i < n; i++) {
    const r = rnd();
    s += r < odd ? pick(ODD) : r < odd + uni ? pick(UNI) : PLAIN[int(0, PLAIN.length - 1)];
  }
  return s;
}

function objectKey() {
  const shapes = [
    () => `${text(8, { odd: 0, uni: 0 }) || 't'}/date=2024-0${int(1, 9)}-1${int(0, 9)}/part-${int(0, 99999)}.parquet`,
    () => `lake/${text(12)}/${text(20)}.parquet`,
    () => Array.from({ length: int(1, 5) }, () => text(10)).join(pick(['/', '/', '//'])),
    () => pick(['', '/', '//', '/a', 'a/', 'a//b', './a', 'a/./b', 'a/../b', '..', '.', '...', '~', '%', '+', ' ', '=']),
    () => `${text(6)}/${pick(['.', '..', ''])}/${text(6)}`,
    () => text(300, { odd: 0.3, uni: 0.3 }),
  ];
  return pick(shapes)();
}

function b64(n) {
  const a = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let s = '';
  for (let i = 0; i < n; i++) s += a[int(0, 63)];
  return s + pick(['', '=', '==']);
}
const hex64 = () => Array.from({ length: 64 }, () => '0123456789abcdef'[int(0, 15)]).join('');

// ---------------------------------------------------------------- query spellings

const pctOf = (b) => '%' + b.toString(16).toUpperCase().padStart(2, '0');
const pctBytes = (s) => [...Buffer.from(s, 'utf8')].map(pctOf).join('');
const SPELL = {
  canonical: (s) => escapeUri(s),
  uric: (s) => encodeURIComponent(s),
  lower: (s) => escapeUri(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  // Only what would change the meaning: % & # space, '=' in a name.
  minimal: (s, isName) => s.replace(isName ? /[%&# =]/g : /[%&# ]/g, pctBytes),
};
const SPELLINGS = Object.keys(SPELL);

function queryName() {
  for (;;) {
    const n = chance(0.5) ? pick(['prefix', 'marker', 'max-keys', 'versionId', 'response-content-type', 'acl', 'tagging',
      'x-id', 'A', 'a', 'B', 'a b', 'a+b', 'a~b', 'a_b', 'Z', 'é', 'x-amz-meta', '']) : text(8);
    if (n.toLowerCase() !== 'x-amz-signature') return n; // rule 4
  }
}

// A random query: the wire text our signer is given and the decoded map the
// SDK is given.
function randomQuery() {
  const map = {};
  const parts = [];
  const n = int(0, 6);
  for (let i = 0; i < n; i++) {
    const name = i > 0 && chance(0.15) ? pick(Object.keys(map).length ? Object.keys(map) : ['a']) : queryName();
    const value = chance(0.2) ? '' : chance(0.3) ? pick(['1', '2', '/', '=', '==', '+', ' ', '%', 'a=b', '*']) : text(16);
    const sn = SPELL[pick(SPELLINGS)], sv = SPELL[pick(SPELLINGS)];
    // A valueless parameter may go without '=' ("?uploads"), unless its name is
    // empty too: an empty piece ("a&&b") is no parameter.
    parts.push(value === '' && name !== '' && chance(0.5) ? sn(name, true) : `${sn(name, true)}=${sv(value, false)}`);
    if (name in map) map[name] = [].concat(map[name], value);
    else map[name] = value;
  }
  let wire = parts.join(chance(0.1) ? '&&' : '&');
  if (chance(0.05)) wire = '&' + wire;
  if (chance(0.05)) wire += '&';
  return { wire, map };
}

// ---------------------------------------------------------------- headers

const ws = () => pick(['', '', '', ' ', '  ', '\t', ' \t ']);
const caseMix = (s) => [...s].map((c) => (chance(0.3) ? c.toUpperCase() : c)).join('');
const HEADER_MAKERS = [
  () => ['range', `bytes=${int(0, 1 << 20)}-${int(1 << 20, 1 << 30)}`],
  () => ['if-none-match', '*'],
  () => ['if-match', `"${hex64().slice(0, 32)}"`],
  () => ['if-match', `W/"${int(1, 1e9)}"`],
  () => ['if-modified-since', 'Wed, 21 Oct 2015 07:28:00 GMT'],
  () => ['content-type', pick(['application/octet-stream', 'text/csv; charset=utf-8', 'application/x-parquet'])],
  () => ['content-length', String(int(0, 1e9))],
  () => ['content-md5', b64(22)],
  () => ['x-amz-server-side-encryption', 'AES256'],
  () => ['x-amz-storage-class', pick(['STANDARD', 'INTELLIGENT_TIERING'])],
  () => ['x-amz-checksum-crc32', b64(6)],
  () => [`x-amz-meta-${text(6, { odd: 0, uni: 0 }).toLowerCase() || 'm'}`, text(24, { odd: 0.2, uni: 0.1 })],
  () => [`x-${pick(['custom', 'a!b', "o'k", 'z^|~', 'q#$%&*+.'])}`, `${text(4)}  ${text(4)}\t\t${text(4)}`],
];

function extraHeaders() {
  const out = [];
  const n = chance(0.5) ? 0 : int(1, 5);
  for (let i = 0; i < n; i++) {
    let [name, value] = i > 0 && chance(0.15) ? [out[int(0, out.length - 1)][0], text(8)] : pick(HEADER_MAKERS)();
    // Values keep no CR/LF (rule 3); spaces and tabs are added around.
    value = value.replace(/[\r\n]/g, '_');
    out.push([caseMix(name.toLowerCase()), ws() + value + ws()]);
  }
  return out;
}

// The SDK's view of our headers (rule 2): one name, values trimmed and joined.
const trimall = (v) => v.replace(/[ \t]+/g, ' ').replace(/^ | $/g, '');
function sdkHeaders(extras) {
  const groups = new Map(); // lowercase name -> [first spelling, values]
  for (const [n, v] of extras) {
    const l = n.toLowerCase();
    if (!groups.has(l)) groups.set(l, [n, []]);
    groups.get(l)[1].push(v);
  }
  const out = {};
  for (const [name, values] of groups.values())
    out[name] = values.length === 1 ? values[0] : values.map(trimall).join(',');
  return out;
}

// ---------------------------------------------------------------- cases

const HOSTS = ['localhost:9000', '127.0.0.1:8333', 's3.amazonaws.com', 's3.eu-west-1.amazonaws.com', 'minio.local',
  'Storage.Example.COM:443', '[::1]:9000', 'r2.cloudflarestorage.com'];
const REGIONS = ['us-east-1', 'eu-west-3', 'ap-southeast-2', 'us-gov-west-1', 'auto', 'garage', 'cn-north-1'];

function dateOf(sec) {
  return new Date(sec * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

function credentials() {
  // Past HMAC's 64-byte block sometimes; never past our 512 bytes (a refusal).
  const secret = chance(0.1) ? text(int(61, 120), { odd: 0.2, uni: 0.2 }) || 'x' : b64(40).slice(0, 40);
  return {
    accessKeyId: pick(['AKIAIOSFODNN7EXAMPLE', 'ASIA' + b64(16).replace(/[+/=]/g, 'Q').slice(0, 16), 'minioadmin', 'GK31c2f218a2e44f485b94239e']),
    secretAccessKey: secret,
    sessionToken: chance(0.3) ? (chance(0.1) ? ' ' : '') + b64(int(20, 1500)) + (chance(0.1) ? '  ' : '') : undefined,
  };
}

// One comparable case: what both signers are given.
function makeCase(id) {
  const bucket = pick(['bucket', 'my.bucket', 'lake-01', 'b']);
  const pathStyle = chance(0.5);
  const pathpre = pathStyle ? `/${bucket}/` : '/';
  const host = pathStyle ? pick(HOSTS) : `${bucket}.${pick(HOSTS)}`;
  const c = {
    id, host, creds: credentials(), region: pick(REGIONS), service: chance(0.9) ? 's3' : pick(['s3-object-lambda', 's3express']),
    sec: int(946684800, 2145916799), payload: pick(['UNSIGNED-PAYLOAD', 'UNSIGNED-PAYLOAD', hex64(),
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD']),
    headers: [], query: '', qenc: [], map: {},
  };
  const kind = rnd();
  if (kind < 0.2) { // ListObjectsV2 as s3_list builds it
    c.method = 'GET';
    c.path = pathStyle ? `/${bucket}` : '/';
    const prefix = chance(0.2) ? '' : objectKey().replace(/\/*$/, '/');
    const token = chance(0.5) ? b64(int(10, 200)) + (chance(0.2) ? text(10) : '') : '';
    if (token) c.qenc.push(['continuation-token', token]);
    c.qenc.push(['delimiter', '/'], ['list-type', '2'], ['prefix', prefix]);
  } else if (kind < 0.3) { // multipart upload requests
    c.key = objectKey();
    const up = chance(0.3) ? 'uploads' : chance(0.5) ? 'uploadId' : 'part';
    c.method = up === 'uploads' || up === 'uploadId' && chance(0.5) ? 'POST' : up === 'part' ? 'PUT' : 'DELETE';
    if (up === 'uploads') {
      c.query = 'uploads';
      c.map = { uploads: '' }; // as the SDK's CreateMultipartUpload has it
    } else {
      if (up === 'part') {
        const n = String(int(1, 10000));
        c.query = `partNumber=${n}`;
        c.map = { partNumber: n };
      }
      c.qenc.push(['uploadId', b64(int(20, 120)) + (chance(0.2) ? text(6) : '')]);
    }
  } else if (kind < 0.6) { // objects as the store reads and writes them
    c.key = objectKey();
    c.method = pick(['GET', 'GET', 'HEAD', 'PUT', 'DELETE']);
  } else { // the signer's whole surface: random queries, extra headers
    c.key = chance(0.8) ? objectKey() : undefined;
    if (!c.key) c.path = pathStyle ? `/${bucket}` : '/';
    c.method = pick(['GET', 'HEAD', 'PUT', 'POST', 'DELETE']);
    const q = randomQuery();
    c.query = q.wire;
    c.map = q.map;
    c.headers = extraHeaders();
  }
  if (c.key !== undefined) c.pathpre = pathpre;
  for (const [n, v] of c.qenc) {
    if (n in c.map) c.map[n] = [].concat(c.map[n], v);
    else c.map[n] = v;
  }
  return c;
}

// Cases our signer must refuse (rule 3): [case, what the error says].
function refusalCases(first) {
  const out = [];
  const bad = [
    [[['x-amz-meta-a', 'one\r\nX-Injected: 1']], 'line break'],
    [[['Content-Type', 'text/plain\n']], 'line break'],
    [[['x-amz-meta-b', 'a\rb']], 'line break'],
    [[['Host', 'evil.example']], 'set by the signer'],
    [[['X-Amz-Date', '20130524T000000Z']], 'set by the signer'],
    [[['x-amz-content-sha256', 'UNSIGNED-PAYLOAD']], 'set by the signer'],
    [[['X-AMZ-SECURITY-TOKEN', 'tok']], 'set by the signer'],
    [[['bad:name', 'v']], 'invalid header name'],
    [[['bad name', 'v']], 'invalid header name'],
    [[['', 'v']], 'invalid header name'],
  ];
  let id = first;
  for (const [headers, msg] of bad) {
    const c = makeCase(String(id++));
    c.headers = headers;
    out.push([c, msg]);
  }
  for (const d of ['2013-05-24T00:00:00Z', '20130524T000000', '20130524T0000000Z', '2013052AT000000Z', '']) {
    const c = makeCase(String(id++));
    c.date = d;
    out.push([c, 'amz_date']);
  }
  const c = makeCase(String(id++));
  c.creds.secretAccessKey = 'é'.repeat(257); // 514 bytes
  out.push([c, 'secret key too long']);
  return out;
}

// ---------------------------------------------------------------- both signers

const hx = (s) => Buffer.from(s, 'utf8').toString('hex');
function driverInput(c) {
  const lines = [`case ${c.id}`, `method ${hx(c.method)}`, `host ${hx(c.host)}`, `payload ${hx(c.payload)}`,
    `date ${hx(c.date ?? dateOf(c.sec))}`, `region ${hx(c.region)}`, `service ${hx(c.service)}`,
    `ak ${hx(c.creds.accessKeyId)}`, `sk ${hx(c.creds.secretAccessKey)}`];
  if (c.creds.sessionToken !== undefined) lines.push(`token ${hx(c.creds.sessionToken)}`);
  if (c.key !== undefined) lines.push(`pathpre ${hx(c.pathpre)}`, `key ${hx(c.key)}`);
  else lines.push(`path ${hx(c.path)}`);
  if (c.query) lines.push(`query ${hx(c.query)}`);
  for (const [n, v] of c.qenc) lines.push(`qenc ${hx(n)} ${hx(v)}`);
  for (const [n, v] of c.headers) lines.push(`header ${hx(n)} ${hx(v)}`);
  lines.push('end');
  return lines.join('\n') + '\n';
}

// The path as @aws-sdk/client-s3 builds it for a Key (a greedy label).
const sdkPath = (c) => (c.key !== undefined ? c.pathpre + c.key.split('/').map(extendedEncodeURIComponent).join('/') : c.path);

async function sdkSign(c) {
  const signer = new SignatureV4({ credentials: c.creds, region: c.region, service: c.service, sha256: Sha256, uriEscapePath: false });
  let canonical = '';
  const orig = signer.createCanonicalRequest.bind(signer);
  signer.createCanonicalRequest = (...a) => (canonical = orig(...a));
  const request = new HttpRequest({
    method: c.method, protocol: 'https:', hostname: c.host, path: sdkPath(c), query: c.map,
    headers: { host: c.host, 'x-amz-content-sha256': c.payload, ...sdkHeaders(c.headers) },
  });
  const signed = await signer.sign(request, { signingDate: new Date(c.sec * 1000) });
  return { auth: signed.headers.authorization, date: signed.headers['x-amz-date'], canonical };
}

function runDriver(cases) {
  const r = spawnSync(driver, [], { input: cases.map(driverInput).join(''), maxBuffer: 1 << 28 });
  if (r.error || r.status !== 0) {
    console.error(`sigv4_ref: ${driver} failed: ${r.error?.message ?? `exit ${r.status}`}\n${r.stderr}`);
    process.exit(1);
  }
  const out = new Map();
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const m = /^(\S+) (OK|ERR) (.*)$/s.exec(line); // the wire text may hold U+2028
    if (m) out.set(m[1], { ok: m[2] === 'OK', text: m[3] });
  }
  return out;
}

const show = (c) => JSON.stringify({ ...c, creds: { ...c.creds } }, null, 1);

const cases = Array.from({ length: nCases }, (_, i) => makeCase(String(i)));
const refusals = refusalCases(nCases);
if (process.argv.includes('--dump')) { // the driver's input, to run it by hand
  process.stdout.write([...cases, ...refusals.map((r) => r[0])].map(driverInput).join(''));
  process.exit(0);
}
const results = runDriver([...cases, ...refusals.map((r) => r[0])]);
let failed = 0;
function fail(msg) {
  failed++;
  if (failed <= 10) console.error(msg);
}
for (const c of cases) {
  const ours = results.get(c.id);
  const ref = await sdkSign(c);
  if (!ours) { fail(`case ${c.id}: no answer from the driver\n${show(c)}`); continue; }
  if (!ours.ok) { fail(`case ${c.id}: our signer failed: ${ours.text}\n${show(c)}`); continue; }
  const [auth, date, sha, ...rest] = ours.text.split('\t');
  const wire = rest.join('\t'); // a tab in the query is sent bare
  const wirePath = wire.slice(0, wire.indexOf('?'));
  const problems = [];
  if (auth !== ref.auth) problems.push(`Authorization\n  ours: ${auth}\n  sdk:  ${ref.auth}`);
  if (date !== ref.date) problems.push(`x-amz-date ours ${date}, sdk ${ref.date}`);
  if (sha !== c.payload) problems.push(`x-amz-content-sha256 ${sha}, not ${c.payload}`);
  if (wirePath !== sdkPath(c)) problems.push(`path\n  ours: ${wirePath}\n  sdk:  ${sdkPath(c)}`);
  if (problems.length)
    fail(`case ${c.id} differs: ${problems.join('\n')}\nwire: ${wire}\ncase: ${show(c)}\nSDK canonical request:\n${ref.canonical}\n`);
}
for (const [c, msg] of refusals) {
  const ours = results.get(c.id);
  if (!ours || ours.ok || !ours.text.includes(msg))
    fail(`refusal case ${c.id}: wanted an error with '${msg}', got ${ours ? (ours.ok ? 'a signature' : ours.text) : 'nothing'}\n${show(c)}`);
}
const nHdr = cases.filter((c) => c.headers.length).length;
const nQuery = cases.filter((c) => c.query || c.qenc.length).length;
const nToken = cases.filter((c) => c.creds.sessionToken).length;
console.log(`sigv4_ref: ${cases.length} requests signed by both (${nQuery} with a query, ${nHdr} with extra headers, ` +
  `${nToken} with a session token), ${refusals.length} refusals checked; ${failed} failed`);
console.log(`${cases.length + refusals.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
