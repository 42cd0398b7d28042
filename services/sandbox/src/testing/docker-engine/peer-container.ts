import { randomBytes } from 'node:crypto';
import type { ContainerCreateOptions } from 'dockerode';
import { splitBytes, streamFrame } from './stream-frames';

/** A piece of output the container writes; `splitAt` cuts its frame (header included) into writes the client reads apart. */
export interface ScriptedChunk {
  stream: 'stdout' | 'stderr';
  data: string | Buffer;
  splitAt?: number[];
}

/**
 * What a started container does: write its output in order, then exit (or run until killed, or
 * read its stdin to the end). Its stdin is what attached clients wrote, only for a container
 * created with OpenStdin; it ends at a client's EOF only with StdinOnce, as with the engine.
 */
export interface ScriptedRun {
  output?: ScriptedChunk[];
  /**
   * Exit status once the output is written (0 when absent), run until a kill or a forced remove,
   * or `{ atStdinEnd }`: read stdin until it ends, then exit with that status.
   */
  exit?: number | 'until-killed' | { atStdinEnd: number };
  /**
   * The output written for each chunk read from stdin (`cat` writes the chunk back); only while it
   * runs on, as with `until-killed` or `{ atStdinEnd }`: a numeric exit comes right after the output.
   */
  onStdin?: (bytes: Buffer) => ScriptedChunk[];
  /** The output written once stdin ended, before the exit. */
  onStdinEnd?: () => ScriptedChunk[];
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
  private run: ScriptedRun = {};
  /** What the process does, one step after the other: output, stdin chunks read, the exit. */
  private steps: Promise<void> = Promise.resolve();
  /** Written before the start: it waits in the stdin pipe until the process reads it. */
  private readonly unread: Buffer[] = [];
  private stdinState: 'open' | 'ending' | 'ended' = 'open';
  private readonly stdinRead: Buffer[] = [];

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
    this.run = run;
    this.step(async () => {
      for (const chunk of run.output ?? []) {
        if (!this.running) return;
        await this.write(chunk);
      }
    });
    if (run.exit !== 'until-killed' && typeof run.exit !== 'object') {
      this.step(() => {
        this.oomKilled = run.oomKilled ?? false;
        this.exit(typeof run.exit === 'number' ? run.exit : 0);
      });
    }
    for (const bytes of this.unread.splice(0)) this.read(bytes);
    if (this.stdinState === 'ending') this.readEnd();
    return null;
  }

  /**
   * Bytes an attached client wrote on its stdin. The engine connects that stdin only for a
   * container created with OpenStdin; otherwise, and once the container's stdin is closed or the
   * container exited, they go nowhere.
   */
  writeStdin(bytes: Buffer): void {
    if (this.create.OpenStdin !== true || this.stdinState !== 'open' || this.status === 'exited') return;
    if (this.status === 'created') this.unread.push(Buffer.from(bytes));
    else this.read(Buffer.from(bytes));
  }

  /** A client's EOF on its stdin: the engine closes the container's stdin then only with StdinOnce. */
  closeStdin(): void {
    if (this.create.OpenStdin !== true || this.create.StdinOnce !== true || this.stdinState !== 'open' || this.status === 'exited') return;
    this.stdinState = 'ending';
    if (this.running) this.readEnd();
  }

  /** What the process was given on its stdin so far (once started, and only while it ran). */
  stdinReceived(): Buffer {
    return Buffer.concat(this.stdinRead);
  }

  /** Whether the process saw its stdin end. */
  get stdinEnded(): boolean {
    return this.stdinState === 'ended';
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

  private step(action: () => void | Promise<void>): void {
    this.steps = this.steps.then(async () => {
      if (this.running) await action();
    });
  }

  private read(bytes: Buffer): void {
    this.stdinRead.push(bytes);
    this.step(async () => {
      for (const chunk of this.run.onStdin?.(bytes) ?? []) {
        if (!this.running) return;
        await this.write(chunk);
      }
    });
  }

  private readEnd(): void {
    this.stdinState = 'ended';
    this.step(async () => {
      for (const chunk of this.run.onStdinEnd?.() ?? []) {
        if (!this.running) return;
        await this.write(chunk);
      }
      const { exit } = this.run;
      if (typeof exit === 'object' && this.running) {
        this.oomKilled = this.run.oomKilled ?? false;
        this.exit(exit.atStdinEnd);
      }
    });
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
