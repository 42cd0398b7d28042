import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ApiClient } from './api-client';
import { deploy } from './commands/deploy';
import { approveAttention, listAttention, rejectAttention } from './commands/attention';
import { getDelivery, listDeliveries, redriveDelivery } from './commands/notifications';
import { deleteCredential, listCredentials, setCredential } from './commands/credential';
import { controlRun, getRun, listRuns, runLogs, startRun } from './commands/run';
import { applyWorker } from './commands/worker-apply';
import { draftWorker, instantiateTemplate, listTemplates, showTemplate } from './commands/templates';
import { registerMigrationCommands } from './commands/migrate';
import { registerAuditCommands } from './commands/audit';
import { registerQuarantineCommands } from './commands/quarantine';
import { registerSandboxCommands } from './commands/sandbox';
import { registerComputerCommands } from './commands/computer';
import { registerMcpCommands } from './commands/mcp-tools';
import { registerMcpConnectCommands } from './commands/mcp-connect';
import { getPayload } from './commands/payload';
import { registerAdeCommands } from './commands/ade-package';
import { actorTokenOf, AdeDoor, type AdeDoorContext } from './commands/ade-door-client';
import { registerAdeDoorCommands } from './commands/ade-door';
import type { StopSignal } from './commands/ade-watch';
import type { ReplayOptions } from './commands/replay';
import type { CommandContext } from './context';
import { CliError, ExitCode, renderError, UsageError } from './errors';

export const DEFAULT_API_URL = 'http://127.0.0.1:8484';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Relative file paths are read from here. */
  cwd: string;
  readStdin(): Promise<string>;
  /** Asks a yes/no question on the terminal; absent when standard input is not a terminal (there is nobody to ask). */
  confirm?(question: string): Promise<boolean>;
  /** What `--version` prints; without it the CLI has no `--version`. */
  version?: string;
  /** Calls `handler` on Ctrl-C or SIGTERM until the returned function is called, for commands that follow a stream. */
  onSignal?(handler: (signal: StopSignal) => void): () => void;
}

interface GlobalOptions {
  apiUrl?: string;
  apiKey?: string;
  workspace?: string;
  json?: boolean;
  /** The actor token, on the PacketADE door's commands. */
  token?: string;
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(number) || number < 1) throw new InvalidArgumentError('must be a positive integer.');
  return number;
}

/** Flags win over the environment; an empty variable counts as unset. */
function contextFor(command: Command, io: CliIo): CommandContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const apiKey = options.apiKey || io.env['PACKETAGENT_API_KEY'];
  if (!apiKey) throw new UsageError('no API key: pass --api-key or set PACKETAGENT_API_KEY');
  const workspace = options.workspace || io.env['PACKETAGENT_WORKSPACE'];
  if (!workspace) throw new UsageError('no workspace: pass --workspace or set PACKETAGENT_WORKSPACE');
  const client = new ApiClient({ apiUrl: apiUrlOf(options, io), apiKey, workspace });
  return {
    client,
    documents: { cwd: io.cwd, readStdin: io.readStdin },
    report: (lines, machine) => io.stdout(options.json ? `${JSON.stringify(machine, null, 2)}\n` : `${lines.join('\n')}\n`),
  };
}

function apiUrlOf(options: GlobalOptions, io: CliIo): string {
  return options.apiUrl || io.env['PACKETAGENT_API_URL'] || DEFAULT_API_URL;
}

/** The PacketADE door takes an actor token instead of the API key, and no workspace: the token names it. */
function adeDoorFor(command: Command, io: CliIo): AdeDoorContext {
  const options = command.optsWithGlobals<GlobalOptions>();
  const door = new AdeDoor({ apiUrl: apiUrlOf(options, io), token: actorTokenOf(options.token, io.env) });
  return {
    door,
    documents: { cwd: io.cwd, readStdin: io.readStdin },
    report: (lines, machine) => io.stdout(options.json ? `${JSON.stringify(machine, null, 2)}\n` : `${lines.join('\n')}\n`),
  };
}

