import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { EventPayloadSchema, PAYLOAD_MODES } from '../payloads/inline-payloads';

export const RunEventsQuery = z.object({
  after: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
  /** `inline`: references replaced by their verified content, up to 8 MiB of it per page; `ref`: references left as stored. */
  payloads: z.enum(PAYLOAD_MODES).default('inline'),
});
export class RunEventsQueryDto extends createZodDto(RunEventsQuery) {}

export const RunEventItem = z.object({
  id: z.string(),
  /** Global position: the SSE event id of the same event. */
  position: z.number().int(),
  type: z.string(),
  streamVersion: z.number().int(),
  occurredAt: z.string(),
  actor: z.object({ kind: z.string(), id: z.string() }),
  data: z.json(),
  /** Present when the event's data holds payload references: each one and what became of it. */
  payloads: z.array(EventPayloadSchema).optional(),
});
export const RunEventsPage = z.object({
  items: z.array(RunEventItem),
  /** Null when this page reached the last event stored so far. */
  nextCursor: z.string().nullable(),
});
export class RunEventsPageDto extends createZodDto(RunEventsPage) {}

const POSITION = /^\d{1,15}$/;

/** A new EventSource cannot set Last-Event-ID (only its own reconnects send it), so a page resuming a stream passes it here. */
export const LiveStreamQuery = z.object({
  lastEventId: z.string().regex(POSITION, 'a global position (digits)').optional(),
});
export class LiveStreamQueryDto extends createZodDto(LiveStreamQuery) {}

export const LAST_EVENT_ID_PATTERN = POSITION;
