import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { EventEnvelopeSchema } from '@packetagent/contracts';

export const FeedPageQuery = z.object({
  after: z.string().max(20).optional().describe('a cursor: the feed continues after it; the acknowledged cursor when absent'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export class FeedPageQueryDto extends createZodDto(FeedPageQuery) {}

export const FeedStreamQuery = z.object({
  after: z.string().max(20).optional().describe('as Last-Event-ID: the stream continues after this cursor; the acknowledged cursor when neither is given'),
});
export class FeedStreamQueryDto extends createZodDto(FeedStreamQuery) {}

export const AcknowledgeBody = z.strictObject({ cursor: z.string().max(20).describe('the cursor of the last event the client has handled') });
export class AcknowledgeDto extends createZodDto(AcknowledgeBody) {}

export const FeedPageSchema = z.object({
  items: z.array(EventEnvelopeSchema).describe('event envelopes, in position order'),
  nextCursor: z.string().describe('pass as `after` for the next page'),
  caughtUp: z.boolean().describe('the page reached the last settled event'),
});
export class FeedPageDto extends createZodDto(FeedPageSchema) {}

export const AcknowledgedSchema = z.object({ cursor: z.string(), revision: z.number().int().nonnegative().describe('also the ETag') });
export class AcknowledgedDto extends createZodDto(AcknowledgedSchema) {}
