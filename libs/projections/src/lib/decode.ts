import { DomainError, parseEnvelope, type DecodedEvent, type EventRegistry } from '@packetagent/contracts';
import type { Gap } from './applier';

export type Decoded = { kind: 'event'; event: DecodedEvent } | { kind: 'gap'; gap: Gap };

/** What the transport knows about a delivery besides its body, for when the body cannot be read. */
export interface DeliveryHints {
  globalPosition?: number | null;
  workspaceId?: string | null;
  type?: string | null;
}

function field(value: unknown, name: string): unknown {
  return value && typeof value === 'object' ? (value as Record<string, unknown>)[name] : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, 200) : null;
}

/**
 * Decodes an event for the projections, or describes why it cannot be (unknown type, newer
 * schema version, malformed envelope or data) as a gap with what is known of it.
 */
export function decodeForProjection(registry: EventRegistry, body: () => unknown, hints: DeliveryHints = {}): Decoded {
  let raw: unknown;
  try {
    raw = body();
    return { kind: 'event', event: registry.decode(parseEnvelope(raw)) };
  } catch (error) {
    const position = field(raw, 'globalPosition');
    return {
      kind: 'gap',
      gap: {
        globalPosition: Number.isSafeInteger(position) && (position as number) > 0 ? (position as number) : hints.globalPosition ?? null,
        workspaceId: text(field(raw, 'workspaceId')) ?? hints.workspaceId ?? null,
        stream: text(field(raw, 'stream')),
        type: text(field(raw, 'type')) ?? hints.type ?? null,
        code: error instanceof DomainError ? error.code : error instanceof SyntaxError ? 'malformed_json' : 'undecodable',
        reason: error instanceof Error ? error.message : String(error),
      },
    };
  }
}
