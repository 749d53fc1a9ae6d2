// DuckDB in a child process of run_diff.mjs: the parent spawns hundreds of
// pqtool processes, and a fork from a process that holds DuckDB (a large
// address space) costs several times more than from a small one.
//
// Messages from the parent: { id, sql, out } → COPY (sql) TO out as CSV with a
// header; the reply is { id } or { id, error }. One thread, TimeZone=UTC.
import { duckdbHelpers } from './lib.mjs';

const { openDuckDB, closeDuckDB } = await duckdbHelpers();
const db = await openDuckDB({ threads: 1, preserve_insertion_order: 'true' });
await db.conn.run(`SET TimeZone = 'UTC'`);
const quote = (s) => `'${String(s).replaceAll("'", "''")}'`;

// The parent went away (killed by a CTest timeout...): do not linger.
process.on('disconnect', () => process.exit(0));

let chain = Promise.resolve();
process.on('message', (m) => {
  if (m === 'exit') {
    chain.then(() => {
      closeDuckDB(db);
      process.exit(0);
    });
    return;
  }
  chain = chain.then(async () => {
    try {
      await db.conn.run(`COPY (${m.sql}) TO ${quote(m.out)} (FORMAT csv, HEADER, DELIMITER ',', QUOTE '"', NULLSTR '')`);
      process.send({ id: m.id });
    } catch (e) {
      process.send({ id: m.id, error: String(e.message).split('\n')[0] });
    }
  });
});
process.send({ ready: true });
