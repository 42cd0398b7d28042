import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';

export class LivenessDto extends createZodDto(z.object({ status: z.literal('ok') })) {}

/** A check may report more than ok and detail (the relay its lag, for one). */
const Check = z.looseObject({ ok: z.boolean(), detail: z.string() });

export class ReadinessReportDto extends createZodDto(
  z.object({
    status: z.enum(['ready', 'not_ready']),
    failing: z.array(z.string()).describe('the checks that failed'),
    checks: z.object({ postgres: Check, nats: Check, redis: Check, relay: Check }),
  }),
) {}
