import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { Test } from '@nestjs/testing';
import type { INestApplicationContext } from '@nestjs/common';
import type { z } from 'zod';
import { BusModule, CommandBus, topology, type Topology } from '@packetagent/bus';
import {
  EventRegistry,
  payloadContent,
  PolicyCommands,
  registerIntakeEvents,
  registerPolicyEvents,
  registerSchedulerEvents,
  runStreamId,
  SchedulerCommands,
  timerStream,
  type AuthorizeResult,
  type EventEnvelope,
  type IntakeEventData,
  type JsonValue,
  type WorkerDefinition,
} from '@packetagent/contracts';
import { EventStoreModule, PayloadStore, PostgresEventStore, type NewEvent } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, eventually, testEnv, type TestBus, type TestDatabase } from '@packetagent/testing';
import { PolicyModule } from '../policy.module';
import type { PolicyModuleOptions } from '../policy.options';

export interface PolicyHarness {
  /** One Nest application context per replica, on the same database and bus prefix. */
  replicas: INestApplicationContext[];
  bus: CommandBus;
  scheduler: SchedulerStandIn;
  store: PostgresEventStore;
  db: TestDatabase;
  /** The bus connection and subjects of this harness, for test doubles of other services. */
  testBus: TestBus;
  topology: Topology;
  workspaceId: string;
  close(): Promise<void>;
}

export const INTAKE_ACTOR = { kind: 'service', id: 'intake' } as const;
export const OPERATOR = { kind: 'user', id: 'operator-1' } as const;

/**
 * Policy replicas (each its own Nest context, NATS connection and pool) on a fresh database and
 * bus prefix; the first also runs the outbox relay.
 */
export async function startPolicy(options: { policy?: PolicyModuleOptions; replicas?: number } = {}): Promise<PolicyHarness> {
  const db = await createTestDatabase();
  const testBus: TestBus = await createTestBus();
  const registry = registerPolicyEvents(registerSchedulerEvents(registerIntakeEvents(new EventRegistry())));
  const topo = topology(testBus.prefix);
  const replicas: INestApplicationContext[] = [];
  for (let index = 0; index < (options.replicas ?? 1); index++) {
    const first = index === 0;
    const moduleRef = await Test.createTestingModule({
      imports: [
        BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: `policy-test-${index}`, topology: topo, registry }),
        EventStoreModule.forRoot({ databaseUrl: db.url, poolSize: 5, registry, relay: first ? { pollIntervalMs: 20, verifyIntervalMs: 0 } : false }),
        PolicyModule.forRoot(options.policy),
      ],
    }).compile();
    replicas.push(await moduleRef.init());
  }
  const bus = replicas[0]!.get(CommandBus);
  const store = replicas[0]!.get(PostgresEventStore);
  const scheduler = new SchedulerStandIn(new CommandBus(testBus.nc, topo), store);
  await scheduler.start(testBus);
  return {
    replicas,
    bus,
    scheduler,
    store,
    db,
    testBus,
    topology: topo,
    workspaceId: `ws_${Math.random().toString(36).slice(2, 10)}`,
    close: async () => {
      await scheduler.stop();
      for (const replica of replicas.reverse()) await replica.close();
      await testBus.cleanup();
      await db.drop();
    },
  };
}

export const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The tool grants a deployment's effective definition carries (`limits.tools`). */
export type ToolGrants = JsonValue[];

async function appendAndAwait(h: PolicyHarness, stream: string, event: NewEvent, workspaceId: string, applied: (position: number) => Promise<boolean>): Promise<EventEnvelope> {
  const result = await h.store.append(stream, 'any', [event], { workspaceId });
  const position = result.lastGlobalPosition;
  await eventually(() => applied(position), { what: `policy to apply ${event.type}` });
  return result.events[0]!;
}

const deploymentApplied = (h: PolicyHarness, deploymentId: string) => async (position: number) => {
  const { rows } = await h.db.pool.query<{ last_position: string }>(`SELECT last_position FROM policy.deployments WHERE deployment_id = $1`, [deploymentId]);
  return rows[0] !== undefined && Number(rows[0].last_position) >= position;
};

/** Appends `deployment.created` as intake does and waits until policy has compiled its grants. */
export async function deploy(h: PolicyHarness, deploymentId: string, tools: ToolGrants, workspaceId = h.workspaceId): Promise<{ effectiveDigest: string }> {
  const effectiveDigest = sha(`${deploymentId}:${JSON.stringify(tools)}`);
  const data: IntakeEventData<'deployment.created'> = {
    deploymentId, workerId: 'w1', workerName: 'release-audit', version: 1, digest: sha(`version:${deploymentId}`), effectiveDigest,
    overrides: {}, maxConcurrentRuns: 5, triggers: [], limits: { budgets: {}, bounds: {}, tools },
  };
  await appendAndAwait(h, `deployment-${deploymentId}`, { type: 'deployment.created', data, actor: INTAKE_ACTOR }, workspaceId, deploymentApplied(h, deploymentId));
  return { effectiveDigest };
}

/**
 * Keeps the effective definition content-addressed and appends `deployment.created` for it, as
 * intake does, and waits until policy has compiled its grants.
 */
export async function deployDefinition(h: PolicyHarness, deploymentId: string, effective: WorkerDefinition): Promise<{ effectiveDigest: string }> {
  const content = payloadContent(effective as unknown as JsonValue);
  await h.replicas[0]!.get(PayloadStore).put(h.workspaceId, content);
  return deployPinned(h, deploymentId, content.digest, effective.tools as unknown as ToolGrants);
}

