import { createHash } from 'node:crypto';
import { headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { z } from 'zod';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { DomainError, TransientError, ValidationError, type CommandDefinition } from '@packetagent/contracts';

export { defineCommand, type CommandDefinition } from '@packetagent/contracts';
import { extractTraceContext, injectTraceContext, SpanKind, withSpan } from '@packetagent/telemetry';
import { BusHeaders } from './headers';
import type { Topology } from './topology';

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

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence || error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Typed request/reply over NATS. Requests are validated before they leave and again on
 * arrival; replies are a result or a typed error. With an idempotency key, the first
 * result is kept in a JetStream KV bucket and returned for every repeat, across replicas.
 */
export class CommandBus {
  private readonly subscriptions: Subscription[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private results: Promise<KV> | null = null;
  private readonly inProgressLeaseMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly topo: Topology,
    private readonly options: {
      /** How long a command's reply is kept for repeats of its idempotency key, in milliseconds. */
      resultTtlMs?: number;
      /** How long a claimed key stays "in progress" before another replica may take it over, in milliseconds. */
      inProgressLeaseMs?: number;
      queueGroup?: string;
    } = {},
  ) {
    this.inProgressLeaseMs = options.inProgressLeaseMs ?? 60_000;
  }

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
        const serving = this.serve(command, handler, message).finally(() => this.inFlight.delete(serving));
        this.inFlight.add(serving);
      },
    });
    this.subscriptions.push(subscription);
  }

  /** Stops taking requests and waits for the ones being handled to reply. */
  async drain(): Promise<void> {
    await Promise.all(this.subscriptions.splice(0).map((subscription) => subscription.drain().catch(() => undefined)));
    await Promise.allSettled([...this.inFlight]);
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
          return key ? await this.once(idempotencyEntry(command.name, key), run) : await run();
        } catch (error) {
          return { ok: false, error: errorBody(error) };
        }
      },
    );
    message.respond(JSON.stringify(reply));
  }

  /**
   * Runs `work` at most once per key: a repeat gets the stored reply. The key is claimed with
   * create-if-absent; a claim older than the in-progress lease (its holder died) may be taken
   * over, so a crash does not block the key for the whole result TTL.
   */
  private async once(key: string, work: () => Promise<Reply>): Promise<Reply> {
    const kv = await this.resultsBucket();
    const claim = () => `${IN_PROGRESS}:${Date.now()}`;
    let revision: number;
    try {
      revision = await kv.create(key, claim());
    } catch (error) {
      if (!isWrongLastSequence(error)) throw new TransientError('idempotency store unavailable', { cause: error });
      const existing = await kv.get(key);
      const value = existing?.string() ?? '';
      // Deleted between our create and get (its holder failed): the caller may simply retry.
      if (!value) throw new CommandInProgressError('the same command just failed elsewhere; retry');
      if (!value.startsWith(IN_PROGRESS)) return JSON.parse(value) as Reply;
      const claimedAt = Number(value.slice(IN_PROGRESS.length + 1));
      if (Date.now() - claimedAt < this.inProgressLeaseMs) throw new CommandInProgressError('the same command is still being handled');
      try {
        revision = await kv.update(key, claim(), existing!.revision);
      } catch {
        throw new CommandInProgressError('the same command is being taken over by another replica');
      }
    }
    let reply: Reply;
    try {
      reply = await work();
    } catch (error) {
      // A failure that produced no reply frees the key so the caller can retry.
      await kv.delete(key).catch(() => undefined);
      throw error;
    }
    // The work is done: record it, and return the reply even if recording keeps failing
    // (the caller must not be told to retry something that already happened).
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await kv.update(key, JSON.stringify(reply), revision);
        break;
      } catch {
        if (attempt === 2) break;
      }
    }
    return reply;
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

/** The results-bucket key of a command's idempotency key (hashed: callers' keys are free text). */
export function idempotencyEntry(command: string, key: string): string {
  return `${command}.${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
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
