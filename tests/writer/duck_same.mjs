#!/usr/bin/env node
// Whether DuckDB reads the same rows from two Parquet files (a file and its
// rewrite by `pqtool rewrite`): the row counts agree, and neither file has a
// row (with its multiplicity) that the other lacks.
//   node tests/writer/duck_same.mjs ORIGINAL.parquet REWRITTEN.parquet
// Prints "same N" and exits 0, or prints what differs and exits 1.  When
// DuckDB cannot read the original, the rewrite must read in full, or be
// refused with the same message (the schema is the original's).
import { openDuckDB, queryRows, sqlString, closeDuckDB } from '../../tools/js/duckdb.mjs';

const [orig, mine] = process.argv.slice(2);
if (!orig || !mine) {
  console.error('usage: duck_same.mjs ORIGINAL.parquet REWRITTEN.parquet');
  process.exit(2);
}
const db = await openDuckDB({ threads: 1 });
// No columns from the path (a source inside dt=.../ would gain one).
const src = (f) => `read_parquet(${sqlString(f)}, hive_partitioning = false)`;
let code = 0;
try {
  try {
    // Every column read (a bare count(*) may read none).
    await queryRows(db.conn, `SELECT count(*) FROM (SELECT * FROM ${src(orig)} EXCEPT ALL SELECT * FROM ${src(orig)})`);
  } catch (e) {
    // Nothing to compare with; the rewrite must still be readable in full.
    const why = String(e.message).split('\n')[0];
    try {
      const rows = await queryRows(db.conn,
        `SELECT count(*) AS n FROM (SELECT * FROM ${src(mine)} EXCEPT ALL SELECT * FROM ${src(mine)})`);
      console.log(`original unreadable by DuckDB (${why}); the rewrite reads (${rows[0].n})`);
      process.exit(0);
    } catch (e2) {
      // The same schema refused for the same reason is agreement too.
      const why2 = String(e2.message).split('\n')[0];
      const bare = (m, f) => m.replaceAll(f, 'FILE');
      if (bare(why, orig) === bare(why2, mine)) {
        console.log(`DuckDB refuses both alike: ${why}`);
        process.exit(0);
      }
      console.log(`the rewrite is unreadable by DuckDB: ${why2}`);
      process.exit(1);
    }
  }
  const count = async (sql) => (await queryRows(db.conn, `SELECT count(*) AS n FROM (${sql})`))[0].n;
  const a = await count(`SELECT * FROM ${src(orig)}`);
  const b = await count(`SELECT * FROM ${src(mine)}`);
  const missing = await count(`SELECT * FROM ${src(orig)} EXCEPT ALL SELECT * FROM ${src(mine)}`);
  const extra = await count(`SELECT * FROM ${src(mine)} EXCEPT ALL SELECT * FROM ${src(orig)}`);
  if (String(a) !== String(b) || Number(missing) !== 0 || Number(extra) !== 0) {
    console.log(`differ: rows ${a} vs ${b}, ${missing} missing, ${extra} extra`);
    code = 1;
  } else {
    console.log(`same ${a}`);
  }
} catch (e) {
  console.log(`error: ${String(e.message).split('\n')[0]}`);
  code = 1;
} finally {
  closeDuckDB(db);
}
process.exit(code);
