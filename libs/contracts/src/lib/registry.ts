import type { z } from 'zod';
import { DomainError, ValidationError } from './errors';
import type { EventEnvelope } from './envelope';
import type { JsonValue } from './json';

export class UnknownEventTypeError extends DomainError {
  readonly code = 'unknown_event_type';
  constructor(readonly eventType: string) {
    super(`unknown event type "${eventType}"`);
  }
}

export class UnsupportedSchemaVersionError extends DomainError {
  readonly code = 'unsupported_schema_version';
  constructor(
    readonly eventType: string,
    readonly schemaVersion: number,
    readonly latestKnown: number,
  ) {
    super(`event type "${eventType}" schema version ${schemaVersion} is not known (latest known: ${latestKnown})`);
  }
}

export class EventSchemaMismatchError extends ValidationError {
  override readonly code = 'event_schema_mismatch';
}

type Upcaster = (data: unknown) => unknown;

interface TypeEntry {
  schemas: Map<number, z.ZodType>;
  upcasters: Map<number, Upcaster>;
  latest: number;
}

export interface DecodedEvent<TData = unknown> extends Omit<EventEnvelope, 'data' | 'schemaVersion'> {
  /** Always the latest schema version known to this process, after upcasting. */
  schemaVersion: number;
  /** The version the event was written with. */
  storedSchemaVersion: number;
  data: TData;
}

/**
 * Schemas per (type, schemaVersion) and upcasters from each version to the next. Decoding an
 * unknown type or a version newer than this process knows throws a typed error: an event is
 * never dropped or coerced into a shape it does not have.
 */
export class EventRegistry {
  private readonly types = new Map<string, TypeEntry>();

  /**
   * Registers the schema of one version. Versions of a type must be registered in order
   * 1, 2, 3...; each version after the first needs an upcaster from the previous one.
   */
  register<S extends z.ZodType>(
    type: string,
    schemaVersion: number,
    schema: S,
    upcastFromPrevious?: (previous: never) => z.input<S>,
  ): this {
    const entry = this.types.get(type) ?? { schemas: new Map(), upcasters: new Map(), latest: 0 };
    if (schemaVersion !== entry.latest + 1) {
      throw new Error(`event type "${type}": register version ${entry.latest + 1} before ${schemaVersion}`);
    }
    if (schemaVersion > 1 && !upcastFromPrevious) {
      throw new Error(`event type "${type}" version ${schemaVersion} needs an upcaster from version ${schemaVersion - 1}`);
    }
    entry.schemas.set(schemaVersion, schema);
    if (upcastFromPrevious) entry.upcasters.set(schemaVersion - 1, upcastFromPrevious as Upcaster);
    entry.latest = schemaVersion;
    this.types.set(type, entry);
    return this;
  }

  /**
   * Registers version 1 of each type not registered yet: what a service does with its context's
   * first schemas, safe to call from several modules sharing one registry.
   */
  registerFirstVersions(schemas: Readonly<Record<string, z.ZodType>>): this {
    for (const [type, schema] of Object.entries(schemas)) {
      if (!this.has(type)) this.register(type, 1, schema);
    }
    return this;
  }

    has(type: string): boolean {
    return this.types.has(type);
  }

  latestVersion(type: string): number {
    const entry = this.types.get(type);
    if (!entry) throw new UnknownEventTypeError(type);
    return entry.latest;
  }

  /** Validates data for appending at the latest schema version of its type. */
  validateForAppend(type: string, data: unknown): { schemaVersion: number; data: JsonValue } {
    const entry = this.types.get(type);
    if (!entry) throw new UnknownEventTypeError(type);
    const parsed = this.parse(type, entry.latest, data);
    return { schemaVersion: entry.latest, data: parsed as JsonValue };
  }

  decode<TData = unknown>(event: EventEnvelope): DecodedEvent<TData> {
    const entry = this.types.get(event.type);
    if (!entry) throw new UnknownEventTypeError(event.type);
    if (!Number.isInteger(event.schemaVersion) || event.schemaVersion < 1 || !entry.schemas.has(event.schemaVersion)) {
      throw new UnsupportedSchemaVersionError(event.type, event.schemaVersion, entry.latest);
    }
    let data: unknown = this.parse(event.type, event.schemaVersion, event.data);
    for (let version = event.schemaVersion; version < entry.latest; version++) {
      const upcast = entry.upcasters.get(version) as Upcaster;
      data = this.parse(event.type, version + 1, upcast(data));
    }
    return { ...event, schemaVersion: entry.latest, storedSchemaVersion: event.schemaVersion, data: data as TData };
  }

  private parse(type: string, version: number, data: unknown): unknown {
    const schema = this.types.get(type)?.schemas.get(version) as z.ZodType;
    const result = schema.safeParse(data);
    if (!result.success) {
      throw new EventSchemaMismatchError(
        `event "${type}" v${version} does not match its schema`,
        result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })),
      );
    }
    return result.data;
  }
}
