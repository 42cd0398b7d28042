import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContainerCreateOptions } from 'dockerode';
import { PeerContainer, type AttachSink, type ContainerScript } from './peer-container';

export interface RecordedRequest {
  method: string;
  /** Without the API version prefix and the query. */
  path: string;
  /** The `/v1.47` prefix the client sent, or null. */
  version: string | null;
  query: Record<string, string>;
  /** The parsed JSON body, or undefined for none. */
  body: unknown;
}

export interface DockerEnginePeerOptions {
  /** Images the engine has (`name` stands for `name:latest`). */
  images?: string[];
  /** What each started container does; by default it writes nothing and exits 0. */
  script?: ContainerScript;
  /** Fields of GET /info laid over the defaults (every limit supported). */
  info?: Record<string, unknown>;
}

const ENGINE_VERSION = { Version: '27.3.1', ApiVersion: '1.47', MinAPIVersion: '1.24', Os: 'linux', Arch: 'amd64', KernelVersion: '6.8.0', GoVersion: 'go1.22.7', GitCommit: 'peer' };
const MULTIPLEXED = 'application/vnd.docker.multiplexed-stream';

class EngineError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A Docker Engine API on a unix socket, for exactly the calls the Docker driver makes, with the
 * real engine's ordering: attach before start, wait held until the container exits, kill and a
 * forced remove ending it with 137, 404 and 409 answered as `{message}`. Every request is recorded.
 */
