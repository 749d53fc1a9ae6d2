// Schema evolution (CTest evolve.duckdb): tables whose files' schemas differ,
// written by DuckDB, read by pqtool as DuckDB reads them with
// read_parquet(..., union_by_name = true, hive_partitioning = true):
//   - added: a column added later (NULL in the older files: in the output,
//     in --where, in pruning), a column dropped later, another order;
//   - widen: int32 beside int64, uint32 beside int32 (int64), int8 beside
//     int16, float beside double, timestamp ms beside us;
//   - intdouble: int32, int64, uint32, uint64 beside double (DOUBLE; 2^53 + 1
//     rounds as DuckDB's cast does), every pruning rung (statistics, page
//     index, dictionary, bloom filter) on converted values, Parquet output;
//   - intfloat: integers beside a FLOAT are DOUBLE (DuckDB's union is FLOAT);
//   - hive: partition directories whose files' schemas differ;
//   - files: several files named on the command line;
//   - conflict: a string beside an integer fails what reads the column
//     (exit 1, the column, the file and both types named), not the rest;
//   - --format parquet: the union's types (widened) and NULLs, read back by
//     DuckDB to the same rows; a row group whose file's type is not the
//     output's is re-encoded, never copied.
//
//   node tests/evolve/evolve.mjs PQTOOL WORKDIR CSVCMP
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openDuckDB, sqlString, queryRows, closeDuckDB } from '../../tools/js/duckdb.mjs';

const [PQTOOL, WORK, CSVCMP] = process.argv.slice(2);
if (!PQTOOL || !WORK || !CSVCMP) {
  console.error('usage: evolve.mjs PQTOOL WORKDIR CSVCMP');
  process.exit(2);
}
fs.rmSync(WORK, { recursive: true, force: true });
fs.mkdirSync(WORK, { recursive: true });
const db = await openDuckDB({ threads: 1 });
let passes = 0, fails = 0, nth = 0;
const check = (ok, what, detail = '') => {
  if (ok) passes++;
  else { fails++; console.log(`FAIL: ${what}${detail ? `\n  ${detail}` : ''}`); }
  return ok;
};

