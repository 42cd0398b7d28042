import { randomBytes } from 'node:crypto';
import type { ContainerCreateOptions } from 'dockerode';
import { splitBytes, streamFrame } from './stream-frames';

/** A piece of output the container writes; `splitAt` cuts its frame (header included) into writes the client reads apart. */
export interface ScriptedChunk {
  stream: 'stdout' | 'stderr';
  data: string | Buffer;
  splitAt?: number[];
}

/** What a started container does: write its output in order, then exit (or run until killed). */
export interface ScriptedRun {
  output?: ScriptedChunk[];
  /** Exit status once the output is written (0 when absent), or run until a kill or a forced remove. */
  exit?: number | 'until-killed';
  /** The kernel OOM-killed a process of the container: inspect shows State.OOMKilled. */
  oomKilled?: boolean;
  /** The engine refuses the start with this message (a 400, as for a program not found without an init). */
  startError?: string;
}

export type ContainerScript = (create: ContainerCreateOptions) => ScriptedRun;

/** Where an attached client reads from: only the streams it asked for. */
export interface AttachSink {
  streams: ReadonlySet<'stdout' | 'stderr'>;
  write(bytes: Buffer): Promise<void>;
  end(): void;
}

type ContainerStatus = 'created' | 'running' | 'exited';

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGUSR1: 10, SIGUSR2: 12, SIGTERM: 15 };

/** One container of the peer engine, with the states and ordering of the real one. */
export class PeerContainer {
  readonly id = randomBytes(32).toString('hex');
  readonly created = new Date().toISOString();
  private status: ContainerStatus = 'created';
  private exitCode = 0;
  private oomKilled = false;
  private startedAt = '0001-01-01T00:00:00Z';
  private finishedAt = '0001-01-01T00:00:00Z';
  private readonly sinks = new Set<AttachSink>();
  private readonly exitWaiters: Array<(statusCode: number) => void> = [];

  constructor(
    readonly create: ContainerCreateOptions,
    private readonly script: ContainerScript,
  ) {}

  get running(): boolean {
    return this.status === 'running';
  }

  /** Output written before a client attaches is lost, as with the real engine and no log driver. */
  attach(sink: AttachSink): void {
    if (this.status === 'exited') return sink.end();
    this.sinks.add(sink);
  }

  detach(sink: AttachSink): void {
    this.sinks.delete(sink);
  }

  /** Starts the scripted run; answers the engine's refusal instead when the script says so. */
  start(): string | null {
    const run = this.script(this.create);
    if (run.startError !== undefined) return run.startError;
    this.status = 'running';
    this.startedAt = new Date().toISOString();
    void this.run(run);
    return null;
  }

  /** Ends the container as the signal would; false when it is not running (the engine's 409). */
  kill(signal = 'SIGKILL'): boolean {
    if (!this.running) return false;
    this.exit(128 + (SIGNAL_NUMBERS[signal.toUpperCase()] ?? SIGNAL_NUMBERS['SIGKILL']!));
    return true;
  }

  /** `not-running` (the default) answers at once for a container that is not running; `next-exit` waits for the next exit. */
  waitFor(condition: string | undefined): Promise<number> {
    if (condition !== 'next-exit' && !this.running) return Promise.resolve(this.exitCode);
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  inspect(): Record<string, unknown> {
    return {
      Id: this.id,
      Created: this.created,
      Image: this.create.Image,
      Config: { ...this.create, HostConfig: undefined },
      HostConfig: this.create.HostConfig ?? {},
      State: {
        Status: this.status,
        Running: this.running,
        Paused: false,
        Restarting: false,
        OOMKilled: this.oomKilled,
        Dead: false,
        Pid: this.running ? 4242 : 0,
        ExitCode: this.exitCode,
        Error: '',
        StartedAt: this.startedAt,
        FinishedAt: this.finishedAt,
      },
    };
  }

  private async run(run: ScriptedRun): Promise<void> {
    for (const chunk of run.output ?? []) {
      if (!this.running) return;
      await this.write(chunk);
    }
    if (!this.running || run.exit === 'until-killed') return;
    this.oomKilled = run.oomKilled ?? false;
    this.exit(run.exit ?? 0);
  }

  private async write(chunk: ScriptedChunk): Promise<void> {
    const frame = streamFrame(chunk.stream, Buffer.from(chunk.data));
    const parts = splitBytes(frame, chunk.splitAt ?? []);
    for (const [index, part] of parts.entries()) {
      if (index > 0) await clientHadATurn();
      await Promise.all([...this.sinks].filter((sink) => sink.streams.has(chunk.stream)).map((sink) => sink.write(part)));
    }
  }

  private exit(statusCode: number): void {
    this.status = 'exited';
    this.exitCode = statusCode;
    this.finishedAt = new Date().toISOString();
    for (const sink of this.sinks) sink.end();
    this.sinks.clear();
    for (const answer of this.exitWaiters.splice(0)) answer(statusCode);
  }
}

/**
 * Two turns of the event loop: the poll phase in between reads what was written, so the client
 * sees the parts of a split frame as separate chunks rather than one.
 */
async function clientHadATurn(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}
