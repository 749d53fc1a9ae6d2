#!/usr/bin/env node
// Whether DuckDB reads a CSV to the same rows as the Parquet file that
// `pqtool write` made of it: DuckDB parses the CSV with the column types of
// the Parquet file (so both sides hold typed values), NULL only for an empty
// unquoted field, and neither side may have a row (with its multiplicity)
// that the other lacks.
//   node tests/writer/duck_csv.mjs IN.csv OUT.parquet [IN OUT ...]
// Prints one line per pair: "same N" or what differs; exits 1 when a pair differs.
import { openDuckDB, queryRows, sqlString, closeDuckDB } from '../../tools/js/duckdb.mjs';

const args = process.argv.slice(2);
if (args.length < 2 || args.length % 2) {
  console.error('usage: duck_csv.mjs IN.csv OUT.parquet [IN OUT ...]');
  process.exit(2);
}
const db = await openDuckDB({ threads: 1 });
const count = async (sql) => Number((await queryRows(db.conn, `SELECT count(*) AS n FROM (${sql})`))[0].n);

async function compare(csv, pq) {
  const pqSrc = `read_parquet(${sqlString(pq)}, hive_partitioning = false)`;
  const cols = await queryRows(db.conn, `DESCRIBE SELECT * FROM ${pqSrc}`);
  const struct = cols.map((c) => `${sqlString(c.column_name)}: ${sqlString(c.column_type)}`).join(', ');
  const csvSrc = `read_csv(${sqlString(csv)}, header = true, auto_detect = false, delim = ',', quote = '"', ` +
    `escape = '"', allow_quoted_nulls = false, columns = {${struct}})`;
  const a = await count(`SELECT * FROM ${csvSrc}`);
  const b = await count(`SELECT * FROM ${pqSrc}`);
  const missing = await count(`SELECT * FROM ${csvSrc} EXCEPT ALL SELECT * FROM ${pqSrc}`);
  const extra = await count(`SELECT * FROM ${pqSrc} EXCEPT ALL SELECT * FROM ${csvSrc}`);
  if (a !== b || missing !== 0 || extra !== 0) return [false, `differ: rows ${a} vs ${b}, ${missing} missing, ${extra} extra`];
  return [true, `same ${a}`];
}

let code = 0;
try {
  for (let i = 0; i < args.length; i += 2) {
    let ok, msg;
    try {
      [ok, msg] = await compare(args[i], args[i + 1]);
    } catch (e) {
      [ok, msg] = [false, `error: ${String(e.message).split('\n')[0]}`];
    }
    console.log(`${args[i + 1]}: ${msg}`);
    if (!ok) code = 1;
  }
} finally {
  closeDuckDB(db);
}
process.exit(code);
