import { createHash } from 'node:crypto';
import { constants } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { z } from 'zod';
import type { CommandContext } from '../context';
import { CliError, ConnectionError, ExitCode, type ExitCodeValue } from '../errors';

/** Exit code of a command a limit ended (wall time, CPU, memory, output, a cancel), as timeout(1) uses it. */
export const LIMIT_EXIT_CODE = 124;

const LIMITS = ['wallTimeMs', 'cpuSeconds', 'memoryBytes', 'pids', 'fileSizeBytes', 'openFiles', 'outputBytes', 'tmpBytes'] as const;

const StreamOutputSchema = z.looseObject({ preview: z.string(), bytes: z.number(), truncated: z.boolean(), digest: z.string() });
const ResultSchema = z.looseObject({
  execId: z.string(),
  state: z.enum(['exited', 'killed', 'failed']),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  limit: z.string().nullable(),
  message: z.string().nullable(),
  durationMs: z.number(),
  stdout: StreamOutputSchema,
  stderr: StreamOutputSchema,
});
type Result = z.infer<typeof ResultSchema>;
const AcceptedSchema = z.looseObject({ execId: z.string(), state: z.literal('running'), links: z.looseObject({ stream: z.string() }) });
/** 202 when it started, 200 with the result when it ended before it could start. */
const StartedSchema = z.union([AcceptedSchema, ResultSchema]);
const SummarySchema = z.looseObject({
  execId: z.string(),
  runId: z.string().nullable(),
  argv: z.array(z.string()),
  state: z.string(),
  exitCode: z.number().nullable(),
  limit: z.string().nullable(),
  startedAt: z.string(),
});
const ListSchema = z.looseObject({ items: z.array(SummarySchema) });
const LimitsSchema = z.record(z.string(), z.number());
const StatusSchema = z.looseObject({
  driver: z.string().nullable(),
  drivers: z.array(z.looseObject({ name: z.string(), available: z.boolean(), detail: z.string(), unenforced: z.array(z.string()) })),
  defaults: LimitsSchema,
  maximum: LimitsSchema,
  envAllowlist: z.array(z.string()),
});
const CancelSchema = z.looseObject({ found: z.boolean() });

/** A command's own exit code, passed on as the CLI's; the message goes to stderr like any error. */
export class CommandExitError extends CliError {
  constructor(message: string, code: number) {
    // Beyond ExitCode's values on purpose: the exit code of `sandbox exec` is the command's.
    super(message, code as ExitCodeValue);
  }
}

export interface SandboxExecOptions {
  cwd?: string;
  env: string[];
  timeoutSeconds?: number;
  run?: string;
  follow?: boolean;
}

export interface SandboxIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The API key the client was built with, for the streaming request it cannot make. */
  apiKey: string;
  json: boolean;
}

function environment(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new CliError(`--env ${JSON.stringify(pair)} is not NAME=VALUE`, ExitCode.failure);
    env[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return env;
}

/** The CLI's exit code for how the command ended: its own, 124 for a limit, 128+n for a signal. */
export function exitFor(result: Result): { code: number; message: string | null } {
  if (result.state === 'failed') return { code: ExitCode.failure, message: `the command did not start: ${result.message ?? 'no reason given'}` };
  if (result.limit) return { code: LIMIT_EXIT_CODE, message: `${result.limit} limit: ${result.message ?? 'the command was killed'}` };
  if (result.exitCode !== null) return { code: result.exitCode, message: result.exitCode === 0 ? null : `the command exited with code ${result.exitCode}` };
  const signal = result.signal ? (constants.signals as Record<string, number | undefined>)[result.signal] : undefined;
  return { code: 128 + (signal ?? 0), message: `the command was killed by ${result.signal ?? 'a signal'}` };
}

interface SseEvent {
  event: string;
  data: string;
}

/** Reads one text/event-stream response, event by event, until the server closes it. */
async function* sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) yield { event, data: data.join('\n') };
    }
  }
}

const RECONNECTS = 5;

/**
 * Follows the exec's stream until its `ended` event: the live text goes to `live` as it comes.
 * A stream cut short is opened again (live text in between is lost; the end never is).
 */
