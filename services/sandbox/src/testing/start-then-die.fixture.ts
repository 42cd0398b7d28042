// Run as a process of its own: starts `sleep <marker>` in bubblewrap and SIGKILLs itself, either
// the moment the launcher is spawned (`starting`) or once the command runs (`running`).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BubblewrapDriver } from '../drivers/bubblewrap/bubblewrap-driver';
import { DEFAULT_EXEC_LIMITS } from '../sandbox.options';

const [dir, marker, when] = process.argv.slice(2) as [string, string, 'starting' | 'running'];
mkdirSync(join(dir, 'workspace'), { recursive: true });
const driver = new BubblewrapDriver({ scratchDir: join(dir, 'scratch'), ...(process.env['NO_SETPRIV'] ? { setprivPath: '/nonexistent' } : {}) });
void driver.start({ execId: `die-${marker}`, argv: ['sleep', marker], workspaceDir: join(dir, 'workspace'), cwd: '.', env: { PATH: '/usr/bin:/bin' }, limits: DEFAULT_EXEC_LIMITS, egressDir: null }).then((started) => {
  if (when === 'starting') process.kill(process.pid, 'SIGKILL');
  started.stdout.resume();
  started.stderr.resume();
  process.stdout.write('started\n');
});
setInterval(() => undefined, 1_000);
