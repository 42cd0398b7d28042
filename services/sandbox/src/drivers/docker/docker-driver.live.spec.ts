import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type Dockerode from 'dockerode';
import { SANDBOX_PATH, SANDBOX_PATHS, type PreparedExec } from '../sandbox-driver';
import { DockerDriver } from './docker-driver';
import { DOCKER_HOST_VARIABLE, dockerOptionsFromHost } from './docker-engine';

/**
 * Real containers on a real engine. Opt-in: it needs Docker on this machine (the workspace is a
 * local directory bound into the container) and the image pulled beforehand, so it runs only
 * with PACKETAGENT_LIVE_DOCKER=1 and an engine answering at PACKETAGENT_SANDBOX_DOCKER_HOST
 * (else DOCKER_HOST, else /var/run/docker.sock).
 */
const LIVE = process.env['PACKETAGENT_LIVE_DOCKER'] === '1';
const IMAGE = process.env['PACKETAGENT_SANDBOX_DOCKER_IMAGE'] ?? 'node:20-bookworm-slim';
const CONNECTION: Dockerode.DockerOptions = dockerOptionsFromHost(process.env[DOCKER_HOST_VARIABLE] ?? process.env['DOCKER_HOST'] ?? '/var/run/docker.sock');

/** Jest decides what to skip before any test runs, so the engine is asked synchronously, from a child. */
function skipReason(): string | undefined {
  if (!LIVE) return 'PACKETAGENT_LIVE_DOCKER is not 1';
  const ping = `
    const o = JSON.parse(process.argv[1]);
    const client = require(o.protocol === 'https' ? 'https' : 'http');
    client.get({ socketPath: o.socketPath, host: o.host, port: o.port, path: '/_ping', timeout: 5000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1))
      .on('error', (error) => { process.stderr.write(error.message); process.exit(1); });`;
  const answer = spawnSync(process.execPath, ['-e', ping, JSON.stringify(CONNECTION)], { encoding: 'utf8', timeout: 10_000 });
  return answer.status === 0 ? undefined : `no Docker engine answers at ${CONNECTION.socketPath ?? `${CONNECTION.host}:${CONNECTION.port}`} (${answer.stderr.trim() || `status ${answer.status}`})`;
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

const reason = skipReason();
if (reason) console.info(`live Docker driver tests skipped: ${reason}`);
const describeLive = reason === undefined ? describe : describe.skip;

describeLive(`${DockerDriver.name} against a live Docker engine${reason ? ` [skipped: ${reason}]` : ''}`, () => {
  let workspaceDir: string;
  const sut = new DockerDriver({ docker: CONNECTION, image: IMAGE });

  const execOf = (argv: string[]): PreparedExec => ({
    execId: `live-${Date.now()}`,
    argv,
    workspaceDir,
    cwd: '.',
    env: { PATH: SANDBOX_PATH, HOME: SANDBOX_PATHS.home, LANG: 'C.UTF-8' },
    limits: {
      wallTimeMs: 60_000,
      cpuSeconds: 30,
      memoryBytes: 256 * 1024 ** 2,
      pids: 64,
      fileSizeBytes: 16 * 1024 ** 2,
      openFiles: 256,
      outputBytes: 1024 ** 2,
      tmpBytes: 32 * 1024 ** 2,
    },
    egressDir: null,
  });

  beforeAll(async () => {
    const probe = await sut.probe();
    if (!probe.available) throw new Error(probe.detail);
    workspaceDir = await mkdtemp(join(tmpdir(), 'packetagent-docker-live-'));
    // The container runs as nobody, not as the owner of the temporary directory.
    await chmod(workspaceDir, 0o777);
  }, 30_000);

  afterAll(async () => {
    if (workspaceDir) await rm(workspaceDir, { recursive: true, force: true });
  });

  it('runs node --version in the image', async () => {
    const running = await sut.start(execOf(['node', '--version']));

    const [stdout, , exit] = await Promise.all([text(running.stdout), text(running.stderr), running.exited]);

    expect(exit).toEqual({ exitCode: 0, signal: null, limit: null });
    expect(stdout).toMatch(/^v\d+\.\d+\.\d+\n$/);
  }, 60_000);

  it('has no network but loopback, a read-only root, a writable /tmp, HOME and workspace, and runs as nobody', async () => {
    const script = `
      const fs = require('fs'), os = require('os');
      const writable = (path) => { try { fs.writeFileSync(path, 'x'); return true; } catch { return false; } };
      process.stdout.write(JSON.stringify({
        interfaces: Object.keys(os.networkInterfaces()),
        uid: process.getuid(),
        root: writable('/probe'),
        tmp: writable('/tmp/probe'),
        home: writable(os.homedir() + '/probe'),
        workspace: writable('/workspace/probe'),
      }));`;
    const running = await sut.start(execOf(['node', '-e', script]));

    const [stdout, stderr, exit] = await Promise.all([text(running.stdout), text(running.stderr), running.exited]);

    expect({ exit, stderr }).toEqual({ exit: { exitCode: 0, signal: null, limit: null }, stderr: '' });
    expect(JSON.parse(stdout)).toEqual({ interfaces: ['lo'], uid: 65534, root: false, tmp: true, home: true, workspace: true });
  }, 60_000);

  it('gives a command that asks for one a stdin: it gets what is written, answers while it stays open, and ends at its end', async () => {
    const script = `
      let read = 0;
      process.stdin.on('data', (chunk) => { read += chunk.length; process.stdout.write(chunk); });
      process.stdin.on('end', () => { process.stderr.write(String(read)); process.exitCode = 3; });`;
    const running = await sut.start({ ...execOf(['node', '-e', script]), stdin: true });
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    let stdout = '';
    const answered = new Promise<void>((resolve) => {
      running.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout === ping) resolve();
      });
    });
    const ended = Promise.all([finished(running.stdout), text(running.stderr), running.exited]);

    running.stdin!.write(ping);
    await answered;
    running.stdin!.end('bye\n');
    const [, stderr, exit] = await ended;

    // Nothing in front of what was written: the attach request sent no body into the stdin.
    expect({ exit, stdout, stderr }).toEqual({ exit: { exitCode: 3, signal: null, limit: null }, stdout: `${ping}bye\n`, stderr: String(ping.length + 4) });
  }, 60_000);

  it('kills a command that would run on', async () => {
    const running = await sut.start(execOf(['node', '-e', 'setTimeout(() => {}, 60_000)']));

    await running.kill();

    await expect(running.exited).resolves.toEqual({ exitCode: null, signal: 'SIGKILL', limit: null });
  }, 60_000);
});
