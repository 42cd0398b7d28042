import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';

export const RunEventsQuery = z.object({
  after: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
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
