// Installs dependencies when node_modules is missing or older than package-lock.json.
// Uses only Node built-ins: it runs before anything is installed.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const STAMP = join(ROOT, 'node_modules', '.packetagent-lock-sha256');

function lockHash() {
  return createHash('sha256').update(readFileSync(join(ROOT, 'package-lock.json'))).digest('hex');
}

export function ensureInstalled() {
  // Set by tests that run these scripts while other tests use node_modules: never reinstall under them.
  if (process.env.PACKETAGENT_SKIP_INSTALL === '1') return;
  const wanted = lockHash();
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === wanted) return;
  process.stdout.write('Installing dependencies (npm ci)...\n');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write('npm ci failed; see the output above.\n');
    process.exit(result.status ?? 1);
  }
  writeFileSync(STAMP, wanted);
}
