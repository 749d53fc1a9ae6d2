// Helpers for the pruning tests, independent of the engine under test:
//   - a generic Thrift compact-protocol codec (structs as field lists, so a
//     footer can be decoded, patched and re-encoded without a schema);
//   - XXH64 (seed 0) and the split-block bloom filter of the Parquet spec
//     (BloomFilter.md), to add bloom filters to files whose writer cannot;
//   - addBloomFilters(file, specs): appends bloom filters before the footer
//     and points the chunks' ColumnMetaData (fields 14/15) at them.
import { Buffer } from 'node:buffer';

// ------------------------------------------------------------------ thrift compact

export const T = { STOP: 0, TRUE: 1, FALSE: 2, BYTE: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8,
  LIST: 9, SET: 10, MAP: 11, STRUCT: 12 };

class Reader {
  constructor(buf, pos = 0) { this.buf = buf; this.pos = pos; }
  byte() {
    if (this.pos >= this.buf.length) throw new Error('thrift: truncated');
    return this.buf[this.pos++];
  }
  varint() {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = this.byte();
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  }
  zigzag() { const v = this.varint(); return (v >> 1n) ^ -(v & 1n); }
  value(type) {
    switch (type) {
      case T.TRUE: return true;
      case T.FALSE: return false;
      case T.BYTE: return BigInt.asIntN(8, BigInt(this.byte()));
      case T.I16: case T.I32: case T.I64: return this.zigzag();
      case T.DOUBLE: { const v = this.buf.readDoubleLE(this.pos); this.pos += 8; return v; }
      case T.BINARY: {
        const n = Number(this.varint());
        const v = this.buf.subarray(this.pos, this.pos + n);
        this.pos += n;
        return Buffer.from(v);
      }
      case T.LIST: case T.SET: {
        const h = this.byte();
        let n = h >> 4;
        const et = h & 0x0f;
        if (n === 15) n = Number(this.varint());
        const items = [];
        for (let i = 0; i < n; i++) items.push(this.elem(et));
        return { et, items };
      }
      case T.MAP: {
        const n = Number(this.varint());
        if (n === 0) return { kt: 0, vt: 0, entries: [] };
        const kv = this.byte();
        const kt = kv >> 4, vt = kv & 0x0f, entries = [];
        for (let i = 0; i < n; i++) entries.push([this.elem(kt), this.elem(vt)]);
        return { kt, vt, entries };
      }
      case T.STRUCT: return this.struct();
      default: throw new Error(`thrift: unknown type ${type}`);
    }
  }
  struct() {
    const fields = [];
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return { fields };
      const type = h & 0x0f;
      const delta = h >> 4;
      const id = delta ? last + delta : Number(this.zigzag());
      last = id;
      fields.push({ id, type, value: this.value(type) });
    }
  }
  // List elements: booleans are one byte each (1 true, 2 false).
  elem(et) {
    if (et === T.TRUE || et === T.FALSE) return this.byte() === 1;
    return this.value(et);
  }
}

class Writer {
  constructor() { this.parts = []; }
  bytes(arr) { this.parts.push(Buffer.from(arr)); }
  varint(v) {
    v = BigInt.asUintN(64, BigInt(v));
    const out = [];
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v) b |= 0x80;
      out.push(b);
    } while (v);
    this.bytes(out);
  }
  zigzag(v) { v = BigInt(v); this.varint((v << 1n) ^ (v >> 63n)); }
  elem(et, v) {
    if (et === T.TRUE || et === T.FALSE) this.bytes([v ? 1 : 2]);
    else this.value(et, v);
  }
  value(type, v) {
    switch (type) {
      case T.TRUE: case T.FALSE: return; // in the field header
      case T.BYTE: this.bytes([Number(BigInt.asUintN(8, BigInt(v)))]); return;
      case T.I16: case T.I32: case T.I64: this.zigzag(v); return;
      case T.DOUBLE: { const b = Buffer.alloc(8); b.writeDoubleLE(v); this.parts.push(b); return; }
      case T.BINARY: this.varint(v.length); this.parts.push(Buffer.from(v)); return;
      case T.LIST: case T.SET: {
        const n = v.items.length;
        if (n < 15) this.bytes([(n << 4) | v.et]);
        else { this.bytes([0xf0 | v.et]); this.varint(n); }
        for (const it of v.items) this.elem(v.et, it);
        return;
      }
      case T.MAP: {
        this.varint(v.entries.length);
        if (!v.entries.length) return;
        this.bytes([(v.kt << 4) | v.vt]);
        for (const [k, x] of v.entries) { this.elem(v.kt, k); this.elem(v.vt, x); }
        return;
      }
      case T.STRUCT: this.struct(v); return;
      default: throw new Error(`thrift: unknown type ${type}`);
    }
  }
  struct(s) {
    let last = 0;
    const fields = [...s.fields].sort((a, b) => a.id - b.id);
    for (const f of fields) {
      let type = f.type;
      if (type === T.TRUE || type === T.FALSE) type = f.value ? T.TRUE : T.FALSE;
      const delta = f.id - last;
      if (delta > 0 && delta <= 15) this.bytes([(delta << 4) | type]);
      else { this.bytes([type]); this.zigzag(f.id); }
      last = f.id;
      this.value(type, f.value);
    }
    this.bytes([0]);
  }
  buffer() { return Buffer.concat(this.parts); }
}

