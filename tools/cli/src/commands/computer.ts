import { Option, type Command } from 'commander';
import { z } from 'zod';
import { ACCESS_LEVELS, APPROVAL_MODES, ComputerErrorCodes } from '@packetagent/contracts';
import type { CommandContext } from '../context';
import { ApiError, CliError, ExitCode, UsageError } from '../errors';
import { ComputerStatusSchema, describeStatus, hostKeyWarning } from './computer-status';

const ComputerSchema = z.looseObject({
  name: z.string(),
  kind: z.string(),
  description: z.string(),
  ssh: z.looseObject({ host: z.string(), port: z.number(), user: z.string(), hostKeys: z.array(z.string()), keyCredential: z.string() }).nullable(),
  roots: z.array(z.string()),
  policy: z.record(z.string(), z.string()),
  capabilities: z.looseObject({ os: z.string(), arch: z.string(), cpus: z.number(), tools: z.array(z.string()) }).nullable(),
  version: z.number(),
  status: ComputerStatusSchema,
});
type Computer = z.infer<typeof ComputerSchema>;
const ComputerListSchema = z.looseObject({ items: z.array(ComputerSchema) });

const FINGERPRINT = /SHA256:[A-Za-z0-9+/]{43}(?![A-Za-z0-9+/])/;
const POLICY_AXES = ['network', 'write', 'shell', 'secrets', 'approval'] as const;

export interface RegisterOptions {
  local?: boolean;
  host?: string;
  port?: number;
  user?: string;
  keyCredential?: string;
  root: string[];
  hostKey: string[];
  acceptHostKey?: string;
  network?: string;
  write?: string;
  shell?: string;
  secrets?: string;
  approval?: string;
  description?: string;
}

export interface ComputerIo {
  /** Asks on the terminal; absent when standard input is not one. */
  confirm?(question: string): Promise<boolean>;
  now(): number;
}

function target(computer: Computer): string {
  return computer.ssh ? `${computer.ssh.user}@${computer.ssh.host}:${computer.ssh.port}` : 'local';
}

/** The fingerprint a refusal presents: `presentedHostKey`, else the one its issue or detail names. */
function presentedKeyOf(error: ApiError): string | null {
  const field = error.problem?.['presentedHostKey'];
  if (typeof field === 'string' && FINGERPRINT.test(field)) return field;
  for (const text of [...error.issues.map((issue) => issue.message), error.message]) {
    const found = FINGERPRINT.exec(text);
    if (found) return found[0];
  }
  return null;
}

function verifyAdvice(host: string, port: number): string[] {
  return [
    'Verify it is the key of the host before trusting it, on the host itself:',
    '  ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub',
    'or, less strongly, from here (this trusts the network in between):',
    `  ssh-keyscan${port === 22 ? '' : ` -p ${port}`} ${host} | ssh-keygen -lf -`,
  ];
}

/** Registration refused for the host key: say which key, how to check it, and what to run next. */
function hostKeyRefusal(error: ApiError, options: RegisterOptions): CliError {
  const host = options.host ?? 'the host';
  const port = options.port ?? 22;
  const presented = presentedKeyOf(error);
  if (error.code === ComputerErrorCodes.hostKeyUnpinned) {
    const lines = [
      `${host} presented a host key that is not pinned; nothing was registered.`,
      `  presented: ${presented ?? '(the server did not name it)'}`,
      ...verifyAdvice(host, port),
      presented ? `If the fingerprints match, run the same command again with --accept-host-key ${presented}` : 'Then run the same command again with --accept-host-key <fingerprint>',
    ];
    return new CliError(lines.join('\n'), ExitCode.failure);
  }
  const lines = [
    `HOST KEY CHANGED: ${host} presents ${presented ?? 'a key'}, not the key you confirmed; nothing was registered.`,
    'Someone may be between you and the host, or its key was replaced.',
    ...verifyAdvice(host, port),
    presented ? `Only if it is the host's own key, run the command again with --accept-host-key ${presented}` : 'Only if it is the host\'s own key, run the command again with --accept-host-key <fingerprint>',
  ];
  return new CliError(lines.join('\n'), ExitCode.failure);
}

