import type { OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { DriverStartError, type DriverProbe, type DriverProcess, type PreparedExec, type SandboxDriver } from '../sandbox-driver';
import { ContainerOutput } from './container-output';
import { ContainerStdin } from './container-stdin';
import { assertSandboxUser, DEFAULT_DOCKER_USER, dockerContainerSpec, type DockerSpecOptions } from './docker-container-spec';
import { connectDocker, engineAddress, engineMessage, engineStatus, unreachableDetail, type DockerConnection } from './docker-engine';
import { DockerProcess } from './docker-process';
import { unenforcedLimits, type EngineInfo } from './engine-limits';

export interface DockerDriverOptions extends DockerSpecOptions {
  /** A client, or how to reach the engine; when absent, DOCKER_HOST's engine or the default socket. */
  docker?: DockerConnection;
}

/**
 * Runs each command in a fresh container of one image, never pulled here: the operator pulls
 * it (the probe says so), so an exec never waits on a registry or runs an image nobody chose.
 * An exec that asks for a stdin (an MCP stdio server) gets the container's, on the attach stream.
 */
export class DockerDriver implements SandboxDriver {
  readonly name = 'docker' as const;
  private readonly docker: Dockerode;
  private readonly spec: DockerSpecOptions;

  constructor(options: DockerDriverOptions) {
    assertSandboxUser(options.user ?? DEFAULT_DOCKER_USER);
    this.docker = connectDocker(options.docker);
    this.spec = { image: options.image, user: options.user, cpus: options.cpus };
  }

  async probe(): Promise<DriverProbe> {
    const address = await engineAddress(this.docker);
    const unavailable = (detail: string): DriverProbe => ({ available: false, detail, unenforced: [] });
    let version: Dockerode.DockerVersion;
    let info: EngineInfo;
    try {
      await this.docker.ping();
      version = await this.docker.version();
      info = (await this.docker.info()) as EngineInfo;
    } catch (error) {
      return unavailable(unreachableDetail(address, error) ?? `the Docker engine at ${address} answered: ${engineMessage(error)}`);
    }
    if (info.OSType !== undefined && info.OSType !== 'linux') return unavailable(`the Docker engine at ${address} runs ${info.OSType} containers; the sandbox needs Linux ones`);
    try {
      await this.docker.getImage(this.spec.image).inspect();
    } catch (error) {
      if (engineStatus(error) === 404) return unavailable(this.missingImage(address));
      return unavailable(`the Docker engine at ${address} could not inspect the image ${this.spec.image}: ${engineMessage(error)}`);
    }
    return { available: true, detail: `Docker ${version.Version} (API ${version.ApiVersion}) at ${address}, image ${this.spec.image}`, unenforced: unenforcedLimits(info) };
  }

  async start(exec: PreparedExec): Promise<DriverProcess> {
    const container = await this.create(exec);
    let output: ContainerOutput | undefined;
    let stdin: ContainerStdin | null = null;
    try {
      // Attached before the start: the engine keeps no output for a client that comes late.
      const attached = await this.attach(container, exec.stdin === true);
      output = new ContainerOutput(this.docker.modem, attached);
      if (exec.stdin) stdin = new ContainerStdin(attached);
      await container.start();
    } catch (error) {
      output?.close();
      await container.remove({ force: true }).catch(() => undefined);
      throw new DriverStartError(`the Docker engine could not start the container: ${engineMessage(error)}`, { cause: error });
    }
    return new DockerProcess(container, output, stdin);
  }

  /**
   * The output (and stdin, when asked) on one connection hijacked from HTTP. Dialled here rather
   * than through `container.attach`, which also sends its options as a JSON body: the engine
   * hands bytes sent after the request's headers to the container's stdin, body included.
   */
  private attach(container: Dockerode.Container, stdin: boolean): Promise<Duplex> {
    const modem = this.docker.modem;
    const headers = (modem as unknown as { headers?: OutgoingHttpHeaders }).headers ?? {};
    return new Promise((resolve, reject) => {
      modem.dial(
        {
          path: `/containers/${container.id}/attach?`,
          method: 'POST',
          options: { stream: true, ...(stdin ? { stdin: true } : {}), stdout: true, stderr: true },
          // An empty body that still sends the headers at once: with a stdin the request is never ended.
          file: Buffer.alloc(0),
          headers: { ...headers, 'Content-Type': 'text/plain' },
          isStream: true,
          hijack: true,
          openStdin: stdin,
          statusCodes: { 200: true, 404: 'no such container', 500: 'server error' },
        },
        (error, stream) => (error ? reject(error) : resolve(stream as Duplex)),
      );
    });
  }

  private async create(exec: PreparedExec): Promise<Dockerode.Container> {
    let spec: Dockerode.ContainerCreateOptions;
    try {
      spec = dockerContainerSpec(exec, this.spec);
    } catch (error) {
      throw new DriverStartError(`the exec cannot be run in Docker: ${engineMessage(error)}`, { cause: error });
    }
    try {
      // dockerode copies every option into the query string too unless told apart; an exec's
      // environment can be far larger than the engine accepts in a URL.
      return await this.docker.createContainer({ _query: {}, _body: spec } as unknown as Dockerode.ContainerCreateOptions);
    } catch (error) {
      const address = await engineAddress(this.docker);
      if (engineStatus(error) === 404) throw new DriverStartError(this.missingImage(address), { cause: error });
      const detail = unreachableDetail(address, error) ?? `the Docker engine at ${address} refused to create the container: ${engineMessage(error)}`;
      throw new DriverStartError(detail, { cause: error });
    }
  }

  private missingImage(address: string): string {
    return `the image ${this.spec.image} is not on the Docker engine at ${address}: run \`docker pull ${this.spec.image}\` there (the sandbox never pulls on its own)`;
  }
}
