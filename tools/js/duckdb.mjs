// Shared helpers for the node scripts under tools/: loads DuckDB from
// tools/js/node_modules (scripts elsewhere in tools/ cannot resolve it by
// name) and opens an in-memory database.
//
//   import { openDuckDB, sqlString, repoRoot } from './js/duckdb.mjs';
//   const { instance, conn } = await openDuckDB({ threads: 1 });
//   await conn.run(`COPY (FROM ${sqlString(path)}) TO '/dev/null' (FORMAT csv)`);
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The repository root (tools/js/../..). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let mod;
/** The @duckdb/node-api module; exits with a hint when it is not installed. */
export async function loadDuckDB() {
  if (mod) return mod;
  try {
    mod = await import('@duckdb/node-api');
  } catch (e) {
    if (e && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND')) {
      console.error('error: @duckdb/node-api is not installed in tools/js: run tools/setup-deps.sh');
      process.exit(2);
    }
    throw e;
  }
  return mod;
}

/**
 * A new in-memory DuckDB instance and a connection to it.
 * options: DuckDB settings as strings or numbers, e.g. { threads: 1 }.
 */
export async function openDuckDB(options = {}) {
  const { DuckDBInstance } = await loadDuckDB();
  const opts = {};
  for (const [k, v] of Object.entries(options)) opts[k] = String(v);
  const instance = await DuckDBInstance.create(':memory:', opts);
  const conn = await instance.connect();
  return { instance, conn };
}

/** A SQL string literal. */
export function sqlString(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

/** All rows of a query as plain objects (BIGINTs come back as BigInt). */
export async function queryRows(conn, sql) {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjects();
}

/** Closes a connection and its instance (both exist since 1.2). */
export function closeDuckDB({ instance, conn }) {
  try { conn.closeSync?.(); } catch { /* already closed */ }
  try { instance.closeSync?.(); } catch { /* already closed */ }
}

// DuckDB's COPY takes a POSIX write lock on its target, /dev/null included,
// and fails at once ("Could not set lock on file") while another process's
// DuckDB holds it: another benchmark writing to /dev/null at the same time.
// Such a COPY is retried (every 20 ms, up to 30 s) and only the attempt that
// ran is timed; the retries are counted (duckCopyLockRetries) so that a
// benchmark can report them: a concurrent benchmark disturbs its numbers.
let lockRetries = 0;

/** Runs a COPY (or any statement): { reader, wall, cpu } of the attempt that ran. */
export async function duckCopy(conn, sql) {
  for (let waited = 0; ; waited += 20) {
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    try {
      const reader = await conn.runAndReadAll(sql);
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      const c = process.cpuUsage(cpu0);
      return { reader, wall, cpu: (c.user + c.system) / 1e6 };
    } catch (e) {
      if (!/Could not set lock on file/.test(String(e?.message ?? e)) || waited >= 30000) throw e;
      lockRetries++;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/** How many times duckCopy found /dev/null locked and retried. */
export function duckCopyLockRetries() {
  return lockRetries;
}