export function decodeStruct(buf, pos = 0) {
  const r = new Reader(buf, pos);
  const s = r.struct();
  return { struct: s, end: r.pos };
}
export function encodeStruct(s) {
  const w = new Writer();
  w.struct(s);
  return w.buffer();
}
export function field(s, id) { return s.fields.find((f) => f.id === id); }
export function setField(s, id, type, value) {
  const f = field(s, id);
  if (f) { f.type = type; f.value = value; } else s.fields.push({ id, type, value });
}

// ------------------------------------------------------------------ XXH64

const M64 = (1n << 64n) - 1n;
const P1 = 11400714785074694791n, P2 = 14029467366897019727n, P3 = 1609587929392839161n;
const P4 = 9650029242287828579n, P5 = 2870177450012600261n;
const rotl = (x, r) => ((x << r) | (x >> (64n - r))) & M64;
const round = (acc, v) => (rotl((acc + v * P2) & M64, 31n) * P1) & M64;
const merge = (acc, v) => ((((acc ^ round(0n, v)) * P1) & M64) + P4) & M64;

/** XXH64 of bytes with seed 0, as a BigInt. */
export function xxh64(bytes, seed = 0n) {
  const b = Buffer.from(bytes);
  const n = b.length;
  let p = 0, h;
  if (n >= 32) {
    let v1 = (seed + P1 + P2) & M64, v2 = (seed + P2) & M64, v3 = seed, v4 = (seed - P1) & M64;
    while (p + 32 <= n) {
      v1 = round(v1, b.readBigUInt64LE(p)); v2 = round(v2, b.readBigUInt64LE(p + 8));
      v3 = round(v3, b.readBigUInt64LE(p + 16)); v4 = round(v4, b.readBigUInt64LE(p + 24));
      p += 32;
    }
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    h = merge(h, v1); h = merge(h, v2); h = merge(h, v3); h = merge(h, v4);
  } else {
    h = (seed + P5) & M64;
  }
  h = (h + BigInt(n)) & M64;
  while (p + 8 <= n) {
    h ^= round(0n, b.readBigUInt64LE(p));
    h = ((rotl(h, 27n) * P1) & M64) + P4 & M64;
    p += 8;
  }
  if (p + 4 <= n) {
    h ^= (BigInt(b.readUInt32LE(p)) * P1) & M64;
    h = ((rotl(h, 23n) * P2) & M64) + P3 & M64;
    p += 4;
  }
  while (p < n) {
    h ^= (BigInt(b[p]) * P5) & M64;
    h = (rotl(h, 11n) * P1) & M64;
    p++;
  }
  h ^= h >> 33n; h = (h * P2) & M64;
  h ^= h >> 29n; h = (h * P3) & M64;
  h ^= h >> 32n;
  return h;
}

// ------------------------------------------------------------------ split-block bloom filter

const SALT = [0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31];

/** Bytes of a filter for ndv distinct values at false-positive rate fpp
 * (arrow-rs's sizing: power of two, 32 bytes .. 128 MiB). */
export function bloomBytes(ndv, fpp = 0.01) {
  const bits = (-8 * ndv) / Math.log(1 - Math.pow(fpp, 1 / 8));
  let n = Math.ceil(bits / 8);
  let p = 32;
  while (p < n && p < 128 * 1024 * 1024) p *= 2;
  return p;
}

