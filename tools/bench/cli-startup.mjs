// `node tools/bench/cli-startup.mjs [runs]`: wall time of starting the packetagent CLI, each
// command run `runs` times (default 10) after one warm-up run (which builds the CLI's bundle
// cache when the sources changed). Prints the median and the slowest run of each.
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(process.argv[2] ?? 10);
const BIN = join(ROOT, 'tools/cli/bin/packetagent.js');
const COMMANDS = [
  ['node tools/cli/bin/packetagent.js --version', process.execPath, [BIN, '--version']],
  ['node tools/cli/bin/packetagent.js --help', process.execPath, [BIN, '--help']],
  ['npx packetagent --help', 'npx', ['packetagent', '--help']],
];

function once(command, args) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status ?? result.signal}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

for (const [label, command, args] of COMMANDS) {
  once(command, args);
  const times = Array.from({ length: RUNS }, () => once(command, args)).sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  process.stdout.write(`${label.padEnd(46)} median ${median.toFixed(0).padStart(5)} ms   slowest ${times.at(-1).toFixed(0).padStart(5)} ms   (${RUNS} runs)\n`);
}