function pqtool(args) {
  const r = spawnSync(PQTOOL, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { code: r.status, out: r.stdout, err: r.stderr, cmd: `pqtool ${args.map((a) => `'${a}'`).join(' ')}` };
}

// COPY (sql) TO WORK/rel (one row group per `rows` rows).
async function write(rel, sql, rows = 1000) {
  const p = path.join(WORK, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  await db.conn.run(`COPY (${sql}) TO ${sqlString(p)} (FORMAT parquet, ROW_GROUP_SIZE ${rows})`);
  return p;
}

// Row groups of a Parquet file (pqtool meta).
const rowGroups = (file) => Number((pqtool(['meta', file]).out.match(/^row_groups: (\d+)/m) || [0, -1])[1]);

const source = (dir) => `read_parquet(${sqlString(`${dir}/**/*.parquet`)}, union_by_name = true, hive_partitioning = true)`;
const quoteCols = (cols) => cols.split(',').map((c) => `"${c}"`).join(', ');

// DuckDB's rows of `from` as canonical CSV.
async function duckCsv(from, where, select) {
  const out = path.join(WORK, `duck-${nth++}.csv`);
  const sql = `SELECT ${select ? quoteCols(select) : '*'} FROM ${from}${where ? ` WHERE ${where}` : ''}`;
  await db.conn.run(`COPY (${sql}) TO ${sqlString(out)} (FORMAT csv, HEADER, NULLSTR '')`);
  return { out, sql };
}

// pqtool cat ARGS against DuckDB's rows (unordered, by csvcmp.py).
async function agree(what, args, from, where, select) {
  const full = [...args, ...(where ? ['--where', where] : []), ...(select ? ['--select', select] : [])];
  const r = pqtool(['cat', ...full]);
  if (!check(r.code === 0, `${what}: pqtool cat exited ${r.code}`, `${r.cmd}: ${r.err.trim()}`)) return null;
  const d = await duckCsv(from, where, select);
  const got = path.join(WORK, `pq-${nth++}.csv`);
  fs.writeFileSync(got, r.out);
  const c = spawnSync('python3', [CSVCMP, d.out, got, '--unordered'], { encoding: 'utf8' });
  check(c.status === 0, `${what}: rows differ from DuckDB's`, `${r.cmd}  vs  ${d.sql}\n  ${c.stdout.split('\n').slice(0, 6).join('\n  ')}`);
  return r;
}

// pqtool cat ARGS fails naming every one of `words`.
function refused(what, args, words) {
  const r = pqtool(['cat', ...args]);
  const missing = words.filter((w) => !r.err.includes(w));
  // (rows of the files before the failing one may have been written)
  check(r.code === 1 && missing.length === 0,
    `${what}: exit ${r.code}, stderr '${r.err.trim()}' (wanted exit 1 naming ${words.join(', ')})`, r.cmd);
}

// --format parquet of ARGS: DuckDB reads it back to DuckDB's rows of `from`;
// returns pqtool's --stats text and the output's meta.
async function parquetOut(what, args, from, where, select) {
  const out = path.join(WORK, `out-${nth++}.parquet`);
  const full = ['cat', ...args, '--format', 'parquet', '-o', out, '--stats',
    ...(where ? ['--where', where] : []), ...(select ? ['--select', select] : [])];
  const r = pqtool(full);
  if (!check(r.code === 0, `${what}: --format parquet exited ${r.code}`, `${r.cmd}: ${r.err.trim()}`)) return { meta: '', copied: -1 };
  let a;
  try {
    a = await duckCsv(`read_parquet(${sqlString(out)})`, null, null);
  } catch (e) {
    check(false, `${what}: DuckDB cannot read the Parquet output: ${String(e.message || e).split('\n')[0]}`, r.cmd);
    return { meta: '', copied: -1 };
  }
  const b = await duckCsv(from, where, select);
  const c = spawnSync('python3', [CSVCMP, b.out, a.out, '--unordered'], { encoding: 'utf8' });
  check(c.status === 0, `${what}: DuckDB reads the Parquet output to other rows`, `${r.cmd}\n  ${c.stdout.split('\n').slice(0, 6).join('\n  ')}`);
  const meta = pqtool(['meta', out]).out;
  const copied = Number((r.err.match(/parquet: (\d+) row groups copied/) || [0, 0])[1]);
  return { stats: r.err, meta, copied, out };
}

// ---------------------------------------------------------------- added: a column added later
{
  const T = path.join(WORK, 'added');
  await write('added/part-0.parquet', `SELECT i AS id, 'a' || i AS label, i * 10 AS old FROM range(0, 3000) t(i)`);
  await write('added/part-1.parquet', `SELECT i AS id, 'b' || i AS label, i * 10 AS old, (i % 7)::INTEGER AS newcol FROM range(3000, 5000) t(i)`);
  // Another order, and `old` dropped.
  await write('added/part-2.parquet', `SELECT (i % 11)::INTEGER AS newcol, i AS id, 'c' || i AS label FROM range(5000, 6500) t(i)`);
  const from = source(T);
  await agree('added: every row', [T], from);
  await agree('added: newcol IS NULL (the older file)', [T], from, 'newcol IS NULL');
  await agree('added: newcol > 5 (no row of the older file)', [T], from, 'newcol > 5');
  await agree('added: newcol IS NOT NULL OR id < 3', [T], from, 'newcol IS NOT NULL OR id < 3');
  await agree('added: old IS NULL (dropped in the newest)', [T], from, 'old IS NULL', 'id,old,newcol');
  await agree('added: --select of the new column', [T], from, null, 'newcol,id');
  await agree('added: newcol = 3 AND id >= 2990', [T], from, 'newcol = 3 AND id >= 2990', 'id,newcol,label');
  // The header: every column, in the order of first appearance.
  const h = pqtool(['cat', T, '--limit', '0']).out.trim();
  check(h === 'id,label,old,newcol', `added: header '${h}' (wanted id,label,old,newcol, DuckDB's order)`);
  // The file without the column (all NULL there) is pruned for newcol > 5
  // before any row group of it is planned or read.
  const p = pqtool(['cat', T, '--where', 'newcol > 5', '--stats']);
  const rg = Number((p.err.match(/scan: (\d+) row groups read/) || [0, -1])[1]);
  const newer = rowGroups(path.join(T, 'part-1.parquet')) + rowGroups(path.join(T, 'part-2.parquet'));
  check(p.code === 0 && /files: 3 total, 1 pruned/.test(p.err) && rg === newer,
    `added: newcol > 5 prunes part-0.parquet and reads the ${newer} row groups of the others (read ${rg})`, p.err);
  const pl = pqtool(['plan', T, '--where', 'newcol > 5']);
  check(pl.code === 0 && pl.out.includes(`file ${path.join(T, 'part-0.parquet')}: pruned: it lacks a column the filter needs`),
    'added: plan says why the file without the column is pruned', pl.out.split('\n').slice(0, 3).join(' | ') + pl.err);
  const { copied, meta } = await parquetOut('added: --format parquet', [T], from);
  // Fully matched row groups are copied: a missing column is a NULL constant
  // beside them (the types are one in every file).
  const all = newer + rowGroups(path.join(T, 'part-0.parquet'));
  check(copied === all, `added: --format parquet copies all ${all} row groups (copied ${copied})`);
  check(/newcol: INT32/.test(meta) && /old: INT64/.test(meta), 'added: --format parquet writes the union schema', meta.split('\n').slice(5, 12).join(' | '));
  await parquetOut('added: --format parquet --where newcol IS NULL', [T], from, 'newcol IS NULL', 'id,newcol');
}

// ---------------------------------------------------------------- widen: widening casts
{
  const T = path.join(WORK, 'widen');
  await write('widen/a.parquet', `SELECT i::INTEGER AS id, (CASE WHEN i = 0 THEN 2147483647 WHEN i = 1 THEN -2147483648 ELSE i END)::INTEGER AS n,
    (CASE WHEN i = 0 THEN 4294967295 ELSE i END)::UINTEGER AS u, (i % 100)::TINYINT AS t, (CASE WHEN i = 0 THEN 0.1 ELSE i / 4 END)::FLOAT AS f,
    TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) SECOND + INTERVAL 123 MILLISECOND AS ts FROM range(0, 2000) t(i)`);
  await write('widen/b.parquet', `SELECT i::INTEGER AS id, (i * 1000000000)::BIGINT AS n, (-i)::INTEGER AS u, (i % 30000)::SMALLINT AS t,
    (i / 3)::DOUBLE AS f, ('2024-02-01 00:00:00'::TIMESTAMP_MS + INTERVAL (i) SECOND)::TIMESTAMP_MS AS ts FROM range(2000, 3500) t(i)`);
  const from = source(T);
  const described = await queryRows(db.conn, `DESCRIBE SELECT * FROM ${from}`);
  const types = described.map((c) => `${c.column_name}:${c.column_type}`).join(',');
  check(types === 'id:INTEGER,n:BIGINT,u:BIGINT,t:SMALLINT,f:DOUBLE,ts:TIMESTAMP', `widen: DuckDB's union types are ${types}`);
  await agree('widen: every row', [T], from);
  await agree('widen: n > 2147483646 (int32 read as int64)', [T], from, 'n > 2147483646');
  await agree('widen: n < -2147483647 OR n > 1000000000000', [T], from, 'n < -2147483647 OR n > 1000000000000');
  await agree('widen: u = 4294967295 (uint32 read as int64)', [T], from, 'u = 4294967295');
  await agree('widen: u < 0', [T], from, 'u < -3490', 'id,u');
  await agree('widen: t between', [T], from, 't BETWEEN 98 AND 120', 'id,t');
  await agree('widen: f > 400.2', [T], from, 'f > 400.2', 'id,f');
  await agree("widen: ts ms beside us", [T], from, "ts < '2024-01-01 00:00:03' OR ts >= '2024-02-01 00:24:58'", 'id,ts');
  // The float's value as a double, exactly (0.1f is 0.10000000149011612).
  const r = pqtool(['cat', T, '--where', 'id = 0', '--select', 'f']);
  check(r.out === 'f\n0.10000000149011612\n', `widen: a float read as the table's double renders as one: '${r.out}'`);
  const r2 = pqtool(['cat', T, '--where', 'f = 0.10000000149011612', '--select', 'id']);
  check(r2.out === 'id\n0\n', `widen: f = 0.10000000149011612 finds the float 0.1: '${r2.out}'`);
  const { copied, meta } = await parquetOut('widen: --format parquet', [T], from);
  check(/n: INT64/.test(meta) && /u: INT64/.test(meta) && /f: DOUBLE/.test(meta) && /t: INT16/.test(meta) &&
        /ts: TIMESTAMP\(MICROS/.test(meta), 'widen: --format parquet writes the widened types', meta.split('\n').slice(5, 12).join(' | '));
  // a.parquet's row groups hold narrower types: re-encoded; b.parquet's
  // would be copied but for its ts (ms) and u (int32): none is copied.
  check(copied === 0, `widen: no row group of another type is copied (copied ${copied})`);
  // With only the columns that b.parquet holds in the table's types, its
  // row groups are copied and a.parquet's are not.
  const o = await parquetOut('widen: --format parquet --select id,n,f', [T], from, null, 'id,n,f');
  const nb = rowGroups(path.join(T, 'b.parquet'));
  check(o.copied === nb && rowGroups(path.join(T, 'a.parquet')) > 0,
    `widen: --select id,n,f copies b.parquet's ${nb} row groups only (copied ${o.copied})`);
  await parquetOut('widen: --format parquet with a filter', [T], from, 'n > 2147483646 OR u = 4294967295', 'id,n,u');
}

// ---------------------------------------------------------------- intdouble: integers beside doubles
// The SPEC's int to double: int32, int64, uint32 and uint64 files beside a
// double file read as DOUBLE (DuckDB's union type too), each value the
// nearest double (2^53 + 1 is 2^53, 2^63 - 1 is 2^63, as DuckDB casts).
// The predicate's literals are DOUBLEs, the files' statistics, page
// indexes, dictionaries and bloom filters the files' integers: every rung
// must convert before it prunes (a dictionary of INT 2 does hold the
// DOUBLE 2.0), and prune where the converted bounds allow.  DuckDB writes
// dictionaries and bloom filters (no page index); pqtool rewrite, sorted,
// with small pages, adds page indexes.  The oracle is DuckDB's union
// materialized as a table, then filtered: DuckDB 1.5.6 pushes a filter on
// a union_by_name column into a file of integers cast to the file's type
// (x = 2.5 finds the int32 2, x = 9.007199254740992e15 misses the int64
// 2^53 + 1, which reads as that double), where its rows read whole are right.

// Every row's `col` as pqtool renders it, against DuckDB's (doubles exactly:
// csvcmp.py allows a relative 1e-6, which 2^53 + 1 against 2^53 passes).
function exactly(what, got, want, col) {
  const bad = [];
  const have = new Map(got.map((r) => [String(r.id), r[col]]));
  for (const w of want) {
    const id = String(w.id), v = w[col] === null ? null : Number(w[col]);
    if (!have.has(id) || have.get(id) !== v) bad.push(`id ${id}: ${have.has(id) ? have.get(id) : 'missing'} (wanted ${v})`);
  }
  check(bad.length === 0 && got.length === want.length,
    `${what}: ${col} exactly as DuckDB's (${got.length} rows, wanted ${want.length})`, bad.slice(0, 5).join('; '));
}
// pqtool cat's id,col rows, the cells parsed as numbers.
function pqRows(args, col) {
  const r = pqtool(['cat', ...args, '--select', `id,${col}`]);
  return r.out.trim().split('\n').slice(1).filter((l) => l).map((l) => {
    const [id, v] = l.split(',');
    return { id, [col]: v === '' ? null : Number(v) };
  });
}
// The decision for each row group of `file` in pqtool plan's text.
function planOf(args, file) {
  const r = pqtool(['plan', ...args]);
  const lines = r.out.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`file ${file}:`));
  const out = [];
  for (let i = at + 1; at >= 0 && i < lines.length && lines[i].startsWith('  row group'); i++) out.push(lines[i].trim());
  return { out, text: r.out + r.err };
}
{
  const T = path.join(WORK, 'intdouble');
  const nul = (i) => `i % 10 = 0 THEN NULL`;
  // Even steps: odd values inside each file's bounds are absent.
  await write('intdouble/a_i32.parquet', `SELECT i::INTEGER AS id, (CASE WHEN ${nul('i')} WHEN i = 1 THEN 2147483647
    WHEN i = 2 THEN -2147483648 ELSE (i % 50) * 2 - 50 END)::INTEGER AS x FROM range(0, 3000) t(i)`);
  await write('intdouble/b_i64.parquet', `SELECT i::INTEGER AS id, (CASE WHEN ${nul('i')} WHEN i = 3001 THEN 9007199254740993
    WHEN i = 3002 THEN -9007199254740993 WHEN i = 3003 THEN 9223372036854775807 WHEN i = 3004 THEN -9223372036854775808
    WHEN i = 3005 THEN 9007199254740995 ELSE (i % 50) * 2 + 1000 END)::BIGINT AS x FROM range(3000, 6000) t(i)`);
  await write('intdouble/c_u32.parquet', `SELECT i::INTEGER AS id, (CASE WHEN ${nul('i')} WHEN i = 6001 THEN 4294967295
    ELSE (i % 50) * 2 + 2000 END)::UINTEGER AS x FROM range(6000, 9000) t(i)`);
  await write('intdouble/d_u64.parquet', `SELECT i::INTEGER AS id, (CASE WHEN ${nul('i')} WHEN i = 9001 THEN 18446744073709551615
    WHEN i = 9002 THEN 9007199254740993 WHEN i = 9003 THEN 9223372036854775808 ELSE (i % 50) * 2 + 3000 END)::UBIGINT AS x
    FROM range(9000, 12000) t(i)`);
  await write('intdouble/e_dbl.parquet', `SELECT i::INTEGER AS id, (CASE WHEN ${nul('i')} WHEN i = 12001 THEN 9007199254740992.0
    ELSE (i % 50) * 0.5 - 5 END)::DOUBLE AS x FROM range(12000, 15000) t(i)`);
  const files = ['a_i32', 'b_i64', 'c_u32', 'd_u64', 'e_dbl'];
  // The same rows sorted by x, with page indexes and small pages (and
  // dictionaries and bloom filters) by pqtool's writer.
  const P = path.join(WORK, 'intdouble_pi');
  fs.mkdirSync(P, { recursive: true });
  for (const f of files) {
    const w = pqtool(['rewrite', path.join(T, `${f}.parquet`), '-o', path.join(P, `${f}.parquet`), '--sort-by', 'x',
      '--page-size', '256', '--bloom-filter', 'x', '--row-group-rows', '1500']);
    check(w.code === 0, `intdouble: pqtool rewrite ${f}`, w.err);
  }
  for (const [dir, what] of [[T, 'DuckDB'], [P, 'pqtool rewrite']]) {
    for (const f of files) {
      const m = pqtool(['meta', path.join(dir, `${f}.parquet`)]).out;
      const x = m.split('\n').filter((l) => /^\s+x: /.test(l) && /encodings=/.test(l));
      check(x.length > 0 && x.every((l) => /DICTIONARY/.test(l) && /bloom_filter=/.test(l) && (dir === T || /column_index=/.test(l))),
        `intdouble: ${what}'s ${f}.parquet has x with a dictionary and a bloom filter${dir === T ? '' : ' and a page index'}`,
        x.join(' | '));
    }
  }
  const described = await queryRows(db.conn, `DESCRIBE SELECT * FROM ${source(T)}`);
  const types = described.map((c) => `${c.column_name}:${c.column_type}`).join(',');
  check(types === 'id:INTEGER,x:DOUBLE', `intdouble: DuckDB's union types are ${types}`);
  await db.conn.run(`CREATE TABLE intdouble AS SELECT * FROM ${source(T)}`);
  const from = 'intdouble';
  const h = pqtool(['cat', T, '--limit', '0', '--select', 'x', '--format', 'parquet', '-o', path.join(WORK, 'intdouble-h.parquet')]);
  check(h.code === 0 && /x: DOUBLE/.test(pqtool(['meta', path.join(WORK, 'intdouble-h.parquet')]).out), 'intdouble: the table\'s x is DOUBLE', h.err);
  const wheres = [
    null,
    'x = 2', 'x = 3', 'x = 2.5', 'x = 1002', 'x = 1001', 'x = 2002', 'x = 3002', 'x = -50',
    'x = 2147483647', 'x = -2147483648', 'x = 4294967295',
    'x = 9.007199254740992e15', 'x = -9.007199254740992e15', 'x = 9007199254740996',
    'x = 9.223372036854775807e18', 'x = -9.223372036854775808e18', 'x = 1.8446744073709552e19',
    'x IN (3, 1002, 2002, 3002, 2.5)', 'x IN (1001, 1003, 2001)', 'x IN (2, 9.007199254740992e15)',
    'x > 9.0e15', 'x < -1.0e15', 'x BETWEEN 1000 AND 1010', 'x >= 4294967295', 'x BETWEEN 2001 AND 2003',
    'x < -40', 'x IS NULL', 'x IS NOT NULL AND x < 0', 'x <> 2', 'NOT (x < 3000)', 'x = 2 OR x = 1002',
  ];
  for (const [dir, tag] of [[T, 'intdouble'], [P, 'intdouble (page index)']]) {
    for (const w of wheres) await agree(`${tag}: ${w || 'every row'}`, [dir], from, w);
    // One rung at a time: each alone must keep every matching row group.
    for (const only of [['--no-bloom', '--no-page-index'], ['--no-dictionary', '--no-page-index'], ['--no-dictionary', '--no-bloom']])
      for (const w of ['x = 2', 'x = 9.007199254740992e15', 'x = 9.223372036854775807e18', 'x IN (2, 1002, 2002, 3002)', 'x BETWEEN 1000 AND 1010'])
        await agree(`${tag} ${only.join(' ')}: ${w}`, [dir, '--no-stats', ...only], from, w);
    exactly(`${tag}: every row`, pqRows([dir], 'x'), await queryRows(db.conn, `SELECT id, x FROM ${from}`), 'x');
  }
  // The rungs prune with converted bounds and values (not only keep).
  const a = path.join(T, 'a_i32.parquet'), b = path.join(T, 'b_i64.parquet');
  // (The first row group of each file holds its extremes: statistics and
  // page indexes prove nothing there.)
  let p = planOf([T, '--where', 'x BETWEEN 2000 AND 2100'], a);
  check(p.out.length > 1 && p.out.slice(1).every((l) => /skip \(statistics\)/.test(l)),
    'intdouble: statistics prune the int32 file for x BETWEEN 2000 AND 2100', p.out.join(' | '));
  p = planOf([T, '--where', 'x = 1001', '--no-bloom'], b);
  check(p.out.length > 0 && p.out.every((l) => /skip/.test(l)) && /skip \(dictionary\)/.test(p.out[0]),
    'intdouble: the dictionary prunes the int64 file for x = 1001', p.out.join(' | '));
  p = planOf([T, '--where', 'x = 1001'], b);
  check(p.out.length > 0 && p.out.every((l) => /skip/.test(l)) && /skip \(bloom filter\)/.test(p.out[0]),
    'intdouble: the bloom filter prunes the int64 file for x = 1001', p.out.join(' | '));
  // 2^53 is also 2^53 + 1 rounded: the filter, which hashes integers, cannot
  // rule out a row group it lacks 2^53 in.
  p = planOf([T, '--where', 'x = 9.007199254740992e15', '--no-dictionary'], b);
  check(p.out.length > 0 && !/skip/.test(p.out[0]), 'intdouble: the bloom filter keeps x = 2^53 (2^53 + 1 in the file)', p.out.join(' | '));
  const bp = path.join(P, 'b_i64.parquet');
  p = planOf([P, '--where', 'x BETWEEN 1000 AND 1010', '--no-stats'], bp);
  check(p.out.length > 0 && p.out.some((l) => /select \d+ rows/.test(l) && /pages [1-9]\d* pruned/.test(l)),
    'intdouble (page index): pages of the int64 file pruned for x BETWEEN 1000 AND 1010', p.out.join(' | '));
  // Parquet output: DOUBLE, read back by DuckDB to the same values; the
  // double file's row groups are copied, the integers' re-encoded.
  const o = await parquetOut('intdouble: --format parquet', [T], from);
  check(/x: DOUBLE/.test(o.meta), 'intdouble: --format parquet writes x as DOUBLE', o.meta.split('\n').slice(5, 9).join(' | '));
  check(o.copied === rowGroups(path.join(T, 'e_dbl.parquet')),
    `intdouble: --format parquet copies only the double file's row groups (copied ${o.copied})`);
  if (o.out) exactly('intdouble: --format parquet', await queryRows(db.conn, `SELECT id, x FROM read_parquet(${sqlString(o.out)})`),
    await queryRows(db.conn, `SELECT id, x FROM ${from}`), 'x');
  const w = 'x > 9.0e15 OR x = 2 OR x = 4294967295';
  const o2 = await parquetOut(`intdouble: --format parquet --where ${w}`, [T], from, w);
  if (o2.out) exactly('intdouble: --format parquet with a filter', await queryRows(db.conn, `SELECT id, x FROM read_parquet(${sqlString(o2.out)})`),
    await queryRows(db.conn, `SELECT id, x FROM ${from} WHERE ${w}`), 'x');
  await parquetOut('intdouble (page index): --format parquet', [P], from, 'x BETWEEN 1000 AND 1010 OR x < -40');
}

// ---------------------------------------------------------------- intfloat: integers beside a FLOAT
// Here DOUBLE (the SPEC: int to double, float to double); DuckDB's union is
// FLOAT, which would round 16777217 to 16777216: the oracle casts each
// file's x to DOUBLE itself.
{
  const T = path.join(WORK, 'intfloat');
  const fa = await write('intfloat/a.parquet', `SELECT i::INTEGER AS id, (CASE WHEN i % 9 = 0 THEN NULL WHEN i = 1 THEN 16777217
    WHEN i = 2 THEN -16777217 ELSE i % 20 - 10 END)::INTEGER AS x FROM range(0, 3000) t(i)`);
  const fb = await write('intfloat/b.parquet', `SELECT i::INTEGER AS id, (CASE WHEN i % 9 = 0 THEN NULL WHEN i = 3001 THEN 9007199254740993
    ELSE i % 20 + 100 END)::BIGINT AS x FROM range(3000, 6000) t(i)`);
  const fc = await write('intfloat/c.parquet', `SELECT i::INTEGER AS id, (CASE WHEN i % 9 = 0 THEN NULL WHEN i = 6001 THEN 0.1
    ELSE (i % 20) * 0.25 END)::FLOAT AS x FROM range(6000, 9000) t(i)`);
  const described = await queryRows(db.conn, `DESCRIBE SELECT * FROM ${source(T)}`);
  const types = described.map((c) => `${c.column_name}:${c.column_type}`).join(',');
  check(types === 'id:INTEGER,x:FLOAT', `intfloat: DuckDB's union types are ${types} (FLOAT; pqtool's DOUBLE)`);
  await db.conn.run(`CREATE TABLE intfloat AS ${[fa, fb, fc].map((f) => `SELECT id, x::DOUBLE AS x FROM read_parquet(${sqlString(f)})`).join(' UNION ALL ')}`);
  const from = 'intfloat';
  for (const w of [null, 'x = 16777217', 'x = -16777217', 'x > 16777216', 'x = 0.10000000149011612', 'x = 0.1', 'x = 2.5',
    'x = 3', 'x = 103', 'x IN (3, 101, 0.25, 1.5)', 'x = 9.007199254740992e15', 'x BETWEEN -10 AND 1', 'x IS NULL'])
    await agree(`intfloat: ${w || 'every row'}`, [T], from, w);
  exactly('intfloat: every row', pqRows([T], 'x'), await queryRows(db.conn, `SELECT id, x FROM ${from}`), 'x');
  const o = await parquetOut('intfloat: --format parquet', [T], from);
  check(/x: DOUBLE/.test(o.meta), 'intfloat: --format parquet writes x as DOUBLE', o.meta.split('\n').slice(5, 9).join(' | '));
  check(o.copied === 0, `intfloat: no row group is copied (each file's x is another type; copied ${o.copied})`);
  if (o.out) exactly('intfloat: --format parquet', await queryRows(db.conn, `SELECT id, x FROM read_parquet(${sqlString(o.out)})`),
    await queryRows(db.conn, `SELECT id, x FROM ${from}`), 'x');
}

// ---------------------------------------------------------------- hive: partitions with different schemas
{
  const T = path.join(WORK, 'hive');
  await write('hive/k=1/a.parquet', `SELECT i::INTEGER AS x, 'y' || i AS y FROM range(0, 100) t(i)`);
  await write('hive/k=2/b.parquet', `SELECT i::BIGINT AS x, i * 0.5 AS z FROM range(100, 200) t(i)`);
  await write('hive/k=3/c.parquet', `SELECT i::INTEGER AS w FROM range(0, 50) t(i)`);
  await write('hive/k=3/d.parquet', `SELECT i::INTEGER AS w, 'd' AS y, i::SMALLINT AS x FROM range(50, 60) t(i)`);
  const from = source(T);
  await agree('hive: every row', [T], from);
  await agree('hive: k = 2 AND z > 60', [T], from, 'k = 2 AND z > 60');
  await agree('hive: z IS NULL AND x > 50', [T], from, 'z IS NULL AND x > 50', 'x,k,y');
  await agree('hive: w IS NOT NULL', [T], from, 'w IS NOT NULL');
  // A partition directory is its files' table: the union of their schemas
  // (the other partitions are not listed).
  await agree('hive: a partition directory', [path.join(T, 'k=3')], source(path.join(T, 'k=3')));
  const h = pqtool(['cat', T, '--limit', '0']).out.trim();
  check(h === 'x,y,z,w,k', `hive: header '${h}' (wanted x,y,z,w,k)`);
  await parquetOut('hive: --format parquet', [T], from);
}

// ---------------------------------------------------------------- files: several on the command line
{
  const a = await write('files/a.parquet', `SELECT 1::INTEGER AS x, 'p' AS s`);
  const b = await write('files/b.parquet', `SELECT 2::BIGINT AS x, 3.5::FLOAT AS g`);
  const from = `read_parquet([${sqlString(a)}, ${sqlString(b)}], union_by_name = true)`;
  await agree('files: two files named', [a, b], from);
  await agree('files: g IS NULL', [a, b], from, 'g IS NULL');
}

// ---------------------------------------------------------------- conflict: incompatible types
{
  const T = path.join(WORK, 'conflict');
  await write('conflict/a.parquet', `SELECT i::INTEGER AS x, i AS q FROM range(0, 10) t(i)`);
  await write('conflict/b.parquet', `SELECT 'str' || i AS x, i AS q, {'f': i} AS st FROM range(10, 20) t(i)`);
  await write('conflict/c.parquet', `SELECT i AS q, i::INTEGER AS st FROM range(20, 25) t(i)`);
  const bFile = path.join(T, 'b.parquet'), cFile = path.join(T, 'c.parquet');
  refused('conflict: every column (x read)', [T], ["column 'x'", bFile, 'STRING', 'INT32']);
  refused('conflict: --where on x', [T, '--where', 'x = 1', '--select', 'q'], ["column 'x'", bFile]);
  refused('conflict: a struct beside an integer', [T, '--select', 'q,st'], ["column 'st'", cFile, 'INT32', 'STRUCT<f: INT64>']);
  const from = `read_parquet(${sqlString(`${T}/*.parquet`)}, union_by_name = true)`;
  await agree('conflict: a view without x reads', [T], from, 'q > 3', 'q');
  await parquetOut('conflict: --format parquet without x', [T], from, null, 'q');
}

closeDuckDB(db);
console.log(`evolve: ${passes} passed, ${fails} failed`);
process.exit(fails ? 1 : 0);
