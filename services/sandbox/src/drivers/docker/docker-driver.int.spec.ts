import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ExecLimits } from '@packetagent/contracts';
import Dockerode from 'dockerode';
import { DockerEnginePeer } from '../../testing/docker-engine/docker-engine-peer';
import type { ContainerScript } from '../../testing/docker-engine/peer-container';
import { DriverStartError, type DriverProcess, type PreparedExec } from '../sandbox-driver';
import { DockerDriver } from './docker-driver';

/**
 * The driver against a peer speaking the Docker Engine API on a unix socket (real: dockerode,
 * docker-modem, HTTP and the hijacked attach stream; scripted: what the container does).
 */
const IMAGE = 'node:20-bookworm-slim';

const limits: ExecLimits = {
  wallTimeMs: 60_000,
  cpuSeconds: 30,
  memoryBytes: 256 * 1024 ** 2,
  pids: 64,
  fileSizeBytes: 16 * 1024 ** 2,
  openFiles: 128,
  outputBytes: 1024 ** 2,
  tmpBytes: 32 * 1024 ** 2,
};

const exec: PreparedExec = {
  execId: 'exec-1',
  argv: ['node', '--version'],
  workspaceDir: '/srv/workspaces/ws-1',
  cwd: 'app',
  env: { PATH: '/usr/bin:/bin', HOME: '/tmp/home' },
  limits,
  egressDir: '/srv/egress/exec-1',
};

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

async function runToEnd(running: DriverProcess) {
  const [stdout, stderr, exit] = await Promise.all([text(running.stdout), text(running.stderr), running.exited]);
  return { stdout, stderr, exit };
}

