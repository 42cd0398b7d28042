import { createInterface } from 'node:readline/promises';
import { runCli } from './cli';

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

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  readStdin,
  onSignal,
  ...(process.stdin.isTTY ? { confirm } : {}),
}).then((code) => {
  // exitCode rather than exit(): output still buffered for a pipe is written before the process ends.
  process.exitCode = code;
});