/** The PUT body of `computer register`: the spec, with only the policy axes given (the server fills in the rest conservatively). */
export function registrationBody(options: RegisterOptions): Record<string, unknown> {
  const policy = Object.fromEntries(POLICY_AXES.filter((axis) => options[axis] !== undefined).map((axis) => [axis, options[axis]]));
  const common = { ...(options.description !== undefined ? { description: options.description } : {}), ...(Object.keys(policy).length ? { policy } : {}) };
  if (options.local) {
    const remote = [options.host && '--host', options.port !== undefined && '--port', options.user && '--user', options.keyCredential && '--key-credential', options.root.length && '--root', options.hostKey.length && '--host-key', options.acceptHostKey && '--accept-host-key'].filter(Boolean);
    if (remote.length) throw new UsageError(`a --local computer runs commands in the sandbox on the server: it takes no ${remote.join(', ')}`);
    return { kind: 'local', ...common };
  }
  const missing = [!options.host && '--host', !options.user && '--user', !options.keyCredential && '--key-credential', options.root.length === 0 && '--root'].filter(Boolean);
  if (missing.length) throw new UsageError(`an ssh computer needs ${missing.join(', ')} (or --local for the sandbox on the server)`);
  return {
    kind: 'ssh',
    ...common,
    ssh: { host: options.host, ...(options.port !== undefined ? { port: options.port } : {}), user: options.user, keyCredential: options.keyCredential, ...(options.hostKey.length ? { hostKeys: options.hostKey } : {}) },
    roots: options.root,
    ...(options.acceptHostKey ? { acceptHostKey: options.acceptHostKey } : {}),
  };
}

function statusLines(computer: Computer, nowMs: number): string[] {
  const warning = hostKeyWarning(computer.status);
  return [...(warning ? [`!! ${warning}`] : []), `status: ${describeStatus(computer.status, nowMs)}`];
}

function detailLines(computer: Computer, nowMs: number): string[] {
  const lines = [`computer ${computer.name} (${computer.kind}) version ${computer.version}${computer.description ? `: ${computer.description}` : ''}`, ...statusLines(computer, nowMs)];
  if (computer.status.detail) lines.push(`last probe: ${computer.status.detail}`);
  if (computer.ssh) {
    lines.push(`target: ${target(computer)}, key credential ${computer.ssh.keyCredential}`);
    lines.push(`pinned host keys: ${computer.ssh.hostKeys.length ? computer.ssh.hostKeys.join(', ') : 'none'}`);
  } else {
    lines.push('target: local (the sandbox on the server)');
  }
  if (computer.roots.length) lines.push(`roots: ${computer.roots.join(', ')}`);
  lines.push(`policy: ${POLICY_AXES.map((axis) => `${axis} ${computer.policy[axis] ?? '?'}`).join(', ')}`);
  const capabilities = computer.capabilities;
  lines.push(capabilities ? `capabilities: ${capabilities.os} ${capabilities.arch}, ${capabilities.cpus} cpus, tools: ${capabilities.tools.join(' ') || 'none found'}` : 'capabilities: not probed yet');
  return lines;
}

/** `packetagent computer register NAME ...`: registers or replaces a computer; an unpinned host key is refused with the key to verify. */
export async function registerComputer(context: CommandContext, io: ComputerIo, name: string, options: RegisterOptions): Promise<void> {
  const { client } = context;
  const body = registrationBody(options);
  let computer: Computer;
  try {
    computer = await client.put(client.workspacePath('computers', name), { json: body }, ComputerSchema);
  } catch (error) {
    if (error instanceof ApiError && (error.code === ComputerErrorCodes.hostKeyUnpinned || error.code === ComputerErrorCodes.hostKeyChanged)) throw hostKeyRefusal(error, options);
    throw error;
  }
  context.report([`registered ${computer.name} (${target(computer)}) version ${computer.version}`, ...detailLines(computer, io.now()).slice(1)], computer);
}

/** `packetagent computer list`: one line each: name, kind, target, state and how fresh it is, a changed host key. */
export async function listComputers(context: CommandContext, io: ComputerIo): Promise<void> {
  const { client } = context;
  const page = await client.get(client.workspacePath('computers'), ComputerListSchema);
  const nowMs = io.now();
  const lines = page.items.map((computer) => {
    const warning = computer.status.hostKey.state === 'changed' ? '  !! HOST KEY CHANGED' : '';
    return `${computer.name}  ${computer.kind}  ${target(computer)}  ${describeStatus(computer.status, nowMs)}${warning}`;
  });
  context.report(lines.length ? lines : ['no computers'], page);
}

/** `packetagent computer status NAME`: everything about one computer, its state and when it was last observed first. */
export async function computerStatus(context: CommandContext, io: ComputerIo, name: string): Promise<void> {
  const { client } = context;
  const computer = await client.get(client.workspacePath('computers', name), ComputerSchema);
  context.report(detailLines(computer, io.now()), computer);
}

