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

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  readStdin,
  ...(process.stdin.isTTY ? { confirm } : {}),
}).then((code) => {
  // exitCode rather than exit(): output still buffered for a pipe is written before the process ends.
  process.exitCode = code;
});