describe(`${DockerDriver.name} against a Docker Engine API peer`, () => {
  let peer: DockerEnginePeer;
  let sut: DockerDriver;

  beforeEach(async () => {
    peer = await DockerEnginePeer.start({ images: [IMAGE] });
    sut = new DockerDriver({ docker: { socketPath: peer.socketPath }, image: IMAGE });
  });

  afterEach(async () => {
    await peer.stop();
  });

  const script = (fn: ContainerScript) => {
    peer.script = fn;
  };

  describe('probe', () => {
    it('is available with the engine version, the socket and the image', async () => {
      const probe = await sut.probe();

      expect(probe).toEqual({ available: true, detail: `Docker 27.3.1 (API 1.47) at ${peer.socketPath}, image ${IMAGE}`, unenforced: [] });
      expect(peer.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /_ping', 'GET /version', 'GET /info', `GET /images/${IMAGE}/json`]);
    });

    it('speaks through the API version prefix when the client pins one', async () => {
      const pinned = new DockerDriver({ docker: new Dockerode({ socketPath: peer.socketPath, version: 'v1.47' }), image: IMAGE });

      await expect(pinned.probe()).resolves.toMatchObject({ available: true });
      expect(new Set(peer.requests.map((r) => r.version))).toEqual(new Set(['v1.47']));
    });

    it('is unavailable, saying to pull the image, when the engine does not have it', async () => {
      const sutWithoutImage = new DockerDriver({ docker: { socketPath: peer.socketPath }, image: 'python:3.12-slim' });

      const probe = await sutWithoutImage.probe();

      expect(probe.available).toBe(false);
      expect(probe.detail).toContain('run `docker pull python:3.12-slim`');
      expect(peer.requests.filter((r) => r.path.startsWith('/images/create'))).toEqual([]);
    });

    it('is unavailable, saying how to get an engine, when nothing listens on the socket', async () => {
      const socketPath = join(tmpdir(), 'no-such-dir', 'docker.sock');
      const sutWithoutEngine = new DockerDriver({ docker: { socketPath }, image: IMAGE });

      const probe = await sutWithoutEngine.probe();

      expect(probe).toEqual({
        available: false,
        detail: `no Docker engine at ${socketPath} (ENOENT): install Docker or set PACKETAGENT_SANDBOX_DOCKER_HOST`,
        unenforced: [],
      });
    });

    it('lists the limits the engine says it cannot apply', async () => {
      await peer.stop();
      peer = await DockerEnginePeer.start({ images: [IMAGE], info: { SwapLimit: false, PidsLimit: false } });
      const sutOnWeakHost = new DockerDriver({ docker: { socketPath: peer.socketPath }, image: IMAGE });

      const probe = await sutOnWeakHost.probe();

      expect(probe.available).toBe(true);
      expect(probe.unenforced).toEqual([expect.stringMatching(/^memory: .*swap/), expect.stringMatching(/^pids: /)]);
    });
  });

  describe('start', () => {
    it('asks the engine for an isolated, limited container of the image', async () => {
      await runToEnd(await sut.start(exec));

      const [create] = peer.requests.filter((r) => r.path === '/containers/create');
      expect(create?.query).toEqual({});
      expect(create?.body).toMatchObject({
        Image: IMAGE,
        Entrypoint: [],
        Cmd: ['node', '--version'],
        Env: ['PATH=/usr/bin:/bin', 'HOME=/tmp/home'],
        WorkingDir: '/workspace/app',
        User: '65534:65534',
        NetworkDisabled: true,
        Labels: { 'packetagent.exec': 'exec-1' },
        Tty: false,
        OpenStdin: false,
        HostConfig: {
          NetworkMode: 'none',
          ReadonlyRootfs: true,
          Tmpfs: { '/tmp': `rw,exec,nosuid,nodev,size=${limits.tmpBytes},mode=1777` },
          Binds: ['/srv/workspaces/ws-1:/workspace:rw', '/srv/egress/exec-1:/input/egress:ro'],
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          NanoCpus: 1_000_000_000,
          Memory: limits.memoryBytes,
          MemorySwap: limits.memoryBytes,
          PidsLimit: limits.pids,
          Ulimits: [
            { Name: 'cpu', Soft: 30, Hard: 31 },
            { Name: 'fsize', Soft: limits.fileSizeBytes, Hard: limits.fileSizeBytes },
            { Name: 'nofile', Soft: 128, Hard: 128 },
            { Name: 'core', Soft: 0, Hard: 0 },
          ],
          AutoRemove: false,
        },
      });
    });

    it('creates, attaches before starting, waits, inspects and removes, in that order', async () => {
      await runToEnd(await sut.start(exec));

      const id = peer.requests.find((r) => r.path.endsWith('/start'))!.path.split('/')[2]!;
      const calls = peer.requests.map((r) => `${r.method} ${r.path.replace(id, '<id>')}`);
      expect(calls).toEqual([
        'POST /containers/create',
        'POST /containers/<id>/attach',
        'POST /containers/<id>/start',
        'POST /containers/<id>/wait',
        'GET /containers/<id>/json',
        'DELETE /containers/<id>',
      ]);
      expect(peer.requests.find((r) => r.path.endsWith('/attach'))?.query).toMatchObject({ stream: 'true', stdout: 'true', stderr: 'true' });
      expect(peer.requests.find((r) => r.method === 'DELETE')?.query).toMatchObject({ force: 'true' });
    });

    it('splits stdout and stderr out of the multiplexed stream, a frame cut across reads included', async () => {
      script(() => ({
        output: [
          { stream: 'stdout', data: 'hello ' },
          { stream: 'stderr', data: 'warning: careful\n' },
          // Cut inside the header and inside the payload.
          { stream: 'stdout', data: 'world, in three reads\n', splitAt: [3, 12] },
          { stream: 'stderr', data: Buffer.from([0xe2, 0x9c, 0x93, 0x0a]), splitAt: [9] },
        ],
      }));

      const { stdout, stderr } = await runToEnd(await sut.start(exec));

      expect(stdout).toBe('hello world, in three reads\n');
      expect(stderr).toBe('warning: careful\n✓\n');
    });

    it('answers the exit code the container exited with', async () => {
      script(() => ({ output: [{ stream: 'stderr', data: 'no such file\n' }], exit: 3 }));

      const { exit } = await runToEnd(await sut.start(exec));

      expect(exit).toEqual({ exitCode: 3, signal: null, limit: null });
    });

    it('names the memory limit when the engine says the container was OOM-killed', async () => {
      script(() => ({ exit: 137, oomKilled: true }));

      const { exit } = await runToEnd(await sut.start(exec));

      expect(exit).toEqual({ exitCode: null, signal: 'SIGKILL', limit: 'memory' });
    });

    it('names the CPU time and file size limits from the signals that ended the container', async () => {
      script(() => ({ exit: 152 }));
      const cpu = await runToEnd(await sut.start(exec));
      script(() => ({ exit: 153 }));
      const fileSize = await runToEnd(await sut.start(exec));

      expect(cpu.exit).toEqual({ exitCode: null, signal: 'SIGXCPU', limit: 'cpu_time' });
      expect(fileSize.exit).toEqual({ exitCode: null, signal: 'SIGXFSZ', limit: 'file_size' });
    });

    it('removes the container once it exited, before the exit is answered', async () => {
      const running = await sut.start(exec);
      expect(peer.containerIds()).toHaveLength(1);

      await runToEnd(running);

      expect(peer.containerIds()).toEqual([]);
    });

    it('fails with the pull instruction, and never pulls, when the image is missing', async () => {
      const sutWithoutImage = new DockerDriver({ docker: { socketPath: peer.socketPath }, image: 'python:3.12-slim' });

      const started = sutWithoutImage.start(exec);

      await expect(started).rejects.toBeInstanceOf(DriverStartError);
      await expect(started).rejects.toThrow('run `docker pull python:3.12-slim`');
      expect(peer.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /containers/create']);
    });

    it('fails with the engine refusal, and removes the container, when the engine will not start it', async () => {
      script(() => ({ startError: 'exec: "nope": executable file not found in $PATH' }));

      const started = sut.start({ ...exec, argv: ['nope'] });

      await expect(started).rejects.toBeInstanceOf(DriverStartError);
      await expect(started).rejects.toThrow('the Docker engine could not start the container: exec: "nope": executable file not found in $PATH');
      expect(peer.containerIds()).toEqual([]);
    });

    it('fails saying there is no engine when nothing listens on the socket', async () => {
      const socketPath = join(tmpdir(), 'no-such-dir', 'docker.sock');
      const sutWithoutEngine = new DockerDriver({ docker: { socketPath }, image: IMAGE });

      const started = sutWithoutEngine.start(exec);

      await expect(started).rejects.toBeInstanceOf(DriverStartError);
      await expect(started).rejects.toThrow(`no Docker engine at ${socketPath} (ENOENT): install Docker or set PACKETAGENT_SANDBOX_DOCKER_HOST`);
    });
  });

  describe('kill', () => {
    it('cuts a container that would run on, which then answers the wait with SIGKILL and is removed', async () => {
      script(() => ({ output: [{ stream: 'stdout', data: 'working\n' }], exit: 'until-killed' }));
      const running = await sut.start(exec);

      await running.kill();
      const { stdout, exit } = await runToEnd(running);

      expect(exit).toEqual({ exitCode: null, signal: 'SIGKILL', limit: null });
      expect(stdout).toBe('working\n');
      expect(peer.requests.find((r) => r.path.endsWith('/kill'))?.query).toEqual({ signal: 'SIGKILL' });
      expect(peer.containerIds()).toEqual([]);
    });

    it('may be called again, and after the end, without error', async () => {
      script(() => ({ exit: 'until-killed' }));
      const running = await sut.start(exec);

      await Promise.all([running.kill(), running.kill()]);
      await running.exited;
      await running.kill();

      expect(peer.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
      expect(peer.containerIds()).toEqual([]);
    });

    it('tolerates the engine no longer knowing the container (404)', async () => {
      const running = await sut.start(exec);
      await runToEnd(running);

      await expect(running.kill()).resolves.toBeUndefined();
      expect(peer.requests.filter((r) => r.path.endsWith('/kill'))).toHaveLength(1);
    });
  });
});