/** `packetagent computer probe NAME`: connects now and prints the status that follows. */
export async function probeComputer(context: CommandContext, io: ComputerIo, name: string): Promise<void> {
  const { client } = context;
  const computer = await client.post(client.workspacePath('computers', name, 'probe'), { json: {} }, ComputerSchema);
  const lines = [`probed ${computer.name} (${target(computer)})`, ...statusLines(computer, io.now())];
  if (computer.status.detail) lines.push(`last probe: ${computer.status.detail}`);
  context.report(lines, computer);
}

/** `packetagent computer remove NAME --yes`: without --yes it asks on a terminal, and refuses when there is none to ask on. */
export async function removeComputer(context: CommandContext, io: ComputerIo, name: string, options: { yes?: boolean }): Promise<void> {
  const { client } = context;
  if (!options.yes) {
    if (!io.confirm) throw new UsageError(`removing computer ${name} needs --yes when standard input is not a terminal`);
    if (!(await io.confirm(`Remove computer ${name}? Commands can no longer run on it. [y/N] `))) throw new CliError(`computer ${name} was not removed`, ExitCode.failure);
  }
  await client.delete(client.workspacePath('computers', name));
  context.report([`removed computer ${name}`], { name, removed: true });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `computer register|list|status|probe|remove`: register, probe and remove need computer-manage (admin and owner). */
export function registerComputerCommands(program: Command, deps: { context(command: Command): CommandContext; io(command: Command): ComputerIo; positiveInteger(value: string): number }): void {
  const computer = program.command('computer').description('Computers a worker\'s run_command runs on: over SSH with pinned host keys, or the local sandbox.');
  computer
    .command('register')
    .description(
      'Register a computer, or replace its spec. An ssh computer whose host key is not pinned is refused with the key it presented: verify it, then run again with --accept-host-key. ' +
        'Registering an existing name replaces its whole spec: give its pinned keys again with --host-key (computer status lists them). ' +
        'Policy axes left out are the conservative ones (ask; secrets deny; approval explicit).',
    )
    .argument('<name>', 'lower-case letters, digits and -, starting with a letter')
    .option('--local', 'the sandbox on the server itself (takes no host, user, key or roots)')
    .option('--host <host>', 'host name or IP address')
    .option('--port <port>', 'SSH port (default 22)', deps.positiveInteger)
    .option('--user <user>', 'user to connect as')
    .option('--key-credential <name>', 'workspace credential holding the private key (OpenSSH or PEM)')
    .option('--root <dir>', 'absolute directory commands may work in (repeatable)', collect, [])
    .option('--host-key <fingerprint>', 'a host key to pin, SHA256:... as ssh-keygen -lf prints it (repeatable)', collect, [])
    .option('--accept-host-key <fingerprint>', 'pin the key the host presented, once verified (from a refused register)')
    .addOption(new Option('--network <level>', 'commands reaching the network (default ask)').choices(ACCESS_LEVELS))
    .addOption(new Option('--write <level>', 'commands writing files (default ask)').choices(ACCESS_LEVELS))
    .addOption(new Option('--shell <level>', 'running commands (default ask)').choices(ACCESS_LEVELS))
    .addOption(new Option('--secrets <choice>', 'secrets handed to commands by name (default deny)').choices(['allow', 'deny']))
    .addOption(new Option('--approval <mode>', 'how what asks is approved (default explicit)').choices(APPROVAL_MODES))
    .option('--description <text>', 'what the computer is for')
    .action((name: string, options: RegisterOptions, command: Command) => registerComputer(deps.context(command), deps.io(command), name, options));
  computer
    .command('list')
    .description('List computers: name, kind, target, state and when it was last observed; a changed host key is flagged.')
    .action((_options: unknown, command: Command) => listComputers(deps.context(command), deps.io(command)));
  computer
    .command('status')
    .description("A computer's state and when it was last observed, its pinned host keys, roots, policy and capabilities.")
    .argument('<name>', 'computer name')
    .action((name: string, _options: unknown, command: Command) => computerStatus(deps.context(command), deps.io(command), name));
  computer
    .command('probe')
    .description('Probe a computer now (connect, verify its host key, read its capabilities) and print its status.')
    .argument('<name>', 'computer name')
    .action((name: string, _options: unknown, command: Command) => probeComputer(deps.context(command), deps.io(command), name));
  computer
    .command('remove')
    .description('Remove a computer; asks first on a terminal, and needs --yes otherwise.')
    .argument('<name>', 'computer name')
    .option('--yes', 'remove without asking')
    .action((name: string, options: { yes?: boolean }, command: Command) => removeComputer(deps.context(command), deps.io(command), name, options));
}
