// Shared helpers of the differential test (tests/diff): module loading from
// tools/js/node_modules, a seeded PRNG, SQL/pqfs quoting.
import { createRequire } from 'node:module';
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const jsDir = path.join(repoRoot, 'tools', 'js');

/** True when the reference tools are installed (tools/setup-deps.sh). */
export function haveNodeModules() {
  return fs.existsSync(path.join(jsDir, 'node_modules', '@duckdb', 'node-api')) &&
    fs.existsSync(path.join(jsDir, 'node_modules', 'parquet-wasm'));
}

/** tools/js/duckdb.mjs (DuckDB loader). */
export async function duckdbHelpers() {
  return import(path.join(jsDir, 'duckdb.mjs'));
}

/** parquet-wasm's Node build (arrow-rs compiled to wasm). */
export function parquetWasm() {
  const require = createRequire(path.join(jsDir, 'package.json'));
  return require('parquet-wasm');
}

/** mulberry32: a small seeded PRNG; the same seed gives the same stream on every platform. */
export function makeRng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng = {
    next,
    /** integer in [lo, hi] */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
    /** k distinct picks (or fewer when xs is short) */
    sample: (xs, k) => {
      const c = xs.slice();
      const out = [];
      while (out.length < k && c.length) out.push(c.splice(Math.floor(next() * c.length), 1)[0]);
      return out;
    },
  };
  return rng;
}

/** A SQL / pqfs string literal ('' escapes a quote in both). */
export function quoteString(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

/** A double-quoted identifier (SQL and pqfs). */
export function quoteIdent(s) {
  return `"${String(s).replaceAll('"', '""')}"`;
}

/** An identifier for pqfs: bare when it is a plain name. */
export function pqIdent(s) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) && !/^(and|or|not|in|is|null|like|between|true|false)$/i.test(s)
    ? s : quoteIdent(s);
}
