import { mkdir } from 'node:fs/promises';
import { McpErrorCodes, type ParsedMcpServerSpec } from '@packetagent/contracts';
import type { HostResolver } from '@packetagent/tools';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { DriverSelection } from '../drivers/driver-selection';
import { SANDBOX_PATH, SANDBOX_PATHS } from '../drivers/sandbox-driver';
import type { ResolvedSandboxOptions } from '../sandbox.options';
import { checkedMcpFetch, SessionAgents } from './checked-mcp-fetch';
import { McpCallError, toMcpCallError } from './mcp-call-error';
import { SandboxedStdioTransport } from './sandboxed-stdio-transport';
import type { ComputerExecs } from '../computers/computer-execs';
import type { DriverProcess } from '../drivers/sandbox-driver';

/** Room for the JSON-RPC envelope around a result of maxResultBytes. */
export const ENVELOPE_BYTES = 64 * 1024;

export interface TransportContext {
  drivers: DriverSelection;
  options: Pick<ResolvedSandboxOptions, 'allowPrivate' | 'defaults'>;
  resolveHost?: HostResolver;
  /** Where a stdio server on a registered computer is started; absent, such a server is unavailable. */
  computers?: Pick<ComputerExecs, 'startServer'>;
}

/** The key a stdio server on a computer is started with: a run's grant for its call, or one policy grants for listing. */
export type ComputerKeySource = { grant: string } | 'listing';

export interface TransportPlan {
  workspaceId: string;
  /** Names the stdio server's process (its scratch files, control groups). */
  execId: string;
  /** Host directory bound at /workspace for a stdio server. */
  workspaceDir: string;
  bearer: () => string | undefined;
  /** Read when a stdio server on a computer is started; without one, it is not started. */
  computerKey?: () => ComputerKeySource | undefined;
  onBroken(error: McpCallError): void;
}

/**
 * The transport to one server: Streamable HTTP through the checked fetch, or a stdio server
 * started by the sandbox driver (no network, the service's limits, stdin piped) in `workspaceDir`.
 */
export async function openTransport(spec: ParsedMcpServerSpec, context: TransportContext, plan: TransportPlan): Promise<Transport> {
  const maxMessageBytes = spec.maxResultBytes + ENVELOPE_BYTES;
  if (spec.transport === 'http') {
    const agents = new SessionAgents();
    return new SessionHttpTransport(agents, new URL(spec.url), {
      fetch: checkedMcpFetch({ server: spec.name, allowPrivate: context.options.allowPrivate, maxResponseBytes: maxMessageBytes, timeoutMs: spec.timeoutMs, bearer: plan.bearer, agents, ...(context.resolveHost ? { resolveHost: context.resolveHost } : {}) }),
      // A broken answer stream fails its request here; it is not resumed behind the caller's back.
      reconnectionOptions: { initialReconnectionDelay: 1_000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 1.5, maxRetries: 0 },
    });
  }
  if (spec.args.some((arg) => arg.includes('\0'))) throw new McpCallError(McpErrorCodes.unavailable, `${spec.name}: an argument of the server's command contains a NUL character`);
  if (spec.computer) {
    const remote = await startOnComputer(spec as ParsedMcpServerSpec & { transport: 'stdio'; computer: string }, context, plan);
    if (remote) return new SandboxedStdioTransport(remote, { server: spec.name, maxMessageBytes, onBroken: plan.onBroken });
  }
  let driver;
  try {
    ({ driver } = await context.drivers.current());
  } catch (error) {
    throw new McpCallError(McpErrorCodes.unavailable, `${spec.name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  await mkdir(plan.workspaceDir, { recursive: true });
  const process = await driver
    .start({
      execId: plan.execId,
      argv: [spec.command, ...spec.args],
      workspaceDir: plan.workspaceDir,
      cwd: '.',
      env: { PATH: SANDBOX_PATH, HOME: SANDBOX_PATHS.home, LANG: 'C.UTF-8', TMPDIR: SANDBOX_PATHS.tmp },
      limits: context.options.defaults,
      egressDir: null,
      stdin: true,
    })
    .catch((error: unknown) => {
      throw new McpCallError(McpErrorCodes.unavailable, `${spec.name}: the server could not be started in the sandbox: ${toMcpCallError(error, spec.name).message}`, { cause: error });
    });
  return new SandboxedStdioTransport(process, { server: spec.name, maxMessageBytes, onBroken: plan.onBroken });
}

/** The server's program on its computer over SSH; null for a `local` computer, whose programs run in this sandbox. */
async function startOnComputer(spec: ParsedMcpServerSpec & { transport: 'stdio'; computer: string }, context: TransportContext, plan: TransportPlan): Promise<DriverProcess | null> {
  if (!context.computers) throw new McpCallError(McpErrorCodes.unavailable, `${spec.name} runs on computer "${spec.computer}", and this sandbox reaches no computers`);
  const key = plan.computerKey?.();
  if (!key) throw new McpCallError(McpErrorCodes.unavailable, `${spec.name} runs on computer "${spec.computer}", and no key was granted to start it there`);
  try {
    return await context.computers.startServer(plan.workspaceId, spec.computer, key, [spec.command, ...spec.args], context.options.defaults);
  } catch (error) {
    throw new McpCallError(McpErrorCodes.unavailable, `${spec.name}: the server could not be started on computer "${spec.computer}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** Streamable HTTP whose keep-alive connections end with the session. */
class SessionHttpTransport extends StreamableHTTPClientTransport {
  constructor(
    private readonly agents: SessionAgents,
    ...rest: ConstructorParameters<typeof StreamableHTTPClientTransport>
  ) {
    super(...rest);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.agents.destroy();
    }
  }
}
