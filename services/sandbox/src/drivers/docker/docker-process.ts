import type { Readable, Writable } from 'node:stream';
import type { ExecLimitName } from '@packetagent/contracts';
import type Dockerode from 'dockerode';
import type { DriverExit, DriverProcess } from '../sandbox-driver';
import type { ContainerOutput } from './container-output';
import { dockerExit } from './docker-exit';
import { engineStatus } from './docker-engine';

/** How long the attach stream may stay open after the container exited before it is cut. */
const OUTPUT_DRAIN_GRACE_MS = 5_000;

interface WaitAnswer {
  StatusCode: number;
}

/** A started container: its stdin when it has one, its output, its end, and the kill that also removes it. */
export class DockerProcess implements DriverProcess {
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exited: Promise<DriverExit>;
  private removal: Promise<void> | undefined;
  private killRequested = false;

  /** Call once the container is started: the wait is asked for here, before anyone can kill it. */
  constructor(
    private readonly container: Dockerode.Container,
    private readonly output: ContainerOutput,
    stdin: Writable | null = null,
  ) {
    this.stdin = stdin;
    this.stdout = output.stdout;
    this.stderr = output.stderr;
    this.exited = this.follow(container.wait() as Promise<WaitAnswer>);
  }

  async kill(): Promise<void> {
    this.killRequested = true;
    await tolerating(this.container.kill({ signal: 'SIGKILL' }), [404, 409]);
    await this.remove();
  }

  /**
   * Never called: the calls this driver makes learn of limits only at the end. Memory comes as
   * State.OOMKilled (set for an OOM kill of any process of the container, a child's included),
   * CPU time and file size as the SIGXCPU and SIGXFSZ exit statuses, and a pids limit hit (fork
   * failing with EAGAIN) is never reported at all. The engine's event stream does announce `oom`
   * as it happens; following it would let the runner end a command whose child was OOM-killed.
   */
  onLimit(_listener: (limit: ExecLimitName) => void): void {
    return;
  }

  private async follow(answer: Promise<WaitAnswer>): Promise<DriverExit> {
    try {
      const statusCode = await this.statusCode(answer);
      const oomKilled = await this.oomKilled();
      await settledWithin(this.output.closed, OUTPUT_DRAIN_GRACE_MS);
      await this.remove();
      return dockerExit(statusCode, oomKilled);
    } catch (error) {
      await this.remove().catch(() => undefined);
      throw error;
    } finally {
      this.output.close();
      // Closed by the time the end is known: a caller learns at once that nothing more gets through.
      this.stdin?.destroy();
    }
  }

  private async statusCode(answer: Promise<WaitAnswer>): Promise<number> {
    try {
      return (await answer).StatusCode;
    } catch (error) {
      // A kill's forced remove can beat the wait to the engine; it then no longer knows the container.
      if (this.killRequested && engineStatus(error) === 404) return 128 + 9;
      throw error;
    }
  }

  private async oomKilled(): Promise<boolean> {
    try {
      const info = await this.container.inspect();
      return info.State.OOMKilled === true;
    } catch (error) {
      if (engineStatus(error) === 404) return false;
      throw error;
    }
  }

  private remove(): Promise<void> {
    this.removal ??= tolerating(this.container.remove({ force: true }), [404, 409]);
    return this.removal;
  }
}

/** 404: already gone; 409: not running, or its removal already under way. */
async function tolerating(request: Promise<unknown>, statuses: number[]): Promise<void> {
  try {
    await request;
  } catch (error) {
    const status = engineStatus(error);
    if (status === undefined || !statuses.includes(status)) throw error;
  }
}

async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
