// Times commands for the benchmarks without charging them this process's fork.
//
// fork() from a node process gets slower as its memory grows: once DuckDB has
// read a big lake, starting a child costs tens of milliseconds, which a timing
// taken around spawnSync would charge to the child (a 10 ms pqtool point lookup
// measured 38 ms that way). So commands are started by a small bash launcher,
// forked once, before DuckDB is loaded. It reads one command per line
// (arguments separated by \x1f), runs it with stdout to /dev/null and stderr to
// a file, and answers "STATUS USER_S SYS_S" (bash's `time`); the wall time is
// taken here around that round trip (pipe latency: well under 1 ms).
//
//   const launcher = startLauncher(tmpDir);          // before DuckDB is loaded
//   const { rc, wall, cpu, stderr } = await launcher.run([cmd, ...args]);
//   launcher.close();
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const SCRIPT = `
err=$1
TIMEFORMAT='%3U %3S'
while IFS=$'\\x1f' read -r -a args; do
    { time "\${args[@]}" >/dev/null 2>"$err"; } 2>"$err.time"
    rc=$?
    # the last line is time's (a crash adds bash's "Segmentation fault" before
    # it); builtins only: no fork inside the timed round trip
    t=; while IFS= read -r l; do t=$l; done < "$err.time"
    printf '%s %s\\n' "$rc" "$t"
done`;

export function startLauncher(tmpDir) {
  const errFile = path.join(tmpDir, 'launcher-stderr');
  const child = spawn('bash', ['-c', SCRIPT, 'launcher', errFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    // rc: exit status (128 + N for signal N); wall and cpu (user + sys) in
    // seconds; stderr: what the command wrote there.
    async run(argv) {
      if (argv.some((a) => a.includes('\x1f') || a.includes('\n'))) throw new Error(`launcher: unsupported argument in ${argv.join(' ')}`);
      const t0 = process.hrtime.bigint();
      child.stdin.write(argv.join('\x1f') + '\n');
      const { value, done } = await lines.next();
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      if (done) throw new Error('launcher: bash exited');
      const [rc, user, sys] = value.trim().split(/\s+/).map(Number);
      return { rc, wall, cpu: user + sys, stderr: fs.readFileSync(errFile, 'utf8') };
    },
    close() { child.stdin.end(); },
  };
}

// "exit N[ (signal S)]: first lines of stderr", for a warning about a failed run.
export function describeFailure(r) {
  const err = r.stderr.trim().split('\n').slice(0, 3).join(' | ');
  return `exit ${r.rc > 128 ? `${r.rc} (signal ${r.rc - 128})` : r.rc}${err ? `: ${err}` : ''}`;
}
