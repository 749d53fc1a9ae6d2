#!/usr/bin/env node
// Seeded predicate generator for the differential test: each case is a pqfs
// `--where` expression (SPEC section 4) with its DuckDB SQL translation, and
// optionally a --select list and a --limit.
//
//   node tests/diff/gen_predicates.mjs OUTDIR [--per-table N] [--seed S]
//       prints the cases of OUTDIR/tables.json (written by gen_tables.mjs)
//
// Shapes: every comparison operator (= == != <> < <= > >=, literal on either
// side), BETWEEN / NOT BETWEEN, [NOT] IN (incl. NULL in the list), IS [NOT]
// NULL, [NOT] LIKE (prefix%, %infix%, _, suffix, no wildcard, multi-byte),
// nested AND/OR/NOT (also && || !), NULL literals, literals of every column
// type (string literals for dates, timestamps, booleans, numbers, NaN/inf),
// UTC offsets (also on TIMESTAMP, where both drop them), one-digit date
// and hour fields, arithmetic + - * % (and unary minus)
// with overflow-free values, column-to-column comparisons, partition columns.
//
// Shapes left out (see README.md): a boolean compared with a number (b = 1:
// DuckDB casts, pqfs refuses the types), DECIMAL(30,5) times anything
// (DuckDB's product type passes 38 digits), arithmetic that overflows int64.
//
// Translation notes (pqfs → DuckDB):
//   * && || ! == != are written AND OR NOT = <> (in DuckDB || is concatenation);
//   * pqfs integer arithmetic is int64 (SPEC: overflow is an error); DuckDB's
//     INTEGER arithmetic is int32, so integer columns under arithmetic are
//     CAST to BIGINT in the SQL;
//   * identifiers are always double-quoted in the SQL (DuckDB matches names
//     case-insensitively, pqfs exactly; the generated names differ anyway).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRng, quoteString, quoteIdent, pqIdent } from './lib.mjs';

const NUMERIC = new Set(['int32', 'int64', 'double', 'float', 'decimal']);
const INTS = new Set(['int32', 'int64']);
const TEMPORAL = new Set(['date', 'timestamp', 'timestamptz']);
const CMP_OPS = ['=', '==', '!=', '<>', '<', '<=', '>', '>='];
const SQL_OP = { '==': '=', '!=': '<>' };
const FLIP = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
const FLOAT_SPECIAL = new Set(['nan', 'inf', '-inf', '-0.0', '0.0']);

const pair = (pq, sql) => ({ pq, sql });

/** Class of a column type for comparisons between columns. */
function klass(t) {
  if (NUMERIC.has(t)) return 'num';
  if (TEMPORAL.has(t)) return 'time';
  return t;
}

// ---------------------------------------------------------------- values

/** Decimal text → { u: BigInt unscaled, s: scale }. */
function parseDec(text) {
  const neg = text.startsWith('-');
  const t = neg ? text.slice(1) : text;
  const [ip, fp = ''] = t.split('.');
  const u = BigInt(ip + fp || '0');
  return { u: neg ? -u : u, s: fp.length };
}
function decText(u, s) {
  const neg = u < 0n;
  const digits = (neg ? -u : u).toString().padStart(s + 1, '0');
  return (neg ? '-' : '') + (s ? `${digits.slice(0, digits.length - s)}.${digits.slice(digits.length - s)}` : digits);
}

/** ±delta on a value text of a column type (a value that may not occur). */
function nudge(type, v, rng) {
  if (INTS.has(type)) {
    const x = BigInt(v) + BigInt(rng.pick([-1, 1, 2, -2, 1000]));
    const lim = type === 'int32' ? 2n ** 31n : 2n ** 63n;
    return x >= lim || x < -lim ? v : x.toString();
  }
  if (type === 'decimal') {
    const { u, s } = parseDec(v);
    return decText(u + BigInt(rng.pick([-1, 1, 7])), s);
  }
  if ((type === 'double' || type === 'float') && !FLOAT_SPECIAL.has(v) && Number.isFinite(Number(v))) {
    return String(Number(v) + rng.pick([-0.5, 0.25, 1]));
  }
  if (type === 'string') return v + rng.pick(['a', 'z', 'é', ' ']);
  if (type === 'date') return shiftDate(v, rng.pick([-1, 1]));
  return v;
}

