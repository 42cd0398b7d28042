import { Test, type TestingModule } from '@nestjs/testing';
import type { Pool } from 'pg';
import { BusModule, type Topology } from '@packetagent/bus';
import {
  EventRegistry,
  registerBudgetEvents,
  registerIntakeEvents,
  runStreamId,
  type IntakeEventData,
} from '@packetagent/contracts';
import { EventStoreModule, PG_POOL, type PostgresEventStore } from '@packetagent/eventstore';
import { testEnv, type TestDatabase } from '@packetagent/testing';
import { BudgetModule } from '../budget.module';
import type { BudgetModuleOptions } from '../budget.options';

export function budgetTestRegistry(): EventRegistry {
  return registerBudgetEvents(registerIntakeEvents(new EventRegistry()));
}

export interface BudgetReplica {
  name: string;
  app: TestingModule;
  pool: Pool;
  close(): Promise<void>;
}

/** One budget replica as a Nest app of its own: its own NATS connection and Postgres pool. */
export async function startBudgetReplica(
  env: { db: TestDatabase; topo: Topology; registry: EventRegistry },
  name: string,
  options: BudgetModuleOptions = {},
): Promise<BudgetReplica> {
  const app = await Test.createTestingModule({
    imports: [
      BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: name, topology: env.topo, registry: env.registry }),
      EventStoreModule.forRoot({ databaseUrl: env.db.url, poolSize: 4, registry: env.registry }),
      BudgetModule.forRoot(options),
    ],
  }).compile();
  await app.init();
  return { name, app, pool: app.get<Pool>(PG_POOL), close: () => app.close() };
}

const digest = (n: number) => n.toString(16).padStart(64, '0');
const actor = { kind: 'user', id: 'u1' } as const;

/** Appends what intake would: a deployment with these budgets, and runs admitted under it. */
export async function deployWithRuns(
  store: PostgresEventStore,
  input: { workspaceId: string; deploymentId: string; budgets: Record<string, unknown>; runIds: string[]; digestNo?: number },
): Promise<void> {
  const pin = { workerId: 'w1', workerName: 'release-audit', version: 1, digest: digest(1), effectiveDigest: digest(input.digestNo ?? 1) };
  const created: IntakeEventData<'deployment.created'> = {
    ...pin,
    deploymentId: input.deploymentId,
    overrides: {},
    maxConcurrentRuns: 1,
    triggers: [],
    limits: { budgets: input.budgets as Record<string, never>, bounds: {}, tools: [] },
  };
  await store.append(`deployment-${input.deploymentId}`, 'no_stream', [{ type: 'deployment.created', data: created, actor }], { workspaceId: input.workspaceId });
  for (const runId of input.runIds) {
    const admitted: IntakeEventData<'run.admitted'> = {
      ...pin,
      deploymentId: input.deploymentId,
      runId,
      activation: {
        activationId: `act-${runId}`, source: 'manual', dedupeKey: `manual:${runId}`, triggerId: null,
        receivedAt: new Date().toISOString(), input: null, inputRef: null, details: {},
      },
    };
    await store.append(runStreamId(runId), 'no_stream', [{ type: 'run.admitted', data: admitted, actor }], { workspaceId: input.workspaceId });
  }
}

/** Waits until the budget service has projected the run and its deployment's limits. */
export async function runKnown(pool: Pool, runId: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `SELECT 1 FROM budget.runs r JOIN budget.limit_sets l ON l.deployment_id = r.deployment_id AND l.effective_digest = r.effective_digest
      WHERE r.run_id = $1`,
    [runId],
  );
  return rowCount === 1;
}
