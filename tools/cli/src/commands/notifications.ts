import { z } from 'zod';
import type { CommandContext } from '../context';

const AttemptSchema = z.looseObject({
  at: z.string(),
  afterMs: z.number().nullable(),
  outcome: z.string(),
  status: z.number().nullable(),
  code: z.string().nullable(),
  message: z.string().nullable(),
});

const DeliverySchema = z.looseObject({
  deliveryId: z.string().min(1),
  trigger: z.string(),
  route: z.looseObject({ index: z.number(), name: z.string().nullable(), channel: z.string(), to: z.string().nullable() }),
  state: z.string(),
  runId: z.string().nullable(),
  attempts: z.number(),
  attemptLog: z.array(AttemptSchema),
  nextAttemptAt: z.string().nullable(),
  lastError: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.string(),
});
type Delivery = z.infer<typeof DeliverySchema>;

const DeliveryPageSchema = z.looseObject({ items: z.array(DeliverySchema), next: z.string().nullable() });

const routeOf = (delivery: Delivery): string =>
  `${delivery.route.channel} ${delivery.route.name ?? `#${delivery.route.index}`}${delivery.route.to ? ` ${delivery.route.to}` : ''}`;

function deliveryLine(delivery: Delivery): string {
  const status =
    delivery.state === 'pending' && delivery.nextAttemptAt
      ? `next attempt ${delivery.nextAttemptAt}`
      : delivery.state === 'dead' && delivery.lastError
        ? `${delivery.lastError.code}: ${delivery.lastError.message}`
        : '';
  return [delivery.deliveryId, delivery.state, delivery.trigger, routeOf(delivery), delivery.runId ? `run ${delivery.runId}` : '', `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`, status]
    .filter(Boolean)
    .join('  ');
}

function attemptLine(attempt: z.infer<typeof AttemptSchema>, index: number): string {
  const wait = attempt.afterMs === null ? '' : `after ${attempt.afterMs} ms`;
  const what = attempt.outcome === 'delivered' ? `delivered${attempt.status === null ? '' : ` (${attempt.status})`}` : `failed ${attempt.code ?? ''}${attempt.message ? `: ${attempt.message}` : ''}`;
  return [`  ${index + 1}.`, attempt.at, wait, what].filter(Boolean).join('  ');
}

/** `packetagent notifications list`: the outbox, newest first, one delivery per line. */
export async function listDeliveries(context: CommandContext, options: { state?: string; run?: string; limit?: number; after?: string }): Promise<void> {
  const { client } = context;
  const page = await client.get(client.workspacePath('notifications', 'deliveries'), DeliveryPageSchema, {
    state: options.state,
    runId: options.run,
    limit: options.limit === undefined ? undefined : String(options.limit),
    after: options.after,
  });
  const lines = page.items.length ? page.items.map(deliveryLine) : ['no deliveries'];
  if (page.next) lines.push(`older: --after ${page.next}`);
  context.report(lines, page);
}

/** `packetagent notifications get ID`: one delivery and every attempt made. */
export async function getDelivery(context: CommandContext, deliveryId: string): Promise<void> {
  const { client } = context;
  const delivery = await client.get(client.workspacePath('notifications', 'deliveries', deliveryId), DeliverySchema);
  context.report([deliveryLine(delivery), ...delivery.attemptLog.map(attemptLine)], delivery);
}

/** `packetagent notifications redrive ID`: a dead-lettered delivery is sent again, once. */
export async function redriveDelivery(context: CommandContext, deliveryId: string): Promise<void> {
  const { client } = context;
  const delivery = await client.post(client.workspacePath('notifications', 'deliveries', deliveryId, 'redrive'), { json: {} }, DeliverySchema);
  context.report([deliveryLine(delivery)], delivery);
}