function buildProgram(io: CliIo): Command {
  const program = new Command('packetagent')
    .description('Command line for a PacketAgent server.')
    .option('--api-url <url>', `API base URL (env PACKETAGENT_API_URL, default ${DEFAULT_API_URL})`)
    .option('--api-key <key>', 'API key (env PACKETAGENT_API_KEY; prefer the variable: flags show in process lists)')
    .option('--workspace <id>', 'workspace id, ws_ and 20 hex digits as the setup answered it (env PACKETAGENT_WORKSPACE)')
    .option('--json', 'print machine-readable JSON on stdout')
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) });
  if (io.version) program.version(io.version, '-V, --version', 'print the version of the CLI');

  const worker = program.command('worker').description('Worker definitions and versions.');
  worker
    .command('apply')
    .description('Create the worker named in a definition when absent, then add the file as its next version.')
    .requiredOption('-f, --file <path>', 'worker definition, YAML or JSON ("-" for standard input)')
    .action((options: { file: string }, command: Command) => applyWorker(contextFor(command, io), options.file));

  worker
    .command('draft')
    .description('Draft a definition from a description, for review: by the model (preset default unless --model), or without a model when none is ready, labelled so. Exit 1 when the draft is not valid.')
    .argument('<prompt>', 'what the worker should do, in plain words: its job, its schedule, what it reads and where it may post or send')
    .option('--model <spec>', 'preset:<default|fast|local> or <provider>:<model>, e.g. local:qwen3-8b')
    .option('-o, --output <file>', 'write the drafted YAML to this file instead of printing it')
    .action((prompt: string, options: { model?: string; output?: string }, command: Command) => draftWorker(contextFor(command, io), prompt, { ...options, cwd: io.cwd }));

  const template = program.command('template').description('Starter templates shipped with the server.');
  template
    .command('list')
    .description('The templates: id, category, schedule and what each does.')
    .action((_options: unknown, command: Command) => listTemplates(contextFor(command, io)));
  template
    .command('show')
    .description('A template\'s definition as shipped, and what this workspace lacks to run it.')
    .argument('<id>', 'template id, as template list prints it')
    .action((id: string, _options: unknown, command: Command) => showTemplate(contextFor(command, io), id));
  template
    .command('instantiate')
    .description('Make a new worker from a template (its first version); --demo makes the scripted demo that runs without a model key.')
    .argument('<id>', 'template id, as template list prints it')
    .requiredOption('--name <name>', 'the new worker\'s name (lower-case letters, digits and dashes)')
    .option('--demo', 'the scripted demo: the model replays the template\'s script, only credential-free grants, manual start')
    .option('--overrides <file>', 'fields of the definition to replace whole, YAML or JSON')
    .action((id: string, options: { name: string; demo?: boolean; overrides?: string }, command: Command) => instantiateTemplate(contextFor(command, io), id, options));

  program
    .command('deploy')
    .description('Deploy a version of a worker; prints webhook URLs and their secrets, shown only once.')
    .argument('<worker>', 'worker name or id')
    .option('--version <n>', 'version to deploy (default: the latest)', positiveInteger)
    .option('--overrides <file>', 'deployment overrides, YAML or JSON: narrower tools, budgets, bounds, disabled triggers')
    .option('--accept-missing', 'deploy even though the version lacks credentials, providers, tools or computers here (refused otherwise, naming each)')
    .action((workerRef: string, options: { version?: number; overrides?: string; acceptMissing?: boolean }, command: Command) =>
      deploy(contextFor(command, io), workerRef, options),
    );

  const run = program.command('run').description('Runs.');
  run
    .command('start')
    .description('Start a run of a deployment by hand; prints the run id.')
    .argument('<deployment>', 'deployment id (a UUID), as deploy prints it')
    .option('--input <json>', 'run input as JSON, or @file for a JSON or YAML file')
    .option('--idempotency-key <key>', 'the same key again returns the same run')
    .action((deploymentId: string, options: { input?: string; idempotencyKey?: string }, command: Command) =>
      startRun(contextFor(command, io), deploymentId, options),
    );
  run
    .command('get')
    .description("Print a run's state and fields; once it has ended, why (for a rejection, who rejected it and their reason).")
    .argument('<run>', 'run id (a UUID), as run start prints it')
    .action((runId: string, _options: unknown, command: Command) => getRun(contextFor(command, io), runId));
  run
    .command('logs')
    .description(
      "Print a run's events in order, one line each: model turns, decisions, effects, results, checkpoints. A field stored by reference shows as [path: size sha256:DIGEST]; `payload get DIGEST` prints it.",
    )
    .argument('<run>', 'run id (a UUID), as run start prints it')
    .action((runId: string, _options: unknown, command: Command) => runLogs(contextFor(command, io), runId));
  run
    .command('list')
    .description('List runs, one per line: id, state, deployment, creation time.')
    .option('--deployment <id>', 'only the runs of this deployment')
    .option('--state <state>', 'only runs in this state, e.g. running or waiting')
    .option('--limit <n>', 'at most this many runs (default 50)', positiveInteger, 50)
    .action((options: { deployment?: string; state?: string; limit: number }, command: Command) => listRuns(contextFor(command, io), options));
  run
    .command('stop')
    .description('Stop a run: one not yet started is cancelled at once, a running one stops at its next step; one that has ended is refused (exit 1), as for pause and resume.')
    .argument('<run>', 'run id (a UUID), as run start prints it')
    .option('--reason <text>', 'recorded with the request')
    .action((runId: string, options: { reason?: string }, command: Command) => controlRun(contextFor(command, io), 'stop', runId, options));
  run
    .command('pause')
    .description('Pause a run between steps.')
    .argument('<run>', 'run id (a UUID), as run start prints it')
    .option('--reason <text>', 'recorded with the request')
    .action((runId: string, options: { reason?: string }, command: Command) => controlRun(contextFor(command, io), 'pause', runId, options));
  run
    .command('resume')
    .description('Resume a paused run.')
    .argument('<run>', 'run id (a UUID), as run start prints it')
    .action((runId: string, _options: unknown, command: Command) => controlRun(contextFor(command, io), 'resume', runId, {}));
  const deployment = program.command('deployment').description('Deployments.');
  registerMigrationCommands({ run, deployment }, { context: (command) => contextFor(command, io), positiveInteger });
  registerQuarantineCommands(run, { context: (command) => contextFor(command, io) });

  program
    .command('payload')
    .description('Content stored by reference: large model text, transcripts, tool arguments and results.')
    .command('get')
    .description('Print the content of a payload reference (text as is, other values as JSON), checked against its digest; --out writes the exact bytes.')
    .argument('<digest>', 'SHA-256 of the content, as `run logs` shows it')
    .option('--out <file>', 'write the stored bytes (canonical JSON) to this file')
    .action((digest: string, options: { out?: string }, command: Command) => getPayload(contextFor(command, io), digest, options));

  program
    .command('attention')
    .description('Approvals runs are waiting for.')
    .command('list')
    .description('List attention records, one per line.')
    .option('--state <state>', 'only records in this state: open, approved, rejected, expired or withdrawn')
    .option('--limit <n>', 'at most this many records (the API caps it at 500)', positiveInteger)
    .action((options: { state?: string; limit?: number }, command: Command) => listAttention(contextFor(command, io), options));

  program
    .command('approve')
    .description('Approve the call an attention record asks about: that exact call, or with --for-run identical calls in that run.')
    .argument('<attention>', 'attention id (a UUID), as attention list prints it')
    .option('--for-run', 'approve identical calls for the rest of the run, not just this one')
    .option('--edit <arguments>', 'approve the call with these arguments instead: inline JSON, or @path to a JSON or YAML file (@- for standard input)')
    .action((attentionId: string, options: { forRun?: boolean; edit?: string }, command: Command) => approveAttention(contextFor(command, io), attentionId, options));

  program
    .command('reject')
    .description('Reject the call an attention record asks about.')
    .argument('<attention>', 'attention id (a UUID), as attention list prints it')
    .requiredOption('--reason <text>', 'why; recorded and given to the run')
    .action((attentionId: string, options: { reason: string }, command: Command) => rejectAttention(contextFor(command, io), attentionId, options));

  const notifications = program.command('notifications').description('The notification outbox: what was sent through the routes of workers, what is retrying, what was dead-lettered.');
  notifications
    .command('list')
    .description('List deliveries, newest first, one per line.')
    .option('--state <state>', 'only deliveries in this state: pending, delivered or dead')
    .option('--run <id>', 'only the deliveries of this run')
    .option('--limit <n>', 'at most this many (the API caps it at 500)', positiveInteger)
    .option('--after <id>', 'the page after this delivery (as the last line of a page says)')
    .action((options: { state?: string; run?: string; limit?: number; after?: string }, command: Command) => listDeliveries(contextFor(command, io), options));
  notifications
    .command('get')
    .description('Show a delivery and each attempt: when, after how long, and what the receiver answered.')
    .argument('<delivery>', 'delivery id')
    .action((deliveryId: string, _options: unknown, command: Command) => getDelivery(contextFor(command, io), deliveryId));
  notifications
    .command('redrive')
    .description('Send a dead-lettered delivery again, under the same delivery id (recorded as notification.redriven).')
    .argument('<delivery>', 'delivery id')
    .action((deliveryId: string, _options: unknown, command: Command) => redriveDelivery(contextFor(command, io), deliveryId));

  const credential = program.command('credential').description('Workspace credentials; values go in and never come back out.');
  credential
    .command('set')
    .description('Store a new version of a credential, its value read from standard input (one trailing newline is dropped).')
    .argument('<name>', 'credential name: lower-case letters, digits and _')
    .action((name: string, _options: unknown, command: Command) => setCredential(contextFor(command, io), name));
  credential
    .command('list')
    .description('List credential names and versions, never values.')
    .action((_options: unknown, command: Command) => listCredentials(contextFor(command, io)));
  credential
    .command('delete')
    .description('Delete a credential.')
    .argument('<name>', 'credential name')
    .action((name: string, _options: unknown, command: Command) => deleteCredential(contextFor(command, io), name));

  program
    .command('replay')
    .description('Rebuild a projection from the event log beside the live one, then swap it in (connects to Postgres and NATS directly).')
    .requiredOption('--projection <name>', 'projection to rebuild (workers, versions, deployments, runs, run_timeline, attention, budget_usage) or all')
    .option('--database-url <url>', 'Postgres URL (env PACKETAGENT_DATABASE_URL)')
    .option('--nats-url <url>', 'NATS URL (env PACKETAGENT_NATS_URL); unreachable, the events table is read instead')
    .option('--bus-prefix <prefix>', 'bus prefix of the installation (env PACKETAGENT_BUS_PREFIX)')
    .option('--no-swap', 'build and catch up the rebuilt tables in schema projector_rebuild, leaving the live ones in place')
    .action(async (options: ReplayOptions, command: Command) => {
      const json = command.optsWithGlobals<GlobalOptions>().json;
      // Loaded on use: it brings the Postgres and NATS clients, which every other command would pay for at start.
      const { replayProjection } = require('./commands/replay') as typeof import('./commands/replay');
      const results = await replayProjection(options, { env: io.env, progress: (line) => (json ? io.stderr(`${line}\n`) : io.stdout(`${line}\n`)) });
      if (json) io.stdout(`${JSON.stringify(results, null, 2)}\n`);
    });

  registerAuditCommands(program, { context: (command) => contextFor(command, io), stdout: (text) => io.stdout(text), cwd: io.cwd });
  registerSandboxCommands(program, {
    context: (command) => contextFor(command, io),
    io: (command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      return { stdout: (text) => io.stdout(text), stderr: (text) => io.stderr(text), apiKey: options.apiKey || io.env['PACKETAGENT_API_KEY'] || '', json: options.json === true };
    },
    positiveInteger,
  });
  registerComputerCommands(program, {
    context: (command) => contextFor(command, io),
    io: () => ({ ...(io.confirm ? { confirm: (question: string) => io.confirm!(question) } : {}), now: () => Date.now() }),
    positiveInteger,
  });
  const mcp = registerMcpCommands(program, { context: (command) => contextFor(command, io), positiveInteger });
  registerMcpConnectCommands(mcp, {
    context: (command) => contextFor(command, io),
    io: (command) => ({
      stdout: (text) => io.stdout(text),
      stderr: (text) => io.stderr(text),
      json: command.optsWithGlobals<GlobalOptions>().json === true,
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    }),
    positiveInteger,
  });
  const ade = registerAdeCommands(program, {
    io: (command) => ({
      documents: { cwd: io.cwd, readStdin: io.readStdin },
      stdout: (text) => io.stdout(text),
      json: command.optsWithGlobals<GlobalOptions>().json === true,
      now: () => new Date(),
      builtBy: 'packetagent-cli',
    }),
  });
  registerAdeDoorCommands(ade, {
    door: (command) => adeDoorFor(command, io),
    watchIo: (command) => ({
      stdout: (text) => io.stdout(text),
      stderr: (text) => io.stderr(text),
      json: command.optsWithGlobals<GlobalOptions>().json === true,
      ...(io.onSignal ? { onSignal: (handler: (signal: StopSignal) => void) => io.onSignal!(handler) } : {}),
    }),
    admin: (command) => contextFor(command, io),
    now: () => Date.now(),
    positiveInteger,
  });

  return program;
}

/** Runs one command line and returns the process exit code (see ExitCode). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await buildProgram(io).parseAsync([...argv], { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    // Commander has already printed its own message (or the help).
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.failure;
    if (error instanceof CliError) {
      io.stderr(renderError(error));
      return error.exitCode;
    }
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.failure;
  }
}