export function bloomInsert(bitset, hash) {
  const nBlocks = BigInt(bitset.length / 32);
  const block = Number(((hash >> 32n) * nBlocks) >> 32n);
  const key = Number(hash & 0xffffffffn);
  for (let i = 0; i < 8; i++) {
    const bit = Math.imul(key, SALT[i]) >>> 27;
    const off = block * 32 + 4 * i;
    bitset.writeUInt32LE((bitset.readUInt32LE(off) | (1 << bit)) >>> 0, off);
  }
}

export function bloomCheck(bitset, hash) {
  const nBlocks = BigInt(bitset.length / 32);
  const block = Number(((hash >> 32n) * nBlocks) >> 32n);
  const key = Number(hash & 0xffffffffn);
  for (let i = 0; i < 8; i++) {
    const bit = Math.imul(key, SALT[i]) >>> 27;
    if (!((bitset.readUInt32LE(block * 32 + 4 * i) >>> bit) & 1)) return false;
  }
  return true;
}

/** The BloomFilterHeader (split block, xxhash, uncompressed) followed by the bitset. */
export function bloomBlob(bitset) {
  const empty = { fields: [] };
  const hdr = encodeStruct({ fields: [
    { id: 1, type: T.I32, value: BigInt(bitset.length) },
    { id: 2, type: T.STRUCT, value: { fields: [{ id: 1, type: T.STRUCT, value: empty }] } },
    { id: 3, type: T.STRUCT, value: { fields: [{ id: 1, type: T.STRUCT, value: empty }] } },
    { id: 4, type: T.STRUCT, value: { fields: [{ id: 1, type: T.STRUCT, value: empty }] } },
  ] });
  return Buffer.concat([hdr, bitset]);
}

// ------------------------------------------------------------------ footer patching

/** The decoded FileMetaData of a Parquet file and where it starts. */
export function readFooter(file) {
  if (file.subarray(file.length - 4).toString() !== 'PAR1') throw new Error('not a Parquet file');
  const len = file.readUInt32LE(file.length - 8);
  const start = file.length - 8 - len;
  const { struct } = decodeStruct(file, start);
  return { meta: struct, start };
}

/** The path (dotted) of each leaf column, in schema order. */
export function leafPaths(meta) {
  const schema = field(meta, 2).value.items;
  const out = [];
  let i = 1;
  function walk(prefix, nChildren) {
    for (let k = 0; k < nChildren; k++) {
      const el = schema[i++];
      const name = field(el, 4).value.toString();
      const nc = field(el, 5);
      const path = prefix ? `${prefix}.${name}` : name;
      if (nc && Number(nc.value) > 0) walk(path, Number(nc.value));
      else out.push(path);
    }
  }
  walk('', Number(field(schema[0], 5).value));
  return out;
}

/**
 * Adds bloom filters: valuesOf(rowGroup, leafPath) returns the PLAIN bytes of
 * every non-null value of that chunk (or null: no filter for it).  Filters go
 * between the last data/index byte and the footer; offsets and lengths are set
 * in ColumnMetaData fields 14 and 15.
 */
export function addBloomFilters(file, valuesOf, { fpp = 0.01 } = {}) {
  const { meta, start } = readFooter(file);
  const paths = leafPaths(meta);
  const rgs = field(meta, 4).value.items;
  const blobs = [];
  let at = start;
  rgs.forEach((rg, g) => {
    field(rg, 1).value.items.forEach((cc, c) => {
      const vals = valuesOf(g, paths[c]);
      if (!vals) return;
      const distinct = new Set(vals.map((v) => Buffer.from(v).toString('hex')));
      const bitset = Buffer.alloc(bloomBytes(Math.max(distinct.size, 1), fpp));
      for (const h of distinct) bloomInsert(bitset, xxh64(Buffer.from(h, 'hex')));
      const blob = bloomBlob(bitset);
      const md = field(cc, 3).value;
      setField(md, 14, T.I64, BigInt(at));
      setField(md, 15, T.I32, BigInt(blob.length));
      blobs.push(blob);
      at += blob.length;
    });
  });
  const footer = encodeStruct(meta);
  const tail = Buffer.alloc(8);
  tail.writeUInt32LE(footer.length, 0);
  tail.write('PAR1', 4);
  return Buffer.concat([file.subarray(0, start), ...blobs, footer, tail]);
}
