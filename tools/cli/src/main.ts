import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { runCli } from './cli';

/**
 * The version of the packetagent package this file belongs to: its package.json is the first one
 * named packetagent above this file, wherever it runs from (the sources, dist/, or the bundle cache).
 */
function packageVersion(): string | undefined {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'packetagent' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here, or not one that can be read: look further up.
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => (text += chunk));
    process.stdin.once('end', () => resolve(text));
    process.stdin.once('error', reject);
  });
}

/** The question goes to stderr, so stdout stays what the command prints. */
async function confirm(question: string): Promise<boolean> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await terminal.question(question)).trim());
  } finally {
    terminal.close();
  }
}

const SIGNALS = { SIGINT: 2, SIGTERM: 15 } as const;

/**
 * The first Ctrl-C or SIGTERM goes to the command, which stops following and exits with its own
 * code; a second one ends the process at once (128 + the signal's number).
 */
function onSignal(handler: (signal: keyof typeof SIGNALS) => void): () => void {
  let delivered = false;
  const listeners = Object.entries(SIGNALS).map(([name, number]) => {
    const listener = () => {
      if (delivered) process.exit(128 + number);
      delivered = true;
      handler(name as keyof typeof SIGNALS);
    };
    process.on(name, listener);
    return () => process.off(name, listener);
  });
  return () => listeners.forEach((off) => off());
}

const version = packageVersion();

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  readStdin,
  onSignal,
  ...(version ? { version } : {}),
  ...(process.stdin.isTTY ? { confirm } : {}),
}).then((code) => {
  // exitCode rather than exit(): output still buffered for a pipe is written before the process ends.
  process.exitCode = code;
});