async function awaitEnd(context: CommandContext, io: SandboxIo, streamPath: string, live: ((stream: 'stdout' | 'stderr', text: string) => void) | null): Promise<Result> {
  const url = context.client.url(streamPath);
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization: `Bearer ${io.apiKey}`, accept: 'text/event-stream, application/problem+json' } });
    } catch (error) {
      if (attempt >= RECONNECTS) throw new ConnectionError(url, error instanceof Error ? error.message : String(error), { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 1_000 * (attempt + 1)));
      continue;
    }
    if (!response.ok || !response.body) {
      const text = await response.text();
      let detail = '';
      try {
        detail = String((JSON.parse(text) as { detail?: unknown }).detail ?? '');
      } catch {
        detail = text.slice(0, 200);
      }
      throw new CliError(`the exec's stream answered ${response.status}${detail ? `: ${detail}` : ''}`, response.status === 401 || response.status === 403 ? ExitCode.auth : ExitCode.failure);
    }
    try {
      for await (const message of sseEvents(response.body)) {
        const data = JSON.parse(message.data) as Record<string, unknown>;
        if (message.event === 'output' && live) live(data['stream'] === 'stderr' ? 'stderr' : 'stdout', String(data['text'] ?? ''));
        if (message.event === 'ended') return ResultSchema.parse(data['result']);
      }
    } catch (error) {
      if (error instanceof z.ZodError) throw new CliError("unexpected end event on the exec's stream", ExitCode.failure);
      // The connection broke: open the stream again below.
    }
    if (attempt >= RECONNECTS) throw new CliError("the exec's stream kept closing before the command ended; `packetagent sandbox list` shows how it ended", ExitCode.failure);
    if (live) io.stderr('[live output interrupted; following again]\n');
    await new Promise((resolve) => setTimeout(resolve, 1_000 * (attempt + 1)));
  }
}

/** The whole of one stream, checked against the digest its result states. */
async function wholeOutput(context: CommandContext, execId: string, stream: 'stdout' | 'stderr', expected: string): Promise<Buffer> {
  const bytes = await context.client.getBytes(`${context.client.workspacePath('sandbox', 'exec', execId, 'output')}?stream=${stream}`);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== expected) throw new CliError(`the ${stream} downloaded hashes to ${digest}, not ${expected} as its result states`, ExitCode.failure);
  return bytes;
}

/**
 * `packetagent sandbox exec [options] -- PROGRAM [ARGS...]`: runs the command in the sandbox and
 * exits with its exit code (124 when a limit ended it, naming the limit on stderr). With
 * `--follow` its output is printed live as it runs; otherwise the whole of it, verified, once it
 * has ended. With --json the result is printed instead.
 */
export async function execInSandbox(context: CommandContext, io: SandboxIo, argv: string[], options: SandboxExecOptions): Promise<void> {
  const { client } = context;
  const body = {
    argv,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.env.length > 0 ? { env: environment(options.env) } : {}),
    ...(options.timeoutSeconds !== undefined ? { limits: { wallTimeMs: options.timeoutSeconds * 1000 } } : {}),
    ...(options.run !== undefined ? { runId: options.run } : {}),
  };
  const answer = await client.post(client.workspacePath('sandbox', 'exec'), { json: body }, StartedSchema);
  const started = AcceptedSchema.safeParse(answer);
  let result: Result;
  if (started.success) {
    const live = options.follow && !io.json ? (stream: 'stdout' | 'stderr', text: string) => (stream === 'stdout' ? io.stdout(text) : io.stderr(text)) : null;
    if (live) io.stderr(`exec ${started.data.execId} started (packetagent sandbox cancel ${started.data.execId})\n`);
    result = await awaitEnd(context, io, started.data.links.stream, live);
    if (!live && !io.json) {
      const [stdout, stderr] = await Promise.all([wholeOutput(context, result.execId, 'stdout', result.stdout.digest), wholeOutput(context, result.execId, 'stderr', result.stderr.digest)]);
      io.stdout(stdout.toString('utf8'));
      io.stderr(stderr.toString('utf8'));
    }
  } else {
    result = ResultSchema.parse(answer);
  }
  if (io.json) io.stdout(`${JSON.stringify(result, null, 2)}\n`);
  const exit = exitFor(result);
  if (exit.code !== ExitCode.ok || exit.message) throw new CommandExitError(exit.message ?? `exit ${exit.code}`, exit.code);
}

function limitText(limits: Record<string, number>): string {
  return LIMITS.filter((name) => limits[name] !== undefined)
    .map((name) => `${name}=${limits[name]}`)
    .join(' ');
}

