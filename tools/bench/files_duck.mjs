// DuckDB's side of bench_files.sh: one query in a fresh process, its time
// (the query alone, seconds) on stdout.
//   node tools/bench/files_duck.mjs GLOB [WHERE]
import { openDuckDB, sqlString } from '../js/duckdb.mjs';

const [glob, where] = process.argv.slice(2);
const { conn } = await openDuckDB({ threads: 2 });
const t0 = performance.now();
await conn.run(`COPY (SELECT * FROM read_parquet(${sqlString(glob)}, hive_partitioning = true)${where ? ` WHERE ${where}` : ''}) ` +
  `TO '/dev/null' (FORMAT csv, USE_TMP_FILE false)`);
console.log(((performance.now() - t0) / 1000).toFixed(3));
