import Dockerode from 'dockerode';

/** A client, or how to reach the engine: `socketPath`, or `host` and `port`. */
export type DockerConnection = Dockerode | Dockerode.DockerOptions;

export const DOCKER_HOST_VARIABLE = 'PACKETAGENT_SANDBOX_DOCKER_HOST';

export function connectDocker(connection?: DockerConnection): Dockerode {
  if (connection instanceof Dockerode) return connection;
  if (connection === undefined) return new Dockerode();
  // docker-modem lays these options over what DOCKER_HOST says, and a host wins over a socket:
  // a socket asked for here must not lose to a TCP host from the environment.
  if (connection.socketPath !== undefined && connection.host === undefined) {
    return new Dockerode({ protocol: 'http', ...connection, host: undefined, port: undefined });
  }
  return new Dockerode(connection);
}

/** Connection options from a DOCKER_HOST-style address: `unix:///path`, `tcp://host:port`, `http(s)://host:port` or a socket path. */
export function dockerOptionsFromHost(address: string): Dockerode.DockerOptions {
  if (address.startsWith('/')) return { socketPath: address };
  if (address.startsWith('unix://')) return { socketPath: address.slice('unix://'.length) };
  const url = new URL(address);
  if (!['tcp:', 'http:', 'https:'].includes(url.protocol)) throw new Error(`unsupported Docker host ${JSON.stringify(address)}: expected unix://, tcp://, http:// or https://`);
  const protocol = url.protocol === 'https:' ? 'https' : 'http';
  return { protocol, host: url.hostname, port: url.port ? Number(url.port) : protocol === 'https' ? 2376 : 2375 };
}

/** Where the client dials, for messages: the socket path or the URL. */
export async function engineAddress(docker: Dockerode): Promise<string> {
  // docker-modem keeps these on the instance; its typings do not declare them.
  const modem = docker.modem as unknown as { host?: string; port?: string | number; protocol?: string; socketPath?: string | (() => Promise<string>) };
  if (modem.host) return `${modem.protocol ?? 'http'}://${modem.host}${modem.port ? `:${modem.port}` : ''}`;
  const socketPath = typeof modem.socketPath === 'function' ? await modem.socketPath() : modem.socketPath;
  return socketPath ?? 'the default Docker socket';
}

/** The HTTP status the engine answered, when it answered. */
export function engineStatus(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** The engine's own words (`{"message": ...}`), or the client's. */
export function engineMessage(error: unknown): string {
  const body = (error as { json?: { message?: unknown } } | null)?.json;
  if (typeof body?.message === 'string') return body.message;
  return error instanceof Error ? error.message.trim() : String(error);
}

/** What to tell the operator when nothing answered at the address; null when the engine did answer. */
export function unreachableDetail(address: string, error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EACCES') return `permission denied on the Docker socket ${address}: give the service's user access to it (the docker group) or set ${DOCKER_HOST_VARIABLE}`;
  if (typeof code === 'string' && NOT_THERE.has(code)) return `no Docker engine at ${address} (${code}): install Docker or set ${DOCKER_HOST_VARIABLE}`;
  return null;
}

const NOT_THERE = new Set(['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOTSOCK']);
