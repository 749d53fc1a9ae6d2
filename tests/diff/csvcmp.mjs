// A port of shared/tools/csvcmp.py (same rules, in process: the differential
// test compares thousands of results and a Python start per comparison would
// dominate its run time). run_diff.mjs re-checks every mismatch with
// csvcmp.py itself, so a divergence of this port cannot hide a failure.
//
//   compareCsv(expectedText, actualText, { unordered, maxDiffs }) → [diff lines]

const TS = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const NUM = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const SPECIAL = {
  nan: 'nan', '-nan': 'nan', inf: 'inf', '+inf': 'inf', infinity: 'inf', '+infinity': 'inf',
  '-inf': '-inf', '-infinity': '-inf',
};

/** RFC 4180 rows; a field is null when empty and unquoted. (csvcmp.py's
 * parser, reading runs of plain characters at once.) */
export function parseCsv(data) {
  const rows = [];
  let row = [];
  let i = 0;
  const n = data.length;
  while (i < n) {
    let field;
    if (data.charCodeAt(i) === 34) { // '"': quoted, then maybe more plain text
      const parts = [];
      i++;
      for (;;) {
        const j = data.indexOf('"', i);
        if (j < 0) throw new Error('unterminated quoted field');
        parts.push(data.slice(i, j));
        if (j + 1 < n && data.charCodeAt(j + 1) === 34) {
          parts.push('"');
          i = j + 2;
          continue;
        }
        i = j + 1;
        break;
      }
      const k = plainEnd(data, i);
      if (k > i) parts.push(data.slice(i, k));
      i = k;
      field = parts.join('');
    } else {
      const k = plainEnd(data, i);
      field = k > i ? data.slice(i, k) : null;
      i = k;
    }
    row.push(field);
    if (i >= n) break;
    const ch = data.charCodeAt(i);
    if (ch === 44) { // ','
      i++;
      if (i >= n) row.push(null);
      continue;
    }
    if (ch === 13 && i + 1 < n && data.charCodeAt(i + 1) === 10) i++;
    rows.push(row);
    row = [];
    i++;
  }
  if (row.length) rows.push(row);
  return rows;
}

/** The end of a run of characters other than , \n \r. */
function plainEnd(data, i) {
  const n = data.length;
  while (i < n) {
    const c = data.charCodeAt(i);
    if (c === 44 || c === 10 || c === 13) break;
    i++;
  }
  return i;
}

function normTs(m) {
  let [, date, time, frac, tz] = m;
  frac = (frac || '').replace(/0+$/, '');
  if (['Z', '+00', '+00:00', '+0000', '-00', '-00:00'].includes(tz)) tz = '+00';
  else if (tz && tz.length > 3) {
    if (tz[3] !== ':') tz = `${tz.slice(0, 3)}:${tz.slice(-2)}`;
    if (tz.endsWith(':00')) tz = tz.slice(0, 3);
  }
  return `${date} ${time}${frac ? `.${frac}` : ''}${tz || ''}`;
}

function isClose(a, b) {
  return Math.abs(a - b) <= Math.max(1e-6 * Math.max(Math.abs(a), Math.abs(b)), 1e-30);
}

function numEq(a, b) {
  const sa = SPECIAL[a.toLowerCase()], sb = SPECIAL[b.toLowerCase()];
  if (sa || sb) return sa === sb;
  if (!(a + b).includes('.') && !(a + b).toLowerCase().includes('e')) return BigInt(a) === BigInt(b);
  const fa = Number(a), fb = Number(b);
  if (fa === fb) return true;
  return isClose(fa, fb);
}

const isNum = (s) => NUM.test(s) || s.toLowerCase() in SPECIAL;

function jsonEq(x, y) {
  if (typeof x === 'boolean' || typeof y === 'boolean') return x === y;
  if (typeof x === 'number' && typeof y === 'number') return numEq(String(x), String(y));
  if (typeof x === 'string' && typeof y === 'string') return textEq(x, y);
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, k) => jsonEq(v, y[k]));
  if (x && y && typeof x === 'object' && typeof y === 'object' && !Array.isArray(x) && !Array.isArray(y)) {
    const kx = Object.keys(x), ky = Object.keys(y);
    return kx.length === ky.length && kx.every((k) => k in y && jsonEq(x[k], y[k]));
  }
  return x === y;
}

function textEq(a, b) {
  if (a === b) return true;
  if (isNum(a) && isNum(b)) return numEq(a, b);
  const ma = TS.exec(a), mb = TS.exec(b);
  if (ma && mb) return normTs(ma) === normTs(mb);
  if ('[{'.includes(a.slice(0, 1) || 'x') && '[{'.includes(b.slice(0, 1) || 'x')) {
    try {
      return jsonEq(JSON.parse(a), JSON.parse(b));
    } catch {
      return false;
    }
  }
  return false;
}

function cellEq(a, b) {
  if (a === null || b === null) return a === null && b === null;
  return textEq(a, b);
}

const show = (v) => (v === null ? 'None' : JSON.stringify(v));

/** The differences between two CSV texts (empty when they agree). */
export function compareCsv(expected, actual, { unordered = false, maxDiffs = 10 } = {}) {
  const diffs = [];
  let exp, act;
  try {
    exp = parseCsv(expected);
    act = parseCsv(actual);
  } catch (e) {
    return [`csv: ${e.message}`];
  }
  if (!exp.length || !act.length) return ['one of the files is empty'];
  if (exp[0].length !== act[0].length || exp[0].some((h, k) => h !== act[0][k])) {
    return [`header differs: expected ${JSON.stringify(exp[0])} got ${JSON.stringify(act[0])}`];
  }
  let eRows = exp.slice(1), aRows = act.slice(1);
  if (unordered) {
    const key = (r) => JSON.stringify(r.map((c) => (c === null ? '' : `\u0000${c}`)));
    const sort = (rows) => rows.map((r) => [key(r), r]).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map((x) => x[1]);
    eRows = sort(eRows);
    aRows = sort(aRows);
  }
  if (eRows.length !== aRows.length) diffs.push(`row count differs: expected ${eRows.length} got ${aRows.length}`);
  const n = Math.min(eRows.length, aRows.length);
  for (let r = 0; r < n; r++) {
    const er = eRows[r], ar = aRows[r];
    if (er.length !== ar.length) diffs.push(`line ${r + 2}: expected ${er.length} fields got ${ar.length}`);
    else {
      for (let c = 0; c < er.length; c++) {
        if (!cellEq(er[c], ar[c])) diffs.push(`line ${r + 2} column ${JSON.stringify(exp[0][c])}: expected ${show(er[c])} got ${show(ar[c])}`);
      }
    }
    if (diffs.length >= maxDiffs) break;
  }
  return diffs.slice(0, maxDiffs);
}
