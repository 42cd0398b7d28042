import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { ExecLimits } from '@packetagent/contracts';
import Dockerode from 'dockerode';
import { DockerEnginePeer } from '../../testing/docker-engine/docker-engine-peer';
import type { ContainerScript, PeerContainer, ScriptedChunk } from '../../testing/docker-engine/peer-container';
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

/** What a stream brought so far, read as it comes, with a wait for what it has yet to bring. */
function collect(stream: Readable) {
  const chunks: Buffer[] = [];
  let ended = false;
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((waiter) => waiter());
  stream.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    wake();
  });
  stream.on('end', () => {
    ended = true;
    wake();
  });
  const bytes = () => Buffer.concat(chunks);
  const until = (expected: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (bytes().toString('utf8') === expected) {
          waiters.delete(check);
          resolve();
        } else if (ended) {
          waiters.delete(check);
          reject(new Error(`the stream ended with ${JSON.stringify(bytes().toString('utf8'))}, not ${JSON.stringify(expected)}`));
        }
      };
      waiters.add(check);
      check();
    });
  return { bytes, text: () => bytes().toString('utf8'), until };
}

async function writeAll(stdin: Writable, chunks: Buffer[]): Promise<void> {
  for (const chunk of chunks) {
    if (!stdin.write(chunk)) await once(stdin, 'drain');
  }
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

    it('gives the container no stdin unless the exec asks for one', async () => {
      const running = await sut.start(exec);
      await runToEnd(running);

      expect(running.stdin ?? null).toBeNull();
      expect(peer.createdSpecs()[0]).toMatchObject({ AttachStdin: false, OpenStdin: false, StdinOnce: false, Tty: false });
      expect(peer.requests.find((r) => r.path.endsWith('/attach'))?.query).not.toHaveProperty('stdin');
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

  describe('stdin', () => {
    const withStdin: PreparedExec = { ...exec, argv: ['mcp-server', '--stdio'], stdin: true };
    const echo = (bytes: Buffer): ScriptedChunk[] => [{ stream: 'stdout', data: bytes }];
    /** Like `cat`: what it reads goes back on stdout, and it exits 0 at the end of its stdin. */
    const cat: ContainerScript = () => ({ onStdin: echo, exit: { atStdinEnd: 0 } });

    const startedContainer = (): PeerContainer => {
      const [id] = peer.containerIds();
      return peer.container(id!)!;
    };

    it('creates the container with a stdin closed at its first EOF, attached on the one hijacked stream before the start', async () => {
      script(cat);

      const running = await sut.start(withStdin);
      running.stdin!.end();
      await runToEnd(running);

      expect(peer.createdSpecs()[0]).toMatchObject({ Cmd: ['mcp-server', '--stdio'], AttachStdin: true, OpenStdin: true, StdinOnce: true, Tty: false });
      const id = peer.requests.find((r) => r.path.endsWith('/start'))!.path.split('/')[2]!;
      expect(peer.requests.map((r) => `${r.method} ${r.path.replace(id, '<id>')}`)).toEqual([
        'POST /containers/create',
        'POST /containers/<id>/attach',
        'POST /containers/<id>/start',
        'POST /containers/<id>/wait',
        'GET /containers/<id>/json',
        'DELETE /containers/<id>',
      ]);
      expect(peer.requests.find((r) => r.path.endsWith('/attach'))?.query).toEqual({ stream: 'true', stdin: 'true', stdout: 'true', stderr: 'true' });
    });

    it('hands the container nothing but what is written: no request body reaches its stdin', async () => {
      script(cat);
      const running = await sut.start(withStdin);
      const container = startedContainer();

      running.stdin!.end();
      const { stdout, exit } = await runToEnd(running);

      expect(container.stdinReceived()).toEqual(Buffer.alloc(0));
      expect(container.stdinEnded).toBe(true);
      expect(stdout).toBe('');
      expect(exit).toEqual({ exitCode: 0, signal: null, limit: null });
    });

    it('gets what is written, raw, and its answers come back framed on stdout and stderr while stdin stays open', async () => {
      script(() => ({
        onStdin: (bytes) => [
          // The answer's frame cut inside its header and its payload.
          { stream: 'stdout', data: bytes, splitAt: [3, 12] },
          { stream: 'stderr', data: `read ${bytes.length}\n` },
        ],
        exit: { atStdinEnd: 0 },
      }));
      const running = await sut.start(withStdin);
      const container = startedContainer();
      const stdout = collect(running.stdout);
      const stderr = collect(running.stderr);
      const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
      const list = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n';

      running.stdin!.write(ping);
      await stdout.until(ping);
      await stderr.until(`read ${ping.length}\n`);
      // Bytes that would read as a frame header, were stdin framed: they arrive as they are.
      const raw = Buffer.from([0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xe2, 0x9c, 0x93, 0x0a]);
      running.stdin!.write(raw);
      await stdout.until(`${ping}${raw.toString('utf8')}`);
      running.stdin!.write(list);
      await stdout.until(`${ping}${raw.toString('utf8')}${list}`);
      running.stdin!.end();
      const exit = await running.exited;

      expect(container.stdinReceived()).toEqual(Buffer.concat([Buffer.from(ping), raw, Buffer.from(list)]));
      expect(stdout.bytes()).toEqual(Buffer.concat([Buffer.from(ping), raw, Buffer.from(list)]));
      expect(stderr.text()).toBe(`read ${ping.length}\nread ${raw.length}\nread ${list.length}\n`);
      expect(exit).toEqual({ exitCode: 0, signal: null, limit: null });
    });

    it('ends a command that reads stdin to its end once stdin is ended, with the output it wrote after and its exit status', async () => {
      let count = 0;
      script(() => ({
        onStdin: (bytes) => {
          count += bytes.length;
          return [];
        },
        onStdinEnd: () => [
          { stream: 'stdout', data: `${count}\n` },
          { stream: 'stderr', data: 'bye\n' },
        ],
        exit: { atStdinEnd: 3 },
      }));
      const running = await sut.start(withStdin);
      const container = startedContainer();

      running.stdin!.write('hello\n');
      running.stdin!.end('world\n');
      const { stdout, stderr, exit } = await runToEnd(running);

      expect(container.stdinEnded).toBe(true);
      expect({ stdout, stderr }).toEqual({ stdout: '12\n', stderr: 'bye\n' });
      expect(exit).toEqual({ exitCode: 3, signal: null, limit: null });
      expect(peer.containerIds()).toEqual([]);
    });

    it('carries a large stdin whole, at the pace the container reads it, and all the output that follows its end', async () => {
      script(cat);
      const running = await sut.start(withStdin);
      const stdout = collect(running.stdout);
      const chunks = Array.from({ length: 64 }, (_, index) => Buffer.alloc(32 * 1024, index));

      await writeAll(running.stdin!, chunks);
      running.stdin!.end();
      const exit = await running.exited;

      expect(exit).toEqual({ exitCode: 0, signal: null, limit: null });
      expect(stdout.bytes().equals(Buffer.concat(chunks))).toBe(true);
    });

    it('leaves the stdin open to a command that exits on its own, then closes it', async () => {
      script(() => ({ output: [{ stream: 'stdout', data: 'done without reading\n' }], exit: 0 }));
      const running = await sut.start(withStdin);

      const { stdout, exit } = await runToEnd(running);

      expect({ stdout, exit }).toEqual({ stdout: 'done without reading\n', exit: { exitCode: 0, signal: null, limit: null } });
      expect(running.stdin!.destroyed).toBe(true);
    });

    it('is closed by a kill, and a write after it fails on the stdin without raising on the service', async () => {
      script(() => ({ onStdin: echo, exit: 'until-killed' }));
      const running = await sut.start(withStdin);
      const stdout = collect(running.stdout);
      running.stdin!.write('first\n');
      await stdout.until('first\n');

      await running.kill();
      const exit = await running.exited;
      const late = await new Promise<Error | null | undefined>((resolve) => running.stdin!.write('late\n', resolve));

      expect(exit).toEqual({ exitCode: null, signal: 'SIGKILL', limit: null });
      expect(running.stdin!.destroyed).toBe(true);
      expect(late).toMatchObject({ code: 'ERR_STREAM_DESTROYED' });
      expect(stdout.text()).toBe('first\n');
      expect(peer.containerIds()).toEqual([]);
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
