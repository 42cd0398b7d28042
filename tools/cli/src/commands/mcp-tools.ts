import type { Command } from 'commander';
import { z } from 'zod';
import type { CommandContext } from '../context';
import { CliError, ExitCode } from '../errors';
import { annotationText, mcpServerReports, StoredDefinitionSchema, type McpServerReport } from './mcp-pinned-tools';
import { findWorker } from './workers';

const VersionListSchema = z.looseObject({ items: z.array(z.looseObject({ version: z.number().int().positive() })) });
const VersionSchema = z.looseObject({ version: z.number().int().positive(), digest: z.string(), definition: StoredDefinitionSchema });

const DIGEST_PREFIX = 12;
export const PINNED_NOTE = 'tool lists are pinned to this version: a tool a server adds later is not callable until a new version is created';

function argText(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : JSON.stringify(arg);
}

function serverLine(server: McpServerReport): string {
  const target = server.transport === 'stdio' ? [server.command ?? '', ...server.args.map(argText)].join(' ') : (server.url ?? '');
  const facts = [`${server.transport} ${target}`, server.trusted ? 'trusted' : 'untrusted: its annotations do not loosen policy'];
  if (server.credential) facts.push(`credential ${server.credential}`);
  return `${server.name}: ${facts.join(', ')}`;
}

function toolLines(server: McpServerReport): string[] {
  if (server.tools.length === 0) return ['  (no tools: the server listed none when the version was created)'];
  const rows = server.tools.map((tool) => [tool.name, tool.digest.slice(0, DIGEST_PREFIX), annotationText(tool.annotations), tool.grant ? `granted by ${tool.grant}` : 'not granted', tool.policy.summary]);
  const widths = rows[0]!.map((_cell, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => `  ${row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}`);
}

async function resolveVersion(context: CommandContext, workerId: string, workerName: string, requested: number | undefined): Promise<number> {
  if (requested !== undefined) return requested;
  const { client } = context;
  const list = await client.get(client.workspacePath('workers', workerId, 'versions'), VersionListSchema);
  const latest = Math.max(0, ...list.items.map((item) => item.version));
  if (latest === 0) throw new CliError(`worker ${workerName} has no versions yet: \`packetagent worker apply -f FILE\` creates one`, ExitCode.failure);
  return latest;
}

/**
 * `packetagent mcp tools WORKER [--version N]`: the MCP servers of a version (the latest by
 * default), each pinned tool with its digest, annotations, the grant covering it and what policy
 * will assume of a call.
 */
export async function mcpTools(context: CommandContext, workerRef: string, options: { version?: number }): Promise<void> {
  const { client } = context;
  const worker = await findWorker(client, (candidate) => candidate.id === workerRef || candidate.name === workerRef);
  if (!worker) throw new CliError(`no worker named or identified "${workerRef}" in this workspace`, ExitCode.failure);
  const number = await resolveVersion(context, worker.id, worker.name, options.version);
  const version = await client.get(client.workspacePath('workers', worker.id, 'versions', number), VersionSchema);
  const servers = mcpServerReports(version.definition);

  const lines = [`worker ${worker.name} (${worker.id}) version ${version.version} digest sha256:${version.digest.replace(/^sha256:/, '')}`];
  if (servers.length === 0) lines.push('no MCP servers declared');
  else lines.push(PINNED_NOTE);
  for (const server of servers) lines.push('', serverLine(server), ...toolLines(server));
  context.report(lines, { workerId: worker.id, worker: worker.name, version: version.version, digest: version.digest, note: PINNED_NOTE, servers });
}

/** `mcp tools`: reading a version needs the inspect permission. Answers the `mcp` command, for the commands registered beside it. */
export function registerMcpCommands(program: Command, deps: { context(command: Command): CommandContext; positiveInteger(value: string): number }): Command {
  const mcp = program.command('mcp').description("MCP servers a worker's tools come from, as a version pins them, and their OAuth connections.");
  mcp
    .command('tools')
    .description(
      "List a version's MCP servers (transport, URL or command, trusted or not) and each tool it pinned: digest prefix, annotations, the grant covering it and what policy will assume of a call " +
        '(an untrusted server: every call mutating and not idempotent; a destructive tool: a person approves every call). A deployment\'s overrides may narrow the grants further.',
    )
    .argument('<worker>', 'worker name or id')
    .option('--version <n>', 'version to read (default: the latest)', deps.positiveInteger)
    .action((workerRef: string, options: { version?: number }, command: Command) => mcpTools(deps.context(command), workerRef, options));
  return mcp;
}