/** `packetagent sandbox status`: the driver commands run in, every driver found, and the limits. */
export async function sandboxStatus(context: CommandContext): Promise<void> {
  const { client } = context;
  const status = await client.get(client.workspacePath('sandbox', 'status'), StatusSchema);
  const lines = [`driver: ${status.driver ?? 'none: nothing can run (see below for what to install)'}`];
  for (const driver of status.drivers) {
    lines.push(`  ${driver.name}: ${driver.available ? 'available' : 'unavailable'}, ${driver.detail}`);
    for (const unenforced of driver.unenforced) lines.push(`    not enforced: ${unenforced}`);
  }
  lines.push(`defaults: ${limitText(status.defaults)}`, `maximum:  ${limitText(status.maximum)}`, `environment allowlist: ${status.envAllowlist.join(', ') || '(none)'}`);
  context.report(lines, status);
}

/** `packetagent sandbox list`: one line per exec, newest first. */
export async function listExecs(context: CommandContext, options: { run?: string; limit: number }): Promise<void> {
  const { client } = context;
  const page = await client.get(client.workspacePath('sandbox', 'exec'), ListSchema, { runId: options.run, limit: String(options.limit) });
  const ending = (exec: z.infer<typeof SummarySchema>) => (exec.limit ? `limit ${exec.limit}` : exec.exitCode !== null ? `exit ${exec.exitCode}` : '-');
  const lines = page.items.map((exec) => [exec.execId, exec.state, ending(exec), exec.startedAt, exec.argv.join(' ')].join('  '));
  context.report(lines.length ? lines : ['no execs'], page);
}

/** `packetagent sandbox cancel ID`: kills the exec's process tree; it ends killed with limit `cancelled`. */
export async function cancelExec(context: CommandContext, execId: string): Promise<void> {
  const { client } = context;
  const answer = await client.post(client.workspacePath('sandbox', 'exec', execId, 'cancel'), { json: {} }, CancelSchema);
  context.report([answer.found ? `cancelled ${execId}` : `${execId} is not running anywhere: it has ended, or never was`], answer);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seconds) || seconds < 1) throw new InvalidArgumentError('must be a positive whole number of seconds.');
  return seconds;
}

/** `sandbox exec|status|list|cancel`: exec and cancel need the sandbox-exec permission (admin and owner). */
export function registerSandboxCommands(
  program: Command,
  deps: { context(command: Command): CommandContext; io(command: Command): SandboxIo; positiveInteger(value: string): number },
): void {
  const sandbox = program.command('sandbox').description('Commands in the sandbox: no network, no shell, hard limits.');
  sandbox
    .command('exec')
    .description(
      'Run PROGRAM with ARGS in the sandbox (in a scratch workspace, or in a run\'s workspace with --run) and exit with its exit code: ' +
        '124 when a limit ended it (the limit is named on stderr), 128+n when signal n killed it. Everything after -- is the command, passed as is (no shell).',
    )
    .argument('<program>', 'a program on the sandbox PATH, e.g. node')
    .argument('[args...]', 'its arguments')
    .option('--cwd <dir>', 'directory relative to the workspace')
    .option('--env <NAME=VALUE>', "an environment variable from the sandbox's allowlist (repeatable)", collect, [])
    .option('--timeout-seconds <n>', 'wall time limit: the whole process tree is killed at it', positiveSeconds)
    .option('--run <run>', "run the command in this run's workspace")
    .option('--follow', 'print the output live as the command writes it (otherwise the whole output, verified, once it has ended)')
    .action((programName: string, args: string[], options: SandboxExecOptions, command: Command) => execInSandbox(deps.context(command), deps.io(command), [programName, ...args], options));
  sandbox
    .command('status')
    .description('The driver commands run in, the drivers found (and what to install when none is), the limits that apply and those not enforced here.')
    .action((_options: unknown, command: Command) => sandboxStatus(deps.context(command)));
  sandbox
    .command('list')
    .description('List execs, newest first: id, state, exit code or limit, start time, command.')
    .option('--run <run>', "only this run's run_command calls")
    .option('--limit <n>', 'at most this many (the API caps it at 200)', deps.positiveInteger, 50)
    .action((options: { run?: string; limit: number }, command: Command) => listExecs(deps.context(command), options));
  sandbox
    .command('cancel')
    .description("Kill an exec's process tree; it ends killed with limit cancelled.")
    .argument('<exec>', 'exec id, as sandbox exec or sandbox list prints it')
    .action((execId: string, _options: unknown, command: Command) => cancelExec(deps.context(command), execId));
}
