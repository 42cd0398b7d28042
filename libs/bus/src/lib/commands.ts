import { createHash } from 'node:crypto';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { z } from 'zod';
import { DomainError, ValidationError } from '@packetagent/contracts';
import { extractTraceContext, injectTraceContext, SpanKind, withSpan } from '@packetagent/telemetry';
import { BusHeaders } from './headers';
import type { Topology } from './topology';

/** A command: a name (subject token), a request schema and a response schema. */
export interface CommandDefinition<Req extends z.ZodType, Res extends z.ZodType> {
  name: string;
  request: Req;
  response: Res;
}

export function defineCommand<Req extends z.ZodType, Res extends z.ZodType>(
  name: string,
  request: Req,
  response: Res,
): CommandDefinition<Req, Res> {
  if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(name)) throw new Error(`command name "${name}" must be dotted lower-case`);
  return { name, request, response };
}

/** The remote side refused or failed the command; `code` is its DomainError code. */
export class RemoteCommandError extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    override readonly retryable: boolean,
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export class CommandTimeoutError extends DomainError {
  readonly code = 'command_timeout';
  override readonly retryable = true;
  constructor(readonly command: string, readonly timeoutMs: number) {
    super(`command ${command} got no reply within ${timeoutMs} ms`);
  }
}

export class NoHandlerError extends DomainError {
  readonly code = 'command_unavailable';
  override readonly retryable = true;
  constructor(readonly command: string) {
    super(`no service is handling ${command}`);
  }
}

class CommandInProgressError extends DomainError {
  readonly code = 'command_in_progress';
  override readonly retryable = true;
}

type Reply = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string; retryable: boolean; issues?: { path: string; message: string }[] } };

export interface CommandContext {
  idempotencyKey: string | null;
}

const IN_PROGRESS = 'in_progress';

/**
 * Typed request/reply over NATS. Requests are validated before they leave and again on
 * arrival; replies are a result or a typed error. With an idempotency key, the first
 * result is kept in a JetStream KV bucket and returned for every repeat, across replicas.
 */
export class CommandBus {
  private readonly subscriptions: Subscription[] = [];
  private results: Promise<KV> | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly topo: Topology,
    private readonly options: { resultTtlMs?: number; queueGroup?: string } = {},
  ) {}

  subject(name: string): string {
    return `${this.topo.commandSubjectRoot}.${name}`;
  }

  async request<Req extends z.ZodType, Res extends z.ZodType>(
    command: CommandDefinition<Req, Res>,
    payload: z.input<Req>,
    options: { timeoutMs?: number; idempotencyKey?: string } = {},
  ): Promise<z.output<Res>> {
    const parsed = command.request.safeParse(payload);
    if (!parsed.success) throw toValidationError(`invalid ${command.name} request`, parsed.error);
    const timeoutMs = options.timeoutMs ?? 5_000;
    return withSpan(`command ${command.name}`, { kind: SpanKind.CLIENT }, async () => {
      const h = natsHeaders();
      injectTraceContext(h);
      if (options.idempotencyKey) h.set(BusHeaders.IdempotencyKey, options.idempotencyKey);
      let message: Msg;
      try {
        message = await this.nc.request(this.subject(command.name), JSON.stringify(parsed.data), { timeout: timeoutMs, headers: h });
      } catch (error) {
        const text = error instanceof Error ? `${error.name} ${error.message}` : String(error);
        if (/no responders/i.test(text)) throw new NoHandlerError(command.name);
        if (/timeout/i.test(text)) throw new CommandTimeoutError(command.name, timeoutMs);
        throw error;
      }
      const reply = message.json<Reply>();
      if (!reply.ok) throw new RemoteCommandError(reply.error.code, reply.error.message, reply.error.retryable, reply.error.issues);
      const result = command.response.safeParse(reply.result);
      if (!result.success) throw toValidationError(`invalid ${command.name} response`, result.error);
      return result.data;
    });
  }

  /** Serves a command; replicas share the load through a queue group. */
  handle<Req extends z.ZodType, Res extends z.ZodType>(
    command: CommandDefinition<Req, Res>,
    handler: (request: z.output<Req>, context: CommandContext) => Promise<z.input<Res>>,
  ): void {
    const subscription = this.nc.subscribe(this.subject(command.name), {
      queue: this.options.queueGroup ?? command.name,
      callback: (error, message) => {
        if (error) return;
        void this.serve(command, handler, message);
      },
    });
    this.subscriptions.push(subscription);
  }

  async drain(): Promise<void> {
    await Promise.all(this.subscriptions.splice(0).map((subscription) => subscription.drain().catch(() => undefined)));
  }

  private async serve<Req extends z.ZodType, Res extends z.ZodType>(
    command: CommandDefinition<Req, Res>,
    handler: (request: z.output<Req>, context: CommandContext) => Promise<z.input<Res>>,
    message: Msg,
  ): Promise<void> {
    const key = message.headers?.get(BusHeaders.IdempotencyKey) || null;
    const reply = await withSpan(
      `handle ${command.name}`,
      { kind: SpanKind.SERVER, parent: extractTraceContext(message.headers) },
      async (): Promise<Reply> => {
        try {
          const parsed = command.request.safeParse(safeJson(message));
          if (!parsed.success) throw toValidationError(`invalid ${command.name} request`, parsed.error);
          const run = async () => ({ ok: true as const, result: command.response.parse(await handler(parsed.data, { idempotencyKey: key })) });
          return key ? await this.once(`${command.name}.${hashKey(key)}`, run) : await run();
        } catch (error) {
          return { ok: false, error: errorBody(error) };
        }
      },
    );
    message.respond(JSON.stringify(reply));
  }

  /** Runs `work` at most once per key: a repeat gets the stored reply. */
  private async once(key: string, work: () => Promise<Reply>): Promise<Reply> {
    const kv = await this.resultsBucket();
    let revision: number;
    try {
      revision = await kv.create(key, IN_PROGRESS);
    } catch {
      const existing = await kv.get(key);
      const value = existing?.string();
      if (!value || value === IN_PROGRESS) throw new CommandInProgressError('the same command is still being handled');
      return JSON.parse(value) as Reply;
    }
    try {
      const reply = await work();
      await kv.update(key, JSON.stringify(reply), revision);
      return reply;
    } catch (error) {
      // A failure that did not produce a reply frees the key so the caller can retry.
      await kv.delete(key).catch(() => undefined);
      throw error;
    }
  }

  private resultsBucket(): Promise<KV> {
    this.results ??= new Kvm(this.nc).create(this.topo.commandResultsBucket, {
      ttl: this.options.resultTtlMs ?? 24 * 3_600_000,
      history: 1,
    });
    return this.results;
  }
}

function safeJson(message: Msg): unknown {
  try {
    return message.json();
  } catch {
    throw new ValidationError('request body is not JSON');
  }
}

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 40);
}

function toValidationError(message: string, error: z.ZodError): ValidationError {
  return new ValidationError(
    message,
    error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
  );
}

function errorBody(error: unknown): Extract<Reply, { ok: false }>['error'] {
  if (error instanceof ValidationError) return { code: error.code, message: error.message, retryable: false, issues: [...error.issues] };
  if (error instanceof DomainError) return { code: error.code, message: error.message, retryable: error.retryable };
  // Unexpected failures reveal nothing of their internals to the caller.
  return { code: 'internal_error', message: 'the command failed unexpectedly', retryable: true };
}
