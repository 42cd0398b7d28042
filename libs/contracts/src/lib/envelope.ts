import { z } from 'zod';
import { ValidationError } from './errors';
import { v7 as uuidv7 } from 'uuid';
import { canonicalJson, sha256Hex, type JsonObject, type JsonValue } from './json';

/** The kinds of actor an event can name. */
export const ACTOR_KINDS = ['user', 'api_key', 'actor_token', 'remote_control', 'service', 'system'] as const;

/** Who caused an event: a user, an API key, a PacketADE actor token, a service, or the system itself. */
export interface Actor {
  kind: (typeof ACTOR_KINDS)[number];
  id: string;
}

/**
 * A stored event as every consumer sees it. `digest` is SHA-256 over the canonical JSON
 * (RFC 8785) of every field except `globalPosition` and `digest` itself; `prevDigest` links to
 * the previous event of the same stream, so each stream is a hash chain.
 */
export interface EventEnvelope<TData extends JsonValue = JsonValue> {
  id: string;
  type: string;
  schemaVersion: number;
  stream: string;
  streamVersion: number;
  globalPosition: number;
  workspaceId: string;
  occurredAt: string;
  causationId: string | null;
  correlationId: string | null;
  traceparent: string | null;
  actor: Actor;
  data: TData;
  digest: string;
  prevDigest: string | null;
}

export type DigestInput = Omit<EventEnvelope, 'globalPosition' | 'digest'>;

/** The digested content of an event: every envelope field except globalPosition and digest. */
export function eventDigestBody(event: DigestInput): JsonObject {
  return {
    id: event.id,
    type: event.type,
    schemaVersion: event.schemaVersion,
    stream: event.stream,
    streamVersion: event.streamVersion,
    workspaceId: event.workspaceId,
    occurredAt: event.occurredAt,
    causationId: event.causationId,
    correlationId: event.correlationId,
    traceparent: event.traceparent,
    actor: { kind: event.actor.kind, id: event.actor.id },
    data: event.data,
    prevDigest: event.prevDigest,
  };
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of the event's digested content. */
export function computeEventDigest(event: DigestInput): string {
  return sha256Hex(canonicalJson(eventDigestBody(event)));
}

export function newEventId(): string {
  return uuidv7();
}

/** Identifier grammar shared by the store, the bus subjects and the API. */
export const Identifiers = {
  /** `<category>-<id>`, e.g. `run-01939f2c-...`; the category becomes a subject token. */
  stream: /^[a-z][a-z0-9_]{0,39}-[A-Za-z0-9_:@-]{1,200}$/,
  /** NATS-subject-safe workspace id. */
  workspace: /^[A-Za-z0-9_-]{1,64}$/,
  /** Dotted lower-case past-tense name, e.g. `run.started`. */
  eventType: /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
} as const;

export function streamCategory(stream: string): string {
  const dash = stream.indexOf('-');
  return dash < 0 ? stream : stream.slice(0, dash);
}

/** `pa.evt.<workspace>.<category>.<type>`; the root is configurable so tests can isolate. */
export function eventSubject(root: string, event: Pick<EventEnvelope, 'workspaceId' | 'stream' | 'type'>): string {
  return `${root}.${event.workspaceId}.${streamCategory(event.stream)}.${event.type}`;
}

/** An event envelope as it travels (JSON), e.g. in API answers. */
export const EventEnvelopeSchema = z.object({
  id: z.string().regex(Identifiers.uuid),
  type: z.string().regex(Identifiers.eventType),
  schemaVersion: z.number().int().positive(),
  stream: z.string().regex(Identifiers.stream),
  streamVersion: z.number().int().positive(),
  globalPosition: z.number().int().positive(),
  workspaceId: z.string().regex(Identifiers.workspace),
  occurredAt: z.iso.datetime(),
  causationId: z.string().nullable(),
  correlationId: z.string().nullable(),
  traceparent: z.string().nullable(),
  actor: z.object({ kind: z.enum(ACTOR_KINDS), id: z.string().min(1) }),
  data: z.json(),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  prevDigest: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
});

export class MalformedEnvelopeError extends ValidationError {
  override readonly code = 'malformed_envelope';
}

/** Parses an envelope received from the wire; anything else is a typed error, never coerced. */
export function parseEnvelope(value: unknown): EventEnvelope {
  const result = EventEnvelopeSchema.safeParse(value);
  if (!result.success) {
    throw new MalformedEnvelopeError(
      'not an event envelope',
      result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
    );
  }
  return result.data as EventEnvelope;
}