function shiftDate(v, days) {
  const t = Date.parse(`${v}T00:00:00Z`);
  if (!Number.isFinite(t)) return v;
  return new Date(t + days * 86400000).toISOString().slice(0, 10);
}

/** A literal of a column's type, from a value text: {pq, sql}. */
function literal(type, v, rng) {
  switch (type) {
    case 'int32': case 'int64':
      if (rng.chance(0.04)) return pair(quoteString(v), quoteString(v)); // string read as a number
      return pair(v, v);
    case 'decimal': {
      if (rng.chance(0.1)) { // as a float token: compared as DOUBLE in both
        const n = String(Number(v));
        const tok = /e/.test(n) ? n : `${n}e0`;
        return pair(tok, tok);
      }
      return pair(v, v);
    }
    case 'double': case 'float': {
      if (FLOAT_SPECIAL.has(v) || !Number.isFinite(Number(v)) || rng.chance(0.1)) {
        const text = rng.chance(0.5) ? v : ({ nan: 'NaN', inf: 'Infinity', '-inf': '-Infinity' }[v] ?? v);
        return pair(quoteString(text), quoteString(text));
      }
      if (rng.chance(0.15)) { // a float token (DOUBLE), e.g. 1234.5e0
        const tok = v.includes('e') ? v : `${v}e0`;
        return pair(tok, tok);
      }
      return pair(v, v);
    }
    case 'bool':
      if (rng.chance(0.1)) {
        const t = v === 'true' ? rng.pick(['t', 'yes', '1', 'TRUE']) : rng.pick(['f', 'no', '0', 'False']);
        return pair(quoteString(t), quoteString(t));
      }
      return pair(v, v);
    case 'string':
      return pair(quoteString(v), quoteString(v));
    case 'date': {
      let t = rng.chance(0.1) ? `${v} 10:00` : v;
      if (rng.chance(0.1)) t = unpadded(t); // '2024-1-5': DuckDB reads it
      return pair(quoteString(t), quoteString(t));
    }
    case 'timestamp': {
      let t = v;
      const r = rng.next();
      if (r < 0.15) t = v.slice(0, 10); // a date: midnight
      else if (r < 0.3) t = v.slice(0, 16); // minutes
      else if (r < 0.4) t = v.replace(' ', 'T');
      else if (r < 0.5) t = v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''); // fraction's trailing zeros
      else if (r < 0.6) t = withOffset(`${v}+00`, rng.pick([2, -5, 5.5])); // dropped for a TIMESTAMP, as DuckDB does
      else if (r < 0.65) t = unpadded(v);
      return pair(quoteString(t), quoteString(t));
    }
    case 'timestamptz': {
      let t = v;
      const r = rng.next();
      if (r < 0.2) t = v.replace(/\+00$/, ''); // no offset: UTC (DuckDB runs with TimeZone=UTC)
      else if (r < 0.3) t = v.replace(/\+00$/, 'Z');
      else if (r < 0.4) t = v.replace(/\+00$/, '+00:00');
      else if (r < 0.55) t = withOffset(v, rng.pick([2, -5, 5.5]));
      else if (r < 0.65) t = v.slice(0, 16);
      return pair(quoteString(t), quoteString(t));
    }
    default:
      throw new Error(`no literal for ${type}`);
  }
}

/** One-digit month, day and hour written without their leading zero. */
function unpadded(v) {
  return v.replace(/^(-?\d+)-0(\d)-0?(\d)/, '$1-$2-$3').replace(/^(-?\d+)-(\d+)-0(\d)/, '$1-$2-$3')
    .replace(/([ T])0(\d):/, '$1$2:');
}

