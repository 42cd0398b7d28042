import { z } from 'zod';
import { CHAIN_BREAK_REASONS } from '../event-chain';
import { PAYLOAD_BREAK_REASONS } from '../payloads/payload-ref';

/** One place where a stream's hash chain, or a payload one of its events references, does not hold, as `GET /audit/verify` reports it. */
export const ChainBreakSchema = z.object({
  stream: z.string(),
  streamVersion: z.number().int(),
  globalPosition: z.number().int(),
  reason: z.enum([...CHAIN_BREAK_REASONS, ...PAYLOAD_BREAK_REASONS]),
  detail: z.string(),
  /** For a payload break: the digest of the payload the event references. */
  payloadDigest: z.string().optional(),
});
export type ChainBreakReport = z.infer<typeof ChainBreakSchema>;

/** The answer of `GET /api/v1/workspaces/{ws}/audit/verify`. */
export const AuditReportSchema = z.object({
  ok: z.boolean(),
  streamsChecked: z.number().int().nonnegative(),
  eventsChecked: z.number().int().nonnegative(),
  /** Payload references checked: one per event field that holds one. */
  payloadsChecked: z.number().int().nonnegative().optional(),
  breaks: z.array(ChainBreakSchema),
});
export type AuditReport = z.infer<typeof AuditReportSchema>;