export class DockerEnginePeer {
  readonly requests: RecordedRequest[] = [];
  script: ContainerScript;
  private readonly images: Set<string>;
  private readonly info: Record<string, unknown>;
  private readonly containers = new Map<string, PeerContainer>();
  private readonly hijacked = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    readonly socketPath: string,
    options: DockerEnginePeerOptions,
  ) {
    this.images = new Set((options.images ?? []).map(withTag));
    this.script = options.script ?? (() => ({}));
    this.info = options.info ?? {};
  }

  static async start(options: DockerEnginePeerOptions = {}): Promise<DockerEnginePeer> {
    const dir = await mkdtemp(join(tmpdir(), 'docker-engine-'));
    const socketPath = join(dir, 'docker.sock');
    const server = createServer();
    const peer = new DockerEnginePeer(server, dir, socketPath, options);
    server.on('request', (req, res) => void peer.handle(req, res));
    server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => peer.hijack(req, socket, head));
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));
    return peer;
  }

  addImage(name: string): void {
    this.images.add(withTag(name));
  }

  /** The create bodies, in order. */
  createdSpecs(): ContainerCreateOptions[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path === '/containers/create').map((r) => r.body as ContainerCreateOptions);
  }

  /** Containers created and not removed. */
  containerIds(): string[] {
    return [...this.containers.keys()];
  }

  container(id: string): PeerContainer | undefined {
    return this.containers.get(id);
  }

  async stop(): Promise<void> {
    for (const socket of this.hijacked) socket.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const request = record(req, await readBody(req));
      this.requests.push(request);
      await this.route(request, res);
    } catch (error) {
      const status = error instanceof EngineError ? error.status : 500;
      const message = error instanceof Error ? error.message : String(error);
      if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ message }));
    }
  }

  private async route(request: RecordedRequest, res: ServerResponse): Promise<void> {
    const { method, path, query } = request;
    if ((method === 'GET' || method === 'HEAD') && path === '/_ping') return text(res, 'OK');
    if (method === 'GET' && path === '/version') return json(res, 200, ENGINE_VERSION);
    if (method === 'GET' && path === '/info') return json(res, 200, this.engineInfo());
    const image = /^\/images\/(.+)\/json$/.exec(path);
    if (method === 'GET' && image) return this.inspectImage(decodeURIComponent(image[1]!), res);
    if (method === 'POST' && path === '/containers/create') return this.createContainer(request.body as ContainerCreateOptions, res);

    const match = /^\/containers\/([^/]+)(\/[a-z]+)?$/.exec(path);
    if (!match) throw new EngineError(404, 'page not found');
    const container = this.find(match[1]!);
    const action = `${method} ${match[2] ?? ''}`;
    switch (action) {
      case 'GET /json':
        return json(res, 200, container.inspect());
      case 'POST /attach':
        return this.streamWithoutUpgrade(container, query, res);
      case 'POST /start':
        return this.startContainer(container, res);
      case 'POST /wait': {
        // Like the engine: the headers go at once, the body when the container exits.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.flushHeaders();
        const statusCode = await container.waitFor(query['condition']);
        return void res.end(JSON.stringify({ StatusCode: statusCode }));
      }
      case 'POST /kill':
        if (!container.kill(query['signal'])) throw new EngineError(409, `cannot kill container: ${container.id}: container ${container.id} is not running`);
        return empty(res, 204);
      case 'DELETE ':
        return this.removeContainer(container, query['force'] === 'true' || query['force'] === '1', res);
      default:
        throw new EngineError(404, 'page not found');
    }
  }

  private inspectImage(name: string, res: ServerResponse): void {
    if (!this.images.has(withTag(name))) throw new EngineError(404, `No such image: ${name}`);
    json(res, 200, { Id: `sha256:${'0'.repeat(64)}`, RepoTags: [withTag(name)], Os: 'linux', Architecture: 'amd64' });
  }

  private createContainer(body: ContainerCreateOptions, res: ServerResponse): void {
    if (!body?.Image) throw new EngineError(400, 'config cannot be empty in order to create a container');
    if (!this.images.has(withTag(body.Image))) throw new EngineError(404, `No such image: ${withTag(body.Image)}`);
    const container = new PeerContainer(body, this.script);
    this.containers.set(container.id, container);
    json(res, 201, { Id: container.id, Warnings: [] });
  }

  private startContainer(container: PeerContainer, res: ServerResponse): void {
    if (container.running) return empty(res, 304);
    const refusal = container.start();
    if (refusal !== null) throw new EngineError(400, refusal);
    empty(res, 204);
  }

  private removeContainer(container: PeerContainer, force: boolean, res: ServerResponse): void {
    if (container.running && !force) {
      throw new EngineError(409, `cannot remove container "${container.id}": container is running: stop the container before removing or force remove`);
    }
    container.kill();
    this.containers.delete(container.id);
    empty(res, 204);
  }

  /**
   * Attach with `Upgrade: tcp`: the engine answers 101 and the connection carries the raw frames
   * out and, with `stdin`, the client's raw stdin in: every byte after the request's headers (a
   * body sent with the request too, as the engine reads it), until the client half-closes.
   */
  private hijack(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const request = record(req, undefined);
    this.requests.push(request);
    socket.on('error', () => socket.destroy());
    const match = /^\/containers\/([^/]+)\/attach$/.exec(request.path);
    const container = match ? this.containers.get(match[1]!) : undefined;
    if (req.method !== 'POST' || !container) {
      const body = JSON.stringify({ message: container ? 'page not found' : `No such container: ${match?.[1] ?? ''}` });
      socket.end(`HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      return;
    }
    this.hijacked.add(socket);
    socket.on('close', () => this.hijacked.delete(socket));
    socket.write(`HTTP/1.1 101 UPGRADED\r\nContent-Type: ${MULTIPLEXED}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n`);
    const sink: AttachSink = {
      streams: requestedStreams(request.query),
      write: (bytes) => new Promise((resolve) => (socket.writable ? socket.write(bytes, () => resolve()) : resolve())),
      end: () => socket.end(),
    };
    socket.on('close', () => container.detach(sink));
    container.attach(sink);
    if (!isOn(request.query, 'stdin')) return;
    if (head.length > 0) container.writeStdin(head);
    socket.on('data', (bytes: Buffer) => container.writeStdin(bytes));
    // The server half stays open (allowHalfOpen): output still goes out after the client's EOF.
    socket.on('end', () => container.closeStdin());
  }

  /** Attach without an upgrade: a 200 whose body carries the same frames until the container exits. */
  private streamWithoutUpgrade(container: PeerContainer, query: Record<string, string>, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': MULTIPLEXED });
    res.flushHeaders();
    const sink: AttachSink = {
      streams: requestedStreams(query),
      write: (bytes) => new Promise((resolve) => (res.writable ? res.write(bytes, () => resolve()) : resolve())),
      end: () => res.end(),
    };
    res.on('close', () => container.detach(sink));
    container.attach(sink);
  }

  private find(id: string): PeerContainer {
    const container = this.containers.get(id);
    if (!container) throw new EngineError(404, `No such container: ${id}`);
    return container;
  }

  private engineInfo(): Record<string, unknown> {
    return {
      ID: 'peer',
      Containers: this.containers.size,
      ServerVersion: ENGINE_VERSION.Version,
      OSType: 'linux',
      CgroupVersion: '2',
      MemoryLimit: true,
      SwapLimit: true,
      PidsLimit: true,
      CpuCfsQuota: true,
      ...this.info,
    };
  }
}

function record(req: IncomingMessage, body: unknown): RecordedRequest {
  const url = new URL(req.url ?? '/', 'http://engine');
  const versioned = /^\/(v\d+\.\d+)(\/.*)$/.exec(url.pathname);
  return {
    method: req.method ?? 'GET',
    path: versioned ? versioned[2]! : url.pathname,
    version: versioned ? versioned[1]! : null,
    query: Object.fromEntries(url.searchParams),
    body,
  };
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new EngineError(400, `invalid JSON: ${text.slice(0, 80)}`);
  }
}

function isOn(query: Record<string, string>, name: string): boolean {
  return query[name] === 'true' || query[name] === '1';
}

function requestedStreams(query: Record<string, string>): Set<'stdout' | 'stderr'> {
  return new Set([...(isOn(query, 'stdout') ? (['stdout'] as const) : []), ...(isOn(query, 'stderr') ? (['stderr'] as const) : [])]);
}

function withTag(image: string): string {
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  return lastSegment.includes(':') || lastSegment.includes('@') ? image : `${image}:latest`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function text(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Api-Version': ENGINE_VERSION.ApiVersion, Ostype: 'linux' });
  res.end(body);
}

function empty(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}