/** The same instant written with a UTC offset of `hours`. */
function withOffset(v, hours) {
  const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?\+00$/.exec(v);
  if (!m) return v;
  const ms = Date.parse(`${m[1]}T${m[2]}Z`) + hours * 3600000;
  const iso = new Date(ms).toISOString();
  const sign = hours < 0 ? '-' : '+';
  const ah = Math.abs(hours);
  const off = `${sign}${String(Math.floor(ah)).padStart(2, '0')}:${String((ah % 1) * 60).padStart(2, '0')}`;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${m[3] ?? ''}${off}`;
}

// ---------------------------------------------------------------- generator

export class PredicateGen {
  constructor(table, seed) {
    this.t = table;
    this.rng = makeRng(seed);
    this.cols = table.columns;
    this.byName = Object.fromEntries(this.cols.map((c) => [c.name, c]));
  }

  col(c) { return pair(pqIdent(c.name), quoteIdent(c.name)); }

  /** A column under arithmetic: integers as BIGINT in DuckDB (pqfs works in int64). */
  arithCol(c) {
    const r = this.col(c);
    return INTS.has(c.type) ? pair(r.pq, `CAST(${r.sql} AS BIGINT)`) : r;
  }

  /** A value text for column c: a sample, min/max, or a near miss. */
  value(c) {
    const { rng, t } = this;
    const samples = t.samples[c.name] ?? [];
    const r = rng.next();
    if (c.name === 'nulls' || samples.length === 0) {
      return c.type === 'int32' ? String(rng.int(-5, 5)) : null;
    }
    if (r < 0.08 && t.min[c.name] != null) return this.norm(c, t.min[c.name]);
    if (r < 0.16 && t.max[c.name] != null) return this.norm(c, t.max[c.name]);
    const v = rng.pick(samples);
    if (r < 0.3) return nudge(c.type, v, rng);
    return v;
  }

  /** DuckDB's VARCHAR of min/max → our value texts. */
  norm(c, v) {
    if (c.type === 'double' || c.type === 'float') return v.toLowerCase() === 'nan' ? 'nan' : v.toLowerCase();
    if (c.type === 'timestamptz') return v.endsWith('+00') ? v : v;
    return v;
  }

  lit(c) {
    const v = this.value(c);
    if (v === null) return pair('NULL', 'NULL');
    return literal(c.type, v, this.rng);
  }

  pickCol(filter = () => true) {
    const cs = this.cols.filter(filter);
    return cs.length ? this.rng.pick(cs) : null;
  }

  cmpOp() { return this.rng.pick(CMP_OPS); }

  // ---- atoms

  atomCompare() {
    const c = this.pickCol();
    const op = this.cmpOp();
    const l = this.col(c), v = this.lit(c);
    if (this.rng.chance(0.2)) { // literal on the left
      return pair(`${v.pq} ${op} ${l.pq}`, `${v.sql} ${SQL_OP[op] ?? op} ${l.sql}`);
    }
    return pair(`${l.pq} ${op} ${v.pq}`, `${l.sql} ${SQL_OP[op] ?? op} ${v.sql}`);
  }

  atomBetween() {
    const c = this.pickCol((x) => x.type !== 'bool');
    const neg = this.rng.chance(0.3);
    let a = this.value(c), b = this.value(c);
    const la = a === null ? pair('NULL', 'NULL') : literal(c.type, a, this.rng);
    const lb = b === null ? pair('NULL', 'NULL') : literal(c.type, b, this.rng);
    const x = this.col(c);
    const kw = neg ? 'NOT BETWEEN' : 'BETWEEN';
    // Either order: lo > hi gives an empty range (BETWEEN) or everything (NOT BETWEEN).
    return pair(`${x.pq} ${neg && this.rng.chance(0.3) ? 'not between' : kw} ${la.pq} AND ${lb.pq}`,
      `${x.sql} ${kw} ${la.sql} AND ${lb.sql}`);
  }

  atomIn() {
    const c = this.pickCol();
    const neg = this.rng.chance(0.3);
    const n = this.rng.int(1, 6);
    const items = [];
    for (let k = 0; k < n; k++) items.push(this.lit(c));
    if (this.rng.chance(0.15)) items.splice(this.rng.int(0, items.length), 0, pair('NULL', 'NULL'));
    const x = this.col(c);
    const kw = neg ? 'NOT IN' : 'IN';
    return pair(`${x.pq} ${kw} (${items.map((i) => i.pq).join(', ')})`,
      `${x.sql} ${kw} (${items.map((i) => i.sql).join(', ')})`);
  }

  atomIsNull() {
    const c = this.pickCol();
    const x = this.rng.chance(0.15) && NUMERIC.has(c.type) ? this.arith(c) : this.col(c);
    const kw = this.rng.chance(0.5) ? 'IS NULL' : 'IS NOT NULL';
    return pair(`${x.pq} ${this.rng.chance(0.2) ? kw.toLowerCase() : kw}`, `${x.sql} ${kw}`);
  }

  likePattern(c) {
    const { rng } = this;
    const v = this.value(c) ?? 'ab';
    const ch = Array.from(v);
    const r = rng.next();
    let p;
    if (r < 0.25) p = ch.slice(0, rng.int(0, Math.min(3, ch.length))).join('') + '%';
    else if (r < 0.45) {
      const i = rng.int(0, ch.length), j = rng.int(i, Math.min(ch.length, i + 2));
      p = `%${ch.slice(i, j).join('')}%`;
    } else if (r < 0.6) p = ch.map((x) => (rng.chance(0.4) ? '_' : x)).join('');
    else if (r < 0.7) p = `%${ch.slice(-2).join('')}`;
    else if (r < 0.77) p = rng.pick(['%', '_', '__', '', '%_%', '_%_', 'a%b%', '%é%', '日%', '_本%', 'a_b', 'a%', '%b']);
    else if (r < 0.85) p = v; // no wildcard: plain equality
    else p = `${ch.slice(0, 1).join('')}%${ch.slice(-1).join('')}`;
    return p;
  }

  atomLike() {
    const c = this.pickCol((x) => x.type === 'string');
    const neg = this.rng.chance(0.3);
    const p = this.rng.chance(0.03) ? null : this.likePattern(c);
    const x = this.col(c);
    const lit = p === null ? 'NULL' : quoteString(p);
    const kw = neg ? 'NOT LIKE' : 'LIKE';
    return pair(`${x.pq} ${this.rng.chance(0.2) ? kw.toLowerCase() : kw} ${lit}`, `${x.sql} ${kw} ${lit}`);
  }

  /** An arithmetic expression over numeric column c (and maybe another). */
  arith(c) {
    const { rng } = this;
    const x = this.arithCol(c);
    const r = rng.next();
    if (c.type === 'decimal') {
      // + - with integers or decimals; * by a small integer (not on DECIMAL(30,5):
      // DuckDB's product type would pass 38 digits).
      if (r < 0.4) { const k = rng.pick(['1', '2.5', '100', '-3', '0.01']); return pair(`${x.pq} + ${k}`, `(${x.sql} + ${k})`); }
      if (r < 0.7) { const k = rng.pick(['1', '7.25', '-2']); return pair(`${x.pq} - ${k}`, `(${x.sql} - ${k})`); }
      if (r < 0.85 && c.precision <= 18) { const k = rng.pick(['2', '3', '-1', '10']); return pair(`${x.pq} * ${k}`, `(${x.sql} * ${k})`); }
      return pair(`-${x.pq}`, `(-${x.sql})`);
    }
    if (c.type === 'double' || c.type === 'float') {
      if (r < 0.3) { const k = rng.pick(['1.5', '2', '-0.25', '1e3']); return pair(`${x.pq} + ${k}`, `(${x.sql} + ${k})`); }
      if (r < 0.5) { const k = rng.pick(['2', '-1', '0.5', '0']); return pair(`${x.pq} * ${k}`, `(${x.sql} * ${k})`); }
      if (r < 0.65) { const k = rng.pick(['3', '2.5', '-7']); return pair(`${x.pq} % ${k}`, `(${x.sql} % ${k})`); }
      if (r < 0.85) {
        const d = this.pickCol((y) => NUMERIC.has(y.type) && y !== c);
        const y = this.arithCol(d);
        const op = rng.pick(['+', '-']);
        return pair(`${x.pq} ${op} ${y.pq}`, `(${x.sql} ${op} ${y.sql})`);
      }
      return pair(`-${x.pq}`, `(-${x.sql})`);
    }
    // integers (int64 arithmetic in pqfs): values stay far from overflow
    if (r < 0.2) { const k = String(rng.int(-1000, 1000)); return pair(`${x.pq} + ${k}`, `(${x.sql} + ${k})`); }
    if (r < 0.35) { const k = String(rng.int(-1000, 1000)); return pair(`${k} - ${x.pq}`, `(${k} - ${x.sql})`); }
    if (r < 0.5) { const k = String(rng.int(-1000, 1000)); return pair(`${x.pq} * ${k}`, `(${x.sql} * ${k})`); }
    if (r < 0.7) { const k = String(rng.pick([2, 3, 7, 10, 97, -3, -10, 1, 0])); return pair(`${x.pq} % ${k}`, `(${x.sql} % ${k})`); }
    if (r < 0.8) { const k = rng.int(2, 9); const j = rng.int(-50, 50); return pair(`${x.pq} * ${k} + ${j}`, `((${x.sql} * ${k}) + ${j})`); }
    if (r < 0.92) {
      const d = this.pickCol((y) => INTS.has(y.type) && y !== c && y.name !== 'id');
      if (d) {
        const y = this.arithCol(d);
        const op = rng.pick(['+', '-']);
        return pair(`${x.pq} ${op} ${y.pq}`, `(${x.sql} ${op} ${y.sql})`);
      }
    }
    return pair(`-${x.pq}`, `(-${x.sql})`);
  }

  atomArith() {
    const { rng } = this;
    const c = this.pickCol((x) => NUMERIC.has(x.type));
    const e = this.arith(c);
    const op = this.cmpOp();
    let lit;
    if (/%/.test(e.pq) && INTS.has(c.type)) lit = String(rng.int(-5, 5));
    else {
      const v = this.value(c);
      if (v === null) lit = '0';
      else if (INTS.has(c.type) || c.type === 'decimal') lit = v;
      else lit = FLOAT_SPECIAL.has(v) || !Number.isFinite(Number(v)) ? quoteString(v) : v;
    }
    const pe = rng.chance(0.5) ? `(${e.pq})` : e.pq;
    return pair(`${pe} ${op} ${lit}`, `${e.sql} ${SQL_OP[op] ?? op} ${lit}`);
  }

  atomColCol() {
    const { rng } = this;
    for (let tries = 0; tries < 10; tries++) {
      const c = this.pickCol();
      const d = this.pickCol((x) => x !== c && klass(x.type) === klass(c.type));
      if (!d) continue;
      const op = this.cmpOp();
      const a = this.col(c), b = this.col(d);
      return pair(`${a.pq} ${op} ${b.pq}`, `${a.sql} ${SQL_OP[op] ?? op} ${b.sql}`);
    }
    return this.atomCompare();
  }

  atomNullLit() {
    const { rng } = this;
    const c = this.pickCol();
    const x = this.col(c);
    switch (rng.int(0, 6)) {
      case 0: { const op = this.cmpOp(); return pair(`${x.pq} ${op} NULL`, `${x.sql} ${SQL_OP[op] ?? op} NULL`); }
      case 1: { const op = this.cmpOp(); return pair(`NULL ${op} ${x.pq}`, `NULL ${SQL_OP[op] ?? op} ${x.sql}`); }
      case 2: return pair(`${x.pq} IN (NULL)`, `${x.sql} IN (NULL)`);
      case 3: return pair(`${x.pq} NOT IN (NULL)`, `${x.sql} NOT IN (NULL)`);
      case 4: return pair('NULL IS NULL', 'NULL IS NULL');
      case 5: { const v = this.lit(c); return pair(`${x.pq} BETWEEN NULL AND ${v.pq}`, `${x.sql} BETWEEN NULL AND ${v.sql}`); }
      default: return pair(rng.pick(['NULL', 'true', 'false', '1 = 1', '1 <> 1', 'NULL IS NOT NULL']),
        null);
    }
  }

  atomBool() {
    const c = this.pickCol((x) => x.type === 'bool');
    const x = this.col(c);
    const { rng } = this;
    switch (rng.int(0, 4)) {
      case 0: return x;
      case 1: return pair(`NOT ${x.pq}`, `NOT ${x.sql}`);
      case 2: { const op = this.cmpOp(); const v = rng.pick(['true', 'false']); return pair(`${x.pq} ${op} ${v}`, `${x.sql} ${SQL_OP[op] ?? op} ${v}`); }
      case 3: { // a boolean compared with a comparison
        const i = this.pickCol((y) => INTS.has(y.type));
        const iy = this.col(i);
        return pair(`${x.pq} = (${iy.pq} > 0)`, `${x.sql} = (${iy.sql} > 0)`);
      }
      default: return pair(`${x.pq} IS NOT NULL AND NOT ${x.pq}`, `${x.sql} IS NOT NULL AND NOT ${x.sql}`);
    }
  }

  /** Hive tables: predicates on the partition columns. */
  atomPartition() {
    const c = this.pickCol((x) => x.partition);
    if (!c) return this.atomCompare();
    const { rng } = this;
    const r = rng.next();
    if (r < 0.2 && c.type === 'string') return this.likeOn(c);
    if (r < 0.5) {
      const op = this.cmpOp();
      const v = this.lit(c), x = this.col(c);
      return pair(`${x.pq} ${op} ${v.pq}`, `${x.sql} ${SQL_OP[op] ?? op} ${v.sql}`);
    }
    if (r < 0.65) {
      const x = this.col(c);
      const kw = rng.chance(0.5) ? 'IS NULL' : 'IS NOT NULL';
      return pair(`${x.pq} ${kw}`, `${x.sql} ${kw}`);
    }
    if (r < 0.8) {
      const items = [this.lit(c), this.lit(c)];
      if (rng.chance(0.3)) items.push(pair('NULL', 'NULL'));
      const x = this.col(c);
      const kw = rng.chance(0.3) ? 'NOT IN' : 'IN';
      return pair(`${x.pq} ${kw} (${items.map((i) => i.pq).join(', ')})`, `${x.sql} ${kw} (${items.map((i) => i.sql).join(', ')})`);
    }
    if (r < 0.9 && c.type === 'int64') {
      const e = this.arith(c);
      const lit = String(rng.int(-20, 300));
      return pair(`${e.pq} > ${lit}`, `${e.sql} > ${lit}`);
    }
    // partition column against a data column of its class
    const d = this.pickCol((y) => !y.partition && klass(y.type) === klass(c.type));
    const op = this.cmpOp();
    const a = this.col(c), b = this.col(d);
    return pair(`${a.pq} ${op} ${b.pq}`, `${a.sql} ${SQL_OP[op] ?? op} ${b.sql}`);
  }

  likeOn(c) {
    const p = this.likePattern(c);
    const x = this.col(c);
    const kw = this.rng.chance(0.3) ? 'NOT LIKE' : 'LIKE';
    return pair(`${x.pq} ${kw} ${quoteString(p)}`, `${x.sql} ${kw} ${quoteString(p)}`);
  }

  atom() {
    const { rng } = this;
    const hive = this.t.kind === 'hive';
    const r = rng.next();
    let a;
    if (hive && r < 0.25) a = this.atomPartition();
    else if (r < 0.36) a = this.atomCompare();
    else if (r < 0.46) a = this.atomBetween();
    else if (r < 0.56) a = this.atomIn();
    else if (r < 0.63) a = this.atomIsNull();
    else if (r < 0.73) a = this.atomLike();
    else if (r < 0.83) a = this.atomArith();
    else if (r < 0.9) a = this.atomColCol();
    else if (r < 0.95) a = this.atomBool();
    else a = this.atomNullLit();
    if (a.sql === null) a = pair(a.pq, a.pq); // constants read the same in both
    return a;
  }

  expr(depth) {
    const { rng } = this;
    if (depth <= 0 || rng.chance(0.35)) return this.atom();
    const r = rng.next();
    if (r < 0.15) {
      const x = this.expr(depth - 1);
      const not = rng.pick(['NOT ', 'not ', '!']);
      return pair(`${not}(${x.pq})`, `NOT (${x.sql})`);
    }
    const n = rng.int(2, 3);
    const parts = [];
    for (let k = 0; k < n; k++) parts.push(this.expr(depth - 1));
    const isAnd = r < 0.6;
    const word = isAnd ? rng.pick(['AND', 'and', '&&']) : rng.pick(['OR', 'or', '||']);
    return pair(parts.map((p) => `(${p.pq})`).join(` ${word} `),
      parts.map((p) => `(${p.sql})`).join(isAnd ? ' AND ' : ' OR '));
  }

  /** Unparenthesized chains: AND binds tighter than OR, NOT looser than comparisons. */
  exprPrecedence() {
    const a = this.atomCompare(), b = this.atomCompare(), c = this.atomIsNull();
    const r = this.rng.next();
    if (r < 0.4) return pair(`${a.pq} AND ${b.pq} OR ${c.pq}`, `${a.sql} AND ${b.sql} OR ${c.sql}`);
    if (r < 0.8) return pair(`${a.pq} OR ${b.pq} AND ${c.pq}`, `${a.sql} OR ${b.sql} AND ${c.sql}`);
    return pair(`NOT ${a.pq} AND ${b.pq}`, `NOT ${a.sql} AND ${b.sql}`);
  }

  /** One test case. */
  next() {
    const { rng } = this;
    const where = rng.chance(0.08) ? this.exprPrecedence() : this.expr(rng.int(0, 3));
    const cas = { where: where.pq, sql: where.sql };
    if (rng.chance(0.3)) {
      const names = this.cols.map((c) => c.name);
      cas.select = rng.sample(names, rng.int(1, 5));
    }
    if (rng.chance(0.15)) cas.limit = rng.pick([0, 1, 7, 100, 2500]);
    return cas;
  }
}

/** The cases of a table: count of them, seeded by the table's name. */
export function generateCases(table, count, seed = 1) {
  let h = seed >>> 0;
  for (const ch of table.name) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const g = new PredicateGen(table, h);
  const out = [];
  for (let k = 0; k < count; k++) out.push(g.next());
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let dir, per = 150, seed = 1;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--per-table') per = Number(args[++i]);
    else if (args[i] === '--seed') seed = Number(args[++i]);
    else dir = args[i];
  }
  if (!dir) {
    console.error('usage: node tests/diff/gen_predicates.mjs OUTDIR [--per-table N] [--seed S]');
    process.exit(2);
  }
  const desc = JSON.parse(fs.readFileSync(path.join(dir, 'tables.json'), 'utf8'));
  for (const t of desc.tables) {
    for (const c of generateCases(t, per, seed)) {
      console.log(`${t.name}\t${c.where}\t${c.select ? c.select.join(',') : '*'}\t${c.limit ?? ''}`);
      console.log(`\tSQL: ${c.sql}`);
    }
  }
}
