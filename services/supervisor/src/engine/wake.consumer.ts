import { Injectable } from '@nestjs/common';
import { CommandBus, OnEvent, type HandlerContext } from '@packetagent/bus';
import { PolicyCommands, RUN_WALL_TIME_PURPOSE, runControlStreamId, runIdFromStream, type DecodedEvent, type SchedulerEventData } from '@packetagent/contracts';
import { SupervisorEngine } from './supervisor-engine';

/** Events of the run's own stream after which it has something to do. Operator requests come through the control stream. */
const RUN_WAKES = new Set(['run.admitted']);
const CONTROL_REQUESTS = new Set(['run.stop_requested', 'run.pause_requested', 'run.resume_requested', 'run.revoke_requested']);
const ATTENTION_ANSWERS = new Set(['attention.approved', 'attention.rejected', 'attention.expired', 'attention.withdrawn']);
/** How long a wake waits when another replica holds the run, in milliseconds. */
const HELD_RETRY_MS = 1_000;

/**
 * Turns events into wakes. The JetStream delivery stays in progress while the run is driven,
 * so if this replica dies it is delivered again and another replica takes the run over. A
 * wake for a run another replica holds comes back a second later: the holder may be about to
 * park it, and the wake must not be lost.
 */
@Injectable()
export class WakeConsumer {
  constructor(
    private readonly engine: SupervisorEngine,
    private readonly commands: CommandBus,
  ) {}

  @OnEvent({ durable: 'supervisor-runs', filter: '*.run.>', ackWaitMs: 30_000, maxAckPending: 128, concurrency: 128 })
  async onRunEvent(event: DecodedEvent, context: HandlerContext): Promise<void> {
    if (!RUN_WAKES.has(event.type)) return;
    const runId = runIdFromStream(event.stream);
    if (runId) await this.wake(runId, event.workspaceId, context);
  }

  /** Operator requests, on one path: folded by whichever replica drives the run, or by the next claim. */
  @OnEvent({ durable: 'supervisor-controls', filter: '*.runctl.>', ackWaitMs: 30_000, maxAckPending: 128, concurrency: 64 })
  async onControlRequest(event: DecodedEvent, context: HandlerContext): Promise<void> {
    if (!CONTROL_REQUESTS.has(event.type)) return;
    const runId = event.stream.slice(runControlStreamId('').length);
    if ((await this.engine.control(runId, event.workspaceId, event.streamVersion)) === 'busy') context.defer(HELD_RETRY_MS);
  }

  @OnEvent({ durable: 'supervisor-attention', filter: '*.attention.>', ackWaitMs: 30_000, maxAckPending: 64, concurrency: 32 })
  async onAttentionEvent(event: DecodedEvent, context: HandlerContext): Promise<void> {
    if (!ATTENTION_ANSWERS.has(event.type)) return;
    const attention = await this.commands.request(PolicyCommands.getAttention, { workspaceId: event.workspaceId, attentionId: event.stream.slice('attention-'.length) });
    await this.wake(attention.runId, event.workspaceId, context);
  }

  @OnEvent({ durable: 'supervisor-timers', filter: '*.timer.timer.fired', ackWaitMs: 30_000, maxAckPending: 64, concurrency: 32 })
  async onTimerFired(event: DecodedEvent<SchedulerEventData<'timer.fired'>>, context: HandlerContext): Promise<void> {
    if (event.data.purpose !== RUN_WALL_TIME_PURPOSE) return;
    const runId = (event.data.payload as { runId?: unknown } | null)?.runId;
    if (typeof runId === 'string') await this.wake(runId, event.workspaceId, context);
  }

  private async wake(runId: string, workspaceId: string, context: HandlerContext): Promise<void> {
    if ((await this.engine.wake(runId, workspaceId)) === 'busy') context.defer(HELD_RETRY_MS);
  }
}
