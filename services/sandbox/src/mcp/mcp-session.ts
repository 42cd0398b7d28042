import { McpErrorCodes, type JsonValue, type McpCallResult, type ParsedMcpServerSpec, type PinnedMcpTool } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { checkArguments } from './argument-check';
import { answerWithResult } from './call-result';
import { currentGuard, guarded, type CallGuard } from './call-guard';
import { isProtocolViolation, McpCallError, toMcpCallError } from './mcp-call-error';
import { checkPin, listAllTools, type ListedTools } from './pinned-tools';
import { openTransport, type ComputerKeySource, type TransportContext } from './server-transport';

/** The SDK's own request timeout, kept behind ours so the reason a call failed is always ours. */
const SDK_TIMEOUT_SLACK_MS = 5_000;
const TERMINATE_TIMEOUT_MS = 2_000;

export interface SessionContext extends TransportContext {
  payloads: PayloadStore;
  previewBytes: number;
}

export interface SessionPlace {
  workspaceId: string;
  execId: string;
  workspaceDir: string;
}

type Phase = 'initialize' | 'tools/list' | 'tools/call';

/**
 * One client session with one server: connected on its first use, the tool list read once
 * (re-read after the server says it changed), calls checked against their pins, closed with its
 * run. A session the server broke (its process ended, a malformed or oversized message on stdio)
 * answers `broken` and is replaced by the next call.
 */
export class McpSession {
  private readonly client = new Client({ name: 'packetagent-sandbox', version: '1.0.0' }, { capabilities: {} });
  private transport: Transport | null = null;
  private connecting: Promise<void> | null = null;
  private tools: Promise<ListedTools> | null = null;
  private readonly inFlight = new Set<CallGuard>();
  private brokenBy: McpCallError | null = null;
  private closed = false;
  protocolVersion = '';
  bearer: string | undefined;
  /** How a stdio server on a computer is started: the latest call's key grant, or the listing key. */
  computerKey: ComputerKeySource | undefined;

  constructor(
    readonly spec: ParsedMcpServerSpec,
    private readonly place: SessionPlace,
    private readonly context: SessionContext,
  ) {
    this.client.onerror = (error) => {
      // A malformed event on an HTTP answer stream belongs to the request that stream answers.
      if (isProtocolViolation(error)) currentGuard.getStore()?.fail(toMcpCallError(error, spec.name));
    };
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.tools = null;
    });
  }

  get broken(): boolean {
    return this.brokenBy !== null || this.closed;
  }

  /** Every tool the server lists, pinned, under one deadline of the server's timeout. */
  async list(): Promise<ListedTools & { server: { name: string; version: string }; protocolVersion: string }> {
    return this.within(async (phase) => {
      const tools = await this.listed(phase);
      const version = this.client.getServerVersion();
      return { ...tools, server: { name: version?.name ?? '', version: version?.version ?? '' }, protocolVersion: this.protocolVersion };
    });
  }

  /** Calls a pinned tool; every failure is an answer with its code, never a throw. */
  async call(tool: PinnedMcpTool, args: Record<string, JsonValue>): Promise<McpCallResult> {
    const startedAt = performance.now();
    try {
      const result = await this.within(async (phase, guard) => {
        const listed = await this.listed(phase);
        checkPin(this.spec.name, tool, new Map(listed.tools.map((pinned) => [pinned.name, pinned])));
        checkArguments(tool, args);
        phase.current = 'tools/call';
        return this.client.callTool({ name: tool.name, arguments: args }, CallToolResultSchema, { signal: guard.signal, timeout: this.spec.timeoutMs + SDK_TIMEOUT_SLACK_MS });
      });
      return await answerWithResult(this.context.payloads, this.place.workspaceId, this.spec, result as Parameters<typeof answerWithResult>[3], startedAt, this.context.previewBytes);
    } catch (error) {
      const failure = toMcpCallError(error, this.spec.name);
      return { ok: false, preview: '', result: null, bytes: 0, error: { code: failure.code, message: failure.message }, durationMs: Math.max(0, Math.round(performance.now() - startedAt)) };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const transport = this.transport;
    if (transport && 'terminateSession' in transport && !this.brokenBy) {
      // Tells an HTTP server the session is over; one that does not answer is not waited for.
      await Promise.race([(transport as { terminateSession(): Promise<void> }).terminateSession().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, TERMINATE_TIMEOUT_MS).unref())]);
    }
    await this.client.close().catch(() => undefined);
    await transport?.close().catch(() => undefined);
  }

  /** Runs `work` under one deadline of the server's timeout, connecting first if needed. */
  private within<T>(work: (phase: { current: Phase }, guard: CallGuard) => Promise<T>): Promise<T> {
    const phase: { current: Phase } = { current: 'initialize' };
    const timeout = () =>
      new McpCallError(
        McpErrorCodes.timeout,
        phase.current === 'tools/call'
          ? `${this.spec.name} did not answer the call within ${this.spec.timeoutMs} ms; the request was cancelled`
          : `${this.spec.name} did not answer ${phase.current} within ${this.spec.timeoutMs} ms (the call's whole time limit)`,
      );
    return guarded(
      this.spec.timeoutMs,
      timeout,
      async (guard) => {
        if (this.brokenBy) throw this.brokenBy;
        if (this.closed) throw new McpCallError(McpErrorCodes.unavailable, `${this.spec.name}: the session was closed`);
        await this.connected(guard);
        return work(phase, guard);
      },
      (guard) => {
        this.inFlight.add(guard);
        return () => this.inFlight.delete(guard);
      },
    );
  }

  private connected(guard: CallGuard): Promise<void> {
    this.connecting ??= (async () => {
      const transport = await openTransport(this.spec, this.context, {
        workspaceId: this.place.workspaceId,
        execId: this.place.execId,
        workspaceDir: this.place.workspaceDir,
        bearer: () => this.bearer,
        computerKey: () => this.computerKey,
        onBroken: (error) => this.break(error),
      });
      this.transport = transport;
      const setVersion = transport.setProtocolVersion?.bind(transport);
      transport.setProtocolVersion = (version) => {
        this.protocolVersion = version;
        setVersion?.(version);
      };
      await this.client.connect(transport, { signal: guard.signal, timeout: this.spec.timeoutMs + SDK_TIMEOUT_SLACK_MS });
    })();
    const connecting = this.connecting;
    // A failed connection is not kept: the session is broken and the next call opens another.
    connecting.catch((error: unknown) => this.break(guard.failure ?? toMcpCallError(error, this.spec.name)));
    return connecting;
  }

  private listed(phase: { current: Phase }): Promise<ListedTools> {
    phase.current = 'tools/list';
    const guard = currentGuard.getStore();
    const listing = (this.tools ??= listAllTools(this.spec.name, (cursor) => this.client.listTools(cursor ? { cursor } : {}, { ...(guard ? { signal: guard.signal } : {}), timeout: this.spec.timeoutMs + SDK_TIMEOUT_SLACK_MS })));
    listing.catch(() => {
      if (this.tools === listing) this.tools = null;
    });
    return listing;
  }

  private break(error: McpCallError): void {
    if (this.brokenBy) return;
    this.brokenBy = error;
    for (const guard of this.inFlight) guard.fail(error);
    void this.transport?.close().catch(() => undefined);
  }
}