/** `deployment.created` under a given effective digest, whether or not its definition is kept. */
export async function deployPinned(h: PolicyHarness, deploymentId: string, effectiveDigest: string, tools: ToolGrants): Promise<{ effectiveDigest: string }> {
  const data: IntakeEventData<'deployment.created'> = {
    deploymentId, workerId: 'w1', workerName: 'release-audit', version: 1, digest: sha(`version:${deploymentId}`), effectiveDigest,
    overrides: {}, maxConcurrentRuns: 5, triggers: [], limits: { budgets: {}, bounds: {}, tools },
  };
  await appendAndAwait(h, `deployment-${deploymentId}`, { type: 'deployment.created', data, actor: INTAKE_ACTOR }, h.workspaceId, deploymentApplied(h, deploymentId));
  return { effectiveDigest };
}

export async function controlDeployment(h: PolicyHarness, deploymentId: string, type: 'deployment.paused' | 'deployment.resumed' | 'deployment.revoked', workspaceId = h.workspaceId): Promise<void> {
  const data = type === 'deployment.paused' ? { reason: 'maintenance' } : type === 'deployment.resumed' ? { releasedRuns: 0 } : { reason: 'retired' };
  await appendAndAwait(h, `deployment-${deploymentId}`, { type, data, actor: OPERATOR }, workspaceId, deploymentApplied(h, deploymentId));
}

/** Appends `run.admitted` as intake does and waits until policy knows the run. */
export async function admit(h: PolicyHarness, runId: string, deploymentId: string, workspaceId = h.workspaceId): Promise<void> {
  const { rows } = await h.db.pool.query<{ version_digest: string; effective_digest: string }>(
    `SELECT version_digest, effective_digest FROM policy.deployments WHERE deployment_id = $1`,
    [deploymentId],
  );
  const data: IntakeEventData<'run.admitted'> = {
    runId, deploymentId, workerId: 'w1', workerName: 'release-audit', version: 1, digest: rows[0]!.version_digest, effectiveDigest: rows[0]!.effective_digest,
    activation: {
      activationId: `act-${runId}`, source: 'manual', dedupeKey: `key-${runId}`, triggerId: null, receivedAt: new Date().toISOString(),
      input: null, inputRef: null, details: {},
    },
  };
  await appendAndAwait(h, runStreamId(runId), { type: 'run.admitted', data, actor: INTAKE_ACTOR }, workspaceId, async () => {
    const known = await h.db.pool.query(`SELECT 1 FROM policy.runs WHERE run_id = $1`, [runId]);
    return (known.rowCount ?? 0) > 0;
  });
}

export type AuthorizeInput = Omit<z.input<typeof PolicyCommands.authorize.request>, 'workspaceId' | 'callDigest'> & { workspaceId?: string; callDigest?: string };

/** Asks over NATS, as the supervisor does; the call digest defaults to one derived from the call. */
export function authorize(h: PolicyHarness, call: AuthorizeInput): Promise<AuthorizeResult> {
  return h.bus.request(PolicyCommands.authorize, {
    workspaceId: h.workspaceId,
    callDigest: sha(JSON.stringify([call.runId, call.tool, call.verb, call.resource, call.arguments ?? null])),
    ...call,
  });
}

export async function streamEvents(h: PolicyHarness, stream: string): Promise<EventEnvelope[]> {
  return h.store.readStream(stream);
}

export type SetTimerRequest = z.output<typeof SchedulerCommands.setTimer.request>;

/**
 * Answers `scheduler.timers.*` on the real bus as the scheduler does and records each request;
 * `fire` appends the `timer.fired` event the scheduler appends when a timer is due.
 */
export class SchedulerStandIn {
  readonly set: SetTimerRequest[] = [];
  readonly cancelled: string[] = [];

  constructor(
    private readonly bus: CommandBus,
    private readonly store: PostgresEventStore,
  ) {}

  async start(testBus: TestBus): Promise<void> {
    const view = (request: { workspaceId: string; timerId: string }, state: 'pending' | 'cancelled') => {
      const timer = this.set.find((entry) => entry.timerId === request.timerId);
      return {
        timerId: request.timerId, workspaceId: request.workspaceId, purpose: timer?.purpose ?? 'unknown', dueAt: timer?.dueAt ?? new Date().toISOString(),
        state, payload: timer?.payload ?? null, firedAt: null, version: 1,
      };
    };
    this.bus.handle(SchedulerCommands.setTimer, async (request) => {
      this.set.push(request);
      return { ...view(request, 'pending'), outcome: 'created' as const };
    });
    this.bus.handle(SchedulerCommands.cancelTimer, async (request) => {
      this.cancelled.push(request.timerId);
      return { ...view(request, 'cancelled'), outcome: 'cancelled' as const };
    });
    await testBus.nc.flush();
  }

  async fire(timerId: string): Promise<void> {
    const timer = this.set.find((entry) => entry.timerId === timerId);
    if (!timer) throw new Error(`no timer ${timerId} was set`);
    await this.store.append(
      timerStream(timerId),
      'any',
      [{ type: 'timer.fired', data: { timerId, purpose: timer.purpose, dueAt: timer.dueAt, firedAt: new Date().toISOString(), payload: timer.payload }, actor: { kind: 'system', id: 'scheduler' } }],
      { workspaceId: timer.workspaceId },
    );
  }

  stop(): Promise<void> {
    return this.bus.drain();
  }
}
