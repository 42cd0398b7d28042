/**
 * Copies of the NATS messages an app sends, seen by plain subscriptions of the benchmark:
 * command requests under the bus prefix's command root, and, counted apart, JetStream API
 * requests (consumer pulls, stream and KV reads), acknowledgements and publishes to the
 * prefix's streams. A subscriber that never answers does not change how requests are served.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { topology } from '@packetagent/bus';
import { now } from './stats';

export type NatsKind = 'command' | 'jetstream-api' | 'jetstream-ack' | 'event-publish' | 'kv-write';

export interface NatsMessage {
  at: number;
  kind: NatsKind;
  subject: string;
  /** The payload's first bytes, for telling runs apart. */
  head: string;
}

export interface NatsTap {
  messages: NatsMessage[];
  /** The command's name (`scheduler.timers.set`) for a command subject. */
  commandName(subject: string): string;
  close(): void;
}

export async function startNatsTap(nc: NatsConnection, prefix: string): Promise<NatsTap> {
  const topo = topology(prefix);
  // Stream names of this prefix (PFX_PA_EVENTS, KV_PFX_PA_CMD_RESULTS, ...) appear in the JetStream subjects.
  const upper = prefix.toUpperCase();
  const ours = (subject: string) => subject.includes(`.${upper}_`) || subject.includes(`.KV_${upper}_`);
  const messages: NatsMessage[] = [];
  const tap = (subject: string, kind: NatsKind, keep: (subject: string) => boolean = () => true): Subscription =>
    nc.subscribe(subject, {
      callback: (error, message) => {
        if (error || !keep(message.subject)) return;
        messages.push({ at: now(), kind, subject: message.subject, head: new TextDecoder().decode(message.data.subarray(0, 512)) });
      },
    });
  const subscriptions = [
    tap(`${topo.commandSubjectRoot}.>`, 'command'),
    tap('$JS.API.>', 'jetstream-api', ours),
    tap('$JS.ACK.>', 'jetstream-ack', ours),
    tap(`${topo.eventsSubjectRoot}.>`, 'event-publish'),
    tap(`$KV.${topo.commandResultsBucket}.>`, 'kv-write'),
  ];
  await nc.flush();
  const commandPrefix = `${topo.commandSubjectRoot}.`;
  return {
    messages,
    commandName: (subject) => (subject.startsWith(commandPrefix) ? subject.slice(commandPrefix.length) : subject),
    close: () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  };
}
