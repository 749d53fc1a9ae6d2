#!/usr/bin/env node
// DuckDB's side of the mount tests: one process answers a batch of queries.
//
//   node tests/mount/duck.mjs expect LAKE CASES OUTDIR
//       CASES: one case a line, fields separated by \x1f:
//         NAME  TABLE  WHERE  SELECT  LIMIT  HIVE_TYPES
//       (empty WHERE/SELECT/LIMIT: none; HIVE_TYPES e.g. code:VARCHAR).
//       Writes OUTDIR/NAME.csv, the canonical CSV (SPEC section 5) of
//         SELECT SELECT FROM read_parquet('LAKE/TABLE/**/part-*.parquet',
//           hive_partitioning = true) WHERE WHERE LIMIT LIMIT
//       with lists, structs and maps as JSON (to_json), and OUTDIR/NAME.err
//       instead when DuckDB rejects the query.  Data files are named
//       part-*.parquet; the lake's decoys (_ignored.parquet, zero.parquet, ...)
//       are not, so they stay out of the reference answer as SPEC section 2
//       wants them out of pqfs's.  One thread and insertion order kept: rows
//       come in the glob's order, the full path's bytewise order, which is
//       pqfs's table order for this lake (no directory name is a prefix of a
//       sibling's).
//   node tests/mount/duck.mjs sql STATEMENT...
//       Runs the statements; prints the first cell of the last one's answer.
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, queryRows, sqlString, closeDuckDB } from '../../tools/js/duckdb.mjs';

const [mode, ...rest] = process.argv.slice(2);
const db = await openDuckDB({ threads: 1, preserve_insertion_order: 'true' });
const { conn } = db;
const ident = (s) => `"${s.replaceAll('"', '""')}"`;
try {
  await conn.run(`SET TimeZone = 'UTC'`);
  if (mode === 'sql') {
    let rows = [];
    for (const stmt of rest) rows = await queryRows(conn, stmt);
    if (rows.length) console.log(String(Object.values(rows[0])[0]));
  } else if (mode === 'expect') {
    const [lake, casesFile, outDir] = rest;
    fs.mkdirSync(outDir, { recursive: true });
    const lines = fs.readFileSync(casesFile, 'utf8').split('\n').filter((l) => l.length);
    for (const line of lines) {
      const [name, table, where, select, limit, hiveTypes] = line.split('\x1f');
      const types = (hiveTypes || '').split(',').filter(Boolean).map((t) => {
        const [k, v] = t.split(':');
        return `${sqlString(k)}: ${sqlString(v)}`;
      });
      const src = `read_parquet(${sqlString(path.join(lake, table, '**', 'part-*.parquet'))}, hive_partitioning = true${
        types.length ? `, hive_types = {${types.join(', ')}}` : ''})`;
      // DuckDB appends the partition columns sorted by name; pqfs (and Hive) in
      // the layout's order, read here from the first file's path.
      let star = '*';
      if (!select) {
        const [first] = await queryRows(conn, `SELECT file FROM glob(${sqlString(path.join(lake, table, '**', 'part-*.parquet'))}) ORDER BY file LIMIT 1`);
        const keys = first ? path.relative(path.join(lake, table), first.file).split(path.sep).slice(0, -1)
          .filter((c) => c.includes('=')).map((c) => decodeURIComponent(c.slice(0, c.indexOf('=')))) : [];
        if (keys.length) star = `* EXCLUDE (${keys.map(ident).join(', ')}), ${keys.map(ident).join(', ')}`;
      }
      let sql = `SELECT ${select || star} FROM ${src}${where ? ` WHERE ${where}` : ''}${limit !== '' && limit !== undefined ? ` LIMIT ${limit}` : ''}`;
      try {
        const cols = await queryRows(conn, `DESCRIBE ${sql}`);
        const outer = cols.map((c) => /\[\]$|^STRUCT|^MAP|^UNION/.test(c.column_type)
          ? `to_json(${ident(c.column_name)}) AS ${ident(c.column_name)}` : ident(c.column_name));
        sql = `SELECT ${outer.join(', ')} FROM (${sql})`;
        await conn.run(`COPY (${sql}) TO ${sqlString(path.join(outDir, `${name}.csv`))} (FORMAT csv, HEADER, NULLSTR '')`);
      } catch (e) {
        fs.writeFileSync(path.join(outDir, `${name}.err`), `${String(e.message || e).split('\n')[0]}\n${sql}\n`);
      }
    }
  } else {
    console.error('usage: duck.mjs expect LAKE CASES OUTDIR | duck.mjs sql STATEMENT...');
    process.exitCode = 2;
  }
} finally {
  closeDuckDB(db);
}
