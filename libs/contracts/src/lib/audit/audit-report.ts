import { z } from 'zod';
import { CHAIN_BREAK_REASONS } from '../event-chain';

/** One place where a stream's hash chain does not hold, as `GET /audit/verify` reports it. */
export const ChainBreakSchema = z.object({
  stream: z.string(),
  streamVersion: z.number().int(),
  globalPosition: z.number().int(),
  reason: z.enum(CHAIN_BREAK_REASONS),
  detail: z.string(),
});
export type ChainBreakReport = z.infer<typeof ChainBreakSchema>;

/** The answer of `GET /api/v1/workspaces/{ws}/audit/verify`. */
export const AuditReportSchema = z.object({
  ok: z.boolean(),
  streamsChecked: z.number().int().nonnegative(),
  eventsChecked: z.number().int().nonnegative(),
  breaks: z.array(ChainBreakSchema),
});
export type AuditReport = z.infer<typeof AuditReportSchema>;
