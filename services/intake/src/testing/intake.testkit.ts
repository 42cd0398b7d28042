import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import type { INestApplicationContext } from '@nestjs/common';
import { EventRegistry, registerIntakeEvents, registerRunExecutionEvents, type ActorRef } from '@packetagent/contracts';
import { BusModule, CommandBus, topology } from '@packetagent/bus';
import { EventStoreModule, PostgresEventStore } from '@packetagent/eventstore';
import { createTestBus, createTestDatabase, testEnv, type TestBus, type TestDatabase } from '@packetagent/testing';
import { IntakeModule, type IntakeOptions } from '../intake.module';

export interface IntakeHarness {
  app: INestApplicationContext;
  bus: CommandBus;
  store: PostgresEventStore;
  db: TestDatabase;
  testBus: TestBus;
  workspaceId: string;
  actor: ActorRef;
  close(): Promise<void>;
}

/** Intake on a fresh database and bus prefix, with the relay running, reached over real NATS. */
export async function startIntake(options: IntakeOptions & { relay?: boolean } = {}): Promise<IntakeHarness> {
  const db = await createTestDatabase();
  const testBus = await createTestBus();
  const registry = registerRunExecutionEvents(registerIntakeEvents(new EventRegistry()));
  const topo = topology(testBus.prefix);
  const moduleRef = await Test.createTestingModule({
    imports: [
      BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: 'intake-test', topology: topo, registry }),
      EventStoreModule.forRoot({
        databaseUrl: db.url,
        registry,
        relay: options.relay ? { pollIntervalMs: 50, verifyIntervalMs: 0 } : false,
      }),
      IntakeModule.forRoot(options),
    ],
  }).compile();
  const context = await moduleRef.init();
  return {
    app: context,
    bus: context.get(CommandBus),
    store: context.get(PostgresEventStore),
    db,
    testBus,
    workspaceId: `ws_${Math.random().toString(36).slice(2, 10)}`,
    actor: { kind: 'user', id: 'user-1' },
    close: async () => {
      await context.close();
      await testBus.cleanup();
      await db.drop();
    },
  };
}

/** A valid definition (JSON text) with any top-level field replaced. */
export function definition(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'packetagent/v1',
    kind: 'Worker',
    name: 'release-audit',
    description: 'Verifies release evidence.',
    model: { preset: 'default' },
    instructions: 'Check every release item has evidence.',
    tools: [
      { tool: 'http_fetch', verbs: ['GET', 'POST'], resources: ['https://ci.example.com/*'], approval: 'never' },
      { tool: 'slack_post', approval: 'always', credentials: ['slack_release_channel'] },
    ],
    budgets: { perRunUsd: 0.5, perDeploymentDailyUsd: 5 },
    bounds: { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40, maxConcurrentRuns: 2 },
    exit: { finish: { criteria: ['every release item has evidence'] } },
    triggers: [{ cron: '0 9 * * 1-5', timezone: 'Europe/Paris' }, { webhook: {} }],
    ...overrides,
  });
}
