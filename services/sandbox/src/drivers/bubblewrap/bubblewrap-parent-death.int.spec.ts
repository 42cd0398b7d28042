import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, hostProcesses } from '@packetagent/testing';
import { BubblewrapDriver } from './bubblewrap-driver';

const FIXTURE = join(__dirname, '../../testing/start-then-die.fixture.ts');
/** The fixture's own command line holds the marker too. */
const FIXTURE_LINES = ['start-then-die'];
const ROOT = join(__dirname, '../../../../..');


/**
 * The service process dies (SIGKILL) while a command starts, or while it runs: the sandbox dies
 * with it (bubblewrap's --die-with-parent, behind a launcher that dies with the service from its
 * first instruction), and whatever did not is ended by the next sandbox process on the host
 * (at its start, or when it takes a dead replica's exec over): nothing is left.
 */
describe('a sandboxed command dies with the service that started it', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pa-die-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    ['the moment its launcher is spawned', 'starting', '91.3131'],
    ['once the command runs', 'running', '91.4141'],
  ])('when the service is killed %s', async (_when, when, marker) => {
    const service = spawn(process.execPath, ['-r', '@swc-node/register', FIXTURE, dir, marker, when], { cwd: ROOT, env: { ...process.env, SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json') }, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => service.once('exit', resolve));
    if (when === 'running') {
      await eventually(() => hostProcesses(`sleep ${marker}`, FIXTURE_LINES).some((line) => / sleep /.test(` ${line.split(/\s+/).slice(4).join(' ')}`)), { timeoutMs: 20_000, what: 'the command to run' });
      service.kill('SIGKILL');
    }
    await exited;
    await new BubblewrapDriver({ scratchDir: join(dir, 'scratch') }).reclaim();
    await eventually(() => hostProcesses(marker, FIXTURE_LINES).length === 0, { timeoutMs: 5_000, what: `nothing of the sandbox left (${hostProcesses(marker, FIXTURE_LINES).join(' | ')})` });
  }, 60_000);
});
