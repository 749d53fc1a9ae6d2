#!/usr/bin/env node
// Whether DuckDB reads the same rows from two Parquet files (a file and its
// rewrite by `pqtool rewrite`): the row counts agree, and neither file has a
// row (with its multiplicity) that the other lacks.
//   node tests/writer/duck_same.mjs ORIGINAL.parquet REWRITTEN.parquet [ORIGINAL REWRITTEN ...]
// Prints one line per pair: "same N", or what differs; exits 1 when a pair
// differs.  When DuckDB cannot read an original, its rewrite must read in
// full, or be refused with the same message (the schema is the original's).
import { openDuckDB, queryRows, sqlString, closeDuckDB } from '../../tools/js/duckdb.mjs';

const args = process.argv.slice(2);
if (args.length < 2 || args.length % 2) {
  console.error('usage: duck_same.mjs ORIGINAL.parquet REWRITTEN.parquet [ORIGINAL REWRITTEN ...]');
  process.exit(2);
}
const db = await openDuckDB({ threads: 1 });
// No columns from the path (a source inside dt=.../ would gain one).
const src = (f) => `read_parquet(${sqlString(f)}, hive_partitioning = false)`;
const count = async (sql) => (await queryRows(db.conn, `SELECT count(*) AS n FROM (${sql})`))[0].n;
const firstLine = (e) => String(e.message).split('\n')[0];

/* The column chunks' path_in_schema of the first row group, or null when
 * the file has none. */
async function pathsOf(f) {
  const rows = await queryRows(db.conn,
    `SELECT path_in_schema AS p FROM parquet_metadata(${sqlString(f)}) WHERE row_group_id = 0 ORDER BY column_id`);
  return rows.length ? rows.map((r) => r.p).join(' | ') : null;
}

/* One pair: [ok, message]. */
async function compare(orig, mine) {
  try {
    // Every column read (a bare count(*) may read none).
    await count(`SELECT * FROM ${src(orig)} EXCEPT ALL SELECT * FROM ${src(orig)}`);
  } catch (e) {
    const why = firstLine(e);
    try {
      await count(`SELECT * FROM ${src(mine)} EXCEPT ALL SELECT * FROM ${src(mine)}`);
      return [true, `original unreadable by DuckDB (${why}); the rewrite reads`];
    } catch (e2) {
      // The same schema refused for the same reason is agreement too.
      const why2 = firstLine(e2);
      if (why.replaceAll(orig, 'FILE') === why2.replaceAll(mine, 'FILE')) return [true, `DuckDB refuses both alike: ${why}`];
      return [false, `the rewrite is unreadable by DuckDB: ${why2}`];
    }
  }
  try {
    const a = await count(`SELECT * FROM ${src(orig)}`);
    const b = await count(`SELECT * FROM ${src(mine)}`);
    const missing = await count(`SELECT * FROM ${src(orig)} EXCEPT ALL SELECT * FROM ${src(mine)}`);
    const extra = await count(`SELECT * FROM ${src(mine)} EXCEPT ALL SELECT * FROM ${src(orig)}`);
    if (String(a) !== String(b) || Number(missing) !== 0 || Number(extra) !== 0)
      return [false, `differ: rows ${a} vs ${b}, ${missing} missing, ${extra} extra`];
    // Each column chunk's path_in_schema names every level, a LIST's and a
    // MAP's repeated group too (hyparquet finds chunks by it).
    const [pa, pb] = [await pathsOf(orig), await pathsOf(mine)];
    if (pa !== null && pb !== null && pa !== pb) return [false, `path_in_schema differs: ${pa} vs ${pb}`];
    return [true, `same ${a}`];
  } catch (e) {
    return [false, `error: ${firstLine(e)}`];
  }
}

let code = 0;
try {
  for (let i = 0; i < args.length; i += 2) {
    const [ok, msg] = await compare(args[i], args[i + 1]);
    console.log(args.length > 2 ? `${args[i + 1]}: ${msg}` : msg);
    if (!ok) code = 1;
  }
} finally {
  closeDuckDB(db);
}
process.exit(code);
